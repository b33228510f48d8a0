"""ShareBoostClassifier against the slow reference, and its scikit-learn behaviour."""

import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad
from scipy.special import softmax
from sklearn.exceptions import ConvergenceWarning

import reference
from mcsparse import MixedNormClassifier, OneVsRestGreedyClassifier, ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import AnchorPoints, CandidateFeatures, PairwiseProducts
from mcsparse.loss import Frobenius
from mcsparse.solvers._objective import LinearObjective

TIGHT = dict(tol=1e-10, max_iter=10000)


def _noisy_problem(n=150, d=8, k=3, seed=0):
    """Not separable (label noise, n >> d): the bare loss has a minimiser."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((k, d)) * (rng.random(d) < 0.5)
    y = np.argmax(X @ W.T + 1.5 * rng.standard_normal((n, k)), axis=1)
    return X, y


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("alpha", [0.0, 0.01])
def test_matches_reference_random(seed, fit_intercept, alpha):
    X, y = _noisy_problem(seed=seed)
    clf = ShareBoostClassifier(n_features_to_select=5, alpha=alpha,
                               fit_intercept=fit_intercept, **TIGHT).fit(X, y)
    sel, losses = reference.shareboost(X, y, 3, 5, alpha=alpha,
                                       fit_intercept=fit_intercept)
    np.testing.assert_array_equal(clf.selected_features_, sel)
    np.testing.assert_allclose(clf.train_loss_, losses, rtol=1e-6)


def test_matches_reference_with_sample_weight():
    X, y = _noisy_problem(n=120, k=4, seed=5)
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=len(y))
    # alpha=0: the bare loss, the estimator's default before alpha="auto"
    clf = ShareBoostClassifier(n_features_to_select=4, alpha=0.0, **TIGHT).fit(
        X, y, sample_weight=w)
    sel, losses = reference.shareboost(X, y, 4, 4, sample_weight=w)
    np.testing.assert_array_equal(clf.selected_features_, sel)
    np.testing.assert_allclose(clf.train_loss_, losses, rtol=1e-6)


def test_matches_reference_pendigits():
    """Real data: 400 pendigits samples, 10 classes, 120 products, 5 rounds."""
    X, y = load_pendigits(return_X_y=True)
    X = PairwiseProducts().fit_transform(X[:400] / 100)
    y = y[:400]
    clf = ShareBoostClassifier(n_features_to_select=5, alpha=1e-3,
                               fit_intercept=False, **TIGHT).fit(X, y)
    sel, losses = reference.shareboost(X, y, 10, 5, alpha=1e-3, fit_intercept=False)
    np.testing.assert_array_equal(clf.selected_features_, sel)
    np.testing.assert_allclose(clf.train_loss_, losses, rtol=1e-6)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_refit_objective_gradient(fit_intercept, weighted):
    X, y = _noisy_problem(n=60, d=5, k=4)
    w = np.linspace(0.5, 2, 60) if weighted else None
    obj = LinearObjective(X, y, w, n_classes=4, penalty=Frobenius(0.3),
                          fit_intercept=fit_intercept)
    x0 = np.random.default_rng(0).standard_normal(4 * 5 + (4 if fit_intercept else 0))
    err = check_grad(lambda p: obj.value_grad(p, 5)[0], lambda p: obj.value_grad(p, 5)[1], x0)
    assert err < 1e-6
    W, b = obj.unpack(x0, 5)
    expected = reference.objective(W, b, X, y, np.ones(60) if w is None else w, 0.3)
    np.testing.assert_allclose(obj.value_grad(x0, 5)[0], expected, rtol=1e-12)


def test_fitted_attributes_multiclass():
    X, y = _noisy_problem(n=100, d=10, k=4)
    clf = ShareBoostClassifier(n_features_to_select=3).fit(X, y)
    assert clf.coef_.shape == (4, 10)
    assert clf.intercept_.shape == (4,)
    assert clf.n_iter_ == 3 and clf.n_features_in_ == 10
    assert clf.train_loss_.shape == (3,) and clf.refit_n_iter_.shape == (3,)
    assert np.all(np.diff(clf.train_loss_) <= 1e-12), "the path's loss must not increase"
    np.testing.assert_array_equal(np.flatnonzero(clf.support_), np.sort(clf.selected_features_))
    assert np.all(clf.coef_[:, ~clf.support_] == 0)
    assert len(set(clf.selected_features_)) == 3
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_.T + clf.intercept_)
    np.testing.assert_allclose(clf.predict_proba(X), softmax(clf.decision_function(X), axis=1))
    np.testing.assert_allclose(clf.predict_log_proba(X), np.log(clf.predict_proba(X)))


def test_binary_uses_scikit_learn_convention():
    X, y = _noisy_problem(n=100, d=6, k=2)
    labels = np.array(["neg", "pos"])[y]
    clf = ShareBoostClassifier(n_features_to_select=3).fit(X, labels)
    assert clf.coef_.shape == (1, 6) and clf.intercept_.shape == (1,)
    d = clf.decision_function(X)
    assert d.shape == (100,)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[(d > 0).astype(int)])
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], 1 / (1 + np.exp(-d)))


def test_staged_path():
    X, y = _noisy_problem(n=100, d=10, k=3)
    clf = ShareBoostClassifier(n_features_to_select=4).fit(X, y)
    staged = list(clf.staged_decision_function(X))
    assert len(staged) == 4
    np.testing.assert_allclose(staged[-1], clf.decision_function(X))
    preds = list(clf.staged_predict(X))
    np.testing.assert_array_equal(preds[-1], clf.predict(X))
    probas = list(clf.staged_predict_proba(X))
    np.testing.assert_allclose(probas[-1], clf.predict_proba(X))
    # round t uses only the first t selected features
    for t, scores in enumerate(staged, 1):
        X_other = X.copy()
        X_other[:, clf.selected_features_[t:]] = 1e3
        np.testing.assert_allclose(list(clf.staged_decision_function(X_other))[t - 1], scores)


def test_prediction_reads_only_selected_columns():
    X, y = _noisy_problem(n=80, d=12, k=3)
    clf = ShareBoostClassifier(n_features_to_select=2).fit(X, y)
    X2 = X.copy()
    X2[:, ~clf.support_] = np.random.default_rng(1).standard_normal((80, 10)) * 1e6
    np.testing.assert_array_equal(clf.predict(X2), clf.predict(X))


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_sparse_equals_dense(fmt):
    X, y = _noisy_problem(n=120, d=10, k=3)
    X[np.abs(X) < 0.7] = 0.0
    dense = ShareBoostClassifier(n_features_to_select=4, **TIGHT).fit(X, y)
    sparse = ShareBoostClassifier(n_features_to_select=4, **TIGHT).fit(sp.csr_matrix(X).asformat(fmt), y)
    np.testing.assert_array_equal(sparse.selected_features_, dense.selected_features_)
    np.testing.assert_allclose(sparse.coef_, dense.coef_, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(sparse.decision_function(sp.csr_matrix(X)), dense.decision_function(X),
                               rtol=1e-6, atol=1e-8)


def test_float32_input_selects_the_same_features():
    X, y = _noisy_problem(n=150, d=10, k=3)
    a = ShareBoostClassifier(n_features_to_select=5, **TIGHT).fit(X, y)
    b = ShareBoostClassifier(n_features_to_select=5, **TIGHT).fit(X.astype(np.float32), y)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(a.train_loss_, b.train_loss_, rtol=1e-5)


def test_any_label_type_and_unseen_order():
    X, y = _noisy_problem(n=90, d=6, k=3)
    names = np.array(["cat", "ant", "bee"])[y]
    clf = ShareBoostClassifier(n_features_to_select=3).fit(X, names)
    np.testing.assert_array_equal(clf.classes_, ["ant", "bee", "cat"])
    assert set(clf.predict(X)) <= set(names)
    ref = ShareBoostClassifier(n_features_to_select=3).fit(X, np.searchsorted(clf.classes_, names))
    np.testing.assert_array_equal(clf.selected_features_, ref.selected_features_)


def test_n_features_to_select_forms():
    X, y = _noisy_problem(n=60, d=10, k=3)
    assert ShareBoostClassifier().fit(X, y).n_iter_ == 5
    assert ShareBoostClassifier(n_features_to_select=0.3).fit(X, y).n_iter_ == 3
    assert ShareBoostClassifier(n_features_to_select=10).fit(X, y).n_iter_ == 10


def test_callback_and_early_stop():
    X, y = _noisy_problem(n=60, d=10, k=3)
    seen = []

    def callback(info):
        seen.append(info)
        return info.round == 2

    clf = ShareBoostClassifier(n_features_to_select=6, callback=callback).fit(X, y)
    assert clf.n_iter_ == 2 and len(seen) == 2
    assert [s.round for s in seen] == [1, 2]
    assert seen[1].coef.shape == (3, 2)
    np.testing.assert_array_equal(seen[1].selected_features, clf.selected_features_)
    assert clf.train_loss_[-1] == seen[1].train_loss


def test_verbose_prints_one_line_per_round(capsys):
    X, y = _noisy_problem(n=60, d=10, k=3)
    ShareBoostClassifier(n_features_to_select=3, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("[ShareBoost] round") == 3


def test_convergence_warning_on_separable_data():
    X, y = _noisy_problem(n=40, d=6, k=2)
    y = (X[:, 0] > 0).astype(int)  # separable by feature 0: the bare loss has no minimiser
    with pytest.warns(ConvergenceWarning, match="refits stopped"):
        ShareBoostClassifier(n_features_to_select=2, max_iter=5).fit(X, y)


def test_deterministic():
    X, y = _noisy_problem(n=80, d=10, k=3)
    a = ShareBoostClassifier(n_features_to_select=4).fit(X, y)
    b = ShareBoostClassifier(n_features_to_select=4).fit(X, y)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_array_equal(a.coef_, b.coef_)


X_OK, Y_OK = _noisy_problem(n=30, d=4, k=3)


@pytest.mark.parametrize(
    "X, y, params, error, match",
    [
        (np.where(np.eye(30, 4) == 1, np.nan, X_OK), Y_OK, {}, ValueError, "NaN"),
        (np.where(np.eye(30, 4) == 1, np.inf, X_OK), Y_OK, {}, ValueError, "infinity"),
        (X_OK[:, 0], Y_OK, {}, ValueError, "2D array"),
        (X_OK, Y_OK[:-1], {}, ValueError, "inconsistent numbers of samples"),
        (X_OK, np.zeros(30), {}, ValueError, "at least 2 classes"),
        (X_OK, Y_OK, {"n_features_to_select": 0}, ValueError, r"n_features_to_select must be in \[1"),
        (X_OK, Y_OK, {"n_features_to_select": 5}, ValueError, "number of candidates=4"),
        (X_OK, Y_OK, {"n_features_to_select": 1.5}, ValueError, r"must be in \(0, 1\]"),
        (X_OK, Y_OK, {"n_features_to_select": "all"}, TypeError, "n_features_to_select must be"),
        (X_OK, Y_OK, {"alpha": -1.0}, ValueError, "alpha"),
        (X_OK, Y_OK, {"alpha": np.inf}, ValueError, "alpha"),
        (X_OK, Y_OK, {"tol": 0.0}, ValueError, "tol"),
        (X_OK, Y_OK, {"tol": 1.0}, ValueError, "tol must be < 1"),
        (X_OK, Y_OK, {"max_iter": 0}, ValueError, "max_iter"),
        (X_OK, Y_OK, {"fit_intercept": "yes"}, TypeError, "fit_intercept"),
        (X_OK, Y_OK, {"callback": 3}, TypeError, "callback"),
        (X_OK, np.linspace(0, 1, 30), {}, ValueError, "Unknown label type"),
        (np.empty((0, 4)), np.empty(0), {}, ValueError, "0 sample"),
    ],
)
def test_bad_input(X, y, params, error, match):
    with pytest.raises(error, match=match):
        ShareBoostClassifier(**params).fit(X, y)


def test_bad_sample_weight():
    with pytest.raises(ValueError, match="sample_weight must be non-negative"):
        ShareBoostClassifier().fit(X_OK, Y_OK, sample_weight=-np.ones(30))
    with pytest.raises(TypeError, match="sample_weight must be real"):
        ShareBoostClassifier().fit(X_OK, Y_OK, sample_weight=1 + 2j)
    with pytest.raises(ValueError, match="sample_weight"):
        ShareBoostClassifier().fit(X_OK, Y_OK, sample_weight=np.full(30, np.inf))
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        ShareBoostClassifier().fit(X_OK, Y_OK, sample_weight=np.ones(3))


@pytest.mark.parametrize("estimator", [ShareBoostClassifier(n_features_to_select=2),
                                       OneVsRestGreedyClassifier(n_features_to_select=2),
                                       MixedNormClassifier()])
def test_weights_leaving_one_class(estimator):
    """Weights zero on all classes but one: an error, not a constant predictor."""
    labels = np.unique(Y_OK)
    with pytest.raises(ValueError, match=r"at least 2 classes with positive sample_weight"):
        estimator.fit(X_OK, Y_OK, sample_weight=(Y_OK == labels[0]).astype(float))
    # two classes left is a valid (if smaller) problem
    keep = (Y_OK != labels[0]).astype(float)
    assert estimator.fit(X_OK, Y_OK, sample_weight=keep).predict(X_OK).shape == (30,)


@pytest.mark.parametrize("scale", [1e307, 5e-324])
def test_extreme_uniform_weights_equal_no_weights(scale):
    """The bare loss (alpha=0, the default before "auto", which scales with the
    weights' sum as scikit-learn's penalties do) is a weighted mean: uniform
    weights of any size change nothing."""
    X, y = _noisy_problem(n=60, d=5, k=3)
    a = ShareBoostClassifier(n_features_to_select=3, alpha=0.0).fit(X, y)
    b = ShareBoostClassifier(n_features_to_select=3, alpha=0.0).fit(
        X, y, sample_weight=np.full(60, scale))
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(a.train_loss_, b.train_loss_, rtol=1e-8)


def test_badly_scaled_features_warn_instead_of_silent_zero_model():
    X, y = _noisy_problem(n=60, d=5, k=3)
    with pytest.warns(ConvergenceWarning, match="line search.*rescale X"):
        ShareBoostClassifier(n_features_to_select=3).fit(X * 1e50, y)


def test_callback_cannot_corrupt_the_model():
    X, y = _noisy_problem(n=60, d=5, k=3)

    def vandal(info):
        info.coef[:] = 123.0

    with pytest.raises(ValueError, match="read-only"):
        ShareBoostClassifier(n_features_to_select=2, callback=vandal).fit(X, y)


@pytest.mark.parametrize("tol", [np.nan, np.inf])
def test_non_finite_tol(tol):
    with pytest.raises(ValueError, match="tol"):
        ShareBoostClassifier(tol=tol).fit(X_OK, Y_OK)


def test_predict_checks_n_features():
    clf = ShareBoostClassifier(n_features_to_select=2).fit(X_OK, Y_OK)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X_OK[:, :3])
    with pytest.raises(ValueError, match="NaN"):
        clf.predict(np.full((2, 4), np.nan))


@pytest.mark.slow
def test_pendigits_accuracy_with_alpha_chosen_on_training_data():
    """Acceptance: pendigits products / 100, no intercept; alpha by 3-fold CV on train only.

    Test error <= 4.5% with 25 features and <= 4.2% with 40.
    """
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    X, y = load_pendigits(return_X_y=True)
    Xt, yt = load_pendigits(subset="test", return_X_y=True)
    products = PairwiseProducts().fit(X / 100)
    X, Xt = products.transform(X / 100), products.transform(Xt / 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        search = GridSearchCV(
            ShareBoostClassifier(n_features_to_select=40, fit_intercept=False),
            {"alpha": [0.0, 1e-6, 1e-5, 1e-4]},
            cv=StratifiedKFold(3, shuffle=True, random_state=0),
            n_jobs=2,
        ).fit(X, y)
    errors = [np.mean(p != yt) for p in search.best_estimator_.staged_predict(Xt)]
    print(f"alpha={search.best_params_['alpha']}: test error {errors[24]:.4f} at 25, "
          f"{errors[39]:.4f} at 40")
    assert errors[24] <= 0.045
    assert errors[39] <= 0.042


def test_pendigits_products_path_keeps_its_first_columns():
    """The refit engine changed (carried BFGS curvature instead of a fresh SciPy
    L-BFGS-B every round); the path it gives must not: the first 10 columns
    the earlier engine selected on pendigits products / 100 without intercept
    (commit b35b172; ``test_matches_reference_pendigits`` checks the first 5
    against the slow reference)."""
    X, y = load_pendigits(return_X_y=True)
    X = PairwiseProducts().fit_transform(X / 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ShareBoostClassifier(n_features_to_select=10, fit_intercept=False,
                                   alpha=0.0).fit(X, y)  # the default before "auto"
    np.testing.assert_array_equal(clf.selected_features_,
                                  [23, 42, 118, 66, 76, 27, 2, 53, 31, 16])


def test_late_rounds_still_refit_when_the_loss_is_small():
    """The refit tolerance is relative to the loss: with an absolute one, late
    rounds on pendigits (loss ~0.02) took zero L-BFGS iterations and left the
    newly selected column at zero."""
    X, y = load_pendigits(return_X_y=True)
    X = PairwiseProducts().fit_transform(X / 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ShareBoostClassifier(n_features_to_select=40, fit_intercept=False).fit(X, y)
    assert np.all(clf.refit_n_iter_ > 0)
    assert np.all(np.abs(clf.coef_[:, clf.selected_features_]).sum(axis=0) > 0)
    assert np.all(np.diff(clf.train_loss_) < 0)


def test_selected_feature_names_from_a_dataframe():
    pd = pytest.importorskip("pandas")
    X, y = _noisy_problem(n=80, d=5, k=3)
    frame = pd.DataFrame(X, columns=[f"col {c}" for c in "abcde"])
    clf = ShareBoostClassifier(n_features_to_select=3, alpha=1e-3).fit(frame, y)
    expected = np.array([f"col {c}" for c in "abcde"], dtype=object)[clf.selected_features_]
    np.testing.assert_array_equal(clf.selected_feature_names_, expected)
    stumps = ShareBoostClassifier(n_features_to_select=3, features="stumps",
                                  alpha=1e-3).fit(frame, y)
    family = stumps.features_
    for name, f, theta in zip(stumps.selected_feature_names_, family.stump_features_,
                              family.thresholds_):
        assert name == f"col {'abcde'[f]} <= {theta:.6g}"
    # an array: x0, x1, ...
    plain = ShareBoostClassifier(n_features_to_select=2, alpha=1e-3).fit(X, y)
    assert list(plain.selected_feature_names_) == [f"x{j}" for j in plain.selected_features_]


def _small_problem():
    """60 samples, 5 features, 3 classes from two signs."""
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


# --- ShareBoost with a custom family that breaks the protocol ----------------


class _Squares(CandidateFeatures):
    def fit(self, X, y=None):
        self._X_fit = np.asarray(X, dtype=float) ** 2
        self.n_features_in_ = self.n_candidates_ = X.shape[1]
        return self

    def best_candidate(self, residual, excluded):
        s = np.abs(self._X_fit.T @ residual).sum(axis=1)
        s[excluded] = -np.inf
        j = int(np.argmax(s))
        return j, float(s[j])

    def training_columns(self, ids):
        return self._X_fit[:, ids]

    def end_scan(self, ids):
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[ids] = True
        self._X_fit = None
        return self

    def transform_candidates(self, X, ids):
        return np.asarray(X, dtype=float)[:, ids] ** 2


class _NegativeId(_Squares):
    def best_candidate(self, residual, excluded):
        return -1, 1.0


class _RepeatedId(_Squares):
    def best_candidate(self, residual, excluded):
        return 0, 1.0


class _HugeId(_Squares):
    def best_candidate(self, residual, excluded):
        return 10**6, 1.0


class _NanColumns(_Squares):
    def training_columns(self, ids):
        return np.full((self._X_fit.shape[0], len(ids)), np.nan)


class _ShortColumns(_Squares):
    def training_columns(self, ids):
        return self._X_fit[:5, ids]


class _FitReturnsNone(_Squares):
    def fit(self, X, y=None):
        super().fit(X)


def test_custom_family_still_works():
    X, y = _small_problem()
    clf = ShareBoostClassifier(n_features_to_select=2, features=_Squares()).fit(X, y)
    assert len(set(clf.selected_features_.tolist())) == 2


@pytest.mark.parametrize("family, error, match", [
    (_NegativeId, ValueError, "outside"),
    (_HugeId, ValueError, "outside"),
    (_RepeatedId, ValueError, "already selected"),
    (_NanColumns, ValueError, "NaN"),
    (_ShortColumns, ValueError, "shape"),
    (_FitReturnsNone, TypeError, "return self"),
])
def test_shareboost_rejects_protocol_violations(family, error, match):
    X, y = _small_problem()
    with pytest.raises(error, match=match):
        ShareBoostClassifier(n_features_to_select=2, features=family()).fit(X, y)


# --- ShareBoost validation_fraction: NaN and impossible splits ---------------


@pytest.mark.parametrize("fraction", [np.nan, 0.001, 0.99])
def test_validation_fraction_errors_name_the_parameter(fraction):
    X, y = _small_problem()
    with pytest.raises(ValueError, match="validation_fraction"):
        ShareBoostClassifier(n_features_to_select=2,
                             validation_fraction=fraction).fit(X, y)


def test_a_path_whose_next_feature_would_stay_at_zero_stops():
    """Two anchors: after a few pieces the next piece's gradient is within the refit
    tolerance, so the refit would leave it at zero. The path stops there with one
    warning (it used to add such pieces, each refit doing nothing)."""
    X, y = load_pendigits(return_X_y=True)
    clf = ShareBoostClassifier(n_features_to_select=8, alpha=0.0,
                               features=AnchorPoints(n_anchors=2, random_state=0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf.fit(X[:2000] / 100, y[:2000])
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 1
    assert re.search(rf"stopped after {clf.n_iter_} of 8 rounds: the candidate the selection "
                     r"rule picks next \(id \d+\) has a gradient of at most \S+ in absolute "
                     r"value, at or below the refit tolerance", messages[0])
    assert 1 <= clf.n_iter_ < 8
    # every round run moved the model: no refit was left with nothing to do
    assert np.all(clf.refit_n_iter_ > 0) and np.all(np.diff(clf.train_loss_) < 0)
    with warnings.catch_warnings():  # a path whose rounds all refit stays quiet about it
        warnings.simplefilter("error", ConvergenceWarning)
        ShareBoostClassifier(n_features_to_select=3, alpha=1e-3).fit(*_noisy_problem(60, 5, 3))


# --- the endgame: nothing left to gain ---------------------------------------


@pytest.mark.parametrize("selection", ["gradient_l1", "best_column"])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_a_column_that_is_zero_on_the_training_rows_is_never_selected(selection,
                                                                      fit_intercept):
    """Eight training rows (a fold of a 5-fold split of 10), CSR, 3 classes: once the
    informative columns are in, every remaining column is zero on these rows, and
    the path stops instead of "selecting" them."""
    rng = np.random.default_rng(0)
    y = np.array([0, 0, 0, 1, 1, 1, 2, 2])
    X = np.zeros((8, 12))
    X[:, 0] = y == 0
    X[:, 5] = (y == 1) + 0.5 * rng.random(8)
    X[:, 9] = rng.random(8)
    X = sp.csr_matrix(X)
    clf = ShareBoostClassifier(n_features_to_select=8, alpha=1e-2, selection=selection,
                               fit_intercept=fit_intercept)
    with pytest.warns(ConvergenceWarning, match=r"ShareBoost stopped after 3 of 8 rounds"):
        clf.fit(X, y)
    assert clf.n_iter_ == 3 and sorted(clf.selected_features_) == [0, 5, 9]
    assert len(list(clf.staged_predict(X))) == 3 and clf.coef_.shape == (3, 12)


def test_a_path_stopped_before_its_first_round_is_the_intercept_model():
    """Every column zero on the training rows: no round, the intercept-only model."""
    X, y = np.zeros((9, 4)), np.array([0, 0, 0, 0, 1, 1, 2, 2, 2])
    with pytest.warns(ConvergenceWarning, match="stopped after 0 of 2 rounds"):
        clf = ShareBoostClassifier(n_features_to_select=2, alpha=1e-3).fit(X, y)
    assert clf.n_iter_ == 0 and clf.selected_features_.shape == (0,)
    np.testing.assert_array_equal(clf.coef_, np.zeros((3, 4)))
    # the intercept minimises the loss of eq. (3) alone: its gradient sums to ~0
    from mcsparse.loss import MulticlassLogisticLoss
    scores = clf.decision_function(X)
    np.testing.assert_allclose(scores, np.tile(clf.intercept_, (9, 1)))
    value, grad = MulticlassLogisticLoss().loss_gradient(scores, np.searchsorted([0, 1, 2], y))
    assert np.abs(grad.sum(axis=0)).max() <= 1e-4 * value
    np.testing.assert_array_equal(clf.predict(X), np.zeros(9, dtype=int))
    assert list(clf.staged_predict(X)) == []
    with pytest.warns(ConvergenceWarning, match="stopped after 0 of 2 rounds"):
        ovr = OneVsRestGreedyClassifier(n_features_to_select=2, alpha=1e-3).fit(X, y)
    np.testing.assert_array_equal(ovr.selected_features_, np.full((3, 2), -1))
    np.testing.assert_array_equal(ovr.predict(X), np.zeros(9, dtype=int))


# --- what the messages say -------------------------------------------------------


def test_a_refit_stopped_at_max_iter_quotes_its_final_gradient():
    X, y = _noisy_problem(n=150, d=8, k=3)
    with pytest.warns(ConvergenceWarning) as caught:
        clf = ShareBoostClassifier(n_features_to_select=4, max_iter=2, alpha=1e-3).fit(X, y)
    message = next(str(w.message) for w in caught if "max_iter=2" in str(w.message))
    found = re.search(r"The farthest, round (\d+), ended with its largest gradient entry "
                      r"(\S+), (\S+) times the tolerance \(tol times the objective, (\S+)\)",
                      message)
    assert found, message
    t, g, ratio, gtol = int(found[1]), float(found[2]), float(found[3]), float(found[4])
    assert 0 <= t <= clf.n_iter_ and ratio > 1
    np.testing.assert_allclose(g / gtol, ratio, rtol=1e-2)


def test_early_stopping_says_which_round_was_best(capsys):
    X, y = _noisy_problem(n=300, d=8, k=3, seed=1)
    clf = ShareBoostClassifier(n_features_to_select=8, validation_fraction=0.3,
                               n_iter_no_change=2, random_state=0, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    best = clf.best_iteration_
    assert re.search(rf"the best round is {best} \(validation loss "
                     rf"{clf.validation_scores_[best - 1]:.6g}, error \S+%\), the model "
                     rf"keeps its {best} features", out), out
    assert clf.n_iter_ == best
