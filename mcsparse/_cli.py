"""The main job: ShareBoost's path on a real data set, one line per round.

Run ``python -m mcsparse --help`` (or the ``mcsparse`` console script).
"""

import argparse
import csv
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from . import __version__
from .utils._show_versions import format_blas, format_system_info

# name -> (description, default rounds, default fit_intercept)
DATASETS = {
    "pendigits": ("UCI pendigits (bundled), 120 pairwise products of x / 100", 40, False),
    "mnist": ("MNIST raw pixels / 255 (float32)", 100, True),
    "satimage": ("UCI satimage, 630 pairwise products of x / 255", 40, False),
    "letter": ("UCI letter (16000/4000), 120 pairwise products of x / 15", 40, False),
}


FAMILIES = {
    "raw": "the data set's columns (pairwise products for the UCI sets, pixels for mnist)",
    "stumps": "decision stumps 1[x_f <= theta] on the original features",
    "templates": "convolution-max templates with Gaussian masks (mnist only)",
    "anchors": "anchor pieces 1[||x - v|| <= r] [x, 1] on the original features",
}


# the data sets' original features, which the families other than "raw" read:
# scaled for anchors (distances), as published for stumps (thresholds then read
# as in the Python API: x15 <= 12.5 on pendigits)
ORIGINAL = {
    "pendigits": "UCI pendigits (bundled), x / 100",
    "mnist": "MNIST raw pixels / 255 (float32)",
    "satimage": "UCI satimage, x / 255",
    "letter": "UCI letter (16000/4000), x / 15",
}
UNSCALED = {
    "pendigits": "UCI pendigits (bundled), x in [0, 100]",
    "mnist": ORIGINAL["mnist"],
    "satimage": "UCI satimage, x in [0, 255]",
    "letter": "UCI letter (16000/4000), x in [0, 15]",
}


def load_problem(name, data_home=None, products=True, scaled=True):
    """Return ``(X_train, y_train, X_test, y_test, feature_names)`` for the main job.

    The UCI sets come as their pairwise products, or with ``products=False``
    as their original features, scaled to [0, 1] unless ``scaled=False``.
    MNIST always comes as pixels / 255.
    """
    from . import datasets
    from .features import PairwiseProducts

    if name == "mnist":
        X, y = datasets.load_mnist(subset="train", data_home=data_home, return_X_y=True)
        Xt, yt = datasets.load_mnist(subset="test", data_home=data_home, return_X_y=True)
        scale = np.float32(1 / 255)
        names = np.array([f"pixel({i // 28},{i % 28})" for i in range(784)])
        return X * scale, y, Xt * scale, yt, names
    loader, scale = {
        "pendigits": (lambda s: datasets.load_pendigits(subset=s, return_X_y=True), 100.0),
        "satimage": (lambda s: datasets.load_satimage(subset=s, data_home=data_home,
                                                      return_X_y=True), 255.0),
        "letter": (lambda s: datasets.load_letter(subset=s, data_home=data_home,
                                                  return_X_y=True), 15.0),
    }[name]
    X, y = loader("train")
    Xt, yt = loader("test")
    if not products:
        names = np.array([f"x{i}" for i in range(X.shape[1])])
        if not scaled:
            return X, y, Xt, yt, names
        return X / scale, y, Xt / scale, yt, names
    products = PairwiseProducts().fit(X / scale)
    return (products.transform(X / scale), y, products.transform(Xt / scale), yt,
            products.get_feature_names_out())


def _write_atomic(path, write, binary=False):
    """Write through a temporary file in the same folder, then rename."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent or ".", prefix=f".{path.name}.")
    try:
        with (os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", newline="")) as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_path(rows, path):
    """Write the per-round records to ``path`` (.csv or .json)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        _write_atomic(path, lambda f: json.dump(rows, f, indent=1))
    elif suffix == ".csv":
        def write(f):
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["round"])
            writer.writeheader()
            writer.writerows(rows)
        _write_atomic(path, write)
    else:
        raise ValueError(f"--output must end in .csv or .json, got {path!r}")


def _int_at_least(low):
    def parse(text):
        value = int(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"must be an integer >= {low}, got {text}")
        return value
    parse.__name__ = "int"  # argparse's message: "invalid int value: 'five'"
    return parse


def _finite_float(positive, auto=False):
    def parse(text):
        if auto and text == "auto":
            return text
        value = float(text)
        if not np.isfinite(value) or value < 0 or (positive and value == 0):
            bound = "> 0" if positive else ">= 0"
            raise argparse.ArgumentTypeError(f"must be a finite number {bound}, got {text}")
        return value
    parse.__name__ = "float"  # argparse's message: "invalid float value: 'abc'"
    return parse


def _check_target(parser, option, target, suffixes):
    """Refuse an output file (``--output``, ``--plot``) that cannot be written, before fitting."""
    path = Path(target)
    if path.suffix.lower() not in suffixes:
        parser.error(f"{option} must end in {', '.join(suffixes[:-1])} or {suffixes[-1]}, "
                     f"got {target!r}")
    if path.is_dir():
        parser.error(f"{option} {target!r} is a directory")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        parser.error(f"{option}: the folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK):
        parser.error(f"{option}: the folder {str(parent)!r} is not writable")


def _check_output(parser, output):
    """Refuse an --output that cannot be written, before any fitting."""
    if output is not None:
        _check_target(parser, "--output", output, (".csv", ".json"))


HEADER = (f"{'round':>5}  {'feature':>7}  {'name':<24} {'train loss':>11}  "
          f"{'test err %':>10}  {'refit it':>9}  {'elapsed s':>9}")


def format_row(row):
    """One line of the per-round table, aligned with ``HEADER``."""
    return (f"{row['round']:>5}  {row['feature']:>7}  {row['name']:<24} "
            f"{row['train_loss']:>11.6f}  {100 * row['test_error']:>10.2f}  "
            f"{row['refit_n_iter']:>9}  {row['elapsed_s']:>9.2f}")


def build_parser():
    parser = argparse.ArgumentParser(
        prog="mcsparse",
        description="Fit ShareBoost on a real data set and print its path: per round "
                    "the selected feature, train loss, test error and elapsed time.",
    )
    parser.add_argument("--dataset", choices=sorted(DATASETS), default="pendigits",
                        help="; ".join(f"{k}: {v[0]}" for k, v in DATASETS.items()))
    parser.add_argument("--features", choices=list(FAMILIES), default="raw",
                        help="candidate family: " + "; ".join(
                            f"{k}: {v}" for k, v in FAMILIES.items()))
    parser.add_argument("--n-templates", type=_int_at_least(1), default=1000,
                        help="templates (k-means of image patches) for --features "
                             "templates (default 1000)")
    parser.add_argument("--n-anchors", type=_int_at_least(1), default=1500,
                        help="anchor points (k-means centres) for --features anchors "
                             "(default 1500)")
    parser.add_argument("--n-features", type=_int_at_least(1), default=None,
                        help="rounds = features to select (default: 40, 100 for mnist)")
    parser.add_argument("--alpha", type=_finite_float(positive=False, auto=True),
                        default="auto",
                        help="Frobenius penalty alpha ||W||_F^2: a number >= 0 (0 is the "
                             "paper's bare loss) or 'auto' (default: the candidate "
                             "columns' mean variance over 2 n_samples; printed)")
    parser.add_argument("--cv", type=_int_at_least(2), nargs="?", const=5, default=None,
                        metavar="FOLDS",
                        help="choose alpha and the number of features (up to "
                             "--n-features) by cross-validation on the training set "
                             "(ShareBoostClassifierCV, 7 alphas around 'auto', FOLDS "
                             "folds, default 5), then refit and print the path")
    parser.add_argument("--fit-intercept", action=argparse.BooleanOptionalAction,
                        default=None,
                        help="fit an intercept (default: no for the UCI sets' "
                             "pairwise products, as in eq. 1 of the paper; yes for "
                             "mnist and for --features other than raw, as "
                             "ShareBoostClassifier's default)")
    parser.add_argument("--max-iter", type=_int_at_least(1), default=200,
                        help="iteration cap of each refit (default 200)")
    parser.add_argument("--tol", type=_finite_float(positive=True), default=1e-4,
                        help="relative gradient tolerance of each refit (default 1e-4)")
    parser.add_argument("--max-train", type=_int_at_least(1), default=None,
                        help="use a stratified random subset of this many training "
                             "samples (quick runs)")
    parser.add_argument("--random-state", type=_int_at_least(0), default=0,
                        help="seed of the --max-train subset")
    parser.add_argument("--data-home", default=None,
                        help="data folder (default: $MCSPARSE_DATA, ~/mcsparse_data)")
    parser.add_argument("--output", default=None,
                        help="write the path to this .csv or .json file")
    parser.add_argument("--plot", default=None,
                        help="draw the test error curve into this .png, .pdf or .svg "
                             "file (needs matplotlib)")
    parser.add_argument("--version", action="store_true",
                        help="print mcsparse's version and exit")
    parser.add_argument("--verbose", action="store_true",
                        help="with --version: also the versions of Python, NumPy, SciPy "
                             "and scikit-learn, and the BLAS in use (threadpoolctl: "
                             "library, version, kernels, threads), so that a slow "
                             "kernel shows; with a run: the BLAS line in its header")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="show a progress bar instead of one line per round, "
                             "and print the table at the end")
    return parser


def _check_plot(parser, plot):
    """Refuse a --plot that cannot be drawn or written, before any fitting."""
    if plot is None:
        return
    _check_target(parser, "--plot", plot, (".png", ".pdf", ".svg"))
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        parser.error("--plot needs matplotlib: pip install matplotlib")


def _family(args):
    """The candidate family of ``--features`` (None: the columns themselves)."""
    from .features import AnchorPoints, ConvMaxTemplates, DecisionStumps

    if args.features == "stumps":
        return DecisionStumps()
    if args.features == "templates":
        return ConvMaxTemplates(n_templates=args.n_templates, n_jobs=2,
                                random_state=args.random_state)
    if args.features == "anchors":
        return AnchorPoints(n_anchors=args.n_anchors, n_jobs=2,
                            random_state=args.random_state)
    return None


def draw_plot(rows, start, title, path):
    """Test error against the round, written to ``path`` (through a temporary file)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    rounds = [start["round"]] + [r["round"] for r in rows]
    errors = [100 * start["test_error"]] + [100 * r["test_error"] for r in rows]
    ax.plot(rounds, errors, marker="o", markersize=3)
    ax.set(xlabel="round (selected features)", ylabel="test error (%)", title=title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(path)
    try:
        _write_atomic(path, lambda f: fig.savefig(f, format=path.suffix[1:].lower()),
                      binary=True)
    finally:
        plt.close(fig)


def _load(parser, args, n_rounds):
    """The problem, subsampled by ``--max-train``; exits with a message on errors."""
    try:
        X, y, X_test, y_test, names = load_problem(args.dataset, args.data_home,
                                                   products=args.features == "raw",
                                                   scaled=args.features != "stumps")
    except (OSError, ValueError) as exc:  # missing, corrupted, not downloadable
        parser.exit(2, f"mcsparse: error: {exc}\nmcsparse: the data folder is "
                       f"--data-home, else $MCSPARSE_DATA, else ~/mcsparse_data: point "
                       "one of them at a folder that has the files\n")
    n_classes = len(np.unique(y))
    if args.features == "raw" and n_rounds > X.shape[1]:
        parser.error(f"--n-features {n_rounds} exceeds the {X.shape[1]} features "
                     f"of {args.dataset}")
    if args.max_train is not None and args.max_train < 2 * n_classes:
        parser.error(f"--max-train must be at least {2 * n_classes} (two samples "
                     f"per class), got {args.max_train}")
    if args.max_train is not None and args.max_train < X.shape[0]:
        from sklearn.model_selection import train_test_split

        X, _, y, _ = train_test_split(X, y, train_size=args.max_train, stratify=y,
                                      random_state=args.random_state)
    return X, y, X_test, y_test, names


def main(argv=None):
    """Entry point of ``python -m mcsparse`` and the ``mcsparse`` script."""
    try:
        return _run(argv)
    except BrokenPipeError:  # e.g. ``mcsparse | head``: stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _exit_if_version(parser, args):
    """``--version``: print the version (with ``--verbose``, the libraries and the BLAS), exit 0.

    On stdout, as argparse's version action prints; nothing without ``--version``.
    """
    if args.version:
        print(format_system_info() if args.verbose else f"mcsparse {__version__}")
        parser.exit()


def _run(argv):
    """The main job; see :func:`main`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _exit_if_version(parser, args)
    description, default_rounds, default_intercept = DATASETS[args.dataset]
    n_rounds = default_rounds if args.n_features is None else args.n_features
    if args.features != "raw":
        default_intercept = True  # as ShareBoostClassifier (the Python API)
    fit_intercept = default_intercept if args.fit_intercept is None else args.fit_intercept
    _check_output(parser, args.output)
    _check_plot(parser, args.plot)
    if args.features == "templates" and args.dataset != "mnist":
        parser.error("--features templates needs images: use --dataset mnist")

    from tqdm.auto import tqdm

    from . import ShareBoostClassifier

    t0 = time.perf_counter()
    X, y, X_test, y_test, names = _load(parser, args, n_rounds)
    classes = np.unique(y)
    n_classes = len(classes)
    if args.features != "raw":
        original = (UNSCALED if args.features == "stumps" else ORIGINAL)[args.dataset]
        description = f"{original}; {args.features}: {FAMILIES[args.features]}"
    print(f"mcsparse: ShareBoost on {args.dataset} ({description})")
    print(f"  train {X.shape[0]} x {X.shape[1]}, test {X_test.shape[0]}, "
          f"{n_classes} classes, loaded in {time.perf_counter() - t0:.1f} s")
    note = (" (eq. 1 of the paper; ShareBoostClassifier's default is True)"
            if args.fit_intercept is None and not fit_intercept else "")
    print(f"  rounds={n_rounds} alpha={args.alpha} fit_intercept={fit_intercept}{note} "
          f"max_iter={args.max_iter} tol={args.tol}", flush=True)
    if args.verbose:
        print(f"  BLAS: {format_blas()}", flush=True)
    if args.cv is not None:
        return _run_cv(parser, args, X, y, X_test, y_test, names, n_rounds, fit_intercept)

    print("  train loss: the margin logistic loss of eq. (3) of the paper, plus "
          "alpha ||W||^2 (log(1 + (k-1) e) at W = 0)")
    rows = []
    test_cols = []
    bar = tqdm(total=n_rounds, unit="round", file=sys.stderr) if args.quiet else None
    start = _round_zero(y_test, classes)
    if bar is None:
        print(HEADER)
        print(format_row(start), flush=True)

    clf = ShareBoostClassifier(n_features_to_select=n_rounds, alpha=args.alpha,
                               fit_intercept=fit_intercept, max_iter=args.max_iter,
                               tol=args.tol, features=_family(args) or "raw")

    def record(info):
        if args.features == "raw":
            cols, name = X_test[:, [info.feature]], names[info.feature]
        else:  # the family, fitted by now, computes its candidate on the test set
            cols = clf.features_.transform_candidates(X_test, [info.feature])
            name = clf.features_.candidate_names([info.feature], names)[0]
        test_cols.append(np.asarray(cols, dtype=np.float64))
        scores = np.hstack(test_cols) @ info.coef.T + info.intercept
        error = float(np.mean(classes[np.argmax(scores, axis=1)] != y_test))
        row = {"round": info.round, "feature": info.feature, "name": str(name),
               "train_loss": info.train_loss, "test_error": error,
               "refit_n_iter": info.refit_n_iter, "elapsed_s": info.elapsed}
        rows.append(row)
        if bar is None:
            print(format_row(row), flush=True)
        else:
            # the postfix of round t shows with the counter at t
            bar.set_postfix(test_error=f"{100 * error:.2f}%", loss=f"{info.train_loss:.4f}",
                            refresh=False)
            bar.update()

    clf.set_params(callback=record)
    caught = _fit_quietly(parser, clf, X, y)
    if bar is not None:
        bar.close()
        print(HEADER)
        print(format_row(start))
        for row in rows:
            print(format_row(row))
    _summary(rows, clf, caught)
    _write_outputs(args, rows, start)
    return 0


def _fit_quietly(parser, clf, X, y):
    """Fit, keeping the ConvergenceWarnings for the notes after the summary."""
    with warnings.catch_warnings(record=True) as caught:
        # kept out of the table and progress bar; printed after the summary
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            clf.fit(X, y)
        except ValueError as exc:  # e.g. more rounds than the family has candidates
            parser.exit(2, f"mcsparse: error: {exc}\n")
    return caught


def _write_outputs(args, rows, start):
    if args.output is not None:
        write_path(rows, args.output)
        print(f"path written to {args.output}")
    if args.plot is not None:
        draw_plot(rows, start, f"ShareBoost on {args.dataset} ({args.features})", args.plot)
        print(f"plot written to {args.plot}")


def _round_zero(y_test, classes):
    """Round 0 of the table: W = 0, every score 0 (the loss is log(1 + (k-1) e))."""
    return {"round": 0, "feature": "-", "name": "(W = 0)",
            "train_loss": float(np.log1p((len(classes) - 1) * np.e)),
            "test_error": float(np.mean(y_test != classes[0])), "refit_n_iter": "-",
            "elapsed_s": 0.0}


def _run_cv(parser, args, X, y, X_test, y_test, names, n_rounds, fit_intercept):
    """``--cv``: ShareBoostClassifierCV, then the refitted path as a table."""
    from . import ShareBoostClassifierCV

    cv = ShareBoostClassifierCV(alphas=7 if args.alpha == "auto" else [args.alpha],
                                max_features=n_rounds, cv=args.cv,
                                features=_family(args) or "raw",
                                fit_intercept=fit_intercept, max_iter=args.max_iter,
                                tol=args.tol, random_state=args.random_state,
                                verbose=0 if args.quiet else 1)
    print(f"  cross-validation: {args.cv} folds x "
          f"{7 if args.alpha == 'auto' else 1} alphas, one path of {n_rounds} rounds each",
          flush=True)
    start_time = time.perf_counter()
    caught = _fit_quietly(parser, cv, X, y)
    elapsed = time.perf_counter() - start_time
    i = int(np.searchsorted(cv.alphas_, cv.alpha_))
    se = cv.scores_[:, i, cv.n_features_ - 1].std() / np.sqrt(cv.scores_.shape[0])
    print(f"chosen by {args.cv}-fold cross-validation: alpha={cv.alpha_:.3g}, "
          f"n_features={cv.n_features_} (CV accuracy {100 * cv.best_score_:.2f}% +- "
          f"{100 * se:.2f}); {elapsed:.1f} s with the refit")
    best = cv.best_estimator_
    test_errors = [float(np.mean(p != y_test)) for p in best.staged_predict(X_test)]
    feature_names = best.features_.candidate_names(best.selected_features_, names)
    rows = [{"round": t + 1, "feature": int(j), "name": str(name),
             "train_loss": float(best.train_loss_[t]), "test_error": test_errors[t],
             "refit_n_iter": int(best.refit_n_iter_[t]), "elapsed_s": float("nan")}
            for t, (j, name) in enumerate(zip(best.selected_features_, feature_names))]
    start = _round_zero(y_test, cv.classes_)
    print(HEADER)
    for row in [start] + rows:
        print(format_row(row))
    if rows:
        print(f"test error {100 * rows[-1]['test_error']:.2f}% with {len(rows)} features")
    for caught_warning in caught:
        print(f"note: {caught_warning.message}")
    _write_outputs(args, rows, start)
    return 0


def _summary(rows, clf, caught):
    """The final and best test errors, alpha, the fit time, then the warnings as notes."""
    errors = [r["test_error"] for r in rows]
    if errors:
        best = int(np.argmin(errors))
        print(f"final test error {100 * errors[-1]:.2f}% with {len(rows)} features; "
              f"best {100 * errors[best]:.2f}% at round {best + 1}")
        fit_time = rows[-1]["elapsed_s"]
        print(f"fit {fit_time:.1f} s ({fit_time / len(rows):.2f} s per round), median "
              f"refit iterations per round {np.median(clf.refit_n_iter_):.0f}")
    how = "auto: the candidate columns' mean " + (
        "variance" if clf.fit_intercept else "square") + " over 2 n_samples"
    print(f"alpha={clf.alpha_:.3g}" + (f" ({how})" if clf.alpha == "auto" else ""))
    for caught_warning in caught:
        print(f"note: {caught_warning.message}")
