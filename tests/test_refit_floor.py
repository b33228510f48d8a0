"""asv_benchmarks/refit_floor.py: the refit's floor beside LightGBM runs (quick mode), and
its instrumentation leaves the answer alone."""

import json
import runpy
from pathlib import Path

import numpy as np
import pytest

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import DecisionStumps
from mcsparse.solvers import _objective, _path_state

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "asv_benchmarks" / "refit_floor.py"


@pytest.fixture
def script(monkeypatch):
    """The script's functions, run in this process (the package under test)."""
    if not SCRIPT.is_file():
        pytest.skip("not a source checkout")
    monkeypatch.syspath_prepend(str(SCRIPT.parent))  # its imports of the other scripts
    return runpy.run_path(str(SCRIPT), run_name="refit_floor")


def _pendigits(n=600):
    X, y = load_pendigits(return_X_y=True)
    return X[:n] / 100.0, y[:n]


def _fit(X, y):
    return ShareBoostClassifier(features=DecisionStumps(), n_features_to_select=12,
                                alpha=1e-4).fit(X, y)


def test_timers_change_no_bit_and_are_removed(script):
    X, y = _pendigits()
    plain = _fit(X, y)
    originals = (_path_state.solve, _objective.LinearObjective.evaluate,
                 _path_state._PathState.refit)
    with script["instrumented"](oracle=False) as stats:
        timed = _fit(X, y)
    assert np.array_equal(timed.coef_, plain.coef_)
    assert np.array_equal(timed.intercept_, plain.intercept_)
    assert stats["evaluations"] > stats["iterations"] > 0
    assert stats["evaluate_s"] > 0 and stats["oracle_s"] == 0
    assert (_path_state.solve, _objective.LinearObjective.evaluate,
            _path_state._PathState.refit) == originals


def test_oracle_replaces_the_curvature_and_restores_on_error(script):
    from mcsparse.solvers._refit import CarriedCurvature

    X, y = _pendigits()
    originals = (_path_state.solve, _objective.LinearObjective.evaluate,
                 _path_state._PathState.refit)
    reset, calls = CarriedCurvature.reset, []

    def counting_reset(self, *args, **kwargs):
        calls.append(self.n_params)
        return reset(self, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(CarriedCurvature, "reset", counting_reset)
        with pytest.raises(RuntimeError, match="stop"):
            with script["instrumented"](oracle=True) as stats:
                oracle = _fit(X, y)
                raise RuntimeError("stop")
    assert (_path_state.solve, _objective.LinearObjective.evaluate,
            _path_state._PathState.refit) == originals
    assert len(calls) >= 12 and stats["oracle_s"] > 0  # once a round at least
    assert oracle.n_iter_ == 12 and np.isfinite(oracle.coef_).all()


def test_quick_run_prints_the_table_and_writes_a_record(script, tmp_path, capsys):
    pytest.importorskip("lightgbm")
    record = tmp_path / "record.json"
    args = ["--quick", "--sets", "pendigits", "--repeat", "1", "--n-jobs", "1",
            "--out", str(record)]
    assert script["main"](args) == 0
    out = capsys.readouterr().out
    assert "command: python asv_benchmarks/refit_floor.py " + " ".join(args) in out
    assert "blas: " in out
    rows = [line for line in out.splitlines() if line.startswith("| pendigits |")]
    assert len(rows) == 1 and " rounds, " in rows[0]
    saved = json.loads(record.read_text())
    row = saved["results"]["sets"]["pendigits"]
    lg = row["lightgbm"]["fit_s"]
    for kind in ("shipped", "oracle"):
        run = row[kind]
        assert run["fit_s"] == min(run["fits_s"]) and len(run["fits_s"]) == 1
        assert run["passes_s"] + run["rest_s"] == pytest.approx(run["fit_s"])
        assert 0 < run["passes_s"] < run["fit_s"]
        assert row["ratios"][kind] == pytest.approx(run["fit_s"] / lg)
    assert row["ratios"]["oracle_rest"] == pytest.approx(row["oracle"]["rest_s"] / lg)
    assert row["lightgbm_rounds"] == script["recorded_rounds"]("pendigits", script["RECORD"])


def test_a_record_without_the_set_is_refused(script, tmp_path):
    from mcsparse.utils.records import save_full_run

    path = tmp_path / "record.json"
    save_full_run(path, {"sets": {"satimage": {"lightgbm": {"rounds": 100}}}},
                  script=SCRIPT, command="python x.py")
    assert script["recorded_rounds"]("satimage", path) == 100
    with pytest.raises(ValueError, match="no row for 'pendigits'.*stumps_vs_lightgbm"):
        script["recorded_rounds"]("pendigits", path)
