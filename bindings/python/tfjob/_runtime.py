"""Process-wide state of the binding: the library's global init, the callback guard, and the
objects to close before the interpreter exits (C threads must not call into a dying interpreter)."""
from __future__ import annotations

import atexit
import ctypes
import threading
import weakref
from typing import Any, Callable, Optional

from . import _lib

_init_lock = threading.Lock()
_initialised = False
_tls = threading.local()
_open: "weakref.WeakSet[Any]" = weakref.WeakSet()
_libc = ctypes.CDLL(None)
_libc.malloc.restype = ctypes.c_void_p
_libc.malloc.argtypes = [ctypes.c_size_t]


def global_init() -> None:
    """tfjob_global_init() once per process (the transport needs it); never undone before exit."""
    global _initialised
    with _init_lock:
        if not _initialised:
            rc = _lib.tfjob_global_init()
            if rc != 0:
                from .errors import Error
                raise Error("tfjob_global_init failed", rc)
            _initialised = True


def in_callback() -> bool:
    """True while this thread runs one of our callbacks (called from C)."""
    return getattr(_tls, "depth", 0) > 0


class callback_scope:
    """Marks the current thread as running a callback from C for the duration of a with block."""

    __slots__ = ()

    def __enter__(self) -> None:
        _tls.depth = getattr(_tls, "depth", 0) + 1

    def __exit__(self, *exc: object) -> None:
        _tls.depth -= 1


def malloc_string(text: bytes) -> int:
    """A copy of text in memory from the C allocator (for callbacks whose result the library frees)."""
    p = _libc.malloc(len(text) + 1)
    if not p:
        raise MemoryError()
    ctypes.memmove(p, text + b"\0", len(text) + 1)
    return p


def register(obj: Any) -> None:
    """Close obj (its ``close()``) at interpreter exit if it is still open then."""
    _open.add(obj)


def unregister(obj: Any) -> None:
    _open.discard(obj)


def run_elsewhere(fn: Callable[[], Any]) -> threading.Thread:
    """Run fn on a new thread: used when a release would otherwise wait for the current thread
    (a handle collected on its own callback thread). The caller keeps the thread to join it
    before releasing what the handle borrows (the backend joins its dependents' releases)."""
    t = threading.Thread(target=fn, name="tfjob-release", daemon=True)
    t.start()
    return t


def ms(seconds: Optional[float], default: int = 0) -> int:
    """Seconds (None = default) as integer milliseconds."""
    return default if seconds is None else int(round(seconds * 1000))


@atexit.register
def _close_all() -> None:
    # Controllers first (they own watches of their own), then watches, engines, backends.
    objs = sorted(list(_open), key=lambda o: getattr(o, "_close_order", 9))
    for obj in objs:
        try:
            obj.close()
        except BaseException:  # noqa: BLE001 - best effort at exit
            pass
