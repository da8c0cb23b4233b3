#!/usr/bin/env bash
# Build with -Wall -Wextra -Werror under gcc and under clang, and run the Check unit tests of both.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
meson test -C build --print-errorlogs --suite unit
CC=clang BUILD_DIR=build-clang scripts/build.sh >/dev/null
meson test -C build-clang --print-errorlogs --suite unit
