"""
==================================================
The ShareBoost path on pendigits pairwise products
==================================================

One ShareBoost fit gives the whole path: the model after 1, 2, ..., T rounds,
each using that many shared features (columns of ``W``). This example plots
the test error along the path on the UCI pendigits data, expanded to the 120
pairwise products of its 16 features divided by 100 (the expansion of Fig. 3
of [SWS2011]_), and compares it with a dense multinomial logistic regression
on all 120 features.

The bare loss of eq. (3) has no minimiser once the selected features separate
some classes, so the late path depends on where the refit stops. A small
Frobenius penalty ``alpha`` (§3.3) fixes that; here it is chosen by 3-fold
cross-validation on the **training set only**, as is the regularisation of the
logistic-regression baseline. The test set is used once, for the plot.

Quick mode (the default in the docs build) searches two values of ``alpha``;
``MCSPARSE_FULL=1`` searches four.
"""

# %%
# Data: 7494 training and 3498 test digits, 120 pairwise products
import os
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, StratifiedKFold

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import PairwiseProducts

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")

X_train, y_train = load_pendigits(subset="train", return_X_y=True)
X_test, y_test = load_pendigits(subset="test", return_X_y=True)
products = PairwiseProducts().fit(X_train / 100)
X_train = products.transform(X_train / 100)
X_test = products.transform(X_test / 100)
print(f"train {X_train.shape}, test {X_test.shape}")

# %%
# ShareBoost with the paper's bare loss (alpha = 0), and with alpha chosen
# by cross-validation on the training set
n_rounds = 40
cv = StratifiedKFold(3, shuffle=True, random_state=0)
alphas = [0.0, 1e-6, 1e-5, 1e-4] if FULL else [0.0, 1e-5]

with warnings.catch_warnings():
    # at alpha = 0 some refits stop at max_iter: the loss has no minimiser there
    warnings.simplefilter("ignore", ConvergenceWarning)
    start = time.perf_counter()
    bare = ShareBoostClassifier(n_features_to_select=n_rounds, fit_intercept=False,
                                alpha=0.0)
    bare.fit(X_train, y_train)
    bare_time = time.perf_counter() - start
    search = GridSearchCV(
        ShareBoostClassifier(n_features_to_select=n_rounds, fit_intercept=False),
        {"alpha": alphas}, cv=cv, n_jobs=2,
    ).fit(X_train, y_train)
tuned = search.best_estimator_
alpha = search.best_params_["alpha"]
print(f"one ShareBoost fit (alpha=0, {n_rounds} rounds): {bare_time:.1f} s")
print(f"alpha chosen on the training set among {alphas}: {alpha:g}")

# %%
# The dense baseline: multinomial logistic regression on all 120 features,
# its C chosen by cross-validation on the training set
logreg = GridSearchCV(LogisticRegression(max_iter=2000),
                      {"C": np.logspace(-1, 4, 6)}, cv=cv, n_jobs=2)
logreg.fit(X_train, y_train)
print(f"logistic regression: C = {logreg.best_params_['C']:g}")
logreg_error = np.mean(logreg.predict(X_test) != y_test)

# %%
# Test error along the path
rounds = np.arange(1, n_rounds + 1)


def path_errors(model):
    """Test error after each round; a path that converged early keeps its last model."""
    errors = [np.mean(p != y_test) for p in model.staged_predict(X_test)]
    return np.array(errors + errors[-1:] * (n_rounds - len(errors)))


bare_errors, tuned_errors = path_errors(bare), path_errors(tuned)

fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.plot(rounds, 100 * bare_errors, "o-", ms=3, label="ShareBoost, alpha = 0 (eq. 3)")
ax.plot(rounds, 100 * tuned_errors, "s-", ms=3,
        label=f"ShareBoost, alpha = {alpha:g} (CV on train)")
ax.axhline(100 * logreg_error, color="k", ls="--",
           label=f"logistic regression, all {X_train.shape[1]} features")
ax.set(xlabel="number of selected features", ylabel="test error (%)",
       yscale="log", title="pendigits, 120 pairwise products"
       + ("" if FULL else " (quick mode)"))
ax.legend()
ax.grid(True, which="both", alpha=0.3)
fig.tight_layout()

# %%
# The numbers
for t in (10, 25, 40):
    print(f"{t:>2} features: ShareBoost {100 * bare_errors[t - 1]:.2f}% (alpha=0), "
          f"{100 * tuned_errors[t - 1]:.2f}% (alpha={alpha:g})")
print(f"logistic regression on all 120 features: {100 * logreg_error:.2f}%")
