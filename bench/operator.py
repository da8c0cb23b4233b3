#!/usr/bin/env python3
"""One measurement of bench/operator.sh: one operator, alone, on a fresh kube-apiserver of the
head-to-head rig (tests/h2h/rig.sh start; KUBE_* of its env in the environment), N TFJobs of
1 PS + 2 workers (or one job of WIDE workers) created at once, the stand-in kubelet
(tests/h2h/kubelet.py) binding and running every pod, then ending every worker with exit code 0.

  operator.py --jobs N [--wide W] --agent PREFIX --audit LOG --apiserver-pid PID -- ARGV...

Prints one JSON object: seconds until every pod exists (from the first create), until every job
says Running after the stand-in has marked the last pod Running, until every job says Succeeded
after it has marked the last worker Succeeded; the operator's CPU seconds (utime + stime of
/proc/PID/stat, children included) and peak RSS (VmHWM) over the whole run, the kube-apiserver's
CPU seconds in the same window, and the operator's requests by verb (audit log)."""
import argparse
import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "h2h"))
from kubeclient import Kube  # noqa: E402
from kubelet import StandIn  # noqa: E402
import scenarios  # noqa: E402

NS = "bench"
TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime


def vm_hwm_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def tfjob(name, workers):
    def rs(n):
        return {"replicas": n, "restartPolicy": "Never", "template": {"spec": {"containers": [
            {"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0", "command": ["python", "/opt/train.py"]}]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"tfReplicaSpecs": {"PS": rs(1), "Worker": rs(workers)}}}


def count_jobs_with(user, cond):
    n = 0
    for j in user.items(f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs"):
        for c in (j.get("status") or {}).get("conditions") or []:
            if c.get("type") == cond and c.get("status") == "True":
                n += 1
                break
    return n


def wait_until(pred, timeout, what):
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return time.time()
        time.sleep(0.25)
    raise RuntimeError(f"timed out after {timeout} s: {what}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, required=True)
    ap.add_argument("--wide", type=int, default=0)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--audit", required=True)
    ap.add_argument("--apiserver-pid", type=int, required=True)
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("operator", nargs="+")
    a = ap.parse_args()
    user = Kube("h2h-user")
    user.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    kubelet = StandIn(NS)
    jobs = [tfjob(f"wide-{i}", a.wide) for i in range(a.jobs)] if a.wide else \
        [tfjob(f"job-{i}", 2) for i in range(a.jobs)]
    pods = sum(1 + j["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] for j in jobs)

    op = subprocess.Popen(a.operator, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        scenarios.wait_ready(op)
        cpu0, api0 = cpu_seconds(op.pid), cpu_seconds(a.apiserver_pid)
        t0 = time.time()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            codes = list(pool.map(lambda j: user.request("POST", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", j)[0], jobs))
        if any(c != 201 for c in codes):
            raise RuntimeError(f"creating jobs: {Counter(codes)}")
        t_pods = kubelet.wait_for(lambda ps: len(ps) >= pods, a.timeout) and time.time()
        if not t_pods:
            raise RuntimeError("timed out waiting for the pods")
        kubelet.wait_for(lambda ps: sum((p.get("status") or {}).get("phase") == "Running" for p in ps) >= pods, a.timeout)
        t_marked_running = time.time()
        t_running = wait_until(lambda: count_jobs_with(user, "Running") == len(jobs), a.timeout, "every job Running")
        workers = [p for p in kubelet.snapshot() if "-worker-" in p["metadata"]["name"]]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda p: kubelet._exit_one(p, 0), workers))
        t_marked_done = time.time()
        t_done = wait_until(lambda: count_jobs_with(user, "Succeeded") == len(jobs), a.timeout, "every job Succeeded")
        time.sleep(2)  # what the operator does right after (cleanup, last status writes) counts too
        cpu1, api1, hwm = cpu_seconds(op.pid), cpu_seconds(a.apiserver_pid), vm_hwm_kib(op.pid)
    finally:
        kubelet.close()
        os.killpg(op.pid, signal.SIGTERM)
        try:
            op.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(op.pid, signal.SIGKILL)
            op.wait()
    time.sleep(1)
    verbs = Counter()
    for ns, c in scenarios.audit_requests(a.audit, a.agent).items():
        if ns == NS:
            for k, n in c.items():
                verbs[k] += n
    print(json.dumps({
        "jobs": len(jobs), "pods": pods,
        "pods_exist_s": round(t_pods - t0, 2),
        "running_after_marked_s": round(t_running - t_marked_running, 2),
        "succeeded_after_marked_s": round(t_done - t_marked_done, 2),
        "operator_cpu_s": round(cpu1 - cpu0, 2), "operator_vmhwm_mib": round(hwm / 1024, 1),
        "apiserver_cpu_s": round(api1 - api0, 2),
        "requests": dict(sorted(verbs.items())), "requests_total": sum(verbs.values())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
