#!/usr/bin/env python3
"""`tfjobctl diagnose JOB` against the real kube-apiserver of tests/kube/harness.sh: each step made
to fail in turn with real objects (no operator: no Lease; a Lease but no status; no pods with a
FailedCreatePod Event; a pod the scheduler could not place; a container that cannot pull its
image), then all well. Run by tests/suites/63-transport-kube.sh with TFJOBCTL set."""
import os
import subprocess
import sys
import tempfile
import time

from e2e_lib import api, check

CTL = os.environ["TFJOBCTL"]
KUBECONFIG = os.environ["KUBE_ADMIN_KUBECONFIG"]
NS = "kubeflow"
JOB = "diag"
LEASE = "1ca428e5.training-operator.kubeflow.org"


def diagnose():
    p = subprocess.run([CTL, "--kubeconfig", KUBECONFIG, "-n", NS, "diagnose", JOB], capture_output=True, text=True,
                       timeout=60)
    return p.returncode, p.stdout, p.stderr


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())


tmp = tempfile.mkdtemp(prefix="tfjob-diag-e2e-")
with open(os.path.join(tmp, "job.yaml"), "w") as f:
    f.write("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: %s}\nspec:\n  tfReplicaSpecs:\n"
            "    Worker:\n      replicas: 1\n      template:\n        spec:\n"
            "          containers: [{name: tensorflow, image: tf}]\n" % JOB)
subprocess.run([CTL, "apply", "-f", os.path.join(tmp, "job.yaml"), "-n", NS, "--kubeconfig", KUBECONFIG], check=True,
               capture_output=True)

rc, out, err = diagnose()
check("diagnose, no operator: the controller step fails (no Lease), exit 1", rc == 1 and
      "[FAIL] controller  no leader Lease " + LEASE in out and "Result: the step that fails is controller" in out,
      out + err)

lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": LEASE, "namespace": NS},
         "spec": {"holderIdentity": "tfjob-operator-0_abc", "leaseDurationSeconds": 15, "renewTime": now()}}
code, body = api("POST", "/apis/coordination.k8s.io/v1/namespaces/%s/leases" % NS, lease)
check("a leader Lease (%d)" % code, code == 201, body)
rc, out, err = diagnose()
check("a live Lease: who holds it; no status: the status step fails", rc == 1 and
      "[ok]   controller  the leader Lease %s/%s is held by tfjob-operator-0_abc" % (NS, LEASE) in out and
      "[FAIL] status      none" in out, out + err)

status = {"status": {"conditions": [{"type": "Created", "status": "True", "reason": "TFJobCreated", "message": "c",
                                     "lastTransitionTime": "2026-01-01T00:00:00Z", "lastUpdateTime": "2026-01-01T00:00:00Z"}],
                     "replicaStatuses": {"Worker": {}}}}
code, body = api("PATCH", "/apis/kubeflow.org/v1/namespaces/%s/tfjobs/%s/status" % (NS, JOB), status,
                 "application/merge-patch+json")
check("a status as the operator writes it (%d)" % code, code == 200, body)
code, body = api("POST", "/api/v1/namespaces/%s/events" % NS, {
    "apiVersion": "v1", "kind": "Event", "metadata": {"name": "diag.1", "namespace": NS},
    "involvedObject": {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": JOB, "namespace": NS},
    "type": "Warning", "reason": "FailedCreatePod", "count": 2, "source": {"component": "tfjob-controller"},
    "message": 'Error creating: pods "diag-worker-0" is forbidden: exceeded quota: compute'})
check("a FailedCreatePod Event (%d)" % code, code == 201, body)
rc, out, err = diagnose()
check("no pods: the pods step fails with the job's Warning Event", rc == 1 and
      "[FAIL] pods        0 of 1 created" in out and
      'Event FailedCreatePod TFJob/diag: Error creating: pods "diag-worker-0" is forbidden: exceeded quota: compute (x2)'
      in out, out + err)

pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": JOB + "-worker-0", "namespace": NS,
                    "labels": {"training.kubeflow.org/job-name": JOB, "training.kubeflow.org/replica-type": "worker",
                               "training.kubeflow.org/replica-index": "0"}},
       "spec": {"containers": [{"name": "tensorflow", "image": "tf:nope"}]}}
code, body = api("POST", "/api/v1/namespaces/%s/pods" % NS, pod)
check("the pod (%d)" % code, code == 201, body)
pod_status = "/api/v1/namespaces/%s/pods/%s-worker-0/status" % (NS, JOB)
code, body = api("PATCH", pod_status, {"status": {"phase": "Pending", "conditions": [
    {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
     "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu."}]}}, "application/merge-patch+json")
check("the scheduler's verdict (%d)" % code, code == 200, body)
rc, out, err = diagnose()
check("unschedulable: the scheduling step fails with the scheduler's message", rc == 1 and
      "[FAIL] scheduling  pod diag-worker-0 is not scheduled: Unschedulable: 0/4 nodes are available: "
      "4 Insufficient nvidia.com/gpu." in out, out + err)

code, body = api("POST", "/api/v1/namespaces/%s/pods/%s-worker-0/binding" % (NS, JOB),
                 {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": JOB + "-worker-0"},
                  "target": {"apiVersion": "v1", "kind": "Node", "name": "diag-node"}})
check("bound to a node (%d)" % code, code == 201, body)
code, body = api("PATCH", pod_status, {"status": {"phase": "Pending", "conditions": [
    {"type": "PodScheduled", "status": "True"}], "containerStatuses": [
    {"name": "tensorflow", "image": "tf:nope", "imageID": "", "ready": False, "restartCount": 0,
     "state": {"waiting": {"reason": "ImagePullBackOff", "message": 'Back-off pulling image "tf:nope"'}}}]}},
                 "application/merge-patch+json")
check("the kubelet's report (%d)" % code, code == 200, body)
rc, out, err = diagnose()
check("an image that cannot be pulled: the containers step fails", rc == 1 and
      '[FAIL] containers  pod diag-worker-0: container tensorflow is waiting: ImagePullBackOff: Back-off pulling image '
      '"tf:nope"' in out, out + err)

# watch's view of the same objects: the pod's state, the Events of the job and of its pod (by the
# API server's own field selectors), the conditions; --timeout ends it (exit 1).
code, body = api("POST", "/api/v1/namespaces/%s/events" % NS, {
    "apiVersion": "v1", "kind": "Event", "metadata": {"name": "diag.2", "namespace": NS},
    "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": JOB + "-worker-0", "namespace": NS},
    "type": "Warning", "reason": "Failed", "count": 1, "source": {"component": "kubelet"},
    "message": 'Failed to pull image "tf:nope": not found'})
p = subprocess.run([CTL, "--kubeconfig", KUBECONFIG, "-n", NS, "watch", JOB, "--timeout", "3"], capture_output=True,
                   text=True, timeout=60)
check("watch: the pod's waiting reason, the job's and the pod's Events, the conditions; exit 1 at --timeout",
      p.returncode == 1 and "did not finish" in p.stderr and
      ' pod diag-worker-0: Pending (ImagePullBackOff: Back-off pulling image "tf:nope")' in p.stdout and
      " Warning FailedCreatePod      TFJob/diag: Error creating: " in p.stdout and
      ' Warning Failed               Pod/diag-worker-0: Failed to pull image "tf:nope": not found' in p.stdout and
      "\nTFJob diag still Created\n" in p.stdout and
      " condition Created=True TFJobCreated: c" in p.stdout and
      " replicas Worker: 0 of 1 active, 0 succeeded, 0 failed" in p.stdout, p.stdout + p.stderr)

code, body = api("PATCH", pod_status, {"status": {"phase": "Running", "containerStatuses": [
    {"name": "tensorflow", "image": "tf:nope", "imageID": "", "ready": True, "restartCount": 0,
     "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}}, "application/merge-patch+json")
rc, out, err = diagnose()
check("all well: no step fails, exit 0", rc == 0 and "Result: no step fails" in out, out + err)

# A job another controller manages: get explains its empty STATE, describe and diagnose say who runs it.
with open(os.path.join(tmp, "managed.yaml"), "w") as f:
    f.write("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: managed}\nspec:\n"
            "  runPolicy: {managedBy: kueue.x-k8s.io/multikueue, cleanPodPolicy: None}\n  tfReplicaSpecs:\n"
            "    Worker:\n      replicas: 1\n      template:\n        spec:\n"
            "          containers: [{name: tensorflow, image: tf}]\n")
base = [CTL, "--kubeconfig", KUBECONFIG, "-n", NS]
subprocess.run(base + ["apply", "-f", os.path.join(tmp, "managed.yaml")], check=True, capture_output=True)
p = subprocess.run(base + ["get", "managed"], capture_output=True, text=True)
check("get: a note explains the empty STATE of a job managed by another controller", p.returncode == 0 and
      "Note: tfjob/managed is managed by kueue.x-k8s.io/multikueue (spec.runPolicy.managedBy)" in p.stderr,
      p.stdout + p.stderr)
p = subprocess.run(base + ["get", "managed", "-o", "wide"], capture_output=True, text=True)
check("get -o wide: MANAGED-BY", p.stdout.splitlines()[0].split()[-1] == "MANAGED-BY" and
      p.stdout.splitlines()[1].split()[-1] == "kueue.x-k8s.io/multikueue", p.stdout + p.stderr)
p = subprocess.run(base + ["describe", "managed"], capture_output=True, text=True)
check("describe: kubectl-style Run Policy and a Managed By line under Status", p.returncode == 0 and
      "  Run Policy:\n    Clean Pod Policy:  None\n    Managed By:        kueue.x-k8s.io/multikueue\n" in p.stdout and
      "Status:\n  Managed By:  kueue.x-k8s.io/multikueue (spec.runPolicy.managedBy)" in p.stdout, p.stdout + p.stderr)
p = subprocess.run(base + ["diagnose", "managed"], capture_output=True, text=True)
check("diagnose: that controller runs it, exit 0", p.returncode == 0 and
      "[note] controller  runPolicy.managedBy is kueue.x-k8s.io/multikueue" in p.stdout, p.stdout + p.stderr)
subprocess.run(base + ["delete", "managed"], capture_output=True)

api("DELETE", "/api/v1/namespaces/%s/pods/%s-worker-0" % (NS, JOB), {"gracePeriodSeconds": 0})
api("DELETE", "/apis/coordination.k8s.io/v1/namespaces/%s/leases/%s" % (NS, LEASE))
api("DELETE", "/apis/kubeflow.org/v1/namespaces/%s/tfjobs/%s" % (NS, JOB))
subprocess.run(["rm", "-rf", tmp])
from e2e_lib import failures  # noqa: E402  (the count after the checks)
sys.exit(1 if failures else 0)
