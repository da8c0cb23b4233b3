#!/usr/bin/env bash
# No process of a replica outlives the run: tfjobctl run killed with SIGKILL (as the OOM killer
# would), interrupted with Ctrl-C, or ending normally leaves nothing behind — neither the
# replica's own children nor descendants that left its process group (setsid). Also: the
# leftovers of a replica that exits are killed at once, while the run goes on (a container's
# processes end with it). Each test's sleeps carry unique arguments, so parallel runs do not
# collide; whatever is found is killed at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD_DIR=build scripts/build.sh >/dev/null
export TFJOBCTL="$PWD/build/src/tfjobctl/tfjobctl"
exec python3 - <<'PY'
import json, os, signal, subprocess, sys, tempfile, time
sys.path.insert(0, "tests/suites/lib")
from suite_checks import check, finish  # noqa: E402

ctl = os.environ["TFJOBCTL"]
tmp = tempfile.mkdtemp(prefix="tfjob-78-")
tag = "%d" % (os.getpid() % 100000)  # sleep 7771.<tag>: a unique argument per run of this suite


def sleeper(n):
    return f"sleep 777{n}.{tag}"

def processes(*ns):
    """pid -> cmdline of the live processes running one of the sleeps ns."""
    wanted = {f"sleep\x00777{n}.{tag}\x00" for n in ns}
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().decode(errors="replace")
            with open(f"/proc/{entry}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (OSError, IndexError):
            continue
        if not zombie and any(cmd.endswith(w) for w in wanted):
            out[int(entry)] = cmd.replace("\x00", " ").strip()
    return out

def wait_for(cond, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()

def kill_leftovers(*ns):
    for pid in processes(*ns):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass

def job(name, scripts, grace=2):
    """A job of len(scripts) workers; worker i runs scripts[i] (sh -c)."""
    cases = " ".join(f'{name}-worker-{i}) {s} ;;' for i, s in enumerate(scripts))
    script = f'case "$TFJOB_POD_NAME" in {cases} esac'
    path = os.path.join(tmp, name + ".yaml")
    with open(path, "w") as f:
        f.write(f"""apiVersion: kubeflow.org/v1
kind: TFJob
metadata:
  name: {name}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: {len(scripts)}
      restartPolicy: Never
      template:
        spec:
          terminationGracePeriodSeconds: {grace}
          containers:
          - name: tensorflow
            image: busybox
            command: [sh, -c, {json.dumps(script)}]
""")
    return path

def start(name, scripts, running, env=None):
    """tfjobctl run in the background, once the sleeps `running` are all up."""
    d = os.path.join(tmp, name)
    proc = subprocess.Popen([ctl, "run", "--run-dir", d, job(name, scripts)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    up = wait_for(lambda: len(processes(*running)) == len(running), 20)
    check(up, f"{name}: the replicas' processes started: {processes(*running)}")
    return proc

def the_end(name, proc, ns, seconds=5):
    left = {} if wait_for(lambda: not processes(*ns), seconds) else processes(*ns)
    check(not left, f"{name}: processes left behind: {left}")
    kill_leftovers(*ns)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()

grouped = f"{sleeper(1)} & {sleeper(2)} & wait"       # children in the replica's process group
escaped = f"setsid {sleeper(3)} & wait"               # a child in a session of its own
nested = f"sh -c 'setsid {sleeper(4)} & exec {sleeper(5)}' & wait"  # a grandchild that left

def supervisors(pid):
    """The programs (file names) of the children of pid: the replicas' supervisors."""
    out = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                out.append(os.path.basename(os.readlink(f"/proc/{entry}/exe")))
        except (OSError, IndexError, ValueError):
            continue
    return sorted(out)

# 1. kill -9 of tfjobctl run (also what the OOM killer does): every descendant dies with it,
# whether the supervisors are the program tfjob-supervise (found next to libtfjob.so) or, with
# TFJOB_SUPERVISE naming no program, forks of tfjobctl (docs/local.md)
for mode, extra, program in (("program", {}, "tfjob-supervise"),
                             ("fork", {"TFJOB_SUPERVISE": tmp + "/no-such-program"}, "tfjobctl")):
    proc = start("killed-" + mode, [grouped, escaped, nested], [1, 2, 3, 4, 5], env=dict(os.environ, **extra))
    found = supervisors(proc.pid)
    check(found == [program] * 3, f"kill -9 ({mode}): the supervisors are {found}, want 3 {program}")
    proc.kill()
    the_end(f"kill -9 ({mode})", proc, [1, 2, 3, 4, 5])

# 2. Ctrl-C: the replicas get SIGTERM, and what they leave is killed with them; exit 130
proc = start("interrupted", [grouped, escaped], [1, 2, 3])
proc.send_signal(signal.SIGINT)
out, _ = proc.communicate(timeout=30)
check(proc.returncode == 130, f"Ctrl-C: exit {proc.returncode}\n{out[-2000:]}")
the_end("Ctrl-C", proc, [1, 2, 3])

# 3. a replica that exits leaves no process behind, even while the run goes on (worker-0 decides
# when the job ends)
d = os.path.join(tmp, "ended")
proc = start("ended", ["sleep 3; exit 0", f"{sleeper(6)} & setsid {sleeper(7)} & sleep 0.5; exit 0"], [6, 7])
gone = wait_for(lambda: not processes(6, 7), 5)
check(gone and proc.poll() is None, f"ended: worker-1's leftovers are killed while the run goes on: "
      f"{processes(6, 7)}, run exit {proc.poll()}")
out, _ = proc.communicate(timeout=30)
check(proc.returncode == 0 and "moved out of their process groups" not in out, f"ended: exit {proc.returncode}\n{out[-2000:]}")
the_end("normal end", proc, [6, 7])

# 4. the replica's own exit status reaches the Pod unchanged through its supervisor: a signal
# (SIGKILL: 137, SIGSEGV: 139) or an exit code (3)
for name, script, want in (("sigkill", "kill -9 $$$$", (137, 9)), ("sigsegv", "kill -SEGV $$$$", (139, 11)),
                           ("code", "exit 3", (3, None))):
    d = os.path.join(tmp, name)
    p = subprocess.run([ctl, "run", "--run-dir", d, job(name, [script])], capture_output=True, text=True, timeout=60)
    try:
        with open(os.path.join(d, "pods.json")) as f:
            t = json.load(f)["items"][0]["status"]["containerStatuses"][0]["state"]["terminated"]
        got = (t["exitCode"], t.get("signal"))
    except (OSError, ValueError, KeyError, IndexError) as e:
        got = e
    check(p.returncode == 1 and got == want, f"{name}: exit {p.returncode}, terminated {got}, want {want}")

kill_leftovers(1, 2, 3, 4, 5, 6, 7)
subprocess.run(["rm", "-rf", tmp])
finish("78-local-orphans")
PY
