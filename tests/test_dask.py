"""ShareBoost on dask arrays, on a distributed LocalCluster started by the tests.

The dask fit must equal the in-memory fit (same selected features, same
coefficients within rtol 1e-6); bad chunks are refused with errors naming
them; a worker killed during a fit changes nothing.
"""

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from unittest import mock

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_mnist, load_pendigits
from mcsparse.features import (AnchorPoints, ConvMaxTemplates, DecisionStumps,
                               PairwiseProducts, RawFeatures)

distributed = pytest.importorskip(
    "distributed", reason='the dask extra is not installed: pip install "mcsparse[dask]"')
da = pytest.importorskip("dask.array")

pytestmark = [
    pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning"),
    # from_array puts the NumPy data in the graph; real data would be read by dask
    pytest.mark.filterwarnings("ignore:Sending large graph:UserWarning"),
]


def _cluster():
    return distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                    dashboard_address=":0", silence_logs=50)


@pytest.fixture(scope="module")
def client():
    with _cluster() as cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def pendigits():
    X, y = load_pendigits(return_X_y=True)
    return X / 100, y


def assert_same_fit(a, b):
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6, atol=1e-9 * np.abs(a.coef_).max())
    np.testing.assert_allclose(b.intercept_, a.intercept_, rtol=1e-6,
                               atol=1e-9 * np.abs(a.intercept_).max())
    np.testing.assert_array_equal(a.classes_, b.classes_)


def fit_both(X, y, chunks, **params):
    a = ShareBoostClassifier(**params).fit(X, y)
    b = ShareBoostClassifier(**params).fit(da.from_array(X, chunks=(chunks, -1)), y)
    return a, b


# ---------------------------------------------------------------- equal fits


def test_pendigits_products_raw(client, pendigits):
    X, y = pendigits
    Xp = PairwiseProducts().fit_transform(X[:3000])
    a, b = fit_both(Xp, y[:3000], 700, n_features_to_select=25, alpha=1e-4)
    assert_same_fit(a, b)
    assert isinstance(b.coef_, np.ndarray) and b.features_.n_candidates_ == Xp.shape[1]


@pytest.mark.slow
def test_mnist_raw_pixels(client, mnist_home):
    X, y = load_mnist(data_home=mnist_home, return_X_y=True)
    X = X[:10_000] / 255.0
    a, b = fit_both(X, y[:10_000], 2500, n_features_to_select=50, alpha=1e-4)
    assert_same_fit(a, b)


def test_pendigits_stumps_max_bins(client, pendigits):
    X, y = pendigits
    stumps = DecisionStumps(max_bins=64)
    a, b = fit_both(X, y, 1000, n_features_to_select=40, features=stumps, alpha=1e-4)
    assert_same_fit(a, b)
    np.testing.assert_array_equal(a.features_.thresholds_, b.features_.thresholds_)


@pytest.mark.slow
def test_conv_max_templates_on_chunks(client, mnist_home):
    X, y = load_mnist(data_home=mnist_home, return_X_y=True)
    X, y = (X[:2000] / 255.0).astype(np.float32), y[:2000]
    family = ConvMaxTemplates(n_templates=60, n_patches=5000, n_masks=9, random_state=0)
    a, b = fit_both(X, y, 600, n_features_to_select=25, alpha=1e-4, features=family)
    np.testing.assert_array_equal(a.features_.templates_, b.features_.templates_)
    assert_same_fit(a, b)
    Xt = (load_mnist(data_home=mnist_home, subset="test", return_X_y=True)[0][:500] / 255.0)
    Xt = Xt.astype(np.float32)
    np.testing.assert_array_equal(b.predict(da.from_array(Xt, chunks=(200, -1))).compute(),
                                  a.predict(Xt))


def test_float32_sample_weight_and_dask_labels(client, pendigits):
    X, y = pendigits
    X = X[:2000].astype(np.float32)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 2000)
    # alpha=0: the default before "auto" (test_default_alpha_on_dask checks "auto")
    a = ShareBoostClassifier(n_features_to_select=8, alpha=0.0).fit(
        X, y[:2000], sample_weight=w)
    Xd = da.from_array(X, chunks=(600, -1))
    yd = da.from_array(y[:2000].astype(str), chunks=(600,))  # labels of any type
    b = ShareBoostClassifier(n_features_to_select=8, alpha=0.0).fit(
        Xd, yd, sample_weight=da.from_array(w, chunks=(600,)))
    np.testing.assert_array_equal(b.classes_, np.unique(y[:2000].astype(str)))
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-6)


@pytest.mark.parametrize("features", ["raw", "stumps"])
def test_default_alpha_on_dask(client, pendigits, features):
    """alpha="auto" reads the same candidate columns on the workers: the same value,
    the same selection as in memory."""
    X, y = pendigits
    X, y = X[:2000].astype(np.float32), y[:2000]
    w = np.random.default_rng(1).uniform(0.5, 2.0, 2000)
    family = DecisionStumps(max_bins=32) if features == "stumps" else "raw"
    a = ShareBoostClassifier(n_features_to_select=6, features=family).fit(
        X, y, sample_weight=w)
    b = ShareBoostClassifier(n_features_to_select=6, features=family).fit(
        da.from_array(X, chunks=(700, -1)), y, sample_weight=w)
    assert a.alpha_ == b.alpha_ > 0
    np.testing.assert_array_equal(a.selected_features_, b.selected_features_)


def test_groups_of_raw_columns(client, pendigits):
    X, y = pendigits
    family = RawFeatures(groups=np.arange(16) // 2)
    a, b = fit_both(X[:2000], y[:2000], 500, n_features_to_select=4, features=family)
    assert_same_fit(a, b)


def test_predictions_are_dask_arrays(client, pendigits):
    X, y = pendigits
    a, b = fit_both(X[:2000], y[:2000], 500, n_features_to_select=6,
                    features=DecisionStumps(max_bins=16))
    X_test = X[2000:3000]
    Xd = da.from_array(X_test, chunks=(300, -1))
    for name in ("predict", "decision_function", "predict_proba", "predict_log_proba"):
        out = getattr(b, name)(Xd)
        assert isinstance(out, da.Array), name
        np.testing.assert_allclose(out.compute(), getattr(a, name)(X_test), rtol=1e-6,
                                   atol=1e-12, err_msg=name) if name != "predict" else \
            np.testing.assert_array_equal(out.compute(), a.predict(X_test))
    for name in ("staged_predict", "staged_predict_proba", "staged_decision_function"):
        staged = list(getattr(b, name)(Xd))
        expected = list(getattr(a, name)(X_test))
        assert len(staged) == len(expected) == 6
        assert all(isinstance(s, da.Array) for s in staged)
        np.testing.assert_allclose(staged[2].compute(), expected[2], rtol=1e-6, atol=1e-12)
    # a model fitted on a dask array predicts on NumPy as well
    np.testing.assert_array_equal(b.predict(X_test), a.predict(X_test))


def test_binary_problem(client, pendigits):
    X, y = pendigits
    keep = y < 2
    a, b = fit_both(X[keep], y[keep], 400, n_features_to_select=5)
    assert_same_fit(a, b)
    assert b.decision_function(da.from_array(X[keep], chunks=(400, -1))).ndim == 1


def test_scan_on_workers_equals_the_family_in_memory(client, pendigits):
    """Both selection entry points of DaskCandidates against the family in memory."""
    from mcsparse.features._dask import DaskCandidates
    from mcsparse.loss import MulticlassLogisticLoss
    from mcsparse.solvers._columns import SelectedColumns
    from mcsparse.solvers._objective import LinearObjective

    X, y = pendigits
    X, y = X[:1500], y[:1500]
    for family in (RawFeatures(), DecisionStumps(max_bins=10)):
        memory = type(family)(**family.get_params()).fit(X)
        scan = DaskCandidates(family).fit(da.from_array(X, chunks=(400, -1)))
        assert scan.n_candidates_ == memory.n_candidates_
        selected = [3, 7]
        Z = memory.training_columns(selected)
        np.testing.assert_array_equal(scan.training_columns(selected), Z)
        store = SelectedColumns(1500, 2)
        store.put(Z, 0)
        objective = LinearObjective(store, y, n_classes=10, loss=MulticlassLogisticLoss())
        W = np.random.default_rng(0).standard_normal((10, 2))
        b = np.random.default_rng(1).standard_normal(10)
        objective.value_grad(objective.pack(W, b), 2)  # fills objective.residual
        excluded = np.array(selected, dtype=np.intp)
        expected = memory.best_candidate(objective.residual, excluded)
        for got in (scan.best_candidate(objective.residual, excluded),
                    scan.best_candidate_for_model(objective, selected, W, b, excluded)):
            assert got[0] == expected[0]
            assert got[1] == pytest.approx(expected[1], rel=1e-10)
        scan.release()


def test_the_scheduler_holds_no_more_tasks_after_more_rounds(client, pendigits):
    """A round leaves nothing behind on the cluster but its chunks and labels.

    Columns kept per selected candidate, computed from the round's pick,
    kept that round's products, hence every earlier round's columns, in the
    scheduler: a task graph growing with the square of the rounds (it made
    a 300-round fit crawl).
    """
    from distributed import wait

    from mcsparse.features._dask import DaskCandidates
    from mcsparse.loss import MulticlassLogisticLoss
    from mcsparse.solvers._columns import SelectedColumns
    from mcsparse.solvers._objective import LinearObjective

    X, y = pendigits
    X, y = X[:1200], y[:1200]
    scan = DaskCandidates(RawFeatures()).fit(da.from_array(X, chunks=(400, -1)))
    objective = LinearObjective(SelectedColumns(1200, 0), y, n_classes=10,
                                loss=MulticlassLogisticLoss())

    def n_tasks(dask_scheduler):
        return len(dask_scheduler.tasks)

    def settled(at_most=None):
        """The scheduler's task count once released tasks are forgotten (asynchronous)."""
        counts = [client.run_on_scheduler(n_tasks)]
        for _ in range(100):
            if at_most is not None and counts[-1] <= at_most:
                break
            if at_most is None and len(counts) > 2 and counts[-1] == counts[-2] == counts[-3]:
                break
            time.sleep(0.05)
            counts.append(client.run_on_scheduler(n_tasks))
        return counts[-1]

    selected = []
    for _ in range(8):
        W = np.full((10, len(selected)), 0.01)
        j, _ = scan.best_candidate_for_model(objective, selected, W, np.zeros(10),
                                             np.array(selected, dtype=np.intp))
        np.testing.assert_array_equal(scan.training_columns([j]), X[:, [j]])
        selected.append(j)
        wait(scan.row_chunks.futures)
        if len(selected) == 2:
            after_two = settled()
    assert len(set(selected)) == 8
    assert settled(at_most=after_two) <= after_two
    scan.release()


async def _work_stealing(dask_scheduler, on):
    """On the scheduler: start or stop its work stealing (``Client.run_on_scheduler``)."""
    stealing = dask_scheduler.extensions["stealing"]
    await (stealing.start() if on else stealing.stop())


def _kept_columns(token):
    """On a worker: the candidate ids of each chunk's store of a fit (``Client.run``)."""
    from mcsparse.features._dask import _STORES

    return {key[1]: list(store.order) for key, store in _STORES.items() if key[0] == token}


@pytest.mark.parametrize("actors", [True, False])
def test_selected_columns_are_kept_on_the_workers_until_release(client, pendigits, actors):
    """Each chunk's selected columns are kept on its worker, rebuilt when lost.

    The stores are dropped after two rounds (as a lost worker loses them):
    the next rounds rebuild them from the chunks and pick as in memory, by
    the workers' actors (no fall back to tasks) or as tasks.
    """
    X, y = pendigits
    X, y = X[:1200], y[:1200].astype(np.intp)
    # as tasks, a small task may be stolen by the other worker, which then
    # keeps a second store of that piece (rebuilt, the same values): off here
    client.run_on_scheduler(_work_stealing, on=actors)
    try:
        _check_kept_columns(client, X, y, actors)
    finally:
        client.run_on_scheduler(_work_stealing, on=True)


def _check_kept_columns(client, X, y, actors):
    from mcsparse.features._chunk_scan import ScanLabels
    from mcsparse.features._dask import DaskCandidates, _drop_stores
    from mcsparse.features._dask_actors import ChunkHolders
    from mcsparse.loss import MulticlassLogisticLoss

    rng = np.random.default_rng(0)
    loss = MulticlassLogisticLoss()
    for family in (RawFeatures(), DecisionStumps(max_bins=10))[:2 if actors else 1]:
        memory = type(family)(**family.get_params()).fit(X)
        scan = DaskCandidates(family)
        scan._use_actors = actors
        scan.fit(da.from_array(X, chunks=(400, -1)))
        token = scan.row_chunks.token
        selected = []
        for round in range(4):
            if round == 2:
                client.run(_drop_stores, token)
            W, b = 0.3 * rng.standard_normal((10, len(selected))), rng.standard_normal(10)
            residual = np.empty((1200, 10))
            loss.sum_gradient(memory.training_columns(selected) @ W.T + b, y, None, residual)
            excluded = np.array(sorted(selected), dtype=np.intp)
            expected = memory.best_candidate(residual, excluded)
            got = scan.best_candidate_for_model(ScanLabels(y, None, loss), selected, W, b,
                                                excluded)
            assert got[0] == expected[0]
            assert got[1] == pytest.approx(expected[1], rel=1e-10)
            selected.append(got[0])
        assert isinstance(scan._actors, ChunkHolders) if actors else scan._actors is None
        # 3 chunks on 2 workers: the middle one is split, so each worker scans 600 rows
        assert scan.row_chunks.sizes == (400, 200, 200, 400)
        # the store of each piece on the worker that keeps it (a task stolen by
        # the other worker leaves a second, rebuilt store there)
        holders = client.who_has(scan.row_chunks.futures)
        stores = client.run(_kept_columns, token)
        kept = {i: stores[sorted(holders[f.key])[0]].get(i)
                for i, f in enumerate(scan.row_chunks.futures)}
        assert kept == {0: selected, 1: selected, 2: selected, 3: selected}
        scan.release()
        assert not any(client.run(_kept_columns, token).values())


@pytest.mark.parametrize("features", ["raw", DecisionStumps(max_bins=32)])
def test_refit_on_the_workers_beyond_the_client_budget(client, pendigits, features):
    """Selected columns beyond the budget stay on the workers: the same fit.

    The refit's sums then add the chunks' parts, not the in-memory store's row
    blocks: the iterates differ by rounding, so both fits are run to a tight
    tolerance and must reach the same optimum (alpha > 0: strictly convex).
    """
    import dask

    from mcsparse.solvers._dask_columns import DaskColumns

    X, y = pendigits
    X, y = X[:2500], y[:2500]
    params = dict(n_features_to_select=10, alpha=1e-4, features=features, tol=1e-10,
                  max_iter=1000)
    a = ShareBoostClassifier(**params).fit(X, y)
    calls = []
    original = DaskColumns.value_grad

    def counted(self, *args):
        calls.append(self.n_columns)
        return original(self, *args)

    with dask.config.set({"mcsparse.client-columns-budget": "100kB"}), \
            mock.patch.object(DaskColumns, "value_grad", counted):
        b = ShareBoostClassifier(**params).fit(da.from_array(X, chunks=(700, -1)), y)
    assert calls and max(calls) == 10  # 2500 x 10 float64 = 200 kB: on the workers
    assert_same_fit(a, b)
    with dask.config.set({"mcsparse.client-columns-budget": "lots"}):
        with pytest.raises(ValueError, match="client-columns-budget.*'2GiB'"):
            ShareBoostClassifier(n_features_to_select=2).fit(
                da.from_array(X, chunks=(700, -1)), y)


# ---------------------------------------------------------------- prediction


@pytest.fixture(scope="module")
def digits():
    """scikit-learn's 8 x 8 digits (bundled): square images for the templates."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X / 16, y


def _family(name):
    return {"raw": "raw", "stumps": DecisionStumps(max_bins=16),
            "templates": ConvMaxTemplates(n_templates=12, patch_size=3, n_masks=4,
                                          n_patches=2000, random_state=0),
            "anchors": AnchorPoints(n_anchors=20, n_radii=4, random_state=0)}[name]


def _filtered(X):
    """``X[mask]`` as a dask array (unknown row chunks, the second one empty), and
    the same rows in memory; ``X`` with a known empty chunk."""
    keep = np.ones(X.shape[0], dtype=bool)
    keep[100:200] = False  # all of the second chunk
    keep[::7] = False
    Xd = da.from_array(X, chunks=(100, -1))
    unknown = Xd[da.from_array(keep, chunks=100)]
    assert np.isnan(unknown.chunks[0]).all()
    known = da.from_array(X, chunks=((250, 0, X.shape[0] - 250), (X.shape[1],)))
    return [(unknown, X[keep]), (known, X)]


def _check_dask_predictions(model, Xd, X):
    """Every prediction method on ``Xd``: a dask array of its row chunks, the right
    dtype and width in its metadata, an empty second block, the in-memory values."""
    import dask

    k = model.classes_.shape[0]
    lazy, expected, empty = [], [], []
    for name in ("predict", "decision_function", "predict_proba", "predict_log_proba"):
        out = getattr(model, name)(Xd)
        dtype, ndim = (model.classes_.dtype, 1) if name == "predict" else (np.float64, 2)
        assert isinstance(out, da.Array) and out.dtype == out._meta.dtype == dtype, name
        assert out.ndim == out._meta.ndim == ndim, name
        np.testing.assert_equal(out.chunks[0], Xd.chunks[0])  # NaN for unknown sizes
        assert ndim == 1 or out.chunks[1] == (k,), name
        lazy += [out, out.blocks[1]]
        expected.append(getattr(model, name)(X))
        empty.append((0,) if ndim == 1 else (0, k))
    for name in ("staged_predict", "staged_decision_function", "staged_predict_proba"):
        if name == "staged_predict_proba" and type(model).__name__ == "OneVsRestGreedyClassifier":
            continue  # the baseline has no staged probabilities
        stages = list(getattr(model, name)(Xd))
        assert len(stages) == model.n_iter_ and all(isinstance(s, da.Array) for s in stages)
        lazy += stages
        expected += list(getattr(model, name)(X))
    got = dask.compute(*lazy)  # the selected columns once for all
    for i, shape in enumerate(empty):
        assert got[2 * i + 1].shape == shape and got[2 * i + 1].dtype == got[2 * i].dtype
    for value, want in zip(got[: 2 * len(empty): 2] + got[2 * len(empty):], expected):
        assert value.dtype == want.dtype
        if value.dtype.kind == "f":
            np.testing.assert_allclose(value, want, rtol=1e-10, atol=1e-12)
        else:
            np.testing.assert_array_equal(value, want)


@pytest.mark.parametrize("family", ["raw", "stumps", "templates", "anchors"])
def test_prediction_on_unknown_and_empty_chunks(client, digits, family):
    """``X[mask]`` (unknown chunk sizes) and a chunk of zero rows, for models fitted in
    memory and (where the family runs on chunks) on dask: the in-memory predictions."""
    X, y = digits
    params = dict(n_features_to_select=4, alpha=1e-3)
    models = [ShareBoostClassifier(**params, features=_family(family)).fit(X[:1000], y[:1000])]
    if family != "anchors":  # AnchorPoints does not run on dask arrays
        models.append(ShareBoostClassifier(**params, features=_family(family)).fit(
            da.from_array(X[:1000], chunks=(400, -1)), y[:1000]))
        np.testing.assert_array_equal(models[1].selected_features_,
                                      models[0].selected_features_)
    for model in models:
        for Xd, X_expected in _filtered(X[1000:1500]):
            _check_dask_predictions(model, Xd, X_expected)


def test_cv_model_predicts_on_unknown_and_empty_chunks(client, digits):
    """ShareBoostClassifierCV fits in memory; its predictions take dask arrays too."""
    from mcsparse import ShareBoostClassifierCV

    X, y = digits
    model = ShareBoostClassifierCV(alphas=[1e-3, 1e-2], max_features=3, cv=2).fit(
        X[:600], y[:600])
    for Xd, X_expected in _filtered(X[600:1000]):
        _check_dask_predictions(model, Xd, X_expected)


@pytest.mark.parametrize("family", ["raw", "stumps"])
def test_one_vs_rest_predicts_on_unknown_and_empty_chunks(client, digits, family):
    """The one-vs-rest baseline fits in memory; its predictions take dask arrays too."""
    from mcsparse import OneVsRestGreedyClassifier

    X, y = digits
    model = OneVsRestGreedyClassifier(n_features_to_select=3,
                                      features=_family(family)).fit(X[:600], y[:600])
    for Xd, X_expected in _filtered(X[600:1000]):
        _check_dask_predictions(model, Xd, X_expected)


def test_binary_prediction_on_unknown_chunks(client, pendigits):
    X, y = pendigits
    keep = y < 2
    model = ShareBoostClassifier(n_features_to_select=3).fit(X[keep][:500], y[keep][:500])
    Xd, X_expected = _filtered(X[keep][500:900])[0]
    out = model.decision_function(Xd)
    assert out.ndim == out._meta.ndim == 1 and out.dtype == np.float64
    np.testing.assert_allclose(out.compute(), model.decision_function(X_expected),
                               rtol=1e-10, atol=1e-12)
    assert model.predict(Xd).blocks[1].compute().shape == (0,)


# ---------------------------------------------------------------- warm start


def test_warm_start_on_dask_equals_one_longer_fit(client, pendigits):
    """The path stored by a fit (on dask or in memory) extended on dask: the fit of
    all the rounds at once, on dask and in memory."""
    X, y = pendigits
    X, y = X[:2000], y[:2000]
    Xd = da.from_array(X, chunks=(500, -1))
    params = dict(alpha=1e-4, features=DecisionStumps(max_bins=32))
    long_memory = ShareBoostClassifier(n_features_to_select=9, **params).fit(X, y)
    long_dask = ShareBoostClassifier(n_features_to_select=9, **params).fit(Xd, y)
    assert_same_fit(long_memory, long_dask)
    for first in (Xd, X):
        warm = ShareBoostClassifier(n_features_to_select=4, warm_start=True, **params)
        warm.fit(first, y)
        assert warm.n_iter_ == 4
        warm.set_params(n_features_to_select=9).fit(Xd, y)
        assert warm.n_iter_ == 9
        assert_same_fit(long_dask, warm)
        np.testing.assert_allclose(warm.train_loss_, long_dask.train_loss_, rtol=1e-6)
        np.testing.assert_array_equal(warm.features_.thresholds_,
                                      long_dask.features_.thresholds_)
    with distributed.get_task_stream(client) as stream:
        with pytest.raises(ValueError, match=r"same data: fitted on shape \(2000, 16\), "
                                             r"got shape \(1500, 16\)"):
            warm.fit(Xd[:1500], y[:1500])
        with pytest.raises(ValueError, match="resolves to 3 rounds, fewer than the "
                                             "n_iter_=9"):
            warm.set_params(n_features_to_select=3).fit(Xd, y)
    assert stream.data  # the second check reads the candidates: tasks ran
    assert_same_fit(long_dask, warm)  # refused: unchanged


# ---------------------------------------------------------------- checks first


def test_input_checks_run_before_any_task(client, pendigits):
    """Lengths and chunkings are refused before any task (y, sample_weight or X's
    chunks), naming both; the task stream does see the tasks of a fit."""
    X, y = pendigits
    X, y = X[:100], y[:100]
    w = np.linspace(0.5, 1.5, 100)
    Xd, yd = da.from_array(X, chunks=(50, -1)), da.from_array(y, chunks=50)
    model = ShareBoostClassifier(n_features_to_select=2)
    short = da.from_array(y[:99], chunks=50)
    assert short.chunks == ((50, 49),)
    cases = [
        (dict(y=short), r"X has 100 rows, y has 99"),
        (dict(y=y[:99]), r"X has 100 rows, y has 99"),
        (dict(sample_weight=da.from_array(w, chunks=30)),
         r"sample_weight's chunks \(30, 30, 30, 10\) do not match X's row chunks \(50, 50\)"),
        (dict(sample_weight=np.ones(101)), "X has 100 rows, sample_weight has 101"),
        (dict(y=yd[yd >= 0]), r"y has unknown chunk sizes \(nan, nan\).*X's row chunks "
                              r"are \(50, 50\)"),
        (dict(y=yd, sample_weight=da.from_array(w, chunks=50)[:99]),
         "X has 100 rows, sample_weight has 99"),
    ]
    families = [  # the families' parameters on chunks, checked before any task too
        (DecisionStumps(), r"needs max_bins"),
        (ConvMaxTemplates(), r"patch_size=7 is larger than the images \(4 x 4\)"),
        (ConvMaxTemplates(image_shape=(4, 4), patch_size=2, training_store="uint8"),
         "training_store='uint8' is for in-memory fits"),
        (RawFeatures(groups=[0, 1]), r"groups must have shape \(n_features,\) = \(16,\)"),
    ]
    with distributed.get_task_stream(client) as stream:
        for kwargs, message in cases:
            kwargs = {"y": yd, **kwargs}
            with pytest.raises(ValueError, match=message):
                model.fit(Xd, kwargs.pop("y"), **kwargs)
        for family, message in families:
            with pytest.raises(ValueError, match=message):
                ShareBoostClassifier(n_features_to_select=2, features=family).fit(Xd, yd)
    assert stream.data == []
    with distributed.get_task_stream(client) as stream:
        model.fit(Xd, yd, sample_weight=da.from_array(w, chunks=50))
    assert stream.data


# ---------------------------------------------------------------- resilience


def test_killed_worker_gives_the_same_model(pendigits):
    X, y = pendigits
    X, y = X[:3000], y[:3000]
    params = dict(n_features_to_select=12, features=DecisionStumps(max_bins=32), alpha=1e-4)
    expected = ShareBoostClassifier(**params).fit(X, y)
    with _cluster() as cluster, distributed.Client(cluster) as c:
        killed = []

        def kill_one(info):
            if info.round == 4:
                worker = sorted(c.scheduler_info()["workers"])[0]
                pid = c.run(os.getpid, workers=[worker])[worker]
                os.kill(pid, signal.SIGKILL)  # its nanny starts a new one
                killed.append(worker)

        with pytest.warns(RuntimeWarning, match="worker lost.*run as dask tasks"):
            got = ShareBoostClassifier(**params, callback=kill_one).fit(
                da.from_array(X, chunks=(500, -1)), y)
    assert killed
    assert_same_fit(expected, got)


@pytest.mark.parametrize("error", ["RuntimeError", "NoRoom"])
def test_actors_that_cannot_start_leave_the_rounds_to_tasks_and_say_so(client, pendigits,
                                                                       monkeypatch, error):
    """A failed start is said (a RuntimeWarning); chunks past the spill threshold are not."""
    import warnings

    from mcsparse.features import _dask_actors

    def refuse(self, *args):
        raise getattr(_dask_actors, error, RuntimeError)("actors are off on this cluster")

    X, y = pendigits
    X, y = X[:1200], y[:1200]
    params = dict(n_features_to_select=4, alpha=1e-4)
    expected = ShareBoostClassifier(**params).fit(X, y)
    monkeypatch.setattr(_dask_actors.ChunkHolders, "__init__", refuse)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        got = ShareBoostClassifier(**params).fit(da.from_array(X, chunks=(400, -1)), y)
    said = [str(w.message) for w in record if issubclass(w.category, RuntimeWarning)]
    if error == "NoRoom":  # by design: the tasks read spilled chunks back
        assert said == []
    else:
        assert len(said) == 1
        assert re.search("actors could not start.*RuntimeError: actors are off.*run as "
                         "dask tasks", said[0])
    assert_same_fit(expected, got)


# ---------------------------------------------------------------- bad input


def test_bad_chunks_are_refused_before_any_work(client, pendigits):
    X, y = pendigits
    X, y = X[:1000], y[:1000]
    model = ShareBoostClassifier(n_features_to_select=3)
    with pytest.raises(ValueError, match=r"chunked by rows only.*rechunk"):
        model.fit(da.from_array(X, chunks=(500, 8)), y)
    unknown = da.from_array(X, chunks=(500, -1))
    unknown = unknown[unknown[:, 0] >= 0]  # boolean mask: chunk sizes unknown
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        model.fit(unknown, y)
    with pytest.raises(ValueError, match=r"y's chunks \(300, 300, 300, 100\) do not "
                                         r"match X's row chunks \(500, 500\)"):
        model.fit(da.from_array(X, chunks=(500, -1)), da.from_array(y, chunks=300))
    with pytest.raises(ValueError, match=r"y must have shape \(1000,\)"):
        model.fit(da.from_array(X, chunks=(500, -1)), y[:999])
    with pytest.raises(ValueError, match="only one class"):
        model.fit(da.from_array(X, chunks=(500, -1)), np.zeros(1000))
    with pytest.raises(TypeError, match="real numbers, got dtype bool"):
        model.fit(da.from_array(X > 0.5, chunks=(500, -1)), y)
    with pytest.raises(ValueError, match="empty"):
        model.fit(da.zeros((0, 16), chunks=(10, -1)), np.zeros(0))
    with pytest.raises(ValueError, match="2-D"):
        model.fit(da.from_array(X[:, 0], chunks=500), y)


def test_nan_in_a_chunk_is_named(client, pendigits):
    X, y = pendigits
    X = X[:1000].copy()
    X[740, 3] = np.nan
    with pytest.raises(ValueError, match=r"X chunk 2 \(rows 600 to 899\) contains NaN"):
        ShareBoostClassifier(n_features_to_select=3).fit(
            da.from_array(X, chunks=(300, -1)), y[:1000])
    fitted = ShareBoostClassifier(n_features_to_select=3).fit(
        da.from_array(np.nan_to_num(X), chunks=(300, -1)), y[:1000])
    with pytest.raises(ValueError, match=r"X chunk 2 \(rows 600 to 899\).*NaN"):
        fitted.predict(da.from_array(X, chunks=(300, -1))).compute()
    with pytest.raises(ValueError, match="has 15 features, but .* 16"):
        fitted.predict(da.from_array(X[:, 1:], chunks=(300, -1)))


@pytest.mark.parametrize("row", [310, 550])
def test_nan_in_a_split_chunk_names_the_whole_chunk(client, pendigits, row):
    """Chunk 1 of (300, 300, 300, 100) is cut at row 500 for 2 workers: a NaN in
    either piece names the user's chunk and its rows, not the piece."""
    X, y = pendigits
    X = X[:1000].copy()
    X[row, 3] = np.inf
    with pytest.raises(ValueError, match=r"X chunk 1 \(rows 300 to 599\) contains NaN"):
        ShareBoostClassifier(n_features_to_select=3).fit(
            da.from_array(X, chunks=(300, -1)), y[:1000])


def _unreadable_chunk_2(block, block_info=None):
    if block_info[0]["chunk-location"][0] == 2:
        raise OSError("disk read failed")
    return block


def test_a_chunk_that_cannot_be_computed_is_named(client, pendigits):
    X, y = pendigits
    Xd = da.from_array(X[:1000], chunks=(300, -1)).map_blocks(_unreadable_chunk_2,
                                                               dtype=np.float64)
    with pytest.raises(RuntimeError, match=r"X chunk 2 \(rows 600 to 899\) could not be "
                                           r"computed: OSError: disk read failed"):
        ShareBoostClassifier(n_features_to_select=3).fit(Xd, y[:1000])


def test_unsupported_families_and_options(client, pendigits):
    X, y = pendigits
    Xd = da.from_array(X[:1000], chunks=(500, -1))
    with pytest.raises(ValueError, match=r"needs max_bins.*DecisionStumps\(max_bins=256\)"):
        ShareBoostClassifier(n_features_to_select=3, features="stumps").fit(Xd, y[:1000])
    with pytest.raises(TypeError, match="AnchorPoints does not run on dask arrays"):
        ShareBoostClassifier(n_features_to_select=3,
                             features=AnchorPoints(n_anchors=4)).fit(Xd, y[:1000])
    for name, value in (("validation_fraction", 0.2), ("selection", "full")):
        with pytest.raises(ValueError, match=f"{name}=.* not supported on a dask array"):
            ShareBoostClassifier(n_features_to_select=3, **{name: value}).fit(Xd, y[:1000])


def _python(code):
    """The output of ``code`` run in a fresh interpreter (no client, no dask imported).

    Run outside the repository root, where ``import mcsparse`` would find the
    uncompiled source folder instead of the installed package.
    """
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            cwd=tempfile.gettempdir())
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_no_client_says_how_to_start_one():
    code = (
        "import numpy as np, dask.array as da\n"
        "from mcsparse import ShareBoostClassifier\n"
        "X = da.from_array(np.random.default_rng(0).random((50, 3)), chunks=(25, -1))\n"
        "try:\n"
        "    ShareBoostClassifier(n_features_to_select=1).fit(X, np.arange(50) % 2)\n"
        "except ValueError as exc:\n"
        "    print(exc)\n"
    )
    out = _python(code)
    assert "none is running" in out and "LocalCluster" in out


def test_numpy_fits_never_import_dask():
    code = (
        "import sys, numpy as np\n"
        "from mcsparse import ShareBoostClassifier\n"
        "X = np.random.default_rng(0).random((40, 3))\n"
        "ShareBoostClassifier(n_features_to_select=2).fit(X, np.arange(40) % 2).predict(X)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    )
    assert _python(code).strip() == "[]"


def test_solver_warnings_reach_the_caller(client, pendigits):
    # the refit runs here: a refit stopped short is reported as in memory
    X, y = pendigits
    with pytest.warns(ConvergenceWarning, match="refits stopped"):
        ShareBoostClassifier(n_features_to_select=6, max_iter=2).fit(
            da.from_array(X, chunks=(2000, -1)), y)


def _bytes_received(dask_worker):
    """On a worker: the bytes it fetched from other workers so far (``Client.run``)."""
    return sum(entry["total"] for entry in dask_worker.transfer_incoming_log)


def _placed(client, x, workers):
    """``x`` as a persisted dask array of 400-row chunks, chunk ``i`` on ``workers[i]``."""
    parts = [client.scatter(x[400 * i:400 * (i + 1)], workers=[w]) for i, w in enumerate(workers)]
    X = client.persist(da.concatenate([da.from_delayed(p, (400, x.shape[1]), x.dtype)
                                       for p in parts]))
    distributed.wait(X)
    held = client.who_has(X)
    assert [held[key] for key in sorted(held)] == [(w,) for w in workers]
    return X


def test_a_split_chunk_sends_only_the_rows_another_worker_keeps(client):
    """Chunks of 400, 400 and 400 rows, the first two on one worker: that worker
    keeps rows 0 to 599 and cuts the middle chunk where it is held, so that the
    other worker receives its 200 rows, not the whole chunk. A NaN in those
    rows names the user's chunk."""
    from mcsparse.features._dask import RowChunks

    workers = sorted(client.scheduler_info()["workers"])
    x = np.random.default_rng(0).standard_normal((1200, 50))
    X = _placed(client, x, [workers[0], workers[0], workers[1]])
    before = client.run(_bytes_received)
    chunks = RowChunks(X, client)
    distributed.wait(chunks.futures)
    received = {w: client.run(_bytes_received)[w] - before[w] for w in workers}
    assert chunks.sizes == (400, 200, 200, 400)
    assert [tuple(w) for w in chunks._workers] == [(workers[0],)] * 2 + [(workers[1],)] * 2
    assert received == {workers[0]: 0, workers[1]: x[:200].nbytes}
    np.testing.assert_array_equal(np.concatenate(client.gather(chunks.futures)), x)
    chunks.release()

    x[650, 7] = np.nan
    chunks = RowChunks(_placed(client, x, [workers[0], workers[0], workers[1]]), client)
    with pytest.raises(ValueError, match=r"X chunk 1 \(rows 400 to 799\) contains NaN"):
        chunks.gather_list(chunks.futures)
    chunks.release()


@pytest.mark.parametrize("sizes, n_workers", [
    ([20000] * 3, 2), ([10000] * 6, 2), ([15000] * 4, 3), ([250, 0, 750], 2), ([5], 1),
    ([1, 1, 1], 4), ([7, 3, 9, 1, 5], 3), ([100] * 50, 2)])
def test_balanced_pieces_give_each_worker_its_share_of_rows(sizes, n_workers):
    """The pieces cover every row once, in order; each share is n/W rows to one row."""
    from mcsparse.features._dask import balanced_pieces

    pieces = balanced_pieces(sizes, n_workers)
    starts = np.concatenate([[0], np.cumsum(sizes)])
    rows = np.concatenate([np.arange(starts[c] + a, starts[c] + b) for c, a, b, _ in pieces])
    np.testing.assert_array_equal(rows, np.arange(sum(sizes)))
    assert all(b > a for _, a, b, _ in pieces)
    shares = np.bincount([r for *_, r in pieces], weights=[b - a for _, a, b, _ in pieces],
                         minlength=n_workers)
    assert shares.shape == (n_workers,)
    assert shares.max() - shares.min() <= 1
    # a chunk is split only where a share ends inside it
    assert len(pieces) <= sum(s > 0 for s in sizes) + n_workers - 1
    if sizes == [20000] * 3:
        assert pieces == [(0, 0, 20000, 0), (1, 0, 10000, 0), (1, 10000, 20000, 1),
                          (2, 0, 20000, 1)]
    if sizes == [10000] * 6:  # already even: no chunk split
        assert [(a, b) for _, a, b, _ in pieces] == [(0, 10000)] * 6
