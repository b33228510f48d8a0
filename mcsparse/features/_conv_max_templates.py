"""Templates and masks of the convolution-max features ([SWS2011], §7.4).

Templates are k-means centres of normalised image patches
(:func:`learn_templates`); masks are Gaussians centred on a square grid over
the response map, given as row and column factors (:func:`gaussian_masks`,
:func:`masks_from_factors`). The features themselves are computed by
:mod:`mcsparse.features._conv_max_kernels`; the candidate family is
:class:`~mcsparse.features.ConvMaxTemplates` (:mod:`mcsparse.features._conv_max`).
"""

import math

import numpy as np
from sklearn.cluster import MiniBatchKMeans
from sklearn.utils import check_random_state

from ..utils.validation import check_float32_array, check_image_shape, check_int


def _check_images(images, name="images", shape="(n_images, height, width)", centre=False):
    """``images`` as a float32 C-ordered (n, h, w) array of finite values.

    ``centre``: each image minus its mean, computed in float64 before the
    cast, so that a large offset (which the NCC ignores) costs no float32
    precision.
    """
    checked = check_float32_array(images, name, 3, shape)
    if not centre or checked.size == 0 or np.asarray(images).dtype == np.float32:
        return checked
    values = np.asarray(images, dtype=np.float64)
    values = values - values.mean(axis=(1, 2), keepdims=True)
    with np.errstate(over="ignore"):
        centred = np.ascontiguousarray(values, dtype=np.float32)
    if not np.isfinite(centred).all():
        raise ValueError(
            f"{name} minus their means leave float32's range (3.4e38): rescale them"
        )
    return centred


def _as_factors(values, name):
    """A float32 C-ordered 2-D array of finite, non-negative mask factors."""
    values = check_float32_array(values, name, 2, "(n_factors, n_positions)")
    if (values < 0).any():
        raise ValueError(f"{name} must be non-negative (mask weights)")
    return values


def masks_from_factors(mask_rows, mask_cols):
    """Build the full masks ``g_c = u_a v_b^T``, ``c = a * n_v + b``.

    Parameters
    ----------
    mask_rows : ndarray of shape (n_u, out_h)
        Non-negative row factors ``u_a`` (as :func:`gaussian_masks` returns
        them); converted to float32.
    mask_cols : ndarray of shape (n_v, out_w)
        Non-negative column factors ``v_b``; converted to float32.

    Returns
    -------
    masks : ndarray of shape (n_u * n_v, out_h, out_w), float32
        ``masks[a * n_v + b]`` is the outer product of ``mask_rows[a]`` and
        ``mask_cols[b]``.

    Raises
    ------
    TypeError
        If a factor array is not real-valued.
    ValueError
        If a factor array is not 2-D, or holds NaN, infinite or negative values.
    """
    mask_rows = _as_factors(mask_rows, "mask_rows")
    mask_cols = _as_factors(mask_cols, "mask_cols")
    masks = mask_rows[:, None, :, None] * mask_cols[None, :, None, :]
    return masks.reshape(-1, mask_rows.shape[1], mask_cols.shape[1])


def gaussian_masks(shape, n_masks=16, sigma=None):
    """Gaussian spatial masks on a square grid over a response map, as factors.

    Mask ``c = a * grid + b`` is ``exp(-||p - m_c||^2 / (2 sigma^2))`` at
    position ``p`` (in pixels of the response map), peak 1 at its centre
    ``m_c``, the centre of cell ``(a, b)`` of a ``grid x grid`` grid with
    ``grid = sqrt(n_masks)`` ([SWS2011]_ §7.4: 16 masks per template). An
    isotropic Gaussian is the outer product of a row and a column Gaussian,
    ``g_c = u_a v_b^T``: the factors are returned (see
    :func:`masks_from_factors` for the full masks).

    Parameters
    ----------
    shape : tuple of 2 ints
        Height and width of the response map (valid positions).
    n_masks : int, default=16
        A perfect square.
    sigma : float, default=None
        Standard deviation in pixels; None is the grid spacing
        (``min(shape) / sqrt(n_masks)``: 5.5 pixels for 16 masks on MNIST's
        22 x 22 response map). The paper does not give its masks' width;
        this default was the best of 1.5, 2.75, 4, 5.5, 8, 11 and 16 pixels
        on a held-out part of the MNIST *training* set (ShareBoost on 10,000
        digits, error on 10,000 others, after 100 rounds: 1.23% at 5.5
        against 1.29% at 8, 1.41% at 4, 1.56% at 2.75).

    Returns
    -------
    mask_rows : ndarray of shape (grid, height), float32
        Row factors ``u_a``.
    mask_cols : ndarray of shape (grid, width), float32
        Column factors ``v_b``.

    Raises
    ------
    TypeError
        If ``n_masks`` or ``shape`` are not ints, or ``sigma`` is not a number.
    ValueError
        If ``n_masks`` is not a positive perfect square, ``shape`` is not two
        positive ints, or ``sigma`` is not positive with a finite, non-zero
        square, or is so small that a mask stays below 1e-3 everywhere.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.
    """
    n_masks = check_int(n_masks, "n_masks", low=1)
    if math.isqrt(n_masks) ** 2 != n_masks:
        raise ValueError(f"n_masks must be a positive perfect square, got {n_masks}")
    height, width = check_image_shape("shape", shape)
    grid = math.isqrt(n_masks)
    if sigma is None:
        sigma = min(height, width) / grid
    if isinstance(sigma, (bool, np.bool_)) or not isinstance(sigma, (int, float, np.number)):
        raise TypeError(f"sigma must be a real number, got {sigma!r}")
    with np.errstate(over="ignore", under="ignore"):
        variance = np.float64(sigma) ** 2
    if not (np.isfinite(variance) and variance > 0 and sigma > 0):
        raise ValueError(
            f"sigma must be positive and its square a finite positive float, got {sigma!r}"
        )

    def factors(size):
        centres = (np.arange(grid) + 0.5) * size / grid - 0.5
        d2 = (np.arange(size)[None, :] - centres[:, None]) ** 2
        with np.errstate(under="ignore"):
            values = np.exp(-d2 / (2.0 * variance)).astype(np.float32)
        if not (values.max(axis=1) >= 1e-3).all():
            raise ValueError(
                f"sigma={sigma!r} is too small for a {size}-pixel response map "
                f"with {grid} masks per side: a mask would be (nearly) zero at "
                "every position"
            )
        return values

    return factors(height), factors(width)


def _normalise_patches(patches):
    """Zero mean and unit l2 norm per row (rows of norm ~0 stay zero)."""
    patches = patches - patches.mean(axis=1, keepdims=True)
    norms = np.linalg.norm(patches, axis=1, keepdims=True)
    return patches / np.maximum(norms, 1e-12), norms.ravel()


def learn_templates(images, n_templates=1000, patch_size=7, n_patches=100_000,
                    random_state=None):
    """Templates: k-means centres of normalised image patches ([SWS2011]_ §7.4).

    ``2 * n_patches`` patches are drawn at random positions of random
    images; low-contrast ones (the centred patch's l2 norm below 10% of the
    99th percentile, e.g. the blank background of digits) are dropped, the
    first ``n_patches`` of the rest are normalised to zero mean and unit l2
    norm, and scikit-learn's :class:`~sklearn.cluster.MiniBatchKMeans` finds
    ``n_templates`` centres, again normalised to zero mean and unit norm. A
    template's response is then a local contrast-invariant match (0 on a
    flat region).

    Parameters
    ----------
    images : array-like of shape (n_images, height, width)
        Training images.
    n_templates : int, default=1000
        Number of k-means centres.
    patch_size : int, default=7
        Side of the square templates, from 2 to ``min(height, width)``.
    n_patches : int, default=100_000
        Patches given to k-means (at least ``n_templates``).
    random_state : int, RandomState instance or None, default=None
        Patch sampling and k-means.

    Returns
    -------
    templates : ndarray of shape (n_templates, patch_size, patch_size), float32
        The k-means centres, each with zero mean and unit l2 norm.

    Raises
    ------
    TypeError
        If a size is not an int.
    ValueError
        If a size is not positive, ``patch_size`` is below 2 or larger than
        the images, or fewer than ``n_templates`` patches have contrast.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.
    """
    images = _check_images(images)
    n_templates = check_int(n_templates, "n_templates", low=1)
    n_patches = check_int(n_patches, "n_patches", low=1)
    # a 1 x 1 patch minus its mean is zero: no template could have contrast
    patch_size = check_int(patch_size, "patch_size", low=2)
    n, h, w = images.shape
    if n == 0:
        raise ValueError("images is empty: no patches to learn templates from")
    if patch_size > min(h, w):
        raise ValueError(f"patch_size={patch_size} is larger than the images ({h} x {w})")
    rng = check_random_state(random_state)
    positions = _patch_positions(images.shape, patch_size, n_patches, rng)
    patches = _extract_patches(images, *positions, patch_size)
    return _templates_from_patches(patches, n_templates, n_patches, rng)


def _patch_positions(shape, patch_size, n_patches, rng):
    """``(image, row, column)`` of the ``2 * n_patches`` patches to draw, by ``rng``."""
    n, h, w = shape
    n_draw = 2 * n_patches
    idx = rng.randint(n, size=n_draw)
    r = rng.randint(h - patch_size + 1, size=n_draw)
    s = rng.randint(w - patch_size + 1, size=n_draw)
    return idx, r, s


def _extract_patches(images, idx, r, s, patch_size):
    """The patches at ``(idx, r, s)`` of ``images``, one per row, float64."""
    offs = np.arange(patch_size)
    patches = images[idx[:, None, None], r[:, None, None] + offs[None, :, None],
                     s[:, None, None] + offs[None, None, :]]
    return patches.reshape(idx.size, -1).astype(np.float64)


def _templates_from_patches(patches, n_templates, n_patches, rng):
    """Drop low-contrast patches, normalise, k-means: the templates of :func:`learn_templates`."""
    patch_size = math.isqrt(patches.shape[1])
    patches, norms = _normalise_patches(patches)
    keep = norms > 0.1 * np.percentile(norms, 99)
    patches = patches[keep][:n_patches]
    if patches.shape[0] < n_templates:
        raise ValueError(
            f"only {patches.shape[0]} patches with contrast for n_templates="
            f"{n_templates}: use more images, more n_patches or fewer templates"
        )
    kmeans = MiniBatchKMeans(n_clusters=n_templates, batch_size=4096, n_init=3,
                             random_state=rng).fit(patches)
    centres, _ = _normalise_patches(kmeans.cluster_centers_)
    return centres.reshape(n_templates, patch_size, patch_size).astype(np.float32)


def _chunk_patches(X, where, image_shape, patch_size):
    """The patches ``where = (image, row, column)`` of a chunk of images (rows of ``X``)."""
    return _extract_patches(X.reshape(X.shape[0], *image_shape), *where, patch_size)
