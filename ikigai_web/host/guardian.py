"""Ends what the MCP server started, should the server itself be killed (even by SIGKILL).

The server starts this program with a pipe on its stdin whose other end only the server holds,
and waits for its line on stdout, which says that it watches, before it starts any tool.
Every WATCH_EVERY seconds it notes the server's descendants; when the pipe closes, the server
is gone, and every process of the last note that is still the same process (same start time)
is killed: tool processes, and what they started in a session of their own, which no process
group or parent-death signal reaches.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
from pathlib import Path

from ikigai_web.common.procs import descendants

WATCH_EVERY = 0.2


def started(pid: int) -> str | None:
    """The process's start time (in clock ticks since boot), which a reused pid does not share."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    fields = text.rpartition(")")[2].split()
    return fields[19] if len(fields) > 19 else None  # field 22 of proc(5)


def watch(server: int, pipe: int, ready: int | None = None) -> None:
    """Note `server`'s descendants until `pipe` (a file descriptor) reaches its end, then
    kill those of the last note that are still the same processes. A line on `ready` (a file
    descriptor, closed then) tells the server that it watches."""
    mine = os.getpid()
    if ready is not None:
        with contextlib.suppress(OSError):  # a server that no longer waits for it
            os.write(ready, b"\n")
        os.close(ready)
    noted: dict[int, str | None] = {}
    while not _closed(pipe, WATCH_EVERY):
        fresh = {pid: started(pid) for pid in descendants(server) if pid != mine}
        # A server that dies during the scan hands its children to another parent before the
        # scan may reach them; its pipe closes before that, so a note taken while the pipe
        # stayed open saw them all, and a note taken while it closed may not.
        if _closed(pipe, 0):
            break
        noted = fresh
    for pid, when in noted.items():
        if when is not None and started(pid) == when:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _closed(pipe: int, wait: float) -> bool:
    """Whether `pipe` reached its end within `wait` seconds: the server is gone."""
    ready, _, _ = select.select([pipe], [], [], wait)
    return bool(ready) and not os.read(pipe, 4096)


def main() -> None:  # pragma: no cover - runs as its own process
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's ^C is the server's to handle
    watch(int(sys.argv[1]), sys.stdin.fileno(), ready=sys.stdout.fileno())


if __name__ == "__main__":  # pragma: no cover
    main()
