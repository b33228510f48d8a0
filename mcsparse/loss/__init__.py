"""Multiclass losses on raw scores of shape (n_samples, n_classes)."""

from ._multiclass_logistic import multiclass_logistic_loss

__all__ = ["multiclass_logistic_loss"]
