# A row kernel that calls a Python function on NumPy views of the rows: the
# way to write a loss in one Python file (see doc/user_guide/extending_loss.rst).
# Its rows() takes the GIL, so the fused pass runs it serially; an exception of
# the function is stored on the kernel (rows is noexcept) and re-raised by
# raise_error, which the Python entry points call. The public class,
# NumpyRowKernel, is its Python subclass in _numpy.py (documented there).

import numpy as np

from mcsparse.loss._multiclass_logistic_fast cimport RowKernel
from mcsparse.utils._typedefs cimport float64_t, intp_t


cdef class _NumpyRowKernel(RowKernel):
    """The compiled part of :class:`mcsparse.loss.NumpyRowKernel` (its ``rows``)."""

    cdef readonly object function
    cdef public object error

    def __init__(self, function):
        if not callable(function):
            raise TypeError(f"function must be callable, got {type(function).__name__}")
        self.function = function
        self.error = None

    def raise_error(self):
        """Re-raise (and clear) the exception the function raised in a pass, if any.

        Raises
        ------
        RuntimeError
            From the stored exception, naming the function.
        """
        error, self.error = self.error, None
        if error is not None:
            raise RuntimeError(
                f"the loss function {getattr(self.function, '__name__', self.function)!r} "
                f"raised {type(error).__name__}: {error}") from error

    cdef float64_t rows(self, const float64_t[:, ::1] scores, const intp_t[::1] y,
                        const float64_t[::1] sample_weight, bint weighted,
                        float64_t[:, ::1] grad, float64_t[::1] per_row,
                        intp_t start, intp_t stop) noexcept nogil:
        with gil:
            try:
                return self._rows(scores, y, sample_weight, weighted, grad, per_row,
                                  start, stop)
            except BaseException as error:
                if self.error is None:
                    self.error = error
                return float("nan")

    cdef float64_t _rows(self, const float64_t[:, ::1] scores, const intp_t[::1] y,
                         const float64_t[::1] sample_weight, bint weighted,
                         float64_t[:, ::1] grad, float64_t[::1] per_row,
                         intp_t start, intp_t stop) except? -1.0:
        if stop <= start:
            return 0.0
        k = scores.shape[1]
        loss, g = self.function(np.asarray(scores[start:stop]), np.asarray(y[start:stop]))
        loss = np.asarray(loss, dtype=np.float64).reshape(stop - start)
        g = np.asarray(g, dtype=np.float64)
        if g.shape != (stop - start, k):
            raise ValueError(f"the gradient rows have shape {g.shape}, expected "
                             f"{(stop - start, k)}")
        out = np.asarray(grad[start:stop])
        if weighted:
            w = np.asarray(sample_weight[start:stop])
            loss = loss * w
            np.multiply(g, w[:, None], out=out)
        else:
            out[...] = g
        if per_row is not None:
            np.asarray(per_row[start:stop])[...] = loss
        return float(np.sum(loss))

    def loss_gradient(self, scores, y, sample_weight, grad, per_row=None):
        """RowKernel.loss_gradient, then the function's exception re-raised if any."""
        total = RowKernel.loss_gradient(self, scores, y, sample_weight, grad, per_row)
        self.raise_error()
        return total
