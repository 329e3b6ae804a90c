"""The processes below this one, read from /proc: what a caller must not leave behind; and
what a process may ask of Linux for itself (to die with its parent, a cap on its memory)."""

from __future__ import annotations

import contextlib
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator


def descendants(pid: int) -> list[int]:
    """Every living process below `pid` (children first), from /proc; empty where there is
    none or no /proc."""
    parents: dict[int, list[int]] = {}
    for child, state, parent in _processes():
        if state != "Z":
            parents.setdefault(parent, []).append(child)
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def zombies(pid: int) -> list[int]:
    """The children of `pid` that have ended and wait to be reaped, from /proc."""
    return [child for child, state, parent in _processes() if state == "Z" and parent == pid]


def _processes() -> Iterator[tuple[int, str, int]]:
    """Each process in /proc: its pid, its state letter and its parent's pid."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text(encoding="ascii", errors="replace")
        except OSError:
            continue  # ended meanwhile
        fields = text.rpartition(")")[2].split()  # the name, in parentheses, may hold spaces
        if len(fields) > 1 and fields[1].isdigit():
            yield int(stat.parent.name), fields[0], int(fields[1])


def kill(pids: list[int]) -> None:
    """SIGKILL each of `pids` that still exists."""
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _load_prctl() -> Any:
    import ctypes
    import ctypes.util
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True).prctl
    except (OSError, AttributeError):
        return None


PRCTL = _load_prctl()
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> bool:
    """Have the kernel SIGKILL this process when the thread that started it ends (Linux's
    parent-death signal). False where it cannot."""
    return PRCTL is not None and PRCTL(_PR_SET_PDEATHSIG, signal.SIGKILL) == 0


def data_used() -> int | None:
    """This process's heap and private writable memory (VmData), in bytes; None without
    /proc."""
    try:
        status = Path("/proc/self/status").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024
    return None


def cap_data(extra: int) -> int | None:
    """Cap this process's heap and private memory (the soft RLIMIT_DATA, as the MCP server's
    warm workers are capped: address space only reserved, as Chromium reserves many GiB of
    it, does not count) at what it uses now plus `extra` bytes, never above a limit already
    set. Past it an allocation fails: Python raises MemoryError. The cap set, or None where
    it cannot be."""
    import resource

    used = data_used()
    if used is None:
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = used + extra
    for limit in (soft, hard):
        if limit != resource.RLIM_INFINITY:
            cap = min(cap, limit)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    except (OSError, ValueError):
        return None
    return cap
