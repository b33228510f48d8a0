# The row kernels of the losses, for the fused objective pass of
# mcsparse.solvers._columns_fast: a loss of mcsparse.loss exposes one as its
# ``kernel`` attribute (a RowKernel subclass, e.g. LogisticKernel here).
from mcsparse.utils._typedefs cimport float64_t, intp_t


cdef class RowKernel:
    # Labels accepted for k score columns: [0, n_labels(k)); raises on a bad k.
    cdef intp_t n_labels(self, intp_t k) except -1
    # Weighted loss sum of rows start .. stop; gradient rows w_i dl/ds_i into
    # grad, each row's weighted loss into per_row when it is not None.
    cdef float64_t rows(self, const float64_t[:, ::1] scores, const intp_t[::1] y,
                        const float64_t[::1] sample_weight, bint weighted,
                        float64_t[:, ::1] grad, float64_t[::1] per_row,
                        intp_t start, intp_t stop) noexcept nogil
    # The row Hessian at the curvature state c (k entries, the probabilities p of
    # the soft-max losses) times w, in the form w H = diag(a) - a b^T: writes
    # a and b (k entries each). The products w H u and the packed rows of the
    # exact bordering are computed from these two vectors.
    cdef void hessian_factors(self, const float64_t* c, float64_t w, float64_t* a,
                              float64_t* b, intp_t k) noexcept nogil
    cdef int check(self, const intp_t[::1] y, intp_t k) except -1


cdef class LogisticKernel(RowKernel):
    cdef readonly float64_t margin
    cdef readonly bint binary
