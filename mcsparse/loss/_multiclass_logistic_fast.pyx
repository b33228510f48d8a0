# Multiclass logistic loss with the 0/1 margin (ShareBoost, eq. 3 of [SWS2011]),
# and the binary logistic loss of the one-vs-rest baseline.
#
# Margin loss, for a score row s (n_classes,) and label y:
#     z_j  = s_j - s_y + margin * 1[j != y]    (margin = 1 in eq. 3)
#     loss = log sum_j exp(z_j)
#     dloss/ds_j = p_j - 1[j == y],   p = softmax(z)
# Computed stably as m + log1p(sum_{j != a} exp(z_j - m)) with m = z_a = max z.
#
# Binary logistic loss, one score s per row and y in {0, 1}:
#     loss = log(1 + exp(s)) - y s,   dloss/ds = sigmoid(s) - y
# (the two-class soft-max without margin on the scores (0, s)).
#
# The plain-NumPy twins are in mcsparse.loss._multiclass_logistic.
#
# RowKernel is what the fused objective pass (mcsparse.solvers._columns_fast)
# calls: a loss of mcsparse.loss holds one as its ``kernel``; a new loss
# subclasses it in its own module (mcsparse.loss._softmax_fast). Its
# ``hessian_factors`` is the soft-max Hessian diag(p) - p p^T, written once here
# for every loss whose curvature state is the probabilities p; the Hessian
# products and the exact bordering's packed rows are computed from it.

from libc.math cimport fabs
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free, malloc

from mcsparse.utils._typedefs cimport floating, float64_t, intp_t


cdef extern from "_fast_exp.h":
    void mcs_exp_array(const double* x, double* out, int64_t n) nogil
    void mcs_log1p_array(const double* x, double* out, int64_t n) nogil


# Rows per block: the exponentials of a block are one vectorised loop.
DEF BLOCK_ROWS = 256


cdef float64_t _block_loss_grad(
    const floating[:, ::1] scores, const intp_t[::1] y, const floating[::1] sample_weight,
    bint weighted, float64_t margin, bint binary, floating[:, ::1] grad,
    float64_t[::1] per_row, intp_t i0, intp_t i1, double* z, double* m, double* rest,
    double* w, intp_t* argmax,
) noexcept nogil:
    """Loss sum of rows ``i0 .. i1`` (at most BLOCK_ROWS); see :func:`loss_gradient`.

    Per row, ``m + log1p(sum_{j != a} exp(z_j - m))`` with ``m = z_a`` the
    largest ``z_j`` (precise when the loss is tiny). The block is worked on
    class by class, ``z[j * nb + r]``, so that every loop runs over the
    rows and vectorises, the exponentials and logarithms included.
    """
    cdef intp_t i, j, r, nb = i1 - i0, k = scores.shape[1]
    cdef float64_t total = 0.0, value, v, e, inv
    cdef const floating* s = &scores[i0, 0]
    cdef floating* g = &grad[i0, 0]
    cdef const intp_t* yb = &y[i0]
    for r in range(nb):
        w[r] = sample_weight[i0 + r] if weighted else 1.0
    if binary:  # log(1 + e^s) - y s, with e = exp(-|s|) in (0, 1]
        for r in range(nb):
            z[r] = -fabs(s[r])
        mcs_exp_array(z, z, nb)
        mcs_log1p_array(z, rest, nb)
        for r in range(nb):
            v, e = s[r], z[r]
            if v >= 0:
                g[r] = <floating> (w[r] * (1.0 / (1.0 + e) - yb[r]))
                value = w[r] * (rest[r] + (1.0 - yb[r]) * v)
            else:
                g[r] = <floating> (w[r] * (e / (1.0 + e) - yb[r]))
                value = w[r] * (rest[r] - yb[r] * v)
            if per_row is not None:
                per_row[i0 + r] = value
            total += value
        return total
    # z_j = s_j - s_y + margin 1[j != y], then minus its largest entry m
    for r in range(nb):
        m[r] = s[r * k + yb[r]]   # s_y for now
    for j in range(k):
        for r in range(nb):
            z[j * nb + r] = s[r * k + j] - m[r] + margin
    for r in range(nb):
        z[yb[r] * nb + r] = 0.0
    for r in range(nb):
        m[r] = z[r]
    for j in range(1, k):
        for r in range(nb):
            m[r] = z[j * nb + r] if z[j * nb + r] > m[r] else m[r]
    for r in range(nb):
        argmax[r] = k - 1
    for j in range(k - 2, -1, -1):   # downwards: the first index of the maximum
        for r in range(nb):
            argmax[r] = j if z[j * nb + r] == m[r] else argmax[r]
    for j in range(k):
        for r in range(nb):
            z[j * nb + r] -= m[r]
    mcs_exp_array(z, z, nb * k)
    for r in range(nb):
        z[argmax[r] * nb + r] = 0.0   # exp(0) = 1, left out of the sum
        rest[r] = 0.0
    for j in range(k):
        for r in range(nb):
            rest[r] += z[j * nb + r]
    for r in range(nb):
        z[argmax[r] * nb + r] = 1.0
    # the logarithms overwrite the scratch of the row weights' inverse: keep 1 + rest
    for r in range(nb):
        value = w[r] / (1.0 + rest[r])
        w[BLOCK_ROWS + r] = value
    mcs_log1p_array(rest, rest, nb)
    for j in range(k):
        for r in range(nb):
            g[r * k + j] = <floating> (z[j * nb + r] * w[BLOCK_ROWS + r])
    for r in range(nb):
        inv = w[BLOCK_ROWS + r]
        g[r * k + yb[r]] = <floating> (z[yb[r] * nb + r] * inv - w[r])
        value = w[r] * (m[r] + rest[r])
        if per_row is not None:
            per_row[i0 + r] = value
        total += value
    return total


cdef float64_t _loss_grad(
    const floating[:, ::1] scores,
    const intp_t[::1] y,
    const floating[::1] sample_weight,
    bint weighted,
    float64_t margin,
    bint binary,
    floating[:, ::1] grad,
    float64_t[::1] per_row,
    intp_t start,
    intp_t stop,
) noexcept nogil:
    """Weighted loss sum of rows ``start .. stop``, block by block; gradient rows into ``grad``."""
    cdef intp_t i0, i1, k = scores.shape[1]
    cdef float64_t total = 0.0
    cdef double* z = <double*> malloc(BLOCK_ROWS * (k + 5) * sizeof(double))
    cdef intp_t* argmax = <intp_t*> malloc(BLOCK_ROWS * sizeof(intp_t))
    cdef double* m = z + BLOCK_ROWS * k
    cdef double* rest = m + BLOCK_ROWS
    cdef double* w = rest + BLOCK_ROWS   # the weights, then w / (1 + rest)
    if z == NULL or argmax == NULL:
        free(z)
        free(argmax)
        return 0.0 / 0.0   # NaN: reported as an overflow by the callers' checks
    i0 = start
    while i0 < stop:
        i1 = i0 + BLOCK_ROWS if i0 + BLOCK_ROWS < stop else stop
        total += _block_loss_grad(scores, y, sample_weight, weighted, margin, binary,
                                  grad, per_row, i0, i1, z, m, rest, w, argmax)
        i0 = i1
    free(z)
    free(argmax)
    return total


cdef int _check_entry(
    const floating[:, ::1] scores,
    const intp_t[::1] y,
    const floating[::1] sample_weight,
    floating[:, ::1] grad,
    bint binary,
) except -1:
    cdef intp_t n = scores.shape[0]
    cdef intp_t k = scores.shape[1]
    cdef intp_t i, n_labels = 2 if binary else k
    if y.shape[0] != n or grad.shape[0] != n or grad.shape[1] != k:
        raise ValueError("scores, y and grad have inconsistent shapes")
    if binary and k != 1:
        raise ValueError(f"the binary logistic loss takes one score per row, got {k}")
    if sample_weight is not None and sample_weight.shape[0] != n:
        raise ValueError("sample_weight has the wrong length")
    for i in range(n):
        if y[i] < 0 or y[i] >= n_labels:
            raise ValueError(f"label y[{i}]={y[i]} is outside [0, {n_labels})")
    return 0


def loss_gradient(
    const floating[:, ::1] scores not None,
    const intp_t[::1] y not None,
    const floating[::1] sample_weight,
    floating[:, ::1] grad not None,
    float64_t margin=1.0,
    bint binary=False,
):
    """Weighted sum of the margin logistic loss and its gradient, in place.

    Low-level entry point: no validation beyond shapes and labels. Use
    :func:`mcsparse.loss.multiclass_logistic_loss` or the loss objects of
    :mod:`mcsparse.loss` from Python.

    Parameters
    ----------
    scores : ndarray of shape (n_samples, n_classes), float32 or float64, C order
    y : ndarray of shape (n_samples,), intp, values in ``[0, n_classes)``
        (in ``{0, 1}`` when ``binary``)
    sample_weight : ndarray of shape (n_samples,) of the dtype of ``scores``, or None
    grad : ndarray like ``scores``, overwritten with ``w_i * (p_i - e_{y_i})``
    margin : float, default=1.0
        The margin added to every wrong class's score: 1 is eq. (3); 0 is
        the plain soft-max (cross-entropy) loss, for two classes the binary
        logistic loss of the score difference.
    binary : bool, default=False
        The binary logistic loss ``log(1 + exp(s)) - y s`` of one score per
        row (``n_classes`` must be 1; ``margin`` is unused).

    Returns
    -------
    loss_sum : float
        ``sum_i w_i * loss_i``, accumulated in float64.
    """
    cdef float64_t total
    cdef bint weighted = sample_weight is not None
    cdef float64_t[::1] no_rows = None
    _check_entry(scores, y, sample_weight, grad, binary)
    with nogil:
        total = _loss_grad(scores, y, sample_weight, weighted, margin, binary, grad, no_rows,
                           0, scores.shape[0])
    return total


def loss_rows(
    const floating[:, ::1] scores not None,
    const intp_t[::1] y not None,
    floating[:, ::1] grad not None,
    float64_t[::1] loss not None,
    float64_t margin=1.0,
    bint binary=False,
):
    """Unweighted loss of each row and its gradient ``p_i - e_{y_i}``, in place.

    Low-level entry point for the selection rules, which weight the rows
    themselves; same conventions as :func:`loss_gradient`.

    Parameters
    ----------
    scores : ndarray of shape (n_rows, n_classes), float32 or float64, C order
    y : ndarray of shape (n_rows,), intp
    grad : ndarray like ``scores``, overwritten with ``p_i - e_{y_i}``
    loss : ndarray of shape (n_rows,), float64, overwritten with each row's loss
    margin : float, default=1.0
    binary : bool, default=False

    Returns
    -------
    loss_sum : float
        The sum of ``loss``.
    """
    cdef float64_t total
    cdef const floating[::1] unweighted = None
    if loss.shape[0] != scores.shape[0]:
        raise ValueError("loss must have one entry per row of scores")
    _check_entry(scores, y, unweighted, grad, binary)
    with nogil:
        total = _loss_grad(scores, y, unweighted, False, margin, binary, grad, loss,
                           0, scores.shape[0])
    return total


cdef class RowKernel:
    """The row kernel of a loss: what the fused pass and the loss objects call.

    A subclass implements ``rows`` (and ``n_labels`` when the labels are not
    the ``k`` classes); ``hessian_factors`` is the soft-max family's,
    overridden by a loss with another Hessian of the form ``diag(a) - a b^T``. The methods below run them on float64
    arrays for the loss objects (no validation beyond shapes and labels).
    """

    cdef intp_t n_labels(self, intp_t k) except -1:
        return k

    cdef float64_t rows(self, const float64_t[:, ::1] scores, const intp_t[::1] y,
                        const float64_t[::1] sample_weight, bint weighted,
                        float64_t[:, ::1] grad, float64_t[::1] per_row,
                        intp_t start, intp_t stop) noexcept nogil:
        return 0.0 / 0.0  # no loss: NaN, reported by the callers' checks

    cdef void hessian_factors(self, const float64_t* p, float64_t w, float64_t* a,
                              float64_t* b, intp_t k) noexcept nogil:
        """``w (diag(p) - p p^T) = diag(a) - a b^T``: the soft-max row Hessian, its one implementation."""
        cdef intp_t c
        for c in range(k):
            a[c] = w * p[c]
            b[c] = p[c]

    cdef int check(self, const intp_t[::1] y, intp_t k) except -1:
        cdef intp_t i, n_labels = self.n_labels(k)
        for i in range(y.shape[0]):
            if y[i] < 0 or y[i] >= n_labels:
                raise ValueError(f"label y[{i}]={y[i]} is outside [0, {n_labels})")
        return 0

    def raise_error(self):
        """Raise what the kernel kept from its last pass: nothing for a compiled kernel.

        A kernel that runs Python (``NumpyRowKernel``) keeps its function's
        exception during the pass, which cannot raise, and raises it here.
        """

    def loss_gradient(self, const float64_t[:, ::1] scores not None,
                      const intp_t[::1] y not None, const float64_t[::1] sample_weight,
                      float64_t[:, ::1] grad not None, float64_t[::1] per_row=None):
        """Weighted loss sum; ``grad`` overwritten with the rows ``w_i dl/ds_i``.

        ``per_row`` (n,), when given, receives each row's weighted loss.
        """
        cdef float64_t total
        cdef intp_t n = scores.shape[0]
        if (y.shape[0] != n or grad.shape[0] != n or grad.shape[1] != scores.shape[1]
                or (sample_weight is not None and sample_weight.shape[0] != n)
                or (per_row is not None and per_row.shape[0] != n)):
            raise ValueError("scores, y, sample_weight, grad and per_row have "
                             "inconsistent shapes")
        self.check(y, scores.shape[1])
        with nogil:
            total = self.rows(scores, y, sample_weight, sample_weight is not None, grad,
                              per_row, 0, n)
        return total

    def hessian_product(self, const float64_t[:, ::1] P not None,
                        const float64_t[::1] sample_weight, const float64_t[:, ::1] U not None,
                        float64_t[:, ::1] out not None):
        """``out[i] = w_i H_i U[i]``, ``H_i`` the row Hessian at the state ``P[i]``.

        ``w H u = a * u - a (b . u)`` from the factors ``diag(a) - a b^T``.
        """
        cdef intp_t i, c, n = P.shape[0], k = P.shape[1]
        cdef float64_t bu
        cdef float64_t* a
        cdef float64_t* b
        if (U.shape[0] != n or U.shape[1] != k or out.shape[0] != n or out.shape[1] != k
                or (sample_weight is not None and sample_weight.shape[0] != n)):
            raise ValueError("P, sample_weight, U and out have inconsistent shapes")
        a = <float64_t*> calloc(2 * k + 1, sizeof(float64_t))
        if a == NULL:
            raise MemoryError()
        b = a + k
        with nogil:
            for i in range(n):
                self.hessian_factors(&P[i, 0], sample_weight[i] if sample_weight is not None
                                     else 1.0, a, b, k)
                bu = 0.0
                for c in range(k):
                    bu += b[c] * U[i, c]
                for c in range(k):
                    out[i, c] = a[c] * U[i, c] - a[c] * bu
        free(a)

    def hessian_rows(self, const float64_t[:, ::1] P not None,
                     const float64_t[::1] sample_weight, const float64_t[:, ::1] V not None,
                     float64_t[:, ::1] out not None):
        """Every row's weighted Hessian, packed, times each of the vectors ``V``.

        ``out[i, j kk + t] = V[i, j] w_i H_i[c, c']`` for the ``t``-th pair
        ``c <= c'`` of ``numpy.triu_indices(k)``, ``kk = k (k + 1) / 2``: the
        rows whose products with the columns give the exact Hessian blocks of
        new columns (``V`` their values). With the factors of ``V[i, j] w_i H_i
        = diag(a) - a b^T``, the entry is ``a_c - a_c b_c`` on the diagonal and
        ``-a_c b_c'`` off it.
        """
        cdef intp_t n = P.shape[0], k = P.shape[1], q = V.shape[1], kk = k * (k + 1) // 2
        cdef intp_t i, j, c, d, t
        cdef float64_t scale
        cdef float64_t* a
        cdef float64_t* b
        if V.shape[0] != n or out.shape[0] != n or out.shape[1] != q * kk:
            raise ValueError("P, V and out have inconsistent shapes")
        if sample_weight is not None and sample_weight.shape[0] != n:
            raise ValueError("sample_weight has the wrong length")
        a = <float64_t*> calloc(2 * k + 1, sizeof(float64_t))
        if a == NULL:
            raise MemoryError()
        b = a + k
        with nogil:
            for i in range(n):
                for j in range(q):
                    scale = V[i, j] * (sample_weight[i] if sample_weight is not None else 1.0)
                    self.hessian_factors(&P[i, 0], scale, a, b, k)
                    t = j * kk
                    for c in range(k):
                        out[i, t] = a[c] - a[c] * b[c]
                        t += 1
                        for d in range(c + 1, k):
                            out[i, t] = -a[c] * b[d]
                            t += 1
        free(a)


cdef class LogisticKernel(RowKernel):
    """The kernel of the margin multiclass logistic loss, or of the binary one.

    Parameters
    ----------
    margin : float, default=1.0
        The margin of every wrong class (eq. 3 of [SWS2011]); unused when binary.
    binary : bool, default=False
        The binary logistic loss of one score per row, labels 0 and 1.
    """

    def __init__(self, float64_t margin=1.0, bint binary=False):
        self.margin = margin
        self.binary = binary

    cdef intp_t n_labels(self, intp_t k) except -1:
        if self.binary and k != 1:
            raise ValueError(f"the binary logistic loss takes one score per row, got {k}")
        return 2 if self.binary else k

    cdef float64_t rows(self, const float64_t[:, ::1] scores, const intp_t[::1] y,
                        const float64_t[::1] sample_weight, bint weighted,
                        float64_t[:, ::1] grad, float64_t[::1] per_row,
                        intp_t start, intp_t stop) noexcept nogil:
        return _loss_grad(scores, y, sample_weight, weighted, self.margin, self.binary, grad,
                          per_row, start, stop)


#: The packed soft-max Hessian rows (:meth:`RowKernel.hessian_rows`).
hessian_rows = LogisticKernel().hessian_rows
