"""The objective layer: losses and penalties, the column store, LinearObjective.

The Cython modules of the objective (``_columns_fast``) against their
NumPy twins (float32 and float64 storage, edge sizes), gradients and
Hessian-vector products against finite differences, the exact Hessian
columns against Hessian-vector products, and bad input.
"""

import numpy as np
import pytest
from scipy.optimize import approx_fprime, check_grad
from scipy.special import logsumexp

from mcsparse.loss import (
    BinaryLogisticLoss,
    Frobenius,
    MixedNorm,
    MulticlassLogisticLoss,
    SmoothedLinfOne,
    make_penalty,
)
from mcsparse.loss._multiclass_logistic import loss_rows_numpy
from mcsparse.loss._multiclass_logistic_fast import loss_rows
from mcsparse.solvers._columns import (
    SelectedColumns,
    SparseColumns,
    dense_matmul_numpy,
    dense_rmatmul_numpy,
    dense_value_grad_numpy,
    groups_matmul_numpy,
    groups_rmatmul_numpy,
)
from mcsparse.loss._multiclass_logistic_fast import hessian_rows
from mcsparse.solvers._objective import LinearObjective
from mcsparse.solvers._columns_fast import (
    _groups_avx512,
    dense_matmul,
    dense_rmatmul,
    groups_matmul,
    groups_rmatmul,
)
from logistic_entry_points import dense_value_grad, hessian_rows_numpy

# rows around the sub-block sizes of the Cython pass (64 .. 4096 rows, 256 for the loss)
SIZES = [(0, 3), (1, 1), (2, 0), (63, 5), (65, 1), (257, 7), (1100, 40), (4097, 8)]


def _store(n, cap, dtype, rng):
    X = rng.standard_normal((n, cap)).astype(dtype)
    if dtype == np.float32:
        X = np.round(X * 8) / 8  # exact float32 values, the store keeps them so
    return np.asfortranarray(X)


# --- the Cython products against their twins -----------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, p", SIZES)
@pytest.mark.parametrize("shifted", [False, True])
def test_dense_products_match_twins(dtype, n, p, shifted):
    rng = np.random.default_rng(n + p)
    X = _store(n, p + 3, dtype, rng)
    shift = rng.standard_normal(p + 3) if shifted else None
    for r in (1, 10):
        Vt = rng.standard_normal((p, r))
        out = np.full((n, r), np.nan)
        dense_matmul(X, shift, p, Vt, out)
        np.testing.assert_allclose(out, dense_matmul_numpy(X, shift, p, Vt), rtol=1e-12,
                                   atol=1e-12)
        M = rng.standard_normal((n, r))
        out = np.full((p, r), np.nan)
        dense_rmatmul(X, shift, p, M, out)
        np.testing.assert_allclose(out, dense_rmatmul_numpy(X, shift, p, M), rtol=1e-12,
                                   atol=1e-11)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, p", SIZES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("binary, margin", [(False, 1.0), (False, 0.0), (True, 0.0)])
def test_fused_pass_matches_twin(dtype, n, p, weighted, binary, margin):
    rng = np.random.default_rng(3 * n + p)
    k = 1 if binary else 4
    X = _store(n, p, dtype, rng)
    shift = rng.standard_normal(p)
    Wt, b = rng.standard_normal((p, k)), rng.standard_normal(k)
    y = rng.integers(0, 2 if binary else k, n).astype(np.intp)
    w = rng.uniform(0, 2, n) if weighted else None
    S, R = np.empty((n, k)), np.empty((n, k))
    G, gb = np.full((p, k), np.nan), np.full(k, np.nan)
    loss = dense_value_grad(X, shift, p, Wt, b, y, w, margin, binary, S, R, G, gb)
    loss_ref, S_ref, R_ref, G_ref, gb_ref = dense_value_grad_numpy(
        X, shift, p, Wt, b, y, w, margin, binary)
    np.testing.assert_allclose(loss, loss_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(S, S_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(R, R_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(G, G_ref, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(gb, gb_ref, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("n, k, q", [(0, 3, 2), (1, 1, 1), (50, 4, 3), (300, 10, 1)])
@pytest.mark.parametrize("weighted", [False, True])
def test_hessian_rows_match_twin(n, k, q, weighted):
    rng = np.random.default_rng(n + k)
    P = rng.dirichlet(np.ones(k), size=n) if n else np.zeros((0, k))
    w = rng.uniform(0, 2, n) if weighted else None
    V = rng.standard_normal((n, q))
    out = np.full((n, q * k * (k + 1) // 2), np.nan)
    hessian_rows(P, w, V, out)
    np.testing.assert_allclose(out, hessian_rows_numpy(P, w, V), rtol=1e-13, atol=1e-15)


def _groups(n, widths, rows_per_group, rng, first=0):
    """Row-sparse groups (first, rows, values) side by side from column ``first``."""
    groups = []
    for width, n_rows in zip(widths, rows_per_group):
        rows = np.sort(rng.choice(n, size=n_rows, replace=False)).astype(np.intp)
        groups.append((first, rows, rng.standard_normal((n_rows, width))))
        first += width
    return groups, first


@pytest.mark.parametrize("n, widths, rows_per_group", [
    (0, [3], [0]), (1, [1], [1]), (1, [2, 1], [0, 1]), (5, [1, 4, 2], [5, 0, 3]),
    (300, [7, 51, 1], [1, 299, 150]), (2000, [51] * 6, [13, 1999, 700, 2, 0, 1000]),
    # the C loops' edges: blocks of 4 rows (scores) and 4 columns (gradient), the
    # rows asked for 4 to 8 ahead, 64 rows transposed at a time (gradient)
    (200, [4, 5, 6, 7, 8], [3, 4, 7, 8, 9]), (200, [3, 2, 50], [63, 64, 65]),
    (300, [52, 53], [128, 129]),
])
@pytest.mark.parametrize("r", [1, 10, 12, 13, 55])  # tiles of 12 scores
@pytest.mark.parametrize("avx512", [True, False])
def test_group_products_match_twins(n, widths, rows_per_group, r, avx512, group_loops):
    group_loops(avx512)
    rng = np.random.default_rng(n + r + len(widths))
    groups, p = _groups(n, widths, rows_per_group, rng, first=2)
    # the first 2 columns are dense (not in a group): left as they are
    for cut in (p, p - widths[-1], 2):  # every group, all but the last, none
        Vt = rng.standard_normal((cut, r))
        start = rng.standard_normal((n, r))
        out, ref = start.copy(), start.copy()
        groups_matmul(groups, Vt, out)
        groups_matmul_numpy(groups, Vt, ref)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
        M = rng.standard_normal((n, r))
        start = rng.standard_normal((cut, r))
        out, ref = start.copy(), start.copy()
        groups_rmatmul(groups, M, out)
        groups_rmatmul_numpy(groups, M, ref)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)
        assert np.array_equal(out[:2], start[:2])


@pytest.fixture
def group_loops():
    """``group_loops(avx512)`` switches the group products' AVX-512 loops, back on after."""
    yield _groups_avx512
    _groups_avx512(True)


@pytest.mark.parametrize("r", [1, 10, 12, 13, 26])
@pytest.mark.parametrize("indexed", [False, True])
def test_group_products_avx512_loops_give_the_avx2_bits(r, indexed, group_loops):
    """The AVX-512 loops (8 rows / 8 columns a block) sum in the AVX2 loops' order."""
    if not group_loops(True):
        pytest.skip("this CPU has no AVX-512 (or the build has no AVX-512 loops)")
    rng = np.random.default_rng(r)
    n = 400
    widths = [1, 3, 7, 8, 9, 15, 16, 17, 51, 51, 51]
    rows_per_group = [7, 8, 9, 15, 16, 17, 63, 64, 65, 200, 399]
    groups, p = _groups(n, widths, rows_per_group, rng)
    if indexed:  # rows read in place from one shared matrix, the next 64 prefetched
        shared = [rng.standard_normal((n, width)) for width in widths]
        groups = [(first, rows, base, True) for (first, rows, _), base in zip(groups, shared)]
    Vt, M = rng.standard_normal((p, r)), rng.standard_normal((n, r))
    start = rng.standard_normal((n, r))
    results = []
    for avx512 in (True, False):
        assert group_loops(avx512) == avx512
        out, grad = start.copy(), np.zeros((p, r))
        groups_matmul(groups, Vt, out)
        groups_rmatmul(groups, M, grad)
        results.append((out, grad))
    assert np.array_equal(results[0][0], results[1][0])
    assert np.array_equal(results[0][1], results[1][1])


@pytest.mark.parametrize("n, widths, rows_per_group", [
    (0, [3], [0]), (1, [1], [1]), (5, [1, 4, 2], [5, 0, 3]),
    (600, [51, 7, 51], [255, 256, 257]), (2000, [51, 51, 2], [513, 1999, 1000]),
])
@pytest.mark.parametrize("r", [1, 10])
def test_indexed_group_products_match_twins_and_the_copied_groups(n, widths,
                                                                   rows_per_group, r):
    """Groups that share one matrix (values[rows]) give the products of copied rows."""
    rng = np.random.default_rng(n + r)
    groups, p = _groups(n, widths, rows_per_group, rng)
    shared = [rng.standard_normal((n, width)) for width in widths]
    indexed = [(first, rows, base, True) for (first, rows, _), base in zip(groups, shared)]
    copied = [(first, rows, np.ascontiguousarray(base[rows]))
              for (first, rows, _), base in zip(groups, shared)]
    for cut in (p, p - widths[-1]):  # chunks of 256 rows: 255, 256, 257, 513 rows
        for kernel, twin, arg_rows, out_rows in ((groups_matmul, groups_matmul_numpy, cut, n),
                                                 (groups_rmatmul, groups_rmatmul_numpy, n, cut)):
            arg = rng.standard_normal((arg_rows, r))
            start = rng.standard_normal((out_rows, r))
            results = []
            for these, product in ((indexed, kernel), (indexed, twin), (copied, kernel)):
                out = start.copy()
                product(these, arg, out)
                results.append(out)
            for other in results[1:]:
                np.testing.assert_allclose(results[0], other, rtol=1e-12, atol=1e-12)


def _read_only(array):
    array.flags.writeable = False
    return array


def _store_pair(n, rows, values, n_threads=1, row_block=700, dense_first=True):
    """Two stores with a dense column then one group: put_rows and put of its block."""
    rng = np.random.default_rng(3)
    dense = rng.standard_normal((n, 1))
    stores = []
    for by_rows in (True, False):
        store = SelectedColumns(n, 8, n_threads=n_threads, row_block=row_block)
        if dense_first:
            store.put(dense, 0, center=True)
        start = store.n_columns
        if by_rows:
            store.put_rows(rows, values, start, center=True)
        else:
            block = np.zeros_like(values)
            block[rows] = values[rows]
            store.put(block, start, center=True)
        stores.append(store)
    return stores


@pytest.mark.parametrize("n_inside", [0, 1, 699, 1000, 1500])
def test_store_put_rows_equals_put_of_the_block(n_inside):
    """A group given as rows of a shared matrix: the same columns, products and pass."""
    rng = np.random.default_rng(n_inside)
    n, k = 3000, 4
    values = _read_only(rng.standard_normal((n, 6)))
    rows = np.sort(rng.choice(n, size=n_inside, replace=False))
    by_rows, by_block = _store_pair(n, rows, values)
    assert by_rows.n_groups == by_block.n_groups == 1
    # the groups read the shared matrix: no copy of its rows
    assert all(np.shares_memory(b.groups[0][2], values) for b in by_rows._blocks)
    np.testing.assert_array_equal(by_rows.shift, by_block.shift)
    np.testing.assert_array_equal(by_rows.scale, by_block.scale)
    for j in range(by_rows.n_columns):
        np.testing.assert_array_equal(by_rows.column(j), by_block.column(j))
    p = by_rows.n_columns
    Vt, M = rng.standard_normal((p, k)), rng.standard_normal((n, k))
    np.testing.assert_allclose(by_rows.matmul(Vt, np.empty((n, k))),
                               by_block.matmul(Vt, np.empty((n, k))), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(by_rows.rmatmul(M, p), by_block.rmatmul(M, p),
                               rtol=1e-12, atol=1e-12)
    y = rng.integers(0, k, n).astype(np.intp)
    out = []
    for store in (by_rows, by_block):
        scores, residual = np.empty((n, k)), np.empty((n, k))
        out.append(store.value_grad(Vt, np.zeros(k), MulticlassLogisticLoss(), y, None,
                                    scores, residual))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_store_put_rows_stores_wide_groups_and_single_columns_as_put_does():
    """Over half of the samples, or one column: dense and centred, as ``put`` stores them."""
    rng = np.random.default_rng(0)
    n = 400
    for rows, width in ((np.arange(0, n, 2), 3), (np.arange(201), 3),  # half: a group
                        (np.arange(10), 1)):
        values = _read_only(rng.standard_normal((n, width)))
        by_rows, by_block = _store_pair(n, rows, values)
        assert by_rows.n_groups == by_block.n_groups
        np.testing.assert_array_equal(by_rows.shift, by_block.shift)
        for j in range(by_rows.n_columns):
            np.testing.assert_array_equal(by_rows.column(j), by_block.column(j))
    assert by_rows.n_groups == 0


def test_store_put_rows_results_do_not_depend_on_threads():
    rng = np.random.default_rng(0)
    n, k = 3000, 3
    values = _read_only(rng.standard_normal((n, 5)))
    results = []
    for n_threads in (1, 2):
        store = SelectedColumns(n, 20, n_threads=n_threads, row_block=700)
        for first in range(0, 20, 5):
            rows = np.sort(np.random.default_rng(first).choice(n, size=900, replace=False))
            store.put_rows(rows, values, first)
        Vt, M = np.ones((20, k)), np.random.default_rng(1).standard_normal((n, k))
        results.append((store.matmul(Vt, np.empty((n, k))), store.rmatmul(M, 20)))
    for a, b in zip(*results):
        assert np.array_equal(a, b)


def _writeable_base_view():
    view = np.ones((10, 3)).view()
    view.flags.writeable = False  # read-only, but its base is not
    return view


@pytest.mark.parametrize("rows, values, error, match", [
    (np.array([3, 1]), None, ValueError, "increasing"),
    (np.array([1, 1]), None, ValueError, "increasing"),
    (np.array([-1, 2]), None, ValueError, "increasing sample indices"),
    (np.array([2, 10]), None, ValueError, r"in \[0, 10\)"),
    (np.array([0.0, 1.0]), None, TypeError, "integers"),
    (np.array([True, False]), None, TypeError, "integers"),
    (np.array([[0, 1]]), None, ValueError, "1-D"),
    (np.array([0]), np.ones((10, 3), np.float32), TypeError, "float64"),
    (np.array([0]), np.ones((3, 10)).T, TypeError, "C-contiguous"),
    (np.array([0]), np.ones(10), TypeError, "2-D"),
    (np.array([0]), np.ones((10, 3)), ValueError, "read-only"),
    (np.array([0]), _writeable_base_view(), ValueError, "read-only"),
    (np.array([0]), _read_only(np.ones((9, 3))), ValueError, "n_samples"),
    (np.array([0]), _read_only(np.full((10, 3), np.nan)), ValueError, "NaN"),
    (np.array([0]), _read_only(np.full((10, 3), np.inf)), ValueError, "infinity"),
])
def test_store_put_rows_refuses_bad_input(rows, values, error, match):
    store = SelectedColumns(10, 4)
    store.put(np.ones((10, 1)), 0)
    values = _read_only(np.ones((10, 3))) if values is None else values
    with pytest.raises(error, match=match):
        store.put_rows(rows, values, 1)
    assert store.n_columns == 1 and store.n_groups == 0  # nothing half-stored
    store.put_rows([], _read_only(np.ones((10, 3))), 1)  # an empty group: [] is float
    assert store.n_columns == 4 and store.n_groups == 1


@pytest.mark.parametrize("start, weights, rows, error, match", [
    (1.5, None, np.arange(3), TypeError, "start must be an integer"),
    (np.float64(2.0), None, np.arange(3), TypeError, "start must be an integer"),
    (True, None, np.arange(3), TypeError, "start must be an integer"),
    (2, np.ones(9), np.arange(3), ValueError, r"shape \(10,\)"),
    (2, np.ones(9), np.arange(8), ValueError, r"shape \(10,\)"),  # the dense route
    (2, np.zeros(10), np.arange(8), ValueError, "positive sum"),
    (2, np.full(10, np.nan), np.arange(3), ValueError, "finite"),
    (2, -np.ones(10), np.arange(8), ValueError, "non-negative"),
    (2, "garbage", np.arange(3), TypeError, "sample_weight must hold real numbers"),
])
def test_refused_puts_leave_the_store_as_it_was(start, weights, rows, error, match):
    """Every check runs before the store changes: a refused put drops no column."""
    store = SelectedColumns(10, 8, row_block=4)
    store.put(np.arange(20.0).reshape(10, 2), 0, center=True)
    store.put_rows(np.arange(4), _read_only(np.ones((10, 3))), 2)
    before = (store.n_columns, store.n_groups, store.shift.copy(), store.scale.copy())
    values = _read_only(np.arange(30.0).reshape(10, 3).copy())
    block = np.zeros((10, 3))
    block[rows] = values[rows]
    for put in (lambda: store.put_rows(rows, values, start, center=True, sample_weight=weights),
                lambda: store.put(block, start, center=True, sample_weight=weights)):
        with pytest.raises(error, match=match):
            put()
        assert (store.n_columns, store.n_groups) == before[:2]
        np.testing.assert_array_equal(store.shift, before[2])
        np.testing.assert_array_equal(store.scale, before[3])


def test_group_products_hold_temporary_buffers_and_count_repeated_rows():
    """A group whose items are temporaries is read while alive; a repeated row adds twice."""
    big = 1 << 16

    class Temporary:  # new arrays at each indexing: only the kernel holds them
        def __iter__(self):
            return iter((0, np.zeros(big, np.intp), np.ones((big, 1))))

    out = np.zeros((1, 1))
    groups_matmul([Temporary()], np.ones((1, 1)), out)
    assert out[0, 0] == big
    out = np.zeros((1, 1))
    groups_rmatmul([Temporary()], np.ones((1, 1)), out)
    assert out[0, 0] == big
    groups = [(0, np.array([1, 1, 3], dtype=np.intp), np.arange(6.0).reshape(3, 2))]
    Vt = np.array([[1.0, 2.0], [3.0, 4.0]])
    out, ref = np.zeros((4, 2)), np.zeros((4, 2))
    groups_matmul(groups, Vt, out)
    groups_matmul_numpy(groups, Vt, ref)
    np.testing.assert_allclose(out, ref)
    np.testing.assert_allclose(out[1], [3.0 + 11.0, 4.0 + 16.0])  # both occurrences
    # a row repeated inside one block of four rows and across blocks, 13 scores
    rng = np.random.default_rng(7)
    rows = np.array([2, 2, 2, 0, 2, 1, 1, 2, 0], dtype=np.intp)
    for indexed in (False, True):
        values = rng.standard_normal((9 if not indexed else 3, 5))
        groups = [(0, rows, values, indexed)]
        Vt, M = rng.standard_normal((5, 13)), rng.standard_normal((3, 13))
        out, ref = np.zeros((3, 13)), np.zeros((3, 13))
        groups_matmul(groups, Vt, out)
        groups_matmul_numpy(groups, Vt, ref)
        np.testing.assert_allclose(out, ref, rtol=1e-13)
        out, ref = np.zeros((5, 13)), np.zeros((5, 13))
        groups_rmatmul(groups, M, out)
        groups_rmatmul_numpy(groups, M, ref)
        np.testing.assert_allclose(out, ref, rtol=1e-13)


def test_group_products_release_the_gil_and_thread_deterministically():
    """The store's row blocks on two threads give the one-thread result, bit for bit."""
    rng = np.random.default_rng(0)
    n, k = 3000, 4
    results = []
    for n_threads in (1, 2):
        store = SelectedColumns(n, 40, n_threads=n_threads, row_block=700)
        for first in range(0, 40, 8):
            block = np.zeros((n, 8))
            rows = rng.choice(n, size=300, replace=False)
            block[rows] = rng.standard_normal((300, 8))
            store.put(block, first)
        Vt = np.random.default_rng(1).standard_normal((40, k))
        M = np.random.default_rng(2).standard_normal((n, k))
        results.append((store.matmul(Vt, np.empty((n, k))), store.rmatmul(M, 40)))
        rng = np.random.default_rng(0)
    assert store.n_groups == 5
    for a, b in zip(*results):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("call, error, match", [
    (lambda g, V, o: groups_matmul([(0, np.array([0, 9]), np.ones((2, 2)))], V, o),
     ValueError, "row 9 outside"),
    (lambda g, V, o: groups_matmul([(0, np.array([-1]), np.ones((1, 2)))], V, o),
     ValueError, "row -1 outside"),
    (lambda g, V, o: groups_matmul([(2, np.array([0]), np.ones((1, 2)))], V, o),
     ValueError, "does not fit the first p=3"),
    (lambda g, V, o: groups_matmul([(0, np.array([0, 1]), np.ones((1, 2)))], V, o),
     ValueError, "has 2 rows but values of shape"),
    (lambda g, V, o: groups_matmul(g, V, np.empty((5, 3))), ValueError, "columns"),
    (lambda g, V, o: groups_rmatmul(g, np.ones((5, 3)), np.empty((3, 2))),
     ValueError, "columns"),
    (lambda g, V, o: groups_rmatmul([(0, np.array([7]), np.ones((1, 2)))], np.ones((5, 2)),
                                    np.empty((3, 2))), ValueError, "row 7 outside"),
    (lambda g, V, o: groups_matmul([(0, np.array([0]), np.ones((1, 2), np.float32))], V, o),
     ValueError, "dtype"),
    (lambda g, V, o: groups_matmul([(0, np.array([0], np.int32), np.ones((1, 2)))], V, o),
     ValueError, "dtype"),
    (lambda g, V, o: groups_matmul(None, V, o), TypeError, "groups"),
    (lambda g, V, o: groups_matmul([(1,)], V, o), ValueError, "group 0 must be a"),
    (lambda g, V, o: groups_matmul([()], V, o), ValueError, "group 0 must be a"),
    (lambda g, V, o: groups_rmatmul([(1, np.array([0]))], np.ones((5, 2)), np.empty((3, 2))),
     ValueError, "group 0 must be a"),
    (lambda g, V, o: groups_matmul(g + [(0, 1, 2, 3)], V, o), ValueError, "group 1 must be"),
    (lambda g, V, o: groups_matmul([(True, np.array([0]), np.ones((1, 2)))], V, o),
     TypeError, "first must be an integer"),
    (lambda g, V, o: groups_matmul([(2**63, np.array([0]), np.ones((1, 2)))], V, o),
     ValueError, "outside"),
    (lambda g, V, o: groups_matmul([(0, [0], np.ones((1, 2)))], V, o),
     ValueError, "group 0: rows must be a 1-D intp array"),
    (lambda g, V, o: groups_matmul([(0, np.array([0]), np.ones((2, 1, 1)))], V, o),
     ValueError, "group 0: rows must be"),
    (lambda g, V, o: groups_matmul([(0, np.array([0, 4]), np.ones((4, 2)), True)], V, o),
     ValueError, "indexed but has row 4 outside its 4 rows"),
    (lambda g, V, o: groups_rmatmul([(0, np.array([3]), np.ones((2, 2)), True)],
                                    np.ones((5, 2)), np.empty((3, 2))),
     ValueError, "indexed but has row 3"),
    (lambda g, V, o: groups_matmul([(0, np.array([0]), np.ones((1, 2)), 1)], V, o),
     ValueError, "indexed: bool"),
    (lambda g, V, o: groups_matmul([(0, np.array([0]), np.ones((1, 2)), True, 0)], V, o),
     ValueError, "group 0 must be a"),
    (lambda g, V, o: groups_rmatmul([(0, None, np.ones((1, 2)), True)], np.ones((5, 2)),
                                    np.empty((3, 2))), ValueError, "got None"),
    (lambda g, V, o: groups_matmul([(0, np.array([0]), None, True)], V, o),
     ValueError, "got None"),
    (lambda g, V, o: groups_matmul(g, o[:3], o), ValueError, "overlap"),
    (lambda g, V, o: groups_rmatmul(g, o, o[:3]), ValueError, "overlap"),
    # the kernels read a group's values and rows while they write out
    (lambda g, V, o: groups_matmul([(0, np.array([1, 0]), o[:2])], V, o), ValueError,
     "group 0's values and out overlap"),
    (lambda g, V, o: groups_matmul(g + [(0, np.array([0]), o, True)], V, o), ValueError,
     "group 1's values and out overlap"),
    (lambda g, V, o: groups_rmatmul(g + [(0, np.array([0]), V[:, :2], True)],
                                    np.ones((5, 2)), V[:, :2]), ValueError,
     "group 1's values and out overlap"),
    (lambda g, V, o: groups_matmul([(0, o.view(np.intp)[0, :1], np.ones((1, 2)))], V, o),
     ValueError, "group 0's rows and out overlap"),
])
def test_group_products_refuse_bad_groups(call, error, match):
    groups = [(0, np.array([0, 4], dtype=np.intp), np.ones((2, 2)))]
    with pytest.raises(error, match=match):
        call(groups, np.ones((3, 2)), np.zeros((5, 2)))


def test_group_rows_are_checked_after_the_groups_python_code_ran():
    """A group that changes another group's rows while it is unpacked cannot sneak them by."""
    rows = np.array([0, 1, 2], dtype=np.intp)

    class Sneaky:
        def __iter__(self):
            rows[0] = 6
            return iter((0, np.zeros(0, np.intp), np.zeros((0, 2))))

    guarded = np.zeros((9, 3))
    with pytest.raises(ValueError, match="group 0 has row 6 outside"):
        groups_matmul([(0, rows, np.ones((3, 2))), Sneaky()], np.ones((2, 3)), guarded[2:7])
    assert not guarded.any()


def test_cython_entries_refuse_inconsistent_shapes():
    X = np.asfortranarray(np.ones((5, 3)))
    with pytest.raises(ValueError, match="outside"):
        dense_matmul(X, None, 4, np.ones((4, 2)), np.empty((5, 2)))
    with pytest.raises(ValueError, match="inconsistent"):
        dense_matmul(X, None, 2, np.ones((3, 2)), np.empty((5, 2)))
    with pytest.raises(ValueError, match="inconsistent"):
        dense_rmatmul(X, None, 2, np.ones((4, 2)), np.empty((2, 2)))
    with pytest.raises(ValueError, match="shift"):
        dense_rmatmul(X, np.zeros(1), 2, np.ones((5, 2)), np.empty((2, 2)))
    y = np.zeros(5, dtype=np.intp)
    args = (np.ones(2), y, None, 1.0, False, np.empty((5, 2)), np.empty((5, 2)),
            np.empty((2, 2)), np.empty(2))
    with pytest.raises(ValueError, match="inconsistent"):
        dense_value_grad(X, None, 2, np.ones((2, 3)), *args)
    with pytest.raises(ValueError, match="outside"):
        dense_value_grad(X, None, 2, np.ones((2, 2)), np.ones(2), np.full(5, 7, np.intp),
                         *args[2:])
    with pytest.raises(ValueError, match="inconsistent"):
        hessian_rows(np.ones((5, 2)), None, np.ones((5, 1)), np.empty((5, 2)))
    with pytest.raises(TypeError):
        dense_matmul(None, None, 0, np.ones((0, 2)), np.empty((5, 2)))


# --- the losses -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 255, 256, 257, 600])
def test_loss_rows_match_twin_and_definition(dtype, n):
    rng = np.random.default_rng(n)
    for binary, k in ((False, 5), (True, 1)):
        scores = (4 * rng.standard_normal((n, k))).astype(dtype)
        y = rng.integers(0, 2 if binary else k, n).astype(np.intp)
        grad, loss = np.empty_like(scores), np.empty(n)
        total = loss_rows(scores, y, grad, loss, 1.0, binary)
        loss_ref, grad_ref = loss_rows_numpy(scores, y, 1.0, binary)
        rtol = 1e-12 if dtype == np.float64 else 1e-6
        np.testing.assert_allclose(loss, loss_ref, rtol=rtol, atol=1e-300)
        np.testing.assert_allclose(grad, grad_ref, rtol=rtol, atol=1e-7)
        np.testing.assert_allclose(total, loss.sum(), rtol=1e-12)
        s = scores.astype(np.float64)
        if binary:
            definition = np.logaddexp(0.0, s[:, 0]) - y * s[:, 0]
        else:
            z = s - s[np.arange(n), y][:, None] + 1.0
            z[np.arange(n), y] = 0.0
            definition = logsumexp(z, axis=1) if n else np.zeros(0)
        # logsumexp's log(1 + tiny) is itself only precise to eps absolute
        np.testing.assert_allclose(loss, definition, rtol=rtol, atol=4 * np.finfo(float).eps)


def test_binary_loss_is_the_two_class_soft_max_without_margin():
    rng = np.random.default_rng(0)
    s = 3 * rng.standard_normal(40)
    y = rng.integers(0, 2, 40)
    binary, grad_b = BinaryLogisticLoss().loss_gradient(s[:, None], y)
    two = np.column_stack([np.zeros(40), s])
    soft, grad_s = MulticlassLogisticLoss(margin=0.0).loss_gradient(two, y)
    np.testing.assert_allclose(binary, soft, rtol=1e-13)
    np.testing.assert_allclose(grad_b[:, 0], grad_s[:, 1], rtol=1e-12, atol=1e-16)
    assert BinaryLogisticLoss().n_scores(2) == 1
    # boolean targets are the 0/1 labels
    as_bool = BinaryLogisticLoss().loss_gradient(s[:, None], y.astype(bool))
    np.testing.assert_array_equal(as_bool[0], binary)
    np.testing.assert_array_equal(as_bool[1], grad_b)
    with pytest.raises(ValueError, match="needs 2 classes"):
        BinaryLogisticLoss().n_scores(3)


@pytest.mark.parametrize("loss", [MulticlassLogisticLoss(), MulticlassLogisticLoss(0.5),
                                  BinaryLogisticLoss()])
def test_loss_hessian_product_is_the_derivative_of_the_gradient(loss):
    rng = np.random.default_rng(1)
    k = 1 if loss.binary else 4
    S = rng.standard_normal((30, k))
    y = rng.integers(0, 2 if loss.binary else k, 30).astype(np.intp)
    w = rng.uniform(0.5, 2, 30)
    U = rng.standard_normal((30, k))
    R = np.empty_like(S)
    loss.sum_gradient(S, y, w, R)
    HU = loss.hessian_product(loss.proba(R, y, w), w, U)
    out, w0 = np.full_like(R, np.nan), w.copy()
    w0[3] = 0.0  # a row of weight zero: e_y, written into out as well
    assert loss.proba(R, y, w0, out=out) is out
    np.testing.assert_array_equal(out, loss.proba(R, y, w0))
    eps = 1e-6
    Rp, Rm = np.empty_like(S), np.empty_like(S)
    loss.sum_gradient(S + eps * U, y, w, Rp)
    loss.sum_gradient(S - eps * U, y, w, Rm)
    np.testing.assert_allclose(HU, (Rp - Rm) / (2 * eps), atol=1e-8)


@pytest.mark.parametrize("make, error, match", [
    (lambda: MulticlassLogisticLoss(margin=-1.0), ValueError, "margin"),
    (lambda: MulticlassLogisticLoss(margin=np.nan), ValueError, "margin"),
    (lambda: MulticlassLogisticLoss(margin="1"), TypeError, "margin"),
    (lambda: BinaryLogisticLoss().loss_gradient(np.zeros((3, 2)), [0, 1, 0]), ValueError,
     "one score per row"),
    (lambda: BinaryLogisticLoss().loss_gradient(np.zeros((2, 1)), [0, 2]), ValueError,
     r"\[0, 2\)"),
    (lambda: BinaryLogisticLoss().loss_gradient(np.array([[np.nan]]), [0]), ValueError,
     "NaN"),
    (lambda: Frobenius(-1.0), ValueError, "alpha"),
    (lambda: Frobenius(np.inf), ValueError, "alpha"),
    (lambda: SmoothedLinfOne(1.0, beta=0.5), ValueError, "beta"),
    (lambda: SmoothedLinfOne("a"), TypeError, "alpha"),
    (lambda: MixedNorm("l2"), ValueError, "penalty must be one of"),
    (lambda: MixedNorm("l1/l2", -1.0), ValueError, "lam"),
    (lambda: make_penalty("l1", 1.0), ValueError, "penalty must be one of"),
])
def test_loss_and_penalty_bad_input(make, error, match):
    with pytest.raises(error, match=match):
        make()


@pytest.mark.parametrize("penalty", [Frobenius(0.3), SmoothedLinfOne(0.3, 4.0)])
def test_penalty_gradient_and_column_hessian(penalty):
    rng = np.random.default_rng(2)
    W = rng.standard_normal((4, 3))
    f = lambda w: penalty.value_gradient(w.reshape(4, 3))[0]  # noqa: E731
    g = lambda w: penalty.value_gradient(w.reshape(4, 3))[1].ravel()  # noqa: E731
    assert check_grad(f, g, W.ravel()) < 1e-6
    _, _, H = penalty.column_terms(W.T)
    for j in range(3):
        num = approx_fprime(W[:, j], lambda u: penalty.column_terms(u[None])[1][0], 1e-7)
        np.testing.assert_allclose(H[j], num, atol=1e-5)
    assert H.flags.writeable  # callers may add to it in place


# --- the column store ------------------------------------------------------------

def test_store_keeps_exact_float32_values_and_upgrades_when_needed():
    rng = np.random.default_rng(4)
    n = 2**21 // 4 + 1  # large enough for float32 storage
    store = SelectedColumns(n, 4)
    assert store.dtype == np.float32
    stump = (rng.random((n, 1)) < 0.3).astype(float)
    store.put(stump, 0, center=True)
    assert store.dtype == np.float32
    np.testing.assert_array_equal(store.column(0), stump[:, 0] - stump.mean())
    other = rng.standard_normal((n, 1))  # not float32 numbers
    store.put(other, 1, center=True)
    assert store.dtype == np.float64
    X = np.hstack([stump - stump.mean(), other - other.mean()])
    W = rng.standard_normal((2, 3))
    np.testing.assert_allclose(store.matmul(W, np.empty((n, 3))), X @ W, rtol=1e-12,
                               atol=1e-12)


def test_store_results_do_not_depend_on_threads():
    rng = np.random.default_rng(5)
    n = 5000
    stores = [SelectedColumns(n, 3, n_threads=t, row_block=700) for t in (1, 2)]
    dense = rng.standard_normal((n, 3))
    group = rng.standard_normal((n, 4)) * (rng.random((n, 1)) < 0.3)
    for store in stores:
        store.put(dense, 0, center=True)
        store.put(group, 3)
    y = rng.integers(0, 5, n)
    objectives = [LinearObjective(s, y, n_classes=5, penalty=Frobenius(0.1)) for s in stores]
    params = rng.standard_normal(objectives[0].n_params(7))
    one, two = (o.value_grad(params, 7) for o in objectives)
    assert one[0] == two[0]  # the same sums in the same order
    np.testing.assert_array_equal(one[1], two[1])


@pytest.mark.parametrize("block, start, error, match", [
    (np.ones((4, 1)), 0, ValueError, r"shape \(n_samples, width\)"),
    (np.ones(5), 0, ValueError, r"shape \(n_samples, width\)"),
    (np.ones((5, 1)), 3, ValueError, "outside"),
])
def test_store_put_bad_input(block, start, error, match):
    with pytest.raises(error, match=match):
        SelectedColumns(5, 2).put(block, start)


def test_sparse_columns_match_dense():
    import scipy.sparse as sp

    rng = np.random.default_rng(6)
    X = rng.standard_normal((40, 5)) * (rng.random((40, 5)) < 0.4)
    mu = X.mean(axis=0)
    y = rng.integers(0, 3, 40)
    sparse = LinearObjective(SparseColumns(sp.csc_matrix(X), mu), y, n_classes=3)
    dense = LinearObjective(X - mu, y, n_classes=3)
    params = rng.standard_normal(sparse.n_params(5))
    for a, b in zip(sparse.value_grad(params, 5), dense.value_grad(params, 5)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# --- the objective --------------------------------------------------------------

def _objective(loss=None, penalty=Frobenius(0.2), fit_intercept=True, seed=7, weights=True):
    rng = np.random.default_rng(seed)
    n, k = 80, 1 if isinstance(loss, BinaryLogisticLoss) else 4
    store = SelectedColumns(n, 2, row_block=30)
    store.put(rng.standard_normal((n, 3)), 0, center=fit_intercept)
    store.put(rng.standard_normal((n, 2)) * (rng.random((n, 1)) < 0.3), 3)  # row-sparse
    y = rng.integers(0, 2 if k == 1 else k, n)
    w = rng.uniform(0.2, 2, n) if weights else None
    return LinearObjective(store, y, w, n_classes=2 if k == 1 else k, loss=loss,
                           penalty=penalty, fit_intercept=fit_intercept), rng


CASES = [dict(), dict(penalty=SmoothedLinfOne(0.3, 5.0)), dict(penalty=None),
         dict(fit_intercept=False), dict(weights=False),
         dict(loss=BinaryLogisticLoss(), penalty=Frobenius(0.1))]


@pytest.mark.parametrize("case", CASES)
def test_gradient_hessian_product_and_hessian_columns(case):
    obj, rng = _objective(**case)
    x = rng.standard_normal(obj.n_params(5))
    f = lambda z: obj.value_grad(z, 5)[0]  # noqa: E731
    g = lambda z: obj.value_grad(z, 5)[1]  # noqa: E731
    assert check_grad(f, g, x) < 1e-6
    obj.value_grad(x, 5)
    v = rng.standard_normal(x.size)
    hv = obj.hessian_product(v, 5)
    fd = (g(x + 1e-6 * v) - g(x - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(hv, fd, atol=1e-7)
    obj.value_grad(x, 5)
    full = np.column_stack([obj.hessian_product(e, 5) for e in np.eye(x.size)])
    np.testing.assert_allclose(obj.hessian_columns(0, 5, intercept=True), full, atol=1e-14)
    nb = obj.n_intercept
    np.testing.assert_allclose(obj.hessian_columns(3, 5), full[:, nb + 3 * obj.n_scores:],
                               atol=1e-14)


@pytest.mark.parametrize("case", CASES)
def test_grow_equals_a_new_evaluation(case):
    obj, rng = _objective(**case)
    x = rng.standard_normal(obj.n_params(3))
    _, g3 = obj.value_grad(x, 3)
    grown = obj.grow(g3, 3, 5)
    padded = np.concatenate([x, np.zeros(2 * obj.n_scores)])
    np.testing.assert_allclose(grown, obj.value_grad(padded, 5)[1], rtol=1e-12, atol=1e-15)


def test_flat_directions_change_nothing():
    obj, rng = _objective(penalty=None)
    x = rng.standard_normal(obj.n_params(5))
    d = rng.standard_normal(x.size)
    flat = d - obj.flat_free(d.copy())
    f0 = obj.value_grad(x, 5)[0]
    np.testing.assert_allclose(obj.value_grad(x + 3.0 * flat, 5)[0], f0, rtol=1e-13)
    assert np.abs(flat).max() > 0.1  # something was removed
    binary, _ = _objective(loss=BinaryLogisticLoss())
    np.testing.assert_array_equal(binary.flat_free(d[:binary.n_params(5)].copy()),
                                  d[:binary.n_params(5)])


def test_score_change_and_its_bound():
    obj, rng = _objective()
    d = rng.standard_normal(obj.n_params(5))
    exact = obj.score_change(d, 5)
    assert exact <= obj.score_change_bound(d, 5) * (1 + 1e-12)
    x = rng.standard_normal(d.size)
    obj.value_grad(x, 5)
    before = obj.scores.copy()
    obj.value_grad(x + d, 5)
    np.testing.assert_allclose(exact, np.abs(obj.scores - before).max(), rtol=1e-12)


def test_objective_bad_input():
    X = np.ones((5, 2))
    with pytest.raises(TypeError, match="integer labels"):
        LinearObjective(X, np.linspace(0, 1, 5), n_classes=2)
    with pytest.raises(ValueError, match=r"shape \(5,\)"):
        LinearObjective(X, np.zeros(4, dtype=int), n_classes=2)
    with pytest.raises(ValueError, match=r"labels in \[0, 3\)"):
        LinearObjective(X, np.array([0, 1, 2, 3, 0]), n_classes=3)
    with pytest.raises(ValueError, match=r"labels in \[0, 2\)"):
        LinearObjective(X, np.array([0, 1, 2, 1, 0]), n_classes=2, loss=BinaryLogisticLoss())
    with pytest.raises(ValueError, match="n_classes"):
        LinearObjective(X, np.zeros(5, dtype=int), n_classes=1)
    with pytest.raises(TypeError, match="n_classes"):
        LinearObjective(X, np.zeros(5, dtype=int), n_classes=2.0)
    obj = LinearObjective(X, np.array([0, 1, 0, 1, 0]), n_classes=2)
    with pytest.raises(ValueError, match=r"params must have shape \(6,\)"):
        obj.value_grad(np.zeros(5), 2)
    with pytest.raises(ValueError, match="outside"):
        obj.value_grad(np.zeros(8), 3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: Frobenius(0.1).value_gradient(np.array([[np.nan]])), ValueError, "NaN"),
    (lambda: Frobenius(0.1).value_gradient(np.ones(3)), ValueError, "2-D"),
    (lambda: SmoothedLinfOne(0.1).column_terms(np.array([["a"]])), TypeError, "real numbers"),
    (lambda: SmoothedLinfOne(0.1).value_gradient(np.ones((2, 2), dtype=bool)), TypeError,
     "real numbers"),
    (lambda: MixedNorm("l1/l2", 1.0).prox(np.ones((2, 2)), -1.0), ValueError, "step"),
    (lambda: MixedNorm("l1/linf", 1.0).prox(np.full((2, 2), np.inf), 1.0), ValueError, "NaN"),
    (lambda: MixedNorm("l1/l2", 1.0).kkt_violation(np.ones((2, 2)), np.ones((2, 3))),
     ValueError, "same shape"),
    (lambda: MixedNorm("l1/l2", 0.0).kkt_violation(np.ones((2, 2)), np.ones((2, 2))),
     ValueError, "positive"),
    (lambda: SelectedColumns(3, 1).put(np.array([[1.0], [np.nan], [0.0]]), 0), ValueError,
     "NaN"),
    (lambda: SelectedColumns(3, 1).put(np.ones((3, 1), dtype=bool), 0), TypeError,
     "real numbers"),
    (lambda: LinearObjective(np.ones((3, 1)), [0, 1, 0], -np.ones(3), n_classes=2),
     ValueError, "non-negative"),
    (lambda: LinearObjective(np.ones((3, 1)), [0, 1, 0], np.ones(2), n_classes=2),
     ValueError, "sample_weight must have shape"),
    (lambda: LinearObjective(np.array([[np.inf], [0], [1]]), [0, 1, 0], n_classes=2),
     ValueError, "NaN or infinity"),
])
def test_new_objects_refuse_bad_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def _small_objective(penalty=None, **kw):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 4))
    y = rng.integers(0, 3, 40)
    return X, y, LinearObjective(X, y, n_classes=3, penalty=penalty, **kw)


@pytest.mark.parametrize("call, error, match", [
    # wrong types for the loss, the penalty and the flags
    (lambda: LinearObjective(np.ones((3, 1)), [0, 1, 0], n_classes=2, loss="logistic"),
     TypeError, "loss must be"),
    (lambda: LinearObjective(np.ones((3, 1)), [0, 1, 0], n_classes=2,
                             penalty=MixedNorm("l1/l2", 1.0)), TypeError, "smooth penalty"),
    (lambda: LinearObjective(np.ones((3, 1)), [0, 1, 0], n_classes=2, fit_intercept="no"),
     TypeError, "fit_intercept"),
    # columns given as an array: checked before they are converted
    (lambda: LinearObjective(np.ones((0, 2)), np.zeros(0, int), n_classes=3), ValueError,
     "no rows"),
    (lambda: LinearObjective(np.ones(6), [0, 1, 2, 0, 1, 2], n_classes=3), ValueError,
     r"shape \(n_samples, width\)"),
    (lambda: LinearObjective(np.ones((3, 1), dtype=complex), [0, 1, 0], n_classes=2),
     TypeError, "real numbers"),
    (lambda: LinearObjective(np.ones((3, 1), dtype=object), [0, 1, 0], n_classes=2),
     TypeError, "real numbers"),
    (lambda: SelectedColumns.from_dense(__import__("scipy.sparse").sparse.eye(3)),
     TypeError, "SparseColumns"),
    # packing
    (lambda: _small_objective()[2].pack(np.ones((2, 3)), np.zeros(3)), ValueError,
     r"W must have shape \(3, p\)"),
    (lambda: _small_objective()[2].pack(np.ones((3, 4)), np.zeros(2)), ValueError,
     r"b must have shape \(3,\)"),
    (lambda: _small_objective()[2].value_grad(np.zeros(15, dtype=complex), 4), TypeError,
     "real numbers"),
    (lambda: _small_objective()[2].loss_value(np.ones((3, 5)), np.zeros(3)), ValueError,
     "p <= 4"),
    # curvature needs an evaluated point on the same columns
    (lambda: _small_objective(Frobenius(1.0))[2].hessian_product(np.zeros(15), 4),
     ValueError, "not been evaluated"),
    (lambda: _small_objective(Frobenius(1.0))[2].hessian_columns(0, 4), ValueError,
     "not been evaluated"),
    # the store's indices
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).column(3), ValueError, "outside"),
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).column(-1), ValueError, ">= 0"),
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).column(1.5), TypeError, "integer"),
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).rmatmul(np.ones((4, 2)), 5),
     ValueError, "outside"),
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).rmatmul(np.ones((4, 2)), -1),
     ValueError, "outside"),
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).rmatmul(np.ones((3, 2)), 2),
     ValueError, r"M must have shape \(4, r\)"),
    (lambda: SelectedColumns.from_dense(np.ones((4, 3))).matmul(np.ones((4, 2)),
                                                                np.empty((4, 2))),
     ValueError, "outside"),
    (lambda: SelectedColumns(4, 1, row_block=0), ValueError, "row_block"),
    (lambda: SelectedColumns(4, 1, n_threads=0), ValueError, "n_threads"),
    # the sparse design
    (lambda: SparseColumns(np.ones((3, 2)), None), TypeError, "sparse matrix"),
    (lambda: SparseColumns(__import__("scipy.sparse").sparse.csc_matrix(
        np.array([[np.nan, 1.0]])), None), ValueError, "NaN"),
    (lambda: SparseColumns(__import__("scipy.sparse").sparse.csc_matrix(np.ones((3, 2))),
                           np.zeros(3)), ValueError, "mu must hold 2"),
    # penalties on a W without score rows; string options
    (lambda: MixedNorm("l1/linf", 1.0).prox(np.ones((0, 3)), 1.0), ValueError,
     "at least one row"),
    (lambda: SmoothedLinfOne(1.0).value_gradient(np.ones((0, 3))), ValueError,
     "at least one row"),
    (lambda: make_penalty(np.array(["fro"]), 1.0), TypeError, "string"),
    (lambda: MixedNorm(np.array(["l1/l2"])), ValueError, "penalty must be one of"),
])
def test_new_objects_refuse_hostile_input(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_integer_and_float32_parameters_give_a_float64_gradient():
    _, _, obj = _small_objective(Frobenius(0.1))
    v64, g64 = obj.value_grad(np.zeros(15), 4)
    v, g = obj.value_grad(np.zeros(15, dtype=int), 4)
    assert g.dtype == np.float64 and v == v64
    np.testing.assert_array_equal(g, g64)
    h = obj.hessian_product(np.arange(15), 4)
    np.testing.assert_allclose(h, obj.hessian_product(np.arange(15.0), 4), rtol=0, atol=0)
    assert h.dtype == np.float64 and np.abs(h).max() > 0


def test_pack_without_intercept_values_means_zeros():
    _, _, obj = _small_objective()
    params = obj.pack(np.ones((3, 4)))
    assert params.shape == (15,) and np.isfinite(params).all()
    np.testing.assert_array_equal(params[:3], 0.0)


def test_l1_ball_projection_with_a_radius_below_an_ulp():
    from mcsparse.loss._penalties import l1_ball_projection

    # rounding made every test u_i > theta false: the projection left the ball
    np.testing.assert_array_equal(l1_ball_projection(np.array([[1e20], [1.0]]), 1.0),
                                  [[1.0], [0.0]])
    np.testing.assert_allclose(MixedNorm("l1/linf", 1e-17).prox(np.array([[3.0], [1.0]]),
                                                                 1.0), [[3.0], [1.0]])
    rng = np.random.default_rng(0)
    for _ in range(50):  # against the definition: the closest point of the ball
        v, r = rng.standard_normal(4), rng.uniform(0.05, 3.0)
        proj = l1_ball_projection(v[:, None], r)[:, 0]
        assert np.abs(proj).sum() <= r * (1 + 1e-12) or np.abs(v).sum() <= r
        for _ in range(20):  # no point of the ball is closer
            z = rng.standard_normal(4)
            z *= min(1.0, r / np.abs(z).sum())
            assert np.sum((v - proj) ** 2) <= np.sum((v - z) ** 2) + 1e-12


def test_sparse_columns_follow_the_first_p_columns_contract():
    import scipy.sparse as sps

    X, y, dense = _small_objective()
    mu = X.mean(axis=0)
    sparse = LinearObjective(SparseColumns(sps.csc_matrix(X), mu), y, n_classes=3)
    centred = LinearObjective(X - mu, y, n_classes=3)
    params = np.random.default_rng(1).standard_normal(9)
    for obj in (sparse, centred):
        obj.value_grad(params, 2)
    np.testing.assert_allclose(sparse.value_grad(params, 2)[1],
                               centred.value_grad(params, 2)[1], rtol=1e-12)
    np.testing.assert_allclose(sparse.hessian_columns(0, 2), centred.hessian_columns(0, 2),
                               rtol=1e-12, atol=1e-15)
