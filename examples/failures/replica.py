#!/usr/bin/env python3
"""A replica that fails on purpose, to show how a TFJob handles failures (see the manifests here).

Environment:
  FAIL_INDEX  the task index (from TF_CONFIG) that fails; the others succeed (default 0)
  EXIT_CODE   the exit code of the failing replica (default 1)
  FAIL_ONCE   "1": fail only the first time; a marker file in TFJOB_RUN_DIR remembers it, so the
              restarted replica succeeds
  SLEEP       seconds a succeeding replica works before it exits (default 2)
  FAIL_AFTER  seconds the failing replica works before it fails (default 0.5)
"""
import json
import os
import sys
import time

task = json.loads(os.environ.get("TF_CONFIG") or "{}").get("task", {})
kind, index = task.get("type", "worker"), int(task.get("index", 0))
fail_index = int(os.environ.get("FAIL_INDEX", "0"))
code = int(os.environ.get("EXIT_CODE", "1"))
once = os.environ.get("FAIL_ONCE") == "1"
marker = os.path.join(os.environ.get("TFJOB_RUN_DIR", "."), "%s-%d.failed-once" % (kind, index))

print("%s %d: working" % (kind, index), flush=True)
failing = kind == "worker" and index == fail_index and not (once and os.path.exists(marker))
time.sleep(float(os.environ.get("FAIL_AFTER" if failing else "SLEEP", "0.5" if failing else "2")))
if failing:
    if once:
        open(marker, "w").close()
    print("%s %d: failing with exit code %d%s" % (kind, index, code, " (only this once)" if once else ""), flush=True)
    sys.exit(code)
print("%s %d: done" % (kind, index), flush=True)
