#!/usr/bin/env bash
# tests/h2h/swap.sh FROM TO OUT: a fresh kube-apiserver (tests/h2h/rig.sh start), jobs run by
# operator FROM, FROM stopped mid-run and operator TO started in its place (tests/h2h/swap.py
# says what is checked); OUT gets swap.json and both operators' logs. FROM and TO: ours,
# ours-documented or v1.9.4 (tests/h2h/rig.sh argv). Run it under tests/h2h/netns.sh:
#   tests/h2h/netns.sh tests/h2h/swap.sh v1.9.4 ours build/swap/v1.9.4-ours
# (Outside a network namespace, run `tests/h2h/rig.sh crd-v19` first and export TFJOB_KUBE_CRD:
# the module proxy is out of reach inside.)
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[ $# -eq 3 ] || { echo "usage: swap.sh FROM TO OUT" >&2; exit 2; }
from="$1" to="$2" out="$3"
dir="$(mktemp -d /tmp/h2h-swap.XXXXXX)"
trap '"$HERE/rig.sh" stop "$dir" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
"$HERE/rig.sh" start "$dir"
set -a
# shellcheck disable=SC1091
. "$dir/env"
set +a
# The same flags for both, as a deployment that is edited in place keeps them.
flags=(--controller-threads 1 --kube-api-qps 200 --kube-api-burst 400)
"$HERE/rig.sh" argv "$from" "$dir" "${flags[@]}" >"$dir/argv-a"
"$HERE/rig.sh" argv "$to" "$dir" "${flags[@]}" >"$dir/argv-b"
rm -rf "$out"
mkdir -p "$out"
python3 "$HERE/swap.py" --out "$out" --audit "$dir/audit.log" \
  --agent-a "$("$HERE/rig.sh" agent "$from")" --argv-a "$dir/argv-a" \
  --agent-b "$("$HERE/rig.sh" agent "$to")" --argv-b "$dir/argv-b"
