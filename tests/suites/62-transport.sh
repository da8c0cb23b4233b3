#!/usr/bin/env bash
# The transport layer: the Kubernetes REST backend against the scripted fault server
# (tests/transport/fault_server.py, plain HTTP and HTTPS with generated certificates), plus the
# memory backend and watch-splitter unit tests, and tfjobctl's cluster commands.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
command -v python3 >/dev/null || { echo "62-transport: python3 is required" >&2; exit 1; }
command -v openssl >/dev/null || { echo "62-transport: openssl is required" >&2; exit 1; }
meson test -C build --print-errorlogs --suite transport
meson test -C build --print-errorlogs test_memory test_watch_splitter
if [ -f tests/transport/test_tfjobctl.py ]; then
  TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl" python3 tests/transport/test_tfjobctl.py
fi
