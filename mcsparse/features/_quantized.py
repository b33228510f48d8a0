"""A training matrix kept as 8-bit codes, for scans that do not fit in memory as floats.

Each block of ``block_rows`` rows of the matrix is stored as ``uint8`` codes
with, per block and column, an offset ``low`` and a step:
``value ~ low + step * code``, the step being the block's column range / 255
(0 for a constant column, whose code is 0). A value is then within half a
step of the original. The scan's product ``Phi^T R`` is computed block by
block from the codes, ``step * (codes^T R) + low * (1^T R)``: the codes are
cast to float32 in a buffer of one block, one float32 BLAS product per block
(as :func:`~mcsparse.features._raw._raw_products` for a float32 matrix).
A quarter of the float32 matrix's memory.
"""

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import threadpool_limits

#: Rows per block (one offset and step per block and column).
BLOCK_ROWS = 1024
#: Rows cast to float32 at a time by the product (a few MB, kept in cache).
SUB_ROWS = 64
_LEVELS = 255


def quantize_block(values):
    """``(codes, low, step)`` of a float block (n_rows, n_columns): uint8, float32, float32.

    ``values`` must be finite, with at least one row (a block of
    :class:`QuantizedMatrix`). ``low + step * codes`` is within ``step / 2``
    of ``values`` (plus float32 rounding).
    """
    values = np.asarray(values, dtype=np.float32)
    low, high = values.min(axis=0), values.max(axis=0)
    step = ((high.astype(np.float64) - low) / _LEVELS).astype(np.float32)
    # in float64: 1 / step overflows float32 for steps below about 3e-39
    inverse = np.divide(1.0, step.astype(np.float64),
                        out=np.zeros(step.shape, dtype=np.float64), where=step > 0)
    codes = np.rint((values - low) * inverse)
    np.clip(codes, 0, _LEVELS, out=codes)
    return codes.astype(np.uint8), low, step


class QuantizedMatrix:
    """A dense (n_rows, n_columns) matrix as 8-bit codes, filled block by block.

    Parameters
    ----------
    n_rows, n_columns : int
        Shape of the matrix.
    block_rows : int, default=BLOCK_ROWS
        Rows per block; ``set_block`` is called with row ranges that start
        at a multiple of it and hold ``block_rows`` rows (fewer for the
        last).
    n_jobs : int, default=None
        Threads of the product (joblib convention); each computes the
        products of a contiguous run of blocks with BLAS single-threaded.
    """

    def __init__(self, n_rows, n_columns, block_rows=BLOCK_ROWS, n_jobs=None):
        n_blocks = -(-n_rows // block_rows)
        self.shape = (n_rows, n_columns)
        self.block_rows = block_rows
        self.n_jobs = n_jobs
        self.codes = np.empty((n_rows, n_columns), dtype=np.uint8)
        self.low = np.zeros((n_blocks, n_columns), dtype=np.float32)
        self.step = np.zeros((n_blocks, n_columns), dtype=np.float32)

    @property
    def nbytes(self):
        return self.codes.nbytes + self.low.nbytes + self.step.nbytes

    def set_block(self, start, values):
        """Store the float rows ``values`` that start at row ``start`` (a block's first)."""
        b, rest = divmod(start, self.block_rows)
        stop = min(start + self.block_rows, self.shape[0])
        if rest or values.shape != (stop - start, self.shape[1]):
            raise ValueError(f"a block of rows {start}:{stop} was expected, got rows "
                             f"starting at {start} of shape {values.shape}")
        self.codes[start:stop], self.low[b], self.step[b] = quantize_block(values)

    def toarray(self):
        """The decoded matrix, float32 (the product's plain-NumPy reference)."""
        starts = np.arange(self.shape[0]) // self.block_rows
        return self.low[starts] + self.step[starts] * self.codes.astype(np.float32)

    def _blocks_products(self, blocks, R):
        """``(Phi^T R)^T`` over the given blocks: (n_classes, n_columns), float64."""
        n_columns = self.shape[1]
        out = np.zeros((R.shape[1], n_columns), dtype=np.float64)
        block_sum = np.empty((R.shape[1], n_columns), dtype=np.float32)
        buffer = np.empty((SUB_ROWS, n_columns), dtype=np.float32)
        for b in blocks:
            start, stop = b * self.block_rows, min((b + 1) * self.block_rows, self.shape[0])
            block_sum[...] = 0.0
            for s in range(start, stop, SUB_ROWS):
                e = min(s + SUB_ROWS, stop)
                # the cast codes stay in cache for the product (SUB_ROWS rows)
                np.copyto(buffer[:e - s], self.codes[s:e], casting="unsafe")
                block_sum += R[s:e].T @ buffer[:e - s]
            out += self.step[b] * block_sum
            out += np.outer(R[start:stop].sum(axis=0, dtype=np.float64), self.low[b])
        return out

    def rmatmul(self, residual):
        """``Phi^T R`` of the decoded matrix: (n_columns, n_classes), float64.

        ``residual`` (n_rows, n_classes) is cast to float32 with float32
        denormals flushed to zero (they make BLAS several times slower).
        """
        n_blocks = self.low.shape[0]
        n_jobs = min(effective_n_jobs(self.n_jobs), max(n_blocks, 1))
        runs = np.array_split(np.arange(n_blocks), n_jobs)
        # overflow is checked by the caller's scores (_pick_columns)
        with threadpool_limits(limits=1, user_api="blas"), \
                np.errstate(over="ignore", invalid="ignore"):
            R = np.array(residual, dtype=np.float32)
            R[np.abs(R) < np.finfo(np.float32).tiny] = 0.0
            if n_jobs == 1:
                return self._blocks_products(runs[0], R).T
            parts = Parallel(n_jobs=n_jobs, prefer="threads")(
                delayed(self._blocks_products)(run, R) for run in runs)
        return np.sum(parts, axis=0).T
