# Multiclass logistic loss with the 0/1 margin (ShareBoost, eq. 3 of [SWS2011]).
#
# For a score row s (n_classes,) and label y:
#     z_j  = s_j - s_y + margin * 1[j != y]    (margin = 1 in eq. 3)
#     loss = log sum_j exp(z_j)
#     dloss/ds_j = p_j - 1[j == y],   p = softmax(z)
# Computed stably as m + log1p(sum_{j != a} exp(z_j - m)) with m = z_a = max z.
# The plain-NumPy twin is mcsparse.loss._multiclass_logistic.loss_gradient_numpy.

from libc.math cimport exp, log1p

from mcsparse.utils._typedefs cimport floating, float64_t, intp_t


cdef float64_t _row_loss_grad(
    const floating[::1] s,
    intp_t y,
    float64_t w,
    float64_t margin,
    floating[::1] g,
) noexcept nogil:
    """Loss of one row times ``w``; writes ``w * (p - e_y)`` into ``g``."""
    cdef intp_t j, a = 0
    cdef intp_t k = s.shape[0]
    cdef float64_t sy = s[y]
    cdef float64_t m, z, e, rest = 0.0, inv

    # m = max_j z_j, a = its index (first one on ties)
    m = s[0] - sy + (margin if y != 0 else 0.0)
    for j in range(1, k):
        z = s[j] - sy + (margin if j != y else 0.0)
        if z > m:
            m = z
            a = j
    # sum over j != a of exp(z_j - m); store the exponentials in g for now
    for j in range(k):
        if j == a:
            continue
        e = exp(s[j] - sy + (margin if j != y else 0.0) - m)
        rest += e
        g[j] = <floating> e
    inv = w / (1.0 + rest)
    for j in range(k):
        if j == a:
            e = 1.0
        else:
            e = g[j]
        g[j] = <floating> (e * inv - (w if j == y else 0.0))
    return w * (m + log1p(rest))


cdef float64_t _loss_grad(
    const floating[:, ::1] scores,
    const intp_t[::1] y,
    const floating[::1] sample_weight,
    bint weighted,
    float64_t margin,
    floating[:, ::1] grad,
) noexcept nogil:
    cdef intp_t i
    cdef float64_t total = 0.0
    cdef float64_t w = 1.0
    for i in range(scores.shape[0]):
        if weighted:
            w = sample_weight[i]
        total += _row_loss_grad(scores[i], y[i], w, margin, grad[i])
    return total


def loss_gradient(
    const floating[:, ::1] scores not None,
    const intp_t[::1] y not None,
    const floating[::1] sample_weight,
    floating[:, ::1] grad not None,
    float64_t margin=1.0,
):
    """Weighted sum of the margin logistic loss and its gradient, in place.

    Low-level entry point: no validation beyond shapes. Use
    :func:`mcsparse.loss.multiclass_logistic_loss` from Python.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes), float32 or float64, C order
    y : ndarray of shape (n_samples,), intp, values in ``[0, n_classes)``
    sample_weight : ndarray of shape (n_samples,) of the dtype of ``scores``, or None
    grad : ndarray like ``scores``, overwritten with ``w_i * (p_i - e_{y_i})``
    margin : float, default=1.0
        The margin added to every wrong class's score: 1 is eq. (3); 0 is
        the plain soft-max (cross-entropy) loss, for two classes the binary
        logistic loss of the score difference.

    Returns
    -------
    loss_sum : float
        ``sum_i w_i * loss_i``, accumulated in float64.
    """
    cdef intp_t n = scores.shape[0]
    cdef intp_t k = scores.shape[1]
    cdef intp_t i
    cdef bint weighted = sample_weight is not None
    cdef float64_t total
    if y.shape[0] != n or grad.shape[0] != n or grad.shape[1] != k:
        raise ValueError("scores, y and grad have inconsistent shapes")
    if weighted and sample_weight.shape[0] != n:
        raise ValueError("sample_weight has the wrong length")
    for i in range(n):
        if y[i] < 0 or y[i] >= k:
            raise ValueError(f"label y[{i}]={y[i]} is outside [0, {k})")
    with nogil:
        total = _loss_grad(scores, y, sample_weight, weighted, margin, grad)
    return total
