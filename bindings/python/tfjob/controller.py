"""The controller (controller.h): reconciling TFJobs through a backend, as tfjob-operator does."""
from __future__ import annotations

import ctypes
import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Union

from . import _lib, _runtime
from .errors import EINVAL, ESTATE, ETIMEOUT, Error, from_handle
from .job import compat_value
from .transport import Backend, Obj

LOG_LEVELS = {"debug": 0, "info": 1, "warn": 2, "warning": 2, "error": 3}
_LEVEL_NAMES = {0: "debug", 1: "info", 2: "warn", 3: "error"}
_PY_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.WARNING, 3: logging.ERROR}
_GANG = {None: 0, "": 0, "volcano": 1, "scheduler-plugins": 2}

LogHook = Callable[[str, str, Dict[str, Any]], None]
BeforeReconcileHook = Callable[[str, str], Optional[bool]]
AfterReconcileHook = Callable[[str, str, Optional[Error]], None]
MutatePodHook = Callable[[Obj, Obj], Optional[Obj]]


@dataclass(frozen=True)
class Metrics:
    """A controller's counters (controller.h, tfjob_controller_metrics)."""

    jobs_created: int
    jobs_succeeded: int
    jobs_failed: int
    jobs_restarted: int
    jobs_deleted: int
    reconciles: int
    reconcile_errors: int
    reconcile_latency: Dict[float, int]  # upper bound in seconds (inf last) -> count in that bucket
    reconcile_latency_sum: float
    queue_depth: int
    queue_adds: int
    queue_retries: int
    api_calls: Dict[str, int]            # "get", "list", "watch", "create", ... -> count
    api_errors: int
    status_conflicts: int
    relists: int
    is_leader: bool
    leader_transitions: int


class _Hooks:
    """The ctypes callbacks and everything they need; kept alive as long as the controller."""

    def __init__(self, log: Union[None, LogHook, logging.Logger], before: Optional[BeforeReconcileHook],
                 after: Optional[AfterReconcileHook], mutate: Optional[MutatePodHook],
                 clock: Optional[Callable[[], float]]):
        self.errors: List[BaseException] = []
        self.lock = threading.Lock()
        self.threads: set = set()
        self.keep: List[Any] = []
        self.log: Optional[LogHook] = self._wrap_logger(log) if isinstance(log, logging.Logger) else log
        self.before, self.after, self.mutate, self.clock = before, after, mutate, clock
        # Each trampoline below is only installed when its hook is set.
        self.log_cb = _lib.LOG_CB(self._log) if log is not None else _lib.LOG_CB()
        self.before_cb = _lib.BEFORE_RECONCILE_CB(self._before) if before else _lib.BEFORE_RECONCILE_CB()
        self.after_cb = _lib.AFTER_RECONCILE_CB(self._after) if after else _lib.AFTER_RECONCILE_CB()
        self.mutate_cb = _lib.POD_MUTATE_CB(self._mutate) if mutate else _lib.POD_MUTATE_CB()
        self.clock_cb = _lib.CLOCK_CB(self._clock) if clock else _lib.CLOCK_CB()

    @staticmethod
    def _wrap_logger(logger: logging.Logger) -> LogHook:
        def log(level: str, message: str, fields: Dict[str, Any]) -> None:
            logger.log(_PY_LEVELS[LOG_LEVELS[level]], "%s %s", message, json.dumps(fields, sort_keys=True))
        return log

    def _enter(self) -> None:
        with self.lock:
            self.threads.add(threading.get_ident())

    def _failed(self, exc: BaseException) -> None:
        with self.lock:
            self.errors.append(exc)

    def _log(self, level: int, message: bytes, fields: bytes, _payload: Any) -> None:
        self._enter()
        with _runtime.callback_scope():
            try:
                assert self.log is not None
                self.log(_LEVEL_NAMES.get(level, "info"), message.decode(), json.loads(fields) if fields else {})
            except BaseException as exc:
                self._failed(exc)

    def _before(self, ns: bytes, name: bytes, _payload: Any) -> int:
        self._enter()
        with _runtime.callback_scope():
            try:
                assert self.before is not None
                return 1 if self.before(ns.decode(), name.decode()) is False else 0
            except BaseException as exc:
                self._failed(exc)
                return 1  # skip the job this time

    def _after(self, ns: bytes, name: bytes, result: int, _payload: Any) -> None:
        self._enter()
        with _runtime.callback_scope():
            try:
                err = None if result == 0 else Error(_lib.decode(_lib.tfjob_strerror(result)) or "error", result)
                assert self.after is not None
                self.after(ns.decode(), name.decode(), err)
            except BaseException as exc:
                self._failed(exc)

    def _mutate(self, out: Any, pod: bytes, job: bytes, _payload: Any) -> int:
        self._enter()
        with _runtime.callback_scope():
            try:
                assert self.mutate is not None
                new = self.mutate(json.loads(pod), json.loads(job))
                if new is not None:
                    out[0] = _runtime.malloc_string(json.dumps(new).encode())
                return 0
            except BaseException as exc:
                self._failed(exc)
                return -1  # fails this creation (FailedCreatePod)

    def _clock(self, _payload: Any) -> int:
        self._enter()
        with _runtime.callback_scope():
            try:
                assert self.clock is not None
                return int(self.clock())
            except BaseException as exc:
                self._failed(exc)
                return int(time.time())

    def take_error(self) -> Optional[BaseException]:
        with self.lock:
            if not self.errors:
                return None
            exc = self.errors[0]
            self.errors.clear()
            return exc


class Controller(_runtime.Closing):
    """Reconciles TFJobs on a backend as training-operator does (caches fed by list+watch, a
    rate-limited work queue, expectations, the planner's plans, Events, status writes).

    ``with tfjob.Controller(backend) as c:`` starts it and stops and releases it at the end; or
    ``start()`` / ``stop()`` / ``close()``. The backend must stay open while the controller lives
    (it keeps a reference; closing the backend closes the controller first). A controller that is
    garbage-collected is stopped and released.

    ``status_writers``: status writes in flight at once, off the workers (0: 4; negative: each
    worker writes its statuses itself).

    Hooks run on the controller's threads (several at once when workers > 1; after_reconcile
    may run on a status writer's thread, once the job's status is written):
    ``log(level, message, fields)`` (or a ``logging.Logger``), ``before_reconcile(ns, name)``
    (return False to skip the job this time), ``after_reconcile(ns, name, error_or_None)``,
    ``mutate_pod(pod, job)`` (return a new pod dict, or None to keep it), and ``clock()`` (Unix
    seconds, the planner's wall clock). An exception raised by a hook never reaches C: the hook
    counts as failed (before_reconcile skips the job, mutate_pod fails that pod's creation, clock
    falls back to the system clock) and the exception is re-raised by the next ``wait_idle()``,
    ``run_until()``, ``stop()`` or ``close()``."""

    _close_order = 0

    def __init__(self, backend: Backend, *, namespace: Optional[str] = None, workers: int = 1,
                 status_writers: int = 0,
                 compat: Optional[str] = None, cluster_domain: Optional[str] = None,
                 gang_scheduler: Optional[str] = None, scheduler_name: Optional[str] = None,
                 queue_qps: float = 0.0, queue_burst: int = 0, backoff_base: Optional[float] = None,
                 backoff_max: Optional[float] = None, expectations_timeout: Optional[float] = None,
                 leader_election: bool = False, leader_election_id: Optional[str] = None,
                 leader_election_namespace: Optional[str] = None, identity: Optional[str] = None,
                 lease_duration: Optional[float] = None, renew_deadline: Optional[float] = None,
                 retry_period: Optional[float] = None, events: bool = True,
                 clock: Optional[Callable[[], float]] = None,
                 log: Union[None, LogHook, logging.Logger] = None, log_level: str = "info",
                 before_reconcile: Optional[BeforeReconcileHook] = None,
                 after_reconcile: Optional[AfterReconcileHook] = None,
                 mutate_pod: Optional[MutatePodHook] = None):
        if gang_scheduler not in _GANG:
            raise ValueError(f"unknown gang scheduler {gang_scheduler!r} (volcano or scheduler-plugins)")
        if log_level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {log_level!r} (debug, info, warn, error)")
        self._g = _runtime.Guard(None, "controller")
        self._backend = backend
        self._started = False
        self._hooks = _Hooks(log, before_reconcile, after_reconcile, mutate_pod, clock)
        hooks = _lib.ControllerHooks()
        _lib.tfjob_controller_hooks_init(ctypes.byref(hooks), 1)
        hooks.log, hooks.before_reconcile = self._hooks.log_cb, self._hooks.before_cb
        hooks.after_reconcile, hooks.mutate_pod = self._hooks.after_cb, self._hooks.mutate_cb
        hooks.log_level = LOG_LEVELS[log_level]
        opts = _lib.ControllerOptions()
        _lib.tfjob_controller_options_init(ctypes.byref(opts), 2)
        opts.status_writers = status_writers
        keep = [namespace, cluster_domain, scheduler_name, leader_election_id, leader_election_namespace, identity]
        names = ["namespace", "cluster_domain", "scheduler_name", "leader_election_id", "leader_election_namespace",
                 "identity"]
        b = [_lib.cstr(s, what) for s, what in zip(keep, names)]
        (opts.namespace_name, opts.cluster_domain, opts.scheduler_name, opts.leader_election_id,
         opts.leader_election_namespace, opts.identity) = b
        opts.workers = int(workers)
        opts.compat = compat_value(compat)
        opts.gang_scheduler = _GANG[gang_scheduler]
        opts.queue_qps = float(queue_qps)
        opts.queue_burst = int(queue_burst)
        opts.backoff_base_ms = _runtime.ms(backoff_base)
        opts.backoff_max_ms = _runtime.ms(backoff_max)
        opts.expectations_timeout_ms = _runtime.ms(expectations_timeout)
        opts.leader_election = 1 if leader_election else 0
        opts.lease_duration_ms = _runtime.ms(lease_duration)
        opts.renew_deadline_ms = _runtime.ms(renew_deadline)
        opts.retry_period_ms = _runtime.ms(retry_period)
        opts.no_events = 0 if events else 1
        opts.clock = self._hooks.clock_cb
        opts.hooks = ctypes.pointer(hooks)
        backend._attach(self, "controller", _lib.tfjob_controller_new, ctypes.byref(opts))

    @property
    def backend(self) -> Backend:
        return self._backend

    def _not_from_hook(self, what: str) -> None:
        if threading.get_ident() in self._hooks.threads and _runtime.in_callback():
            raise Error(f"Controller.{what}() called from one of its hooks", ESTATE)

    def _reraise(self) -> None:
        exc = self._hooks.take_error()
        if exc is not None:
            raise exc

    # ---- lifecycle ----
    def start(self) -> "Controller":
        """List TFJobs, Pods and Services into the caches, start the watches and workers. Returns
        once started (without leader election, errors of the first lists are raised)."""
        err = ctypes.c_void_p()
        with self._g.use() as h:
            rc = _lib.tfjob_controller_start(h, ctypes.byref(err))
        if rc != 0:
            raise from_handle(rc, err)
        self._started = True
        return self

    def stop(self) -> None:
        """Stop gracefully (in-flight reconciles finish, the Lease is released); blocks until done.
        Idempotent. Re-raises a hook's exception."""
        if self._g.open:
            self._not_from_hook("stop")
            try:
                with self._g.use() as h:
                    _lib.tfjob_controller_stop(h)
            except Error:
                pass  # closed meanwhile: stopped
        self._reraise()

    def _release(self) -> bool:
        """Free the handle; False when that had to be left to another thread (on a hook's thread)."""
        on_hook_thread = threading.get_ident() in self._hooks.threads and _runtime.in_callback()
        if on_hook_thread:
            if not self._g.open:
                return True
            h = self._g.retire()
        else:
            # Stop first: it ends the calls in flight that wait on the controller (wait_idle).
            h = self._g.retire(_lib.tfjob_controller_stop)
        if not h:
            return True
        _runtime.unregister(self)
        if on_hook_thread:
            # On one of our own worker threads: free from another thread (the C call waits for
            # the workers); the backend joins that thread before it frees the transport.
            hooks, backend = self._hooks, self._backend
            backend._defer(lambda: (_lib.tfjob_controller_free(h), hooks, backend))
            return False
        _lib.tfjob_controller_free(h)
        return True

    def close(self) -> None:
        """Stop (when running) and release the controller. Re-raises a hook's exception."""
        if self._release():
            self._reraise()

    def _collect(self) -> None:
        self._release()

    def __enter__(self) -> "Controller":
        if not self._started:
            self.start()
        return self

    # ---- waiting ----
    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        """Wait until nothing is queued or being reconciled and the caches are synced: True, or
        False after timeout seconds (None: no limit). Re-raises a hook's exception."""
        self._not_from_hook("wait_idle")
        with self._g.use() as h:
            rc = _lib.tfjob_controller_wait_idle(h, -1 if timeout is None else _runtime.ms(timeout))
        self._reraise()
        if rc not in (0, ETIMEOUT):
            raise from_handle(rc, None)
        return rc == 0

    def wait_stopped(self, timeout: Optional[float] = None) -> bool:
        """Wait until the controller stopped working by itself (leadership lost): True, or False
        after timeout seconds."""
        self._not_from_hook("wait_stopped")
        with self._g.use() as h:
            rc = _lib.tfjob_controller_wait_stopped(h, -1 if timeout is None else _runtime.ms(timeout))
        self._reraise()
        return rc == 0

    def run_until(self, predicate: Callable[[], bool], timeout: Optional[float] = 60.0,
                  interval: float = 0.01) -> bool:
        """Start (if needed) and run until predicate() is true (True) or timeout seconds passed
        (False); the controller keeps running afterwards. Re-raises a hook's exception."""
        if not self._started:
            self.start()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            self._reraise()
            if predicate():
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(interval)

    def enqueue(self, name: str, namespace: Optional[str] = None) -> None:
        """Queue a job for a reconcile now (e.g. after moving a test clock)."""
        ns = self._backend.namespace if namespace is None else namespace
        with self._g.use() as h:
            rc = _lib.tfjob_controller_enqueue(h, _lib.cstr(ns, "namespace", True), _lib.cstr(name, "name", True))
        if rc != 0:
            raise from_handle(rc, None)

    # ---- state ----
    @property
    def is_leader(self) -> bool:
        with self._g.use() as h:
            return bool(_lib.tfjob_controller_is_leader(h))

    @property
    def is_ready(self) -> bool:
        """Started and every cache listed (what /readyz reports)."""
        with self._g.use() as h:
            return bool(_lib.tfjob_controller_is_ready(h))

    def metrics(self) -> Metrics:
        m = _lib.ControllerMetrics()
        m.version = 1
        with self._g.use() as h:
            rc = _lib.tfjob_controller_metrics_get(ctypes.byref(m), h)
        if rc != 0:
            raise from_handle(rc, None)
        bounds = [_lib.tfjob_controller_latency_bucket_bound(i) for i in range(_lib.CONTROLLER_LATENCY_BUCKETS)]
        return Metrics(
            jobs_created=m.jobs_created, jobs_succeeded=m.jobs_succeeded, jobs_failed=m.jobs_failed,
            jobs_restarted=m.jobs_restarted, jobs_deleted=m.jobs_deleted, reconciles=m.reconciles,
            reconcile_errors=m.reconcile_errors,
            reconcile_latency={bounds[i]: m.reconcile_latency[i] for i in range(_lib.CONTROLLER_LATENCY_BUCKETS)},
            reconcile_latency_sum=m.reconcile_latency_sum, queue_depth=m.queue_depth, queue_adds=m.queue_adds,
            queue_retries=m.queue_retries,
            api_calls={_lib.decode(_lib.tfjob_api_verb_name(i)) or str(i): m.api_calls[i]
                       for i in range(_lib.API_VERB_COUNT)},
            api_errors=m.api_errors, status_conflicts=m.status_conflicts, relists=m.relists,
            is_leader=bool(m.is_leader), leader_transitions=m.leader_transitions)

    def metrics_text(self) -> str:
        """The counters in Prometheus text format (what /metrics serves)."""
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        with self._g.use() as h:
            rc = _lib.tfjob_controller_metrics_text(ctypes.byref(out), h, ctypes.byref(err))
        if rc != 0:
            raise from_handle(rc, err)
        return _lib.owned_string(out)

    def __repr__(self) -> str:
        state = "closed" if not self._g.open else ("running" if self._started else "new")
        return f"<tfjob.Controller {state}>"
