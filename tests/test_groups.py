"""Group selection (§3.2): grouped raw columns, the column store, the path."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import check_grad

import reference
from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import RawFeatures
from mcsparse.solvers import shareboost_path
from mcsparse.solvers._columns import SelectedColumns
from mcsparse.loss import Frobenius
from mcsparse.solvers._objective import LinearObjective

TIGHT = dict(tol=1e-10, max_iter=10000)


def _problem(n=150, d=9, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((k, d)) * (rng.random(d) < 0.6)
    y = np.argmax(X @ W.T + 1.5 * rng.standard_normal((n, k)), axis=1)
    return X, y


def _pendigits():
    X, y = load_pendigits(return_X_y=True)
    return X[:600] / 100, y[:600]


# --- grouped raw columns against the brute-force reference ------------------

@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_groups_match_reference(seed, fit_intercept):
    X, y = _problem(seed=seed)
    labels = np.array([2, 0, 1, 2, 0, 3, 1, 3, 3])  # widths 2, 2, 2, 3
    clf = ShareBoostClassifier(n_features_to_select=3, alpha=0.01,
                               fit_intercept=fit_intercept,
                               features=RawFeatures(groups=labels), **TIGHT).fit(X, y)
    groups = [list(np.flatnonzero(labels == g)) for g in range(4)]
    sel, losses = reference.shareboost(X, y, 3, 3, alpha=0.01,
                                       fit_intercept=fit_intercept, groups=groups)
    np.testing.assert_array_equal(clf.selected_features_, sel)
    np.testing.assert_allclose(clf.train_loss_, losses, rtol=1e-6)
    cols = np.concatenate([groups[g] for g in sel])
    np.testing.assert_array_equal(np.flatnonzero(clf.support_), np.sort(cols))
    assert np.all(clf.coef_[:, ~clf.support_] == 0)
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_.T + clf.intercept_)


def test_group_score_is_sum_of_column_scores():
    X, y = _problem()
    R = np.random.default_rng(1).standard_normal((X.shape[0], 3))
    labels = np.array([1, 1, 0, 2, 2, 2, 0, 1, 3])
    family = RawFeatures(groups=labels).fit(X)
    column = np.abs(X.T @ R).sum(axis=1)
    brute = [column[labels == g].sum() for g in range(4)]
    j, score = family.best_candidate(R, np.array([], dtype=np.intp))
    assert j == int(np.argmax(brute))
    assert score == pytest.approx(max(brute), rel=1e-12)
    j2, score2 = family.best_candidate(R, np.array([j]))
    assert j2 == int(np.argsort(brute)[-2])
    np.testing.assert_array_equal(family.candidate_widths_, [2, 3, 3, 1])


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_singleton_groups_equal_plain_selection(sparse, dtype):
    """Singleton groups, in any label order, select the same columns as no groups."""
    X, y = _pendigits()
    X = X.astype(dtype)
    if sparse:
        X = sp.csr_matrix(X * (X > 0.3))
    plain = ShareBoostClassifier(n_features_to_select=8, alpha=1e-3).fit(X, y)
    labels = np.arange(16)[::-1] * 10  # column j has label 10 * (15 - j)
    grouped = ShareBoostClassifier(n_features_to_select=8, alpha=1e-3,
                                   features=RawFeatures(groups=labels)).fit(X, y)
    columns = grouped.features_.group_columns(grouped.selected_features_)
    np.testing.assert_array_equal(columns, plain.selected_features_)
    np.testing.assert_array_equal(grouped.coef_, plain.coef_)
    np.testing.assert_array_equal(grouped.train_loss_, plain.train_loss_)
    np.testing.assert_array_equal(grouped._path.column_ptr, np.arange(9))


def test_string_labels_and_transform():
    X, y = _pendigits()
    labels = np.array(["x", "y"] * 8)
    clf = ShareBoostClassifier(n_features_to_select=1, alpha=1e-3,
                               features=RawFeatures(groups=labels)).fit(X, y)
    assert clf.features_.group_labels_.tolist() == ["x", "y"]
    g = clf.selected_features_[0]
    assert clf.support_.sum() == 8
    np.testing.assert_array_equal(np.flatnonzero(clf.support_), np.arange(g, 16, 2))
    assert clf.features_.transform_candidates(X[:5], [0, 1]).shape == (5, 16)


def test_groups_with_validation_and_staged():
    X, y = _pendigits()
    labels = np.arange(16) // 4
    clf = ShareBoostClassifier(n_features_to_select=3, alpha=1e-3, validation_fraction=0.25,
                               random_state=0, features=RawFeatures(groups=labels)).fit(X, y)
    np.testing.assert_array_equal(clf._path.column_ptr, [0, 4, 8, 12])
    staged = list(clf.staged_decision_function(X))
    assert len(staged) == 3 and all(s.shape == (600, 10) for s in staged)
    np.testing.assert_allclose(staged[-1], clf.decision_function(X))
    # the recorded validation errors are those of the staged models
    mask = clf._validation_mask
    errors = [np.mean(np.argmax(s[mask], axis=1) != y[mask]) for s in staged]
    np.testing.assert_allclose(clf.validation_errors_, errors)


def test_groups_warm_start_equals_one_fit():
    X, y = _pendigits()
    labels = np.arange(16) % 5
    kw = dict(alpha=1e-3, features=RawFeatures(groups=labels), **TIGHT)
    one = ShareBoostClassifier(n_features_to_select=4, **kw).fit(X, y)
    warm = ShareBoostClassifier(n_features_to_select=2, warm_start=True, **kw).fit(X, y)
    warm.set_params(n_features_to_select=4).fit(X, y)
    np.testing.assert_array_equal(warm.selected_features_, one.selected_features_)
    np.testing.assert_allclose(warm.train_loss_, one.train_loss_, rtol=1e-10)
    # the same minimiser, up to L-BFGS's precision on correlated pixel columns
    np.testing.assert_allclose(warm.coef_, one.coef_, rtol=1e-5, atol=1e-6)


def test_groups_warm_start_refuses_other_groups():
    X, y = _pendigits()
    clf = ShareBoostClassifier(n_features_to_select=2, warm_start=True, alpha=1e-3,
                               features=RawFeatures(groups=np.arange(16) // 4)).fit(X, y)
    # the same widths in another order, then other widths
    for groups in (np.arange(16)[::-1] // 4, np.arange(16) // 2):
        clf.set_params(n_features_to_select=3, features=RawFeatures(groups=groups))
        with pytest.raises(ValueError, match="other columns"):
            clf.fit(X, y)
        assert clf.n_iter_ == 2


@pytest.mark.parametrize("selection", ["best_column", "line_search", "full"])
def test_groups_need_gradient_rule(selection):
    X, y = _pendigits()
    clf = ShareBoostClassifier(n_features_to_select=2, selection=selection,
                               features=RawFeatures(groups=np.arange(16) // 2))
    with pytest.raises(ValueError, match="group selection"):
        clf.fit(X, y)
    # singleton groups are plain columns: every rule works
    ShareBoostClassifier(n_features_to_select=1, selection=selection,
                         features=RawFeatures(groups=np.arange(16))).fit(X[:200], y[:200])


@pytest.mark.parametrize("groups, error, match", [
    (np.arange(15), ValueError, r"shape \(n_features,\)"),
    (np.zeros((16, 1)), ValueError, r"shape \(n_features,\)"),
    (np.r_[np.nan, np.arange(15.0)], ValueError, "NaN"),
    (np.array([np.nan] + list(range(15)), dtype=object), ValueError, "NaN"),
    ([None] + list(range(15)), TypeError, "one kind"),
    ([1, "1"] + list(range(14)), TypeError, "one kind"),
])
def test_bad_groups(groups, error, match):
    X, y = _pendigits()
    with pytest.raises(error, match=match):
        ShareBoostClassifier(n_features_to_select=1, features=RawFeatures(groups=groups)).fit(X, y)


def test_bad_candidate_widths():
    X, y = _pendigits()
    family = RawFeatures().fit(X)
    family.candidate_widths_ = np.zeros(16, dtype=int)
    with pytest.raises(TypeError, match="candidate_widths_"):
        shareboost_path(X, y, n_classes=10, n_rounds=1, features=family)
    family.candidate_widths_ = np.full(16, 2)  # wider than training_columns returns
    with pytest.raises(ValueError, match=r"expected \(600, 2\)"):
        shareboost_path(X, y, n_classes=10, n_rounds=1, features=family)


# --- the column store: dense and row-sparse blocks ------------------------

def _store_and_dense(seed=0, n=40):
    """A store of a dense column, a row-sparse group and a dense group, and its dense twin."""
    rng = np.random.default_rng(seed)
    dense_col = rng.standard_normal((n, 1))
    sparse_group = rng.standard_normal((n, 3)) * (rng.random((n, 1)) < 0.3)
    dense_group = rng.standard_normal((n, 2))
    store = SelectedColumns(n, capacity=1)  # forces the dense buffer to grow
    for block in (dense_col, sparse_group, dense_group):
        store.put(block, store.n_columns)
    return store, np.hstack([dense_col, sparse_group, dense_group])


def test_store_matches_dense_products():
    store, X = _store_and_dense()
    assert store.n_groups == 1  # the 30%-row group is kept row-sparse
    rng = np.random.default_rng(3)
    for p in (1, 4, 6):
        W = rng.standard_normal((5, p))
        out = np.empty((40, 5))
        np.testing.assert_allclose(store.matmul(W.T, out), X[:, :p] @ W.T, atol=1e-13)
        R = rng.standard_normal((40, 5))
        np.testing.assert_allclose(store.rmatmul(R, p).T, R.T @ X[:, :p], atol=1e-13)


def test_store_put_replaces_columns_from_start():
    store, X = _store_and_dense()
    new = np.random.default_rng(9).standard_normal((40, 1))
    store.put(new, 1)  # drop the sparse and the dense group, put a column in their place
    assert store.n_columns == 2 and not store.n_groups
    W = np.ones((2, 2))
    np.testing.assert_allclose(store.matmul(W.T, np.empty((40, 2))),
                               np.hstack([X[:, :1], new]) @ W.T)


def test_store_centring_only_on_dense_columns():
    rng = np.random.default_rng(0)
    store = SelectedColumns(50, 4)
    dense = rng.standard_normal((50, 2)) + 3.0
    sparse_group = np.zeros((50, 2))
    sparse_group[:5] = 1.0
    store.put(dense, 0, center=True)
    store.put(sparse_group, 2, center=True)
    np.testing.assert_allclose(store.shift[:2], dense.mean(axis=0))
    np.testing.assert_array_equal(store.shift[2:], 0.0)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_objective_gradient_with_row_sparse_blocks(fit_intercept):
    store, X = _store_and_dense(n=60)
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 60).astype(np.intp)
    obj = LinearObjective(store, y, n_classes=4, penalty=Frobenius(0.2),
                          fit_intercept=fit_intercept)
    dense = LinearObjective(X, y, n_classes=4, penalty=Frobenius(0.2),
                            fit_intercept=fit_intercept)
    x0 = rng.standard_normal(4 * 6 + (4 if fit_intercept else 0))
    assert check_grad(lambda p: obj.value_grad(p, 6)[0],
                      lambda p: obj.value_grad(p, 6)[1], x0) < 1e-6
    np.testing.assert_allclose(obj.value_grad(x0, 6)[0], dense.value_grad(x0, 6)[0],
                               rtol=1e-13)
    np.testing.assert_allclose(obj.value_grad(x0, 6)[1], dense.value_grad(x0, 6)[1],
                               rtol=1e-12, atol=1e-14)


def test_store_threads_give_the_same_products():
    rng = np.random.default_rng(4)
    n = 3000
    stores = [SelectedColumns(n, 2, n_threads=t, row_block=1000) for t in (1, 2)]
    for g in range(6):
        block = rng.standard_normal((n, 51)) * (rng.random((n, 1)) < 0.4)
        for store in stores:
            store.put(block, store.n_columns)
    assert len(stores[1]._blocks) > 1  # large enough to share
    W = rng.standard_normal((7, stores[0].n_columns))
    R = rng.standard_normal((n, 7))
    one, two = (s.matmul(W.T, np.empty((n, 7))) for s in stores)
    np.testing.assert_allclose(two, one, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stores[1].rmatmul(R, W.shape[1]),
                               stores[0].rmatmul(R, W.shape[1]), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n, n_threads, row_block", [
    (0, 1, 700), (1, 1, 700), (2100, 1, 10**6), (2100, 1, 700), (2100, 2, 700),
    (2**19 + 1, 2, 2**18)])  # the last: float32 storage
def test_rmatmul_filled_is_rmatmul_of_the_filled_rows(n, n_threads, row_block):
    """``M`` filled and multiplied block by block: ``rmatmul`` of the whole ``M`` (the
    same bits) and ``M``'s column sums, with every row filled once; the base class
    (``DaskColumns``, ``SparseColumns``) fills ``M`` whole."""
    from mcsparse.solvers._columns import ColumnStore

    rng = np.random.default_rng(n + n_threads)
    store = SelectedColumns(n, 4, n_threads=n_threads, row_block=row_block)
    stumps = (rng.random((n, 3)) < 0.4).astype(float)  # exact float32 values
    store.put(stumps, 0, center=True)
    store.put(rng.standard_normal((n, 3)) * (rng.random((n, 1)) < 0.3), 3)  # row-sparse
    assert store.dtype == (np.float32 if n > 2**19 else np.float64)
    M = rng.standard_normal((n, 9))
    filled = []

    def fill(rows, out):
        assert out.shape == (rows.stop - rows.start, 9) and out.flags.c_contiguous
        filled.append((rows.start, rows.stop))
        out[:] = M[rows]

    for p in (0, 3, 6):  # whole blocks (an empty block is stored as a group)
        filled.clear()
        prod, sums = store.rmatmul_filled(fill, 9, p)
        assert prod.shape == (p, 9) and sums.shape == (9,)
        np.testing.assert_array_equal(prod, store.rmatmul(M, p))
        np.testing.assert_allclose(sums, M.sum(axis=0), rtol=1e-12, atol=1e-9)
        starts, stops = zip(*sorted(filled)) if filled else ((), ())
        assert list(starts[1:]) == list(stops[:-1]) and (not n or (starts[0], stops[-1]) == (0, n))
        base_prod, base_sums = ColumnStore.rmatmul_filled(store, fill, 9, p)
        np.testing.assert_array_equal(base_prod, prod)
        np.testing.assert_allclose(base_sums, sums, rtol=1e-12, atol=1e-9)


def test_chunk_put_appends_without_copying_the_store_and_leaves_it_unchanged():
    """``DaskColumns``' task: a new store, the old one as it was (the task is pure); an
    appended column shares the old dense buffers, a replaced one does not."""
    from mcsparse.solvers._dask_columns import _chunk_put

    rng = np.random.default_rng(0)
    n = 300
    X = rng.standard_normal((n, 6))
    shift = X.mean(axis=0)
    old = SelectedColumns(n, 4, row_block=128)
    old.put(X[:, :2], 0, shift=shift[:2])
    W = rng.standard_normal((2, 5))
    before = old.matmul(W, np.empty((n, 5)))

    def reference(cols):
        store = SelectedColumns(n, 6)
        store.put(X[:, cols], 0, shift=shift[cols])
        return store

    new = _chunk_put(None, old, X[:, 2:3], 2, shift[2:3])  # within capacity
    assert all(np.shares_memory(a.dense, b.dense) for a, b in zip(old._blocks, new._blocks))
    grown = _chunk_put(None, new, X[:, 3:6], 3, shift[3:6])  # past capacity: new buffers
    assert not any(np.shares_memory(a.dense, b.dense) for a, b in zip(new._blocks, grown._blocks))
    replaced = _chunk_put(None, grown, X[:, 5:6], 1, shift[5:6])  # from column 1: a copy
    assert not any(np.shares_memory(a.dense, b.dense)
                   for a, b in zip(grown._blocks, replaced._blocks))
    assert (old.n_columns, new.n_columns, grown.n_columns, replaced.n_columns) == (2, 3, 6, 2)
    np.testing.assert_array_equal(old.matmul(W, np.empty((n, 5))), before)
    V = rng.standard_normal((6, 5))
    for store, cols in ((old, [0, 1]), (new, [0, 1, 2]), (grown, list(range(6))),
                        (replaced, [0, 5])):
        p = len(cols)
        np.testing.assert_allclose(store.matmul(V[:p], np.empty((n, 5))),
                                   reference(cols).matmul(V[:p], np.empty((n, 5))),
                                   rtol=1e-13, atol=1e-13)
