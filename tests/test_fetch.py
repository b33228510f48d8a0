"""fetch() and ``python -m mcsparse.datasets``: pooch against a local HTTP server.

No test touches the network: the sources are replaced by tiny archives served
by ``http.server`` on 127.0.0.1, with their checksums.
"""

import functools
import hashlib
import http.server
import io
import tarfile
import threading
import zipfile

import numpy as np
import pytest

from conftest import require_data
from mcsparse import datasets
from mcsparse.datasets import _base, _fetch, _loaders
from mcsparse.datasets.__main__ import main


def _sha(data):
    return hashlib.sha256(data).hexdigest()


class _Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep the test output quiet
        pass


@pytest.fixture
def server(tmp_path):
    """``(folder, base_url, requests)``: files put in ``folder`` are served."""
    folder = tmp_path / "served"
    folder.mkdir()
    requests = []

    class Counting(_Handler):
        def do_GET(self):
            requests.append(self.path)
            super().do_GET()

    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Counting, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{httpd.server_address[1]}", requests
    httpd.shutdown()
    httpd.server_close()


def _zip(members):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


ROWS_CRLF = b"1,2,3\r\n4,5,6\r\n"  # the reference copy has CRLF line ends
TARGET = _base.DataFile("letter/tiny.data", _sha(ROWS_CRLF), "the test")


def _files_under(path):
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def _serve_zip(monkeypatch, server, members, sha=None):
    folder, base, _ = server
    archive = _zip(members)
    (folder / "tiny.zip").write_bytes(archive)
    source = _fetch.Source(f"{base}/tiny.zip", sha or _sha(archive),
                           (("tiny.data", TARGET),))
    monkeypatch.setitem(_fetch.SOURCES, "letter", (source,))
    return archive


def test_fetch_unpacks_verified_member_into_the_layout(monkeypatch, server, tmp_path):
    """The zip's member (LF line ends) lands at the loader's path with CRLF."""
    archive = _serve_zip(monkeypatch, server,
                         {"notes.txt": b"x", "sub/tiny.data": ROWS_CRLF.replace(b"\r", b"")})
    home = tmp_path / "home"
    assert datasets.fetch("letter", data_home=home) == [home / TARGET.path]
    assert (home / TARGET.path).read_bytes() == ROWS_CRLF
    # the archive is kept, nothing else is written
    assert _files_under(home) == ["downloads/tiny.zip", TARGET.path]
    assert (home / "downloads/tiny.zip").read_bytes() == archive
    # in place and correct: no second download
    datasets.fetch("letter", data_home=home, progressbar=False)
    assert server[2] == ["/tiny.zip"]


def test_archive_with_bad_checksum_leaves_nothing(monkeypatch, server, tmp_path):
    _serve_zip(monkeypatch, server, {"tiny.data": ROWS_CRLF}, sha="0" * 64)
    home = tmp_path / "home"
    with pytest.raises(ValueError, match=r"tiny\.zip failed its published checksum"):
        datasets.fetch("letter", data_home=home, progressbar=False)
    assert _files_under(home) == []


def test_member_with_bad_checksum_is_not_written(monkeypatch, server, tmp_path):
    _serve_zip(monkeypatch, server, {"tiny.data": b"1,2,3\r\n4,5,7\r\n"})
    home = tmp_path / "home"
    with pytest.raises(ValueError, match=r"(?s)does not match the checksum of "
                       r"letter/tiny\.data.*expected " + TARGET.sha256):
        datasets.fetch("letter", data_home=home, progressbar=False)
    assert _files_under(home) == ["downloads/tiny.zip"]  # no half-written file
    with pytest.raises(FileNotFoundError):  # the loader's path stays empty
        _base.fetch_file(TARGET, home, download_if_missing=False)


def test_single_file_without_published_checksum(monkeypatch, server, tmp_path):
    """A LIBSVM-like source: no archive hash; the file is checked and moved."""
    folder, base, requests = server
    (folder / "tiny.data").write_bytes(ROWS_CRLF)
    monkeypatch.setitem(_fetch.SOURCES, "libsvm", (
        _fetch.Source(f"{base}/tiny.data", None, ((None, TARGET),)),))
    home = tmp_path / "home"
    assert datasets.fetch("libsvm", data_home=home, progressbar=False) == [home / TARGET.path]
    assert _files_under(home) == [TARGET.path]  # the download was moved, not copied


def test_server_error_is_an_oserror(monkeypatch, server, tmp_path):
    _, base, _ = server
    monkeypatch.setitem(_fetch.SOURCES, "letter", (
        _fetch.Source(f"{base}/absent.zip", "0" * 64, (("tiny.data", TARGET),)),))
    with pytest.raises(OSError, match=r"Could not download .*absent\.zip.*404"):
        datasets.fetch("letter", data_home=tmp_path / "home", progressbar=False)
    assert _files_under(tmp_path / "home") == []


def test_bad_name_and_the_hint_of_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match="name must be one of"):
        datasets.fetch("isolet")
    with pytest.raises(FileNotFoundError, match="mcsparse.datasets fetch letter`"):
        datasets.load_letter(data_home=tmp_path)


def test_real_satimage_through_the_pipeline(monkeypatch, server, tmp_path):
    """The real satimage files, served with LF line ends in a zip as UCI does,
    come out with the loader's checksums and load."""
    shared = require_data("satimage/sat.trn", "satimage/sat.tst")
    raw = {m: (shared / "satimage" / m).read_bytes().replace(b"\r\n", b"\n")
           for m in ("sat.trn", "sat.tst")}
    folder, base, _ = server
    (folder / "sat.zip").write_bytes(_zip({**raw, "sat.doc": b"doc"}))
    real = _fetch.SOURCES["satimage"][0]
    monkeypatch.setitem(_fetch.SOURCES, "satimage", (
        _fetch.Source(f"{base}/sat.zip", _sha((folder / "sat.zip").read_bytes()),
                      real.files),))
    home = tmp_path / "home"
    datasets.fetch("satimage", data_home=home, progressbar=False)
    X, y = datasets.load_satimage(subset="all", data_home=home, return_X_y=True)
    assert X.shape == (6435, 36)


def test_every_real_source_targets_a_loader_file():
    """The table: each file the loaders read is fetched, with the loader's checksum."""
    targets = {t.path: t for sources in _fetch.SOURCES.values()
               for s in sources for _, t in s.files}
    loader_files = ([*_loaders.MNIST_FILES.values(), *_loaders.SATIMAGE_FILES.values(),
                     _loaders.LETTER_FILE]
                    + [f for _, files in _loaders.LIBSVM_FILES.values() for f in files.values()])
    for f in loader_files:
        assert targets[f.path] == f
    assert {targets[f"pendigits/{n}"].sha256 for n, _ in
            _loaders._PENDIGITS_SHA256.values()} == {
        sha for _, sha in _loaders._PENDIGITS_SHA256.values()}
    for sources in _fetch.SOURCES.values():
        for s in sources:
            assert s.url.startswith("https://")
            assert s.sha256 is None or len(s.sha256) == 64


def test_vowel_accepts_both_published_versions(tmp_path):
    """LIBSVM's vowel.scale is known without line 400's 5:-4.2067e-17 entry too."""
    shared = require_data("libsvm/vowel.scale")
    text = (shared / "libsvm/vowel.scale").read_bytes()
    other = text.replace(b" 5:-4.2067e-17", b"", 1)
    assert other != text
    (tmp_path / "libsvm").mkdir()
    (tmp_path / "libsvm/vowel.scale").write_bytes(other)
    X, _ = datasets.load_libsvm("vowel", data_home=tmp_path, return_X_y=True)
    X_ref, _ = datasets.load_libsvm("vowel", data_home=shared, return_X_y=True)
    np.testing.assert_allclose(X, X_ref, atol=1e-16)


# --- Chars74K: the subset built from a tiny archive of EnglishFnt's layout ----

def _png(value, size=16, mode="L"):
    from PIL import Image

    out = io.BytesIO()
    Image.new(mode, (size, size), value).save(out, format="PNG")
    return out.getvalue()


def _english_fnt(path, classes=range(1, 63)):
    """A tgz like EnglishFnt.tgz: one or two 16x16 images per class, RGB for some."""
    with tarfile.open(path, "w:gz") as tar:
        for n in classes:
            folder = tarfile.TarInfo(f"English/Fnt/Sample{n:03d}")
            folder.type = tarfile.DIRTYPE
            tar.addfile(folder)
            for k in range(1, 3 if n == 1 else 2):
                data = _png(3 * n + k) if n % 2 else _png((n, n, n), mode="RGB")
                info = tarfile.TarInfo(f"English/Fnt/Sample{n:03d}/img{n:03d}-{k:05d}.png")
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    return path


def test_build_chars74k_subset(tmp_path):
    pytest.importorskip("PIL")
    source = _english_fnt(tmp_path / "EnglishFnt.tgz")
    out = datasets.build_chars74k_subset(source, tmp_path / "a" / "subset.tar.gz")
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert len(names) == 35 and names == sorted(names)  # 34 classes, 2 in Sample001
    assert not any(f"Sample{n}/" in name for name in names for n in ("019", "025", "037"))
    X, y = _loaders._decode_chars74k.__wrapped__(str(out))
    assert X.shape == (35, 784)
    np.testing.assert_array_equal(np.bincount(y), [2] + [1] * 33)
    np.testing.assert_array_equal(X[[0, 1, 34]].max(axis=1), [4, 5, 36])  # grey values kept
    # deterministic: the same bytes again
    again = datasets.build_chars74k_subset(source, tmp_path / "b.tar.gz")
    assert again.read_bytes() == out.read_bytes()


def test_build_chars74k_refuses_an_incomplete_archive(tmp_path):
    pytest.importorskip("PIL")
    source = _english_fnt(tmp_path / "x.tgz", classes=[n for n in range(1, 37) if n != 30])
    with pytest.raises(ValueError, match="no English/Fnt/Sample030"):
        datasets.build_chars74k_subset(source, tmp_path / "out" / "s.tar.gz")
    (tmp_path / "junk.tgz").write_bytes(b"junk")
    with pytest.raises(ValueError, match="not a readable"):
        datasets.build_chars74k_subset(tmp_path / "junk.tgz", tmp_path / "out" / "s.tar.gz")
    assert _files_under(tmp_path / "out") == []


def test_fetch_chars74k_builds_what_the_loader_reads(monkeypatch, server, tmp_path):
    pytest.importorskip("PIL")
    folder, base, requests = server
    _english_fnt(folder / "EnglishFnt.tgz")
    monkeypatch.setattr(_fetch, "CHARS74K_URL", f"{base}/EnglishFnt.tgz")
    monkeypatch.setattr(_loaders, "_CHARS74K_N_SAMPLES", 35)
    home = tmp_path / "home"
    assert datasets.fetch("chars74k", data_home=home) == [home / _loaders.CHARS74K_REBUILT]
    bunch = datasets.load_chars74k(data_home=home)
    assert bunch.data.shape == (35, 784) and bunch.target_names[bunch.target[-1]] == "Z"
    datasets.fetch("chars74k", data_home=home)  # there already: no download
    assert requests == ["/EnglishFnt.tgz"]


def test_command_line(monkeypatch, server, tmp_path, capsys):
    _serve_zip(monkeypatch, server, {"tiny.data": ROWS_CRLF})
    home = tmp_path / "home"
    assert main(["--data-home", str(home), "fetch", "letter", "--no-progress"]) == 0
    assert capsys.readouterr().out.strip() == str(home / TARGET.path)
    assert main(["--data-home", str(home), "list"]) == 0
    listing = capsys.readouterr().out
    assert "letter     present" in listing and "mnist      missing" in listing
    (home / TARGET.path).write_bytes(b"changed")
    assert main(["--data-home", str(home), "fetch", "letter"]) == 1
    assert "corrupted" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["fetch", "isolet"])
