"""Binned decision stumps on the row chunks of a dask array: bin codes kept on the workers.

:class:`~mcsparse.features.DecisionStumps` with ``max_bins`` replaces each
row chunk on its worker by :func:`bin_chunk` of it, once per fit: the
chunk's bin codes against the global thresholds, and a sparse matrix of
the rows outside each feature's most frequent bin. A round's tasks then
scan the codes with :class:`BinnedStumpScan`, a small object (the features'
candidate offsets), instead of comparing every value with the thresholds
that a fitted family would carry to each task.
"""

import numpy as np
import scipy.sparse as sp


def stump_columns(codes, offsets, ids):
    """Stumps ``ids`` from their features' integer codes: ``1[codes[f] <= j - offsets[f]]``.

    The training columns of :class:`~mcsparse.features.DecisionStumps` from its
    ranks (or bins), and those of a binned chunk from its bin codes.

    Parameters
    ----------
    codes : ndarray of shape (n_features, n_rows), integers
        Each row's rank (or bin) in each feature.
    offsets : ndarray of shape (n_features + 1,), intp
        Feature ``f`` owns the stump ids ``offsets[f] .. offsets[f + 1] - 1``.
    ids : array-like of int
        Stump ids, checked by the caller.

    Returns
    -------
    columns : ndarray of shape (n_rows, len(ids)), float64
        0/1.
    """
    ids = np.asarray(ids, dtype=np.intp).reshape(-1)
    out = np.empty((codes.shape[1], ids.size))
    features = np.searchsorted(offsets, ids, side="right") - 1
    for c, (f, j) in enumerate(zip(features, ids)):
        np.less_equal(codes[f], j - offsets[f], out=out[:, c])
    return out


class BinnedChunk:
    """A row chunk's stump bins, kept on its worker in place of the chunk.

    Feature ``f`` has ``offsets[f + 1] - offsets[f]`` thresholds, hence one
    more bins: bin ``b`` of ``f`` (``0 <= b <= n_thresholds``) holds the rows
    whose value has ``b`` thresholds below it, and stump ``offsets[f] + r`` is
    ``1[bin <= r]``.

    Parameters
    ----------
    codes : ndarray of shape (n_features, n_rows), unsigned integers
        The bin of every row, feature by feature.
    offsets : ndarray of shape (n_features + 1,), intp
        The features' first candidate ids (as the family's).

    Attributes
    ----------
    shape : tuple (n_rows, n_features)
        The chunk's.
    codes : ndarray
        As given.
    others : scipy.sparse.csr_matrix of shape (n_bins, n_rows), float64
        ``others[starts[f] + b, i] = 1`` when row ``i`` falls in bin ``b`` of
        ``f`` and that is not ``f``'s most frequent bin on the chunk (MNIST
        pixels: the zeros, 81% of the values, are left out).
    modes : ndarray of shape (n_features,), intp
        The row of ``others`` of each feature's most frequent bin.
    starts : ndarray of shape (n_features + 1,), intp
        Feature ``f``'s bins are rows ``starts[f] .. starts[f + 1] - 1``.
    """

    def __init__(self, codes, offsets):
        n_features, n_rows = codes.shape
        self.shape = (n_rows, n_features)
        self.codes = codes
        self.starts = (offsets + np.arange(n_features + 1)).astype(np.intp)
        self.modes = np.empty(n_features, dtype=np.intp)
        bins, rows = [], []
        for f in range(n_features):
            counts = np.bincount(codes[f], minlength=self.starts[f + 1] - self.starts[f])
            mode = int(np.argmax(counts))
            self.modes[f] = self.starts[f] + mode
            keep = np.flatnonzero(codes[f] != mode)
            bins.append(self.starts[f] + codes[f, keep].astype(np.intp))
            rows.append(keep)
        bins = np.concatenate(bins) if bins else np.zeros(0, dtype=np.intp)
        rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp)
        self.others = sp.csr_matrix((np.ones(bins.size), (bins, rows)),
                                    shape=(int(self.starts[-1]), n_rows))
        # stump offsets[f] + r sums bins starts[f] .. starts[f] + r
        n_stumps = np.diff(offsets)
        feature = np.repeat(np.arange(n_features), n_stumps)
        self._last_bin = (self.starts[feature]
                          + np.arange(int(offsets[-1])) - offsets[feature]).astype(np.intp)
        self._first_bin = self.starts[feature]


def bin_chunk(X, thresholds, offsets):
    """The :class:`BinnedChunk` of a row chunk: its values ranked against the thresholds.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float32 or float64
        A row chunk of the training data.
    thresholds : ndarray of shape (n_candidates,), float64
        Every feature's thresholds, feature after feature (ascending).
    offsets : ndarray of shape (n_features + 1,), intp
        Feature ``f``'s thresholds are ``thresholds[offsets[f]:offsets[f + 1]]``.

    Returns
    -------
    chunk : BinnedChunk
        The bins are those of ``bin_stumps`` in memory: ``searchsorted`` of
        each value among its feature's thresholds (``side="left"``).
    """
    n_rows, n_features = X.shape
    widest = int(np.max(np.diff(offsets), initial=0))
    dtype = np.uint8 if widest < 2 ** 8 else np.uint16 if widest < 2 ** 16 else np.uint32
    codes = np.empty((n_features, n_rows), dtype=dtype)
    for f in range(n_features):
        codes[f] = np.searchsorted(thresholds[offsets[f]:offsets[f + 1]], X[:, f], side="left")
    return BinnedChunk(codes, offsets)


class BinnedStumpScan:
    """The row-chunk methods of binned stumps, on :class:`BinnedChunk` chunks.

    What the round's tasks of :class:`~mcsparse.features._dask.DaskCandidates`
    are sent instead of the fitted family (``DecisionStumps._chunk_scanner``):
    the features' candidate offsets only (``n_features + 1`` integers).

    Parameters
    ----------
    offsets : ndarray of shape (n_features + 1,), intp
        Feature ``f`` owns the stump ids ``offsets[f] .. offsets[f + 1] - 1``.
    """

    def __init__(self, offsets):
        self.offsets = np.asarray(offsets, dtype=np.intp)
        self.n_candidates_ = int(self.offsets[-1])

    def _chunk_products(self, chunk, residual):
        """Every stump's ``R^T x`` on a binned chunk: (n_candidates, n_classes), float64.

        The residual rows are added into their bins by one sparse product
        (the rows outside each feature's most frequent bin); that bin gets
        the rest of the residual's column sums. Each stump then sums its
        feature's bins up to its own.
        """
        residual = np.ascontiguousarray(residual, dtype=np.float64)
        sums = np.asarray(chunk.others @ residual)
        if sums.shape[0]:
            per_feature = np.add.reduceat(sums, chunk.starts[:-1], axis=0)
            sums[chunk.modes] += residual.sum(axis=0) - per_feature
        prefix = np.cumsum(sums, axis=0)
        before = prefix[chunk._first_bin - 1]
        before[chunk._first_bin == 0] = 0.0
        return prefix[chunk._last_bin] - before

    def _pick(self, products, excluded):
        """``(id, score)``: the rule of ``DecisionStumps._pick`` (lowest id among the tied)."""
        from ._stumps import _first_best

        scores = np.abs(products).sum(axis=1)
        scores[excluded] = -np.inf
        j = _first_best(scores)
        return j, float(scores[j])

    def _chunk_columns(self, chunk, ids):
        """Stumps ``ids`` on a binned chunk: ``1[bin <= r]``, float64 (n_rows, len(ids))."""
        return stump_columns(chunk.codes, self.offsets, ids)
