"""What moves a call's watchdog (common/runner.py, `Output.narrow`): the call's own deadline,
where a tool starts it (net.http.Deadline.of_call), which a busy machine may start seconds
after the settings were read. This module imports nothing, so the HTTP layer tells the runner
without importing it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

_narrow: Callable[[float], None] | None = None


def watching(narrow: Callable[[float], None] | None) -> None:
    """What moves the watchdog of the call this process guards now (None: no call is)."""
    global _narrow  # noqa: PLW0603 - the one call a process runs
    _narrow = narrow


def call_deadline(seconds: float) -> None:
    """The call's deadline, `seconds` long, starts now: its watchdog answers a grace after it.
    No call is guarded in a test's own process: nothing to move."""
    if _narrow is not None:
        _narrow(seconds)
