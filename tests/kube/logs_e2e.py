#!/usr/bin/env python3
"""`tfjobctl logs JOB REPLICA` against the real kube-apiserver of tests/kube/harness.sh.

There is no kubelet: tests/kube/fake_kubelet.py serves the kubelet's /containerLogs endpoint over
HTTPS, a Node names it (address 127.0.0.1, daemonEndpoints.kubeletEndpoint.Port), and pods of a
TFJob are bound to that node, so kube-apiserver's pods/NAME/log goes the way it goes in a cluster:
tfjobctl -> API server -> kubelet. Run by tests/suites/63-transport-kube.sh with TFJOBCTL set."""
import json
import os
import subprocess
import sys
import tempfile
import time

from e2e_lib import RUNNING, api, check

HERE = os.path.dirname(os.path.abspath(__file__))
CTL = os.environ["TFJOBCTL"]
KUBECONFIG = os.environ["KUBE_ADMIN_KUBECONFIG"]
NS = "kubeflow"
JOB = "logs-job"
NODE = "logs-node"


def ctl(*args, timeout=60):
    p = subprocess.run([CTL] + list(args) + ["--kubeconfig", KUBECONFIG], capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


tmp = tempfile.mkdtemp(prefix="tfjob-logs-e2e-")
cert, key = os.path.join(tmp, "kubelet.crt"), os.path.join(tmp, "kubelet.key")
subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                "-days", "1", "-keyout", key, "-out", cert, "-subj", "/CN=" + NODE,
                "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
logs = {
    "%s/%s-worker-0/tensorflow" % (NS, JOB): {"current": ["w0 step %d" % i for i in range(1, 6)]},
    "%s/%s-worker-1/tensorflow" % (NS, JOB): {"current": ["w1 step 1", "w1 step 2"],
                                              "previous": ["w1 crashed: exit 137"]},
}
logs_file, requests = os.path.join(tmp, "logs.json"), os.path.join(tmp, "requests.jsonl")
with open(logs_file, "w") as f:
    json.dump(logs, f)
port_file = os.path.join(tmp, "port")
kubelet = subprocess.Popen([sys.executable, os.path.join(HERE, "fake_kubelet.py"), "--port-file", port_file,
                            "--cert", cert, "--key", key, "--logs", logs_file, "--requests", requests])
RUNNING.append(kubelet)
for _ in range(250):
    if os.path.exists(port_file):
        break
    time.sleep(0.02)
port = int(open(port_file).read())

node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE},
        "status": {"addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
                   "daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}}
code, body = api("POST", "/api/v1/nodes", node)
check("a Node for the stand-in kubelet (%d)" % code, code == 201, body)
code, body = api("PATCH", "/api/v1/nodes/%s/status" % NODE, {"status": node["status"]},
                 "application/merge-patch+json")
check("its status names the kubelet's port (%d)" % code, code == 200 and
      body.get("status", {}).get("daemonEndpoints", {}).get("kubeletEndpoint", {}).get("Port") == port, body)

job_yaml = os.path.join(tmp, "job.yaml")
with open(job_yaml, "w") as f:
    f.write("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: %s, namespace: %s}\nspec:\n"
            "  tfReplicaSpecs:\n    Worker:\n      replicas: 2\n      template:\n        spec:\n"
            "          containers: [{name: tensorflow, image: tf}]\n" % (JOB, NS))
rc, out, err = ctl("-n", NS, "apply", "-f", job_yaml)  # global flags before the command, as kubectl
check("apply the TFJob with -n before the command", rc == 0 and "created" in out, out + err)
for i in range(2):
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "%s-worker-%d" % (JOB, i), "namespace": NS,
                        "labels": {"training.kubeflow.org/job-name": JOB,
                                   "training.kubeflow.org/replica-type": "worker",
                                   "training.kubeflow.org/replica-index": str(i)}},
           "spec": {"nodeName": NODE, "containers": [{"name": "tensorflow", "image": "tf"},
                                                     {"name": "sidecar", "image": "log"}]}}
    code, body = api("POST", "/api/v1/namespaces/%s/pods" % NS, pod)
    check("pod %s bound to the node (%d)" % (pod["metadata"]["name"], code), code == 201, body)

rc, out, err = ctl("logs", JOB, "worker-0", "-n", NS)
check("logs JOB worker-0: through the API server and the kubelet", rc == 0 and
      out == "".join("w0 step %d\n" % i for i in range(1, 6)), (rc, out, err))
rc, out, err = ctl("logs", JOB, "worker-0", "-n", NS, "--tail", "2", "--timestamps")
check("--tail 2 --timestamps", rc == 0 and out.splitlines() == ["2026-01-01T00:00:03.000000000Z w0 step 4",
                                                                 "2026-01-01T00:00:04.000000000Z w0 step 5"],
      (rc, out, err))
last = json.loads(open(requests).read().splitlines()[-1])
check("the kubelet got the container and the options", last["path"] == "/containerLogs/%s/%s-worker-0/tensorflow"
      % (NS, JOB) and last["query"].get("tailLines") == "2" and last["query"].get("timestamps") == "true", last)
rc, out, err = ctl("logs", JOB, "worker-1", "-n", NS, "--previous")
check("--previous: the log before the restart", rc == 0 and out == "w1 crashed: exit 137\n", (rc, out, err))
rc, out, err = ctl("logs", JOB, "--all", "-n", NS)
check("--all: every pod, prefixed, in name order", rc == 0 and out.splitlines() ==
      ["[pod/%s-worker-0/tensorflow] w0 step %d" % (JOB, i) for i in range(1, 6)] +
      ["[pod/%s-worker-1/tensorflow] w1 step 1" % JOB, "[pod/%s-worker-1/tensorflow] w1 step 2" % JOB],
      (rc, out, err))
start = time.time()
rc, out, err = ctl("logs", JOB, "--all", "-f", "-n", NS)
took = time.time() - start
lines = out.splitlines()
check("-f --all: both streams followed at once, to the containers' end (%.1f s)" % took, rc == 0 and
      sorted(lines) == sorted(["[pod/%s-worker-0/tensorflow] w0 step %d" % (JOB, i) for i in range(1, 6)] +
                              ["[pod/%s-worker-1/tensorflow] w1 step %d" % (JOB, i) for i in (1, 2)]) and
      took < 5 * 0.2 + 2 * 0.2 - 0.1 + 3, (rc, out, err, took))
check("-f asked the kubelet to follow", any(json.loads(l)["query"].get("follow") == "true"
                                            for l in open(requests).read().splitlines()))
rc, out, err = ctl("logs", JOB, "worker-0", "-c", "nope", "-n", NS)
check("an unknown container: the API server's 400, exit 1", rc == 1 and "Error from server (BadRequest)" in err and
      "nope" in err, (rc, out, err))
rc, out, err = ctl("logs", JOB, "worker-7", "-n", NS)
check("no such replica: exit 1, said so", rc == 1 and "has no pod worker-7" in err, (rc, out, err))
rc, out, err = ctl("logs", "nope", "worker-0", "-n", NS)
check("no such TFJob: NotFound, exit 1", rc == 1 and 'tfjobs.kubeflow.org "nope" not found' in err, (rc, out, err))

for i in range(2):
    api("DELETE", "/api/v1/namespaces/%s/pods/%s-worker-%d" % (NS, JOB, i), {"gracePeriodSeconds": 0})
api("DELETE", "/api/v1/nodes/" + NODE)
ctl("delete", JOB, "-n", NS)
kubelet.terminate()
kubelet.wait()
subprocess.run(["rm", "-rf", tmp])
from e2e_lib import failures  # noqa: E402  (the count after the checks)
sys.exit(1 if failures else 0)
