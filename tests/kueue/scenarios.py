#!/usr/bin/env python3
"""The Kueue suite's scenarios: Kueue v0.17.0's manager (tests/kueue/kueue.py) and one TFJob
operator on the harness's kube-apiserver, the stand-in kubelet of tests/h2h (kubelet.py) moving
the pods. Every scenario runs in a namespace of its own, all at the same time, each with its own
ResourceFlavor, ClusterQueue and LocalQueue (named after it), and checks what a user sees. A job's
LocalQueue is held (stopPolicy Hold) until the operator shows the job Suspended, without pods:
whether the operator meets a job before Kueue admits it is otherwise a race, and the transcripts
of the three operators are compared (tests/kueue/diff.py).

  admit           a TFJob (PS + 2 workers) created unsuspended in a LocalQueue: Kueue's webhook
                  suspends it, admits its Workload, unsuspends it; the operator's pods carry the
                  ResourceFlavor's nodeSelector and tolerations; it succeeds, the Workload finishes
  quota           two jobs for a quota of one: the second waits suspended (no pods) until the
                  first has succeeded, then runs
  preemption      a low-priority job runs; a high-priority one preempts it (Workload evicted,
                  job suspended, pods deleted), runs and succeeds; then the low one runs again
  deactivate      a running job's Workload is deactivated (spec.active false): job suspended,
                  pods deleted; re-activated once they are gone: it runs again and succeeds
  deactivate-terminating
                  the same, re-activated while the pods are still terminating (the stand-in ends
                  a graceful deletion after DELETION_SECONDS). The outcome differs by operator:
                  training-operator v1.9.4 counts the terminating Running pods as failed and fails
                  the job (Kueue then finishes the Workload: the job is lost); tfjob-operator waits
                  for the deletions, creates the pods again and the job succeeds
                  (docs/semantics-diff.md, Q1)
  multikueue      a ClusterQueue with a MultiKueue AdmissionCheck: Kueue's webhook sets the job's
                  spec.runPolicy.managedBy to kueue.x-k8s.io/multikueue, and the operator leaves
                  the job alone (no pods, no services, no status)

  scenarios.py --out DIR --operator NAME --kueue BIN --kueue-module DIR [--kubeconfig FILE]
               [--only A,B] -- ARGV...

NAME is ours, ours-documented or v1.9.4 (it picks the expected outcome of deactivate-terminating);
ARGV runs the operator; Kueue gets FILE (default $KUBE_ADMIN_KUBECONFIG). Writes DIR/NAME.json
per scenario and DIR/operator.log, DIR/kueue.log; exit status 1 if a check failed. A scenario's
file holds
  checks       what was checked, in order, and whether it held
  error        why the scenario stopped (a check that failed, a timeout), or null
  transcript   once everything has settled: per job its condition history (every distinct list
               of (type, status, reason) the job watch showed), final conditions, suspend and
               managedBy, replica statuses, how many pods were created, the pods left (name,
               phase), its Workload's conditions (type, status, reason); and the namespace's
               events (involved kind and name, type, reason, reporting component), without
               messages or counts
  compat_known, documented
               the docs/semantics-diff.md entries by which the transcript may differ from
               v1.9.4's, for --compat training-operator-1.9 and for documented mode
  state        the jobs, Workloads and pods when the scenario failed"""
import argparse
import fnmatch
import json
import os
import signal
import subprocess
import sys
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "h2h"))
sys.path.insert(0, HERE)
import kubelet  # noqa: E402
from kubeclient import Kube  # noqa: E402
from kueue import Kueue, condition, workload_of  # noqa: E402

# Long enough for Kueue to re-admit a job while its pods terminate (it takes well under a second).
kubelet.DELETION_SECONDS = 10.0
USER = None  # the scripted user's client (main(): the API server is known from the environment)
KQ = "/apis/kueue.x-k8s.io/v1beta2"
JOBS = "/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
PRIORITY_LABEL = "kueue.x-k8s.io/priority-class"
MULTIKUEUE = "kueue.x-k8s.io/multikueue"
POOL = "kueue-suite/pool"
TIMEOUT = 90
SETTLE_SECONDS = 3.0


class CheckFailed(Exception):
    pass


def must(code_body, what, codes=(200, 201)):
    code, body = code_body
    if code not in codes:
        raise RuntimeError(f"{what}: HTTP {code} {body.get('message')}")
    return body


def tfjob(name, queue, workers, ps=0, priority=None):
    def spec(n):
        return {"replicas": n, "restartPolicy": "Never", "template": {"spec": {"containers": [{
            "name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0", "command": ["python", "/opt/train.py"],
            "resources": {"requests": {"cpu": "1"}}}]}}}
    labels = {QUEUE_LABEL: queue}
    if priority:
        labels[PRIORITY_LABEL] = priority
    replicas = {"Worker": spec(workers)}
    if ps:
        replicas["PS"] = spec(ps)
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name, "labels": labels},
            "spec": {"tfReplicaSpecs": replicas}}


def conds(obj):
    """(type, status, reason) of obj's status conditions, by type."""
    return sorted([c.get("type"), c.get("status"), c.get("reason")]
                  for c in ((obj or {}).get("status") or {}).get("conditions") or [])


class Scenario:
    def __init__(self, name, op):
        self.name, self.op = name, op
        self.ns = f"kueue-{name}"
        self.checks = []
        self.error = None
        self.kubelet = None
        self.jobs = []
        self.history = {}   # job -> every distinct conds() the job watch showed
        self.created = {}   # job -> uids of its pods the pod watch showed
        self.pod_log = []   # (job, "ADDED" or "DELETED", uid), as the pod watch showed them
        self.watches = []
        self.lock = threading.Lock()
        self.transcript = None

    # --- observation

    def _job_event(self, typ, obj):
        if typ == "DELETED":
            return
        c = conds(obj)
        with self.lock:
            h = self.history.setdefault(obj["metadata"]["name"], [])
            if not h or h[-1] != c:
                h.append(c)

    def _pod_event(self, typ, pod):
        job = (pod["metadata"].get("labels") or {}).get("training.kubeflow.org/job-name")
        if job:
            uid = pod["metadata"]["uid"]
            with self.lock:
                if typ == "ADDED" or (typ == "DELETED" and uid in self.created.get(job, ())):
                    self.pod_log.append((job, typ, uid))
                self.created.setdefault(job, set()).add(uid)

    def created_after_deleted(self, job, old):
        """Whether the pod watch showed every pod of job whose uid is not in old created only
        after every pod whose uid is in old was gone."""
        with self.lock:
            log = [(t, u) for j, t, u in self.pod_log if j == job]
        gone = set()
        for t, u in log:
            if t == "DELETED" and u in old:
                gone.add(u)
            elif t == "ADDED" and u not in old and gone != old:
                return False
        return True

    # --- the cluster's objects

    def queue(self, cpu, preemption=None, checks=None, local=("queue",), hold=True):
        """ResourceFlavor and ClusterQueue (cpu quota) named after the scenario, and its
        LocalQueues named `local`, held (stopPolicy Hold) unless hold is false."""
        rf = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor", "metadata": {"name": self.ns},
              "spec": {"nodeLabels": {POOL: self.name},
                       "tolerations": [{"key": POOL, "operator": "Equal", "value": self.name, "effect": "NoSchedule"}]}}
        must(USER.request("POST", f"{KQ}/resourceflavors", rf), "creating the ResourceFlavor")
        cq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": self.ns},
              "spec": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": self.ns}},
                       "resourceGroups": [{"coveredResources": ["cpu"], "flavors": [
                           {"name": self.ns, "resources": [{"name": "cpu", "nominalQuota": str(cpu)}]}]}]}}
        if preemption:
            cq["spec"]["preemption"] = preemption
        if checks:
            cq["spec"]["admissionChecksStrategy"] = {"admissionChecks": [{"name": c} for c in checks]}
        must(USER.request("POST", f"{KQ}/clusterqueues", cq), "creating the ClusterQueue")
        for name in local:
            lq = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue", "metadata": {"name": name},
                  "spec": {"clusterQueue": self.ns, "stopPolicy": "Hold" if hold else "None"}}
            must(USER.request("POST", f"{KQ}/namespaces/{self.ns}/localqueues", lq), f"creating LocalQueue {name}")
        # Kueue's caches must know them before a job names a LocalQueue (its webhook reads them).
        self.wait("the ClusterQueue's status", lambda: condition(USER.get(f"{KQ}/clusterqueues/{self.ns}")[1], "Active"))
        for name in local:
            self.wait(f"LocalQueue {name}'s status",
                      lambda: condition(USER.get(f"{KQ}/namespaces/{self.ns}/localqueues/{name}")[1], "Active"))

    def release(self, local="queue"):
        must(USER.request("PATCH", f"{KQ}/namespaces/{self.ns}/localqueues/{local}", {"spec": {"stopPolicy": "None"}},
                          "application/merge-patch+json"), f"releasing LocalQueue {local}")

    def held(self, *jobs):
        """Checks that the operator shows each job (in a held LocalQueue) Suspended, without pods."""
        for j in jobs:
            self.expect(f"the operator shows {j} Suspended (its queue is held)", lambda: self.job_cond(j, "Suspended"))
            self.check(f"{j} is suspended and has no pods", self.suspended(j) and not self.all_pods(j))

    def create_job(self, job):
        self.jobs.append(job["metadata"]["name"])
        return must(USER.request("POST", JOBS.format(ns=self.ns), job), f"creating TFJob {job['metadata']['name']}")

    def job(self, name):
        code, body = USER.get(JOBS.format(ns=self.ns) + "/" + name)
        return body if code == 200 else None

    def workload(self, job):
        return workload_of(USER, self.ns, job)

    def all_pods(self, job):
        return [p for p in USER.items(f"/api/v1/namespaces/{self.ns}/pods")
                if fnmatch.fnmatch(p["metadata"]["name"], f"{job}-*")]

    def pods(self, job, phase=None, deleting=False):
        out = []
        for p in self.all_pods(job):
            if bool(p["metadata"].get("deletionTimestamp")) != deleting:
                continue
            if phase and (p.get("status") or {}).get("phase") != phase:
                continue
            out.append(p)
        return out

    def set_active(self, job, active):
        w = self.workload(job)
        must(USER.request("PATCH", f"{KQ}/namespaces/{self.ns}/workloads/{w['metadata']['name']}",
                          {"spec": {"active": active}}, "application/merge-patch+json"),
             f"setting the Workload's spec.active to {active}")

    # --- waiting and checking

    def wait(self, what, pred, timeout=TIMEOUT):
        end = time.time() + timeout
        while time.time() < end:
            if pred():
                return
            time.sleep(0.2)
        raise CheckFailed(f"timed out after {timeout} s waiting for {what}")

    def check(self, what, ok):
        self.checks.append({"check": what, "ok": bool(ok)})
        if not ok:
            raise CheckFailed(what)

    def expect(self, what, pred, timeout=TIMEOUT):
        """Wait until pred() holds; recorded as a check."""
        try:
            self.wait(what, pred, timeout)
        except CheckFailed:
            self.checks.append({"check": what, "ok": False})
            raise
        self.checks.append({"check": what, "ok": True})

    def job_cond(self, job, typ):
        c = condition(self.job(job), typ)
        return bool(c and c.get("status") == "True")

    def wl_cond(self, job, typ, reason=None):
        c = condition(self.workload(job), typ)
        return bool(c and c.get("status") == "True" and (reason is None or c.get("reason") == reason))

    def suspended(self, job):
        return bool(((self.job(job) or {}).get("spec", {}).get("runPolicy") or {}).get("suspend"))

    def running(self, job, n):
        return len(self.pods(job, "Running")) == n

    def runs(self, job, n):
        """n pods of job are Running and the operator shows the job Running: what comes next
        does not race with the operator's view of the pods."""
        return self.running(job, n) and self.job_cond(job, "Running")

    def finish(self, job, n):
        """The stand-in ends the tensorflow container of job's n running pods with exit code 0."""
        self.wait(f"{n} running pods of {job}, the job Running", lambda: self.runs(job, n))
        self.exit_workers(job, n)

    def exit_workers(self, job, n):
        """The stand-in ends the n workers' tensorflow containers with exit code 0, the highest
        index first: worker 0's success ends the job, and then no worker is left running (which
        documented mode's cleanPodPolicy default would delete: L2, not what these scenarios are
        about)."""
        for i in reversed(range(n)):
            self.kubelet.exit(f"{job}-worker-{i}", 0)

    # --- running

    def run(self):
        try:
            must(USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}}), "creating the namespace")
            self.kubelet = kubelet.StandIn(self.ns, kube=Kube("h2h-kubelet"))
            self.watches = [USER.watch(JOBS.format(ns=self.ns), self._job_event),
                            USER.watch(f"/api/v1/namespaces/{self.ns}/pods", self._pod_event)]
            getattr(self, "s_" + self.name.replace("-", "_"))()
            self.transcript = self.settled()
        except CheckFailed as e:
            self.error = f"check failed: {e}"
        except Exception as e:  # noqa: BLE001 (recorded, and the run fails)
            self.error = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
        finally:
            if self.kubelet:
                self.kubelet.close()
            for w in self.watches:
                w.close()

    def snapshot(self):
        """What the transcript shows, now (see the module's doc)."""
        jobs = {}
        for name in self.jobs:
            j = self.job(name) or {}
            st = j.get("status") or {}
            w = self.workload(name)
            with self.lock:
                history, created = list(self.history.get(name, [])), len(self.created.get(name, ()))
            jobs[name] = {
                "condition history": history, "conditions": conds(j),
                "suspend": (j.get("spec", {}).get("runPolicy") or {}).get("suspend"),
                "managedBy": (j.get("spec", {}).get("runPolicy") or {}).get("managedBy"),
                "replicaStatuses": {t: {k: v for k, v in (r or {}).items() if k in ("active", "succeeded", "failed")}
                                    for t, r in (st.get("replicaStatuses") or {}).items()},
                "pods created": created,
                "pods": sorted([p["metadata"]["name"], (p.get("status") or {}).get("phase"),
                                bool(p["metadata"].get("deletionTimestamp"))] for p in self.all_pods(name)),
                "workload": conds(w) if w else None}
        events = set()
        for e in USER.items(f"/api/v1/namespaces/{self.ns}/events"):
            o = e.get("involvedObject") or {}
            if o.get("kind") == "Workload":  # named after the job's uid
                o = {"kind": "Workload", "name": "(the job's)"}
            events.add((o.get("kind"), o.get("name"), e.get("type"), e.get("reason"),
                        e.get("reportingComponent") or (e.get("source") or {}).get("component")))
        return {"jobs": jobs, "events": sorted(list(x) for x in events)}

    def settled(self):
        """The snapshot once no pod is terminating and it has not changed for SETTLE_SECONDS (at
        most 60 s of waiting)."""
        last, since, end = None, time.time(), time.time() + 60
        while time.time() < end:
            s = self.snapshot()
            if s != last:
                last, since = s, time.time()
            elif time.time() - since >= SETTLE_SECONDS and not self.kubelet.busy():
                break
            time.sleep(0.3)
        return last

    def result(self):
        r = {"scenario": self.name, "operator": self.op, "error": self.error, "checks": self.checks,
             "transcript": self.transcript}
        r.update(ALLOWED.get(self.name, {}))
        if self.error:  # what there is to see
            r["state"] = {j: {"job": self.job(j), "workload": self.workload(j),
                              "pods": [{"name": p["metadata"]["name"], "phase": (p.get("status") or {}).get("phase"),
                                        "deleting": bool(p["metadata"].get("deletionTimestamp"))}
                                       for p in self.all_pods(j)]}
                          for j in self.jobs}
        return r

    # --- the scenarios

    def s_admit(self):
        self.queue(cpu=4)
        created = self.create_job(tfjob("job", "queue", workers=2, ps=1))
        self.check("Kueue's webhook suspended the job at creation",
                   (created["spec"].get("runPolicy") or {}).get("suspend") is True)
        self.held("job")
        self.release()
        self.expect("the Workload is admitted", lambda: self.wl_cond("job", "Admitted"))
        self.expect("3 pods running, the job Running", lambda: self.runs("job", 3))
        pods = self.pods("job")
        self.check("every pod has the ResourceFlavor's nodeSelector",
                   all((p["spec"].get("nodeSelector") or {}).get(POOL) == self.name for p in pods))
        self.check("every pod has the ResourceFlavor's toleration",
                   all({"key": POOL, "operator": "Equal", "value": self.name, "effect": "NoSchedule"}
                       in (p["spec"].get("tolerations") or []) for p in pods))
        w = self.workload("job")
        self.check("the Workload has the PS and Worker pod sets on the flavor",
                   sorted((a["name"], a["flavors"].get("cpu")) for a in w["status"]["admission"]["podSetAssignments"])
                   == [("ps", self.ns), ("worker", self.ns)])
        self.exit_workers("job", 2)
        self.expect("the job succeeds", lambda: self.job_cond("job", "Succeeded"))
        self.expect("the Workload is finished", lambda: self.wl_cond("job", "Finished"))

    def s_quota(self):
        self.queue(cpu=2)
        self.create_job(tfjob("first", "queue", workers=2))
        self.held("first")
        self.release()
        self.expect("the first job runs", lambda: self.runs("first", 2))
        self.create_job(tfjob("second", "queue", workers=2))
        self.expect("the second job's Workload exists, without quota",
                    lambda: self.workload("second") is not None and
                    condition(self.workload("second"), "QuotaReserved") is not None and
                    not self.wl_cond("second", "QuotaReserved"))
        self.expect("the operator shows the second job Suspended", lambda: self.job_cond("second", "Suspended"))
        time.sleep(3)
        self.check("the second job stays suspended, without pods",
                   self.suspended("second") and not self.all_pods("second"))
        self.finish("first", 2)
        self.expect("the first job succeeds", lambda: self.job_cond("first", "Succeeded"))
        self.expect("the second job is admitted and runs", lambda: self.runs("second", 2))
        self.finish("second", 2)
        self.expect("the second job succeeds", lambda: self.job_cond("second", "Succeeded"))

    def s_preemption(self):
        for name, value in (("low", 10), ("high", 1000)):
            must(USER.request("POST", f"{KQ}/workloadpriorityclasses", {
                "apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                "metadata": {"name": f"{self.ns}-{name}"}, "value": value}), "creating a WorkloadPriorityClass")
        self.queue(cpu=2, preemption={"withinClusterQueue": "LowerPriority"}, local=("queue", "later"))
        self.create_job(tfjob("low", "queue", workers=2, priority=f"{self.ns}-low"))
        self.held("low")
        self.release()
        self.expect("the low-priority job runs", lambda: self.runs("low", 2))
        self.create_job(tfjob("high", "later", workers=2, priority=f"{self.ns}-high"))
        self.held("high")
        self.release("later")
        self.expect("the low-priority Workload is preempted", lambda: self.wl_cond("low", "Evicted", "Preempted"))
        self.expect("the low-priority job is suspended and its pods deleted",
                    lambda: self.suspended("low") and not self.all_pods("low"))
        self.expect("the low-priority job shows Suspended", lambda: self.job_cond("low", "Suspended"))
        self.expect("the high-priority job runs", lambda: self.runs("high", 2))
        self.finish("high", 2)
        self.expect("the high-priority job succeeds", lambda: self.job_cond("high", "Succeeded"))
        self.expect("the low-priority job runs again", lambda: self.runs("low", 2))
        self.finish("low", 2)
        self.expect("the low-priority job succeeds", lambda: self.job_cond("low", "Succeeded"))
        self.expect("its Workload is finished", lambda: self.wl_cond("low", "Finished"))

    def deactivate(self, wait_for_deletions):
        self.queue(cpu=2)
        self.create_job(tfjob("job", "queue", workers=2))
        self.held("job")
        self.release()
        self.expect("the job runs", lambda: self.runs("job", 2))
        self.set_active("job", False)
        self.expect("the Workload is evicted (Deactivated)",
                    lambda: self.wl_cond("job", "Evicted") and
                    condition(self.workload("job"), "Evicted")["reason"].startswith("Deactivated"))
        self.expect("the job is suspended and its pods are being deleted",
                    lambda: self.suspended("job") and len(self.pods("job", deleting=True)) == 2)
        if wait_for_deletions:
            self.expect("the pods are gone", lambda: not self.all_pods("job"))
            self.expect("the job shows Suspended", lambda: self.job_cond("job", "Suspended"))
        old = {p["metadata"]["uid"] for p in self.pods("job", deleting=True)}
        self.set_active("job", True)
        self.expect("Kueue re-admits the job (unsuspended)",
                    lambda: self.wl_cond("job", "Admitted") and not self.suspended("job"))
        if not wait_for_deletions:
            self.check("the old pods were still terminating when it was re-admitted",
                       {p["metadata"]["uid"] for p in self.pods("job", deleting=True)} == old)
        return old

    def s_deactivate(self):
        self.deactivate(wait_for_deletions=True)
        self.finish("job", 2)
        self.expect("the job succeeds", lambda: self.job_cond("job", "Succeeded"))
        self.expect("the Workload is finished", lambda: self.wl_cond("job", "Finished"))

    def s_deactivate_terminating(self):
        old = self.deactivate(wait_for_deletions=False)
        if self.op.startswith("v1."):
            # training-operator v1.9.4: the terminating pods count as failed (restartPolicy Never).
            self.expect("the job fails", lambda: self.job_cond("job", "Failed"))
            self.expect("the Workload is finished", lambda: self.wl_cond("job", "Finished"))
            self.expect("the old pods are gone", lambda: not self.all_pods("job"))
            time.sleep(3)
            self.check("the job never succeeds and no new pod is created",
                       not self.job_cond("job", "Succeeded") and not self.all_pods("job"))
        else:
            self.expect("new pods run", lambda: self.runs("job", 2) and
                        not {p["metadata"]["uid"] for p in self.all_pods("job")} & old)
            self.check("they were created only once the old pods were gone", self.created_after_deleted("job", old))
            self.check("the job has not failed", not self.job_cond("job", "Failed"))
            self.finish("job", 2)
            self.expect("the job succeeds", lambda: self.job_cond("job", "Succeeded"))
            self.expect("the Workload is finished", lambda: self.wl_cond("job", "Finished"))

    def s_multikueue(self):
        name = f"{self.ns}-mk"
        for kind, plural, spec in (
                ("MultiKueueCluster", "multikueueclusters",
                 {"clusterSource": {"kubeConfig": {"locationType": "Secret", "location": f"{name}-kubeconfig"}}}),
                ("MultiKueueConfig", "multikueueconfigs", {"clusters": [name]}),
                ("AdmissionCheck", "admissionchecks",
                 {"controllerName": MULTIKUEUE,
                  "parameters": {"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": name}})):
            must(USER.request("POST", f"{KQ}/{plural}", {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": kind,
                                                        "metadata": {"name": name}, "spec": spec}),
                 f"creating the {kind}")
        self.queue(cpu=4, checks=[name], hold=False)
        created = self.create_job(tfjob("job", "queue", workers=2))
        self.check("Kueue's webhook set spec.runPolicy.managedBy to kueue.x-k8s.io/multikueue",
                   (created["spec"].get("runPolicy") or {}).get("managedBy") == MULTIKUEUE)
        self.expect("Kueue made the job's Workload", lambda: self.workload("job") is not None)
        time.sleep(8)
        j = self.job("job")
        self.check("the operator created no pod", not USER.items(f"/api/v1/namespaces/{self.ns}/pods"))
        self.check("the operator created no service", not USER.items(f"/api/v1/namespaces/{self.ns}/services"))
        self.check("the operator wrote no status", not (j.get("status") or {}).get("conditions"))


# The docs/semantics-diff.md entries by which a scenario's transcript may differ from v1.9.4's
# (tests/kueue/diff.py): "compat_known" for --compat training-operator-1.9, "documented" for
# documented mode.
# Every job here sets restartPolicy Never explicitly, which documented mode reports with a
# RestartPolicyNever Warning Event when it first sees the job (L5).
ALLOWED = {
    "admit": {"documented": ["L2", "L5"]},
    "quota": {"documented": ["L5"]},
    "preemption": {"documented": ["L5"]},
    "deactivate": {"documented": ["L5"]},
    "deactivate-terminating": {"compat_known": ["Q1"], "documented": ["Q1", "L5"]},
}


SCENARIOS = ["admit", "quota", "preemption", "deactivate", "deactivate-terminating", "multikueue"]


def wait_operator(op):
    """Until the operator has reconciled a job (a suspended one, no queue: Kueue leaves it alone)."""
    USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": "kueue-ready"}})
    job = tfjob("ready", "none", workers=1)
    del job["metadata"]["labels"]
    job["spec"]["runPolicy"] = {"suspend": True}
    must(USER.request("POST", JOBS.format(ns="kueue-ready"), job), "creating the readiness job")
    end = time.time() + 120
    while time.time() < end:
        if op.poll() is not None:
            raise RuntimeError(f"the operator exited with status {op.returncode}")
        code, body = USER.get(JOBS.format(ns="kueue-ready") + "/ready")
        if code == 200 and (body.get("status") or {}).get("conditions"):
            return
        time.sleep(0.2)
    raise RuntimeError("the operator did not reconcile a job within 120 s")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--operator", required=True)
    ap.add_argument("--kueue", required=True)
    ap.add_argument("--kueue-module", required=True)
    ap.add_argument("--kubeconfig", default=os.environ.get("KUBE_ADMIN_KUBECONFIG"))
    ap.add_argument("--only", default="")
    ap.add_argument("argv", nargs="+")
    a = ap.parse_args()
    if a.operator not in ("ours", "ours-documented") and not a.operator.startswith("v1."):
        ap.error(f"--operator: unknown operator {a.operator} (ours, ours-documented, or a training-operator "
                 "release such as v1.9.4)")
    if not a.kubeconfig:
        ap.error("--kubeconfig: not given and KUBE_ADMIN_KUBECONFIG is not set (tests/kube/harness.sh's env)")
    if not os.access(a.kueue, os.X_OK):
        ap.error(f"--kueue: {a.kueue} is not an executable (tests/kueue/kueue.sh build)")
    if not os.path.isfile(os.path.join(a.kueue_module, "config/components/webhook/manifests.yaml")):
        ap.error(f"--kueue-module: {a.kueue_module} has no config/components/webhook/manifests.yaml "
                 "(tests/kueue/kueue.sh module-dir)")
    only = [n for n in a.only.split(",") if n]
    unknown = [n for n in only if n not in SCENARIOS]
    if unknown:
        ap.error(f"--only: unknown scenario {', '.join(unknown)} (known: {', '.join(SCENARIOS)})")
    names = [n for n in SCENARIOS if not only or n in only]
    os.makedirs(a.out, exist_ok=True)
    global USER
    USER = Kube("kueue-suite-user")
    started = time.time()
    kueue = Kueue(USER, a.kueue, a.kueue_module, a.out, a.kubeconfig)
    op = None
    failed = 0
    try:
        kueue.start()
        print(f"kueue ready in {time.time() - started:.1f} s; webhooks: {', '.join(kueue.webhooks)}", flush=True)
        log = open(os.path.join(a.out, "operator.log"), "w")
        op = subprocess.Popen(a.argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_operator(op)
        print(f"operator ready ({' '.join(a.argv[1:])})", flush=True)
        scenarios = [Scenario(n, a.operator) for n in names]
        threads = [threading.Thread(target=s.run) for s in scenarios]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in scenarios:
            with open(os.path.join(a.out, s.name + ".json"), "w") as f:
                json.dump(s.result(), f, indent=1, sort_keys=True)
                f.write("\n")
            print(f"{'ok  ' if not s.error else 'FAIL'} {s.name} ({len(s.checks)} checks)"
                  + (f": {s.error}" if s.error else ""), flush=True)
            failed += bool(s.error)
    finally:
        if op is not None:
            os.killpg(op.pid, signal.SIGTERM)
            try:
                op.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(op.pid, signal.SIGKILL)
                op.wait()
        kueue.stop()
    print(f"{len(names) - failed}/{len(names)} scenarios passed in {time.time() - started:.0f} s", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
