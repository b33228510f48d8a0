"""ShareBoost on a cluster deployed as users deploy one: separate processes.

A scheduler and two workers are started with the ``dask scheduler`` and
``dask worker`` command-line programs on 127.0.0.1 (free ports, chosen by the
scheduler and the workers), a client in a third process connects with
``Client(address)`` and fits; the fit must equal the in-memory one and its
tasks must have run in the two worker processes. Every process is stopped by
the test, and every wait has a timeout, so that nothing can hang.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

import mcsparse
from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import DecisionStumps

pytest.importorskip(
    "distributed", reason='the dask extra is not installed: pip install "mcsparse[dask]"')

#: Seconds the whole cluster may take to start, and the client to fit.
START_TIMEOUT, CLIENT_TIMEOUT = 60, 180

PARAMS = dict(n_features_to_select=8, alpha=1e-4, features=DecisionStumps(max_bins=32))

CLIENT = """
import json, os, sys
import numpy as np, dask.array as da
from distributed import Client
from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_pendigits
from mcsparse.features import DecisionStumps

X, y = load_pendigits(return_X_y=True)
X, y = X[:2000] / 100, y[:2000]
with Client(sys.argv[1], timeout=30) as client:
    client.wait_for_workers(2, timeout=30)
    model = ShareBoostClassifier(n_features_to_select=8, alpha=1e-4,
                                 features=DecisionStumps(max_bins=32)).fit(
        da.from_array(X, chunks=(500, -1)), y)
    predicted = model.predict(da.from_array(X, chunks=(700, -1))).compute()
    pids = sorted(client.run(os.getpid).values())
    versions = client.get_versions(packages=["mcsparse"])
print(json.dumps({"mcsparse": [v["packages"]["mcsparse"] for v in
                               (versions["scheduler"], *versions["workers"].values())],
                  "selected": model.selected_features_.tolist(),
                  "coef": model.coef_.tolist(), "intercept": model.intercept_.tolist(),
                  "predicted": predicted.tolist(), "worker_pids": pids}))
"""


def _dask_program():
    """The ``dask`` command-line program of this interpreter's environment."""
    script = Path(sys.executable).with_name("dask")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "dask"]


def _environment():
    """This process's environment, with the folder of the mcsparse it imported first
    on the path: the workers unpickle the tasks with the same mcsparse."""
    env = dict(os.environ)
    package_parent = str(Path(mcsparse.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (package_parent, env.get("PYTHONPATH")) if p)
    return env


def _stop(processes):
    """Stop processes started by this test, each with its children (its own session):
    SIGTERM to all, then SIGKILL to those still running after 10 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        running = [p for p in processes if p.poll() is None]
        for process in running:
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                pass
        for process in running:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass


def _wait_for(path, processes, timeout):
    """The JSON content of ``path`` once written, or fail (a process died, or timeout)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = [p for p in processes if p.poll() is not None]
        if dead:
            pytest.fail(f"{dead[0].args} exited with status {dead[0].returncode}")
        try:
            return json.loads(path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            time.sleep(0.1)
    pytest.fail(f"the scheduler wrote no {path.name} in {timeout} s")


@pytest.fixture
def command_line_cluster():
    """``(address, worker pids, log file)`` of a scheduler and two workers, each a process
    started by ``dask scheduler`` / ``dask worker``; all stopped at the end."""
    processes = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        logs = open(tmp / "cluster.log", "w")  # noqa: SIM115 - closed below

        def start(*args):
            processes.append(subprocess.Popen(
                [*_dask_program(), *args], cwd=tmp, env=_environment(),
                stdin=subprocess.DEVNULL, stdout=logs, stderr=subprocess.STDOUT,
                start_new_session=True))
            return processes[-1]

        try:
            start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(tmp / "scheduler.json"))
            address = _wait_for(tmp / "scheduler.json", processes, START_TIMEOUT)["address"]
            assert address.startswith("tcp://127.0.0.1:")
            workers = [start("worker", address, "--host", "127.0.0.1", "--nthreads", "1",
                             "--no-nanny", "--no-dashboard", "--name", f"worker-{i}",
                             "--local-directory", str(tmp / f"worker-{i}"))
                       for i in range(2)]
            yield address, sorted(w.pid for w in workers), tmp / "cluster.log"
        finally:
            _stop(processes[1:])  # the workers first: they say goodbye to the scheduler
            _stop(processes[:1])
            logs.close()
            if any(p.returncode is None for p in processes):  # pragma: no cover
                pytest.fail("a cluster process could not be stopped")


def test_fit_on_a_cluster_of_command_line_processes(command_line_cluster):
    address, worker_pids, log = command_line_cluster
    try:
        result = subprocess.run([sys.executable, "-c", CLIENT, address], capture_output=True,
                                text=True, env=_environment(), timeout=CLIENT_TIMEOUT,
                                cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        pytest.fail(f"the client did not finish in {CLIENT_TIMEOUT} s; cluster log:\n"
                    + log.read_text()[-3000:])
    assert result.returncode == 0, (result.stderr[-3000:] + "\ncluster log:\n"
                                    + log.read_text()[-3000:])
    got = json.loads(result.stdout.strip().splitlines()[-1])
    assert got["worker_pids"] == worker_pids  # the tasks ran in the processes started here
    # the check the user guide advises: the same mcsparse everywhere
    assert got["mcsparse"] == [mcsparse.__version__] * 3

    X, y = load_pendigits(return_X_y=True)
    X, y = X[:2000] / 100, y[:2000]
    expected = ShareBoostClassifier(**PARAMS).fit(X, y)
    np.testing.assert_array_equal(got["selected"], expected.selected_features_)
    np.testing.assert_allclose(got["coef"], expected.coef_, rtol=1e-6,
                               atol=1e-9 * np.abs(expected.coef_).max())
    np.testing.assert_allclose(got["intercept"], expected.intercept_, rtol=1e-6,
                               atol=1e-9 * np.abs(expected.intercept_).max())
    np.testing.assert_array_equal(got["predicted"], expected.predict(X))
