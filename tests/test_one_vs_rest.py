"""The one-vs-rest greedy baseline (Fig. 2 of [SWS2011])."""

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from mcsparse import OneVsRestGreedyClassifier, ShareBoostClassifier


def _problem(n=120, d=6, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.argmax(X[:, :k] + 0.7 * rng.standard_normal((n, k)), axis=1)
    return X, y


@pytest.mark.parametrize("alpha", [1e-2, 0.1])
def test_binary_problems_are_penalised_logistic_regressions(alpha):
    # with every feature selected, problem c is l2-penalised binary logistic
    # regression: compare with scikit-learn's (C = 1 / (n alpha))
    X, y = _problem()
    clf = OneVsRestGreedyClassifier(n_features_to_select=X.shape[1], alpha=alpha,
                                    tol=1e-10, max_iter=2000).fit(X, y)
    for c in range(3):
        ref = LogisticRegression(C=1.0 / (len(y) * alpha), tol=1e-12,
                                 max_iter=10000).fit(X, y == c)
        np.testing.assert_allclose(clf.coef_[c], ref.coef_[0], rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(clf.intercept_[c], ref.intercept_[0],
                                   rtol=1e-4, atol=1e-6)


def test_first_feature_of_each_problem_has_the_largest_binary_gradient():
    X, y = _problem(seed=1)
    clf = OneVsRestGreedyClassifier(n_features_to_select=1).fit(X, y)
    for c in range(3):
        z = (y == c).astype(float)
        p = np.full(len(y), z.mean())  # the intercept-only model
        g = np.abs(X.T @ (p - z))
        assert clf.selected_features_[c, 0] == np.argmax(g)


def test_distinct_feature_count_and_staged_path():
    X, y = _problem(d=10, k=4, seed=2)
    clf = OneVsRestGreedyClassifier(n_features_to_select=4).fit(X, y)
    assert clf.selected_features_.shape == (4, 4)
    counts = clf.n_distinct_features_
    assert counts[0] == np.unique(clf.selected_features_[:, 0]).size
    assert counts[-1] == clf.union_features_.size == clf.support_.sum()
    assert np.all(np.diff(counts) >= 0)
    staged = list(clf.staged_predict(X))
    assert len(staged) == 4
    np.testing.assert_array_equal(staged[-1], clf.predict(X))
    np.testing.assert_allclose(clf.decision_function(X), X @ clf.coef_.T + clf.intercept_)


def test_stumps_family_shared_by_the_binary_problems(pendigits_small):
    X, y, X_test, y_test = pendigits_small
    ovr = OneVsRestGreedyClassifier(n_features_to_select=8, features="stumps",
                                    alpha=1e-5).fit(X, y)
    assert ovr.coef_.shape == (10, ovr.union_features_.size)
    assert ovr.features_.thresholds_.shape == ovr.union_features_.shape
    assert ovr.score(X_test, y_test) > 0.7
    # ShareBoost reaches at least this accuracy with no more stumps than OvR reads
    share = ShareBoostClassifier(n_features_to_select=int(ovr.n_distinct_features_[-1]),
                                 features="stumps", alpha=1e-5).fit(X, y)
    assert share.score(X_test, y_test) >= ovr.score(X_test, y_test) - 0.02


def test_one_class_is_rejected():
    with pytest.raises(ValueError, match="at least 2 classes"):
        OneVsRestGreedyClassifier().fit(np.ones((4, 2)), [1, 1, 1, 1])
