"""The local files the tools read: settings, credentials and cache entries.

Each is read the same bounded way: only a regular file (a FIFO, a device or a link to one is
refused without blocking), at most so many bytes (a 50 MB key or a link to /dev/zero cannot eat
memory), and, once parsed, no deeper than MAX_DEPTH levels (a file nested thousands deep cannot
crash a tool with RecursionError later on).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

MAX_DEPTH = 32  # none of these files needs more than a handful of levels


class Unreadable(ValueError):  # noqa: N818 - a state of the file, as messages say it
    """No regular file, or larger than it may be."""


def read_regular(
    path: Path | str, most: int, *, dir_fd: int | None = None, follow: bool = True
) -> tuple[bytes, os.stat_result]:
    """The file's bytes and its status; Unreadable when it is no regular file or larger than
    `most` bytes. FileNotFoundError and other OSErrors pass through: with `follow` False, a
    symbolic link is OSError ELOOP. `dir_fd`: `path` is in that directory."""
    flags = os.O_RDONLY | os.O_NONBLOCK | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags, dir_fd=dir_fd)  # non-blocking: a FIFO must not hang the call
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Unreadable("not a regular file")
        if info.st_size > most:
            raise Unreadable(f"larger than {most:,} bytes")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(most + 1)  # one that grew meanwhile is caught here
    finally:
        os.close(fd)
    if len(data) > most:
        raise Unreadable(f"larger than {most:,} bytes")
    return data, info


def shallow(value: Any, most: int = MAX_DEPTH) -> Any:
    """`value` itself; ValueError when its lists and objects nest deeper than `most` levels.
    Walked without recursion, so any depth is measured safely."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = (
            item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        )
        for child in children:
            if isinstance(child, dict | list):
                if depth + 1 > most:
                    raise ValueError(f"nested deeper than {most} levels")
                stack.append((child, depth + 1))
    return value


def parsed(parse: Any, text: Any) -> Any:
    """`parse(text)`, shallow; a parser's RecursionError (a file nested thousands deep) is
    reported as the ValueError it is."""
    try:
        return shallow(parse(text))
    except RecursionError:
        raise ValueError(f"nested deeper than {MAX_DEPTH} levels") from None
