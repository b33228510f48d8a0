# The dense curvature of the refit engine: BLAS on the upper triangle of the
# leading m x m block of a Fortran-ordered (capacity, capacity) buffer.
#
# The engine's inverse Hessian approximation grows by a few rows and columns
# every round; keeping it in a buffer with spare capacity lets the BLAS
# calls read and update the leading block in place (lda = capacity) instead
# of copying a new m x m matrix every round. Only the upper triangle is
# read or written. The plain-NumPy twins are in mcsparse.solvers._refit.

from scipy.linalg.cython_blas cimport dsymm, dsymv, dsyr2, dsyrk

from mcsparse.utils._typedefs cimport intp_t


cdef int _check(double[::1, :] H, intp_t m) except -1:
    if H.shape[0] != H.shape[1]:
        raise ValueError(f"H must be square, got shape ({H.shape[0]}, {H.shape[1]})")
    if m < 0 or m > H.shape[0]:
        raise ValueError(f"m={m} is outside [0, {H.shape[0]}] (the capacity of H)")
    return 0


def symv(double[::1, :] H not None, intp_t m, const double[::1] x not None,
         double[::1] out not None):
    """``out = H[:m, :m] @ x``, ``H`` symmetric given by its upper triangle."""
    _check(H, m)
    if x.shape[0] != m or out.shape[0] != m:
        raise ValueError(f"x and out must have {m} entries")
    cdef int n = <int> m, lda = <int> H.shape[0], one_i = 1
    cdef double one = 1.0, zero = 0.0
    if m == 0:
        return
    with nogil:
        dsymv("U", &n, &one, &H[0, 0], &lda, <double*> &x[0], &one_i, &zero, &out[0],
              &one_i)


def syr2(double[::1, :] H not None, intp_t m, const double[::1] a not None,
         const double[::1] s not None):
    """``H[:m, :m] += a s^T + s a^T`` on the upper triangle."""
    _check(H, m)
    if a.shape[0] != m or s.shape[0] != m:
        raise ValueError(f"a and s must have {m} entries")
    cdef int n = <int> m, lda = <int> H.shape[0], one_i = 1
    cdef double one = 1.0
    if m == 0:
        return
    with nogil:
        dsyr2("U", &n, &one, <double*> &a[0], &one_i, <double*> &s[0], &one_i,
              &H[0, 0], &lda)


def syrk(double[::1, :] H not None, intp_t m, const double[::1, :] V not None):
    """``H[:m, :m] += V V^T`` on the upper triangle, ``V`` of shape (m, q)."""
    _check(H, m)
    if V.shape[0] != m:
        raise ValueError(f"V must have {m} rows, got {V.shape[0]}")
    cdef int n = <int> m, q = <int> V.shape[1], lda = <int> H.shape[0], ldv = <int> m
    cdef double one = 1.0
    if m == 0 or q == 0:
        return
    with nogil:
        dsyrk("U", "N", &n, &q, &one, <double*> &V[0, 0], &ldv, &one, &H[0, 0], &lda)


def symm(double[::1, :] H not None, intp_t m, const double[::1, :] B not None,
         double[::1, :] out not None):
    """``out = H[:m, :m] @ B``, ``B`` and ``out`` of shape (m, q)."""
    _check(H, m)
    if B.shape[0] != m or out.shape[0] != m or out.shape[1] != B.shape[1]:
        raise ValueError(f"B and out must have shape ({m}, q)")
    cdef int n = <int> m, q = <int> B.shape[1], lda = <int> H.shape[0], ldb = <int> m
    cdef double one = 1.0, zero = 0.0
    if m == 0 or q == 0:
        return
    with nogil:
        dsymm("L", "U", &n, &q, &one, &H[0, 0], &lda, <double*> &B[0, 0], &ldb, &zero,
              &out[0, 0], &ldb)


# -- the L-BFGS two-loop recursion ---------------------------------------------------
#
# With 200 float32 pairs of ~10^5 coefficients (the Fig. 7 path's last rounds: 260 MB
# of pairs) the recursion is bound by memory: float32 pairs (widened as they are
# read) halve the bytes. Each pass below applies one pair's update
# to q and, in the same sweep, takes the dot product the next step needs: 2m + 2
# sweeps over q of at most three vectors each, where the NumPy twin
# (mcsparse.solvers._refit.two_loop_numpy) makes 6m + 2 (a dot, a scaled copy,
# an update per pair and loop). Dot products in four partial sums (another order than BLAS's: the two
# agree to rounding).

from libc.stdlib cimport free, malloc

import numpy as np


ctypedef fused pair_t:
    float
    double


cdef double _update_dot(double* q, double c, const pair_t* v, const pair_t* u,
                        intp_t n) noexcept nogil:
    """``q += c v``; returns ``u . q`` (the updated q), or 0 when ``u`` is NULL.

    ``v`` and ``u`` may be float32: their entries are widened to float64 first.
    """
    cdef intp_t i
    cdef double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    if u == NULL:
        for i in range(n):
            q[i] += c * <double> v[i]
        return 0.0
    for i in range(0, n - 3, 4):
        q[i] += c * <double> v[i]
        q[i + 1] += c * <double> v[i + 1]
        q[i + 2] += c * <double> v[i + 2]
        q[i + 3] += c * <double> v[i + 3]
        d0 += <double> u[i] * q[i]
        d1 += <double> u[i + 1] * q[i + 1]
        d2 += <double> u[i + 2] * q[i + 2]
        d3 += <double> u[i + 3] * q[i + 3]
    for i in range(n - n % 4, n):
        q[i] += c * <double> v[i]
        d0 += <double> u[i] * q[i]
    return (d0 + d1) + (d2 + d3)


cdef double _dot(const pair_t* u, const double* q, intp_t n) noexcept nogil:
    """``u . q`` in four partial sums."""
    cdef intp_t i
    cdef double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    for i in range(0, n - 3, 4):
        d0 += <double> u[i] * q[i]
        d1 += <double> u[i + 1] * q[i + 1]
        d2 += <double> u[i + 2] * q[i + 2]
        d3 += <double> u[i + 3] * q[i + 3]
    for i in range(n - n % 4, n):
        d0 += <double> u[i] * q[i]
    return (d0 + d1) + (d2 + d3)


cdef double _scale_dot(double* q, double c, const pair_t* u, intp_t n) noexcept nogil:
    """``q *= c``; returns ``u . q``."""
    cdef intp_t i
    cdef double d0 = 0.0, d1 = 0.0, d2 = 0.0, d3 = 0.0
    for i in range(0, n - 3, 4):
        q[i] *= c
        q[i + 1] *= c
        q[i + 2] *= c
        q[i + 3] *= c
        d0 += <double> u[i] * q[i]
        d1 += <double> u[i + 1] * q[i + 1]
        d2 += <double> u[i + 2] * q[i + 2]
        d3 += <double> u[i + 3] * q[i + 3]
    for i in range(n - n % 4, n):
        q[i] *= c
        d0 += <double> u[i] * q[i]
    return (d0 + d1) + (d2 + d3)


cdef void _recursion(const pair_t** S, const pair_t** Y, const double* ys, double* alpha,
                     double* q, intp_t m, intp_t n, double gamma) noexcept nogil:
    """The two loops over ``m >= 1`` pairs (oldest first) on ``q`` of ``n >= 1`` entries."""
    cdef intp_t i
    cdef double dot, beta
    dot = _dot(S[m - 1], q, n)
    for i in range(m - 1, -1, -1):
        alpha[i] = dot / ys[i]
        dot = _update_dot(q, -alpha[i], Y[i], S[i - 1] if i > 0 else NULL, n)
    dot = _scale_dot(q, gamma, Y[0], n)
    for i in range(m):
        beta = dot / ys[i]
        dot = _update_dot(q, alpha[i] - beta, S[i], Y[i + 1] if i + 1 < m else NULL, n)


def _checked_pair(i, pair, q):
    """``(s, y, ys)`` of pair ``i`` as two arrays of one dtype and a float.

    Raises TypeError if it is not such a triple, ValueError if the dtypes are
    not both float64 or both float32, or if a vector may share memory with
    ``q`` (None: not checked).
    """
    if (not isinstance(pair, tuple) or len(pair) != 3 or pair[0] is None
            or pair[1] is None or isinstance(pair[2], (str, bytes))
            or np.ndim(pair[2]) != 0):
        raise TypeError(f"pair {i} must be a tuple (s, y, ys) of two vectors and "
                        "a real number")
    s, y = np.asarray(pair[0]), np.asarray(pair[1])
    if s.dtype != y.dtype:
        raise ValueError(f"pair {i} has an s of dtype {s.dtype} and a y of dtype "
                         f"{y.dtype}: both must be float64 or both float32")
    if s.dtype != np.float32 and s.dtype != np.float64:
        raise ValueError(f"pair {i} has vectors of dtype {s.dtype}: they must be "
                         "float64 or float32 (native byte order)")
    if q is not None and (np.may_share_memory(s, q) or np.may_share_memory(y, q)):
        raise ValueError(f"pair {i} overlaps q in memory: two_loop writes q while "
                         "it reads the pairs")
    return s, y, float(pair[2])


def two_loop(list pairs not None, double[::1] q not None, double gamma):
    """The L-BFGS two-loop recursion in place: ``q <- H q`` for the pairs given.

    ``H`` is the inverse Hessian approximation of the pairs ``(s, y, y @ s)``
    (oldest first) on the initial matrix ``gamma * I``.

    Parameters
    ----------
    pairs : list of tuple
        ``(s, y, ys)``: ``s`` and ``y`` C-contiguous, of ``len(q)`` entries,
        all float64 or all float32 (widened to float64 as they are read),
        ``ys = y @ s`` non-zero.
    q : ndarray of shape (n,), float64
        The vector, overwritten by ``H q``.
    gamma : float
        Scale of the initial matrix.

    Raises
    ------
    ValueError
        If a pair's vectors do not have ``len(q)`` entries, are not
        C-contiguous, are neither float64 nor float32 or not all of one
        dtype, or overlap ``q`` in memory (``q`` is written while they are
        read).
    TypeError
        If a pair is not a ``(s, y, ys)`` triple of vectors and a real number.
    """
    cdef intp_t m = len(pairs), n = q.shape[0], i, n_s, n_y
    cdef object s_arr, y_arr, dtype = None
    cdef const double[::1] s
    cdef const double[::1] y
    cdef const float[::1] s32
    cdef const float[::1] y32
    cdef list keep = []
    cdef const void** S = <const void**> malloc((m + 1) * sizeof(void*))
    cdef const void** Y = <const void**> malloc((m + 1) * sizeof(void*))
    cdef double* ys = <double*> malloc((m + 1) * sizeof(double))
    cdef double* alpha = <double*> malloc((m + 1) * sizeof(double))
    try:
        if S == NULL or Y == NULL or ys == NULL or alpha == NULL:
            raise MemoryError()
        for i in range(m):
            s_arr, y_arr, ys[i] = _checked_pair(i, pairs[i], q.base if n else None)
            if dtype is None:
                dtype = s_arr.dtype
            elif s_arr.dtype != dtype:
                raise ValueError(f"pair {i} has vectors of dtype {s_arr.dtype} and pair 0 of "
                                 f"dtype {dtype}: all pairs must have one dtype")
            if dtype == np.float32:
                s32 = s_arr
                y32 = y_arr
                n_s, n_y = s32.shape[0], y32.shape[0]
            else:
                s = s_arr
                y = y_arr
                n_s, n_y = s.shape[0], y.shape[0]
            if n_s != n or n_y != n:
                raise ValueError(f"pair {i} has vectors of {n_s} and {n_y} "
                                 f"entries, q has {n}")
            keep.append((s_arr, y_arr))  # the buffers stay alive
            if n and dtype == np.float32:
                S[i], Y[i] = <const void*> &s32[0], <const void*> &y32[0]
            elif n:
                S[i], Y[i] = <const void*> &s[0], <const void*> &y[0]
        if n == 0:
            return
        if m == 0:
            for i in range(n):
                q[i] *= gamma
            return
        if dtype == np.float32:
            with nogil:
                _recursion(<const float**> S, <const float**> Y, ys, alpha, &q[0], m, n, gamma)
        else:
            with nogil:
                _recursion(<const double**> S, <const double**> Y, ys, alpha, &q[0], m, n,
                           gamma)
    finally:
        free(S)
        free(Y)
        free(ys)
        free(alpha)
