"""Group scores of the anchor features: Cython module, NumPy twin, brute force."""

import numpy as np
import pytest

from mcsparse.features._anchors import anchor_group_scores, anchor_group_scores_numpy
from mcsparse.features._anchors_fast import _anchor_avx512, anchor_scores_chunk


def _problem(seed, n_samples, n_cols, n_classes, n_anchors, n_max, n_radii,
             dtype=np.float64, full=False):
    """Random data, ones column last, and nested balls of random sizes."""
    rng = np.random.RandomState(seed)
    X1 = rng.randn(n_samples, n_cols)
    X1[:, -1:] = 1.0
    residual = rng.randn(n_samples, n_classes)
    order = np.array([rng.permutation(n_samples)[:n_max] for _ in range(n_anchors)],
                     dtype=np.int32).reshape(n_anchors, n_max)
    cuts = np.sort(rng.randint(0, n_max + 1, size=(n_anchors, n_radii)), axis=1)
    if full and n_radii:
        cuts[:, -1] = n_max
    return X1.astype(dtype), residual.astype(dtype), order, cuts


def _brute_force(X1, residual, order, cuts):
    """Dense group columns ``1[i in ball] * X1[i, f]`` and ``|R^T G|`` summed."""
    X1 = np.asarray(X1, dtype=np.float64)
    residual = np.asarray(residual, dtype=np.float64)
    n_anchors, n_radii = np.shape(cuts)
    scores = np.zeros((n_anchors, n_radii))
    for a in range(n_anchors):
        for b in range(n_radii):
            inside = np.zeros(X1.shape[0])
            inside[order[a][:cuts[a][b]]] = 1.0
            group = inside[:, None] * X1
            scores[a, b] = np.abs(residual.T @ group).sum()
    return scores


def _assert_close(got, want, rtol=1e-10):
    assert got.dtype == np.float64 and got.shape == want.shape
    scale = max(np.abs(want).max(initial=0.0), 1.0)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale)


SHAPES = [
    # n_samples, n_cols, n_classes, n_anchors, n_max, n_radii, full
    (60, 5, 3, 4, 40, 6, False),  # n_max < n_samples, random cuts
    (1, 3, 2, 1, 1, 2, True),  # one sample
    (30, 4, 10, 1, 30, 5, True),  # one anchor, n_max == n_samples
    (25, 3, 2, 5, 20, 1, True),  # one radius
    (40, 1, 2, 3, 40, 4, False),  # one column (the ones column alone)
    (80, 51, 10, 3, 70, 7, True),  # the MNIST-PCA width, 10 classes
    (700, 1, 2, 2, 650, 2, True),  # a large block with little work per sample
    (600, 6, 3, 2, 600, 3, True),  # blocks of more than 256 rows (BLAS path)
]


@pytest.mark.parametrize("shape", SHAPES)
def test_cython_numpy_and_brute_force_agree(shape):
    *sizes, full = shape
    X1, residual, order, cuts = _problem(0, *sizes, full=full)
    want = _brute_force(X1, residual, order, cuts)
    _assert_close(anchor_group_scores(X1, residual, order, cuts), want)
    _assert_close(anchor_group_scores_numpy(X1, residual, order, cuts), want)


def test_cuts_with_repeats_zeros_and_single_steps():
    """Empty balls score 0, repeated cuts repeat the score; steps of 1 to 300."""
    X1, residual, order, _ = _problem(1, 500, 7, 4, 3, 450, 0)
    cuts = np.array([
        [0, 0, 0, 1, 1, 2, 3, 4, 4, 450],  # zeros, repeats, steps of 1
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  # every ball empty
        [5, 5, 30, 31, 32, 33, 300, 300, 449, 450],  # BLAS blocks and loops
    ])
    want = _brute_force(X1, residual, order, cuts)
    got = anchor_group_scores(X1, residual, order, cuts)
    _assert_close(got, want)
    _assert_close(anchor_group_scores_numpy(X1, residual, order, cuts), want)
    assert (got[0, :3] == 0).all() and (got[1] == 0).all()
    assert got[0, 3] == got[0, 4] and got[2, 0] == got[2, 1]


def test_example_by_hand():
    X1 = np.array([[1.0, 1.0], [2.0, 1.0], [3.0, 1.0]])
    residual = np.array([[1.0, -1.0], [-1.0, 1.0], [1.0, -1.0]])
    # ball {1}: |[-1, 1] x [2, 1]| = 6; {1, 0}: [[-1, 0], [1, 0]] -> 2; all: 6
    got = anchor_group_scores(X1, residual, [[1, 0, 2]], [[0, 1, 2, 3]])
    np.testing.assert_array_equal(got, [[0.0, 6.0, 2.0, 6.0]])


def test_float32_and_integer_inputs_are_accepted():
    X1, residual, order, cuts = _problem(2, 50, 6, 3, 4, 45, 5, dtype=np.float32)
    want = _brute_force(X1, residual, order, cuts)
    got = anchor_group_scores(X1, residual, order.astype(np.int64), cuts.astype(np.int32))
    assert got.dtype == np.float64
    _assert_close(got, want, rtol=1e-6)
    _assert_close(anchor_group_scores_numpy(X1, residual, order, cuts), want, rtol=1e-6)
    # float32 data is converted exactly: same as the float64 copy
    np.testing.assert_allclose(
        got, anchor_group_scores(X1.astype(np.float64), residual.astype(np.float64),
                                 order, cuts), rtol=1e-12)
    Xi = np.arange(12).reshape(6, 2)
    Ri = np.ones((6, 2), dtype=np.int64)
    _assert_close(anchor_group_scores(Xi, Ri, [[0, 1, 2]], [[3]]),
                  _brute_force(Xi, Ri, [[0, 1, 2]], [[3]]))


def test_non_contiguous_inputs():
    X1, residual, order, cuts = _problem(3, 40, 5, 3, 3, 30, 4)
    want = _brute_force(X1, residual, order, cuts)
    got = anchor_group_scores(np.asfortranarray(X1), residual[:, ::-1][:, ::-1],
                              np.asfortranarray(order), np.asfortranarray(cuts))
    _assert_close(got, want)


@pytest.mark.parametrize("n_jobs", [2, 3, -1])
def test_threads_give_identical_results(n_jobs):
    X1, residual, order, cuts = _problem(4, 300, 11, 5, 17, 250, 9, full=True)
    one = anchor_group_scores(X1, residual, order, cuts, n_jobs=1)
    np.testing.assert_array_equal(
        anchor_group_scores(X1, residual, order, cuts, n_jobs=n_jobs), one)
    np.testing.assert_array_equal(anchor_group_scores(X1, residual, order, cuts), one)


@pytest.mark.parametrize("sizes", [
    (5, 3, 2, 0, 4, 3),  # no anchor
    (5, 3, 2, 4, 4, 0),  # no radius
    (5, 3, 2, 4, 0, 3),  # n_max = 0
    (0, 3, 2, 0, 0, 3),  # no sample
    (5, 0, 2, 2, 4, 3),  # no column
    (5, 3, 0, 2, 4, 3),  # no class
])
def test_empty_cases_give_zeros(sizes):
    X1, residual, order, cuts = _problem(5, *sizes)
    want = np.zeros((sizes[3], sizes[5]))
    for func in (anchor_group_scores, anchor_group_scores_numpy):
        got = func(X1, residual, order, cuts)
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_array_equal(got, want)


def test_cuts_all_zero_give_zeros():
    X1, residual, order, _ = _problem(6, 20, 3, 2, 3, 10, 0)
    cuts = np.zeros((3, 4), dtype=np.intp)
    for func in (anchor_group_scores, anchor_group_scores_numpy):
        np.testing.assert_array_equal(func(X1, residual, order, cuts), np.zeros((3, 4)))


def _good():
    return _problem(7, 20, 3, 2, 3, 10, 4)


def _with(index, value):
    args = list(_good())
    args[index] = value
    return args


BAD_INPUTS = [
    # (args, exception, message)
    (_with(0, np.ones(20)), ValueError, "X1 must be a 2-D array"),
    (_with(1, np.ones((20, 2, 1))), ValueError, "residual must be a 2-D array"),
    (_with(1, np.ones((19, 2))), ValueError, "residual has 19 rows"),
    (_with(0, np.ones((20, 3), dtype=complex)), TypeError, "X1 must hold real numbers"),
    (_with(1, np.ones((20, 2), dtype=bool)), TypeError, "residual must hold real numbers"),
    (_with(2, np.zeros((3, 10))), TypeError, "order must hold integers"),
    (_with(2, np.zeros((3, 10), dtype=bool)), TypeError, "order must hold integers"),
    (_with(3, np.zeros((3, 4))), TypeError, "cuts must hold integers"),
    (_with(2, np.zeros(10, dtype=int)), ValueError, "order must be a 2-D array"),
    (_with(3, np.zeros(4, dtype=int)), ValueError, "cuts must be a 2-D array"),
    (_with(3, np.zeros((2, 4), dtype=int)), ValueError, "cuts has 2 rows"),
    (_with(2, np.full((3, 10), 20)), ValueError, r"order must hold sample indices in \[0, 20\)"),
    (_with(2, np.full((3, 10), -1)), ValueError, "order must hold sample indices"),
    (_with(2, np.tile(np.r_[0, 0, 2:10], (3, 1))), ValueError, "order repeats a sample"),
    (_with(3, np.tile([1, 3, 2, 4], (3, 1))), ValueError, "cuts must be non-decreasing"),
    (_with(3, np.tile([1, 2, 3, 11], (3, 1))), ValueError, r"cuts must be in \[0, n_max=10\]"),
    (_with(3, np.tile([-1, 2, 3, 4], (3, 1))), ValueError, "cuts must be in"),
]


@pytest.mark.parametrize("args, error, match", BAD_INPUTS)
@pytest.mark.parametrize("func", [anchor_group_scores, anchor_group_scores_numpy])
def test_bad_inputs_raise(func, args, error, match):
    with pytest.raises(error, match=match):
        func(*args)


@pytest.mark.parametrize("name, index", [("X1", 0), ("residual", 1)])
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("func", [anchor_group_scores, anchor_group_scores_numpy])
def test_nan_or_inf_raise(func, name, index, value):
    args = list(_good())
    args[index] = args[index].copy()
    args[index][3, 1] = value
    with pytest.raises(ValueError, match=f"{name} contains NaN or infinity"):
        func(*args)


@pytest.mark.parametrize("func", [anchor_group_scores, anchor_group_scores_numpy])
def test_overflow_raises(func):
    X1, residual, order, cuts = _good()
    with pytest.raises(ValueError, match="overflow: rescale X1 or residual"):
        func(X1 * 1e200, residual * 1e200, order, cuts)


@pytest.mark.parametrize("n_jobs, error", [
    (0, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)])
def test_bad_n_jobs(n_jobs, error):
    with pytest.raises(error, match="n_jobs"):
        anchor_group_scores(*_good(), n_jobs=n_jobs)


def test_cython_module_checks_what_it_indexes():
    """Called directly, the module refuses indices and cuts it would read out of range."""
    X1, residual, order, cuts = _good()
    cuts = np.ascontiguousarray(cuts, dtype=np.intp)
    out = np.empty(cuts.shape)
    bad_order = order.copy()
    bad_order[1, 0] = 20
    with pytest.raises(ValueError, match="anchor 1"):
        anchor_scores_chunk(X1, residual, bad_order, np.full_like(cuts, 10), out, 0, 3)
    bad_cuts = cuts.copy()
    bad_cuts[2] = [1, 0, 2, 11]
    with pytest.raises(ValueError, match="anchor 2"):
        anchor_scores_chunk(X1, residual, order, bad_cuts, out, 0, 3)
    with pytest.raises(ValueError, match="out has shape"):
        anchor_scores_chunk(X1, residual, order, cuts, out[:2], 0, 3)
    with pytest.raises(ValueError, match="invalid anchor range"):
        anchor_scores_chunk(X1, residual, order, cuts, out, 2, 4)
    with pytest.raises(ValueError, match="residual has"):
        anchor_scores_chunk(X1, residual[:5], order, cuts, out, 0, 3)
    # a chunk writes only its rows
    out[:] = -1.0
    anchor_scores_chunk(X1, residual, order, cuts, out, 1, 2)
    assert (out[0] == -1).all() and (out[2] == -1).all()
    _assert_close(out[1:2], _brute_force(X1, residual, order[1:2], cuts[1:2]))


# ---------------------------------------------------------------------------
# The float32 screen of AnchorPoints.best_candidate: an AVX-512 loop where the CPU
# has one (_anchors_kernel.h), else sgemm; the tests run both where they can.


@pytest.fixture(params=["avx512", "sgemm"])
def screen_loop(request):
    used = _anchor_avx512(request.param == "avx512")
    if request.param == "avx512" and not used:
        pytest.skip("this CPU has no AVX-512 (or the build has no AVX-512 loop)")
    yield request.param
    _anchor_avx512(True)


# the AVX-512 loop's edges: 16 columns a vector, 64 a block, 5 classes a block,
# 64 rows a block
SCREEN_SHAPES = SHAPES + [
    (300, 16, 5, 2, 200, 3, True), (300, 17, 6, 2, 129, 3, True),
    (300, 64, 1, 2, 64, 2, True), (300, 65, 11, 2, 65, 4, True),
    (300, 130, 4, 1, 128, 1, True),
]


def _ball_sums(values, order, cuts):
    """``sum_{j < cuts[a, b]} values[order[a, j]]`` for every ball."""
    n_anchors, n_radii = np.shape(cuts)
    out = np.zeros((n_anchors, n_radii))
    for a in range(n_anchors):
        cum = np.concatenate([[0.0], np.cumsum(values[order[a]])])
        out[a] = cum[cuts[a]]
    return out


@pytest.mark.parametrize("shape", SCREEN_SHAPES)
def test_float32_scan_is_within_its_proven_bound(shape, screen_loop):
    """The float32 pass (sgemm on scaled inputs) differs from the float64 twin by
    less than the bound the screen relies on, and sums the weights over each ball."""
    from mcsparse.features._anchors import _SCREEN_ABSOLUTE, _SCREEN_RELATIVE

    *sizes, full = shape
    X1, residual, order, cuts = _problem(6, *sizes, full=full)
    X1 /= 4 * np.abs(X1).max()  # |.| <= 1, as the screen scales them
    residual /= 4 * np.abs(residual).max()
    weights = np.abs(residual).sum(axis=1) * np.abs(X1).sum(axis=1)
    n_anchors, n_radii = cuts.shape
    got = np.full((n_anchors, n_radii), -1.0)
    bounds = np.full((n_anchors, n_radii), -1.0)
    anchor_scores_chunk(X1.astype(np.float32), residual.astype(np.float32),
                        order, cuts.astype(np.intp), got, 0, n_anchors, weights, bounds)
    want = anchor_group_scores_numpy(X1, residual, order, cuts)
    np.testing.assert_allclose(bounds, _ball_sums(weights, order, cuts), rtol=1e-12)
    size = residual.shape[1] * X1.shape[1]
    error = _SCREEN_RELATIVE * bounds + _SCREEN_ABSOLUTE * size * cuts
    assert (np.abs(got - want) <= error).all()
    if (cuts > 1).any():  # the float32 pass is not the float64 one
        assert (got != want).any()


def test_float32_scan_weights_and_bounds_go_together():
    X1, residual, order, cuts = _problem(7, 20, 3, 2, 2, 15, 3)
    out = np.zeros(cuts.shape)
    with pytest.raises(ValueError, match="weights and bounds go together"):
        anchor_scores_chunk(X1, residual, order, cuts.astype(np.intp), out, 0, 2,
                            np.ones(20))
    with pytest.raises(ValueError, match="weights must have 20 entries"):
        anchor_scores_chunk(X1, residual, order, cuts.astype(np.intp), out, 0, 2,
                            np.ones(19), np.zeros(cuts.shape))
    with pytest.raises(ValueError, match="Buffer dtype mismatch|No matching signature"):
        anchor_scores_chunk(X1.astype(np.float32), residual, order,
                            cuts.astype(np.intp), out, 0, 2)


def _screened_best(X1, residual, order, cuts, excluded, n_jobs=1):
    from mcsparse.features._anchors import _Float32Screen, _screened_group_scores
    from mcsparse.features._base import _best_remaining

    order = np.ascontiguousarray(order, dtype=np.int32)
    cuts = np.ascontiguousarray(cuts, dtype=np.intp)
    excluded = np.asarray(excluded, dtype=np.intp)
    scores = _screened_group_scores(X1, _Float32Screen(X1), residual, order, cuts,
                                    excluded, n_jobs)
    return _best_remaining(scores.ravel(), excluded)


def _full_best(X1, residual, order, cuts, excluded):
    from mcsparse.features._base import _best_remaining

    scores = anchor_group_scores(X1, residual, order, cuts)
    return _best_remaining(scores.ravel(), np.asarray(excluded, dtype=np.intp))


def _near_tie_problem(seed):
    """Anchor 5 repeats anchor 2 (exact ties); anchor 7 holds anchor 3's largest
    ball in another order, the winning group, so that the two scores differ by
    float64 rounding only while their float32 scores differ by far more."""
    rng = np.random.RandomState(seed)
    X1, residual, order, cuts = _problem(seed, 400, 7, 4, 12, 300, 6, full=True)
    cuts //= 4
    order[5], cuts[5] = order[2], cuts[2]
    cuts[3, -1] = cuts[7, -1] = 300
    order[7] = order[3, rng.permutation(300)]
    return X1, residual, order, cuts


def _cancelling_problem(seed, n_pairs=200, n_cols=7, n_classes=4, n_anchors=12, n_radii=6,
                        big=1e7):
    """Samples in pairs: equal rows of ``X1``, residual rows ``S + B`` and ``S' - B``
    with ``B`` ten million times ``S``. Every ball holds whole pairs, so ``B`` cancels
    from every exact score, but each block between two cuts lists its pairs' first
    members before their second ones: the float32 scan's sums carry ``B`` and its
    scores are off by percents, far more than the tie tolerance."""
    rng = np.random.RandomState(seed)
    x = rng.randn(n_pairs, n_cols)
    x[:, -1] = 1.0
    X1 = np.repeat(x, 2, axis=0)
    B = big * rng.randn(n_pairs, n_classes)
    residual = rng.randn(2 * n_pairs, n_classes) + np.stack([B, -B], axis=1).reshape(
        2 * n_pairs, n_classes)
    cuts = 2 * np.sort(rng.randint(1, n_pairs + 1, size=(n_anchors, n_radii)), axis=1)
    order = np.empty((n_anchors, 2 * n_pairs), dtype=np.int32)
    for a in range(n_anchors):
        pairs = rng.permutation(n_pairs)
        ends = np.concatenate([[0], cuts[a] // 2, [n_pairs]])
        order[a] = np.concatenate([np.concatenate([2 * pairs[lo:hi], 2 * pairs[lo:hi] + 1])
                                   for lo, hi in zip(ends[:-1], ends[1:])])
    return X1, residual, order, cuts


@pytest.mark.parametrize("seed", range(6))
def test_screen_is_exact_where_float32_sums_cancel(seed, screen_loop):
    X1, residual, order, cuts = _cancelling_problem(seed)
    got = _screened_best(X1, residual, order, cuts, [])
    assert got == _full_best(X1, residual, order, cuts, [])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("x_scale, r_scale", [(1.0, 1.0), (1e-30, 1e25), (3e5, 1e-300),
                                              (1e-200, 1e-120)])
def test_screen_returns_the_full_scan_best_exactly(seed, x_scale, r_scale, screen_loop):
    """Same id (lowest on ties) and the same float64 score, bit for bit, as the
    full float64 scan: repeated anchors (exact ties), near ties, selected
    candidates excluded, values that underflow float32."""
    rng = np.random.RandomState(seed)
    X1, residual, order, cuts = _near_tie_problem(seed)
    X1, residual = X1 * x_scale, residual * r_scale
    for excluded in ([], [int(rng.randint(0, cuts.size))], list(range(0, cuts.size, 3))):
        got = _screened_best(X1, residual, order, cuts, excluded)
        want = _full_best(X1, residual, order, cuts, excluded)
        assert got[0] == want[0] and got[1] == want[1]


def test_screen_breaks_exact_ties_by_the_lowest_id():
    X1, residual, order, cuts = _problem(8, 200, 5, 3, 6, 150, 4, full=True)
    order[:] = order[4]
    cuts[:] = cuts[4]  # six identical anchors
    best = _full_best(X1, residual, order, cuts, [])
    assert _screened_best(X1, residual, order, cuts, []) == best
    assert best[0] < cuts.shape[1]  # anchor 0
    first = [best[0] + 0 * cuts.shape[1]]
    assert _screened_best(X1, residual, order, cuts, first) == _full_best(
        X1, residual, order, cuts, first)


def test_screen_rescores_everything_for_a_zero_residual():
    X1, residual, order, cuts = _problem(9, 50, 4, 3, 5, 40, 3, full=True)
    assert _screened_best(X1, 0 * residual, order, cuts, [0]) == (1, 0.0)


def test_screen_refuses_what_the_full_scan_refuses():
    X1, residual, order, cuts = _problem(10, 50, 4, 3, 5, 40, 3, full=True)
    with pytest.raises(ValueError, match="overflow"):
        _screened_best(X1 * 1e200, residual * 1e200, order, cuts, [])
    with pytest.raises(ValueError, match="every candidate"):
        _screened_best(X1, residual, order, cuts, np.arange(cuts.size))


def test_screen_needs_its_error_bound(monkeypatch, screen_loop):
    """With no error bound the screen can pick a near tie's loser: the tests
    above would catch a bound that is too small. (Float32 rounding beyond the
    tie tolerance, 1e-4 relative, takes sums that cancel: the near ties of
    ``_near_tie_problem`` alone are now within it.)"""
    import mcsparse.features._anchors as anchors

    monkeypatch.setattr(anchors, "_SCREEN_RELATIVE", 0.0)
    monkeypatch.setattr(anchors, "_SCREEN_ABSOLUTE", 0.0)
    wrong = 0
    for seed in range(6):
        for problem in (_near_tie_problem, _cancelling_problem):
            X1, residual, order, cuts = problem(seed)
            wrong += _screened_best(X1, residual, order, cuts, []) != _full_best(
                X1, residual, order, cuts, [])
    assert wrong > 0
