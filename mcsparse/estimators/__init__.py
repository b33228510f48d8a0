"""Estimators with the scikit-learn API (thin: validate, call a solver, store)."""

from ._jointboost import JointBoostClassifier
from ._mkl import ConvMKLClassifier, SMSDMKLClassifier, UFOMKLClassifier
from ._mixed_norm import MixedNormClassifier, mixed_norm_classifier_path
from ._one_vs_rest import OneVsRestGreedyClassifier
from ._shareboost import ShareBoostClassifier

__all__ = [
    "ConvMKLClassifier",
    "JointBoostClassifier",
    "MixedNormClassifier",
    "OneVsRestGreedyClassifier",
    "SMSDMKLClassifier",
    "ShareBoostClassifier",
    "UFOMKLClassifier",
    "mixed_norm_classifier_path",
]
