"""The local backend (local.h): a TFJob's replicas as processes on this machine."""
from __future__ import annotations

import ctypes
import json
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from . import _lib, _runtime
from .errors import ESTATE, Error, call_out, from_handle
from .job import Job, compat_value
from .transport import Backend, Obj

_OUTCOMES = {0: "Succeeded", 1: "Failed", 2: "Interrupted"}
_UPDATES = {0: "status", 1: "pods", 2: "event"}

#: (pod, type, reason, message): what the engine does and notices ("Started", "Exited", "BackOff", ...)
LocalEventHook = Callable[[str, str, str, str], None]
#: (what, value): "status" (the job's status dict), "pods" (list of Pods), "event" (an event dict)
LocalUpdateHook = Callable[[str, Any], None]

JobInput = Union[Job, Obj, str, "os.PathLike[str]"]


def check_local(job: Job) -> None:
    """Raise tfjob.Error (naming the field) unless every replica can run locally: its
    ``tensorflow`` container has a command, no env valueFrom, no envFrom."""
    err = ctypes.c_void_p()
    rc = _lib.tfjob_local_check(job.handle, ctypes.byref(err))
    if rc != 0:
        raise from_handle(rc, err)


class LocalBackend(Backend):
    """The transport of a :class:`LocalEngine`: Pods are its processes; TFJobs, Services and
    Events live in memory. Pod update, patch and watch are not supported (tfjob.Error ESTATE)."""

    def __init__(self, engine: "LocalEngine"):
        with engine._g.use() as eh:
            handle = call_out(_lib.tfjob_local_transport_new, eh)
        super().__init__(handle, owner=engine)
        engine._backends.add(self)


class LocalEngine(_runtime.Closing):
    """A tiny kubelet whose Pods are process groups (tfjob_local). ``run(job)`` runs a TFJob to
    its end with the planner; ``backend()`` gives the engine as a transport for your own loop
    (then call ``poll()`` from one long-lived thread: processes die with the thread that started
    them). Release with ``close()`` / ``with`` (every process still running is terminated).

    Times are in seconds: backoff_initial / backoff_max (restart delays of Always/OnFailure),
    grace_period (None: the Pod's terminationGracePeriodSeconds; 0: SIGKILL at once). gpus: the
    GPU ids to hand out ("0,1" or ["0", "1"]; "" or []: none; None: this machine's); a replica
    asking for nvidia.com/gpu gets its own in CUDA_VISIBLE_DEVICES, one asking for none gets "".
    on_event(pod, type, reason, message) runs with the engine's lock held: do not call back into
    the engine from it; its exceptions are re-raised by the engine call that triggered it."""

    _close_order = 2

    def __init__(self, run_dir: Union[str, "os.PathLike[str]"], *, base_dir: Optional[str] = None,
                 backoff_initial: Optional[float] = None, backoff_max: Optional[float] = None,
                 grace_period: Optional[float] = None, on_event: Optional[LocalEventHook] = None,
                 gpus: Optional[Union[str, List[str]]] = None):
        self._g = _runtime.Guard(None, "local engine")
        self._run_dir = os.fspath(run_dir)
        self._errors: List[BaseException] = []
        self._lock = threading.Lock()
        import weakref
        self._backends: "weakref.WeakSet[LocalBackend]" = weakref.WeakSet()
        opts = _lib.LocalOptions()
        _lib.tfjob_local_options_init(ctypes.byref(opts), 2)
        gpu_list = gpus if gpus is None or isinstance(gpus, str) else ",".join(str(g) for g in gpus)
        self._keep = [_lib.cstr(self._run_dir, "run_dir", True), _lib.cstr(base_dir, "base_dir") if base_dir else None,
                      _lib.cstr(gpu_list, "gpus") if gpu_list is not None else None]
        opts.run_dir, opts.base_dir, opts.gpus = self._keep
        opts.backoff_initial_ms = _runtime.ms(backoff_initial)
        opts.backoff_max_ms = _runtime.ms(backoff_max)
        opts.grace_period_ms = -1 if grace_period is None else _runtime.ms(grace_period)
        self._on_event = on_event
        self._event_cb = _lib.LOCAL_EVENT_CB(self._event) if on_event else _lib.LOCAL_EVENT_CB()
        opts.on_event = self._event_cb
        self._g = _runtime.Guard(call_out(_lib.tfjob_local_new, ctypes.byref(opts)), "local engine")
        _runtime.register(self)

    def _event(self, pod: bytes, type_: bytes, reason: bytes, message: bytes, _payload: Any) -> None:
        with _runtime.callback_scope():
            try:
                assert self._on_event is not None
                self._on_event(pod.decode(), type_.decode(), reason.decode(), message.decode())
            except BaseException as exc:
                self._failed(exc)

    def _failed(self, exc: BaseException) -> None:
        with self._lock:
            self._errors.append(exc)

    def _reraise(self) -> None:
        with self._lock:
            exc = self._errors[0] if self._errors else None
            self._errors.clear()
        if exc is not None:
            raise exc

    @property
    def run_dir(self) -> str:
        return self._run_dir

    # ---- lifetime ----
    def close(self) -> None:
        """Terminate every process still running, reap them, release the engine (its backends
        first). A run in progress on another thread is interrupted and waited for."""
        if _runtime.in_callback() and self._g.open:
            raise Error("the local engine cannot be closed from its own callbacks", ESTATE)
        for b in list(self._backends):
            b.close()
        h = self._g.retire(_lib.tfjob_local_interrupt)
        if h:
            _runtime.unregister(self)
            _lib.tfjob_local_free(h)
        self._reraise()

    def _collect(self) -> None:
        with self._lock:
            self._errors.clear()
        self.close()

    # ---- the engine ----
    def backend(self) -> LocalBackend:
        """A transport whose Pods are this engine's processes (closed with the engine)."""
        return LocalBackend(self)

    def poll(self, timeout: Optional[float] = 0.0) -> int:
        """Do the engine's work and wait up to timeout seconds (None: no limit) for a Pod to
        change: the number of changes, 0 on timeout or interrupt."""
        err = ctypes.c_void_p()
        with self._g.use() as h:
            rc = _lib.tfjob_local_poll(h, -1 if timeout is None else _runtime.ms(timeout), ctypes.byref(err))
        self._reraise()
        if rc < 0:
            raise from_handle(rc, err)
        return rc

    def interrupt(self) -> None:
        """Interrupt a run (it shuts down cleanly; a second interrupt kills at once). Any thread."""
        try:
            with self._g.use() as h:
                _lib.tfjob_local_interrupt(h)
        except Error:
            pass  # closed: nothing runs

    @property
    def interrupted(self) -> int:
        """How many times interrupt() was called."""
        with self._g.use() as h:
            return int(_lib.tfjob_local_interrupted(h))

    def shutdown(self) -> int:
        """Stop every process as a node shutdown does; the number stopped."""
        err = ctypes.c_void_p()
        with self._g.use() as h:
            rc = _lib.tfjob_local_shutdown(h, ctypes.byref(err))
        self._reraise()
        if rc < 0:
            raise from_handle(rc, err)
        return rc

    @property
    def running_count(self) -> int:
        """Processes running now."""
        with self._g.use() as h:
            return int(_lib.tfjob_local_running_count(h))

    def address(self, replica_type: str, index: int, port: int = 2222) -> str:
        """The "127.0.0.1:PORT" this engine gives replica (type, index) in TF_CONFIG (a free port,
        the same for the engine's whole life). Usable as the ``address`` resolver of render()."""
        buf = ctypes.create_string_buffer(64)
        with self._g.use() as h:
            rtype = (_lib.cstr(replica_type, "replica type", True) or b"").lower()
            rc = _lib.tfjob_local_address(buf, len(buf), rtype, int(index), int(port), h)
        if rc != 0:
            raise from_handle(rc, None)
        return buf.value.decode()

    def run(self, job: JobInput, *, compat: Optional[str] = None,
            on_update: Optional[LocalUpdateHook] = None) -> str:
        """Run a job to its end (validated and defaulted first): "Succeeded", "Failed" or
        "Interrupted". The run goes on a thread of its own so that Ctrl-C reaches Python: on
        KeyboardInterrupt every replica is stopped cleanly and the KeyboardInterrupt re-raised.
        An exception in on_update interrupts the run and is re-raised. One run per engine."""
        owned = not isinstance(job, Job)
        j = _load_job(job)
        try:
            return self._run(j, compat, on_update)
        finally:
            if owned:
                j.close()

    def _run(self, job: Job, compat: Optional[str], on_update: Optional[LocalUpdateHook]) -> str:
        opts = _lib.LocalRunOptions()
        _lib.tfjob_local_run_options_init(ctypes.byref(opts), 1)
        opts.compat = compat_value(compat)

        def update(what: int, text: bytes, _payload: Any) -> None:
            with _runtime.callback_scope():
                try:
                    assert on_update is not None
                    value = json.loads(text)
                    if what == 1 and isinstance(value, dict):
                        value = value.get("items", [])
                    on_update(_UPDATES.get(what, str(what)), value)
                except BaseException as exc:
                    self._failed(exc)
                    _lib.tfjob_local_interrupt(handle[0])  # on the run's thread: the engine is held

        handle: List[Any] = [None]
        cb = _lib.LOCAL_UPDATE_CB(update) if on_update else _lib.LOCAL_UPDATE_CB()
        opts.on_update = cb
        result: Dict[str, Any] = {}
        done = threading.Event()
        mine = job.copy()  # the run's thread owns its job, whatever happens to the caller's

        def target() -> None:
            # The run's own thread holds the engine: close() elsewhere interrupts it and waits.
            try:
                with self._g.use() as h:
                    handle[0] = h
                    out, err = ctypes.c_int(0), ctypes.c_void_p()
                    result["rc"] = _lib.tfjob_local_run(ctypes.byref(out), h, mine.handle, ctypes.byref(opts),
                                                        ctypes.byref(err))
                    result["out"], result["err"] = out.value, err
            except BaseException as exc:  # the engine was closed before the run began
                result["exc"] = exc
            finally:
                mine.close()
                done.set()

        t = threading.Thread(target=target, name="tfjob-local-run", daemon=True)
        t.start()
        interrupted = False
        # Wait on an Event, not Thread.join (a KeyboardInterrupt inside join() can leave the thread
        # looking finished while it still runs), with the whole wait inside the try.
        while True:
            try:
                while not done.wait(0.1):
                    pass
                break
            except KeyboardInterrupt:
                interrupted = True
                self.interrupt()
        t.join()
        if "exc" in result:
            raise result["exc"]
        del cb
        self._reraise()
        if result["rc"] != 0:
            raise from_handle(result["rc"], result["err"])
        if interrupted:
            raise KeyboardInterrupt
        return _OUTCOMES.get(result["out"], "Unknown")


def local_report(run_dir: Union[str, "os.PathLike[str]"], tail: int = 20) -> Obj:
    """What happened to each replica of a local run (tfjob_local_report(), the report tfjobctl
    run and tfjobctl get --run-dir print): {"name", "outcome", "runDir", "replicas": [{"name":
    "worker-1", "summary": "worker-1 failed with exit 1, then deleted by cleanPodPolicy All as the
    job finished", "failures", "failedExitCode", "log", "tail": [last lines], ...}]}."""
    out = call_out(_lib.tfjob_local_report, _lib.cstr(os.fspath(run_dir), "run_dir", True), int(tail))
    return json.loads(_lib.owned_string(out))


def new_run_dir(run_dir: Optional[Union[str, "os.PathLike[str]"]] = None, name: Optional[str] = None) -> str:
    """A fresh run directory as tfjobctl run makes it (tfjob_local_run_dir()): run_dir and its
    parents (tfjob.Error EEXISTS when it already holds a run), or, without one, a new
    ./tfjob-runs/NAME-YYYYMMDD-HHMMSS (else under $TMPDIR/tfjob-runs). Its absolute path."""
    wanted = _lib.cstr(os.fspath(run_dir), "run_dir") if run_dir is not None else None
    out = call_out(_lib.tfjob_local_run_dir, wanted, _lib.cstr(name, "name") if name else None)
    return _lib.owned_string(out)


@dataclass
class LocalResult:
    """What a local run left: the outcome ("Succeeded", "Failed", "Interrupted"), the TFJob with
    its status, the Pods and the events (read back from the run directory), and the report of
    what happened to each replica (:func:`local_report`: ``replicas``, ``failures``)."""

    outcome: str
    run_dir: str
    job: Obj = field(default_factory=dict)
    pods: List[Obj] = field(default_factory=list)
    events: List[Obj] = field(default_factory=list)
    report: Obj = field(default_factory=dict)

    @property
    def succeeded(self) -> bool:
        return self.outcome == "Succeeded"

    @property
    def replicas(self) -> List[Obj]:
        """One entry per replica the run created, with its ``summary`` sentence."""
        return list(self.report.get("replicas") or [])

    @property
    def failures(self) -> List[Obj]:
        """The replicas that exited non-zero (``failedExitCode``, ``tail``: their last lines, ``log``)."""
        return [r for r in self.replicas if r.get("failures", 0) > 0]

    def __str__(self) -> str:
        lines = [f"TFJob {self.report.get('name', '')}: {self.outcome}. Run directory: {self.run_dir}"]
        for r in self.replicas:
            lines.append("  " + r.get("summary", ""))
            if r.get("failures", 0) > 0:
                lines.append(f"      log: {r.get('log', '')}")
                lines.extend("      | " + line for line in r.get("tail") or [])
        return "\n".join(lines)

    def log(self, pod: str) -> str:
        """The output of a replica ("NAME-worker-0" or "worker-0")."""
        name = pod if os.path.exists(os.path.join(self.run_dir, pod + ".log")) else \
            f"{(self.job.get('metadata') or {}).get('name', '')}-{pod}"
        with open(os.path.join(self.run_dir, name + ".log"), encoding="utf-8", errors="replace") as f:
            return f.read()


def _load_job(job: JobInput) -> Job:
    if isinstance(job, Job):
        return job
    if isinstance(job, dict):
        return Job.from_dict(job)
    return Job.load(job)


def _read_json(path: str, default: Any) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return default


def run_local(job: JobInput, run_dir: Optional[Union[str, "os.PathLike[str]"]] = None, *,
              base_dir: Optional[str] = None, compat: Optional[str] = None,
              on_update: Optional[LocalUpdateHook] = None, on_event: Optional[LocalEventHook] = None,
              grace_period: Optional[float] = None, backoff_initial: Optional[float] = None,
              backoff_max: Optional[float] = None, tail: int = 20,
              gpus: Optional[Union[str, List[str]]] = None) -> LocalResult:
    """Run a TFJob (a Job, a dict, or the path of a manifest) on this machine, as
    ``tfjobctl run`` does: each replica's ``tensorflow`` container command as a process, driven by
    the planner to the end, in a fresh run directory (:func:`new_run_dir`: run_dir with its
    parents, refused when it already holds a run; by default a new one under ./tfjob-runs).
    Relative paths resolve against base_dir (default: the manifest's directory for a path, else
    the current directory). Returns a :class:`LocalResult` whose report shows the last ``tail``
    lines of each failed replica."""
    if base_dir is None and not isinstance(job, (Job, dict)):
        base_dir = os.path.dirname(os.path.abspath(os.fspath(job)))
    owned = not isinstance(job, Job)
    j = _load_job(job)
    try:
        d = new_run_dir(run_dir, j.name or (j.to_dict().get("metadata") or {}).get("generateName"))
        with LocalEngine(d, base_dir=base_dir, grace_period=grace_period, backoff_initial=backoff_initial,
                         backoff_max=backoff_max, on_event=on_event, gpus=gpus) as engine:
            outcome = engine.run(j, compat=compat, on_update=on_update)
    finally:
        if owned:
            j.close()
    pods = _read_json(os.path.join(d, "pods.json"), {})
    return LocalResult(outcome=outcome, run_dir=d, job=_read_json(os.path.join(d, "job.json"), {}),
                       pods=(pods.get("items") or []) if isinstance(pods, dict) else list(pods),
                       events=_read_json(os.path.join(d, "events.json"), []), report=local_report(d, tail))
