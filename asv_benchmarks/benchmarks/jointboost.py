"""JointBoostClassifier (the baseline of [SWS2011] Fig. 3, bottom): fit, predict, quality.

Raw features (JointBoost thresholds the original features); letter needs
``MCSPARSE_DATA`` and is skipped without it.
"""

import time

import numpy as np

from mcsparse import JointBoostClassifier

from .common import CACHE, Benchmark, Estimator, Predictor, quick


@CACHE.cache
def _raw(name):
    """Train and test split of a UCI data set, raw features, labels as given."""
    from mcsparse.datasets import load_letter, load_pendigits

    load = {"pendigits": load_pendigits, "letter": load_letter}[name]
    X, y = load(return_X_y=True)
    Xt, yt = load(subset="test", return_X_y=True)
    return X, y, Xt, yt


def raw_data(name):
    try:
        return _raw(name)
    except FileNotFoundError as exc:  # letter is not bundled
        raise NotImplementedError(f"{name} not available: {exc}") from exc


class JointBoostUCI(Predictor, Estimator, Benchmark):
    """Fit time, seconds per round and test error on pendigits (10 classes)
    and letter (26 classes, 16000 training samples)."""

    param_names = ["dataset", "n_estimators"]
    params = (["pendigits", "letter"], [10, 100])

    def setup(self, dataset, n_estimators):
        if quick() and n_estimators > 10:
            raise NotImplementedError("skipped in quick mode")
        self.data = raw_data(dataset)
        self.estimator = JointBoostClassifier(n_estimators=n_estimators)
        self.fitted = JointBoostClassifier(n_estimators=n_estimators).fit(
            self.data[0], self.data[1]
        )

    def track_test_error(self, *args):
        X, y, Xt, yt = self.data
        return float(np.mean(self.fitted.predict(Xt) != yt))

    track_test_error.unit = "error rate"

    def track_seconds_per_round(self, dataset, n_estimators):
        start = time.perf_counter()
        self.estimator.fit(self.data[0], self.data[1])
        return (time.perf_counter() - start) / n_estimators

    track_seconds_per_round.unit = "seconds"
