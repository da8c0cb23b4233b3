#!/usr/bin/env bash
# Install, build and run every test suite. Prints a closing line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh || exit 1

passed=0
failed=0
failures=()

# run NAME COMMAND...: one suite; its result counts in the closing line.
run() {
  local name="$1"; shift
  echo "=== $name"
  local start=$SECONDS
  if "$@"; then
    passed=$((passed + 1)); echo "=== $name: ok ($((SECONDS - start)) s)"
  else
    failed=$((failed + 1)); failures+=("$name"); echo "=== $name: FAILED ($((SECONDS - start)) s)"
  fi
}

for suite in tests/suites/*.sh; do
  run "$(basename "$suite" .sh)" bash "$suite"
done

echo
if [ "${#failures[@]}" -gt 0 ]; then echo "failed suites: ${failures[*]}"; fi
echo "suites: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
