#!/usr/bin/env python3
"""Live swap between two TFJob operators (tests/suites/72-live-swap.sh, docs/install.md
"Migrating from training-operator"): jobs run under operator A, A is stopped mid-run, operator B
is started and takes them over, and every job is driven to its end under B.

  swap.py --out DIR --audit LOG --agent-a PREFIX --argv-a FILE --agent-b PREFIX --argv-b FILE

(FILE: the operator's command line, one word a line: tests/h2h/rig.sh argv.) What must hold, and
is checked (each failure is printed and the exit status is 1):
  - B recreates nothing: the pods and services of the jobs A ran keep their uids, and B writes
    none of them (their resourceVersions are unchanged once B has settled, so no label, owner
    reference or annotation was rewritten);
  - no duplicates: over the whole run every pod name has one uid, but for the worker A replaced
    before the swap (a retryable exit code), which has two, both made by A;
  - conditions continuous: no condition disappears (but Running and Restarting, which replace
    each other), a condition's lastTransitionTime changes only
    when its status does, B adds no condition to a job it took over before the user acts, and no
    job ever shows Failed, nor Restarting but for the replaced worker's job before the swap;
    startTime is kept;
  - every job ends Succeeded: those A ran, one created while no operator ran, and one created
    suspended under A and resumed under B; a job that had succeeded under A is left as it was.
DIR/swap.json holds the two snapshots (before the stop, after B settled), B's writes in the
namespace while it took over, and the findings."""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from scenarios import JOBS, USER, OperatorActivity, stop_operator, wait_ready, wait_until  # noqa: E402
from kubelet import StandIn  # noqa: E402

NS = "h2h-swap"
IMAGE = "tensorflow/tensorflow:2.15.0"
SETTLE_SECONDS = 3.0


def tfjob(name, replicas, suspend=False):
    """A TFJob with replicas {type: (count, restartPolicy)}."""
    specs = {t: {"replicas": n, "restartPolicy": rp, "template": {"spec": {"containers": [
        {"name": "tensorflow", "image": IMAGE, "command": ["python", "/opt/train.py"]}]}}}
        for t, (n, rp) in replicas.items()}
    spec = {"tfReplicaSpecs": specs}
    if suspend:
        spec["runPolicy"] = {"suspend": True}
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


# The jobs A runs, and what the user does to them before and after the swap.
JOBS_A = {
    "psw": tfjob("psw", {"PS": (1, "Never"), "Worker": (2, "Never")}),
    "chief": tfjob("chief", {"Chief": (1, "Never"), "Worker": (1, "Never")}),
    "onfail": tfjob("onfail", {"Worker": (2, "OnFailure")}),
    "retry": tfjob("retry", {"Worker": (2, "ExitCode")}),
    "done": tfjob("done", {"Worker": (1, "Never")}),
    "susp": tfjob("susp", {"Worker": (1, "Never")}, suspend=True),
}
LATE = tfjob("late", {"Worker": (1, "Never")})  # created while no operator runs
EXPECTED_PODS = {"psw": 3, "chief": 2, "onfail": 2, "retry": 2, "done": 1}


class Recorder:
    """Every pod uid seen per name, and every distinct condition list (with times) per job."""

    def __init__(self):
        self.lock = threading.Lock()
        self.uids = {}        # pod name -> [uid, ...] in order seen
        self.conditions = {}  # job -> [[{type, status, reason, message, lastTransitionTime}], ...]
        self.swap_index = {}  # job -> len(conditions[job]) when A was stopped
        self.pods = USER.watch(f"/api/v1/namespaces/{NS}/pods", self._pod)
        self.jobs = USER.watch(JOBS.format(ns=NS), self._job)

    def _pod(self, typ, pod):
        m = pod["metadata"]
        with self.lock:
            seen = self.uids.setdefault(m["name"], [])
            if m["uid"] not in seen:
                seen.append(m["uid"])

    def _job(self, typ, job):
        if typ == "DELETED":
            return
        conds = [{k: c.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime")}
                 for c in (job.get("status") or {}).get("conditions") or []]
        with self.lock:
            hist = self.conditions.setdefault(job["metadata"]["name"], [])
            if not hist or hist[-1] != conds:
                hist.append(conds)

    def mark_swap(self):
        with self.lock:
            self.swap_index = {j: len(h) for j, h in self.conditions.items()}

    def close(self):
        self.pods.close()
        self.jobs.close()


def get_job(name):
    code, body = USER.get(JOBS.format(ns=NS) + "/" + name)
    return body if code == 200 else None


def has_condition(name, typ):
    st = (get_job(name) or {}).get("status") or {}
    return any(c.get("type") == typ and c.get("status") == "True" for c in st.get("conditions") or [])


def live_pods(job, phase=None):
    out = []
    for p in USER.items(f"/api/v1/namespaces/{NS}/pods?labelSelector=training.kubeflow.org/job-name={job}"):
        if p["metadata"].get("deletionTimestamp"):
            continue
        if phase and (p.get("status") or {}).get("phase") != phase:
            continue
        out.append(p)
    return out


def snapshot():
    """Per job: its status (conditions with times, startTime, replicaStatuses, completionTime) and
    its children: pods and services by name -> uid, resourceVersion, labels, owner references."""
    def child(o):
        m = o["metadata"]
        return {"uid": m["uid"], "resourceVersion": m["resourceVersion"], "labels": m.get("labels") or {},
                "annotations": m.get("annotations") or {},
                "ownerReferences": [{k: r.get(k) for k in ("kind", "name", "uid", "controller", "blockOwnerDeletion")}
                                    for r in m.get("ownerReferences") or []]}
    out = {}
    pods = USER.items(f"/api/v1/namespaces/{NS}/pods")
    svcs = USER.items(f"/api/v1/namespaces/{NS}/services")
    for j in USER.items(JOBS.format(ns=NS)):
        name = j["metadata"]["name"]
        st = j.get("status") or {}
        mine = lambda o: ((o["metadata"].get("labels") or {}).get("training.kubeflow.org/job-name") == name)  # noqa: E731
        out[name] = {
            "status": {"conditions": [{k: c.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime")}
                                      for c in st.get("conditions") or []],
                       "startTime": st.get("startTime"), "completionTime": st.get("completionTime"),
                       "replicaStatuses": st.get("replicaStatuses")},
            "resourceVersion": j["metadata"]["resourceVersion"],
            "pods": {p["metadata"]["name"]: child(p) for p in pods if mine(p)},
            "services": {v["metadata"]["name"]: child(v) for v in svcs if mine(v)}}
    return out


def settle(activity, timeout=60):
    """Until the namespace's state has not changed and the operator has made no request in it for
    SETTLE_SECONDS, and the stand-in has no deletion to finish."""
    last, since, end = None, time.time(), time.time() + timeout
    while time.time() < end:
        s = snapshot()
        if s != last:
            last, since = s, time.time()
        elif time.time() - since >= SETTLE_SECONDS and activity.idle_for(NS) >= SETTLE_SECONDS \
                and not KUBELET.busy():
            return s
        time.sleep(0.25)
    return last


KUBELET = None


def start_operator(argv, log, ready):
    op = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    t = time.time()
    wait_ready(op, ready)
    print(f"  {os.path.basename(argv[0])} ready in {time.time() - t:.1f} s", flush=True)
    return op


def exit_pods(job, pattern, code):
    changed = KUBELET.exit(f"{job}-{pattern}", code, 60)
    if not changed:
        raise RuntimeError(f"{job}: no running pod matches {pattern}")


def b_writes(audit, agent, start):
    """B's writes in the namespace from byte offset start of the audit log: [verb resource name]."""
    out = []
    with open(audit) as f:
        f.seek(start)
        for line in f:
            e = json.loads(line)
            if e.get("stage") != "ResponseComplete" or not (e.get("userAgent") or "").startswith(agent):
                continue
            ref = e.get("objectRef") or {}
            if ref.get("namespace") != NS or e["verb"] in ("get", "list", "watch"):
                continue
            res = ref.get("resource", "?") + ("/" + ref["subresource"] if ref.get("subresource") else "")
            out.append(f"{e['verb']} {res} {ref.get('name', '')}".strip())
    return out


def compare(before, after, writes, fail):
    """What B changed in the jobs A ran, before any user action."""
    for job, b in before.items():
        a = after.get(job)
        if a is None:
            fail(f"{job}: gone after the swap")
            continue
        for kind in ("pods", "services"):
            for name, child in b[kind].items():
                now = a[kind].get(name)
                if now is None:
                    fail(f"{job}: {kind[:-1]} {name} deleted by the new operator")
                elif now["uid"] != child["uid"]:
                    fail(f"{job}: {kind[:-1]} {name} recreated (uid {child['uid']} -> {now['uid']})")
                elif now["resourceVersion"] != child["resourceVersion"]:
                    diff = {k: (child[k], now[k]) for k in ("labels", "annotations", "ownerReferences")
                            if child[k] != now[k]}
                    fail(f"{job}: {kind[:-1]} {name} rewritten by the new operator: {diff or 'same metadata'}")
            for name in sorted(set(a[kind]) - set(b[kind])):
                fail(f"{job}: new {kind[:-1]} {name} after the swap")
        sb, sa = b["status"], a["status"]
        if sb["startTime"] != sa["startTime"]:
            fail(f"{job}: startTime {sb['startTime']} -> {sa['startTime']}")
        if sb["completionTime"] != sa["completionTime"]:
            fail(f"{job}: completionTime {sb['completionTime']} -> {sa['completionTime']}")
        key = lambda c: (c["type"], c["status"], c["reason"], c["lastTransitionTime"])  # noqa: E731
        if [key(c) for c in sb["conditions"]] != [key(c) for c in sa["conditions"]]:
            fail(f"{job}: conditions changed by the takeover: {sb['conditions']} -> {sa['conditions']}")
        elif [c["message"] for c in sb["conditions"]] != [c["message"] for c in sa["conditions"]]:
            fail(f"{job}: condition messages rewritten: {[c['message'] for c in sb['conditions']]} -> "
                 f"{[c['message'] for c in sa['conditions']]}")
        if sb["replicaStatuses"] != sa["replicaStatuses"]:
            fail(f"{job}: replicaStatuses {sb['replicaStatuses']} -> {sa['replicaStatuses']}")
    children = {n for b in before.values() for k in ("pods", "services") for n in b[k]}
    for w in writes:
        parts = w.split()
        if len(parts) == 3 and parts[1] in ("pods", "services") and parts[2] in children:
            fail(f"the new operator wrote a child of a job it took over: {w}")


def check_history(rec, fail):
    """Pod uids per name and condition timelines over the whole run."""
    with rec.lock:
        uids = {n: list(u) for n, u in rec.uids.items()}
        hist = {j: list(h) for j, h in rec.conditions.items()}
        swap = dict(rec.swap_index)
    for name, u in sorted(uids.items()):
        allowed = 2 if name == "retry-worker-1" else 1
        if len(u) > allowed:
            fail(f"pod {name} created {len(u)} times (uids {u})")
    if len(uids.get("retry-worker-1", [])) != 2:
        fail(f"retry-worker-1 should have been replaced once, before the swap: uids {uids.get('retry-worker-1')}")
    for job, h in sorted(hist.items()):
        prev_types, ltt = [], {}
        for i, conds in enumerate(h):
            types = [c["type"] for c in conds]
            # Running and Restarting replace each other (both operators drop one when they set
            # the other); any other condition, once there, stays.
            lost = [t for t in prev_types if t not in types and
                    not (t == "Running" and "Restarting" in types) and not (t == "Restarting" and "Running" in types)]
            if lost:
                fail(f"{job}: condition(s) {lost} lost at {conds}")
            prev_types = types
            ltt = {t: v for t, v in ltt.items() if t in types}  # one that comes back is a new one
            for c in conds:
                prev = ltt.get(c["type"])
                if prev and prev[0] == c["status"] and prev[1] != c["lastTransitionTime"]:
                    fail(f"{job}: {c['type']} lastTransitionTime {prev[1]} -> {c['lastTransitionTime']} "
                         f"with its status unchanged ({c['status']})")
                ltt[c["type"]] = (c["status"], c["lastTransitionTime"])
                if c["status"] != "True":
                    continue
                if c["type"] == "Failed":
                    fail(f"{job}: Failed: {c['message']}")
                if c["type"] == "Restarting" and (job != "retry" or i >= swap.get(job, 0)):
                    fail(f"{job}: Restarting {'after the swap' if job == 'retry' else ''}: {c['message']}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--audit", required=True)
    for side in "ab":
        ap.add_argument(f"--agent-{side}", required=True)
        ap.add_argument(f"--argv-{side}", required=True)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    argv_a = open(a.argv_a).read().split("\n")[:-1]
    argv_b = open(a.argv_b).read().split("\n")[:-1]
    findings = []

    def fail(msg):
        findings.append(msg)
        print(f"  FAIL {msg}", flush=True)

    global KUBELET
    act_a = OperatorActivity(a.audit, a.agent_a)
    act_b = OperatorActivity(a.audit, a.agent_b)
    code, body = USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    if code != 201:
        raise RuntimeError(f"creating namespace {NS}: HTTP {code} {body}")
    KUBELET = StandIn(NS)
    rec = Recorder()
    log_a = open(os.path.join(a.out, "operator-a.log"), "w")
    log_b = open(os.path.join(a.out, "operator-b.log"), "w")
    op_a = op_b = None
    report = {}
    try:
        print("A: start, run the jobs", flush=True)
        op_a = start_operator(argv_a, log_a, "ready-a")
        for j in JOBS_A.values():
            code, body = USER.request("POST", JOBS.format(ns=NS), j)
            if code != 201:
                raise RuntimeError(f"creating {j['metadata']['name']}: HTTP {code} {body.get('message')}")
        for job, n in EXPECTED_PODS.items():
            wait_until(f"{job}: {n} pods Running", lambda: len(live_pods(job, "Running")) == n, 90)
            wait_until(f"{job}: Running", lambda: has_condition(job, "Running"), 60)
        exit_pods("done", "worker-0", 0)
        exit_pods("onfail", "worker-0", 1)  # restarted in place by the kubelet
        old = [p["metadata"]["uid"] for p in live_pods("retry") if p["metadata"]["name"] == "retry-worker-1"]
        exit_pods("retry", "worker-1", 137)  # A deletes it and creates it again
        wait_until("done: Succeeded", lambda: has_condition("done", "Succeeded"), 60)
        wait_until("retry-worker-1 replaced and Running",
                   lambda: any(p["metadata"]["name"] == "retry-worker-1" and p["metadata"]["uid"] not in old
                               for p in live_pods("retry", "Running")), 90)
        wait_until("retry: Running again", lambda: has_condition("retry", "Running"), 60)
        before = settle(act_a)

        print("swap: stop A, create a job while no operator runs, start B", flush=True)
        stop_operator(op_a)
        op_a = None
        rec.mark_swap()
        code, body = USER.request("POST", JOBS.format(ns=NS), LATE)
        if code != 201:
            raise RuntimeError(f"creating late: HTTP {code} {body.get('message')}")
        offset = os.path.getsize(a.audit)
        op_b = start_operator(argv_b, log_b, "ready-b")
        wait_until("late: 1 pod Running", lambda: len(live_pods("late", "Running")) == 1, 90)
        after = settle(act_b)
        time.sleep(1)  # the audit log is written asynchronously
        writes = b_writes(a.audit, a.agent_b, offset)
        compare(before, after, writes, fail)
        report.update(before=before, after=after, takeover_writes=writes)

        print("B: drive every job to its end", flush=True)
        code, body = USER.request("PATCH", JOBS.format(ns=NS) + "/susp", {"spec": {"runPolicy": {"suspend": False}}},
                                  "application/merge-patch+json")
        if code != 200:
            raise RuntimeError(f"resuming susp: HTTP {code} {body.get('message')}")
        exit_pods("psw", "worker-1", 0)
        exit_pods("psw", "worker-0", 0)
        exit_pods("chief", "chief-0", 0)
        exit_pods("onfail", "worker-*", 0)
        exit_pods("retry", "worker-*", 0)
        exit_pods("late", "worker-0", 0)
        wait_until("susp: 1 pod Running", lambda: len(live_pods("susp", "Running")) == 1, 90)
        exit_pods("susp", "worker-0", 0)
        for job in list(JOBS_A) + ["late"]:
            wait_until(f"{job}: Succeeded", lambda: has_condition(job, "Succeeded"), 90)
        settle(act_b)
        if op_b.poll() is not None:
            fail(f"the new operator exited with status {op_b.returncode}")
    except Exception as e:  # recorded, and the run fails
        fail(f"{type(e).__name__}: {e}")
    finally:
        for op in (op_a, op_b):
            if op is not None:
                stop_operator(op)
        rec.close()
        KUBELET.close()
    check_history(rec, fail)
    with rec.lock:
        report.update(conditions=rec.conditions, pod_uids=rec.uids, findings=findings)
    with open(os.path.join(a.out, "swap.json"), "w") as f:
        json.dump(report, f, indent=1, sort_keys=True)
        f.write("\n")
    print("ok" if not findings else f"{len(findings)} finding(s)", flush=True)
    return 1 if findings else 0


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    sys.exit(main())
