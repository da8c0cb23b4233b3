import gc
import json
import os
import pathlib

import pytest

import tfjob

ROOT = pathlib.Path(__file__).resolve().parents[3]
EXAMPLES = ROOT / "examples"

SIMPLE = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist, namespace: ml, uid: u-1}
spec:
  tfReplicaSpecs:
    worker:
      replicas: 2
      template:
        spec:
          containers: [{name: tensorflow, image: tf:2, x-unknown: keep}]
"""


def test_library_version_matches_package():
    assert tfjob.library_version() == tfjob.__version__


def test_load_examples_and_validate():
    for path in sorted(EXAMPLES.glob("*.yaml")):
        with tfjob.Job.load(path) as job:
            assert job.validate() == [], path


def test_accessors_defaults_and_unknown_fields_kept():
    job = tfjob.Job.from_yaml(SIMPLE)
    assert (job.name, job.namespace, job.uid) == ("mnist", "ml", "u-1")
    d = job.with_defaults().to_dict()
    spec = d["spec"]
    assert spec["runPolicy"]["cleanPodPolicy"] == "Running"
    assert spec["successPolicy"] == ""
    worker = spec["tfReplicaSpecs"]["Worker"]
    assert worker["restartPolicy"] == "Never"
    container = worker["template"]["spec"]["containers"][0]
    assert container["x-unknown"] == "keep"
    assert container["ports"] == [{"name": "tfjob-port", "containerPort": 2222}]
    compat = job.with_defaults(compat=tfjob.COMPAT_TRAINING_OPERATOR_1_9).to_dict()
    assert compat["spec"]["runPolicy"]["cleanPodPolicy"] == "None"
    # The original is untouched.
    assert "runPolicy" not in job.to_dict()["spec"]


def test_validation_errors_are_field_errors():
    job = tfjob.Job.from_dict({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x"},
                               "spec": {"tfReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [
                                   {"name": "tensorflow"}]}}}}}})
    errors = job.validate()
    assert [(e.field, e.type, e.detail) for e in errors] == [
        ("spec.tfReplicaSpecs[Worker].template.spec.containers[0].image", "FieldValueRequired", "must be required")]
    assert str(errors[0]).startswith("spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value")


def test_update_rules_with_old():
    base = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "x"},
            "spec": {"runPolicy": {"managedBy": "kubeflow.org/training-operator"},
                     "tfReplicaSpecs": {"Worker": {"template": {"spec": {"containers": [
                         {"name": "tensorflow", "image": "i"}]}}}}}}
    old = tfjob.Job.from_dict(base)
    base["spec"]["runPolicy"]["managedBy"] = "kueue.x-k8s.io/multikueue"
    new = tfjob.Job.from_dict(base)
    assert [e.type for e in new.validate(old=old)] == ["FieldValueInvalid"]
    assert new.validate() == []


def test_strict_unknown_fields():
    job = tfjob.Job.from_yaml(SIMPLE.replace("replicas: 2", "replica: 2"))
    assert [(e.field, e.type, e.detail) for e in job.validate()] == [
        ("spec.tfReplicaSpecs[worker].replica", "FieldValueNotSupported",
         'unknown field "spec.tfReplicaSpecs.worker.replica"; did you mean "replicas"?'),
        ("spec.tfReplicaSpecs[worker].template.spec.containers[0].x-unknown", "FieldValueNotSupported",
         'unknown field "spec.tfReplicaSpecs.worker.template.spec.containers[0].x-unknown"')]
    assert job.validate(strict=False) == []
    # Defaults keep unknown fields (the default output does not change).
    assert job.with_defaults().to_dict()["spec"]["tfReplicaSpecs"]["Worker"]["replica"] == 2


def test_parse_error_has_position():
    with pytest.raises(tfjob.ParseError) as info:
        tfjob.Job.from_yaml("a: [1, 2\nb: 3\n", filename="bad.yaml")
    assert info.value.file == "bad.yaml"
    assert info.value.line == 2 and info.value.column > 0
    assert "bad.yaml:2:" in str(info.value)


def test_not_a_tfjob_is_schema_error():
    with pytest.raises(tfjob.SchemaError):
        tfjob.Job.from_yaml("apiVersion: v1\nkind: Pod\n")
    with pytest.raises(tfjob.Error):
        tfjob.Job.from_yaml("")


def test_wrong_types_fail_defaults_with_field():
    job = tfjob.Job.from_yaml(SIMPLE.replace("replicas: 2", "replicas: three"))
    assert [e.type for e in job.validate(strict=False)] == ["FieldValueTypeInvalid"]
    with pytest.raises(tfjob.SchemaError) as info:
        job.with_defaults()
    assert info.value.field == "spec.tfReplicaSpecs[worker].replicas"


def test_exit_codes():
    assert tfjob.exit_code_retryable(137)
    assert not tfjob.exit_code_retryable(139)
    assert tfjob.exit_code_retryable(139, compat=tfjob.COMPAT_TRAINING_OPERATOR_1_9)
    with pytest.raises(ValueError):
        tfjob.exit_code_retryable(1, compat="nope")


def test_close_is_idempotent_and_gc_releases():
    job = tfjob.Job.from_yaml(SIMPLE)
    job.close()
    job.close()
    with pytest.raises(tfjob.Error):
        job.to_json()
    for _ in range(1000):
        tfjob.Job.from_yaml(SIMPLE)
    gc.collect()


def test_warnings_share_the_library_rules():
    job = tfjob.Job.from_yaml("""
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: w}
spec:
  tfReplicaSpecs:
    Worker:
      restartPolicy: Never
      template:
        spec:
          containers: [{name: tensorflow, image: tf, resources: {limits: {nvidia.com/gpu: 1}}}]
""")
    assert job.validate() == []
    got = job.warnings()
    assert [(w.reason, w.field) for w in got] == [
        ("RestartPolicyNever", "spec.tfReplicaSpecs[Worker].restartPolicy"),
        ("GPUWithoutRequests", "spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.requests")]
    assert str(got[0]).startswith("spec.tfReplicaSpecs[Worker].restartPolicy: restartPolicy Never should rarely be used")
    assert isinstance(got[0], tfjob.JobWarning)
    istio = job.warnings(istio_injection=True)
    assert [w.reason for w in istio] == ["RestartPolicyNever", "IstioSidecar", "GPUWithoutRequests"]
    assert tfjob.Job.from_yaml(SIMPLE).warnings() == []
