#!/usr/bin/env bash
# Instruction counts per operation (valgrind --tool=callgrind on bench_core --profile), which do
# not depend on the machine's load, and the hot spots of parse+default+validate.
#   bench/profile.sh [N]     N operations per input (default 200)
#   PROFILE_RATIO_ONLY=1 bench/profile.sh [N]   only the last table (pdv over the parser alone)
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
# The issue-15 ratio in instructions: parse+default+validate over the third-party parser alone on
# the same bytes (bench_core --op lib: libyaml's events, or jansson's json_loadb; --op libdoc:
# libyaml building its own document tree; --op tree: the job's jansson tree copied and freed).
per_op() { # per_op OP FILE: instructions per operation, start-up subtracted
  local a a1
  a=$(count /dev/null "$build/bench/bench_core" --profile "$n" --op "$1" "$2")
  a1=$(count /dev/null "$build/bench/bench_core" --profile 1 --op "$1" "$2")
  echo $(( (a - a1) / (n - 1) ))
}
ratio_table() {
  echo "parse+default+validate over the parser alone (Ir/op; the 1.3x goal of issue 15):"
  for file in tfjob-ps-worker.yaml tfjob-ps-worker.json; do
    pdv=$(per_op pdv "$out/$file")
    ops=(lib)
    case "$file" in *.yaml) ops+=(libdoc) ;; esac
    for op in "${ops[@]}"; do
      base_ir=$(per_op "$op" "$out/$file")
      printf '%-24s pdv %8d  %-6s %8d  ratio %s\n' "$file" "$pdv" "$op" "$base_ir" \
        "$(awk -v a="$pdv" -v b="$base_ir" 'BEGIN { printf "%.3fx", a / b }')"
    done
    case "$file" in *.yaml)
      # The least any YAML path to a jansson tree costs: libyaml's events plus building and
      # freeing the same tree (a json_deep_copy: no parsing, no UTF-8 checks).
      lib_ir=$(per_op lib "$out/$file") tree_ir=$(per_op tree "$out/$file")
      floor=$(( lib_ir + tree_ir ))
      printf '%-24s floor = lib %d + jansson tree %d = %d  floor/lib %s  pdv/floor %s\n' "$file" "$lib_ir" \
        "$tree_ir" "$floor" "$(awk -v a="$floor" -v b="$lib_ir" 'BEGIN { printf "%.3fx", a / b }')" \
        "$(awk -v a="$pdv" -v b="$floor" 'BEGIN { printf "%.3fx", a / b }')" ;;
    esac
  done
}
if [ -n "${PROFILE_RATIO_ONLY:-}" ]; then ratio_table; exit 0; fi
printf '%-24s %22s %22s\n' input "parse+default+validate" "TF_CONFIG (1 replica)"
while read -r spec; do
  file="${spec%%:*}"
  base=$(basename "$file" .yaml)
  # Subtract a run of 1 operation to remove start-up costs: (N ops - 1 op) / (N - 1).
  a=$(count "$root/$build/cg-$base-pdv.out" "$build/bench/bench_core" --profile "$n" "$file")
  a1=$(count "$root/$build/cg-$base-pdv-1.out" "$build/bench/bench_core" --profile 1 "$file")
  b=$(count "$root/$build/cg-$base-tfcfg.out" "$build/bench/bench_core" --profile "$n" "$spec")
  b1=$(count /dev/null "$build/bench/bench_core" --profile 1 "$spec")
  printf '%-24s %16d Ir/op %16d Ir/op\n' "$base" $(( (a - a1) / (n - 1) )) $(( (b - b1) / (n - 1) ))
done < "$root/$build/inputs.txt"
echo
echo "hot spots of parse+default+validate (tfjob-ps-worker, inclusive):"
callgrind_annotate --inclusive=yes "$root/$build/cg-tfjob-ps-worker-pdv.out" 2>/dev/null |
  grep -E 'tfjob_job_parse |tfjob_job_apply_defaults |tfjob_job_validate |tfjob__schema_check |yaml_parser_parse |json_deep_copy |tfjob__path_(child|key|index) |tfjob_job_free |vfprintf' |
  grep -v '=>' | head -12

# Where the instructions of parse+default+validate are: inside libyaml / jansson (what libtfjob's
# own functions, and jansson.h's inline json_decref within them, call there, inclusive, with the
# mallocs those libraries make) or in libtfjob's code (the rest, with its own mallocs). Per
# operation, start-up subtracted as above.
lib_split() { # lib_split FILE: "YAML_IR JANSSON_IR PDV_IR" of a callgrind file (whole run)
  local yj t
  yj=$(callgrind_annotate --tree=calling --inclusive=yes --auto=no --threshold=100 "$1" 2>/dev/null | awk '
    /\*  / { me = ($0 !~ /\[\/(usr\/)?lib/); next }   # libtfjob, or our code inlined from a header (json_decref)
    /^ *[0-9,]+ \(.*>   / { if (!me) next; v=$1; gsub(",","",v); if ($0 ~ /libyaml/) y+=v; else if ($0 ~ /libjansson/) j+=v }
    END { print y+0, j+0 }')
  t=$(callgrind_annotate --inclusive=yes --auto=no --threshold=100 "$1" 2>/dev/null |
    awk '/bench_core\.c:op_pdv \[/ && !done { v=$1; gsub(",","",v); t=v; done=1 } END { print t+0 }')
  echo "$yj $t"
}
echo
echo "parse+default+validate split (Ir/op): inside libyaml, inside jansson, libtfjob's own code"
for base in tfjob-ps-worker tfjob-ps-worker.json; do
  read -r y j t < <(lib_split "$root/$build/cg-$base-pdv.out")
  read -r y1 j1 t1 < <(lib_split "$root/$build/cg-$base-pdv-1.out")
  yo=$(( (y - y1) / (n - 1) )) jo=$(( (j - j1) / (n - 1) )) to=$(( (t - t1) / (n - 1) ))
  printf '%-24s libyaml %8d (%2d%%)  jansson %8d (%2d%%)  libtfjob %8d (%2d%%)  of %8d\n' "$base" \
    "$yo" $(( 100 * yo / to )) "$jo" $(( 100 * jo / to )) $(( to - yo - jo )) $(( 100 * (to - yo - jo) / to )) "$to"
done
echo
ratio_table
