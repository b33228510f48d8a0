"""Figures drawn from committed full-run records at every documentation build.

``doc/conf.py`` calls :func:`write_tradeoff` on
``asv_benchmarks/records/stumps_vs_lightgbm.json`` (written by
``asv_benchmarks/stumps_vs_lightgbm.py --out``): the comparison page shows
the record's time-to-error curves of ShareBoost and LightGBM. No network, no
fitting: the curves are the record's.
"""

import json
from pathlib import Path

LABELS = {"pendigits": "pendigits", "satimage": "satimage", "letter": "letter",
          "mnist": "MNIST pixels"}


def write_tradeoff(record, out_png):
    """Draw test error against fit time for both libraries, one panel per data set.

    Parameters
    ----------
    record : str or Path
        A record of ``stumps_vs_lightgbm.py --out`` whose sets have curves.
    out_png : str or Path
        The figure to write (its folder is created).

    Raises
    ------
    ValueError
        If a data set of the record has no curves (a record written before
        the script timed them).
    """
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    data = json.loads(Path(record).read_text())
    sets = data["results"]["sets"]
    missing = [name for name, row in sets.items()
               if "curve" not in row["shareboost"] or "curve" not in row["lightgbm"]]
    if missing:
        raise ValueError(f"{record}: no time-to-error curves for {', '.join(missing)}; "
                         "rerun asv_benchmarks/stumps_vs_lightgbm.py --out")
    n_cols = 2 if len(sets) > 2 else len(sets)
    n_rows = -(-len(sets) // n_cols)
    fig, axes = plt.subplots(n_rows, n_cols, figsize=(4.6 * n_cols, 3.4 * n_rows),
                             squeeze=False)
    for ax, (name, row) in zip(axes.ravel(), sets.items()):
        _panel(ax, name, row)
    for ax in axes.ravel()[len(sets):]:
        ax.set_visible(False)
    axes[0][0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"asv_benchmarks/stumps_vs_lightgbm.py, {data['date']}, commit "
                 f"{data['commit'][:10]}, {data['results']['n_jobs']} threads each\n"
                 "dots: ShareBoost's 100 stumps and LightGBM's rounds at equal error "
                 "(a grid of 50), with the time ratio", fontsize=9)
    fig.tight_layout()
    out_png = Path(out_png)
    out_png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out_png, dpi=110)
    plt.close(fig)


def _panel(ax, name, row):
    """One data set's two curves, the two fits at equal error and their ratio."""
    import numpy as np
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    sb, lg = row["shareboost"], row["lightgbm"]
    ax.plot(sb["curve"]["seconds"], 100 * np.array(sb["curve"]["test_errors"]),
            color="C0", label="ShareBoost, one shared stump a round")
    ax.plot(lg["curve"]["seconds"], 100 * np.array(lg["curve"]["test_errors"]),
            color="C1", label="LightGBM, one stump per class a round")
    ax.plot([sb["fit_s"]], [100 * sb["test_error"]], "o", color="C0", ms=4)
    ax.plot([lg["fit_s"]], [100 * lg["test_error"]], "o", color="C1", ms=4)
    ax.annotate(f"{row['time_ratio']:.2f}×", (sb["fit_s"], 100 * sb["test_error"]),
                textcoords="offset points", xytext=(-6, 8), ha="right", fontsize=8,
                bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"})
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_major_locator(FixedLocator([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10,
                                             20, 50, 100]))
    ax.yaxis.set_major_locator(FixedLocator([1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 100]))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}%"))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_title(f"{LABELS.get(name, name)} ({row['n_samples']:,} × {row['n_features']}, "
                 f"{row['n_classes']} classes)", fontsize=9)
    ax.set_xlabel("fit time (s), best of the repeats", fontsize=8)
    ax.set_ylabel("test error", fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
