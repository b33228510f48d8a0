"""ShareBoostClassifier: the scikit-learn estimator around :mod:`mcsparse.solvers`."""

import numbers

import numpy as np
from scipy.special import softmax
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_scalar
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..features import RawFeatures
from ..features._base import resolve_features
from ..solvers import shareboost_path
from ..utils.validation import check_bool, check_sample_weight
from ._base import ProbaMixin, ScoresMixin, StagedMixin


class _BaseGreedy(ClassifierMixin, BaseEstimator):
    """Parameter checks and data handling shared by the greedy classifiers."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _resolve_n_features_to_select(self, n_features, n_candidates):
        n = self.n_features_to_select
        if n_candidates < 1:
            raise ValueError(
                f"{type(self.features_).__name__} has no candidate features on "
                "this training data (e.g. every feature is constant)"
            )
        if n is None:
            return min(n_candidates, max(1, n_features // 2))
        if isinstance(n, numbers.Integral) and not isinstance(n, (bool, np.bool_)):
            if not 1 <= n <= n_candidates:
                raise ValueError(
                    "n_features_to_select must be in [1, number of candidates="
                    f"{n_candidates}], got {n}"
                )
            return int(n)
        if isinstance(n, numbers.Real) and not isinstance(n, (bool, np.bool_)):
            if not 0 < n <= 1:
                raise ValueError(
                    "n_features_to_select as a float is a fraction of the "
                    f"candidates and must be in (0, 1], got {n}"
                )
            return max(1, int(n * n_candidates))
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
        callback = getattr(self, "callback", None)
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable or None, got {callback!r}")

    def _fit_candidates(self, X, y, sample_weight):
        """Validate the training data, set ``classes_`` and fit ``features_``.

        Returns ``(X, y_idx, sample_weight)`` ready for the solver: samples of
        weight zero are dropped (they change nothing but the candidates they
        would define, such as stump thresholds).
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
                f"{type(self).__name__} needs samples of at least 2 classes in y; "
                f"got only one class: {classes[0]!r}"
            )
        sample_weight = check_sample_weight(sample_weight, X.shape[0])
        if sample_weight is not None and not np.all(sample_weight > 0):
            keep = sample_weight > 0
            X, y_idx, sample_weight = X[keep], y_idx[keep], sample_weight[keep]
        self.classes_ = classes
        self.features_ = resolve_features(self.features).fit(X)
        return X, np.ascontiguousarray(y_idx, dtype=np.intp), sample_weight

    def _candidate_columns(self, X, ids):
        """Validate new data and compute the candidates ``ids`` on it (float64)."""
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
            reset=False,
        )
        return self.features_.transform_candidates(X, ids)



class ShareBoostClassifier(StagedMixin, ProbaMixin, ScoresMixin, _BaseGreedy):
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
        ``[1, n_candidates]``; a float in ``(0, 1]`` is a fraction of the
        number of candidates; None selects half of ``n_features_in_`` (as
        scikit-learn's ``RFE`` does), at most the number of candidates.
    features : {"raw", "stumps"} or CandidateFeatures, default="raw"
        The candidate features ShareBoost selects from: "raw" the columns of
        ``X`` (:class:`~mcsparse.features.RawFeatures`); "stumps" all
        decision stumps ``1[x_f <= theta]`` (§4.1,
        :class:`~mcsparse.features.DecisionStumps`); or any object following
        the :class:`~mcsparse.features.CandidateFeatures` protocol. It is
        cloned and fitted on the training data; only the selected
        candidates are computed on new data.
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
    features_ : CandidateFeatures
        The fitted candidate family, holding only what the selected
        candidates need.
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        The final ``W``, zero outside the selected columns. For two classes,
        scikit-learn's convention: one row ``W[1] - W[0]`` so that
        :meth:`decision_function` is 1-D; the predictions are the same.
        With other candidate families than "raw", ``n_features`` here is
        ``n_iter_``: the columns are the selected candidates in selection
        order.
    intercept_ : ndarray of shape (n_classes,) or (1,)
        The intercept (zeros with ``fit_intercept=False``); ``b[1] - b[0]``
        for two classes.
    selected_features_ : ndarray of shape (n_rounds,), dtype intp
        Selected candidates in selection order: column indices for "raw",
        candidate ids of ``features_`` otherwise.
    support_ : ndarray of shape (n_features,), dtype bool
        Mask of the input columns the model reads (the selected columns for
        "raw"; for stumps the features with a selected stump).
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
    L[:, j]\|_1` over unselected candidates, computed by the candidate family:
    for raw columns one BLAS product :math:`X^\top R`, for stumps prefix sums
    over each feature's sorted samples (§4.1). Ties go to the lowest id.

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
        features="raw",
        alpha=0.0,
        fit_intercept=True,
        tol=1e-4,
        max_iter=200,
        verbose=0,
        callback=None,
    ):
        self.n_features_to_select = n_features_to_select
        self.features = features
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.callback = callback

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
            Non-negative weights; the loss is their weighted mean. Samples
            of weight zero are dropped (they would still define candidates,
            such as stump thresholds).

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
        X, y_idx, sample_weight = self._fit_candidates(X, y, sample_weight)
        classes = self.classes_
        n_rounds = self._resolve_n_features_to_select(
            X.shape[1], self.features_.n_candidates_)

        path = shareboost_path(
            X,
            y_idx,
            n_classes=classes.shape[0],
            n_rounds=n_rounds,
            features=self.features_,
            alpha=float(self.alpha),
            fit_intercept=bool(self.fit_intercept),
            sample_weight=sample_weight,
            tol=float(self.tol),
            max_iter=int(self.max_iter),
            callback=self.callback,
            verbose=int(self.verbose),
        )
        self.features_.end_scan(path.selected_features)
        self.selected_features_ = path.selected_features
        self.n_iter_ = len(path.selected_features)
        self.train_loss_ = path.train_loss
        self.refit_n_iter_ = path.refit_n_iter
        self._coef_path = path.coefs
        self._intercept_path = path.intercepts
        self.support_ = self.features_.support_
        if isinstance(self.features_, RawFeatures):
            W = np.zeros((classes.shape[0], X.shape[1]))
            W[:, self.selected_features_] = path.coefs[-1]
        else:
            W = path.coefs[-1].copy()
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
        return self._candidate_columns(X, self.selected_features_)

    def _staged_scores(self, X):
        X_sel = self._selected_columns(X)
        for t, (W, b) in enumerate(zip(self._coef_path, self._intercept_path), 1):
            yield X_sel[:, :t] @ W.T + b

    def _scores(self, X):
        """Scores ``W x + b`` of shape (n_samples, n_classes) of the final model."""
        X_sel = self._selected_columns(X)
        return X_sel @ self._coef_path[-1].T + self._intercept_path[-1]

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
