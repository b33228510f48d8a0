"""Gaussian base kernels for multi-class MKL and their eigenvalue tail sums.

The experiments of Li et al. (2018, Section 6) combine 21 Gaussian kernels
``exp(-||x - x'||^2 / (2 tau))``, ``tau = 2^i`` for ``i = -10..10``.
:func:`gaussian_kernel_stack` computes their Gram matrices from one pass of
squared distances, in row chunks of bounded memory; :func:`tail_sums`
computes each kernel's tail sum of eigenvalues ``r_m = sum_{j > zeta}
lambda_j(K_m)``, the local Rademacher complexity that Conv-MKL (Algorithm 1)
divides each Gram matrix by.
"""

import hashlib
import numbers
import threading
from collections import OrderedDict

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg
from sklearn import get_config
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils import check_array
from sklearn.utils.extmath import row_norms
from sklearn.utils.validation import check_memory

from ..utils.validation import check_real

_TAIL_SUM_METHODS = ("auto", "eigh", "eigsh")

# "auto" uses the dense eigensolver up to this many samples
_EIGH_MAX_SAMPLES = 500

# a Gram matrix is symmetric when max|K - K^T| <= _SYMMETRY_RTOL * max|K|
_SYMMETRY_RTOL = 1e-8

# float64 temporaries per (row, column) of a chunk of squared distances, at
# most: the product X Y^T and its scaled copy inside euclidean_distances, and
# the symmetrised diagonal block (the kernels are written into the output)
_TEMPORARIES_PER_ENTRY = 3


def default_bandwidths():
    """The bandwidth grid of the paper's experiments, ``tau = 2^i``, i = -10..10.

    Li et al. (2018, Section 6) use these 21 Gaussian kernels as the base
    kernels of every MKL method they compare; the grid spans narrow kernels
    (close to the identity Gram matrix) to wide ones (close to all ones)
    for features of unit scale.

    Returns
    -------
    bandwidths : ndarray of shape (21,), float64
        ``2.0 ** np.arange(-10, 11)``, increasing, for the Gaussian kernels
        ``exp(-||x - x'||^2 / (2 * tau))``.

    See Also
    --------
    gaussian_kernel_stack : The Gram matrices of these kernels.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding and W. Wang, "Multi-Class
    Learning: From Theory to Algorithm", Advances in Neural Information
    Processing Systems 31 (NeurIPS 2018), pp. 1586-1595, Section 6.

    Examples
    --------
    >>> default_bandwidths()[[0, 10, 20]]
    array([9.765625e-04, 1.000000e+00, 1.024000e+03])
    """
    return 2.0 ** np.arange(-10, 11, dtype=np.float64)


def scale_bandwidths(X, factors=None):
    """A bank of bandwidths relative to the data: scikit-learn's ``gamma="scale"`` times factors.

    scikit-learn's ``SVC(gamma="scale")`` uses ``exp(-gamma ||x - x'||^2)``
    with ``gamma = 1 / (n_features X.var())``, i.e. the bandwidth ``tau =
    n_features X.var() / 2`` of :func:`gaussian_kernel_stack` (``gamma = 1 /
    (2 tau)``), which adapts to the scale of the features. This bank
    multiplies that ``tau`` by ``factors``, so that one MKL fit searches the
    widths around it, where the paper's absolute grid
    (:func:`default_bandwidths`) assumes features of unit scale.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Training samples, real and finite (dense; sparse matrices are
        converted).
    factors : array-like of shape (n_kernels,), default=None
        Positive multipliers of the scale; None is ``2^-4 .. 2^4`` (9
        kernels, from 16 times narrower to 16 times wider).

    Returns
    -------
    bandwidths : ndarray of shape (n_kernels,), float64
        ``factors * n_features * X.var() / 2``.

    Raises
    ------
    ValueError
        If ``X`` is empty, holds NaN or infinity, or has zero variance (every
        entry equal: no scale to take), a factor is not finite and positive,
        or the bandwidths leave float64's normal range (values of ``X``
        beyond about 1e150 or below about 1e-150; rescale ``X``).
    TypeError
        If ``X`` or ``factors`` are not real numbers.

    See Also
    --------
    default_bandwidths : The paper's absolute grid ``2^-10 .. 2^10``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 1.0], [2.0, 3.0]])  # variance 1.25, 2 features
    >>> scale_bandwidths(X, factors=[0.5, 1.0, 2.0])
    array([0.625, 1.25 , 2.5  ])
    """
    X = check_array(X, accept_sparse=False if not sp.issparse(X) else "csr",
                    dtype=np.float64)
    if sp.issparse(X):
        X = X.toarray()
    if X.max() == X.min():  # X.var() of equal entries may round to 1e-35, not 0
        raise ValueError("X has zero variance (every entry is equal): there is no scale "
                         "to take bandwidths from; pass bandwidths explicitly")
    factors = (2.0 ** np.arange(-4, 5, dtype=np.float64) if factors is None
               else _check_bandwidths(factors, name="factors"))
    with np.errstate(over="ignore", under="ignore"):
        variance = float(X.var())
        bandwidths = factors * (X.shape[1] * variance / 2.0)
    if not (np.isfinite(bandwidths).all() and bandwidths.min() >= np.finfo(np.float64).tiny):
        raise ValueError(
            f"the bandwidths factors * n_features * X.var() / 2 leave float64's normal range "
            f"(X.var() = {variance:.3g}, bandwidths from {bandwidths.min():.3g} to "
            f"{bandwidths.max():.3g}): rescale X, e.g. to [-1, 1], or the factors")
    return bandwidths


def _check_bandwidths(bandwidths, X=None, name="bandwidths"):
    """``bandwidths`` as a 1-D float64 array of finite positive numbers.

    None and ``"paper"`` are the paper's grid; ``"scale"`` (with the
    training samples ``X``) is :func:`scale_bandwidths`.
    """
    if bandwidths is None or (isinstance(bandwidths, str) and bandwidths == "paper"
                              and name == "bandwidths"):
        return default_bandwidths()
    if isinstance(bandwidths, str) and name == "bandwidths":
        if bandwidths != "scale":
            raise ValueError(f'bandwidths must be "paper", None, "scale" or an array of '
                             f"positive numbers, got {bandwidths!r}")
        if X is None:
            raise ValueError('bandwidths="scale" is computed by the MKL estimators from their '
                             "training samples; here pass an array, e.g. "
                             "mcsparse.kernels.scale_bandwidths(X)")
        return scale_bandwidths(X)
    values = np.asarray(bandwidths)
    if values.dtype == bool or not (
        np.issubdtype(values.dtype, np.floating) or np.issubdtype(values.dtype, np.integer)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {values.dtype}")
    if values.ndim == 0:
        values = values.reshape(1)
    if values.ndim != 1:
        raise ValueError(
            f"{name} must be a scalar or a 1-D array, got shape {values.shape}")
    if values.size == 0:
        raise ValueError(f"{name} must hold at least one value, got an empty array")
    values = values.astype(np.float64)
    bad = ~(np.isfinite(values) & (values > 0))
    if bad.any():
        first = np.flatnonzero(bad)[0]
        raise ValueError(
            f"{name} must be finite and strictly positive, got "
            f"{name}[{first}] = {float(values[first])}")
    return values


def _check_working_memory(working_memory):
    """``working_memory`` in MiB, sklearn's configured value for None."""
    if working_memory is None:
        working_memory = get_config()["working_memory"]
    return check_real(working_memory, "working_memory", low=0.0, include_low=False)


def _check_samples(X, name):
    """``X`` as float64, dense or CSR, 2-D, finite, with at least one sample."""
    X = check_array(X, accept_sparse=("csr", "csc"), dtype=np.float64,
                    ensure_min_samples=1, input_name=name)
    if sp.issparse(X):
        X = X.tocsr()
    return X


def _chunk_n_rows(row_bytes, n_rows, working_memory):
    """Rows per chunk within ``working_memory`` MiB: at least 1, at most ``n_rows``."""
    return int(max(1, min(n_rows, working_memory * 2**20 // max(row_bytes, 1))))


def _squared_norms(X, name):
    """Squared Euclidean norms of the rows of ``X``, checked finite."""
    with np.errstate(over="ignore", invalid="ignore"):
        norms = row_norms(X, squared=True)
    if not np.isfinite(norms).all():
        raise ValueError(
            f"squared norms of the rows of {name} overflow float64: rescale {name}")
    return norms


def _squared_distances(X, Y, X_sq, Y_sq):
    """Squared Euclidean distances between the rows, clipped at 0."""
    with np.errstate(over="ignore", invalid="ignore"):
        D = euclidean_distances(X, Y, squared=True,
                                X_norm_squared=X_sq, Y_norm_squared=Y_sq)
    if not np.isfinite(D).all():
        raise ValueError(
            "squared distances overflow float64: rescale X (and Y)")
    np.maximum(D, 0.0, out=D)
    return D


def _check_float_dtype(dtype):
    """``dtype`` (a type, a dtype or its name) as np.float32 or np.float64; TypeError otherwise.

    Scalars and arrays, which NumPy would read through their ``dtype``, are
    refused: a dtype is asked for, not a value.
    """
    checked = None
    if isinstance(dtype, (type, str, np.dtype)):
        try:
            checked = np.dtype(dtype)
        except (TypeError, ValueError):
            pass
    if checked is None or checked not in (np.dtype(np.float32), np.dtype(np.float64)):
        raise TypeError(f"dtype must be np.float32 or np.float64, got {dtype!a}")
    return checked


def _exp_scaled(D, scale, out, exponent=None):
    """``out = exp(D / scale)``, through the float64 ``exponent`` when given (float32 ``out``)."""
    exponent = out if exponent is None else exponent
    np.divide(D, scale, out=exponent)
    np.exp(exponent, out=out)


def gaussian_kernel_stack(X, Y=None, *, bandwidths=None, dtype=np.float64,
                          working_memory=None):
    r"""Gram matrices of a bank of Gaussian kernels, one per bandwidth.

    .. math::

        \mathrm{out}[m, i, j] = \exp\left(-\frac{\|x_i - y_j\|^2}
        {2\,\tau_m}\right),

    the base kernels of the paper's experiments (Section 6) with ``tau_m =
    bandwidths[m]``. The squared distances are computed once, by
    :func:`sklearn.metrics.pairwise.euclidean_distances` on float64 data
    (dense data centred first by the mean of ``X``, so that data far from
    the origin keep their precision), clipped at 0, and every kernel is
    written from them into one
    preallocated output of ``dtype`` (the exponentials are computed in
    float64 and rounded once). Rows of ``X`` go in chunks sized so that the
    float64 temporaries (a chunk of distances and its scaled copy) take about
    ``working_memory`` MiB besides the output itself (a third more with
    ``dtype=np.float32``, whose exponents go through one more temporary: the
    chunks are the same for both dtypes, so that the float32 stack is the
    float64 one rounded).

    With ``Y=None`` only the upper triangle of the distances is computed,
    the diagonal is set to exactly 0 and the diagonal blocks are
    symmetrised, so every Gram matrix is exactly symmetric with a diagonal
    of exactly 1.0. Passing ``Y=X`` computes every entry and may leave
    round-off asymmetry.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples_X, n_features)
        Samples: real, finite, at least one. Converted to float64 (float32
        is accepted, the result is float64 all the same); CSC and other
        sparse formats are converted to CSR.
    Y : {array-like, sparse matrix} of shape (n_samples_Y, n_features), default=None
        Second set of samples, e.g. test samples against the training
        samples ``X``; same checks as ``X``. None means ``X`` itself.
    bandwidths : float or array-like of shape (n_kernels,), default=None
        The bandwidths ``tau_m``: finite and strictly positive. A scalar is
        a grid of one. None means :func:`default_bandwidths`, the 21
        bandwidths ``2^-10 .. 2^10`` of the paper.
    dtype : {np.float64, np.float32}, default=np.float64
        Storage of the result. float32 halves the memory of the stack (the
        paper's experiments store their kernels in single precision) and
        rounds each entry of the float64 stack once: a relative error of at
        most ``2^-24`` for entries above float32's smallest normal number
        (about 1.2e-38); smaller entries become subnormal or 0.
    working_memory : float, default=None
        MiB the temporaries of one chunk of rows may take; None means
        ``sklearn.get_config()["working_memory"]``. One row is always
        processed at a time at least, so a tiny value means one row per
        chunk. The result depends on it only through the rounding of the
        squared distances (BLAS products of differently sized blocks).

    Returns
    -------
    gram_stack : ndarray of shape (n_kernels, n_samples_X, n_samples_Y), of ``dtype``
        C-contiguous; ``gram_stack[m]`` is the Gram matrix of the kernel of
        bandwidth ``bandwidths[m]``.

    Raises
    ------
    TypeError
        If ``bandwidths`` do not hold real numbers, ``dtype`` is not float32
        or float64, or ``working_memory`` is not None or a number.
    ValueError
        If ``X`` or ``Y`` are not 2-D, are empty, hold NaN or infinity or
        non-numeric values, have different numbers of features, or their
        squared distances overflow float64; if ``bandwidths`` are empty,
        not 1-D, not finite or not strictly positive; if ``working_memory``
        is not positive.

    See Also
    --------
    default_bandwidths : The paper's bandwidth grid.
    tail_sums : The tail sums of eigenvalues of these Gram matrices.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding and W. Wang, "Multi-Class
    Learning: From Theory to Algorithm", Advances in Neural Information
    Processing Systems 31 (NeurIPS 2018), pp. 1586-1595, Section 6 (Gaussian
    kernels, ``tau = 2^i``, ``i = -10..10``).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.0], [1.0, 1.0]])
    >>> K = gaussian_kernel_stack(X, bandwidths=[0.5, 1.0])
    >>> K.shape
    (2, 2, 2)
    >>> np.round(K[1], 6)
    array([[1.      , 0.367879],
           [0.367879, 1.      ]])
    """
    X = _check_samples(X, "X")
    symmetric = Y is None
    if not symmetric:
        Y = _check_samples(Y, "Y")
        if Y.shape[1] != X.shape[1]:
            raise ValueError(
                f"Y has {Y.shape[1]} features, but X has {X.shape[1]} features")
    bandwidths = _check_bandwidths(bandwidths)
    dtype = _check_float_dtype(dtype)
    working_memory = _check_working_memory(working_memory)
    if not sp.issparse(X) and (symmetric or not sp.issparse(Y)):
        # ||x||^2 - 2 x.y + ||y||^2 loses all precision far from the origin:
        # distances do not change when both sides are centred
        with np.errstate(over="ignore", invalid="ignore"):  # overflow: checked below
            centre = X.mean(axis=0)
            X = X - centre
            if not symmetric:
                Y = Y - centre

    n_X = X.shape[0]
    X_sq = _squared_norms(X, "X")
    if symmetric:
        Y, Y_sq = X, X_sq
    else:
        Y_sq = _squared_norms(Y, "Y")
    n_Y = Y.shape[0]
    out = np.empty((bandwidths.size, n_X, n_Y), dtype=dtype)
    with np.errstate(over="ignore"):  # tau near float64's max: -inf, exp(-0) = 1 all the same
        scales = -2.0 * bandwidths  # dividing by -2 tau keeps 0 / tau = 0 for any tau
    # the same chunks for both dtypes (float32 output: the exponents go
    # through one more temporary, beyond the bound), so that the float32
    # stack is the float64 one rounded, whatever the distances' round-off
    single = dtype == np.float32
    chunk = _chunk_n_rows(_TEMPORARIES_PER_ENTRY * n_Y * 8, n_X, working_memory)

    with np.errstate(over="ignore", under="ignore"):
        if symmetric:
            for start in range(0, n_X, chunk):
                stop = min(start + chunk, n_X)
                # rows start:stop against columns start:, the upper triangle
                D = _squared_distances(X[start:stop], X[start:],
                                       X_sq[start:stop], X_sq[start:])
                diag_block = D[:, :stop - start]
                diag_block[...] = 0.5 * (diag_block + diag_block.T)
                np.fill_diagonal(diag_block, 0.0)
                exponent = np.empty_like(D) if single else None
                for m, scale in enumerate(scales):
                    upper = out[m, start:stop, start:]  # written in place
                    _exp_scaled(D, scale, upper, exponent)
                    # the rows below the chunk, mirrored (one chunk: nothing)
                    out[m, stop:, start:stop] = upper[:, stop - start:].T
        else:
            for start in range(0, n_X, chunk):
                stop = min(start + chunk, n_X)
                D = _squared_distances(X[start:stop], Y, X_sq[start:stop], Y_sq)
                exponent = np.empty_like(D) if single else None
                for m, scale in enumerate(scales):
                    _exp_scaled(D, scale, out[m, start:stop], exponent)
    return out


def _check_zeta(zeta, n_samples):
    """``zeta`` as a 1-D intp array in ``[0, n_samples)``, and whether it was scalar."""
    if isinstance(zeta, (bool, np.bool_)):
        raise TypeError(f"zeta must be an int or a sequence of ints, got {zeta!r}")
    scalar = isinstance(zeta, numbers.Integral)
    if not scalar and isinstance(zeta, numbers.Number):
        raise TypeError(f"zeta must be an int or a sequence of ints, got {zeta!r}")
    values = np.asarray(zeta)
    if values.size == 0:
        raise ValueError("zeta must hold at least one value, got an empty sequence")
    if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
        raise TypeError(
            f"zeta must be an int or a sequence of ints, got values of dtype {values.dtype}")
    if values.ndim == 0:
        scalar = True
        values = values.reshape(1)
    if values.ndim != 1:
        raise ValueError(f"zeta must be an int or a 1-D sequence, got shape {values.shape}")
    bad = (values < 0) | (values >= n_samples)
    if bad.any():
        raise ValueError(
            f"zeta must be in [0, n_samples) = [0, {n_samples}) (the number of "
            f"eigenvalues removed), got {values[np.flatnonzero(bad)[0]]}")
    return values.astype(np.intp), scalar


def _check_gram_stack(gram_stack):
    """``gram_stack`` as an array of real numbers of shape (n_kernels, n, n), n >= 1."""
    if sp.issparse(gram_stack):
        raise TypeError(
            "gram_stack must be a dense array of shape (n_kernels, n_samples, "
            "n_samples), got a sparse matrix")
    gram_stack = np.asarray(gram_stack)
    if gram_stack.dtype == bool or not (
        np.issubdtype(gram_stack.dtype, np.floating)
        or np.issubdtype(gram_stack.dtype, np.integer)
    ):
        raise TypeError(f"gram_stack must hold real numbers, got dtype {gram_stack.dtype}")
    if gram_stack.ndim == 2:
        raise ValueError(
            "gram_stack must be 3-D (n_kernels, n_samples, n_samples), got a 2-D "
            f"array of shape {gram_stack.shape}; for a single Gram matrix pass gram[None]")
    if gram_stack.ndim != 3:
        raise ValueError(
            "gram_stack must be 3-D (n_kernels, n_samples, n_samples), got shape "
            f"{gram_stack.shape}")
    n_kernels, n_rows, n_cols = gram_stack.shape
    if n_rows != n_cols:
        raise ValueError(
            f"the Gram matrices of gram_stack must be square, got shape {gram_stack.shape}")
    if n_kernels == 0 or n_rows == 0:
        raise ValueError(
            "gram_stack must hold at least one kernel and one sample, got shape "
            f"{gram_stack.shape}")
    return gram_stack


def _checked_gram(gram_stack, m):
    """Kernel ``m`` as float64, checked finite and symmetric, then symmetrised."""
    K = np.asarray(gram_stack[m], dtype=np.float64)
    if not np.isfinite(K).all():
        raise ValueError(f"gram_stack[{m}] contains NaN or infinity")
    scale = np.abs(K).max()
    asymmetry = np.abs(K - K.T).max()
    sym = 0.5 * K + 0.5 * K.T
    if asymmetry > _SYMMETRY_RTOL * scale:
        raise ValueError(
            f"gram_stack[{m}] is not symmetric: max |K - K^T| = {asymmetry:.3g} "
            f"exceeds {_SYMMETRY_RTOL:g} * max |K| = {_SYMMETRY_RTOL * scale:.3g}")
    return sym


def _top_eigenvalues(K, k, method):
    """The ``k`` largest eigenvalues of the symmetric ``K``, largest first."""
    n = K.shape[0]
    try:
        if method == "eigh":
            values = scipy.linalg.eigh(K, subset_by_index=[n - k, n - 1],
                                       eigvals_only=True)
        else:
            # a fixed random start (not ones, which may be orthogonal to the
            # top eigenvectors) makes the result reproducible
            v0 = np.random.RandomState(0).uniform(-1.0, 1.0, n)
            values = scipy.sparse.linalg.eigsh(
                K, k=k, which="LA", v0=v0, return_eigenvectors=False)
    except (np.linalg.LinAlgError, scipy.sparse.linalg.ArpackError):
        # LAPACK's subset drivers (evr, evx) and ARPACK can fail on tightly
        # clustered spectra, e.g. the near-identity Gram of a very narrow
        # kernel; the divide-and-conquer driver computes all of them.
        values = scipy.linalg.eigh(K, eigvals_only=True, driver="evd")[n - k:]
    return np.sort(values)[::-1]


def tail_sums(gram_stack, zeta, *, method="auto"):
    r"""Tail sums of the eigenvalues of each Gram matrix, for Conv-MKL.

    .. math::

        r_m(\zeta) = \sum_{j > \zeta} \lambda_j(K_m)
                   = \mathrm{tr}(K_m) - \sum_{j=1}^{\zeta} \lambda_j(K_m),

    with eigenvalues in decreasing order: the local Rademacher complexity
    of kernel ``m`` (the equation before Algorithm 1 of the paper).
    Conv-MKL (Algorithm 1) uses ``K_m / r_m`` as base kernels in an
    lp-norm MKL solver. The ``max(zeta)`` largest eigenvalues of each
    kernel are computed once and every requested ``zeta`` is derived from
    them. Sums that round-off makes slightly negative are clipped to 0 (the
    kernels are positive semi-definite).

    Compute tail sums on the Gram matrices of the training samples only:
    test samples must not take part in them, nor in choosing ``zeta``.

    Parameters
    ----------
    gram_stack : array-like of shape (n_kernels, n_samples, n_samples)
        Gram matrices on the training samples, e.g. from
        :func:`gaussian_kernel_stack`: real, finite and symmetric (within a
        relative tolerance of 1e-8 of the largest entry; the symmetric part
        is used). Converted to float64 one kernel at a time. For a single
        Gram matrix pass ``gram[None]``.
    zeta : int or sequence of int
        Number of largest eigenvalues removed, ``0 <= zeta < n_samples``;
        ``zeta = 0`` gives the trace. The paper's grid is ``2, 4, 8, 16``.
    method : {"auto", "eigh", "eigsh"}, default="auto"
        How the largest ``k = max(zeta)`` eigenvalues are found:
        ``"eigh"``, the dense solver :func:`scipy.linalg.eigh` restricted
        to them (``subset_by_index``); ``"eigsh"``, Lanczos iterations
        (:func:`scipy.sparse.linalg.eigsh`, ``which="LA"``, from a fixed
        random start), much faster for large ``n_samples`` and small
        ``zeta``; ``"auto"``, ``"eigh"`` when ``n_samples <= 500`` or
        ``k >= n_samples / 10``, else ``"eigsh"``.

    Returns
    -------
    r : ndarray of shape (n_kernels,) or (n_zeta, n_kernels), float64
        Non-negative tail sums; ``r[m]`` for an int ``zeta``, ``r[z, m]``
        for ``zeta[z]`` when ``zeta`` is a sequence.

    Raises
    ------
    TypeError
        If ``gram_stack`` is sparse or does not hold real numbers, if
        ``zeta`` is not an int or a sequence of ints (floats and bools are
        refused), or ``method`` is not a string.
    ValueError
        If ``gram_stack`` is not 3-D (a 2-D array gets a hint to pass
        ``gram[None]``), its matrices are not square, it is empty, or a
        kernel holds NaN or infinity or is not symmetric (the message names
        the kernel index); if ``zeta`` is empty, not 1-D or out of
        ``[0, n_samples)``; if ``method`` is not one of the above.

    See Also
    --------
    gaussian_kernel_stack : Gram matrices of Gaussian kernels.

    Notes
    -----
    The dense solver costs ``O(n^3)`` per kernel, Lanczos about ``O(n^2
    k)`` per iteration count. A very wide kernel is close to the all-ones
    matrix: its tail sums are close to 0 and carry an absolute round-off
    error of about ``n * eps * max|K|``, so guard against tiny ``r_m``
    before dividing by them.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding and W. Wang, "Multi-Class
    Learning: From Theory to Algorithm", Advances in Neural Information
    Processing Systems 31 (NeurIPS 2018), pp. 1586-1595, Section 5.1 (tail
    sum of eigenvalues, Algorithm 1 Conv-MKL).

    Examples
    --------
    >>> import numpy as np
    >>> K = np.diag([3.0, 2.0, 1.0])[None]
    >>> tail_sums(K, 1)
    array([3.])
    >>> tail_sums(K, [0, 1, 2])
    array([[6.],
           [3.],
           [1.]])
    """
    if not isinstance(method, str):
        raise TypeError(f"method must be a string, one of {_TAIL_SUM_METHODS}, got {method!r}")
    if method not in _TAIL_SUM_METHODS:
        raise ValueError(f"method must be one of {_TAIL_SUM_METHODS}, got {method!r}")
    gram_stack = _check_gram_stack(gram_stack)
    zetas, scalar = _check_zeta(zeta, gram_stack.shape[1])
    result = _tail_sums(gram_stack, zetas, method, check_kernels=True)
    return result[0] if scalar else result


def _tail_sums(gram_stack, zetas, method, check_kernels):
    """Tail sums of a checked stack, shape (len(zetas), n_kernels); see :func:`tail_sums`.

    ``check_kernels=False`` skips the finiteness and symmetry checks of each
    kernel, for stacks of :func:`gaussian_kernel_stack` (finite and exactly
    symmetric by construction).
    """
    n_kernels, n_samples, _ = gram_stack.shape
    k = int(zetas.max())
    if method == "auto":
        method = "eigh" if n_samples <= _EIGH_MAX_SAMPLES or k >= n_samples / 10 else "eigsh"
    result = np.empty((zetas.size, n_kernels), dtype=np.float64)
    for m in range(n_kernels):
        K = (_checked_gram(gram_stack, m) if check_kernels
             else np.asarray(gram_stack[m], dtype=np.float64))
        trace = np.trace(K)
        # removed[z]: the sum of the z largest eigenvalues, z = 0..k
        removed = np.zeros(k + 1)
        if k > 0:
            np.cumsum(_top_eigenvalues(K, k, method), out=removed[1:])
        result[:, m] = trace - removed[zetas]
    return np.maximum(result, 0.0, out=result)


#: Tail sums remembered (training data, bank, zetas) by ``memory="in_process"``:
#: a search fits every candidate on the same folds, and the eigenvalues are
#: the costly part of a Conv- or SMSD-MKL fit.
_TAIL_SUMS_REMEMBERED = 32
_tail_sums_memo = OrderedDict()
_tail_sums_lock = threading.Lock()

#: The ``memory`` that keeps the last tail sums in this process.
IN_PROCESS = "in_process"


def _data_key(X, bandwidths):
    """A key of the training samples and the bank: shape, dtype and a digest of the bytes."""
    X = np.ascontiguousarray(X)
    digest = hashlib.sha1(X.view(np.uint8)).hexdigest()
    return (X.shape, X.dtype.str, digest, np.asarray(bandwidths, dtype=np.float64).tobytes())


def _stack_tail_sums(gram, X, bandwidths, dtype, zetas):
    """``tail_sums(gram, zetas)`` of a stack of :func:`gaussian_kernel_stack`.

    The stack is trusted: finite and exactly symmetric by construction. The
    arguments after ``gram`` (the stack's samples, bank and dtype) are what
    a joblib cache keys it by; ``gram`` itself is not hashed.
    """
    return _tail_sums(gram, np.asarray(zetas, dtype=np.intp), "auto", check_kernels=False)


def _remembered_tail_sums(gram, zetas, X, bandwidths, memory=IN_PROCESS):
    """``tail_sums(gram, zetas)`` of ``gram = gaussian_kernel_stack(X, bandwidths)``, cached.

    ``memory`` is the MKL estimators' parameter: ``"in_process"``, the last
    :data:`_TAIL_SUMS_REMEMBERED` results of this process keyed by a digest
    of ``X`` (:func:`_data_key`); None, no cache; a path or a
    ``joblib.Memory`` (scikit-learn's ``check_memory``), joblib's cache
    keyed by ``X``, ``bandwidths``, the stack's dtype and ``zetas``. The
    stack is not read on a hit. Returns an array of shape (len(zetas),
    n_kernels).
    """
    zetas = tuple(int(z) for z in zetas)
    if not (isinstance(memory, str) and memory == IN_PROCESS):
        cached = check_memory(memory).cache(_stack_tail_sums, ignore=["gram"])
        return cached(gram, X, bandwidths, gram.dtype.str, zetas)
    key = _data_key(X, bandwidths) + (gram.dtype.str, zetas)
    with _tail_sums_lock:
        if key in _tail_sums_memo:
            _tail_sums_memo.move_to_end(key)
            return _tail_sums_memo[key].copy()
    value = _stack_tail_sums(gram, X, bandwidths, gram.dtype.str, zetas)
    with _tail_sums_lock:
        _tail_sums_memo[key] = value.copy()
        while len(_tail_sums_memo) > _TAIL_SUMS_REMEMBERED:
            _tail_sums_memo.popitem(last=False)
    return value


def forget_tail_sums():
    """Forget the tail sums the MKL estimators remember in this process.

    :class:`~mcsparse.ConvMKLClassifier` and :class:`~mcsparse.SMSDMKLClassifier`
    with their default ``memory="in_process"`` remember the tail sums of the
    last 32 (training samples, bank, ``zeta``), keyed by a digest of the
    samples' bytes (changed data are never served stale sums): a search over
    ``C``, ``q``, ``beta`` or ``final`` then computes the eigenvalues once
    per fold, not once per candidate. Call this to time a search from
    scratch, or to free the memory (a few floats per entry). A joblib cache
    (``memory=`` a path or a ``joblib.Memory``) is cleared by its own
    ``clear()``.

    Returns
    -------
    n_forgotten : int
        The number of entries that were remembered.

    Examples
    --------
    >>> from mcsparse.kernels import forget_tail_sums
    >>> forget_tail_sums() >= 0
    True
    """
    with _tail_sums_lock:
        n = len(_tail_sums_memo)
        _tail_sums_memo.clear()
    return n


def conv_kernel_scale(tail_sums, traces, tail_sum_floor=1e-2, *, largest_eigenvalues=None):
    """Compute Conv-MKL's kernel multipliers ``1 / r_m``, with a floor on tiny tail sums.

    Parameters
    ----------
    tail_sums : array-like of shape (n_kernels,)
        ``r_m >= 0`` of the training Gram matrices.
    traces : array-like of shape (n_kernels,)
        ``trace(K_m)`` of the same matrices (``n_samples`` for Gaussian
        kernels).
    tail_sum_floor : float, default=1e-2
        ``r_m`` is raised to at least ``tail_sum_floor * trace(K_m)`` before
        dividing: a near-constant (very wide) kernel has a tail sum near zero,
        and ``K_m / r_m`` would hand it almost all the weight.
    largest_eigenvalues : array-like of shape (n_kernels,), default=None
        ``lambda_1(K_m)``: when given, ``r_m`` is also raised to at least
        it (the spectral guard), so that no eigen-direction of the scaled
        kernel ``K_m / r_m`` has an eigenvalue above one. The tail sum
        leaves out the ``zeta`` leading eigenvalues, so a wide kernel with
        a small tail sum would otherwise be amplified along its leading,
        smoothest directions, which the complexity does not count.

    Returns
    -------
    kernel_scale : ndarray of shape (n_kernels,), dtype float64
        ``1 / max(r_m, tail_sum_floor * trace(K_m))``, or ``1 / max(r_m,
        tail_sum_floor * trace(K_m), lambda_1(K_m))`` with
        ``largest_eigenvalues``.

    Raises
    ------
    ValueError
        If ``tail_sum_floor`` is not in ``(0, 1]``, ``tail_sums``,
        ``traces`` or ``largest_eigenvalues`` is not 1-D, has NaN or
        infinity or the shapes differ, the traces are not positive, the
        tail sums or largest eigenvalues negative, or a multiplier
        overflows.
    TypeError
        If ``tail_sums`` or ``traces`` does not hold real numbers.

    References
    ----------
    J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding, W. Wang,
    "Multi-Class Learning: From Theory to
    Algorithm", NeurIPS 2018, Algorithm 1.
    """
    if isinstance(tail_sum_floor, bool) or not isinstance(tail_sum_floor, numbers.Real):
        raise TypeError(f"tail_sum_floor must be a real number, got {tail_sum_floor!r}")
    if not 0 < tail_sum_floor <= 1:
        raise ValueError(f"tail_sum_floor must be a number in (0, 1], got {tail_sum_floor!r}")
    tail_sum_floor = float(tail_sum_floor)
    values = {}
    arrays = [("tail_sums", tail_sums), ("traces", traces)]
    if largest_eigenvalues is not None:
        arrays.append(("largest_eigenvalues", largest_eigenvalues))
    for name, arr in arrays:
        arr = np.asarray(arr)
        if arr.dtype == bool or arr.dtype.kind not in "iuf":
            raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array (n_kernels,), got shape {arr.shape}")
        arr = arr.astype(np.float64)
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} contains NaN or infinity")
        values[name] = arr
    tail_sums, traces = values["tail_sums"], values["traces"]
    for name, arr in values.items():
        if arr.shape != tail_sums.shape:
            raise ValueError(
                f"tail_sums and {name} must have the same shape (n_kernels,), got "
                f"{tail_sums.shape} and {arr.shape}"
            )
    if not (traces > 0).all():
        raise ValueError("the kernels' traces must be positive")
    if (tail_sums < 0).any():
        raise ValueError("tail_sums must be non-negative")
    denominator = np.maximum(tail_sums, tail_sum_floor * traces)
    if largest_eigenvalues is not None:
        if (values["largest_eigenvalues"] < 0).any():
            raise ValueError("largest_eigenvalues must be non-negative")
        denominator = np.maximum(denominator, values["largest_eigenvalues"])
    with np.errstate(divide="ignore", over="ignore"):
        scale = 1.0 / denominator
    if not np.isfinite(scale).all():
        raise ValueError("the multipliers 1 / max(r_m, tail_sum_floor * trace(K_m)) overflow "
                         "float64: the traces (and tail sums) are too small")
    return scale
