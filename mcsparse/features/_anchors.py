"""Piecewise-linear "anchor" features ([SWS2011], §4.2) and their group scores.

An anchor ``v_a`` with a radius ``r_ab`` defines a group of features,
``1[||x - v_a|| <= r_ab] * [x, 1]``: a linear function active inside the
ball. ShareBoost selects whole groups ([SWS2011], §3.2) by the sum of the l1
norms of their gradient columns; :func:`anchor_group_scores` computes that
score for every (anchor, radius) pair in one pass per anchor.
"""

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.cluster import MiniBatchKMeans
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..utils._ties import tie_cutoff
from ..utils.validation import check_int, check_n_jobs
from ._anchors_fast import anchor_scores_chunk
from ._base import (CandidateFeatures, RowSubset, _as_real_matrix, _best_remaining,
                    _check_finite_scores)


def _as_index_matrix(values, name, shape):
    """``values`` as a 2-D integer array (bools and floats are refused)."""
    values = np.asarray(values)
    if values.dtype == bool or not np.issubdtype(values.dtype, np.integer):
        raise TypeError(f"{name} must hold integers, got dtype {values.dtype}")
    if values.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array of shape {shape}, got shape {values.shape}")
    return values


def _check_anchor_inputs(X1, residual, order, cuts):
    """Validate and convert the inputs of the anchor group scores.

    Returns ``X1`` and ``residual`` as C-ordered float64, ``order`` as
    C-ordered int32 and ``cuts`` as C-ordered intp.
    """
    X1 = _as_real_matrix(X1, "X1", "(n_samples, n_cols)")
    residual = _as_real_matrix(residual, "residual", "(n_samples, n_classes)")
    if residual.shape[0] != X1.shape[0]:
        raise ValueError(
            f"residual has {residual.shape[0]} rows (samples), X1 has {X1.shape[0]}")
    n_samples = X1.shape[0]
    order = _as_index_matrix(order, "order", "(n_anchors, n_max)")
    cuts = _as_index_matrix(cuts, "cuts", "(n_anchors, n_radii)")
    if cuts.shape[0] != order.shape[0]:
        raise ValueError(
            f"cuts has {cuts.shape[0]} rows (anchors), order has {order.shape[0]}")
    n_max = order.shape[1]
    if order.size and (order.min() < 0 or order.max() >= n_samples):
        raise ValueError(
            f"order must hold sample indices in [0, {n_samples}), got values in "
            f"[{order.min()}, {order.max()}]")
    if order.size:
        ranked = np.sort(order, axis=1)
        repeats = (ranked[:, 1:] == ranked[:, :-1]).any(axis=1)
        if repeats.any():
            raise ValueError(
                f"order repeats a sample in the row of anchor {np.flatnonzero(repeats)[0]}: "
                "each row must list distinct samples")
    if cuts.size:
        if cuts.min() < 0 or cuts.max() > n_max:
            raise ValueError(
                f"cuts must be in [0, n_max={n_max}] (samples inside each ball), got "
                f"values in [{cuts.min()}, {cuts.max()}]")
        if (np.diff(cuts, axis=1) < 0).any():
            raise ValueError("cuts must be non-decreasing along each row (nested balls)")
    order = np.ascontiguousarray(order, dtype=np.int32)
    cuts = np.ascontiguousarray(cuts, dtype=np.intp)
    return X1, residual, order, cuts


def anchor_group_scores(X1, residual, order, cuts, *, n_jobs=None):
    r"""Compute ShareBoost's group scores of every (anchor, radius) pair.

    The group of anchor ``a`` and radius ``b`` holds the ``n_cols`` features
    ``1[||x - v_a|| <= r_ab] * X1[:, f]`` ([SWS2011]_ §4.2), and its score,
    the group-selection criterion of [SWS2011]_ §3.2, is the sum over the
    group of the l1 norms of the gradient columns:

    .. math::

        \mathrm{score}[a, b] = \sum_{c, f} \Big| \sum_{i \in S_{ab}}
        R_{ic} X1_{if} \Big|,

    the entrywise l1 norm of ``R_S^T X1_S`` over the samples ``S_ab =
    order[a, :cuts[a, b]]`` inside the ball. The balls of an anchor are
    nested, so a Cython module scores all radii of an anchor in one
    cumulative pass over its sorted samples (blocks between cuts by BLAS
    dgemm, small blocks by a rank-1 loop), ``cuts[a, -1] * n_classes *
    n_cols`` multiply-adds per anchor, chunks of anchors on threads with the
    GIL released.

    Parameters
    ----------
    X1 : array-like of shape (n_samples, n_cols)
        Training data with a column of ones appended (``n_cols = d + 1``);
        real-valued, converted to C-ordered float64.
    residual : array-like of shape (n_samples, n_classes)
        Residual (gradient) rows, e.g. ``w_i (p_i - e_{y_i})``; real-valued,
        converted to C-ordered float64.
    order : array-like of int of shape (n_anchors, n_max)
        Each anchor's nearest ``n_max`` samples, nearest first: distinct
        indices in ``[0, n_samples)``. Converted to int32.
    cuts : array-like of int of shape (n_anchors, n_radii)
        ``cuts[a, b]``: number of samples inside ball ``b`` of anchor ``a``,
        non-decreasing along a row, in ``[0, n_max]``.
    n_jobs : int, default=None
        Threads scoring chunks of anchors side by side (joblib convention:
        None is 1, -1 all cores). With more than one thread, BLAS runs
        single-threaded inside. The result does not depend on ``n_jobs``.

    Returns
    -------
    scores : ndarray of shape (n_anchors, n_radii), float64
        ``scores[a, b]`` is the score of the ball ``order[a, :cuts[a, b]]``
        (0 for an empty ball).

    Raises
    ------
    TypeError
        If ``X1`` or ``residual`` are not real-valued, ``order`` or ``cuts``
        are not integers, or ``n_jobs`` is not None or an int.
    ValueError
        If an array is not 2-D, the numbers of samples or anchors disagree,
        ``X1`` or ``residual`` hold NaN or infinity, ``order`` holds an index
        out of range or repeats a sample within a row, ``cuts`` decrease
        along a row or leave ``[0, n_max]``, ``n_jobs`` is 0, or a score
        overflows float64.

    Notes
    -----
    The tests check it against a private plain-NumPy twin
    (``_anchors.anchor_group_scores_numpy``: gathered rows, BLAS products per
    block of samples between cuts).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3.2
       (group selection) and §4.2 (piecewise-linear features).

    Examples
    --------
    >>> import numpy as np
    >>> X1 = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    >>> R = np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, -1.0]])
    >>> order = np.array([[1, 0, 2]])
    >>> cuts = np.array([[0, 1, 2, 3]])
    >>> anchor_group_scores(X1, R, order, cuts)
    array([[0., 6., 4., 8.]])
    """
    X1, residual, order, cuts = _check_anchor_inputs(X1, residual, order, cuts)
    scores = _anchor_group_scores(X1, residual, order, cuts, check_n_jobs(n_jobs))
    return _check_finite_scores(scores, "X1 or residual")


def _anchor_group_scores(X1, residual, order, cuts, n_jobs, weights=None):
    """:func:`anchor_group_scores` on inputs already checked and converted.

    ``X1`` and ``residual`` are both float64 or both float32 (the screen of
    :func:`_screened_group_scores`). With ``weights`` (float64, one per
    sample), returns ``(scores, bounds)``, ``bounds[a, b]`` the sum of the
    weights over the ball.
    """
    n_anchors, n_radii = cuts.shape
    scores = np.zeros((n_anchors, n_radii), dtype=np.float64)
    bounds = None if weights is None else np.zeros_like(scores)
    if n_anchors == 0 or n_radii == 0:
        return scores if weights is None else (scores, bounds)
    # about four chunks per thread balance anchors of different ball sizes
    n_chunks = min(n_anchors, 4 * n_jobs) if n_jobs > 1 else 1
    edges = np.linspace(0, n_anchors, n_chunks + 1).astype(np.intp).tolist()
    chunks = [(lo, hi) for lo, hi in zip(edges[:-1], edges[1:]) if hi > lo]

    def run(lo, hi):
        anchor_scores_chunk(X1, residual, order, cuts, scores, lo, hi, weights, bounds)

    if len(chunks) == 1:
        # no limit on BLAS here: changing OpenBLAS's thread count wakes its
        # workers, and it keeps blocks this small on one thread
        run(*chunks[0])
    else:
        with threadpool_limits(limits=1, user_api="blas"):
            Parallel(n_jobs=min(n_jobs, len(chunks)), prefer="threads")(
                delayed(run)(lo, hi) for lo, hi in chunks)
    return scores if weights is None else (scores, bounds)


# The float32 screen of the group scores. With residual and X1 scaled by
# powers of two to |.| <= 1 (exact), rounded to float32 and scanned with
# sgemm on blocks of at most _BLOCK_ROWS rows (or, with AVX-512, float32 FMAs
# summed over 64 rows at a time: a smaller gamma), each entry of R_S^T X1_S is
# off from the float64 scan's by at most gamma_{_BLOCK_ROWS} (the block
# products, Higham 2002, §3.1) plus 2u + u^2 (rounding the inputs) times the
# sum of its terms' magnitudes, and by _SCREEN_ABSOLUTE per term for
# underflow (2^-120: even if the CPU flushes float32 subnormals to zero, an
# input, a product or a partial sum loses at most 2^-126). Summed over the
# group's entries, a score is off by at most _SCREEN_RELATIVE * sum_{i in S}
# ||r_i||_1 ||x_i||_1 + _SCREEN_ABSOLUTE * |S| * n_classes * n_cols. The
# factor 2 covers the float64 sums on both sides (the float64 scan's own
# rounding included).
_BLOCK_ROWS = 256  # BLOCK_ROWS of _anchors_fast
_U32 = 2.0 ** -24  # float32's unit roundoff
_SCREEN_RELATIVE = 2.0 * (_BLOCK_ROWS * _U32 / (1.0 - _BLOCK_ROWS * _U32) + 3.0 * _U32)
_SCREEN_ABSOLUTE = 2.0 ** -120


def _power_of_two_scale(a):
    """A power of two above ``max|a|`` (1.0 for zeros): dividing by it is exact."""
    largest = float(np.abs(a).max()) if a.size else 0.0
    return float(np.ldexp(1.0, np.frexp(largest)[1])) if largest > 0 else 1.0


class _Float32Screen:
    """``[X, 1]`` scaled by a power of two and rounded to float32, for the screen.

    Attributes: ``X1`` (float32, C order), ``scale`` (the power of two) and
    ``l1`` (float64, ``||X1_i||_1 / scale`` per sample).
    """

    def __init__(self, X1):
        self.scale = _power_of_two_scale(X1)
        scaled = X1 / self.scale
        self.X1 = np.ascontiguousarray(scaled, dtype=np.float32)
        self.l1 = np.abs(scaled).sum(axis=1)


def _screened_group_scores(X1, screen, residual, order, cuts, excluded, n_jobs):
    """Exact group scores where the best may be; ``-inf`` on the other anchors.

    A float32 scan (half the bytes per gathered row of :func:`anchor_group_scores`'s
    float64 one) gives every score within a proven error bound; the anchors
    whose bound reaches the best lower bound among the candidates outside
    ``excluded`` are scored again in float64, exactly as the full scan scores
    them. So the best candidate (the lowest id among those tied with the
    largest score, :mod:`mcsparse.utils._ties`) and its score are the full
    float64 scan's. ``screen`` is the :class:`_Float32Screen` of ``X1``.
    """
    n_anchors, n_radii = cuts.shape
    r_scale = _power_of_two_scale(residual)
    R = residual / r_scale
    weights = np.abs(R).sum(axis=1) * screen.l1
    # Every partial sum of the float64 scan is at most scale * weights.sum():
    # far from overflow, the float64 scores of a few anchors are finite (else
    # the full scan reports the overflow). Far from underflow, the float64
    # scan's own products lose at most 2^-1022 / scale < 2^-122 in scaled
    # units (flushed to zero or not), within _SCREEN_ABSOLUTE; near it, the
    # full scan decides.
    scale = r_scale * screen.scale
    if not (scale > 2.0 ** -900 and weights.sum() < 1e300 / scale):
        return _check_finite_scores(
            _anchor_group_scores(X1, residual, order, cuts, n_jobs), "X or residual")
    approx, bounds = _anchor_group_scores(screen.X1, R.astype(np.float32), order, cuts,
                                          n_jobs, weights=weights)
    error = (_SCREEN_RELATIVE * bounds
             + _SCREEN_ABSOLUTE * residual.shape[1] * X1.shape[1] * cuts)
    eligible = np.ones(approx.size, dtype=bool)
    eligible[excluded] = False
    eligible = eligible.reshape(approx.shape)
    scores = np.full(approx.shape, -np.inf)
    if not eligible.any():
        return scores
    # the best exact score is at least low: a group that may be tied with it
    # (its exact score within TIE_RTOL of it) reaches tie_cutoff(low)
    low = np.max(approx - error, where=eligible, initial=-np.inf)
    rescore = np.flatnonzero((eligible & (approx + error >= tie_cutoff(low))).any(axis=1))
    scores[rescore] = _check_finite_scores(
        _anchor_group_scores(X1, residual, order[rescore], cuts[rescore], 1),
        "X or residual")
    return scores


def anchor_group_scores_numpy(X1, residual, order, cuts):
    """Plain-NumPy twin of :func:`anchor_group_scores` (tests, benchmarks).

    Same arguments (checked the same way) and result. Per anchor, the rows
    ``order[a, :cuts[a, -1]]`` of ``X1`` and ``residual`` are gathered; each
    block of samples between consecutive cuts gives ``R_b^T X1_b`` by one
    BLAS product, a cumulative sum over the blocks gives ``R_S^T X1_S`` for
    every ball, and its absolute values are summed ([SWS2011]_ §3.2, §4.2).

    Parameters
    ----------
    X1 : array-like of shape (n_samples, n_cols)
        Training data with a column of ones appended.
    residual : array-like of shape (n_samples, n_classes)
        Residual (gradient) rows.
    order : array-like of int of shape (n_anchors, n_max)
        Each anchor's nearest samples, nearest first.
    cuts : array-like of int of shape (n_anchors, n_radii)
        Samples inside each ball, non-decreasing along a row.

    Returns
    -------
    scores : ndarray of shape (n_anchors, n_radii), float64
        ``scores[a, b]`` is the score of the ball ``order[a, :cuts[a, b]]``
        (0 for an empty ball), as :func:`anchor_group_scores` returns it.

    Raises
    ------
    TypeError
        If an argument has the wrong kind of dtype (see
        :func:`anchor_group_scores`).
    ValueError
        If an argument has the wrong shape or values (see
        :func:`anchor_group_scores`).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §3.2
       and §4.2.
    """
    X1, residual, order, cuts = _check_anchor_inputs(X1, residual, order, cuts)
    n_anchors, n_radii = cuts.shape
    n_classes, n_cols = residual.shape[1], X1.shape[1]
    scores = np.zeros((n_anchors, n_radii), dtype=np.float64)
    for a in range(n_anchors):
        used = order[a, :cuts[a, -1]] if n_radii else order[a, :0]
        if used.size == 0:
            continue
        Xa, Ra = X1[used], residual[used]
        starts = np.concatenate(([0], cuts[a, :-1]))
        # overflow becomes inf here and a ValueError below
        with np.errstate(over="ignore", invalid="ignore"):
            blocks = np.stack([Ra[s:e].T @ Xa[s:e] if e > s
                               else np.zeros((n_classes, n_cols))
                               for s, e in zip(starts, cuts[a])])
            scores[a] = np.abs(np.cumsum(blocks, axis=0)).sum(axis=(1, 2))
    return _check_finite_scores(scores, "X1 or residual")


def _ball_sizes(n_samples, n_radii, quantile_range):
    """Target numbers of samples per ball: geometric quantiles of ``n_samples``."""
    low, high = quantile_range
    counts = np.ceil(np.geomspace(low, high, n_radii) * n_samples).astype(np.intp)
    return np.clip(counts, 1, n_samples)


def _radii_and_cuts(sorted_dist, counts, n_samples):
    """Radii strictly between distinct distances, and the samples inside each ball.

    ``sorted_dist`` holds an anchor's nearest distances, ascending (at least
    ``counts[-1] + 1`` of them unless every sample is there). A target count
    that would split samples at equal distance is lowered to the first of
    them, so that ``1[dist <= radius]`` holds for exactly the first ``cut``
    samples; the radius is the midpoint to the next distance.
    """
    radii = np.empty(counts.size)
    cuts = np.empty(counts.size, dtype=np.intp)
    for b, c in enumerate(counts):
        if c >= n_samples:
            radii[b], cuts[b] = sorted_dist[n_samples - 1], n_samples
            continue
        if sorted_dist[c] == sorted_dist[c - 1]:
            c = int(np.searchsorted(sorted_dist, sorted_dist[c - 1], side="left"))
        cuts[b] = c
        # an empty ball gets -inf: a radius below a nearest distance that is
        # 0, or rounding-level, would not keep every sample out of it later
        radii[b] = 0.5 * (sorted_dist[c - 1] + sorted_dist[c]) if c > 0 else -np.inf
    return radii, cuts


def _distinct_centres(centres, scale):
    """The k-means centres without repeats (within ``1e-9 scale``), first kept.

    On data with fewer distinct points than clusters, k-means returns some
    centre several times (up to rounding): each copy would give the same
    balls, hence candidates with equal columns. Warns when centres go.
    """
    dist = cdist(centres, centres)  # exact near 0, unlike the expanded form
    tol = 1e-9 * scale
    keep = []
    for a in range(centres.shape[0]):
        if not keep or dist[a, keep].min() > tol:
            keep.append(a)
    if len(keep) < centres.shape[0]:
        warnings.warn(
            f"AnchorPoints: k-means found {len(keep)} distinct centres of the "
            f"n_anchors={centres.shape[0]} asked (the data have few distinct points); "
            f"the family keeps {len(keep)} anchor points (n_anchors_)", UserWarning,
            stacklevel=3,
        )
    return centres[keep]


def _check_distance_range(X):
    """Refuse values whose squared distances overflow when summed over the samples.

    k-means adds ``n_samples`` squared distances of ``d`` terms each, at most
    ``(2 max|X|)^2``.
    """
    if X.size == 0:
        return
    largest = float(np.abs(X).max())
    limit = 0.25 * np.sqrt(np.finfo(np.float64).max / X.size)
    if largest > limit:
        raise ValueError(
            f"X has values up to {largest:.3g} in magnitude: the sums of squared "
            f"distances of AnchorPoints (k-means) overflow float64 above about "
            f"{limit:.2g} for X of shape {X.shape}; rescale X (e.g. StandardScaler)"
        )


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


def _with_ones(X):
    """``[X, 1]`` as a C-ordered float64 array (whatever the order of ``X``)."""
    X1 = np.empty((X.shape[0], X.shape[1] + 1))
    X1[:, :-1] = X
    X1[:, -1] = 1.0
    return X1


class AnchorPoints(CandidateFeatures):
    """Piecewise-linear "anchor" features: one group per (anchor, radius).

    The candidates of [SWS2011]_ §4.2 and §7.5: the anchor points ``v_a`` are
    k-means centres of the training data; each has ``n_radii`` radii
    ``r_ab``, the distances within which a given fraction of the training
    samples lie (geometric quantiles between ``quantile_range``). Candidate
    ``(a, b)`` is the group of ``n_features + 1`` features

        ``psi_ab(x) = 1[||x - v_a|| <= r_ab] * [x, 1]``,

    a linear piece with its bias active inside the ball; ShareBoost selects
    whole groups (§3.2), so after ``T`` rounds the model is a sum of ``T``
    pieces, ``W psi(x) = sum_t 1[x in ball_t] (U_t x + b_t)``, each piece a
    ``(n_classes, n_features + 1)`` block of ``W``.

    The group score ``sum_{j in J} ||R^T psi_j||_1`` of every (anchor,
    radius) pair is computed without building the groups: each anchor's
    training samples are sorted by distance once, in ``fit``, and every
    round one cumulative pass over them gives all radii
    (:func:`anchor_group_scores`, Cython and BLAS). A round costs about
    ``n_anchors * quantile_range[1] * n_samples * n_classes * (n_features +
    1)`` multiply-adds. That pass runs in float32 (half the bytes per
    gathered sample), with a proven bound on each score's rounding error;
    the few anchors whose bound reaches the best score are scored again in
    float64, so the selected group and its score are those of the float64
    pass.

    Parameters
    ----------
    n_anchors : int, default=1500
        Number of anchor points (k-means clusters of the training data).
        Centres that k-means returns twice (data with fewer distinct points)
        are kept once, with a warning: see ``n_anchors_``.
    n_radii : int, default=35
        Radii per anchor; ``n_candidates = n_anchors * n_radii``.
    quantile_range : pair of floats, default=(0.002, 0.5)
        ``(low, high)`` with ``0 < low <= high <= 1``: the smallest ball of
        an anchor holds a fraction ``low`` of the training samples, the
        largest a fraction ``high``, geometric steps in between (with
        ``n_radii=1``, the one ball holds the fraction ``low``).
    n_jobs : int, default=None
        Threads for the group scores (joblib convention; None is 1).
    random_state : int, RandomState instance or None, default=None
        Seeds k-means.

    Attributes
    ----------
    n_anchors_ : int
        Distinct anchor points found, at most ``n_anchors``.
    anchors_ : ndarray of shape (``n_anchors_``, n_features)
        The anchor points.
    radii_ : ndarray of shape (``n_anchors_``, n_radii)
        ``radii_[a, b]``: radius of candidate ``a * n_radii + b``,
        non-decreasing in ``b``; ``-inf`` for an empty ball (see Notes).
    ball_sizes_ : ndarray of shape (``n_anchors_``, n_radii), dtype intp
        Training samples inside each ball.
    n_candidates_ : int
        ``n_anchors_ * n_radii``.
    candidate_widths_ : ndarray of shape (n_candidates,), dtype intp
        ``n_features + 1`` for every candidate.
    support_ : ndarray of shape (n_features,), bool
        After :meth:`end_scan`: all True (a piece reads every feature).
    n_features_in_ : int
        Number of input features.

    See Also
    --------
    anchor_group_scores : The group scores of all (anchor, radius) pairs.

    Notes
    -----
    Radii are placed midway between consecutive distinct training
    distances, so ``1[||x - v|| <= r]`` selects exactly the intended
    training samples; a ball whose target size would split samples at
    equal distance is made smaller. A ball made empty that way (the anchor
    lies on duplicated training rows) has radius ``-inf``, so that no
    sample, in training or later, is inside it. The largest ball, with ``high = 1``,
    has the largest training distance as its radius.

    Distances (and k-means) are computed on data centred by the training
    mean, so that data far from the origin keep their precision; the
    anchors are reported in the original coordinates.

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011,
       §3.2 (group selection), §4.2 (piecewise-linear predictors), §7.5.

    Examples
    --------
    >>> from mcsparse import ShareBoostClassifier
    >>> from mcsparse.datasets import load_pendigits
    >>> from mcsparse.features import AnchorPoints
    >>> X, y = load_pendigits(return_X_y=True)
    >>> family = AnchorPoints(n_anchors=50, n_radii=5, random_state=0)
    >>> clf = ShareBoostClassifier(n_features_to_select=5, features=family,
    ...                            alpha=1e-4).fit(X[:2000] / 100, y[:2000])
    >>> clf.coef_.shape  # 5 pieces of 16 + 1 columns
    (10, 85)
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def __init__(self, n_anchors=1500, n_radii=35, quantile_range=(0.002, 0.5),
                 n_jobs=None, random_state=None):
        self.n_anchors = n_anchors
        self.n_radii = n_radii
        self.quantile_range = quantile_range
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _check_params(self):
        for name in ("n_anchors", "n_radii"):
            check_int(getattr(self, name), name, low=1)
        if self.n_anchors * self.n_radii > np.iinfo(np.int32).max:
            raise ValueError(
                f"n_anchors * n_radii = {self.n_anchors * self.n_radii} candidates are "
                f"too many (at most {np.iinfo(np.int32).max}): lower n_anchors or n_radii"
            )
        q = self.quantile_range
        if isinstance(q, np.ndarray) and q.ndim == 1:
            q = q.tolist()
        if (not isinstance(q, (tuple, list)) or len(q) != 2
                or not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                           for v in q)
                or not 0 < q[0] <= q[1] <= 1):
            raise ValueError(
                "quantile_range must be a pair (low, high) with 0 < low <= high "
                f"<= 1, got {q!r}"
            )
        return check_n_jobs(self.n_jobs), (float(q[0]), float(q[1]))

    def fit(self, X, y=None):
        """Find the anchors, sort each anchor's samples by distance, set the radii.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data, converted to float64; sparse input is densified.
        y : None
            Ignored.

        Returns
        -------
        self : AnchorPoints
            The fitted family, ready to score.

        Raises
        ------
        ValueError
            If a parameter is out of range, ``X`` has NaN or infinity, values
            so large that k-means' sums of squared distances overflow (about
            ``0.25 sqrt(1.8e308 / X.size)``), or fewer samples than
            ``n_anchors``.
        """
        self._n_threads, quantile_range = self._check_params()
        self.__dict__.pop("support_", None)
        X = _dense(validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64))
        n_samples, n_features = X.shape
        if n_samples < self.n_anchors:
            raise ValueError(
                f"n_anchors={self.n_anchors} k-means clusters need at least as "
                f"many samples, got n_samples={n_samples}"
            )
        _check_distance_range(X)
        # centred coordinates: ||x||^2 - 2 x.v + ||v||^2 keeps its precision
        self._mean = X.mean(axis=0)
        Xc = X - self._mean
        kmeans = MiniBatchKMeans(n_clusters=self.n_anchors, n_init=3, batch_size=4096,
                                 random_state=self.random_state).fit(Xc)
        sq_norms = np.einsum("ij,ij->i", Xc, Xc)
        anchors = _distinct_centres(kmeans.cluster_centers_, np.sqrt(sq_norms.mean()))
        self.n_anchors_ = n_anchors = anchors.shape[0]
        self.anchors_ = anchors + self._mean
        counts = _ball_sizes(n_samples, self.n_radii, quantile_range)
        n_kept = min(n_samples, int(counts[-1]) + 1)
        order = np.empty((n_anchors, n_kept), dtype=np.int32)
        self.radii_ = np.empty((n_anchors, self.n_radii))
        self.ball_sizes_ = np.empty((n_anchors, self.n_radii), dtype=np.intp)
        for lo in range(0, n_anchors, 128):
            hi = min(lo + 128, n_anchors)
            dist = euclidean_distances(anchors[lo:hi], Xc, Y_norm_squared=sq_norms)
            if n_kept < n_samples:
                near = np.argpartition(dist, n_kept - 1, axis=1)[:, :n_kept]
            else:
                near = np.broadcast_to(np.arange(n_samples), dist.shape)
            near_dist = np.take_along_axis(dist, near, axis=1)
            rank = np.argsort(near_dist, axis=1, kind="stable")
            order[lo:hi] = np.take_along_axis(near, rank, axis=1)
            near_dist = np.take_along_axis(near_dist, rank, axis=1)
            for a in range(lo, hi):
                self.radii_[a], self.ball_sizes_[a] = _radii_and_cuts(
                    near_dist[a - lo], counts, n_samples)
        self._order = order
        self._X_fit = _with_ones(X)
        self._screen = None  # made by the first scan
        self.n_candidates_ = n_anchors * self.n_radii
        self.candidate_widths_ = np.full(self.n_candidates_, n_features + 1, dtype=np.intp)
        return self

    def best_candidate(self, residual, excluded):
        """The (anchor, radius) group with the largest score outside ``excluded``.

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows of the training samples.
        excluded : ndarray of shape (n_excluded,), intp
            Candidates that must not be returned.

        Returns
        -------
        id : int
            ``a * n_radii + b`` of the best group (the lowest id among the
            groups tied with the largest score, :mod:`mcsparse.utils._ties`).
        score : float
            Its ``sum_{j in J} ||R^T psi_j||_1``, as
            :func:`anchor_group_scores` computes it: the float32 screen
            (see the class notes) changes neither the group nor its score.

        Raises
        ------
        ValueError
            If every candidate is excluded, ``residual`` has the wrong shape
            or non-finite values, or a score overflows.
        TypeError
            If ``residual`` is sparse or does not hold real numbers.
        """
        self._check_scanning()
        excluded = self._check_excluded(excluded, self.n_candidates_)
        residual = self._check_residual(residual, self._X_fit.shape[0])
        if getattr(self, "_screen", None) is None:
            self._screen = _Float32Screen(self._X_fit)
        scores = _screened_group_scores(self._X_fit, self._screen, residual, self._order,
                                        self.ball_sizes_, excluded, self._n_threads)
        return _best_remaining(scores.ravel(), excluded)

    def _candidate_name(self, j, input_names):
        a, b = divmod(j, self.n_radii)
        return f"anchor {a}, radius {self.radii_[a, b]:.4g}"

    def training_columns(self, ids):
        """The groups ``ids`` on the training data, side by side.

        Parameters
        ----------
        ids : array-like of int
            Candidates ``a * n_radii + b``.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids) * (n_features + 1))
            Zero outside each group's ball.
        """
        self._check_scanning()
        ids = self._check_ids(ids, self.n_candidates_)
        n_samples, width = self._X_fit.shape
        out = np.zeros((n_samples, ids.size * width))
        for c, j in enumerate(ids):
            a, b = divmod(int(j), self.n_radii)
            rows = self._order[a, : self.ball_sizes_[a, b]]
            out[rows, c * width : (c + 1) * width] = self._X_fit[rows]
        return out

    def training_rows(self, j):
        """Group ``j`` on the training data as (ball rows, ``[X, 1]``), without a copy.

        The group's columns ``training_columns([j])`` are ``values[rows]`` on
        ``rows`` and zero elsewhere: ShareBoost's column store keeps the row
        indices and shares ``values`` among all selected pieces.

        Parameters
        ----------
        j : int
            Candidate ``a * n_radii + b``.

        Returns
        -------
        rows : ndarray of shape (n_inside,), intp
            The training samples inside the ball, increasing.
        values : ndarray of shape (n_samples, n_features + 1), float64
            The training data with a column of ones (read-only, the
            family's own array: the same for every ``j``).
        """
        self._check_scanning()
        if np.ndim(j) != 0:
            raise ValueError(f"j must be one candidate id, got shape {np.shape(j)}")
        a, b = divmod(int(self._check_ids([j], self.n_candidates_)[0]), self.n_radii)
        rows = np.sort(self._order[a, : self.ball_sizes_[a, b]]).astype(np.intp)
        self._X_fit.flags.writeable = False  # shared by the store: nobody may change it
        return rows, self._X_fit

    def training_block(self, j):
        """Group ``j``'s training columns as ``RowSubset(rows, values)`` (:meth:`training_rows`).

        Parameters
        ----------
        j : int
            Candidate ``a * n_radii + b``.

        Returns
        -------
        block : RowSubset
            The ball's rows and the shared ``[X, 1]``.

        Raises
        ------
        ValueError
            If ``training_rows`` does not return a pair.
        """
        return RowSubset.from_pair(self.training_rows(j),
                                   f"{type(self).__name__}.training_rows({j})")

    def end_scan(self, ids):
        """Free the sorted samples; the anchors and radii stay for prediction.

        Parameters
        ----------
        ids : array-like of int
            The selected candidates ``a * n_radii + b`` (only checked: every
            group reads all input features, so ``support_`` is all True).

        Returns
        -------
        self : AnchorPoints
            The family, which can no longer select.
        """
        check_is_fitted(self)
        self._check_ids(ids, self.n_candidates_)
        self.support_ = np.ones(self.n_features_in_, dtype=bool)
        self._X_fit = self._order = self._screen = None
        return self

    def transform_candidates(self, X, ids):
        """The groups ``ids`` on new data, side by side.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            New data; sparse input is densified.
        ids : array-like of int
            Candidates ``a * n_radii + b``.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids) * (n_features + 1))
            ``1[||x - v_a|| <= r_ab] * [x, 1]`` for each id.
        """
        check_is_fitted(self)
        ids = self._check_ids(ids, self.n_candidates_)
        X = _dense(validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64,
                                 reset=False))
        X1 = _with_ones(X)
        width = X1.shape[1]
        anchor, radius = np.divmod(ids, self.n_radii)
        used, where = np.unique(anchor, return_inverse=True)
        dist = (euclidean_distances(X - self._mean, self.anchors_[used] - self._mean)
                if used.size else None)
        out = np.zeros((X.shape[0], ids.size * width))
        for c in range(ids.size):
            inside = dist[:, where[c]] <= self.radii_[anchor[c], radius[c]]
            out[inside, c * width : (c + 1) * width] = X1[inside]
        return out
