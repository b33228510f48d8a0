# Group scores of ShareBoost's piecewise-linear "anchor" features
# ([SWS2011], §3.2 and §4.2): the hot loop.
#
# An anchor a with radius index b defines the group of n_cols features
# 1[||x - v_a|| <= r_ab] * X1[i, :] (X1 is the data with a column of ones
# appended). The group's score, ShareBoost's group-selection criterion, is the
# sum over the group of the l1 norms of the gradient columns:
#
#     score[a, b] = sum_{c, f} | sum_{i in S_ab} residual[i, c] * X1[i, f] |,
#
# the entrywise l1 norm of the n_classes x n_cols matrix R_S^T X1_S over the
# samples S_ab inside the ball. The caller sorts each anchor's nearest n_max
# samples by distance once (``order``, nearest first) and gives, per radius,
# the number of samples inside the ball (``cuts``, non-decreasing), so the
# ball (a, b) is order[a, :cuts[a, b]]. The balls of one anchor are nested:
# one cumulative pass over order[a, :cuts[a, -1]] adds the outer product
# residual[i] x X1[i] of each sample into an n_classes x n_cols accumulator
# and, at each cut, writes the accumulator's l1 norm. Cost per anchor:
# cuts[a, -1] * n_classes * n_cols multiply-adds plus n_radii * n_classes *
# n_cols for the norms.
#
# Between two consecutive cuts the samples form a block S_b, and the update
# is acc += R_b^T X1_b. A block of enough work (GEMM_MIN_MACS) is gathered
# (at most BLOCK_ROWS rows at a time, so the buffers stay in L2) into
# contiguous buffers and added by one BLAS dgemm, which uses the CPU's widest
# vector unit (AVX2/FMA) whatever the compiler's baseline: faster than the
# plain loop from GEMM_MIN_MACS on. The samples of a
# ball are scattered over X1, so the gather waits on memory: it asks for the
# rows PREFETCH_ROWS ahead while it copies the current one. Smaller blocks
# (one radius step of a few samples) go through the plain rank-1 loop, where
# dgemm's call overhead would dominate: the inner loop runs over the
# contiguous row of X1 and the contiguous row of the accumulator
# (element-wise, no reduction), which gcc -O3 vectorises, two classes sharing
# each load of X1's row. The accumulator (n_classes * n_cols float64, 4 KB for
# 10 classes and 51 columns) stays in L1. The GIL is released for the whole
# chunk of anchors, so threads can score chunks side by side (see
# ``anchor_group_scores``, which keeps BLAS single-threaded inside).
#
# The same pass runs on float32 copies of X1 and residual (sgemm into a
# float32 block result, added to the float64 accumulator; the rank-1 loop in
# float64 on the float32 inputs): half the bytes per gathered row. Where the
# CPU has AVX-512, the blocks go instead to the loop of _anchors_kernel.h,
# which reads the rows in place (no gather) and sums float32 FMAs over 64
# rows at a time into the float64 accumulator: 0.3 to 0.4 times the time of
# the gather and sgemm (asv AnchorGroupScoring, "screened" against
# "screened-sgemm"). That pass
# is a screen: with ``weights[i] = ||residual[i]||_1 * ||X1[i]||_1`` it also
# writes ``bounds[a, b]``, the sum of the weights over the ball, from which
# the caller bounds the float32 score's error (each entry of a block product
# of at most BLOCK_ROWS rows is off by at most gamma_BLOCK_ROWS times the sum
# of its terms' magnitudes, Higham, "Accuracy and Stability of Numerical
# Algorithms", 2002, §3.1) and rescores in float64 the few anchors that the
# bound cannot rule out.
#
# The plain-NumPy twin is mcsparse.features._anchors.anchor_group_scores_numpy.

from libc.math cimport fabs
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm, sgemm

from mcsparse.utils._simd cimport MCS_PREFETCH, mcs_simd_switch, mcs_simd_v4
from mcsparse.utils._typedefs cimport float64_t, intp_t

ctypedef int int32_t

cdef extern from "_anchors_kernel.h":
    enum: MCS_ANCHOR_SUB
    enum: MCS_ANCHOR_CB
    void mcs_anchor_block_f32(const float* X1, intp_t w, const float* residual, intp_t r,
                              const int* rows, intp_t m, double* acc,
                              float* rbuf) noexcept nogil

ctypedef fused real_t:
    float
    double

# A block of m >= 2 samples goes through BLAS when it holds at least
# GEMM_MIN_MACS multiply-adds (m * n_classes * n_cols): 3 samples for 10
# classes and 51 columns (measured: dgemm already beats the loop there), 512
# for 2 classes and 1 column. The gather buffers hold BLOCK_ROWS rows
# (BLOCK_ROWS * (n_cols + n_classes) float64: 122 KB for 51 columns and 10
# classes).
cdef enum:
    GEMM_MIN_MACS = 1024
    BLOCK_ROWS = 256
    PREFETCH_ROWS = 12


cdef inline void _add_outer(
    float64_t* acc,
    const real_t* r,
    const real_t* x,
    intp_t n_classes,
    intp_t n_cols,
) noexcept nogil:
    """``acc[c * n_cols + f] += r[c] * x[f]`` for every class ``c`` and column ``f`` (float64)."""
    cdef intp_t c, f
    cdef float64_t r0, r1
    cdef float64_t* a0
    cdef float64_t* a1
    for c in range(0, n_classes - 1, 2):
        r0 = r[c]
        r1 = r[c + 1]
        a0 = acc + c * n_cols
        a1 = a0 + n_cols
        for f in range(n_cols):
            a0[f] += r0 * x[f]
            a1[f] += r1 * x[f]
    if n_classes % 2:
        r0 = r[n_classes - 1]
        a0 = acc + (n_classes - 1) * n_cols
        for f in range(n_cols):
            a0[f] += r0 * x[f]


cdef inline float64_t _l1_norm(const float64_t* acc, intp_t n) noexcept nogil:
    cdef intp_t j
    cdef float64_t s0 = 0.0, s1 = 0.0
    for j in range(0, n - 1, 2):
        s0 += fabs(acc[j])
        s1 += fabs(acc[j + 1])
    if n % 2:
        s0 += fabs(acc[n - 1])
    return s0 + s1


cdef int _add_block_gemm(
    const real_t[:, ::1] X1,
    const real_t[:, ::1] residual,
    const int32_t[:, ::1] order,
    intp_t a,
    intp_t start,
    intp_t stop,
    float64_t* acc,
    real_t* xbuf,
    real_t* rbuf,
    float* block,
) noexcept nogil:
    """``acc += R_b^T X1_b`` over the samples ``order[a, start:stop]``, by BLAS.

    The rows are gathered BLOCK_ROWS at a time into ``xbuf`` (BLOCK_ROWS x
    n_cols) and ``rbuf`` (BLOCK_ROWS x n_classes). float64 inputs: dgemm
    adds into ``acc``; float32 inputs: sgemm writes each block's product into
    ``block`` (n_classes x n_cols), then added to ``acc``. Returns -1 if an
    index is out of range, else 0.
    """
    cdef intp_t n_samples = X1.shape[0]
    cdef intp_t n_cols = X1.shape[1]
    cdef intp_t n_classes = residual.shape[1]
    cdef intp_t j, j0, m, f
    cdef int32_t i
    # C-order acc (n_classes x n_cols) is BLAS's column-major acc^T (n_cols x
    # n_classes) = xbuf^T (n_cols x m, no transpose) @ rbuf (m x n_classes,
    # stored column-major as rbuf^T, so transposed)
    cdef char transa = b'N', transb = b'T'
    cdef int m_, n_ = <int> n_classes, k_, lda = <int> n_cols, ldb = <int> n_classes
    cdef float64_t one = 1.0
    cdef float one32 = 1.0, zero32 = 0.0
    if n_cols == 0 or n_classes == 0:
        for j in range(start, stop):
            if order[a, j] < 0 or order[a, j] >= n_samples:
                return -1
        return 0
    if real_t is float:
        if mcs_simd_v4():  # the rows read in place, float32 FMAs (_anchors_kernel.h)
            for j in range(start, stop):
                if order[a, j] < 0 or order[a, j] >= n_samples:
                    return -1
            if stop > start:
                mcs_anchor_block_f32(&X1[0, 0], n_cols, &residual[0, 0], n_classes,
                                     &order[a, start], stop - start, acc, rbuf)
            return 0
    m_ = <int> n_cols
    j0 = start
    while j0 < stop:
        m = min(<intp_t> BLOCK_ROWS, stop - j0)
        for j in range(m):
            if j0 + j + PREFETCH_ROWS < stop:  # the rows are scattered: ask early
                i = order[a, j0 + j + PREFETCH_ROWS]
                if 0 <= i < n_samples:
                    for f in range(0, n_cols * <intp_t> sizeof(real_t), 64):
                        MCS_PREFETCH(<const char*> &X1[i, 0] + f)
                    MCS_PREFETCH(&residual[i, 0])
            i = order[a, j0 + j]
            if i < 0 or i >= n_samples:
                return -1
            memcpy(xbuf + j * n_cols, &X1[i, 0], n_cols * sizeof(real_t))
            memcpy(rbuf + j * n_classes, &residual[i, 0], n_classes * sizeof(real_t))
        k_ = <int> m
        if real_t is double:
            dgemm(&transa, &transb, &m_, &n_, &k_, &one, xbuf, &lda, rbuf, &ldb,
                  &one, acc, &lda)
        else:
            sgemm(&transa, &transb, &m_, &n_, &k_, &one32, xbuf, &lda, rbuf, &ldb,
                  &zero32, block, &lda)
            for j in range(n_classes * n_cols):
                acc[j] += block[j]
        j0 += m
    return 0


cdef intp_t _score_anchors(
    const real_t[:, ::1] X1,
    const real_t[:, ::1] residual,
    const int32_t[:, ::1] order,
    const intp_t[:, ::1] cuts,
    float64_t[:, ::1] out,
    const float64_t* weights,
    float64_t[:, ::1] bounds,
    intp_t a_start,
    intp_t a_stop,
    float64_t* acc,
    real_t* xbuf,
    real_t* rbuf,
    float* block,
) noexcept nogil:
    """Score the anchors ``a_start .. a_stop - 1`` into ``out``.

    With ``weights`` (not NULL), also ``bounds[a, b] = sum_{j < cuts[a, b]}
    weights[order[a, j]]``. Returns -1 on success, or the first anchor whose
    ``order`` or ``cuts`` are invalid (an index out of range, cuts decreasing
    or beyond n_max); that anchor's row of ``out`` is then left unfinished.
    """
    cdef intp_t n_samples = X1.shape[0]
    cdef intp_t n_cols = X1.shape[1]
    cdef intp_t n_classes = residual.shape[1]
    cdef intp_t n_max = order.shape[1]
    cdef intp_t n_radii = cuts.shape[1]
    cdef intp_t size = n_classes * n_cols
    cdef intp_t a, b, j, done, stop
    cdef int32_t i
    cdef float64_t score, weight_sum
    for a in range(a_start, a_stop):
        memset(acc, 0, size * sizeof(float64_t))
        done = 0  # samples already in the accumulator
        score = 0.0
        weight_sum = 0.0
        for b in range(n_radii):
            stop = cuts[a, b]
            if stop < done or stop > n_max:
                return a
            if stop > done:
                if stop - done >= 2 and (stop - done) * size >= GEMM_MIN_MACS:
                    if _add_block_gemm(X1, residual, order, a, done, stop, acc,
                                       xbuf, rbuf, block) < 0:
                        return a
                else:
                    for j in range(done, stop):
                        i = order[a, j]
                        if i < 0 or i >= n_samples:
                            return a
                        if size > 0:  # no &X1[i, 0] of an empty row
                            _add_outer(acc, &residual[i, 0], &X1[i, 0], n_classes,
                                       n_cols)
                if weights != NULL:  # the indices were checked above
                    for j in range(done, stop):
                        weight_sum += weights[order[a, j]]
                done = stop
                score = _l1_norm(acc, size)
            # an empty ball (stop == 0) keeps score = 0; a repeated cut reuses it
            out[a, b] = score
            if weights != NULL:
                bounds[a, b] = weight_sum
    return -1


def _anchor_avx512(enable=None):
    """Whether the float32 screen runs its AVX-512 loop; ``enable=False`` stops it (BLAS).

    For the tests and benchmarks (``mcs_simd_switch`` of mcsparse/utils/_simd.h):
    ``enable`` None only asks, True or False switches the loop on (where the
    CPU has AVX-512) or off; returns whether it runs now. Not thread-safe
    while scans run.
    """
    return bool(mcs_simd_switch(-1 if enable is None else bool(enable)))


def anchor_scores_chunk(
    const real_t[:, ::1] X1,
    const real_t[:, ::1] residual,
    const int32_t[:, ::1] order,
    const intp_t[:, ::1] cuts,
    float64_t[:, ::1] out,
    intp_t a_start,
    intp_t a_stop,
    const float64_t[::1] weights=None,
    float64_t[:, ::1] bounds=None,
):
    """Group scores of the anchors ``a_start .. a_stop - 1``, written into ``out``.

    ``out[a, b] = sum_{c, f} |sum_{j < cuts[a, b]} residual[order[a, j], c]
    * X1[order[a, j], f]|``, one cumulative pass per anchor, GIL released.
    Blocks of samples between cuts go through BLAS (at least GEMM_MIN_MACS
    multiply-adds; dgemm, or sgemm on float32 inputs, BLOCK_ROWS rows at a
    time) or a rank-1 loop in float64; call it under ``threadpool_limits(1)``
    from several threads.

    Parameters
    ----------
    X1 : float32 or float64 array of shape (n_samples, n_cols), C order
        Data with the column of ones appended.
    residual : array of shape (n_samples, n_classes), C order, X1's dtype
    order : int32 array of shape (n_anchors, n_max), C order
        Each anchor's nearest samples, nearest first.
    cuts : intp array of shape (n_anchors, n_radii), C order
        Samples inside each ball: non-decreasing along a row, at most n_max.
    out : float64 array of shape (n_anchors, n_radii), C order
    a_start, a_stop : int
        The anchors to score, ``0 <= a_start <= a_stop <= n_anchors``.
    weights : float64 array of shape (n_samples,), default=None
        Per-sample weights summed over each ball into ``bounds``.
    bounds : float64 array of shape (n_anchors, n_radii), C order, default=None
        Written with ``weights``: ``bounds[a, b] = sum_{j < cuts[a, b]}
        weights[order[a, j]]``.

    Raises
    ------
    ValueError
        If the shapes disagree, the anchor range is invalid, only one of
        ``weights`` and ``bounds`` is given, or a used entry of ``order`` is
        out of range or a row of ``cuts`` is invalid (checked here, as the
        loops run without bounds checks). Repeated indices in ``order`` are
        the caller's concern: they count once per occurrence.
    MemoryError
        If the buffers cannot be allocated.
    """
    cdef intp_t n_samples = X1.shape[0]
    cdef intp_t n_cols = X1.shape[1]
    cdef intp_t n_classes = residual.shape[1]
    cdef intp_t n_anchors = order.shape[0]
    cdef intp_t n_radii = cuts.shape[1]
    if residual.shape[0] != n_samples:
        raise ValueError(
            f"residual has {residual.shape[0]} rows, X1 has {n_samples}")
    if cuts.shape[0] != n_anchors:
        raise ValueError(
            f"cuts has {cuts.shape[0]} rows, order has {n_anchors}")
    if out.shape[0] != n_anchors or out.shape[1] != n_radii:
        raise ValueError(
            f"out has shape ({out.shape[0]}, {out.shape[1]}), expected "
            f"({n_anchors}, {n_radii})")
    if (weights is None) != (bounds is None):
        raise ValueError("weights and bounds go together: give both or neither")
    if weights is not None and (weights.shape[0] != n_samples
                                or bounds.shape[0] != n_anchors
                                or bounds.shape[1] != n_radii):
        raise ValueError(
            f"weights must have {n_samples} entries and bounds the shape "
            f"({n_anchors}, {n_radii})")
    if not 0 <= a_start <= a_stop <= n_anchors:
        raise ValueError(
            f"invalid anchor range [{a_start}, {a_stop}) for {n_anchors} anchors")
    if a_start == a_stop or n_radii == 0:
        return
    cdef intp_t size = n_classes * n_cols
    cdef const float64_t* w = NULL
    if weights is not None:
        bounds[a_start:a_stop, :] = 0.0
        if n_samples > 0:
            w = &weights[0]
    cdef float64_t* acc = <float64_t*> malloc(max(size, 1) * sizeof(float64_t))
    cdef real_t* xbuf = <real_t*> malloc(BLOCK_ROWS * max(n_cols, 1) * sizeof(real_t))
    # (or, for the AVX-512 screen, MCS_ANCHOR_SUB residual rows padded to whole
    # blocks of MCS_ANCHOR_CB classes)
    cdef real_t* rbuf = <real_t*> malloc(
        max(BLOCK_ROWS * n_classes, MCS_ANCHOR_SUB * (n_classes + MCS_ANCHOR_CB))
        * sizeof(real_t))
    cdef float* block = <float*> malloc(max(size, 1) * sizeof(float))
    if acc == NULL or xbuf == NULL or rbuf == NULL or block == NULL:
        free(acc)
        free(xbuf)
        free(rbuf)
        free(block)
        raise MemoryError()
    cdef intp_t bad
    with nogil:
        bad = _score_anchors(X1, residual, order, cuts, out, w, bounds, a_start,
                             a_stop, acc, xbuf, rbuf, block)
    free(acc)
    free(xbuf)
    free(rbuf)
    free(block)
    if bad >= 0:
        raise ValueError(
            f"anchor {bad}: order holds an index outside [0, {n_samples}) or cuts "
            f"decrease or exceed n_max={order.shape[1]}")
