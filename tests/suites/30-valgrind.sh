#!/usr/bin/env bash
# The unit tests under valgrind memcheck: any error or definite/indirect leak fails the run.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind is not installed (scripts/setup.sh)" >&2; exit 1; }
BUILD_DIR=build scripts/build.sh >/dev/null
# Check forks each test by default; run them in-process so valgrind sees everything.
export CK_FORK=no
meson test -C build --suite unit --print-errorlogs --timeout-multiplier 10 \
  --wrap='valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect --quiet'
