"""Multi-class multiple kernel learning estimators: UFO-MKL, Conv-MKL, SMSD-MKL.

Each one builds the bank of Gaussian base kernels on the training samples
(:func:`mcsparse.kernels.gaussian_kernel_stack`), computes the tail sums of
their eigenvalues where the method needs them
(:func:`mcsparse.kernels.tail_sums`, training Gram only) and calls
:func:`mcsparse.solvers.multiclass_mkl`. For a precomputed Gram stack (for
example to cross-validate without recomputing kernels), call the solver
directly.

The tail sums (eigenvalues, the costly part of a Conv- or SMSD-MKL fit)
are cached by the ``memory`` parameter: by default the last 32 (training
samples, bank, ``zeta``) of this process, so that a search over ``C``,
``q``, ``beta`` or ``final`` computes them once per fold
(:func:`mcsparse.kernels.forget_tail_sums`); a joblib cache, or none.
"""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.svm import SVC
from sklearn.utils._param_validation import HasMethods
from sklearn.utils.validation import check_is_fitted, validate_data

from ..kernels import conv_kernel_scale, gaussian_kernel_stack
from ..kernels._gaussian import IN_PROCESS, _check_bandwidths, _remembered_tail_sums
from ..solvers._mkl import _MAX_SCALE, multiclass_mkl
from ..utils.validation import FiniteInterval, StrChoices, ValidatedParamsMixin
from ._base import ScoresMixin, check_training_data


def _check_zeta(zeta, n_samples):
    """``zeta`` (a checked int >= 0) against the number of training samples."""
    if zeta >= n_samples:
        raise ValueError(f"zeta={zeta} must be smaller than the number of training "
                         f"samples ({n_samples})")
    return int(zeta)


def _warn_vanishing_tail_sums(estimator, r, traces, limit, effect):
    """Warn when every tail sum is below ``limit * trace``: the method's use of them vanishes."""
    if np.all(r <= limit * traces):
        warnings.warn(
            f"{type(estimator).__name__}: every tail sum r_m (zeta={estimator.zeta}) is "
            f"below {limit:g} x trace(K_m), largest r_m / trace {np.max(r / traces):.3g}: "
            f"{effect}. The base kernels have rank about zeta or less (few distinct "
            "training points, or very wide bandwidths); a smaller zeta keeps the tail sums.",
            UserWarning, stacklevel=4,
        )


_FINALS = ("last_iterate", "svc")

#: The constraints of the parameters of the tail-sum methods (Conv-, SMSD-MKL).
_TAIL_SUM_CONSTRAINTS = {
    "zeta": [FiniteInterval(Integral, 0)],  # below n_samples: checked at fit
    "memory": [None, str, HasMethods(["cache"])],
}


def _traces(gram):
    """The traces of the stack's kernels, summed in float64."""
    return np.einsum("mii->m", gram, dtype=np.float64)


def _combined_gram(gram, weights):
    """``sum_m weights[m] gram[m]`` over the kernels with a non-zero weight, float64.

    Each product is taken in float64 (a float32 stack is widened, not the
    weights rounded).
    """
    out, term = np.zeros(gram.shape[1:]), np.empty(gram.shape[1:])
    for m in np.flatnonzero(weights):
        np.multiply(gram[m], weights[m], out=term, dtype=np.float64)
        out += term
    return out


class _BaseMKLClassifier(ScoresMixin, ValidatedParamsMixin, ClassifierMixin, BaseEstimator):
    """Shared parameters, fit and prediction of the three MKL estimators."""

    _parameter_constraints: dict = {
        "C": [FiniteInterval(Real, 1.0 / _MAX_SCALE, _MAX_SCALE)],
        # a name, a scalar or an array: checked by _check_bandwidths at fit
        "bandwidths": [None, str, "array-like", Real],
        "q": [None, FiniteInterval(Real, 1, None, closed="neither")],
        "max_iter": [FiniteInterval(Integral, 1)],
        "tol": [None, FiniteInterval(Real, 0, None, closed="left")],
        "n_iter_no_change": [FiniteInterval(Integral, 1)],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "final": [StrChoices(_FINALS)],
    }

    def __init__(self, *, C=1.0, bandwidths="scale", q=None, max_iter=100, tol=1e-3,
                 n_iter_no_change=10, random_state=None, verbose=0, final="last_iterate"):
        self.C = C
        self.bandwidths = bandwidths
        self.q = q
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.random_state = random_state
        self.verbose = verbose
        self.final = final

    def _tail_terms(self, gram, X, bandwidths):
        """(r_m, kernel_scale, the solver's tail_sums, beta); None where unused.

        ``gram`` is the stack of ``X`` and ``bandwidths``, by which its tail
        sums are cached in ``memory``
        (:func:`mcsparse.kernels._gaussian._remembered_tail_sums`).
        """
        return None, None, None, 0.0

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the model on Gaussian base kernels of the training samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training samples (dense; float32 or float64). The Gram stack
            is stored in single precision, as in the paper's experiments:
            ``4 n_kernels n_samples^2`` bytes.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            NaN or infinity, a single class, bad hyper-parameters.
        TypeError
            Sparse ``X`` or non-numeric data.

        Warns
        -----
        UserWarning
            Conv-MKL: if every tail sum is below ``tail_sum_floor`` times its
            kernel's trace (the normalisation disappears); SMSD-MKL: if every
            tail sum is zero to rounding (the penalty vanishes). Both happen
            when the kernels' rank is at most ``zeta``, e.g. with few
            distinct training points.
        """
        X, y_idx, classes = check_training_data(self, X, y, accept_sparse=False)
        # the fitted attributes are set only once everything has succeeded: a
        # failed refit must not leave a mix of the old model and the new data
        bandwidths = _check_bandwidths(self.bandwidths, X)
        gram = gaussian_kernel_stack(X, bandwidths=bandwidths, dtype=np.float32)
        r, scale, penalty_sums, beta = self._tail_terms(gram, X, bandwidths)
        fit = multiclass_mkl(gram, y_idx, C=self.C, q=self.q, beta=beta,
                             tail_sums=penalty_sums, kernel_scale=scale,
                             max_iter=self.max_iter, tol=self.tol,
                             n_iter_no_change=self.n_iter_no_change,
                             random_state=self.random_state, verbose=int(self.verbose),
                             check_input=False)
        svc = self._final_svc(gram, y_idx, fit.kernel_weights) if self.final == "svc" else None
        del gram
        self.classes_ = classes
        self.bandwidths_ = bandwidths
        self.final_svc_ = svc
        self.final_support_vectors_ = None if svc is None else X[svc.support_].astype(
            np.float64)
        support = fit.support
        self.support_ = support
        self.support_vectors_ = X[support].astype(np.float64)
        self.dual_coef_ = fit.dual_coef[support]
        self.kernel_coef_ = fit.unscaled_kernel_coef
        self.kernel_weights_ = fit.kernel_weights
        self.tail_sums_ = r
        self.n_iter_ = fit.n_iter
        self.objective_ = fit.objective
        self.train_error_ = fit.train_error
        self.q_ = float(np.log(classes.shape[0]) * 2.0 if self.q is None else self.q)
        return self

    def _final_svc(self, gram, y_idx, weights):
        """The exact SVM on the learnt combined kernel, ``SVC(kernel="precomputed", C=C)``.

        None, with a warning, when every kernel weight is zero.
        """
        if not weights.any():
            warnings.warn(
                f"{type(self).__name__}: the learnt kernel weights are all zero, so there is "
                "no combined kernel for final='svc'; the (zero) last iterate is kept",
                UserWarning, stacklevel=3)
            return None
        svc = SVC(kernel="precomputed", C=self.C, decision_function_shape="ovr")
        return svc.fit(_combined_gram(gram, weights), y_idx)

    def _final_scores(self, X):
        """Scores of the final SVC: the combined kernel against its support vectors only."""
        svc, n_train = self.final_svc_, self.final_svc_.shape_fit_[0]
        active = np.flatnonzero(self.kernel_weights_)
        gram = gaussian_kernel_stack(X, self.final_support_vectors_,
                                     bandwidths=self.bandwidths_[active])
        K = np.zeros((X.shape[0], n_train))  # SVC reads the support columns only
        K[:, svc.support_] = _combined_gram(gram, self.kernel_weights_[active])
        scores = np.zeros((X.shape[0], self.classes_.shape[0]))
        decision = svc.decision_function(K)
        if decision.ndim == 1:  # two classes: the score of class 1
            scores[:, 1] = decision
        else:
            scores[:, svc.classes_] = decision
        return scores

    def _scores(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=(np.float64, np.float32))
        if getattr(self, "final_svc_", None) is not None:
            return self._final_scores(X)
        scores = np.zeros((X.shape[0], self.classes_.shape[0]))
        active = np.flatnonzero(self.kernel_coef_)
        if active.size == 0 or self.support_.size == 0:
            return scores
        gram = gaussian_kernel_stack(X, self.support_vectors_,
                                     bandwidths=self.bandwidths_[active])
        for k, m in enumerate(active):
            scores += self.kernel_coef_[m] * (gram[k] @ self.dual_coef_)
        return scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        return tags


_PARAMS_DOC = """
    C : float, default=1.0
        Inverse regularisation: ``lambda = 1 / (C n_samples)`` for the
        squared mixed norm. The paper's ``alpha`` grid ``2^-2 .. 2^12`` is a
        grid of ``C`` (see :func:`mcsparse.solvers.multiclass_mkl`).
    bandwidths : array-like of shape (n_kernels,), "scale", "paper" or None, \
default="scale"
        ``tau_m`` of the Gaussian base kernels ``exp(-||x - x'||^2 / (2
        tau_m))``. ``"scale"``: the 9 widths ``2^-4 .. 2^4`` times
        scikit-learn's ``gamma="scale"`` width on the training samples
        (:func:`mcsparse.kernels.scale_bandwidths`), a bank that follows the
        features' scale (the user guide's comparison with a tuned SVC).
        ``"paper"`` (or None): the paper's ``2^-10 .. 2^10`` (21 kernels,
        Section 6, for features of unit scale), Table 1's protocol.
    q : float, default=None
        Dual exponent ``q > 1`` of the ``l_{2,p}`` norm, ``p = q / (q - 1)``;
        None means ``2 log K`` with ``K`` the number of classes.
    max_iter : int, default=100
        Largest number of epochs of stochastic mirror descent.
    tol : float or None, default=1e-3
        Stop when the objective has not improved by the relative ``tol`` for
        ``n_iter_no_change`` epochs; None runs ``max_iter`` epochs.
    n_iter_no_change : int, default=10
        Epochs without improvement before stopping.
    random_state : int, RandomState instance or None, default=None
        Order in which samples are visited.
    verbose : int, default=0
        One line per epoch when positive.
    final : {"last_iterate", "svc"}, default="{final}"
        The predictor. ``"last_iterate"``: the mirror descent's last
        iterate (the paper's protocol). ``"svc"``: the kernel weights are
        kept and the SVM is solved exactly on the learnt combined kernel
        ``sum_m kernel_weights_[m] K_m`` by :class:`sklearn.svm.SVC`
        (``kernel="precomputed"``, the same ``C``, one-vs-one); choose
        ``C`` with the final step in the cross-validation.
        {final_why}"""

_ZETA_DOC = """
    zeta : int, default=4
        Number of leading eigenvalues left out of the tail sum, ``0 <= zeta <
        n_samples`` (paper grid ``2, 4, 8, 16``)."""

_MEMORY_DOC = """
    memory : "in_process", None, str or object with the joblib.Memory interface, \
default="in_process"
        Where the tail sums (the eigenvalues, the costly part of a fit) are
        cached, keyed by the training samples, the bank and ``zeta``.
        ``"in_process"``: the last 32 of this process (a search over ``C``,
        ``q``, ``beta`` or ``final`` computes them once per fold;
        :func:`mcsparse.kernels.forget_tail_sums` forgets them; each worker
        process of a parallel search keeps its own). None: no caching. Any
        other string is the path of a joblib cache directory, shared by
        processes and kept across sessions; or a ``joblib.Memory``, as
        scikit-learn's ``Pipeline`` takes it."""

_LYL2018_REF = """
    .. [LYL2018] J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding, W. Wang,
       "Multi-Class Learning: From
       Theory to Algorithm", NeurIPS 2018."""

_ATTRS_DOC = """
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    bandwidths_ : ndarray of shape (n_kernels,)
        The base kernels' ``tau_m``.
    kernel_weights_ : ndarray of shape (n_kernels,)
        Weights of the (unnormalised) base kernels in the learnt combination,
        non-negative, summing to one (all zero if the learnt model is zero,
        e.g. when a large ``beta`` switches every kernel off).
    kernel_coef_ : ndarray of shape (n_kernels,)
        Unnormalised weights: ``f_k(x) = sum_m kernel_coef_[m] sum_j
        dual_coef_[j, k] K_m(support_vectors_[j], x)``.
    support_ : ndarray of shape (n_support,)
        Indices of the training samples with a non-zero dual coefficient.
    support_vectors_ : ndarray of shape (n_support, n_features)
        Those samples.
    dual_coef_ : ndarray of shape (n_support, n_classes)
        Their dual coefficients (counts of hinge steps, ``+1`` for the true
        class and ``-1`` for the most violating one).
    tail_sums_ : ndarray of shape (n_kernels,) or None
        ``r_m = sum_{j > zeta} lambda_j(K_m)`` of the training Gram matrices
        (None for UFO-MKL).
    q_ : float
        The dual exponent used.
    n_iter_ : int
        Epochs run.
    objective_ : ndarray of shape (n_epochs,)
        Objective after each of the ``n_epochs = n_iter_`` epochs
        (:func:`mcsparse.solvers.multiclass_mkl`).
    train_error_ : ndarray of shape (n_epochs,)
        Training error rate after each epoch (of the last iterate).
    final_svc_ : sklearn.svm.SVC or None
        With ``final="svc"``, the SVM on the combined kernel, which makes
        the predictions (None otherwise, or when every kernel weight is
        zero). ``support_``, ``dual_coef_`` and ``kernel_coef_`` stay those
        of the mirror descent.
    final_support_vectors_ : ndarray of shape (n_svc_support, n_features) or None
        With ``final="svc"``, the final SVM's support vectors.
    n_features_in_ : int
        Number of features seen in fit."""


#: Why each estimator's ``final`` default is what it is (the MKL-vs-SVC record).
_FINAL_WHY = {
    "last_iterate": """The default here: over the ten data sets of the
        comparison with a tuned SVC (user guide, MKL), the exact SVM on
        UFO-MKL's kernel was 0.26 points less accurate than its last
        iterate on average.""",
    "svc": """The default here: over the ten data sets of the comparison
        with a tuned SVC (user guide, MKL), the exact SVM on the learnt
        kernel was the more accurate on average (Conv-MKL +0.06 points,
        +1.27 on letter; SMSD-MKL +0.38).""",
}


def _params_doc(final):
    return _PARAMS_DOC.replace("{final}", final).replace("{final_why}", _FINAL_WHY[final])


class UFOMKLClassifier(_BaseMKLClassifier):
    __doc__ = f"""UFO-MKL: multi-class hinge loss with the squared ``l_{{2,p}}`` mixed norm.

    Stochastic mirror descent (regularised dual averaging) on Gaussian base
    kernels without any tail-sum term: the base solver of Conv-MKL and
    SMSD-MKL [OL2011]_.

    Parameters
    ----------{_params_doc("last_iterate")}

    Attributes
    ----------{_ATTRS_DOC}

    See Also
    --------
    ConvMKLClassifier : UFO-MKL on base kernels normalised by their tail sums.
    SMSDMKLClassifier : UFO-MKL plus a tail-sum penalty on each kernel.
    mcsparse.solvers.multiclass_mkl : The solver, on a precomputed Gram stack.

    References
    ----------
    .. [OL2011] F. Orabona, J. Luo, "Ultra-Fast Optimization Algorithm for
       Sparse Multi Kernel Learning", ICML 2011.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mcsparse import UFOMKLClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = UFOMKLClassifier(C=10, random_state=0).fit(X, y)
    >>> clf.kernel_weights_.shape
    (9,)
    """



class ConvMKLClassifier(_BaseMKLClassifier):
    __doc__ = f"""Conv-MKL: UFO-MKL on base kernels normalised by their tail sums.

    [LYL2018]_, Algorithm 1: each Gaussian base kernel ``K_m`` is divided by
    its tail sum ``r_m = sum_{{j > zeta}} lambda_j(K_m)`` (computed on the
    training Gram), then the ``l_p``-norm MKL solver runs on ``K_m / r_m``.

    Parameters
    ----------{_ZETA_DOC}
    tail_sum_floor : float, default=1e-2
        Tail sums are raised to at least ``tail_sum_floor * trace(K_m)``
        (:func:`mcsparse.kernels.conv_kernel_scale`).
    tail_sum_guard : {{"spectral", "floor"}}, default="spectral"
        ``"spectral"``: tail sums are also raised to at least the kernel's
        largest eigenvalue, so that normalising never amplifies a kernel's
        leading (smoothest) directions beyond unit scale; a near-constant
        wide kernel then keeps its scale instead of taking the weight.
        ``"floor"``: the trace floor only, Algorithm 1 as the paper states
        it (with the floor).{_MEMORY_DOC}{_params_doc("svc")}

    Attributes
    ----------{_ATTRS_DOC}

    See Also
    --------
    UFOMKLClassifier : The same solver on the unnormalised base kernels.
    SMSDMKLClassifier : UFO-MKL plus a tail-sum penalty on each kernel.

    References
    ----------{_LYL2018_REF}

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mcsparse import ConvMKLClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = ConvMKLClassifier(C=100, random_state=0).fit(X, y)
    >>> clf.tail_sums_.shape
    (9,)
    """

    _parameter_constraints: dict = {
        **_BaseMKLClassifier._parameter_constraints, **_TAIL_SUM_CONSTRAINTS,
        "tail_sum_floor": [FiniteInterval(Real, 0, 1, closed="right")],
        "tail_sum_guard": [StrChoices(["spectral", "floor"])],
    }

    def __init__(self, *, zeta=4, tail_sum_floor=1e-2, tail_sum_guard="spectral",
                 memory=IN_PROCESS, C=1.0, bandwidths="scale", q=None, max_iter=100,
                 tol=1e-3, n_iter_no_change=10, random_state=None, verbose=0, final="svc"):
        self.zeta, self.memory = zeta, memory
        self.tail_sum_floor, self.tail_sum_guard = tail_sum_floor, tail_sum_guard
        super().__init__(C=C, bandwidths=bandwidths, q=q, max_iter=max_iter, tol=tol,
                         n_iter_no_change=n_iter_no_change, random_state=random_state,
                         verbose=verbose, final=final)

    def _tail_terms(self, gram, X, bandwidths):
        zeta = _check_zeta(self.zeta, gram.shape[1])
        traces = _traces(gram)
        if self.tail_sum_guard == "spectral":
            # lambda_1 from the same eigenvalues as the tail sum (max(zeta, 1) of them)
            r1, r = _remembered_tail_sums(gram, [1, zeta], X, bandwidths, self.memory)
            largest = traces - r1
        else:
            r = _remembered_tail_sums(gram, [zeta], X, bandwidths, self.memory)[0]
            largest = None
        scale = conv_kernel_scale(r, traces, self.tail_sum_floor,
                                  largest_eigenvalues=largest)
        _warn_vanishing_tail_sums(
            self, r, traces, self.tail_sum_floor,
            "all are raised to the floor tail_sum_floor x trace(K_m), so Conv-MKL's "
            "normalisation disappears (every Gaussian kernel is divided by the same "
            "number: UFO-MKL with C rescaled)")
        return r, scale, None, 0.0


class SMSDMKLClassifier(_BaseMKLClassifier):
    __doc__ = f"""SMSD-MKL: stochastic mirror and sub-gradient descent with a tail-sum penalty.

    [LYL2018]_, Algorithm 2 with the link function of Theorem 3: UFO-MKL
    plus the local-Rademacher penalty ``beta sum_m r_m ||w_m||``, which
    switches off kernels whose dual norm ``||theta_m||`` stays below ``t
    beta r_m``. The choices the paper leaves open are listed in
    :func:`mcsparse.solvers.multiclass_mkl`. One more: the penalty uses the
    tail sums of the *normalised* Gram matrices ``K_m / n_samples`` (the
    eigenvalues of the empirical kernel operator, as in local Rademacher
    bounds), that is ``tail_sums_ / n_samples``. With the tail sums of
    ``K_m`` itself, which grow like ``n_samples`` for narrow kernels, every
    ``beta`` of the paper's grid switches the narrow kernels off once
    ``n_samples`` is in the thousands (measured on satimage).

    Parameters
    ----------{_ZETA_DOC}
    beta : float, default=1e-3
        Weight ``>= 0`` of the penalty (paper grid ``10^-4 ..
        10``).{_MEMORY_DOC}{_params_doc("svc")}

    Attributes
    ----------{_ATTRS_DOC}

    See Also
    --------
    UFOMKLClassifier : The same solver without the tail-sum penalty.
    ConvMKLClassifier : UFO-MKL on base kernels normalised by their tail sums.

    References
    ----------{_LYL2018_REF}

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from mcsparse import SMSDMKLClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = SMSDMKLClassifier(C=10, beta=1e-3, random_state=0).fit(X, y)
    >>> clf.kernel_weights_.sum().round(6)
    np.float64(1.0)
    """

    _parameter_constraints: dict = {
        **_BaseMKLClassifier._parameter_constraints, **_TAIL_SUM_CONSTRAINTS,
        "beta": [FiniteInterval(Real, 0, None, closed="left")],
    }

    def __init__(self, *, zeta=4, beta=1e-3, memory=IN_PROCESS, C=1.0, bandwidths="scale",
                 q=None, max_iter=100, tol=1e-3, n_iter_no_change=10, random_state=None,
                 verbose=0, final="svc"):
        self.zeta, self.beta, self.memory = zeta, beta, memory
        super().__init__(C=C, bandwidths=bandwidths, q=q, max_iter=max_iter, tol=tol,
                         n_iter_no_change=n_iter_no_change, random_state=random_state,
                         verbose=verbose, final=final)

    def _tail_terms(self, gram, X, bandwidths):
        zeta = _check_zeta(self.zeta, gram.shape[1])
        r = _remembered_tail_sums(gram, [zeta], X, bandwidths, self.memory)[0]
        _warn_vanishing_tail_sums(
            self, r, _traces(gram), 1e-10,
            "they are zero to rounding, so the penalty beta sum_m r_m ||w_m|| vanishes "
            "and SMSD-MKL is UFO-MKL")
        # the penalty uses the tail sums of K_m / n (see the class notes)
        return r, None, r / gram.shape[1], self.beta
