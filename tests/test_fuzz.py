"""Fuzzing: every Cython entry point against its plain-NumPy twin (hypothesis).

Hypothesis draws the shapes (0 where valid, 1, 2, primes), a magnitude per
array (0, denormals, 1e-30, 1, 1e30, values near the validated limits), a
dtype, a kind of values (Gaussian, integers with exact ties, sparse) and a
seed; the arrays are then built by ``numpy.random.default_rng(seed)``, which
keeps an example cheap. Results must agree with the twin within tolerances
scaled to the dtype and the size of the sums, be finite where the twin's
are, and have the same NaN and infinity pattern.

The number of examples per test comes from ``MCSPARSE_FUZZ_EXAMPLES``
(default 40, a few seconds per test). The examples are the same from run to
run unless ``MCSPARSE_FUZZ_RANDOM=1``. A long local run::

    MCSPARSE_FUZZ_EXAMPLES=100000 MCSPARSE_FUZZ_RANDOM=1 pytest tests/test_fuzz.py

Index, kernel -> module (each module's own tests are in the test file named
after it):

- ``test_fuzz_scan_stumps``, ``test_fuzz_scan_stumps_sparse``:
  ``features/_stumps_fast.pyx`` (test_stumps.py);
- ``test_fuzz_anchor_scores``: ``features/_anchors_fast.pyx`` (test_anchor_scores.py);
- ``test_fuzz_conv_max``: ``features/_conv_max_fast.pyx``, both kernels (test_conv_max.py);
- ``test_fuzz_loss_gradient``: ``loss/_multiclass_logistic_fast.pyx`` (test_loss.py);
- ``test_fuzz_link_coefficients``, ``test_fuzz_mkl_epoch``:
  ``solvers/_mkl_fast.pyx`` (test_mkl.py);
- the objective's and the refit's kernels (``solvers/_columns_fast.pyx``,
  ``solvers/_refit_fast.pyx``) are compared with their twins over edge sizes
  in test_objective.py and test_refit.py.

``.ci/run`` runs this module again in a build with ``MCSPARSE_CYTHON_DEBUG=1``
(bounds and wraparound checks on), where an out-of-range index raises
IndexError instead of reading memory it should not.
"""

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

import reference
from mcsparse.features._anchors import anchor_group_scores, anchor_group_scores_numpy
from mcsparse.features._anchors_fast import anchor_scores_chunk
from mcsparse.features._conv_max import (conv_max_features, conv_max_features_numpy,
                                         conv_max_selected, conv_max_selected_numpy)
from mcsparse.features._stumps import compress_ranks, scan_stumps_numpy
from mcsparse.features._stumps_fast import scan_stumps
from mcsparse.loss._multiclass_logistic import loss_gradient_numpy
from mcsparse.loss._multiclass_logistic_fast import loss_gradient
from mcsparse.solvers._columns import groups_matmul_numpy, groups_rmatmul_numpy
from mcsparse.solvers._mkl import link_coefficients, link_coefficients_numpy, mkl_epoch_numpy
from mcsparse.solvers._mkl_fast import mkl_epoch
from mcsparse.solvers._columns_fast import (groups_matmul, groups_rmatmul, slots_matmul,
                                              sorted_rmatmul)
from mcsparse.solvers._thresholds import slots_matmul_numpy, sorted_rmatmul_numpy

DEBUG_BUILD = os.environ.get("MCSPARSE_CYTHON_DEBUG", "0") not in ("", "0")
N_EXAMPLES = int(os.environ.get("MCSPARSE_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=N_EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("MCSPARSE_FUZZ_RANDOM", "0") in ("", "0"),
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

SIZES = [0, 1, 2, 3, 7, 13, 31]  # 0 only where the entry point accepts it
SEEDS = st.integers(0, 2**32 - 1)
DTYPES = st.sampled_from([np.float32, np.float64])
KINDS = st.sampled_from(["normal", "integer", "sparse", "constant"])
# magnitudes; per dtype, those beyond its range are replaced by its largest
# finite order of magnitude, and 1e-310 by a float32 denormal
SCALES = [0.0, 1e-310, 1e-30, 1e-3, 1.0, 1e3, 1e30, 1e150, 1e300, 1e308]


def _scale_for(scale, dtype):
    if dtype == np.float32:
        if 0.0 < scale < 1e-38:
            return 1e-40  # a float32 denormal
        return min(scale, 1e38)
    return scale


def _values(rng, shape, scale, kind, dtype=np.float64, positive=False):
    """An array of ``kind`` values of magnitude ``scale``, in ``dtype``."""
    if kind == "integer":  # exact ties and exact sums
        v = rng.integers(-3, 4, size=shape).astype(np.float64)
    elif kind == "constant":
        v = np.full(shape, rng.choice([-1.0, 1.0, 0.5]))
    else:
        v = rng.standard_normal(shape)
        if kind == "sparse":
            v[rng.random(shape) < 0.7] = 0.0
    if positive:
        v = np.abs(v)
    big = float(np.finfo(dtype).max)
    with np.errstate(over="ignore"):  # finite: |v| * 1e308 is clipped to the largest float
        return np.clip(v * _scale_for(scale, dtype), -big, big).astype(dtype)


def _smallest_subnormal(dtype):
    return float(np.finfo(dtype).smallest_subnormal)


def assert_twin(got, want, rtol, atol=0.0, overflow_ok=None, huge=1e300, what=""):
    """``got`` matches the twin's ``want``: same NaN / inf pattern, close elsewhere.

    ``atol`` may be an array (a bound on the rounding error of each entry).
    Where ``overflow_ok`` (a bool mask) is set, an infinity on one side and a
    finite value of magnitude at least ``huge`` on the other (another
    summation order at the edge of the range) is accepted.
    """
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    atol = np.broadcast_to(np.asarray(atol, dtype=np.float64), got.shape)
    both_finite = np.isfinite(got) & np.isfinite(want)
    same_special = (np.isnan(got) & np.isnan(want)) | (
        np.isinf(got) & np.isinf(want) & (np.sign(got) == np.sign(want)))
    ok = same_special.copy()
    with np.errstate(over="ignore", invalid="ignore"):
        err = np.abs(got - want)
        ok |= both_finite & (err <= atol + rtol * np.abs(want))
    if overflow_ok is not None:
        edge = np.broadcast_to(overflow_ok, got.shape) & (
            (np.isinf(got) & np.isfinite(want) & (np.abs(want) >= huge))
            | (np.isfinite(got) & np.isinf(want) & (np.abs(got) >= huge)))
        ok |= edge
    if not ok.all():
        bad = np.argwhere(~ok)
        first = tuple(bad[0])
        raise AssertionError(
            f"{what}: {bad.shape[0]} of {ok.size} entries differ; first at {first}: "
            f"got {got[first]!r}, twin {want[first]!r}, atol {atol[first]!r}, rtol {rtol!r}")


# ---------------------------------------------------------------------------
# scan_stumps (fused: float32 / float64 residual)


@FUZZ
@given(n=st.sampled_from(SIZES), d=st.sampled_from([0, 1, 2, 7]),
       k=st.sampled_from([1, 2, 3, 13]), max_values=st.sampled_from([1, 2, 3, 31]),
       scale=st.sampled_from(SCALES), kind=KINDS, dtype=DTYPES,
       n_excluded=st.sampled_from([0, 1, 5, 100]), seed=SEEDS)
@example(n=0, d=2, k=3, max_values=3, scale=1.0, kind="normal", dtype=np.float64,
         n_excluded=0, seed=0)
@example(n=1, d=1, k=1, max_values=2, scale=1e-310, kind="normal", dtype=np.float64,
         n_excluded=0, seed=1)
@example(n=31, d=7, k=13, max_values=31, scale=1e308, kind="normal", dtype=np.float64,
         n_excluded=5, seed=2)
@example(n=13, d=2, k=2, max_values=3, scale=1.0, kind="integer", dtype=np.float32,
         n_excluded=100, seed=3)
def test_fuzz_scan_stumps(n, d, k, max_values, scale, kind, dtype, n_excluded, seed):
    rng = np.random.default_rng(seed)
    # q_f distinct values per feature (1 <= q_f <= n, or 1 without samples);
    # ranks in [0, q_f), not all used
    q = rng.integers(1, max(min(max_values, n), 1) + 1, size=d)
    offsets = np.zeros(d + 1, dtype=np.intp)
    np.cumsum(q - 1, out=offsets[1:])
    ranks = np.minimum(rng.random((d, n)) * q[:, None], q[:, None] - 1).astype(np.int32)
    residual = _values(rng, (n, k), scale, kind, dtype)
    if kind == "normal" and scale <= 1e300 and rng.random() < 0.5:  # rows sum to zero
        residual = (residual - residual.mean(axis=1, keepdims=True)).astype(dtype)
    # sorted distinct ids, some beyond the candidates
    n_candidates = int(offsets[-1])
    excluded = np.unique(rng.integers(-2, n_candidates + 3, size=n_excluded)).astype(np.intp)
    got_score, got_id, got_max = scan_stumps(ranks, residual, offsets, excluded)
    with np.errstate(all="ignore"):
        want_score, want_id, want_max = scan_stumps_numpy(ranks, residual, offsets, excluded)
    assert got_score.dtype == np.float64 and got_id.dtype == np.intp
    # both sum the same float64 values in the same order, except the l1 norm
    # over classes (pairwise in NumPy): rounding only
    assert_twin(got_score, want_score, rtol=4 * k * np.finfo(np.float64).eps,
                overflow_ok=np.array(True), what="best_score")
    assert_twin(got_max, want_max, rtol=4 * k * np.finfo(np.float64).eps,
                overflow_ok=np.array(True), what="max_score")
    np.testing.assert_array_equal(got_id, want_id)
    # the cutoff mode: each feature's first threshold scoring at least the cutoff
    finite = got_max[np.isfinite(got_max)]
    if finite.size:
        cutoff = 0.9 * float(np.sort(finite)[finite.size // 2])  # away from the maxima
        got = scan_stumps(ranks, residual, offsets, excluded, cutoff=cutoff)
        with np.errstate(all="ignore"):
            want = scan_stumps_numpy(ranks, residual, offsets, excluded, cutoff=cutoff)
        assert_twin(got[0], want[0], rtol=4 * k * np.finfo(np.float64).eps,
                    overflow_ok=np.array(True), what="best_score (cutoff)")
        np.testing.assert_array_equal(got[1], want[1])


@FUZZ
@given(n=st.sampled_from(SIZES), d=st.sampled_from([0, 1, 2, 7]),
       k=st.sampled_from([1, 2, 3, 13]), max_values=st.sampled_from([1, 2, 3, 31]),
       scale=st.sampled_from(SCALES), kind=KINDS, dtype=DTYPES,
       max_fraction=st.sampled_from([0.0, 0.5, 1.0]), n_threads=st.sampled_from([1, 2]),
       seed=SEEDS)
@example(n=0, d=2, k=3, max_values=3, scale=1.0, kind="normal", dtype=np.float64,
         max_fraction=1.0, n_threads=2, seed=0)
@example(n=31, d=7, k=13, max_values=31, scale=1e308, kind="normal", dtype=np.float64,
         max_fraction=1.0, n_threads=2, seed=2)
@example(n=2, d=1, k=1, max_values=2, scale=1e-310, kind="normal", dtype=np.float32,
         max_fraction=0.0, n_threads=1, seed=0)  # every sample at the mode: no entries
def test_fuzz_scan_stumps_sparse(n, d, k, max_values, scale, kind, dtype, max_fraction,
                                 n_threads, seed):
    """The scan skipping each feature's most frequent rank, against its twin."""
    rng = np.random.default_rng(seed)
    q = rng.integers(1, max(min(max_values, n), 1) + 1, size=d)
    offsets = np.zeros(d + 1, dtype=np.intp)
    np.cumsum(q - 1, out=offsets[1:])
    # mostly rank 0 (a frequent value), the others at random
    ranks = np.minimum(rng.random((d, n)) * q[:, None], q[:, None] - 1).astype(np.int32)
    ranks[rng.random((d, n)) < 0.6] = 0
    residual = _values(rng, (n, k), scale, kind, dtype)
    sparse = compress_ranks(ranks, offsets, max_fraction=max_fraction)
    excluded = np.unique(rng.integers(0, int(offsets[-1]) + 1, size=3)).astype(np.intp)
    got = scan_stumps(ranks, residual, offsets, excluded, sparse=sparse, n_threads=n_threads)
    with np.errstate(all="ignore"):
        want = scan_stumps_numpy(ranks, residual, offsets, excluded, sparse=sparse)
    for a, b, what in ((got[0], want[0], "best_score"), (got[2], want[2], "max_score")):
        assert_twin(a, b, rtol=4 * k * np.finfo(np.float64).eps,
                    overflow_ok=np.array(True), what=what)
    np.testing.assert_array_equal(got[1], want[1])
    one = scan_stumps(ranks, residual, offsets, excluded, sparse=sparse)
    for a, b in zip(got, one):
        np.testing.assert_array_equal(a, b)  # the thread count changes no bit


# ---------------------------------------------------------------------------
# anchor_scores_chunk (float64; float32 and integer inputs through the wrapper)


@FUZZ
@given(n=st.sampled_from(SIZES), n_cols=st.sampled_from([0, 1, 2, 7, 52]),
       n_classes=st.sampled_from([0, 1, 2, 3, 10]), n_anchors=st.sampled_from([0, 1, 2, 5]),
       n_radii=st.sampled_from([0, 1, 2, 7]), full=st.booleans(),
       x_scale=st.sampled_from(SCALES), r_scale=st.sampled_from(SCALES), kind=KINDS,
       dtype=DTYPES, n_jobs=st.sampled_from([None, None, None, 2]), seed=SEEDS)
@example(n=31, n_cols=52, n_classes=10, n_anchors=2, n_radii=2, full=True, x_scale=1.0,
         r_scale=1.0, kind="normal", dtype=np.float64, n_jobs=None, seed=0)  # dgemm path
@example(n=7, n_cols=2, n_classes=3, n_anchors=1, n_radii=7, full=False,
         x_scale=1e-310, r_scale=1.0, kind="normal", dtype=np.float64, n_jobs=None, seed=1)
@example(n=13, n_cols=7, n_classes=2, n_anchors=5, n_radii=2, full=True,
         x_scale=1e150, r_scale=1e300, kind="normal", dtype=np.float64, n_jobs=2, seed=2)
def test_fuzz_anchor_scores(n, n_cols, n_classes, n_anchors, n_radii, full, x_scale,
                            r_scale, kind, dtype, n_jobs, seed):
    rng = np.random.default_rng(seed)
    n_max = int(rng.integers(0, n + 1))
    X1 = _values(rng, (n, n_cols), x_scale, kind, dtype)
    if n_cols and rng.random() < 0.5:
        X1[:, -1] = 1.0  # the ones column
    residual = _values(rng, (n, n_classes), r_scale, kind, dtype)
    order = np.array([rng.permutation(n)[:n_max] for _ in range(n_anchors)],
                     dtype=rng.choice([np.int32, np.int64])).reshape(n_anchors, n_max)
    cuts = np.sort(rng.integers(0, n_max + 1, size=(n_anchors, n_radii)), axis=1)
    if full and n_radii:
        cuts[:, -1] = n_max
    # the rounding error of a score is bounded by the l1 mass of its terms:
    # sum over the ball of (sum_c |R_ic|) (sum_f |X1_if|)
    with np.errstate(over="ignore", invalid="ignore"):
        r_l1 = np.abs(residual.astype(np.float64)).sum(axis=1)
        x_l1 = np.abs(X1.astype(np.float64)).sum(axis=1)
        mass_i = np.where((r_l1 == 0) | (x_l1 == 0), 0.0, r_l1 * x_l1)
        mass = np.zeros((n_anchors, n_radii))
        if n_anchors and n_max:
            cum = np.concatenate([np.zeros((n_anchors, 1)),
                                  np.cumsum(mass_i[order], axis=1)], axis=1)
            mass = np.take_along_axis(cum, cuts, axis=1)
    eps = np.finfo(np.float64).eps
    # (the sums over the ball, then the l1 norm of n_classes * n_cols entries)
    size = n_classes * n_cols
    atol = 4 * (n_max + size + 2) * eps * mass + 4 * (n_max + 1) * size * 5e-324
    # partial sums may overflow in one summation order and not in the other
    may_overflow = not (mass.max(initial=0.0) < 1e300)
    results = []
    for func in (anchor_group_scores, anchor_group_scores_numpy):
        try:
            kwargs = {"n_jobs": n_jobs} if func is anchor_group_scores else {}
            with np.errstate(all="ignore"):
                results.append(func(X1, residual, order, cuts, **kwargs))
        except ValueError as exc:
            assert "overflow" in str(exc), exc
            assert may_overflow, f"{func.__name__} overflowed with l1 mass {mass.max()}"
            event(f"{func.__name__}: overflow refused")
            results.append(None)
    got, want = results
    if got is not None and want is not None:
        assert_twin(got, want, rtol=0.0, atol=atol, what="scores")
    # the raw module on a sub-range of anchors writes only those rows
    if n_anchors:
        lo, hi = sorted(rng.integers(0, n_anchors + 1, size=2).tolist())
        out = np.full((n_anchors, n_radii), -7.0)
        anchor_scores_chunk(np.ascontiguousarray(X1, dtype=np.float64),
                            np.ascontiguousarray(residual, dtype=np.float64),
                            np.ascontiguousarray(order, dtype=np.int32),
                            np.ascontiguousarray(cuts, dtype=np.intp), out, lo, hi)
        assert (out[:lo] == -7.0).all() and (out[hi:] == -7.0).all()
        if want is not None:
            assert_twin(out[lo:hi], want[lo:hi], rtol=0.0, atol=atol[lo:hi],
                        overflow_ok=np.array(may_overflow), huge=0.0,  # cancellation
                        what="chunk scores")


@pytest.mark.parametrize("n_cols, n_classes", [(0, 2), (3, 0)])
def test_anchor_scores_without_columns_or_classes(n_cols, n_classes):
    """Scores of empty groups are 0, in the debug build too.

    Found by this module: the rank-1 loop took ``&X1[i, 0]`` of an empty row,
    an IndexError under boundscheck, reported as a bad ``order``.
    """
    X1, residual = np.ones((5, n_cols)), np.ones((5, n_classes))
    got = anchor_group_scores(X1, residual, [[0, 1, 2]], [[1, 3]])
    np.testing.assert_array_equal(got, np.zeros((1, 2)))


@FUZZ
@given(n=st.sampled_from(SIZES[1:]), n_cols=st.sampled_from([1, 2, 7, 52]),
       n_classes=st.sampled_from([1, 2, 3, 10]), n_anchors=st.sampled_from([1, 2, 5]),
       n_radii=st.sampled_from([1, 2, 7]), x_scale=st.sampled_from(SCALES),
       r_scale=st.sampled_from(SCALES), kind=KINDS, n_excluded=st.sampled_from([0, 1, 3]),
       repeat=st.booleans(), n_jobs=st.sampled_from([None, 2]), seed=SEEDS)
def test_fuzz_anchor_screen(n, n_cols, n_classes, n_anchors, n_radii, x_scale, r_scale,
                            kind, n_excluded, repeat, n_jobs, seed):
    """AnchorPoints' float32 screen picks the full float64 scan's candidate, and
    its score, bit for bit; it refuses overflow as the full scan does."""
    from mcsparse.features._anchors import _Float32Screen, _screened_group_scores
    from mcsparse.features._base import _best_remaining

    rng = np.random.default_rng(seed)
    n_max = int(rng.integers(1, n + 1))
    X1 = _values(rng, (n, n_cols), x_scale, kind)
    residual = _values(rng, (n, n_classes), r_scale, kind)
    order = np.array([rng.permutation(n)[:n_max] for _ in range(n_anchors)],
                     dtype=np.int32).reshape(n_anchors, n_max)
    cuts = np.sort(rng.integers(0, n_max + 1, size=(n_anchors, n_radii)),
                   axis=1).astype(np.intp)
    if repeat and n_anchors > 1:  # exact ties
        order[-1], cuts[-1] = order[0], cuts[0]
    excluded = np.unique(rng.integers(0, cuts.size, size=n_excluded)).astype(np.intp)
    results = []
    for screened in (True, False):
        try:
            with np.errstate(all="ignore"):
                if screened:
                    scores = _screened_group_scores(X1, _Float32Screen(X1), residual,
                                                    order, cuts, excluded, n_jobs or 1)
                else:
                    scores = anchor_group_scores(X1, residual, order, cuts, n_jobs=n_jobs)
            results.append(_best_remaining(scores.ravel(), excluded))
        except ValueError as exc:
            assert "overflow" in str(exc) or "every candidate" in str(exc), exc
            results.append("overflow" if "overflow" in str(exc) else "all excluded")
    assert results[0] == results[1], results



# ---------------------------------------------------------------------------
# conv_max_chunk (float32; float64 inputs through the wrapper)

# the wrapper refuses responses * masks beyond 1e37: fewer huge magnitudes
CONV_RESPONSES = [{}, {}, {"response": "ncc"}, {"response": "ncc", "damping": 0.0}]
CONV_SCALES = [0.0, 1e-310, 1e-30, 1e-3, 1.0, 1e3, 1e12, 1e30, 1e308]
MASK_SCALES = [0.0, 1e-310, 1e-30, 1e-3, 1.0, 1.0, 1e3, 1e30]


@FUZZ
@given(n=st.sampled_from([1, 2, 3]), h=st.sampled_from([1, 2, 7, 13]),
       w=st.sampled_from([1, 2, 7, 13]), n_templates=st.sampled_from([1, 2, 7, 129]),
       ph=st.sampled_from([1, 2, 3, 7, 13]), pw=st.sampled_from([1, 2, 3, 7, 13]),
       n_u=st.sampled_from([1, 2, 3]), n_v=st.sampled_from([1, 2, 3]),
       empty=st.sampled_from([None] * 9 + ["n", "n_templates", "n_u"]),  # a quarter
       img_scale=st.sampled_from(CONV_SCALES), tmpl_scale=st.sampled_from(CONV_SCALES),
       u_scale=st.sampled_from(MASK_SCALES), v_scale=st.sampled_from(MASK_SCALES),
       response=st.sampled_from(CONV_RESPONSES), kind=KINDS, dtype=DTYPES, seed=SEEDS)
@example(n=2, h=13, w=7, n_templates=129, ph=3, pw=2, n_u=2, n_v=3, empty=None,
         img_scale=1.0, tmpl_scale=1.0, u_scale=1.0, v_scale=1.0, response={},
         kind="normal", dtype=np.float32, seed=0)  # two template blocks
@example(n=2, h=13, w=7, n_templates=129, ph=3, pw=2, n_u=2, n_v=3, empty=None,
         img_scale=1e-30, tmpl_scale=1.0, u_scale=1.0, v_scale=1.0,
         response={"response": "ncc", "damping": 0.0}, kind="integer",
         dtype=np.float32, seed=4)  # undamped NCC of tiny, often constant patches
@example(n=1, h=7, w=7, n_templates=2, ph=7, pw=7, n_u=1, n_v=1, empty=None,
         img_scale=1e-30, tmpl_scale=1e-30, u_scale=1.0, v_scale=1e-310, response={},
         kind="normal", dtype=np.float64, seed=1)  # denormals
@example(n=1, h=1, w=13, n_templates=7, ph=1, pw=3, n_u=3, n_v=2, empty=None,
         img_scale=1.0, tmpl_scale=1.0, u_scale=0.0, v_scale=1.0, response={},
         kind="integer", dtype=np.float32, seed=2)  # zero masks
@example(n=3, h=7, w=7, n_templates=2, ph=3, pw=3, n_u=2, n_v=2, empty="n_u",
         img_scale=1.0, tmpl_scale=1.0, u_scale=1.0, v_scale=1.0, response={},
         kind="normal", dtype=np.float32, seed=3)  # no mask
def test_fuzz_conv_max(n, h, w, n_templates, ph, pw, n_u, n_v, empty, img_scale,
                       tmpl_scale, u_scale, v_scale, response, kind, dtype, seed):
    rng = np.random.default_rng(seed)
    kwargs = dict(response)  # `response` is reused below for the responses' bound
    n = 0 if empty == "n" else n
    n_templates = 0 if empty == "n_templates" else n_templates
    n_u = 0 if empty == "n_u" else n_u
    ph, pw = min(ph, h), min(pw, w)
    images = _values(rng, (n, h, w), img_scale, kind, dtype)
    templates = _values(rng, (n_templates, ph, pw), tmpl_scale, kind, dtype)
    rows = _values(rng, (n_u, h - ph + 1), u_scale, kind, dtype, positive=True)
    cols = _values(rng, (n_v, w - pw + 1), v_scale, kind, dtype, positive=True)
    try:
        with np.errstate(over="ignore"):  # its float32 bound may overflow: then it refuses
            got = conv_max_features(images, templates, rows, cols, **response,
                                    chunk_size=int(rng.choice([1, 2, 64])))
    except ValueError as exc:  # responses could leave float32's range: refused
        assert "too large" in str(exc) or "infinity" in str(exc), exc
        event("refused by the wrapper")
        return
    assert got.dtype == np.float32
    assert got.shape == (n, n_templates * n_u * n_v)
    if got.size == 0:  # the twin cannot reshape empty responses
        event("empty output")
        return
    if float(rows.max()) * float(cols.max()) > float(np.finfo(np.float32).max):
        # the twin multiplies the factors into float32 masks, which overflow
        # (0 * inf = NaN where the features are 0): no reference here
        event("skipped: the twin's masks overflow")
        return
    # float32 im2col + sgemm against the float64 direct max: the rounding of
    # a response is bounded by (area + 2) eps32 max|image| ||w_f||_1, times
    # the mask; denormals lose up to one smallest subnormal per operation.
    # The NCC normalises the float32 patches the kernel sees (a float64
    # image is centred first, then rounded), each of norm at most 1.
    f32 = [v.astype(np.float32).astype(np.float64) for v in (images, templates, rows, cols)]
    reference = images
    if response:  # the wrapper centres non-float32 images in float64, then casts
        reference = f32[0] if images.dtype == np.float32 else (
            images - images.mean(axis=(1, 2), keepdims=True)).astype(np.float32)
    with np.errstate(all="ignore"):
        want = conv_max_features_numpy(reference, templates, rows, cols, **response)
    img_max = np.abs(f32[0]).reshape(n, -1).max(axis=1, initial=0.0)
    if response:  # a normalised patch: entries of magnitude at most 1, whatever the scale
        img_max = np.ones(n)
    tmpl_l1 = np.abs(f32[1]).reshape(n_templates, -1).sum(axis=1)
    mask_max = f32[2].max(initial=0.0) * f32[3].max(initial=0.0)
    u_max, v_max = f32[2].max(initial=0.0), f32[3].max(initial=0.0)
    mask_max = u_max * v_max
    area = ph * pw
    response = img_max[:, None] * tmpl_l1[None, :]  # (n, n_templates)
    bound = response * mask_max
    # underflow: each product of the response, then the first pass's max
    # (times u), then the last product lose up to one smallest subnormal; the
    # twin's float32 masks u v lose up to one too (times the response)
    atol = ((area + 4) * np.finfo(np.float32).eps * bound
            + (area * mask_max + u_max + 2 + response) * _smallest_subnormal(np.float32))
    atol = np.repeat(atol, n_u * n_v, axis=1)
    assert_twin(got, want, rtol=0.0, atol=atol, what="features")
    # the selected pairs only (pruned search, float64 responses rounded
    # once): within the same bound of the direct max, and its twin's values
    ids = rng.integers(0, n_templates * n_u * n_v, size=5)
    with np.errstate(over="ignore"):
        selected, counts = conv_max_selected(images, templates, rows, cols, ids, **kwargs,
                                             chunk_size=int(rng.choice([1, 2, 64])),
                                             return_counts=True)
        twin, _ = conv_max_selected_numpy(images, templates, rows, cols, ids, **kwargs)
    assert_twin(selected, want[:, ids], rtol=0.0, atol=atol[:, ids], what="selected features")
    assert_twin(selected, twin, rtol=0.0, atol=atol[:, ids], what="selected twin")
    n_pos = (h - ph + 1) * (w - pw + 1)
    assert (counts[:, 1] <= np.unique(ids).size * n_pos).all() and (counts[:, 0] >= 1).all()


def test_conv_max_float32_response_overflow_is_refused():
    """A float32 response of 1e41 is refused, even under small or zero masks.

    Found by this module: the wrapper bounded response * masks only, so the
    kernel's response (or response * v) overflowed to inf, or to NaN under a
    zero mask, where the features themselves are 1e21 or 0.
    """
    images = np.full((1, 1, 1), 1e3, dtype=np.float32)
    templates = np.full((1, 1, 1), 1e38, dtype=np.float32)
    for u, v in [(1e-10, 1e-10), (0.0, 0.0)]:
        rows, cols = np.array([[u]], np.float32), np.array([[v]], np.float32)
        with pytest.raises(ValueError, match="too large"):
            conv_max_features(images, templates, rows, cols)


# ---------------------------------------------------------------------------
# groups_matmul / groups_rmatmul (row-sparse groups, copied or indexed; float64)


@FUZZ
@given(n=st.sampled_from(SIZES + [64, 65, 255, 257, 600]), n_groups=st.sampled_from([0, 1, 2, 5]),
       width=st.sampled_from([0, 1, 2, 4, 5, 51]), r=st.sampled_from([0, 1, 3, 10, 12, 13]),
       scale=st.sampled_from(SCALES), kind=KINDS, indexed=st.sampled_from([None, False, True]),
       seed=SEEDS)
@example(n=600, n_groups=2, width=51, r=10, scale=1.0, kind="normal", indexed=True, seed=0)
@example(n=257, n_groups=1, width=1, r=1, scale=1e308, kind="normal", indexed=None, seed=1)
@example(n=0, n_groups=2, width=2, r=3, scale=1.0, kind="normal", indexed=True, seed=2)
def test_fuzz_group_products(n, n_groups, width, r, scale, kind, indexed, seed):
    """Groups of copied rows, or of rows indexed into a shared matrix (mixed when None)."""
    rng = np.random.default_rng(seed)
    shared = _values(rng, (n, width), scale, kind)
    groups = []
    for g in range(n_groups):
        rows = np.sort(rng.choice(n, size=rng.integers(0, n + 1), replace=False)).astype(np.intp)
        as_index = bool(rng.integers(2)) if indexed is None else indexed
        groups.append((g * width, rows, shared, True) if as_index
                      else (g * width, rows, np.ascontiguousarray(shared[rows])))
    p = n_groups * width
    eps = np.finfo(np.float64).eps
    for kernel, twin, arg_rows, out_rows in ((groups_matmul, groups_matmul_numpy, p, n),
                                             (groups_rmatmul, groups_rmatmul_numpy, n, p)):
        arg = _values(rng, (arg_rows, r), scale, kind)
        start = _values(rng, (out_rows, r), 1.0, "normal")
        out, ref, bound = start.copy(), start.copy(), np.abs(start)
        kernel(groups, arg, out)
        with np.errstate(all="ignore"):
            twin(groups, arg, ref)
            twin([(g[0], g[1], np.abs(g[2]), *g[3:]) for g in groups], np.abs(arg), bound)
        terms = max(n, width) + 8
        # where a sum of |terms| overflows, the order of the sum decides between
        # inf and NaN: compared only where it is finite
        finite = np.isfinite(bound)
        assert_twin(out[finite], ref[finite], rtol=terms * eps,
                    atol=terms * eps * bound[finite], overflow_ok=np.array(True),
                    what=kernel.__name__)


# ---------------------------------------------------------------------------
# slots_matmul / sorted_rmatmul (stumps on integer codes, summed by feature; float64)


@FUZZ
@given(n=st.sampled_from(SIZES + [255, 600]), n_features=st.sampled_from([1, 2, 5]),
       m=st.sampled_from([0, 1, 2, 9, 40]), r=st.sampled_from([0, 1, 10, 13, 25]),
       n_codes=st.sampled_from([1, 2, 50, 5000]), scale=st.sampled_from(SCALES), kind=KINDS,
       seed=SEEDS)
@example(n=600, n_features=5, m=40, r=10, n_codes=50, scale=1.0, kind="normal", seed=0)
@example(n=7, n_features=1, m=9, r=13, n_codes=2, scale=1e308, kind="normal", seed=1)
def test_fuzz_threshold_products(n, n_features, m, r, n_codes, scale, kind, seed):
    """Random codes and cuts (ties, every code below or above the cuts), any magnitude."""
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, n_codes, size=(n_features, n)).astype(np.int32)
    features = rng.integers(0, n_features, size=m) if m else np.zeros(0, np.intp)
    cuts = rng.integers(0, n_codes + 1, size=m).astype(np.int32)
    slots, run_start, cols, order, ends = reference.threshold_runs(codes, features, cuts)
    shift = _values(rng, (m,), 1.0, "normal")
    eps = np.finfo(np.float64).eps
    for kernel, twin, args, shape in (
            (slots_matmul, slots_matmul_numpy,
             (slots, run_start, cols, shift, _values(rng, (m, r), scale, kind)), (n, r)),
            (sorted_rmatmul, sorted_rmatmul_numpy,
             (order, ends, run_start, cols, shift, _values(rng, (n, r), scale, kind)), (m, r))):
        start = _values(rng, shape, 1.0, "normal")
        out, ref = start.copy(), start.copy()
        kernel(*args, out)
        with np.errstate(all="ignore"):
            twin(*args, ref)
        with np.errstate(over="ignore"):  # each entry: at most n + m terms, each |shift| + 1 times
            bound = np.abs(start) + ((n + m + 1) * (1 + np.abs(shift).max(initial=0.0))
                                     * np.abs(args[-1]).max(initial=0.0))
        terms = n + m + 8
        finite = np.isfinite(bound)
        assert_twin(out[finite], ref[finite], rtol=terms * eps,
                    atol=terms * eps * bound[finite], overflow_ok=np.array(True),
                    what=kernel.__name__)


# ---------------------------------------------------------------------------
# loss_gradient (fused: float32 / float64)


@FUZZ
@given(n=st.sampled_from(SIZES), k=st.sampled_from([1, 2, 3, 7, 13, 31]),
       scale=st.sampled_from(SCALES), kind=KINDS, dtype=DTYPES,
       weights=st.sampled_from([None, "uniform", "zeros", "scaled"]),
       w_scale=st.sampled_from(SCALES[1:]),
       margin=st.sampled_from([1.0, 0.0, 0.5, 2.0, 1e-300, 1e30]), seed=SEEDS)
@example(n=7, k=3, scale=1e308, kind="normal", dtype=np.float64, weights=None,
         w_scale=1.0, margin=1.0, seed=0)
@example(n=13, k=2, scale=1.0, kind="normal", dtype=np.float64, weights="scaled",
         w_scale=1e-310, margin=1.0, seed=1)
@example(n=1, k=1, scale=1.0, kind="normal", dtype=np.float32, weights=None,
         w_scale=1.0, margin=0.0, seed=2)
@example(n=31, k=31, scale=1e38, kind="normal", dtype=np.float32, weights="scaled",
         w_scale=1e38, margin=1.0, seed=3)
def test_fuzz_loss_gradient(n, k, scale, kind, dtype, weights, w_scale, margin, seed):
    rng = np.random.default_rng(seed)
    scores = _values(rng, (n, k), scale, kind, dtype)
    y = rng.integers(0, k, size=n).astype(np.intp)
    if weights is None:
        w = None
    elif weights == "zeros":
        w = (rng.random(n) < 0.5).astype(dtype)
    else:
        w = rng.uniform(0.0, 1.0, size=n) if weights == "uniform" else np.ones(n)
        w = (w * _scale_for(w_scale, dtype)).astype(dtype)
    grad = np.full_like(scores, np.nan)
    loss = loss_gradient(scores, y, w, grad, margin)
    with np.errstate(all="ignore"):
        loss_ref, grad_ref = loss_gradient_numpy(scores, y, w, margin=margin)
    assert grad.dtype == dtype and isinstance(loss, float)
    eps64 = np.finfo(np.float64).eps
    w64 = np.ones(n) if w is None else w.astype(np.float64)
    # float64 arithmetic (sums of k terms, exp, log1p), then the cast to dtype
    rtol = max((k + 8) * eps64, 2 * float(np.finfo(dtype).eps))
    atol = (k + 8) * eps64 * w64[:, None] + 4 * _smallest_subnormal(dtype)
    assert_twin(grad, grad_ref, rtol=rtol, atol=atol, what="grad")
    assert_twin(loss, loss_ref, rtol=(n + k + 8) * eps64, atol=4 * n * 5e-324,
                overflow_ok=np.array(True), what="loss")
    if np.isfinite(loss_ref):
        assert np.isfinite(loss) and loss >= 0.0


# ---------------------------------------------------------------------------
# link_coefficients (float64)


@FUZZ
@given(n=st.sampled_from([0, 1, 2, 3, 7, 13]),
       theta_scale=st.sampled_from([0.0, 5e-324, 1e-310, 1e-300, 1e-30, 1.0, 1e30, 1e300,
                                    1.7e308]),
       spread=st.sampled_from([0.0, 1.0, 10.0, 300.0]),
       penalty=st.sampled_from(["zero", "fraction", "equal", "above"]),
       q=st.sampled_from([1.0 + 1e-9, 1.05, 1.386, 2.0, 2 * np.log(11), 12.0, 100.0]),
       scale=st.sampled_from([1e-300, 1e-100, 1e-3, 1.0, 1e3, 1e100, 1e300]),
       seed=SEEDS)
@example(n=3, theta_scale=1e300, spread=300.0, penalty="zero", q=12.0, scale=1.0, seed=0)
@example(n=2, theta_scale=5e-324, spread=0.0, penalty="zero", q=2.0, scale=1e-300, seed=1)
@example(n=7, theta_scale=1.0, spread=1.0, penalty="equal", q=1.386, scale=1.0, seed=2)
@example(n=0, theta_scale=1.0, spread=1.0, penalty="zero", q=2.0, scale=1.0, seed=3)
def test_fuzz_link_coefficients(n, theta_scale, spread, penalty, q, scale, seed):
    rng = np.random.default_rng(seed)
    with np.errstate(over="ignore", under="ignore"):
        theta_sq = np.minimum(theta_scale * 10.0 ** rng.uniform(-spread, 0.0, size=n),
                              np.finfo(np.float64).max)
    theta_sq[rng.random(n) < 0.2] = 0.0
    norm = np.sqrt(theta_sq)
    pen = {"zero": np.zeros(n), "fraction": rng.uniform(0, 1, size=n) * norm,
           "equal": norm.copy(), "above": norm * rng.uniform(0.5, 2.0, size=n)}[penalty]
    pen[rng.random(n) < 0.3] = 0.0
    with np.errstate(all="ignore"):
        want = link_coefficients_numpy(theta_sq, pen, q, scale)
    try:
        got = link_coefficients(theta_sq, pen, q, scale)
    except ValueError as exc:  # the public function refuses non-finite coefficients
        assert "overflow" in str(exc), exc
        assert not np.isfinite(want).all() or np.abs(want).max() > 1e300, want
        event("overflow refused")
        return
    assert got.dtype == np.float64 and (got >= 0).all()
    # pow and the ratios are evaluated the same way; x**p amplifies the
    # rounding of x by |p|
    rtol = (abs(q) + 10) * 16 * np.finfo(np.float64).eps
    assert_twin(got, want, rtol=rtol, atol=4 * 5e-324, overflow_ok=np.array(True),
                what="coef")


# ---------------------------------------------------------------------------
# mkl_epoch (fused: float32 / float64 Gram stack)


@FUZZ
@given(n_all=st.sampled_from([1, 2, 3, 7, 13]), row_frac=st.sampled_from([1.0, 0.6]),
       n_kernels=st.sampled_from([0, 1, 2, 3, 7]), n_classes=st.sampled_from([1, 2, 3, 7]),
       n_epochs=st.sampled_from([1, 2, 3]),
       gram_kind=st.sampled_from(["gaussian", "lowrank", "identity", "integer"]),
       gram_scale=st.sampled_from([1e-310, 1e-30, 1.0, 1e30, 1e100]),
       kernel_scale=st.sampled_from([1e-100, 1e-3, 1.0, 1e3, 1e100]),
       beta=st.sampled_from([0.0, 1e-3, 0.3, 10.0]),
       lam=st.sampled_from([1e-100, 1e-3, 0.05, 1.0, 1e100]),
       q=st.sampled_from([1.05, 1.386, 2.0, 4.8, 12.0]), t0=st.sampled_from([0, 13, 10**6]),
       dtype=DTYPES, seed=SEEDS)
@example(n_all=13, row_frac=1.0, n_kernels=7, n_classes=7, n_epochs=3,
         gram_kind="gaussian", gram_scale=1.0, kernel_scale=1.0, beta=1e-3, lam=0.05, q=2.0,
         t0=0, dtype=np.float32, seed=0)
@example(n_all=1, row_frac=1.0, n_kernels=1, n_classes=2, n_epochs=1,
         gram_kind="identity", gram_scale=1.0, kernel_scale=1.0, beta=0.0, lam=1.0, q=2.0,
         t0=0, dtype=np.float64, seed=1)
@example(n_all=7, row_frac=0.6, n_kernels=3, n_classes=3, n_epochs=2,
         gram_kind="integer", gram_scale=1e100, kernel_scale=1e100, beta=0.0, lam=1e-100,
         q=12.0, t0=10**6, dtype=np.float64, seed=2)
def test_fuzz_mkl_epoch(n_all, row_frac, n_kernels, n_classes, n_epochs, gram_kind,
                        gram_scale, kernel_scale, beta, lam, q, t0, dtype, seed):
    rng = np.random.default_rng(seed)
    n_rows = max(1, int(round(row_frac * n_all)))
    if gram_kind == "gaussian":
        X = rng.standard_normal((n_all, 2))
        sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=-1)
        taus = 2.0 ** rng.uniform(-2, 3, size=n_kernels)
        gram = np.exp(-sq[None] / taus[:, None, None])
    elif gram_kind == "lowrank":
        B = rng.standard_normal((n_kernels, n_all, 2))
        gram = B @ B.transpose(0, 2, 1)
    elif gram_kind == "identity":
        gram = np.broadcast_to(np.eye(n_all), (n_kernels, n_all, n_all))
    else:
        B = rng.integers(-2, 3, size=(n_kernels, n_all, 2)).astype(np.float64)
        gram = B @ B.transpose(0, 2, 1)
    big = float(np.finfo(dtype).max)  # finite entries, as the solver checks
    gram = np.ascontiguousarray(np.clip(gram * _scale_for(gram_scale, dtype), -big, big),
                                dtype=dtype)
    rows = np.sort(rng.choice(n_all, size=n_rows, replace=False)).astype(np.intp)
    labels = rng.integers(0, n_classes, size=n_rows).astype(np.intp)
    order = np.concatenate([rng.permutation(n_rows) for _ in range(n_epochs)]).astype(np.intp)
    scale = kernel_scale * rng.uniform(0.5, 2.0, size=n_kernels)
    penalty_rate = beta * rng.uniform(0.0, 1.0, size=n_kernels)
    args = (gram, rows, labels, order, scale, penalty_rate, lam, q, t0)
    (d1, g1, s1, c1, (u1, l1)), (d2, g2, s2, c2, (u2, l2)) = [
        _run_epoch(epoch, *args) for epoch in (mkl_epoch, mkl_epoch_numpy)]
    if not np.array_equal(d1, d2):
        # another sub-gradient step somewhere: the twin sums a row's scores by
        # matmul, the kernel one kernel at a time, and the coefficients differ
        # by rounding, so a near tie (two classes' scores, or a margin and 1)
        # may be broken either way. Check every step from one shared state.
        min_gap = _check_lockstep(*args)
        assert min_gap < 1e-6, f"the epochs' duals differ without a near tie ({min_gap})"
        event("mkl_epoch: a near tie broken differently")
        return
    # the same sub-gradient steps: identical integer duals and update counts
    assert u1 == u2
    # then the same float64 updates in the same order
    assert_twin(g1, g2, rtol=1e-12, atol=0.0, what="gram_dual")
    assert_twin(s1, s2, rtol=1e-12, atol=0.0, what="theta_sq")
    assert_twin(c1, c2, rtol=(q + 10) * 64 * np.finfo(np.float64).eps, atol=4 * 5e-324,
                overflow_ok=np.array(True), what="coef")
    assert_twin(l1, l2, rtol=1e-9, atol=1e-9, what="loss_sum")


def _run_epoch(epoch, gram, rows, labels, order, scale, penalty_rate, lam, q, t0,
               state=None):
    """Run ``epoch`` from ``state`` (zeros by default); return the new state and output."""
    n_kernels, n_rows, n_classes = gram.shape[0], rows.shape[0], labels.max(initial=0) + 1
    if state is None:
        state = (np.zeros((n_rows, max(n_classes, 1))), np.zeros((n_kernels, n_classes, n_rows)),
                 np.zeros(n_kernels), np.zeros(n_kernels))
    dual, gram_dual, theta_sq, coef = (a.copy() for a in state)
    with np.errstate(all="ignore"):
        out = epoch(gram, rows, labels, order, dual, gram_dual, theta_sq, scale,
                    penalty_rate, lam, q, t0, coef)
    return dual, gram_dual, theta_sq, coef, out


def _valid_step(delta, y, exact, tol):
    """Is ``delta`` (a row of the dual) a hinge sub-gradient step, within ``tol``?

    No step when the margin ``exact[y] - max_{k != y} exact[k]`` is at least
    1; else ``+1`` at ``y`` and ``-1`` at a maximiser ``r != y``.
    """
    others_max = np.delete(exact, y).max()
    margin = exact[y] - others_max
    if not delta.any():
        return margin >= 1.0 - tol
    (r,) = np.flatnonzero(delta == -1.0) if (delta == -1.0).sum() == 1 else (None,)
    return (r is not None and r != y and delta[y] == 1.0 and np.abs(delta).sum() == 2.0
            and exact[r] >= others_max - tol and margin < 1.0 + tol)


def _check_lockstep(gram, rows, labels, order, scale, penalty_rate, lam, q, t0):
    """Compare the kernel and the twin step by step from the twin's state.

    Where they take different sub-gradient steps, the scores (summed exactly
    here) must show a tie within rounding. Returns the smallest relative gap
    of a decision seen: between the two best other classes, or between the
    margin and 1.
    """
    state, min_gap = None, np.inf
    eps = np.finfo(np.float64).eps
    for s in range(order.shape[0]):
        step = (gram, rows, labels, order[s:s + 1], scale, penalty_rate, lam, q, t0 + s)
        a = _run_epoch(mkl_epoch, *step, state=state)
        b = _run_epoch(mkl_epoch_numpy, *step, state=state)
        if state is None:
            state = tuple(np.zeros_like(x) for x in b[:4])
        i, y = order[s], labels[order[s]]
        coef, gram_dual = state[3], state[1]
        terms = coef[:, None] * gram_dual[:, :, i]  # (n_kernels, n_classes)
        if terms.shape[1] >= 2 and np.isfinite(terms).all():
            exact = np.array([math.fsum(terms[:, k]) for k in range(terms.shape[1])])
            size = np.abs(terms).sum(axis=0).max() + 1.0
            tol = 4 * (terms.shape[0] + 1) * eps * size
            others = np.delete(exact, y)
            top2 = np.sort(others)[-2:]
            gaps = [abs(exact[y] - others.max() - 1.0)]
            if others.size >= 2:
                gaps.append(top2[1] - top2[0])
            min_gap = min(min_gap, min(gaps) / size)
            if not np.array_equal(a[0], b[0]):
                for name, new_state in (("kernel", a), ("twin", b)):
                    delta = new_state[0][i] - state[0][i]
                    assert _valid_step(delta, y, exact, tol), (
                        f"step {s}: the {name}'s step {delta} is not a sub-gradient "
                        f"step within rounding (scores {exact}, label {y}, tol {tol})")
        else:
            np.testing.assert_array_equal(a[0], b[0])
        if np.array_equal(a[0], b[0]):
            assert_twin(a[1], b[1], rtol=1e-12, atol=0.0, what="gram_dual (step)")
            assert_twin(a[2], b[2], rtol=1e-12, atol=0.0, what="theta_sq (step)")
        state = b[:4]
    return min_gap


# ---------------------------------------------------------------------------
# the debug build really checks bounds


@pytest.mark.skipif(not DEBUG_BUILD, reason="only in a build with MCSPARSE_CYTHON_DEBUG=1")
def test_debug_build_checks_bounds():
    """mkl_epoch does not check its indices; with boundscheck on, Cython does."""
    n_rows = 3
    gram = np.ones((1, n_rows, n_rows))
    args = (gram, np.arange(n_rows, dtype=np.intp), np.zeros(n_rows, dtype=np.intp),
            np.array([n_rows], dtype=np.intp),  # one past the last row
            np.zeros((n_rows, 2)), np.zeros((1, 2, n_rows)), np.zeros(1), np.ones(1),
            np.zeros(1), 1.0, 2.0, 0, np.zeros(1))
    with pytest.raises(IndexError, match="[Oo]ut of bounds"):
        mkl_epoch(*args)
