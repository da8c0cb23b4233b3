"""The exception hierarchy: every failure of the library is a tfjob.Error."""
from __future__ import annotations

import ctypes
import json
from typing import Any, Callable, Dict, List, Optional

from . import _lib

# Codes of include/tfjob/error.h (never renumbered).
ENOMEM, EINVAL, EVERSION, EPARSE, ELIMIT, ESCHEMA, EINVALID = -2, -3, -4, -5, -6, -7, -8
ENOTFOUND, EEXISTS, ECONFLICT, EGONE, EUNAUTHORIZED, EFORBIDDEN = -9, -10, -11, -12, -13, -14
ETOOMANYREQUESTS, ETIMEOUT, ESERVER, ENETWORK, EIO, ESTATE = -15, -16, -17, -18, -19, -20


class Error(Exception):
    """A libtfjob error: ``code`` (negative TFJOB_E* value), ``message``, and ``field`` when known."""

    def __init__(self, message: str, code: int = -1, field: Optional[str] = None):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field


class ParseError(Error):
    """Syntax error or input limit: ``file``, ``line`` and ``column`` (1-based, 0 when unknown)."""

    def __init__(self, message: str, code: int, field: Optional[str] = None, file: Optional[str] = None,
                 line: int = 0, column: int = 0):
        super().__init__(message, code, field)
        self.file = file
        self.line = line
        self.column = column


class SchemaError(Error):
    """Well-formed input of the wrong shape: not a TFJob, or a field of the wrong JSON type."""


class ValidationError(Error):
    """The object failed validation; ``errors`` lists the field errors."""

    def __init__(self, message: str, errors: list):
        super().__init__(message, EINVALID)
        self.errors = errors


class TransportError(Error):
    """A failure talking to an API server (or to the memory/local backends, which answer the same way).

    ``http_status`` is the HTTP status (0 for network failures), ``message`` the API server's own
    Status.message, ``reason`` its Status.reason ("NotFound", "AlreadyExists", "Conflict", ...; as the
    server sent it, else derived from the code and status as client-go's ``ReasonForError`` falls
    back to), ``details`` the
    Status.details as a dict (or None) and ``causes`` its causes (the field errors of a 422)."""

    def __init__(self, message: str, code: int, http_status: int = 0, reason: str = "",
                 details: Optional[Dict[str, Any]] = None):
        super().__init__(message, code)
        self.http_status = http_status
        self.reason = reason or _reason(code, http_status)
        self.details = details
        self.causes: List[Dict[str, Any]] = list((details or {}).get("causes") or [])

    def __str__(self) -> str:
        if self.http_status:
            return f"{self.message} ({self.reason}, HTTP {self.http_status})"
        return self.message


class NotFoundError(TransportError):
    """404 NotFound."""


class ConflictError(TransportError):
    """409 Conflict: a stale resourceVersion or a failed precondition (AlreadyExistsError is one too)."""


class AlreadyExistsError(ConflictError):
    """409 AlreadyExists: the name is taken."""


class GoneError(TransportError):
    """410 Gone/Expired: the resourceVersion is too old; list again."""


class UnauthorizedError(TransportError):
    """401 Unauthorized."""


class ForbiddenError(TransportError):
    """403 Forbidden."""


class TooManyRequestsError(TransportError):
    """429 TooManyRequests."""


class ServerTimeoutError(TransportError):
    """408/504 or a client-side timeout."""


class ServerError(TransportError):
    """Other 5xx."""


class NetworkError(TransportError):
    """Connection, DNS or TLS failure (no HTTP status)."""


class InvalidError(TransportError):
    """422 Invalid: ``causes`` lists the field errors the API server reported."""


class BadRequestError(TransportError):
    """400 BadRequest."""


_TRANSPORT = {ENOTFOUND: NotFoundError, EEXISTS: AlreadyExistsError, ECONFLICT: ConflictError, EGONE: GoneError,
              EUNAUTHORIZED: UnauthorizedError, EFORBIDDEN: ForbiddenError, ETOOMANYREQUESTS: TooManyRequestsError,
              ETIMEOUT: ServerTimeoutError, ESERVER: ServerError, ENETWORK: NetworkError}
_HTTP = {EINVALID: InvalidError, EINVAL: BadRequestError}
_REASONS = {ENOTFOUND: "NotFound", EEXISTS: "AlreadyExists", ECONFLICT: "Conflict", EGONE: "Expired",
            EUNAUTHORIZED: "Unauthorized", EFORBIDDEN: "Forbidden", ETOOMANYREQUESTS: "TooManyRequests",
            EINVALID: "Invalid", EINVAL: "BadRequest"}
_STATUS_REASONS = {408: "Timeout", 500: "InternalError", 503: "ServiceUnavailable", 504: "Timeout"}


def _reason(code: int, http_status: int) -> str:
    """Kubernetes' StatusReason for an error code and HTTP status ("" when there is none)."""
    if code == ETIMEOUT and http_status == 0:
        return "Timeout"
    if http_status in _STATUS_REASONS:
        return _STATUS_REASONS[http_status]
    if code == ESERVER:
        return "InternalError"
    if http_status == 0 and code not in _TRANSPORT:
        return ""
    return _REASONS.get(code, "")


def from_handle(code: int, err: Optional[ctypes.c_void_p]) -> Error:
    """Build the exception for a failed call and free the C error object."""
    if not err:
        return Error(_lib.decode(_lib.tfjob_strerror(code)) or "error", code)
    try:
        message = _lib.decode(_lib.tfjob_error_message(err)) or ""
        field = _lib.decode(_lib.tfjob_error_field(err))
        if code in (EPARSE, ELIMIT):
            return ParseError(message, code, field, _lib.decode(_lib.tfjob_error_file(err)),
                              _lib.tfjob_error_line(err), _lib.tfjob_error_column(err))
        if code == ESCHEMA:
            return SchemaError(message, code, field)
        status = _lib.tfjob_error_http_status(err)
        if code in _TRANSPORT or (status and code in _HTTP) or status:
            cls = _TRANSPORT.get(code) or _HTTP.get(code) or TransportError
            details_text = _lib.decode(_lib.tfjob_error_details_json(err))
            details = json.loads(details_text) if details_text else None
            reason = _lib.decode(_lib.tfjob_error_reason(err)) or ""
            return cls(message, code, status, reason=reason, details=details)
        if code == EINVALID:
            exc = ValidationError(message, [])
            exc.field = field
            return exc
        return Error(message, code, field)
    finally:
        _lib.tfjob_error_free(err)


def check(code: int, err: Optional[ctypes.c_void_p]) -> None:
    if code != 0:
        raise from_handle(code, err)


def call_out(fn: Callable[..., int], *args: Any) -> ctypes.c_void_p:
    """fn(&out, *args, &err) for a C call that makes something (a handle, a string): out, or
    the call's error raised."""
    out, err = ctypes.c_void_p(), ctypes.c_void_p()
    check(fn(ctypes.byref(out), *args, ctypes.byref(err)), err)
    return out
