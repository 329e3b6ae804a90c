"""`python -P -m ikigai_web.host.warm [--server PID] ENTRY...`: the MCP server's warm parent
(PID, the server's, which it ends with), which runs this
installation's own tools without starting a new program for each call.

ikigai_web/host/workers.py starts it with a socket to the server as its stdin. It imports each
ENTRY's module (`ikigai_web.tools.web_fetch:main`) and, later, what a call loaded that it lacks: the
modules a tool imports only when called (lxml, trafilatura ...) and the regular expressions
its libraries compile as they run, learned from the calls themselves and loaded one at a time
between requests. Each call is a child forked from it, which becomes the call as the tool's
console script would run it:

- a session and process group of its own, which the server kills as it kills a program's;
- SIGKILL when this parent dies (it dies with the server, by the same signal, set by setpriv
  and by itself; and the server reaps what is left of them, ikigai_web/host/process.py);
- the stdin, stdout and stderr the server passed over the socket, no other file descriptor;
- the signal handlers a fresh interpreter has, and a cap on its memory (`memory_cap`);
- the entry's function, with the exit status a fresh interpreter would give.

The next call's child is forked ahead (a spare) while no call runs and nothing is left to
learn: it sets itself up and copies the parent's pages it would otherwise copy one by one as
the call writes to them (Python writes to every object it uses), until its request comes. A
request that finds no spare gets a child forked for it. Nothing before the request reads a
tool's settings, credentials or cache: each child reads them at its call, as a fresh process
does.

The parent stays single-threaded, as forking a process with threads can deadlock the child:
should a learned module start a thread, the parent ends (EXIT_THREADED) and the server runs
the tools as programs. A call's report socket carries, to the server: `pid N` from the child
once it has its request, `exit S` from the child as it exits, and `reaped N S` from the parent
once it reaped it (S is the status as `subprocess` gives it, negative for a signal).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import importlib
import json
import os
import re
import select
import selectors
import signal
import socket
import sys
import traceback
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from ikigai_web.common import protocol
from ikigai_web.common.ending import finish
from ikigai_web.common.procs import cap_data, die_with_parent

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

# Bytes of heap and private memory (RLIMIT_DATA) a call may hold beyond what its child has
# from the parent at the fork: a call of web-fetch holds tens of MiB. Not RLIMIT_AS, which
# counts address space that is only reserved (Chromium reserves many GiB of it).
MEMORY_CAP = 1 << 30
EXIT_THREADED = 3
READY = b"ready"
FDS = 4  # stdin, stdout, stderr, the report socket
MESSAGE_MOST = 4096
POPULATE_CHUNK = 1 << 20  # bytes a spare copies between two looks for its request
SPARES_LOST_MOST = 3  # spares that die waiting: then something is wrong, and none is made
_MADV_POPULATE_WRITE = 23  # Linux 5.14
_MAPS_COLUMNS = 6  # address, permissions, offset, device, inode, path (when it has one)
_PATTERN_KEY = 3  # re's cache keys: (type, pattern, flags)

# Each signal's handler, as signal.getsignal gives it.
Handlers = dict[int, Any]


@dataclass(frozen=True)
class Spare:
    """A child forked ahead, waiting for its request on `channel`."""

    pid: int
    channel: socket.socket
    generation: int  # how many lessons the parent had taken when it was forked


@dataclass(frozen=True)
class Birth:
    """What a child has from its parent: where its request comes, where it tells what it
    loaded, who its parent is, the signal handlers to restore, and the memory it may take
    beyond what it has at the fork (`memory_cap`)."""

    channel: socket.socket
    learn: int
    parent: int
    fresh: Handlers
    memory: int


def fresh_handlers() -> Handlers:
    """Every signal's handler as this interpreter set it up: a child's, before its call."""
    handlers: Handlers = {}
    for signum in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):
            handler = signal.getsignal(signum)
            if handler is not None:  # set from C, not by Python: nothing to restore
                handlers[signum] = handler
    return handlers


def memory_cap() -> int:
    """Bytes a call's child may hold beyond what it has from the parent: the server's
    IKIGAI_WEB_MAX_MEMORY_MB, as a standalone tool caps itself (common/runner.py), else
    MEMORY_CAP. A call then caps itself by its own setting, never above this."""
    from ikigai_web.common.errors import ToolError
    from ikigai_web.common.settings import load

    try:
        return load().max_memory_mb << 20
    except ToolError:  # the server's setting is unusable: each call says so itself
        return MEMORY_CAP


def writable_ranges(maps: str) -> list[tuple[int, int]]:
    """The private writable mappings of a /proc/PID/maps text, the heap included, the stack
    and the kernel's own ([vvar] ...) not: what a child shares with its parent until it
    writes to it."""
    ranges = []
    for line in maps.splitlines():
        fields = line.split(maxsplit=_MAPS_COLUMNS - 1)
        name = fields[-1].strip() if len(fields) == _MAPS_COLUMNS else ""
        writable = len(fields) >= _MAPS_COLUMNS - 1 and fields[1][1:4:2] == "wp"
        if writable and (name == "[heap]" or not name.startswith("[")):
            start, _, end = fields[0].partition("-")
            ranges.append((int(start, 16), int(end, 16)))
    return ranges


def exit_status(code: object) -> int:
    """The exit status a fresh interpreter gives for `sys.exit(code)`; it prints the text of
    any code that is not a number or None, as this does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


# What a child learned that the parent lacks: ("module", name) or ("pattern", text, flags).
Lesson = tuple[Any, ...]


def known() -> set[Lesson]:
    """What this process has loaded: its modules, and the regular expressions `re` holds
    compiled (text patterns: a call compiles many that a fresh process compiles again)."""
    found: set[Lesson] = {("module", name) for name in list(sys.modules)}
    for key in list(getattr(re, "_cache", {})):  # its private cache: none where it is not
        if isinstance(key, tuple) and len(key) == _PATTERN_KEY and key[0] is str:
            found.add(("pattern", key[1], int(key[2])))
    return found


def lessons(before: set[Lesson]) -> bytes:
    """What this process loaded since `before`, for the parent to load too."""
    return json.dumps(sorted(known() - before, key=str)).encode()


def unknown(data: bytes, tried: set[Lesson]) -> list[Lesson]:
    """The lessons of `data` worth taking here: new, well formed, never tried."""
    try:
        taught = json.loads(data)
    except ValueError:
        return []
    have = known() | tried | {("module", "__main__")}
    fresh = []
    for item in taught if isinstance(taught, list) else ():
        lesson = tuple(item) if isinstance(item, list) else ()
        if lesson not in have and _well_formed(lesson):
            have.add(lesson)
            fresh.append(lesson)
    return fresh


def _well_formed(lesson: Lesson) -> bool:
    kinds = tuple(type(part) for part in lesson)
    return (kinds == (str, str) and lesson[0] == "module") or (
        kinds == (str, str, int) and lesson[0] == "pattern"
    )


def learn(lesson: Lesson) -> int:
    """Take one lesson: import the module, compile the pattern. How many it added (0 when it
    fails here: a module a package builds at run time and puts in sys.modules by hand; a
    child then loads what it needs itself, as a fresh process would)."""
    if lesson[0] == "module":
        return preload([lesson[1]])
    try:
        re.compile(lesson[1], lesson[2])
    except (re.error, ValueError, TypeError, OverflowError):
        return 0
    return 1


def preload(modules: Iterable[str]) -> int:
    """Import `modules`, leaving out any that fails. How many modules that added."""
    before = len(sys.modules)
    for name in modules:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    return len(sys.modules) - before


def threaded() -> bool:
    """Whether this process runs more than one thread (C threads too, which `threading`
    does not know of): then it must not fork."""
    return sum(1 for _ in Path("/proc/self/task").iterdir()) > 1


class Parent:
    """The warm parent's loop: requests on `control`, children reaped, modules learned."""

    def __init__(  # pragma: no cover - the warm parent's own process (its signal handlers)
        self, control: socket.socket, fresh: Handlers
    ) -> None:
        self.control = control
        self.fresh = fresh
        self.memory = memory_cap()
        self.calls: dict[int, socket.socket] = {}  # child's pid -> its report socket
        self.spare: Spare | None = None
        self.spares_lost = 0
        self.learning: dict[int, bytearray] = {}  # a child's lessons, as they arrive
        self.queue: deque[Lesson] = deque()
        self.tried: set[Lesson] = set()
        self.generation = 0
        self.frozen = False
        self.selector = selectors.DefaultSelector()
        wake, self.wake = os.pipe()
        os.set_blocking(self.wake, False)
        signal.set_wakeup_fd(self.wake)
        signal.signal(signal.SIGCHLD, _wake_only)
        self.selector.register(control, selectors.EVENT_READ, self.request)
        self.selector.register(wake, selectors.EVENT_READ, self.reap)

    def serve(self) -> int:  # pragma: no cover - the warm parent's own process
        """Until the server hangs up (0), or a learned module started a thread."""
        while True:
            self.replenish()
            for key, _ in self.selector.select(0 if self.queue else None):
                handle: Callable[[Any], bool] = key.data
                if not handle(key.fileobj):
                    return 0
            if self.queue:
                self.generation += learn(self.queue.popleft())
                self.frozen = False
                if threaded():
                    return _threaded()

    def replenish(self) -> None:  # pragma: no cover - warm parent
        """Fork the next call's child ahead, while no call runs (its copying would take the
        call's processor time) and nothing is left to learn (a spare forked before a lesson
        lacks it: it is replaced)."""
        if self.calls or self.queue or self.spares_lost >= SPARES_LOST_MOST:
            return
        spare = self.spare
        if spare is not None and spare.generation == self.generation:
            return
        if spare is not None:
            with contextlib.suppress(OSError):
                os.kill(spare.pid, signal.SIGKILL)
            spare.channel.close()
        self.spare = self.fork()

    def request(self, control: socket.socket) -> bool:  # pragma: no cover - warm parent
        """Hand the server's request to a child; False when the server is gone."""
        try:
            message, fds, _, _ = socket.recv_fds(control, MESSAGE_MOST, FDS)
        except OSError:
            return False
        if not message:
            return False
        handed = len(fds) == FDS and _waiting(fds[3]) and self.hand(message, fds)
        _close(fds[:3] if handed else fds)  # the report socket is kept for `reaped`
        return True

    def hand(self, message: bytes, fds: list[int]) -> bool:  # pragma: no cover - warm parent
        spare, self.spare = self.spare or self.fork(), None
        if spare is None:
            return False
        try:
            socket.send_fds(spare.channel, [message], fds)
        except OSError:  # it died meanwhile: the server runs the program
            return False
        finally:
            spare.channel.close()
        self.calls[spare.pid] = socket.socket(fileno=fds[3])
        return True

    def fork(self) -> Spare | None:  # pragma: no cover - warm parent
        """A new child, waiting for its request; None when no process can be started now."""
        channel, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        hear, told = os.pipe()
        if not self.frozen:  # the children's collector then leaves the shared objects alone
            gc.freeze()
            self.frozen = True
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # nothing of the parent's is written twice
        birth = Birth(theirs, told, os.getpid(), self.fresh, self.memory)
        try:
            pid = os.fork()
        except OSError:
            _close((hear, told))
            channel.close()
            theirs.close()
            return None
        if pid == 0:
            child(birth)
        theirs.close()
        os.close(told)
        self.learning[hear] = bytearray()
        self.selector.register(hear, selectors.EVENT_READ, self.learned)
        return Spare(pid, channel, self.generation)

    def reap(self, wake: int) -> bool:  # pragma: no cover - warm parent
        """Report each child that ended, and kill what it left running in its group."""
        with contextlib.suppress(OSError):
            os.read(wake, MESSAGE_MOST)
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return True
            if pid == 0:
                return True
            # Right after the reap, so its id cannot have been given to another group yet.
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)
            if self.spare is not None and self.spare.pid == pid:  # it died waiting
                self.spare.channel.close()
                self.spare = None
                self.spares_lost += 1
            report = self.calls.pop(pid, None)
            if report is not None:
                code = os.waitstatus_to_exitcode(status)
                with contextlib.suppress(OSError):  # a server that gave up on the call
                    report.send(f"reaped {pid} {code}".encode())
                report.close()

    def learned(self, told: int) -> bool:  # pragma: no cover - warm parent
        """Read what a child loaded that this parent lacks; queue it to load here."""
        chunk = os.read(told, 1 << 16)
        if chunk:
            self.learning[told] += chunk
            return True
        self.selector.unregister(told)
        os.close(told)
        fresh = unknown(bytes(self.learning.pop(told)), self.tried)
        self.tried.update(fresh)
        self.queue.extend(fresh)
        return True


def _wake_only(_signum: int, _frame: object) -> None:  # pragma: no cover - warm parent
    """SIGCHLD's handler: the wakeup fd's byte is what wakes the loop."""


def _waiting(fd: int) -> bool:
    """Whether the other end of socket `fd` is still open and has said nothing: the server
    closes its end of a call's report socket when it gives up on the call."""
    readable, _, _ = select.select([fd], [], [], 0)
    return not readable


def _close(fds: Iterable[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _threaded() -> int:  # pragma: no cover - warm parent
    sys.stderr.write("web-tools mcp: a module started a thread in the warm worker, which ends; "
                     "own tools run as programs\n")  # fmt: skip
    return EXIT_THREADED


def _load_madvise() -> Any:
    try:
        madvise = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return madvise


_MADVISE = _load_madvise()


# --- a child: waits for its request, then becomes the call --------------------------------


def child(birth: Birth) -> NoReturn:  # pragma: no cover - a child
    """Become a call and exit with its status; never returns into the parent's loop."""
    code = 1
    try:
        code = become(birth)
    except BaseException:  # noqa: BLE001 - whatever happens, this child must not go on
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        os._exit(code)


def become(birth: Birth) -> int:  # pragma: no cover - a child
    before = known()
    if not _prepare(birth):
        return 1
    _populate(birth.channel)
    try:
        message, fds, _, _ = socket.recv_fds(birth.channel, MESSAGE_MOST, FDS)
    except OSError:
        return 1
    if len(fds) != FDS:
        return 0  # the parent closed the channel: this child is not needed
    report = socket.socket(fileno=fds[3])
    report.set_inheritable(False)  # what the tool starts must not hold the server's socket
    try:
        report.send(f"pid {os.getpid()}".encode())
    except OSError:
        return 1  # the server gave up on the call
    asked = json.loads(message)
    for target, fd in enumerate(fds[:3]):
        os.dup2(fd, target)
    _close(fds[:3])
    birth.channel.close()
    sys.argv = [asked["argv0"]]
    protocol.ENDS_PROCESS = False  # the child tells the server how the call went, then ends
    code = finish(run_entry(asked["entry"]))
    _tell(birth.learn, lessons(before))
    _close((0, 1, 2))  # the server reads the end of the output now, not after the exit
    with contextlib.suppress(OSError):
        report.send(f"exit {code}".encode())
    return code


def _prepare(birth: Birth) -> bool:  # pragma: no cover - a child
    """All of a fresh process's set-up that needs no request. False when the parent is
    gone already."""
    os.setsid()
    if not die_with_parent() or os.getppid() != birth.parent:
        return False  # the parent died before the signal was set
    signal.set_wakeup_fd(-1)
    for signum, handler in birth.fresh.items():
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, handler)
    _close_all_but({birth.channel.fileno(), birth.learn})
    cap_data(birth.memory)
    return True


def _populate(channel: socket.socket) -> None:  # pragma: no cover - a child
    """Copy the pages shared with the parent now, a chunk at a time, until the request
    comes: then the call writes to its own pages, without a fault for each first write."""
    if _MADVISE is None:
        return
    try:
        ranges = writable_ranges(Path("/proc/self/maps").read_text(encoding="ascii"))
    except OSError:
        return
    for start, end in ranges:
        for at in range(start, end, POPULATE_CHUNK):
            if not _waiting(channel.fileno()):
                return
            _MADVISE(at, min(POPULATE_CHUNK, end - at), _MADV_POPULATE_WRITE)


def _close_all_but(keep: set[int]) -> None:  # pragma: no cover - a child
    """Close every file descriptor from 3 on but `keep`: a fresh process has none of the
    parent's (its socket to the server, other calls' pipes)."""
    start = 3
    for fd in sorted(keep):
        os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, os.sysconf("SC_OPEN_MAX"))


def run_entry(entry: str) -> int:  # pragma: no cover - a child
    """`sys.exit(function())`, as the console script does, and the status it exits with."""
    module, _, function = entry.partition(":")
    try:
        sys.exit(getattr(importlib.import_module(module), function)())
    except SystemExit as exc:
        return exit_status(exc.code)
    except KeyboardInterrupt:  # a fresh interpreter then dies by SIGINT
        traceback.print_exc()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 1
    except BaseException:  # noqa: BLE001 - a fresh interpreter prints it and exits 1
        traceback.print_exc()
        return 1


def _tell(told: int, taught: bytes) -> None:  # pragma: no cover - a child
    data = memoryview(taught)
    with contextlib.suppress(OSError):
        while data:
            data = data[os.write(told, data) :]
    _close((told,))


def main() -> None:  # pragma: no cover - runs as its own process
    entries = sys.argv[1:]
    server = os.getppid()
    if entries[:1] == ["--server"]:
        server, entries = int(entries[1]), entries[2:]
    # Dies with the server even where setpriv did not tie it (process.tie), and ends now if
    # the server died before that (a parent-death signal set after the death never comes): a
    # warm parent never outlives it, nor spends its start importing for nobody.
    die_with_parent()
    if os.getppid() != server:
        sys.exit(0)
    fresh = fresh_handlers()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is the server's to handle
    control = socket.socket(fileno=os.dup(0))
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    parent = Parent(control, fresh)
    preload(entry.partition(":")[0] for entry in entries)
    if threaded():
        sys.exit(_threaded())
    control.send(READY)
    sys.exit(parent.serve())


if __name__ == "__main__":  # pragma: no cover
    main()
