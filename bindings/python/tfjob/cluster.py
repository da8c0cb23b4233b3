"""TF_CONFIG and rendering of a job's children and PodGroup (include/tfjob/graph.h)."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Dict, List, Mapping, Optional, Union

from . import _lib
from .errors import check
from .job import Job, compat_value

GANG_SCHEDULERS = {None: 0, "": 0, "volcano": 1, "scheduler-plugins": 2}

AddressResolver = Callable[[str, int, int], str]
# A PriorityClass name ("" when a replica names none) -> its value, or None for "no such class"
# (priority 0); or a mapping of names to values.
PriorityLookup = Union[Callable[[str], Optional[int]], Mapping[str, int]]

# The keyword arguments every rendering call takes (tfjob_render_options).
RENDER_KEYWORDS = ("compat", "cluster_domain", "namespace", "exclude_evaluator", "address", "gang_scheduler",
                   "scheduler_name", "priority")

_ENOTFOUND = -9  # TFJOB_ENOTFOUND


def c_string(value: Optional[str], what: str) -> Optional[bytes]:
    """UTF-8 bytes of an optional string argument for C (TypeError, ValueError for NUL)."""
    return _lib.cstr(value, what)


class _RenderOptions:
    """Builds the C options and keeps every buffer and callback alive while they are in use."""

    def __init__(self, compat: Optional[str] = None, cluster_domain: Optional[str] = None,
                 namespace: Optional[str] = None, exclude_evaluator: bool = False,
                 address: Optional[AddressResolver] = None, gang_scheduler: Optional[str] = None,
                 scheduler_name: Optional[str] = None, priority: Optional[PriorityLookup] = None):
        self.c = _lib.RenderOptions()
        _lib.tfjob_render_options_init(ctypes.byref(self.c), 1)
        self.c.compat = compat_value(compat)
        self._keep = [c_string(cluster_domain, "cluster_domain") or None, c_string(namespace, "namespace") or None,
                      c_string(scheduler_name, "scheduler_name") or None]
        self.c.cluster_domain, self.c.default_namespace, self.c.scheduler_name = self._keep
        self.c.exclude_evaluator = 1 if exclude_evaluator else 0
        if not isinstance(gang_scheduler, (str, type(None))) or gang_scheduler not in GANG_SCHEDULERS:
            raise ValueError(f"unknown gang scheduler {gang_scheduler!r} (volcano or scheduler-plugins)")
        self.c.gang_scheduler = GANG_SCHEDULERS[gang_scheduler]
        self.error: Optional[BaseException] = None
        self._cb = None
        self._prio_cb = None
        if address is not None:
            if not callable(address):
                raise TypeError("address must be a callable (type, index, port) -> 'host:port'")

            def trampoline(out, size, rtype, index, port, _payload):
                try:
                    result = address(rtype.decode(), int(index), int(port))
                    if not isinstance(result, str):
                        raise TypeError(f"address resolver returned {type(result).__name__}, not str")
                    text = c_string(result, "address") or b""
                    if len(text) + 1 > size:
                        raise ValueError(f"address {result[:64]!r} is longer than {size - 1} bytes")
                    ctypes.memmove(out, text + b"\0", len(text) + 1)
                    return 0
                except BaseException as exc:  # reported after the C call returns
                    if self.error is None:
                        self.error = exc
                    return -1
            self._cb = _lib.ADDRESS_CB(trampoline)
            self.c.address_cb = self._cb
        if priority is not None:
            if isinstance(priority, Mapping):
                table = priority
                lookup: Callable[[str], Optional[int]] = lambda name: table.get(name)  # noqa: E731
            elif callable(priority):
                lookup = priority
            else:
                raise TypeError("priority must be a callable name -> int|None or a mapping of names to ints")

            def prio_trampoline(out, name, _payload):
                try:
                    value = lookup(name.decode())
                    if value is None:
                        return _ENOTFOUND
                    if isinstance(value, bool) or not isinstance(value, int):
                        raise TypeError(f"priority of {name.decode()!r} is {type(value).__name__}, not int")
                    if not -2**31 <= value < 2**31:
                        raise ValueError(f"priority {value} of {name.decode()!r} is not a 32-bit integer")
                    out[0] = value
                    return 0
                except BaseException as exc:  # reported after the C call returns
                    if self.error is None:
                        self.error = exc
                    return _ENOTFOUND
            self._prio_cb = _lib.PRIORITY_CB(prio_trampoline)
            self.c.priority_cb = self._prio_cb

    def raise_callback_error(self) -> None:
        if self.error is not None:
            error, self.error = self.error, None
            raise error

    def finish(self, rc: int, err: ctypes.c_void_p, release_result: Callable[[], None]) -> None:
        """After a C call that ran these options' callbacks: a callback's exception wins (the
        call's result, or its error, is released first), else the call's own error is raised."""
        try:
            self.raise_callback_error()
        except BaseException:
            if rc == 0:
                release_result()
            else:
                _lib.tfjob_error_free(err)
            raise
        check(rc, err)


def render_options(**kw: Any) -> _RenderOptions:
    unknown = set(kw) - set(RENDER_KEYWORDS)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(sorted(unknown))}")
    return _RenderOptions(**kw)


def _render_call(job: Job, kw: Dict[str, Any], call: Callable[[ctypes.c_void_p, Any, Any, Any], int]) -> str:
    if not isinstance(job, Job):
        raise TypeError(f"job must be a tfjob.Job, not {type(job).__name__}")
    opts = render_options(**kw)
    with job.with_defaults(compat=kw.get("compat")) as defaulted:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = call(defaulted.handle, ctypes.byref(opts.c), ctypes.byref(out), ctypes.byref(err))
        opts.finish(rc, err, lambda: _lib.tfjob_free(out))
        return _lib.owned_string(out)


def _replica(replica_type: str, index: int) -> tuple:
    rtype = c_string(replica_type, "replica type")
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"index must be an int, not {type(index).__name__}")
    if not -2**63 <= index < 2**63:
        raise ValueError(f"index {index} out of range")
    return rtype, index


def tf_config(job: Job, replica_type: str, index: int, **kw: Any) -> Optional[Dict[str, Any]]:
    """TF_CONFIG of replica (type, index) as a dict, or None when the job is not distributed.
    Defaults are applied to a copy of the job first. The raw string is ``tf_config_text``.
    Keyword arguments: those of ``render``."""
    text = tf_config_text(job, replica_type, index, **kw)
    return json.loads(text) if text else None


def tf_config_text(job: Job, replica_type: str, index: int, **kw: Any) -> str:
    rtype, index = _replica(replica_type, index)
    return _render_call(job, kw, lambda d, o, out, err: _lib.tfjob_tf_config(out, d, rtype, index, o, err))


def render(job: Job, **kw: Any) -> Dict[str, List[Dict[str, Any]]]:
    """Every Pod and Service of a new job: {"pods": [...], "services": [...]}.

    Keyword arguments (tfjob_render_options): compat, cluster_domain, namespace (used when
    metadata.namespace is absent), exclude_evaluator, address (resolver callable),
    gang_scheduler ("volcano" or "scheduler-plugins"), scheduler_name, priority (callable or
    mapping: PriorityClass name -> value, for the PodGroup's minResources)."""
    return json.loads(_render_call(job, kw, lambda d, o, out, err: _lib.tfjob_render_all(out, d, o, 0, err)))


def render_pod(job: Job, replica_type: str, index: int, **kw: Any) -> Dict[str, Any]:
    """The Pod of replica (type, index) as the controller creates it (keyword arguments: ``render``'s)."""
    rtype, index = _replica(replica_type, index)
    return json.loads(_render_call(job, kw, lambda d, o, out, err: _lib.tfjob_render_pod(out, d, rtype, index, o, 0,
                                                                                         err)))


def render_service(job: Job, replica_type: str, index: int, **kw: Any) -> Dict[str, Any]:
    """The headless Service of replica (type, index) (keyword arguments: ``render``'s)."""
    rtype, index = _replica(replica_type, index)
    return json.loads(_render_call(job, kw, lambda d, o, out, err: _lib.tfjob_render_service(out, d, rtype, index, o,
                                                                                             0, err)))


def pod_group(job: Job, gang_scheduler: str = "volcano", **kw: Any) -> Dict[str, Any]:
    """The PodGroup object for gang scheduling ("volcano" or "scheduler-plugins"); keyword
    arguments: ``render``'s (``priority`` orders the replicas counted in minResources)."""
    if gang_scheduler in (None, ""):
        raise ValueError("pod_group needs a gang scheduler: 'volcano' or 'scheduler-plugins'")
    kw["gang_scheduler"] = gang_scheduler
    return json.loads(_render_call(job, kw, lambda d, o, out, err: _lib.tfjob_render_pod_group(out, d, o, 0, err)))
