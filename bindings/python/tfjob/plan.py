"""The reconcile planner (include/tfjob/plan.h)."""
from __future__ import annotations

import ctypes
import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _lib
from .cluster import render_options
from .errors import check
from .job import Job, compat_value

Objects = Union[None, str, bytes, Iterable[Dict[str, Any]], Dict[str, Any]]


@dataclass(frozen=True)
class Action:
    """One step of a plan: action is "create", "delete" or "event"."""

    action: str
    kind: Optional[str] = None       # Pod, Service, TFJob (create/delete)
    name: Optional[str] = None
    object: Optional[Dict[str, Any]] = None  # the object to create
    type: Optional[str] = None       # Normal or Warning (event)
    reason: Optional[str] = None
    message: Optional[str] = None


@dataclass(frozen=True)
class Plan:
    actions: List[Action]
    status: Dict[str, Any]
    changed: bool
    requeue_after: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


def _objects_text(objs: Objects) -> Optional[bytes]:
    if objs is None:
        return None
    if isinstance(objs, bytes):
        return objs
    if isinstance(objs, str):
        return objs.encode()
    if isinstance(objs, dict):
        return json.dumps(objs).encode()
    return json.dumps(list(objs)).encode()


def _unix_seconds(now: Union[None, int, float, str, _dt.datetime]) -> int:
    if now is None:
        return int(_dt.datetime.now(_dt.timezone.utc).timestamp())
    if isinstance(now, _dt.datetime):
        if now.tzinfo is None:
            raise ValueError("now must be timezone-aware (e.g. datetime.timezone.utc)")
        return int(now.timestamp())
    if isinstance(now, str):
        out = ctypes.c_int64()
        if _lib.tfjob_time_parse(ctypes.byref(out), now.encode()) != 0:
            raise ValueError(f"not an RFC 3339 time: {now!r}")
        return out.value
    return int(now)


def plan(job: Job, pods: Objects = None, services: Objects = None, *, now: Union[None, int, float, str,
         _dt.datetime] = None, requeues: int = 0, compat: Optional[str] = None,
         cluster_domain: Optional[str] = None) -> Plan:
    """Plan one reconcile step of ``job`` given the observed pods and services (lists of dicts,
    a Kubernetes List, or JSON/YAML text) at time ``now`` (aware datetime, Unix seconds or
    RFC 3339; default: the current time)."""
    ropts = render_options(compat=compat, cluster_domain=cluster_domain)
    opts = _lib.PlanOptions()
    _lib.tfjob_plan_options_init(ctypes.byref(opts), 1)
    opts.compat = compat_value(compat)
    opts.now = _unix_seconds(now)
    opts.requeues = int(requeues)
    opts.render = ctypes.pointer(ropts.c)
    handle, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = _lib.tfjob_plan_new(ctypes.byref(handle), job.handle, _objects_text(pods), _objects_text(services),
                             ctypes.byref(opts), ctypes.byref(err))
    check(rc, err)
    try:
        out = ctypes.c_void_p()
        check(_lib.tfjob_plan_to_json(ctypes.byref(out), handle, 0, ctypes.byref(err)), err)
        raw = json.loads(_lib.owned_string(out))
    finally:
        _lib.tfjob_plan_free(handle)
    actions = [Action(action=a["action"], kind=a.get("kind"), name=a.get("name"), object=a.get("object"),
                      type=a.get("type"), reason=a.get("reason"), message=a.get("message")) for a in raw["actions"]]
    return Plan(actions=actions, status=raw["status"], changed=bool(raw["statusChanged"]),
                requeue_after=raw["requeueAfterSeconds"], raw=raw)
