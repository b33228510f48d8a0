"""Multi-class MKL: the link function (Theorem 3), the Cython epoch against its
NumPy twin, the solver's guarantees and the three estimators."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.datasets import load_iris, make_blobs

from mcsparse import ConvMKLClassifier, SMSDMKLClassifier, UFOMKLClassifier
from mcsparse.kernels import conv_kernel_scale
from mcsparse.kernels import default_bandwidths, gaussian_kernel_stack, tail_sums
from mcsparse.solvers import default_q, link_coefficients, multiclass_mkl
from mcsparse.solvers._mkl import link_coefficients_numpy, mkl_epoch_numpy
from mcsparse.solvers._mkl_fast import mkl_epoch


def _theorem3(theta_sq, penalty, q, scale):
    """Theorem 3 written out term by term, with the zero floor on nu."""
    norm = np.sqrt(theta_sq)
    nu = np.maximum(norm - penalty, 0.0)
    if not nu.any():
        return np.zeros_like(norm)
    qnorm = np.sum(nu ** q) ** (1 / q)
    out = np.zeros_like(norm)
    on = nu > 0
    out[on] = nu[on] ** (q - 1) / (scale * norm[on] * qnorm ** (q - 2))
    return out


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("q", [1.05, 1.386, 2.0, 2 * np.log(11), 12.0])
def test_link_matches_twin_and_theorem3(seed, q):
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 30)
    theta_sq = rng.exponential(size=n) * 10.0 ** rng.uniform(-3, 3)
    theta_sq[rng.random(n) < 0.2] = 0.0
    penalty = rng.uniform(0, 1.5, size=n) * np.sqrt(theta_sq).max(initial=1.0)
    scale = 10.0 ** rng.uniform(-4, 4)
    got = link_coefficients(theta_sq, penalty, q, scale)
    np.testing.assert_allclose(got, link_coefficients_numpy(theta_sq, penalty, q, scale),
                               rtol=1e-12, atol=0)
    np.testing.assert_allclose(got, _theorem3(theta_sq, penalty, q, scale), rtol=1e-10,
                               atol=0)
    assert (got >= 0).all()


def test_link_extreme_magnitudes_do_not_overflow():
    theta_sq = np.array([1e300, 1e-300, 4.0])
    got = link_coefficients(theta_sq, np.zeros(3), 12.0, 1.0)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, link_coefficients_numpy(theta_sq, np.zeros(3), 12.0, 1.0))
    assert got[0] > 0


def test_link_all_thresholded_is_zero():
    got = link_coefficients(np.array([1.0, 4.0]), np.array([1.0, 3.0]), 2.5, 2.0)
    np.testing.assert_array_equal(got, [0.0, 0.0])


@pytest.mark.parametrize("seed", range(5))
def test_link_is_the_dual_averaging_step(seed):
    """w = coef theta minimises -<theta, w> + s/2 ||w||_{2,p}^2 + sum pen_m ||w_m||.

    With w_m along theta_m (optimal direction), over u_m = ||w_m|| >= 0.
    """
    rng = np.random.default_rng(seed)
    n, q, scale = 5, 2.7, 0.8
    p = q / (q - 1)
    norms = rng.uniform(0.5, 3.0, size=n)
    penalty = rng.uniform(0, 2.0, size=n)

    def objective(u):
        return -(norms - penalty) @ u + scale / 2 * np.sum(u ** p) ** (2 / p)

    u_star = link_coefficients(norms ** 2, penalty, q, scale) * norms
    best = minimize(objective, np.full(n, 0.5), bounds=[(0, None)] * n,
                    method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12})
    assert objective(u_star) <= best.fun + 1e-9
    np.testing.assert_allclose(u_star, best.x, atol=1e-4)


def _random_problem(rng, n_all, n_rows, n_kernels, n_classes, dtype):
    X = rng.normal(size=(n_all, 3))
    taus = 2.0 ** rng.uniform(-2, 3, size=n_kernels)
    gram = gaussian_kernel_stack(X, bandwidths=taus).astype(dtype)
    rows = np.sort(rng.choice(n_all, size=n_rows, replace=False)).astype(np.intp)
    labels = rng.integers(0, n_classes, size=n_rows).astype(np.intp)
    return gram, rows, labels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n_all, n_rows, n_kernels, n_classes",
                         [(1, 1, 1, 2), (2, 1, 3, 2), (7, 7, 1, 3), (13, 5, 4, 5),
                          (31, 29, 7, 11), (64, 40, 21, 3)])
@pytest.mark.parametrize("rows_kind", ["subset", "consecutive", "shuffled"])
@pytest.mark.parametrize("penalty", ["random", "zero"])
def test_epoch_matches_numpy_twin(dtype, n_all, n_rows, n_kernels, n_classes, rows_kind,
                                  penalty):
    """Both paths of the Cython epoch: kernel rows read in place (``rows`` one
    consecutive run) or gathered (a subset, or a run in another order), and
    the link's factors recomputed every step (a tail-sum penalty) or kept
    until theta moves (none)."""
    rng = np.random.default_rng(n_all * 100 + n_kernels)
    gram, rows, labels = _random_problem(rng, n_all, n_rows, n_kernels, n_classes, dtype)
    if rows_kind != "subset":
        rows = np.arange(n_all - n_rows, n_all, dtype=np.intp)
        if rows_kind == "shuffled":
            rows = rows[::-1].copy() if n_rows < 4 else rows[[0, 2, 1, *range(3, n_rows)]]
    scale = rng.uniform(0.5, 2.0, size=n_kernels)
    penalty_rate = (rng.uniform(0, 0.3, size=n_kernels) if penalty == "random"
                    else np.zeros(n_kernels))
    states = []
    for epoch in (mkl_epoch, mkl_epoch_numpy):
        dual = np.zeros((n_rows, n_classes))
        gram_dual = np.zeros((n_kernels, n_classes, n_rows))
        theta_sq, coef = np.zeros(n_kernels), np.zeros(n_kernels)
        out = []
        t = 0
        for it in range(3):
            order = np.random.default_rng(it).permutation(n_rows).astype(np.intp)
            out.append(epoch(gram, rows, labels, order, dual, gram_dual, theta_sq, scale,
                             penalty_rate, 0.05, 2.3, t, coef))
            t += n_rows
        states.append((dual, gram_dual, theta_sq, coef, out))
    (d1, g1, s1, c1, o1), (d2, g2, s2, c2, o2) = states
    np.testing.assert_array_equal(d1, d2)
    np.testing.assert_allclose(g1, g2, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(s1, s2, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(c1, c2, rtol=1e-9, atol=1e-12)
    assert [u for u, _ in o1] == [u for u, _ in o2]
    np.testing.assert_allclose([v for _, v in o1], [v for _, v in o2], rtol=1e-9)


def test_incremental_norms_equal_exact_norms():
    rng = np.random.default_rng(0)
    gram, rows, labels = _random_problem(rng, 50, 40, 5, 4, np.float64)
    scale = np.ones(5)
    dual = np.zeros((40, 4))
    gram_dual = np.zeros((5, 4, 40))
    theta_sq, coef = np.zeros(5), np.zeros(5)
    mkl_epoch(gram, rows, labels, np.arange(40, dtype=np.intp), dual, gram_dual, theta_sq,
              scale, np.zeros(5), 0.1, 2.0, 0, coef)
    sub = gram[:, rows][:, :, rows]
    exact = np.einsum("ik,mij,jk->m", dual, sub, dual)
    np.testing.assert_allclose(theta_sq, exact, rtol=1e-10)
    np.testing.assert_allclose(gram_dual, np.einsum("mij,jk->mki", sub, dual), rtol=1e-12)


@pytest.mark.parametrize("method", ["ufo", "conv", "smsd"])
def test_separable_toy_reaches_zero_training_error(method):
    X, y = make_blobs(n_samples=90, centers=3, cluster_std=0.5, random_state=0)
    clf = {"ufo": UFOMKLClassifier(C=100, random_state=0),
           "conv": ConvMKLClassifier(C=1e4, random_state=0),
           "smsd": SMSDMKLClassifier(C=100, beta=1e-4, random_state=0)}[method]
    clf.fit(X, y)
    assert clf.score(X, y) == 1.0
    assert clf.train_error_[-1] == 0.0


@pytest.mark.parametrize("beta", [0.0, 1e-3])
def test_objective_decreases_on_average(beta):
    X, y = load_iris(return_X_y=True)
    gram = gaussian_kernel_stack(X)
    r = tail_sums(gram, 4)
    fit = multiclass_mkl(gram, y, C=10, beta=beta, tail_sums=r, max_iter=30,
                         random_state=0)
    obj = fit.objective
    assert obj[20:].mean() < obj[:5].mean()
    assert obj[10:].mean() < obj[:10].mean()


def test_rows_subset_equals_copied_gram():
    X, y = load_iris(return_X_y=True)
    gram = gaussian_kernel_stack(X)
    rows = np.arange(0, 150, 2)
    a = multiclass_mkl(gram, y[rows], rows=rows, C=5, max_iter=5, random_state=1)
    sub = np.ascontiguousarray(gram[:, rows][:, :, rows])
    b = multiclass_mkl(sub, y[rows], C=5, max_iter=5, random_state=1)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    np.testing.assert_allclose(a.kernel_coef, b.kernel_coef, rtol=1e-12)
    test = np.arange(1, 150, 2)
    np.testing.assert_allclose(a.decision_function(gram[:, test][:, :, rows]),
                               b.decision_function(gram[:, test][:, :, rows]))
    np.testing.assert_allclose(a.decision_function_rows(gram, test),
                               b.decision_function(gram[:, test][:, :, rows]), rtol=1e-12)


def test_numpy_twin_fit_equals_cython_fit():
    X, y = load_iris(return_X_y=True)
    gram = gaussian_kernel_stack(X[::3], bandwidths=[0.5, 2.0, 8.0])
    r = tail_sums(gram, 2)
    kw = dict(C=3, beta=1e-3, tail_sums=r, max_iter=3, random_state=0)
    a = multiclass_mkl(gram, y[::3], **kw)
    b = multiclass_mkl(gram, y[::3], use_numpy=True, **kw)
    np.testing.assert_array_equal(a.dual_coef, b.dual_coef)
    np.testing.assert_allclose(a.objective, b.objective, rtol=1e-10)


@pytest.mark.parametrize("guard", ["floor", "spectral"])
def test_estimator_matches_solver_on_same_gram(guard):
    X, y = load_iris(return_X_y=True)
    taus = [0.25, 1.0, 4.0]
    # final="last_iterate": the solver's predictor (the default before "svc")
    clf = ConvMKLClassifier(C=50, zeta=2, bandwidths=taus, max_iter=5, random_state=0,
                            tail_sum_guard=guard, final="last_iterate").fit(X, y)
    # the estimator fits on the single-precision stack, predicts in float64
    gram = gaussian_kernel_stack(X, bandwidths=taus, dtype=np.float32)
    r = tail_sums(gram, 2)
    # the spectral guard: r_m raised to at least lambda_1(K_m), here from eigvalsh
    largest = (np.linalg.eigvalsh(gram.astype(np.float64))[:, -1] if guard == "spectral"
               else None)
    scale = conv_kernel_scale(r, [150.0] * 3, largest_eigenvalues=largest)
    if guard == "spectral":  # the widest kernel's tail sum is below its lambda_1
        assert scale[-1] == pytest.approx(1 / largest[-1]) and largest[-1] > r[-1]
    fit = multiclass_mkl(gram, y, C=50, kernel_scale=scale, max_iter=5, random_state=0)
    np.testing.assert_allclose(
        clf.decision_function(X),
        fit.decision_function(gaussian_kernel_stack(X, bandwidths=taus)), rtol=1e-9,
        atol=1e-12)
    np.testing.assert_allclose(clf.kernel_weights_, fit.kernel_weights, rtol=1e-12)
    np.testing.assert_allclose(clf.tail_sums_, r)
    assert clf.kernel_weights_.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("Est", [UFOMKLClassifier, ConvMKLClassifier, SMSDMKLClassifier])
def test_scale_bank_is_the_explicit_bank_of_the_training_samples(Est):
    from mcsparse.kernels import scale_bandwidths

    X, y = load_iris(return_X_y=True)
    X = 30.0 * X  # far from unit scale: the relative bank follows it
    a = Est(C=10, bandwidths="scale", max_iter=4, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.bandwidths_, scale_bandwidths(X))
    b = Est(C=10, bandwidths=scale_bandwidths(X), max_iter=4, random_state=0).fit(X, y)
    np.testing.assert_allclose(a.decision_function(X[::7]), b.decision_function(X[::7]))
    with pytest.raises(ValueError, match='None, "scale" or an array'):
        Est(bandwidths="Scale").fit(X, y)
    with pytest.raises(ValueError, match="zero variance"):
        Est(bandwidths="scale").fit(np.ones((6, 2)), [0, 1] * 3)


def test_smsd_with_zero_beta_is_ufo():
    X, y = load_iris(return_X_y=True)
    a = UFOMKLClassifier(C=10, max_iter=4, random_state=0).fit(X, y)
    b = SMSDMKLClassifier(C=10, beta=0.0, max_iter=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(a.dual_coef_, b.dual_coef_)
    np.testing.assert_allclose(a.kernel_coef_, b.kernel_coef_)


def test_smsd_penalty_switches_off_narrow_kernels():
    X, y = load_iris(return_X_y=True)
    # the paper's bank (the default before "scale"), narrowest first
    clf = SMSDMKLClassifier(C=10, beta=0.05, max_iter=5, random_state=0,
                            bandwidths="paper").fit(X, y)
    w = clf.kernel_weights_
    # narrow kernels have tail sums near n: they are switched off first
    assert w[:5].sum() == 0 and w.sum() == pytest.approx(1.0)
    assert (clf.tail_sums_[:5] > clf.tail_sums_[-5:]).all()


def test_default_q():
    assert default_q(3) == pytest.approx(2 * np.log(3))
    clf = UFOMKLClassifier(max_iter=1, random_state=0).fit(*load_iris(return_X_y=True))
    assert clf.q_ == pytest.approx(2 * np.log(3))


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(C=0), ValueError, "C must be >= 1e-100"),
    (dict(C=1e-308), ValueError, "C must be >= 1e-100"),
    (dict(C=np.nan), ValueError, "C must be finite"),
    (dict(C="1"), TypeError, "C must be a real number"),
    (dict(q=1.0), ValueError, "q must be > 1"),
    (dict(beta=-1.0), ValueError, "beta must be >= 0"),
    (dict(beta=1.0), ValueError, "needs tail_sums"),
    (dict(max_iter=0), ValueError, "max_iter"),
    (dict(max_iter=2.5), TypeError, "max_iter must be an integer"),
    (dict(C=1e101), ValueError, "C must be <= 1e"),
    (dict(kernel_scale=[1.0, 1e300]), ValueError, "kernel_scale must be <= 1e"),
    (dict(beta=1e99, tail_sums=[1.0, 100.0]), ValueError, r"beta \* tail_sums"),
    (dict(verbose="yes"), TypeError, "verbose must be an integer"),
    (dict(rows=[0, 0, 1]), ValueError, "must not repeat"),
    (dict(rows=[0, 1, 99]), ValueError, r"rows must lie in \[0, 6\)"),
    (dict(rows=[0.0, 1.0, 2.0]), TypeError, "integer"),
    (dict(tail_sums=[1.0]), ValueError, r"tail_sums must have shape \(2,\)"),
    (dict(tail_sums=[1.0, -1.0]), ValueError, "non-negative"),
    (dict(kernel_scale=[1.0, 0.0]), ValueError, "positive"),
])
def test_solver_rejects_bad_parameters(kwargs, err, match):
    gram = gaussian_kernel_stack(np.arange(12.0).reshape(6, 2), bandwidths=[1.0, 2.0])
    y = [0, 1, 2, 0, 1, 2]
    if "rows" in kwargs:
        y = y[:3]
    with pytest.raises(err, match=match):
        multiclass_mkl(gram, y, **kwargs)


def test_solver_rejects_bad_gram_and_labels():
    gram = gaussian_kernel_stack(np.arange(12.0).reshape(6, 2), bandwidths=[1.0, 2.0])
    y = [0, 1, 2, 0, 1, 2]
    with pytest.raises(ValueError, match="single class"):
        multiclass_mkl(gram, [1] * 6)
    with pytest.raises(ValueError, match="one label per row"):
        multiclass_mkl(gram, y[:5])
    with pytest.raises(ValueError, match="target type"):
        multiclass_mkl(gram, [0.5, 1.5, 0.1, 0.2, 0.3, 0.4])
    bad = gram.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match=r"gram\[1\] has NaN"):
        multiclass_mkl(bad, y)
    with pytest.raises(ValueError, match="shape"):
        multiclass_mkl(gram[0], y)
    with pytest.raises(TypeError, match="float32 or float64"):
        multiclass_mkl(gram.astype(np.int64), y)
    with pytest.raises(TypeError, match="NumPy array"):
        multiclass_mkl(gram.tolist(), y)
    with pytest.raises(ValueError, match="empty"):
        multiclass_mkl(np.zeros((0, 6, 6)), y)
    fit = multiclass_mkl(gram, y, max_iter=1)
    with pytest.raises(ValueError, match="n_kernels, n_samples, n_rows"):
        fit.decision_function(gram[:1])


def test_solver_rejects_indefinite_kernels():
    """A kernel with a negative eigenvalue used to give an all-zero model silently."""
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    indefinite = (Q * [3.0, 1.0, -1.0]) @ Q.T  # eigenvalues 3, 1, -1
    y3 = [0, 1, 2]
    with pytest.raises(ValueError, match=r"gram\[0\] is not positive semi-definite"):
        multiclass_mkl(indefinite[None], y3)
    # a sigmoid kernel beside a Gaussian one, on more rows than the sample
    X = rng.standard_normal((300, 4))
    y = np.arange(300) % 3
    sigmoid = np.tanh(0.5 * X @ X.T - 1.0)
    gauss = gaussian_kernel_stack(X, bandwidths=[1.0])[0]
    with pytest.raises(ValueError, match=r"gram\[1\] is not positive semi-definite"):
        multiclass_mkl(np.stack([gauss, sigmoid]), y)
    # Gaussian kernels pass, in float32 too (rounding stays within the tolerance)
    for dtype in (np.float32, np.float64):
        stack = gaussian_kernel_stack(X, bandwidths=[0.1, 1.0, 100.0]).astype(dtype)
        multiclass_mkl(stack, y, max_iter=1)


@pytest.mark.parametrize("kwargs, err, match", [
    (dict(theta_sq=[1.0, np.inf]), ValueError, "theta_sq must be finite"),
    (dict(theta_sq=[-1.0, 1.0]), ValueError, "theta_sq must be non-negative"),
    (dict(theta_sq=[[1.0]]), ValueError, "1-D"),
    (dict(penalty=[1.0]), ValueError, r"penalty must have shape \(2,\)"),
    (dict(q=0.5), ValueError, "q must be > 1"),
    (dict(scale=0.0), ValueError, "scale must be > 0"),
    (dict(theta_sq=["a", "b"]), TypeError, "real numbers"),
])
def test_link_rejects_bad_input(kwargs, err, match):
    args = dict(theta_sq=[1.0, 2.0], penalty=[0.0, 0.0], q=2.0, scale=1.0) | kwargs
    with pytest.raises(err, match=match):
        link_coefficients(**args)


@pytest.mark.parametrize("Est", [UFOMKLClassifier, ConvMKLClassifier, SMSDMKLClassifier])
def test_estimators_reject_bad_input(Est):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="at least 2 classes"):
        Est().fit(X, np.zeros(150))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Est().fit(bad, y)
    clf = Est(max_iter=1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :3])
    if Est is not UFOMKLClassifier:
        with pytest.raises(ValueError, match="zeta=150"):
            Est(zeta=150).fit(X, y)
        with pytest.raises(TypeError, match="zeta must be an integer"):
            Est(zeta=2.0).fit(X, y)
    with pytest.raises(ValueError, match="bandwidths"):
        Est(bandwidths=[1.0, -1.0]).fit(X, y)


def test_conv_kernel_scale_spectral_guard():
    r, traces = np.array([90.0, 20.0, 0.5]), np.full(3, 100.0)
    largest = np.array([3.0, 40.0, 99.0])
    np.testing.assert_allclose(conv_kernel_scale(r, traces, largest_eigenvalues=largest),
                               1 / np.array([90.0, 40.0, 99.0]))
    np.testing.assert_allclose(conv_kernel_scale(r, traces), 1 / np.array([90.0, 20.0, 1.0]))
    with pytest.raises(ValueError, match="same shape"):
        conv_kernel_scale(r, traces, largest_eigenvalues=largest[:2])
    with pytest.raises(ValueError, match="non-negative"):
        conv_kernel_scale(r, traces, largest_eigenvalues=-largest)
    with pytest.raises(ValueError, match="NaN"):
        conv_kernel_scale(r, traces, largest_eigenvalues=[1.0, np.nan, 2.0])
    with pytest.raises(TypeError, match="real"):
        conv_kernel_scale(r, traces, largest_eigenvalues=["a", "b", "c"])
    with pytest.raises(ValueError, match="tail_sums must be non-negative"):
        conv_kernel_scale(-r, traces)
    with pytest.raises(ValueError, match="overflow"):
        conv_kernel_scale([0.0], [5e-324])
    from fractions import Fraction
    assert conv_kernel_scale(r, traces, Fraction(1, 10)).dtype == np.float64
    with pytest.raises(ValueError, match="tail_sum_guard must be"):
        ConvMKLClassifier(tail_sum_guard="trace").fit(*load_iris(return_X_y=True))
    with pytest.raises(TypeError, match="tail_sum_guard must be"):
        ConvMKLClassifier(tail_sum_guard=None).fit(*load_iris(return_X_y=True))


def test_conv_kernel_scale_floor():
    scale = conv_kernel_scale([100.0, 1e-9], [100.0, 100.0], tail_sum_floor=1e-2)
    np.testing.assert_allclose(scale, [0.01, 1.0])
    with pytest.raises(ValueError, match="tail_sum_floor"):
        conv_kernel_scale([1.0], [1.0], tail_sum_floor=0)


@pytest.mark.parametrize("Est, match", [(ConvMKLClassifier, "normalisation disappears"),
                                        (SMSDMKLClassifier, "penalty .* vanishes")])
def test_vanishing_tail_sums_are_reported(Est, match):
    """Three distinct points: kernels of rank 3, so zeta >= 3 leaves zero tail sums."""
    X = np.repeat(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), 10, axis=0)
    y = np.arange(30) % 3
    # the paper's bank and the last iterate (the defaults before): with the final
    # SVM, weights that three epochs leave at zero would warn about that instead
    old = dict(bandwidths="paper", final="last_iterate")
    with pytest.warns(UserWarning, match=match):
        Est(zeta=5, max_iter=3, **old).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # zeta below the rank: quiet
        Est(zeta=2, max_iter=3, **old).fit(X, y)


def test_stopping_rule():
    X, y = load_iris(return_X_y=True)
    gram = gaussian_kernel_stack(X)
    full = multiclass_mkl(gram, y, C=10, max_iter=40, tol=None, random_state=0)
    assert full.n_iter == 40 and full.objective.shape == (40,)
    early = multiclass_mkl(gram, y, C=10, max_iter=40, tol=0.5, n_iter_no_change=2,
                           random_state=0)
    assert early.n_iter < 40
    # the stop comes after n_iter_no_change epochs without a 50% improvement
    obj = early.objective
    best = np.minimum.accumulate(obj)
    assert obj[-2] > 0.5 * best[-3] and obj[-1] > 0.5 * best[-2]
    assert early.n_iter >= 4  # (on these data) and it did not stop an epoch earlier:
    assert not (obj[-3] > 0.5 * best[-4] and obj[-2] > 0.5 * best[-3])
    # the epochs it ran are the first epochs of the full run
    np.testing.assert_allclose(obj, full.objective[:early.n_iter])
    with pytest.raises(ValueError, match="n_iter_no_change"):
        multiclass_mkl(gram, y, n_iter_no_change=0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        multiclass_mkl(gram, y, tol=-1.0)


def _iris_stack():
    X, y = load_iris(return_X_y=True)
    return X, y, gaussian_kernel_stack(X[::3], bandwidths=[0.25, 1.0, 4.0]), y[::3]


def test_estimators_pass_tol_and_n_iter_no_change_on():
    X, y, _, _ = _iris_stack()
    runs = [UFOMKLClassifier(max_iter=40, random_state=0, **kw).fit(X, y).n_iter_
            for kw in ({"tol": None}, {"n_iter_no_change": 1})]
    assert runs[0] == 40 and runs[1] < 40
    with pytest.raises(ValueError, match="tol must be >= 0"):
        UFOMKLClassifier(tol=-1).fit(X, y)


def test_link_stays_finite_where_its_value_is_and_says_when_not():
    np.testing.assert_allclose(link_coefficients([1e308], [0.0], 2.0, 1e-308), [1e308])
    with pytest.raises(ValueError, match="overflow"):
        link_coefficients([1.0], [0.0], 2.0, 1e-320)


def test_prediction_refuses_bad_stacks_and_rows():
    _, _, gram, y = _iris_stack()
    fit = multiclass_mkl(gram, y[:40], rows=np.arange(40), C=10, max_iter=3, random_state=0)
    with pytest.raises(ValueError, match="NaN"):
        fit.decision_function(np.full((3, 5, 40), np.nan))
    with pytest.raises(TypeError, match="float32 or float64"):
        fit.decision_function(gram[:, 40:, :40].astype(complex))
    with pytest.raises(TypeError, match="NumPy array"):
        fit.decision_function_rows(gram.tolist(), [45])
    with pytest.raises(ValueError, match="stack the model was fitted on"):
        fit.decision_function_rows(gram[:1], [45])
    with pytest.raises(ValueError, match=r"test_rows must lie in"):
        fit.decision_function_rows(gram, [50])
    with pytest.raises(ValueError, match="test_rows must be a non-empty 1-D"):
        fit.decision_function_rows(gram, 45)
    # repeated test rows are a harmless request
    twice = fit.decision_function_rows(gram, [45, 45])
    np.testing.assert_array_equal(twice[0], twice[1])


def test_solver_refuses_a_non_symmetric_kernel():
    _, _, gram, y = _iris_stack()
    bad = gram.copy()
    bad[0, 0, 1] += 0.5
    with pytest.raises(ValueError, match=r"gram\[0\] is not symmetric"):
        multiclass_mkl(bad, y)

def test_estimators_check_bandwidths_and_tail_sum_floor():
    """Checked like gaussian_kernel_stack's arguments."""
    X, y, _, _ = _iris_stack()
    with pytest.raises(ValueError, match="bandwidths must be a scalar or a 1-D"):
        UFOMKLClassifier(bandwidths=[[1.0, 2.0]]).fit(X, y)
    with pytest.raises(TypeError, match="bandwidths must hold real numbers"):
        UFOMKLClassifier(bandwidths=[True, False]).fit(X, y)
    with pytest.raises(TypeError, match="tail_sum_floor must be a real number"):
        ConvMKLClassifier(tail_sum_floor="a").fit(X, y)


def test_default_q_needs_two_classes():
    with pytest.raises(ValueError, match="n_classes must be >= 2"):
        default_q(1)
    with pytest.raises(TypeError, match="n_classes must be an integer"):
        default_q(2.0)


@pytest.mark.parametrize("Est", [UFOMKLClassifier, ConvMKLClassifier, SMSDMKLClassifier])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_final_svc_is_the_svm_on_the_learnt_combined_kernel(Est, n_classes):
    from sklearn.svm import SVC

    X, y = load_iris(return_X_y=True)
    keep = y < n_classes
    X, y = X[keep], np.array(["a", "b", "c"])[y[keep]]
    taus = [0.25, 1.0, 4.0]
    last = Est(C=10, bandwidths=taus, max_iter=5, random_state=0,
               final="last_iterate").fit(X, y)
    clf = Est(C=10, bandwidths=taus, max_iter=5, random_state=0, final="svc").fit(X, y)
    # the kernel learning is the same; only the predictor changes
    np.testing.assert_array_equal(clf.kernel_weights_, last.kernel_weights_)
    np.testing.assert_array_equal(clf.dual_coef_, last.dual_coef_)
    assert last.final_svc_ is None and clf.final_svc_ is not None
    # reference: SVC on sum_m w_m K_m, built here from the bank (the
    # training stack in single precision, as the estimators store it)
    w = clf.kernel_weights_
    K = np.tensordot(w, gaussian_kernel_stack(X, bandwidths=taus, dtype=np.float32)
                     .astype(np.float64), axes=1)
    ref = SVC(kernel="precomputed", C=10).fit(K, y)
    X_new = X[::3] + 0.05
    K_new = np.tensordot(w, gaussian_kernel_stack(X_new, X, bandwidths=taus), axes=1)
    np.testing.assert_array_equal(clf.predict(X_new), ref.predict(K_new))
    scores = clf.decision_function(X_new)
    np.testing.assert_allclose(scores, ref.decision_function(K_new), rtol=1e-9, atol=1e-9)
    assert scores.shape == ((len(X_new),) if n_classes == 2 else (len(X_new), n_classes))
    np.testing.assert_array_equal(clf.final_support_vectors_, X[ref.support_])


def test_final_svc_keeps_the_zero_model_when_every_kernel_is_switched_off():
    X, y = load_iris(return_X_y=True)
    with pytest.warns(UserWarning, match="kernel weights are all zero"):
        clf = SMSDMKLClassifier(C=10, beta=1e6, max_iter=2, random_state=0,
                                final="svc").fit(X, y)
    assert clf.final_svc_ is None and not clf.kernel_weights_.any()
    np.testing.assert_array_equal(clf.decision_function(X), 0.0)


@pytest.mark.parametrize("Est", [UFOMKLClassifier, ConvMKLClassifier, SMSDMKLClassifier])
@pytest.mark.parametrize("final, error", [("SVC", ValueError), ("average", ValueError),
                                          (None, TypeError), (1, TypeError)])
def test_estimators_refuse_an_unknown_final(Est, final, error):
    X, y = load_iris(return_X_y=True)
    with pytest.raises(error, match="final must be one of"):
        Est(final=final).fit(X, y)


@pytest.mark.parametrize("Est", [UFOMKLClassifier, ConvMKLClassifier, SMSDMKLClassifier])
@pytest.mark.parametrize("bad", [dict(C=-1.0), dict(final="sv"), dict(bandwidths=[0.0])])
def test_a_failed_refit_leaves_the_fitted_model_whole(Est, bad):
    """A refit that fails on its parameters changes none of the fitted attributes."""
    X, y = load_iris(return_X_y=True)
    clf = Est(final="svc", random_state=0, max_iter=3).fit(X, y)
    before = clf.predict(X[::10])
    with pytest.raises((ValueError, TypeError)):
        clf.set_params(**bad).fit(X, y + 10)
    np.testing.assert_array_equal(clf.classes_, [0, 1, 2])
    np.testing.assert_array_equal(clf.predict(X[::10]), before)


def test_tail_sums_are_computed_once_per_training_set_and_bank(monkeypatch):
    """A search over C fits on the same folds: the eigenvalues are not recomputed."""
    import mcsparse.kernels._gaussian as mkl_module
    from mcsparse.kernels import forget_tail_sums

    X, y = load_iris(return_X_y=True)
    X = X + 1e-3 * np.arange(4)  # data no other test fits
    X2 = X.copy()
    X2[0, 0] += 0.5  # other data: computed, and equal to a fresh computation
    expected = tail_sums(gaussian_kernel_stack(X2, dtype=np.float32), 4)
    calls = []
    original = mkl_module._tail_sums

    def counting(gram, *args, **kwargs):
        calls.append(gram.shape)
        return original(gram, *args, **kwargs)

    monkeypatch.setattr(mkl_module, "_tail_sums", counting)
    forget_tail_sums()
    # the paper's bank (the default before "scale"), as ``expected``
    fits = [ConvMKLClassifier(C=C, max_iter=2, random_state=0, bandwidths="paper").fit(X, y)
            for C in (1, 10)]
    assert len(calls) == 1
    np.testing.assert_array_equal(fits[0].tail_sums_, fits[1].tail_sums_)
    SMSDMKLClassifier(max_iter=2, random_state=0, bandwidths="paper").fit(
        X, y)  # other zetas: computed
    assert len(calls) == 2
    clf = ConvMKLClassifier(max_iter=2, random_state=0, bandwidths="paper").fit(X2, y)
    assert len(calls) == 3
    np.testing.assert_allclose(clf.tail_sums_, expected, rtol=1e-12)
    ConvMKLClassifier(max_iter=2, bandwidths="scale", random_state=0).fit(X2, y)
    assert len(calls) == 4  # another bank
    for i in range(mkl_module._TAIL_SUMS_REMEMBERED + 3):
        Xi = X[:20] + i  # other data each time
        mkl_module._remembered_tail_sums(gaussian_kernel_stack(Xi), [2], Xi,
                                         default_bandwidths())
    assert len(mkl_module._tail_sums_memo) == mkl_module._TAIL_SUMS_REMEMBERED
    assert forget_tail_sums() == mkl_module._TAIL_SUMS_REMEMBERED
    before = len(calls)
    ConvMKLClassifier(C=1, max_iter=2, random_state=0).fit(X, y)
    assert len(calls) == before + 1  # forgotten: computed again


@pytest.mark.parametrize("Est", [ConvMKLClassifier, SMSDMKLClassifier])
def test_memory_none_computes_and_a_joblib_cache_is_shared(Est, monkeypatch, tmp_path):
    """memory=None: the tail sums every fit; a joblib cache (a path or a Memory): once
    for every estimator that uses it, even after the in-process memo is forgotten."""
    import joblib

    import mcsparse.kernels._gaussian as mkl_module
    from mcsparse.kernels import forget_tail_sums

    X, y = load_iris(return_X_y=True)
    X = X + 2e-3 * np.arange(4)  # data no other test fits
    calls = []
    original = mkl_module._tail_sums
    monkeypatch.setattr(mkl_module, "_tail_sums",
                        lambda gram, *a, **k: calls.append(1) or original(gram, *a, **k))
    forget_tail_sums()
    fits = [Est(C=C, max_iter=2, random_state=0, memory=None).fit(X, y) for C in (1, 10)]
    assert len(calls) == 2 and forget_tail_sums() == 0  # nothing kept
    for memory in (str(tmp_path), joblib.Memory(str(tmp_path), verbose=0)):
        forget_tail_sums()
        cached = Est(C=10, max_iter=2, random_state=0, memory=memory).fit(X, y)
        np.testing.assert_array_equal(cached.tail_sums_, fits[0].tail_sums_)
        np.testing.assert_array_equal(cached.predict(X), fits[1].predict(X))
    assert len(calls) == 3  # computed by the first, read from disk by the second
    with pytest.raises(TypeError, match="memory must be None, a str or an object with "
                                        "the methods cache, got 3"):
        Est(memory=3).fit(X, y)


@pytest.mark.parametrize("Est, final", [(UFOMKLClassifier, "last_iterate"),
                                        (ConvMKLClassifier, "svc"),
                                        (SMSDMKLClassifier, "svc")])
def test_defaults_are_the_scale_bank_and_the_final_svm_where_it_wins(Est, final):
    """The configuration the user guide recommends is the default; the paper's bank
    ("paper", or None as before) and predictor stay one argument away."""
    from mcsparse.kernels import default_bandwidths, scale_bandwidths

    X, y = load_iris(return_X_y=True)
    assert Est().bandwidths == "scale" and Est().final == final
    fitted = Est(C=10, max_iter=3, random_state=0).fit(X, y)
    np.testing.assert_allclose(fitted.bandwidths_, scale_bandwidths(X))
    assert (fitted.final_svc_ is not None) == (final == "svc")
    paper = Est(C=10, max_iter=3, random_state=0, bandwidths="paper",
                final="last_iterate").fit(X, y)
    none = Est(C=10, max_iter=3, random_state=0, bandwidths=None,
               final="last_iterate").fit(X, y)
    np.testing.assert_array_equal(paper.bandwidths_, default_bandwidths())
    np.testing.assert_array_equal(paper.decision_function(X), none.decision_function(X))
