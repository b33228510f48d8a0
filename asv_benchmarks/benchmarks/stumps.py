"""Decision stumps: the Cython scan, and ShareBoost-stumps against LightGBM stumps."""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.features import DecisionStumps
from mcsparse.features._stumps import rank_stumps, scan_stumps_numpy
from mcsparse.features._stumps_fast import scan_stumps

from .common import Benchmark, quick


class StumpScan(Benchmark):
    """One selection step over all stumps: every threshold of every feature.

    The time should grow linearly in ``n_samples`` (one pass over the
    samples per feature, into per-value bins) and in ``n_features``; ``track_ns_per_sample_feature``
    divides it out, so a flat line across ``n_samples`` shows the O(m) claim
    of §4.1.
    """

    param_names = ["implementation", "dtype", "n_samples", "n_features"]
    params = (["cython", "numpy"], ["float32", "float64"], [10_000, 100_000],
              [16, 600])
    n_classes = 10

    def setup(self, implementation, dtype, n_samples, n_features):
        if quick() and n_samples * n_features > 10_000 * 600:
            raise NotImplementedError("skipped in quick mode")
        if implementation == "numpy" and n_samples * n_features > 10_000 * 600:
            raise NotImplementedError("the NumPy twin is only timed on the smaller sizes")
        rng = np.random.default_rng(0)
        # 256 levels, as in pixel or pendigits data: many ties and thresholds
        X = rng.integers(0, 256, size=(n_samples, n_features)).astype(dtype)
        R = rng.standard_normal((n_samples, self.n_classes)).astype(dtype)
        R -= R.mean(axis=1, keepdims=True)
        ranks, _, offsets = rank_stumps(X)
        self.inputs = (ranks, R, offsets)
        self.excluded = np.array([], dtype=np.intp)
        self.scan = scan_stumps if implementation == "cython" else scan_stumps_numpy

    def time_scan(self, *args):
        ranks, R, offsets = self.inputs
        self.scan(ranks, R, offsets, self.excluded)

    def track_ns_per_sample_feature(self, implementation, dtype, n_samples, n_features):
        start = time.perf_counter()
        self.time_scan()
        return 1e9 * (time.perf_counter() - start) / (n_samples * n_features)

    track_ns_per_sample_feature.unit = "ns"


def _pendigits():
    from mcsparse.datasets import load_pendigits

    X, y = load_pendigits(return_X_y=True)
    Xt, yt = load_pendigits(subset="test", return_X_y=True)
    return X / 100, y, Xt / 100, yt


def thread_params(model, n_jobs):
    """Set ``model``'s thread parameters to ``n_jobs``: those its ``get_params()`` has.

    ``n_jobs`` and, for a features object with one, ``features__n_jobs``;
    returns the dict of those set (empty for a version without them).
    """
    accepted = {key: n_jobs for key in ("n_jobs", "features__n_jobs")
                if key in model.get_params(deep=True)}
    model.set_params(**accepted)
    return accepted


def stumps_pair(n_jobs):
    """ShareBoost's and LightGBM's stumps on pendigits at about equal test error.

    ``{"shareboost": ..., "lightgbm": ...}``, both given ``n_jobs`` threads
    (ShareBoost where it has the parameter). Raises NotImplementedError
    (asv's skip) when LightGBM is not installed.
    """
    try:
        from lightgbm import LGBMClassifier
    except ImportError:
        raise NotImplementedError("lightgbm is not installed") from None
    rounds = 20 if quick() else 100
    shareboost = ShareBoostClassifier(n_features_to_select=rounds, features=DecisionStumps(),
                                      alpha=1e-4)
    thread_params(shareboost, n_jobs)
    return {
        "shareboost": shareboost,
        "lightgbm": LGBMClassifier(n_estimators=2 * rounds, num_leaves=2,
                                   learning_rate=0.3, n_jobs=n_jobs, verbose=-1),
    }


class _StumpsPair(Benchmark):
    """Setup of the ShareBoost-LightGBM stumps classes: data, both estimators,
    the process's BLAS and OpenMP pools limited to ``n_jobs`` threads."""

    n_jobs = 1

    def _setup(self, implementation, n_jobs):
        from threadpoolctl import threadpool_limits

        warnings.simplefilter("ignore", ConvergenceWarning)
        X, y, Xt, yt = _pendigits()
        self.data = (X * 100, y, Xt * 100, yt)  # raw features, as in the table
        self.estimators = stumps_pair(n_jobs)
        self.estimator = self.estimators[implementation]
        self._limits = threadpool_limits(limits=n_jobs)

    def teardown(self, *args):
        if hasattr(self, "_limits"):
            self._limits.restore_original_limits()


class StumpsShareBoostVsLightGBM(_StumpsPair):
    """Pendigits, 16 features: 100 shared stumps against LightGBM's stumps, one thread.

    The table of issues 20 and 52: ``ShareBoostClassifier(n_features_to_select=100,
    features=DecisionStumps(), alpha=1e-4)`` against ``LGBMClassifier(n_estimators=200,
    num_leaves=2, learning_rate=0.3)`` (2,000 stumps, one per class and
    iteration, histogram-based; the smallest multiple of 50 rounds at
    ShareBoost's test error), raw features. A ShareBoost round scans all
    thresholds of the 16 features for the best shared stump, then refits
    ``W`` on every selected stump (:mod:`mcsparse.solvers._refit`). Both get
    ``n_jobs`` threads (1 here; ShareBoost where it has the parameter, and
    the BLAS pools). In quick mode 20 ShareBoost rounds against 40 LightGBM
    iterations. ``track_time_ratio`` is the claim itself: ShareBoost's fit
    time over LightGBM's, best of 3 interleaved pairs in one process.
    ``asv_benchmarks/stumps_vs_lightgbm.py`` gives the same comparison on
    four data sets.
    """

    param_names = ["implementation"]
    params = (["shareboost", "lightgbm"],)

    def setup(self, implementation):
        self._setup(implementation, self.n_jobs)

    def time_fit(self, implementation):
        self.estimator.fit(self.data[0], self.data[1])

    def track_test_error(self, implementation):
        X, y, Xt, yt = self.data
        return float(1 - self.estimator.fit(X, y).score(Xt, yt))

    track_test_error.unit = "error rate"

    def track_time_ratio(self, implementation):
        if implementation != "shareboost":
            raise NotImplementedError("the ratio is ShareBoost's over LightGBM's")
        best = {}
        for _ in range(3):
            for name, model in self.estimators.items():
                start = time.perf_counter()
                model.fit(self.data[0], self.data[1])
                best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
        return best["shareboost"] / best["lightgbm"]

    track_time_ratio.unit = "ratio"


class StumpsShareBoostVsLightGBMTwoThreads(StumpsShareBoostVsLightGBM):
    """The same pair with two threads each (LightGBM's histograms on both cores)."""

    n_jobs = 2


class StumpsPredictShareBoostVsLightGBM(_StumpsPair):
    """Prediction on pendigits' 3,498 test rows: the two fitted models of the pair above.

    ShareBoost's 100 shared stumps (one score matrix row per stump) against
    LightGBM's 2,000 stumps at about the same test error, with ``n_jobs``
    threads each. ``track_rows_per_s``: test rows per second, best of 5.
    """

    param_names = ["implementation", "n_jobs"]
    params = (["shareboost", "lightgbm"], [1, 2])

    def setup(self, implementation, n_jobs):
        self._setup(implementation, n_jobs)
        self.estimator.fit(self.data[0], self.data[1])

    def time_predict(self, implementation, n_jobs):
        self.estimator.predict(self.data[2])

    def track_rows_per_s(self, implementation, n_jobs):
        best = np.inf
        for _ in range(5):
            start = time.perf_counter()
            self.estimator.predict(self.data[2])
            best = min(best, time.perf_counter() - start)
        return len(self.data[2]) / best

    track_rows_per_s.unit = "rows/s"


class ThresholdColumns(Benchmark):
    """One fused pass (scores, loss, gradient) over selected stumps, two stores.

    The refit's pass of the table above: pendigits (7,494 samples, 16
    features), ``n_stumps`` random stumps, 10 classes, BLAS on one thread:

    * ``by_feature``: the stumps given as rank codes and cuts
      (``SelectedColumns.put_cut``, what ``DecisionStumps`` gives the path),
      summed by feature (:mod:`mcsparse.solvers._thresholds`);
    * ``dense``: the same stumps as plain columns, the fused dense pass (BLAS).

    The sums by feature cost a few columns per feature: the ratio grows
    with the stumps per feature (the path uses them from four stumps a
    feature on, while a row block's residual fits in the cache).
    """

    param_names = ["storage", "n_stumps"]
    params = (["by_feature", "dense"], [20, 50, 100])
    n_classes = 10

    def setup(self, storage, n_stumps):
        from threadpoolctl import threadpool_limits

        from mcsparse.loss import MulticlassLogisticLoss
        from mcsparse.solvers._columns import SelectedColumns

        X, y, _, _ = _pendigits()
        ranks, _, offsets = rank_stumps(X)
        ranks.flags.writeable = False  # the store keeps a reference
        rng = np.random.default_rng(0)
        ids = rng.choice(offsets[-1], n_stumps, replace=False)
        features = np.searchsorted(offsets, ids, side="right") - 1
        self.store = SelectedColumns(len(y), n_stumps)
        for j, (i, f) in enumerate(zip(ids, features)):
            cut = int(i - offsets[f])
            if storage == "by_feature":
                self.store.put_cut(ranks[f], cut, j, center=True)
            else:
                self.store.put((ranks[f] <= cut).astype(float)[:, None], j, center=True)
        self.args = (0.1 * rng.standard_normal((n_stumps, self.n_classes)),
                     np.zeros(self.n_classes), MulticlassLogisticLoss(),
                     np.asarray(y, dtype=np.intp), None,
                     np.empty((len(y), self.n_classes)), np.empty((len(y), self.n_classes)))
        self._limits = threadpool_limits(limits=1, user_api="blas")
        self.store.value_grad(*self.args)  # the runs are prepared once a round

    def teardown(self, storage, n_stumps):
        self._limits.restore_original_limits()

    def time_value_grad(self, storage, n_stumps):
        self.store.value_grad(*self.args)
