"""The plain soft-max (cross-entropy) loss, without margin: a loss in one module.

Its Cython row kernel is :class:`mcsparse.loss._softmax_fast.SoftmaxKernel`;
the rest (mean loss, gradient, the soft-max row Hessian) comes from
:class:`mcsparse.loss._base.Loss`.
"""

import numpy as np

from ._base import Loss
from ._softmax_fast import SoftmaxKernel


def softmax_rows_numpy(scores, y):
    """Plain-NumPy twin of the kernel: each row's loss and ``p_i - e_{y_i}`` (float64)."""
    s = np.asarray(scores, dtype=np.float64)
    rows = np.arange(s.shape[0])
    m = s.max(axis=1, initial=-np.inf) if s.shape[1] else np.zeros(s.shape[0])
    e = np.exp(s - m[:, None])
    total = e.sum(axis=1)
    p = e / total[:, None]
    p[rows, y] -= 1.0
    return m + np.log(total) - s[rows, y], p


class SoftmaxLoss(Loss):
    r"""The soft-max (cross-entropy) loss of the scores, without margin.

    For a score row :math:`s` and label :math:`y`,
    :math:`\ell(s, y) = \log \sum_{y'} \exp(s_{y'}) - s_y`, the multinomial
    logistic loss of scikit-learn's ``LogisticRegression``; the margin loss
    of ShareBoost with margin 0. Its gradient is :math:`p - e_y`,
    :math:`p` the soft-max of the scores, its Hessian
    :math:`\mathrm{diag}(p) - p p^\top`; adding a number to every score
    leaves it unchanged.

    See Also
    --------
    MulticlassLogisticLoss : ShareBoost's margin loss, eq. (3) of the paper.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import SoftmaxLoss
    >>> loss, grad = SoftmaxLoss().loss_gradient(np.zeros((2, 3)), [0, 2])
    >>> round(loss, 6)  # log 3
    1.098612
    """

    shift_invariant = True
    kernel = SoftmaxKernel()
