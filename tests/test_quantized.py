"""The 8-bit training matrix of ConvMaxTemplates(training_store="uint8"), and deform_images."""

import pickle
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import scipy.sparse as sp
from scipy import ndimage

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import deform_images
from mcsparse.datasets._deform import _affine_maps
from mcsparse.features import ConvMaxTemplates
from mcsparse.features._quantized import QuantizedMatrix, quantize_block


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_quantize_block_is_within_half_a_step(dtype):
    rng = np.random.RandomState(0)
    values = (rng.randn(300, 7) * [1, 10, 1e-3, 0, 5, 1, 1] + [0, 3, -2, 4, 0, 1e3, 0])
    values = values.astype(dtype)
    codes, low, step = quantize_block(values)
    assert codes.dtype == np.uint8 and low.dtype == step.dtype == np.float32
    decoded = low + step * codes.astype(np.float32)
    eps = 4 * np.finfo(np.float32).eps * np.abs(values).max(axis=0)
    assert np.all(np.abs(decoded - values) <= step / 2 + eps)
    # the range is used whole: the smallest value codes 0, the largest 255
    varying = step > 0
    assert np.all(codes.min(axis=0) == 0)
    assert np.all(codes.max(axis=0)[varying] == 255)
    # a constant column (index 3) has step 0 and is decoded exactly
    assert step[3] == 0 and np.all(decoded[:, 3] == 4)


def test_quantize_block_of_a_tiny_range():
    # 1 / step overflows float32 here: the codes must still be right
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        codes, low, step = quantize_block(np.array([[0.0], [1e-38], [2e-38]], np.float32))
    assert list(codes[:, 0]) == [0, 128, 255]


def _filled(n_rows, n_columns, block_rows, n_jobs=None, seed=0):
    rng = np.random.RandomState(seed)
    dense = rng.randn(n_rows, n_columns).astype(np.float32) * rng.rand(n_columns) * 3
    q = QuantizedMatrix(n_rows, n_columns, block_rows=block_rows, n_jobs=n_jobs)
    for s in range(0, n_rows, block_rows):
        q.set_block(s, dense[s:s + block_rows])
    return q, dense


@pytest.mark.parametrize("n_rows, n_columns, block_rows", [
    (1, 1, 8), (7, 3, 8), (8, 5, 8), (9, 5, 8), (200, 33, 64), (130, 17, 1)])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_product_equals_the_decoded_matrix_product(n_rows, n_columns, block_rows, n_jobs):
    q, dense = _filled(n_rows, n_columns, block_rows, n_jobs)
    decoded = q.toarray()
    assert np.abs(decoded - dense).max() <= q.step.max() / 2 + 1e-5
    R = np.random.RandomState(1).randn(n_rows, 4)
    got = q.rmatmul(R)
    want = decoded.astype(np.float64).T @ R.astype(np.float32).astype(np.float64)
    assert got.shape == (n_columns, 4) and got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


def test_product_flushes_float32_denormals_and_keeps_its_input():
    q, dense = _filled(50, 6, 16)
    R = np.full((50, 2), 1e-40, dtype=np.float32)  # a float32 denormal
    R[0] = 1.0
    before = R.copy()
    got = q.rmatmul(R)
    np.testing.assert_allclose(got, q.toarray()[:1].T.astype(np.float64) @ [[1.0, 1.0]],
                               rtol=1e-6)
    assert np.array_equal(R, before)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(n_rows=st.sampled_from([1, 2, 3, 7, 13, 31]), n_columns=st.sampled_from([1, 2, 5, 13]),
       block_rows=st.sampled_from([1, 2, 4, 16]), scale=st.sampled_from([0.0, 1e-30, 1e-3,
                                                                          1.0, 1e3, 1e30]),
       kind=st.sampled_from(["normal", "integer", "constant"]), seed=st.integers(0, 2**31))
def test_fuzz_store_against_its_decoded_matrix(n_rows, n_columns, block_rows, scale, kind,
                                               seed):
    rng = np.random.default_rng(seed)
    if kind == "normal":
        dense = rng.standard_normal((n_rows, n_columns))
    elif kind == "integer":  # exact ties
        dense = rng.integers(-2, 3, (n_rows, n_columns)).astype(float)
    else:
        dense = np.full((n_rows, n_columns), rng.standard_normal())
    dense = (dense * scale).astype(np.float32)
    q = QuantizedMatrix(n_rows, n_columns, block_rows=block_rows, n_jobs=2)
    for s in range(0, n_rows, block_rows):
        q.set_block(s, dense[s:s + block_rows])
    decoded = q.toarray()
    assert np.isfinite(decoded).all()
    steps = q.step[np.arange(n_rows) // block_rows]
    # float32 rounding of the decoding, relative to the largest value
    assert np.all(np.abs(decoded - dense) <= steps / 2 + 1e-6 * np.abs(dense).max())
    R = rng.standard_normal((n_rows, 3))
    got = q.rmatmul(R)
    want = decoded.astype(np.float64).T @ R.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5,
                               atol=1e-5 * max(np.abs(decoded).max(), 1e-300) * n_rows)


def test_blocks_are_checked():
    q = QuantizedMatrix(10, 3, block_rows=4)
    with pytest.raises(ValueError, match="a block of rows 4:8"):
        q.set_block(4, np.zeros((3, 3)))
    with pytest.raises(ValueError, match="a block of rows"):
        q.set_block(2, np.zeros((4, 3)))
    q.set_block(8, np.zeros((2, 3)))  # the last block is shorter
    assert q.nbytes == 10 * 3 + 2 * 3 * 3 * 4


def _digits(n=400, seed=0):
    """Blurred random strokes on 12 x 12 images, and their labels."""
    rng = np.random.RandomState(seed)
    y = np.arange(n) % 4
    images = np.zeros((n, 12, 12))
    for i, label in enumerate(y):
        r = 2 + label * 2 + rng.randint(2)
        images[i, r, 2:10] = 1.0
        images[i, 2:10, 2 + rng.randint(8)] = 1.0
    images = ndimage.gaussian_filter(images, (0, 0.7, 0.7)) + 0.05 * rng.rand(n, 12, 12)
    return images.reshape(n, -1).astype(np.float32), y


def _family(store, **kw):
    return ConvMaxTemplates(n_templates=12, patch_size=3, n_masks=4, n_patches=2000,
                            response="ncc", training_store=store, random_state=0, **kw)


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_uint8_store_scans_within_its_bound_and_computes_exact_columns(n_jobs):
    X, _ = _digits(1500)  # two blocks of 1024 images
    exact = _family("float32").fit(X)
    coded = _family("uint8", n_jobs=n_jobs).fit(X)
    assert np.array_equal(coded.templates_, exact.templates_)
    assert coded._X_fit.codes.dtype == np.uint8 and coded._X_fit.low.shape[0] == 2
    F = exact._X_fit
    R = np.random.RandomState(0).randn(X.shape[0], 4)
    # each value is within half a step: the score of a candidate moves by at
    # most sum_i step/2 * ||R_i||_1 over the blocks
    bound = np.zeros(F.shape[1])
    for b, rows in enumerate((slice(0, 1024), slice(1024, None))):
        bound += coded._X_fit.step[b] / 2 * np.abs(R[rows]).sum()
    exact_scores = np.abs(F.T.astype(np.float64) @ R).sum(axis=1)
    coded_products = coded._X_fit.rmatmul(R)
    assert np.all(np.abs(np.abs(coded_products).sum(axis=1) - exact_scores)
                  <= bound + 1e-3 * exact_scores.max())
    j, score = coded.best_candidate(R, np.array([], dtype=np.intp))
    assert exact_scores[j] >= exact_scores.max() - 2 * bound.max()
    # the refit's columns are exact, and fit_transform is the float32 matrix
    np.testing.assert_allclose(coded.training_columns([3, 40, 3]), F[:, [3, 40, 3]],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_family("uint8").fit_transform(X), F, rtol=1e-5, atol=1e-6)


def test_uint8_store_selects_as_the_float32_store_and_ends_its_scan():
    X, y = _digits(600)
    paths = {}
    for store in ("float32", "uint8"):
        clf = ShareBoostClassifier(features=_family(store), n_features_to_select=8,
                                   alpha=1e-4).fit(X, y)
        paths[store] = clf
    assert np.array_equal(paths["uint8"].selected_features_,
                          paths["float32"].selected_features_)
    np.testing.assert_allclose(paths["uint8"].coef_, paths["float32"].coef_, rtol=1e-4,
                               atol=1e-6)
    family = paths["uint8"].features_
    assert family._images_fit is None and family._X_fit is None
    with pytest.raises(RuntimeError, match="ended its scan"):
        family.best_candidate(np.zeros((600, 4)), np.array([], dtype=np.intp))
    clf = pickle.loads(pickle.dumps(paths["uint8"]))
    assert np.array_equal(clf.predict(X), paths["float32"].predict(X))


@pytest.mark.parametrize("store", ["float16", "UINT8", 8, None])
def test_bad_training_store(store):
    X, _ = _digits(20)
    with pytest.raises(ValueError, match="training_store must be one of"):
        _family(store).fit(X)


def test_uint8_store_is_refused_on_dask_chunks():
    family = _family("uint8")
    with pytest.raises(ValueError, match="training_store='uint8' is for in-memory fits"):
        family._fit_chunks(SimpleNamespace(n_features=144, n_samples=10))


# deform_images

def test_no_deformation_copies_the_images_in_order():
    X, _ = _digits(30)
    got = deform_images(X, 3, max_rotation=0, max_scale=0, max_shear=0, elastic_alpha=0,
                        random_state=0)
    assert got.shape == (90, 144) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.tile(X, (3, 1)), atol=1e-6)


def test_affine_maps_match_scipy_affine_transform():
    X, _ = _digits(5)
    kw = {"max_rotation": 20.0, "max_scale": 0.2, "max_shear": 0.3}
    got = deform_images(X, 1, elastic_alpha=0, random_state=3, **kw)
    A = _affine_maps(5, np.random.RandomState(3), kw["max_rotation"], kw["max_scale"],
                     kw["max_shear"])
    centre = np.array([5.5, 5.5])
    for i in range(5):
        want = ndimage.affine_transform(X[i].reshape(12, 12), A[i],
                                        offset=centre - A[i] @ centre, order=1,
                                        mode="constant", cval=0.0)
        np.testing.assert_allclose(got[i].reshape(12, 12), want, atol=1e-5)
    assert not np.allclose(got, X, atol=1e-2)


def test_deformations_are_random_reproducible_and_in_range():
    X, _ = _digits(40)
    a = deform_images(X, 2, random_state=0)
    assert np.array_equal(a, deform_images(X, 2, random_state=0))
    assert not np.allclose(a[:40], a[40:])  # each copy its own deformation
    assert a.min() >= 0 and a.max() <= X.max()
    # the deformations move the ink of MNIST-sized digits, keeping most of it
    digits = np.zeros((40, 28, 28), dtype=np.float32)
    digits[:, 8:20, 8:20] = X.reshape(40, 12, 12)
    digits = digits.reshape(40, -1)
    ink = deform_images(digits, 2, random_state=0).reshape(2, 40, -1).sum(axis=2)
    ink /= digits.sum(axis=1)
    assert 0.9 < ink.mean() < 1.1 and np.all((ink > 0.4) & (ink < 2.0))
    rect = deform_images(np.ones((2, 6 * 4)), image_shape=(6, 4), random_state=0)
    assert rect.shape == (2, 24)


@pytest.mark.parametrize("X, kwargs, error, match", [
    (np.zeros((0, 16)), {}, ValueError, "empty"),
    (np.zeros(16), {}, ValueError, "2-D"),
    (np.full((2, 16), np.nan), {}, ValueError, "NaN"),
    (np.array([["a"] * 16]), {}, TypeError, "real numbers"),
    (np.zeros((2, 15)), {}, ValueError, "not a square image"),
    (np.zeros((2, 16)), {"image_shape": (3, 5)}, ValueError, "does not match"),
    (np.zeros((2, 16)), {"image_shape": 16}, TypeError, r"pair \(height, width\) of ints"),
    (np.zeros((2, 16)), {"n_copies": 0}, ValueError, "n_copies must be >= 1"),
    (np.zeros((2, 16)), {"n_copies": 1.5}, TypeError, "n_copies"),
    (np.zeros((2, 16)), {"max_scale": 1.0}, ValueError, "max_scale must be < 1"),
    (np.zeros((2, 16)), {"max_rotation": -1}, ValueError, "max_rotation"),
    (np.zeros((2, 16)), {"elastic_sigma": 0}, ValueError, "elastic_sigma must be > 0"),
    (np.zeros((2, 16)), {"elastic_alpha": np.inf}, ValueError, "elastic_alpha"),
    (np.zeros((2, 16)), {"max_shear": "0.1"}, TypeError, "max_shear"),
    (np.zeros((2, 16)), {"max_shear": 1e308}, ValueError, "max_shear must be <= 1"),
    (np.zeros((2, 16)), {"elastic_sigma": 1e308}, ValueError, "elastic_sigma must be <= 4"),
    (np.zeros((2, 16)), {"elastic_alpha": 1e30}, ValueError, "elastic_alpha must be <= 40"),
    (np.zeros((2, 16)), {"n_copies": 10**20}, ValueError, "n_copies=.* do not fit"),
    (np.full((2, 16), 1e300), {}, ValueError, "beyond float32"),
    (sp.csr_matrix(np.ones((2, 16))), {}, TypeError, "sparse"),
])
def test_deform_images_bad_input(X, kwargs, error, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the error comes first, no warning before it
        with pytest.raises(error, match=match):
            deform_images(X, **kwargs)


def test_refitting_with_the_float32_store_drops_the_images():
    X, _ = _digits(50)
    family = _family("uint8").fit(X)
    assert family._images_fit is not None
    family.set_params(training_store="float32").fit(X)
    assert family._images_fit is None and isinstance(family._X_fit, np.ndarray)
