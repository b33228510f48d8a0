"""asv_benchmarks/stumps_vs_lightgbm.py: the side-by-side table of issue 52 runs (quick mode)."""

import json
import runpy
from pathlib import Path

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
    rows = [line for line in out.splitlines() if line.startswith("| pendigits |")]
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


@pytest.mark.parametrize("args, message", [
    (["--n-jobs", "0"], "--n-jobs must be at least 1"),
    (["--step", "50", "--max-rounds", "20"], "--max-rounds must be at least --step"),
    (["--sets", "iris"], "invalid choice: 'iris'"),
])
def test_bad_options_are_refused(script, capsys, args, message):
    with pytest.raises(SystemExit) as info:
        script["main"](args)
    assert info.value.code == 2 and message in capsys.readouterr().err
