"""Run one program as an ikigai host does: bytes on stdin, bounded stdout, a time limit.

A misbehaving tool must never take its caller down: output past the limit and a program
past its deadline both end in a killed process group (grandchildren included) and a plain
`Outcome`, never an exception. How the program is started is the caller's choice (`Start`: a
new program by default, or a warm worker's fork, ikigai_web/host/workers.py); what follows is the
same.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import select
import selectors
import shutil
import signal
import subprocess
import threading
import time
import weakref
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Protocol

from ikigai_web.common.procs import descendants, kill, prctl, zombies

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

STDERR_KEPT = 64 * 1024
_CHUNK = 64 * 1024
# A tool that has exited but left a grandchild holding its pipes is done: stop waiting
# for end-of-file once nothing arrives for this long after the exit.
_EXIT_POLL = 0.05


@dataclass(frozen=True)
class Outcome:
    """What the program did. `status` is negative for a signal, None when it was stopped."""

    status: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool = False
    overflowed: bool = False


class Running(Protocol):
    """A started program as `run` serves it: `subprocess.Popen`'s part that it uses. `pid`
    leads the program's own process group; `wait` raises subprocess.TimeoutExpired."""

    @property
    def pid(self) -> int: ...
    @property
    def stdin(self) -> IO[bytes] | None: ...
    @property
    def stdout(self) -> IO[bytes] | None: ...
    @property
    def stderr(self) -> IO[bytes] | None: ...
    @property
    def returncode(self) -> int | None: ...
    def poll(self) -> int | None: ...
    def wait(self, timeout: float | None = None) -> int: ...


if TYPE_CHECKING:
    from typing import TypeAlias

    # (argv, whether it gets stdin, tied) -> the program, started in a process group of its
    # own, with pipes for stdin (if it gets any), stdout and stderr. OSError when it cannot be.
    Start: TypeAlias = Callable[[Sequence[str], bool, bool], Running]

# The programs running now, by pid: what `stop_all` ends when the caller itself is stopped.
RUNNING: dict[int, Running] = {}
# Held while a child is started and noted (in RUNNING or by `own`), and while `reap_adopted`
# looks: a child of this process's own is never taken for an orphan to reap.
_RUNNING_LOCK = threading.Lock()
# Other children of this process's own, each waited for by its Popen (the guardian, the warm
# parent): never reaped by `reap_adopted`, which would leave that Popen a wrong status.
_OWN: weakref.WeakSet[subprocess.Popen[bytes]] = weakref.WeakSet()
_REAP_PAUSE = (0.05, 1.0)  # seconds between looks while a zombie is an own child's, doubling
_STOPPING = threading.Event()
_STOP_ROUNDS = 20


def run(
    argv: Sequence[str],
    data: bytes | None,
    *,
    timeout: float,
    limit: int,
    tied: bool = False,
    cancel: threading.Event | None = None,
    start: Start | None = None,
) -> Outcome:
    """Run `argv` with `data` on stdin (None: no stdin). OSError when it cannot be started.

    `tied`: the program is killed by the kernel if this process dies, even by SIGKILL (Linux's
    parent-death signal), for a long-lived caller such as the MCP server. `cancel`, once set,
    stops the program as its deadline would (within _EXIT_POLL seconds): nobody waits for it.
    What the program leaves running in its process group when it ends is killed with it.
    `start` starts it (default: `popen`, a new program).
    """
    if tied:
        _tie()  # may probe setpriv: not while locked
    with _RUNNING_LOCK:  # started and registered at once: `stop_all` misses none
        if _STOPPING.is_set():
            raise OSError(errno.ESHUTDOWN, "the caller is shutting down")
        proc = (start or popen)(argv, data is not None, tied)
        RUNNING[proc.pid] = proc
    exchange = _Exchange(proc, data or b"", time.monotonic() + timeout, limit, cancel)
    try:
        return exchange.run()
    finally:
        exchange.close()
        with _RUNNING_LOCK:
            RUNNING.pop(proc.pid, None)


def popen(argv: Sequence[str], stdin: bool, tied: bool) -> subprocess.Popen[bytes]:  # noqa: FBT001
    """`argv` started as a new program in a session of its own, tied as `run` says."""
    return subprocess.Popen(  # noqa: S603 - running the discovered tool is the point
        tie(argv) if tied else list(argv),
        stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group, so a kill reaches what it started
    )


def own(start: Callable[[], subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    """The child `start()` starts, noted as one this process waits for itself (see `_OWN`)."""
    with _RUNNING_LOCK:
        child = start()
        _OWN.add(child)
    return child


def reap_adopted() -> threading.Thread:  # pragma: no cover - the MCP server's own process
    """Reap, as they end, the orphans `adopt_orphans` brings to this process (what a warm
    parent killed left, a tool's setsid grandchild): nobody else waits for them, and each
    would stay a zombie as long as this process runs. A thread of its own, which sleeps in
    waitid until a child ends."""
    reaper = threading.Thread(target=_reap_forever, name="reaper", daemon=True)
    reaper.start()
    return reaper


def _reap_forever() -> None:  # pragma: no cover - as reap_adopted (reap_orphans is tested)
    pause = _REAP_PAUSE[0]
    while True:
        try:  # WNOWAIT: only wait for one to end, leaving it to be reaped below or by its owner
            os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # no child at all, for now
            time.sleep(_REAP_PAUSE[1])
            continue
        if reap_orphans():
            pause = _REAP_PAUSE[0]
        else:  # an own child's zombie, its owner about to reap it: do not spin meanwhile
            time.sleep(pause)
            pause = min(pause * 2, _REAP_PAUSE[1])


def reap_orphans() -> list[int]:
    """Reap this process's ended children that are none of its own (RUNNING, `own`): the
    orphans it adopted. Which it reaped."""
    reaped = []
    with _RUNNING_LOCK:
        mine = set(RUNNING) | {child.pid for child in _OWN if child.returncode is None}
        for pid in zombies(os.getpid()):
            if pid in mine:
                continue
            with contextlib.suppress(ChildProcessError):
                if os.waitpid(pid, os.WNOHANG)[0] == pid:
                    reaped.append(pid)
    return reaped


def tie(argv: Sequence[str]) -> list[str]:
    """`argv` run with the parent-death signal set (see `run`), where setpriv can set it."""
    return [*_tie(), *argv]


def stopping() -> bool:
    """Whether `stop_all` has run: nothing new may start."""
    return _STOPPING.is_set()


_PR_SET_CHILD_SUBREAPER = 36


@functools.cache
def _tie() -> tuple[str, ...]:
    """The command that runs a program with Linux's parent-death signal set: util-linux's
    setpriv, which sets it and execs the program. Not a `preexec_fn`: Python code between fork
    and exec can deadlock the child of a process with many threads, as the MCP server is, and
    holds up every other start meanwhile. Empty where setpriv cannot (not Linux, or too old):
    the program then runs untied, and the MCP server's guardian still ends it."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return ()
    command = (setpriv, "--pdeathsig", "KILL", "--")
    try:
        probe = own(lambda: subprocess.Popen(  # noqa: S603 - a fixed command
            [*command, "true"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))  # fmt: skip
        status = probe.wait(timeout=5)
    except (OSError, subprocess.SubprocessError):
        return ()
    return command if status == 0 else ()


def adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans (Linux): a program that
    escapes its process group (setsid) and outlives its parent comes back to this process,
    where `stop_all` finds it. False where the system cannot."""
    return prctl(_PR_SET_CHILD_SUBREAPER, 1)


def stop_all(keep: frozenset[int] = frozenset()) -> None:
    """Kill every process below this one but `keep`: the programs `run` started, whatever
    they started, in their group or in a session of its own (setsid), and the orphans
    `adopt_orphans` brought back. Descendants are found before any is killed, while the
    parents that lead to them are alive."""
    _STOPPING.set()  # from now on nothing new starts
    with _RUNNING_LOCK:
        running = list(RUNNING)
    below = [pid for pid in descendants(os.getpid()) if pid not in keep]  # before any dies
    for pid in running:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    kill(below)
    for _ in range(_STOP_ROUNDS):  # orphans come back to an adopting parent a moment later
        below = [pid for pid in descendants(os.getpid()) if pid not in keep]
        if not below:
            return
        kill(below)
        time.sleep(_EXIT_POLL)


class _Exchange:
    """The pipes of one running program, served by one selector until it is done."""

    def __init__(
        self,
        proc: Running,
        data: bytes,
        deadline: float,
        limit: int,
        cancel: threading.Event | None,
    ) -> None:
        self.proc = proc
        self.cancel = cancel
        self.pending = memoryview(data)
        self.deadline = deadline
        self.limit = limit
        self.out = bytearray()
        self.err = bytearray()
        self.selector = selectors.DefaultSelector()
        for stream, events, buffer in (
            (proc.stdin, selectors.EVENT_WRITE, None),
            (proc.stdout, selectors.EVENT_READ, self.out),
            (proc.stderr, selectors.EVENT_READ, self.err),
        ):
            if stream is not None:
                os.set_blocking(stream.fileno(), False)
                self.selector.register(stream, events, buffer)

    def run(self) -> Outcome:
        while self.selector.get_map():
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                return self._stop(timed_out=True)
            if self.cancel is not None and self.cancel.is_set():
                return self._stop()
            # Whether it had exited before the select: then all it wrote was readable in it. An
            # exit seen after an empty select may come with output written in between.
            exited = self.proc.poll() is not None
            ready = self.selector.select(min(remaining, _EXIT_POLL))
            if not ready and exited:
                break
            for key, _ in ready:
                if key.data is None:
                    self._write(key)
                else:
                    self._read(key)
            if len(self.out) > self.limit:
                return self._stop(overflowed=True)
        return self._finish()

    def _read(self, key: selectors.SelectorKey) -> None:
        chunk = os.read(key.fd, _CHUNK)
        if not chunk:
            self.selector.unregister(key.fileobj)
        elif key.data is self.out:
            self.out += chunk
        else:  # stderr: keep the start, drain the rest so the program never blocks on it
            self.err += chunk[: max(STDERR_KEPT - len(self.err), 0)]

    def _write(self, key: selectors.SelectorKey) -> None:
        try:
            written = os.write(key.fd, self.pending[:_CHUNK])
        except BrokenPipeError:  # the program stopped reading: what it got is its input
            written = len(self.pending)
        self.pending = self.pending[written:]
        if not self.pending:
            self.selector.unregister(key.fileobj)
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # end of input: the program may answer now

    def _finish(self) -> Outcome:
        try:
            status = self.proc.wait(max(self.deadline - time.monotonic(), 0))
        except subprocess.TimeoutExpired:  # closed its pipes but kept running
            return self._stop(timed_out=True)
        return Outcome(status, bytes(self.out), bytes(self.err))

    def _stop(self, *, timed_out: bool = False, overflowed: bool = False) -> Outcome:
        self._kill()
        return Outcome(None, bytes(self.out), bytes(self.err), timed_out, overflowed)

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def close(self) -> None:
        self.selector.close()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                stream.close()
        if self.proc.returncode is None:  # only reachable through an exception above
            self._kill()
        # What it left running in the background (`cmd &`), holding no pipe of ours: the
        # group outlives its leader while a member lives. Right after the wait, so its id
        # cannot have been given to another group yet (ids are handed out in turn).
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)


def start_guardian() -> subprocess.Popen[bytes]:
    """The process that ends this one's descendants if this one is killed
    (ikigai_web/host/guardian.py). Keep the returned object: its stdin is the pipe whose closing
    tells the guardian."""
    import sys

    return own(
        lambda: subprocess.Popen(  # noqa: S603 - our own module, by this interpreter
            [sys.executable, "-m", "ikigai_web.host.guardian", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    )


def guardian_watching(guardian: subprocess.Popen[bytes], wait: float) -> bool:
    """Whether `guardian` said within `wait` seconds that it watches: a tool started before
    then would outlive a SIGKILL of this process. Its stdout is closed in any case."""
    if guardian.stdout is None:
        return False
    with guardian.stdout as said:
        ready, _, _ = select.select([said], [], [], wait)
        return bool(ready) and said.read(1) == b"\n"
