#!/usr/bin/env bash
# tfjob-operator against a real kube-apiserver + etcd (tests/kube/harness.sh), with the RBAC of
# examples/deploy/rbac.yaml: job lifecycles (success, retryable restart, permanent failure,
# cleanPodPolicy, TTL, suspend/resume, managedBy, invalid spec), the operator killed while
# creating 50 pods and restarted (no duplicates), /healthz /readyz /metrics, bad HTTP requests,
# leader election Lease, SIGTERM; chief, AllWorkers, OnFailure with backoffLimit,
# activeDeadlineSeconds, cleanPodPolicy None, scale down, a pod deleted behind our back, 100 jobs
# at once; API calls per job lifecycle; gang scheduling (volcano: pods wait while the PodGroup is
# Pending and are created as soon as its watch shows Inqueue; scheduler-plugins), with
# training-operator's flags. No kubelet: tests/kube/controller_e2e.py writes pod status.
# Then kube-apiserver itself is restarted under a running operator with jobs in flight
# (tests/kube/harness.sh stop-apiserver / start-apiserver, same etcd): the operator stays up, is
# not ready while its watches are broken, resumes them and converges with no duplicate pod.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/suites/lib/kube-env.bash
. tests/suites/lib/kube-env.bash
OP="${TFJOB_OPERATOR:-$PWD/build/src/tfjob-operator/tfjob-operator}"
python3 tests/kube/controller_e2e.py "$OP" "$dir"
