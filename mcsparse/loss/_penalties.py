"""Penalties on the weight matrix ``W`` (n_scores, n_columns), never on the intercept.

ShareBoost's refit (§3.3 of [SWS2011]_) adds a smooth penalty:

``Frobenius``
    ``alpha ||W||_F^2``.
``SmoothedLinfOne``
    the smoothed ``||W||_{inf,1}``, shifted to be zero at ``W = 0``,
    ``(alpha / beta) sum_j [log sum_i (exp(beta W_ij) + exp(-beta W_ij)) - log(2k)]``;
    it differs from the paper's formula by a constant per column (the same
    minimisers and selection choices; the objective stays non-increasing
    along the path). Its gradient at a zero column is 0, like the Frobenius
    penalty's, so the gradient column of a new candidate is the loss
    gradient alone for both.

The convex baseline of eq. (5) uses a non-smooth mixed norm, through its
proximal operator:

``MixedNorm``
    ``lam sum_j ||W[:, j]||_q``, ``q = 2`` (``"l1/l2"``, the group lasso) or
    ``q = inf`` (``"l1/linf"``).

Smooth penalties are separable by columns: ``column_terms`` gives the value,
gradient and Hessian of each column of a block, which the selection rules
and the refit's curvature use.

References
----------
.. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
   Efficient multiclass learning with feature sharing", NIPS 2011, §3.3, eq. (5).
"""

import numpy as np
from scipy.special import logsumexp

from ..utils.validation import check_real

SMOOTH_PENALTIES = ("fro", "linf1_smooth")
MIXED_NORMS = ("l1/l2", "l1/linf")


def _as_matrix(W, name, finite=True):
    """``W`` as a (finite) 2-D float64 array; TypeError or ValueError naming ``name``."""
    W = np.asarray(W)
    if W.dtype == bool or W.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers, got dtype {W.dtype}")
    if W.ndim != 2 or W.shape[0] == 0:
        raise ValueError(f"{name} must be 2-D with at least one row (the scores), "
                         f"got shape {W.shape}")
    W = W.astype(np.float64, copy=False)
    if finite and not np.isfinite(W).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return W


class _SmoothPenalty:
    """What the refit and the selection rules need of a smooth penalty.

    A subclass sets ``alpha`` and computes its columns' terms in ``_terms``.
    """

    def value_gradient(self, W):
        """Value and gradient at ``W``.

        Parameters
        ----------
        W : ndarray of shape (n_scores, n_columns)
            Coefficients.

        Returns
        -------
        value : float
            The penalty.
        grad : ndarray of shape (n_scores, n_columns)
            Its gradient.

        Raises
        ------
        TypeError
            If ``W`` does not hold real numbers.
        ValueError
            If ``W`` is not 2-D or not finite.
        """
        value, grad, _ = self._terms(_as_matrix(W, "W").T, hessian=False)
        return float(np.sum(value)), grad.T

    def column_terms(self, U, hessian=True):
        """Value, gradient and Hessian of each column of a block.

        The penalty is a sum over the columns of ``W``.

        Parameters
        ----------
        U : ndarray of shape (n_blocks, n_scores)
            One column of ``W`` per row.
        hessian : bool, default=True
            Also return the Hessians.

        Returns
        -------
        value : ndarray of shape (n_blocks,)
            The penalty of each column.
        grad : ndarray of shape (n_blocks, n_scores)
            Its gradient.
        hess : ndarray of shape (n_blocks, n_scores, n_scores) or None
            Its Hessian (None when ``hessian`` is False).

        Raises
        ------
        TypeError
            If ``U`` does not hold real numbers.
        ValueError
            If ``U`` is not 2-D or not finite.
        """
        return self._terms(_as_matrix(U, "U"), hessian)


class Frobenius(_SmoothPenalty):
    """``alpha ||W||_F^2``, the penalty of §3.3 of [SWS2011]_.

    Parameters
    ----------
    alpha : float
        Strength, finite and non-negative (0 is no penalty).

    Raises
    ------
    ValueError
        If ``alpha`` is negative or not finite.
    TypeError
        If ``alpha`` is not a real number.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3.3.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import Frobenius
    >>> Frobenius(0.5).value_gradient(np.ones((2, 3)))[0]
    3.0
    """

    name = "fro"

    def __init__(self, alpha):
        self.alpha = check_real(alpha, "alpha", low=0.0)

    def _terms(self, U, hessian):
        value = self.alpha * np.einsum("bk,bk->b", U, U)
        hess = None
        if hessian:
            # writable, like the other penalties' Hessians
            hess = np.zeros(U.shape + U.shape[1:])
            idx = np.arange(U.shape[1])
            hess[:, idx, idx] = 2.0 * self.alpha
        return value, 2.0 * self.alpha * U, hess


class SmoothedLinfOne(_SmoothPenalty):
    """The smoothed ``||W||_{inf,1}`` of §3.3 of [SWS2011]_, zero at ``W = 0``.

    ``(alpha / beta) sum_j [log sum_i (exp(beta W_ij) + exp(-beta W_ij)) -
    log(2 k)]``, within ``alpha log(2k) / beta`` per column of ``alpha
    ||W||_{inf,1}``; computed with ``logaddexp`` and ``logsumexp``, stable
    for any ``beta W``.

    Parameters
    ----------
    alpha : float
        Strength, finite and non-negative.
    beta : float, default=10.0
        Smoothing, finite and at least 1.

    Raises
    ------
    ValueError
        If ``alpha`` is negative, ``beta`` below 1, or either not finite.
    TypeError
        If either is not a real number.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3.3.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import SmoothedLinfOne
    >>> float(SmoothedLinfOne(1.0, beta=10.0).value_gradient(np.zeros((3, 2)))[0])
    0.0
    """

    name = "linf1_smooth"

    def __init__(self, alpha, beta=10.0):
        self.alpha = check_real(alpha, "alpha", low=0.0)
        self.beta = check_real(beta, "beta", low=1.0)

    def _terms(self, U, hessian):
        alpha, beta = self.alpha, self.beta
        k = U.shape[1]
        Z = beta * U
        pair = np.logaddexp(Z, -Z)  # log(e^z + e^-z) per entry, stable
        col = logsumexp(pair, axis=1)  # (B,)
        value = alpha / beta * (col - np.log(2.0 * k))
        c = np.exp(pair - col[:, None])  # 2 cosh(z) / S, sums to one
        q = np.tanh(Z) * c  # 2 sinh(z) / S
        hess = None
        if hessian:
            hess = -alpha * beta * q[:, :, None] * q[:, None, :]
            idx = np.arange(k)
            hess[:, idx, idx] += alpha * beta * c
        return value, alpha * q, hess


def make_penalty(name, alpha, beta=10.0):
    """The smooth penalty called ``name`` ("fro" or "linf1_smooth").

    Parameters
    ----------
    name : {"fro", "linf1_smooth"}
        Which penalty.
    alpha : float
        Its strength.
    beta : float, default=10.0
        Smoothing of "linf1_smooth".

    Returns
    -------
    penalty : Frobenius or SmoothedLinfOne
        The penalty object.

    Raises
    ------
    ValueError
        If ``name`` is unknown or a parameter is out of range.
    """
    if not isinstance(name, str):
        raise TypeError(f"penalty must be a string, one of {SMOOTH_PENALTIES}, got {name!r}")
    if name == "fro":
        return Frobenius(alpha)
    if name == "linf1_smooth":
        return SmoothedLinfOne(alpha, beta)
    raise ValueError(f"penalty must be one of {SMOOTH_PENALTIES}, got {name!r}")


def l1_ball_projection(V, radius):
    """Project every column of ``V`` (k, m) onto the l1 ball of ``radius``.

    The sort-based algorithm (Duchi, Shalev-Shwartz, Singer, Chandra 2008):
    with ``u`` the sorted absolute values, ``theta = (sum_{i<=rho} u_i - r) / rho``
    for the largest ``rho`` with ``u_rho > theta``; the projection is
    ``sign(v) * max(|v| - theta, 0)``, or ``v`` itself inside the ball.
    """
    V = _as_matrix(V, "V", finite=False)  # NaN propagates: the solvers check their iterates
    radius = check_real(radius, "radius", low=0.0)
    if radius == 0:
        return np.zeros_like(V)
    A = np.abs(V)
    inside = A.sum(axis=0) <= radius
    U = -np.sort(-A, axis=0)  # descending in each column
    top = np.cumsum(U, axis=0)
    idx = np.arange(1, V.shape[0] + 1)[:, None]
    cond = U - (top - radius) / idx > 0
    # rho = last index (1-based) where cond holds; it holds at index 1 whenever
    # the column is outside the ball (u_1 > u_1 - r), even where rounding says
    # otherwise (a radius below an ulp of u_1)
    cond[0] = True
    rho = V.shape[0] - np.argmax(cond[::-1], axis=0)
    cols = np.arange(V.shape[1])
    # |v| - theta as (rho |v| - sum_{i<=rho} u_i + r) / rho: exact for rho = 1
    # whatever the ratio of u_1 to r
    shrunk = (rho * A - top[rho - 1, cols] + radius) / rho
    return np.sign(V) * np.where(inside, A, np.maximum(shrunk, 0.0))


class MixedNorm:
    """``lam sum_j ||W[:, j]||_q``: the mixed norm of eq. (5) of [SWS2011]_.

    Parameters
    ----------
    kind : {"l1/l2", "l1/linf"}
        Column norm: ``q = 2`` (the group lasso) or ``q = inf``.
    lam : float, default=1.0
        Strength, finite and non-negative.

    Raises
    ------
    ValueError
        If ``kind`` is unknown or ``lam`` negative or not finite.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, eq. (5).

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import MixedNorm
    >>> MixedNorm("l1/l2", 2.0).value(np.array([[3.0, 0.0], [4.0, 0.0]]))
    10.0
    """

    def __init__(self, kind, lam=1.0):
        if not isinstance(kind, str) or kind not in MIXED_NORMS:
            raise ValueError(f"penalty must be one of {MIXED_NORMS}, got {kind!r}")
        self.kind = kind
        self.lam = check_real(lam, "lam", low=0.0)

    def value(self, W):
        """``lam sum_j ||W[:, j]||_q``.

        Parameters
        ----------
        W : ndarray of shape (n_scores, n_columns)
            Coefficients.

        Returns
        -------
        value : float
            The penalty.
        """
        return self.lam * float(self.column_norms(W).sum())

    def column_norms(self, W):
        """``||W[:, j]||_q`` for every column.

        Parameters
        ----------
        W : ndarray of shape (n_scores, n_columns)
            Coefficients.

        Returns
        -------
        norms : ndarray of shape (n_columns,)
            The column norms.
        """
        W = _as_matrix(W, "W")
        if W.shape[0] == 0:
            return np.zeros(W.shape[1])
        if self.kind == "l1/l2":
            return np.sqrt(np.einsum("ij,ij->j", W, W))
        return np.abs(W).max(axis=0)

    def dual_norms(self, G):
        """Dual norms of the columns: l2 for "l1/l2", l1 for "l1/linf".

        Parameters
        ----------
        G : ndarray of shape (n_scores, n_columns)
            Gradient columns.

        Returns
        -------
        norms : ndarray of shape (n_columns,)
            The dual norms.
        """
        G = _as_matrix(G, "G")
        if self.kind == "l1/l2":
            return np.sqrt(np.einsum("ij,ij->j", G, G))
        return np.abs(G).sum(axis=0)

    def prox(self, V, step):
        """Proximal operator of ``step * lam * sum_j ||V[:, j]||_q``, column by column.

        "l1/l2": group soft-thresholding ``v * max(0, 1 - tau / ||v||_2)``;
        "l1/linf": Moreau, ``v - P_{||.||_1 <= tau}(v)``, ``tau = step * lam``.

        Parameters
        ----------
        V : ndarray of shape (n_scores, n_columns)
            Point.
        step : float
            Step size.

        Returns
        -------
        prox : ndarray of shape (n_scores, n_columns)
            The proximal point.
        """
        V = _as_matrix(V, "V")
        tau = check_real(step, "step", low=0.0) * self.lam
        if self.kind == "l1/l2":
            norms = self.column_norms(V)
            with np.errstate(divide="ignore", invalid="ignore"):
                scale = np.where(norms > tau, 1.0 - tau / norms, 0.0)
            return V * scale
        return V - l1_ball_projection(V, tau)

    def kkt_violation(self, W, G):
        """Per-column violation of ``0 in G[:, j] + lam * d||W[:, j]||_q``, over ``lam``.

        Parameters
        ----------
        W : ndarray of shape (n_scores, n_columns)
            Coefficients.
        G : ndarray of shape (n_scores, n_columns)
            Gradient of the smooth part at ``W``.

        Returns
        -------
        violation : ndarray of shape (n_columns,)
            Zero columns: ``max(0, ||G_j||_{q*} - lam) / lam`` (``q*`` the
            dual norm). Non-zero columns, l1/l2: ``||G_j + lam W_j /
            ||W_j||_2||_2 / lam``; l1/linf: the larger of ``max(0, ||G_j||_1
            - lam) / lam`` and ``|<G_j, W_j> + lam ||W_j||_inf| / (lam
            ||W_j||_inf)`` (``-G_j / lam`` is a subgradient of the l_inf norm
            at ``W_j`` iff its l1 norm is at most one and it attains ``<u,
            W_j> = ||W_j||_inf``).
        """
        W, G = _as_matrix(W, "W"), _as_matrix(G, "G")
        if W.shape != G.shape:
            raise ValueError(f"W and G must have the same shape, got {W.shape} and {G.shape}")
        lam = self.lam
        if not lam > 0:
            raise ValueError("the KKT violation is relative to lam, which must be positive")
        norms = self.column_norms(W)
        out = np.maximum(self.dual_norms(G) - lam, 0.0) / lam
        nz = norms > 0
        if not nz.any():
            return out
        Wn, Gn, nn = W[:, nz], G[:, nz], norms[nz]
        if self.kind == "l1/l2":
            out[nz] = np.sqrt(((Gn + lam * Wn / nn) ** 2).sum(axis=0)) / lam
        else:
            fenchel = np.abs(np.einsum("ij,ij->j", Gn, Wn) + lam * nn) / (lam * nn)
            out[nz] = np.maximum(out[nz], fenchel)
        return out
