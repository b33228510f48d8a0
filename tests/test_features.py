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
