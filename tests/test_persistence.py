"""Persistence: pickle and joblib round trips keep every fitted model exactly.

For every public estimator and transformer (the ``BaseEstimator`` classes in the
``__all__`` of ``mcsparse`` and ``mcsparse.features``; issue 7, item 6): fit on
tiny data, round trip through ``pickle`` (every protocol from 2) and
``joblib.dump``/``joblib.load`` (plain, compressed, and memory-mapped read-only),
then check that every attribute (fitted or private) and every output
(``predict``, ``decision_function``, ``predict_proba``, ``transform``, the
staged path; a candidate family's scan) is bitwise identical.
"""

import copy
import functools
import pickle

import joblib
import numpy as np
import pytest
import scipy.sparse as sp
from public_api import public_estimator_classes
from sklearn.datasets import load_digits

from mcsparse import (
    ConvMKLClassifier,
    JointBoostClassifier,
    MixedNormClassifier,
    OneVsRestGreedyClassifier,
    ShareBoostClassifier,
    ShareBoostClassifierCV,
    SMSDMKLClassifier,
    UFOMKLClassifier,
)
from mcsparse.features import (
    AnchorPoints,
    CandidateFeatures,
    ConvMaxTemplates,
    DecisionStumps,
    PairwiseProducts,
    RawFeatures,
)

X_ALL, Y_ALL = load_digits(n_class=4, return_X_y=True)
X_ALL = X_ALL / 16
X, Y, X_TEST = X_ALL[:80], Y_ALL[:80], X_ALL[80:120]

# Not estimators one can fit: the abstract protocol class.
ABSTRACT = {CandidateFeatures: "abstract protocol: every method raises NotImplementedError"}


def _anchors():
    return AnchorPoints(n_anchors=5, n_radii=2, random_state=0)


def _templates():
    return ConvMaxTemplates(n_templates=4, patch_size=3, n_masks=4, n_patches=300,
                            random_state=0)


CLASSIFIERS = {
    "shareboost-raw": lambda: ShareBoostClassifier(n_features_to_select=5),
    "shareboost-validation": lambda: ShareBoostClassifier(
        n_features_to_select=5, validation_fraction=0.25, random_state=0),
    "shareboost-stumps": lambda: ShareBoostClassifier(n_features_to_select=5,
                                                      features="stumps"),
    "shareboost-anchors": lambda: ShareBoostClassifier(n_features_to_select=2,
                                                       features=_anchors(), alpha=1e-3),
    "shareboost-templates": lambda: ShareBoostClassifier(n_features_to_select=3,
                                                         features=_templates()),
    "shareboost-grouped": lambda: ShareBoostClassifier(
        n_features_to_select=2, features=RawFeatures(groups=np.arange(64) // 8)),
    "shareboost-linf1": lambda: ShareBoostClassifier(
        n_features_to_select=3, penalty="linf1_smooth", alpha=1e-3),
    "shareboost-cv": lambda: ShareBoostClassifierCV(alphas=2, max_features=4, cv=2),
    "shareboost-cv-stumps": lambda: ShareBoostClassifierCV(alphas=[1e-4], max_features=3,
                                                           cv=2, features="stumps"),
    "one-vs-rest": lambda: OneVsRestGreedyClassifier(n_features_to_select=3),
    "one-vs-rest-stumps": lambda: OneVsRestGreedyClassifier(n_features_to_select=2,
                                                            features="stumps"),
    "jointboost": lambda: JointBoostClassifier(n_estimators=4),
    "mixed-norm": lambda: MixedNormClassifier(alpha=0.05),
    "mixed-norm-debias": lambda: MixedNormClassifier(alpha=0.05, penalty="l1/linf",
                                                     debias=True),
    "ufo-mkl": lambda: UFOMKLClassifier(C=10, max_iter=10, random_state=0),
    "conv-mkl": lambda: ConvMKLClassifier(C=10, max_iter=10, random_state=0),
    "smsd-mkl": lambda: SMSDMKLClassifier(C=10, max_iter=10, random_state=0),
}

# transformers: (factory, fit) -> fitted
TRANSFORMERS = {
    "pairwise": lambda: PairwiseProducts(),
    "conv-max-templates": _templates,
}

# candidate families: fitted, then checked while scanning and after end_scan
FAMILIES = {
    "raw": lambda: RawFeatures(),
    "raw-grouped": lambda: RawFeatures(groups=np.arange(64) // 16),
    "stumps": lambda: DecisionStumps(),
    "anchors": _anchors,
    "templates": _templates,
}


def test_every_public_estimator_is_covered():
    covered = set()
    for table in (CLASSIFIERS, TRANSFORMERS, FAMILIES):
        covered |= {type(factory()) for factory in table.values()}
    missing = set(public_estimator_classes()) - covered - set(ABSTRACT)
    assert not missing, f"no persistence test for {sorted(c.__name__ for c in missing)}"


# --- round trips ---------------------------------------------------------------


def _pickle(protocol):
    def round_trip(est, tmp_path):
        return pickle.loads(pickle.dumps(est, protocol=protocol))
    return round_trip


def _joblib(**load_kwargs):
    def round_trip(est, tmp_path, compress=0):
        path = tmp_path / "model.joblib"
        joblib.dump(est, path, compress=compress)
        return joblib.load(path, **load_kwargs)
    return round_trip


def _joblib_compressed(est, tmp_path):
    return _joblib()(est, tmp_path, compress=3)


ROUND_TRIPS = {
    **{f"pickle{p}": _pickle(p) for p in range(2, pickle.HIGHEST_PROTOCOL + 1)},
    "joblib": _joblib(),
    "joblib-compressed": _joblib_compressed,
    "joblib-mmap": _joblib(mmap_mode="r"),
}


# --- deep comparison -------------------------------------------------------------


def assert_same(a, b, where="estimator"):
    """Bitwise equality of two object graphs (arrays by value, dtype and shape)."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray), where
        assert a.dtype == b.dtype and a.shape == b.shape, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"), f"{where} differs"
    elif sp.issparse(a):
        assert sp.issparse(b) and a.format == b.format and a.dtype == b.dtype, where
        assert a.shape == b.shape and (a != b).nnz == 0, f"{where} differs"
    elif isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (list, tuple)):
        assert type(a) is type(b) and len(a) == len(b), where
        for i, (va, vb) in enumerate(zip(a, b)):
            assert_same(va, vb, f"{where}[{i}]")
    elif isinstance(a, float) and np.isnan(a):
        assert isinstance(b, float) and np.isnan(b), where
    elif isinstance(a, (type(None), bool, int, float, complex, str, bytes, np.generic,
                        type)) or callable(a):
        assert a == b, f"{where}: {a!r} != {b!r}"
    elif hasattr(a, "__dict__") or hasattr(a, "__slots__"):
        assert type(a) is type(b), where
        names = set(getattr(a, "__dict__", {}))
        names |= {s for cls in type(a).__mro__ for s in getattr(cls, "__slots__", ())}
        for name in sorted(names):
            assert hasattr(b, name) == hasattr(a, name), f"{where}.{name}"
            if hasattr(a, name):
                assert_same(getattr(a, name), getattr(b, name), f"{where}.{name}")
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def _outputs(est, X_new):
    out = {}
    for method in ("predict", "decision_function", "predict_proba", "predict_log_proba",
                   "transform"):
        if hasattr(est, method):
            out[method] = getattr(est, method)(X_new)
    if hasattr(est, "staged_decision_function"):
        out["staged_decision_function"] = list(est.staged_decision_function(X_new))
        out["staged_predict"] = list(est.staged_predict(X_new))
    if hasattr(est, "score"):
        out["score"] = est.score(X_new, np.resize(Y, X_new.shape[0]))
    return out


@pytest.fixture(scope="module")
def fitted():
    """Each estimator fitted once (fitting is the slow part)."""
    cache = {}

    def get(table, name):
        if (id(table), name) not in cache:
            est = table[name]()
            cache[id(table), name] = est.fit(X, Y) if table is CLASSIFIERS else est.fit(X)
        return cache[id(table), name]
    return get


@pytest.mark.parametrize("round_trip", ROUND_TRIPS)
@pytest.mark.parametrize("name", list(CLASSIFIERS) + list(TRANSFORMERS))
def test_round_trip_keeps_outputs_and_attributes(fitted, tmp_path, name, round_trip):
    table = CLASSIFIERS if name in CLASSIFIERS else TRANSFORMERS
    est = fitted(table, name)
    before = _outputs(est, X_TEST)
    assert before
    loaded = ROUND_TRIPS[round_trip](est, tmp_path)
    assert type(loaded) is type(est)
    assert_same(est, loaded)
    assert_same(before, _outputs(loaded, X_TEST), "outputs")
    # the original is untouched, and the copy outputs the same again
    assert_same(before, _outputs(est, X_TEST), "outputs of the original")
    assert_same(before, _outputs(loaded, X_TEST), "outputs, second call")
    assert loaded.get_params(deep=False).keys() == est.get_params(deep=False).keys()


@functools.cache
def _fitted_family(name):
    return FAMILIES[name]().fit(X)


@pytest.mark.parametrize("round_trip", ["pickle5", "joblib", "joblib-mmap"])
@pytest.mark.parametrize("name", FAMILIES)
def test_round_trip_of_a_candidate_family(tmp_path, name, round_trip):
    """While scanning (best_candidate, training_columns) and after end_scan."""
    family = copy.deepcopy(_fitted_family(name))  # end_scan below mutates it
    residual = np.eye(4)[Y] - 0.25
    excluded = np.array([0], dtype=np.intp)
    loaded = ROUND_TRIPS[round_trip](family, tmp_path)
    assert_same(family, loaded)
    assert loaded.best_candidate(residual, excluded) == family.best_candidate(
        residual, excluded)
    ids = [1, 2]
    assert_same(family.training_columns(ids), loaded.training_columns(ids))
    family.end_scan(ids)
    (tmp_path / "ended").mkdir()
    loaded = ROUND_TRIPS[round_trip](family, tmp_path / "ended")
    assert_same(family, loaded)
    assert_same(family.transform_candidates(X_TEST, ids),
                loaded.transform_candidates(X_TEST, ids))
    assert_same(family.support_, loaded.support_)


def test_refit_after_loading(tmp_path):
    """A loaded model is an ordinary estimator: it refits to the same model."""
    est = ShareBoostClassifier(n_features_to_select=4, features="stumps").fit(X, Y)
    loaded = _joblib()(est, tmp_path)
    loaded.fit(X, Y)
    assert_same(est.selected_features_, loaded.selected_features_)
    assert_same(est.coef_, loaded.coef_)
    assert_same(est.decision_function(X_TEST), loaded.decision_function(X_TEST))


@pytest.mark.parametrize("round_trip", ["pickle5", "joblib-mmap"])
@pytest.mark.parametrize("features", ["raw", "stumps"])
def test_warm_start_continues_after_loading(tmp_path, features, round_trip):
    """The fitted path survives a round trip (even read-only memory-mapped arrays):
    warm_start continues it exactly as the original does."""
    est = ShareBoostClassifier(n_features_to_select=3, warm_start=True,
                               features=features).fit(X, Y)
    loaded = ROUND_TRIPS[round_trip](est, tmp_path)
    est.set_params(n_features_to_select=5).fit(X, Y)
    loaded.set_params(n_features_to_select=5).fit(X, Y)
    assert_same(est, loaded)
    assert_same(est.decision_function(X_TEST), loaded.decision_function(X_TEST))
