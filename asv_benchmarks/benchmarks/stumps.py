"""Decision stumps: the Cython scan, and ShareBoost-stumps against LightGBM stumps."""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
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


class StumpsShareBoostVsLightGBM(Benchmark):
    """Pendigits, 16 features: one ShareBoost-stumps round vs one LightGBM iteration.

    A ShareBoost round scans all thresholds of all 16 features for the best
    shared stump, then refits ``W`` on every selected stump (L-BFGS). A
    LightGBM iteration with ``num_leaves=2`` grows one stump per class (10
    trees, histogram-based, 255 bins). Both run the same number of rounds;
    ``track_seconds_per_round`` is the fit time divided by it, so the ratio
    of the two implementations is the per-round cost ratio.
    """

    param_names = ["implementation"]
    params = (["shareboost", "lightgbm"],)
    n_rounds = 40

    def setup(self, implementation):
        warnings.simplefilter("ignore", ConvergenceWarning)
        self.data = _pendigits()
        if implementation == "shareboost":
            self.estimator = ShareBoostClassifier(
                n_features_to_select=self.n_rounds, features="stumps", alpha=1e-5)
        else:
            try:
                from lightgbm import LGBMClassifier
            except ImportError:
                raise NotImplementedError("lightgbm is not installed") from None
            self.estimator = LGBMClassifier(
                n_estimators=self.n_rounds, num_leaves=2, max_depth=1,
                min_child_samples=1, n_jobs=1, verbose=-1)

    def time_fit(self, implementation):
        self.estimator.fit(self.data[0], self.data[1])

    def track_seconds_per_round(self, implementation):
        start = time.perf_counter()
        self.estimator.fit(self.data[0], self.data[1])
        return (time.perf_counter() - start) / self.n_rounds

    track_seconds_per_round.unit = "seconds"

    def track_test_score(self, implementation):
        X, y, Xt, yt = self.data
        return float(self.estimator.fit(X, y).score(Xt, yt))

    track_test_score.unit = "accuracy"
