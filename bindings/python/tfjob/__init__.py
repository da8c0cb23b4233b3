"""Python bindings for libtfjob, the reference implementation of Kubeflow TFJob semantics.

Bound with ctypes: nothing to compile at install time, the shared library is loaded at import
(TFJOB_LIBRARY, the copy bundled in a wheel, pkg-config or the system path) and its major
version is checked.
"""
from __future__ import annotations

import ctypes

from . import _lib
from .errors import (AlreadyExistsError, BadRequestError, ConflictError, Error, ForbiddenError, GoneError,
                     InvalidError, NetworkError, NotFoundError, ParseError, SchemaError, ServerError,
                     ServerTimeoutError, TooManyRequestsError, TransportError, UnauthorizedError, ValidationError)
from .job import (COMPAT_DOCUMENTED, COMPAT_TRAINING_OPERATOR_1_9, FieldError, Job, JobWarning,
                  exit_code_retryable)
from .cluster import pod_group, render, render_pod, render_service, tf_config, tf_config_text
from .plan import Action, Plan, plan, simulate
from .transport import (EVENTS, NAMESPACES, PODGROUPS, PODS, SERVICES, TFJOBS, Backend, KubeBackend, MemoryBackend,
                        Resource, Watch, WatchEvent, condition, has_condition)
from .controller import Controller, Metrics
from .local import LocalBackend, LocalEngine, LocalResult, check_local, local_report, new_run_dir, run_local

__version__ = "0.1.0"


def library_version() -> str:
    """The version of the libtfjob actually loaded."""
    return _lib.decode(_lib.tfjob_version()) or ""


def _check_library() -> None:
    major = ctypes.c_int()
    _lib.tfjob_version_numbers(ctypes.byref(major), None, None)
    if major.value != _lib.REQUIRED_MAJOR:
        raise ImportError(f"tfjob {__version__} needs libtfjob {_lib.REQUIRED_MAJOR}.x, found {library_version()}")


_check_library()

__all__ = [
    "COMPAT_DOCUMENTED", "COMPAT_TRAINING_OPERATOR_1_9", "ConflictError", "Error", "FieldError", "Job", "JobWarning",
    "NotFoundError", "ParseError", "SchemaError", "TransportError", "ValidationError", "exit_code_retryable",
    "library_version", "__version__", "Action", "Plan", "plan", "simulate", "pod_group", "render", "render_pod",
    "render_service", "tf_config",
    "tf_config_text", "AlreadyExistsError", "BadRequestError", "ForbiddenError", "GoneError", "InvalidError",
    "NetworkError", "ServerError", "ServerTimeoutError", "TooManyRequestsError", "UnauthorizedError",
    "Backend", "MemoryBackend", "KubeBackend", "Resource", "Watch", "WatchEvent", "TFJOBS", "PODS", "SERVICES",
    "EVENTS", "PODGROUPS", "NAMESPACES", "condition", "has_condition", "Controller", "Metrics", "LocalEngine",
    "LocalBackend", "LocalResult", "check_local", "local_report", "new_run_dir", "run_local",
]
