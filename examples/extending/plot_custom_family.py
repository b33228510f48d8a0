"""
Write your own candidate family
===============================

A candidate family is one class: a :class:`~mcsparse.features.CandidateFeatures`
with five methods. This one offers the hinges :math:`\\max(x_j - t, 0)` at the
quartiles :math:`t` of each input column, three candidates per column.
"""

import matplotlib.pyplot as plt
import numpy as np

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import CandidateFeatures


class Hinges(CandidateFeatures):
    """Candidates max(x_j - t, 0), t the given quantiles of column j."""

    def __init__(self, quantiles=(0.25, 0.5, 0.75)):
        self.quantiles = quantiles

    def fit(self, X, y=None):
        self._X_fit = np.asarray(X, dtype=np.float64)
        self.thresholds_ = np.quantile(self._X_fit, self.quantiles, axis=0).T.ravel()
        self.columns_ = np.repeat(np.arange(X.shape[1]), len(self.quantiles))
        self.n_features_in_, self.n_candidates_ = X.shape[1], self.thresholds_.size
        return self

    def transform_candidates(self, X, ids):  # only the candidates asked for
        return np.maximum(np.asarray(X)[:, self.columns_[ids]] - self.thresholds_[ids], 0.0)

    def training_columns(self, ids):
        return self.transform_candidates(self._X_fit, ids)

    def best_candidate(self, residual, excluded):
        every = self.training_columns(np.arange(self.n_candidates_))  # (n, n_candidates)
        scores = np.abs(every.T @ residual).sum(axis=1)  # ||R^T x_c||_1
        scores[excluded] = -np.inf  # never an id already selected
        j = int(np.argmax(scores))  # the lowest id on ties
        return j, float(scores[j])

    def end_scan(self, ids):
        self.support_ = np.isin(np.arange(self.n_features_in_), self.columns_[ids])
        self._X_fit = None  # prediction needs the thresholds only
        return self


# %%
# The hinges against the 16 raw columns, up to 16 shared features each.
X, y = load_pendigits(return_X_y=True)
X_test, y_test = load_pendigits(subset="test", return_X_y=True)
for name, features in (("raw columns", "raw"), ("hinges", Hinges())):
    clf = ShareBoostClassifier(n_features_to_select=16, features=features).fit(X / 100, y)
    errors = [np.mean(p != y_test) for p in clf.staged_predict(X_test / 100)]
    print(f"{name}: test error {errors[-1]:.2%} with {clf.n_iter_} features")
    plt.plot(np.arange(1, len(errors) + 1), errors, label=name)
plt.xlabel("number of shared features"), plt.ylabel("test error"), plt.legend()
