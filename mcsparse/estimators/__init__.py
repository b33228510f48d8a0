"""Estimators with the scikit-learn API (thin: validate, call a solver, store)."""

from ._jointboost import JointBoostClassifier
from ._mkl import ConvMKLClassifier, SMSDMKLClassifier, UFOMKLClassifier
from ._mixed_norm import MixedNormClassifier, mixed_norm_classifier_path
from ._one_vs_rest import OneVsRestGreedyClassifier
from ._shareboost import ShareBoostClassifier
from ._shareboost_cv import ShareBoostClassifierCV

__all__ = [
    "ConvMKLClassifier",
    "JointBoostClassifier",
    "MixedNormClassifier",
    "OneVsRestGreedyClassifier",
    "SMSDMKLClassifier",
    "ShareBoostClassifier",
    "ShareBoostClassifierCV",
    "UFOMKLClassifier",
    "mixed_norm_classifier_path",
]
