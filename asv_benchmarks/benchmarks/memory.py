"""Peak memory of the MNIST feature pipeline against the number of images.

The pipeline of ``examples/shareboost/plot_sws2011_fig4_mnist_rounds.py``:
1000 templates of 7x7 (k-means centres of MNIST patches) x 16 Gaussian masks
= 16,000 candidates, whose ``n_images x 16000`` float32 training matrix
(64,000 bytes per image) is the one large object. ``peakmem_*`` is the peak
resident memory of the whole benchmark process (interpreter, libraries and
the cached images included), so the growth from one ``n_images`` to the
next is what to read: about 64 kB per image. ``track_traced_peak_mb`` is the
pipeline's own peak of NumPy allocations (:mod:`tracemalloc`), free of that
fixed part, and ``track_peak_over_matrix`` its ratio to the matrix size (1.0
means no copy).

The MNIST images and the templates are prepared once in ``setup_cache``, so
that the transient peak of decompressing MNIST does not hide the smaller
sizes. Needs ``MCSPARSE_DATA`` (skipped without MNIST). Quick mode: the two
smaller sizes. One thread everywhere.
"""

import tracemalloc
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.features import (
    ConvMaxTemplates,
    conv_max_features,
    gaussian_masks,
    learn_templates,
)

from .common import Benchmark, quick

N_TEMPLATES = 1000
N_MASKS = 16
N_ROUNDS = 5


class MNISTFeatureMemory(Benchmark):
    """Peak memory of the template features and of a short ShareBoost fit.

    ``conv_max_features``: the 16,000-column matrix from fixed templates;
    ``family_fit``: :class:`~mcsparse.features.ConvMaxTemplates` ``fit``
    (k-means on 100,000 patches, a fixed cost, then the matrix);
    ``shareboost_fit``: the whole pipeline, ``ShareBoostClassifier(features=
    ConvMaxTemplates(...))`` for 5 rounds. Up to about 3000 images the two
    fits peak while learning the templates (a fixed ~200 MB above the
    process), so their ``peakmem`` is flat over these sizes; a change there
    means k-means or the patches grew. ``conv_max_features`` shows the
    linear growth (16 MB more per 250 images).
    """

    param_names = ["n_images"]
    params = ([250, 500, 1000, 2000],)
    timeout = 900

    def setup_cache(self):
        from mcsparse.datasets import load_mnist

        try:
            X, y = load_mnist(subset="train", return_X_y=True)
        except FileNotFoundError as exc:  # not bundled: needs MCSPARSE_DATA
            return {"missing": str(exc)}
        n_max = max(self.params[0])
        X = (X[:n_max] / 255.0).astype(np.float32)
        templates = learn_templates(X.reshape(-1, 28, 28), N_TEMPLATES, random_state=0)
        return {"X": X, "y": np.asarray(y[:n_max]), "templates": templates}

    def setup(self, cache, n_images):
        if "missing" in cache:
            raise NotImplementedError(f"MNIST not available: {cache['missing']}")
        if quick() and n_images > 500:
            raise NotImplementedError("skipped in quick mode")
        self.X = np.ascontiguousarray(cache["X"][:n_images])
        self.y = cache["y"][:n_images]
        self.images = self.X.reshape(n_images, 28, 28)
        self.templates = cache["templates"]
        self.rows, self.cols = gaussian_masks((22, 22), N_MASKS)
        warnings.simplefilter("ignore", ConvergenceWarning)

    def _features(self):
        return conv_max_features(self.images, self.templates, self.rows, self.cols,
                                 n_jobs=1)

    def _family(self):
        return ConvMaxTemplates(n_templates=N_TEMPLATES, n_masks=N_MASKS, n_jobs=1,
                                random_state=0)

    def peakmem_conv_max_features(self, cache, n_images):
        self._features()

    def peakmem_family_fit(self, cache, n_images):
        self._family().fit(self.X)

    def peakmem_shareboost_fit(self, cache, n_images):
        ShareBoostClassifier(features=self._family(), n_features_to_select=N_ROUNDS,
                             alpha=3e-5).fit(self.X, self.y)

    def _traced_peak(self):
        tracemalloc.start()
        try:
            out = self._features()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return peak, out.nbytes

    def track_traced_peak_mb(self, cache, n_images):
        return self._traced_peak()[0] / 1e6

    track_traced_peak_mb.unit = "MB"

    def track_peak_over_matrix(self, cache, n_images):
        peak, matrix = self._traced_peak()
        return peak / matrix

    track_peak_over_matrix.unit = "ratio"
