"""PairwiseProducts: order, values, sparse input, names, errors."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp

from mcsparse.features import PairwiseProducts


def test_combinations_order_and_values():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((5, 16))
    out = PairwiseProducts().fit_transform(X)
    assert out.shape == (5, 120)
    expected = np.column_stack([X[:, i] * X[:, j]
                                for i, j in itertools.combinations(range(16), 2)])
    np.testing.assert_array_equal(out, expected)


def test_float32_kept_and_sparse_equals_dense():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((6, 5)).astype(np.float32)
    X[X < 0.3] = 0
    dense = PairwiseProducts().fit_transform(X)
    assert dense.dtype == np.float32
    for fmt in ["csr", "csc"]:
        out = PairwiseProducts().fit_transform(sp.csr_matrix(X).asformat(fmt))
        assert sp.issparse(out) and out.format == "csr"
        np.testing.assert_array_equal(out.toarray(), dense)


def test_feature_names():
    t = PairwiseProducts().fit(np.ones((2, 3)))
    np.testing.assert_array_equal(t.get_feature_names_out(), ["x0*x1", "x0*x2", "x1*x2"])
    np.testing.assert_array_equal(t.get_feature_names_out(["a", "b", "c"]), ["a*b", "a*c", "b*c"])
    with pytest.raises(ValueError, match="3 names, got shape"):
        t.get_feature_names_out(["a"])
    with pytest.raises(ValueError, match=r"got shape \(3, 1\)"):
        t.get_feature_names_out([["a"], ["b"], ["c"]])


def test_errors():
    with pytest.raises(ValueError, match="at least 2 features"):
        PairwiseProducts().fit(np.ones((3, 1)))
    t = PairwiseProducts().fit(np.ones((3, 4)))
    with pytest.raises(ValueError, match="features"):
        t.transform(np.ones((3, 5)))
    with pytest.raises(ValueError, match="NaN"):
        t.transform(np.full((3, 4), np.nan))
    with pytest.raises(ValueError, match="overflow"):
        t.transform(np.full((3, 4), 1e200))
    with pytest.raises(ValueError, match="overflow"):
        PairwiseProducts().fit_transform(np.full((3, 4), 1e30, dtype=np.float32))


def test_candidate_names_of_each_family():
    from mcsparse.features import AnchorPoints, ConvMaxTemplates, DecisionStumps, RawFeatures
    from mcsparse.features._base import CandidateFeatures

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
