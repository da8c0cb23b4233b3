#!/usr/bin/env bash
# tests/h2h/record.sh OPERATOR OUT [SCENARIO,...]: a fresh kube-apiserver (tests/h2h/rig.sh start),
# OPERATOR (ours, ours-documented, v1.9.4) on it with one controller thread and client limits
# (qps 200, burst 400) that all the scenarios at once do not reach (this is about behaviour, not
# speed), every scenario of tests/h2h/scenarios/ (or the listed ones), one transcript each
# in OUT (tests/h2h/scenarios.py), then the server is stopped. Run it under tests/h2h/netns.sh.
# (Outside a network namespace, run `tests/h2h/rig.sh crd-v19` and `crd-scheduler-plugins` first
# and export TFJOB_KUBE_CRD / H2H_SCHEDULER_PLUGINS_CRD: the module proxy is out of reach inside.)
#   tests/h2h/netns.sh tests/h2h/record.sh v1.9.4 build/h2h/v1.9.4
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -ge 2 ] || { echo "usage: record.sh OPERATOR OUT [SCENARIO,...]" >&2; exit 2; }
op="$1" out="$2" only="${3:-}"
export H2H_SCHEDULER_PLUGINS_CRD="${H2H_SCHEDULER_PLUGINS_CRD:-$("$HERE/rig.sh" crd-scheduler-plugins)}"
dir="$(mktemp -d /tmp/h2h-kube.XXXXXX)"
trap '"$HERE/rig.sh" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$HERE/rig.sh" start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
"$HERE/rig.sh" argv "$op" "$dir" --controller-threads 1 --kube-api-qps 200 --kube-api-burst 400 >"$dir/argv"
mapfile -t argv <"$dir/argv"
rm -rf "$out"
mkdir -p "$out"
status=0
python3 "$HERE/scenarios.py" --out "$out" --agent "$("$HERE/rig.sh" agent "$op")" --audit "$dir/audit.log" \
  --only "$only" -- "${argv[@]}" || status=$?
exit $status
