#!/usr/bin/env bash
# tfjob-operator against a real kube-apiserver + etcd (tests/kube/harness.sh), with the RBAC of
# examples/deploy/rbac.yaml: job lifecycles (success, retryable restart, permanent failure,
# cleanPodPolicy, TTL, suspend/resume, managedBy, invalid spec), the operator killed while
# creating 50 pods and restarted (no duplicates), /healthz /readyz /metrics, bad HTTP requests,
# leader election Lease, SIGTERM. No kubelet: tests/kube/controller_e2e.py writes pod status.
# Then the API server is stopped under a running operator and a new one is started: the operator
# keeps running, lists again and converges.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
H="$PWD/tests/kube/harness.sh"
"$H" build >/dev/null
dir="$(mktemp -d)"
dir2="$(mktemp -d)"
cleanup() { "$H" stop "$dir" >/dev/null 2>&1 || true; "$H" stop "$dir2" >/dev/null 2>&1 || true; rm -rf "$dir" "$dir2"; }
trap cleanup EXIT
"$H" start "$dir" 2>&1 | tail -n 1
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
OP="$PWD/build/src/tfjob-operator/tfjob-operator"
python3 tests/kube/controller_e2e.py "$OP" "$dir"
