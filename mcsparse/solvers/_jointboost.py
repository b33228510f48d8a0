"""JointBoost: GentleBoost with regression stumps shared by subsets of classes.

The algorithm of [TMF2007] (Torralba, Murphy, Freeman, TPAMI 29(5), 2007,
§3 and Fig. 5), restated in [SWS2011] §1.2. The model is
``H(v, c) = sum_m h_m(v, c)``; round ``m`` fits, by weighted least squares on
the targets ``z_i^c = +-1`` with weights ``w_i^c = exp(-z_i^c H(v_i, c))``,

    h_m(v, c) = a 1[v_f > theta] + b 1[v_f <= theta]    for c in S,
    h_m(v, c) = k_c                                     for c not in S,

over the feature ``f``, the threshold ``theta``, the class subset ``S`` and
the closed-form values ``a``, ``b``, ``k_c`` (weighted means of ``z``).

How one round is computed
-------------------------
Write ``Wl[t, c]``, ``Zl[t, c]`` for the sums of ``w`` and ``w z`` of class
``c`` over the samples on the ``<=`` side of candidate threshold ``t`` (all
thresholds of all features stacked), ``Wr``, ``Zr`` for the ``>`` side and
``Wc = Wl + Wr``, ``Zc = Zl + Zr``. The error of a stump is

    sum_{i,c} w_i^c - sum_{c not in S} Zc_c^2 / Wc_c
                    - (sum_S Zr)^2 / sum_S Wr - (sum_S Zl)^2 / sum_S Wl,

so minimising it is maximising the *gain*

    G(S, t) = (sum_S Zr)^2 / sum_S Wr + (sum_S Zl)^2 / sum_S Wl
              - sum_{c in S} Zc_c^2 / Wc_c,

a sum of non-negative terms minus a constant per class, never a difference of
two large nearly equal errors. ``Wl``, ``Zl`` (and ``Wr``, ``Zr``, as reverse
cumulative sums, not as ``total - left``) come from per-group sums: each
feature's distinct values are found once per fit (one sort), and each round
one sparse product ``P @ [w, w z]`` with the 0/1 matrix ``P`` of shape
``(n_groups, n_samples)`` gives the sums of every (feature, value) group.

The greedy best-first subset search of [TMF2007] keeps the running sums over
the subset built so far and scores *all* candidate classes at *all*
thresholds with one ``(n_thresholds, n_classes)`` NumPy expression per step;
``k`` steps give the nested subsets of sizes ``1 .. k`` (the last is the set
of all classes) and the best of them is kept: ``O(n_thresholds k^2)`` per
round. ``subset_search="exhaustive"`` scores all ``2^k - 1`` subsets instead
(small ``k`` only).

Ties go to the lowest feature, then the lowest threshold, then (greedy) the
lowest class index at each step and the smallest subset of the sequence, or
(exhaustive) the subset with the lowest bit mask ``sum_{c in S} 2^c``.
"""

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..utils.validation import check_solver_data

_MAX_EXHAUSTIVE_CLASSES = 16


@dataclass(frozen=True)
class JointBoostStump:
    """One shared regression stump ``h_m`` of JointBoost.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    feature : int
        Column ``f`` of ``X`` the stump thresholds.
    threshold : float
        ``theta``: the midpoint between two consecutive distinct training
        values of the feature (or the lower one, where the midpoint rounds to
        the upper one); ``inf`` for the degenerate stump of an all-constant
        ``X``.
    subset : ndarray of shape (n_classes,), dtype bool
        Mask of the classes ``S`` sharing the stump.
    a : float
        Value of the stump on ``v_f > theta`` for the classes in ``S``.
    b : float
        Value on ``v_f <= theta`` for the classes in ``S``.
    class_constants : ndarray of shape (n_classes,)
        ``k_c`` for the classes outside ``S``; zero for those in ``S``.
    """

    feature: int
    threshold: float
    subset: np.ndarray
    a: float
    b: float
    class_constants: np.ndarray

    def values(self):
        """Return the stump as a table of its values.

        Returns
        -------
        table : ndarray of shape (2, n_classes)
            Row 0: ``h(v, c)`` on ``v_f <= theta``; row 1: on ``v_f > theta``.
        """
        table = np.empty((2, self.subset.shape[0]))
        table[0] = np.where(self.subset, self.b, self.class_constants)
        table[1] = np.where(self.subset, self.a, self.class_constants)
        return table

    def predict(self, X):
        """Evaluate the stump on every row of ``X``.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        h : ndarray of shape (n_samples, n_classes)
            ``h(v_i, c)``.
        """
        return self.values()[(X[:, self.feature] > self.threshold).astype(np.intp)]


@dataclass(frozen=True)
class JointBoostRound:
    """State after one JointBoost round, passed to ``callback``.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    round : int
        Round number, starting at 1 (= number of stumps).
    stump : JointBoostStump
        The stump fitted in this round.
    weighted_error : float
        Its weighted squared error ``sum_{i,c} w_i^c (z_i^c - h(v_i, c))^2``,
        with the round's weights scaled to sum to one (so in ``[0, 1]``).
    train_loss : float
        ``sum_{i,c} exp(-z_i^c H(v_i, c))`` after adding the stump.
    elapsed : float
        Seconds since the start of the fit.
    """

    round: int
    stump: JointBoostStump
    weighted_error: float
    train_loss: float
    elapsed: float


@dataclass
class JointBoostPath:
    """Result of :func:`jointboost`: the stumps and per-round diagnostics.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    stumps : list of JointBoostStump
        One per round, in order.
    weighted_error : ndarray of shape (n_rounds,)
        Each round's minimal weighted squared error (weights summing to one).
    train_loss : ndarray of shape (n_rounds,)
        ``sum_{i,c} exp(-z_i^c H(v_i, c))`` after each round.
    elapsed : ndarray of shape (n_rounds,)
        Seconds from the start of the fit to the end of each round.
    """

    stumps: list
    weighted_error: np.ndarray
    train_loss: np.ndarray
    elapsed: np.ndarray


class _Groups:
    """Distinct values of every feature, computed once per fit.

    Attributes
    ----------
    indicator : csr_matrix of shape (n_groups, n_samples)
        ``P[g, i] = 1`` when sample ``i`` has the value of group ``g``; the
        groups of feature ``f`` are rows ``starts[f]:starts[f + 1]``, in
        increasing order of value.
    starts : ndarray of shape (n_features + 1,)
        Group offsets per feature.
    threshold_feature : ndarray of shape (n_thresholds,)
        Feature of each candidate threshold (features in order, thresholds in
        increasing order within a feature).
    threshold_value : ndarray of shape (n_thresholds,)
        ``theta`` of each candidate threshold.
    """

    def __init__(self, X):
        n_samples, n_features = X.shape
        rows, starts, feats, thetas = [], [0], [], []
        for f in range(n_features):
            values, inverse = np.unique(np.asarray(X[:, f], dtype=np.float64),
                                        return_inverse=True)
            rows.append(inverse.ravel() + starts[-1])
            starts.append(starts[-1] + values.shape[0])
            lo, hi = values[:-1], values[1:]
            mid = lo / 2 + hi / 2  # no overflow near the largest floats
            # v > theta must hold for hi and fail for lo
            mid = np.where((mid >= hi) | (mid < lo), lo, mid)
            feats.append(np.full(lo.shape[0], f, dtype=np.intp))
            thetas.append(mid)
        self.starts = np.asarray(starts, dtype=np.intp)
        n_groups = int(self.starts[-1])
        row = np.concatenate(rows) if rows else np.empty(0, dtype=np.intp)
        col = np.tile(np.arange(n_samples, dtype=np.intp), n_features)
        self.indicator = sp.csr_matrix(
            (np.ones(row.shape[0]), (row, col)), shape=(n_groups, n_samples)
        )
        self.threshold_feature = (np.concatenate(feats) if feats
                                  else np.empty(0, dtype=np.intp))
        self.threshold_value = (np.concatenate(thetas) if thetas
                                else np.empty(0))

    def side_sums(self, w, wz):
        """Per-threshold sums of ``w`` and ``w z`` on both sides.

        Returns ``Wl, Zl, Wr, Zr``, each of shape (n_thresholds, n_classes).
        """
        k = w.shape[1]
        group = self.indicator @ np.hstack([w, wz])  # (n_groups, 2k)
        n_thr = self.threshold_value.shape[0]
        left = np.empty((n_thr, 2 * k))
        right = np.empty((n_thr, 2 * k))
        pos = 0
        for f in range(self.starts.shape[0] - 1):
            g = group[self.starts[f]:self.starts[f + 1]]
            m = g.shape[0] - 1
            if m <= 0:
                continue
            np.cumsum(g[:-1], axis=0, out=left[pos:pos + m])
            right[pos:pos + m] = np.cumsum(g[:0:-1], axis=0)[::-1]
            pos += m
        return left[:, :k], left[:, k:], right[:, :k], right[:, k:]


def _ratio_sq(num, den):
    """``num^2 / den`` where ``den > 0``, else 0 (an empty side gains nothing)."""
    out = np.zeros(np.broadcast_shapes(np.shape(num), np.shape(den)))
    np.divide(num * num, den, out=out, where=den > 0)
    return out


def _ratio(num, den):
    return float(num / den) if den > 0 else 0.0


def _greedy_subset(Wl, Zl, Wr, Zr, const, chunk=2048):
    """Best-first nested subsets; returns (gain, threshold index, subset mask).

    Each step scores ``S + {c}`` for every class ``c`` at every threshold
    (classes already in ``S`` are masked afterwards), in blocks of ``chunk``
    thresholds so that the block's temporaries stay in cache.
    """
    n_thr, k = Wl.shape
    in_s = np.zeros(k, dtype=bool)
    running = np.zeros((4, n_thr))  # sums over S of Wl, Zl, Wr, Zr
    s_const = 0.0
    best = (-np.inf, 0, None)
    buf = np.empty((3, min(chunk, n_thr), k))
    cols = np.arange(k)
    for _ in range(k):
        g_best = np.full(k, -np.inf)
        t_best = np.zeros(k, dtype=np.intp)
        for lo in range(0, n_thr, chunk):
            hi = min(lo + chunk, n_thr)
            num, den, gain = buf[:, : hi - lo]
            # gain = (sZr + Zr)^2 / (sWr + Wr) + (sZl + Zl)^2 / (sWl + Wl) - const;
            # an empty side (den = 0) has num = 0 and gains nothing
            np.add(running[3, lo:hi, None], Zr[lo:hi], out=num)
            np.multiply(num, num, out=num)
            np.add(running[2, lo:hi, None], Wr[lo:hi], out=den)
            np.divide(num, den, out=num, where=den > 0)
            np.subtract(num, s_const + const, out=gain)
            np.add(running[1, lo:hi, None], Zl[lo:hi], out=num)
            np.multiply(num, num, out=num)
            np.add(running[0, lo:hi, None], Wl[lo:hi], out=den)
            np.divide(num, den, out=num, where=den > 0)
            gain += num
            t = np.argmax(gain, axis=0)
            g = gain[t, cols]
            better = g > g_best  # strict: the earlier threshold wins ties
            g_best[better] = g[better]
            t_best[better] = t[better] + lo
        g_best[in_s] = -np.inf
        c = int(np.argmax(g_best))  # ties: the lowest class index
        in_s[c] = True
        running[0] += Wl[:, c]
        running[1] += Zl[:, c]
        running[2] += Wr[:, c]
        running[3] += Zr[:, c]
        s_const += const[c]
        if g_best[c] > best[0]:  # ties: the smaller subset
            best = (float(g_best[c]), int(t_best[c]), in_s.copy())
    return best


def _exhaustive_subset(Wl, Zl, Wr, Zr, const, chunk=256):
    """All ``2^k - 1`` subsets, in increasing bit-mask order."""
    n_thr, k = Wl.shape
    best = (-np.inf, 0, None)
    bits = 1 << np.arange(k)
    for start in range(1, 2 ** k, chunk):
        codes = np.arange(start, min(start + chunk, 2 ** k))
        M = ((codes[None, :] & bits[:, None]) > 0).astype(np.float64)  # (k, n_sub)
        gain = (_ratio_sq(Zr @ M, Wr @ M) + _ratio_sq(Zl @ M, Wl @ M)
                - const @ M)  # (n_thr, n_sub)
        flat = int(np.argmax(gain.T))  # subset-major: lowest mask, then threshold
        j, t = divmod(flat, n_thr)
        if gain[t, j] > best[0]:
            best = (float(gain[t, j]), t, M[:, j].astype(bool))
    return best


def fit_round(groups, w, z, subset_search="greedy"):
    """Fit one shared stump to the weights ``w`` and targets ``z``.

    Parameters
    ----------
    groups : _Groups
        The fit's distinct values.
    w : ndarray of shape (n_samples, n_classes)
        Positive weights.
    z : ndarray of shape (n_samples, n_classes)
        Targets in ``{-1, +1}``.
    subset_search : {"greedy", "exhaustive"}, default="greedy"
        Subset search.

    Returns
    -------
    stump : JointBoostStump
    error : float
        Its weighted squared error ``sum w (z - h)^2``.
    """
    wz = w * z
    Wc = w.sum(axis=0)
    Zc = wz.sum(axis=0)
    const = _ratio_sq(Zc, Wc)  # gain of a class-specific constant per class
    k_all = np.where(Wc > 0, Zc / np.where(Wc > 0, Wc, 1.0), 0.0)
    base = float(w.sum()) - float(const.sum())  # error of the constants alone
    if groups.threshold_value.shape[0] == 0:
        # every feature is constant: no split exists, the best fit is k_c alone
        stump = JointBoostStump(0, np.inf, np.zeros(w.shape[1], dtype=bool),
                                0.0, 0.0, k_all)
        return stump, max(base, 0.0)
    Wl, Zl, Wr, Zr = groups.side_sums(w, wz)
    search = _greedy_subset if subset_search == "greedy" else _exhaustive_subset
    gain, t, subset = search(Wl, Zl, Wr, Zr, const)
    a = _ratio(Zr[t, subset].sum(), Wr[t, subset].sum())
    b = _ratio(Zl[t, subset].sum(), Wl[t, subset].sum())
    stump = JointBoostStump(
        int(groups.threshold_feature[t]), float(groups.threshold_value[t]),
        subset, a, b, np.where(subset, 0.0, k_all),
    )
    return stump, max(base - gain, 0.0)


def jointboost(X, y, n_classes, n_estimators, *, subset_search="greedy",
               callback=None, verbose=0):
    """Run JointBoost for ``n_estimators`` rounds.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64 or float32
        Dense, finite training data (float32 is read as float64 exactly).
    y : ndarray of shape (n_samples,), dtype intp
        Class indices in ``[0, n_classes)``.
    n_classes : int
        Number of classes ``k`` (at least 2).
    n_estimators : int
        Number of rounds (stumps), at least 1.
    subset_search : {"greedy", "exhaustive"}, default="greedy"
        The best-first nested subsets of [TMF2007] (``k`` subsets of sizes
        ``1 .. k`` per round, ``O(k^2)`` candidate evaluations), or all
        ``2^k - 1`` subsets (``k <= 16``).
    callback : callable, default=None
        Called after every round with a :class:`JointBoostRound`; returning
        True stops the fit after that round.
    verbose : int, default=0
        Print one line per round when positive.

    Returns
    -------
    path : JointBoostPath
        The stumps, weighted errors, training losses and times.

    Raises
    ------
    ValueError
        If ``subset_search`` is unknown, or exhaustive with more than 16
        classes; if ``X`` has NaN or infinity, ``y`` is not of length
        ``n_samples`` or holds an index outside ``[0, n_classes)``, or
        ``n_classes < 2``.
    TypeError
        If ``y`` does not hold integers.
    """
    if subset_search not in ("greedy", "exhaustive"):
        raise ValueError(
            f"subset_search must be 'greedy' or 'exhaustive', got {subset_search!r}"
        )
    if subset_search == "exhaustive" and n_classes > _MAX_EXHAUSTIVE_CLASSES:
        raise ValueError(
            f"subset_search='exhaustive' scores 2^k - 1 subsets and is limited to "
            f"{_MAX_EXHAUSTIVE_CLASSES} classes, got {n_classes}"
        )
    X, y, _ = check_solver_data(X, y, n_classes)
    start = time.perf_counter()
    n_samples = X.shape[0]
    groups = _Groups(X)
    z = -np.ones((n_samples, n_classes))
    z[np.arange(n_samples), y] = 1.0
    H = np.zeros((n_samples, n_classes))
    margin = np.zeros((n_samples, n_classes))  # z * H
    stumps, errors, losses, elapsed = [], [], [], []
    for m in range(1, n_estimators + 1):
        # w = exp(-z H), scaled to sum to one (the fit is scale invariant)
        low = margin.min()
        w = np.exp(low - margin)
        w /= w.sum()
        stump, error = fit_round(groups, w, z, subset_search)
        H += stump.predict(X)
        np.multiply(z, H, out=margin)
        low = margin.min()
        loss = float(np.exp(-low) * np.exp(low - margin).sum())
        stumps.append(stump)
        errors.append(error)
        losses.append(loss)
        elapsed.append(time.perf_counter() - start)
        if verbose > 0:
            print(f"JointBoost round {m}: feature {stump.feature}, threshold "
                  f"{stump.threshold:.6g}, |S| = {int(stump.subset.sum())}, "
                  f"weighted error {error:.6g}, loss {loss:.6g}, "
                  f"{elapsed[-1]:.2f} s", flush=True)
        if callback is not None and callback(
            JointBoostRound(m, stump, error, loss, elapsed[-1])
        ):
            break
    return JointBoostPath(stumps, np.asarray(errors), np.asarray(losses),
                          np.asarray(elapsed))
