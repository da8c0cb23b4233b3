#!/usr/bin/env bash
# Configure (once) and build libtfjob into ./build (or $BUILD_DIR). The suites send this script's
# standard output to /dev/null, so a failing step prints its output again on standard error.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
run_loudly_on_failure() {
  local out
  if [ -t 1 ]; then "$@"; return; fi
  if ! out="$("$@" 2>&1)"; then
    printf '%s\n' "$out" >&2
    echo "scripts/build.sh: '$*' failed (its output is above)" >&2
    return 1
  fi
  printf '%s\n' "$out"
}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  run_loudly_on_failure meson setup "$BUILD_DIR" "$@"
fi
run_loudly_on_failure ninja -C "$BUILD_DIR"
