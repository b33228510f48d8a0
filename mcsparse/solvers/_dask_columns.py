"""The selected columns kept on the workers of a Dask cluster, for refits beyond the client.

A ShareBoost path on a dask array (:class:`mcsparse.features._dask.DaskCandidates`)
gathers the selected columns to the client, into a :class:`SelectedColumns`
store, while ``n_samples x n_rounds`` float64 fit in the client's budget,
``dask.config`` key ``"mcsparse.client-columns-budget"`` (default "2GiB").
Beyond it the path uses :class:`DaskColumns`: every chunk of rows keeps its
own :class:`SelectedColumns` on its worker, centred with the global means,
and every product of the objective, and the fused pass scores -> loss ->
gradient, is one task per chunk whose parts are added here, in chunk order.
The client then holds ``n_samples x n_scores`` arrays (the scores and
residuals the objective keeps), never the ``n_samples x n_rounds`` columns.
"""

import numpy as np

from ..features._base import Dense, TrainingBlock
from ..features._chunk_scan import ModelScan
from ._columns import ColumnStore, SelectedColumns, check_block

#: The default client budget for gathered selected columns.
DEFAULT_BUDGET = "2GiB"


def client_budget():
    """Bytes of selected columns the client may hold (dask config, default 2 GiB)."""
    import dask
    from dask.utils import parse_bytes

    value = dask.config.get("mcsparse.client-columns-budget", DEFAULT_BUDGET)
    try:
        return parse_bytes(value) if isinstance(value, str) else int(value)
    except (TypeError, ValueError):
        raise ValueError(
            "dask config 'mcsparse.client-columns-budget' must be a size such as "
            f"'2GiB' or a number of bytes, got {value!r}") from None


def columns_store(features, n_samples, capacity, n_threads):
    """The store of a path: on the workers when the family's rows are and the budget says so."""
    chunks = features.row_chunks if isinstance(features, ModelScan) else None
    widths = getattr(features, "candidate_widths_", None)
    width = 1 if widths is None or len(widths) == 0 else int(np.max(widths))
    if chunks is not None and 8 * n_samples * capacity * width > client_budget():
        return DaskColumns(chunks, capacity)
    return SelectedColumns(n_samples, capacity, n_threads=n_threads)


def _chunk_store(X, n_rows, capacity):
    return SelectedColumns(n_rows, capacity)


def _chunk_put(X, store, block, start, shift):
    """A copy of ``store`` with ``block`` put at ``start``, centred by the global ``shift``.

    ``store`` itself is unchanged, as a task's argument must be. Appended
    columns (a path's rounds) go past the columns ``store`` reads, so the
    copy shares its dense buffers (:meth:`SelectedColumns.copy`): a round
    copies the new column, not the whole chunk store. ``DaskColumns.put``
    releases ``store`` once the copy exists, so nothing appends to it again.
    """
    store = store.copy(share_buffers=start == store.n_columns)
    store.put(block, start, shift=shift)
    return store


def _chunk_value_grad(X, store, y, sample_weight, Wt, intercept, loss):
    k = intercept.shape[0]
    scores, residual = np.empty((store.n_samples, k)), np.empty((store.n_samples, k))
    value, grad, grad_b = store.value_grad(Wt, intercept, loss, y, sample_weight, scores,
                                           residual)
    return value, grad, grad_b, scores, residual


def _chunk_matmul(X, store, Vt):
    return store.matmul(Vt, np.empty((store.n_samples, Vt.shape[1])))


def _chunk_rmatmul(X, store, M, p):
    return store.rmatmul(M, p)


def _chunk_column(X, store, j):
    return store.column(j)


class DaskColumns(ColumnStore):
    """The selected columns, one :class:`SelectedColumns` per row chunk on its worker.

    The interface of :class:`SelectedColumns` that
    :class:`~mcsparse.solvers._objective.LinearObjective` uses; results are
    sums over the chunks in chunk order.

    Parameters
    ----------
    chunks : RowChunks
        The persisted row chunks of the training data
        (:mod:`mcsparse.features._dask`).
    capacity : int
        Initial number of columns of each chunk's store.

    Attributes
    ----------
    n_samples, n_columns : int
    shift, scale : ndarray of shape (n_columns,)
        As :class:`SelectedColumns`' (computed here, from whole columns).
    """

    def __init__(self, chunks, capacity):
        self._chunks = chunks
        self.n_samples = chunks.n_samples
        self.n_columns = 0
        self.shift = np.zeros(0)
        self.scale = np.zeros(0)
        self._stores = chunks.map(_chunk_store, per_chunk=(chunks.sizes,),
                                  shared=(max(1, int(capacity)),))

    def _parts(self, values):
        return [values[self._chunks.rows(i)] for i in range(len(self._chunks.sizes))]

    def put(self, block, start, *, center=False, sample_weight=None):
        """Store ``block`` (n_samples, width) as columns ``start ..``, on the workers.

        The columns are centred with their (weighted) mean over all rows
        when ``center``; each chunk's rows travel to its worker. A typed
        block (:class:`~mcsparse.features._base.TrainingBlock`) is stored as
        its dense columns.
        """
        if isinstance(block, Dense):
            block = block.values
        elif isinstance(block, TrainingBlock):
            block = block.toarray()
        block = check_block(block, start, self.n_samples, self.n_columns)
        shift = (np.average(block, axis=0, weights=sample_weight) if center
                 else np.zeros(block.shape[1]))
        old = self._stores
        self._stores = self._chunks.map(_chunk_put, per_chunk=(old, self._parts(block)),
                                        shared=(start, shift))
        for future in old:
            future.release()
        self.shift = np.concatenate([self.shift[:start], shift])
        self.scale = np.concatenate([self.scale[:start],
                                     np.abs(block - shift).max(axis=0, initial=0.0)])
        self.n_columns = start + block.shape[1]

    def column(self, j):
        """Column ``j`` (centred), gathered: float64 of shape (n_samples,)."""
        return self._chunks.gather_rows(self._chunks.map(_chunk_column, per_chunk=(self._stores,),
                                                         shared=(int(j),)))

    def matmul(self, Vt, out):
        """``out = X[:, :p] @ Vt``, each chunk's rows computed on its worker."""
        Vt = np.ascontiguousarray(Vt, dtype=np.float64)
        out[:] = self._chunks.gather_rows(self._chunks.map(_chunk_matmul,
                                                           per_chunk=(self._stores,),
                                                           shared=(Vt,)))
        return out

    def rmatmul(self, M, p):
        """``X[:, :p].T @ M``: each chunk's rows of ``M`` travel to its worker."""
        M = np.ascontiguousarray(M, dtype=np.float64)
        parts = self._chunks.gather_list(self._chunks.map(
            _chunk_rmatmul, per_chunk=(self._stores, self._parts(M)), shared=(int(p),)))
        return sum(parts[1:], parts[0].copy())

    def value_grad(self, Wt, intercept, loss, y, sample_weight, scores, residual):
        """The fused pass on every chunk; fills ``scores`` and ``residual`` here.

        ``y`` and ``sample_weight`` travel to the workers once per path
        (``RowChunks.labels``, shared with the candidate scan).
        """
        labels = self._chunks.labels(y, sample_weight)
        parts = self._chunks.gather_list(self._chunks.map(
            _chunk_value_grad, per_chunk=(self._stores, *labels),
            shared=(np.ascontiguousarray(Wt, dtype=np.float64),
                    np.ascontiguousarray(intercept, dtype=np.float64), loss)))
        scores[:] = np.concatenate([part[3] for part in parts])
        residual[:] = np.concatenate([part[4] for part in parts])
        total = [sum(part[i] for part in parts) for i in range(3)]
        return total[0], total[1], total[2]
