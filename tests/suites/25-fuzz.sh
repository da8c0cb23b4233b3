#!/usr/bin/env bash
# A short libFuzzer run (ASan + UBSan) of the foundation's parse/validate/default path
# (tests/fuzz/fuzz_job.c), seeded with the examples and the bad-input corpus.
# FUZZ_SECONDS (default 30) sets the length; crashes are kept in build-fuzz/crashes.
set -euo pipefail
cd "$(dirname "$0")/../.."
CLANG="${CLANG:-clang}"
command -v "$CLANG" >/dev/null || { echo "clang is needed for libFuzzer (scripts/setup.sh)" >&2; exit 1; }
OUT=build-fuzz
mkdir -p "$OUT/corpus" "$OUT/crashes"
"$CLANG" -g -O1 -std=c11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -DTFJOB_BUILDING_LIBRARY -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -Iinclude -Ilib \
  tests/fuzz/fuzz_job.c lib/*.c lib/doc/*.c \
  $(pkg-config --cflags --libs yaml-0.1 jansson) -lm -o "$OUT/fuzz_job"
for f in examples/*.yaml tests/data/bad/*; do
  case "$f" in *alias-bomb*) continue ;; esac   # far over the fuzzer's node budget: slow, not useful
  cp "$f" "$OUT/corpus/"
done
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  "$OUT/fuzz_job" -max_total_time="${FUZZ_SECONDS:-30}" -max_len=8192 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$OUT/crashes/" -print_final_stats=1 "$OUT/corpus" 2>"$OUT/fuzz.log" || {
  tail -n 60 "$OUT/fuzz.log" >&2
  echo "fuzz_job found a failure; inputs are in $OUT/crashes" >&2
  exit 1
}
grep -E '^stat::number_of_executed_units|^Done' "$OUT/fuzz.log" || true
