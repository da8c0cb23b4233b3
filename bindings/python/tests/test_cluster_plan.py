import datetime as dt
import json

import pytest

import tfjob

JOB = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: dist, namespace: ml, uid: u-1}
spec:
  tfReplicaSpecs:
    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: i}]}}}
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template: {spec: {containers: [{name: tensorflow, image: i}]}}
"""
T0 = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def test_tf_config_text_is_v19_bytes():
    job = tfjob.Job.from_yaml(JOB)
    text = tfjob.tf_config_text(job, "worker", 1)
    assert text == ('{"cluster":{"ps":["dist-ps-0.ml.svc:2222"],"worker":["dist-worker-0.ml.svc:2222",'
                    '"dist-worker-1.ml.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}')
    cfg = job.tf_config("PS", 0, cluster_domain="cluster.local")
    assert cfg["cluster"]["ps"] == ["dist-ps-0.ml.svc.cluster.local:2222"]
    assert cfg["task"] == {"type": "ps", "index": 0}


def test_address_resolver_callback():
    job = tfjob.Job.from_yaml(JOB)
    ports = {("ps", 0): 5000, ("worker", 0): 5001, ("worker", 1): 5002}
    cfg = job.tf_config("Worker", 0, address=lambda t, i, p: f"127.0.0.1:{ports[(t.lower(), i)]}")
    assert cfg["cluster"] == {"ps": ["127.0.0.1:5000"], "worker": ["127.0.0.1:5001", "127.0.0.1:5002"]}


def test_address_resolver_errors_propagate():
    job = tfjob.Job.from_yaml(JOB)
    with pytest.raises(KeyError):
        job.tf_config("Worker", 0, address=lambda t, i, p: {}["missing"])


def test_not_distributed_is_none():
    single = tfjob.Job.from_yaml(JOB.replace("replicas: 2", "replicas: 1").replace(
        "    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: i}]}}}\n", ""))
    assert single.tf_config("Worker", 0) is None
    assert tfjob.tf_config_text(single, "Worker", 0) == ""


def test_render_children():
    children = tfjob.Job.from_yaml(JOB).render()
    names = sorted(p["metadata"]["name"] for p in children["pods"])
    assert names == ["dist-ps-0", "dist-worker-0", "dist-worker-1"]
    assert all(s["spec"]["clusterIP"] == "None" for s in children["services"])
    worker = next(p for p in children["pods"] if p["metadata"]["name"] == "dist-worker-0")
    assert worker["spec"]["restartPolicy"] == "Never"  # ExitCode -> Never
    assert worker["metadata"]["labels"]["training.kubeflow.org/job-role"] == "master"


def test_plan_new_job_then_success():
    job = tfjob.Job.from_yaml(JOB)
    p = tfjob.plan(job, [], [], now=T0)
    assert [a.action for a in p.actions].count("create") == 6
    assert p.changed
    assert {c["type"] for c in p.status["conditions"]} == {"Created"}
    pods = [a.object for a in p.actions if a.action == "create" and a.kind == "Pod"]
    for pod in pods:
        pod["status"] = {"phase": "Succeeded", "containerStatuses": [
            {"name": "tensorflow", "state": {"terminated": {"exitCode": 0}}}]}
    job_dict = job.to_dict()
    job_dict["status"] = p.status
    done = tfjob.plan(tfjob.Job.from_dict(job_dict), pods, None, now=T0 + dt.timedelta(minutes=5))
    succeeded = [c for c in done.status["conditions"] if c["type"] == "Succeeded"]
    assert succeeded and succeeded[0]["status"] == "True"
    assert done.status["completionTime"] == "2026-01-01T00:05:00Z"


def test_plan_inputs_and_errors():
    job = tfjob.Job.from_yaml(JOB)
    assert tfjob.plan(job, "[]", b"[]", now="2026-01-01T00:00:00Z").changed
    assert tfjob.plan(job, {"kind": "PodList", "items": []}, now=1767225600).changed
    with pytest.raises(tfjob.ParseError):
        tfjob.plan(job, "[1, 2", now=T0)
    with pytest.raises(ValueError):
        tfjob.plan(job, now=dt.datetime(2026, 1, 1))
