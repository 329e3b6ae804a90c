"""The processes below this one, read from /proc: what a caller must not leave behind; and
what a process may ask of Linux for itself (to die with its parent, a cap on its memory)."""

from __future__ import annotations

import contextlib
import functools
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


@functools.cache
def _libc_prctl() -> Any:
    """libc's prctl, looked up on first use (not at import: every tool call imports this module
    for its memory cap) in the symbols the process already has, without ctypes.util's
    find_library, which runs ldconfig. None where there is none (not Linux)."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def prctl(option: int, value: int) -> bool:
    """Linux's prctl(option, value) for this process; whether it was done."""
    call = _libc_prctl()
    return call is not None and call(option, value) == 0


_PR_SET_PDEATHSIG = 1


def die_with_parent() -> bool:
    """Have the kernel SIGKILL this process when the thread that started it ends (Linux's
    parent-death signal). False where it cannot."""
    return prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def data_used(status: str | None = None) -> int | None:
    """VmData (heap and private writable memory) in bytes, of a /proc/PID/status text or of
    this process's; None without it."""
    if status is None:
        try:
            status = Path("/proc/self/status").read_text(encoding="ascii", errors="replace")
        except OSError:
            return None
    for line in status.splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024
    return None


def data_limit(used: int, extra: int, current: tuple[int, int]) -> tuple[int, int]:
    """The RLIMIT_DATA (soft, hard) for a process using `used` bytes: `extra` more, never
    above a limit already set. Only the soft limit: web-fetch lifts it for the browser it
    starts (ikigai_web/fetch/network/browser.py), which has a cap of its own."""
    import resource

    soft, hard = current
    cap = used + extra
    for limit in (soft, hard):
        if limit != resource.RLIM_INFINITY:
            cap = min(cap, limit)
    return cap, hard


def cap_data(extra: int) -> int | None:
    """Cap this process's heap and private memory (the soft RLIMIT_DATA: address space only
    reserved, as Chromium reserves many GiB of it, does not count) at what it uses now plus
    `extra` bytes, never above a limit already set (`data_limit`). Past it an allocation
    fails: Python raises MemoryError. The cap set, or None where it cannot be."""
    import resource

    used = data_used()
    if used is None:
        return None
    limits = data_limit(used, extra, resource.getrlimit(resource.RLIMIT_DATA))
    try:
        resource.setrlimit(resource.RLIMIT_DATA, limits)
    except (OSError, ValueError):
        return None
    return limits[0]
