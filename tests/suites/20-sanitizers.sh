#!/usr/bin/env bash
# The unit tests under AddressSanitizer + UndefinedBehaviorSanitizer (leak detection on), in build-asan.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build-asan
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug >/dev/null
fi
ninja -C "$BUILD_DIR" >/dev/null
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
meson test -C "$BUILD_DIR" --suite unit --print-errorlogs
# The CLI contract under the sanitizers too.
bash tests/cli/test_tfjobctl.sh "$BUILD_DIR/src/tfjobctl/tfjobctl" >/dev/null
bash tests/cli/test_tfjobctl_kubectl.sh "$BUILD_DIR/src/tfjobctl/tfjobctl" >/dev/null
# tfjobctl completion reads every command's help back from memory (a sanitizer build does not
# make the completion scripts, so it is run here).
for shell in bash zsh fish; do "$BUILD_DIR/src/tfjobctl/tfjobctl" completion "$shell" >/dev/null; done
