"""Loading libtfjob and declaring the C prototypes (ctypes).

The library is found, in order, through the TFJOB_LIBRARY environment variable (a path to
libtfjob.so), pkg-config's libdir for ``tfjob``, and the system's library search path.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import shutil
import subprocess
from typing import Optional

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
    if shutil.which("pkg-config"):
        try:
            libdir = subprocess.run(["pkg-config", "--variable=libdir", "tfjob"], capture_output=True,
                                    text=True, check=True).stdout.strip()
            if libdir:
                paths.append(os.path.join(libdir, SONAME))
        except (OSError, subprocess.CalledProcessError):
            pass
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


class ParseOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("format", c_int), ("filename", c_char_p), ("max_input_bytes", c_size_t),
                ("max_depth", c_uint), ("max_aliases", c_uint), ("max_nodes", c_uint), ("max_documents", c_uint)]


class DefaultOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("compat", c_int)]


class ValidateOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("compat", c_int), ("old", c_void_p)]


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
        return ctypes.cast(ptr, c_char_p).value.decode("utf-8")
    finally:
        tfjob_free(ptr)


def decode(value: Optional[bytes]) -> Optional[str]:
    return None if value is None else value.decode("utf-8")


# ---- cluster.h ----
ADDRESS_CB = ctypes.CFUNCTYPE(c_int, ctypes.c_void_p, c_size_t, c_char_p, c_int64, ctypes.c_int32, c_void_p)


class RenderOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("compat", c_int), ("cluster_domain", c_char_p),
                ("default_namespace", c_char_p), ("exclude_evaluator", c_int), ("address_cb", ADDRESS_CB),
                ("address_payload", c_void_p), ("gang_scheduler", c_int), ("scheduler_name", c_char_p),
                ("priority_cb", c_void_p), ("priority_payload", c_void_p)]


tfjob_render_options_init = _fn("tfjob_render_options_init", c_int, P(RenderOptions), c_uint)
tfjob_tf_config = _fn("tfjob_tf_config", c_int, P(c_void_p), c_void_p, c_char_p, c_int64, P(RenderOptions), ERR)
tfjob_render_all = _fn("tfjob_render_all", c_int, P(c_void_p), c_void_p, P(RenderOptions), c_uint, ERR)
tfjob_render_pod_group = _fn("tfjob_render_pod_group", c_int, P(c_void_p), c_void_p, P(RenderOptions), c_uint, ERR)


# ---- plan.h ----
class PlanOptions(ctypes.Structure):
    _fields_ = [("version", c_uint), ("compat", c_int), ("now", c_int64), ("requeues", c_int64),
                ("render", P(RenderOptions))]


tfjob_plan_options_init = _fn("tfjob_plan_options_init", c_int, P(PlanOptions), c_uint)
tfjob_plan_new = _fn("tfjob_plan_new", c_int, P(c_void_p), c_void_p, c_char_p, c_char_p, P(PlanOptions), ERR)
tfjob_plan_free = _fn("tfjob_plan_free", None, c_void_p)
tfjob_plan_to_json = _fn("tfjob_plan_to_json", c_int, P(c_void_p), c_void_p, c_uint, ERR)
tfjob_time_parse = _fn("tfjob_time_parse", c_int, P(c_int64), c_char_p)
