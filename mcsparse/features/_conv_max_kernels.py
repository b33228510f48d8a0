"""The convolution-max features of [SWS2011], §7.4: compiled kernels and NumPy twins.

The feature of an image ``I`` for the pair (template ``w_f``, mask ``g_c``)
is ``x_fc = max_p (I correlated with w_f)(p) * g_c(p)``, the largest response
of the template over the valid positions ``p``, weighted by a Gaussian mask
(:mod:`mcsparse.features._conv_max_templates`).
:func:`conv_max_features` computes all pairs (the training matrix),
:func:`conv_max_selected` only the selected ones, pruning positions that
cannot win; ``*_numpy`` are their NumPy twins, the reference the tests
compare the kernels with.
"""

import math

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits

from ..utils.validation import check_int, check_n_jobs, check_real
from ._base import CandidateFeatures
from ._conv_max_fast import conv_max_chunk, conv_max_pairs_chunk
from ._conv_max_templates import _as_factors, _check_images, masks_from_factors


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

    Notes
    -----
    The tests check it against a private plain-NumPy reference
    (``_conv_max_kernels.conv_max_features_numpy``: direct masked max).

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
    conv_max_features : Every pair, by BLAS (the training matrix).

    Notes
    -----
    The tests check it against a private plain-NumPy twin
    (``_conv_max_kernels.conv_max_selected_numpy``: same pruning, same counts).

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
