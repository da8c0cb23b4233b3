#!/usr/bin/env python3
"""The Kubeflow Training Python SDK session (docs/testing-kube.md, "Kubeflow Training SDK"): every
TrainingClient method that applies to TFJobs, run as a user would, against whichever operator runs
on the harness's API server, with the stand-in kubelet (tests/h2h/kubelet.py) in place of
TensorFlow containers.

  session.py --out FILE [--only NAME,...] -- OPERATOR ARGV...

Runs under the SDK's own Python (the suite's venv: kubeflow-training and its pinned kubernetes
client). The scenarios run at the same time, each in its own namespace; the gang scenario needs
the operator started with a gang scheduler, so it runs after the others, with the operator
restarted with that flag (started and stopped as tests/h2h/scenarios.py does). FILE gets one JSON object: per scenario,
the list of what each SDK call returned or raised, normalised (no uids, resourceVersions or times:
a time is recorded as set or not). Exit status 1 when a scenario could not run to its end (its
error is in FILE too).

A node `h2h-node` is registered whose kubelet endpoint is a small HTTPS server of this script
(LogServer): kube-apiserver proxies `pods/log` to it, so get_job_logs reads the log each stand-in
container "wrote" (a line naming the pod, the container and its phase)."""
import argparse
import datetime
import fnmatch
import http.server
import json
import os
import re
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "h2h"))
import scenarios as h2h  # noqa: E402  (wait_ready, stop_operator, install_podgroup_crd, USER)
from kubeclient import Kube  # noqa: E402
from kubelet import NODE, StandIn  # noqa: E402

from kubernetes.client import (V1Container, V1DeleteOptions, V1ObjectMeta, V1PodSpec,  # noqa: E402
                               V1PodTemplateSpec, V1ResourceRequirements)
from kubeflow.training import (KubeflowOrgV1ReplicaSpec, KubeflowOrgV1RunPolicy,  # noqa: E402
                               KubeflowOrgV1SchedulingPolicy, KubeflowOrgV1TFJob,
                               KubeflowOrgV1TFJobSpec, TrainingClient)
from kubeflow.training.constants import constants  # noqa: E402

GANG_FLAGS = ["--gang-scheduler-name", "scheduler-plugins-scheduler"]
POLL = 1            # the SDK's polling interval in wait_for_job_conditions (its default is 15 s)
WAIT = 90           # wait_timeout of every wait_for_job_conditions that must succeed
SETTLE_SECONDS = 3.0
TIME_KEYS = {"creationTimestamp", "lastTransitionTime", "lastUpdateTime", "startTime", "completionTime",
             "lastReconcileTime", "startedAt", "finishedAt"}
DROP_KEYS = {"uid", "resourceVersion", "managedFields", "podIP", "podIPs"}


# --- the stand-in kubelet's log endpoint

class LogServer(threading.Thread):
    """HTTPS on 127.0.0.1 answering kube-apiserver's GET /containerLogs/NS/POD/CONTAINER with one
    line; the node object `h2h-node` points at it (kubeletEndpoint)."""

    def __init__(self, kube):
        super().__init__(daemon=True)
        self.kube = kube
        d = tempfile.mkdtemp(prefix="sdk-kubelet-")
        crt, key = os.path.join(d, "tls.crt"), os.path.join(d, "tls.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "2", "-keyout", key, "-out", crt, "-subj", f"/CN={NODE}",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                parts = self.path.split("?")[0].strip("/").split("/")
                if len(parts) != 4 or parts[0] != "containerLogs":
                    self.send_error(404)
                    return
                _, ns, pod, container = parts
                code, p = server.kube.get(f"/api/v1/namespaces/{ns}/pods/{pod}")
                phase = (p.get("status") or {}).get("phase", "?") if code == 200 else "gone"
                body = f"stand-in {container} of {pod}: {phase}\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(crt, key)
        self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.start()
        self.register_node()

    def run(self):
        self.httpd.serve_forever()

    def register_node(self):
        code, body = self.kube.request("POST", "/api/v1/nodes", {"metadata": {"name": NODE}})
        if code not in (201, 409):
            raise RuntimeError(f"creating node {NODE}: HTTP {code} {body}")
        code, body = self.kube.request("PATCH", f"/api/v1/nodes/{NODE}/status", {"status": {
            "addresses": [{"type": "InternalIP", "address": "127.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}},
            "conditions": [{"type": "Ready", "status": "True", "reason": "StandIn",
                            "lastHeartbeatTime": now(), "lastTransitionTime": now()}]}},
            "application/merge-patch+json")
        if code != 200:
            raise RuntimeError(f"writing node {NODE}'s status: HTTP {code} {body}")

    def close(self):
        self.httpd.shutdown()


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# --- normalising what the SDK returns

def plain(obj):
    """A model object (or list / dict of them) as the JSON the API server sent, without uids,
    resourceVersions, IPs and managed fields; times become "set"."""
    def walk(x):
        if isinstance(x, dict):
            return {k: ("set" if k in TIME_KEYS and v is not None else walk(v))
                    for k, v in sorted(x.items()) if k not in DROP_KEYS and v is not None}
        if isinstance(x, list):
            return [walk(v) for v in x]
        return x
    return walk(CLIENT.api_client.sanitize_for_serialization(obj))


def show_job(job):
    j = plain(job)
    meta = j.get("metadata") or {}
    return {"metadata": {k: meta[k] for k in ("name", "namespace", "labels", "annotations", "generation")
                         if k in meta},
            "spec": j.get("spec"), "status": j.get("status")}


def show_pods(pods):
    out = []
    for p in plain(pods):
        s = p.get("spec") or {}
        out.append({"name": p["metadata"]["name"], "labels": p["metadata"].get("labels"),
                    "phase": (p.get("status") or {}).get("phase"), "restartPolicy": s.get("restartPolicy"),
                    "schedulerName": s.get("schedulerName"),
                    "deleting": "deletionTimestamp" in p["metadata"]})
    return sorted(out, key=lambda p: p["name"])


def show_conditions(conds):
    return [{k: c.get(k) for k in ("type", "status", "reason", "message")} for c in plain(conds)]


def show_events(events):
    """get_job_logs(verbose=True)'s events ({"kind/name": ["TIME MESSAGE", ...]}, in the order the
    API server listed the Event objects: by name): per key, the distinct messages (sorted: how
    often an event repeats depends on the number of reconciles, and v1.9 counts a repeat in one
    Event where tfjob-operator writes another) and whether the list is in the order of the events'
    times ("chronological"; client-go names an Event after its object and the time it was
    recorded, so a user reading the list reads a history)."""
    out = {}
    for k, v in sorted(events.items()):
        times = [" ".join(m.split(" ", 2)[:2]) for m in v]
        out[k] = {"messages": sorted({m.split(" ", 2)[2] if m.count(" ") >= 2 else "" for m in v}),
                  "chronological": times == sorted(times)}
    return out


def show_error(e):
    """An exception the SDK raised: its class and the first line of its message, without the
    HTTP response's headers (dates, audit ids)."""
    msg = re.sub(r"datetime\.datetime\((?:[^()]|\([^()]*\))*\)", "TIME", str(e).split("\n")[0])
    return {"raised": type(e).__name__, "message": msg}


# --- the scenarios

CLIENT = None  # TrainingClient(job_kind=TFJob), shared: its methods are thread-safe (one pool)


class Session:
    def __init__(self, name, fn):
        self.name, self.fn = name, fn
        self.ns = f"sdk-{name}"
        self.record = []
        self.error = None
        self.kubelet = None

    def log(self, call, result):
        self.record.append({"call": call, "result": result})

    def call(self, what, fn, show=lambda r: r):
        """Call the SDK, record what it returned (through show) or raised; returns the raw result
        (None when it raised)."""
        try:
            r = fn()
        except Exception as e:  # the SDK's errors are part of what is compared
            self.log(what, show_error(e))
            return None
        self.log(what, show(r))
        return r

    def settled(self, name, timeout=60):
        """(job, pods) once the job and its pods, as the SDK shows them, have not changed for
        SETTLE_SECONDS and no pod is terminating."""
        last, since, end = None, time.time(), time.time() + timeout
        while True:
            s = (show_job(CLIENT.get_job(name, self.ns)), show_pods(CLIENT.get_job_pods(name, self.ns)))
            if s != last:
                last, since = s, time.time()
            elif time.time() - since >= SETTLE_SECONDS and not any(p["deleting"] for p in s[1]) \
                    and not self.kubelet.busy():
                return s
            if time.time() > end:
                return s
            time.sleep(0.5)

    def snapshot(self, what, name):
        job, pods = self.settled(name)
        self.log(what, {"job": job, "pods": pods})

    def wait(self, name, conditions=None, **kw):
        """wait_for_job_conditions, recorded; raises what it raised."""
        args = {"expected_conditions": set(conditions)} if conditions else {}
        what = f"wait_for_job_conditions({name}, {sorted(conditions) if conditions else 'default'})"
        try:
            job = CLIENT.wait_for_job_conditions(name, self.ns, polling_interval=POLL,
                                                 wait_timeout=kw.get("wait_timeout", WAIT), **args)
        except Exception as e:
            self.log(what, show_error(e))
            raise
        self.log(what, {"conditions": show_conditions(job.status.conditions)})
        return job

    def wait_pods(self, pattern, phase, timeout=60):
        ok = self.kubelet.wait_for(lambda pods: any(
            fnmatch.fnmatch(p["metadata"]["name"], pattern) and (p.get("status") or {}).get("phase") == phase
            and not p["metadata"].get("deletionTimestamp") for p in pods), timeout)
        if not ok:
            raise RuntimeError(f"no pod {pattern} {phase} within {timeout} s")

    def states(self, name, job):
        """The five is_job_* of the SDK on job, and get_job_conditions."""
        self.log(f"is_job_*({name})", {
            k: getattr(CLIENT, f"is_job_{k}")(job=job) for k in ("created", "running", "restarting", "succeeded",
                                                                 "failed")})
        self.call(f"get_job_conditions({name})", lambda: CLIENT.get_job_conditions(job=job), show_conditions)

    def run(self, schedule=True):
        try:
            code, body = h2h.USER.request("POST", "/api/v1/namespaces", {"metadata": {"name": self.ns}})
            if code != 201:
                raise RuntimeError(f"creating namespace {self.ns}: HTTP {code} {body}")
            self.kubelet = StandIn(self.ns, schedule=schedule, kube=Kube("h2h-kubelet"))
            self.fn(self)
        except Exception as e:
            self.error = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        finally:
            if self.kubelet:
                self.kubelet.close()


def tf_container(**kw):
    return V1Container(name="tensorflow", image="tensorflow/tensorflow:2.15.0",
                       command=["python", "/opt/train.py"], **kw)


def tfjob(ns, name, replicas, policy=None):
    """A TFJob built from the SDK's models, as its e2e test builds one."""
    return KubeflowOrgV1TFJob(
        api_version=constants.API_VERSION, kind=constants.TFJOB_KIND,
        metadata=V1ObjectMeta(name=name, namespace=ns),
        spec=KubeflowOrgV1TFJobSpec(run_policy=policy or KubeflowOrgV1RunPolicy(clean_pod_policy="None"),
                                    tf_replica_specs=replicas))


def worker_spec(replicas=1, restart="Never", scheduler=None):
    return KubeflowOrgV1ReplicaSpec(
        replicas=replicas, restart_policy=restart,
        template=V1PodTemplateSpec(
            metadata=V1ObjectMeta(annotations={constants.ISTIO_SIDECAR_INJECTION: "false"}),
            spec=V1PodSpec(containers=[tf_container(resources=V1ResourceRequirements(
                limits={"memory": "4Gi", "cpu": "1.6"}))], scheduler_name=scheduler)))


def verify_succeeded(s, name):
    """What the upstream e2e test checks of a finished job: at least two conditions, Created and
    Succeeded, not Running, Restarting or Failed."""
    job = s.wait(name)
    conds = CLIENT.get_job_conditions(job=job)
    if len(conds) < 2:
        raise RuntimeError(f"{name}: fewer than 2 conditions: {show_conditions(conds)}")
    if not (CLIENT.is_job_created(job=job) and CLIENT.is_job_succeeded(job=job)) or CLIENT.is_job_running(job=job) \
            or CLIENT.is_job_restarting(job=job) or CLIENT.is_job_failed(job=job):
        raise RuntimeError(f"{name}: should be Created and Succeeded only: {show_conditions(conds)}")
    s.states(name, job)
    return job


def job_results(s, name):
    """The upstream test's print_job_results: the job, its pod names, its logs (and events)."""
    s.call(f"get_job({name})", lambda: CLIENT.get_job(name, s.ns), show_job)
    s.call(f"get_job_pod_names({name})", lambda: sorted(CLIENT.get_job_pod_names(name, s.ns)))
    s.call(f"get_job_logs({name}, verbose=True)", lambda: CLIENT.get_job_logs(name, s.ns, verbose=True),
           lambda r: {"logs": dict(sorted(r[0].items())), "events": show_events(r[1])})


def scenario_e2e(s):
    """The upstream e2e test's test_sdk_e2e: one worker (Never), cleanPodPolicy None, created from
    the SDK's models; it runs and exits 0; the job Succeeds; results; the job is deleted."""
    name = "tfjob-mnist-ci-test"
    s.call("create_job(job)", lambda: CLIENT.create_job(job=tfjob(s.ns, name, {"Worker": worker_spec()}),
                                                        namespace=s.ns))
    s.call("list_jobs", lambda: CLIENT.list_jobs(s.ns), lambda js: [show_job(j)["metadata"]["name"] for j in js])
    s.wait(name, {"Running"})
    s.wait_pods(f"{name}-worker-0", "Running")
    s.kubelet.exit(f"{name}-worker-0", 0)
    verify_succeeded(s, name)
    s.snapshot("settled after success", name)
    job_results(s, name)
    s.call(f"get_job_logs({name}, follow=True)", lambda: CLIENT.get_job_logs(name, s.ns, follow=True)[0])
    s.call(f"delete_job({name})", lambda: CLIENT.delete_job(name, s.ns))
    h2h.wait_until("the job to go", lambda: not CLIENT.list_jobs(s.ns), 30)
    s.call(f"get_job({name}) after delete", lambda: CLIENT.get_job(name, s.ns), show_job)
    s.call(f"is_job_created({name}) after delete", lambda: CLIENT.is_job_created(name, s.ns))


def scenario_builders(s):
    """create_job from the SDK's own builders: an image with chief, PS and workers (no
    cleanPodPolicy: the default decides), and a training function; pods selected by role, type and
    index; the chief's success ends the job; the SDK's refusals of bad arguments."""
    name = "from-image"
    s.call("create_job(base_image, chief 1, ps 1, workers 2)", lambda: CLIENT.create_job(
        name=name, namespace=s.ns, base_image="tensorflow/tensorflow:2.15.0", num_workers=2,
        num_chief_replicas=1, num_ps_replicas=1, resources_per_worker={"cpu": "1", "memory": "1Gi"},
        env_vars={"EPOCHS": "3"}, labels={"team": "sdk"}, annotations={"note": "from-image"}))
    s.wait(name, {"Running"})
    for p in ("chief-0", "ps-0", "worker-0", "worker-1"):
        s.wait_pods(f"{name}-{p}", "Running")
    for what, kw in (("is_master", {"is_master": True}), ("replica_type=chief", {"replica_type": "chief"}),
                     ("replica_type=ps", {"replica_type": "ps"}), ("replica_type=worker", {"replica_type": "worker"}),
                     ("replica_type=worker, replica_index=1", {"replica_type": "worker", "replica_index": 1}),
                     ("all", {})):
        s.call(f"get_job_pod_names({name}, {what})", lambda: sorted(CLIENT.get_job_pod_names(name, s.ns, **kw)))
    s.call(f"get_job_pods({name}, replica_type=Evaluator)",
           lambda: CLIENT.get_job_pods(name, s.ns, replica_type="Evaluator"), show_pods)
    s.call(f"get_job_logs({name}) running", lambda: CLIENT.get_job_logs(name, s.ns),
           lambda r: {"logs": dict(sorted(r[0].items())), "events": r[1]})
    s.call(f"get_job_logs({name}, worker 1)", lambda: CLIENT.get_job_logs(
        name, s.ns, is_master=False, replica_type="worker", replica_index=1)[0])
    s.kubelet.exit(f"{name}-chief-0", 0)
    verify_succeeded(s, name)
    s.snapshot("settled after the chief's success", name)
    job_results(s, name)

    def train(parameters):
        print("training with", parameters)
    fname = "from-function"
    s.call("create_job(train_func, workers 1)", lambda: CLIENT.create_job(
        name=fname, namespace=s.ns, train_func=train, parameters={"lr": 0.1}, num_workers=1,
        packages_to_install=["numpy"]))
    job = s.wait(fname, {"Running"})
    c = job.spec.tf_replica_specs["Worker"].template.spec.containers[0]
    s.log("train_func container", {"command": c.command, "runs train": "def train(parameters)" in (c.args or [""])[0],
                                   "installs numpy": "numpy" in (c.args or [""])[0]})
    s.wait_pods(f"{fname}-worker-0", "Running")
    s.kubelet.exit(f"{fname}-worker-0", 0)
    verify_succeeded(s, fname)
    s.snapshot("settled after the function's success", fname)
    for what, fn in (
            ("create_job(job and base_image)", lambda: CLIENT.create_job(
                job=tfjob(s.ns, "x", {"Worker": worker_spec()}), base_image="busybox")),
            ("create_job(no job, no name)", lambda: CLIENT.create_job(base_image="busybox")),
            ("create_job(num_procs_per_worker)", lambda: CLIENT.create_job(
                name="x", base_image="busybox", num_procs_per_worker=2, job_kind="TFJob")),
            ("create_job(num_workers 0)", lambda: CLIENT.create_job(name="x", base_image="busybox", num_workers=0)),
            ("create_job(exists)", lambda: CLIENT.create_job(name=name, namespace=s.ns, base_image="busybox")),
            ("get_job_pods(replica_type=launcher)", lambda: CLIENT.get_job_pods(name, s.ns, replica_type="launcher")),
            ("wait_for_job_conditions(Suspended)", lambda: CLIENT.wait_for_job_conditions(
                name, s.ns, expected_conditions={"Suspended"})),
            ("update_job(missing)", lambda: CLIENT.update_job(tfjob(s.ns, "missing", {}), "missing", s.ns)),
            ("delete_job(missing)", lambda: CLIENT.delete_job("missing", s.ns))):
        s.call(what, fn)


def scenario_restart_fail(s):
    """Restarting and Failed as the SDK sees them: one worker, ExitCode; it exits 137 while
    scheduling is held (the new pod stays Pending: Restarting), then runs and exits 1: Failed;
    wait_for_job_conditions raises for a Failed job unless Failed is expected, and times out."""
    name = "restart-fail"
    s.call("create_job(job)", lambda: CLIENT.create_job(
        job=tfjob(s.ns, name, {"Worker": worker_spec(restart="ExitCode")}), namespace=s.ns))
    s.wait(name, {"Running"})
    s.wait_pods(f"{name}-worker-0", "Running")
    s.kubelet.set_schedule(False)
    s.kubelet.exit(f"{name}-worker-0", 137)
    job = s.wait(name, {"Restarting"})
    s.states(name, job)
    s.snapshot("settled while restarting", name)
    s.call(f"wait_for_job_conditions({name}, default, 3 s)", lambda: CLIENT.wait_for_job_conditions(
        name, s.ns, wait_timeout=3, polling_interval=1))
    s.kubelet.set_schedule(True)
    s.wait(name, {"Running"})
    s.wait_pods(f"{name}-worker-0", "Running")
    s.kubelet.exit(f"{name}-worker-0", 1)
    try:
        s.wait(name)  # Succeeded expected: raises once Failed
    except RuntimeError:
        pass
    job = s.wait(name, {"Failed"})
    s.states(name, job)
    s.snapshot("settled after failure", name)
    job_results(s, name)


def scenario_update_delete(s):
    """update_job: a job created suspended is resumed by the SDK's update (a merge patch); it runs
    and Succeeds; delete_job with grace period 0; get/list/delete afterwards."""
    name = "suspended"
    s.call("create_job(job, suspended)", lambda: CLIENT.create_job(job=tfjob(
        s.ns, name, {"Worker": worker_spec(2)}, KubeflowOrgV1RunPolicy(clean_pod_policy="All", suspend=True)),
        namespace=s.ns))
    job = s.wait(name, {"Created"})
    s.snapshot("settled while suspended", name)
    s.states(name, CLIENT.get_job(name, s.ns))
    job.spec.run_policy.suspend = False
    s.call("update_job(resume)", lambda: CLIENT.update_job(job, name, s.ns))
    s.wait(name, {"Running"})
    for i in (1, 0):
        s.wait_pods(f"{name}-worker-{i}", "Running")
        s.kubelet.exit(f"{name}-worker-{i}", 0)
    verify_succeeded(s, name)
    s.snapshot("settled after success (cleanPodPolicy All)", name)
    job_results(s, name)
    s.call(f"delete_job({name}, grace 0)", lambda: CLIENT.delete_job(
        name, s.ns, delete_options=V1DeleteOptions(grace_period_seconds=0)))
    h2h.wait_until("the job to go", lambda: not CLIENT.list_jobs(s.ns), 30)
    s.call("list_jobs after delete", lambda: CLIENT.list_jobs(s.ns), lambda js: len(js))
    s.call(f"delete_job({name}) again", lambda: CLIENT.delete_job(name, s.ns))


class GangScheduler(threading.Thread):
    """Stands in for scheduler-plugins' coscheduling: the job's pods are bound only once its
    PodGroup's minMember is no more than the number of its pods (the stand-in kubelet binds them)."""

    def __init__(self, s, name):
        super().__init__(daemon=True)
        self.s, self.name, self.stop = s, name, threading.Event()
        self.start()

    def run(self):
        path = h2h.PODGROUPS["scheduler-plugins"].format(ns=self.s.ns) + "/" + self.name
        while not self.stop.wait(0.5):
            code, pg = h2h.USER.get(path)
            pods = [p for p in self.s.kubelet.snapshot() if not p["metadata"].get("deletionTimestamp")]
            if code == 200 and pods and (pg.get("spec") or {}).get("minMember", 1) <= len(pods):
                self.s.kubelet.set_schedule(True)
                return


def scenario_gang(s):
    """The upstream e2e test's test_sdk_e2e_with_gang_scheduling with scheduler-plugins: a job whose
    schedulingPolicy.minAvailable (10) exceeds its one worker stays Created, checked 3 times;
    update_job sets minAvailable 1; the pod is scheduled, runs, exits 0; Succeeded."""
    name = "tfjob-mnist-ci-test"
    worker = worker_spec(scheduler="scheduler-plugins-scheduler")

    def job(n):
        return tfjob(s.ns, name, {"Worker": worker},
                     KubeflowOrgV1RunPolicy(clean_pod_policy="None",
                                            scheduling_policy=KubeflowOrgV1SchedulingPolicy(min_available=n)))
    s.call("create_job(job, minAvailable 10)", lambda: CLIENT.create_job(job=job(10), namespace=s.ns))
    gang = GangScheduler(s, name)
    try:
        j = s.wait(name, {"Created"})
        for _ in range(3):
            if not CLIENT.is_job_created(job=j) or CLIENT.is_job_running(job=j):
                raise RuntimeError("the unschedulable job should be Created, not Running")
            time.sleep(2)
            j = CLIENT.get_job(name, s.ns)
        s.snapshot("settled while unschedulable", name)
        s.call("update_job(minAvailable 1)", lambda: CLIENT.update_job(job(1), name, s.ns))
        s.wait(name, {"Running"})
        s.wait_pods(f"{name}-worker-0", "Running")
        s.kubelet.exit(f"{name}-worker-0", 0)
        verify_succeeded(s, name)
        s.snapshot("settled after success", name)
        job_results(s, name)
        s.call(f"delete_job({name})", lambda: CLIENT.delete_job(name, s.ns))
    finally:
        gang.stop.set()


PLAIN = {"e2e": scenario_e2e, "builders": scenario_builders, "restart-fail": scenario_restart_fail,
         "update-delete": scenario_update_delete}
GANG = {"gang": scenario_gang}


def run_group(argv, group, schedule, ready):
    sessions = [Session(n, fn) for n, fn in group.items()]
    op = subprocess.Popen(argv, stdout=LOG, stderr=subprocess.STDOUT, start_new_session=True)
    started = time.time()
    try:
        h2h.wait_ready(op, ready)
        print(f"operator ready in {time.time() - started:.1f} s ({' '.join(argv[1:])})", flush=True)
        threads = [threading.Thread(target=s.run, args=(schedule,)) for s in sessions]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        h2h.stop_operator(op)
    return sessions


def main():
    global CLIENT, LOG
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("operator", nargs="+")
    a = ap.parse_args()
    only = set(filter(None, a.only.split(",")))
    CLIENT = TrainingClient(config_file=os.environ["KUBE_ADMIN_KUBECONFIG"], job_kind=constants.TFJOB_KIND)
    LOG = open(os.path.splitext(a.out)[0] + ".operator.log", "w")
    logs = LogServer(Kube("h2h-kubelet"))
    sessions = []
    try:
        plain_group = {n: f for n, f in PLAIN.items() if not only or n in only}
        gang_group = {n: f for n, f in GANG.items() if not only or n in only}
        if plain_group:
            sessions += run_group(a.operator, plain_group, True, "ready-0")
        if gang_group:
            h2h.install_podgroup_crd("scheduler-plugins")
            sessions += run_group(a.operator + GANG_FLAGS, gang_group, False, "ready-1")
    finally:
        logs.close()
    out = {s.name: {"calls": s.record, **({"error": s.error} if s.error else {})} for s in sessions}
    with open(a.out, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    for s in sessions:
        print(f"{'ok  ' if not s.error else 'FAIL'} {s.name}" + (f": {s.error}" if s.error else ""), flush=True)
    return 1 if any(s.error for s in sessions) else 0


if __name__ == "__main__":
    sys.exit(main())
