"""ShareBoost's other selection rules and penalties (§3.1, §3.3), early stopping, warm start.

Each rule's choice is checked against its definition evaluated directly, one
candidate at a time, with SciPy's optimisers (written here from the paper's
definitions, without the package's vectorised Newton code).
"""

import warnings

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize, minimize_scalar
from scipy.special import logsumexp, softmax
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from mcsparse import ShareBoostClassifier
from mcsparse.features import DecisionStumps, RawFeatures
from mcsparse.solvers import shareboost_path
from mcsparse.loss import make_penalty
from mcsparse.solvers._objective import LinearObjective

TIGHT = dict(tol=1e-10, max_iter=10000)


def _problem(n=60, d=6, k=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    W = rng.standard_normal((k, d)) * (rng.random(d) < 0.5)
    y = np.argmax(X @ W.T + 1.5 * rng.standard_normal((n, k)), axis=1)
    return X, y.astype(np.intp)


# --- the definitions, directly ------------------------------------------------

def _penalty(W, alpha, penalty, beta):
    """Value and gradient, written from §3.3 (with the documented constant)."""
    if alpha == 0 or W.size == 0:
        return 0.0, np.zeros_like(W)
    if penalty == "fro":
        return alpha * np.sum(W ** 2), 2 * alpha * W
    S = np.sum(np.exp(beta * W) + np.exp(-beta * W), axis=0)
    value = alpha / beta * np.sum(np.log(S) - np.log(2 * W.shape[0]))
    return value, alpha * (np.exp(beta * W) - np.exp(-beta * W)) / S


def _objective(S, y, W, alpha, penalty, beta):
    """F = mean eq. (3) loss at scores S + penalty(W); gradient w.r.t. S and W."""
    n, k = S.shape
    Z = S + 1.0 - np.eye(k)[y]
    loss = np.mean(logsumexp(Z, axis=1) - S[np.arange(n), y])
    value, grad_W = _penalty(W, alpha, penalty, beta)
    grad_S = (softmax(Z, axis=1) - np.eye(k)[y]) / n
    return loss + value, grad_S, grad_W


def _brute_force(rule, Xall, y, k, support, W, b, alpha, penalty, beta, fit_intercept):
    """Value of ``rule`` for every candidate not in ``support``; inf for those in it."""
    n, m = Xall.shape
    S0 = Xall[:, support] @ W.T + b
    values = np.full(m, np.inf)
    for j in range(m):
        if j in support:
            continue
        x = Xall[:, j]
        if rule == "best_column":  # eq. (6)
            def f(u):
                F, gS, gW = _objective(S0 + np.outer(x, u), y,
                                       np.column_stack([W, u]), alpha, penalty, beta)
                return F, gS.T @ x + gW[:, -1]

            values[j] = minimize(f, np.zeros(k), jac=True, method="BFGS",
                                 options={"gtol": 1e-11}).fun
        elif rule == "line_search":  # eq. (7)
            _, gS, _ = _objective(S0, y, np.column_stack([W, np.zeros(k)]),
                                  alpha, penalty, beta)
            g = gS.T @ x  # G[:, j]; the penalty's gradient is zero on a zero column

            def f(eta):
                u = -eta * g
                return _objective(S0 + np.outer(x, u), y, np.column_stack([W, u]),
                                  alpha, penalty, beta)[0]

            values[j] = minimize_scalar(f, bracket=(0.0, 1.0), tol=1e-12).fun
        else:  # full refit on support + {j}
            cols = list(support) + [j]
            Xs = Xall[:, cols]
            t = len(cols)

            def f(theta):
                Wt = theta[: k * t].reshape(k, t)
                bt = theta[k * t:] if fit_intercept else np.zeros(k)
                F, gS, gW = _objective(Xs @ Wt.T + bt, y, Wt, alpha, penalty, beta)
                grad = [(gS.T @ Xs + gW).ravel()]
                if fit_intercept:
                    grad.append(gS.sum(axis=0))
                return F, np.concatenate(grad)

            theta0 = np.zeros(k * t + (k if fit_intercept else 0))
            values[j] = minimize(f, theta0, jac=True, method="BFGS",
                                 options={"gtol": 1e-10, "maxiter": 5000}).fun
    return values


def _intercept_only(y, k):
    n = len(y)
    res = minimize(lambda b: _objective(np.tile(b, (n, 1)), y, np.zeros((k, 0)),
                                        0, "fro", 1)[0], np.zeros(k), method="BFGS",
                   options={"gtol": 1e-11})
    return res.x


CASES = [  # (penalty, alpha, beta, fit_intercept)
    ("fro", 0.0, 10.0, True),
    ("fro", 0.02, 10.0, False),
    ("linf1_smooth", 0.05, 4.0, True),
]


@pytest.mark.parametrize("family", ["raw", "stumps"])
@pytest.mark.parametrize("penalty, alpha, beta, fit_intercept", CASES)
@pytest.mark.parametrize("rule", ["best_column", "line_search", "full"])
def test_rule_choice_equals_brute_force(rule, penalty, alpha, beta, fit_intercept, family):
    if family == "raw":
        X, y = _problem(n=60, d=6, seed=1)
        features = RawFeatures().fit(X)
    else:
        X, y = _problem(n=20, d=2, seed=2)
        features = DecisionStumps().fit(X)
    k, n_rounds = 3, 3
    path = shareboost_path(X, y, n_classes=k, n_rounds=n_rounds, features=features,
                           alpha=alpha, penalty=penalty, beta=beta,
                           fit_intercept=fit_intercept, selection=rule, **TIGHT)
    Xall = features.training_columns(np.arange(features.n_candidates_))
    sel = path.selected_features
    for t in range(1, n_rounds + 1):
        if t == 1:
            W = np.zeros((k, 0))
            b = _intercept_only(y, k) if fit_intercept else np.zeros(k)
        else:
            W, b = path.coefs[t - 2], path.intercepts[t - 2]
        values = _brute_force(rule, Xall, y, k, list(sel[: t - 1]), W, b, alpha,
                              penalty, beta, fit_intercept)
        best = values.min()
        # the chosen candidate is the brute-force minimiser (up to the
        # optimisers' precision, which only matters for near-ties)
        assert values[sel[t - 1]] <= best + 1e-7 * abs(best), (t, sel[t - 1],
                                                                np.argmin(values))
        np.testing.assert_allclose(path.selection_scores[t - 1], values[sel[t - 1]],
                                   rtol=1e-7)
        if rule == "full":
            np.testing.assert_allclose(path.train_loss[t - 1], best, rtol=1e-7)


def test_rules_differ_from_the_gradient_rule_somewhere():
    """The brute-force test is not vacuous: on some problem the rules disagree."""
    X, y = _problem(n=80, d=20, k=4, seed=3)
    paths = {rule: shareboost_path(X, y, n_classes=4, n_rounds=6, selection=rule,
                                   alpha=0.01).selected_features
             for rule in ["gradient_l1", "best_column", "line_search", "full"]}
    assert len({tuple(p) for p in paths.values()}) > 1, paths


def test_ties_go_to_the_lowest_id_and_repeats_are_never_selected():
    X, y = _problem(n=50, d=4, seed=4)
    X = np.column_stack([X, X[:, 2], X[:, 2]])  # columns 2, 4 and 5 are equal
    for rule in ["gradient_l1", "best_column", "line_search", "full"]:
        with pytest.warns(UserWarning, match="stopped after 4 of 6 rounds"):
            path = shareboost_path(X, y, n_classes=3, n_rounds=6, selection=rule,
                                   alpha=0.01, **TIGHT)
        sel = list(path.selected_features)
        # of the three equal columns the lowest id is chosen, the others never
        assert sorted(sel) == [0, 1, 2, 3], (rule, sel)


# --- penalties ------------------------------------------------------------------

@pytest.mark.parametrize("beta", [1.0, 10.0, 1e3])
def test_linf1_smooth_penalty_value_and_gradient(beta):
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 3))
    penalty = make_penalty("linf1_smooth", 0.7, beta)
    value, grad = penalty.value_gradient(W)
    if beta < 100:  # the naive formula overflows beyond
        np.testing.assert_allclose(value, _penalty(W, 0.7, "linf1_smooth", beta)[0])
    # close to alpha ||W||_{inf,1}, within alpha log(2k) / beta per column
    exact = 0.7 * np.abs(W).max(axis=0).sum()
    assert exact - 0.7 * 3 * np.log(8) / beta - 1e-12 <= value <= exact + 1e-12
    f = lambda w: penalty.value_gradient(w.reshape(4, 3))[0]  # noqa: E731
    g = lambda w: penalty.value_gradient(w.reshape(4, 3))[1].ravel()  # noqa: E731
    assert check_grad(f, g, W.ravel(), epsilon=1e-7 / beta) < 1e-5 * max(1, beta)
    # stable for huge beta * W
    v, gr = make_penalty("linf1_smooth", 0.7, 1e3).value_gradient(W * 1e6)
    assert np.isfinite(v) and np.all(np.isfinite(gr))
    # zero at W = 0, with a zero gradient: the gradient rule ignores the penalty
    v0, g0 = penalty.value_gradient(np.zeros((4, 2)))
    assert v0 == 0 and np.all(g0 == 0)


@pytest.mark.parametrize("penalty", ["fro", "linf1_smooth"])
def test_column_penalty_gradient_and_hessian(penalty):
    rng = np.random.default_rng(1)
    U = rng.standard_normal((5, 3))
    penalty = make_penalty(penalty, 0.3, 3.0)
    value, grad, hess = penalty.column_terms(U)
    for c in range(5):
        u = U[c]
        v_ref, g_ref = penalty.value_gradient(u[:, None])
        np.testing.assert_allclose(value[c], v_ref)
        np.testing.assert_allclose(grad[c], g_ref[:, 0])
        num = np.empty((3, 3))
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1e-6
            num[:, i] = (penalty.column_terms((u + e)[None])[1][0]
                         - penalty.column_terms((u - e)[None])[1][0]) / 2e-6
        np.testing.assert_allclose(hess[c], num, atol=1e-7)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_refit_objective_gradient_linf1_smooth(fit_intercept):
    X, y = _problem(n=60, d=5, k=4)
    obj = LinearObjective(X, y, n_classes=4, penalty=make_penalty("linf1_smooth", 0.3, 5.0),
                          fit_intercept=fit_intercept)
    x0 = np.random.default_rng(0).standard_normal(4 * 5 + (4 if fit_intercept else 0))
    assert check_grad(lambda p: obj.value_grad(p, 5)[0],
                      lambda p: obj.value_grad(p, 5)[1], x0) < 1e-6
    W, b = obj.unpack(x0, 5)
    expected = _objective(X @ W.T + b, y, W, 0.3, "linf1_smooth", 5.0)[0]
    np.testing.assert_allclose(obj.value_grad(x0, 5)[0], expected, rtol=1e-12)


def test_linf1_smooth_path_and_default_rule_ignore_penalty_in_selection_score():
    X, y = _problem(n=80, d=8, seed=5)
    fro = shareboost_path(X, y, n_classes=3, n_rounds=1, alpha=0.1)
    linf = shareboost_path(X, y, n_classes=3, n_rounds=1, alpha=0.1,
                           penalty="linf1_smooth")
    # round 1 starts from the same W = 0: same gradient, same choice and score
    assert fro.selected_features[0] == linf.selected_features[0]
    assert fro.selection_scores[0] == linf.selection_scores[0]
    clf = ShareBoostClassifier(n_features_to_select=5, penalty="linf1_smooth",
                               alpha=0.05).fit(X, y)
    assert np.all(np.diff(clf.train_loss_) <= 1e-12)


# --- choosing alpha, early stopping -----------------------------------------------

def test_grid_search_over_alpha_selection_and_penalty():
    X, y = _problem(n=90, d=8, seed=6)
    search = GridSearchCV(
        ShareBoostClassifier(n_features_to_select=3),
        {"alpha": [0.0, 0.01], "selection": ["gradient_l1", "best_column"],
         "penalty": ["fro", "linf1_smooth"]},
        cv=3,
    ).fit(X, y)
    assert search.best_estimator_.n_iter_ == 3


def _overfitting_problem():
    """Few samples, 3 informative features, 100 noise features, no penalty."""
    rng = np.random.default_rng(7)
    n = 90
    y = rng.integers(0, 3, n)
    X = rng.standard_normal((n, 103))
    X[:, :3] += 1.5 * np.eye(3)[y]
    return X, y


def test_early_stopping_restores_the_best_round():
    X, y = _overfitting_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ShareBoostClassifier(n_features_to_select=40, validation_fraction=0.3,
                                   n_iter_no_change=4, random_state=0).fit(X, y)
    best = clf.best_iteration_
    assert clf.n_iter_ == best < 40
    scores = clf.validation_scores_
    assert len(scores) == best + 4 and len(clf.validation_errors_) == best + 4
    assert scores[best - 1] == scores.min() and np.all(scores[best:] >= scores[best - 1])
    assert clf.selected_features_.shape == (best,)
    assert len(clf.train_loss_) == best and len(list(clf.staged_predict(X))) == best
    np.testing.assert_allclose(list(clf.staged_decision_function(X))[-1],
                               clf.decision_function(X))
    assert np.count_nonzero(np.abs(clf.coef_).sum(axis=0)) == best
    # the recorded validation losses are those of the staged models
    mask = clf._validation_mask
    assert mask.sum() == 27
    Xv, yv = X[mask], np.searchsorted(clf.classes_, y[mask])
    for t, proba in enumerate(clf.staged_predict_proba(Xv), 1):
        logits = np.log(proba)
        Z = logits + 1.0 - np.eye(3)[yv]
        loss = np.mean(logsumexp(Z, axis=1) - logits[np.arange(len(yv)), yv])
        np.testing.assert_allclose(loss, scores[t - 1], rtol=1e-10)
    # the same as fitting the best number of rounds on the same split
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = ShareBoostClassifier(n_features_to_select=best, validation_fraction=0.3,
                                   random_state=0).fit(X, y)
    np.testing.assert_array_equal(ref.selected_features_, clf.selected_features_)
    np.testing.assert_array_equal(ref.coef_, clf.coef_)
    assert ref.n_iter_ == best and len(ref.validation_scores_) == best


def test_validation_fraction_without_early_stopping_keeps_the_path():
    X, y = _problem(n=90, d=8, seed=8)
    clf = ShareBoostClassifier(n_features_to_select=6, validation_fraction=0.2,
                               random_state=1).fit(X, y)
    assert clf.n_iter_ == 6 and clf.validation_scores_.shape == (6,)
    assert clf.best_iteration_ == np.argmin(clf.validation_scores_) + 1
    plain = ShareBoostClassifier(n_features_to_select=6).fit(X, y)
    assert not hasattr(plain, "validation_scores_")


# --- warm start -----------------------------------------------------------------------

@pytest.mark.parametrize("features, selection", [("raw", "gradient_l1"),
                                                 ("stumps", "gradient_l1"),
                                                 ("raw", "best_column")])
def test_warm_start_equals_one_long_fit(features, selection):
    X, y = _problem(n=80, d=8, seed=9)
    params = dict(features=features, selection=selection, alpha=0.01, **TIGHT)
    clf = ShareBoostClassifier(n_features_to_select=3, warm_start=True, **params).fit(X, y)
    coef3 = clf.coef_.copy()
    clf.set_params(n_features_to_select=7).fit(X, y)
    long = ShareBoostClassifier(n_features_to_select=7, **params).fit(X, y)
    np.testing.assert_array_equal(clf.selected_features_, long.selected_features_)
    np.testing.assert_allclose(clf.coef_, long.coef_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(clf.intercept_, long.intercept_, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(clf.train_loss_, long.train_loss_, rtol=1e-10)
    assert clf.n_iter_ == 7 and len(list(clf.staged_predict(X))) == 7
    np.testing.assert_array_equal(clf.predict(X), long.predict(X))
    assert coef3.shape[0] == clf.coef_.shape[0]


def test_warm_start_same_size_is_a_no_op_and_smaller_raises():
    X, y = _problem(n=60, d=8, seed=10)
    clf = ShareBoostClassifier(n_features_to_select=4, warm_start=True).fit(X, y)
    coef = clf.coef_
    assert clf.fit(X, y).coef_ is coef
    with pytest.raises(ValueError, match="fewer than the n_iter_=4"):
        clf.set_params(n_features_to_select=2).fit(X, y)
    with pytest.raises(ValueError, match="same data"):
        clf.set_params(n_features_to_select=6).fit(X[:50], y[:50])
    with pytest.raises(ValueError, match="same data"):
        clf.fit(X, (y + 1) % 3 + 5)
    # without warm_start a smaller fit starts over
    clf.set_params(warm_start=False, n_features_to_select=2).fit(X, y)
    assert clf.n_iter_ == 2


def test_warm_start_with_early_stopping_continues_the_history():
    X, y = _overfitting_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = ShareBoostClassifier(n_features_to_select=3, validation_fraction=0.3,
                                   random_state=0, warm_start=True).fit(X, y)
        clf.set_params(n_features_to_select=6).fit(X, y)
        long = ShareBoostClassifier(n_features_to_select=6, validation_fraction=0.3,
                                    random_state=0).fit(X, y)
    np.testing.assert_array_equal(clf.selected_features_, long.selected_features_)
    np.testing.assert_allclose(clf.validation_scores_, long.validation_scores_,
                               rtol=1e-6)


# --- parameters ----------------------------------------------------------------------

X_OK, Y_OK = _problem(n=30, d=4)


@pytest.mark.parametrize(
    "params, error, match",
    [
        ({"selection": "best"}, ValueError, "selection must be one of"),
        ({"selection": None}, ValueError, "selection must be one of"),
        ({"penalty": "l1"}, ValueError, "penalty must be one of"),
        ({"beta": 0.5}, ValueError, "beta"),
        ({"beta": np.inf}, ValueError, "beta"),
        ({"beta": "big"}, TypeError, "beta"),
        ({"validation_fraction": 1.0}, ValueError, "validation_fraction"),
        ({"validation_fraction": 0}, ValueError, "validation_fraction"),
        ({"validation_fraction": "0.1"}, TypeError, "validation_fraction"),
        ({"validation_fraction": 0.2, "n_iter_no_change": 0}, ValueError,
         "n_iter_no_change"),
        ({"validation_fraction": 0.2, "n_iter_no_change": 2.5}, TypeError,
         "n_iter_no_change"),
        ({"n_iter_no_change": 3}, ValueError, "needs validation_fraction"),
        ({"warm_start": "yes"}, TypeError, "warm_start"),
    ],
)
def test_bad_parameters(params, error, match):
    with pytest.raises(error, match=match):
        ShareBoostClassifier(**params).fit(X_OK, Y_OK)


def test_full_refuses_large_problems(monkeypatch):
    import mcsparse.solvers._shareboost as solver

    monkeypatch.setattr(solver, "FULL_MAX_WORK", 100)
    with pytest.raises(ValueError, match='selection="full" refits every candidate'):
        ShareBoostClassifier(n_features_to_select=2, selection="full").fit(X_OK, Y_OK)
    # the other rules are not limited
    ShareBoostClassifier(n_features_to_select=2, selection="best_column").fit(X_OK, Y_OK)


def test_solver_checks_its_arguments():
    with pytest.raises(ValueError, match="selection"):
        shareboost_path(X_OK, Y_OK, n_classes=3, n_rounds=1, selection="x")
    with pytest.raises(ValueError, match="penalty"):
        shareboost_path(X_OK, Y_OK, n_classes=3, n_rounds=1, penalty="x")
    with pytest.raises(ValueError, match="beta"):
        shareboost_path(X_OK, Y_OK, n_classes=3, n_rounds=1, penalty="linf1_smooth",
                        beta=0.1)
