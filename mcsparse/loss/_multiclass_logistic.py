"""Multiclass logistic loss with the 0/1 margin (ShareBoost, eq. 3 of [SWS2011])."""

import numpy as np

from ..utils.validation import check_real
from ._base import Loss
from ._multiclass_logistic_fast import LogisticKernel
from ._multiclass_logistic_fast import loss_gradient as _loss_gradient_fast


def multiclass_logistic_loss(scores, y, sample_weight=None):
    r"""Mean multiclass logistic loss with margin and its gradient w.r.t. the scores.

    For a score row :math:`s = W x` and label :math:`y`, the loss of
    [SWS2011]_, eq. (3), is

    .. math::

        \ell(s, y) = \log \sum_{y'} \exp\bigl(1[y' \neq y] - s_y + s_{y'}\bigr),

    a smooth convex upper bound of the 0-1 loss. This function returns the
    (weighted) mean over rows and its gradient, computed in one pass over the
    rows by a Cython module.

    Parameters
    ----------
    scores : array-like of shape (n_samples, n_classes)
        Scores :math:`W x_i` (float32 or float64; other dtypes raise TypeError).
    y : array-like of shape (n_samples,)
        Integer class index of each row, in ``[0, n_classes)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights. The mean is ``sum_i w_i l_i / sum_i w_i``
        (weights are divided by their maximum first, which leaves it
        unchanged and keeps the sums finite).

    Returns
    -------
    loss : float
        The weighted mean loss (accumulated in float64).
    gradient : ndarray of shape (n_samples, n_classes)
        Gradient of ``loss`` with respect to ``scores``, of the dtype of
        ``scores``: row ``i`` is ``w_i (p_i - e_{y_i}) / sum_j w_j`` with
        ``p_i`` the softmax of the margin-shifted scores.

    Raises
    ------
    TypeError
        If ``scores`` is not floating point or ``y`` is not integer.
    ValueError
        If shapes disagree, ``scores`` is empty or not finite, a label is out
        of range, the weights are negative, not finite or all zero, or the
        score differences overflow.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, eq. (3).

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import multiclass_logistic_loss
    >>> loss, grad = multiclass_logistic_loss(np.zeros((2, 3)), [0, 2])
    >>> round(loss, 6)  # log(1 + 2 e) at zero scores
    1.861995
    >>> grad.shape
    (2, 3)
    """
    return MulticlassLogisticLoss().loss_gradient(scores, y, sample_weight)


def loss_gradient_numpy(scores, y, sample_weight=None, margin=1.0, binary=False):
    """Plain-NumPy twin of the Cython module ``loss_gradient`` (for tests and benchmarks).

    Same contract: returns ``(sum_i w_i l_i, w_i (p_i - e_{y_i}))`` without
    normalisation, the loss accumulated in float64 and the gradient in the
    dtype of ``scores``; ``binary`` is the binary logistic loss of one score
    per row.
    """
    scores = np.asarray(scores)
    n = scores.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    per_row, grad = loss_rows_numpy(scores, y, margin=margin, binary=binary)
    return float(np.sum(w * per_row)), (w[:, None] * grad).astype(scores.dtype)


def loss_rows_numpy(scores, y, margin=1.0, binary=False):
    """Plain-NumPy twin of the Cython module ``loss_rows``.

    Returns the unweighted loss of each row (float64) and ``p_i - e_{y_i}``
    (float64).
    """
    scores = np.asarray(scores)
    n, k = scores.shape
    rows = np.arange(n)
    if binary:
        s = scores[:, 0].astype(np.float64)
        e = np.exp(-np.abs(s))
        per_row = np.log1p(e) + np.where(s >= 0, (1.0 - y) * s, -y * s)
        p = np.where(s >= 0, 1.0 / (1.0 + e), e / (1.0 + e))
        return per_row, (p - y)[:, None]
    z = scores.astype(np.float64) - scores[rows, y][:, None].astype(np.float64) + margin
    z[rows, y] = 0.0
    a = np.argmax(z, axis=1)
    m = z[rows, a]
    e = np.exp(z - m[:, None])
    e[rows, a] = 0.0
    rest = e.sum(axis=1)
    e[rows, a] = 1.0
    p = e / (1.0 + rest)[:, None]
    p[rows, y] -= 1.0
    return m + np.log1p(rest), p


class _LogisticLoss(Loss):
    """The soft-max losses of this module: margin multiclass, and binary."""

    binary = False
    margin = 0.0

    @property
    def kernel(self):
        """The row kernel: :class:`LogisticKernel` of ``margin`` and ``binary``."""
        return LogisticKernel(self.margin, self.binary)

    def _loss_sum(self, scores, y, sample_weight, grad):
        # float32 scores are read as they are by the kernel's fused-type entry point
        return _loss_gradient_fast(scores, y, sample_weight, grad, self.margin, self.binary)


class MulticlassLogisticLoss(_LogisticLoss):
    r"""The margin multiclass logistic loss of ShareBoost, eq. (3) of [SWS2011]_.

    For a score row :math:`s` and label :math:`y`,

    .. math::

        \ell(s, y) = \log \sum_{y'} \exp\bigl(m\, 1[y' \neq y] - s_y + s_{y'}\bigr),

    with the margin :math:`m = 1` in the paper; :math:`m = 0` is the plain
    soft-max (cross-entropy) loss. Computed by a Cython module, one pass
    over the rows; its gradient is :math:`p - e_y` with :math:`p` the
    soft-max of the margin-shifted scores, its Hessian :math:`\mathrm{diag}(p)
    - p p^\top`.

    Parameters
    ----------
    margin : float, default=1.0
        The margin :math:`m`, finite and non-negative.

    Raises
    ------
    ValueError
        If ``margin`` is negative or not finite.
    TypeError
        If ``margin`` is not a real number.

    See Also
    --------
    multiclass_logistic_loss : The same loss (margin 1) as a function.
    BinaryLogisticLoss : The loss of the one-vs-rest baseline.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, eq. (3).

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import MulticlassLogisticLoss
    >>> loss, grad = MulticlassLogisticLoss().loss_gradient(np.zeros((2, 3)), [0, 2])
    >>> round(loss, 6)
    1.861995
    """

    shift_invariant = True

    def __init__(self, margin=1.0):
        self.margin = check_real(margin, "margin", low=0.0)


class BinaryLogisticLoss(_LogisticLoss):
    r"""The binary logistic loss on one score per row, labels 0 and 1.

    :math:`\ell(s, y) = \log(1 + e^{s}) - y s`, the two-class soft-max loss
    without margin on the scores :math:`(0, s)`: the loss of each binary
    problem of the one-vs-rest baseline ([SWS2011]_, §7.1). Its gradient
    is :math:`\sigma(s) - y`, its Hessian :math:`\sigma(s)(1 - \sigma(s))`.

    See Also
    --------
    MulticlassLogisticLoss : ShareBoost's multiclass loss.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.1.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import BinaryLogisticLoss
    >>> loss, grad = BinaryLogisticLoss().loss_gradient(np.zeros((2, 1)), [0, 1])
    >>> round(loss, 6)  # log 2
    0.693147
    """

    binary = True

    def n_labels(self, n_classes):
        """Number of labels: 0 and 1 (``n_classes`` is 2).

        Parameters
        ----------
        n_classes : int
            Number of classes, 2.

        Returns
        -------
        n_labels : int
            2.
        """
        return 2

    def _labels_of_scores(self, k):
        if k != 1:
            raise ValueError(
                f"the binary logistic loss takes one score per row, got shape (n, {k})")
        return 2

    def n_scores(self, n_classes):
        """One score column: the binary loss needs ``n_classes == 2``.

        Parameters
        ----------
        n_classes : int
            Number of classes, 2.

        Returns
        -------
        n_scores : int
            1.

        Raises
        ------
        ValueError
            If ``n_classes`` is not 2.
        """
        if n_classes != 2:
            raise ValueError(
                f"the binary logistic loss needs 2 classes, got n_classes={n_classes}")
        return 1

    def _add_labels(self, P, y):
        P[:, 0] += y
