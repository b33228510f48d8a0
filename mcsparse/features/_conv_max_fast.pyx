# Convolution-max template features ([SWS2011], §7.4): the hot loop.
#
# For an image I (h x w), a template w_f (ph x pw) and a spatial mask g_c over
# the (h - ph + 1) x (w - pw + 1) map of valid positions, the feature is
#
#     x_fc = max over positions p of (I correlated with w_f)(p) * g_c(p).
#
# Per image, the patches of all positions are copied into the rows of a
# (n_positions, ph * pw) matrix (im2col) and one BLAS sgemm against the
# templates gives the response map of a block of templates,
# (n_positions, block) in C order. Blocks of templates keep the response
# block in the L2 cache.
#
# The masks are separable, g_c(r, s) = u_i(r) v_j(s) with c = i * n_v + j and
# u, v >= 0 (isotropic Gaussians on a grid), so the masked max splits into
# two passes that are exact for non-negative factors:
#
#     max_{r,s} resp(r, s) u_i(r) v_j(s) = max_r u_i(r) [max_s resp(r, s) v_j(s)].
#
# The first pass costs n_v * n_positions and the second n_u * n_v * out_h
# multiply-max operations per template, instead of n_u * n_v * n_positions
# for the direct max (3.4 times fewer for 16 masks on 22 x 22 positions).
# Both are element-wise maxima over a block of contiguous templates, which
# the compiler vectorises.
# The GIL is released for the whole chunk, so threads can run chunks of
# images side by side (see ``conv_max_features``).
#
# With a damping delta >= 0 (the damped normalised cross-correlation, NCC),
# each im2col row, the patch p, is replaced by
#
#     (p - mean(p)) / sqrt(||p - mean(p)||^2 + delta)
#
# before the product: faint strokes answer like bold ones and a blank or
# constant patch answers 0. The patch sums are accumulated in float64.
#
# The plain-NumPy twin is mcsparse.features._conv_max.conv_max_features_numpy.

from libc.math cimport sqrt
from libc.stdlib cimport free, malloc
from scipy.linalg.cython_blas cimport sgemm

from mcsparse.utils._typedefs cimport float32_t, intp_t


cdef extern from "_conv_dot.h":
    double mcs_dot(const double* x, const double* y, Py_ssize_t n) noexcept nogil

# Templates per sgemm call: a response block of n_positions x 128 floats
# (248 KB for 28 x 28 images and 7 x 7 templates) stays in L2.
cdef enum:
    TEMPLATE_BLOCK = 128


cdef inline float32_t _fmax(float32_t a, float32_t b) noexcept nogil:
    return b if b > a else a


cdef inline void _weighted_max(
    float32_t* dst,
    const float32_t* src,
    const float32_t* weights,
    intp_t n_steps,
    intp_t nb,
) noexcept nogil:
    """``dst[f] = max_t weights[t] * src[t * nb + f]`` for ``f < nb``.

    One pass of the separable masked max: ``src`` holds ``n_steps`` rows of
    ``nb`` contiguous templates' values.
    """
    cdef intp_t t, f
    cdef float32_t g = weights[0]
    for f in range(nb):
        dst[f] = src[f] * g
    for t in range(1, n_steps):
        g = weights[t]
        for f in range(nb):
            dst[f] = _fmax(dst[f], src[t * nb + f] * g)


cdef inline void _read_patch(
    const float32_t[:, :, ::1] images,
    intp_t i,
    intp_t r,
    intp_t s,
    intp_t patch_h,
    intp_t patch_w,
    bint ncc,
    double damping,
    double* dst,
) noexcept nogil:
    """The patch at ``(r, s)`` of image ``i`` into ``dst`` (centred and scaled for the NCC).

    The NCC's offsets from the first pixel are exact in float64, so a
    constant patch centres to exactly 0.
    """
    cdef intp_t a, b, c
    cdef intp_t area = patch_h * patch_w
    cdef double first, psum, pmean, psq, centred, scale
    for a in range(patch_h):
        for b in range(patch_w):
            dst[a * patch_w + b] = images[i, r + a, s + b]
    if not ncc:
        return
    first = dst[0]
    psum = 0.0
    for c in range(area):
        psum += dst[c] - first
    pmean = psum / area
    psq = 0.0
    for c in range(area):
        centred = (dst[c] - first) - pmean
        psq += centred * centred
    scale = psq + damping
    scale = 1.0 / sqrt(scale) if scale > 0.0 else 0.0
    for c in range(area):
        dst[c] = ((dst[c] - first) - pmean) * scale


def conv_max_chunk(
    const float32_t[:, :, ::1] images,
    const float32_t[:, ::1] templates,
    intp_t patch_h,
    intp_t patch_w,
    const float32_t[:, ::1] mask_rows,
    const float32_t[:, ::1] mask_cols,
    float32_t[:, ::1] out,
    double damping=-1.0,
):
    """Convolution-max features of a chunk of images, written into ``out``.

    Parameters
    ----------
    images : float32 array of shape (n_images, h, w), C order
    templates : float32 array of shape (n_templates, patch_h * patch_w), C order
        Each row is a template in row-major order.
    patch_h, patch_w : int
        Template height and width, at most h and w.
    mask_rows : float32 array of shape (n_u, h - patch_h + 1), C order
        Non-negative row factors ``u_i`` of the masks.
    mask_cols : float32 array of shape (n_v, w - patch_w + 1), C order
        Non-negative column factors ``v_j`` of the masks.
    out : float32 array of shape (n_images, n_templates * n_u * n_v), C order
        ``out[i, f * n_u * n_v + c] = max_{r,s} response_f(r, s) u_a(r) v_b(s)``
        with ``c = a * n_v + b``.
    damping : float, default=-1.0
        Negative: the plain correlation. Otherwise the damped normalised
        cross-correlation: each patch ``p`` is centred and divided by
        ``sqrt(||p - mean(p)||^2 + damping)`` before the product (a zero
        patch norm with ``damping=0`` gives a zero row).

    Shapes are checked here; values (NaN, inf, negative factors) are the
    caller's concern.
    """
    cdef intp_t n_images = images.shape[0]
    cdef intp_t h = images.shape[1]
    cdef intp_t w = images.shape[2]
    cdef intp_t n_templates = templates.shape[0]
    cdef intp_t n_u = mask_rows.shape[0]
    cdef intp_t n_v = mask_cols.shape[0]
    cdef intp_t n_masks = n_u * n_v
    cdef intp_t area = patch_h * patch_w
    if patch_h < 1 or patch_w < 1 or patch_h > h or patch_w > w:
        raise ValueError(
            f"template of {patch_h} x {patch_w} does not fit images of {h} x {w}")
    cdef intp_t out_h = h - patch_h + 1
    cdef intp_t out_w = w - patch_w + 1
    cdef intp_t n_pos = out_h * out_w
    if templates.shape[1] != area:
        raise ValueError(
            f"templates have {templates.shape[1]} values, expected {area}")
    if mask_rows.shape[1] != out_h or mask_cols.shape[1] != out_w:
        raise ValueError(
            f"mask factors have {mask_rows.shape[1]} rows and {mask_cols.shape[1]} "
            f"columns, expected {out_h} and {out_w}")
    if out.shape[0] != n_images or out.shape[1] != n_templates * n_masks:
        raise ValueError(
            f"out has shape ({out.shape[0]}, {out.shape[1]}), expected "
            f"({n_images}, {n_templates * n_masks})")
    if n_images == 0 or n_templates == 0 or n_masks == 0:
        return

    cdef float32_t* cols = <float32_t*> malloc(n_pos * area * sizeof(float32_t))
    cdef float32_t* resp = <float32_t*> malloc(n_pos * TEMPLATE_BLOCK * sizeof(float32_t))
    # row maxima of the first pass: (n_v, out_h, block)
    cdef float32_t* rowmax = <float32_t*> malloc(
        n_v * out_h * TEMPLATE_BLOCK * sizeof(float32_t))
    cdef float32_t* best = <float32_t*> malloc(TEMPLATE_BLOCK * sizeof(float32_t))
    cdef double* patch = <double*> malloc(area * sizeof(double))
    if cols == NULL or resp == NULL or rowmax == NULL or best == NULL or patch == NULL:
        free(patch)
        free(cols)
        free(resp)
        free(rowmax)
        free(best)
        raise MemoryError()

    cdef intp_t i, a, b, r, s, fb, f0, nb, f, c
    cdef float32_t* dst
    cdef float32_t one = 1.0, zero = 0.0
    cdef int m_, n_, k_, lda, ldc
    cdef char transa = b'T', transb = b'N'
    cdef bint ncc = damping >= 0.0
    with nogil:
        for i in range(n_images):
            # im2col: row p = r * out_w + s holds the patch at (r, s)
            for r in range(out_h):
                for s in range(out_w):
                    _read_patch(images, i, r, s, patch_h, patch_w, ncc, damping, patch)
                    dst = cols + (r * out_w + s) * area
                    for c in range(area):
                        dst[c] = <float32_t> patch[c]
            for fb in range((n_templates + TEMPLATE_BLOCK - 1) // TEMPLATE_BLOCK):
                f0 = fb * TEMPLATE_BLOCK
                nb = min(<intp_t> TEMPLATE_BLOCK, n_templates - f0)
                # resp (n_pos x nb, C order) = cols (n_pos x area) @ T[f0:f0+nb]^T;
                # in BLAS's column-major terms resp^T = T_block^T(nb x area) cols^T
                m_ = <int> nb
                n_ = <int> n_pos
                k_ = <int> area
                lda = <int> area
                ldc = <int> nb
                sgemm(&transa, &transb, &m_, &n_, &k_, &one,
                      <float32_t*> &templates[f0, 0], &lda, cols, &lda,
                      &zero, resp, &ldc)
                # first pass: rowmax[b, r, f] = max_s resp[r, s, f] * v_b(s)
                for b in range(n_v):
                    for r in range(out_h):
                        _weighted_max(rowmax + (b * out_h + r) * nb,
                                      resp + r * out_w * nb, &mask_cols[b, 0], out_w, nb)
                # second pass: out = max_r u_a(r) * rowmax[b, r, f]
                for a in range(n_u):
                    for b in range(n_v):
                        _weighted_max(best, rowmax + b * out_h * nb, &mask_rows[a, 0],
                                      out_h, nb)
                        c = a * n_v + b
                        for f in range(nb):
                            out[i, (f0 + f) * n_masks + c] = best[f]
    free(patch)
    free(cols)
    free(resp)
    free(rowmax)
    free(best)


# Selected pairs only, computed lazily ([SWS2011] §7.4 counts the work of
# prediction): the feature of pair (f, c) on an image is the largest masked
# response, and the positions are visited in decreasing order of the mask's
# weight g_c(r, s) = u_a(r) v_b(s). Every response is bounded,
# |resp_f(r, s)| <= B_f (Cauchy-Schwarz: ||w_f|| times the largest patch norm,
# which is below 1 for the NCC), so once the running maximum m reaches
# g * B_f at the next position's weight g (with a relative margin of 1e-6
# and an absolute one for rounding below float32's normals), no later
# position can exceed it and the search stops with the exact maximum. A template's responses and an
# image's patches are computed at most once per image, when first visited,
# in float64 (one rounding to float32 per response).


cdef double _largest_patch_norm(
    const float32_t[:, :, ::1] images,
    intp_t i,
    intp_t patch_h,
    intp_t patch_w,
    double* table,
) noexcept nogil:
    """``max_p ||patch_p||_2`` of image ``i``, from a summed-area table of its squares."""
    cdef intp_t h = images.shape[1]
    cdef intp_t w = images.shape[2]
    cdef intp_t r, s
    cdef double v, best = 0.0, window
    for s in range(w + 1):
        table[s] = 0.0
    for r in range(h):
        table[(r + 1) * (w + 1)] = 0.0
        for s in range(w):
            v = images[i, r, s]
            table[(r + 1) * (w + 1) + s + 1] = (v * v + table[r * (w + 1) + s + 1]
                                                + table[(r + 1) * (w + 1) + s]
                                                - table[r * (w + 1) + s])
    for r in range(h - patch_h + 1):
        for s in range(w - patch_w + 1):
            window = (table[(r + patch_h) * (w + 1) + s + patch_w]
                      - table[r * (w + 1) + s + patch_w]
                      - table[(r + patch_h) * (w + 1) + s]
                      + table[r * (w + 1) + s])
            if window > best:
                best = window
    # the table's round-off is far below the 1e-6 the caller adds
    return sqrt(best)


def conv_max_pairs_chunk(
    const float32_t[:, :, ::1] images,
    const double[:, ::1] templates,
    const double[::1] template_norms,
    const intp_t[::1] pair_template,
    const intp_t[::1] pair_row,
    const intp_t[::1] pair_col,
    const intp_t[:, ::1] orders,
    const double[:, ::1] weights,
    intp_t patch_h,
    intp_t patch_w,
    const float32_t[:, ::1] mask_rows,
    const float32_t[:, ::1] mask_cols,
    float32_t[:, ::1] out,
    long long[:, ::1] counts,
    double slack,
    double damping=-1.0,
):
    """Convolution-max features of selected pairs on a chunk of images, lazily.

    Parameters
    ----------
    images : float32 array of shape (n_images, h, w), C order
    templates : float64 array of shape (n_used, patch_h * patch_w), C order
        The templates the pairs use, each in row-major order.
    template_norms : float64 array of shape (n_used,)
        Upper bounds of the templates' l2 norms.
    pair_template : intp array of shape (n_pairs,)
        Row of ``templates`` for each pair; pairs of one template must be
        consecutive (its responses are kept while they are).
    pair_row, pair_col : intp arrays of shape (n_pairs,)
        Mask factors ``a`` and ``b`` of each pair (mask ``c = a * n_v + b``).
    orders : intp array of shape (n_u * n_v, n_pos)
        Per mask, the positions ``r * out_w + s`` by decreasing weight.
    weights : float64 array of shape (n_u * n_v, n_pos)
        ``weights[c, k]`` is mask ``c``'s weight ``u_a(r) v_b(s)`` (in
        float64) at position ``orders[c, k]``, non-increasing in ``k``.
    patch_h, patch_w : int
        Template height and width.
    mask_rows, mask_cols : float32 arrays, C order
        The non-negative mask factors, of shapes (n_u, out_h) and (n_v, out_w).
    out : float32 array of shape (n_images, n_pairs), C order
        ``out[i, q] = max_{r,s} (resp(r, s) * v_b(s)) * u_a(r)``, products in
        float32, as :func:`conv_max_chunk` computes them.
    counts : int64 array of shape (n_images, 3), C order
        Per image: template responses computed, (pair, position) products
        evaluated, patches read.
    slack : float
        Absolute margin of the stopping test, for the rounding of products
        below float32's normal range: the search stops when the running
        maximum is at least ``weights[c, k] * bound + slack``.
    damping : float, default=-1.0
        Negative: the plain correlation, else the damped NCC (as in
        :func:`conv_max_chunk`).

    Shapes are checked here; values are the caller's concern.
    """
    cdef intp_t n_images = images.shape[0]
    cdef intp_t h = images.shape[1]
    cdef intp_t w = images.shape[2]
    cdef intp_t n_used = templates.shape[0]
    cdef intp_t n_pairs = pair_template.shape[0]
    cdef intp_t n_u = mask_rows.shape[0]
    cdef intp_t n_v = mask_cols.shape[0]
    cdef intp_t area = patch_h * patch_w
    if patch_h < 1 or patch_w < 1 or patch_h > h or patch_w > w:
        raise ValueError(
            f"template of {patch_h} x {patch_w} does not fit images of {h} x {w}")
    cdef intp_t out_h = h - patch_h + 1
    cdef intp_t out_w = w - patch_w + 1
    cdef intp_t n_pos = out_h * out_w
    if templates.shape[1] != area or template_norms.shape[0] != n_used:
        raise ValueError("templates and their norms do not match the patch size")
    if pair_row.shape[0] != n_pairs or pair_col.shape[0] != n_pairs:
        raise ValueError("pair_template, pair_row and pair_col differ in length")
    if mask_rows.shape[1] != out_h or mask_cols.shape[1] != out_w:
        raise ValueError("mask factors do not match the valid positions")
    if (orders.shape[0] != n_u * n_v or orders.shape[1] != n_pos
            or weights.shape[0] != n_u * n_v or weights.shape[1] != n_pos):
        raise ValueError(f"orders and weights must have shape ({n_u * n_v}, {n_pos})")
    if out.shape[0] != n_images or out.shape[1] != n_pairs:
        raise ValueError(f"out must have shape ({n_images}, {n_pairs})")
    if counts.shape[0] != n_images or counts.shape[1] != 3:
        raise ValueError(f"counts must have shape ({n_images}, 3)")
    cdef intp_t q
    for q in range(n_pairs):
        if not (0 <= pair_template[q] < n_used and 0 <= pair_row[q] < n_u
                and 0 <= pair_col[q] < n_v):
            raise ValueError(f"pair {q} is out of range")
    for q in range(n_pos * n_u * n_v):
        if not 0 <= orders[q // n_pos, q % n_pos] < n_pos:
            raise ValueError("orders holds a position out of range")
    if n_images == 0 or n_pairs == 0:
        return

    cdef double* patches = <double*> malloc(n_pos * area * sizeof(double))
    cdef float32_t* resp = <float32_t*> malloc(n_pos * sizeof(float32_t))
    cdef intp_t* resp_stamp = <intp_t*> malloc(n_pos * sizeof(intp_t))
    cdef intp_t* patch_stamp = <intp_t*> malloc(n_pos * sizeof(intp_t))
    cdef double* table = <double*> malloc((h + 1) * (w + 1) * sizeof(double))
    cdef intp_t* pos_row = <intp_t*> malloc(n_pos * sizeof(intp_t))
    cdef intp_t* pos_col = <intp_t*> malloc(n_pos * sizeof(intp_t))
    if (patches == NULL or resp == NULL or resp_stamp == NULL or patch_stamp == NULL
            or table == NULL or pos_row == NULL or pos_col == NULL):
        free(pos_row)
        free(pos_col)
        free(patches)
        free(resp)
        free(resp_stamp)
        free(patch_stamp)
        free(table)
        raise MemoryError()

    cdef bint ncc = damping >= 0.0
    cdef intp_t i, k, pos, r, s, c, t, a, b, stamp = 0
    cdef long long n_resp, n_eval, n_patch
    cdef double bound, patch_norm
    cdef const double* tmpl
    cdef double* patch
    cdef float32_t val, best
    with nogil:
        for k in range(n_pos):
            resp_stamp[k] = -1
            patch_stamp[k] = -1
            pos_row[k] = k // out_w
            pos_col[k] = k - pos_row[k] * out_w
        for i in range(n_images):
            n_resp = 0
            n_eval = 0
            n_patch = 0
            patch_norm = 1.0 if ncc else _largest_patch_norm(images, i, patch_h, patch_w,
                                                              table)
            for q in range(n_pairs):
                t = pair_template[q]
                if q == 0 or t != pair_template[q - 1]:
                    stamp += 1  # a new template: its responses are not known yet
                tmpl = &templates[t, 0]
                bound = template_norms[t] * patch_norm * (1.0 + 1e-6)
                a = pair_row[q]
                b = pair_col[q]
                c = a * n_v + b
                best = 0.0
                for k in range(n_pos):
                    if k > 0 and best >= weights[c, k] * bound + slack:
                        break  # no later position can beat the maximum
                    pos = orders[c, k]
                    r = pos_row[pos]
                    s = pos_col[pos]
                    if resp_stamp[pos] != stamp:
                        patch = patches + pos * area
                        if patch_stamp[pos] != i:
                            _read_patch(images, i, r, s, patch_h, patch_w, ncc, damping,
                                        patch)
                            patch_stamp[pos] = i
                            n_patch += 1
                        resp[pos] = <float32_t> mcs_dot(tmpl, patch, area)
                        resp_stamp[pos] = stamp
                        n_resp += 1
                    val = resp[pos] * mask_cols[b, s]
                    val = val * mask_rows[a, r]
                    n_eval += 1
                    if k == 0 or val > best:
                        best = val
                out[i, q] = best
            counts[i, 0] = n_resp
            counts[i, 1] = n_eval
            counts[i, 2] = n_patch
    free(patches)
    free(resp)
    free(resp_stamp)
    free(patch_stamp)
    free(table)
    free(pos_row)
    free(pos_col)
