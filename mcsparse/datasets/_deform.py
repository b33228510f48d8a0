"""Deformed copies of images: random affine maps and elastic distortions."""

import numpy as np
import scipy.sparse as sp
from scipy import ndimage
from sklearn.utils import check_random_state

from ..utils.validation import (check_float32_array, check_int, check_real,
                                resolve_image_shape)

#: Images warped per call of SciPy (bounds the temporary displacement fields).
_CHUNK = 1024


def _check_X(X):
    if sp.issparse(X):
        raise TypeError("X is a sparse matrix: deform_images needs a dense array of images")
    X = check_float32_array(X, "X", 2, "(n_samples, height * width)")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"X is empty: shape {X.shape}")
    return X


def _affine_maps(m, rng, max_rotation, max_scale, max_shear):
    """``m`` random 2 x 2 matrices: rotation, isotropic scale and shear, each uniform."""
    angle = np.deg2rad(rng.uniform(-max_rotation, max_rotation, m))
    scale = 1.0 + rng.uniform(-max_scale, max_scale, m)
    shear = rng.uniform(-max_shear, max_shear, m)
    cos, sin = np.cos(angle), np.sin(angle)
    # rotation @ shear @ scale, maps output offsets to input offsets
    A = np.empty((m, 2, 2))
    A[:, 0, 0] = cos * scale
    A[:, 0, 1] = (cos * shear - sin) * scale
    A[:, 1, 0] = sin * scale
    A[:, 1, 1] = (sin * shear + cos) * scale
    return A


def _warp(images, rng, params):
    """One random deformation of each image of the (m, h, w) stack."""
    m, h, w = images.shape
    max_rotation, max_scale, max_shear, alpha, sigma = params
    rows, cols = np.meshgrid(np.arange(h) - (h - 1) / 2, np.arange(w) - (w - 1) / 2,
                             indexing="ij")
    A = _affine_maps(m, rng, max_rotation, max_scale, max_shear)
    src_r = A[:, 0, 0, None, None] * rows + A[:, 0, 1, None, None] * cols + (h - 1) / 2
    src_c = A[:, 1, 0, None, None] * rows + A[:, 1, 1, None, None] * cols + (w - 1) / 2
    if alpha > 0:
        # Simard et al.'s elastic field: uniform noise, Gaussian-smoothed, scaled
        for src in (src_r, src_c):
            field = rng.uniform(-1.0, 1.0, (m, h, w))
            src += alpha * ndimage.gaussian_filter(field, (0, sigma, sigma))
    index = np.broadcast_to(np.arange(m)[:, None, None], (m, h, w))
    warped = ndimage.map_coordinates(images, [index, src_r, src_c], order=1,
                                     mode="constant", cval=0.0)
    # bilinear interpolation stays within the pixels' range and the background
    # 0, up to rounding
    return np.clip(warped, min(images.min(), 0.0), max(images.max(), 0.0))


def deform_images(X, n_copies=1, *, image_shape=None, max_rotation=10.0, max_scale=0.1,
                  max_shear=0.15, elastic_alpha=34.0, elastic_sigma=4.0,
                  random_state=None):
    """Randomly deformed copies of images, to expand a training set.

    The expansion of [SWS2011]_ §7.4 (five deformed copies of each MNIST
    training digit, 360,000 examples in all), after the warping scheme of
    [SCP2003]_ that it cites. Each copy of an image is warped by its own
    random map: an affine map about the image centre (rotation, isotropic
    scale and shear, each drawn uniformly within its bound) plus an elastic
    displacement field (at every pixel a displacement drawn uniformly in
    [-1, 1] per axis, smoothed by a Gaussian of standard deviation
    ``elastic_sigma`` and multiplied by ``elastic_alpha``). The image is
    sampled at the displaced positions by bilinear interpolation
    (:func:`scipy.ndimage.map_coordinates`; outside the image is 0, the
    background of MNIST). The defaults are [SCP2003]_'s elastic parameters
    (alpha 34, sigma 4 pixels) and small affine maps; the paper does not
    give its own.

    Parameters
    ----------
    X : array-like of shape (n_samples, height * width)
        Images, one per row, row-major pixels; the background must be 0.
    n_copies : int, default=1
        Deformed copies of each image.
    image_shape : tuple of 2 ints, default=None
        Height and width; None means square images.
    max_rotation : float, default=10.0
        Largest rotation, in degrees.
    max_scale : float, default=0.1
        Largest relative change of size (0.1: from 90% to 110%).
    max_shear : float, default=0.15
        Largest shear factor, at most 1 (45 degrees).
    elastic_alpha : float, default=34.0
        Scale of the elastic displacements, in pixels, at most 10 times the
        larger side of the images; 0 turns them off.
    elastic_sigma : float, default=4.0
        Smoothness of the elastic displacements: the Gaussian's standard
        deviation, in pixels, in (0, larger side of the images].
    random_state : int, RandomState instance or None, default=None
        The random maps.

    Returns
    -------
    X_deformed : ndarray of shape (n_copies * n_samples, height * width), float32
        Copy ``c`` of image ``i`` is row ``c * n_samples + i``: its labels
        are ``np.tile(y, n_copies)``. Pixel values stay within the range
        of ``X`` and 0.

    Raises
    ------
    TypeError
        If ``X`` is sparse or does not hold real numbers, or a parameter has
        a wrong type.
    ValueError
        If ``X`` is empty, not 2-D, holds NaN or infinity, does not match
        ``image_shape``, a parameter is out of range, or the copies do not
        fit in memory.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.
    .. [SCP2003] P. Y. Simard, D. Steinkraus, J. C. Platt, "Best practices for
       convolutional neural networks applied to visual document analysis",
       ICDAR 2003.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.datasets import deform_images
    >>> X = np.zeros((2, 784), dtype=np.float32)
    >>> X[:, 300:320] = 1.0
    >>> deform_images(X, n_copies=3, random_state=0).shape
    (6, 784)
    """
    X = _check_X(X)
    shape = resolve_image_shape(X.shape[1], image_shape)
    n_copies = check_int(n_copies, "n_copies", low=1)
    # beyond the image's size the maps move the digits out of it (or, for
    # the smoothing, make the field a plain translation)
    side = max(shape)
    params = (check_real(max_rotation, "max_rotation", low=0, high=180),
              check_real(max_scale, "max_scale", low=0, high=1, include_high=False),
              check_real(max_shear, "max_shear", low=0, high=1),
              check_real(elastic_alpha, "elastic_alpha", low=0, high=10 * side),
              check_real(elastic_sigma, "elastic_sigma", low=0, high=side,
                         include_low=False))
    rng = check_random_state(random_state)
    images = X.reshape(-1, *shape)
    n = images.shape[0]
    try:
        out = np.empty((n_copies * n, X.shape[1]), dtype=np.float32)
    except (MemoryError, ValueError):
        raise ValueError(f"n_copies={n_copies} copies of {n} images of {X.shape[1]} "
                         f"pixels do not fit in memory ({4.0 * n_copies * X.size:.3g} "
                         "bytes of float32)") from None
    for c in range(n_copies):
        for s in range(0, n, _CHUNK):
            block = images[s:s + _CHUNK]
            rows = slice(c * n + s, c * n + s + block.shape[0])
            out[rows] = _warp(block, rng, params).reshape(block.shape[0], -1)
    return out
