#!/usr/bin/env python3
"""tfjob-operator against a real kube-apiserver (tests/kube/harness.sh): no kubelet, so this
script plays it, writing pod status through /status. Run by tests/suites/64-controller-kube.sh
with the harness's environment. Prints ok/FAIL lines; exit status 1 when anything failed."""
import json, os, signal, socket, ssl, subprocess, sys, time, urllib.request, urllib.error

URL = os.environ["KUBE_APISERVER_URL"]
OP = sys.argv[1]
WORK = sys.argv[2]
ctx = ssl.create_default_context(cafile=os.environ["KUBE_CA_CERT"])
ctx.load_cert_chain(os.environ["KUBE_ADMIN_CERT"], os.environ["KUBE_ADMIN_KEY"])
failures = 0
NS = "e2e"


def check(what, cond):
    global failures
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failures += 1


def api(method, path, body=None, ctype="application/json"):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(URL + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        try:
            return e.code, json.loads(e.read() or b"{}")
        except ValueError:
            return e.code, {}


def wait(what, fn, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        try:
            if fn():
                check(what, True)
                return True
        except Exception:
            pass
        time.sleep(0.1)
    check(what + " (timed out)", False)
    return False


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


def cond(name, typ):
    j = get_job(name)
    for c in ((j or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == typ:
            return c.get("status")
    return None


def children(kind, jobname):
    code, body = api("GET", f"/api/v1/namespaces/{NS}/{kind}?labelSelector=training.kubeflow.org/job-name={jobname}")
    return [i for i in body.get("items", []) if not i["metadata"].get("deletionTimestamp")]


def uid(kind, name):
    code, body = api("GET", f"/api/v1/namespaces/{NS}/{kind}/{name}")
    return body["metadata"]["uid"] if code == 200 else None


def kubelet(pod, phase, code=None, restarts=0):
    for _ in range(20):
        c, p = api("GET", f"/api/v1/namespaces/{NS}/pods/{pod}")
        if c != 200:
            time.sleep(0.1)
            continue
        state = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error"}} if code is not None \
            else {"running": {}}
        p["status"] = {"phase": phase, "containerStatuses": [{"name": "tensorflow", "image": "tf", "imageID": "",
                                                                "ready": phase == "Running", "restartCount": restarts,
                                                                "state": state}]}
        c, _ = api("PUT", f"/api/v1/namespaces/{NS}/pods/{pod}/status", p)
        if c == 200:
            return
    check(f"set status of pod {pod}", False)


class Operator:
    def __init__(self, name, extra=(), kubeconfig=None):
        self.log = open(os.path.join(WORK, name + ".log"), "w")
        args = [OP, "--kubeconfig", kubeconfig or os.environ["KUBE_ADMIN_KUBECONFIG"],
                "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
                "--threadiness", "4", "--kube-api-qps", "200", "--kube-api-burst", "400"] + list(extra)
        self.p = subprocess.Popen(args, stderr=self.log, stdout=self.log)
        self.name = name
        self.ports = None
        end = time.time() + 20
        while time.time() < end and self.ports is None:
            for line in open(self.log.name):
                if '"ports"' in line:
                    a, b = json.loads(line)["ports"].split(",")
                    self.ports = (int(a), int(b))
            time.sleep(0.05)

    def http(self, which, path, raw=None):
        s = socket.create_connection(("127.0.0.1", self.ports[which]), timeout=5)
        s.sendall(raw if raw is not None else f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        data = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            data += chunk
        s.close()
        head, _, body = data.partition(b"\r\n\r\n")
        code = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
        return code, body.decode(errors="replace")

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
check("garbage 400", op.http(0, None, b"\x00\x01garbage\r\n\r\n")[0] == 400)
check("oversized request 431", op.http(0, None, b"GET /" + b"a" * 9000)[0] == 431)
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
c, ev = api("GET", f"/api/v1/namespaces/{NS}/events")
reasons = [e["reason"] for e in ev["items"] if e["involvedObject"]["name"] == "ok"]
check("events SuccessfulCreatePod x3, SuccessfulCreateService x3, SuccessfulDeletePod", reasons.count("SuccessfulCreatePod") == 3
      and reasons.count("SuccessfulCreateService") == 3 and "SuccessfulDeletePod" in reasons)

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

m = op.metric("training_operator_jobs_successful_total")
check(f"/metrics: jobs successful total {m} >= 3", m is not None and m >= 3)
code, body = op.http(0, "/metrics")
check("/metrics: histogram and queue depth", 'tfjob_controller_reconcile_time_seconds_bucket{le="+Inf"}' in body and
      'workqueue_depth{name="tfjob"}' in body)

# 9. Killed while creating 50 pods, restarted: no duplicates, converges.
op.stop()
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

# 10. The API server goes away under a running operator and comes back (a TCP proxy in front of
# it is stopped and started again: the harness's supervisor stops etcd when kube-apiserver exits,
# so the server process itself is not restarted). Watches break, reconnect and relist.
import threading


class Proxy:
    def __init__(self, port=0):
        self.target = ("127.0.0.1", int(URL.rsplit(":", 1)[1]))
        self.lsock = socket.socket()
        self.lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.lsock.bind(("127.0.0.1", port))
        self.lsock.listen(64)
        self.port = self.lsock.getsockname()[1]
        self.conns = []
        self.alive = True
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while self.alive:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            try:
                u = socket.create_connection(self.target)
            except OSError:
                c.close()
                continue
            self.conns += [c, u]
            for a, b in ((c, u), (u, c)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    def pipe(self, a, b):
        try:
            while True:
                d = a.recv(65536)
                if not d:
                    break
                b.sendall(d)
        except OSError:
            pass
        for x in (a, b):
            try:
                x.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self):
        self.alive = False
        self.lsock.close()
        for x in self.conns:
            try:
                x.shutdown(socket.SHUT_RDWR)
                x.close()
            except OSError:
                pass


proxy = Proxy()
kc = open(user_kc or os.environ["KUBE_ADMIN_KUBECONFIG"]).read().replace(URL, f"https://127.0.0.1:{proxy.port}")
kc_path = os.path.join(WORK, "proxy.kubeconfig")
open(kc_path, "w").write(kc)
op.stop()
op = Operator("op4", [], kubeconfig=kc_path)
create_job(job("pre", "Worker:1:Never"))
wait("outage: pre has its pod", lambda: uid("pods", "pre-worker-0"))
proxy.stop()
time.sleep(1)
create_job(job("during", "Worker:2:Never"))
kubelet("pre-worker-0", "Succeeded", 0)
time.sleep(3)
check("outage: the operator keeps running", op.p.poll() is None and op.http(1, "/healthz")[0] == 200)
check("outage: nothing happened meanwhile", not children("pods", "during"))
proxy = Proxy(proxy.port)
wait("outage over: during gets its 2 pods", lambda: len(children("pods", "during")) == 2, 90)
wait("outage over: pre Succeeded", lambda: cond("pre", "Succeeded") == "True", 90)

# 11. SIGTERM stops cleanly.
rc = op.stop()
check(f"SIGTERM: exit status 0 ({rc})", rc == 0)
sys.exit(1 if failures else 0)
