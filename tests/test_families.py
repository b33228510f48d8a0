"""The candidate-family protocol that every family shares: ids, excluded, names."""

import numpy as np
import pytest

from mcsparse.features import (
    AnchorPoints,
    CandidateFeatures,
    ConvMaxTemplates,
    DecisionStumps,
    RawFeatures,
)


def _small_problem():
    """60 samples, 5 features, 3 classes from two signs."""
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


# --- families: excluded ids were wrapped, masked or truncated silently -------


@pytest.mark.parametrize("family", [RawFeatures, DecisionStumps])
@pytest.mark.parametrize("excluded, error", [
    (np.array([-1]), ValueError),
    (np.array([10**6]), ValueError),
    (np.array([0.5]), TypeError),
    (np.array([True, False, False, False, False]), TypeError),
])
def test_best_candidate_rejects_bad_excluded(family, excluded, error):
    X, _ = _small_problem()
    R = np.random.RandomState(1).randn(60, 3)
    f = family().fit(X)
    with pytest.raises(error, match="excluded"):
        f.best_candidate(R, excluded)


def test_best_candidate_accepts_unsorted_list_and_empty():
    X, _ = _small_problem()
    R = np.random.RandomState(1).randn(60, 3)
    f = RawFeatures().fit(X)
    best, _ = f.best_candidate(R, [])
    other, _ = f.best_candidate(R, [best, best])
    assert other != best


def test_candidate_names_of_each_family():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    assert list(RawFeatures().fit(X).candidate_names([2, 0], ["a", "b", "c"])) == ["c", "a"]
    grouped = RawFeatures(groups=[7, 8, 7]).fit(X)
    assert list(grouped.candidate_names([0, 1])) == ["group 7", "group 8"]
    stumps = DecisionStumps().fit(X)
    assert stumps.candidate_names([0])[0].startswith("x0 <= ")
    anchors = AnchorPoints(n_anchors=3, n_radii=2, random_state=0).fit(X)
    assert anchors.candidate_names([5])[0] == f"anchor 2, radius {anchors.radii_[2, 1]:.4g}"
    images = rng.uniform(0, 1, (20, 64))
    templates = ConvMaxTemplates(n_templates=2, patch_size=3, n_masks=4, n_patches=50,
                                 random_state=0).fit(images)
    assert list(templates.candidate_names([0, 5])) == ["template 0, mask 0",
                                                       "template 1, mask 1"]
    with pytest.raises(ValueError, match="3 names"):
        stumps.candidate_names([0], ["a"])
    with pytest.raises(ValueError, match=r"\[0, "):
        stumps.candidate_names([10_000])

    class Plain(CandidateFeatures):
        def fit(self, X, y=None):
            self.n_features_in_, self.n_candidates_ = X.shape[1], X.shape[1]
            return self

    assert list(Plain().fit(X).candidate_names([1])) == ["candidate 1"]
