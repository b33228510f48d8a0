"""doc/record_figures.py: the comparison page's curves, drawn from a committed record."""

import json
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MODULE = ROOT / "doc" / "record_figures.py"
RECORD = ROOT / "asv_benchmarks" / "records" / "stumps_vs_lightgbm.json"


@pytest.fixture
def write_tradeoff():
    if not MODULE.is_file():
        pytest.skip("not a source checkout")
    pytest.importorskip("matplotlib")
    return runpy.run_path(str(MODULE))["write_tradeoff"]


def _record(tmp_path, sets):
    path = tmp_path / "record.json"
    path.write_text(json.dumps({"date": "2026-12-06", "commit": "0" * 40,
                                "results": {"n_jobs": 2, "sets": sets}}))
    return path


def _set(with_curves=True):
    sb = {"fit_s": 2.0, "test_error": 0.1}
    lg = {"fit_s": 1.0, "test_error": 0.09}
    if with_curves:
        sb["curve"] = {"seconds": [0.5, 1.0, 2.0], "test_errors": [0.4, 0.2, 0.1]}
        lg["curve"] = {"rounds": [1, 2], "seconds": [0.4, 1.0], "test_errors": [0.3, 0.09]}
    return {"n_samples": 100, "n_features": 4, "n_classes": 3, "time_ratio": 2.0,
            "shareboost": sb, "lightgbm": lg}


@pytest.mark.parametrize("n_sets", [1, 3])
def test_draws_one_panel_per_set(write_tradeoff, tmp_path, n_sets):
    names = ["pendigits", "satimage", "letter"][:n_sets]
    out = tmp_path / "figures" / "curves.png"
    write_tradeoff(_record(tmp_path, {name: _set() for name in names}), out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_record_without_curves_is_refused(write_tradeoff, tmp_path):
    record = _record(tmp_path, {"pendigits": _set(), "letter": _set(with_curves=False)})
    with pytest.raises(ValueError, match="no time-to-error curves for letter"):
        write_tradeoff(record, tmp_path / "out.png")
    assert not (tmp_path / "out.png").exists()


def test_the_committed_record_has_the_curves_the_docs_draw(write_tradeoff, tmp_path):
    if not RECORD.is_file():
        pytest.skip("not a source checkout")
    write_tradeoff(RECORD, tmp_path / "out.png")
    sets = json.loads(RECORD.read_text())["results"]["sets"]
    assert set(sets) == {"pendigits", "satimage", "letter", "mnist"}
    for row in sets.values():
        sb, lg = row["shareboost"]["curve"], row["lightgbm"]["curve"]
        assert len(sb["seconds"]) == len(sb["test_errors"]) == row["shareboost"]["stumps"]
        assert lg["rounds"] == list(range(1, row["lightgbm"]["rounds"] + 1))
