"""Validation helpers shared by the estimators (thin layers over scikit-learn's)."""

import numbers

import numpy as np
from sklearn.utils import check_array


def check_sample_weight(sample_weight, n_samples):
    """Validate ``sample_weight``: None, or finite, non-negative, with a positive sum.

    Returns None or a float64 array of shape (n_samples,). Raises ValueError
    naming ``sample_weight`` and the problem.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        sample_weight = np.full(n_samples, sample_weight, dtype=np.float64)
    sample_weight = check_array(
        sample_weight, ensure_2d=False, dtype=np.float64, input_name="sample_weight",
        ensure_min_samples=0,
    )
    if sample_weight.ndim != 1 or sample_weight.shape[0] != n_samples:
        raise ValueError(
            f"sample_weight must have shape ({n_samples},), got {sample_weight.shape}"
        )
    if (sample_weight < 0).any():
        raise ValueError("sample_weight must be non-negative; got negative values")
    if not sample_weight.sum() > 0:
        raise ValueError("sample_weight sums to zero: nothing to fit")
    return sample_weight


def check_bool(value, name):
    """Raise TypeError unless ``value`` is a Python or NumPy bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return bool(value)
