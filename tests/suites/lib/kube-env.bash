# Sourced by the suites that need a real API server (63, 64, 66, 86) from the repository root:
# builds the library (./build) and kube-apiserver + etcd (tests/kube/harness.sh), starts them in
# a fresh $dir, exports what $dir/env says (KUBE_APISERVER_URL, the kubeconfigs, ...) and stops
# them and removes $dir on exit. A suite that needs more cleaned up lists it in KUBE_ENV_CLEANUP
# (paths removed too). Not a suite itself: scripts/test-all.sh runs only tests/suites/*.sh.
BUILD_DIR=build scripts/build.sh >/dev/null
H="$PWD/tests/kube/harness.sh"
"$H" build >/dev/null
dir="$(mktemp -d)"
KUBE_ENV_CLEANUP=()
kube_env_cleanup() { "$H" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir" "${KUBE_ENV_CLEANUP[@]}"; }
trap kube_env_cleanup EXIT
"$H" start "$dir" 2>&1 | tail -n 1
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
