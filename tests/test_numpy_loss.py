"""A loss written in NumPy (NumpyRowKernel) and the 'Write your own loss' example.

The example runs in the default suite (pendigits is bundled with mcsparse).
"""

import runpy
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import load_iris

from mcsparse.estimators import ShareBoostClassifier
from mcsparse.loss import Loss, NumpyRowKernel, SoftmaxLoss, make_loss
from mcsparse.loss._softmax_fast import SoftmaxKernel

EXAMPLE = Path(__file__).parents[1] / "examples" / "extending" / "plot_custom_loss.py"


def softmax_rows(scores, y):
    m = scores.max(axis=1, keepdims=True)
    e = np.exp(scores - m)
    z = e.sum(axis=1, keepdims=True)
    grad = e / z
    rows = np.arange(len(y))
    grad[rows, y] -= 1.0
    return m[:, 0] + np.log(z[:, 0]) - scores[rows, y], grad


def smoothing_rows(eps):
    def rows(scores, y):
        m = scores.max(axis=1, keepdims=True)
        log_p = scores - m - np.log(np.exp(scores - m).sum(axis=1, keepdims=True))
        q = np.full_like(scores, eps / scores.shape[1])
        q[np.arange(len(y)), y] += 1.0 - eps
        return -(q * log_p).sum(axis=1), np.exp(log_p) - q
    return rows


class NumpySoftmax(Loss):
    kernel = NumpyRowKernel(softmax_rows)
    shift_invariant = True


@pytest.mark.parametrize("n", [1, 37])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_kernel_matches_softmax_kernel(n, weighted, dtype):
    rng = np.random.default_rng(n)
    scores = (3 * rng.normal(size=(n, 5))).astype(dtype)
    y = rng.integers(0, 5, n)
    w = rng.random(n) if weighted else None
    loss_a, grad_a = NumpySoftmax().loss_gradient(scores, y, w)
    loss_b, grad_b = SoftmaxLoss().loss_gradient(scores, y, w)
    assert grad_a.dtype == dtype
    np.testing.assert_allclose(loss_a, loss_b, rtol=1e-12)
    np.testing.assert_allclose(grad_a, grad_b, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-7 if dtype == np.float32 else 1e-15)
    # the raw kernels, per-row losses included
    s64 = np.ascontiguousarray(scores, dtype=np.float64)
    w64 = None if w is None else w.astype(np.float64)
    ga, gb, pa, pb = np.empty((n, 5)), np.empty((n, 5)), np.empty(n), np.empty(n)
    ta = NumpyRowKernel(softmax_rows).loss_gradient(s64, y.astype(np.intp), w64, ga, pa)
    tb = SoftmaxKernel().loss_gradient(s64, y.astype(np.intp), w64, gb, pb)
    np.testing.assert_allclose(ta, tb, rtol=1e-12)
    np.testing.assert_allclose(pa, pb, rtol=1e-12)
    np.testing.assert_allclose(ga, gb, rtol=1e-12, atol=1e-15)


def test_label_smoothing_gradient_finite_differences():
    class Smooth(Loss):
        kernel = NumpyRowKernel(smoothing_rows(0.2))
        shift_invariant = True

    rng = np.random.default_rng(0)
    scores, y, w = rng.normal(size=(6, 4)), rng.integers(0, 4, 6), rng.random(6)
    loss = Smooth()
    _, grad = loss.loss_gradient(scores, y, w)
    h = 1e-6
    fd = np.empty_like(scores)
    for idx in np.ndindex(*scores.shape):
        up, down = scores.copy(), scores.copy()
        up[idx] += h
        down[idx] -= h
        fd[idx] = (loss.loss_gradient(up, y, w)[0] - loss.loss_gradient(down, y, w)[0]) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_function_error_is_raised_not_swallowed():
    def broken(scores, y):
        raise KeyError("boom")

    class Broken(Loss):
        kernel = NumpyRowKernel(broken)
        shift_invariant = True

    X, y = load_iris(return_X_y=True)
    with pytest.raises(RuntimeError, match="'broken' raised KeyError") as info:
        ShareBoostClassifier(loss=Broken(), n_features_to_select=2).fit(X, y)
    assert isinstance(info.value.__cause__, KeyError)
    with pytest.raises(RuntimeError, match="broken"):
        Broken().loss_gradient(np.zeros((2, 3)), [0, 1])


def test_kernel_refuses_a_non_callable():
    with pytest.raises(TypeError, match="callable"):
        NumpyRowKernel(3)


def test_fit_with_a_loss_instance_matches_the_string():
    X, y = load_iris(return_X_y=True)
    loss = NumpySoftmax()
    assert make_loss(loss) is loss
    a = ShareBoostClassifier(loss=loss, n_features_to_select=3).fit(X, y)
    b = ShareBoostClassifier(loss="softmax", n_features_to_select=3).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    np.testing.assert_allclose(a.decision_function(X), b.decision_function(X),
                               rtol=1e-6, atol=1e-8)


def test_custom_loss_example_runs(capsys):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out
    assert "label smoothing 0.1: test error" in out and "softmax: test error" in out
    assert len(EXAMPLE.read_text().splitlines()) < 60
