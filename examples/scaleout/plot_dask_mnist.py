"""
==========================================================
MNIST template features on a Dask cluster, beside memory
==========================================================

ShareBoost over the convolution-max template features of [SWS2011]_ (§7.4,
the features of Fig. 4) fitted twice: in memory, and on a dask array of the
images on a :class:`distributed.LocalCluster` of worker processes. On the
cluster the template matrix is computed chunk by chunk on the workers
(``ConvMaxTemplates._chunk_features``) and never exists in one place; each
round the workers compute their residual rows, their part of
:math:`\\Phi^\\top R` and the chosen column, and the refit runs here, on the
gathered selected columns (:doc:`/user_guide/scaleout`). The two fits select
the same features and reach the same test error.

**Memory.** In full mode each worker's memory limit (3 GB) is below the
size of the whole template matrix (3.84 GB): the matrix exists only spread
over the 4 workers, about 0.96 GB each, and never in one place. Dask keeps
a worker's data in memory until the process uses 70% of its limit, then
*spills* chunks to its local disk. The example prints each worker's peak
resident memory (``VmHWM``, read on the workers with ``client.run``) and
how many chunks it had spilled at the end. Where the
cluster's memory is smaller than the matrix, the chunks are spilled, not
recomputed (recomputing the template features every round would cost far
more), and read back from disk every round, since every round reads every
chunk: with 2 workers of 2.5 GB the 300-round fit ran for more than an hour
without finishing (:ref:`scaleout-memory`).

**Full run** (``MCSPARSE_FULL=1 python examples/scaleout/plot_dask_mnist.py``,
2 cores): all 60,000 training digits, 1000 templates x 16 masks (a 3.84 GB
float32 matrix), 300 rounds, 4 workers of 3 GB each, chunks of 2000
digits. ``alpha = 3e-5`` is the value the Fig. 4 example chooses on
held-out training digits (training data only). Measured on 2026-12-02: in
memory 237 s (templates, matrix and 300 rounds) and 0.72% test error; on
the cluster 289 s (1.22 times) and 0.72%, the same 300 features and the
same coefficients to the last bit; each worker's peak resident memory 1.28
to 1.48 GB, nothing spilled; the whole example 9 min 22 s, its process
(which also holds the in-memory fit's 3.84 GB matrix and the LocalCluster's
scheduler) peaking at 4.5 GB. Quick mode (the
docs build): 5000 digits, 250 templates, 100 rounds, 2 workers of 1 GB (the
80 MB matrix then fits; nothing is spilled).

**On a real cluster** replace the ``LocalCluster`` by
``Client("tcp://scheduler:8786")`` and read the images with dask (from
zarr, HDF5 or many ``.npy`` files: ``da.from_zarr``, ``da.from_array`` of an
``h5py`` dataset) chunked by rows. What travels per round: the model (``k x
T`` floats and the ``T`` selected ids) to every chunk's task, ``n_candidates x k`` floats per chunk up
the reduction tree (640 kB for 16,000 candidates and 10 classes) and one
column of ``n`` floats to the client; the client holds the ``n x T``
selected columns for the refit.

The code runs under ``if __name__ == "__main__":``: the workers are new
processes that re-import this file (Python's "spawn" start method), and the
guard keeps them from running it.
"""

# %%
# Data and parameters
import os
import time
import warnings

import dask
import dask.array as da
import matplotlib.pyplot as plt
import numpy as np
from distributed import Client, LocalCluster
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_mnist
from mcsparse.features import ConvMaxTemplates

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
n_train, n_test, n_templates, n_rounds = (
    (60_000, 10_000, 1000, 300) if FULL else (5000, 2000, 250, 100))
n_workers, memory_limit = (4, "3GB") if FULL else (2, "1GB")
chunk_rows = 2000 if FULL else 1000
alpha = 3e-5

if __name__ == "__main__":
    warnings.simplefilter("ignore", ConvergenceWarning)
    # da.from_array sends the images with the task graph (15 MB here, 188 MB
    # in full mode), which distributed warns about; on a real cluster the
    # workers read them from storage instead
    warnings.filterwarnings("ignore", "Sending large graph", UserWarning)
    X, y = load_mnist(subset="train", return_X_y=True)
    X_test, y_test = load_mnist(subset="test", return_X_y=True)
    X = (X[:n_train] / 255.0).astype(np.float32)
    y = y[:n_train]
    X_test = (X_test[:n_test] / 255.0).astype(np.float32)
    y_test = y_test[:n_test]
    matrix_mb = n_train * n_templates * 16 * 4 / 1e6
    print(f"{n_train} training digits, {n_templates} templates x 16 masks: the template "
          f"matrix takes {matrix_mb:.0f} MB; {n_workers} workers of {memory_limit} each")


def model():
    family = ConvMaxTemplates(n_templates=n_templates, n_jobs=1, random_state=0)
    return ShareBoostClassifier(features=family, n_features_to_select=n_rounds, alpha=alpha)


def worker_memory(dask_worker):
    """Peak resident memory (MB) of a worker process, and its chunks on disk.

    Linux's ``VmHWM``, the high-water mark of the process's own memory
    (``ru_maxrss`` would report the parent's peak: it survives the exec
    that starts a worker); elsewhere the largest of the memory samples the
    worker's system monitor took, every half second.
    """
    spilled = len(getattr(dask_worker.data, "slow", ()))
    try:
        with open("/proc/self/status") as status:
            line = next(row for row in status if row.startswith("VmHWM:"))
        return int(line.split()[1]) / 1e3, spilled
    except (OSError, StopIteration):
        return max(dask_worker.monitor.quantities["memory"]) / 1e6, spilled


# %%
# In memory
#
# Templates, the whole training matrix, then ``n_rounds`` rounds.
if __name__ == "__main__":
    start = time.perf_counter()
    in_memory = model().fit(X, y)
    memory_time = time.perf_counter() - start
    memory_errors = [np.mean(p != y_test) for p in in_memory.staged_predict(X_test)]
    print(f"in memory: {memory_time:.0f} s, test error {100 * memory_errors[-1]:.2f}%")

# %%
# On a LocalCluster of 2 workers
#
# The images become a dask array of ``chunk_rows`` digits per chunk; the fit
# runs on the current client. Predictions on a dask array are dask arrays.
if __name__ == "__main__":
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, memory_limit=memory_limit,
                      dashboard_address=":0", silence_logs=40) as cluster, \
            Client(cluster) as client:
        X_dask = da.from_array(X, chunks=(chunk_rows, -1))
        start = time.perf_counter()
        on_cluster = model().fit(X_dask, y)
        cluster_time = time.perf_counter() - start
        # the stages share the test digits' selected template features:
        # computed together, these are computed once
        staged = on_cluster.staged_predict(da.from_array(X_test, chunks=(chunk_rows, -1)))
        cluster_errors = [np.mean(p != y_test) for p in dask.compute(*staged)]
        workers = client.run(worker_memory)
    print(f"on the cluster: {cluster_time:.0f} s, test error "
          f"{100 * cluster_errors[-1]:.2f}%")
    for address, (peak, spilled) in sorted(workers.items()):
        print(f"worker {address}: peak resident memory {peak:.0f} MB, "
              f"{spilled} chunks spilled to disk at the end")
    same = np.array_equal(in_memory.selected_features_, on_cluster.selected_features_)
    gap = np.max(np.abs(in_memory.coef_ - on_cluster.coef_)) / np.max(np.abs(in_memory.coef_))
    print(f"same selected features: {same}; largest coefficient difference "
          f"{gap:.1e} of the largest coefficient")

# %%
# The same path
if __name__ == "__main__":
    rounds = np.arange(1, n_rounds + 1)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(rounds, 100 * np.array(memory_errors), label=f"in memory ({memory_time:.0f} s)")
    ax.plot(rounds, 100 * np.array(cluster_errors), "--",
            label=f"{n_workers}-worker LocalCluster ({cluster_time:.0f} s)")
    ax.set(xlabel="rounds (shared template features)", ylabel="test error (%)",
           ylim=(0, min(10, 100 * max(memory_errors[4:] + [0.05]))),
           title=f"MNIST, {n_train} digits: ShareBoost in memory and on Dask"
           + ("" if FULL else " (quick mode)"))
    ax.legend()
    ax.grid(alpha=0.3)
    plt.show()
