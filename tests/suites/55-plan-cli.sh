#!/usr/bin/env bash
# tfjobctl plan / simulate: output shape, exit codes and a multi-step run driven through the CLI.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
export TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl"
export DATA="$PWD/tests/data/plan"
export SCENARIOS="$PWD/examples/scenarios"
exec python3 - <<'PY'
import json, os, subprocess, sys, tempfile

ctl, data, scen = os.environ["TFJOBCTL"], os.environ["DATA"], os.environ["SCENARIOS"]
failures = 0

def run(*args, stdin=None):
    p = subprocess.run([ctl, *args], input=stdin, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr

def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)

def plan(*args):
    rc, out, err = run("plan", *args)
    check(rc == 0, f"plan {args}: exit {rc}: {err}")
    check(out.count("\n") == 1, "plan prints one line")
    return json.loads(out)

def shape(p):
    check(set(p) == {"actions", "status", "statusChanged", "requeueAfterSeconds"}, f"top-level keys {sorted(p)}")
    check(isinstance(p["statusChanged"], bool), "statusChanged is a bool")
    check(p["requeueAfterSeconds"] is None or isinstance(p["requeueAfterSeconds"], int), "requeue number|null")
    for a in p["actions"]:
        if a["action"] == "create":
            check(set(a) == {"action", "kind", "name", "object"} and a["kind"] in ("Pod", "Service", "PodGroup"),
                  f"create {a.keys()}")
            check(a["object"]["metadata"]["name"] == a["name"], "create object carries its name")
        elif a["action"] == "delete":
            check(set(a) == {"action", "kind", "name"} and a["kind"] in ("Pod", "Service", "TFJob", "PodGroup"), f"delete {a}")
        elif a["action"] in ("adopt", "release", "patch"):
            check(set(a) == {"action", "kind", "name", "patch"} and isinstance(a["patch"], dict), f"{a['action']} {a}")
        elif a["action"] == "wait":
            check(a == {"action": "wait", "kind": "PodGroup", "name": a["name"]}, f"wait {a}")
        else:
            check(a["action"] == "event" and set(a) == {"action", "type", "reason", "message"}, f"event {a}")
            check(a["type"] in ("Normal", "Warning"), "event type")

job = os.path.join(data, "ps-worker.yaml")
now = "2024-01-01T00:00:00Z"

# 1. a new job: every pod and service is created, Created is set
p = plan("--job", job, "--now", now, "--cluster-domain", "cluster.local")
shape(p)
creates = [a for a in p["actions"] if a["action"] == "create"]
check(len(creates) == 6, f"6 creates, got {len(creates)}")
check(p["statusChanged"] is True, "new job: status changed")
check(p["status"]["conditions"][0]["reason"] == "TFJobCreated", "Created condition")
pod = next(a["object"] for a in creates if a["name"] == "dist-worker-1" and a["kind"] == "Pod")
env = {e["name"]: e["value"] for e in pod["spec"]["containers"][0].get("env", [])}
tfc = json.loads(env["TF_CONFIG"])
check(tfc["task"] == {"type": "worker", "index": 1}, "TF_CONFIG task")
check(tfc["cluster"]["ps"] == ["dist-ps-0.ns.svc.cluster.local:2222"], "cluster domain reaches TF_CONFIG")

# 2. feed back the status and the created objects (as a List, in YAML-compatible JSON) and run
with tempfile.TemporaryDirectory() as tmp:
    def write(name, obj):
        path = os.path.join(tmp, name)
        with open(path, "w") as f:
            json.dump(obj, f)
        return path
    import copy
    jobdoc = json.loads(subprocess.run([ctl, "default", job], capture_output=True, text=True).stdout)
    jobdoc["status"] = p["status"]
    pods = [copy.deepcopy(a["object"]) for a in creates if a["kind"] == "Pod"]
    for po in pods:
        po["status"] = {"phase": "Running", "containerStatuses": [{"name": "tensorflow", "restartCount": 0, "state": {"running": {}}}]}
    svcs = [a["object"] for a in creates if a["kind"] == "Service"]
    jp, pp, sp = write("job.json", jobdoc), write("pods.json", {"kind": "PodList", "items": pods}), write("svcs.json", svcs)
    p2 = plan("--job", jp, "--pods", pp, "--services", sp, "--now", "2024-01-01T00:01:00Z")
    shape(p2)
    check(p2["actions"] == [], f"steady: no actions, got {p2['actions']}")
    check(any(c["type"] == "Running" and c["status"] == "True" for c in p2["status"]["conditions"]), "Running")
    # worker 1 fails with a permanent code (ExitCode policy): the job fails in both modes
    pods[2]["status"] = {"phase": "Failed", "containerStatuses": [{"name": "tensorflow", "state": {"terminated": {"exitCode": 1}}}]}
    jobdoc["status"] = p2["status"]
    jp, pp = write("job.json", jobdoc), write("pods.json", pods)
    for compat in ("documented", "training-operator-1.9"):
        p3 = plan("--job", jp, "--pods", pp, "--services", sp, "--now", "2024-01-01T00:02:00Z", "--compat", compat)
        shape(p3)
        failed = [c for c in p3["status"]["conditions"] if c["type"] == "Failed"]
        check(failed and failed[0]["status"] == "True", f"{compat}: Failed")
        check(any(a.get("reason") == "ExitedWithCode" for a in p3["actions"]), "ExitedWithCode event")
        if compat == "documented":
            check("completionTime" in p3["status"], "completionTime set")
    # determinism: same inputs, same bytes
    a = run("plan", "--job", jp, "--pods", pp, "--now", "2024-01-01T00:02:00Z")[1]
    b = run("plan", "--job", jp, "--pods", pp, "--now", "2024-01-01T00:02:00Z")[1]
    check(a == b, "deterministic output")
    # YAML job from stdin
    rc, out, err = run("plan", "--job", "-", "--now", now, stdin=open(job).read())
    check(rc == 0 and json.loads(out)["actions"], "job from stdin")

    # usage and input errors exit 2
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write("[{\"a\": ")
    for args in (["plan"], ["plan", "--job"], ["plan", "--job", job, "--now", "yesterday"],
                 ["plan", "--job", job, "--requeues", "-1"], ["plan", "--job", job, "--compat", "x"],
                 ["plan", "--job", job, "--pods", bad], ["plan", "--job", "/nonexistent"],
                 ["plan", "--job", job, "extra"], ["plan", "--job", "-", "--pods", "-"],
                 ["plan", "--job", job, "--pods", "-", "--services", "-"], ["simulate"], ["simulate", bad], ["simulate", "--max-steps", "0", bad]):
        rc, out, err = run(*args)
        check(rc == 2, f"{args}: exit {rc}, want 2")
        check(err.startswith("tfjobctl: "), f"{args}: message on stderr: {err!r}")
    # a syntax error in --pods / --services names that file, line and column
    for opt in ("--pods", "--services"):
        rc, out, err = run("plan", "--job", job, opt, bad, "--now", now)
        check(rc == 2 and f"{bad}:1:" in err, f"{opt} syntax error names the file: {err!r}")
        rc, out, err = run("plan", "--job", job, opt, "-", "--now", now, stdin="[{\"a\": ")
        check(rc == 2 and "<stdin>:1:" in err, f"{opt} - syntax error names <stdin>: {err!r}")
    # the pods as a YAML List are the same input as the JSON array
    yl = os.path.join(tmp, "pods.yaml")
    with open(yl, "w") as f:
        f.write("apiVersion: v1\nkind: PodList\nitems:\n")
        for po in pods:
            f.write("- " + json.dumps(po) + "\n")
    a = run("plan", "--job", jp, "--pods", pp, "--services", sp, "--now", "2024-01-01T00:02:00Z")[1]
    b = run("plan", "--job", jp, "--pods", yl, "--services", sp, "--now", "2024-01-01T00:02:00Z")[1]
    check(a == b, "pods as a YAML List: same plan as the JSON array")
    # --now: offsets and fractional seconds are the same instant (second precision, UTC)
    for t in ("2024-01-01T01:00:00+01:00", "2023-12-31T19:30:00.999-04:30", "2024-01-01T00:00:00.000000001Z"):
        p4 = plan("--job", job, "--now", t)
        check(p4["status"]["startTime"] == "2024-01-01T00:00:00Z", f"--now {t}: startTime {p4['status'].get('startTime')}")
    for t in ("2024-01-01T00:00:00", "2024-01-01T00:00:00+0100", "2024-02-30T00:00:00Z", "2024-01-01T00:00:00.Z", "2024-01-01"):
        rc, out, err = run("plan", "--job", job, "--now", t)
        check(rc == 2 and "--now" in err and out == "", f"--now {t}: exit {rc}, {err!r}")

# 2b. gang scheduling: the PodGroup is created and volcano's pods wait for it; with the observed
# PodGroup scheduled, they are created; an orphan pod is adopted in documented mode only
def kinds(p):
    return [(a["action"], a.get("kind")) for a in p["actions"] if a["action"] != "event"]
p = plan("--job", job, "--now", now, "--gang-scheduler", "volcano")
shape(p)
check(("create", "PodGroup") in kinds(p) and ("wait", "PodGroup") in kinds(p) and ("create", "Pod") not in kinds(p),
      f"volcano, no PodGroup: create it, pods wait: {kinds(p)}")
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump({"metadata": {"name": "dist"}, "status": {"phase": "Running"}}, f)
    pg_path = f.name
p = plan("--job", job, "--now", now, "--gang-scheduler", "volcano", "--pod-group", pg_path)
check(("create", "Pod") in kinds(p) and ("wait", "PodGroup") not in kinds(p), f"volcano, scheduled: pods created: {kinds(p)}")
check(("patch", "PodGroup") in kinds(p), "the observed PodGroup's spec is patched to the job's")
rc, _, err = run("plan", "--job", job, "--now", now, "--pod-group", pg_path)
check(rc == 2 and "--gang-scheduler" in err, "--pod-group without --gang-scheduler: exit 2")
rc, _, err = run("plan", "--job", job, "--now", now, "--gang-scheduler", "kube-batch")
check(rc == 2 and "kube-batch" in err, "unknown --gang-scheduler: exit 2, named")
rc, out, _ = run("simulate", "--gang-scheduler", "volcano", os.path.join(scen, "ps-worker-success.yaml"))
check(rc == 0 and "create PodGroup" in out and "wait PodGroup" in out and "SuccessfulDeletePodGroup" in out,
      "simulate --gang-scheduler volcano: PodGroup created, waited for, deleted")
orphan = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dist-worker-0", "labels": {
    "training.kubeflow.org/job-name": "dist", "training.kubeflow.org/operator-name": "tfjob-controller",
    "training.kubeflow.org/replica-type": "worker", "training.kubeflow.org/replica-index": "0"}},
    "status": {"phase": "Running"}}
with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
    json.dump([orphan], f)
    orphan_path = f.name
p = plan("--job", job, "--now", now, "--pods", orphan_path)
shape(p)
check(("adopt", "Pod") in kinds(p) and not [a for a in p["actions"] if a.get("name") == "dist-worker-0"
                                            and a["action"] == "create" and a["kind"] == "Pod"],
      f"documented: the orphan is adopted, not created again: {kinds(p)}")
p = plan("--job", job, "--now", now, "--pods", orphan_path, "--compat", "training-operator-1.9")
check(("adopt", "Pod") not in kinds(p) and [a for a in p["actions"] if a.get("name") == "dist-worker-0"
                                            and a["action"] == "create" and a["kind"] == "Pod"],
      f"v1.9: the orphan is left alone and the job's own pod planned: {kinds(p)}")

# 3. --help
rc, out, _ = run("plan", "--help")
check(rc == 0 and "usage: tfjobctl plan" in out, "plan --help")
rc, out, _ = run("simulate", "--help")
check(rc == 0 and "usage: tfjobctl simulate" in out, "simulate --help")

# 4. every example scenario runs; the outcomes the docs describe
expect = {
    "ps-worker-success.yaml": ["Succeeded   True", "delete TFJob dist-mnist"],
    "exitcode-retry-then-success.yaml": ["TFJobRestarting", "Succeeded   True"],
    "permanent-failure.yaml": ["Failed      True", "Pods left:        0"],
    "chief-succeeds-worker-fails.yaml": ["Succeeded   True"],
    "suspend-resume.yaml": ["TFJobSuspended", "TFJobResumed", "Succeeded   True"],
    "backoff-and-deadline.yaml": ["reached the specified backoff limit"],
}
for name in sorted(os.listdir(scen)):
    rc, out, err = run("simulate", os.path.join(scen, name))
    check(rc == 0, f"simulate {name}: exit {rc}: {err}")
    for needle in ("Timeline:", "Status:", "Events:"):
        check(needle in out, f"{name}: has {needle}")
    for needle in expect.get(name, []):
        check(needle in out, f"{name}: expected {needle!r}")
rc, out, _ = run("simulate", "--compat", "training-operator-1.9", os.path.join(scen, "chief-succeeds-worker-fails.yaml"))
check(rc == 0 and "Succeeded   True" in out and "Failed      True" in out, "v1.9: Succeeded and Failed (defect 1)")
rc, out, _ = run("simulate", os.path.join(scen, "chief-succeeds-worker-fails.yaml"))
check("Failed      True" not in out, "documented: not Failed (defect 1)")

if failures:
    print(f"55-plan-cli: {failures} failure(s)")
    sys.exit(1)
print("55-plan-cli: ok")
PY
