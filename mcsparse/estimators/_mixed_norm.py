"""MixedNormClassifier: the l1/l2 (group-lasso) or l1/linf baseline of [SWS2011]."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import check_is_fitted, validate_data

from ..solvers._mixed_norm import PENALTIES, mixed_norm_path
from ..solvers._mixed_norm import debias as debias_refit
from ..solvers._mixed_norm_adelie import SOLVERS, check_solver
from ..utils.validation import (FiniteInterval, StrChoices, ValidatedParamsMixin,
                                validate_parameters)
from ._base import (ProbaMixin, ScoresMixin, SparseInputMixin, check_training_data,
                    check_training_weights)


def _warn_debias(status, max_iter):
    if status == "max_iter":
        warnings.warn(
            f"The debiasing refit stopped at max_iter={max_iter}: on separable "
            "selected features the unpenalised loss has no minimiser.",
            ConvergenceWarning,
            stacklevel=3,
        )
    elif status == "failed":
        warnings.warn(
            "The debiasing refit failed in the line search with the gradient above "
            "its tolerance: the refitted W is not a minimiser (badly scaled "
            "features); rescale X, e.g. to [-1, 1].",
            ConvergenceWarning,
            stacklevel=3,
        )


class MixedNormClassifier(ProbaMixin, ScoresMixin, SparseInputMixin, ValidatedParamsMixin,
                          ClassifierMixin, BaseEstimator):
    r"""Multiclass linear classifier with a mixed-norm (group-lasso) penalty.

    The convex baseline of ShareBoost [SWS2011]_ (eq. 5, Fig. 3): the margin
    soft-max loss of eq. (3) plus ``alpha`` times the sum over features of a
    norm of the feature's column of ``W`` (its weights for all classes). The
    penalty zeroes whole columns, so the selected features are shared by all
    classes, as in [DS2009]_. Solved by accelerated proximal gradient
    (FISTA [BT2009]_) on a short path of penalties from the smallest value
    with an all-zero ``W`` down to ``alpha``, to a KKT tolerance.

    Parameters
    ----------
    alpha : float, default=0.01
        Penalty level :math:`\lambda`, positive. The loss is a mean, so
        useful values are below ``lambda_max`` (the smallest ``alpha`` with
        ``W = 0``; about 0.1 on pendigits pairwise products): choose
        ``alpha`` by cross-validation on training data, or look at
        :func:`mixed_norm_classifier_path`.
    penalty : {"l1/l2", "l1/linf"}, default="l1/l2"
        Column norm: l2 (group lasso, :math:`\|W\|_{2,1}`) or l_inf
        (:math:`\|W\|_{\infty,1}`).
    fit_intercept : bool, default=True
        Fit an unpenalised intercept vector ``b`` (scores ``W x + b``).
    tol : float, default=1e-4
        Largest KKT violation, relative to ``alpha``, at which the solver
        stops; also the relative gradient tolerance of the debiasing refit.
    max_iter : int, default=1000
        FISTA iterations per penalty level of the internal path; BFGS
        iterations of the debiasing refit.
    debias : bool, default=False
        Refit the selected (non-zero) columns without the penalty (the
        "relaxed" or debiased group lasso): the support comes from the
        penalised problem, the coefficients from the bare loss.
    solver : {"fista", "adelie"}, default="fista"
        ``"fista"``: accelerated proximal gradient to ``tol``. ``"adelie"``:
        the group-lasso solver of the optional adelie package (l1/l2 only),
        faster on ill-conditioned features but less precise: its KKT
        violation, in ``kkt_violation_``, is often above ``tol`` (then a
        ConvergenceWarning says so). See :func:`mcsparse.solvers.mixed_norm_path`.
    verbose : int, default=0
        Print one line per penalty level when positive.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    coef_ : ndarray of shape (n_classes, n_features) or (1, n_features)
        ``W``; for two classes the single row ``W[1] - W[0]`` (scikit-learn's
        convention, as :class:`~mcsparse.ShareBoostClassifier`).
    intercept_ : ndarray of shape (n_classes,) or (1,)
        ``b`` (zeros with ``fit_intercept=False``), centred to sum zero;
        ``b[1] - b[0]`` for two classes.
    support_ : ndarray of shape (n_features,), dtype bool
        Mask of the non-zero columns of ``W`` (the selected features).
    n_iter_ : int
        FISTA iterations at ``alpha`` (after the warm-up levels of the
        internal path; 0 with ``solver="adelie"``, which does not report
        them), plus BFGS iterations of the refit when ``debias``.
    kkt_violation_ : float
        Largest relative KKT violation of the penalised solution.
    n_features_in_ : int
        Number of features seen during fit.
    feature_names_in_ : ndarray of shape (n_features,)
        Names of features seen during fit, when ``X`` has string column names.

    See Also
    --------
    mcsparse.ShareBoostClassifier : Greedy selection of shared columns.
    mixed_norm_classifier_path : One fitted classifier per penalty level.
    mcsparse.solvers.mixed_norm_path : The solver on validated arrays.

    Notes
    -----
    The objective is [SWS2011]_, eq. (5), with the loss of eq. (3),

    .. math::

        \min_{W, b}\; \frac{1}{\sum_i s_i} \sum_{i=1}^m s_i \log \sum_{y'}
        \exp\bigl(1[y' \ne y_i] - (W x_i + b)_{y_i} + (W x_i + b)_{y'}\bigr)
        + \alpha \sum_{j=1}^d \|W_{:, j}\|_q,

    :math:`q = 2` (``"l1/l2"``) or :math:`q = \infty` (``"l1/linf"``), sample
    weights :math:`s_i`. The solver stops when the optimality conditions
    :math:`0 \in \nabla_j L + \alpha\, \partial\|W_{:, j}\|_q` hold to
    ``tol * alpha`` for every column. Columns are centred internally when
    ``fit_intercept`` (an exact reparametrisation). Inputs may be float32 or
    float64, dense or sparse; the solver works in float64.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, eq. (5).
    .. [DS2009] J. Duchi, Y. Singer, "Boosting with structural sparsity",
       ICML 2009.
    .. [BT2009] A. Beck, M. Teboulle, "A fast iterative shrinkage-thresholding
       algorithm for linear inverse problems", SIAM J. Imaging Sci., 2009.

    Examples
    --------
    >>> from mcsparse.datasets import load_pendigits
    >>> from mcsparse import MixedNormClassifier
    >>> X, y = load_pendigits(return_X_y=True)
    >>> clf = MixedNormClassifier(alpha=0.02).fit(X / 100, y)
    >>> bool(0 < clf.support_.sum() < 16)
    True
    >>> bool(clf.score(X / 100, y) > 0.8)
    True
    """

    _parameter_constraints: dict = {
        "alpha": [FiniteInterval(Real, 0, None, closed="neither")],
        "penalty": [StrChoices(PENALTIES)],
        "fit_intercept": ["boolean"],
        "tol": [FiniteInterval(Real, 0, None, closed="neither")],
        "max_iter": [FiniteInterval(Integral, 1)],
        "debias": ["boolean"],
        "solver": [StrChoices(SOLVERS)],
        "verbose": ["verbose"],
    }

    def __init__(self, *, alpha=0.01, penalty="l1/l2", fit_intercept=True, tol=1e-4,
                 max_iter=1000, debias=False, solver="fista", verbose=0):
        self.alpha = alpha
        self.penalty = penalty
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.debias = debias
        self.solver = solver
        self.verbose = verbose

    def _validate_params(self):
        super()._validate_params()
        check_solver(self.solver, self.penalty)  # adelie: l1/l2 only

    def _validate_fit_data(self, X, y, sample_weight):
        X, y_idx, classes = check_training_data(self, X, y)
        sample_weight = check_training_weights(self, sample_weight, y_idx, classes)
        if sp.issparse(X):
            X = X.tocsc()
        return X, y_idx, classes, sample_weight

    def _set_fitted(self, classes, W, b, n_iter, kkt):
        self.classes_ = classes
        self.support_ = np.any(W != 0, axis=0)
        self.n_iter_ = int(n_iter)
        self.kkt_violation_ = float(kkt)
        self._W = W
        self._b = b
        if classes.shape[0] == 2:
            self.coef_ = (W[1] - W[0])[None, :]
            self.intercept_ = np.array([b[1] - b[0]])
        else:
            self.coef_ = W.copy()
            self.intercept_ = b.copy()
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the penalised model (and refit its support when ``debias``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data; float32 or float64 (others become float64);
            sparse input must be CSR or CSC.
        y : array-like of shape (n_samples,)
            Class labels of any type, at least two distinct classes.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights; the loss is their weighted mean.

        Returns
        -------
        self : MixedNormClassifier
            The fitted estimator.

        Raises
        ------
        ValueError
            If ``X`` contains NaN or infinity, is not 2-D, or has a length
            different from ``y``; if ``y`` has a single class, or ``sample_weight``
            leaves positive weights in fewer than two classes; if ``alpha``
            is negative, ``penalty`` or ``solver`` unknown, ``solver="adelie"``
            with ``penalty="l1/linf"``, or another parameter out of range.
        TypeError
            If a parameter has the wrong type.
        ImportError
            If ``solver="adelie"`` and adelie is not installed.
        """
        X, y_idx, classes, sample_weight = self._validate_fit_data(X, y, sample_weight)
        k = classes.shape[0]
        alpha = float(self.alpha)
        common = dict(n_classes=k, penalty=self.penalty,
                      fit_intercept=bool(self.fit_intercept),
                      sample_weight=sample_weight, tol=float(self.tol),
                      max_iter=int(self.max_iter), solver=self.solver,
                      verbose=int(self.verbose))
        # warm_up: a short warm-started path from lambda_max down to alpha,
        # much faster than a cold start at small alpha
        path = mixed_norm_path(X, y_idx, lambdas=[alpha], warm_up=10, **common)
        W, b = path.coefs[-1], path.intercepts[-1]
        n_iter = int(path.n_iter.sum())
        kkt = path.kkt_violation[-1]
        if self.debias:
            W, b, nit, status = debias_refit(X, y_idx, W, b, n_classes=k,
                                             fit_intercept=bool(self.fit_intercept),
                                             sample_weight=sample_weight,
                                             tol=float(self.tol), max_iter=int(self.max_iter))
            n_iter += nit
            _warn_debias(status, self.max_iter)
        return self._set_fitted(classes, W, b, n_iter, kkt)

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
            reset=False,
        )
        cols = np.flatnonzero(self.support_)
        X_sel = X[:, cols]
        if sp.issparse(X_sel):
            X_sel = X_sel.toarray()
        return np.asarray(X_sel, dtype=np.float64) @ self._W[:, cols].T + self._b


#: The constraints of the parameters of :func:`mixed_norm_classifier_path` that
#: are not :class:`MixedNormClassifier`'s (``alphas`` is checked in it).
_PATH_CONSTRAINTS = {"n_alphas": [FiniteInterval(Integral, 1)],
                     "alpha_min_ratio": [FiniteInterval(Real, 0, 1, closed="neither")]}


def mixed_norm_classifier_path(
    X,
    y,
    *,
    alphas=None,
    n_alphas=50,
    alpha_min_ratio=1e-2,
    penalty="l1/l2",
    fit_intercept=True,
    tol=1e-4,
    max_iter=1000,
    debias=False,
    sample_weight=None,
    solver="fista",
    verbose=0,
):
    """Fit :class:`MixedNormClassifier` along a path of ``alpha``, one solver run.

    Like scikit-learn's ``lasso_path`` but returning fitted estimators, so
    that the examples can plot test error against the number of selected
    features: ``[m.support_.sum() for m in models]``,
    ``[1 - m.score(X_test, y_test) for m in models]``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Training data.
    y : array-like of shape (n_samples,)
        Class labels, at least two classes.
    alphas : array-like of shape (n_alphas,), default=None
        Positive penalty levels (fitted in decreasing order). None: a
        geometric grid from ``lambda_max`` (all-zero ``W``) down to
        ``alpha_min_ratio * lambda_max``.
    n_alphas : int, default=50
        Grid size when ``alphas`` is None.
    alpha_min_ratio : float, default=1e-2
        Smallest grid value relative to ``lambda_max``.
    penalty : {"l1/l2", "l1/linf"}, default="l1/l2"
        Column norm, as in :class:`MixedNormClassifier`.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept.
    tol : float, default=1e-4
        KKT tolerance relative to ``alpha`` (and the refit's tolerance).
    max_iter : int, default=1000
        FISTA iterations per ``alpha`` (BFGS iterations per refit).
    debias : bool, default=False
        Refit each model's support without the penalty.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative weights.
    solver : {"fista", "adelie"}, default="fista"
        The path's solver, as in :class:`MixedNormClassifier`.
    verbose : int, default=0
        Print one line per ``alpha`` when positive.

    Returns
    -------
    models : list of MixedNormClassifier
        One fitted estimator per ``alpha``, in decreasing ``alpha`` order,
        each with its ``alpha`` parameter set, as if fitted alone.

    Raises
    ------
    ValueError
        On invalid data or parameters, as :meth:`MixedNormClassifier.fit`.
    ImportError
        If ``solver="adelie"`` and adelie is not installed.

    Warns
    -----
    UserWarning
        If the gradient at ``W = 0`` is zero (``lambda_max = 0``, e.g. constant
        columns): every model is null, and the grid of ``alphas=None`` (1 down
        to ``alpha_min_ratio``) is arbitrary.
    """
    base = MixedNormClassifier(penalty=penalty, fit_intercept=fit_intercept, tol=tol,
                               max_iter=max_iter, debias=debias, solver=solver,
                               verbose=verbose)
    base._validate_params()
    validate_parameters(_PATH_CONSTRAINTS, dict(n_alphas=n_alphas,
                                                alpha_min_ratio=alpha_min_ratio))
    if alphas is not None:
        alphas = np.asarray(alphas, dtype=np.float64).ravel()
        if alphas.size == 0 or not np.all(np.isfinite(alphas)) or np.any(alphas <= 0):
            raise ValueError("alphas must be finite and positive")
    X, y_idx, classes, sample_weight = base._validate_fit_data(X, y, sample_weight)
    k = classes.shape[0]
    path = mixed_norm_path(
        X, y_idx, n_classes=k, lambdas=alphas, n_lambdas=n_alphas,
        lambda_min_ratio=alpha_min_ratio, penalty=penalty,
        fit_intercept=fit_intercept, sample_weight=sample_weight, tol=tol,
        max_iter=max_iter, solver=solver, verbose=verbose,
    )
    models = []
    for lam, W, b, nit, kkt in zip(path.lambdas, path.coefs, path.intercepts,
                                   path.n_iter, path.kkt_violation):
        model = clone(base).set_params(alpha=float(lam))
        for attr in ("n_features_in_", "feature_names_in_"):
            if hasattr(base, attr):
                setattr(model, attr, getattr(base, attr))
        if debias:
            W, b, nit2, _ = debias_refit(X, y_idx, W, b, n_classes=k,
                                         fit_intercept=fit_intercept,
                                         sample_weight=sample_weight, tol=tol,
                                         max_iter=max_iter)
            nit = nit + nit2
        models.append(model._set_fitted(classes, W, b, nit, kkt))
    return models
