"""How a process that ran a call ends: as the interpreter would, but for its teardown.

A fresh interpreter's exit waits for its other threads, runs the atexit functions, flushes
stdout and stderr (`finish`), then frees every module and object one by one. That last step
took a third as long as a web fetch's own work, and it can crash a process whose daemon
thread is still importing a C extension (web-fetch's readers, fetch/pipeline.py, when the
call failed before it needed them). `leave` skips it: the system takes back the memory whole.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn


def finish(code: int) -> int:
    """What a fresh interpreter does at its exit before its teardown: wait for its other
    threads, run the atexit functions, flush stdout and stderr; `code`, or 120 when a flush
    fails (as the interpreter exits then)."""
    threading = sys.modules.get("threading")
    shutdown: Callable[[], None] | None = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        shutdown()
    import atexit

    atexit._run_exitfuncs()  # noqa: SLF001 - the interpreter's own exit step
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except (OSError, ValueError):
            code = 120
    return code


def leave(code: int) -> NoReturn:
    """End the process with `code` once its answer is out, without the teardown."""
    os._exit(finish(code))
