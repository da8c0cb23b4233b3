"""Process-wide state of the binding: the library's global init, the callback guard, and the
objects to close before the interpreter exits (C threads must not call into a dying interpreter)."""
from __future__ import annotations

import atexit
import ctypes
import threading
import weakref
from typing import Any, Callable, Optional, TypeVar

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


_C = TypeVar("_C", bound="Closing")


class Closing:
    """What the binding's objects with a close() share: ``with`` closes them at the end, and the
    garbage collector runs ``_collect()`` (close() unless a class says otherwise), never
    raising."""

    __slots__ = ()

    def close(self) -> None:
        raise NotImplementedError

    def _collect(self) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self._collect()
        except Exception:
            pass

    def __enter__(self: _C) -> _C:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


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


class Guard:
    """A C handle shared by threads: calls hold it (``with guard.use() as h``) and ``retire()``
    takes it away, then waits for the calls in flight, so that a handle is never freed under a
    call running on another thread (ctypes releases the GIL during every C call)."""

    __slots__ = ("_h", "_what", "_cv", "_users")

    def __init__(self, handle: Any, what: str):
        self._h = handle
        self._what = what
        self._cv = threading.Condition(threading.RLock())  # re-entrant: signal handlers
        self._users: dict = {}  # thread ident -> calls in flight on that thread

    @property
    def open(self) -> bool:
        return bool(self._h)

    def use(self) -> "_Use":
        return _Use(self)

    def retire(self, before_wait: Optional[Callable[[Any], None]] = None) -> Any:
        """Take the handle away (None when already taken), run before_wait(handle) (to stop
        what the calls in flight wait for), wait until no call uses it, and return it."""
        with self._cv:
            h, self._h = self._h, None
            if not h:
                return None
            if self._users.get(threading.get_ident()):
                self._h = h
                from .errors import ESTATE, Error
                raise Error(f"the {self._what} cannot be closed from inside one of its own calls", ESTATE)
        if before_wait is not None:
            before_wait(h)
        with self._cv:
            while self._users:
                self._cv.wait()
        return h


class _Use:
    __slots__ = ("_g", "_me")

    def __init__(self, guard: Guard):
        self._g = guard

    def __enter__(self) -> Any:
        g = self._g
        with g._cv:
            if not g._h:
                from .errors import EINVAL, Error
                raise Error(f"the {g._what} is closed", EINVAL)
            self._me = threading.get_ident()
            g._users[self._me] = g._users.get(self._me, 0) + 1
            return g._h

    def __exit__(self, *exc: object) -> None:
        g = self._g
        with g._cv:
            n = g._users[self._me] - 1
            if n:
                g._users[self._me] = n
            else:
                del g._users[self._me]
                if not g._users:
                    g._cv.notify_all()
