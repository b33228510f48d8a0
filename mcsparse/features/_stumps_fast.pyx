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


cdef int _scan_feature(
    const int32_t[::1] ranks,
    const floating[:, ::1] residual,
    intp_t n_values,
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
    cdef intp_t n = ranks.shape[0]
    cdef intp_t k = residual.shape[1]
    cdef intp_t n_excl = excluded.shape[0]
    cdef intp_t i, c, r, cand, e = excl_start
    cdef float64_t score
    best_score[0] = -INFINITY
    best_id[0] = -1
    max_score[0] = -INFINITY
    if n_values < 2:
        return 0
    memset(bins, 0, n_values * k * sizeof(float64_t))
    for i in range(n):
        r = ranks[i]
        if r < 0 or r >= n_values:
            return -1
        for c in range(k):
            bins[r * k + c] += residual[i, c]
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


def scan_stumps(
    const int32_t[:, ::1] ranks not None,
    const floating[:, ::1] residual not None,
    const intp_t[::1] offsets not None,
    const intp_t[::1] excluded not None,
    cutoff=None,
):
    """Score every stump of every feature; return the best one per feature.

    Low-level entry point: shapes, offsets, ranks and exclusions are checked;
    :class:`mcsparse.features.DecisionStumps` builds the inputs with
    :func:`mcsparse.features._stumps.rank_stumps`.

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
        0, ``excluded`` is not sorted, or a rank is outside
        ``[0, n_values)`` of its feature.
    """
    cdef intp_t d = ranks.shape[0]
    cdef intp_t n = ranks.shape[1]
    cdef intp_t k = residual.shape[1]
    cdef intp_t f, e, n_excl = excluded.shape[0], max_values = 1, status = 0
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
    best_score_arr = np.full(d, -np.inf)
    best_id_arr = np.full(d, -1, dtype=np.intp)
    max_score_arr = np.full(d, -np.inf)
    if n == 0 or k == 0:
        return best_score_arr, best_id_arr, max_score_arr
    cdef float64_t[::1] best_score = best_score_arr
    cdef intp_t[::1] best_id = best_id_arr
    cdef float64_t[::1] max_score = max_score_arr
    cdef float64_t* bins = <float64_t*> calloc(max_values * k, sizeof(float64_t))
    cdef float64_t* acc = <float64_t*> calloc(k, sizeof(float64_t))
    cdef float64_t* scores = <float64_t*> calloc(max_values, sizeof(float64_t))
    if bins == NULL or acc == NULL or scores == NULL:
        free(bins)
        free(acc)
        free(scores)
        raise MemoryError()
    e = 0
    try:
        with nogil:
            for f in range(d):
                while e < n_excl and excluded[e] < offsets[f]:
                    e += 1
                status = _scan_feature(ranks[f], residual,
                                       offsets[f + 1] - offsets[f] + 1,
                                       offsets[f], excluded, e, cut, use_cutoff, bins,
                                       acc, scores, &best_score[f], &best_id[f],
                                       &max_score[f])
                if status != 0:
                    break
    finally:
        free(bins)
        free(acc)
        free(scores)
    if status != 0:
        raise ValueError(f"ranks of feature {f} are outside [0, n_values)")
    return best_score_arr, best_id_arr, max_score_arr
