"""MKL with the paper's bank and with the data-relative bank, beside a tuned SVC.

The diagnostic of the MKL user guide (issue 23 of the project's tracker):
on one stratified 80/20 split of a data set (at most ``--max-samples``
samples, features scaled to [-1, 1] on all samples), scikit-learn's
``SVC(gamma="scale")`` and UFO-, Conv- and SMSD-MKL each with two banks of
Gaussian kernels,

* ``paper``: ``tau = 2^-10 .. 2^10`` (:func:`mcsparse.kernels.default_bandwidths`);
* ``scale``: ``2^-4 .. 2^4`` times the width of ``gamma="scale"``
  (``bandwidths="scale"``, :func:`mcsparse.kernels.scale_bandwidths`),

``C`` of every model (each predicting with its last iterate) chosen from
{1, 10, 100, 1000} by 3-fold cross-validation on the training part. Printed
per model: test accuracy, the chosen ``C``, training accuracy, the three
bandwidths of largest weight (largest last) and the time of the search. One
split only: a diagnostic, not the 10-split comparison.

With ``--weights``, instead: the kernel weights of UFO-MKL, Conv-MKL with
each tail-sum guard and SMSD-MKL on the ``scale`` bank (``C=100``, one fit
on at most ``--max-samples`` samples) and their training accuracy, the
table of the user guide's Conv-MKL section.

Usage (from the repository root, ``MCSPARSE_DATA`` set)::

    python asv_benchmarks/mkl_banks.py segment satimage dna
    python asv_benchmarks/mkl_banks.py --weights --max-samples 1200 letter satimage
"""

import argparse
import time
import warnings

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.svm import SVC

import mcsparse.datasets as datasets
from mcsparse import ConvMKLClassifier, SMSDMKLClassifier, UFOMKLClassifier

CS = [1, 10, 100, 1000]
BANKS = {"paper": "paper", "scale": "scale"}


def load(name, max_samples):
    """A data set by loader name (``letter``, ...) or LIBSVM file name, scaled to [-1, 1]."""
    loader = getattr(datasets, f"load_{name}", None)
    if loader is not None:
        X, y = loader(return_X_y=True)
    else:
        X, y = datasets.load_libsvm(name, return_X_y=True)
    X = np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)
    if X.shape[0] > max_samples:
        keep = np.random.default_rng(0).choice(X.shape[0], max_samples, replace=False)
        X, y = X[keep], np.asarray(y)[keep]
    low, high = X.min(axis=0), X.max(axis=0)
    return 2 * (X - low) / np.where(high > low, high - low, 1.0) - 1, y


def run(name, max_samples):
    X, y = load(name, max_samples)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0)
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    start = time.perf_counter()
    svc = GridSearchCV(SVC(gamma="scale"), {"C": CS}, cv=cv).fit(X_train, y_train)
    print(f"{name} {X.shape}: SVC {100 * svc.score(X_test, y_test):.1f}% "
          f"(C={svc.best_params_['C']}, {time.perf_counter() - start:.1f} s)", flush=True)
    for bank_name, bank in BANKS.items():
        for Est in (UFOMKLClassifier, ConvMKLClassifier, SMSDMKLClassifier):
            start = time.perf_counter()
            search = GridSearchCV(Est(bandwidths=bank, final="last_iterate", random_state=0),
                                  {"C": CS}, cv=cv)
            search.fit(X_train, y_train)
            model = search.best_estimator_
            top = model.bandwidths_[np.argsort(model.kernel_weights_)[-3:]]
            print(f"  {bank_name:5s} {Est.__name__[:-len('MKLClassifier')]:5s} "
                  f"{100 * search.score(X_test, y_test):5.1f}%  C={search.best_params_['C']:<5d}"
                  f" train {100 * model.score(X_train, y_train):5.1f}%  heaviest tau "
                  + ", ".join(f"{t:.3g}" for t in top)
                  + f"  ({time.perf_counter() - start:.0f} s)", flush=True)


def weights(name, max_samples):
    X, y = load(name, max_samples)
    models = {"UFO": UFOMKLClassifier(), "Conv spectral": ConvMKLClassifier(),
              "Conv floor": ConvMKLClassifier(tail_sum_guard="floor"),
              "SMSD": SMSDMKLClassifier()}
    for label, model in models.items():
        model.set_params(C=100, bandwidths="scale", final="last_iterate",
                         random_state=0).fit(X, y)
        print(f"{name:9s} {label:14s} weights "
              + " ".join(f"{w:.2f}" for w in model.kernel_weights_)
              + f"  train {100 * model.score(X, y):.1f}%", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="+", help="loader names or LIBSVM file names")
    parser.add_argument("--max-samples", type=int, default=1500)
    parser.add_argument("--weights", action="store_true",
                        help="print the kernel weights of one fit per model instead")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # convergence notes of the short searches
    for name in args.names:
        (weights if args.weights else run)(name, args.max_samples)


if __name__ == "__main__":
    main()
