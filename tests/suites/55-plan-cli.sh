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
            check(set(a) == {"action", "kind", "name", "object"} and a["kind"] in ("Pod", "Service"), f"create {a.keys()}")
            check(a["object"]["metadata"]["name"] == a["name"], "create object carries its name")
        elif a["action"] == "delete":
            check(set(a) == {"action", "kind", "name"} and a["kind"] in ("Pod", "Service", "TFJob"), f"delete {a}")
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
