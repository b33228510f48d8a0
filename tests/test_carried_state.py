"""The refit's carried curvature is a speed-up only: it never changes the answer.

Every ShareBoost round refits warm, from the curvature carried from the
earlier rounds: a dense inverse Hessian (bordered by the new columns' exact
blocks) or, on long paths and wide groups (the anchor pieces), L-BFGS pairs
padded with zeros. Here every round's refit, in both modes, is compared with a
cold start: a damped Newton solve from zero with the exact Hessian, to
float64's reach.

The precision asserted, from ``tol``. A refit stops when the largest entry of
the gradient is at most ``gtol = tol * f0``, ``f0`` the objective at its warm
start (the previous round's loss). Near its minimiser ``x*`` the objective is
``mu``-strongly convex off its flat direction (the sum of the intercept's
entries, which the solver never moves), ``mu`` the smallest of the other
eigenvalues of the exact Hessian there. So ``|x - x*|_2 <= |g(x)|_2 / mu <=
sqrt(m) gtol / mu`` for ``m`` parameters, and ``f(x) - f* <= g(x) . (x - x*)
<= sqrt(m) gtol |x - x*|_2``. The reference's own error is bounded the same
way by its gradient. The bounds take twice these (the Hessian between ``x``
and ``x*`` differs from the one at ``x*``) and, for the objective, rounding:
``1e-13`` of it (a sum of a few hundred terms, each rounded to 1.1e-16).
A refit that stops early (a failed line search, reported by a
``ConvergenceWarning``) is outside these bounds by orders of magnitude.

The L-BFGS mode is what long paths and wide groups use; on the few columns
here it is forced by giving the path a curvature whose dense limit is zero
(there is no public switch).
"""

import functools
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.features import RawFeatures
from mcsparse.loss import Frobenius, MulticlassLogisticLoss
from mcsparse.solvers import _path_state, shareboost_path
from mcsparse.solvers._columns import SelectedColumns
from mcsparse.solvers._objective import LinearObjective
from mcsparse.solvers._path_state import _PathState
from mcsparse.solvers._refit import CarriedCurvature

MODES = ["dense", "lbfgs"]


def _force(mode, monkeypatch):
    """Make the paths of this test use ``mode``'s curvature."""
    if mode == "lbfgs":
        monkeypatch.setattr(_path_state, "CarriedCurvature",
                            functools.partial(CarriedCurvature, max_dense=0))


def _objective(X, y, n_classes, alpha):
    """The refits' objective on the columns ``X`` (centred, as the path stores them)."""
    store = SelectedColumns(X.shape[0], max(1, X.shape[1]))
    if X.shape[1]:
        store.put(X, 0, center=True)
    return LinearObjective(store, y, n_classes=n_classes, penalty=Frobenius(alpha))


def _newton(objective, p):
    """A cold start to float64's reach: damped Newton from zero with the exact Hessian.

    Returns the point reached and the exact Hessian there. The flat direction
    (the intercept's sum) is left by the minimum-norm solve.
    """
    x = np.zeros(objective.n_params(p))
    point = objective.evaluate(x, p)
    for _ in range(200):
        H = objective.hessian_columns(0, p, intercept=True, point=point)
        d = -np.linalg.lstsq(H, point.grad, rcond=1e-15)[0]
        t, slope, g_max = 1.0, point.grad @ d, np.abs(point.grad).max()
        while t > 1e-12:
            new = objective.evaluate(x + t * d, p)
            # the objective falls, or (at its rounding) the gradient does
            if new.value <= point.value + 1e-4 * t * slope or (
                    new.value <= point.value + 1e-13 * abs(point.value)
                    and np.abs(new.grad).max() < 0.5 * g_max):
                break
            t *= 0.5
        else:
            break  # no step improves: float64's reach
        x, point = x + t * d, new
    H = objective.hessian_columns(0, p, intercept=True, point=point)
    return x, point, H


def _assert_near_the_minimum(objective, p, params, value, f0, tol, what):
    """``params`` (objective ``value``) within the precision ``tol`` allows of the minimum."""
    x_ref, ref, H = _newton(objective, p)
    eigenvalues = np.linalg.eigvalsh(H)
    nb = objective.n_intercept
    assert eigenvalues[0] <= 1e-10 * eigenvalues[-1]  # the flat direction ...
    mu = eigenvalues[1]  # ... and the curvature off it
    m = params.size
    g_ref = np.linalg.norm(ref.grad)
    gtol_2 = np.sqrt(m) * tol * f0  # the largest |g|_2 of a converged refit
    assert g_ref <= gtol_2  # the reference is at least as close as the refit may be
    x_bound = 2.0 * (gtol_2 + g_ref) / mu
    f_bound = 2.0 * gtol_2 * x_bound + 1e-13 * abs(ref.value)
    diff = params - x_ref
    diff[:nb] -= diff[:nb].mean()  # the flat direction: any intercept sum
    here = objective.evaluate(params, p)
    assert here.value == pytest.approx(value, rel=1e-12, abs=1e-300), what
    assert np.linalg.norm(diff) <= x_bound, (
        f"{what}: coefficients {np.linalg.norm(diff):.3g} from the minimum, more "
        f"than {x_bound:.3g} (tol={tol})")
    assert ref.value - 1e-13 * abs(ref.value) <= value <= ref.value + f_bound, (
        f"{what}: objective {(value - ref.value) / ref.value:.3g} (relative) from the "
        f"minimum, more than {f_bound / ref.value:.3g} (tol={tol})")


def _assert_path_agrees(X, y, n_classes, alpha, tol, path):
    """Every round of ``path`` within ``tol``'s precision of a cold start on its columns."""
    losses = [path.initial_loss, *path.train_loss]
    for r in range(1, len(path.selected_features) + 1):
        sel = path.selected_features[:r]
        objective = _objective(X[:, sel], y, n_classes, alpha)
        W, b = path.coefs[r - 1], path.intercepts[r - 1]
        params = objective.pack(W, b + W @ objective.columns.shift[:r])
        _assert_near_the_minimum(objective, r, params, losses[r], losses[r - 1], tol,
                                 f"round {r} (columns {list(sel)})")


def _path(X, y, mode, **kw):
    """``shareboost_path`` in ``mode``; the ConvergenceWarnings it gave."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        path = shareboost_path(X, y, **kw)
    assert path.curvature.dense == (mode == "dense")
    return path, [str(w.message) for w in caught if w.category is ConvergenceWarning]


def _assert_converged(path, warned):
    assert not warned, warned[0]
    assert path.n_refits_not_converged == 0


def _scaled_columns(seed=0, n=300, k=3):
    """Six columns of scales 1e3, 1e2, ..., 1e-2 (in a shuffled order); labels of a
    linear model of all six."""
    rng = np.random.default_rng(seed)
    scales = np.logspace(3, -2, 6)
    rng.shuffle(scales)
    X = rng.standard_normal((n, 6)) * scales
    W = rng.standard_normal((k, 6)) / scales
    y = np.argmax(X @ W.T + rng.standard_normal((n, k)), axis=1)
    return X, y


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("seed", [0, 4, 11, 14])
def test_columns_scaled_over_1e5_reach_a_cold_start(mode, seed, monkeypatch):
    """Columns from 1e-2 to 1e3 at tol=1e-12: every round within the precision of
    the module docstring of a cold start, and no ConvergenceWarning.

    L-BFGS mode before: 5 of the 7 refits (the intercept's included) failed in the
    line search; in round 2 the coefficients were 9.1e-7 (seed 0) and 7.9e-7
    (seed 4) from the minimum, the bound 5.4e-9 and 4.5e-9; the worst round was
    5.4e-8 (relative) above the minimum (seed 0). A cold start from the failed
    point converged. Dense mode, before its steps judged by the gradient alone
    stopped updating the inverse: seeds 11 and 14 failed twice, in the refit
    and in its retry from the exact Hessian (6 of seeds 0 to 29 did)."""
    _force(mode, monkeypatch)
    X, y = _scaled_columns(seed)
    path, warned = _path(X, y, mode, n_classes=3, n_rounds=6, alpha=1e-3, tol=1e-12)
    _assert_path_agrees(X, y, 3, 1e-3, 1e-12, path)
    _assert_converged(path, warned)


def _fit(X, y, mode, monkeypatch, **kw):
    """A ShareBoostClassifier fitted in ``mode``; the ConvergenceWarnings it gave."""
    with monkeypatch.context() as patch:
        _force(mode, patch)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            clf = ShareBoostClassifier(warm_start=True, **kw).fit(X, y)
    assert clf._path.curvature.dense == (mode == "dense")
    return clf, [str(w.message) for w in caught if w.category is ConvergenceWarning]


def _eight_samples(seed=114):
    """Eight samples, two columns, three classes."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((8, 2))
    y = np.arange(8) % 3
    rng.shuffle(y)
    return X, y


@pytest.mark.parametrize("data, kw", [
    (_scaled_columns, dict(n_features_to_select=6, alpha=1e-3, tol=1e-12)),
    (_eight_samples, dict(n_features_to_select=2)),  # alpha="auto", tol=1e-4
], ids=["scaled-1e5-tol1e-12", "eight-samples-default-tol"])
def test_the_modes_agree_with_each_other_and_a_cold_start(data, kw, monkeypatch):
    """Dense and L-BFGS modes through ShareBoostClassifier: the same columns, and
    predict_proba within what tol allows of a cold start's (hence twice that of
    each other).

    With the bound ``x_bound`` of the module docstring on the parameters
    (centred columns, the intercept's flat sum removed), a sample's class score
    ``b_c + W_c . x`` moves by at most ``|(1, x)|_2 x_bound`` (Cauchy-Schwarz), and
    the soft-max's probabilities by at most half the largest score change (the
    rows of its Jacobian have absolute sums ``2 p_c (1 - p_c) <= 1/2``).

    Before: at tol=1e-12 on columns scaled 1e-2 .. 1e3 five of the L-BFGS mode's
    refits failed in the line search (a ConvergenceWarning), its predict_proba
    1.5e-6 from the cold start's (the bound 8.9e-6; now 5e-15). On eight samples
    at the default tol=1e-4 the modes' predict_proba differ by 2.7e-4, before and
    now: within the 1.6e-2 that tol allows there (the cold start's distance is
    what tol sets; a refit stopped by a failed line search would be outside)."""
    X, y = data()
    fits = {mode: _fit(X, y, mode, monkeypatch, **kw) for mode in MODES}
    dense, lbfgs = fits["dense"][0], fits["lbfgs"][0]
    np.testing.assert_array_equal(lbfgs.selected_features_, dense.selected_features_)
    sel = dense.selected_features_
    p, k, tol = sel.size, dense.classes_.size, dense.tol
    objective = _objective(X[:, sel], np.searchsorted(dense.classes_, y), k, dense.alpha_)
    x_ref, ref, H = _newton(objective, p)
    eigenvalues = np.linalg.eigvalsh(H)
    assert eigenvalues[0] <= 1e-10 * eigenvalues[-1]
    m = x_ref.size
    f0 = dense.train_loss_[-2]  # the warm start of the last refit, either mode
    assert lbfgs.train_loss_[-2] == pytest.approx(f0, rel=1e-6)
    gtol_2 = np.sqrt(m) * tol * max(f0, lbfgs.train_loss_[-2])
    x_bound = 2.0 * (gtol_2 + np.linalg.norm(ref.grad)) / eigenvalues[1]
    rows = X[:, sel] - objective.columns.shift[:p]
    p_bound = 0.5 * np.sqrt(1.0 + np.einsum("ij,ij->i", rows, rows)).max() * x_bound
    W_ref, b_ref = objective.unpack(x_ref, p)
    scores = rows @ W_ref.T + b_ref
    proba_ref = np.exp(scores - scores.max(axis=1, keepdims=True))
    proba_ref /= proba_ref.sum(axis=1, keepdims=True)
    for mode, (clf, warned) in fits.items():
        gap = np.abs(clf.predict_proba(X) - proba_ref).max()
        assert gap <= p_bound, f"{mode}: predict_proba {gap:.3g} from a cold start's, " \
                               f"more than the {p_bound:.3g} tol={tol} allows"
        assert not warned, f"{mode}: {warned[0]}"
    gap = np.abs(dense.predict_proba(X) - lbfgs.predict_proba(X)).max()
    assert gap <= 2 * p_bound


def _separable(seed=0, n=80, d=5, k=3):
    """Labels of a linear model without noise: the classes are separable."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.argmax(X @ rng.standard_normal((k, d)).T, axis=1)
    return X, y


def _mirrored(seed=0, n=120, k=3):
    """Exact ties in the span: a column, its negative, another, and their sum (none
    equal to another, so that the path selects them)."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((2, n))
    X = np.column_stack([a, -a, b, a + b])
    y = np.argmax(np.column_stack([a, b, -a - b]) + 0.5 * rng.standard_normal((n, k)),
                  axis=1)
    return X, y


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("data, alpha, tol", [
    (_separable, 1e-3, 1e-10), (_separable, 1e-5, 1e-8), (_mirrored, 1e-3, 1e-10)],
    ids=["separable-1e-3", "separable-1e-5", "mirrored-columns"])
def test_separable_and_tied_inputs_reach_a_cold_start(mode, data, alpha, tol, monkeypatch):
    """Separable classes with alpha > 0 (the minimiser exists, with large
    coefficients) and columns tied in their span (the penalty alone decides how
    the weight splits): every round within tol's precision of a cold start.

    Before, L-BFGS mode, separable at alpha=1e-3: round 4's coefficients were
    1.4e-5 from the minimum, the bound 2.1e-7 (a failed line search)."""
    _force(mode, monkeypatch)
    X, y = data()
    k = int(y.max()) + 1
    path, warned = _path(X, y, mode, n_classes=k, n_rounds=X.shape[1], alpha=alpha,
                         tol=tol)
    _assert_path_agrees(X, y, k, alpha, tol, path)
    _assert_converged(path, warned)


@pytest.mark.parametrize("mode", MODES)
def test_identical_columns_refit_as_a_cold_start(mode, monkeypatch):
    """Two identical columns: the path excludes the second (it adds nothing), so
    the refit is driven here round by round on columns 0, 1 and 0's copy; the
    penalty splits the weight equally between the copies.

    Before, L-BFGS mode: round 1's refit failed in the line search at 1.5 times
    the tolerance, along the class sum of the coefficients, where the loss is
    flat and only the penalty curves (2e-3, against about 0.3 elsewhere)."""
    _force(mode, monkeypatch)
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((2, 150)) * [[1.0], [30.0]]
    X = np.column_stack([a, b, a])
    y = np.argmax(np.column_stack([a, b / 30, -a]) + 0.5 * rng.standard_normal((150, 3)),
                  axis=1)
    alpha, tol = 1e-3, 1e-11
    state = _PathState(RawFeatures().fit(X), y, n_classes=3, n_rounds=3,
                       loss=MulticlassLogisticLoss(), penalty=Frobenius(alpha),
                       fit_intercept=True, sample_weight=None, tol=tol, max_iter=200)
    state.start()
    for j in range(3):
        refit, curvature, _ = state.add(j, state.p)
        state.accept(j, 0.0, (refit, curvature))
        assert refit.status == "ok", f"round {j + 1}: {refit.status}"
    path = state.path()
    assert path.curvature.dense == (mode == "dense")
    _assert_path_agrees(X, y, 3, alpha, tol, path)
    W = path.coefs[-1]
    np.testing.assert_allclose(W[:, 0], W[:, 2], rtol=0, atol=1e-8)


def _seeded(X, y, alpha=1e-3, gtol_rel=1e-12):
    """An L-BFGS curvature seeded at zero on all of ``X``'s columns; the objective, point."""
    objective = _objective(X, y, int(y.max()) + 1, alpha)
    p = X.shape[1]
    point = objective.evaluate(np.zeros(objective.n_params(p)), p)
    curvature = CarriedCurvature(max_dense=0)
    curvature.reset(objective, p, 0, point)
    assert not curvature.dense and not curvature.pairs
    n = curvature.seed(objective, p, point, gtol_rel * point.value)
    return objective, point, curvature, n


def test_a_seeded_curvature_steps_as_newton_whatever_the_scales():
    """The pairs of exact Hessian products on the columns' scaling: the first
    direction is Newton's on columns scaled 1e-2 .. 1e3 (Hessian eigenvalues from
    2e-3 to 3e5), in fewer products than parameters."""
    X, y = _scaled_columns(0)
    objective, point, curvature, n = _seeded(X, y)
    p = X.shape[1]
    assert 0 < n < objective.n_params(p)
    assert all(s.dtype == np.float64 for s, _, _ in curvature.pairs)
    H = objective.hessian_columns(0, p, intercept=True, point=point)
    newton = -np.linalg.lstsq(H, point.grad, rcond=1e-15)[0]
    d = objective.flat_free(curvature.direction(point.grad))
    np.testing.assert_allclose(d, newton, rtol=0, atol=1e-6 * np.abs(newton).max())


def test_a_seeded_curvature_is_kept_copied_saved_and_extended():
    """The scaling goes with the pairs: copies, the path's compact copy and a pickle
    give the same direction; new columns extend it (zeros in the pairs); a curvature
    saved before it existed has none; the dense mode refuses a seed."""
    import pickle

    X, y = _scaled_columns(1)
    objective, point, curvature, _ = _seeded(X[:, :4], y)
    g = point.grad
    want = curvature.direction(g)
    for other in (curvature.copy(), curvature.compact(),
                  pickle.loads(pickle.dumps(curvature))):
        np.testing.assert_array_equal(other.direction(g), want)
    old = curvature.copy()
    del old.__dict__["scaling"]
    assert pickle.loads(pickle.dumps(old)).scaling is None
    full = _objective(X, y, 3, 1e-3)
    grown = full.grown(full.evaluate(np.zeros(full.n_params(4)), 4), 4, 6)
    curvature.extend(full, 4, 6, 0, grown)
    assert not curvature.dense and curvature.scaling.root.shape == (6, 3, 3)
    d = curvature.direction(grown.grad)
    assert np.isfinite(d).all() and grown.grad @ d < 0
    np.testing.assert_allclose(d[:want.size], want, rtol=1e-10)  # new entries: zero pairs
    dense = CarriedCurvature()
    dense.reset(objective, 4, 0, point)
    with pytest.raises(ValueError, match="L-BFGS mode"):
        dense.seed(objective, 4, point, 1e-12)
