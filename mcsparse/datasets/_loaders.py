"""Loaders of the real data sets used by the papers' experiments.

Checksums are those of ``shared/datasets/MANIFEST.md`` (the published ones for
MNIST). Every loader verifies them before parsing.
"""

import functools
import gzip
import hashlib
import io
import numbers
import tarfile
import zlib
from importlib import resources

import numpy as np
from sklearn.datasets import load_svmlight_file
from sklearn.utils import Bunch

from ._base import DataFile, fetch_file, get_data_home

UCI = "https://archive.ics.uci.edu/dataset"
LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass"
MNIST_URL = "https://ossci-datasets.s3.amazonaws.com/mnist"

_PENDIGITS_SHA256 = {
    "train": ("pendigits.tra", "e2b9eb9f0d0467e2b64a4816a3420edf2b8043447576f4b84337aba44a9f97d3"),
    "test": ("pendigits.tes", "8bd03229c5c5291fefe43e45465dd948d2645bf23328b9d993e0b777666b2015"),
}


def _mnist(name, sha):
    return DataFile(f"mnist/{name}", sha, "Yann LeCun's MNIST page (exdb/mnist)",
                    f"{MNIST_URL}/{name}")


MNIST_FILES = {
    ("train", "images"): _mnist("train-images-idx3-ubyte.gz",
                                "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609"),
    ("train", "labels"): _mnist("train-labels-idx1-ubyte.gz",
                                "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c"),
    ("test", "images"): _mnist("t10k-images-idx3-ubyte.gz",
                               "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"),
    ("test", "labels"): _mnist("t10k-labels-idx1-ubyte.gz",
                               "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"),
}

SATIMAGE_FILES = {
    "train": DataFile("satimage/sat.trn",
                      "6da888aa398f4dd56a85bb7114f7206896a360b7af1d790450f64dbdb8493fc5",
                      f"{UCI}/146 (Statlog Landsat Satellite, file sat.trn)"),
    "test": DataFile("satimage/sat.tst",
                     "0045be0391420a35a69e8d2b0a4ff4b032a4aa03feebba0d89b9aa3e2d42c212",
                     f"{UCI}/146 (Statlog Landsat Satellite, file sat.tst)"),
}

LETTER_FILE = DataFile("letter/letter-recognition.data",
                       "2b89f3602cf768d3c8355267d2f13f2417809e101fc2b5ceee10db19a60de6e2",
                       f"{UCI}/59 (Letter Recognition)")

CHARS74K_FILE = DataFile(
    "chars74k/chars74k-EnglishFnt-28x28-34class.tar.gz",
    "b78cc19c06cb28f7e7b0af88ab812b96b9f3ab8a4010b7725308b32dd190c640",
    "the Chars74K EnglishFnt images downscaled to 28x28, as in GitHub "
    "dnth/car_plate_localization (English/Fnt), packed in a deterministic tar.gz",
)
# What `fetch("chars74k")` builds from the public archive (same layout; the pixels
# of the copy above came from another downscaling, so its checksum differs).
CHARS74K_REBUILT = "chars74k/chars74k-EnglishFnt-28x28-34class-rebuilt.tar.gz"
# Sample001-010 are the digits, Sample011-036 the capitals; I and O were removed.
CHARS74K_TARGET_NAMES = np.array(list("0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"))
_CHARS74K_CLASS_OF_DIR = {
    f"Sample{number:03d}": k
    for k, number in enumerate(n for n in range(1, 37) if n not in (19, 25))
}
_CHARS74K_N_SAMPLES = 34544

# name -> (n_features, {subset: DataFile})
LIBSVM_FILES = {
    "segment": (19, {"train": DataFile(
        "libsvm/segment.scale",
        "7c25c4529b8c84d047bc546e1e1f9a3f671c36d77f5469fb845b6e4a15bdd629",
        f"{LIBSVM}.html#segment")}),
    # the other accepted version lacks line 400's svm-scale artefact 5:-4.2067e-17
    "vowel": (10, {"train": DataFile(
        "libsvm/vowel.scale",
        "89ecbd4590cabc23b001cbd2d90128efe3c8ad02540ce1a08ef367b98d765585",
        f"{LIBSVM}.html#vowel", other_sha256=(
            "f9ad13f7b7814118facd51f29ddf9a83a3190fb07f3122b4c9031bdf2097af29",))}),
    "wine": (13, {"train": DataFile(
        "libsvm/wine.scale",
        "36c20cc5a687694cce444e01c0cc6d2957ab73fbdea7ba33aae414f86183e927",
        f"{LIBSVM}.html#wine")}),
    "satimage": (36, {"train": DataFile(
        "libsvm/satimage.scale",
        "b7150252d3117712588d9d5dfeb1a409234340313a93b458f66449a2678d5542",
        f"{LIBSVM}.html#satimage")}),
    "dna": (180, {
        "train": DataFile("libsvm/dna.scale",
                          "f74937ccb8908628058ae1819d4d46c960ce64383f622c994d4f2e6e21026494",
                          f"{LIBSVM}.html#dna"),
        "test": DataFile("libsvm/dna.scale.t",
                         "d2eeed170e4e38ae2aba6aa4cd27a8ca4ecceb01a7751e8e509bb4e1a6bcef39",
                         f"{LIBSVM}.html#dna"),
    }),
}


def _check_subset(subset, available):
    allowed = list(available) + (["all"] if len(available) > 1 else [])
    if subset not in allowed:
        raise ValueError(f"subset must be one of {allowed}, got {subset!r}")
    return list(available) if subset == "all" else [subset]


def _bunch(X, y, return_X_y, **extra):
    if return_X_y:
        return X, y
    return Bunch(data=X, target=y, target_names=np.unique(y), **extra)


def load_pendigits(*, subset="train", return_X_y=False):
    """Load the UCI pen-based handwritten digits (bundled with mcsparse).

    =================  ==========================
    Classes                                    10
    Samples (train)                          7494
    Samples (test)                           3498
    Features           16 integers in [0, 100]
    =================  ==========================

    The UCI split (``pendigits.tra`` / ``pendigits.tes``), shipped inside the
    package; the sha256 of each decompressed file is checked against the
    data set manifest.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which part to load; "all" stacks train then test.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, 16) float64, ``target`` (n_samples,) int64,
        ``target_names``, ``feature_names``, ``DESCR``. Or ``(data, target)``
        when ``return_X_y``.

    Raises
    ------
    ValueError
        If ``subset`` is unknown or a bundled file fails its checksum.

    References
    ----------
    F. Alimoglu, E. Alpaydin, "Methods of combining multiple classifiers based
    on different representations for pen-based handwriting recognition",
    TAINN 1996. UCI Machine Learning Repository, CC BY 4.0.

    Examples
    --------
    >>> from mcsparse.datasets import load_pendigits
    >>> X, y = load_pendigits(return_X_y=True)
    >>> X.shape, y.shape
    ((7494, 16), (7494,))
    """
    Xs, ys = [], []
    for part in _check_subset(subset, ["train", "test"]):
        name, sha = _PENDIGITS_SHA256[part]
        raw = gzip.decompress(
            resources.files("mcsparse.datasets").joinpath("data", name + ".gz").read_bytes()
        )
        if hashlib.sha256(raw).hexdigest() != sha:
            raise ValueError(
                f"The bundled file {name} does not match its sha256 {sha}: "
                "the mcsparse installation is damaged; reinstall it."
            )
        table = np.loadtxt(io.BytesIO(raw), delimiter=",", dtype=np.int64)
        Xs.append(table[:, :-1].astype(np.float64))
        ys.append(table[:, -1])
    X, y = np.vstack(Xs), np.concatenate(ys)
    return _bunch(
        X, y, return_X_y,
        feature_names=[f"{c}{i}" for i in range(8) for c in "xy"],
        DESCR="UCI Pen-Based Recognition of Handwritten Digits: 8 resampled "
              "(x, y) pen positions per digit, each in [0, 100].",
        subset=subset,
    )


def _read_idx(path, expected_magic):
    """Parse a gzip-compressed IDX file (already checksum-verified)."""
    with gzip.open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path} is too short to be an IDX file")
    magic = int.from_bytes(raw[:4], "big")
    if magic != expected_magic:
        raise ValueError(f"{path}: IDX magic number {magic}, expected {expected_magic}")
    ndim = magic & 0xFF
    dims = [int.from_bytes(raw[4 + 4 * i: 8 + 4 * i], "big") for i in range(ndim)]
    offset = 4 + 4 * ndim
    data = np.frombuffer(raw, dtype=np.uint8, offset=offset)
    if data.size != int(np.prod(dims)):
        raise ValueError(f"{path}: {data.size} bytes of data, header says {dims}")
    return data.reshape(dims)


def load_mnist(*, subset="train", data_home=None, download_if_missing=True,
               return_X_y=False):
    """Load the MNIST handwritten digits (IDX files from the data home).

    =================  ==========================
    Classes                                    10
    Samples (train)                         60000
    Samples (test)                          10000
    Features           784 pixels, uint8 0..255
    =================  ==========================

    The four ``*-idx?-ubyte.gz`` files are read from ``data_home/mnist/``
    (``data_home`` defaults to ``$MCSPARSE_DATA``, then ``~/mcsparse_data``)
    and checked against the published sha256. Missing files are fetched with
    pooch when ``download_if_missing``.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which part to load; "all" stacks train then test.
    data_home : str or path-like, default=None
        Folder holding ``mnist/``; see :func:`get_data_home`.
    download_if_missing : bool, default=True
        Download missing files (never needed when ``MCSPARSE_DATA`` points at
        a complete copy).
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, 784) uint8 (divide by 255 for [0, 1]), ``images``
        (n_samples, 28, 28) uint8 (a view of ``data``), ``target``
        (n_samples,) int64. Or ``(data, target)`` when ``return_X_y``.

    Raises
    ------
    FileNotFoundError
        If a file is missing and ``download_if_missing`` is False.
    OSError
        If a missing file cannot be downloaded.
    ValueError
        If a file fails its checksum or is not a valid IDX file.

    References
    ----------
    Y. LeCun, L. Bottou, Y. Bengio, P. Haffner, "Gradient-based learning
    applied to document recognition", Proc. IEEE 86(11), 1998.

    Examples
    --------
    >>> from mcsparse.datasets import load_mnist
    >>> X, y = load_mnist(subset="test", return_X_y=True)  # doctest: +SKIP
    >>> X.shape  # doctest: +SKIP
    (10000, 784)
    """
    Xs, ys = [], []
    for part in _check_subset(subset, ["train", "test"]):
        images = _read_idx(fetch_file(MNIST_FILES[part, "images"], data_home,
                                      download_if_missing), 2051)
        labels = _read_idx(fetch_file(MNIST_FILES[part, "labels"], data_home,
                                      download_if_missing), 2049)
        if images.shape[0] != labels.shape[0]:
            raise ValueError(f"MNIST {part}: {images.shape[0]} images, {labels.shape[0]} labels")
        Xs.append(images.reshape(images.shape[0], -1))
        ys.append(labels.astype(np.int64))
    X = Xs[0] if len(Xs) == 1 else np.vstack(Xs)
    y = np.concatenate(ys)
    if return_X_y:
        return X, y
    return Bunch(data=X, images=X.reshape(-1, 28, 28), target=y,
                 target_names=np.arange(10), subset=subset,
                 DESCR="MNIST handwritten digits, 28x28 grey-level images.")


def load_satimage(*, subset="train", data_home=None, return_X_y=False):
    """Load UCI Statlog (Landsat Satellite), the raw UCI train/test files.

    =================  ==========================
    Classes            6 (labels 1, 2, 3, 4, 5, 7)
    Samples (train)                          4435
    Samples (test)                           2000
    Features           36 integers in [0, 255]
    =================  ==========================

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which part to load; "all" stacks train then test.
    data_home : str or path-like, default=None
        Folder holding ``satimage/``; see :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, 36) float64, ``target`` (n_samples,) int64.
        Or ``(data, target)`` when ``return_X_y``.

    Raises
    ------
    FileNotFoundError
        If a file is missing (the loader does not download;
        ``python -m mcsparse.datasets fetch satimage`` does).
    ValueError
        If a file fails its checksum.

    References
    ----------
    UCI Machine Learning Repository, "Statlog (Landsat Satellite)",
    A. Srinivasan, 1993. CC BY 4.0.

    Examples
    --------
    >>> from mcsparse.datasets import load_satimage
    >>> X, y = load_satimage(return_X_y=True)  # doctest: +SKIP
    """
    Xs, ys = [], []
    for part in _check_subset(subset, ["train", "test"]):
        table = np.loadtxt(fetch_file(SATIMAGE_FILES[part], data_home, False),
                           dtype=np.int64)
        Xs.append(table[:, :-1].astype(np.float64))
        ys.append(table[:, -1])
    return _bunch(np.vstack(Xs), np.concatenate(ys), return_X_y, subset=subset,
                  DESCR="UCI Statlog Landsat satellite: 3x3 pixel neighbourhoods, "
                        "4 spectral bands; class 6 does not occur.")


def load_letter(*, subset="train", data_home=None, return_X_y=False):
    """Load UCI Letter Recognition with the customary 16000/4000 split.

    =================  ==========================
    Classes                           26 (A to Z)
    Samples (train)            16000 (first rows)
    Samples (test)              4000 (last rows)
    Features           16 integers in [0, 15]
    =================  ==========================

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="train"
        Which part to load; "all" is the whole file in order.
    data_home : str or path-like, default=None
        Folder holding ``letter/``; see :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, 16) float64, ``target`` (n_samples,) of str
        (one capital letter). Or ``(data, target)`` when ``return_X_y``.

    Raises
    ------
    FileNotFoundError
        If the file is missing (``python -m mcsparse.datasets fetch letter``
        downloads it).
    ValueError
        If the file fails its checksum.

    References
    ----------
    P. W. Frey, D. J. Slate, "Letter recognition using Holland-style adaptive
    classifiers", Machine Learning 6(2), 1991.

    Examples
    --------
    >>> from mcsparse.datasets import load_letter
    >>> X, y = load_letter(return_X_y=True)  # doctest: +SKIP
    """
    parts = _check_subset(subset, ["train", "test"])
    with open(fetch_file(LETTER_FILE, data_home, False)) as f:
        rows = [line.strip().split(",") for line in f if line.strip()]
    y = np.array([r[0] for r in rows])
    X = np.array([r[1:] for r in rows], dtype=np.float64)
    rows_of = {"train": slice(0, 16000), "test": slice(16000, None)}
    idx = np.concatenate([np.arange(len(y))[rows_of[p]] for p in parts])
    return _bunch(X[idx], y[idx], return_X_y, subset=subset,
                  DESCR="UCI Letter Recognition: 16 statistics of character images.")


def _read_chars74k_members(path, Image):
    """``(name, label, pixels)`` of every member of the Chars74K tar, checked."""
    entries = []
    with tarfile.open(path, "r|gz") as archive:
        for member in archive:
            if member.isdir():
                continue
            parts = member.name.split("/")
            if (not member.isfile() or len(parts) != 4 or parts[:2] != ["English", "Fnt"]
                    or parts[2] not in _CHARS74K_CLASS_OF_DIR
                    or not parts[3].endswith(".png")):
                raise ValueError(f"{path}: unexpected member {member.name!r}; expected "
                                 "English/Fnt/SampleNNN/*.png files")
            raw = archive.extractfile(member).read()
            pixels = None
            try:
                with Image.open(io.BytesIO(raw)) as image:
                    fmt, mode, size = image.format, image.mode, image.size
                    if fmt == "PNG" and mode == "L" and size == (28, 28):
                        pixels = np.asarray(image)
            except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
                raise ValueError(f"{path}: member {member.name!r} is not a valid "
                                 f"image ({exc})") from exc
            if pixels is None or pixels.dtype != np.uint8 or pixels.shape != (28, 28):
                raise ValueError(f"{path}: member {member.name!r} is a {fmt} image of "
                                 f"mode {mode!r} and size {size[0]}x{size[1]}; expected a 28x28 "
                                 "PNG of mode 'L' (8-bit grey)")
            entries.append((member.name, _CHARS74K_CLASS_OF_DIR[parts[2]], pixels))
    return entries


@functools.lru_cache(maxsize=2)
def _decode_chars74k(path):
    """Decode the (checksum-verified) Chars74K tar: read-only ``(X, y)``.

    Members are read in archive order and the result is sorted by member
    name. Cached per resolved path, since decoding takes a few seconds;
    callers must copy before handing the arrays out.
    """
    try:
        from PIL import Image
    except ImportError as exc:
        raise ImportError(
            "load_chars74k needs Pillow to decode the PNG images: pip install pillow"
        ) from exc
    try:
        entries = _read_chars74k_members(path, Image)
    except (tarfile.TarError, EOFError, zlib.error) as exc:
        raise ValueError(f"{path}: not a readable .tar.gz archive ({exc})") from exc
    entries.sort(key=lambda entry: entry[0])
    X = np.empty((len(entries), 28 * 28), dtype=np.uint8)
    for row, (_, _, pixels) in zip(X, entries):
        row[:] = pixels.ravel()
    y = np.array([label for _, label, _ in entries], dtype=np.int64)
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def _chars74k_path(data_home):
    """The verified manifest copy, else the subset rebuilt by ``fetch``."""
    home = get_data_home(data_home)
    rebuilt = home / CHARS74K_REBUILT
    if not (home / CHARS74K_FILE.path).exists() and rebuilt.is_file():
        return rebuilt
    return fetch_file(CHARS74K_FILE, data_home, False)


def load_chars74k(*, subset="all", test_size=0.25, random_state=0, data_home=None,
                  return_X_y=False):
    """Load the Chars74K EnglishFnt font characters (28x28, 34 classes).

    =================  ===================================
    Classes            34 (0-9, A-Z without I and O)
    Samples (all)      34544 (1016 per class)
    Samples (train)    25908 (with ``test_size=0.25``)
    Samples (test)      8636 (with ``test_size=0.25``)
    Features           784 pixels, uint8 0..255
    =================  ===================================

    Characters rendered from computer fonts, downscaled to 28x28 grey-level
    images (dark glyph on a light background), read from
    ``data_home/chars74k/chars74k-EnglishFnt-28x28-34class.tar.gz``
    (``data_home`` defaults to ``$MCSPARSE_DATA``, then ``~/mcsparse_data``)
    after checking its sha256. Without that file, the subset that
    ``python -m mcsparse.datasets fetch chars74k`` builds from the public
    archive (``chars74k-EnglishFnt-28x28-34class-rebuilt.tar.gz``, same
    layout, no fixed checksum: the same images downscaled by Pillow) is read
    instead. The file is not downloaded here. The class is the
    ``SampleNNN`` folder; samples are in the order of their file names.

    No train/test split is published, so "train" and "test" are a fixed
    stratified split made by :func:`sklearn.model_selection.train_test_split`
    with ``test_size`` and ``random_state``. Some fonts render identical
    images, so some images occur more than once within a class (and can fall
    on both sides of the split).

    Pillow is needed to decode the PNG images. The decoded arrays are cached
    in memory per file, so repeated calls in one process are fast; each call
    returns new arrays.

    Parameters
    ----------
    subset : {"train", "test", "all"}, default="all"
        Which part to load.
    test_size : float, default=0.25
        Fraction of each class in "test", in (0, 1). Ignored for "all".
    random_state : int, RandomState instance or None, default=0
        Seed of the split; an int gives the same split on every call. Ignored
        for "all".
    data_home : str or path-like, default=None
        Folder holding ``chars74k/``; see :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, 784) uint8 (divide by 255 for [0, 1]), ``images``
        (n_samples, 28, 28) uint8 (a view of ``data``), ``target``
        (n_samples,) int64 class index in 0..33, ``target_names`` (34,) str
        (the character of each class), ``subset``, ``DESCR``. Or
        ``(data, target)`` when ``return_X_y``.

    Raises
    ------
    FileNotFoundError
        If the file is missing (its path and ``MCSPARSE_DATA`` are named;
        ``python -m mcsparse.datasets fetch chars74k`` builds it).
    ImportError
        If Pillow is not installed.
    ValueError
        If ``subset`` or ``test_size`` is invalid, the file fails its
        checksum, or a member is not a 28x28 8-bit grey PNG.

    References
    ----------
    T. E. de Campos, B. R. Babu, M. Varma, "Character recognition in natural
    images", VISAPP 2009. Chars74K data set, University of Surrey (CVSSP);
    research use, cite the paper.

    Examples
    --------
    >>> from mcsparse.datasets import load_chars74k
    >>> bunch = load_chars74k(subset="train")  # doctest: +SKIP
    >>> bunch.data.shape, bunch.target_names[bunch.target[0]]  # doctest: +SKIP
    ((25908, 784), '0')
    """
    _check_subset(subset, ["train", "test"])
    if (isinstance(test_size, bool) or not isinstance(test_size, numbers.Real)
            or not 0 < test_size < 1):
        raise ValueError(f"test_size must be a float in (0, 1), got {test_size!r}")
    path = _chars74k_path(data_home)
    X, y = _decode_chars74k(str(path.resolve()))
    if X.shape[0] != _CHARS74K_N_SAMPLES:
        raise ValueError(f"{path}: {X.shape[0]} images, expected {_CHARS74K_N_SAMPLES}")
    if subset == "all":
        X, y = X.copy(), y.copy()
    else:
        from sklearn.model_selection import train_test_split

        train, test = train_test_split(np.arange(len(y)), test_size=test_size,
                                       stratify=y, random_state=random_state)
        idx = np.sort(train if subset == "train" else test)
        X, y = X[idx], y[idx]
    if return_X_y:
        return X, y
    return Bunch(data=X, images=X.reshape(-1, 28, 28), target=y,
                 target_names=CHARS74K_TARGET_NAMES.copy(), subset=subset,
                 DESCR="Chars74K EnglishFnt: computer-font characters 0-9 and A-Z "
                       "(without I and O), 28x28 grey-level images, 1016 per class.")


def load_libsvm(name, *, subset="train", data_home=None, return_X_y=False):
    """Load a multiclass LIBSVM data set (svm-scale'd, dense output).

    ===========  ========  ========  =======  ===============================
    name         features  classes   train    test
    ===========  ========  ========  =======  ===============================
    segment      19        7         2310     --
    vowel        10        11        528      --
    wine         13        3         178      --
    satimage     36        6         4435     --
    dna          180       3         2000     1186
    ===========  ========  ========  =======  ===============================

    Parameters
    ----------
    name : {"segment", "vowel", "wine", "satimage", "dna"}
        The data set (files under ``data_home/libsvm/``).
    subset : {"train", "test", "all"}, default="train"
        "test" and "all" only for ``dna``.
    data_home : str or path-like, default=None
        Folder holding ``libsvm/``; see :func:`get_data_home`.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : Bunch
        ``data`` (n_samples, n_features) float64, ``target`` (n_samples,)
        int64. Or ``(data, target)`` when ``return_X_y``.

    Raises
    ------
    ValueError
        If ``name`` or ``subset`` is unknown, or a file fails its checksum.
    FileNotFoundError
        If a file is missing (``python -m mcsparse.datasets fetch libsvm``
        downloads them).

    References
    ----------
    C.-C. Chang, C.-J. Lin, "LIBSVM: a library for support vector machines",
    ACM TIST 2(3), 2011; see each data set's original source there.

    Examples
    --------
    >>> from mcsparse.datasets import load_libsvm
    >>> X, y = load_libsvm("wine", return_X_y=True)  # doctest: +SKIP
    """
    if not isinstance(name, str) or name not in LIBSVM_FILES:
        raise ValueError(f"name must be one of {sorted(LIBSVM_FILES)}, got {name!r}")
    n_features, files = LIBSVM_FILES[name]
    Xs, ys = [], []
    for part in _check_subset(subset, list(files)):
        X, y = load_svmlight_file(str(fetch_file(files[part], data_home, False)),
                                  n_features=n_features)
        Xs.append(X.toarray())
        ys.append(y.astype(np.int64))
    return _bunch(np.vstack(Xs), np.concatenate(ys), return_X_y, subset=subset,
                  DESCR=f"LIBSVM multiclass data set {name!r}, scaled by svm-scale.")


__all__ = ["load_pendigits", "load_mnist", "load_satimage", "load_letter",
           "load_chars74k", "load_libsvm"]
