#!/usr/bin/env bash
# Release builds stay warning-free: what a packager runs, `meson setup B --buildtype=release`
# (-O3, werror on as the project sets it) with gcc, and clang at -O2 with
# -Db_sanitize=none -Dwerror=true; each builds everything (library, tools, tests, benchmarks) with
# -Wall -Wextra -Werror, and the gcc one runs the unit tests, as optimisation can change what
# undefined behaviour does. (gcc -O2 and clang -O3 build too; they are left out to keep CI short:
# 10-unit.sh builds both compilers at -O2 -g already.) The build directories are kept between
# runs (build-release-gcc, build-release-clang), so a second run only rebuilds what changed.
# Measured on 2 cores: 82 s from scratch (27 s + 24 s of builds, 31 s of unit tests), 44 s with
# nothing to rebuild.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$SECONDS
# configure DIR CC OPTIONS...: set DIR up once with the compiler CC
configure() {
  local dir="$1" cc="$2"; shift 2
  if [ ! -f "$dir/build.ninja" ]; then
    CC="$cc" meson setup "$dir" "$@" >/dev/null
  fi
  # the options of an existing directory, set again (a run after these lines change)
  meson configure "$dir" "$@" >/dev/null
  grep -q "^C compiler for the host machine: $cc " "$dir/meson-logs/meson-log.txt" ||
    { echo "FAIL: $dir is not set up with $cc: remove it" >&2; exit 1; }
}
# build DIR: ninja, its output shown only when it fails (the warning that broke it)
build() {
  local out
  if ! out=$(ninja -C "$1" 2>&1); then
    printf '%s\n' "$out" | grep -E 'error|warning|FAILED' >&2 || printf '%s\n' "$out" >&2
    echo "FAIL: the build in $1 ($2) fails" >&2
    exit 1
  fi
  echo "$1 ($2): built in $((SECONDS - t)) s"
}
t=$SECONDS
configure build-release-gcc gcc --buildtype=release
build build-release-gcc "gcc --buildtype=release"
t=$SECONDS
configure build-release-clang clang -Doptimization=2 -Ddebug=false -Db_sanitize=none -Dwerror=true
build build-release-clang "clang -O2 -Db_sanitize=none -Dwerror=true"
t=$SECONDS
meson test -C build-release-gcc --print-errorlogs --suite unit
echo "unit tests of the gcc release build: $((SECONDS - t)) s"
echo "48-release-build: ok ($((SECONDS - start)) s)"
