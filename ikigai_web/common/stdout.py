"""Writing to stdout when no one may be reading, for `--schema` (ikigai_web/common/protocol.py) and
the runner alike. Like the protocol's entry point, it imports nothing but `sys` at module level.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any


def write_text(text: str) -> bool:
    """Write `text` to stdout; False, and nothing said, when no one can read it: stdout
    closed from the start, the reader gone (`| head`), the disk full."""
    if sys.stdout is None:
        return False
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except (OSError, ValueError):
        silence(sys.stdout)
        return False
    return True


def silence(stream: IO[Any]) -> None:
    """Send what is left in `stream`'s buffer to /dev/null: otherwise the interpreter's own
    flush at exit fails again, prints "Exception ignored" and exits 120."""
    import os  # loaded at start-up already: no cost

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):
        return
