"""JointBoostClassifier: the scikit-learn estimator around :mod:`mcsparse.solvers`."""

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils.validation import check_is_fitted, validate_data

from ..solvers._jointboost import jointboost
from ..utils.validation import FiniteInterval, StrChoices, ValidatedParamsMixin
from ._base import ScoresMixin, StagedMixin, check_training_data


class JointBoostClassifier(StagedMixin, ScoresMixin, ValidatedParamsMixin, ClassifierMixin,
                           BaseEstimator):
    r"""JointBoost: GentleBoost with regression stumps shared by class subsets.

    The baseline of [SWS2011]_ Fig. 3 (bottom). Each round adds one
    regression stump on one input feature, shared by a subset ``S`` of the
    classes, with class-specific constants for the others [TMF2007]_. The
    subset is found by the greedy best-first search of [TMF2007]_: the best
    single class, then repeatedly the class whose addition gives the lowest
    error, keeping the best of the nested subsets of sizes ``1 .. k``. One fit
    gives the models with 1, 2, ... stumps (:meth:`staged_predict`).

    Parameters
    ----------
    n_estimators : int, default=100
        Number of boosting rounds, i.e. of shared stumps; at least 1.
    subset_search : {"greedy", "exhaustive"}, default="greedy"
        "greedy" is the best-first heuristic of [TMF2007]_ (``k`` candidate
        subsets per round, ``O(k^2)`` evaluations). "exhaustive" scores all
        ``2^k - 1`` subsets (at most 16 classes): the exact round, for small
        problems and tests.
    verbose : int, default=0
        Print one line per round when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    stump_features_ : ndarray of shape (n_estimators,), dtype intp
        Feature ``f`` of each stump.
    thresholds_ : ndarray of shape (n_estimators,)
        Threshold ``theta`` of each stump (midpoints between consecutive
        distinct training values; ``inf`` for the degenerate stump fitted
        when every feature is constant).
    class_subsets_ : ndarray of shape (n_estimators, n_classes), dtype bool
        ``class_subsets_[m, c]`` is True when class ``c`` shares stump ``m``.
    stump_values_ : ndarray of shape (n_estimators, 2, n_classes)
        ``h_m`` as a table: ``stump_values_[m, 0, c]`` is ``h_m(v, c)`` on
        ``v_f <= theta`` and ``stump_values_[m, 1, c]`` on ``v_f > theta``.
        For the classes in the subset these are the shared ``b`` and ``a``;
        for the others both rows hold ``k_c``.
    weighted_error_ : ndarray of shape (n_estimators,)
        Each round's minimal weighted squared error, with the round's weights
        scaled to sum to one.
    train_loss_ : ndarray of shape (n_estimators,)
        Exponential loss :math:`\sum_{i,c} e^{-z_i^c H(v_i, c)}` after each
        round (non-increasing).
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    ShareBoostClassifier : Soft sharing, fully corrective [SWS2011]_.
    sklearn.ensemble.AdaBoostClassifier : Unshared (SAMME) boosting.

    Notes
    -----
    With targets :math:`z_i^c = 1` if :math:`y_i = c` and :math:`-1`
    otherwise, and the current model :math:`H`, round :math:`m` solves the
    weighted least-squares problem of GentleBoost [FHT2000]_ over the feature
    :math:`f`, the threshold :math:`\theta`, the subset :math:`S` and the
    values :math:`a, b, (k_c)_{c \notin S}` ([TMF2007]_, eqs. 6-9):

    .. math::

        \min \sum_{c=1}^{k} \sum_{i=1}^{n} w_i^c \bigl(z_i^c - h_m(v_i, c)\bigr)^2,
        \qquad w_i^c = e^{-z_i^c H(v_i, c)},

        h_m(v, c) = \begin{cases}
            a\,1[v_f > \theta] + b\,1[v_f \le \theta] & c \in S, \\
            k_c & c \notin S,
        \end{cases}

    then :math:`H \leftarrow H + h_m`. For fixed :math:`(f, \theta, S)` the
    values are weighted means of :math:`z` (:math:`a` over the samples with
    :math:`v_f > \theta` of all classes in :math:`S`, :math:`b` over the
    others, :math:`k_c` over all samples of class :math:`c`); the search
    maximises the decrease of the error, computed from cumulative sums over
    each feature's sorted distinct values. Thresholds lie between distinct
    consecutive training values only. Predictions are
    :math:`\arg\max_c H(v, c)`.

    Ties go to the lowest feature index, then the lowest threshold, then the
    lowest class index (and the smallest subset of the greedy sequence).

    Only dense input is accepted; sparse matrices raise a TypeError (call
    ``toarray()``: stumps compare every value, zeros included). float32
    input is kept (its values are exact in float64, so float32 and float64
    copies of the same data give the same stumps).

    References
    ----------
    .. [TMF2007] A. Torralba, K. P. Murphy, W. T. Freeman, "Sharing visual
       features for multiclass and multiview object detection", IEEE TPAMI
       29(5):854-869, 2007.
    .. [FHT2000] J. Friedman, T. Hastie, R. Tibshirani, "Additive logistic
       regression: a statistical view of boosting", Annals of Statistics
       28(2):337-407, 2000 (GentleBoost, Algorithm 4).
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §1.2
       and §7.2.

    Examples
    --------
    >>> from mcsparse import JointBoostClassifier
    >>> from mcsparse.datasets import load_pendigits
    >>> X, y = load_pendigits(return_X_y=True)
    >>> clf = JointBoostClassifier(n_estimators=20).fit(X, y)
    >>> clf.class_subsets_.shape
    (20, 10)
    >>> bool(clf.score(X, y) > 0.7)
    True
    """

    _parameter_constraints: dict = {
        "n_estimators": [FiniteInterval(Integral, 1)],
        "subset_search": [StrChoices(["greedy", "exhaustive"])],
        "verbose": ["verbose"],
    }

    def __init__(self, *, n_estimators=100, subset_search="greedy", verbose=0):
        self.n_estimators = n_estimators
        self.subset_search = subset_search
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run JointBoost for ``n_estimators`` rounds.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Dense training data; float32 is kept, other dtypes become float64.
        y : array-like of shape (n_samples,)
            Class labels of any type, at least two distinct classes.

        Returns
        -------
        self : JointBoostClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, is not 2-D, has a length
            different from ``y``; if ``y`` has a single class; if
            ``n_estimators`` is below 1; if ``subset_search`` is unknown, or
            "exhaustive" with more than 16 classes.
        TypeError
            If ``X`` is sparse, or ``n_estimators`` is not an int.
        """
        X, y_idx, classes = check_training_data(self, X, y, accept_sparse=False)
        path = jointboost(
            X, y_idx,
            n_classes=classes.shape[0], n_estimators=int(self.n_estimators),
            subset_search=self.subset_search, verbose=int(self.verbose),
        )
        self.classes_ = classes
        stumps = path.stumps
        self.stump_features_ = np.array([s.feature for s in stumps], dtype=np.intp)
        self.thresholds_ = np.array([s.threshold for s in stumps], dtype=np.float64)
        self.class_subsets_ = np.array([s.subset for s in stumps], dtype=bool)
        self.stump_values_ = np.array([s.values() for s in stumps])
        self.weighted_error_ = path.weighted_error
        self.train_loss_ = path.train_loss
        return self

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, dtype=(np.float64, np.float32), reset=False)

    def _staged_scores(self, X):
        X = self._check_X(X)
        H = np.zeros((X.shape[0], self.classes_.shape[0]))
        for f, theta, values in zip(self.stump_features_, self.thresholds_,
                                    self.stump_values_):
            H += values[(X[:, f] > theta).astype(np.intp)]
            yield H.copy()

    def _scores(self, X):
        """``H(v, c)`` of shape (n_samples, n_classes) of the final model."""
        X = self._check_X(X)
        H = np.zeros((X.shape[0], self.classes_.shape[0]))
        for f, theta, values in zip(self.stump_features_, self.thresholds_,
                                    self.stump_values_):
            H += values[(X[:, f] > theta).astype(np.intp)]
        return H
