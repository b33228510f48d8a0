"""Losses on raw scores of shape (n_samples, n_scores), and penalties on ``W``.

The objective of every linear solver of mcsparse is a loss of this module
on the scores ``W x + b`` plus a penalty of this module on ``W``
(:mod:`mcsparse.solvers` assembles them).
"""

from ._multiclass_logistic import (
    BinaryLogisticLoss,
    MulticlassLogisticLoss,
    multiclass_logistic_loss,
)
from ._softmax import SoftmaxLoss
from ._penalties import Frobenius, MixedNorm, SmoothedLinfOne, make_penalty

__all__ = [
    "BinaryLogisticLoss",
    "Frobenius",
    "MixedNorm",
    "MulticlassLogisticLoss",
    "SmoothedLinfOne",
    "SoftmaxLoss",
    "make_penalty",
    "multiclass_logistic_loss",
]
