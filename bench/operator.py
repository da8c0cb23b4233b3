#!/usr/bin/env python3
"""One measurement of bench/operator.sh: one operator, alone, on a fresh kube-apiserver of the
head-to-head rig (tests/h2h/rig.sh start; KUBE_* of its env in the environment), N TFJobs of
1 PS + 2 workers (or one job of WIDE workers) created at once, the stand-in kubelet
(tests/h2h/kubelet.py, with STANDIN_WORKERS threads) binding and running every pod, then ending
every worker with exit code 0.

  operator.py --jobs N [--wide W] --agent PREFIX --audit LOG --apiserver-pid PID -- ARGV...
  operator.py --jobs N [--wide W] --standin-only

Prints one JSON object: seconds until every pod exists (from the first create); how long the
stand-in took after that to mark the last pod Running (its lag: when it is small, the stand-in is
not what the operator waits for) and to end every worker; seconds until every job says Running
after the stand-in has marked the last pod Running, and until every job says Succeeded after it has marked the last
worker Succeeded (both seen on a watch of the jobs); the operator's CPU seconds (utime + stime of
/proc/PID/stat, children included) from just before the creates to 2 s after the last job
Succeeded, its RSS when idle (VmRSS once it has reconciled a first job, before the creates), its
CPU while idle (--idle-seconds, then; all threads' schedstat, in ms per minute) and its
peak RSS (VmHWM, whole life), the kube-apiserver's CPU seconds in the same window, the operator's
requests by verb (audit log), its status writes (update/patch tfjobs/status) and the status
changes the job watch saw (a new status different from the job's previous one).

--standin-only: no operator; the pods an operator would create (3 per job, or 1 + WIDE) are
created by the bench itself from 8 threads, to show how fast the stand-in alone binds, runs and
ends them."""
import argparse
import concurrent.futures
import json
import os
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
STATUS_WRITES = ("update tfjobs/status", "patch tfjobs/status")
CREATORS = 8  # threads that create the jobs (or, --standin-only, the pods)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / TICK  # utime stime cutime cstime


def cpu_ns_all_threads(pid):
    """CPU time of every thread alive now, in ns (/proc/PID/task/*/schedstat): precise where the
    clock ticks of /proc/PID/stat (10 ms) are too coarse for an idle process."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended meanwhile
    return total


def idle_cpu_ms_per_min(pid, seconds):
    """The operator's CPU while nothing happens (no job, no request of the bench), per minute."""
    before = cpu_ns_all_threads(pid)
    time.sleep(seconds)
    return (cpu_ns_all_threads(pid) - before) / 1e6 * 60 / seconds


def proc_status_kib(pid, field):
    """A memory field of /proc/PID/status (VmRSS, VmHWM) in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def rss_by_kind(pid):
    """KiB of RSS now by kind of mapping (/proc/PID/smaps): the main heap, thread stacks (8 MiB
    anonymous mappings), other anonymous memory (glibc's other malloc arenas, large blocks),
    files: where the memory sits."""
    out, size, name = {"heap": 0, "stacks": 0, "anon": 0, "files": 0}, 0, ""
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            head = line.split()
            if not head[0].endswith(":"):
                lo, hi = (int(x, 16) for x in head[0].split("-"))
                size, name = hi - lo, head[5] if len(head) > 5 else ""
            elif head[0] == "Rss:":
                kind = ("heap" if name == "[heap]" else "stacks" if not name and size == 8 << 20
                        else "anon" if not name or name.startswith("[") else "files")
                out[kind] += int(head[1])
    return out


def container():
    return {"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0", "command": ["python", "/opt/train.py"]}


def tfjob(name, workers):
    def rs(n):
        return {"replicas": n, "restartPolicy": "Never", "template": {"spec": {"containers": [container()]}}}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"tfReplicaSpecs": {"PS": rs(1), "Worker": rs(workers)}}}


class JobWatch:
    """The jobs of the namespace as a watch shows them: which conditions are True, and how many
    times a job's status changed (a MODIFIED event whose status differs from the previous one)."""

    def __init__(self, user):
        self.status = {}
        self.changes = 0
        self.lock = threading.Condition()
        self.watcher = user.watch(f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", self._event)

    def _event(self, typ, job):
        name, status = job["metadata"]["name"], job.get("status") or {}
        with self.lock:
            if typ == "DELETED":
                self.status.pop(name, None)
            else:
                if name in self.status and status != self.status[name]:
                    self.changes += 1
                self.status[name] = status
            self.lock.notify_all()

    def count_with(self, cond):
        with self.lock:
            return sum(any(c.get("type") == cond and c.get("status") == "True" for c in s.get("conditions") or [])
                       for s in self.status.values())

    def close(self):
        self.watcher.close()


def event_reasons(user):
    """The Events in the bench namespace by reason: objects, and the sum of their counts."""
    code, body = user.request("GET", f"/api/v1/namespaces/{NS}/events")
    out = {}
    for e in (body or {}).get("items", []) if code == 200 else []:
        objects, count = out.get(e.get("reason", ""), (0, 0))
        out[e.get("reason", "")] = (objects + 1, count + (e.get("count") or 1))
    return {reason: {"objects": o, "count": c} for reason, (o, c) in sorted(out.items())}


def create_all(user, path, objects):
    with concurrent.futures.ThreadPoolExecutor(CREATORS) as pool:
        codes = list(pool.map(lambda o: user.request("POST", path, o)[0], objects))
    if any(c != 201 for c in codes):
        raise RuntimeError(f"creating {path}: {Counter(codes)}")


def wait_pods(kubelet, pods, phase, timeout):
    if not kubelet.wait_for(lambda ps: sum((p.get("status") or {}).get("phase") == phase for p in ps) >= pods,
                            timeout):
        raise RuntimeError(f"timed out after {timeout} s waiting for {pods} pods {phase}")
    return time.time()


def end_workers(kubelet):
    """The stand-in ends every worker with exit code 0; returns when it has marked the last one."""
    workers = [p for p in kubelet.snapshot() if "-worker-" in p["metadata"]["name"]]
    with concurrent.futures.ThreadPoolExecutor(CREATORS) as pool:
        list(pool.map(lambda p: kubelet._exit_one(p, 0), workers))
    return time.time()


def drive(user, kubelet, jobs, pods, create, timeout, watch=None):
    """Create, let the stand-in run every pod, end the workers; the times of each stage."""
    t = {"start": time.time()}
    create()
    if not kubelet.wait_for(lambda ps: len(ps) >= pods, timeout):
        raise RuntimeError(f"timed out after {timeout} s waiting for the {pods} pods")
    t["pods"] = time.time()
    t["marked_running"] = wait_pods(kubelet, pods, "Running", timeout)
    if watch:
        t["running"] = scenarios.wait_until("every job Running", lambda: watch.count_with("Running") == jobs,
                                            timeout, 0.05)
    t["ending"] = time.time()
    t["marked_done"] = end_workers(kubelet)
    if watch:
        t["done"] = scenarios.wait_until("every job Succeeded", lambda: watch.count_with("Succeeded") == jobs,
                                         timeout, 0.05)
    return t


def stage_times(t):
    out = {"pods_exist_s": round(t["pods"] - t["start"], 2),
           "standin_lag_s": round(t["marked_running"] - t["pods"], 2),
           "standin_end_workers_s": round(t["marked_done"] - t["ending"], 2)}
    if "running" in t:
        out["running_after_marked_s"] = round(t["running"] - t["marked_running"], 2)
        out["succeeded_after_marked_s"] = round(t["done"] - t["marked_done"], 2)
    return out


def standin_only(a, user, kubelet, jobs, pods):
    """The stand-in by itself: the bench creates the pods an operator would."""
    objs = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"{j['metadata']['name']}-{rt.lower()}-{i}"},
             "spec": {"restartPolicy": "Never", "containers": [container()]}}
            for j in jobs for rt, spec in j["spec"]["tfReplicaSpecs"].items() for i in range(spec["replicas"])]
    t = drive(user, kubelet, len(jobs), pods, lambda: create_all(user, f"/api/v1/namespaces/{NS}/pods", objs),
              a.timeout)
    return dict(stage_times(t), jobs=len(jobs), pods=pods)


def with_operator(a, user, kubelet, jobs, pods):
    op = subprocess.Popen(a.operator, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    watch = JobWatch(user)
    try:
        scenarios.wait_ready(op)
        time.sleep(1)  # the first reconcile's garbage, if any, is freed
        idle = proc_status_kib(op.pid, "VmRSS")
        idle_by_kind = rss_by_kind(op.pid)
        idle_cpu = idle_cpu_ms_per_min(op.pid, a.idle_seconds) if a.idle_seconds > 0 else None
        cpu0, api0 = cpu_seconds(op.pid), cpu_seconds(a.apiserver_pid)
        t = drive(user, kubelet, len(jobs), pods,
                  lambda: create_all(user, f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", jobs), a.timeout, watch)
        time.sleep(2)  # what the operator does right after (cleanup, last status writes) counts too
        cpu1, api1, hwm = cpu_seconds(op.pid), cpu_seconds(a.apiserver_pid), proc_status_kib(op.pid, "VmHWM")
        events = event_reasons(user)
        by_kind = rss_by_kind(op.pid)
    finally:
        watch.close()
        scenarios.stop_operator(op)
    time.sleep(1)  # the audit log is written asynchronously
    verbs = scenarios.audit_requests(a.audit, a.agent).get(NS, Counter())
    return dict(stage_times(t), **{
        "jobs": len(jobs), "pods": pods,
        "operator_cpu_s": round(cpu1 - cpu0, 2), "operator_idle_rss_mib": round(idle / 1024, 1),
        "operator_vmhwm_mib": round(hwm / 1024, 1), "rss_growth_kib_per_job": round((hwm - idle) / len(jobs), 1),
        "apiserver_cpu_s": round(api1 - api0, 2),
        "status_writes": sum(verbs[k] for k in STATUS_WRITES), "status_changes": watch.changes,
        "requests": dict(sorted(verbs.items())), "requests_total": sum(verbs.values()),
        "events": events, "idle_rss_kib_by_kind": idle_by_kind, "rss_kib_by_kind": by_kind},
        **({} if idle_cpu is None else {"operator_idle_cpu_ms_per_min": round(idle_cpu, 2)}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, required=True)
    ap.add_argument("--wide", type=int, default=0)
    ap.add_argument("--agent")
    ap.add_argument("--audit")
    ap.add_argument("--apiserver-pid", type=int)
    ap.add_argument("--timeout", type=int, default=1800)
    ap.add_argument("--standin-only", action="store_true")
    ap.add_argument("--idle-seconds", type=float, default=0,
                    help="first measure the operator's CPU this long while idle (ms per minute)")
    ap.add_argument("operator", nargs="*")
    a = ap.parse_args()
    if not a.standin_only and not (a.operator and a.agent and a.audit and a.apiserver_pid):
        ap.error("--agent, --audit, --apiserver-pid and the operator's command line are needed")
    user = Kube("h2h-user")
    user.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    kubelet = StandIn(NS, workers=int(os.environ.get("STANDIN_WORKERS", "8")))
    jobs = [tfjob(f"wide-{i}", a.wide) for i in range(a.jobs)] if a.wide else \
        [tfjob(f"job-{i}", 2) for i in range(a.jobs)]
    pods = sum(1 + j["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] for j in jobs)
    try:
        r = (standin_only if a.standin_only else with_operator)(a, user, kubelet, jobs, pods)
    finally:
        kubelet.close()
    print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
