"""The gallery examples' quick modes, run here as the docs build runs them.

The docs build (``make -C doc html``, run by CI) executes every example in
quick mode, with ``ConvergenceWarning`` turned into an error by
``doc/conf.py``: a default that does not converge fails the build. This module
runs the same examples under pytest, so that one can check them without
building the docs::

    MCSPARSE_RUN_EXAMPLES=1 pytest -W error::sklearn.exceptions.ConvergenceWarning \\
        tests/test_examples.py

It is skipped otherwise: CI already runs the examples once, in the docs build.
The examples that fit the paper's bare loss (``alpha=0``) catch its
ConvergenceWarning themselves and say so in their text.
"""

import os
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*/plot_*.py"))

pytestmark = pytest.mark.skipif(
    os.environ.get("MCSPARSE_RUN_EXAMPLES", "0") in ("", "0"),
    reason="the docs build runs the examples; MCSPARSE_RUN_EXAMPLES=1 runs them here")


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_example_quick_mode(path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setenv("MPLBACKEND", "agg")
    monkeypatch.delenv("MCSPARSE_FULL", raising=False)
    monkeypatch.chdir(path.parent)  # as sphinx-gallery runs them
    import matplotlib.pyplot as plt

    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")


def test_every_example_is_listed():
    assert len(EXAMPLES) >= 14 and all(p.name.startswith("plot_") for p in EXAMPLES)
