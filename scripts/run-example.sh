#!/usr/bin/env bash
# The main job: install, build, check the examples through tfjobctl, then run the ps-training
# TFJob for real on this machine (2 parameter servers and 3 workers as local processes).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh >/dev/null
TFJOBCTL=build/src/tfjobctl/tfjobctl
for f in examples/*.yaml examples/*/tfjob.yaml examples/failures/*.yaml; do
  echo "== validate $f"
  "$TFJOBCTL" validate "$f"
done
echo "== defaults of examples/tfjob-ps-worker.yaml"
"$TFJOBCTL" default examples/tfjob-ps-worker.yaml
RUN_DIR="tfjob-runs/ps-training-$(date +%Y%m%d-%H%M%S)-$$"
echo "== run examples/ps-training/tfjob.yaml (run directory $RUN_DIR)"
status=0
"$TFJOBCTL" run --run-dir "$RUN_DIR" examples/ps-training/tfjob.yaml || status=$?
echo "== the loss of worker 0 (tfjobctl logs $RUN_DIR worker-0)"
"$TFJOBCTL" logs "$RUN_DIR" worker-0 | grep -E 'step (1|10|20|30|40|50|60) loss|final loss' || true
exit "$status"
