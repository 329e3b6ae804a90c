"""Entry points a warm worker runs in tests/host/test_host_warm.py, as it runs a tool's `main`.

Each reads a JSON object on stdin, as a tool does. `report` says what a call's process looks
like from inside; the others misbehave in one way each. Run from a fresh interpreter too
(`fresh`), where each must do exactly what it does warm.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

_PR_GET_PDEATHSIG = 2


def _asked() -> dict[str, object]:
    data = sys.stdin.read()
    return json.loads(data) if data.strip() else {}


def _pdeathsig() -> int:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    value = ctypes.c_int(0)
    libc.prctl(_PR_GET_PDEATHSIG, ctypes.byref(value))
    return value.value


def _handlers() -> dict[str, str]:
    """Each signal whose handler is not the default, by name: what a fresh interpreter has."""
    found = {}
    for signum in signal.valid_signals():
        try:
            handler = signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        if handler not in (signal.SIG_DFL, None):
            found[signal.Signals(signum).name] = str(handler)
    return found


def report() -> int:
    """What the call's process is: its ids, signals, descriptors, limits, input."""
    asked = _asked()
    state = {
        "asked": asked,
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "pgid": os.getpgid(0),
        "sid": os.getsid(0),
        "pdeathsig": _pdeathsig(),
        "inherited": _inheritable(),
        "handlers": _handlers(),
        "argv": sys.argv,
        "random": random.random(),
        "data_limit": resource.getrlimit(resource.RLIMIT_DATA)[0],
        "vm_data": _vm_data(),
        "environ": os.environ.get("WARM_PROBE_MARK", ""),
        "loaded": str(asked.get("module", "")) in sys.modules,
        "compiled": (str, str(asked.get("pattern", "")), 0) in getattr(re, "_cache", {}),
    }
    if asked.get("module"):
        __import__(str(asked["module"]))
    if asked.get("pattern"):
        re.compile(str(asked["pattern"]))
    sys.stdout.write(json.dumps(state) + "\n")
    return 0


def _inheritable() -> list[int]:
    """The file descriptors a program this one starts would have."""
    found = []
    for entry in Path("/proc/self/fd").iterdir():
        try:
            if os.get_inheritable(int(entry.name)):
                found.append(int(entry.name))
        except OSError:  # the listing's own, closed by now
            continue
    return sorted(found)


def _vm_data() -> int:
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmData:"):
            return int(line.split()[1]) * 1024
    return 0


def exit_with() -> object:
    """Ends as `how` says: a value for sys.exit, an exception, a signal."""
    how = _asked().get("how")
    sys.stdout.write("some output\n")
    sys.stderr.write("some error output\n")
    if how == "raise":
        message = "boom"
        raise ValueError(message)
    if how == "interrupt":
        raise KeyboardInterrupt
    if how == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    if how == "atexit":
        import atexit

        atexit.register(lambda: sys.stdout.write("at exit\n"))
        return 5
    return how


def sleeper() -> int:
    """Starts a grandchild in its own group and sleeps; both pids go to the file named."""
    asked = _asked()
    grandchild = subprocess.Popen(["sleep", "60"])
    Path(str(asked["pids"])).write_text(f"{os.getpid()} {grandchild.pid}\n")
    if asked.get("leave"):  # answer, leaving the grandchild running
        sys.stdout.write('{"success": true}\n')
        return 0
    time.sleep(60)
    return 0


def chatty() -> int:
    """Prints without end."""
    _asked()
    while True:
        sys.stdout.write("x" * 65536)


def hog() -> int:
    """Asks for more memory than a warm call may hold."""
    _asked()
    from ikigai_web.host.warm import MEMORY_CAP

    hoard = bytearray(MEMORY_CAP + (256 << 20))
    sys.stdout.write(f"{len(hoard)}\n")
    return 0


def fresh(entry: str) -> list[str]:
    """The command that runs `entry` as a console script does, in a fresh interpreter."""
    module, _, function = entry.partition(":")
    code = f"import sys; from {module} import {function}; sys.exit({function}())"
    return [sys.executable, "-c", code]
