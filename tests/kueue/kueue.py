"""Kueue's manager as a process on the harness's kube-apiserver (tests/kube/harness.sh), for the
Kueue suite (tests/kueue/scenarios.py):

  - a CA and a serving certificate for 127.0.0.1 made here (openssl); Kueue's internal certificate
    management is off, so it serves the webhooks with that certificate (and reads it as its metrics
    certificate too, from the fixed /etc/kueue/metrics/certs: the caller provides that directory,
    tests/kueue/record.sh does in a private mount namespace);
  - Kueue's own CRDs, from its Go module (config/components/crd/bases), with the conversion webhook
    its kustomization enables (config/components/crd/patches/webhook_in_*.yaml) pointed at
    https://127.0.0.1:PORT/convert with that CA;
  - its Configuration (config.kueue.x-k8s.io/v1beta2): the kubeflow.org/tfjob integration only,
    manageJobsWithoutQueueName false, webhook and health probe on loopback, metrics and the
    visibility server off, no leader election, client limits qps 200 / burst 400 (those the
    operators get: the suite is about behaviour, and Kueue's defaults would hold its events back
    while six scenarios run at once);
  - its real Mutating/ValidatingWebhookConfigurations (config/components/webhook/manifests.yaml),
    registered by URL with that CA once its webhook server is up: those of Kueue's own kinds and of
    TFJobs (the others belong to integrations that are off and would only add calls to a no-op).
Should Kueue exit before it is ready, it is started again (STARTS times in all, as a Deployment
would restart it) and its last logged error printed. Its log is DIR/kueue.log (the previous
start's, kueue.log.previous)."""
import copy
import glob
import json
import os
import socket
import subprocess
import time

import yaml

FRAMEWORK = "kubeflow.org/tfjob"
METRICS_CERTS = "/etc/kueue/metrics/certs"
STARTS = 3  # times Kueue is started before the suite gives up on it


class KueueExited(RuntimeError):
    """Kueue's manager exited before it was ready."""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def make_certs(d):
    """DIR/ca.crt and DIR/tls.crt + tls.key (127.0.0.1), as controller-runtime's webhook server
    reads them from its certDir."""
    os.makedirs(d, exist_ok=True)
    run = lambda *a: subprocess.run(a, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("openssl", "req", "-x509", *ec, "-days", "2", "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.crt",
        "-subj", "/CN=libtfjob-kueue-suite-ca", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    run("openssl", "req", "-new", *ec, "-keyout", f"{d}/tls.key", "-out", f"{d}/tls.csr", "-subj", "/CN=127.0.0.1")
    with open(f"{d}/tls.ext", "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                "extendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1\n")
    run("openssl", "x509", "-req", "-in", f"{d}/tls.csr", "-CA", f"{d}/ca.crt", "-CAkey", f"{d}/ca.key",
        "-CAcreateserial", "-days", "2", "-sha256", "-extfile", f"{d}/tls.ext", "-out", f"{d}/tls.crt")


class Kueue:
    def __init__(self, kube, binary, module_dir, workdir, kubeconfig):
        self.kube, self.binary, self.mod, self.dir = kube, binary, module_dir, workdir
        self.kubeconfig = kubeconfig
        self.port, self.health = free_port(), free_port()
        self.proc = None
        self.certs = os.path.join(workdir, "kueue-certs")
        self.url = f"https://127.0.0.1:{self.port}"

    def ca_bundle(self):
        import base64
        with open(f"{self.certs}/ca.crt", "rb") as f:
            return base64.b64encode(f.read()).decode()

    # --- CRDs

    def _conversion_patched(self):
        """Names of the CRDs whose kustomization patch enables the conversion webhook."""
        with open(f"{self.mod}/config/components/crd/kustomization.yaml") as f:
            k = yaml.safe_load(f)
        names = set()
        for p in k.get("patches") or []:
            if os.path.basename(p["path"]).startswith("webhook_in_"):
                with open(f"{self.mod}/config/components/crd/{p['path']}") as f:
                    names.add(yaml.safe_load(f)["metadata"]["name"])
        return names

    def install_crds(self):
        conv = self._conversion_patched()
        names = []
        for path in sorted(glob.glob(f"{self.mod}/config/components/crd/bases/*.yaml")):
            with open(path) as f:
                crd = yaml.safe_load(f)
            name = crd["metadata"]["name"]
            if name in conv:
                crd["spec"]["conversion"] = {"strategy": "Webhook", "webhook": {
                    "clientConfig": {"url": f"{self.url}/convert", "caBundle": self.ca_bundle()},
                    "conversionReviewVersions": ["v1"]}}
            code, body = self.kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
            if code not in (201, 409):
                raise RuntimeError(f"creating CRD {name}: HTTP {code} {body.get('message')}")
            names.append(name)
        end = time.time() + 60
        for name in names:
            while True:
                code, body = self.kube.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
                if code == 200 and any(c["type"] == "Established" and c["status"] == "True"
                                       for c in (body.get("status") or {}).get("conditions") or []):
                    break
                if time.time() > end:
                    raise RuntimeError(f"CRD {name} not established after 60 s")
                time.sleep(0.2)
            self._wait_discovered(body, end)

    def _wait_discovered(self, crd, end):
        """Waits until API discovery lists every served version of an established CRD: Kueue exits
        at startup when a kind it indexes is not there yet."""
        plural, group = crd["spec"]["names"]["plural"], crd["spec"]["group"]
        for version in (v["name"] for v in crd["spec"]["versions"] if v.get("served")):
            while not self.kube.discovered(group, version, plural):
                if time.time() > end:
                    raise RuntimeError(f"{plural}.{group}/{version} not in API discovery after 60 s")
                time.sleep(0.2)

    # --- the manager

    def write_config(self):
        cfg = {"apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
               "namespace": "kueue-system",
               "manageJobsWithoutQueueName": False,
               "internalCertManagement": {"enable": False},
               "webhook": {"host": "127.0.0.1", "port": self.port, "certDir": self.certs},
               "health": {"healthProbeBindAddress": f"127.0.0.1:{self.health}"},
               "metrics": {"bindAddress": "0"},
               "leaderElection": {"leaderElect": False},
               # as the operators' (tests/kueue/record.sh): this is about behaviour, not speed
               "clientConnection": {"qps": 200, "burst": 400},
               "integrations": {"frameworks": [FRAMEWORK]},
               "featureGates": {"VisibilityOnDemand": False}}
        path = os.path.join(self.dir, "kueue-config.yaml")
        with open(path, "w") as f:
            yaml.safe_dump(cfg, f)
        return path

    def start(self):
        make_certs(self.certs)
        if not os.path.isfile(f"{METRICS_CERTS}/tls.crt"):
            raise RuntimeError(f"{METRICS_CERTS} has no certificate (tests/kueue/record.sh provides it)")
        self.kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": "kueue-system"}})
        self.install_crds()
        config = self.write_config()
        for attempt in range(1, STARTS + 1):
            try:
                self._start_once(config)
                break
            except KueueExited as e:
                # As a Deployment's restart would; the reason is printed, so a cause that repeats
                # shows in the suite's output.
                print(f"kueue exited at startup (attempt {attempt} of {STARTS}): {e}", flush=True)
                if attempt == STARTS:
                    raise
        self.register_webhooks()

    def _start_once(self, config):
        log_path = os.path.join(self.dir, "kueue.log")
        if os.path.exists(log_path):
            os.replace(log_path, log_path + ".previous")
        env = dict(os.environ, KUBECONFIG=self.kubeconfig)
        with open(log_path, "w") as log:
            self.proc = subprocess.Popen([self.binary, f"--config={config}", "--zap-log-level=2"],
                                         stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        self.wait_ready()

    def startup_error(self):
        """The message and error of the last error Kueue logged (its log is JSON lines), else
        the log's last line."""
        last, error = "", ""
        with open(os.path.join(self.dir, "kueue.log"), errors="replace") as f:
            for line in f:
                last = line.strip() or last
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict) and entry.get("level") in ("error", "fatal", "panic"):
                    error = f"{entry.get('msg')}: {entry.get('error')}"
        return error or last[:500]

    def wait_ready(self, timeout=120):
        import http.client
        end = time.time() + timeout
        while time.time() < end:
            if self.proc.poll() is not None:
                raise KueueExited(f"status {self.proc.returncode}, {self.startup_error()} (see kueue.log)")
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.health, timeout=2)
                c.request("GET", "/readyz")
                if c.getresponse().status == 200:
                    return
            except OSError:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"kueue not ready after {timeout} s")

    def register_webhooks(self):
        with open(f"{self.mod}/config/components/webhook/manifests.yaml") as f:
            docs = [d for d in yaml.safe_load_all(f) if d]
        self.webhooks = []
        for doc in docs:
            doc = copy.deepcopy(doc)
            doc["metadata"] = {"name": "kueue-" + doc["metadata"]["name"]}
            kept = []
            for w in doc["webhooks"]:
                res = {(g, r) for rule in w.get("rules") or [] for g in rule.get("apiGroups") or []
                       for r in rule.get("resources") or []}
                if not all(g == "kueue.x-k8s.io" or (g, r) == ("kubeflow.org", "tfjobs") for g, r in res):
                    continue
                path = w["clientConfig"]["service"]["path"]
                w["clientConfig"] = {"url": self.url + path, "caBundle": self.ca_bundle()}
                kept.append(w)
                self.webhooks.append(w["name"])
            doc["webhooks"] = kept
            plural = doc["kind"].lower() + "s"
            code, body = self.kube.request("POST", f"/apis/admissionregistration.k8s.io/v1/{plural}", doc)
            if code != 201:
                raise RuntimeError(f"registering {doc['kind']}: HTTP {code} {body.get('message')}")

    def stop(self):
        if self.proc and self.proc.poll() is None:
            import signal
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def workload_of(kube, ns, job):
    """The Workload Kueue made for TFJob job in namespace ns (owner reference), or None."""
    code, body = kube.get(f"/apis/kueue.x-k8s.io/v1beta2/namespaces/{ns}/workloads")
    for w in body.get("items") or [] if code == 200 else []:
        for r in w["metadata"].get("ownerReferences") or []:
            if r.get("kind") == "TFJob" and r.get("name") == job:
                return w
    return None


def condition(obj, typ):
    """The condition typ of obj's status (a dict), or None."""
    for c in (obj or {}).get("status", {}).get("conditions") or []:
        if c.get("type") == typ:
            return c
    return None


def dump(obj):
    return json.dumps(obj, indent=1, sort_keys=True)
