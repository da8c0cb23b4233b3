#!/usr/bin/env bash
# The Kueue suite, always: builds Kueue v0.17.0's manager when it is not cached yet
# (tests/kueue/kueue.sh build: about 7 minutes on 2 cores, once per machine), then runs
# tests/suites/71-kueue.sh (which CI skips on a machine without that binary) and prints how long
# each part took. KUEUE_OUT=DIR keeps the results there (default build/kueue).
set -euo pipefail
cd "$(dirname "$0")/.."
t0=$SECONDS
tests/kueue/kueue.sh build >/dev/null
t1=$SECONDS
status=0
bash tests/suites/71-kueue.sh || status=$?
t2=$SECONDS
echo "bench/kueue.sh: Kueue build $((t1 - t0)) s, suite $((t2 - t1)) s, status $status"
exit $status
