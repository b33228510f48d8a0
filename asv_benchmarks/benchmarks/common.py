"""Shared pieces of the mcsparse benchmarks, after scikit-learn's asv suite.

``Benchmark`` sets the timer and limits; ``Estimator`` adds ``time_fit``,
``peakmem_fit`` and the quality ``track_`` methods; data sets are built once
per process and cached with joblib in ``asv_benchmarks/cache``.
"""

import os
import timeit
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np
from joblib import Memory

CACHE = Memory(Path(__file__).resolve().parent.parent / "cache", verbose=0)


class Benchmark:
    """Base class: one process, generous timeout, wall-clock timer."""

    timer = timeit.default_timer
    processes = 1
    timeout = 600


@CACHE.cache
def pendigits_products():
    """Pendigits, the 120 pairwise products of the features / 100 (Fig. 3 setting)."""
    from mcsparse.datasets import load_pendigits
    from mcsparse.features import PairwiseProducts

    X, y = load_pendigits(return_X_y=True)
    Xt, yt = load_pendigits(subset="test", return_X_y=True)
    products = PairwiseProducts().fit(X / 100)
    return products.transform(X / 100), y, products.transform(Xt / 100), yt


class Estimator(ABC):
    """Mixin: subclasses set ``self.estimator`` and ``self.data`` in ``setup``.

    Abstract, so that asv does not collect the mixin itself as a benchmark.
    """

    @abstractmethod
    def setup(self, *params):
        """Build ``self.data = (X, y, X_test, y_test)`` and ``self.estimator``."""

    def time_fit(self, *args):
        self.estimator.fit(self.data[0], self.data[1])

    def peakmem_fit(self, *args):
        self.estimator.fit(self.data[0], self.data[1])

    def track_test_score(self, *args):
        X, y, Xt, yt = self.data
        return float(self.estimator.fit(X, y).score(Xt, yt))

    track_test_score.unit = "accuracy"


class Predictor(ABC):
    """Mixin: time ``predict`` of a fitted ``self.fitted`` on the test data."""

    @abstractmethod
    def setup(self, *params):
        """Build ``self.data`` and a fitted ``self.fitted``."""

    def time_predict(self, *args):
        self.fitted.predict(self.data[2])


def quick():
    """True when ``MCSPARSE_BENCH_QUICK=1``: smaller problems for smoke runs."""
    return os.environ.get("MCSPARSE_BENCH_QUICK", "0") not in ("", "0")


def random_scores(n_samples, n_classes, dtype, seed=0):
    rng = np.random.default_rng(seed)
    scores = (3 * rng.standard_normal((n_samples, n_classes))).astype(dtype)
    y = rng.integers(0, n_classes, n_samples).astype(np.intp)
    return scores, y
