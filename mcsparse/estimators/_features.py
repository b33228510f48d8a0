"""The candidate families the estimators know by name."""

from sklearn.base import clone

from ..features import AnchorPoints, ConvMaxTemplates, DecisionStumps, RawFeatures

#: The ``features`` names of :class:`~mcsparse.ShareBoostClassifier`.
FAMILIES = {"raw": RawFeatures, "stumps": DecisionStumps, "templates": ConvMaxTemplates,
            "anchors": AnchorPoints}


def resolve_features(features, random_state=None):
    """A fresh (unfitted) candidate family from the ``features`` parameter.

    Parameters
    ----------
    features : {"raw", "stumps", "templates", "anchors"} or CandidateFeatures
        A name or a family object, which is cloned.
    random_state : int, RandomState instance or None, default=None
        Given to a family chosen by name that draws at random (the k-means
        of "templates" and "anchors"), so that the estimator's
        ``random_state`` fixes its candidates. A family object keeps its own.

    Returns
    -------
    family : CandidateFeatures
        Unfitted.

    Raises
    ------
    ValueError
        If ``features`` is an unknown name.
    TypeError
        If it is neither a name nor an object with the protocol's methods.
    """
    if isinstance(features, str):
        if features not in FAMILIES:
            raise ValueError(
                f"features must be one of {sorted(FAMILIES)} or a CandidateFeatures "
                f"object, got {features!r}"
            )
        family = FAMILIES[features]()
        if "random_state" in family.get_params():
            family.set_params(random_state=random_state)
        return family
    methods = ("fit", "best_candidate", "training_columns", "end_scan",
               "transform_candidates")
    missing = [m for m in methods if not callable(getattr(features, m, None))]
    if missing:
        raise TypeError(
            "features must be 'raw', 'stumps', 'templates', 'anchors' or an object "
            f"with the CandidateFeatures methods; {type(features).__name__} lacks "
            f"{', '.join(missing)}"
        )
    return clone(features)
