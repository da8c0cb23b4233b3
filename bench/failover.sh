#!/usr/bin/env bash
# Failover of two operator replicas with leader election, tfjob-operator beside training-operator
# v1.9.4 on the same kube-apiserver of the head-to-head rig (tests/h2h/rig.sh, in a network
# namespace of its own: tests/h2h/netns.sh), trials interleaved; prints the median and range of
# each measure (a benchmark, not a test: docs/performance.md, "Failover").
#
#   bench/failover.sh                          N=3 repeats of every kind, ours and v1.9.4
#   N=5 KINDS="kill9 stop" OPERATORS=ours bench/failover.sh
#
# KINDS (default "kill9 stop apiserver compact"; also term; bench/failover.py describes each);
# OPERATORS (default "ours v1.9.4"; ours is tfjob-operator --compat training-operator-1.9,
# ours-documented its documented mode; A+B: replica 1, the first leader, is A and the standby
# B, e.g. v1.9.4+ours, a migration with leader election on both); N repeats: repeat r runs
# every kind for every operator, the operators' order alternating from one repeat to the next.
# Both operators' replicas use the same Lease (kubeflow/1ca428e5.training-operator.kubeflow.org)
# with their defaults: 15 s lease, 10 s renew deadline, 2 s retry period. FAILOVER_JSON=FILE
# also appends every trial's JSON line there; FAILOVER_KEEP=DIR keeps the replicas' logs. Exit
# status 1 when a trial found a problem (a duplicate pod, a job that did not succeed, an old
# leader that did not stand down).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
N="${N:-3}" KINDS="${KINDS:-kill9 stop apiserver compact}" OPERATORS="${OPERATORS:-ours v1.9.4}"
export TFJOB_KUBE_CACHE="${TFJOB_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/libtfjob/kube}"

if [ "${H2H_IN_NETNS:-}" != 1 ]; then
  if [ -z "${TFJOB_OPERATOR:-}" ]; then
    BUILD_DIR=build scripts/build.sh >/dev/null
    export TFJOB_OPERATOR="$root/build/src/tfjob-operator/tfjob-operator"
  fi
  tests/kube/harness.sh build >/dev/null
  case " $OPERATORS " in *v1.9.4*) tests/h2h/rig.sh build-v19 >/dev/null ;; esac
  TFJOB_KUBE_CRD="$(tests/h2h/rig.sh crd-v19)"
  export TFJOB_KUBE_CRD
  exec tests/h2h/netns.sh "$0" "$@"
fi
# controller-runtime finds its Lease namespace only in a pod's service account directory: give
# it one, private to this mount namespace (tests/h2h/netns.sh made it private; the empty mount
# point /run/secrets stays on the host, as netns.sh's /tmp/k8s-webhook-server does).
mkdir -p /run/secrets
mount -t tmpfs -o size=1m tmpfs /run/secrets
mkdir -p /run/secrets/kubernetes.io/serviceaccount
echo -n kubeflow >/run/secrets/kubernetes.io/serviceaccount/namespace

work="$(mktemp -d /tmp/failover.XXXXXX)"
dir="$work/kube"
trap 'tests/h2h/rig.sh stop "$dir" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
tests/h2h/rig.sh start "$dir" 2>/dev/null
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
for op in $(echo "$OPERATORS" | tr ' +' '\n\n' | sort -u); do
  case "$op" in
    ours|ours-documented)
      for i in 1 2; do
        tests/h2h/rig.sh argv "$op" "$dir" --leader-elect --leader-election-namespace kubeflow >"$work/$op.argv$i"
      done ;;
    v1.9.4)
      # two webhook servers in one network namespace: two ports
      tests/h2h/rig.sh argv "$op" "$dir" --leader-elect --webhook-server-port 9443 >"$work/$op.argv1"
      tests/h2h/rig.sh argv "$op" "$dir" --leader-elect --webhook-server-port 9444 >"$work/$op.argv2" ;;
    *) echo "failover: unknown operator $op" >&2; exit 2 ;;
  esac
done
results="$work/results.jsonl"
: >"$results"
status=0
read -r -a ops <<<"$OPERATORS"
for r in $(seq 1 "$N"); do
  order=("${ops[@]}")
  if [ $((r % 2)) = 0 ]; then  # alternate which operator goes first
    order=(); for ((i = ${#ops[@]} - 1; i >= 0; i--)); do order+=("${ops[$i]}"); done
  fi
  for kind in $KINDS; do
    for op in "${order[@]}"; do
      logs="${FAILOVER_KEEP:-$work/logs}/$op-$kind-$r"
      mkdir -p "$logs"
      # A+B: replica 1 (the first leader) is A, the standby B
      line="$(python3 bench/failover.py --kind "$kind" --ns "fo-${op//[.+]/}-$kind-$r" --agent "$op" \
        --argv1 "$work/${op%%+*}.argv1" --argv2 "$work/${op##*+}.argv2" --harness-dir "$dir" --logs "$logs" \
        --audit "$dir/audit.log" --user-agent "$(tests/h2h/rig.sh agent "${op%%+*}")")" || status=1
      echo "$line" >>"$results"
      [ -n "${FAILOVER_JSON:-}" ] && echo "$line" >>"$FAILOVER_JSON"
      echo "failover: repeat $r $kind $op: $line" >&2
    done
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); tfjob-operator $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
python3 bench/failover_table.py "$results"
exit $status
