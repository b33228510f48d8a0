"""ShareBoostClassifierCV: ``alpha`` and the number of features by cross-validation.

One ShareBoost fit is the whole path of models with 1, 2, ... features, so
cross-validating the number of features costs nothing beyond one path per
fold and ``alpha``: the validation score after every round comes from the
staged scores. The estimator follows scikit-learn's ``*CV`` estimators
(``LogisticRegressionCV``, ``ElasticNetCV``): it chooses, then refits once on
all the data with the choice, and predicts with that model.
"""

import numbers
import time
from numbers import Integral
import warnings

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import check_scoring
from sklearn.model_selection import check_cv
from sklearn.utils import _safe_indexing
from sklearn.utils.validation import check_is_fitted

from ..features._base import fit_features
from ..utils._dask import is_dask_array
from ..utils.validation import FiniteInterval, StrChoices, ValidatedParamsMixin, check_real
from ._base import (ProbaMixin, ScoresMixin, SparseInputMixin, StagedMixin, StagedProbaMixin,
                    _softmax, _to_decision)
from ._features import resolve_features
from ._greedy import resolve_rounds
from ._shareboost import ShareBoostClassifier

#: The choices of ``rule``.
RULES = ("min", "1se")

#: The parameters of the paths' :class:`ShareBoostClassifier`.
_PATH_PARAMS = ("features", "selection", "penalty", "beta", "fit_intercept", "tol",
                "max_iter", "random_state")

#: The span of the default grid of ``alpha``, in multiples of the default
#: ``alpha="auto"`` of the whole data.
GRID_SPAN = (1e-3, 1e3)


def alpha_grid(n_alphas, auto):
    """The default grid: ``n_alphas`` values log-spaced over ``GRID_SPAN`` times ``auto``.

    Parameters
    ----------
    n_alphas : int
        Number of values, at least 1 (one value: ``auto`` itself).
    auto : float
        :func:`mcsparse.solvers.default_alpha` of the whole data.

    Returns
    -------
    alphas : ndarray of shape (n_alphas,)
        Increasing; the middle value is ``auto`` when ``n_alphas`` is odd.
    """
    if n_alphas == 1:
        return np.array([auto])
    return auto * np.logspace(*np.log10(GRID_SPAN), n_alphas)


class _RoundModel(ClassifierMixin, BaseEstimator):
    """The model of one round of a path, on the path's selected columns.

    What a scikit-learn scorer calls: ``predict``, ``predict_proba``,
    ``decision_function`` of ``X_sel``, the selected candidates' columns
    (computed once for the whole path), of which the round reads the first
    ``coef.shape[1]``.
    """

    def _fitted(self, classes, coef, intercept):
        self.classes_, self._coef, self._intercept = classes, coef, intercept
        return self

    def _scores(self, X_sel):
        return X_sel[:, : self._coef.shape[1]] @ self._coef.T + self._intercept

    def decision_function(self, X_sel):
        return _to_decision(self._scores(X_sel))

    def predict(self, X_sel):
        return self.classes_[np.argmax(self._scores(X_sel), axis=1)]

    def predict_proba(self, X_sel):
        return _softmax(self._scores(X_sel))

    def predict_log_proba(self, X_sel):
        return _softmax(self._scores(X_sel), log=True)


def _round_models(clf, n_rounds):
    """``(W, b)`` of rounds 1 .. ``n_rounds`` of a fitted path; a path that stopped
    early keeps its last model (the intercept-only one if it stopped at once)."""
    models = list(zip(clf._coef_path, clf._intercept_path))
    return models + [clf._final_model()] * (n_rounds - len(models))


def _validation_scores(clf, X, y, sample_weight, n_rounds, scorer):
    """The score on ``(X, y)`` of the model after each round, shape (n_rounds,)."""
    X_sel = clf._selected_columns(X)
    model = _RoundModel()
    out = np.empty(n_rounds)
    for t, (W, b) in enumerate(_round_models(clf, n_rounds)):
        model._fitted(clf.classes_, W, b)
        if scorer is None:  # accuracy, the default as in scikit-learn's classifiers
            out[t] = np.average(model.predict(X_sel) == y, weights=sample_weight)
        elif sample_weight is None:
            out[t] = scorer(model, X_sel, y)
        else:
            out[t] = scorer(model, X_sel, y, sample_weight=sample_weight)
    return out


def _fold_path(base, X, y, sample_weight, train, test, alpha, n_rounds, scorer):
    """One path on a training fold; its validation scores after every round.

    Returns ``(scores, fit_time, n_iter, messages)``: the ConvergenceWarnings of
    the fit are returned as text, not shown (the estimator reports them once).
    """
    clf = clone(base).set_params(alpha=alpha, n_features_to_select=n_rounds)
    weights = [None, None] if sample_weight is None else [sample_weight[train],
                                                           sample_weight[test]]
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        clf.fit(_safe_indexing(X, train), y[train], sample_weight=weights[0])
    fit_time = time.perf_counter() - start
    messages = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    for w in caught:  # the other warnings are shown as they are
        if not issubclass(w.category, ConvergenceWarning):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    scores = _validation_scores(clf, _safe_indexing(X, test), y[test], weights[1],
                                n_rounds, scorer)
    return scores, fit_time, clf.n_iter_, messages


def _choose(mean, std, n_splits, rule):
    """``(alpha index, n_features)`` from the mean scores (n_alphas, n_rounds).

    "min": the best mean score; ties to fewer features, then to the larger
    alpha. "1se": the fewest features whose mean score is within one standard
    error (``std / sqrt(n_splits)``) of the best; among them the best mean,
    then the larger alpha.
    """
    best = np.unravel_index(np.argmax(mean), mean.shape)
    threshold = mean[best]
    if rule == "1se":
        threshold = mean[best] - std[best] / np.sqrt(n_splits)
    rounds = np.flatnonzero((mean >= threshold).any(axis=0))
    t = int(rounds[0])
    column = mean[:, t]
    i = int(np.flatnonzero(column == column.max())[-1])  # the larger alpha on ties
    return i, t + 1


class ShareBoostClassifierCV(StagedProbaMixin, StagedMixin, ProbaMixin, ScoresMixin,
                             SparseInputMixin, ValidatedParamsMixin, ClassifierMixin,
                             BaseEstimator):
    r"""ShareBoost with ``alpha`` and the number of features chosen by cross-validation.

    For each fold of ``cv`` and each value of ``alphas``, one ShareBoost path
    of ``max_features`` rounds is fitted on the training part
    (:class:`ShareBoostClassifier`), and its score on the held-out part is
    taken after every round from the staged scores: one path gives the score
    of every number of features. The pair ``(alpha, n_features)`` with the
    best mean score over the folds is chosen (``rule``), and ShareBoost is
    fitted once more on all the data with it; that model predicts.

    Parameters
    ----------
    alphas : int or array-like of float, default=7
        The penalties to try (§3.3 of [SWS2011]_, the ``alpha`` of
        :class:`ShareBoostClassifier`). An int: that many values log-spaced
        from 1e-3 to 1e3 times :class:`ShareBoostClassifier`'s default
        ``alpha="auto"`` on the data given to :meth:`fit`
        (:func:`~mcsparse.solvers.default_alpha`: the candidate columns'
        mean variance over twice the weight sum); 7 values are the decades,
        the default in the middle. As scikit-learn's ``LogisticRegressionCV``
        takes ``Cs``. An array: the values themselves, finite and >= 0
        (sorted, repeats dropped).
    max_features : int or float, default=None
        Rounds of each path: the largest number of features considered, as
        :class:`ShareBoostClassifier`'s ``n_features_to_select`` on the whole
        data (an int; a float in (0, 1], a fraction of the candidates; None,
        half of ``n_features_in_``, at most the candidates).
    cv : int, cross-validation generator or iterable, default=None
        As in scikit-learn: None is 5-fold stratified, an int that many
        stratified folds, or a splitter or an iterable of (train, test)
        index arrays.
    scoring : str or callable, default=None
        The score maximised, as in scikit-learn (``"accuracy"``,
        ``"neg_log_loss"``, ...; a scorer ``scorer(estimator, X, y)``). None
        is the accuracy (weighted by ``sample_weight`` when given).
    rule : {"min", "1se"}, default="min"
        "min": the pair with the best mean score (ties to fewer features,
        then to the larger ``alpha``). "1se": the fewest features whose
        mean score, at some ``alpha``, is within one standard error of the
        best (the standard deviation over the folds divided by the square
        root of their number; glmnet's ``lambda.1se``); among those, the
        best ``alpha``.
    features : {"raw", "stumps", "templates", "anchors"} or CandidateFeatures, default="raw"
        The candidate family, as in :class:`ShareBoostClassifier`; fitted
        again on each training fold.
    selection : str, default="gradient_l1"
        The selection rule, as in :class:`ShareBoostClassifier`.
    penalty : {"fro", "linf1_smooth"}, default="fro"
        As in :class:`ShareBoostClassifier`.
    beta : float, default=10.0
        As in :class:`ShareBoostClassifier`.
    fit_intercept : bool, default=True
        As in :class:`ShareBoostClassifier`.
    tol : float, default=1e-4
        As in :class:`ShareBoostClassifier`.
    max_iter : int, default=200
        As in :class:`ShareBoostClassifier`.
    n_jobs : int, default=None
        Paths fitted in parallel (joblib; None is one, -1 all cores).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means of a family chosen by name, in every fit.
    verbose : int, default=0
        Print one line per path (fold, alpha, best score, time) when
        positive.

    Attributes
    ----------
    alphas_ : ndarray of shape (n_alphas,)
        The grid used, increasing.
    alpha_ : float
        The chosen ``alpha``.
    n_features_ : int
        The chosen number of features (rounds).
    best_score_ : float
        The mean validation score at the chosen pair.
    scores_ : ndarray of shape (n_splits, n_alphas, max_features)
        The validation score of every fold, alpha and round. A path that
        stopped early (its next candidate within the refit tolerance) keeps
        its last model for the later rounds.
    cv_results_ : dict of ndarray
        scikit-learn's ``GridSearchCV`` layout, one entry per ``(alpha,
        n_features)`` pair, alpha-major (``pandas.DataFrame(cv_results_)``):
        ``param_alpha``, ``param_n_features``, ``split{i}_test_score``,
        ``mean_test_score``, ``std_test_score`` and ``rank_test_score``.
    path_n_iter_ : ndarray of shape (n_splits, n_alphas)
        Rounds each path ran (``max_features`` unless it stopped early).
    path_warnings_ : list of lists
        ``path_warnings_[s][i]``: the ConvergenceWarning messages of the path
        of fold ``s`` and ``alphas_[i]`` (a list of str, often empty).
    max_features_ : int
        The rounds of each path (``max_features`` resolved).
    best_estimator_ : ShareBoostClassifier
        The model fitted on all the data with ``alpha_`` and
        ``n_features_``, which the prediction methods use.
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        ``best_estimator_.coef_``.
    intercept_ : ndarray of shape (n_classes,) or (1,)
        ``best_estimator_.intercept_``.
    features_ : CandidateFeatures
        ``best_estimator_.features_``, the fitted candidate family.
    selected_features_ : ndarray of shape (n_rounds,), dtype intp
        The refit's selected candidates, in selection order.
    selected_feature_names_ : ndarray of shape (n_rounds,), dtype object
        Their names.
    support_ : ndarray of shape (n_features,), dtype bool
        The input columns the refitted model reads.
    n_iter_ : int
        The refit's rounds, ``n_rounds`` in the shapes above (``n_features_``,
        fewer if its path converged).
    train_loss_ : ndarray of shape (n_rounds,)
        The refit's training objective after each round.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    Warns
    -----
    ConvergenceWarning
        Once, when paths at the chosen ``alpha`` had refits that stopped
        short (the message counts them and quotes the first); the refit's
        own warnings as :class:`ShareBoostClassifier` gives them.

    See Also
    --------
    ShareBoostClassifier : One path, with given ``alpha`` and number of features.
    sklearn.linear_model.LogisticRegressionCV : The same convention for ``C``.

    Notes
    -----
    The cost is ``n_splits * n_alphas`` paths of ``max_features`` rounds plus
    one path of ``n_features_`` rounds, where ``GridSearchCV`` over ``alpha``
    and ``n_features_to_select`` fits a path per pair. Dask arrays are
    refused: cross-validation runs its paths in memory (``n_jobs``); on a
    cluster, fit :class:`ShareBoostClassifier` on a dask array with a chosen
    ``alpha``.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011.

    Examples
    --------
    >>> from mcsparse import ShareBoostClassifierCV
    >>> from mcsparse.datasets import load_pendigits
    >>> X, y = load_pendigits(return_X_y=True)
    >>> cv = ShareBoostClassifierCV(alphas=3, max_features=6, cv=3).fit(X / 100, y)
    >>> cv.scores_.shape
    (3, 3, 6)
    >>> bool(1 <= cv.n_features_ <= 6 and cv.alpha_ in cv.alphas_)
    True
    """

    _parameter_constraints: dict = {
        "alphas": [FiniteInterval(Integral, 1), "array-like"],  # the values: checked at fit
        "max_features": ShareBoostClassifier._parameter_constraints["n_features_to_select"],
        "cv": ["cv_object"],
        "scoring": [None, str, callable],  # the names: check_scoring's message
        "rule": [StrChoices(RULES)],
        **{name: ShareBoostClassifier._parameter_constraints[name] for name in _PATH_PARAMS},
        "n_jobs": [None, FiniteInterval(Integral, None, -1), FiniteInterval(Integral, 1)],
        "verbose": ["verbose"],
    }

    def __init__(self, *, alphas=7, max_features=None, cv=None, scoring=None, rule="min",
                 features="raw", selection="gradient_l1", penalty="fro", beta=10.0,
                 fit_intercept=True, tol=1e-4, max_iter=200, n_jobs=None,
                 random_state=None, verbose=0):
        self.alphas = alphas
        self.max_features = max_features
        self.cv = cv
        self.scoring = scoring
        self.rule = rule
        self.features = features
        self.selection = selection
        self.penalty = penalty
        self.beta = beta
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    def _base(self):
        """The unfitted ShareBoostClassifier of every path, without alpha and rounds."""
        return ShareBoostClassifier(**{name: getattr(self, name) for name in _PATH_PARAMS})

    def _resolve(self, base, X, y_idx, sample_weight, weight_scale):
        """``(alphas, max_features)`` on the whole data (its candidate family)."""
        family = fit_features(resolve_features(self.features, self.random_state), X)
        max_features = resolve_rounds(self.max_features, X.shape[1], family,
                                      name="max_features")
        if isinstance(self.alphas, numbers.Integral):
            auto = base._resolve_alpha(family, X.shape[0], sample_weight, weight_scale)
            alphas = alpha_grid(int(self.alphas), auto)
        else:
            try:
                alphas = np.asarray(self.alphas, dtype=np.float64)
            except (TypeError, ValueError):
                raise TypeError(f"alphas must be an int or an array of floats, got "
                                f"{self.alphas!r}") from None
            if alphas.ndim != 1 or alphas.size == 0:
                raise ValueError(f"alphas must be a non-empty 1-D array, got shape "
                                 f"{alphas.shape}")
            for a in alphas:
                check_real(a, "each of alphas", low=0.0)
            alphas = np.unique(alphas)
        return alphas, max_features

    @_fit_context(prefer_skip_nested_validation=False)  # features may be an estimator
    def fit(self, X, y, sample_weight=None):
        """Cross-validate ``alpha`` and the number of features, then refit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, as :meth:`ShareBoostClassifier.fit` takes it (a
            pandas DataFrame names the features). Dask arrays are refused.
        y : array-like of shape (n_samples,)
            Class labels, at least two classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights: of the loss in every fit, and of the
            validation scores.

        Returns
        -------
        self : ShareBoostClassifierCV
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` or ``y`` is invalid (as :class:`ShareBoostClassifier`
            says), a parameter is out of range (``rule``, ``alphas``,
            ``max_features``, or one of the paths' parameters), a training
            fold has fewer candidates than ``max_features``, or ``X`` is a
            dask array.
        TypeError
            If ``alphas`` is neither an int nor an array of numbers.
        """
        if is_dask_array(X):
            raise ValueError(
                "ShareBoostClassifierCV does not take dask arrays: it fits n_splits x "
                "n_alphas paths in memory (n_jobs). On a cluster, fit "
                "ShareBoostClassifier on the dask array with a chosen alpha.")
        base = self._base()
        # the paths' parameters and the data, once, before any fold
        X_checked, y_idx, sample_weight, weight_scale = base._validate_fit_data(
            X, y, sample_weight)
        y_checked = base.classes_[y_idx]
        alphas, max_features = self._resolve(base, X_checked, y_idx, sample_weight,
                                             weight_scale)
        splitter = check_cv(self.cv, y_checked, classifier=True)
        splits = list(splitter.split(X_checked, y_checked))
        scorer = None if self.scoring is None else check_scoring(base, self.scoring)
        jobs = [(s, i, train, test, alpha) for s, (train, test) in enumerate(splits)
                for i, alpha in enumerate(alphas)]
        # a generator: the paths' results (and verbose lines) as they come, in order
        results = Parallel(n_jobs=self.n_jobs, return_as="generator")(
            delayed(_fold_path)(base, X_checked, y_checked, sample_weight, train, test,
                                alpha, max_features, scorer)
            for _, _, train, test, alpha in jobs)
        self._store_search(alphas, max_features, jobs, results, len(splits))
        self._refit(base, X, y, sample_weight)
        return self

    def _store_search(self, alphas, max_features, jobs, results, n_splits):
        """The CV attributes from the paths' results, and the choice."""
        shape = (n_splits, alphas.size)
        self.alphas_, self.max_features_ = alphas, max_features
        self.scores_ = np.empty(shape + (max_features,))
        self.path_n_iter_ = np.empty(shape, dtype=np.intp)
        self.path_warnings_ = [[None] * alphas.size for _ in range(n_splits)]
        for (s, i, *_), (scores, fit_time, n_iter, messages) in zip(jobs, results):
            self.scores_[s, i] = scores
            self.path_n_iter_[s, i] = n_iter
            self.path_warnings_[s][i] = messages
            if self.verbose:
                print(f"[ShareBoostClassifierCV] fold {s + 1}/{n_splits}, alpha "
                      f"{alphas[i]:.3g}: best score {scores.max():.4f} at "
                      f"{int(np.argmax(scores)) + 1} features, path {fit_time:.1f} s",
                      flush=True)
        mean, std = self.scores_.mean(axis=0), self.scores_.std(axis=0)
        i, self.n_features_ = _choose(mean, std, n_splits, self.rule)
        self.alpha_ = float(alphas[i])
        self.best_score_ = float(mean[i, self.n_features_ - 1])
        self.cv_results_ = self._cv_results(mean, std)
        self._warn_paths(i)

    def _cv_results(self, mean, std):
        n_alphas, n_rounds = mean.shape
        results = {
            "param_alpha": np.repeat(self.alphas_, n_rounds),
            "param_n_features": np.tile(np.arange(1, n_rounds + 1), n_alphas),
        }
        for s, split in enumerate(self.scores_):
            results[f"split{s}_test_score"] = split.ravel()
        results["mean_test_score"] = mean.ravel()
        results["std_test_score"] = std.ravel()
        # scikit-learn's rank: 1 for the best, equal scores share the lowest rank
        order = -mean.ravel()
        results["rank_test_score"] = (np.searchsorted(np.sort(order), order) + 1).astype(
            np.int32)
        return results

    def _warn_paths(self, i):
        """One warning when the chosen alpha's paths had refits that stopped short."""
        messages = [m for fold in self.path_warnings_ for m in fold[i]
                    if "stopped after" not in m]  # a converged path is not a failure
        if messages:
            warnings.warn(
                f"ShareBoostClassifierCV: at the chosen alpha={self.alpha_:.3g}, "
                f"{len(messages)} warnings in the fold paths (path_warnings_), the first: "
                f"{messages[0]}", ConvergenceWarning, stacklevel=3)

    def _refit(self, base, X, y, sample_weight):
        """Fit ``best_estimator_`` on all the data; take its attributes."""
        best = clone(base).set_params(alpha=self.alpha_, n_features_to_select=self.n_features_)
        if self.verbose:
            print(f"[ShareBoostClassifierCV] refit: alpha={self.alpha_:.3g}, "
                  f"{self.n_features_} features", flush=True)
        self.best_estimator_ = best.fit(X, y, sample_weight=sample_weight)
        for name in ("classes_", "coef_", "intercept_", "features_", "selected_features_",
                     "selected_feature_names_", "support_", "n_iter_", "train_loss_",
                     "n_features_in_", "feature_names_in_"):
            if hasattr(best, name):
                setattr(self, name, getattr(best, name))
            else:
                self.__dict__.pop(name, None)

    def _scores(self, X):
        check_is_fitted(self)
        return self.best_estimator_._scores(X)

    def _staged_scores(self, X):
        check_is_fitted(self)
        return self.best_estimator_._staged_scores(X)
