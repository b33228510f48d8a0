"""Decision stumps as a ShareBoost candidate family ([SWS2011], §4.1)."""

import numpy as np
import scipy.sparse as sp
from joblib import effective_n_jobs
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._ties import first_best, tie_cutoff
from ..utils.validation import check_int, check_n_jobs
from ._base import CandidateFeatures, Cuts
from ._chunk_scan import ChunkScan
from ._stump_chunks import BinnedStumpScan, bin_chunk, stump_columns
from ._stumps_fast import _executor, scan_stumps


def _first_best(scores):
    """:func:`~mcsparse.utils._ties.first_best` of the stumps' (or features') scores.

    Raises ValueError when no stump is left.
    """
    i = first_best(scores)
    if i < 0:
        raise ValueError(
            "no decision stump left to select: every feature is constant "
            "on the training data or all its stumps are selected"
        )
    return i


def rank_stumps(X, n_jobs=None):
    """Rank every feature's values once: the data the stump scan reads.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32 or float64
        Training data (dense).
    n_jobs : int, default=None
        Threads ranking the features (scikit-learn's convention, through
        :func:`joblib.effective_n_jobs`): the sorts run without the GIL.
        The result does not depend on it.

    Returns
    -------
    ranks : ndarray of shape (n_features, n_samples), int32, C order
        ``ranks[f, i]``: rank of ``X[i, f]`` among the distinct values of
        column ``f`` (0 for the smallest).
    values : ndarray of shape (n_values_total,), float64
        The distinct values of every feature in increasing order, feature
        after feature; feature ``f``'s start at ``offsets[f] + f``.
    offsets : ndarray of shape (n_features + 1,), intp
        Cumulative number of candidates: feature ``f`` owns the candidate ids
        ``offsets[f] .. offsets[f + 1] - 1``, one per pair of consecutive
        distinct values, in increasing threshold order.
    """
    n_samples, n_features = X.shape
    if n_samples >= np.iinfo(np.int32).max:
        raise ValueError(f"too many samples for int32 ranks: {n_samples}")
    ranks = np.empty((n_features, n_samples), dtype=np.int32)

    def rank(f):  # one column at a time: no (n, d) int64 temporary
        column = np.ascontiguousarray(X[:, f])
        ordered = np.sort(column)
        first = np.ones(n_samples, dtype=bool)
        np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
        distinct = ordered[first]
        ranks[f] = np.searchsorted(distinct, column)
        return distinct.astype(np.float64)

    n_threads = min(effective_n_jobs(n_jobs), n_features)
    if n_threads > 1:
        values = list(_executor(n_threads).map(rank, range(n_features)))
    else:
        values = [rank(f) for f in range(n_features)]
    n_values = np.array([v.size for v in values], dtype=np.intp)
    offsets = np.zeros(n_features + 1, dtype=np.intp)
    np.cumsum(np.maximum(n_values - 1, 0), out=offsets[1:])
    values = np.concatenate(values) if values else np.zeros(0)
    return ranks, values, offsets


def stump_thresholds(values, counts, max_bins=None):
    """Thresholds of one feature's stumps from its distinct values and their counts.

    Parameters
    ----------
    values : ndarray of shape (n_values,), float
        The feature's distinct values, increasing.
    counts : ndarray of shape (n_values,), int
        How many samples hold each value.
    max_bins : int, default=None
        None: a threshold halfway between every two consecutive values. An
        int: at most ``max_bins - 1`` thresholds, halfway between the
        consecutive values where the cumulative count first reaches
        ``q * n_samples / max_bins`` (``q = 1 .. max_bins - 1``): quantile
        bin edges, as LightGBM and XGBoost bin features. A feature with at
        most ``max_bins`` distinct values keeps all its thresholds.

    Returns
    -------
    thresholds : ndarray of shape (n_thresholds,), float64
        Increasing; ``a <= theta < b`` for the two values ``a < b`` around
        each threshold (halfway, or ``a`` when adjacent floats round up).
    """
    values = np.asarray(values, dtype=np.float64)
    cuts = np.arange(values.size - 1)
    if max_bins is not None and values.size > max_bins:
        cumulative = np.cumsum(counts)
        targets = np.arange(1, max_bins) * (cumulative[-1] / max_bins)
        cuts = np.unique(np.minimum(np.searchsorted(cumulative, targets), values.size - 2))
    a, b = values[cuts], values[cuts + 1]
    theta = 0.5 * a + 0.5 * b  # no overflow for values near the float max
    return np.where((a <= theta) & (theta < b), theta, a)


def bin_stumps(X, max_bins):
    """Rank every feature's values against its ``max_bins`` quantile thresholds.

    The data :class:`DecisionStumps` scans with ``max_bins`` set (the binned
    twin of :func:`rank_stumps`).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float32 or float64
        Training data (dense).
    max_bins : int
        Bins per feature (:func:`stump_thresholds`).

    Returns
    -------
    ranks : ndarray of shape (n_features, n_samples), int32, C order
        ``ranks[f, i]``: the number of thresholds of feature ``f`` below
        ``X[i, f]``, so that stump ``r`` of ``f`` is ``ranks[f] <= r``.
    thresholds : ndarray of shape (n_candidates,), float64
        Every feature's thresholds, feature after feature.
    offsets : ndarray of shape (n_features + 1,), intp
        Feature ``f`` owns the candidate ids ``offsets[f] .. offsets[f + 1] - 1``.
    """
    n_samples, n_features = X.shape
    if n_samples >= np.iinfo(np.int32).max:
        raise ValueError(f"too many samples for int32 ranks: {n_samples}")
    ranks = np.empty((n_features, n_samples), dtype=np.int32)
    thresholds = []
    for f in range(n_features):
        values, counts = np.unique(X[:, f], return_counts=True)
        thresholds.append(stump_thresholds(values, counts, max_bins))
        ranks[f] = np.searchsorted(thresholds[-1], X[:, f], side="left")
    offsets = np.zeros(n_features + 1, dtype=np.intp)
    np.cumsum([t.size for t in thresholds], out=offsets[1:])
    return ranks, (np.concatenate(thresholds) if thresholds else np.zeros(0)), offsets


#: A feature's most frequent rank is skipped by the scan when at most this
#: fraction of the samples hold another one. The listed samples are read out
#: of order: on 60,000 samples, 10 classes, with the other ranks at random
#: rows, skipping the mode saves 15-20% at a fraction of 0.4 and nothing at
#: 0.6-0.7 (16 or 256 ranks), and costs 5-15% from 0.8 on. MNIST pixels,
#: whose zeros are 80% of the values, scan 2.5 times faster.
SPARSE_FRACTION = 0.6


def compress_ranks(ranks, offsets, max_fraction=SPARSE_FRACTION):
    """Every feature's ranks without its most frequent one: the sparse scan's input.

    Parameters
    ----------
    ranks : ndarray of shape (n_features, n_samples), int32
        From :func:`rank_stumps` or :func:`bin_stumps`.
    offsets : ndarray of shape (n_features + 1,), intp
        Feature ``f`` has ``offsets[f + 1] - offsets[f] + 1`` ranks.
    max_fraction : float, default=SPARSE_FRACTION
        A feature is compressed when at most this fraction of the samples
        hold a rank other than its most frequent one; the others are
        scanned in full.

    Returns
    -------
    modes : ndarray of shape (n_features,), intp
        The most frequent rank of each compressed feature (the lowest of
        equally frequent ones), -1 for a feature scanned in full.
    indptr : ndarray of shape (n_features + 1,), intp
        Feature ``f``'s samples are ``rows[indptr[f]:indptr[f + 1]]``.
    rows : ndarray of shape (n_entries,), int32
        The samples whose rank is not their feature's mode, increasing.
    codes : ndarray of shape (n_entries,), int32
        Their ranks.
    """
    n_features, n_samples = ranks.shape
    modes = np.full(n_features, -1, dtype=np.intp)
    indptr = np.zeros(n_features + 1, dtype=np.intp)
    rows, codes = [], []
    for f in range(n_features):
        n_values = int(offsets[f + 1] - offsets[f]) + 1
        if n_values >= 2 and n_samples > 0:
            counts = np.bincount(ranks[f], minlength=n_values)
            mode = int(np.argmax(counts))
            if n_samples - counts[mode] <= max_fraction * n_samples:
                modes[f] = mode
                rows.append(np.flatnonzero(ranks[f] != mode).astype(np.int32))
                codes.append(ranks[f, rows[-1]])
        indptr[f + 1] = indptr[f] + (rows[-1].size if modes[f] >= 0 else 0)
    empty = np.zeros(0, dtype=np.int32)
    return (modes, indptr, np.concatenate(rows) if rows else empty,
            np.concatenate(codes) if codes else empty)


def _twin_bins(ranks, residual, f, n_values, sparse, totals):
    """Per-rank residual sums of feature ``f``, as ``scan_stumps`` adds them."""
    k = residual.shape[1]
    mode = -1 if sparse is None else int(sparse[0][f])
    if mode < 0:
        rows, codes = slice(None), ranks[f]
    else:
        lo, hi = sparse[1][f], sparse[1][f + 1]
        rows, codes = sparse[2][lo:hi], sparse[3][lo:hi]
    bins = np.column_stack([  # float64 even without samples (bincount gives ints)
        np.bincount(codes, weights=residual[rows, c].astype(np.float64),
                    minlength=n_values).astype(np.float64)
        for c in range(k)]).reshape(n_values, k)
    if mode >= 0:  # the mode's bin: the totals less the others (summed in order)
        bins[mode] = totals - np.cumsum(bins, axis=0)[-1]
    return bins


def scan_stumps_numpy(ranks, residual, offsets, excluded, cutoff=None, sparse=None):
    """Plain-NumPy twin of the Cython ``scan_stumps`` (for tests and benchmarks).

    Same arguments and results: per feature, the best non-excluded stump's
    score ``||sum_{v_f <= theta} R_i||_1`` and global id (``-inf`` and -1
    when the feature has no candidate left), and the feature's largest
    score. The best stump is the first threshold tied with the feature's
    largest score (within the relative ``TIE_RTOL``), or with ``cutoff`` the
    first scoring at least ``cutoff``. Per-value sums by ``np.bincount``
    (with ``sparse``, :func:`compress_ranks`, over the samples outside each
    feature's mode, whose bin is the column totals less the others), then
    prefix sums by ``np.cumsum``, one feature at a time.
    """
    if cutoff is not None and np.isnan(cutoff):
        raise ValueError("cutoff must not be NaN")
    n_features = ranks.shape[0]
    best_score = np.full(n_features, -np.inf)
    best_id = np.full(n_features, -1, dtype=np.intp)
    max_score = np.full(n_features, -np.inf)
    excluded = set(np.asarray(excluded).tolist())
    totals = None
    if residual.shape[0] and residual.shape[1]:
        totals = np.cumsum(residual.astype(np.float64), axis=0)[-1]  # in row order
    for f in range(n_features):
        n_values = offsets[f + 1] - offsets[f] + 1
        if n_values < 2 or totals is None:
            continue
        bins = _twin_bins(ranks, residual, f, n_values, sparse, totals)
        prefix = np.cumsum(bins[:-1], axis=0)
        scores = np.abs(prefix).sum(axis=1)
        ids = offsets[f] + np.arange(n_values - 1)
        keep = np.array([i not in excluded for i in ids.tolist()], dtype=bool)
        scores = np.where(keep, scores, -np.inf)
        max_score[f] = np.max(scores, initial=-np.inf, where=~np.isnan(scores))
        if max_score[f] == -np.inf:
            continue
        cut = tie_cutoff(max_score[f]) if cutoff is None else cutoff
        above = np.flatnonzero(scores >= cut)
        if above.size:
            best_score[f], best_id[f] = scores[above[0]], ids[above[0]]
    return best_score, best_id, max_score


def _value_counts(X):
    """Per feature of a row chunk: its distinct values and their counts."""
    return [np.unique(X[:, f], return_counts=True) for f in range(X.shape[1])]


def _merge_value_counts(*parts):
    """Merge the per-feature ``(values, counts)`` of several chunks."""
    merged = []
    for per_feature in zip(*parts):
        values = np.concatenate([v for v, _ in per_feature])
        counts = np.concatenate([c for _, c in per_feature])
        values, inverse = np.unique(values, return_inverse=True)
        merged.append((values, np.bincount(inverse.ravel(), weights=counts,
                                           minlength=values.size).astype(np.int64)))
    return merged


class DecisionStumps(CandidateFeatures, ChunkScan):
    r"""All decision stumps ``1[v_f <= theta]``: a ShareBoost candidate family.

    The candidates are, for every original feature ``f`` and every threshold
    ``theta`` halfway between two consecutive distinct training values of
    ``f``, the binary feature ``1[v_f <= theta]`` ([SWS2011]_, §4.1; the
    constant all-ones stump is left out, it duplicates the intercept). Each
    feature's values are ranked once in :meth:`fit` (one sort); then every
    round a Cython module scores all thresholds of a feature in one pass over
    the samples, adding each residual row into its value's bin and taking
    prefix sums of the bins: ``O(n_samples * n_classes)`` per feature, and no
    stump is ever materialised. The samples holding a feature's most frequent
    value (the zeros of sparse pixels) are skipped: its bin is the residual's
    column totals less the other bins, as LightGBM does. Features are
    scanned on ``n_jobs`` threads.

    Used as ``ShareBoostClassifier(features="stumps")`` or
    ``features=DecisionStumps()``.

    Parameters
    ----------
    max_bins : int, default=None
        None: every threshold between two consecutive distinct values. An
        int >= 2: at most ``max_bins - 1`` thresholds per feature, at the
        quantiles of its training values (:func:`stump_thresholds`; global
        bin edges, as LightGBM and XGBoost use on clusters). The same edges
        are computed on a dask array, so an in-memory and a distributed fit
        select the same stumps. Features with at most ``max_bins`` distinct
        values are not binned.
    n_jobs : int, default=None
        Threads scanning the features (contiguous groups of features, each
        scanned alone without the GIL, so the selection does not depend on
        it); a :class:`~mcsparse.ShareBoostClassifier` fitted with this
        family also runs its refit's row-block passes on them. None means 1
        unless in a :func:`joblib.parallel_backend` context; -1 means all
        processors (scikit-learn's convention).

    Attributes
    ----------
    n_features_in_ : int
        Number of original features.
    n_candidates_ : int
        Number of stumps: the sum over features of (distinct values - 1).
    stump_features_ : ndarray of shape (n_selected,), intp
        After :meth:`end_scan`: the original feature of each kept stump, in
        the order of the ids kept (for a fitted ShareBoostClassifier's
        ``features_``, its ``selected_features_``: selection order).
    thresholds_ : ndarray of shape (n_selected,), float64
        After :meth:`end_scan`: the threshold of each kept stump, in the
        same order.
    support_ : ndarray of shape (n_features,), bool
        After :meth:`end_scan`: the original features the kept stumps read.

    Notes
    -----
    The gradient column of the stump with threshold ``theta`` is a prefix
    sum over the distinct values of ``v_f`` up to ``theta``

    .. math::

        G_{:, (f, \theta)} = \frac{1}{\sum_i w_i} \sum_{i : v_{i,f} \le \theta}
        w_i (p_i - e_{y_i}),

    and ShareBoost's score is its l1 norm over classes. Memory: int32 ranks,
    4 bytes per (sample, feature), 8 more per sample that does not hold its
    feature's most frequent value (for the features where at most
    ``SPARSE_FRACTION`` = 60% of the samples do; :func:`compress_ranks`),
    and the distinct values. The per-value
    bins stay in cache when features have few distinct values (pixels,
    integer features), which keeps the time per round linear in
    ``n_samples``. Sparse input is densified.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §4.1.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.features import DecisionStumps
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> stumps = DecisionStumps().fit(X)
    >>> stumps.n_candidates_
    3
    >>> R = np.array([[-1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, -1.0]])
    >>> stumps.best_candidate(R, np.array([], dtype=np.intp))
    (1, 4.0)
    >>> stumps.end_scan([1]).thresholds_
    array([1.5])
    """

    def __init__(self, max_bins=None, n_jobs=None):
        self.max_bins = max_bins
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None):
        """Sort every feature of the training data once.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 is kept, other dtypes become float64;
            sparse input is densified.
        y : None
            Ignored.

        Returns
        -------
        self : DecisionStumps
            The fitted family.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, or is empty, or ``n_jobs`` is 0.
        TypeError
            If ``n_jobs`` is neither None nor an int.
        """
        check_n_jobs(self.n_jobs)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32))
        if sp.issparse(X):
            X = X.toarray()
        if self.max_bins is not None:
            check_int(self.max_bins, "max_bins", low=2)
        if self.max_bins is None:
            self._ranks, self._values, self._offsets = rank_stumps(X, self.n_jobs)
            self._thresholds = None
        else:
            self._ranks, self._thresholds, self._offsets = bin_stumps(X, self.max_bins)
        self._sparse = compress_ranks(self._ranks, self._offsets)
        self._X_fit = X
        self._definitions = {}
        self.n_candidates_ = int(self._offsets[-1])
        return self

    def _threshold(self, f, r):
        """Halfway between the distinct values of ranks r and r + 1 of feature f."""
        if self._thresholds is not None:  # binned: the thresholds are the edges
            return float(self._thresholds[self._offsets[f] + r])
        start = self._offsets[f] + f
        a = float(self._values[start + r])
        b = float(self._values[start + r + 1])
        theta = 0.5 * a + 0.5 * b  # no overflow for values near the float max
        # adjacent floats: the halfway point may round up to b; keep a <= theta < b
        return theta if a <= theta < b else a

    def best_candidate(self, residual, excluded):
        """The stump with the largest ``||R^T x||_1`` outside ``excluded``.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float32 or float64
            Residual rows of the training samples.
        excluded : ndarray of shape (n_excluded,), intp
            Stump ids that must not be returned.

        Returns
        -------
        id : int
            The chosen stump's id: the lowest id (feature, then threshold)
            among the stumps whose score is within the relative ``TIE_RTOL``
            (1e-4, :mod:`mcsparse.utils._ties`) of the largest, so that
            rounding does not decide between equally good stumps.
        score : float
            Its ``||R^T x||_1``.

        Raises
        ------
        ValueError
            If no stump is left (all features constant or all selected).
        """
        self._check_scanning()
        excluded = self._check_excluded(excluded, self.n_candidates_)
        residual = np.ascontiguousarray(residual)
        n_threads = effective_n_jobs(self.n_jobs)
        score, ids, top = scan_stumps(self._ranks, residual, self._offsets, excluded,
                                      sparse=self._sparse,
                                      n_threads=n_threads)
        f = _first_best(top)
        best = top.max()
        if top[f] < best:
            # a later feature scores higher, within the tolerance: f's stump is
            # then its first threshold tied with that higher score
            lo, hi = self._offsets[f], self._offsets[f + 1]
            local = excluded[(excluded >= lo) & (excluded < hi)] - lo
            s, i, _ = scan_stumps(self._ranks[f:f + 1], residual,
                                  np.array([0, hi - lo], dtype=np.intp), local,
                                  cutoff=tie_cutoff(best), sparse=self._feature_sparse(f))
            score[f], ids[f] = s[0], lo + i[0]
        return self._chosen(int(ids[f]), score[f])

    def _feature_sparse(self, f):
        """The ``sparse`` argument of ``scan_stumps`` for feature ``f`` alone."""
        modes, indptr, rows, codes = self._sparse
        return modes[f:f + 1], indptr[f:f + 2], rows, codes

    def _chosen(self, stump_id, score):
        """``(stump_id, score)``, keeping the stump's definition for its name."""
        self._definition(stump_id)
        return stump_id, float(score)

    def _check_chunk_params(self, n_features):
        """On chunks, ``max_bins`` is needed (checked before any task)."""
        if self.max_bins is None:
            raise ValueError(
                "DecisionStumps on a dask array needs max_bins (e.g. "
                "DecisionStumps(max_bins=256)): quantile thresholds are computed from "
                "merged value counts, as LightGBM and XGBoost do on clusters"
            )
        check_int(self.max_bins, "max_bins", low=2)

    def _fit_chunks(self, chunks):
        """Fit on a dask array's row chunks (:mod:`mcsparse.features._dask`).

        The distinct values of every feature and their counts are merged
        over the chunks by a tree reduction; the thresholds are then those
        :meth:`fit` computes on the same data in memory. Needs ``max_bins``.
        """
        self._check_chunk_params(chunks.n_features)
        counts = chunks.map_reduce(_value_counts, _merge_value_counts)
        thresholds = [stump_thresholds(v, c, self.max_bins) for v, c in counts]
        self.n_features_in_ = chunks.n_features
        self._offsets = np.zeros(chunks.n_features + 1, dtype=np.intp)
        np.cumsum([t.size for t in thresholds], out=self._offsets[1:])
        self._thresholds = np.concatenate(thresholds) if thresholds else np.zeros(0)
        # the chunks stay on the workers
        self._X_fit = self._ranks = self._values = self._sparse = None
        self._definitions = {}
        self.n_candidates_ = int(self._offsets[-1])
        return self

    #: On a dask array each chunk is binned once, on its worker (:meth:`_chunk_features`).
    _replaces_chunks = True

    def _chunk_features(self, X):
        """A row chunk's bins against the thresholds (:func:`~._stump_chunks.bin_chunk`)."""
        return bin_chunk(X, self._thresholds, self._offsets)

    def _chunk_scanner(self):
        """What a round's chunk tasks are sent: the scan of binned chunks, without thresholds."""
        return BinnedStumpScan(self._offsets)

    def _chunk_products(self, X, residual):
        """Every stump's ``R^T x`` on a row chunk: (n_candidates, n_classes), float64.

        The chunk is binned (:meth:`_chunk_features`) and scanned as on the
        workers (:class:`~._stump_chunks.BinnedStumpScan`): a sum over rows,
        so the chunks' parts add up to the gradient columns of all stumps.
        """
        return self._chunk_scanner()._chunk_products(self._chunk_features(X), residual)

    def _pick(self, products, excluded):
        """The stump ``best_candidate`` returns, from the summed products.

        The same rule as the scan in memory: the lowest id among the stumps
        tied with the best (within the relative ``TIE_RTOL``).
        """
        scores = np.abs(products).sum(axis=1)
        scores[excluded] = -np.inf
        j = _first_best(scores)
        return self._chosen(j, scores[j])

    def _chunk_columns(self, X, ids):
        """Stumps ``ids`` on a row chunk of the training data (not binned)."""
        return self._columns(X, ids)

    def _picked(self, j):
        """Keep the definition of stump ``j``, picked on the workers, for its name."""
        self._definition(j)

    def _definition(self, stump_id):
        try:
            return self._definitions[stump_id]
        except KeyError:
            if getattr(self, "_X_fit", None) is None and getattr(
                    self, "_thresholds", None) is None:
                raise ValueError(
                    f"stump {stump_id} was not kept by end_scan"
                ) from None
        # any id of a fitted family: find its feature and value rank
        f = int(np.searchsorted(self._offsets, stump_id, side="right") - 1)
        self._definitions[stump_id] = (f, self._threshold(f, stump_id - int(self._offsets[f])))
        return self._definitions[stump_id]

    def _columns(self, X, ids):
        out = np.empty((X.shape[0], len(ids)))
        for c, stump_id in enumerate(ids):
            f, theta = self._definition(int(stump_id))
            v = X[:, f]
            if sp.issparse(v):
                v = v.toarray().ravel()
            # in float64, as the thresholds and the scan's ranks: NumPy would
            # compare float32 values with theta rounded to float32, which may
            # round it up to the next value
            out[:, c] = np.asarray(v, dtype=np.float64) <= theta
        return out

    def _candidate_name(self, j, input_names):
        f, theta = self._definition(j)
        return f"{input_names[f]} <= {theta:.6g}"

    def training_columns(self, ids):
        """Evaluate the stumps ``ids`` on the training data.

        Parameters
        ----------
        ids : array-like of int
            Stump ids.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            ``1[v_f <= theta]`` of each stump, as 0/1.
        """
        self._check_scanning()
        ids = self._check_ids(ids, self.n_candidates_)
        if getattr(self, "_ranks", None) is None:  # a family fitted on chunks
            return self._columns(self._X_fit, ids)
        # from the ranks (contiguous) rather than X's strided columns: ``x <= theta``
        # is ``rank <= r`` by the thresholds' construction (tests compare both)
        return stump_columns(self._ranks, self._offsets, ids)

    def training_cuts(self, stump_id):
        """Stump ``stump_id`` on the training data as integer codes and a cut.

        Parameters
        ----------
        stump_id : int
            A stump id.

        Returns
        -------
        cut : tuple (codes, cut) or None
            ``codes``, int32 of shape (n_samples,), read-only: the ranks (or
            bins) of the stump's feature; the stump is ``1[codes <= cut]``.
            None when the family scans chunks (a distributed fit).
        """
        self._check_scanning()
        if getattr(self, "_ranks", None) is None:
            return None
        stump_id = check_int(stump_id, "stump_id", low=0, high=self.n_candidates_ - 1)
        f = int(np.searchsorted(self._offsets, stump_id, side="right") - 1)
        # the column store keeps a reference (here, not in fit: an unpickled
        # family's ranks are writeable again)
        self._ranks.flags.writeable = False
        return self._ranks[f], stump_id - int(self._offsets[f])

    def training_block(self, j):
        """Stump ``j``'s training column as ``Cuts(codes, cut)`` (:meth:`training_cuts`).

        Parameters
        ----------
        j : int
            A stump id.

        Returns
        -------
        block : Cuts or Dense
            ``Dense(training_columns([j]))`` when ``training_cuts`` gives
            None (a family fitted on chunks).

        Raises
        ------
        ValueError
            If ``training_cuts`` returns neither None nor a pair.
        """
        out = self.training_cuts(j)
        if out is None:
            return super().training_block(j)
        return Cuts.from_pair(out, f"{type(self).__name__}.training_cuts({j})")

    def end_scan(self, ids):
        """Free the ranks and keep the stumps ``ids``.

        Parameters
        ----------
        ids : array-like of int
            The stumps to keep (the selected ones).

        Returns
        -------
        self : DecisionStumps
            With ``stump_features_`` and ``thresholds_`` set, aligned with
            ``ids``, and ``support_``.
        """
        check_is_fitted(self)
        ids = self._check_ids(ids, self.n_candidates_)
        definitions = [self._definition(int(i)) for i in ids]
        self._definitions = dict(zip(ids.tolist(), definitions))
        self.stump_features_ = np.array([f for f, _ in definitions], dtype=np.intp)
        self.thresholds_ = np.array([t for _, t in definitions], dtype=np.float64)
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[self.stump_features_] = True
        self._X_fit = self._ranks = self._values = self._thresholds = self._sparse = None
        return self

    def transform_candidates(self, X, ids):
        """Evaluate the stumps ``ids`` on new data: ``1[v_f <= theta]`` as float64 0/1.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data, same features as in :meth:`fit`.
        ids : array-like of int
            Stump ids (returned by :meth:`best_candidate` or kept by
            :meth:`end_scan`).

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            Only the used original features are read.

        Raises
        ------
        ValueError
            If ``X`` has the wrong number of features or contains NaN or
            infinity, or an id is out of range or was not kept.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32), reset=False)
        if sp.issparse(X):
            X = X.tocsc()
        return self._columns(X, self._check_ids(ids, self.n_candidates_))
