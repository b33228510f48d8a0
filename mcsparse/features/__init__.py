"""Feature generators as scikit-learn transformers."""

from ._pairwise import PairwiseProducts

__all__ = ["PairwiseProducts"]
