"""Ties in ShareBoost's selection go to the lowest candidate id, whatever the rounding.

Candidates whose gradient l1 norms are equal in exact arithmetic (here: a column
and its mirror image under a mirrored label vector) get scores that differ by
rounding only, and the rounding differs between float32 and float64 data and
between the row chunkings of a dask array. The selection treats scores within
the relative ``TIE_RTOL`` of the largest as tied and takes the lowest id, so
that all of them select the same columns.
"""

import numpy as np
import pytest

from mcsparse import ShareBoostClassifier
from mcsparse.features import DecisionStumps
from mcsparse.utils._ties import TIE_RTOL, first_best, tie_cutoff

# classes 0 <-> 1 and 2 <-> 3 swap under the mirror
MIRROR = np.array([1, 0, 3, 2])


def _mirrored_problem(n_half=150, seed=0):
    """Labels with ``y[n - 1 - i] = MIRROR[y[i]]`` and columns in mirrored pairs.

    Returns ``X`` (values exact in float32), ``y`` and ``pairs``: for each pair
    ``(a, b)``, column ``b`` is column ``a`` reversed, so that at any model that
    respects the mirror (``W = 0`` with the intercept-only fit) their gradient
    columns are each other's with the classes swapped: equal l1 norms. The
    lower id of a pair is the mirror image in one pair and the original in
    the other.
    """
    rng = np.random.default_rng(seed)
    half = rng.integers(0, 4, n_half)
    y = np.concatenate([half, MIRROR[half][::-1]])

    def informative(c, strength):
        return strength * (y == c) + rng.integers(0, 4, y.size) / 4

    strong = informative(0, 2.0)  # the best pair
    weak = informative(2, 1.0)
    noise = rng.integers(0, 4, (y.size, 3)) / 4
    # ids: 0 noise, 1 strong reversed, 2 noise, 3 weak, 4 strong, 5 noise, 6 weak reversed
    X = np.column_stack([noise[:, 0], strong[::-1], noise[:, 1], weak, strong, noise[:, 2],
                         weak[::-1]])
    return X, y, [(1, 4), (3, 6)]


def _dask(X, chunks):
    da = pytest.importorskip("dask.array")
    return da.from_array(X, chunks=(chunks, -1))


def test_the_mirrored_pairs_are_exact_ties():
    """The construction: equal scores in exact arithmetic, unequal after rounding."""
    X, y, pairs = _mirrored_problem()
    from fractions import Fraction

    # W = 0 without intercept: p = 1/k, residual rows p - e_y (exact fractions)
    k = 4
    for a, b in pairs:
        norms = []
        for col in (a, b):
            sums = [sum(Fraction(float(X[i, col])) * (Fraction(1, k) - (y[i] == c))
                        for i in range(len(y))) for c in range(k)]
            norms.append(sum(abs(s) for s in sums))
        assert norms[0] == norms[1]


def test_first_best_takes_the_lowest_id_within_the_tolerance():
    scores = np.array([1.0, 3.0 * (1 - 0.5 * TIE_RTOL), -np.inf, 3.0, np.nan, 3.0])
    assert first_best(scores) == 1
    assert first_best(np.array([1.0, 3.0 * (1 - 2 * TIE_RTOL), 3.0])) == 2
    assert first_best(np.array([-np.inf, -np.inf])) == -1
    assert first_best(np.zeros(0)) == -1
    assert first_best(np.array([0.0, 0.0])) == 0
    assert first_best(np.array([np.inf, 1.0, np.inf])) == 0
    assert tie_cutoff(np.inf) == np.inf and tie_cutoff(0.0) == 0.0


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("features", ["raw", "stumps"])
def test_exact_ties_go_to_the_lowest_id_in_float32_and_float64(features, fit_intercept, seed):
    X, y, pairs = _mirrored_problem(seed=seed)
    fits = [ShareBoostClassifier(n_features_to_select=4, features=features, alpha=1e-3,
                                 fit_intercept=fit_intercept).fit(X.astype(dtype), y)
            for dtype in (np.float64, np.float32)]
    # the first round chooses within a tied pair (a column and its mirror image, or
    # the same stump on both): the lower id, the feature of lower index for stumps
    first = fits[0].selected_features_[0]
    if features == "stumps":
        first = fits[0].features_.stump_features_[0]
    assert first in [a for a, _ in pairs]
    for clf in fits[1:]:
        np.testing.assert_array_equal(clf.selected_features_, fits[0].selected_features_)


def test_the_stump_scan_breaks_ties_across_features_by_the_lowest_id():
    """Stumps of features 1 and 4 tie exactly; the in-memory scan (per feature,
    then across features) and the rule on all scores at once agree."""
    X, y, _ = _mirrored_problem()
    stumps = DecisionStumps().fit(X)
    k = 4
    residual = np.full((y.size, k), 1.0 / k)
    residual[np.arange(y.size), y] -= 1.0
    j, score = stumps.best_candidate(residual, np.zeros(0, dtype=np.intp))
    columns = stumps.training_columns(np.arange(stumps.n_candidates_))
    scores = np.abs(columns.T @ residual).sum(axis=1)
    assert j == first_best(scores)
    assert stumps.candidate_names([j])[0].startswith("x1 ")
    np.testing.assert_allclose(score, scores[j], rtol=1e-12)


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=50) as cluster, \
            distributed.Client(cluster) as c:
        yield c


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("features", ["raw", "stumps"])
def test_exact_ties_go_to_the_lowest_id_on_dask_for_any_chunking(client, dtype, features):
    X, y, pairs = _mirrored_problem()
    X = X.astype(dtype)
    family = DecisionStumps(max_bins=16) if features == "stumps" else "raw"
    params = dict(n_features_to_select=4, features=family, alpha=1e-3)
    ref = ShareBoostClassifier(**params).fit(X, y)
    first = ref.selected_features_[0] if features == "raw" else \
        ref.features_.stump_features_[0]
    assert first in [a for a, _ in pairs]  # the lower id of a tied pair
    for chunks in (7, 13, 64, X.shape[0]):
        clf = ShareBoostClassifier(**params).fit(_dask(X, chunks), y)
        np.testing.assert_array_equal(clf.selected_features_, ref.selected_features_)
