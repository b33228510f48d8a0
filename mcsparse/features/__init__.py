"""Feature generators: transformers and ShareBoost candidate families.

A candidate family (:class:`CandidateFeatures`) lets ShareBoost select from
more features than fit in memory: it scores its candidates against the
residuals each round and computes only the selected ones.
"""

from ._anchors import AnchorPoints, anchor_group_scores
from ._base import CandidateFeatures
from ._raw import RawFeatures
from ._conv_max import (
    ConvMaxTemplates,
    conv_max_features,
    conv_max_selected,
    gaussian_masks,
    learn_templates,
    masks_from_factors,
)
from ._pairwise import PairwiseProducts
from ._stumps import DecisionStumps

__all__ = [
    "AnchorPoints",
    "CandidateFeatures",
    "anchor_group_scores",
    "ConvMaxTemplates",
    "DecisionStumps",
    "PairwiseProducts",
    "RawFeatures",
    "conv_max_features",
    "conv_max_selected",
    "gaussian_masks",
    "learn_templates",
    "masks_from_factors",
]
