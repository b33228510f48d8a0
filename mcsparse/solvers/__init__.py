"""Solvers: ShareBoost's greedy path and the baselines (JointBoost, mixed-norm path)."""

from ._jointboost import JointBoostPath, JointBoostRound, JointBoostStump, jointboost
from ._mixed_norm import MixedNormPath, mixed_norm_path
from ._shareboost import ShareBoostPath, ShareBoostRound, shareboost_path

__all__ = [
    "JointBoostPath",
    "JointBoostRound",
    "JointBoostStump",
    "MixedNormPath",
    "ShareBoostPath",
    "ShareBoostRound",
    "jointboost",
    "mixed_norm_path",
    "shareboost_path",
]
