"""Multi-class multiple kernel learning by stochastic mirror descent.

One solver covers the three methods of [LYL2018]_ and its base [OL2011]_:

* **UFO-MKL** [OL2011]_: the multi-class hinge loss with the squared
  ``l_{2,p}`` mixed norm, by regularised dual averaging (stochastic mirror
  descent) in the kernel expansion.
* **Conv-MKL** ([LYL2018]_, Algorithm 1): UFO-MKL on the base kernels
  divided by their tail sums ``r_m = sum_{j > zeta} lambda_j(K_m)``.
* **SMSD-MKL** ([LYL2018]_, Algorithm 2, Theorem 3): UFO-MKL plus the
  local-Rademacher penalty ``beta sum_m r_m ||w_m||``, which enters the link
  function as ``nu_m = ||theta_m|| - t beta r_m``.

Reading of Algorithm 2 and Theorem 3 (the choices the paper leaves open,
stated here and in the user guide):

* The objective minimised is
  ``lambda/2 ||w||_{2,p}^2 + beta sum_m r_m ||w_m||_2 + (1/n) sum_i hinge_i``,
  ``hinge_i = |1 - (<w_{y_i}, phi(x_i)> - max_{y != y_i} <w_y, phi(x_i)>)|_+``,
  ``p = q / (q - 1)``. Its dual-averaging step after t samples is exactly
  the link of Theorem 3 applied to ``theta / (lambda t)``:
  ``w_m = theta_m / ||theta_m|| * nu_m^(q-1) / (lambda t ||nu||_q^(q-2))``
  with ``nu_m = (||theta_m|| - t beta r_m)_+``. Theorem 3 as printed drops
  UFO-MKL's ``1 / (lambda t)`` and writes ``sgn(nu_m)``; a negative
  ``nu_m`` would point ``w_m`` against its own ``theta_m``, so we use the
  zero floor of UFO-MKL (a soft threshold), which is what the penalty
  ``beta r_m ||w_m||`` gives.
* ``lambda = 1 / (C n)``: the paper's regularisation parameter ``alpha``
  (grid ``2^-2 .. 2^12``) is used like an SVM's ``C``, as in UFO-MKL's and
  the authors' code; taken literally as ``alpha/2 ||w||^2`` it would
  regularise so strongly that nothing is learnt.
* ``q = 2 log K`` (natural log, ``K`` the number of *classes*, Section
  5.2). The authors' code uses the number of kernels instead.
* Samples are visited in a fresh random permutation each epoch; the result
  is the last iterate.

The kernel weights are the link's scalars ``coef_m``: the decision function
is ``f_k(x) = sum_m coef_m sum_j dual[j, k] K_m(x_j, x)``.

References
----------
.. [LYL2018] J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding, W. Wang,
   "Multi-Class Learning: From
   Theory to Algorithm", NeurIPS 2018.
.. [OL2011] F. Orabona, J. Luo, "Ultra-Fast Optimization Algorithm for
   Sparse Multi Kernel Learning", ICML 2011.
"""

import time
from dataclasses import dataclass, field

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import type_of_target

from ..utils.validation import check_int, check_real, shown
from ._mkl_fast import link_coefficients as _link_coefficients
from ._mkl_fast import mkl_epoch as _mkl_epoch

# Largest C, kernel multiplier and beta * r_m accepted: beyond it the
# regulariser lambda = 1 / (C n) and the norms leave the float64 range.
_MAX_SCALE = 1e100


def default_q(n_classes):
    """The dual exponent ``q = 2 log K`` of [LYL2018]_, Section 5.2.

    Parameters
    ----------
    n_classes : int
        Number of classes ``K >= 2``.

    Returns
    -------
    q : float
        ``2 log K`` (natural logarithm); the mixed norm's exponent is
        ``p = q / (q - 1)``. For ``K = 2`` this is ``1.386`` (``p = 3.59``).

    Raises
    ------
    TypeError
        If ``n_classes`` is not an integer.
    ValueError
        If ``n_classes < 2``.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding, W. Wang,
    "Multi-Class Learning: From Theory to
    Algorithm", NeurIPS 2018, Theorem 2 and Section 5.2.
    """
    return 2.0 * np.log(check_int(n_classes, "n_classes", low=2))


def _check_vector(values, name, n, *, positive=False, high=None):
    values = np.asarray(values)
    if values.dtype.kind not in "fiu" or values.dtype == np.bool_:
        raise TypeError(f"{name} must be real numbers, got dtype {values.dtype}")
    values = np.ascontiguousarray(values, dtype=np.float64)
    if values.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},), got {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite")
    if positive and not (values > 0).all():
        raise ValueError(f"{name} must be positive")
    if (values < 0).any():
        raise ValueError(f"{name} must be non-negative")
    if high is not None and (values > high).any():
        raise ValueError(f"{name} must be <= {high:g}, got a maximum of {values.max():g}")
    return values


def link_coefficients_numpy(theta_sq, penalty, q, scale):
    """Plain-NumPy twin of :func:`link_coefficients` (same inputs, same output)."""
    norm = np.sqrt(np.maximum(theta_sq, 0.0))
    nu = np.maximum(norm - penalty, 0.0)
    coef = np.zeros_like(norm)
    if not nu.max(initial=0.0) > 0 or not scale > 0:
        return coef
    on = nu > 0
    ratio = nu[on] / nu.max()
    total = np.sum(ratio ** q)
    # nu^(q-1) / (||nu||_q^(q-2) ||theta||)
    #     = (nu / ||theta||) ratio^(q-2) / total^((q-2)/q)
    coef[on] = ((nu[on] / norm[on]) * ratio ** (q - 2.0)
                / (total ** ((q - 2.0) / q) * scale))
    return coef


def link_coefficients(theta_sq, penalty, q, scale=1.0):
    """Compute the scalars of the link function of [LYL2018]_, Theorem 3 (Cython).

    With ``nu_m = (||theta_m|| - penalty_m)_+`` the primal of the mirror step
    is ``w_m = coef_m theta_m``, where

    ``coef_m = nu_m^(q-1) / (scale ||theta_m|| ||nu||_q^(q-2))``

    (zero where ``nu_m = 0``; all zero when ``nu = 0``). SMSD-MKL calls it
    after ``t`` steps with ``penalty = t beta r`` and ``scale = lambda t``.

    Parameters
    ----------
    theta_sq : array-like of shape (n_kernels,)
        Squared norms ``||theta_m||^2 >= 0`` of the dual vector's blocks.
    penalty : array-like of shape (n_kernels,)
        Thresholds ``t beta r_m >= 0``.
    q : float
        Dual exponent, ``q > 1`` (``2 log K`` in the paper).
    scale : float, default=1.0
        Positive divisor (``alpha`` in Theorem 3, ``lambda t`` here).

    Returns
    -------
    coef : ndarray of shape (n_kernels,), dtype float64
        Non-negative scalars; the kernel weights up to a common factor.

    Raises
    ------
    ValueError
        Non-finite or negative entries, mismatched shapes, ``q <= 1``,
        ``scale <= 0``, or coefficients that overflow (``scale`` below about
        ``1 / max float``).
    TypeError
        Non-numeric input.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding, W. Wang,
    "Multi-Class Learning: From Theory to
    Algorithm", NeurIPS 2018, Theorem 3 (with the zero floor of UFO-MKL:
    see the module notes).
    """
    theta_sq = np.asarray(theta_sq)
    n = theta_sq.shape[0] if theta_sq.ndim == 1 else -1
    if n < 0:
        raise ValueError(f"theta_sq must be 1-D, got shape {theta_sq.shape}")
    theta_sq = _check_vector(theta_sq, "theta_sq", n)
    penalty = _check_vector(penalty, "penalty", n)
    q = check_real(q, "q", low=1.0, include_low=False)
    scale = check_real(scale, "scale", low=0.0, include_low=False)
    coef = _link_coefficients(theta_sq, penalty, q, scale)
    if not np.isfinite(coef).all():
        raise ValueError(f"the link coefficients overflow: scale={scale!r} is too small "
                         "for these norms")
    return coef


def mkl_epoch_numpy(gram, rows, labels, order, dual, gram_dual, theta_sq, kernel_scale,
                    penalty_rate, lam, q, t0, coef):
    """Plain-NumPy twin of the Cython ``mkl_epoch`` (same in-place updates).

    See ``mcsparse/solvers/_mkl_fast.pyx`` for the meaning of each argument.
    """
    n_updates, loss_sum = 0, 0.0
    n_classes = dual.shape[1]
    if gram.shape[0] == 0 or n_classes < 2:
        return 0, 0.0
    for s, i in enumerate(order):
        t = t0 + s + 1
        y = labels[i]
        scores = coef @ gram_dual[:, :, i]
        others = scores.copy()
        others[y] = -np.inf
        r = int(np.argmax(others))
        margin = scores[y] - scores[r]
        if margin < 1.0:
            loss_sum += 1.0 - margin
            n_updates += 1
            row = rows[i]
            kii = kernel_scale * gram[:, row, row]
            theta_sq += 2.0 * (gram_dual[:, y, i] - gram_dual[:, r, i]) + 2.0 * kii
            np.maximum(theta_sq, 0.0, out=theta_sq)
            kij = kernel_scale[:, None] * gram[:, row, rows]
            gram_dual[:, y, :] += kij
            gram_dual[:, r, :] -= kij
            dual[i, y] += 1.0
            dual[i, r] -= 1.0
        coef[:] = link_coefficients_numpy(theta_sq, t * penalty_rate, q, lam * t)
    return n_updates, loss_sum


@dataclass
class MKLFit:
    """Result of :func:`multiclass_mkl`.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        Sorted class labels; column k of ``dual_coef`` is ``classes[k]``.
    rows : ndarray of shape (n_rows,), dtype intp
        The training rows of the Gram stack.
    dual_coef : ndarray of shape (n_rows, n_classes), dtype float64
        ``theta_{m,k} = sum_j dual_coef[j, k] phi_m(x_j)`` in every kernel
        (integers: counts of hinge sub-gradient steps).
    kernel_coef : ndarray of shape (n_kernels,), dtype float64
        The link's scalars ``coef_m >= 0``, applied to the *scaled* kernels
        ``kernel_scale[m] * K_m``.
    kernel_scale : ndarray of shape (n_kernels,), dtype float64
        Multipliers of the base kernels (``1 / r_m`` for Conv-MKL, else 1).
    n_iter : int
        Epochs run.
    n_steps : int
        Stochastic steps run (``n_iter * n_rows``).
    objective : ndarray of shape (n_iter,)
        The objective (module notes) of the iterate after each epoch.
    train_error : ndarray of shape (n_iter,)
        Training error rate of the iterate after each epoch.
    n_updates : ndarray of shape (n_iter,)
        Steps with a positive hinge loss in each epoch.
    fit_time : float, default=0.0
        Wall-clock seconds spent in :func:`multiclass_mkl`.
    """

    classes: np.ndarray
    rows: np.ndarray
    dual_coef: np.ndarray
    kernel_coef: np.ndarray
    kernel_scale: np.ndarray
    n_iter: int
    n_steps: int
    objective: np.ndarray
    train_error: np.ndarray
    n_updates: np.ndarray
    fit_time: float = field(default=0.0)

    @property
    def unscaled_kernel_coef(self):
        """``kernel_coef * kernel_scale``: the coefficients of the unscaled ``K_m``.

        ``f_k(x) = sum_m unscaled_kernel_coef[m] sum_j dual_coef[j, k]
        K_m(x_{rows[j]}, x)``.
        """
        return self.kernel_coef * self.kernel_scale

    @property
    def support(self):
        """Positions (into ``rows``) of the rows with a non-zero dual coefficient."""
        return np.flatnonzero(np.any(self.dual_coef != 0, axis=1))

    @property
    def kernel_weights(self):
        """Weights of the *unscaled* base kernels, normalised to sum to one.

        ``unscaled_kernel_coef / sum(...)``: the combined kernel is
        ``sum_m kernel_weights[m] K_m`` up to a factor absorbed in the dual
        coefficients. All zero when the model is zero.
        """
        w = self.unscaled_kernel_coef
        total = w.sum()
        return w / total if total > 0 else w

    def decision_function(self, gram):
        """Compute the scores of new samples from their Gram stack against ``rows``.

        Parameters
        ----------
        gram : ndarray of shape (n_kernels, n_samples, n_rows)
            ``gram[m, i, j] = K_m(x_i, x_{rows[j]})`` (unscaled).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes), float64
            ``f_k(x_i)``; column ``k`` is ``classes[k]``.

        Raises
        ------
        TypeError
            If ``gram`` is not a float32 or float64 NumPy array.
        ValueError
            If ``gram`` is not 3-D, is empty, does not match ``(n_kernels,
            n_rows)``, or holds NaN or infinite values.
        """
        gram = _check_gram(gram, square=False)
        expected = (self.kernel_coef.shape[0], self.rows.shape[0])
        if (gram.shape[0], gram.shape[2]) != expected:
            raise ValueError(
                f"gram must have shape (n_kernels, n_samples, n_rows) = "
                f"({expected[0]}, n_samples, {expected[1]}), got {gram.shape}")
        _check_finite_symmetric(gram, symmetric=False)
        weights, support = self.unscaled_kernel_coef, self.support
        out = np.zeros((gram.shape[1], self.classes.shape[0]))
        for m in np.flatnonzero(weights):
            out += weights[m] * (gram[m][:, support] @ self.dual_coef[support])
        return out

    def predict(self, gram):
        """Predict class labels from the Gram stack against ``rows``.

        Parameters
        ----------
        gram : ndarray of shape (n_kernels, n_samples, n_rows)
            ``gram[m, i, j] = K_m(x_i, x_{rows[j]})`` (unscaled).

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            The class of the largest score of :meth:`decision_function`
            (the first class on ties).
        """
        return self.classes[np.argmax(self.decision_function(gram), axis=1)]

    def decision_function_rows(self, gram, test_rows):
        """Compute the scores of other rows of the stack the model was fitted on.

        For cross-validation on one precomputed stack: only the kernels with
        a non-zero weight and the columns of the support rows are read, so
        no ``(n_kernels, n_test, n_rows)`` block is copied.

        Parameters
        ----------
        gram : ndarray of shape (n_kernels, n, n)
            The stack passed to :func:`multiclass_mkl`.
        test_rows : array-like of shape (n_test,)
            Rows of ``gram`` to score.

        Returns
        -------
        scores : ndarray of shape (n_test, n_classes), float64
            Scores of the rows ``test_rows``; column ``k`` is ``classes[k]``.
        """
        gram = _check_gram(gram)
        if gram.shape[0] != self.kernel_coef.shape[0] or gram.shape[1] <= self.rows.max():
            raise ValueError(
                "gram must be the stack the model was fitted on: "
                f"{self.kernel_coef.shape[0]} kernels over more than {self.rows.max()} "
                f"samples, got shape {gram.shape}")
        test_rows = _check_rows(test_rows, gram.shape[1], "test_rows", unique=False)
        weights, support = self.unscaled_kernel_coef, self.support
        cols = self.rows[support]
        out = np.zeros((test_rows.shape[0], self.classes.shape[0]))
        for m in np.flatnonzero(weights):
            block = gram[m][np.ix_(test_rows, cols)]
            if not np.isfinite(block).all():
                raise ValueError(f"gram[{m}] has NaN or infinite entries in test_rows")
            out += weights[m] * (block @ self.dual_coef[support])
        return out


def _check_gram(gram, name="gram", square=True):
    shape = "(n_kernels, n, n)" if square else "(n_kernels, n_samples, n_rows)"
    if not isinstance(gram, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array of shape {shape}, "
                        f"got {type(gram).__name__}")
    if gram.dtype not in (np.float32, np.float64):
        raise TypeError(f"{name} must be float32 or float64, got dtype {gram.dtype}")
    if gram.ndim != 3 or (square and gram.shape[1] != gram.shape[2]):
        raise ValueError(f"{name} must have shape {shape}, got {gram.shape}")
    if gram.shape[0] == 0 or gram.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {gram.shape}")
    return np.ascontiguousarray(gram)


def _check_finite_symmetric(gram, symmetric=True):
    """One pass per kernel: finite entries and, for square stacks, symmetry."""
    for m in range(gram.shape[0]):
        K = gram[m]
        if not np.isfinite(K).all():
            raise ValueError(f"gram[{m}] has NaN or infinite entries")
        if symmetric and np.abs(K - K.T).max() > 1e-8 * np.abs(K).max():
            raise ValueError(f"gram[{m}] is not symmetric: a kernel matrix must be")


_PSD_SAMPLE = 256


def _check_psd_sample(gram, rows, seed=0):
    """Refuse a kernel with a negative eigenvalue on a sample of the training rows.

    The principal submatrix of up to ``_PSD_SAMPLE`` of ``rows`` (all of them
    when fewer; a fixed random sample otherwise) of a positive semi-definite
    matrix is positive semi-definite: its smallest eigenvalue below ``-10 m
    eps`` times the largest is an indefinite kernel (a sigmoid kernel, say),
    on which the solver's norms are not norms. An indefinite kernel whose
    negative directions miss the sample passes.
    """
    m = min(rows.shape[0], _PSD_SAMPLE)
    sample = rows if m == rows.shape[0] else np.sort(
        np.random.default_rng(seed).choice(rows, m, replace=False))
    for k in range(gram.shape[0]):
        K = gram[k][np.ix_(sample, sample)].astype(np.float64)
        eig = np.linalg.eigvalsh((K + K.T) / 2.0)
        if eig[0] < -10.0 * m * np.finfo(gram.dtype).eps * max(eig[-1], 0.0) or eig[-1] < 0:
            raise ValueError(
                f"gram[{k}] is not positive semi-definite: on {m} of the training rows "
                f"its eigenvalues go from {eig[0]:.3g} to {eig[-1]:.3g}. A kernel "
                "matrix must be (an indefinite kernel, such as the sigmoid kernel, "
                "gives no norm for the solver); clip its negative eigenvalues first"
            )


def _check_rows(rows, n, name="rows", unique=True):
    if rows is None:
        return np.arange(n, dtype=np.intp)
    rows = np.asarray(rows)
    if rows.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integer indices, got dtype {rows.dtype}")
    if rows.ndim != 1 or rows.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array, got shape {rows.shape}")
    rows = np.ascontiguousarray(rows, dtype=np.intp)
    if rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"{name} must lie in [0, {n}), got values in "
                         f"[{rows.min()}, {rows.max()}]")
    if unique and np.unique(rows).shape[0] != rows.shape[0]:
        raise ValueError(f"{name} must not repeat a row")
    return rows


def _objective(gram_dual, dual, labels, coef, theta_sq, penalty_rate_unit, lam, q):
    """Objective value and training error of ``w = coef theta`` (module notes)."""
    n = dual.shape[0]
    scores = np.einsum("m,mkn->nk", coef, gram_dual)
    true = scores[np.arange(n), labels]
    others = scores.copy()
    others[np.arange(n), labels] = -np.inf
    margin = true - others.max(axis=1)
    hinge = np.maximum(1.0 - margin, 0.0).mean()
    w_norm = coef * np.sqrt(theta_sq)
    p = q / (q - 1.0)
    reg = 0.0
    if w_norm.max(initial=0.0) > 0:
        top = w_norm.max()
        reg = 0.5 * lam * (top * np.sum((w_norm / top) ** p) ** (1.0 / p)) ** 2
    value = reg + float(penalty_rate_unit @ w_norm) + hinge
    error = float(np.mean(margin <= 0))
    return value, error


def multiclass_mkl(gram, y, *, rows=None, C=1.0, q=None, beta=0.0, tail_sums=None,
                   kernel_scale=None, max_iter=100, tol=1e-3, n_iter_no_change=10,
                   random_state=None, verbose=0, check_input=True, use_numpy=False):
    """Fit UFO-MKL / Conv-MKL / SMSD-MKL on a precomputed Gram stack.

    Regularised dual averaging (stochastic mirror descent) on
    ``lambda/2 ||w||_{2,p}^2 + beta sum_m r_m ||w_m|| + mean hinge`` with
    ``lambda = 1 / (C n_rows)``: [LYL2018]_ Algorithm 2 with the link of
    Theorem 3, read as the module notes say. ``beta = 0`` is UFO-MKL
    [OL2011]_; Conv-MKL (Algorithm 1) is ``beta = 0`` with
    ``kernel_scale = 1 / r``.

    Parameters
    ----------
    gram : ndarray of shape (n_kernels, n, n), float32 or float64
        Base kernel matrices over all ``n`` samples (e.g. from
        :func:`mcsparse.kernels.gaussian_kernel_stack`). Only the rows and
        columns in ``rows`` are read, so one stack serves every
        cross-validation fold without copies.
    y : array-like of shape (n_rows,)
        Class labels of the training rows (at least two classes).
    rows : array-like of shape (n_rows,), default=None
        Distinct training rows of ``gram``; all rows when None.
    C : float, default=1.0
        Inverse regularisation, ``1e-100 <= C <= 1e100``: ``lambda = 1 / (C
        n_rows)``; the paper's ``alpha`` grid ``2^-2 .. 2^12`` is a grid of
        ``C``.
    q : float, default=None
        Dual exponent ``q > 1`` (``p = q / (q - 1)``); None means
        ``2 log K`` (:func:`default_q`).
    beta : float, default=0.0
        Weight ``>= 0`` of the local-Rademacher penalty ``beta sum_m r_m
        ||w_m||`` (SMSD-MKL). Needs ``tail_sums`` when positive.
    tail_sums : array-like of shape (n_kernels,), default=None
        ``r_m`` of the training rows' Gram matrices
        (:func:`mcsparse.kernels.tail_sums`), non-negative.
    kernel_scale : array-like of shape (n_kernels,), default=None
        Positive multipliers of the base kernels; Conv-MKL passes ``1 /
        r_m``. None means ones.
    max_iter : int, default=100
        Largest number of epochs (passes over a random permutation of the
        rows).
    tol : float or None, default=1e-3
        Stop when the objective has not gone below ``best - tol * |best|``
        (``best`` the lowest objective so far) for ``n_iter_no_change``
        consecutive epochs, as :class:`sklearn.linear_model.SGDClassifier`
        does. None runs ``max_iter`` epochs.
    n_iter_no_change : int, default=10
        Epochs without improvement before stopping.
    random_state : int, RandomState instance or None, default=None
        Order of the samples.
    verbose : int, default=0
        Print one line per epoch when positive.
    check_input : bool, default=True
        Check that ``gram`` is finite and symmetric (one pass over the
        stack) and positive semi-definite on a sample of up to 256 of
        ``rows`` (a fixed random sample; exact for fewer rows). Callers that
        fit many times on one checked stack (cross-validation) pass False.
    use_numpy : bool, default=False
        Run the plain-NumPy twin of the Cython epoch (slow; for tests).

    Returns
    -------
    fit : MKLFit
        Dual coefficients, kernel coefficients and the per-epoch history.

    Raises
    ------
    ValueError
        Bad shapes, non-finite values, a non-symmetric kernel, a kernel with
        a negative eigenvalue on the checked sample, one class,
        ``C`` outside ``[1e-100, 1e100]``, ``q <= 1``, ``beta < 0``, ``beta > 0``
        without tail sums, ``beta * tail_sums`` or ``kernel_scale`` above
        1e100, ``max_iter < 1``.
    TypeError
        Wrong dtypes or parameter types.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding, W. Wang,
    "Multi-Class Learning: From Theory to
    Algorithm", NeurIPS 2018, Algorithms 1 and 2, Theorem 3. F. Orabona,
    J. Luo, "Ultra-Fast Optimization Algorithm for Sparse Multi Kernel
    Learning", ICML 2011.
    """
    start = time.perf_counter()
    gram = _check_gram(gram)
    n_kernels, n = gram.shape[:2]
    rows = _check_rows(rows, n)
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != rows.shape[0]:
        raise ValueError(f"y must have shape ({rows.shape[0]},) (one label per row), "
                         f"got {y.shape}")
    target = type_of_target(y)
    if target not in ("binary", "multiclass"):
        raise ValueError(f"y must hold class labels, got target type {target!r}")
    classes, labels = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(f"y has a single class ({shown(classes[0])}): need at least two")
    labels = np.ascontiguousarray(labels, dtype=np.intp)
    C = check_real(C, "C", low=1.0 / _MAX_SCALE, high=_MAX_SCALE)
    q = default_q(classes.shape[0]) if q is None else check_real(
        q, "q", low=1.0, include_low=False)
    beta = check_real(beta, "beta", low=0.0)
    if beta > 0 and tail_sums is None:
        raise ValueError("beta > 0 needs tail_sums (the r_m of the training Gram)")
    r = (np.zeros(n_kernels) if tail_sums is None
         else _check_vector(tail_sums, "tail_sums", n_kernels))
    scale = (np.ones(n_kernels) if kernel_scale is None
             else _check_vector(kernel_scale, "kernel_scale", n_kernels, positive=True,
                                high=_MAX_SCALE))
    if beta * r.max() > _MAX_SCALE:
        raise ValueError(f"beta * tail_sums must be <= {_MAX_SCALE:g}, got a maximum of "
                         f"{beta * r.max():g}")
    max_iter = check_int(max_iter, "max_iter", low=1)
    n_iter_no_change = check_int(n_iter_no_change, "n_iter_no_change", low=1)
    if tol is not None:
        tol = check_real(tol, "tol", low=0.0)
    check_int(verbose, "verbose")
    if check_input:
        _check_finite_symmetric(gram)
        _check_psd_sample(gram, rows)
    rng = check_random_state(random_state)

    n_rows, n_classes = rows.shape[0], classes.shape[0]
    lam = 1.0 / (C * n_rows)
    dual = np.zeros((n_rows, n_classes))
    gram_dual = np.zeros((n_kernels, n_classes, n_rows))
    theta_sq = np.zeros(n_kernels)
    coef = np.zeros(n_kernels)
    penalty_rate = beta * r
    epoch = mkl_epoch_numpy if use_numpy else _mkl_epoch
    objective, train_error, n_updates = [], [], []
    t = 0
    best, no_change = np.inf, 0
    for it in range(max_iter):
        order = np.ascontiguousarray(rng.permutation(n_rows), dtype=np.intp)
        updates, loss_sum = epoch(gram, rows, labels, order, dual, gram_dual, theta_sq,
                                  scale, penalty_rate, lam, q, t, coef)
        t += n_rows
        # exact norms (the recursion accumulates round-off), then the link again
        theta_sq[:] = np.maximum(np.einsum("nk,mkn->m", dual, gram_dual), 0.0)
        coef[:] = link_coefficients_numpy(theta_sq, t * penalty_rate, q, lam * t)
        value, error = _objective(gram_dual, dual, labels, coef, theta_sq,
                                  penalty_rate, lam, q)
        objective.append(value)
        train_error.append(error)
        n_updates.append(updates)
        if verbose > 0:
            print(f"epoch {it + 1}/{max_iter}: objective {value:.6g}, train error "
                  f"{error:.4f}, online hinge {loss_sum / n_rows:.4g}, "
                  f"{updates} updates, {np.count_nonzero(coef)} kernels")
        if tol is not None:
            no_change = no_change + 1 if value > best - tol * abs(best) else 0
            best = min(best, value)
            if no_change >= n_iter_no_change:
                break
    return MKLFit(classes=classes, rows=rows, dual_coef=dual, kernel_coef=coef.copy(),
                  kernel_scale=scale, n_iter=len(objective), n_steps=t,
                  objective=np.asarray(objective), train_error=np.asarray(train_error),
                  n_updates=np.asarray(n_updates), fit_time=time.perf_counter() - start)
