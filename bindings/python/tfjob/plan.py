"""The reconcile planner (include/tfjob/plan.h)."""
from __future__ import annotations

import ctypes
import datetime as _dt
import json
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _lib
from .cluster import c_string, render_options
from .errors import check
from .job import Job, compat_value

Objects = Union[None, str, bytes, Iterable[Dict[str, Any]], Dict[str, Any]]


@dataclass(frozen=True)
class Action:
    """One step of a plan: action is "create", "delete", "event", "adopt", "release", "patch" or
    "wait" (docs/plan.md)."""

    action: str
    kind: Optional[str] = None       # Pod, Service, TFJob, PodGroup
    name: Optional[str] = None
    object: Optional[Dict[str, Any]] = None  # the object to create
    type: Optional[str] = None       # Normal or Warning (event)
    reason: Optional[str] = None
    message: Optional[str] = None
    patch: Optional[Dict[str, Any]] = None   # the merge patch of adopt, release, patch


@dataclass(frozen=True)
class Plan:
    actions: List[Action]
    status: Dict[str, Any]
    changed: bool
    requeue_after: Optional[float] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)


def _objects_text(objs: Objects, what: str) -> Optional[bytes]:
    if objs is None:
        return None
    if isinstance(objs, (bytes, bytearray)):
        text = bytes(objs)
    elif isinstance(objs, str):
        text = c_string(objs, what) or b""
    elif isinstance(objs, dict):
        text = json.dumps(objs).encode()
    elif isinstance(objs, Iterable):
        text = json.dumps(list(objs)).encode()
    else:
        raise TypeError(f"{what} must be a list of dicts, a dict, JSON/YAML text or None, not {type(objs).__name__}")
    if b"\0" in text:
        raise ValueError(f"{what} contains a NUL byte")
    return text


def _unix_seconds(now: Union[None, int, float, str, _dt.datetime]) -> int:
    if now is None:
        return int(_dt.datetime.now(_dt.timezone.utc).timestamp())
    if isinstance(now, _dt.datetime):
        if now.tzinfo is None:
            raise ValueError("now must be timezone-aware (e.g. datetime.timezone.utc)")
        return int(now.timestamp())
    if isinstance(now, str):
        out = ctypes.c_int64()
        if "\0" in now or _lib.tfjob_time_parse(ctypes.byref(out), now.encode("utf-8", "replace")) != 0:
            raise ValueError(f"not an RFC 3339 time: {now!r}")
        return out.value
    if isinstance(now, bool) or not isinstance(now, (int, float)):
        raise TypeError(f"now must be a datetime, Unix seconds or RFC 3339 text, not {type(now).__name__}")
    if now != now or not -62167219200 <= now < 253402300800:  # NaN, or outside the years 0000-9999
        raise ValueError(f"now {now!r} is outside the years 0000-9999")
    return int(now)


def plan(job: Job, pods: Objects = None, services: Objects = None, *, now: Union[None, int, float, str,
         _dt.datetime] = None, requeues: int = 0, compat: Optional[str] = None,
         pod_group: Union[None, str, bytes, Dict[str, Any]] = None, **render: Any) -> Plan:
    """Plan one reconcile step of ``job`` given the observed pods and services (lists of dicts,
    a Kubernetes List, or JSON/YAML text) at time ``now`` (aware datetime, Unix seconds or
    RFC 3339; default: the current time). ``pod_group`` is the job's observed PodGroup (a dict or
    JSON/YAML text; read with a gang scheduler).

    The other keyword arguments tune the children the plan creates, as for ``tfjob.render``:
    cluster_domain, namespace, exclude_evaluator, address, gang_scheduler ("volcano" or
    "scheduler-plugins"), scheduler_name, priority."""
    if not isinstance(job, Job):
        raise TypeError(f"job must be a tfjob.Job, not {type(job).__name__}")
    if isinstance(requeues, bool) or not isinstance(requeues, int) or not 0 <= requeues < 2**63:
        raise ValueError(f"requeues must be a non-negative int, not {requeues!r}")
    ropts = render_options(compat=compat, **render)
    pods_text, services_text = _objects_text(pods, "pods"), _objects_text(services, "services")
    group_text = _objects_text(pod_group, "pod_group")
    opts = _lib.PlanOptions()
    _lib.tfjob_plan_options_init(ctypes.byref(opts), 2)
    opts.pod_group_json = group_text
    opts.compat = compat_value(compat)
    opts.now = _unix_seconds(now)
    opts.requeues = int(requeues)
    opts.render = ctypes.pointer(ropts.c)
    handle, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = _lib.tfjob_plan_new(ctypes.byref(handle), job.handle, pods_text, services_text, ctypes.byref(opts),
                             ctypes.byref(err))
    ropts.finish(rc, err, lambda: _lib.tfjob_plan_free(handle))
    try:
        out = ctypes.c_void_p()
        check(_lib.tfjob_plan_to_json(ctypes.byref(out), handle, 0, ctypes.byref(err)), err)
        raw = json.loads(_lib.owned_string(out))
    finally:
        _lib.tfjob_plan_free(handle)
    actions = [Action(action=a["action"], kind=a.get("kind"), name=a.get("name"), object=a.get("object"),
                      type=a.get("type"), reason=a.get("reason"), message=a.get("message"), patch=a.get("patch"))
               for a in raw["actions"]]
    return Plan(actions=actions, status=raw["status"], changed=bool(raw["statusChanged"]),
                requeue_after=raw["requeueAfterSeconds"], raw=raw)


def simulate(scenario: Union[str, bytes], *, compat: Optional[str] = None, max_steps: int = 0, **render: Any) -> str:
    """Run a scenario (YAML/JSON text, docs/simulate.md) through the planner on an in-memory
    cluster and return the report (condition timeline, final status, events), as ``tfjobctl
    simulate`` prints it. ``compat`` overrides the scenario's ``compat:``; ``max_steps`` 0 =
    1000; other keyword arguments as for ``tfjob.render`` (e.g. cluster_domain)."""
    if isinstance(scenario, str):
        data = scenario.encode("utf-8")
    elif isinstance(scenario, (bytes, bytearray)):
        data = bytes(scenario)
    else:
        raise TypeError(f"scenario must be str or bytes, not {type(scenario).__name__}")
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or not 0 <= max_steps < 2**32:
        raise ValueError(f"max_steps must be an int in [0, 2**32), not {max_steps!r}")
    ropts = render_options(compat=compat, **render)
    opts = _lib.SimulateOptions()
    _lib.tfjob_simulate_options_init(ctypes.byref(opts), 1)
    if compat is not None:
        opts.override_compat = 1
        opts.compat = compat_value(compat)
    opts.max_steps = max_steps
    opts.render = ctypes.pointer(ropts.c)
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    rc = _lib.tfjob_simulate(ctypes.byref(out), data, len(data), ctypes.byref(opts), ctypes.byref(err))
    ropts.finish(rc, err, lambda: _lib.tfjob_free(out))
    return _lib.owned_string(out)
