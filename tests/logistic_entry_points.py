"""The fused passes of the objective called with the logistic loss's flags, for tests.

The Cython passes take a loss's row kernel (``loss.kernel``); the tests that
compare them with their NumPy twins, which take ``margin`` and ``binary``,
call them through these, with the kernel those flags name. Also the NumPy
twin of the packed soft-max Hessian rows, written from the definition.
"""

import numpy as np

from mcsparse.loss._multiclass_logistic_fast import LogisticKernel
from mcsparse.solvers import _columns_fast


def dense_value_grad(X, shift, p, Wt, intercept, y, sample_weight, margin, binary, *out):
    """``_columns_fast.dense_value_grad`` with ``LogisticKernel(margin, binary)``."""
    return _columns_fast.dense_value_grad(X, shift, p, Wt, intercept, y, sample_weight,
                                            LogisticKernel(margin, binary), *out)


def cuts_value_grad(slots, order, ends, run_start, cols, shift, Wt, intercept, y,
                    sample_weight, margin, binary, *out):
    """``_columns_fast.cuts_value_grad`` with ``LogisticKernel(margin, binary)``."""
    return _columns_fast.cuts_value_grad(slots, order, ends, run_start, cols, shift, Wt,
                                           intercept, y, sample_weight,
                                           LogisticKernel(margin, binary), *out)


def hessian_rows_numpy(P, sample_weight, V):
    """``V[:, j] w_i (diag(p_i) - p_i p_i^T)``, packed by ``numpy.triu_indices(k)``."""
    n, k = P.shape
    rows, cols = np.triu_indices(k)
    D = -P[:, rows] * P[:, cols]
    D[:, rows == cols] += P
    if sample_weight is not None:
        D *= sample_weight[:, None]
    return (V[:, :, None] * D[:, None, :]).reshape(n, V.shape[1] * rows.size)
