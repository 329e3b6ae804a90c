"""The connections of one web-fetch call: only to addresses the guard vetted, pinned.

Pinning: the guard resolves and checks a host once, and the connection goes to that very
address, so a second DNS answer (rebinding) cannot redirect it. The URL keeps the host name,
so the Host header, TLS SNI and certificate check all stay on the name. Every wait ends with
the call's deadline, as for every tool (common.http).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import httpcore

from common.http import DeadlineBackend

if TYPE_CHECKING:
    from collections.abc import Iterable

    from common.http import Deadline


class PinnedBackend(DeadlineBackend):
    """Connects a host name only to the address the guard approved for it."""

    def __init__(self, deadline: Deadline) -> None:
        super().__init__(deadline)
        self.pins: dict[str, str] = {}

    def pin(self, host: str, address: str) -> None:
        self.pins[_key(host)] = address

    def pinned(self, host: str) -> bool:
        return _key(host) in self.pins

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        address = self.pins.get(_key(host))
        if address is None:
            raise httpcore.ConnectError(f"refusing to connect to unvetted host {host}")
        return super().connect_tcp(address, port, timeout, local_address, socket_options)


def _key(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")
