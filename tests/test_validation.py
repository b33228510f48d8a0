"""The shared parameter checks of ``mcsparse.utils.validation`` and their messages."""

import numpy as np
import pytest

from mcsparse import MixedNormClassifier, ShareBoostClassifier
from mcsparse.solvers import multiclass_mkl
from mcsparse.utils.validation import check_int, check_real, shown


def test_shown_gives_values_not_numpy_reprs():
    assert shown(np.int64(0)) == "0"
    assert shown(np.float64(1.5)) == "1.5"
    assert shown(np.str_("a")) == "'a'"
    assert shown(np.array([1, 2])) == "[1, 2]"
    assert shown("a") == "'a'" and shown(3) == "3"


@pytest.mark.parametrize("check, value, error, message", [
    (check_int, np.int64(0), ValueError, "x must be >= 1, got 0"),
    (check_int, np.float64(1.5), TypeError, "x must be an integer, got 1.5"),
    (check_real, np.str_("a"), TypeError, "x must be a real number, got 'a'"),
    (check_real, np.float64(np.nan), ValueError, "x must be finite, got nan"),
    (check_real, 10**400, ValueError,
     "x must be finite, got an integer beyond float64's range (401 digits)"),
])
def test_messages_show_plain_values(check, value, error, message):
    with pytest.raises(error) as info:
        check(value, "x", low=1)
    assert str(info.value) == message


@pytest.mark.parametrize("y, shown_class", [(np.zeros(6, dtype=np.int64), "0"),
                                            (np.array(["a"] * 6), "'a'")])
def test_one_class_message_shows_the_label(y, shown_class):
    X = np.arange(12.0).reshape(6, 2)
    for estimator in (ShareBoostClassifier(), MixedNormClassifier()):
        with pytest.raises(ValueError, match=f"got only one class: {shown_class}$"):
            estimator.fit(X, y)
    gram = np.eye(6)[None]
    with pytest.raises(ValueError, match=rf"single class \({shown_class}\)"):
        multiclass_mkl(gram, y)


# --- scikit-learn's parameter constraints with mcsparse's messages -----------

from numbers import Integral, Real  # noqa: E402

from sklearn.base import clone  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from mcsparse import estimators  # noqa: E402
from mcsparse.utils.validation import (FiniteInterval, StrChoices,  # noqa: E402
                                       validate_parameters)

ESTIMATOR_CLASSES = [getattr(estimators, name) for name in estimators.__all__
                     if isinstance(getattr(estimators, name), type)]


@pytest.mark.parametrize("Est", ESTIMATOR_CLASSES, ids=lambda c: c.__name__)
def test_every_parameter_has_a_constraint_checked_at_fit(Est):
    """scikit-learn's check_param_validation, with mcsparse's messages: every
    parameter is declared, and a value of no accepted type is refused at fit
    with scikit-learn's error, naming the parameter."""
    params = Est().get_params(deep=False)
    assert set(Est._parameter_constraints) == set(params)
    X, y = np.arange(24.0).reshape(12, 2), np.arange(12) % 2
    bad = type("BadType", (), {})()
    for name in params:
        with pytest.raises(InvalidParameterError, match=f"^{name} must be .*, got "):
            clone(Est()).set_params(**{name: bad}).fit(X, y)


@pytest.mark.parametrize("constraints, value, message", [
    ([FiniteInterval(Real, 0, None, closed="left")], -1, "a must be >= 0, got -1.0"),
    ([FiniteInterval(Real, 0, 1, closed="neither")], 1.0, "a must be < 1, got 1.0"),
    ([FiniteInterval(Real, 0, 1, closed="neither")], 0, "a must be > 0, got 0.0"),
    ([FiniteInterval(Real)], np.nan, "a must be finite, got nan"),
    ([FiniteInterval(Real, 0, None, closed="left")], np.inf, "a must be finite, got inf"),
    ([FiniteInterval(Real)], True, "a must be a real number, got True"),
    ([FiniteInterval(Integral, 1)], np.int64(0), "a must be >= 1, got 0"),
    ([FiniteInterval(Integral, 1)], 2.0, "a must be an integer, got 2.0"),
    ([None, FiniteInterval(Integral, 1)], "x", "a must be None or an int >= 1, got 'x'"),
    ([StrChoices(["b", "c"])], "d", "a must be one of ('b', 'c'), got 'd'"),
    ([StrChoices(["auto"]), FiniteInterval(Real, 0, None, closed="left")], -2.5,
     "a must be >= 0, got -2.5"),
    ([StrChoices(["auto"]), FiniteInterval(Real, 0, None, closed="left")], None,
     "a must be 'auto' or a float >= 0, got None"),
    (["boolean"], 1, "a must be a bool, got 1"),
    ([None, callable], 3, "a must be None or a callable, got 3"),
])
def test_constraint_messages_name_the_rule_and_the_value(constraints, value, message):
    """NaN and infinity refused, bools are not numbers, the crossed bound and the
    value both named; the error is scikit-learn's (a ValueError and a TypeError)."""
    with pytest.raises(InvalidParameterError) as info:
        validate_parameters({"a": constraints}, {"a": value})
    assert str(info.value) == message
    validate_parameters({"a": constraints, "b": [None]}, {"b": None})  # "a" not given


def test_constraints_accept_numpy_scalars_and_plain_numbers():
    validate_parameters({"a": [FiniteInterval(Real, 0, 1)], "b": [FiniteInterval(Integral, 1)]},
                        {"a": np.float32(0.5), "b": np.int64(3)})
    validate_parameters({"a": [FiniteInterval(Real, 0, 1)]}, {"a": 1})
