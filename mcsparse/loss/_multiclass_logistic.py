"""Multiclass logistic loss with the 0/1 margin (ShareBoost, eq. 3 of [SWS2011])."""

import numpy as np

from ..utils.validation import check_real, check_sample_weight
from ._multiclass_logistic_fast import loss_gradient as _loss_gradient_fast
from ._multiclass_logistic_fast import loss_rows as _loss_rows_fast


def _check_scores_labels(scores, y, sample_weight, n_labels=None):
    """Validate the inputs of the loss; return arrays ready for the Cython module.

    Labels must lie in ``[0, n_labels)``, by default ``[0, n_classes)``.
    """
    scores = np.asarray(scores)
    if scores.dtype not in (np.float32, np.float64):
        raise TypeError(
            f"scores must be a float32 or float64 array, got dtype {scores.dtype}"
        )
    if scores.ndim != 2:
        raise ValueError(
            f"scores must be 2-D (n_samples, n_classes), got shape {scores.shape}"
        )
    n_samples, n_classes = scores.shape
    if n_samples < 1 or n_classes < 1:
        raise ValueError(
            f"scores is empty (shape {scores.shape}): the mean loss needs at "
            "least one sample and one class"
        )
    if not np.isfinite(scores).all():
        raise ValueError("scores contains NaN or infinity")
    scores = np.ascontiguousarray(scores)

    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise ValueError(
            f"y must be 1-D with {n_samples} entries (one per row of scores), "
            f"got shape {y.shape}"
        )
    if y.size and not (np.issubdtype(y.dtype, np.integer) or y.dtype == np.bool_):
        # booleans are the natural 0/1 targets of the binary loss
        raise TypeError(f"y must hold integer class indices (or booleans), got dtype {y.dtype}")
    n_labels = n_classes if n_labels is None else n_labels
    if y.size and (y.min() < 0 or y.max() >= n_labels):
        raise ValueError(
            f"y must hold class indices in [0, {n_labels}), "
            f"got values in [{y.min()}, {y.max()}]"
        )
    y = np.ascontiguousarray(y, dtype=np.intp)

    sample_weight = check_sample_weight(sample_weight, n_samples)
    if sample_weight is not None:
        # scaled to max 1 first, so the cast to float32 cannot overflow
        sample_weight = np.ascontiguousarray(sample_weight, dtype=scores.dtype)
    return scores, y, sample_weight


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


class _LogisticLoss:
    """What the solvers need of a loss on raw scores; see the two subclasses."""

    binary = False
    margin = 0.0

    def n_scores(self, n_classes):
        """Number of score columns (rows of ``W``) for ``n_classes`` classes.

        Parameters
        ----------
        n_classes : int
            Number of classes.

        Returns
        -------
        n_scores : int
            ``n_classes``: one score per class.
        """
        return n_classes

    def loss_gradient(self, scores, y, sample_weight=None):
        """Mean loss and its gradient with respect to the scores, validated.

        Parameters
        ----------
        scores : array-like of shape (n_samples, n_scores)
            Scores ``W x_i + b``, float32 or float64.
        y : array-like of shape (n_samples,)
            Integer labels: class indices, or 0/1 for the binary loss.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; the mean is ``sum_i w_i l_i / sum_i w_i``.

        Returns
        -------
        loss : float
            The weighted mean loss (accumulated in float64).
        gradient : ndarray of shape (n_samples, n_scores)
            Its gradient with respect to ``scores``, in their dtype.

        Raises
        ------
        TypeError
            If ``scores`` is not floating point or ``y`` is not integer.
        ValueError
            If shapes disagree, ``scores`` is empty or not finite, a label is
            out of range, the weights are invalid, or the loss overflows.
        """
        scores, y, sample_weight = _check_scores_labels(
            scores, y, sample_weight, n_labels=2 if self.binary else None)
        if self.binary and scores.shape[1] != 1:
            raise ValueError(
                f"the binary logistic loss takes one score per row, got shape {scores.shape}")
        total = (scores.shape[0] if sample_weight is None
                 else float(np.sum(sample_weight, dtype=np.float64)))
        grad = np.empty_like(scores)
        loss_sum = _loss_gradient_fast(scores, y, sample_weight, grad, self.margin,
                                       self.binary)
        if not (np.isfinite(loss_sum) and np.isfinite(grad).all()):
            raise ValueError(
                "the loss overflows: differences between scores exceed the "
                f"{scores.dtype} range; rescale the scores"
            )
        grad /= scores.dtype.type(total)
        return loss_sum / total, grad

    def sum_gradient(self, scores, y, sample_weight, out):
        """Weighted loss sum, and the weighted residual rows into ``out``; not validated.

        The fast path of the solvers (one pass of the Cython module).

        Parameters
        ----------
        scores : ndarray of shape (n_samples, n_scores)
            Float64, C order.
        y : ndarray of shape (n_samples,)
            Labels, intp.
        sample_weight : ndarray of shape (n_samples,) or None
            Float64 weights, or None for ones.
        out : ndarray of shape (n_samples, n_scores)
            Float64, C order; overwritten with ``w_i (p_i - e_{y_i})``.

        Returns
        -------
        loss_sum : float
            ``sum_i w_i l_i`` (not normalised).
        """
        return _loss_gradient_fast(scores, y, sample_weight, out, self.margin, self.binary)

    def rows(self, scores, y, out):
        """Unweighted loss of each row, and ``p_i - e_{y_i}`` into ``out``; not validated.

        Parameters
        ----------
        scores : ndarray of shape (n_rows, n_scores)
            Float64, C order.
        y : ndarray of shape (n_rows,)
            Labels, intp.
        out : ndarray of shape (n_rows, n_scores)
            Float64, C order; overwritten with the gradient rows ``p_i - e_{y_i}``.

        Returns
        -------
        loss : ndarray of shape (n_rows,)
            The loss of each row.
        """
        loss = np.empty(scores.shape[0])
        _loss_rows_fast(scores, y, out, loss, self.margin, self.binary)
        return loss

    def proba(self, residual, y, sample_weight):
        """The probabilities ``p_i`` from the weighted residual rows ``w_i (p_i - e_{y_i})``.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_scores)
            The gradient rows of :meth:`sum_gradient`.
        y : ndarray of shape (n_samples,)
            Labels, intp.
        sample_weight : ndarray of shape (n_samples,) or None
            The weights of ``residual``.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_scores)
            ``p_i``; rows of weight zero get ``e_{y_i}`` (they carry no
            curvature).
        """
        P = residual.copy()
        if sample_weight is not None:
            np.divide(P, sample_weight[:, None], out=P, where=sample_weight[:, None] > 0)
            P[sample_weight == 0] = 0.0
        self._add_labels(P, y)
        return P

    def _add_labels(self, P, y):
        P[np.arange(P.shape[0]), y] += 1.0

    @staticmethod
    def hessian_product(P, sample_weight, U):
        """The loss Hessian of every row times a direction in the scores.

        ``H_i = diag(p_i) - p_i p_i^T``, the Hessian of the soft-max loss
        with respect to the scores (any margin), and for one score per row
        ``p_i (1 - p_i)``, the binary logistic loss's.

        Parameters
        ----------
        P : ndarray of shape (n_samples, n_scores)
            The probabilities ``p_i`` (:meth:`proba`).
        sample_weight : ndarray of shape (n_samples,) or None
            Weights ``w_i``.
        U : ndarray of shape (n_samples, n_scores)
            A direction ``u_i`` per row.

        Returns
        -------
        product : ndarray of shape (n_samples, n_scores)
            ``w_i H_i u_i``.
        """
        out = P * (U - np.einsum("ik,ik->i", P, U)[:, None])
        if sample_weight is not None:
            out *= sample_weight[:, None]
        return out


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
