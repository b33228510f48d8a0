"""adelie as the engine of the l1/l2 mixed-norm path (``solver="adelie"``).

The margin soft-max loss of ShareBoost (Shalev-Shwartz, Wexler and Shashua,
NIPS 2011, eq. 3) is the multinomial log-likelihood with the per-sample
offsets ``1[y' != y_i]`` added to the scores, and adelie's multinomial loss
is the weighted mean divided by the number of classes ``k`` (weights
normalised to sum one). So adelie's ``grpnet`` with those offsets, groups of
the ``k`` coefficients of each feature and penalty levels ``lambda / k``
solves eq. (5) with the l1/l2 penalty exactly as
:func:`mcsparse.solvers.mixed_norm_path` states it (adelie: J. Yang and T.
Hastie, "A fast and scalable pathwise-solver for group lasso and elastic net
penalized regression via block-coordinate descent", arXiv:2405.08631, 2024).
adelie works on a diagonal majorisation of the soft-max Hessian and stops by
its own criteria; the path checks its solutions by the KKT conditions of
eq. (5) and reports the violation.
"""

import numpy as np
import scipy.sparse as sp

#: The solvers of the mixed-norm path.
SOLVERS = ("fista", "adelie")


def import_adelie():
    """The adelie module, or an ImportError that says how to install it."""
    try:
        import adelie
    except ImportError as exc:
        raise ImportError(
            "solver='adelie' needs the adelie package: pip install adelie "
            "(or pip install 'mcsparse[compare]'), or use solver='fista'"
        ) from exc
    return adelie


def check_solver(solver, penalty):
    """Refuse an unknown solver, or adelie with the l1/linf penalty."""
    if not isinstance(solver, str) or solver not in SOLVERS:
        raise ValueError(f"solver must be one of {SOLVERS}, got {solver!r}")
    if solver == "adelie" and penalty != "l1/l2":
        raise ValueError(
            f"solver='adelie' solves the l1/l2 penalty only, got penalty={penalty!r}; "
            "use solver='fista' for l1/linf"
        )


def adelie_levels(X, y, *, n_classes, lambdas, mu, sample_weight, fit_intercept, verbose=0):
    """Solve eq. (5) with the l1/l2 penalty at each of ``lambdas`` with adelie.

    Parameters
    ----------
    X : ndarray or sparse matrix of shape (n_samples, n_features)
        Validated float64 training data (sparse input is densified: adelie's
        centred sparse matrices are not used here).
    y : ndarray of shape (n_samples,), dtype intp
        Class indices in ``[0, n_classes)``.
    n_classes : int
        Number of classes ``k``.
    lambdas : ndarray of shape (n_lambdas,)
        Decreasing positive penalty levels, on the scale of
        :func:`mcsparse.solvers.mixed_norm_path`.
    mu : ndarray of shape (n_features,) or None
        The (weighted) column means: adelie is given the centred columns,
        on which its intercept converges faster (measured on satimage
        products), and the intercepts returned are those of the centred
        columns, as the FISTA solver's. None without intercept.
    sample_weight : ndarray of shape (n_samples,) or None
        Non-negative weights with a positive sum.
    fit_intercept : bool
        Fit an unpenalised intercept.
    verbose : int, default=0
        Show adelie's progress bar when positive.

    Returns
    -------
    levels : list of (ndarray, ndarray)
        ``(W, b)`` per level, ``W`` of shape (n_classes, n_features) and
        ``b`` of shape (n_classes,) (zeros without intercept).

    Raises
    ------
    ImportError
        If adelie is not installed.
    RuntimeError
        If adelie returns fewer solutions than levels (it stopped short), with
        its own message.
    """
    ad = import_adelie()
    k = int(n_classes)
    Xd = X.toarray() if sp.issparse(X) else X
    Xd = np.asfortranarray(Xd - mu if mu is not None else Xd, dtype=np.float64)
    n_samples, n_features = Xd.shape
    Y = np.zeros((n_samples, k))
    Y[np.arange(n_samples), y] = 1.0
    weights = None if sample_weight is None else sample_weight / sample_weight.sum()
    state = ad.grpnet(
        X=Xd, glm=ad.glm.multinomial(Y, weights=weights), offsets=1.0 - Y,
        penalty=np.ones(n_features), lmda_path=np.asarray(lambdas, np.float64) / k,
        early_exit=False, intercept=bool(fit_intercept), progress_bar=verbose > 0,
    )
    n_solved = state.betas.shape[0]
    if n_solved < len(lambdas):
        raise RuntimeError(
            f"adelie solved {n_solved} of {len(lambdas)} penalty levels and stopped: "
            f"{state.error or 'no message'}; use solver='fista'"
        )
    # the path centres the intercepts (the loss is invariant to a common shift)
    return [(state.betas[t].toarray().reshape(n_features, k).T,
             np.array(state.intercepts[t], dtype=np.float64) if fit_intercept else np.zeros(k))
            for t in range(len(lambdas))]
