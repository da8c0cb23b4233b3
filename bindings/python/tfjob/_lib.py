"""Loading libtfjob and declaring the C prototypes (ctypes).

The library is found, in order, through the TFJOB_LIBRARY environment variable (a path to
libtfjob.so), the copy bundled in the package (a wheel built with TFJOB_WHEEL_LIBRARY, setup.py),
pkg-config's libdir for ``tfjob``, build/lib/ of the source checkout the package is imported from
(bindings/python in the repository), and the system's library search path.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from typing import Optional

# The structs and callback types, generated from the C headers by gen_structs.py.
from ._structs import (ADDRESS_CB, AFTER_RECONCILE_CB, API_VERB_COUNT, BEFORE_RECONCILE_CB,  # noqa: F401
                       CLOCK_CB, CONTROLLER_LATENCY_BUCKETS, LOCAL_EVENT_CB, LOCAL_UPDATE_CB, LOG_CB,
                       POD_MUTATE_CB, PRIORITY_CB, WATCH_CLOSED_CB, WATCH_EVENT_CB, ControllerHooks,
                       ControllerMetrics, ControllerOptions, DefaultOptions, DeleteOptions, KubeOptions,
                       ListOptions, LocalOptions, LocalRunOptions, MemoryOptions, ParseOptions, PlanOptions,
                       RenderOptions, Resource, SimulateOptions, ValidateOptions, WarningOptions, WatchOptions)

c_char_p = ctypes.c_char_p
c_int = ctypes.c_int
c_size_t = ctypes.c_size_t
c_void_p = ctypes.c_void_p
c_int64 = ctypes.c_int64
c_uint = ctypes.c_uint

SONAME = "libtfjob.so.0"
REQUIRED_MAJOR = 0


def _candidates() -> list:
    paths = []
    env = os.environ.get("TFJOB_LIBRARY")
    if env:
        paths.append(env)
    # A wheel that bundles the library (setup.py, TFJOB_WHEEL_LIBRARY) has it next to this file.
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), SONAME)
    if os.path.exists(bundled):
        paths.append(bundled)
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(["pkg-config", "--variable=libdir", "tfjob"], capture_output=True,
                                    text=True, check=True).stdout.strip()
            if libdir:
                paths.append(os.path.join(libdir, SONAME))
        except (OSError, subprocess.CalledProcessError):
            pass
    # A source checkout (the package imported from bindings/python): the library built in build/.
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    if os.path.exists(os.path.join(root, "meson.build")):
        paths.append(os.path.join(root, "build", "lib", SONAME))
    paths.append(SONAME)
    found = ctypes.util.find_library("tfjob")
    if found:
        paths.append(found)
    return paths


def _load() -> ctypes.CDLL:
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as exc:
            errors.append(f"{path}: {exc}")
    raise ImportError("cannot load libtfjob (set TFJOB_LIBRARY to the path of libtfjob.so): " + "; ".join(errors))


lib = _load()


def _fn(name: str, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


P = ctypes.POINTER
ERR = P(c_void_p)

tfjob_version = _fn("tfjob_version", c_char_p)
tfjob_version_numbers = _fn("tfjob_version_numbers", c_int, P(c_int), P(c_int), P(c_int))
tfjob_free = _fn("tfjob_free", None, c_void_p)
tfjob_compat_from_string = _fn("tfjob_compat_from_string", c_int, P(c_int), c_char_p)
tfjob_strerror = _fn("tfjob_strerror", c_char_p, c_int)
tfjob_error_code_of = _fn("tfjob_error_code_of", c_int, c_void_p)
tfjob_error_message = _fn("tfjob_error_message", c_char_p, c_void_p)
tfjob_error_field = _fn("tfjob_error_field", c_char_p, c_void_p)
tfjob_error_file = _fn("tfjob_error_file", c_char_p, c_void_p)
tfjob_error_line = _fn("tfjob_error_line", c_int, c_void_p)
tfjob_error_column = _fn("tfjob_error_column", c_int, c_void_p)
tfjob_error_http_status = _fn("tfjob_error_http_status", c_int, c_void_p)
tfjob_error_free = _fn("tfjob_error_free", None, c_void_p)
tfjob_parse_options_init = _fn("tfjob_parse_options_init", c_int, P(ParseOptions), c_uint)
tfjob_job_parse = _fn("tfjob_job_parse", c_int, P(c_void_p), c_char_p, c_size_t, P(ParseOptions), ERR)
tfjob_job_parse_all = _fn("tfjob_job_parse_all", c_int, P(P(c_void_p)), P(c_size_t), c_char_p, c_size_t,
                          P(ParseOptions), ERR)
tfjob_job_array_free = _fn("tfjob_job_array_free", None, P(c_void_p), c_size_t)
tfjob_job_clone = _fn("tfjob_job_clone", c_int, P(c_void_p), c_void_p, ERR)
tfjob_job_free = _fn("tfjob_job_free", None, c_void_p)
tfjob_job_to_json = _fn("tfjob_job_to_json", c_int, P(c_void_p), c_void_p, c_uint, ERR)
tfjob_default_options_init = _fn("tfjob_default_options_init", c_int, P(DefaultOptions), c_uint)
tfjob_job_apply_defaults = _fn("tfjob_job_apply_defaults", c_int, c_void_p, P(DefaultOptions), ERR)
tfjob_validate_options_init = _fn("tfjob_validate_options_init", c_int, P(ValidateOptions), c_uint)
tfjob_job_validate = _fn("tfjob_job_validate", c_int, P(c_void_p), c_void_p, P(ValidateOptions), ERR)
tfjob_field_errors_count = _fn("tfjob_field_errors_count", c_size_t, c_void_p)
tfjob_field_errors_field = _fn("tfjob_field_errors_field", c_char_p, c_void_p, c_size_t)
tfjob_field_errors_type = _fn("tfjob_field_errors_type", c_int, c_void_p, c_size_t)
tfjob_field_error_type_name = _fn("tfjob_field_error_type_name", c_char_p, c_int)
tfjob_field_errors_detail = _fn("tfjob_field_errors_detail", c_char_p, c_void_p, c_size_t)
tfjob_field_errors_message = _fn("tfjob_field_errors_message", c_char_p, c_void_p, c_size_t)
tfjob_field_errors_free = _fn("tfjob_field_errors_free", None, c_void_p)
tfjob_warning_options_init = _fn("tfjob_warning_options_init", c_int, P(WarningOptions), c_uint)
tfjob_job_warnings = _fn("tfjob_job_warnings", c_int, P(c_void_p), c_void_p, P(WarningOptions), ERR)
tfjob_warnings_count = _fn("tfjob_warnings_count", c_size_t, c_void_p)
tfjob_warnings_reason = _fn("tfjob_warnings_reason", c_char_p, c_void_p, c_size_t)
tfjob_warnings_field = _fn("tfjob_warnings_field", c_char_p, c_void_p, c_size_t)
tfjob_warnings_message = _fn("tfjob_warnings_message", c_char_p, c_void_p, c_size_t)
tfjob_warnings_free = _fn("tfjob_warnings_free", None, c_void_p)
tfjob_exit_code_classify = _fn("tfjob_exit_code_classify", c_int, c_int, c_int)

for _name, _res, _args in [
    ("tfjob_job_name", c_char_p, [c_void_p]),
    ("tfjob_job_namespace", c_char_p, [c_void_p]),
    ("tfjob_job_uid", c_char_p, [c_void_p]),
]:
    _fn(_name, _res, *_args)


def owned_string(ptr: c_void_p) -> str:
    """Copy a library-owned char* into a Python str and release it."""
    try:
        return (ctypes.cast(ptr, c_char_p).value or b"").decode("utf-8")
    finally:
        tfjob_free(ptr)


def cstr(value: Optional[str], what: str = "argument", required: bool = False) -> Optional[bytes]:
    """UTF-8 bytes of a string argument for C. TypeError for a non-string (or None when
    required), ValueError for a NUL character: C would silently cut the string there (a name
    "a\\0b" would address the object "a")."""
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\0" in value:
        raise ValueError(f"{what} contains a NUL character")
    return value.encode("utf-8")


def decode(value: Optional[bytes]) -> Optional[str]:
    return None if value is None else value.decode("utf-8")


# ---- cluster.h ----
tfjob_render_options_init = _fn("tfjob_render_options_init", c_int, P(RenderOptions), c_uint)
tfjob_tf_config = _fn("tfjob_tf_config", c_int, P(c_void_p), c_void_p, c_char_p, c_int64, P(RenderOptions), ERR)
tfjob_render_all = _fn("tfjob_render_all", c_int, P(c_void_p), c_void_p, P(RenderOptions), c_uint, ERR)
tfjob_render_pod = _fn("tfjob_render_pod", c_int, P(c_void_p), c_void_p, c_char_p, c_int64, P(RenderOptions), c_uint,
                       ERR)
tfjob_render_service = _fn("tfjob_render_service", c_int, P(c_void_p), c_void_p, c_char_p, c_int64, P(RenderOptions),
                           c_uint, ERR)
tfjob_render_pod_group = _fn("tfjob_render_pod_group", c_int, P(c_void_p), c_void_p, P(RenderOptions), c_uint, ERR)


# ---- plan.h ----
tfjob_plan_options_init = _fn("tfjob_plan_options_init", c_int, P(PlanOptions), c_uint)
tfjob_plan_new = _fn("tfjob_plan_new", c_int, P(c_void_p), c_void_p, c_char_p, c_char_p, P(PlanOptions), ERR)
tfjob_plan_free = _fn("tfjob_plan_free", None, c_void_p)
tfjob_plan_to_json = _fn("tfjob_plan_to_json", c_int, P(c_void_p), c_void_p, c_uint, ERR)
tfjob_time_parse = _fn("tfjob_time_parse", c_int, P(c_int64), c_char_p)


tfjob_simulate_options_init = _fn("tfjob_simulate_options_init", c_int, P(SimulateOptions), c_uint)
tfjob_simulate = _fn("tfjob_simulate", c_int, P(c_void_p), c_char_p, c_size_t, P(SimulateOptions), ERR)


# ---- error.h (more) ----
tfjob_error_details_json = _fn("tfjob_error_details_json", c_char_p, c_void_p)
tfjob_error_reason = _fn("tfjob_error_reason", c_char_p, c_void_p)
tfjob_error_code_name = _fn("tfjob_error_code_name", c_char_p, c_int)
tfjob_global_init = _fn("tfjob_global_init", c_int)
tfjob_global_cleanup = _fn("tfjob_global_cleanup", None)
c_double = ctypes.c_double
c_uint64 = ctypes.c_uint64


# ---- transport.h ----
RES = P(Resource)
tfjob_resource_lookup = _fn("tfjob_resource_lookup", RES, c_char_p)
tfjob_list_options_init = _fn("tfjob_list_options_init", c_int, P(ListOptions), c_uint)
tfjob_delete_options_init = _fn("tfjob_delete_options_init", c_int, P(DeleteOptions), c_uint)
tfjob_watch_options_init = _fn("tfjob_watch_options_init", c_int, P(WatchOptions), c_uint)
tfjob_watch_event_name = _fn("tfjob_watch_event_name", c_char_p, c_int)
tfjob_transport_namespace = _fn("tfjob_transport_namespace", c_char_p, c_void_p)
tfjob_transport_get = _fn("tfjob_transport_get", c_int, P(c_void_p), c_void_p, RES, c_char_p, c_char_p, ERR)
tfjob_transport_list = _fn("tfjob_transport_list", c_int, P(c_void_p), c_void_p, RES, c_char_p, P(ListOptions), ERR)
tfjob_transport_create = _fn("tfjob_transport_create", c_int, P(c_void_p), c_void_p, RES, c_char_p, c_char_p, ERR)
tfjob_transport_update = _fn("tfjob_transport_update", c_int, P(c_void_p), c_void_p, RES, c_char_p, c_char_p, ERR)
tfjob_transport_update_status = _fn("tfjob_transport_update_status", c_int, P(c_void_p), c_void_p, RES, c_char_p,
                                    c_char_p, ERR)
tfjob_transport_patch = _fn("tfjob_transport_patch", c_int, P(c_void_p), c_void_p, RES, c_char_p, c_char_p, c_char_p,
                            c_char_p, ERR)
tfjob_transport_delete = _fn("tfjob_transport_delete", c_int, P(c_void_p), c_void_p, RES, c_char_p, c_char_p,
                             P(DeleteOptions), ERR)
tfjob_transport_create_event = _fn("tfjob_transport_create_event", c_int, P(c_void_p), c_void_p, c_char_p, c_char_p,
                                   c_char_p, c_char_p, c_char_p, c_char_p, ERR)
tfjob_transport_watch = _fn("tfjob_transport_watch", c_int, P(c_void_p), c_void_p, RES, c_char_p, P(WatchOptions),
                            ERR)
tfjob_watch_stop = _fn("tfjob_watch_stop", None, c_void_p)
tfjob_watch_wait = _fn("tfjob_watch_wait", c_int, c_void_p, c_int64)
tfjob_watch_free = _fn("tfjob_watch_free", None, c_void_p)
tfjob_transport_free = _fn("tfjob_transport_free", None, c_void_p)


# ---- memory.h ----
tfjob_memory_options_init = _fn("tfjob_memory_options_init", c_int, P(MemoryOptions), c_uint)
tfjob_memory_transport_new = _fn("tfjob_memory_transport_new", c_int, P(c_void_p), P(MemoryOptions), ERR)
tfjob_memory_transport_is = _fn("tfjob_memory_transport_is", c_int, c_void_p)
tfjob_memory_resource_version = _fn("tfjob_memory_resource_version", c_uint64, c_void_p)
tfjob_memory_bookmark = _fn("tfjob_memory_bookmark", c_int, c_void_p)
tfjob_memory_compact = _fn("tfjob_memory_compact", c_int, c_void_p)


# ---- kube.h ----
tfjob_kube_options_init = _fn("tfjob_kube_options_init", c_int, P(KubeOptions), c_uint)
tfjob_kube_transport_new = _fn("tfjob_kube_transport_new", c_int, P(c_void_p), P(KubeOptions), ERR)
tfjob_kube_transport_is = _fn("tfjob_kube_transport_is", c_int, c_void_p)
tfjob_kube_transport_server = _fn("tfjob_kube_transport_server", c_char_p, c_void_p)


# ---- controller.h ----
tfjob_controller_hooks_init = _fn("tfjob_controller_hooks_init", c_int, P(ControllerHooks), c_uint)
tfjob_controller_options_init = _fn("tfjob_controller_options_init", c_int, P(ControllerOptions), c_uint)
tfjob_controller_new = _fn("tfjob_controller_new", c_int, P(c_void_p), c_void_p, P(ControllerOptions), ERR)
tfjob_controller_start = _fn("tfjob_controller_start", c_int, c_void_p, ERR)
tfjob_controller_stop = _fn("tfjob_controller_stop", None, c_void_p)
tfjob_controller_free = _fn("tfjob_controller_free", None, c_void_p)
tfjob_controller_wait_idle = _fn("tfjob_controller_wait_idle", c_int, c_void_p, c_int64)
tfjob_controller_wait_stopped = _fn("tfjob_controller_wait_stopped", c_int, c_void_p, c_int64)
tfjob_controller_enqueue = _fn("tfjob_controller_enqueue", c_int, c_void_p, c_char_p, c_char_p)
tfjob_controller_is_leader = _fn("tfjob_controller_is_leader", c_int, c_void_p)
tfjob_controller_is_ready = _fn("tfjob_controller_is_ready", c_int, c_void_p)
tfjob_api_verb_name = _fn("tfjob_api_verb_name", c_char_p, c_int)
tfjob_controller_latency_bucket_bound = _fn("tfjob_controller_latency_bucket_bound", c_double, c_size_t)
tfjob_controller_metrics_get = _fn("tfjob_controller_metrics_get", c_int, P(ControllerMetrics), c_void_p)
tfjob_controller_metrics_text = _fn("tfjob_controller_metrics_text", c_int, P(c_void_p), c_void_p, ERR)


# ---- local.h ----
tfjob_local_options_init = _fn("tfjob_local_options_init", c_int, P(LocalOptions), c_uint)
tfjob_local_new = _fn("tfjob_local_new", c_int, P(c_void_p), P(LocalOptions), ERR)
tfjob_local_free = _fn("tfjob_local_free", None, c_void_p)
tfjob_local_transport_new = _fn("tfjob_local_transport_new", c_int, P(c_void_p), c_void_p, ERR)
tfjob_local_address = _fn("tfjob_local_address", c_int, c_char_p, c_size_t, c_char_p, c_int64, ctypes.c_int32,
                          c_void_p)
tfjob_local_poll = _fn("tfjob_local_poll", c_int, c_void_p, c_int64, ERR)
tfjob_local_interrupt = _fn("tfjob_local_interrupt", None, c_void_p)
tfjob_local_interrupted = _fn("tfjob_local_interrupted", c_int, c_void_p)
tfjob_local_shutdown = _fn("tfjob_local_shutdown", c_int, c_void_p, ERR)
tfjob_local_running_count = _fn("tfjob_local_running_count", c_size_t, c_void_p)
tfjob_local_outcome_name = _fn("tfjob_local_outcome_name", c_char_p, c_int)
tfjob_local_run_options_init = _fn("tfjob_local_run_options_init", c_int, P(LocalRunOptions), c_uint)
tfjob_local_check = _fn("tfjob_local_check", c_int, c_void_p, ERR)
tfjob_local_run = _fn("tfjob_local_run", c_int, P(c_int), c_void_p, c_void_p, P(LocalRunOptions), ERR)
tfjob_local_run_dir = _fn("tfjob_local_run_dir", c_int, P(c_void_p), c_char_p, c_char_p, ERR)
tfjob_local_report = _fn("tfjob_local_report", c_int, P(c_void_p), c_char_p, c_int64, ERR)
