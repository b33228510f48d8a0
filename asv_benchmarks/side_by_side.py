"""Side-by-side timings of whole fits: this checkout against an anchor, interleaved.

asv times the parts and tracks them commit by commit; the claims about whole
pipelines (minutes on the full data) are measured here, as ratios of fits run
one after the other in fresh processes, best of ``--repeat`` interleaved
repeats (a shared machine can be off by several times on a single run).

Workloads (the definitions of issue 20 of the project's tracker):

``stumps``
    ``ShareBoostClassifier(n_features_to_select=100, features="stumps",
    alpha=1e-4)`` on pendigits against LightGBM ``LGBMClassifier(
    n_estimators=200, num_leaves=2, learning_rate=0.3, n_jobs=1)``, both in
    this checkout's interpreter (the anchor is LightGBM).
``mnist-pixels``
    100 rounds on MNIST raw pixels / 255 (float32), intercept, ``alpha=0``
    (``mcsparse --dataset mnist``'s model).
``conv-max``
    ``ShareBoostClassifier(n_features_to_select=300, alpha=3e-5,
    features=ConvMaxTemplates(n_templates=1000, n_jobs=2, random_state=0))``
    on all 60,000 digits / 255, templates included; the refit time is the
    path's time less the candidate scans and column fetches.
``fig7``
    The full fit of the Fig. 7 example: PCA-50 of the digits / 255,
    ``AnchorPoints(n_anchors=1500, n_radii=35, quantile_range=(0.002, 0.5),
    n_jobs=2, random_state=0)``, 320 rounds, ``alpha=1e-4``, ``tol=1e-3``.

The last three compare this checkout with ``--baseline`` (``stumps`` too,
when it is given: ShareBoost's fit on both sides, LightGBM's on this one), the Python of an
environment where another version of mcsparse is installed (the one before
the refit engine, say)::

    python -m venv /tmp/base && /tmp/base/bin/pip install "mcsparse @ git+<repo>@<commit>"
    python asv_benchmarks/side_by_side.py conv-max --baseline /tmp/base/bin/python

``--baseline avx2`` compares instead with this checkout run with its own
AVX-512 loops switched off (the group products and the anchor screen; the
AVX2 and BLAS paths they replace): same interpreter, same build.

``--quick`` runs each workload on small sizes (a smoke test). Each run prints
one JSON line, with the BLAS it ran on (threadpoolctl: library, version,
kernels, threads); the summary gives each side's BLAS, the best time of each
side, their ratio and the test errors. Needs ``MCSPARSE_DATA`` for MNIST, and LightGBM for ``stumps``.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import warnings


def _mnist(n_train=None, n_test=None):
    import numpy as np

    from mcsparse.datasets import load_mnist

    X, y = load_mnist(subset="train", return_X_y=True)
    Xt, yt = load_mnist(subset="test", return_X_y=True)
    scale = np.float32(1 / 255)
    return X[:n_train] * scale, y[:n_train], Xt[:n_test] * scale, yt[:n_test]


def _stumps(quick):
    from lightgbm import LGBMClassifier

    from mcsparse import ShareBoostClassifier
    from mcsparse.datasets import load_pendigits

    X, y = load_pendigits(return_X_y=True)
    Xt, yt = load_pendigits(subset="test", return_X_y=True)
    rounds = 20 if quick else 100
    fits = {
        "shareboost": ShareBoostClassifier(n_features_to_select=rounds, features="stumps",
                                           alpha=1e-4),
        "lightgbm": LGBMClassifier(n_estimators=2 * rounds, num_leaves=2, learning_rate=0.3,
                                   n_jobs=1, verbose=-1),
    }
    out = {}
    for name, model in fits.items():
        start = time.perf_counter()
        model.fit(X, y)
        out[name] = {"fit": time.perf_counter() - start,
                     "test_error": float(1 - model.score(Xt, yt))}
    return out


def _mnist_pixels(quick):
    from mcsparse import ShareBoostClassifier

    X, y, Xt, yt = _mnist(10_000 if quick else None, 2000 if quick else None)
    # alpha=0: the bare loss these timings were first recorded with
    model = ShareBoostClassifier(n_features_to_select=20 if quick else 100, alpha=0.0)
    start = time.perf_counter()
    model.fit(X, y)
    return {"fit": time.perf_counter() - start, "test_error": float(1 - model.score(Xt, yt)),
            "refit_iterations": int(model.refit_n_iter_.sum())}


def _timed_family(cls):
    """Patch ``cls`` so that its scans and column fetches are timed."""
    spent = {"best_candidate": 0.0, "training_columns": 0.0}

    def timed(name):
        method = getattr(cls, name)

        def wrapper(self, *args, **kwargs):
            start = time.perf_counter()
            try:
                return method(self, *args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - start

        setattr(cls, name, wrapper)

    timed("best_candidate")
    timed("training_columns")
    return spent


def _path_split(model, X, y, spent):
    """Fit, recording per round the elapsed time and the time of the family's scans."""
    rounds = []
    model.set_params(callback=lambda info: rounds.append(
        (info.elapsed, spent["best_candidate"] + spent["training_columns"])))
    start = time.perf_counter()
    model.fit(X, y)
    total = time.perf_counter() - start
    (t1, s1), (tn, sn) = rounds[0], rounds[-1]
    refit = (tn - t1) - (sn - s1)
    return {"fit": total, "path_after_round_1": tn - t1, "scans": sn - s1,
            "refit": refit, "refit_per_round": refit / max(len(rounds) - 1, 1),
            "refit_iterations": int(model.refit_n_iter_.sum())}


def _conv_max(quick):
    import numpy as np

    from mcsparse import ShareBoostClassifier
    from mcsparse.features import ConvMaxTemplates

    X, y, Xt, yt = _mnist(6000 if quick else None, 2000 if quick else None)
    spent = _timed_family(ConvMaxTemplates)
    rounds = 30 if quick else 300
    model = ShareBoostClassifier(
        n_features_to_select=rounds, alpha=3e-5,
        features=ConvMaxTemplates(n_templates=100 if quick else 1000, n_jobs=2,
                                  random_state=0))
    out = _path_split(model, X, y, spent)
    errors = [float(np.mean(p != yt)) for p in model.staged_predict(Xt)]
    out["test_error"] = {t: errors[t - 1] for t in (75, 100, 200, 266, 300, rounds)
                         if t <= len(errors)}
    return out


def _fig7(quick):
    import numpy as np
    from sklearn.decomposition import PCA

    from mcsparse import ShareBoostClassifier
    from mcsparse.features import AnchorPoints

    X, y, Xt, yt = _mnist(5000 if quick else None, 2000 if quick else None)
    pca = PCA(n_components=50, random_state=0).fit(X.astype(np.float64))
    Z, Zt = pca.transform(X.astype(np.float64)), pca.transform(Xt.astype(np.float64))
    spent = _timed_family(AnchorPoints)
    rounds = 60 if quick else 320
    model = ShareBoostClassifier(
        n_features_to_select=rounds, alpha=1e-4, tol=1e-3,
        features=AnchorPoints(n_anchors=300 if quick else 1500, n_radii=35,
                              quantile_range=(0.002, 0.5), n_jobs=2, random_state=0))
    out = _path_split(model, Z, y, spent)
    errors = [float(np.mean(p != yt)) for p in model.staged_predict(Zt)]
    out["test_error"] = {t: errors[t - 1] for t in (50, 100, 250, rounds) if t <= len(errors)}
    return out


WORKLOADS = {"stumps": _stumps, "mnist-pixels": _mnist_pixels, "conv-max": _conv_max,
             "fig7": _fig7}


def _blas():
    """The BLAS in use, one line (threadpoolctl): a slow kernel shows in each run."""
    try:
        from mcsparse.utils._show_versions import format_blas
    except ImportError:  # a baseline mcsparse from before the helper
        from threadpoolctl import threadpool_info

        return "; ".join(f"{i['internal_api']} {i.get('version')} ({i.get('architecture')}, "
                         f"{i['num_threads']} threads)"
                         for i in threadpool_info() if i["user_api"] == "blas")
    return format_blas()


def _worker(name, quick, avx2=False):
    warnings.simplefilter("ignore")
    if avx2:  # this build's AVX-512 loops off: the AVX2 and BLAS paths
        from mcsparse.features._anchors_fast import _anchor_avx512
        from mcsparse.solvers._columns_fast import _groups_avx512

        _groups_avx512(False)
        _anchor_avx512(False)
    result = WORKLOADS[name](quick)
    print(json.dumps({**result, "blas": _blas()}), flush=True)


def _run(python, name, quick):
    flags = ["--avx2"] if python == "avx2" else []
    python = sys.executable if python == "avx2" else python
    cmd = [python, os.path.abspath(__file__), name, "--worker"] + (["--quick"] if quick else [])
    cmd += flags
    # from a neutral directory, so that the source tree does not shadow the package
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.expanduser("~"),
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(name, runs):
    if name == "stumps" and "baseline" in runs:
        a, b = (min(r["shareboost"]["fit"] for r in runs[side]) for side in ("this", "baseline"))
        print(f"ShareBoost fit: this {a:.3f} s, baseline {b:.3f} s, ratio {a / b:.2f}; test "
              f"error: this {runs['this'][-1]['shareboost']['test_error']:.4f}, baseline "
              f"{runs['baseline'][-1]['shareboost']['test_error']:.4f}")
    if name == "stumps":
        best = {k: min(r[k]["fit"] for r in runs["this"]) for k in ("shareboost", "lightgbm")}
        print(f"best of {len(runs['this'])}: ShareBoost {best['shareboost']:.3f} s, LightGBM "
              f"{best['lightgbm']:.3f} s, ratio {best['shareboost'] / best['lightgbm']:.2f}; "
              f"test error {runs['this'][-1]['shareboost']['test_error']:.4f} vs "
              f"{runs['this'][-1]['lightgbm']['test_error']:.4f}")
        ratios = [r["shareboost"]["fit"] / r["lightgbm"]["fit"] for r in runs["this"]]
        print("ratio per pair:", " ".join(f"{x:.2f}" for x in ratios))
        return
    for key in ("fit", "refit", "refit_per_round"):
        if key in runs["this"][0]:
            a = min(r[key] for r in runs["this"])
            b = min(r[key] for r in runs["baseline"])
            print(f"{key}: this {a:.3f} s, baseline {b:.3f} s, ratio {a / b:.2f}")
    print("test error: this", runs["this"][-1]["test_error"], "baseline",
          runs["baseline"][-1]["test_error"])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workload", choices=sorted(WORKLOADS))
    parser.add_argument("--baseline", help="Python of the environment to compare with, "
                        "or 'avx2': this one without its AVX-512 loops")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved repeats (3)")
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--avx2", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        return _worker(args.workload, args.quick, args.avx2)
    if args.workload != "stumps" and args.baseline is None:
        parser.error(f"{args.workload} compares with --baseline PYTHON")
    sides = {"this": sys.executable}
    if args.baseline is not None:
        sides["baseline"] = args.baseline
    runs = {side: [] for side in sides}
    for i in range(args.repeat):
        for side, python in sides.items():
            result = _run(python, args.workload, args.quick)
            runs[side].append(result)
            print(json.dumps({"repeat": i, "side": side, **result}), flush=True)
    for side, results in runs.items():
        print(f"BLAS ({side}): {results[-1]['blas']}")
    _summary(args.workload, runs)


if __name__ == "__main__":
    main()
