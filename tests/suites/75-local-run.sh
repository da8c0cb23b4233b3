#!/usr/bin/env bash
# tfjobctl run end to end: TFJobs whose replicas are real processes on this machine.
# Success (the ps-training example trains: the loss falls), a retryable failure, a permanent
# failure, backoffLimit, activeDeadlineSeconds, cleanPodPolicy All/Running/None (checked in the
# run directory and in /proc), Ctrl-C, a replica that ignores SIGTERM, a command that does not
# exist, input errors; get --run-dir and logs. Never leaves a process behind.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
export TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl"
export EXAMPLES="$PWD/examples"
exec python3 - <<'PY'
import json, os, re, signal, subprocess, sys, tempfile, time

ctl, examples = os.environ["TFJOBCTL"], os.environ["EXAMPLES"]
failures = 0
tmp = tempfile.mkdtemp(prefix="tfjob-75-")
all_pids = set()

def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what, flush=True)
    return cond

def run(args, timeout=120):
    t0 = time.time()
    p = subprocess.run([ctl, *args], capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.time() - t0

def load(d, name):
    try:
        with open(os.path.join(d, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None

def condition(d, ctype):
    job = load(d, "job.json") or {}
    for c in job.get("status", {}).get("conditions", []):
        if c["type"] == ctype:
            return c
    return None

def pods(d):
    return {p["metadata"]["name"]: p for p in (load(d, "pods.json") or {}).get("items", [])}

def exit_code(pod):
    st = pod["status"]["containerStatuses"][0]["state"]
    return st.get("terminated", {}).get("exitCode")

def pids(d):
    """Process group ids of every process the run started (from its Started events)."""
    out = set()
    for e in load(d, "events.json") or []:
        m = re.search(r"process group (\d+)", e["message"])
        if e["reason"] == "Started" and m:
            out.add(int(m.group(1)))
    all_pids.update(out)
    return out

def alive(pid):
    """True when the process exists and is not a zombie (/proc)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

def group_alive(pgid):
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if int(fields[2]) == pgid and fields[0] != "Z":
                    return True
            except (OSError, IndexError):
                pass
    return False

def nothing_left(d, what):
    left = [p for p in pids(d) if group_alive(p)]
    check(not left, f"{what}: processes left behind: {left}")

def events(d, reason=None):
    return [e for e in load(d, "events.json") or [] if reason is None or e["reason"] == reason]

def write_job(name, text):
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(text)
    return path

def job(name, workers, command, policy="Never", run_policy="", extra_types="", worker_extra=""):
    return write_job(name, f"""apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: {name}
spec:
  runPolicy:
    {run_policy or "backoffLimit: 6"}
  tfReplicaSpecs:{extra_types}
    Worker:
      replicas: {workers}
      restartPolicy: {policy}
      template:
        spec:{worker_extra}
          containers:
          - name: tensorflow
            image: busybox
            command: {json.dumps(command)}
""")

def ps_type(command):
    return f"""
    PS:
      replicas: 1
      template:
        spec:
          containers:
          - name: tensorflow
            image: busybox
            command: {json.dumps(command)}"""

# 1. the main example trains for real and succeeds
d = os.path.join(tmp, "ps-training")
rc, out, err, took = run(["run", "--run-dir", d, os.path.join(examples, "ps-training", "tfjob.yaml")])
print(f"ps-training: exit {rc} in {took:.1f} s")
check(rc == 0, f"ps-training: exit {rc}: {err}\n{out[-3000:]}")
check("Succeeded  True" in out and "Events:" in out and "Replica Statuses:" in out, "ps-training: describe output")
check("\x1b[" not in out and re.search(r"^\d\d:\d\d:\d\d pod ps-training-worker-0: Running$", out, re.M)
      and re.search(r"^\d\d:\d\d:\d\d conditions: Created Running$", out, re.M),
      "ps-training: plain progress lines when piped")
seen = re.findall(r"^\d\d:\d\d:\d\d pod ps-training-worker-1: (.*)$", out, re.M)
check(seen == ["Pending", "Running", "Succeeded (exit 0)"], f"ps-training: worker 1's phases Pending, Running, Succeeded: {seen}")
check(condition(d, "Succeeded") and condition(d, "Succeeded")["status"] == "True", "ps-training: Succeeded condition")
ps = pods(d)
check(len(ps) == 5 and all(p["status"]["phase"] == "Succeeded" and exit_code(p) == 0 for p in ps.values()),
      f"ps-training: all 5 pods Succeeded with exit 0: {[(n, p['status']['phase'], exit_code(p)) for n, p in ps.items()]}")
# Training is asynchronous: a worker the scheduler starts late pulls weights the others already
# improved, so its own first loss may be low. The job's loss curve is judged as a whole: the first
# loss of the job (the highest first loss of any worker) falls 100x by the checkpoint, and every
# worker ends converged.
first_losses = []
for w in range(3):
    with open(os.path.join(d, f"ps-training-worker-{w}.log")) as f:
        losses = [float(x) for x in re.findall(r"step \d+ loss ([0-9.]+)", f.read())]
    check(len(losses) == 60, f"worker {w}: 60 steps logged, got {len(losses)}")
    if losses:
        print(f"  worker {w}: loss {losses[0]:.4f} -> {losses[-1]:.6f}")
        first_losses.append(losses[0])
        check(losses[-1] < 0.01, f"worker {w}: ends converged (last loss {losses[-1]})")
ckpt = load(d, "checkpoint.json")
check(ckpt is not None and ckpt["loss"] < 0.01 and len(ckpt["weights"]) == 16, f"checkpoint: {ckpt}")
if ckpt and first_losses:
    check(ckpt["loss"] < max(first_losses) / 100, f"loss falls 100x: {max(first_losses)} -> {ckpt['loss']}")
with open(os.path.join(d, "ps-training-worker-0.log")) as f:
    w0 = f.read()
check("final loss" in w0, "worker 0 logs the final loss")
tfc = re.search(r"cluster (\{.*\})", w0)
check(tfc and all(a.startswith("127.0.0.1:") for t in json.loads(tfc.group(1)).values() for a in t), "TF_CONFIG addresses on 127.0.0.1")
check(len(events(d, "Ignored")) >= 1, "ignored fields are reported")
nothing_left(d, "ps-training")
rc, out, err, _ = run(["get", "--run-dir", d])
check(rc == 0 and "ps-training-worker-2" in out and "Succeeded" in out, f"get --run-dir: {rc} {err}")
rc, out, err, _ = run(["get", "--run-dir", d, "-o", "json"])
check(rc == 0 and len(json.loads(out)["pods"]) == 5, "get --run-dir -o json")
rc, out, err, _ = run(["logs", d, "worker-1"])
check(rc == 0 and "step 60 loss" in out, f"logs RUN worker-1: {rc} {err}")
rc, out, err, _ = run(["logs", "-f", d, "ps-training-ps-0"], timeout=10)
check(rc == 0 and "stopped after" in out, f"logs -f of a finished pod returns: {rc} {err}")
rc, out, err, _ = run(["logs", d, "nope-0"])
check(rc == 2, "logs of an unknown pod: exit 2")
# only the run's pods can be named: a path that leaves the run directory is refused
secret = os.path.join(os.path.dirname(d), "outside.log")
with open(secret, "w") as f:
    f.write("OUTSIDE-THE-RUN\n")
for name in ["../outside", "../../" + os.path.basename(os.path.dirname(d)) + "/outside", "/etc/passwd", ".", "..", "a/b"]:
    rc, out, err, _ = run(["logs", d, name])
    check(rc == 2 and "OUTSIDE-THE-RUN" not in out and "root:" not in out and "is not a pod name" in err,
          f"logs RUN {name!r} is refused: {rc} {out[:80]} {err}")
os.unlink(secret)

# 1b. on a terminal the progress block is redrawn in place, and fits the screen (20 pods, 12 rows)
import fcntl, pty, struct, termios
master, slave = pty.openpty()
fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 12, 100, 0, 0))
d = os.path.join(tmp, "tty")
proc = subprocess.Popen([ctl, "run", "--run-dir", d, job("tty", 20, ["sleep", "0.5"])], stdout=slave,
                        stderr=subprocess.DEVNULL)
os.close(slave)
screen = b""
while True:
    try:
        chunk = os.read(master, 65536)
    except OSError:
        break
    if not chunk:
        break
    screen += chunk
os.close(master)
rc = proc.wait(timeout=60)
text = screen.decode(errors="replace")
ups = [int(n) for n in re.findall(r"\x1b\[(\d+)A", text)]
check(rc == 0 and ups and max(ups) <= 11, f"tty: redrawn in place within 12 rows: exit {rc}, cursor ups {sorted(set(ups))}")
check("... and " in text and "more pods:" in text, "tty: the pods that do not fit are counted")
check("tty-worker-0 " in text and "conditions: Created Running" in text, "tty: status lines")

# 2. a retryable failure (137 once) is restarted and the job succeeds
d = os.path.join(tmp, "retry")
rc, out, err, _ = run(["run", "--run-dir", d, os.path.join(examples, "failures", "retry-once.yaml")])
check(rc == 0, f"retry-once: exit {rc}: {out[-2000:]}")
check(events(d, "TFJobRestarting"), "retry-once: TFJobRestarting event")
check(any("exited with code 137" in e["message"] for e in events(d)), "retry-once: 137 seen")
with open(os.path.join(d, "retry-once-worker-0.log")) as f:
    log = f.read()
check("only this once" in log and log.count("working") == 2, "retry-once: worker 0 ran twice")
nothing_left(d, "retry-once")

# 3. a permanent failure (exit 1) fails the job with the reason
d = os.path.join(tmp, "permanent")
rc, out, err, _ = run(["run", "--run-dir", d, os.path.join(examples, "failures", "permanent.yaml")])
failed = condition(d, "Failed")
check(rc == 1, f"permanent: exit {rc}")
check(failed and failed["status"] == "True" and failed["reason"] == "TFJobFailed" and "Worker" in failed["message"],
      f"permanent: Failed condition with reason: {failed}")
check("Failed     True" in out and "TFJobFailed" in out, "permanent: describe shows the failure")
check(exit_code(pods(d)["permanent-worker-1"]) == 1, "permanent: exit code 1 recorded")
nothing_left(d, "permanent")

# 4. backoffLimit: an OnFailure replica that keeps failing is restarted in place until the limit
d = os.path.join(tmp, "backoff")
path = job("backoff", 1, ["sh", "-c", "echo try; exit 3"], policy="OnFailure", run_policy="backoffLimit: 2")
rc, out, err, took = run(["run", "--run-dir", d, "--restart-backoff", "100", path], timeout=60)
failed = condition(d, "Failed")
check(rc == 1 and failed and "backoff limit" in failed["message"].lower(), f"backoffLimit: exit {rc}, {failed}")
check(len(events(d, "BackOff")) >= 2, "backoffLimit: restarts with backoff")
check(took < 30, f"backoffLimit: took {took:.1f} s")
nothing_left(d, "backoffLimit")

# 4b. backoffLimit also bounds ExitCode restarts (each is a rate-limited requeue: 1 s, 2 s, ...)
d = os.path.join(tmp, "backoff-exitcode")
path = job("backoff-exitcode", 1, ["sh", "-c", "exit 137"], policy="ExitCode", run_policy="backoffLimit: 2")
rc, out, err, took = run(["run", "--run-dir", d, path], timeout=60)
failed = condition(d, "Failed")
check(rc == 1 and failed and "backoff limit" in failed["message"].lower(), f"backoffLimit (ExitCode): exit {rc}, {failed}")
restarting = events(d, "TFJobRestarting")
check(restarting and restarting[0].get("count") == 2, f"backoffLimit 2: 2 restarts, got {restarting}")
check(2.5 <= took < 20, f"backoffLimit (ExitCode): restarts are rate limited (1 s, 2 s), took {took:.1f} s")
nothing_left(d, "backoffLimit (ExitCode)")

# 5. activeDeadlineSeconds: a job that runs too long fails and its processes are stopped
d = os.path.join(tmp, "deadline")
path = job("deadline", 2, ["sh", "-c", "echo up; exec sleep 60"], run_policy="activeDeadlineSeconds: 2")
rc, out, err, took = run(["run", "--run-dir", d, "--grace-period", "1", path], timeout=60)
failed = condition(d, "Failed")
check(rc == 1 and failed and "deadline" in failed["message"].lower(), f"deadline: exit {rc}, {failed}")
check(1 <= took < 15, f"deadline: took {took:.1f} s")  # startTime has second precision: 1-3 s
nothing_left(d, "deadline")

# 6. cleanPodPolicy: which processes the end of the job stops (TTL keeps the run open for a look)
for policy in ("All", "Running", "None"):
    d = os.path.join(tmp, "clean-" + policy)
    path = job("clean-" + policy.lower(), 1, ["sh", "-c", "sleep 1"],
               run_policy=f"cleanPodPolicy: {policy}\n    ttlSecondsAfterFinished: 3",
               extra_types=ps_type(["sh", "-c", "echo serving; exec sleep 60"]))
    proc = subprocess.Popen([ctl, "run", "--run-dir", d, "--grace-period", "1", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    end = time.time() + 30
    while not (condition(d, "Succeeded") or {}).get("status") == "True" and time.time() < end:
        time.sleep(0.05)
    time.sleep(1.2)  # cleanup (SIGTERM, 1 s grace) is done; the TTL (3 s) is not
    name = "clean-" + policy.lower()
    ps_pid = next((p for p in pids(d) if any(e["reason"] == "Started" and f"process group {p}," in e["message"]
                                              and e["object"] == f"Pod/{name}-ps-0" for e in events(d))), None)
    now = pods(d)
    check(ps_pid is not None, f"{policy}: PS was started")
    if policy == "None":
        check(ps_pid and alive(ps_pid), f"None: the PS process is still running after the job finished")
        check(f"{name}-ps-0" in now and now[f"{name}-ps-0"]["status"]["phase"] == "Running", "None: PS pod Running")
        check(f"{name}-worker-0" in now, "None: worker pod kept")
    elif policy == "Running":
        check(ps_pid and not alive(ps_pid), "Running: the PS process was stopped")
        check(f"{name}-ps-0" not in now, "Running: PS pod deleted")
        check(f"{name}-worker-0" in now and now[f"{name}-worker-0"]["status"]["phase"] == "Succeeded",
              "Running: the succeeded worker pod is kept")
    else:
        check(ps_pid and not alive(ps_pid), "All: the PS process was stopped")
        check(not now, f"All: every pod deleted, left {list(now)}")
    rc = proc.wait(timeout=30)
    check(rc == 0, f"{policy}: exit {rc}")
    check(events(d, "Deleted"), f"{policy}: TTL deleted the job")
    nothing_left(d, "cleanPodPolicy " + policy)

# 7. Ctrl-C: SIGINT (and SIGTERM, SIGHUP) to tfjobctl run stops every replica, saves the state, exits 130
for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    name = "ctrl-c" if sig == signal.SIGINT else "sig-" + sig.name.lower()
    d = os.path.join(tmp, name)
    path = job(name, 2, ["sh", "-c", "echo up; exec sleep 60"])
    proc = subprocess.Popen([ctl, "run", "--run-dir", d, path], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    end = time.time() + 20
    while time.time() < end and not (len(pods(d)) == 2 and all(p["status"]["phase"] == "Running" for p in pods(d).values())):
        time.sleep(0.05)
    time.sleep(0.3)
    started = pids(d)
    check(len(started) == 2 and all(alive(p) for p in started), f"{name}: 2 replicas running {started}")
    t0 = time.time()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    check(proc.returncode == 130, f"{name}: exit {proc.returncode}: {err}")
    check(time.time() - t0 < 5, f"{name}: stops quickly")
    check(events(d, "Interrupted"), f"{name}: Interrupted event saved")
    check("Interrupted" in out and "Events:" in out, f"{name}: the summary is printed")
    final = pods(d)
    check(len(final) == 2 and all(exit_code(p) == 143 for p in final.values()),
          f"{name}: replicas terminated with 143: {[(n, exit_code(p)) for n, p in final.items()]}")
    check(load(d, "job.json") is not None, f"{name}: state saved")
    rc, out, err, _ = run(["get", "--run-dir", d])
    check(rc == 0 and "Failed (exit 143)" in out, f"{name}: get --run-dir reads the saved state: {rc} {err}")
    nothing_left(d, name)

# 7b. tfjobctl run killed outright (SIGKILL): its replicas die with it (PR_SET_PDEATHSIG), and
# logs -f of a pod that pods.json still shows Running returns
d = os.path.join(tmp, "killed")
path = job("killed", 1, ["sh", "-c", "echo up; exec sleep 60"])
proc = subprocess.Popen([ctl, "run", "--run-dir", d, path], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
end = time.time() + 20
while time.time() < end and not (pods(d).get("killed-worker-0", {}).get("status", {}).get("phase") == "Running"):
    time.sleep(0.05)
time.sleep(0.3)
proc.kill()
proc.wait(timeout=10)
time.sleep(0.5)
nothing_left(d, "killed run")
rc, out, err, took = run(["logs", "-f", d, "worker-0"], timeout=15)
check(rc == 0 and "up" in out and took < 5, f"logs -f after the run was killed: exit {rc} in {took:.1f} s")

# 7b'. processes a replica leaves behind: in its process group or moved out of it (setsid), they
# end with it (its supervisor kills them), before the run ends
d = os.path.join(tmp, "strays")
path = job("strays", 1, ["sh", "-c", "sleep 300 & echo grouped $!; setsid sleep 300 & echo escaped $!; sleep 0.3"])
rc, out, err, _ = run(["run", "--run-dir", d, path])
with open(os.path.join(d, "strays-worker-0.log")) as f:
    left = {k: int(v) for k, v in re.findall(r"(grouped|escaped) (\d+)", f.read())}
check(rc == 0 and len(left) == 2, f"strays: exit {rc}, {left}")
time.sleep(0.2)
check(not any(alive(p) for p in left.values()), f"strays: nothing left running: {[(k, p, alive(p)) for k, p in left.items()]}")
check("moved out of their process groups" not in out, "strays: none was left for the end of the run")
for p in left.values():  # never leave them behind, even when the checks above failed
    if alive(p):
        os.kill(p, signal.SIGKILL)

# 7c. a reader that goes away (tfjobctl run ... | head -1) does not kill the run: it ends and saves;
# replicas do not inherit the ignored SIGPIPE
d = os.path.join(tmp, "piped")
path = job("piped", 1, ["sh", "-c", "sleep 1; grep SigIgn /proc/self/status"])
proc = subprocess.Popen([ctl, "run", "--run-dir", d, path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
proc.stdout.readline()
proc.stdout.close()
rc = proc.wait(timeout=30)
check(rc == 0 and (condition(d, "Succeeded") or {}).get("status") == "True", f"piped to a reader that left: exit {rc}")
with open(os.path.join(d, "piped-worker-0.log")) as f:
    ign = int(f.read().split()[1], 16)
check(not ign & (1 << (signal.SIGPIPE - 1)), f"replica's SIGPIPE is not ignored: SigIgn {ign:x}")

# 8. a replica that ignores SIGTERM is killed after the (shortened) grace period
d = os.path.join(tmp, "stubborn")
path = job("stubborn", 1, ["sh", "-c", "trap '' TERM; echo up; while :; do sleep 0.1; done"])
live = open(os.path.join(tmp, "stubborn.out"), "w+")
proc = subprocess.Popen([ctl, "run", "--run-dir", d, "--grace-period", "2", path],
                        stdout=live, stderr=subprocess.DEVNULL)
end = time.time() + 20
while time.time() < end:
    try:
        if "up" in open(os.path.join(d, "stubborn-worker-0.log")).read():
            break
    except OSError:
        pass
    time.sleep(0.05)
t0 = time.time()
proc.send_signal(signal.SIGINT)
time.sleep(1)
live.seek(0)
shown = live.read()
check(proc.poll() is None and "Interrupted" in shown and "SIGTERM, SIGKILL after 2000 ms" in shown,
      f"stubborn: the stop is shown while it happens: {shown[-800:]}")
rc = proc.wait(timeout=30)
took = time.time() - t0
check(rc == 130, f"stubborn: exit {rc}")
check(1.9 <= took < 6, f"stubborn: SIGKILL after the 2 s grace period, took {took:.1f} s")
check(exit_code(pods(d)["stubborn-worker-0"]) == 137, "stubborn: exit 137 (SIGKILL)")
check(any("SIGKILL" in e["message"] for e in events(d, "Killing")), "stubborn: SIGKILL event")
nothing_left(d, "stubborn")

# 9. a command that does not exist: exit 127, permanent under ExitCode, clear message
d = os.path.join(tmp, "noexec")
path = job("noexec", 1, ["tfjob-no-such-program-xyz", "--flag"], policy="ExitCode")
rc, out, err, _ = run(["run", "--run-dir", d, path])
check(rc == 1, f"noexec: exit {rc}")
check(exit_code(pods(d)["noexec-worker-0"]) == 127, "noexec: exit code 127")
with open(os.path.join(d, "noexec-worker-0.log")) as f:
    check("cannot run 'tfjob-no-such-program-xyz': No such file or directory" in f.read(), "noexec: clear message in the log")
check("cannot run 'tfjob-no-such-program-xyz'" in out, "noexec: clear message in the output")

# 10. input errors exit 2 before anything runs
nocmd = write_job("nocmd", open(job("nocmd", 1, ["x"])).read().replace('command: ["x"]', ""))
rc, out, err, _ = run(["run", "--run-dir", os.path.join(tmp, "nocmd"), nocmd])
check(rc == 2 and "command" in err and "runs no images" in err, f"no command: exit {rc}: {err}")
vf = write_job("vf", open(job("vf", 1, ["true"])).read() +
               "            env:\n            - name: TOKEN\n              valueFrom: {secretKeyRef: {name: s, key: k}}\n")
rc, out, err, _ = run(["run", "--run-dir", os.path.join(tmp, "vf"), vf])
check(rc == 2 and "spec.tfReplicaSpecs[Worker].template.spec.containers[0].env[0].valueFrom: TOKEN:" in err,
      f"valueFrom: exit {rc}, the field named: {err}")
for extra, field in (("suspend: true", "spec.runPolicy.suspend"),
                     ("managedBy: kueue.x-k8s.io/multikueue", "spec.runPolicy.managedBy")):
    path = job("never", 1, ["true"], run_policy=extra)
    rc, out, err, took = run(["run", "--run-dir", os.path.join(tmp, "never-" + field), path], timeout=20)
    check(rc == 2 and field in err, f"{field}: refused, exit {rc}: {err}")
bad = write_job("bad", open(job("bad", 1, ["true"])).read().replace("restartPolicy: Never", "restartPolicy: Sometimes"))
rc, out, err, _ = run(["run", "--run-dir", os.path.join(tmp, "bad"), bad])
check(rc == 2 and "restartPolicy" in err, f"invalid spec: exit {rc}: {err}")
for args in (["run"], ["run", "--bogus", bad], ["run", "--grace-period", "x", bad], ["run", "/nonexistent.yaml"]):
    rc, out, err, _ = run(args)
    check(rc == 2, f"{args}: exit {rc}")
# a job that can never finish (only PS: they never decide success) ends once every replica has
# ended, instead of waiting forever; one with activeDeadlineSeconds waits for its deadline instead
d = os.path.join(tmp, "ps-only")
path = write_job("ps-only", open(job("ps-only", 1, ["true"])).read().replace("Worker:", "PS:"))
rc, out, err, took = run(["run", "--run-dir", d, path], timeout=30)
check(rc == 1 and "can never finish" in err and events(d, "LocalRunStuck") and took < 10,
      f"PS only: exit {rc} in {took:.1f} s: {err}")
d = os.path.join(tmp, "ps-only-deadline")
path = write_job("ps-only-deadline", open(job("ps-only-deadline", 1, ["true"], run_policy="activeDeadlineSeconds: 2"))
                 .read().replace("Worker:", "PS:"))
rc, out, err, took = run(["run", "--run-dir", d, path], timeout=30)
failed = condition(d, "Failed")
check(rc == 1 and failed and "deadline" in failed["message"].lower() and not events(d, "LocalRunStuck"),
      f"PS only with a deadline: exit {rc}, {failed}")

# a run directory that already holds a run is refused, and left as it was
d = os.path.join(tmp, "ps-training")
before = {f: os.path.getmtime(os.path.join(d, f)) for f in os.listdir(d)}
rc, out, err, _ = run(["run", "--run-dir", d, os.path.join(examples, "failures", "retry-once.yaml")])
check(rc == 2 and "already holds a run" in err, f"existing run dir: exit {rc}: {err}")
check(before == {f: os.path.getmtime(os.path.join(d, f)) for f in os.listdir(d)}, "existing run dir: untouched")
# an empty existing directory is fine (mkdtemp), and so is a relative one, made with its parents
empty = tempfile.mkdtemp(dir=tmp)
rc, out, err, _ = run(["run", "--run-dir", empty, job("empty-dir", 1, ["true"])])
check(rc == 0 and load(empty, "job.json"), f"empty existing run dir: exit {rc}: {err}")
p = subprocess.run([ctl, "run", "--run-dir", "rel/a/b", job("rel-dir", 1, ["true"])], cwd=tmp,
                   capture_output=True, text=True, timeout=60)
check(p.returncode == 0 and load(os.path.join(tmp, "rel/a/b"), "job.json"), f"relative run dir: {p.returncode} {p.stderr}")
afile = os.path.join(tmp, "a-file")
open(afile, "w").close()
rc, out, err, _ = run(["run", "--run-dir", afile, job("in-a-file", 1, ["true"])])
check(rc == 2 and "Not a directory" in err, f"run dir that is a file: exit {rc}: {err}")
# every command accepts --compat (DESIGN.md), logs and get --run-dir included
for args in (["logs", "--compat", "training-operator-1.9", d, "worker-1"],
             ["get", "--run-dir", d, "--compat", "training-operator-1.9"]):
    rc, out, err, _ = run(args)
    check(rc == 0 and out, f"{args}: exit {rc}: {err}")
rc, out, err, _ = run(["logs", "--compat", "nope", d, "worker-1"])
check(rc == 2, f"logs --compat nope: exit {rc}")

rc, out, _, _ = run(["run", "--help"])
check(rc == 0 and "usage: tfjobctl run" in out, "run --help")

left = [p for p in all_pids if group_alive(p)]
check(not left, f"processes left at the end: {left}")
subprocess.run(["rm", "-rf", tmp])
if failures:
    print(f"75-local-run: {failures} failure(s)")
    sys.exit(1)
print("75-local-run: ok")
PY
