"""Base kernels for multi-class multiple kernel learning (MKL).

Here a *kernel* is a positive semi-definite function or its Gram matrix.
:func:`gaussian_kernel_stack` builds the Gram matrices of a bank of Gaussian
kernels (:func:`default_bandwidths`, the grid of Li et al. 2018, Section 6,
or :func:`scale_bandwidths`, relative to the scale of the data);
:func:`tail_sums` computes the tail sums of their eigenvalues, by which
Conv-MKL (Li et al. 2018, Algorithm 1) normalises each Gram matrix.

References
----------
J. Li, Y. Liu, R. Yin, H. Zhang, L. Ding and W. Wang, "Multi-Class Learning:
From Theory to Algorithm", Advances in Neural Information Processing Systems
31 (NeurIPS 2018), pp. 1586-1595.
"""

from ._gaussian import (
    conv_kernel_scale,
    default_bandwidths,
    forget_tail_sums,
    gaussian_kernel_stack,
    scale_bandwidths,
    tail_sums,
)

__all__ = [
    "conv_kernel_scale",
    "default_bandwidths",
    "forget_tail_sums",
    "gaussian_kernel_stack",
    "scale_bandwidths",
    "tail_sums",
]
