"""mcsparse beside the libraries a researcher would pick instead, in the same classes.

- ShareBoost's path against abess's best-subset multinomial regression with
  a support shared by all classes (pendigits pairwise products, and MNIST
  pixels on 10,000 training digits);
- the mixed-norm (group-lasso) path against adelie's grouped multinomial
  lasso path (pendigits pairwise products);
- the two engines of the mixed-norm path on the same objective, eq. (5):
  FISTA against adelie (``solver="adelie"``), on pendigits and satimage
  pairwise products;
- ShareBoost's shared stumps against XGBoost's depth-1 boosting (LightGBM is
  in :class:`~benchmarks.stumps.StumpsShareBoostVsLightGBM`).

Each class times every implementation with ``time_fit``, tracks its test
error at fixed numbers of features (``track_test_error_*``) and gives the
time ratio, ours over the anchor's, best of 3 interleaved fits in one
process (``track_time_ratio``). The anchors come with the ``compare`` extra
(``pip install ".[compare]"``); without them the anchor's benchmarks are
skipped. ``python -m benchmarks.compare`` (from ``asv_benchmarks``) prints
every class's numbers once, as the comparison page quotes them.
"""

import sys
import time
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from mcsparse import ShareBoostClassifier, mixed_norm_classifier_path

from .common import Benchmark, pendigits_products, quick

SIZES = (5, 10, 20, 40)


def _products_data():
    """Pendigits products (a 2000 / 1000 sample slice in quick mode)."""
    X, y, Xt, yt = pendigits_products()
    return (X[:2000], y[:2000], Xt[:1000], yt[:1000]) if quick() else (X, y, Xt, yt)


def _installed(module):
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _first_with(n_active, errors, target):
    """Error of the first model with at least ``target`` features (NaN if none)."""
    n_active = np.asarray(n_active)
    hit = np.flatnonzero(n_active >= target)
    return float(errors[hit[0]]) if hit.size else float("nan")


def _path_curve(models, Xt, yt):
    """Active features and test errors of a path's classifiers."""
    return [int(m.support_.sum()) for m in models], [1 - m.score(Xt, yt) for m in models]


class _Comparison(Benchmark):
    """Shared machinery. ``params`` is ``[[ours, anchor]]``; ``anchor_module``
    the anchor's import name; ``make_fitters`` maps each implementation to a
    function that fits it and returns ``(n_active, test_errors)`` along its
    path. The anchor's benchmarks are skipped when it is not installed."""

    param_names = ["implementation"]
    number = 1
    repeat = 3

    def setup(self, implementation):
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours, anchor = self.params[0]
        if implementation == anchor and not _installed(self.anchor_module):
            raise NotImplementedError(f"{self.anchor_module} is not installed "
                                      "(pip install '.[compare]')")
        self.data = self.load()
        self.fitters = self.make_fitters()

    def time_fit(self, implementation):
        self.fitters[implementation]()

    def _error_at(self, implementation, target):
        n_active, errors = self.fitters[implementation]()
        return _first_with(n_active, errors, target)

    def track_test_error_10(self, implementation):
        return self._error_at(implementation, 10)

    def track_test_error_20(self, implementation):
        return self._error_at(implementation, 20)

    def track_time_ratio(self, implementation):
        ours, anchor = self.params[0]
        if implementation != ours or not _installed(self.anchor_module):
            raise NotImplementedError(f"the ratio is {ours}'s time over {anchor}'s")
        best = {}
        for _ in range(3):
            for name in (ours, anchor):
                start = time.perf_counter()
                self.fitters[name]()
                best[name] = min(best.get(name, np.inf), time.perf_counter() - start)
        return best[ours] / best[anchor]

    track_test_error_10.unit = track_test_error_20.unit = "error rate"
    track_time_ratio.unit = "ratio"


class SharedSupportShareBoostVsAbess(_Comparison):
    """Pendigits products (120 features, 10 classes): a support shared by all classes.

    ShareBoost (intercept, ``alpha=1e-5``) gives the whole path of 40
    features in one fit; abess's ``MultinomialRegression`` (best subset of
    rows of ``W`` by splicing) is fitted once per support size, 5, 10, 20
    and 40. ``time_fit`` is the whole path for ShareBoost and the four fits
    for abess; the test errors are at 5, 10, 20 and 40 features.
    """

    params = (["shareboost", "abess"],)
    anchor_module = "abess"
    sizes = SIZES

    def load(self):
        return _products_data()

    def make_fitters(self):
        X, y, Xt, yt = self.data
        sizes = self.sizes[:2] if quick() else self.sizes

        def shareboost():
            model = ShareBoostClassifier(n_features_to_select=max(sizes), alpha=1e-5)
            model.fit(X, y)
            errors = [np.mean(p != yt) for p in model.staged_predict(Xt)]
            return np.arange(1, len(errors) + 1), errors

        def abess():
            from abess import MultinomialRegression

            n_active, errors = [], []
            for s in sizes:
                model = MultinomialRegression(support_size=[s]).fit(X, y)
                n_active.append(int(np.count_nonzero(np.abs(model.coef_).sum(axis=1))))
                errors.append(np.mean(model.predict(Xt) != yt))
            return n_active, errors

        return {"shareboost": shareboost, "abess": abess}

    def track_test_error_40(self, implementation):
        return self._error_at(implementation, 40)

    track_test_error_40.unit = "error rate"


class SharedSupportShareBoostVsAbessMNIST(SharedSupportShareBoostVsAbess):
    """MNIST raw pixels / 255 (those that vary on the training digits), 10,000 of them.

    The same two methods as on pendigits products, at 10, 20 and 40 pixels
    (ShareBoost's whole path of 40 rounds against three abess fits), tested
    on the 10,000 test digits. Quick mode: 2000 training and 1000 test
    digits, 10 and 20 pixels.
    """

    sizes = (10, 20, 40)

    def load(self):
        from mcsparse.datasets import load_mnist

        n, n_test = (2000, 1000) if quick() else (10_000, 10_000)
        X, y = load_mnist(subset="train", return_X_y=True)
        Xt, yt = load_mnist(subset="test", return_X_y=True)
        X, Xt = X[:n] / 255.0, Xt[:n_test] / 255.0
        varies = X.std(axis=0) > 0  # abess standardises columns: constant ones are dropped
        return X[:, varies], y[:n], Xt[:, varies], yt[:n_test]


class GroupLassoMixedNormVsAdelie(_Comparison):
    """Pendigits products: the l1/l2 (group-lasso) multinomial path, 50 penalties.

    Ours: :func:`~mcsparse.mixed_norm_classifier_path` (FISTA with the strong
    rule, the margin loss of ShareBoost's eq. 3, down to 1% of
    ``lambda_max``). adelie: ``grpnet`` with its multinomial GLM (the
    plain soft-max loss; each feature's coefficients across classes form a
    group; its own grid of 50 penalties, which it may stop early once the
    deviance no longer improves). The losses differ; the comparison is at
    equal numbers of active features, in test error and time.
    """

    params = (["mcsparse", "adelie"],)
    anchor_module = "adelie"

    def load(self):
        return _products_data()

    def make_fitters(self):
        X, y, Xt, yt = self.data
        n_alphas = 10 if quick() else 50

        def ours():
            return _path_curve(mixed_norm_classifier_path(X, y, n_alphas=n_alphas), Xt, yt)

        def adelie():
            import adelie as ad

            classes, y_idx = np.unique(y, return_inverse=True)
            state = ad.grpnet(X=np.asfortranarray(X), glm=ad.glm.multinomial(
                np.eye(classes.size)[y_idx]), lmda_path_size=n_alphas, progress_bar=False)
            n_active, errors = [], []
            for i in range(state.betas.shape[0]):
                W = state.betas[i].toarray().reshape(X.shape[1], classes.size)
                scores = Xt @ W + state.intercepts[i]
                n_active.append(int(np.count_nonzero(np.abs(W).sum(axis=1))))
                errors.append(np.mean(classes[scores.argmax(axis=1)] != yt))
            return n_active, errors

        return {"mcsparse": ours, "adelie": adelie}

    def track_test_error_40(self, implementation):
        return self._error_at(implementation, 40)

    track_test_error_40.unit = "error rate"


class MixedNormEnginesPendigits(GroupLassoMixedNormVsAdelie):
    """Pendigits products: the l1/l2 path of eq. (5), FISTA against adelie as its engine.

    Both are :func:`~mcsparse.mixed_norm_classifier_path` on the same 50
    penalties (the margin loss of ShareBoost's eq. 3, down to 1% of
    ``lambda_max``), with ``solver="fista"`` (to ``tol=1e-4``) and
    ``solver="adelie"`` (adelie's defaults; its solutions are less precise,
    see ``track_kkt_violation``). This class decided the engine of the Fig. 3
    examples: the time ratio at equal test errors.
    """

    params = (["fista", "adelie"],)

    def make_fitters(self):
        X, y, Xt, yt = self.data
        n_alphas = 10 if quick() else 50

        def fitter(solver):
            def fit():
                models = mixed_norm_classifier_path(X, y, n_alphas=n_alphas, solver=solver)
                self.kkt = max(m.kkt_violation_ for m in models)
                return _path_curve(models, Xt, yt)
            return fit

        return {"fista": fitter("fista"), "adelie": fitter("adelie")}

    def track_kkt_violation(self, implementation):
        """Largest KKT violation along the path, relative to the penalty."""
        self.fitters[implementation]()
        return self.kkt

    track_kkt_violation.unit = "relative violation"


class MixedNormEnginesSatimage(MixedNormEnginesPendigits):
    """Satimage products (630 + 36 columns, 6 classes): the same two engines.

    Ill-conditioned products, where FISTA needs thousands of iterations per
    penalty; ``max_iter=1000`` as in the estimators' default. Quick mode: 2000
    training and 1000 test samples drawn at random.
    """

    def load(self):
        from mcsparse.datasets import load_satimage
        from mcsparse.features import PairwiseProducts

        X, y = load_satimage(return_X_y=True)
        Xt, yt = load_satimage(subset="test", return_X_y=True)
        products = PairwiseProducts().fit(X / 255)
        X, Xt = products.transform(X / 255), products.transform(Xt / 255)
        if not quick():
            return X, y, Xt, yt
        # random slices: the training file is grouped by class
        rng = np.random.default_rng(0)
        keep, keep_test = rng.choice(len(y), 2000, replace=False), rng.choice(len(yt), 1000,
                                                                              replace=False)
        return X[keep], y[keep], Xt[keep_test], yt[keep_test]


class StumpsShareBoostVsXGBoost(_Comparison):
    """Pendigits, raw features: 100 shared stumps against XGBoost's depth-1 trees.

    XGBoost with ``multi_strategy="multi_output_tree"`` grows one tree for
    all classes per round (hist method, one thread), so a depth-1 tree there
    is a stump shared by all classes, as in ShareBoost; 100 rounds each.
    The test errors are at 10, 20 and 100 stumps (10 and 20 in quick mode,
    which runs 20 rounds).
    """

    params = (["shareboost", "xgboost"],)
    anchor_module = "xgboost"

    def load(self):
        from mcsparse.datasets import load_pendigits

        X, y = load_pendigits(return_X_y=True)
        Xt, yt = load_pendigits(subset="test", return_X_y=True)
        return X, y, Xt, yt

    def make_fitters(self):
        X, y, Xt, yt = self.data
        rounds = 20 if quick() else 100

        def shareboost():
            model = ShareBoostClassifier(n_features_to_select=rounds, features="stumps",
                                         alpha=1e-4).fit(X, y)
            errors = [np.mean(p != yt) for p in model.staged_predict(Xt)]
            return np.arange(1, len(errors) + 1), errors

        def xgboost():
            from xgboost import XGBClassifier

            model = XGBClassifier(n_estimators=rounds, max_depth=1, learning_rate=0.3,
                                  tree_method="hist", multi_strategy="multi_output_tree",
                                  n_jobs=1).fit(X, y)
            errors = [np.mean(model.predict(Xt, iteration_range=(0, t)) != yt)
                      for t in range(1, rounds + 1)]
            return np.arange(1, rounds + 1), errors

        return {"shareboost": shareboost, "xgboost": xgboost}

    def track_test_error_100(self, implementation):
        return self._error_at(implementation, 100)

    track_test_error_100.unit = "error rate"


CLASSES = (SharedSupportShareBoostVsAbess, SharedSupportShareBoostVsAbessMNIST,
           GroupLassoMixedNormVsAdelie, MixedNormEnginesPendigits, MixedNormEnginesSatimage,
           StumpsShareBoostVsXGBoost)


def main(names=()):
    """Print each class's ratio and test errors once (the comparison page's numbers).

    ``names``: the classes to run (all when empty), e.g. from the command line,
    ``python -m benchmarks.compare MixedNormEnginesSatimage``.
    """
    unknown = set(names) - {cls.__name__ for cls in CLASSES}
    if unknown:
        raise SystemExit(f"unknown classes {sorted(unknown)}; "
                         f"choose from {[cls.__name__ for cls in CLASSES]}")
    from mcsparse.utils._show_versions import format_blas

    print(f"BLAS: {format_blas()}", flush=True)  # a slow kernel shows in the times
    for cls in [c for c in CLASSES if not names or c.__name__ in names]:
        ours, anchor = cls.params[0]
        bench = cls()
        bench.setup(ours)
        if not _installed(cls.anchor_module):
            print(f"{cls.__name__}: {anchor} is not installed")
            continue
        ratio = bench.track_time_ratio(ours)
        print(f"{cls.__name__}: time ratio {ours}/{anchor} {ratio:.2f} "
              f"(best of 3 interleaved fits)", flush=True)
        for name in (ours, anchor):
            start = time.perf_counter()
            n_active, errors = bench.fitters[name]()
            spent = time.perf_counter() - start
            targets = [t for t in (5, 10, 20, 40, 100) if any(np.asarray(n_active) >= t)]
            cells = ", ".join(f"{t}: {100 * _first_with(n_active, errors, t):.2f}%"
                              for t in targets)
            kkt = f"; largest KKT violation {bench.kkt:.2g}" if hasattr(bench, "kkt") else ""
            print(f"  {name:10s} {spent:6.1f} s; test error at features {cells}{kkt}",
                  flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
