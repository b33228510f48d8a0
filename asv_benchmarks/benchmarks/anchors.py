"""Anchor features: throughput of the group scores ([SWS2011], §3.2 and §4.2)."""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from mcsparse.features._anchors import (_Float32Screen, _screened_group_scores,
                                        anchor_group_scores, anchor_group_scores_numpy)
from mcsparse.features._anchors_fast import _anchor_avx512
from mcsparse.solvers._columns_fast import _groups_avx512

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
    * ``numpy``: the NumPy twin (gather, one matmul per block, cumsum);
    * ``screened``: what ``AnchorPoints.best_candidate`` runs, the same pass
      on float32 copies (float32 FMAs on the rows in place where the CPU
      has AVX-512, else a gather and sgemm) with an error bound per score,
      then the anchors the bound cannot rule out scored again in float64;
    * ``screened-sgemm``: the same with the gather and sgemm on every CPU.

    ``track_macs_per_second`` and ``track_groups_per_second`` compare them
    (the float64 pass's multiply-adds for all four).
    Quick mode: 20 anchors.
    """

    param_names = ["implementation"]
    params = (["cython", "numpy", "screened", "screened-sgemm"],)
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
        screen = _Float32Screen(self.X1)
        nothing = np.zeros(0, dtype=np.intp)

        def screened(X1, residual, order, cuts):
            return _screened_group_scores(X1, screen, residual, order, cuts, nothing, 1)

        self.func = {"cython": anchor_group_scores, "numpy": anchor_group_scores_numpy,
                     "screened": screened, "screened-sgemm": screened}[implementation]
        _anchor_avx512(implementation != "screened-sgemm")
        # one thread for BLAS too (the twin's matmuls), for the whole run
        self._limits = threadpool_limits(limits=1, user_api="blas")
        self.run()  # warm up

    def teardown(self, implementation):
        self._limits.restore_original_limits()
        _anchor_avx512(True)

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


def _random_pieces(rng, n_cols):
    """``[X, 1]`` and the rows of 300 pieces of 60,000 samples (quick: 40 of 10,000).

    Each piece holds a random 40 to 50% of the samples: the selected balls of
    the Fig. 7 fit's late rounds are nearly all the largest, and only their
    sizes matter to the products.
    """
    n, n_pieces = (10_000, 40) if quick() else (60_000, 300)
    X1 = rng.standard_normal((n, n_cols))
    X1[:, -1] = 1.0
    return X1, [np.flatnonzero(rng.random(n) < rng.uniform(0.4, 0.5)) for _ in range(n_pieces)]


class AnchorPiecesPass(Benchmark):
    """One fused pass (scores, loss, gradient) over selected anchor pieces, two stores.

    The late rounds of the Fig. 7 fit: 300 pieces ``1[||x - v|| <= r] [x,
    1]`` of 60,000 samples x 51 columns (PCA-50 and the ones column), each
    on 40 to 50% of the samples (the selected balls are nearly all the
    largest), 10 classes, in ShareBoost's column store on two threads,
    BLAS on one:

    * ``shared``: the pieces as row indices into the one ``[X, 1]`` matrix
      (``SelectedColumns.put_rows``, what ``AnchorPoints`` gives the path);
    * ``copied``: each piece's rows copied into the store (``put`` of the
      dense block), the store's way for groups of other families;

    with the group products' ``default`` loops (AVX-512 where the CPU has
    it) or their ``avx2`` loops (the same bits).

    The balls are random row subsets here (the real ones are balls of
    nearby digits; only the sizes matter to the products).
    ``track_store_megabytes`` counts what the store holds for the pieces
    beyond the shared matrix. Quick mode: 10,000 samples, 40 pieces.
    """

    param_names = ["storage", "loops"]
    params = (["shared", "copied"], ["default", "avx2"])
    n_cols, n_classes = 51, 10
    timeout = 1200

    def setup(self, storage, loops):
        from mcsparse.solvers._columns import SelectedColumns

        _groups_avx512(loops == "default")

        rng = np.random.default_rng(0)
        X1, balls = _random_pieces(rng, self.n_cols)
        n, n_pieces = len(X1), len(balls)
        X1.flags.writeable = False  # shared by the store
        self.store = SelectedColumns(n, n_pieces * self.n_cols, n_threads=2)
        for t, rows in enumerate(balls):
            if storage == "shared":
                self.store.put_rows(rows, X1, t * self.n_cols)
            else:
                block = np.zeros_like(X1)
                block[rows] = X1[rows]
                self.store.put(block, t * self.n_cols)
        self.Wt = 1e-3 * rng.standard_normal((n_pieces * self.n_cols, self.n_classes))
        self.y = rng.integers(0, self.n_classes, n).astype(np.intp)
        self.scores = np.empty((n, self.n_classes))
        self.residual = np.empty((n, self.n_classes))
        self._limits = threadpool_limits(limits=1, user_api="blas")

    def teardown(self, storage, loops):
        self._limits.restore_original_limits()
        _groups_avx512(True)

    def time_fused_pass(self, storage, loops):
        from mcsparse.loss import MulticlassLogisticLoss

        self.store.value_grad(self.Wt, np.zeros(self.n_classes), MulticlassLogisticLoss(),
                              self.y, None, self.scores, self.residual)

    def track_store_megabytes(self, storage, loops):
        held = 0
        for block in self.store._blocks:
            for group in block.groups:
                held += group[1].nbytes + (0 if len(group) == 4 else group[2].nbytes)
        return held / 2**20

    track_store_megabytes.unit = "MB"


class AnchorPiecesProducts(Benchmark):
    """The two products of the refit over selected anchor pieces, beside BLAS.

    The shapes of :class:`AnchorPiecesPass` (300 pieces of 60,000 samples x
    51 columns, 40 to 50% of the samples each, 10 classes), as row indices
    into the one ``[X, 1]`` matrix, one thread:

    * ``cython``: :func:`mcsparse.solvers._columns_fast.groups_matmul`
      (scores) and ``groups_rmatmul`` (gradient rows), register-blocked C
      loops that read the rows in place;
    * ``blas``: the same products as NumPy writes them, one dgemm per piece
      on its gathered rows (``X1[rows] @ Vt`` and ``X1[rows].T @ M[rows]``),
      the store's way before the C loops.

    Quick mode: 10,000 samples, 40 pieces.
    """

    param_names = ["implementation"]
    params = (["cython", "blas"],)
    n_cols, n_classes = 51, 10
    timeout = 1200

    def setup(self, implementation):
        from mcsparse.solvers._columns_fast import groups_matmul, groups_rmatmul

        rng = np.random.default_rng(0)
        X1, balls = _random_pieces(rng, self.n_cols)
        n, n_pieces = len(X1), len(balls)
        self.groups = [(t * self.n_cols, rows, X1, True) for t, rows in enumerate(balls)]
        self.Vt = rng.standard_normal((n_pieces * self.n_cols, self.n_classes))
        self.M = rng.standard_normal((n, self.n_classes))
        self.scores = np.zeros((n, self.n_classes))
        self.grad = np.zeros_like(self.Vt)
        if implementation == "cython":
            self.matmul, self.rmatmul = groups_matmul, groups_rmatmul
        else:
            self.matmul, self.rmatmul = self._blas_matmul, self._blas_rmatmul
        self._limits = threadpool_limits(limits=1, user_api="blas")

    def teardown(self, implementation):
        self._limits.restore_original_limits()

    @staticmethod
    def _blas_matmul(groups, Vt, out):
        for first, rows, values, _ in groups:
            out[rows] += values[rows] @ Vt[first:first + values.shape[1]]

    @staticmethod
    def _blas_rmatmul(groups, M, out):
        for first, rows, values, _ in groups:
            out[first:first + values.shape[1]] = values[rows].T @ M[rows]

    def time_scores(self, implementation):
        self.matmul(self.groups, self.Vt, self.scores)

    def time_gradient(self, implementation):
        self.rmatmul(self.groups, self.M, self.grad)
