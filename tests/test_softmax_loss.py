"""The plain soft-max loss (``loss="softmax"``), tested like the margin loss.

Its Cython row kernel against its NumPy twin and the definition (float32 and
float64, edge sizes), its gradient and Hessian products against finite
differences, the fused pass and the exact Hessian columns of the objective
with it, the refit against SciPy's minimiser of the same objective written
from the definition, and fits through ``ShareBoostClassifier(loss=...)``.
"""

import numpy as np
import pytest
from scipy.optimize import check_grad, minimize
from scipy.special import logsumexp

from mcsparse import ShareBoostClassifier
from mcsparse.loss import Frobenius, MulticlassLogisticLoss, SoftmaxLoss, make_loss
from mcsparse.loss._softmax import softmax_rows_numpy
from mcsparse.solvers import shareboost_path
from mcsparse.solvers._columns import SelectedColumns
from mcsparse.solvers._objective import LinearObjective


def _definition(S, y):
    return logsumexp(S, axis=1) - S[np.arange(S.shape[0]), y]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n, k", [(1, 1), (1, 4), (255, 3), (256, 5), (257, 2), (600, 10)])
def test_kernel_matches_twin_and_definition(dtype, n, k):
    rng = np.random.default_rng(n + k)
    S = (4 * rng.standard_normal((n, k))).astype(dtype)
    y = rng.integers(0, k, n).astype(np.intp)
    w = rng.uniform(0.1, 2.0, n)
    loss_ref, grad_ref = softmax_rows_numpy(S, y)
    rtol = 1e-12 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(loss_ref, _definition(S.astype(np.float64), y), rtol=1e-12,
                               atol=1e-12)
    out = np.empty((n, k))
    rows = SoftmaxLoss().rows(np.ascontiguousarray(S, dtype=np.float64), y, out)
    np.testing.assert_allclose(rows, loss_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(out, grad_ref, rtol=1e-12, atol=1e-14)
    mean, grad = SoftmaxLoss().loss_gradient(S, y, w)  # validated, float32 kept as such
    assert grad.dtype == dtype
    scaled = w / w.max()
    np.testing.assert_allclose(mean, scaled @ loss_ref / scaled.sum(), rtol=rtol)
    np.testing.assert_allclose(grad, scaled[:, None] * grad_ref / scaled.sum(), rtol=rtol,
                               atol=1e-7)


def test_empty_rows_and_bad_input():
    out = np.empty((0, 3))
    assert SoftmaxLoss().rows(np.zeros((0, 3)), np.zeros(0, np.intp), out).shape == (0,)
    with pytest.raises(ValueError, match=r"outside \[0, 3\)"):
        SoftmaxLoss().sum_gradient(np.zeros((2, 3)), np.array([0, 3]), None, np.empty((2, 3)))
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        SoftmaxLoss().loss_gradient(np.zeros((2, 3)), [0, 3])
    with pytest.raises(ValueError, match="NaN"):
        SoftmaxLoss().loss_gradient(np.array([[np.nan, 0.0]]), [0])
    with pytest.raises(ValueError, match="loss must be one of"):
        make_loss("hinge")


def test_is_the_margin_loss_without_margin():
    rng = np.random.default_rng(3)
    S, y = 3 * rng.standard_normal((50, 4)), rng.integers(0, 4, 50)
    soft = SoftmaxLoss().loss_gradient(S, y)
    margin0 = MulticlassLogisticLoss(margin=0.0).loss_gradient(S, y)
    np.testing.assert_allclose(soft[0], margin0[0], rtol=1e-13)
    np.testing.assert_allclose(soft[1], margin0[1], rtol=1e-12, atol=1e-16)
    assert SoftmaxLoss.shift_invariant and MulticlassLogisticLoss.shift_invariant


def test_gradient_and_hessian_product_by_finite_differences():
    rng = np.random.default_rng(1)
    loss = SoftmaxLoss()
    S, y = rng.standard_normal((30, 4)), rng.integers(0, 4, 30).astype(np.intp)
    w, U = rng.uniform(0.5, 2, 30), rng.standard_normal((30, 4))
    f = lambda s: loss.sum_gradient(s.reshape(30, 4), y, w, np.empty((30, 4)))  # noqa: E731

    def g(s):
        R = np.empty((30, 4))
        loss.sum_gradient(s.reshape(30, 4), y, w, R)
        return R.ravel()

    assert check_grad(f, g, S.ravel()) < 2e-5  # of a gradient of norm about 5
    R = g(S).reshape(30, 4)
    HU = loss.hessian_product(loss.proba(R, y, w), w, U)
    eps = 1e-6
    fd = (g(S + eps * U) - g(S - eps * U)).reshape(30, 4) / (2 * eps)
    np.testing.assert_allclose(HU, fd, atol=1e-8)


def _objective(rng, penalty=Frobenius(0.05)):
    n = 90
    store = SelectedColumns(n, 2, row_block=40)
    store.put(rng.standard_normal((n, 3)), 0, center=True)
    store.put(rng.standard_normal((n, 2)) * (rng.random((n, 1)) < 0.3), 3)  # row-sparse
    y = rng.integers(0, 3, n)
    return LinearObjective(store, y, rng.uniform(0.2, 2, n), n_classes=3, loss=SoftmaxLoss(),
                           penalty=penalty)


def test_objective_gradient_hessian_and_flat_directions():
    rng = np.random.default_rng(5)
    obj = _objective(rng)
    x = rng.standard_normal(obj.n_params(5))
    assert check_grad(lambda z: obj.evaluate(z, 5).value,
                      lambda z: obj.evaluate(z, 5).grad, x) < 1e-6
    point = obj.evaluate(x, 5)
    v = rng.standard_normal(x.size)
    fd = (obj.evaluate(x + 1e-6 * v, 5).grad - obj.evaluate(x - 1e-6 * v, 5).grad) / 2e-6
    np.testing.assert_allclose(obj.hessian_product(v, 5, point=point), fd, atol=1e-7)
    full = np.column_stack([obj.hessian_product(e, 5, point=point) for e in np.eye(x.size)])
    np.testing.assert_allclose(obj.hessian_columns(0, 5, intercept=True, point=point), full,
                               atol=1e-14)
    flat_obj = _objective(np.random.default_rng(5), penalty=None)
    d = rng.standard_normal(x.size)
    flat = d - flat_obj.flat_free(d.copy())
    assert np.abs(flat).max() > 0.1
    np.testing.assert_allclose(flat_obj.evaluate(x + 3.0 * flat, 5).value,
                               flat_obj.evaluate(x, 5).value, rtol=1e-13)


def test_path_reaches_scipys_minimum_of_the_definition():
    rng = np.random.default_rng(0)
    n, d, k, alpha = 150, 6, 3, 0.02
    X = rng.standard_normal((n, d))
    y = np.argmax(X @ rng.standard_normal((d, k)) + rng.standard_normal((n, k)), axis=1)
    path = shareboost_path(X, y, n_classes=k, n_rounds=3, loss=SoftmaxLoss(), alpha=alpha,
                           tol=1e-10, max_iter=1000)
    cols = path.selected_features
    Xs = X[:, cols]

    def objective(z):
        W, b = z[:k * 3].reshape(k, 3), z[k * 3:]
        return np.mean(_definition(Xs @ W.T + b, y)) + alpha * np.sum(W * W)

    ref = minimize(objective, np.zeros(k * 3 + k), method="BFGS", options=dict(gtol=1e-10))
    W_ref = ref.x[:k * 3].reshape(k, 3)
    np.testing.assert_allclose(path.train_loss[-1], ref.fun, rtol=1e-9)
    np.testing.assert_allclose(path.coefs[-1], W_ref, atol=1e-5)
    # the soft-max intercept is defined up to a shift: compare the centred ones
    b, b_ref = path.intercepts[-1], ref.x[k * 3:]
    np.testing.assert_allclose(b - b.mean(), b_ref - b_ref.mean(), atol=1e-5)
    margin = shareboost_path(X, y, n_classes=k, n_rounds=3, alpha=alpha, tol=1e-10,
                             max_iter=1000)
    assert abs(margin.train_loss[-1] - path.train_loss[-1]) > 0.1  # another loss


@pytest.mark.parametrize("selection", ["gradient_l1", "best_column", "line_search"])
def test_fit_through_the_classifier(selection):
    rng = np.random.default_rng(2)
    X = rng.standard_normal((200, 8))
    y = np.argmax(X[:, :3] + 0.3 * rng.standard_normal((200, 3)), axis=1)
    soft = ShareBoostClassifier(n_features_to_select=3, loss="softmax",
                                selection=selection).fit(X, y)
    assert soft.score(X, y) > 0.85
    assert set(soft.selected_features_.tolist()) == {0, 1, 2}
    margin = ShareBoostClassifier(n_features_to_select=3, selection=selection).fit(X, y)
    assert not np.allclose(soft.coef_, margin.coef_)
    with pytest.raises(ValueError, match="loss must be one of"):
        ShareBoostClassifier(loss="hinge").fit(X, y)


def test_early_stopping_watches_the_path_loss():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((300, 8))
    y = np.argmax(X[:, :3] + 0.5 * rng.standard_normal((300, 3)), axis=1)
    clf = ShareBoostClassifier(n_features_to_select=4, loss="softmax", validation_fraction=0.3,
                               random_state=0).fit(X, y)
    X_val, y_val = X[clf._validation_mask], np.searchsorted(clf.classes_, y[clf._validation_mask])
    scores = clf.decision_function(X_val)
    np.testing.assert_allclose(clf.validation_scores_[-1],
                               np.mean(_definition(scores, y_val)), rtol=1e-10)
