"""The README's two commands stay true: CI runs the test command verbatim."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _commands():
    readme = (ROOT / "README.rst").read_text()
    return [line.strip() for line in readme.splitlines()
            if re.match(r"\s+python3 -m venv \.venv && ", line)]


def test_readme_has_two_commands_and_ci_runs_the_test_one():
    if not (ROOT / ".ci" / "run").is_file():
        pytest.skip("not a source checkout")
    install_and_run, install_and_test = _commands()
    assert install_and_run.endswith("python -m mcsparse")
    assert install_and_test.endswith("pytest tests")
    assert install_and_test in (ROOT / ".ci" / "run").read_text()
