#!/usr/bin/env python3
"""Peak RSS of tfjob-operator on the harness's kube-apiserver (bench/operator_rss.sh starts it):
JOBS TFJobs of 1 PS + WORKERS workers created at once, every pod set Running, then worker 0 of
each Succeeded (cleanPodPolicy Running deletes the rest); the operator's RSS is sampled every
20 ms from /proc. Prints one line of numbers; a benchmark, not a test.

usage: operator_rss.py OPERATOR JOBS WORKERS [QPS BURST THREADS]"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "kube"))
from e2e_lib import api  # noqa: E402

NS = "default"


def rss_kib(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def job(name, workers):
    tmpl = {"spec": {"containers": [{"name": "tensorflow", "image": "tf"}]}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name, "namespace": NS},
            "spec": {"runPolicy": {"cleanPodPolicy": "Running"}, "tfReplicaSpecs": {
                "PS": {"replicas": 1, "restartPolicy": "Never", "template": tmpl},
                "Worker": {"replicas": workers, "restartPolicy": "Never", "template": tmpl}}}}


def pod_names():
    names, cont = [], ""
    while True:
        q = "labelSelector=training.kubeflow.org/job-name&limit=500" + (f"&continue={cont}" if cont else "")
        c, body = api("GET", f"/api/v1/namespaces/{NS}/pods?{q}")
        names += [p["metadata"]["name"] for p in body.get("items", [])]
        cont = body.get("metadata", {}).get("continue")
        if not cont:
            return names


def set_phase(name, phase, code=None):
    st = {"phase": phase}
    if code is not None:
        st["containerStatuses"] = [{"name": "tensorflow", "state": {"terminated": {"exitCode": code}}}]
    for _ in range(20):
        c, _ = api("PATCH", f"/api/v1/namespaces/{NS}/pods/{name}/status", {"status": st},
                   "application/merge-patch+json")
        if c == 200:
            return
        time.sleep(0.1)


def succeeded(name):
    c, body = api("GET", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/{name}")
    return any(x.get("type") == "Succeeded" and x.get("status") == "True"
               for x in body.get("status", {}).get("conditions", []))


def main():
    op, jobs, workers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    qps, burst, threads = (sys.argv[4:7] + ["500", "1000", "1"][len(sys.argv[4:7]):])
    log = tempfile.NamedTemporaryFile(prefix="operator-rss-", suffix=".log", delete=False)
    p = subprocess.Popen([op, "--kubeconfig", os.environ["KUBE_ADMIN_KUBECONFIG"], "--metrics-bind-address",
                          "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0", "--threadiness", threads,
                          "--kube-api-qps", qps, "--kube-api-burst", burst], stdout=log, stderr=log)
    samples = []
    stop = threading.Event()

    def sample():
        while not stop.is_set() and p.poll() is None:
            try:
                samples.append(rss_kib(p.pid, "VmRSS"))
            except OSError:
                break
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()
    time.sleep(2)
    idle = rss_kib(p.pid, "VmRSS")
    t0 = time.time()
    names = [f"rss-{i}" for i in range(jobs)]
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda n: api("POST", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", job(n, workers)), names))
    want = jobs * (1 + workers)
    while len(pods := pod_names()) < want:
        time.sleep(0.5)
    t_created = time.time() - t0
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        list(ex.map(lambda n: set_phase(n, "Running"), pods))
        list(ex.map(lambda n: set_phase(f"{n}-worker-0", "Succeeded", 0), names))
    for n in names:
        while not succeeded(n):
            time.sleep(0.2)
    t_done = time.time() - t0
    time.sleep(1)
    peak = max(samples + [rss_kib(p.pid, "VmHWM")])
    cpu = sum(int(x) for x in open(f"/proc/{p.pid}/stat").read().rsplit(")", 1)[1].split()[11:13])
    stop.set()
    p.terminate()
    p.wait()
    print(json.dumps({"jobs": jobs, "workers": workers, "pods": want, "idle_rss_mib": round(idle / 1024, 1),
                      "peak_rss_mib": round(peak / 1024, 1), "growth_kib_per_job": round((peak - idle) / jobs, 1),
                      "created_s": round(t_created, 1), "succeeded_s": round(t_done, 1),
                      "operator_cpu_s": round(cpu / os.sysconf("SC_CLK_TCK"), 2), "log": log.name}))


main()
