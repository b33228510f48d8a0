"""Prediction methods shared by the estimators, built on their class scores.

An estimator defines ``_scores(X)``, the (n_samples, n_classes) scores of its
final model (``W x + b`` for the linear models, ``H(x, c)`` for JointBoost),
which validates ``X`` and raises ``NotFittedError`` before fit; path
estimators also define ``_staged_scores(X)``, yielding the scores after each
round.
"""

import numpy as np
from scipy.special import log_softmax, softmax
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import validate_data

from ..utils._dask import is_dask_array, map_rows
from ..utils.validation import check_sample_weight, shown


def check_training_data(estimator, X, y, *, accept_sparse=("csr", "csc")):
    """Validate classification training data; labels become class indices.

    Returns ``(X, y_idx, classes)``: ``X`` float32 or float64 (dense, or
    sparse in ``accept_sparse``), ``y_idx`` intp indices into ``classes``.
    Raises ValueError for NaN/inf, inconsistent lengths, non-class targets
    and a single class.
    """
    X, y = validate_data(estimator, X, y, accept_sparse=accept_sparse,
                         dtype=(np.float64, np.float32), y_numeric=False)
    return (X, *check_training_targets(estimator, y))


def check_training_targets(estimator, y):
    """The labels part of :func:`check_training_data`: ``(y_idx, classes)``."""
    check_classification_targets(y)
    classes, y_idx = np.unique(y, return_inverse=True)
    if classes.shape[0] < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least 2 classes in "
            f"y; got only one class: {shown(classes[0])}"
        )
    return np.ascontiguousarray(y_idx.ravel(), dtype=np.intp), classes


def check_training_weights(estimator, sample_weight, y_idx, classes):
    """Validate ``sample_weight`` (scaled to a maximum of one) against the classes.

    Returns the weights from :func:`~mcsparse.utils.validation.check_sample_weight`.
    Raises ValueError, besides that function's errors, when fewer than two
    classes keep a positive weight (e.g. ``sample_weight=(y == 0)``): the fit
    would learn a constant predictor without saying so.
    """
    sample_weight = check_sample_weight(sample_weight, y_idx.shape[0])
    if sample_weight is not None:
        weighted = np.bincount(y_idx, weights=sample_weight, minlength=classes.shape[0]) > 0
        if np.count_nonzero(weighted) < 2:
            raise ValueError(
                f"{type(estimator).__name__} needs samples of at least 2 classes with "
                f"positive sample_weight; got positive weights only in classes "
                f"{shown(classes[weighted])}"
            )
    return sample_weight


def _labels(classes, scores):
    """``classes[argmax(scores, axis=1)]``, chunk by chunk for a dask array."""
    if is_dask_array(scores):
        return map_rows(_block_labels, scores, classes, dtype=classes.dtype)
    return _block_labels(scores, classes)


def _block_labels(scores, classes):
    return classes[np.argmax(scores, axis=1)]  # (0,) of classes' dtype for no rows


def _softmax(scores, log=False):
    """Row-wise (log-)soft-max, chunk by chunk for a dask array."""
    if is_dask_array(scores):
        return map_rows(_block_softmax, scores, log, width=scores.shape[1])
    return _block_softmax(scores, log)


def _block_softmax(scores, log):
    return (log_softmax if log else softmax)(scores, axis=1)


def _linear_scores(columns, W, b):
    """``columns[:, :p] @ W.T + b`` (``p`` the columns of ``W``), chunk by chunk for a
    dask array: the scores of a linear model on its selected columns (a prefix of them
    for a round of the path)."""
    if is_dask_array(columns):
        return map_rows(_block_linear_scores, columns, W, b, width=b.shape[0])
    return _block_linear_scores(columns, W, b)


def _block_linear_scores(columns, W, b):
    return columns[:, : W.shape[1]] @ W.T + b


def _to_decision(scores):
    """scikit-learn's convention: 1-D ``score_1 - score_0`` for two classes."""
    return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores


class SparseInputMixin:
    """scikit-learn's input tags of an estimator that takes sparse matrices."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class ScoresMixin:
    """``decision_function`` and ``predict`` from ``_scores``."""

    def decision_function(self, X):
        """Class scores of the fitted model, one column per class.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            For two classes the 1-D difference ``score_1 - score_0``. A dask
            array, float64, for a dask ``X`` (ShareBoost, one-vs-rest), with its row
            chunks (their sizes known or not; an empty chunk gives an empty
            block).
        """
        return _to_decision(self._scores(X))

    def predict(self, X):
        """Predict the class with the largest score.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted class labels (ties go to the first class). A dask
            array of ``classes_``'s dtype for a dask ``X`` (ShareBoost, one-vs-rest), with
            its row chunks.
        """
        scores = self._scores(X)
        return _labels(self.classes_, scores)


class ProbaMixin:
    """``predict_proba`` and ``predict_log_proba``: the soft-max of the scores."""

    def predict_proba(self, X):
        """Class probabilities: the soft-max of the scores.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Rows sum to one; columns follow ``classes_``. A dask array for a
            dask ``X`` (ShareBoost, one-vs-rest), with its row chunks.
        """
        return _softmax(self._scores(X))

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities; columns follow ``classes_``. A dask array for a
            dask ``X`` (ShareBoost, one-vs-rest), with its row chunks.
        """
        return _softmax(self._scores(X), log=True)


class StagedProbaMixin:
    """``staged_predict_proba``: the soft-max of the staged scores."""

    def staged_predict_proba(self, X):
        """Class probabilities of the model after each round.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        proba : ndarray of shape (n_samples, n_classes)
            One item per round ``t = 1 .. n_iter_``.
        """
        for scores in self._staged_scores(X):
            yield _softmax(scores)


class StagedMixin:
    """The whole path from one fit: ``staged_decision_function``, ``staged_predict``."""

    def staged_decision_function(self, X):
        """Compute the scores of the model after each round, from one fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            One item per round ``t = 1 .. n_iter_``. A dask array for a dask
            ``X`` (ShareBoost, one-vs-rest): compute the items together,
            ``dask.compute(*stages)``, so that the selected candidates of
            ``X`` are computed once, not once per round.
        """
        for scores in self._staged_scores(X):
            yield _to_decision(scores)

    def staged_predict(self, X):
        """Predict the classes with the model after each round, from one fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            One item per round ``t = 1 .. n_iter_``. A dask array for a dask
            ``X`` (ShareBoost, one-vs-rest): compute the items together,
            ``dask.compute(*stages)``, so that the selected candidates of
            ``X`` are computed once, not once per round.
        """
        for scores in self._staged_scores(X):
            yield _labels(self.classes_, scores)
