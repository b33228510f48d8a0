"""ShareBoostClassifierCV beside GridSearchCV over the same grid and folds.

For each problem: ``ShareBoostClassifierCV`` (one path of ``max_features``
rounds per fold and alpha, then one refit), ``GridSearchCV`` over ``alpha`` x
``n_features_to_select`` = 1 .. ``max_features`` with the same alphas and
folds (one fit per pair and fold, then one refit), and one single path of
``max_features`` rounds on all the training data at each alpha (their mean
is the unit of the time bound: a path's cost depends on its alpha, the
smallest ones near the bare loss costing most). Printed and recorded: each
search's chosen ``(alpha, n_features)``, its mean CV accuracy, its test error
and fit time, and the ratios

* CV time / mean single-path time, against ``n_splits * n_alphas + 1.5``;
* grid-search time / CV time.

Everything runs on one core in this process (``n_jobs=1``, BLAS limited to
one thread), the fits in turn; the test set only scores the refits. The
alphas are the default grid's (decades around ``alpha="auto"``), fewer of
them and fewer folds than the defaults so that the grid search finishes.

Usage (from the repository root, ``MCSPARSE_DATA`` set; MNIST needs its
files)::

    python asv_benchmarks/cv_vs_grid.py --output cv_vs_grid.json
    python asv_benchmarks/cv_vs_grid.py pendigits-stumps
"""

import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from threadpoolctl import threadpool_info, threadpool_limits

from _problems import run_problems
from mcsparse import ShareBoostClassifier, ShareBoostClassifierCV
from mcsparse._cli import load_problem

# name -> (main-job data set, original features?, n_train, estimator params,
#          max_features, n_alphas, n_splits)
PROBLEMS = {
    "pendigits-stumps": ("pendigits", True, None, dict(features="stumps"), 50, 5, 3),
    "pendigits-products": ("pendigits", False, None, dict(fit_intercept=False), 40, 5, 3),
    "mnist-pixels": ("mnist", False, 20_000, dict(), 30, 3, 3),
}


def _timed(fit):
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = fit()
    return model, time.perf_counter() - start


def run(name):
    dataset, original, n_train, params, max_features, n_alphas, n_splits = PROBLEMS[name]
    X, y, X_test, y_test, _ = load_problem(dataset, products=not original)
    if n_train is not None and n_train < X.shape[0]:  # the first n_train samples
        X, y = X[:n_train], y[:n_train]
    folds = list(StratifiedKFold(n_splits, shuffle=True, random_state=0).split(X, y))
    cv, cv_time = _timed(lambda: ShareBoostClassifierCV(
        alphas=n_alphas, max_features=max_features, cv=folds, **params).fit(X, y))
    alphas = cv.alphas_
    single_times = [_timed(lambda: ShareBoostClassifier(
        alpha=float(a), n_features_to_select=max_features, **params).fit(X, y))[1]
        for a in alphas]
    single_time = float(np.mean(single_times))
    grid, grid_time = _timed(lambda: GridSearchCV(
        ShareBoostClassifier(**params),
        {"alpha": list(alphas), "n_features_to_select": list(range(1, max_features + 1))},
        cv=folds).fit(X, y))
    g_alpha = float(grid.best_params_["alpha"])
    g_n = int(grid.best_params_["n_features_to_select"])
    at_cv_choice = grid.cv_results_["mean_test_score"][
        (np.asarray(grid.cv_results_["param_alpha"], dtype=float) == cv.alpha_)
        & (np.asarray(grid.cv_results_["param_n_features_to_select"]) == cv.n_features_)]
    out = {
        "n_train": int(X.shape[0]), "max_features": max_features, "n_splits": n_splits,
        "alphas": alphas.tolist(),
        "cv": {"alpha": cv.alpha_, "n_features": int(cv.n_features_),
               "cv_accuracy": cv.best_score_,
               "test_error": float(1 - cv.score(X_test, y_test)), "fit_s": cv_time},
        "grid": {"alpha": g_alpha, "n_features": g_n, "cv_accuracy": float(grid.best_score_),
                 "cv_accuracy_at_cv_choice": float(at_cv_choice[0]),
                 "test_error": float(1 - grid.score(X_test, y_test)), "fit_s": grid_time},
        "single_path_s": single_times, "mean_single_path_s": single_time,
        "cv_over_single": cv_time / single_time, "bound": n_splits * alphas.size + 1.5,
        "grid_over_cv": grid_time / cv_time,
    }
    print(f"{name}: {X.shape[0]} samples, {n_splits} folds x {alphas.size} alphas, up to "
          f"{max_features} features", flush=True)
    for key in ("cv", "grid"):
        r = out[key]
        print(f"  {key:4s}: alpha={r['alpha']:.3g}, {r['n_features']} features, CV accuracy "
              f"{100 * r['cv_accuracy']:.2f}%, test error {100 * r['test_error']:.2f}%, "
              f"{r['fit_s']:.1f} s", flush=True)
    print(f"  one path of {max_features} rounds: " + ", ".join(f"{t:.2f}" for t in single_times)
          + f" s (the alphas in turn, mean {single_time:.2f} s); CV / path "
          f"{out['cv_over_single']:.1f} (bound {out['bound']:.1f}); grid / CV "
          f"{out['grid_over_cv']:.1f}", flush=True)
    return out


def main(argv=None):
    blas = [f"{i['internal_api']} {i.get('version')} ({i.get('architecture')})"
            for i in threadpool_info() if i["user_api"] == "blas"]
    print(f"BLAS: {', '.join(blas)}; one thread", flush=True)
    with threadpool_limits(1):
        return run_problems(__doc__, PROBLEMS, run, __file__, argv,
                            extra={"blas": blas})


if __name__ == "__main__":
    sys.exit(main())
