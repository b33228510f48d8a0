"""Decision stumps: the Cython scan against its NumPy twin and brute force."""

import numpy as np
import pytest

from mcsparse import ShareBoostClassifier
from mcsparse.features import DecisionStumps, RawFeatures
from mcsparse.features._stumps import (compress_ranks, rank_stumps, scan_stumps_numpy,
                                       stump_thresholds)
from mcsparse.features._stumps_fast import scan_stumps

NO_IDS = np.array([], dtype=np.intp)


def _problem(n, d, k, dtype, n_values=None, seed=0):
    """Random data (few distinct values when n_values is set) and residual rows."""
    rng = np.random.default_rng(seed)
    if n_values is None:
        X = rng.standard_normal((n, d))
    else:
        X = rng.integers(0, n_values, size=(n, d)).astype(float)
    R = rng.standard_normal((n, k))
    R -= R.mean(axis=1, keepdims=True)  # rows of p - e_y sum to zero
    return X.astype(dtype), R


def _brute_force(X, R, excluded=()):
    """Materialise every stump 1[v_f <= theta] and score it: (score, f, theta)."""
    best = (-np.inf, -1, np.nan)
    stump_id = 0
    for f in range(X.shape[1]):
        values = np.unique(X[:, f].astype(np.float64))
        for a, b in zip(values[:-1], values[1:]):
            theta = 0.5 * a + 0.5 * b
            if stump_id not in excluded:
                column = (X[:, f] <= theta).astype(np.float64)
                score = np.abs(column @ R).sum()
                if score > best[0] * (1 + 1e-12) + 1e-12:
                    best = (score, f, theta)
            stump_id += 1
    return best


@pytest.mark.parametrize("data_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("resid_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1, 2), (2, 1, 2), (2, 3, 3), (17, 4, 3),
                                   (60, 5, 10), (200, 3, 26)])
@pytest.mark.parametrize("n_values", [None, 3])
def test_cython_matches_numpy_twin(data_dtype, resid_dtype, shape, n_values):
    X, R = _problem(*shape, data_dtype, n_values)
    R = R.astype(resid_dtype)
    ranks, _, offsets = rank_stumps(X)
    rng = np.random.default_rng(1)
    n_candidates = offsets[-1]
    for excluded in [NO_IDS, np.sort(rng.choice(n_candidates, n_candidates // 2,
                                                 replace=False)).astype(np.intp)]:
        got = scan_stumps(ranks, R, offsets, excluded)
        ref = scan_stumps_numpy(ranks, R, offsets, excluded)
        rtol = 1e-5 if resid_dtype == np.float32 else 1e-12
        np.testing.assert_allclose(got[0], ref[0], rtol=rtol)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_allclose(got[2], ref[2], rtol=rtol)
        # with a cutoff: each feature's first threshold scoring at least it (a
        # cutoff away from the maxima, which the twins round differently)
        cutoff = 0.9 * float(np.median(got[2][np.isfinite(got[2])])) \
            if np.isfinite(got[2]).any() else 0.0
        got = scan_stumps(ranks, R, offsets, excluded, cutoff=cutoff)
        ref = scan_stumps_numpy(ranks, R, offsets, excluded, cutoff=cutoff)
        np.testing.assert_allclose(got[0], ref[0], rtol=rtol)
        np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("seed", range(20))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_best_candidate_equals_brute_force(seed, dtype):
    rng = np.random.default_rng(seed)
    n, d, k = rng.integers(2, 40), rng.integers(1, 6), rng.integers(2, 6)
    X, R = _problem(n, d, k, dtype, n_values=[None, 2, 5][seed % 3], seed=seed)
    stumps = DecisionStumps().fit(X)
    score, f, theta = _brute_force(X, R)
    if f < 0:  # every feature constant
        assert stumps.n_candidates_ == 0
        with pytest.raises(ValueError, match="no decision stump left"):
            stumps.best_candidate(R, NO_IDS)
        return
    stump_id, got = stumps.best_candidate(R, NO_IDS)
    np.testing.assert_allclose(got, score, rtol=1e-10)
    column = stumps.training_columns([stump_id])[:, 0]
    np.testing.assert_array_equal(column, X[:, f] <= theta)
    # and with the winner excluded, the runner-up
    excluded = np.array([stump_id], dtype=np.intp)
    if stumps.n_candidates_ > 1:
        score2, f2, theta2 = _brute_force(X, R, excluded={stump_id})
        id2, got2 = stumps.best_candidate(R, excluded)
        assert id2 != stump_id
        np.testing.assert_allclose(got2, score2, rtol=1e-10)
        np.testing.assert_array_equal(stumps.training_columns([id2])[:, 0],
                                      X[:, f2] <= theta2)


def test_ties_go_to_the_first_feature_and_threshold():
    x = np.array([0.0, 1.0, 2.0, 3.0])
    X = np.column_stack([x, x, x[::-1]])
    R = np.array([[1.0, -1.0], [1.0, -1.0], [-1.0, 1.0], [-1.0, 1.0]])
    stumps = DecisionStumps().fit(X)
    stump_id, score = stumps.best_candidate(R, NO_IDS)
    assert stump_id == 1 and score == 4.0  # feature 0, threshold 1.5
    stumps.end_scan([stump_id])
    assert stumps.stump_features_.tolist() == [0]
    assert stumps.thresholds_.tolist() == [1.5]


def test_constant_and_repeated_values():
    X = np.array([[5.0, 1.0], [5.0, 1.0], [5.0, 2.0], [5.0, 2.0], [5.0, 2.0]])
    stumps = DecisionStumps().fit(X)
    assert stumps.n_candidates_ == 1  # the constant feature has no stump
    R = np.array([[1.0, -1.0]] * 2 + [[-1.0, 1.0]] * 3) / 5
    stump_id, _ = stumps.best_candidate(R, NO_IDS)
    assert stump_id == 0
    np.testing.assert_array_equal(stumps.training_columns([0])[:, 0], [1, 1, 0, 0, 0])
    with pytest.raises(ValueError, match="no decision stump left"):
        stumps.best_candidate(R, np.array([0], dtype=np.intp))


def test_threshold_between_adjacent_floats():
    a = np.float64(1.0)
    b = np.nextafter(a, 2.0)
    X = np.array([[a], [b]])
    stumps = DecisionStumps().fit(X)
    stumps.best_candidate(np.array([[1.0, -1.0], [-1.0, 1.0]]), NO_IDS)
    np.testing.assert_array_equal(stumps.training_columns([0])[:, 0], [1.0, 0.0])
    np.testing.assert_array_equal(stumps.transform_candidates(X, [0])[:, 0], [1.0, 0.0])


def test_transform_after_end_scan_reads_only_kept_stumps():
    X, R = _problem(50, 4, 3, np.float64, n_values=6)
    stumps = DecisionStumps().fit(X)
    ids = [stumps.best_candidate(R, NO_IDS)[0], 3]
    train = stumps.training_columns(ids)
    stumps.end_scan(ids)
    np.testing.assert_array_equal(stumps.transform_candidates(X, ids), train)
    other = next(i for i in range(stumps.n_candidates_) if i not in ids)
    with pytest.raises(ValueError, match="not kept"):
        stumps.transform_candidates(X, [other])
    with pytest.raises(RuntimeError, match="ended its scan"):
        stumps.best_candidate(R, NO_IDS)
    with pytest.raises(ValueError, match="candidate ids must be in"):
        stumps.transform_candidates(X, [stumps.n_candidates_])
    with pytest.raises(ValueError, match="features"):
        stumps.transform_candidates(X[:, :3], ids)


def test_scan_rejects_inconsistent_input():
    X, R = _problem(10, 2, 3, np.float64, n_values=4)
    ranks, _, offsets = rank_stumps(X)
    with pytest.raises(ValueError, match="residual has"):
        scan_stumps(ranks, R[:-1].copy(), offsets, NO_IDS)
    with pytest.raises(ValueError, match="offsets must have"):
        scan_stumps(ranks, R, offsets[:-1].copy(), NO_IDS)
    with pytest.raises(ValueError, match="non-decreasing"):
        scan_stumps(ranks, R, np.array([0, 3, 2], dtype=np.intp), NO_IDS)
    with pytest.raises(ValueError, match="start at 0"):
        scan_stumps(ranks, R, offsets + 1, NO_IDS)
    with pytest.raises(ValueError, match="more than"):
        scan_stumps(ranks, R, np.array([0, 20, 20], dtype=np.intp), NO_IDS)
    with pytest.raises(ValueError, match="sorted"):
        scan_stumps(ranks, R, offsets, np.array([3, 1], dtype=np.intp))
    bad = ranks.copy()
    bad[1, 4] = offsets[2] - offsets[1] + 1  # one past the feature's last value
    with pytest.raises(ValueError, match="ranks of feature 1"):
        scan_stumps(bad, R, offsets, NO_IDS)
    bad[1, 4] = -1
    with pytest.raises(ValueError, match="ranks of feature 1"):
        scan_stumps(bad, R, offsets, NO_IDS)
    with pytest.raises(TypeError):
        scan_stumps(None, R, offsets, NO_IDS)
    with pytest.raises(ValueError):  # int64 ranks: a dtype mismatch, not a crash
        scan_stumps(ranks.astype(np.int64), R, offsets, NO_IDS)


def test_shareboost_with_stumps_predicts_from_selected_stumps(pendigits_small):
    X, y, X_test, y_test = pendigits_small
    clf = ShareBoostClassifier(n_features_to_select=20, features="stumps",
                               alpha=1e-5).fit(X, y)
    assert isinstance(clf.features_, DecisionStumps)
    assert clf.coef_.shape == (10, 20)
    assert len(set(clf.selected_features_.tolist())) == 20
    assert clf.features_.thresholds_.shape == (20,)
    assert clf.support_.sum() == len(set(clf.features_.stump_features_.tolist()))
    # decision_function is W [stumps(x)] + b, from the kept stumps only
    columns = clf.features_.transform_candidates(X_test, clf.selected_features_)
    np.testing.assert_allclose(clf.decision_function(X_test),
                               columns @ clf.coef_.T + clf.intercept_)
    assert clf.score(X_test, y_test) > 0.8
    # the selection scores fall as the path goes on (fully corrective refits)
    staged = list(clf.staged_predict(X_test))
    assert np.array_equal(staged[-1], clf.predict(X_test))


def test_features_parameter_errors():
    X = np.arange(12.0).reshape(6, 2)
    y = [0, 1, 0, 1, 0, 1]
    with pytest.raises(ValueError, match="features must be one of"):
        ShareBoostClassifier(features="trees").fit(X, y)
    with pytest.raises(TypeError, match="lacks"):
        ShareBoostClassifier(features=object()).fit(X, y)
    with pytest.raises(ValueError, match="no candidate features"):
        ShareBoostClassifier(features="stumps").fit(np.ones((6, 2)), y)
    with pytest.raises(ValueError, match="number of candidates=10"):
        ShareBoostClassifier(features="stumps", n_features_to_select=11).fit(X, y)


def test_raw_family_matches_default_path():
    X, _ = _problem(40, 6, 3, np.float64)
    y = np.arange(40) % 3
    a = ShareBoostClassifier(n_features_to_select=4).fit(X, y)
    b = ShareBoostClassifier(n_features_to_select=4, features=RawFeatures()).fit(X, y)
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(a.coef_, b.coef_)


# ---------------------------------------------------------------- max_bins

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_bins_above_the_distinct_values_changes_nothing(dtype):
    X, R = _problem(300, 5, 4, dtype, n_values=12)
    exact = DecisionStumps().fit(X)
    binned = DecisionStumps(max_bins=12).fit(X)
    assert binned.n_candidates_ == exact.n_candidates_
    assert binned.best_candidate(R, NO_IDS) == exact.best_candidate(R, NO_IDS)
    ids = np.arange(exact.n_candidates_)
    np.testing.assert_array_equal(binned.training_columns(ids), exact.training_columns(ids))


def test_stump_thresholds_are_quantile_cuts():
    rng = np.random.default_rng(3)
    values = np.unique(rng.standard_normal(500))
    counts = rng.integers(1, 20, values.size)
    for max_bins in (2, 7, 64, 499, 500, 1000):
        theta = stump_thresholds(values, counts, max_bins)
        assert theta.size <= max_bins - 1 and np.all(np.diff(theta) > 0)
        cumulative = np.cumsum(counts)
        # brute force: the first value whose cumulative count reaches q n / max_bins
        cuts = sorted({min(int(np.flatnonzero(cumulative >= q * cumulative[-1] / max_bins)[0]),
                           values.size - 2) for q in range(1, max_bins)})
        if values.size <= max_bins:
            cuts = list(range(values.size - 1))
        np.testing.assert_array_equal(theta, (values[cuts] + values[np.add(cuts, 1)]) / 2)
    assert stump_thresholds(np.array([1.0]), np.array([5]), 4).size == 0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("max_bins", [2, 5, 33])
def test_chunk_products_add_up_to_the_stumps_gradient(dtype, max_bins):
    """The row-chunk twin used on dask arrays against the materialised stumps."""
    X, R = _problem(401, 6, 3, dtype)
    X[:, 2] = 1.0  # a constant feature has no stump
    stumps = DecisionStumps(max_bins=max_bins).fit(X)
    ids = np.arange(stumps.n_candidates_)
    brute = stumps.training_columns(ids).T @ R
    parts = sum(stumps._chunk_products(X[a:a + 90], R[a:a + 90]) for a in range(0, 401, 90))
    np.testing.assert_allclose(parts, brute, rtol=1e-10, atol=1e-10)
    excluded = np.array([0, 3], dtype=np.intp)
    assert stumps._pick(parts, excluded) == pytest.approx(stumps.best_candidate(R, excluded))
    assert (stumps.n_candidates_ - 6 * (max_bins - 1)) <= 0


def test_binned_chunks_give_the_stumps_and_their_pick():
    """A chunk binned on its worker (dask) gives the stumps of the family in memory."""
    X, R = _problem(300, 5, 4, np.float64)
    X[:, 1] = 1.0  # a constant feature: one bin, no stump
    X[:200, 3] = 0.0  # a most frequent bin left out of the sparse rows
    stumps = DecisionStumps(max_bins=6).fit(X)
    ids = np.arange(stumps.n_candidates_)
    chunk, scan = stumps._chunk_features(X[50:170]), stumps._chunk_scanner()
    np.testing.assert_array_equal(scan._chunk_columns(chunk, ids),
                                  stumps.training_columns(ids)[50:170])
    np.testing.assert_allclose(scan._chunk_products(chunk, R[50:170]),
                               stumps.training_columns(ids)[50:170].T @ R[50:170],
                               rtol=1e-10, atol=1e-10)
    products = stumps.training_columns(ids).T @ R
    excluded = np.array([1, 2], dtype=np.intp)
    assert scan._pick(products, excluded) == stumps._pick(products, excluded)


def test_binned_thresholds_and_bad_max_bins():
    X = np.arange(100, dtype=float)[:, None]
    stumps = DecisionStumps(max_bins=4).fit(X)
    np.testing.assert_array_equal(stumps.end_scan(np.arange(3)).thresholds_, [24.5, 49.5, 74.5])
    for bad, error in ((1, ValueError), (0, ValueError), (2.5, TypeError), ("8", TypeError)):
        with pytest.raises(error, match="max_bins"):
            DecisionStumps(max_bins=bad).fit(X)


# ------------------------------------------ the sparse scan (mode skipped) and threads

def _sparse_problem(n, d, k, dtype, resid_dtype, seed=0):
    """Integer features, mostly zeros (as pixels), one constant and one dense feature."""
    rng = np.random.default_rng(seed)
    X = rng.integers(1, 6, size=(n, d)) * (rng.random((n, d)) < 0.3)
    if d > 1:
        X[:, 1] = 7  # constant: no stump
    if d > 2:
        X[:, 2] = rng.integers(0, 50, size=n)  # no frequent value: scanned in full
    R = rng.standard_normal((n, k))
    R -= R.mean(axis=1, keepdims=True)
    return X.astype(dtype), R.astype(resid_dtype)


def test_compress_ranks_lists_the_samples_off_the_mode():
    ranks = np.array([[0, 1, 1, 2, 1], [0, 1, 2, 3, 4], [0, 0, 0, 0, 0],
                      [2, 0, 2, 0, 1]], dtype=np.int32)
    offsets = np.array([0, 2, 6, 6, 8], dtype=np.intp)
    modes, indptr, rows, codes = compress_ranks(ranks, offsets, max_fraction=0.7)
    # feature 1: 4 of 5 samples off its mode (> 0.7): scanned in full;
    # feature 2 constant; feature 3: ranks 0 and 2 tie, the lowest is the mode
    np.testing.assert_array_equal(modes, [1, -1, -1, 0])
    np.testing.assert_array_equal(indptr, [0, 2, 2, 2, 5])
    np.testing.assert_array_equal(rows, [0, 3, 0, 2, 4])
    np.testing.assert_array_equal(codes, [0, 2, 2, 2, 1])
    assert rows.dtype == codes.dtype == np.int32 and indptr.dtype == np.intp
    modes, indptr, rows, _ = compress_ranks(ranks, offsets, max_fraction=1.0)
    np.testing.assert_array_equal(modes, [1, 0, -1, 0])
    np.testing.assert_array_equal(rows[indptr[1]:indptr[2]], [1, 2, 3, 4])


@pytest.mark.parametrize("data_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("resid_dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0, 3, 3), (1, 1, 2), (2, 1, 2), (2, 3, 3), (17, 4, 3),
                                   (60, 5, 10), (200, 3, 26), (500, 7, 4)])
def test_sparse_scan_matches_numpy_twin(data_dtype, resid_dtype, shape):
    X, R = _sparse_problem(*shape, data_dtype, resid_dtype)
    ranks, _, offsets = rank_stumps(X)
    sparse = compress_ranks(ranks, offsets)
    n_candidates = offsets[-1]
    rng = np.random.default_rng(1)
    rtol = 1e-5 if resid_dtype == np.float32 else 1e-12
    for excluded in [NO_IDS, np.sort(rng.choice(n_candidates, n_candidates // 2,
                                                 replace=False)).astype(np.intp),
                     np.arange(n_candidates, dtype=np.intp)]:  # all excluded
        got = scan_stumps(ranks, R, offsets, excluded, sparse=sparse)
        ref = scan_stumps_numpy(ranks, R, offsets, excluded, sparse=sparse)
        dense = scan_stumps(ranks, R, offsets, excluded)
        np.testing.assert_allclose(got[0], ref[0], rtol=rtol)
        np.testing.assert_array_equal(got[1], ref[1])
        np.testing.assert_allclose(got[2], ref[2], rtol=rtol)
        # the mode's bin from the totals: the scores of the full scan, rounded
        np.testing.assert_allclose(got[2], dense[2], rtol=1e-10, atol=1e-12)
        if excluded.size == n_candidates:
            assert np.all(got[1] == -1) and np.all(got[0] == -np.inf)
        finite = got[2][np.isfinite(got[2])]
        if finite.size:
            cutoff = 0.9 * float(np.median(finite))
            got = scan_stumps(ranks, R, offsets, excluded, cutoff=cutoff, sparse=sparse)
            ref = scan_stumps_numpy(ranks, R, offsets, excluded, cutoff=cutoff, sparse=sparse)
            np.testing.assert_allclose(got[0], ref[0], rtol=rtol)
            np.testing.assert_array_equal(got[1], ref[1])


@pytest.mark.parametrize("use_sparse", [False, True])
@pytest.mark.parametrize("min_group_cost", [None, 1])
def test_thread_count_does_not_change_the_scan(use_sparse, min_group_cost, monkeypatch):
    from mcsparse.features import _stumps_fast

    if min_group_cost is not None:  # one group per feature, up to 4 per thread
        monkeypatch.setattr(_stumps_fast, "_MIN_GROUP_COST", min_group_cost)
    X, R = _sparse_problem(20000, 40, 5, np.float64, np.float64)  # 4e6 entries: 4 groups
    X[:, 20:] = np.random.default_rng(2).standard_normal((20000, 20)).round(1)
    ranks, _, offsets = rank_stumps(X)
    sparse = compress_ranks(ranks, offsets) if use_sparse else None
    excluded = np.arange(0, offsets[-1], 7, dtype=np.intp)
    one = scan_stumps(ranks, R, offsets, excluded, sparse=sparse, n_threads=1)
    for n_threads in (2, 3, 64):
        many = scan_stumps(ranks, R, offsets, excluded, sparse=sparse, n_threads=n_threads)
        for a, b in zip(one, many):
            np.testing.assert_array_equal(a, b)  # bitwise: each feature alone
    stumps = [DecisionStumps(n_jobs=n_jobs).fit(X) for n_jobs in (1, 2)]
    assert stumps[0].best_candidate(R, excluded) == stumps[1].best_candidate(R, excluded)


def test_sparse_scan_rejects_malformed_input():
    X, R = _sparse_problem(40, 3, 3, np.float64, np.float64)
    ranks, _, offsets = rank_stumps(X)
    modes, indptr, rows, codes = compress_ranks(ranks, offsets, max_fraction=1.0)
    with pytest.raises(ValueError, match="tuple"):
        scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes, indptr))
    with pytest.raises(ValueError, match="int32"):
        scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes, indptr, rows.astype(np.intp),
                                                       codes))
    with pytest.raises(ValueError, match="entries"):
        scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes[:-1], indptr, rows, codes))
    with pytest.raises(ValueError, match="indptr"):
        scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes, indptr[::-1].copy(), rows,
                                                       codes))
    with pytest.raises(ValueError, match="same length"):
        scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes, indptr, rows[:-1], codes))
    with pytest.raises(ValueError, match="modes"):
        scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes - 2, indptr, rows, codes))
    for bad_rows, bad_codes in ((rows + 1000, codes), (rows, np.full_like(codes, 9)),
                                (rows, np.full_like(codes, modes[0]))):
        f = 0  # a listed row outside the samples, a rank too large, the mode itself
        with pytest.raises(ValueError, match=f"ranks of feature {f}"):
            scan_stumps(ranks, R, offsets, NO_IDS, sparse=(modes, indptr, bad_rows, bad_codes))
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n_threads"):
            scan_stumps(ranks, R, offsets, NO_IDS, n_threads=bad)


def test_stumps_n_jobs_is_checked():
    X = np.arange(12.0).reshape(6, 2)
    with pytest.raises(ValueError, match="n_jobs"):
        DecisionStumps(n_jobs=0).fit(X)
    with pytest.raises(TypeError, match="n_jobs"):
        DecisionStumps(n_jobs=1.5).fit(X)


def test_shareboost_n_jobs_changes_no_bit(monkeypatch):
    """Stump scan and refit on 1 or 2 threads: the same model bit for bit."""
    from mcsparse.solvers._columns import SelectedColumns

    threads = set()
    plain_map = SelectedColumns._map

    def spy(store, *args, **kwargs):
        threads.add((store.n_threads, len(store._blocks)))
        return plain_map(store, *args, **kwargs)

    monkeypatch.setattr(SelectedColumns, "_map", spy)
    rng = np.random.default_rng(5)
    n = 20000  # three row blocks of the refit's store
    X = (rng.integers(0, 9, size=(n, 12)) * (rng.random((n, 12)) < 0.3)).astype(float)
    X[:, :3] += rng.standard_normal((n, 3))
    y = (X[:, 0] + X[:, 3] - X[:, 5] > 1).astype(int) + (X[:, 1] > 0.5)
    fits = [ShareBoostClassifier(features="stumps", alpha=1e-4, n_features_to_select=8,
                                 n_jobs=n_jobs).fit(X, y) for n_jobs in (1, 2)]
    assert fits[1].features_.n_jobs == 2  # given to the family built by name
    assert threads == {(1, 3), (2, 3)}  # the refit ran its blocks on 1, then 2 threads
    np.testing.assert_array_equal(fits[0].selected_features_, fits[1].selected_features_)
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    np.testing.assert_array_equal(fits[0].intercept_, fits[1].intercept_)
    family = ShareBoostClassifier(features=DecisionStumps(n_jobs=2), alpha=1e-4,
                                  n_features_to_select=8, n_jobs=1).fit(X, y)
    assert family.features_.n_jobs == 2  # a family object keeps its own
    np.testing.assert_array_equal(family.coef_, fits[0].coef_)
    with pytest.raises(ValueError, match="n_jobs"):
        ShareBoostClassifier(features="stumps", n_jobs=0).fit(X, y)


@pytest.mark.parametrize("features", ["stumps", "raw", "binned"])
@pytest.mark.parametrize("selection", ["gradient_l1", "best_column", "line_search"])
def test_shareboost_blas_threads_change_no_bit(features, selection):
    """The BLAS pool's thread count (``OMP_NUM_THREADS``, threadpoolctl) changes no
    bit either: no sum over the samples is left to a BLAS call that splits the
    rows between its threads (OpenBLAS's matrix-vector products do)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    if not any(pool["user_api"] == "blas" and pool["num_threads"] >= 2
               for pool in threadpool_info()):
        pytest.skip("no BLAS pool of 2 threads or more: nothing to split the rows")
    if features == "stumps" and selection != "gradient_l1":
        pytest.skip("every threshold's own Newton steps: minutes (the binned stumps run)")
    features = DecisionStumps(max_bins=16) if features == "binned" else features
    rng = np.random.default_rng(3)
    # large enough for OpenBLAS to thread its matrix-vector products
    n, rounds = (6000, 6) if selection == "gradient_l1" else (3000, 3)
    X = rng.standard_normal((n, 20))
    y = np.digitize(X[:, 0] + X[:, 3] * X[:, 5] - X[:, 7], [-1.0, 0.0, 1.0])
    fits = []
    for threads in (1, 2):
        with threadpool_limits(limits=threads, user_api="blas"):
            fits.append(ShareBoostClassifier(
                features=features, selection=selection, alpha=1e-4,
                n_features_to_select=rounds).fit(X, y))
    np.testing.assert_array_equal(fits[0].selected_features_, fits[1].selected_features_)
    np.testing.assert_array_equal(fits[0].coef_, fits[1].coef_)
    np.testing.assert_array_equal(fits[0].intercept_, fits[1].intercept_)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (2, 2), (50, 7), (300, 1)])
@pytest.mark.parametrize("n_jobs", [None, 2, 3])
def test_rank_stumps_equals_unique(dtype, shape, n_jobs):
    # the ranks and distinct values are np.unique's, whatever the thread count;
    # ties, -0.0 beside 0.0, infinitesimal gaps and constant columns included
    rng = np.random.default_rng(0)
    X = rng.integers(-3, 4, size=shape).astype(dtype)
    if X.size:
        X[::3, 0] = -0.0
        X[1::4, -1] = np.nextafter(dtype(1), dtype(2))
        X[:, shape[1] // 2] = 5.0
    ranks, values, offsets = rank_stumps(X, n_jobs=n_jobs)
    assert ranks.dtype == np.int32 and ranks.shape == (shape[1], shape[0])
    start = 0
    for f in range(shape[1]):
        distinct, inverse = np.unique(X[:, f], return_inverse=True)
        np.testing.assert_array_equal(ranks[f], inverse)
        np.testing.assert_array_equal(values[start:start + distinct.size], distinct)
        assert offsets[f + 1] - offsets[f] == max(distinct.size - 1, 0)
        start += distinct.size
    assert start == values.size
