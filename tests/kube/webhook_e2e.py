"""tfjob-operator's admission webhook against a real kube-apiserver (tests/kube/harness.sh), run by
tests/suites/68-webhook.sh. The webhook is registered by URL (https://127.0.0.1:PORT/...) with the
names and RBAC of examples/deploy/webhook.yaml; the operator runs as the harness's unprivileged
user with only those rights, makes its certificates, stores them in the Secret and injects the CA.
Every TFJob is created through the API server's REST API (as kubectl does), so it goes through
admission exactly as `kubectl apply` would. Prints ok/FAIL lines; exit status 1 on any failure."""
import glob, hashlib, json, os, re, resource, signal, socket, ssl, subprocess, sys, threading, time
import yaml
from e2e_lib import RUNNING, api, check, exit_status, http_get, operator_ports, wait

OP, TFJOBCTL, WORK = sys.argv[1:4]
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "../.."))
FIX = os.path.join(ROOT, "tests/kube/fixtures/webhook")
NS = "webhook-e2e"
WEBHOOK = "validator.tfjob.training-operator.kubeflow.org"
CONFIG = "validator.training-operator.kubeflow.org"
SECRET = "training-operator-webhook-cert"
PREFIX = f'admission webhook "{WEBHOOK}" denied the request: '
TFJOBS = f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs"
VWC = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Operator:
    def __init__(self, name, extra, webhook_port, kubeconfig=None):
        self.log_path = os.path.join(WORK, name + ".log")
        self.log = open(self.log_path, "w")
        args = [OP, "--kubeconfig", kubeconfig or os.environ["KUBE_USER_KUBECONFIG"], "--namespace", NS,
                "--metrics-bind-address", "127.0.0.1:0", "--health-probe-bind-address", "127.0.0.1:0",
                "--webhook-host", "127.0.0.1", "--webhook-server-port", str(webhook_port)] + list(extra)
        self.p = subprocess.Popen(args, stdout=self.log, stderr=self.log, env=dict(os.environ, MY_POD_NAMESPACE="kubeflow"))
        RUNNING.append(self.p)
        self.ports = operator_ports(self.log_path)

    def http(self, path, timeout=5):
        return http_get(self.ports[1], path, timeout=timeout)

    def rss_kib(self):
        for line in open(f"/proc/{self.p.pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])

    def log_count(self, msg):
        return sum(1 for line in open(self.log_path) if msg in line)

    def stop(self):
        self.p.send_signal(signal.SIGTERM)
        code = self.p.wait(timeout=30)
        check(f"{os.path.basename(self.log_path)[:-4]}: SIGTERM, exit 0 ({code})", code == 0,
              "".join(open(self.log_path).readlines()[-20:]))


def load(path):
    return yaml.safe_load(open(path))


def create(obj, query=""):
    obj = dict(obj, metadata=dict(obj["metadata"], namespace=NS))
    return api("POST", TFJOBS + query, obj)


def tfjobctl_messages(path):
    """The field errors tfjobctl validate prints for path ("PATH[:LINE:COLUMN]: message"), as messages, in order."""
    out = subprocess.run([TFJOBCTL, "validate", path], capture_output=True, text=True)
    where = re.compile(re.escape(path) + r"(:[0-9]+:[0-9]+)?: ")
    return [line[where.match(line).end():] for line in out.stdout.splitlines() if where.match(line)] \
        if out.returncode == 1 else []


def denial(messages):
    """What the API server says for these errors: v1.9's aggregate, under the webhook's prefix."""
    uniq = list(dict.fromkeys(messages))
    return PREFIX + (uniq[0] if len(uniq) == 1 else "[" + ", ".join(uniq) + "]")


def served_fingerprint(port):
    c = ssl.create_default_context()
    c.check_hostname = False
    c.verify_mode = ssl.CERT_NONE
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s, c.wrap_socket(s) as t:
        return hashlib.sha256(t.getpeercert(binary_form=True)).hexdigest()


# ---- setup: namespaces, the manifests' Secret and RBAC bound to the unprivileged user --------------
for ns in (NS, "kubeflow"):
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
user = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "libtfjob-user"}]
codes = []
for path in ("examples/deploy/rbac.yaml", "examples/deploy/webhook.yaml"):
    for d in yaml.safe_load_all(open(os.path.join(ROOT, path))):
        kind, ns = d["kind"], d["metadata"].get("namespace")
        if kind in ("ServiceAccount", "Service", "ValidatingWebhookConfiguration"):
            continue
        if kind.endswith("Binding"):
            d["subjects"] = user
        plural = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings", "Role": "roles",
                  "RoleBinding": "rolebindings", "Secret": "secrets"}[kind]
        group = "/api/v1" if kind == "Secret" else "/apis/rbac.authorization.k8s.io/v1"
        codes.append(api("POST", f"{group}{'/namespaces/' + ns if ns else ''}/{plural}", d)[0])
check(f"manifests' Secret and RBAC installed for the operator's user ({codes})", all(c == 201 for c in codes))


def allowed(verb, resource, name, ns="kubeflow", group=""):
    attrs = {"verb": verb, "resource": resource, "name": name, "group": group}
    if ns:
        attrs["namespace"] = ns
    c, r = api("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
               {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
                "spec": {"user": "libtfjob-user", "resourceAttributes": attrs}})
    return r.get("status", {}).get("allowed", False)


check("least privilege: the operator may get and update its Secret and its webhook configuration only",
      allowed("get", "secrets", SECRET) and allowed("update", "secrets", SECRET) and
      not allowed("get", "secrets", "other") and not allowed("list", "secrets", "") and
      allowed("update", "validatingwebhookconfigurations", CONFIG, None, "admissionregistration.k8s.io") and
      not allowed("update", "validatingwebhookconfigurations", "other", None, "admissionregistration.k8s.io"))

manifest_vwc = [d for d in yaml.safe_load_all(open(os.path.join(ROOT, "examples/deploy/webhook.yaml")))
                if d["kind"] == "ValidatingWebhookConfiguration"][0]
check("manifest: failurePolicy Fail, CREATE and UPDATE of tfjobs, v1.9's names",
      manifest_vwc["metadata"]["name"] == CONFIG and manifest_vwc["webhooks"][0]["name"] == WEBHOOK and
      manifest_vwc["webhooks"][0]["failurePolicy"] == "Fail" and
      manifest_vwc["webhooks"][0]["rules"][0]["operations"] == ["CREATE", "UPDATE"])

PORT = free_port()
vwc = json.loads(json.dumps(manifest_vwc))
vwc["webhooks"][0]["clientConfig"] = {"url": f"https://127.0.0.1:{PORT}/validate-kubeflow-org-v1-tfjob"}
vwc["webhooks"][0]["timeoutSeconds"] = 5

# ---- readiness waits for the certificates ----------------------------------------------------------
op = Operator("op1", ["--webhook-cert-hosts", "127.0.0.1", "--http-request-timeout", "6s", "--http-idle-timeout", "3s"],
              PORT)
check("operator started", op.ports is not None)
wait("/healthz 200 at once", lambda: op.http("/healthz")[0] == 200, 10)
time.sleep(2)
code, body = op.http("/readyz")
check(f"/readyz 503 while the ValidatingWebhookConfiguration to inject is missing ({code} {body.strip()})",
      code == 503 and "webhook" in body)
c, _ = api("POST", VWC, vwc)
check(f"ValidatingWebhookConfiguration registered by URL, no caBundle ({c})", c == 201)
wait("/readyz 200 once the CA is injected", lambda: op.http("/readyz")[0] == 200, 30)
c, got = api("GET", f"{VWC}/{CONFIG}")
bundle = got["webhooks"][0]["clientConfig"].get("caBundle", "")
c, sec = api("GET", f"/api/v1/namespaces/kubeflow/secrets/{SECRET}")
check("Secret holds ca.crt, ca.key, tls.crt, tls.key; caBundle is its ca.crt",
      set((sec.get("data") or {}).keys()) >= {"ca.crt", "ca.key", "tls.crt", "tls.key"} and
      bundle == sec["data"]["ca.crt"])
cert_pem = subprocess.run(["base64", "-d"], input=sec["data"]["tls.crt"].encode(), capture_output=True).stdout
sans = subprocess.run(["openssl", "x509", "-noout", "-ext", "subjectAltName"], input=cert_pem,
                      capture_output=True).stdout.decode()
check(f"certificate for training-operator.kubeflow.svc and 127.0.0.1 ({' '.join(sans.split()[3:])})",
      "DNS:training-operator.kubeflow.svc" in sans and "IP Address:127.0.0.1" in sans)

# ---- invalid TFJobs: denied with every error tfjobctl validate reports -----------------------------
invalid = sorted(glob.glob(f"{FIX}/invalid/*.yaml"))
denied = 0
for path in invalid:
    want = tfjobctl_messages(path)
    code, body = create(load(path))
    msg = body.get("message", "")
    ok = bool(want) and code == 403 and msg == denial(want)
    denied += ok
    check(f"denied by the webhook: {os.path.basename(path)}", ok, f"{code} {msg!r} want {denial(want)!r}" if want else "tfjobctl says valid")
check(f"{denied} invalid TFJobs denied by the webhook (>= 20)", denied >= 20 and denied == len(invalid))
for path in sorted(glob.glob(f"{FIX}/schema/*.yaml")):
    code, body = create(load(path))
    check(f"refused by the CRD schema before the webhook: {os.path.basename(path)} ({code})",
          code == 422 and bool(tfjobctl_messages(path)), body.get("message"))
# Typos: the CRD (generated from the library's schema, the pod template included) declares every
# field, so with fieldValidation=Strict the API server refuses each typo itself (400, strict
# decoding error), naming the same fields as tfjobctl validate, before any webhook.
for path in sorted(glob.glob(f"{FIX}/typos/*.yaml")):
    want = [m[m.index('unknown field "'):].split(";")[0] for m in tfjobctl_messages(path) if 'unknown field "' in m]
    name = os.path.basename(path)
    code, body = create(load(path), "?fieldValidation=Strict")
    msg = body.get("message", "")
    check(f"typo refused with fieldValidation=Strict, as tfjobctl validate says: {name} ({code})",
          code == 400 and bool(want) and all(w in msg for w in want), f"{msg!r} want {want!r}")

# ---- valid examples: accepted --------------------------------------------------------------------
examples = [p for p in sorted(glob.glob(f"{ROOT}/examples/**/*.yaml", recursive=True))
            if not os.path.relpath(p, ROOT).startswith("examples/deploy/")]
accepted = total = 0
for path in examples:
    for doc in yaml.safe_load_all(open(path)):
        if not doc or doc.get("kind") != "TFJob":
            continue
        total += 1
        code, body = create(doc, "?dryRun=All")
        accepted += check(f"accepted: {os.path.relpath(path, ROOT)} {doc['metadata'].get('name')} ({code})",
                          code == 201, body.get("message"))
check(f"every valid example accepted ({accepted}/{total})", total > 0 and accepted == total)

# ---- warnings: an admitted job's tfjobctl warnings come back as the API server's Warning headers ----
def create_warnings(obj):
    """(status, the Warning headers' texts) of a dry-run create, as kubectl reads them."""
    import urllib.error, urllib.request
    from e2e_lib import URL, ctx
    obj = dict(obj, metadata=dict(obj["metadata"], namespace=NS))
    req = urllib.request.Request(URL + TFJOBS + "?dryRun=All", data=json.dumps(obj).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=20) as r:
            status, headers = r.status, r.headers.get_all("Warning") or []
    except urllib.error.HTTPError as e:
        status, headers = e.code, e.headers.get_all("Warning") or []
    # RFC 7234 form: 299 - "text"; the API server escapes nothing the texts below hold
    return status, [re.sub(r'^299 - "(.*)"$', r"\1", h) for h in headers]


chiefs = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "chiefs"},
          "spec": {"tfReplicaSpecs": {"Chief": {"replicas": 2, "restartPolicy": "OnFailure", "template": {"spec": {
              "restartPolicy": "Always", "containers": [{"name": "tensorflow", "image": "tf"}]}}}}}}
path = os.path.join(WORK, "chiefs.json")
with open(path, "w") as f:
    json.dump(chiefs, f)
out = subprocess.run([TFJOBCTL, "validate", path], capture_output=True, text=True)
prefix = "Warning: tfjob/chiefs: "
want = [line[len(prefix):] for line in out.stderr.splitlines() if line.startswith(prefix)]
code, got = create_warnings(chiefs)
check(f"warnings of an admitted job, as tfjobctl validate prints them ({code}, {len(got)} warnings)",
      code == 201 and len(want) == 2 and got == want, f"{got!r} want {want!r}")
code, got = create_warnings(load(f"{ROOT}/examples/tfjob-simple.yaml"))
check(f"no warning for examples/tfjob-simple.yaml ({code}, {got!r})", code == 201 and not got)

# ---- update: the immutable managedBy ----------------------------------------------------------------
job = load(f"{ROOT}/examples/tfjob-simple.yaml")
job["metadata"] = {"name": "immutable"}
job["spec"].setdefault("runPolicy", {})["managedBy"] = "kubeflow.org/training-operator"
code, stored = create(job)
check(f"job with managedBy created ({code})", code == 201)


def update(change):
    """PUT the job with change applied to its latest version (the operator writes its status too)."""
    for _ in range(10):
        c, latest = api("GET", f"{TFJOBS}/immutable")
        change(latest)
        code, body = api("PUT", f"{TFJOBS}/immutable", latest)
        if code != 409:
            return code, body
    return code, body


code, _ = update(lambda j: j["metadata"].update(labels={"team": "a"}))
check(f"an update of a mutable field is allowed ({code})", code == 200)
code, body = update(lambda j: j["spec"]["runPolicy"].update(managedBy="kueue.x-k8s.io/multikueue"))
want = PREFIX + 'spec.runPolicy.managedBy: Invalid value: "kueue.x-k8s.io/multikueue": field is immutable'
check(f"changing managedBy is denied ({code})", code == 403 and body.get("message") == want, body.get("message"))

# ---- hostile clients: idle connections, huge header, garbage, slow loris, slow readers -----------
def timed(fn):
    t = time.time()
    ok = fn()
    return ok, time.time() - t


def admission_ok():
    code, _ = create(load(f"{ROOT}/examples/tfjob-simple.yaml"), "?dryRun=All")
    return code == 201


rss0 = op.rss_kib()
idle = []
for port in (op.ports[1], PORT):
    for _ in range(1000):
        idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
time.sleep(0.5)
ok, t = timed(lambda: op.http("/healthz", 1)[0] == 200)
check(f"2,000 idle connections (health and webhook ports): /healthz in {t * 1000:.0f} ms", ok and t < 1)
ok, t = timed(admission_ok)
check(f"... an admission through the API server in {t * 1000:.0f} ms", ok and t < 1)
big = socket.create_connection(("127.0.0.1", op.ports[1]), timeout=5)
try:
    big.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n")
except OSError:
    pass
try:
    answer = big.recv(100)
except OSError:
    answer = b""
check(f"a 1 MiB header is refused ({answer[:40]!r})", answer.startswith(b"HTTP/1.1 431") or answer == b"")
garbage = []
for i in range(100):
    s = socket.create_connection(("127.0.0.1", (op.ports[0], op.ports[1], PORT)[i % 3]), timeout=5)
    s.sendall(os.urandom(4096))
    garbage.append(s)
slow = [socket.create_connection(("127.0.0.1", op.ports[1]), timeout=5) for _ in range(50)]
readers = []
for _ in range(20):  # many requests pipelined, answers never read
    s = socket.create_connection(("127.0.0.1", op.ports[0]), timeout=5)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 200)
    readers.append(s)
worst = 0
deadline = time.time() + 8
loris_closed_at = None
while time.time() < deadline or loris_closed_at is None and time.time() < deadline + 10:
    for s in slow:
        try:
            s.send(b"G")
        except OSError:
            loris_closed_at = loris_closed_at or time.time()
    ok, t = timed(lambda: op.http("/healthz", 1)[0] == 200 and op.http("/readyz", 1)[0] == 200)
    worst = max(worst, t if ok else 99)
    ok, t = timed(admission_ok)
    worst = max(worst, t if ok else 99)
    time.sleep(1)
rss1 = op.rss_kib()
check(f"under garbage, slow loris and slow readers the probes and the webhook answered, slowest in {worst * 1000:.0f} ms",
      worst < 1)
check("slow-loris connections closed by the whole-request deadline (--http-request-timeout 6s)",
      loris_closed_at is not None)
check(f"RSS bounded: {rss0 // 1024} MiB before, {rss1 // 1024} MiB with 2,170 hostile connections",
      rss1 - rss0 < 128 * 1024, f"{rss0} -> {rss1} KiB")
for s in idle + garbage + slow + readers + [big]:
    s.close()

# ---- rotation while admissions run: none fails -------------------------------------------------------
op.stop()
code, body = create(load(f"{ROOT}/examples/tfjob-simple.yaml"), "?dryRun=All")
msg = body.get("message", "")
check(f"operator stopped: a create is refused (failurePolicy Fail) ({code})",
      code >= 500 and f'failed calling webhook "{WEBHOOK}"' in msg, msg)
print("     " + msg[:300])
c, sec = api("GET", f"/api/v1/namespaces/kubeflow/secrets/{SECRET}")
sec["data"] = {}
c, _ = api("PUT", f"/api/v1/namespaces/kubeflow/secrets/{SECRET}", sec)
check(f"the Secret emptied: the restarted operator must make new certificates ({c})", c == 200)
op = Operator("op2", ["--webhook-cert-hosts", "127.0.0.1", "--webhook-cert-validity", "24s"], PORT)
wait("restarted: /readyz 200 with new 24 s certificates", lambda: op.http("/readyz")[0] == 200, 40)
check("restarted: creates pass again", admission_ok())
fingerprints, failed, tries = set(), [], 0
end = time.time() + 45
while time.time() < end:
    tries += 1
    code, body = create(load(f"{ROOT}/examples/tfjob-simple.yaml"), "?dryRun=All")
    if code != 201:
        failed.append((code, body.get("message")))
    try:
        fingerprints.add(served_fingerprint(PORT))
    except OSError:
        pass
    time.sleep(0.1)
rotations = op.log_count("webhook: serving a new certificate")
check(f"rotation: {len(fingerprints)} certificates served, {op.log_count('CA injected')} CA injections, "
      f"{tries} admissions, {len(failed)} failed", len(fingerprints) >= 3 and rotations >= 3 and not failed, failed[:3])
op.stop()

# ---- --webhook-cert-dir: files served, reloaded when they change ---------------------------------------
cdir = os.path.join(WORK, "certs")
os.makedirs(cdir)


def write_cert(cn):
    key, crt = os.path.join(cdir, "k.tmp"), os.path.join(cdir, "c.tmp")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-days", "1", "-subj", f"/CN={cn}", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key,
                    "-out", crt], check=True, capture_output=True)
    os.replace(key, os.path.join(cdir, "tls.key"))
    os.replace(crt, os.path.join(cdir, "tls.crt"))
    der = subprocess.run(["openssl", "x509", "-outform", "der", "-in", os.path.join(cdir, "tls.crt")],
                         capture_output=True).stdout
    return hashlib.sha256(der).hexdigest()


op = Operator("op3", ["--webhook-cert-dir", cdir], PORT)
time.sleep(1)
code, body = op.http("/readyz")
check(f"cert-dir: /readyz 503 while the directory is empty ({code})", code == 503 and "webhook" in body)
fp1 = write_cert("one")
wait("cert-dir: /readyz 200 once tls.crt and tls.key are there", lambda: op.http("/readyz")[0] == 200, 10)
check("cert-dir: that certificate is served", served_fingerprint(PORT) == fp1)
fp2 = write_cert("two")
wait("cert-dir: a changed certificate is served without a restart", lambda: served_fingerprint(PORT) == fp2, 10)
c, got = api("GET", f"/api/v1/namespaces/kubeflow/secrets/{SECRET}")
check("cert-dir: the Secret is not touched", got["data"]["tls.crt"] != "" and op.log_count("Secret") == 0)
op.stop()
sys.exit(exit_status())
