"""Declared capabilities of a candidate family beyond the required protocol.

:class:`ChunkScan`
    The family scans a dask array chunk by chunk: what
    :class:`~mcsparse.features._dask.DaskCandidates` runs on the workers.
    :class:`~mcsparse.features.RawFeatures`,
    :class:`~mcsparse.features.DecisionStumps` (with ``max_bins``) and
    :class:`~mcsparse.features.ConvMaxTemplates` are.
:class:`ModelScan`
    The family computes the residual itself, from the model, next to its
    data (``DaskCandidates``): ShareBoost then calls
    :meth:`ModelScan.best_candidate_for_model` with plain data
    (:class:`ScanLabels`, the selected ids and the model) instead of
    ``best_candidate`` with the residual.

A family declares a capability by deriving from the mixin; the runners check
``isinstance``, never the presence of a method.
"""

from abc import ABC, abstractmethod
from typing import Any, NamedTuple


class ChunkScan(ABC):
    """Mixin of a family that scans the row chunks of a dask array.

    Both steps of a ShareBoost round are sums over rows, so a family that
    can score a chunk's rows and compute its candidates on a chunk runs on
    a cluster. The methods below are called by
    :class:`~mcsparse.features._dask.DaskCandidates`, on the client
    (``_fit_chunks``, ``_chunk_scanner``, ``_picked``) or in the tasks on
    the workers (the others); they are hooks of that runner, not user API.

    Required: ``_fit_chunks``, ``_chunk_products``, ``_pick``,
    ``_chunk_columns``. Optional (defaults here): ``_check_chunk_params``,
    ``_chunk_features`` with ``_replaces_chunks = True``, ``_chunk_scanner``,
    ``_picked``.

    ``best_candidate`` of such a family in memory is its ``_pick`` of
    ``_chunk_products`` on the whole training data: what the chunks' parts
    add up to.
    """

    #: Whether each chunk is replaced on its worker by ``_chunk_features(X_c)``.
    _replaces_chunks = False

    @abstractmethod
    def _fit_chunks(self, chunks):
        """Fit from the row chunks; set ``n_features_in_`` and ``n_candidates_``.

        Parameters
        ----------
        chunks : RowChunks
            The persisted chunks (:mod:`mcsparse.features._dask`): global
            statistics by ``chunks.map_reduce``.

        Returns
        -------
        self : ChunkScan
        """

    @abstractmethod
    def _chunk_products(self, X, residual):
        """A chunk's part of the unnormalised gradient columns of every candidate.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            A row chunk (or its ``_chunk_features``).
        residual : ndarray of shape (n_rows, n_classes), float64
            The chunk's residual rows.

        Returns
        -------
        products : ndarray of shape (n_candidates, n_classes)
            (Per column, for a family of groups.) The chunks' parts add up.
        """

    @abstractmethod
    def _pick(self, products, excluded):
        """``(id, score)`` from the summed products: what ``best_candidate`` returns.

        Parameters
        ----------
        products : ndarray
            The sum of the chunks' ``_chunk_products``.
        excluded : ndarray of intp
            Sorted candidate ids that must not be returned.

        Returns
        -------
        id : int
        score : float
        """

    @abstractmethod
    def _chunk_columns(self, X, ids):
        """Candidates ``ids`` on a row chunk.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)
            A row chunk (or its ``_chunk_features``).
        ids : ndarray of intp

        Returns
        -------
        columns : ndarray of shape (n_rows, n_columns), float64
        """

    def _check_chunk_params(self, n_features):
        """Refuse parameters that cannot run on chunks of ``n_features`` columns.

        Called on the client before any chunk is read, so that a refused
        parameter schedules no task; ``_fit_chunks`` runs the same checks.
        This default checks nothing.

        Parameters
        ----------
        n_features : int

        Raises
        ------
        ValueError, TypeError
            The family's errors for its parameters.
        """

    def _chunk_features(self, X):
        """The candidate matrix of a chunk, kept on its worker instead of the chunk.

        Called only when ``_replaces_chunks`` is True; this default keeps the
        chunk.

        Parameters
        ----------
        X : ndarray of shape (n_rows, n_features)

        Returns
        -------
        features : ndarray of shape (n_rows, n_candidates)
        """
        return X

    def _chunk_scanner(self):
        """What a round's chunk tasks are sent: an object with the chunk methods.

        It is sent to each worker once a fit, and with every task when the
        rounds run as tasks (tens a round), so it should be small; this
        default is the fitted family itself.

        Returns
        -------
        scanner : ChunkScan
        """
        return self

    def _picked(self, j):
        """Told, on the client, the candidate a pick on the workers returned.

        A family that notes its chosen candidates in ``best_candidate`` (the
        stumps' thresholds, for their names) does it here; by default
        nothing.

        Parameters
        ----------
        j : int
        """


class ScanLabels(NamedTuple):
    """What a residual computed next to the data needs, besides the model.

    Parameters
    ----------
    y : ndarray of shape (n_samples,), intp
        Class indices of the training samples.
    sample_weight : ndarray of shape (n_samples,) or None
        Their weights (None: all ones).
    loss : object
        The loss, whose ``sum_gradient(scores, y, sample_weight, out)`` fills
        ``out`` with the residual rows ``w_i dl/ds`` at ``scores``.
    """

    y: Any
    sample_weight: Any
    loss: Any


class ModelScan(ABC):
    """Mixin of a family that computes the residual itself, from the model.

    ShareBoost calls :meth:`best_candidate_for_model` instead of
    ``best_candidate``, and keeps the selected columns next to the family's
    rows when they would not fit on the client (:attr:`row_chunks`).
    """

    @abstractmethod
    def best_candidate_for_model(self, labels, selected, coef, intercept, excluded):
        """``best_candidate`` at the model ``(coef, intercept)`` on ``selected``.

        Parameters
        ----------
        labels : ScanLabels
            The labels, weights and loss (any object with these attributes).
        selected : sequence of int
            The selected candidates, in the order of ``coef``'s columns.
        coef : ndarray of shape (n_scores, n_columns)
            ``W`` on the selected candidates' columns (not centred).
        intercept : ndarray of shape (n_scores,)
        excluded : ndarray of intp
            Sorted ids that must not be returned.

        Returns
        -------
        id : int
        score : float
            As ``best_candidate`` with the residual at this model.
        """

    @property
    @abstractmethod
    def row_chunks(self):
        """The persisted row chunks of the training data (``RowChunks``)."""
