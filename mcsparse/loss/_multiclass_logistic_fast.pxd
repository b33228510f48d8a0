# The row kernel of the margin and binary logistic losses, for the fused
# objective pass of mcsparse.solvers._objective_fast.
from mcsparse.utils._typedefs cimport float64_t, intp_t


cdef float64_t rows_loss_grad(
    const float64_t[:, ::1] scores,
    const intp_t[::1] y,
    const float64_t[::1] sample_weight,
    bint weighted,
    float64_t margin,
    bint binary,
    float64_t[:, ::1] grad,
    float64_t[::1] grad_sum,
    intp_t start,
    intp_t stop,
) noexcept nogil
