"""mcsparse: sparse multiclass learning (ShareBoost, multi-class MKL).

Estimators follow the scikit-learn API; numerics live in the ``loss``,
``solvers`` and ``features`` subpackages, with Cython modules for the hot
loops.
"""

__version__ = "0.1.0.dev0"

from .estimators import ShareBoostClassifier

__all__ = ["ShareBoostClassifier", "__version__"]
