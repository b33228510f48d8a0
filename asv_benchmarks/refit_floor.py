"""How close a fully corrective ShareBoost can come to LightGBM on stumps: the refit's floor.

Issue 52 of the project's tracker asks for ShareBoost's 100 stumps in at most
1.5 times LightGBM's time at equal test error. ``stumps_vs_lightgbm.py``
measures the ratio. This script asks how far a better refit could take it,
side by side in one process, best of ``--repeat`` (3) interleaved fits, for
each data set:

- **shipped**: ``ShareBoostClassifier(features=DecisionStumps(),
  n_features_to_select=100, alpha=1e-4)`` with ``n_jobs`` threads as the
  library fits it. Timers around the objective's evaluations (the refit's
  passes over all rows and selected columns, one per line-search trial)
  split its time into the *passes* and the *rest* (the stump scan, the
  exact bordering, the BFGS updates and the Python around them);
- **oracle curvature**: the same fit, but before each round's refit the
  carried inverse Hessian is replaced by the exact one at the warm start
  (:meth:`~mcsparse.solvers._refit.CarriedCurvature.reset`, as the retry
  after a failed line search does), and the time of that replacement is
  not counted. It stands for a refit whose curvature costs nothing and is
  as good as a Newton method's at the start of every round; in the dense
  mode only (every set here: at most 2,600 parameters);
- **LightGBM**: ``LGBMClassifier(num_leaves=2, learning_rate=0.3)`` with the
  rounds that ``stumps_vs_lightgbm.py``'s record found at ShareBoost's test
  error (``--record``), ``n_jobs`` threads.

The table gives each fit's seconds and the ratios to LightGBM's: the shipped
fit, the oracle fit, and the oracle fit's *rest* alone (what would remain
with passes that cost nothing). The oracle's selections may differ from the
shipped fit's (its refits stop at other points within the tolerance), so
its test error is printed too.

The instrumentation replaces ``mcsparse.solvers._path_state.solve`` and
``LinearObjective.evaluate`` with timed wrappers while a fit runs, and
restores them after (:func:`instrumented`); with ``oracle=False`` the
answer is bit for bit the uninstrumented one (``tests/test_refit_floor.py``).

Usage (from the repository root; the oracle's exact Hessians make letter
take minutes)::

    python asv_benchmarks/refit_floor.py
    python asv_benchmarks/refit_floor.py --sets pendigits satimage --out record.json
    python asv_benchmarks/refit_floor.py --quick   # small sizes: a smoke test

``asv_benchmarks/records/refit_floor.json`` is the full run's record.
"""

import argparse
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from stumps_vs_lightgbm import LABELS, error_rate, lightgbm, load, run_sets, shareboost, versions

SETS = ("pendigits", "satimage", "letter")
RECORD = Path(__file__).resolve().parent / "records" / "stumps_vs_lightgbm.json"


@contextmanager
def instrumented(oracle):
    """Context: timers on the refit's passes, and optionally the oracle curvature.

    Yields a dict, filled while fits run: ``evaluations`` and
    ``evaluate_s`` (the objective's evaluations and their seconds),
    ``iterations`` (the refits' iterations), ``oracle_s`` (seconds spent
    replacing the curvature by the exact Hessian, to be subtracted).
    """
    from mcsparse.solvers import _objective, _path_state

    stats = {"evaluations": 0, "evaluate_s": 0.0, "iterations": 0, "oracle_s": 0.0}
    solve, evaluate = _path_state.solve, _objective.LinearObjective.evaluate
    refit = _path_state._PathState.refit
    current = []

    def timed_evaluate(self, *args, **kwargs):
        start = time.perf_counter()
        try:
            return evaluate(self, *args, **kwargs)
        finally:
            stats["evaluations"] += 1
            stats["evaluate_s"] += time.perf_counter() - start

    def oracle_solve(objective, params, p, **kwargs):
        curvature, point = kwargs["curvature"], kwargs.get("point")
        if oracle and curvature.dense:
            start = time.perf_counter()
            if point is None:
                kwargs["point"] = point = evaluate(objective, params, p)
            curvature.reset(objective, p, current[-1].border_work(0, p), point)
            stats["oracle_s"] += time.perf_counter() - start
        result = solve(objective, params, p, **kwargs)
        stats["iterations"] += result.n_iter
        return result

    def tracked_refit(self, *args, **kwargs):
        current.append(self)
        try:
            return refit(self, *args, **kwargs)
        finally:
            current.pop()

    _path_state.solve = oracle_solve
    _objective.LinearObjective.evaluate = timed_evaluate
    _path_state._PathState.refit = tracked_refit
    try:
        yield stats
    finally:
        _path_state.solve = solve
        _objective.LinearObjective.evaluate = evaluate
        _path_state._PathState.refit = refit


def shareboost_fit(X, y, args, oracle):
    """One ShareBoost fit: the fitted model and its timings (a dict)."""
    model, _ = shareboost(args.rounds, args.alpha, args.n_jobs)
    with instrumented(oracle) as stats:
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start - stats["oracle_s"]
    passes = stats["evaluate_s"]
    return model, {"fit_s": seconds, "passes_s": passes, "rest_s": seconds - passes,
                   "evaluations": stats["evaluations"], "iterations": stats["iterations"]}


def lightgbm_fit(X, y, rounds, args):
    model = lightgbm(rounds, args)
    start = time.perf_counter()
    model.fit(X, y)
    return model, {"fit_s": time.perf_counter() - start}


def recorded_rounds(name, path):
    """LightGBM's rounds at ShareBoost's test error in the record of ``stumps_vs_lightgbm.py``."""
    from mcsparse.utils.records import load_full_run

    sets = load_full_run(path)["results"]["sets"]
    if name not in sets:
        raise ValueError(f"{path} has no row for {name!r}: run stumps_vs_lightgbm.py on it")
    return int(sets[name]["lightgbm"]["rounds"])


def best(runs):
    """The run of least ``fit_s``."""
    return min(runs, key=lambda run: run["fit_s"])


def run_set(name, args):
    """Interleaved fits of the three kinds; the set's row (a dict)."""
    X, y, Xt, yt = load(name, args.quick)
    rounds = recorded_rounds(name, args.record)
    kinds = {"shipped": lambda: shareboost_fit(X, y, args, oracle=False),
             "oracle": lambda: shareboost_fit(X, y, args, oracle=True),
             "lightgbm": lambda: lightgbm_fit(X, y, rounds, args)}
    runs, errors = {kind: [] for kind in kinds}, {}
    for _ in range(args.repeat):
        for kind, fit in kinds.items():
            model, run = fit()
            runs[kind].append(run)
            errors[kind] = error_rate(model, Xt, yt)
    row = {"n_samples": X.shape[0], "n_classes": len(np.unique(y)), "lightgbm_rounds": rounds}
    for kind in kinds:
        row[kind] = {**best(runs[kind]), "fits_s": [run["fit_s"] for run in runs[kind]],
                     "test_error": errors[kind]}
    lg = row["lightgbm"]["fit_s"]
    row["ratios"] = {"shipped": row["shipped"]["fit_s"] / lg,
                     "oracle": row["oracle"]["fit_s"] / lg,
                     "oracle_rest": row["oracle"]["rest_s"] / lg}
    return row


def _fit_cell(run):
    return (f"{run['fit_s']:.2f} s ({run['iterations']} it.; passes {run['passes_s']:.2f} s, "
            f"rest {run['rest_s']:.2f} s), {100 * run['test_error']:.2f}%")


def table(rows):
    """The markdown table of ``rows`` (data set name -> :func:`run_set`'s row)."""
    lines = ["| data set | LightGBM | ShareBoost shipped | oracle curvature "
             "| ratio: shipped | oracle | oracle's rest |",
             "|---|---|---|---|---|---|---|"]
    for name, row in rows.items():
        lg, ratios = row["lightgbm"], row["ratios"]
        lines.append(
            f"| {LABELS[name]} | {row['lightgbm_rounds']} rounds, {lg['fit_s']:.2f} s, "
            f"{100 * lg['test_error']:.2f}% | {_fit_cell(row['shipped'])} "
            f"| {_fit_cell(row['oracle'])} | {ratios['shipped']:.2f} | {ratios['oracle']:.2f} "
            f"| {ratios['oracle_rest']:.2f} |")
    return lines


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS),
                        help="data sets (default: all three)")
    parser.add_argument("--n-jobs", type=int, default=2,
                        help="threads for both libraries (default: 2)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved fits (default: 3)")
    parser.add_argument("--alpha", type=float, default=1e-4, help="ShareBoost's alpha")
    parser.add_argument("--learning-rate", type=float, default=0.3, help="LightGBM's")
    parser.add_argument("--record", default=str(RECORD),
                        help="stumps_vs_lightgbm.py's record, for LightGBM's rounds")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", help="also write the results to this JSON record")
    args = parser.parse_args(argv)
    for key in ("n_jobs", "repeat"):
        if getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be at least 1")
    args.rounds = 20 if args.quick else 100
    return args


def main(argv=None):
    args = parse(argv)
    command, accepted, rows, blas = run_sets(args, argv, __file__, run_set)
    print()
    print("\n".join(table(rows)))
    print(f"\nbest of {args.repeat} interleaved fits; it.: refit iterations; passes: seconds "
          "in the objective's evaluations; oracle curvature: the exact Hessian at the start "
          "of each round's refit, its cost not counted; ratios: over LightGBM's time")
    if args.out:
        from mcsparse.utils.records import save_full_run

        save_full_run(args.out, {"sets": rows, "n_jobs": args.n_jobs,
                                 "shareboost_thread_params": accepted, "blas": blas,
                                 "versions": versions(), "options": vars(args)},
                      script=__file__, command=command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
