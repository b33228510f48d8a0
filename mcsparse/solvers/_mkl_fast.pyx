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
    overflows or underflows; all zero when every nu_m is zero.
    """
    cdef intp_t m
    cdef float64_t nu, nu_max = 0.0, total = 0.0, factor
    for m in range(n_kernels):
        nu = sqrt(theta_sq[m]) if theta_sq[m] > 0.0 else 0.0
        nu -= penalty[m]
        coef[m] = nu if nu > 0.0 else 0.0
        if coef[m] > nu_max:
            nu_max = coef[m]
    if not (nu_max > 0.0) or not (scale > 0.0):
        for m in range(n_kernels):
            coef[m] = 0.0
        return
    for m in range(n_kernels):
        if coef[m] > 0.0:
            total += pow(coef[m] / nu_max, q)
    # nu^(q-1) / (||nu||_q^(q-2) ||theta||)
    #     = (nu / ||theta||) (nu / nu_max)^(q-2) / total^((q-2)/q),
    # every factor but the last bounded, so nothing overflows before 1 / scale
    factor = 1.0 / (pow(total, (q - 2.0) / q) * scale)
    for m in range(n_kernels):
        if coef[m] > 0.0:
            coef[m] = (coef[m] / sqrt(theta_sq[m])) * pow(coef[m] / nu_max, q - 2.0) * factor


def link_coefficients(const float64_t[::1] theta_sq, const float64_t[::1] penalty,
                      float64_t q, float64_t scale):
    """Link function of Theorem 3 (no input checks: see ``_mkl.link_coefficients``)."""
    cdef intp_t n_kernels = theta_sq.shape[0]
    coef = np.zeros(n_kernels, dtype=np.float64)
    cdef float64_t[::1] coef_view = coef
    if n_kernels > 0:
        _link(&theta_sq[0], &penalty[0], n_kernels, q, scale, &coef_view[0])
    return coef


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
    cdef intp_t s, i, m, k, j, y, r, row_i, t
    cdef intp_t n_updates = 0
    cdef float64_t loss_sum = 0.0, best, margin, kii, kij, scale_m
    penalty_arr = np.zeros(n_kernels, dtype=np.float64)
    scores_arr = np.zeros(n_classes, dtype=np.float64)
    cdef float64_t[::1] penalty = penalty_arr
    cdef float64_t[::1] scores = scores_arr
    if n_kernels == 0 or n_classes < 2:
        return 0, 0.0
    with nogil:
        for s in range(n_steps):
            t = t0 + s + 1
            i = order[s]
            y = labels[i]
            row_i = rows[i]
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
            if margin < 1.0:
                loss_sum += 1.0 - margin
                n_updates += 1
                # theta <- theta - phi(x_i) (e_r - e_y): norms first, with the old gram_dual
                for m in range(n_kernels):
                    scale_m = kernel_scale[m]
                    kii = scale_m * gram[m, row_i, row_i]
                    theta_sq[m] += (2.0 * (gram_dual[m, y, i] - gram_dual[m, r, i])
                                    + 2.0 * kii)
                    if theta_sq[m] < 0.0:
                        theta_sq[m] = 0.0
                    for j in range(n_rows):
                        kij = scale_m * gram[m, row_i, rows[j]]
                        gram_dual[m, y, j] += kij
                        gram_dual[m, r, j] -= kij
                dual[i, y] += 1.0
                dual[i, r] -= 1.0
            # link for w_{t+1}: penalty t * beta * r_m, scale lam * t
            for m in range(n_kernels):
                penalty[m] = t * penalty_rate[m]
            _link(&theta_sq[0], &penalty[0], n_kernels, q, lam * t, &coef[0])
    return n_updates, loss_sum
