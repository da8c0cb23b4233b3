#!/usr/bin/env python3
"""Runs the head-to-head scenarios (tests/h2h/scenarios/*.json) against one operator on the
harness's kube-apiserver and writes one transcript per scenario: what a user sees.

  scenarios.py --out DIR --agent PREFIX --audit LOG [--only NAME,...] -- OPERATOR ARGV...

The operator is started once (its stdout/stderr in DIR/operator.log), every scenario runs in its
own namespace (h2h-<scenario>) at the same time as the others, each with its own stand-in kubelet
(kubelet.py), then the operator is stopped and the API server's audit log gives each scenario's
requests by the operator (user agent starting with PREFIX), by verb and resource.

A scenario file: {"about": ..., "documented": [semantics-diff entries by which documented mode
may differ], "schedule": true, "job": {TFJob}, "objects": [other objects to create first],
"steps": [...]}; steps are described in run_step(). A transcript (DIR/NAME.json):
  conditions   every distinct list of the job's conditions (type, status, reason, message) the
               job watch showed, in order
  steps        after each step (but an action followed by a wait), once it is settled
               (Scenario.settled): the job's status (conditions,
               replicaStatuses, which times are set) and its children (pods, services, PodGroups:
               names, labels, annotations, owner references, restartPolicy, schedulerName,
               TF_CONFIG, phase), written only when it differs from the previous step's
  events       reason, type, object, message, count and source component of every Event object
               in the namespace
  requests     the operator's API requests in the namespace: "verb resource[/subresource]": count
Exit status 1 when a scenario could not run to its end (a wait timed out); that is also written
in the transcript."""
import argparse
import fnmatch
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from kubeclient import Kube  # noqa: E402
from kubelet import StandIn  # noqa: E402

USER = Kube("h2h-user")
JOBS = "/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
PODGROUPS = {"volcano": "/apis/scheduling.volcano.sh/v1beta1/namespaces/{ns}/podgroups",
             "scheduler-plugins": "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups"}
SETTLE_SECONDS = 3.0
REACTION_SECONDS = 8.0  # how long an action step waits for a first request of the operator
ACTIONS = ("create", "exit", "delete", "patch", "schedule", "podgroup_phase")


class OperatorActivity(threading.Thread):
    """Follows the audit log: when did the operator (user agent prefix) last make a request in a
    namespace. A scenario's state counts as settled only once the operator has been idle in its
    namespace, so that a rate-limited or requeued reconcile is not mistaken for the end."""

    def __init__(self, log, agent):
        super().__init__(daemon=True)
        self.log, self.agent = log, agent
        self.last = {}
        self.start()

    def run(self):
        while not os.path.exists(self.log):
            time.sleep(0.1)
        with open(self.log) as f:
            part = ""
            while True:
                part += f.readline()
                if not part.endswith("\n"):  # nothing new, or a line still being written
                    time.sleep(0.05)
                    continue
                e, part = json.loads(part), ""
                if (e.get("userAgent") or "").startswith(self.agent):
                    self.last[(e.get("objectRef") or {}).get("namespace")] = time.time()

    def since(self, ns, t):
        """Whether the operator made a request in namespace ns after time t."""
        return self.last.get(ns, 0) > t

    def idle_for(self, ns):
        return time.time() - self.last.get(ns, 0)


ACTIVITY = None


class WaitTimeout(Exception):
    pass


def wait_until(what, pred, timeout, poll=0.2):
    """Poll pred() until it is true; returns the time it became true, raises WaitTimeout (naming
    what) after timeout seconds."""
    end = time.time() + timeout
    while time.time() < end:
        if pred():
            return time.time()
        time.sleep(poll)
    raise WaitTimeout(f"timed out after {timeout} s waiting for {what}")


def owner_refs(meta):
    return [{k: r.get(k) for k in ("apiVersion", "kind", "name", "controller", "blockOwnerDeletion")}
            for r in meta.get("ownerReferences") or []]


def tf_config(container):
    for e in container.get("env") or []:
        if e.get("name") == "TF_CONFIG":
            try:
                return json.loads(e.get("value", ""))
            except ValueError:
                return e.get("value")
    return None


def show_pod(p):
    m, s = p["metadata"], p["spec"]
    return {"name": m["name"], "labels": m.get("labels") or {}, "annotations": m.get("annotations") or {},
            "ownerReferences": owner_refs(m), "deleting": bool(m.get("deletionTimestamp")),
            "finalizers": m.get("finalizers") or [],
            "restartPolicy": s.get("restartPolicy"), "schedulerName": s.get("schedulerName"),
            "containers": [{"name": c["name"], "ports": c.get("ports") or [], "TF_CONFIG": tf_config(c),
                            "env": sorted(e["name"] for e in c.get("env") or [])} for c in s["containers"]],
            "phase": (p.get("status") or {}).get("phase")}


def show_service(v):
    m, s = v["metadata"], v["spec"]
    return {"name": m["name"], "labels": m.get("labels") or {}, "annotations": m.get("annotations") or {},
            "ownerReferences": owner_refs(m), "clusterIP": s.get("clusterIP"),
            "selector": s.get("selector") or {}, "ports": s.get("ports") or []}


def show_podgroup(g):
    m = g["metadata"]
    return {"name": m["name"], "labels": m.get("labels") or {}, "annotations": m.get("annotations") or {},
            "ownerReferences": owner_refs(m), "spec": g.get("spec") or {}}


def show_conditions(status):
    return [{k: c.get(k) for k in ("type", "status", "reason", "message")}
            for c in (status or {}).get("conditions") or []]


def show_job(j):
    if j is None:
        return None
    st = j.get("status") or {}
    return {"conditions": show_conditions(st), "replicaStatuses": st.get("replicaStatuses"),
            "set": sorted(k for k in ("startTime", "completionTime", "lastReconcileTime") if st.get(k)),
            "spec.runPolicy": (j.get("spec") or {}).get("runPolicy"),
            "finalizers": j["metadata"].get("finalizers") or []}


class Scenario:
    def __init__(self, name, spec):
        self.name, self.spec = name, spec
        self.ns = f"h2h-{name}"
        self.job = spec["job"]["metadata"]["name"]
        self.conditions = []
        self.steps = []
        self.error = None
        self.kubelet = None
        self.job_watch = None

    # --- observation

    def _job_event(self, typ, obj):
        if obj["metadata"]["name"] != self.job or typ == "DELETED":
            return
        conds = show_conditions(obj.get("status"))
        if not self.conditions or self.conditions[-1] != conds:
            self.conditions.append(conds)

    def get_job(self):
        code, body = USER.get(JOBS.format(ns=self.ns) + "/" + self.job)
        return body if code == 200 else None

    def state(self):
        pods = USER.items(f"/api/v1/namespaces/{self.ns}/pods")
        svcs = USER.items(f"/api/v1/namespaces/{self.ns}/services")
        s = {"job": show_job(self.get_job()),
             "pods": sorted((show_pod(p) for p in pods), key=lambda p: p["name"]),
             "services": sorted((show_service(v) for v in svcs), key=lambda v: v["name"])}
        gang = self.spec.get("podgroups")
        if gang:
            s["podgroups"] = sorted((show_podgroup(g) for g in USER.items(PODGROUPS[gang].format(ns=self.ns))),
                                    key=lambda g: g["name"])
        return s

    def settled(self, acted_at=None):
        """The state once it has not changed, and the operator has made no request, for
        SETTLE_SECONDS, and no pod is terminating (at most 60 s of waiting).
        After an action taken at acted_at, also once the operator has reacted (made a request in
        the namespace) or REACTION_SECONDS have passed: a loaded operator may not have begun."""
        last, since, end = None, time.time(), time.time() + 60
        if acted_at is not None:
            while not ACTIVITY.since(self.ns, acted_at) and time.time() < acted_at + REACTION_SECONDS:
                time.sleep(0.1)
        while time.time() < end:
            s = self.state()
            if s != last:
                last, since = s, time.time()
            elif time.time() - since >= SETTLE_SECONDS and ACTIVITY.idle_for(self.ns) >= SETTLE_SECONDS \
                    and not self.kubelet.busy() and not any(p["deleting"] for p in s["pods"]):
                return s
            time.sleep(0.25)
        return last

    def wait(self, what, pred, timeout):
        wait_until(what, pred, timeout)

    # --- the scenario

    def run(self):
        try:
            code, body = USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}})
            if code != 201:
                raise RuntimeError(f"creating namespace {self.ns}: HTTP {code} {body}")
            self.kubelet = StandIn(self.ns, schedule=self.spec.get("schedule", True), kube=Kube("h2h-kubelet"))
            self.job_watch = USER.watch(JOBS.format(ns=self.ns), self._job_event)
            steps = self.spec["steps"]
            for i, step in enumerate(steps):
                t = time.time()
                self.run_step(step)
                if i + 1 < len(steps) and any(k in step for k in ACTIONS) and \
                        not any(k in steps[i + 1] for k in ACTIONS + ("sleep",)):
                    # The wait that follows shows where this action leads; the state between
                    # them only shows how far a (loaded) operator has got.
                    continue
                # A reaction is awaited to an action, and to what the stand-in did to the pods
                # up to the end of a wait for them (the operator may be behind by seconds).
                s = self.settled(t if any(k in step for k in ACTIONS) else time.time() if "pods" in step else None)
                if not self.steps or self.steps[-1]["state"] != s:
                    self.steps.append({"after": step, "state": s})
                else:
                    self.steps[-1].setdefault("also after", []).append(step)
        except Exception as e:  # recorded in the transcript, and the run fails
            self.error = f"{type(e).__name__}: {e}"
        finally:
            if self.kubelet:
                self.kubelet.close()
            if self.job_watch:
                self.job_watch.close()

    def pods(self, pattern="*", phase=None):
        out = []
        for p in USER.items(f"/api/v1/namespaces/{self.ns}/pods"):
            if p["metadata"].get("deletionTimestamp"):
                continue
            if not fnmatch.fnmatch(p["metadata"]["name"], f"{self.job}-{pattern}"):
                continue
            if phase and (p.get("status") or {}).get("phase") != phase:
                continue
            out.append(p)
        return out

    def condition(self, typ):
        for c in ((self.get_job() or {}).get("status") or {}).get("conditions") or []:
            if c.get("type") == typ and c.get("status") == "True":
                return True
        return False

    def run_step(self, step):
        """One step: exactly one of these keys (plus "timeout", seconds, default 60).
          create: "job" | an object          create the scenario's job, or any object (namespaced here)
          pods: N [, phase: P, match: GLOB]  wait until N pods of the job exist (not being deleted)
          condition: TYPE                    wait until the job has condition TYPE True
          gone: "job"                        wait until the job no longer exists
          exit: GLOB, code: N                the stand-in terminates the tensorflow container of
                                             every Running pod <job>-GLOB with exit code N
          delete: "job" | "pod/NAME"         a user deletes the job or pod <job>-NAME
          patch: {...}                       a user merge-patches the job
          schedule: true|false               the stand-in binds new pods, or holds them Pending
          podgroup_phase: PHASE              sets status.phase of every PodGroup (volcano)
          sleep: S                           wait S seconds"""
        timeout = step.get("timeout", 60)
        base = JOBS.format(ns=self.ns)
        if "create" in step:
            obj = self.spec["job"] if step["create"] == "job" else step["create"]
            path = obj_path(obj, self.ns)
            code, body = USER.request("POST", path, obj)
            if code != 201:
                raise RuntimeError(f"creating {obj['kind']}: HTTP {code} {body.get('message')}")
        elif "pods" in step:
            n = step["pods"]
            self.wait(f"{n} pods {step.get('phase', '')}",
                      lambda: len(self.pods(step.get("match", "*"), step.get("phase"))) == n, timeout)
        elif "condition" in step:
            self.wait(f"condition {step['condition']}", lambda: self.condition(step["condition"]), timeout)
        elif "gone" in step:
            self.wait("the job to be deleted", lambda: self.get_job() is None, timeout)
        elif "exit" in step:
            changed = self.kubelet.exit(f"{self.job}-{step['exit']}", step["code"], timeout)
            if not changed:
                raise RuntimeError(f"no running pod matches {step['exit']}")
        elif "delete" in step:
            what = step["delete"]
            path = f"{base}/{self.job}" if what == "job" else \
                f"/api/v1/namespaces/{self.ns}/pods/{self.job}-{what.split('/', 1)[1]}"
            code, body = USER.request("DELETE", path)
            if code not in (200, 202):
                raise RuntimeError(f"deleting {what}: HTTP {code} {body.get('message')}")
        elif "patch" in step:
            code, body = USER.request("PATCH", f"{base}/{self.job}", step["patch"], "application/merge-patch+json")
            if code != 200:
                raise RuntimeError(f"patching the job: HTTP {code} {body.get('message')}")
        elif "schedule" in step:
            self.kubelet.set_schedule(step["schedule"])
        elif "podgroup_phase" in step:
            self.set_podgroup_phase(step["podgroup_phase"], timeout)
        elif "sleep" in step:
            time.sleep(step["sleep"])
        else:
            raise RuntimeError(f"unknown step {step}")

    def set_podgroup_phase(self, phase, timeout):
        path = PODGROUPS[self.spec["podgroups"]].format(ns=self.ns)
        self.wait("a PodGroup", lambda: USER.items(path), timeout)
        for g in USER.items(path):
            USER.request("PATCH", f"{path}/{g['metadata']['name']}/status", {"status": {"phase": phase}},
                         "application/merge-patch+json")

    def transcript(self, requests):
        events = []  # one per Event object: an aggregated event (count > 1) is not two events
        for e in USER.items(f"/api/v1/namespaces/{self.ns}/events"):
            o = e.get("involvedObject") or {}
            events.append({"kind": o.get("kind"), "name": o.get("name"), "type": e.get("type"),
                           "reason": e.get("reason"), "message": e.get("message"), "count": e.get("count") or 1,
                           "component": (e.get("source") or {}).get("component")})
        events.sort(key=lambda e: tuple(str(e[k]) for k in ("kind", "name", "reason", "message", "count")))
        return {"scenario": self.name, "about": self.spec.get("about"), "error": self.error,
                "conditions": self.conditions, "steps": self.steps,
                "events": events,
                "requests": dict(sorted(requests.items()))}


def obj_path(obj, ns):
    group, _, version = obj["apiVersion"].rpartition("/")
    plural = obj["kind"].lower() + "s"
    return (f"/apis/{group}/{version}" if group else "/api/v1") + f"/namespaces/{ns}/{plural}"


def audit_requests(log, agent, start=0):
    """{namespace: Counter("verb resource[/sub]")} of the requests whose user agent starts with
    agent, in the audit log from byte offset start on."""
    out = {}
    with open(log) as f:
        f.seek(start)
        for line in f:
            e = json.loads(line)
            if e.get("stage") != "ResponseComplete" or not (e.get("userAgent") or "").startswith(agent):
                continue
            ref = e.get("objectRef") or {}
            res = ref.get("resource", e.get("requestURI", "?"))
            if ref.get("subresource"):
                res += "/" + ref["subresource"]
            out.setdefault(ref.get("namespace") or "", Counter())[f"{e['verb']} {res}"] += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--agent", required=True)
    ap.add_argument("--audit", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("operator", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    sdir = os.path.join(HERE, "scenarios")
    names = sorted(f[:-5] for f in os.listdir(sdir) if f.endswith(".json"))
    if a.only:
        names = [n for n in names if n in a.only.split(",")]
    scenarios = []
    for n in names:
        with open(os.path.join(sdir, n + ".json")) as f:
            scenarios.append(Scenario(n, json.load(f)))
    global ACTIVITY
    ACTIVITY = OperatorActivity(a.audit, a.agent)
    groups = {}
    for s in scenarios:  # one operator run per set of extra flags (gang scheduler name)
        groups.setdefault(tuple(s.spec.get("operator_flags") or []), []).append(s)
    log = open(os.path.join(a.out, "operator.log"), "w")
    failed = 0
    other = Counter()
    for i, (flags, group) in enumerate(sorted(groups.items())):
        for kind in sorted({s.spec["podgroups"] for s in group if s.spec.get("podgroups")}):
            install_podgroup_crd(kind)
        log.write(f"=== {' '.join(a.operator + list(flags))}\n")
        log.flush()
        start = os.path.getsize(a.audit)
        run_group(a.operator + list(flags), group, log, f"ready-{i}")
        # A group's transcripts are written as soon as its operator has stopped: the next
        # group's operator also sees (and may act on) the objects left by this one.
        time.sleep(1)  # the audit log is written asynchronously
        reqs = audit_requests(a.audit, a.agent, start)
        for s in group:
            t = s.transcript(reqs.get(s.ns, Counter()))
            with open(os.path.join(a.out, s.name + ".json"), "w") as f:
                json.dump(t, f, indent=1, sort_keys=True)
                f.write("\n")
            print(f"{'ok  ' if not s.error else 'FAIL'} {s.name}" + (f": {s.error}" if s.error else ""), flush=True)
            failed += bool(s.error)
        other.update(reqs.get("", Counter()))
    with open(os.path.join(a.out, "cluster-requests.json"), "w") as f:
        json.dump(dict(sorted(other.items())), f, indent=1)
    return 1 if failed else 0


def run_group(argv, group, log, ready):
    """Start the operator, run the scenarios of group at the same time, stop the operator."""
    op = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    started = time.time()
    try:
        wait_ready(op, ready)
        print(f"operator ready in {time.time() - started:.1f} s ({' '.join(argv[1:])})", flush=True)
        threads = [threading.Thread(target=s.run) for s in group]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stop_operator(op)


def stop_operator(op):
    """SIGTERM to the operator's process group; SIGKILL if it has not exited 20 s later."""
    os.killpg(op.pid, signal.SIGTERM)
    try:
        op.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(op.pid, signal.SIGKILL)
        op.wait()


def install_podgroup_crd(kind):
    """The PodGroup CRD of kind: scheduler-plugins' own (file $H2H_SCHEDULER_PLUGINS_CRD, from
    its Go module); volcano's is not in a Go module the proxy serves (volcano.sh/apis has the
    types only), so a minimal one with the same group, version, names and status subresource."""
    if kind == "scheduler-plugins":
        with open(os.environ["H2H_SCHEDULER_PLUGINS_CRD"], "rb") as f:
            body = f.read()
        group, version = "scheduling.x-k8s.io", "v1alpha1"
        code, _ = USER.request_raw("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body,
                                   "application/yaml")
    else:
        group, version = "scheduling.volcano.sh", "v1beta1"
        crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
               "metadata": {"name": f"podgroups.{group}"},
               "spec": {"group": group, "scope": "Namespaced",
                        "names": {"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup",
                                  "listKind": "PodGroupList", "shortNames": ["pg", "podgroup-v1beta1"]},
                        "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                                      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                          "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                          "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
        code, _ = USER.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    if code not in (201, 409):
        raise RuntimeError(f"installing the {kind} PodGroup CRD: HTTP {code}")
    # Served and in API discovery (Kube.discovered), before an operator that watches PodGroups starts.
    end = time.time() + 60
    while not (USER.get(f"/apis/{group}/{version}/podgroups")[0] == 200 and
               USER.discovered(group, version, "podgroups")):
        if time.time() > end:
            raise RuntimeError(f"the {kind} PodGroup CRD is not served and discovered after 60 s")
        time.sleep(0.2)


def wait_ready(op, name="ready"):
    """Until the operator has listed TFJobs (its informer is up): a job is created in namespace
    h2h-ready and the operator writes a status to it."""
    USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": "h2h-ready"}})
    job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name},
           "spec": {"runPolicy": {"suspend": True}, "tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {
               "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]}}}}}}
    USER.request("POST", JOBS.format(ns="h2h-ready"), job)
    end = time.time() + 120
    while time.time() < end:
        if op.poll() is not None:
            raise RuntimeError(f"the operator exited with status {op.returncode}")
        code, body = USER.get(JOBS.format(ns="h2h-ready") + "/" + name)
        if code == 200 and (body.get("status") or {}).get("conditions"):
            return
        time.sleep(0.2)
    raise RuntimeError("the operator did not reconcile a job within 120 s")


if __name__ == "__main__":
    sys.exit(main())
