#!/usr/bin/env bash
# Instruction counts per operation (valgrind --tool=callgrind on bench_core --profile), which do
# not depend on the machine's load, and the hot spots of parse+default+validate.
#   bench/profile.sh [N]     N operations per input (default 200)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
n="${1:-200}"
build=build-profile
prefix="$root/.cache/profile-prefix"
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --prefix="$prefix" --libdir=lib -Dtests=false -Dbench=true >/dev/null
fi
ninja -C "$build" >/dev/null
meson install -C "$build" --quiet >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig" LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" CGO_ENABLED=1
out="$root/$build/inputs"
(cd bench/go && go run . -examples "$root/examples" -out "$out" -emit-only) > "$root/$build/inputs.txt"
count() { # count OUTFILE ARGS...: instructions of the whole run
  local f="$1"; shift
  valgrind --tool=callgrind --callgrind-out-file="$f" "$@" 2>&1 | sed -n 's/.*Collected : //p'
}
printf '%-24s %22s %22s\n' input "parse+default+validate" "TF_CONFIG (1 replica)"
while read -r spec; do
  file="${spec%%:*}"
  base=$(basename "$file" .yaml)
  # Subtract a run of 1 operation to remove start-up costs: (N ops - 1 op) / (N - 1).
  a=$(count "$root/$build/cg-$base-pdv.out" "$build/bench/bench_core" --profile "$n" "$file")
  a1=$(count /dev/null "$build/bench/bench_core" --profile 1 "$file")
  b=$(count "$root/$build/cg-$base-tfcfg.out" "$build/bench/bench_core" --profile "$n" "$spec")
  b1=$(count /dev/null "$build/bench/bench_core" --profile 1 "$spec")
  printf '%-24s %16d Ir/op %16d Ir/op\n' "$base" $(( (a - a1) / (n - 1) )) $(( (b - b1) / (n - 1) ))
done < "$root/$build/inputs.txt"
echo
echo "hot spots of parse+default+validate (tfjob-ps-worker, inclusive):"
callgrind_annotate --inclusive=yes "$root/$build/cg-tfjob-ps-worker-pdv.out" 2>/dev/null |
  grep -E 'tfjob_job_parse |tfjob_job_apply_defaults |tfjob_job_validate |tfjob__schema_check |yaml_parser_parse |json_deep_copy |tfjob__path_(child|key|index) |tfjob_job_free |vfprintf' |
  grep -v '=>' | head -12
