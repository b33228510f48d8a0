"""Dask input: detection and validation, without importing dask unless it is used.

``pip install "mcsparse[dask]"`` installs dask[array] and distributed; the
rest of mcsparse never imports them.
"""

import sys

import numpy as np


def is_dask_array(X):
    """Whether ``X`` is a ``dask.array.Array`` (False when dask was never imported)."""
    da = sys.modules.get("dask.array")
    return da is not None and isinstance(X, da.Array)


def current_client():
    """The current ``distributed.Client``, or an error saying how to start one.

    Raises
    ------
    ImportError
        If distributed is not installed.
    ValueError
        If no client is running.
    """
    try:
        from distributed import default_client
    except ImportError as exc:  # pragma: no cover - the dask extra installs it
        raise ImportError(
            'fitting on a dask array needs distributed: pip install "mcsparse[dask]"'
        ) from exc
    try:
        return default_client()
    except ValueError:
        raise ValueError(
            "fitting on a dask array runs on the current distributed.Client and none "
            "is running: start one first, e.g. Client(LocalCluster()) on this machine "
            'or Client("tcp://scheduler:8786") for a cluster'
        ) from None


def _rows_text(chunks):
    return ", ".join(str(c) for c in chunks[:4]) + (", ..." if len(chunks) > 4 else "")


def check_dask_matrix(X, name="X", n_features=None):
    """Check a dask array for a row-wise fit or prediction; returns it, float32 or float64.

    Chunked by rows: every chunk holds all columns, and the chunk sizes are
    known. Integer data becomes float64 (lazily, per chunk). NaN and
    infinity are only found when a chunk is computed (see
    :func:`check_finite_chunk`).

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has unknown chunk sizes, is split along its
        columns, is empty, or has other than ``n_features`` columns.
    TypeError
        If its dtype is not real (bool, complex, object, strings), or its
        chunks are not NumPy arrays (sparse chunks).
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D dask array, got {X.ndim} dimensions")
    if any(np.isnan(c) for axis in X.chunks for c in axis):
        raise ValueError(
            f"{name} has unknown chunk sizes (NaN in {name}.chunks): call "
            f"{name}.compute_chunk_sizes() first"
        )
    if len(X.chunks[1]) != 1:
        raise ValueError(
            f"{name} must be chunked by rows only (every chunk holds all "
            f"{X.shape[1]} columns), got column chunks {X.chunks[1]}: "
            f"use {name}.rechunk({{1: -1}})"
        )
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} is empty: shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"{name} has {X.shape[1]} features, but the estimator was fitted on {n_features}"
        )
    if type(X._meta) is not np.ndarray:
        raise TypeError(
            f"{name} must have NumPy chunks, got {type(X._meta).__name__} chunks"
        )
    kind = X.dtype.kind
    if kind not in "fiu" or X.dtype == np.float16:
        raise TypeError(f"{name} must hold real numbers, got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X


def check_dask_vector(v, name, row_chunks):
    """A 1-D NumPy or dask array of one entry per row of ``X``, as NumPy (computed).

    A dask ``v`` must be chunked like ``X``'s rows (``row_chunks``); its
    values then come to the client (one number per sample).

    Raises
    ------
    ValueError
        If ``v`` is not 1-D, has the wrong length, or (dask) unknown or
        different chunks.
    """
    n = int(sum(row_chunks))
    if is_dask_array(v):
        if v.ndim != 1:
            raise ValueError(f"{name} must be 1-D, got {v.ndim} dimensions")
        if any(np.isnan(c) for c in v.chunks[0]):
            raise ValueError(
                f"{name} has unknown chunk sizes: call {name}.compute_chunk_sizes() first")
        if tuple(v.chunks[0]) != tuple(row_chunks):
            raise ValueError(
                f"{name}'s chunks ({_rows_text(v.chunks[0])}) do not match X's row "
                f"chunks ({_rows_text(row_chunks)}): rechunk {name} like X"
            )
        v = v.compute()
    v = np.asarray(v)
    if v.ndim != 1 or v.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) like X's rows, got {v.shape}")
    return v


def check_finite_chunk(X, index, start):
    """Raise ValueError naming chunk ``index`` (rows from ``start``) if it has NaN or inf."""
    if not np.isfinite(X).all():
        raise ValueError(
            f"X chunk {index} (rows {start} to {start + X.shape[0] - 1}) contains "
            "NaN or infinity"
        )
    return X
