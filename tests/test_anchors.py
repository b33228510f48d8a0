"""AnchorPoints: piecewise-linear anchor groups (§4.2) selected as groups (§3.2)."""

import pickle
import warnings

import numpy as np
import pytest

import reference
from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import AnchorPoints, RawFeatures
from mcsparse.features._anchors import _radii_and_cuts


def _digits(n=400):
    X, y = load_pendigits(return_X_y=True)
    return X[:n] / 100, y[:n]


def _family(X, **kw):
    params = dict(n_anchors=8, n_radii=4, quantile_range=(0.02, 0.6), random_state=0)
    params.update(kw)
    return AnchorPoints(**params).fit(X)


def test_balls_are_the_samples_within_each_radius():
    X, _ = _digits()
    family = _family(X)
    dist = np.linalg.norm(X[None, :, :] - family.anchors_[:, None, :], axis=2)
    inside = (dist[:, None, :] <= family.radii_[:, :, None]).sum(axis=2)
    np.testing.assert_array_equal(inside, family.ball_sizes_)
    assert np.all(np.diff(family.radii_, axis=1) >= 0)
    assert np.all(np.diff(family.ball_sizes_, axis=1) >= 0)
    # the target sizes: geometric quantiles 2% .. 60% of 400 samples
    np.testing.assert_array_equal(family.ball_sizes_[0], [8, 25, 78, 240])
    assert family.n_candidates_ == 32
    np.testing.assert_array_equal(family.candidate_widths_, np.full(32, 17))


def test_training_columns_equal_transform_on_training_data():
    X, _ = _digits()
    family = _family(X)
    ids = np.array([0, 5, 31, 12])
    cols = family.training_columns(ids)
    assert cols.shape == (400, 4 * 17)
    np.testing.assert_array_equal(cols, family.transform_candidates(X, ids))
    a, b = divmod(5, 4)
    block = cols[:, 17:34]
    inside = np.linalg.norm(X - family.anchors_[a], axis=1) <= family.radii_[a, b]
    np.testing.assert_array_equal(block[inside], np.hstack([X, np.ones((400, 1))])[inside])
    assert np.all(block[~inside] == 0)


def test_training_rows_are_the_training_columns_without_a_copy():
    X, _ = _digits()
    family = _family(X)
    for j in (0, 5, 31, 12):
        rows, values = family.training_rows(j)
        assert rows.dtype == np.intp and np.all(np.diff(rows) > 0)
        assert rows.size == family.ball_sizes_[j // 4, j % 4]
        assert not values.flags.writeable and values.shape == (400, 17)
        block = np.zeros((400, 17))
        block[rows] = values[rows]
        np.testing.assert_array_equal(block, family.training_columns([j]))
    assert np.shares_memory(family.training_rows(3)[1], family.training_rows(7)[1])
    with pytest.raises(ValueError, match=r"\[0, 32\)"):
        family.training_rows(32)
    with pytest.raises(ValueError, match="one candidate id"):
        family.training_rows([1])
    family.end_scan([0])
    with pytest.raises(RuntimeError, match="ended its scan"):
        family.training_rows(0)


def test_path_with_shared_pieces_equals_the_path_with_copied_pieces(monkeypatch):
    """Pieces stored by reference (put_rows) or as copies of their rows: the same fit."""
    from mcsparse.solvers._columns import SelectedColumns

    X, y = _digits(500)
    fits = []
    for shared in (True, False):
        if not shared:
            monkeypatch.delattr(SelectedColumns, "put_rows")
        clf = ShareBoostClassifier(n_features_to_select=5, alpha=1e-3,
                                   features=_family(X, n_anchors=20, n_radii=5,
                                                    quantile_range=(0.05, 0.5)))
        fits.append(clf.fit(X, y))
    np.testing.assert_array_equal(fits[0].selected_features_, fits[1].selected_features_)
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(fits[0].train_loss_, fits[1].train_loss_, rtol=1e-10)


def _shifted_rows(rows, values):
    values = values + 1.0
    values.flags.writeable = False
    return rows, values


@pytest.mark.parametrize("bad_rows, error, match", [
    (lambda rows, values: (rows[:-1], values), ValueError, "disagrees with training_columns"),
    (_shifted_rows, ValueError, "disagrees with training_columns"),
    (lambda rows, values: (rows, values.copy()), ValueError,
     r"Bad\.training_rows\(\d+\): values must be read-only"),
    (lambda rows, values: (rows[::-1], values), ValueError,
     r"training_rows\(\d+\): rows must be increasing"),
    (lambda rows, values: (rows, values[:, :3]), ValueError, "gives values of shape"),
    (lambda rows, values: None, ValueError, "must return a pair"),
    (lambda rows, values: (rows, values, 0), ValueError, "must return a pair"),
    (lambda rows, values: (rows + 10**6, values), ValueError, "do not index its values"),
])
def test_path_refuses_training_rows_that_are_not_the_training_columns(bad_rows, error, match):
    """A family's rows and shared values are checked against its own training block."""

    class Bad(AnchorPoints):
        def training_rows(self, j):
            return bad_rows(*super().training_rows(j))

    X, y = _digits(300)
    clf = ShareBoostClassifier(n_features_to_select=2, alpha=1e-3,
                               features=Bad(n_anchors=10, n_radii=4, random_state=0))
    with pytest.raises(error, match=match):
        clf.fit(X, y)


@pytest.mark.parametrize("n_jobs", [None, 2])
def test_group_scores_equal_brute_force(n_jobs):
    X, _ = _digits()
    family = _family(X, n_jobs=n_jobs)
    R = np.random.default_rng(0).standard_normal((400, 5))
    G = family.training_columns(np.arange(32)).reshape(400, 32, 17)
    brute = np.abs(np.einsum("ic,igf->gcf", R, G)).sum(axis=(1, 2))
    j, score = family.best_candidate(R, np.array([], dtype=np.intp))
    assert j == int(np.argmax(brute)) and score == pytest.approx(brute.max(), rel=1e-12)
    excluded = np.argsort(brute)[-3:]
    j, score = family.best_candidate(R, excluded)
    assert j == int(np.argsort(brute)[-4])


def test_path_equals_reference_on_materialised_groups():
    """ShareBoost over anchors = the brute-force group reference on the explicit columns."""
    X, y = _digits(200)
    y = y % 3
    family = _family(X, n_anchors=4, n_radii=3, quantile_range=(0.1, 0.5))
    clf = ShareBoostClassifier(n_features_to_select=2, alpha=0.01, features=family,
                               tol=1e-10, max_iter=10000).fit(X, y)
    explicit = _family(X, n_anchors=4, n_radii=3, quantile_range=(0.1, 0.5))
    columns = explicit.training_columns(np.arange(12))
    groups = [list(range(17 * g, 17 * (g + 1))) for g in range(12)]
    sel, losses = reference.shareboost(columns, y, 3, 2, alpha=0.01, groups=groups)
    np.testing.assert_array_equal(clf.selected_features_, sel)
    np.testing.assert_allclose(clf.train_loss_, losses, rtol=1e-6)
    # the same groups as raw columns with group labels
    raw = ShareBoostClassifier(n_features_to_select=2, alpha=0.01, tol=1e-10, max_iter=10000,
                               features=RawFeatures(groups=np.repeat(np.arange(12), 17)))
    raw.fit(columns, y)
    np.testing.assert_array_equal(raw.selected_features_, sel)
    np.testing.assert_allclose(clf.decision_function(X), raw.decision_function(columns),
                               atol=1e-8)


def test_classifier_with_anchors_predicts_and_pickles():
    X, y = _digits(600)
    clf = ShareBoostClassifier(n_features_to_select=6, alpha=1e-3, features="anchors")
    clf.set_params(features=AnchorPoints(n_anchors=30, n_radii=5, random_state=0))
    clf.fit(X[:400], y[:400])
    assert clf.coef_.shape == (10, 6 * 17)
    np.testing.assert_array_equal(clf._path.column_ptr, np.arange(0, 7 * 17, 17))
    assert clf.score(X[400:], y[400:]) > 0.8
    assert np.all(clf.support_)
    staged = list(clf.staged_predict(X[400:]))
    np.testing.assert_array_equal(staged[-1], clf.predict(X[400:]))
    clone = pickle.loads(pickle.dumps(clf))
    assert clone.features_._X_fit is None and clone.features_._order is None
    np.testing.assert_array_equal(clone.predict(X[400:]), clf.predict(X[400:]))


def test_features_anchors_shortcut():
    X, y = _digits(1600)
    # 1500 clusters of 1600 digits: k-means returns some centres twice
    with pytest.warns(UserWarning, match="distinct centres of the n_anchors=1500"):
        clf = ShareBoostClassifier(n_features_to_select=1, features="anchors").fit(X, y)
    family = clf.features_
    assert isinstance(family, AnchorPoints)
    assert 1000 < family.n_anchors_ < 1500
    assert family.anchors_.shape == (family.n_anchors_, 16)
    assert family.n_candidates_ == 35 * family.n_anchors_
    assert len(np.unique(family.anchors_, axis=0)) == family.n_anchors_


def test_repeated_centres_and_equal_balls_are_not_selected_twice():
    """Data with few distinct points: no repeated anchor, no repeated piece."""
    rng = np.random.default_rng(0)
    points = rng.uniform(0, 1, (6, 2))
    X = np.repeat(points, 30, axis=0)
    y = np.repeat(np.arange(6) % 3, 30)
    with pytest.warns(UserWarning, match="distinct centres"):
        family = AnchorPoints(n_anchors=12, n_radii=6, random_state=0).fit(X)
    assert len(np.unique(np.round(family.anchors_, 6), axis=0)) == family.n_anchors_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the centres again, and maybe a short path
        clf = ShareBoostClassifier(n_features_to_select=family.n_candidates_, alpha=1e-2,
                                   features=AnchorPoints(n_anchors=12, n_radii=6,
                                                         random_state=0)).fit(X, y)
    blocks = [clf.features_.transform_candidates(X, [j]) for j in clf.selected_features_]
    for a in range(len(blocks)):
        for b in range(a):
            assert not np.array_equal(blocks[a], blocks[b]), (a, b)


def test_radii_never_split_equal_distances():
    dist = np.array([0.0, 1.0, 1.0, 1.0, 2.0, 3.0])
    radii, cuts = _radii_and_cuts(dist, np.array([1, 2, 3, 5, 6]), 6)
    np.testing.assert_array_equal(cuts, [1, 1, 1, 5, 6])
    np.testing.assert_allclose(radii, [0.5, 0.5, 0.5, 2.5, 3.0])


def test_duplicate_samples():
    X, y = _digits(100)
    X = np.vstack([X, X, X])  # every distance appears three times
    family = _family(X)
    dist = np.linalg.norm(X[None, :, :] - family.anchors_[:, None, :], axis=2)
    inside = (dist[:, None, :] <= family.radii_[:, :, None]).sum(axis=2)
    np.testing.assert_array_equal(inside, family.ball_sizes_)
    assert np.all(family.ball_sizes_ % 3 == 0)


def test_values_too_large_for_distances_are_named():
    """Finite values near the float64 limit: the error says they are too large, not infinite."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (200, 3))
    X[0, 0], X[1, 0] = 1.7e308, 1.5e308
    with pytest.raises(ValueError, match=r"values up to 1\.7e\+308 .* rescale X"):
        AnchorPoints(n_anchors=4, n_radii=3).fit(X)
    # just below the limit k-means and the balls run without overflow
    limit = 0.25 * np.sqrt(np.finfo(np.float64).max / X.size)
    X = rng.uniform(-1, 1, (200, 3)) * 0.99 * limit
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        family = AnchorPoints(n_anchors=4, n_radii=3, random_state=0).fit(X)
    assert np.all(np.isfinite(family.radii_))


def test_empty_balls_stay_empty_when_the_anchor_sits_on_samples():
    # an anchor on duplicated rows: the nearest distances are 0 and tie, so
    # the smallest balls are emptied; no sample may fall in them later
    radii, cuts = _radii_and_cuts(np.array([0.0, 0.0, 0.0, 1.0]), np.array([1, 2, 3]), 4)
    np.testing.assert_array_equal(cuts, [0, 0, 3])
    np.testing.assert_array_equal(radii, [-np.inf, -np.inf, 0.5])
    for X in (np.ones((20, 3)), np.repeat(_digits(4)[0], 4, axis=0)):
        family = _family(X, n_anchors=1 if X.std() == 0 else 4, n_radii=2,
                         quantile_range=(0.1, 0.5))
        ids = np.arange(family.n_candidates_)
        np.testing.assert_array_equal(family.training_columns(ids),
                                      family.transform_candidates(X, ids))
        assert family.ball_sizes_.min() == 0


def test_balls_do_not_depend_on_an_offset_of_the_data():
    # distances from ||x||^2 - 2 x.v + ||v||^2 lose all precision far from
    # the origin unless the data are centred first
    X, _ = _digits()
    near = _family(X)
    for offset in (1e6, 1e8):
        far = _family(X + offset)
        np.testing.assert_array_equal(far.ball_sizes_, near.ball_sizes_)
        np.testing.assert_allclose(far.radii_, near.radii_, rtol=1e-6)
        np.testing.assert_allclose(far.anchors_ - offset, near.anchors_, atol=1e-6)
        ids = np.arange(far.n_candidates_)
        np.testing.assert_array_equal(far.training_columns(ids),
                                      far.transform_candidates(X + offset, ids))


def test_quantile_range_as_any_pair_of_reals():
    from fractions import Fraction

    X, _ = _digits()
    expected = _family(X).ball_sizes_
    for q in (np.array([0.02, 0.6]), [0.02, 0.6], (Fraction(1, 50), Fraction(3, 5))):
        np.testing.assert_array_equal(_family(X, quantile_range=q).ball_sizes_, expected)


def test_refit_forgets_support():
    X, _ = _digits()
    family = _family(X).end_scan([0])
    assert family.support_.shape == (16,)
    family.fit(X[:, :5])
    assert not hasattr(family, "support_")


@pytest.mark.parametrize("params, error, match", [
    (dict(quantile_range=(0.0, 0.5)), ValueError, "quantile_range"),
    (dict(quantile_range=(0.5, 0.1)), ValueError, "quantile_range"),
    (dict(quantile_range=(0.1, 1.5)), ValueError, "quantile_range"),
    (dict(quantile_range=0.5), ValueError, "quantile_range"),
    (dict(n_anchors=0), ValueError, "n_anchors"),
    (dict(n_anchors=2.5), TypeError, "n_anchors"),
    (dict(n_radii=0), ValueError, "n_radii"),
    (dict(n_radii=10**30), ValueError, "n_anchors \\* n_radii"),
    (dict(n_anchors=500), ValueError, "at least as many samples"),
    (dict(n_jobs=0), ValueError, "n_jobs"),
])
def test_bad_parameters(params, error, match):
    X, _ = _digits()
    with pytest.raises(error, match=match):
        _family(X, **params)


def test_bad_data():
    X, _ = _digits()
    bad = X.copy()
    bad[3, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        _family(bad)
    family = _family(X)
    with pytest.raises(ValueError, match="features"):
        family.transform_candidates(X[:, :5], [0])
    with pytest.raises(TypeError, match="integers"):
        family.transform_candidates(X, [0.5])
    with pytest.raises(ValueError, match=r"\[0, 32\)"):
        family.training_columns([32])
    with pytest.raises(ValueError, match="shape"):
        family.best_candidate(np.zeros((399, 3)), np.array([], dtype=np.intp))
    with pytest.raises(ValueError, match="NaN"):
        family.best_candidate(np.full((400, 3), np.nan), np.array([], dtype=np.intp))
    with pytest.raises(ValueError, match="already"):
        family.best_candidate(np.ones((400, 3)), np.arange(32))


@pytest.mark.parametrize("family", ["anchors", "raw", "raw32", "groups"])
@pytest.mark.parametrize("residual, error, match", [
    (np.full((400, 3), np.inf), ValueError, "NaN or infinity"),
    (np.ones(400), ValueError, r"shape \(n_samples, n_classes\)"),
    (np.ones((399, 3)), ValueError, "n_samples=400"),
    (np.ones((400, 3), dtype=complex), TypeError, "real numbers"),
    (np.ones((400, 3), dtype=bool), TypeError, "real numbers"),
    (np.full((400, 3), "a"), TypeError, "real numbers"),
    (None, TypeError, "real numbers"),
])
def test_best_candidate_checks_the_residual(family, residual, error, match):
    X, _ = _digits()
    fitted = {"anchors": lambda: _family(X),
              "raw": lambda: RawFeatures().fit(X),
              "raw32": lambda: RawFeatures().fit(X.astype(np.float32)),
              "groups": lambda: RawFeatures(groups=np.arange(16) // 4).fit(X)}[family]()
    with pytest.raises(error, match=match):
        fitted.best_candidate(residual, np.array([], dtype=np.intp))


def test_best_candidate_refuses_a_sparse_residual_and_overflow():
    import scipy.sparse as sp

    X, _ = _digits()
    for fitted in (_family(X), RawFeatures().fit(X)):
        with pytest.raises(TypeError, match="sparse"):
            fitted.best_candidate(sp.csr_matrix(np.ones((400, 3))), [])
        with pytest.raises(ValueError, match="overflow: rescale X or residual"):
            fitted.best_candidate(np.full((400, 3), 1e307), [])
    # a list is an array-like residual: the same answer as the array
    raw = RawFeatures().fit(X.astype(np.float32))
    R = np.random.RandomState(0).randn(400, 3)
    assert raw.best_candidate(R.tolist(), []) == raw.best_candidate(R, [])


def test_warm_start_with_fixed_anchors_equals_one_fit():
    X, y = _digits()
    kw = dict(alpha=1e-3, features=AnchorPoints(n_anchors=20, n_radii=3, random_state=0))
    one = ShareBoostClassifier(n_features_to_select=4, **kw).fit(X, y)
    warm = ShareBoostClassifier(n_features_to_select=2, warm_start=True, **kw).fit(X, y)
    warm.set_params(n_features_to_select=4).fit(X, y)
    np.testing.assert_array_equal(warm.selected_features_, one.selected_features_)
    np.testing.assert_allclose(warm.train_loss_, one.train_loss_, rtol=1e-6)


@pytest.mark.parametrize("change", ["random_anchors", "other_anchors"])
def test_warm_start_refuses_other_candidates(change):
    X, y = _digits()
    first = dict(random_anchors=None, other_anchors=0)[change]
    clf = ShareBoostClassifier(
        n_features_to_select=2, warm_start=True, alpha=1e-3,
        features=AnchorPoints(n_anchors=20, n_radii=3, random_state=first)).fit(X, y)
    before = clf.decision_function(X)
    if change == "other_anchors":
        clf.set_params(features=AnchorPoints(n_anchors=20, n_radii=3, random_state=1))
    with pytest.raises(ValueError, match="random_state"):
        clf.set_params(n_features_to_select=3).fit(X, y)
    # the refused fit leaves the fitted model as it was
    assert clf.n_iter_ == 2
    np.testing.assert_array_equal(clf.decision_function(X), before)
