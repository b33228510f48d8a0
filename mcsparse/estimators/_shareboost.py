"""ShareBoostClassifier: the scikit-learn estimator around :mod:`mcsparse.solvers`."""

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.special import log_softmax, softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_scalar
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..solvers import shareboost_path
from ..utils.validation import check_bool, check_sample_weight


class ShareBoostClassifier(ClassifierMixin, BaseEstimator):
    r"""ShareBoost: sparse multiclass linear classifier with shared features.

    Learns ``W`` of shape ``(n_classes, n_features)`` with few non-zero
    columns by forward greedy selection [SWS2011]_: each round adds the
    feature (column) whose gradient column of the training loss has the
    largest l1 norm, then refits ``W`` on all selected columns (the fully
    corrective step, by L-BFGS warm-started from the previous round). One fit
    gives the whole path of models with 1, 2, ... features
    (:meth:`staged_predict`).

    Parameters
    ----------
    n_features_to_select : int or float, default=None
        Number of rounds, i.e. of selected features. An int in
        ``[1, n_features]``; a float in ``(0, 1]`` is a fraction of
        ``n_features``; None selects half of the features, as scikit-learn's
        ``RFE`` does.
    alpha : float, default=0.0
        Frobenius penalty ``alpha * ||W||_F^2`` (§3.3). On data that becomes
        separable along the path the bare loss (``alpha=0``) has no minimiser
        and overfits: choose ``alpha`` on training data (e.g. GridSearchCV).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept vector ``b`` (scores ``W x + b``). It is
        never counted as a selected feature and is fitted alone before the
        first round. With False the model is exactly eq. (1).
    tol : float, default=1e-4
        Relative stopping tolerance of each refit: L-BFGS stops when the
        largest absolute entry of the gradient falls below ``tol`` times the
        objective at the refit's warm start (the previous round's value).
        Relative, because the gradient shrinks with the loss: late on a
        path an absolute tolerance would leave the new column at zero.
        Smaller values follow the exact fully corrective minimiser more
        closely, at more iterations per round.
    max_iter : int, default=200
        Maximum L-BFGS iterations of each refit.
    verbose : int, default=0
        Print one line per round when positive.
    callback : callable, default=None
        Called after every round with a :class:`mcsparse.solvers.ShareBoostRound`
        (round, selected feature, coefficients, train loss, time). If it
        returns True, the fit stops after that round.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        The final ``W``, zero outside the selected columns. For two classes,
        scikit-learn's convention: one row ``W[1] - W[0]`` so that
        :meth:`decision_function` is 1-D; the predictions are the same.
    intercept_ : ndarray of shape (n_classes,) or (1,)
        The intercept (zeros with ``fit_intercept=False``); ``b[1] - b[0]``
        for two classes.
    selected_features_ : ndarray of shape (n_rounds,), dtype intp
        Selected columns in selection order.
    support_ : ndarray of shape (n_features,), dtype bool
        Mask of the selected columns.
    n_iter_ : int
        Number of rounds run, ``n_rounds`` in the shapes above
        (``n_features_to_select`` unless ``callback`` stopped the fit).
    train_loss_ : ndarray of shape (n_rounds,)
        Training objective (mean loss plus penalty) after each round's refit.
    refit_n_iter_ : ndarray of shape (n_rounds,)
        L-BFGS iterations of each round's refit.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    mcsparse.loss.multiclass_logistic_loss : The loss, eq. (3).
    sklearn.linear_model.LogisticRegression : Dense multinomial model.

    Notes
    -----
    The objective of every refit is [SWS2011]_, eq. (3), with the optional
    Frobenius penalty of §3.3:

    .. math::

        L(W, b) = \frac{1}{\sum_i s_i} \sum_{i=1}^m s_i \log \sum_{y'}
        \exp\bigl(1[y' \ne y_i] - (W x_i + b)_{y_i} + (W x_i + b)_{y'}\bigr)
        + \alpha \|W\|_F^2,

    with sample weights :math:`s_i` (all one by default). The selection rule
    is step 4 of the algorithm (NOTES.md): :math:`r = \arg\max_j \|\nabla_W
    L[:, j]\|_1` over unselected columns, computed for all columns with one
    BLAS product :math:`X^\top R`. Ties go to the lowest column index.

    Inputs may be float32 (kept as such for the selection product) or
    float64, dense or sparse CSR/CSC; the refits run in float64 on the
    selected columns only. :meth:`predict` on new data reads only the
    selected columns.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011.

    Examples
    --------
    >>> from mcsparse import ShareBoostClassifier
    >>> from mcsparse.datasets import load_pendigits
    >>> X, y = load_pendigits(return_X_y=True)
    >>> clf = ShareBoostClassifier(n_features_to_select=8).fit(X / 100, y)
    >>> clf.selected_features_.shape
    (8,)
    >>> bool(clf.score(X / 100, y) > 0.8)
    True
    """

    def __init__(
        self,
        *,
        n_features_to_select=None,
        alpha=0.0,
        fit_intercept=True,
        tol=1e-4,
        max_iter=200,
        verbose=0,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.callback = callback

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _resolve_n_features_to_select(self, n_features):
        n = self.n_features_to_select
        if n is None:
            return max(1, n_features // 2)
        if isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)):
            if not 1 <= n <= n_features:
                raise ValueError(
                    f"n_features_to_select must be in [1, n_features={n_features}], "
                    f"got {n}"
                )
            return int(n)
        if isinstance(n, numbers.Real) and not isinstance(n, (bool, np.bool_)):
            if not 0 < n <= 1:
                raise ValueError(
                    "n_features_to_select as a float is a fraction of the features "
                    f"and must be in (0, 1], got {n}"
                )
            return max(1, int(n * n_features))
        raise TypeError(
            "n_features_to_select must be None, an int or a float, "
            f"got {type(n).__name__}"
        )

    def _check_params(self):
        check_scalar(self.alpha, "alpha", numbers.Real, min_val=0.0)
        if not np.isfinite(self.alpha):
            raise ValueError(f"alpha must be finite, got {self.alpha}")
        check_bool(self.fit_intercept, "fit_intercept")
        check_scalar(self.tol, "tol", numbers.Real, min_val=0.0,
                     include_boundaries="neither")
        if not np.isfinite(self.tol):
            raise ValueError(f"tol must be finite, got {self.tol}")
        check_scalar(self.max_iter, "max_iter", numbers.Integral, min_val=1)
        check_scalar(self.verbose, "verbose", (numbers.Integral, bool), min_val=0)
        if self.callback is not None and not callable(self.callback):
            raise TypeError(f"callback must be callable or None, got {self.callback!r}")

    def fit(self, X, y, sample_weight=None):
        """Run ShareBoost for ``n_features_to_select`` rounds.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 is kept, other dtypes become float64;
            sparse input must be CSR or CSC.
        y : array-like of shape (n_samples,)
            Class labels of any type, at least two distinct classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; the loss is their weighted mean.

        Returns
        -------
        self : ShareBoostClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, is not 2-D, has a length
            different from ``y``; if ``y`` has a single class; if
            ``n_features_to_select`` or another parameter is out of range.
        """
        self._check_params()
        X, y = validate_data(
            self, X, y, accept_sparse=("csr", "csc"),
            dtype=(np.float64, np.float32), y_numeric=False,
        )
        check_classification_targets(y)
        classes, y_idx = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(
                "ShareBoostClassifier needs samples of at least 2 classes in y; "
                f"got only one class: {classes[0]!r}"
            )
        n_rounds = self._resolve_n_features_to_select(X.shape[1])
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if sp.issparse(X):
            X = X.tocsc()

        path = shareboost_path(
            X,
            np.ascontiguousarray(y_idx, dtype=np.intp),
            n_classes=classes.shape[0],
            n_rounds=n_rounds,
            alpha=float(self.alpha),
            fit_intercept=bool(self.fit_intercept),
            sample_weight=sample_weight,
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            callback=self.callback,
            verbose=int(self.verbose),
        )
        self.classes_ = classes
        self.selected_features_ = path.selected_features
        self.n_iter_ = len(path.selected_features)
        self.train_loss_ = path.train_loss
        self.refit_n_iter_ = path.refit_n_iter
        self._coef_path = path.coefs
        self._intercept_path = path.intercepts
        support = np.zeros(X.shape[1], dtype=bool)
        support[self.selected_features_] = True
        self.support_ = support

        W = np.zeros((classes.shape[0], X.shape[1]))
        W[:, self.selected_features_] = path.coefs[-1]
        b = path.intercepts[-1]
        if classes.shape[0] == 2:
            self.coef_ = (W[1] - W[0])[None, :]
            self.intercept_ = np.array([b[1] - b[0]])
        else:
            self.coef_ = W
            self.intercept_ = b.copy()
        return self

    def _selected_columns(self, X):
        """Validate new data and return only the selected columns, dense float64."""
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
            reset=False,
        )
        X_sel = X[:, self.selected_features_]
        if sp.issparse(X_sel):
            X_sel = X_sel.toarray()
        return np.asarray(X_sel, dtype=np.float64)

    def _staged_scores(self, X):
        X_sel = self._selected_columns(X)
        for t, (W, b) in enumerate(zip(self._coef_path, self._intercept_path), 1):
            yield X_sel[:, :t] @ W.T + b

    def _scores(self, X):
        """Scores ``W x + b`` of shape (n_samples, n_classes) of the final model."""
        X_sel = self._selected_columns(X)
        return X_sel @ self._coef_path[-1].T + self._intercept_path[-1]

    @staticmethod
    def _to_decision(scores):
        if scores.shape[1] == 2:
            return scores[:, 1] - scores[:, 0]
        return scores

    def decision_function(self, X):
        """Class scores ``W x + b``, computed from the selected columns only.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            For two classes the 1-D difference ``score_1 - score_0``.
        """
        return self._to_decision(self._scores(X))

    def predict(self, X):
        """Predict ``argmax_y (W x + b)_y`` ([SWS2011]_, eq. 1).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels (ties go to the first class).
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_proba(self, X):
        """Class probabilities: the softmax of the scores ``W x + b``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``.
        """
        return softmax(self._scores(X), axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities; columns follow ``classes_``.
        """
        return log_softmax(self._scores(X), axis=1)

    def staged_decision_function(self, X):
        """Scores of the model after each round: the whole path from one fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            One item per round ``t = 1 .. n_iter_``, using that round's
            ``W`` on the first ``t`` selected features.
        """
        for scores in self._staged_scores(X):
            yield self._to_decision(scores)

    def staged_predict(self, X):
        """Predictions of the model after each round.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            One item per round ``t = 1 .. n_iter_``.
        """
        for scores in self._staged_scores(X):
            yield self.classes_[np.argmax(scores, axis=1)]

    def staged_predict_proba(self, X):
        """Class probabilities of the model after each round.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
            One item per round ``t = 1 .. n_iter_``.
        """
        for scores in self._staged_scores(X):
            yield softmax(scores, axis=1)
