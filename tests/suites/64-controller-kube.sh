#!/usr/bin/env bash
# tfjob-operator against a real kube-apiserver + etcd (tests/kube/harness.sh), with the RBAC of
# examples/deploy/rbac.yaml: job lifecycles (success, retryable restart, permanent failure,
# cleanPodPolicy, TTL, suspend/resume, managedBy, invalid spec), the operator killed while
# creating 50 pods and restarted (no duplicates), /healthz /readyz /metrics, bad HTTP requests,
# leader election Lease, SIGTERM. No kubelet: tests/kube/controller_e2e.py writes pod status.
# Then the API server goes away under a running operator and comes back (a TCP proxy in front of
# it is stopped and restarted: the harness cannot restart kube-apiserver alone, its supervisor
# stops etcd when kube-apiserver exits): the operator keeps running, reconnects and converges.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
H="$PWD/tests/kube/harness.sh"
"$H" build >/dev/null
dir="$(mktemp -d)"
cleanup() { "$H" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT
"$H" start "$dir" 2>&1 | tail -n 1
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
OP="${TFJOB_OPERATOR:-$PWD/build/src/tfjob-operator/tfjob-operator}"
python3 tests/kube/controller_e2e.py "$OP" "$dir"
