"""ShareBoost: forward greedy selection of shared columns, fully corrective refit.

The algorithm of [SWS2011]: start
from ``W = 0``, ``I = {}``; each round compute ``G = grad L(W)``, add the
column ``r = argmax_j ||G[:, j]||_1`` to ``I`` and minimise ``L`` over all
``W`` supported on ``I`` (the fully corrective step), warm-started from the
previous ``W`` plus a zero column.
"""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..features._chunk_scan import ModelScan, ScanLabels
from ..features._raw import RawFeatures
from ..loss import MulticlassLogisticLoss, make_penalty
from ..loss._base import Loss
from ..loss._penalties import SMOOTH_PENALTIES
from ..utils.validation import (check_bool, check_int, check_real, check_solver_data,
                                check_solver_targets, check_verbose)
from ._path_state import ShareBoostPath, ShareBoostRound, _PathState, candidate_widths
from ._selection import FULL_MAX_WORK, SELECTION_RULES, select_full, select_one_column


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


#: Most candidate columns :func:`default_alpha` reads (at least one candidate),
#: and the values (columns times samples) it reads at a time.
_SCALE_COLUMNS, _SCALE_BLOCK = 256, 2**16


def default_alpha(features, n_samples, sample_weight=None, *, fit_intercept=True,
                  weight_sum=None):
    """The default penalty ``alpha="auto"``: ``s2 / (2 * weight_sum)``.

    ``s2`` is the mean, over up to 256 candidate columns spread evenly over
    the ids of the fitted family (at least one candidate), of each column's
    (weighted) variance on the training data, or its mean square without an
    intercept; ``weight_sum`` is the sum of the sample weights as the user
    gave them (``n_samples`` without weights). For columns of unit variance
    this is the penalty of scikit-learn's ``LogisticRegression(C=1.0)``
    written for a mean loss, ``1 / (2 n_samples)``. Scaled by the columns'
    variance, the penalty weighs the same against the loss whatever the
    features' scale (rescaled features give the same ``alpha * ||W||^2``
    at the rescaled coefficients). The columns are read a few at a time.

    Parameters
    ----------
    features : CandidateFeatures
        The family, fitted on the training data.
    n_samples : int
        Training samples (the rows of ``features.training_columns``).
    sample_weight : ndarray of shape (n_samples,), default=None
        The weights of the variances (any positive scale).
    fit_intercept : bool, default=True
        Centre the columns (variance) or not (mean square).
    weight_sum : float, default=None
        The sum of the weights as given to ``fit``; None is ``n_samples``.

    Returns
    -------
    alpha : float
        Positive (``s2`` is taken as 1 when every column read is constant).
    """
    n = features.n_candidates_
    widths = candidate_widths(features)
    width = 1.0 if widths is None else float(np.mean(widths))
    m = int(max(1, min(n, _SCALE_COLUMNS / width)))
    ids = np.unique(np.linspace(0, n - 1, m).astype(np.intp)) if n > 0 else np.zeros(0, np.intp)
    step = max(1, int(_SCALE_BLOCK / max(1, n_samples) / width))
    total, count = 0.0, 0
    for lo in range(0, ids.size if n_samples > 0 else 0, step):
        # columns contiguous: the sums over samples do not depend on the family's layout
        C = np.asfortranarray(features.training_columns(ids[lo:lo + step]), dtype=np.float64)
        if fit_intercept:  # not in place: a family may return a view of its data
            C = C - np.average(C, axis=0, weights=sample_weight)
        total += float(np.sum(np.average(C * C, axis=0, weights=sample_weight)))
        count += C.shape[1]
    s2 = total / count if count else 0.0
    weight_sum = n_samples if weight_sum is None else float(weight_sum)
    return (s2 if s2 > 0 else 1.0) / (2.0 * max(weight_sum, np.finfo(float).tiny))


def _select_and_refit(state, selection):
    """One round: choose a candidate by ``selection`` and refit; ``(j, score, result, gain)``.

    A candidate whose training columns equal a selected one's (two anchor
    balls holding the same samples, say) is excluded and the choice made
    again: it would add nothing to the model. None when every remaining
    candidate is such a repeat. ``gain`` is the largest entry of the chosen
    candidate's gradient; when it is at or below the refits' tolerance the
    refit would leave its coefficients at zero, and ``result`` is None: the
    path has converged (a column that is zero on the training rows has a
    zero gradient, so it is never selected).
    """
    duplicates = []
    while True:
        excluded = np.sort(np.array(state.selected + duplicates, dtype=np.intp))
        if duplicates and excluded.size >= state.features.n_candidates_:
            return None  # every remaining candidate repeats a selected one
        j, score, result = _choose(state, selection, excluded)
        if state.duplicate_of(j) is None:
            break
        duplicates.append(j)
    if result is not None:  # "full" refitted it already
        *result, gain = result
        return j, score, (None if gain <= state.gtol else tuple(result)), gain
    params, point, gain = state.grow(j, state.p)
    if gain <= state.gtol:
        return j, score, None, gain
    return j, score, state.refit_grown(params, point, state.p), gain


def _choose(state, selection, excluded):
    """``(j, score, result)`` by ``selection``; ``result`` is None unless already refitted."""
    features, p = state.features, state.p
    if selection == "full":
        def try_candidate(j):
            result = state.add(j, p, state.curvature.copy())
            return result[0].value, result

        j, score, result = select_full(features, excluded, try_candidate)
        if result is None:  # a tie broken towards a lower id than the best seen
            return j, score, state.add(j, p, state.curvature.copy())
        state.put(j, p)  # the store holds the last candidate tried
        return j, score, result
    if selection == "gradient_l1":
        if isinstance(features, ModelScan):  # the residual is made next to the data
            W, b = state.model()
            objective = state.objective
            labels = ScanLabels(objective.y, objective.sample_weight, objective.loss)
            j, score = features.best_candidate_for_model(labels, state.selected, W, b,
                                                         excluded)
        else:
            j, score = features.best_candidate(state.point.residual, excluded)
        j, score = _checked_candidate(features, j, score, set(excluded.tolist()))
        return j, score / state.objective.total, None
    j, score = select_one_column(selection, features, excluded, state.objective, state.point)
    return j, score, None


def _check_path_arguments(selection, penalty, beta, loss, margin):
    if not isinstance(selection, str) or selection not in SELECTION_RULES:
        raise ValueError(f"selection must be one of {SELECTION_RULES}, got {selection!r}")
    if penalty not in SMOOTH_PENALTIES:
        raise ValueError(f"penalty must be one of {SMOOTH_PENALTIES}, got {penalty!r}")
    if penalty == "linf1_smooth" and not beta >= 1:
        raise ValueError(f"beta must be >= 1, got {beta}")
    if loss is not None and margin != 1.0:
        raise ValueError("give the margin to the loss object, not to shareboost_path, "
                         "when loss is set")
    if loss is not None and not isinstance(loss, Loss):
        raise TypeError("loss must be a loss of mcsparse.loss (MulticlassLogisticLoss, "
                        f"BinaryLogisticLoss, SoftmaxLoss, ...), got {loss!r}")


def _check_path_numbers(n_rounds, alpha, beta, tol, max_iter, fit_intercept, verbose,
                        callback):
    """The numeric and flag arguments of :func:`shareboost_path`, as the estimators check them."""
    check_int(n_rounds, "n_rounds", low=0)
    check_real(alpha, "alpha", low=0.0)
    check_real(beta, "beta")
    check_real(tol, "tol", low=0.0, high=1.0, include_low=False, include_high=False)
    check_int(max_iter, "max_iter", low=1)
    check_bool(fit_intercept, "fit_intercept")
    check_verbose(verbose)
    if callback is not None and not callable(callback):
        raise TypeError(f"callback must be callable or None, got {callback!r}")


def _check_rule_fits(selection, features, n_samples, k, n_rounds):
    """Refuse "full" on too large a problem, and rules other than the paper's on groups."""
    if selection == "full":
        work = float(features.n_candidates_) * n_samples * k * n_rounds
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


def _warn_stops(stops, tol, max_iter, farthest_cap=None):
    if stops["max_iter"]:
        farthest = ""
        if farthest_cap is not None:
            t, g, gtol = farthest_cap
            farthest = (f" The farthest, round {t}, ended with its largest gradient entry "
                        f"{g:.3g}, {g / gtol:.3g} times the tolerance (tol times the "
                        f"objective, {gtol:.3g}).")
        warnings.warn(
            f"{stops['max_iter']} of the refits stopped before reaching "
            f"tol={tol} (max_iter={max_iter}).{farthest} On separable data the "
            "unpenalised loss has no minimiser: consider alpha > 0 or a larger max_iter.",
            ConvergenceWarning,
            stacklevel=3,
        )
    if stops["failed"]:
        warnings.warn(
            f"{stops['failed']} of the refits failed in the line search with the "
            f"gradient still above tol={tol} (relative): the objective cannot "
            "decrease further at float64 precision, so the refitted W is not a "
            "minimiser to that tolerance. Either tol is below what float64 reaches "
            "on these data, or the features are badly scaled (very large values; "
            "rescale X, e.g. to [-1, 1] as the paper assumes), or, with alpha=0, the "
            "selected features separate the classes and the loss has no minimiser "
            "(consider alpha > 0).",
            ConvergenceWarning,
            stacklevel=3,
        )


def _warn_converged(n_done, n_rounds, j, gain, gtol, tol):
    """Say that the path stopped: the next candidate would stay at zero."""
    warnings.warn(
        f"ShareBoost stopped after {n_done} of {n_rounds} rounds: the candidate the "
        f"selection rule picks next (id {j}) has a gradient of at most {gain:.3g} in "
        f"absolute value, at or below the refit tolerance {gtol:.3g} (tol={tol} times "
        "the objective), so the refit would leave it at zero: the path has converged "
        "at this tolerance (a candidate that is zero on every training sample has a "
        "zero gradient). Use a smaller tol to go further.",
        ConvergenceWarning,
        stacklevel=3,
    )


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
    loss=None,
    sample_weight=None,
    tol=1e-4,
    max_iter=200,
    callback=None,
    verbose=0,
    selection="gradient_l1",
    penalty="fro",
    beta=10.0,
    init_path=None,
    n_jobs=None,
):
    """Run ShareBoost for ``n_rounds`` rounds.

    The low-level solver behind :class:`mcsparse.ShareBoostClassifier`: the
    algorithm of [SWS2011]_ (the paper's algorithm box). Round 0
    fits the intercept alone (when ``fit_intercept``); every round then adds
    the unselected column chosen by ``selection`` (by default the largest
    ``||G[:, j]||_1``) and refits all selected columns, warm-started from
    the previous round, by BFGS with the curvature carried from round to
    round (:mod:`mcsparse.solvers._refit`).

    A family whose candidates are groups of columns (``candidate_widths_``,
    e.g. anchor points, §4.2) is selected from by the group rule of §3.2:
    each round adds the group with the largest ``sum_{j in J} ||G[:, j]||_1``
    (computed by the family) and all of its columns.

    Parameters
    ----------
    X : ndarray or CSC matrix of shape (n_samples, n_features), or None
        Finite training data, float32 or float64 (checked). Only used to
        fit the default ``features``: None when ``features`` is given (a
        family fitted on data this function does not see, such as
        :class:`~mcsparse.features._dask.DaskCandidates`).
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
        Margin of the loss: 1 is eq. (3); 0 the plain soft-max loss.
    loss : Loss, default=None
        The loss (:mod:`mcsparse.loss`, e.g. :class:`~mcsparse.loss.SoftmaxLoss`);
        None is eq. (3) with ``margin``.
        With :class:`~mcsparse.loss.BinaryLogisticLoss` (``n_classes=2``),
        ``W`` has one row, the binary problem of the one-vs-rest baseline.
    sample_weight : ndarray of shape (n_samples,), dtype float64, default=None
        Non-negative weights with a positive sum.
    tol : float, default=1e-4
        Relative tolerance of each refit: it stops when the largest absolute
        entry of the gradient is below ``tol`` times the objective at the
        refit's warm start; in (0, 1).
    max_iter : int, default=200
        Iteration cap of each refit.
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
    n_jobs : int, default=None
        Threads of the refit's passes over row blocks (summed in block
        order, so the path does not depend on it). None: the family's
        ``n_jobs`` when it has an int one, else 1; -1: all processors.

    Returns
    -------
    path : ShareBoostPath
        Selected features, per-round ``W`` and intercepts, training
        objective, selection scores and refit iterations.

    Raises
    ------
    ValueError
        If ``selection`` or ``penalty`` is unknown; if ``init_path`` is
        longer than ``n_rounds``; if "full" is asked on too large a
        problem, or a rule other than "gradient_l1" on groups of columns;
        if ``X`` has NaN or infinity, ``y`` is not of length ``n_samples``
        or holds an index outside ``[0, n_classes)``, ``n_classes < 2``, or
        ``sample_weight`` is invalid; if ``n_rounds`` is negative or more
        than the candidates, ``alpha`` negative, ``tol`` not positive or
        ``max_iter`` below 1.
    TypeError
        If ``loss``, ``init_path``, ``callback``, ``fit_intercept`` or a
        number is of the wrong type; if the family breaks the candidate protocol (ids, scores,
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
    _check_path_arguments(selection, penalty, beta, loss, margin)
    _check_path_numbers(n_rounds, alpha, beta, tol, max_iter, fit_intercept, verbose,
                        callback)
    if X is None:
        if features is None:
            raise ValueError("shareboost_path needs X, or features already fitted")
        y, sample_weight = check_solver_targets(y, np.shape(y)[:1], n_classes, sample_weight)
    else:
        X, y, sample_weight = check_solver_data(X, y, n_classes, sample_weight,
                                                accept_sparse="csc")
    features = RawFeatures().fit(X) if features is None else features
    n_candidates = getattr(features, "n_candidates_", None)
    if n_candidates is not None and n_rounds > n_candidates:
        raise ValueError(f"n_rounds={n_rounds} is more than the {n_candidates} candidates")
    if init_path is not None and not isinstance(init_path, ShareBoostPath):
        raise TypeError(f"init_path must be a ShareBoostPath or None, got {init_path!r}")
    t0 = 0 if init_path is None else len(init_path.selected_features)
    if t0 > n_rounds:
        raise ValueError(f"init_path has {t0} rounds, more than n_rounds={n_rounds}")
    _check_rule_fits(selection, features, y.shape[0], n_classes, n_rounds - t0)
    loss = MulticlassLogisticLoss(margin) if loss is None else loss
    state = _PathState(features, y, n_classes=n_classes, n_rounds=n_rounds, loss=loss,
                       penalty=make_penalty(penalty, alpha, beta),
                       fit_intercept=fit_intercept, sample_weight=sample_weight,
                       tol=tol, max_iter=max_iter, n_jobs=n_jobs)
    if init_path is None:
        state.start()
    else:
        state.resume(init_path)
    for t in range(t0 + 1, n_rounds + 1):
        chosen = _select_and_refit(state, selection)
        if chosen is None:
            warnings.warn(
                f"ShareBoost stopped after {t - 1} of {n_rounds} rounds: every remaining "
                "candidate has the same training columns as a selected one", UserWarning,
                stacklevel=2)
            break
        j, score, result, gain = chosen
        if result is None:
            _warn_converged(t - 1, n_rounds, j, gain, state.gtol, tol)
            break
        state.accept(j, score, result)
        elapsed = time.perf_counter() - start
        if verbose > 0:
            print(f"[ShareBoost] round {t}/{n_rounds}: feature {j}, score {score:.4g}, "
                  f"train loss {state.loss:.6g}, refit iterations {state.n_iters[-1]}, "
                  f"{elapsed:.2f} s", flush=True)
        if callback is not None and callback(ShareBoostRound(
                round=t, feature=j, selected_features=np.array(state.selected),
                coef=state.coefs[-1], intercept=state.intercepts[-1],
                train_loss=state.loss, selection_score=score,
                refit_n_iter=state.n_iters[-1], elapsed=elapsed)):
            break
    _warn_stops(state.stops, tol, max_iter, state.farthest_cap)
    return state.path(init_path)
