#!/usr/bin/env bash
# tfjob-operator beside training-operator v1.9.2, each alone on a fresh kube-apiserver of the
# head-to-head rig (tests/h2h/rig.sh, in a network namespace of its own: tests/h2h/netns.sh),
# with the stand-in kubelet of tests/h2h/kubelet.py; prints a table (a benchmark, not a test).
#
#   bench/operator.sh                       N = 100 and 500, qps 20/burst 30, 1 thread, 3 runs
#   SIZES="100 500 2000" WIDE=1000 QPS="20:30 500:1000" THREADS="1 4" RUNS=3 bench/operator.sh
#
# SIZES: numbers of TFJobs of 1 PS + 2 workers created at once (SIZES= for none); WIDE: also one
# job of that many workers (1 PS); QPS: --kube-api-qps:--kube-api-burst pairs; THREADS:
# --controller-threads; RUNS: runs per setting, alternating which operator goes first; OPERATORS (default
# "ours v1.9.2"; ours-documented is tfjob-operator in its documented mode, ours is
# --compat training-operator-1.9). tfjob-operator is built with -O3 (build-bench, as bench/run.sh);
# training-operator v1.9.2 from the Go module proxy (tests/h2h/rig.sh build-v19).
# OPERATORS=standin measures the stand-in kubelet alone (the bench creates the pods itself);
# STANDIN_WORKERS: its request threads (default 8). BENCH_IDLE_S: seconds the operator's CPU is
# measured while idle, after its first sync and before the jobs (default 10; 0: not measured).
# BENCH_JSON=FILE also appends every measurement as a JSON line (bench/operator_table.py FILE...
# prints the table of such lines). The load average at the start and the end is printed with the
# table. BENCH_KEEP=DIR keeps each run's apiserver audit log there (every request, with its time:
# a timeline of what each operator did).
# H2H_AUDIT_STATUS_BODIES=1 also logs the bodies of TFJob status writes (tests/h2h/rig.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SIZES="${SIZES-100 500}" WIDE="${WIDE:-}" QPS="${QPS:-20:30}" THREADS="${THREADS:-1}" RUNS="${RUNS:-3}"
OPERATORS="${OPERATORS:-ours v1.9.4}"
export TFJOB_KUBE_CACHE="${TFJOB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/kube}"

if [ "${H2H_IN_NETNS:-}" != 1 ]; then
  if [ ! -f build-bench/build.ninja ]; then
    meson setup build-bench --buildtype=release -Dtests=false -Dbench=true >/dev/null
  fi
  ninja -C build-bench src/tfjob-operator/tfjob-operator >/dev/null
  # what was built: the commit, "+changes" when the tree differed from it (named in the table)
  BENCH_BUILT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  git diff --quiet HEAD -- lib src include 2>/dev/null || BENCH_BUILT="$BENCH_BUILT+changes"
  export BENCH_BUILT
  tests/kube/harness.sh build >/dev/null
  tests/h2h/rig.sh build-v19 >/dev/null
  TFJOB_KUBE_CRD="$(tests/h2h/rig.sh crd-v19)"
  export TFJOB_KUBE_CRD
  exec tests/h2h/netns.sh "$0" "$@"
fi
export TFJOB_OPERATOR="$root/build-bench/src/tfjob-operator/tfjob-operator"

measure() {  # OPERATOR JOBS WIDE QPS BURST THREADS: one JSON line
  local op="$1" jobs="$2" wide="$3" qps="$4" burst="$5" threads="$6" dir rc=0
  dir="$(mktemp -d /tmp/h2h-bench.XXXXXX)"
  tests/h2h/rig.sh start "$dir" 2>/dev/null
  # shellcheck disable=SC1091
  set -a; . "$dir/env"; set +a
  if [ "$op" = standin ]; then
    python3 bench/operator.py --jobs "$jobs" --wide "$wide" --standin-only >"$dir/result" || rc=$?
  else
    tests/h2h/rig.sh argv "$op" "$dir" --controller-threads "$threads" --kube-api-qps "$qps" \
      --kube-api-burst "$burst" >"$dir/argv"
    mapfile -t argv <"$dir/argv"
    python3 bench/operator.py --jobs "$jobs" --wide "$wide" --idle-seconds "${BENCH_IDLE_S:-10}" --agent "$(tests/h2h/rig.sh agent "$op")" \
      --audit "$dir/audit.log" --apiserver-pid "$KUBE_APISERVER_PID" -- "${argv[@]}" >"$dir/result" || rc=$?
  fi
  tests/h2h/rig.sh stop "$dir" >/dev/null 2>&1 || true
  if [ -n "${BENCH_KEEP:-}" ] && [ -f "$dir/audit.log" ]; then
    mkdir -p "$BENCH_KEEP"
    cp "$dir/audit.log" "$(mktemp "$BENCH_KEEP/$op-jobs$jobs-qps$qps-threads$threads.XXXX.audit.log")"
  fi
  if [ $rc = 0 ]; then
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r.update(operator=sys.argv[2], wide=int(sys.argv[3]), qps=int(sys.argv[4]), burst=int(sys.argv[5]), threads=int(sys.argv[6])); print(json.dumps(r))' \
      "$dir/result" "$op" "$wide" "$qps" "$burst" "$threads"
  else
    echo "bench/operator.sh: $op jobs=$jobs wide=$wide qps=$qps threads=$threads failed" >&2
  fi
  rm -rf "$dir"
}

load() { cut -d' ' -f1-3 /proc/loadavg; }
load_start="$(load)"
results="$(mktemp /tmp/h2h-bench-results.XXXXXX)"
trap 'rm -f "$results"' EXIT
shapes=()
for n in $SIZES; do shapes+=("$n:0"); done
[ -z "$WIDE" ] || shapes+=("1:$WIDE")
for shape in "${shapes[@]}"; do
  for q in $QPS; do
    for t in $THREADS; do
      for run in $(seq 1 "$RUNS"); do
        # shellcheck disable=SC2206
        ops=($OPERATORS)
        if [ $((run % 2)) = 0 ]; then ops=($(printf '%s\n' "${ops[@]}" | tac)); fi
        for op in "${ops[@]}"; do
          echo "bench/operator.sh: run $run, $op, jobs:wide $shape, qps:burst $q, threads $t ..." >&2
          measure "$op" "${shape%:*}" "${shape#*:}" "${q%:*}" "${q#*:}" "$t" | tee -a "$results" \
            ${BENCH_JSON:+-a "$BENCH_JSON"} >/dev/null
        done
      done
    done
  done
done
python3 bench/operator_table.py "$results" \
  --note "tfjob-operator built from ${BENCH_BUILT:-unknown}; load average $load_start at the start, $(load) at the end"
