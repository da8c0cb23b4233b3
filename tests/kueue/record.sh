#!/usr/bin/env bash
# tests/kueue/record.sh OPERATOR OUT [SCENARIO,...]: a fresh kube-apiserver with training-operator
# v1.9.4's TFJob CRD (tests/h2h/rig.sh start), Kueue's manager on it (tests/kueue/kueue.py), OPERATOR
# (ours, ours-documented, v1.9.4; tests/h2h/rig.sh argv) and the Kueue scenarios
# (tests/kueue/scenarios.py; results in OUT), then everything is stopped. Run it under
# tests/h2h/netns.sh: v1.9.4's webhook server takes :9443, and Kueue reads its metrics certificate
# from the fixed /etc/kueue/metrics/certs, which this script provides inside that private mount
# namespace (an overlay on /etc whose changes live in a tmpfs that goes with the namespace).
# The Go module proxy is out of reach in there: KUEUE_BIN (tests/kueue/kueue.sh build),
# KUEUE_MODULE_DIR (kueue.sh module-dir) and TFJOB_KUBE_CRD (tests/h2h/rig.sh crd-v19) come from
# outside, as tests/suites/71-kueue.sh sets them.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
[ $# -ge 2 ] || { echo "usage: record.sh OPERATOR OUT [SCENARIO,...]" >&2; exit 2; }
[ "${H2H_IN_NETNS:-}" = 1 ] || { echo "record.sh: run it under tests/h2h/netns.sh" >&2; exit 2; }
: "${KUEUE_BIN:?}" "${KUEUE_MODULE_DIR:?}" "${TFJOB_KUBE_CRD:?}"
op="$1" out="$2" only="${3:-}"

# /etc/kueue/metrics/certs in this mount namespace only. The mounts go with the namespace; the
# empty mount point in the shared /tmp is removed here.
dir=""
etc="$(mktemp -d /tmp/kueue-etc.XXXXXX)"
cleanup() {
  if [ -n "$dir" ]; then
    "$ROOT/tests/h2h/rig.sh" stop "$dir" >/dev/null 2>&1 || true
    rm -rf "$dir"
  fi
  umount -l /etc 2>/dev/null || true
  umount -l "$etc" 2>/dev/null || true
  rmdir "$etc" 2>/dev/null || true
}
trap cleanup EXIT
mount -t tmpfs -o size=4m tmpfs "$etc"
mkdir "$etc/upper" "$etc/work"
mount -t overlay overlay -o "lowerdir=/etc,upperdir=$etc/upper,workdir=$etc/work" /etc
mkdir -p /etc/kueue/metrics/certs
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
  -keyout /etc/kueue/metrics/certs/tls.key -out /etc/kueue/metrics/certs/tls.crt \
  -subj "/CN=kueue-metrics" 2>/dev/null

dir="$(mktemp -d /tmp/kueue-kube.XXXXXX)"
"$ROOT/tests/h2h/rig.sh" start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
"$ROOT/tests/h2h/rig.sh" argv "$op" "$dir" --kube-api-qps 200 --kube-api-burst 400 >"$dir/argv"
mapfile -t argv <"$dir/argv"
rm -rf "$out"
mkdir -p "$out"
python3 "$HERE/scenarios.py" --out "$out" --operator "$op" --kueue "$KUEUE_BIN" \
  --kueue-module "$KUEUE_MODULE_DIR" --only "$only" -- "${argv[@]}"
