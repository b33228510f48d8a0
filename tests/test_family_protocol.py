"""The family ABC, its typed training blocks and its declared capabilities (issue 51).

A family is a :class:`CandidateFeatures` (an abstract base class); its
training columns reach the column store as a typed block (``Dense``,
``RowSubset``, ``Cuts``) that the store dispatches on; running on a dask
array is the declared :class:`ChunkScan` capability, not methods found by
name.
"""

import numpy as np
import pytest

from mcsparse import ShareBoostClassifier
from mcsparse.features import (AnchorPoints, CandidateFeatures, ConvMaxTemplates,
                               DecisionStumps, RawFeatures)
from mcsparse.features._base import Cuts, Dense, RowSubset, TrainingBlock, fit_features
from mcsparse.features._chunk_scan import ChunkScan, ModelScan
from mcsparse.features._dask import DaskCandidates
from mcsparse.loss import MulticlassLogisticLoss
from mcsparse.solvers._columns import SelectedColumns


def _problem(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


class _Columns(CandidateFeatures):
    """A complete user family: the columns of X (the protocol's methods only)."""

    def fit(self, X, y=None):
        self._X = np.asarray(X, dtype=float)
        self.n_features_in_ = self.n_candidates_ = self._X.shape[1]
        return self

    def best_candidate(self, residual, excluded):
        scores = np.abs(self._X.T @ residual).sum(axis=1)
        scores[excluded] = -np.inf
        j = int(np.argmax(scores))
        return j, float(scores[j])

    def training_columns(self, ids):
        return self._X[:, ids]

    def end_scan(self, ids):
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[ids] = True
        return self

    def transform_candidates(self, X, ids):
        return np.asarray(X, dtype=float)[:, ids]


# --- the abstract base class -------------------------------------------------


def test_a_family_without_fit_cannot_be_made():
    class NoFit(CandidateFeatures):
        def best_candidate(self, residual, excluded):
            return 0, 0.0

    with pytest.raises(TypeError, match="abstract.*fit"):
        NoFit()
    with pytest.raises(TypeError, match="abstract"):
        CandidateFeatures()


@pytest.mark.parametrize("missing", ["best_candidate", "training_columns", "end_scan",
                                     "transform_candidates"])
def test_a_family_without_a_scan_method_is_refused_by_name(missing):
    Partial = type("Partial", (_Columns,), {missing: getattr(CandidateFeatures, missing)})
    X, y = _problem()
    with pytest.raises(TypeError, match=f"Partial does not implement {missing}"):
        fit_features(Partial(), X)
    with pytest.raises(TypeError, match=f"Partial does not implement {missing}"):
        ShareBoostClassifier(n_features_to_select=2, features=Partial()).fit(X, y)
    # the complete family fits
    clf = ShareBoostClassifier(n_features_to_select=2, features=_Columns()).fit(X, y)
    np.testing.assert_array_equal(
        clf.selected_features_,
        ShareBoostClassifier(n_features_to_select=2).fit(X, y).selected_features_)


def test_each_family_declares_its_block_by_its_type():
    X, _ = _problem()
    expected = {RawFeatures(): Dense, _Columns(): Dense, DecisionStumps(): Cuts,
                AnchorPoints(n_anchors=4, n_radii=3, random_state=0): RowSubset}
    for family, kind in expected.items():
        family.fit(X)
        for j in (0, family.n_candidates_ - 1):
            block = family.training_block(j)
            assert type(block) is kind, type(family).__name__
            np.testing.assert_array_equal(block.toarray(), family.training_columns([j]))
    assert DecisionStumps().fit(X).training_block(2).source == \
        "DecisionStumps.training_cuts(2)"


def test_block_pairs_are_checked():
    with pytest.raises(ValueError, match=r"F\.training_rows\(1\) must return a pair "
                                         r"\(rows, values\), got NoneType"):
        RowSubset.from_pair(None, "F.training_rows(1)")
    with pytest.raises(ValueError, match=r"must return a pair \(codes, cut\) or None, "
                                         "got tuple"):
        Cuts.from_pair((np.arange(3), "x"), "F.training_cuts(1)")
    with pytest.raises(ValueError, match="do not index its values"):
        RowSubset(np.array([5]), np.ones((3, 2))).toarray()


# --- the store dispatches on the block's type --------------------------------


def _store_state(store):
    n, p = store.n_samples, store.n_columns
    rng = np.random.default_rng(1)
    Vt, y = rng.standard_normal((p, 3)), rng.integers(0, 3, n).astype(np.intp)
    scores, residual = np.empty((n, 3)), np.empty((n, 3))
    value = store.value_grad(Vt, np.zeros(3), MulticlassLogisticLoss(), y, None, scores,
                             residual)
    return ([store.column(j) for j in range(p)], store.shift, store.scale, value,
            store.n_groups)


@pytest.mark.parametrize("center", [False, True])
def test_store_put_of_each_block_type_stores_the_dense_columns(center):
    n = 400
    rng = np.random.default_rng(0)
    values = rng.standard_normal((n, 5))
    values.flags.writeable = False
    rows = np.sort(rng.choice(n, 60, replace=False)).astype(np.intp)
    codes = rng.integers(0, 9, n).astype(np.int32)
    codes.flags.writeable = False
    blocks = [Dense(rng.standard_normal((n, 2))), RowSubset(rows, values), Cuts(codes, 4),
              RowSubset(np.arange(300, dtype=np.intp), values), Cuts(codes, 0)]
    typed, dense = SelectedColumns(n, 4), SelectedColumns(n, 4)
    start = 0
    for block in blocks:
        typed.put(block, start, center=center)
        dense.put(block.toarray(), start, center=center)
        start = typed.n_columns
    assert start == 2 + 5 + 1 + 5 + 1
    got, want = _store_state(typed), _store_state(dense)
    for a, b in zip(got[0], want[0]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[2], want[2])
    for a, b in zip(got[3], want[3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    assert got[4] == want[4] == 1  # the narrow row subset is a group in both
    # the row subset shares its values; the stumps are indexed by their codes
    assert any(np.shares_memory(b.groups[0][2], values) for b in typed._blocks)
    assert [c[0] for c in typed._thresholds._cuts] == [7, 13]  # the two stumps' columns
    assert dense._thresholds._cuts == []


def test_store_refuses_a_block_of_another_type():
    class Odd(TrainingBlock):  # a block type the store does not know
        def toarray(self):
            return np.ones((10, 1))

    with pytest.raises(TypeError, match="Dense, RowSubset or Cuts, got Odd"):
        SelectedColumns(10, 1).put(Odd(), 0)


# --- running on chunks is declared -------------------------------------------


class _ChunkMethodsOnly(_Columns):
    """Has every row-chunk method, but does not declare ChunkScan."""

    def _fit_chunks(self, chunks):
        return self

    def _chunk_products(self, X, residual):
        return X.T @ residual

    def _pick(self, products, excluded):
        return 0, 0.0

    def _chunk_columns(self, X, ids):
        return X[:, ids]


@pytest.mark.parametrize("family", [AnchorPoints(n_anchors=4), _Columns(),
                                    _ChunkMethodsOnly()])
def test_dask_runner_refuses_a_family_that_is_not_chunk_scan(family):
    name = type(family).__name__
    with pytest.raises(TypeError, match=f"{name} does not run on dask arrays .*ChunkScan"):
        DaskCandidates(family).fit(None)  # refused before the array is read


def test_the_chunk_families_declare_it():
    for family in (RawFeatures(), DecisionStumps(max_bins=8), ConvMaxTemplates()):
        assert isinstance(family, ChunkScan)
    assert not isinstance(AnchorPoints(), ChunkScan)
    assert issubclass(DaskCandidates, ModelScan)
    assert ConvMaxTemplates._replaces_chunks and not RawFeatures._replaces_chunks


def test_a_chunk_scan_family_without_a_chunk_method_cannot_be_made():
    class NoPick(_Columns, ChunkScan):
        def _fit_chunks(self, chunks):
            return self

        def _chunk_products(self, X, residual):
            return X.T @ residual

        def _chunk_columns(self, X, ids):
            return X[:, ids]

    with pytest.raises(TypeError, match="abstract.*_pick"):
        NoPick()

    class WithPick(NoPick):
        def _pick(self, products, excluded):
            return 0, 0.0

    assert isinstance(WithPick(), ChunkScan)
