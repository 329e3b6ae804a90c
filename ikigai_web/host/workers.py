"""Warm workers: the MCP server runs this installation's own tools by forking a parent that
has their code loaded (ikigai_web/host/warm.py), instead of starting a new program for each call.

`Warm` starts that parent, restarts it when it dies, and gives `process.run` a way to start
each own tool (`starter`): a child of the parent when the parent is ready, the tool's program
otherwise (still starting, restarting, not answering). A `WarmCall` is such a child as
`process.run` serves a program: its pipes, its process group, its exit status, so the deadline,
the output limit, cancelling and the kill of its group hold as they do for a program.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
from functools import partial
from typing import IO, TYPE_CHECKING

from ikigai_web.host import process
from ikigai_web.host.warm import EXIT_THREADED, MESSAGE_MOST, READY

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from ikigai_web.host.discovery import Tool

PID_WAIT = 5.0  # seconds: the most a start waits for its child; then the parent is stuck
READY_WAIT = 60.0  # the most the parent may take to import the tools
REAPED_WAIT = 5.0  # after a kill, the most `wait` waits to hear that the child was reaped
FIRST_PAUSE, LONGEST_PAUSE = 0.5, 30.0  # between the restarts of a parent that keeps dying


class Warm:
    """The warm parent for `entries` (`module:function`), as the MCP server keeps it."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries = sorted(set(entries))
        self.ready = threading.Event()
        self.closed = threading.Event()
        self.lock = threading.Lock()  # one request at a time on the control socket
        self.control: socket.socket | None = None
        self.parent: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the parent, and keep it running: its thread is its parent-death signal's."""
        threading.Thread(target=self._keep, name="warm parent", daemon=True).start()

    def close(self) -> None:
        """Stop the parent and start no other; calls run as programs from now on."""
        self.closed.set()
        self.restart()

    def restart(self) -> None:
        """Kill the parent (it is stuck): it is started anew."""
        parent = self.parent
        if parent is not None:
            with contextlib.suppress(OSError):
                parent.kill()

    def starter(self, tool: Tool) -> process.Start | None:
        """How `process.run` starts `tool`: None (as a program) for another program than
        this installation's own tools."""
        return partial(self._start, tool.entry) if tool.entry else None

    def _start(
        self,
        entry: str,
        argv: Sequence[str],
        stdin: bool,  # noqa: FBT001 - process.Start's signature
        tied: bool,  # noqa: FBT001
    ) -> process.Running:
        """A warm child, always tied (it dies with the parent, which dies with this
        process); the program when there is no parent to ask."""
        if self.ready.is_set():
            try:
                return WarmCall.start(self, entry, argv[0], stdin)
            except TimeoutError:
                self.restart()
            except OSError:
                pass
        return process.popen(argv, stdin, tied)

    def _keep(self) -> None:
        pause = FIRST_PAUSE
        while not (self.closed.is_set() or process.stopping()):
            started = time.monotonic()
            status = self._serve()
            if status == EXIT_THREADED or self.closed.is_set() or process.stopping():
                return
            sys.stderr.write(
                f"web-tools mcp: the warm worker ended ({status}); own tools run as programs "
                "until it is back\n"
            )
            pause = FIRST_PAUSE if time.monotonic() - started > LONGEST_PAUSE else pause
            if self.closed.wait(pause):
                return
            pause = min(pause * 2, LONGEST_PAUSE)

    def _serve(self) -> int | str:
        """Run one parent until it ends: its exit status, or why it could not start."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        server = ["--server", str(os.getpid())]  # it ends at once if this process is gone
        argv = [sys.executable, "-P", "-m", "ikigai_web.host.warm", *server, *self.entries]
        try:
            command = process.tie(argv)
            with theirs:  # its stdin; stdout is nobody's, stderr the server's log
                self.parent = process.own(lambda: subprocess.Popen(  # noqa: S603 - our module
                    command,
                    stdin=theirs.fileno(),
                    stdout=subprocess.DEVNULL,
                    start_new_session=True,  # a terminal's ^C is the server's to handle
                ))  # fmt: skip
        except OSError as exc:
            mine.close()
            return f"it could not be started: {exc.strerror}"
        if self.closed.is_set():  # closed while it started: `close` may have missed it
            self.parent.kill()
        try:
            return self._attend(self.parent, mine)
        finally:
            self.ready.clear()
            with self.lock:
                self.control = None
                mine.close()

    def _attend(self, parent: subprocess.Popen[bytes], control: socket.socket) -> int:
        if said(control, READY_WAIT) == READY:
            with self.lock:
                self.control = control
            self.ready.set()
            sys.stderr.write(f"web-tools mcp: own tools run in a warm worker (pid {parent.pid})\n")
        else:
            parent.kill()
        return parent.wait()


def said(sock: socket.socket, wait: float) -> bytes | None:
    """The next message on `sock` within `wait` seconds: b"" at its end, None when none came."""
    ready, _, _ = select.select([sock], [], [], wait)
    return sock.recv(MESSAGE_MOST) if ready else None


class WarmCall:
    """A call run by a child of the warm parent, as `process.run` serves a program."""

    def __init__(
        self,
        pid: int,
        streams: tuple[IO[bytes] | None, IO[bytes], IO[bytes]],
        report: socket.socket,
    ) -> None:
        self.pid = pid
        self.stdin, self.stdout, self.stderr = streams
        self.report = report
        self.returncode: int | None = None

    @classmethod
    def start(cls, warm: Warm, entry: str, argv0: str, stdin: bool) -> WarmCall:  # noqa: FBT001
        """Ask the parent for a child running `entry`. OSError when it is gone, TimeoutError
        when it does not answer; either way no call runs (a child it starts later reads no
        input, and answers nobody)."""
        ours, theirs = _pipes(stdin)
        mine, report = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            try:
                _ask(warm, entry, argv0, [*theirs, report.fileno()])
            finally:  # the parent has its own copies now
                _close(theirs)
                report.close()
            return cls._answered(mine, said(mine, PID_WAIT), ours)
        except BaseException:
            _close(ours)
            mine.close()
            raise

    @classmethod
    def _answered(cls, report: socket.socket, message: bytes | None, ours: list[int]) -> WarmCall:
        """The call whose child said `message` first: its pid, or else no call runs."""
        if message is None:
            raise TimeoutError(errno.ETIMEDOUT, "the warm worker did not answer")
        words = message.split()
        if len(words) != 2 or words[0] != b"pid":  # `pid N`
            raise OSError(errno.ECONNRESET, "the warm worker ended the call before it began")
        *stdin, out, err = ours
        streams = (
            os.fdopen(stdin[0], "wb", buffering=0) if stdin else None,
            os.fdopen(out, "rb", buffering=0),
            os.fdopen(err, "rb", buffering=0),
        )
        return cls(int(words[1]), streams, report)

    def poll(self) -> int | None:
        return self._status(0)

    def wait(self, timeout: float | None = None) -> int:
        """The exit status. With no `timeout` (after a kill), at most REAPED_WAIT seconds:
        a parent that does not say so by then is stuck, and the child was sent SIGKILL."""
        code = self._status(REAPED_WAIT if timeout is None else timeout)
        if code is not None:
            return code
        if timeout is not None:
            raise subprocess.TimeoutExpired(f"warm call {self.pid}", timeout)
        self._ended(-signal.SIGKILL)
        return -signal.SIGKILL

    def _status(self, wait: float) -> int | None:
        end = time.monotonic() + wait
        while self.returncode is None:
            message = said(self.report, max(end - time.monotonic(), 0))
            if message is None:
                return None
            words = message.split()
            if not message:  # the parent is gone, and with it the child, by its signal
                self._ended(-signal.SIGKILL)
            elif words[0] in (b"exit", b"reaped"):
                self._ended(int(words[-1]))
        return self.returncode

    def _ended(self, code: int) -> None:
        self.returncode = code
        self.report.close()


def _pipes(stdin: bool) -> tuple[list[int], list[int]]:  # noqa: FBT001
    """The server's ends (stdin's if any, stdout's, stderr's) and the child's three."""
    ours: list[int] = []
    theirs: list[int] = []
    try:
        if stdin:
            read, write = os.pipe()
            ours.append(write)
            theirs.append(read)
        else:
            theirs.append(os.open(os.devnull, os.O_RDONLY))
        for _ in range(2):
            read, write = os.pipe()
            ours.append(read)
            theirs.append(write)
    except OSError:
        _close(ours + theirs)
        raise
    return ours, theirs


def _ask(warm: Warm, entry: str, argv0: str, fds: list[int]) -> None:
    message = json.dumps({"entry": entry, "argv0": argv0}).encode()
    with warm.lock:
        if warm.control is None:
            raise OSError(errno.ENOTCONN, "the warm worker is not running")
        socket.send_fds(warm.control, [message], fds)


def _close(fds: Iterable[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
