"""Convolution-max template features: Cython kernel, NumPy twin, family."""

import pickle

import numpy as np
import pytest

from mcsparse import ShareBoostClassifier
from mcsparse.features import (
    ConvMaxTemplates,
    conv_max_features,
    conv_max_selected,
    gaussian_masks,
    learn_templates,
    masks_from_factors,
)
from mcsparse.features._conv_max import conv_max_features_numpy, conv_max_selected_numpy


def _problem(seed, n, h, w, n_templates, ph, pw, n_u, n_v, dtype=np.float32):
    rng = np.random.RandomState(seed)
    images = rng.randn(n, h, w).astype(dtype)
    templates = rng.randn(n_templates, ph, pw).astype(dtype)
    rows = rng.rand(n_u, h - ph + 1).astype(dtype)
    cols = rng.rand(n_v, w - pw + 1).astype(dtype)
    return images, templates, rows, cols


SHAPES = [
    # n, h, w, n_templates, ph, pw, n_u, n_v
    (4, 28, 28, 130, 7, 7, 4, 4),  # MNIST-like, more than one template block
    (3, 11, 9, 5, 3, 4, 3, 2),  # odd, non-square images and templates
    (2, 5, 5, 3, 5, 5, 1, 1),  # template as large as the image: one position
    (1, 6, 7, 1, 1, 1, 2, 5),  # 1 x 1 template
    (5, 13, 17, 129, 2, 3, 1, 3),  # prime sizes, block + 1 templates
    (3, 1, 8, 2, 1, 3, 1, 1),  # one-pixel-high images
]


@pytest.mark.parametrize("response", [{}, {"response": "ncc"},
                                      {"response": "ncc", "damping": 0.0}])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SHAPES)
def test_cython_matches_numpy_twin(shape, dtype, response):
    images, templates, rows, cols = _problem(0, *shape, dtype=dtype)
    got = conv_max_features(images, templates, rows, cols, **response)
    want = conv_max_features_numpy(images, templates, rows, cols, **response)
    assert got.dtype == np.float32 and got.shape == want.shape
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * scale)


def _ncc_reference(image, template, damping):
    """The damped NCC map of one image and template from scipy.signal.correlate2d."""
    from scipy.signal import correlate2d

    image = image.astype(np.float64)
    template = template.astype(np.float64)
    ones = np.ones_like(template)
    area = template.size
    total = correlate2d(image, ones, mode="valid")
    mean = total / area
    centred_sq = correlate2d(image**2, ones, mode="valid") - area * mean**2
    numerator = correlate2d(image, template, mode="valid") - mean * template.sum()
    denominator = np.sqrt(np.maximum(centred_sq, 0.0) + damping)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / denominator, 0.0)


@pytest.mark.parametrize("damping", [0.25, 1e-3])
def test_ncc_matches_a_correlate2d_reference_per_template(damping):
    images, templates, rows, cols = _problem(5, 3, 12, 11, 4, 3, 4, 2, 3)
    images = np.abs(images)  # pixels of either sign work; these look like images
    got = conv_max_features(images, templates, rows, cols, response="ncc", damping=damping)
    masks = masks_from_factors(rows, cols).astype(np.float64)
    for i in range(images.shape[0]):
        for f in range(templates.shape[0]):
            ncc = _ncc_reference(images[i], templates[f], damping)
            want = (ncc[None] * masks).reshape(masks.shape[0], -1).max(axis=1)
            np.testing.assert_allclose(got[i, f * 6:(f + 1) * 6], want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("damping", [0.25, 0.0])
def test_ncc_is_zero_on_blank_and_constant_images(damping):
    _, templates, rows, cols = _problem(6, 1, 9, 9, 5, 3, 3, 2, 2)
    images = np.stack([np.zeros((9, 9)), np.full((9, 9), 0.7), np.full((9, 9), 1e6)])
    got = conv_max_features(images, templates, rows, cols, response="ncc", damping=damping)
    np.testing.assert_array_equal(got, 0.0)
    np.testing.assert_array_equal(
        conv_max_features_numpy(images, templates, rows, cols, response="ncc",
                                damping=damping), 0.0)


@pytest.mark.parametrize("offset, damping", [(1e8, 0.25), (2.0**24, 0.0), (0.7, 0.0)])
def test_ncc_of_float64_images_keeps_their_precision_under_an_offset(offset, damping):
    """Float64 images are centred before the float32 cast: the offset costs nothing.

    Found by an adversarial review: ``1e8 + I`` in float64 gave all-zero NCC
    features (float32 kept only the offset) where the twin gave those of ``I``.
    """
    images, templates, rows, cols = _problem(8, 3, 8, 8, 4, 3, 3, 2, 2)
    images = np.abs(images).astype(np.float64)
    small = 1e-6 if offset == 0.7 else 1.0  # near-constant float64 patches for 0.7
    got = conv_max_features(offset + small * images, templates, rows, cols,
                            response="ncc", damping=damping * small**2)
    want = conv_max_features_numpy(images, templates, rows, cols, response="ncc",
                                   damping=damping)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_undamped_ncc_ignores_contrast_and_brightness():
    """Without damping, ``a I + c`` (a > 0) answers exactly like ``I``: faint = bold."""
    images, templates, rows, cols = _problem(7, 2, 10, 10, 6, 3, 3, 2, 2)
    plain = conv_max_features(images, templates, rows, cols, response="ncc", damping=0.0)
    faint = conv_max_features(0.05 * images + 0.3, templates, rows, cols, response="ncc",
                              damping=0.0)
    np.testing.assert_allclose(faint, plain, rtol=1e-4, atol=1e-5)
    # the damping makes faint strokes answer less than bold ones
    damped = conv_max_features(0.05 * images + 0.3, templates, rows, cols, response="ncc",
                               damping=1.0)
    assert np.abs(damped).max() < np.abs(plain).max()


def test_separable_max_equals_direct_max_on_the_full_masks():
    """The two-pass max equals the masked max over the full masks, by brute force."""
    images, templates, rows, cols = _problem(1, 3, 9, 8, 4, 3, 2, 2, 3)
    got = conv_max_features(images, templates, rows, cols)
    masks = masks_from_factors(rows, cols).astype(np.float64)
    for i in range(3):
        for f in range(4):
            for c in range(6):
                best = -np.inf
                for r in range(7):
                    for s in range(7):
                        patch = images[i, r:r + 3, s:s + 2].astype(np.float64)
                        best = max(best, float((patch * templates[f]).sum()) * masks[c, r, s])
                assert got[i, f * 6 + c] == pytest.approx(best, rel=1e-5, abs=1e-5)


def test_negative_responses_and_zero_masks():
    """A template answering negatively everywhere: the max of negative products."""
    images = np.ones((2, 6, 6), dtype=np.float32)
    templates = -np.ones((1, 3, 3), dtype=np.float32)
    rows = np.array([[0.5, 1, 0.25, 0.1]], dtype=np.float32)
    cols = np.array([[0.0, 0.0, 0.0, 0.0], [1.0, 0.5, 0.5, 0.5]], dtype=np.float32)
    got = conv_max_features(images, templates, rows, cols)
    np.testing.assert_allclose(got, conv_max_features_numpy(images, templates, rows, cols))
    np.testing.assert_allclose(got[:, 0], 0.0)  # zero mask: max of zeros
    np.testing.assert_allclose(got[:, 1], -9 * 0.1 * 0.5)  # least negative product


@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_chunks_and_threads_give_identical_results(n_jobs, chunk_size):
    images, templates, rows, cols = _problem(2, 23, 12, 12, 20, 5, 5, 2, 2)
    ref = conv_max_features(images, templates, rows, cols)
    got = conv_max_features(images, templates, rows, cols, n_jobs=n_jobs,
                            chunk_size=chunk_size)
    np.testing.assert_array_equal(got, ref)


def test_empty_inputs():
    images, templates, rows, cols = _problem(3, 0, 8, 8, 3, 3, 3, 2, 2)
    assert conv_max_features(images, templates, rows, cols).shape == (0, 12)
    images, templates, rows, cols = _problem(3, 2, 8, 8, 0, 3, 3, 2, 2)
    assert conv_max_features(images, templates, rows, cols).shape == (2, 0)


def test_kernel_input_errors():
    images, templates, rows, cols = _problem(4, 2, 8, 8, 3, 3, 3, 2, 2)
    big = np.ones((1, 9, 3), dtype=np.float32)
    with pytest.raises(ValueError, match="larger than the images"):
        conv_max_features(images, big, rows, cols)
    with pytest.raises(ValueError, match="mask_rows must have shape"):
        conv_max_features(images, templates, rows[:, :-1], cols)
    with pytest.raises(ValueError, match="mask_cols must be non-negative"):
        conv_max_features(images, templates, rows, -cols)
    bad = images.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(ValueError, match="images contain NaN"):
        conv_max_features(bad, templates, rows, cols)
    with pytest.raises(ValueError, match="3-D array"):
        conv_max_features(images[0], templates, rows, cols)
    with pytest.raises(TypeError, match="templates must hold real numbers"):
        conv_max_features(images, templates.astype(complex), rows, cols)
    with pytest.raises(ValueError, match="chunk_size"):
        conv_max_features(images, templates, rows, cols, chunk_size=0)
    # float64 values beyond float32's range become inf: refused, not wrapped
    with pytest.raises(ValueError, match="NaN or infinity"):
        conv_max_features(images.astype(np.float64) * 1e300, templates, rows, cols)


@pytest.mark.parametrize("kwargs, error, match", [
    ({"response": "normalized"}, ValueError, "response must be one of"),
    ({"response": None}, ValueError, "response must be one of"),
    ({"response": "ncc", "damping": -0.1}, ValueError, "damping"),
    ({"response": "ncc", "damping": np.nan}, ValueError, "damping"),
    ({"response": "ncc", "damping": "0.25"}, TypeError, "damping"),
])
def test_response_parameters_are_checked(kwargs, error, match):
    images, templates, rows, cols = _problem(4, 2, 8, 8, 3, 3, 3, 2, 2)
    with pytest.raises(error, match=match):
        conv_max_features(images, templates, rows, cols, **kwargs)
    X, _ = _images()
    with pytest.raises(error, match=match):
        _family(**kwargs).fit(X)


def test_compiled_kernel_checks_shapes():
    from mcsparse.features._conv_max_fast import conv_max_chunk

    images, templates, rows, cols = _problem(5, 2, 8, 8, 3, 3, 3, 2, 2)
    flat = templates.reshape(3, 9)
    out = np.empty((2, 12), dtype=np.float32)
    with pytest.raises(ValueError, match="does not fit"):
        conv_max_chunk(images, flat, 9, 1, rows, cols, out)
    with pytest.raises(ValueError, match="templates have 9 values"):
        conv_max_chunk(images, flat, 2, 3, rows, cols, out)
    with pytest.raises(ValueError, match="out has shape"):
        conv_max_chunk(images, flat, 3, 3, rows, cols, np.empty((2, 5), dtype=np.float32))


def test_gaussian_masks():
    rows, cols = gaussian_masks((22, 20), n_masks=16)
    assert rows.shape == (4, 22) and cols.shape == (4, 20)
    masks = masks_from_factors(rows, cols)
    assert masks.shape == (16, 22, 20)
    assert masks.max() <= 1.0 and masks.min() > 0
    # each mask peaks in its own grid cell, row by row
    peaks = [np.unravel_index(np.argmax(m), m.shape) for m in masks]
    assert [p[0] // 6 for p in peaks] == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 4
    assert [p[1] // 5 for p in peaks] == [0, 1, 2, 3] * 4
    with pytest.raises(ValueError, match="perfect square"):
        gaussian_masks((22, 22), n_masks=15)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_masks((22, 22), sigma=0.0)


def test_learn_templates_are_normalised_and_reproducible():
    rng = np.random.RandomState(0)
    images = rng.rand(50, 12, 12)
    t1 = learn_templates(images, n_templates=10, patch_size=5, n_patches=500,
                         random_state=0)
    t2 = learn_templates(images, n_templates=10, patch_size=5, n_patches=500,
                         random_state=0)
    np.testing.assert_array_equal(t1, t2)
    assert t1.shape == (10, 5, 5) and t1.dtype == np.float32
    flat = t1.reshape(10, -1)
    np.testing.assert_allclose(flat.mean(axis=1), 0, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(flat, axis=1), 1, rtol=1e-5)
    with pytest.raises(ValueError, match="larger than the images"):
        learn_templates(images, patch_size=13)
    with pytest.raises(ValueError, match="patches with contrast"):
        learn_templates(np.zeros((5, 12, 12)), n_templates=3, patch_size=5, n_patches=50)
    with pytest.raises(ValueError, match="n_templates must be >= 1"):
        learn_templates(images, n_templates=0)


def _family(**params):
    defaults = dict(n_templates=12, patch_size=3, n_masks=4, n_patches=2000,
                    random_state=0)
    return ConvMaxTemplates(**{**defaults, **params})


def _images(seed=0, n=80, h=10, w=10):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, h * w)
    y = (X.reshape(n, h, w)[:, :5].sum(axis=(1, 2)) > X.reshape(n, h, w)[:, 5:].sum(
        axis=(1, 2))).astype(int) + 2 * (X[:, 0] > 0.5)
    return X, y


def test_family_scan_equals_brute_force():
    X, _ = _images()
    family = _family()
    Phi = family.fit_transform(X)
    assert Phi.shape == (80, 48) and family.n_candidates_ == 48
    R = np.random.RandomState(1).randn(80, 3)
    scores = np.abs(Phi.astype(np.float64).T @ R).sum(axis=1)
    excluded = np.array([int(np.argmax(scores))])
    j, score = family.best_candidate(R, excluded)
    scores[excluded] = -np.inf
    assert j == int(np.argmax(scores))
    assert score == pytest.approx(scores[j], rel=1e-5)
    np.testing.assert_allclose(family.training_columns([j, 3])[:, 0], Phi[:, j])


def test_family_transform_candidates_computes_the_same_columns():
    X, _ = _images()
    family = _family()
    Phi = family.fit_transform(X)
    ids = np.array([47, 0, 5, 6, 46])
    family.end_scan(ids)
    got = family.transform_candidates(X, ids)
    np.testing.assert_allclose(got, Phi[:, ids], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(family.transform(X), Phi, rtol=1e-5, atol=1e-6)
    family.set_params(prediction="dense")
    np.testing.assert_allclose(family.transform_candidates(X, ids), Phi[:, ids],
                               rtol=1e-5, atol=1e-6)
    # 3 distinct templates: 64 positions x (9 + 2) + 2 x 2 x 8 each, + 4 x 5
    assert family.macs_per_image(ids) == 3 * (64 * 11 + 32)
    assert family.macs_per_image(ids, n_classes=4) == 3 * (64 * 11 + 32) + 20
    assert family.support_.all()


def test_family_with_ncc_response_computes_the_same_columns_everywhere():
    X, _ = _images()
    family = _family(response="ncc", damping=0.1)
    Phi = family.fit_transform(X)
    images = X.reshape(-1, 10, 10)
    want = conv_max_features_numpy(images, family.templates_, family.mask_rows_,
                                   family.mask_cols_, response="ncc", damping=0.1)
    np.testing.assert_allclose(Phi, want, rtol=1e-5, atol=1e-5)
    ids = np.array([47, 0, 5, 6, 46])
    family.end_scan(ids)
    np.testing.assert_allclose(family.transform_candidates(X, ids), Phi[:, ids],
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(family.transform(X), Phi, rtol=1e-5, atol=1e-6)
    family.set_params(prediction="dense")
    np.testing.assert_allclose(family.transform_candidates(X, ids), Phi[:, ids],
                               rtol=1e-5, atol=1e-6)
    # the plain count, plus the normalisation: 64 positions x 2 x 9 per image
    assert family.macs_per_image(ids) == 3 * (64 * 11 + 32) + 64 * 2 * 9


def test_shareboost_with_templates_warm_start_equals_one_fit():
    # the warm fit refits the family and checks that its selected columns
    # (float32 responses) come back: they must, with a fixed random_state
    X, y = _images()
    one = ShareBoostClassifier(features=_family(), n_features_to_select=5,
                               alpha=1e-3).fit(X, y)
    warm = ShareBoostClassifier(features=_family(), n_features_to_select=2, alpha=1e-3,
                                warm_start=True).fit(X, y)
    warm.set_params(n_features_to_select=5).fit(X, y)
    np.testing.assert_array_equal(warm.selected_features_, one.selected_features_)
    np.testing.assert_allclose(warm.decision_function(X), one.decision_function(X),
                               rtol=1e-4, atol=1e-5)


def test_shareboost_with_templates_matches_raw_features_on_the_matrix():
    X, y = _images()
    clf = ShareBoostClassifier(features=_family(), n_features_to_select=6,
                               alpha=1e-3).fit(X, y)
    Phi = _family().fit_transform(X)
    raw = ShareBoostClassifier(n_features_to_select=6, alpha=1e-3).fit(Phi, y)
    np.testing.assert_array_equal(clf.selected_features_, raw.selected_features_)
    np.testing.assert_allclose(clf.decision_function(X), raw.decision_function(Phi),
                               rtol=1e-4, atol=1e-6)
    # the fitted model keeps no training matrix
    assert clf.features_._X_fit is None
    assert len(pickle.dumps(clf)) < 20_000
    again = pickle.loads(pickle.dumps(clf))
    np.testing.assert_array_equal(again.predict(X), clf.predict(X))


def test_family_input_errors():
    X, _ = _images()
    with pytest.raises(ValueError, match="not a square image"):
        _family().fit(X[:, :99])
    with pytest.raises(ValueError, match="image_shape"):
        _family(image_shape=(9, 10)).fit(X)
    _family(image_shape=(5, 20)).fit(X)  # non-square images are fine
    with pytest.raises(ValueError, match="patch_size=11 is larger"):
        _family(patch_size=11).fit(X)
    family = _family().fit(X)
    with pytest.raises(ValueError, match="features"):
        family.transform_candidates(X[:, :50], [0])
    with pytest.raises(ValueError, match="candidate ids"):
        family.transform_candidates(X, [48])
    with pytest.raises(ValueError, match="NaN|infinity"):
        bad = X.copy()
        bad[0, 0] = np.inf
        family.transform(bad)


@pytest.mark.slow
def test_mnist_subset_learns(mnist_home):
    """On 2000 MNIST digits, 30 rounds of template features beat 30 raw pixels."""
    from mcsparse.datasets import load_mnist

    X, y = load_mnist(subset="train", return_X_y=True, data_home=mnist_home)
    Xt, yt = load_mnist(subset="test", return_X_y=True, data_home=mnist_home)
    X, y, Xt, yt = X[:2000] / 255.0, y[:2000], Xt[:1000] / 255.0, yt[:1000]
    family = ConvMaxTemplates(n_templates=100, n_patches=20_000, random_state=0)
    clf = ShareBoostClassifier(features=family, n_features_to_select=30,
                               alpha=1e-4).fit(X, y)
    pixels = ShareBoostClassifier(n_features_to_select=30, alpha=1e-4).fit(X, y)
    err_templates = np.mean(clf.predict(Xt) != yt)
    err_pixels = np.mean(pixels.predict(Xt) != yt)
    assert err_templates < 0.12
    assert err_templates < 0.6 * err_pixels


def test_bad_kernel_arguments_get_clear_errors():
    """Bad arguments of the kernel wrappers: each gets a ValueError or TypeError naming it."""
    images, templates, rows, cols = _problem(6, 2, 8, 8, 3, 3, 3, 2, 2)
    with pytest.raises(ValueError, match="too large"):
        conv_max_features(np.full((1, 4, 4), 3e38, np.float32), np.ones((1, 2, 2)),
                          [[0, 1, 1]], np.ones((1, 3)))
    with pytest.raises(TypeError, match="n_jobs must be an int"):
        conv_max_features(images, templates, rows, cols, n_jobs="x")
    with pytest.raises(TypeError, match="chunk_size must be an int"):
        conv_max_features(images, templates, rows, cols, chunk_size=True)
    with pytest.raises(ValueError, match="templates must be a 3-D array \\(n_templates"):
        conv_max_features(images, templates[0], rows, cols)
    with pytest.raises(ValueError, match="mask_rows must be a 2-D array"):
        masks_from_factors(rows[0], cols)
    with pytest.raises(ValueError, match="non-negative"):
        masks_from_factors(-rows, cols)
    for bad in (5, None, ("a", "b"), (2.7, 3)):
        with pytest.raises(TypeError, match="shape"):
            gaussian_masks(bad)
    for sigma in (1e-200, 1e200, -1.0, np.nan):
        with pytest.raises(ValueError, match="sigma"):
            gaussian_masks((5, 5), 4, sigma)
    with pytest.raises(ValueError, match="patch_size must be >= 2"):
        learn_templates(images, n_templates=2, patch_size=1)
    with pytest.raises(TypeError, match="n_templates must be an int"):
        learn_templates(images, n_templates=True)
    X, _ = _images()
    with pytest.raises(TypeError, match="image_shape"):
        _family(image_shape=(6.5, 6)).fit(X)
    family = _family().fit(X)
    for ids in ([1.7], [True, False]):
        with pytest.raises(TypeError, match="candidate ids must be integers"):
            family.transform_candidates(X, ids)
    with pytest.raises(TypeError, match="candidate ids must be integers"):
        family.macs_per_image([2**70])
    with pytest.raises(ValueError, match="n_classes must be >= 1"):
        family.macs_per_image([0, 1], n_classes=-3)


def test_masks_that_vanish_are_refused():
    with pytest.raises(ValueError, match="too small"):
        gaussian_masks((5, 5), 4, sigma=1e-30)
    rows, _ = gaussian_masks((6, 6), 4, sigma=0.2)  # centres on pixels: peak 1
    np.testing.assert_allclose(rows.max(axis=1), 1.0)


def test_templates_shortcut():
    from mcsparse.estimators._features import resolve_features

    family = resolve_features("templates")
    assert isinstance(family, ConvMaxTemplates)
    assert family.get_params() == ConvMaxTemplates().get_params()


def _small_problem():
    """60 samples, 5 features, 3 classes from two signs."""
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


def _tiny_templates():
    return ConvMaxTemplates(n_templates=2, patch_size=2, n_masks=1, n_patches=50,
                            random_state=0)


# --- template features: images of the wrong shape ----------------------------


@pytest.mark.parametrize("n_pixels", [15, 8])
def test_conv_max_templates_non_square_rows(n_pixels):
    X = np.random.RandomState(0).rand(24, n_pixels)
    with pytest.raises(ValueError, match="square image|image_shape"):
        _tiny_templates().fit(X)


def test_conv_max_templates_transform_other_image_size():
    X = np.random.RandomState(0).rand(24, 16)
    est = _tiny_templates().fit(X)
    with pytest.raises(ValueError, match="expecting 16 features"):
        est.transform(np.random.RandomState(1).rand(3, 25))


# conv_max_selected: the selected pairs only, searched from each mask's
# heaviest positions, stopped by the response bound

SELECTED_SHAPES = SHAPES + [
    (3, 4, 4, 2, 4, 4, 1, 1),  # one position
    (2, 2, 9, 3, 2, 2, 1, 3),  # one row of positions
]


def _selected_ids(rng, n_templates, n_masks, n_ids):
    return rng.randint(0, n_templates * n_masks, size=n_ids)


@pytest.mark.parametrize("response", [{}, {"response": "ncc"},
                                      {"response": "ncc", "damping": 0.0}])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", SELECTED_SHAPES)
def test_selected_kernel_matches_its_twin_and_the_dense_features(shape, dtype, response):
    images, templates, rows, cols = _problem(1, *shape, dtype=dtype)
    images[0] = 0.0  # blank
    if shape[0] > 1:
        images[1] = 0.75  # constant
    rng = np.random.RandomState(2)
    n_masks = shape[6] * shape[7]
    ids = _selected_ids(rng, shape[3], n_masks, 9)  # repeats allowed
    got, counts = conv_max_selected(images, templates, rows, cols, ids, return_counts=True,
                                    chunk_size=2, n_jobs=2, **response)
    want, want_counts = conv_max_selected_numpy(images, templates, rows, cols, ids,
                                                **response)
    assert got.dtype == np.float32 and got.shape == (shape[0], ids.size)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(counts, want_counts)
    assert counts.dtype == np.int64 and counts.shape == (shape[0], 3)
    dense = conv_max_features(images, templates, rows, cols, **response)[:, ids]
    scale = np.abs(dense).max()
    np.testing.assert_allclose(got, dense, rtol=1e-5, atol=1e-5 * scale)
    # never more than every position of every distinct template and pair
    n_pos = (shape[1] - shape[4] + 1) * (shape[2] - shape[5] + 1)
    n_used = np.unique(ids // n_masks).size
    assert (counts[:, 0] <= n_used * n_pos).all()
    assert (counts[:, 1] <= np.unique(ids).size * n_pos).all()
    assert (counts[:, 2] <= n_pos).all() and (counts >= 1).all()
    np.testing.assert_array_equal(
        conv_max_selected(images, templates, rows, cols, ids, **response), got)


def test_selected_kernel_on_mnist_like_digits_stops_early():
    # bright strokes answer near the bound, so the search stops well before
    # the end; zero mask weights and negative responses are searched to the end
    X, _ = _images()
    family = _family(response="ncc", damping=0.25).fit(X)
    images = X.reshape(-1, 10, 10)
    ids = np.arange(family.n_candidates_)
    args = (images, family.templates_, family.mask_rows_, family.mask_cols_, ids)
    got, counts = conv_max_selected(*args, response="ncc", return_counts=True)
    want, want_counts = conv_max_selected_numpy(*args, response="ncc")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(counts, want_counts)
    assert counts[:, 1].mean() < 0.8 * ids.size * 64
    rows = family.mask_rows_.copy()
    rows[0, 3:] = 0.0
    for negative in (False, True):
        tmpl = -family.templates_ if negative else family.templates_
        got, counts = conv_max_selected(images, tmpl, rows, family.mask_cols_, ids,
                                        response="ncc", return_counts=True)
        np.testing.assert_allclose(
            got, conv_max_features(images, tmpl, rows, family.mask_cols_,
                                   response="ncc"), rtol=1e-5, atol=1e-6)


def test_selected_work_counted_by_hand():
    # 4 x 4 images, one 2 x 2 template reading the top-left pixel of its
    # patch (norm 1), so the correlation's response at (r, s) is the pixel
    # (r, s): 3 x 3 positions. Mask 0 weighs (r, s) by 2^-(r+s), peak at
    # (0, 0); mask 1 by 2^-(4-r-s), peak at (2, 2).
    template = np.array([[[1.0, 0.0], [0.0, 0.0]]])
    rows = np.array([[1.0, 0.5, 0.25], [0.25, 0.5, 1.0]])
    cols = np.array([[1.0, 0.5, 0.25], [0.25, 0.5, 1.0]])
    ids = np.array([0, 3])  # (template 0, mask 0) and (template 0, mask 1 * 2 + 1)
    images = np.zeros((3, 4, 4))
    images[0, 0, 0] = 1.0  # where mask 0 looks first
    images[1, 2, 2] = 1.0  # where mask 0 looks last and mask 1 first
    images[2, 1, 1] = 1.0  # the centre: weight 1/4 for both
    got, counts = conv_max_selected(images, template, rows, cols, ids, return_counts=True)
    np.testing.assert_array_equal(got, [[1.0, 0.0625], [0.0625, 1.0], [0.25, 0.25]])
    # image 0: mask 0 stops after (0, 0): its value 1 beats 1/2 times the
    # largest patch norm 1; mask 1 finds 0 everywhere until (0, 0), its last
    # position: 1 + 9 products, 9 responses (the first one shared), 9 patches
    # image 1: the mirror image: mask 0 searches all 9, mask 1 stops after 1
    # image 2: by weight (ties by position) mask 0 visits (0, 0), (0, 1),
    # (1, 0), (0, 2), (1, 1): 1/4 there, which does not stop it before
    # (2, 0), of weight 1/4 too (the bound has a margin of 1e-6), but stops it
    # before (1, 2), of weight 1/8: 6 products. Mask 1 visits (2, 2),
    # (1, 2), (2, 1), then (0, 2), (1, 1), (2, 0), already computed: 6
    # products, 3 new responses.
    np.testing.assert_array_equal(counts, [[9, 10, 9], [9, 10, 9], [9, 12, 9]])
    want, want_counts = conv_max_selected_numpy(images, template, rows, cols, ids)
    np.testing.assert_array_equal(want_counts, counts)
    # a family with this model counts patch_size**2 per response, 2 per
    # product and, for the correlation, the 16 squared pixels of the bound
    family = ConvMaxTemplates(n_templates=1, patch_size=2, n_masks=4, n_patches=50,
                              random_state=0).fit(np.random.RandomState(0).rand(20, 16))
    family.templates_ = template.astype(np.float32)
    family.mask_rows_, family.mask_cols_ = rows.astype(np.float32), cols.astype(np.float32)
    family.masks_ = masks_from_factors(family.mask_rows_, family.mask_cols_)
    X = images.reshape(3, 16)
    np.testing.assert_array_equal(family.transform_candidates(X, ids), got)
    per_image = [9 * 4 + 10 * 2 + 16, 9 * 4 + 10 * 2 + 16, 9 * 4 + 12 * 2 + 16]
    assert family.macs_per_image(ids, X=X) == pytest.approx(np.mean(per_image))
    assert family.macs_per_image(ids, n_classes=3, X=X) == pytest.approx(
        np.mean(per_image) + 3 * 2)
    # without images: every pair searches all 9 positions
    assert family.macs_per_image(ids) == 9 * 4 + 18 * 2 + 16


def test_selected_kernel_edge_cases_found_by_review():
    rng = np.random.RandomState(0)
    images, templates = rng.rand(3, 6, 6), rng.randn(2, 3, 3)
    rows, cols = rng.rand(2, 4), rng.rand(2, 4)
    # no pair: an empty result, not a reshape error
    for response in ("correlation", "ncc"):
        got, counts = conv_max_selected(images, templates, rows, cols, [], response=response,
                                        return_counts=True)
        assert got.shape == (3, 0) and counts.shape == (3, 3) and not counts.any()
        want, want_counts = conv_max_selected_numpy(images, templates, rows, cols, [],
                                                    response=response)
        assert want.shape == (3, 0) and not want_counts.any()
    for bad in (None, "0", [[0, 1]]):
        with pytest.raises((TypeError, ValueError), match="ids"):
            conv_max_selected(images, templates, rows, cols, bad)
    # float64 images that leave float32's range once centred (the NCC): refused
    # instead of NaN features
    huge = np.full((1, 4, 4), -3e38)
    huge[0, 1, 1] = 3e38
    for f in (conv_max_selected, conv_max_features):
        extra = ([0],) if f is conv_max_selected else ()
        with pytest.raises(ValueError, match="float32's range"):
            f(huge, np.ones((1, 2, 2)), np.ones((1, 3)), np.ones((1, 3)), *extra,
              response="ncc")
    # a masked product that rounds below float32's normals, lifted by a huge
    # row factor: the stop keeps an absolute margin, so the search reaches it
    images = np.zeros((1, 2, 2), np.float32)
    images[0, 0, 0] = np.float32(0.8 * 2.0**-49)
    images[0, 1, 1] = 0.75
    rows = np.array([[1.0, 2.0**100]], np.float32)
    cols = np.array([[1.0, 2.0**-149]], np.float32)
    args = (images, np.ones((1, 1, 1), np.float32), rows, cols, [0])
    dense = conv_max_features(*args[:4])
    np.testing.assert_array_equal(conv_max_selected(*args), dense)
    np.testing.assert_array_equal(conv_max_selected_numpy(*args)[0], dense)
