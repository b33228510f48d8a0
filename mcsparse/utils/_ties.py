"""The tie rule of ShareBoost's selection: the lowest id among the best scores.

Every candidate family and the Dask runner pick the next candidate by the
same rule, so that the float32 and float64 copies of a data set, and a dask
array of any row chunking, select the same candidates when their scores are
tied in exact arithmetic: the scores are sums over the training samples,
rounded differently by each (float32 products, another summation order, one
partial sum per chunk).
"""

import numpy as np

#: Relative tolerance within which two selection scores (gradient l1 norms)
#: count as tied. It absorbs float32 product rounding: on MNIST pixels
#: (60,000 float32 rows) the float32 scores differ from the float64 ones by at
#: most 4e-6 times the largest score over the first 200 rounds of a path (the
#: residual's cancellations grow along it); ties are decided 25 times above
#: that. Scores that close are equally good for a greedy step.
TIE_RTOL = 1e-4


def tie_cutoff(best):
    """The smallest score tied with ``best``: ``best - TIE_RTOL * |best|``.

    Parameters
    ----------
    best : float
        The largest score.

    Returns
    -------
    cutoff : float
        Infinite for an infinite ``best`` (a score that overflowed).
    """
    return best * (1.0 - TIE_RTOL) if best >= 0 else best * (1.0 + TIE_RTOL)


def first_best(scores):
    """Index of the first score tied with the largest (within ``TIE_RTOL``).

    Parameters
    ----------
    scores : ndarray of shape (n,), float64
        Scores, ``-inf`` for a candidate that may not be chosen; NaN is
        never chosen.

    Returns
    -------
    index : int
        The lowest index ``i`` with ``scores[i] >= tie_cutoff(scores.max())``;
        -1 when every score is ``-inf`` (or ``scores`` is empty).
    """
    scores = np.asarray(scores, dtype=np.float64)
    best = np.max(scores, initial=-np.inf, where=~np.isnan(scores))
    if best == -np.inf:
        return -1
    return int(np.flatnonzero(scores >= tie_cutoff(best))[0])
