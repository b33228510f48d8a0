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


def check_dask_matrix(X, name="X", n_features=None, *, unknown_rows=False):
    """Check a dask array for a row-wise fit or prediction; returns it, float32 or float64.

    Chunked by rows: every chunk holds all columns. Integer data becomes
    float64 (lazily, per chunk). NaN and infinity are only found when a
    chunk is computed (see :func:`check_finite_chunk`).

    Parameters
    ----------
    X : dask.array.Array
        The array to check.
    name : str, default="X"
        Its name in the messages.
    n_features : int, default=None
        The number of columns it must have (None: any).
    unknown_rows : bool, default=False
        Whether the row chunks may be unknown (NaN, as after ``X[mask]`` or
        ``ddf.to_dask_array()``) and ``X`` may have no rows: prediction,
        where each chunk maps to its own rows. A fit needs the sizes.

    Returns
    -------
    X : dask.array.Array
        ``X``, or ``X.astype(np.float64)`` for integer data.

    Raises
    ------
    ValueError
        If ``X`` is not 2-D, has unknown row chunk sizes (unless
        ``unknown_rows``) or unknown column sizes, is split along its
        columns, is empty (unless ``unknown_rows``: then only without
        columns), or has other than ``n_features`` columns.
    TypeError
        If its dtype is not real (bool, complex, object, strings), or its
        chunks are not NumPy arrays (sparse chunks).
    """
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D dask array, got {X.ndim} dimensions")
    unknown = [axis for axis, sizes in enumerate(X.chunks) if any(np.isnan(c) for c in sizes)]
    if unknown and (unknown != [0] or not unknown_rows):
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
    if X.shape[1] == 0 or (X.shape[0] == 0 and not unknown_rows):
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
    """Check the shape and chunks of one entry per row of ``X``; computes nothing.

    ``v`` is a 1-D NumPy or dask array. A dask ``v`` must be chunked like
    ``X``'s rows (``row_chunks``): its values are computed later, with the
    other vectors of the fit, by :func:`compute_vectors`.

    Parameters
    ----------
    v : array-like or dask.array.Array of shape (n_samples,)
    name : str
        Its name in the messages ("y", "sample_weight").
    row_chunks : tuple of int
        ``X.chunks[0]``, known sizes.

    Returns
    -------
    v : ndarray or dask.array.Array
        ``v`` as given for a dask array, as a NumPy array otherwise.

    Raises
    ------
    ValueError
        If ``v`` is not 1-D, has another length than ``X`` (both named), or
        (dask) unknown chunk sizes or other chunks than ``X``'s rows (both
        chunkings named).
    """
    n = int(sum(row_chunks))
    if not is_dask_array(v):
        v = np.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got {v.ndim} dimensions")
    if is_dask_array(v) and any(np.isnan(c) for c in v.chunks[0]):
        raise ValueError(
            f"{name} has unknown chunk sizes ({_rows_text(v.chunks[0])}), X's row chunks "
            f"are ({_rows_text(row_chunks)}): call {name}.compute_chunk_sizes() first")
    if v.shape[0] != n:
        raise ValueError(f"{name} must have shape ({n},) like X's rows, got {v.shape}: "
                         f"X has {n} rows, {name} has {v.shape[0]}")
    if is_dask_array(v) and tuple(v.chunks[0]) != tuple(row_chunks):
        raise ValueError(
            f"{name}'s chunks ({_rows_text(v.chunks[0])}) do not match X's row "
            f"chunks ({_rows_text(row_chunks)}): rechunk {name} like X, "
            f"{name}.rechunk(X.chunks[0])"
        )
    return v


def compute_vectors(*vectors):
    """The values of checked vectors (:func:`check_dask_vector`), as NumPy arrays.

    The dask ones are computed together, in one call; None stays None.
    """
    lazy = [i for i, v in enumerate(vectors) if is_dask_array(v)]
    values = list(vectors)
    if lazy:
        import dask

        for i, value in zip(lazy, dask.compute(*(vectors[i] for i in lazy))):
            values[i] = value
    return [None if v is None else np.asarray(v) for v in values]


def map_rows(fn, X, *args, width=None, dtype=np.float64):
    """``fn(block, *args)`` on every row block of ``X``: a dask array of the same row chunks.

    The row chunks may be unknown (NaN); an empty block must give an empty
    result. The output's dtype and width are in its metadata, without
    calling ``fn``.

    Parameters
    ----------
    fn : callable
        ``fn(block, *args)`` returns an array of ``block.shape[0]`` rows:
        of shape ``(n_rows, width)``, or ``(n_rows,)`` when ``width`` is None.
    X : dask.array.Array of shape (n_rows, n_columns)
        Chunked by rows (one column chunk).
    *args
        Passed to every call (not dask arrays).
    width : int, default=None
        Columns of the output; None for a 1-D output.
    dtype : dtype, default=np.float64
        The output's dtype.

    Returns
    -------
    out : dask.array.Array of shape (n_rows,) or (n_rows, width)
    """
    dtype = np.dtype(dtype)
    if width is None:
        return X.map_blocks(fn, *args, drop_axis=1, chunks=(X.chunks[0],), dtype=dtype,
                            meta=np.empty((0,), dtype=dtype))
    return X.map_blocks(fn, *args, chunks=(X.chunks[0], (width,)), dtype=dtype,
                        meta=np.empty((0, width), dtype=dtype))


def check_finite_chunk(X, index, start):
    """Raise ValueError naming chunk ``index`` (rows from ``start``) if it has NaN or inf."""
    if not np.isfinite(X).all():
        raise ValueError(
            f"X chunk {index} (rows {start} to {start + X.shape[0] - 1}) contains "
            "NaN or infinity"
        )
    return X
