"""Hostile input to the candidate families, the baselines and load_chars74k."""

import io
import tarfile

import numpy as np
import pytest

from mcsparse.estimators import (
    MixedNormClassifier,
    ShareBoostClassifier,
    mixed_norm_classifier_path,
)
from mcsparse.features import CandidateFeatures, DecisionStumps, RawFeatures


def _data():
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


# --- MixedNorm: huge values hung in the FISTA backtracking / gave alpha=inf --


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mixed_norm_huge_values_raise_instead_of_hanging():
    X, y = _data()
    with pytest.raises(ValueError, match="too large"):
        MixedNormClassifier(alpha=0.01, max_iter=5).fit(X * 1e150, y)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_mixed_norm_path_huge_values_no_nonfinite_alphas():
    X, y = _data()
    with pytest.raises(ValueError, match="too large"):
        mixed_norm_classifier_path(X * 1e300, y, n_alphas=3)


def test_mixed_norm_path_nan_alpha_min_ratio():
    X, y = _data()
    with pytest.raises(ValueError, match="alpha_min_ratio"):
        mixed_norm_classifier_path(X, y, n_alphas=3, alpha_min_ratio=np.nan)


# --- families: excluded ids were wrapped, masked or truncated silently -------


@pytest.mark.parametrize("family", [RawFeatures, DecisionStumps])
@pytest.mark.parametrize("excluded, error", [
    (np.array([-1]), ValueError),
    (np.array([10**6]), ValueError),
    (np.array([0.5]), TypeError),
    (np.array([True, False, False, False, False]), TypeError),
])
def test_best_candidate_rejects_bad_excluded(family, excluded, error):
    X, _ = _data()
    R = np.random.RandomState(1).randn(60, 3)
    f = family().fit(X)
    with pytest.raises(error, match="excluded"):
        f.best_candidate(R, excluded)


def test_best_candidate_accepts_unsorted_list_and_empty():
    X, _ = _data()
    R = np.random.RandomState(1).randn(60, 3)
    f = RawFeatures().fit(X)
    best, _ = f.best_candidate(R, [])
    other, _ = f.best_candidate(R, [best, best])
    assert other != best


# --- ShareBoost with a custom family that breaks the protocol ----------------


class _Squares(CandidateFeatures):
    def fit(self, X, y=None):
        self._X_fit = np.asarray(X, dtype=float) ** 2
        self.n_features_in_ = self.n_candidates_ = X.shape[1]
        return self

    def best_candidate(self, residual, excluded):
        s = np.abs(self._X_fit.T @ residual).sum(axis=1)
        s[excluded] = -np.inf
        j = int(np.argmax(s))
        return j, float(s[j])

    def training_columns(self, ids):
        return self._X_fit[:, ids]

    def end_scan(self, ids):
        self.support_ = np.zeros(self.n_features_in_, dtype=bool)
        self.support_[ids] = True
        self._X_fit = None
        return self

    def transform_candidates(self, X, ids):
        return np.asarray(X, dtype=float)[:, ids] ** 2


class _NegativeId(_Squares):
    def best_candidate(self, residual, excluded):
        return -1, 1.0


class _RepeatedId(_Squares):
    def best_candidate(self, residual, excluded):
        return 0, 1.0


class _HugeId(_Squares):
    def best_candidate(self, residual, excluded):
        return 10**6, 1.0


class _NanColumns(_Squares):
    def training_columns(self, ids):
        return np.full((self._X_fit.shape[0], len(ids)), np.nan)


class _ShortColumns(_Squares):
    def training_columns(self, ids):
        return self._X_fit[:5, ids]


class _FitReturnsNone(_Squares):
    def fit(self, X, y=None):
        super().fit(X)


def test_custom_family_still_works():
    X, y = _data()
    clf = ShareBoostClassifier(n_features_to_select=2, features=_Squares()).fit(X, y)
    assert len(set(clf.selected_features_.tolist())) == 2


@pytest.mark.parametrize("family, error, match", [
    (_NegativeId, ValueError, "outside"),
    (_HugeId, ValueError, "outside"),
    (_RepeatedId, ValueError, "already selected"),
    (_NanColumns, ValueError, "NaN"),
    (_ShortColumns, ValueError, "shape"),
    (_FitReturnsNone, TypeError, "return self"),
])
def test_shareboost_rejects_protocol_violations(family, error, match):
    X, y = _data()
    with pytest.raises(error, match=match):
        ShareBoostClassifier(n_features_to_select=2, features=family()).fit(X, y)


# --- ShareBoost validation_fraction: NaN and impossible splits ---------------


@pytest.mark.parametrize("fraction", [np.nan, 0.001, 0.99])
def test_validation_fraction_errors_name_the_parameter(fraction):
    X, y = _data()
    with pytest.raises(ValueError, match="validation_fraction"):
        ShareBoostClassifier(n_features_to_select=2,
                             validation_fraction=fraction).fit(X, y)


# --- Chars74K decoder: unreadable archives raised tarfile.ReadError ----------


@pytest.mark.parametrize("payload", [b"", b"junk" * 100, "truncated"])
def test_decode_chars74k_unreadable_archive_is_value_error(tmp_path, payload):
    pytest.importorskip("PIL")
    from PIL import Image

    from mcsparse.datasets._loaders import _decode_chars74k

    if payload == "truncated":
        png = io.BytesIO()
        Image.fromarray(np.zeros((28, 28), np.uint8)).save(png, format="PNG")
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w:gz") as tf:
            for i in range(50):
                info = tarfile.TarInfo(f"English/Fnt/Sample001/img{i:03d}.png")
                data = png.getvalue() + bytes(np.random.RandomState(i).bytes(2000))
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
        payload = buf.getvalue()[: len(buf.getvalue()) // 2]
    path = tmp_path / "bad.tar.gz"
    path.write_bytes(payload)
    with pytest.raises(ValueError, match="tar.gz"):
        _decode_chars74k(str(path))
