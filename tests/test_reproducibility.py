"""Reproducibility: the same random_state gives bitwise identical fits, whatever n_jobs.

For every public estimator and every feature family (issue 7, item 5): two fits
with the same ``random_state`` (and, where the estimator or its feature family
takes ``n_jobs``, fits with ``n_jobs=1`` and ``n_jobs=2``) give identical
``selected_features_``, ``coef_`` and every other fitted array
(``np.array_equal``, no tolerance), and identical outputs on new data.
"""

import copy

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.datasets import load_digits
from sklearn.pipeline import Pipeline, make_pipeline

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
    ConvMaxTemplates,
    DecisionStumps,
    PairwiseProducts,
    RawFeatures,
)


def _digits(n_train, n_test, n_class=10):
    """8 x 8 digit images scaled to [0, 1]: (X, y, X_test)."""
    X, y = load_digits(n_class=n_class, return_X_y=True)
    X = X / 16
    return X[:n_train], y[:n_train], X[n_train:n_train + n_test]


DATA = _digits(150, 50)
MKL_DATA = _digits(60, 30, n_class=3)  # the MKL solvers are O(n_samples^2)


def _anchors(n_jobs=None):
    return AnchorPoints(n_anchors=8, n_radii=3, n_jobs=n_jobs, random_state=0)


def _templates(n_jobs=None):
    return ConvMaxTemplates(n_templates=6, patch_size=3, n_masks=4, n_patches=400,
                            n_jobs=n_jobs, random_state=0)


# name -> factory(n_jobs): n_jobs goes wherever the estimator or its features
# take it (None elsewhere).
ESTIMATORS = {
    "shareboost-raw": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=6, random_state=0),
    "shareboost-raw-validation": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=6, validation_fraction=0.3, n_iter_no_change=3,
        random_state=0),
    "shareboost-stumps": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=6, features="stumps", random_state=0),
    "shareboost-anchors": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=3, features=_anchors(n_jobs), alpha=1e-3, random_state=0),
    "shareboost-templates": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=4, features=_templates(n_jobs), random_state=0),
    "shareboost-pairwise": lambda n_jobs: make_pipeline(
        PairwiseProducts(), ShareBoostClassifier(n_features_to_select=6, alpha=1e-3,
                                                 random_state=0)),
    "shareboost-grouped-raw": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=3, features=RawFeatures(groups=np.arange(64) // 8),
        random_state=0),
    "shareboost-best-column-linf1": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=3, selection="best_column", penalty="linf1_smooth",
        alpha=1e-3, random_state=0),
    "shareboost-line-search": lambda n_jobs: ShareBoostClassifier(
        n_features_to_select=3, selection="line_search", alpha=1e-3, random_state=0),
    "shareboost-cv": lambda n_jobs: ShareBoostClassifierCV(
        alphas=3, max_features=5, cv=3, n_jobs=n_jobs, random_state=0),
    "one-vs-rest-raw": lambda n_jobs: OneVsRestGreedyClassifier(n_features_to_select=4),
    "one-vs-rest-stumps": lambda n_jobs: OneVsRestGreedyClassifier(
        n_features_to_select=3, features="stumps"),
    "one-vs-rest-templates": lambda n_jobs: OneVsRestGreedyClassifier(
        n_features_to_select=2, features=_templates(n_jobs)),
    "jointboost": lambda n_jobs: JointBoostClassifier(n_estimators=6),
    "mixed-norm-l1l2": lambda n_jobs: MixedNormClassifier(alpha=0.05),
    "mixed-norm-l1linf-debias": lambda n_jobs: MixedNormClassifier(
        alpha=0.05, penalty="l1/linf", debias=True),
    "ufo-mkl": lambda n_jobs: UFOMKLClassifier(C=10, max_iter=15, random_state=0),
    "conv-mkl": lambda n_jobs: ConvMKLClassifier(C=10, max_iter=15, random_state=0),
    "smsd-mkl": lambda n_jobs: SMSDMKLClassifier(C=10, max_iter=15, random_state=0),
}

# the ones whose fit takes n_jobs somewhere (estimator or feature family)
TAKES_N_JOBS = ["shareboost-anchors", "shareboost-templates", "one-vs-rest-templates",
                "shareboost-cv"]


def _data_for(name):
    return MKL_DATA if name.endswith("mkl") else DATA


def fitted_state(est, prefix=""):
    """Every fitted attribute (name ending in ``_``) of ``est``, nested ones flattened.

    Fitted sub-estimators (``features_``, a pipeline's steps) are walked into.
    """
    if isinstance(est, Pipeline):
        out = {}
        for name, step in est.steps:
            out.update(fitted_state(step, f"{prefix}{name}."))
        return out
    out = {}
    for key, value in vars(est).items():
        if key.startswith("_") or not key.endswith("_"):
            continue
        if isinstance(value, BaseEstimator):
            out.update(fitted_state(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


def assert_identical_state(a, b):
    state_a, state_b = fitted_state(a), fitted_state(b)
    assert state_a.keys() == state_b.keys()
    assert state_a, "no fitted attributes found"
    for key in state_a:
        va, vb = state_a[key], state_b[key]
        if isinstance(va, np.ndarray) or isinstance(vb, np.ndarray):
            va, vb = np.asarray(va), np.asarray(vb)
            assert va.dtype == vb.dtype and va.shape == vb.shape, key
            assert np.array_equal(va, vb, equal_nan=va.dtype.kind in "fc"), (
                f"fitted attribute {key} differs")
        elif isinstance(va, dict):  # of arrays (a CV estimator's cv_results_)
            assert va.keys() == vb.keys(), key
            for name in va:
                assert np.array_equal(va[name], vb[name]), f"fitted attribute {key}[{name}]"
        elif isinstance(va, float) and np.isnan(va):
            assert np.isnan(vb), key
        else:
            assert va == vb, f"fitted attribute {key} differs: {va!r} != {vb!r}"


def _outputs(est, X):
    out = {"predict": est.predict(X)}
    for method in ("decision_function", "predict_proba"):
        if hasattr(est, method):
            out[method] = getattr(est, method)(X)
    if hasattr(est, "staged_decision_function"):
        out["staged"] = np.stack(list(est.staged_decision_function(X)))
    return out


def assert_identical_fits(a, b, X_test):
    assert_identical_state(a, b)
    out_a, out_b = _outputs(a, X_test), _outputs(b, X_test)
    for key in out_a:
        assert np.array_equal(out_a[key], out_b[key]), f"{key} differs"


@pytest.mark.parametrize("name", ESTIMATORS)
def test_same_random_state_same_fit(name):
    X, y, X_test = _data_for(name)
    first = ESTIMATORS[name](None).fit(X, y)
    # a clone of the fitted estimator refits to the same model
    second = clone(first).fit(X, y)
    assert_identical_fits(first, second, X_test)
    final = first[-1] if isinstance(first, Pipeline) else first
    if hasattr(final, "selected_features_"):
        assert final.selected_features_.size > 0


@pytest.mark.parametrize("name", TAKES_N_JOBS)
def test_n_jobs_does_not_change_the_fit(name):
    X, y, X_test = _data_for(name)
    serial = ESTIMATORS[name](1).fit(X, y)
    for n_jobs in (2, -1) if "anchors" in name else (2,):
        assert_identical_fits(serial, ESTIMATORS[name](n_jobs).fit(X, y), X_test)


def test_every_estimator_is_covered():
    """The lists above name every public estimator and the families with n_jobs."""
    import inspect

    import mcsparse

    public = {getattr(mcsparse, n) for n in mcsparse.__all__
              if inspect.isclass(getattr(mcsparse, n))}
    covered = set()
    for factory in ESTIMATORS.values():
        est = factory(None)
        covered.add(type(est[-1] if isinstance(est, Pipeline) else est))
    assert public <= covered, public - covered
    # every class of mcsparse.features that takes n_jobs is run with several
    families = {type(ESTIMATORS[n](1).features) for n in TAKES_N_JOBS
                if not isinstance(ESTIMATORS[n](1).features, str)}  # the CV's own n_jobs
    assert families == {AnchorPoints, ConvMaxTemplates}


@pytest.mark.parametrize("make, fit", [
    (lambda n_jobs: _anchors(n_jobs), lambda f, X: f.fit(X)),
    (lambda n_jobs: _templates(n_jobs), lambda f, X: f.fit(X)),
])
def test_feature_families_same_seed_any_n_jobs(make, fit):
    """Standalone families: fitted arrays, scan scores and columns are bitwise equal."""
    X, y, X_test = DATA
    residual = np.eye(10)[y] - 0.1
    excluded = np.array([0, 3], dtype=np.intp)
    reference = fit(make(1), X)
    best = reference.best_candidate(residual, excluded)
    columns = reference.training_columns([1, 2])
    new = copy.deepcopy(reference).end_scan([1, 2]).transform_candidates(X_test, [1, 2])
    for n_jobs in (1, 2, -1, None):
        family = fit(make(n_jobs), X)
        assert_identical_state(reference, family)
        assert family.best_candidate(residual, excluded) == best
        assert np.array_equal(family.training_columns([1, 2]), columns)
        family.end_scan([1, 2])
        assert np.array_equal(family.transform_candidates(X_test, [1, 2]), new)


def test_conv_max_transform_any_n_jobs():
    X, _, X_test = DATA
    reference = _templates(1).fit(X)
    fit_matrix = _templates(1).fit_transform(X)
    test_matrix = reference.transform(X_test)
    for n_jobs in (2, -1):
        family = _templates(n_jobs)
        assert np.array_equal(family.fit_transform(X), fit_matrix)
        assert np.array_equal(family.transform(X_test), test_matrix)


@pytest.mark.parametrize("family", [DecisionStumps(), RawFeatures(), PairwiseProducts()])
def test_deterministic_families(family):
    """Families without randomness: two fits are identical too."""
    X, _, X_test = DATA
    a, b = clone(family).fit(X), clone(family).fit(X)
    assert_identical_state(a, b)
    if hasattr(a, "transform"):
        assert np.array_equal(a.transform(X_test), b.transform(X_test))
    else:
        residual = np.eye(10)[DATA[1]] - 0.1
        none = np.zeros(0, dtype=np.intp)
        assert a.best_candidate(residual, none) == b.best_candidate(residual, none)


@pytest.mark.parametrize("make, attribute", [
    (lambda seed: ShareBoostClassifier(n_features_to_select=6, validation_fraction=0.3,
                                       random_state=seed), "validation_scores_"),
    (lambda seed: ShareBoostClassifier(
        n_features_to_select=3, alpha=1e-3,
        features=AnchorPoints(n_anchors=8, n_radii=3, random_state=seed)),
     "features_.anchors_"),
    (lambda seed: UFOMKLClassifier(C=10, max_iter=15, random_state=seed), "dual_coef_"),
    (lambda seed: ConvMKLClassifier(C=10, max_iter=15, random_state=seed), "dual_coef_"),
    (lambda seed: SMSDMKLClassifier(C=10, max_iter=15, random_state=seed), "dual_coef_"),
])
def test_random_state_is_used(make, attribute):
    """Not vacuous: another seed gives another fit (so the seed really is honoured)."""
    est = make(0)
    X, y, _ = MKL_DATA if isinstance(est, (UFOMKLClassifier, ConvMKLClassifier,
                                           SMSDMKLClassifier)) else DATA
    a = fitted_state(est.fit(X, y))[attribute]
    b = fitted_state(make(1).fit(X, y))[attribute]
    assert not np.array_equal(a, b)
    # a RandomState instance, fresh for each fit, is as good as its seed
    c = fitted_state(make(np.random.RandomState(0)).fit(X, y))[attribute]
    assert np.array_equal(a, c)


def _small_defaults(monkeypatch, cls, **small):
    """Shrink the defaults of ``cls`` (so that a named family fits tiny data fast)."""
    import inspect

    init = cls.__init__
    params = list(inspect.signature(init).parameters.values())[1:]
    assert set(small) <= {p.name for p in params}
    defaults = tuple(small.get(p.name, p.default) for p in params
                     if p.default is not inspect.Parameter.empty)
    monkeypatch.setattr(init, "__defaults__", defaults)


@pytest.mark.parametrize("estimator, name", [
    (ShareBoostClassifier, "anchors"),
    (ShareBoostClassifier, "templates"),
    (OneVsRestGreedyClassifier, "templates"),
])
def test_named_random_family_follows_the_estimator_random_state(monkeypatch, estimator,
                                                                name):
    """features="anchors"/"templates" with random_state=0: the global RNG must not matter.

    The families' defaults (1500 anchors, 1000 templates) are shrunk for tiny data;
    the global RNG is seeded differently before each fit, so a family that
    ignores the estimator's seed gives another fit, deterministically.
    """
    _small_defaults(monkeypatch, AnchorPoints, n_anchors=8, n_radii=3)
    _small_defaults(monkeypatch, ConvMaxTemplates, n_templates=6, patch_size=3,
                    n_masks=4, n_patches=400)
    X, y, X_test = DATA
    fits = []
    for global_seed in (1, 2):
        np.random.seed(global_seed)
        fits.append(estimator(n_features_to_select=3, features=name,
                              alpha=1e-3, random_state=0).fit(X, y))
    assert_identical_fits(fits[0], fits[1], X_test)


def test_one_vs_rest_refuses_a_group_family():
    """Grouped candidates (AnchorPoints) are ShareBoost's; one-vs-rest says so."""
    X, y, _ = DATA
    with pytest.raises(ValueError, match="grouped candidates"):
        OneVsRestGreedyClassifier(n_features_to_select=2, features=_anchors(1),
                                  alpha=1e-3).fit(X, y)
