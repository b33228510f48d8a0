"""Watching a ShareBoost path on held-out data: the validation curve and early stopping."""

import numpy as np

from ..utils.validation import check_int
from ._columns import SelectedColumns
from ._objective import LinearObjective


class ValidationMonitor:
    """A callback of :func:`~mcsparse.solvers.shareboost_path`: held-out loss after every round.

    After each round it computes the new candidate's columns on the
    held-out data, the model's loss (the path's, by default eq. (3); the
    weighted mean, no penalty)
    and error there, and records them; with ``n_iter_no_change`` it stops
    the path once the loss has not improved (strictly) on its best value
    for that many rounds, as scikit-learn's ``HistGradientBoostingClassifier``
    does.

    Parameters
    ----------
    features : CandidateFeatures
        The fitted family of the path (its ``transform_candidates``).
    X_val : {ndarray, sparse matrix} of shape (n_val, n_features)
        Held-out data.
    y_val : ndarray of shape (n_val,), dtype intp
        Their class indices.
    sample_weight : ndarray of shape (n_val,), default=None
        Their weights.
    n_classes : int
        Number of classes.
    n_iter_no_change : int, default=None
        Rounds without improvement before stopping; None never stops.
    callback : callable, default=None
        Another callback, called first; its True return value also stops.
    history : tuple of two sequences, default=None
        Losses and errors of earlier rounds (a continued path).
    selected : array-like of int, default=None
        The candidates of those earlier rounds, in order.
    loss : Loss, default=None
        The path's loss (:mod:`mcsparse.loss`); None is eq. (3).

    Attributes
    ----------
    losses_, errors_ : list of float
        Held-out loss and error after each round run.

    Raises
    ------
    ValueError
        If ``n_iter_no_change`` is below 1.
    TypeError
        If ``n_iter_no_change`` is not an int, or ``callback`` not callable.
    """

    def __init__(self, features, X_val, y_val, sample_weight=None, *, n_classes,
                 n_iter_no_change=None, callback=None, history=None, selected=None,
                 loss=None):
        if n_iter_no_change is not None:
            n_iter_no_change = check_int(n_iter_no_change, "n_iter_no_change", low=1)
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable or None, got {callback!r}")
        self.features, self.X_val = features, X_val
        self.n_iter_no_change, self.callback = n_iter_no_change, callback
        columns = SelectedColumns(X_val.shape[0], 8)
        self.objective = LinearObjective(columns, y_val, sample_weight, n_classes=n_classes,
                                         loss=loss, fit_intercept=False)
        self.y_val, self.sample_weight = self.objective.y, sample_weight
        self.losses_, self.errors_ = ([], []) if history is None else map(list, history)
        if selected is not None and len(selected):
            columns.put(features.transform_candidates(X_val, selected), 0)

    def __call__(self, info):
        """Record round ``info`` (a :class:`ShareBoostRound`); True stops the path."""
        stop = bool(self.callback(info)) if self.callback is not None else False
        block = self.features.transform_candidates(self.X_val, [info.feature])
        columns = self.objective.columns
        columns.put(block, info.coef.shape[1] - block.shape[1])
        scores = self.objective.scores_at(info.coef, info.intercept)
        self.losses_.append(self.objective.loss_at(scores)[0])
        wrong = np.argmax(scores, axis=1) != self.y_val
        self.errors_.append(float(np.average(wrong.astype(float), weights=self.sample_weight)))
        if self.n_iter_no_change is not None:
            best = int(np.argmin(self.losses_))
            stop = stop or len(self.losses_) - 1 - best >= self.n_iter_no_change
        return stop

    @property
    def best_iteration_(self):
        """The round with the lowest held-out loss (1-based; 0 before any round)."""
        return int(np.argmin(self.losses_)) + 1 if self.losses_ else 0
