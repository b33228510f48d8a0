"""The main job (python -m mcsparse): output, files, errors."""

import csv
import json
import re
import subprocess
import sys

import pytest

from mcsparse._cli import main


def test_pendigits_csv(tmp_path, capsys):
    out = tmp_path / "path.csv"
    assert main(["--n-features", "3", "--output", str(out)]) == 0
    text = capsys.readouterr().out
    assert "pendigits" in text and "final test error" in text
    rows = list(csv.DictReader(out.open()))
    assert [int(r["round"]) for r in rows] == [1, 2, 3]
    assert set(rows[0]) == {"round", "feature", "name", "train_loss", "test_error",
                            "refit_n_iter", "elapsed_s"}
    losses = [float(r["train_loss"]) for r in rows]
    assert losses == sorted(losses, reverse=True)
    assert "*" in rows[0]["name"]  # a pairwise product


def test_json_output_and_progress_bar(tmp_path, capsys):
    out = tmp_path / "path.json"
    assert main(["--n-features", "2", "--max-train", "1000", "--output", str(out),
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    assert "round" in captured.out  # table printed after the bar
    rows = json.loads(out.read_text())
    assert len(rows) == 2 and 0 <= rows[-1]["test_error"] <= 1


def test_progress_bar_shows_each_rounds_loss_at_its_counter(tmp_path, capsys):
    out = tmp_path / "path.json"
    assert main(["--n-features", "3", "--max-train", "1000", "--output", str(out),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    losses = [row["train_loss"] for row in json.loads(out.read_text())]
    shown = re.findall(r"(\d)/3 \[[^]]*loss=([\d.]+)", err)
    assert shown, err
    for count, loss in shown:
        assert float(loss) == pytest.approx(losses[int(count) - 1], abs=1e-4), err


def test_round_zero_and_version(capsys):
    assert main(["--n-features", "1", "--max-train", "500"]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if "(W = 0)" in line)
    # the README's value: log(1 + 9 e) for ten classes at W = 0
    assert row.split()[0] == "0" and "3.237287" in row
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert re.fullmatch(r"mcsparse \d+\.\d+\S*\n", capsys.readouterr().out)


def test_verbose_version_names_the_libraries_and_the_blas(capsys):
    """``--version --verbose`` (either order): versions and threadpoolctl's BLAS."""
    import numpy as np
    from threadpoolctl import threadpool_info

    for argv in (["--version", "--verbose"], ["--verbose", "--version"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 0
        lines = capsys.readouterr().out.splitlines()
        assert re.fullmatch(r"mcsparse \d+\.\d+\S*", lines[0])
        assert f"numpy: {np.__version__}" in lines
        assert any(re.fullmatch(r"scipy: \d+\.\d+\S*", line) for line in lines)
        assert any(re.fullmatch(r"scikit-learn: \d+\.\d+\S*", line) for line in lines)
        blas = [line for line in lines if line.startswith("blas: ")]
        expected = [i for i in threadpool_info() if i["user_api"] == "blas"]
        assert len(blas) == max(len(expected), 1)
        for line, lib in zip(blas, expected):
            assert line == (f"blas: {lib['internal_api']} {lib.get('version')} "
                            f"({lib.get('architecture')}, {lib['num_threads']} threads, "
                            f"{lib['prefix']})")


@pytest.mark.parametrize("family, extra, name", [
    ("stumps", [], r"x\d+ <= [\d.]+"),
    ("anchors", ["--n-anchors", "30", "--alpha", "1e-3"], r"anchor \d+, radius [\d.]+"),
])
def test_feature_families_and_plot(family, extra, name, tmp_path, capsys):
    plot = tmp_path / "curve.png"
    assert main(["--n-features", "3", "--max-train", "1000", "--features", family,
                 "--plot", str(plot), *extra]) == 0
    out = capsys.readouterr().out
    assert "pairwise products" not in out.splitlines()[0]  # the original features
    rows = [line for line in out.splitlines() if re.match(r"\s+[123]\s+\d+\s", line)]
    assert len(rows) == 3 and all(re.search(name, row) for row in rows), out
    final = float(re.search(r"final test error ([\d.]+)%", out).group(1))
    assert final < 89.0  # three features do better than W = 0 (89.6%)
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_templates_on_mnist(mnist_home, capsys):
    assert main(["--dataset", "mnist", "--features", "templates", "--n-templates", "10",
                 "--n-features", "2", "--max-train", "1000"]) == 0
    assert re.search(r"template \d+, mask \d+", capsys.readouterr().out)


@pytest.mark.parametrize("args, match", [
    (["--features", "templates"], "needs images"),
    (["--plot", "curve.txt"], r"must end in \.png, \.pdf or \.svg"),
    (["--plot", "/nonexistent/curve.png"], "does not exist"),
    (["--features", "stumps", "--n-features", "100000"], "number of candidates"),
])
def test_bad_family_and_plot_options(args, match, capsys):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert re.search(match, capsys.readouterr().err)


def test_bad_output_suffix_writes_nothing(tmp_path):
    with pytest.raises(SystemExit):
        main(["--n-features", "2", "--output", str(tmp_path / "path.txt")])
    assert list(tmp_path.iterdir()) == []


def test_convergence_warnings_become_notes_after_the_table(capsys):
    assert main(["--n-features", "3", "--max-iter", "2"]) == 0
    out = capsys.readouterr().out
    assert "note:" in out and "max_iter=2" in out
    assert out.index("note:") > out.index("final test error")


@pytest.mark.parametrize("args, match", [
    (["--n-features", "0"], "must be an integer >= 1"),
    (["--n-features", "-1"], "must be an integer >= 1"),
    (["--n-features", "121"], "exceeds the 120 features"),
    (["--max-train", "0"], "must be an integer >= 1"),
    (["--max-train", "5"], "at least 20"),
    (["--random-state", "-1"], "must be an integer >= 0"),
    (["--alpha", "-1"], "finite number >= 0"),
    (["--alpha", "nan"], "finite number >= 0"),
    (["--tol", "0"], "finite number > 0"),
    (["--tol", "inf"], "finite number > 0"),
    (["--max-iter", "0"], "must be an integer >= 1"),
    (["--alpha", "abc"], "invalid float value: 'abc'"),
    (["--n-features", "five"], "invalid int value: 'five'"),
    (["--output", "/nonexistent/x.json"], "does not exist"),
])
def test_bad_options_are_usage_errors(args, match, capsys):
    with pytest.raises(SystemExit) as info:
        main(args)
    assert info.value.code == 2
    assert re.search(match, capsys.readouterr().err)


def test_output_directory_refused_before_fitting(tmp_path, capsys):
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(SystemExit):
        main(["--output", str(tmp_path / "d.csv")])
    captured = capsys.readouterr()
    assert "is a directory" in captured.err and "round" not in captured.out


def test_missing_data_is_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["--dataset", "letter", "--data-home", str(tmp_path)])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "letter-recognition.data" in err
    assert "--data-home" in err and "MCSPARSE_DATA" in err


def test_mnist_subset(mnist_home, capsys):
    assert main(["--dataset", "mnist", "--n-features", "3", "--max-train", "2000",
                 ]) == 0
    out = capsys.readouterr().out
    assert "pixel(" in out


@pytest.mark.parametrize("command", ["module", "script"])
def test_entry_points(command, tmp_path):
    """``python -m mcsparse`` and the ``mcsparse`` script, run outside the
    source tree (which would shadow the installed package)."""
    import shutil

    if command == "module":
        argv = [sys.executable, "-m", "mcsparse"]
    else:
        script = shutil.which("mcsparse")
        if script is None:
            pytest.skip("the mcsparse console script is not on PATH (not installed)")
        argv = [script]
    res = subprocess.run(argv + ["--help"], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert "--dataset" in res.stdout


def test_the_default_job_prints_its_alpha_and_no_note(capsys):
    """alpha='auto' converges without a warning; --alpha 0 is the paper's bare loss."""
    assert main(["--n-features", "40"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"alpha=\S+ \(auto: the candidate columns' mean square over 2 "
                     r"n_samples\)", out), out
    assert "note:" not in out
    assert main(["--n-features", "40", "--alpha", "0"]) == 0
    out = capsys.readouterr().out
    assert "alpha=0\n" in out and "note:" in out and "max_iter=200" in out


def test_cv_prints_the_chosen_alpha_and_number_of_features(tmp_path, capsys):
    out_file = tmp_path / "path.json"
    assert main(["--n-features", "4", "--max-train", "600", "--cv", "3",
                 "--output", str(out_file)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"chosen by 3-fold cross-validation: alpha=\S+, n_features=\d "
                     r"\(CV accuracy [\d.]+% \+- [\d.]+\)", out), out
    n_features = int(re.search(r"n_features=(\d)", out).group(1))
    rows = json.loads(out_file.read_text())
    assert [r["round"] for r in rows] == list(range(1, n_features + 1))
    assert re.search(rf"test error [\d.]+% with {n_features} features", out)
    assert "fold 1/3, alpha" in out  # one line per path without --quiet


def test_stumps_read_the_original_features_with_an_intercept(capsys):
    """As the Python API (getting started): x15 <= 12.5 first, an intercept."""
    assert main(["--features", "stumps", "--n-features", "2"]) == 0
    out = capsys.readouterr().out
    assert "x in [0, 100]" in out.splitlines()[0]
    assert "fit_intercept=True max_iter" in out
    assert re.search(r"\s1\s+\d+\s+x15 <= 12\.5\s", out), out
    # the pairwise products keep the paper's setting, and say how it differs
    assert main(["--n-features", "1"]) == 0
    assert ("fit_intercept=False (eq. 1 of the paper; ShareBoostClassifier's default "
            "is True)") in capsys.readouterr().out
