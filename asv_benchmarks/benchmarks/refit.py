"""The refit engine beside SciPy's L-BFGS-B, on the same selected columns.

ShareBoost's fully corrective step refits every selected column each round.
``RefitEngine`` replays the refits of a path whose columns were selected once
(``setup_cache``): ``"mcsparse"`` runs the library's engine (BFGS with the
curvature carried from round to round and the new column's exact Hessian
blocks, :mod:`mcsparse.solvers._refit`) through ``shareboost_path`` with a
family that returns the columns in their selection order; ``"scipy-lbfgsb"``
runs what mcsparse used before it, a fresh SciPy L-BFGS-B each round (30
correction pairs, the same relative tolerance), on the same objective. Both
see the same data, warm starts and stopping rule, so the ratio of their
times is the engine's. ``"exact-hessian"`` runs the engine's solver from the
exact inverse Hessian every round: the reference for its carried curvature.
``LbfgsTwoLoop`` times one L-BFGS direction beside its NumPy twin.

``ShareBoostPaths`` times whole fits (selection included) with their test
error, at the sizes of issue 20's acceptance list in full mode and smaller in
quick mode; ``asv_benchmarks/side_by_side.py`` runs the full-size pipelines
against a previous version of the library.
"""

import time
import warnings

import numpy as np
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from mcsparse.features import RawFeatures

from .common import Benchmark, quick


def _mnist(n_train, n_test):
    from mcsparse.datasets import load_mnist

    X, y = load_mnist(subset="train", return_X_y=True)
    Xt, yt = load_mnist(subset="test", return_X_y=True)
    scale = np.float32(1 / 255)
    return X[:n_train] * scale, y[:n_train], Xt[:n_test] * scale, yt[:n_test]


def _problem(name):
    """``(X, y, X_test, y_test, estimator)`` of a named problem."""
    from mcsparse import ShareBoostClassifier
    from mcsparse.features import AnchorPoints, ConvMaxTemplates

    if name == "pendigits-stumps":
        from mcsparse.datasets import load_pendigits

        X, y = load_pendigits(return_X_y=True)
        Xt, yt = load_pendigits(subset="test", return_X_y=True)
        model = ShareBoostClassifier(n_features_to_select=40 if quick() else 100,
                                     features="stumps", alpha=1e-4)
        return X, y, Xt, yt, model
    if name == "mnist-pixels":
        X, y, Xt, yt = _mnist(10_000 if quick() else None, 2000 if quick() else None)
        # alpha=0: the bare loss these timings were first recorded with
        return X, y, Xt, yt, ShareBoostClassifier(n_features_to_select=30 if quick() else 100,
                                                  alpha=0.0)
    if name == "mnist-templates":
        X, y, Xt, yt = _mnist(6000 if quick() else 20_000, 2000)
        family = ConvMaxTemplates(n_templates=100 if quick() else 300, n_jobs=2,
                                  random_state=0)
        return X, y, Xt, yt, ShareBoostClassifier(
            n_features_to_select=40 if quick() else 150, alpha=3e-5, features=family)
    if name == "mnist-anchors":  # Fig. 7 at the example's quick sizes
        from sklearn.decomposition import PCA

        X, y, Xt, yt = _mnist(5000, 2000)
        pca = PCA(n_components=50, random_state=0).fit(X.astype(np.float64))
        X, Xt = pca.transform(X.astype(np.float64)), pca.transform(Xt.astype(np.float64))
        family = AnchorPoints(n_anchors=300, n_radii=35, quantile_range=(0.002, 0.5),
                              n_jobs=2, random_state=0)
        return X, y, Xt, yt, ShareBoostClassifier(
            n_features_to_select=30 if quick() else 60, alpha=1e-4, tol=1e-3, features=family)
    raise ValueError(name)


PROBLEMS = ["pendigits-stumps", "mnist-pixels", "mnist-templates", "mnist-anchors"]


def _replay(objective, width, tol, refit):
    """Refit round by round, the columns of ``width`` added in turn; ``(iterations, objective)``.

    ``refit(params, p, gtol, f, g)`` solves one round from the warm start
    ``params`` (value ``f``, gradient ``g``, the objective last evaluated
    there) and returns ``(params, iterations, value)``; ``gtol`` is ``tol``
    times the value at the warm start, the library's stopping rule.
    """
    k, p = objective.n_scores, 0
    params = np.zeros(objective.n_intercept)
    n_iter = 0
    for w in [0] + list(width):
        p += w
        params = np.concatenate([params, np.zeros(k * w)])
        f, g = objective.value_grad(params, p)
        params, it, fun = refit(params, p, tol * f, f, g)
        n_iter += it
    return n_iter, fun


def _scipy_replay(objective, width, tol, max_iter):
    """Refit round by round with a fresh SciPy L-BFGS-B (the engine before mcsparse's own)."""
    options = {"maxiter": max_iter, "ftol": 64 * np.finfo(float).eps, "maxls": 50,
               "maxcor": 30}

    def refit(params, p, gtol, f, g):
        res = minimize(objective.value_grad, params, args=(p,), method="L-BFGS-B",
                       jac=True, options={**options, "gtol": gtol})
        return res.x, res.nit, res.fun

    return _replay(objective, width, tol, refit)


#: Largest ``n_samples * n_params**2`` of a path's last refit for the exact-Hessian replay.
EXACT_MAX_WORK = 1e10


def _exact_replay(objective, width, tol, max_iter):
    """Refit round by round from the exact inverse Hessian at each warm start.

    The same solver as the library's engine, but its curvature computed
    afresh every round (``CarriedCurvature.reset``) instead of carried and
    bordered: what a better carried curvature could reach, at the price of
    ``n_samples * n_params**2`` work a round.
    """
    from mcsparse.solvers._refit import CarriedCurvature, solve

    def refit(params, p, gtol, f, g):
        curvature = CarriedCurvature()
        curvature.reset(objective, p, 0.0)
        res = solve(objective, params, p, gtol=gtol, max_iter=max_iter,
                    curvature=curvature, f=f, g=g)
        return res.params, res.n_iter, res.value

    return _replay(objective, width, tol, refit)


class RefitEngine(Benchmark):
    """The refits of a whole path: mcsparse's engine, SciPy's L-BFGS-B, the exact Hessian.

    ``"exact-hessian"`` replays the path with the engine's solver started
    every round from the exact inverse Hessian (:func:`_exact_replay`): not
    a method to use (on pendigits stumps the Hessians cost more than the
    whole fit), but the bound on what carrying the curvature could save;
    skipped where the Hessians would take more than ``EXACT_MAX_WORK``.
    """

    param_names = ["problem", "engine"]
    params = (PROBLEMS, ["mcsparse", "scipy-lbfgsb", "exact-hessian"])
    number = 1
    repeat = 3
    timeout = 1800

    def setup_cache(self):
        warnings.simplefilter("ignore", ConvergenceWarning)
        cache = {}
        for name in PROBLEMS:
            X, y, _, _, model = _problem(name)
            model.fit(X, y)
            features = model.features_
            # the selected candidates' training columns, in selection order
            columns = features.transform_candidates(X, model.selected_features_)
            widths = np.diff(model._path.column_ptr)
            cache[name] = (columns.astype(np.float64), np.unique(y, return_inverse=True)[1],
                           widths, model.get_params())
        return cache

    def setup(self, cache, problem, engine):
        warnings.simplefilter("ignore", ConvergenceWarning)
        self.columns, self.y, self.widths, params = cache[problem]
        self.alpha, self.tol = params["alpha"], params["tol"]
        self.max_iter, self.fit_intercept = params["max_iter"], params["fit_intercept"]
        n_params = (self.columns.shape[1] + 1) * (int(self.y.max()) + 1)
        if engine == "exact-hessian" and self.y.size * n_params**2 > EXACT_MAX_WORK:
            raise NotImplementedError("the exact Hessians of this path cost too much")

    def _run(self, engine):
        from mcsparse.loss import Frobenius
        from mcsparse.solvers import shareboost_path
        from mcsparse.solvers._columns import SelectedColumns
        from mcsparse.solvers._objective import LinearObjective

        k = int(self.y.max()) + 1
        if engine == "mcsparse":
            labels = np.repeat(np.arange(self.widths.size), self.widths)
            family = _InOrder(groups=labels if self.widths.max() > 1 else None)
            family.fit(self.columns)
            path = shareboost_path(self.columns, self.y, n_classes=k,
                                   n_rounds=self.widths.size, features=family,
                                   alpha=self.alpha, tol=self.tol, max_iter=self.max_iter,
                                   fit_intercept=self.fit_intercept)
            return int(path.refit_n_iter.sum()), float(path.train_loss[-1])
        store = SelectedColumns(self.columns.shape[0], self.columns.shape[1])
        start = 0
        for w in self.widths:  # the same column store as the library's path
            store.put(self.columns[:, start:start + w], start, center=self.fit_intercept)
            start += w
        objective = LinearObjective(store, self.y, n_classes=k, penalty=Frobenius(self.alpha),
                                    fit_intercept=self.fit_intercept)
        replay = _scipy_replay if engine == "scipy-lbfgsb" else _exact_replay
        return replay(objective, self.widths, self.tol, self.max_iter)

    def time_refits(self, cache, problem, engine):
        self._run(engine)

    def track_refit_iterations(self, cache, problem, engine):
        return self._run(engine)[0]

    track_refit_iterations.unit = "iterations"

    def track_final_objective(self, cache, problem, engine):
        return self._run(engine)[1]

    track_final_objective.unit = "objective"


class _InOrder(RawFeatures):
    """Raw columns (or groups) handed out in their order: the replay of a path's selection."""

    def best_candidate(self, residual, excluded):
        self._check_scanning()
        remaining = np.setdiff1d(np.arange(self.n_candidates_), excluded)
        return int(remaining[0]), 1.0


class ShareBoostPaths(Benchmark):
    """Whole fits (selection and refits) and their test error."""

    param_names = ["problem"]
    params = (PROBLEMS,)
    number = 1
    repeat = 3
    timeout = 1800

    def setup(self, problem):
        warnings.simplefilter("ignore", ConvergenceWarning)
        self.X, self.y, self.X_test, self.y_test, self.model = _problem(problem)

    def time_fit(self, problem):
        self.model.fit(self.X, self.y)

    def track_test_error(self, problem):
        self.model.fit(self.X, self.y)
        return float(1 - self.model.score(self.X_test, self.y_test))

    track_test_error.unit = "error rate"

    def track_seconds_per_round(self, problem):
        start = time.perf_counter()
        self.model.fit(self.X, self.y)
        return (time.perf_counter() - start) / self.model.n_iter_

    track_seconds_per_round.unit = "seconds"


class LbfgsTwoLoop(Benchmark):
    """One L-BFGS direction: the two-loop recursion, beside its NumPy twin.

    Pairs of 163,200 coefficients (320 anchor pieces of 51 columns x 10
    classes: the Fig. 7 path's last rounds), ``pairs``: the engine's 200
    float32 pairs, or 100 float64 pairs (its storage before; the same
    261 MB, so that the sweeps are bound by memory either way).
    ``cython``: :func:`mcsparse.solvers._refit_fast.two_loop` (one sweep per
    pair and loop); ``numpy``: its twin
    :func:`mcsparse.solvers._refit.two_loop_numpy` (a dot product, a scaled
    copy and an update per pair and loop). Quick mode: 16,320 coefficients.
    """

    param_names = ["implementation", "pairs"]
    params = (["cython", "numpy"], ["200-float32", "100-float64"])

    def setup(self, implementation, pairs):
        from mcsparse.solvers._refit import two_loop_numpy
        from mcsparse.solvers._refit_fast import two_loop

        n = 16_320 if quick() else 163_200
        m, dtype = {"200-float32": (200, np.float32), "100-float64": (100, np.float64)}[pairs]
        rng = np.random.default_rng(0)
        self.pairs = []
        for _ in range(m):
            s = rng.standard_normal(n)
            y = s + 0.1 * rng.standard_normal(n)
            self.pairs.append((s.astype(dtype), y.astype(dtype), y @ s))
        self.g = rng.standard_normal(n)
        self.func = two_loop if implementation == "cython" else two_loop_numpy

    def time_direction(self, implementation, pairs):
        self.func(self.pairs, self.g.copy(), 0.5)


class HessianColumns(Benchmark):
    """The exact bordering's Hessian columns of a new column, its per-row blocks made two ways.

    ``LinearObjective.hessian_columns`` multiplies the stored columns by the
    per-row Hessian blocks of the new column (``n x k(k+1)/2`` values).
    ``"row-blocks"``: the store fills and multiplies them one row block at a
    time (``SelectedColumns.rmatmul_filled``), in cache; ``"whole"``: the
    base class's fill of the whole matrix, then one product (what every
    store did before). Letter's sizes (16,000 rows, 26 classes: 351 values a
    row) and pendigits' (7,494 rows, 10 classes), 50 stored dense columns,
    two threads. Quick mode: half the rows.
    """

    param_names = ["shape", "implementation"]
    params = (["letter", "pendigits"], ["row-blocks", "whole"])

    def setup(self, shape, implementation):
        from functools import partial

        from mcsparse.loss import MulticlassLogisticLoss
        from mcsparse.solvers._columns import ColumnStore, SelectedColumns
        from mcsparse.solvers._objective import LinearObjective

        n, k = {"letter": (16_000, 26), "pendigits": (7_494, 10)}[shape]
        n = n // 2 if quick() else n
        rng = np.random.default_rng(0)
        store = SelectedColumns(n, 50, n_threads=2)
        store.put((rng.random((n, 50)) < 0.5).astype(float), 0, center=True)
        if implementation == "whole":
            store.rmatmul_filled = partial(ColumnStore.rmatmul_filled, store)
        y = rng.integers(0, k, n).astype(np.intp)
        self.objective = LinearObjective(store, y, n_classes=k,
                                         loss=MulticlassLogisticLoss())
        params = 0.1 * rng.standard_normal(self.objective.n_params(50))
        self.point = self.objective.evaluate(params, 50)

    def time_hessian_columns(self, shape, implementation):
        self.objective.hessian_columns(49, 50, point=self.point)


class SeparableEndgame(Benchmark):
    """The paper's bare loss (alpha=0) on separable data: do late rounds cost more?

    5,000 x 300 Gaussian columns, 4 classes set by 10 of them, 150 rounds: the
    training set is separated within about 20 rounds, the loss falls to its
    float64 floor, and most later refits fail in the line search.
    ``track_late_over_early`` is the time of rounds 140 to 150 over that of
    rounds 10 to 20 (per round, the fastest of three fits run in turn, from
    the callback's clock): 3.2 before a failed retry from the exact Hessian
    stopped being repeated along the path; the target is at most 1.5.
    Quick mode: 2,000 x 120 columns, 60 rounds (rounds 50-60 over 10-20).
    """

    number = 1
    repeat = 1
    timeout = 1200

    def setup(self):
        warnings.simplefilter("ignore", ConvergenceWarning)
        rng = np.random.default_rng(0)
        n, d = (2000, 120) if quick() else (5000, 300)
        self.X = rng.standard_normal((n, d))
        self.y = np.argmax(self.X[:, :10] @ rng.standard_normal((10, 4)), axis=1)
        self.n_rounds = 60 if quick() else 150

    def _round_times(self):
        from mcsparse.solvers import shareboost_path

        ends = []
        shareboost_path(self.X, self.y, n_classes=4, n_rounds=self.n_rounds, alpha=0.0,
                        callback=lambda info: ends.append(info.elapsed))
        return np.diff([0.0] + ends)

    def time_path(self):
        self._round_times()

    def track_late_over_early(self):
        per_round = np.min([self._round_times() for _ in range(3)], axis=0)
        return float(per_round[self.n_rounds - 11:].sum() / per_round[9:20].sum())

    track_late_over_early.unit = "ratio"
