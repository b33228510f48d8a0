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
