"""The columns of ``X`` themselves: ShareBoost's default candidate family."""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import CandidateFeatures, _best_remaining, _check_finite_scores
from ._chunk_scan import ChunkScan


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
        if isinstance(X, np.ndarray):
            # (R^T X)^T: the product with X in its own (C) order, which OpenBLAS
            # runs faster than X^T R (changelog)
            return (R.T @ X).T
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


class RawFeatures(CandidateFeatures, ChunkScan):
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

    def _check_chunk_params(self, n_features):
        """The groups against ``n_features`` columns (checked before any task)."""
        self._set_groups(n_features)

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
