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
