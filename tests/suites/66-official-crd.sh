#!/usr/bin/env bash
# tfjob-operator, tfjobctl and the library against a real kube-apiserver + etcd
# (tests/kube/harness.sh) that serves training-operator v1.9.2's OWN TFJob CRD
# (manifests/base/crds/kubeflow.org_tfjobs.yaml of the Go module github.com/kubeflow/training-operator
# v1.9.2, from the Go module proxy through tests/diff's go.mod; never copied into the repository)
# instead of examples/deploy/crd-tfjob.yaml: its pod template schema with list types and
# descriptions, its defaults (ports[].protocol TCP, runPolicy.suspend false), the immutable queue rule.
# tests/kube/official_crd_e2e.py: apply of every examples/*.yaml (created, then unchanged, nothing
# pruned), the operator's lifecycles (success, failure, suspend/resume, cleanPodPolicy + TTL) with
# every status it writes stored as written, one status write per status change, tfjobctl
# get/describe/watch/delete; then the Python bindings' Kubernetes tests. Without Go the suite is
# skipped.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v go >/dev/null 2>&1 || { [ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"; }
if ! command -v go >/dev/null 2>&1; then
  echo "66-official-crd: skipped (no 'go' to fetch github.com/kubeflow/training-operator@v1.9.2)"
  exit 0
fi
moddir="$(cd tests/diff && go mod download -json github.com/kubeflow/training-operator@v1.9.2 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["Dir"])')"
export TFJOB_KUBE_CRD="$moddir/manifests/base/crds/kubeflow.org_tfjobs.yaml"
[ -f "$TFJOB_KUBE_CRD" ] || { echo "66-official-crd: $TFJOB_KUBE_CRD is missing" >&2; exit 1; }
# shellcheck source=tests/suites/lib/kube-env.bash
. tests/suites/lib/kube-env.bash
export TFJOBCTL="${TFJOBCTL:-$PWD/build/src/tfjobctl/tfjobctl}"
OP="${TFJOB_OPERATOR:-$PWD/build/src/tfjob-operator/tfjob-operator}"
python3 tests/kube/official_crd_e2e.py "$OP" "$dir"

# The Python bindings' Kubernetes tests (86-bindings-kube.sh runs them, and the Go ones, against
# our CRD) against the same server: verbs, typed errors, the controller running a job.
# shellcheck source=tests/suites/lib/python-kube.bash
. tests/suites/lib/python-kube.bash
python_kube_tests
