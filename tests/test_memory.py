"""Memory of the MNIST feature pipeline: linear in the number of images.

The convolution-max training matrix is the pipeline's one large object
(``n_images x n_templates * n_masks`` float32, 64 kB per MNIST image at the
paper's 1000 x 16 candidates). These tests trace the NumPy allocations
(:mod:`tracemalloc` sees them; the Cython kernel's small ``malloc``
workspace is not traced, and is fixed in size) on ``n``, ``2n`` and ``4n``
random images and check that the peak

* grows linearly: the increment doubles when ``n`` doubles (it would
  quadruple for ``n**2`` growth);
* grows by about one float32 output row per image: an extra float32 copy
  of the matrix would double the slope and a float64 copy triple it;
* stays within a small factor of the output matrix;

and that ShareBoost's fit on a precomputed float32 matrix does not copy it.
The measured numbers for MNIST are in the user guide (``memory``).
"""

import gc
import tracemalloc
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from mcsparse import ShareBoostClassifier
from mcsparse.features import ConvMaxTemplates, conv_max_features, gaussian_masks

N_TEMPLATES = 64
N_MASKS = 16
ROW_BYTES = N_TEMPLATES * N_MASKS * 4  # one float32 output row
SIZES = (250, 500, 1000)  # n, 2n, 4n


def traced_peak(func, *args, **kwargs):
    """Peak of the traced allocations while ``func`` runs, and its result.

    The peak is relative to the allocations alive when it starts (the inputs
    are not counted); the result is still alive when the peak is read. One
    thread (BLAS and OpenMP): per-thread buffers stay out, and k-means does
    not spin on a busy machine.
    """
    gc.collect()
    tracemalloc.start()
    try:
        with threadpool_limits(limits=1):
            result = func(*args, **kwargs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def check_linear(sizes, peaks, row_bytes, out_bytes, *, slope_band=(0.9, 1.3)):
    """Assert linear growth of ``peaks`` over ``sizes`` (n, 2n, 4n), close to the output."""
    sizes = np.asarray(sizes, dtype=float)
    peaks = np.asarray(peaks, dtype=float)
    assert sizes[1] == 2 * sizes[0] and sizes[2] == 4 * sizes[0]
    # linear: the increment from 2n to 4n is twice the one from n to 2n
    # (n**2 growth would make it four times)
    curvature = (peaks[2] - peaks[1]) / (peaks[1] - peaks[0])
    assert 1.6 <= curvature <= 2.5, (
        f"peaks {peaks.tolist()} are not linear in n: increment ratio {curvature:.2f} "
        "(2 for linear growth, 4 for quadratic)")
    slope, intercept = np.polyfit(sizes, peaks, 1)
    low, high = slope_band
    assert low * row_bytes <= slope <= high * row_bytes, (
        f"peak grows by {slope:.0f} bytes per image, expected about one float32 output "
        f"row ({row_bytes} bytes): a hidden copy of the feature matrix?")
    # the fixed part (masks, workspace, k-means) is small next to the matrix
    assert peaks[-1] <= 1.3 * out_bytes + 2**21, (
        f"peak {peaks[-1]:.0f} bytes for an output of {out_bytes} bytes")


def test_conv_max_features_memory_is_linear():
    rng = np.random.default_rng(0)
    templates = rng.standard_normal((N_TEMPLATES, 7, 7), dtype=np.float32)
    rows, cols = gaussian_masks((22, 22), N_MASKS)
    peaks = []
    for n in SIZES:
        images = rng.random((n, 28, 28), dtype=np.float32)
        peak, out = traced_peak(conv_max_features, images, templates, rows, cols)
        assert out.shape == (n, N_TEMPLATES * N_MASKS) and out.dtype == np.float32
        peaks.append(peak)
    check_linear(SIZES, peaks, ROW_BYTES, out.nbytes)


def test_conv_max_templates_fit_transform_memory_is_linear():
    # the whole family: k-means on a fixed number of patches, then the matrix
    rng = np.random.default_rng(1)
    peaks = []
    for n in SIZES:
        X = rng.random((n, 28 * 28), dtype=np.float32)
        family = ConvMaxTemplates(n_templates=N_TEMPLATES, n_masks=N_MASKS,
                                  n_patches=500, random_state=0)
        peak, out = traced_peak(family.fit_transform, X)
        assert out.shape == (n, N_TEMPLATES * N_MASKS) and out.dtype == np.float32
        peaks.append(peak)
    check_linear(SIZES, peaks, ROW_BYTES, out.nbytes)


def test_shareboost_fit_does_not_copy_the_candidate_matrix():
    # ShareBoost keeps the float32 matrix and scores it with one product per
    # round: its own memory is O(n * (n_classes + n_rounds)) floats, far
    # below a float32 (1 x) or float64 (2 x) copy of the matrix
    rng = np.random.default_rng(2)
    n_columns = N_TEMPLATES * N_MASKS
    sizes = (1000, 4000)
    peaks = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for n in sizes:
            Phi = rng.random((n, n_columns), dtype=np.float32)
            y = np.arange(n) % 10
            clf = ShareBoostClassifier(n_features_to_select=5)
            peak, _ = traced_peak(clf.fit, Phi, y)
            assert clf.n_iter_ == 5
            peaks.append(peak)
    assert peaks[-1] < 0.25 * Phi.nbytes, (
        f"fit peaked at {peaks[-1]} bytes on a {Phi.nbytes}-byte matrix")
    per_image = (peaks[1] - peaks[0]) / (sizes[1] - sizes[0])
    assert per_image < 0.25 * n_columns * 4, (
        f"fit grows by {per_image:.0f} bytes per image, a matrix row is {n_columns * 4}")


@pytest.mark.parametrize("extra", ["float64_copy", "float32_copy", "quadratic"])
def test_check_linear_catches_a_blow_up(extra):
    # the checks above must be able to fail: the same measurement on a
    # conv_max_features that also makes a hidden copy or an n x n array
    rng = np.random.default_rng(3)
    templates = rng.standard_normal((N_TEMPLATES, 7, 7), dtype=np.float32)
    rows, cols = gaussian_masks((22, 22), N_MASKS)

    def leaky(images):
        out = conv_max_features(images, templates, rows, cols)
        n = images.shape[0]
        hidden = {"float64_copy": lambda: out.astype(np.float64),
                  "float32_copy": lambda: out.copy(),
                  "quadratic": lambda: np.ones((n, n), dtype=np.float64)}[extra]()
        return out, hidden

    peaks = []
    for n in SIZES:
        images = rng.random((n, 28, 28), dtype=np.float32)
        peak, (out, _) = traced_peak(leaky, images)
        peaks.append(peak)
    with pytest.raises(AssertionError):
        check_linear(SIZES, peaks, ROW_BYTES, out.nbytes)
