"""Held-out study of the Fig. 4 pipeline's early rounds (training digits only).

Does any choice of the template features move ShareBoost's error at round 75?
Each variant runs the Fig. 4 model (``alpha=3e-6``, the NCC that the example
chose) on the first 50,000 MNIST training digits and is scored on the last
10,000, for each k-means seed of its templates: the test digits are never
read. Run with ``MCSPARSE_DATA`` set; 1 to 3 minutes per variant and
seed on 2 cores, 55 minutes in all. Memory: 3.2 GB for Fig. 4's training
matrix; the union with the correlation holds both families' matrices and
their concatenation, about 16 GB at its peak (computed from the sizes)::

    python asv_benchmarks/mnist_heldout.py                  # every variant, seeds 0 1 2
    python asv_benchmarks/mnist_heldout.py --variants ncc ncc-damping-1 --seeds 0

It prints one line per (variant, seed), then the mean over seeds, at
rounds 25, 50, 75 and 100 and at the last round, and writes
``mnist_heldout.json`` (every curve, with the command, commit and date) to
the current directory, wherever it is run from. The numbers are on the results page (Fig. 4).

Variants (``ConvMaxTemplates(response="ncc")`` with 1000 templates x 16
masks and ``damping=0.25`` unless said):

- ``ncc``: Fig. 4's features;
- ``ncc-damping-0.1``, ``ncc-damping-1``: another damping of the NCC;
- ``ncc-25-masks``: 25 masks (a 5 x 5 grid), 25,000 candidates;
- ``ncc-2000-templates``: 2000 templates, 32,000 candidates;
- ``ncc+correlation``: the NCC's 16,000 candidates and the plain
  correlation's 16,000 (same templates' seed), the latter scaled to the
  NCC's mean absolute value;
- ``ncc+pixels``: the NCC's candidates and the 784 pixels;
- ``ncc-standardised``: Fig. 4's candidates, each column divided by its
  standard deviation on the 50,000 digits (the l1 rule compares gradient
  columns, which scale with the columns);
- ``ncc+2-deformed``, ``ncc+2-affine``, ``ncc+2-mild``: Fig. 4's features
  on the 50,000 digits and two deformed copies of each (150,000 rows,
  9.6 GB in float32; templates learnt on all of them), the copies by
  ``deform_images`` with the deformed-digits example's maps (affine and
  elastic), its affine maps alone, or milder affine maps (5 degrees, 5%,
  shear 0.05); 2.5 to 3 minutes per seed.
"""
import argparse
import shlex
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import deform_images, load_mnist
from mcsparse.features import ConvMaxTemplates
from mcsparse.utils.records import save_full_run

ALPHA = 3e-6  # Fig. 4's choice, on the same held-out digits
N_FIT, N_VAL = 50_000, 10_000
CHECKPOINTS = (25, 50, 75, 100)
FAMILY = {
    "ncc": {},
    "ncc-damping-0.1": {"damping": 0.1},
    "ncc-damping-1": {"damping": 1.0},
    "ncc-25-masks": {"n_masks": 25},
    "ncc-2000-templates": {"n_templates": 2000},
}
#: Deformed copies (``deform_images`` with these arguments, its defaults
#: otherwise) added to the 50,000 digits: two per digit, drawn with the seed
#: of the templates.
DEFORMED = {
    "ncc+2-deformed": {},  # the defaults: the deformed example's first maps
    "ncc+2-affine": {"elastic_alpha": 0.0},
    "ncc+2-mild": {"max_rotation": 5.0, "max_scale": 0.05, "max_shear": 0.05,
                   "elastic_alpha": 0.0},
}
VARIANTS = [*FAMILY, "ncc+correlation", "ncc+pixels", "ncc-standardised", *DEFORMED]


def templates(X_fit, X_val, seed, **params):
    """Training and held-out matrices of one ConvMaxTemplates family."""
    params = {"n_templates": 1000, "response": "ncc", **params}
    family = ConvMaxTemplates(n_jobs=2, random_state=seed, **params)
    return family.fit_transform(X_fit), family.transform(X_val)


def features(variant, X_fit, X_val, seed):
    """The candidate matrices of ``variant`` (training, held-out)."""
    if variant in DEFORMED:
        X_copies = deform_images(X_fit, 2, random_state=seed, **DEFORMED[variant])
        return templates(np.concatenate([X_fit, X_copies]), X_val, seed)
    if variant in FAMILY:
        return templates(X_fit, X_val, seed, **FAMILY[variant])
    F, V = templates(X_fit, X_val, seed)
    if variant == "ncc-standardised":
        std = F.std(axis=0)
        std[std == 0] = 1  # a constant column stays as it is
        return F / std, V / std
    if variant == "ncc+correlation":
        F2, V2 = templates(X_fit, X_val, seed, response="correlation")
        scale = np.float32(np.abs(F).mean() / np.abs(F2).mean())
        return np.hstack([F, F2 * scale]), np.hstack([V, V2 * scale])
    # "ncc+pixels"
    return (np.hstack([F, X_fit.reshape(len(X_fit), -1)]),
            np.hstack([V, X_val.reshape(len(X_val), -1)]))


def positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=VARIANTS,
                        help="candidate families to compare (default: all)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2],
                        help="k-means seeds of the templates (default: 0 1 2)")
    parser.add_argument("--rounds", type=positive_int, default=100,
                        help="ShareBoost rounds per fit (default: 100)")
    args = parser.parse_args()
    shown = sorted({t for t in CHECKPOINTS if t <= args.rounds} | {args.rounds})
    warnings.simplefilter("ignore", ConvergenceWarning)
    X, y = load_mnist(subset="train", return_X_y=True)
    X = (X / 255.0).astype(np.float32)
    X_fit, y_fit, X_val, y_val = X[:N_FIT], y[:N_FIT], X[-N_VAL:], y[-N_VAL:]
    curves = {}
    for variant in args.variants:
        for seed in args.seeds:
            t0 = time.perf_counter()
            F, V = features(variant, X_fit, X_val, seed)
            clf = ShareBoostClassifier(n_features_to_select=args.rounds, alpha=ALPHA)
            clf.fit(F, np.tile(y_fit, len(F) // len(y_fit)))
            curve = [float(np.mean(p != y_val)) for p in clf.staged_predict(V)]
            curves.setdefault(variant, []).append(curve)
            del F, V, clf
            print(f"{variant:>20} seed {seed}: " + " ".join(
                f"{t}: {100 * curve[t - 1]:.2f}%" for t in shown)
                + f" ({time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"held-out error (%), mean over seeds {args.seeds}:")
    for variant, runs in curves.items():
        mean = np.mean(runs, axis=0)
        print(f"{variant:>20}: " + " ".join(f"{t}: {100 * mean[t - 1]:.2f}" for t in shown))
    command = " ".join(["python asv_benchmarks/mnist_heldout.py",
                        *map(shlex.quote, sys.argv[1:])])
    save_full_run(Path.cwd() / "mnist_heldout.json",
                  {"alpha": ALPHA, "n_fit": N_FIT, "n_val": N_VAL, "seeds": args.seeds,
                   "curves": curves}, script=__file__, command=command)


if __name__ == "__main__":
    main()
