"""A row kernel in Python: the way to write a loss in one Python file."""

from ._numpy_fast import _NumpyRowKernel


class NumpyRowKernel(_NumpyRowKernel):
    """A row kernel running a Python function ``function(scores, y)``.

    The fused objective pass calls it on blocks of rows, with the GIL taken
    (so serially); an exception of the function is kept and raised again,
    as a RuntimeError naming the function, after the pass.

    Parameters
    ----------
    function : callable
        ``function(scores, y) -> (loss, grad)``: ``scores`` a float64 array of
        shape (n_rows, k) (read only), ``y`` intp labels of shape (n_rows,);
        returns the unweighted loss of each row, shape (n_rows,), and the
        gradient rows ``dl/ds``, shape (n_rows, k).

    Attributes
    ----------
    error : BaseException or None
        The exception the function raised in the last pass, if any.

    Raises
    ------
    TypeError
        If ``function`` is not callable.

    See Also
    --------
    Loss : The base class whose ``kernel`` this is.

    Examples
    --------
    >>> import numpy as np
    >>> from mcsparse.loss import NumpyRowKernel
    >>> def squared(scores, y):
    ...     grad = scores.copy()
    ...     grad[np.arange(len(y)), y] -= 1.0
    ...     return 0.5 * (grad ** 2).sum(axis=1), grad
    >>> kernel = NumpyRowKernel(squared)
    """

    def __init__(self, function):
        super().__init__(function)
