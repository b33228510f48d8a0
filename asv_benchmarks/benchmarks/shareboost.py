"""ShareBoostClassifier on pendigits pairwise products: fit, predict, quality."""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier

from .common import Benchmark, Estimator, Predictor, pendigits_products


class ShareBoostPendigits(Predictor, Estimator, Benchmark):
    """Fit time per path length, test accuracy and number of selected features."""

    param_names = ["n_features_to_select", "alpha"]
    params = ([10, 40], [0.0, 1e-5])

    def setup(self, n_features_to_select, alpha):
        warnings.simplefilter("ignore", ConvergenceWarning)
        self.data = pendigits_products()
        self.estimator = ShareBoostClassifier(
            n_features_to_select=n_features_to_select, alpha=alpha, fit_intercept=False
        )
        self.fitted = ShareBoostClassifier(
            n_features_to_select=n_features_to_select, alpha=alpha, fit_intercept=False
        ).fit(self.data[0], self.data[1])

    def track_n_selected_features(self, *args):
        return int(np.count_nonzero(self.fitted.support_))

    track_n_selected_features.unit = "features"

    def track_seconds_per_round(self, *args):
        import time

        start = time.perf_counter()
        self.estimator.fit(self.data[0], self.data[1])
        return (time.perf_counter() - start) / self.estimator.n_iter_

    track_seconds_per_round.unit = "seconds"
