#!/usr/bin/env bash
# The main job: install, build, and run the examples through tfjobctl.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
TFJOBCTL=build/src/tfjobctl/tfjobctl
for f in examples/*.yaml; do
  echo "== $f"
  "$TFJOBCTL" validate "$f"
done
echo "== defaults of examples/tfjob-ps-worker.yaml"
"$TFJOBCTL" default examples/tfjob-ps-worker.yaml
