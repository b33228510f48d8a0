#!/usr/bin/env bash
# The benchmark dashboard in one command, from the repository root:
#
#   bash asv_benchmarks/dashboard.sh [N_COMMITS [BENCH_REGEX]]
#
# benchmarks each of the last N_COMMITS commits of main (default 5; asv run
# --steps, commits already measured are skipped), publishes the results as
# HTML in asv_benchmarks/html (asv publish), then serves it at
# http://127.0.0.1:8080 (asv preview; Ctrl-C stops it). BENCH_REGEX picks
# benchmarks (default: all). Needs the bench extra (pip install ".[bench]")
# and a git clone; each commit is built in asv's own virtualenv.
#
# Environment: NO_PREVIEW=1 stops after publishing; ASV_QUICK=1 runs each
# benchmark once (asv run --quick); DASHBOARD_REV sets the branch or commit
# to end at (default main); ASV_CONFIG another asv.conf.json.
set -euo pipefail
cd "$(dirname "$0")"
n=${1:-5}
bench=${2:-.}
rev=${DASHBOARD_REV:-main}
config=${ASV_CONFIG:-asv.conf.json}
quick=()
if [ -n "${ASV_QUICK:-}" ] && [ "${ASV_QUICK}" != 0 ]; then quick=(--quick); fi

asv --config "$config" machine --yes > /dev/null
# rev~n..rev: the last n commits.
asv --config "$config" run --skip-existing-commits --show-stderr "${quick[@]}" \
    --steps "$n" --bench "$bench" "$rev~$n..$rev"
asv --config "$config" publish
if [ -z "${NO_PREVIEW:-}" ] || [ "${NO_PREVIEW}" = 0 ]; then
  asv --config "$config" preview
fi
