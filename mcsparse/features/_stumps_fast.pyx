# Decision-stump scan for ShareBoost's selection step ([SWS2011], §4.1).
#
# A stump on original feature f with threshold theta is the column
# x_i = 1[v_{i,f} <= theta]. Its gradient column is G[:, s] = sum over the
# samples with v_{i,f} <= theta of the residual rows R_i = w_i (p_i - e_{y_i})
# (divided by sum_i w_i, which the caller applies). With the samples sorted by
# v_f once per fit, the gradient columns of all thresholds of feature f are the
# prefix sums of the sorted residual rows: one O(n_samples * n_classes) pass
# per feature scores every threshold, and no stump is ever materialised.
#
# Thresholds lie between consecutive distinct values: position p of the sorted
# order is a candidate when value[p] < value[p + 1] (``is_boundary[f, p]``).
# Candidates are numbered globally, feature by feature, in increasing
# threshold order: feature f owns ids offsets[f] .. offsets[f + 1] - 1.
# The plain-NumPy twin is mcsparse.features._stumps.scan_stumps_numpy.

import numpy as np

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport calloc, free

from mcsparse.utils._typedefs cimport floating, float64_t, intp_t

ctypedef unsigned char uint8_t
ctypedef int int32_t

# Scores within this relative distance of the best so far count as ties, so
# that rounding (weights instead of repeated samples, another row order) does
# not decide between stumps that are equally good, e.g. stumps of different
# features that split the training set the same way.
TIE_RTOL = 1e-10
cdef float64_t _TIE_RTOL = TIE_RTOL


cdef void _scan_feature(
    const int32_t[::1] order,
    const uint8_t[::1] is_boundary,
    const floating[:, ::1] residual,
    intp_t first_id,
    const intp_t[::1] excluded,
    intp_t excl_start,
    float64_t* acc,
    float64_t* best_score,
    intp_t* best_id,
    intp_t* best_pos,
) noexcept nogil:
    """Best non-excluded threshold of one feature (the first one on ties).

    A later threshold wins only if its score exceeds the best so far by more
    than the relative ``TIE_RTOL``.
    """
    cdef intp_t n = order.shape[0]
    cdef intp_t k = residual.shape[1]
    cdef intp_t n_excl = excluded.shape[0]
    cdef intp_t p, c, i, cand = first_id, e = excl_start
    cdef float64_t score
    for c in range(k):
        acc[c] = 0.0
    best_score[0] = -INFINITY
    best_id[0] = -1
    best_pos[0] = -1
    for p in range(n - 1):
        i = order[p]
        for c in range(k):
            acc[c] += residual[i, c]
        if not is_boundary[p]:
            continue
        # skip the excluded ids (sorted) below or at this candidate
        while e < n_excl and excluded[e] < cand:
            e += 1
        if e < n_excl and excluded[e] == cand:
            cand += 1
            continue
        score = 0.0
        for c in range(k):
            score += fabs(acc[c])
        if best_id[0] < 0 or score > best_score[0] * (1.0 + _TIE_RTOL):
            best_score[0] = score
            best_id[0] = cand
            best_pos[0] = p
        cand += 1


def scan_stumps(
    const int32_t[:, ::1] order not None,
    const uint8_t[:, ::1] is_boundary not None,
    const floating[:, ::1] residual not None,
    const intp_t[::1] offsets not None,
    const intp_t[::1] excluded not None,
):
    """Score every stump of every feature; return the best one per feature.

    Low-level entry point: shapes are checked, the rest is the caller's job
    (:class:`mcsparse.features.DecisionStumps` builds the inputs).

    Parameters
    ----------
    order : ndarray of shape (n_features, n_samples), int32, C order
        ``order[f]`` sorts the training samples by feature ``f`` (stable).
    is_boundary : ndarray of shape (n_features, n_samples - 1), uint8, C order
        1 where the sorted values of ``f`` increase between positions
        ``p`` and ``p + 1`` (a threshold candidate), 0 on ties.
    residual : ndarray of shape (n_samples, n_classes), float32 or float64
        Residual rows ``w_i (p_i - e_{y_i})`` (the gradient of the loss sum
        with respect to the scores).
    offsets : ndarray of shape (n_features + 1,), intp
        Candidate ids of feature ``f`` are ``offsets[f] .. offsets[f+1]-1``
        (``offsets[f+1] - offsets[f]`` = number of ones in
        ``is_boundary[f]``).
    excluded : ndarray of shape (n_excluded,), intp, sorted increasing
        Candidate ids that must not be chosen (already selected).

    Returns
    -------
    best_score : ndarray of shape (n_features,), float64
        ``max_theta ||sum_{v_f <= theta} R_i||_1`` over the feature's
        non-excluded thresholds (the first threshold within the relative
        ``TIE_RTOL`` of the maximum); ``-inf`` when it has none.
    best_id : ndarray of shape (n_features,), intp
        Global id of the best stump, -1 when none.
    best_pos : ndarray of shape (n_features,), intp
        Its position ``p`` in ``order[f]``: the threshold lies between the
        values at ``order[f, p]`` and ``order[f, p + 1]``; -1 when none.
    """
    cdef intp_t d = order.shape[0]
    cdef intp_t n = order.shape[1]
    cdef intp_t k = residual.shape[1]
    cdef intp_t f, e = 0, n_excl = excluded.shape[0]
    if n < 1:
        raise ValueError("order has no samples")
    if is_boundary.shape[0] != d or is_boundary.shape[1] != n - 1:
        raise ValueError(
            f"is_boundary must have shape ({d}, {n - 1}), got "
            f"({is_boundary.shape[0]}, {is_boundary.shape[1]})"
        )
    if residual.shape[0] != n:
        raise ValueError(
            f"residual has {residual.shape[0]} rows, order has {n} samples"
        )
    if offsets.shape[0] != d + 1:
        raise ValueError(f"offsets must have {d + 1} entries, got {offsets.shape[0]}")
    for e in range(1, n_excl):
        if excluded[e] <= excluded[e - 1]:
            raise ValueError("excluded must be sorted and without repeats")
    best_score_arr = np.empty(d, dtype=np.float64)
    best_id_arr = np.empty(d, dtype=np.intp)
    best_pos_arr = np.empty(d, dtype=np.intp)
    cdef float64_t[::1] best_score = best_score_arr
    cdef intp_t[::1] best_id = best_id_arr
    cdef intp_t[::1] best_pos = best_pos_arr
    cdef float64_t* acc = <float64_t*> calloc(max(k, 1), sizeof(float64_t))
    if acc == NULL:
        raise MemoryError()
    e = 0
    try:
        with nogil:
            for f in range(d):
                while e < n_excl and excluded[e] < offsets[f]:
                    e += 1
                _scan_feature(order[f], is_boundary[f], residual, offsets[f],
                              excluded, e, acc, &best_score[f], &best_id[f],
                              &best_pos[f])
    finally:
        free(acc)
    return best_score_arr, best_id_arr, best_pos_arr
