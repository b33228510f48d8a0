"""What a loss of mcsparse is: the interface the solvers call (:class:`Loss`).

A loss is a function ``l(s, y)`` of a row of raw scores ``s`` (``n_scores``
entries) and a label. Its object owns the Cython row kernel that the fused
objective pass runs (``kernel``, a subclass of
:class:`mcsparse.loss._multiclass_logistic_fast.RowKernel`: the loss and
gradient of rows of scores, and the row Hessian), and declares its
invariances (``shift_invariant``). Everything else here derives from the
kernel. A new loss is one module: a subclass of :class:`Loss` and, in its own
``_fast.pyx``, a subclass of ``RowKernel`` (see
:mod:`mcsparse.loss._softmax`).
"""

import numpy as np

from ..utils.validation import check_sample_weight


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


class Loss:
    """Base of the losses on raw scores: what the solvers need of a loss.

    A subclass sets ``kernel`` (a ``RowKernel`` of its Cython module, the loss
    and gradient of rows of scores) and ``shift_invariant``; it overrides
    ``n_scores``/``n_labels`` when its scores are not one per class, and
    ``proba`` when its curvature state is not the soft-max probabilities
    (its kernel's ``hessian_factors`` then too).

    Attributes
    ----------
    kernel : RowKernel
        The Cython row kernel that the fused objective pass runs.
    shift_invariant : bool
        Whether adding the same number to every score of a row leaves the
        loss unchanged (the soft-max losses): the objective is then flat
        along those directions, which the solvers remove from their steps.
    """

    kernel = None
    shift_invariant = False

    def raise_kernel_error(self):
        """Re-raise the exception a Python row kernel's function raised in a pass.

        The kernel's ``raise_error``: a no-op for the Cython kernels; the solvers
        call it after each fused pass.

        Raises
        ------
        RuntimeError
            From the exception of a :class:`NumpyRowKernel`'s function.
        """
        self.kernel.raise_error()

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

    def n_labels(self, n_classes):
        """Number of labels the loss takes for ``n_classes`` classes: ``[0, n_labels)``.

        Parameters
        ----------
        n_classes : int
            Number of classes.

        Returns
        -------
        n_labels : int
            ``n_classes``.
        """
        return n_classes

    def _labels_of_scores(self, k):
        """Labels taken with ``k`` score columns; ValueError if ``k`` does not suit the loss."""
        return k

    def _loss_sum(self, scores, y, sample_weight, grad):
        """Weighted loss sum, gradient rows into ``grad``; any float dtype (validated)."""
        if scores.dtype == np.float64:
            return self.kernel.loss_gradient(scores, y, sample_weight, grad)
        wide = np.empty(scores.shape)
        weights = None if sample_weight is None else sample_weight.astype(np.float64)
        total = self.kernel.loss_gradient(scores.astype(np.float64), y, weights, wide)
        grad[...] = wide
        return total

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
        scores = np.asarray(scores)
        n_labels = self._labels_of_scores(scores.shape[1]) if scores.ndim == 2 else None
        scores, y, sample_weight = _check_scores_labels(scores, y, sample_weight, n_labels)
        total = (scores.shape[0] if sample_weight is None
                 else float(np.sum(sample_weight, dtype=np.float64)))
        grad = np.empty_like(scores)
        loss_sum = self._loss_sum(scores, y, sample_weight, grad)
        if not (np.isfinite(loss_sum) and np.isfinite(grad).all()):
            raise ValueError(
                "the loss overflows: differences between scores exceed the "
                f"{scores.dtype} range; rescale the scores"
            )
        grad /= scores.dtype.type(total)
        return loss_sum / total, grad

    def sum_gradient(self, scores, y, sample_weight, out):
        """Weighted loss sum, and the weighted residual rows into ``out``; not validated.

        The fast path of the solvers (one pass of the row kernel).

        Parameters
        ----------
        scores : ndarray of shape (n_samples, n_scores)
            Float64, C order.
        y : ndarray of shape (n_samples,)
            Labels, intp.
        sample_weight : ndarray of shape (n_samples,) or None
            Float64 weights, or None for ones.
        out : ndarray of shape (n_samples, n_scores)
            Float64, C order; overwritten with ``w_i dl/ds_i``.

        Returns
        -------
        loss_sum : float
            ``sum_i w_i l_i`` (not normalised).
        """
        return self.kernel.loss_gradient(scores, y, sample_weight, out)

    def rows(self, scores, y, out):
        """Unweighted loss of each row, and its gradient rows into ``out``; not validated.

        Parameters
        ----------
        scores : ndarray of shape (n_rows, n_scores)
            Float64, C order.
        y : ndarray of shape (n_rows,)
            Labels, intp.
        out : ndarray of shape (n_rows, n_scores)
            Float64, C order; overwritten with the gradient rows ``dl/ds_i``.

        Returns
        -------
        loss : ndarray of shape (n_rows,)
            The loss of each row.
        """
        loss = np.empty(scores.shape[0])
        self.kernel.loss_gradient(scores, y, None, out, loss)
        return loss

    def proba(self, residual, y, sample_weight, out=None):
        """The curvature state of each row from the weighted residual rows.

        For the soft-max losses, whose gradient rows are ``w_i (p_i -
        e_{y_i})``, the probabilities ``p_i``: what :meth:`hessian_product`
        takes.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_scores)
            The gradient rows of :meth:`sum_gradient`.
        y : ndarray of shape (n_samples,)
            Labels, intp.
        sample_weight : ndarray of shape (n_samples,) or None
            The weights of ``residual``.
        out : ndarray of shape (n_samples, n_scores), default=None
            Where to write the result (float64); None allocates it.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_scores)
            ``p_i``; rows of weight zero get ``e_{y_i}`` (they carry no
            curvature). ``out`` when given.
        """
        if out is None:
            P = residual.copy()
        else:
            P = out
            P[...] = residual
        if sample_weight is not None:
            np.divide(P, sample_weight[:, None], out=P, where=sample_weight[:, None] > 0)
            P[sample_weight == 0] = 0.0
        self._add_labels(P, y)
        return P

    def _add_labels(self, P, y):
        P[np.arange(P.shape[0]), y] += 1.0

    def hessian_product(self, P, sample_weight, U):
        """The loss Hessian of every row times a direction in the scores.

        The kernel's row Hessian (for the soft-max losses ``H_i = diag(p_i)
        - p_i p_i^T``, any margin; for one score per row ``p_i (1 - p_i)``).

        Parameters
        ----------
        P : ndarray of shape (..., n_scores)
            The curvature state of each row (:meth:`proba`).
        sample_weight : ndarray of shape (...,) or None
            Weights ``w_i``.
        U : ndarray of shape (..., n_scores)
            A direction ``u_i`` per row.

        Returns
        -------
        product : ndarray of shape (..., n_scores)
            ``w_i H_i u_i``.
        """
        k = P.shape[-1]
        P2 = np.ascontiguousarray(P, dtype=np.float64).reshape(-1, k)
        U2 = np.ascontiguousarray(np.broadcast_to(U, P.shape), dtype=np.float64).reshape(-1, k)
        w = None if sample_weight is None else np.ascontiguousarray(
            np.broadcast_to(sample_weight, P.shape[:-1]), dtype=np.float64).reshape(-1)
        out = np.empty_like(P2)
        self.kernel.hessian_product(P2, w, U2, out)
        return out.reshape(P.shape)

    def hessian_rows(self, P, sample_weight, V, out):
        """Every row's weighted Hessian, packed, times each vector of ``V``, into ``out``.

        ``out[i, j kk + t] = V[i, j] w_i H_i[c, c']`` for the ``t``-th pair
        ``c <= c'`` of ``numpy.triu_indices(k)``, ``kk = k (k + 1) / 2``: the
        rows of the exact Hessian blocks of new columns.

        Parameters
        ----------
        P : ndarray of shape (n_rows, k)
            The curvature state of each row (:meth:`proba`), float64, C order.
        sample_weight : ndarray of shape (n_rows,) or None
            Float64 weights ``w_i``, or None for ones.
        V : ndarray of shape (n_rows, q)
            The vectors, float64, C order.
        out : ndarray of shape (n_rows, q * kk)
            Float64, C order; overwritten.

        Raises
        ------
        ValueError
            If the shapes disagree.
        """
        self.kernel.hessian_rows(P, sample_weight, V, out)
