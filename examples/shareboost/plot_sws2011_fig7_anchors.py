"""
=====================================================================
Piecewise-linear anchors against an RBF kernel SVM on MNIST (Fig. 7)
=====================================================================

This example reproduces §7.5 and Fig. 7 of [SWS2011]_: with generic
features, ShareBoost learns a piecewise-linear multiclass predictor whose
error comes close to a Gaussian-kernel SVM while it uses a few hundred
anchor points, far fewer than the SVM's support vectors.

The digits are reduced to 50 dimensions by PCA (fitted on the training
digits). The candidates (:class:`~mcsparse.features.AnchorPoints`, §4.2):
1500 anchor points, the k-means centres of the training digits, each with
35 radii (the distances within which 0.2% to 50% of the training digits
lie, geometric steps), i.e. 52,500 candidate groups. A group is the local
linear piece ``1[||x - v|| <= r] [x, 1]`` (51 columns of ``W``); each
round of ShareBoost selects the group with the largest sum of its gradient
columns' l1 norms (§3.2) and refits all selected pieces. All 35 radii of an
anchor are scored in one cumulative pass over its training digits sorted by
distance (Cython and BLAS).

**Protocol.** Both methods have their hyper-parameters chosen on the
training set only, on the same split: fit on the first 10,000 training
digits, measure the error on the last 10,000. For the SVC
(:class:`sklearn.svm.SVC`, one-vs-one, RBF kernel on the same PCA-50
features): ``gamma`` in {1, 2, 4} times scikit-learn's ``"scale"`` and
``C`` in {3, 10}. For ShareBoost: the Frobenius penalty ``alpha`` (§3.3)
in {1e-4, 1e-3, 1e-2}, with 500 anchors and 100 rounds on that split. The
chosen models are then fitted on all 60,000 training digits and the test
set is used once, for the curves and numbers below.

Each refit stops at a relative gradient tolerance ``tol=1e-3`` instead of
the default 1e-4: on the split above (``alpha=1e-3``, 100 rounds, run one
after the other, with the earlier L-BFGS-B refit) the held-out error was the
same (3.30% against 3.33%) for 1.9 times less time (59 s against 113 s).
The refits of the pieces (balls of up to 30,000 digits, kept as row
indices into the shared ``[X, 1]``) and the scan of the 52,500 candidate
groups share the fit time: on all 60,000 digits the scan (float32 with an
exact float64 check) takes 107 to 113 s over the 320 rounds (``python
asv_benchmarks/side_by_side.py fig7 --worker``), and over rounds 200 to
320 a round takes 1.6 to 4.0 s (median 2.8 s, the full run's verbose log),
most of it in the refit (8 to 15 L-BFGS iterations over up to 320 pieces).

A round adds one *piece*, an (anchor point, radius) pair; the same anchor
point may come back with another radius, so the path runs 320 rounds and
the numbers are given both at 250 pieces and at 250 distinct anchor points.

**Full run** (``MCSPARSE_FULL=1 python
examples/shareboost/plot_sws2011_fig7_anchors.py``, 2 cores, 2026-12-04,
commit 702a79b, 12 min for the whole example, 2.5 GB peak memory): SVC
(``gamma`` = 2 x scale, ``C=3``) 1.31% test error with 13,767 support
vectors, fit in 14 s; ShareBoost (``alpha=1e-3``, held-out 3.30% against
3.39% and 3.51% for 1e-4 and 1e-2) 2.09% after 100 pieces, 1.81% after 250
pieces (206 distinct anchor points) and 1.81% after all 320 pieces (243
anchor points: the path never reaches 250 distinct ones), fit in 598 s
(1718 s in the earlier run of 2026-12-04, commit 81e6696, before the
group products' C loops and the L-BFGS changes; it chose ``alpha=1e-4`` on
the same split, 3.37% against 3.38%, and gave 1.84% at 250 pieces; 3560 s
and 5.4 GB on 2026-12-01, before the pieces shared the training matrix and
the scan ran in float32). That is 0.50 points above the SVC: short of
"close to the SVM" as our target reads it (0.3 points), whichever way
anchors are counted. The :doc:`results page </results>` lists what was
tried.

Quick mode (the docs build) uses 5000 training and 2000 test digits, 300
anchors and 60 rounds, with ``alpha`` and the SVC parameters fixed.
``MCSPARSE_FIG7_ALPHA=<value>`` skips ShareBoost's search.
"""

# %%
# Data: MNIST digits, PCA to 50 dimensions
import os
import resource
import sys
import time
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import PercentFormatter
from sklearn.decomposition import PCA
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from mcsparse import ShareBoostClassifier
from mcsparse.datasets import load_mnist
from mcsparse.features import AnchorPoints
from mcsparse.utils.records import load_full_run, save_full_run

FULL = os.environ.get("MCSPARSE_FULL", "0") not in ("", "0")
# the full run's curve and numbers, committed beside this example
# this file (sphinx-gallery runs an example from its folder and defines no __file__)
SCRIPT = Path(globals().get("__file__", "plot_sws2011_fig7_anchors.py")).resolve()
RECORD = SCRIPT.parent / "results" / "fig7_anchors.json"
X_train, y_train = load_mnist(subset="train", return_X_y=True)
X_test, y_test = load_mnist(subset="test", return_X_y=True)
if FULL:
    n_anchors, n_rounds = 1500, 320
    search = dict(n_fit=10_000, n_val=10_000, n_anchors=500, n_rounds=100)
    alphas, gammas, Cs = [1e-4, 1e-3, 1e-2], [1.0, 2.0, 4.0], [3.0, 10.0]
else:
    X_train, y_train = X_train[:5000], y_train[:5000]
    X_test, y_test = X_test[:2000], y_test[:2000]
    n_anchors, n_rounds = 300, 60
    search = None
    alphas, gammas, Cs = [1e-3], [2.0], [3.0]
pca = PCA(n_components=50, random_state=0).fit(X_train / 255.0)
Z_train = pca.transform(X_train / 255.0)
Z_test = pca.transform(X_test / 255.0)
gamma_scale = 1.0 / (Z_train.shape[1] * Z_train.var())  # SVC's gamma="scale"
print(f"train {Z_train.shape}, test {Z_test.shape}; {n_anchors} anchors x 35 radii "
      f"= {35 * n_anchors} candidate groups")


TOL = 1e-3


def anchors(n):
    return AnchorPoints(n_anchors=n, n_radii=35, quantile_range=(0.002, 0.5),
                        n_jobs=2, random_state=0)


# %%
# Hyper-parameters on a split of the training set
#
# Fit on the first ``n_fit`` training digits, score on the last ``n_val``.
warnings.simplefilter("ignore", ConvergenceWarning)
alpha_env = os.environ.get("MCSPARSE_FIG7_ALPHA")
if search is not None:
    fit, val = slice(0, search["n_fit"]), slice(-search["n_val"], None)
    svc_val = {}
    for g in gammas:
        for C in Cs:
            svc = SVC(C=C, gamma=g * gamma_scale).fit(Z_train[fit], y_train[fit])
            svc_val[g, C] = np.mean(svc.predict(Z_train[val]) != y_train[val])
            print(f"SVC gamma={g:g} x scale, C={C:g}: held-out error "
                  f"{100 * svc_val[g, C]:.2f}%", flush=True)
    gamma, C = min(svc_val, key=svc_val.get)
    if alpha_env is None:
        sb_val = {}
        for alpha in alphas:
            t0 = time.perf_counter()
            clf = ShareBoostClassifier(n_features_to_select=search["n_rounds"], alpha=alpha,
                                       tol=TOL, features=anchors(search["n_anchors"]))
            clf.fit(Z_train[fit], y_train[fit])
            sb_val[alpha] = np.mean(clf.predict(Z_train[val]) != y_train[val])
            print(f"ShareBoost alpha={alpha:g}: held-out error {100 * sb_val[alpha]:.2f}% "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        best_alpha = min(sb_val, key=sb_val.get)
    else:
        best_alpha = float(alpha_env)
else:
    gamma, C = gammas[0], Cs[0]
    best_alpha = float(alpha_env) if alpha_env else alphas[0]
print(f"chosen: SVC gamma={gamma:g} x scale, C={C:g}; ShareBoost alpha={best_alpha:g}")

# %%
# The RBF kernel SVM on all training digits
t0 = time.perf_counter()
svc = SVC(C=C, gamma=gamma * gamma_scale).fit(Z_train, y_train)
svc_fit_time = time.perf_counter() - t0
svc_error = np.mean(svc.predict(Z_test) != y_test)
n_sv = int(svc.n_support_.sum())
print(f"SVC: test error {100 * svc_error:.2f}%, {n_sv} support vectors, "
      f"fit {svc_fit_time:.0f} s")

# %%
# ShareBoost over anchor groups on all training digits
t0 = time.perf_counter()
clf = ShareBoostClassifier(n_features_to_select=n_rounds, alpha=best_alpha, tol=TOL,
                           features=anchors(n_anchors), verbose=int(FULL))
clf.fit(Z_train, y_train)
sb_fit_time = time.perf_counter() - t0
test_errors = np.array([np.mean(p != y_test) for p in clf.staged_predict(Z_test)])
rounds = np.arange(1, n_rounds + 1)
# a round adds one piece (anchor point, radius); an anchor point chosen again
# with another radius adds a piece, not an anchor point
anchor_of_piece = clf.selected_features_ // clf.features_.n_radii
n_distinct = np.array([np.unique(anchor_of_piece[:t]).size for t in rounds])
# ru_maxrss is in kB on Linux, in bytes on macOS
peak_gb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
           / (2**30 if sys.platform == "darwin" else 2**20))
print(f"ShareBoost: test error {100 * test_errors[-1]:.2f}% after {n_rounds} pieces "
      f"({n_distinct[-1]} distinct anchor points), fit {sb_fit_time:.0f} s; peak memory "
      f"of the process {peak_gb:.1f} GB")
for t in (50, 100, 150, 200, 230, 250, 300):
    if t <= n_rounds:
        print(f"  {t:>3} pieces ({n_distinct[t - 1]:>3} anchor points): test error "
              f"{100 * test_errors[t - 1]:.2f}%")
budget = min(250, n_rounds)  # at most 250 pieces, or 250 distinct anchor points
at_anchors = int(np.searchsorted(n_distinct, budget, side="right"))  # rounds within the latter
for what, t in (("pieces", budget), ("distinct anchor points", at_anchors)):
    print(f"at most {budget} {what} ({t} rounds): test error {100 * test_errors[t - 1]:.2f}%, "
          f"{100 * (test_errors[t - 1] - svc_error):+.2f} points from the SVC")

# %%
# The full run's record
#
# A full run saves its curve and numbers in ``results/fig7_anchors.json``
# beside this example, with its command and commit; quick mode draws them
# beside its own curve.
if FULL and alpha_env is None:
    save_full_run(RECORD, {
        "n_train": len(Z_train), "n_test": len(Z_test), "n_anchors": n_anchors,
        "svc": {"gamma_times_scale": gamma, "C": C, "test_error": svc_error,
                "n_support_vectors": n_sv, "fit_seconds": svc_fit_time},
        "alphas": alphas, "chosen_alpha": best_alpha,
        "held_out_error": {f"{a:g}": e for a, e in sb_val.items()},
        "test_error": test_errors, "n_distinct_anchor_points": n_distinct,
        "fit_seconds": sb_fit_time, "peak_memory_gb": peak_gb}, script=SCRIPT)
    print(f"saved {RECORD.name}")
full = None if FULL else load_full_run(RECORD)
if full is not None:
    r = full["results"]
    print(f"full run of {full['date']} (commit {full['commit'][:10]}, {full['cpus']} cores): "
          f"{r['n_train']} digits, {r['n_anchors']} anchors, alpha={r['chosen_alpha']:g}; "
          f"SVC {100 * r['svc']['test_error']:.2f}% ({r['svc']['n_support_vectors']} support "
          f"vectors); ShareBoost {100 * r['test_error'][249]:.2f}% at 250 pieces, fit "
          f"{r['fit_seconds']:.0f} s, peak {r['peak_memory_gb']:.1f} GB")

# %%
# Test error per round (Fig. 7)
#
# Linear axes up to twice the last error (at least 6%): the early rounds, far
# above, are cut off.
mode = "full run" if FULL else "quick mode"
fig, ax = plt.subplots(figsize=(6.4, 4.2))
ax.plot(rounds, 100 * test_errors,
        label=f"ShareBoost, {mode} ({len(Z_train)} digits, alpha={best_alpha:g})")
if at_anchors > budget:
    ax.axvline(at_anchors, color="C0", lw=0.8, ls=":",
               label=f"{n_distinct[at_anchors - 1]} distinct anchor points ({at_anchors} rounds)")
ax.axhline(100 * svc_error, color="k", ls="--",
           label=f"RBF SVC, {mode}, {n_sv} support vectors")
if full is not None:
    r = full["results"]
    ax.plot(np.arange(1, len(r["test_error"]) + 1), 100 * np.array(r["test_error"]),
            color="C3", ls="-.", label=f"ShareBoost, full run ({r['n_train']} digits, "
            f"{full['date']})")
    ax.axhline(100 * r["svc"]["test_error"], color="C3", ls=":",
               label=f"RBF SVC, full run, {r['svc']['n_support_vectors']} support vectors")
ax.set_ylim(0, max(6.0, 200 * test_errors[-1]))
ax.set_xlim(0, max(n_rounds, 0 if full is None else len(full["results"]["test_error"])))
ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
ax.set_xlabel("rounds (selected anchor points with their radius)")
ax.set_ylabel("test error")
ax.set_title("MNIST, PCA-50" + ("" if FULL else " (quick mode)"))
ax.grid(True, alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
