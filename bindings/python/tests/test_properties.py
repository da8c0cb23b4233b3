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
