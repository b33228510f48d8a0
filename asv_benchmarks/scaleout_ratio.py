"""The dask fit's time over the in-memory fit's, per chunking (user guide, scale-out).

Runs the fits of the asv benchmark ``scaleout.DaskShareBoostVsInMemory``
outside asv: ``ShareBoostClassifier(n_features_to_select=100, alpha=1e-4)``
on MNIST raw pixels / 255 (60,000 x 784, float64), in memory and on the same
data as a persisted dask array on a 2-worker ``LocalCluster`` (one thread
each), for dask's automatic row chunks (``("auto", -1)``) and for 6 chunks,
and the same with ``features=DecisionStumps(max_bins=64)`` (dask's
automatic chunks). Each case prints the dask fit's time over the in-memory
fit's, best of ``--repeat`` (3) interleaved pairs (dask, in memory, dask,
...), and whether the two fits agree.

Usage (from the repository root)::

    python asv_benchmarks/scaleout_ratio.py
    python asv_benchmarks/scaleout_ratio.py --cases raw-auto --rounds 30
    python asv_benchmarks/scaleout_ratio.py --out asv_benchmarks/records/scaleout_ratio.json

``--out`` also writes the times, the machine's load (``os.getloadavg``
before and after), the BLAS pools and the versions as a record
(:func:`mcsparse.utils.records.save_full_run`). ``MCSPARSE_ASV_QUICK=1``:
10,000 digits, 20 rounds (a smoke test).
"""

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

CASES = ("raw-auto", "raw-6", "stumps-auto")


def _family(case):
    from mcsparse.features import DecisionStumps

    return DecisionStumps(max_bins=64) if case.startswith("stumps") else "raw"


def _timed(fit):
    start = time.perf_counter()
    model = fit()
    return time.perf_counter() - start, model


def run_case(bench, case, repeat):
    """Interleaved fits of one case: a dict of times, ratio and agreement."""
    import dask.array as da
    from mcsparse import ShareBoostClassifier

    n = bench.X.shape[0]
    chunks = ("auto", -1) if case.endswith("auto") else (-(-n // 6), -1)
    data = {"numpy": bench.X, "dask": da.from_array(bench.X, chunks=chunks).persist()}
    times = {"dask": [], "numpy": []}
    models = {}

    def fit(name):
        return ShareBoostClassifier(n_features_to_select=bench.rounds, alpha=1e-4,
                                    features=_family(case)).fit(data[name], bench.y)

    for _ in range(repeat):
        for name in ("dask", "numpy"):
            seconds, models[name] = _timed(lambda: fit(name))
            times[name].append(seconds)
    a, b = models["numpy"], models["dask"]
    result = {
        "n_chunks": len(data["dask"].chunks[0]),
        "chunks": [int(c) for c in data["dask"].chunks[0]],
        "dask_s": times["dask"], "numpy_s": times["numpy"],
        "ratio": min(times["dask"]) / min(times["numpy"]),
        "same_features": bool(np.array_equal(a.selected_features_, b.selected_features_)),
        "largest_coef_difference": float(np.max(np.abs(a.coef_ - b.coef_))),
    }
    print(f"{case}: {result['n_chunks']} chunks, dask {min(times['dask']):.2f} s, in memory "
          f"{min(times['numpy']):.2f} s, ratio (best of {repeat}) {result['ratio']:.2f}, "
          f"same features {result['same_features']}, largest coef difference "
          f"{result['largest_coef_difference']:.1e}", flush=True)
    del data["dask"]
    return result


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=None,
                        help="rounds (default: 100; 20 with MCSPARSE_ASV_QUICK=1)")
    parser.add_argument("--out", default=None, help="write a JSON record here")
    return parser.parse_args(argv)


def main(argv=None):
    from benchmarks.scaleout import DaskShareBoostVsInMemory
    from sklearn.exceptions import ConvergenceWarning
    import mcsparse
    from mcsparse.utils._show_versions import format_blas

    args = parse(argv)
    command = " ".join(["python", f"asv_benchmarks/{Path(__file__).name}",
                        *(sys.argv[1:] if argv is None else argv)])
    warnings.simplefilter("ignore", ConvergenceWarning)
    warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
    load_before = os.getloadavg()
    print(f"{command}\nmcsparse from {Path(mcsparse.__file__).parent}; load average "
          f"{load_before[0]:.2f}; BLAS: {format_blas()}", flush=True)
    bench = DaskShareBoostVsInMemory()
    bench.setup("dask")
    bench.data.pop("dask")  # each case persists its own chunks
    if args.rounds is not None:
        bench.rounds = args.rounds
    try:
        results = {case: run_case(bench, case, args.repeat) for case in args.cases}
    finally:
        bench.teardown("dask")
    load_after = os.getloadavg()
    print(f"load average {load_after[0]:.2f} after; ratio: the dask fit's best time over "
          f"the in-memory fit's, {bench.X.shape[0]} digits, {bench.rounds} rounds, 2 workers "
          "of one thread", flush=True)
    if args.out:
        from mcsparse.utils.records import save_full_run

        save_full_run(args.out, {
            "cases": results, "rounds": bench.rounds, "n_samples": bench.X.shape[0],
            "workers": 2, "threads_per_worker": 1, "repeat": args.repeat,
            "load_average_before": load_before, "load_average_after": load_after,
            "mcsparse_imported_from": str(Path(mcsparse.__file__).parent)},
            script=__file__, command=command)
    return 0


if __name__ == "__main__":  # the workers are spawned processes that re-import this file
    sys.exit(main())
