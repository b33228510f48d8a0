"""Multiclass logistic loss with the 0/1 margin (ShareBoost, eq. 3 of [SWS2011])."""

import numpy as np

from ..utils.validation import check_sample_weight
from ._multiclass_logistic_fast import loss_gradient as _loss_gradient_fast


def _check_scores_labels(scores, y, sample_weight):
    """Validate the inputs of the loss; return arrays ready for the Cython module."""
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
    if y.size and not np.issubdtype(y.dtype, np.integer):
        raise TypeError(f"y must hold integer class indices, got dtype {y.dtype}")
    if y.size and (y.min() < 0 or y.max() >= n_classes):
        raise ValueError(
            f"y must hold class indices in [0, {n_classes}), "
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
    1.860943
    >>> grad.shape
    (2, 3)
    """
    scores, y, sample_weight = _check_scores_labels(scores, y, sample_weight)
    if sample_weight is None:
        total = scores.shape[0]
    else:
        total = float(np.sum(sample_weight, dtype=np.float64))
    grad = np.empty_like(scores)
    loss_sum = _loss_gradient_fast(scores, y, sample_weight, grad)
    if not (np.isfinite(loss_sum) and np.isfinite(grad).all()):
        raise ValueError(
            "the loss overflows: differences between scores exceed the "
            f"{scores.dtype} range; rescale the scores"
        )
    grad /= scores.dtype.type(total)
    return loss_sum / total, grad


def loss_gradient_numpy(scores, y, sample_weight=None, margin=1.0):
    """Plain-NumPy twin of the Cython module ``loss_gradient`` (for tests and benchmarks).

    Same contract: returns ``(sum_i w_i l_i, w_i (p_i - e_{y_i}))`` without
    normalisation, the loss accumulated in float64 and the gradient in the
    dtype of ``scores``.
    """
    scores = np.asarray(scores)
    n, k = scores.shape
    rows = np.arange(n)
    z = scores.astype(np.float64) - scores[rows, y][:, None].astype(np.float64) + margin
    z[rows, y] = 0.0
    a = np.argmax(z, axis=1)
    m = z[rows, a]
    e = np.exp(z - m[:, None])
    e[rows, a] = 0.0
    rest = e.sum(axis=1)
    e[rows, a] = 1.0
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, np.float64)
    p = e / (1.0 + rest)[:, None]
    p[rows, y] -= 1.0
    grad = (w[:, None] * p).astype(scores.dtype)
    return float(np.sum(w * (m + np.log1p(rest)))), grad
