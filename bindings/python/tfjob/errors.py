"""The exception hierarchy: every failure of the library is a tfjob.Error."""
from __future__ import annotations

import ctypes
from typing import Optional

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
    """A failure talking to an API server: ``http_status`` and the server's message."""

    def __init__(self, message: str, code: int, http_status: int = 0):
        super().__init__(message, code)
        self.http_status = http_status


class NotFoundError(TransportError):
    pass


class ConflictError(TransportError):
    pass


_TRANSPORT = {ENOTFOUND: NotFoundError, EEXISTS: ConflictError, ECONFLICT: ConflictError}


def from_handle(code: int, err: ctypes.c_void_p) -> Error:
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
        if ENOTFOUND >= code >= ENETWORK:
            cls = _TRANSPORT.get(code, TransportError)
            return cls(message, code, _lib.tfjob_error_http_status(err))
        return Error(message, code, field)
    finally:
        _lib.tfjob_error_free(err)


def check(code: int, err: ctypes.c_void_p) -> None:
    if code != 0:
        raise from_handle(code, err)
