#!/usr/bin/env bash
# tfjobctl run says why a replica failed: its exit code, last lines and log, live and in the final
# report (also after cleanPodPolicy deleted it); a restart loop says when the next restart comes
# and Ctrl-C does not wait for it; get --run-dir shows the same report. GPUs: nvidia.com/gpu limits
# get disjoint CUDA_VISIBLE_DEVICES from --gpus, no limit gets it empty, too many is refused.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
export TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl"
export EXAMPLES="$PWD/examples"
exec python3 - <<'PY'
import json, os, re, signal, subprocess, sys, tempfile, time
sys.path.insert(0, "tests/suites/lib")
from suite_checks import check, finish  # noqa: E402

ctl, examples = os.environ["TFJOBCTL"], os.environ["EXAMPLES"]
tmp = tempfile.mkdtemp(prefix="tfjob-77-")


def run(args, timeout=120):
    p = subprocess.run([ctl, *args], capture_output=True, text=True, timeout=timeout, cwd=tmp)
    return p.returncode, p.stdout, p.stderr

def write_job(name, text):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path

def job(name, workers, script, policy="Never", run_policy="{}", resources=""):
    return write_job(name, f"""apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: {name}
spec:
  runPolicy: {run_policy}
  tfReplicaSpecs:
    Worker:
      replicas: {workers}
      restartPolicy: {policy}
      template:
        spec:
          containers:
          - name: tensorflow
            image: busybox
            command: [sh, -c, {json.dumps(script)}]{resources}
""")

# 1. a replica that exits 1: live, then in the report, with its last lines and its log
d = os.path.join(tmp, "permanent")
rc, out, err = run(["run", "--run-dir", d, os.path.join(examples, "failures", "permanent.yaml")])
log = os.path.join(d, "permanent-worker-1.log")
live, report = out.split("\nName:", 1) if "\nName:" in out else (out, "")
check(rc == 1, f"permanent: exit {rc}: {err}")
check(re.search(r"^\d\d:\d\d:\d\d worker-1 failed with exit 1$", live, re.M), f"permanent: live failure line:\n{live}")
check(f"    log: {log} (last 2 lines):\n    | worker 1: working\n    | worker 1: failing with exit code 1\n" in live,
      f"permanent: live tail and log path:\n{live}")
check("Replicas:\n  worker-0 was still running: deleted by cleanPodPolicy Running as the job finished (exit 143)\n"
      f"  worker-1 failed with exit 1\n      log: {log} (last 2 lines):\n      | worker 1: working\n"
      "      | worker 1: failing with exit code 1\n" in report, f"permanent: the report's replicas:\n{report}")
rc, out, err = run(["get", "--run-dir", d, "--tail", "1"])
check(rc == 0 and f"      log: {log} (last 1 line):\n      | worker 1: failing with exit code 1\nEvents:" in out,
      f"get --run-dir --tail 1: {rc} {err}\n{out}")
rc, out, err = run(["get", "--run-dir", d, "-o", "json"])
rep = json.loads(out)["report"] if rc == 0 else {}
w1 = [r for r in rep.get("replicas", []) if r["name"] == "worker-1"]
check(w1 and w1[0]["failedExitCode"] == 1 and w1[0]["log"] == log and len(w1[0]["tail"]) == 2,
      f"get -o json: report {rep}")
rc, out, err = run(["get", "--run-dir", d, "--tail", "x"])
check(rc == 2 and "--tail" in err, f"--tail x: exit {rc} {err}")

# 2. v1.9 counts a failed replica that cleanPodPolicy deleted as succeeded: the report says what happened
script = 'if [ "$TFJOB_POD_NAME" = gone-worker-1 ]; then echo "Traceback: boom" >&2; exit 2; fi; sleep 30'
d = os.path.join(tmp, "gone")
rc, out, err = run(["run", "--compat", "training-operator-1.9", "--run-dir", d,
                    job("gone", 2, script, run_policy="{cleanPodPolicy: All}")])
check(rc == 1 and "  worker-1 failed with exit 2, then deleted by cleanPodPolicy All as the job finished\n" in out
      and "      | Traceback: boom\n" in out and "Pods:\n  <none>" in out, f"deleted after failing: exit {rc}\n{out}")

# 3. a restart loop (OnFailure, no backoffLimit): the view says when the next restart comes, with
#    the kubelet's 10 s first back-off; Ctrl-C stops the run at once
d = os.path.join(tmp, "loop")
path = job("loop", 1, 'echo "try $(date +%s%N)"; exit 1', policy="OnFailure")
p = subprocess.Popen([ctl, "run", "--run-dir", d, path], stdout=subprocess.PIPE, text=True, cwd=tmp)
seen, t0 = [], time.time()
while time.time() - t0 < 30:
    line = p.stdout.readline()
    if not line:
        break
    seen.append(line)
    if re.search(r"worker-0 exited 1 once, next restart in 1[0-9]s$", line.rstrip()):
        break
check(any("next restart in 1" in l for l in seen), f"restart loop announced: {''.join(seen)}")
t1 = time.time()
p.send_signal(signal.SIGINT)
rest, _ = p.communicate(timeout=30)
took = time.time() - t1
check(p.returncode == 130 and took < 5, f"Ctrl-C during a back-off: exit {p.returncode} after {took:.1f} s")
check("  worker-0 failed with exit 1\n" in rest, f"restart loop: report after Ctrl-C:\n{rest}")
pod = json.load(open(os.path.join(d, "pods.json")))["items"][0]
waiting = pod["status"]["containerStatuses"][0]["state"]
check("terminated" in waiting, f"after Ctrl-C the pod has ended: {waiting}")

# 4. GPUs: disjoint CUDA_VISIBLE_DEVICES per replica, empty without a limit, too many refused
gpu = ('\n            resources:\n              limits: {nvidia.com/gpu: 2}')
path = job("gpu", 2, 'echo "[$CUDA_VISIBLE_DEVICES]"', resources=gpu)
with open(path, "a") as f:
    f.write("""    PS:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: busybox
            command: [sh, -c, 'echo "[${CUDA_VISIBLE_DEVICES-unset}]"; sleep 1']
""")
d = os.path.join(tmp, "gpu")
rc, out, err = run(["run", "--gpus", "0,1,2,3", "--run-dir", d, path])
logs = {n: open(os.path.join(d, f"gpu-{n}.log")).read().strip() for n in ("worker-0", "worker-1", "ps-0")} if rc == 0 else {}
check(rc == 0 and sorted([logs["worker-0"], logs["worker-1"]]) == ["[0,1]", "[2,3]"] and logs["ps-0"] == "[]",
      f"GPUs: exit {rc} {err} {logs}")
d = os.path.join(tmp, "gpu-too-many")
rc, out, err = run(["run", "--gpus", "0,1,2", "--run-dir", d, path])
check(rc == 2 and "resources.limits[nvidia.com/gpu]: the job asks for 4 GPUs (Worker: 2 x 2) and 3 are available (0,1,2)" in err
      and not os.path.exists(os.path.join(d, "gpu-worker-0.log")) and "Events:" not in out,
      f"too many GPUs: exit {rc} {err}\n{out}")
rc, out, err = run(["run", "--gpus", "", "--run-dir", os.path.join(tmp, "gpu-none"), path])
check(rc == 2 and "and 0 are available" in err, f"--gpus '': exit {rc} {err}")
rc, out, err = run(["run", "--gpus", "0,0", "--run-dir", os.path.join(tmp, "gpu-twice"), path])
check(rc == 2 and "listed twice" in err, f"--gpus 0,0: exit {rc} {err}")

rc, out, _ = run(["run", "--help"])
check(rc == 0 and "--tail N" in out and "--gpus LIST" in out, "run --help lists --tail and --gpus")

subprocess.run(["rm", "-rf", tmp])
finish("77-local-failures")
PY
