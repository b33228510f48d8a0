"""The candidate families the estimators know by name."""

from sklearn.base import clone
from sklearn.utils._param_validation import HasMethods

from ..features import AnchorPoints, ConvMaxTemplates, DecisionStumps, RawFeatures
from ..utils.validation import StrChoices

#: The ``features`` names of :class:`~mcsparse.ShareBoostClassifier`.
FAMILIES = {"raw": RawFeatures, "stumps": DecisionStumps, "templates": ConvMaxTemplates,
            "anchors": AnchorPoints}


#: The methods of a family object (the :class:`~mcsparse.features.CandidateFeatures`
#: protocol) that the estimators call.
PROTOCOL_METHODS = ["fit", "best_candidate", "training_columns", "end_scan",
                    "transform_candidates"]

#: The ``_parameter_constraints`` of a ``features`` parameter.
FEATURES_CONSTRAINTS = [StrChoices(list(FAMILIES)), HasMethods(PROTOCOL_METHODS)]


def resolve_features(features, random_state=None, n_jobs=None):
    """A fresh (unfitted) candidate family from the checked ``features`` parameter.

    Parameters
    ----------
    features : {"raw", "stumps", "templates", "anchors"} or CandidateFeatures
        A name or a family object, which is cloned; checked against
        :data:`FEATURES_CONSTRAINTS`.
    random_state : int, RandomState instance or None, default=None
        Given to a family chosen by name that draws at random (the k-means
        of "templates" and "anchors"), so that the estimator's
        ``random_state`` fixes its candidates. A family object keeps its own.
    n_jobs : int, default=None
        Given, when not None, to a family chosen by name that runs on
        threads (``n_jobs``). A family object keeps its own.

    Returns
    -------
    family : CandidateFeatures
        Unfitted.
    """
    if isinstance(features, str):
        family = FAMILIES[features]()
        if "random_state" in family.get_params():
            family.set_params(random_state=random_state)
        if n_jobs is not None and "n_jobs" in family.get_params():
            family.set_params(n_jobs=n_jobs)
        return family
    return clone(features)
