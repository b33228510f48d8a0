"""Micro-benchmark: the Cython margin-logistic loss module against its NumPy twin."""

import numpy as np

from mcsparse.loss._multiclass_logistic import loss_gradient_numpy
from mcsparse.loss._multiclass_logistic_fast import loss_gradient

from .common import Benchmark, random_scores


class MulticlassLogisticLoss(Benchmark):
    """Value and gradient of eq. (3) over a score matrix, one pass over rows."""

    param_names = ["implementation", "dtype", "n_samples", "n_classes"]
    params = (["cython", "numpy"], ["float32", "float64"], [10_000, 100_000], [10, 26])

    def setup(self, implementation, dtype, n_samples, n_classes):
        self.scores, self.y = random_scores(n_samples, n_classes, np.dtype(dtype))
        self.grad = np.empty_like(self.scores)

    def time_loss_gradient(self, implementation, dtype, n_samples, n_classes):
        if implementation == "cython":
            loss_gradient(self.scores, self.y, None, self.grad)
        else:
            loss_gradient_numpy(self.scores, self.y)

    def peakmem_loss_gradient(self, implementation, dtype, n_samples, n_classes):
        self.time_loss_gradient(implementation, dtype, n_samples, n_classes)
