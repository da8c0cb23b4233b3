#!/usr/bin/env bash
# tfjob-operator beside training-operator v1.9.2, each alone on a fresh kube-apiserver of the
# head-to-head rig (tests/h2h/rig.sh, in a network namespace of its own: tests/h2h/netns.sh),
# with the stand-in kubelet of tests/h2h/kubelet.py; prints a table (a benchmark, not a test).
#
#   bench/operator.sh                       N = 100 and 500, qps 20/burst 30, 1 thread, 3 runs
#   SIZES="100 500 2000" WIDE=1000 QPS="20:30 500:1000" THREADS="1 4" RUNS=3 bench/operator.sh
#
# SIZES: numbers of TFJobs of 1 PS + 2 workers created at once; WIDE: also one job of that many
# workers (1 PS); QPS: --kube-api-qps:--kube-api-burst pairs; THREADS: --controller-threads;
# RUNS: runs per setting, alternating which operator goes first; OPERATORS (default
# "ours v1.9.2"; ours-documented is tfjob-operator in its documented mode, ours is
# --compat training-operator-1.9). tfjob-operator is built with -O3 (build-bench, as bench/run.sh);
# training-operator v1.9.2 from the Go module proxy (tests/h2h/rig.sh build-v19).
# OPERATORS=standin measures the stand-in kubelet alone (the bench creates the pods itself);
# STANDIN_WORKERS: its request threads (default 8). BENCH_JSON=FILE also appends every
# measurement as a JSON line. The load average at the start and the end is printed with the table.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SIZES="${SIZES:-100 500}" WIDE="${WIDE:-}" QPS="${QPS:-20:30}" THREADS="${THREADS:-1}" RUNS="${RUNS:-3}"
OPERATORS="${OPERATORS:-ours v1.9.2}"
export TFJOB_KUBE_CACHE="${TFJOB_KUBE_CACHE:-$root/.cache/kube}"

if [ "${H2H_IN_NETNS:-}" != 1 ]; then
  if [ ! -f build-bench/build.ninja ]; then
    meson setup build-bench --buildtype=release -Dtests=false -Dbench=true >/dev/null
  fi
  ninja -C build-bench src/tfjob-operator/tfjob-operator >/dev/null
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
    python3 bench/operator.py --jobs "$jobs" --wide "$wide" --agent "$(tests/h2h/rig.sh agent "$op")" \
      --audit "$dir/audit.log" --apiserver-pid "$KUBE_APISERVER_PID" -- "${argv[@]}" >"$dir/result" || rc=$?
  fi
  tests/h2h/rig.sh stop "$dir" >/dev/null 2>&1 || true
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
python3 - "$results" "$load_start" "$(load)" "$(git rev-parse --short HEAD)" <<'EOF'
import json, sys
from collections import defaultdict
rows = defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    shape = f"1 job x {r['wide']} workers" if r["wide"] else f"{r['jobs']} jobs"
    rows[(shape, f"{r['qps']}/{r['burst']}", r["threads"], r["operator"])].append(r)
def span(rs, k, fmt="{:.1f}"):
    v = sorted(x[k] for x in rs if k in x)
    if not v:
        return "-"
    med = v[len(v) // 2]
    return fmt.format(med) + (f" ({fmt.format(v[0])}-{fmt.format(v[-1])})" if v[0] != v[-1] else "")
cols = [("pods exist s", "pods_exist_s", "{:.1f}"), ("stand-in lag s", "standin_lag_s", "{:.1f}"),
        ("stand-in ends workers s", "standin_end_workers_s", "{:.1f}"),
        ("Running after marked s", "running_after_marked_s", "{:.1f}"),
        ("Succeeded after marked s", "succeeded_after_marked_s", "{:.1f}"),
        ("operator CPU s", "operator_cpu_s", "{:.2f}"), ("CPU ms/job", "cpu_ms_per_job", "{:.1f}"),
        ("idle RSS MiB", "operator_idle_rss_mib", "{:.1f}"), ("VmHWM MiB", "operator_vmhwm_mib", "{:.1f}"),
        ("growth KiB/job", "rss_growth_kib_per_job", "{:.0f}"), ("apiserver CPU s", "apiserver_cpu_s", "{:.1f}"),
        ("status writes / changes", "status_writes", "{:.0f}")]
print("| jobs | qps/burst | threads | operator | runs | " + " | ".join(c[0] for c in cols) + " | requests (median run) |")
print("|---" * (len(cols) + 6) + "|")
for (shape, q, t, op), rs in sorted(rows.items(), key=lambda kv: kv[0]):
    for x in rs:
        if "operator_cpu_s" in x:
            x["cpu_ms_per_job"] = 1000 * x["operator_cpu_s"] / x["jobs"]
    med = sorted(rs, key=lambda x: x.get("requests_total", 0))[len(rs) // 2]
    cells = [span(rs, k, f) for _, k, f in cols]
    if "status_writes" in med:
        cells[-1] = f"{span(rs, 'status_writes', '{:.0f}')} / {span(rs, 'status_changes', '{:.0f}')}"
    reqs = "-"
    if "requests" in med:
        reqs = f"{med['requests_total']}: " + ", ".join(f"{k} {v}" for k, v in med["requests"].items())
    if op == "standin":
        q, t = "-", "-"
    print(f"| {shape} | {q} | {t} | {op} | {len(rs)} | " + " | ".join(cells) + f" | {reqs} |")
print(f"\nmedian (min-max) over the runs; times in seconds of wall clock; CPU from /proc/PID/stat; RSS from "
      f"/proc/PID/status; commit {sys.argv[4]}; load average {sys.argv[2]} at the start, {sys.argv[3]} at the end")
EOF
