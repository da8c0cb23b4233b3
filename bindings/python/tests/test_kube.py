"""The bindings against a real kube-apiserver + etcd (tests/kube/harness.sh, run by
tests/suites/86-bindings-kube.sh). Skipped unless the harness's environment is set."""
import os
import uuid

import pytest

import tfjob
from conftest import make_job, set_pod

ADMIN = os.environ.get("KUBE_ADMIN_KUBECONFIG")
pytestmark = pytest.mark.skipif(not ADMIN, reason="needs a kube-apiserver (tests/suites/86-bindings-kube.sh)")


@pytest.fixture
def kube():
    with tfjob.KubeBackend.from_kubeconfig(ADMIN, qps=-1) as backend:
        yield backend


@pytest.fixture
def ns(kube):
    name = "py-" + uuid.uuid4().hex[:8]
    kube.create("namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    kube.delete("namespaces", name)


def test_server_and_verbs(kube, ns):
    assert kube.server == os.environ["KUBE_APISERVER_URL"]
    created = kube.create_tfjob(make_job("a", {"Worker": 2}, namespace=ns))
    assert created["metadata"]["uid"] and created["metadata"]["namespace"] == ns
    assert kube.get_tfjob("a", ns)["spec"]["tfReplicaSpecs"]["Worker"]["replicas"] == 2
    assert [o["metadata"]["name"] for o in kube.items("tfjobs", ns)] == ["a"]
    patched = kube.patch("tfjobs", "a", {"metadata": {"labels": {"team": "x"}}}, ns)
    assert patched["metadata"]["labels"] == {"team": "x"}
    st = kube.patch("tfjobs", "a", {"status": {"conditions": [{"type": "Created", "status": "True"}]}}, ns,
                    subresource="status")
    assert tfjob.has_condition(st, "Created")
    ev = kube.create_event(st, "Normal", "Tested", "from python", ns)
    assert ev["involvedObject"]["uid"] == created["metadata"]["uid"]
    kube.delete("tfjobs", "a", ns)


def test_api_errors_from_the_server(kube, ns):
    with pytest.raises(tfjob.NotFoundError) as nf:
        kube.get_tfjob("missing", ns)
    assert (nf.value.http_status, nf.value.reason) == (404, "NotFound")
    assert nf.value.message == 'tfjobs.kubeflow.org "missing" not found'
    kube.create_tfjob(make_job("a", {"Worker": 1}, namespace=ns))
    with pytest.raises(tfjob.AlreadyExistsError) as ae:
        kube.create_tfjob(make_job("a", {"Worker": 1}, namespace=ns))
    assert (ae.value.http_status, ae.value.reason) == (409, "AlreadyExists")
    assert ae.value.message == 'tfjobs.kubeflow.org "a" already exists'
    stale = kube.get_tfjob("a", ns)
    kube.patch("tfjobs", "a", {"metadata": {"labels": {"x": "1"}}}, ns)
    with pytest.raises(tfjob.ConflictError) as cf:
        kube.update("tfjobs", stale, ns)
    assert (cf.value.http_status, cf.value.reason) == (409, "Conflict")
    assert "the object has been modified" in cf.value.message
    with pytest.raises(tfjob.InvalidError) as inv:
        kube.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}},
                    ns)
    assert inv.value.http_status == 422 and inv.value.causes
    assert any(c.get("field") == "spec.containers" for c in inv.value.causes)
    with tfjob.KubeBackend.from_kubeconfig(os.environ["KUBE_USER_KUBECONFIG"]) as user:
        with pytest.raises(tfjob.ForbiddenError) as fb:
            user.list("tfjobs", ns)
    assert (fb.value.http_status, fb.value.reason) == (403, "Forbidden")
    assert "cannot list resource" in fb.value.message


def test_watch_and_controller_run_a_job(kube, ns):
    seen = []
    with kube.watch("tfjobs", lambda ev: seen.append(ev.type), ns):
        with tfjob.Controller(kube, namespace=ns, workers=2) as c:
            kube.create_tfjob(make_job("mnist", {"PS": 1, "Worker": 2}, namespace=ns))
            pods = ["mnist-ps-0", "mnist-worker-0", "mnist-worker-1"]

            def children(kind):
                return sorted(o["metadata"]["name"] for o in kube.items(kind, ns))
            assert c.run_until(lambda: children("pods") == pods and children("services") == pods, timeout=30)
            for p in pods:  # no kubelet: the test writes pod status
                set_pod(kube, p, "Running", namespace=ns)
            assert c.run_until(lambda: tfjob.has_condition(kube.get_tfjob("mnist", ns), "Running"), timeout=30)
            set_pod(kube, "mnist-worker-0", "Succeeded", 0, namespace=ns)
            set_pod(kube, "mnist-worker-1", "Succeeded", 0, namespace=ns)
            job = kube.wait_for_job("mnist", namespace=ns, timeout=30)
            assert tfjob.has_condition(job, "Succeeded")
            assert c.wait_idle(10)  # the worker counts the write after the watch has shown it
            m = c.metrics()
            assert m.jobs_succeeded == 1 and m.api_calls["create"] == 6
        kube.create_tfjob(make_job("bad", {"Worker": 1}, namespace=ns, image=None))
        with tfjob.Controller(kube, namespace=ns):
            bad = kube.wait_for_job("bad", conditions="Failed", namespace=ns, timeout=30)
        assert tfjob.condition(bad, "Failed")["reason"] == "TFJobFailedValidation"
    assert "ADDED" in seen and seen.count("MODIFIED") >= 3
