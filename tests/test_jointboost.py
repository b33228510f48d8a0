"""JointBoost against slow references, its invariants and its scikit-learn behaviour.

The references below are written from the definition of a round ([TMF2007]
§3): plain loops over features, thresholds and subsets, each candidate scored
by its weighted squared error computed directly (not by the package's gain
form nor its cumulative sums).
"""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from conftest import require_data
from mcsparse.datasets import load_pendigits
from mcsparse import JointBoostClassifier
from mcsparse.solvers._jointboost import _greedy_subset, _Groups, _ratio_sq, jointboost

# ---------------------------------------------------------------------------
# slow references


def _thresholds(column):
    """Midpoints between consecutive distinct values (the lower value if the
    midpoint rounds onto the upper one)."""
    values = sorted(set(float(v) for v in column))
    out = []
    for lo, hi in zip(values[:-1], values[1:]):
        mid = lo / 2 + hi / 2
        out.append(lo if (mid >= hi or mid < lo) else mid)
    return out


def _fit_values(x, theta, subset, w, z):
    """Closed-form a, b, k_c of a stump, by loops."""
    n, k = w.shape
    num_a = den_a = num_b = den_b = 0.0
    k_c = np.zeros(k)
    for c in range(k):
        if subset[c]:
            for i in range(n):
                if x[i] > theta:
                    num_a += w[i, c] * z[i, c]
                    den_a += w[i, c]
                else:
                    num_b += w[i, c] * z[i, c]
                    den_b += w[i, c]
        else:
            k_c[c] = np.sum(w[:, c] * z[:, c]) / np.sum(w[:, c])
    a = num_a / den_a if den_a > 0 else 0.0
    b = num_b / den_b if den_b > 0 else 0.0
    return a, b, k_c


def _stump_output(x, theta, subset, a, b, k_c):
    h = np.empty((x.shape[0], subset.shape[0]))
    for c in range(subset.shape[0]):
        h[:, c] = np.where(x > theta, a, b) if subset[c] else k_c[c]
    return h


def _error(X, f, theta, subset, w, z):
    a, b, k_c = _fit_values(X[:, f], theta, subset, w, z)
    h = _stump_output(X[:, f], theta, subset, a, b, k_c)
    return float(np.sum(w * (z - h) ** 2)), (a, b, k_c)


def _best_split(X, subset, w, z):
    """Best (error, f, theta, values) for a fixed subset: first on ties."""
    best = (np.inf, None, None, None)
    for f in range(X.shape[1]):
        for theta in _thresholds(X[:, f]):
            err, vals = _error(X, f, theta, subset, w, z)
            if err < best[0]:
                best = (err, f, theta, vals)
    return best


def reference_round_exhaustive(X, w, z):
    k = w.shape[1]
    best = (np.inf,)
    for code in range(1, 2 ** k):
        subset = np.array([(code >> c) & 1 for c in range(k)], dtype=bool)
        err, f, theta, vals = _best_split(X, subset, w, z)
        if err < best[0]:
            best = (err, f, theta, subset, vals)
    return best


def reference_round_greedy(X, w, z):
    """The best-first nested sequence of [TMF2007], with plain loops."""
    k = w.shape[1]
    subset = np.zeros(k, dtype=bool)
    best = (np.inf,)
    for _ in range(k):
        step = (np.inf,)
        for c in range(k):
            if subset[c]:
                continue
            trial = subset.copy()
            trial[c] = True
            err, f, theta, vals = _best_split(X, trial, w, z)
            if err < step[0]:
                step = (err, f, theta, trial, vals)
        subset = step[3]
        if step[0] < best[0]:
            best = step
    return best


def reference_jointboost(X, y, k, n_rounds, search):
    n = X.shape[0]
    z = -np.ones((n, k))
    z[np.arange(n), y] = 1.0
    H = np.zeros((n, k))
    rounds = []
    for _ in range(n_rounds):
        w = np.exp(-z * H)
        w /= w.sum()
        err, f, theta, subset, (a, b, k_c) = search(X, w, z)
        H = H + _stump_output(X[:, f], theta, subset, a, b, k_c)
        rounds.append((f, theta, subset, a, b, k_c, err, np.exp(-z * H).sum()))
    return rounds


def _random_problem(n=40, d=3, k=3, seed=0, integer=False):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    if integer:
        X = np.round(2 * X)  # many repeated values
    W = rng.standard_normal((k, d))
    y = np.argmax(X @ W.T + rng.standard_normal((n, k)), axis=1)
    return X, y


def _assert_matches(path, rounds):
    for stump, err, loss, ref in zip(path.stumps, path.weighted_error,
                                     path.train_loss, rounds):
        f, theta, subset, a, b, k_c, ref_err, ref_loss = ref
        assert stump.feature == f
        assert stump.threshold == theta
        np.testing.assert_array_equal(stump.subset, subset)
        np.testing.assert_allclose([stump.a, stump.b], [a, b], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(stump.class_constants, np.where(subset, 0, k_c),
                                   rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(err, ref_err, rtol=1e-9, atol=1e-13)
        np.testing.assert_allclose(loss, ref_loss, rtol=1e-10)


# ---------------------------------------------------------------------------
# (a) each round against the references


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("integer", [False, True])
def test_exhaustive_matches_brute_force(seed, k, integer):
    X, y = _random_problem(k=k, seed=seed, integer=integer)
    path = jointboost(X, y.astype(np.intp), k, 3, subset_search="exhaustive")
    rounds = reference_jointboost(X, y, k, 3, reference_round_exhaustive)
    _assert_matches(path, rounds)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [3, 4])
@pytest.mark.parametrize("integer", [False, True])
def test_greedy_matches_slow_greedy(seed, k, integer):
    X, y = _random_problem(k=k, seed=seed, integer=integer)
    path = jointboost(X, y.astype(np.intp), k, 3)
    rounds = reference_jointboost(X, y, k, 3, reference_round_greedy)
    _assert_matches(path, rounds)


@pytest.mark.parametrize("seed", range(4))
def test_greedy_is_exhaustive_for_two_classes(seed):
    """With k = 2 the sequence {c}, {0, 1} plus the best singleton covers all
    three subsets."""
    X, y = _random_problem(k=2, seed=seed)
    greedy = jointboost(X, y.astype(np.intp), 2, 4)
    exact = reference_jointboost(X, y, 2, 4, reference_round_exhaustive)
    _assert_matches(greedy, exact)


def test_greedy_never_beats_exhaustive_pendigits():
    X, y = load_pendigits(return_X_y=True)
    X, y = X[:1000], y[:1000].astype(np.intp)
    greedy = jointboost(X, y, 10, 1)
    exact = jointboost(X, y, 10, 1, subset_search="exhaustive")
    assert exact.weighted_error[0] <= greedy.weighted_error[0] + 1e-15


@pytest.mark.parametrize("chunk", [1, 7, 100])
def test_greedy_threshold_blocks_do_not_matter(chunk):
    """The greedy search scans thresholds in blocks; block edges change nothing."""
    X, y = load_pendigits(return_X_y=True)
    X, y = X[:600], y[:600]
    groups = _Groups(X)
    z = np.where(y[:, None] == np.arange(10), 1.0, -1.0)
    w = np.random.default_rng(0).random((600, 10))
    w /= w.sum()
    sums = groups.side_sums(w, w * z)
    const = _ratio_sq((w * z).sum(axis=0), w.sum(axis=0))
    g1, t1, s1 = _greedy_subset(*sums, const)
    g2, t2, s2 = _greedy_subset(*sums, const, chunk=chunk)
    assert (g1, t1) == (g2, t2)
    np.testing.assert_array_equal(s1, s2)


# ---------------------------------------------------------------------------
# (b) monotonicity


def test_loss_decreases_and_error_bounded():
    X, y = load_pendigits(return_X_y=True)
    path = jointboost(X[:2000], y[:2000].astype(np.intp), 10, 30)
    # GentleBoost steps lie in [-1, 1], where exp(-x) <= 1 - x + (e - 2) x^2:
    # the exponential loss cannot increase
    assert np.all(np.diff(path.train_loss) <= 1e-12 * path.train_loss[:-1])
    assert path.train_loss[0] < 2000 * 10
    # weights sum to one: error of h = 0 is 1, the fitted stump does better
    assert np.all((path.weighted_error >= 0) & (path.weighted_error < 1))
    assert np.all(np.diff(path.elapsed) >= 0)


def test_train_loss_matches_decision_function():
    X, y = _random_problem(n=80, d=4, k=4, seed=3)
    clf = JointBoostClassifier(n_estimators=6).fit(X, y)
    z = np.where(y[:, None] == clf.classes_[None, :], 1.0, -1.0)
    for t, H in enumerate(clf.staged_decision_function(X)):
        np.testing.assert_allclose(clf.train_loss_[t], np.exp(-z * H).sum(), rtol=1e-12)


# ---------------------------------------------------------------------------
# (c) ties, constant features, repeated values, dtypes


def _stumps(clf):
    return (clf.stump_features_, clf.thresholds_, clf.class_subsets_, clf.stump_values_)


def _assert_same_stumps(c1, c2, feature_offset=0):
    f1, t1, s1, v1 = _stumps(c1)
    f2, t2, s2, v2 = _stumps(c2)
    np.testing.assert_array_equal(f1 + feature_offset, f2)
    np.testing.assert_array_equal(t1, t2)
    np.testing.assert_array_equal(s1, s2)
    np.testing.assert_array_equal(v1, v2)


def test_duplicate_features_tie_to_lowest_index():
    X, y = _random_problem(n=60, d=3, k=3, seed=1, integer=True)
    a = JointBoostClassifier(n_estimators=8).fit(X, y)
    b = JointBoostClassifier(n_estimators=8).fit(np.hstack([X, X]), y)
    _assert_same_stumps(a, b)


def test_constant_features_are_ignored():
    X, y = _random_problem(n=60, d=3, k=3, seed=2)
    a = JointBoostClassifier(n_estimators=8).fit(X, y)
    Xc = np.hstack([np.full((60, 2), 7.0), X, np.zeros((60, 1))])
    b = JointBoostClassifier(n_estimators=8).fit(Xc, y)
    _assert_same_stumps(a, b, feature_offset=2)


def test_all_features_constant():
    y = np.array([0, 1, 1, 2, 2, 2])
    clf = JointBoostClassifier(n_estimators=3).fit(np.ones((6, 2)), y)
    assert not clf.class_subsets_.any()
    assert np.all(np.isinf(clf.thresholds_))
    np.testing.assert_array_equal(clf.predict(np.zeros((2, 2))), [2, 2])
    assert np.all(np.diff(clf.train_loss_) <= 0)


def test_symmetric_tie_goes_to_first_class():
    """Two classes, equal weights: {0} and {1} have exactly equal gains."""
    X, y = _random_problem(n=50, d=2, k=2, seed=4)
    clf = JointBoostClassifier(n_estimators=1).fit(X, y)
    np.testing.assert_array_equal(clf.class_subsets_[0], [True, False])


def test_threshold_between_adjacent_floats():
    lo = 1.0
    hi = np.nextafter(lo, 2.0)
    X = np.array([[lo], [lo], [hi], [hi]])
    y = np.array([0, 0, 1, 1])
    clf = JointBoostClassifier(n_estimators=2).fit(X, y)
    assert lo <= clf.thresholds_[0] < hi
    np.testing.assert_array_equal(clf.predict(X), y)


def test_huge_values_do_not_overflow():
    X = np.array([[-1e308], [-1e308], [1e308], [1e308]])
    clf = JointBoostClassifier(n_estimators=2).fit(X, [0, 0, 1, 1])
    assert np.isfinite(clf.thresholds_[0])
    np.testing.assert_array_equal(clf.predict(X), [0, 0, 1, 1])


def test_float32_and_float64_give_same_stumps():
    X, y = _random_problem(n=100, d=4, k=4, seed=5)
    X32 = X.astype(np.float32)
    a = JointBoostClassifier(n_estimators=10).fit(X32, y)
    b = JointBoostClassifier(n_estimators=10).fit(X32.astype(np.float64), y)
    _assert_same_stumps(a, b)
    np.testing.assert_array_equal(a.decision_function(X32), b.decision_function(X32))


def test_row_order_does_not_change_stumps():
    X, y = _random_problem(n=100, d=4, k=4, seed=6, integer=True)
    perm = np.random.default_rng(0).permutation(100)
    a = JointBoostClassifier(n_estimators=6).fit(X, y)
    b = JointBoostClassifier(n_estimators=6).fit(X[perm], y[perm])
    np.testing.assert_array_equal(a.stump_features_, b.stump_features_)
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)
    np.testing.assert_array_equal(a.class_subsets_, b.class_subsets_)
    np.testing.assert_allclose(a.stump_values_, b.stump_values_, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------------------
# (d) scikit-learn's checks


@parametrize_with_checks([
    JointBoostClassifier(n_estimators=30),
    JointBoostClassifier(n_estimators=10, subset_search="exhaustive"),
])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# ---------------------------------------------------------------------------
# (e) staged predictions and the fitted model


def test_staged_last_equals_final():
    X, y = load_pendigits(return_X_y=True)
    Xt, _ = load_pendigits(subset="test", return_X_y=True)
    clf = JointBoostClassifier(n_estimators=15).fit(X[:1500], y[:1500])
    staged = list(clf.staged_predict(Xt))
    assert len(staged) == 15
    np.testing.assert_array_equal(staged[-1], clf.predict(Xt))
    scores = list(clf.staged_decision_function(Xt))
    np.testing.assert_allclose(scores[-1], clf.decision_function(Xt), rtol=1e-12)
    assert scores[0].shape == (Xt.shape[0], 10)


def test_stump_values_table():
    X, y = _random_problem(n=80, d=3, k=4, seed=7)
    clf = JointBoostClassifier(n_estimators=5).fit(X, y)
    v = clf.stump_values_
    assert v.shape == (5, 2, 4)
    for m in range(5):
        S = clf.class_subsets_[m]
        # shared a (row 1) and b (row 0) inside S, one k_c per class outside
        assert np.ptp(v[m, 0, S]) == 0 and np.ptp(v[m, 1, S]) == 0
        np.testing.assert_array_equal(v[m, 0, ~S], v[m, 1, ~S])
        assert np.all(np.abs(v[m]) <= 1)


def test_binary_decision_is_one_dimensional():
    X, y = _random_problem(n=60, d=3, k=2, seed=8)
    labels = np.array(["no", "yes"])[y]
    clf = JointBoostClassifier(n_estimators=5).fit(X, labels)
    d = clf.decision_function(X)
    assert d.shape == (60,)
    np.testing.assert_array_equal(clf.predict(X), np.where(d > 0, "yes", "no"))
    staged = list(clf.staged_decision_function(X))
    assert staged[0].shape == (60,)
    np.testing.assert_allclose(staged[-1], d, rtol=1e-12)


def test_pendigits_accuracy():
    X, y = load_pendigits(return_X_y=True)
    Xt, yt = load_pendigits(subset="test", return_X_y=True)
    clf = JointBoostClassifier(n_estimators=40).fit(X, y)
    errors = [np.mean(p != yt) for p in clf.staged_predict(Xt)]
    assert errors[-1] < 0.2  # measured 0.171
    assert errors[-1] < errors[9]


def test_letter_runs_fast_enough():
    require_data("letter/letter-recognition.data")
    from mcsparse.datasets import load_letter

    X, y = load_letter(return_X_y=True)
    clf = JointBoostClassifier(n_estimators=10).fit(X, y)
    assert clf.class_subsets_.shape == (10, 26)
    assert clf.score(X, y) > 0.3


def test_verbose_prints(capsys):
    X, y = _random_problem(seed=9)
    JointBoostClassifier(n_estimators=2, verbose=1).fit(X, y)
    out = capsys.readouterr().out
    assert out.count("JointBoost round") == 2


def test_callback_stops():
    X, y = _random_problem(seed=10)
    seen = []
    path = jointboost(X, y.astype(np.intp), 3, 10,
                      callback=lambda r: seen.append(r.round) or r.round == 3)
    assert seen == [1, 2, 3] and len(path.stumps) == 3


# ---------------------------------------------------------------------------
# (f) bad inputs


@pytest.mark.parametrize("n_estimators, err", [
    (0, ValueError), (-3, ValueError), (1.5, TypeError), (True, TypeError),
    ("10", TypeError),
])
def test_bad_n_estimators(n_estimators, err):
    X, y = _random_problem()
    with pytest.raises(err, match="n_estimators"):
        JointBoostClassifier(n_estimators=n_estimators).fit(X, y)


def test_bad_subset_search():
    X, y = _random_problem()
    with pytest.raises(ValueError, match="subset_search"):
        JointBoostClassifier(subset_search="bfs").fit(X, y)
    X = np.random.default_rng(0).standard_normal((40, 2))
    with pytest.raises(ValueError, match="16 classes"):
        JointBoostClassifier(subset_search="exhaustive").fit(X, np.arange(40) % 17)


def test_one_class():
    with pytest.raises(ValueError, match="at least 2 classes"):
        JointBoostClassifier().fit(np.ones((5, 2)), np.zeros(5))


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite(bad):
    X, y = _random_problem()
    X[3, 1] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        JointBoostClassifier().fit(X, y)


def test_sparse_rejected():
    X, y = _random_problem()
    with pytest.raises(TypeError, match="[Ss]parse"):
        JointBoostClassifier().fit(sp.csr_matrix(X), y)


def test_predict_wrong_width_and_unfitted():
    X, y = _random_problem()
    clf = JointBoostClassifier(n_estimators=2)
    with pytest.raises(Exception, match="not fitted"):
        clf.predict(X)
    clf.fit(X, y)
    with pytest.raises(ValueError, match="features"):
        clf.predict(X[:, :2])


def test_continuous_target_rejected():
    X, _ = _random_problem()
    with pytest.raises(ValueError, match="Unknown label type"):
        JointBoostClassifier().fit(X, np.linspace(0, 1, X.shape[0]))


def test_greedy_differs_from_exhaustive_and_follows_its_reference():
    """A problem (found by search) where the best-first sequence misses the
    best subset in round 1: greedy must follow the slow greedy reference,
    not the brute force."""
    X, y = _random_problem(k=4, seed=14)
    greedy = jointboost(X, y.astype(np.intp), 4, 1)
    exact = jointboost(X, y.astype(np.intp), 4, 1, subset_search="exhaustive")
    assert greedy.weighted_error[0] > exact.weighted_error[0] + 1e-6
    ref = reference_jointboost(X, y, 4, 1, reference_round_greedy)
    _assert_matches(greedy, ref)
    ref = reference_jointboost(X, y, 4, 1, reference_round_exhaustive)
    _assert_matches(exact, ref)
