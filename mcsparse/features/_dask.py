"""ShareBoost's candidate scan on a dask array chunked by rows, on a distributed cluster.

Both steps of a ShareBoost round are sums over rows: the gradient columns
``G = X^T R`` of all candidates (the selection) and the selected columns'
values (the refit). :class:`DaskCandidates` runs a candidate family's
row-chunk methods on the workers, next to the chunks, and adds the chunks'
parts by a tree reduction; the residual rows are computed there too, from
the model. The refit then runs on the client, on the gathered selected
columns, exactly as in memory. User guide: ``doc/user_guide/scaleout.rst``.

A family runs on chunks when it derives from
:class:`~mcsparse.features._chunk_scan.ChunkScan` (and implements its
row-chunk methods ``_fit_chunks``, ``_chunk_products``, ``_pick`` and
``_chunk_columns``): :class:`~mcsparse.features.RawFeatures`,
:class:`~mcsparse.features.DecisionStumps` (with ``max_bins``) and
:class:`~mcsparse.features.ConvMaxTemplates` do. A family with
``_replaces_chunks`` has each chunk replaced on its worker by its candidate
matrix, ``_chunk_features(X_c)``, which the other methods read (the template
responses of ``ConvMaxTemplates``), so that the whole matrix never exists in
one place. ``_chunk_scanner()`` gives the object whose ``_chunk_products``,
``_pick`` and ``_chunk_columns`` the round's tasks call (the family itself by
default). It is sent once to each worker's actor (:mod:`._dask_actors`), and
with every task when the rounds run as tasks, so it should be small: once
the chunks hold the template responses, ``ConvMaxTemplates`` is scanned as
raw columns, without its templates; binned stumps by their candidate
offsets (:class:`~mcsparse.features._stump_chunks.BinnedStumpScan`).

Each chunk's columns of the selected candidates are kept on the worker that
scans it (:func:`_stored_columns`), outside the task graph: computed once
per candidate, rebuilt from the chunk when missing (a lost worker, a task
run elsewhere), so that a round computes no column but the new one.

:class:`DaskCandidates` is a generic runner of such a family: it is told the
labels, weights and loss (:class:`~mcsparse.features._chunk_scan.ScanLabels`)
by the solver, never reads the solver's objects.
"""

import threading
import uuid
import warnings

import numpy as np

from ..utils._dask import check_finite_chunk, current_client
from ._base import CandidateFeatures
from ._chunk_scan import ChunkScan, ModelScan

#: Parts added per task of the tree reduction.
SPLIT_EVERY = 8


def _aligned(a):
    """``a``, copied if its data is not aligned to its item size.

    Arrays deserialised on a worker may start at any byte of a message
    buffer; BLAS reads float64 arrays that do not start at a multiple of 8
    bytes several times slower, so such chunks and arguments are copied
    once. Aligned ones (most, and float32 ones at any multiple of 4) are
    not copied.
    """
    if isinstance(a, np.ndarray) and not a.flags.aligned:
        return a.copy()
    return a


def tree_levels(parts, combine_group):
    """The last level of a tree that combines ``parts`` ``SPLIT_EVERY`` at a time.

    ``combine_group(group)`` combines one group (a list) of a level. The
    root's ``SPLIT_EVERY`` parts or fewer are returned, to be combined by the
    caller: the same grouping, hence the same sums, whether the groups are
    tasks (:meth:`RowChunks.tree`) or calls here (the actors' rounds).
    """
    level = list(parts)
    while len(level) > SPLIT_EVERY:
        level = [combine_group(level[i:i + SPLIT_EVERY])
                 for i in range(0, len(level), SPLIT_EVERY)]
    return level


def _checked_rows(X, index, start, a, b):
    """Rows ``a:b`` of a chunk, checked finite: a view of the chunk.

    An error names the user's chunk (index ``index``, rows from ``start``),
    whichever of its pieces it is in; each piece checks its own rows only.
    """
    if a == 0 and b == X.shape[0]:
        return check_finite_chunk(X, index, start)
    piece = X[a:b]
    if not np.isfinite(piece).all():
        check_finite_chunk(X, index, start)  # raises, naming the whole chunk
    return piece


def _persisted(X, index, start, a, b):
    """Rows ``a:b`` of a chunk as they are kept on a worker: checked finite, aligned.

    A part of a chunk is copied, so that the chunk itself can be freed.
    """
    return _kept(_checked_rows(X, index, start, a, b), a == 0 and b == X.shape[0])


def _kept(piece, whole):
    """``piece`` as a worker keeps it: aligned; a part of a chunk that is still a
    view of it in this process is copied, so that the chunk itself can be freed."""
    if not whole and isinstance(piece.base, np.ndarray) and piece.base.nbytes > piece.nbytes:
        return piece.copy()
    return _aligned(piece)


def balanced_pieces(sizes, n_workers):
    """Pieces of row chunks ``sizes`` that give ``n_workers`` workers equal rows.

    The rows are cut into ``n_workers`` shares of equal size (to one row),
    and the chunks at the shares' bounds: a chunk is split only where a
    share ends inside it, so at most ``n_workers - 1`` chunks are split,
    and none when the chunks already fall evenly (6 chunks on 2 workers).
    Dask's automatic chunks of MNIST (3 chunks) on 2 workers leave one
    worker two chunks to scan every round, the other one: split, each
    scans 1.5 chunks' rows.

    Parameters
    ----------
    sizes : sequence of int
        The rows of each chunk (chunks of 0 rows are dropped).
    n_workers : int
        At least 1.

    Returns
    -------
    pieces : list of tuple (chunk, start, stop, share)
        Rows ``start:stop`` of chunk ``chunk`` (offsets in that chunk), to
        be kept by the worker of share ``share``; in the order of the rows.
    """
    n = int(np.sum(sizes))
    bounds = [(n * r) // n_workers for r in range(1, n_workers)]
    pieces, first, share = [], 0, 0
    for c, size in enumerate(sizes):
        cuts = [0] + [x - first for x in bounds if first < x < first + size] + [size]
        for a, b in zip(cuts[:-1], cuts[1:]):
            while share < len(bounds) and first + a >= bounds[share]:
                share += 1
            if b > a:
                pieces.append((c, a, b, share))
        first += size
    return pieces


def _persisted_by(X, fn):
    """``fn`` of a chunk, kept on its worker (aligned)."""
    return _aligned(fn(X))


def _call(fn, chunk, *args):
    """``fn`` on a chunk, with array arguments aligned (a chunk moved between workers)."""
    return fn(_aligned(chunk), *(_aligned(a) for a in args))


def _identity(x):
    return x


class _ChunkColumns:
    """One chunk's columns of the candidates picked so far, kept on its worker.

    Columns are appended in the order their candidates are first asked
    for (the order of a path's selection), so that a round's ``selected``
    is usually a prefix of the kept ones: a view, no copy.
    """

    def __init__(self, n_rows):
        self.values = np.empty((n_rows, 0))
        self.spans = {}  # candidate id -> (first column, end)
        self.order = []  # candidate ids, in the order of the columns
        self.width = 0
        self.lock = threading.Lock()

    def add(self, j, block):
        if self.width + block.shape[1] > self.values.shape[1]:
            grown = np.empty((self.values.shape[0],
                              max(8, 2 * self.values.shape[1], self.width + block.shape[1])))
            grown[:, :self.width] = self.values[:, :self.width]
            self.values = grown
        self.values[:, self.width:self.width + block.shape[1]] = block
        self.spans[j] = (self.width, self.width + block.shape[1])
        self.order.append(j)
        self.width += block.shape[1]

    def take(self, ids):
        if self.order[:len(ids)] == ids:
            return self.values[:, :self.spans[ids[-1]][1]] if ids else self.values[:, :0]
        return np.hstack([self.values[:, slice(*self.spans[j])] for j in ids])


#: Each chunk's selected columns, in the worker process that ran its tasks:
#: ``{(token, chunk index): _ChunkColumns}``, outside the task graph. An
#: entry is a cache: missing (a worker lost, a task moved), it is rebuilt
#: from the chunk, so the values never depend on where a task ran.
_STORES = {}
_STORES_LOCK = threading.Lock()


def _stored_columns(X, family, key, ids):
    """Candidates ``ids`` on a chunk, from its worker's store (missing ones computed and kept)."""
    ids = [int(j) for j in ids]
    with _STORES_LOCK:
        store = _STORES.get(key)
        if store is None:
            store = _STORES[key] = _ChunkColumns(X.shape[0])
    with store.lock:
        for j in ids:
            if j not in store.spans:
                store.add(j, family._chunk_columns(X, np.array([j], dtype=np.intp)))
        return store.take(ids)


def _drop_stores(token):
    """Forget the stores of one fit in this worker process (``Client.run``)."""
    with _STORES_LOCK:
        for key in [key for key in _STORES if key[0] == token]:
            del _STORES[key]


def _model_products(X, y, sample_weight, key, family, selected, coef, intercept, loss):
    """A chunk's part of ``X^T R`` at the model ``(coef, intercept)``.

    The residual rows ``w_i (p_i - e_{y_i})`` are computed here, on the
    worker, from the chunk's columns of the ``selected`` candidates (kept
    on the worker, :func:`_stored_columns`), so that only the model travels.
    """
    scores = np.empty((X.shape[0], intercept.shape[0]))
    scores[:] = intercept
    if selected.size:
        scores += _stored_columns(X, family, key, selected) @ coef.T
    residual = np.empty_like(scores)
    loss.sum_gradient(scores, y, sample_weight, residual)
    return family._chunk_products(X, residual)


def _pick(products, family, excluded):
    """``family._pick`` on the summed products, on the worker of the tree's root."""
    return family._pick(products, excluded)


def _finish(combine, finish, args, *parts):
    """The root of a tree: ``finish(combine(*parts), *args)``."""
    return finish(combine(*parts), *args)


def _picked_columns(X, key, family, pick):
    """The columns of the candidate ``pick = (id, score)`` on a chunk, kept in its store."""
    return _stored_columns(X, family, key, [pick[0]]).copy()


def _add(*parts):
    total = parts[0].copy()
    for part in parts[1:]:
        total += part
    return total


class RowChunks:
    """The row chunks of a dask array, persisted on the workers of a distributed client.

    Every chunk is checked (finite) when first computed; a chunk lost with
    its worker is recomputed from the array's graph by the scheduler.
    ``keys[i]`` names chunk ``i``'s store of selected columns on the worker
    that runs its tasks (:func:`_stored_columns`), kept outside the task
    graph until :meth:`release`.

    Parameters
    ----------
    X : dask.array.Array of shape (n_samples, n_features)
        Checked by :func:`mcsparse.utils._dask.check_dask_matrix`.
    client : distributed.Client, default=None
        None: the current client.
    """

    def __init__(self, X, client=None):
        self.client = current_client() if client is None else client
        self.n_samples, self.n_features = (int(s) for s in X.shape)
        from distributed import futures_of

        X = self.client.persist(X)  # a no-op for an array persisted already
        by_key = {future.key: future for future in futures_of(X)}
        chunks = [by_key[row[0]] for row in X.__dask_keys__()]
        sizes = [int(c) for c in X.chunks[0]]
        workers = sorted(self.client.scheduler_info()["workers"])
        pieces = balanced_pieces(sizes, max(len(workers), 1))
        who_has = self.client.who_has(chunks) if workers else {}
        owner = self._owners(chunks, pieces, workers, who_has)
        self.chunk_of = [c for c, *_ in pieces]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
        self.sizes = tuple(b - a for _, a, b, _ in pieces)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)]).astype(np.intp)
        self._labels = None
        self.token = uuid.uuid4().hex
        self.keys = [(self.token, i) for i in range(len(self.sizes))]
        self._workers = [owner[r] for *_, r in pieces]
        self.futures = [
            self._piece(chunks[c], sizes[c], (c, int(starts[c]), a, b), self._workers[i],
                        who_has.get(chunks[c].key, ()))
            for i, (c, a, b, _) in enumerate(pieces)]

    def _piece(self, chunk, size, where, owner, holders):
        """A future of rows ``a:b`` of a chunk of ``size`` rows kept on ``owner``:
        ``where = (index, start, a, b)``.

        A piece for a worker that does not hold its chunk is cut (and
        checked) where the chunk is held, so that only its rows move, not
        the whole chunk. Its lineage runs through the cut: a lost worker's
        pieces are recomputed from the array.
        """
        submit = self.client.submit
        if not holders or owner is None or owner[0] in holders:
            return submit(_persisted, chunk, *where, workers=owner,
                          allow_other_workers=True, pure=False)
        cut = submit(_checked_rows, chunk, *where, workers=list(holders),
                     allow_other_workers=True, pure=False)
        return submit(_kept, cut, where[2] == 0 and where[3] == size, workers=owner,
                      allow_other_workers=True, pure=False)

    def _owners(self, futures, pieces, workers, who_has):
        """The worker (a list, or None) of each share of rows in ``pieces``.

        Every round reads every piece where it is kept, so each worker is
        given one share of the rows (:func:`balanced_pieces`), once, when
        the chunks are persisted: the share goes to the free worker that
        already holds the most of its rows, so that little data moves. A
        worker lost later leaves its pieces to be recomputed anywhere.
        """
        n_shares = max(r for *_, r in pieces) + 1
        if not workers:
            return [None] * n_shares
        held = np.zeros((n_shares, len(workers)))
        for c, a, b, r in pieces:
            for w in who_has.get(futures[c].key, ()):
                if w in workers:
                    held[r, workers.index(w)] += b - a
        owner, free = [], list(range(len(workers)))
        for r in range(n_shares):
            best = max(free, key=lambda w: (held[r, w], -w))
            free.remove(best)
            owner.append([workers[best]])
        return owner

    def rows(self, i):
        """The rows of chunk ``i``: a slice of the training samples."""
        return slice(int(self.starts[i]), int(self.starts[i + 1]))

    def _named_error(self, futures):
        """The error of the first failed future of one per chunk, naming its chunk."""
        for i, future in enumerate(futures):
            if future.status not in ("error", "cancelled"):
                continue
            rows = (f"X chunk {self.chunk_of[i]} (rows {self.starts[i]} to "
                    f"{self.starts[i + 1] - 1})")
            if future.status == "cancelled":
                return RuntimeError(f"{rows} was lost: its task was cancelled (the client "
                                    "or the cluster shut down?)")
            exc = future.exception()
            if isinstance(exc, (ValueError, TypeError)):
                return exc
            return RuntimeError(f"{rows} could not be computed: {type(exc).__name__}: {exc}")
        return None

    def _get(self, futures, last=None):
        """Gather ``futures`` (or only ``last``, computed from them); errors name the chunk."""
        from distributed import wait

        try:
            return self.client.gather(futures if last is None else last)
        except Exception as exc:  # noqa: BLE001 - re-raised, named when it is a chunk's
            wait(futures)
            named = self._named_error(futures)
            if named is None:
                raise
            if named is exc or (type(named) is type(exc) and str(named) == str(exc)):
                raise exc
            raise named from exc

    def map(self, fn, per_chunk=(), shared=()):
        """``fn(X_c, *[a[c] for a in per_chunk], *shared)`` on every chunk ``c``: futures.

        Not waited for: :meth:`gather_rows` and :meth:`map_reduce` raise the
        errors of the tasks (a bad chunk's own ValueError; a chunk that
        cannot be computed, named).
        """
        per_chunk = [list(a) for a in per_chunk]
        by_worker = {}
        for i, workers in enumerate(self._workers):
            by_worker.setdefault(tuple(workers or ()), []).append(i)
        futures = [None] * len(self.futures)
        # one message to the scheduler per worker, not one per chunk; each task
        # goes to the worker given its chunk (elsewhere if that one is lost)
        for workers, ids in by_worker.items():
            done = self.client.map(_call, [fn] * len(ids), [self.futures[i] for i in ids],
                                   *([a[i] for i in ids] for a in per_chunk),
                                   *([value] * len(ids) for value in shared),
                                   workers=list(workers) or None, allow_other_workers=True,
                                   pure=False)
            for i, future in zip(ids, done):
                futures[i] = future
        return futures

    def tree(self, futures, combine, finish=None, args=()):
        """A future of ``combine`` over ``futures``, by a tree of tasks on the workers.

        ``finish(result, *args)`` runs in the root's task when given.
        """
        submit = self.client.submit
        level = tree_levels(futures, lambda group: submit(combine, *group, pure=False))
        if finish is not None:
            return submit(_finish, combine, finish, args, *level, pure=False)
        return level[0] if len(level) == 1 else submit(combine, *level, pure=False)

    def map_reduce(self, fn, combine, per_chunk=(), shared=()):
        """``combine`` of ``fn`` on every chunk, by a tree on the workers; the result here."""
        first = self.map(fn, per_chunk, shared)
        return self._get(first, self.tree(first, combine))

    def gather_rows(self, futures):
        """The results of one future per chunk, stacked by rows here."""
        return np.concatenate(self._get(futures))

    def gather_list(self, futures):
        """The results of one future per chunk, as a list here."""
        return self._get(futures)

    def transform(self, fn):
        """Replace every chunk by ``fn(chunk)``, computed and kept on the workers.

        The chunks' lineage is kept: a lost one is recomputed from the array.
        """
        old, self.futures = self.futures, self.map(_persisted_by, shared=(fn,))
        for future in old:
            future.release()

    def labels(self, y, sample_weight):
        """Futures of each chunk's ``(y, sample_weight)`` rows, sent at the first call only.

        A path's labels do not change: the candidate scan and a store of
        selected columns on the workers share them.
        """
        if self._labels is None:
            self._labels = (self.scatter_rows(y), [None] * len(self.sizes)
                            if sample_weight is None else self.scatter_rows(sample_weight))
        return self._labels

    def scatter_rows(self, values):
        """``values`` (one row per sample) split by chunks: one future per chunk.

        Each part is the argument of a task, not scattered data: a worker
        lost with it recomputes it. It is kept by the worker given its
        chunk, so that a task on that chunk moves no rows.
        """
        return [self.client.submit(_identity, values[self.rows(i)], workers=self._workers[i],
                                   allow_other_workers=True, pure=False)
                for i in range(len(self.sizes))]

    def release(self):
        """Forget the persisted chunks, labels and stores of columns (the workers free them)."""
        labels = [f for part in (self._labels or ()) for f in part
                  if f is not None]
        for future in self.futures + labels:
            future.release()
        self.futures, self._labels = [], None
        if self.client.status == "running":
            self.client.run(_drop_stores, self.token, on_error="ignore")


class DaskCandidates(CandidateFeatures, ModelScan):
    """A candidate family scanned on a dask array, chunk by chunk, on the workers.

    The family is fitted from the chunks (``family._fit_chunks``). Each
    :meth:`best_candidate_for_model` sends the workers the current model;
    each chunk's task computes its residual rows from the chunk's selected
    columns (kept on its worker) and its part of ``X^T R`` for all
    candidates; a tree of tasks adds the parts and picks the best candidate
    by the family's own rule, and the chosen candidate's columns are
    computed on the chunks in the same round trip.
    :meth:`training_columns` returns them, gathered. The rounds run by
    direct calls to one actor per worker (:mod:`~._dask_actors`: the same
    functions on the same chunks, past the scheduler) until one fails (a
    worker lost), then as tasks.

    Parameters
    ----------
    family : CandidateFeatures and ChunkScan
        An unfitted family that runs on chunks (module docstring).
    client : distributed.Client, default=None
        None: the current client (``distributed.default_client()``).

    Attributes
    ----------
    family_ : CandidateFeatures
        ``family``, fitted from the chunks.
    n_features_in_, n_candidates_ : int
        The family's.
    """

    #: Rounds by direct calls to one actor per worker (:mod:`~._dask_actors`),
    #: past the scheduler; False: every round as tasks.
    _use_actors = True

    def __init__(self, family, client=None):
        self.family = family
        self.client = client

    def fit(self, X, y=None):
        """Persist the row chunks of ``X`` on the workers and fit the family from them.

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features)
            Chunked by rows, checked by
            :func:`mcsparse.utils._dask.check_dask_matrix`.
        y : None
            Ignored.

        Returns
        -------
        self : DaskCandidates

        Raises
        ------
        TypeError
            If the family is not a :class:`~mcsparse.features._chunk_scan.ChunkScan`.
        ValueError
            If a chunk holds NaN or infinity (named), or the family refuses
            its parameters on chunks.
        """
        self.check(X)
        self._chunks = RowChunks(X, self.client)
        self._gathered = {}
        self._actors = None  # started at the first round
        self._fallback = None  # why the rounds run as tasks, until it is said
        self.family_ = self.family._fit_chunks(self._chunks)
        if self.family_._replaces_chunks:
            # the candidates' matrix, per chunk: what the other methods read
            self._chunks.transform(self.family_._chunk_features)
        # What every chunk task of a round is sent: the family, or the small
        # object that scans its transformed chunks (the templates, 0.2 MB,
        # would otherwise cross the scheduler with each of tens of tasks a round)
        self._scanner = self.family_._chunk_scanner()
        self.n_features_in_ = self.family_.n_features_in_
        self.n_candidates_ = self.family_.n_candidates_
        widths = getattr(self.family_, "candidate_widths_", None)
        if widths is not None:
            self.candidate_widths_ = widths
        return self

    def check(self, X):
        """The checks of :meth:`fit` that need no task: the family runs on chunks,
        and its parameters suit ``X``'s columns (``family._check_chunk_params``).

        Parameters
        ----------
        X : dask.array.Array of shape (n_samples, n_features)

        Returns
        -------
        self : DaskCandidates

        Raises
        ------
        TypeError
            If the family is not a :class:`~mcsparse.features._chunk_scan.ChunkScan`.
        ValueError
            If the family refuses its parameters on chunks.
        """
        if not isinstance(self.family, ChunkScan):
            raise TypeError(
                f"{type(self.family).__name__} does not run on dask arrays (it is not a "
                "ChunkScan family, with the row-chunk methods _fit_chunks, _chunk_products, "
                "_pick and _chunk_columns): use features='raw', DecisionStumps(max_bins=...) "
                "or ConvMaxTemplates"
            )
        self.family._check_chunk_params(int(X.shape[1]))
        return self

    @property
    def row_chunks(self):
        """The persisted chunks (:class:`RowChunks`), for a store of selected columns
        on the workers (:mod:`mcsparse.solvers._dask_columns`)."""
        self._check_scanning()
        return self._chunks

    def _check_scanning(self):
        if getattr(self, "_chunks", None) is None:
            raise RuntimeError("DaskCandidates is not scanning: fit it first")

    def best_candidate(self, residual, excluded):
        """The candidate with the largest score, computed on the workers.

        The protocol's method: the residual rows travel to the workers.
        :func:`~mcsparse.solvers.shareboost_path` calls
        :meth:`best_candidate_for_model` instead, which sends the model.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows; each chunk's rows travel to its worker.
        excluded : ndarray of intp
            Candidates that must not be returned.

        Returns
        -------
        id : int
        score : float
            As the family's ``best_candidate`` in memory.
        """
        self._check_scanning()
        chunks = self._chunks
        excluded = self._check_excluded(excluded, self.n_candidates_)
        residual = self._check_residual(residual, chunks.n_samples)
        parts = [residual[chunks.rows(i)] for i in range(len(chunks.sizes))]
        products = chunks.map_reduce(self._scanner._chunk_products, _add, per_chunk=(parts,))
        return self._scanner._pick(products, excluded)

    def best_candidate_for_model(self, labels, selected, coef, intercept, excluded):
        """:meth:`best_candidate` at a model: the residual is computed on the workers.

        Each worker computes its chunks' selected columns (from the chunk and
        the ids: a slice of the candidate matrix, or the stumps'
        comparisons), their scores, the residual rows by the given loss
        and its part of ``X^T R``; only ``coef`` and ``intercept`` travel
        to the workers, and the summed products back. A task depends on its
        chunk and labels alone, whatever the number of rounds.

        Parameters
        ----------
        labels : ScanLabels
            The labels ``y``, the (scaled) sample weights and the loss
            (:class:`~mcsparse.features._chunk_scan.ScanLabels`, or any
            object with these attributes); ``y`` and the weights are sent to
            the workers on the first call.
        selected : sequence of int
            The selected candidates, in the order of ``coef``'s columns.
        coef : ndarray of shape (n_scores, n_columns)
            ``W`` on the selected candidates' columns (not centred).
        intercept : ndarray of shape (n_scores,)
        excluded : ndarray of intp

        Returns
        -------
        id : int
        score : float
            As :meth:`best_candidate` with the residual at this model.
        """
        self._check_scanning()
        chunks = self._chunks
        excluded = self._check_excluded(excluded, self.n_candidates_)
        per_chunk = chunks.labels(labels.y, labels.sample_weight)
        model = (np.asarray(selected, dtype=np.intp).reshape(-1),
                 np.ascontiguousarray(coef, dtype=np.float64),
                 np.ascontiguousarray(intercept, dtype=np.float64), labels.loss)
        best = self._by_actors(per_chunk, excluded, model)
        if best is not None:
            j, score, self._gathered[j] = best
            self.family_._picked(j)
            return j, score
        products = chunks.map(_model_products, per_chunk=(*per_chunk, chunks.keys),
                              shared=(self._scanner, *model))
        # the pick runs on the workers, and the chosen candidate's columns are
        # computed there at once: one round trip per round
        pick = chunks.tree(products, _add, _pick, (self._scanner, excluded))
        columns = chunks.map(_picked_columns, per_chunk=(chunks.keys,),
                             shared=(self._scanner, pick))
        (j, score), *parts = chunks._get(products, [pick, *columns])
        if self._fallback is not None:  # said once the tasks ran, not before their errors
            warnings.warn(f"{self._fallback}; the rounds run as dask tasks from here: the same "
                          "results, one round trip to the scheduler more a round",
                          RuntimeWarning, stacklevel=2)
            self._fallback = None
        self._gathered[j] = np.concatenate(parts)
        self.family_._picked(j)  # on the client, as best_candidate in memory notes it
        return j, score

    def _by_actors(self, per_chunk, excluded, model):
        """A round by the workers' actors (:mod:`~._dask_actors`); None: run it as tasks.

        The actors are started at the first round; once a round fails (a
        worker lost), the path runs as tasks to its end, and the first round
        the tasks finish says so (a RuntimeWarning).
        """
        if not self._use_actors or self._actors is False:
            return None
        from ._dask_actors import ChunkHolders, NoRoom

        if self._actors is None:
            try:
                self._actors = ChunkHolders(self._chunks, per_chunk, self._scanner)
            except NoRoom:  # the tasks read spilled chunks back (the user guide says so)
                self._actors = False
                return None
            except Exception as exc:  # noqa: BLE001 - the tasks raise the chunks' errors, named
                self._actors = False
                self._fallback = ("the workers' actors could not start "
                                  f"({type(exc).__name__}: {exc})")
                return None
        best = self._actors.best(self._scanner, excluded, model)
        if best is None:
            self._actors.release()
            self._actors = False
            self._fallback = "a round by the workers' actors did not finish (a worker lost?)"
        return best

    def training_columns(self, ids):
        """Candidates ``ids`` on the training data, gathered from the workers (float64).

        The candidate chosen by the last :meth:`best_candidate_for_model`
        came with it; others are computed on the chunks now.

        Parameters
        ----------
        ids : array-like of int

        Returns
        -------
        columns : ndarray of shape (n_samples, n_columns)
        """
        self._check_scanning()
        ids = self._check_ids(ids, self.n_candidates_)
        blocks = [self._gathered.pop(j) if j in self._gathered
                  else self._chunks.gather_rows(self._chunks.map(
                      self._scanner._chunk_columns, shared=(np.array([j], dtype=np.intp),)))
                  for j in ids.tolist()]
        return np.hstack(blocks) if blocks else np.zeros((self._chunks.n_samples, 0))

    def end_scan(self, ids):
        """Release the chunks and end the family's scan on ``ids``.

        Parameters
        ----------
        ids : array-like of int

        Returns
        -------
        self : DaskCandidates
        """
        self.release()
        self.family_.end_scan(ids)
        self.support_ = self.family_.support_
        return self

    def release(self):
        """Forget the persisted chunks and the workers' actors (idempotent)."""
        if getattr(self, "_actors", None):
            self._actors.release()
        self._actors = None
        if getattr(self, "_chunks", None) is not None:
            self._chunks.release()
            self._chunks = None
            self._gathered = {}

    def transform_candidates(self, X, ids):
        """The family's ``transform_candidates`` (NumPy input).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        ids : array-like of int

        Returns
        -------
        columns : ndarray of shape (n_samples, n_columns)
        """
        return self.family_.transform_candidates(X, ids)
