"""ShareBoost's 100 shared stumps against LightGBM's stumps at equal test error.

The table of issue 52 of the project's tracker, side by side in one process:
``ShareBoostClassifier(features=DecisionStumps(), n_features_to_select=100,
alpha=1e-4)`` against LightGBM depth-1 boosting, ``LGBMClassifier(
num_leaves=2, learning_rate=0.3)`` (one stump per class and round), both with
the same number of threads (``--n-jobs``, 2 by default):

- LightGBM's rounds are searched on a grid of ``--step`` (50): one fit of
  at most ``--max-rounds`` rounds, its test error read every 50 rounds by
  staged prediction, stops at the first multiple of 50 whose test error is
  at most ShareBoost's (or at ``--max-rounds``, marked ``*``). Then a fit
  with exactly that many rounds is timed;
- the fits are timed best of ``--repeat`` (3), interleaved (ShareBoost,
  LightGBM, ShareBoost, ...);
- the prediction throughput of each fitted model is the test set's rows
  over the best of ``--predict-repeat`` (7) calls of ``predict``;
- the same timed fits give both libraries' *curves*: the seconds from the
  start of a fit to the end of each round (a callback's clock, best of the
  repeats at each round) and the test error of the model after that round
  (ShareBoost's every round by ``staged_predict``, LightGBM's every
  ``--curve-step`` (1) rounds from its raw scores summed round by round). From them,
  the trade-off at other model sizes: for ShareBoost's 10, 20, ... stumps,
  LightGBM's first round on that grid whose test error is at most
  ShareBoost's there, and the ratio of the two times. A round's time within
  the longer fit stands for a fit of that many rounds (ShareBoost's path
  does not depend on its length; LightGBM's trees neither).

Threads: LightGBM gets ``n_jobs``. ShareBoost gets ``n_jobs`` (and its
features' ``features__n_jobs``) only where its ``get_params()`` has that
parameter; without it the stump scan runs on one thread. The BLAS and
OpenMP pools of the process are limited to ``n_jobs`` threads for both
(:func:`threadpoolctl.threadpool_limits`). The script prints which thread
count each side used, the BLAS libraries in use (their kernels:
``threadpoolctl.threadpool_info()``), the versions and its command line.

Data (``MCSPARSE_DATA`` must hold satimage, letter and MNIST; pendigits is
bundled): the original features of pendigits (7,494 x 16, 10 classes),
satimage (4,435 x 36, 6), letter (the first 16,000 rows x 16, 26; tested on
the last 4,000) and MNIST pixels / 255 as float32 (60,000 x 784, 10), the
UCI sets scaled to [0, 1] (``mcsparse --dataset NAME --features stumps``
reads them unscaled: the scaling changes no stump, only its threshold).

Usage (from the repository root; MNIST takes minutes)::

    python asv_benchmarks/stumps_vs_lightgbm.py
    python asv_benchmarks/stumps_vs_lightgbm.py --sets pendigits satimage --n-jobs 1
    python asv_benchmarks/stumps_vs_lightgbm.py --out record.json
    python asv_benchmarks/stumps_vs_lightgbm.py --quick   # small sizes: a smoke test

``--out`` also writes the results, the BLAS pools and the versions as a
record (:func:`mcsparse.utils.records.save_full_run`);
``asv_benchmarks/records/stumps_vs_lightgbm.json`` is the full run's.

``--quick``: 20 ShareBoost rounds on at most 2,000 training and 1,000 test
samples (drawn at random, seed 0: satimage's file is grouped by class).
"""

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from benchmarks.stumps import thread_params

SETS = ("pendigits", "satimage", "letter", "mnist")
LABELS = {"pendigits": "pendigits", "satimage": "satimage", "letter": "letter",
          "mnist": "MNIST pixels"}


def load(name, quick):
    """``(X, y, X_test, y_test)`` of a data set, a random slice of it when ``quick``."""
    from mcsparse._cli import load_problem

    X, y, Xt, yt, _ = load_problem(name, products=False)
    if quick:
        rng = np.random.default_rng(0)
        keep = np.sort(rng.choice(len(y), min(len(y), 2000), replace=False))
        keep_test = np.sort(rng.choice(len(yt), min(len(yt), 1000), replace=False))
        X, y, Xt, yt = X[keep], y[keep], Xt[keep_test], yt[keep_test]
    return X, y, Xt, yt


def shareboost(rounds, alpha, n_jobs):
    """ShareBoost on stumps, and the thread parameters it accepted (a dict, maybe empty)."""
    from mcsparse import ShareBoostClassifier
    from mcsparse.features import DecisionStumps

    model = ShareBoostClassifier(features=DecisionStumps(), n_features_to_select=rounds,
                                 alpha=alpha)
    return model, thread_params(model, n_jobs)


def lightgbm(rounds, args):
    from lightgbm import LGBMClassifier

    return LGBMClassifier(n_estimators=rounds, num_leaves=2, learning_rate=args.learning_rate,
                          n_jobs=args.n_jobs, verbose=-1)


def timed_fit(model, X, y):
    """Seconds of ``model.fit(X, y)``, and the seconds from its start to the end of
    each round (a callback's clock: ``callback`` of ShareBoost, ``callbacks`` of
    LightGBM's ``fit``; empty where the model has neither)."""
    stamps, kwargs = [], {}

    def clock(*_):
        stamps.append(time.perf_counter())

    if "callback" in model.get_params():  # ShareBoost
        model.set_params(callback=clock)  # None returned: the path goes on
    elif type(model).__name__.startswith("LGBM"):
        kwargs = {"callbacks": [clock]}
    start = time.perf_counter()
    model.fit(X, y, **kwargs)
    seconds = time.perf_counter() - start
    return seconds, [stamp - start for stamp in stamps]


def error_rate(model, Xt, yt):
    return float(np.mean(model.predict(Xt) != yt))


def search_rounds(X, y, Xt, yt, target, args):
    """Smallest multiple of ``args.step`` whose test error is ``<= target``.

    One fit of at most ``args.max_rounds`` rounds; every ``step`` rounds a
    callback predicts the test set with the trees so far and stops the fit
    once the target is reached. Returns ``(rounds, reached, errors)``,
    ``errors`` the test error at each multiple of ``step`` visited.
    """
    from lightgbm.callback import EarlyStopException

    classes = np.unique(y)
    errors = {}

    def check(env):
        rounds = env.iteration + 1
        if rounds % args.step:
            return
        proba = env.model.predict(Xt)
        errors[rounds] = float(np.mean(classes[proba.argmax(axis=1)] != yt))
        if errors[rounds] <= target:
            raise EarlyStopException(env.iteration, [])

    lightgbm(args.max_rounds, args).fit(X, y, callbacks=[check])
    reached = [r for r, e in errors.items() if e <= target]
    return (min(reached) if reached else max(errors)), bool(reached), errors


def best_curve(stamps):
    """Elementwise minimum of the repeats' round times (lists of one length)."""
    return np.min(np.array(stamps), axis=0).tolist()


def shareboost_errors(model, Xt, yt):
    """Test error after each round of a fitted ShareBoost (its staged predictions)."""
    return [float(np.mean(pred != yt)) for pred in model.staged_predict(Xt)]


def lightgbm_errors(model, Xt, yt, step):
    """``(rounds, errors)``: the test error after every ``step`` rounds (and the last).

    The raw scores are summed over the rounds between two points
    (``start_iteration``), so that the whole curve costs one prediction.
    """
    total = model.booster_.current_iteration()
    rounds = sorted(set(range(step, total + 1, step)) | {total})
    raw, start, errors = 0.0, 0, []
    for r in rounds:
        raw = raw + model.predict(Xt, raw_score=True, start_iteration=start,
                                  num_iteration=r - start)
        start = r
        errors.append(float(np.mean(model.classes_[np.argmax(raw, axis=1)] != yt)))
    return rounds, errors


def tradeoff(sb_curve, lg_curve, every=10):
    """At ShareBoost's every ``every``-th round: LightGBM's time to its test error.

    ``sb_curve`` has ``seconds`` and ``test_errors`` per round; ``lg_curve``
    has ``rounds``, ``seconds`` and ``test_errors`` at its grid. Returns one
    dict per ShareBoost size: its stumps, seconds and error; LightGBM's
    first grid round with a test error at most that (None where none is),
    its seconds and error; the ratio of the seconds (None where not reached).
    """
    rows = []
    n_rounds = len(sb_curve["test_errors"])
    for t in sorted(set(range(every, n_rounds + 1, every)) | {n_rounds}):
        error, seconds = sb_curve["test_errors"][t - 1], sb_curve["seconds"][t - 1]
        reached = [i for i, e in enumerate(lg_curve["test_errors"]) if e <= error]
        row = {"stumps": t, "shareboost_s": seconds, "shareboost_error": error,
               "lightgbm_rounds": None, "lightgbm_s": None, "lightgbm_error": None,
               "time_ratio": None}
        if reached:
            i = reached[0]
            row.update(lightgbm_rounds=lg_curve["rounds"][i],
                       lightgbm_s=lg_curve["seconds"][i],
                       lightgbm_error=lg_curve["test_errors"][i],
                       time_ratio=seconds / lg_curve["seconds"][i])
        rows.append(row)
    return rows


def throughput(model, Xt, repeat):
    """Test rows per second of ``model.predict``, best of ``repeat`` calls."""
    best = np.inf
    for _ in range(repeat):
        start = time.perf_counter()
        model.predict(Xt)
        best = min(best, time.perf_counter() - start)
    return len(Xt) / best


def run_set(name, args):
    """Search, then time both fits interleaved; the row of the table."""
    X, y, Xt, yt = load(name, args.quick)
    sb, _ = shareboost(args.rounds, args.alpha, args.n_jobs)
    sb_fits = [timed_fit(sb, X, y)]
    sb_error = error_rate(sb, Xt, yt)
    rounds, reached, search = search_rounds(X, y, Xt, yt, sb_error, args)
    lg = lightgbm(rounds, args)
    lg_fits = [timed_fit(lg, X, y)]
    for _ in range(args.repeat - 1):
        sb_fits.append(timed_fit(sb, X, y))
        lg_fits.append(timed_fit(lg, X, y))
    sb_times, lg_times = [t for t, _ in sb_fits], [t for t, _ in lg_fits]
    sb_curve = {"seconds": best_curve([c for _, c in sb_fits]),
                "test_errors": shareboost_errors(sb, Xt, yt)}
    lg_rounds, lg_errors = lightgbm_errors(lg, Xt, yt, args.curve_step)
    lg_seconds = best_curve([c for _, c in lg_fits])
    lg_curve = {"rounds": lg_rounds, "seconds": [lg_seconds[r - 1] for r in lg_rounds],
                "test_errors": lg_errors}
    row = {
        "n_samples": X.shape[0], "n_features": X.shape[1], "n_classes": len(np.unique(y)),
        "n_test": Xt.shape[0],
        "shareboost": {"stumps": int(sb.n_iter_), "fit_s": min(sb_times), "fits_s": sb_times,
                       "test_error": error_rate(sb, Xt, yt),
                       "predict_rows_per_s": throughput(sb, Xt, args.predict_repeat),
                       "curve": sb_curve},
        "lightgbm": {"rounds": rounds, "trees": int(lg.booster_.num_trees()),
                     "reached": reached, "fit_s": min(lg_times), "fits_s": lg_times,
                     "test_error": error_rate(lg, Xt, yt),
                     "search_errors": {str(r): e for r, e in search.items()},
                     "predict_rows_per_s": throughput(lg, Xt, args.predict_repeat),
                     "curve": lg_curve},
        "tradeoff": tradeoff(sb_curve, lg_curve),
    }
    row["time_ratio"] = row["shareboost"]["fit_s"] / row["lightgbm"]["fit_s"]
    return row


def blas_info():
    from threadpoolctl import threadpool_info

    return threadpool_info()


def versions():
    import lightgbm as lgb
    import sklearn

    import mcsparse

    return {"python": platform.python_version(), "mcsparse": mcsparse.__version__,
            "numpy": np.__version__, "scikit-learn": sklearn.__version__,
            "lightgbm": lgb.__version__}


def header(args, command, accepted):
    """The lines printed before the table: command, versions, threads, BLAS."""
    import mcsparse

    lines = [f"command: {command}",
             "versions: " + ", ".join(f"{k} {v}" for k, v in versions().items()),
             f"mcsparse imported from {Path(mcsparse.__file__).parent}"]
    sb = (", ".join(f"{k}={v}" for k, v in accepted.items()) if accepted else
          "no n_jobs parameter in this version: its stump scan runs on 1 thread")
    lines.append(f"threads: LightGBM n_jobs={args.n_jobs}; ShareBoost {sb}; "
                 f"BLAS and OpenMP pools limited to {args.n_jobs}")
    for pool in blas_info():
        kernel = pool.get("architecture") or "-"
        lines.append(f"  {pool['user_api']}: {pool['internal_api']} {pool.get('version')} "
                     f"({kernel}, {pool['num_threads']} threads) {pool['filepath']}")
    return lines


def _percent(error):
    return f"{100 * error:.2f}%"


def table(rows, rounds):
    """The markdown table of ``rows`` (data set name -> :func:`run_set`'s row)."""
    lines = [f"| data set | n × d, k | ShareBoost {rounds} stumps | LightGBM (stumps) "
             "| ratio | predict rows/s: ShareBoost | LightGBM |",
             "|---|---|---|---|---|---|---|"]
    for name, r in rows.items():
        sb, lg = r["shareboost"], r["lightgbm"]
        mark = "" if lg["reached"] else "*"
        lines.append(
            f"| {LABELS[name]} | {r['n_samples']:,} × {r['n_features']}, {r['n_classes']} "
            f"| {sb['fit_s']:.2f} s, {_percent(sb['test_error'])} "
            f"| {lg['rounds']}{mark} rounds ({lg['trees']:,}), {lg['fit_s']:.2f} s, "
            f"{_percent(lg['test_error'])} | {r['time_ratio']:.2f}× "
            f"| {sb['predict_rows_per_s']:,.0f} | {lg['predict_rows_per_s']:,.0f} |")
    return lines


def tradeoff_table(rows):
    """Markdown: at ShareBoost's 10, 20, ... stumps, LightGBM's time to its test error."""
    lines = ["| data set | stumps | ShareBoost | LightGBM to that error | ratio |",
             "|---|---|---|---|---|"]
    for name, r in rows.items():
        for t in r["tradeoff"]:
            sb = f"{t['shareboost_s']:.2f} s, {_percent(t['shareboost_error'])}"
            if t["lightgbm_rounds"] is None:
                lg, ratio = f"not reached in {r['lightgbm']['rounds']} rounds", "-"
            else:
                lg = (f"{t['lightgbm_rounds']} rounds, {t['lightgbm_s']:.2f} s, "
                      f"{_percent(t['lightgbm_error'])}")
                ratio = f"{t['time_ratio']:.2f}×"
            lines.append(f"| {LABELS[name]} | {t['stumps']} | {sb} | {lg} | {ratio} |")
    return lines


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="+", choices=SETS, default=list(SETS),
                        help="data sets (default: all four)")
    parser.add_argument("--n-jobs", type=int, default=2,
                        help="threads for both libraries (default: 2)")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved fits (default: 3)")
    parser.add_argument("--predict-repeat", type=int, default=7,
                        help="predict calls per model, the best counts (default: 7)")
    parser.add_argument("--alpha", type=float, default=1e-4, help="ShareBoost's alpha")
    parser.add_argument("--learning-rate", type=float, default=0.3, help="LightGBM's")
    parser.add_argument("--step", type=int, default=50, help="grid of LightGBM's rounds")
    parser.add_argument("--max-rounds", type=int, default=2000,
                        help="most LightGBM rounds searched (default: 2000)")
    parser.add_argument("--curve-step", type=int, default=1,
                        help="LightGBM rounds between the points of its curve (default: 1)")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--out", help="also write the results to this JSON record")
    args = parser.parse_args(argv)
    for key in ("n_jobs", "repeat", "predict_repeat", "step", "max_rounds", "curve_step"):
        if getattr(args, key) < 1:
            parser.error(f"--{key.replace('_', '-')} must be at least 1")
    if args.max_rounds < args.step:
        parser.error("--max-rounds must be at least --step")
    args.rounds = 20 if args.quick else 100
    return args


def run_sets(args, argv, script, run_set):
    """Print a side-by-side script's header, then run ``run_set(name, args)`` on each set.

    The BLAS and OpenMP pools are limited to ``args.n_jobs`` threads, and
    ShareBoost's ConvergenceWarnings are silenced. ``script`` is the running
    script's ``__file__`` and ``argv`` its arguments (None: ``sys.argv``).
    Returns ``(command, accepted, rows, blas)``: the command line, the thread
    parameters ShareBoost accepted, the rows by set name, and the BLAS
    pools in use.
    """
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    command = " ".join(["python", f"asv_benchmarks/{Path(script).name}",
                        *(sys.argv[1:] if argv is None else argv)])
    _, accepted = shareboost(args.rounds, args.alpha, args.n_jobs)
    import lightgbm  # noqa: F401  (its OpenMP library loaded before the limits are set)

    with threadpool_limits(limits=args.n_jobs):
        for line in header(args, command, accepted):
            print(line, flush=True)
        rows = {}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for name in args.sets:
                rows[name] = run_set(name, args)
                print(f"{name}: done", flush=True)
        blas = blas_info()
    return command, accepted, rows, blas


def main(argv=None):
    args = parse(argv)
    command, accepted, rows, blas = run_sets(args, argv, __file__, run_set)
    print()
    print("\n".join(table(rows, args.rounds)))
    print(f"\nbest of {args.repeat} interleaved fits; LightGBM rounds: the smallest multiple "
          f"of {args.step} with a test error at most ShareBoost's (* not reached by "
          f"{args.max_rounds}); ratio: ShareBoost's time over LightGBM's; predict: test rows "
          f"per second, best of {args.predict_repeat}")
    print()
    print("\n".join(tradeoff_table(rows)))
    print(f"\nthe same fits' curves: seconds from a fit's start to the end of a round, best "
          f"of {args.repeat}; LightGBM's first multiple of {args.curve_step} round(s) with a "
          "test error at most ShareBoost's at that size")
    if args.out:
        import mcsparse
        from mcsparse.utils.records import save_full_run

        save_full_run(args.out, {"sets": rows, "n_jobs": args.n_jobs,
                                 "shareboost_thread_params": accepted, "blas": blas,
                                 "versions": versions(), "options": vars(args),
                                 "mcsparse_imported_from": str(Path(mcsparse.__file__).parent)},
                      script=__file__, command=command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
