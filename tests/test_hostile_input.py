"""Hostile input across the public API, as tables.

Every public estimator (the classes test_common.py discovers) against each
bad-input case (X, y and hyper-parameters at fit and predict time), and
every public function against each bad array. Hostile cases that concern one
module live beside that module's other tests: test_mixed_norm.py (huge
values), test_families.py (the family protocol: excluded ids, names),
test_shareboost.py (families that break the protocol, validation_fraction),
test_datasets.py (unreadable archives), test_conv_max.py (images of the
wrong shape); the Cython kernels' fuzzing is in test_fuzz.py.
"""

import numpy as np
import pytest

from mcsparse.estimators import (
    MixedNormClassifier,
    ShareBoostClassifier,
    ShareBoostClassifierCV,
    mixed_norm_classifier_path,
)
from mcsparse.features import DecisionStumps, RawFeatures


# =============================================================================
# The hostile-input table (issue 7, item 2): every case x every public
# estimator (the classes test_common.py discovers) and every public function.
# Bad input must raise a ValueError or TypeError whose message names the
# argument or the problem; acceptable-but-odd input (Fortran order, strided
# views, integer, bool or numeric-object dtypes, sparse formats other than
# CSR/CSC where sparse input is accepted) must give the same result as the
# C-contiguous float64 input.
#
# Labels at predict time that fit never saw: like scikit-learn, ``score(X, y)``
# is plain accuracy and counts them as errors, without raising (a test set may
# well hold a class absent from the training set).
# =============================================================================

import scipy.sparse as sp  # noqa: E402
from sklearn.base import clone, is_classifier  # noqa: E402
from test_common import NOT_CHECKED, public_estimator_classes  # noqa: E402

from mcsparse import (  # noqa: E402
    ConvMKLClassifier,
    JointBoostClassifier,
    OneVsRestGreedyClassifier,
    SMSDMKLClassifier,
    UFOMKLClassifier,
)
from mcsparse.features import (  # noqa: E402
    AnchorPoints,
    ConvMaxTemplates,
    PairwiseProducts,
    anchor_group_scores,
    conv_max_features,
    conv_max_selected,
    gaussian_masks,
    learn_templates,
    masks_from_factors,
)
from mcsparse.kernels import (  # noqa: E402
    conv_kernel_scale,
    gaussian_kernel_stack,
    tail_sums,
)
from mcsparse.loss import multiclass_logistic_loss  # noqa: E402
from mcsparse.solvers import jointboost, mixed_norm_path, shareboost_path  # noqa: E402
from mcsparse.solvers import default_q, link_coefficients, multiclass_mkl  # noqa: E402

# Small, fast instances, one list per public class.
HOSTILE_INSTANCES = {
    ShareBoostClassifier: [
        ShareBoostClassifier(n_features_to_select=2),
        ShareBoostClassifier(n_features_to_select=2, features="stumps"),
        ShareBoostClassifier(n_features_to_select=1, features=AnchorPoints(
            n_anchors=2, n_radii=2, random_state=0)),
    ],
    ShareBoostClassifierCV: [ShareBoostClassifierCV(alphas=2, max_features=2, cv=2)],
    OneVsRestGreedyClassifier: [OneVsRestGreedyClassifier(n_features_to_select=2)],
    JointBoostClassifier: [JointBoostClassifier(n_estimators=3)],
    MixedNormClassifier: [MixedNormClassifier(max_iter=50)],
    UFOMKLClassifier: [UFOMKLClassifier(max_iter=5, random_state=0)],
    ConvMKLClassifier: [ConvMKLClassifier(max_iter=5, random_state=0)],
    SMSDMKLClassifier: [SMSDMKLClassifier(max_iter=5, random_state=0)],
    PairwiseProducts: [PairwiseProducts()],
    RawFeatures: [RawFeatures()],
    DecisionStumps: [DecisionStumps()],
    AnchorPoints: [AnchorPoints(n_anchors=2, n_radii=2, random_state=0)],
    ConvMaxTemplates: [ConvMaxTemplates(n_templates=2, patch_size=2, n_masks=1,
                                        n_patches=50, random_state=0)],
}
HOSTILE_ESTIMATORS = [e for es in HOSTILE_INSTANCES.values() for e in es]


def _id(est):
    name = type(est).__name__
    features = getattr(est, "features", "raw")
    return name if features == "raw" else f"{name}-{type(features).__name__ if not isinstance(features, str) else features}"  # noqa: E501


def test_hostile_table_covers_every_public_estimator():
    expected = set(public_estimator_classes()) - set(NOT_CHECKED)
    assert set(HOSTILE_INSTANCES) == expected


def _table_data(est):
    rng = np.random.RandomState(0)
    y = np.arange(24) % 3
    if isinstance(est, ConvMaxTemplates):  # 4 x 4 images
        return rng.rand(24, 16), y
    return rng.randn(24, 4), y


def _fit(est, X, y):
    est = clone(est)
    return est.fit(X, y) if is_classifier(est) else est.fit(X)


def _output(est, X):
    if hasattr(est, "predict"):
        return est.predict(X)
    if hasattr(est, "transform"):
        out = est.transform(X)
    else:  # candidate families: their columns on new data
        out = est.transform_candidates(X, [0, 1])
    return out.toarray() if sp.issparse(out) else np.asarray(out)


def _assert_same(a, b):
    if a.dtype.kind in "fc":
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_array_equal(a, b)


def _with(X, value):
    X = X.copy()
    X[1, 2] = value
    return X


# (case, transform of X, error, match): bad X at fit (and, below, at predict).
BAD_X = [
    ("nan", lambda X: _with(X, np.nan), ValueError, "NaN"),
    ("inf", lambda X: _with(X, np.inf), ValueError, "infinity"),
    ("1d", lambda X: X[:, 0], ValueError, "2D array"),
    ("3d", lambda X: X[:, :, None], ValueError, "dim 3"),
    ("object_strings", lambda X: np.full(X.shape, "a", dtype=object), ValueError,
     "could not convert"),
    ("complex", lambda X: X + 1j, ValueError, "Complex"),
    ("no_features", lambda X: X[:, :0], ValueError, "0 feature"),
]


@pytest.mark.parametrize("case, bad, error, match", BAD_X, ids=[c[0] for c in BAD_X])
@pytest.mark.parametrize("est", HOSTILE_ESTIMATORS, ids=_id)
def test_table_bad_X_at_fit(est, case, bad, error, match):
    X, y = _table_data(est)
    with pytest.raises(error, match=match):
        _fit(est, bad(X), y)


@pytest.mark.parametrize("est", HOSTILE_ESTIMATORS, ids=_id)
def test_table_empty_X_at_fit(est):
    X, y = _table_data(est)
    with pytest.raises(ValueError, match="0 sample"):
        _fit(est, X[:0], y[:0])


BAD_X_PREDICT = BAD_X[:-1] + [
    ("n_features_mismatch", lambda X: X[:, :-1], ValueError, "features"),
    ("no_samples", lambda X: X[:0], ValueError, "0 sample"),
]


@pytest.mark.parametrize("case, bad, error, match", BAD_X_PREDICT,
                         ids=[c[0] for c in BAD_X_PREDICT])
@pytest.mark.parametrize("est", HOSTILE_ESTIMATORS, ids=_id)
def test_table_bad_X_at_predict(est, case, bad, error, match):
    X, y = _table_data(est)
    fitted = _fit(est, X, y)
    with pytest.raises(error, match=match):
        _output(fitted, bad(X))


CLASSIFIERS = [e for e in HOSTILE_ESTIMATORS if is_classifier(e)]

BAD_Y = [
    ("single_class", lambda y: np.zeros_like(y), ValueError, "class"),
    ("wrong_length", lambda y: y[:-1], ValueError, "inconsistent numbers of samples"),
    ("continuous", lambda y: y + np.linspace(0.1, 0.9, y.size), ValueError,
     "Unknown label type"),
    ("nan", lambda y: np.where(y == 0, np.nan, y), ValueError, "NaN"),
]


@pytest.mark.parametrize("case, bad, error, match", BAD_Y, ids=[c[0] for c in BAD_Y])
@pytest.mark.parametrize("est", CLASSIFIERS, ids=_id)
def test_table_bad_y_at_fit(est, case, bad, error, match):
    X, y = _table_data(est)
    with pytest.raises(error, match=match):
        _fit(est, X, bad(y))


@pytest.mark.parametrize("est", CLASSIFIERS, ids=_id)
def test_table_unseen_labels_in_score_count_as_errors(est):
    # scikit-learn's choice: score is accuracy_score, no error for new labels
    X, y = _table_data(est)
    fitted = _fit(est, X, y)
    assert fitted.score(X, y + 10) == 0.0
    y_mixed = np.where(np.arange(y.size) % 2 == 0, y, 99)
    expected = np.mean(fitted.predict(X) == y_mixed)
    assert fitted.score(X, y_mixed) == pytest.approx(expected)


# (case, transform of X): accepted, same result as the C-ordered float64 data.
SAME_X = [
    ("fortran", np.asfortranarray),
    ("strided", lambda X: np.repeat(X, 2, axis=1)[:, ::2]),
    ("object_numbers", lambda X: X.astype(object)),
]


@pytest.mark.parametrize("case, odd", SAME_X, ids=[c[0] for c in SAME_X])
@pytest.mark.parametrize("est", HOSTILE_ESTIMATORS, ids=_id)
def test_table_odd_layout_gives_same_result(est, case, odd):
    X, y = _table_data(est)
    expected = _output(_fit(est, X, y), X)
    _assert_same(_output(_fit(est, odd(X), y), odd(X)), expected)
    _assert_same(_output(_fit(est, X, y), odd(X)), expected)


@pytest.mark.parametrize("case", ["int", "bool"])
@pytest.mark.parametrize("est", HOSTILE_ESTIMATORS, ids=_id)
def test_table_int_and_bool_X_same_as_float(est, case):
    X, y = _table_data(est)
    if case == "int":
        X_odd = np.round(X * 3).astype(np.int64)
    else:
        X_odd = X > np.median(X)
    X_float = X_odd.astype(np.float64)
    _assert_same(_output(_fit(est, X_odd, y), X_odd),
                 _output(_fit(est, X_float, y), X_float))


SPARSE_FORMATS = ["coo", "lil", "dok", "bsr", "dia", "csr_array"]


def _sparse(X, fmt):
    if fmt == "csr_array":
        return sp.csr_array(X)
    return getattr(sp, f"{fmt}_matrix")(X)


@pytest.mark.parametrize("fmt", SPARSE_FORMATS)
@pytest.mark.parametrize("est", HOSTILE_ESTIMATORS, ids=_id)
def test_table_other_sparse_formats(est, fmt):
    X, y = _table_data(est)
    X_sparse = _sparse(X, fmt)
    if est.__sklearn_tags__().input_tags.sparse:
        expected = _output(_fit(est, X, y), X)
        _assert_same(_output(_fit(est, X_sparse, y), X_sparse), expected)
        _assert_same(_output(_fit(est, X, y), X_sparse), expected)
    else:
        with pytest.raises(TypeError, match="dense data is required"):
            _fit(est, X_sparse, y)
        with pytest.raises(TypeError, match="dense data is required"):
            _output(_fit(est, X, y), X_sparse)


# Hyper-parameters: negative, zero, NaN, infinite, absurd, wrong type.
_COMMON_GREEDY = [
    ("n_features_to_select", 0, ValueError), ("n_features_to_select", -1, ValueError),
    ("n_features_to_select", 2.5, ValueError), ("n_features_to_select", 10**12, ValueError),
    ("n_features_to_select", np.nan, ValueError), ("n_features_to_select", "abc", TypeError),
    ("n_features_to_select", True, TypeError),
    ("alpha", -1.0, ValueError), ("alpha", np.nan, ValueError), ("alpha", np.inf, ValueError),
    ("alpha", "abc", TypeError),
    ("tol", 0.0, ValueError), ("tol", -1.0, ValueError), ("tol", np.nan, ValueError),
    ("max_iter", 0, ValueError), ("max_iter", 2.5, TypeError), ("max_iter", None, TypeError),
    ("fit_intercept", 1, TypeError), ("fit_intercept", "yes", TypeError),
]
_COMMON_MKL = [
    ("C", 0.0, ValueError), ("C", -1.0, ValueError), ("C", np.nan, ValueError),
    ("C", np.inf, ValueError), ("C", 1e300, ValueError), ("C", "abc", TypeError),
    ("C", True, TypeError),
    ("q", 1.0, ValueError), ("q", -1.0, ValueError), ("q", np.nan, ValueError),
    ("q", "abc", TypeError),
    ("max_iter", 0, ValueError), ("max_iter", 2.5, TypeError),
    ("tol", -1.0, ValueError), ("tol", np.nan, ValueError),
    ("n_iter_no_change", 0, ValueError), ("n_iter_no_change", 2.5, TypeError),
    ("bandwidths", [0.0], ValueError), ("bandwidths", [-1.0], ValueError),
    ("bandwidths", [np.nan], ValueError), ("bandwidths", [], ValueError),
    ("bandwidths", ["a"], TypeError), ("bandwidths", "median", ValueError),
]
BAD_PARAMS = {
    ShareBoostClassifier: _COMMON_GREEDY + [
        ("beta", 0.0, ValueError), ("beta", np.inf, ValueError),
        ("selection", "abc", ValueError), ("penalty", "abc", ValueError),
        ("n_iter_no_change", 0, ValueError), ("warm_start", 1, TypeError),
    ],
    ShareBoostClassifierCV: [
        ("alphas", 0, ValueError), ("alphas", -3, ValueError), ("alphas", [], ValueError),
        ("alphas", [1e-3, -1.0], ValueError), ("alphas", [np.nan], ValueError),
        ("alphas", [np.inf], ValueError), ("alphas", "abc", TypeError),
        ("alphas", [[1e-3]], ValueError), ("alphas", True, TypeError),
        ("max_features", 0, ValueError), ("max_features", 2.5, ValueError),
        ("max_features", 10**12, ValueError), ("max_features", "abc", TypeError),
        ("rule", "abc", ValueError), ("rule", None, ValueError),
        ("cv", 1, ValueError), ("cv", "abc", ValueError),
        ("scoring", "abc", ValueError), ("n_jobs", 1.5, TypeError),
        ("tol", 0.0, ValueError), ("max_iter", 0, ValueError),
        ("selection", "abc", ValueError), ("fit_intercept", 1, TypeError),
    ],
    OneVsRestGreedyClassifier: _COMMON_GREEDY,
    JointBoostClassifier: [
        ("n_estimators", 0, ValueError), ("n_estimators", -1, ValueError),
        ("n_estimators", 2.5, TypeError), ("n_estimators", np.nan, TypeError),
        ("n_estimators", True, TypeError), ("subset_search", "abc", ValueError),
    ],
    MixedNormClassifier: [
        ("alpha", 0.0, ValueError), ("alpha", -1.0, ValueError), ("alpha", np.nan, ValueError),
        ("alpha", np.inf, ValueError), ("alpha", "abc", TypeError),
        ("tol", 0.0, ValueError), ("max_iter", 0, ValueError), ("max_iter", 2.5, TypeError),
        ("penalty", "abc", ValueError), ("debias", 1, TypeError),
        ("fit_intercept", None, TypeError),
    ],
    UFOMKLClassifier: _COMMON_MKL,
    ConvMKLClassifier: _COMMON_MKL + [
        ("zeta", -1, ValueError), ("zeta", 10**9, ValueError), ("zeta", 2.5, TypeError),
        ("tail_sum_floor", 0.0, ValueError), ("tail_sum_floor", 2.0, ValueError),
        ("tail_sum_floor", np.nan, ValueError), ("tail_sum_floor", "abc", TypeError),
    ],
    SMSDMKLClassifier: _COMMON_MKL + [
        ("beta", -1.0, ValueError), ("beta", 1e300, ValueError), ("beta", np.nan, ValueError),
        ("beta", None, TypeError), ("zeta", -1, ValueError), ("zeta", 2.5, TypeError),
    ],
    PairwiseProducts: [],  # no hyper-parameters
    RawFeatures: [("groups", [0, 1], ValueError), ("groups", 3, ValueError),
                  ("groups", [0, 1, np.nan, 2], ValueError)],
    DecisionStumps: [],  # no hyper-parameters
    AnchorPoints: [
        ("n_anchors", 0, ValueError), ("n_anchors", -1, ValueError),
        ("n_anchors", 10**9, ValueError), ("n_anchors", 2.5, TypeError),
        ("n_anchors", True, TypeError), ("n_radii", 0, ValueError),
        ("n_radii", True, TypeError), ("n_radii", np.nan, TypeError),
        ("quantile_range", (0.5, 0.1), ValueError), ("quantile_range", (0.0, 0.5), ValueError),
        ("quantile_range", (np.nan, 0.5), ValueError), ("quantile_range", 0.5, ValueError),
        ("n_jobs", 0, ValueError), ("n_jobs", 1.5, TypeError),
    ],
    ConvMaxTemplates: [
        ("image_shape", (3, 5), ValueError), ("image_shape", (0, 16), ValueError),
        ("image_shape", (4, 4, 1), ValueError), ("image_shape", 16, TypeError),
        ("image_shape", (4.0, 4.0), TypeError),
        ("n_templates", 0, ValueError), ("n_templates", 10**9, ValueError),
        ("n_templates", 2.5, TypeError),
        ("patch_size", 1, ValueError), ("patch_size", 5, ValueError),
        ("patch_size", True, TypeError),
        ("n_masks", 0, ValueError), ("n_masks", 3, ValueError), ("n_masks", np.nan, TypeError),
        ("mask_sigma", -1.0, ValueError), ("mask_sigma", np.nan, ValueError),
        ("training_store", "float16", ValueError), ("training_store", None, ValueError),
        ("mask_sigma", "abc", TypeError),
        ("response", "normalised", ValueError), ("response", 1, ValueError),
        ("damping", -1.0, ValueError), ("damping", np.inf, ValueError),
        ("damping", "x", TypeError),
        ("n_patches", 0, ValueError), ("n_patches", 2.5, TypeError),
        ("prediction", "fast", ValueError), ("prediction", None, ValueError),
    ],
}
_MATCH_ALIASES = {"mask_sigma": "sigma", "n_masks": "n_masks|mask",
                  "image_shape": "image_shape|patch_size|square",
                  "n_templates": "n_templates", "groups": "groups"}
BAD_PARAM_CASES = [
    (cls, name, value, error)
    for cls, cases in BAD_PARAMS.items() for name, value, error in cases
]


def test_bad_params_table_covers_every_estimator():
    assert set(BAD_PARAMS) == set(HOSTILE_INSTANCES)


@pytest.mark.parametrize(
    "cls, name, value, error", BAD_PARAM_CASES,
    ids=[f"{c.__name__}-{n}={v!r}" for c, n, v, _ in BAD_PARAM_CASES])
def test_table_bad_hyper_parameters(cls, name, value, error):
    est = clone(HOSTILE_INSTANCES[cls][0]).set_params(**{name: value})
    X, y = _table_data(est)
    with pytest.raises(error, match=_MATCH_ALIASES.get(name, name)):
        _fit(est, X, y)


# =============================================================================
# Public functions: every array argument x the generic cases.
# =============================================================================


def _function_calls():
    rng = np.random.RandomState(0)
    n = 12
    X = rng.randn(n, 3)
    y = np.arange(n) % 3
    gram = gaussian_kernel_stack(X, bandwidths=[0.5, 2.0])
    order = np.array([rng.permutation(n)[:6] for _ in range(2)])
    return {
        "anchor_group_scores": (anchor_group_scores, dict(
            X1=rng.randn(n, 3), residual=rng.randn(n, 2), order=order,
            cuts=np.array([[2, 4, 6], [1, 3, 6]]))),
        "conv_max_features": (conv_max_features, dict(
            images=rng.rand(4, 6, 6), templates=rng.randn(2, 3, 3),
            mask_rows=rng.rand(2, 4), mask_cols=rng.rand(2, 4))),
        "conv_max_selected": (conv_max_selected, dict(
            images=rng.rand(4, 6, 6), templates=rng.randn(2, 3, 3),
            mask_rows=rng.rand(2, 4), mask_cols=rng.rand(2, 4), ids=np.array([0, 7, 3]))),
        "masks_from_factors": (masks_from_factors, dict(
            mask_rows=rng.rand(2, 4), mask_cols=rng.rand(2, 4))),
        "learn_templates": (learn_templates, dict(
            images=rng.rand(10, 6, 6), n_templates=2, patch_size=3, n_patches=50,
            random_state=0)),
        "gaussian_kernel_stack": (gaussian_kernel_stack, dict(
            X=X, Y=X[:4], bandwidths=np.array([0.5, 2.0]))),
        "tail_sums": (tail_sums, dict(gram_stack=gram, zeta=2)),
        "conv_kernel_scale": (conv_kernel_scale, dict(
            tail_sums=np.array([1.0, 2.0]), traces=np.array([3.0, 4.0]))),
        "link_coefficients": (link_coefficients, dict(
            theta_sq=np.array([1.0, 4.0]), penalty=np.array([0.1, 0.1]), q=2.0)),
        "multiclass_mkl": (multiclass_mkl, dict(gram=gram, y=y, max_iter=3,
                                                random_state=0)),
        "multiclass_logistic_loss": (multiclass_logistic_loss, dict(
            scores=rng.randn(n, 3), y=y, sample_weight=rng.rand(n))),
        "mixed_norm_classifier_path": (mixed_norm_classifier_path, dict(
            X=X, y=y, n_alphas=2)),
        "shareboost_path": (shareboost_path, dict(
            X=X, y=y, n_classes=3, n_rounds=2, sample_weight=rng.rand(n))),
        "jointboost": (jointboost, dict(X=X, y=y, n_classes=3, n_estimators=2)),
        "mixed_norm_path": (mixed_norm_path, dict(
            X=X, y=y, n_classes=3, n_lambdas=2, sample_weight=rng.rand(n))),
    }


_CALLS = _function_calls()
_ARRAY_ARGS = [(f, a) for f, (_, kw) in _CALLS.items() for a, v in kw.items()
               if isinstance(v, np.ndarray)]

# Integer labels / indices: float variants of them do not apply.
_INDEX_ARGS = {("anchor_group_scores", "order"), ("anchor_group_scores", "cuts"),
               ("multiclass_mkl", "y"), ("multiclass_logistic_loss", "y"),
               ("mixed_norm_classifier_path", "y"), ("shareboost_path", "y"),
               ("jointboost", "y"), ("mixed_norm_path", "y")}


def _bad_variants(v):
    """(case, bad value) pairs for an array argument."""
    out = [("object_strings", np.full(v.shape, "a", dtype=object)),
           ("extra_dim", v[..., None])]
    if v.ndim >= 2:
        out.append(("missing_dim", v[0]))
    if v.dtype.kind == "f":
        out += [("nan", _flat_with(v, np.nan)), ("inf", _flat_with(v, np.inf)),
                ("complex", v + 1j)]
    return out


def _flat_with(v, value):
    v = v.copy()
    v.flat[0] = value
    return v


# documented exceptions to "bad variant -> error"
_BAD_OK = {
    # a column y is raveled with a DataConversionWarning, as in scikit-learn
    ("mixed_norm_classifier_path", "y", "extra_dim"),
}
_BAD_CASES = [(f, a, case) for f, a in _ARRAY_ARGS
              for case, _ in _bad_variants(_CALLS[f][1][a])
              if (f, a, case) not in _BAD_OK]


def _call(f, arg=None, value=None):
    func, kw = _CALLS[f]
    kw = dict(kw)
    if arg is not None:
        kw[arg] = value
    return func(**kw)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.DataConversionWarning")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("f, arg, case", _BAD_CASES,
                         ids=[f"{f}-{a}-{c}" for f, a, c in _BAD_CASES])
def test_functions_bad_arrays(f, arg, case):
    value = dict(_bad_variants(_CALLS[f][1][arg]))[case]
    with pytest.raises((ValueError, TypeError)) as info:
        _call(f, arg, value)
    msg = str(info.value)
    named = {"nan": "NaN", "inf": "infinity|NaN", "complex": "[Cc]omplex|real",
             "object_strings": "convert|real|integer|dtype",
             "extra_dim": "dim|shape|1-D|2-D|3-D|1d", "missing_dim": "dim|shape|1-D|2-D|3-D|2D"}
    import re
    assert re.search(arg, msg) or re.search(named[case], msg), msg


def _summary(result):
    if isinstance(result, list):  # mixed_norm_classifier_path: fitted models
        return [np.asarray(a) for m in result for a in (m.coef_, m.intercept_)]
    if isinstance(result, tuple):
        return [np.asarray(r, dtype=float) for r in result if not isinstance(r, str)]
    if isinstance(result, np.ndarray):
        return [result]
    return [np.asarray(getattr(result, k)) for k in vars(result)
            if k not in ("fit_time", "times", "elapsed")
            and isinstance(getattr(result, k), (np.ndarray, float, int))]


def _same_variants(v):
    out = [("fortran", np.asfortranarray(v), v),
           ("strided", np.repeat(v, 2, axis=-1)[..., ::2], v)]
    if v.dtype.kind == "f":
        out.append(("int", np.round(v * 4).astype(np.int64), np.round(v * 4)))
    return out


_SAME_SKIP = {
    # integer pixel values make every patch or template a different problem
    ("learn_templates", "images", "int"),
    ("link_coefficients", "penalty", "int"),  # 0 penalties: fine, but trivial
}
_SAME_CASES = [(f, a, case) for f, a in _ARRAY_ARGS
               for case, _, _ in _same_variants(_CALLS[f][1][a])
               if (f, a, case) not in _SAME_SKIP]


# Low-level entry points that take float32/float64 only: integers are refused
# with a TypeError (no silent copy of a large Gram stack or score matrix).
_INT_REFUSED = {("multiclass_mkl", "gram"), ("multiclass_logistic_loss", "scores")}


@pytest.mark.parametrize("f, arg, case", _SAME_CASES,
                         ids=[f"{f}-{a}-{c}" for f, a, c in _SAME_CASES])
def test_functions_odd_layout_same_result(f, arg, case):
    if (f, arg) in _INT_REFUSED and case == "int":
        with pytest.raises(TypeError, match=f"{arg} must be.*float64"):
            _call(f, arg, np.round(_CALLS[f][1][arg] * 4).astype(np.int64))
        return
    _, odd, plain = next(v for v in _same_variants(_CALLS[f][1][arg]) if v[0] == case)
    for a, b in zip(_summary(_call(f, arg, odd)), _summary(_call(f, arg, plain))):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("f, kwargs, error, match", [
    ("conv_max_features", {"templates": np.ones((1, 7, 7))}, ValueError, "larger than"),
    ("conv_max_features", {"images": np.ones((4, 36))}, ValueError, "3-D"),
    ("conv_max_features", {"mask_rows": np.ones((2, 5))}, ValueError, "mask_rows"),
    ("conv_max_features", {"mask_cols": -np.ones((2, 4))}, ValueError, "mask_cols"),
    ("conv_max_features", {"n_jobs": 0}, ValueError, "n_jobs"),
    ("conv_max_features", {"chunk_size": 0}, ValueError, "chunk_size"),
    ("conv_max_features", {"response": "NCC"}, ValueError, "response"),
    ("conv_max_features", {"response": "ncc", "damping": -1.0}, ValueError, "damping"),
    ("conv_max_selected", {"ids": np.array([0, 8])}, ValueError, "candidate ids"),
    ("conv_max_selected", {"ids": np.array([-1])}, ValueError, "candidate ids"),
    ("conv_max_selected", {"ids": np.array([0.5])}, TypeError, "candidate ids"),
    ("conv_max_selected", {"templates": np.ones((1, 7, 7))}, ValueError, "larger than"),
    ("conv_max_selected", {"mask_cols": -np.ones((2, 4))}, ValueError, "mask_cols"),
    ("conv_max_selected", {"response": "NCC"}, ValueError, "response"),
    ("conv_max_selected", {"images": np.full((4, 6, 6), np.nan)}, ValueError, "NaN"),
    ("learn_templates", {"patch_size": 7}, ValueError, "patch_size"),
    ("learn_templates", {"n_templates": 0}, ValueError, "n_templates"),
    ("learn_templates", {"n_patches": 2.5}, TypeError, "n_patches"),
    ("learn_templates", {"images": np.zeros((0, 6, 6))}, ValueError, "empty"),
    ("anchor_group_scores", {"order": np.array([[0, 1, 2, 3, 4, 99]] * 2)}, ValueError,
     "order"),
    ("anchor_group_scores", {"order": np.array([[0, 0, 2, 3, 4, 5]] * 2)}, ValueError,
     "order"),
    ("anchor_group_scores", {"cuts": np.array([[2, 4, 7], [1, 3, 6]])}, ValueError, "cuts"),
    ("anchor_group_scores", {"cuts": np.array([[4, 2, 6], [1, 3, 6]])}, ValueError, "cuts"),
    ("anchor_group_scores", {"residual": np.ones((5, 2))}, ValueError, "residual"),
    ("anchor_group_scores", {"n_jobs": 0}, ValueError, "n_jobs"),
    ("gaussian_kernel_stack", {"Y": np.ones((4, 2))}, ValueError, "features|columns"),
    ("gaussian_kernel_stack", {"bandwidths": np.array([0.0])}, ValueError, "bandwidths"),
    ("gaussian_kernel_stack", {"working_memory": -1}, ValueError, "working_memory"),
    ("tail_sums", {"zeta": 10**9}, ValueError, "zeta"),
    ("tail_sums", {"zeta": -1}, ValueError, "zeta"),
    ("tail_sums", {"zeta": 2.5}, TypeError, "zeta"),
    ("tail_sums", {"method": "abc"}, ValueError, "method"),
    ("tail_sums", {"gram_stack": np.ones((2, 3, 4))}, ValueError, "gram_stack"),
    ("conv_kernel_scale", {"traces": np.array([3.0, 0.0])}, ValueError, "traces"),
    ("conv_kernel_scale", {"traces": np.array([3.0])}, ValueError, "same shape"),
    ("conv_kernel_scale", {"tail_sum_floor": 0.0}, ValueError, "tail_sum_floor"),
    ("link_coefficients", {"q": 1.0}, ValueError, "q"),
    ("link_coefficients", {"scale": 0.0}, ValueError, "scale"),
    ("link_coefficients", {"theta_sq": np.array([-1.0, 4.0])}, ValueError, "theta_sq"),
    ("link_coefficients", {"penalty": np.array([0.1, 0.1, 0.1])}, ValueError, "penalty"),
    ("multiclass_mkl", {"y": np.zeros(12, int)}, ValueError, "class"),
    ("multiclass_mkl", {"rows": np.array([0, 1, 99])}, ValueError, "rows"),
    ("multiclass_mkl", {"gram": np.random.RandomState(0).randn(2, 12, 12)}, ValueError,
     "symmetric"),
    ("multiclass_mkl", {"C": 0.0}, ValueError, "C"),
    ("multiclass_logistic_loss", {"y": np.arange(12) % 4}, ValueError, "y"),
    ("multiclass_logistic_loss", {"y": np.arange(12) % 3 - 1}, ValueError, "y"),
    ("multiclass_logistic_loss", {"y": np.arange(12) * 0.5}, TypeError, "y"),
    ("multiclass_logistic_loss", {"sample_weight": -np.ones(12)}, ValueError,
     "sample_weight"),
    ("mixed_norm_classifier_path", {"n_alphas": 0}, ValueError, "n_alphas"),
    ("mixed_norm_classifier_path", {"y": np.zeros(12)}, ValueError, "class"),
    ("shareboost_path", {"y": np.arange(12) % 3 + 1}, ValueError, "y must hold class"),
    ("shareboost_path", {"y": np.arange(12) * 0.5}, TypeError, "y must hold integer"),
    ("shareboost_path", {"n_classes": 1}, ValueError, "n_classes"),
    ("jointboost", {"y": np.arange(12) % 3 - 1}, ValueError, "y must hold class"),
    ("jointboost", {"y": np.arange(6) % 3}, ValueError, "y must have shape"),
    ("mixed_norm_path", {"y": np.arange(12) % 4}, ValueError, "y must hold class"),
    ("mixed_norm_path", {"sample_weight": -np.ones(12)}, ValueError, "sample_weight"),
])
def test_functions_bad_arguments(f, kwargs, error, match):
    func, kw = _CALLS[f]
    with pytest.raises(error, match=match):
        func(**{**kw, **kwargs})


@pytest.mark.parametrize("n_classes, error", [(1, ValueError), (0, ValueError),
                                              (np.nan, TypeError), ("a", TypeError)])
def test_default_q_bad_n_classes(n_classes, error):
    with pytest.raises(error, match="n_classes"):
        default_q(n_classes)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"shape": (0, 3)}, ValueError, "shape"),
    ({"shape": (4, 4), "n_masks": 3}, ValueError, "n_masks"),
    ({"shape": (4, 4), "n_masks": 10**12}, ValueError, "sigma"),
    ({"shape": (4, 4), "sigma": -1.0}, ValueError, "sigma"),
    ({"shape": (4, 4), "sigma": "a"}, TypeError, "sigma"),
])
def test_gaussian_masks_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        gaussian_masks(**kwargs)
