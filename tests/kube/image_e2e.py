#!/usr/bin/env python3
"""The operator image (scripts/build-image.sh) run as a container would run it, against the
harness's kube-apiserver (tests/kube/harness.sh): its root filesystem unpacked from the OCI archive
(index.json -> manifest -> config and layer, every digest checked), then tfjob-operator from it in
new mount/UTS/IPC/PID namespaces, chrooted, as uid/gid 65532, on a read-only root, with nothing but
the in-cluster configuration: a ServiceAccount token (TokenRequest) and ca.crt mounted at
/var/run/secrets/kubernetes.io/serviceaccount, KUBERNETES_SERVICE_HOST/PORT. The ServiceAccount,
ClusterRole and binding are examples/deploy/rbac.yaml's. No kubelet: this script writes pod status.
Run by tests/suites/47-image.sh:  image_e2e.py ARCHIVE EPOCH WORKDIR
Prints ok/FAIL lines; exit status 1 when anything failed."""
import gzip, hashlib, io, json, os, re, shutil, subprocess, sys, tarfile, time
import yaml
from e2e_lib import RUNNING, URL, api, check, exit_status, http_get, operator_ports, wait

ARCHIVE, EPOCH, WORK = sys.argv[1], int(sys.argv[2]), sys.argv[3]
NS = "image-e2e"
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


CHROOT = shutil.which("chroot") or "/usr/sbin/chroot"
TRUSTED = {"filter": "fully_trusted"} if hasattr(tarfile, "fully_trusted_filter") else {}


def in_root(root, path, depth=0):
    """PATH resolved inside ROOT as the image sees it (absolute link targets are ROOT's)."""
    parts = [p for p in path.split("/") if p]
    cur = ""
    for i, name in enumerate(parts):
        nxt = f"{cur}/{name}"
        full = root + nxt
        if os.path.islink(full) and depth < 40:
            target = os.readlink(full)
            base = target if target.startswith("/") else os.path.normpath(f"{cur or '/'}/{target}")
            rest = "/".join(parts[i + 1:])
            return in_root(root, base + ("/" + rest if rest else ""), depth + 1)
        cur = nxt
    return root + cur


def sha(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- the image, from its archive
layout = os.path.join(WORK, "layout")
with tarfile.open(ARCHIVE) as t:
    names = sorted(t.getnames())
    check("archive: oci-layout, index.json, 3 blobs", names == sorted(
        ["blobs", "blobs/sha256", "oci-layout", "index.json"] +
        [n for n in names if n.startswith("blobs/sha256/")]) and len([n for n in names if n.startswith("blobs/sha256/")]) == 3,
        names)
    t.extractall(layout, **TRUSTED)
check("oci-layout 1.0.0", json.load(open(f"{layout}/oci-layout")) == {"imageLayoutVersion": "1.0.0"})


def blob(desc):
    data = open(f"{layout}/blobs/sha256/{desc['digest'].split(':', 1)[1]}", "rb").read()
    check(f"blob {desc['digest'][:19]}... matches its digest and size ({desc['mediaType']})",
          sha(data) == desc["digest"] and len(data) == desc["size"])
    return data


index = json.load(open(f"{layout}/index.json"))
mdesc = index["manifests"][0]
ref = mdesc.get("annotations", {}).get("org.opencontainers.image.ref.name")
want_version = re.search(r"^\s*version\s*:\s*'([^']+)'", open(os.path.join(REPO, "meson.build")).read(), re.M).group(1)
check(f"index: one manifest named localhost/tfjob-operator:{want_version} ({ref})",
      len(index["manifests"]) == 1 and ref == f"localhost/tfjob-operator:{want_version}")
manifest = json.loads(blob(mdesc))
config = json.loads(blob(manifest["config"]))
check("manifest: one gzip layer", [l["mediaType"] for l in manifest["layers"]] ==
      ["application/vnd.oci.image.layer.v1.tar+gzip"])
layer_gz = blob(manifest["layers"][0])
layer = gzip.decompress(layer_gz)
check("config: the layer's diff_id", config["rootfs"]["diff_ids"] == [sha(layer)])
c = config["config"]
check("config: Entrypoint tfjob-operator, User 65532:65532",
      c.get("Entrypoint") == ["/usr/local/bin/tfjob-operator"] and c.get("User") == "65532:65532", c)
labels = c.get("Labels") or {}
want_labels = ("title", "version", "source", "revision", "created", "licenses")
check("labels and manifest annotations: org.opencontainers.image." + "/".join(want_labels),
      all(labels.get("org.opencontainers.image." + k) for k in want_labels) and
      manifest.get("annotations") == labels and labels["org.opencontainers.image.version"] == want_version, labels)
check("created is SOURCE_DATE_EPOCH", config["created"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(EPOCH)))

root = os.path.join(WORK, "rootfs")
os.makedirs(root)
with tarfile.open(fileobj=io.BytesIO(layer)) as t:
    members = t.getmembers()
    check("layer: entries sorted, owner 0:0, mtime SOURCE_DATE_EPOCH",
          [m.name for m in members] == sorted(m.name for m in members) and
          all(m.uid == 0 and m.gid == 0 and m.mtime == EPOCH and not m.uname and not m.gname for m in members))
    t.extractall(root, numeric_owner=True, **TRUSTED)

# Nothing beyond what the operator, tfjobctl and the in-cluster configuration need.
allowed = [r"etc/(passwd|group|nsswitch\.conf|os-release|ssl/certs/ca-certificates\.crt)",
           r"usr/local/bin/(tfjob-operator|tfjobctl)", r"usr/local/libexec/tfjob/tfjob-supervise",
           r"usr/local/lib/[^/]+/libtfjob\.so\.0(\.\d+\.\d+)?", r"usr/lib/[^/]+/(lib[^/]+|ld-linux[^/]*)\.so[.\d]*",
           r"usr/lib64/ld-linux[^/]*", r"usr/lib/os-release", r"usr/share/doc/[^/]+/copyright",
           r"var/lib/dpkg/status.d/[^/]+", r"lib|lib64"]
files = [m.name for m in members if not m.isdir()]
extra = [f for f in files if not any(re.fullmatch(p, f) for p in allowed)]
check(f"only the listed files ({len(files)} files and links)", not extra, extra)
check("no shell, no package manager", not any(os.path.lexists(os.path.join(root, p))
                                              for p in ("bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/dpkg")))
check("/etc/passwd: nonroot is 65532", "nonroot:x:65532:65532:" in open(f"{root}/etc/passwd").read())

# Every shared object in the image is loaded by one of its programs (the image's own dynamic
# loader lists them, inside the image: no ldd needed).
interp = next(f for f in files if re.search(r"/ld-linux[^/]*\.so[.\d]*$|/ld64\.so[.\d]*$", f))
loaded = set()
for prog in ("/usr/local/bin/tfjob-operator", "/usr/local/bin/tfjobctl", "/usr/local/libexec/tfjob/tfjob-supervise"):
    r = subprocess.run([CHROOT, root, "/" + interp, "--list", prog], env={}, capture_output=True, text=True)
    check(f"{prog}: every library found in the image", r.returncode == 0 and "not found" not in r.stdout, r.stdout + r.stderr)
    for line in r.stdout.splitlines():
        m = re.search(r"(/\S+) \(0x", line)
        if m:
            loaded.add(in_root(root, m.group(1)))
shared = {in_root(root, "/" + f) for f in files if ".so" in os.path.basename(f)}
check(f"every shared object in the image is loaded ({len(shared)})", shared <= loaded, sorted(shared - loaded))

r = subprocess.run([CHROOT, "--userspec=65532:65532", root, "/usr/local/bin/tfjob-operator", "--version"],
                   env={}, capture_output=True, text=True)
check(f"tfjob-operator --version as 65532 with an empty environment ({r.stdout.strip()})",
      r.returncode == 0 and r.stdout == f"tfjob-operator {want_version}\n", r.stderr)
r = subprocess.run([CHROOT, "--userspec=65532:65532", root, "/usr/local/bin/tfjobctl", "--version"],
                   env={}, capture_output=True, text=True)
check(f"tfjobctl --version ({r.stdout.strip()})", r.returncode == 0 and want_version in r.stdout, r.stderr)

# ---------------------------------------------------------------- in-cluster credentials
for ns in ("kubeflow", NS):
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
docs = list(yaml.safe_load_all(open(os.path.join(REPO, "examples/deploy/rbac.yaml"))))
codes = []
for d in docs:
    kind = d["kind"]
    path = {"ServiceAccount": f"/api/v1/namespaces/{d['metadata'].get('namespace')}/serviceaccounts",
            "ClusterRole": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            "ClusterRoleBinding": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"}.get(kind)
    if path:
        codes.append(api("POST", path, d)[0])
check(f"examples/deploy/rbac.yaml: ServiceAccount, ClusterRole, ClusterRoleBinding ({codes})",
      len(codes) == 3 and all(x == 201 for x in codes))
code, tr = api("POST", "/api/v1/namespaces/kubeflow/serviceaccounts/tfjob-operator/token",
               {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}})
token = (tr.get("status") or {}).get("token")
check(f"a token for ServiceAccount kubeflow/tfjob-operator ({code})", code == 201 and token)
sa = os.path.join(WORK, "serviceaccount")
os.makedirs(sa)
open(f"{sa}/token", "w").write(token or "")
shutil.copy(os.environ["KUBE_CA_CERT"], f"{sa}/ca.crt")
open(f"{sa}/namespace", "w").write("kubeflow")
for f in os.listdir(sa):
    os.chmod(f"{sa}/{f}", 0o644)
os.chmod(sa, 0o755)

# Mount points, as a container runtime makes them (the image itself has none).
for d in ("proc", "dev", SA_DIR.lstrip("/")):
    os.makedirs(os.path.join(root, d), exist_ok=True)

# ---------------------------------------------------------------- the container
host, port = re.match(r"https://([^:]+):(\d+)$", URL).groups()
setup = r"""
set -eu
R="$1"; SA="$2"; shift 2
mount --bind "$R" "$R"
mount -t proc -o nosuid,nodev,noexec proc "$R/proc"
mount -t tmpfs -o mode=755,size=64k,nosuid,noexec tmpfs "$R/dev"
for d in null zero random urandom; do touch "$R/dev/$d"; mount --bind "/dev/$d" "$R/dev/$d"; done
mount --bind "$SA" "$R/var/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro "$R/var/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro "$R"
if touch "$R/.writable" 2>/dev/null; then echo "the root filesystem is writable" >&2; exit 1; fi
exec env -i "KUBERNETES_SERVICE_HOST=$HOST" "KUBERNETES_SERVICE_PORT=$PORT" \
  "$CHROOT" --userspec=65532:65532 "$R" "$@"
"""
log_path = os.path.join(WORK, "operator.log")
log = open(log_path, "w")
op = subprocess.Popen(
    ["unshare", "--mount", "--uts", "--ipc", "--pid", "--fork", "--kill-child", "--propagation", "private",
     "sh", "-c", setup, "container", root, sa,
     "/usr/local/bin/tfjob-operator", "--leader-elect", "--leader-election-namespace=kubeflow",
     "--metrics-bind-address=127.0.0.1:0", "--health-probe-bind-address=127.0.0.1:0",
     "--webhook-server-port=0", "--threadiness=2"],
    stdout=log, stderr=log,
    env={"PATH": os.environ["PATH"], "HOST": host, "PORT": port, "CHROOT": CHROOT})
RUNNING.append(op)
ports = operator_ports(log_path, 30)
check("the operator starts in the image and serves its probes", ports is not None, open(log_path).read()[-3000:])
if ports is None:
    sys.exit(exit_status())


def container_pid():
    """The operator's host PID: PID 1 of the new PID namespace, child of unshare."""
    for d in os.listdir("/proc"):
        try:
            if d.isdigit() and re.search(rf"^PPid:\s*{op.pid}$", open(f"/proc/{d}/status").read(), re.M):
                return int(d)
        except OSError:
            pass
    return None


pid = container_pid()
status = open(f"/proc/{pid}/status").read()
ids = {k: v.split() for k, v in re.findall(r"^(Uid|Gid|Groups):\s*(.*)$", status, re.M)}
check(f"runs as uid 65532 gid 65532, no supplementary group ({ids})",
      set(ids["Uid"]) == {"65532"} and set(ids["Gid"]) == {"65532"} and ids.get("Groups", []) in ([], ["65532"]))
check("its root is the image", os.path.realpath(f"/proc/{pid}/root") == os.path.realpath(root))
check("it is PID 1 of its own PID namespace",
      re.search(r"^NSpid:\s*\d+\s+1$", status, re.M) is not None, re.findall(r"^NSpid.*$", status, re.M))
mountinfo = open(f"/proc/{pid}/mountinfo").read().splitlines()
root_mount = [m for m in mountinfo if m.split()[4] == "/"]
check("its root is mounted read-only", root_mount and " ro," in " " + root_mount[-1].split()[5] + ",", root_mount)
env = open(f"/proc/{pid}/environ").read().split("\0")
check("its environment: KUBERNETES_SERVICE_HOST/PORT only",
      sorted(e for e in env if e) == sorted([f"KUBERNETES_SERVICE_HOST={host}", f"KUBERNETES_SERVICE_PORT={port}"]), env)
started = [json.loads(line) for line in open(log_path) if "starting tfjob-operator" in line]
check(f"in-cluster configuration: server {URL}", started and started[0].get("server") == URL, started)
wait("/readyz 200", lambda: http_get(ports[1], "/readyz")[0] == 200, 60)
wait("leader (Lease kubeflow/1ca428e5.training-operator.kubeflow.org)",
     lambda: api("GET", "/apis/coordination.k8s.io/v1/namespaces/kubeflow/leases/"
                 "1ca428e5.training-operator.kubeflow.org")[0] == 200, 60)

# ---------------------------------------------------------------- a TFJob through to Succeeded
spec = {"restartPolicy": "Never", "template": {"spec": {"containers": [
    {"name": "tensorflow", "image": "tensorflow/tensorflow:2.15.0"}]}}}
job = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "mnist", "namespace": NS},
       "spec": {"runPolicy": {"cleanPodPolicy": "None"},
                "tfReplicaSpecs": {"PS": dict(spec, replicas=1), "Worker": dict(spec, replicas=2)}}}
code, _ = api("POST", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs", job)
check(f"create TFJob {NS}/mnist ({code})", code == 201)


def children(kind):
    c, body = api("GET", f"/api/v1/namespaces/{NS}/{kind}?labelSelector=training.kubeflow.org/job-name=mnist")
    return sorted(i["metadata"]["name"] for i in body.get("items", []))


def condition(typ):
    c, j = api("GET", f"/apis/kubeflow.org/v1/namespaces/{NS}/tfjobs/mnist")
    for cond in (j.get("status") or {}).get("conditions") or []:
        if cond.get("type") == typ:
            return cond.get("status")
    return None


def kubelet(pod, phase, code=None):
    for _ in range(50):
        c, p = api("GET", f"/api/v1/namespaces/{NS}/pods/{pod}")
        if c == 200:
            state = {"terminated": {"exitCode": code, "reason": "Completed"}} if code is not None else {"running": {}}
            p["status"] = {"phase": phase, "containerStatuses": [
                {"name": "tensorflow", "image": "tf", "imageID": "", "ready": phase == "Running",
                 "restartCount": 0, "state": state}]}
            if api("PUT", f"/api/v1/namespaces/{NS}/pods/{pod}/status", p)[0] == 200:
                return
        time.sleep(0.1)
    check(f"set status of pod {pod}", False)


pods = ["mnist-ps-0", "mnist-worker-0", "mnist-worker-1"]
wait("the operator created 3 pods and 3 services", lambda: children("pods") == pods and children("services") == pods)
wait("mnist: Created", lambda: condition("Created") == "True")
for p in pods:
    kubelet(p, "Running")
wait("mnist: Running", lambda: condition("Running") == "True")
for p in pods[1:]:
    kubelet(p, "Succeeded", 0)
wait("mnist: Succeeded once the workers succeed", lambda: condition("Succeeded") == "True")

# ---------------------------------------------------------------- stop
# As a kubelet would: SIGTERM to the container's PID 1.
os.kill(container_pid(), 15)
try:
    rc = op.wait(timeout=30)
except subprocess.TimeoutExpired:
    op.kill()
    rc = None
check(f"SIGTERM: the operator stops cleanly ({rc})", rc == 0, open(log_path).read()[-2000:])
errors = [line for line in open(log_path) if '"level":"error"' in line]
check("no error in its log", not errors, errors[:5])
sys.exit(exit_status())
