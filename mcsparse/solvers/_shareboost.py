"""ShareBoost: forward greedy selection of shared columns, fully corrective refit.

The algorithm of [SWS2011] (restated in ``shared/papers/NOTES.md``): start
from ``W = 0``, ``I = {}``; each round compute ``G = grad L(W)``, add the
column ``r = argmax_j ||G[:, j]||_1`` to ``I`` and minimise ``L`` over all
``W`` supported on ``I`` (the fully corrective step), warm-started from the
previous ``W`` plus a zero column.
"""

import time
import warnings
from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from ..features._base import RawFeatures
from ..loss._multiclass_logistic_fast import loss_gradient as _loss_gradient
from ..utils.validation import check_solver_data
from ._design import SelectedColumns
from ._selection import (
    FULL_MAX_WORK,
    PENALTIES,
    SELECTION_RULES,
    penalty_value_grad,
    select_full,
    select_one_column,
)


@dataclass(frozen=True)
class ShareBoostRound:
    """State after one ShareBoost round, passed to ``callback``.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    round : int
        Round number, starting at 1 (= number of selected features).
    feature : int
        Candidate selected in this round (a column of ``X`` for raw features).
    selected_features : ndarray of shape (round,)
        All selected columns, in selection order.
    coef : ndarray of shape (n_classes, n_columns)
        The refitted ``W`` restricted to the columns of
        ``selected_features`` (read only): ``n_columns = round`` for
        single-column candidates, the sum of the groups' widths for groups.
    intercept : ndarray of shape (n_classes,)
        The refitted intercept (zeros when ``fit_intercept=False``).
    train_loss : float
        Objective (mean loss plus penalty) after the refit.
    selection_score : float
        The selection rule's score of ``feature``: ``||G[:, feature]||_1``
        (the l1 norm of its gradient column) for ``"gradient_l1"``; for the
        other rules the objective value its one-column update, line search
        or refit reached (lower is better).
    refit_n_iter : int
        L-BFGS iterations of this round's refit.
    elapsed : float
        Seconds since the start of the fit.
    """

    round: int
    feature: int
    selected_features: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    train_loss: float
    selection_score: float
    refit_n_iter: int
    elapsed: float


@dataclass
class ShareBoostPath:
    """Result of :func:`shareboost_path`: the whole path, one entry per round.

    Built by the solver, not by users: each parameter is a dataclass field,
    read as the attribute of the same name.

    Parameters
    ----------
    selected_features : ndarray of shape (n_rounds,), dtype intp
        Selected candidates in selection order (columns of ``X`` for raw
        features).
    coefs : list of ndarray
        ``coefs[t - 1]`` is ``W`` after round ``t``, of shape
        (n_classes, column_ptr[t]), on the columns of the first ``t``
        selected candidates (``t`` columns when every candidate is a single
        column).
    intercepts : list of ndarray
        ``intercepts[t - 1]`` of shape (n_classes,).
    train_loss : ndarray of shape (n_rounds,)
        Training objective after each refit.
    selection_scores : ndarray of shape (n_rounds,)
        The selection rule's score of each selected column when it was
        selected (``ShareBoostRound.selection_score``).
    refit_n_iter : ndarray of shape (n_rounds,), dtype intp
        L-BFGS iterations of each refit.
    n_refits_not_converged : int
        Refits that hit ``max_iter`` or failed in the line search.
    column_ptr : ndarray of shape (n_rounds + 1,), dtype intp, default=None
        Round ``t`` added the columns ``column_ptr[t - 1]:column_ptr[t]`` of
        ``W``: one per round for single-column candidates (None, the
        default, becomes ``arange(n_rounds + 1)``), the group's width for
        groups (§3.2).
    """

    selected_features: np.ndarray
    coefs: list
    intercepts: list
    train_loss: np.ndarray
    selection_scores: np.ndarray
    refit_n_iter: np.ndarray
    n_refits_not_converged: int
    column_ptr: np.ndarray = None

    def __post_init__(self):
        if self.column_ptr is None:
            self.column_ptr = np.arange(len(self.selected_features) + 1, dtype=np.intp)


class _Objective:
    """The ShareBoost refit objective restricted to the selected columns.

    ``L(W, b) = sum_i w_i l(W x_i + b, y_i) / sum_i w_i + P(W)``, with ``W``
    of shape (n_classes, p) acting on the first ``p`` selected columns
    (``X_sel``: a 2-D array, or a :class:`SelectedColumns` store) and ``P``
    the penalty: ``alpha ||W||_F^2`` (``"fro"``) or the smoothed
    ``||W||_{inf,1}`` (``"linf1_smooth"``, see
    :mod:`mcsparse.solvers._selection`). Parameters are packed as
    ``[W.ravel(), b]``; calls take ``(params, p)``.
    """

    def __init__(self, X_sel, y, sample_weight, n_classes, alpha, fit_intercept,
                 margin=1.0, penalty="fro", beta=10.0):
        if not isinstance(X_sel, SelectedColumns):
            X_sel = SelectedColumns.from_dense(X_sel)
        self.X_sel = X_sel
        self.penalty = penalty
        self.beta = beta
        self.margin = margin
        self.y = y
        self.sample_weight = sample_weight
        self.k = n_classes
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        n_samples = X_sel.n_samples
        self.total = n_samples if sample_weight is None else sample_weight.sum()
        self.scores = np.empty((n_samples, n_classes))
        self.residual = np.empty((n_samples, n_classes))

    def unpack(self, params, p):
        W = params[: self.k * p].reshape(self.k, p)
        b = params[self.k * p :] if self.fit_intercept else np.zeros(self.k)
        return W, b

    def __call__(self, params, p):
        W, b = self.unpack(params, p)
        self.X_sel.scores(W, self.scores)
        self.scores += b
        # residual = w_i (p_i - e_{y_i}), the unnormalised gradient w.r.t. the scores
        loss = _loss_gradient(self.scores, self.y, self.sample_weight, self.residual,
                              self.margin)
        loss /= self.total
        grad_W = self.X_sel.gradient(self.residual, p)
        grad_W /= self.total
        if self.alpha > 0:
            if self.penalty == "fro":
                loss += self.alpha * np.dot(W.ravel(), W.ravel())
                grad_W += 2.0 * self.alpha * W
            else:
                value, grad = penalty_value_grad(W, self.alpha, self.penalty, self.beta)
                loss += value
                grad_W += grad
        parts = [grad_W.ravel()]
        if self.fit_intercept:
            parts.append(self.residual.sum(axis=0) / self.total)
        return loss, np.concatenate(parts)


def _checked_candidate(features, j, score, selected):
    """The id ``best_candidate`` returned, checked against the protocol."""
    name = type(features).__name__
    if isinstance(j, (bool, np.bool_)) or not isinstance(j, (int, np.integer)):
        raise TypeError(f"{name}.best_candidate must return an int id, got {j!r}")
    j = int(j)
    if not 0 <= j < features.n_candidates_:
        raise ValueError(
            f"{name}.best_candidate returned id {j}, outside "
            f"[0, n_candidates_={features.n_candidates_})"
        )
    if j in selected:
        raise ValueError(
            f"{name}.best_candidate returned id {j}, which is already selected "
            "(it is in excluded)"
        )
    score = float(score)
    if not np.isfinite(score):
        raise ValueError(f"{name}.best_candidate returned a non-finite score {score}")
    return j, score


def _training_block(features, j, n_samples, width):
    """Candidate ``j`` on the training data, checked: finite, (n_samples, width)."""
    block = np.asarray(features.training_columns([j]), dtype=np.float64)
    if block.shape != (n_samples, width):
        raise ValueError(
            f"{type(features).__name__}.training_columns([{j}]) has shape "
            f"{block.shape}, expected ({n_samples}, {width})"
        )
    if not np.all(np.isfinite(block)):
        raise ValueError(
            f"{type(features).__name__}.training_columns([{j}]) contains NaN "
            "or infinity"
        )
    return block


def candidate_widths(features):
    """Columns of each candidate of a fitted family: ``candidate_widths_`` or all 1.

    A family whose candidates are groups of columns (§3.2) sets
    ``candidate_widths_``, an int array of shape (n_candidates,) with
    entries >= 1; returns None for a family of single columns.
    """
    widths = getattr(features, "candidate_widths_", None)
    if widths is None:
        return None
    name = type(features).__name__
    widths = np.asarray(widths)
    if (widths.shape != (features.n_candidates_,)
            or not np.issubdtype(widths.dtype, np.integer)
            or (widths.size and widths.min() < 1)):
        raise TypeError(
            f"{name}.candidate_widths_ must be an int array of shape "
            f"(n_candidates_,) = ({features.n_candidates_},) with entries >= 1"
        )
    return widths.astype(np.intp)


def _read_only(array):
    array.flags.writeable = False
    return array


def shareboost_path(
    X,
    y,
    *,
    n_classes,
    n_rounds,
    features=None,
    alpha=0.0,
    fit_intercept=True,
    margin=1.0,
    sample_weight=None,
    tol=1e-4,
    max_iter=200,
    callback=None,
    verbose=0,
    selection="gradient_l1",
    penalty="fro",
    beta=10.0,
    init_path=None,
):
    """Run ShareBoost for ``n_rounds`` rounds.

    The low-level solver behind :class:`mcsparse.ShareBoostClassifier`: the
    algorithm of [SWS2011]_ (NOTES.md, "Algorithm (ShareBoost)"). Round 0
    fits the intercept alone (when ``fit_intercept``); every round then adds
    the unselected column chosen by ``selection`` (by default the largest
    ``||G[:, j]||_1``) and refits all selected columns by L-BFGS,
    warm-started from the previous round.

    A family whose candidates are groups of columns (``candidate_widths_``,
    e.g. anchor points, §4.2) is selected from by the group rule of §3.2:
    each round adds the group with the largest ``sum_{j in J} ||G[:, j]||_1``
    (computed by the family) and all of its columns.

    Parameters
    ----------
    X : ndarray or CSC matrix of shape (n_samples, n_features)
        Finite training data, float32 or float64 (checked). Only used to
        fit the default ``features``.
    y : ndarray of shape (n_samples,), dtype intp
        Class indices in ``[0, n_classes)``.
    n_classes : int
        Number of classes ``k`` (rows of ``W``).
    n_rounds : int
        Number of rounds, at most the number of candidates.
    features : CandidateFeatures, default=None
        A candidate family already fitted on ``X``
        (:class:`mcsparse.features.CandidateFeatures`); None uses the columns
        of ``X`` (:class:`mcsparse.features.RawFeatures`). The path leaves
        its scan running: call ``features.end_scan(selected)`` when done.
    alpha : float, default=0.0
        Strength of the penalty (§3.3): ``alpha * ||W||_F^2`` for
        ``penalty="fro"``.
    fit_intercept : bool, default=True
        Fit an unpenalised intercept vector.
    margin : float, default=1.0
        Margin of the loss: 1 is eq. (3); 0 the plain soft-max loss (for two
        classes, the binary logistic loss used by the one-vs-rest baseline).
    sample_weight : ndarray of shape (n_samples,), dtype float64, default=None
        Non-negative weights with a positive sum.
    tol : float, default=1e-4
        Relative tolerance of each refit: L-BFGS stops when the largest
        absolute entry of the gradient is below ``tol`` times the objective
        at the refit's warm start.
    max_iter : int, default=200
        L-BFGS iteration cap of each refit.
    callback : callable, default=None
        Called with a :class:`ShareBoostRound` after every round; a True
        return value stops the path.
    verbose : int, default=0
        Print one line per round when positive.
    selection : {"gradient_l1", "best_column", "line_search", "full"}, \
            default="gradient_l1"
        Selection rule (§3.1, :mod:`mcsparse.solvers._selection`): the
        largest ``||G[:, j]||_1``; the best one-column update, eq. (6); the
        line search along the gradient column, eq. (7); or the fully
        corrective refit of every candidate. The last three evaluate every
        unselected candidate on the objective the refit minimises (penalty
        included); "full" refuses problems with ``n_candidates * n_samples *
        n_classes * n_rounds`` above ``FULL_MAX_WORK`` (1e9). Groups of
        columns (§3.2) are only selected by "gradient_l1".
    penalty : {"fro", "linf1_smooth"}, default="fro"
        ``alpha * ||W||_F^2``, or the smoothed ``||W||_{inf,1}``:
        ``(alpha / beta) sum_j [log sum_i (exp(beta W_ij) + exp(-beta W_ij))
        - log(2 n_classes)]`` (§3.3; the constant makes it zero at ``W = 0``).
    beta : float, default=10.0
        Smoothing of ``"linf1_smooth"``, at least 1.
    init_path : ShareBoostPath, default=None
        Continue this path (from an earlier call on the same data, family
        and parameters) instead of starting from ``W = 0``: its selected
        features, last ``W`` and intercept are the starting state, and the
        returned path extends its lists up to ``n_rounds`` rounds in all.

    Returns
    -------
    path : ShareBoostPath
        Selected features, per-round ``W`` and intercepts, training
        objective, selection scores and L-BFGS iterations.

    Raises
    ------
    ValueError
        If ``selection`` or ``penalty`` is unknown; if ``init_path`` is
        longer than ``n_rounds``; if "full" is asked on too large a
        problem, or a rule other than "gradient_l1" on groups of columns;
        if ``X`` has NaN or infinity, ``y`` is not of length ``n_samples``
        or holds an index outside ``[0, n_classes)``, ``n_classes < 2``, or
        ``sample_weight`` is invalid.
    TypeError
        If the family breaks the candidate protocol (ids, scores,
        ``candidate_widths_``), or ``y`` does not hold integers.

    Warns
    -----
    ConvergenceWarning
        If some refits hit ``max_iter`` (typical at ``alpha=0`` once the
        selected features separate the classes: the loss has no minimiser),
        or stopped in a failed line search with the gradient above the
        tolerance (badly scaled features).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011.
    """
    start = time.perf_counter()
    if selection not in SELECTION_RULES:
        raise ValueError(f"selection must be one of {SELECTION_RULES}, got {selection!r}")
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    if penalty == "linf1_smooth" and not beta >= 1:
        raise ValueError(f"beta must be >= 1, got {beta}")
    X, y, sample_weight = check_solver_data(X, y, n_classes, sample_weight,
                                            accept_sparse="csc")
    n_samples = X.shape[0]
    k = n_classes
    if features is None:
        features = RawFeatures().fit(X)
    t0 = 0 if init_path is None else len(init_path.selected_features)
    if t0 > n_rounds:
        raise ValueError(
            f"init_path has {t0} rounds, more than n_rounds={n_rounds}"
        )
    if selection == "full":
        work = float(features.n_candidates_) * n_samples * k * (n_rounds - t0)
        if work > FULL_MAX_WORK:
            raise ValueError(
                f'selection="full" refits every candidate every round: '
                f"n_candidates * n_samples * n_classes * n_rounds = {work:.3g} "
                f"exceeds the limit {FULL_MAX_WORK:.0e} (minutes to hours of "
                'refits). Use "best_column" or "line_search", fewer rounds, '
                "or a smaller problem."
            )
    widths = candidate_widths(features)
    if widths is not None and selection != "gradient_l1" and np.any(widths > 1):
        raise ValueError(
            f"{type(features).__name__} has groups of columns as candidates; "
            'group selection (§3.2) is implemented for selection="gradient_l1" '
            f"only, got selection={selection!r}"
        )

    def width(j):
        return 1 if widths is None else int(widths[j])

    # Refit on centred dense columns when there is an intercept: the same
    # model (the intercept absorbs W @ shift) and the same penalty, but about
    # half the L-BFGS iterations on correlated, non-centred columns (stumps).
    # A family that runs on threads (n_jobs) shares its threads with the
    # refit's products over row-sparse groups.
    n_jobs = getattr(features, "n_jobs", None)
    n_threads = effective_n_jobs(n_jobs) if isinstance(n_jobs, (int, np.integer)) else 1
    X_sel = SelectedColumns(n_samples, n_rounds, n_threads=n_threads)
    objective = _Objective(X_sel, y, sample_weight, k, alpha, fit_intercept, margin,
                           penalty, beta)
    options = {
        "maxiter": max_iter,
        "ftol": 64 * np.finfo(float).eps,
        "maxls": 50,
        # 30 correction pairs instead of SciPy's 10: a quarter fewer
        # iterations per refit on MNIST pixels (15k samples, 40 rounds)
        "maxcor": 30,
    }

    def refit(params, t, start_loss):
        """L-BFGS on the selected columns; returns (params, nit, status).

        The tolerance is relative to the objective at the warm start: the
        gradient's scale falls with the loss, so an absolute tolerance would
        leave W unchanged (zero iterations) late on a path whose loss is small.
        """
        gtol = tol * start_loss
        # The refit works on n_samples x t matrices with t small: BLAS threads
        # cost more than they give (measured 4x slower with 2 threads on 2
        # cores, NumPy's and SciPy's OpenBLAS competing), so use one.
        with threadpool_limits(limits=1, user_api="blas"):
            res = minimize(objective, params, args=(t,), method="L-BFGS-B",
                           jac=True, options={**options, "gtol": gtol})
        if res.status == 1:
            status = "max_iter"
        elif res.status != 0 and np.max(np.abs(res.jac), initial=0.0) > gtol:
            # a line-search stop far from a stationary point (status 2 with
            # a large gradient): badly scaled features, typically
            status = "failed"
        else:  # converged, or a line-search stop at the optimum's precision
            status = "ok"
        return res.x, int(res.nit), status

    def put(block, start):
        """Store a candidate's training block as the columns from ``start`` on."""
        X_sel.put(block, start, center=fit_intercept, sample_weight=sample_weight)

    stops = {"ok": 0, "max_iter": 0, "failed": 0}
    if init_path is None:
        # Round 0: W = 0 and, with an intercept, the best intercept-only model.
        params = np.zeros(k if fit_intercept else 0)
        loss, _ = objective(params, 0)
        if fit_intercept:
            params, _, status = refit(params, 0, loss)
            stops[status] += 1
            loss, _ = objective(params, 0)
        selected = []
        coefs, intercepts, losses, sel_scores, n_iters = [], [], [], [], []
        column_ptr = [0]
    else:
        # Continue a path: rebuild X_sel and the solver's (centred) intercept.
        selected = [int(j) for j in init_path.selected_features]
        column_ptr = [int(p) for p in init_path.column_ptr]
        for t, j in enumerate(selected):
            put(_training_block(features, j, n_samples, width(j)), column_ptr[t])
        coefs = list(init_path.coefs)
        intercepts = list(init_path.intercepts)
        losses = list(init_path.train_loss)
        sel_scores = list(init_path.selection_scores)
        n_iters = list(init_path.refit_n_iter)
        p0 = column_ptr[-1]
        W = np.asarray(coefs[-1], dtype=np.float64) if t0 else np.zeros((k, 0))
        parts = [W.ravel()]
        if fit_intercept:
            b = np.asarray(intercepts[-1], dtype=np.float64) if t0 else np.zeros(k)
            parts.append(b + W @ X_sel.shift[:p0])
        params = np.concatenate(parts)
        loss, _ = objective(params, p0)
    # objective.residual now holds the residuals at the current W

    def warm_start(params, p, n_new):
        """The previous W plus ``n_new`` zero columns, and the intercept."""
        W, b = objective.unpack(params, p)
        W0 = np.hstack([W, np.zeros((k, n_new))])
        return np.concatenate([W0.ravel(), b] if fit_intercept else [W0.ravel()])

    for t in range(t0 + 1, n_rounds + 1):
        excluded = np.sort(np.array(selected, dtype=np.intp))
        p = column_ptr[-1]  # columns selected so far
        refitted = None
        if selection == "gradient_l1":
            j, score = features.best_candidate(objective.residual, excluded)
            j, score = _checked_candidate(features, j, score, selected)
            score /= objective.total
        elif selection == "full":
            def try_candidate(column, p=p, start_loss=loss, params=params):
                put(column[:, None], p)
                result = refit(warm_start(params, p, 1), p + 1, start_loss)
                return objective(result[0], p + 1)[0], result

            j, score, refitted = select_full(features, excluded, try_candidate)
        else:
            W, _ = objective.unpack(params, p)
            penalty_W = 0.0
            if alpha > 0:
                penalty_W = penalty_value_grad(W, alpha, penalty, beta)[0]
            j, score = select_one_column(
                selection, features, excluded, scores=objective.scores,
                residual=objective.residual, y=y, sample_weight=sample_weight,
                total=objective.total, margin=margin, alpha=alpha, penalty=penalty,
                beta=beta, penalty_W=penalty_W,
            )
        selected.append(j)
        put(_training_block(features, j, n_samples, width(j)), p)
        p_new = X_sel.n_columns
        column_ptr.append(p_new)

        if refitted is None:
            params, nit, status = refit(warm_start(params, p, p_new - p), p_new, loss)
        else:  # "full": the chosen candidate's refit, already done
            params, nit, status = refitted
        stops[status] += 1
        loss, _ = objective(params, p_new)  # also refreshes the residual at the new W

        W, b = objective.unpack(params, p_new)
        coefs.append(_read_only(W.copy()))
        intercepts.append(_read_only(b - W @ X_sel.shift[:p_new]))
        losses.append(loss)
        sel_scores.append(score)
        n_iters.append(nit)
        elapsed = time.perf_counter() - start
        if verbose > 0:
            print(
                f"[ShareBoost] round {t}/{n_rounds}: feature {j}, "
                f"score {score:.4g}, train loss {loss:.6g}, "
                f"L-BFGS iterations {nit}, {elapsed:.2f} s",
                flush=True,
            )
        if callback is not None:
            info = ShareBoostRound(
                round=t,
                feature=j,
                selected_features=np.array(selected),
                coef=coefs[-1],
                intercept=intercepts[-1],
                train_loss=loss,
                selection_score=score,
                refit_n_iter=nit,
                elapsed=elapsed,
            )
            if callback(info):
                break

    if stops["max_iter"]:
        warnings.warn(
            f"{stops['max_iter']} of the L-BFGS refits stopped before reaching "
            f"tol={tol} (max_iter={max_iter}). On separable data the unpenalised "
            "loss has no minimiser: consider alpha > 0 or a larger max_iter.",
            ConvergenceWarning,
            stacklevel=3,
        )
    if stops["failed"]:
        warnings.warn(
            f"{stops['failed']} of the L-BFGS refits failed in the line search "
            f"with the gradient still above tol={tol} (relative): the refitted W is not a "
            "minimiser. This happens with badly scaled features (very large "
            "values); rescale X, e.g. to [-1, 1] as the paper assumes.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return ShareBoostPath(
        selected_features=np.array(selected, dtype=np.intp),
        coefs=coefs,
        intercepts=intercepts,
        train_loss=np.array(losses),
        selection_scores=np.array(sel_scores),
        refit_n_iter=np.array(n_iters, dtype=np.intp),
        column_ptr=np.array(column_ptr, dtype=np.intp),
        n_refits_not_converged=stops["max_iter"] + stops["failed"]
        + (0 if init_path is None else init_path.n_refits_not_converged),
    )
