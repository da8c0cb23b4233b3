"""The local backend binding: tiny jobs of `sh -c` replicas run to their end as processes."""
import json
import time

import pytest

import tfjob
from conftest import make_job


def sh(script, name="tiny", replicas=None, **kw):
    return make_job(name, replicas or {"Worker": 2}, namespace=None, image="busybox", command=["sh", "-c", script], **kw)


def test_run_local_succeeds(tmp_path):
    updates, events = [], []
    # the third line: the program of the replica's supervisor, found next to the loaded library
    job = sh('echo "hello from $TFJOB_POD_NAME"; echo "$TF_CONFIG"; readlink /proc/$PPID/exe; exit 0')
    job["spec"]["successPolicy"] = "AllWorkers"  # worker-1 is not stopped before it has printed
    result = tfjob.run_local(job, tmp_path / "run",
                             on_update=lambda what, value: updates.append((what, value)),
                             on_event=lambda *e: events.append(e))
    assert result.outcome == "Succeeded" and result.succeeded
    assert tfjob.has_condition(result.job, "Succeeded")
    assert sorted(p["metadata"]["name"] for p in result.pods) == ["tiny-worker-0", "tiny-worker-1"]
    assert all(p["status"]["phase"] == "Succeeded" for p in result.pods)
    log = result.log("worker-1")
    assert log.startswith("hello from tiny-worker-1\n")
    tf_config = json.loads(log.splitlines()[1])
    assert tf_config["task"] == {"type": "worker", "index": 1}
    assert all(a.startswith("127.0.0.1:") for a in tf_config["cluster"]["worker"])
    assert log.splitlines()[2].endswith("/tfjob-supervise")
    assert not any(e[2] == "SupervisorInProcess" for e in events)
    kinds = {w for w, _ in updates}
    assert kinds == {"status", "pods", "event"}
    assert any(w == "status" and tfjob.has_condition({"status": v}, "Succeeded") for w, v in updates)
    assert any(e[0] == "tiny-worker-0" and e[2] == "Exited" for e in events)
    assert any(e.get("reason") == "TFJobSucceeded" for e in result.events)


def test_run_local_failure_and_retry_with_exit_code(tmp_path):
    failed = tfjob.run_local(sh("exit 3", replicas={"Worker": 1}), tmp_path / "fail")
    assert failed.outcome == "Failed" and tfjob.has_condition(failed.job, "Failed")
    # 137 is retryable under ExitCode: the first attempt fails, the second succeeds.
    script = 'if [ -e "$TFJOB_RUN_DIR/once" ]; then exit 0; fi; touch "$TFJOB_RUN_DIR/once"; exit 137'
    retried = tfjob.run_local(sh(script, replicas={"Worker": 1}, restart_policy="ExitCode"), tmp_path / "retry")
    assert retried.outcome == "Succeeded"
    assert any(e.get("reason") == "TFJobRestarting" for e in retried.events)


def test_run_local_from_a_manifest_path(tmp_path):
    manifest = tmp_path / "job.yaml"
    manifest.write_text(json.dumps(sh("exit 0", name="from-file", replicas={"Worker": 1})))
    result = tfjob.run_local(str(manifest), tmp_path / "run")
    assert result.succeeded and result.job["metadata"]["name"] == "from-file"


def test_check_local_and_invalid_jobs(tmp_path):
    with tfjob.Job.from_dict(make_job("nocmd", {"Worker": 1})) as job:
        with pytest.raises(tfjob.Error) as e:
            tfjob.check_local(job)
        assert e.value.code == -3 and "command" in e.value.message
        with pytest.raises(tfjob.Error):
            tfjob.run_local(job, tmp_path / "a")
    with pytest.raises(tfjob.ValidationError):
        tfjob.run_local(sh("exit 0", name="Bad_Name"), tmp_path / "b")
    with tfjob.Job.from_dict(sh("exit 0")) as ok:
        tfjob.check_local(ok)


def test_on_update_exception_interrupts_the_run_and_is_reraised(tmp_path):
    class Stop(Exception):
        pass

    def on_update(what, value):
        if what == "pods" and any((p.get("status") or {}).get("phase") == "Running" for p in value):
            raise Stop("enough")

    start = time.monotonic()
    with tfjob.LocalEngine(tmp_path / "run", grace_period=0) as engine:
        with pytest.raises(Stop, match="enough"):
            engine.run(sh("sleep 30", replicas={"Worker": 1}), on_update=on_update)
        assert engine.interrupted >= 1 and engine.running_count == 0
    assert time.monotonic() - start < 20


def test_engine_backend_runs_a_pod(tmp_path):
    with tfjob.LocalEngine(tmp_path / "run") as engine:
        addr = engine.address("Worker", 0)
        assert addr.startswith("127.0.0.1:") and engine.address("worker", 0) == addr
        b = engine.backend()
        b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
                          "spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "tensorflow", "command": ["sh", "-c", "exit 4"]}]}})
        deadline = time.monotonic() + 20
        while b.get("pods", "p")["status"].get("phase") not in ("Succeeded", "Failed"):
            assert time.monotonic() < deadline
            engine.poll(0.5)
        pod = b.get("pods", "p")
        assert pod["status"]["phase"] == "Failed"
        assert pod["status"]["containerStatuses"][0]["state"]["terminated"]["exitCode"] == 4
        with pytest.raises(tfjob.Error):
            b.watch("pods")  # the local backend does not watch Pods
        with pytest.raises(tfjob.Error):
            b.create("pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"},
                              "spec": {"containers": [{"name": "tensorflow", "image": "x"}]}})
    with pytest.raises(tfjob.Error, match="closed"):
        b.get("pods", "p")


def test_ctrl_c_stops_the_run_cleanly_and_is_reraised(tmp_path):
    import os
    import signal
    import threading

    started = threading.Event()

    def on_event(pod, type_, reason, message):
        if reason == "Started":
            started.set()

    def interrupt_when_started():
        if started.wait(20):
            os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C does: the main thread gets KeyboardInterrupt

    # Python only turns SIGINT into KeyboardInterrupt when SIGINT was not ignored at its start; a
    # test command started in the background (nohup, `cmd &`, some CI runners) has it ignored.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=interrupt_when_started, daemon=True).start()
        start = time.monotonic()
        with tfjob.LocalEngine(tmp_path / "run", grace_period=1, on_event=on_event) as engine:
            with pytest.raises(KeyboardInterrupt):
                engine.run(sh("sleep 30", replicas={"Worker": 2}))
            assert engine.interrupted == 1 and engine.running_count == 0
        assert time.monotonic() - start < 20
    finally:
        signal.signal(signal.SIGINT, previous)
    pods = json.loads((tmp_path / "run" / "pods.json").read_text())["items"]
    assert all(p["status"]["phase"] == "Failed" for p in pods)  # terminated, not left running


def test_on_event_exception_is_reraised_after_the_run(tmp_path):
    def on_event(pod, type_, reason, message):
        if reason == "Exited":
            raise ValueError(f"{pod} {message}")

    with pytest.raises(ValueError, match="tiny-worker-0 Container tensorflow exited with code 0"):
        tfjob.run_local(sh("exit 0", replicas={"Worker": 1}), tmp_path / "run", on_event=on_event)


def test_closing_the_engine_from_another_thread_interrupts_a_run(tmp_path):
    import threading

    engine = tfjob.LocalEngine(tmp_path / "run", grace_period=0)
    got = {}

    def run():
        got["outcome"] = engine.run(sh("sleep 30", replicas={"Worker": 1}))

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 10
    while engine.running_count == 0:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    engine.close()  # interrupts the run and waits for it, then frees
    t.join(20)
    assert got["outcome"] == "Interrupted"
    with pytest.raises(tfjob.Error, match="closed"):
        engine.poll()


def failing(name="rep", run_policy=None, restart_policy="Never"):
    script = 'if [ "$TFJOB_POD_NAME" = %s-worker-1 ]; then echo one; echo two >&2; echo three; exit 3; fi; sleep 30' % name
    return sh(script, name=name, run_policy=run_policy or {"cleanPodPolicy": "All"}, restart_policy=restart_policy)


def test_run_local_says_why_a_replica_failed(tmp_path):
    # v1.9 counts a failed replica deleted by cleanPodPolicy as succeeded: the report says what happened.
    result = tfjob.run_local(failing(), tmp_path / "run", compat="training-operator-1.9", tail=2)
    assert result.outcome == "Failed"
    assert [r["name"] for r in result.failures] == ["worker-1"]
    w1 = result.failures[0]
    assert w1["summary"] == "worker-1 failed with exit 3, then deleted by cleanPodPolicy All as the job finished"
    assert w1["failedExitCode"] == 3 and w1["tail"] == ["two", "three"]
    assert w1["log"] == str(tmp_path / "run" / "rep-worker-1.log")
    w0 = next(r for r in result.replicas if r["name"] == "worker-0")
    assert w0["failures"] == 0 and w0["summary"].startswith("worker-0 was still running: deleted by cleanPodPolicy All")
    text = str(result)
    assert "worker-1 failed with exit 3" in text and "      | three" in text
    # The same report as tfjobctl's, read again from the run directory.
    assert tfjob.local_report(result.run_dir, tail=2)["replicas"] == result.report["replicas"]


def test_run_local_makes_a_fresh_run_directory(tmp_path, monkeypatch):
    deep = tmp_path / "a" / "b" / "c"
    result = tfjob.run_local(sh("exit 0", replicas={"Worker": 1}), deep)
    assert result.succeeded and result.run_dir == str(deep)
    with pytest.raises(tfjob.Error, match="already holds a run"):
        tfjob.run_local(sh("exit 0", replicas={"Worker": 1}), deep)
    monkeypatch.chdir(tmp_path)
    first = tfjob.run_local(sh("exit 0", name="fresh", replicas={"Worker": 1}))
    second = tfjob.run_local(sh("exit 0", name="fresh", replicas={"Worker": 1}))
    assert first.succeeded and second.succeeded and first.run_dir != second.run_dir
    for r in (first, second):
        assert r.run_dir.startswith(str(tmp_path / "tfjob-runs" / "fresh-"))


def test_run_local_hands_out_gpus(tmp_path):
    job = sh('echo "[${CUDA_VISIBLE_DEVICES-unset}]"', name="gpu")
    job["spec"]["successPolicy"] = "AllWorkers"  # worker-1 is not stopped before it has printed
    job["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"nvidia.com/gpu": 1}}
    result = tfjob.run_local(job, tmp_path / "run", gpus=["3", "5"])
    assert result.succeeded
    assert sorted(result.log(f"worker-{i}").strip() for i in (0, 1)) == ["[3]", "[5]"]
    with pytest.raises(tfjob.Error, match="asks for 2 GPUs"):
        tfjob.run_local(job, tmp_path / "none", gpus="")
    plain = tfjob.run_local(sh('echo "[${CUDA_VISIBLE_DEVICES-unset}]"', replicas={"Worker": 1}), tmp_path / "plain")
    assert plain.log("worker-0") == "[]\n"  # no GPU limit: no GPU, as in a pod


def _sleeps(tag):
    """pids of the live processes whose command line is `sleep <n>.<tag>`."""
    import os

    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            with open(f"/proc/{entry}/stat") as f:
                zombie = f.read().rsplit(")", 1)[1].split()[0] == "Z"
        except (OSError, IndexError):
            continue
        if not zombie and len(argv) >= 2 and argv[0] == b"sleep" and argv[1].endswith(f".{tag}".encode()):
            found.append(int(entry))
    return found


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="subreaper and /proc: Linux")
def test_a_killed_program_leaves_no_replica_process_behind(tmp_path):
    """A program running run_local in a thread (while other threads run) is killed with SIGKILL:
    every replica and everything it started (setsid included) dies with it."""
    import os
    import signal
    import subprocess
    import sys

    tag = f"{os.getpid() % 100000}{time.monotonic_ns() % 1000}"
    job = sh(f'sleep 7781.{tag} & setsid sleep 7782.{tag} & wait', replicas={"Worker": 2})
    program = (
        "import json, sys, threading, time, tfjob\n"
        "for _ in range(3): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
        "t = threading.Thread(target=tfjob.run_local, args=(json.loads(sys.argv[1]), sys.argv[2]))\n"
        "t.start(); t.join()\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    proc = subprocess.Popen([sys.executable, "-c", program, json.dumps(job), str(tmp_path / "run")], env=env)
    try:
        deadline = time.monotonic() + 30
        while len(_sleeps(tag)) < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_sleeps(tag)) == 4
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while _sleeps(tag) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _sleeps(tag) == []
    finally:
        proc.kill()
        proc.wait()
        for pid in _sleeps(tag):
            os.kill(pid, signal.SIGKILL)
