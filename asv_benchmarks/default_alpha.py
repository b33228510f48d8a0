"""The default penalty alpha="auto" beside the bare loss and an unscaled 1 / (2 n).

The measurement behind ShareBoostClassifier's default (user guide,
"Choosing alpha"): on the main job's data sets (the UCI sets as the pairwise
products the main job fits, without intercept; pendigits stumps and MNIST
pixels with one), one fit per penalty, and per fit the test error at the
last round, the number of rounds run, the fit time and the
ConvergenceWarnings. The test sets only score the fits: nothing is chosen on
them. Printed as a table; with ``--output`` also written as a record
(:func:`mcsparse.utils.records.save_full_run`).

Usage (from the repository root, ``MCSPARSE_DATA`` set; MNIST, satimage and
letter need their files)::

    python asv_benchmarks/default_alpha.py
    python asv_benchmarks/default_alpha.py pendigits-products pendigits-stumps
"""

import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from _problems import run_problems
from mcsparse import ShareBoostClassifier
from mcsparse._cli import load_problem

# name -> (main-job data set, original features?, estimator parameters)
PROBLEMS = {
    "pendigits-products": ("pendigits", False,
                           dict(n_features_to_select=40, fit_intercept=False)),
    "pendigits-stumps": ("pendigits", True,
                         dict(n_features_to_select=100, features="stumps")),
    "satimage-products": ("satimage", False,
                          dict(n_features_to_select=40, fit_intercept=False)),
    "letter-products": ("letter", False,
                        dict(n_features_to_select=40, fit_intercept=False)),
    "mnist-pixels": ("mnist", False, dict(n_features_to_select=100)),
}


def fit_one(X, y, X_test, y_test, params, alpha):
    """One fit: test error at the last round, rounds, time, warnings, alpha_."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        clf = ShareBoostClassifier(alpha=alpha, **params).fit(X, y)
        fit_time = time.perf_counter() - start
    return {"test_error": float(1 - clf.score(X_test, y_test)), "n_iter": int(clf.n_iter_),
            "fit_s": fit_time, "alpha": float(clf.alpha_),
            "warnings": [str(w.message) for w in caught
                         if issubclass(w.category, ConvergenceWarning)]}


def run(name):
    dataset, original, params = PROBLEMS[name]
    X, y, X_test, y_test, _ = load_problem(dataset, products=not original)
    rows = {}
    for label, alpha in (("0", 0.0), ("1/(2n)", 1 / (2 * X.shape[0])), ("auto", "auto")):
        rows[label] = fit_one(X, y, X_test, y_test, params, alpha)
        r = rows[label]
        notes = "; ".join(w[:70] for w in r["warnings"]) or "-"
        print(f"{name:20s} alpha={label:7s} ({r['alpha']:.3g})  test error "
              f"{100 * r['test_error']:5.2f}%  rounds {r['n_iter']:3d}  fit "
              f"{r['fit_s']:5.1f} s  warnings: {notes}", flush=True)
    return rows


def main(argv=None):
    return run_problems(__doc__, PROBLEMS, run, __file__, argv)


if __name__ == "__main__":
    sys.exit(main())
