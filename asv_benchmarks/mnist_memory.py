"""Peak memory of the MNIST template-feature pipeline, one process per size.

Run from a scratch directory (files are written to the current directory),
with ``MCSPARSE_DATA`` set; about 4 minutes on 2 cores::

    python PATH/TO/asv_benchmarks/mnist_memory.py templates
    python PATH/TO/asv_benchmarks/mnist_memory.py run baseline features family fit

``templates`` learns 1000 templates once (``templates_1000.npy``); ``run``
starts one child process per (mode, size) under ``/usr/bin/time``
(``... child MODE N`` prints one JSON line) and appends to ``results.json``.
The numbers are in the user guide's memory page.

Modes: baseline (import + load MNIST + first N training images / 255 as
float32), features (baseline + conv_max_features with the cached 1000 x 7x7
templates and 16 masks, n_jobs=1), family (baseline + ConvMaxTemplates.fit,
k-means included), fit (baseline + ShareBoostClassifier(features=
ConvMaxTemplates(...)).fit, a few rounds).
"""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path.cwd()
TEMPLATES = HERE / "templates_1000.npy"
SIZES = [1250, 2500, 5000, 10000]
N_ROUNDS = 5


def status_kb(field):
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])


def child(mode, n):
    import numpy as np
    from mcsparse.datasets import load_mnist

    X, y = load_mnist(subset="train", return_X_y=True)
    X = (X[:n] / 255.0).astype(np.float32)
    y = y[:n]
    import gc

    gc.collect()
    hwm_load = status_kb("VmHWM")
    # reset the peak (VmHWM) to the current RSS: the pipeline's own peak is
    # then visible even when it stays below the transient peak of loading
    Path("/proc/self/clear_refs").write_text("5")
    rss_before = status_kb("VmRSS")
    t0 = time.perf_counter()
    out_shape = None
    if mode == "features":
        from mcsparse.features import conv_max_features, gaussian_masks

        templates = np.load(TEMPLATES)
        rows, cols = gaussian_masks((22, 22), 16)
        Phi = conv_max_features(X.reshape(-1, 28, 28), templates, rows, cols, n_jobs=1)
        out_shape = Phi.shape
    elif mode == "family":
        from mcsparse.features import ConvMaxTemplates

        Phi = ConvMaxTemplates(n_templates=1000, n_jobs=1, random_state=0).fit_transform(X)
        out_shape = Phi.shape
    elif mode == "fit":
        import warnings

        from sklearn.exceptions import ConvergenceWarning

        from mcsparse import ShareBoostClassifier
        from mcsparse.features import ConvMaxTemplates

        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ShareBoostClassifier(
            features=ConvMaxTemplates(n_templates=1000, n_jobs=1, random_state=0),
            n_features_to_select=N_ROUNDS, alpha=3e-5)
        clf.fit(X, y)
        out_shape = (n, clf.features_.n_candidates_)
    elif mode != "baseline":
        raise ValueError(mode)
    print(json.dumps({"mode": mode, "n": n, "rss_before_kb": rss_before,
                      "hwm_load_kb": hwm_load, "hwm_end_kb": status_kb("VmHWM"),
                      "rss_end_kb": status_kb("VmRSS"),
                      "seconds": time.perf_counter() - t0,
                      "out_shape": out_shape, "blas": _blas()}), flush=True)


def _blas():
    """The BLAS in use (threadpoolctl), kept in each row of the record."""
    from mcsparse.utils._show_versions import blas_info

    return blas_info()


def run(modes):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1")
    path = HERE / "results.json"
    results = json.loads(path.read_text()) if path.exists() else []
    for mode in modes:
        for n in SIZES:
            proc = subprocess.run(
                ["/usr/bin/time", "-f", "MAXRSS_KB %M", sys.executable, __file__,
                 "child", mode, str(n)],
                env=env, capture_output=True, text=True, check=True)
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            row["time_maxrss_kb"] = int(
                [l for l in proc.stderr.splitlines() if l.startswith("MAXRSS_KB")][0].split()[1])
            print(row, flush=True)
            results.append(row)
            path.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]))
    elif sys.argv[1] == "templates":
        import numpy as np
        from mcsparse.datasets import load_mnist
        from mcsparse.features import learn_templates

        X, _ = load_mnist(subset="train", return_X_y=True)
        t0 = time.perf_counter()
        T = learn_templates((X[:10000] / 255.0).reshape(-1, 28, 28), 1000, random_state=0)
        print("k-means", time.perf_counter() - t0, "s")
        np.save(TEMPLATES, T)
    else:
        run(sys.argv[2:])
