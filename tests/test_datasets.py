"""Loaders: shapes and class counts from MANIFEST.md, checksums, errors, no network."""

import gzip
import io
import re
import shutil
import sys
import tarfile

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
                                    datasets.load_satimage, datasets.load_letter,
                                    datasets.load_chars74k])
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
        path.mkdir(parents=True, exist_ok=True)  # as pooch does
        (path / fname).write_bytes(_CONTENT)
        return str(path / fname)

    monkeypatch.setattr(pooch, "retrieve", fake_retrieve)
    entry = _entry()
    out = _base.fetch_file(entry, data_home=tmp_path)
    assert out == tmp_path / entry.path and out.read_bytes() == _CONTENT
    assert calls == [(entry.url, f"sha256:{entry.sha256}")]
    # a real entry passes its own URL and sha256 (the fake file then fails it)
    mnist = _loaders.MNIST_FILES["test", "labels"]
    with pytest.raises(ValueError, match="failed its checksum"):
        _base.fetch_file(mnist, data_home=tmp_path)
    assert calls[-1] == (mnist.url, f"sha256:{mnist.sha256}")
    assert not (tmp_path / mnist.path).exists()


def test_bad_idx_content_is_a_clear_error(tmp_path):
    path = tmp_path / "x.gz"
    path.write_bytes(gzip.compress(b"\x00\x00\x08\x01\x00\x00\x00\x05abc"))
    with pytest.raises(ValueError, match="header says"):
        _loaders._read_idx(path, 2049)
    with pytest.raises(ValueError, match="magic number"):
        _loaders._read_idx(path, 2051)


CHARS74K = "chars74k/chars74k-EnglishFnt-28x28-34class.tar.gz"


def _png_bytes(array, mode=None):
    from PIL import Image

    image = Image.fromarray(array)
    out = io.BytesIO()
    (image.convert(mode) if mode else image).save(out, format="PNG")
    return out.getvalue()


def _write_tar(path, members):
    """A tar.gz with the Chars74K layout: ``members`` is [(name, bytes)]."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "w:gz") as archive:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


@pytest.fixture
def chars74k_home():
    pytest.importorskip("PIL")
    return require_data(CHARS74K)


def test_chars74k(chars74k_home):
    bunch = datasets.load_chars74k()
    assert bunch.data.shape == (34544, 784) and bunch.data.dtype == np.uint8
    assert bunch.images.shape == (34544, 28, 28) and bunch.images.base is bunch.data
    assert bunch.target.dtype == np.int64 and bunch.subset == "all"
    np.testing.assert_array_equal(np.bincount(bunch.target), [1016] * 34)
    assert bunch.target.tolist() == sorted(bunch.target.tolist())  # sorted by file name
    assert "".join(bunch.target_names) == "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"
    assert bunch.target_names.dtype.kind == "U" and bunch.DESCR
    assert bunch.data.min() == 0 and bunch.data.max() == 255
    # each call returns fresh, writable arrays (the cache is not exposed)
    bunch.data[:] = 0
    X, y = datasets.load_chars74k(return_X_y=True)
    assert X.flags.writeable and X.max() == 255 and y.shape == (34544,)


def test_chars74k_split(chars74k_home):
    X, y = datasets.load_chars74k(return_X_y=True)
    train = datasets.load_chars74k(subset="train")
    test = datasets.load_chars74k(subset="test")
    assert train.data.shape == (25908, 784) and test.data.shape == (8636, 784)
    # stratified: 762 + 254 of each class
    np.testing.assert_array_equal(np.bincount(train.target), [762] * 34)
    np.testing.assert_array_equal(np.bincount(test.target), [254] * 34)

    # disjoint and covering: match rows of train and test back to "all" by a
    # key that is unique per sample (pixels are not: some fonts coincide)
    def keys(Xp, yp):
        return {(int(t), row.tobytes()) for t, row in zip(yp, Xp)}

    def counts(Xp, yp):
        from collections import Counter
        return Counter(zip(yp.tolist(), map(bytes, Xp)))

    assert counts(train.data, train.target) + counts(test.data, test.target) == counts(X, y)
    assert keys(train.data, train.target) | keys(test.data, test.target) == keys(X, y)

    # the same random_state gives the same split; another seed another one
    X2, y2 = datasets.load_chars74k(subset="test", return_X_y=True)
    np.testing.assert_array_equal(X2, test.data)
    np.testing.assert_array_equal(y2, test.target)
    X3, _ = datasets.load_chars74k(subset="test", random_state=1, return_X_y=True)
    assert not np.array_equal(X3, test.data)
    Xs, _ = datasets.load_chars74k(subset="test", test_size=0.5, return_X_y=True)
    assert Xs.shape == (17272, 784)


def test_chars74k_split_indices_are_disjoint(chars74k_home, monkeypatch):
    """Exact disjointness by index: make every image unique, then match rows."""
    X, y = _loaders._decode_chars74k(str((chars74k_home / CHARS74K).resolve()))
    unique = np.array(X)
    unique[:, :2] = np.stack([np.arange(len(y)) // 256, np.arange(len(y)) % 256], axis=1)
    monkeypatch.setattr(_loaders, "_decode_chars74k", lambda path: (unique, y))
    index = {row.tobytes(): i for i, row in enumerate(unique)}
    train = [index[row.tobytes()] for row in
             datasets.load_chars74k(subset="train", return_X_y=True)[0]]
    test = [index[row.tobytes()] for row in
            datasets.load_chars74k(subset="test", return_X_y=True)[0]]
    assert not set(train) & set(test)
    assert sorted(train + test) == list(range(34544))
    assert train == sorted(train) and test == sorted(test)


def test_chars74k_errors(tmp_path):
    with pytest.raises(ValueError, match="subset must be one of"):
        datasets.load_chars74k(subset="validation")
    for bad in [0, 1, 0.0, 1.0, -0.1, 1.5, True, "0.25", None, float("nan")]:
        with pytest.raises(ValueError, match="test_size must be"):
            datasets.load_chars74k(subset="train", test_size=bad, data_home=tmp_path)
    with pytest.raises(FileNotFoundError) as info:
        datasets.load_chars74k(data_home=tmp_path)
    msg = str(info.value)
    assert CHARS74K in msg and str(tmp_path) in msg and "MCSPARSE_DATA" in msg
    assert _loaders.CHARS74K_FILE.sha256 in msg


def test_chars74k_corrupted_copy_is_refused(tmp_path):
    """A tar with the right layout but other content fails the checksum."""
    pytest.importorskip("PIL")
    good = _png_bytes(np.full((28, 28), 200, dtype=np.uint8))
    _write_tar(tmp_path / CHARS74K,
               [("English/Fnt/Sample001/img001-00001.png", good[:-10])])
    with pytest.raises(ValueError, match="corrupted.*sha256.*expected b78cc19c"):
        datasets.load_chars74k(data_home=tmp_path)


def test_chars74k_truncated_real_file_is_refused(chars74k_home, tmp_path):
    path = tmp_path / CHARS74K
    path.parent.mkdir()
    path.write_bytes((chars74k_home / CHARS74K).read_bytes()[:-100])
    with pytest.raises(ValueError, match="corrupted.*sha256"):
        datasets.load_chars74k(data_home=tmp_path)


def test_chars74k_decoder_checks_every_image(tmp_path):
    """Past the checksum, the decoder still refuses a wrong image or member."""
    pytest.importorskip("PIL")
    decode = _loaders._decode_chars74k.__wrapped__
    ok = np.arange(28 * 28, dtype=np.uint8).reshape(28, 28)
    name = "English/Fnt/Sample036/img036-00001.png"
    # members out of order in the archive come back sorted by name
    path = _write_tar(tmp_path / "ok.tar.gz", [
        (name, _png_bytes(ok)),
        ("English/Fnt/Sample001/img001-00002.png", _png_bytes(255 - ok)),
        ("English/Fnt/Sample001/img001-00001.png", _png_bytes(ok)),
    ])
    X, y = decode(str(path))
    assert X.dtype == np.uint8 and X.shape == (3, 784)
    np.testing.assert_array_equal(y, [0, 0, 33])
    np.testing.assert_array_equal(X[1], (255 - ok).ravel())
    bad = [
        (_png_bytes(ok[:27]), "size 28x27"),
        (_png_bytes(ok, "RGB"), "mode 'RGB'"),
        (_png_bytes(ok.astype(np.uint16) * 200), "mode 'I;16'"),
        (_png_bytes(ok, "1"), "mode '1'"),
        (_png_bytes(ok)[:-30], "not a valid image"),  # truncated
        (b"not a png", "not a valid image"),
    ]
    for data, what in bad:
        path = _write_tar(tmp_path / "bad.tar.gz", [(name, data)])
        with pytest.raises(ValueError, match=f"{name}.*{re.escape(what)}"):
            decode(str(path))
    for member in ["English/Fnt/Sample019/img019-00001.png",
                   "English/Hnd/Sample001/img001-00001.png", "README"]:
        path = _write_tar(tmp_path / "bad.tar.gz", [(member, _png_bytes(ok))])
        with pytest.raises(ValueError, match="unexpected member"):
            decode(str(path))


def test_chars74k_without_pillow(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "PIL", None)
    with pytest.raises(ImportError, match="pip install pillow"):
        _loaders._decode_chars74k.__wrapped__(str(tmp_path / "x.tar.gz"))


# --- Cache integrity (issue 7, item 4): no network, no real data needed ----------

_CONTENT = bytes(range(256)) * 64  # 16 KiB of known bytes


def _entry(url="https://example.invalid/mcsparse/blob.bin"):
    import hashlib

    return _base.DataFile("somedata/blob.bin", hashlib.sha256(_CONTENT).hexdigest(),
                          "the test itself", url)


def _cached_files(home):
    """Every file left under ``home`` (temporary or final), as relative paths."""
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if not p.is_dir())


def _fake_downloader(monkeypatch, write):
    """Run the real ``pooch.retrieve`` with a downloader that calls ``write(path)``.

    pooch streams into a temporary file in the cache folder, checks the hash and
    only then renames; this exercises that path (and ours) without a network.
    """
    import pooch.core

    calls = []

    def choose(url, progressbar=False):
        def download(url, output_file, pooch):
            calls.append(url)
            write(output_file)
        return download

    monkeypatch.setattr(pooch.core, "choose_downloader", choose)
    return calls


def test_good_download_is_renamed_into_place(monkeypatch, tmp_path):
    entry = _entry()
    calls = _fake_downloader(monkeypatch, lambda p: open(p, "wb").write(_CONTENT))
    out = _base.fetch_file(entry, data_home=tmp_path)
    assert out == tmp_path / entry.path and out.read_bytes() == _CONTENT
    assert _cached_files(tmp_path) == [entry.path] and calls == [entry.url]
    # present and verified: no second download
    assert _base.fetch_file(entry, data_home=tmp_path) == out and len(calls) == 1


@pytest.mark.parametrize("payload", [
    _CONTENT[:-1000],                                     # truncated
    _CONTENT[:100] + bytes([_CONTENT[100] ^ 1]) + _CONTENT[101:],  # one flipped bit
    b"",                                                  # empty
    _CONTENT + b"\n",                                     # trailing garbage
], ids=["truncated", "flipped", "empty", "extra"])
def test_download_with_wrong_checksum_is_not_kept(monkeypatch, tmp_path, payload):
    entry = _entry()
    _fake_downloader(monkeypatch, lambda p: open(p, "wb").write(payload))
    home = tmp_path / "home"
    with pytest.raises(ValueError, match=r"(?s)blob\.bin.*" + entry.sha256) as info:
        _base.fetch_file(entry, data_home=home)
    assert entry.url in str(info.value)
    assert not home.exists() or _cached_files(home) == []
    # and a later good download succeeds
    _fake_downloader(monkeypatch, lambda p: open(p, "wb").write(_CONTENT))
    assert _base.fetch_file(entry, data_home=home).read_bytes() == _CONTENT


def test_interrupted_download_leaves_nothing(monkeypatch, tmp_path):
    """The connection drops half way: no partial file, no empty folder."""
    import requests

    def partial(path):
        with open(path, "wb") as f:
            f.write(_CONTENT[:5000])
        raise requests.exceptions.ChunkedEncodingError("connection reset")

    entry = _entry()
    _fake_downloader(monkeypatch, partial)
    home = tmp_path / "home"
    with pytest.raises(OSError, match=r"Could not download .*blob\.bin.*connection reset"):
        _base.fetch_file(entry, data_home=home)
    assert not home.exists()
    # an existing data home with other files keeps them, and only them
    (home / "other").mkdir(parents=True)
    (home / "other" / "keep.txt").write_text("x")
    with pytest.raises(OSError, match="Could not download"):
        _base.fetch_file(entry, data_home=home)
    assert _cached_files(home) == ["other/keep.txt"]
    assert not (home / "somedata").exists()


def test_download_interrupted_by_the_user_leaves_no_file(monkeypatch, tmp_path):
    """Ctrl-C during the download: re-raised as is, nothing kept."""
    def partial(path):
        open(path, "wb").write(_CONTENT[:5000])
        raise KeyboardInterrupt

    _fake_downloader(monkeypatch, partial)
    with pytest.raises(KeyboardInterrupt):
        _base.fetch_file(_entry(), data_home=tmp_path / "home")
    assert not (tmp_path / "home").exists()


def test_retrieve_that_leaves_a_partial_file_is_cleaned(monkeypatch, tmp_path):
    """Whatever the download function does, a failed fetch keeps no file at the path."""
    import pooch

    entry = _entry()

    def bad_retrieve(url, known_hash, fname, path, progressbar):
        path.mkdir(parents=True, exist_ok=True)  # as pooch does
        (path / fname).write_bytes(_CONTENT[:10])
        raise OSError("disk full")

    monkeypatch.setattr(pooch, "retrieve", bad_retrieve)
    with pytest.raises(OSError, match=r"blob\.bin.*disk full"):
        _base.fetch_file(entry, data_home=tmp_path)
    assert _cached_files(tmp_path) == [] and not (tmp_path / "somedata").exists()


def test_retrieve_returning_a_wrong_file_is_refused(monkeypatch, tmp_path):
    """The file is verified after the download too, and removed when wrong."""
    import pooch

    entry = _entry()

    def sloppy_retrieve(url, known_hash, fname, path, progressbar):
        path.mkdir(parents=True, exist_ok=True)  # as pooch does
        (path / fname).write_bytes(_CONTENT[:-1])
        return str(path / fname)

    monkeypatch.setattr(pooch, "retrieve", sloppy_retrieve)
    with pytest.raises(ValueError, match=r"blob\.bin.*sha256"):
        _base.fetch_file(entry, data_home=tmp_path)
    assert _cached_files(tmp_path) == []


@pytest.mark.parametrize("payload", [
    _CONTENT[:-1],
    _CONTENT[:5000] + bytes([_CONTENT[5000] ^ 0x80]) + _CONTENT[5001:],
    b"",
], ids=["truncated", "flipped", "empty"])
@pytest.mark.parametrize("download", [True, False])
def test_bad_file_in_data_home_is_refused_not_redownloaded(monkeypatch, tmp_path,
                                                          payload, download):
    """A bad local copy is an error naming the file; it is neither used nor replaced."""
    calls = _fake_downloader(monkeypatch, lambda p: open(p, "wb").write(_CONTENT))
    entry = _entry()
    path = tmp_path / entry.path
    path.parent.mkdir()
    path.write_bytes(payload)
    with pytest.raises(ValueError, match=r"blob\.bin is corrupted.*expected " + entry.sha256):
        _base.fetch_file(entry, data_home=tmp_path, download_if_missing=download)
    assert path.read_bytes() == payload and calls == []


@pytest.mark.parametrize("download", [True, False])
def test_directory_where_the_file_should_be(monkeypatch, tmp_path, download):
    calls = _fake_downloader(monkeypatch, lambda p: open(p, "wb").write(_CONTENT))
    entry = _entry()
    (tmp_path / entry.path).mkdir(parents=True)
    with pytest.raises(OSError, match=r"blob\.bin.*not a regular file"):
        _base.fetch_file(entry, data_home=tmp_path, download_if_missing=download)
    assert (tmp_path / entry.path).is_dir() and calls == []


def test_real_loader_refuses_flipped_and_empty_files(tmp_path):
    """Through a public loader: a one-byte change or an empty file fails the checksum."""
    path = tmp_path / _loaders.LETTER_FILE.path
    path.parent.mkdir()
    for payload in [b"", b"T,2,8,3,5,1,8,13,0,6,6,10,8,0,8,0,8\n"]:
        path.write_bytes(payload)
        with pytest.raises(ValueError, match="letter-recognition.data.*corrupted|"
                                             "corrupted.*letter-recognition.data"):
            datasets.load_letter(data_home=tmp_path)


def test_real_loader_refuses_one_flipped_byte(tmp_path):
    home = require_data(_loaders.LETTER_FILE.path)
    data = bytearray((home / _loaders.LETTER_FILE.path).read_bytes())
    data[len(data) // 2] ^= 0x01
    path = tmp_path / _loaders.LETTER_FILE.path
    path.parent.mkdir()
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="corrupted.*sha256"):
        datasets.load_letter(data_home=tmp_path)
    with pytest.raises(ValueError, match="corrupted.*sha256"):
        datasets.load_letter(subset="test", data_home=tmp_path)


def _small_problem():
    """60 samples, 5 features, 3 classes from two signs."""
    rng = np.random.RandomState(0)
    X = rng.randn(60, 5)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    return X, y


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
