"""One-vs-rest greedy selection: the baseline of Fig. 2 of [SWS2011]."""

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils.validation import check_is_fitted

from ..features import RawFeatures
from ..loss import BinaryLogisticLoss
from ..solvers import shareboost_path
from ..utils._dask import is_dask_array, map_rows
from ..utils.validation import shown
from ._base import ProbaMixin, ScoresMixin, StagedMixin
from ._greedy import _BaseGreedy


class OneVsRestGreedyClassifier(StagedMixin, ProbaMixin, ScoresMixin, _BaseGreedy):
    r"""One-vs-rest sparse logistic regression by greedy forward selection.

    The baseline of [SWS2011]_, Fig. 2 (§7.1): one binary problem per class
    (class ``c`` against the rest), each solved with the binary logistic
    loss by the same mechanism as ShareBoost: forward greedy selection of the
    feature with the largest gradient, then a fully corrective refit of all
    the problem's selected features. The difference from ShareBoost is that
    every binary problem selects its own features; the model reads the union
    of them. Prediction is ``argmax_c`` of the binary scores.

    Parameters
    ----------
    n_features_to_select : int or float, default=None
        Rounds of each binary problem. An int in ``[1, n_candidates]``; a
        float in ``(0, 1]`` is a fraction of the candidates; None half of
        ``n_features_in_``, at most the number of candidates.
    features : {"raw", "stumps", "templates"} or CandidateFeatures, default="raw"
        The candidate family, as in :class:`ShareBoostClassifier`; fitted
        once and shared by the binary problems. Families of grouped
        candidates (:class:`~mcsparse.features.AnchorPoints`,
        ``RawFeatures(groups=...)``) are not supported.
    alpha : float or "auto", default="auto"
        Penalty ``(alpha / 2) ||w_c||_2^2`` on each binary weight vector (the
        Frobenius penalty of the two-row soft-max form, see Notes), >= 0;
        "auto" as in :class:`ShareBoostClassifier`
        (:func:`mcsparse.solvers.default_alpha`). ``alpha=0`` is the bare
        loss of the paper's baseline.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept per binary problem.
    tol : float, default=1e-4
        Relative tolerance of each refit, as in :class:`ShareBoostClassifier`.
    max_iter : int, default=200
        Iteration cap of each refit.
    verbose : int, default=0
        Print one line per round of each binary problem when positive.
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means of a family chosen by name ("templates"); a
        family passed as an object keeps its own ``random_state``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    alpha_ : float
        The penalty used: ``alpha``, or the value of "auto".
    features_ : CandidateFeatures
        The fitted candidate family, keeping the union of the selected
        candidates.
    selected_features_ : ndarray of shape (n_classes, n_rounds), dtype intp
        Row ``c``: the candidates selected by problem ``c`` in order; -1
        after the round where problem ``c`` stopped because its next
        candidate's gradient was within the refit tolerance (a
        ``ConvergenceWarning`` says so): its model stays as it was.
    coef_ : ndarray of shape (n_classes, n_features)
        Row ``c`` is ``w_c``; ``n_features`` is ``n_features_in_`` for "raw",
        else the number of distinct selected candidates, in the order of
        ``union_features_``.
    intercept_ : ndarray of shape (n_classes,)
        The binary intercepts ``b_c``.
    union_features_ : ndarray of shape (n_distinct,), dtype intp
        All selected candidates, sorted.
    n_distinct_features_ : ndarray of shape (n_rounds,), dtype intp
        Number of distinct candidates the model reads after ``t`` rounds of
        every binary problem: the x-axis of Fig. 2.
    support_ : ndarray of shape (n_features,), dtype bool
        Input columns the model reads.
    n_iter_ : int
        Rounds of each binary problem.
    train_loss_ : ndarray of shape (n_classes, n_rounds)
        Each binary problem's training objective after each round.

    See Also
    --------
    ShareBoostClassifier : Shared selection for all classes at once.

    Notes
    -----
    Problem ``c`` minimises the mean binary logistic loss of
    :math:`z_i = \pm 1` (``y_i == c`` or not),

    .. math::

        \frac{1}{\sum_i s_i} \sum_i s_i \log\bigl(1 + e^{-z_i (w_c^\top x_i
        + b_c)}\bigr) + \frac{\alpha}{2} \|w_c\|_2^2,

    over ``w_c`` supported on its selected candidates: the binary logistic
    loss of :class:`~mcsparse.loss.BinaryLogisticLoss` (the two-class
    soft-max without margin, eq. (3) with the margin set to 0, on one score
    per sample) with the Frobenius penalty ``alpha / 2``. Each round selects
    the candidate with the largest binary gradient ``|g_j|``.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.1.

    Examples
    --------
    >>> from mcsparse import OneVsRestGreedyClassifier
    >>> from mcsparse.datasets import load_pendigits
    >>> X, y = load_pendigits(return_X_y=True)
    >>> clf = OneVsRestGreedyClassifier(n_features_to_select=3).fit(X / 100, y)
    >>> clf.selected_features_.shape
    (10, 3)
    >>> int(clf.n_distinct_features_[-1]) <= 16
    True
    """

    # __init__: _BaseGreedy's, whose parameters are all of this estimator's

    @_fit_context(prefer_skip_nested_validation=False)  # features may be an estimator
    def fit(self, X, y, sample_weight=None):
        """Run the greedy selection of every binary problem.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 is kept, other dtypes become float64.
        y : array-like of shape (n_samples,)
            Class labels, at least two distinct classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; samples of weight zero are dropped.

        Returns
        -------
        self : OneVsRestGreedyClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, or its length differs from
            ``y``'s; if ``y`` has a single class, or ``sample_weight`` leaves
            positive weights in fewer than two classes; if a parameter is out of
            range; if the family has grouped candidates.
        """
        X, y_idx, sample_weight = self._fit_candidates(X, y, sample_weight)
        if getattr(self.features_, "candidate_widths_", None) is not None:
            raise ValueError(
                f"OneVsRestGreedyClassifier selects single candidates; the family "
                f"{type(self.features_).__name__} has grouped candidates "
                "(candidate_widths_), which only ShareBoostClassifier supports"
            )
        n_rounds = self._resolve_n_features_to_select(X.shape[1], self.features_)
        paths = []
        for c in range(self.classes_.shape[0]):
            if self.verbose:
                print(f"[OneVsRestGreedy] class {shown(self.classes_[c])} against the rest")
            path = shareboost_path(
                X,
                (y_idx == c).astype(np.intp),
                n_classes=2,
                n_rounds=n_rounds,
                features=self.features_,
                alpha=self.alpha_ / 2,  # (alpha / 2) ||w_c||^2, see Notes
                fit_intercept=bool(self.fit_intercept),
                loss=BinaryLogisticLoss(),
                sample_weight=sample_weight,
                tol=float(self.tol),
                max_iter=int(self.max_iter),
                verbose=int(self.verbose),
            )
            paths.append(path)
        return self._set_paths(paths, n_rounds, X.shape[1])

    def _set_paths(self, paths, n_rounds, n_features):
        """Store the binary paths; one that converged early keeps its last model.

        A binary path stops before ``n_rounds`` when its next candidate's
        gradient is within the refit tolerance (:func:`shareboost_path`
        warns); its row of ``selected_features_`` is then padded with -1 and
        its model stays the same for the remaining rounds.
        """
        k = len(paths)
        self.selected_features_ = np.full((k, n_rounds), -1, dtype=np.intp)
        self.train_loss_ = np.empty((k, n_rounds))
        coefs, intercepts = [], []  # [class][round] -> (features of the class then,)
        for c, path in enumerate(paths):
            t = len(path.selected_features)
            self.selected_features_[c, :t] = path.selected_features
            rounds = [(W[0], b[0]) for W, b in zip(path.coefs, path.intercepts)]
            last = rounds[-1] if t else (np.zeros(0), path.initial_intercept[0])
            rounds += [last] * (n_rounds - t)
            coefs.append([w for w, _ in rounds])
            intercepts.append([b for _, b in rounds])
            self.train_loss_[c] = np.concatenate(
                [path.train_loss, np.full(n_rounds - t, path.initial_loss if t == 0
                                          else path.train_loss[-1])])
        selected = self.selected_features_
        self.union_features_ = np.unique(selected[selected >= 0])
        self.features_.end_scan(self.union_features_)
        self.support_ = self.features_.support_
        self.n_iter_ = n_rounds
        self.n_distinct_features_ = np.array(
            [np.unique(selected[:, :t][selected[:, :t] >= 0]).size
             for t in range(1, n_rounds + 1)], dtype=np.intp)
        self._coef_path = coefs
        self._intercept_path = intercepts

        # position of each selected candidate among the union's columns
        self._columns_of = np.searchsorted(self.union_features_, selected)
        raw = isinstance(self.features_, RawFeatures)
        W = np.zeros((k, n_features if raw else self.union_features_.size))
        for c in range(k):
            w = coefs[c][-1]
            W[c, (selected if raw else self._columns_of)[c, :w.size]] = w
        self.coef_ = W
        self.intercept_ = np.array([b[-1] for b in intercepts])
        return self

    def _union_columns(self, X):
        check_is_fitted(self)
        return self._candidate_columns(X, self.union_features_)

    def _staged_scores(self, X):
        union = self._union_columns(X)
        for t in range(1, self.n_iter_ + 1):
            yield self._scores_at(union, t - 1)

    def _scores(self, X):
        return self._scores_at(self._union_columns(X), -1)

    def _scores_at(self, union, t):
        """The binary scores of round ``t`` (``-1``: the last) on the union's columns.

        A dask ``union`` gives a dask array of its row chunks (known or not).
        """
        coefs = [path[t] for path in self._coef_path]
        intercepts = np.array([path[t] for path in self._intercept_path])
        if is_dask_array(union):
            return map_rows(_binary_scores, union, self._columns_of, coefs, intercepts,
                            width=len(coefs))
        return _binary_scores(union, self._columns_of, coefs, intercepts)


def _binary_scores(union, columns_of, coefs, intercepts):
    """Each class's binary score: its coefficients on its own columns of ``union``."""
    scores = np.empty((union.shape[0], len(coefs)))
    for c, w in enumerate(coefs):
        scores[:, c] = union[:, columns_of[c, :w.size]] @ w + intercepts[c]
    return scores
