#!/usr/bin/env python3
"""tfjob-operator against a real kube-apiserver (tests/kube/harness.sh): no kubelet, so this
script plays it, writing pod status through /status; nor volcano, so it installs the PodGroup CRDs
and sets their status.phase itself. Run by tests/suites/64-controller-kube.sh with the harness's
environment (the kube-apiserver is restarted through tests/kube/harness.sh restart commands).
Prints ok/FAIL lines; exit status 1 when anything failed."""
import json, os, signal, subprocess, sys, time, urllib.request, urllib.error
from e2e_lib import RUNNING, URL, api, check, ctx, exit_status, http_get, operator_ports, wait

OP = sys.argv[1]
WORK = sys.argv[2]
HARNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness.sh")
NS = "e2e"


def job(name, types, run_policy=None, spec=None):
    specs = {}
    for t in types.split(","):
        typ, n, policy = t.split(":")
        specs[typ] = {"replicas": int(n), "restartPolicy": policy, "template": {"spec": {"containers": [
            {"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]}}}
    rp = {"cleanPodPolicy": "Running"}
    rp.update(run_policy or {})
    s = {"runPolicy": rp, "tfReplicaSpecs": specs}
    s.update(spec or {})
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name, "namespace": NS}, "spec": s}


def create_job(j):
    code, body = api("POST", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", j)
    check(f"create tfjob {j['metadata']['name']} ({code})", code == 201)


def get_job(name):
    code, body = api("GET", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/{name}")
    return body if code == 200 else None


def cond(name, typ, ns=None):
    code, j = api("GET", f"/apis/kubeflow.org/v1/namespaces/{ns or NS}/tfjobs/{name}")
    j = j if code == 200 else None
    for c in ((j or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == typ:
            return c.get("status")
    return None


def cond_reason(name, typ):
    for c in ((get_job(name) or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == typ:
            return c.get("reason"), c.get("message")
    return None, None


def children(kind, jobname, ns=None):
    code, body = api("GET", f"/api/v1/namespaces/{ns or NS}/{kind}?labelSelector=training.kubeflow.org/job-name={jobname}")
    return [i for i in body.get("items", []) if not i["metadata"].get("deletionTimestamp")]


def uid(kind, name, ns=None):
    code, body = api("GET", f"/api/v1/namespaces/{ns or NS}/{kind}/{name}")
    return body["metadata"]["uid"] if code == 200 else None


def events(jobname, ns=None):
    c, ev = api("GET", f"/api/v1/namespaces/{ns or NS}/events")
    return [e["reason"] for e in ev.get("items", []) if e["involvedObject"]["name"] == jobname]


def event_messages(jobname, reason, ns=None):
    c, ev = api("GET", f"/api/v1/namespaces/{ns or NS}/events")
    return [e.get("message", "") for e in ev.get("items", [])
            if e["involvedObject"]["name"] == jobname and e["reason"] == reason]


def labelled_pod(jobname, owner=None):
    """Pod JOB-worker-0 with the job's labels (as the job would create it), owned by owner (an
    ownerReference) or by nothing."""
    meta = {"name": f"{jobname}-worker-0", "namespace": NS, "labels": {
        "training.kubeflow.org/job-name": jobname, "training.kubeflow.org/operator-name": "tfjob-controller",
        "training.kubeflow.org/replica-type": "worker", "training.kubeflow.org/replica-index": "0"}}
    if owner:
        meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "tensorflow", "image": "x"}]}}


def controller_of(kind, name):
    c, obj = api("GET", f"/api/v1/namespaces/{NS}/{kind}/{name}")
    refs = [r for r in (obj.get("metadata", {}).get("ownerReferences") or []) if r.get("controller")]
    return refs[0] if refs else None


def kubelet(pod, phase, code=None, restarts=0, ns=None):
    ns = ns or NS
    for _ in range(20):
        c, p = api("GET", f"/api/v1/namespaces/{ns}/pods/{pod}")
        if c != 200:
            time.sleep(0.1)
            continue
        state = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}} if code is not None \
            else {"running": {}}
        p["status"] = {"phase": phase, "containerStatuses": [{"name": "tensorflow", "image": "tf", "imageID": "",
                                                                "ready": phase == "Running", "restartCount": restarts,
                                                                "state": state}]}
        c, _ = api("PUT", f"/api/v1/namespaces/{ns}/pods/{pod}/status", p)
        if c == 200:
            return
    check(f"set status of pod {pod}", False)


class Operator:
    def __init__(self, name, extra=(), kubeconfig=None, env=None):
        self.log = open(os.path.join(WORK, name + ".log"), "w")
        args = [OP, "--kubeconfig", kubeconfig or os.environ["KUBE_ADMIN_KUBECONFIG"],
                "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
                "--threadiness", "4", "--kube-api-qps", "200", "--kube-api-burst", "400"] + list(extra)
        self.p = subprocess.Popen(args, stderr=self.log, stdout=self.log, env=dict(os.environ, **(env or {})))
        RUNNING.append(self.p)
        self.name = name
        self.ports = operator_ports(self.log.name)

    def http(self, which, path, raw=None):
        return http_get(self.ports[which], path, raw)

    def metric(self, name):
        code, body = self.http(0, "/metrics")
        for line in body.splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None

    def stop(self, sig=signal.SIGTERM):
        self.p.send_signal(sig)
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None


api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})
api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}})

# RBAC: the operator runs as the harness's unprivileged user, bound to examples/deploy/rbac.yaml's ClusterRole.
user_kc = None
try:
    import yaml
    docs = list(yaml.safe_load_all(open(os.path.join(os.path.dirname(__file__), "../../examples/deploy/rbac.yaml"))))
    role = [d for d in docs if d["kind"] == "ClusterRole"][0]
    c1, _ = api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "tfjob-operator-e2e"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "tfjob-operator"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "libtfjob-user"}]}
    c2, _ = api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", binding)
    check(f"RBAC from examples/deploy/rbac.yaml installed ({c1}, {c2})", c1 == 201 and c2 == 201)
    user_kc = os.environ["KUBE_USER_KUBECONFIG"]
except ImportError:
    print("skip RBAC (no python3-yaml): the operator runs as admin")

op = Operator("op1", ["--leader-elect", "--leader-election-namespace", "kubeflow"], kubeconfig=user_kc)
check("operator serves probes on loopback", op.ports is not None)
wait("/readyz 200", lambda: op.http(1, "/readyz")[0] == 200)
check("/healthz 200", op.http(1, "/healthz") == (200, "ok\n"))
check("/nothing 404", op.http(1, "/nothing")[0] == 404)
check("POST 405", op.http(1, "/healthz", b"POST /healthz HTTP/1.1\r\nContent-Length: 0\r\n\r\n")[0] == 405)
# libmicrohttpd answers 400 or just closes a connection that does not speak HTTP
check("garbage refused", op.http(0, None, b"\x00\x01garbage\r\n\r\n")[0] in (0, 400))
check("oversized request 414/431", op.http(0, None, b"GET /" + b"a" * 9000)[0] in (414, 431))
wait("leader (tfjob_controller_is_leader 1)", lambda: op.metric("tfjob_controller_is_leader") == 1)
c, lease = api("GET", "/apis/coordination.k8s.io/v1/namespaces/kubeflow/leases/1ca428e5.training-operator.kubeflow.org")
check("Lease held with holderIdentity and renewTime", c == 200 and lease["spec"].get("holderIdentity") and
      lease["spec"].get("renewTime") and lease["spec"].get("leaseDurationSeconds") == 15)

# 1. PS + workers succeed (worker 0), cleanPodPolicy Running.
create_job(job("ok", "PS:1:Never,Worker:2:Never"))
wait("ok: 3 pods and 3 services", lambda: len(children("pods", "ok")) == 3 and len(children("services", "ok")) == 3)
wait("ok: Created", lambda: cond("ok", "Created") == "True")
p = children("pods", "ok")[0]
ref = p["metadata"]["ownerReferences"][0]
check("pods owned by the job (controller, blockOwnerDeletion)", ref["kind"] == "TFJob" and ref["controller"] and
      ref["blockOwnerDeletion"] and ref["uid"] == get_job("ok")["metadata"]["uid"])
for n in ("ok-ps-0", "ok-worker-0", "ok-worker-1"):
    kubelet(n, "Running")
wait("ok: Running", lambda: cond("ok", "Running") == "True")
kubelet("ok-worker-0", "Succeeded", 0)
wait("ok: Succeeded", lambda: cond("ok", "Succeeded") == "True")
wait("ok: running pods cleaned up, worker 0 kept", lambda: [x["metadata"]["name"] for x in children("pods", "ok")] == ["ok-worker-0"])
# Events are written by the recorder's own thread, after the writes they report: wait for them.
wait("events SuccessfulCreatePod x3, SuccessfulCreateService x3, SuccessfulDeletePod",
     lambda: (lambda r: r.count("SuccessfulCreatePod") == 3 and r.count("SuccessfulCreateService") == 3
              and "SuccessfulDeletePod" in r)(events("ok")))

# 2. Retryable exit code: restart then success.
create_job(job("retry", "Worker:1:ExitCode"))
wait("retry: pod", lambda: uid("pods", "retry-worker-0"))
u1 = uid("pods", "retry-worker-0")
kubelet("retry-worker-0", "Failed", 137)
wait("retry: Restarting", lambda: cond("retry", "Restarting") == "True")
wait("retry: pod recreated", lambda: uid("pods", "retry-worker-0") not in (None, u1))
kubelet("retry-worker-0", "Succeeded", 0)
wait("retry: Succeeded", lambda: cond("retry", "Succeeded") == "True")

# 3. Permanent exit code fails the job.
create_job(job("perm", "Worker:1:ExitCode"))
wait("perm: pod", lambda: uid("pods", "perm-worker-0"))
kubelet("perm-worker-0", "Failed", 1)
wait("perm: Failed", lambda: cond("perm", "Failed") == "True")

# 4. cleanPodPolicy All.
create_job(job("all", "PS:1:Never,Worker:1:Never", {"cleanPodPolicy": "All"}))
wait("all: pods", lambda: len(children("pods", "all")) == 2)
kubelet("all-ps-0", "Running")
kubelet("all-worker-0", "Succeeded", 0)
wait("all: Succeeded", lambda: cond("all", "Succeeded") == "True")
wait("all: every pod and service deleted", lambda: not children("pods", "all") and not children("services", "all"))

# 5. TTL deletes the job.
create_job(job("ttl", "Worker:1:Never", {"ttlSecondsAfterFinished": 2}))
wait("ttl: pod", lambda: uid("pods", "ttl-worker-0"))
kubelet("ttl-worker-0", "Succeeded", 0)
wait("ttl: Succeeded", lambda: cond("ttl", "Succeeded") == "True")
wait("ttl: job deleted after 2 s", lambda: get_job("ttl") is None, 30)

# 6. Suspend and resume.
create_job(job("sus", "Worker:2:Never", {"suspend": True}))
wait("sus: Suspended", lambda: cond("sus", "Suspended") == "True")
check("sus: no pods", not children("pods", "sus"))
api("PATCH", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/sus", {"spec": {"runPolicy": {"suspend": False}}},
    "application/merge-patch+json")
wait("sus: resumed, 2 pods", lambda: len(children("pods", "sus")) == 2 and cond("sus", "Suspended") == "False")

# 7. managedBy another controller: untouched.
create_job(job("other", "Worker:2:Never", {"managedBy": "kueue.x-k8s.io/multikueue"}))
time.sleep(2)
check("other: no pods, no status", not children("pods", "other") and not (get_job("other") or {}).get("status"))

# 8. Invalid spec: Failed with TFJobFailedValidation.
bad = job("bad", "Worker:1:Never")
del bad["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["image"]
create_job(bad)
wait("bad: Failed TFJobFailedValidation", lambda: any(c.get("reason") == "TFJobFailedValidation" and c["status"] == "True"
                                                     for c in (get_job("bad").get("status") or {}).get("conditions", [])))
check("bad: no pods", not children("pods", "bad"))
reason, msg = cond_reason("bad", "Failed")
check(f"bad: the field error is in the message ({msg})", "image" in (msg or "") and "Required" in (msg or ""))

# 8b. A chief decides; a worker alone does not.
create_job(job("chief", "Chief:1:Never,Worker:2:Never"))
wait("chief: 3 pods", lambda: len(children("pods", "chief")) == 3)
kubelet("chief-chief-0", "Running")
wait("chief: Running", lambda: cond("chief", "Running") == "True")
kubelet("chief-worker-0", "Succeeded", 0)
time.sleep(1.5)
check("chief: worker 0 alone does not finish the job", cond("chief", "Succeeded") is None)
kubelet("chief-chief-0", "Succeeded", 0)
wait("chief: Succeeded when the chief succeeds", lambda: cond("chief", "Succeeded") == "True")

# 8c. successPolicy AllWorkers.
create_job(job("allw", "Worker:2:Never", spec={"successPolicy": "AllWorkers"}))
wait("allw: 2 pods", lambda: len(children("pods", "allw")) == 2)
kubelet("allw-worker-1", "Running")
kubelet("allw-worker-0", "Succeeded", 0)
wait("allw: Running", lambda: cond("allw", "Running") == "True")
time.sleep(1)
check("allw: worker 0 alone is not enough", cond("allw", "Succeeded") is None)
kubelet("allw-worker-1", "Succeeded", 0)
wait("allw: Succeeded when all workers succeed", lambda: cond("allw", "Succeeded") == "True")

# 8d. OnFailure with backoffLimit: restarts in place counted by the kubelet.
create_job(job("bo", "Worker:1:OnFailure", {"backoffLimit": 2}))
wait("bo: pod", lambda: uid("pods", "bo-worker-0"))
kubelet("bo-worker-0", "Running", restarts=1)
wait("bo: Running", lambda: cond("bo", "Running") == "True")
kubelet("bo-worker-0", "Running", restarts=2)
wait("bo: Failed after 2 restarts (backoffLimit 2)", lambda: cond("bo", "Failed") == "True")
reason, msg = cond_reason("bo", "Failed")
check(f"bo: reason TFJobFailed, message names the backoff limit ({reason}: {msg})",
      reason == "TFJobFailed" and "backoff" in (msg or "").lower())
wait("bo: pod deleted", lambda: not children("pods", "bo"))

# 8e. activeDeadlineSeconds (the real clock).
create_job(job("dl", "Worker:1:Never", {"activeDeadlineSeconds": 3}))
wait("dl: pod", lambda: uid("pods", "dl-worker-0"))
kubelet("dl-worker-0", "Running")
t0 = time.time()
wait("dl: Failed at the deadline", lambda: cond("dl", "Failed") == "True", 30)
reason, msg = cond_reason("dl", "Failed")
check(f"dl: after about 3 s ({time.time() - t0:.1f} s), message names the deadline ({msg})",
      time.time() - t0 < 15 and "deadline" in (msg or "").lower())
wait("dl: pod deleted", lambda: not children("pods", "dl"))

# 8f. cleanPodPolicy None keeps every pod.
create_job(job("keep", "Worker:2:Never", {"cleanPodPolicy": "None"}))
wait("keep: 2 pods", lambda: len(children("pods", "keep")) == 2)
kubelet("keep-worker-1", "Running")
kubelet("keep-worker-0", "Succeeded", 0)
wait("keep: Succeeded", lambda: cond("keep", "Succeeded") == "True")
time.sleep(1.5)
check("keep: both pods and services kept", len(children("pods", "keep")) == 2 and len(children("services", "keep")) == 2)

# 8g. Scale down: replicas 3 -> 1 deletes the pods and services of indexes 1 and 2.
create_job(job("sd", "Worker:3:Never"))
wait("sd: 3 pods", lambda: len(children("pods", "sd")) == 3)
api("PATCH", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/sd",
    {"spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1}}}}, "application/merge-patch+json")
wait("sd: scaled down to worker 0", lambda: [x["metadata"]["name"] for x in children("pods", "sd")] == ["sd-worker-0"]
     and [x["metadata"]["name"] for x in children("services", "sd")] == ["sd-worker-0"])

# 8h. A pod deleted behind our back is created again.
create_job(job("gone", "Worker:1:Never"))
wait("gone: pod", lambda: uid("pods", "gone-worker-0"))
u1 = uid("pods", "gone-worker-0")
api("DELETE", f"/api/v1/namespaces/{NS}/pods/gone-worker-0")
wait("gone: pod recreated (new uid)", lambda: uid("pods", "gone-worker-0") not in (None, u1))

# 8j. Adoption: a pod with the job's labels but no owner (left by a lost operator) is adopted by
# a merge patch of its ownerReferences (uid precondition), not created again.
orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "adopt-worker-0", "namespace": NS, "labels": {
    "training.kubeflow.org/job-name": "adopt", "training.kubeflow.org/operator-name": "tfjob-controller",
    "training.kubeflow.org/replica-type": "worker", "training.kubeflow.org/replica-index": "0"}},
    "spec": {"containers": [{"name": "tensorflow", "image": "x"}]}}
c, _ = api("POST", f"/api/v1/namespaces/{NS}/pods", orphan)
check(f"adopt: orphan pod created ({c})", c == 201)
u_orphan = uid("pods", "adopt-worker-0")
create_job(job("adopt", "Worker:1:Never"))
wait("adopt: the orphan is owned by the job now", lambda: (api("GET", f"/api/v1/namespaces/{NS}/pods/adopt-worker-0")[1]
     ["metadata"].get("ownerReferences") or [{}])[0].get("uid") == get_job("adopt")["metadata"]["uid"])
wait("adopt: and its service created", lambda: len(children("services", "adopt")) == 1)
check("adopt: the same pod (not created again)", uid("pods", "adopt-worker-0") == u_orphan and
      "SuccessfulCreatePod" not in events("adopt"))
ref = controller_of("pods", "adopt-worker-0") or {}
check(f"adopt: the job is the pod's controller ({ref})", ref.get("kind") == "TFJob" and ref.get("name") == "adopt"
      and ref.get("blockOwnerDeletion") is True)
kubelet("adopt-worker-0", "Running")
wait("adopt: the adopted pod counts (active 1, Running)", lambda: cond("adopt", "Running") == "True" and
     (get_job("adopt").get("status", {}).get("replicaStatuses", {}).get("Worker", {}).get("active") == 1))

# 8j2. A pod of the job's name and labels that another object controls is left alone; the job's
# own pod cannot be created (AlreadyExists) and a Warning FailedCreatePod says why.
c, cm = api("POST", f"/api/v1/namespaces/{NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                            "metadata": {"name": "someone-else"}})
owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "someone-else", "uid": cm["metadata"]["uid"], "controller": True}
c, _ = api("POST", f"/api/v1/namespaces/{NS}/pods", labelled_pod("foreign", owner))
check(f"foreign: pod of another owner created ({c})", c == 201)
u_foreign = uid("pods", "foreign-worker-0")
create_job(job("foreign", "Worker:1:Never"))
wait("foreign: FailedCreatePod saying the name is taken",
     lambda: any("already exists" in m for m in event_messages("foreign", "FailedCreatePod")))
kubelet("foreign-worker-0", "Running")
time.sleep(1)
check("foreign: the other owner's pod is untouched", uid("pods", "foreign-worker-0") == u_foreign and
      controller_of("pods", "foreign-worker-0") == owner)
check("foreign: and not counted", cond("foreign", "Running") is None and
      not get_job("foreign").get("status", {}).get("replicaStatuses", {}).get("Worker", {}).get("active"))
api("DELETE", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/foreign")
api("DELETE", f"/api/v1/namespaces/{NS}/pods/foreign-worker-0")

# 8k. A job being deleted (a finalizer holds it) is left alone: a pod deleted meanwhile is not recreated.
fj = job("fin", "Worker:1:Never")
fj["metadata"]["finalizers"] = ["e2e.libtfjob/hold"]
create_job(fj)
wait("fin: pod", lambda: uid("pods", "fin-worker-0"))
api("DELETE", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/fin")
wait("fin: deletionTimestamp set", lambda: (get_job("fin") or {}).get("metadata", {}).get("deletionTimestamp"))
api("DELETE", f"/api/v1/namespaces/{NS}/pods/fin-worker-0")
time.sleep(2)
check("fin: a job being deleted is left alone (its deleted pod is not recreated)", uid("pods", "fin-worker-0") is None)
api("PATCH", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/fin", {"metadata": {"finalizers": None}},
    "application/merge-patch+json")
wait("fin: gone once the finalizer is removed", lambda: get_job("fin") is None)

# 8i. 100 jobs at once all converge, one pod and one service each.
t0 = time.time()
for i in range(100):
    api("POST", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", job(f"many-{i:03d}", "Worker:1:Never"))
def many_done():
    c, pods = api("GET", f"/api/v1/namespaces/{NS}/pods?labelSelector=training.kubeflow.org/replica-type=worker")
    names = [p["metadata"]["name"] for p in pods["items"] if p["metadata"]["name"].startswith("many-")]
    c, jobs = api("GET", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs")
    created = [j for j in jobs["items"] if j["metadata"]["name"].startswith("many-") and any(
        x["type"] == "Created" for x in (j.get("status") or {}).get("conditions", []))]
    return len(names) == 100 and len(set(names)) == 100 and len(created) == 100
wait("100 jobs at once: 100 pods, every job Created", many_done, 120)
print(f"     100 jobs converged in {time.time() - t0:.1f} s", flush=True)
c, svcs = api("GET", f"/api/v1/namespaces/{NS}/services")
check("100 jobs at once: 100 services", len([x for x in svcs["items"] if x["metadata"]["name"].startswith("many-")]) == 100)

m = op.metric("training_operator_jobs_successful_total")
check(f"/metrics: jobs successful total {m} >= 3", m is not None and m >= 3)
code, body = op.http(0, "/metrics")
check("/metrics: histogram and queue depth", 'tfjob_controller_reconcile_time_seconds_bucket{le="+Inf"}' in body and
      'workqueue_depth{name="tfjob"}' in body)

op.stop()

# 9a. API calls and time per job lifecycle on the real server (one operator, one job).
opb = Operator("opb", [], kubeconfig=user_kc)
wait("bench: operator ready", lambda: opb.http(1, "/readyz")[0] == 200)
before = {v: opb.metric(f'tfjob_controller_api_requests_total{{verb="{v}"}}') or 0
          for v in ("get", "list", "watch", "create", "update", "update_status", "patch", "delete", "create_event")}
import threading
status_changes = []


def watch_bench(rv):
    # Every status write must change the status: a PUT /status that changes nothing leaves the
    # object alone (no new resourceVersion, no event), so writes == status changes seen here.
    req = urllib.request.Request(URL + f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs?watch=true&resourceVersion={rv}"
                                 "&fieldSelector=metadata.name%3Dbench&timeoutSeconds=120")
    last = None
    with urllib.request.urlopen(req, context=ctx, timeout=130) as r:
        for line in r:
            ev = json.loads(line)
            st = ev["object"].get("status")
            if ev["type"] == "MODIFIED" and st != last:
                status_changes.append(st)
            last = st


rv = api("GET", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs")[1]["metadata"]["resourceVersion"]
threading.Thread(target=watch_bench, args=(rv,), daemon=True).start()
time.sleep(0.3)
t0 = time.time()
create_job(job("bench", "PS:1:Never,Worker:2:Never"))
wait("bench: 3 pods", lambda: len(children("pods", "bench")) == 3)
for n in ("bench-ps-0", "bench-worker-0", "bench-worker-1"):
    kubelet(n, "Running")
wait("bench: Running", lambda: cond("bench", "Running") == "True")
kubelet("bench-worker-0", "Succeeded", 0)
wait("bench: Succeeded and cleaned up", lambda: cond("bench", "Succeeded") == "True" and len(children("pods", "bench")) == 1
     and len(children("services", "bench")) == 1)
elapsed = time.time() - t0
time.sleep(1)
calls = {v: (opb.metric(f'tfjob_controller_api_requests_total{{verb="{v}"}}') or 0) - before[v] for v in before}
print(f"     lifecycle PS1+Worker2 on kube-apiserver: {elapsed:.2f} s (including this script's kubelet steps); "
      + ", ".join(f"{k} {int(v)}" for k, v in calls.items() if v), flush=True)
check("bench: one create per pod and service (6), deletes only for cleanup (4)", calls["create"] == 6 and calls["delete"] == 4)
check("bench: no get, update or patch", calls["get"] == 0 and calls["update"] == 0 and calls["patch"] == 0)
check(f"bench: each of the {int(calls['update_status'])} status writes changed the status ({len(status_changes)} changes seen)",
      calls["update_status"] == len(status_changes) and calls["update_status"] >= 3)
check("bench: no list or watch after the start", calls["list"] == 0 and calls["watch"] == 0)
opb.stop()

# 9c. training-operator-1.9 mode, as v1.9: an orphan pod with the job's labels is left alone (not
# adopted, not counted) and the job's own pod cannot be created (FailedCreatePod).
opc = Operator("opc", ["--compat", "training-operator-1.9"], kubeconfig=user_kc)
c, _ = api("POST", f"/api/v1/namespaces/{NS}/pods", labelled_pod("compat"))
check(f"compat: orphan pod created ({c})", c == 201)
u_compat = uid("pods", "compat-worker-0")
kubelet("compat-worker-0", "Running")
create_job(job("compat", "Worker:1:Never"))
wait("compat: FailedCreatePod (the orphan holds the name)",
     lambda: any("already exists" in m for m in event_messages("compat", "FailedCreatePod")))
check("compat: the orphan is not adopted", uid("pods", "compat-worker-0") == u_compat and
      controller_of("pods", "compat-worker-0") is None)
check("compat: and not counted", cond("compat", "Running") is None)
opc.stop()
api("DELETE", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/compat")
api("DELETE", f"/api/v1/namespaces/{NS}/pods/compat-worker-0")

# 9b. Gang scheduling with volcano: the PodGroup CRDs (minimal schemas) are installed here, and
# this script sets status.phase as volcano would. Pods wait while the PodGroup is Pending and are
# created as soon as it turns Inqueue: the operator watches PodGroups (it has no periodic resync).
def install_pg_crd(group, version):
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"podgroups.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup", "listKind": "PodGroupList"},
                    "versions": [{"name": version, "served": True, "storage": True, "subresources": {"status": {}},
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                                      "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
    c, _ = api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    def served():
        c, d = api("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/podgroups.{group}")
        est = any(x["type"] == "Established" and x["status"] == "True" for x in d.get("status", {}).get("conditions", []))
        # in API discovery too: it is published apart from Established
        discovered = any(r.get("name") == "podgroups" for r in api("GET", f"/apis/{group}/{version}")[1].get("resources") or [])
        return est and discovered and api("GET", f"/apis/{group}/{version}/podgroups")[0] == 200
    wait(f"PodGroup CRD {group}/{version} installed ({c}), served and discovered", served, 60)


VPG = "/apis/scheduling.volcano.sh/v1beta1/namespaces/gang/podgroups"
install_pg_crd("scheduling.volcano.sh", "v1beta1")
install_pg_crd("scheduling.x-k8s.io", "v1alpha1")
api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "gang"}})
# training-operator's flags: --enable-scheme, --gang-scheduler-name, the namespace from KUBEFLOW_NAMESPACE
opg = Operator("opg", ["--gang-scheduler-name=volcano", "--enable-scheme=TFJob", "--zap-log-level=debug"],
               kubeconfig=user_kc, env={"KUBEFLOW_NAMESPACE": "gang"})
wait("gang: operator ready (PodGroups listed)", lambda: opg.http(1, "/readyz")[0] == 200)
code, body = opg.http(0, "/metrics")
check("gang: /metrics shows the PodGroup cache", 'tfjob_controller_cache_synced{resource="podgroups"} 1' in body)
g1 = job("g1", "Worker:2:Never", {"schedulingPolicy": {"minAvailable": 2, "queue": "q1"}})
g1["metadata"]["namespace"] = "gang"
c, _ = api("POST", "/apis/kubeflow.org/v1/namespaces/gang/tfjobs", g1)
check(f"gang: create tfjob g1 ({c})", c == 201)
create_job(job("notmine", "Worker:1:Never"))  # in e2e: not this operator's namespace
wait("gang: PodGroup g1 created before any pod", lambda: api("GET", f"{VPG}/g1")[0] == 200 and
     not children("pods", "g1", "gang"))
c, pg = api("GET", f"{VPG}/g1")
check("gang: PodGroup spec minMember 2, queue q1, owned by the job",
      pg["spec"].get("minMember") == 2 and pg["spec"].get("queue") == "q1" and
      pg["metadata"]["ownerReferences"][0]["uid"] == (api("GET", "/apis/kubeflow.org/v1/namespaces/gang/tfjobs/g1")[1]["metadata"]["uid"]))
wait("gang: services created", lambda: len(children("services", "g1", "gang")) == 2)
api("PATCH", f"{VPG}/g1/status", {"status": {"phase": "Pending"}}, "application/merge-patch+json")
time.sleep(2)
check("gang: no pods while the PodGroup is Pending", not children("pods", "g1", "gang"))
api("PATCH", f"{VPG}/g1/status", {"status": {"phase": "Inqueue"}}, "application/merge-patch+json")
t0 = time.time()
wait("gang: pods created when the PodGroup turns Inqueue", lambda: len(children("pods", "g1", "gang")) == 2, 10)
print(f"     pods created {time.time() - t0:.2f} s after the phase change", flush=True)
check("gang: promptly (< 3 s: a watch event, not a resync)", time.time() - t0 < 3)
p0 = [x for x in children("pods", "g1", "gang") if x["metadata"]["name"] == "g1-worker-0"][0]
check("gang: pods carry schedulerName volcano and the group annotation",
      p0["spec"].get("schedulerName") == "volcano" and
      p0["metadata"].get("annotations", {}).get("scheduling.k8s.io/group-name") == "g1")
check("gang: the PodGroup is read from its cache (no GET)",
      opg.metric('tfjob_controller_api_requests_total{verb="get"}') == 0)
check("gang: a job in another namespace is not this operator's (KUBEFLOW_NAMESPACE)",
      cond("notmine", "Created") is None and not children("pods", "notmine"))
kubelet("g1-worker-0", "Succeeded", 0, ns="gang")
wait("gang: Succeeded", lambda: cond("g1", "Succeeded", "gang") == "True")
wait("gang: PodGroup deleted when the job ends", lambda: api("GET", f"{VPG}/g1")[0] == 404)
wait("gang: SuccessfulDeletePodGroup event", lambda: "SuccessfulDeletePodGroup" in events("g1", "gang"), 10)
opg.stop()
# scheduler-plugins: any other --gang-scheduler-name; no waiting for a phase.
opp = Operator("opp", ["--gang-scheduler-name=my-coscheduler"], kubeconfig=user_kc, env={"KUBEFLOW_NAMESPACE": "gang"})
g2 = job("g2", "Worker:2:Never")
g2["metadata"]["namespace"] = "gang"
api("POST", "/apis/kubeflow.org/v1/namespaces/gang/tfjobs", g2)
wait("scheduler-plugins: PodGroup and pods created at once", lambda: api(
    "GET", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/gang/podgroups/g2")[0] == 200 and
    len(children("pods", "g2", "gang")) == 2)
p0 = children("pods", "g2", "gang")[0]
check(f"scheduler-plugins: schedulerName is the flag's ({p0['spec'].get('schedulerName')})",
      p0["spec"].get("schedulerName") == "my-coscheduler")
api("PATCH", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/gang/podgroups/g2", {"spec": {"minMember": 9}},
    "application/merge-patch+json")
wait("scheduler-plugins: a PodGroup spec changed by someone else is put back (watched)", lambda: api(
    "GET", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/gang/podgroups/g2")[1]["spec"].get("minMember") == 2, 10)
opp.stop()
api("DELETE", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/notmine")

# 9. Killed while creating 50 pods, restarted: no duplicates, converges.
slow = Operator("op2", ["--kube-api-qps", "10", "--kube-api-burst", "1", "--threadiness", "1"], kubeconfig=user_kc)
create_job(job("big", "Worker:50:Never"))
wait("big: some pods created", lambda: len(children("pods", "big")) >= 5, 60)
slow.p.kill()
slow.p.wait()
n_at_kill = len(children("pods", "big"))
check(f"big: killed in the middle ({n_at_kill} of 50 pods)", 0 < n_at_kill < 50)
op = Operator("op3", [], kubeconfig=user_kc)
wait("big: 50 pods and 50 services", lambda: len(children("pods", "big")) == 50 and len(children("services", "big")) == 50, 120)
names = sorted(x["metadata"]["name"] for x in children("pods", "big"))
check("big: no duplicates, names big-worker-0..49", names == sorted(f"big-worker-{i}" for i in range(50)))
wait("big: Created", lambda: cond("big", "Created") == "True")
creates = op.metric('tfjob_controller_api_requests_total{verb="create"}')
check(f"big: the restarted operator created only what was missing ({creates} <= {100 - n_at_kill})",
      creates is not None and creates <= 100 - n_at_kill + 5)

# 10. The API server is restarted under a running operator (kube-apiserver alone, same etcd:
# tests/kube/harness.sh stop-apiserver / start-apiserver), with jobs in flight: one has some of
# its 30 pods, one has a pod that finishes just before the server goes away. The operator keeps
# running (not ready while its watches are broken), resumes or relists, and converges: no pod
# created twice or recreated.
def harness(cmd):
    t0 = time.time()
    r = subprocess.run([HARNESS, cmd, WORK], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print("     " + r.stdout.strip().replace("\n", "\n     "), flush=True)
    check(f"harness.sh {cmd} ({time.time() - t0:.1f} s)", r.returncode == 0)


op.stop()
op = Operator("op5", ["--kube-api-qps", "5", "--kube-api-burst", "1", "--threadiness", "2"], kubeconfig=user_kc)
wait("outage: operator ready", lambda: op.http(1, "/readyz")[0] == 200)
create_job(job("pre", "Worker:1:Never"))
wait("outage: pre has its pod", lambda: uid("pods", "pre-worker-0"), 60)
create_job(job("inflight", "Worker:30:Never"))
wait("outage: inflight has some pods", lambda: len(children("pods", "inflight")) >= 4, 60)
kubelet("pre-worker-0", "Succeeded", 0)
uids_before = {x["metadata"]["name"]: x["metadata"]["uid"] for x in children("pods", "inflight")}
m0 = {k: op.metric(k) or 0 for k in ("tfjob_controller_watch_errors_total", "tfjob_controller_relists_total",
                                      "tfjob_controller_watch_restarts_total", "tfjob_controller_api_errors_total")}
harness("stop-apiserver")
print(f"     stopped with {len(uids_before)} of inflight's 30 pods created", flush=True)
down_at = time.time()
check("outage: the operator keeps running, /healthz 200", op.p.poll() is None and op.http(1, "/healthz")[0] == 200)
wait("outage: /readyz 503 while the watches are broken", lambda: op.http(1, "/readyz")[0] == 503, 15)
code, body = op.http(0, "/metrics")
check("outage: /metrics served, a cache marked unsynced", code == 200 and
      any(l.startswith("tfjob_controller_cache_synced{") and l.endswith(" 0") for l in body.splitlines()))
time.sleep(max(0.0, 4 - (time.time() - down_at)))
harness("start-apiserver")
print(f"     the API server was down {time.time() - down_at:.1f} s", flush=True)
wait("outage over: /readyz 200 again", lambda: op.http(1, "/readyz")[0] == 200, 60)
m1 = {k: op.metric(k) or 0 for k in m0}
print("     " + ", ".join(f"{k} {m0[k]:.0f} -> {m1[k]:.0f}" for k in m0), flush=True)
check("outage: /metrics counted the broken watches", m1["tfjob_controller_watch_errors_total"] >= m0["tfjob_controller_watch_errors_total"] + 3)
check("outage: and resumed or relisted them", m1["tfjob_controller_watch_restarts_total"] + m1["tfjob_controller_relists_total"]
      > m0["tfjob_controller_watch_restarts_total"] + m0["tfjob_controller_relists_total"])
wait("outage over: inflight gets all 30 pods and services", lambda: len(children("pods", "inflight")) == 30 and
     len(children("services", "inflight")) == 30, 180)
names = sorted(x["metadata"]["name"] for x in children("pods", "inflight"))
check("outage over: no duplicates, inflight-worker-0..29", names == sorted(f"inflight-worker-{i}" for i in range(30)))
now = {x["metadata"]["name"]: x["metadata"]["uid"] for x in children("pods", "inflight")}
check(f"outage over: the {len(uids_before)} pods created before the outage are the same pods (uids)",
      all(now.get(n) == u for n, u in uids_before.items()) and 0 < len(uids_before) < 30)
wait("outage over: pre Succeeded", lambda: cond("pre", "Succeeded") == "True", 60)
wait("outage over: inflight Created", lambda: cond("inflight", "Created") == "True", 60)
kubelet("inflight-worker-0", "Succeeded", 0)
wait("outage over: inflight Succeeded", lambda: cond("inflight", "Succeeded") == "True", 60)
ev = events("inflight")
check(f"outage over: no pod created twice ({ev.count('SuccessfulCreatePod')} SuccessfulCreatePod events <= 30)",
      ev.count("SuccessfulCreatePod") <= 30)

# 11. SIGTERM stops cleanly.
rc = op.stop()
check(f"SIGTERM: exit status 0 ({rc})", rc == 0)
sys.exit(exit_status())
