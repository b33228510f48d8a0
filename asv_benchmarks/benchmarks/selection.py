"""ShareBoost's selection rules (§3.1 of [SWS2011]) on pendigits pairwise products.

Time per round of each rule: the paper's l1 gradient rule, the best
one-column update (eq. 6), the line search along the gradient column (eq. 7)
and the fully corrective refit of every candidate (a few rounds only: it
costs one L-BFGS refit per candidate), plus the training objective reached.
"""

import time
import warnings

from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier

from .common import Benchmark, pendigits_products, quick

ROUNDS = {"gradient_l1": 10, "best_column": 10, "line_search": 10, "full": 2}


class SelectionRules(Benchmark):
    """Seconds per round and final training objective, per selection rule."""

    param_names = ["selection"]
    params = (["gradient_l1", "best_column", "line_search", "full"],)

    def setup(self, selection):
        warnings.simplefilter("ignore", ConvergenceWarning)
        X, y, _, _ = pendigits_products()
        if quick():
            X, y = X[:1000], y[:1000]
        self.X, self.y = X, y
        self.estimator = ShareBoostClassifier(
            n_features_to_select=ROUNDS[selection], selection=selection, alpha=1e-5,
            fit_intercept=False,
        )

    def time_fit(self, selection):
        self.estimator.fit(self.X, self.y)

    def track_seconds_per_round(self, selection):
        start = time.perf_counter()
        self.estimator.fit(self.X, self.y)
        return (time.perf_counter() - start) / self.estimator.n_iter_

    track_seconds_per_round.unit = "seconds"

    def track_train_objective(self, selection):
        return float(self.estimator.fit(self.X, self.y).train_loss_[-1])

    track_train_objective.unit = "objective"
