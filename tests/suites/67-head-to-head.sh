#!/usr/bin/env bash
# Head-to-head with training-operator v1.9.4 on a real kube-apiserver (docs/head-to-head.md):
# every scenario of tests/h2h/scenarios/ is run against v1.9.4 itself (built from the Go module
# proxy, its own TFJob CRD), against tfjob-operator --compat training-operator-1.9 and against
# tfjob-operator in its documented mode, each on a fresh API server with an audit log and the same
# stand-in kubelet; the transcripts (conditions, replica statuses, children, events, API requests
# by verb) of compat mode must equal v1.9.4's but for the named normalisations of
# tests/h2h/diff.py; those of documented mode may differ only in scenarios that name entries of
# docs/semantics-diff.md. The three recordings run at the same time, each in a network namespace
# of its own (tests/h2h/netns.sh). Skipped without Go or without namespaces (unshare).
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
if ! command -v go >/dev/null 2>&1; then
  echo "67-head-to-head: skipped (no 'go' to build training-operator v1.9.4)"
  exit 0
fi
if ! unshare --net --mount true 2>/dev/null; then
  echo "67-head-to-head: skipped (cannot create network namespaces: needs root)"
  exit 0
fi
BUILD_DIR=build scripts/build.sh >/dev/null
tests/kube/harness.sh build >/dev/null
tests/h2h/rig.sh build-v19 >/dev/null
TFJOB_KUBE_CRD="$(tests/h2h/rig.sh crd-v19)"
H2H_SCHEDULER_PLUGINS_CRD="$(tests/h2h/rig.sh crd-scheduler-plugins)"
export TFJOB_KUBE_CRD H2H_SCHEDULER_PLUGINS_CRD
out="${H2H_OUT:-build/h2h}"
rm -rf "$out"
mkdir -p "$out"
pids=()
for op in v1.9.4 ours ours-documented; do
  tests/h2h/netns.sh tests/h2h/record.sh "$op" "$out/$op" >"$out/$op.log" 2>&1 &
  pids+=($!)
done
status=0
for i in 0 1 2; do wait "${pids[$i]}" || status=1; done
for op in v1.9.4 ours ours-documented; do sed "s/^/$op: /" "$out/$op.log"; done
[ $status = 0 ] || { echo "67-head-to-head: FAIL: a recording failed (logs above; $out/*/operator.log)"; exit 1; }
echo "--- training-operator v1.9.4 vs tfjob-operator --compat training-operator-1.9"
python3 tests/h2h/diff.py --compat --allow docs/semantics-diff.md "$out/v1.9.4" "$out/ours" | tee "$out/compat.diff" || true
echo "--- training-operator v1.9.4 vs tfjob-operator (documented mode)"
python3 tests/h2h/diff.py --allow docs/semantics-diff.md "$out/v1.9.4" "$out/ours-documented" | tee "$out/documented.diff" || true
# A loaded machine can leave an operator seconds behind the stand-in, and v1.9 itself races with
# its own cache (a create that meets the pod it has just deleted: "already exists"), so a settled
# state shows how far each has got: a scenario that differs in either comparison is recorded again,
# all three operators at once, and fails only if it differs again.
differing() { awk '$1 == "DIFFERS" || $1 == "MISSING" { print $2 }' "$1" | tr -d : | paste -sd, -; }
again_compat="$(differing "$out/compat.diff")"
again_documented="$(differing "$out/documented.diff")"
again="$(printf '%s,%s' "$again_compat" "$again_documented" | tr , '\n' | sed '/^$/d' | sort -u | paste -sd, -)"
if [ -n "$again" ]; then
  echo "--- recording again: $again"
  pids=()
  for op in v1.9.4 ours ours-documented; do
    tests/h2h/netns.sh tests/h2h/record.sh "$op" "$out/again/$op" "$again" >"$out/again-$op.log" 2>&1 &
    pids+=($!)
  done
  for i in 0 1 2; do wait "${pids[$i]}" || status=1; done
  [ $status = 0 ] || { for op in v1.9.4 ours ours-documented; do sed "s/^/again $op: /" "$out/again-$op.log"; done
    echo "67-head-to-head: FAIL: a second recording failed (logs above)"; }
  if [ -n "$again_compat" ]; then
    echo "--- again: v1.9.4 vs --compat training-operator-1.9 ($again_compat)"
    python3 tests/h2h/diff.py --compat --allow docs/semantics-diff.md --only "$again_compat" "$out/again/v1.9.4" "$out/again/ours" ||
      { echo "67-head-to-head: FAIL: compat mode differs again (above)"; status=1; }
  fi
  if [ -n "$again_documented" ]; then
    echo "--- again: v1.9.4 vs documented mode ($again_documented)"
    python3 tests/h2h/diff.py --allow docs/semantics-diff.md --only "$again_documented" "$out/again/v1.9.4" "$out/again/ours-documented" ||
      { echo "67-head-to-head: FAIL: documented mode differs again (above)"; status=1; }
  fi
fi
# Self-check: the comparison sees differences. Documented mode judged as compat mode must fail.
if python3 tests/h2h/diff.py --compat "$out/v1.9.4" "$out/ours-documented" >/dev/null; then
  echo "67-head-to-head: FAIL: self-check: documented mode compared equal to v1.9.4"
  status=1
fi
exit $status
