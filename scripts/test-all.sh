#!/usr/bin/env bash
# Install, build and run every test suite. Prints a closing line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1

passed=0
failed=0
failures=()
# Each suite's output also goes to a log, so the end of this script can repeat what failed
# (CI keeps only the tail of the output).
LOG_DIR="${TFJOB_SUITE_LOGS:-build-logs}"
mkdir -p "$LOG_DIR"
SUITE_PID=
# Ctrl-C or TERM: stop the running suite too.
trap '[ -n "$SUITE_PID" ] && kill -TERM "$SUITE_PID" 2>/dev/null; exit 130' INT TERM

# run NAME COMMAND...: one suite; its result counts in the closing line.
run() {
  local name="$1"; shift
  echo "=== $name"
  local start=$SECONDS
  # The suite writes to its log and tail streams it; a process a suite leaves behind holding
  # the output can't stall this script (tail stops when the suite itself exits).
  : >"$LOG_DIR/$name.log" # exists before tail opens it
  # A background command of a script starts with SIGINT ignored; the suite gets the default back
  # (tests that interrupt themselves, as Ctrl-C does, need it).
  ( trap - INT QUIT; exec "$@" ) >"$LOG_DIR/$name.log" 2>&1 &
  SUITE_PID=$!
  tail -n +1 -f --pid="$SUITE_PID" "$LOG_DIR/$name.log"
  if wait "$SUITE_PID"; then
    passed=$((passed + 1)); echo "=== $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "=== $name: FAILED ($((SECONDS - start)) s)"
  fi
}

for suite in tests/suites/*.sh; do
  run "$(basename "$suite" .sh)" bash "$suite"
done

echo
for name in "${failures[@]}"; do
  echo "=== $name failed; its failure lines and the end of its log ($LOG_DIR/$name.log):"
  grep -E "FAIL|DIFFERS|MISSING|[Ee]rror|panic|Assertion|Sanitizer|timed out" "$LOG_DIR/$name.log" | tail -n 40
  echo "--- last lines:"
  tail -n 40 "$LOG_DIR/$name.log"
done
if [ "${#failures[@]}" -gt 0 ]; then echo "failed suites: ${failures[*]}"; fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
