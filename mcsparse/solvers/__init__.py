"""Solvers: ShareBoost's greedy path (later: mixed-norm path, JointBoost, MKL)."""

from ._shareboost import ShareBoostPath, ShareBoostRound, shareboost_path

__all__ = ["ShareBoostPath", "ShareBoostRound", "shareboost_path"]
