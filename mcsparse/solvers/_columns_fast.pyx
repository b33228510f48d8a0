# Products with the dense selected columns of ShareBoost's refit, and the fused
# pass scores -> loss -> gradient over them.
#
# The columns are stored Fortran-ordered (n_rows, capacity), float32 or float64;
# their first p columns minus a per-column shift (the centring) are the matrix Xc
# of the products. Rows go in sub-blocks of about 256 KB of float64: a float32 (or
# shifted) sub-block is converted once into a float64 buffer that both products of
# the fused pass (scores, then gradient, around the loss's row kernel) read from
# cache, accumulating in float64 (dgemm); an unshifted float64 store is read in
# place. NumPy twins: mcsparse.solvers._columns and mcsparse.solvers._thresholds.

from libc.limits cimport INT_MAX
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset
from scipy.linalg.cython_blas cimport dgemm

import numpy as np

from mcsparse.loss._multiclass_logistic_fast cimport RowKernel
from mcsparse.utils._simd cimport mcs_simd_switch
from mcsparse.utils._typedefs cimport float64_t, intp_t


cdef extern from "_groups_kernel.h":
    enum: MCS_TILE
    enum: MCS_SUB
    void mcs_group_scores_any(const double* values, intp_t w, const intp_t* xrow,
                              const intp_t* orow, intp_t n, const double* Vp, intp_t n_tiles,
                              double* out, intp_t r) noexcept nogil
    void mcs_group_grad_any(const double* values, intp_t w, const intp_t* xrow, intp_t n,
                            const double* Mp, intp_t n_tiles, double* G,
                            double* XT, intp_t span) noexcept nogil

ctypedef fused store_t:
    float
    double


cdef intp_t _sub_rows(intp_t p) noexcept nogil:
    """Rows per sub-block: about 256 KB of float64 columns, 64 to 4096 rows."""
    cdef intp_t nb = 32768 // (p if p > 0 else 1)
    return 64 if nb < 64 else (4096 if nb > 4096 else nb)


cdef double* _load(const store_t[::1, :] X, intp_t i0, intp_t nb, intp_t p,
                   const double* shift, double* buf, int* ld) noexcept nogil:
    """Rows ``i0 .. i0 + nb`` of ``Xc`` as a column-major float64 block; sets ``ld``."""
    cdef intp_t r, j
    cdef double s = 0.0
    if store_t is double:
        if shift == NULL:
            ld[0] = <int> X.shape[0]
            return <double*> &X[i0, 0]
    for j in range(p):
        if shift != NULL:
            s = shift[j]
        for r in range(nb):
            buf[j * nb + r] = <double> X[i0 + r, j] - s
    ld[0] = <int> nb
    return buf


cdef void _add_rows(const double[:, ::1] M, intp_t start, intp_t stop,
                    double[::1] out) noexcept nogil:
    """``out += M[start:stop].sum(axis=0)``, row by row."""
    cdef intp_t i, c
    for i in range(start, stop):
        for c in range(M.shape[1]):
            out[c] += M[i, c]


cdef int _check(const store_t[::1, :] X, const double[::1] shift, intp_t p) except -1:
    if p < 0 or p > X.shape[1]:
        raise ValueError(f"p={p} is outside [0, {X.shape[1]}] (the stored columns)")
    if shift is not None and shift.shape[0] < p:
        raise ValueError(f"shift has {shift.shape[0]} entries, fewer than p={p}")
    return 0


cdef int _check_fused(intp_t n, intp_t p, const double[:, ::1] Wt, const double[::1] intercept,
                      const intp_t[::1] y, const double[::1] sample_weight, RowKernel kernel,
                      double[:, ::1] scores, double[:, ::1] residual, double[:, ::1] grad_Wt,
                      double[::1] grad_intercept, tuple inputs) except -1:
    """The fused passes' checks: shapes, labels, no output sharing memory with an input."""
    cdef intp_t k = Wt.shape[1]
    if (Wt.shape[0] != p or intercept.shape[0] != k or y.shape[0] != n or scores.shape[0] != n
            or scores.shape[1] != k or residual.shape[0] != n or residual.shape[1] != k
            or grad_Wt.shape[0] != p or grad_Wt.shape[1] != k or grad_intercept.shape[0] != k):
        raise ValueError("the arrays of the fused pass have inconsistent shapes")
    if sample_weight is not None and sample_weight.shape[0] != n:
        raise ValueError("sample_weight has the wrong length")
    kernel.check(y, k)
    _check_apart(inputs + ((Wt.base, "Wt"), (intercept.base, "intercept"), (y.base, "y"),
                           (None if sample_weight is None else sample_weight.base,
                            "sample_weight")),
                 ((scores.base, "scores"), (residual.base, "residual"),
                  (grad_Wt.base, "grad_Wt"), (grad_intercept.base, "grad_intercept")))
    return 0


def dense_matmul(const store_t[::1, :] X not None, const double[::1] shift, intp_t p,
                 const double[:, ::1] Vt not None, double[:, ::1] out not None):
    """``out = Xc[:, :p] @ Vt`` with ``Xc = X - shift``: (n_rows, r).

    Parameters
    ----------
    X : ndarray of shape (n_rows, capacity), float32 or float64, Fortran order
    shift : ndarray of shape (>= p,), float64, or None (no shift)
    p : int
        Columns used.
    Vt : ndarray of shape (p, r), float64, C order
    out : ndarray of shape (n_rows, r), float64, C order, overwritten
    """
    _check(X, shift, p)
    if Vt.shape[0] != p or out.shape[0] != X.shape[0] or out.shape[1] != Vt.shape[1]:
        raise ValueError("X, Vt and out have inconsistent shapes")
    cdef intp_t n = X.shape[0], nb, i0
    cdef int m_ = <int> Vt.shape[1], n_, k_ = <int> p, ld, ldv = <int> Vt.shape[1]
    cdef double one = 1.0, zero = 0.0
    cdef const double* sh = NULL if shift is None or shift.shape[0] == 0 else &shift[0]
    cdef double* buf
    cdef double* block
    if n == 0 or m_ == 0:
        return
    if p == 0:
        out[:, :] = 0.0
        return
    nb = _sub_rows(p)
    buf = <double*> malloc(nb * p * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    with nogil:
        i0 = 0
        while i0 < n:
            n_ = <int> (nb if i0 + nb <= n else n - i0)
            block = _load(X, i0, n_, p, sh, buf, &ld)
            # out[i0:i0+n_].T (r x n_) = Vt.T (r x p) @ block.T (p x n_)
            dgemm("N", "T", &m_, &n_, &k_, &one, <double*> &Vt[0, 0], &ldv,
                  block, &ld, &zero, &out[i0, 0], &m_)
            i0 += n_
    free(buf)


def dense_rmatmul(const store_t[::1, :] X not None, const double[::1] shift, intp_t p,
                  const double[:, ::1] M not None, double[:, ::1] out not None):
    """``out = Xc[:, :p].T @ M``: (p, r).

    Parameters
    ----------
    X : ndarray of shape (n_rows, capacity), float32 or float64, Fortran order
    shift : ndarray of shape (>= p,), float64, or None (no shift)
    p : int
        Columns used.
    M : ndarray of shape (n_rows, r), float64, C order
    out : ndarray of shape (p, r), float64, C order, overwritten
    """
    _check(X, shift, p)
    if M.shape[0] != X.shape[0] or out.shape[0] != p or out.shape[1] != M.shape[1]:
        raise ValueError("X, M and out have inconsistent shapes")
    cdef intp_t n = X.shape[0], nb, i0
    cdef int m_ = <int> M.shape[1], n_ = <int> p, k_, ld
    cdef double one = 1.0, beta = 0.0
    cdef const double* sh = NULL if shift is None or shift.shape[0] == 0 else &shift[0]
    cdef double* buf
    cdef double* block
    if p == 0 or m_ == 0:
        return
    if n == 0:
        out[:, :] = 0.0
        return
    nb = _sub_rows(p)
    buf = <double*> malloc(nb * p * sizeof(double))
    if buf == NULL:
        raise MemoryError()
    with nogil:
        i0 = 0
        while i0 < n:
            k_ = <int> (nb if i0 + nb <= n else n - i0)
            block = _load(X, i0, k_, p, sh, buf, &ld)
            # out.T (r x p) (+)= M[i0:i0+k_].T (r x k_) @ block (k_ x p)
            dgemm("N", "N", &m_, &n_, &k_, &one, <double*> &M[i0, 0], &m_,
                  block, &ld, &beta, &out[0, 0], &m_)
            beta = 1.0
            i0 += k_
    free(buf)


def dense_value_grad(const store_t[::1, :] X not None, const double[::1] shift, intp_t p,
                     const double[:, ::1] Wt not None, const double[::1] intercept not None,
                     const intp_t[::1] y not None, const double[::1] sample_weight,
                     RowKernel kernel not None, double[:, ::1] scores not None,
                     double[:, ::1] residual not None, double[:, ::1] grad_Wt not None,
                     double[::1] grad_intercept not None):
    """The fused pass: scores, loss and gradient of the rows of ``X``.

    ``scores = Xc[:, :p] @ Wt + intercept``; the loss's row kernel gives ``residual``
    (rows ``w_i dl/ds_i``) and the weighted loss sum; then ``grad_Wt = Xc[:, :p].T @
    residual`` and ``grad_intercept`` its column sums, a sub-block of rows at a time.

    Parameters
    ----------
    X : ndarray of shape (n_rows, capacity), float32 or float64, Fortran order
    shift : ndarray of shape (>= p,), float64, or None
    p : int
    Wt : ndarray of shape (p, n_scores), float64, C order
    intercept : ndarray of shape (n_scores,), float64
    y : ndarray of shape (n_rows,), intp, labels of the loss
    sample_weight : ndarray of shape (n_rows,), float64, or None
    kernel : RowKernel
        The loss's row kernel (``loss.kernel``).
    scores, residual : ndarray of shape (n_rows, n_scores), float64, C order, overwritten
    grad_Wt : ndarray of shape (p, n_scores), float64, C order, overwritten
    grad_intercept : ndarray of shape (n_scores,), float64, overwritten

    Returns
    -------
    loss_sum : float
        ``sum_i w_i l_i`` (not normalised).
    """
    _check(X, shift, p)
    cdef intp_t n = X.shape[0], k = Wt.shape[1], nb, i0, r, c
    _check_fused(n, p, Wt, intercept, y, sample_weight, kernel, scores, residual, grad_Wt,
                 grad_intercept, ((X.base, "X"),
                                  (shift.base if shift is not None else None, "shift")))
    cdef int k_ = <int> k, n_, p_ = <int> p, ld
    cdef double one = 1.0, zero = 0.0, beta = 0.0, total = 0.0
    cdef const double* sh = NULL if shift is None or shift.shape[0] == 0 else &shift[0]
    cdef double* buf = NULL
    cdef double* block = NULL
    cdef double[::1] no_rows = None
    grad_intercept[:] = 0.0
    nb = _sub_rows(p)
    if p > 0:
        grad_Wt[:, :] = 0.0
        buf = <double*> malloc(nb * p * sizeof(double))
        if buf == NULL:
            raise MemoryError()
    with nogil:
        i0 = 0
        while i0 < n:
            n_ = <int> (nb if i0 + nb <= n else n - i0)
            if p > 0:
                block = _load(X, i0, n_, p, sh, buf, &ld)
                dgemm("N", "T", &k_, &n_, &p_, &one, <double*> &Wt[0, 0], &k_,
                      block, &ld, &zero, &scores[i0, 0], &k_)
                for r in range(i0, i0 + n_):
                    for c in range(k):
                        scores[r, c] += intercept[c]
            else:
                for r in range(i0, i0 + n_):
                    for c in range(k):
                        scores[r, c] = intercept[c]
            total += kernel.rows(scores, y, sample_weight, sample_weight is not None,
                                 residual, no_rows, i0, i0 + n_)
            _add_rows(residual, i0, i0 + n_, grad_intercept)
            if p > 0:
                # grad_Wt.T (k x p) += residual[i0:].T (k x n_) @ block (n_ x p)
                dgemm("N", "N", &k_, &p_, &n_, &one, &residual[i0, 0], &k_,
                      block, &ld, &beta, &grad_Wt[0, 0], &k_)
                beta = 1.0
            i0 += n_
    free(buf)
    return total


# -- row-sparse groups ---------------------------------------------------------------
#
# A group is a tuple (first, rows, values) or (first, rows, values, indexed):
# columns first .. first + width of the store, non-zero on the local ``rows``
# (intp, in [0, n_rows); a repeated row counts once per occurrence, as in a sparse
# matrix with duplicates) only. ``values`` is float64, C order, of width columns:
# row i of the group is values[i] (a copy of the group's rows, len(rows) x width),
# or, when ``indexed`` is true, values[rows[i]] (a matrix the group shares with
# others, such as the training data of every anchor piece: no copy). The products
# are register-blocked C loops (_groups_kernel.h) that read the rows in place:
# BLAS runs these n x ~51 times ~51 x r shapes far below its peak, after a copy.
# The gradient gathers the rows of M MCS_SUB at a time into a buffer padded to
# whole tiles of scores. All without the GIL, so that the row blocks of a store
# run side by side on threads.

cdef struct _Group:
    intp_t index  # in the caller's list
    intp_t first
    intp_t n_rows
    intp_t width
    intp_t n_values
    bint indexed
    const intp_t* rows
    const double* values


cdef _Group* _pack_groups(list groups, intp_t p, intp_t n_out, list keep, intp_t* count,
                          intp_t* max_width, object out) except NULL:
    """The groups with ``first < p`` as a C array (checked); ``count`` and ``max_width``.

    ``max_width`` is the largest width of the packed groups (of the kernels'
    buffers). A group whose rows or values may share memory with ``out`` (the
    kernel's output, read while it is written) is refused. The rows are checked
    last, once no Python code (a group's ``__iter__``, an array's interface)
    can run and change them.

    ``keep`` receives the buffers the pointers read: the caller holds it until the
    computation ends (a group's items may be temporaries).
    """
    cdef tuple items = tuple(groups)  # a snapshot: the checks below run Python code
    cdef _Group* packed = <_Group*> malloc((len(items) + 1) * sizeof(_Group))
    cdef const intp_t[::1] rows
    cdef const double[:, ::1] values
    cdef intp_t i, j = 0, first, r, n_values
    cdef bint indexed
    cdef dict owners = {}
    if packed == NULL:
        raise MemoryError()
    max_width[0] = 0
    try:
        for i in range(len(items)):
            try:
                item = tuple(items[i])
                if len(item) == 3:
                    (first_obj, rows_obj, values_obj), indexed = item, False
                else:
                    first_obj, rows_obj, values_obj, indexed_obj = item
                    if not isinstance(indexed_obj, (bool, np.bool_)):
                        raise ValueError
                    indexed = indexed_obj
            except (TypeError, ValueError):
                raise ValueError(f"group {i} must be a (first, rows, values) triple or a "
                                 f"(first, rows, values, indexed: bool) tuple, got "
                                 f"{type(items[i]).__name__}") from None
            if isinstance(first_obj, bool) or not isinstance(first_obj, (int, np.integer)):
                raise TypeError(f"group {i}: first must be an integer, got "
                                f"{type(first_obj).__name__}")
            if not 0 <= first_obj <= INT_MAX:
                raise ValueError(f"group {i}: first={first_obj} is outside [0, {INT_MAX}]")
            first = first_obj
            if first >= p:
                continue
            if rows_obj is None or values_obj is None:
                raise ValueError(f"group {i}: rows and values must be arrays, got None")
            try:
                rows = rows_obj
                values = values_obj
            except (TypeError, ValueError) as exc:
                raise ValueError(f"group {i}: rows must be a 1-D intp array and values a "
                                 f"2-D C-contiguous float64 array ({exc})") from None
            keep.append(rows)
            keep.append(values)
            owners.setdefault(id(rows_obj), (i, "rows", rows_obj))
            owners.setdefault(id(values_obj), (i, "values", values_obj))
            if not indexed and values.shape[0] != rows.shape[0]:
                raise ValueError(f"group {i} has {rows.shape[0]} rows but values of "
                                 f"shape ({values.shape[0]}, {values.shape[1]})")
            if first + values.shape[1] > p:
                raise ValueError(f"group {i} (columns {first} to "
                                 f"{first + values.shape[1] - 1}) does not fit the first "
                                 f"p={p} columns")
            packed[j].index = i
            packed[j].first = first
            packed[j].n_rows = rows.shape[0]
            packed[j].width = values.shape[1]
            packed[j].n_values = values.shape[0]
            packed[j].indexed = indexed
            packed[j].rows = &rows[0] if rows.shape[0] else NULL
            packed[j].values = &values[0, 0] if values.shape[0] and values.shape[1] else NULL
            max_width[0] = max(max_width[0], values.shape[1])
            j += 1
        _check_apart(tuple((obj, f"group {i}'s {name}") for i, name, obj in owners.values()),
                     ((out, "out"),))
        for i in range(j):  # no Python code runs from here on
            n_values = packed[i].n_values
            for r in range(packed[i].n_rows):
                if packed[i].rows[r] < 0 or packed[i].rows[r] >= n_out:
                    raise ValueError(f"group {packed[i].index} has row {packed[i].rows[r]} "
                                     f"outside [0, {n_out})")
                if packed[i].indexed and packed[i].rows[r] >= n_values:
                    raise ValueError(f"group {packed[i].index} is indexed but has row "
                                     f"{packed[i].rows[r]} outside its {n_values} rows of "
                                     "values")
    except BaseException:
        free(packed)
        raise
    count[0] = j
    return packed


cdef _check_apart(tuple inputs, tuple outputs):
    """ValueError if an output may share memory with an input or another output.

    The kernels read their inputs (indices among them) while they write the
    outputs without the GIL: an overlap would change what they read.
    """
    cdef Py_ssize_t i
    for i in range(len(outputs)):
        out, out_name = outputs[i]
        for a, name in inputs + outputs[i + 1:]:
            if a is not None and np.may_share_memory(a, out):
                raise ValueError(f"{name} and {out_name} overlap in memory: the kernel "
                                 "needs distinct arrays")


def _groups_avx512(enable=None):
    """Whether the group products run their AVX-512 loops; ``enable=False`` stops them.

    The AVX-512 and AVX2 loops give the same bits (the tests compare them).
    Switching is for the tests and benchmarks (``mcs_simd_switch`` of
    mcsparse/utils/_simd.h): ``enable`` None only asks, True or False switches
    the loops on (where the CPU has AVX-512) or off; returns whether they run
    now. Not thread-safe while products run.
    """
    return bool(mcs_simd_switch(-1 if enable is None else bool(enable)))


cdef inline intp_t _n_tiles(intp_t r) noexcept nogil:
    return (r + MCS_TILE - 1) // MCS_TILE


def groups_matmul(list groups not None, const double[:, ::1] Vt not None,
                  double[:, ::1] out not None):
    """``out[rows] += values @ Vt[first:first + width]`` for each group with ``first < p``.

    Parameters
    ----------
    groups : list of tuple
        ``(first, rows, values)`` or ``(first, rows, values, indexed)``;
        ``rows`` intp, ``values`` float64, C order, (len(rows), width), or
        indexed by ``rows`` when ``indexed`` is true.
    Vt : ndarray of shape (p, r), float64, C order
    out : ndarray of shape (n_rows, r), float64, C order, added to
    """
    cdef intp_t p = Vt.shape[0], r = Vt.shape[1], count, g, j, c, w
    cdef intp_t n_tiles = _n_tiles(r), ld = MCS_TILE * n_tiles
    cdef double* Vp
    cdef const _Group* grp
    if out.shape[1] != Vt.shape[1]:
        raise ValueError("Vt and out have different numbers of columns")
    _check_apart(((Vt.base, "Vt"),), ((out.base, "out"),))
    cdef list keep = []
    cdef _Group* packed = _pack_groups(groups, p, out.shape[0], keep, &count, &w, out.base)
    Vp = <double*> calloc(w * ld + 1, sizeof(double))
    if Vp == NULL:
        free(packed)
        raise MemoryError()
    with nogil:
        for g in range(count):
            grp = &packed[g]
            if r == 0 or grp.width == 0 or grp.n_rows == 0:
                continue
            for j in range(grp.width):
                for c in range(r):
                    Vp[j * ld + c] = Vt[grp.first + j, c]
            mcs_group_scores_any(grp.values, grp.width, grp.rows if grp.indexed else NULL,
                             grp.rows, grp.n_rows, Vp, n_tiles, &out[0, 0], r)
    free(Vp)
    free(packed)


def groups_rmatmul(list groups not None, const double[:, ::1] M not None,
                   double[:, ::1] out not None):
    """``out[first:first + width] = values.T @ M[rows]`` for each group with ``first < p``.

    Parameters
    ----------
    groups : list of tuple
        As in :func:`groups_matmul`.
    M : ndarray of shape (n_rows, r), float64, C order
    out : ndarray of shape (p, r), float64, C order; the groups' rows of it
        are overwritten, the others left as they are
    """
    cdef intp_t p = out.shape[0], r = M.shape[1], count, g, i, j, c, j0, m, w
    cdef intp_t n_tiles = _n_tiles(r), ld = MCS_TILE * n_tiles
    cdef double* Mp
    cdef double* Gp
    cdef double* XT
    cdef const _Group* grp
    if out.shape[1] != M.shape[1]:
        raise ValueError("M and out have different numbers of columns")
    _check_apart(((M.base, "M"),), ((out.base, "out"),))
    cdef list keep = []
    cdef _Group* packed = _pack_groups(groups, p, M.shape[0], keep, &count, &w, out.base)
    Mp = <double*> calloc(MCS_SUB * ld + 1, sizeof(double))
    Gp = <double*> malloc((w * ld + 1) * sizeof(double))
    XT = <double*> malloc((MCS_SUB * (w + 3) + 1) * sizeof(double))
    if Mp == NULL or Gp == NULL or XT == NULL:
        free(Mp)
        free(Gp)
        free(XT)
        free(packed)
        raise MemoryError()
    with nogil:
        for g in range(count):
            grp = &packed[g]
            if r == 0 or grp.width == 0:
                continue
            memset(Gp, 0, grp.width * ld * sizeof(double))
            j0 = 0
            while j0 < grp.n_rows:
                m = min(<intp_t> MCS_SUB, grp.n_rows - j0)
                for i in range(m):
                    for c in range(r):
                        Mp[i * ld + c] = M[grp.rows[j0 + i], c]
                if grp.indexed:
                    mcs_group_grad_any(grp.values, grp.width, grp.rows + j0, m, Mp, n_tiles,
                                       Gp, XT, grp.n_values)
                else:
                    mcs_group_grad_any(grp.values + j0 * grp.width, grp.width, NULL, m, Mp,
                                       n_tiles, Gp, XT, m)
                j0 += m
            for j in range(grp.width):
                for c in range(r):
                    out[grp.first + j, c] = Gp[j * ld + c]
    free(Mp)
    free(Gp)
    free(XT)
    free(packed)


# -- threshold columns: nested stumps by prefix sums ---------------------------
#
# A threshold column is ``1[code_i <= cut] - shift``: a decision stump on the
# rank (or bin) codes of one feature, centred. The stumps of one feature
# sorted by cut form a *run*; a sample whose code lies above b of the run's
# cuts is in the run's stumps b, b + 1, ... only. Its *slot* in the run is b
# (``run_start[q] + q + b`` over all runs). So the scores that the run adds
# are one row of the suffix sums of its coefficients, and its gradient rows
# are running sums of M over the rows sorted by code, read where the codes
# pass each cut: O(n_rows * n_scores) a run, whatever the number of its stumps.

cdef enum:
    SLOT_LANES = 12  # scores summed in registers at a time (a row of the tables)

#: The kernels' tables and the padded residual have rows of the scores rounded
#: up to a multiple of this (``_thresholds.ThresholdIndex.pays`` sizes them).
SCORE_LANES = SLOT_LANES


cdef int _check_runs(const intp_t[::1] run_start, const intp_t[::1] cols,
                     const double[::1] shift, intp_t p, intp_t n_runs) except -1:
    cdef intp_t q, l, m = cols.shape[0]
    if run_start.shape[0] != n_runs + 1:
        raise ValueError(f"run_start must have {n_runs + 1} entries ({n_runs} runs), got "
                         f"{run_start.shape[0]}")
    if shift.shape[0] != m:
        raise ValueError("cols and shift must have the same length")
    if run_start[0] != 0 or run_start[n_runs] != m:
        raise ValueError(f"run_start must go from 0 to {m} (the stumps)")
    for q in range(n_runs):
        if run_start[q + 1] <= run_start[q]:
            raise ValueError("run_start must be increasing (every run has a stump)")
    for l in range(m):
        if cols[l] < 0 or cols[l] >= p:
            raise ValueError(f"cols[{l}]={cols[l]} is outside [0, p={p})")
    return 0


cdef double* _slot_table(intp_t n_rows_table, intp_t stride) except NULL:
    cdef double* table = <double*> calloc(n_rows_table * stride + 1, sizeof(double))
    if table == NULL:
        raise MemoryError()
    return table


cdef inline intp_t _stride(intp_t r) noexcept nogil:
    return (r + SLOT_LANES - 1) // SLOT_LANES * SLOT_LANES


cdef void _slots_add(const int[:, ::1] slots, const intp_t[::1] run_start,
                     const intp_t[::1] cols, const double[::1] shift,
                     const double[:, ::1] Vt, double[:, ::1] out, double* table) noexcept nogil:
    """The body of :func:`slots_matmul`; ``table`` zeroed, (m + n_runs) x stride."""
    cdef intp_t n = out.shape[0], r = Vt.shape[1], m = cols.shape[0], n_runs = slots.shape[1]
    cdef intp_t i, c, c0, w, l, q, b, stride = _stride(r)
    cdef size_t lo, length, u
    cdef double* row
    cdef double a[SLOT_LANES]
    cdef double centre
    for q in range(n_runs):  # suffix sums of each run
        row = table + (run_start[q] + q) * stride
        for b in range(run_start[q + 1] - run_start[q] - 1, -1, -1):
            for c in range(r):
                row[b * stride + c] = row[(b + 1) * stride + c] + Vt[cols[run_start[q] + b], c]
    for c in range(r):  # the centring, in the first run's rows: once per sample
        centre = 0.0
        for l in range(m):
            centre -= shift[l] * Vt[cols[l], c]
        for b in range(run_start[1] + 1):
            table[b * stride + c] += centre
    c0 = 0
    while c0 < r:
        w = min(<intp_t> SLOT_LANES, r - c0)
        for i in range(n):
            for c in range(SLOT_LANES):
                a[c] = 0.0
            for q in range(n_runs):
                # the slot, clamped to the run's rows without a branch (as unsigned,
                # a slot below them is above)
                lo = <size_t> (run_start[q] + q)
                length = <size_t> (run_start[q + 1] - run_start[q])
                u = <size_t> slots[i, q] - lo
                row = table + <intp_t> (lo + (u if u < length else length)) * stride + c0
                for c in range(SLOT_LANES):
                    a[c] += row[c]
            for c in range(w):
                out[i, c0 + c] += a[c]
        c0 += SLOT_LANES


cdef void _sorted_sums(const int[:, ::1] order, const intp_t[::1] ends,
                       const intp_t[::1] run_start, const intp_t[::1] cols,
                       const double[::1] shift, const double[:, ::1] M, double[:, ::1] out,
                       double* padded) noexcept nogil:
    """The body of :func:`sorted_rmatmul`; ``padded`` zeroed, (n + 1) x stride."""
    cdef intp_t n = M.shape[0], r = M.shape[1], n_runs = order.shape[0]
    cdef intp_t i, j, c, c0, l, q, stride = _stride(r)
    cdef size_t u, last = <size_t> (n - 1 if n else 0)
    cdef double* total = padded + n * stride
    cdef const double* src
    cdef double a[SLOT_LANES]
    for i in range(n):  # M's rows padded to the stride: constant-length inner loops
        for c in range(r):
            padded[i * stride + c] = M[i, c]
            total[c] += M[i, c]
    for q in range(n_runs):
        c0 = 0
        while c0 < r:
            for c in range(SLOT_LANES):
                a[c] = 0.0
            j = 0
            for l in range(run_start[q], run_start[q + 1]):
                while j < ends[l]:
                    u = <size_t> order[q, j]
                    src = padded + <intp_t> (u if u < last else last) * stride + c0
                    for c in range(SLOT_LANES):
                        a[c] += src[c]
                    j += 1
                for c in range(min(<intp_t> SLOT_LANES, r - c0)):
                    out[cols[l], c0 + c] = a[c] - shift[l] * total[c0 + c]
            c0 += SLOT_LANES


cdef int _check_sorted(const int[:, ::1] order, const intp_t[::1] ends,
                       const intp_t[::1] run_start, intp_t n) except -1:
    cdef intp_t q, l
    if order.shape[1] != n:
        raise ValueError(f"order has {order.shape[1]} rows per run, expected {n}")
    if ends.shape[0] != run_start[run_start.shape[0] - 1]:
        raise ValueError("cols and ends must have the same length")
    for q in range(order.shape[0]):
        for l in range(run_start[q], run_start[q + 1]):
            if ends[l] < 0 or ends[l] > n or (l > run_start[q] and ends[l] < ends[l - 1]):
                raise ValueError(f"ends must be non-decreasing in [0, {n}] within each run, "
                                 f"got ends[{l}]={ends[l]}")
    return 0


def slots_matmul(const int[:, ::1] slots not None, const intp_t[::1] run_start not None,
                 const intp_t[::1] cols not None, const double[::1] shift not None,
                 const double[:, ::1] Vt not None, double[:, ::1] out not None):
    """``out[i] += sum_q table[slots[i, q]]``: the scores of threshold columns.

    Run ``q`` holds the stumps ``run_start[q] .. run_start[q + 1] - 1`` of one
    feature, sorted by cut, and the table rows ``run_start[q] + q + b`` for
    b = 0 .. its length: row b is the sum of ``Vt[cols[l]]`` over the run's
    stumps from b on. The centring, ``-sum_l shift[l] Vt[cols[l]]``, is added
    to every row once.

    Parameters
    ----------
    slots : ndarray of shape (n_rows, n_runs), int32, C order
        Each row's table row in each run (clamped to the run's rows).
    run_start : ndarray of shape (n_runs + 1,), intp
        First stump of each run, from 0 to m.
    cols : ndarray of shape (m,), intp
        Each stump's column (row of ``Vt``).
    shift : ndarray of shape (m,), float64
        Each stump's centring.
    Vt : ndarray of shape (p, r), float64, C order
    out : ndarray of shape (n_rows, r), float64, C order, added to
    """
    cdef intp_t n = out.shape[0], r = Vt.shape[1], m = cols.shape[0]
    cdef double* table
    if out.shape[1] != r:
        raise ValueError("Vt and out have different numbers of columns")
    if slots.shape[0] != n:
        raise ValueError(f"slots has {slots.shape[0]} rows, expected {n}")
    _check_runs(run_start, cols, shift, Vt.shape[0], slots.shape[1])
    _check_apart(((slots.base, "slots"), (run_start.base, "run_start"), (cols.base, "cols"),
                  (shift.base, "shift"), (Vt.base, "Vt")), ((out.base, "out"),))
    if m == 0 or r == 0 or n == 0:
        return
    table = _slot_table(m + slots.shape[1], _stride(r))
    with nogil:
        _slots_add(slots, run_start, cols, shift, Vt, out, table)
    free(table)


def sorted_rmatmul(const int[:, ::1] order not None, const intp_t[::1] ends not None,
                   const intp_t[::1] run_start not None, const intp_t[::1] cols not None,
                   const double[::1] shift not None, const double[:, ::1] M not None,
                   double[:, ::1] out not None):
    """``out[cols[l]] = sum_{j < ends[l]} M[order[q, j]] - shift[l] sum_i M[i]``.

    The gradient rows of threshold columns: run ``q``'s rows sorted by code
    (``order[q]``), stump ``l`` of the run holds the first ``ends[l]`` of them
    (the codes at most its cut), so its row is a running sum of ``M`` over
    that order, read at ``ends[l]``.

    Parameters
    ----------
    order : ndarray of shape (n_runs, n_rows), int32, C order
        Each run's rows sorted by code (indices out of [0, n_rows) are clamped).
    ends : ndarray of shape (m,), intp
        Non-decreasing within each run, at most n_rows.
    run_start, cols, shift
        As in :func:`slots_matmul`.
    M : ndarray of shape (n_rows, r), float64, C order
    out : ndarray of shape (p, r), float64, C order; the stumps' rows are
        overwritten, the others left as they are
    """
    cdef intp_t n = M.shape[0], r = M.shape[1], m = cols.shape[0]
    cdef double* padded
    if out.shape[1] != r:
        raise ValueError("M and out have different numbers of columns")
    _check_runs(run_start, cols, shift, out.shape[0], order.shape[0])
    _check_sorted(order, ends, run_start, n)
    _check_apart(((order.base, "order"), (ends.base, "ends"), (run_start.base, "run_start"),
                  (cols.base, "cols"), (shift.base, "shift"), (M.base, "M")),
                 ((out.base, "out"),))
    if m == 0 or r == 0:
        return
    padded = _slot_table(n + 1, _stride(r))
    with nogil:
        _sorted_sums(order, ends, run_start, cols, shift, M, out, padded)
    free(padded)


def cuts_value_grad(const int[:, ::1] slots not None, const int[:, ::1] order not None,
                    const intp_t[::1] ends not None, const intp_t[::1] run_start not None,
                    const intp_t[::1] cols not None, const double[::1] shift not None,
                    const double[:, ::1] Wt not None, const double[::1] intercept not None,
                    const intp_t[::1] y not None, const double[::1] sample_weight,
                    RowKernel kernel not None, double[:, ::1] scores not None,
                    double[:, ::1] residual not None, double[:, ::1] grad_Wt not None,
                    double[::1] grad_intercept not None):
    """The fused pass over threshold columns: :func:`dense_value_grad`'s outputs.

    ``scores = intercept`` plus :func:`slots_matmul`; the loss kernel gives
    ``residual`` and the loss sum; :func:`sorted_rmatmul` of the residual
    gives ``grad_Wt`` (rows not in ``cols`` are zero).

    Parameters
    ----------
    slots, order, ends, run_start, cols, shift
        As in :func:`slots_matmul` and :func:`sorted_rmatmul`.
    Wt, intercept, y, sample_weight, kernel, scores, residual, grad_Wt, grad_intercept
        As in :func:`dense_value_grad`, with ``p = Wt.shape[0]``.

    Returns
    -------
    loss_sum : float
    """
    cdef intp_t n = scores.shape[0], k = Wt.shape[1], p = Wt.shape[0], r, c
    cdef double total
    cdef double* table
    cdef double* padded
    cdef double[::1] no_rows = None
    if slots.shape[0] != n or slots.shape[1] != order.shape[0]:
        raise ValueError("slots and order must have one row per row and per run")
    _check_runs(run_start, cols, shift, p, slots.shape[1])
    _check_sorted(order, ends, run_start, n)
    _check_fused(n, p, Wt, intercept, y, sample_weight, kernel, scores, residual, grad_Wt,
                 grad_intercept, ((slots.base, "slots"), (order.base, "order"),
                                  (ends.base, "ends"), (run_start.base, "run_start"),
                                  (cols.base, "cols"), (shift.base, "shift")))
    grad_intercept[:] = 0.0
    grad_Wt[:, :] = 0.0
    table = _slot_table(cols.shape[0] + slots.shape[1], _stride(k))
    padded = _slot_table(n + 1, _stride(k))
    with nogil:
        for r in range(n):
            for c in range(k):
                scores[r, c] = intercept[c]
        if cols.shape[0]:
            _slots_add(slots, run_start, cols, shift, Wt, scores, table)
        total = kernel.rows(scores, y, sample_weight, sample_weight is not None, residual,
                            no_rows, 0, n)
        _add_rows(residual, 0, n, grad_intercept)
        if cols.shape[0]:
            _sorted_sums(order, ends, run_start, cols, shift, residual, grad_Wt, padded)
    free(table)
    free(padded)
    return total
