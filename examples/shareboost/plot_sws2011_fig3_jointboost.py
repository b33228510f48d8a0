"""
===========================================================
ShareBoost with decision stumps against JointBoost (Fig. 3)
===========================================================

This example reproduces the bottom row of Fig. 3 of [SWS2011]_ (§7.2): test
error against the number of decision stumps, for ShareBoost over all stumps
(:class:`~mcsparse.features.DecisionStumps`, every threshold of every
feature scanned each round) and for JointBoost [TMF2007]_
(:class:`~mcsparse.JointBoostClassifier`: GentleBoost rounds, each adding one
regression stump shared by a subset of classes found by greedy best-first
search), with both training times.

The paper's claim: "ShareBoost decreases the error much faster [...]. The
training runtime of ShareBoost is also much shorter than that of
JointBoost", and, with more stumps, "ShareBoost starts to overfit".

Both use the original features (stumps need no products). ShareBoost runs
with the paper's bare loss (``alpha=0``, no hyper-parameter); JointBoost has
none either. The paper's third data set, ISOLET, is not available here: the
UCI letter data (26 classes, 16 features) stands in for it. The test sets
are the data sets' own test splits, used only to draw the curves.

**Beside the boosting libraries.** What a researcher would use for stumps
today is gradient boosting: LightGBM with two leaves per tree (one stump
per class and iteration) and XGBoost with depth-1 trees shared by all
classes (``multi_strategy="multi_output_tree"``: one stump per round, with
a vector of leaf values, the closest to ShareBoost's shared stumps). Both
run on the same data, one thread each, with the learning rate 0.3 and
twice (LightGBM) or ten times (XGBoost) as many rounds as ShareBoost; their
curves are drawn against the number of stumps they use (``pip install
".[compare]"`` installs them; without them the example skips them).

Quick mode (the docs build) trains on at most 3000 samples and runs 40
rounds; ``MCSPARSE_FULL=1`` uses the whole training sets and 100 rounds.
"""

# %%
# Data: satimage (6 classes), pendigits (10), letter (26)
import os
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import FixedLocator, NullFormatter, PercentFormatter
from sklearn.exceptions import ConvergenceWarning

from mcsparse import JointBoostClassifier, ShareBoostClassifier
from mcsparse.datasets import load_letter, load_pendigits, load_satimage
from mcsparse.utils.records import load_full_run, save_full_run

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
# the full run's curves and times, committed beside this example
# this file (sphinx-gallery runs an example from its folder and defines no __file__)
SCRIPT = Path(globals().get("__file__", "plot_sws2011_fig3_jointboost.py")).resolve()
RECORD = SCRIPT.parent / "results" / "fig3_jointboost.json"
n_rounds = 100 if FULL else 40
max_train = None if FULL else 3000

datasets = {}
for name, loader, scale in [("satimage", load_satimage, 255.0),
                            ("pendigits", load_pendigits, 100.0),
                            ("letter", load_letter, 15.0)]:
    X, y = loader(subset="train", return_X_y=True)
    X_test, y_test = loader(subset="test", return_X_y=True)
    if max_train is not None and X.shape[0] > max_train:
        keep = np.random.default_rng(0).choice(X.shape[0], max_train, replace=False)
        X, y = X[keep], y[keep]
    datasets[name] = (X / scale, y, X_test / scale, y_test)
    print(f"{name}: train {X.shape}, test {X_test.shape}, "
          f"{np.unique(y).size} classes")

# %%
# Fit both; record the test error after every round
results = {}
for name, (X, y, X_test, y_test) in datasets.items():
    with warnings.catch_warnings():
        # alpha = 0: late refits may stop at max_iter on nearly separable data
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = time.perf_counter()
        share = ShareBoostClassifier(n_features_to_select=n_rounds, features="stumps",
                                     alpha=0.0).fit(X, y)
        share_time = time.perf_counter() - start
    refit_iterations = share.refit_n_iter_.mean()
    start = time.perf_counter()
    joint = JointBoostClassifier(n_estimators=n_rounds).fit(X, y)
    joint_time = time.perf_counter() - start
    results[name] = {
        "n_train": len(X),
        # a path that converged before n_rounds keeps its last model
        "ShareBoost": ([np.mean(p != y_test) for p in share.staged_predict(X_test)]
                       + [np.mean(share.predict(X_test) != y_test)] * (n_rounds
                                                                       - share.n_iter_)),
        "JointBoost": [np.mean(p != y_test) for p in joint.staged_predict(X_test)],
        "times": (share_time, joint_time),
    }
    print(f"{name}: ShareBoost {share_time:.1f} s ({refit_iterations:.0f} refit "
          f"iterations per round on average), JointBoost {joint_time:.1f} s "
          f"for {n_rounds} stumps", flush=True)

# %%
# The paper's claim beside our numbers: test error (%) at 10, 20, 40 stumps
checkpoints = [t for t in (10, 20, 40, 100) if t <= n_rounds]
print("data set    method      " + "".join(f"{t:>7d}" for t in checkpoints)
      + "   train time")
for name, res in results.items():
    for i, method in enumerate(("ShareBoost", "JointBoost")):
        errors = "".join(f"{100 * res[method][t - 1]:7.2f}" for t in checkpoints)
        print(f"{name:10s}  {method:10s}  {errors}   {res['times'][i]:8.1f} s")
print("Paper (Fig. 3, bottom): ShareBoost's error falls much faster than "
      "JointBoost's, and it trains much faster.")

# %%
# Beside LightGBM and XGBoost
#
# Each boosting round of LightGBM adds one stump per class; XGBoost's
# ``multi_output_tree`` adds one stump shared by all classes. The test error
# is read after every round, against the number of stumps used so far.


def boosting_anchors(X, y, X_test, y_test):
    """``{name: {"stumps", "errors", "time"}}`` of the installed boosting libraries."""
    n_classes = np.unique(y).size
    anchors = {}
    try:
        from lightgbm import LGBMClassifier
    except ImportError:
        print("LightGBM is not installed (pip install '.[compare]'): skipped")
    else:
        start = time.perf_counter()
        model = LGBMClassifier(n_estimators=2 * n_rounds, num_leaves=2, learning_rate=0.3,
                               n_jobs=1, verbose=-1).fit(X, y)
        spent = time.perf_counter() - start
        iterations = np.arange(1, 2 * n_rounds + 1)
        anchors["LightGBM"] = {
            "stumps": iterations * n_classes, "time": spent,
            "errors": [np.mean(model.predict(X_test, num_iteration=t) != y_test)
                       for t in iterations]}
    try:
        from xgboost import XGBClassifier
    except ImportError:
        print("XGBoost is not installed (pip install '.[compare]'): skipped")
    else:
        y_codes = np.unique(y, return_inverse=True)[1]  # XGBoost wants labels 0 .. K-1
        start = time.perf_counter()
        model = XGBClassifier(n_estimators=10 * n_rounds, max_depth=1, learning_rate=0.3,
                              tree_method="hist", multi_strategy="multi_output_tree",
                              n_jobs=1).fit(X, y_codes)
        spent = time.perf_counter() - start
        classes = np.unique(y)
        rounds = np.arange(1, 10 * n_rounds + 1)
        anchors["XGBoost"] = {
            "stumps": rounds, "time": spent,
            "errors": [np.mean(classes[model.predict(X_test, iteration_range=(0, t))] != y_test)
                       for t in rounds]}
    return anchors


for name, (X, y, X_test, y_test) in datasets.items():
    results[name]["anchors"] = boosting_anchors(X, y, X_test, y_test)
    for anchor, res in results[name]["anchors"].items():
        print(f"{name}: {anchor} {res['time']:.1f} s, test error {100 * res['errors'][-1]:.2f}% "
              f"with {res['stumps'][-1]} stumps (ShareBoost: "
              f"{100 * results[name]['ShareBoost'][-1]:.2f}% with {n_rounds}, "
              f"{results[name]['times'][0]:.1f} s)", flush=True)

# %%
# At equal numbers of stumps ShareBoost's error is far below the boosting
# libraries' (its refit re-weights every selected stump, theirs never change
# a tree once added), and they fit faster. Given 10 to 50 times more stumps
# they go lower on satimage and pendigits; in the full run (the result file)
# ShareBoost's 100 stumps stay ahead on letter (14.8% against LightGBM's
# 15.4% with 5,200 stumps). The case for ShareBoost is a small model (few
# stumps to evaluate), not a fast fit. The curves below show both.

# %%
# The error claim holds on all three data sets. The timing claim does not
# hold here: the paper timed the authors' JointBoost code, while mcsparse's
# JointBoost scores all thresholds and class subsets with vectorised sums and
# is faster than ShareBoost per stump. ShareBoost's time is not in the stump
# scan (a few milliseconds per round, see the ``StumpScan`` benchmark) but in
# the fully corrective refit of all selected stumps. With the paper's bare
# loss (``alpha=0``) a training set that the selected stumps separate
# (pendigits soon does) leaves the refit without a minimiser, and the later
# refits run to ``max_iter``: that is where the many iterations printed above
# come from. With a small penalty the refit converges in a few iterations a
# round (100 stumps on pendigits with ``alpha=1e-4``: about 1 s, see the
# ``StumpsShareBoostVsLightGBM`` benchmark). The refit is what buys the faster
# fall of the error.

# %%
# The full run's record
#
# A full run saves its curves and times in ``results/fig3_jointboost.json``
# beside this example, with its command and commit; quick mode draws them
# beside its own curves.
if FULL:
    save_full_run(RECORD, {"n_rounds": n_rounds, "data_sets": results}, script=SCRIPT)
    print(f"saved {RECORD.name}")
full = None if FULL else load_full_run(RECORD)
if full is not None:
    print(f"full run of {full['date']} (commit {full['commit'][:10]}, {full['cpus']} cores), "
          "test error (%) at " + ", ".join(str(t) for t in (10, 20, 40, 100)) + " stumps:")
    for name, res in full["results"]["data_sets"].items():
        for i, method in enumerate(("ShareBoost", "JointBoost")):
            errors = "  ".join(f"{100 * res[method][t - 1]:.2f}" for t in (10, 20, 40, 100))
            print(f"  {name:10s} {method:10s} {errors}   {res['times'][i]:.1f} s "
                  f"({res['n_train']} training samples)")

# %%
# Fig. 3 (bottom): one panel per data set
mode = "full run" if FULL else "quick mode"
for name, res in results.items():
    fig, ax = plt.subplots(figsize=(8, 3.8))
    rounds = np.arange(1, n_rounds + 1)
    colors = {"ShareBoost": "C0", "JointBoost": "C1"}
    for i, method in enumerate(("ShareBoost", "JointBoost")):
        ax.plot(rounds, 100 * np.array(res[method]), color=colors[method],
                label=f"{method}, {mode} ({res['n_train']} samples, {res['times'][i]:.1f} s)")
    for (anchor, run), color in zip(res.get("anchors", {}).items(), ("C2", "C4")):
        ax.plot(run["stumps"], 100 * np.array(run["errors"]), color=color, lw=1,
                label=f"{anchor}, {mode} ({run['time']:.1f} s)")
    if full is not None and name in full["results"]["data_sets"]:
        ref = full["results"]["data_sets"][name]
        for i, method in enumerate(("ShareBoost", "JointBoost")):
            curve = 100 * np.array(ref[method])
            ax.plot(np.arange(1, curve.size + 1), curve, color=colors[method], ls="--",
                    label=f"{method}, full run ({ref['n_train']} samples, "
                    f"{ref['times'][i]:.1f} s, {full['date']})")
    # log axis (the error falls from tens of percent), labelled in percent
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(FixedLocator([1, 2, 5, 10, 20, 50, 100]))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
    if res.get("anchors"):
        ax.set_xscale("log")  # the boosting libraries use many more stumps
    ax.set_xlabel("number of stumps")
    ax.set_ylabel("test error")
    ax.set_title(f"Fig. 3 (bottom): {name}" + ("" if FULL else " (quick mode)"))
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
plt.show()
