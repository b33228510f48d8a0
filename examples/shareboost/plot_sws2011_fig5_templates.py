"""
==================================================================
MNIST: the first 30 selected templates and their weights (Fig. 5)
==================================================================

This example reproduces Fig. 5 of [SWS2011]_ (§7.4): (a) the first 30
(template, mask) pairs ShareBoost selects on MNIST, and (b) their columns of
``W``, which say how much each pair's response votes for each digit.

The model is the one of :ref:`the Fig. 4 example
<sphx_glr_auto_examples_shareboost_plot_sws2011_fig4_mnist_rounds.py>`:
:class:`~mcsparse.features.ConvMaxTemplates` (k-means templates of 7x7
patches, 16 Gaussian masks each) and ShareBoost with a Frobenius penalty.
``alpha`` is the value that example selects on a held-out part of the
*training* set in its full run (``MCSPARSE_MNIST_ALPHA`` overrides it).

Quick mode (the docs build) uses 5000 training digits, 250 templates and 100
rounds; ``MCSPARSE_FULL=1`` uses the 60,000 training digits, 1000 templates
and 300 rounds (about 8 minutes on 2 cores).
"""

# %%
# Fit the model
import os
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_mnist
from mcsparse.features import ConvMaxTemplates

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
X, y = load_mnist(subset="train", return_X_y=True)
if FULL:
    n_templates, n_rounds, alpha = 1000, 300, 3e-5
else:
    X, y = X[:5000], y[:5000]
    n_templates, n_rounds, alpha = 250, 100, 1e-4
alpha = float(os.environ.get("MCSPARSE_MNIST_ALPHA", alpha))
X = (X / 255.0).astype(np.float32)

warnings.simplefilter("ignore", ConvergenceWarning)
clf = ShareBoostClassifier(
    features=ConvMaxTemplates(n_templates=n_templates, n_jobs=2, random_state=0),
    n_features_to_select=n_rounds, alpha=alpha,
).fit(X, y)
family = clf.features_
n_masks = family.masks_.shape[0]
first = clf.selected_features_[:30]
template_ids, mask_ids = first // n_masks, first % n_masks
print(f"{X.shape[0]} training digits, {n_rounds} rounds, alpha={alpha:g}")
print("first 30 selected (template, mask):", list(zip(template_ids.tolist(),
                                                      mask_ids.tolist())))

# %%
# (a) The first 30 selected templates, each above its spatial mask
#
# The template is drawn at the position where its mask peaks, on the 28x28
# frame of the digit; the grey level behind it is the mask (bright where the
# template's response counts most).
fig, axes = plt.subplots(3, 10, figsize=(10, 3.4))
patch = family.patch_size
for k, ax in enumerate(axes.ravel()):
    mask = family.masks_[mask_ids[k]]
    canvas = np.zeros(family.image_shape_)
    canvas[patch // 2: patch // 2 + mask.shape[0],
           patch // 2: patch // 2 + mask.shape[1]] = 0.35 * mask
    r, s = np.unravel_index(np.argmax(mask), mask.shape)
    template = family.templates_[template_ids[k]]
    canvas[r:r + patch, s:s + patch] = 0.5 + 0.5 * template / np.abs(template).max()
    ax.imshow(canvas, cmap="gray", vmin=0, vmax=1)
    ax.set_title(str(k + 1), fontsize=8)
    ax.axis("off")
fig.suptitle("First 30 selected templates (at their mask's peak) and masks"
             + ("" if FULL else " (quick mode)"))
fig.tight_layout()

# %%
# (b) Their columns of W in the final model
#
# Column ``j`` is the weight of the ``j``-th selected pair in each digit's
# score: a large positive entry means the pattern votes for that digit.
W = clf.coef_[:, :30]
fig, ax = plt.subplots(figsize=(10, 3.2))
limit = np.abs(W).max()
image = ax.imshow(W, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto")
ax.set_xticks(range(30), [str(k + 1) for k in range(30)], fontsize=7)
ax.set_yticks(range(10), [str(c) for c in clf.classes_])
ax.set_xlabel("selected template (selection order)")
ax.set_ylabel("digit")
fig.colorbar(image, ax=ax, label="weight")
ax.set_title(f"Columns of W for the first 30 templates ({n_rounds}-round model)"
             + ("" if FULL else " (quick mode)"))
fig.tight_layout()
plt.show()
