"""Mixed-norm (group-lasso) multinomial regularisation path.

The convex baseline of [SWS2011]_, eq. (5)::

    min_{W, b}  L(W, b) + lambda * sum_j ||W[:, j]||_q,   q = 2 or q = inf,

with ``L`` the mean margin soft-max loss of eq. (3), the loss ShareBoost
uses. Solved for a decreasing grid of ``lambda`` by accelerated proximal
gradient (FISTA [BT2009]_ with backtracking and adaptive restart),
warm-started along the path, with the sequential strong rule to restrict each
solve to a working set of columns, and stopped on the KKT conditions; or, for
the l1/l2 penalty, by adelie (:mod:`._mixed_norm_adelie`), whose solutions
are checked by the same KKT conditions.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from ..loss import MixedNorm
from ..loss._penalties import MIXED_NORMS as PENALTIES
from ..utils.validation import check_solver_data
from ._columns import SelectedColumns, SparseColumns
from ._mixed_norm_adelie import adelie_levels, check_solver
from ._objective import LinearObjective
from ._refit import CarriedCurvature, solve

_OVERFLOW = ("the proximal gradient step overflowed (non-finite gradient step, "
             "Lipschitz estimate or loss): X has values too large in magnitude; "
             "rescale X, e.g. to [-1, 1]")


@dataclass
class MixedNormPath:
    """Result of :func:`mixed_norm_path`: one entry per ``lambda``.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    lambdas : ndarray of shape (n_lambdas,)
        The penalty levels, in decreasing order (the order they were solved).
    coefs : list of ndarray
        ``coefs[t]`` is ``W`` at ``lambdas[t]``, of shape (n_classes, n_features).
    intercepts : list of ndarray
        ``intercepts[t]`` of shape (n_classes,), summing to zero (the loss is
        invariant to a common shift of the scores); zeros without intercept.
    n_active : ndarray of shape (n_lambdas,), dtype intp
        Number of non-zero columns of each ``W``.
    objective : ndarray of shape (n_lambdas,)
        ``L(W, b) + lambda * sum_j ||W[:, j]||_q`` at each solution.
    kkt_violation : ndarray of shape (n_lambdas,)
        Largest violation of the optimality conditions, relative to
        ``lambda`` (see :func:`kkt_violation`); at most ``tol`` when converged.
    n_iter : ndarray of shape (n_lambdas,), dtype intp
        FISTA iterations spent on each ``lambda`` (all working-set rounds);
        zeros with ``solver="adelie"`` (adelie does not report them).
    lambda_max : float
        Smallest ``lambda`` for which ``W = 0`` is optimal.
    penalty : str
        ``"l1/l2"`` or ``"l1/linf"``.
    n_not_converged : int
        Number of ``lambda`` whose KKT violation is above ``tol`` (FISTA:
        ``max_iter`` was reached first).
    solver : str
        ``"fista"`` or ``"adelie"``.
    """

    lambdas: np.ndarray
    coefs: list
    intercepts: list
    n_active: np.ndarray
    objective: np.ndarray
    kkt_violation: np.ndarray
    n_iter: np.ndarray
    lambda_max: float
    penalty: str
    n_not_converged: int
    solver: str = "fista"


def _design(X, mu):
    """The column store of ``X - 1 mu^T``: centred dense float64, or sparse with offsets."""
    if sp.issparse(X):
        return SparseColumns(X, mu)
    return SelectedColumns.from_dense(X if mu is None else X - mu)


def _take(design, X, mu, cols):
    """The working set ``cols`` of the design."""
    if sp.issparse(X):
        return design.take(cols)
    return SelectedColumns.from_dense((X[:, cols] if mu is None else X[:, cols] - mu[cols]))


def _fit_intercept_only(objective):
    """Best intercept at ``W = 0`` (the refit engine on ``k`` parameters), centred."""
    curvature = CarriedCurvature()
    params = np.zeros(objective.n_intercept)
    point = objective.evaluate(params, 0)
    curvature.reset(objective, 0, 0, point)
    params = solve(objective, params, 0, gtol=1e-12, max_iter=1000,
                   curvature=curvature, point=point).params
    return params - params.mean()


def _lipschitz_bound(X, sample_weight, total, fit_intercept, n_power=30, seed=0):
    """Estimate ``1/2 ||S^{1/2} [X, 1]||_2^2 / total``, the Lipschitz constant of grad L.

    The Hessian of the soft-max w.r.t. one score row is ``diag(p) - p p^T``,
    whose largest eigenvalue is at most 1/2. The spectral norm is estimated
    by power iteration on the column store ``X`` (an underestimate is
    harmless: backtracking corrects it).
    """
    n, d = X.n_samples, X.n_columns
    s = np.ones(n) if sample_weight is None else sample_weight
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(d + int(fit_intercept))
    sq = 0.0
    u = np.empty((n, 1))
    for _ in range(n_power):
        v /= np.linalg.norm(v)
        X.matmul(v[:d, None], u)
        if fit_intercept:
            u += v[d]
        u *= s[:, None]
        w = X.rmatmul(u, d).ravel()
        if fit_intercept:
            w = np.append(w, u.sum())
        sq = float(np.linalg.norm(w))
        if sq == 0.0:
            break
        v = w
    return max(0.5 * sq / total, 1e-12)


# --------------------------------------------------------------------------
# FISTA on one working set
# --------------------------------------------------------------------------


def _violation(objective, norm, W, R):
    """Largest relative KKT violation at ``W`` (intercept's gradient included)."""
    G, gb = objective.gradient_at(R, W.shape[1])
    viol = float(norm.kkt_violation(W, G).max(initial=0.0)) if W.shape[1] else 0.0
    if objective.fit_intercept:
        viol = max(viol, float(np.abs(gb).max()) / norm.lam)
    return viol


def _fista(objective, W, b, norm, L, tol, max_iter, check_every=10):
    """Accelerated proximal gradient on the objective's columns; returns a state dict.

    Backtracking (the step ``1/L`` is halved until the quadratic upper bound
    holds at the new point), momentum ``t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2``
    and the gradient-based adaptive restart of O'Donoghue & Candès (momentum
    reset when it points uphill). Scores are linear in ``(W, b)``, so the
    extrapolated point's scores are combined from stored ones: one product
    ``X W^T`` and one ``R^T X`` per iteration. Every ``check_every`` iterations
    the KKT violation at the current iterate costs one more ``R^T X``.
    """
    p, fit_intercept = W.shape[1], objective.fit_intercept
    S = objective.scores_at(W, b)
    loss, R = objective.loss_at(S)
    Wy, by, Sy, loss_y, Ry = W, b, S, loss, R
    t, viol, it = 1.0, np.inf, 0
    while it < max_iter:
        if it % check_every == 0:  # optimality of the current iterate
            viol = _violation(objective, norm, W, R)
            if viol <= tol:
                break
        it += 1
        Gy, gby = objective.gradient_at(Ry, p)
        while True:
            step = Wy - Gy / L
            if not np.isfinite(step).all():
                raise ValueError(_OVERFLOW)
            W_new = norm.prox(step, 1.0 / L)
            b_new = by - gby / L if fit_intercept else by
            S_new = objective.scores_at(W_new, b_new)
            loss_new, R_new = objective.loss_at(S_new)
            dW, db = W_new - Wy, b_new - by
            quad = np.vdot(Gy, dW) + 0.5 * L * np.vdot(dW, dW)
            if fit_intercept:
                quad += np.dot(gby, db) + 0.5 * L * np.dot(db, db)
            # a relative slack keeps rounding from inflating L forever
            if loss_new <= loss_y + quad + 1e-13 * max(1.0, abs(loss_y)):
                break
            L *= 2.0
            if not np.isfinite(L):
                # overflow (values of X near the float limits give inf or
                # NaN scores): the bound never holds, stop instead of looping
                raise ValueError(_OVERFLOW)
        # adaptive restart: <y - x_new, x_new - x_old> > 0
        dx = W_new - W
        restart = np.vdot(Wy - W_new, dx) + np.dot(by - b_new, b_new - b)
        if restart > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_new
        t = t_new
        if beta > 0:
            Wy, by = W_new + beta * dx, b_new + beta * (b_new - b)
            Sy = S_new + beta * (S_new - S)
            loss_y, Ry = objective.loss_at(Sy)
        else:
            Wy, by, Sy, loss_y, Ry = W_new, b_new, S_new, loss_new, R_new
        W, b, S, loss, R = W_new, b_new, S_new, loss_new, R_new
    else:
        viol = _violation(objective, norm, W, R)
    return {"W": W, "b": b, "R": R, "loss": loss, "L": L, "n_iter": it,
            "violation": viol, "total": objective.total}


def _solve_level(X, mu, design, objective_on, W, b, norm, L, tol, max_iter, ws):
    """Solve at one ``lambda`` on a working set grown until the KKT conditions hold.

    Returns ``(W, b, state, G, L, n_iter)``; ``G`` the gradient on all
    columns at the solution.
    """
    k, n_features = W.shape
    total_iter = 0
    while True:
        cols = np.flatnonzero(ws)
        # one BLAS thread: the products are n_samples x (few columns),
        # where threads cost more than they give (as in ShareBoost's refit)
        with threadpool_limits(limits=1, user_api="blas"):
            state = _fista(objective_on(_take(design, X, mu, cols)), W[:, cols], b, norm,
                           L, tol, max_iter - total_iter)
        total_iter += state["n_iter"]
        # relax the step again for the next solve (backtracking only grows it)
        L = max(state["L"] / 2.0, 1e-12)
        W = np.zeros((k, n_features))
        W[:, cols] = state["W"]
        b = state["b"]
        G, _ = objective_on(design).gradient_at(state["R"], n_features)
        outside = ~ws & (norm.dual_norms(G) > norm.lam * (1.0 + tol))
        if not outside.any() or total_iter >= max_iter:
            return W, b, state, G, L, total_iter
        ws |= outside


def mixed_norm_path(
    X,
    y,
    *,
    n_classes,
    lambdas=None,
    n_lambdas=50,
    lambda_min_ratio=1e-2,
    penalty="l1/l2",
    fit_intercept=True,
    sample_weight=None,
    tol=1e-4,
    max_iter=5000,
    screening=True,
    warm_up=0,
    solver="fista",
    verbose=0,
):
    r"""Mixed-norm (group-lasso) multinomial path.

    Solves [SWS2011]_, eq. (5), with an optional unpenalised intercept,

    .. math::

        \min_{W, b}\; L(W, b) + \lambda \sum_{j=1}^d \|W_{:, j}\|_q,
        \qquad q \in \{2, \infty\},

    where :math:`L` is the (weighted) mean of the margin soft-max loss of
    eq. (3), for a decreasing sequence of :math:`\lambda`, warm-starting each
    solve from the previous solution. The penalty zeroes whole columns of
    ``W`` (features shared by all classes), as in [DS2009]_.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Finite training data, float32 or float64, dense or sparse (checked).
        Copied once to float64 (the products run in float64).
    y : ndarray of shape (n_samples,), dtype intp
        Class indices in ``[0, n_classes)``.
    n_classes : int
        Number of classes ``k`` (rows of ``W``).
    lambdas : array-like of shape (n_lambdas,), default=None
        Positive penalty levels; solved in decreasing order (returned in that
        order). None: a geometric grid of ``n_lambdas`` values from
        ``lambda_max`` down to ``lambda_min_ratio * lambda_max``.
    n_lambdas : int, default=50
        Grid size when ``lambdas`` is None.
    lambda_min_ratio : float, default=1e-2
        Smallest grid value relative to ``lambda_max`` when ``lambdas`` is None.
    penalty : {"l1/l2", "l1/linf"}, default="l1/l2"
        Column norm ``q``: 2 (group lasso) or infinity.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept ``b``.
    sample_weight : ndarray of shape (n_samples,), dtype float64, default=None
        Non-negative weights with a positive sum; the loss is their weighted mean.
    tol : float, default=1e-4
        Stop each solve when the largest KKT violation (relative to
        ``lambda``, see :func:`kkt_violation`; the intercept's gradient
        counts too) is at most ``tol``. With ``solver="adelie"``, the
        threshold above which a level's solution is reported as not
        converged (adelie stops by its own criteria).
    max_iter : int, default=5000
        FISTA iteration cap per ``lambda`` (over all working-set rounds);
        unused by adelie.
    screening : bool, default=True
        Restrict each solve to a working set chosen by the sequential strong
        rule (Tibshirani et al. 2012): column ``j`` is left out at
        ``lambda_t`` when ``||G_j||_{q*} < 2 lambda_t - lambda_{t-1}`` at the
        previous solution. The KKT conditions are then checked on all columns
        and violators added, so the result is exact either way.
    warm_up : int, default=0
        Number of extra levels, geometrically spaced between ``lambda_max``
        and the largest requested ``lambda``, solved first (and not returned)
        to warm-start it: a single small ``lambda`` converges much faster so.
    solver : {"fista", "adelie"}, default="fista"
        ``"fista"``: accelerated proximal gradient, to ``tol``.
        ``"adelie"``: adelie's group-lasso path solver [YH2024]_ (the
        optional ``adelie`` package; l1/l2 only; sparse ``X`` is densified;
        ``screening`` and ``max_iter`` unused), several times faster on
        ill-conditioned designs (satimage products) but less precise: its
        KKT violation, reported in the path, is often above ``tol``.
    verbose : int, default=0
        Print one line per ``lambda`` when positive.

    Returns
    -------
    path : MixedNormPath
        Per-``lambda`` coefficients, intercepts, number of active columns,
        objective, KKT violation and iterations.

    Raises
    ------
    ValueError
        If ``penalty`` or ``solver`` is unknown, or ``solver="adelie"`` with
        ``penalty="l1/linf"``; if ``X`` has NaN or infinity, ``y`` is not
        of length ``n_samples`` or holds an index outside ``[0, n_classes)``,
        ``n_classes < 2``, or ``sample_weight`` is invalid.
    TypeError
        If ``y`` does not hold integers.
    ImportError
        If ``solver="adelie"`` and adelie is not installed.
    RuntimeError
        If adelie stops before solving every level.

    Warns
    -----
    ConvergenceWarning
        If some ``lambda`` has a KKT violation above ``tol`` (FISTA reached
        ``max_iter``, or adelie's solution is that imprecise).
    UserWarning
        If ``lambda_max = 0`` (no column of ``X`` varies with the labels, e.g.
        constant columns): every model of the path is null, and a grid of
        its own (``lambdas=None``) runs from 1 down to ``lambda_min_ratio``.

    Notes
    -----
    ``lambda_max = max_j ||G_j||_{q*}`` with ``G`` the gradient at ``W = 0``
    and the intercept fitted (``q* = 2`` for l1/l2, 1 for l1/linf): the
    smallest ``lambda`` for which ``W = 0`` is optimal. The step size starts
    from the bound ``L <= ||S^{1/2} [X, 1]||_2^2 / (2 sum_i s_i)`` (the
    soft-max Hessian has norm at most 1/2) and is adapted by backtracking
    [BT2009]_.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, eq. (5).
    .. [DS2009] J. Duchi, Y. Singer, "Boosting with structural sparsity",
       ICML 2009.
    .. [BT2009] A. Beck, M. Teboulle, "A fast iterative shrinkage-thresholding
       algorithm for linear inverse problems", SIAM J. Imaging Sci., 2009.
    .. [YH2024] J. Yang, T. Hastie, "A fast and scalable pathwise-solver for
       group lasso and elastic net penalized regression via block-coordinate
       descent", arXiv:2405.08631, 2024.
    """
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    check_solver(solver, penalty)
    start = time.perf_counter()
    X, y, sample_weight = check_solver_data(X, y, n_classes, sample_weight,
                                            accept_sparse=("csr", "csc"))
    X = sp.csc_matrix(X, dtype=np.float64) if sp.issparse(X) else np.asarray(X, np.float64)
    n_samples, n_features = X.shape
    k = int(n_classes)
    mu = None
    if fit_intercept:
        s = np.ones(n_samples) if sample_weight is None else sample_weight
        mu = np.asarray(X.T @ s).ravel() / s.sum()
    design = _design(X, mu)

    def objective_on(columns):
        return LinearObjective(columns, y, sample_weight, n_classes=k,
                               fit_intercept=fit_intercept)

    b0, dual0, lambda_max = _lambda_max(objective_on, design, penalty, fit_intercept)
    if lambda_max == 0.0:
        _warn_null_path(lambdas is None)
    lambdas, n_warm = _lambda_grid(lambdas, lambda_max, n_lambdas, lambda_min_ratio, warm_up)
    whole = objective_on(design)
    if solver == "adelie":
        levels = _adelie_levels(X, y, whole, lambdas, mu, sample_weight, k, verbose)
    else:
        levels = _fista_levels(X, mu, design, objective_on, whole, lambdas, b0, dual0,
                               lambda_max, penalty, tol, max_iter, screening)
    records = []
    for step, (lam, W, b, state, G, n_iter) in enumerate(levels):
        if step < n_warm:
            continue
        norm = MixedNorm(penalty, float(lam))
        records.append(_record(norm, W, b, G, mu, state, n_iter, fit_intercept))
        if verbose > 0:
            print(f"[MixedNorm] lambda {lam:.4g}: {records[-1]['n_active']} active, "
                  f"objective {records[-1]['objective']:.8g}, KKT "
                  f"{records[-1]['violation']:.2e}, {n_iter} iterations, "
                  f"{time.perf_counter() - start:.2f} s", flush=True)
    n_not_converged = sum(r["violation"] > tol for r in records)
    if n_not_converged:
        _warn_not_converged(n_not_converged, records, solver, tol, max_iter)
    return MixedNormPath(
        lambdas=np.asarray(lambdas[n_warm:], dtype=np.float64),
        coefs=[r["W"] for r in records],
        intercepts=[r["b"] for r in records],
        n_active=np.array([r["n_active"] for r in records], dtype=np.intp),
        objective=np.array([r["objective"] for r in records]),
        kkt_violation=np.array([r["violation"] for r in records]),
        n_iter=np.array([r["n_iter"] for r in records], dtype=np.intp),
        lambda_max=lambda_max,
        penalty=penalty,
        n_not_converged=int(n_not_converged),
        solver=solver,
    )


def _fista_levels(X, mu, design, objective_on, whole, lambdas, b0, dual0, lambda_max,
                  penalty, tol, max_iter, screening):
    """FISTA along the path, warm-started; yields ``(lam, W, b, state, G, n_iter)``."""
    n_features = design.n_columns
    L = _lipschitz_bound(design, whole.sample_weight, whole.total, whole.fit_intercept)
    W, b, dual_prev = np.zeros((whole.n_scores, n_features)), b0.copy(), dual0
    lam_prev = max(lambda_max, float(lambdas[0]))
    for lam in lambdas:
        norm = MixedNorm(penalty, float(lam))
        if screening:  # the sequential strong rule, plus the active columns
            ws = (norm.column_norms(W) > 0) | (dual_prev >= 2.0 * lam - lam_prev)
        else:
            ws = np.ones(n_features, dtype=bool)
        W, b, state, G, L, total_iter = _solve_level(
            X, mu, design, objective_on, W, b, norm, L, tol, max_iter, ws)
        dual_prev, lam_prev = norm.dual_norms(G), float(lam)
        yield lam, W, b, state, G, total_iter


def _adelie_levels(X, y, whole, lambdas, mu, sample_weight, k, verbose):
    """adelie's solutions, with what the path records of them (loss, gradient)."""
    n_features = whole.columns.n_columns
    for lam, (W, b) in zip(lambdas, adelie_levels(
            X, y, n_classes=k, lambdas=lambdas, mu=mu, sample_weight=sample_weight,
            fit_intercept=whole.fit_intercept, verbose=verbose)):
        loss, R = whole.loss_at(whole.scores_at(W, b))
        G, _ = whole.gradient_at(R, n_features)
        yield lam, W, b, {"R": R, "loss": loss, "total": whole.total}, G, 0


def _warn_not_converged(n_not_converged, records, solver, tol, max_iter):
    """Say how many levels are above ``tol``, and why."""
    if solver == "adelie":
        worst = max(r["violation"] for r in records)
        message = (f"{n_not_converged} of {len(records)} lambdas: adelie's solution has a "
                   f"KKT violation above tol={tol} (largest {worst:.2g}); adelie stops by "
                   "its own criteria: use solver='fista' for solutions to tol.")
    else:
        message = (f"{n_not_converged} of {len(records)} lambdas reached max_iter={max_iter} "
                   f"with a KKT violation above tol={tol}; increase max_iter or tol.")
    warnings.warn(message, ConvergenceWarning, stacklevel=3)


def _lambda_max(objective_on, design, penalty, fit_intercept):
    """``(b0, dual norms of the gradient at W = 0, lambda_max)``, the intercept fitted."""
    objective = objective_on(design)
    k = objective.n_scores
    zero = objective_on(SelectedColumns(design.n_samples, 1))
    b0 = _fit_intercept_only(zero) if fit_intercept else np.zeros(k)
    _, R0 = objective.loss_at(objective.scores_at(np.zeros((k, design.n_columns)), b0))
    G0, _ = objective.gradient_at(R0, design.n_columns)
    dual0 = MixedNorm(penalty).dual_norms(G0)
    lambda_max = float(dual0.max(initial=0.0))
    if not np.isfinite(lambda_max):
        raise ValueError(
            "the gradient at W = 0 overflowed (lambda_max is not finite): X "
            "has values too large in magnitude; rescale X, e.g. to [-1, 1]"
        )
    return b0, dual0, lambda_max


def _warn_null_path(own_grid):
    """Say that a path with ``lambda_max = 0`` holds only null models."""
    warnings.warn(
        "the gradient of the loss at W = 0 is zero (lambda_max = 0: no column of X "
        "varies with the labels once the intercept is fitted, e.g. constant columns), "
        "so W = 0 is the solution at every penalty level and the path holds only "
        "null models" + (" on an arbitrary grid (1 down to lambda_min_ratio)"
                         if own_grid else ""),
        UserWarning, stacklevel=3,
    )


def _lambda_grid(lambdas, lambda_max, n_lambdas, lambda_min_ratio, warm_up):
    """The decreasing levels, with ``warm_up`` extra levels first: ``(lambdas, n_warm)``."""
    if lambdas is None:
        top = lambda_max if lambda_max > 0 else 1.0
        lambdas = np.geomspace(top, top * lambda_min_ratio, n_lambdas)
    else:
        lambdas = np.sort(np.asarray(lambdas, dtype=np.float64).ravel())[::-1]
        if lambdas.size == 0 or not np.all(np.isfinite(lambdas)) or lambdas[-1] <= 0:
            raise ValueError("lambdas must be finite and positive")
    n_warm = 0
    if warm_up > 0 and lambdas[0] < lambda_max:
        warm = np.geomspace(lambda_max, lambdas[0], int(warm_up) + 2)[1:-1]
        n_warm = warm.shape[0]
        lambdas = np.concatenate([warm, lambdas])
    return lambdas, n_warm


def _record(norm, W, b, G, mu, state, n_iter, fit_intercept):
    """What the path returns for one level (back from centred columns)."""
    viol = float(norm.kkt_violation(W, G).max(initial=0.0))
    if fit_intercept:
        viol = max(viol, float(np.abs(state["R"].sum(axis=0)).max() / state["total"]) / norm.lam)
    b_out = b - W @ mu if mu is not None else b.copy()
    if mu is not None:  # centred, as the loss is shift invariant
        b_out = b_out - b_out.mean()
    return {"W": W.copy(), "b": b_out, "n_active": int(np.count_nonzero(norm.column_norms(W))),
            "objective": state["loss"] + norm.value(W), "violation": viol, "n_iter": n_iter}


def debias(X, y, W, b, *, n_classes, fit_intercept=True, sample_weight=None, tol=1e-4,
           max_iter=1000):
    """Refit the non-zero columns of ``W`` without penalty (the relaxed group lasso).

    The support comes from the penalised problem, the coefficients from the
    bare loss, minimised by the refit engine of ShareBoost
    (:mod:`mcsparse.solvers._refit`) from ``(W, b)``, on centred columns
    when ``fit_intercept``, to the same relative tolerance: the largest
    entry of the gradient at most ``tol`` times the loss at the start.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Training data (validated by the caller).
    y : ndarray of shape (n_samples,), dtype intp
        Class indices.
    W : ndarray of shape (n_classes, n_features)
        Penalised coefficients; their non-zero columns are refitted.
    b : ndarray of shape (n_classes,)
        Penalised intercept (zeros without intercept).
    n_classes : int
        Number of classes.
    fit_intercept : bool, default=True
        Refit the intercept too.
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights.
    tol : float, default=1e-4
        Relative tolerance.
    max_iter : int, default=1000
        Iteration cap.

    Returns
    -------
    W : ndarray of shape (n_classes, n_features)
        Zero outside the support.
    b : ndarray of shape (n_classes,)
        Centred to sum zero (zeros without intercept).
    n_iter : int
        Iterations.
    status : {"ok", "max_iter", "failed"}
        On separable selected columns the unpenalised loss has no minimiser
        and the refit stops at ``max_iter``.
    """
    support = np.flatnonzero(np.any(W != 0, axis=0))
    t = support.size
    if t == 0 and not fit_intercept:
        return W.copy(), b.copy(), 0, "ok"
    X_sel = X[:, support]
    X_sel = X_sel.toarray() if sp.issparse(X_sel) else X_sel
    columns = SelectedColumns(X.shape[0], max(t, 1))
    if t:
        columns.put(X_sel, 0, center=fit_intercept, sample_weight=sample_weight)
    objective = LinearObjective(columns, y, sample_weight, n_classes=n_classes,
                                fit_intercept=fit_intercept)
    W_sel = W[:, support]
    params = objective.pack(W_sel, b + W_sel @ columns.shift)
    point = objective.evaluate(params, t)
    curvature = CarriedCurvature()
    k = objective.n_scores
    curvature.reset(objective, t, X.shape[0] * (t + 1) * t * k * (k + 1) / 2, point)
    with threadpool_limits(limits=1, user_api="blas"):
        result = solve(objective, params, t, gtol=tol * point.value, max_iter=max_iter,
                       curvature=curvature, point=point)
    params, n_iter, status = result.params, result.n_iter, result.status
    W_sel, b_new = objective.unpack(params, t)
    W_new = np.zeros_like(W)
    W_new[:, support] = W_sel
    b_new = b_new - W_sel @ columns.shift
    b_new = b_new - b_new.mean() if fit_intercept else np.zeros(n_classes)
    return W_new, b_new, int(n_iter), status
