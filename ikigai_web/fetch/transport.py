"""The connections of one web-fetch call: only to addresses the guard vetted, pinned.

web-fetch speaks httpx (its pages need what httpx does well: streaming, any server's
quirks); the search tools use the lighter `ikigai_web.net.wire`. Both share the deadline, the DNS
wait, the TLS trust and the bounded inflater of `ikigai_web.net.http`.

Pinning: the guard resolves and checks a host once, and the connection goes to that very
address, so a second DNS answer (rebinding) cannot redirect it. The URL keeps the host name,
so the Host header, TLS SNI and certificate check all stay on the name. Every wait ends with
the call's deadline.
"""

from __future__ import annotations

import ssl
import sys
from typing import TYPE_CHECKING, Any

# httpx imports its command-line client on import, and with it click and pygments whenever
# they happen to be installed (the MCP SDK brings them): a program no tool runs. A None
# entry makes that import fail, and httpx then goes without.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpcore  # noqa: E402 - after the guard above
import httpx  # noqa: E402 - after the guard above

from ikigai_web.net import proxy  # noqa: E402 - after the guard above
from ikigai_web.net.http import (  # noqa: E402 - after the guard above
    CHUNK,
    CONNECT_TIMEOUT,
    Headers,
    Opened,
    Unreachable,
    network_error,
    resolve,
    tls_context,
    unreachable,
)
from ikigai_web.net.http import read_body as common_read_body  # noqa: E402 - after the guard above

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ikigai_web.common.errors import ToolError
    from ikigai_web.net.http import Deadline


def timeout(deadline: Deadline) -> httpx.Timeout:
    """What is left of the deadline, as httpx's per-request timeout."""
    left = max(deadline.remaining(), 0.001)
    return httpx.Timeout(left, connect=min(CONNECT_TIMEOUT, left))


class DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every wait is cut short at the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(self._deadline, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(self._deadline, timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        del ssl_context  # the pool's is a placeholder: see DeadlineTransport
        wait = _left(self._deadline, timeout)
        tls = self._inner.start_tls(tls_context(), server_hostname, wait)
        return DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _left(deadline: Deadline, timeout: float | None) -> float:
    try:
        return deadline.left(timeout)
    except TimeoutError:
        raise httpcore.ReadTimeout("the call's deadline passed") from None


class PinnedBackend(httpcore.SyncBackend):
    """Connects a host name only to the address the guard approved for it, every wait
    ending with the call's deadline."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self.pins: dict[str, str] = {}
        # The proxies the user set: reached wherever they are (a proxy on the local network
        # is the usual case); the pages behind them are vetted by name instead.
        self.proxies: set[tuple[str, int]] = set()

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
        left = _left(self.deadline, timeout)
        address = self.pins.get(_key(host))
        if address is None and (_key(host), port) in self.proxies:
            address = _proxy_address(host, port, left)
        if address is None:
            raise httpcore.ConnectError(f"refusing to connect to unvetted host {host}")
        stream = super().connect_tcp(address, port, left, local_address, socket_options)
        return DeadlineStream(stream, self.deadline)


def _proxy_address(host: str, port: int, wait: float) -> str:
    try:
        return resolve(host, port, wait)[0]
    except OSError as exc:
        raise httpcore.ConnectError(f"could not resolve the proxy {host}: {exc}") from None


def _key(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport over a pool that dials through `backend`, directly or through
    the environment's proxy for the URL (ikigai_web.net.proxy).

    httpx would load the CA bundle for every client; the real TLS context is built at the
    first handshake instead (`tls_context`), so the pool is given a placeholder never used.
    """

    def __init__(self, backend: PinnedBackend) -> None:
        super().__init__(verify=_placeholder())
        self._pool = Routes(backend)  # type: ignore[assignment]


class Routes:
    """The pools of one call: the direct one, and one per proxy in use, each request sent
    through the one its URL takes."""

    def __init__(self, backend: PinnedBackend) -> None:
        self.backend = backend
        self.direct = httpcore.ConnectionPool(
            ssl_context=_placeholder(), network_backend=backend, http1=True, http2=False
        )
        self.proxied: dict[proxy.Proxy, httpcore.HTTPProxy] = {}

    def handle_request(self, request: httpcore.Request) -> httpcore.Response:
        url = request.url
        via = proxy.for_url(f"{url.scheme.decode()}://{url.host.decode()}")
        return self._pool(via).handle_request(request)

    def _pool(self, via: proxy.Proxy | None) -> httpcore.ConnectionPool:
        if via is None:
            return self.direct
        if via not in self.proxied:
            self.backend.proxies.add((_key(via.host), via.port))
            self.proxied[via] = httpcore.HTTPProxy(
                proxy_url=httpcore.URL(scheme=b"http", host=via.host.encode(), port=via.port),
                proxy_headers=list(via.headers.items()),
                ssl_context=_placeholder(),
                network_backend=self.backend,
            )
        return self.proxied[via]

    def close(self) -> None:
        for pool in (self.direct, *self.proxied.values()):
            pool.close()


def _placeholder() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def read_body(
    response: httpx.Response, cap: int, deadline: Deadline, *, strict: bool = True
) -> bytearray:
    """The decoded body, read as the search tools read theirs (ikigai_web.net.http.read_body)."""
    headers = Headers.of(response.headers.multi_items())
    opened = Opened(response.status_code, headers, response.iter_raw(CHUNK), response.close)
    try:
        return common_read_body(opened, cap, response.url.host, deadline, strict=strict)
    except httpx.HTTPError as exc:
        raise failed(exc, deadline) from None


def failed(exc: httpx.HTTPError, deadline: Deadline | None = None) -> ToolError:
    """NETWORK_ERROR for an httpx failure, worded as every tool words it (ikigai_web.net.http)."""
    try:
        host = exc.request.url.host or "the server"
    except RuntimeError:
        host = "the server"
    return network_error(from_httpx(exc), host, deadline)


def from_httpx(exc: httpx.HTTPError) -> Unreachable:
    """What an httpx failure says about the connection."""
    if isinstance(exc, httpx.TimeoutException):
        phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
        return Unreachable(f"timeout: {phase}", timed_out=True)
    if isinstance(exc, httpx.ConnectError | httpx.ReadError | httpx.RemoteProtocolError):
        return unreachable(exc, connecting=isinstance(exc, httpx.ConnectError))
    return Unreachable("network: request failed to", str(exc) or type(exc).__name__)
