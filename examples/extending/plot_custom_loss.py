"""
===================
Write your own loss
===================

A loss of mcsparse in one Python file: the label-smoothing cross-entropy, with
targets ``q = (1 - eps) e_y + eps / k``, loss ``-sum_j q_j log p_j`` and
gradient ``p - q`` (``p`` the soft-max of the scores). Its Hessian is the
soft-max's ``diag(p) - p p^T``, the default, and it is shift invariant.
"""

# %%
# The loss: a NumPy function of a block of rows, wrapped in a row kernel
import matplotlib.pyplot as plt
import numpy as np

from mcsparse.datasets import load_pendigits
from mcsparse.estimators import ShareBoostClassifier
from mcsparse.loss import Loss, NumpyRowKernel


class LabelSmoothing(Loss):
    shift_invariant = True

    def __init__(self, eps=0.1):
        self.eps = eps
        self.kernel = NumpyRowKernel(self.rows_loss)

    def rows_loss(self, scores, y):
        m = scores.max(axis=1, keepdims=True)
        log_p = scores - m - np.log(np.exp(scores - m).sum(axis=1, keepdims=True))
        q = np.full_like(scores, self.eps / scores.shape[1])
        q[np.arange(len(y)), y] += 1.0 - self.eps
        return -(q * log_p).sum(axis=1), np.exp(log_p) - q


# %%
# Fit both losses on pendigits and follow the test error along the path
X, y = load_pendigits(return_X_y=True)
X_test, y_test = load_pendigits(subset="test", return_X_y=True)
n_features = np.arange(1, 9)
plt.figure(figsize=(5, 3.5))
for loss in (LabelSmoothing(0.1), "softmax"):
    clf = ShareBoostClassifier(loss=loss, n_features_to_select=8).fit(X / 100, y)
    errors = [np.mean(p != y_test) for p in clf.staged_predict(X_test / 100)]
    name = loss if isinstance(loss, str) else "label smoothing 0.1"
    print(f"{name}: test error {errors[-1]:.4f} with {len(errors)} features")
    plt.plot(n_features[:len(errors)], errors, marker="o", label=name)
plt.xlabel("number of features")
plt.ylabel("test error")
plt.legend()
plt.tight_layout()
plt.show()
