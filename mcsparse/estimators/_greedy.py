"""The base of the greedy classifiers: their shared parameters, data checks and rounds."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import RealNotInt
from sklearn.utils.validation import check_is_fitted, validate_data

from ..features._base import fit_features
from ..solvers import default_alpha
from ..utils._dask import check_dask_matrix, is_dask_array, map_rows
from ..utils.validation import FiniteInterval, StrChoices, ValidatedParamsMixin
from ._base import SparseInputMixin, check_training_data, check_training_weights
from ._features import FEATURES_CONSTRAINTS, resolve_features


def resolve_rounds(n, n_features, family, name="n_features_to_select"):
    """The number of rounds that ``n`` (None, an int or a fraction) asks of ``family``.

    None is half of ``n_features`` (at least 1, at most the candidates), a
    float in (0, 1] that fraction of the candidates. ``n`` is a checked
    parameter: None, an int or a finite float (not a bool).

    Raises
    ------
    ValueError
        If the family has no candidate, or ``n`` is out of range.
    """
    n_candidates = family.n_candidates_
    if n_candidates < 1:
        raise ValueError(
            f"{type(family).__name__} has no candidate features on "
            "this training data (e.g. every feature is constant)"
        )
    if n is None:
        return min(n_candidates, max(1, n_features // 2))
    if isinstance(n, Integral):
        if not 1 <= n <= n_candidates:
            raise ValueError(
                f"{name} must be in [1, number of candidates={n_candidates}], got {n}")
        return int(n)
    if not 0 < n <= 1:
        raise ValueError(f"{name} as a float is a fraction of the candidates and must be "
                         f"in (0, 1], got {n}")
    return max(1, int(n * n_candidates))


def _weight_scale(sample_weight):
    """The largest of validated weights as given: the checked weights times it are them."""
    return 1.0 if sample_weight is None else float(np.max(np.asarray(sample_weight,
                                                                     dtype=np.float64)))


def _chunk_candidates(X, family, ids, width, block_info=None):
    """Candidates ``ids`` on one chunk of a dask array, float64; errors name the chunk.

    An empty chunk (what a filter leaves) gives ``(0, width)``.
    """
    if X.shape[0] == 0:
        return np.zeros((0, width))
    try:
        return np.asarray(family.transform_candidates(X, ids), dtype=np.float64)
    except ValueError as exc:
        if not block_info:
            raise
        index = block_info[0]["chunk-location"][0]
        start, stop = block_info[0]["array-location"][0]
        rows = ("" if np.isnan(start) or np.isnan(stop)
                else f" (rows {int(start)} to {int(stop) - 1})")
        raise ValueError(f"X chunk {index}{rows}: {exc}") from None


class _BaseGreedy(SparseInputMixin, ValidatedParamsMixin, ClassifierMixin, BaseEstimator):
    """Parameter checks and data handling shared by the greedy classifiers."""

    _parameter_constraints: dict = {
        # the number of candidates bounds it: checked by resolve_rounds at fit
        "n_features_to_select": [None, FiniteInterval(Integral), FiniteInterval(RealNotInt)],
        "features": FEATURES_CONSTRAINTS,
        "alpha": [StrChoices(["auto"]), FiniteInterval(Real, 0, None, closed="left")],
        "fit_intercept": ["boolean"],
        "tol": [FiniteInterval(Real, 0, 1, closed="neither")],
        "max_iter": [FiniteInterval(Integral, 1)],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
    }

    def __init__(self, *, n_features_to_select=None, features="raw", alpha="auto",
                 fit_intercept=True, tol=1e-4, max_iter=200, verbose=0, random_state=None):
        self.n_features_to_select = n_features_to_select
        self.features = features
        self.alpha = alpha
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.verbose = verbose
        self.random_state = random_state

    def _resolve_n_features_to_select(self, n_features, family):
        return resolve_rounds(self.n_features_to_select, n_features, family)

    def _fit_candidates(self, X, y, sample_weight):
        """Validate the training data, set ``classes_``, fit ``features_``, set ``alpha_``.

        Returns ``(X, y_idx, sample_weight)`` ready for the solver: samples of
        weight zero are dropped (they change nothing but the candidates they
        would define, such as stump thresholds).
        """
        X, y_idx, sample_weight, weight_scale = self._validate_fit_data(X, y, sample_weight)
        self.features_ = fit_features(resolve_features(self.features, self.random_state), X)
        self.alpha_ = self._resolve_alpha(self.features_, X.shape[0], sample_weight,
                                          weight_scale)
        return X, y_idx, sample_weight

    def _validate_fit_data(self, X, y, sample_weight):
        """Check the training data (the parameters are checked); set ``classes_``.

        Returns ``(X, y_idx, sample_weight, weight_scale)``: the checked
        weights are the given ones divided by ``weight_scale``, which
        ``alpha="auto"`` multiplies back.
        """
        X, y_idx, classes = check_training_data(self, X, y)
        given = sample_weight
        sample_weight = check_training_weights(self, sample_weight, y_idx, classes)
        weight_scale = _weight_scale(None if sample_weight is None else given)
        if sample_weight is not None and not np.all(sample_weight > 0):
            keep = sample_weight > 0
            X, y_idx, sample_weight = X[keep], y_idx[keep], sample_weight[keep]
        self.classes_ = classes
        return X, y_idx, sample_weight, weight_scale

    def _resolve_alpha(self, features, n_samples, sample_weight, weight_scale):
        """``alpha``, or for "auto" :func:`mcsparse.solvers.default_alpha` (the sum
        of the weights as given: the checked ones times ``weight_scale``)."""
        if isinstance(self.alpha, str):
            weight_sum = None if sample_weight is None else weight_scale * float(
                np.sum(sample_weight))
            return default_alpha(features, n_samples, sample_weight,
                                 fit_intercept=bool(self.fit_intercept),
                                 weight_sum=weight_sum)
        return float(self.alpha)

    def _candidate_columns(self, X, ids):
        """Validate new data and compute the candidates ``ids`` on it (float64).

        A dask array gives a dask array of the same row chunks (known or
        not), computed chunk by chunk.
        """
        check_is_fitted(self)
        if is_dask_array(X):
            # row chunks of unknown size and empty ones are fine: each maps to its rows
            X = check_dask_matrix(X, "X", self.n_features_in_, unknown_rows=True)
            widths = getattr(self.features_, "candidate_widths_", None)
            width = len(ids) if widths is None else int(np.sum(widths[ids]))
            return map_rows(_chunk_candidates, X, self.features_, ids, width, width=width)
        X = validate_data(
            self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
            reset=False,
        )
        return self.features_.transform_candidates(X, ids)
