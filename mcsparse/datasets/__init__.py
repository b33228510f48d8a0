"""Real data sets: bundled (pendigits) or read from the data home with checksums.

The data home is the ``data_home`` argument, else the ``MCSPARSE_DATA``
environment variable, else ``~/mcsparse_data``.
"""

from ._base import get_data_home
from ._deform import deform_images
from ._loaders import (
    load_chars74k,
    load_letter,
    load_libsvm,
    load_mnist,
    load_pendigits,
    load_satimage,
)

__all__ = [
    "deform_images",
    "get_data_home",
    "load_chars74k",
    "load_letter",
    "load_libsvm",
    "load_mnist",
    "load_pendigits",
    "load_satimage",
]
