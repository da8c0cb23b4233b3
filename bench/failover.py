#!/usr/bin/env python3
"""One failover trial of two operator replicas with leader election (bench/failover.sh runs
them, interleaved, and prints the table). Runs against the kube-apiserver of tests/h2h/rig.sh
(KUBE_* in the environment) and prints one JSON line.

  failover.py --kind KIND --ns NS --agent PREFIX --argv1 FILE --argv2 FILE --harness-dir DIR

KIND:
  kill9      SIGKILL to the leader: the standby waits for the lease to expire
  stop       SIGSTOP to the leader, held until the standby has acted (past the lease), then
             SIGCONT: the old leader must stand down (exit) and make no duplicate
  term       SIGTERM to the leader (a rolling update): it stops gracefully, handing the Lease
             back if it does so (tfjob-operator does; v1.9's manager does not)
  apiserver  kube-apiserver restarted (tests/kube/harness.sh restart-apiserver): every watch and
             connection breaks; whichever replica leads afterwards must go on
  compact    many writes, an etcd compaction at the newest revision, then the apiserver
             restarted: the operators' watches resume from a compacted resourceVersion and get
             410 Gone (they must list again)
The trial: replica 1 starts and takes the lease, replica 2 starts as standby, a job of two
workers runs, the disruption happens at t0, a second job is created 0.5 s later (or as soon as
the API server answers again), and both jobs are driven to Succeeded. Measured from t0:
  lease_s   the Lease names the standby (kill9, stop, term)
  act_s     the second job's first pod exists (observed by a watch): the operator has acted
            (act_by: the field manager that created it, which tells the binaries apart)
  back_s    (apiserver, compact) the API server answers again
For apiserver and compact, relists counts the replicas' LISTs of pods, services and TFJobs after
t0 (from the audit log): a watch that resumes where it was needs none, one that meets 410 Gone
lists again. Checked: every pod name has one uid (no duplicate, nothing recreated), both jobs Succeeded, no
Failed condition, and for stop the old leader exits after SIGCONT (stood_down_s)."""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "h2h"))
from kubeclient import Kube  # noqa: E402
from kubelet import StandIn  # noqa: E402

USER = Kube("h2h-user")
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kubeflow/leases/1ca428e5.training-operator.kubeflow.org"
JOBS = "/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
HARNESS = os.path.join(HERE, "..", "tests", "kube", "harness.sh")


def tfjob(name, workers):
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
            "spec": {"tfReplicaSpecs": {"Worker": {"replicas": workers, "restartPolicy": "Never", "template": {
                "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]}}}}}}


def wait_until(what, pred, timeout, poll=0.05):
    end = time.time() + timeout
    while time.time() < end:
        v = pred()
        if v:
            return v
        time.sleep(poll)
    raise TimeoutError(f"timed out after {timeout} s waiting for {what}")


def holder():
    code, body = USER.get(LEASE)
    return ((body.get("spec") or {}).get("holderIdentity") or "") if code == 200 else ""


def condition(ns, job, typ):
    code, body = USER.get(JOBS.format(ns=ns) + "/" + job)
    if code != 200:
        return False
    return any(c.get("type") == typ and c.get("status") == "True"
               for c in (body.get("status") or {}).get("conditions") or [])


class PodLog:
    """Every pod uid per name in a namespace, and when each name was first seen; a watch that
    starts again (list + watch) after the API server went away."""

    def __init__(self, ns):
        self.ns, self.lock = ns, threading.Lock()
        self.uids, self.first = {}, {}
        self.watch = None
        self.restart()

    def _event(self, typ, pod):
        m = pod["metadata"]
        with self.lock:
            u = self.uids.setdefault(m["name"], [])
            if m["uid"] not in u:
                u.append(m["uid"])
            self.first.setdefault(m["name"], time.time())

    def restart(self):
        if self.watch:
            self.watch.close()
        self.watch = USER.watch(f"/api/v1/namespaces/{self.ns}/pods", self._event)


def api_ready():
    try:
        return USER.get("/readyz")[0] == 200
    except OSError:
        return False


def etcd_compact():
    """Compact etcd at its newest revision (its JSON gateway); returns that revision."""
    url = os.environ["ETCD_URL"]

    def post(path, body):
        req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())
    rev = int(post("/v3/kv/range", {"key": "AA==", "limit": 1})["header"]["revision"])
    post("/v3/kv/compaction", {"revision": str(rev), "physical": True})
    return rev


def relists(log, start, agent):
    n = 0
    with open(log) as f:
        f.seek(start)
        for line in f:
            e = json.loads(line)
            if e.get("stage") != "ResponseComplete" or not (e.get("userAgent") or "").startswith(agent):
                continue
            res = (e.get("objectRef") or {}).get("resource")
            if res in ("pods", "services", "tfjobs") and (
                    e["verb"] == "list" or (e["verb"] == "watch" and "sendInitialEvents=true" in e.get("requestURI", ""))):
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kind", required=True, choices=("kill9", "stop", "term", "apiserver", "compact"))
    ap.add_argument("--ns", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--argv1", required=True)
    ap.add_argument("--argv2", required=True)
    ap.add_argument("--harness-dir", required=True)
    ap.add_argument("--audit", required=True, help="the API server's audit log (tests/h2h/rig.sh start)")
    ap.add_argument("--user-agent", required=True, help="the operator's user agent prefix (rig.sh agent)")
    ap.add_argument("--logs", required=True)
    a = ap.parse_args()
    argv = [open(f).read().split("\n")[:-1] for f in (a.argv1, a.argv2)]
    out = {"kind": a.kind, "agent": a.agent, "problems": []}

    def problem(msg):
        out["problems"].append(msg)

    USER.request("DELETE", LEASE)  # a fresh election per trial
    USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": a.ns}})
    procs, logs = [], []
    kubelet = pods = None
    try:
        # replica 1 leads, replica 2 stands by
        for i in (0, 1):
            logs.append(open(os.path.join(a.logs, f"replica-{i + 1}.log"), "w"))
            procs.append(subprocess.Popen(argv[i], stdout=logs[i], stderr=subprocess.STDOUT, start_new_session=True))
            if i == 0:
                leader = wait_until("replica 1 to take the lease", holder, 120)
        time.sleep(3)  # the standby has started and seen the lease held
        if holder() != leader or any(p.poll() is not None for p in procs):
            raise RuntimeError("the replicas did not settle as leader + standby")
        kubelet = StandIn(a.ns)
        pods = PodLog(a.ns)
        code, body = USER.request("POST", JOBS.format(ns=a.ns), tfjob("first", 2))
        if code != 201:
            raise RuntimeError(f"creating job first: HTTP {code} {body.get('message')}")
        wait_until("first: 2 pods Running", lambda: kubelet.wait_for(
            lambda ps: sum((p.get("status") or {}).get("phase") == "Running" for p in ps) == 2, 0.2), 120)
        wait_until("first: Running", lambda: condition(a.ns, "first", "Running"), 60)
        time.sleep(1)

        # the disruption, then the second job
        old = procs[0]
        audit_at = os.path.getsize(a.audit)
        if a.kind in ("kill9", "stop", "term"):
            t0 = time.time()
            os.killpg(old.pid, {"kill9": signal.SIGKILL, "stop": signal.SIGSTOP, "term": signal.SIGTERM}[a.kind])
            # The second job comes a little later: a leader busy in a request when the signal
            # came may still carry it out (a stopped leader's create in flight then lands).
            time.sleep(0.5)
        else:
            if a.kind == "compact":
                for i in range(200):  # move the revision on: the operators' resourceVersions fall behind
                    USER.request("PUT" if i else "POST", f"/api/v1/namespaces/{a.ns}/configmaps" + ("/churn" if i else ""),
                                 {"metadata": {"name": "churn"}, "data": {"i": str(i)}})
            t0 = time.time()
            if a.kind == "compact":
                out["compacted_revision"] = etcd_compact()
            subprocess.run([HARNESS, "restart-apiserver", a.harness_dir], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            wait_until("the API server", api_ready, 60, 0.1)
            out["back_s"] = round(time.time() - t0, 3)
            kubelet.close()
            kubelet = StandIn(a.ns)
            pods.restart()
        while True:
            code, body = USER.request("POST", JOBS.format(ns=a.ns), tfjob("second", 1))
            if code == 201:
                break
            if time.time() - t0 > 60:
                raise RuntimeError(f"creating job second: HTTP {code} {body.get('message')}")
            time.sleep(0.1)
        if a.kind in ("kill9", "stop", "term"):
            new = wait_until("the standby to take the lease", lambda: (lambda h: h if h and h != leader else "")(holder()), 120)
            out["lease_s"] = round(time.time() - t0, 3)
            out["new_holder_is_standby"] = new != leader
        wait_until("second: its pod", lambda: "second-worker-0" in pods.first, 120, 0.02)
        out["act_s"] = round(pods.first["second-worker-0"] - t0, 3)
        code, body = USER.get(f"/api/v1/namespaces/{a.ns}/pods/second-worker-0")
        out["act_by"] = sorted({f.get("manager") for f in (body.get("metadata") or {}).get("managedFields") or []
                                if f.get("operation") == "Update" and f.get("subresource") != "status"
                                or f.get("operation") == "Create"} - {None})
        if a.kind == "stop":
            t1 = time.time()
            os.killpg(old.pid, signal.SIGCONT)
            try:
                old.wait(30)
                out["stood_down_s"] = round(time.time() - t1, 3)
            except subprocess.TimeoutExpired:
                problem("the old leader did not stand down within 30 s of SIGCONT")
        if a.kind in ("apiserver", "compact"):
            out["leader_after"] = "same" if holder() == leader else "changed"

        # both jobs to their end
        for job, names in (("first", ("worker-0", "worker-1")), ("second", ("worker-0",))):
            for n in names:
                if not kubelet.exit(f"{job}-{n}", 0, 60):
                    problem(f"{job}-{n} was not running")
        for job in ("first", "second"):
            try:
                wait_until(f"{job}: Succeeded", lambda: condition(a.ns, job, "Succeeded"), 90, 0.2)
            except TimeoutError as e:
                problem(str(e))
            if condition(a.ns, job, "Failed"):
                problem(f"{job}: Failed")
        time.sleep(2)
        with pods.lock:
            for name, u in pods.uids.items():
                if len(u) > 1:
                    problem(f"pod {name} created {len(u)} times")
        out["pods"] = len(pods.uids)
        out["exited"] = [i + 1 for i, p in enumerate(procs) if p.poll() is not None]
    except Exception as e:
        problem(f"{type(e).__name__}: {e}")
    finally:
        for p in procs:
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGCONT)
                    os.killpg(p.pid, signal.SIGTERM)
                    p.wait(20)
                except (subprocess.TimeoutExpired, ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()
        if kubelet:
            kubelet.close()
        if pods:
            pods.watch.close()
    if a.kind in ("apiserver", "compact"):
        # Did the watches meet 410 Gone? Then the replicas listed again: a LIST (or a watch that
        # starts with the initial events) of pods, services or TFJobs after t0.
        time.sleep(1)  # the audit log is written asynchronously
        out["relists"] = relists(a.audit, audit_at, a.user_agent)
    print(json.dumps(out), flush=True)
    return 1 if out["problems"] else 0


if __name__ == "__main__":
    sys.exit(main())
