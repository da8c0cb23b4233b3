#!/usr/bin/env python3
"""tfjobctl and tfjob-operator against a kube-apiserver serving training-operator v1.9.2's own TFJob
CRD (tests/suites/66-official-crd.sh installs it through TFJOB_KUBE_CRD). No kubelet: this script
writes pod status, as tests/kube/controller_e2e.py does. The operator runs as the harness's
unprivileged user bound to v1.9.2's own ClusterRole (manifests/base/rbac/role.yaml).
Checks: every examples/*.yaml applies (created, then unchanged with no write), nothing of what it
says is pruned by the official schema; every status the operator writes is stored as written (the
operator logs "the stored status differs from the one written" otherwise); one status write per
status change, no API call while nothing changes; tfjobctl get/describe/watch/delete.
Prints ok/FAIL lines; exit status 1 when anything failed."""
import copy, glob, json, os, signal, subprocess, sys, threading, time
import urllib.request, urllib.error
import yaml
from e2e_lib import RUNNING, URL, api, check, ctx, exit_status, http_get, operator_ports, wait

OP, WORK = sys.argv[1], sys.argv[2]
CTL = os.environ["TFJOBCTL"]
CRD_FILE = os.environ["TFJOB_KUBE_CRD"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")
KC = ["--kubeconfig", os.environ["KUBE_ADMIN_KUBECONFIG"]]
NS = "official"
TFJ = f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs"


def ctl(*args, stdin=None, timeout=60):
    r = subprocess.run([CTL, *args, *KC], input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def get_job(name, ns=NS):
    c, body = api("GET", f"/apis/kubeflow.org/v1/namespaces/{ns}/tfjobs/{name}")
    return body if c == 200 else None


def cond(name, typ):
    for x in ((get_job(name) or {}).get("status") or {}).get("conditions") or []:
        if x.get("type") == typ:
            return x.get("status")
    return None


def children(kind, job):
    c, body = api("GET", f"/api/v1/namespaces/{NS}/{kind}?labelSelector=training.kubeflow.org/job-name={job}")
    return [i for i in body.get("items", []) if not i["metadata"].get("deletionTimestamp")]


def kubelet(pod, phase, code=None, restarts=0):
    for _ in range(50):
        c, p = api("GET", f"/api/v1/namespaces/{NS}/pods/{pod}")
        if c == 200:
            state = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}} \
                if code is not None else {"running": {}}
            p["status"] = {"phase": phase, "containerStatuses": [{
                "name": "tensorflow", "image": "tf", "imageID": "", "ready": phase == "Running",
                "restartCount": restarts, "state": state}]}
            if api("PUT", f"/api/v1/namespaces/{NS}/pods/{pod}/status", p)[0] == 200:
                return
        time.sleep(0.1)
    check(f"set status of pod {pod}", False)


def missing(sent, stored, path=""):
    """Paths of what `sent` says that `stored` does not have (pruned or changed)."""
    out = []
    if isinstance(sent, dict):
        if not isinstance(stored, dict):
            return [path or "."]
        for k, v in sent.items():
            if v is None:
                continue  # null is absence (the schema prunes e.g. template.metadata.creationTimestamp: null)
            out += missing(v, stored.get(k), f"{path}.{k}") if k in stored else [f"{path}.{k}"]
    elif isinstance(sent, list):
        if not isinstance(stored, list) or len(stored) != len(sent):
            return [path]
        for i, (a, b) in enumerate(zip(sent, stored)):
            out += missing(a, b, f"{path}[{i}]")
    elif sent != stored:
        out.append(f"{path}: {sent!r} -> {stored!r}")
    return out


class Operator:
    def __init__(self, name, kubeconfig, extra=()):
        self.logname = os.path.join(WORK, name + ".log")
        self.log = open(self.logname, "w")
        self.p = subprocess.Popen([OP, "--kubeconfig", kubeconfig, "--metrics-bind-address", "127.0.0.1:0",
                                   "--health-probe-bind-address", "127.0.0.1:0", "--threadiness", "4",
                                   "--kube-api-qps", "200", "--kube-api-burst", "400", *extra],
                                  stdout=self.log, stderr=self.log)
        RUNNING.append(self.p)
        self.ports = operator_ports(self.logname)

    def http(self, which, path):
        return http_get(self.ports[which], path)

    def metrics(self):
        out = {}
        for line in self.http(0, "/metrics")[1].splitlines():
            if line and not line.startswith("#"):
                k, v = line.rsplit(" ", 1)
                out[k] = float(v)
        return out

    def calls(self):
        m = self.metrics()
        return {k[len('tfjob_controller_api_requests_total{verb="'):-2]: v for k, v in m.items()
                if k.startswith("tfjob_controller_api_requests_total{")}, m

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return None


for ns in (NS, "kubeflow", "your-user-namespace"):
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})

# 0. The server has v1.9.2's CRD, not ours.
c, crd = api("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/tfjobs.kubeflow.org")
v1 = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
check("the official CRD is served (controller-gen annotation, suspend default false, pod template schema)",
      c == 200 and "controller-gen.kubebuilder.io/version" in crd["metadata"].get("annotations", {})
      and v1["runPolicy"]["properties"]["suspend"].get("default") is False
      and "properties" in v1["tfReplicaSpecs"]["additionalProperties"]["properties"]["template"])

# 1. tfjobctl apply of every example: created, nothing pruned, then unchanged without a write.
def tfjob_puts():
    """PUTs of TFJobs (not /status) the API server has answered, from its /metrics."""
    req = urllib.request.Request(URL + "/metrics")
    with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
        text = r.read().decode()
    n = 0
    for line in text.splitlines():
        if line.startswith("apiserver_request_total{") and 'resource="tfjobs"' in line and 'verb="PUT"' in line \
                and 'subresource=""' in line:
            n += int(float(line.rsplit(" ", 1)[1]))
    return n


apply_puts = {}
examples = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))
check(f"{len(examples)} examples/*.yaml", len(examples) >= 5)
for path in examples:
    base = os.path.basename(path)
    docs = [d for d in yaml.safe_load_all(open(path)) if d]
    rc, out, err = ctl("apply", "-f", path)
    lines = out.splitlines()
    ok = rc == 0 and len(lines) == len(docs)
    for d, line in zip(docs, lines):
        # generateName: created under the server's name (each apply creates another, as kubectl create)
        want = d["metadata"].get("name")
        got = line.split("/", 1)[-1].rsplit(" ", 1)[0] if line.endswith(" created") else None
        ok = ok and got is not None and (got == want if want else got.startswith(d["metadata"]["generateName"]))
        d["metadata"]["name"] = got or want
    check(f"apply {base}: created ({rc})", ok, out + err)
    for d in docs:
        ns = d["metadata"].get("namespace", "default")
        stored = get_job(d["metadata"]["name"], ns) or {}
        lost = missing(d.get("spec"), stored.get("spec"))
        check(f"apply {base}: {d['metadata']['name']}: nothing of its spec pruned or changed", not lost, lost)
        d["_rv"] = stored.get("metadata", {}).get("resourceVersion")
        # what the server added (its schema's defaults): with none, a second apply makes no PUT
        d["_defaults"] = [x for x in missing(stored.get("spec"), d.get("spec"))]
        if "generateName" in d["metadata"]:  # apply it again by its name
            del d["metadata"]["generateName"]
    again = os.path.join(WORK, "again-" + base)
    with open(again, "w") as f:
        yaml.safe_dump_all([{k: v for k, v in d.items() if not k.startswith("_")} for d in docs], f)
    puts0 = tfjob_puts()
    rc, out, err = ctl("apply", "-f", again)
    apply_puts[base] = (tfjob_puts() - puts0, sum(len(d["_defaults"]) for d in docs))
    names = [d["metadata"]["name"] for d in docs]
    check(f"apply {base} again: unchanged", rc == 0 and out.splitlines() == [f"tfjob.kubeflow.org/{n} unchanged" for n in names],
          out + err)
    for d in docs:
        ns = d["metadata"].get("namespace", "default")
        rv = (get_job(d["metadata"]["name"], ns) or {}).get("metadata", {}).get("resourceVersion")
        check(f"apply {base} again: {d['metadata']['name']} not written (resourceVersion {d['_rv']})", rv == d["_rv"])
        rc, out, err = ctl("delete", d["metadata"]["name"], "-n", ns)
        check(f"delete {d['metadata']['name']}", rc == 0 and "deleted" in out, out + err)

# The second apply of an example sends no request but its GET (the nulls the schema prunes, such as
# template.metadata.creationTimestamp: null, are nothing to change), unless the server added
# defaults (ports[].protocol: TCP, ...): tfjobctl cannot tell those from fields removed from the
# file (it keeps no last-applied annotation), so it PUTs, and the server keeps its
# resourceVersion (checked above): "unchanged", as docs/transport.md says.
check(f"the second apply of an example without server defaults sent no PUT, with some at most one "
      f"((PUTs, server defaults) {apply_puts})", all(p == (1 if n else 0) or (n and p == 0) for p, n in apply_puts.values()))

# A null the official schema prunes: nothing to change, no PUT.
nulls = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "nulls", "namespace": NS},
         "spec": {"tfReplicaSpecs": {"Worker": {"replicas": 1, "template": {
             "metadata": {"creationTimestamp": None},
             "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]}}}}}}
npath = os.path.join(WORK, "nulls.yaml")
with open(npath, "w") as f:
    yaml.safe_dump(nulls, f)
rc, out, err = ctl("apply", "-f", npath)
check("apply nulls: created, the null pruned", rc == 0 and "created" in out and
      get_job("nulls")["spec"]["tfReplicaSpecs"]["Worker"]["template"]["metadata"] == {}, out + err)
puts0 = tfjob_puts()
rc, out, err = ctl("apply", "-f", npath)
check(f"apply nulls again: unchanged without a PUT ({tfjob_puts() - puts0})", rc == 0 and
      out.strip() == "tfjob.kubeflow.org/nulls unchanged" and tfjob_puts() == puts0, out + err)
ctl("delete", "nulls", "-n", NS)

# A job that uses every field of the spec (and a pod template with fields the schema defaults).
full = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
        "metadata": {"name": "full", "namespace": NS, "labels": {"team": "a"}, "annotations": {"note": "x"}},
        "spec": {"enableDynamicWorker": False, "successPolicy": "AllWorkers",
                 "runPolicy": {"cleanPodPolicy": "Running", "ttlSecondsAfterFinished": 600, "activeDeadlineSeconds": 3600,
                               "backoffLimit": 3, "suspend": True, "managedBy": "kubeflow.org/training-operator",
                               "schedulingPolicy": {"minAvailable": 2, "queue": "q", "priorityClass": "p",
                                                    "minResources": {"cpu": "2", "memory": "1Gi"},
                                                    "scheduleTimeoutSeconds": 60}},
                 "tfReplicaSpecs": {
                     "PS": {"replicas": 1, "restartPolicy": "Never", "template": {
                         "metadata": {"labels": {"l": "v"}, "annotations": {"a": "b"}},
                         "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0",
                                                  "ports": [{"name": "tfjob-port", "containerPort": 2222}],
                                                  "env": [{"name": "A", "value": "1"}],
                                                  "resources": {"limits": {"cpu": "1"}}}]}}},
                     "Worker": {"replicas": 2, "restartPolicy": "ExitCode", "template": {
                         "spec": {"containers": [{"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0",
                                                  "command": ["python", "-c", "pass"]}],
                                  "nodeSelector": {"k": "v"}, "tolerations": [{"key": "k", "operator": "Exists"}]}}}}}}
# A status with every field of v1.9's JobStatus (those the library writes, and labelSelector):
# in FILE it is not applied; written through /status it is kept whole by the official schema.
status = {"conditions": [
    {"type": "Created", "status": "True", "reason": "TFJobCreated", "message": "TFJob full is created.",
     "lastUpdateTime": "2026-01-01T00:00:00Z", "lastTransitionTime": "2026-01-01T00:00:00Z"},
    {"type": "Suspended", "status": "False", "reason": "TFJobResumed", "message": "TFJob full is resumed.",
     "lastUpdateTime": "2026-01-01T00:00:01Z", "lastTransitionTime": "2026-01-01T00:00:01Z"},
    {"type": "Restarting", "status": "False", "reason": "TFJobRestarting", "message": "x",
     "lastUpdateTime": "2026-01-01T00:00:02Z", "lastTransitionTime": "2026-01-01T00:00:02Z"},
    {"type": "Running", "status": "False", "reason": "TFJobRunning", "message": "x",
     "lastUpdateTime": "2026-01-01T00:00:03Z", "lastTransitionTime": "2026-01-01T00:00:03Z"},
    {"type": "Failed", "status": "True", "reason": "TFJobFailed", "message": "x",
     "lastUpdateTime": "2026-01-01T00:00:04Z", "lastTransitionTime": "2026-01-01T00:00:04Z"}],
    "replicaStatuses": {"PS": {"active": 1, "succeeded": 0, "failed": 2,
                               "selector": "training.kubeflow.org/job-name=full,training.kubeflow.org/replica-type=ps",
                               "labelSelector": {"matchLabels": {"training.kubeflow.org/job-name": "full"},
                                                 "matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}},
                        "Worker": {}},
    "startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:00:05Z",
    "lastReconcileTime": "2026-01-01T00:00:05Z"}
fpath = os.path.join(WORK, "full.yaml")
with open(fpath, "w") as f:
    yaml.safe_dump(dict(full, status=status), f)  # a status in FILE is not applied (the /status subresource)
rc, out, err = ctl("apply", "-f", fpath)
check("apply full (with a status): created", rc == 0 and out.strip() == "tfjob.kubeflow.org/full created", out + err)
stored = get_job("full") or {}
check("apply full: the file's status is not stored", not stored.get("status"), stored.get("status"))
lost = missing(full["spec"], stored.get("spec"))
check("apply full: nothing of the spec pruned or changed", not lost, lost)
port = stored["spec"]["tfReplicaSpecs"]["PS"]["template"]["spec"]["containers"][0]["ports"][0]
check("apply full: the server defaulted ports[].protocol TCP (the official schema's default)", port.get("protocol") == "TCP", port)
rv = stored["metadata"]["resourceVersion"]
puts0 = tfjob_puts()
rc, out, err = ctl("apply", "-f", fpath)
check("apply full again: unchanged, not written", rc == 0 and out.strip() == "tfjob.kubeflow.org/full unchanged"
      and get_job("full")["metadata"]["resourceVersion"] == rv, out + err)
# Fields the server defaulted (ports[].protocol) are not in the file: tfjobctl cannot tell them from
# fields removed from the file (it keeps no last-applied annotation), so it PUTs, and the server
# keeps its resourceVersion: "unchanged" (docs/transport.md).
print(f"     PUTs made by the second apply of full (server-side defaults): {tfjob_puts() - puts0}", flush=True)
q = copy.deepcopy(full)
q["spec"]["runPolicy"]["schedulingPolicy"]["queue"] = "other"
with open(fpath, "w") as f:
    yaml.safe_dump(q, f)
rc, out, err = ctl("apply", "-f", fpath)
check("apply full with another queue: the official schema's immutable rule refuses it (exit 1, Invalid)",
      rc == 1 and "Error from server (Invalid)" in err and "queue is immutable" in err, (rc, out, err))

obj = get_job("full")
obj["status"] = status
c, back = api("PUT", f"{TFJ}/full/status", obj)
check(f"a status with every field: accepted ({c}) and stored as written", c == 200 and back.get("status") == status
      and (get_job("full") or {}).get("status") == status, missing(status, back.get("status")))
api("DELETE", f"{TFJ}/full")
wait("full deleted", lambda: get_job("full") is None)

# 2. The operator, with v1.9.2's own ClusterRole, and a watch counting status changes.
role = [d for d in yaml.safe_load_all(open(os.path.join(os.path.dirname(CRD_FILE), "../rbac/role.yaml"))) if d][0]
c1, _ = api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
c2, _ = api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "training-operator"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role["metadata"]["name"]},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "libtfjob-user"}]})
check(f"v1.9.2's ClusterRole {role['metadata']['name']} bound to the operator's user ({c1}, {c2})", c1 == 201 and c2 == 201)

changes = {}
stop_watch = threading.Event()


def watch_status(rv):
    last = {}
    req = urllib.request.Request(URL + f"{TFJ}?watch=true&resourceVersion={rv}&timeoutSeconds=300")
    with urllib.request.urlopen(req, context=ctx, timeout=310) as r:
        for line in r:
            ev = json.loads(line)
            if ev["type"] == "BOOKMARK":
                continue
            name = ev["object"]["metadata"]["name"]
            st = ev["object"].get("status")
            if ev["type"] == "MODIFIED" and st != last.get(name):
                changes[name] = changes.get(name, 0) + 1
            last[name] = st
            if stop_watch.is_set():
                return


rv0 = api("GET", TFJ)[1]["metadata"]["resourceVersion"]
threading.Thread(target=watch_status, args=(rv0,), daemon=True).start()
op = Operator("operator", os.environ["KUBE_USER_KUBECONFIG"])
wait("operator ready under v1.9.2's ClusterRole", lambda: op.http(1, "/readyz")[0] == 200)
calls0, m0 = op.calls()


def job(name, types, run_policy=None, spec=None):
    specs = {}
    for t in types.split(","):
        typ, n, policy = t.split(":")
        specs[typ] = {"replicas": int(n), "restartPolicy": policy, "template": {"spec": {"containers": [
            {"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0",
             "ports": [{"name": "tfjob-port", "containerPort": 2222}]}]}}}
    s = {"runPolicy": dict({"cleanPodPolicy": "Running"}, **(run_policy or {})), "tfReplicaSpecs": specs}
    s.update(spec or {})
    j = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": name, "namespace": NS}, "spec": s}
    p = os.path.join(WORK, name + ".yaml")
    with open(p, "w") as f:
        yaml.safe_dump(j, f)
    rc, out, err = ctl("apply", "-f", p)
    check(f"{name}: tfjobctl apply created it", rc == 0 and out.strip() == f"tfjob.kubeflow.org/{name} created", out + err)


# 2a. PS + workers succeed; tfjobctl watch follows it to the end.
job("ok", "PS:1:Never,Worker:2:Never")
wait("ok: 3 pods, 3 services, Created", lambda: len(children("pods", "ok")) == 3 and len(children("services", "ok")) == 3
     and cond("ok", "Created") == "True")
pod = [p for p in children("pods", "ok") if p["metadata"]["name"] == "ok-worker-0"][0]
check("ok: the pod has the template's port with the official schema's default protocol",
      pod["spec"]["containers"][0]["ports"][0].get("protocol") == "TCP")
for n in ("ok-ps-0", "ok-worker-0", "ok-worker-1"):
    kubelet(n, "Running")
wait("ok: Running", lambda: cond("ok", "Running") == "True")
wout = os.path.join(WORK, "watch.txt")
w = subprocess.Popen([CTL, "watch", "ok", "-n", NS, "--timeout", "60", *KC], stdout=open(wout, "w"), stderr=subprocess.STDOUT)
time.sleep(1)
kubelet("ok-worker-0", "Succeeded", 0)
wait("ok: Succeeded, running pods cleaned up", lambda: cond("ok", "Succeeded") == "True"
     and [x["metadata"]["name"] for x in children("pods", "ok")] == ["ok-worker-0"])
try:
    wrc = w.wait(timeout=30)
except subprocess.TimeoutExpired:
    w.kill()
    wrc = None
check(f"tfjobctl watch: exit 0 when the job succeeds ({wrc})", wrc == 0, open(wout).read())
check("tfjobctl watch: printed the change to Succeeded", "Succeeded" in open(wout).read(), open(wout).read())
st = get_job("ok")["status"]
rs = st.get("replicaStatuses", {})
check("ok: stored status has startTime, completionTime, replicaStatuses without selectors (v1.9 writes none)",
      st.get("startTime") and st.get("completionTime") and rs.get("Worker", {}).get("succeeded", 0) >= 1
      and "selector" not in rs.get("Worker", {}) and "selector" not in rs.get("PS", {}), st)

# 2b. A job failing (permanent exit code).
job("perm", "Worker:1:ExitCode")
wait("perm: pod", lambda: children("pods", "perm"))
kubelet("perm-worker-0", "Failed", 1)
wait("perm: Failed", lambda: cond("perm", "Failed") == "True")

# 2c. A retryable exit code: Restarting, then success.
job("retry", "Worker:1:ExitCode")
wait("retry: pod", lambda: children("pods", "retry"))
u1 = children("pods", "retry")[0]["metadata"]["uid"]
kubelet("retry-worker-0", "Failed", 137)
wait("retry: Restarting and the pod recreated", lambda: cond("retry", "Restarting") == "True" and
     children("pods", "retry") and children("pods", "retry")[0]["metadata"]["uid"] != u1)
kubelet("retry-worker-0", "Succeeded", 0)
wait("retry: Succeeded", lambda: cond("retry", "Succeeded") == "True")

# 2d. Suspend and resume (runPolicy.suspend is defaulted to false by the official schema).
job("sus", "Worker:2:Never", {"suspend": True})
wait("sus: Suspended, no pods", lambda: cond("sus", "Suspended") == "True" and not children("pods", "sus"))
api("PATCH", f"{TFJ}/sus", {"spec": {"runPolicy": {"suspend": False}}}, "application/merge-patch+json")
wait("sus: resumed, 2 pods", lambda: len(children("pods", "sus")) == 2 and cond("sus", "Suspended") == "False")
api("PATCH", f"{TFJ}/sus", {"spec": {"runPolicy": {"suspend": True}}}, "application/merge-patch+json")
wait("sus: suspended again, pods deleted", lambda: cond("sus", "Suspended") == "True" and not children("pods", "sus"))

# 2e. cleanPodPolicy All and a TTL.
job("ttl", "PS:1:Never,Worker:1:Never", {"cleanPodPolicy": "All", "ttlSecondsAfterFinished": 2})
wait("ttl: 2 pods", lambda: len(children("pods", "ttl")) == 2)
kubelet("ttl-ps-0", "Running")
kubelet("ttl-worker-0", "Succeeded", 0)
wait("ttl: Succeeded, every pod and service deleted", lambda: cond("ttl", "Succeeded") == "True" and
     not children("pods", "ttl") and not children("services", "ttl"))
wait("ttl: the job deleted after 2 s", lambda: get_job("ttl") is None, 30)

# 2f. Nothing to do: no API call at all while nothing changes (no update storm).
time.sleep(1.5)
calls1, m1 = op.calls()
time.sleep(3)
calls2, m2 = op.calls()
idle = {k: calls2[k] - calls1.get(k, 0) for k in calls2 if calls2[k] != calls1.get(k, 0)}
check("idle: no API call in 3 s once every job is settled", not idle, idle)
writes = calls2.get("update_status", 0) - calls0.get("update_status", 0)
conflicts = m2.get("tfjob_controller_status_conflicts_total", 0) - m0.get("tfjob_controller_status_conflicts_total", 0)
time.sleep(0.5)
seen = sum(changes.values())
print(f"     status writes {int(writes)} ({int(conflicts)} conflicts), status changes seen {seen}: {changes}", flush=True)
check("one status write per status change (no write the server stores as no change)",
      writes - conflicts == seen and seen >= 10, (writes, conflicts, changes))
# the patch verb also counts the PATCHes of repeated Events (their count): those are not TFJobs
EVENT_PATCHES = 'tfjob_controller_events_total{result="patched"}'
patches = calls2.get("patch", 0) - calls0.get("patch", 0)
event_patches = m2.get(EVENT_PATCHES, 0) - m0.get(EVENT_PATCHES, 0)
check("no spec update or patch of a TFJob", calls2.get("update", 0) == calls0.get("update", 0)
      and patches == event_patches, (patches, event_patches))
log = open(op.logname).read()
check("the operator never saw a stored status differ from the one it wrote (nothing pruned)",
      "stored status differs" not in log, [l for l in log.splitlines() if "stored status differs" in l][:3])
check("the operator logged no error", '"level":"error"' not in log,
      [l for l in log.splitlines() if '"level":"error"' in l][:3])

# 3. tfjobctl get / describe / delete on what the operator wrote.
rc, out, err = ctl("get", "-n", NS, "-o", "json")
try:
    lst = json.loads(out)
except ValueError:
    lst = {}
names = sorted(i["metadata"]["name"] for i in lst.get("items", []))
check(f"get -o json: a List of ok, perm, retry, sus ({names})", rc == 0 and lst.get("kind") == "List"
      and names == ["ok", "perm", "retry", "sus"], out + err)
okj = [i for i in lst.get("items", []) if i["metadata"]["name"] == "ok"]
check("get -o json: ok's status as stored", okj and okj[0].get("status") == get_job("ok")["status"])
rc, out, err = ctl("get", "ok", "-n", NS, "-o", "yaml")
y = yaml.safe_load(out) if rc == 0 else {}
check("get -o yaml: the object, status as stored", rc == 0 and y.get("kind") == "TFJob" and
      y.get("status") == get_job("ok")["status"], out + err)
rc, out, err = ctl("get", "-n", NS, "-o", "wide")
rows = {l.split()[0]: l.split() for l in out.splitlines()[1:]}
check("get -o wide: states Succeeded, Failed, Succeeded, Suspended; replicas and clean pod policy", rc == 0 and
      [rows.get(n, [None, None])[1] for n in ("ok", "perm", "retry", "sus")] == ["Succeeded", "Failed", "Succeeded", "Suspended"]
      and "PS:1,Worker:2" in rows.get("ok", []) and "Running" in rows.get("ok", []), out + err)
print("     " + out.replace("\n", "\n     "), flush=True)
# The default table's STATE is what the official CRD's printer column (.status.conditions[-1:].type)
# gives: the server's own Table, as kubectl get prints it.
req = urllib.request.Request(URL + TFJ, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
    table = json.loads(r.read())
cols = [c["name"] for c in table["columnDefinitions"]]
server_rows = sorted((row["cells"][0], row["cells"][cols.index("State")]) for row in table["rows"])
rc, out, err = ctl("get", "-n", NS)
our_rows = sorted((l.split()[0], l.split()[1] if len(l.split()) > 2 else "") for l in out.splitlines()[1:])
check(f"get: NAME and STATE as the server's Table of the official printer columns ({server_rows})",
      rc == 0 and out.split()[:3] == ["NAME", "STATE", "AGE"] and our_rows == server_rows, (out, err))
rc, out, err = ctl("describe", "ok", "-n", NS)
check("describe: conditions and replica statuses", rc == 0 and "TFJobSucceeded" in out and "Worker" in out, out + err)
rc, out, err = ctl("describe", "perm", "-n", NS)
check("describe perm: TFJobFailed", rc == 0 and "TFJobFailed" in out, out + err)
rc, out, err = ctl("watch", "perm", "-n", NS, "--timeout", "10")
check(f"watch of a failed job: exit 1 ({rc})", rc == 1, out + err)
for n in ("ok", "perm", "retry", "sus"):
    rc, out, err = ctl("delete", n, "-n", NS)
    check(f"delete {n}", rc == 0 and out.strip() == f'tfjob.kubeflow.org "{n}" deleted', out + err)
rc, out, err = ctl("get", "ok", "-n", NS)
check("get after delete: NotFound, exit 1", rc == 1 and "NotFound" in err, out + err)

# 4. tfjobctl as a user with nothing but v1.9.2's kubeflow-training-edit role (overlays/kubeflow)
# bound in the namespace: apply, get, describe, watch and delete need no more.
roles = [d for d in yaml.safe_load_all(open(os.path.join(os.path.dirname(CRD_FILE), "../../overlays/kubeflow/kubeflow-training-roles.yaml"))) if d]
edit = [d for d in roles if d["metadata"]["name"] == "kubeflow-training-edit"][0]
c1, _ = api("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", edit)
c2, _ = api("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings", {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "edit"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kubeflow-training-edit"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "libtfjob-token-user"}]})
check(f"kubeflow-training-edit bound to the token user in {NS} ({c1}, {c2})", c1 == 201 and c2 == 201)
ekc = os.path.join(WORK, "edit.kubeconfig")
with open(ekc, "w") as f:
    yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "e",
                    "clusters": [{"name": "c", "cluster": {"server": URL, "certificate-authority": os.environ["KUBE_CA_CERT"]}}],
                    "users": [{"name": "u", "user": {"token": os.environ["KUBE_USER_TOKEN"]}}],
                    "contexts": [{"name": "e", "context": {"cluster": "c", "user": "u", "namespace": NS}}]}, f)
KC[:] = ["--kubeconfig", ekc]
job("edit", "Worker:1:Never")
p = os.path.join(WORK, "edit.yaml")
rc, out, err = ctl("apply", "-f", p)
check("edit role: apply again: unchanged", rc == 0 and out.strip() == "tfjob.kubeflow.org/edit unchanged", out + err)
wait("edit: the operator created its pod", lambda: children("pods", "edit"))
kubelet("edit-worker-0", "Succeeded", 0)
wait("edit: Succeeded", lambda: cond("edit", "Succeeded") == "True")
for fmt in ("json", "yaml", "wide", "name"):
    rc, out, err = ctl("get", "-o", fmt)
    check(f"edit role: get -o {fmt}", rc == 0 and "edit" in out and not err, out + err)
rc, out, err = ctl("describe", "edit")
check("edit role: describe shows the conditions and the events", rc == 0 and "TFJobSucceeded" in out
      and "SuccessfulCreatePod" in out, out + err)
rc, out, err = ctl("watch", "edit", "--timeout", "10")
check(f"edit role: watch of the succeeded job: exit 0 ({rc})", rc == 0, out + err)
rc, out, err = ctl("delete", "edit")
check("edit role: delete", rc == 0 and out.strip() == 'tfjob.kubeflow.org "edit" deleted', out + err)

stop_watch.set()
rc = op.stop()
check(f"operator: SIGTERM, exit 0 ({rc})", rc == 0)
# The harness's users are unprivileged again (the bindings' tests that follow expect a 403).
c1, _ = api("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/training-operator")
c2, _ = api("DELETE", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings/edit")
check(f"role bindings removed ({c1}, {c2})", c1 == 200 and c2 == 200)
sys.exit(exit_status())
