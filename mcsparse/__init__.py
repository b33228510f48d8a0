"""mcsparse: sparse multiclass learning (ShareBoost, multi-class MKL).

Estimators follow the scikit-learn API; numerics live in the ``loss``,
``solvers`` and ``features`` subpackages, with Cython modules for the hot
loops.
"""

__version__ = "0.1.0.dev0"

try:
    from .estimators import (
        ConvMKLClassifier,
        JointBoostClassifier,
        MixedNormClassifier,
        OneVsRestGreedyClassifier,
        ShareBoostClassifier,
        ShareBoostClassifierCV,
        SMSDMKLClassifier,
        UFOMKLClassifier,
        mixed_norm_classifier_path,
    )
except ModuleNotFoundError as exc:  # the source tree shadows the installed package
    if exc.name is None or not exc.name.endswith("_fast"):
        raise
    from pathlib import Path

    raise ImportError(
        f"mcsparse's compiled Cython modules are missing in {Path(__file__).parent}. "
        "This is probably the source tree, not the installed package: Python "
        "puts the current directory first on sys.path (python -m, python -c, "
        "a script or notebook started there). Run from another directory (or "
        "use the 'mcsparse' command), or build in place with 'pip install -e .'."
    ) from exc

__all__ = [
    "ConvMKLClassifier",
    "JointBoostClassifier",
    "MixedNormClassifier",
    "OneVsRestGreedyClassifier",
    "SMSDMKLClassifier",
    "ShareBoostClassifier",
    "ShareBoostClassifierCV",
    "UFOMKLClassifier",
    "__version__",
    "mixed_norm_classifier_path",
]
