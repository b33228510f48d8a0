"""The Cython loss module against its NumPy twin, the definition, and check_grad."""

import numpy as np
import pytest
from scipy.optimize import check_grad
from scipy.special import logsumexp

from mcsparse.loss import multiclass_logistic_loss
from mcsparse.loss._multiclass_logistic import loss_gradient_numpy
from mcsparse.loss._multiclass_logistic_fast import loss_gradient as loss_gradient_fast

SHAPES = [(0, 3), (1, 1), (1, 2), (2, 2), (7, 3), (13, 5), (101, 10), (31, 26)]


def _problem(n, k, dtype, scale=3.0, seed=0):
    rng = np.random.default_rng(seed)
    scores = (scale * rng.standard_normal((n, k))).astype(dtype)
    y = rng.integers(0, k, size=n).astype(np.intp)
    w = rng.uniform(0.1, 2.0, size=n).astype(dtype)
    return scores, y, w


def _definition(scores, y):
    """eq. (3) per row, straight from the formula, in float64."""
    s = scores.astype(np.float64)
    z = s - s[np.arange(len(y)), y][:, None] + 1.0
    z[np.arange(len(y)), y] = 0.0
    return logsumexp(z, axis=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("scale", [1e-3, 3.0, 300.0])
def test_cython_matches_numpy_twin(dtype, shape, weighted, scale):
    scores, y, w = _problem(*shape, dtype, scale=scale)
    w = w if weighted else None
    grad = np.empty_like(scores)
    loss = loss_gradient_fast(scores, y, w, grad)
    loss_ref, grad_ref = loss_gradient_numpy(scores, y, w)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    assert grad.dtype == dtype
    np.testing.assert_allclose(loss, loss_ref, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(grad, grad_ref, rtol=rtol, atol=10 * np.finfo(dtype).eps)
    # and both against the definition of eq. (3)
    expected = _definition(scores, y) @ (np.ones(shape[0]) if w is None else w.astype(float))
    np.testing.assert_allclose(loss, expected, rtol=rtol, atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("margin", [0.0, 0.5, 2.0])
def test_margin_matches_twin_and_definition(dtype, margin):
    scores, y, w = _problem(31, 4, dtype)
    grad = np.empty_like(scores)
    loss = loss_gradient_fast(scores, y, w, grad, margin)
    loss_ref, grad_ref = loss_gradient_numpy(scores, y, w, margin=margin)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(loss, loss_ref, rtol=rtol)
    np.testing.assert_allclose(grad, grad_ref, rtol=rtol, atol=10 * np.finfo(dtype).eps)
    s = scores.astype(np.float64)
    rows = np.arange(len(y))
    z = s - s[rows, y][:, None] + margin
    z[rows, y] = 0.0
    np.testing.assert_allclose(loss, logsumexp(z, axis=1) @ w.astype(float), rtol=rtol)


def test_zero_margin_two_classes_is_binary_logistic():
    # log(1 + exp(-z d)) with d = s_1 - s_0 and z = +-1
    scores, y, _ = _problem(50, 2, np.float64)
    grad = np.empty_like(scores)
    loss = loss_gradient_fast(scores, y, None, grad, 0.0)
    z = 2.0 * y - 1.0
    d = scores[:, 1] - scores[:, 0]
    np.testing.assert_allclose(loss, np.logaddexp(0.0, -z * d).sum(), rtol=1e-12)


def test_precise_when_loss_is_tiny():
    # Large correct margins: loss ~ exp(-margin), where log(sum) would round to 0.
    scores = np.array([[40.0, 0.0, 0.0]])
    loss, _ = multiclass_logistic_loss(scores, [0])
    np.testing.assert_allclose(loss, 2 * np.exp(-39.0), rtol=1e-12)


def test_zero_scores_value():
    loss, grad = multiclass_logistic_loss(np.zeros((4, 5)), [0, 1, 2, 4])
    np.testing.assert_allclose(loss, np.log(1 + 4 * np.e))
    np.testing.assert_allclose(grad.sum(axis=1), 0.0, atol=1e-15)


def test_upper_bounds_zero_one_loss():
    scores, y, _ = _problem(500, 6, np.float64)
    per_row = _definition(scores, y)
    wrong = np.argmax(scores, axis=1) != y
    assert np.all(per_row[wrong] >= 1.0)
    assert np.all(per_row > 0)


@pytest.mark.parametrize("weighted", [False, True])
def test_gradient_check_grad(weighted):
    scores, y, w = _problem(20, 4, np.float64, seed=3)
    w = w if weighted else None
    shape = scores.shape

    def f(s):
        return multiclass_logistic_loss(s.reshape(shape), y, w)[0]

    def g(s):
        return multiclass_logistic_loss(s.reshape(shape), y, w)[1].ravel()

    assert check_grad(f, g, scores.ravel()) < 1e-6


def test_weights_are_repetitions():
    scores, y, _ = _problem(10, 3, np.float64, seed=1)
    w = np.arange(10) % 3
    loss_w, _ = multiclass_logistic_loss(scores, y, w)
    rep = np.repeat(np.arange(10), w)
    loss_rep, _ = multiclass_logistic_loss(scores[rep], y[rep])
    np.testing.assert_allclose(loss_w, loss_rep, rtol=1e-12)


def test_accepts_non_contiguous_input():
    scores, y, _ = _problem(10, 4, np.float64)
    a = multiclass_logistic_loss(np.asfortranarray(scores), y)
    b = multiclass_logistic_loss(scores, y)
    np.testing.assert_allclose(a[0], b[0])
    np.testing.assert_allclose(a[1], b[1])


@pytest.mark.parametrize(
    "scores, y, w, error, match",
    [
        (np.array([[np.nan, 0.0]]), [0], None, ValueError, "NaN or infinity"),
        (np.array([[np.inf, 0.0]]), [0], None, ValueError, "NaN or infinity"),
        (np.zeros((2, 2), dtype=int), [0, 1], None, TypeError, "float32 or float64"),
        (np.zeros(3), [0, 1, 2], None, ValueError, "must be 2-D"),
        (np.zeros((2, 3)), [0], None, ValueError, "y must be 1-D with 2"),
        (np.zeros((2, 3)), [0, 3], None, ValueError, r"class indices in \[0, 3\)"),
        (np.zeros((2, 3)), [0, -1], None, ValueError, "class indices"),
        (np.zeros((2, 3)), [0.5, 1], None, TypeError, "integer class indices"),
        (np.zeros((2, 3)), [0, 1], [1.0], ValueError, "sample_weight must have shape"),
        (np.zeros((2, 3)), [0, 1], [1.0, -1.0], ValueError, "non-negative"),
        (np.zeros((2, 3)), [0, 1], [0.0, 0.0], ValueError, "sums to zero"),
        (np.zeros((2, 3)), [0, 1], [np.nan, 1.0], ValueError, "sample_weight.*NaN"),
        (np.zeros((2, 3)), [0, 1], ["a", "b"], ValueError, "could not convert"),
        (np.zeros((2, 3)), [0, 1], [1 + 1j, 1.0], TypeError, "complex"),
        (np.zeros((0, 3)), [], None, ValueError, "scores is empty"),
        (np.zeros((2, 0)), [0, 0], None, ValueError, "scores is empty"),
        (np.array([[1e308, 1e308, -1e308]]), [2], None, ValueError, "overflows"),
    ],
)
def test_bad_input(scores, y, w, error, match):
    with pytest.raises(error, match=match):
        multiclass_logistic_loss(scores, y, w)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("scale", [1e-300, 5e-324, 1e39, 1e307])
def test_extreme_uniform_weights_change_nothing(dtype, scale):
    """Weights are scaled to max 1 first: their sum neither overflows nor underflows."""
    scores, y, _ = _problem(6, 3, dtype, seed=2)
    loss, grad = multiclass_logistic_loss(scores, y)
    loss_w, grad_w = multiclass_logistic_loss(scores, y, np.full(6, scale))
    np.testing.assert_allclose(loss_w, loss, rtol=1e-6)
    np.testing.assert_allclose(grad_w, grad, rtol=1e-5, atol=1e-7)


def test_low_level_entry_rejects_none():
    scores = np.zeros((2, 3))
    y = np.zeros(2, dtype=np.intp)
    for args in [(None, y, None, scores), (scores, None, None, scores), (scores, y, None, None)]:
        with pytest.raises(TypeError):
            loss_gradient_fast(*args)


def test_low_level_entry_rejects_bad_labels_and_shapes():
    scores = np.zeros((2, 3))
    with pytest.raises(ValueError, match="outside"):
        loss_gradient_fast(scores, np.array([0, 5], dtype=np.intp), None, np.empty_like(scores))
    with pytest.raises(ValueError, match="inconsistent shapes"):
        loss_gradient_fast(scores, np.array([0], dtype=np.intp), None, np.empty_like(scores))
