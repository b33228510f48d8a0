# Stochastic mirror descent for multi-class MKL: the link function of
# Theorem 3 and the steps of Algorithm 2 (SMSD-MKL) of [LYL2018], which
# reduce to UFO-MKL [OL2011] when the tail-sum penalty is zero.
#
# The primal is kept in its kernel expansion. The dual vector is
# theta_{m,k} = sum_j dual[j, k] phi_m(x_j): one coefficient matrix ``dual``
# (n_rows, n_classes) shared by all base kernels, because the hinge
# sub-gradient at x_t is phi_m(x_t) (e_r - e_y) in every kernel's space. The
# primal is w_m = coef_m theta_m, with the scalar coef_m of the link function
# (``_link``), so the score of class k at training row i is
#     sum_m coef_m gram_dual[m, k, i],   gram_dual[m] = (K_m[rows][:, rows] dual)^T,
# and a step that changes dual[i, y] and dual[i, r] by +1 / -1 updates
# gram_dual with one row of each K_m (O(n_kernels n_rows)) and the squared
# norms ||theta_m||^2 by the scalar recursion of Section 5.2:
#     ||theta_m - z_m||^2 = ||theta_m||^2 - 2 theta_m . z_m + ||z_m||^2.
# No step touches a vector of the feature space.
#
# The plain-NumPy twins are mcsparse.solvers._mkl.link_coefficients_numpy and
# mcsparse.solvers._mkl.mkl_epoch_numpy.

import numpy as np

from libc.math cimport pow, sqrt

from mcsparse.utils._typedefs cimport floating, float64_t, intp_t


cdef extern from "_mkl_step.h":
    void mcs_move_rows_f32(const float* k_row, double scale, double* up, double* down,
                           intp_t n) noexcept nogil
    void mcs_move_rows_f64(const double* k_row, double scale, double* up, double* down,
                           intp_t n) noexcept nogil


cdef void _link_parts(
    const float64_t* theta_sq,
    const float64_t* penalty,
    intp_t n_kernels,
    float64_t q,
    float64_t* parts,
    float64_t* norm_power,
) noexcept nogil:
    """The factors of the link that do not depend on its ``scale``.

    ``parts[m] = (nu_m / ||theta_m||) (nu_m / nu_max)^(q-2)`` with ``nu =
    (||theta|| - penalty)_+`` and ``norm_power[0] = (sum_m (nu_m /
    nu_max)^q)^((q-2)/q)``; ``norm_power[0] = 0`` when every nu_m is zero.
    """
    cdef intp_t m
    cdef float64_t nu, nu_max = 0.0, total = 0.0
    for m in range(n_kernels):
        nu = sqrt(theta_sq[m]) if theta_sq[m] > 0.0 else 0.0
        nu -= penalty[m]
        parts[m] = nu if nu > 0.0 else 0.0
        if parts[m] > nu_max:
            nu_max = parts[m]
    norm_power[0] = 0.0
    if not (nu_max > 0.0):
        return
    for m in range(n_kernels):
        if parts[m] > 0.0:
            total += pow(parts[m] / nu_max, q)
    for m in range(n_kernels):
        if parts[m] > 0.0:
            parts[m] = (parts[m] / sqrt(theta_sq[m])) * pow(parts[m] / nu_max, q - 2.0)
    norm_power[0] = pow(total, (q - 2.0) / q)


cdef void _link_scaled(
    const float64_t* parts,
    float64_t norm_power,
    intp_t n_kernels,
    float64_t scale,
    float64_t* coef,
) noexcept nogil:
    """``coef_m = parts[m] / (norm_power scale)``, all zero when either is not positive."""
    cdef intp_t m
    cdef float64_t factor
    if not (norm_power > 0.0) or not (scale > 0.0):
        for m in range(n_kernels):
            coef[m] = 0.0
        return
    factor = 1.0 / (norm_power * scale)
    for m in range(n_kernels):
        coef[m] = parts[m] * factor if parts[m] > 0.0 else 0.0


cdef void _link(
    const float64_t* theta_sq,
    const float64_t* penalty,
    intp_t n_kernels,
    float64_t q,
    float64_t scale,
    float64_t* coef,
) noexcept nogil:
    """coef_m = nu_m^(q-1) / (||theta_m|| ||nu||_q^(q-2) scale), nu = (||theta|| - penalty)_+.

    Computed with nu divided by its largest entry, so that neither power
    overflows or underflows; all zero when every nu_m is zero:
        nu^(q-1) / (||nu||_q^(q-2) ||theta||)
            = (nu / ||theta||) (nu / nu_max)^(q-2) / total^((q-2)/q),
    every factor but the last bounded, so nothing overflows before 1 / scale.
    ``coef`` holds the parts in between (it is the output).
    """
    cdef float64_t norm_power
    _link_parts(theta_sq, penalty, n_kernels, q, coef, &norm_power)
    _link_scaled(coef, norm_power, n_kernels, scale, coef)


def link_coefficients(const float64_t[::1] theta_sq, const float64_t[::1] penalty,
                      float64_t q, float64_t scale):
    """Link function of Theorem 3 (no input checks: see ``_mkl.link_coefficients``)."""
    cdef intp_t n_kernels = theta_sq.shape[0]
    coef = np.zeros(n_kernels, dtype=np.float64)
    cdef float64_t[::1] coef_view = coef
    if n_kernels > 0:
        _link(&theta_sq[0], &penalty[0], n_kernels, q, scale, &coef_view[0])
    return coef


cdef void _step(
    const floating[:, :, ::1] gram,
    const intp_t[::1] rows,
    intp_t i,
    intp_t y,
    intp_t r,
    const float64_t[::1] kernel_scale,
    float64_t[:, :, ::1] gram_dual,
    float64_t[::1] theta_sq,
    bint consecutive,
) noexcept nogil:
    """theta <- theta - phi(x_i) (e_r - e_y): the norms first, with the old gram_dual.

    The rows of ``gram_dual[m]`` of classes y and r move by the kernel row
    of sample ``rows[i]``, read as one contiguous run when ``consecutive``
    (``rows[j] == rows[0] + j`` for every j).
    """
    cdef intp_t n_rows = rows.shape[0], m, j, row_i = rows[i]
    cdef float64_t scale_m, kij
    cdef const floating* k_row
    cdef float64_t* up
    cdef float64_t* down
    for m in range(gram.shape[0]):
        scale_m = kernel_scale[m]
        theta_sq[m] += (2.0 * (gram_dual[m, y, i] - gram_dual[m, r, i])
                        + 2.0 * (scale_m * gram[m, row_i, row_i]))
        if theta_sq[m] < 0.0:
            theta_sq[m] = 0.0
        up, down = &gram_dual[m, y, 0], &gram_dual[m, r, 0]
        if consecutive:  # in place, vectorised (_mkl_step.h)
            k_row = &gram[m, row_i, rows[0]]
            if floating is float:
                mcs_move_rows_f32(k_row, scale_m, up, down, n_rows)
            else:
                mcs_move_rows_f64(k_row, scale_m, up, down, n_rows)
        else:
            for j in range(n_rows):
                kij = scale_m * gram[m, row_i, rows[j]]
                up[j] += kij
                down[j] -= kij


def mkl_epoch(
    const floating[:, :, ::1] gram,
    const intp_t[::1] rows,
    const intp_t[::1] labels,
    const intp_t[::1] order,
    float64_t[:, ::1] dual,
    float64_t[:, :, ::1] gram_dual,
    float64_t[::1] theta_sq,
    const float64_t[::1] kernel_scale,
    const float64_t[::1] penalty_rate,
    float64_t lam,
    float64_t q,
    intp_t t0,
    float64_t[::1] coef,
):
    """Run the steps ``order`` of SMSD-MKL / UFO-MKL in place (no input checks).

    Step t = t0 + s + 1 visits training row ``order[s]``: it scores the row
    with w_t = coef theta_t, and when the multi-class hinge loss is positive
    it moves theta by minus the sub-gradient. Base kernel m is
    ``kernel_scale[m] * gram[m]`` (Conv-MKL's tail-sum normalisation). ``coef`` holds the link of the
    state before each step, with penalty (t - 1) penalty_rate and scale
    lam (t - 1), and on return the link after the last step.

    Returns
    -------
    n_updates : int
        Steps with a positive hinge loss.
    loss_sum : float
        Sum over the steps of the hinge loss of w_t at the visited row.
    """
    cdef intp_t n_kernels = gram.shape[0]
    cdef intp_t n_rows = rows.shape[0]
    cdef intp_t n_classes = dual.shape[1]
    cdef intp_t n_steps = order.shape[0]
    cdef intp_t s, i, m, k, y, r, t
    cdef intp_t n_updates = 0
    cdef float64_t loss_sum = 0.0, best, margin, norm_power = 0.0
    # without the tail-sum penalty the link changes with theta only, apart
    # from its scale: its other factors are kept until a step moves theta
    cdef bint fixed_penalty = True, parts_known = False, moved, consecutive = True
    parts_arr = np.zeros(n_kernels, dtype=np.float64)
    penalty_arr = np.zeros(n_kernels, dtype=np.float64)
    scores_arr = np.zeros(n_classes, dtype=np.float64)
    cdef float64_t[::1] parts = parts_arr
    cdef float64_t[::1] penalty = penalty_arr
    cdef float64_t[::1] scores = scores_arr
    if n_kernels == 0 or n_classes < 2:
        return 0, 0.0
    for m in range(n_kernels):
        fixed_penalty = fixed_penalty and penalty_rate[m] == 0.0
    for s in range(1, n_rows):
        consecutive = consecutive and rows[s] == rows[0] + s
    with nogil:
        for s in range(n_steps):
            t = t0 + s + 1
            i = order[s]
            y = labels[i]
            # scores of w_t at row i
            for k in range(n_classes):
                scores[k] = 0.0
            for m in range(n_kernels):
                if coef[m] != 0.0:
                    for k in range(n_classes):
                        scores[k] += coef[m] * gram_dual[m, k, i]
            r = 0 if y != 0 else 1
            best = scores[r]
            for k in range(n_classes):
                if k != y and scores[k] > best:
                    best = scores[k]
                    r = k
            margin = scores[y] - best
            moved = margin < 1.0
            if moved:
                loss_sum += 1.0 - margin
                n_updates += 1
                _step(gram, rows, i, y, r, kernel_scale, gram_dual, theta_sq, consecutive)
                dual[i, y] += 1.0
                dual[i, r] -= 1.0
            # link for w_{t+1}: penalty t * beta * r_m, scale lam * t
            if moved or not (fixed_penalty and parts_known):
                for m in range(n_kernels):
                    penalty[m] = t * penalty_rate[m]
                _link_parts(&theta_sq[0], &penalty[0], n_kernels, q, &parts[0], &norm_power)
                parts_known = True
            _link_scaled(&parts[0], norm_power, n_kernels, lam * t, &coef[0])
    return n_updates, loss_sum
