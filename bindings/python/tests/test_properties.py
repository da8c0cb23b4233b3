"""Property tests: generated TFJobs survive parse -> serialise, and nothing generated crashes."""
import json

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

import tfjob  # noqa: E402

# NUL and lone surrogates (not valid Unicode text) are refused in strings (docs/limits.md).
texts = st.text(alphabet=st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=20)
json_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-2**53, max_value=2**53), texts)
json_values = st.recursive(json_scalars, lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)), max_leaves=20)

replica_types = st.sampled_from(["PS", "Worker", "Chief", "Master", "Evaluator", "worker", "Unknown"])


@st.composite
def tfjobs(draw):
    specs = {}
    for rtype in draw(st.lists(replica_types, max_size=4, unique=True)):
        container = {"name": draw(st.sampled_from(["tensorflow", "other"])), "image": draw(texts)}
        container["extra"] = draw(json_values)
        spec = {"template": {"metadata": {"annotations": {"a": "b"}}, "spec": {"containers": [container]}}}
        if draw(st.booleans()):
            spec["replicas"] = draw(st.integers(min_value=-1, max_value=5))
        if draw(st.booleans()):
            spec["restartPolicy"] = draw(st.sampled_from(["Always", "OnFailure", "Never", "ExitCode", "Bad"]))
        specs[rtype] = spec
    return {"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
            "metadata": {"name": draw(st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True))},
            "spec": {"tfReplicaSpecs": specs, "unknownField": draw(json_values)}}


@settings(max_examples=200, deadline=None)
@given(tfjobs())
def test_round_trip_keeps_every_field(obj):
    job = tfjob.Job.from_dict(obj)
    assert job.to_dict() == obj
    assert tfjob.Job.from_json(job.to_json(pretty=True)).to_dict() == obj


@settings(max_examples=200, deadline=None)
@given(tfjobs(), st.sampled_from([None, "training-operator-1.9"]))
def test_validate_and_default_never_crash(obj, compat):
    job = tfjob.Job.from_dict(obj)
    errors = job.validate(compat=compat)
    assert all(e.field and e.type.startswith("FieldValue") for e in errors)
    defaulted = job.with_defaults(compat=compat).to_dict()
    assert defaulted["spec"]["unknownField"] == obj["spec"]["unknownField"]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_give_errors_not_crashes(data):
    try:
        tfjob.Job.from_text(data)
    except tfjob.Error as exc:
        assert str(exc)


BASE_JOB = {"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "p", "uid": "u"},
            "spec": {"runPolicy": {"backoffLimit": 3},
                     "tfReplicaSpecs": {
                         "Chief": {"template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}},
                         "Worker": {"replicas": 3, "restartPolicy": "ExitCode",
                                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "i"}]}}}}}}


@st.composite
def pods(draw):
    out = []
    for _ in range(draw(st.integers(min_value=0, max_value=6))):
        labels = {"training.kubeflow.org/job-name": "p",
                  "training.kubeflow.org/replica-type": draw(st.sampled_from(["chief", "worker", "ps", "bogus"])),
                  "training.kubeflow.org/replica-index": draw(st.sampled_from(["0", "1", "2", "7", "-1", "x"]))}
        if draw(st.booleans()):
            labels.pop(draw(st.sampled_from(sorted(labels))))
        status = {"phase": draw(st.sampled_from(["Pending", "Running", "Succeeded", "Failed", "Unknown", ""]))}
        if draw(st.booleans()):
            status["containerStatuses"] = [{"name": "tensorflow", "restartCount": draw(st.integers(0, 5)),
                                            "state": {"terminated": {"exitCode": draw(st.integers(-1, 256))}}}]
        pod = {"metadata": {"name": f"pod-{len(out)}", "labels": labels}, "status": status}
        if draw(st.booleans()):
            pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        out.append(pod)
    return out


@settings(max_examples=300, deadline=None)
@given(pods(), st.integers(min_value=0, max_value=5), st.sampled_from([None, "training-operator-1.9"]),
       st.booleans())
def test_plan_never_raises_on_pod_states(pod_list, requeues, compat, suspended):
    obj = json.loads(json.dumps(BASE_JOB))
    obj["spec"]["runPolicy"]["suspend"] = suspended
    job = tfjob.Job.from_dict(obj)
    p = tfjob.plan(job, pod_list, [], now=1767225600, requeues=requeues, compat=compat)
    assert isinstance(p.status, dict)
    for a in p.actions:
        assert a.action in ("create", "delete", "event")
