"""TF_CONFIG and rendering of a job's children (include/tfjob/cluster.h)."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Dict, List, Optional

from . import _lib
from .errors import check
from .job import Job, compat_value

GANG_SCHEDULERS = {None: 0, "": 0, "volcano": 1, "scheduler-plugins": 2}

AddressResolver = Callable[[str, int, int], str]


class _RenderOptions:
    """Builds the C options and keeps every buffer and callback alive while they are in use."""

    def __init__(self, compat: Optional[str], cluster_domain: Optional[str], namespace: Optional[str],
                 exclude_evaluator: bool, address: Optional[AddressResolver], gang_scheduler: Optional[str],
                 scheduler_name: Optional[str]):
        self.c = _lib.RenderOptions()
        _lib.tfjob_render_options_init(ctypes.byref(self.c), 1)
        self.c.compat = compat_value(compat)
        self._keep = [s.encode() if s else None for s in (cluster_domain, namespace, scheduler_name)]
        self.c.cluster_domain, self.c.default_namespace, self.c.scheduler_name = self._keep
        self.c.exclude_evaluator = 1 if exclude_evaluator else 0
        if gang_scheduler not in GANG_SCHEDULERS:
            raise ValueError(f"unknown gang scheduler {gang_scheduler!r} (volcano or scheduler-plugins)")
        self.c.gang_scheduler = GANG_SCHEDULERS[gang_scheduler]
        self.error: Optional[BaseException] = None
        self._cb = None
        if address is not None:
            def trampoline(out, size, rtype, index, port, _payload):
                try:
                    text = address(rtype.decode(), int(index), int(port)).encode()
                    if len(text) + 1 > size:
                        return -3
                    ctypes.memmove(out, text + b"\0", len(text) + 1)
                    return 0
                except BaseException as exc:  # reported after the C call returns
                    self.error = exc
                    return -1
            self._cb = _lib.ADDRESS_CB(trampoline)
            self.c.address_cb = self._cb

    def raise_callback_error(self) -> None:
        if self.error is not None:
            raise self.error


def render_options(**kw: Any) -> _RenderOptions:
    return _RenderOptions(kw.get("compat"), kw.get("cluster_domain"), kw.get("namespace"),
                          kw.get("exclude_evaluator", False), kw.get("address"), kw.get("gang_scheduler"),
                          kw.get("scheduler_name"))


def tf_config(job: Job, replica_type: str, index: int, *, cluster_domain: Optional[str] = None,
              compat: Optional[str] = None, address: Optional[AddressResolver] = None,
              exclude_evaluator: bool = False, namespace: Optional[str] = None) -> Optional[Dict[str, Any]]:
    """TF_CONFIG of replica (type, index) as a dict, or None when the job is not distributed.
    Defaults are applied to a copy of the job first. The raw string is ``tf_config_text``."""
    text = tf_config_text(job, replica_type, index, cluster_domain=cluster_domain, compat=compat, address=address,
                          exclude_evaluator=exclude_evaluator, namespace=namespace)
    return json.loads(text) if text else None


def tf_config_text(job: Job, replica_type: str, index: int, **kw: Any) -> str:
    opts = render_options(**kw)
    with job.with_defaults(compat=kw.get("compat")) as defaulted:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = _lib.tfjob_tf_config(ctypes.byref(out), defaulted.handle, replica_type.encode(), int(index),
                                  ctypes.byref(opts.c), ctypes.byref(err))
        opts.raise_callback_error()
        check(rc, err)
        return _lib.owned_string(out)


def render(job: Job, **kw: Any) -> Dict[str, List[Dict[str, Any]]]:
    """Every Pod and Service of a new job: {"pods": [...], "services": [...]}."""
    opts = render_options(**kw)
    with job.with_defaults(compat=kw.get("compat")) as defaulted:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = _lib.tfjob_render_all(ctypes.byref(out), defaulted.handle, ctypes.byref(opts.c), 0, ctypes.byref(err))
        opts.raise_callback_error()
        check(rc, err)
        return json.loads(_lib.owned_string(out))


def pod_group(job: Job, gang_scheduler: str = "volcano", **kw: Any) -> Dict[str, Any]:
    """The PodGroup object for gang scheduling (volcano or scheduler-plugins)."""
    opts = render_options(gang_scheduler=gang_scheduler, **kw)
    with job.with_defaults(compat=kw.get("compat")) as defaulted:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = _lib.tfjob_render_pod_group(ctypes.byref(out), defaulted.handle, ctypes.byref(opts.c), 0,
                                         ctypes.byref(err))
        check(rc, err)
        return json.loads(_lib.owned_string(out))
