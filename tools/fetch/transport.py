"""An httpx transport that dials only vetted addresses and never reads past a deadline.

Pinning: the guard resolves and checks a host once, and the connection goes to that very
address, so a second DNS answer (rebinding) cannot redirect it. The URL keeps the host name,
so the Host header, TLS SNI and certificate check all stay on the name.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import httpcore
import httpx

if TYPE_CHECKING:
    import ssl
    from collections.abc import Iterable


class Clock:
    """The moment (time.monotonic) after which no read or connect may still wait."""

    def __init__(self, end: float) -> None:
        self.end = end

    def left(self, timeout: float | None) -> float:
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout("the deadline passed")
        return remaining if timeout is None else min(timeout, remaining)


class DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every wait is cut short at the clock's end."""

    def __init__(self, inner: httpcore.NetworkStream, clock: Clock) -> None:
        self._inner = inner
        self._clock = clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._clock.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._clock.left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls = self._inner.start_tls(ssl_context, server_hostname, self._clock.left(timeout))
        return DeadlineStream(tls, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class PinnedBackend(httpcore.SyncBackend):
    """Connects a host name only to the address the guard approved for it."""

    def __init__(self, clock: Clock) -> None:
        self.pins: dict[str, str] = {}
        self.clock = clock

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
        stream = super().connect_tcp(
            address, port, self.clock.left(timeout), local_address, socket_options
        )
        return DeadlineStream(stream, self.clock)


def _key(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


class PinnedTransport(httpx.HTTPTransport):
    """httpx's own transport, over a connection pool that uses the pinned backend."""

    def __init__(self, backend: PinnedBackend) -> None:
        super().__init__()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(),
            network_backend=backend,
            http1=True,
            http2=False,
        )
