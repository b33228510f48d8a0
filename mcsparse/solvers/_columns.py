"""Column stores: the matrices a linear objective of mcsparse multiplies by.

:class:`SelectedColumns` holds the columns ShareBoost has selected so far;
each round adds one candidate: one column, or a group of columns (§3.2 of
[SWS2011]_). Its rows are cut into fixed blocks (``row_block`` rows): every
product and the fused pass scores -> loss -> gradient are sums over the
blocks, computed in block order whatever the number of threads (results do
not depend on it), and the blocks are what a distributed store would keep on
its workers.

In a block, dense columns sit in one Fortran-ordered buffer: float32 when
every stored value is a float32 number (stumps, templates, float32 pixels;
half the memory traffic), float64 otherwise, centred on the fly or stored
centred (:mod:`mcsparse.solvers._columns_fast`). A group whose columns are
zero on most samples, such as an anchor point's piece ``1[||x - v|| <= r]
[x, 1]`` (§4.2), is kept as its non-zero rows only: the products then cost
``O(rows * width * n_scores)`` for it. Groups that are row subsets of one
matrix (the anchor pieces of ``[X, 1]``) keep their row indices and share
that matrix (``put_rows``): no copy of their values, which would hold about
half of the training data per piece. Decision stumps given as cuts of
integer codes (``put_cut``) are stored dense and noted by feature as well:
the fused pass then sums them feature by feature
(:mod:`mcsparse.solvers._thresholds`).

:class:`SparseColumns` is the fixed, possibly sparse, design of the
mixed-norm path.

Columns are numbered in selection order, ``0 .. n_columns - 1``; they are
the columns of ``W``. Products take and return coefficient matrices in the
transposed layout ``Wt`` of shape (n_columns, n_scores).
"""

import copy
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ..features._base import Cuts, Dense, RowSubset, TrainingBlock
from ..utils.validation import check_int, may_be_written
from ._columns_fast import (dense_matmul, dense_rmatmul, dense_value_grad, groups_matmul,
                              groups_rmatmul, cuts_value_grad)
from ._thresholds import ThresholdIndex, check_codes

# A group stays dense unless at most this fraction of its rows is non-zero.
SPARSE_ROW_FRACTION = 0.5
# Rows of a block: the unit of the sums (and of the threads' work).
ROW_BLOCK = 8192
# Dense columns are stored in float32 (when exact) only above this many
# values: below it they fit in cache anyway, and float64 columns stored
# centred are read in place, without the conversion of each block.
FLOAT32_MIN_VALUES = 2**21


def dense_matmul_numpy(X, shift, p, Vt):
    """NumPy twin of ``dense_matmul``: ``(X[:, :p] - shift[:p]) @ Vt`` in float64."""
    Xc = X[:, :p].astype(np.float64)
    if shift is not None:
        Xc -= shift[:p]
    return Xc @ Vt


def dense_rmatmul_numpy(X, shift, p, M):
    """NumPy twin of ``dense_rmatmul``: ``(X[:, :p] - shift[:p]).T @ M`` in float64."""
    Xc = X[:, :p].astype(np.float64)
    if shift is not None:
        Xc -= shift[:p]
    return Xc.T @ M


def dense_value_grad_numpy(X, shift, p, Wt, intercept, y, sample_weight, margin, binary):
    """NumPy twin of ``dense_value_grad``.

    Returns ``(loss_sum, scores, residual, grad_Wt, grad_intercept)``.
    """
    from ..loss._multiclass_logistic import loss_gradient_numpy

    scores = dense_matmul_numpy(X, shift, p, Wt) + intercept
    loss, residual = loss_gradient_numpy(scores, y, sample_weight, margin=margin,
                                         binary=binary)
    return (loss, scores, residual, dense_rmatmul_numpy(X, shift, p, residual),
            residual.sum(axis=0))


def _group_values(group, cols=slice(None)):
    """Columns ``cols`` of a group's values on its rows, indexed (``values[rows]``) or not."""
    _, rows, values, *indexed = group
    return values[rows, cols] if indexed and indexed[0] else values[:, cols]


def _group_parts(group):
    """``(first, rows, values of the rows)`` of a group, indexed or not."""
    return group[0], group[1], _group_values(group)


def groups_matmul_numpy(groups, Vt, out):
    """NumPy twin of ``groups_matmul``: ``out[rows] += values @ Vt[first:first + width]``.

    A repeated row adds once per occurrence (``np.add.at``), as in the kernel;
    an indexed group's values are ``values[rows]``.
    """
    p = Vt.shape[0]
    for group in groups:
        first, rows, values = _group_parts(group)
        if first < p:
            np.add.at(out, rows, values @ Vt[first:first + values.shape[1]])


def groups_rmatmul_numpy(groups, M, out):
    """NumPy twin of ``groups_rmatmul``: ``out[first:first + width] = values.T @ M[rows]``."""
    p = out.shape[0]
    for group in groups:
        first, rows, values = _group_parts(group)
        if first < p:
            out[first:first + values.shape[1]] = values.T @ M[rows]


def _check_real_2d(X, name):
    """``X`` as a 2-D float64 array of finite reals, or a TypeError/ValueError naming it."""
    X = np.asarray(X)
    if X.dtype == bool or X.dtype.kind not in "fiu":
        raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if X.ndim != 2:
        raise ValueError(f"{name} must have shape (n_samples, width), 2-D, got {X.shape}")
    return X.astype(np.float64, copy=False)


def _float32_exact(block):
    """Whether every value of the float64 ``block`` is a float32 number."""
    with np.errstate(over="ignore"):
        return bool(np.array_equal(block.astype(np.float32), block))


class _RowBlock:
    """Rows ``start .. stop`` of a store: its dense buffer and its row-sparse groups."""

    def __init__(self, start, stop, capacity, dtype):
        self.start, self.stop = start, stop
        self.dense = np.zeros((stop - start, capacity), dtype=dtype, order="F")
        # (first column, local rows, values (len(rows), width)), or
        # (first column, local rows, shared values (n_rows, width), True)
        self.groups = []


def _check_rows(rows, n_samples):
    """``rows`` as increasing intp indices in ``[0, n_samples)``, or a ValueError/TypeError."""
    rows = np.asarray(rows)
    if rows.ndim == 1 and rows.size == 0:
        return np.zeros(0, dtype=np.intp)
    if rows.dtype == bool or rows.dtype.kind not in "iu":
        raise TypeError(f"rows must hold integers, got dtype {rows.dtype}")
    if rows.ndim != 1:
        raise ValueError(f"rows must be 1-D, got shape {rows.shape}")
    if rows.size and (rows[0] < 0 or rows[-1] >= n_samples or np.any(np.diff(rows) <= 0)):
        raise ValueError(f"rows must be increasing sample indices in [0, {n_samples})")
    return rows.astype(np.intp, copy=False)


def check_block(block, start, n_samples, n_columns):
    """``block`` to put at column ``start`` of a store: finite, (n_samples, width)."""
    block = _check_real_2d(block, "block")
    if block.shape[0] != n_samples:
        raise ValueError(
            f"block must have shape (n_samples, width) = ({n_samples}, width), "
            f"got {block.shape}")
    if not np.isfinite(block).all():
        raise ValueError("block contains NaN or infinity")
    if not 0 <= check_int(start, "start") <= n_columns:
        raise ValueError(f"start={start} is outside [0, n_columns={n_columns}]")
    return block


def _check_weights(sample_weight, n_samples):
    """``sample_weight`` as finite non-negative float64 (n_samples,) with a positive sum."""
    if sample_weight is None:
        return None
    w = _check_real_2d(np.reshape(sample_weight, (-1, 1)), "sample_weight")[:, 0]
    if w.shape[0] != n_samples or np.ndim(sample_weight) != 1:
        raise ValueError(f"sample_weight must have shape ({n_samples},), got "
                         f"{np.shape(sample_weight)}")
    if not np.isfinite(w).all() or (w < 0).any() or (n_samples and not w.sum() > 0):
        raise ValueError("sample_weight must be finite, non-negative, with a positive sum")
    return w


def _sum_parts(parts):
    """The blocks' ``(value, grad, grad_intercept)`` summed, in block order."""
    return (sum(v for v, _, _ in parts), sum(g for _, g, _ in parts),
            sum(g for _, _, g in parts))


class ColumnStore:
    """Base of the column stores the objective reads (:class:`SelectedColumns`,
    :class:`SparseColumns`, ``DaskColumns``).

    A store holds the design's columns and runs the passes of
    :class:`~mcsparse.solvers._objective.LinearObjective` over them:
    ``value_grad``, ``matmul``, ``rmatmul`` and ``n_samples``. Anything else
    given to the objective is an array, put in a :class:`SelectedColumns`.
    """

    def map_rows(self, fn):
        """``fn(rows)`` for row slices that cover ``0 .. n_samples`` once, in order.

        For row-local work beside the store's passes (per-row Hessians):
        :class:`SelectedColumns` runs its row blocks on its threads; here one
        slice of all rows.

        Parameters
        ----------
        fn : callable
            Called with a ``slice``; its results are returned in row order.

        Returns
        -------
        results : list
        """
        return [fn(slice(0, self.n_samples))]

    def rmatmul_filled(self, fill, width, p):
        """``X[:, :p].T @ M`` and the column sums of ``M``, whose rows ``fill`` writes.

        For a wide ``M`` that is row-local work (the per-row Hessian blocks of
        :meth:`~mcsparse.solvers._objective.LinearObjective.hessian_columns`):
        :class:`SelectedColumns` fills and multiplies it one row block at a
        time, on its threads, so that the whole ``M`` never exists; here it is
        filled whole, then multiplied by :meth:`rmatmul`.

        Parameters
        ----------
        fill : callable
            ``fill(rows, out)`` writes the rows ``rows`` (a ``slice``) of ``M``
            into ``out``, a float64 C-ordered array of shape (rows, width).
        width : int
            Columns of ``M``.
        p : int
            Columns of the store used.

        Returns
        -------
        product : ndarray of shape (p, width)
        sums : ndarray of shape (width,)
        """
        M = np.empty((self.n_samples, width))
        self.map_rows(lambda rows: fill(rows, M[rows]))
        # M.sum, not a BLAS matrix-vector product: OpenBLAS splits its rows
        # between threads, so the sums would depend on the BLAS pool's size
        return self.rmatmul(M, p), M.sum(axis=0)


class SelectedColumns(ColumnStore):
    """Growing store of the selected columns, dense or row-sparse, in row blocks.

    Parameters
    ----------
    n_samples : int
        Rows of every column.
    capacity : int
        Initial number of dense columns (the buffers double when full).
    n_threads : int, default=1
        Threads sharing the row blocks (each block's products run in
        compiled code without the GIL). Results do not depend on it.
    row_block : int, default=ROW_BLOCK
        Rows per block (8192): the unit of the sums, fixed whatever the
        thread count, so that the sums do not depend on it.

    Attributes
    ----------
    n_columns : int
        Columns stored, the width of ``W``.
    shift : ndarray of shape (n_columns,)
        The (weighted) mean removed from each dense column when stored with
        ``center=True``; zero for row-sparse groups, which are not centred
        (centring would fill them in).
    scale : ndarray of shape (n_columns,)
        The largest absolute value of each stored (centred) column: a step
        ``d`` of the coefficients moves no score by more than
        ``sum_j |d_j| scale_j``.
    dtype : dtype
        Storage of the dense columns, float32 or float64.
    """

    def __init__(self, n_samples, capacity, n_threads=1, row_block=ROW_BLOCK):
        self.n_samples = check_int(n_samples, "n_samples", low=0)
        self.n_threads = check_int(n_threads, "n_threads", low=1)
        capacity = max(1, check_int(capacity, "capacity", low=0))
        row_block = check_int(row_block, "row_block", low=1)
        large = self.n_samples * capacity >= FLOAT32_MIN_VALUES
        self.dtype = np.dtype(np.float32 if large else np.float64)
        n_blocks = max(1, -(-self.n_samples // int(row_block)))
        edges = np.linspace(0, self.n_samples, n_blocks + 1).astype(np.intp)
        self._blocks = [_RowBlock(int(a), int(b), capacity, self.dtype)
                        for a, b in zip(edges[:-1], edges[1:])]
        self._dense_cols = np.zeros(0, dtype=np.intp)  # W column of each dense column
        self._thresholds = ThresholdIndex()  # the stumps among them
        self._pool = None
        self.shift = np.zeros(0)
        self.scale = np.zeros(0)
        self.n_columns = 0

    @classmethod
    def from_dense(cls, X, n_threads=1):
        """All columns of the 2-D array ``X``, stored as they are (not centred).

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_columns)
            Real values.
        n_threads : int, default=1
            Threads sharing the row blocks.

        Returns
        -------
        store : SelectedColumns
        """
        if sp.issparse(X):
            raise TypeError("X must be a dense array (a sparse matrix goes in SparseColumns)")
        X = _check_real_2d(X, "X")
        store = cls(X.shape[0], X.shape[1], n_threads=n_threads)
        if X.shape[1]:
            store.put(X, 0)
        return store

    @property
    def n_groups(self):
        """Number of row-sparse groups stored."""
        return len(self._blocks[0].groups)

    def copy(self, *, share_buffers=False):
        """An independent copy; with ``share_buffers``, one that may only grow.

        With ``share_buffers`` the copy reads the same dense buffers, without
        copying them: the copy may then only append columns (``put`` at
        ``n_columns``), which writes past the columns this store reads, or
        into new buffers when the old ones are full; this store must not take
        columns after that (its appended columns would overwrite the copy's).
        A ``DaskColumns`` chunk store grows so by one column a round, as a
        pure task: without the sharing every round would copy the whole
        chunk store.
        """
        memo = {id(b.dense): b.dense for b in self._blocks} if share_buffers else {}
        return copy.deepcopy(self, memo)

    def __getstate__(self):  # the thread pool does not pickle
        state = self.__dict__.copy()
        state["_pool"] = None
        return state

    # -- storing -------------------------------------------------------------

    def put(self, block, start, *, center=False, sample_weight=None, shift=None):
        """Store ``block`` (n_samples, width) as columns ``start ..``.

        Columns from ``start`` on are dropped first, so that a candidate can
        be tried in the same place again (the "full" selection rule). A
        group of two or more columns that is non-zero on at most half of the
        samples is kept as its non-zero rows; other columns go to the dense
        buffers, centred when ``center`` (the intercept absorbs the shift).

        A family's typed block
        (:class:`~mcsparse.features._base.TrainingBlock`) is kept as its type
        allows: a ``Dense`` block as its values, a ``RowSubset`` by reference
        to its shared values (:meth:`put_rows`), ``Cuts`` as a stump with its
        codes (:meth:`put_cut`).

        Parameters
        ----------
        block : ndarray of shape (n_samples, width), Dense, RowSubset or Cuts
            The columns, finite reals.
        start : int
            Index of the first column, at most ``n_columns``.
        center : bool, default=False
            Remove the (weighted) mean of dense columns.
        sample_weight : ndarray of shape (n_samples,), default=None
            Weights of the mean.
        shift : ndarray of shape (width,), default=None
            Given means: the columns are stored dense, centred by ``shift``
            (a chunk of rows of a distributed store, centred like the whole
            columns; ``center`` is then ignored; a typed block is then
            stored as its dense columns).

        Raises
        ------
        ValueError, TypeError
            If the block is not finite reals of shape (n_samples, width), or
            ``start``, ``sample_weight`` or ``shift`` is invalid (for a
            ``RowSubset`` or ``Cuts``: as :meth:`put_rows`, :meth:`put_cut`);
            the store is then left as it was.
        """
        if isinstance(block, Dense):
            block = block.values
        elif isinstance(block, TrainingBlock):
            if shift is None:
                return self._put_typed(block, start, center=center,
                                       sample_weight=sample_weight)
            block = block.toarray()
        block = check_block(block, start, self.n_samples, self.n_columns)
        sample_weight = _check_weights(sample_weight, self.n_samples)
        width = block.shape[1]
        rows = None
        if width > 1 and shift is None:
            nonzero = np.flatnonzero(np.any(block != 0, axis=1))
            if nonzero.size <= SPARSE_ROW_FRACTION * self.n_samples:
                rows = nonzero
        if rows is not None:
            shift = np.zeros(width)
        elif shift is None:
            shift = (np.average(block, axis=0, weights=sample_weight) if center
                     else np.zeros(width))
        shift = np.asarray(shift, dtype=np.float64)
        if shift.shape != (width,) or not np.isfinite(shift).all():
            raise ValueError(f"shift must be {width} finite values, got shape {shift.shape}")
        # every check is done: only now is the store changed
        self._truncate(start)
        if rows is not None:
            self._put_group(rows, start, lambda b, local: (np.ascontiguousarray(block[local]),))
        else:
            self._put_dense(block, shift, start)
        self._append_scales(shift, np.abs(block - shift).max(axis=0, initial=0.0), start)

    def _put_typed(self, block, start, **kw):
        """A ``RowSubset`` or ``Cuts`` block, by the method that keeps it as it is.

        A store without that method (a subclass that removes it) keeps the
        block's dense columns, as ``put`` of an array does.
        """
        if isinstance(block, RowSubset):
            keep, parts = getattr(self, "put_rows", None), (block.rows, block.values)
        elif isinstance(block, Cuts):
            keep, parts = getattr(self, "put_cut", None), (block.codes, block.cut)
        else:
            raise TypeError(f"block must be an array, Dense, RowSubset or Cuts, got "
                            f"{type(block).__name__}")
        if keep is None:
            return self.put(block.toarray(), start, **kw)
        return keep(*parts, start, **kw)

    def _append_scales(self, shift, scale, start):
        self.shift = np.concatenate([self.shift[:start], shift])
        self.scale = np.concatenate([self.scale[:start], scale])
        self.n_columns = start + shift.size

    def put_rows(self, rows, values, start, *, center=False, sample_weight=None):
        """Store the group equal to ``values`` on ``rows`` and zero elsewhere, from ``start``.

        The same columns as ``put`` of the dense block, but a row-sparse group
        keeps references to ``values`` (one view per row block) instead of a
        copy of its rows: the groups of a family whose candidates are row
        subsets of one matrix (the anchor pieces' ``[X, 1]``, §4.2) share it.
        A group on more than half of the samples, or a single column, is
        stored dense through ``put``, as ``put`` would store it.

        Parameters
        ----------
        rows : ndarray of shape (n_rows,)
            Increasing sample indices, integers in ``[0, n_samples)``.
        values : ndarray of shape (n_samples, width)
            Finite reals, float64, C-contiguous and read-only, with every
            array it views (kept by reference, not copied).
        start : int
            Index of the first column, at most ``n_columns``.
        center, sample_weight
            As in ``put``, for a group stored dense.

        Raises
        ------
        ValueError, TypeError
            If ``rows`` is not increasing in range, ``values`` is not a
            finite, read-only float64 C-contiguous (n_samples, width) array,
            or ``start`` or ``sample_weight`` is invalid; the store is then
            left as it was.
        """
        rows = _check_rows(rows, self.n_samples)
        if not (isinstance(values, np.ndarray) and values.dtype == np.float64
                and values.flags.c_contiguous and values.ndim == 2):
            raise TypeError("values must be a C-contiguous 2-D float64 array")
        if may_be_written(values):
            raise ValueError("values must be read-only (it and the arrays it views): the "
                             "store keeps a reference to it, not a copy; put stores a copy")
        values = check_block(values, start, self.n_samples, self.n_columns)
        sample_weight = _check_weights(sample_weight, self.n_samples)
        width = values.shape[1]
        if width < 2 or rows.size > SPARSE_ROW_FRACTION * self.n_samples:
            block = np.zeros_like(values)
            block[rows] = values[rows]
            return self.put(block, start, center=center, sample_weight=sample_weight)
        self._truncate(start)
        self._put_group(rows, start, lambda b, local: (values[b.start:b.stop], True))
        self._append_scales(np.zeros(width), np.abs(values[rows]).max(axis=0, initial=0.0),
                            start)

    def put_cut(self, codes, cut, start, *, center=False, sample_weight=None):
        """Store the decision stump ``1[codes <= cut]`` as column ``start``.

        The column is stored dense, as ``put`` stores it; the store also keeps
        a reference to ``codes`` and the cut. When all the columns a fused
        pass uses are such stumps, :meth:`value_grad` sums them by feature
        (:mod:`mcsparse.solvers._thresholds`): the stumps of one feature
        (the same ``codes``) cost about one column.

        Parameters
        ----------
        codes : ndarray of shape (n_samples,), int32
            Non-negative integer codes of one feature (its value ranks or
            bins), read-only with the array it views (kept by reference).
        cut : int
            Non-negative, at most 2**31 - 1.
        start : int
            Index of the column, at most ``n_columns``.
        center, sample_weight
            As in ``put``.

        Raises
        ------
        ValueError, TypeError
            If ``codes`` is not a read-only (n_samples,) int32 array of
            non-negative codes, ``cut`` is not a non-negative int32, or
            ``start`` or ``sample_weight`` is invalid; the store is then left
            as it was.
        """
        codes = check_codes(codes, self.n_samples)
        cut = check_int(cut, "cut", low=0, high=np.iinfo(np.int32).max)
        self.put((codes <= cut).astype(np.float64)[:, None], start, center=center,
                 sample_weight=sample_weight)
        self._thresholds.add(codes, cut, start)

    def _put_group(self, rows, start, stored):
        """Split the group on ``rows`` over the blocks; ``stored(b, local)`` gives its values."""
        for b in self._blocks:
            lo, hi = np.searchsorted(rows, [b.start, b.stop])
            local = rows[lo:hi]
            b.groups.append((start, local - b.start, *stored(b, local)))

    def _put_dense(self, block, shift, start):
        if self.dtype == np.float32 and not _float32_exact(block):
            self._to_float64()
        n_dense, width = self._dense_cols.size, block.shape[1]
        for b in self._blocks:
            if n_dense + width > b.dense.shape[1]:
                grown = np.zeros((b.stop - b.start, max(2 * b.dense.shape[1], n_dense + width)),
                                 dtype=self.dtype, order="F")
                grown[:, :n_dense] = b.dense[:, :n_dense]
                b.dense = grown
            rows = block[b.start:b.stop]
            # float64 columns are stored centred; float32 ones raw, centred on the fly
            b.dense[:, n_dense:n_dense + width] = rows - shift if self.dtype == np.float64 else rows
        self._dense_cols = np.concatenate(
            [self._dense_cols, np.arange(start, start + width, dtype=np.intp)])

    def _to_float64(self):
        """Store the dense columns in float64, centred."""
        n_dense = self._dense_cols.size
        dense_shift = self.shift[self._dense_cols]
        for b in self._blocks:
            wide = np.zeros(b.dense.shape, order="F")
            wide[:, :n_dense] = b.dense[:, :n_dense] - dense_shift
            b.dense = wide
        self.dtype = np.dtype(np.float64)

    def _truncate(self, start):
        self._thresholds.truncate(start)
        keep = int(np.count_nonzero(self._dense_cols < start))
        self._dense_cols = self._dense_cols[:keep]
        for b in self._blocks:
            b.groups = [g for g in b.groups if g[0] < start]
        self.shift = self.shift[:start]
        self.scale = self.scale[:start]
        self.n_columns = min(self.n_columns, start)

    # -- reading ---------------------------------------------------------------

    def column(self, j):
        """Column ``j`` as the products see it (centred), float64 of shape (n_samples,).

        Parameters
        ----------
        j : int
            Column index.

        Returns
        -------
        column : ndarray of shape (n_samples,)
        """
        j = check_int(j, "j", low=0)
        if j >= self.n_columns:
            raise ValueError(f"j={j} is outside [0, n_columns={self.n_columns})")
        out = np.zeros(self.n_samples)
        pos = np.searchsorted(self._dense_cols, j)
        if pos < self._dense_cols.size and self._dense_cols[pos] == j:
            for b in self._blocks:
                out[b.start:b.stop] = b.dense[:, pos]
            if self.dtype == np.float32:
                out -= self.shift[j]
            return out
        for b in self._blocks:
            for group in b.groups:
                first, rows, values = group[:3]
                if first <= j < first + values.shape[1]:  # the one column only
                    out[b.start + rows] = _group_values(group, j - first)
        return out

    def _check_p(self, p, name):
        """``p``, the number of columns a product uses, checked against the store."""
        p = check_int(p, name)
        if not 0 <= p <= self.n_columns:
            raise ValueError(f"{name} uses p={p} columns, outside [0, n_columns="
                             f"{self.n_columns}] (coefficients must be (p, r), 2-D)")
        return p

    @property
    def _block_rows(self):
        """Rows of the largest row block."""
        return max(b.stop - b.start for b in self._blocks)

    def _dense_part(self, p):
        """(dense columns among the first p, their W rows as a slice or index array, shift)."""
        n_dense = int(np.count_nonzero(self._dense_cols < p))
        cols = self._dense_cols[:n_dense]
        where = slice(0, n_dense) if n_dense == 0 or cols[-1] == n_dense - 1 else cols
        shift = self.shift[cols] if self.dtype == np.float32 else None
        return n_dense, where, shift

    def map_rows(self, fn):
        """``fn(rows)`` for each row block's slice, on the store's threads, in row order.

        Parameters
        ----------
        fn : callable
            Called with a ``slice`` of rows.

        Returns
        -------
        results : list
            One per row block.
        """
        return self._map(lambda b: fn(slice(b.start, b.stop)))

    def _map(self, work, items=None):
        """``[work(item) for item in items]`` (the blocks), on threads when there are several."""
        items = self._blocks if items is None else items
        if self.n_threads < 2 or len(items) < 2:
            return [work(item) for item in items]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n_threads)
        return list(self._pool.map(work, items))

    def matmul(self, Vt, out):
        """``out = X[:, :p] @ Vt`` for ``Vt`` of shape (p, r); returns ``out`` (n_samples, r).

        Parameters
        ----------
        Vt : ndarray of shape (p, r)
            Coefficients on the first ``p`` columns, float64.
        out : ndarray of shape (n_samples, r)
            Output, float64, C order.

        Returns
        -------
        out : ndarray of shape (n_samples, r)
        """
        Vt = np.ascontiguousarray(Vt, dtype=np.float64)
        p = self._check_p(Vt.shape[0] if Vt.ndim == 2 else -1, "Vt")
        n_dense, where, shift = self._dense_part(p)
        Vd = np.ascontiguousarray(Vt[where])

        def work(b):
            part = out[b.start:b.stop]
            dense_matmul(b.dense, shift, n_dense, Vd, part)
            self._groups_matmul(b, Vt, part)

        self._map(work)
        return out

    def rmatmul(self, M, p):
        """``X[:, :p].T @ M`` for ``M`` of shape (n_samples, r): shape (p, r).

        Parameters
        ----------
        M : ndarray of shape (n_samples, r)
            Float64, C order.
        p : int
            Columns used.

        Returns
        -------
        product : ndarray of shape (p, r)
        """
        M = np.ascontiguousarray(M, dtype=np.float64)
        p = self._check_p(p, "p")
        if M.ndim != 2 or M.shape[0] != self.n_samples:
            raise ValueError(f"M must have shape ({self.n_samples}, r), got {M.shape}")
        dense_part = self._dense_part(p)

        def work(b):
            return self._block_rmatmul(b, M[b.start:b.stop], p, dense_part)

        return sum(self._map(work)) if p else np.zeros((0, M.shape[1]))

    def _block_rmatmul(self, b, M, p, dense_part):
        """Block ``b``'s part of ``X[:, :p].T @ M``, ``M`` its rows; ``dense_part``
        is :meth:`_dense_part` of ``p``."""
        n_dense, where, shift = dense_part
        part, dense = np.zeros((p, M.shape[1])), np.empty((n_dense, M.shape[1]))
        dense_rmatmul(b.dense, shift, n_dense, M, dense)
        part[where] = dense
        self._groups_rmatmul(b, M, part)
        return part

    def rmatmul_filled(self, fill, width, p):
        """:meth:`ColumnStore.rmatmul_filled`, one row block at a time on the threads.

        Each block's rows of ``M`` are filled and multiplied while they are
        in cache; the blocks' parts are added in block order, as
        :meth:`rmatmul` adds them (the same bits on any number of threads).
        """
        p = self._check_p(p, "p")
        dense_part = self._dense_part(p)

        def work(b):
            M = np.empty((b.stop - b.start, width))
            fill(slice(b.start, b.stop), M)
            # the column sums by NumPy, not BLAS: the same bits on any BLAS pool
            return self._block_rmatmul(b, M, p, dense_part), M.sum(axis=0)

        parts = self._map(work)
        return sum(part for part, _ in parts), sum(sums for _, sums in parts)

    def value_grad(self, Wt, intercept, loss, y, sample_weight, scores, residual):
        """The fused pass: loss sum and gradient at ``scores = X[:, :p] @ Wt + intercept``.

        Parameters
        ----------
        Wt : ndarray of shape (p, n_scores)
            Coefficients on the first ``p`` columns.
        intercept : ndarray of shape (n_scores,)
        loss : Loss
            A loss of :mod:`mcsparse.loss` (its row kernel runs in the fused pass).
        y : ndarray of shape (n_samples,), intp
        sample_weight : ndarray of shape (n_samples,) or None
        scores, residual : ndarray of shape (n_samples, n_scores)
            Overwritten with the scores and the rows ``w_i dl/ds_i``.

        Returns
        -------
        loss_sum : float
            ``sum_i w_i l_i``.
        grad_Wt : ndarray of shape (p, n_scores)
            ``X[:, :p].T @ residual``.
        grad_intercept : ndarray of shape (n_scores,)
            The column sums of ``residual``.
        """
        Wt = np.ascontiguousarray(Wt, dtype=np.float64)
        p = self._check_p(Wt.shape[0] if Wt.ndim == 2 else -1, "Wt")
        k = Wt.shape[1]
        intercept = np.ascontiguousarray(intercept, dtype=np.float64)
        if self._thresholds.pays(p, self._block_rows, k):
            return self._cuts_value_grad(Wt, intercept, loss, y, sample_weight, scores,
                                         residual)
        n_dense, where, shift = self._dense_part(p)
        Vd = np.ascontiguousarray(Wt[where])
        kernel = loss.kernel

        def work(b):
            rows = slice(b.start, b.stop)
            w = None if sample_weight is None else sample_weight[rows]
            grad = np.zeros((p, k))
            dense, g_b = np.empty((n_dense, k)), np.empty(k)
            groups = [g for g in b.groups if g[0] < p]
            if not groups:
                value = dense_value_grad(b.dense, shift, n_dense, Vd, intercept, y[rows], w,
                                         kernel, scores[rows],
                                         residual[rows], dense, g_b)
            else:  # row-sparse groups add to the scores first
                dense_matmul(b.dense, shift, n_dense, Vd, scores[rows])
                self._groups_matmul(b, Wt, scores[rows])
                scores[rows] += intercept
                value = loss.sum_gradient(scores[rows], y[rows], w, residual[rows])
                dense_rmatmul(b.dense, shift, n_dense, residual[rows], dense)
                self._groups_rmatmul(b, residual[rows], grad)
                g_b = residual[rows].sum(axis=0)
            grad[where] = dense
            return value, grad, g_b

        parts = _sum_parts(self._map(work))
        loss.raise_kernel_error()
        return parts

    def _cuts_value_grad(self, Wt, intercept, loss, y, sample_weight, scores, residual):
        """``value_grad`` when the first ``p`` columns are all stumps: sums by feature."""
        p, k = Wt.shape
        kernel = loss.kernel

        def work(item):
            b, (slots, run_start, cols, shift, order, ends) = item
            rows = slice(b.start, b.stop)
            w = None if sample_weight is None else sample_weight[rows]
            grad, g_b = np.empty((p, k)), np.empty(k)
            value = cuts_value_grad(slots, order, ends, run_start, cols, shift, Wt, intercept,
                                    y[rows], w, kernel, scores[rows],
                                    residual[rows], grad, g_b)
            return value, grad, g_b

        parts = _sum_parts(self._map(work, self._prepared_cuts(p)))
        loss.raise_kernel_error()
        return parts

    def _prepared_cuts(self, p):
        """``(block, its runs' arrays)`` pairs of the first ``p`` columns, all stumps."""
        return list(zip(self._blocks, self._thresholds.prepare(p, self._blocks, self.shift)))

    @staticmethod
    def _groups_matmul(b, Vt, out):
        if b.groups:
            groups_matmul(b.groups, Vt, out)

    @staticmethod
    def _groups_rmatmul(b, M, out):
        if b.groups:
            groups_rmatmul(b.groups, np.ascontiguousarray(M), out)


class SparseColumns(ColumnStore):
    """``X - 1 mu^T`` for a sparse (CSC) ``X`` without forming it: the mixed-norm design.

    With an intercept, ``W x + b = W (x - mu) + (b + W mu)`` and the penalty
    does not involve ``b``: solving on centred columns is the same problem,
    much better conditioned for positive features (the pairwise products).
    Sparse data stays sparse and the offset is applied in the products
    (dense data goes to :meth:`SelectedColumns.from_dense`, centred).

    Parameters
    ----------
    X : sparse matrix of shape (n_samples, n_columns)
        CSC, float64.
    mu : ndarray of shape (n_columns,) or None
        Column offsets.
    """

    def __init__(self, X, mu):
        if not sp.issparse(X):
            raise TypeError(f"X must be a sparse matrix, got {type(X).__name__}")
        if X.dtype == bool or X.dtype.kind not in "fiu":
            raise TypeError(f"X must hold real numbers, got dtype {X.dtype}")
        self.X = sp.csc_matrix(X, dtype=np.float64)
        if not np.isfinite(self.X.data).all():
            raise ValueError("X contains NaN or infinity")
        self.n_samples, self.n_columns = self.X.shape
        if mu is not None:
            mu = np.asarray(mu, dtype=np.float64)
            if mu.shape != (self.n_columns,) or not np.isfinite(mu).all():
                raise ValueError(f"mu must hold {self.n_columns} finite offsets, "
                                 f"got shape {mu.shape}")
        self.mu = mu
        # the largest |x_ij - mu_j| is at the column's extremes or at a zero
        top = abs(self.X).max(axis=0).toarray().ravel() if self.n_samples else 0.0
        self.scale = top + (0.0 if mu is None else np.abs(mu))

    _check_p = SelectedColumns._check_p

    def _first(self, p):
        """``(X[:, :p], mu[:p])``."""
        if p == self.n_columns:
            return self.X, self.mu
        return self.X[:, :p], None if self.mu is None else self.mu[:p]

    def take(self, cols):
        """The columns ``cols``, as a new design."""
        return SparseColumns(self.X[:, cols], None if self.mu is None else self.mu[cols])

    def column(self, j):
        """Column ``j`` minus its offset, float64 of shape (n_samples,)."""
        j = check_int(j, "j", low=0)
        if j >= self.n_columns:
            raise ValueError(f"j={j} is outside [0, n_columns={self.n_columns})")
        out = self.X[:, j].toarray().ravel()
        return out if self.mu is None else out - self.mu[j]

    def matmul(self, Vt, out):
        """``out = (X - 1 mu^T)[:, :p] @ Vt``; see :meth:`SelectedColumns.matmul`."""
        Vt = np.asarray(Vt, dtype=np.float64)
        X, mu = self._first(self._check_p(Vt.shape[0] if Vt.ndim == 2 else -1, "Vt"))
        out[:] = np.asarray(X @ Vt)
        if mu is not None:
            out -= mu @ Vt
        return out

    def rmatmul(self, M, p):
        """``(X - 1 mu^T)[:, :p].T @ M``; see :meth:`SelectedColumns.rmatmul`."""
        X, mu = self._first(self._check_p(p, "p"))
        G = np.asarray(X.T @ M)
        if mu is not None:
            G -= np.outer(mu, M.sum(axis=0))
        return G

    def value_grad(self, Wt, intercept, loss, y, sample_weight, scores, residual):
        """Loss sum and gradients; see :meth:`SelectedColumns.value_grad`."""
        self.matmul(Wt, scores)
        scores += intercept
        value = loss.sum_gradient(scores, y, sample_weight, residual)
        return value, self.rmatmul(residual, Wt.shape[0]), residual.sum(axis=0)

