"""Draw the committed asv results as the docs' benchmark-history page.

``doc/conf.py`` calls :func:`write_history` at the start of every build: it
reads ``asv_benchmarks/results/<machine>/*.json`` (the ``asv run`` results
committed with the repository), draws one matplotlib figure per benchmark of
:data:`BENCHMARKS` over the commits measured, and writes the figures and an
``.inc`` table of the commits into ``doc/generated/benchmark_history/``,
which ``user_guide/benchmark_history.rst`` includes. No network, no asv
import: the result files are JSON (asv's format version 2).
"""

import json
import math
from datetime import datetime, timezone
from pathlib import Path

# benchmark name -> (title, parameter combinations to draw: None for all)
BENCHMARKS = {
    "shareboost.ShareBoostPendigits.time_fit":
        "ShareBoost fit, pendigits products, 10 rounds",
    "shareboost.ShareBoostPendigits.track_test_score":
        "ShareBoost test accuracy, pendigits products, 10 rounds",
    "stumps.StumpScan.time_scan": "Decision-stump scan (Cython and NumPy)",
    "loss.MulticlassLogisticLoss.time_loss_gradient":
        "Margin logistic loss and gradient",
    "mixed_norm.MixedNormPathPendigits.time_path": "Mixed-norm path, pendigits",
    "mkl.MKLFit.time_fit": "MKL fits on wine",
}


def _runs(results_dir):
    """``[(date, commit, results)]`` of every result file, oldest commit first."""
    runs = []
    for path in sorted(Path(results_dir).glob("*/*.json")):
        if path.name == "machine.json":
            continue
        data = json.loads(path.read_text())
        if "commit_hash" not in data or "results" not in data:
            continue
        columns = data.get("result_columns", ["result", "params"])
        results = {name: dict(zip(columns, value))
                   for name, value in data["results"].items()}
        runs.append((data["date"], data["commit_hash"], results))
    return sorted(runs, key=lambda run: run[0])


def _labels(params, names=()):
    """One label per combination of ``params`` (asv's order: the last varies fastest)."""
    names = list(names) + [""] * (len(params) - len(names))
    labels = [""]
    for name, values in zip(names, params):
        values = [f"{name}={v.strip(chr(39))}" if name else v.strip(chr(39)) for v in values]
        labels = [f"{a}, {v}" if a else v for a in labels for v in values]
    return labels


def _param_names(results_dir):
    """``{benchmark: [parameter names]}`` from asv's ``benchmarks.json``, if there."""
    path = Path(results_dir) / "benchmarks.json"
    if not path.is_file():
        return {}
    data = json.loads(path.read_text())
    return {name: b.get("param_names", []) for name, b in data.items() if isinstance(b, dict)}


def _series(runs, name, names=()):
    """``{label: [value or nan per run]}`` of one benchmark over the runs."""
    series = {}
    for i, (_, _, results) in enumerate(runs):
        entry = results.get(name)
        if entry is None:
            continue
        values = entry["result"]
        values = values if isinstance(values, list) else [values]
        labels = _labels(entry.get("params") or [], names) or [""]
        for label, value in zip(labels, values):
            line = series.setdefault(label, [math.nan] * len(runs))
            line[i] = math.nan if value is None else float(value)
    return {label: line for label, line in series.items()
            if any(not math.isnan(v) for v in line)}


def _draw(runs, name, title, path, names=()):
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    series = _series(runs, name, names)
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(7.5, 3.4))
    x = list(range(len(runs)))
    for i, (label, values) in enumerate(sorted(series.items())):
        ax.plot(x, values, marker="o", linestyle="-" if i < 10 else "--",
                label=label or name.rsplit(".", 1)[-1])
    ax.set_xticks(x, [commit[:7] for _, commit, _ in runs], rotation=30, fontsize=8)
    is_time = name.rsplit(".", 1)[-1].startswith("time_")
    if is_time:
        ax.set_yscale("log")
        ax.set_ylabel("seconds (log scale)")
    else:
        ax.set_ylabel(name.rsplit(".", 1)[-1].removeprefix("track_").replace("_", " "))
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    # below the axes, two columns: the labels name every parameter
    ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2,
              frameon=False)
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)
    return True


def write_history(results_dir, out_dir):
    """Write the figures and ``commits.inc`` of the results under ``results_dir``.

    Parameters
    ----------
    results_dir : str or Path
        An asv ``results_dir`` (one folder per machine of JSON files).
    out_dir : str or Path
        Created if missing; receives ``<benchmark>.png`` for each benchmark
        of :data:`BENCHMARKS` with results, ``figures.inc`` (the figure
        directives) and ``commits.inc`` (a table of the commits measured).

    Returns
    -------
    n_runs : int
        The number of result files read (0 when there are none: the page
        then says so).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = _runs(results_dir)
    param_names = _param_names(results_dir)
    figures = []
    for name, title in BENCHMARKS.items():
        if runs and _draw(runs, name, title, out_dir / f"{name}.png",
                          param_names.get(name, ())):
            figures.append(f".. figure:: /generated/benchmark_history/{name}.png\n"
                           f"   :alt: {title} over the commits measured\n\n"
                           f"   ``{name}``\n")
    if not figures:
        figures = ["No asv results are committed under ``asv_benchmarks/results``.\n"]
    (out_dir / "figures.inc").write_text("\n".join(figures))
    rows = [".. list-table::", "   :header-rows: 1", "   :widths: 12 20 12", "",
            "   * - commit", "     - commit date (UTC)", "     - benchmarks"]
    for date, commit, results in runs:
        when = datetime.fromtimestamp(date / 1000, tz=timezone.utc)
        rows += [f"   * - ``{commit[:7]}``", f"     - {when:%Y-%m-%d %H:%M}",
                 f"     - {len(results)}"]
    (out_dir / "commits.inc").write_text("\n".join(rows) + "\n")
    return len(runs)
