# Decision-stump scan for ShareBoost's selection step ([SWS2011], §4.1).
#
# A stump on original feature f with threshold theta is the column
# x_i = 1[v_{i,f} <= theta]. Its gradient column is G[:, s] = sum over the
# samples with v_{i,f} <= theta of the residual rows R_i = w_i (p_i - e_{y_i})
# (divided by sum_i w_i, which the caller applies). With ``ranks[f, i]`` the
# rank of v_{i,f} among the q_f distinct training values of f (one sort per
# feature, once per fit), one pass over the samples adds each residual row
# into its value's bin (R read in order, the q_f x n_classes bins stay in
# cache when q_f is small, as for pixels or integer features), and the prefix
# sums of the bins are the gradient columns of all q_f - 1 thresholds:
# O(n_samples * n_classes + q_f * n_classes) per feature, and no stump is
# ever materialised.
#
# Candidates are numbered globally, feature by feature, in increasing
# threshold order: feature f owns ids offsets[f] .. offsets[f + 1] - 1 (the
# threshold between its distinct values of rank r and r + 1 has id
# offsets[f] + r), so q_f = offsets[f + 1] - offsets[f] + 1.
# The plain-NumPy twin is mcsparse.features._stumps.scan_stumps_numpy.

import numbers
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from mcsparse.utils._typedefs cimport floating, float64_t, intp_t

ctypedef int int32_t

# Scores within this relative distance of a feature's best count as tied with
# it (mcsparse.utils._ties), so that rounding (weights instead of repeated
# samples, another row order) does not decide between stumps that are equally
# good: the first of them is chosen.
from mcsparse.utils._ties import TIE_RTOL
cdef float64_t _TIE_RTOL = TIE_RTOL


# A feature's samples off its most frequent rank ``mode``: ``rows[start:stop]``,
# of ranks ``codes[start:stop]``; the bin of ``mode`` is then ``totals`` (the
# residual's column sums) less the other bins. ``mode < 0``: every sample is
# scanned.
ctypedef struct _Listed:
    intp_t mode
    intp_t start
    intp_t stop
    const int32_t* rows
    const int32_t* codes
    const float64_t* totals


cdef int _feature_bins(
    const int32_t[::1] ranks,
    const floating[:, ::1] residual,
    intp_t n_values,
    _Listed listed,
    float64_t* bins,
) noexcept nogil:
    """Fill one feature's per-rank residual sums ``bins`` (n_values x n_classes).

    ``listed.mode < 0``: every sample is added into its rank's bin. Else the
    listed samples (those whose rank is not ``mode``) are added, and the bin
    of ``mode`` is the column totals less the sum of the other bins. Returns
    -1 if a rank or a row is out of range (or a listed sample has the rank
    ``mode``).
    """
    cdef intp_t n = residual.shape[0]
    cdef intp_t k = residual.shape[1]
    cdef intp_t i, j, c, r, mode = listed.mode
    cdef float64_t other
    if mode >= n_values:
        return -1
    memset(bins, 0, n_values * k * sizeof(float64_t))
    if mode < 0:
        for i in range(n):
            r = ranks[i]
            if r < 0 or r >= n_values:
                return -1
            for c in range(k):
                bins[r * k + c] += residual[i, c]
        return 0
    for j in range(listed.start, listed.stop):
        i = listed.rows[j]
        r = listed.codes[j]
        if r < 0 or r >= n_values or r == mode or i < 0 or i >= n:
            return -1
        for c in range(k):
            bins[r * k + c] += residual[i, c]
    for c in range(k):
        other = bins[c]  # the mode's bin is still zero: it adds nothing
        for r in range(1, n_values):
            other += bins[r * k + c]
        bins[mode * k + c] = listed.totals[c] - other
    return 0


cdef int _scan_feature(
    const int32_t[::1] ranks,
    const floating[:, ::1] residual,
    intp_t n_values,
    _Listed listed,
    intp_t first_id,
    const intp_t[::1] excluded,
    intp_t excl_start,
    float64_t cutoff,
    bint use_cutoff,
    float64_t* bins,
    float64_t* acc,
    float64_t* scores,
    float64_t* best_score,
    intp_t* best_id,
    float64_t* max_score,
) noexcept nogil:
    """The first non-excluded threshold of one feature scoring at least the cutoff.

    The cutoff is ``cutoff`` when ``use_cutoff``, else the feature's largest
    score less ``TIE_RTOL`` times its magnitude (the first threshold tied
    with the feature's best). ``scores`` holds the thresholds' scores
    (``-inf`` for the excluded ones). Returns -1 if a rank is out of range.
    """
    cdef intp_t k = residual.shape[1]
    cdef intp_t n_excl = excluded.shape[0]
    cdef intp_t c, r, cand, e = excl_start
    cdef float64_t score
    best_score[0] = -INFINITY
    best_id[0] = -1
    max_score[0] = -INFINITY
    if n_values < 2:
        return 0
    if _feature_bins(ranks, residual, n_values, listed, bins) != 0:
        return -1
    for c in range(k):
        acc[c] = 0.0
    for r in range(n_values - 1):
        score = 0.0
        for c in range(k):
            acc[c] += bins[r * k + c]
            score += fabs(acc[c])
        cand = first_id + r
        # skip the excluded ids (sorted) below or at this candidate
        while e < n_excl and excluded[e] < cand:
            e += 1
        if e < n_excl and excluded[e] == cand:
            score = -INFINITY
        elif score > max_score[0]:
            max_score[0] = score
        scores[r] = score
    if max_score[0] == -INFINITY:
        return 0
    if not use_cutoff:  # scores are l1 norms, >= 0 (infinite on overflow)
        cutoff = max_score[0] * (1.0 - _TIE_RTOL)
    for r in range(n_values - 1):
        if scores[r] >= cutoff:
            best_score[0] = scores[r]
            best_id[0] = first_id + r
            break
    return 0


def _scan_group(
    intp_t lo,
    intp_t hi,
    const int32_t[:, ::1] ranks,
    const floating[:, ::1] residual,
    const intp_t[::1] offsets,
    const intp_t[::1] excluded,
    const intp_t[::1] excl_start,
    const intp_t[::1] modes,
    const intp_t[::1] indptr,
    const int32_t[::1] rows,
    const int32_t[::1] codes,
    const float64_t[::1] totals,
    float64_t cutoff,
    bint use_cutoff,
    intp_t max_values,
    float64_t[::1] best_score,
    intp_t[::1] best_id,
    float64_t[::1] max_score,
):
    """Scan the features ``lo .. hi - 1`` without the GIL; -1, or the first bad feature."""
    cdef intp_t k = residual.shape[1]
    cdef intp_t f, bad = -1
    cdef _Listed listed
    listed.rows = &rows[0] if rows.shape[0] > 0 else NULL
    listed.codes = &codes[0] if codes.shape[0] > 0 else NULL
    listed.totals = &totals[0]
    cdef float64_t* bins = <float64_t*> calloc(max_values * k, sizeof(float64_t))
    cdef float64_t* acc = <float64_t*> calloc(k, sizeof(float64_t))
    cdef float64_t* scores = <float64_t*> calloc(max_values, sizeof(float64_t))
    try:
        if bins == NULL or acc == NULL or scores == NULL:
            raise MemoryError()
        with nogil:
            for f in range(lo, hi):
                listed.mode, listed.start, listed.stop = modes[f], indptr[f], indptr[f + 1]
                if _scan_feature(ranks[f], residual, offsets[f + 1] - offsets[f] + 1,
                                 listed, offsets[f], excluded, excl_start[f], cutoff,
                                 use_cutoff, bins, acc, scores, &best_score[f],
                                 &best_id[f], &max_score[f]) != 0:
                    bad = f
                    break
    finally:
        free(bins)
        free(acc)
        free(scores)
    return bad


def _column_totals(const floating[:, ::1] residual):
    """Column sums of the residual in float64, row after row (the twin's order)."""
    cdef intp_t n = residual.shape[0], k = residual.shape[1], i, c
    totals_arr = np.zeros(max(k, 1))
    cdef float64_t[::1] totals = totals_arr
    with nogil:
        for i in range(n):
            for c in range(k):
                totals[c] += residual[i, c]
    return totals_arr


# One pool of worker threads per thread count, kept for the next rounds (as
# OpenMP keeps its threads), and made again in a forked child, whose copy of
# the parent's threads does not run. Never shut down: a fit on other threads
# may be using it.
_POOLS = {}
_POOLS_LOCK = threading.Lock()


def _executor(n_threads):
    key = (os.getpid(), n_threads)
    with _POOLS_LOCK:
        if key not in _POOLS:
            _POOLS[key] = ThreadPoolExecutor(max_workers=n_threads,
                                             thread_name_prefix="mcsparse-stumps")
        return _POOLS[key]


def _run_groups(args, groups, n_threads):
    """``_scan_group`` on every group, on ``n_threads`` pool threads."""
    return list(_executor(n_threads).map(lambda g: _scan_group(g[0], g[1], *args), groups))


# A thread's share of the scan is worth its hand-over from about this many
# residual entries added (about a millisecond): on pendigits (7,494 samples,
# 16 features, 10 classes, 1.2e6 entries) two threads took 4.3 ms a round
# against 1.3 ms on one, on a busy two-core machine.
_MIN_GROUP_COST = 1 << 20


def _groups(cost, n_threads):
    """Contiguous feature groups ``(lo, hi)`` of about equal cost, up to 4 per thread."""
    d = cost.shape[0]
    cumulative = np.cumsum(cost)
    n_groups = max(1, min(d, 4 * n_threads, int(cumulative[d - 1]) // _MIN_GROUP_COST))
    targets = cumulative[d - 1] * np.arange(1, n_groups) / n_groups
    edges = np.unique(np.concatenate(
        [[0], np.searchsorted(cumulative, targets, side="right"), [d]]))
    edges = edges.tolist()
    return list(zip(edges[:len(edges) - 1], edges[1:]))


def _check_sparse(sparse, intp_t d, intp_t max_entries):
    """The ``sparse`` argument of ``scan_stumps`` as four checked arrays."""
    if sparse is None:
        empty = np.zeros(0, dtype=np.int32)
        return (np.full(d, -1, dtype=np.intp), np.zeros(d + 1, dtype=np.intp), empty,
                empty)
    try:
        modes, indptr, rows, codes = sparse
    except (TypeError, ValueError):
        raise ValueError("sparse must be a tuple (modes, indptr, rows, codes)") from None
    modes = np.asarray(modes)
    indptr = np.asarray(indptr)
    rows = np.asarray(rows)
    codes = np.asarray(codes)
    for name, a, dtype in (("modes", modes, np.intp), ("indptr", indptr, np.intp),
                           ("rows", rows, np.int32), ("codes", codes, np.int32)):
        if a.dtype != dtype or a.ndim != 1:
            raise ValueError(f"sparse {name} must be 1-D {np.dtype(dtype).name}, got "
                             f"{a.ndim}-D {a.dtype}")
    if modes.shape[0] != d or indptr.shape[0] != d + 1:
        raise ValueError(f"sparse modes and indptr must have {d} and {d + 1} entries, "
                         f"got {modes.shape[0]} and {indptr.shape[0]}")
    if rows.shape[0] != codes.shape[0]:
        raise ValueError("sparse rows and codes must have the same length")
    if d > 0 and (indptr[0] < 0 or np.any(np.diff(indptr) < 0)
                  or indptr[d] > rows.shape[0]):
        raise ValueError("sparse indptr must be non-decreasing within [0, len(rows)]")
    if np.any(modes < -1) or np.any(modes >= max_entries):
        raise ValueError("sparse modes must be -1 or a rank of their feature")
    return (np.ascontiguousarray(modes), np.ascontiguousarray(indptr),
            np.ascontiguousarray(rows), np.ascontiguousarray(codes))


def scan_stumps(
    const int32_t[:, ::1] ranks not None,
    const floating[:, ::1] residual not None,
    const intp_t[::1] offsets not None,
    const intp_t[::1] excluded not None,
    cutoff=None,
    sparse=None,
    n_threads=1,
):
    """Score every stump of every feature; return the best one per feature.

    Low-level entry point: shapes, offsets, ranks and exclusions are checked;
    :class:`mcsparse.features.DecisionStumps` builds the inputs with
    :func:`mcsparse.features._stumps.rank_stumps` and
    :func:`mcsparse.features._stumps.compress_ranks`.

    Parameters
    ----------
    ranks : ndarray of shape (n_features, n_samples), int32, C order
        ``ranks[f, i]``: rank of sample ``i``'s value among the distinct
        training values of feature ``f`` (0 for the smallest).
    residual : ndarray of shape (n_samples, n_classes), float32 or float64
        Residual rows ``w_i (p_i - e_{y_i})`` (the gradient of the loss sum
        with respect to the scores).
    offsets : ndarray of shape (n_features + 1,), intp, non-decreasing
        Candidate ids of feature ``f`` are ``offsets[f] .. offsets[f+1]-1``:
        one per pair of consecutive distinct values, so feature ``f`` has
        ``offsets[f+1] - offsets[f] + 1`` distinct values.
    excluded : ndarray of shape (n_excluded,), intp, sorted increasing
        Candidate ids that must not be chosen (already selected).
    cutoff : float, default=None
        None: each feature's best stump is its first non-excluded threshold
        whose score is tied with the feature's largest (within the relative
        ``TIE_RTOL``, :mod:`mcsparse.utils._ties`). A float: its first
        non-excluded threshold scoring at least ``cutoff``.
    sparse : tuple (modes, indptr, rows, codes), default=None
        The ranks without each feature's most frequent one
        (:func:`~mcsparse.features._stumps.compress_ranks`): ``modes``, intp
        of shape (n_features,), the skipped rank of each feature, or -1 to
        scan ``ranks[f]`` in full; ``rows`` and ``codes``, int32, the samples
        whose rank is not the mode and their ranks, feature ``f``'s at
        ``indptr[f]:indptr[f + 1]`` (intp, non-decreasing). The bin of the
        mode is then the residual's column totals less the other bins. None
        scans every feature in full.
    n_threads : int, default=1
        Threads scanning contiguous groups of features without the GIL (one
        when the scan is too small to share). The results do not depend on
        it: each feature is scanned alone.

    Returns
    -------
    best_score : ndarray of shape (n_features,), float64
        The score ``||sum_{v_f <= theta} R_i||_1`` of the feature's best
        stump; ``-inf`` when it has none.
    best_id : ndarray of shape (n_features,), intp
        Global id of the best stump, -1 when none.
    max_score : ndarray of shape (n_features,), float64
        The largest score over the feature's non-excluded thresholds,
        ``-inf`` when it has none.

    Raises
    ------
    ValueError
        If the shapes disagree, ``offsets`` decreases or does not start at
        0, ``excluded`` is not sorted, a rank is outside ``[0, n_values)``
        of its feature, ``sparse`` is malformed (a row outside the samples,
        a listed rank equal to its feature's mode) or ``n_threads < 1``.
    """
    cdef intp_t d = ranks.shape[0]
    cdef intp_t n = ranks.shape[1]
    cdef intp_t k = residual.shape[1]
    cdef intp_t f, e, n_excl = excluded.shape[0], max_values = 1
    if residual.shape[0] != n:
        raise ValueError(
            f"residual has {residual.shape[0]} rows, ranks has {n} samples"
        )
    if offsets.shape[0] != d + 1:
        raise ValueError(f"offsets must have {d + 1} entries, got {offsets.shape[0]}")
    if offsets[0] != 0:
        raise ValueError(f"offsets must start at 0, got {offsets[0]}")
    for f in range(d):
        if offsets[f + 1] < offsets[f]:
            raise ValueError("offsets must be non-decreasing")
        max_values = max(max_values, offsets[f + 1] - offsets[f] + 1)
    if max_values > n and n > 0:
        raise ValueError(
            f"offsets give a feature {max_values} distinct values, more than "
            f"the {n} samples"
        )
    for e in range(1, n_excl):
        if excluded[e] <= excluded[e - 1]:
            raise ValueError("excluded must be sorted and without repeats")
    cdef bint use_cutoff = cutoff is not None
    cdef float64_t cut = float(cutoff) if use_cutoff else 0.0
    if use_cutoff and cut != cut:
        raise ValueError("cutoff must not be NaN")
    if isinstance(n_threads, bool) or not isinstance(n_threads, numbers.Integral) \
            or n_threads < 1:
        raise ValueError(f"n_threads must be an int >= 1, got {n_threads!r}")
    modes, indptr, rows, codes = _check_sparse(sparse, d, max_values)
    best_score = np.full(d, -np.inf)
    best_id = np.full(d, -1, dtype=np.intp)
    max_score = np.full(d, -np.inf)
    if n == 0 or k == 0 or d == 0:
        return best_score, best_id, max_score
    offsets_arr = np.asarray(offsets)
    excl_start = np.searchsorted(np.asarray(excluded), offsets_arr[:d]).astype(np.intp)
    totals = _column_totals(residual) if np.any(modes >= 0) else np.zeros(k)
    args = (np.asarray(ranks), np.asarray(residual), offsets_arr, np.asarray(excluded),
            excl_start, modes, indptr, rows, codes, totals, cut, use_cutoff, max_values,
            best_score, best_id, max_score)
    groups = [(0, d)]
    if n_threads > 1 and d > 1:
        cost = (np.where(modes >= 0, np.diff(indptr), n) + np.diff(offsets_arr) + 1) * k
        groups = _groups(cost, n_threads)
    if len(groups) == 1:
        bad = [_scan_group(0, d, *args)]
    else:
        bad = _run_groups(args, groups, n_threads)
    bad = [b for b in bad if b >= 0]
    if bad:
        raise ValueError(f"ranks of feature {bad[0]} are outside [0, n_values)")
    return best_score, best_id, max_score
