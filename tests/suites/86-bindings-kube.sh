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
target="$(mktemp -d)"
KUBE_ENV_CLEANUP+=("$target")

# Python: the package installed as a user would, against ./build.
python3 -m pip install -q --disable-pip-version-check pytest 2>&1 | grep -v 'Running pip as' || true
python3 -m pip install -q --disable-pip-version-check --no-deps --target "$target" ./bindings/python 2>&1 |
  grep -v 'Running pip as' || true
( cd bindings/python/tests &&
  TFJOB_LIBRARY="$root/build/lib/libtfjob.so.0" PYTHONPATH="$target" \
    python3 -m pytest -q -p no:warnings -p no:cacheprovider -rs test_kube.py ) | tee "$dir/pytest.out"
if grep -q skipped "$dir/pytest.out"; then echo "FAIL: kube tests were skipped"; exit 1; fi

# Go: through pkg-config from a private prefix, as 85-go.sh does.
# shellcheck source=tests/suites/lib/go-env.bash
. tests/suites/lib/go-env.bash
cd bindings/go
go test -count=1 -race -run 'Kube' -v ./tfjob 2>&1 | tee "$dir/go.out" | grep -E '^(--- |ok|FAIL|PASS)'
if grep -q -- '--- SKIP' "$dir/go.out"; then echo "FAIL: kube tests were skipped"; exit 1; fi
grep -q '^ok' "$dir/go.out"
