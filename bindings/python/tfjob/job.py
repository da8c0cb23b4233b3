"""The TFJob object: loading, defaults, validation, serialisation."""
from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Union

from . import _lib
from .errors import Error, check

COMPAT_DOCUMENTED = "documented"
COMPAT_TRAINING_OPERATOR_1_9 = "training-operator-1.9"

_FORMATS: Dict[Union[int, str, None], int] = {None: 0, 0: 0, 1: 1, 2: 2, "auto": 0, "yaml": 1, "json": 2}
_LIMITS = {"max_input_bytes": 2**63, "max_depth": 2**32, "max_aliases": 2**32, "max_nodes": 2**32,
           "max_documents": 2**32}


def compat_value(compat: Optional[str]) -> int:
    """The C enum value of a compat name (None = documented)."""
    out = ctypes.c_int(0)
    if compat is not None and _lib.tfjob_compat_from_string(ctypes.byref(out), compat.encode()) != 0:
        raise ValueError(f"unknown compat {compat!r} (expected 'documented' or 'training-operator-1.9')")
    return out.value


@dataclass(frozen=True)
class FieldError:
    """A Kubernetes field error: path, type (e.g. 'FieldValueRequired') and detail."""

    field: str
    type: str
    detail: str
    message: str = ""

    def __str__(self) -> str:
        return self.message or f"{self.field}: {self.type}: {self.detail}"


@dataclass(frozen=True)
class JobWarning:
    """What the TFJob docs advise against in a valid job: reason ('RestartPolicyNever',
    'TemplateRestartPolicyIgnored', 'MultipleChiefReplicas', 'IstioSidecar', 'GPUWithoutRequests'),
    field path and message ('FIELD: text')."""

    reason: str
    field: str
    message: str

    def __str__(self) -> str:
        return self.message


class Job:
    """A kubeflow.org/v1 TFJob. Release deterministically with ``close()`` or ``with``;
    the garbage collector releases it otherwise."""

    __slots__ = ("_handle", "__weakref__")

    def __init__(self, handle: ctypes.c_void_p):
        self._handle: Optional[ctypes.c_void_p] = handle

    # ---- construction ----
    @staticmethod
    def _parse_options(filename: Optional[str], format: Union[int, str, None], limits: Dict[str, int]) -> Any:
        """tfjob_parse_options: format ("auto", "yaml", "json" or 0/1/2), filename and the input
        limits max_input_bytes, max_depth, max_aliases, max_nodes, max_documents (0 = default)."""
        if filename is not None and (not isinstance(filename, str) or "\0" in filename):
            raise TypeError("filename must be a str without NUL characters")
        fmt = _FORMATS.get(format) if isinstance(format, (str, int, type(None))) else None
        if fmt is None or isinstance(format, bool):
            raise ValueError(f"unknown format {format!r} (auto, yaml or json)")
        opts = _lib.ParseOptions()
        _lib.tfjob_parse_options_init(ctypes.byref(opts), 1)
        opts.format = fmt
        for key, value in limits.items():
            if key not in _LIMITS:
                raise TypeError(f"unexpected keyword argument {key!r}")
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < _LIMITS[key]:
                raise ValueError(f"{key} must be an int in [0, {_LIMITS[key]}), not {value!r}")
            setattr(opts, key, value)
        return opts

    @staticmethod
    def _data(text: Union[str, bytes]) -> bytes:
        if isinstance(text, str):
            return text.encode("utf-8")  # UnicodeEncodeError (a ValueError) for lone surrogates
        if isinstance(text, (bytes, bytearray, memoryview)):
            return bytes(text)
        raise TypeError(f"text must be str or bytes, not {type(text).__name__}")

    @classmethod
    def from_text(cls, text: Union[str, bytes], filename: Optional[str] = None, format: Union[int, str, None] = 0,
                  **limits: int) -> "Job":
        """One TFJob from YAML or JSON text. format: "auto" (default), "yaml" or "json";
        limits: max_input_bytes, max_depth, max_aliases, max_nodes, max_documents (docs/limits.md)."""
        data = cls._data(text)
        opts = cls._parse_options(filename, format, limits)
        name = filename.encode() if filename else None
        opts.filename = name
        handle, err = ctypes.c_void_p(), ctypes.c_void_p()
        rc = _lib.tfjob_job_parse(ctypes.byref(handle), data, len(data), ctypes.byref(opts), ctypes.byref(err))
        check(rc, err)
        return cls(handle)

    @classmethod
    def parse_all(cls, text: Union[str, bytes], filename: Optional[str] = None, format: Union[int, str, None] = 0,
                  **limits: int) -> List["Job"]:
        """Every TFJob of a multi-document YAML stream, a JSON array or a Kubernetes List (empty
        documents skipped). Arguments as ``from_text``."""
        data = cls._data(text)
        opts = cls._parse_options(filename, format, limits)
        name = filename.encode() if filename else None
        opts.filename = name
        arr, count, err = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t(), ctypes.c_void_p()
        rc = _lib.tfjob_job_parse_all(ctypes.byref(arr), ctypes.byref(count), data, len(data), ctypes.byref(opts),
                                      ctypes.byref(err))
        check(rc, err)
        jobs = [cls(ctypes.c_void_p(arr[i])) for i in range(count.value)]
        _lib.tfjob_job_array_free(arr, 0)  # the array only: the jobs now belong to the Job objects
        return jobs

    @classmethod
    def load_all(cls, path: Union[str, "os.PathLike[str]"], **limits: int) -> List["Job"]:
        with open(path, "rb") as f:
            return cls.parse_all(f.read(), filename=os.fspath(path), **limits)

    @classmethod
    def from_yaml(cls, text: Union[str, bytes], filename: Optional[str] = None) -> "Job":
        return cls.from_text(text, filename, format=1)

    @classmethod
    def from_json(cls, text: Union[str, bytes], filename: Optional[str] = None) -> "Job":
        return cls.from_text(text, filename, format=2)

    @classmethod
    def from_dict(cls, obj: Dict[str, Any]) -> "Job":
        return cls.from_json(json.dumps(obj))

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], **limits: int) -> "Job":
        with open(path, "rb") as f:
            return cls.from_text(f.read(), filename=os.fspath(path), **limits)

    # ---- lifetime ----
    def close(self) -> None:
        if self._handle:
            _lib.tfjob_job_free(self._handle)
            self._handle = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Job":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def handle(self) -> ctypes.c_void_p:
        if not self._handle:
            raise Error("the job is closed", -3)
        return self._handle

    # ---- operations ----
    def copy(self) -> "Job":
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        check(_lib.tfjob_job_clone(ctypes.byref(out), self.handle, ctypes.byref(err)), err)
        return Job(out)

    def with_defaults(self, compat: Optional[str] = None) -> "Job":
        """A new Job with the TFJob defaults applied; this one is unchanged."""
        job = self.copy()
        opts = _lib.DefaultOptions()
        _lib.tfjob_default_options_init(ctypes.byref(opts), 1)
        opts.compat = compat_value(compat)
        err = ctypes.c_void_p()
        try:
            check(_lib.tfjob_job_apply_defaults(job.handle, ctypes.byref(opts), ctypes.byref(err)), err)
        except Exception:
            job.close()
            raise
        return job

    def validate(self, old: Optional["Job"] = None, compat: Optional[str] = None,
                 strict: bool = True) -> List[FieldError]:
        """Every field error, as the API server and the webhook would report them ([] = valid).

        strict (the default): a field the CRD schema does not declare is a FieldValueNotSupported
        error (`unknown field "spec.x"`, with a "did you mean"), as the API server refuses it
        under kubectl's fieldValidation=Strict; strict=False lets such fields pass."""
        opts = _lib.ValidateOptions()
        _lib.tfjob_validate_options_init(ctypes.byref(opts), 2)
        opts.compat = compat_value(compat)
        opts.strict = 1 if strict else 0
        opts.old = old.handle if old is not None else None
        errs, err = ctypes.c_void_p(), ctypes.c_void_p()
        check(_lib.tfjob_job_validate(ctypes.byref(errs), self.handle, ctypes.byref(opts), ctypes.byref(err)), err)
        try:
            result = []
            for i in range(_lib.tfjob_field_errors_count(errs)):
                result.append(FieldError(
                    field=_lib.decode(_lib.tfjob_field_errors_field(errs, i)) or "",
                    type=_lib.decode(_lib.tfjob_field_error_type_name(_lib.tfjob_field_errors_type(errs, i))) or "",
                    detail=_lib.decode(_lib.tfjob_field_errors_detail(errs, i)) or "",
                    message=_lib.decode(_lib.tfjob_field_errors_message(errs, i)) or ""))
            return result
        finally:
            _lib.tfjob_field_errors_free(errs)

    def warnings(self, istio_injection: bool = False) -> List[JobWarning]:
        """What the Kubeflow TFJob docs advise against (tfjob_job_warnings): restartPolicy Never,
        GPU limits without cpu/memory requests, and with istio_injection (the target namespace is
        labelled istio-injection=enabled) pod templates that keep the Istio sidecar."""
        opts = _lib.WarningOptions()
        _lib.tfjob_warning_options_init(ctypes.byref(opts), 1)
        opts.istio_injection = 1 if istio_injection else 0
        ws, err = ctypes.c_void_p(), ctypes.c_void_p()
        check(_lib.tfjob_job_warnings(ctypes.byref(ws), self.handle, ctypes.byref(opts), ctypes.byref(err)), err)
        try:
            return [JobWarning(reason=_lib.decode(_lib.tfjob_warnings_reason(ws, i)) or "",
                             field=_lib.decode(_lib.tfjob_warnings_field(ws, i)) or "",
                             message=_lib.decode(_lib.tfjob_warnings_message(ws, i)) or "")
                    for i in range(_lib.tfjob_warnings_count(ws))]
        finally:
            _lib.tfjob_warnings_free(ws)

    def to_json(self, pretty: bool = False) -> str:
        out, err = ctypes.c_void_p(), ctypes.c_void_p()
        check(_lib.tfjob_job_to_json(ctypes.byref(out), self.handle, 1 if pretty else 0, ctypes.byref(err)), err)
        return _lib.owned_string(out)

    def to_dict(self) -> Dict[str, Any]:
        return json.loads(self.to_json())

    # ---- accessors ----
    @property
    def name(self) -> Optional[str]:
        return _lib.decode(_lib.lib.tfjob_job_name(self.handle))

    @property
    def namespace(self) -> Optional[str]:
        return _lib.decode(_lib.lib.tfjob_job_namespace(self.handle))

    @property
    def uid(self) -> Optional[str]:
        return _lib.decode(_lib.lib.tfjob_job_uid(self.handle))

    def tf_config(self, replica_type: str, index: int, **kw: Any) -> Optional[Dict[str, Any]]:
        """TF_CONFIG of a replica as a dict (None when not distributed); see tfjob.tf_config."""
        from .cluster import tf_config
        return tf_config(self, replica_type, index, **kw)

    def render(self, **kw: Any) -> Dict[str, List[Dict[str, Any]]]:
        """Every Pod and Service of the job as dicts; see tfjob.render."""
        from .cluster import render
        return render(self, **kw)

    def render_pod(self, replica_type: str, index: int, **kw: Any) -> Dict[str, Any]:
        """The Pod of replica (type, index); see tfjob.render_pod."""
        from .cluster import render_pod
        return render_pod(self, replica_type, index, **kw)

    def render_service(self, replica_type: str, index: int, **kw: Any) -> Dict[str, Any]:
        """The headless Service of replica (type, index); see tfjob.render_service."""
        from .cluster import render_service
        return render_service(self, replica_type, index, **kw)

    def pod_group(self, gang_scheduler: str = "volcano", **kw: Any) -> Dict[str, Any]:
        """The gang-scheduling PodGroup of the job; see tfjob.pod_group."""
        from .cluster import pod_group
        return pod_group(self, gang_scheduler, **kw)

    def __repr__(self) -> str:
        return f"<tfjob.Job {self.namespace or 'default'}/{self.name}>" if self._handle else "<tfjob.Job closed>"


def exit_code_retryable(code: int, compat: Optional[str] = None) -> bool:
    """Whether restartPolicy ExitCode restarts a replica that exited with ``code``."""
    return _lib.tfjob_exit_code_classify(int(code), compat_value(compat)) == 1
