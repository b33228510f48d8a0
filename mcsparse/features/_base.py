"""The candidate-feature protocol of ShareBoost, and its raw-column family."""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils._ties import first_best


class CandidateFeatures(BaseEstimator):
    """Base class of the candidate-feature families ShareBoost selects from.

    ShareBoost ([SWS2011]_, step 4 of the algorithm) only needs, each round,
    the candidate feature ``x_c`` whose gradient column has the largest l1
    norm, ``argmax_c ||R^T x_c||_1`` with ``R`` the residual matrix of the
    training set; and then the chosen column's values. A family may have far
    more candidates than fit in memory (all decision stumps, all templates),
    so it never hands out the whole matrix. A family implements:

    ``fit(X, y=None)``
        Prepare the scan on the training data (sorting, k-means, ...); set
        ``n_features_in_`` and ``n_candidates_``. Returns ``self``.
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

    A family whose candidates are *groups* of columns (§3.2: anchor points,
    grouped raw columns) also sets, in ``fit``:

    ``candidate_widths_``
        int ndarray of shape (n_candidates,), entries >= 1: the number of
        columns of each candidate. Its ``best_candidate`` then scores a
        group by ``sum_{j in J} ||R^T x_j||_1``, and ``training_columns``
        and ``transform_candidates`` return the groups' columns side by
        side, ``(n_samples, sum of the widths)``. ShareBoost adds a whole
        group per round.

    A family whose groups are row subsets of one matrix may also give

    ``training_rows(j)``
        ``(rows, values)``: candidate ``j``'s training columns are
        ``values[rows]`` on the increasing intp ``rows`` and zero elsewhere,
        ``values`` of shape (n_samples, width), float64, C order. ShareBoost's
        column store then keeps the rows and shares ``values`` (the anchor
        pieces of ``[X, 1]``) instead of copying each group's rows.

    and a family of decision stumps may give

    ``training_cuts(j)``
        ``(codes, cut)`` or None: candidate ``j``'s training column is
        ``1[codes <= cut]``, ``codes`` a read-only int32 array of shape
        (n_samples,), the ranks or bins of one feature. ShareBoost's refit
        then sums the stumps of each feature at once (by prefix sums)
        instead of multiplying by each column.

    Families are scikit-learn estimators, so their parameters are nested
    parameters of the classifier (``features__...``).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3, §4.
    """

    def fit(self, X, y=None):  # pragma: no cover - documented protocol
        """Prepare the scan of the candidates on the training data.

        Part of the protocol: every family overrides it.

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


def _check_group_labels(groups, labels):
    """``labels`` (``np.asarray(groups)``) if its labels are all numbers or all strings.

    Refuses NaN, and labels of mixed kinds, which NumPy would either fail
    to sort or silently turn into strings (merging ``1`` and ``"1"``).
    """
    if labels.dtype.kind in "OUS":
        values = np.asarray(groups, dtype=object).ravel().tolist()
        numeric = [isinstance(v, numbers.Real) for v in values]
        if all(isinstance(v, str) for v in values):
            labels = np.asarray(values, dtype=str)
        elif all(numeric):
            labels = np.asarray(values, dtype=np.float64 if any(
                not isinstance(v, numbers.Integral) for v in values) else np.int64)
        else:
            kinds = sorted({type(v).__name__ for v in values})
            raise TypeError(
                "groups must hold labels of one kind, all numbers or all strings, "
                f"got {', '.join(kinds)}"
            )
    if labels.dtype.kind == "f" and np.isnan(labels).any():
        raise ValueError("groups contains NaN")
    return labels


def _raw_products(X, residual):
    """``X^T R``, in float32 for float32 ``X`` (the residual cast, denormals flushed).

    Float32 denormals make BLAS several times slower late in a path.
    Overflow is checked by :func:`_pick_columns`.
    """
    R = residual
    if X.dtype == np.float32:
        R = residual.astype(np.float32)
        R[np.abs(R) < np.finfo(np.float32).tiny] = 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(X.T @ R)


def _pick_columns(products, excluded, group_of, n_candidates):
    """``(id, score)``: the largest ``||products[j]||_1`` (summed over groups) outside ``excluded``."""
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        scores = np.abs(products).sum(axis=1, dtype=np.float64)
    scores = np.asarray(scores).ravel()
    if group_of is not None:
        scores = np.bincount(group_of, weights=scores, minlength=n_candidates)
    return _best_remaining(_check_finite_scores(scores, "X or residual"), excluded)


def _dense_columns(X, ids):
    """Columns ``ids`` of a dense array or sparse matrix, dense float64 (n, len(ids))."""
    cols = X[:, ids]
    if sp.issparse(cols):
        cols = cols.toarray()
    return np.asarray(cols, dtype=np.float64)


class RawFeatures(CandidateFeatures):
    """The columns of ``X`` themselves: ShareBoost's default candidate family.

    Candidate ``j`` is column ``j``; with ``groups``, candidate ``g`` is the
    group of columns with the ``g``-th smallest label, selected as a whole
    by the group rule of [SWS2011]_, §3.2: the group maximising
    ``sum_{j in g} ||R^T x_j||_1``. The scores of all columns come from one
    BLAS product ``X^T R`` per round; for float32 ``X`` the residual is cast
    once and float32 denormals flushed to zero (they make BLAS several times
    slower late in a path). Dense or sparse (CSR/CSC) ``X``.

    Parameters
    ----------
    groups : array-like of shape (n_features,), default=None
        Group label of each column (ints or strings); columns with the same
        label form one candidate. None: every column is its own candidate.
        Singleton groups select exactly as None does.

    Attributes
    ----------
    n_features_in_ : int
        Number of input features.
    n_candidates_ : int
        ``n_features_in_``, or the number of distinct group labels.
    group_labels_ : ndarray of shape (n_candidates,)
        Only with ``groups``: the sorted distinct labels; candidate ``g`` is
        the group labelled ``group_labels_[g]``.
    candidate_widths_ : ndarray of shape (n_candidates,), dtype intp
        Only with ``groups``: the number of columns of each group.
    support_ : ndarray of shape (n_features,), bool
        After :meth:`end_scan`: the kept columns.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3.2.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.features import RawFeatures
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> R = np.array([[1.0, -1.0], [0.5, -0.5]])  # residual rows
    >>> RawFeatures().fit(X).best_candidate(R, np.array([], dtype=np.intp))
    (0, 2.0)
    """

    def __init__(self, groups=None):
        self.groups = groups

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None):
        """Keep a reference to the training data for the scan.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 is kept, other dtypes become float64.
        y : None
            Ignored.

        Returns
        -------
        self : RawFeatures
            The fitted family.

        Raises
        ------
        ValueError
            If ``groups`` is not 1-D of length ``n_features`` or holds NaN.
        TypeError
            If ``groups`` mixes numbers and strings (or other objects).
        """
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32))
        self._X_fit = X.tocsc() if sp.issparse(X) else X
        return self._set_groups(X.shape[1])

    def _fit_chunks(self, chunks):
        """Fit on a dask array's row chunks (:mod:`mcsparse.features._dask`): nothing to read."""
        self.n_features_in_ = chunks.n_features
        self._X_fit = None  # the chunks stay on the workers
        return self._set_groups(chunks.n_features)

    def _set_groups(self, n_features):
        """Set ``n_candidates_`` and the group tables from ``groups``."""
        for name in ("group_labels_", "candidate_widths_"):
            self.__dict__.pop(name, None)
        self._group_of = None
        if self.groups is None:
            self.n_candidates_ = n_features
            return self
        labels = np.asarray(self.groups)
        if labels.shape != (n_features,):
            raise ValueError(
                f"groups must have shape (n_features,) = ({n_features},), "
                f"got {labels.shape}"
            )
        labels = _check_group_labels(self.groups, labels)
        self.group_labels_, self._group_of = np.unique(labels, return_inverse=True)
        self._group_of = self._group_of.astype(np.intp).ravel()
        self.candidate_widths_ = np.bincount(
            self._group_of, minlength=self.group_labels_.size).astype(np.intp)
        # columns sorted by group (stable: ascending within a group)
        self._group_columns = np.argsort(self._group_of, kind="stable")
        self._group_ptr = np.concatenate([[0], np.cumsum(self.candidate_widths_)])
        self.n_candidates_ = self.group_labels_.size
        return self

    def group_columns(self, ids):
        """Column indices of candidates ``ids``, concatenated in order.

        Parameters
        ----------
        ids : array-like of int
            Candidate ids.

        Returns
        -------
        columns : ndarray of intp
            For each id, its group's columns (ascending); ``ids`` itself
            without ``groups``.
        """
        check_is_fitted(self)
        ids = self._check_ids(ids, self.n_candidates_)
        if self._group_of is None:
            return ids
        ptr, cols = self._group_ptr, self._group_columns
        parts = [cols[ptr[g] : ptr[g + 1]] for g in ids]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)

    def best_candidate(self, residual, excluded):
        """The candidate with the largest score outside ``excluded``.

        The score of a column is ``||R^T x_j||_1``; of a group, the sum over
        its columns (§3.2).

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows of the training samples.
        excluded : ndarray of shape (n_excluded,), intp
            Candidates that must not be returned.

        Returns
        -------
        id : int
            The chosen candidate (column, or group).
        score : float
            Its score.

        Raises
        ------
        ValueError
            If every candidate is excluded, ``residual`` has the wrong shape
            or non-finite values, or a score overflows.
        TypeError
            If ``residual`` is sparse or does not hold real numbers.
        """
        self._check_scanning()
        excluded = self._check_excluded(excluded, self.n_candidates_)
        X = self._X_fit
        residual = self._check_residual(residual, X.shape[0])
        return self._pick(self._chunk_products(X, residual), excluded)

    def _chunk_products(self, X, residual):
        """``X^T R`` of shape (n_features, n_classes): the gradient columns, unnormalised.

        A sum over rows: on a dask array, each row chunk gives its part.
        """
        return _raw_products(X, residual)

    def _pick(self, products, excluded):
        """``(id, score)`` of the best candidate from the summed ``X^T R``."""
        return _pick_columns(products, excluded, self._group_of, self.n_candidates_)

    def _chunk_columns(self, X, ids):
        """Candidates ``ids`` on a row chunk of the training data."""
        return _dense_columns(X, self.group_columns(ids))

    def _candidate_name(self, j, input_names):
        if getattr(self, "group_labels_", None) is not None:
            label = self.group_labels_[j]
            return f"group {label.item() if isinstance(label, np.generic) else label}"
        return str(input_names[j])

    def training_columns(self, ids):
        """Return the columns of candidates ``ids`` on the training data, float64.

        Parameters
        ----------
        ids : array-like of int
            Candidates to return.

        Returns
        -------
        columns : ndarray of shape (n_samples, n_columns)
            The groups' columns side by side (``n_columns = len(ids)``
            without ``groups``).
        """
        self._check_scanning()
        return _dense_columns(self._X_fit, self.group_columns(ids))

    def end_scan(self, ids):
        """Drop the reference to the training data; ``support_`` marks ``ids``' columns.

        Parameters
        ----------
        ids : array-like of int
            The selected candidates.

        Returns
        -------
        self : RawFeatures
            The family, which can no longer select.
        """
        check_is_fitted(self)
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[self.group_columns(ids)] = True
        self._X_fit = None
        return self

    def transform_candidates(self, X, ids):
        """Return the columns of candidates ``ids`` in ``X``, validated, float64.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data.
        ids : array-like of int
            Candidates to return.

        Returns
        -------
        columns : ndarray of shape (n_samples, n_columns)
            Only these columns are read and converted: ``n_columns =
            len(ids)`` without ``groups``, the groups' widths summed with.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32), reset=False)
        return _dense_columns(X, self.group_columns(ids))


def _input_names(family, input_features):
    """The input columns' names: given, or ``x0, x1, ...``."""
    n = family.n_features_in_
    if input_features is None:
        return np.array([f"x{i}" for i in range(n)], dtype=object)
    names = np.asarray(input_features, dtype=object).ravel()
    if names.shape != (n,):
        raise ValueError(f"input_features must have {n} names, got {names.shape[0]}")
    return names


def fit_features(family, X):
    """Fit a candidate family on ``X`` and check what the protocol promises.

    Raises
    ------
    TypeError
        If ``fit`` does not return the family itself or leaves no int
        ``n_candidates_``.
    """
    name = type(family).__name__
    if family.fit(X) is not family:
        raise TypeError(f"{name}.fit must return self (the fitted family)")
    n = getattr(family, "n_candidates_", None)
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 0:
        raise TypeError(
            f"{name}.fit must set n_candidates_ to a non-negative int, got {n!r}"
        )
    return family
