"""Estimators with the scikit-learn API (thin: validate, call a solver, store)."""

from ._shareboost import ShareBoostClassifier

__all__ = ["ShareBoostClassifier"]
