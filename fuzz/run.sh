#!/usr/bin/env bash
# Build every fuzz/fuzz_*.c target with clang (libFuzzer + ASan + UBSan) against the library
# sources, and run each for FUZZ_SECONDS (default 60) from a corpus seeded with examples/ and
# tests/data/. Any crash, leak, timeout or out-of-memory fails the run; findings are kept in
# build-fuzz/findings/ for turning into regression tests.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH="${FUZZ_SECONDS:-60}"
OUT=build-fuzz
mkdir -p "$OUT/findings"
CFLAGS=(-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -fsanitize=fuzzer-no-link,address,undefined
        -fno-sanitize-recover=undefined -Iinclude -Ilib -DTFJOB_BUILDING_LIBRARY)
LIBS=($(pkg-config --libs yaml-0.1 jansson) -lm)
# The library's pure-core sources (not the transport), read from lib/meson.build's core list.
mapfile -t SOURCES < <(sed -n "/^core_sources = files(/,/^)/p" lib/meson.build | grep -o "'[^']*\.c'" | tr -d "'" | sed 's|^|lib/|')

# The library is compiled once (coverage-instrumented, sanitized) and linked into every target.
echo "--- building the library for fuzzing"
rm -rf "$OUT/obj"
mkdir -p "$OUT/obj"
objects=()
for src in "${SOURCES[@]}"; do
  obj="$OUT/obj/$(echo "$src" | tr '/' '_').o"
  clang "${CFLAGS[@]}" -c "$src" -o "$obj" &
  objects+=("$obj")
  [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ] && wait -n
done
wait
rm -f "$OUT/libtfjob-fuzz.a"
ar rcs "$OUT/libtfjob-fuzz.a" "${objects[@]}"

status=0
for target in fuzz/fuzz_*.c; do
  name=$(basename "$target" .c)
  echo "--- building $name"
  clang "${CFLAGS[@]}" -fsanitize=fuzzer "$target" "$OUT/libtfjob-fuzz.a" "${LIBS[@]}" -o "$OUT/$name"
  corpus="$OUT/corpus-$name"
  mkdir -p "$corpus"
  cp examples/*.yaml "$corpus/" 2>/dev/null || true
  find tests/data -type f -size -64k -exec cp {} "$corpus/" \; 2>/dev/null || true
  [ -d "fuzz/seeds/$name" ] && cp fuzz/seeds/"$name"/* "$corpus/"
  echo "--- running $name for ${SECONDS_EACH}s"
  if ! ASAN_OPTIONS=detect_leaks=1 "$OUT/$name" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
        -max_len=65536 -artifact_prefix="$OUT/findings/$name-" -print_final_stats=1 "$corpus" 2>"$OUT/$name.log"; then
    echo "!!! $name found a problem:"; tail -40 "$OUT/$name.log"; status=1
  else
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$OUT/$name.log" || true
  fi
done
exit $status
