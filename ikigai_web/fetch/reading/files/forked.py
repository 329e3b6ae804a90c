"""A document's reader run in a forked process of its own, so that whatever a file makes its
libraries do ends inside the call, and ends as an answer.

The libraries that read documents cannot be stopped from Python while they work: PDFium
inflates a content stream or a font whole, mammoth and python-pptx parse a part whole, and
when an allocation fails PDFium aborts and Rust (html-to-markdown) aborts, taking the process
with them. So the reader runs in a child forked for the call, capped in memory (the call's
IKIGAI_WEB_MAX_MEMORY_MB, as RLIMIT_DATA) and killed KILL_RESERVE seconds before the call's
deadline. It sends what it reads as it goes, one unit at a time (a page, a slide, a sheet, a
chapter), each after the name of the unit it starts, so when it is stopped (out of time, out
of memory, crashed) the call still knows what was read and where it stopped, and answers
with that: never a signal's name, an allocator's message or a traceback.

The child dies with its parent (Linux's parent-death signal) and is always reaped. The parent
must not be importing on another thread when it forks (see pipeline.prepare): a child that
needed a module another thread was importing would wait for it forever.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ikigai_web.net.http import Deadline

# The child is killed this long before the call's deadline: the call still has to make the
# answer from what was read, and write it.
KILL_RESERVE = 1.5
# What the child may send in all (the readers cut their text far below this; JSON escapes).
MAX_RECEIVED = 64 << 20
_HEADER = 4
_CHUNK = 1 << 16
_REAP_WAIT = 2.0
# What a child killed by these signals ran out of: PDFium and Rust abort when an allocation
# fails (as Python does on a fatal error), and the kernel's OOM killer sends SIGKILL.
_OUT_OF_MEMORY = frozenset({signal.SIGABRT, signal.SIGKILL})

# What a reader yields: ("meta", {...}) for what the document says of itself, ("at", 4) before
# it starts a unit (page 4), ("part", ...) each unit read, ("warning", {code, message}); every
# value JSON.
Event = tuple[str, Any]


class Stop(NamedTuple):
    """Why the reader stopped before the end: `why` is "time", "memory" or "failed"; `at`
    the unit it was reading, as its reader named it (a page's number, a sheet's name; None
    before the first), `detail` what failed."""

    why: str
    at: Any = None
    detail: str = ""

    def explained(self, unit: str, memory: int) -> tuple[ErrorCode, str]:
        """The error code and the words for a reader that stopped on `unit` ("page 4")."""
        if self.why == "time":
            return ErrorCode.TOO_LARGE, f"the call's time ran out while reading {unit}"
        if self.why == "memory":
            cap = f"{memory >> 20:,} MiB, IKIGAI_WEB_MAX_MEMORY_MB"
            why = f"{unit} needs more memory than one call may take ({cap})"
            return ErrorCode.TOO_LARGE, f"{why}, or {self.detail}" if self.detail else why
        return ErrorCode.PARSE_ERROR, f"{unit} could not be read ({self.detail})"


class Read(NamedTuple):
    """What the reader sent: the document's own data, its units, its warnings, and how it
    stopped when it did not reach the end."""

    meta: dict[str, Any]
    parts: list[Any]
    warnings: list[dict[str, str]]
    stop: Stop | None = None


def read_apart(
    reader: Callable[[], Iterator[Event]], deadline: Deadline | None, memory: int
) -> Read:
    """Run `reader` in a forked child capped at `memory` bytes beyond what it starts with,
    until it ends or the deadline comes near. A ToolError it raises is raised here."""
    import orjson  # noqa: F401 - loaded before the fork: the child sends with it

    parent = os.getpid()
    receiving, sending = os.pipe()
    try:
        pid = os.fork()
    except OSError as exc:
        os.close(receiving)
        os.close(sending)
        raise ToolError(
            ErrorCode.PARSE_ERROR,
            f"The document could not be read: no process could be started to read it "
            f"({exc.strerror}). Try again later.",
        ) from None
    if pid == 0:  # the child: never returns
        os.close(receiving)
        _child(reader, sending, parent, memory)
    os.close(sending)
    try:
        events, stop = _receive(pid, receiving, deadline)
    finally:
        os.close(receiving)
    return _collected(events, stop)


# ------------------------------------------------------------------ the child


def _child(reader: Callable[[], Iterator[Event]], out: int, parent: int, memory: int) -> None:
    """Read and send, then end without any of the parent's exit handlers or buffers."""
    import faulthandler
    import gc

    from ikigai_web.common.procs import cap_data, die_with_parent

    gc.enable()  # a document's objects may hold cycles (the call's process starts without)

    code = 0
    try:
        if not die_with_parent() or os.getppid() != parent:
            os._exit(1)  # the parent is gone already
        faulthandler.disable()  # a crash is the parent's to tell, not a dump on stderr
        cap_data(memory)
        for event in reader():
            _send(out, event)
        _send(out, ("done", None))
    except ToolError as err:
        _send(out, ("error", [err.code.value, err.message]))
    except MemoryError:
        code = _said(out, b'["memory",null]')  # a message made without memory
    except RecursionError:
        _send(out, ("failed", "it is nested too deeply"))
    except Exception as exc:  # noqa: BLE001 - any library's failure on a hostile file
        _send(out, ("failed", f"{type(exc).__name__}: {exc}"[:500]))
    finally:
        os._exit(code)


def _send(out: int, event: Event) -> None:
    import orjson

    try:
        data = orjson.dumps(event)
    except TypeError:  # a lone surrogate (a PDF's bad ToUnicode map), which JSON cannot carry
        data = orjson.dumps(_valid(event))
    _said(out, data)


def _valid(value: Any) -> Any:
    """`value` with every string valid UTF-8: surrogate pairs joined, lone ones replaced."""
    from ikigai_web.fetch.reading.tidy import valid_text

    if isinstance(value, str):
        return valid_text(value)
    if isinstance(value, list | tuple):
        return [_valid(item) for item in value]
    if isinstance(value, dict):
        return {_valid(key): _valid(item) for key, item in value.items()}
    return value


def _said(out: int, data: bytes) -> int:
    """Write one message: its length, then it. 0, or 1 when the parent stopped reading."""
    message = memoryview(len(data).to_bytes(_HEADER, "big") + data)
    try:
        while message:
            message = message[os.write(out, message) :]
    except OSError:
        return 1
    return 0


# ------------------------------------------------------------------ the parent


def _receive(pid: int, channel: int, deadline: Deadline | None) -> tuple[list[Event], Stop | None]:
    """The child's messages until it ends, or until it is killed: out of time, or sending
    more than MAX_RECEIVED. Its ending's Stop, None when it reached the end."""
    buffer = bytearray()
    events: list[Event] = []
    received = 0
    while True:
        wait = None if deadline is None else deadline.remaining() - KILL_RESERVE
        if wait is not None and wait <= 0:
            _kill(pid)
            return events, Stop("time", _at(events))
        ready, _, _ = select.select([channel], [], [], wait)
        if not ready:
            continue
        chunk = os.read(channel, _CHUNK)
        received += len(chunk)
        if received > MAX_RECEIVED:
            _kill(pid)
            return events, Stop("memory", _at(events))
        if not chunk:
            return events, _ending(events, _reap(pid))
        buffer += chunk
        events += _messages(buffer)


def _messages(buffer: bytearray) -> list[Event]:
    """The whole messages at the start of `buffer`, taken out of it."""
    import orjson

    found: list[Event] = []
    while len(buffer) >= _HEADER:
        size = int.from_bytes(buffer[:_HEADER], "big")
        if len(buffer) < _HEADER + size:
            break
        kind, value = orjson.loads(buffer[_HEADER : _HEADER + size])
        found.append((kind, value))
        del buffer[: _HEADER + size]
    return found


def _at(events: list[Event]) -> Any:
    """The unit the child said it started last, None before any."""
    return next((value for kind, value in reversed(events) if kind == "at"), None)


def _ending(events: list[Event], status: int) -> Stop | None:
    """How the child ended, from its last message or, without one, its exit status."""
    last = events[-1][0] if events else ""
    if last in ("done", "error"):
        return None
    at = _at(events)
    if last == "memory":
        return Stop("memory", at)
    if last == "failed":
        return Stop("failed", at, str(events[-1][1]))
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in _OUT_OF_MEMORY:
        return Stop("memory", at, "it is damaged")  # what else makes a library abort
    return Stop("failed", at, "its reader stopped on it")


def _reap(pid: int) -> int:
    """The exit status of the child, which has closed its end: it is ending, and is killed
    if it is not done within _REAP_WAIT seconds."""
    end = time.monotonic() + _REAP_WAIT
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.01)
    return _kill(pid)


def _kill(pid: int) -> int:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    return os.waitpid(pid, 0)[1]


def _collected(events: list[Event], stop: Stop | None) -> Read:
    meta: dict[str, Any] = {}
    parts: list[Any] = []
    warnings: list[dict[str, str]] = []
    for kind, value in events:
        if kind == "meta":
            meta |= value
        elif kind == "part":
            parts.append(value)
        elif kind == "warning":
            warnings.append(value)
        elif kind == "error":
            raise ToolError(ErrorCode(value[0]), value[1])
    return Read(meta, parts, warnings, stop)
