"""The mixed-norm path with adelie as its engine (``solver="adelie"``).

adelie must solve *our* objective, eq. (5) with the margin loss of eq. (3):
with its tolerances tightened it must reach the FISTA solution and the
reference KKT conditions; at its defaults the path must report its KKT
violation as the reference measures it, and warn when it is above ``tol``.

adelie is in the ``compare`` extra, not the ``test`` one (it pins
``numpy<2``): where it is not installed, the tests that run it skip with that
reason, unless ``MCSPARSE_REQUIRE_ADELIE=1`` (set by ``.ci/run``, which runs
this module after installing the ``compare`` extra), where they fail. The
tests of the solver checks and of the missing-package message run everywhere.
"""

import os
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from mcsparse import MixedNormClassifier, mixed_norm_classifier_path
from mcsparse.solvers._mixed_norm import mixed_norm_path

from test_mixed_norm import _problem, ref_kkt, ref_objective

try:
    import adelie
except ImportError:
    adelie = None

#: Why the adelie tests do not run here, or None where they do.
NO_ADELIE = None if adelie is not None else (
    "adelie is not installed: it is in the 'compare' extra, not the 'test' one "
    "(it pins numpy<2); pip install '.[compare]' to run these tests (CI does)")


@pytest.fixture
def needs_adelie():
    """Skip without adelie (fail under ``MCSPARSE_REQUIRE_ADELIE=1``)."""
    if NO_ADELIE is not None:
        if os.environ.get("MCSPARSE_REQUIRE_ADELIE", "0") not in ("", "0"):
            pytest.fail(f"{NO_ADELIE} (MCSPARSE_REQUIRE_ADELIE=1)")
        pytest.skip(NO_ADELIE)


@pytest.fixture
def tight_adelie(needs_adelie, monkeypatch):
    """adelie's grpnet with its tolerances at rounding level."""
    grpnet = adelie.grpnet

    def tight(**kwargs):
        return grpnet(**kwargs, irls_tol=1e-14, tol=1e-14, newton_tol=1e-14)

    monkeypatch.setattr(adelie, "grpnet", tight)


def _quiet_path(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return mixed_norm_path(*args, **kwargs)


@pytest.mark.parametrize("fmt", ["dense", "csr"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_adelie_reaches_the_fista_solution(tight_adelie, fmt, dtype, fit_intercept, weighted):
    X, y = _problem(seed=5)
    X = X.astype(dtype)
    s = np.random.default_rng(4).uniform(0.2, 1.0, len(y)) if weighted else None
    Xin = X if fmt == "dense" else sp.csr_matrix(X)
    common = dict(n_classes=3, n_lambdas=6, lambda_min_ratio=0.05,
                  fit_intercept=fit_intercept, sample_weight=s)
    ref = mixed_norm_path(Xin, y, tol=1e-10, max_iter=100000, **common)
    path = _quiet_path(Xin, y, solver="adelie", **common)
    assert path.solver == "adelie" and ref.solver == "fista"
    np.testing.assert_array_equal(path.lambdas, ref.lambdas)
    np.testing.assert_allclose(path.objective, ref.objective, rtol=1e-7)
    np.testing.assert_array_equal(path.n_active, ref.n_active)
    sw = np.ones(len(y)) if s is None else s
    Xd = X.astype(np.float64)
    for lam, W, b, W_ref, b_ref in zip(path.lambdas, path.coefs, path.intercepts,
                                       ref.coefs, ref.intercepts):
        np.testing.assert_allclose(W, W_ref, atol=1e-3)
        np.testing.assert_allclose(b, b_ref, atol=1e-3)
        assert ref_kkt(W, b, Xd, y, sw, lam, "l1/l2", fit_intercept) < 1e-2
        if not fit_intercept:
            assert not np.any(b)
    assert np.all(path.n_iter == 0)


def test_adelie_violation_is_reported_and_warned(needs_adelie):
    """At adelie's defaults: the violation the reference measures, never hidden."""
    X, y = _problem(n=200, d=8, seed=7)
    s = np.random.default_rng(1).uniform(0.5, 2.0, len(y))
    tol = 1e-6
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        path = mixed_norm_path(X, y, n_classes=3, n_lambdas=8, sample_weight=s, tol=tol,
                               solver="adelie")
    # the path measures the conditions on centred columns (its parametrisation);
    # they differ from the raw columns' by the intercept's gradient, non-zero here
    mu = s @ X / s.sum()
    measured = np.array([ref_kkt(W, b + W @ mu, X - mu, y, s, lam, "l1/l2", True)
                         for lam, W, b in zip(path.lambdas, path.coefs, path.intercepts)])
    np.testing.assert_allclose(path.kkt_violation, measured, rtol=1e-6, atol=1e-12)
    assert path.n_not_converged == int(np.sum(measured > tol)) > 0
    messages = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert len(messages) == 1 and "adelie" in messages[0] and "solver='fista'" in messages[0]
    for lam, W, b, obj in zip(path.lambdas, path.coefs, path.intercepts, path.objective):
        np.testing.assert_allclose(obj, ref_objective(W, b, X, y, s, lam, "l1/l2"),
                                   rtol=1e-10)
    # near the FISTA objective all the same
    ref = mixed_norm_path(X, y, n_classes=3, n_lambdas=8, sample_weight=s, tol=1e-9,
                          max_iter=100000)
    assert np.all(path.objective >= ref.objective - 1e-9)
    np.testing.assert_allclose(path.objective, ref.objective, rtol=1e-2)


def test_adelie_loose_tol_does_not_warn(needs_adelie):
    X, y = _problem(n=200, d=8, seed=7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        path = mixed_norm_path(X, y, n_classes=3, n_lambdas=4, tol=10.0, solver="adelie")
    assert path.n_not_converged == 0


def test_adelie_warm_up_levels_are_dropped(needs_adelie):
    X, y = _problem(seed=3)
    lam = 0.05
    path = _quiet_path(X, y, n_classes=3, lambdas=[lam], warm_up=5, solver="adelie")
    assert path.lambdas.tolist() == [lam] and len(path.coefs) == 1


def test_classifier_with_adelie_matches_fista_predictions(needs_adelie):
    X, y = _problem(n=300, d=8, seed=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fast = MixedNormClassifier(alpha=0.02, solver="adelie").fit(X, y)
        models = mixed_norm_classifier_path(X, y, n_alphas=5, solver="adelie", debias=True)
    ref = MixedNormClassifier(alpha=0.02, tol=1e-8, max_iter=100000).fit(X, y)
    assert fast.n_iter_ == 0 and fast.solver == "adelie"
    np.testing.assert_array_equal(fast.support_, ref.support_)
    assert np.mean(fast.predict(X) == ref.predict(X)) >= 0.98
    np.testing.assert_allclose(fast.coef_, ref.coef_, atol=0.05)
    assert len(models) == 5 and all(m.solver == "adelie" for m in models)


@pytest.mark.parametrize("solver, penalty, match", [
    ("adelie", "l1/linf", "l1/l2 penalty only"),
    ("cd", "l1/l2", "solver must be one of"),
    (None, "l1/l2", "solver must be one of"),
])
def test_bad_solver(solver, penalty, match):
    X, y = _problem(n=30, d=4, seed=13)
    with pytest.raises(ValueError, match=match):
        mixed_norm_path(X, y, n_classes=3, penalty=penalty, solver=solver)
    with pytest.raises(ValueError, match=match):
        MixedNormClassifier(penalty=penalty, solver=solver).fit(X, y)
    with pytest.raises(ValueError, match=match):
        mixed_norm_classifier_path(X, y, penalty=penalty, solver=solver)


def test_missing_adelie_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "adelie", None)
    X, y = _problem(n=30, d=4, seed=13)
    with pytest.raises(ImportError, match="pip install adelie"):
        mixed_norm_path(X, y, n_classes=3, solver="adelie")
    with pytest.raises(ImportError, match="solver='fista'"):
        MixedNormClassifier(solver="adelie").fit(X, y)
    # the default solver needs no adelie
    MixedNormClassifier(alpha=0.05).fit(X, y)


def test_adelie_stopping_short_is_an_error(needs_adelie, monkeypatch):
    grpnet = adelie.grpnet

    def short(**kwargs):
        kwargs["lmda_path"] = kwargs["lmda_path"][:2]
        return grpnet(**kwargs)

    monkeypatch.setattr(adelie, "grpnet", short)
    X, y = _problem(n=60, d=5, seed=2)
    with pytest.raises(RuntimeError, match="solved 2 of 5 penalty levels"):
        mixed_norm_path(X, y, n_classes=3, n_lambdas=5, solver="adelie")
