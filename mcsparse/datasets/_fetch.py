"""Download the data sets from their original public sources into the data home.

Each source is downloaded once with pooch (a tqdm progress bar, the archive's
published sha256 where one is known), then every file the loaders read is
taken out of it, checked against the checksum the loader checks, and only
then moved into place: a failed or wrong download leaves no file in the
layout. Archives are kept under ``data_home/downloads/`` (delete them at
will); single files are moved, not copied.
"""

import hashlib
import os
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ._base import FETCH_NAMES, DataFile, fetch_file, get_data_home
from ._chars74k_build import build_chars74k_subset
from ._loaders import (
    _PENDIGITS_SHA256,
    CHARS74K_REBUILT,
    _chars74k_path,
    LETTER_FILE,
    LIBSVM,
    LIBSVM_FILES,
    MNIST_FILES,
    SATIMAGE_FILES,
)

UCI_STATIC = "https://archive.ics.uci.edu/static/public"
CHARS74K_URL = "https://info-ee.surrey.ac.uk/CVSSP/demos/chars74k/EnglishFnt.tgz"
DOWNLOADS = "downloads"  # folder of the kept archives, under the data home


@dataclass(frozen=True)
class Source:
    """One download: ``url``, its published sha256 (None where none is known),
    and ``files``: ``(member, DataFile)`` pairs, ``member`` the file's name
    inside the archive (None when the download is the file itself)."""

    url: str
    sha256: str | None
    files: tuple


def _pendigits_file(part):
    name, sha = _PENDIGITS_SHA256[part]
    return DataFile(f"pendigits/{name}", sha, f"{UCI_STATIC}/81")


# Archive checksums: those of the UCI static zips as other projects pin them.
SOURCES = {
    "mnist": tuple(Source(f.url, f.sha256, ((None, f),)) for f in MNIST_FILES.values()),
    "pendigits": (Source(
        f"{UCI_STATIC}/81/pen+based+recognition+of+handwritten+digits.zip",
        "1e02bea023613c2b11c9492f6f34caf975420455934f3527d270cee9a1f03b64",
        (("pendigits.tra", _pendigits_file("train")),
         ("pendigits.tes", _pendigits_file("test")))),),
    "satimage": (Source(
        f"{UCI_STATIC}/146/statlog+landsat+satellite.zip",
        "7c54e0e11c872a1b0b647da370d596dcb06746159cce4121d92ccd70b7d7ce3c",
        (("sat.trn", SATIMAGE_FILES["train"]), ("sat.tst", SATIMAGE_FILES["test"]))),),
    "letter": (Source(
        f"{UCI_STATIC}/59/letter+recognition.zip",
        "3b5f07a334697b6cace4fbae22940393a18fee596e73f68d97ce5973d52dc60f",
        (("letter-recognition.data", LETTER_FILE),)),),
    # LIBSVM publishes no checksums: each file is checked against the loader's
    "libsvm": tuple(Source(f"{LIBSVM}/{f.path.split('/')[-1]}", None, ((None, f),))
                    for _, files in LIBSVM_FILES.values() for f in files.values()),
}
assert set(SOURCES) | {"chars74k"} == set(FETCH_NAMES)


def _line_ending_variants(raw):
    """``raw``, then with LF, then with CRLF line ends (the copies the loader's
    checksums were taken from have CRLF in satimage and dna.scale)."""
    lf = raw.replace(b"\r\n", b"\n")
    return [raw, lf, lf.replace(b"\n", b"\r\n")]


def _install(raw, target, home, origin):
    """Write ``raw`` to ``target``'s path, atomically, if a line-ending variant
    of it has ``target``'s checksum; else raise ValueError and write nothing."""
    for data in _line_ending_variants(raw):
        if target.accepts(hashlib.sha256(data).hexdigest()):
            break
    else:
        raise ValueError(
            f"{origin} does not match the checksum of {target.path}: its sha256 is "
            f"{hashlib.sha256(raw).hexdigest()}, expected {target.sha256} (line "
            f"endings ignored). The server's file may have changed; see "
            f"{target.source}. Nothing was written to {home / target.path}.")
    path = home / target.path
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def _read_member(archive, member):
    """Bytes of the member whose base name is ``member`` in a zip or tar."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            names = [n for n in z.namelist() if n.rsplit("/", 1)[-1] == member]
            if names:
                return z.read(names[0])
    else:
        with tarfile.open(archive) as t:
            for info in t:
                if info.isfile() and info.name.rsplit("/", 1)[-1] == member:
                    return t.extractfile(info).read()
    raise ValueError(f"{archive} has no member {member!r}: not the expected archive")


def _present(target, home):
    """Whether ``target`` is in place; a wrong copy raises fetch_file's ValueError."""
    if not (home / target.path).exists():
        return False
    fetch_file(target, home, download_if_missing=False)
    return True


def _retrieve(url, sha256, fname, home, progressbar):
    """pooch.retrieve into ``home/downloads``, errors naming the URL.

    pooch downloads to a temporary file and moves it into place only once
    its hash matches, so a failed download leaves nothing behind.
    """
    import pooch

    known = f"sha256:{sha256}" if sha256 else None
    try:
        return Path(pooch.retrieve(url, known_hash=known, fname=fname,
                                   path=home / DOWNLOADS, progressbar=progressbar))
    except ValueError as exc:
        raise ValueError(f"The download of {url} failed its published checksum "
                         f"and was not kept ({exc})") from exc
    except Exception as exc:
        raise OSError(f"Could not download {url} to {home / DOWNLOADS} ({exc}); "
                      "nothing was written to the data home's data folders") from exc


def _fetch_source(source, home, progressbar):
    if all(_present(target, home) for _, target in source.files):
        return [home / target.path for _, target in source.files]
    single = source.files[0][0] is None  # the download is the file itself
    if single and source.sha256 == source.files[0][1].sha256:
        # the published file is the one the loader reads: straight into place
        return [fetch_file(source.files[0][1], home, progressbar=progressbar)]
    name = source.url.rsplit("/", 1)[-1]
    downloaded = _retrieve(source.url, source.sha256, name, home, progressbar)
    try:
        out = []
        for member, target in source.files:
            raw = (downloaded.read_bytes() if member is None
                   else _read_member(downloaded, member))
            out.append(_install(raw, target, home, f"{source.url} ({member or name})"))
        return out
    finally:
        if single:  # the copy in place is enough
            downloaded.unlink(missing_ok=True)


def _fetch_chars74k(home, progressbar):
    try:  # the loader's file: the checked manifest copy, else a subset built before
        return [_chars74k_path(home)]
    except FileNotFoundError:
        pass
    # no published checksum: pooch prints the sha256 of what it downloaded
    archive = _retrieve(CHARS74K_URL, None, "EnglishFnt.tgz", home, progressbar)
    return [build_chars74k_subset(archive, home / CHARS74K_REBUILT)]


def fetch(name, data_home=None, *, progressbar=True):
    """Download a data set from its original public source into the data home.

    Writes the files the loaders read (``mnist/``, ``satimage/``, ...; see
    the data page of the documentation for each set's source, licence and
    size). Each source is downloaded with pooch, checked against its
    published sha256 where one is known, unpacked, and every file is checked
    against the sha256 its loader checks before it is moved into place (line
    endings are normalised to those of the reference copies first: UCI and
    LIBSVM files are text). Files already in place and correct are not
    downloaded again. For ``"chars74k"`` the public EnglishFnt archive is
    downloaded and the 28x28, 34-class subset is built from it
    (:func:`~mcsparse.datasets.build_chars74k_subset`).

    Parameters
    ----------
    name : {"mnist", "pendigits", "satimage", "letter", "libsvm", "chars74k", "all"}
        The data set; ``"all"`` fetches every one. ``"pendigits"`` is bundled
        with the package: fetching it writes the UCI files to
        ``data_home/pendigits/`` (the same bytes) for comparison.
    data_home : str or path-like, default=None
        Where to write; see :func:`get_data_home` (``MCSPARSE_DATA``, else
        ``~/mcsparse_data``). Archives are kept in its ``downloads/`` folder.
    progressbar : bool, default=True
        Show a tqdm progress bar per download.

    Returns
    -------
    paths : list of pathlib.Path
        The files in place, in the order of the sources.

    Raises
    ------
    ValueError
        If ``name`` is unknown, a download fails its published checksum, or
        a file taken from it does not have the loader's checksum (nothing is
        then written in its place).
    OSError
        If a download fails (offline, server error).

    Examples
    --------
    >>> from mcsparse.datasets import fetch, load_letter
    >>> fetch("letter")  # doctest: +SKIP
    [PosixPath('/home/me/mcsparse_data/letter/letter-recognition.data')]
    >>> X, y = load_letter(return_X_y=True)  # doctest: +SKIP
    """
    names = list(FETCH_NAMES) + ["all"]
    if not isinstance(name, str) or name not in names:
        raise ValueError(f"name must be one of {names}, got {name!r}")
    home = get_data_home(data_home)
    paths = []
    for one in FETCH_NAMES if name == "all" else [name]:
        if one == "chars74k":
            paths += _fetch_chars74k(home, progressbar)
        else:
            for source in SOURCES[one]:
                paths += _fetch_source(source, home, progressbar)
    return paths

