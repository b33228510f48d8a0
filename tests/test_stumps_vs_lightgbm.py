"""asv_benchmarks/stumps_vs_lightgbm.py: the side-by-side table of issue 52 runs (quick mode)."""

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

import mcsparse

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "asv_benchmarks" / "stumps_vs_lightgbm.py"


@pytest.fixture
def script(monkeypatch):
    """The script's functions, run in this process (the package under test)."""
    if not SCRIPT.is_file():
        pytest.skip("not a source checkout")
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # its import of benchmarks.stumps
    return runpy.run_path(str(SCRIPT), run_name="stumps_vs_lightgbm")


def test_quick_run_prints_the_table_its_command_threads_and_blas(script, tmp_path, capsys):
    pytest.importorskip("lightgbm")
    record = tmp_path / "record.json"
    args = ["--quick", "--sets", "pendigits", "--repeat", "2", "--predict-repeat", "2",
            "--n-jobs", "1", "--out", str(record)]
    assert script["main"](args) == 0
    out = capsys.readouterr().out
    command = "python asv_benchmarks/stumps_vs_lightgbm.py " + " ".join(args)
    assert f"command: {command}" in out.splitlines()
    assert "threads: LightGBM n_jobs=1; ShareBoost " in out
    assert "blas: " in out
    assert f"mcsparse imported from {Path(mcsparse.__file__).parent}" in out
    rows = [line for line in out.splitlines()  # the main table's (not the trade-off's)
            if line.startswith("| pendigits |") and " × " in line]
    assert len(rows) == 1 and rows[0].startswith("| pendigits | 2,000 × 16, 10 | ")

    saved = json.loads(record.read_text())
    assert saved["command"] == command
    assert any(pool["user_api"] == "blas" for pool in saved["results"]["blas"])
    assert all(pool["num_threads"] == 1 for pool in saved["results"]["blas"])  # --n-jobs 1
    assert saved["results"]["mcsparse_imported_from"] == str(Path(mcsparse.__file__).parent)
    row = saved["results"]["sets"]["pendigits"]
    sb, lg = row["shareboost"], row["lightgbm"]
    assert sb["stumps"] == 20 and len(sb["fits_s"]) == len(lg["fits_s"]) == 2
    assert lg["rounds"] % 50 == 0 and lg["trees"] == 10 * lg["rounds"]
    # the rounds are the first multiple of 50 at ShareBoost's test error
    assert lg["reached"] and lg["test_error"] <= sb["test_error"]
    assert all(error > sb["test_error"] for rounds, error in lg["search_errors"].items()
               if int(rounds) < lg["rounds"])
    assert row["time_ratio"] == pytest.approx(sb["fit_s"] / lg["fit_s"])
    assert sb["predict_rows_per_s"] > 0 and lg["predict_rows_per_s"] > 0

    # the curves of the same fits: a time and a test error per round, times
    # increasing and within the best fit's (the last error: the whole model's)
    curve = sb["curve"]
    assert len(curve["seconds"]) == len(curve["test_errors"]) == 20
    assert np.all(np.diff(curve["seconds"]) > 0) and curve["seconds"][-1] <= sb["fit_s"]
    assert curve["test_errors"][-1] == sb["test_error"]
    lg_curve = lg["curve"]
    assert lg_curve["rounds"] == list(range(1, lg["rounds"] + 1))  # --curve-step 1
    assert np.all(np.diff(lg_curve["seconds"]) > 0) and lg_curve["seconds"][-1] <= lg["fit_s"]
    assert lg_curve["test_errors"][-1] == lg["test_error"]
    # the trade-off at 10 and 20 stumps: LightGBM's first grid round at ShareBoost's error
    assert [t["stumps"] for t in row["tradeoff"]] == [10, 20]
    for t in row["tradeoff"]:
        assert t["shareboost_error"] == curve["test_errors"][t["stumps"] - 1]
        i = lg_curve["rounds"].index(t["lightgbm_rounds"])
        assert lg_curve["test_errors"][i] <= t["shareboost_error"] < min(
            lg_curve["test_errors"][:i], default=np.inf)
        assert t["time_ratio"] == pytest.approx(t["shareboost_s"] / lg_curve["seconds"][i])
    assert any(line.startswith("| pendigits | 20 | ") for line in out.splitlines())


def test_tradeoff_reads_the_first_lightgbm_round_at_each_shareboost_error(script):
    sb = {"seconds": [1.0, 2.0, 3.0, 4.0, 5.0], "test_errors": [0.5, 0.4, 0.3, 0.28, 0.1]}
    lg = {"rounds": [10, 20, 30], "seconds": [0.5, 1.0, 1.5], "test_errors": [0.45, 0.25, 0.3]}
    rows = script["tradeoff"](sb, lg, every=2)
    assert [r["stumps"] for r in rows] == [2, 4, 5]
    assert [r["lightgbm_rounds"] for r in rows] == [20, 20, None]  # 0.1: never reached
    assert rows[0]["time_ratio"] == 2.0 / 1.0 and rows[1]["time_ratio"] == 4.0 / 1.0
    assert rows[2]["time_ratio"] is None and rows[2]["lightgbm_s"] is None
    lines = script["tradeoff_table"]({"pendigits": {"tradeoff": rows,
                                                    "lightgbm": {"rounds": 30}}})
    assert lines[-1] == "| pendigits | 5 | 5.00 s, 10.00% | not reached in 30 rounds | - |"


@pytest.mark.parametrize("args, message", [
    (["--n-jobs", "0"], "--n-jobs must be at least 1"),
    (["--curve-step", "0"], "--curve-step must be at least 1"),
    (["--step", "50", "--max-rounds", "20"], "--max-rounds must be at least --step"),
    (["--sets", "iris"], "invalid choice: 'iris'"),
])
def test_bad_options_are_refused(script, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        script["main"](args)
    assert info.value.code == 2 and message in capsys.readouterr().err
