"""Result files of the examples' full runs (mcsparse.utils.records)."""

import json
import shutil
import subprocess

import numpy as np
import pytest

from mcsparse.utils.records import RECORD_KEYS, load_full_run, save_full_run


def test_round_trip_keeps_numbers_and_says_how_they_were_made(tmp_path):
    path = tmp_path / "sub" / "run.json"
    curve = np.array([0.5, 0.25, 0.125], dtype=np.float32)
    written = save_full_run(path, {"test_error": curve, "alpha": np.float64(3e-5),
                                   "n": np.int64(7), "by_alpha": {1e-5: 0.1}},
                            script=__file__)
    record = load_full_run(path)
    assert record == written
    assert record["results"]["test_error"] == [0.5, 0.25, 0.125]
    assert record["results"]["alpha"] == 3e-5 and record["results"]["n"] == 7
    assert record["results"]["by_alpha"] == {"1e-05": 0.1}
    assert set(RECORD_KEYS) <= set(record)
    assert record["command"] == "MCSPARSE_FULL=1 python tests/test_records.py"
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0:  # run from a checkout: its commit, marked if modified
        assert record["commit"].startswith(head.stdout.strip())
    assert list(tmp_path.joinpath("sub").iterdir()) == [path]  # no temporary left
    assert path.stat().st_mode & 0o644 == 0o644  # readable by all, like a committed file


def test_a_record_names_its_numpy_and_blas(tmp_path):
    """A slow kernel (an old OpenBLAS on generic kernels) shows in the record."""
    from threadpoolctl import threadpool_info

    save_full_run(tmp_path / "r.json", {"x": 1}, script=__file__)
    record = load_full_run(tmp_path / "r.json")
    assert record["numpy_version"] == np.__version__
    expected = [i for i in threadpool_info() if i["user_api"] == "blas"]
    assert expected  # NumPy's BLAS at least
    assert [(b["internal_api"], b["version"], b["architecture"], b["num_threads"])
            for b in record["blas"]] == [
        (i["internal_api"], i.get("version"), i.get("architecture"), i["num_threads"])
        for i in expected]


def test_outside_a_checkout_the_commit_is_unknown(tmp_path):
    script = tmp_path / "plot_example.py"
    script.write_text("")
    record = save_full_run(tmp_path / "r.json", {"x": 1}, script=script)
    assert record["command"] == "MCSPARSE_FULL=1 python plot_example.py"
    assert record["commit"].startswith("unknown")


def _git(repo, *args):
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo,
                   check=True, capture_output=True)


@pytest.mark.parametrize("n_changed, named", [
    (0, None), (1, "a0.py"), (5, "a0.py, a1.py, a2.py, a3.py, a4.py"),
    (7, "a0.py, a1.py, a2.py, a3.py, a4.py and 2 more files")])
def test_the_commit_names_the_files_that_differed_from_it(tmp_path, n_changed, named):
    """A record from a modified checkout says which files were not as committed."""
    if shutil.which("git") is None:
        pytest.skip("no git")
    script = tmp_path / "plot_example.py"
    files = [tmp_path / f"a{i}.py" for i in range(7)]
    for f in [script, *files]:
        f.write_text("x = 1\n")
    (tmp_path / "untracked.py").touch()  # never committed: not a change of the commit
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", script.name, *[f.name for f in files])
    _git(tmp_path, "commit", "-q", "-m", "c")
    for f in files[:n_changed]:
        f.write_text("x = 2\n")
    if n_changed:
        _git(tmp_path, "add", files[0].name)  # staged counts too
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True,
                          text=True, check=True).stdout.strip()
    record = save_full_run(tmp_path / "r.json", {"x": 1}, script=script)
    expected = head if named is None else f"{head} (with uncommitted changes to {named})"
    assert record["commit"] == expected


def test_a_script_with_arguments_records_its_own_command(tmp_path):
    command = "python asv_benchmarks/mnist_heldout.py --seeds 0"
    record = save_full_run(tmp_path / "r.json", {"x": 1}, script=__file__, command=command)
    assert record["command"] == command
    assert load_full_run(tmp_path / "r.json")["command"] == command


@pytest.mark.parametrize("command", ["", "  ", 3, ["python", "x.py"]])
def test_a_command_that_is_not_a_string_is_refused(tmp_path, command):
    with pytest.raises(TypeError, match="command must be a non-empty string"):
        save_full_run(tmp_path / "r.json", {"x": 1}, script=__file__, command=command)
    assert not (tmp_path / "r.json").exists()


def test_missing_file_is_none(tmp_path):
    assert load_full_run(tmp_path / "absent.json") is None


@pytest.mark.parametrize("text, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "lacks"),
    (json.dumps({"results": {}}), "lacks command"),
])
def test_corrupted_files_are_named(tmp_path, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        load_full_run(path)
    assert "bad.json" in str(info.value)


@pytest.mark.parametrize("results, error", [
    ({"x": float("nan")}, ValueError),
    ({"x": [1.0, np.inf]}, ValueError),
    ({"x": np.float64("nan")}, ValueError),
    ([1, 2], TypeError),
    ({"x": object()}, TypeError),
])
def test_bad_results_leave_no_file(tmp_path, results, error):
    path = tmp_path / "r.json"
    with pytest.raises(error, match="finite numbers only" if error is ValueError else None):
        save_full_run(path, results, script=__file__)
    assert list(tmp_path.iterdir()) == []


def test_an_interrupted_write_keeps_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    save_full_run(path, {"x": 1}, script=__file__)
    before = path.read_text()

    def broken(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("mcsparse.utils.records.os.replace", broken)
    with pytest.raises(KeyboardInterrupt):
        save_full_run(path, {"x": 2}, script=__file__)
    assert path.read_text() == before
    assert list(tmp_path.iterdir()) == [path]


def test_committed_records_are_valid():
    """Every result file committed beside an example loads and names its example."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.glob("examples/*/results/*.json")):
        record = load_full_run(path)
        script = record["command"].split()[-1]
        assert (root / script).is_file(), (path, script)
        assert not record["commit"].startswith("unknown"), path




def test_results_page_cites_every_record():
    """The results page names each committed result file and the date of its run."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    page = (root / "doc" / "results.rst").read_text()
    for path in sorted(root.glob("examples/*/results/*.json")):
        record = load_full_run(path)
        name = path.relative_to(root).as_posix()
        assert name in page, f"doc/results.rst does not cite {name}"
        after = page[page.index(name):page.index(name) + 300]
        assert record["date"] in after, f"{name}: its date {record['date']} is not beside it"
        assert record["commit"][:7] in after, f"{name}: its commit is not beside it"


def test_quick_mode_figures_say_so():
    """Every example with a quick mode marks its figures' titles "(quick mode)"."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.glob("examples/*/plot_*.py")):
        text = path.read_text()
        if "MCSPARSE_FULL" in text and ("set_title" in text or "title=" in text
                                        or "suptitle" in text):
            assert '" (quick mode)"' in text, f"{path.name}: no '(quick mode)' in its titles"


def test_examples_do_not_need_file():
    """sphinx-gallery runs the examples from their folder without ``__file__``."""
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.glob("examples/*/plot_*.py")):
        text = path.read_text()
        assert "Path(__file__)" not in text and "script=__file__" not in text, path.name
