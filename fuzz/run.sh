#!/usr/bin/env bash
# Build every fuzz/fuzz_*.c target with clang (libFuzzer + ASan + UBSan) against the library
# sources, and run each for FUZZ_SECONDS (default 60; FUZZ_JOBS at once, default nproc) from a corpus seeded with examples/,
# tests/data/ and fuzz/seeds/TARGET/. Any crash, leak, timeout or out-of-memory fails the run;
# findings are kept in build-fuzz/findings/ for turning into regression tests.
# FUZZ_TARGETS="fuzz_a fuzz_b" runs only those targets; FUZZ_REQUIRE_ALL=1 fails when a target
# cannot be built here (instead of skipping it).
# A target whose source says "fuzz-link: transport" is also linked with the transport sources
# (lib/transport, libcurl); "fuzz-ldflags: ..." adds link flags (e.g. -Wl,--wrap=fopen).
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

# build_archive NAME FLAG... -- SOURCE...: compile the sources with CFLAGS and the flags (as
# many at once as there are processors) into $OUT/obj and archive them as $OUT/NAME.
build_archive() {
  local archive=$1 flags=() objs=() src obj
  shift
  while [ "$1" != -- ]; do flags+=("$1"); shift; done
  shift
  for src in "$@"; do
    obj="$OUT/obj/$(echo "$src" | tr '/' '_').o"
    clang "${CFLAGS[@]}" "${flags[@]}" -c "$src" -o "$obj" &
    objs+=("$obj")
    [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ] && wait -n
  done
  wait
  rm -f "$OUT/$archive"
  ar rcs "$OUT/$archive" "${objs[@]}"
}

# The library is compiled once (coverage-instrumented, sanitized) and linked into every target.
echo "--- building the library for fuzzing"
rm -rf "$OUT/obj"
mkdir -p "$OUT/obj"
build_archive libtfjob-fuzz.a -- "${SOURCES[@]}"

# The transport (every source of lib/transport/meson.build but kube_disabled.c), for the targets
# that ask for it; only when libcurl is there.
have_transport=0
if grep -l 'fuzz-link: transport' fuzz/fuzz_*.c >/dev/null 2>&1 && pkg-config --exists libcurl; then
  echo "--- building the transport for fuzzing"
  mapfile -t TSOURCES < <(sed -n "/^transport_sources = files(/,/^)/p;/^  transport_sources += files($/,/^  )/p" \
                          lib/transport/meson.build | grep -o "'[^']*\.c'" | tr -d "'" | grep -v kube_disabled | sed 's|^|lib/transport/|')
  # shellcheck disable=SC2046 # the flags of pkg-config are words
  build_archive libtfjob-fuzz-transport.a -DTFJOB_HAVE_TRANSPORT $(pkg-config --cflags libcurl) -- "${TSOURCES[@]}"
  have_transport=1
fi

status=0
built=()
for target in fuzz/fuzz_*.c; do
  name=$(basename "$target" .c)
  if [ -n "${FUZZ_TARGETS:-}" ] && ! [[ " $FUZZ_TARGETS " == *" $name "* ]]; then
    continue
  fi
  extra=() extra_libs=()
  if grep -q 'fuzz-link: transport' "$target"; then
    if [ "$have_transport" != 1 ]; then
      echo "--- skipping $name: libcurl not found (the transport is not built)"
      [ "${FUZZ_REQUIRE_ALL:-0}" = 1 ] && status=1
      continue
    fi
    extra+=(-DTFJOB_HAVE_TRANSPORT $(pkg-config --cflags libcurl) "$OUT/libtfjob-fuzz-transport.a")
    extra_libs+=($(pkg-config --libs libcurl) -lpthread)
  fi
  read -r -a ldflags <<<"$(sed -n 's/.*fuzz-ldflags: *//p' "$target" | head -1)"
  echo "--- building $name"
  clang "${CFLAGS[@]}" -fsanitize=fuzzer "$target" "${extra[@]}" "$OUT/libtfjob-fuzz.a" "${LIBS[@]}" "${extra_libs[@]}" "${ldflags[@]}" -o "$OUT/$name"
  corpus="$OUT/corpus-$name"
  mkdir -p "$corpus"
  cp examples/*.yaml "$corpus/" 2>/dev/null || true
  find tests/data -type f -size -64k -exec cp {} "$corpus/" \; 2>/dev/null || true
  [ -d "fuzz/seeds/$name" ] && cp fuzz/seeds/"$name"/* "$corpus/"
  built+=("$name")
done

# fuzz_one NAME: run one target for its time; its exit status goes to $OUT/NAME.rc.
fuzz_one() {
  local rc=0
  ASAN_OPTIONS=detect_leaks=1 "$OUT/$1" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$OUT/findings/$1-" -print_final_stats=1 "$OUT/corpus-$1" 2>"$OUT/$1.log" || rc=$?
  echo "$rc" >"$OUT/$1.rc"
}

# Each target gets its whole time on a processor of its own: FUZZ_JOBS (default: the number of
# processors) run side by side.
jobs_at_once="${FUZZ_JOBS:-$(nproc)}"
for name in "${built[@]}"; do
  echo "--- running $name for ${SECONDS_EACH}s"
  fuzz_one "$name" &
  [ "$(jobs -rp | wc -l)" -ge "$jobs_at_once" ] && wait -n
done
wait
for name in "${built[@]}"; do
  if [ "$(cat "$OUT/$name.rc" 2>/dev/null)" != 0 ]; then
    echo "!!! $name found a problem:"; tail -40 "$OUT/$name.log"; status=1
  else
    echo "--- $name:"; grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$OUT/$name.log" || true
  fi
done
exit $status
