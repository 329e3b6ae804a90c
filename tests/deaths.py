"""A process's end as /proc sees it, for tests that kill processes.

SIGKILL is delivered asynchronously: `kill` returns before the process has ended, and on a
loaded machine the process may still be running a moment later. A test that checks right
after a kill therefore waits, with a deadline, for every process to be gone.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from conftest import HANG_GUARD

if TYPE_CHECKING:
    from collections.abc import Iterable


def alive(pid: int) -> bool:
    """Running: a killed process whose parent has not reaped it yet is a zombie, not alive."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


def gone(pids: Iterable[int], wait: float = HANG_GUARD) -> bool:
    """Whether every process of `pids` has ended within `wait` seconds: as soon as they have,
    so the wait can be long enough for any machine, however busy."""
    pids = list(pids)
    end = time.monotonic() + wait
    while any(alive(pid) for pid in pids):
        if time.monotonic() > end:
            return False
        time.sleep(0.02)
    return True
