"""A round of the dask scan by direct calls to one actor per worker, past the scheduler.

A round of :class:`~mcsparse.features._dask.DaskCandidates` as tasks crosses
the scheduler several times (the chunks' products, the pick, the picked
columns, the gather): latency that a small round does not cover (the user
guide's scale-out page gives the measured cost). :class:`ChunkHolders`
instead starts, once per fit, one dask actor per worker
(:class:`ChunkHolder`), given the chunks that worker holds, their labels
and the family's scanner; each round then calls the actors directly, sums
the chunks' products here in chunk order, as the tasks' tree does (the
same bits), and picks here by the scanner's rule.

An actor holds its chunks for the whole fit: its worker cannot spill them
to disk. When a worker's chunks pass its spill threshold (dask's
``distributed.worker.memory.spill`` of its memory limit), no actor is
started and the rounds run as tasks, which read spilled chunks back.

The actors keep no state of their own beyond references: a chunk's selected
columns are the store of :func:`~mcsparse.features._dask._stored_columns`
that the tasks use too. An actor is lost with its worker: any failure of a
round (a worker gone, a call that does not come back while its worker is
no longer in the cluster, any error) ends the actors, and the round, and
every later one, runs as tasks, which recompute lost chunks from their
lineage and raise the chunks' own errors, named.
"""

import numpy as np

from ._dask import _add, _aligned, _model_products, _stored_columns, tree_levels

#: Seconds between checks that the actors' workers are still in the cluster
#: while a call has not come back.
POLL_S = 0.5


class ChunkHolder:
    """One worker's chunks, labels and the family's scanner: a dask actor.

    Parameters
    ----------
    keys : list of (str, int)
        The store keys of the chunks (``RowChunks.keys``).
    scanner : ChunkScan
        The fitted family's ``_chunk_scanner()``: sent once, not per round.
    *data : ndarray
        The chunks, then their labels ``y``, then their sample weights (or
        None), one each per key.
    """

    def __init__(self, keys, scanner, *data):
        n = len(keys)
        self.keys, self.scanner = keys, scanner
        data = [_aligned(a) for a in data]  # a chunk moved here may start anywhere
        self.chunks, self.y, self.weights = data[:n], data[n:2 * n], data[2 * n:]

    def products(self, selected, coef, intercept, loss):
        """Each chunk's part of ``X^T R`` at the model (``_model_products``): a list."""
        return [_model_products(X, y, w, key, self.scanner, selected, coef, intercept, loss)
                for X, y, w, key in zip(self.chunks, self.y, self.weights, self.keys)]

    def columns(self, j):
        """Candidate ``j`` on each chunk, kept in the chunks' stores: a list."""
        return [_stored_columns(X, self.scanner, key, [j]).copy()
                for X, key in zip(self.chunks, self.keys)]


class NoRoom(RuntimeError):
    """A worker's chunks pass its spill threshold: the rounds run as tasks, by design."""


def _check_room(client, by_worker, keys):
    """Raise when a worker's chunks pass its spill threshold: the tasks then run.

    An actor holds its chunks for the whole fit, so its worker could not
    spill them to disk; the tasks read spilled chunks back each round.
    """
    import dask

    spill = dask.config.get("distributed.worker.memory.spill", 0.7) or 1.0
    nbytes = client.nbytes(keys, summary=False)
    info = client.scheduler_info()["workers"]
    for worker, indices in by_worker.items():
        limit = info.get(worker, {}).get("memory_limit") or 0
        held = sum(nbytes.get(keys[i], 0) for i in indices)
        if limit and held > spill * limit:
            raise NoRoom(f"{held} bytes of chunks on {worker}, above its spill threshold")


def tree_sum(parts):
    """The sum of ``parts`` in the order of ``RowChunks.tree`` with ``_add`` (the same bits)."""
    return _add(*tree_levels(parts, lambda group: _add(*group)))


class ChunkHolders:
    """One :class:`ChunkHolder` per worker holding chunks; rounds by direct calls.

    Parameters
    ----------
    chunks : RowChunks
        The persisted chunks (:mod:`mcsparse.features._dask`).
    labels : tuple (y futures, weight futures)
        ``chunks.labels(y, sample_weight)``.
    scanner : ChunkScan
        What the chunks are scanned with.

    Raises
    ------
    Exception
        Whatever starting the actors raised (the caller then runs tasks).
    """

    def __init__(self, chunks, labels, scanner):
        from distributed import wait

        client = chunks.client
        self.client = client
        wait(chunks.futures)  # where they are kept: their actor's worker
        who_has = client.who_has(chunks.futures)
        by_worker = {}
        for i, future in enumerate(chunks.futures):
            holders = sorted(who_has.get(future.key, ()))
            if future.status != "finished" or not holders:
                raise RuntimeError(f"chunk {i} is not in memory")  # the tasks say why
            by_worker.setdefault(holders[0], []).append(i)
        _check_room(client, by_worker, [future.key for future in chunks.futures])
        self.groups, self.futures = [], []
        for worker, indices in by_worker.items():
            data = [chunks.futures[i] for i in indices] + [labels[0][i] for i in indices] \
                + [labels[1][i] for i in indices]
            self.futures.append(client.submit(
                ChunkHolder, [chunks.keys[i] for i in indices], scanner, *data,
                workers=[worker], actor=True, pure=False))
            self.groups.append(indices)
        self.actors = [future.result() for future in self.futures]
        self.n_chunks = len(chunks.futures)

    def _alive(self):
        if any(future.status != "finished" for future in self.futures):
            return False
        workers = self.client.scheduler_info()["workers"]
        return all(actor._address in workers for actor in self.actors)

    def _results(self, calls):
        """The results of the actors' calls, in chunk order; None when an actor was lost."""
        parts = [None] * self.n_chunks
        for indices, call in zip(self.groups, calls):
            while True:
                try:
                    values = call.result(timeout=POLL_S)
                    break
                except TimeoutError:
                    if not self._alive():
                        return None
            for i, value in zip(indices, values):
                parts[i] = value
        return parts

    def best(self, scanner, excluded, model):
        """``(j, score, columns)`` of a round at ``model``; None when it must run as tasks.

        ``model``: the ``(selected, coef, intercept, loss)`` of ``_model_products``.
        """
        try:
            products = self._results([actor.products(*model) for actor in self.actors])
            if products is None:
                return None
            j, score = scanner._pick(tree_sum(products), excluded)
            columns = self._results([actor.columns(j) for actor in self.actors])
        except Exception:  # noqa: BLE001 - the tasks run the round again and raise, named
            return None
        if columns is None:
            return None
        return j, score, np.concatenate(columns)

    def release(self):
        """Forget the actors (their workers drop them)."""
        for future in self.futures:
            future.release()
        self.futures, self.actors = [], []
