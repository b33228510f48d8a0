"""ShareBoostClassifier: the scikit-learn estimator around :mod:`mcsparse.solvers`."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import _fit_context
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.validation import check_is_fitted

from ..features import RawFeatures
from ..features._base import CandidateFeatures, fit_features
from ..features._dask import DaskCandidates
from ..loss import LOSSES, Loss, make_loss
from ..loss._penalties import SMOOTH_PENALTIES as PENALTIES
from ..solvers import ShareBoostPath, shareboost_path
from ..solvers._monitor import ValidationMonitor
from ..solvers._selection import SELECTION_RULES
from ..utils.validation import FiniteInterval, StrChoices, shown
from ..utils._dask import (check_dask_matrix, check_dask_vector, compute_vectors,
                           is_dask_array)
from ._base import (ProbaMixin, ScoresMixin, StagedMixin, StagedProbaMixin,
                    _linear_scores, check_training_targets, check_training_weights)
from ._features import resolve_features
from ._greedy import _BaseGreedy, _weight_scale


def _same_candidates(fitted, refitted, n_samples, ids):
    """Whether ``refitted`` gives the fitted path's columns on the training data again.

    A warm start refits the candidate family on the same data; its selected
    candidates must still be the columns the path's coefficients were fitted
    on, ``fitted(ids)`` (the fitted family's on the data). Compared in blocks
    of about 2**22 values.
    """
    ids = np.asarray(ids, dtype=np.intp)
    width = int(np.max(getattr(refitted, "candidate_widths_", 1), initial=1))
    step = max(1, 2**22 // max(1, n_samples * width))
    for lo in range(0, ids.size, step):
        old = fitted(ids[lo:lo + step])
        new = refitted.training_columns(ids[lo:lo + step])
        scale = max(float(np.abs(old).max(initial=0.0)), np.finfo(np.float64).tiny)
        if old.shape != new.shape or not np.allclose(old, new, rtol=1e-4, atol=1e-5 * scale):
            return False
    return True


def _truncate(path, n_rounds):
    """The first ``n_rounds`` rounds of a :class:`ShareBoostPath`."""
    return ShareBoostPath(
        selected_features=path.selected_features[:n_rounds],
        coefs=path.coefs[:n_rounds],
        intercepts=path.intercepts[:n_rounds],
        train_loss=path.train_loss[:n_rounds],
        selection_scores=path.selection_scores[:n_rounds],
        refit_n_iter=path.refit_n_iter[:n_rounds],
        n_refits_not_converged=path.n_refits_not_converged,
        column_ptr=path.column_ptr[: n_rounds + 1],
        initial_intercept=path.initial_intercept,
        initial_loss=path.initial_loss,
    )  # without the refit's state, which belongs to the last round


def _validation_split(X, y_idx, fraction, random_state):
    """Mask of the held-out samples: a stratified split drawn with ``random_state``."""
    try:
        _, val_idx = train_test_split(np.arange(X.shape[0]), test_size=fraction,
                                      stratify=y_idx,
                                      random_state=check_random_state(random_state))
    except ValueError as exc:
        raise ValueError(
            f"validation_fraction={fraction} cannot split {X.shape[0]} samples of "
            f"{np.unique(y_idx).size} classes into a stratified training and "
            f"validation part: {exc}"
        ) from exc
    mask = np.zeros(X.shape[0], dtype=bool)
    mask[val_idx] = True
    return mask


def _split(X, y_idx, sample_weight, mask, n_classes):
    """``(fit part, held-out part)``, each ``(X, y, sample_weight)``; no split for None."""
    if mask is None:
        return (X, y_idx, sample_weight), None
    parts = [(X[m], y_idx[m], None if sample_weight is None else sample_weight[m])
             for m in (~mask, mask)]
    if np.unique(parts[0][1]).shape[0] < n_classes:
        raise ValueError(
            "the training part of the validation split lacks some "
            "classes; use a smaller validation_fraction"
        )
    return parts[0], parts[1]


def _candidate_names(family, ids, input_features):
    """``family.candidate_names`` (the base class's default unless the family names its
    candidates); a family not derived from CandidateFeatures has no names."""
    if isinstance(family, CandidateFeatures):
        return family.candidate_names(ids, input_features)
    return np.array([f"candidate {j}" for j in ids], dtype=object)


class ShareBoostClassifier(StagedProbaMixin, StagedMixin, ProbaMixin, ScoresMixin,
                           _BaseGreedy):
    r"""ShareBoost: sparse multiclass linear classifier with shared features.

    Learns ``W`` of shape ``(n_classes, n_features)`` with few non-zero
    columns by forward greedy selection [SWS2011]_: each round adds the
    feature (column) whose gradient column of the training loss has the
    largest l1 norm, then refits ``W`` on all selected columns (the fully
    corrective step, by BFGS warm-started from the previous round with the
    curvature it has learnt so far). One fit gives the whole path of models
    with 1, 2, ... features (:meth:`staged_predict`).

    Parameters
    ----------
    n_features_to_select : int or float, default=None
        Number of rounds, i.e. of selected features. An int in
        ``[1, n_candidates]``; a float in ``(0, 1]`` is a fraction of the
        number of candidates; None selects half of ``n_features_in_`` (as
        scikit-learn's ``RFE`` does), at most the number of candidates.
    features : {"raw", "stumps", "templates", "anchors"} or CandidateFeatures, default="raw"
        The candidate features ShareBoost selects from: "raw" the columns of
        ``X`` (:class:`~mcsparse.features.RawFeatures`); "stumps" all
        decision stumps ``1[x_f <= theta]`` (§4.1,
        :class:`~mcsparse.features.DecisionStumps`); "templates" the
        convolution-max template features of square images, one per row
        (§7.4, :class:`~mcsparse.features.ConvMaxTemplates` with its
        defaults); "anchors" the piecewise-linear anchor-point groups (§4.2,
        :class:`~mcsparse.features.AnchorPoints` with its defaults); pass an
        instance to set a family's parameters; or any object following
        the :class:`~mcsparse.features.CandidateFeatures` protocol. It is
        cloned and fitted on the training data; only the selected
        candidates are computed on new data.
    selection : str, default="gradient_l1"
        How each round picks the next candidate (§3.1 of [SWS2011]_), one
        of:

        - "gradient_l1": the largest l1 norm of the gradient column,
          :math:`\arg\max_j \|G_{:, j}\|_1` (the paper's rule, one scan of
          the candidate family per round);
        - "best_column": the lowest objective after the best update of the
          new column alone, eq. (6), :math:`\min_{u \in R^k} F(W + u
          e_j^\top, b)` (Newton's method per candidate);
        - "line_search": the lowest objective along the gradient column,
          eq. (7), :math:`\min_{\eta} F(W - \eta G_{:, j} e_j^\top, b)`;
        - "full": the lowest objective after the fully corrective refit on
          the support plus the candidate (a refit per candidate;
          refused with a ValueError when ``n_candidates * n_samples *
          n_classes * n_rounds`` exceeds 1e9).

        The last three evaluate every unselected candidate of any family
        exactly (its training values in blocks), on the objective the
        refit minimises, penalty included; ties go to the lowest id.
    alpha : float or "auto", default="auto"
        Strength of the penalty (§3.3), >= 0. "auto" is
        :func:`mcsparse.solvers.default_alpha`: ``s2 / (2 * sum of
        sample_weight)``, ``s2`` the mean variance of the candidate columns
        (their mean square without an intercept), i.e. scikit-learn's
        ``LogisticRegression(C=1.0)`` penalty scaled to the columns' size
        (``alpha_`` gives the value). ``alpha=0`` is the paper's bare loss,
        which has no minimiser once the selected columns separate the
        training set: late refits then stop at ``max_iter`` or in the line
        search, with a ``ConvergenceWarning``. To choose ``alpha`` and the
        number of features on the training data, use
        :class:`ShareBoostClassifierCV` (one path per fold and ``alpha``).
    loss : {"margin_logistic", "softmax"} or Loss, default="margin_logistic"
        The loss on the scores: "margin_logistic" is the paper's eq. (3),
        the soft-max loss with margin 1; "softmax" the plain soft-max
        (cross-entropy) loss (:mod:`mcsparse.loss`); or an instance of a
        subclass of :class:`mcsparse.loss.Loss` (your own loss, see the user
        guide's "Write your own loss").
    penalty : {"fro", "linf1_smooth"}, default="fro"
        The penalty on ``W`` (never on the intercept), §3.3: "fro" is
        :math:`\alpha \|W\|_F^2`; "linf1_smooth" the smoothed mixed norm
        :math:`\|W\|_{\infty,1}` of the Notes, which favours columns
        whose entries share one magnitude.
    beta : float, default=10.0
        Smoothing of "linf1_smooth", at least 1: larger values follow
        :math:`\alpha \|W\|_{\infty,1}` more closely. Unused by "fro".
    fit_intercept : bool, default=True
        Fit an unpenalised intercept vector ``b`` (scores ``W x + b``). It is
        never counted as a selected feature and is fitted alone before the
        first round. With False the model is exactly eq. (1).
    tol : float, default=1e-4
        Relative stopping tolerance of each refit: it stops when the
        largest absolute entry of the gradient falls below ``tol`` times the
        objective at the refit's warm start (the previous round's value).
        Relative, because the gradient shrinks with the loss: late on a
        path an absolute tolerance would leave the new column at zero.
        Smaller values follow the exact fully corrective minimiser more
        closely, at more iterations per round. In (0, 1): from 1 on, no
        refit would take a step.
    max_iter : int, default=200
        Maximum iterations of each refit.
    validation_fraction : float, default=None
        When set, a float in (0, 1): that fraction of the training data is
        held out (split stratified by class, drawn with ``random_state``);
        the path is fitted on the rest, and after every round the
        validation loss (eq. (3), the weighted mean without penalty) and
        error are recorded in ``validation_scores_`` and
        ``validation_errors_``. None (default) uses all the data.
    n_iter_no_change : int, default=None
        Early stopping, with ``validation_fraction``: stop when the
        validation loss has not improved (strictly) on its best value for
        ``n_iter_no_change`` rounds, and keep the best round: the fitted
        model is truncated to ``best_iteration_`` rounds. None (default)
        runs all ``n_features_to_select`` rounds.
    random_state : int, RandomState instance or None, default=None
        Draws the validation split, and seeds the k-means of a family
        chosen by name ("templates", "anchors"; a family passed as an
        object keeps its own ``random_state``). Pass an int for
        reproducible fits.
    warm_start : bool, default=False
        When True and the estimator is fitted, :meth:`fit` continues the
        fitted path up to ``n_features_to_select`` rounds instead of
        starting over, which gives the same model as one long fit. The data
        must be the same (checked: shape and classes), and so must the
        candidate family (checked: the selected candidates' columns; a
        family that draws at random needs a fixed ``random_state``). A smaller
        ``n_features_to_select`` than ``n_iter_`` raises ValueError; an
        equal one leaves the model unchanged. A path fitted in memory or on
        a dask array can be extended on either (the same data).
    verbose : int, default=0
        Print one line per round when positive.
    callback : callable, default=None
        Called after every round with a :class:`mcsparse.solvers.ShareBoostRound`
        (round, selected feature, coefficients, train loss, time). If it
        returns True, the fit stops after that round.
    n_jobs : int, default=None
        Threads of the fit: given to a family chosen by name that runs on
        threads (the stump scan of "stumps", the k-means and scans of
        "templates" and "anchors"; a family passed as an object keeps its
        own ``n_jobs``), and used by the refit's passes over row blocks.
        -1 means all processors. None leaves the family's default (one
        thread unless in a :func:`joblib.parallel_backend` context) and
        runs the refit on the family's ``n_jobs`` when it is an int, else
        on one thread. The fitted model does not depend on it, nor on the
        size of the BLAS pool (``OMP_NUM_THREADS``, threadpoolctl): every
        selection, coefficient and intercept is the same bit for bit.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    alpha_ : float
        The penalty used: ``alpha``, or the value of "auto".
    features_ : CandidateFeatures
        The fitted candidate family, holding only what the selected
        candidates need; it is still indexed by candidate id. For stumps,
        ``features_.stump_features_`` and ``features_.thresholds_`` give
        each selected stump's original feature and threshold, aligned with
        ``selected_features_`` (in selection order).
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
    selected_feature_names_ : ndarray of shape (n_rounds,), dtype object
        Their names, from ``features_.candidate_names`` with the column
        names of a fitted pandas DataFrame (``feature_names_in_``) or ``x0,
        x1, ...``: ``"petal width (cm)"`` for a raw column, ``"x3 <= 0.5"``
        for a stump, ``"anchor 12, radius 0.84"``, ``"template 5, mask 3"``.
    support_ : ndarray of shape (n_features,), dtype bool
        Mask of the input columns the model reads (the selected columns for
        "raw"; for stumps the features with a selected stump).
    n_iter_ : int
        Number of rounds run, ``n_rounds`` in the shapes above
        (``n_features_to_select`` unless ``callback`` or early stopping
        stopped the fit, or the path converged: when the candidate picked
        next has gradient entries within the refit tolerance, the path stops
        with a ``ConvergenceWarning``; 0 when that happens before the first
        round, leaving the intercept-only model).
    train_loss_ : ndarray of shape (n_rounds,)
        Training objective (mean loss plus penalty) after each round's refit.
    refit_n_iter_ : ndarray of shape (n_rounds,)
        Iterations of each round's refit.
    selection_scores_ : ndarray of shape (n_rounds,)
        The selection rule's score of each selected candidate:
        :math:`\|G_{:, j}\|_1` for "gradient_l1", the objective value the
        rule evaluated for the other rules.
    validation_scores_ : ndarray of shape (n_rounds_run,)
        Only with ``validation_fraction``: the validation loss after each
        round run, including the rounds after the best one that early
        stopping discarded.
    validation_errors_ : ndarray of shape (n_rounds_run,)
        Only with ``validation_fraction``: the (weighted) validation error
        after each round run.
    best_iteration_ : int
        Only with ``validation_fraction``: the round with the lowest
        validation loss (the first one on ties); equal to ``n_iter_`` when
        ``n_iter_no_change`` is set.
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

    with sample weights :math:`s_i` (all one by default), or with the smoothed
    :math:`\|W\|_{\infty,1}` of §3.3 instead of the Frobenius term
    (``penalty="linf1_smooth"``):

    .. math::

        P(W) = \frac{\alpha}{\beta} \sum_{j \in I} \Bigl[\log \sum_{i=1}^k
        \bigl(e^{\beta W_{ij}} + e^{-\beta W_{ij}}\bigr) - \log(2k)\Bigr],

    which lies within :math:`\alpha \log(2k) / \beta` per column of
    :math:`\alpha \|W\|_{\infty,1}`. The constant :math:`\log(2k)`
    (absent from the paper's formula) makes it zero at :math:`W = 0`: it
    changes neither the minimisers nor any rule's choice, and keeps the
    objective non-increasing along the path. It is computed with
    ``logaddexp``/``logsumexp``, stable for any :math:`\beta W`.

    The default selection rule is the greedy step of the paper's algorithm:
    :math:`r = \arg\max_j \|\nabla_W L[:, j]\|_1` over unselected
    candidates, computed by the candidate family: for raw columns one BLAS
    product :math:`X^\top R`, for stumps prefix sums over each feature's
    sorted samples (§4.1). Ties go to the lowest id. The gradient of both
    penalties is zero on a zero column, so this rule only sees the loss,
    whatever the penalty. The other rules of §3.1 (``selection``) minimise
    the full objective :math:`F = L + P` for each candidate: eq. (6) with
    the intercept and the other columns fixed, eq. (7) likewise, and the
    fully corrective refit (intercept included). They cost more per round:
    a pass over ``n_samples * n_classes`` scores per candidate and Newton
    step ("best_column", "line_search"), or a whole refit per candidate
    ("full").

    Choosing ``alpha`` and the number of features:
    :class:`ShareBoostClassifierCV` cross-validates both with one path per
    fold and ``alpha`` (the score of every number of features comes from the
    staged scores). A cheaper option for the number of features alone is
    ``validation_fraction`` with ``n_iter_no_change``, as in scikit-learn's
    ``HistGradientBoostingClassifier``: the validation loss after each
    round is recorded and the path stops once it has not improved for
    ``n_iter_no_change`` rounds; ``coef_``, ``selected_features_``,
    ``n_iter_`` and the staged methods then describe the best round.

    Ties: candidates whose selection scores are within a relative 1e-4 of
    the best count as tied, and the lowest id among them is chosen
    (:mod:`mcsparse.utils._ties`), so that float32 and float64 copies of the
    data, and dask arrays of any chunking, select the same candidates.

    Inputs may be float32 (kept as such for the selection product) or
    float64, dense or sparse CSR/CSC. The refits read the selected columns
    only, stored in float32 when their values are float32 numbers (stumps,
    templates, float32 pixels) and accumulated in float64. Each refit starts
    from the previous round's model and from the curvature of the earlier
    rounds (BFGS, the new column's exact Hessian blocks added by the Schur
    complement), which takes a few iterations a round instead of a fresh
    L-BFGS's twenty to thirty. :meth:`predict` on new data reads only the
    selected columns.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011;
       §3.1 (selection rules, eq. (6) and (7)), §3.3 (penalties).

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

    _parameter_constraints: dict = {
        **_BaseGreedy._parameter_constraints,
        "selection": [StrChoices(SELECTION_RULES)],
        "loss": [StrChoices(tuple(LOSSES)), Loss],
        "penalty": [StrChoices(PENALTIES)],
        "beta": [FiniteInterval(Real, 1, None, closed="left")],
        "validation_fraction": [None, FiniteInterval(Real, 0, 1, closed="neither")],
        "n_iter_no_change": [None, FiniteInterval(Integral, 1)],
        "warm_start": ["boolean"],
        "callback": [None, callable],
        "n_jobs": [None, FiniteInterval(Integral, None, -1), FiniteInterval(Integral, 1)],
    }

    def __init__(self, *, n_features_to_select=None, features="raw", selection="gradient_l1",
                 alpha="auto", loss="margin_logistic", penalty="fro", beta=10.0,
                 fit_intercept=True, tol=1e-4, max_iter=200, validation_fraction=None,
                 n_iter_no_change=None, random_state=None, warm_start=False, verbose=0,
                 callback=None, n_jobs=None):
        super().__init__(n_features_to_select=n_features_to_select, features=features,
                         alpha=alpha, fit_intercept=fit_intercept, tol=tol,
                         max_iter=max_iter, verbose=verbose, random_state=random_state)
        self.selection, self.loss, self.penalty, self.beta = selection, loss, penalty, beta
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.warm_start, self.callback = warm_start, callback
        self.n_jobs = n_jobs

    def _validate_params(self):
        super()._validate_params()
        if self.n_iter_no_change is not None and self.validation_fraction is None:
            raise InvalidParameterError(
                "n_iter_no_change needs validation_fraction: early stopping "
                "watches the loss on a held-out part of the training data"
            )

    @_fit_context(prefer_skip_nested_validation=False)  # features may be an estimator
    def fit(self, X, y, sample_weight=None):
        """Run ShareBoost for ``n_features_to_select`` rounds.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array} of shape (n_samples, n_features)
            Training data; float32 is kept, other dtypes become float64;
            sparse input must be CSR or CSC. A ``dask.array.Array`` chunked
            by rows is fitted on the current ``distributed.Client``: the
            candidate scan runs on the workers, the refit here, and the
            fitted attributes are the NumPy arrays an in-memory fit gives
            (raw features, ``DecisionStumps(max_bins=...)`` or
            ``ConvMaxTemplates``; user guide, "Scale-out on Dask"), and
            ``warm_start`` extends the stored path there.
        y : array-like of shape (n_samples,)
            Class labels of any type, at least two distinct classes; with a
            dask ``X``, a NumPy array or a dask array chunked like its rows
            (``y.rechunk(X.chunks[0])``).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; the loss is their weighted mean. Samples
            of weight zero are dropped (they would still define candidates,
            such as stump thresholds); with a dask ``X`` they are kept.

        Returns
        -------
        self : ShareBoostClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, is not 2-D, has a length
            different from ``y``; if ``y`` has a single class, or ``sample_weight``
            leaves positive weights in fewer than two classes; if
            ``n_features_to_select`` or another parameter is out of range;
            if ``selection="full"`` is asked on too large a problem; with
            ``warm_start=True``, if the data's shape or classes differ from
            the fitted ones, if the refitted candidate family gives other
            columns for the selected candidates, or if
            ``n_features_to_select`` is below ``n_iter_``. With a dask
            ``X``: if it is split along its columns, has unknown chunk sizes
            or a chunk with NaN or infinity (named), if ``y`` or
            ``sample_weight`` has another length than ``X`` (both named) or
            is chunked unlike its rows (both chunkings named), if no client
            is running, or if ``validation_fraction`` or a ``selection``
            other than "gradient_l1" is asked. All but the NaN check run
            before any task.
        TypeError
            With a dask ``X``, if the candidate family does not run on
            chunks (anchor points, templates) or ``X`` is not real.
        RuntimeError
            With a dask ``X``, if a chunk cannot be computed any more (its
            workers kept dying); the error names the chunk.
        """
        if is_dask_array(X):
            return self._fit_dask(X, y, sample_weight)
        warm = bool(self.warm_start) and hasattr(self, "_path")
        previous = (self.n_features_in_, self._n_samples_fit, self.classes_,
                    self._validation_mask) if warm else None
        X, y_idx, sample_weight, weight_scale = self._validate_fit_data(X, y, sample_weight)
        mask = self._warm_mask(previous, X) if warm else self._new_mask(X, y_idx)
        self._n_samples_fit, self._validation_mask = X.shape[0], mask
        n_classes = self.classes_.shape[0]
        (X, y_idx, sample_weight), held_out = _split(X, y_idx, sample_weight, mask,
                                                     n_classes)
        if warm and self._resolve_n_features_to_select(
                X.shape[1], self.features_) == self.n_iter_:
            return self  # nothing to add
        features = fit_features(resolve_features(self.features, self.random_state, self.n_jobs), X)
        n_rounds = self._resolve_n_features_to_select(X.shape[1], features)
        if warm:
            self._check_warm_family(features, X, n_rounds)
        self.features_ = features
        self.alpha_ = self._resolve_alpha(features, X.shape[0], sample_weight, weight_scale)
        monitor = None if held_out is None else self._monitor(held_out, n_classes, warm)
        path = shareboost_path(
            X, y_idx, n_classes=n_classes, n_rounds=n_rounds, features=features,
            alpha=self.alpha_, fit_intercept=bool(self.fit_intercept),
            sample_weight=sample_weight, tol=float(self.tol), max_iter=int(self.max_iter),
            callback=self.callback if monitor is None else monitor,
            verbose=int(self.verbose), selection=self.selection, penalty=self.penalty,
            beta=float(self.beta), init_path=self._path if warm else None,
            loss=make_loss(self.loss), n_jobs=self.n_jobs,
        )
        return self._set_path(path, monitor, X.shape[1])

    def _fit_dask(self, X, y, sample_weight):
        """``fit`` on a dask array: the candidate scan on the workers, the refit here."""
        warm = bool(self.warm_start) and hasattr(self, "_path")
        previous = (self.n_features_in_, self._n_samples_fit, self.classes_,
                    self._validation_mask) if warm else None
        scan = DaskCandidates(resolve_features(self.features, self.random_state, self.n_jobs))
        X, y_idx, sample_weight, weight_scale = self._validate_dask_data(
            X, y, sample_weight, previous, scan)
        self._n_samples_fit, self._validation_mask = X.shape[0], None
        if warm and self._resolve_n_features_to_select(
                X.shape[1], self.features_) == self.n_iter_:
            return self  # nothing to add
        scan.fit(X)
        try:
            n_rounds = self._resolve_n_features_to_select(X.shape[1], scan)
            if warm:
                self._check_warm_family(scan, X, n_rounds)
            self.alpha_ = self._resolve_alpha(scan, X.shape[0], sample_weight, weight_scale)
            path = shareboost_path(
                None, y_idx, n_classes=self.classes_.shape[0], n_rounds=n_rounds,
                features=scan, alpha=self.alpha_, fit_intercept=bool(self.fit_intercept),
                sample_weight=sample_weight, tol=float(self.tol),
                max_iter=int(self.max_iter), callback=self.callback,
                verbose=int(self.verbose), penalty=self.penalty, beta=float(self.beta),
                init_path=self._path if warm else None, loss=make_loss(self.loss),
                n_jobs=self.n_jobs,
            )
        finally:
            scan.release()
        self.features_ = scan.family_
        return self._set_path(path, None, X.shape[1])

    def _validate_dask_data(self, X, y, sample_weight, previous, scan):
        """The checks of a dask fit, all of them before any task: shapes, chunks and
        the family's parameters (``scan.check``) first, then the labels and weights
        computed together; sets ``classes_``.

        Returns ``(X, y_idx, sample_weight, weight_scale)`` as
        ``_validate_fit_data`` (samples of weight zero are kept).
        """
        for name, value, default in (("validation_fraction", self.validation_fraction, None),
                                     ("selection", self.selection, "gradient_l1")):
            if value != default:
                raise ValueError(f"{name}={value!r} is not supported on a dask array; "
                                 f"use {name}={default!r}, or NumPy input")
        X = check_dask_matrix(X, "X")
        y = check_dask_vector(y, "y", X.chunks[0])
        if sample_weight is not None:
            sample_weight = check_dask_vector(sample_weight, "sample_weight", X.chunks[0])
        if previous is not None and (previous[1], previous[0]) != X.shape:
            raise ValueError(
                "warm_start=True continues a fitted path on the same data: fitted on "
                f"shape {(previous[1], previous[0])}, got shape {X.shape}. Set "
                "warm_start=False to fit from scratch.")
        scan.check(X)
        y, given = compute_vectors(y, sample_weight)
        y_idx, classes = check_training_targets(self, y)
        sample_weight = check_training_weights(self, given, y_idx, classes)
        weight_scale = _weight_scale(None if sample_weight is None else given)
        self.classes_ = classes
        if previous is not None:
            self._warm_mask(previous, X)  # the classes
        self.n_features_in_ = X.shape[1]
        self.__dict__.pop("feature_names_in_", None)
        return X, y_idx, sample_weight, weight_scale

    def _new_mask(self, X, y_idx):
        """The held-out mask of a fit from scratch (None without validation_fraction)."""
        if self.validation_fraction is None:
            return None
        return _validation_split(X, y_idx, self.validation_fraction, self.random_state)

    def _warm_mask(self, previous, X):
        """Check that a warm start sees the fitted data again; its held-out mask."""
        n_features, n_samples, old_classes, mask = previous
        classes = self.classes_
        if (n_samples, n_features) != X.shape or not (
            old_classes.shape == classes.shape and np.all(old_classes == classes)
        ):
            raise ValueError(
                "warm_start=True continues a fitted path on the same data: "
                f"fitted on shape {(n_samples, n_features)} with classes "
                f"{shown(old_classes)}, got shape {X.shape} with classes {shown(classes)}. "
                "Set warm_start=False to fit from scratch."
            )
        if (mask is None) != (self.validation_fraction is None):
            raise ValueError(
                "validation_fraction cannot be switched on or off between "
                "warm-started fits; set warm_start=False to fit from scratch"
            )
        return mask

    def _check_warm_family(self, features, X, n_rounds):
        """A warm start continues the fitted path: more rounds, the same candidates."""
        if n_rounds < self.n_iter_:
            raise ValueError(
                f"n_features_to_select={self.n_features_to_select} resolves to "
                f"{n_rounds} rounds, fewer than the n_iter_={self.n_iter_} "
                "already fitted, when warm_start=True"
            )
        if is_dask_array(X):  # the fitted family's columns, computed on the chunks
            def fitted(ids):
                return self._candidate_columns(X, ids).compute()
        else:
            def fitted(ids):
                return self.features_.transform_candidates(X, ids)
        if features.n_candidates_ != self.features_.n_candidates_ or not _same_candidates(
                fitted, features, X.shape[0], self._path.selected_features):
            # the fitted model stays as it was
            raise ValueError(
                "warm_start=True continues a fitted path with the same candidate "
                f"features, but the refitted {type(features).__name__} gives other "
                "columns for the selected candidates: the features parameter changed, "
                "or the family draws at random (k-means anchors or templates) without "
                "a fixed random_state. Fix random_state, or set warm_start=False to fit "
                "from scratch."
            )

    def _monitor(self, held_out, n_classes, warm):
        """The validation monitor (early stopping), continuing a warm path's history."""
        X_val, y_val, w_val = held_out
        history = selected = None
        if warm:
            history = (self.validation_scores_[:self.n_iter_],
                       self.validation_errors_[:self.n_iter_])
            selected = self.selected_features_
        return ValidationMonitor(self.features_, X_val, y_val, w_val, n_classes=n_classes,
                                 n_iter_no_change=self.n_iter_no_change,
                                 callback=self.callback, history=history, selected=selected,
                                 loss=make_loss(self.loss))

    def _say_early_stop(self, n_run):
        """With ``verbose``: where early stopping stopped and which round it keeps."""
        best = self.best_iteration_
        if not self.verbose or best == 0:
            return
        stopped = n_run - best >= self.n_iter_no_change
        print(f"[ShareBoost] {'early stopping after' if stopped else 'ran'} {n_run} rounds"
              + (f": the validation loss has not improved for {self.n_iter_no_change} "
                 "rounds" if stopped else "")
              + f"; the best round is {best} (validation loss "
              f"{self.validation_scores_[best - 1]:.6g}, error "
              f"{100 * self.validation_errors_[best - 1]:.2f}%), the model keeps its "
              f"{best} features", flush=True)

    def _set_path(self, path, monitor, n_features):
        """Store the fitted attributes of ``path`` (truncated by early stopping)."""
        for name in ("validation_scores_", "validation_errors_", "best_iteration_"):
            self.__dict__.pop(name, None)
        if monitor is not None:
            self.validation_scores_ = np.array(monitor.losses_)
            self.validation_errors_ = np.array(monitor.errors_)
            self.best_iteration_ = monitor.best_iteration_
            if self.n_iter_no_change is not None:
                self._say_early_stop(len(monitor.losses_))
                path = _truncate(path, self.best_iteration_)
        if not self.warm_start:  # the refit's state only serves to continue the path
            path.curvature = path.params = None
        self._path = path
        self.features_.end_scan(path.selected_features)
        self.selected_features_ = path.selected_features
        self.selected_feature_names_ = _candidate_names(
            self.features_, self.selected_features_, getattr(self, "feature_names_in_", None))
        self.n_iter_ = len(path.selected_features)
        self.train_loss_ = path.train_loss
        self.refit_n_iter_ = path.refit_n_iter
        self.selection_scores_ = path.selection_scores
        self._coef_path = path.coefs
        self._intercept_path = path.intercepts
        self._initial_intercept = path.initial_intercept
        self.support_ = self.features_.support_
        W_selected, b = self._final_model()
        W = W_selected.copy()
        if isinstance(self.features_, RawFeatures):
            W = np.zeros((W.shape[0], n_features))
            W[:, self.features_.group_columns(self.selected_features_)] = W_selected
        if W.shape[0] == 2:
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
        for W, b in zip(self._coef_path, self._intercept_path):
            yield _linear_scores(X_sel, W, b)

    def _final_model(self):
        """``(W, b)`` of the last round, ``W`` on the selected columns; the
        intercept-only model when the path stopped before its first round."""
        if self._coef_path:
            return self._coef_path[-1], self._intercept_path[-1]
        b = self._initial_intercept
        return np.zeros((b.shape[0], 0)), b

    def _scores(self, X):
        """Scores ``W x + b`` of shape (n_samples, n_classes) of the final model."""
        X_sel = self._selected_columns(X)  # checks that the model is fitted
        return _linear_scores(X_sel, *self._final_model())
