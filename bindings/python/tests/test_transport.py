"""The transport binding on the memory backend: every verb, typed API errors, watches, lifetimes."""
import gc
import json
import os
import threading
import time
import weakref

import pytest

import tfjob
from conftest import make_job


def test_resources():
    assert tfjob.Resource.lookup("TFJob") == tfjob.TFJOBS
    assert tfjob.Resource.lookup("svc") == tfjob.SERVICES
    assert tfjob.Resource.lookup("Namespace") == tfjob.NAMESPACES and not tfjob.NAMESPACES.namespaced
    with pytest.raises(ValueError):
        tfjob.Resource.lookup("deployments")


def test_create_get_list_update_patch_delete(memory):
    assert memory.namespace == "default"
    created = memory.create_tfjob(make_job("a", {"Worker": 2}))
    meta = created["metadata"]
    assert meta["uid"] and meta["resourceVersion"] and meta["creationTimestamp"]
    assert memory.resource_version == int(meta["resourceVersion"])
    got = memory.get_tfjob("a")
    assert got["metadata"]["uid"] == meta["uid"]
    # A Job handle and YAML text are accepted too.
    with tfjob.Job.from_dict(make_job("b", {"Worker": 1})) as job:
        memory.create("tfjobs", job)
    memory.create_tfjob("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: c}\n"
                        "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: x}]}}}}}")
    names = [o["metadata"]["name"] for o in memory.list("tfjobs")["items"]]
    assert names == ["a", "b", "c"]
    assert [o["metadata"]["name"] for o in memory.items("tfjobs", page_size=1)] == ["a", "b", "c"]
    page = memory.list("tfjobs", limit=2)
    assert len(page["items"]) == 2 and page["metadata"]["continue"]
    assert memory.list("tfjobs", field_selector="metadata.name=b")["items"][0]["metadata"]["name"] == "b"
    # update at the current version, then status through /status only.
    got["metadata"]["labels"] = {"team": "x"}
    updated = memory.update("tfjobs", got)
    assert updated["metadata"]["labels"] == {"team": "x"}
    assert [o["metadata"]["name"] for o in memory.list("tfjobs", label_selector="team=x")["items"]] == ["a"]
    updated["status"] = {"conditions": [{"type": "Created", "status": "True"}]}
    assert "status" not in memory.update("tfjobs", updated) or not memory.get_tfjob("a").get("status")
    fresh = memory.get_tfjob("a")
    fresh["status"] = {"conditions": [{"type": "Created", "status": "True"}]}
    assert tfjob.has_condition(memory.update_status("tfjobs", fresh), "Created")
    patched = memory.patch("tfjobs", "a", {"metadata": {"annotations": {"k": "v"}}})
    assert patched["metadata"]["annotations"] == {"k": "v"}
    memory.delete("tfjobs", "b")
    with pytest.raises(tfjob.NotFoundError):
        memory.get_tfjob("b")
    ev = memory.create_event(fresh, "Normal", "Tested", "a test event")
    assert ev["involvedObject"]["name"] == "a" and ev["reason"] == "Tested"
    assert memory.list("events")["items"][0]["message"] == "a test event"
    pod = memory.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "p-"},
                                 "spec": {"containers": [{"name": "c", "image": "x"}]}})
    assert pod["metadata"]["name"].startswith("p-") and len(pod["metadata"]["name"]) > 2


def test_typed_errors_carry_status_reason_and_message(memory):
    memory.create_tfjob(make_job("a", {"Worker": 1}))
    with pytest.raises(tfjob.NotFoundError) as nf:
        memory.get_tfjob("missing")
    e = nf.value
    assert (e.http_status, e.reason, e.code) == (404, "NotFound", -9)
    assert e.message == 'tfjobs.kubeflow.org "missing" not found'
    assert e.details and e.details["name"] == "missing" and e.details["kind"] == "tfjobs"
    assert "HTTP 404" in str(e)

    with pytest.raises(tfjob.AlreadyExistsError) as ae:
        memory.create_tfjob(make_job("a", {"Worker": 1}))
    assert isinstance(ae.value, tfjob.ConflictError) and isinstance(ae.value, tfjob.TransportError)
    assert (ae.value.http_status, ae.value.reason) == (409, "AlreadyExists")
    assert ae.value.message == 'tfjobs.kubeflow.org "a" already exists'

    stale = memory.get_tfjob("a")
    memory.patch("tfjobs", "a", {"metadata": {"labels": {"x": "1"}}})
    with pytest.raises(tfjob.ConflictError) as cf:
        memory.update("tfjobs", stale)
    assert not isinstance(cf.value, tfjob.AlreadyExistsError)
    assert (cf.value.http_status, cf.value.reason) == (409, "Conflict")
    assert "the object has been modified" in cf.value.message

    with pytest.raises(tfjob.ConflictError):
        memory.delete("tfjobs", "a", precondition_uid="not-the-uid")
    with pytest.raises(ValueError):
        memory.delete("tfjobs", "a", propagation="Sideways")

    # 422: an update of a custom resource without a resourceVersion.
    del stale["metadata"]["resourceVersion"]
    with pytest.raises(tfjob.InvalidError) as inv:
        memory.update("tfjobs", stale)
    assert (inv.value.http_status, inv.value.reason) == (422, "Invalid")


def test_watch_iterator_sees_added_modified_deleted(memory):
    memory.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "before"}})
    with memory.watch("pods") as w:
        assert w.next(timeout=5).object["metadata"]["name"] == "before"  # synthetic ADDED
        memory.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
        memory.patch("pods", "p", {"metadata": {"labels": {"a": "b"}}})
        memory.delete("pods", "p")
        seen = [w.next(timeout=5) for _ in range(3)]
        assert [(e.type, e.object["metadata"]["name"]) for e in seen] == [
            ("ADDED", "p"), ("MODIFIED", "p"), ("DELETED", "p")]
        assert seen[1].object["metadata"]["labels"] == {"a": "b"}
        assert w.next(timeout=0.05) is None and not w.done
        w.stop()
        assert w.wait(5) and w.done and w.error is None
        assert list(w) == []


def test_watch_handler_bookmarks_and_stop_by_returning_false(memory):
    got = []
    stopped = threading.Event()

    def handler(ev):
        got.append(ev.type)
        return ev.type != "BOOKMARK"  # False ends the watch

    w = memory.watch("tfjobs", handler, allow_bookmarks=True, on_closed=lambda err: stopped.set())
    memory.create_tfjob(make_job("a", {"Worker": 1}))
    deadline = time.time() + 5
    while "ADDED" not in got and time.time() < deadline:
        time.sleep(0.01)
    memory.bookmark()
    assert stopped.wait(5)
    assert got == ["ADDED", "BOOKMARK"] and w.done and w.error is None
    w.close()
    with pytest.raises(tfjob.Error):
        w.next()  # a handler watch is not iterable


def test_watch_handler_exception_is_reraised_and_stops_the_watch(memory):
    class Boom(Exception):
        pass

    def handler(ev):
        raise Boom(ev.object["metadata"]["name"])

    w = memory.watch("tfjobs", handler)
    memory.create_tfjob(make_job("a", {"Worker": 1}))
    with pytest.raises(Boom, match="^a$"):
        w.wait(5)
    assert w.done
    w.close()  # already raised: not again
    memory.create_tfjob(make_job("b", {"Worker": 1}))  # the store is fine afterwards


def test_watch_gone_after_compaction(memory):
    memory.create_tfjob(make_job("a", {"Worker": 1}))
    old = str(memory.resource_version)
    memory.create_tfjob(make_job("b", {"Worker": 1}))
    memory.compact()
    with memory.watch("tfjobs", resource_version=old, reconnect=False) as w:
        with pytest.raises(tfjob.GoneError) as gone:
            list(w)
    assert gone.value.http_status == 410 and gone.value.reason == "Expired"
    assert isinstance(w.error, tfjob.GoneError)


def test_dropping_a_watch_stops_it_and_frees_it(memory):
    seen = []
    w = memory.watch("tfjobs", lambda ev: seen.append(ev.object["metadata"]["name"]))
    memory.create_tfjob(make_job("a", {"Worker": 1}))
    deadline = time.time() + 5
    while not seen and time.time() < deadline:
        time.sleep(0.01)
    ref = weakref.ref(w)
    del w
    gc.collect()
    assert ref() is None
    memory.create_tfjob(make_job("b", {"Worker": 1}))
    time.sleep(0.1)
    assert seen == ["a"]


def test_closing_the_backend_closes_its_watches():
    b = tfjob.MemoryBackend()
    w = b.watch("pods")
    b.close()
    assert w.done
    with pytest.raises(tfjob.Error, match="closed"):
        b.get("pods", "x")
    b.close()  # idempotent


def test_many_backends_and_watches_released_by_gc():
    for i in range(50):
        b = tfjob.MemoryBackend()
        b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}})
        b.watch("pods", lambda ev: None)  # dropped at once
        w = b.watch("pods")
        del b, w
    gc.collect()


def test_memory_clock_is_used_and_its_exception_reraised():
    calls = []

    def clock():
        calls.append(1)
        if len(calls) > 1:
            raise RuntimeError("clock broke")
        return 1_700_000_000

    b = tfjob.MemoryBackend(clock=clock)
    pod = b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert pod["metadata"]["creationTimestamp"] == "2023-11-14T22:13:20Z"
    b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"}})  # falls back
    with pytest.raises(RuntimeError, match="clock broke"):
        b.close()


def test_kube_backend_configuration_errors(tmp_path):
    with pytest.raises(tfjob.Error) as e:
        tfjob.KubeBackend.from_kubeconfig(str(tmp_path / "missing"))
    assert e.value.code in (-9, -19)  # ENOTFOUND or EIO
    cfg = tmp_path / "config"
    cfg.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "k", "cluster": {"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "secret-token"}}],
        "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u", "namespace": "ml"}}]}))
    with pytest.raises(tfjob.NotFoundError):
        tfjob.KubeBackend.from_kubeconfig(str(cfg), context="nope")
    with tfjob.KubeBackend.from_kubeconfig(str(cfg), max_retries=-1, connect_timeout=2) as kb:
        assert kb.server == "https://127.0.0.1:1" and kb.namespace == "ml"
        with pytest.raises(tfjob.NetworkError) as ne:
            kb.get_tfjob("x")
        assert ne.value.http_status == 0 and "secret-token" not in str(ne.value)


def test_close_waits_for_calls_in_flight_on_other_threads():
    b = tfjob.MemoryBackend()
    for i in range(20):
        b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"}})
    outcomes = []
    go = threading.Event()
    listed = threading.Semaphore(0)  # one release per thread, after its first list

    def hammer():
        go.wait()
        n = 0
        while True:
            try:
                b.items("pods")
                n += 1
                if n == 1:
                    listed.release()
            except tfjob.Error as e:
                if n == 0:
                    listed.release()
                outcomes.append((n, e.code))
                return

    threads = [threading.Thread(target=hammer) for _ in range(4)]
    for t in threads:
        t.start()
    go.set()
    for _ in threads:  # every thread is listing (a loaded machine may not start one in 50 ms)
        assert listed.acquire(timeout=10)
    time.sleep(0.01)
    b.close()  # must wait for the lists in flight, never free under them
    for t in threads:
        t.join(10)
    assert len(outcomes) == 4 and all(code == -3 for _, code in outcomes)
    assert all(n > 0 for n, _ in outcomes)
