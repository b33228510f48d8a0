"""scikit-learn's estimator checks on every public estimator and transformer."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from mcsparse import ShareBoostClassifier
from mcsparse.features import PairwiseProducts

# The checks' data sets have 2 to 5 features: select all of them (the default
# selects half, which cannot reach the 0.83 training accuracy that
# check_classifiers_train asks on 2-D blobs).
ESTIMATORS = [ShareBoostClassifier(n_features_to_select=1.0), PairwiseProducts()]

# check name -> reason, per estimator class; none needed so far.
EXPECTED_FAILED_CHECKS = {}


def _expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS.get(type(estimator).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
