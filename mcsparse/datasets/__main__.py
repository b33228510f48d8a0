"""``python -m mcsparse.datasets``: download the data sets into the data home.

``fetch NAME [NAME ...]`` (or ``fetch all``) downloads from the original
public sources; ``list`` shows each set, where it goes and whether it is
there; ``build-chars74k ARCHIVE`` builds the Chars74K subset from an
``EnglishFnt.tgz`` obtained by hand.
"""

import argparse
import sys

from ._base import FETCH_NAMES, get_data_home
from ._chars74k_build import build_chars74k_subset
from ._fetch import SOURCES, fetch
from ._loaders import CHARS74K_FILE, CHARS74K_REBUILT


def _parser():
    parser = argparse.ArgumentParser(
        prog="python -m mcsparse.datasets",
        description="Download the mcsparse data sets from their original public "
                    "sources into the data home (--data-home, else $MCSPARSE_DATA, "
                    "else ~/mcsparse_data), checking every file's sha256.")
    parser.add_argument("--data-home", default=None,
                        help="folder to write into (default: $MCSPARSE_DATA, else "
                             "~/mcsparse_data)")
    commands = parser.add_subparsers(dest="command", required=True)
    fetch_cmd = commands.add_parser("fetch", help="download data sets")
    fetch_cmd.add_argument("names", nargs="+", choices=list(FETCH_NAMES) + ["all"],
                           metavar="NAME", help=f"one of {', '.join(FETCH_NAMES)}, or all")
    fetch_cmd.add_argument("--no-progress", action="store_true",
                           help="no progress bar")
    commands.add_parser("list", help="list the data sets and whether they are there")
    build = commands.add_parser("build-chars74k",
                                help="build the Chars74K subset from EnglishFnt.tgz")
    build.add_argument("archive", help="the EnglishFnt.tgz file")
    return parser


def _targets(name):
    if name == "chars74k":
        return [CHARS74K_FILE.path, CHARS74K_REBUILT]
    return [target.path for source in SOURCES[name] for _, target in source.files]


def main(argv=None):
    """Run the command line; return the exit status."""
    args = _parser().parse_args(argv)
    home = get_data_home(args.data_home)
    try:
        if args.command == "list":
            print(f"data home: {home}")
            for name in FETCH_NAMES:
                paths = _targets(name)
                present = [p for p in paths if (home / p).is_file()]
                state = ("present" if present and (name == "chars74k" or present == paths)
                         else f"{len(present)} of {len(paths)} files" if present
                         else "missing")
                print(f"  {name:10s} {state}")
            return 0
        if args.command == "build-chars74k":
            print(build_chars74k_subset(args.archive, home / CHARS74K_REBUILT))
            return 0
        names = list(FETCH_NAMES) if "all" in args.names else list(dict.fromkeys(args.names))
        for name in names:
            for path in fetch(name, home, progressbar=not args.no_progress):
                print(path)
    except (OSError, ValueError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
