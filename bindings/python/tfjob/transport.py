"""The transport: a Kubernetes API (kube.h) or a stand-in for one (memory.h, local.h).

A :class:`Backend` wraps one ``tfjob_transport``. Objects go in as dicts (or JSON text, or a
:class:`tfjob.Job`) and come back as dicts; failures raise :class:`tfjob.TransportError`
subclasses carrying the HTTP status, the API server's message and reason.
"""
from __future__ import annotations

import ctypes
import json
import queue
import threading
import time
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Union

from . import _lib, _runtime
from .errors import EINVAL, ESTATE, Error, call_out, from_handle
from .job import Job

Obj = Dict[str, Any]
ObjectInput = Union[Obj, str, bytes, Job]


@dataclass(frozen=True)
class Resource:
    """A kind of object as the API server's URLs name it: group ("" = core), version, plural."""

    group: str
    version: str
    resource: str
    namespaced: bool = True

    @classmethod
    def lookup(cls, name: str) -> "Resource":
        """A built-in resource by plural or kind, case-insensitive ("tfjobs", "Pod", "svc", ...)."""
        p = _lib.tfjob_resource_lookup(_lib.cstr(name, "resource", True))
        if not p:
            raise ValueError(f"unknown resource {name!r} (tfjobs, pods, services, events, podgroups, namespaces)")
        r = p.contents
        return cls(_lib.decode(r.group) or "", _lib.decode(r.version) or "", _lib.decode(r.resource) or "",
                   bool(r.namespaced))

    def _c(self) -> _lib.Resource:
        return _lib.Resource(_lib.cstr(self.group, "group", True), _lib.cstr(self.version, "version", True),
                             _lib.cstr(self.resource, "resource", True), 1 if self.namespaced else 0)


TFJOBS = Resource("kubeflow.org", "v1", "tfjobs")
PODS = Resource("", "v1", "pods")
SERVICES = Resource("", "v1", "services")
EVENTS = Resource("", "v1", "events")
PODGROUPS = Resource("scheduling.volcano.sh", "v1beta1", "podgroups")
NAMESPACES = Resource("", "v1", "namespaces", namespaced=False)

ResourceLike = Union[str, Resource]

_PROPAGATION = {None: 0, "Background": 1, "Foreground": 2, "Orphan": 3}
_EVENT_NAMES = {1: "ADDED", 2: "MODIFIED", 3: "DELETED", 4: "BOOKMARK"}


def _resource(res: ResourceLike) -> Resource:
    return res if isinstance(res, Resource) else Resource.lookup(res)


def _enc(s: Optional[str], what: str = "argument") -> Optional[bytes]:
    return _lib.cstr(s, what)


def _req(s: str, what: str) -> bytes:
    return _lib.cstr(s, what, True) or b""


def _object_text(obj: ObjectInput) -> bytes:
    if isinstance(obj, Job):
        return obj.to_json().encode()
    if isinstance(obj, (bytes, bytearray)):
        text = bytes(obj)
    elif isinstance(obj, str):
        text = obj.encode("utf-8")
    elif isinstance(obj, dict):
        text = json.dumps(obj).encode()
    else:
        raise TypeError(f"the object must be a dict, JSON text or a Job, not {type(obj).__name__}")
    if b"\0" in text:
        raise ValueError("the object's text contains a NUL byte")
    return text


def _take(out: ctypes.c_void_p) -> Optional[Obj]:
    return json.loads(_lib.owned_string(out)) if out else None


def condition(obj: Obj, type_: str) -> Optional[Obj]:
    """The status condition of that type of an object (a TFJob dict), or None."""
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return c
    return None


def has_condition(obj: Obj, type_: str) -> bool:
    """Whether the object's condition of that type has status "True"."""
    c = condition(obj, type_)
    return c is not None and c.get("status") == "True"


@dataclass(frozen=True)
class WatchEvent:
    """One watch event: type is ADDED, MODIFIED, DELETED or BOOKMARK; object the object as a dict."""

    type: str
    object: Obj


WatchHandler = Callable[[WatchEvent], Optional[bool]]
ClosedHandler = Callable[[Optional[Error]], None]

_END = object()


class _WatchState:
    """Everything C holds on to while the watch runs: callbacks, queue, outcome."""

    def __init__(self, backend: "Backend", handler: Optional[WatchHandler], on_closed: Optional[ClosedHandler]):
        self.backend = backend  # the transport must outlive the watch
        self.handler = handler
        self.on_closed = on_closed
        self.queue: "queue.Queue[Any]" = queue.Queue()
        self.thread_ident: Optional[int] = None
        self.handler_error: Optional[BaseException] = None
        self.error: Optional[Error] = None
        self.code: Optional[int] = None
        self.ended = threading.Event()
        self.event_cb = _lib.WATCH_EVENT_CB(self._on_event)
        self.closed_cb = _lib.WATCH_CLOSED_CB(self._on_closed)

    def _on_event(self, etype: int, text: bytes, _payload: Any) -> int:
        self.thread_ident = threading.get_ident()
        with _runtime.callback_scope():
            try:
                ev = WatchEvent(_EVENT_NAMES.get(etype, "UNKNOWN"), json.loads(text))
                if self.handler is None:
                    self.queue.put(ev)
                    return 0
                return 1 if self.handler(ev) is False else 0
            except BaseException as exc:  # never into C: kept and re-raised by wait()/close()
                if self.handler_error is None:
                    self.handler_error = exc
                return 1

    def _on_closed(self, code: int, err: Any, _payload: Any) -> None:
        self.thread_ident = threading.get_ident()
        with _runtime.callback_scope():
            try:
                self.code = code
                if code != 0:
                    # err is borrowed: copy it (from_handle frees, so build from a copy of the fields).
                    self.error = _borrowed_error(code, err)
                if self.on_closed is not None:
                    self.on_closed(self.error)
            except BaseException as exc:
                if self.handler_error is None:
                    self.handler_error = exc
            finally:
                self.queue.put(_END)
                self.ended.set()


def _borrowed_error(code: int, err: Any) -> Error:
    """An exception for a borrowed tfjob_error (not freed)."""
    from .errors import _HTTP, _TRANSPORT, TransportError
    if not err:
        return from_handle(code, None)
    message = _lib.decode(_lib.tfjob_error_message(err)) or ""
    status = _lib.tfjob_error_http_status(err)
    details_text = _lib.decode(_lib.tfjob_error_details_json(err))
    reason = _lib.decode(_lib.tfjob_error_reason(err)) or ""
    cls = _TRANSPORT.get(code) or (_HTTP.get(code) if status else None) or TransportError
    return cls(message, code, status, reason=reason, details=json.loads(details_text) if details_text else None)


class Watch(_runtime.Closing):
    """A running watch. Either a handler gets each :class:`WatchEvent` on the watch's thread
    (return False to stop), or, without a handler, iterate the watch (``for ev in w``; iteration
    ends when the watch ends and raises its error, e.g. GoneError for "list again").

    ``stop()`` asks it to end (from anywhere, handlers included); ``wait()`` waits for the end;
    ``close()`` (or leaving a ``with`` block, or the object being garbage-collected) stops and
    releases it. An exception raised by a handler stops the watch and is re-raised by ``wait()``
    and ``close()``."""

    _close_order = 1

    def __init__(self, backend: "Backend", resource: ResourceLike, namespace: Optional[str],
                 handler: Optional[WatchHandler], on_closed: Optional[ClosedHandler], *,
                 label_selector: Optional[str], field_selector: Optional[str], resource_version: Optional[str],
                 allow_bookmarks: bool, timeout_seconds: int, reconnect: bool):
        self._g = _runtime.Guard(None, "watch")
        self._state = _WatchState(backend, handler, on_closed)
        self._raised = False
        opts = _lib.WatchOptions()
        _lib.tfjob_watch_options_init(ctypes.byref(opts), 1)
        keep = [_enc(label_selector), _enc(field_selector), _enc(resource_version)]
        opts.label_selector, opts.field_selector, opts.resource_version = keep
        opts.allow_bookmarks = 1 if allow_bookmarks else 0
        opts.timeout_seconds = int(timeout_seconds)
        opts.reconnect = 1 if reconnect else 0
        opts.on_event = self._state.event_cb
        opts.on_closed = self._state.closed_cb
        res = _resource(resource)._c()
        backend._attach(self, "watch", _lib.tfjob_transport_watch, ctypes.byref(res), _enc(namespace),
                        ctypes.byref(opts))

    # ---- outcome ----
    @property
    def error(self) -> Optional[Error]:
        """Why the watch ended, when it failed (GoneError: list again); None while running or when stopped."""
        return self._state.error

    @property
    def done(self) -> bool:
        """Whether the watch has ended (its on_closed has run)."""
        return self._state.ended.is_set()

    def _reraise(self) -> None:
        exc = self._state.handler_error
        if exc is not None and not self._raised:
            self._raised = True
            raise exc

    # ---- control ----
    def stop(self) -> None:
        """Ask the watch to end; returns at once. Safe from any thread, handlers included."""
        try:
            with self._g.use() as h:
                _lib.tfjob_watch_stop(h)
        except Error:
            pass  # closed: it has ended

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait until the watch has ended (True) or timeout seconds passed (False). Re-raises a
        handler's exception. Not from the watch's own handlers."""
        if self._g.open and threading.get_ident() == self._state.thread_ident and _runtime.in_callback():
            raise Error("Watch.wait() called from the watch's own callback", ESTATE)
        ended = self._state.ended.wait(timeout)
        if ended:
            self._reraise()
        return ended

    def _release(self) -> None:
        h = self._g.retire(_lib.tfjob_watch_stop)
        if h:
            _runtime.unregister(self)
            state = self._state
            if threading.get_ident() == state.thread_ident and _runtime.in_callback():
                # Released on its own thread (a handler, or the GC running there): never wait
                # for ourselves; another thread waits and frees, and the backend joins it.
                state.backend._defer(lambda: (_lib.tfjob_watch_free(h), state))
                return
            _lib.tfjob_watch_free(h)

    def close(self) -> None:
        """Stop the watch, wait for it to end and release it; re-raises a handler's exception."""
        self._release()
        self._reraise()

    def _collect(self) -> None:
        self._raised = True  # never raise from the garbage collector
        self.close()

    # ---- iteration (no handler) ----
    def next(self, timeout: Optional[float] = None) -> Optional[WatchEvent]:
        """The next event, or None when the watch has ended or timeout seconds passed without one.
        Raises the watch's error once it has ended with one."""
        if self._state.handler is not None:
            raise Error("this watch delivers its events to a handler", EINVAL)
        try:
            item = self._state.queue.get(timeout=timeout)
        except queue.Empty:
            return None
        if item is _END:
            self._state.queue.put(_END)  # stay ended for later calls
            if self._state.error is not None:
                raise self._state.error
            return None
        return item

    def __iter__(self) -> Iterator[WatchEvent]:
        while True:
            ev = self.next()
            if ev is None:
                return
            yield ev


class Backend(_runtime.Closing):
    """A transport handle: the same calls on every backend. Thread-safe. Release it with
    ``close()`` or ``with``; its watches and controllers are closed first. The garbage
    collector releases it otherwise.

    Resources are named by plural or kind ("tfjobs", "pods", "services", "events", ...) or given
    as a :class:`Resource`. ``namespace=None`` means the backend's namespace; ``""`` lists and
    watches across all namespaces."""

    _close_order = 3

    def __init__(self, handle: ctypes.c_void_p, owner: Any = None):
        self._g = _runtime.Guard(handle, "backend")
        self._owner = owner  # what the transport borrows from (the local engine)
        self._dependents: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self._pending: List[threading.Thread] = []  # releases of dependents running elsewhere
        _runtime.register(self)

    # ---- lifetime ----
    def close(self) -> None:
        """Close the watches and controllers made on this backend, then release the transport."""
        for dep in sorted(list(self._dependents), key=lambda o: o._close_order):
            dep._release()  # their callback errors stay with them: their close() re-raises
        pending, self._pending = self._pending, []
        for t in pending:
            if t is not threading.current_thread():
                t.join()
        h = self._g.retire()  # waits for calls in flight on other threads
        if h:
            _runtime.unregister(self)
            _lib.tfjob_transport_free(h)

    def _out(self, fn: Callable[..., int], *args: Any) -> ctypes.c_void_p:
        """fn(&out, transport, *args, &err) holding the transport: out, or the error raised."""
        with self._g.use() as h:
            return call_out(fn, h, *args)

    def _attach(self, dep: Any, what: str, new: Callable[..., int], *args: Any) -> None:
        """Make a dependent's C object (a watch, a controller) on this transport with
        ``new(&handle, transport, *args, &err)``, give dep its guard (dep._g) and register dep
        to be closed with the backend and before the interpreter exits."""
        dep._g = _runtime.Guard(self._out(new, *args), what)
        self._dependents.add(dep)
        _runtime.register(dep)

    def _defer(self, fn: Callable[[], Any]) -> None:
        """Release a dependent on another thread; close() joins it before freeing the transport."""
        self._pending = [t for t in self._pending if t.is_alive()]
        self._pending.append(_runtime.run_elsewhere(fn))

    @property
    def namespace(self) -> str:
        """The namespace used when a call passes namespace=None."""
        with self._g.use() as h:
            return _lib.decode(_lib.tfjob_transport_namespace(h)) or "default"

    # ---- verbs ----
    def get(self, resource: ResourceLike, name: str, namespace: Optional[str] = None) -> Obj:
        """GET one object. NotFoundError when absent."""
        res = _resource(resource)._c()
        return _take(self._out(_lib.tfjob_transport_get, ctypes.byref(res), _enc(namespace, "namespace"),
                               _req(name, "name"))) or {}

    def list(self, resource: ResourceLike, namespace: Optional[str] = None, *, label_selector: Optional[str] = None,
             field_selector: Optional[str] = None, limit: int = 0, continue_token: Optional[str] = None,
             resource_version: Optional[str] = None) -> Obj:
        """LIST: the List object ({"kind": ..., "metadata": {"resourceVersion", "continue"}, "items": [...]})."""
        res = _resource(resource)._c()
        opts = _lib.ListOptions()
        _lib.tfjob_list_options_init(ctypes.byref(opts), 1)
        keep = [_enc(label_selector), _enc(field_selector), _enc(continue_token), _enc(resource_version)]
        opts.label_selector, opts.field_selector, opts.continue_token, opts.resource_version = keep
        opts.limit = int(limit)
        return _take(self._out(_lib.tfjob_transport_list, ctypes.byref(res), _enc(namespace),
                               ctypes.byref(opts))) or {}

    def items(self, resource: ResourceLike, namespace: Optional[str] = None, *, label_selector: Optional[str] = None,
              field_selector: Optional[str] = None, page_size: int = 500) -> List[Obj]:
        """Every object of a LIST, following continue tokens page by page."""
        result: List[Obj] = []
        token: Optional[str] = None
        while True:
            page = self.list(resource, namespace, label_selector=label_selector, field_selector=field_selector,
                             limit=page_size, continue_token=token)
            result.extend(page.get("items") or [])
            token = (page.get("metadata") or {}).get("continue") or None
            if not token:
                return result

    def _write(self, fn: Any, resource: ResourceLike, obj: ObjectInput, namespace: Optional[str]) -> Obj:
        res = _resource(resource)._c()
        return _take(self._out(fn, ctypes.byref(res), _enc(namespace), _object_text(obj))) or {}

    def create(self, resource: ResourceLike, obj: ObjectInput, namespace: Optional[str] = None) -> Obj:
        """CREATE; returns the stored object (uid, resourceVersion set). AlreadyExistsError when the
        name is taken, InvalidError (422) for an invalid object. namespace None: the object's own,
        else the backend's."""
        return self._write(_lib.tfjob_transport_create, resource, obj, namespace)

    def update(self, resource: ResourceLike, obj: ObjectInput, namespace: Optional[str] = None) -> Obj:
        """UPDATE (PUT); with metadata.resourceVersion set, ConflictError when it is stale."""
        return self._write(_lib.tfjob_transport_update, resource, obj, namespace)

    def update_status(self, resource: ResourceLike, obj: ObjectInput, namespace: Optional[str] = None) -> Obj:
        """UPDATE the status subresource (PUT .../status): only status changes are kept."""
        return self._write(_lib.tfjob_transport_update_status, resource, obj, namespace)

    def patch(self, resource: ResourceLike, name: str, patch: ObjectInput, namespace: Optional[str] = None,
              subresource: Optional[str] = None) -> Obj:
        """PATCH with a JSON merge patch (RFC 7386); subresource "status" patches the status."""
        res = _resource(resource)._c()
        return _take(self._out(_lib.tfjob_transport_patch, ctypes.byref(res), _enc(namespace, "namespace"),
                               _req(name, "name"),
                               _enc(subresource), _object_text(patch))) or {}

    def delete(self, resource: ResourceLike, name: str, namespace: Optional[str] = None, *,
               propagation: Optional[str] = None, precondition_uid: Optional[str] = None,
               precondition_resource_version: Optional[str] = None,
               grace_period_seconds: Optional[int] = None) -> Optional[Obj]:
        """DELETE; returns what the server returned (the object or a Status). propagation:
        "Background", "Foreground" or "Orphan". ConflictError when a precondition fails."""
        if propagation not in _PROPAGATION:
            raise ValueError(f"unknown propagation {propagation!r} (Background, Foreground, Orphan)")
        res = _resource(resource)._c()
        opts = _lib.DeleteOptions()
        _lib.tfjob_delete_options_init(ctypes.byref(opts), 1)
        opts.propagation = _PROPAGATION[propagation]
        keep = [_enc(precondition_uid), _enc(precondition_resource_version)]
        opts.precondition_uid, opts.precondition_resource_version = keep
        opts.grace_period_seconds = -1 if grace_period_seconds is None else int(grace_period_seconds)
        return _take(self._out(_lib.tfjob_transport_delete, ctypes.byref(res), _enc(namespace, "namespace"),
                               _req(name, "name"),
                               ctypes.byref(opts)))

    def create_event(self, involved: ObjectInput, type: str, reason: str, message: str,
                     namespace: Optional[str] = None, source_component: Optional[str] = None) -> Obj:
        """Record a core/v1 Event about an object, as client-go's recorder does; type "Normal" or "Warning"."""
        return _take(self._out(_lib.tfjob_transport_create_event, _enc(namespace), _object_text(involved),
                               _req(type, "type"), _req(reason, "reason"), _req(message, "message"),
                               _enc(source_component, "source_component"))) or {}

    def watch(self, resource: ResourceLike, handler: Optional[WatchHandler] = None, namespace: Optional[str] = None,
              *, on_closed: Optional[ClosedHandler] = None, label_selector: Optional[str] = None,
              field_selector: Optional[str] = None, resource_version: Optional[str] = None,
              allow_bookmarks: bool = False, timeout_seconds: int = 0, reconnect: bool = True) -> Watch:
        """Start a WATCH. Without resource_version (or "0") it begins with ADDED events for what
        exists now. See :class:`Watch` for handler and iterator use."""
        return Watch(self, resource, namespace, handler, on_closed, label_selector=label_selector,
                     field_selector=field_selector, resource_version=resource_version,
                     allow_bookmarks=allow_bookmarks, timeout_seconds=timeout_seconds, reconnect=reconnect)

    # ---- TFJob conveniences ----
    def create_tfjob(self, job: ObjectInput, namespace: Optional[str] = None) -> Obj:
        """CREATE a TFJob (a Job, dict or YAML/JSON text)."""
        if isinstance(job, (str, bytes)):
            with Job.from_text(job) as parsed:
                return self.create(TFJOBS, parsed, namespace)
        return self.create(TFJOBS, job, namespace)

    def get_tfjob(self, name: str, namespace: Optional[str] = None) -> Obj:
        return self.get(TFJOBS, name, namespace)

    def wait_for_job(self, name: str, conditions: Any = ("Succeeded", "Failed"), namespace: Optional[str] = None,
                     timeout: Optional[float] = 60.0) -> Obj:
        """Watch the TFJob until one of the condition types is True; returns the job. A watch, not
        polling. TimeoutError after timeout seconds (None: no limit)."""
        wanted = (conditions,) if isinstance(conditions, str) else tuple(conditions)
        deadline = None if timeout is None else time.monotonic() + timeout
        with self.watch(TFJOBS, namespace=namespace, field_selector=f"metadata.name={name}") as w:
            while True:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise TimeoutError(f"TFJob {name}: none of {', '.join(wanted)} within {timeout} s")
                ev = w.next(timeout=left)
                if ev is None:
                    if w.done:
                        raise Error(f"the watch of TFJob {name} ended", ESTATE)
                    continue
                if ev.type in ("ADDED", "MODIFIED") and any(has_condition(ev.object, c) for c in wanted):
                    return ev.object

    def __repr__(self) -> str:
        return f"<tfjob.{type(self).__name__} {self.namespace if self._g.open else 'closed'}>"


class MemoryBackend(Backend):
    """The in-memory fake API store (memory.h): a faithful stand-in for kube-apiserver + etcd
    (resourceVersions, conflicts, generateName, selectors, watches, garbage collection).

    clock: a callable returning Unix seconds (None: the system clock); it runs on whatever thread
    writes, and an exception in it falls back to the system clock (it is re-raised by ``close()``)."""

    def __init__(self, namespace: Optional[str] = None, *, clock: Optional[Callable[[], float]] = None,
                 seed: int = 0, history_limit: int = 0, bookmark_interval: Optional[float] = None):
        opts = _lib.MemoryOptions()
        _lib.tfjob_memory_options_init(ctypes.byref(opts), 1)
        opts.history_limit = int(history_limit)
        if bookmark_interval is not None:
            opts.bookmark_interval_ms = -1 if bookmark_interval < 0 else max(1, _runtime.ms(bookmark_interval))
        opts.seed = int(seed)
        ns = _enc(namespace)
        opts.default_namespace = ns
        self._clock_error: Optional[BaseException] = None
        self._clock_cb = None
        if clock is not None:
            def tramp(_payload: Any) -> int:
                with _runtime.callback_scope():
                    try:
                        return int(clock())
                    except BaseException as exc:
                        if self._clock_error is None:
                            self._clock_error = exc
                        return int(time.time())
            self._clock_cb = _lib.CLOCK_CB(tramp)
            opts.clock = self._clock_cb
        super().__init__(call_out(_lib.tfjob_memory_transport_new, ctypes.byref(opts)))

    @property
    def resource_version(self) -> int:
        """The store's current resourceVersion (1 before the first write, as a fresh etcd)."""
        with self._g.use() as h:
            return int(_lib.tfjob_memory_resource_version(h))

    def bookmark(self) -> None:
        """Send a BOOKMARK now to every watch that asked for bookmarks."""
        with self._g.use() as h:
            rc = _lib.tfjob_memory_bookmark(h)
        if rc != 0:
            raise from_handle(rc, None)

    def compact(self) -> None:
        """Forget the event history (as etcd compaction does): older resumes get GoneError."""
        with self._g.use() as h:
            rc = _lib.tfjob_memory_compact(h)
        if rc != 0:
            raise from_handle(rc, None)

    def close(self) -> None:
        super().close()
        exc, self._clock_error = self._clock_error, None
        if exc is not None:
            raise exc


class KubeBackend(Backend):
    """A Kubernetes API server over HTTPS (kube.h): kubeconfig (with exec plugins, token files,
    client certificates) or the in-cluster service account; rate limit, retries, streaming
    watches. Use the constructors :meth:`from_kubeconfig`, :meth:`in_cluster` or :meth:`auto`.
    No network traffic happens until the first call."""

    _SOURCES = {"auto": 0, "kubeconfig": 1, "in-cluster": 2}

    def __init__(self, source: str = "auto", *, kubeconfig: Optional[str] = None, context: Optional[str] = None,
                 namespace: Optional[str] = None, in_cluster_dir: Optional[str] = None, qps: float = 0.0,
                 burst: int = 0, connect_timeout: Optional[float] = None, request_timeout: Optional[float] = None,
                 max_retries: int = 0, retry_base: Optional[float] = None, user_agent: Optional[str] = None):
        if source not in self._SOURCES:
            raise ValueError(f"unknown source {source!r} (auto, kubeconfig, in-cluster)")
        _runtime.global_init()
        opts = _lib.KubeOptions()
        _lib.tfjob_kube_options_init(ctypes.byref(opts), 1)
        opts.source = self._SOURCES[source]
        keep = [_enc(kubeconfig), _enc(context), _enc(namespace), _enc(in_cluster_dir), _enc(user_agent)]
        opts.kubeconfig, opts.context, opts.namespace_name, opts.in_cluster_dir, opts.user_agent = keep
        opts.qps = float(qps)
        opts.burst = int(burst)
        opts.connect_timeout_ms = _runtime.ms(connect_timeout)
        opts.request_timeout_ms = _runtime.ms(request_timeout)
        opts.max_retries = int(max_retries)
        opts.retry_base_ms = _runtime.ms(retry_base)
        super().__init__(call_out(_lib.tfjob_kube_transport_new, ctypes.byref(opts)))

    @classmethod
    def from_kubeconfig(cls, path: Optional[str] = None, context: Optional[str] = None, **kw: Any) -> "KubeBackend":
        """From a kubeconfig file (None: $KUBECONFIG, else ~/.kube/config) and context (None: current)."""
        return cls("kubeconfig", kubeconfig=path, context=context, **kw)

    @classmethod
    def in_cluster(cls, directory: Optional[str] = None, **kw: Any) -> "KubeBackend":
        """From the pod's service account (directory None: /var/run/secrets/kubernetes.io/serviceaccount)."""
        return cls("in-cluster", in_cluster_dir=directory, **kw)

    @classmethod
    def auto(cls, **kw: Any) -> "KubeBackend":
        """As kubectl finds its configuration: kubeconfig, else in-cluster."""
        return cls("auto", **kw)

    @property
    def server(self) -> str:
        """The API server URL in use."""
        with self._g.use() as h:
            return _lib.decode(_lib.tfjob_kube_transport_server(h)) or ""
