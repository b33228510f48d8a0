"""Validation helpers shared by the estimators (thin layers over scikit-learn's)."""

import numbers

import numpy as np
from sklearn.utils import check_array


def check_sample_weight(sample_weight, n_samples):
    """Validate ``sample_weight`` and scale it to a maximum of one.

    Parameters
    ----------
    sample_weight : None, float or array-like of shape (n_samples,)
        Finite, non-negative weights with a positive sum; a scalar means
        equal weights.
    n_samples : int
        Expected length.

    Returns
    -------
    sample_weight : None or ndarray of shape (n_samples,), dtype float64
        The weights divided by their maximum. Every weighted mean in
        mcsparse is ``sum_i w_i l_i / sum_i w_i``, which this leaves
        unchanged, while sums of huge (1e308) or tiny (denormal) weights
        neither overflow nor underflow.

    Raises
    ------
    ValueError
        Naming ``sample_weight``: wrong shape, NaN or infinity, negative
        values, all zero.
    TypeError
        If the weights are not real numbers.
    """
    if sample_weight is None:
        return None
    if isinstance(sample_weight, numbers.Number):
        if not isinstance(sample_weight, numbers.Real) or isinstance(sample_weight, bool):
            raise TypeError(f"sample_weight must be real numbers, got {sample_weight!r}")
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
    top = sample_weight.max() if n_samples else 0.0
    if not top > 0:
        raise ValueError("sample_weight sums to zero: nothing to fit")
    return sample_weight / top


def check_bool(value, name):
    """Raise TypeError unless ``value`` is a Python or NumPy bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return bool(value)
