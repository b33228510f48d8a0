"""Convolution-max template features ([SWS2011], §7.4): the MNIST candidate family.

A candidate is a pair (template ``w_f``, spatial mask ``g_c``): the feature
of an image ``I`` is ``x_fc = max_p (I correlated with w_f)(p) * g_c(p)``,
the largest response of the template over the valid positions ``p``,
weighted by a Gaussian mask that prefers one region of the image. Templates
are k-means centres of image patches; masks are Gaussians centred on a grid
over the response map (:mod:`mcsparse.features._conv_max_templates`); the
compiled kernels and their NumPy twins are in
:mod:`mcsparse.features._conv_max_kernels`. This module holds the family,
:class:`ConvMaxTemplates`: its training matrix, its scan on dask chunks and
its count of the multiply-accumulates of a prediction.
"""

import numpy as np
from sklearn.base import TransformerMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ..utils.validation import check_int, resolve_image_shape
from ._base import CandidateFeatures
from ._chunk_scan import ChunkScan
from ._conv_max_kernels import (  # noqa: F401 - the twins, imported from here by the tests
    _check_prediction,
    _check_response,
    _check_training_store,
    conv_max_features,
    conv_max_features_numpy,
    conv_max_selected,
    conv_max_selected_numpy,
)
from ._conv_max_templates import (
    _chunk_patches,
    _patch_positions,
    _templates_from_patches,
    gaussian_masks,
    learn_templates,
    masks_from_factors,
)
from ._quantized import BLOCK_ROWS, QuantizedMatrix
from ._raw import RawFeatures, _dense_columns, _pick_columns, _raw_products


class ConvMaxTemplates(TransformerMixin, CandidateFeatures, ChunkScan):
    """Convolution-max template features as a ShareBoost candidate family.

    The MNIST features of [SWS2011]_ §7.4: candidate ``f * n_masks + c`` is
    the pair (template ``f``, mask ``c``) with value ``max_p (I correlated
    with w_f)(p) * g_c(p)`` on image ``I`` (:func:`conv_max_features`).
    ``fit`` learns the templates (:func:`learn_templates`), builds the
    Gaussian masks (:func:`gaussian_masks`) and computes the whole float32
    training matrix once (60000 x 16000 floats, 3.84 GB, for MNIST; a
    quarter of that as 8-bit codes with ``training_store="uint8"``); each
    ShareBoost round then scores all candidates with one product ``Phi^T R``
    (as :class:`RawFeatures`). After the fit only the selected pairs are
    computed on new images, and only their templates are correlated.

    Scale the images to a fixed range such as [0, 1] (MNIST's pixels / 255):
    the features grow with the pixel values, and the penalty ``alpha`` of
    ShareBoost is relative to them.

    Parameters
    ----------
    image_shape : tuple of 2 ints, default=None
        Height and width of the images, whose pixels are the rows of ``X`` in
        row-major order; None means square images.
    n_templates : int, default=1000
        Number of templates (k-means centres).
    patch_size : int, default=7
        Side of the square templates, in pixels.
    n_masks : int, default=16
        Spatial masks per template, a perfect square (a 4 x 4 grid).
    mask_sigma : float, default=None
        Standard deviation of the Gaussian masks in pixels of the response
        map; None is the grid spacing (see :func:`gaussian_masks`).
    response : {"correlation", "ncc"}, default="correlation"
        The response map: the plain correlation of [SWS2011]_, or the damped
        normalised cross-correlation, each image patch centred and divided
        by ``sqrt(||p - mean(p)||^2 + damping)`` (see
        :func:`conv_max_features`), which makes faint strokes answer like
        bold ones.
    damping : float, default=0.25
        Non-negative damping of the "ncc" response, in squared pixel units
        (0.25 suits pixels in [0, 1]); ignored by "correlation".
    n_patches : int, default=100_000
        Patches sampled for k-means.
    prediction : {"pruned", "dense"}, default="pruned"
        How the selected pairs are computed on new images
        (:meth:`transform_candidates`, so ``predict``). "pruned": each
        pair's masked maximum is searched from its mask's heaviest positions
        outwards and stops once no other position can beat it
        (:func:`conv_max_selected`): the fewest multiply-accumulates, the
        count [SWS2011]_ §7.4 reports. "dense": each selected template over
        every position, one float32 BLAS product per block of templates
        (:func:`conv_max_features`): more multiply-accumulates, but BLAS
        runs them faster, so it can predict more images per second on a
        CPU (the ``asv_benchmarks`` class ``TemplatesPrediction`` measures
        both side by side). Both give the same values up to float32
        rounding.
    training_store : {"float32", "uint8"}, default="float32"
        How ``fit`` keeps the training matrix that each round scans.
        "float32": as it is (60000 x 16000 floats, 3.84 GB, for MNIST).
        "uint8": as 8-bit codes, a quarter of that memory (5.8 GB for the
        360,000 deformed digits of §7.4 instead of 23 GB), computed and
        coded block by block of 1024 images, each block's columns with
        their own offset and step (the column's range over the block /
        255). The scan then scores the candidates from the codes, each
        value within half a step of its float32 value, so that a near tie
        between two candidates may be broken differently; the selected
        pairs' columns, which the refit uses, are computed exactly from the
        training images (by the pruned search); the family keeps them
        until :meth:`end_scan`, as a reference to ``X`` when it is float32
        and C-ordered (not a copy: do not change ``X`` during the scan).
    n_jobs : int, default=None
        Threads computing the features (joblib convention).
    random_state : int, RandomState instance or None, default=None
        Patch sampling and k-means.

    Attributes
    ----------
    templates_ : ndarray of shape (n_templates, patch_size, patch_size), float32
        Zero-mean, unit-norm templates.
    masks_ : ndarray of shape (n_masks, out_h, out_w), float32
        The masks over the ``out_h = height - patch_size + 1`` by
        ``out_w = width - patch_size + 1`` valid positions.
    mask_rows_ : ndarray of shape (sqrt(n_masks), out_h), float32
        Their row factors (see :func:`gaussian_masks`).
    mask_cols_ : ndarray of shape (sqrt(n_masks), out_w), float32
        Their column factors.
    image_shape_ : tuple of 2 ints
        Height and width of the images.
    n_features_in_ : int
        Number of pixels.
    n_candidates_ : int
        ``n_templates * n_masks``.
    support_ : ndarray of shape (height * width,), bool
        After :meth:`end_scan`: the pixels the selected templates can read
        (all of them: a template slides over the whole image).

    References
    ----------
    .. [SWS2011] S. Shalev-Shwartz, Y. Wexler, A. Shashua, "ShareBoost:
       Efficient multiclass learning with feature sharing", NIPS 2011, §7.4.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse import ShareBoostClassifier
    >>> from mcsparse.features import ConvMaxTemplates
    >>> rng = np.random.RandomState(0)
    >>> X = rng.rand(60, 100)  # 60 images of 10 x 10 pixels
    >>> y = np.arange(60) % 3
    >>> family = ConvMaxTemplates(n_templates=8, patch_size=3, n_masks=4,
    ...                           n_patches=500, random_state=0)
    >>> clf = ShareBoostClassifier(features=family, n_features_to_select=5)
    >>> clf.fit(X, y).selected_features_.shape
    (5,)
    """

    def __init__(self, image_shape=None, n_templates=1000, patch_size=7, n_masks=16,
                 mask_sigma=None, response="correlation", damping=0.25, n_patches=100_000,
                 prediction="pruned", training_store="float32", n_jobs=None,
                 random_state=None):
        self.image_shape = image_shape
        self.n_templates = n_templates
        self.patch_size = patch_size
        self.n_masks = n_masks
        self.mask_sigma = mask_sigma
        self.response = response
        self.damping = damping
        self.n_patches = n_patches
        self.prediction = prediction
        self.training_store = training_store
        self.n_jobs = n_jobs
        self.random_state = random_state

    def _images(self, X, shape):
        return X.reshape(X.shape[0], *shape)

    def fit(self, X, y=None):
        """Learn the templates and masks, and compute the training matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Training images, one per row (row-major pixels).
        y : None
            Ignored.

        Returns
        -------
        self : ConvMaxTemplates
            The fitted family, ready to scan.

        Raises
        ------
        ValueError
            If ``X`` is not a stack of images of ``image_shape`` (or square),
            the templates do not fit in the images, or a parameter is invalid.
        """
        X = validate_data(self, X, dtype=(np.float32, np.float64))
        self._set_masks(X.shape[1])
        images = self._images(X, self.image_shape_)
        self.templates_ = learn_templates(
            images, self.n_templates, self.patch_size, self.n_patches, self.random_state)
        self.n_candidates_ = self.templates_.shape[0] * self.masks_.shape[0]
        if self.training_store == "uint8":
            self._scan = None
            self._images_fit = np.ascontiguousarray(images, dtype=np.float32)
            self._X_fit = self._quantized_features(self._images_fit)
        else:
            self._scan, self._images_fit = RawFeatures().fit(self._chunk_features(X)), None
            self._X_fit = self._scan._X_fit
        return self

    def _quantized_features(self, images):
        """The training matrix as 8-bit codes, computed one block of images at a time."""
        codes = QuantizedMatrix(images.shape[0], self.n_candidates_, n_jobs=self.n_jobs)
        for s in range(0, images.shape[0], BLOCK_ROWS):
            codes.set_block(s, conv_max_features(
                images[s:s + BLOCK_ROWS], self.templates_, self.mask_rows_,
                self.mask_cols_, **self._kernel_kwargs()))
        return codes

    def _set_masks(self, n_pixels):
        """Check the shapes and the response, set ``image_shape_`` and the masks."""
        _check_response(self.response, self.damping)
        _check_prediction(self.prediction)
        _check_training_store(self.training_store)
        self.image_shape_ = resolve_image_shape(n_pixels, self.image_shape)
        check_int(self.patch_size, "patch_size", low=2)
        if self.patch_size > min(self.image_shape_):
            raise ValueError(
                f"patch_size={self.patch_size} is larger than the images "
                f"({self.image_shape_[0]} x {self.image_shape_[1]})"
            )
        out_shape = tuple(v - self.patch_size + 1 for v in self.image_shape_)
        self.mask_rows_, self.mask_cols_ = gaussian_masks(
            out_shape, self.n_masks, self.mask_sigma)
        self.masks_ = masks_from_factors(self.mask_rows_, self.mask_cols_)

    def _check_chunk_params(self, n_features):
        """The image shape and parameters on chunks (checked before any task);
        sets the masks. Returns ``(n_templates, n_patches)``."""
        self._set_masks(n_features)
        if self.training_store != "float32":
            raise ValueError(
                f"training_store={self.training_store!r} is for in-memory fits; on a "
                "dask array the chunks' candidate matrices stay on the workers as "
                "float32: use training_store='float32'")
        return (check_int(self.n_templates, "n_templates", low=1),
                check_int(self.n_patches, "n_patches", low=1))

    def _fit_chunks(self, chunks):
        """Fit on a dask array's row chunks (:mod:`mcsparse.features._dask`).

        The patch positions are drawn here as :func:`learn_templates` draws
        them, each chunk cuts out its images' patches, and k-means runs here
        on the gathered patches: the templates of an in-memory fit on the
        same images. The candidate matrix is then computed per chunk on the
        workers (:meth:`_chunk_features`) and never exists in one place.
        """
        self.n_features_in_ = chunks.n_features
        n_templates, n_patches = self._check_chunk_params(chunks.n_features)
        rng = check_random_state(self.random_state)
        idx, r, s = _patch_positions((chunks.n_samples, *self.image_shape_),
                                     self.patch_size, n_patches, rng)
        order, parts = [], []
        for i in range(len(chunks.sizes)):
            rows = chunks.rows(i)
            mine = np.flatnonzero((idx >= rows.start) & (idx < rows.stop))
            order.append(mine)
            parts.append((idx[mine] - rows.start, r[mine], s[mine]))
        patches = np.empty((idx.size, self.patch_size**2))
        gathered = chunks.gather_list(chunks.map(_chunk_patches, per_chunk=(parts,),
                                                 shared=(self.image_shape_, self.patch_size)))
        for mine, values in zip(order, gathered):
            patches[mine] = values
        self.templates_ = _templates_from_patches(patches, n_templates, n_patches, rng)
        self.n_candidates_ = self.templates_.shape[0] * self.masks_.shape[0]
        self._scan = self._X_fit = None  # the candidate matrix stays on the workers
        return self

    #: The chunks are replaced on the workers by their candidate matrices.
    _replaces_chunks = True

    def _chunk_features(self, X):
        """The candidate matrix of a row chunk of images: (n_rows, n_candidates), float32."""
        images = self._images(X, self.image_shape_)
        return conv_max_features(images, self.templates_, self.mask_rows_,
                                 self.mask_cols_, **self._kernel_kwargs())

    def _kernel_kwargs(self):
        """The keyword arguments of every :func:`conv_max_features` call of the family."""
        return {"response": self.response, "damping": self.damping, "n_jobs": self.n_jobs}

    def _chunk_scanner(self):
        """What a round's chunk tasks are sent: the raw columns of the candidate matrix.

        The chunks hold the template responses (:meth:`_chunk_features`), so
        a task needs no templates, and a fitted family with them (0.2 MB for
        1000 templates) would travel with each task of every round.
        """
        scan = RawFeatures()
        scan.n_features_in_, scan._X_fit = self.n_candidates_, None
        return scan._set_groups(self.n_candidates_)

    def _chunk_products(self, features, residual):
        """A chunk's part of ``Phi^T R``, from its candidate matrix (:meth:`_chunk_features`)."""
        return _raw_products(features, residual)

    def _pick(self, products, excluded):
        """``(id, score)`` of the best pair from the summed ``Phi^T R``."""
        return _pick_columns(products, excluded, None, self.n_candidates_)

    def _chunk_columns(self, features, ids):
        """The pairs ``ids`` on a chunk, from its candidate matrix."""
        return _dense_columns(features, ids)

    def fit_transform(self, X, y=None):
        """Fit, and return the training matrix (the scan's, not copied, with "float32").

        With ``training_store="uint8"`` the scan keeps codes, so the float32
        matrix is computed again (:meth:`transform`).

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Training images, one per row.
        y : None
            Ignored.

        Returns
        -------
        features : ndarray of shape (n_samples, n_templates * n_masks), float32
            Column ``f * n_masks + c`` is template ``f`` with mask ``c``.
        """
        self.fit(X)
        if self.training_store == "uint8":
            return self.transform(X)
        return self._X_fit

    def _new_images(self, X):
        """Validate new data against the fit; return it as (n, height, width)."""
        check_is_fitted(self, "templates_")
        X = validate_data(self, X, dtype=(np.float32, np.float64), reset=False)
        return self._images(X, self.image_shape_)

    def best_candidate(self, residual, excluded):
        """The pair with the largest ``||R^T x_c||_1`` outside ``excluded``.

        One float32 product with the training matrix (see
        :meth:`RawFeatures.best_candidate`).

        Parameters
        ----------
        residual : ndarray of shape (n_samples, n_classes), float64
            Residual rows of the training samples.
        excluded : ndarray of shape (n_excluded,), intp
            Candidates that must not be returned.

        Returns
        -------
        id : int
            The chosen (template, mask) pair ``f * n_masks + c``.
        score : float
            Its score.

        Raises
        ------
        ValueError
            If every candidate is excluded.
        """
        self._check_scanning()
        if self._scan is not None:
            return self._scan.best_candidate(residual, excluded)
        excluded = self._check_excluded(excluded, self.n_candidates_)
        residual = self._check_residual(residual, self._X_fit.shape[0])
        return self._pick(self._X_fit.rmatmul(residual), excluded)

    def _candidate_name(self, j, input_names):
        t, m = divmod(j, self.masks_.shape[0])
        return f"template {t}, mask {m}"

    def training_columns(self, ids):
        """The pairs ``ids`` on the training images.

        Parameters
        ----------
        ids : array-like of int
            Candidate ids ``f * n_masks + c``.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            The features of the training images, as computed in ``fit``
            (with ``training_store="uint8"``: computed now, exactly).
        """
        self._check_scanning()
        if self._scan is not None:
            return self._scan.training_columns(ids)
        ids = self._check_ids(ids, self.n_candidates_)
        # large tasks: a round computes a few columns over all training images
        return conv_max_selected(self._images_fit, self.templates_, self.mask_rows_,
                                 self.mask_cols_, ids, chunk_size=BLOCK_ROWS,
                                 **self._kernel_kwargs()).astype(np.float64)

    def end_scan(self, ids):
        """Free the training matrix; ``support_`` marks every pixel.

        Parameters
        ----------
        ids : array-like of int
            The selected candidates (only checked: the templates are kept
            whole, and every feature reads all pixels).

        Returns
        -------
        self : ConvMaxTemplates
            The family, which can no longer select.
        """
        check_is_fitted(self)
        self._check_ids(ids, self.n_candidates_)
        self.support_ = np.ones(self.n_features_in_, dtype=bool)
        self._scan = self._X_fit = self._images_fit = None
        return self

    def transform_candidates(self, X, ids):
        """The pairs ``ids`` on new images; only their templates are correlated.

        With ``prediction="pruned"`` each pair's masked maximum is searched
        from its mask's heaviest positions outwards and stops once no other
        position can beat it (:func:`conv_max_selected`); with "dense" the
        selected templates are correlated at every position
        (:func:`conv_max_features`). Either gives :meth:`transform`'s
        columns ``ids`` up to float32 rounding; :meth:`macs_per_image`
        counts the work.

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Images, one per row.
        ids : array-like of int
            Candidate ids ``f * n_masks + c``.

        Returns
        -------
        columns : ndarray of shape (n_samples, len(ids)), float64
            The features of the new images, in the order of ``ids``.

        Raises
        ------
        ValueError
            If ``X`` does not match the fit, an id is out of range, or
            ``prediction`` is unknown.
        """
        images = self._new_images(X)
        ids = self._check_ids(ids, self.n_candidates_)
        if _check_prediction(self.prediction) == "pruned":
            return conv_max_selected(images, self.templates_, self.mask_rows_,
                                     self.mask_cols_, ids,
                                     **self._kernel_kwargs()).astype(np.float64)
        n_masks = self.masks_.shape[0]
        used, where = np.unique(ids // n_masks, return_inverse=True)
        values = conv_max_features(images, self.templates_[used], self.mask_rows_,
                                   self.mask_cols_, **self._kernel_kwargs())
        return values[:, where * n_masks + ids % n_masks].astype(np.float64)

    def transform(self, X):
        """All ``n_candidates_`` features of new images, float32.

        Parameters
        ----------
        X : array-like of shape (n_samples, height * width)
            Images, one per row, of the shape seen in ``fit``.

        Returns
        -------
        features : ndarray of shape (n_samples, n_templates * n_masks), float32
            Column ``f * n_masks + c`` is template ``f`` with mask ``c``.
        """
        return conv_max_features(self._new_images(X), self.templates_,
                                 self.mask_rows_, self.mask_cols_, **self._kernel_kwargs())

    def macs_per_image(self, ids, n_classes=None, X=None):
        """Count the multiply-accumulates per image of computing the pairs ``ids``.

        What :meth:`transform_candidates` (so ``predict``) computes per
        image. With ``prediction="pruned"``, as :func:`conv_max_selected`
        counts it on the images ``X`` (the mean over them; without ``X``,
        the most it can compute, every pair searching every position):
        ``patch_size**2`` per template response, 2 per (pair, position)
        product with a mask, for the "ncc" response ``2 * patch_size**2``
        per patch read (its centred squared norm and its scaling), for
        "correlation" one per pixel (the squares that bound the responses).
        With "dense" (``X`` is not needed): one correlation of each distinct
        template over all ``out_h * out_w`` positions, the two passes of the
        masked max for all masks of those templates (``n_v * out_h * out_w +
        n_u * n_v * out_h`` multiplies, see :func:`conv_max_features`), and
        for "ncc" ``2 * patch_size**2`` per position. When ``n_classes`` is
        given, the ``n_classes x len(ids)`` products of the linear predictor
        are added. [SWS2011] §7.4 reports about 3.3e6 for its 305-round model.

        Parameters
        ----------
        ids : array-like of int
            Selected candidate ids.
        n_classes : int, default=None
            Rows of ``W``; None leaves out the linear predictor.
        X : array-like of shape (n_samples, height * width), default=None
            Images to count the pruned search on; None gives its upper
            bound. Ignored by "dense".

        Returns
        -------
        macs : float
            Multiply-accumulates per image.

        Raises
        ------
        TypeError
            If ``ids`` are not integers or ``n_classes`` is not an int.
        ValueError
            If an id is out of range, ``n_classes`` is below 1, ``X`` is not
            valid input for :meth:`transform_candidates` (checked by
            "pruned" only), or ``prediction`` is unknown.
        """
        check_is_fitted(self, "templates_")
        ids = self._check_ids(ids, self.n_candidates_)
        if n_classes is not None:
            n_classes = check_int(n_classes, "n_classes", low=1)
        pairs = np.unique(ids)
        if _check_prediction(self.prediction) == "pruned":
            macs = self._pruned_macs(pairs, X)
        else:
            macs = self._dense_macs(pairs)
        if n_classes is not None:
            macs += n_classes * ids.size
        return float(macs)

    def _dense_macs(self, pairs):
        """Per image, what the dense correlation of the pairs' templates computes."""
        n_masks, out_h, out_w = self.masks_.shape
        n_u, n_v = self.mask_rows_.shape[0], self.mask_cols_.shape[0]
        n_used = np.unique(pairs // n_masks).size
        macs = n_used * (out_h * out_w * (self.patch_size**2 + n_v) + n_u * n_v * out_h)
        if self.response == "ncc" and n_used:
            macs += out_h * out_w * 2 * self.patch_size**2
        return float(macs)

    def _pruned_macs(self, pairs, X):
        """Per image, the mean (or without ``X`` the most) the pruned search computes."""
        n_masks, out_h, out_w = self.masks_.shape
        area = self.patch_size**2
        if not pairs.size:
            return 0.0
        if X is None:
            n_pos = out_h * out_w
            work = np.array([[np.unique(pairs // n_masks).size * n_pos, pairs.size * n_pos,
                              n_pos]])
        else:
            _, work = conv_max_selected(self._new_images(X), self.templates_, self.mask_rows_,
                                        self.mask_cols_, pairs, return_counts=True,
                                        **self._kernel_kwargs())
        per_patch = 2 * area if self.response == "ncc" else 0
        macs = float((work @ np.array([area, 2, per_patch], dtype=np.float64)).mean())
        if self.response == "correlation":
            macs += self.image_shape_[0] * self.image_shape_[1]
        return macs
