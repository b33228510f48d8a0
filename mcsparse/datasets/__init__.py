"""Real data sets: bundled (pendigits) or read from the data home with checksums.

The data home is the ``data_home`` argument, else the ``MCSPARSE_DATA``
environment variable, else ``~/mcsparse_data``. :func:`fetch` (or
``python -m mcsparse.datasets fetch NAME``) downloads a set there from its
original public source.
"""

from ._base import get_data_home
from ._chars74k_build import build_chars74k_subset
from ._deform import deform_images
from ._fetch import fetch
from ._loaders import (
    load_chars74k,
    load_letter,
    load_libsvm,
    load_mnist,
    load_pendigits,
    load_satimage,
)

__all__ = [
    "build_chars74k_subset",
    "deform_images",
    "fetch",
    "get_data_home",
    "load_chars74k",
    "load_letter",
    "load_libsvm",
    "load_mnist",
    "load_pendigits",
    "load_satimage",
]
