"""The candidate-feature protocol of ShareBoost, and its raw-column family."""

from abc import ABCMeta, abstractmethod

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..utils._ties import first_best

# -- the training columns of one candidate, as a family hands them to ShareBoost --
#
# ``CandidateFeatures.training_block`` returns one of these typed blocks; the
# block's type says how the solver's column store may keep it
# (``SelectedColumns.put``). Each block names the family method it came from
# (``source``, e.g. ``"AnchorPoints.training_rows(3)"``), so that the
# solver's errors about it name it too. A block other than ``Dense`` is
# checked by the solver against the family's ``training_columns``.

class TrainingBlock:
    """Base of the typed blocks: one candidate's training columns.

    Parameters
    ----------
    source : str, default=None
        The family method that gave the block, with its argument (e.g.
        ``"training_cuts(4)"``), for error messages; None: ``training_block``.
    """

    def __init__(self, source=None):
        self.source = source

    def toarray(self):  # pragma: no cover - every block overrides it
        """The block's columns, dense: ndarray of shape (n_samples, width).

        Raises
        ------
        NotImplementedError
            On the base class.
        """
        raise NotImplementedError

    #: The pair ``from_pair`` takes, as its error message names it.
    _PAIR = "(first, second)"

    @classmethod
    def from_pair(cls, out, source):
        """The block of a family method's pair return value (``_PAIR``).

        Parameters
        ----------
        out : tuple
            ``(rows, values)`` for a :class:`RowSubset`, ``(codes, cut)``
            for :class:`Cuts`.
        source : str
            The method and its argument, e.g. ``"AnchorPoints.training_rows(3)"``.

        Returns
        -------
        block : TrainingBlock
            Of the class it is called on.

        Raises
        ------
        ValueError
            If ``out`` is not a pair (naming ``source``).
        """
        try:
            first, second = out
        except (TypeError, ValueError):
            raise ValueError(f"{source} must return a pair {cls._PAIR}, got "
                             f"{type(out).__name__}") from None
        return cls(first, second, source=source)


class Dense(TrainingBlock):
    """A candidate's training columns as they are.

    Parameters
    ----------
    values : array-like of shape (n_samples, width)
        The columns (float64 reals once the solver has checked them).
    source : str, default=None
        As :class:`TrainingBlock`.
    """

    def __init__(self, values, source=None):
        super().__init__(source)
        self.values = values

    def toarray(self):
        """``values`` as an ndarray, float64.

        Returns
        -------
        columns : ndarray of shape (n_samples, width), float64
        """
        return np.asarray(self.values, dtype=np.float64)


class RowSubset(TrainingBlock):
    """A group of columns equal to ``values`` on ``rows`` and zero elsewhere.

    Parameters
    ----------
    rows : ndarray of shape (n_rows,), intp
        Increasing sample indices.
    values : ndarray of shape (n_samples, width), float64
        C order and read-only with every array it views: the column store
        keeps a reference to it, shared by the candidates of the family.
    source : str, default=None
        As :class:`TrainingBlock`.
    """

    _PAIR = "(rows, values)"

    def __init__(self, rows, values, source=None):
        super().__init__(source)
        self.rows, self.values = rows, values

    def toarray(self):
        """The dense group: ``values`` on ``rows``, zero elsewhere.

        Returns
        -------
        columns : ndarray of shape (n_samples, width), float64

        Raises
        ------
        ValueError
            If ``rows`` do not index ``values``.
        """
        try:
            out = np.zeros(np.shape(self.values))
            out[self.rows] = np.asarray(self.values)[self.rows]
        except (IndexError, TypeError, ValueError) as exc:
            raise ValueError(f"gives rows that do not index its values: {exc}") from None
        return out


class Cuts(TrainingBlock):
    """A decision stump ``1[codes <= cut]``.

    Parameters
    ----------
    codes : ndarray of shape (n_samples,), int32
        The non-negative ranks or bins of one feature, read-only (the column
        store keeps a reference to it).
    cut : int
        Non-negative.
    source : str, default=None
        As :class:`TrainingBlock`.
    """

    _PAIR = "(codes, cut) or None"

    def __init__(self, codes, cut, source=None):
        super().__init__(source)
        self.codes, self.cut = codes, cut

    @classmethod
    def from_pair(cls, out, source):
        """As :meth:`TrainingBlock.from_pair`; also refuses codes that do not compare with the cut.

        Parameters
        ----------
        out : tuple
            ``(codes, cut)``.
        source : str
            E.g. ``"DecisionStumps.training_cuts(3)"``.

        Returns
        -------
        block : Cuts

        Raises
        ------
        ValueError
            If ``out`` is not a pair, or its codes cannot be compared with its cut.
        """
        block = super().from_pair(out, source)
        try:
            block.toarray()
        except ValueError:
            raise ValueError(f"{source} must return a pair (codes, cut) or None, got "
                             f"{type(out).__name__}") from None
        return block

    def toarray(self):
        """The stump's column, 0/1.

        Returns
        -------
        columns : ndarray of shape (n_samples, 1), float64
            For 1-D codes (other codes give their own shape, which the solver
            refuses).

        Raises
        ------
        ValueError
            If the codes cannot be compared with the cut.
        """
        try:
            column = np.asarray(self.codes) <= self.cut
        except (TypeError, ValueError):
            raise ValueError("has codes that do not compare with its cut") from None
        column = column.astype(np.float64)
        return column[:, None] if column.ndim == 1 else column


#: The methods every family defines besides ``fit``: ShareBoost's scan.
SCAN_METHODS = ("best_candidate", "training_columns", "end_scan", "transform_candidates")


class CandidateFeatures(BaseEstimator, metaclass=ABCMeta):
    """Abstract base class of the candidate-feature families ShareBoost selects from.

    ShareBoost ([SWS2011]_, step 4 of the algorithm) only needs, each round,
    the candidate feature ``x_c`` whose gradient column has the largest l1
    norm, ``argmax_c ||R^T x_c||_1`` with ``R`` the residual matrix of the
    training set; and then the chosen column's values. A family may have far
    more candidates than fit in memory (all decision stumps, all templates),
    so it never hands out the whole matrix. A family derives from this class
    and implements:

    ``fit(X, y=None)``
        Prepare the scan on the training data (sorting, k-means, ...); set
        ``n_features_in_`` and ``n_candidates_``. Returns ``self``. Abstract:
        a class without it cannot be instantiated (TypeError).
    ``best_candidate(residual, excluded)``
        ``residual`` of shape (n_samples, n_classes), float64, C order, is
        ``w_i (p_i - e_{y_i})`` per training sample; ``excluded`` is a sorted
        intp array of candidate ids that must not be returned (already
        selected). Returns ``(id, score)``: the int id in
        ``[0, n_candidates_)`` of the best candidate and its score
        ``||R^T x_id||_1`` (unnormalised): the lowest id among the
        candidates whose score is within the relative ``TIE_RTOL`` (1e-4)
        of the largest (:func:`mcsparse.utils._ties.first_best`).
    ``training_columns(ids)``
        The candidates' values on the training data, an ndarray of shape
        (n_samples, len(ids)), float64.
    ``end_scan(ids)``
        Free the training-time state, keeping what ``transform_candidates``
        needs for ``ids`` (the selected candidates), and set ``support_``,
        the bool mask of shape (n_features,) over the input features
        those candidates read. Returns ``self``.
    ``transform_candidates(X, ids)``
        The candidates' values on new data, (n_samples, len(ids)) float64.
        Only the given candidates are computed.

    The four scan methods (``SCAN_METHODS``) are required for selection:
    :func:`fit_features`, which the ShareBoost estimators call, refuses a
    family that does not override them (TypeError naming them).

    A family whose candidates are *groups* of columns (§3.2: anchor points,
    grouped raw columns) also sets, in ``fit``:

    ``candidate_widths_``
        int ndarray of shape (n_candidates,), entries >= 1: the number of
        columns of each candidate. Its ``best_candidate`` then scores a
        group by ``sum_{j in J} ||R^T x_j||_1``, and ``training_columns``
        and ``transform_candidates`` return the groups' columns side by
        side, ``(n_samples, sum of the widths)``. ShareBoost adds a whole
        group per round.

    **Training blocks.** ShareBoost stores a selected candidate's training
    columns from :meth:`training_block`, a typed block
    (:class:`TrainingBlock`) whose type says how the column store may keep
    it:

    ``Dense(values)``
        The columns, ``training_columns([j])``: this class's default.
    ``RowSubset(rows, values)``
        Candidate ``j``'s columns are ``values[rows]`` on the increasing
        intp ``rows`` and zero elsewhere, ``values`` of shape
        (n_samples, width), float64, C order, read-only: the store keeps
        the rows and shares ``values`` (the anchor pieces of ``[X, 1]``,
        :meth:`AnchorPoints.training_rows`) instead of copying each group's
        rows.
    ``Cuts(codes, cut)``
        Candidate ``j``'s column is ``1[codes <= cut]``, ``codes`` a
        read-only int32 array of shape (n_samples,), the ranks or bins of
        one feature (:meth:`DecisionStumps.training_cuts`): the refit then
        sums the stumps of each feature at once (by prefix sums) instead of
        multiplying by each column.

    A block other than ``Dense`` must equal ``training_columns([j])``;
    ShareBoost checks it and refuses a family whose block disagrees.

    **Capabilities.** A family that scans a dask array chunk by chunk also
    derives from :class:`~mcsparse.features._chunk_scan.ChunkScan` and
    implements its row-chunk methods (``_fit_chunks``, ``_chunk_products``,
    ``_pick``, ``_chunk_columns``); ``DaskCandidates`` refuses others.

    Families are scikit-learn estimators, so their parameters are nested
    parameters of the classifier (``features__...``).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3, §4.
    """

    @abstractmethod
    def fit(self, X, y=None):  # pragma: no cover - abstract
        """Prepare the scan of the candidates on the training data.

        Part of the protocol: abstract, every family implements it.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.
        y : None
            Ignored; present for scikit-learn API consistency.

        Returns
        -------
        self : CandidateFeatures
            The fitted family, with ``n_features_in_`` and ``n_candidates_``
            set.

        Raises
        ------
        NotImplementedError
            Always, on the base class.
        """
        raise NotImplementedError

    def best_candidate(self, residual, excluded):  # pragma: no cover
        """Return the candidate with the largest score outside ``excluded``.

        Part of the protocol: every family overrides it.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows ``w_i (p_i - e_{y_i})`` of the training samples,
            C order.
        excluded : ndarray of shape (n_excluded,), intp
            Sorted ids of the candidates that must not be returned.

        Returns
        -------
        id : int
            The best candidate, in ``[0, n_candidates_)``; the lowest id on
            ties.
        score : float
            Its score ``||R^T x_id||_1`` (unnormalised).

        Raises
        ------
        NotImplementedError
            Always, on the base class.
        """
        raise NotImplementedError

    def training_columns(self, ids):  # pragma: no cover
        """Return the values of candidates ``ids`` on the training data.

        Part of the protocol: every family overrides it.

        Parameters
        ----------
        ids : array-like of int
            Candidates to return.

        Returns
        -------
        columns : ndarray of shape (n_samples, n_columns), float64
            The candidates' columns side by side (``n_columns = len(ids)``
            for single-column candidates).

        Raises
        ------
        NotImplementedError
            Always, on the base class.
        """
        raise NotImplementedError

    def end_scan(self, ids):  # pragma: no cover
        """Free the training-time state, keeping what candidates ``ids`` need.

        Part of the protocol: every family overrides it and sets
        ``support_``, the bool mask of shape (n_features,) of the input
        features that the kept candidates read.

        Parameters
        ----------
        ids : array-like of int
            The selected candidates, which ``transform_candidates`` must
            still compute.

        Returns
        -------
        self : CandidateFeatures
            The family, which can no longer select.

        Raises
        ------
        NotImplementedError
            Always, on the base class.
        """
        raise NotImplementedError

    def transform_candidates(self, X, ids):  # pragma: no cover
        """Compute the values of candidates ``ids`` on new data.

        Part of the protocol: every family overrides it; only the given
        candidates are computed.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data.
        ids : array-like of int
            Candidates to compute.

        Returns
        -------
        columns : ndarray of shape (n_samples, n_columns), float64
            The candidates' columns side by side (``n_columns = len(ids)``
            for single-column candidates).

        Raises
        ------
        NotImplementedError
            Always, on the base class.
        """
        raise NotImplementedError

    def training_block(self, j):
        """Candidate ``j``'s training columns as a typed block for the column store.

        This default gives ``Dense(training_columns([j]))``; a family whose
        candidates are row subsets of one matrix returns a ``RowSubset``, a
        family of decision stumps ``Cuts`` (class docstring).

        Parameters
        ----------
        j : int
            A candidate id.

        Returns
        -------
        block : Dense, RowSubset or Cuts
            (:class:`~mcsparse.features._base.TrainingBlock`) equal to
            ``training_columns([j])``.
        """
        return Dense(self.training_columns([j]), source=f"training_columns([{j}])")

    def candidate_names(self, ids, input_features=None):
        """Readable names of candidates ``ids``, e.g. for the selected ones.

        Parameters
        ----------
        ids : array-like of int
            Candidate ids in ``[0, n_candidates_)``.
        input_features : array-like of str of shape (n_features,), default=None
            Names of the input columns (an estimator's ``feature_names_in_``);
            ``x0, x1, ...`` when None.

        Returns
        -------
        names : ndarray of shape (len(ids),), dtype object
            This base class names candidate ``j`` ``"candidate j"``; the
            families name what their candidates are (a column, a stump, an
            anchor ball, a template and mask).
        """
        check_is_fitted(self)
        ids = self._check_ids(ids, self.n_candidates_)
        names = _input_names(self, input_features)
        return np.array([self._candidate_name(int(j), names) for j in ids], dtype=object)

    def _candidate_name(self, j, input_names):
        return f"candidate {j}"

    def _check_scanning(self):
        check_is_fitted(self)
        if getattr(self, "_X_fit", None) is None:
            raise RuntimeError(
                f"{type(self).__name__} has ended its scan (end_scan was "
                "called); fit it again to select new candidates"
            )

    @staticmethod
    def _check_ids(ids, n_candidates):
        ids = _integer_ids(ids, "candidate ids")
        if ids.size and (ids.min() < 0 or ids.max() >= n_candidates):
            raise ValueError(
                f"candidate ids must be in [0, {n_candidates}), got "
                f"[{ids.min()}, {ids.max()}]"
            )
        return ids

    @staticmethod
    def _check_residual(residual, n_samples):
        """``residual`` as a C-ordered float64 ``(n_samples, n_classes)`` array.

        Refuses sparse, complex, bool and non-numeric input, a wrong shape,
        and NaN or infinity, instead of converting or scoring them.
        """
        if sp.issparse(residual):
            raise TypeError("residual must be a dense array, got a sparse matrix")
        residual = _as_real_matrix(residual, "residual", "(n_samples, n_classes)")
        if residual.shape[0] != n_samples:
            raise ValueError(
                f"residual must have shape (n_samples, n_classes) with n_samples="
                f"{n_samples} (the training samples), got {residual.shape}"
            )
        return residual

    @staticmethod
    def _check_excluded(excluded, n_candidates):
        """``excluded`` as a sorted, repeat-free intp array of valid ids.

        Rejects non-integer (float, bool) arrays and ids outside
        ``[0, n_candidates)`` instead of casting, masking or wrapping them.
        """
        excluded = _integer_ids(excluded, "excluded candidate ids")
        if excluded.size == 0:
            return excluded
        excluded = np.unique(excluded)
        if excluded[0] < 0 or excluded[-1] >= n_candidates:
            raise ValueError(
                f"excluded candidate ids must be in [0, {n_candidates}), got "
                f"[{excluded[0]}, {excluded[-1]}]"
            )
        return excluded


def _as_real_matrix(values, name, shape):
    """``values`` as a C-ordered float64 2-D array of finite reals."""
    values = np.asarray(values)
    if values.dtype == bool or not (
        np.issubdtype(values.dtype, np.floating) or np.issubdtype(values.dtype, np.integer)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {values.dtype}")
    if values.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape {shape}, got shape {values.shape}")
    values = np.ascontiguousarray(values, dtype=np.float64)
    if not np.isfinite(values).all():
        raise ValueError(f"{name} contains NaN or infinity")
    return values


def _integer_ids(ids, name):
    """``ids`` as a flat intp array; TypeError unless of an integer dtype (or empty)."""
    ids = np.asarray(ids)
    if ids.size == 0:
        return np.zeros(0, dtype=np.intp)
    if ids.dtype == bool or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name} must be integers, got an array of dtype {ids.dtype}")
    return ids.astype(np.intp).ravel()


def _check_finite_scores(scores, hint):
    """``scores``, or ValueError if a score overflowed (``hint``: what to rescale)."""
    if not np.isfinite(scores).all():
        raise ValueError(f"candidate scores overflow: rescale {hint}")
    return scores


def _best_remaining(scores, excluded):
    """``(id, score)`` of the largest of ``scores`` outside ``excluded``.

    ``scores`` (float64, one per candidate) is overwritten at ``excluded``;
    ties (within the relative ``TIE_RTOL``, :mod:`mcsparse.utils._ties`) go
    to the lowest id. Raises ValueError if every candidate is excluded.
    """
    scores[excluded] = -np.inf
    j = first_best(scores)
    if j < 0:
        raise ValueError("every candidate has been selected already")
    return j, float(scores[j])


def _input_names(family, input_features):
    """The input columns' names: given, or ``x0, x1, ...``."""
    n = family.n_features_in_
    if input_features is None:
        return np.array([f"x{i}" for i in range(n)], dtype=object)
    names = np.asarray(input_features, dtype=object).ravel()
    if names.shape != (n,):
        raise ValueError(f"input_features must have {n} names, got {names.shape[0]}")
    return names


def training_block(family, j):
    """Candidate ``j``'s typed training block (:meth:`CandidateFeatures.training_block`).

    A family given as any object with the protocol's methods, not derived
    from :class:`CandidateFeatures`, gives ``Dense(training_columns([j]))``.
    """
    if isinstance(family, CandidateFeatures):
        return family.training_block(j)
    return Dense(family.training_columns([j]), source=f"training_columns([{j}])")


def fit_features(family, X):
    """Fit a candidate family on ``X`` and check what the protocol promises.

    Raises
    ------
    TypeError
        If the family, a :class:`CandidateFeatures`, does not implement the
        scan methods (``SCAN_METHODS``), or if ``fit`` does not return the
        family itself or leaves no int ``n_candidates_``.
    """
    name = type(family).__name__
    if isinstance(family, CandidateFeatures):
        missing = [m for m in SCAN_METHODS
                   if getattr(type(family), m) is getattr(CandidateFeatures, m)]
        if missing:
            raise TypeError(f"{name} does not implement {', '.join(missing)} of the "
                            "CandidateFeatures protocol")
    if family.fit(X) is not family:
        raise TypeError(f"{name}.fit must return self (the fitted family)")
    n = getattr(family, "n_candidates_", None)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise TypeError(
            f"{name}.fit must set n_candidates_ to a non-negative int, got {n!r}"
        )
    return family
