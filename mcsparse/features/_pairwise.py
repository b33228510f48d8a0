"""All products of pairs of distinct features (the Fig. 3 expansion of [SWS2011])."""

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data


class PairwiseProducts(TransformerMixin, BaseEstimator):
    """Products ``x_i * x_j`` of all pairs of distinct features, ``i < j``.

    With ``n_features`` inputs the output has ``n_features * (n_features - 1) / 2``
    columns, in :func:`itertools.combinations` order:
    ``(0, 1), (0, 2), ..., (0, d-1), (1, 2), ...``. This is the feature
    expansion of the UCI experiments of [SWS2011]_ (§7.2, Fig. 3): 16
    pendigits features give 120 products, 36 satimage features 630.
    Unlike scikit-learn's ``PolynomialFeatures(interaction_only=True)`` the
    original features and the bias are not included.

    Attributes
    ----------
    n_features_in_ : int
        Number of input features.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of the input features, when ``X`` has string column names.
    pairs_ : ndarray of shape (n_output_features, 2), dtype intp
        The pair ``(i, j)`` of input columns behind each output column.
    n_output_features_ : int
        ``n_features_in_ * (n_features_in_ - 1) // 2``.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.2.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.features import PairwiseProducts
    >>> PairwiseProducts().fit_transform(np.array([[1.0, 2.0, 3.0]]))
    array([[2., 3., 6.]])
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None):
        """Record the number of input features and the pairs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data; needs at least 2 features.
        y : None
            Ignored.

        Returns
        -------
        self : PairwiseProducts
            The fitted transformer.

        Raises
        ------
        ValueError
            If ``X`` has fewer than 2 features, contains NaN or infinity.
        """
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32))
        d = X.shape[1]
        if d < 2:
            raise ValueError(
                f"PairwiseProducts needs at least 2 features, got n_features={d}"
            )
        i, j = np.triu_indices(d, k=1)
        self.pairs_ = np.column_stack([i, j]).astype(np.intp)
        self.n_output_features_ = self.pairs_.shape[0]
        return self

    def transform(self, X):
        """Compute the products.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Input data.

        Returns
        -------
        X_products : ndarray or CSR matrix of shape (n_samples, n_output_features)
            Same dtype as ``X`` (float32 kept, other types become float64);
            sparse input gives CSR output.

        Raises
        ------
        ValueError
            If ``X`` has the wrong number of features, contains NaN or
            infinity, or a product overflows the dtype.
        """
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse=("csr", "csc"),
                          dtype=(np.float64, np.float32), reset=False)
        i, j = self.pairs_[:, 0], self.pairs_[:, 1]
        with np.errstate(over="ignore"):
            if sp.issparse(X):
                X = X.tocsc()
                out = X[:, i].multiply(X[:, j]).tocsr()
                finite = np.isfinite(out.data).all()
            else:
                out = X[:, i] * X[:, j]
                finite = np.isfinite(out).all()
        if not finite:
            raise ValueError(
                f"products of features overflow {X.dtype}: rescale X (the paper "
                "assumes features in [-1, 1])"
            )
        return out

    def get_feature_names_out(self, input_features=None):
        """Get the names ``"a*b"`` of the output features.

        Parameters
        ----------
        input_features : array-like of str, default=None
            Input names; ``feature_names_in_`` or ``x0, x1, ...`` by default.

        Returns
        -------
        names : ndarray of str of shape (n_output_features,)
            One name per product column.
        """
        check_is_fitted(self)
        if input_features is None:
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                names = [f"x{i}" for i in range(self.n_features_in_)]
        else:
            names = np.asarray(input_features, dtype=object)
            if names.shape != (self.n_features_in_,):
                raise ValueError(
                    f"input_features must be a 1-D list of {self.n_features_in_} "
                    f"names, got shape {names.shape}"
                )
            fitted = getattr(self, "feature_names_in_", None)
            if fitted is not None and not np.array_equal(names, fitted):
                raise ValueError("input_features is not equal to feature_names_in_")
        return np.asarray(
            [f"{names[i]}*{names[j]}" for i, j in self.pairs_], dtype=object
        )
