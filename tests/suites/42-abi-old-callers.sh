#!/usr/bin/env bash
# Callers built against an older ABI (docs/abi.md, "Versioned structs"): tests/abi/v0.1_callers.c,
# compiled against the frozen headers of libtfjob 0.1 (tests/abi/v0.1/include), runs against the
# current library, both under AddressSanitizer + UndefinedBehaviorSanitizer. Each versioned struct
# is a heap block of its 0.1 size: a library that reads or writes past it fails here.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build-asan # shared with tests/suites/20-sanitizers.sh
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  meson setup "$BUILD_DIR" -Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug >/dev/null
fi
ninja -C "$BUILD_DIR" >"$BUILD_DIR/ninja.log" 2>&1 || { tail -n 40 "$BUILD_DIR/ninja.log"; exit 1; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
"${CC:-cc}" -std=c11 -Wall -Wextra -Werror -g -fsanitize=address,undefined -fno-omit-frame-pointer \
  -Itests/abi/v0.1/include tests/abi/v0.1_callers.c -o "$TMP/v0.1_callers" \
  -L"$BUILD_DIR/lib" -ltfjob -Wl,-rpath,"$PWD/$BUILD_DIR/lib"
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
"$TMP/v0.1_callers"
