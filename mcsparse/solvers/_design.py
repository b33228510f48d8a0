"""The selected columns of the training data, as ShareBoost's refit reads them.

Each round adds one candidate: one column, or a group of columns (§3.2 of
[SWS2011]). Dense columns go into one Fortran-ordered buffer (BLAS reads
it in a single product). A group whose columns are zero on most samples,
such as an anchor point's piece ``1[||x - v|| <= r] [x, 1]`` (§4.2), is
kept as its non-zero rows only: the refit then costs ``O(rows * width *
n_classes)`` for it instead of ``O(n_samples * width * n_classes)``.

Columns are numbered in selection order, ``0 .. n_columns - 1``; they are
the columns of ``W`` in the refit.
"""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

# A group stays dense unless at most this fraction of its rows is non-zero.
SPARSE_ROW_FRACTION = 0.5
# Threads share the products only above this many stored row-sparse values:
# below it, waking a thread costs more than it saves.
THREADED_MIN_VALUES = 200_000


class SelectedColumns:
    """Growing store of the selected columns, dense or row-sparse blocks.

    Parameters
    ----------
    n_samples : int
        Rows of every column.
    capacity : int
        Initial number of dense columns (the buffer doubles when full).
    n_threads : int, default=1
        Threads sharing the products over row-sparse blocks (each thread
        takes a share of the blocks, balanced by size; NumPy's BLAS calls
        release the GIL). Results do not depend on it beyond rounding.

    Attributes
    ----------
    n_columns : int
        Columns stored, the width of ``W``.
    shift : ndarray of shape (n_columns,)
        The (weighted) mean removed from each dense column when stored with
        ``center=True``; zero for row-sparse blocks, which are not centred
        (centring would fill them in).
    """

    def __init__(self, n_samples, capacity, n_threads=1):
        self.n_samples = int(n_samples)
        self.n_threads = max(1, int(n_threads))
        self._pool = None
        self._shares = None
        self._dense = np.zeros((self.n_samples, max(1, int(capacity))), order="F")
        self._dense_cols = np.zeros(0, dtype=np.intp)  # W column of each dense column
        self._blocks = []  # (start, rows, values C-ordered (len(rows), width))
        self.shift = np.zeros(0)
        self.n_columns = 0

    @classmethod
    def from_dense(cls, X):
        """All columns of the 2-D float64 array ``X``, stored as they are."""
        self = cls.__new__(cls)
        self.n_samples = X.shape[0]
        self.n_threads, self._pool, self._shares = 1, None, None
        self._dense = np.asfortranarray(X, dtype=np.float64)
        self._dense_cols = np.arange(X.shape[1], dtype=np.intp)
        self._blocks = []
        self.shift = np.zeros(X.shape[1])
        self.n_columns = X.shape[1]
        return self

    def put(self, block, start, *, center=False, sample_weight=None):
        """Store ``block`` (n_samples, width) as columns ``start ..``.

        Columns from ``start`` on are dropped first, so that a candidate can
        be tried in the same place again (the "full" selection rule). A
        group of two or more columns that is non-zero on at most half of the
        samples is kept as its non-zero rows; other columns are copied into
        the dense buffer, centred when ``center`` (the intercept absorbs
        the shift).
        """
        self._truncate(start)
        width = block.shape[1]
        rows = None
        if width > 1:
            nonzero = np.flatnonzero(np.any(block != 0, axis=1))
            if nonzero.size <= SPARSE_ROW_FRACTION * self.n_samples:
                rows = nonzero
        if rows is not None:
            self._blocks.append((start, rows, np.ascontiguousarray(block[rows])))
            shift = np.zeros(width)
        else:
            shift = (np.average(block, axis=0, weights=sample_weight) if center
                     else np.zeros(width))
            n_dense = self._dense_cols.size
            if n_dense + width > self._dense.shape[1]:
                grown = np.zeros((self.n_samples, max(2 * self._dense.shape[1],
                                                      n_dense + width)), order="F")
                grown[:, :n_dense] = self._dense[:, :n_dense]
                self._dense = grown
            self._dense[:, n_dense : n_dense + width] = block - shift
            self._dense_cols = np.concatenate(
                [self._dense_cols, np.arange(start, start + width, dtype=np.intp)])
        self.shift = np.concatenate([self.shift[:start], shift])
        self.n_columns = start + width
        self._share_blocks()

    def _truncate(self, start):
        keep = self._dense_cols < start
        self._dense_cols = self._dense_cols[keep]
        self._blocks = [b for b in self._blocks if b[0] < start]
        self.shift = self.shift[:start]
        self.n_columns = min(self.n_columns, start)

    def _share_blocks(self):
        """Split the blocks among the threads, largest first to the least loaded.

        Thread 0 also computes the dense part. Sets ``_shares`` to None when
        the work is too small to share.
        """
        sizes = [values.size for _, _, values in self._blocks]
        if self.n_threads < 2 or len(sizes) < 2 or sum(sizes) < THREADED_MIN_VALUES:
            self._shares = None
            return
        loads = [self._dense_cols.size * self.n_samples] + [0] * (self.n_threads - 1)
        shares = [[] for _ in range(self.n_threads)]
        for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
            t = int(np.argmin(loads))
            shares[t].append(i)
            loads[t] += sizes[i]
        self._shares = shares
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.n_threads - 1)

    def __getstate__(self):  # the thread pool does not pickle
        state = self.__dict__.copy()
        state["_pool"] = None
        state["_shares"] = None
        return state

    def _dense_part(self, n_columns):
        """(dense columns, their W columns as a slice or an index array)."""
        cols = self._dense_cols
        n_dense = int(np.count_nonzero(cols < n_columns))
        cols = cols[:n_dense]
        if n_dense == 0 or cols[-1] == n_dense - 1:  # the first n_dense columns, in order
            return self._dense[:, :n_dense], slice(0, n_dense)
        return self._dense[:, :n_dense], cols

    def scores(self, W, out):
        """``out = X_sel W^T`` for ``W`` of shape (n_classes, n) on the first n columns."""
        if self._shares is None:
            self._scores_part(W, out, range(len(self._blocks)), dense=True)
            return out
        outs = [out] + [np.empty_like(out) for _ in self._shares[1:]]
        futures = [self._pool.submit(self._scores_part, W, outs[t], share, False)
                   for t, share in enumerate(self._shares) if t > 0]
        self._scores_part(W, out, self._shares[0], dense=True)
        for future, part in zip(futures, outs[1:]):
            future.result()
            out += part
        return out

    def _scores_part(self, W, out, share, dense):
        n_columns = W.shape[1]
        columns, cols = self._dense_part(n_columns)
        if dense and columns.shape[1]:
            np.matmul(columns, W[:, cols].T, out=out)
        else:
            out.fill(0.0)
        for i in share:
            start, rows, values = self._blocks[i]
            if start < n_columns:
                out[rows] += values @ W[:, start : start + values.shape[1]].T

    def gradient(self, R, n_columns):
        """``R^T X_sel`` on the first ``n_columns`` columns, shape (n_classes, n_columns)."""
        G = np.empty((R.shape[1], n_columns))
        if self._shares is None:
            self._gradient_part(R, G, range(len(self._blocks)), dense=True)
            return G
        futures = [self._pool.submit(self._gradient_part, R, G, share, False)
                   for t, share in enumerate(self._shares) if t > 0]
        self._gradient_part(R, G, self._shares[0], dense=True)
        for future in futures:
            future.result()
        return G

    def _gradient_part(self, R, G, share, dense):
        n_columns = G.shape[1]
        if dense:
            columns, cols = self._dense_part(n_columns)
            if columns.shape[1]:
                G[:, cols] = R.T @ columns
        for i in share:
            start, rows, values = self._blocks[i]
            if start < n_columns:
                G[:, start : start + values.shape[1]] = R[rows].T @ values
