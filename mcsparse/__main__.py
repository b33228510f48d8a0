"""``python -m mcsparse``: the main job (see :mod:`mcsparse._cli`)."""

import sys

from ._cli import main

if __name__ == "__main__":
    sys.exit(main())
