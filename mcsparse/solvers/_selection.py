"""Selection rules and penalties of ShareBoost, §3.1 and §3.3 of [SWS2011].

Each round of :func:`mcsparse.solvers.shareboost_path` adds one candidate
``r`` to the support ``I``. The rules (NOTES.md, §3.1):

``"gradient_l1"``
    ``r = argmax_j ||G[:, j]||_1``, ``G`` the gradient of the objective at
    the current ``W`` (the paper's rule; computed by the candidate family's
    own scan, ``best_candidate``).
``"best_column"``, eq. (6)
    ``r = argmin_j min_{u in R^k} F(W + u e_j^T, b)``: the best update of the
    new column alone, the other columns and the intercept fixed.
``"line_search"``, eq. (7)
    ``r = argmin_j min_{eta in R} F(W - eta G[:, j] e_j^T, b)``.
``"full"``
    ``r = argmin_j min_{W', b' : supp(W') in I + {j}} F(W', b')``: the fully
    corrective refit of every candidate.

``F`` is the refit objective: the (weighted) mean loss plus the penalty.
The rules other than ``"gradient_l1"`` evaluate every candidate exactly, for
any candidate family, fetching its training values with
``features.training_columns(ids)`` a block of ids at a time. Ties (values
within a relative ``TIE_RTOL``) go to the lowest id.

Penalties (§3.3), on ``W`` of shape (k, t), never on the intercept:
``"fro"`` is ``alpha ||W||_F^2``; ``"linf1_smooth"`` is the smoothed
``||W||_{inf,1}``, shifted to be zero at ``W = 0``,

    (alpha / beta) sum_j [log sum_i (exp(beta W_ij) + exp(-beta W_ij)) - log(2k)],

which differs from the paper's formula by a constant per column (the same
minimisers and the same rule choices; the objective stays non-increasing
along the path). Its gradient at a zero column is 0, like the Frobenius
penalty's, so the gradient column ``G[:, j]`` of a new candidate is the loss
gradient alone for both penalties, and ``"gradient_l1"`` does not depend on
the penalty.
"""

import numpy as np
from scipy.special import logsumexp

SELECTION_RULES = ("gradient_l1", "best_column", "line_search", "full")
PENALTIES = ("fro", "linf1_smooth")

#: Largest ``n_candidates * n_samples * n_classes * n_rounds`` accepted by the
#: ``"full"`` rule: each candidate of each round costs one L-BFGS refit
#: (tens of passes over ``n_samples * n_classes`` scores). 1e9 is about five
#: minutes on one core (pendigits products, 120 candidates, 7494 samples,
#: 10 classes, 40 rounds is 3.6e8).
FULL_MAX_WORK = 1e9

#: Relative tolerance under which two candidates' values count as tied.
TIE_RTOL = 1e-10

#: Elements of one (block, n_samples, n_classes) temporary.
_BLOCK_ELEMENTS = 2**21
_MAX_BLOCK = 256
_NEWTON_MAX_ITER = 50
_NEWTON_RTOL = 1e-13


def penalty_value_grad(W, alpha, penalty="fro", beta=10.0):
    """Penalty on ``W`` of shape (k, t) and its gradient, shape (k, t).

    Parameters
    ----------
    W : ndarray of shape (n_classes, n_columns)
        Coefficients (never the intercept).
    alpha : float
        Penalty strength.
    penalty : {"fro", "linf1_smooth"}, default="fro"
        Which penalty (module docstring).
    beta : float, default=10.0
        Smoothing of ``"linf1_smooth"``.

    Returns
    -------
    value : float
    grad : ndarray of shape (n_classes, n_columns)
    """
    if penalty == "fro":
        return alpha * float(np.dot(W.ravel(), W.ravel())), 2.0 * alpha * W
    k = W.shape[0]
    Z = beta * W
    pair = np.logaddexp(Z, -Z)  # log(e^z + e^-z) per entry, stable
    col = logsumexp(pair, axis=0)  # (t,)
    value = alpha / beta * float(np.sum(col - np.log(2.0 * k)))
    # d/dW_ij = alpha (e^{z} - e^{-z}) / S_j, S_j = exp(col_j) >= e^{|z|}
    grad = alpha * (np.exp(Z - col) - np.exp(-Z - col))
    return value, grad


def column_penalty(U, alpha, penalty="fro", beta=10.0, hessian=True):
    """Penalty of each of a block of columns ``U`` (B, k): values, gradients, Hessians.

    Returns ``(value (B,), grad (B, k), hess (B, k, k) or None)``.
    """
    B, k = U.shape
    if penalty == "fro":
        value = alpha * np.einsum("bk,bk->b", U, U)
        grad = 2.0 * alpha * U
        hess = None
        if hessian:
            hess = np.broadcast_to(2.0 * alpha * np.eye(k), (B, k, k))
        return value, grad, hess
    Z = beta * U
    pair = np.logaddexp(Z, -Z)
    col = logsumexp(pair, axis=1)  # (B,)
    value = alpha / beta * (col - np.log(2.0 * k))
    c = np.exp(pair - col[:, None])  # 2 cosh(z) / S, sums to one
    q = np.tanh(Z) * c  # 2 sinh(z) / S
    grad = alpha * q
    hess = None
    if hessian:
        hess = -alpha * beta * q[:, :, None] * q[:, None, :]
        idx = np.arange(k)
        hess[:, idx, idx] += alpha * beta * c
    return value, grad, hess


def _block_size(n_samples, n_classes):
    return int(max(1, min(_MAX_BLOCK, _BLOCK_ELEMENTS // max(1, n_samples * n_classes))))


def _candidate_ids(n_candidates, excluded):
    ids = np.setdiff1d(np.arange(n_candidates, dtype=np.intp), excluded)
    if ids.size == 0:
        raise ValueError("every candidate has been selected already")
    return ids


def _first_min(ids, values):
    """The lowest id among those within ``TIE_RTOL`` (relative) of the minimum."""
    best = np.min(values)
    tied = values <= best + TIE_RTOL * abs(best)
    i = int(np.flatnonzero(tied)[0])
    return int(ids[i]), float(values[i])


class _Scores:
    """The fixed part of the objective at the current ``W``, ``b``.

    ``A0 = S0 + margin (1 - onehot)``, so that the loss of sample ``i`` at
    scores ``S0_i + v`` is ``logsumexp(A0_i + v) - S0_{i, y_i} - v_{y_i}``.
    """

    def __init__(self, scores, y, sample_weight, total, margin):
        n, k = scores.shape
        rows = np.arange(n)
        self.onehot = np.zeros((n, k))
        self.onehot[rows, y] = 1.0
        # (k, n): class-major, so that reductions over classes are vectorised
        self.A0 = np.ascontiguousarray((scores + margin * (1.0 - self.onehot)).T)
        self.sy = scores[rows, y]
        self.w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, float)
        self.total = float(total)
        self.y = y

    def loss_probs(self, Xc, V):
        """Mean loss (B,) and soft-max ``P`` (B, k, n) at scores ``S0 + x_c v_c^T``.

        ``Xc`` is (n, B) candidate columns, ``V`` (B, k) the score updates.
        """
        A = self.A0[None, :, :] + V[:, :, None] * Xc.T[:, None, :]
        m = A.max(axis=1)  # (B, n)
        A -= m[:, None, :]
        np.exp(A, out=A)
        s = A.sum(axis=1)
        A /= s[:, None, :]  # now the soft-max P
        vy = V[:, self.y]  # (B, n): v_{c, y_i}
        per_sample = m + np.log(s) - self.sy[None, :] - Xc.T * vy
        loss = per_sample @ self.w / self.total
        return loss, A

    def loss(self, Xc, V):
        A = self.A0[None, :, :] + V[:, :, None] * Xc.T[:, None, :]
        m = A.max(axis=1)
        A -= m[:, None, :]
        np.exp(A, out=A)
        per_sample = m + np.log(A.sum(axis=1)) - self.sy[None, :] - Xc.T * V[:, self.y]
        return per_sample @ self.w / self.total


def _best_column_block(state, Xc, alpha, penalty, beta, base):
    """eq. (6) for a block: ``min_u F(W + u e_c^T)``; returns values (B,)."""
    B = Xc.shape[1]
    k = state.A0.shape[0]
    U = np.zeros((B, k))
    wx = Xc.T * state.w  # (B, n)
    wxx = wx * Xc.T
    wx_onehot = wx @ state.onehot  # (B, k)
    ridge = 1e-12

    def value(idx, Uc):
        pv, _, _ = column_penalty(Uc, alpha, penalty, beta, hessian=False)
        return state.loss(Xc[:, idx], Uc) + pv + base

    f = value(np.arange(B), U)
    active = np.arange(B)
    for _ in range(_NEWTON_MAX_ITER):
        if active.size == 0:
            break
        Ua = U[active]
        _, P = state.loss_probs(Xc[:, active], Ua)
        g = (np.einsum("bn,bkn->bk", wx[active], P) - wx_onehot[active]) / state.total
        Q = P * wxx[active][:, None, :]
        H = -np.matmul(Q, P.transpose(0, 2, 1)) / state.total
        idx = np.arange(k)
        H[:, idx, idx] += Q.sum(axis=2) / state.total
        _, pg, ph = column_penalty(Ua, alpha, penalty, beta)
        g = g + pg
        H = H + ph
        scale = np.maximum(np.abs(H[:, idx, idx]).max(axis=1), 1e-300)
        H[:, idx, idx] += ridge * scale[:, None]
        step = -np.linalg.solve(H, g[:, :, None])[:, :, 0]
        dec = -np.einsum("bk,bk->b", g, step)  # Newton decrement squared
        go = dec > _NEWTON_RTOL * np.abs(f[active])
        active, step, dec = active[go], step[go], dec[go]
        if active.size == 0:
            break
        active = _armijo(value, U, f, active, step, dec)
    return f


def _armijo(value, x, f, active, step, dec):
    """Backtracking (Armijo) steps, vectorised over the candidates ``active``.

    ``x[active]`` (one row per candidate, any trailing shape) moves along
    ``step`` with step sizes halved until ``value`` falls by at least
    ``1e-4 * t * dec``; ``x`` and ``f`` are updated in place. Returns the
    candidates that moved: the others are at the precision limit.
    """
    t = np.ones(active.size)
    todo = np.arange(active.size)
    trailing = (1,) * (step.ndim - 1)
    for _ in range(40):
        trial = x[active[todo]] + t[todo].reshape(-1, *trailing) * step[todo]
        ft = value(active[todo], trial)
        ok = ft <= f[active[todo]] - 1e-4 * t[todo] * dec[todo]
        x[active[todo[ok]]] = trial[ok]
        f[active[todo[ok]]] = ft[ok]
        todo = todo[~ok]
        if todo.size == 0:
            break
        t[todo] *= 0.5
    moved = np.ones(active.size, dtype=bool)
    moved[todo] = False
    return active[moved]


def _line_search_block(state, Xc, residual, alpha, penalty, beta, base):
    """eq. (7) for a block: ``min_eta F(W - eta G[:, c] e_c^T)``; values (B,)."""
    B = Xc.shape[1]
    Hd = -(Xc.T @ residual) / state.total  # direction -G[:, c], (B, k)
    eta = np.zeros(B)
    wx = Xc.T * state.w
    wxx = wx * Xc.T
    hy = Hd[:, state.y]  # (B, n): h_{c, y_i}

    def value(idx, e):
        Uc = e[:, None] * Hd[idx]
        pv, _, _ = column_penalty(Uc, alpha, penalty, beta, hessian=False)
        return state.loss(Xc[:, idx], Uc) + pv + base

    f = value(np.arange(B), eta)
    active = np.flatnonzero(np.any(Hd != 0, axis=1))
    for _ in range(_NEWTON_MAX_ITER):
        if active.size == 0:
            break
        h = Hd[active]
        Uc = eta[active, None] * h
        _, P = state.loss_probs(Xc[:, active], Uc)
        ph = np.einsum("bkn,bk->bn", P, h)
        ph2 = np.einsum("bkn,bk->bn", P, h * h)
        d1 = np.einsum("bn,bn->b", wx[active], ph - hy[active]) / state.total
        d2 = np.einsum("bn,bn->b", wxx[active], ph2 - ph * ph) / state.total
        _, pg, phs = column_penalty(Uc, alpha, penalty, beta)
        d1 = d1 + np.einsum("bk,bk->b", h, pg)
        d2 = d2 + np.einsum("bk,bkl,bl->b", h, phs, h)
        good = d2 > 0
        step = np.where(good, -d1 / np.where(good, d2, 1.0), 0.0)
        dec = -d1 * step
        go = good & (dec > _NEWTON_RTOL * np.abs(f[active]))
        active, step, dec = active[go], step[go], dec[go]
        if active.size == 0:
            break
        active = _armijo(value, eta, f, active, step, dec)
    return f


def select_one_column(rule, features, excluded, *, scores, residual, y, sample_weight,
                      total, margin, alpha, penalty, beta, penalty_W):
    """The ``"best_column"`` (eq. 6) or ``"line_search"`` (eq. 7) choice.

    Parameters
    ----------
    rule : {"best_column", "line_search"}
    features : CandidateFeatures
        The scanning candidate family (``n_candidates_``, ``training_columns``).
    excluded : ndarray of intp
        Selected ids.
    scores : ndarray of shape (n_samples, n_classes)
        Current scores ``W x_i + b`` on the training data.
    residual : ndarray of shape (n_samples, n_classes)
        ``w_i (p_i - e_{y_i})`` at ``scores`` (unnormalised).
    y, sample_weight, total, margin
        As in the refit objective (``total`` is the sum of the weights).
    alpha, penalty, beta
        The penalty of the new column.
    penalty_W : float
        Penalty of the current ``W`` (a constant added to every value).

    Returns
    -------
    id : int
        The chosen candidate (lowest id on ties).
    value : float
        Its objective value after the one-column update.
    """
    ids = _candidate_ids(features.n_candidates_, excluded)
    n, k = scores.shape
    state = _Scores(scores, y, sample_weight, total, margin)
    block = _block_size(n, k)
    values = np.empty(ids.size)
    for s in range(0, ids.size, block):
        b = ids[s : s + block]
        Xc = np.ascontiguousarray(features.training_columns(b), dtype=np.float64)
        if rule == "best_column":
            values[s : s + block] = _best_column_block(state, Xc, alpha, penalty, beta,
                                                       penalty_W)
        else:
            values[s : s + block] = _line_search_block(state, Xc, residual, alpha,
                                                       penalty, beta, penalty_W)
    return _first_min(ids, values)


def select_full(features, excluded, try_candidate, block=_MAX_BLOCK):
    """The ``"full"`` rule: refit every candidate, keep the lowest objective.

    ``try_candidate(column)`` refits on the support plus ``column`` (training
    values, float64) and returns ``(value, result)``. Returns ``(id, value,
    result)`` of the best candidate (lowest id on ties).
    """
    ids = _candidate_ids(features.n_candidates_, excluded)
    values = np.empty(ids.size)
    best, best_value, best_result = None, np.inf, None
    for s in range(0, ids.size, block):
        b = ids[s : s + block]
        Xc = features.training_columns(b)
        for c in range(b.size):
            value, result = try_candidate(np.ascontiguousarray(Xc[:, c], dtype=np.float64))
            values[s + c] = value
            if best is None or value < best_value - TIE_RTOL * abs(best_value):
                best, best_value, best_result = int(b[c]), value, result
    # ties within TIE_RTOL of the final minimum go to the lowest id
    j, value = _first_min(ids, values)
    if j != best:
        return j, value, None
    return best, best_value, best_result
