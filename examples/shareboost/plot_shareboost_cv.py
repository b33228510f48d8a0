"""
=========================================================
Choosing alpha and the number of features in one search
=========================================================

How many shared features, and how much penalty? One ShareBoost fit is the
whole path of models with 1, 2, ... features, so
:class:`~mcsparse.ShareBoostClassifierCV` fits one path per fold and value of
``alpha`` and scores every round on the held-out fold: the cross-validated
error of every number of features, for every ``alpha``, from
``n_splits * n_alphas`` paths, where a grid search over ``alpha`` and
``n_features_to_select`` fits a path per pair.

This example draws those curves for ShareBoost over all decision stumps of
the UCI pendigits digits (the setting of Fig. 3 of [SWS2011]_, bottom row),
with the standard error band over the folds, the pair the ``"min"`` rule
chooses (the best mean) and the one the ``"1se"`` rule chooses (the fewest
stumps within one standard error of the best). Everything is chosen on the
training set; the test set is used once, to score the two refitted models.

Quick mode (the docs build): 60 stumps, 3 folds; ``MCSPARSE_FULL=1``: 100
stumps, 5 folds.
"""

# %%
# Data: 7494 training and 3498 test digits, 16 features
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FormatStrFormatter
from sklearn.base import clone

from mcsparse import ShareBoostClassifierCV
from mcsparse.datasets import load_pendigits

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
X_train, y_train = load_pendigits(return_X_y=True)
X_test, y_test = load_pendigits(subset="test", return_X_y=True)
max_features, n_splits = (100, 5) if FULL else (60, 3)

# %%
# Seven alphas (the decades around the default "auto"), one path each per fold
start = time.perf_counter()
cv = ShareBoostClassifierCV(max_features=max_features, features="stumps", cv=n_splits,
                            n_jobs=2).fit(X_train, y_train)
search_time = time.perf_counter() - start
print(f"{n_splits} folds x {cv.alphas_.size} alphas: {search_time:.1f} s "
      f"with the refit")
print(f"rule 'min': alpha={cv.alpha_:.2g}, {cv.n_features_} stumps, "
      f"CV error {100 * (1 - cv.best_score_):.2f}%")

# %%
# The "1se" rule on the same scores: refit the estimator with rule="1se"
# (the paths are the same; only the choice and the refit differ)
cv_1se = clone(cv).set_params(rule="1se").fit(X_train, y_train)
print(f"rule '1se': alpha={cv_1se.alpha_:.2g}, {cv_1se.n_features_} stumps, "
      f"CV error {100 * (1 - cv_1se.best_score_):.2f}%")

# %%
# Cross-validated error against the number of stumps, one curve per alpha
mean = 1 - cv.scores_.mean(axis=0)
se = cv.scores_.std(axis=0) / np.sqrt(n_splits)
rounds = np.arange(1, max_features + 1)
fig, ax = plt.subplots(figsize=(6.6, 4.4))
colors = plt.cm.viridis(np.linspace(0, 0.9, cv.alphas_.size))
for i, alpha in enumerate(cv.alphas_):
    ax.plot(rounds, 100 * mean[i], color=colors[i], lw=1.2, label=f"alpha = {alpha:.1e}")
    ax.fill_between(rounds, 100 * (mean[i] - se[i]), 100 * (mean[i] + se[i]),
                    color=colors[i], alpha=0.15, lw=0)
for model, marker, name in ((cv, "o", "min"), (cv_1se, "s", "1se")):
    i = int(np.searchsorted(cv.alphas_, model.alpha_))
    t = model.n_features_
    ax.errorbar(t, 100 * mean[i, t - 1], yerr=100 * se[i, t - 1], fmt=marker, color="k",
                ms=7, mfc="none", capsize=3, label=f"rule '{name}': {t} stumps")
ax.set(xlabel="number of shared stumps", ylabel="cross-validated error (%)",
       yscale="log", title=f"pendigits stumps, {n_splits}-fold CV"
       + ("" if FULL else " (quick mode)"))
ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
ax.yaxis.set_minor_formatter(FormatStrFormatter("%g"))
ax.legend(fontsize=8, ncol=2)
ax.grid(True, which="both", alpha=0.3)
fig.tight_layout()

# %%
# The two refitted models on the test set
for name, model in (("min", cv), ("1se", cv_1se)):
    print(f"rule '{name}': test error {100 * (1 - model.score(X_test, y_test)):.2f}% "
          f"with {model.n_features_} stumps (alpha={model.alpha_:.2g})")
