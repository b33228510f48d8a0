"""The candidate-feature protocol of ShareBoost, and its raw-column family."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted, validate_data


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
        ``||R^T x_id||_1`` (unnormalised), the lowest id on ties.
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

    Families are scikit-learn estimators, so their parameters are nested
    parameters of the classifier (``features__...``).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3, §4.
    """

    def fit(self, X, y=None):  # pragma: no cover - documented protocol
        raise NotImplementedError

    def best_candidate(self, residual, excluded):  # pragma: no cover
        raise NotImplementedError

    def training_columns(self, ids):  # pragma: no cover
        raise NotImplementedError

    def end_scan(self, ids):  # pragma: no cover
        raise NotImplementedError

    def transform_candidates(self, X, ids):  # pragma: no cover
        raise NotImplementedError

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


def _integer_ids(ids, name):
    """``ids`` as a flat intp array; TypeError unless of an integer dtype (or empty)."""
    ids = np.asarray(ids)
    if ids.size == 0:
        return np.zeros(0, dtype=np.intp)
    if ids.dtype == bool or not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name} must be integers, got an array of dtype {ids.dtype}")
    return ids.astype(np.intp).ravel()


def _dense_columns(X, ids):
    """Columns ``ids`` of a dense array or sparse matrix, dense float64 (n, len(ids))."""
    cols = X[:, ids]
    if sp.issparse(cols):
        cols = cols.toarray()
    return np.asarray(cols, dtype=np.float64)


class RawFeatures(CandidateFeatures):
    """The columns of ``X`` themselves: ShareBoost's default candidate family.

    Candidate ``j`` is column ``j``. The scores of all columns come from one
    BLAS product ``X^T R`` per round; for float32 ``X`` the residual is cast
    once and float32 denormals flushed to zero (they make BLAS several times
    slower late in a path). Dense or sparse (CSR/CSC) ``X``.

    Attributes
    ----------
    n_features_in_ : int
        Number of input features.
    n_candidates_ : int
        Equal to ``n_features_in_``.
    support_ : ndarray of shape (n_features,), bool
        After :meth:`end_scan`: the kept columns.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.features import RawFeatures
    >>> X = np.array([[1.0, 0.0], [0.0, 2.0]])
    >>> R = np.array([[1.0, -1.0], [0.5, -0.5]])  # residual rows
    >>> RawFeatures().fit(X).best_candidate(R, np.array([], dtype=np.intp))
    (0, 2.0)
    """

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
        """
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32))
        self._X_fit = X.tocsc() if sp.issparse(X) else X
        self.n_candidates_ = X.shape[1]
        return self

    def best_candidate(self, residual, excluded):
        """The column with the largest ``||R^T x_j||_1`` outside ``excluded``.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows of the training samples.
        excluded : ndarray of shape (n_excluded,), intp
            Columns that must not be returned.

        Returns
        -------
        id : int
            The chosen column.
        score : float
            Its ``||R^T x_j||_1``.

        Raises
        ------
        ValueError
            If every column is excluded.
        """
        self._check_scanning()
        excluded = self._check_excluded(excluded, self.n_candidates_)
        X = self._X_fit
        R = residual
        if X.dtype == np.float32:
            R = residual.astype(np.float32)
            R[np.abs(R) < np.finfo(np.float32).tiny] = 0.0
        scores = np.abs(X.T @ R).sum(axis=1, dtype=np.float64)
        scores = np.asarray(scores).ravel()
        scores[excluded] = -np.inf
        j = int(np.argmax(scores))
        if scores[j] == -np.inf:
            raise ValueError("every candidate column has been selected already")
        return j, float(scores[j])

    def training_columns(self, ids):
        """Columns ``ids`` of the training data, (n_samples, len(ids)) float64."""
        self._check_scanning()
        return _dense_columns(self._X_fit, self._check_ids(ids, self.n_candidates_))

    def end_scan(self, ids):
        """Drop the reference to the training data; ``support_`` marks ``ids``.

        Returns
        -------
        self : RawFeatures
            The family, which can no longer select.
        """
        check_is_fitted(self)
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[self._check_ids(ids, self.n_candidates_)] = True
        self._X_fit = None
        return self

    def transform_candidates(self, X, ids):
        """Columns ``ids`` of ``X``, validated, (n_samples, len(ids)) float64.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data.
        ids : array-like of int
            Columns to return.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            Only these columns are read and converted.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32), reset=False)
        return _dense_columns(X, self._check_ids(ids, self.n_candidates_))


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


def resolve_features(features):
    """A fresh (unfitted) candidate family from the ``features`` parameter.

    Parameters
    ----------
    features : {"raw", "stumps", "templates"} or CandidateFeatures
        A name or a family object, which is cloned.

    Returns
    -------
    family : CandidateFeatures
        Unfitted.

    Raises
    ------
    ValueError
        If ``features`` is an unknown name.
    TypeError
        If it is neither a name nor an object with the protocol's methods.
    """
    from sklearn.base import clone

    from ._conv_max import ConvMaxTemplates
    from ._stumps import DecisionStumps

    names = {"raw": RawFeatures, "stumps": DecisionStumps, "templates": ConvMaxTemplates}
    if isinstance(features, str):
        if features not in names:
            raise ValueError(
                f"features must be one of {sorted(names)} or a CandidateFeatures "
                f"object, got {features!r}"
            )
        return names[features]()
    methods = ("fit", "best_candidate", "training_columns", "end_scan",
               "transform_candidates")
    missing = [m for m in methods if not callable(getattr(features, m, None))]
    if missing:
        raise TypeError(
            "features must be 'raw', 'stumps', 'templates' or an object with the "
            f"CandidateFeatures methods; {type(features).__name__} lacks "
            f"{', '.join(missing)}"
        )
    return clone(features)
