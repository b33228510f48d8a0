"""The refit engine: its BLAS module against the NumPy twins, the bordering against
the exact inverse, solves against SciPy's minimiser, and what a stop reports."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.loss import BinaryLogisticLoss, Frobenius, SmoothedLinfOne
from mcsparse.solvers import shareboost_path
from mcsparse.solvers._columns import SelectedColumns
from mcsparse.solvers._objective import LinearObjective
from mcsparse.solvers._refit import (
    CarriedCurvature,
    solve,
    symm_numpy,
    symv_numpy,
    syr2_numpy,
    syrk_numpy,
    two_loop_numpy,
)
from mcsparse.solvers._refit_fast import symm, symv, syr2, syrk, two_loop


@pytest.mark.parametrize("m, capacity", [(0, 3), (1, 1), (5, 5), (7, 12), (40, 64)])
def test_blas_module_matches_twins(m, capacity):
    rng = np.random.default_rng(m)
    H = np.asfortranarray(rng.standard_normal((capacity, capacity)))
    x, a = rng.standard_normal(m), rng.standard_normal(m)
    V = np.asfortranarray(rng.standard_normal((m, 3)))
    out = np.empty(m)
    symv(H, m, x, out)
    np.testing.assert_allclose(out, symv_numpy(H, m, x), rtol=1e-12, atol=1e-12)
    out = np.empty((m, 3), order="F")
    symm(H, m, V, out)
    np.testing.assert_allclose(out, symm_numpy(H, m, V), rtol=1e-12, atol=1e-12)
    upper = np.triu_indices(m)
    for update, twin, args in ((syr2, syr2_numpy, (a, x)), (syrk, syrk_numpy, (V,))):
        G = H.copy(order="F")
        update(G, m, *args)
        want = twin(H, m, *args)
        np.testing.assert_allclose(G[:m, :m][upper], want[:m, :m][upper], rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_array_equal(G[m:], H[m:])  # outside the leading block: untouched


def _pairs(rng, m, n, dtype=np.float64):
    pairs = []
    for _ in range(m):
        s = rng.standard_normal(n)
        y = s + 0.3 * rng.standard_normal(n)
        pairs.append((s.astype(dtype), y.astype(dtype), y @ s if n else 1.0))
    return pairs


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("m", [0, 1, 2, 7, 100])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 9, 1001])  # four partial sums: the tails
def test_two_loop_matches_twin(m, n, dtype):
    """Float32 pairs are widened to float64 entry by entry: the same sums as the twin's."""
    rng = np.random.default_rng(10 * m + n)
    pairs = _pairs(rng, m, n, dtype)
    q = rng.standard_normal(n)
    got, want = q.copy(), q.copy()
    two_loop(pairs, got, 0.7)
    two_loop_numpy(pairs, want, 0.7)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * max(np.abs(want).max(initial=0), 1))


def test_two_loop_is_the_bfgs_inverse_hessian_of_its_pairs():
    """One pair: H = (I - rho s y^T) gamma (I - rho y s^T) + rho s s^T, by brute force."""
    rng = np.random.default_rng(5)
    (s, y, ys), = _pairs(rng, 1, 6)
    rho, eye = 1.0 / ys, np.eye(6)
    H = (eye - rho * np.outer(s, y)) @ (0.4 * eye) @ (eye - rho * np.outer(y, s)) + rho * np.outer(s, s)
    q = rng.standard_normal(6)
    want = H @ q
    q32 = q.copy()
    two_loop([(s, y, ys)], q, 0.4)
    np.testing.assert_allclose(q, want, rtol=1e-12)
    # float32 vectors: the BFGS matrix of the rounded vectors, with the ys given
    s, y = s.astype(np.float32).astype(np.float64), y.astype(np.float32).astype(np.float64)
    H = (eye - rho * np.outer(s, y)) @ (0.4 * eye) @ (eye - rho * np.outer(y, s)) + rho * np.outer(s, s)
    want = H @ q32
    two_loop([(s.astype(np.float32), y.astype(np.float32), ys)], q32, 0.4)
    np.testing.assert_allclose(q32, want, rtol=1e-12)


def test_two_loop_refuses_bad_pairs():
    q = np.ones(4)
    with pytest.raises(ValueError, match="pair 1 has vectors of 3"):
        two_loop([(np.ones(4), np.ones(4), 4.0), (np.ones(3), np.ones(4), 3.0)], q, 1.0)
    with pytest.raises(TypeError, match="pair 0 must be a tuple"):
        two_loop([(np.ones(4), np.ones(4))], q, 1.0)
    with pytest.raises(ValueError, match="pair 0 has an s of dtype float32 and a y of dtype float64"):
        two_loop([(np.ones(4, dtype=np.float32), np.ones(4), 4.0)], q, 1.0)
    with pytest.raises(ValueError, match="pair 0 has an s of dtype float64 and a y of dtype float32"):
        two_loop([(np.ones(4), np.ones(4, dtype=np.float32), 4.0)], q, 1.0)
    with pytest.raises(ValueError, match="pair 1 has vectors of dtype float64 and pair 0"):
        two_loop([(np.ones(4, dtype=np.float32), np.ones(4, dtype=np.float32), 4.0),
                  (np.ones(4), np.ones(4), 4.0)], q, 1.0)
    with pytest.raises(ValueError, match="pair 1 has vectors of dtype float32 and pair 0"):
        two_loop([(np.ones(4), np.ones(4), 4.0),
                  (np.ones(4, dtype=np.float32), np.ones(4, dtype=np.float32), 4.0)], q, 1.0)
    with pytest.raises(ValueError, match="pair 0 has vectors of dtype float16"):
        two_loop([(np.ones(4, dtype=np.float16), np.ones(4, dtype=np.float16), 4.0)], q, 1.0)
    with pytest.raises(ValueError, match="pair 0 has vectors of 3"):
        two_loop([(np.ones(3, dtype=np.float32), np.ones(4, dtype=np.float32), 4.0)], q, 1.0)
    with pytest.raises(ValueError, match="contiguous"):
        two_loop([(np.ones(8, dtype=np.float32)[::2], np.ones(4, dtype=np.float32), 4.0)], q, 1.0)
    with pytest.raises(TypeError, match="pair 0 must be a tuple"):
        two_loop([(None, np.ones(4), 1.0)], q, 1.0)
    with pytest.raises(TypeError, match="pair 0 must be a tuple"):
        two_loop([(np.ones(4), np.ones(4), np.array([4.0]))], q, 1.0)
    np.testing.assert_array_equal(q, np.ones(4))
    base = np.arange(1.0, 6.0)  # q and y overlapping: refused, q left as it was
    with pytest.raises(ValueError, match="overlaps q"):
        two_loop([(np.ones(4), base[:4], 4.0)], base[1:], 1.0)
    np.testing.assert_array_equal(base, np.arange(1.0, 6.0))


def test_lbfgs_pairs_are_float32_unless_beyond_its_range():
    """Float32 pairs; a pair that float32 cannot hold (1e39) turns all pairs to
    float64 instead of giving infinities and a NaN direction."""
    rng = np.random.default_rng(6)
    curvature = CarriedCurvature(max_dense=0)
    curvature.n_params = 5
    s, y, _ = _pairs(rng, 1, 5)[0]
    curvature.update(s, y)
    assert curvature.pairs[0][0].dtype == np.float32
    assert curvature.scale == (s @ y) / (y @ y)  # float64, before the rounding
    g = rng.standard_normal(5)
    want = g.copy()
    two_loop_numpy([(s.astype(np.float32), y.astype(np.float32), s @ y)], want, curvature.scale)
    np.testing.assert_allclose(curvature.direction(g), -want, rtol=1e-12)
    big_s, big_y = 1e-3 * rng.standard_normal(5), 1e39 * np.array([4.0, 10.0, -2.0, 1.0, 3.0])
    big_s = np.abs(big_s) * np.sign(big_y)  # y @ s > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no overflow warning either
        curvature.update(big_s, big_y)
    assert curvature.pair_dtype == np.float64
    assert all(v.dtype == np.float64 for p in curvature.pairs for v in p[:2])
    d = curvature.direction(g)
    assert np.isfinite(d).all() and g @ d < 0


def test_a_curvature_saved_with_float64_pairs_goes_on_with_them():
    """A curvature pickled before the pairs were float32 (no ``scale``): its pairs
    stay float64 and its direction is the one their two-loop gives."""
    import pickle

    rng = np.random.default_rng(7)
    old = CarriedCurvature(max_dense=0)
    old.n_params = 6
    old.pairs = _pairs(rng, 3, 6)
    del old.__dict__["scale"], old.__dict__["pair_dtype"]
    loaded = pickle.loads(pickle.dumps(old))
    g = rng.standard_normal(6)
    want = g.copy()
    s, y, ys = old.pairs[-1]
    two_loop_numpy(old.pairs, want, ys / (y @ y))
    np.testing.assert_allclose(loaded.direction(g), -want, rtol=1e-12)
    loaded.update(*_pairs(rng, 1, 6)[0][:2])
    assert loaded.pair_dtype == np.float64 and loaded.pairs[-1][0].dtype == np.float64
    assert loaded.copy().scale == loaded.scale


def test_blas_module_refuses_bad_shapes():
    H = np.asfortranarray(np.eye(3))
    with pytest.raises(ValueError, match="outside"):
        symv(H, 4, np.ones(4), np.empty(4))
    with pytest.raises(ValueError, match="entries"):
        symv(H, 2, np.ones(3), np.empty(2))
    with pytest.raises(ValueError, match="square"):
        syr2(np.asfortranarray(np.ones((3, 2))), 1, np.ones(1), np.ones(1))
    with pytest.raises(ValueError, match="rows"):
        syrk(H, 2, np.asfortranarray(np.ones((3, 1))))
    with pytest.raises(ValueError, match="shape"):
        symm(H, 2, np.asfortranarray(np.ones((2, 2))), np.empty((2, 3), order="F"))


def _objective(seed=0, n=120, d=6, k=3, penalty=Frobenius(0.05), fit_intercept=True,
               loss=None, scales=None):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if scales is not None:
        X = X * scales
    W = rng.standard_normal((k, d))
    y = np.argmax(X @ W.T + 1.5 * rng.standard_normal((n, k)), axis=1)
    if loss is not None and loss.binary:
        y = (y == 0).astype(int)
        k = 2
    store = SelectedColumns(n, d)
    store.put(X, 0, center=fit_intercept)
    return LinearObjective(store, y, n_classes=k, loss=loss, penalty=penalty,
                           fit_intercept=fit_intercept)


def test_bordering_is_the_exact_inverse_when_the_old_block_is():
    # no intercept and a penalty: no flat direction, the Hessian is invertible
    obj = _objective(fit_intercept=False)
    x = np.random.default_rng(1).standard_normal(obj.n_params(6)) * 0.3
    x4 = x[:obj.n_params(4)]
    curvature = CarriedCurvature()
    obj.value_grad(x4, 4)
    curvature.reset(obj, 4, 0)  # the exact inverse on 4 columns
    obj.value_grad(np.concatenate([x4, np.zeros(2 * obj.n_scores)]), 6)
    curvature.extend(obj, 4, 6, 0)  # bordered by the exact blocks of 2 more
    H = curvature.H[:x.size, :x.size]
    H = np.triu(H) + np.triu(H, 1).T
    padded = np.concatenate([x4, np.zeros(2 * obj.n_scores)])
    obj.value_grad(padded, 6)
    exact = np.column_stack([obj.hessian_product(e, 6) for e in np.eye(x.size)])
    np.testing.assert_allclose(H, np.linalg.inv(exact), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("value", [np.nan, np.inf, 1e200])
def test_bordering_refuses_a_hessian_whose_products_overflow(value):
    """Entries above sqrt(float64 max) (squares overflow) are refused like non-finite ones."""
    obj = _objective(fit_intercept=False)
    obj.value_grad(np.zeros(obj.n_params(4)), 4)
    curvature = CarriedCurvature()
    curvature.reset(obj, 4, 0)
    E = obj.hessian_columns(3, 4)
    E[0, 0] = value
    with pytest.raises(ValueError, match="rescale X"):
        curvature._border(E, curvature.n_params - obj.n_scores, curvature.n_params)
    E[0, 0] = 1e150  # below the limit: taken
    curvature._border(E, curvature.n_params - obj.n_scores, curvature.n_params)


@pytest.mark.parametrize("kw", [dict(), dict(penalty=SmoothedLinfOne(0.05, 5.0)),
                                dict(fit_intercept=False), dict(penalty=None, n=300),
                                dict(loss=BinaryLogisticLoss(), penalty=Frobenius(0.02))])
def test_solve_reaches_scipys_minimum(kw):
    obj = _objective(**kw)
    m = obj.n_params(6)
    ref = minimize(lambda z: obj.value_grad(z, 6), np.zeros(m), jac=True, method="BFGS",
                   options={"gtol": 1e-11, "maxiter": 5000})
    curvature = CarriedCurvature()
    x0 = np.zeros(m)
    obj.value_grad(x0, 6)
    curvature.reset(obj, 6, 0)
    result = solve(obj, x0, 6, gtol=1e-10, max_iter=200, curvature=curvature)
    assert result.status == "ok"
    assert np.abs(result.grad).max() <= 1e-10
    np.testing.assert_allclose(result.value, ref.fun, rtol=1e-12)
    W, b = obj.unpack(result.params, 6)
    W_ref, b_ref = obj.unpack(ref.x, 6)
    np.testing.assert_allclose(W_ref - W_ref.mean(axis=0), W - W.mean(axis=0), atol=1e-6)


def test_solve_from_scratch_in_lbfgs_mode():
    obj = _objective(penalty=Frobenius(0.05))
    curvature = CarriedCurvature(max_dense=5)  # too small: pairs instead
    x0 = np.zeros(obj.n_params(6))
    obj.value_grad(x0, 6)
    curvature.reset(obj, 6, 0)
    assert not curvature.dense
    result = solve(obj, x0, 6, gtol=1e-9, max_iter=500, curvature=curvature)
    assert result.status == "ok" and np.abs(result.grad).max() <= 1e-9


@pytest.mark.parametrize("growth, dense", [(2, True), (13, True), (14, False)])
def test_a_round_adding_many_coefficients_leaves_the_dense_mode(growth, dense, monkeypatch):
    """The bordering goes on while a round adds at most MAX_DENSE_GROWTH coefficients
    (patched to 39 here: 13 columns of 3 scores); a wider round switches to L-BFGS, and
    the solve converges either way."""
    from mcsparse.solvers import _refit

    monkeypatch.setattr(_refit, "MAX_DENSE_GROWTH", 39)  # 13 columns x 3 scores
    obj = _objective(d=20, penalty=Frobenius(0.05))
    curvature = CarriedCurvature()
    x = np.zeros(obj.n_params(2))
    obj.value_grad(x, 2)
    curvature.reset(obj, 2, 0)
    assert curvature.dense
    p = 2 + growth
    x = np.concatenate([x, np.zeros(obj.n_scores * growth)])
    obj.value_grad(x, p)
    curvature.extend(obj, 2, p, 0)
    assert curvature.dense == dense and curvature.n_params == obj.n_params(p)
    result = solve(obj, x, p, gtol=1e-9, max_iter=500, curvature=curvature)
    assert result.status == "ok" and np.abs(result.grad).max() <= 1e-9


def test_a_stop_with_a_large_gradient_is_never_ok():
    obj = _objective()
    x0 = np.zeros(obj.n_params(6))
    curvature = CarriedCurvature()
    obj.value_grad(x0, 6)
    curvature.reset(obj, 6, 0)
    result = solve(obj, x0, 6, gtol=1e-8, max_iter=1, curvature=curvature)
    assert result.status == "max_iter" and np.abs(result.grad).max() > 1e-8
    # a tolerance below float64's reach on these data: the line search gives up
    result = solve(obj, x0, 6, gtol=1e-30, max_iter=10_000, curvature=curvature)
    assert result.status == "failed" and result.n_iter < 10_000


def test_badly_scaled_columns_with_a_penalty_converge_or_say_so():
    """Columns scaled 1e3 to 1e-3 with a penalty: the refit reaches the tolerance
    (an L-BFGS stopped on its function-value test 1.3e-5 above the optimum)."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 6)) * np.logspace(3, -3, 6)
    y = rng.integers(0, 3, 300)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # no stop with a large gradient
        path = shareboost_path(X, y, n_classes=3, n_rounds=6, alpha=1e-3, tol=1e-8)
    assert path.n_refits_not_converged == 0
    obj = LinearObjective(X[:, path.selected_features], y, n_classes=3, penalty=Frobenius(1e-3))
    ref = minimize(lambda z: obj.value_grad(z, 6), np.zeros(obj.n_params(6)), jac=True,
                   method="L-BFGS-B", options={"gtol": 1e-14, "ftol": 0, "maxiter": 100_000})
    assert path.train_loss[-1] <= ref.fun + 1e-9


def test_warm_start_keeps_the_curvature_and_equals_one_long_fit_bitwise():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 12))
    y = np.argmax(X[:, :3] + rng.standard_normal((200, 3)), axis=1)
    one = ShareBoostClassifier(n_features_to_select=8, alpha=0.01).fit(X, y)
    warm = ShareBoostClassifier(n_features_to_select=4, alpha=0.01, warm_start=True).fit(X, y)
    assert warm._path.curvature is not None and warm._path.params is not None
    warm.set_params(n_features_to_select=8).fit(X, y)
    np.testing.assert_array_equal(warm.coef_, one.coef_)
    np.testing.assert_array_equal(warm.train_loss_, one.train_loss_)
    assert one._path.curvature is None  # kept only when a warm start may follow


def test_few_iterations_a_round_on_a_long_path():
    """The point of the engine: the curvature carried from round to round."""
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 60))
    y = np.argmax(X[:, :10] @ rng.standard_normal((10, 5)) + rng.standard_normal((2000, 5)),
                  axis=1)
    path = shareboost_path(X, y, n_classes=5, n_rounds=40, alpha=1e-4)
    assert np.median(path.refit_n_iter[20:]) <= 10
    assert path.n_refits_not_converged == 0


@pytest.mark.parametrize("kw, match", [
    (dict(gtol=np.nan), "gtol"), (dict(gtol=-1.0), "gtol"), (dict(gtol=np.inf), "gtol"),
    (dict(max_iter=-1), "max_iter"),
])
def test_solve_refuses_bad_tolerances(kw, match):
    obj = _objective()
    p = obj.columns.n_columns
    args = dict(gtol=1e-6, max_iter=10) | kw
    with pytest.raises(ValueError, match=match):
        solve(obj, np.zeros(obj.n_params(p)), p, curvature=CarriedCurvature(), **args)


def test_solve_refuses_a_non_finite_start():
    obj = _objective()
    p = obj.columns.n_columns
    start = np.full(obj.n_params(p), np.nan)
    with pytest.raises(ValueError, match="starting point"):
        solve(obj, start, p, gtol=1e-6, max_iter=10, curvature=CarriedCurvature())


def _path_data():
    rng = np.random.default_rng(0)
    return rng.standard_normal((40, 4)), rng.integers(0, 3, 40)


@pytest.mark.parametrize("kw, error, match", [
    (dict(tol=np.nan), ValueError, "tol"), (dict(tol=0.0), ValueError, "tol"),
    (dict(tol=-1.0), ValueError, "tol"), (dict(max_iter=0), ValueError, "max_iter"),
    (dict(max_iter=np.nan), TypeError, "max_iter"), (dict(n_rounds=-1), ValueError,
                                                     "n_rounds"),
    (dict(n_rounds=2.0), TypeError, "n_rounds"), (dict(n_rounds=5), ValueError,
                                                  "more than the 4 candidates"),
    (dict(loss="logistic"), TypeError, "loss must be"),
    (dict(fit_intercept="no"), TypeError, "fit_intercept"),
    (dict(verbose=-1), ValueError, "verbose"), (dict(callback=3), TypeError, "callback"),
    (dict(init_path="x"), TypeError, "init_path"),
    (dict(selection=np.array(["gradient_l1"])), ValueError, "selection"),
])
def test_path_arguments_are_checked(kw, error, match):
    X, y = _path_data()
    args = dict(n_classes=3, n_rounds=2) | kw
    with pytest.raises(error, match=match):
        shareboost_path(X, y, **args)


def test_path_with_huge_weights_equals_unit_weights():
    X, y = _path_data()
    unit = shareboost_path(X, y, n_classes=3, n_rounds=2)
    huge = shareboost_path(X, y, n_classes=3, n_rounds=2, sample_weight=np.full(40, 1.7e308))
    np.testing.assert_allclose(huge.train_loss, unit.train_loss, rtol=1e-12)


@pytest.mark.parametrize("fit", [
    lambda X, y: ShareBoostClassifier(n_features_to_select=2).fit(X * 1e150, y),
    lambda X, y: ShareBoostClassifier(n_features_to_select=2, alpha=1e308).fit(X, y),
])
def test_an_overflowing_hessian_says_rescale(fit):
    X, y = _path_data()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="rescale X"):
            fit(X, y)


def test_a_failed_refit_retries_from_the_exact_hessian_only_where_it_is_cheap(monkeypatch):
    """A failed line search retries once: from the exact Hessian when that costs at
    most max_iter passes, else from a scaled identity (on pendigits, 17 anchor
    pieces of separated data, the exact Hessian cost 9 s a retry)."""
    from mcsparse.solvers import _path_state as sb  # where the refit calls solve

    rng = np.random.default_rng(0)
    X = rng.standard_normal((150, 8))
    y = (X[:, 0] + 0.5 * rng.standard_normal(150) > 0).astype(int) + (X[:, 1] > 0)
    counts = {}

    def counting(name):
        original = getattr(CarriedCurvature, name)

        def spy(self, *args, **kwargs):
            counts[name] = counts.get(name, 0) + 1
            return original(self, *args, **kwargs)
        return spy

    monkeypatch.setattr(CarriedCurvature, "reset", counting("reset"))
    monkeypatch.setattr(CarriedCurvature, "restart", counting("restart"))
    # whether a line search fails at tol=1e-15 depends on rounding (it did in
    # the optimised build and not in CI's debug build, whose unoptimised
    # kernels round differently): the first solve of every refit on selected
    # columns (p > 0) reports a failure, so that each such refit retries,
    # whatever the rounding; the retry runs as it is
    real_solve, first = sb.solve, [True]

    def failing_first(objective, params, p, **kwargs):
        result = real_solve(objective, params, p, **kwargs)
        if p > 0:
            if first[0]:
                result.status = "failed"
            first[0] = not first[0]
        return result
    monkeypatch.setattr(sb, "solve", failing_first)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # tol below float64's reach
        shareboost_path(X, y, n_classes=3, n_rounds=5, tol=1e-15, alpha=1e-3)
        exact = dict(counts)
        counts.clear()
        monkeypatch.setattr(sb._PathState, "pass_work", lambda self, p: 0.0)
        shareboost_path(X, y, n_classes=3, n_rounds=5, tol=1e-15, alpha=1e-3)
    assert exact["reset"] > 1  # the start, then retries from the exact Hessian
    assert counts["reset"] == 1  # the start only: the retries restart instead
    assert counts["restart"] > exact.get("restart", 0)


def test_a_separated_training_set_does_not_rebuild_the_exact_hessian_every_round(
        monkeypatch):
    """alpha=0 on separable data: the loss falls to its float64 floor within a few
    rounds and most later refits fail in the line search. A retry from the exact
    Hessian (n_samples * p**2 work) that fails too is not tried again along the
    path: later failures retry from a scaled identity, so late rounds cost about
    what early ones cost (asv: SeparableEndgame)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 60))
    y = np.argmax(X[:, :6] @ rng.standard_normal((6, 4)), axis=1)
    resets = []
    original = CarriedCurvature.reset

    def spy(self, *args, **kwargs):
        resets.append(args[1])  # the columns of the rebuilt Hessian
        return original(self, *args, **kwargs)

    monkeypatch.setattr(CarriedCurvature, "reset", spy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        path = shareboost_path(X, y, n_classes=4, n_rounds=50, alpha=0.0)
    failed = [str(w.message) for w in caught if "failed in the line search" in str(w.message)]
    assert failed and int(failed[0].split()[0]) > 20  # the endgame: many failed refits
    assert path.train_loss[-1] < 1e-12  # separated
    assert len(resets) <= 3  # the start, then at most the retries until one fails too
