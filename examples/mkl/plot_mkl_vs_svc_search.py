"""
One MKL fit against a grid-searched RBF SVC
===========================================

The promise of multiple kernel learning: give it a bank of Gaussian kernels
and one fit finds the right mixture, instead of a search over kernel widths.
This example measures that promise against what a researcher would do
instead, scikit-learn's ``GridSearchCV(SVC(), {"C": ..., "gamma": ...})``,
in the same runs:

* data sets of at most 1500 samples, features scaled to [-1, 1], stratified
  80/20 splits (10 in a full run), the test part used once;
* **SVC**: ``C`` in {1, 10, 100, 1000} times the 9 widths ``gamma = 1 /
  (2 tau)``, ``tau`` in :func:`mcsparse.kernels.scale_bandwidths` of the
  training part: the widths the MKL bank combines;
* **MKL**: UFO-, Conv- and SMSD-MKL with their defaults, only ``C`` in {1,
  10, 100, 1000} searched: the bank of those 9 widths (``bandwidths="scale"``)
  and the predictor each uses by default (the exact SVM on the learnt
  combined kernel, ``final="svc"``, for Conv- and SMSD-MKL; the last iterate
  for UFO-MKL); and, to show why those defaults, each with the other
  ``final`` (marked "other final");
* every choice by the same 3 stratified folds of the training part; the
  time of a search includes its final refit.

**Full run** (``MCSPARSE_FULL=1 python plot_mkl_vs_svc_search.py`` from this
folder, ``MCSPARSE_DATA`` set): the six data sets of the paper's Table 1
(iris, wine, vowel, segment, satimage, dna) and four more (letter,
pendigits, scikit-learn's digits, Chars74K fonts), 10 splits. It
saves its numbers in ``results/mkl_vs_svc.json`` beside this example, which
quick mode (iris and wine, 3 splits, for the documentation) draws.
"""

# %%
import os
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn import datasets as sk_datasets
from sklearn.model_selection import GridSearchCV, StratifiedKFold, StratifiedShuffleSplit
from sklearn.svm import SVC

import mcsparse.datasets as datasets
from mcsparse import ConvMKLClassifier, SMSDMKLClassifier, UFOMKLClassifier
from mcsparse.kernels import forget_tail_sums, scale_bandwidths
from mcsparse.utils.records import load_full_run, save_full_run

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
# this file (sphinx-gallery runs an example from its folder and defines no __file__)
SCRIPT = Path(globals().get("__file__", "plot_mkl_vs_svc_search.py")).resolve()
RECORD = SCRIPT.parent / "results" / "mkl_vs_svc.json"

if FULL:
    DATASETS = ["iris", "wine", "vowel", "segment", "satimage", "dna", "letter",
                "pendigits", "digits", "chars74k"]
    N_SPLITS = 10
else:
    DATASETS, N_SPLITS = ["iris", "wine"], 3
MAX_SAMPLES = 1500
CS = [1, 10, 100, 1000]
# the MKL models: the estimators at their defaults (only random_state set), and
# each with the final predictor it does not use by default
MKL = {"UFO": UFOMKLClassifier, "Conv": ConvMKLClassifier, "SMSD": SMSDMKLClassifier}
OTHER_FINAL = {"last_iterate": "svc", "svc": "last_iterate"}


def load(name):
    """A data set by name, at most MAX_SAMPLES rows (a fixed draw), scaled to [-1, 1]."""
    if name in ("iris", "digits"):
        X, y = getattr(sk_datasets, f"load_{name}")(return_X_y=True)
    elif hasattr(datasets, f"load_{name}"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    else:
        X, y = datasets.load_libsvm(name, subset="all" if name == "dna" else "train",
                                    return_X_y=True)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    y = np.asarray(y)
    if X.shape[0] > MAX_SAMPLES:
        keep = np.random.default_rng(0).choice(X.shape[0], MAX_SAMPLES, replace=False)
        X, y = X[keep], y[keep]
    low, high = X.min(axis=0), X.max(axis=0)
    return 2 * (X - low) / np.where(high > low, high - low, 1.0) - 1, y


def timed_search(estimator, grid, cv, X, y, X_test, y_test):
    """Test accuracy and seconds of ``GridSearchCV(estimator, grid, cv)`` (refit included).

    From scratch: the tail sums an earlier search remembered are forgotten
    first, so that each search pays for its own (once per fold).
    """
    forget_tail_sums()
    start = time.perf_counter()
    search = GridSearchCV(estimator, grid, cv=cv).fit(X, y)
    return float(search.score(X_test, y_test)), time.perf_counter() - start


def run_split(X, y, train, test, split):
    """One split: the SVC's search and every MKL model's; (accuracy, seconds) per model."""
    X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    cv = StratifiedKFold(3, shuffle=True, random_state=split)
    gammas = list(1.0 / (2.0 * scale_bandwidths(X_train)))
    out = {"SVC": timed_search(SVC(), {"C": CS, "gamma": gammas}, cv, X_train, y_train,
                               X_test, y_test)}
    for name, Est in MKL.items():
        model = Est(random_state=split)
        out[name] = timed_search(model, {"C": CS}, cv, X_train, y_train, X_test, y_test)
    for name, Est in MKL.items():
        other = Est(random_state=split, final=OTHER_FINAL[Est().final])
        out[f"{name}, other final"] = timed_search(other, {"C": CS}, cv, X_train, y_train,
                                                   X_test, y_test)
    return out


# %%
# The runs
# --------
#
# One line per data set; every split runs all the searches one after the
# other, so that each time ratio compares searches run under the same load.
warnings.simplefilter("ignore")  # convergence notes of the short searches
runs = {}
for name in DATASETS:
    X, y = load(name)
    splitter = StratifiedShuffleSplit(N_SPLITS, test_size=0.2, random_state=0)
    runs[name] = [run_split(X, y, train, test, split)
                  for split, (train, test) in enumerate(splitter.split(X, y))]
    print(f"{name} {X.shape}: done", flush=True)


def summary(runs):
    """Mean test accuracy (%) and mean search time relative to the SVC's, per model."""
    rows = {}
    for name, splits in runs.items():
        models = list(splits[0])
        acc = {m: 100 * np.mean([s[m][0] for s in splits]) for m in models}
        std = {m: 100 * np.std([s[m][0] for s in splits]) for m in models}
        sec = {m: np.mean([s[m][1] for s in splits]) for m in models}
        for m in models:
            rows[(name, m)] = {"accuracy": acc[m], "std": std[m], "seconds": sec[m],
                               "time / SVC": sec[m] / sec["SVC"],
                               "gap to SVC": acc[m] - acc["SVC"]}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis(["data set", "model"])


table = summary(runs)
table.round(2)

# %%
# The best MKL model of each data set, against the SVC


def best_mkl(table):
    """Per data set, the default MKL model of largest mean accuracy: its gap and time ratio."""
    defaults = table[table.index.get_level_values("model").isin(list(MKL))]
    best = defaults.groupby(level="data set", sort=False)["accuracy"].idxmax()
    return table.loc[best.tolist(), ["accuracy", "gap to SVC", "time / SVC"]].round(2)


best_mkl(table)

# %%
# The full run's record
# ---------------------
#
# A full run saves its per-split numbers in ``results/mkl_vs_svc.json``, with
# the command and the commit; quick mode reads them back.
if FULL:
    save_full_run(RECORD, {"n_splits": N_SPLITS, "max_samples": MAX_SAMPLES, "Cs": CS,
                           "runs": runs}, script=SCRIPT)
    print(f"saved {RECORD.name}")
full = None if FULL else load_full_run(RECORD)
if full is not None:
    r = full["results"]
    print(f"full run of {full['date']} (commit {full['commit'][:10]}, {full['cpus']} "
          f"cores): {len(r['runs'])} data sets, {r['n_splits']} splits")
    full_table = summary(r["runs"])
    print(best_mkl(full_table).to_string())

# %%
# Accuracy gap and search time, per data set
# ------------------------------------------
#
# Left: each model's mean test accuracy minus the SVC's (points; the band is
# +-1 point). Right: the time of each model's search over ``C`` divided by
# the SVC's search over ``C x gamma`` (log scale; below 1, MKL is faster).


def plot(table, title):
    models = [m for m in table.index.get_level_values("model").unique() if m != "SVC"]
    names = list(table.index.get_level_values("data set").unique())
    height_in = 2.2 + 0.8 * len(names)
    fig, (ax_acc, ax_time) = plt.subplots(1, 2, figsize=(11, height_in), sharey=True)
    ypos = np.arange(len(names))
    height = 0.8 / len(models)
    for i, m in enumerate(models):
        part = table.xs(m, level="model").loc[names]
        offset = ypos - 0.4 + (i + 0.5) * height
        ax_acc.barh(offset, part["gap to SVC"], height, color=f"C{i}", label=m)
        ax_time.barh(offset, part["time / SVC"], height, color=f"C{i}")
    ax_acc.axvspan(-1, 1, color="0.9", zorder=0)
    ax_acc.axvline(0, color="k", lw=0.8)
    ax_time.axvline(1, color="k", lw=0.8)
    ax_time.set_xscale("log")
    ax_acc.set_yticks(ypos, names)
    ax_acc.invert_yaxis()
    ax_acc.set_xlabel("test accuracy minus the SVC's (points)")
    ax_time.set_xlabel("search time / the SVC's search time")
    ax_acc.set_title("accuracy, " + title)
    ax_time.set_title("time of the search, " + title)
    fig.legend(*ax_acc.get_legend_handles_labels(), loc="lower center", ncol=4, fontsize=8)
    fig.tight_layout(rect=(0, 0.75 / height_in, 1, 1))  # room for the legend


plot(table, f"{N_SPLITS} splits" + ("" if FULL else " (quick mode)"))
if full is not None:
    plot(full_table, f"{full['results']['n_splits']} splits, full run of {full['date']}")
plt.show()
