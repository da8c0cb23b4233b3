#!/usr/bin/env bash
# The controller's unit tests (threads: workers, watches, the manager), the memory backend's
# (its watches' threads) and tfjob-operator's (libmicrohttpd threads, the deadline reaper, the
# TLS store, the certificate thread) under ThreadSanitizer, in
# build-tsan. tests/tsan.supp silences jansson's reference counting only (see the file).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build-tsan
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" -Db_sanitize=thread -Db_lundef=false -Dbuildtype=debug -Dbench=false >/dev/null
fi
ninja -C "$BUILD_DIR" >/dev/null
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 suppressions=$PWD/tests/tsan.supp"
meson test -C "$BUILD_DIR" --print-errorlogs test_controller test_controller_internal test_events test_event_text test_memory test_operator
