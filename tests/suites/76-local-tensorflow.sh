#!/usr/bin/env bash
# TensorFlow forms its cluster from the TF_CONFIG of `tfjobctl run`: Keras under
# MultiWorkerMirroredStrategy with 2 local workers (examples/tensorflow-mwms) trains and succeeds.
# Installs tensorflow-cpu from PyPI when it is missing (as 60-tensorflow.sh does).
set -euo pipefail
cd "$(dirname "$0")/../.."
TF_VERSION="${TF_VERSION:-2.15.1}"
BUILD_DIR=build scripts/build.sh >/dev/null
if ! python3 -c 'import tensorflow' >/dev/null 2>&1; then
  python3 -m pip install --quiet "tensorflow-cpu==${TF_VERSION}"
fi
export TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl"
export EXAMPLE="$PWD/examples/tensorflow-mwms/tfjob.yaml"
exec python3 - <<'PY'
import json, os, re, subprocess, sys, tempfile, time
sys.path.insert(0, "tests/suites/lib")
from suite_checks import check, finish  # noqa: E402

run_dir = tempfile.mkdtemp(prefix="tfjob-76-")

t0 = time.time()
p = subprocess.run([os.environ["TFJOBCTL"], "run", "--run-dir", run_dir, os.environ["EXAMPLE"]],
                   capture_output=True, text=True, timeout=600)
took = time.time() - t0
print(f"tensorflow-mwms: exit {p.returncode} in {took:.1f} s")
check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}\n{p.stdout[-3000:]}")
specs = []
for i in range(2):
    log = open(os.path.join(run_dir, f"mwms-worker-{i}.log")).read()
    m = re.search(r"cluster spec: (\{.*\})", log)
    check(m is not None, f"worker {i}: logs the cluster spec TensorFlow resolved")
    if m:
        spec = json.loads(m.group(1))
        specs.append(spec)
        check(len(spec.get("worker", [])) == 2 and all(a.startswith("127.0.0.1:") for a in spec["worker"]),
              f"worker {i}: TensorFlow's cluster has our 2 local workers: {spec}")
    check(f"task: worker {i}" in log, f"worker {i}: TensorFlow knows its task")
    check("num_replicas_in_sync: 2" in log, f"worker {i}: num_replicas_in_sync == 2")
    losses = [float(x) for x in re.findall(r"epoch \d+ loss ([0-9.]+)", log)]
    check(len(losses) == 3 and losses[-1] < losses[0], f"worker {i}: loss falls {losses}")
    check("training finished" in log, f"worker {i}: training finished")
    if losses:
        print(f"  worker {i}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
check(len(specs) == 2 and specs[0] == specs[1], "both workers resolved the same cluster")
# The cluster TensorFlow formed is the one TF_CONFIG gave it.
pods = json.load(open(os.path.join(run_dir, "pods.json")))["items"]
for pod in pods:
    env = {e["name"]: e.get("value") for e in pod["spec"]["containers"][0]["env"]}
    check(specs and json.loads(env["TF_CONFIG"])["cluster"] == specs[0], "TF_CONFIG's cluster == TensorFlow's cluster spec")
check(len(pods) == 2 and all(p["status"]["phase"] == "Succeeded" for p in pods), "both worker pods Succeeded")
subprocess.run(["rm", "-rf", run_dir])
finish("76-local-tensorflow")
PY
