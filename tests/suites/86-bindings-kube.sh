#!/usr/bin/env bash
# The Python and Go bindings against a real kube-apiserver + etcd (tests/kube/harness.sh):
# the Kubernetes backend's verbs and typed API errors (404, 409 AlreadyExists/Conflict, 422
# causes, 403 for a user without rights) and the controller running a job to Succeeded (the
# tests write pod status: there is no kubelet). Starts the API server and stops it at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
# shellcheck source=tests/suites/lib/kube-env.bash
. tests/suites/lib/kube-env.bash

# Python: the package installed as a user would, against ./build.
# shellcheck source=tests/suites/lib/python-kube.bash
. tests/suites/lib/python-kube.bash
python_kube_tests

# Go: through pkg-config from a private prefix, as 85-go.sh does.
# shellcheck source=tests/suites/lib/go-env.bash
. tests/suites/lib/go-env.bash
cd bindings/go
go test -count=1 -race -run 'Kube' -v ./tfjob 2>&1 | tee "$dir/go.out" | grep -E '^(--- |ok|FAIL|PASS)'
if grep -q -- '--- SKIP' "$dir/go.out"; then echo "FAIL: kube tests were skipped"; exit 1; fi
grep -q '^ok' "$dir/go.out"
