"""The user guide's "write your own family" example runs, and its family is exact.

The example (examples/extending/plot_custom_family.py) is executed as the
docs build executes it; its family must give ShareBoost the same path as the
whole matrix of its candidates given as raw columns.
"""

import contextlib
import io
import runpy
from pathlib import Path

import numpy as np
import pytest

from mcsparse import ShareBoostClassifier

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "extending"


@pytest.fixture(scope="module")
def family_example():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            names = runpy.run_path(str(EXAMPLES / "plot_custom_family.py"), run_name="__main__")
        yield {**names, "printed": out.getvalue()}
    finally:
        plt.close("all")


def test_family_example_runs(family_example):
    out = family_example["printed"]
    assert "raw columns: test error" in out and "hinges: test error" in out
    assert family_example["clf"].n_iter_ == 16


def test_family_example_matches_its_whole_matrix(family_example):
    Hinges, X = family_example["Hinges"], family_example["X"] / 100
    y = family_example["y"]
    family = Hinges().fit(X)
    whole = family.transform_candidates(X, np.arange(family.n_candidates_))
    by_family = ShareBoostClassifier(n_features_to_select=8, features=Hinges()).fit(X, y)
    by_matrix = ShareBoostClassifier(n_features_to_select=8).fit(whole, y)
    np.testing.assert_array_equal(by_family.selected_features_, by_matrix.selected_features_)
    np.testing.assert_allclose(by_family.decision_function(X), by_matrix.decision_function(whole),
                               rtol=1e-6, atol=1e-8)
