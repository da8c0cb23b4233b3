#!/usr/bin/env bash
# Peak RSS of tfjob-operator (./build) on a fresh harness kube-apiserver (tests/kube/harness.sh):
#   bench/operator_rss.sh JOBS WORKERS [QPS BURST THREADS]
#   bench/operator_rss.sh 1 3000      one TFJob of 1 PS + 3,000 workers
#   bench/operator_rss.sh 500 2       500 TFJobs of 1 PS + 2 workers
# Prints one JSON line (bench/operator_rss.py). TFJOB_OPERATOR overrides the binary.
set -euo pipefail
cd "$(dirname "$0")/.."
H="$PWD/tests/kube/harness.sh"
"$H" build >/dev/null
dir="$(mktemp -d)"
trap '"$H" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$H" start "$dir" >/dev/null 2>&1
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
python3 bench/operator_rss.py "${TFJOB_OPERATOR:-$PWD/build/src/tfjob-operator/tfjob-operator}" "$@"
