"""Validation helpers: what scikit-learn lacks, in thin layers over it.

The estimators declare scikit-learn's ``_parameter_constraints`` and run
them through ``_fit_context``; :class:`FiniteInterval` (NaN, infinity and
bools refused), :class:`StrChoices` and :func:`validate_parameters` give the
messages that name the parameter, the bound and the value. The functions of
the lower layers check their scalars with :func:`check_real` and
:func:`check_int`, with the same messages.
"""

import math
import numbers

import numpy as np
from joblib import effective_n_jobs
from sklearn.utils import check_array
from sklearn.utils._param_validation import (HasMethods, InvalidParameterError, Interval,
                                             RealNotInt, StrOptions, _ArrayLikes, _Booleans,
                                             _Callables, _CVObjects, _InstancesOf,
                                             _NoneConstraint, _RandomStates, _VerboseHelper,
                                             make_constraint)


def shown(value):
    """``value`` as an error message shows it: NumPy scalars and arrays as plain values.

    ``repr(np.int64(0))`` is ``np.int64(0)``; a message should say ``0``
    (strings keep their quotes: ``'a'``).
    """
    if isinstance(value, (np.generic, np.ndarray)):
        value = value.tolist()
    return repr(value)


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
            raise TypeError(f"sample_weight must be real numbers, got {shown(sample_weight)}")
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


class FiniteInterval(Interval):
    """scikit-learn's ``Interval`` of finite numbers, bools refused, with plain messages.

    A constraint of ``_parameter_constraints`` (:func:`validate_parameters`)
    that scikit-learn's ``Interval`` lacks: NaN and infinity are refused
    even without bounds, ``True`` is not the integer 1, and a failure says
    which bound was crossed with both numbers ("alpha must be >= 0, got
    -1.0"). :func:`check_real` and :func:`check_int` give the same messages
    for the arguments of functions.

    Parameters
    ----------
    type : {numbers.Integral, numbers.Real, RealNotInt}
        Integers (NumPy's included), real numbers (integers included) or
        real numbers that are not integers.
    left, right : float, default=None
        Bounds; None is unbounded.
    closed : {"left", "right", "both", "neither"}, default="both"
        Which bounds are allowed, as in scikit-learn's ``Interval``.
    """

    def __init__(self, type, left=None, right=None, *, closed="both"):
        if type is numbers.Integral:  # scikit-learn's rule for unbounded integer sides
            closed = {(True, True): "both", (True, False): "left", (False, True): "right",
                      (False, False): "neither"}[left is not None, right is not None]
        super().__init__(type, left, right, closed=closed)

    def _bound(self, value):
        return str(int(value)) if self.type is numbers.Integral else f"{value:g}"

    def is_satisfied_by(self, val):
        return self.violation(val) is None

    def accepts_type(self, val):
        """Whether ``val`` is a number of the interval's type (bools are not)."""
        if isinstance(val, (bool, np.bool_)):
            return False
        if self.type is numbers.Integral:
            return isinstance(val, numbers.Integral)
        if self.type is RealNotInt and isinstance(val, numbers.Integral):
            return False
        return isinstance(val, numbers.Real)

    def violation(self, val):
        """None if ``val`` satisfies the constraint, else ``(exception class, reason)``.

        The reason completes "<name> must be ...": "an integer, got 2.5",
        "finite, got nan", ">= 0, got -1.0".
        """
        if not self.accepts_type(val):
            what = "an integer" if self.type is numbers.Integral else "a real number"
            return TypeError, f"{what}, got {shown(val)}"
        if self.type is numbers.Integral:
            number = int(val)
        else:
            try:
                number = float(val)
            except OverflowError:  # an int beyond float64's range
                return ValueError, ("finite, got an integer beyond float64's range "
                                    f"({len(str(abs(val)))} digits)")
            if not np.isfinite(number):
                return ValueError, f"finite, got {shown(val)}"
        closed_left = self.closed in ("left", "both")
        closed_right = self.closed in ("right", "both")
        if self.left is not None and (number < self.left
                                      or (number == self.left and not closed_left)):
            return ValueError, (f"{'>=' if closed_left else '>'} {self._bound(self.left)}, "
                                f"got {shown(number)}")
        if self.right is not None and (number > self.right
                                       or (number == self.right and not closed_right)):
            return ValueError, (f"{'<=' if closed_right else '<'} {self._bound(self.right)}, "
                                f"got {shown(number)}")
        return None

    def __str__(self):
        kind = "an int" if self.type is numbers.Integral else "a float"
        if self.left is not None and self.right is not None:
            return (f"{kind} in {'[' if self.closed in ('left', 'both') else '('}"
                    f"{self._bound(self.left)}, {self._bound(self.right)}"
                    f"{']' if self.closed in ('right', 'both') else ')'}")
        if self.left is not None:
            return (f"{kind} {'>=' if self.closed in ('left', 'both') else '>'} "
                    f"{self._bound(self.left)}")
        if self.right is not None:
            return (f"{kind} {'<=' if self.closed in ('right', 'both') else '<'} "
                    f"{self._bound(self.right)}")
        return kind


class StrChoices(StrOptions):
    """scikit-learn's ``StrOptions`` that shows its options in the order given.

    Parameters
    ----------
    options : sequence of str
        The valid strings.
    """

    def __init__(self, options):
        super().__init__(set(options))
        self.ordered = tuple(options)

    def __str__(self):
        if len(self.ordered) == 1:
            return repr(self.ordered[0])
        return f"one of {self.ordered}"


def _describe(constraint):
    """What a constraint accepts, in the words of the messages."""
    words = {_NoneConstraint: "None", _Callables: "a callable", _Booleans: "a bool",
             _ArrayLikes: "an array-like", _VerboseHelper: "an int >= 0 or a bool",
             _RandomStates: "an int in [0, 2**32 - 1], a RandomState instance or None",
             _CVObjects: ("an int >= 2, a cross-validation splitter, an iterable of "
                          "(train, test) index arrays or None")}
    if type(constraint) in words:
        return words[type(constraint)]
    if isinstance(constraint, HasMethods):
        return f"an object with the methods {', '.join(constraint.methods)}"
    if isinstance(constraint, _InstancesOf):
        return f"a {constraint.type.__name__}"
    return str(constraint)


def _join(words):
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def validate_parameters(parameter_constraints, params):
    """Check parameters against scikit-learn constraints, with mcsparse's messages.

    scikit-learn's ``validate_parameter_constraints`` with messages that
    name the parameter, the rule and the value ("tol must be < 1, got
    1.0"; "selection must be one of ('gradient_l1', ...), got 'x'"):
    a number of the right type is told which bound it crossed
    (:class:`FiniteInterval`), another value what the parameter accepts.
    Estimators call it through ``_validate_params``
    (:class:`ValidatedParamsMixin`), which scikit-learn's ``_fit_context``
    runs before ``fit``.

    Parameters
    ----------
    parameter_constraints : dict
        ``name: list of constraints`` (scikit-learn's forms: ``None``,
        ``"boolean"``, ``callable``, ``StrOptions``, ``Interval``, ...), or
        ``name: "no_validation"``.
    params : dict
        ``name: value``; names without constraints are not checked.

    Raises
    ------
    InvalidParameterError
        scikit-learn's error, a ValueError and a TypeError, when a value
        satisfies none of its parameter's constraints.
    """
    for name, value in params.items():
        constraints = parameter_constraints.get(name, "no_validation")
        if isinstance(constraints, str) and constraints == "no_validation":
            continue
        constraints = [make_constraint(c) for c in constraints]
        if any(c.is_satisfied_by(value) for c in constraints):
            continue
        shown_constraints = [c for c in constraints if not c.hidden]
        typed = [c for c in shown_constraints
                 if isinstance(c, FiniteInterval) and c.accepts_type(value)]
        if len(shown_constraints) == 1 and isinstance(shown_constraints[0], FiniteInterval):
            typed = shown_constraints
        if len(typed) == 1:  # a number of the right type: which bound it crossed
            raise InvalidParameterError(f"{name} must be {typed[0].violation(value)[1]}")
        message = (f"{name} must be {_join([_describe(c) for c in shown_constraints])}, "
                   f"got {shown(value)}")
        protocols = [c for c in shown_constraints if isinstance(c, HasMethods)]
        if protocols and not isinstance(value, str):
            missing = [m for m in protocols[0].methods if not callable(getattr(value, m, None))]
            message += f"; {type(value).__name__} lacks {', '.join(missing)}"
        raise InvalidParameterError(message)


class ValidatedParamsMixin:
    """``_validate_params`` with :func:`validate_parameters`'s messages.

    Mix into a scikit-learn estimator that declares ``_parameter_constraints``
    and decorates ``fit`` with ``sklearn.base._fit_context``. Subclasses
    extend ``_validate_params`` with the checks that involve several
    parameters.
    """

    def _validate_params(self):
        validate_parameters(self._parameter_constraints, self.get_params(deep=False))


def check_real(value, name, *, low=None, high=None, include_low=True, include_high=True):
    """A finite real number within the bounds, as a float.

    The scalar checks of the functions of mcsparse go through this helper
    and :func:`check_int`, with the messages of the estimators' parameters
    (:class:`FiniteInterval`: "alpha must be >= 0, got -1.0"). Like
    scikit-learn's ``check_scalar``, with NaN and infinity refused too.

    Parameters
    ----------
    value : object
        The parameter's value.
    name : str
        Its name, for the messages.
    low, high : float, default=None
        Bounds (None: unbounded).
    include_low, include_high : bool, default=True
        Whether each bound is allowed.

    Returns
    -------
    value : float
        The value.

    Raises
    ------
    TypeError
        If ``value`` is not a real number (bools are refused).
    ValueError
        If it is NaN, infinite or out of the bounds.
    """
    closed = {(True, True): "both", (True, False): "left", (False, True): "right",
              (False, False): "neither"}[bool(include_low), bool(include_high)]
    _raise_violation(FiniteInterval(numbers.Real, low, high, closed=closed), value, name)
    return float(value)


def check_int(value, name, *, low=None, high=None):
    """An integer within the bounds, as an int (bools refused).

    Parameters
    ----------
    value : object
        The parameter's value.
    name : str
        Its name, for the messages.
    low, high : int, default=None
        Inclusive bounds (None: unbounded).

    Returns
    -------
    value : int
        The value.

    Raises
    ------
    TypeError
        If ``value`` is not an integer.
    ValueError
        If it is out of the bounds.
    """
    _raise_violation(FiniteInterval(numbers.Integral, low, high), value, name)
    return int(value)


def _raise_violation(interval, value, name):
    violation = interval.violation(value)
    if violation is not None:
        error, reason = violation
        raise error(f"{name} must be {reason}")


def may_be_written(array):
    """Whether the memory of ``array`` can be written through it or what it views.

    Follows the chain of bases: an ndarray by its ``writeable`` flag, an
    object with ``__array_interface__`` (``as_strided``'s) by its read-only
    flag, any other buffer (``bytearray``, ``memoryview``, ``mmap``) by
    ``memoryview(base).readonly``; an object that is none of these counts as
    writeable.

    Parameters
    ----------
    array : ndarray
        The array a store would keep by reference.

    Returns
    -------
    writeable : bool
    """
    obj = array
    while obj is not None:
        if isinstance(obj, np.ndarray):
            if obj.flags.writeable:
                return True
        elif hasattr(obj, "__array_interface__"):
            if not obj.__array_interface__["data"][1]:
                return True
        else:
            try:
                return not memoryview(obj).readonly
            except TypeError:
                return True
        obj = getattr(obj, "base", None)
    return False


def check_n_jobs(n_jobs):
    """``n_jobs`` as the number of threads to use (joblib's convention).

    Parameters
    ----------
    n_jobs : int or None
        None is one thread; negative values count back from the number of
        CPUs (-1: all).

    Returns
    -------
    n_threads : int
        At least 1.

    Raises
    ------
    TypeError
        If ``n_jobs`` is neither None nor an integer.
    ValueError
        If it is 0.
    """
    if n_jobs is None:
        return 1
    if isinstance(n_jobs, (bool, np.bool_)) or not isinstance(n_jobs, numbers.Integral):
        raise TypeError(f"n_jobs must be an integer or None, got {shown(n_jobs)}")
    if n_jobs == 0:
        raise ValueError("n_jobs must be None, a positive int or a negative int, got 0")
    return effective_n_jobs(int(n_jobs))


def check_verbose(verbose):
    """``verbose`` as a non-negative int (bools accepted, as scikit-learn does)."""
    if isinstance(verbose, (bool, np.bool_)):
        return int(verbose)
    return check_int(verbose, "verbose", low=0)


def check_bool(value, name):
    """Raise TypeError unless ``value`` is a Python or NumPy bool."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {shown(value)}")
    return bool(value)


def check_solver_data(X, y, n_classes, sample_weight=None, *, accept_sparse=False):
    """Validate the data of a low-level solver of :mod:`mcsparse.solvers`.

    The estimators validate and encode their data before calling a solver;
    this check lets a solver called directly refuse bad input with a clear
    message instead of a wrong answer or an error from deep inside.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        Finite real data; integers are converted to float64, float32 is
        kept.
    y : array-like of shape (n_samples,)
        Integer class indices in ``[0, n_classes)``.
    n_classes : int
        Number of classes, at least 2.
    sample_weight : array-like of shape (n_samples,), default=None
        Finite, non-negative weights with a positive sum.
    accept_sparse : False, str or tuple of str, default=False
        Sparse formats accepted (scikit-learn's ``check_array``).

    Returns
    -------
    X : ndarray or sparse matrix, float32 or float64
        Not copied when already valid.
    y : ndarray of shape (n_samples,), dtype intp
    sample_weight : None or ndarray of shape (n_samples,), dtype float64
        Not rescaled.

    Raises
    ------
    ValueError
        Naming ``X``, ``y``, ``n_classes`` or ``sample_weight``: NaN or
        infinity, wrong dimensions or lengths, class indices out of range.
    TypeError
        If ``y`` does not hold integers, or ``X`` is complex or sparse in a
        format not accepted.
    """
    check_int(n_classes, "n_classes", low=2)
    X = check_array(X, accept_sparse=accept_sparse, dtype=[np.float64, np.float32],
                    input_name="X")
    y, sample_weight = check_solver_targets(y, X.shape[:1], n_classes, sample_weight)
    return X, y, sample_weight


def check_solver_targets(y, n_samples, n_classes, sample_weight=None):
    """The ``y`` and ``sample_weight`` part of :func:`check_solver_data`.

    ``n_samples`` is a tuple: ``(n,)``, the rows of ``X`` (``y``'s own
    shape when there is no ``X`` to compare with). Returns ``(y,
    sample_weight)`` as that function does.
    """
    check_int(n_classes, "n_classes", low=2)
    y = np.asarray(y)
    if y.dtype == bool or y.dtype.kind not in "iu":
        raise TypeError(
            f"y must hold integer class indices in [0, n_classes), got dtype {y.dtype}"
        )
    if not n_samples or y.shape != tuple(n_samples):
        raise ValueError(f"y must have shape {tuple(n_samples)} like X's rows, got {y.shape}")
    if y.size == 0:
        raise ValueError("y is empty: no training samples")
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(
            f"y must hold class indices in [0, {n_classes}), got values from "
            f"{y.min()} to {y.max()}"
        )
    if sample_weight is not None:
        check_sample_weight(sample_weight, y.shape[0])
        sample_weight = np.ascontiguousarray(sample_weight, dtype=np.float64)
    return np.ascontiguousarray(y, dtype=np.intp), sample_weight


def check_image_shape(name, shape):
    """A (height, width) pair of positive ints, as a tuple.

    Raises TypeError if ``shape`` is not iterable or holds non-integers,
    ValueError if it is not a pair or holds a value below 1.
    """
    try:
        pair = tuple(shape)
    except TypeError:
        raise TypeError(f"{name} must be a pair (height, width) of ints, got {shape!r}")
    if len(pair) != 2:
        raise ValueError(f"{name} must be a pair (height, width), got {shape!r}")
    return tuple(check_int(v, f"{name}[{i}]", low=1) for i, v in enumerate(pair))


def check_float32_array(values, name, ndim, shape):
    """``values`` as a C-ordered float32 ``ndim``-D array of finite reals.

    ``shape`` describes the expected shape in the messages, e.g.
    ``"(n_images, height, width)"``. Raises TypeError for values that are not
    real numbers (bool and object refused), ValueError for another number of
    dimensions, NaN, infinity, or values beyond float32's range.
    """
    values = np.asarray(values)
    if values.dtype == object or values.dtype == bool or not (
        np.issubdtype(values.dtype, np.floating) or np.issubdtype(values.dtype, np.integer)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {values.dtype}")
    if values.ndim != ndim:
        raise ValueError(
            f"{name} must be a {ndim}-D array {shape}, got shape {values.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        values = np.ascontiguousarray(values, dtype=np.float32)
    if not np.isfinite(values).all():
        raise ValueError(
            f"{name} contain NaN or infinity (or values beyond float32's range)"
        )
    return values


def resolve_image_shape(n_pixels, image_shape):
    """``(height, width)`` of images of ``n_pixels`` pixels stored as rows.

    ``image_shape`` None means square images. Raises ValueError when
    ``n_pixels`` is not a square (and no shape is given) or does not match
    ``image_shape``; :func:`check_image_shape`'s errors for a bad shape.
    """
    if image_shape is None:
        side = math.isqrt(n_pixels)
        if side * side != n_pixels:
            raise ValueError(
                f"X has {n_pixels} features, not a square image: pass "
                "image_shape=(height, width)"
            )
        return (side, side)
    shape = check_image_shape("image_shape", image_shape)
    if shape[0] * shape[1] != n_pixels:
        raise ValueError(
            f"image_shape={image_shape!r} does not match X's {n_pixels} "
            "features (height * width pixels per row)"
        )
    return shape
