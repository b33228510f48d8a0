"""One MKL fit against a grid-searched RBF SVC: accuracy and time over 10 splits.

The promise of multiple kernel learning is that one fit on a bank of
Gaussian kernels replaces the search over kernel widths. This script
measures it (issue 23 of the project's tracker): on each data set, over
``--splits`` stratified 80/20 splits (at most ``--max-samples`` samples,
features scaled to [-1, 1] on all samples),

* ``SVC``: ``GridSearchCV(SVC(), {"C": Cs, "gamma": gammas})``, the 9
  widths ``gamma = 1 / (2 tau)`` for ``tau`` in
  :func:`mcsparse.kernels.scale_bandwidths` of the training part (the
  widths the MKL bank combines);
* ``UFO``, ``Conv``, ``SMSD``: ``GridSearchCV(<MKL>(bandwidths="scale",
  final=...), {"C": Cs})``, one fit per ``C`` and fold on the same bank
  (``Conv floor``: Conv-MKL with ``tail_sum_guard="floor"``, the guard
  before the spectral one), for each ``final`` of ``--finals``;

``Cs = {1, 10, 100, 1000}``, the same 3 stratified folds of the training
part for every model. Each line printed is one fit (JSON: data set, split,
model, test accuracy, seconds of the search including the final refit);
the summary gives, per data set and model, the mean and standard deviation
of the test accuracy, the gap of the best MKL method to the SVC and the
ratio of their search times (the mean over splits of each).

Usage (from the repository root, ``MCSPARSE_DATA`` set)::

    python asv_benchmarks/mkl_vs_svc.py iris wine vowel segment satimage dna \\
        letter pendigits digits
    python asv_benchmarks/mkl_vs_svc.py --quick iris wine   # a smoke test

Data sets: the loaders of :mod:`mcsparse.datasets` (``letter``,
``pendigits``, ...), the LIBSVM files of the MKL example (``segment``,
``dna``, ``wine``, ...), and scikit-learn's bundled ``iris`` and ``digits``.
"""

import argparse
import json
import time
import warnings

import numpy as np
from sklearn import datasets as sk_datasets
from sklearn.model_selection import GridSearchCV, StratifiedKFold, StratifiedShuffleSplit
from sklearn.svm import SVC

import mcsparse.datasets as datasets
from mcsparse import ConvMKLClassifier, SMSDMKLClassifier, UFOMKLClassifier
from mcsparse.kernels import scale_bandwidths

CS = [1, 10, 100, 1000]
# the MKL models: (estimator, parameters besides the bank, final and random_state)
MKL = {"UFO": (UFOMKLClassifier, {}), "Conv": (ConvMKLClassifier, {}),
       "Conv floor": (ConvMKLClassifier, {"tail_sum_guard": "floor"}),
       "SMSD": (SMSDMKLClassifier, {})}


def load(name, max_samples):
    """A data set by name, at most ``max_samples`` rows (a fixed draw), scaled to [-1, 1]."""
    if name in ("iris", "digits"):
        X, y = getattr(sk_datasets, f"load_{name}")(return_X_y=True)
    elif hasattr(datasets, f"load_{name}"):
        X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    else:
        X, y = datasets.load_libsvm(name, subset="all" if name == "dna" else "train",
                                    return_X_y=True)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    y = np.asarray(y)
    if X.shape[0] > max_samples:
        keep = np.random.default_rng(0).choice(X.shape[0], max_samples, replace=False)
        X, y = X[keep], y[keep]
    low, high = X.min(axis=0), X.max(axis=0)
    return 2 * (X - low) / np.where(high > low, high - low, 1.0) - 1, y


def _timed_search(estimator, grid, cv, X, y, X_test, y_test):
    start = time.perf_counter()
    search = GridSearchCV(estimator, grid, cv=cv).fit(X, y)
    seconds = time.perf_counter() - start
    return {"accuracy": float(search.score(X_test, y_test)), "seconds": seconds,
            "params": {k: float(v) if not isinstance(v, str) else v
                       for k, v in search.best_params_.items()}}


def run_split(X, y, train, test, split, finals):
    """One split: the SVC search and every MKL search; a dict per model."""
    X_train, y_train, X_test, y_test = X[train], y[train], X[test], y[test]
    cv = StratifiedKFold(3, shuffle=True, random_state=split)
    gammas = list(1.0 / (2.0 * scale_bandwidths(X_train)))
    out = {"SVC": _timed_search(SVC(), {"C": CS, "gamma": gammas}, cv, X_train, y_train,
                                X_test, y_test)}
    for final in finals:
        for name, (Est, params) in MKL.items():
            model = Est(bandwidths="scale", final=final, random_state=split, **params)
            out[f"{name} {final}"] = _timed_search(model, {"C": CS}, cv, X_train, y_train,
                                                   X_test, y_test)
    return out


def summarise(name, runs):
    """Mean (std) accuracy per model, the best MKL's gap and time ratio to the SVC."""
    models = list(runs[0])
    acc = {m: 100 * np.array([r[m]["accuracy"] for r in runs]) for m in models}
    sec = {m: np.array([r[m]["seconds"] for r in runs]) for m in models}
    print(f"{name}: {len(runs)} splits")
    for m in models:
        print(f"  {m:24s} {acc[m].mean():6.2f} ({acc[m].std():.2f})  search "
              f"{sec[m].mean():7.2f} s  ({sec[m].mean() / sec['SVC'].mean():.2f} x SVC)")
    best = max((m for m in models if m != "SVC"), key=lambda m: acc[m].mean())
    print(f"  best MKL: {best}, {acc[best].mean() - acc['SVC'].mean():+.2f} points against "
          f"the SVC; its search takes {sec[best].mean() / sec['SVC'].mean():.2f} x the "
          "SVC's", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+", help="data set names")
    parser.add_argument("--splits", type=int, default=10)
    parser.add_argument("--max-samples", type=int, default=1500)
    parser.add_argument("--finals", default="last_iterate,svc",
                        help="comma-separated values of the MKL estimators' final")
    parser.add_argument("--quick", action="store_true", help="2 splits of 300 samples")
    args = parser.parse_args(argv)
    if args.quick:
        args.splits, args.max_samples = 2, 300
    warnings.simplefilter("ignore")  # convergence notes of the short searches
    for name in args.names:
        X, y = load(name, args.max_samples)
        splitter = StratifiedShuffleSplit(args.splits, test_size=0.2, random_state=0)
        runs = []
        for split, (train, test) in enumerate(splitter.split(X, y)):
            runs.append(run_split(X, y, train, test, split, args.finals.split(",")))
            print(json.dumps({"data": name, "split": split, **runs[-1]}), flush=True)
        summarise(name, runs)


if __name__ == "__main__":
    main()
