#!/usr/bin/env bash
# Live swap with training-operator v1.9.4 (docs/install.md, "Migrating from training-operator"):
# jobs run under one operator, it is stopped mid-run and the other started in its place; every
# job must end with no pod or service recreated or rewritten, no duplicate and its conditions
# continuous (tests/h2h/swap.py). Three swaps, each on a fresh API server in a network namespace
# of its own, at the same time: v1.9.4 -> tfjob-operator --compat training-operator-1.9, back
# (--compat -> v1.9.4), and v1.9.4 -> tfjob-operator in its documented mode. Then a failover of
# two tfjob-operator replicas with leader election: the leader is killed (SIGKILL) mid-run, the
# standby takes the Lease and goes on, nothing duplicated (bench/failover.py, one trial).
# Skipped without Go or without namespaces (unshare).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
if ! command -v go >/dev/null 2>&1; then
  echo "72-live-swap: skipped (no 'go' to build training-operator v1.9.4)"
  exit 0
fi
if ! unshare --net --mount true 2>/dev/null; then
  echo "72-live-swap: skipped (cannot create network namespaces: needs root)"
  exit 0
fi
BUILD_DIR=build scripts/build.sh >/dev/null
tests/kube/harness.sh build >/dev/null
tests/h2h/rig.sh build-v19 >/dev/null
TFJOB_KUBE_CRD="$(tests/h2h/rig.sh crd-v19)"
export TFJOB_KUBE_CRD
out="${SWAP_OUT:-build/swap}"
rm -rf "$out"
mkdir -p "$out"
swaps=("v1.9.4 ours" "ours v1.9.4" "v1.9.4 ours-documented")
pids=()
for s in "${swaps[@]}"; do
  read -r from to <<<"$s"
  tests/h2h/netns.sh tests/h2h/swap.sh "$from" "$to" "$out/$from-$to" >"$out/$from-$to.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!swaps[@]}"; do
  read -r from to <<<"${swaps[$i]}"
  if wait "${pids[$i]}"; then r=ok; else r=FAIL; status=1; fi
  sed "s/^/$from -> $to: /" "$out/$from-$to.log"
  echo "72-live-swap: $r $from -> $to"
done
echo "--- failover: two tfjob-operator replicas, SIGKILL to the leader"
if N=1 KINDS=kill9 OPERATORS=ours FAILOVER_KEEP="$out/failover" TFJOB_OPERATOR="$PWD/build/src/tfjob-operator/tfjob-operator" \
    bench/failover.sh >"$out/failover.log" 2>&1; then
  r=ok
else
  r=FAIL; status=1
fi
cat "$out/failover.log"
echo "72-live-swap: $r failover (kill -9 of the leader)"
[ $status = 0 ] || echo "72-live-swap: FAIL (above; $out/*/swap.json, $out/*/operator-*.log)"
exit $status
