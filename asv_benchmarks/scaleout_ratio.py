"""The dask fit's time over the in-memory fit's, per chunking (user guide, scale-out).

Runs the asv benchmark ``scaleout.DaskShareBoostVsInMemory`` outside asv:
MNIST raw pixels, 100 rounds (``MCSPARSE_ASV_QUICK=1``: 10,000 digits, 20
rounds), a 2-worker LocalCluster, for dask's automatic row chunks and for 6
chunks; prints the ratio, best of 3 interleaved pairs, and whether the two
fits agree. Usage: ``python asv_benchmarks/scaleout_ratio.py``.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

if __name__ == "__main__":  # the workers are spawned processes that re-import this file
    import dask.array as da
    from benchmarks.scaleout import DaskShareBoostVsInMemory

    bench = DaskShareBoostVsInMemory()
    bench.setup("dask")
    try:
        n = bench.X.shape[0]
        for name, chunks in (('("auto", -1)', ("auto", -1)), ("6 chunks", (-(-n // 6), -1))):
            bench.data["dask"] = da.from_array(bench.X, chunks=chunks).persist()
            a, b = bench._fit("numpy"), bench._fit("dask")
            same = np.array_equal(a.selected_features_, b.selected_features_)
            gap = np.max(np.abs(a.coef_ - b.coef_))
            print(f"{name}: {len(bench.data['dask'].chunks[0])} chunks, same features "
                  f"{same}, largest coef difference {gap:.1e}, time ratio (best of 3) "
                  f"{bench.track_time_ratio('dask'):.2f}", flush=True)
    finally:
        bench.teardown("dask")
