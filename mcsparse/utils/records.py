"""Result files of the examples' full runs: what was measured, by which command and commit.

A full run of an example (``MCSPARSE_FULL=1``) takes minutes to an hour, so
the documentation build runs the examples in a quick mode. The full run
saves its numbers and curves in a small JSON file beside the example
(committed with the code); the quick mode reads it back and draws the full
run's curve beside its own, so that every full-run number in the documents
comes from a file that says how it was produced.
"""

import datetime
import json
import os
import platform
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from ._show_versions import blas_info

__all__ = ["save_full_run", "load_full_run"]

#: Keys every result file has besides ``results`` (the files written since
#: the BLAS was recorded also have ``numpy_version`` and ``blas``).
RECORD_KEYS = ("command", "commit", "date", "mcsparse_version", "cpus", "platform")


def _git(directory, *args):
    """Output of ``git args`` run in ``directory``, or None (not a checkout, no git)."""
    try:
        done = subprocess.run(["git", *args], cwd=directory, capture_output=True,
                              text=True, timeout=30, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


#: Most changed files a record names after its commit.
MAX_NAMED_CHANGES = 5


def _names(paths):
    """``a, b and 3 more files``: the first :data:`MAX_NAMED_CHANGES` of ``paths``."""
    named = ", ".join(paths[:MAX_NAMED_CHANGES])
    rest = len(paths) - MAX_NAMED_CHANGES
    return named if rest <= 0 else f"{named} and {rest} more file{'s' if rest > 1 else ''}"


def _provenance(script, command=None):
    """Command, commit and machine of a full run of ``script``."""
    from .. import __version__

    script = Path(script).resolve()
    root = _git(script.parent, "rev-parse", "--show-toplevel")
    commit = _git(script.parent, "rev-parse", "HEAD")
    changed = _git(script.parent, "diff", "--name-only", "HEAD") if commit else None
    if changed:
        commit += f" (with uncommitted changes to {_names(changed.splitlines())})"
    name = script.relative_to(root).as_posix() if root else script.name
    return {
        "command": command or f"MCSPARSE_FULL=1 python {name}",
        "commit": commit or "unknown (not run from a git checkout)",
        "date": datetime.date.today().isoformat(),
        "mcsparse_version": __version__,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "numpy_version": np.__version__,
        "blas": blas_info(),
    }


def _plain(value):
    """``value`` with NumPy arrays and scalars as lists and Python numbers."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, np.generic):
        return _plain(value.item())
    if isinstance(value, float) and not np.isfinite(value):
        raise ValueError(f"a result file holds finite numbers only, got {value!r}")
    return value


def save_full_run(path, results, *, script, command=None):
    """Write the results of a full run of ``script`` to the JSON file ``path``.

    The file also records the command that reproduces the run, the git
    commit it ran from (with the files that differed from it, if any),
    the date, the mcsparse version, the machine's cores, the NumPy version
    and the BLAS libraries in use (``"blas"``, threadpoolctl's API, version,
    kernels and threads of each: an old OpenBLAS on generic kernels can
    double a run's time). It is written to
    a temporary file first and then renamed: an interrupted run leaves no
    half-written file.

    Parameters
    ----------
    path : str or path-like
        The result file; its directory is created if needed.
    results : dict
        JSON-serialisable values: numbers, strings, lists, nested dicts;
        NumPy arrays and scalars are converted.
    script : str or path-like
        The example that ran (its ``__file__``).
    command : str, default=None
        The command that reproduces the run, for a script run with its own
        arguments; None records an example's full mode,
        ``MCSPARSE_FULL=1 python <script>`` (the path from the checkout's
        root).

    Returns
    -------
    record : dict
        What was written: ``results``, the keys of :data:`RECORD_KEYS`,
        ``numpy_version`` and ``blas`` (list of dict).

    Raises
    ------
    TypeError
        If ``results`` is not a dict or holds a value JSON cannot store, or
        ``command`` is not a string.
    ValueError
        If ``results`` holds NaN or infinity.
    """
    if not isinstance(results, dict):
        raise TypeError(f"results must be a dict, got {type(results).__name__}")
    if command is not None and not (isinstance(command, str) and command.strip()):
        raise TypeError(f"command must be a non-empty string or None, got {command!r}")
    record = {**_provenance(script, command), "results": _plain(results)}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's file is private; a result file is for everyone
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return record


def load_full_run(path):
    """Read a result file written by :func:`save_full_run`.

    Parameters
    ----------
    path : str or path-like
        The result file.

    Returns
    -------
    record : dict or None
        The record (``results`` and the keys of :data:`RECORD_KEYS`), or None
        when there is no such file (no full run recorded yet).

    Raises
    ------
    ValueError
        If the file is not valid JSON or lacks a key of a record, naming the file.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        record = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"the result file {path} is not valid JSON ({exc})") from None
    missing = [k for k in (*RECORD_KEYS, "results") if not isinstance(record, dict)
               or k not in record]
    if missing:
        raise ValueError(f"the result file {path} lacks {', '.join(missing)}: not "
                         "written by save_full_run")
    return record
