"""ShareBoostClassifierCV and the default alpha="auto".

The CV estimator must give, from one path per fold and alpha, the scores that
GridSearchCV gets from one fit per (alpha, n_features) pair; choose by its
rules; refit with the choice; and take every candidate family.
"""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from mcsparse import ShareBoostClassifier, ShareBoostClassifierCV
from mcsparse.datasets import load_pendigits
from mcsparse.estimators._shareboost_cv import GRID_SPAN, _choose, alpha_grid
from mcsparse.features import AnchorPoints, CandidateFeatures, ConvMaxTemplates, RawFeatures
from mcsparse.solvers import default_alpha


def _pendigits(n=600):
    X, y = load_pendigits(return_X_y=True)
    return X[:n] / 100, y[:n]


# --- alpha="auto" ------------------------------------------------------------


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_auto_alpha_is_the_mean_column_variance_over_twice_the_samples(fit_intercept):
    X, y = _pendigits()
    clf = ShareBoostClassifier(n_features_to_select=3, fit_intercept=fit_intercept).fit(X, y)
    second = X.var(axis=0) if fit_intercept else (X ** 2).mean(axis=0)
    np.testing.assert_allclose(clf.alpha_, second.mean() / (2 * X.shape[0]), rtol=1e-12)
    assert ShareBoostClassifier(n_features_to_select=3, alpha=0.25).fit(X, y).alpha_ == 0.25


def test_auto_alpha_follows_the_features_scale():
    """alpha * ||W||^2 at the rescaled coefficients is the same penalty: alpha_ scales
    with the square of the features' scale."""
    X, y = _pendigits()
    a = ShareBoostClassifier(n_features_to_select=3).fit(X, y)
    b = ShareBoostClassifier(n_features_to_select=3).fit(X * 100, y)
    np.testing.assert_allclose(b.alpha_, a.alpha_ * 1e4, rtol=1e-10)


def test_auto_alpha_counts_weights_as_repeated_samples():
    """scikit-learn's convention: an integer weight is that many copies of the sample
    (the penalty shrinks with the weight sum)."""
    X, y = _pendigits(300)
    w = np.random.default_rng(0).integers(0, 4, y.size)
    a = ShareBoostClassifier(n_features_to_select=4).fit(X, y, sample_weight=w)
    b = ShareBoostClassifier(n_features_to_select=4).fit(np.repeat(X, w, axis=0),
                                                         np.repeat(y, w))
    np.testing.assert_allclose(a.alpha_, b.alpha_, rtol=1e-12)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-6, atol=1e-8)


def test_default_alpha_reads_few_columns_at_a_time_and_falls_back_on_constant_ones():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 600))
    family = RawFeatures().fit(X)
    ids = np.unique(np.linspace(0, 599, 256).astype(np.intp))  # the columns it reads
    want = X[:, ids].var(axis=0).mean() / 100
    np.testing.assert_allclose(default_alpha(family, 50), want, rtol=1e-12)
    np.testing.assert_allclose(default_alpha(family, 50, weight_sum=5.0), want * 10,
                               rtol=1e-12)
    constant = RawFeatures().fit(np.ones((10, 3)))
    assert default_alpha(constant, 10) == 1.0 / 20  # no variance: s2 taken as 1


def test_the_default_fit_converges_without_a_warning_on_the_readme_data():
    """The README's main job: pendigits, 120 products, 40 rounds, no intercept; and
    the getting-started stumps. The bare loss (alpha=0) warns on the first."""
    from mcsparse.features import PairwiseProducts

    X, y = load_pendigits(return_X_y=True)
    products = PairwiseProducts().fit_transform(X / 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ShareBoostClassifier(n_features_to_select=40, fit_intercept=False).fit(products, y)
        ShareBoostClassifier(n_features_to_select=40, features="stumps").fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        ShareBoostClassifier(n_features_to_select=40, fit_intercept=False,
                             alpha=0.0).fit(products, y)


# --- the choice -----------------------------------------------------------------


def test_choose_min_takes_the_best_then_fewer_features_then_the_larger_alpha():
    mean = np.array([[0.80, 0.90, 0.90],
                     [0.85, 0.90, 0.88]])
    assert _choose(mean, np.zeros_like(mean), 5, "min") == (1, 2)


def test_choose_1se_takes_the_fewest_features_within_one_standard_error():
    mean = np.array([[0.70, 0.86, 0.89, 0.90],
                     [0.72, 0.87, 0.88, 0.89]])
    std = np.full_like(mean, np.sqrt(4) * 0.035)  # standard error 0.035 over 4 folds
    assert _choose(mean, std, 4, "1se") == (1, 2)  # 0.87 >= 0.90 - 0.035, the best at 2
    assert _choose(mean, std, 4, "min") == (0, 4)


def test_the_default_grid_brackets_the_default_alpha():
    grid = alpha_grid(7, 2e-5)
    np.testing.assert_allclose(grid, 2e-5 * np.logspace(-3, 3, 7))
    assert GRID_SPAN == (1e-3, 1e3) and alpha_grid(1, 2e-5).tolist() == [2e-5]


# --- against GridSearchCV ------------------------------------------------------------


@pytest.mark.parametrize("features", ["raw", "stumps"])
def test_scores_equal_grid_search_over_alpha_and_n_features(features):
    """One path per fold and alpha gives the scores of a fit per (alpha, n_features)."""
    X, y = _pendigits(400)
    alphas, max_features = [1e-5, 1e-3], 5
    folds = list(StratifiedKFold(3).split(X, y))
    cv = ShareBoostClassifierCV(alphas=alphas, max_features=max_features, cv=folds,
                                features=features).fit(X, y)
    grid = GridSearchCV(ShareBoostClassifier(features=features),
                        {"alpha": alphas, "n_features_to_select": range(1, 6)},
                        cv=folds).fit(X, y)
    np.testing.assert_array_equal(cv.cv_results_["param_alpha"],
                                  np.asarray(grid.cv_results_["param_alpha"], dtype=float))
    np.testing.assert_array_equal(cv.cv_results_["param_n_features"],
                                  grid.cv_results_["param_n_features_to_select"])
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"],
                               grid.cv_results_["mean_test_score"], atol=1e-12)
    np.testing.assert_array_equal(cv.cv_results_["rank_test_score"],
                                  grid.cv_results_["rank_test_score"])
    assert cv.best_score_ == pytest.approx(grid.best_score_)
    best = grid.best_estimator_
    ref = ShareBoostClassifier(features=features, alpha=cv.alpha_,
                               n_features_to_select=cv.n_features_).fit(X, y)
    np.testing.assert_array_equal(cv.selected_features_, ref.selected_features_)
    np.testing.assert_array_equal(cv.predict(X), ref.predict(X))
    # the same point as the grid search, or one of equal mean score (the grid
    # search takes the first in its order, the CV estimator fewer features)
    assert grid.cv_results_["mean_test_score"][grid.best_index_] == pytest.approx(
        cv.best_score_) and best.n_features_to_select >= cv.n_features_


def test_attributes_shapes_and_cv_results_table():
    pd = pytest.importorskip("pandas")
    X, y = _pendigits(300)
    cv = ShareBoostClassifierCV(alphas=3, max_features=4, cv=3).fit(X, y)
    assert cv.scores_.shape == (3, 3, 4) and cv.alphas_.shape == (3,)
    assert cv.max_features_ == 4 and cv.path_n_iter_.shape == (3, 3)
    assert len(cv.path_warnings_) == 3 and all(len(row) == 3 for row in cv.path_warnings_)
    table = pd.DataFrame(cv.cv_results_)
    assert len(table) == 12 and table["rank_test_score"].min() == 1
    row = table[(table.param_alpha == cv.alpha_) & (table.param_n_features == cv.n_features_)]
    assert row.mean_test_score.item() == cv.best_score_
    np.testing.assert_allclose(cv.scores_.mean(axis=0).ravel(), table.mean_test_score)
    assert cv.best_estimator_.alpha_ == cv.alpha_
    assert cv.best_estimator_.n_iter_ == cv.n_features_ == cv.n_iter_
    np.testing.assert_array_equal(cv.coef_, cv.best_estimator_.coef_)
    assert len(list(cv.staged_predict(X))) == cv.n_features_
    assert len(list(cv.staged_predict_proba(X))) == cv.n_features_


def test_scoring_sample_weight_and_pandas_names():
    pd = pytest.importorskip("pandas")
    X, y = _pendigits(300)
    frame = pd.DataFrame(X, columns=[f"pen{i}" for i in range(16)])
    w = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    cv = ShareBoostClassifierCV(alphas=2, max_features=3, cv=3, scoring="neg_log_loss").fit(
        frame, y, sample_weight=w)
    assert np.all(cv.scores_ < 0)  # log losses
    assert all(name.startswith("pen") for name in cv.selected_feature_names_)
    np.testing.assert_array_equal(cv.feature_names_in_, frame.columns)


def test_every_family_and_sparse_input():
    X, y = _pendigits(200)
    for features in ("stumps", AnchorPoints(n_anchors=4, n_radii=2, random_state=0),
                     RawFeatures(groups=np.arange(16) // 4)):
        cv = ShareBoostClassifierCV(alphas=2, max_features=2, cv=2,
                                    features=features).fit(X, y)
        assert cv.scores_.shape == (2, 2, 2)
    cv = ShareBoostClassifierCV(alphas=2, max_features=3, cv=2).fit(sp.csr_matrix(X), y)
    assert cv.predict(sp.csr_matrix(X)).shape == (200,)
    rng = np.random.default_rng(0)
    images = rng.random((120, 64)).astype(np.float32)
    cv = ShareBoostClassifierCV(alphas=2, max_features=2, cv=2, features=ConvMaxTemplates(
        n_templates=4, patch_size=3, n_masks=4, n_patches=100, random_state=0)).fit(
        images, np.arange(120) % 3)
    assert cv.n_features_ in (1, 2)


class _Halves(CandidateFeatures):
    """A user family: each column and its half (protocol methods only)."""

    def fit(self, X, y=None):
        self._X = np.hstack([X, X / 2])
        self.n_features_in_, self.n_candidates_ = X.shape[1], 2 * X.shape[1]
        return self

    def best_candidate(self, residual, excluded):
        scores = np.abs(self._X.T @ residual).sum(axis=1)
        scores[excluded] = -np.inf
        j = int(np.argmax(scores))
        return j, float(scores[j])

    def training_columns(self, ids):
        return self._X[:, ids]

    def end_scan(self, ids):
        self.support_ = np.ones(self.n_features_in_, dtype=bool)
        return self

    def transform_candidates(self, X, ids):
        return np.hstack([X, X / 2])[:, ids]


def test_a_user_family():
    X, y = _pendigits(200)
    cv = ShareBoostClassifierCV(alphas=2, max_features=3, cv=2, features=_Halves()).fit(X, y)
    assert cv.selected_features_.shape == (cv.n_features_,)


def test_a_path_that_stops_early_keeps_its_last_model_in_the_scores():
    """Columns 4.. are zero: every path stops after the 4 informative ones, and the
    scores of rounds 5 and 6 repeat round 4's."""
    rng = np.random.default_rng(0)
    y = np.arange(120) % 3
    X = np.zeros((120, 8))
    X[:, :4] = rng.standard_normal((120, 4)) + y[:, None] * np.array([1.0, -1.0, 0.5, 0.2])
    cv = ShareBoostClassifierCV(alphas=[1e-3], max_features=6, cv=3).fit(X, y)
    assert np.all(cv.path_n_iter_ == 4)
    np.testing.assert_array_equal(cv.scores_[..., 4], cv.scores_[..., 3])
    np.testing.assert_array_equal(cv.scores_[..., 5], cv.scores_[..., 3])
    assert cv.n_features_ <= 4 and all("stopped after 4 of 6" in m[0]
                                       for row in cv.path_warnings_ for m in row)


def test_paths_that_warn_at_the_chosen_alpha_warn_once():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((120, 10))
    y = np.argmax(X[:, :3] @ rng.standard_normal((3, 3)), axis=1)  # separable
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        ShareBoostClassifierCV(alphas=[0.0], max_features=8, cv=3).fit(X, y)
    mine = [w for w in caught if "ShareBoostClassifierCV: at the chosen alpha=0" in
            str(w.message)]
    assert len(mine) == 1 and "path_warnings_" in str(mine[0].message)


def test_refuses_dask_arrays_with_the_reason():
    da = pytest.importorskip("dask.array")
    X, y = _pendigits(100)
    with pytest.raises(ValueError, match="does not take dask arrays.*n_splits x n_alphas"):
        ShareBoostClassifierCV(alphas=2, max_features=2).fit(da.from_array(X), y)


def test_max_features_beyond_the_candidates_is_refused_before_any_fold():
    X, y = _pendigits(60)
    with pytest.raises(ValueError, match="max_features must be in"):
        ShareBoostClassifierCV(alphas=2, max_features=17, cv=2).fit(X, y)


def test_other_warnings_of_the_fold_paths_are_shown():
    """Only ConvergenceWarnings are gathered into path_warnings_; a fold's other
    warnings (here: every remaining candidate repeats a selected one) show."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((90, 1))
    X = np.hstack([x, x, x])  # three copies of one column
    y = (x[:, 0] > 0).astype(int) + (x[:, 0] > 1)
    with pytest.warns(UserWarning, match="same training columns as a selected one"):
        cv = ShareBoostClassifierCV(alphas=[1e-3], max_features=3, cv=3).fit(X, y)
    assert cv.n_features_ == 1  # the refit has one round: the warning is the folds'
    assert np.all(cv.path_n_iter_ == 1)
