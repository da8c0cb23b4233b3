"""Gang scheduling, per-replica rendering, the PodGroup, every render option of the planner,
the simulator, and bad input. Expectations come from docs/cluster.md's rules and from
tfjobctl's output for the same input, never from an earlier run of the binding."""
import copy
import json
import os
import pathlib
import subprocess

import pytest

import tfjob

ROOT = pathlib.Path(__file__).resolve().parents[3]

GANG = """
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: gang, namespace: ml, uid: u-9, annotations: {team: a}}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 3, queue: q1, priorityClass: high}}
  tfReplicaSpecs:
    PS:
      replicas: 2
      template: {spec: {priorityClassName: low, containers: [{name: tensorflow, image: i,
                 resources: {requests: {cpu: "1", memory: 1Gi}}}]}}
    Worker:
      replicas: 2
      template: {spec: {priorityClassName: high, containers: [{name: tensorflow, image: i,
                 resources: {limits: {cpu: 500m, memory: 512Mi}}}]}}
"""
OWNER = [{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "gang", "uid": "u-9", "controller": True,
          "blockOwnerDeletion": True}]
NOW = "2024-05-01T10:00:00Z"


def tfjobctl():
    """tfjobctl of the build whose library the tests load: $TFJOBCTL, else the one of
    TFJOB_LIBRARY's build tree (TFJOB_LIBRARY = BUILD/lib/libtfjob.so.0)."""
    if os.environ.get("TFJOBCTL"):
        return os.environ["TFJOBCTL"]
    lib = os.environ.get("TFJOB_LIBRARY")
    path = pathlib.Path(lib).resolve().parents[1] / "src" / "tfjobctl" / "tfjobctl" if lib else None
    if path is None or not path.exists():
        pytest.skip("tfjobctl of the tested build not found (TFJOBCTL and TFJOB_LIBRARY unset)")
    return str(path)


def run_ctl(*args):
    return subprocess.run([tfjobctl(), *args], check=True, capture_output=True, text=True).stdout


def undecorated(pod):
    """The pod without what gang scheduling adds (docs/cluster.md)."""
    pod = copy.deepcopy(pod)
    meta = pod["metadata"]
    ann = meta.get("annotations", {})
    for key in ("scheduling.k8s.io/group-name", "volcano.sh/task-spec"):
        ann.pop(key, None)
    if "annotations" in meta and not ann:
        del meta["annotations"]
    meta["labels"].pop("scheduling.x-k8s.io/pod-group", None)
    pod["spec"].pop("schedulerName", None)
    return pod


@pytest.fixture
def gang():
    with tfjob.Job.from_yaml(GANG) as job:
        yield job


@pytest.mark.parametrize("scheduler,name,want", [
    ("volcano", None, "volcano"), ("volcano", "vc2", "vc2"),
    ("scheduler-plugins", None, "scheduler-plugins-scheduler"), ("scheduler-plugins", "sp", "sp")])
def test_render_gang_decoration(gang, scheduler, name, want):
    plain = gang.render()
    got = gang.render(gang_scheduler=scheduler, scheduler_name=name)
    assert got["services"] == plain["services"]
    assert len(got["pods"]) == 4
    for i, pod in enumerate(got["pods"]):
        meta = pod["metadata"]
        assert pod["spec"]["schedulerName"] == want
        rtype = meta["labels"]["training.kubeflow.org/replica-type"]
        if scheduler == "volcano":
            assert meta["annotations"] == {"scheduling.k8s.io/group-name": "gang", "volcano.sh/task-spec": rtype}
            assert "scheduling.x-k8s.io/pod-group" not in meta["labels"]
        else:
            assert meta["labels"]["scheduling.x-k8s.io/pod-group"] == "gang"
            assert "annotations" not in meta
        assert undecorated(pod) == plain["pods"][i]
        assert gang.render_pod(rtype, i % 2, gang_scheduler=scheduler, scheduler_name=name) == pod


def test_render_gang_keeps_template_scheduler():
    with tfjob.Job.from_yaml(GANG.replace("priorityClassName: low,", "priorityClassName: low, schedulerName: mine,")) as j:
        assert j.render_pod("PS", 0, gang_scheduler="volcano")["spec"]["schedulerName"] == "mine"


def test_render_matches_tfjobctl_render(tmp_path):
    path = tmp_path / "job.yaml"
    path.write_text(GANG)
    for args, kw in [([], {}), (["--cluster-domain", "cluster.local", "--exclude-evaluator"],
                                {"cluster_domain": "cluster.local", "exclude_evaluator": True}),
                     (["--compat", "training-operator-1.9"], {"compat": "training-operator-1.9"})]:
        with tfjob.Job.load(path) as job:
            assert job.render(**kw) == json.loads(run_ctl("render", *args, str(path)))
    nons = tmp_path / "nons.yaml"
    nons.write_text(GANG.replace("namespace: ml, ", ""))
    with tfjob.Job.load(nons) as job:
        assert job.render(namespace="other") == json.loads(run_ctl("render", "--namespace", "other", str(nons)))


def test_render_service_matches_render(gang):
    plain = gang.render()
    assert [gang.render_service(t, i) for t, i in (("ps", 0), ("PS", 1), ("Worker", 0), ("worker", 1))] \
        == plain["services"]
    with pytest.raises(tfjob.NotFoundError):
        gang.render_service("chief", 0)
    with pytest.raises(tfjob.Error):
        gang.render_pod("worker", -1)


def test_pod_group_rules(gang):
    # No priorities: canonical order, both PS replicas (requests 1, 1Gi) + one worker (limits 500m, 512Mi).
    assert gang.pod_group("volcano") == {
        "apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "gang", "namespace": "ml", "annotations": {"team": "a"}, "ownerReferences": OWNER},
        "spec": {"minMember": 3, "queue": "q1", "priorityClassName": "high",
                 "minResources": {"cpu": "2500m", "memory": "2560Mi"}}}
    # Priorities (a callable or a mapping): the workers come first.
    for prio in ({"high": 100, "low": 1}, lambda name: {"high": 100, "low": 1}.get(name)):
        pg = tfjob.pod_group(gang, "scheduler-plugins", priority=prio)
        assert (pg["apiVersion"], pg["kind"]) == ("scheduling.x-k8s.io/v1alpha1", "PodGroup")
        assert pg["spec"]["minMember"] == 3 and "queue" not in pg["spec"]
        assert pg["spec"]["minResources"] == {"cpu": "2", "memory": "2Gi"}
    with tfjob.Job.from_yaml(GANG.replace("minAvailable: 3, queue: q1, ", "")) as j:
        spec = j.pod_group("volcano")["spec"]
        assert (spec["minMember"], spec["queue"], spec["minResources"]) == (4, "default", {"cpu": "3", "memory": "3Gi"})
    with pytest.raises(ValueError):
        gang.pod_group(None)
    with pytest.raises(ValueError):
        gang.pod_group("kube-batch")


def test_priority_callback_errors_propagate(gang):
    def boom(name):
        raise RuntimeError("lookup failed")
    with pytest.raises(RuntimeError, match="lookup failed"):
        gang.pod_group("volcano", priority=boom)
    with pytest.raises(TypeError):
        gang.pod_group("volcano", priority=lambda name: "high")
    with pytest.raises(ValueError):
        gang.pod_group("volcano", priority={"high": 2**40})
    with pytest.raises(TypeError):
        gang.pod_group("volcano", priority=5)


def test_plan_gang_options(gang):
    # volcano's pods wait for a new PodGroup; they are created once it is scheduled
    p = tfjob.plan(gang, now=NOW, gang_scheduler="volcano")
    assert [(a.action, a.kind) for a in p.actions if a.kind == "PodGroup"] == [("create", "PodGroup"), ("wait", "PodGroup")]
    assert not [a for a in p.actions if a.action == "create" and a.kind == "Pod"]
    running = {"metadata": {"name": "gang"}, "status": {"phase": "Running"}}
    for kw in ({"gang_scheduler": "volcano"}, {"gang_scheduler": "scheduler-plugins", "scheduler_name": "sp"}):
        p = tfjob.plan(gang, now=NOW, pod_group=running, **kw)
        created = [a for a in p.actions if a.action == "create" and a.kind == "Pod"]
        assert len(created) == 4
        assert not [a for a in p.actions if a.reason == "SetPodTemplateSchedulerName"]
        for a in created:
            labels = a.object["metadata"]["labels"]
            assert a.object == gang.render_pod(labels["training.kubeflow.org/replica-type"],
                                               int(labels["training.kubeflow.org/replica-index"]), **kw)
    with tfjob.Job.from_yaml(GANG.replace("priorityClassName: low,", "priorityClassName: low, schedulerName: mine,")) as j:
        p = tfjob.plan(j, now=NOW, gang_scheduler="volcano", pod_group=running)
        pods = [a for a in p.actions if a.action == "create" and a.kind == "Pod"]
        warnings = [a for a in p.actions if a.action == "event" and a.type == "Warning"
                    and a.reason == "SetPodTemplateSchedulerName"]
        assert len(pods) == 4 and len(warnings) == len(pods)
        assert not [a for a in tfjob.plan(j, now=NOW).actions if a.reason == "SetPodTemplateSchedulerName"]


def test_plan_render_options_reach_created_pods(tmp_path, gang):
    """Every render option of plan() shows in the pods it creates as render_pod shows it, and
    plan() equals tfjobctl plan for the options both have."""
    def addr(rtype, index, port):
        return f"10.0.0.{index}:{port + len(rtype)}"
    kw = {"cluster_domain": "c.l", "exclude_evaluator": True, "address": addr}
    p = tfjob.plan(gang, now=NOW, **kw)
    for a in p.actions:
        if a.action == "create" and a.kind == "Pod":
            labels = a.object["metadata"]["labels"]
            assert a.object == gang.render_pod(labels["training.kubeflow.org/replica-type"],
                                               int(labels["training.kubeflow.org/replica-index"]), **kw)
    path = tmp_path / "job.yaml"
    path.write_text(GANG)
    for args, kw2 in [([], {}), (["--cluster-domain", "c.l", "--requeues", "3", "--compat", "training-operator-1.9"],
                                 {"cluster_domain": "c.l", "requeues": 3, "compat": "training-operator-1.9"})]:
        want = json.loads(run_ctl("plan", "--job", str(path), "--now", NOW, *args))
        assert tfjob.plan(gang, now=NOW, **kw2).raw == want
    with pytest.raises(TypeError):
        tfjob.plan(gang, now=NOW, gang_sceduler="volcano")  # misspelt keyword


def test_simulate_matches_tfjobctl():
    for scenario in sorted((ROOT / "examples" / "scenarios").glob("*.yaml"))[:3]:
        assert tfjob.simulate(scenario.read_text()) == run_ctl("simulate", str(scenario))
        assert tfjob.simulate(scenario.read_bytes(), compat="training-operator-1.9", cluster_domain="c.l") == \
            run_ctl("simulate", "--compat", "training-operator-1.9", "--cluster-domain", "c.l", str(scenario))
    with pytest.raises(tfjob.Error):
        tfjob.simulate("not: [a scenario")
    with pytest.raises(TypeError):
        tfjob.simulate(None)


BAD_ARGUMENTS = [
    lambda j: tfjob.render(j, namespace=5),
    lambda j: tfjob.render(j, cluster_domain="a\0b"),
    lambda j: tfjob.render(j, gang_scheduler=1),
    lambda j: tfjob.render(j, address="not callable"),
    lambda j: tfjob.render(j, compat="1.8"),
    lambda j: tfjob.render_pod(j, None, 0),
    lambda j: tfjob.render_pod(j, "worker", "0"),
    lambda j: tfjob.render_pod(j, "worker", 2**70),
    lambda j: tfjob.tf_config(j, "wor\0ker", 0),
    lambda j: tfjob.tf_config(j, "worker", 0, address=lambda t, i, p: "h" * 5000 + ":1"),
    lambda j: tfjob.tf_config(j, "worker", 0, address=lambda t, i, p: None),
    lambda j: tfjob.plan(j, 42, now=NOW),
    lambda j: tfjob.plan(j, "[]\0", now=NOW),
    lambda j: tfjob.plan(j, now=object()),
    lambda j: tfjob.plan(j, now=float("nan")),
    lambda j: tfjob.plan(j, now=1e300),
    lambda j: tfjob.plan(j, now="yesterday"),
    lambda j: tfjob.plan(j, now=NOW, requeues=-1),
    lambda j: tfjob.plan(None, now=NOW),
    lambda j: tfjob.render("not a job"),
    lambda j: tfjob.Job.from_text(5),
    lambda j: tfjob.Job.from_text(None),
    lambda j: tfjob.Job.from_text("\ud800"),
    lambda j: tfjob.Job.from_yaml("a: b", filename=3),
]


@pytest.mark.parametrize("call", BAD_ARGUMENTS)
def test_bad_arguments_raise_clear_errors(gang, call):
    with pytest.raises((TypeError, ValueError, tfjob.Error)):
        call(gang)


def test_bad_documents_raise_library_errors(gang):
    for text in (b"\xff\xfe{not utf-8", b"kind: TFJob\nmetadata: {name: \xc3\x28}", b"", b"\0", b"[" * 100000,
                 b"a: " + b"x" * (17 * 1024 * 1024)):
        with pytest.raises(tfjob.Error):
            tfjob.Job.from_text(text)
    with pytest.raises(tfjob.Error):
        tfjob.plan(gang, b"- {kind: Pod, metadata: {name: \xc3\x28}}", now=NOW)  # invalid UTF-8
    with pytest.raises(tfjob.Error):
        tfjob.plan(gang, [1, 2], now=NOW)


def test_closed_job_raises(gang):
    job = tfjob.Job.from_yaml(GANG)
    job.close()
    for call in (job.render, lambda: job.render_pod("ps", 0), lambda: job.pod_group("volcano"), job.validate,
                 job.to_json, lambda: tfjob.plan(job, now=NOW), lambda: job.tf_config("ps", 0)):
        with pytest.raises(tfjob.Error):
            call()


SIMPLE = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: mnist}\nspec:\n  tfReplicaSpecs:\n" \
         "    Worker: {replicas: 2, template: {spec: {containers: [{name: tensorflow, image: i}]}}}\n"


def test_parse_options_and_parse_all(tmp_path):
    two = SIMPLE + "---\n" + SIMPLE.replace("name: mnist", "name: second") + "---\n"
    jobs = tfjob.Job.parse_all(two)
    assert [j.name for j in jobs] == ["mnist", "second"]
    path = tmp_path / "two.yaml"
    path.write_text(two)
    assert [j.name for j in tfjob.Job.load_all(path)] == ["mnist", "second"]
    with pytest.raises(tfjob.ParseError):  # one document only (job.h)
        tfjob.Job.from_text(two)
    assert tfjob.Job.parse_all("---\n---\n") == []
    for kw in ({"max_documents": 1},):
        with pytest.raises(tfjob.Error) as e:
            tfjob.Job.parse_all(two, **kw)
        assert e.value.code == -6  # TFJOB_ELIMIT
    for kw in ({"max_input_bytes": 10}, {"max_depth": 2}, {"max_nodes": 5}):
        with pytest.raises(tfjob.Error) as e:
            tfjob.Job.from_text(SIMPLE, **kw)
        assert e.value.code == -6, kw
    aliases = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a, labels: &l {x: y}, annotations: *l}\n" \
              "spec: {x: *l}\n"
    with pytest.raises(tfjob.Error) as e:
        tfjob.Job.from_text(aliases, max_aliases=1)
    assert e.value.code == -6
    assert tfjob.Job.from_text(aliases, max_aliases=2).name == "a"
    with pytest.raises(tfjob.ParseError) as e:
        tfjob.Job.from_text(SIMPLE, "x.json", format="json")
    assert e.value.file == "x.json"
    assert tfjob.Job.from_text(SIMPLE, format="yaml").name == "mnist"
    for bad in ({"format": "toml"}, {"format": True}, {"max_depth": -1}, {"max_depth": "3"}):
        with pytest.raises(ValueError):
            tfjob.Job.from_text(SIMPLE, **bad)
    with pytest.raises(TypeError):
        tfjob.Job.from_text(SIMPLE, max_deep=3)


def test_transport_string_arguments_are_checked(memory):
    """A NUL in a name must not address another object (C would cut the string there); wrong
    types are TypeErrors, not crashes or AttributeErrors."""
    memory.create("pods", {"metadata": {"name": "a", "namespace": "default"}, "spec": {"containers": []}})
    for call in (lambda: memory.get("pods", "a\0b"), lambda: memory.delete("pods", "a\0b"),
                 lambda: memory.patch("pods", "a\0x", {"metadata": {"labels": {"x": "y"}}}),
                 lambda: memory.get("pods", "a", namespace="default\0x"),
                 lambda: memory.list("pods", label_selector="x\0y"), lambda: memory.create("pods", '{"a":1}\0'),
                 lambda: tfjob.Resource.lookup("pods\0")):
        with pytest.raises(ValueError):
            call()
    for call in (lambda: memory.get("pods", None), lambda: memory.get("pods", 5), lambda: memory.create("pods", 5),
                 lambda: memory.create("pods", [1]), lambda: memory.delete("pods", b"a")):
        with pytest.raises(TypeError):
            call()
    assert memory.get("pods", "a")["metadata"]["name"] == "a"  # still there
    assert "labels" not in memory.get("pods", "a")["metadata"]
