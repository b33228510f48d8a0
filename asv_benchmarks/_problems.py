"""The command line of the measurement scripts that run named problems.

``default_alpha.py`` and ``cv_vs_grid.py`` take problem names (all by
default) and ``--output``, a record written by
:func:`mcsparse.utils.records.save_full_run` with the command that made it.
"""

import argparse
import sys
from pathlib import Path


def run_problems(doc, problems, run, script, argv=None, extra=None):
    """Parse ``argv``, run the named ``problems`` in turn, write the record if asked.

    ``run(name)`` returns a problem's results; ``extra`` (a dict) is added to
    the record; ``script`` is the calling script's ``__file__``. Returns the
    exit status, 0.
    """
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("problems", nargs="*", metavar="PROBLEM",
                        help=f"of {', '.join(problems)} (default: all)")
    parser.add_argument("--output", default=None, help="write the results to this .json")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.problems) - set(problems))
    if unknown:
        parser.error(f"unknown problems {unknown}; choose from {list(problems)}")
    results = {name: run(name) for name in (args.problems or problems)}
    results.update(extra or {})
    if args.output:
        from mcsparse.utils.records import save_full_run

        command = " ".join(["python", f"asv_benchmarks/{Path(script).name}",
                            *(sys.argv[1:] if argv is None else argv)])
        save_full_run(args.output, results, script=script, command=command)
    return 0
