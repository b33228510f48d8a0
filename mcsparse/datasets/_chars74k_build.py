"""Build the 28x28, 34-class Chars74K EnglishFnt subset from the public archive.

The Chars74K page publishes ``EnglishFnt.tgz``: 62 classes (``Sample001`` to
``Sample062``: digits, capitals, small letters) of 1016 characters rendered
from computer fonts, as 128x128 PNG files
``English/Fnt/SampleNNN/imgNNN-NNNNN.png``. :func:`load_chars74k` reads the
subset of the papers' experiment: the digits and capitals (``Sample001`` to
``Sample036``) without ``I`` (``Sample019``) and ``O`` (``Sample025``),
34 x 1016 = 34544 images downscaled to 28x28 8-bit grey, in a tar.gz of the
same layout. :func:`build_chars74k_subset` makes that file.

The copy whose sha256 the loader checks was downscaled by someone else with
a filter that is not documented; this builder uses Pillow's bicubic filter
(antialiased when shrinking), so its pixels may differ slightly from that
copy's and it is written under another name,
``chars74k-EnglishFnt-28x28-34class-rebuilt.tar.gz``, which the loader reads
when the checked copy is absent.
"""

import gzip
import io
import os
import re
import tarfile
import tempfile
from pathlib import Path

KEPT_CLASSES = tuple(f"Sample{n:03d}" for n in range(1, 37) if n not in (19, 25))
_MEMBER = re.compile(r"^(?:\./)?English/Fnt/(Sample\d{3})/([^/]+\.png)$")
_MTIME = 1439337600  # 2015-08-12, as in the reference copy: the output is deterministic


def _downscale(raw, name, size, Image):
    """PNG bytes of the ``size`` x ``size`` 8-bit grey version of a PNG."""
    try:
        with Image.open(io.BytesIO(raw)) as image:
            small = image.convert("L").resize((size, size), Image.Resampling.BICUBIC)
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        raise ValueError(f"member {name!r} is not a readable image ({exc})") from exc
    out = io.BytesIO()
    small.save(out, format="PNG")
    return out.getvalue()


def _read_subset(source, size, Image):
    """``{name in the output: PNG bytes}`` of the kept classes of ``source``."""
    images = {}
    try:
        with tarfile.open(source, "r:*") as archive:
            for member in archive:
                match = _MEMBER.match(member.name)
                if not member.isfile() or not match or match[1] not in KEPT_CLASSES:
                    continue
                name = f"English/Fnt/{match[1]}/{match[2]}"
                images[name] = _downscale(archive.extractfile(member).read(), name,
                                          size, Image)
    except (tarfile.TarError, EOFError, OSError) as exc:
        raise ValueError(f"{source}: not a readable .tgz archive ({exc})") from exc
    missing = [c for c in KEPT_CLASSES if not any(n.split("/")[2] == c for n in images)]
    if missing:
        raise ValueError(f"{source} has no English/Fnt/{missing[0]}/*.png images (and "
                         f"{len(missing) - 1} more classes missing): not the Chars74K "
                         "EnglishFnt.tgz archive")
    return images


def build_chars74k_subset(source, destination, *, size=28):
    """Build the 34-class, 28x28 Chars74K subset that load_chars74k reads.

    Reads the public ``EnglishFnt.tgz`` (members
    ``English/Fnt/SampleNNN/*.png``), keeps the digits and capitals without
    ``I`` and ``O`` (``Sample001``-``Sample036`` less ``Sample019`` and
    ``Sample025``), converts each image to 8-bit grey and downscales it
    with Pillow's bicubic filter, and writes a deterministic tar.gz of the
    same member names (sorted, fixed times and owner, no directories). The
    file is written under a temporary name and renamed once complete.

    Parameters
    ----------
    source : str or path-like
        The ``EnglishFnt.tgz`` archive (any tar, compressed or not, of that
        layout; other members are ignored).
    destination : str or path-like
        The tar.gz to write (its folder is created). For the loader:
        ``data_home/chars74k/chars74k-EnglishFnt-28x28-34class-rebuilt.tar.gz``,
        where ``python -m mcsparse.datasets fetch chars74k`` puts it.
    size : int, default=28
        Side of the output images in pixels.

    Returns
    -------
    destination : pathlib.Path
        The file written: 34544 PNG members for the full archive.

    Raises
    ------
    ImportError
        If Pillow is not installed.
    ValueError
        If ``source`` is not a readable tar archive, a kept member is not an
        image, or a kept class has no image; nothing is written then.

    Examples
    --------
    >>> from mcsparse.datasets import build_chars74k_subset
    >>> build_chars74k_subset("EnglishFnt.tgz", "chars74k/"
    ...     "chars74k-EnglishFnt-28x28-34class-rebuilt.tar.gz")  # doctest: +SKIP
    """
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError("building the Chars74K subset needs Pillow to read and write "
                          "PNG images: pip install pillow") from exc
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ValueError(f"size must be a positive int, got {size!r}")
    images = _read_subset(source, size, Image)
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.",
                               suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f, \
                gzip.GzipFile(filename="", mode="wb", fileobj=f, compresslevel=9,
                              mtime=0) as gz, \
                tarfile.open(fileobj=gz, mode="w", format=tarfile.USTAR_FORMAT) as tar:
            for name in sorted(images):
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = len(images[name]), _MTIME, 0o644
                tar.addfile(info, io.BytesIO(images[name]))
        os.replace(tmp, destination)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return destination
