"""Shared fixtures: access to the real data sets through MCSPARSE_DATA.

Tests that need a data file skip when it is absent, unless
``MCSPARSE_REQUIRE_DATA=1`` (set by ``.ci/run``), where they fail instead, so
that CI can never pass by skipping.
"""

import os

import pytest

from mcsparse.datasets import get_data_home


def require_data(*relpaths):
    """Return the data home, or skip (fail under MCSPARSE_REQUIRE_DATA=1)."""
    home = get_data_home()
    missing = [p for p in relpaths if not (home / p).is_file()]
    if missing:
        msg = (f"data files {missing} not found under {home}; point MCSPARSE_DATA "
               "at the datasets folder")
        if os.environ.get("MCSPARSE_REQUIRE_DATA", "0") not in ("", "0"):
            pytest.fail(msg)
        pytest.skip(msg)
    return home


@pytest.fixture
def mnist_home():
    return require_data(
        "mnist/train-images-idx3-ubyte.gz", "mnist/train-labels-idx1-ubyte.gz",
        "mnist/t10k-images-idx3-ubyte.gz", "mnist/t10k-labels-idx1-ubyte.gz",
    )


@pytest.fixture(scope="session")
def pendigits_small():
    """1000 training and 1000 test samples of the bundled pendigits, scaled to [0, 1]."""
    from mcsparse.datasets import load_pendigits

    X, y = load_pendigits(subset="train", return_X_y=True)
    X_test, y_test = load_pendigits(subset="test", return_X_y=True)
    return X[:1000] / 100, y[:1000], X_test[:1000] / 100, y_test[:1000]


def pytest_terminal_summary(terminalreporter):
    """The expected failures, one line per reason (``-ra`` would repeat each
    reason once per test): its count, then the tests, grouped by parameter set."""
    xfailed = terminalreporter.stats.get("xfailed", [])
    if not xfailed:
        return
    groups = {}
    for report in xfailed:
        reason = report.wasxfail.removeprefix("reason: ")
        groups.setdefault(reason, []).append(report.nodeid)
    terminalreporter.section(f"{len(xfailed)} expected failures (xfail), by reason")
    for reason, nodeids in groups.items():
        terminalreporter.line(f"XFAIL x{len(nodeids)}: {reason}")
        by_test = {}
        for nodeid in nodeids:
            test, bracket, param = nodeid.partition("[")
            head, _, tail = param.rstrip("]").rpartition("-")
            key = f"{test}[{head}]" if head else test
            params = by_test.setdefault(key, [])
            if bracket:
                params.append(tail or param.rstrip("]"))
        for key, params in by_test.items():
            terminalreporter.line(f"    {key}" + (f": {', '.join(params)}" if params else ""))
