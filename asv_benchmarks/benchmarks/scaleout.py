"""ShareBoost on a dask array (a 2-worker LocalCluster) beside the in-memory fit."""

import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier

from .common import Benchmark, quick


class DaskShareBoostVsInMemory(Benchmark):
    """MNIST raw pixels, 100 rounds: the dask fit's overhead on one machine.

    ``ShareBoostClassifier(n_features_to_select=100, alpha=1e-4)`` on the
    60,000 training digits / 255, in memory and on the same data as a dask
    array in dask's automatic row chunks (``chunks=("auto", -1)``: 3 chunks of
    at most 128 MiB) on a ``LocalCluster`` of 2 worker processes, one thread
    each (the candidate scan ``X^T R`` runs on the workers, the refit
    here; :doc:`/user_guide/scaleout`). ``track_time_ratio`` is the dask
    fit's time over the in-memory fit's, best of 3 interleaved pairs in one
    process. Quick mode: 10,000 digits, 20 rounds.
    """

    param_names = ["input"]
    params = (["dask", "numpy"],)
    timeout = 1800

    def setup(self, input):
        try:
            import dask.array as da
            from distributed import Client, LocalCluster
        except ImportError:
            raise NotImplementedError('the dask extra is not installed') from None
        from mcsparse.datasets import load_mnist

        warnings.simplefilter("ignore", ConvergenceWarning)
        n, self.rounds = (10_000, 20) if quick() else (60_000, 100)
        X, y = load_mnist(subset="train", return_X_y=True)
        self.X, self.y = X[:n] / 255.0, y[:n]
        self.cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=50)
        self.client = Client(self.cluster)
        self.data = {"numpy": self.X,
                     "dask": da.from_array(self.X, chunks=("auto", -1)).persist()}
        self.input = input

    def teardown(self, input):
        self.client.close()
        self.cluster.close()

    def _fit(self, input):
        return ShareBoostClassifier(n_features_to_select=self.rounds, alpha=1e-4).fit(
            self.data[input], self.y)

    def time_fit(self, input):
        self._fit(input)

    def track_time_ratio(self, input):
        if input != "dask":
            raise NotImplementedError("the ratio is the dask fit's over the in-memory fit's")
        best = {}
        for _ in range(3):
            for name in ("dask", "numpy"):
                start = time.perf_counter()
                self._fit(name)
                best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
        return best["dask"] / best["numpy"]

    track_time_ratio.unit = "ratio"
