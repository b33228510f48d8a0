"""Solvers: ShareBoost's greedy path and the baselines (JointBoost, mixed-norm path)."""

from ._jointboost import JointBoostPath, JointBoostRound, JointBoostStump, jointboost
from ._shareboost import ShareBoostPath, ShareBoostRound, shareboost_path

__all__ = [
    "JointBoostPath",
    "JointBoostRound",
    "JointBoostStump",
    "ShareBoostPath",
    "ShareBoostRound",
    "jointboost",
    "shareboost_path",
]
