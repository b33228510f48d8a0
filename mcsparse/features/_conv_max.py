"""Convolution-max template features ([SWS2011], §7.4): the MNIST features.

A candidate is a pair (template ``w_f``, spatial mask ``g_c``): the feature
of an image ``I`` is ``x_fc = max_p (I correlated with w_f)(p) * g_c(p)``,
the largest response of the template over the valid positions ``p``,
weighted by a Gaussian mask that prefers one region of the image. Templates
are k-means centres of image patches; masks are Gaussians centred on a grid
over the response map.
"""

import math

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import TransformerMixin
from sklearn.cluster import MiniBatchKMeans
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..utils.validation import (check_float32_array, check_image_shape, check_int,
                                check_n_jobs, check_real, resolve_image_shape)
from ._base import CandidateFeatures
from ._chunk_scan import ChunkScan
from ._conv_max_fast import conv_max_chunk, conv_max_pairs_chunk
from ._quantized import BLOCK_ROWS, QuantizedMatrix
from ._raw import RawFeatures, _dense_columns, _pick_columns, _raw_products


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


def _check_template_shapes(images, templates, mask_rows, mask_cols):
    """Templates that fit in the images; one mask factor per valid row / column.

    The arrays have already been checked for their number of dimensions.
    """
    n, h, w = images.shape
    _, ph, pw = templates.shape
    if ph < 1 or pw < 1:
        raise ValueError(f"templates must be at least 1 x 1, got {ph} x {pw}")
    if ph > h or pw > w:
        raise ValueError(
            f"templates of {ph} x {pw} are larger than the images ({h} x {w})"
        )
    for name, factors, size, axis in (("mask_rows", mask_rows, h - ph + 1, "row"),
                                      ("mask_cols", mask_cols, w - pw + 1, "column")):
        if factors.shape[1] != size:
            raise ValueError(
                f"{name} must have shape (n, {size}): one weight per valid {axis} "
                f"of the response map ({h} x {w} images, {ph} x {pw} templates), "
                f"got {factors.shape}"
            )


def _as_factors(values, name):
    """A float32 C-ordered 2-D array of finite, non-negative mask factors."""
    values = check_float32_array(values, name, 2, "(n_factors, n_positions)")
    if (values < 0).any():
        raise ValueError(f"{name} must be non-negative (mask weights)")
    return values


RESPONSES = ("correlation", "ncc")


PREDICTIONS = ("pruned", "dense")
TRAINING_STORES = ("float32", "uint8")


def _check_prediction(prediction):
    """``prediction`` of :class:`ConvMaxTemplates`, one of :data:`PREDICTIONS`."""
    if not isinstance(prediction, str) or prediction not in PREDICTIONS:
        raise ValueError(f"prediction must be one of {PREDICTIONS}, got {prediction!r}")
    return prediction


def _check_training_store(store):
    """``training_store`` of :class:`ConvMaxTemplates`, one of :data:`TRAINING_STORES`."""
    if not isinstance(store, str) or store not in TRAINING_STORES:
        raise ValueError(f"training_store must be one of {TRAINING_STORES}, got {store!r}")
    return store


def _check_response(response, damping):
    """The kernel's ``damping`` argument: -1 for the plain correlation."""
    if not isinstance(response, str) or response not in RESPONSES:
        raise ValueError(f"response must be one of {RESPONSES}, got {response!r}")
    damping = check_real(damping, "damping", low=0.0)
    return damping if response == "ncc" else -1.0


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


def _check_response_range(images, templates, mask_rows, mask_cols, kernel_damping):
    """Refuse inputs whose responses or masked products could overflow float32.

    ``|response| <= max|image| * max_f ||w_f||_1`` (a normalised patch has
    norm at most 1, which bounds its "image" by 1), and the kernels multiply
    it by ``v``, then by ``u``, in float32: inf, or inf * 0 = NaN under a
    zero mask, must not appear.
    """
    if images.size and templates.size and mask_rows.size and mask_cols.size:
        bound = ((1.0 if kernel_damping >= 0 else float(np.abs(images).max()))
                 * float(np.abs(templates).sum(axis=(1, 2)).max())
                 * max(float(mask_rows.max()), 1.0) * max(float(mask_cols.max()), 1.0))
        if not bound < 1e37:
            raise ValueError(
                f"images and templates are too large: responses may reach {bound:.3g}, "
                "above the 1e37 that keeps the masked products within float32's "
                "range (3.4e38); rescale the images (e.g. to [0, 1])"
            )


def _checked_inputs(images, templates, mask_rows, mask_cols, response, damping):
    """The kernels' float32 arrays and damping, or the error naming what is wrong.

    Returns ``(images, templates, mask_rows, mask_cols, kernel_damping)``;
    ``kernel_damping`` is -1 for the plain correlation.
    """
    kernel_damping = _check_response(response, damping)
    images = _check_images(images, centre=kernel_damping >= 0)
    templates = _check_images(templates, "templates", "(n_templates, patch_h, patch_w)")
    mask_rows = _as_factors(mask_rows, "mask_rows")
    mask_cols = _as_factors(mask_cols, "mask_cols")
    _check_template_shapes(images, templates, mask_rows, mask_cols)
    _check_response_range(images, templates, mask_rows, mask_cols, kernel_damping)
    return images, templates, mask_rows, mask_cols, kernel_damping


def _run_chunks(run, starts, n_jobs):
    """``run(s)`` for every chunk start, on ``n_jobs`` threads, BLAS single-threaded."""
    n_jobs = min(effective_n_jobs(n_jobs), max(len(starts), 1))
    with threadpool_limits(limits=1, user_api="blas"):
        if n_jobs == 1:
            for s in starts:
                run(s)
        else:
            Parallel(n_jobs=n_jobs, prefer="threads")(delayed(run)(s) for s in starts)


def conv_max_features(images, templates, mask_rows, mask_cols, *, response="correlation",
                      damping=0.25, n_jobs=None, chunk_size=64):
    """Convolution-max features of images for every (template, mask) pair.

    ``out[i, f * n_masks + c] = max_{r,s} (images[i] correlated with
    templates[f])(r, s) * g_c(r, s)`` over the valid positions ``(r, s)``
    (the template entirely inside the image), [SWS2011]_ §7.4. With
    ``response="ncc"`` the correlation is the damped normalised
    cross-correlation: the image patch ``p`` at each position is centred and
    divided by ``sqrt(||p - mean(p)||^2 + damping)`` before its product with
    the template, so that faint strokes answer as strongly as bold ones and
    a blank or constant patch answers 0 (images that are not float32 are
    first centred in float64, which the NCC does not see, so that a large
    offset costs no float32 precision). The masks are
    separable, ``g_c = u_a v_b^T`` with ``c = a * n_v + b`` (Gaussians on a
    grid, :func:`gaussian_masks`), which makes the masked max two cheap
    passes, exact for non-negative factors: ``max_r u_a(r) max_s resp(r, s)
    v_b(s)``. Computed in float32 by a Cython kernel (im2col and BLAS sgemm
    fused with the masked max), chunk by chunk of images with the GIL
    released.

    Parameters
    ----------
    images : array-like of shape (n_images, height, width)
        Real-valued images; converted to float32.
    templates : array-like of shape (n_templates, patch_h, patch_w)
        Templates, at most as large as the images; converted to float32.
    mask_rows : array-like of shape (n_u, height - patch_h + 1)
        Non-negative row factors ``u_a`` of the masks.
    mask_cols : array-like of shape (n_v, width - patch_w + 1)
        Non-negative column factors ``v_b`` of the masks.
    response : {"correlation", "ncc"}, default="correlation"
        The plain correlation of [SWS2011]_, or the damped normalised
        cross-correlation.
    damping : float, default=0.25
        Non-negative ``damping`` of the "ncc" response, in squared pixel
        units (0.25 for pixels in [0, 1]: a patch whose centred norm is
        well below 0.5 answers weakly); ignored by "correlation".
    n_jobs : int, default=None
        Threads computing chunks side by side (joblib convention: None is 1,
        -1 all cores). BLAS runs single-threaded inside.
    chunk_size : int, default=64
        Images per task.

    Returns
    -------
    features : ndarray of shape (n_images, n_templates * n_u * n_v), float32
        Column ``f * n_u * n_v + a * n_v + b`` is template ``f`` with mask
        ``u_a v_b^T``.

    Raises
    ------
    TypeError
        If an array is not real-valued.
    ValueError
        If an array has the wrong number of dimensions, the templates are
        larger than the images, the mask factors do not match the valid
        positions or are negative, a value is NaN or infinite, ``response``
        is unknown or ``damping`` negative or not finite.

    See Also
    --------
    conv_max_features_numpy : The plain-NumPy reference (direct masked max).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.
    """
    images, templates, mask_rows, mask_cols, kernel_damping = _checked_inputs(
        images, templates, mask_rows, mask_cols, response, damping)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    check_n_jobs(n_jobs)
    n = images.shape[0]
    n_templates, ph, pw = templates.shape
    flat_templates = templates.reshape(n_templates, ph * pw)
    n_masks = mask_rows.shape[0] * mask_cols.shape[0]
    out = np.empty((n, n_templates * n_masks), dtype=np.float32)
    starts = range(0, n, chunk_size)

    def run(s):
        conv_max_chunk(images[s:s + chunk_size], flat_templates, ph, pw,
                       mask_rows, mask_cols, out[s:s + chunk_size], kernel_damping)

    _run_chunks(run, starts, n_jobs)
    return out


def conv_max_features_numpy(images, templates, mask_rows, mask_cols, *,
                            response="correlation", damping=0.25):
    """Plain-NumPy twin of :func:`conv_max_features` (tests, benchmarks).

    Same arguments (no checks) and result, computed in float64 with the
    direct masked max over the full masks (:func:`masks_from_factors`):
    ``sliding_window_view`` windows (centred and scaled per window for
    ``response="ncc"``), ``tensordot``, then a cast to float32.
    Memory grows as n_images * n_positions * n_templates: small inputs only.

    Parameters
    ----------
    images : array-like of shape (n_images, height, width)
        Real-valued images.
    templates : array-like of shape (n_templates, patch_h, patch_w)
        Templates, at most as large as the images.
    mask_rows : array-like of shape (n_u, height - patch_h + 1)
        Non-negative row factors ``u_a`` of the masks.
    mask_cols : array-like of shape (n_v, width - patch_w + 1)
        Non-negative column factors ``v_b`` of the masks.
    response : {"correlation", "ncc"}, default="correlation"
        As in :func:`conv_max_features`.
    damping : float, default=0.25
        As in :func:`conv_max_features`.

    Returns
    -------
    features : ndarray of shape (n_images, n_templates * n_u * n_v), float32
        Column ``f * n_u * n_v + a * n_v + b`` is template ``f`` with mask
        ``u_a v_b^T``, as in :func:`conv_max_features`.
    """
    images = np.asarray(images, dtype=np.float64)
    templates = np.asarray(templates, dtype=np.float64)
    masks = masks_from_factors(mask_rows, mask_cols).astype(np.float64)
    n_templates, ph, pw = templates.shape
    windows = np.lib.stride_tricks.sliding_window_view(images, (ph, pw), axis=(1, 2))
    if response == "ncc":  # offsets from the first pixel first: exact zeros when constant
        windows = windows - windows[..., :1, :1]
        windows = windows - windows.mean(axis=(3, 4), keepdims=True)
        sq = np.sum(windows**2, axis=(3, 4), keepdims=True) + damping
        with np.errstate(divide="ignore"):
            windows = windows * np.where(sq > 0, 1.0 / np.sqrt(sq), 0.0)
    responses = np.tensordot(windows, templates, axes=([3, 4], [1, 2]))  # (n, oh, ow, F)
    n = images.shape[0]
    responses = responses.reshape(n, 1, -1, n_templates)
    weighted = responses * masks.reshape(1, masks.shape[0], -1, 1)  # (n, C, P, F)
    best = weighted.max(axis=2)  # (n, C, F)
    return best.transpose(0, 2, 1).reshape(n, -1).astype(np.float32)


def _mask_orders(mask_rows, mask_cols):
    """Per mask, its positions by decreasing weight, and those weights in float64.

    Returns ``orders`` (intp) and ``weights`` (float64), both of shape
    ``(n_u * n_v, out_h * out_w)``: ``weights[c, k]`` is ``u_a(r) v_b(s)``
    at position ``orders[c, k] = r * out_w + s``, for mask ``c = a * n_v + b``.
    """
    u = mask_rows.astype(np.float64)
    v = mask_cols.astype(np.float64)
    weights = (u[:, None, :, None] * v[None, :, None, :]).reshape(u.shape[0] * v.shape[0], -1)
    orders = np.argsort(-weights, axis=1, kind="stable").astype(np.intp)
    return orders, np.ascontiguousarray(np.take_along_axis(weights, orders, axis=1))


def _check_pair_ids(ids, n_candidates):
    """``ids`` as a 1-D intp array of candidate ids in ``[0, n_candidates)``."""
    try:
        values = np.asarray(ids)
    except ValueError:
        raise ValueError("ids must be a 1-D array of candidate ids, got ragged input") from None
    if values.dtype.kind in "OUSV" or values.dtype == bool:
        raise TypeError(f"candidate ids must be integers, got {ids!r:.60}")
    if values.ndim != 1:
        raise ValueError(f"ids must be a 1-D array of candidate ids, got {values.ndim}-D")
    return CandidateFeatures._check_ids(values, n_candidates)


def _underflow_slack(mask_rows, mask_cols):
    """An absolute margin for the stopping test, against rounding below float32's normals.

    A response, and its product with ``v``, may round by up to half the
    smallest subnormal, 2**-150, each; the second error is then multiplied
    by ``u``: ``|fl(fl(r v) u) - r v u| <= eps r v u + 2**-150 (u v + u + 1)``
    in all, which ``2**-149 (1 + max u) (1 + max v)`` covers (the relative
    part is in the bound's 1e-6 margin).
    """
    return math.ldexp(1.0, -149) * (1.0 + float(mask_rows.max(initial=0.0))) * (
        1.0 + float(mask_cols.max(initial=0.0)))


def _selected_pairs(templates, n_v, n_masks, ids):
    """The kernel's pair arrays for the distinct ``ids``, grouped by template."""
    pairs, inverse = np.unique(ids, return_inverse=True)  # sorted: grouped by template
    used, pair_template = np.unique(pairs // n_masks, return_inverse=True)
    flat = templates[used].reshape(used.size, -1).astype(np.float64)
    # the responses' bound |<w, p>| <= ||w|| ||p||, with room for the norm's round-off
    norms = np.linalg.norm(flat, axis=1) * (1.0 + 1e-12)
    masks = pairs % n_masks
    return (flat, norms, pair_template.astype(np.intp), (masks // n_v).astype(np.intp),
            (masks % n_v).astype(np.intp), inverse.ravel())


def conv_max_selected(images, templates, mask_rows, mask_cols, ids, *, response="correlation",
                      damping=0.25, n_jobs=None, chunk_size=64, return_counts=False):
    """Convolution-max features of the pairs ``ids`` only, computing only what they need.

    The columns ``ids`` of :func:`conv_max_features`, up to the float32
    rounding of the responses (computed here in float64 and rounded once,
    there by float32 BLAS). For pair ``(f, c)`` the positions are visited
    in decreasing order of the mask's weight ``g_c``; every response is
    bounded, ``|resp_f(p)| <= ||w_f|| max_p ||patch_p||`` (Cauchy-Schwarz;
    the largest patch norm is below 1 for the NCC), so the search stops as
    soon as the running maximum reaches the next weight times that bound:
    no later position can exceed it, and the result is the exact masked
    maximum. Each template's response at a position, and each image's
    patch, is computed at most once per image, when first needed. This is
    prediction as [SWS2011]_ §7.4 counts it: a template is correlated only
    where its masks can still give the maximum.

    Parameters
    ----------
    images : array-like of shape (n_images, height, width)
        Real-valued images; converted to float32.
    templates : array-like of shape (n_templates, patch_h, patch_w)
        Templates, at most as large as the images.
    mask_rows : array-like of shape (n_u, height - patch_h + 1)
        Non-negative row factors ``u_a`` of the masks.
    mask_cols : array-like of shape (n_v, width - patch_w + 1)
        Non-negative column factors ``v_b`` of the masks.
    ids : array-like of int, shape (n_ids,)
        Pairs ``f * n_u * n_v + a * n_v + b`` (repeats allowed).
    response : {"correlation", "ncc"}, default="correlation"
        As in :func:`conv_max_features`.
    damping : float, default=0.25
        As in :func:`conv_max_features`.
    n_jobs : int, default=None
        Threads computing chunks of images side by side (None is 1).
    chunk_size : int, default=64
        Images per task.
    return_counts : bool, default=False
        Also return the work done per image.

    Returns
    -------
    features : ndarray of shape (n_images, n_ids), float32
        Column ``q`` is pair ``ids[q]``.
    counts : ndarray of shape (n_images, 3), int64
        Only with ``return_counts``. Per image: template responses computed
        (``patch_h * patch_w`` multiply-accumulates each), (pair, position)
        products with the mask evaluated (two multiplies each), and patches
        read (centred and scaled for the "ncc" response).

    Raises
    ------
    TypeError
        If an array is not real-valued or ``ids`` are not integers.
    ValueError
        As :func:`conv_max_features`, or if ``ids`` is not 1-D or holds an
        id outside ``[0, n_templates * n_u * n_v)``.

    See Also
    --------
    conv_max_selected_numpy : The plain-NumPy twin (same pruning, same counts).
    conv_max_features : Every pair, by BLAS (the training matrix).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.
    """
    images, templates, mask_rows, mask_cols, kernel_damping = _checked_inputs(
        images, templates, mask_rows, mask_cols, response, damping)
    chunk_size = check_int(chunk_size, "chunk_size", low=1)
    check_n_jobs(n_jobs)
    n_v, n_masks = mask_cols.shape[0], mask_rows.shape[0] * mask_cols.shape[0]
    ids = _check_pair_ids(ids, templates.shape[0] * n_masks)
    n = images.shape[0]
    counts = np.zeros((n, 3), dtype=np.int64)
    if ids.size == 0:
        features = np.zeros((n, 0), dtype=np.float32)
        return (features, counts) if return_counts else features
    flat, norms, pair_template, pair_row, pair_col, inverse = _selected_pairs(
        templates, n_v, n_masks, ids)
    orders, weights = _mask_orders(mask_rows, mask_cols)
    slack = _underflow_slack(mask_rows, mask_cols)
    out = np.empty((n, pair_template.size), dtype=np.float32)
    starts = range(0, n, chunk_size)

    def run(s):
        conv_max_pairs_chunk(images[s:s + chunk_size], flat, norms, pair_template, pair_row,
                             pair_col, orders, weights, templates.shape[1],
                             templates.shape[2], mask_rows, mask_cols,
                             out[s:s + chunk_size], counts[s:s + chunk_size], slack,
                             kernel_damping)

    _run_chunks(run, starts, n_jobs)
    features = out[:, inverse]
    return (features, counts) if return_counts else features


def conv_max_selected_numpy(images, templates, mask_rows, mask_cols, ids, *,
                            response="correlation", damping=0.25):
    """Plain-NumPy twin of :func:`conv_max_selected` (tests): features and counts.

    Same arguments (images converted as there, no other checks). Every
    response is computed (float64 ``sliding_window_view`` windows times the
    templates, rounded once to float32); the masked products along each mask's order, their running
    maximum and the stopping rule then give the features and the work the
    kernel does. Where a response is at round-off level (its true value 0,
    say), the two sum in different orders and may differ in it, and so in
    where they stop. Small inputs only.

    Parameters
    ----------
    images : array-like of shape (n_images, height, width)
        Real-valued images.
    templates : array-like of shape (n_templates, patch_h, patch_w)
        Templates, at most as large as the images.
    mask_rows : array-like of shape (n_u, height - patch_h + 1)
        Non-negative row factors ``u_a`` of the masks.
    mask_cols : array-like of shape (n_v, width - patch_w + 1)
        Non-negative column factors ``v_b`` of the masks.
    ids : array-like of int, shape (n_ids,)
        Pairs ``f * n_u * n_v + a * n_v + b``.
    response : {"correlation", "ncc"}, default="correlation"
        As in :func:`conv_max_features`.
    damping : float, default=0.25
        As in :func:`conv_max_features`.

    Returns
    -------
    features : ndarray of shape (n_images, n_ids), float32
        Column ``q`` is pair ``ids[q]``, as :func:`conv_max_selected` gives it.
    counts : ndarray of shape (n_images, 3), int64
        The work per image, as :func:`conv_max_selected` with
        ``return_counts=True`` counts it.
    """
    # the images the kernel sees (float32; centred in float64 first for the NCC)
    images = _check_images(images, centre=response == "ncc").astype(np.float64)
    templates = np.asarray(templates, dtype=np.float32)
    mask_rows = np.asarray(mask_rows, dtype=np.float32)
    mask_cols = np.asarray(mask_cols, dtype=np.float32)
    n, n_v = images.shape[0], mask_cols.shape[0]
    n_masks = mask_rows.shape[0] * n_v
    ids = np.asarray(ids, dtype=np.intp)
    if ids.size == 0:
        return np.zeros((n, 0), dtype=np.float32), np.zeros((n, 3), dtype=np.int64)
    flat, norms, pair_template, pair_row, pair_col, inverse = _selected_pairs(
        templates, n_v, n_masks, ids)
    orders, weights = _mask_orders(mask_rows, mask_cols)
    slack = _underflow_slack(mask_rows, mask_cols)
    ph, pw = templates.shape[1:]
    windows = np.lib.stride_tricks.sliding_window_view(images, (ph, pw), axis=(1, 2))
    windows = windows.reshape(n, -1, ph * pw)  # (n, n_pos, area)
    if response == "ncc":
        windows = windows - windows[..., :1]
        windows = windows - windows.mean(axis=2, keepdims=True)
        sq = np.sum(windows**2, axis=2, keepdims=True) + damping
        with np.errstate(divide="ignore"):
            windows = windows * np.where(sq > 0, 1.0 / np.sqrt(sq), 0.0)
        patch_norm = np.ones(n)
    else:
        patch_norm = np.sqrt(np.sum(windows**2, axis=2).max(axis=1, initial=0.0))
    responses = (windows @ flat.T).astype(np.float32)  # (n, n_pos, n_used)
    out_w = mask_cols.shape[1]
    n_pos = windows.shape[1]
    out = np.empty((n, pair_template.size), dtype=np.float32)
    counts = np.zeros((n, 3), dtype=np.int64)
    visited = np.zeros((n, n_pos), dtype=bool)
    for t in range(flat.shape[0]):
        needed = np.zeros((n, n_pos), dtype=bool)
        for q in np.flatnonzero(pair_template == t):
            a, b = pair_row[q], pair_col[q]
            order = orders[a * n_v + b]
            r, s = order // out_w, order % out_w
            values = (responses[:, order, t] * mask_cols[b, s]) * mask_rows[a, r]
            running = np.maximum.accumulate(values, axis=1)
            bound = norms[t] * patch_norm * (1.0 + 1e-6)
            # stop[:, k]: the search stops after k + 1 positions (at the last one at least)
            stop = np.ones((n, n_pos), dtype=bool)
            stop[:, :-1] = (running[:, :-1]
                            >= weights[a * n_v + b, 1:] * bound[:, None] + slack)
            n_eval = stop.argmax(axis=1) + 1
            out[:, q] = running[np.arange(n), n_eval - 1]
            counts[:, 1] += n_eval
            needed[:, order] |= np.arange(n_pos) < n_eval[:, None]
        counts[:, 0] += needed.sum(axis=1)
        visited |= needed
    counts[:, 2] = visited.sum(axis=1)
    return out[:, inverse], counts


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


class ConvMaxTemplates(TransformerMixin, CandidateFeatures, ChunkScan):
    """Convolution-max template features as a ShareBoost candidate family.

    The MNIST features of [SWS2011]_ §7.4: candidate ``f * n_masks + c`` is
    the pair (template ``f``, mask ``c``) with value ``max_p (I correlated
    with w_f)(p) * g_c(p)`` on image ``I`` (:func:`conv_max_features`).
    ``fit`` learns the templates (:func:`learn_templates`), builds the
    Gaussian masks (:func:`gaussian_masks`) and computes the whole float32
    training matrix once (60000 x 16000 floats, 3.84 GB, for MNIST; a
    quarter of that as 8-bit codes with ``training_store="uint8"``); each
    ShareBoost round then scores all candidates with one product ``Phi^T R``
    (as :class:`RawFeatures`). After the fit only the selected pairs are
    computed on new images, and only their templates are correlated.

    Scale the images to a fixed range such as [0, 1] (MNIST's pixels / 255):
    the features grow with the pixel values, and the penalty ``alpha`` of
    ShareBoost is relative to them.

    Parameters
    ----------
    image_shape : tuple of 2 ints, default=None
        Height and width of the images, whose pixels are the rows of ``X`` in
        row-major order; None means square images.
    n_templates : int, default=1000
        Number of templates (k-means centres).
    patch_size : int, default=7
        Side of the square templates, in pixels.
    n_masks : int, default=16
        Spatial masks per template, a perfect square (a 4 x 4 grid).
    mask_sigma : float, default=None
        Standard deviation of the Gaussian masks in pixels of the response
        map; None is the grid spacing (see :func:`gaussian_masks`).
    response : {"correlation", "ncc"}, default="correlation"
        The response map: the plain correlation of [SWS2011]_, or the damped
        normalised cross-correlation, each image patch centred and divided
        by ``sqrt(||p - mean(p)||^2 + damping)`` (see
        :func:`conv_max_features`), which makes faint strokes answer like
        bold ones.
    damping : float, default=0.25
        Non-negative damping of the "ncc" response, in squared pixel units
        (0.25 suits pixels in [0, 1]); ignored by "correlation".
    n_patches : int, default=100_000
        Patches sampled for k-means.
    prediction : {"pruned", "dense"}, default="pruned"
        How the selected pairs are computed on new images
        (:meth:`transform_candidates`, so ``predict``). "pruned": each
        pair's masked maximum is searched from its mask's heaviest positions
        outwards and stops once no other position can beat it
        (:func:`conv_max_selected`): the fewest multiply-accumulates, the
        count [SWS2011]_ §7.4 reports. "dense": each selected template over
        every position, one float32 BLAS product per block of templates
        (:func:`conv_max_features`): more multiply-accumulates, but BLAS
        runs them faster, so it can predict more images per second on a
        CPU (the ``asv_benchmarks`` class ``TemplatesPrediction`` measures
        both side by side). Both give the same values up to float32
        rounding.
    training_store : {"float32", "uint8"}, default="float32"
        How ``fit`` keeps the training matrix that each round scans.
        "float32": as it is (60000 x 16000 floats, 3.84 GB, for MNIST).
        "uint8": as 8-bit codes, a quarter of that memory (5.8 GB for the
        360,000 deformed digits of §7.4 instead of 23 GB), computed and
        coded block by block of 1024 images, each block's columns with
        their own offset and step (the column's range over the block /
        255). The scan then scores the candidates from the codes, each
        value within half a step of its float32 value, so that a near tie
        between two candidates may be broken differently; the selected
        pairs' columns, which the refit uses, are computed exactly from the
        training images (by the pruned search); the family keeps them
        until :meth:`end_scan`, as a reference to ``X`` when it is float32
        and C-ordered (not a copy: do not change ``X`` during the scan).
    n_jobs : int, default=None
        Threads computing the features (joblib convention).
    random_state : int, RandomState instance or None, default=None
        Patch sampling and k-means.

    Attributes
    ----------
    templates_ : ndarray of shape (n_templates, patch_size, patch_size), float32
        Zero-mean, unit-norm templates.
    masks_ : ndarray of shape (n_masks, out_h, out_w), float32
        The masks over the ``out_h = height - patch_size + 1`` by
        ``out_w = width - patch_size + 1`` valid positions.
    mask_rows_ : ndarray of shape (sqrt(n_masks), out_h), float32
        Their row factors (see :func:`gaussian_masks`).
    mask_cols_ : ndarray of shape (sqrt(n_masks), out_w), float32
        Their column factors.
    image_shape_ : tuple of 2 ints
        Height and width of the images.
    n_features_in_ : int
        Number of pixels.
    n_candidates_ : int
        ``n_templates * n_masks``.
    support_ : ndarray of shape (height * width,), bool
        After :meth:`end_scan`: the pixels the selected templates can read
        (all of them: a template slides over the whole image).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse import ShareBoostClassifier
    >>> from mcsparse.features import ConvMaxTemplates
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 100)  # 60 images of 10 x 10 pixels
    >>> y = np.arange(60) % 3
    >>> family = ConvMaxTemplates(n_templates=8, patch_size=3, n_masks=4,
    ...                           n_patches=500, random_state=0)
    >>> clf = ShareBoostClassifier(features=family, n_features_to_select=5)
    >>> clf.fit(X, y).selected_features_.shape
    (5,)
    """

    def __init__(self, image_shape=None, n_templates=1000, patch_size=7, n_masks=16,
                 mask_sigma=None, response="correlation", damping=0.25, n_patches=100_000,
                 prediction="pruned", training_store="float32", n_jobs=None,
                 random_state=None):
        self.image_shape = image_shape
        self.n_templates = n_templates
        self.patch_size = patch_size
        self.n_masks = n_masks
        self.mask_sigma = mask_sigma
        self.response = response
        self.damping = damping
        self.n_patches = n_patches
        self.prediction = prediction
        self.training_store = training_store
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _images(self, X, shape):
        return X.reshape(X.shape[0], *shape)

    def fit(self, X, y=None):
        """Learn the templates and masks, and compute the training matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Training images, one per row (row-major pixels).
        y : None
            Ignored.

        Returns
        -------
        self : ConvMaxTemplates
            The fitted family, ready to scan.

        Raises
        ------
        ValueError
            If ``X`` is not a stack of images of ``image_shape`` (or square),
            the templates do not fit in the images, or a parameter is invalid.
        """
        X = validate_data(self, X, dtype=(np.float32, np.float64))
        self._set_masks(X.shape[1])
        images = self._images(X, self.image_shape_)
        self.templates_ = learn_templates(
            images, self.n_templates, self.patch_size, self.n_patches, self.random_state)
        self.n_candidates_ = self.templates_.shape[0] * self.masks_.shape[0]
        if self.training_store == "uint8":
            self._scan = None
            self._images_fit = np.ascontiguousarray(images, dtype=np.float32)
            self._X_fit = self._quantized_features(self._images_fit)
        else:
            self._scan, self._images_fit = RawFeatures().fit(self._chunk_features(X)), None
            self._X_fit = self._scan._X_fit
        return self

    def _quantized_features(self, images):
        """The training matrix as 8-bit codes, computed one block of images at a time."""
        codes = QuantizedMatrix(images.shape[0], self.n_candidates_, n_jobs=self.n_jobs)
        for s in range(0, images.shape[0], BLOCK_ROWS):
            codes.set_block(s, conv_max_features(
                images[s:s + BLOCK_ROWS], self.templates_, self.mask_rows_,
                self.mask_cols_, **self._kernel_kwargs()))
        return codes

    def _set_masks(self, n_pixels):
        """Check the shapes and the response, set ``image_shape_`` and the masks."""
        _check_response(self.response, self.damping)
        _check_prediction(self.prediction)
        _check_training_store(self.training_store)
        self.image_shape_ = resolve_image_shape(n_pixels, self.image_shape)
        check_int(self.patch_size, "patch_size", low=2)
        if self.patch_size > min(self.image_shape_):
            raise ValueError(
                f"patch_size={self.patch_size} is larger than the images "
                f"({self.image_shape_[0]} x {self.image_shape_[1]})"
            )
        out_shape = tuple(v - self.patch_size + 1 for v in self.image_shape_)
        self.mask_rows_, self.mask_cols_ = gaussian_masks(
            out_shape, self.n_masks, self.mask_sigma)
        self.masks_ = masks_from_factors(self.mask_rows_, self.mask_cols_)

    def _fit_chunks(self, chunks):
        """Fit on a dask array's row chunks (:mod:`mcsparse.features._dask`).

        The patch positions are drawn here as :func:`learn_templates` draws
        them, each chunk cuts out its images' patches, and k-means runs here
        on the gathered patches: the templates of an in-memory fit on the
        same images. The candidate matrix is then computed per chunk on the
        workers (:meth:`_chunk_features`) and never exists in one place.
        """
        self.n_features_in_ = chunks.n_features
        self._set_masks(chunks.n_features)
        if self.training_store != "float32":
            raise ValueError(
                f"training_store={self.training_store!r} is for in-memory fits; on a "
                "dask array the chunks' candidate matrices stay on the workers as "
                "float32: use training_store='float32'")
        n_templates = check_int(self.n_templates, "n_templates", low=1)
        n_patches = check_int(self.n_patches, "n_patches", low=1)
        rng = check_random_state(self.random_state)
        idx, r, s = _patch_positions((chunks.n_samples, *self.image_shape_),
                                     self.patch_size, n_patches, rng)
        order, parts = [], []
        for i in range(len(chunks.sizes)):
            rows = chunks.rows(i)
            mine = np.flatnonzero((idx >= rows.start) & (idx < rows.stop))
            order.append(mine)
            parts.append((idx[mine] - rows.start, r[mine], s[mine]))
        patches = np.empty((idx.size, self.patch_size**2))
        gathered = chunks.gather_list(chunks.map(_chunk_patches, per_chunk=(parts,),
                                                 shared=(self.image_shape_, self.patch_size)))
        for mine, values in zip(order, gathered):
            patches[mine] = values
        self.templates_ = _templates_from_patches(patches, n_templates, n_patches, rng)
        self.n_candidates_ = self.templates_.shape[0] * self.masks_.shape[0]
        self._scan = self._X_fit = None  # the candidate matrix stays on the workers
        return self

    #: The chunks are replaced on the workers by their candidate matrices.
    _replaces_chunks = True

    def _chunk_features(self, X):
        """The candidate matrix of a row chunk of images: (n_rows, n_candidates), float32."""
        images = self._images(X, self.image_shape_)
        return conv_max_features(images, self.templates_, self.mask_rows_,
                                 self.mask_cols_, **self._kernel_kwargs())

    def _kernel_kwargs(self):
        """The keyword arguments of every :func:`conv_max_features` call of the family."""
        return {"response": self.response, "damping": self.damping, "n_jobs": self.n_jobs}

    def _chunk_scanner(self):
        """What a round's chunk tasks are sent: the raw columns of the candidate matrix.

        The chunks hold the template responses (:meth:`_chunk_features`), so
        a task needs no templates, and a fitted family with them (0.2 MB for
        1000 templates) would travel with each task of every round.
        """
        scan = RawFeatures()
        scan.n_features_in_, scan._X_fit = self.n_candidates_, None
        return scan._set_groups(self.n_candidates_)

    def _chunk_products(self, features, residual):
        """A chunk's part of ``Phi^T R``, from its candidate matrix (:meth:`_chunk_features`)."""
        return _raw_products(features, residual)

    def _pick(self, products, excluded):
        """``(id, score)`` of the best pair from the summed ``Phi^T R``."""
        return _pick_columns(products, excluded, None, self.n_candidates_)

    def _chunk_columns(self, features, ids):
        """The pairs ``ids`` on a chunk, from its candidate matrix."""
        return _dense_columns(features, ids)

    def fit_transform(self, X, y=None):
        """Fit, and return the training matrix (the scan's, not copied, with "float32").

        With ``training_store="uint8"`` the scan keeps codes, so the float32
        matrix is computed again (:meth:`transform`).

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Training images, one per row.
        y : None
            Ignored.

        Returns
        -------
        features : ndarray of shape (n_samples, n_templates * n_masks), float32
            Column ``f * n_masks + c`` is template ``f`` with mask ``c``.
        """
        self.fit(X)
        if self.training_store == "uint8":
            return self.transform(X)
        return self._X_fit

    def _new_images(self, X):
        """Validate new data against the fit; return it as (n, height, width)."""
        check_is_fitted(self, "templates_")
        X = validate_data(self, X, dtype=(np.float32, np.float64), reset=False)
        return self._images(X, self.image_shape_)

    def best_candidate(self, residual, excluded):
        """The pair with the largest ``||R^T x_c||_1`` outside ``excluded``.

        One float32 product with the training matrix (see
        :meth:`RawFeatures.best_candidate`).

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows of the training samples.
        excluded : ndarray of shape (n_excluded,), intp
            Candidates that must not be returned.

        Returns
        -------
        id : int
            The chosen (template, mask) pair ``f * n_masks + c``.
        score : float
            Its score.

        Raises
        ------
        ValueError
            If every candidate is excluded.
        """
        self._check_scanning()
        if self._scan is not None:
            return self._scan.best_candidate(residual, excluded)
        excluded = self._check_excluded(excluded, self.n_candidates_)
        residual = self._check_residual(residual, self._X_fit.shape[0])
        return self._pick(self._X_fit.rmatmul(residual), excluded)

    def _candidate_name(self, j, input_names):
        t, m = divmod(j, self.masks_.shape[0])
        return f"template {t}, mask {m}"

    def training_columns(self, ids):
        """The pairs ``ids`` on the training images.

        Parameters
        ----------
        ids : array-like of int
            Candidate ids ``f * n_masks + c``.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            The features of the training images, as computed in ``fit``
            (with ``training_store="uint8"``: computed now, exactly).
        """
        self._check_scanning()
        if self._scan is not None:
            return self._scan.training_columns(ids)
        ids = self._check_ids(ids, self.n_candidates_)
        # large tasks: a round computes a few columns over all training images
        return conv_max_selected(self._images_fit, self.templates_, self.mask_rows_,
                                 self.mask_cols_, ids, chunk_size=BLOCK_ROWS,
                                 **self._kernel_kwargs()).astype(np.float64)

    def end_scan(self, ids):
        """Free the training matrix; ``support_`` marks every pixel.

        Parameters
        ----------
        ids : array-like of int
            The selected candidates (only checked: the templates are kept
            whole, and every feature reads all pixels).

        Returns
        -------
        self : ConvMaxTemplates
            The family, which can no longer select.
        """
        check_is_fitted(self)
        self._check_ids(ids, self.n_candidates_)
        self.support_ = np.ones(self.n_features_in_, dtype=bool)
        self._scan = self._X_fit = self._images_fit = None
        return self

    def transform_candidates(self, X, ids):
        """The pairs ``ids`` on new images; only their templates are correlated.

        With ``prediction="pruned"`` each pair's masked maximum is searched
        from its mask's heaviest positions outwards and stops once no other
        position can beat it (:func:`conv_max_selected`); with "dense" the
        selected templates are correlated at every position
        (:func:`conv_max_features`). Either gives :meth:`transform`'s
        columns ``ids`` up to float32 rounding; :meth:`macs_per_image`
        counts the work.

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Images, one per row.
        ids : array-like of int
            Candidate ids ``f * n_masks + c``.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            The features of the new images, in the order of ``ids``.

        Raises
        ------
        ValueError
            If ``X`` does not match the fit, an id is out of range, or
            ``prediction`` is unknown.
        """
        images = self._new_images(X)
        ids = self._check_ids(ids, self.n_candidates_)
        if _check_prediction(self.prediction) == "pruned":
            return conv_max_selected(images, self.templates_, self.mask_rows_,
                                     self.mask_cols_, ids,
                                     **self._kernel_kwargs()).astype(np.float64)
        n_masks = self.masks_.shape[0]
        used, where = np.unique(ids // n_masks, return_inverse=True)
        values = conv_max_features(images, self.templates_[used], self.mask_rows_,
                                   self.mask_cols_, **self._kernel_kwargs())
        return values[:, where * n_masks + ids % n_masks].astype(np.float64)

    def transform(self, X):
        """All ``n_candidates_`` features of new images, float32.

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Images, one per row, of the shape seen in ``fit``.

        Returns
        -------
        features : ndarray of shape (n_samples, n_templates * n_masks), float32
            Column ``f * n_masks + c`` is template ``f`` with mask ``c``.
        """
        return conv_max_features(self._new_images(X), self.templates_,
                                 self.mask_rows_, self.mask_cols_, **self._kernel_kwargs())

    def macs_per_image(self, ids, n_classes=None, X=None):
        """Count the multiply-accumulates per image of computing the pairs ``ids``.

        What :meth:`transform_candidates` (so ``predict``) computes per
        image. With ``prediction="pruned"``, as :func:`conv_max_selected`
        counts it on the images ``X`` (the mean over them; without ``X``,
        the most it can compute, every pair searching every position):
        ``patch_size**2`` per template response, 2 per (pair, position)
        product with a mask, for the "ncc" response ``2 * patch_size**2``
        per patch read (its centred squared norm and its scaling), for
        "correlation" one per pixel (the squares that bound the responses).
        With "dense" (``X`` is not needed): one correlation of each distinct
        template over all ``out_h * out_w`` positions, the two passes of the
        masked max for all masks of those templates (``n_v * out_h * out_w +
        n_u * n_v * out_h`` multiplies, see :func:`conv_max_features`), and
        for "ncc" ``2 * patch_size**2`` per position. When ``n_classes`` is
        given, the ``n_classes x len(ids)`` products of the linear predictor
        are added. [SWS2011] §7.4 reports about 3.3e6 for its 305-round model.

        Parameters
        ----------
        ids : array-like of int
            Selected candidate ids.
        n_classes : int, default=None
            Rows of ``W``; None leaves out the linear predictor.
        X : array-like of shape (n_samples, height * width), default=None
            Images to count the pruned search on; None gives its upper
            bound. Ignored by "dense".

        Returns
        -------
        macs : float
            Multiply-accumulates per image.

        Raises
        ------
        TypeError
            If ``ids`` are not integers or ``n_classes`` is not an int.
        ValueError
            If an id is out of range, ``n_classes`` is below 1, ``X`` is not
            valid input for :meth:`transform_candidates` (checked by
            "pruned" only), or ``prediction`` is unknown.
        """
        check_is_fitted(self, "templates_")
        ids = self._check_ids(ids, self.n_candidates_)
        if n_classes is not None:
            n_classes = check_int(n_classes, "n_classes", low=1)
        pairs = np.unique(ids)
        if _check_prediction(self.prediction) == "pruned":
            macs = self._pruned_macs(pairs, X)
        else:
            macs = self._dense_macs(pairs)
        if n_classes is not None:
            macs += n_classes * ids.size
        return float(macs)

    def _dense_macs(self, pairs):
        """Per image, what the dense correlation of the pairs' templates computes."""
        n_masks, out_h, out_w = self.masks_.shape
        n_u, n_v = self.mask_rows_.shape[0], self.mask_cols_.shape[0]
        n_used = np.unique(pairs // n_masks).size
        macs = n_used * (out_h * out_w * (self.patch_size**2 + n_v) + n_u * n_v * out_h)
        if self.response == "ncc" and n_used:
            macs += out_h * out_w * 2 * self.patch_size**2
        return float(macs)

    def _pruned_macs(self, pairs, X):
        """Per image, the mean (or without ``X`` the most) the pruned search computes."""
        n_masks, out_h, out_w = self.masks_.shape
        area = self.patch_size**2
        if not pairs.size:
            return 0.0
        if X is None:
            n_pos = out_h * out_w
            work = np.array([[np.unique(pairs // n_masks).size * n_pos, pairs.size * n_pos,
                              n_pos]])
        else:
            _, work = conv_max_selected(self._new_images(X), self.templates_, self.mask_rows_,
                                        self.mask_cols_, pairs, return_counts=True,
                                        **self._kernel_kwargs())
        per_patch = 2 * area if self.response == "ncc" else 0
        macs = float((work @ np.array([area, 2, per_patch], dtype=np.float64)).mean())
        if self.response == "correlation":
            macs += self.image_shape_[0] * self.image_shape_[1]
        return macs
