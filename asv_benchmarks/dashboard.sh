#!/usr/bin/env bash
# The benchmark dashboard in one command, from the repository root:
#
#   bash asv_benchmarks/dashboard.sh [N_COMMITS [BENCH_REGEX]]
#
# benchmarks each of the last N_COMMITS commits of main (default 5; asv run
# --steps, commits already measured are skipped; 0 benchmarks nothing and
# shows the results committed in asv_benchmarks/results), publishes all the
# results as HTML in asv_benchmarks/html (asv publish), points the pages at
# local copies of their JavaScript libraries (offline_html.py: Debian's
# libjs-jquery, libjs-jquery-flot, libjs-jquery-stupidtable, node-blueimp-md5
# and libjs-bootstrap instead of the CDNs asv links to), then serves them at
# http://127.0.0.1:8080 (python -m http.server; Ctrl-C stops it). BENCH_REGEX
# picks benchmarks (default: all). Needs the bench extra (pip install
# ".[bench]"), the Debian packages above and a git clone; each commit is
# built in asv's own virtualenv.
#
# Environment: NO_PREVIEW=1 stops after publishing; ASV_QUICK=1 runs each
# benchmark once (asv run --quick); DASHBOARD_REV sets the branch or commit
# to end at (default main); DASHBOARD_PORT the port (default 8080);
# ASV_CONFIG another asv.conf.json.
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-5}
bench=${2:-.}
rev=${DASHBOARD_REV:-main}
port=${DASHBOARD_PORT:-8080}
config=${ASV_CONFIG:-asv.conf.json}
quick=()
if [ -n "${ASV_QUICK:-}" ] && [ "${ASV_QUICK}" != 0 ]; then quick=(--quick); fi

if [ "$n" != 0 ]; then
  asv --config "$config" machine --yes > /dev/null
  # rev~n..rev: the last n commits.
  asv --config "$config" run --skip-existing-commits --show-stderr "${quick[@]}" \
      --steps "$n" --bench "$bench" "$rev~$n..$rev"
fi
asv --config "$config" publish
# html_dir of the config, relative to the config's folder
html=$(python -c 'import json, os, sys
config = sys.argv[1]
html = json.load(open(config)).get("html_dir", "html")
print(os.path.join(os.path.dirname(os.path.abspath(config)), html))' "$config")
python offline_html.py "$html"
if [ -z "${NO_PREVIEW:-}" ] || [ "${NO_PREVIEW}" = 0 ]; then
  echo "serving $html at http://127.0.0.1:$port/ (Ctrl-C stops)"
  python -m http.server --bind 127.0.0.1 --directory "$html" "$port"
fi
