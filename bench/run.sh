#!/usr/bin/env bash
# Build libtfjob into a private prefix (as tests/suites/85-go.sh does), build bench_core and the
# Go bench (training-operator v1.9.2 from the Go module proxy), and print the side-by-side table.
#   bench/run.sh [bench flags...]     e.g. bench/run.sh -runs 51 -batch 50ms -clock wall
# BENCH_JSON=FILE also writes every measurement as JSON. The first run downloads Go modules.
# It starts with bench_core --ratio (RATIO_RUNS rounds, default 101; RATIO_BATCH_NS, default 5 ms).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
prefix="$root/.cache/bench-prefix"
build=build-bench
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" --prefix="$prefix" --libdir=lib --buildtype=release -Dtests=false -Dbench=true >/dev/null
fi
ninja -C "$build" >/dev/null
meson install -C "$build" --quiet >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
export LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export CGO_ENABLED=1
tags=()
# TF_CONFIG columns need tfjob_tf_config (include/tfjob/graph.h, branch graph).
if [ -f "$prefix/include/tfjob/graph.h" ]; then tags=(-tags tfconfig); fi
cd bench/go
go build "${tags[@]}" -o "$root/$build/bench-go" .
cd "$root"
# Issue 15's ratio first: parse+default+validate over libyaml / jansson alone, interleaved.
"$build/bench-go" -examples examples -out "$build/inputs" -emit-only >/dev/null
echo "parse+default+validate over the parser alone (bench_core --ratio, CPU clock, interleaved):"
"$build/bench/bench_core" --ratio --runs "${RATIO_RUNS:-101}" --min-ns "${RATIO_BATCH_NS:-5000000}" \
  "$build/inputs/tfjob-ps-worker.yaml" "$build/inputs/tfjob-ps-worker.json" "$build/inputs/gen-1000.yaml"
echo
exec "$build/bench-go" -examples examples -cbench "$build/bench/bench_core" ${BENCH_JSON:+-json "$BENCH_JSON"} "$@"
