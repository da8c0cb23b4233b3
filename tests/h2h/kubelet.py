"""The stand-in kubelet of the head-to-head rig, the same for both operators: it watches the pods
of one namespace and does what a kubelet and the scheduler would, through the API only:
  - binds every new pod to the node `h2h-node` (pods/binding), unless scheduling is held;
  - moves a bound pod Pending -> Running (pods/status: every container running, Ready);
  - on exit(): terminates the `tensorflow` container with an exit code: Succeeded / Failed for
    restartPolicy Never (and OnFailure with 0), or restarted in place (restartCount + 1,
    lastState terminated) for Always, and OnFailure with a non-zero code;
  - finishes graceful deletions: a pod with deletionTimestamp is deleted with grace period 0
    three seconds later (DELETION_SECONDS), as a kubelet does once its containers have stopped, so
    that an operator always sees a pod terminating, as on a real node.
User agent `h2h-kubelet`, so its requests are told apart in the audit log.

With workers > 0 its requests are sent from that many threads instead of the watch thread, so
that thousands of pods created at once are bound and run in parallel, as on many nodes, and its
view of the pods (snapshot, wait_for) never lags behind the watch (bench/operator.py)."""
import concurrent.futures
import datetime
import fnmatch
import threading

from kubeclient import Kube

NODE = "h2h-node"
DELETION_SECONDS = 3.0


def now():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def container_running(c, restarts=0, last=None):
    s = {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": True,
         "started": True, "restartCount": restarts, "state": {"running": {"startedAt": now()}}}
    if last:
        s["lastState"] = {"terminated": last}
    return s


def terminated(code):
    return {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
            "startedAt": now(), "finishedAt": now()}


class StandIn:
    def __init__(self, namespace, schedule=True, kube=None, workers=0):
        self.ns = namespace
        self.pool = concurrent.futures.ThreadPoolExecutor(workers) if workers else None
        self.kube = kube or Kube("h2h-kubelet")
        self.schedule = schedule
        self.pods = {}          # name -> latest pod seen
        self.lock = threading.Condition()
        self.ip = 0
        self.deleting = set()   # uids whose deletion is scheduled
        self.pending = 0        # deletions scheduled and not yet done
        self.watcher = self.kube.watch(f"/api/v1/namespaces/{namespace}/pods", self._event)

    def close(self):
        self.watcher.close()
        if self.pool:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _act(self, fn, pod):
        """fn(pod) now, or on the worker threads when there are some."""
        if self.pool:
            self.pool.submit(fn, pod)
        else:
            fn(pod)

    # --- what a kubelet does by itself

    def _event(self, typ, pod):
        name = pod["metadata"]["name"]
        with self.lock:
            if typ == "DELETED":
                self.pods.pop(name, None)
            else:
                self.pods[name] = pod
            self.lock.notify_all()
        if typ == "DELETED":
            return
        if pod["metadata"].get("deletionTimestamp"):
            if pod["metadata"]["uid"] not in self.deleting:
                self.deleting.add(pod["metadata"]["uid"])
                self.pending += 1
                t = threading.Timer(DELETION_SECONDS, self._finish_deletion, (pod,))
                t.daemon = True
                t.start()
        elif not pod["spec"].get("nodeName"):
            if self.schedule:  # it stands in for every scheduler, gang schedulers too
                self._act(self._bind, pod)
        elif (pod.get("status") or {}).get("phase", "Pending") == "Pending":
            self._act(self._run, pod)

    def _bind(self, pod):
        m = pod["metadata"]
        self.kube.request("POST", f"/api/v1/namespaces/{self.ns}/pods/{m['name']}/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": m["name"], "uid": m["uid"]},
            "target": {"apiVersion": "v1", "kind": "Node", "name": NODE}})

    def _run(self, pod):
        with self.lock:
            self.ip += 1
            ip = self.ip
        t = now()
        status = {"phase": "Running", "hostIP": "127.0.0.1", "podIP": f"10.1.{ip // 250}.{ip % 250 + 1}",
                  "startTime": t,
                  "conditions": [{"type": c, "status": "True", "lastTransitionTime": t}
                                 for c in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
                  "containerStatuses": [container_running(c) for c in pod["spec"]["containers"]]}
        self._status(pod, status)

    def _finish_deletion(self, pod):
        m = pod["metadata"]
        try:
            self.kube.request("DELETE", f"/api/v1/namespaces/{self.ns}/pods/{m['name']}",
                              {"gracePeriodSeconds": 0, "preconditions": {"uid": m["uid"]}})
        finally:
            with self.lock:
                self.pending -= 1

    def busy(self):
        """Whether a graceful deletion is still to be finished."""
        with self.lock:
            return self.pending > 0

    def _status(self, pod, status):
        code, body = self.kube.request(
            "PATCH", f"/api/v1/namespaces/{self.ns}/pods/{pod['metadata']['name']}/status",
            {"metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]}, "status": status},
            "application/merge-patch+json")
        return code == 200

    # --- what a scenario asks for

    def set_schedule(self, on):
        self.schedule = on
        if on:
            for pod in self.snapshot():
                if not pod["spec"].get("nodeName") and not pod["metadata"].get("deletionTimestamp"):
                    self._bind(pod)

    def snapshot(self):
        with self.lock:
            return list(self.pods.values())

    def wait_for(self, pred, timeout):
        """Wait until pred(list of pods) is true; returns whether it became true."""
        with self.lock:
            return self.lock.wait_for(lambda: pred(list(self.pods.values())), timeout)

    def exit(self, pattern, code, timeout=60):
        """Terminate the `tensorflow` container of every running pod whose name matches pattern
        (fnmatch) with exit code `code`. Returns the names of the pods it changed."""
        def running(pods):
            return [p for p in pods if fnmatch.fnmatch(p["metadata"]["name"], pattern)
                    and not p["metadata"].get("deletionTimestamp")
                    and (p.get("status") or {}).get("phase") == "Running"]
        self.wait_for(running, timeout)
        done = []
        for pod in running(self.snapshot()):
            if self._exit_one(pod, code):
                done.append(pod["metadata"]["name"])
        return sorted(done)

    def _exit_one(self, pod, code):
        policy = pod["spec"].get("restartPolicy", "Always")
        old = {s["name"]: s for s in (pod.get("status") or {}).get("containerStatuses") or []}
        restart = policy == "Always" or (policy == "OnFailure" and code != 0)
        statuses = []
        for c in pod["spec"]["containers"]:
            prev = old.get(c["name"]) or container_running(c)
            if c["name"] != "tensorflow":
                statuses.append(prev if restart else dict(prev, ready=False, state={"terminated": terminated(0)}))
            elif restart:
                statuses.append(container_running(c, prev.get("restartCount", 0) + 1, terminated(code)))
            else:
                statuses.append(dict(prev, ready=False, started=False, state={"terminated": terminated(code)}))
        status = dict(pod["status"], containerStatuses=statuses)
        if not restart:
            status["phase"] = "Succeeded" if code == 0 else "Failed"
            status["conditions"] = [dict(c, status="False") if c["type"] in ("Ready", "ContainersReady") else c
                                    for c in status.get("conditions") or []]
        return self._status(pod, status)
