"""Threshold columns: decision stumps kept as cuts of integer codes.

A decision stump of ShareBoost's stump family (§4.1 of [SWS2011]_) is the
column ``1[code_i <= cut]``, ``code_i`` the rank (or bin) of sample ``i``'s
value of one feature. The column store keeps it dense like any column, and
:class:`ThresholdIndex` keeps its codes and cut as well. When every column
the refit uses is such a stump, the fused pass scores -> loss -> gradient
uses the nesting of the stumps of one feature instead of a product per
column (:mod:`mcsparse.solvers._columns_fast`, ``slots_matmul`` and
``sorted_rmatmul``):

- the stumps of one feature sorted by cut form a *run*; a sample whose code
  lies above ``b`` of the run's cuts is in the run's stumps ``b, b + 1, ...``
  only: its *slot*. The scores the run adds are the suffix sums of its
  coefficients at each sample's slot;
- the run's gradient rows are running sums of the residual over the samples
  sorted by code, read where the codes pass each cut.

Each costs ``O(n_samples * n_scores)`` a feature, against ``O(n_samples *
n_scores)`` a stump for the dense products (asv ``ThresholdColumns`` compares
the two passes), but with a larger constant: the running sums read the
residual's rows in each feature's order of codes. The store uses it from
four stumps a feature on (``RUNS_PER_COLUMN``), and only while a row block's
residual fits in the cache (``SORTED_BYTES_MAX``). The sums
run in another order than the dense products: the results agree to
rounding, and are the same whatever the number of threads.

The plain-NumPy twins of the two kernels are here.
"""

import numpy as np

from ..utils.validation import may_be_written
from ._columns_fast import SCORE_LANES

#: Most features per stump for the sums by feature. Measured on one fused pass
#: at a fit's own selected stumps, and on random ones by asv
#: ``ThresholdColumns``: they beat the dense pass on pendigits from about four
#: stumps a feature, and never on satimage's 36 features within 100 stumps.
RUNS_PER_COLUMN = 0.25
#: Largest row block's residual (rows times the padded scores, float64, in
#: bytes) for the sums by feature: they read its rows out of order, which pays
#: only while it stays in the cache (half the L2 cache of a core of the machine
#: measured). Letter's blocks of 8,000 rows and 26 scores, above it, were
#: slower by feature than dense even at 100 stumps on 16 features.
SORTED_BYTES_MAX = 1 << 20


def slots_matmul_numpy(slots, run_start, cols, shift, Vt, out):
    """NumPy twin of ``slots_matmul``: ``out[i] += sum_q table[slots[i, q]]``."""
    n_runs, r = slots.shape[1], Vt.shape[1]
    m = len(cols)
    if m == 0:
        return
    table = np.zeros((m + n_runs, r))
    for q in range(n_runs):
        lo, hi = run_start[q], run_start[q + 1]
        # row b of the run: the coefficients of its stumps b, b + 1, ...
        table[lo + q:hi + q] = np.cumsum(Vt[cols[lo:hi]][::-1], axis=0)[::-1]
    table[:run_start[1] + 1] -= shift @ Vt[cols]
    for q in range(n_runs):
        lo, length = run_start[q] + q, run_start[q + 1] - run_start[q]
        rows = lo + np.clip(slots[:, q].astype(np.int64) - lo, 0, length)
        # a slot below the run's rows is clamped to its last row, as the kernel
        # does (as unsigned, it is above)
        rows[slots[:, q] < lo] = lo + length
        out += table[rows]


def sorted_rmatmul_numpy(order, ends, run_start, cols, shift, M, out):
    """NumPy twin of ``sorted_rmatmul``: each stump's rows of ``M``, summed, less the shift."""
    n = M.shape[0]
    total = M.sum(axis=0)
    for q in range(order.shape[0]):
        rows = np.clip(order[q].astype(np.int64), 0, max(n - 1, 0))
        rows[order[q] < 0] = max(n - 1, 0)
        running = np.vstack([np.zeros(M.shape[1]), np.cumsum(M[rows], axis=0)])
        for l in range(run_start[q], run_start[q + 1]):
            out[cols[l]] = running[ends[l]] - shift[l] * total


def check_codes(codes, n_samples):
    """``codes`` as a read-only 1-D int32 array of non-negative codes, or an error."""
    if not isinstance(codes, np.ndarray) or codes.dtype != np.int32:
        raise TypeError(f"codes must be an int32 ndarray, got "
                        f"{getattr(codes, 'dtype', type(codes).__name__)}")
    if codes.shape != (n_samples,):
        raise ValueError(f"codes must have shape ({n_samples},), got {codes.shape}")
    if may_be_written(codes):
        raise ValueError("codes must be read-only (it and the memory it views): the store "
                         "keeps a reference to it")
    if n_samples and codes.min() < 0:
        raise ValueError(f"codes must be non-negative, got {codes.min()}")
    return codes


class ThresholdIndex:
    """The codes and cuts of a store's stump columns, and their prepared runs."""

    def __init__(self):
        self._codes = []  # distinct code arrays (by reference)
        self._cuts = []  # (column, index in _codes, cut), in column order
        self._orders = {}  # (block start, codes index) -> rows sorted by code, codes sorted
        self._prepared = None  # (p, per-block arrays)

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_orders"], state["_prepared"] = {}, None  # caches
        return state

    def add(self, codes, cut, start):
        """Note that column ``start`` is ``1[codes <= cut]`` (both checked by the caller)."""
        self.truncate(start)
        for key, known in enumerate(self._codes):
            # the same read-only memory: the same feature (other codes, even
            # equal ones, make another run: the sums are the same)
            if known.__array_interface__ == codes.__array_interface__:
                break
        else:
            key = len(self._codes)
            self._codes.append(codes)
        self._cuts.append((start, key, int(cut)))

    def truncate(self, start):
        """Forget the columns from ``start`` on."""
        self._cuts = [c for c in self._cuts if c[0] < start]
        self._prepared = None

    def pays(self, p, rows=0, n_scores=1):
        """Whether the sums by feature beat the fused dense pass on the first ``p`` columns.

        They must all be stumps, on at most ``p / 4`` features
        (``RUNS_PER_COLUMN``), and a block's residual (``rows`` rows of
        ``n_scores`` scores) must fit in ``SORTED_BYTES_MAX``.
        """
        padded = -(-n_scores // SCORE_LANES) * SCORE_LANES
        if rows * padded * 8 > SORTED_BYTES_MAX:
            return False
        cuts = [key for col, key, _ in self._cuts if col < p]
        return p > 0 and len(cuts) == p and len(set(cuts)) <= RUNS_PER_COLUMN * p

    def prepare(self, p, blocks, shift):
        """Per block: ``(slots, run_start, cols, shift, order, ends)`` of the first p columns."""
        if self._prepared is not None and self._prepared[0] == p:
            return self._prepared[1]
        cuts = sorted((key, cut, col) for col, key, cut in self._cuts if col < p)
        keys = np.array([c[0] for c in cuts], dtype=np.intp)
        cut_values = np.array([c[1] for c in cuts], dtype=np.int32)
        cols = np.array([c[2] for c in cuts], dtype=np.intp)
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
        run_start = np.r_[starts, len(cuts)].astype(np.intp)
        shift = np.ascontiguousarray(shift[cols])
        self._prepared = (p, [])
        for b in blocks:
            slots, order, ends = self._prepare_block(b, keys, cut_values, run_start)
            self._prepared[1].append((slots, run_start, cols, shift, order, ends))
        used = set(keys.tolist())  # the sorted orders of the features in use only
        self._orders = {k: v for k, v in self._orders.items() if k[1] in used}
        return self._prepared[1]

    def _prepare_block(self, b, keys, cut_values, run_start):
        n_runs = len(run_start) - 1
        slots = np.empty((b.stop - b.start, n_runs), dtype=np.int32)
        order = np.empty((n_runs, b.stop - b.start), dtype=np.int32)
        ends = np.empty(len(keys), dtype=np.intp)
        for q in range(n_runs):
            lo, hi = run_start[q], run_start[q + 1]
            bins, order[q], ends[lo:hi] = self._run(b, int(keys[lo]), cut_values[lo:hi])
            slots[:, q] = bins
            slots[:, q] += lo + q  # the run's first row in the tables
        return slots, order, ends

    def _run(self, b, key, cuts):
        """A run's bins (cuts below each code), rows sorted by code and ends, cached."""
        if (b.start, key) not in self._orders:
            codes = self._codes[key][b.start:b.stop]
            rows = np.argsort(codes, kind="stable").astype(np.int32)
            self._orders[b.start, key] = (codes, rows, codes[rows], {})
        codes, rows, sorted_codes, runs = self._orders[b.start, key]
        signature = cuts.tobytes()
        if signature not in runs:
            runs.clear()  # a feature's run changes by one stump a round: keep the last
            runs[signature] = (np.searchsorted(cuts, codes, side="left").astype(np.int32),
                               np.searchsorted(sorted_codes, cuts, side="right"))
        bins, ends = runs[signature]
        return bins, rows, ends
