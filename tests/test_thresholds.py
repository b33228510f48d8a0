"""Stumps as cuts of integer codes: the sums by feature of the column store.

The Cython kernels (``slots_matmul``, ``sorted_rmatmul``, ``cuts_value_grad``)
against their NumPy twins and the dense products of the same stumps (edge
sizes, many chunks of scores, clamped indices), the store's pass against a
store holding the same stumps as plain columns, the stump family's codes
against its columns, ShareBoost's fit with and without the codes, and bad input.
"""

import pickle

import numpy as np
import pytest

import reference
from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import DecisionStumps
from mcsparse.loss import BinaryLogisticLoss, MulticlassLogisticLoss
from mcsparse.solvers._columns import SelectedColumns, dense_value_grad_numpy
from mcsparse.solvers._columns_fast import slots_matmul, sorted_rmatmul
from logistic_entry_points import cuts_value_grad
import mcsparse.solvers._thresholds as thresholds_module
from mcsparse.solvers._thresholds import (
    RUNS_PER_COLUMN,
    SORTED_BYTES_MAX,
    ThresholdIndex,
    slots_matmul_numpy,
    sorted_rmatmul_numpy,
)

EPS = np.finfo(np.float64).eps


def _read_only(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


def _stumps(rng, n, n_features, m, n_codes=6):
    """Random codes and m stumps: (codes (n_features, n), features, cuts, shift)."""
    codes = rng.integers(0, n_codes, size=(n_features, n)).astype(np.int32)
    features = rng.integers(0, n_features, size=m)
    cuts = rng.integers(0, n_codes + 1, size=m).astype(np.int32)  # n_codes: every code
    shift = rng.random(m)
    return codes, features, cuts, shift


def _runs(codes, features, cuts, shift):
    """The kernels' inputs (:func:`reference.threshold_runs`) and the dense columns."""
    slots, run_start, cols, order, ends = reference.threshold_runs(codes, features, cuts)
    dense = (codes[features].T <= cuts).astype(np.float64) - shift
    return slots, run_start, cols, np.ascontiguousarray(shift[cols]), order, ends, dense


SIZES = [(0, 1, 1), (1, 1, 1), (2, 1, 3), (7, 3, 1), (50, 4, 9), (301, 5, 30)]


@pytest.mark.parametrize("n, n_features, m", SIZES)
@pytest.mark.parametrize("r", [0, 1, 10, 12, 13, 25])
def test_kernels_match_twins_and_dense_products(n, n_features, m, r):
    rng = np.random.default_rng(n + 7 * m + r)
    codes, features, cuts, shift = _stumps(rng, n, n_features, m)
    slots, run_start, cols, sh, order, ends, dense = _runs(codes, features, cuts, shift)
    Vt = rng.standard_normal((m, r))
    start = rng.standard_normal((n, r))
    out, ref = start.copy(), start.copy()
    slots_matmul(slots, run_start, cols, sh, Vt, out)
    slots_matmul_numpy(slots, run_start, cols, sh, Vt, ref)
    tol = 8 * (m + n + 2) * EPS
    np.testing.assert_allclose(out, ref, rtol=tol, atol=tol * (1 + np.abs(Vt).sum()))
    np.testing.assert_allclose(out, start + dense @ Vt, rtol=tol,
                               atol=tol * (1 + np.abs(Vt).sum()))
    M = rng.standard_normal((n, r))
    out = np.full((m, r), np.nan)
    ref = np.full((m, r), np.nan)
    sorted_rmatmul(order, ends, run_start, cols, sh, M, out)
    sorted_rmatmul_numpy(order, ends, run_start, cols, sh, M, ref)
    atol = tol * (1 + np.abs(M).sum())
    np.testing.assert_allclose(out, ref, rtol=tol, atol=atol)
    np.testing.assert_allclose(out, dense.T @ M, rtol=tol, atol=atol)


def test_kernels_clamp_indices_out_of_range_as_their_twins():
    """Slots below or above a run's rows, rows of order outside [0, n): no read out of range."""
    rng = np.random.default_rng(0)
    codes, features, cuts, shift = _stumps(rng, 40, 3, 8)
    slots, run_start, cols, sh, order, ends, _ = _runs(codes, features, cuts, shift)
    slots[::3] = -5
    slots[1::3] = 10**6
    order[:, ::4] = -1
    order[:, 1::4] = 10**6
    Vt, M = rng.standard_normal((8, 10)), rng.standard_normal((40, 10))
    for kernel, twin, args, shape in ((slots_matmul, slots_matmul_numpy,
                                       (slots, run_start, cols, sh, Vt), (40, 10)),
                                      (sorted_rmatmul, sorted_rmatmul_numpy,
                                       (order, ends, run_start, cols, sh, M), (8, 10))):
        out, ref = np.zeros(shape), np.zeros(shape)
        kernel(*args, out)
        twin(*args, ref)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n, n_features, m", SIZES[1:])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("binary", [False, True])
def test_fused_pass_matches_the_dense_fused_pass(n, n_features, m, weighted, binary):
    rng = np.random.default_rng(n + m)
    codes, features, cuts, shift = _stumps(rng, n, n_features, m)
    slots, run_start, cols, sh, order, ends, dense = _runs(codes, features, cuts, shift)
    k = 1 if binary else 4
    y = rng.integers(0, 2 if binary else k, size=n).astype(np.intp)
    w = rng.random(n) if weighted else None
    Wt, b = rng.standard_normal((m, k)), rng.standard_normal(k)
    outs = [np.empty((n, k)), np.empty((n, k)), np.empty((m, k)), np.empty(k)]
    value = cuts_value_grad(slots, order, ends, run_start, cols, sh, Wt, b, y, w, 1.0, binary,
                            *outs)
    ref = dense_value_grad_numpy(np.asfortranarray(dense), None, m, Wt, b, y, w, 1.0, binary)
    tol = 64 * (n + m) * EPS
    np.testing.assert_allclose(value, ref[0], rtol=tol, atol=tol)
    for got, want in zip(outs, ref[1:]):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * (1 + n))


@pytest.mark.parametrize("call, match", [
    (lambda s, rs, c, sh, o, e, V, M: slots_matmul(s[:-1], rs, c, sh, V, np.zeros((9, 3))),
     "slots has"),
    (lambda s, rs, c, sh, o, e, V, M: slots_matmul(s, rs[:-1], c, sh, V, np.zeros((9, 3))),
     "run_start"),
    (lambda s, rs, c, sh, o, e, V, M: slots_matmul(s, rs, c, sh[:-1], V, np.zeros((9, 3))),
     "same length"),
    (lambda s, rs, c, sh, o, e, V, M: slots_matmul(s, rs, c + 100, sh, V, np.zeros((9, 3))),
     "outside"),
    (lambda s, rs, c, sh, o, e, V, M: slots_matmul(s, rs, c, sh, V, np.zeros((9, 4))),
     "columns"),
    (lambda s, rs, c, sh, o, e, V, M: slots_matmul(s, rs[::-1].copy(), c, sh, V,
                                                   np.zeros((9, 3))), "run_start"),
    (lambda s, rs, c, sh, o, e, V, M: sorted_rmatmul(o[:, :-1].copy(), e, rs, c, sh, M,
                                                     np.zeros((5, 3))), "order has"),
    (lambda s, rs, c, sh, o, e, V, M: sorted_rmatmul(o, e[::-1] + 100, rs, c, sh, M,
                                                     np.zeros((5, 3))), "ends"),
    (lambda s, rs, c, sh, o, e, V, M: sorted_rmatmul(o, e, rs, c, sh, M, M), "overlap"),
])
def test_kernels_refuse_bad_input(call, match):
    rng = np.random.default_rng(1)
    codes, features, cuts, shift = _stumps(rng, 9, 2, 5)
    slots, run_start, cols, sh, order, ends, _ = _runs(codes, features, cuts, shift)
    with pytest.raises(ValueError, match=match):
        call(slots, run_start, cols, sh, order, ends, rng.standard_normal((5, 3)),
             rng.standard_normal((9, 3)))


# --- the column store -------------------------------------------------------------

def _two_stores(codes, features, cuts, *, row_block=10**6, n_threads=1, weights=None,
                center=True):
    """The same stumps stored with put_cut and with put."""
    n = codes.shape[1]
    codes = _read_only(codes)
    by_cut = SelectedColumns(n, 2, n_threads=n_threads, row_block=row_block)
    dense = SelectedColumns(n, 2, n_threads=n_threads, row_block=row_block)
    for j, (f, c) in enumerate(zip(features, cuts)):
        by_cut.put_cut(codes[f], int(c), j, center=center, sample_weight=weights)
        dense.put((codes[f] <= c).astype(float)[:, None], j, center=center,
                  sample_weight=weights)
    return by_cut, dense


def _value_grad(store, Wt, b, y, w, loss):
    n, k = store.n_samples, Wt.shape[1]
    scores, residual = np.empty((n, k)), np.empty((n, k))
    value, g, gb = store.value_grad(Wt, b, loss, y, w, scores, residual)
    return value, g, gb, scores, residual


@pytest.mark.parametrize("row_block, n_threads", [(10**6, 1), (37, 1), (37, 2), (1, 2)])
@pytest.mark.parametrize("weighted", [False, True])
def test_store_sums_by_feature_equal_the_dense_pass(row_block, n_threads, weighted):
    rng = np.random.default_rng(row_block + n_threads)
    n = 150
    codes, features, cuts, _ = _stumps(rng, n, 3, 24, n_codes=12)
    w = rng.random(n) if weighted else None
    by_cut, dense = _two_stores(codes, features, cuts, row_block=row_block,
                                n_threads=n_threads, weights=w)
    y = rng.integers(0, 5, size=n).astype(np.intp)
    calls = []
    sums_by_feature = by_cut._cuts_value_grad
    by_cut._cuts_value_grad = lambda *a: calls.append(1) or sums_by_feature(*a)
    for p in (24, 18, 12, 6, 1):
        Wt, b = rng.standard_normal((p, 5)), rng.standard_normal(5)
        got = _value_grad(by_cut, Wt, b, y, w, MulticlassLogisticLoss())
        want = _value_grad(dense, Wt, b, y, w, MulticlassLogisticLoss())
        for a, e in zip(got, want):
            np.testing.assert_allclose(a, e, rtol=1e-11, atol=1e-11 * n)
    # 3 features: by feature from 12 stumps on (RUNS_PER_COLUMN), the dense pass below
    assert RUNS_PER_COLUMN == 0.25 and len(calls) == 3
    assert not by_cut._thresholds.pays(1) and not dense._thresholds.pays(24)
    # the other products of the store read its dense copy: the same as the plain store
    M = rng.standard_normal((n, 3))
    np.testing.assert_array_equal(by_cut.rmatmul(M, 24), dense.rmatmul(M, 24))
    np.testing.assert_array_equal(by_cut.column(5), dense.column(5))


@pytest.mark.parametrize("n_scores, by_feature", [(10, True), (12, True), (13, False)])
def test_store_sums_by_feature_only_while_a_block_fits_the_cache(n_scores, by_feature):
    # 8,000-row blocks: 12 padded scores take 768,000 bytes, 13 (padded to 24) 1.5 MB
    rng = np.random.default_rng(8)
    n = 8000
    codes, features, cuts, _ = _stumps(rng, n, 2, 8, n_codes=20)
    by_cut, dense = _two_stores(codes, features, cuts)
    assert by_cut._block_rows == n and SORTED_BYTES_MAX == 1 << 20
    calls = []
    sums_by_feature = by_cut._cuts_value_grad
    by_cut._cuts_value_grad = lambda *a: calls.append(1) or sums_by_feature(*a)
    y = rng.integers(0, n_scores, size=n).astype(np.intp)
    Wt, b = rng.standard_normal((8, n_scores)), rng.standard_normal(n_scores)
    got = _value_grad(by_cut, Wt, b, y, None, MulticlassLogisticLoss())
    want = _value_grad(dense, Wt, b, y, None, MulticlassLogisticLoss())
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=1e-11, atol=1e-11 * n)
    assert len(calls) == by_feature
    # smaller blocks of the same stumps take the sums by feature again
    assert by_cut._thresholds.pays(8, n // 2, n_scores)


def test_store_sums_do_not_depend_on_threads():
    rng = np.random.default_rng(4)
    codes, features, cuts, _ = _stumps(rng, 200, 2, 10, n_codes=30)
    y = rng.integers(0, 3, size=200).astype(np.intp)
    Wt, b = rng.standard_normal((10, 3)), np.zeros(3)
    results = [_value_grad(_two_stores(codes, features, cuts, row_block=33, n_threads=t)[0],
                           Wt, b, y, None, MulticlassLogisticLoss()) for t in (1, 2, 3)]
    for other in results[1:]:
        for a, e in zip(other, results[0]):
            np.testing.assert_array_equal(a, e)


def test_store_binary_loss_and_uncentred_stumps():
    rng = np.random.default_rng(5)
    codes, features, cuts, _ = _stumps(rng, 80, 2, 8)
    by_cut, dense = _two_stores(codes, features, cuts, center=False)
    y = rng.integers(0, 2, size=80).astype(np.intp)
    Wt, b = rng.standard_normal((8, 1)), rng.standard_normal(1)
    got = _value_grad(by_cut, Wt, b, y, None, BinaryLogisticLoss())
    want = _value_grad(dense, Wt, b, y, None, BinaryLogisticLoss())
    for a, e in zip(got, want):
        np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-12 * 80)


def test_store_forgets_stumps_replaced_or_mixed_with_other_columns(monkeypatch):
    rng = np.random.default_rng(6)
    codes, features, cuts, _ = _stumps(rng, 60, 2, 8)
    by_cut, dense = _two_stores(codes, features, cuts)
    monkeypatch.setattr(thresholds_module, "RUNS_PER_COLUMN", 0.5)  # stumps on 2 features
    assert by_cut._thresholds.pays(8)
    column = rng.standard_normal((60, 1))
    for store in (by_cut, dense):  # column 5 replaced by a plain column (and 6, 7 dropped)
        store.put(column, 5, center=True)
    assert by_cut.n_columns == 6 and not by_cut._thresholds.pays(6)
    assert by_cut._thresholds.pays(4)
    y = rng.integers(0, 3, size=60).astype(np.intp)
    for p in (6, 4):
        Wt = rng.standard_normal((p, 3))
        for a, e in zip(_value_grad(by_cut, Wt, np.zeros(3), y, None, MulticlassLogisticLoss()),
                        _value_grad(dense, Wt, np.zeros(3), y, None, MulticlassLogisticLoss())):
            np.testing.assert_allclose(a, e, rtol=1e-12, atol=1e-10)


def test_store_with_stumps_pickles():
    rng = np.random.default_rng(7)
    codes, features, cuts, _ = _stumps(rng, 50, 2, 6)
    store = _two_stores(codes, features, cuts)[0]
    y = rng.integers(0, 3, size=50).astype(np.intp)
    Wt = rng.standard_normal((6, 3))
    before = _value_grad(store, Wt, np.zeros(3), y, None, MulticlassLogisticLoss())
    again = pickle.loads(pickle.dumps(store))
    assert again._thresholds._prepared is None
    after = _value_grad(again, Wt, np.zeros(3), y, None, MulticlassLogisticLoss())
    for a, e in zip(after, before):
        np.testing.assert_array_equal(a, e)


@pytest.mark.parametrize("codes, cut, error, match", [
    (np.zeros(10, dtype=np.int64), 0, TypeError, "int32"),
    ([0] * 10, 0, TypeError, "int32"),
    (np.zeros(9, dtype=np.int32), 0, ValueError, "shape"),
    (np.zeros((10, 1), dtype=np.int32), 0, ValueError, "shape"),
    ("writeable", 0, ValueError, "read-only"),
    (np.full(10, -1, dtype=np.int32), 0, ValueError, "non-negative"),
    (np.zeros(10, dtype=np.int32), -1, ValueError, "cut"),
    (np.zeros(10, dtype=np.int32), 2**31, ValueError, "cut"),
    (np.zeros(10, dtype=np.int32), 1.5, TypeError, "cut"),
])
def test_store_put_cut_refuses_bad_input(codes, cut, error, match):
    store = SelectedColumns(10, 2)
    store.put(np.arange(10.0)[:, None], 0)
    if isinstance(codes, str):
        codes = np.zeros(10, dtype=np.int32)
    elif isinstance(codes, np.ndarray):
        codes.flags.writeable = False
    with pytest.raises(error, match=match):
        store.put_cut(codes, cut, 1)
    assert store.n_columns == 1 and store._thresholds._cuts == []


def test_index_groups_stumps_by_the_memory_of_their_codes():
    rng = np.random.default_rng(8)
    codes = _read_only(rng.integers(0, 5, size=(2, 30)).astype(np.int32))
    index = ThresholdIndex()
    index.add(codes[0], 1, 0)
    index.add(codes[0], 2, 1)  # another view of the same memory: the same run
    index.add(codes[1], 1, 2)
    index.add(_read_only(codes[1].copy()), 3, 3)  # equal codes elsewhere: another run
    assert len(index._codes) == 3 and [key for _, key, _ in index._cuts] == [0, 0, 1, 2]


def test_store_refuses_codes_whose_memory_can_change():
    """A read-only view of a writeable buffer or array is not read-only memory."""
    buffer = bytearray(np.zeros(10, dtype=np.int32).tobytes())
    views = [np.frombuffer(buffer, dtype=np.int32),
             np.lib.stride_tricks.as_strided(np.zeros(20, dtype=np.int32), (10,), (8,))]
    store = SelectedColumns(10, 2)
    for codes in views:
        codes.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            store.put_cut(codes, 0, 0)
    store.put_cut(np.frombuffer(bytes(buffer), dtype=np.int32), 0, 0)  # bytes: read-only
    assert store.n_columns == 1


def test_kernels_refuse_outputs_that_overlap_their_inputs():
    """Indices that the output overwrites while the kernel reads them: refused, no crash."""
    rng = np.random.default_rng(10)
    codes, features, cuts, shift = _stumps(rng, 8, 2, 2)
    slots, run_start, cols, sh, order, ends, _ = _runs(codes, features, cuts, shift)
    out = np.zeros((2, 2))
    aliased = out.reshape(-1).view(np.intp)[:2]
    aliased[:] = ends
    with pytest.raises(ValueError, match="ends and out overlap"):
        sorted_rmatmul(order, aliased, run_start, cols, sh, rng.standard_normal((8, 2)), out)
    scores = np.zeros((8, 2))
    cols_in_scores = scores.reshape(-1).view(np.intp)[:2]
    cols_in_scores[:] = cols
    with pytest.raises(ValueError, match="cols and scores overlap"):
        cuts_value_grad(slots, order, ends, run_start, cols_in_scores, sh, np.ones((2, 2)),
                        np.zeros(2), np.zeros(8, dtype=np.intp), None, 1.0, False, scores,
                        np.zeros((8, 2)), np.zeros((2, 2)), np.zeros(2))
    memory = np.zeros(16)
    slots_in_out = memory.view(np.int32)[:slots.size].reshape(slots.shape)
    slots_in_out[:] = slots
    with pytest.raises(ValueError, match="slots and out overlap"):
        slots_matmul(slots_in_out, run_start, cols, sh, np.ones((2, 2)), memory.reshape(8, 2))


def test_kernels_refuse_run_start_without_runs():
    empty = np.zeros(0, dtype=np.intp)
    with pytest.raises(ValueError, match="run_start must go from 0"):
        slots_matmul(np.zeros((3, 0), dtype=np.int32), np.array([99], dtype=np.intp), empty,
                     np.zeros(0), np.zeros((0, 2)), np.zeros((3, 2)))


# --- the stump family and ShareBoost -------------------------------------------------

def test_family_codes_on_float32_neighbours():
    """A threshold halfway between two adjacent float32 values: codes and columns agree."""
    one = np.float32(1)
    u = np.nextafter(one, np.float32(2)) - one
    X = np.array([[one], [one + u], [one + 2 * u], [one + 2 * u]], dtype=np.float32)
    for max_bins in (None, 8):
        family = DecisionStumps(max_bins=max_bins).fit(X)
        for j in range(family.n_candidates_):
            codes, cut = family.training_cuts(j)
            column = family.training_columns([j])[:, 0]
            np.testing.assert_array_equal((codes <= cut).astype(float), column)
            np.testing.assert_array_equal(family.transform_candidates(X, [j])[:, 0], column)
            assert 0 < column.sum() < 4  # a real cut, not all ones
    clf = ShareBoostClassifier(n_features_to_select=1, features="stumps").fit(X, [0, 0, 1, 1])
    np.testing.assert_array_equal(clf.predict(X), [0, 0, 1, 1])


def test_family_codes_take_one_integer_id():
    family = DecisionStumps().fit(np.arange(12.0).reshape(6, 2))
    for bad, error in (([1, 2], TypeError), (1.0, TypeError), (-1, ValueError),
                       (family.n_candidates_, ValueError)):
        with pytest.raises(error, match="stump_id"):
            family.training_cuts(bad)


@pytest.mark.parametrize("max_bins", [None, 4])
def test_family_codes_give_its_columns(max_bins):
    rng = np.random.default_rng(9)
    X = np.round(rng.standard_normal((70, 3)), 1)
    family = DecisionStumps(max_bins=max_bins).fit(X)
    for j in range(family.n_candidates_):
        codes, cut = family.training_cuts(j)
        assert codes.dtype == np.int32 and not codes.flags.writeable
        np.testing.assert_array_equal((codes <= cut).astype(float),
                                      family.training_columns([j])[:, 0])
        # the thresholds on the training data give the same column
        np.testing.assert_array_equal(family.transform_candidates(X, [j])[:, 0],
                                      family.training_columns([j])[:, 0])


def test_shareboost_stumps_with_and_without_codes(monkeypatch):
    """The sums by feature change rounding only: the same stumps, the same predictions."""
    X, y = load_pendigits(return_X_y=True)
    X, y = X[:2000], y[:2000]
    fits, calls = [], []
    # by feature from two stumps a feature (four by default: not within 40 stumps)
    monkeypatch.setattr(thresholds_module, "RUNS_PER_COLUMN", 0.5)
    sums_by_feature = SelectedColumns._cuts_value_grad
    monkeypatch.setattr(SelectedColumns, "_cuts_value_grad",
                        lambda *a: calls.append(1) or sums_by_feature(*a))
    for with_codes in (True, False):
        if not with_codes:
            assert len(calls) > 50  # the passes once the stumps outnumber twice their features
            calls.clear()
            monkeypatch.setattr(DecisionStumps, "training_cuts", lambda self, j: None)
        fits.append(ShareBoostClassifier(n_features_to_select=40, features="stumps",
                                         alpha=1e-4).fit(X, y))
    assert not calls
    a, b = fits
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-3, atol=1e-3 * np.abs(b.coef_).max())
    assert np.mean(a.predict(X) != b.predict(X)) <= 0.001


def test_shareboost_refuses_codes_that_disagree_with_the_columns(monkeypatch):
    X, y = load_pendigits(return_X_y=True)
    original = DecisionStumps.training_cuts

    def off_by_one(self, j):
        codes, cut = original(self, j)
        return codes, cut + 1

    monkeypatch.setattr(DecisionStumps, "training_cuts", off_by_one)
    with pytest.raises(ValueError, match="disagrees with training_columns"):
        ShareBoostClassifier(n_features_to_select=3, features="stumps").fit(X[:500], y[:500])
    monkeypatch.setattr(DecisionStumps, "training_cuts", lambda self, j: "codes")
    with pytest.raises(ValueError, match=r"pair \(codes, cut\)"):
        ShareBoostClassifier(n_features_to_select=3, features="stumps").fit(X[:500], y[:500])
