"""Where data lives, checksums, and fetching with pooch."""

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

ENV_DATA_HOME = "MCSPARSE_DATA"
# the data sets `python -m mcsparse.datasets fetch NAME` downloads, one folder each
FETCH_NAMES = ("mnist", "pendigits", "satimage", "letter", "libsvm", "chars74k")


@dataclass(frozen=True)
class DataFile:
    """A data file known to mcsparse: its path under the data home and checksum.

    ``url`` is set only where the published file is known to have exactly this
    sha256; otherwise ``source`` tells the user where to obtain the file.
    ``other_sha256`` lists the checksums of other published versions that hold
    the same data (as the loader reads it) and are accepted too.
    """

    path: str  # relative to the data home, e.g. "mnist/t10k-labels-idx1-ubyte.gz"
    sha256: str
    source: str
    url: str | None = None
    other_sha256: tuple = ()

    def accepts(self, sha256):
        """Whether a file with this hex sha256 is a known version of this file."""
        return sha256 == self.sha256 or sha256 in self.other_sha256


def get_data_home(data_home=None):
    """Folder of the mcsparse data sets.

    Parameters
    ----------
    data_home : str or path-like, default=None
        The folder. When None, the ``MCSPARSE_DATA`` environment variable is
        used if set, else ``~/mcsparse_data``.

    Returns
    -------
    data_home : pathlib.Path
        The folder (not created; fetching creates it when needed).

    Examples
    --------
    >>> from mcsparse.datasets import get_data_home
    >>> str(get_data_home("/tmp/some_folder"))
    '/tmp/some_folder'
    """
    if data_home is None:
        data_home = os.environ.get(ENV_DATA_HOME) or Path("~") / "mcsparse_data"
    if not isinstance(data_home, (str, os.PathLike)):
        raise TypeError(f"data_home must be a path or None, got {data_home!r}")
    if str(data_home) == "":
        raise ValueError("data_home is an empty string; pass None for the default")
    return Path(data_home).expanduser()


def sha256sum(path, chunk_size=1 << 20):
    """Hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk_size), b""):
            digest.update(block)
    return digest.hexdigest()


def fetch_file(data_file, data_home=None, download_if_missing=True, progressbar=False):
    """Return the verified local path of ``data_file``, downloading it if allowed.

    The file is looked up under ``get_data_home(data_home)``. A file that is
    present is always checked against its sha256. A missing file is
    downloaded with pooch (to a temporary name, verified, then renamed, so a
    partial download never stays in the cache) when ``download_if_missing``
    and a URL with a known checksum exists (with a tqdm progress bar when
    ``progressbar``).

    Raises
    ------
    FileNotFoundError
        If the file is missing and may not or cannot be downloaded; the
        message names the file, its sha256 and where to get it.
    OSError
        If the download fails (offline, server error), or the path exists
        but is not a regular file (a directory, a broken link).
    ValueError
        If the file's sha256 differs from the expected one (corrupted,
        truncated or another version), or the downloaded file's does.
    """
    home = get_data_home(data_home)
    path = home / data_file.path
    if path.is_file():
        actual = sha256sum(path)
        if not data_file.accepts(actual):
            raise ValueError(
                f"Data file {path} is corrupted or not the expected version: its "
                f"sha256 is {actual}, expected {data_file.sha256}. Delete it and "
                f"obtain it again from {data_file.source}."
            )
        return path
    if path.exists() or path.is_symlink():
        what = "a directory" if path.is_dir() else "a broken link or special file"
        raise OSError(
            f"Data file {path} is not a regular file ({what}). Remove it and "
            f"obtain the file again from {data_file.url or data_file.source} "
            f"(expected sha256 {data_file.sha256})."
        )
    if download_if_missing and data_file.url is not None:
        return _download(data_file, home, path, progressbar)
    how = (
        f"download it from {data_file.url} (download_if_missing=True does this)"
        if data_file.url
        else f"obtain it from {data_file.source}"
    )
    name = data_file.path.split("/")[0]
    if name in FETCH_NAMES:
        how += (f"; or run `python -m mcsparse.datasets fetch {name}`, which gets "
                "it from the original public source into the data home")
    raise FileNotFoundError(
        f"Data file {data_file.path} not found under the data home {home} "
        f"(set by the data_home argument or the {ENV_DATA_HOME} environment "
        f"variable). Expected sha256 {data_file.sha256}; {how}."
    )


def _download(data_file, home, path, progressbar=False):
    """Download ``data_file`` to ``path`` (absent) with pooch, verified.

    pooch streams into a temporary file beside ``path``, checks the sha256 and
    only then renames it. Whatever goes wrong (including an interrupt), no file
    is left at ``path`` and no folder created here stays behind empty; the file
    is verified once more after pooch returns.
    """
    import pooch

    created = [p for p in (home, path.parent) if not p.exists()]
    try:
        out = Path(
            pooch.retrieve(
                data_file.url,
                known_hash=f"sha256:{data_file.sha256}",
                fname=path.name,
                path=path.parent,
                progressbar=progressbar,
            )
        )
        actual = sha256sum(out)
        if actual != data_file.sha256:
            raise ValueError(f"its sha256 is {actual}")
        return out
    except BaseException as exc:
        # absent before the call: a file there now is a partial or bad download
        # (unless a concurrent process has just placed the verified file)
        if path.is_symlink() or (path.is_file() and sha256sum(path) != data_file.sha256):
            path.unlink()
        for folder in reversed(created):  # leave no empty folders behind
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        if not isinstance(exc, Exception):  # KeyboardInterrupt, SystemExit
            raise
        if isinstance(exc, ValueError):  # the checksum did not match
            raise ValueError(
                f"The download of {data_file.url} to {path} failed its checksum "
                f"and was not kept ({exc}). Expected sha256 {data_file.sha256}; "
                f"the server's file may have changed, see {data_file.source}."
            ) from exc
        raise OSError(
            f"Could not download {data_file.url} to {path} ({exc}). Download "
            f"it by hand and place it there (expected sha256 "
            f"{data_file.sha256}), or point the data home (the data_home "
            f"argument or the {ENV_DATA_HOME} environment variable) at a folder "
            f"that has {data_file.path}."
        ) from exc
