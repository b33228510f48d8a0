"""Prediction methods shared by the estimators, built on their class scores.

An estimator defines ``_scores(X)``, the (n_samples, n_classes) scores of its
final model (``W x + b`` for the linear models, ``H(x, c)`` for JointBoost),
which validates ``X`` and raises ``NotFittedError`` before fit; path
estimators also define ``_staged_scores(X)``, yielding the scores after each
round.
"""

import numpy as np
from scipy.special import log_softmax, softmax


def _to_decision(scores):
    """scikit-learn's convention: 1-D ``score_1 - score_0`` for two classes."""
    return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores


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
            For two classes the 1-D difference ``score_1 - score_0``.
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
            Predicted class labels (ties go to the first class).
        """
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]


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
            Rows sum to one; columns follow ``classes_``.
        """
        return softmax(self._scores(X), axis=1)

    def predict_log_proba(self, X):
        """Logarithm of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Returns
        -------
        log_proba : ndarray of shape (n_samples, n_classes)
            Log-probabilities; columns follow ``classes_``.
        """
        return log_softmax(self._scores(X), axis=1)


class StagedMixin:
    """The whole path from one fit: ``staged_decision_function``, ``staged_predict``."""

    def staged_decision_function(self, X):
        """Scores of the model after each round: the whole path from one fit.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        scores : ndarray of shape (n_samples, n_classes) or (n_samples,)
            One item per round ``t = 1 .. n_iter_``.
        """
        for scores in self._staged_scores(X):
            yield _to_decision(scores)

    def staged_predict(self, X):
        """Predictions of the model after each round.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Samples.

        Yields
        ------
        y_pred : ndarray of shape (n_samples,)
            One item per round ``t = 1 .. n_iter_``.
        """
        for scores in self._staged_scores(X):
            yield self.classes_[np.argmax(scores, axis=1)]
