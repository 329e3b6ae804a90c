"""The processes below this one, read from /proc: what a caller must not leave behind."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path


def descendants(pid: int) -> list[int]:
    """Every living process below `pid` (children first), from /proc; empty where there is
    none or no /proc."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = text.rpartition(")")[2].split()
        if len(fields) > 1 and fields[0] != "Z":
            parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def zombies(pid: int) -> list[int]:
    """The children of `pid` that have ended and wait to be reaped, from /proc."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        fields = text.rpartition(")")[2].split()
        if len(fields) > 1 and fields[0] == "Z" and fields[1] == str(pid):
            found.append(int(stat.parent.name))
    return found


def kill(pids: list[int]) -> None:
    """SIGKILL each of `pids` that still exists."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
