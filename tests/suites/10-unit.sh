#!/usr/bin/env bash
# Build with -Werror and run the Check unit tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
meson test -C build --print-errorlogs --suite unit
