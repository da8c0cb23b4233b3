#!/usr/bin/env bash
# tests/sdk/record.sh OPERATOR OUT.json [SCENARIO,...]: a fresh kube-apiserver (tests/h2h/rig.sh
# start) with OPERATOR's TFJob CRD, OPERATOR (ours, ours-documented, v1.9.4) on it, the
# Kubeflow Training SDK session (tests/sdk/session.py, under the SDK's venv: $SDK_PYTHON or
# tests/sdk/venv.sh), then the server is stopped. Run it under tests/h2h/netns.sh, with
# TFJOB_KUBE_CRD (v1.9.4's: tests/h2h/rig.sh crd-v19), H2H_SCHEDULER_PLUGINS_CRD and SDK_PYTHON
# exported (the module proxy and PyPI are out of reach inside):
#   tests/h2h/netns.sh tests/sdk/record.sh v1.9.4 build/sdk/v1.9.4.json
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RIG="$HERE/../h2h/rig.sh"
[ $# -ge 2 ] || { echo "usage: record.sh OPERATOR OUT.json [SCENARIO,...]" >&2; exit 2; }
op="$1" out="$2" only="${3:-}"
py="${SDK_PYTHON:-$("$HERE/venv.sh")}"
export H2H_SCHEDULER_PLUGINS_CRD="${H2H_SCHEDULER_PLUGINS_CRD:-$("$RIG" crd-scheduler-plugins)}"
dir="$(mktemp -d /tmp/sdk-kube.XXXXXX)"
trap '"$RIG" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
# Each operator as it is installed: v1.9.4 with its own TFJob CRD, tfjob-operator with the one it
# ships (or $SDK_OURS_CRD).
case "$op" in
  ours|ours-documented) TFJOB_KUBE_CRD="${SDK_OURS_CRD:-$HERE/../../examples/deploy/crd-tfjob.yaml}" ;;
  *) TFJOB_KUBE_CRD="${TFJOB_KUBE_CRD:-$("$RIG" crd-v19)}" ;;
esac
export TFJOB_KUBE_CRD
"$RIG" start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
"$RIG" argv "$op" "$dir" --controller-threads 1 --kube-api-qps 200 --kube-api-burst 400 >"$dir/argv"
mapfile -t argv <"$dir/argv"
mkdir -p "$(dirname "$out")"
# PYTHONHASHSEED: the SDK prints Python sets in its error messages; one order for every run.
PYTHONHASHSEED=0 "$py" "$HERE/session.py" --out "$out" --only "$only" -- "${argv[@]}"
