"""The state of one ShareBoost path: the selected columns, the model, the refit.

:func:`mcsparse.solvers.shareboost_path` drives it round by round: it reads a
candidate's typed training block from the family and stores it
(:class:`~mcsparse.solvers._columns.SelectedColumns`), keeps the objective's
current point, and refits (:func:`mcsparse.solvers._refit.solve`).
"""

from dataclasses import dataclass

import numpy as np
from joblib import effective_n_jobs
from threadpoolctl import ThreadpoolController

from ..features._base import Dense, RowSubset, training_block
from ._dask_columns import columns_store
from ._objective import LinearObjective
from ._refit import SEED_PRODUCTS, CarriedCurvature, solve

#: Statuses of a refit (see :func:`mcsparse.solvers._refit.solve`).
_STATUSES = ("ok", "max_iter", "failed")


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
        Iterations of this round's refit (BFGS, :mod:`mcsparse.solvers._refit`).
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
        Iterations of each refit.
    n_refits_not_converged : int
        Refits that hit ``max_iter`` or failed in the line search.
    column_ptr : ndarray of shape (n_rounds + 1,), dtype intp, default=None
        Round ``t`` added the columns ``column_ptr[t - 1]:column_ptr[t]`` of
        ``W``: one per round for single-column candidates (None, the
        default, becomes ``arange(n_rounds + 1)``), the group's width for
        groups (§3.2).
    curvature : CarriedCurvature, default=None
        The refit engine's curvature after the last round
        (:mod:`mcsparse.solvers._refit`), with which ``init_path`` continues
        the path exactly as one longer run would; None: a continued path
        starts from the exact Hessian instead (the same model within the
        refits' tolerance).
    params : ndarray, default=None
        The last refit's packed parameters (on centred columns), kept with
        ``curvature``.
    initial_intercept : ndarray of shape (n_classes,), default=None
        The intercept of the model before round 1: zeros, or the
        intercept-only fit with ``fit_intercept``. The model of a path that
        stopped before its first round (its first candidate's gradient at or
        below the refit tolerance).
    initial_loss : float, default=None
        The training objective of that model.
    """

    selected_features: np.ndarray
    coefs: list
    intercepts: list
    train_loss: np.ndarray
    selection_scores: np.ndarray
    refit_n_iter: np.ndarray
    n_refits_not_converged: int
    column_ptr: np.ndarray = None
    curvature: object = None
    params: np.ndarray = None
    initial_intercept: np.ndarray = None
    initial_loss: float = None

    def __post_init__(self):
        if self.column_ptr is None:
            self.column_ptr = np.arange(len(self.selected_features) + 1, dtype=np.intp)


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



def _training_block(features, j, n_samples, width, block=None):
    """Candidate ``j`` on the training data, checked: finite, (n_samples, width).

    ``block``: the family's ``training_columns([j])`` when already read.
    """
    if block is None:
        block = features.training_columns([j])
    block = np.asarray(block, dtype=np.float64)
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


def _check_agrees(typed, dense, j):
    """Refuse a typed block (rows, cuts) that is not the training columns ``dense``."""
    name = typed.source
    if isinstance(typed, RowSubset) and np.shape(typed.values) != dense.shape:
        raise ValueError(f"{name} gives values of shape {np.shape(typed.values)}, expected "
                         f"{dense.shape}")
    try:
        columns = typed.toarray()
    except ValueError as exc:
        raise ValueError(f"{name} {exc}") from None
    if columns.shape != dense.shape or not np.array_equal(columns, dense):
        raise ValueError(f"{name} disagrees with training_columns([{j}])")


def _read_only(array):
    array.flags.writeable = False
    return array


class _PathState:
    """What a ShareBoost path carries from round to round.

    The selected columns (a :class:`SelectedColumns` store, centred with an
    intercept), the objective on them, the packed parameters of the last
    refit and the curvature the refit engine carries; the records of every
    round so far.
    """

    def __init__(self, features, y, *, n_classes, n_rounds, loss, penalty,
                 fit_intercept, sample_weight, tol, max_iter, n_jobs=None):
        n_samples = y.shape[0]
        # A family that runs on threads (n_jobs) shares them with the refit,
        # unless the caller gives its own n_jobs.
        n_jobs = getattr(features, "n_jobs", None) if n_jobs is None else n_jobs
        n_threads = effective_n_jobs(n_jobs) if isinstance(n_jobs, (int, np.integer)) else 1
        self.features = features
        self.widths = candidate_widths(features)
        self.columns = columns_store(features, n_samples, n_rounds, n_threads)
        self.objective = LinearObjective(self.columns, y, sample_weight, n_classes=n_classes,
                                         loss=loss, penalty=penalty,
                                         fit_intercept=fit_intercept)
        self.curvature = CarriedCurvature()
        self._threadpools = ThreadpoolController()
        # the objective's weights: checked and scaled to a maximum of one
        self.fit_intercept, self.sample_weight = fit_intercept, self.objective.sample_weight
        self.tol, self.max_iter = tol, max_iter
        self.stops = dict.fromkeys(_STATUSES, 0)
        self.farthest_cap = None  # (round, max |grad|, gtol) of the worst stop at max_iter
        # a retry from the exact Hessian that failed too: the failures are the
        # objective's precision (tol below float64's reach, or the loss at its
        # floor on separated data), which lasts along the path
        self.exact_retry_failed = False
        self.selected, self.column_ptr = [], [0]
        self.coefs, self.intercepts, self.losses, self.scores, self.n_iters = [], [], [], [], []
        self.params = np.zeros(self.objective.n_intercept)
        self.set_point(self.objective.evaluate(self.params, 0))
        # duplicate columns: a fixed random probe gives each selected block a
        # signature (the bytes of block.T @ probe); equal ones are compared exactly
        self._probe = np.random.default_rng(0).standard_normal(n_samples)
        self._signatures = {}
        self._block = None  # (j, training block) of the last candidate read

    def set_point(self, point):
        """The objective at the current model (:class:`~mcsparse.solvers._objective.Point`)."""
        self.point, self.loss, self.grad = point, point.value, point.grad

    @property
    def p(self):
        """Columns selected so far."""
        return self.column_ptr[-1]

    def width(self, j):
        return 1 if self.widths is None else int(self.widths[j])

    def pass_work(self, p):
        """Cost of one fused pass (scores and gradient) over ``p`` columns."""
        return 2 * self.columns.n_samples * (p + 1) * self.objective.n_scores

    def border_work(self, first, p):
        """Cost of the exact bordering of columns ``first .. p``."""
        k = self.objective.n_scores
        return self.columns.n_samples * (p + 1) * (p - first) * k * (k + 1) / 2

    def start(self):
        """Round 0: ``W = 0`` and, with an intercept, the best intercept-only model."""
        if self.fit_intercept:
            self.curvature.reset(self.objective, 0, 0, self.point)
            result = self.refit(self.params, 0, point=self.point)
            self.params = result.params
            self.set_point(result.point)
            self.count_stop(result, 0)
        self.initial_intercept = _read_only(self.model()[1])
        self.initial_loss = self.loss

    def resume(self, path):
        """Continue ``path``: its columns, and its last ``W`` and intercept."""
        self.selected = [int(j) for j in path.selected_features]
        self.column_ptr = [int(q) for q in path.column_ptr]
        for t, j in enumerate(self.selected):
            self.put(j, self.column_ptr[t])
            self.register(j)
        self.coefs, self.intercepts = list(path.coefs), list(path.intercepts)
        self.losses, self.scores = list(path.train_loss), list(path.selection_scores)
        self.n_iters = list(path.refit_n_iter)
        self.initial_intercept, self.initial_loss = path.initial_intercept, path.initial_loss
        k, p = self.objective.n_scores, self.p
        if path.params is not None and path.params.size == self.objective.n_params(p):
            self.params = path.params.copy()  # exactly where the path stopped
        else:
            W = np.asarray(self.coefs[-1], dtype=np.float64) if self.coefs else np.zeros((k, 0))
            b = np.asarray(self.intercepts[-1], dtype=np.float64) if self.coefs else np.zeros(k)
            self.params = self.objective.pack(W, b + W @ self.columns.shift[:p])
        with self.one_blas_thread():
            self.set_point(self.objective.evaluate(self.params, p))
            if path.curvature is not None and path.curvature.n_params == self.params.size:
                self.curvature = path.curvature.copy()
            else:
                self.curvature.reset(self.objective, p, self.border_work(0, p), self.point)

    def block(self, j):
        """Candidate ``j``'s training columns, dense (the last candidate read is kept)."""
        return self._read(j)[2]

    def _read(self, j):
        """``(j, typed block, dense columns)`` of candidate ``j``, checked.

        A block other than :class:`Dense` (row subsets, stump cuts) must equal
        the family's ``training_columns([j])``.
        """
        if self._block is None or self._block[0] != j:
            n, width = self.columns.n_samples, self.width(j)
            typed = training_block(self.features, j)
            if isinstance(typed, Dense):
                dense = _training_block(self.features, j, n, width, typed.values)
            else:
                dense = _training_block(self.features, j, n, width)
                if typed.source is None:
                    typed.source = f"{type(self.features).__name__}.training_block({j})"
                _check_agrees(typed, dense, j)
            self._block = (j, typed, dense)
        return self._block

    def put(self, j, start):
        """Store candidate ``j``'s training columns from column ``start`` on.

        The store keeps the family's typed block as its type allows
        (:meth:`SelectedColumns.put`): a row subset by reference (the anchor
        pieces), stump cuts with their codes, dense columns as they are.
        """
        _, typed, dense = self._read(j)
        kw = dict(center=self.fit_intercept, sample_weight=self.sample_weight)
        if isinstance(typed, Dense):
            return self.columns.put(dense, start, **kw)
        try:
            self.columns.put(typed, start, **kw)
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{typed.source}: {exc}") from None

    def _signature(self, j):
        """Key of ``j``'s columns: equal columns give equal bytes (same products)."""
        return (self.width(j), (self.block(j).T @ self._probe).tobytes())

    def duplicate_of(self, j):
        """A selected candidate whose training columns equal ``j``'s, or None."""
        block = self.block(j)
        for i in self._signatures.get(self._signature(j), ()):
            if np.array_equal(self.block(i), block):
                return i  # j is excluded: its block is not needed again
        return None

    def register(self, j):
        """Record the signature of selected candidate ``j``."""
        self._signatures.setdefault(self._signature(j), []).append(j)

    def one_blas_thread(self):
        """Context: BLAS on one thread.

        The refit's products are n_samples x (few columns): BLAS threads cost
        more than they give (asv ``RefitEngine`` measures it);
        the store runs its row blocks on threads instead.
        """
        return self._threadpools.limit(limits=1, user_api="blas")

    def refit(self, params, p, curvature=None, point=None):
        """Refit on ``p`` columns from ``params`` (the objective's ``point`` there if known).

        Returns a :class:`~mcsparse.solvers._refit.Refit`. The tolerance is
        relative to the objective at the warm start: the gradient's scale
        falls with the loss, so an absolute tolerance would leave W
        unchanged (zero iterations) late on a path whose loss is small.
        """
        curvature = self.curvature if curvature is None else curvature
        with self.one_blas_thread():
            if point is None:
                point = self.objective.evaluate(params, p)
            gtol = self.tol * point.value
            result = solve(self.objective, params, p, gtol=gtol, max_iter=self.max_iter,
                           curvature=curvature, point=point)
            if result.status == "failed":
                result = self._retry(result, p, gtol, curvature)
            return result

    def _retry(self, failed, p, gtol, curvature):
        """Once more from ``failed``'s point, without the carried curvature.

        The carried curvature may have gone stale (or, near float64's reach,
        its pairs may be the differences of noisy gradients). Dense mode: from
        the exact Hessian at the last point, or from a scaled identity where
        the Hessian costs more than max_iter passes. L-BFGS mode: no pairs, then
        pairs of exact Hessian products there (:meth:`CarriedCurvature.seed`,
        a few passes). Either way from a restart only once a retry from exact
        curvature has failed too (a rebuild every round would cost ``n_samples
        * p**2`` each in the dense mode): the failures are then the
        objective's precision (tol below float64's reach, or the loss at its
        floor on separated data), which lasts along the path.
        """
        exact = not self.exact_retry_failed and (
            not curvature.dense
            or self.border_work(0, p) <= self.max_iter * self.pass_work(p))
        if not exact:
            curvature.restart(failed.grad)
        elif curvature.dense:
            curvature.reset(self.objective, p, self.border_work(0, p), failed.point)
        else:
            curvature.seed(self.objective, p, failed.point, gtol,
                           min(SEED_PRODUCTS, self.max_iter - failed.n_iter))
        again = solve(self.objective, failed.params, p, gtol=gtol,
                      max_iter=self.max_iter - failed.n_iter, curvature=curvature,
                      point=failed.point)
        again.n_iter += failed.n_iter
        self.exact_retry_failed |= exact and again.status == "failed"
        return again

    @property
    def gtol(self):
        """The refits' tolerance at the current model: ``tol`` times the objective."""
        return self.tol * self.loss

    def grow(self, j, start):
        """Put candidate ``j`` at ``start``; ``(params, point, gain)`` of the grown problem.

        The new coefficients are zeros, which keep the current model's scores
        (:attr:`point`); ``gain`` is the largest entry of their gradient: at or
        below :attr:`gtol`, the refit would leave them at zero.
        """
        self.put(j, start)
        p_new = self.columns.n_columns
        params = np.concatenate([self.params, np.zeros(self.objective.n_scores * (p_new - start))])
        with self.one_blas_thread():
            point = self.objective.grown(self.point, start, p_new)
        gain = float(np.max(np.abs(point.grad[self.params.size:]), initial=0.0))
        return params, point, gain

    def refit_grown(self, params, point, start, curvature=None):
        """Extend the curvature by the columns from ``start`` on and refit.

        ``params`` and ``point`` are :meth:`grow`'s. Returns ``(refit,
        curvature)``; the curvature (the path's own unless given) is updated
        in place, the rest of the path's state changes only through
        :meth:`accept`.
        """
        curvature = self.curvature if curvature is None else curvature
        p_new = self.columns.n_columns
        with self.one_blas_thread():
            curvature.extend(self.objective, start, p_new, self.border_work(start, p_new), point)
        return self.refit(params, p_new, curvature, point), curvature

    def add(self, j, start, curvature=None):
        """:meth:`grow` and :meth:`refit_grown`: ``(refit, curvature, gain)``."""
        params, point, gain = self.grow(j, start)
        return (*self.refit_grown(params, point, start, curvature), gain)

    def model(self):
        """``(W, b)`` of the current model on the selected columns as they are (not centred)."""
        p = self.p
        W, b = self.objective.unpack(self.params, p)
        return W, b - W @ self.columns.shift[:p]

    def count_stop(self, refit, t):
        """Count how the refit of round ``t`` stopped; keep the farthest stop at max_iter."""
        self.stops[refit.status] += 1
        if refit.status == "max_iter":
            g = float(np.max(np.abs(refit.grad), initial=0.0))
            if self.farthest_cap is None or g / refit.gtol > self.farthest_cap[1] / \
                    self.farthest_cap[2]:
                self.farthest_cap = (t, g, refit.gtol)

    def accept(self, j, score, result):
        """Make ``result`` (``(refit, curvature)``) the new state; record round ``j``."""
        refit, self.curvature = result
        self.register(j)
        self.params = refit.params
        self.set_point(refit.point)
        nit = refit.n_iter
        self.count_stop(refit, len(self.selected) + 1)
        self.selected.append(j)
        self.column_ptr.append(self.columns.n_columns)
        W, b = self.model()
        self.coefs.append(_read_only(W.copy()))
        self.intercepts.append(_read_only(b))
        self.losses.append(self.loss)
        self.scores.append(score)
        self.n_iters.append(nit)

    def path(self, init_path=None):
        """The :class:`ShareBoostPath` of the rounds so far."""
        return ShareBoostPath(
            selected_features=np.array(self.selected, dtype=np.intp),
            coefs=self.coefs,
            intercepts=self.intercepts,
            train_loss=np.array(self.losses),
            selection_scores=np.array(self.scores),
            refit_n_iter=np.array(self.n_iters, dtype=np.intp),
            column_ptr=np.array(self.column_ptr, dtype=np.intp),
            n_refits_not_converged=self.stops["max_iter"] + self.stops["failed"]
            + (0 if init_path is None else init_path.n_refits_not_converged),
            curvature=self.curvature.compact(),
            params=self.params.copy(),
            initial_intercept=self.initial_intercept,
            initial_loss=self.initial_loss,
        )
