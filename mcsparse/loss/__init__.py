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
from ._base import Loss
from ._numpy import NumpyRowKernel
from ._softmax import SoftmaxLoss
from ._penalties import Frobenius, MixedNorm, SmoothedLinfOne, make_penalty

#: The losses by name, as the estimators' ``loss`` parameter gives them.
LOSSES = {"margin_logistic": MulticlassLogisticLoss, "softmax": SoftmaxLoss}


def make_loss(name):
    """The loss named ``name``, a key of :data:`LOSSES`, with its default parameters.

    Parameters
    ----------
    name : {"margin_logistic", "softmax"} or Loss
        A Loss instance is returned as is.
        "margin_logistic" is ShareBoost's eq. (3) (margin 1), "softmax" the
        plain soft-max (cross-entropy) loss.

    Returns
    -------
    loss : Loss
        A new instance of the loss.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`LOSSES`.
    """
    if isinstance(name, Loss):
        return name
    if not isinstance(name, str) or name not in LOSSES:
        raise ValueError(f"loss must be one of {tuple(LOSSES)}, got {name!r}")
    return LOSSES[name]()


__all__ = [
    "BinaryLogisticLoss",
    "Frobenius",
    "Loss",
    "MixedNorm",
    "NumpyRowKernel",
    "MulticlassLogisticLoss",
    "SmoothedLinfOne",
    "SoftmaxLoss",
    "make_loss",
    "make_penalty",
    "multiclass_logistic_loss",
]
