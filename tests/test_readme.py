"""The README's two commands stay true: CI runs the test command verbatim."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    readme = (ROOT / "README.rst").read_text()
    return [line.strip() for line in readme.splitlines()
            if re.match(r"\s+python3 -m venv \.venv && ", line)]


def test_readme_has_two_commands_and_ci_runs_the_test_one():
    if not (ROOT / ".ci" / "run").is_file():
        pytest.skip("not a source checkout")
    install_and_run, install_and_test = _commands()
    assert install_and_run.endswith("pip install . && mcsparse")
    assert install_and_test.endswith("pytest tests")
    assert install_and_test in (ROOT / ".ci" / "run").read_text()


def test_source_tree_shadowing_gives_a_clear_error():
    """'python -m mcsparse' in an uncompiled source tree explains itself."""
    import subprocess
    import sys

    if not (ROOT / "mcsparse" / "loss").is_dir():
        pytest.skip("not a source checkout")
    if list((ROOT / "mcsparse" / "loss").glob("_multiclass_logistic_fast.*.so")) or \
            list((ROOT / "mcsparse" / "loss").glob("_multiclass_logistic_fast.*.pyd")):
        pytest.skip("the source tree is built in place (editable install)")
    res = subprocess.run([sys.executable, "-c", "import mcsparse"], cwd=ROOT,
                         capture_output=True, text=True)
    assert res.returncode != 0
    assert "compiled Cython modules are missing" in res.stderr


def test_readme_images_exist():
    """The README's picture is a file of the repository (GitHub renders it)."""
    readme = (ROOT / "README.rst").read_text()
    images = re.findall(r"^\.\. image:: (\S+)", readme, flags=re.MULTILINE)
    if not (ROOT / ".ci" / "run").is_file():
        pytest.skip("not a source checkout")
    assert images
    for image in images:
        path = ROOT / image
        assert path.is_file() and path.stat().st_size > 10_000, image


@pytest.mark.parametrize("name", ["README.rst", "doc/README.rst"])
def test_readme_is_valid_restructuredtext(name):
    """GitHub renders these files; a malformed table or block shows as raw text."""
    docutils_core = pytest.importorskip("docutils.core")
    path = ROOT / name
    if not path.is_file():
        pytest.skip("not a source checkout")
    docutils_core.publish_doctree(
        path.read_text(),
        settings_overrides={"report_level": 2, "halt_level": 2, "warning_stream": False})


def _getting_started_script(index=0):
    """The ``index``-th Python code block of the getting-started page."""
    text = (ROOT / "doc" / "getting_started.rst").read_text()
    block = text.split(".. code-block:: python\n")[index + 1]
    lines = []
    for line in block.splitlines()[1:]:
        if line and not line.startswith("    "):
            break
        lines.append(line[4:])
    return "\n".join(lines)


def _run_and_check_comments(script, tmp_path):
    """Run ``script``; every "# value" comment on a print line appears in the output,
    and nothing is written to stderr (no warning)."""
    import subprocess
    import sys

    (tmp_path / "start.py").write_text(script)
    res = subprocess.run([sys.executable, "start.py"], cwd=tmp_path, capture_output=True,
                         text=True, env={**__import__("os").environ, "MPLBACKEND": "Agg"})
    assert res.returncode == 0, res.stderr
    for line in script.splitlines():
        if line.startswith("print(") and "# " in line:
            shown = line.split("# ", 1)[1].split(":")[0].replace("...", "").rstrip(" ]")
            shown = shown.split(" (")[0]
            assert shown in res.stdout, (shown, res.stdout)
    assert "Warning" not in res.stderr, res.stderr


def test_getting_started_script_runs_and_prints_what_it_says(tmp_path):
    """The first code a reader sees runs as it is, and its comments give its output."""
    if not (ROOT / "doc" / "getting_started.rst").is_file():
        pytest.skip("not a source checkout")
    pytest.importorskip("matplotlib")
    script = _getting_started_script()
    assert "ShareBoostClassifier" in script and "staged_predict" in script
    _run_and_check_comments(script, tmp_path)


def test_getting_started_cross_validation_runs_and_prints_what_it_says(tmp_path):
    if not (ROOT / "doc" / "getting_started.rst").is_file():
        pytest.skip("not a source checkout")
    script = _getting_started_script(2)
    assert "ShareBoostClassifierCV" in script
    _run_and_check_comments(script, tmp_path)
