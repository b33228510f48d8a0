"""Selection rules of ShareBoost, §3.1 of [SWS2011].

Each round of :func:`mcsparse.solvers.shareboost_path` adds one candidate
``r`` to the support ``I``. The rules (§3.1):

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

``F`` is the refit objective (:class:`mcsparse.solvers._objective.LinearObjective`):
the (weighted) mean loss plus the penalty, both objects of
:mod:`mcsparse.loss`. The rules other than ``"gradient_l1"`` evaluate every
candidate exactly, for any candidate family, fetching its training values
with ``features.training_columns(ids)`` a block of ids at a time; the loss
of a block of candidates is one call of the loss's row kernel. Ties (values
within a relative ``TIE_RTOL``) go to the lowest id.
"""

import numpy as np

from ..loss import Frobenius

SELECTION_RULES = ("gradient_l1", "best_column", "line_search", "full")

#: Largest ``n_candidates * n_samples * n_classes * n_rounds`` accepted by the
#: ``"full"`` rule: each candidate of each round costs one refit
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


class _Updates:
    """The objective's values along one-column updates of the current model.

    ``value(Xc, V)`` is the mean loss at scores ``S0 + x_c v_c^T`` for a block
    of candidate columns ``Xc`` (n, B) and updates ``V`` (B, k), computed by
    the loss's row kernel on the (B n, k) stacked scores; ``S0`` the scores
    of ``point``, the objective at the current ``W``, ``b``.
    """

    def __init__(self, objective, point):
        self.loss = objective.loss
        self.S0 = point.scores
        self.y = objective.y
        n = self.S0.shape[0]
        self.w = np.ones(n) if objective.sample_weight is None else objective.sample_weight
        self.total = objective.total
        # e_{y_i} as the loss sees it (one-hot rows; y itself for the binary loss)
        self.labels = self.loss.proba(np.zeros_like(self.S0), self.y, None)

    def _stacked(self, Xc, V):
        B = V.shape[0]
        A = self.S0[None, :, :] + Xc.T[:, :, None] * V[:, None, :]
        return A.reshape(-1, A.shape[2]), np.tile(self.y, B)

    def value(self, Xc, V):
        """Mean loss (B,) of the updates."""
        A, y = self._stacked(Xc, V)
        rows = self.loss.rows(A, y, np.empty_like(A))
        return rows.reshape(V.shape[0], -1) @ self.w / self.total

    def value_proba(self, Xc, V):
        """Mean loss (B,) and ``p`` (B, n, k) at the updated scores."""
        A, y = self._stacked(Xc, V)
        G = np.empty_like(A)
        rows = self.loss.rows(A, y, G)
        P = self.loss.proba(G, y, None).reshape(V.shape[0], -1, A.shape[1])
        return rows.reshape(V.shape[0], -1) @ self.w / self.total, P


def _newton_terms(loss, P, wx, wxx, onehot_wx, total):
    """Gradient (B, k) and Hessian (B, k, k) of the loss in a column's update ``u``.

    Column ``c`` of the Hessian is ``sum_i x_i^2 w_i H_i e_c``, the loss's row
    Hessian products.
    """
    g = (np.einsum("bn,bnk->bk", wx, P) - onehot_wx) / total
    k = P.shape[2]
    H = np.empty((P.shape[0], k, k))
    for c in range(k):
        e = np.zeros(k)
        e[c] = 1.0
        H[:, :, c] = loss.hessian_product(P, wxx, e).sum(axis=1) / total
    return g, H


def _best_column_block(state, Xc, penalty, base):
    """eq. (6) for a block: ``min_u F(W + u e_c^T)``; returns values (B,)."""
    B = Xc.shape[1]
    k = state.S0.shape[1]
    U = np.zeros((B, k))
    wx = Xc.T * state.w  # (B, n)
    wxx = wx * Xc.T
    onehot_wx = wx @ state.labels
    ridge = 1e-12

    def value(idx, Uc):
        return state.value(Xc[:, idx], Uc) + penalty.column_terms(Uc, hessian=False)[0] + base

    f = value(np.arange(B), U)
    active = np.arange(B)
    idx = np.arange(k)
    for _ in range(_NEWTON_MAX_ITER):
        if active.size == 0:
            break
        Ua = U[active]
        _, P = state.value_proba(Xc[:, active], Ua)
        g, H = _newton_terms(state.loss, P, wx[active], wxx[active], onehot_wx[active],
                             state.total)
        _, pg, ph = penalty.column_terms(Ua)
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


def _line_search_block(state, Xc, residual, penalty, base):
    """eq. (7) for a block: ``min_eta F(W - eta G[:, c] e_c^T)``; values (B,)."""
    B = Xc.shape[1]
    Hd = -(Xc.T @ residual) / state.total  # direction -G[:, c], (B, k)
    eta = np.zeros(B)
    wx = Xc.T * state.w
    wxx = wx * Xc.T
    hy = Hd @ state.labels.T  # (B, n): h_{c, y_i}

    def value(idx, e):
        Uc = e[:, None] * Hd[idx]
        return state.value(Xc[:, idx], Uc) + penalty.column_terms(Uc, hessian=False)[0] + base

    f = value(np.arange(B), eta)
    active = np.flatnonzero(np.any(Hd != 0, axis=1))
    for _ in range(_NEWTON_MAX_ITER):
        if active.size == 0:
            break
        h = Hd[active]
        Uc = eta[active, None] * h
        _, P = state.value_proba(Xc[:, active], Uc)
        ph = np.einsum("bnk,bk->bn", P, h)
        d1 = np.einsum("bn,bn->b", wx[active], ph - hy[active]) / state.total
        Hh = state.loss.hessian_product(P, wxx[active], h[:, None, :])  # sum_i x_i^2 w_i H_i h
        d2 = np.einsum("bnk,bk->b", Hh, h) / state.total
        _, pg, phs = penalty.column_terms(Uc)
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


def select_one_column(rule, features, excluded, objective, point):
    """The ``"best_column"`` (eq. 6) or ``"line_search"`` (eq. 7) choice.

    Parameters
    ----------
    rule : {"best_column", "line_search"}
    features : CandidateFeatures
        The scanning candidate family (``n_candidates_``, ``training_columns``).
    excluded : ndarray of intp
        Selected ids.
    objective : LinearObjective
        Its loss and penalty define ``F``.
    point : Point
        The objective at the current ``W`` and ``b`` (its ``scores``,
        ``residual`` and ``Wt``; the penalty of the new column is added to
        that of ``W``, a constant).

    Returns
    -------
    id : int
        The chosen candidate (lowest id on ties).
    value : float
        Its objective value after the one-column update.
    """
    ids = _candidate_ids(features.n_candidates_, excluded)
    penalty = objective.penalty if objective.penalty is not None else Frobenius(0.0)
    base = (float(np.sum(penalty.column_terms(point.Wt, hessian=False)[0])) if point.Wt.size
            else 0.0)
    state = _Updates(objective, point)
    n, k = state.S0.shape
    block = _block_size(n, k)
    values = np.empty(ids.size)
    for s in range(0, ids.size, block):
        b = ids[s : s + block]
        Xc = np.ascontiguousarray(features.training_columns(b), dtype=np.float64)
        if rule == "best_column":
            values[s : s + block] = _best_column_block(state, Xc, penalty, base)
        else:
            values[s : s + block] = _line_search_block(state, Xc, point.residual,
                                                       penalty, base)
    return _first_min(ids, values)


def select_full(features, excluded, try_candidate):
    """The ``"full"`` rule: refit every candidate, keep the lowest objective.

    ``try_candidate(id)`` refits on the support plus candidate ``id`` and
    returns ``(value, result)``. Returns ``(id, value, result)`` of the best
    candidate (lowest id on ties); ``result`` is None when a tie within
    ``TIE_RTOL`` of the final minimum goes to a lower id than the best seen.
    """
    ids = _candidate_ids(features.n_candidates_, excluded)
    values = np.empty(ids.size)
    best, best_value, best_result = None, np.inf, None
    for c, j in enumerate(ids):
        value, result = try_candidate(int(j))
        values[c] = value
        if best is None or value < best_value - TIE_RTOL * abs(best_value):
            best, best_value, best_result = int(j), value, result
    j, value = _first_min(ids, values)
    if j != best:
        return j, value, None
    return best, best_value, best_result
