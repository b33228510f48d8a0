"""Mixed-norm (group-lasso) path and MixedNormClassifier against slow references."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad, minimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

from mcsparse.datasets import load_pendigits
from mcsparse import MixedNormClassifier, mixed_norm_classifier_path
from mcsparse.features import PairwiseProducts
from mcsparse.loss import MixedNorm
from mcsparse.loss._penalties import l1_ball_projection
from mcsparse.solvers._mixed_norm import _design, mixed_norm_path
from mcsparse.solvers._objective import LinearObjective

PENALTIES = ["l1/l2", "l1/linf"]


# --------------------------------------------------------------------------
# plain-NumPy reference, written from eq. (3) and (5), sharing no code
# --------------------------------------------------------------------------


def ref_loss_grad(W, b, X, y, s):
    """Weighted mean of eq. (3) and its gradient w.r.t. W and b."""
    n, k = X.shape[0], W.shape[0]
    Z = X @ W.T + b
    Z = Z - Z[np.arange(n), y][:, None] + (np.arange(k)[None, :] != y[:, None])
    m = Z.max(axis=1, keepdims=True)
    E = np.exp(Z - m)
    loss = (m.ravel() + np.log(E.sum(axis=1)))
    P = E / E.sum(axis=1, keepdims=True)
    P[np.arange(n), y] -= 1.0
    P *= s[:, None]
    return loss @ s / s.sum(), P.T @ X / s.sum(), P.sum(axis=0) / s.sum()


def ref_norms(W, penalty):
    return np.linalg.norm(W, axis=0) if penalty == "l1/l2" else np.abs(W).max(axis=0)


def ref_objective(W, b, X, y, s, lam, penalty):
    return ref_loss_grad(W, b, X, y, s)[0] + lam * ref_norms(W, penalty).sum()


def ref_prox(V, tau, penalty):
    """Group soft-thresholding, or Moreau with an l1-ball projection by bisection."""
    out = np.zeros_like(V)
    for j in range(V.shape[1]):
        v = V[:, j]
        if penalty == "l1/l2":
            nv = np.linalg.norm(v)
            out[:, j] = 0 if nv <= tau else v * (1 - tau / nv)
        else:
            if np.abs(v).sum() <= tau:
                continue  # v is inside the ball: prox is zero
            lo, hi = 0.0, np.abs(v).max()
            for _ in range(200):
                mid = (lo + hi) / 2
                if np.maximum(np.abs(v) - mid, 0).sum() > tau:
                    lo = mid
                else:
                    hi = mid
            out[:, j] = v - np.sign(v) * np.maximum(np.abs(v) - hi, 0)
    return out


def ref_ista(X, y, s, k, lam, penalty, fit_intercept, n_iter=20000):
    """Proximal gradient with the fixed step 1/L, L = ||[X, 1]||_2^2 max(s) / (2 sum s)."""
    X = np.asarray(X, dtype=np.float64)
    A = np.hstack([X, np.ones((X.shape[0], 1))]) if fit_intercept else X
    L = 0.5 * np.linalg.norm(A * np.sqrt(s)[:, None], 2) ** 2 / s.sum()
    W = np.zeros((k, X.shape[1]))
    b = np.zeros(k)
    for _ in range(n_iter):
        _, gW, gb = ref_loss_grad(W, b, X, y, s)
        W = ref_prox(W - gW / L, lam / L, penalty)
        if fit_intercept:
            b = b - gb / L
    return W, b, ref_objective(W, b, X, y, s, lam, penalty)


def ref_slsqp_linf(X, y, s, k, lam, fit_intercept):
    """l1/linf as a smooth problem with linear constraints, by SLSQP.

    ``min L(W, b) + lam sum_j t_j  s.t.  -t_j <= W_ij <= t_j``.
    """
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    nb = k if fit_intercept else 0

    def unpack(z):
        W = z[:k * d].reshape(k, d)
        b = z[k * d:k * d + nb] if fit_intercept else np.zeros(k)
        return W, b, z[k * d + nb:]

    def fun(z):
        W, b, t = unpack(z)
        loss, gW, gb = ref_loss_grad(W, b, X, y, s)
        g = [gW.ravel()] + ([gb] if fit_intercept else []) + [lam * np.ones(d)]
        return loss + lam * t.sum(), np.concatenate(g)

    # rows: t_j - W_ij >= 0 and t_j + W_ij >= 0
    n_var = k * d + nb + d
    A = np.zeros((2 * k * d, n_var))
    for i in range(k):
        for j in range(d):
            r = i * d + j
            A[2 * r, r], A[2 * r, k * d + nb + j] = -1.0, 1.0
            A[2 * r + 1, r], A[2 * r + 1, k * d + nb + j] = 1.0, 1.0
    cons = {"type": "ineq", "fun": lambda z: A @ z, "jac": lambda z: A}
    res = minimize(fun, np.zeros(n_var), jac=True, method="SLSQP", constraints=[cons],
                   options={"ftol": 1e-14, "maxiter": 2000})
    W, b, _ = unpack(res.x)
    return W, b, res.fun


def ref_kkt(W, b, X, y, s, lam, penalty, fit_intercept):
    """Largest violation of the optimality conditions, relative to lam."""
    _, G, gb = ref_loss_grad(W, b, X, y, s)
    worst = np.abs(gb).max() / lam if fit_intercept else 0.0
    for j in range(W.shape[1]):
        w, g = W[:, j], G[:, j]
        dual = np.linalg.norm(g) if penalty == "l1/l2" else np.abs(g).sum()
        if not np.any(w):
            worst = max(worst, (dual - lam) / lam)
        elif penalty == "l1/l2":
            worst = max(worst, np.linalg.norm(g + lam * w / np.linalg.norm(w)) / lam)
        else:
            # -g / lam must be in the subdifferential of ||.||_inf at w:
            # supported on argmax |w| with matching signs, l1 norm one
            top = np.abs(w).max()
            u = -g / lam
            off = np.abs(w) < top * (1 - 1e-6)
            worst = max(worst, np.abs(u[off]).sum(), abs(np.abs(u).sum() - 1))
            on = ~off
            worst = max(worst, np.abs(np.minimum(u[on] * np.sign(w[on]), 0)).sum())
    return worst


def _problem(n=80, d=8, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) + 0.5
    W = rng.standard_normal((k, d)) * (rng.random(d) < 0.5)
    y = np.argmax(X @ W.T + 1.5 * rng.standard_normal((n, k)), axis=1).astype(np.intp)
    return X, y


# --------------------------------------------------------------------------
# (a) KKT at the solution
# --------------------------------------------------------------------------


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_kkt_holds_along_the_path(penalty, dtype, fmt, fit_intercept, weighted):
    X, y = _problem(seed=1)
    X = X.astype(dtype)
    s = np.random.default_rng(3).uniform(0.2, 1.0, len(y)) if weighted else None
    Xin = X if fmt == "dense" else getattr(sp, f"{fmt}_matrix")(X)
    path = mixed_norm_path(Xin, y, n_classes=3, n_lambdas=6, lambda_min_ratio=0.05,
                           penalty=penalty, fit_intercept=fit_intercept,
                           sample_weight=s, tol=1e-9, max_iter=50000)
    assert np.all(path.kkt_violation <= 1e-9)
    sw = np.ones(len(y)) if s is None else s
    Xd = X.astype(np.float64)
    for lam, W, b in zip(path.lambdas, path.coefs, path.intercepts):
        assert ref_kkt(W, b, Xd, y, sw, lam, penalty, fit_intercept) < 1e-6
    assert path.n_active[-1] > 0


# --------------------------------------------------------------------------
# (b) objective against plain ISTA
# --------------------------------------------------------------------------


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_objective_matches_reference_ista(penalty, fit_intercept):
    X, y = _problem(n=60, d=6, seed=2)
    s = np.random.default_rng(0).uniform(0.3, 1.0, len(y))
    path = mixed_norm_path(X, y, n_classes=3, n_lambdas=4, lambda_min_ratio=0.1,
                           penalty=penalty, fit_intercept=fit_intercept,
                           sample_weight=s, tol=1e-10, max_iter=50000)
    for lam, W, b, obj in zip(path.lambdas[1:], path.coefs[1:], path.intercepts[1:],
                              path.objective[1:]):
        if penalty == "l1/l2":
            W_ref, b_ref, obj_ref = ref_ista(X, y, s, 3, lam, penalty, fit_intercept)
        else:
            W_ref, b_ref, obj_ref = ref_slsqp_linf(X, y, s, 3, lam, fit_intercept)
        np.testing.assert_allclose(obj, obj_ref, rtol=1e-6)
        np.testing.assert_allclose(obj, ref_objective(W, b, X, y, s, lam, penalty),
                                   rtol=1e-12)
        # same support (up to the reference's precision)
        np.testing.assert_array_equal(ref_norms(W, penalty) > 0,
                                      ref_norms(W_ref, penalty) > 1e-6)


def test_prox_and_l1_ball_projection_match_reference():
    rng = np.random.default_rng(0)
    V = rng.standard_normal((5, 40)) * rng.uniform(0.1, 3, 40)
    for penalty in PENALTIES:
        for tau in [0.0, 0.3, 1.0, 5.0, 100.0]:
            np.testing.assert_allclose(MixedNorm(penalty, tau).prox(V, 1.0),
                                       ref_prox(V, tau, penalty), atol=1e-10)
    P = l1_ball_projection(V, 1.0)
    assert np.all(np.abs(P).sum(axis=0) <= 1.0 + 1e-12)
    # ties and zeros
    T = np.array([[1.0, 0.0, 2.0], [1.0, 0.0, -2.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(l1_ball_projection(T, 1.5),
                               [[0.5, 0, 0.75], [0.5, 0, -0.75], [0.5, 0, 0]])


# --------------------------------------------------------------------------
# (c) lambda_max and the path
# --------------------------------------------------------------------------


@pytest.mark.parametrize("penalty", PENALTIES)
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_lambda_max_is_the_first_nonzero(penalty, fit_intercept):
    X, y = _problem(seed=4)
    lmax = mixed_norm_path(X, y, n_classes=3, lambdas=[1.0], penalty=penalty,
                           fit_intercept=fit_intercept).lambda_max
    path = mixed_norm_path(X, y, n_classes=3, lambdas=[2 * lmax, lmax, 0.99 * lmax],
                           penalty=penalty, fit_intercept=fit_intercept, tol=1e-8)
    assert path.n_active.tolist()[:2] == [0, 0]
    assert path.n_active[2] >= 1
    assert not np.any(path.coefs[0]) and not np.any(path.coefs[1])


@pytest.mark.parametrize("alphas", [None, [0.5, 0.1]])
def test_null_path_is_reported(alphas):
    """Constant columns: the gradient at W = 0 is zero, every model is null, and we say so."""
    X, y = np.ones((30, 3)), np.arange(30) % 3
    with pytest.warns(UserWarning, match="lambda_max = 0") as record:
        models = mixed_norm_classifier_path(X, y, alphas=alphas, n_alphas=3)
    assert all(m.support_.sum() == 0 for m in models)
    assert ("arbitrary grid" in str(record[0].message)) == (alphas is None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a path with a signal stays quiet
        mixed_norm_path(*_problem(seed=4), n_classes=3, n_lambdas=3, tol=1e-3)


def test_path_grows_on_pendigits():
    X, y = load_pendigits(return_X_y=True)
    X = PairwiseProducts().fit_transform(X[:600] / 100)
    y = y[:600].astype(np.intp)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        path = mixed_norm_path(X, y, n_classes=10, n_lambdas=12, lambda_min_ratio=0.05,
                               tol=1e-4)
    assert path.n_active[0] == 0
    assert path.n_active[-1] >= 15
    drops = np.diff(path.n_active)
    assert drops.min() >= -2 and (drops < 0).sum() <= 2  # roughly monotone
    assert np.all(np.diff(path.objective) < 0)


@pytest.mark.parametrize("penalty", PENALTIES)
def test_screening_does_not_change_the_solution(penalty):
    X, y = _problem(n=100, d=15, seed=5)
    kw = dict(n_classes=3, n_lambdas=8, lambda_min_ratio=0.05, penalty=penalty,
              tol=1e-10, max_iter=50000)
    a = mixed_norm_path(X, y, screening=True, **kw)
    b = mixed_norm_path(X, y, screening=False, **kw)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-9)
    np.testing.assert_array_equal(a.n_active, b.n_active)


def test_convergence_warning_at_max_iter():
    X, y = _problem(seed=6)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        mixed_norm_path(X, y, n_classes=3, n_lambdas=3, lambda_min_ratio=0.01,
                        tol=1e-12, max_iter=3)


# --------------------------------------------------------------------------
# (d) gradient of the smooth part
# --------------------------------------------------------------------------


@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_smooth_gradient_check_grad(centred, weighted):
    X, y = _problem(n=50, d=5, seed=7)
    s = np.random.default_rng(1).uniform(0.1, 1, 50) if weighted else None
    mu = X.mean(axis=0) if centred else None
    for Xin in (X, sp.csc_matrix(X)):
        smooth = LinearObjective(_design(Xin, mu), y, s, n_classes=3)

        def fun(theta):
            S = smooth.scores_at(theta[:15].reshape(3, 5), theta[15:])
            return smooth.loss_at(S)[0]

        def grad(theta):
            S = smooth.scores_at(theta[:15].reshape(3, 5), theta[15:])
            _, R = smooth.loss_at(S)
            grad_W, grad_b = smooth.gradient_at(R, 5)
            return np.concatenate([grad_W.ravel(), grad_b])

        theta = np.random.default_rng(2).standard_normal(18)
        assert check_grad(fun, grad, theta) < 1e-6
        # and the value agrees with the plain-NumPy reference
        Xc = X - mu if centred else X
        sw = np.ones(50) if s is None else s
        ref = ref_loss_grad(theta[:15].reshape(3, 5), theta[15:], Xc, y, sw)
        np.testing.assert_allclose(fun(theta), ref[0], rtol=1e-12)
        np.testing.assert_allclose(grad(theta)[:15], ref[1].ravel(), atol=1e-12)


# --------------------------------------------------------------------------
# the estimator
# --------------------------------------------------------------------------


@parametrize_with_checks([
    MixedNormClassifier(alpha=1e-3, tol=1e-10, max_iter=20000),
    MixedNormClassifier(alpha=1e-3, penalty="l1/linf", tol=1e-10, max_iter=20000),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_fitted_attributes_and_kkt():
    X, y = _problem(n=120, d=10, k=4, seed=8)
    clf = MixedNormClassifier(alpha=0.02, tol=1e-8, max_iter=20000).fit(X, y)
    assert clf.coef_.shape == (4, 10) and clf.intercept_.shape == (4,)
    np.testing.assert_array_equal(clf.support_, np.any(clf.coef_ != 0, axis=0))
    assert 0 < clf.support_.sum() < 10
    assert clf.kkt_violation_ <= 1e-8
    assert ref_kkt(clf.coef_, clf.intercept_, X, y, np.ones(len(y)), 0.02, "l1/l2",
                   True) < 1e-6
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.predict(X), np.argmax(clf.decision_function(X), 1))


def test_binary_convention():
    X, y = _problem(n=100, d=6, k=2, seed=9)
    labels = np.array(["a", "b"])[y]
    clf = MixedNormClassifier(alpha=0.01, tol=1e-8).fit(X, labels)
    assert clf.coef_.shape == (1, 6) and clf.intercept_.shape == (1,)
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_[0] + clf.intercept_[0])
    np.testing.assert_array_equal(clf.predict(X),
                                  np.where(clf.decision_function(X) > 0, "b", "a"))


def test_sparse_and_float32_equal_dense():
    X, y = _problem(n=100, d=8, seed=10)
    kw = dict(alpha=0.01, tol=1e-10, max_iter=50000)
    dense = MixedNormClassifier(**kw).fit(X, y)
    for Xin in (sp.csr_matrix(X), sp.csc_matrix(X)):
        other = MixedNormClassifier(**kw).fit(Xin, y)
        np.testing.assert_allclose(other.coef_, dense.coef_, atol=1e-8)
        np.testing.assert_allclose(other.intercept_, dense.intercept_, atol=1e-8)
    f32 = MixedNormClassifier(**kw).fit(X.astype(np.float32), y)
    np.testing.assert_allclose(f32.coef_, dense.coef_, atol=1e-5)


def test_debias_refits_the_support_without_penalty():
    X, y = _problem(n=200, d=10, seed=11)
    raw = MixedNormClassifier(alpha=0.03, tol=1e-8).fit(X, y)
    deb = MixedNormClassifier(alpha=0.03, tol=1e-8, debias=True).fit(X, y)
    np.testing.assert_array_equal(raw.support_, deb.support_)
    sw = np.ones(len(y))
    loss_raw, _, _ = ref_loss_grad(raw.coef_, raw.intercept_, X, y, sw)
    loss_deb, G, gb = ref_loss_grad(deb.coef_, deb.intercept_, X, y, sw)
    assert loss_deb < loss_raw
    assert np.abs(G[:, deb.support_]).max() < 1e-6 and np.abs(gb).max() < 1e-6


@pytest.mark.parametrize("debias", [False, True])
def test_classifier_path_matches_single_fits(debias):
    X, y = _problem(n=150, d=10, seed=12)
    models = mixed_norm_classifier_path(X, y, n_alphas=5, alpha_min_ratio=0.05,
                                        tol=1e-9, max_iter=50000, debias=debias)
    assert [m.alpha for m in models] == sorted([m.alpha for m in models], reverse=True)
    for m in models[1:]:
        single = MixedNormClassifier(alpha=m.alpha, tol=1e-9, max_iter=50000,
                                     debias=debias).fit(X, y)
        np.testing.assert_array_equal(m.support_, single.support_)
        np.testing.assert_allclose(m.predict_proba(X), single.predict_proba(X),
                                   atol=1e-5)
        assert m.score(X, y) == single.score(X, y)


# --------------------------------------------------------------------------
# (f) bad input
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "X, y, params, error, match",
    [
        ([[np.nan, 1.0], [1.0, 2.0]], [0, 1], {}, ValueError, "NaN"),
        ([[np.inf, 1.0], [1.0, 2.0]], [0, 1], {}, ValueError, "infinity"),
        ([[0.0, 1.0], [1.0, 2.0]], [1, 1], {}, ValueError, "2 classes"),
        ([[0.0, 1.0], [1.0, 2.0]], [0.5, 1.5], {}, ValueError, "Unknown label type"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"penalty": "l2"}, ValueError, "penalty"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"penalty": None}, ValueError, "penalty"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"alpha": -1.0}, ValueError, "alpha"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"alpha": 0.0}, ValueError, "alpha"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"alpha": np.inf}, ValueError, "alpha"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"alpha": "1"}, TypeError, "alpha"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"tol": 0.0}, ValueError, "tol"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"max_iter": 0}, ValueError, "max_iter"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1], {"debias": 1}, TypeError, "debias"),
        ([[0.0, 1.0], [1.0, 2.0]], [0, 1, 1], {}, ValueError, "inconsistent"),
    ],
)
def test_bad_input(X, y, params, error, match):
    with pytest.raises(error, match=match):
        MixedNormClassifier(**params).fit(np.array(X), np.array(y))


def test_bad_path_arguments():
    X, y = _problem(n=30, d=4, seed=13)
    with pytest.raises(ValueError, match="alphas"):
        mixed_norm_classifier_path(X, y, alphas=[0.1, -1.0])
    with pytest.raises(ValueError, match="penalty"):
        mixed_norm_classifier_path(X, y, penalty="group")
    with pytest.raises(ValueError, match="lambdas"):
        mixed_norm_path(X, y, n_classes=3, lambdas=[0.0])
    with pytest.raises(ValueError, match="penalty"):
        mixed_norm_path(X, y, n_classes=3, penalty="l2/l1")
    clf = MixedNormClassifier(alpha=0.01).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])


def _small_problem():
    """60 samples, 5 features, 3 classes from two signs."""
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


# --- MixedNorm: huge values hung in the FISTA backtracking / gave alpha=inf --


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mixed_norm_huge_values_raise_instead_of_hanging():
    X, y = _small_problem()
    with pytest.raises(ValueError, match="too large"):
        MixedNormClassifier(alpha=0.01, max_iter=5).fit(X * 1e150, y)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mixed_norm_path_huge_values_no_nonfinite_alphas():
    X, y = _small_problem()
    with pytest.raises(ValueError, match="too large"):
        mixed_norm_classifier_path(X * 1e300, y, n_alphas=3)


def test_mixed_norm_path_nan_alpha_min_ratio():
    X, y = _small_problem()
    with pytest.raises(ValueError, match="alpha_min_ratio"):
        mixed_norm_classifier_path(X, y, n_alphas=3, alpha_min_ratio=np.nan)
