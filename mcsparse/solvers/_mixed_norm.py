"""Mixed-norm (group-lasso) multinomial regularisation path.

The convex baseline of [SWS2011]_, eq. (5) (restated in
``shared/papers/NOTES.md``)::

    min_{W, b}  L(W, b) + lambda * sum_j ||W[:, j]||_q,   q = 2 or q = inf,

with ``L`` the mean margin soft-max loss of eq. (3), the loss ShareBoost
uses. Solved for a decreasing grid of ``lambda`` by accelerated proximal
gradient (FISTA [BT2009]_ with backtracking and adaptive restart),
warm-started along the path, with the sequential strong rule to restrict each
solve to a working set of columns, and stopped on the KKT conditions.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from ..loss._multiclass_logistic_fast import loss_gradient as _loss_gradient
from ..utils.validation import check_solver_data

PENALTIES = ("l1/l2", "l1/linf")


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
        FISTA iterations spent on each ``lambda`` (all working-set rounds).
    lambda_max : float
        Smallest ``lambda`` for which ``W = 0`` is optimal.
    penalty : str
        ``"l1/l2"`` or ``"l1/linf"``.
    n_not_converged : int
        Number of ``lambda`` where ``max_iter`` was reached before ``tol``.
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


# --------------------------------------------------------------------------
# norms, proximal operators, optimality conditions (column-wise on (k, m))
# --------------------------------------------------------------------------


def _l1_ball_projection(V, radius):
    """Project every column of ``V`` (k, m) onto the l1 ball of ``radius``.

    The sort-based algorithm (Duchi, Shalev-Shwartz, Singer, Chandra 2008):
    with ``u`` the sorted absolute values, ``theta = (sum_{i<=rho} u_i - r) / rho``
    for the largest ``rho`` with ``u_rho > theta``; the projection is
    ``sign(v) * max(|v| - theta, 0)``, or ``v`` itself inside the ball.
    """
    if radius <= 0:
        return np.zeros_like(V)
    A = np.abs(V)
    inside = A.sum(axis=0) <= radius
    U = -np.sort(-A, axis=0)  # descending in each column
    css = np.cumsum(U, axis=0) - radius
    idx = np.arange(1, V.shape[0] + 1)[:, None]
    cond = U - css / idx > 0
    # rho = last index (1-based) where cond holds; cond holds at index 1
    # whenever the column is outside the ball (u_1 > u_1 - r)
    rho = V.shape[0] - np.argmax(cond[::-1], axis=0)
    theta = css[rho - 1, np.arange(V.shape[1])] / rho
    theta = np.where(inside, 0.0, np.maximum(theta, 0.0))
    return np.sign(V) * np.maximum(A - theta, 0.0)


def group_norms(W, penalty):
    """``||W[:, j]||_q`` for every column: q = 2 (``"l1/l2"``) or inf."""
    if W.shape[0] == 0:
        return np.zeros(W.shape[1])
    if penalty == "l1/l2":
        return np.sqrt(np.einsum("ij,ij->j", W, W))
    return np.abs(W).max(axis=0)


def dual_group_norms(G, penalty):
    """Dual norms of the columns: l2 for ``"l1/l2"``, l1 for ``"l1/linf"``."""
    if penalty == "l1/l2":
        return np.sqrt(np.einsum("ij,ij->j", G, G))
    return np.abs(G).sum(axis=0)


def prox_mixed_norm(V, tau, penalty):
    """Proximal operator of ``tau * sum_j ||V[:, j]||_q``, column by column.

    ``"l1/l2"``: group soft-thresholding ``v * max(0, 1 - tau / ||v||_2)``.
    ``"l1/linf"``: Moreau, ``v - P_{||.||_1 <= tau}(v)``.
    """
    if penalty == "l1/l2":
        norms = group_norms(V, penalty)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(norms > tau, 1.0 - tau / norms, 0.0)
        return V * scale
    return V - _l1_ball_projection(V, tau)


def kkt_violation(W, G, lam, penalty):
    """Per-column violation of ``0 in G[:, j] + lam * d||W[:, j]||_q``, over ``lam``.

    Parameters
    ----------
    W : ndarray of shape (n_classes, m)
    G : ndarray of shape (n_classes, m)
        Gradient of the smooth part ``L`` at ``W``.
    lam : float
        Penalty level, positive.
    penalty : {"l1/l2", "l1/linf"}

    Returns
    -------
    violation : ndarray of shape (m,)
        Zero columns: ``max(0, ||G_j||_{q*} - lam) / lam`` (``q*`` the dual
        norm). Non-zero columns, l1/l2: ``||G_j + lam W_j / ||W_j||_2||_2 / lam``;
        l1/linf: the larger of ``max(0, ||G_j||_1 - lam) / lam`` and
        ``|<G_j, W_j> + lam ||W_j||_inf| / (lam ||W_j||_inf)`` (``-G_j / lam``
        is a subgradient of the l_inf norm at ``W_j`` iff its l1 norm is at
        most one and it attains ``<u, W_j> = ||W_j||_inf``).
    """
    norms = group_norms(W, penalty)
    dual = dual_group_norms(G, penalty)
    nz = norms > 0
    out = np.maximum(dual - lam, 0.0) / lam
    if not nz.any():
        return out
    Wn, Gn, nn = W[:, nz], G[:, nz], norms[nz]
    if penalty == "l1/l2":
        out[nz] = np.sqrt(((Gn + lam * Wn / nn) ** 2).sum(axis=0)) / lam
    else:
        fenchel = np.abs(np.einsum("ij,ij->j", Gn, Wn) + lam * nn) / (lam * nn)
        out[nz] = np.maximum(out[nz], fenchel)
    return out


# --------------------------------------------------------------------------
# smooth part
# --------------------------------------------------------------------------


class _Design:
    """``X - 1 mu^T`` (``mu`` = weighted column means, or none) without forming it.

    With an intercept, ``W x + b = W (x - mu) + (b + W mu)`` and the penalty
    does not involve ``b``: solving on centred columns is the same problem,
    much better conditioned for positive features (the pairwise products).
    Dense data is centred in a float64 copy; sparse data stays sparse and the
    offset is applied in the products.
    """

    def __init__(self, X, mu):
        self.sparse = sp.issparse(X)
        if mu is not None and not self.sparse:
            X = X - mu  # a new float64 array
            mu = None
        self.X = X
        self.mu = mu
        self.shape = X.shape

    def take(self, cols):
        if self.sparse:
            return _Design(self.X[:, cols], None if self.mu is None else self.mu[cols])
        return _Design(np.ascontiguousarray(self.X[:, cols]), None)

    def matmul(self, W):
        """``(X - 1 mu^T) W^T`` of shape (n_samples, k)."""
        S = np.asarray(self.X @ W.T)
        if self.mu is not None:
            S = S - self.mu @ W.T
        return S

    def rmatmul(self, R):
        """``R^T (X - 1 mu^T)`` of shape (k, n_features)."""
        G = np.asarray(self.X.T @ R).T
        if self.mu is not None:
            G = G - np.outer(R.sum(axis=0), self.mu)
        return G


class _Smooth:
    """``L(W, b)`` and its gradient on a column subset ``X`` (a ``_Design``).

    ``L = sum_i s_i l(W x_i + b, y_i) / sum_i s_i``. The gradient w.r.t. the
    scores is ``R / total`` with ``R[i] = s_i (p_i - e_{y_i})`` (the Cython
    module), so ``grad_W = R^T X / total`` and ``grad_b = sum_i R[i] / total``.
    """

    def __init__(self, y, sample_weight, n_classes):
        self.y = y
        self.sample_weight = sample_weight
        self.k = n_classes
        self.total = y.shape[0] if sample_weight is None else float(sample_weight.sum())

    def scores(self, X, W, b):
        n = X.shape[0]
        S = X.matmul(W) if W.shape[1] else np.zeros((n, self.k))
        S = np.ascontiguousarray(S, dtype=np.float64)
        S += b
        return S

    def loss_residual(self, S):
        """(mean loss, R) at scores ``S``; ``R`` unnormalised, see class doc."""
        R = np.empty_like(S)
        loss = _loss_gradient(S, self.y, self.sample_weight, R)
        return loss / self.total, R

    def grad_W(self, X, R):
        """``R^T X / total`` of shape (k, m), by one BLAS (or sparse) product."""
        if X.shape[1] == 0:
            return np.zeros((self.k, 0))
        return X.rmatmul(R) / self.total

    def grad_b(self, R):
        return R.sum(axis=0) / self.total


def _fit_intercept_only(smooth, n_samples, tol):
    """Best intercept at ``W = 0`` (L-BFGS on k parameters), centred."""
    k = smooth.k

    def fun(b):
        S = np.ascontiguousarray(np.broadcast_to(b, (n_samples, k)), dtype=np.float64)
        loss, R = smooth.loss_residual(S)
        return loss, smooth.grad_b(R)

    res = minimize(fun, np.zeros(k), jac=True, method="L-BFGS-B",
                   options={"gtol": tol, "ftol": 0.0, "maxiter": 1000})
    return res.x - res.x.mean()


def _lipschitz_bound(X, sample_weight, total, fit_intercept, n_power=30, seed=0):
    """Estimate ``1/2 ||S^{1/2} [X, 1]||_2^2 / total``, the Lipschitz constant of grad L.

    The Hessian of the soft-max w.r.t. one score row is ``diag(p) - p p^T``,
    whose largest eigenvalue is at most 1/2. The spectral norm is estimated
    by power iteration on the ``_Design`` ``X`` (an underestimate is
    harmless: backtracking corrects it).
    """
    n, d = X.shape
    s = np.ones(n) if sample_weight is None else sample_weight
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(d + int(fit_intercept))
    sq = 0.0
    for _ in range(n_power):
        v /= np.linalg.norm(v)
        u = X.matmul(v[None, :d]).ravel() + (v[d] if fit_intercept else 0.0)
        u = s * u
        w = X.rmatmul(u[:, None]).ravel()
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


def _fista(Xw, smooth, W, b, lam, penalty, fit_intercept, L, tol, max_iter,
           check_every=10):
    """Accelerated proximal gradient on the columns ``Xw``; returns a state dict.

    Backtracking (the step ``1/L`` is halved until the quadratic upper bound
    holds at the new point), momentum ``t_{k+1} = (1 + sqrt(1 + 4 t_k^2)) / 2``
    and the gradient-based adaptive restart of O'Donoghue & Candès (momentum
    reset when it points uphill). Scores are linear in ``(W, b)``, so the
    extrapolated point's scores are combined from stored ones: one product
    ``X W^T`` and one ``R^T X`` per iteration. Every ``check_every`` iterations
    the KKT violation at the current iterate costs one more ``R^T X``.
    """
    W = W.copy()
    b = b.copy()
    S = smooth.scores(Xw, W, b)
    loss, R = smooth.loss_residual(S)
    Wy, by, Sy, loss_y, Ry = W, b, S, loss, R
    t = 1.0
    viol = np.inf
    it = 0
    while it < max_iter:
        # optimality of the current iterate (cheap relative to max_iter)
        if it % check_every == 0:
            G = smooth.grad_W(Xw, R)
            v = kkt_violation(W, G, lam, penalty) if W.shape[1] else np.zeros(0)
            viol = float(v.max(initial=0.0))
            if fit_intercept:
                viol = max(viol, float(np.abs(smooth.grad_b(R)).max()) / lam)
            if viol <= tol:
                break
        it += 1
        Gy = smooth.grad_W(Xw, Ry)
        gby = smooth.grad_b(Ry) if fit_intercept else None
        while True:
            W_new = prox_mixed_norm(Wy - Gy / L, lam / L, penalty)
            b_new = by - gby / L if fit_intercept else by
            S_new = smooth.scores(Xw, W_new, b_new)
            loss_new, R_new = smooth.loss_residual(S_new)
            dW = W_new - Wy
            quad = np.vdot(Gy, dW) + 0.5 * L * np.vdot(dW, dW)
            if fit_intercept:
                db = b_new - by
                quad += np.dot(gby, db) + 0.5 * L * np.dot(db, db)
            # a relative slack keeps rounding from inflating L forever
            if loss_new <= loss_y + quad + 1e-13 * max(1.0, abs(loss_y)):
                break
            L *= 2.0
            if not np.isfinite(L):
                # overflow (values of X near the float limits give inf or
                # NaN scores): the bound never holds, stop instead of looping
                raise ValueError(
                    "the proximal gradient step overflowed (non-finite "
                    "Lipschitz estimate or loss): X has values too large in "
                    "magnitude; rescale X, e.g. to [-1, 1]"
                )
        # adaptive restart: <y - x_new, x_new - x_old> > 0
        dx = W_new - W
        restart = np.vdot(Wy - W_new, dx)
        if fit_intercept:
            restart += np.dot(by - b_new, b_new - b)
        if restart > 0:
            t = 1.0
        t_new = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        beta = (t - 1.0) / t_new
        t = t_new
        if beta > 0:
            Wy = W_new + beta * dx
            by = b_new + beta * (b_new - b)
            Sy = S_new + beta * (S_new - S)
            loss_y, Ry = smooth.loss_residual(Sy)
        else:
            Wy, by, Sy, loss_y, Ry = W_new, b_new, S_new, loss_new, R_new
        W, b, S, loss, R = W_new, b_new, S_new, loss_new, R_new
    else:
        G = smooth.grad_W(Xw, R)
        v = kkt_violation(W, G, lam, penalty) if W.shape[1] else np.zeros(0)
        viol = float(v.max(initial=0.0))
        if fit_intercept:
            viol = max(viol, float(np.abs(smooth.grad_b(R)).max()) / lam)
    return {"W": W, "b": b, "R": R, "loss": loss, "L": L, "n_iter": it,
            "violation": viol}


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
        counts too) is at most ``tol``.
    max_iter : int, default=5000
        FISTA iteration cap per ``lambda`` (over all working-set rounds).
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
        If ``penalty`` is unknown; if ``X`` has NaN or infinity, ``y`` is not
        of length ``n_samples`` or holds an index outside ``[0, n_classes)``,
        ``n_classes < 2``, or ``sample_weight`` is invalid.
    TypeError
        If ``y`` does not hold integers.

    Warns
    -----
    ConvergenceWarning
        If some ``lambda`` reached ``max_iter`` with the violation above ``tol``.

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
    """
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    start = time.perf_counter()
    X, y, sample_weight = check_solver_data(X, y, n_classes, sample_weight,
                                            accept_sparse=("csr", "csc"))
    if sp.issparse(X):
        X = sp.csc_matrix(X, dtype=np.float64)
    else:
        X = np.asarray(X, dtype=np.float64)
    n_samples, n_features = X.shape
    k = int(n_classes)
    smooth = _Smooth(y, sample_weight, k)
    mu = None
    if fit_intercept:
        s = np.ones(n_samples) if sample_weight is None else sample_weight
        mu = np.asarray(X.T @ s).ravel() / s.sum()
    X = _Design(X, mu)

    # lambda_max: gradient at W = 0 with the intercept fitted
    b0 = (_fit_intercept_only(smooth, n_samples, tol=1e-12) if fit_intercept
          else np.zeros(k))
    _, R0 = smooth.loss_residual(smooth.scores(X, np.zeros((k, 0)), b0))
    G0 = smooth.grad_W(X, R0)
    dual0 = dual_group_norms(G0, penalty)
    lambda_max = float(dual0.max(initial=0.0))
    if not np.isfinite(lambda_max):
        raise ValueError(
            "the gradient at W = 0 overflowed (lambda_max is not finite): X "
            "has values too large in magnitude; rescale X, e.g. to [-1, 1]"
        )

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

    L = _lipschitz_bound(X, sample_weight, smooth.total, fit_intercept)
    W = np.zeros((k, n_features))
    b = b0.copy()
    dual_prev = dual0
    lam_prev = max(lambda_max, float(lambdas[0]))
    coefs, intercepts, n_active, objs, viols, n_iters = [], [], [], [], [], []
    n_not_converged = 0
    for step, lam in enumerate(lambdas):
        lam = float(lam)
        active = group_norms(W, penalty) > 0
        if screening:
            ws = active | (dual_prev >= 2.0 * lam - lam_prev)
        else:
            ws = np.ones(n_features, dtype=bool)
        total_iter = 0
        while True:
            cols = np.flatnonzero(ws)
            # one BLAS thread: the products are n_samples x (few columns),
            # where threads cost more than they give (as in ShareBoost's refit)
            with threadpool_limits(limits=1, user_api="blas"):
                state = _fista(X.take(cols), smooth, W[:, cols], b, lam, penalty,
                               fit_intercept, L, tol, max_iter - total_iter)
            total_iter += state["n_iter"]
            # relax the step again for the next solve (backtracking only grows it)
            L = max(state["L"] / 2.0, 1e-12)
            W = np.zeros((k, n_features))
            W[:, cols] = state["W"]
            b = state["b"]
            G = smooth.grad_W(X, state["R"])
            dual_prev = dual_group_norms(G, penalty)
            outside = ~ws & (dual_prev > lam * (1.0 + tol))
            if not outside.any() or total_iter >= max_iter:
                break
            ws |= outside
        v = kkt_violation(W, G, lam, penalty)
        viol = float(v.max(initial=0.0))
        if fit_intercept:
            viol = max(viol, float(np.abs(smooth.grad_b(state["R"])).max()) / lam)
        norms = group_norms(W, penalty)
        obj = state["loss"] + lam * float(norms.sum())
        lam_prev = lam
        if step < n_warm:
            continue
        if viol > tol:
            n_not_converged += 1
        coefs.append(W.copy())
        # back from centred columns; centred, as the loss is shift invariant
        b_out = b - W @ mu if fit_intercept else b.copy()
        intercepts.append(b_out - b_out.mean() if fit_intercept else b_out)
        n_active.append(int(np.count_nonzero(norms)))
        objs.append(obj)
        viols.append(viol)
        n_iters.append(total_iter)
        if verbose > 0:
            print(
                f"[MixedNorm] lambda {lam:.4g}: {n_active[-1]} active, "
                f"objective {obj:.8g}, KKT {viol:.2e}, {total_iter} iterations, "
                f"{time.perf_counter() - start:.2f} s",
                flush=True,
            )
    if n_not_converged:
        warnings.warn(
            f"{n_not_converged} of {len(lambdas) - n_warm} lambdas reached max_iter={max_iter} "
            f"with a KKT violation above tol={tol}; increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return MixedNormPath(
        lambdas=np.asarray(lambdas[n_warm:], dtype=np.float64),
        coefs=coefs,
        intercepts=intercepts,
        n_active=np.array(n_active, dtype=np.intp),
        objective=np.array(objs),
        kkt_violation=np.array(viols),
        n_iter=np.array(n_iters, dtype=np.intp),
        lambda_max=lambda_max,
        penalty=penalty,
        n_not_converged=n_not_converged,
    )
