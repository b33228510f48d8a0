"""The one objective of mcsparse's linear solvers: loss x penalty x columns x intercept.

``F(W, b) = sum_i w_i l(W x_i + b, y_i) / sum_i w_i + P(W)``, with ``l`` a
loss of :mod:`mcsparse.loss` on the scores, ``P`` a smooth penalty of
:mod:`mcsparse.loss` (or none) and ``x_i`` the rows of a column store of
:mod:`mcsparse.solvers._columns`. ShareBoost's refit, its selection rules,
the mixed-norm path (its smooth part), the debiasing refit and the
validation monitor all evaluate it here, in the spirit of scikit-learn's
``LinearModelLoss``. The sums over samples are the store's sums over row
blocks.

Parameters are packed as ``[b, Wt.ravel()]`` (``b`` only with an intercept),
``Wt = W.T`` of shape (p, n_scores): a new column's coefficients go at the
end, which lets a solver carry its curvature from round to round.

The objective is stateless, as ``LinearModelLoss``: :meth:`LinearObjective.evaluate`
returns a :class:`Point` (the scores, the residual rows, the value and the
gradient there), which the curvature methods take back explicitly; the
callers (the refit, the selection rules, the ShareBoost path) hold the
points they need. ``value_grad`` alone, without a point, is a convenience
for interactive use that keeps the last point it computed (``scores``,
``residual``); no solver relies on it.
"""

from dataclasses import dataclass

import numpy as np

from ..loss import MulticlassLogisticLoss
from ..loss._base import Loss
from ..loss._penalties import _SmoothPenalty
from ..utils.validation import check_bool, check_int, check_sample_weight
from ._columns import ColumnStore, SelectedColumns


@dataclass
class Point:
    """The objective evaluated at one point: what :meth:`LinearObjective.evaluate` returns.

    Parameters
    ----------
    Wt : ndarray of shape (p, n_scores)
        The coefficients ``W.T`` on the first ``p`` columns.
    scores : ndarray of shape (n_samples, n_scores)
        ``W x_i + b``.
    residual : ndarray of shape (n_samples, n_scores)
        ``w_i dl/ds_i``: the unnormalised gradient with respect to the scores.
    value : float
        The objective.
    grad : ndarray of shape (n_params(p),)
        Its gradient.
    """

    Wt: np.ndarray
    scores: np.ndarray
    residual: np.ndarray
    value: float
    grad: np.ndarray


def _check_labels(y, n_samples, n_labels):
    y = np.asarray(y)
    if y.dtype == bool or y.dtype.kind not in "iu":
        raise TypeError(f"y must hold integer labels, got dtype {y.dtype}")
    if y.shape != (n_samples,):
        raise ValueError(f"y must have shape ({n_samples},) like the columns' rows, "
                         f"got {y.shape}")
    if y.size and (y.min() < 0 or y.max() >= n_labels):
        raise ValueError(f"y must hold labels in [0, {n_labels}), got values from "
                         f"{y.min()} to {y.max()}")
    return np.ascontiguousarray(y, dtype=np.intp)


class LinearObjective:
    """Smooth objective of a linear model on a column store, its gradient and curvature.

    Parameters
    ----------
    columns : SelectedColumns, SparseColumns or ndarray of shape (n_samples, n_columns)
        The columns ``x_i`` (an array is stored as it is, not centred).
    y : array-like of shape (n_samples,)
        Integer labels of the loss (class indices; 0/1 for the binary loss).
    sample_weight : ndarray of shape (n_samples,), default=None
        Non-negative weights with a positive sum (scaled to a maximum of one,
        which leaves the weighted mean unchanged).
    n_classes : int
        Number of classes.
    loss : Loss, default=None
        A loss of :mod:`mcsparse.loss`; None is
        :class:`~mcsparse.loss.MulticlassLogisticLoss` with margin 1, eq. (3)
        of [SWS2011]_.
    penalty : Frobenius or SmoothedLinfOne, default=None
        Smooth penalty on ``W``; None (or ``alpha=0``) is no penalty.
    fit_intercept : bool, default=True
        Whether ``b`` is a parameter (else ``b = 0``).

    Attributes
    ----------
    n_scores : int
        Rows of ``W``: ``n_classes``, or 1 for the binary loss.
    total : float
        The sum of the weights.
    scores, residual : ndarray of shape (n_samples, n_scores)
        At the last point :meth:`value_grad` evaluated (the interactive
        convenience; solvers hold their :class:`Point`).

    Raises
    ------
    ValueError
        If ``y`` has the wrong shape or labels out of range,
        ``n_classes`` is not valid for the loss, or ``sample_weight`` is
        invalid; if the columns (an array) hold NaN or infinity.
    TypeError
        If ``y`` does not hold integers, or the columns real numbers.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, eq. (3).
    """

    def __init__(self, columns, y, sample_weight=None, *, n_classes, loss=None,
                 penalty=None, fit_intercept=True):
        if not isinstance(columns, ColumnStore):
            columns = SelectedColumns.from_dense(columns)
        self.columns = columns
        self.loss = MulticlassLogisticLoss() if loss is None else loss
        if not isinstance(self.loss, Loss):
            raise TypeError("loss must be a loss of mcsparse.loss (MulticlassLogisticLoss, "
                            f"BinaryLogisticLoss, SoftmaxLoss, ...), got {loss!r}")
        if penalty is not None and not isinstance(penalty, _SmoothPenalty):
            raise TypeError("penalty must be a smooth penalty (Frobenius or SmoothedLinfOne) "
                            f"or None, got {penalty!r}")
        self.penalty = penalty if penalty is not None and penalty.alpha > 0 else None
        self.fit_intercept = check_bool(fit_intercept, "fit_intercept")
        n_classes = check_int(n_classes, "n_classes", low=2)
        self.n_scores = self.loss.n_scores(n_classes)
        n = columns.n_samples
        if n == 0:
            raise ValueError("the columns have no rows (n_samples=0)")
        self.y = _check_labels(y, n, self.loss.n_labels(n_classes))
        self.sample_weight = check_sample_weight(sample_weight, n)
        self.total = float(n if self.sample_weight is None else np.sum(self.sample_weight))
        self._last = None  # the point of the last value_grad (the convenience)

    # -- parameters ------------------------------------------------------------

    @property
    def n_intercept(self):
        """Entries of ``b`` in the parameters: ``n_scores``, or 0 without intercept."""
        return self.n_scores if self.fit_intercept else 0

    def n_params(self, p):
        """Number of parameters on ``p`` columns."""
        return self.n_intercept + self.n_scores * p

    def unpack(self, params, p):
        """``(W, b)`` of shape (n_scores, p) and (n_scores,) from packed parameters.

        ``W`` is a view of ``params``; ``b`` is zeros without intercept.
        """
        nb = self.n_intercept
        params = self._check_params(params, p)
        W = params[nb:].reshape(p, self.n_scores).T
        b = params[:nb] if self.fit_intercept else np.zeros(self.n_scores)
        return W, b

    def pack(self, W, b=None):
        """Packed parameters of ``W`` (n_scores, p) and ``b`` (zeros when None;
        ignored without intercept)."""
        k = self.n_scores
        W = np.asarray(W, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != k:
            raise ValueError(f"W must have shape ({k}, p), got {W.shape}")
        b = np.zeros(k) if b is None else np.asarray(b, dtype=np.float64)
        if b.shape != (k,):
            raise ValueError(f"b must have shape ({k},), got {b.shape}")
        parts = [b] if self.fit_intercept else []
        return np.concatenate(parts + [W.T.ravel()])

    def _check_params(self, params, p):
        """``params`` as float64, after checking it against ``p`` columns."""
        p = check_int(p, "p", low=0)
        if p > self.columns.n_columns:
            raise ValueError(f"p={p} is outside [0, {self.columns.n_columns}] (the columns)")
        params = np.asarray(params)
        if params.dtype.kind not in "fiu" or params.dtype == bool:
            raise TypeError(f"params must hold real numbers, got dtype {params.dtype}")
        if params.shape != (self.n_params(p),):
            raise ValueError(
                f"params must have shape ({self.n_params(p)},) for p={p} columns, "
                f"got {params.shape}")
        return params.astype(np.float64, copy=False)

    def _check_point(self, point, p):
        """``point``, or the last of :meth:`value_grad` when None; it must have ``p`` columns."""
        point = self._last if point is None else point
        if point is None:
            raise ValueError("the objective has not been evaluated yet: pass the point of "
                             "evaluate (or call value_grad first)")
        if point.Wt.shape[0] != p:
            raise ValueError(f"the point has {point.Wt.shape[0]} columns, not p={p}: "
                             "evaluate on p columns first")
        return point

    @property
    def scores(self):
        """``W x_i + b`` at the last point of :meth:`value_grad` (zeros before)."""
        if self._last is None:
            return np.zeros((self.columns.n_samples, self.n_scores))
        return self._last.scores

    @property
    def residual(self):
        """``w_i dl/ds_i`` at the last point of :meth:`value_grad` (zeros before)."""
        if self._last is None:
            return np.zeros((self.columns.n_samples, self.n_scores))
        return self._last.residual

    def _check_coef(self, W, b):
        """``W`` (n_scores, p) as a C-ordered ``Wt`` and ``b`` (n_scores,), float64."""
        k = self.n_scores
        W = np.asarray(W, dtype=np.float64)
        if W.ndim != 2 or W.shape[0] != k or W.shape[1] > self.columns.n_columns:
            raise ValueError(f"W must have shape ({k}, p) with p <= {self.columns.n_columns} "
                             f"(the columns), got {W.shape}")
        b = np.asarray(b, dtype=np.float64)
        if b.shape not in ((), (k,)):
            raise ValueError(f"b must have shape ({k},), got {b.shape}")
        return np.ascontiguousarray(W.T), b

    def flat_free(self, direction):
        """``direction`` without its components along which the objective is flat.

        A loss that declares ``shift_invariant`` (the soft-max losses) does
        not change when the same number is added to every class's score:
        along the sum of the intercept's entries, and along the sum of a
        column's class coefficients when ``W`` has no penalty, the objective
        is constant. A step there changes nothing but the fitted
        coefficients (the intercept would drift by rounding noise amplified
        by the flat curvature), so the solver removes it. Other losses, and
        one score per row, have no such direction.

        Parameters
        ----------
        direction : ndarray of shape (n_params(p),)
            Packed like the parameters.

        Returns
        -------
        direction : ndarray of shape (n_params(p),)
            The same array, changed in place.
        """
        k = self.n_scores
        if not self.loss.shift_invariant or k < 2:
            return direction
        nb = self.n_intercept
        if nb:
            direction[:nb] -= direction[:nb].mean()
        if self.penalty is None and direction.size > nb:
            W = direction[nb:].reshape(-1, k)
            W -= W.mean(axis=1, keepdims=True)
        return direction

    def score_change_bound(self, direction, p):
        """An upper bound of the largest change of any score along ``direction``.

        ``max_c (|d_b,c| + sum_j |d_jc| scale_j)``, with ``scale_j`` the
        largest absolute value of column ``j``: no product with the columns.
        """
        nb, k = self.n_intercept, self.n_scores
        bound = np.abs(direction[nb:]).reshape(p, k).T @ self.columns.scale[:p]
        if nb:
            bound += np.abs(direction[:nb])
        return float(bound.max(initial=0.0))

    def score_change(self, direction, p):
        """The largest change of any score along ``direction`` (one product with the columns)."""
        nb, k = self.n_intercept, self.n_scores
        U = self.columns.matmul(np.ascontiguousarray(direction[nb:].reshape(p, k)),
                                np.empty((self.columns.n_samples, k)))
        if nb:
            U += direction[:nb]
        return float(np.abs(U).max(initial=0.0))

    # -- value and gradient -----------------------------------------------------

    def evaluate(self, params, p, out=None):
        """The objective at ``params`` on the first ``p`` columns, as a :class:`Point`.

        Parameters
        ----------
        params : ndarray of shape (n_params(p),)
            Packed ``[b, Wt.ravel()]``.
        p : int
            Columns used.
        out : Point, default=None
            A point whose ``scores`` and ``residual`` arrays are overwritten
            (reused, not reallocated); None allocates new ones.

        Returns
        -------
        point : Point
            Its ``Wt`` is a view of ``params``.
        """
        params = self._check_params(params, p)
        nb, k = self.n_intercept, self.n_scores
        Wt = params[nb:].reshape(p, k)
        b = params[:nb] if self.fit_intercept else np.zeros(k)
        shape = (self.columns.n_samples, k)
        scores = np.empty(shape) if out is None else out.scores
        residual = np.empty(shape) if out is None else out.residual
        loss_sum, grad_Wt, grad_b = self.columns.value_grad(
            Wt, b, self.loss, self.y, self.sample_weight, scores, residual)
        value = loss_sum / self.total
        grad = np.empty_like(params)
        grad[:nb] = grad_b[:nb] / self.total
        grad[nb:] = grad_Wt.ravel() / self.total
        if self.penalty is not None and p:
            pv, pg, _ = self.penalty.column_terms(Wt, hessian=False)
            value += float(np.sum(pv))
            grad[nb:] += pg.ravel()
        return Point(Wt, scores, residual, value, grad)

    def value_grad(self, params, p):
        """Objective and gradient at ``params`` on the first ``p`` columns.

        The convenience of :meth:`evaluate` for interactive use and SciPy's
        minimisers: the point is kept as the default of the curvature
        methods (:attr:`scores`, :attr:`residual`).

        Parameters
        ----------
        params : ndarray of shape (n_params(p),)
            Packed ``[b, Wt.ravel()]``.
        p : int
            Columns used.

        Returns
        -------
        value : float
        grad : ndarray of shape (n_params(p),)
        """
        self._last = self.evaluate(params, p, out=self._last)
        return self._last.value, self._last.grad

    def grown(self, point, first, p):
        """``point`` with zero coefficients appended for columns ``first .. p``.

        The scores do not change when columns with zero coefficients are
        added: the gradient (on ``first`` columns) gains the new columns'
        entries, ``x_j^T R / total`` plus the penalty's gradient at zero,
        without a new pass over all columns.

        Parameters
        ----------
        point : Point
            On ``first`` columns.
        first, p : int
            The new columns are ``first .. p - 1``.

        Returns
        -------
        point : Point
            On ``p`` columns; it shares ``scores`` and ``residual`` with ``point``.
        """
        k = self.n_scores
        if not 0 <= first < p <= self.columns.n_columns:
            raise ValueError(f"grow needs 0 <= first < p <= {self.columns.n_columns}, "
                             f"got first={first}, p={p}")
        point = self._check_point(point, first)
        if np.shape(point.grad) != (self.n_params(first),):
            raise ValueError(f"grad must have shape ({self.n_params(first)},), "
                             f"got {np.shape(point.grad)}")
        # einsum sums the rows in order; a BLAS matrix-vector product would
        # split them between the BLAS pool's threads (bits that vary with it)
        new = np.stack([np.einsum("i,ik->k", self.columns.column(j), point.residual)
                        for j in range(first, p)])
        new /= self.total
        zero = np.zeros((p - first, k))
        if self.penalty is not None:
            new += self.penalty.column_terms(zero, hessian=False)[1]
        return Point(np.vstack([point.Wt, zero]), point.scores, point.residual, point.value,
                     np.concatenate([point.grad, new.ravel()]))

    def grow(self, grad, first, p):
        """The gradient ``grad`` at the last point of :meth:`value_grad`, grown by
        :meth:`grown`; that point becomes the grown one."""
        point = self._check_point(None, first)
        self._last = self.grown(Point(point.Wt, point.scores, point.residual, point.value,
                                      grad), first, p)
        return self._last.grad

    def loss_value(self, W, b):
        """The mean loss alone (no penalty) at ``W`` (n_scores, p) and ``b``.

        No gradient with respect to ``W`` is computed.
        """
        return self.loss_at(self.scores_at(W, b))[0]

    # -- the pieces, for solvers that combine scores themselves (FISTA) --------

    def scores_at(self, W, b):
        """The scores ``X W^T + b``, a new (n_samples, n_scores) array."""
        Wt, b = self._check_coef(W, b)
        out = np.empty((self.columns.n_samples, self.n_scores))
        self.columns.matmul(Wt, out)
        out += b
        return out

    def loss_at(self, scores):
        """``(mean loss, R)`` at ``scores``, ``R`` the unnormalised rows ``w_i dl/ds_i``."""
        R = np.empty_like(scores)
        value = self.loss.sum_gradient(scores, self.y, self.sample_weight, R)
        return value / self.total, R

    def gradient_at(self, R, p):
        """The loss gradient ``(grad_W (n_scores, p), grad_b)`` from the rows ``R``."""
        grad_W = self.columns.rmatmul(R, p).T / self.total
        return grad_W, R.sum(axis=0) / self.total

    # -- curvature -----------------------------------------------------------------

    def proba(self, point=None):
        """The loss's curvature state (``p_i``) at ``point``: (n_samples, n_scores).

        ``point`` None is the last point of :meth:`value_grad`.
        """
        point = self._last if point is None else point
        if point is None:
            raise ValueError("the objective has not been evaluated yet: pass a point")
        w, P = self.sample_weight, np.empty_like(point.residual)

        def rows(r):  # row-local: the same bits on any number of threads
            self.loss.proba(point.residual[r], self.y[r], None if w is None else w[r],
                            out=P[r])

        self.columns.map_rows(rows)
        return P

    def hessian_product(self, vector, p, proba=None, point=None):
        """The Hessian at ``point`` times ``vector``.

        Parameters
        ----------
        vector : ndarray of shape (n_params(p),)
            Direction, packed like the parameters.
        p : int
            Columns used.
        proba : ndarray of shape (n_samples, n_scores), default=None
            :meth:`proba`, if already computed.
        point : Point, default=None
            Where (:meth:`evaluate`); None is the last point of :meth:`value_grad`.

        Returns
        -------
        product : ndarray of shape (n_params(p),)
        """
        vector = self._check_params(vector, p)
        point = self._check_point(point, p)
        nb, k = self.n_intercept, self.n_scores
        P = self.proba(point) if proba is None else proba
        Vt = vector[nb:].reshape(p, k)
        U = self.columns.matmul(Vt, np.empty((self.columns.n_samples, k)))
        if self.fit_intercept:
            U += vector[:nb]
        HU = self.loss.hessian_product(P, self.sample_weight, U) / self.total
        out = np.empty_like(vector)
        out[:nb] = HU.sum(axis=0)[:nb]
        out[nb:] = self.columns.rmatmul(HU, p).ravel()
        if self.penalty is not None and p:
            _, _, H = self.penalty.column_terms(point.Wt, hessian=True)
            out[nb:] += np.einsum("jab,jb->ja", H, Vt).ravel()
        return out

    def hessian_columns(self, first, p, intercept=False, point=None):
        """Exact Hessian columns of the coefficients of columns ``first .. p``.

        At ``point`` (None: the last of :meth:`value_grad`): the entries ``H[:, nb + first k:]`` of
        the Hessian (``nb`` intercept entries, ``k`` scores), computed from
        the loss's per-row Hessians in one product with the columns, with
        the intercept's columns first when ``intercept`` (the whole Hessian
        for ``first = 0``).

        Parameters
        ----------
        first, p : int
            The new columns are ``first .. p - 1``.
        intercept : bool, default=False
            Include the intercept's coefficients (with an intercept).
        point : Point, default=None
            Where (:meth:`evaluate`).

        Returns
        -------
        columns : ndarray of shape (n_params(p), q)
            ``q = (p - first) * n_scores``, plus ``nb`` with ``intercept``.
        """
        if not 0 <= first <= p <= self.columns.n_columns:
            raise ValueError(f"hessian_columns needs 0 <= first <= p <= "
                             f"{self.columns.n_columns}, got first={first}, p={p}")
        point = self._check_point(point, p)
        nb, k = self.n_intercept, self.n_scores
        n, with_b = self.columns.n_samples, intercept and self.fit_intercept
        V = np.empty((n, p - first + with_b))
        if with_b:
            V[:, 0] = 1.0
        for j in range(first, p):
            V[:, with_b + j - first] = self.columns.column(j)
        width, kk = V.shape[1], k * (k + 1) // 2
        V /= self.total  # the normalisation, on V rather than on the wider M
        P, w = self.proba(point), self.sample_weight

        def fill(r, out):  # M's rows: every row's Hessian block times V's row
            self.loss.hessian_rows(P[r], None if w is None else w[r], V[r], out)

        # (p, width * kk) and M's column sums, M made and used block by block
        prod, sums = self.columns.rmatmul_filled(fill, width * kk, p)
        if self.fit_intercept:
            prod = np.vstack([sums, prod])
        rows, cols = np.triu_indices(k)
        full = np.empty((prod.shape[0], width, k, k))
        packed = prod.reshape(prod.shape[0], width, kk)
        full[:, :, rows, cols] = packed
        full[:, :, cols, rows] = packed
        # full[l, j, c, c'] -> out[l k + c, j k + c'] (the intercept is block l = 0)
        out = full.transpose(0, 2, 1, 3).reshape(prod.shape[0] * k, width * k)
        if self.penalty is not None and p > first:
            _, _, H = self.penalty.column_terms(point.Wt[first:p], hessian=True)
            offset = nb if with_b else 0
            for j in range(p - first):
                r = nb + (first + j) * k
                c = offset + j * k
                out[r:r + k, c:c + k] += H[j]
        return out
