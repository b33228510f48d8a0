"""Loaders: shapes and class counts from MANIFEST.md, checksums, errors, no network."""

import gzip
import shutil

import numpy as np
import pytest

from conftest import require_data
from mcsparse import datasets
from mcsparse.datasets import _base, _loaders


def test_pendigits_bundled():
    bunch = datasets.load_pendigits()
    assert bunch.data.shape == (7494, 16) and bunch.data.dtype == np.float64
    np.testing.assert_array_equal(np.bincount(bunch.target),
                                  [780, 779, 780, 719, 780, 720, 720, 778, 719, 719])
    X, y = datasets.load_pendigits(subset="test", return_X_y=True)
    np.testing.assert_array_equal(np.bincount(y), [363, 364, 364, 336, 364, 335, 336, 364, 336, 336])
    assert X.min() == 0 and X.max() == 100
    X_all, y_all = datasets.load_pendigits(subset="all", return_X_y=True)
    assert X_all.shape == (7494 + 3498, 16)
    np.testing.assert_array_equal(X_all[:7494], bunch.data)
    assert len(bunch.feature_names) == 16


@pytest.mark.parametrize("loader", [datasets.load_pendigits, datasets.load_mnist,
                                    datasets.load_satimage, datasets.load_letter])
def test_bad_subset(loader):
    with pytest.raises(ValueError, match="subset must be one of"):
        loader(subset="validation")


def test_mnist(mnist_home):
    bunch = datasets.load_mnist(subset="test")
    assert bunch.data.shape == (10000, 784) and bunch.data.dtype == np.uint8
    assert bunch.images.shape == (10000, 28, 28)
    np.testing.assert_array_equal(np.bincount(bunch.target),
                                  [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009])
    X, y = datasets.load_mnist(subset="train", return_X_y=True)
    assert X.shape == (60000, 784)
    np.testing.assert_array_equal(np.bincount(y), [5923, 6742, 5958, 6131, 5842, 5421,
                                                   5918, 6265, 5851, 5949])


def test_satimage():
    require_data("satimage/sat.trn", "satimage/sat.tst")
    X, y = datasets.load_satimage(return_X_y=True)
    assert X.shape == (4435, 36)
    np.testing.assert_array_equal(np.unique(y, return_counts=True)[1],
                                  [1072, 479, 961, 415, 470, 1038])
    Xt, yt = datasets.load_satimage(subset="test", return_X_y=True)
    assert Xt.shape == (2000, 36)
    np.testing.assert_array_equal(np.unique(y), [1, 2, 3, 4, 5, 7])


def test_letter():
    require_data("letter/letter-recognition.data")
    X, y = datasets.load_letter(return_X_y=True)
    Xt, yt = datasets.load_letter(subset="test", return_X_y=True)
    assert X.shape == (16000, 16) and Xt.shape == (4000, 16)
    assert len(np.unique(y)) == 26
    _, y_all = datasets.load_letter(subset="all", return_X_y=True)
    assert np.sum(y_all == "A") == 789 and np.sum(y_all == "Z") == 734


@pytest.mark.parametrize("name, shape, counts", [
    ("segment", (2310, 19), [330] * 7),
    ("vowel", (528, 10), [48] * 11),
    ("wine", (178, 13), [59, 71, 48]),
    ("satimage", (4435, 36), [1072, 479, 961, 415, 470, 1038]),
    ("dna", (2000, 180), [464, 485, 1051]),
])
def test_libsvm(name, shape, counts):
    _, files = _loaders.LIBSVM_FILES[name]
    require_data(*[f.path for f in files.values()])
    X, y = datasets.load_libsvm(name, return_X_y=True)
    assert X.shape == shape
    np.testing.assert_array_equal(np.unique(y, return_counts=True)[1], counts)


def test_libsvm_dna_test_and_errors():
    require_data("libsvm/dna.scale", "libsvm/dna.scale.t")
    X, y = datasets.load_libsvm("dna", subset="test", return_X_y=True)
    assert X.shape == (1186, 180)
    np.testing.assert_array_equal(np.unique(y, return_counts=True)[1], [303, 280, 603])
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.load_libsvm("isolet")
    with pytest.raises(ValueError, match=r"subset must be one of \['train'\]"):
        datasets.load_libsvm("wine", subset="test")


def test_failed_download_is_an_oserror_and_leaves_no_folder(monkeypatch, tmp_path):
    """Offline: the download error names the URL and the file; no empty folder stays."""
    import pooch

    def offline(*args, **kwargs):
        raise ConnectionError("network is unreachable")

    monkeypatch.setattr(pooch, "retrieve", offline)
    home = tmp_path / "home"
    with pytest.raises(OSError, match="Could not download https://.*sha256"):
        datasets.load_mnist(subset="test", data_home=home)
    assert not home.exists()


def test_bad_names():
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.load_libsvm(["wine"])
    with pytest.raises(ValueError, match="empty string"):
        datasets.get_data_home("")
    with pytest.raises(TypeError, match="data_home must be a path"):
        datasets.get_data_home(3)


def test_data_home_resolution(monkeypatch, tmp_path):
    monkeypatch.setenv("MCSPARSE_DATA", str(tmp_path / "env"))
    assert datasets.get_data_home() == tmp_path / "env"
    assert datasets.get_data_home(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv("MCSPARSE_DATA")
    assert datasets.get_data_home().name == "mcsparse_data"


def test_missing_file_names_file_checksum_and_source(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        datasets.load_mnist(data_home=tmp_path, download_if_missing=False)
    msg = str(info.value)
    assert "mnist/train-images-idx3-ubyte.gz" in msg
    assert _loaders.MNIST_FILES["train", "images"].sha256 in msg
    assert "https://" in msg
    with pytest.raises(FileNotFoundError, match="letter-recognition.data.*sha256"):
        datasets.load_letter(data_home=tmp_path)


def test_corrupted_file_is_refused(mnist_home, tmp_path):
    (tmp_path / "mnist").mkdir()
    for name in ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]:
        shutil.copy(mnist_home / "mnist" / name, tmp_path / "mnist" / name)
    assert datasets.load_mnist(subset="test", data_home=tmp_path).data.shape[0] == 10000
    # truncate the labels file: caught by the checksum, before parsing
    path = tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(ValueError, match="corrupted.*sha256.*expected f7ae60f9"):
        datasets.load_mnist(subset="test", data_home=tmp_path, download_if_missing=False)


def test_download_goes_through_pooch_with_the_checksum(monkeypatch, tmp_path):
    """No network: pooch.retrieve is replaced, and must be asked for the sha256."""
    import pooch

    calls = []

    def fake_retrieve(url, known_hash, fname, path, progressbar):
        calls.append((url, known_hash))
        return str(path / fname)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    entry = _loaders.MNIST_FILES["test", "labels"]
    out = _base.fetch_file(entry, data_home=tmp_path)
    assert out == tmp_path / entry.path
    assert calls == [(entry.url, f"sha256:{entry.sha256}")]


def test_bad_idx_content_is_a_clear_error(tmp_path):
    path = tmp_path / "x.gz"
    path.write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x05abc"))
    with pytest.raises(ValueError, match="header says"):
        _loaders._read_idx(path, 2049)
    with pytest.raises(ValueError, match="magic number"):
        _loaders._read_idx(path, 2051)
