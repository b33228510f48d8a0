"""Solvers: ShareBoost's greedy path and the baselines (JointBoost, mixed-norm path)."""

from ._jointboost import JointBoostPath, JointBoostRound, JointBoostStump, jointboost
from ._mixed_norm import MixedNormPath, mixed_norm_path
from ._mkl import MKLFit, default_q, link_coefficients, multiclass_mkl
from ._shareboost import ShareBoostPath, ShareBoostRound, default_alpha, shareboost_path

__all__ = [
    "JointBoostPath",
    "JointBoostRound",
    "JointBoostStump",
    "MKLFit",
    "MixedNormPath",
    "ShareBoostPath",
    "ShareBoostRound",
    "default_alpha",
    "default_q",
    "jointboost",
    "link_coefficients",
    "mixed_norm_path",
    "multiclass_mkl",
    "shareboost_path",
]
