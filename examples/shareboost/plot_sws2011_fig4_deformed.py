"""
================================================================
MNIST with deformed training digits (§7.4, 360,000 examples)
================================================================

[SWS2011]_ (§7.4, Table 1) reports a second MNIST number besides Fig. 4's
0.71%: **0.47% test error after 305 rounds** when the training set is
expanded to 360,000 examples by five deformed copies of each training digit,
after the warping scheme of Simard et al. (2003) that it cites. This example
builds that expansion and runs the same pipeline on it.

**Deformations** (:func:`~mcsparse.datasets.deform_images`): each copy of a
digit gets its own random affine map about the image centre (rotation up to
10 degrees, scale 90% to 110%, shear up to 0.15), sampled by bilinear
interpolation. The paper does not give its parameters. The maps were chosen
on held-out training digits (``python asv_benchmarks/mnist_heldout.py
--variants ncc ncc+2-affine ncc+2-mild ncc+2-deformed``: 50,000 digits and
two copies each to fit, the last 10,000 to score, three seeds): these affine
maps gave 0.89% at 100 rounds, against 0.98% without copies, 0.92% for
milder affine maps and 1.09% with Simard et al.'s elastic field added
(alpha 34, sigma 4 pixels), which an earlier run of this example used.

**Memory.** 360,000 digits x 16,000 (template, mask) pairs is 23 GB in
float32, more than this 24 GB machine can hold beside the rest, and far
beyond the 8 GB that the other examples keep to. The family keeps it as
8-bit codes instead (``ConvMaxTemplates(training_store="uint8")``: 5.8 GB,
computed and coded 1024 digits at a time, each block's columns with their
own offset and step); each round scans the codes, and the selected pairs'
columns, which the refit uses, are computed exactly from the training
images.

**Protocol.** The response (the damped NCC) and ``alpha=3e-6`` are those
the Fig. 4 example chose on its held-out part of the training set; they
were not searched again on the expanded set (a search costs an hour a
point here). The templates are learnt on the expanded training set (k-means
seed 0). The test set is used only to draw the curve.

**Full run** (``MCSPARSE_FULL=1 python
examples/shareboost/plot_sws2011_fig4_deformed.py``, 2 cores, 2026-12-05,
the affine maps): test error 1.00% at 75 rounds, 0.78% at 100, 0.64% at
266 and **0.64% at 305**, against the paper's 0.47%. That is lower than
the mean curve of the 60,000 digits of Fig. 4 (three seeds: 1.03, 0.82,
0.66 and 0.68% at 300) at 257 of the first 300 rounds and never above it
after round 191, but it is one seed, and 0.17 point short of the paper at
305. The earlier run with the elastic field (2026-12-03) gave 1.20, 0.97,
0.73 and 0.68%. The fit took 1677 s and the process peaked at 7.8 GB;
1.97e6 multiply-accumulates per test image. The record
``results/fig4_deformed.json`` beside this example holds the curve; the
:doc:`results page </results>` says what would come next. Quick mode
(the docs build) uses 3000 training digits with two deformed copies each,
1000 test digits, 100 templates and 60 rounds, and fits the same pipeline on
the undeformed digits beside it.
"""

# %%
# Data and parameters
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import PercentFormatter
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import deform_images, load_mnist
from mcsparse.features import ConvMaxTemplates
from mcsparse.utils.records import load_full_run, save_full_run

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
# sphinx-gallery runs an example from its folder and defines no __file__
SCRIPT = Path(globals().get("__file__", "plot_sws2011_fig4_deformed.py")).resolve()
RECORD = SCRIPT.parent / "results" / "fig4_deformed.json"
FIG4_RECORD = SCRIPT.parent / "results" / "fig4_mnist_rounds.json"
X_train, y_train = load_mnist(subset="train", return_X_y=True)
X_test, y_test = load_mnist(subset="test", return_X_y=True)
if FULL:
    n_copies, n_templates, n_rounds = 5, 1000, 305
    # chosen by the Fig. 4 example on its held-out training digits
    response, alpha = "ncc", 3e-6
else:
    X_train, y_train = X_train[:3000], y_train[:3000]
    X_test, y_test = X_test[:1000], y_test[:1000]
    n_copies, n_templates, n_rounds = 2, 100, 60
    response, alpha = "ncc", 1e-5
X_train = (X_train / 255.0).astype(np.float32)
X_test = (X_test / 255.0).astype(np.float32)
# chosen on held-out training digits (the docstring above): affine maps, no
# elastic field
deformation = {"max_rotation": 10.0, "max_scale": 0.1, "max_shear": 0.15,
               "elastic_alpha": 0.0}

# %%
# Five deformed copies of each training digit
#
# Copy ``c`` of digit ``i`` is row ``c * n + i``, so the labels are tiled.
t0 = time.perf_counter()
X_deformed = deform_images(X_train, n_copies, random_state=0, **deformation)
X_expanded = np.concatenate([X_train, X_deformed])
y_expanded = np.tile(y_train, n_copies + 1)
deform_seconds = time.perf_counter() - t0
del X_deformed
print(f"{len(X_train)} digits + {n_copies} deformed copies each = {len(X_expanded)} "
      f"training examples ({deform_seconds:.0f} s); test {X_test.shape}")

fig, axes = plt.subplots(4, n_copies + 1, figsize=(1.1 * (n_copies + 1), 4.6))
for row, i in enumerate([0, 1, 2, 7]):
    for c in range(n_copies + 1):
        axes[row, c].imshow(X_expanded[c * len(X_train) + i].reshape(28, 28), cmap="gray_r")
        axes[row, c].set_axis_off()
    axes[0, 0].set_title("original", fontsize=8)
for c in range(1, n_copies + 1):
    axes[0, c].set_title(f"copy {c}", fontsize=8)
fig.tight_layout()
plt.show()


# %%
# ShareBoost on the expanded set
#
# One line per round in the full run (``verbose``); late refits may stop at
# their iteration cap, which the path reports with a ConvergenceWarning.
def pipeline(X, y, verbose=0):
    family = ConvMaxTemplates(n_templates=n_templates, response=response,
                              training_store="uint8", n_jobs=2, random_state=0)
    return ShareBoostClassifier(features=family, n_features_to_select=n_rounds,
                                alpha=alpha, verbose=verbose).fit(X, y)


def test_curve(clf):
    return np.array([np.mean(p != y_test) for p in clf.staged_predict(X_test)])


warnings.simplefilter("ignore", ConvergenceWarning)
t0 = time.perf_counter()
clf = pipeline(X_expanded, y_expanded, verbose=int(FULL))
fit_seconds = time.perf_counter() - t0
del X_expanded
curve = test_curve(clf)
macs = clf.features_.macs_per_image(clf.selected_features_, n_classes=10, X=X_test)
# ru_maxrss is in kB on Linux, in bytes on macOS
peak_gb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
           / (2**30 if sys.platform == "darwin" else 2**20))
checkpoints = [t for t in (75, 100, 200, 266, 305) if t < n_rounds] + [n_rounds]
print(f"fit (templates, the coded matrix, {n_rounds} rounds) {fit_seconds:.0f} s; "
      f"peak memory of the process {peak_gb:.1f} GB")
for t in checkpoints:
    print(f"round {t:>3}: test error {100 * curve[t - 1]:.2f}%")
print(f"multiply-accumulates per test image at {n_rounds} rounds: {macs:.3g}")
print("paper (§7.4): 0.47% at 305 rounds with 360,000 deformed examples")
baseline = None
if not FULL:
    baseline = test_curve(pipeline(X_train, y_train))
    print(f"same pipeline on the {len(X_train)} undeformed digits: test error "
          f"{100 * baseline[-1]:.2f}% at {n_rounds} rounds")

# %%
# The full run's record
if FULL:
    save_full_run(RECORD, {
        "n_train": len(y_expanded), "n_original": len(X_train), "n_copies": n_copies,
        "deformation": deformation, "n_test": len(X_test), "n_templates": n_templates,
        "response": response, "alpha": alpha, "training_store": "uint8",
        "test_error": curve, "deform_seconds": deform_seconds,
        "fit_seconds": fit_seconds, "macs_per_image": macs, "peak_memory_gb": peak_gb},
        script=SCRIPT)
    print(f"saved {RECORD.name}")
full = None if FULL else load_full_run(RECORD)
if full is not None:
    r = full["results"]
    print(f"full run of {full['date']} (commit {full['commit'][:10]}, {full['cpus']} "
          f"cores): {r['n_train']} training examples, fit {r['fit_seconds']:.0f} s, peak "
          f"{r['peak_memory_gb']:.1f} GB")
    for t in (75, 100, 200, 266, 305):
        print(f"  round {t:>3}: test error {100 * r['test_error'][t - 1]:.2f}%")

# %%
# Test error per round, beside the undeformed training set and the paper
#
# The undeformed full-run curve is the Fig. 4 example's (its record, k-means
# seed 0). Linear axes from 0 to 5%: the early rounds are cut off.
fig, ax = plt.subplots(figsize=(6.4, 4.2))
mode = "full run" if FULL else "quick mode"
rounds = np.arange(1, n_rounds + 1)
ax.plot(rounds, 100 * curve, color="C0",
        label=f"{mode}: {len(y_expanded)} examples ({n_copies} deformed copies)")
if baseline is not None:
    ax.plot(rounds, 100 * baseline, color="C1", label=f"{mode}: {len(X_train)} digits")
for name, record, color in (("deformed", full, "C3"),
                            ("undeformed, Fig. 4 seed 0", load_full_run(FIG4_RECORD),
                             "C2")):
    if record is None:
        continue
    r = record["results"]
    full_curve = np.array(r.get("per_seed", {}).get("test_error", [r["test_error"]])[0])
    ax.plot(np.arange(1, len(full_curve) + 1), 100 * full_curve, color=color, ls="--",
            lw=0.8, label=f"full run, {name} ({r['n_train']} examples, {record['date']})")
ax.plot([266, 305], [0.71, 0.47], "k*", ms=10,
        label="paper: 0.71% (60,000), 0.47% (360,000)")
ax.set_ylim(0, 5)
ax.set_xlim(0, 315 if FULL or full is not None else n_rounds)
ax.yaxis.set_major_formatter(PercentFormatter(decimals=1))
ax.set_xlabel("rounds (selected template-mask pairs)")
ax.set_ylabel("test error")
ax.set_title("MNIST, deformed training digits" + ("" if FULL else " (quick mode)"))
ax.grid(True, alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
