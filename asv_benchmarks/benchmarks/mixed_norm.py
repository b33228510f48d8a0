"""Mixed-norm (group-lasso) path on pendigits pairwise products (Fig. 3 baseline)."""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse.solvers._mixed_norm import mixed_norm_path

from .common import Benchmark, pendigits_products, quick


def _error_near(path, X_test, y_test, classes, n_features):
    """Test error at the first lambda with at least ``n_features`` active columns."""
    i = int(np.argmax(path.n_active >= n_features))
    scores = X_test @ path.coefs[i].T + path.intercepts[i]
    return float(np.mean(classes[np.argmax(scores, axis=1)] != y_test))


class MixedNormPathPendigits(Benchmark):
    """Time of the whole path (warm starts, strong rule), test error at ~20 features."""

    param_names = ["penalty"]
    params = (["l1/l2", "l1/linf"],)
    number = 1
    repeat = 3

    def setup(self, penalty):
        warnings.simplefilter("ignore", ConvergenceWarning)
        X, y, X_test, y_test = pendigits_products()
        self.classes, y_idx = np.unique(y, return_inverse=True)
        self.y_idx = y_idx.astype(np.intp)
        self.X, self.X_test, self.y_test = X, X_test, y_test
        # reaches ~40 active columns at the end of the grid
        self.kwargs = dict(
            n_classes=self.classes.shape[0], penalty=penalty,
            n_lambdas=10 if quick() else 30, lambda_min_ratio=0.03, tol=1e-4,
        )

    def time_path(self, penalty):
        mixed_norm_path(self.X, self.y_idx, **self.kwargs)

    def peakmem_path(self, penalty):
        mixed_norm_path(self.X, self.y_idx, **self.kwargs)

    def track_test_error_20_features(self, penalty):
        path = mixed_norm_path(self.X, self.y_idx, **self.kwargs)
        return _error_near(path, self.X_test, self.y_test, self.classes, 20)

    track_test_error_20_features.unit = "error rate"

    def track_n_active_at_end(self, penalty):
        path = mixed_norm_path(self.X, self.y_idx, **self.kwargs)
        return int(path.n_active[-1])

    track_n_active_at_end.unit = "features"
