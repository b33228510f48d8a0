"""Anchor features: throughput of the group scores ([SWS2011], §3.2 and §4.2)."""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from mcsparse.features._anchors import anchor_group_scores, anchor_group_scores_numpy

from .common import Benchmark, quick


class AnchorGroupScoring(Benchmark):
    """Group scores of 100 anchors x 35 radii, one thread each.

    20,000 samples of 50 features plus the ones column, 10 classes; each
    anchor's 2000 nearest samples (a random permutation here: only the
    memory access pattern matters), 35 nested balls, the largest holding all
    2000. One evaluation is 100 * 2000 * 10 * 51 = 1.02e8 multiply-adds
    (the MNIST-PCA setting of Fig. 7 has 1500 anchors: 15 times more).

    * ``cython``: :func:`mcsparse.features._anchors.anchor_group_scores`
      (one cumulative pass per anchor; dgemm per block between cuts);
    * ``numpy``: the NumPy twin (gather, one matmul per block, cumsum).

    ``track_macs_per_second`` and ``track_groups_per_second`` compare them.
    Quick mode: 20 anchors.
    """

    param_names = ["implementation"]
    params = (["cython", "numpy"],)
    n_samples, n_cols, n_classes, n_max, n_radii = 20_000, 51, 10, 2000, 35

    def setup(self, implementation):
        n_anchors = 20 if quick() else 100
        rng = np.random.default_rng(0)
        self.X1 = rng.standard_normal((self.n_samples, self.n_cols))
        self.X1[:, -1] = 1.0
        self.residual = rng.standard_normal((self.n_samples, self.n_classes))
        self.order = np.stack([rng.permutation(self.n_samples)[:self.n_max]
                               for _ in range(n_anchors)]).astype(np.int32)
        cuts = np.sort(rng.integers(1, self.n_max + 1, (n_anchors, self.n_radii)), axis=1)
        cuts[:, -1] = self.n_max
        self.cuts = cuts.astype(np.intp)
        self.macs = int(self.cuts[:, -1].sum()) * self.n_classes * self.n_cols
        self.func = {"cython": anchor_group_scores,
                     "numpy": anchor_group_scores_numpy}[implementation]
        # one thread for BLAS too (the twin's matmuls), for the whole run
        self._limits = threadpool_limits(limits=1, user_api="blas")
        self.run()  # warm up

    def teardown(self, implementation):
        self._limits.restore_original_limits()

    def run(self):
        self.func(self.X1, self.residual, self.order, self.cuts)

    def time_group_scores(self, implementation):
        self.run()

    def peakmem_group_scores(self, implementation):
        self.run()

    def _best_time(self):
        best = np.inf
        for _ in range(5):
            start = time.perf_counter()
            self.run()
            best = min(best, time.perf_counter() - start)
        return best

    def track_macs_per_second(self, implementation):
        return self.macs / self._best_time()

    track_macs_per_second.unit = "multiply-adds/s"

    def track_groups_per_second(self, implementation):
        return self.cuts.size / self._best_time()

    track_groups_per_second.unit = "groups/s"
