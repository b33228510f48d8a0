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
