# The row kernel of the plain soft-max (cross-entropy) loss, mcsparse.loss._softmax.
#
# For a score row s (k entries) and label y:
#     loss = log sum_j exp(s_j) - s_y = m + log sum_j exp(s_j - m) - s_y,  m = max_j s_j
#     dloss/ds_j = p_j - 1[j == y],   p = softmax(s)
# Its Hessian diag(p) - p p^T is RowKernel's (the state is p).
# The plain-NumPy twin is mcsparse.loss._softmax.softmax_rows_numpy.

from libc.math cimport exp, log

from mcsparse.loss._multiclass_logistic_fast cimport RowKernel
from mcsparse.utils._typedefs cimport float64_t, intp_t


cdef class SoftmaxKernel(RowKernel):
    """The row kernel of :class:`mcsparse.loss.SoftmaxLoss`."""

    cdef float64_t rows(self, const float64_t[:, ::1] scores, const intp_t[::1] y,
                        const float64_t[::1] sample_weight, bint weighted,
                        float64_t[:, ::1] grad, float64_t[::1] per_row,
                        intp_t start, intp_t stop) noexcept nogil:
        cdef intp_t i, j, k = scores.shape[1]
        cdef float64_t m, total = 0.0, s, w, value
        for i in range(start, stop):
            w = sample_weight[i] if weighted else 1.0
            m = scores[i, 0]
            for j in range(1, k):
                m = scores[i, j] if scores[i, j] > m else m
            s = 0.0
            for j in range(k):
                grad[i, j] = exp(scores[i, j] - m)
                s += grad[i, j]
            for j in range(k):
                grad[i, j] *= w / s
            grad[i, y[i]] -= w
            value = w * (m + log(s) - scores[i, y[i]])
            if per_row is not None:
                per_row[i] = value
            total += value
        return total
