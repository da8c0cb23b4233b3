"""The controller binding on the memory backend: job lifecycles driven by a fake kubelet (the
test writes pod status, as tests/test_controller.c does), hooks, callback errors, lifetimes."""
import gc
import logging
import threading
import weakref

import pytest

import tfjob
from conftest import make_job, set_pod

NOW = 1_700_000_000


def children(b, kind, job):
    return sorted(o["metadata"]["name"] for o in b.items(kind, label_selector=f"training.kubeflow.org/job-name={job}"))


def test_ps_workers_succeed_and_api_calls_per_lifecycle(memory):
    statuses = []  # the job's status at each MODIFIED event

    def on_job(ev):
        if ev.type == "MODIFIED":
            statuses.append(ev.object.get("status"))

    jw = memory.watch("tfjobs", on_job)
    with tfjob.Controller(memory, clock=lambda: NOW) as c:
        memory.create_tfjob(make_job("mnist", {"PS": 1, "Worker": 2}))
        pods = ["mnist-ps-0", "mnist-worker-0", "mnist-worker-1"]
        assert c.run_until(lambda: children(memory, "pods", "mnist") == pods, timeout=10)
        assert children(memory, "services", "mnist") == pods
        pod = memory.get("pods", "mnist-worker-1")
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "TFJob"
        env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0]["env"]}
        assert '"task":{"type":"worker","index":1}' in env["TF_CONFIG"]
        for p in pods:
            set_pod(memory, p, "Running")
        assert c.run_until(lambda: tfjob.has_condition(memory.get_tfjob("mnist"), "Running"), timeout=10)
        set_pod(memory, "mnist-worker-0", "Succeeded", 0)
        set_pod(memory, "mnist-worker-1", "Succeeded", 0)
        job = memory.wait_for_job("mnist", timeout=10)
        assert tfjob.has_condition(job, "Succeeded") and not tfjob.has_condition(job, "Failed")
        assert job["status"]["startTime"] == "2023-11-14T22:13:20Z"  # the controller's clock
        assert tfjob.condition(job, "Succeeded")["reason"] == "TFJobSucceeded"
        assert c.wait_idle(10)
        m = c.metrics()
        assert m.jobs_created == 1 and m.jobs_succeeded == 1 and m.jobs_failed == 0
        assert m.api_calls["create"] == 6  # one per pod and service
        # one status write per status change, and no write that changes nothing
        assert c.run_until(lambda: len(statuses) == m.api_calls["update_status"], timeout=5), (len(statuses), m.api_calls)
        assert all(a != b for a, b in zip(statuses, statuses[1:]))
        assert m.is_leader and c.is_leader and c.is_ready
        assert sum(m.reconcile_latency.values()) == m.reconciles
        text = c.metrics_text()
        assert "tfjob_controller_reconcile_total" in text
        reasons = {e["reason"] for e in memory.items("events")}
        assert {"SuccessfulCreatePod", "SuccessfulCreateService", "TFJobSucceeded"} <= reasons
    jw.close()
    with pytest.raises(tfjob.Error, match="closed"):
        c.metrics()


def test_invalid_spec_fails_validation_without_children(memory):
    with tfjob.Controller(memory) as c:
        memory.create_tfjob(make_job("bad", {"Worker": 1}, image=None))
        job = memory.wait_for_job("bad", conditions="Failed", timeout=10)
        cond = tfjob.condition(job, "Failed")
        assert cond["reason"] == "TFJobFailedValidation"
        assert "image" in cond["message"]
        assert c.wait_idle(10)
        assert children(memory, "pods", "bad") == [] and children(memory, "services", "bad") == []


def test_permanent_exit_code_fails_the_job(memory):
    with tfjob.Controller(memory) as c:
        memory.create_tfjob(make_job("ec", {"Worker": 1}, restart_policy="ExitCode"))
        assert c.run_until(lambda: children(memory, "pods", "ec") == ["ec-worker-0"], timeout=10)
        set_pod(memory, "ec-worker-0", "Failed", 1)
        job = memory.wait_for_job("ec", timeout=10)
        assert tfjob.has_condition(job, "Failed")


def test_hooks_log_mutate_before_after(memory, caplog):
    seen_before, seen_after = [], []
    lock = threading.Lock()

    def before(ns, name):
        with lock:
            seen_before.append((ns, name))
        return name != "skipped"

    def after(ns, name, err):
        with lock:
            seen_after.append((ns, name, err))

    def mutate(pod, job):
        pod["metadata"].setdefault("labels", {})["sidecar"] = job["metadata"]["name"]
        return pod

    logger = logging.getLogger("tfjob-test")
    with caplog.at_level(logging.DEBUG, logger="tfjob-test"):
        with tfjob.Controller(memory, workers=2, log=logger, log_level="debug", before_reconcile=before,
                              after_reconcile=after, mutate_pod=mutate) as c:
            memory.create_tfjob(make_job("m", {"Worker": 1}))
            memory.create_tfjob(make_job("skipped", {"Worker": 1}))
            assert c.run_until(lambda: children(memory, "pods", "m") == ["m-worker-0"], timeout=10)
            assert c.run_until(lambda: ("default", "skipped") in seen_before, timeout=10)
            assert c.wait_idle(10)
    assert memory.get("pods", "m-worker-0")["metadata"]["labels"]["sidecar"] == "m"
    assert children(memory, "pods", "skipped") == []
    assert ("default", "skipped") in seen_before and ("default", "m", None) in seen_after
    assert all(name != "skipped" for _, name, _ in seen_after)
    assert any("controller running" in r.getMessage() for r in caplog.records)


class HookError(Exception):
    pass


def test_before_reconcile_exception_is_reraised_and_skips(memory):
    def before(ns, name):
        raise HookError(name)

    c = tfjob.Controller(memory, before_reconcile=before).start()
    memory.create_tfjob(make_job("x", {"Worker": 1}))
    with pytest.raises(HookError, match="^x$"):
        c.run_until(lambda: False, timeout=10)
    assert children(memory, "pods", "x") == []
    c.stop()  # already re-raised; later errors would come here
    c.close()


def test_mutate_pod_exception_fails_the_creation_and_is_reraised(memory):
    def mutate(pod, job):
        raise HookError("no sidecar")

    c = tfjob.Controller(memory, mutate_pod=mutate, backoff_base=10.0).start()
    memory.create_tfjob(make_job("y", {"Worker": 1}))
    with pytest.raises(HookError, match="no sidecar"):
        c.run_until(lambda: False, timeout=10)
    assert c.run_until(lambda: any(e["reason"] == "FailedCreatePod" for e in memory.items("events")), timeout=10)
    assert children(memory, "pods", "y") == []
    c.close()


def test_log_and_after_exceptions_are_reraised_by_stop(memory):
    def log(level, message, fields):
        raise HookError("log " + message)

    c = tfjob.Controller(memory, log=log)
    c.start()
    with pytest.raises(HookError, match="^log controller running$"):
        c.stop()
    c.close()


def test_stop_from_a_hook_is_refused_not_deadlocked(memory):
    box = {}

    def after(ns, name, err):
        box["c"].stop()

    c = box["c"] = tfjob.Controller(memory, after_reconcile=after)
    c.start()
    memory.create_tfjob(make_job("z", {"Worker": 1}))
    with pytest.raises(tfjob.Error, match="from one of its hooks"):
        c.run_until(lambda: False, timeout=10)
    c.close()


def test_closing_the_backend_closes_the_controller_and_gc_releases():
    b = tfjob.MemoryBackend()
    c = tfjob.Controller(b).start()
    b.close()
    with pytest.raises(tfjob.Error, match="closed"):
        c.is_ready
    for _ in range(10):
        b2 = tfjob.MemoryBackend()
        c2 = tfjob.Controller(b2, log=lambda *a: None).start()
        ref = weakref.ref(c2)
        del c2
        gc.collect()
        assert ref() is None
        b2.close()


def test_bad_options():
    with tfjob.MemoryBackend() as b:
        with pytest.raises(ValueError):
            tfjob.Controller(b, gang_scheduler="slurm")
        with pytest.raises(ValueError):
            tfjob.Controller(b, log_level="loud")
        with pytest.raises(ValueError):
            tfjob.Controller(b, compat="v0")


def test_hook_errors_survive_the_backend_closing_first():
    b = tfjob.MemoryBackend()

    def log(level, message, fields):
        raise HookError(message)

    c = tfjob.Controller(b, log=log).start()
    b.close()  # closes the controller, keeps its hook error for it
    with pytest.raises(HookError, match="controller running"):
        c.close()
    c.close()  # reported once


def test_controller_dropped_inside_its_own_hook_is_released_from_another_thread():
    b = tfjob.MemoryBackend()
    box = {}
    dropped = threading.Event()

    def after(ns, name, err):
        c = box.pop("c", None)
        if c is not None:
            ref = weakref.ref(c)
            del c  # the last reference: __del__ runs here, on a worker thread
            gc.collect()
            if ref() is None:
                dropped.set()

    box["c"] = tfjob.Controller(b, after_reconcile=after).start()
    b.create_tfjob(make_job("d", {"Worker": 1}))
    assert dropped.wait(10)
    b.close()  # joins the release running elsewhere before freeing the transport


def test_watch_dropped_inside_its_own_handler():
    b = tfjob.MemoryBackend()
    box = {}
    dropped = threading.Event()

    def handler(ev):
        w = box.pop("w", None)
        if w is not None:
            del w
            dropped.set()

    box["w"] = b.watch("pods", handler)
    b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert dropped.wait(10)
    b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"}})
    b.close()


@pytest.mark.parametrize("gang,name,resource", [
    ("volcano", "vc2", tfjob.PODGROUPS),
    ("scheduler-plugins", None, tfjob.Resource("scheduling.x-k8s.io", "v1alpha1", "podgroups", True))])
def test_gang_scheduling_options_reach_pods_and_pod_group(memory, gang, name, resource):
    """gang_scheduler / scheduler_name of the controller: its pods are those render_pod gives
    with the same options, and its PodGroup is pod_group's (docs/cluster.md); volcano pods wait
    for the PodGroup to leave phase Pending (docs/controller.md)."""
    with tfjob.Controller(memory, clock=lambda: NOW, gang_scheduler=gang, scheduler_name=name) as c:
        memory.create_tfjob(make_job("gang", {"PS": 1, "Worker": 2}))
        pods = ["gang-ps-0", "gang-worker-0", "gang-worker-1"]
        if gang == "volcano":
            assert c.run_until(lambda: children(memory, "services", "gang") == pods, timeout=10)
            assert c.wait_idle(10)
            assert children(memory, "pods", "gang") == []
            for _ in range(20):  # volcano moves the PodGroup on
                group = memory.get(resource, "gang")
                group["status"] = {"phase": "Inqueue"}
                try:
                    memory.update_status(resource, group)
                    break
                except tfjob.ConflictError:
                    continue
        assert c.run_until(lambda: children(memory, "pods", "gang") == pods, timeout=10)
        stored = tfjob.Job.from_dict(memory.get_tfjob("gang"))
        for p in pods:
            pod = memory.get("pods", p)
            rtype, index = p.split("-")[1], int(p.split("-")[2])
            want = stored.render_pod(rtype, index, gang_scheduler=gang, scheduler_name=name)
            assert pod["spec"] == want["spec"]
            assert pod["metadata"]["labels"] == want["metadata"]["labels"]
            assert pod["metadata"].get("annotations") == want["metadata"].get("annotations")
        group = memory.get(resource, "gang")
        want = stored.pod_group(gang)
        assert (group["apiVersion"], group["kind"], group["spec"]) == (want["apiVersion"], want["kind"], want["spec"])
        assert group["metadata"]["ownerReferences"] == want["metadata"]["ownerReferences"]
