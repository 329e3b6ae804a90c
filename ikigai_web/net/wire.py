"""The connection under every tool: one request over http.client, bound to the deadline.

The standard library's client, because every call is a fresh process and importing httpx
alone would cost more than the rest of a search (and a third of an uncached web-fetch). Every
socket wait (DNS, connect, TLS handshake, each read and write) ends at the call's deadline,
so a server that dribbles its answer cannot outlast it. The environment's proxies are used as
curl uses them (ikigai_web.net.proxy).

Given pins (web-fetch's guard, ikigai_web.fetch.network.guard), a host is dialled only at
the address the guard vetted and pinned, so a second DNS answer (rebinding) cannot move the
connection; the URL keeps the name, so the Host header, TLS SNI and the certificate check
stay on it. A proxy the user set is reached wherever it is; the pages behind it are vetted by
name instead.
"""

from __future__ import annotations

import http
import http.client
import socket
import ssl
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ikigai_web.net import proxy
from ikigai_web.net.http import (
    CHUNK,
    CONNECT_TIMEOUT,
    Call,
    Deadline,
    Headers,
    Opened,
    Unreachable,
    resolve,
    tls_context,
    unreachable,
)

if TYPE_CHECKING:
    from collections.abc import Iterator


class Pinned(Protocol):
    """The one address each host may be dialled at (web-fetch's guard pins them)."""

    def address(self, host: str) -> str: ...


# http.client's own failures, and every socket and TLS error (OSError covers both).
FAILURES = (OSError, http.client.HTTPException, UnicodeError, ValueError)


REFUSED_LOGIN = "it answered 407, refusing the login: check the user and password in it"


def open_call(call: Call, deadline: Deadline, pins: Pinned | None = None) -> Opened:
    """Send `call` and read the status line and headers; the body is read as it is iterated.
    With `pins`, the host is dialled only at its pinned address."""
    connection: Connection | None = None
    parts = urlsplit(call.url)
    via = proxy.for_url(call.url)
    headers = dict(call.headers)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if via is not None and parts.scheme != "https":
        target, headers = (
            call.url.split("#", 1)[0],
            headers | via.headers,
        )  # a forward proxy takes the URL
    try:
        connection = Connection(parts.scheme, parts.hostname or "", parts.port, deadline, via)
        connection.pins = pins
        connection.request(call.method, target, call.body or None, headers)
        response = connection.getresponse()
    except (*FAILURES, Unreachable) as exc:
        connecting = connection is None or connection.sock is None
        if connection is not None:
            connection.close()
        if isinstance(exc, Unreachable):
            raise
        raise unreachable(exc, connecting=connecting) from None
    if via is not None and response.status == 407:  # the proxy's answer, not the host's
        connection.close()
        raise _refused(via, REFUSED_LOGIN)
    headers = Headers.of(_decoded(response.getheaders()))
    return Opened(response.status, headers, _chunks(response), connection.close, _reason(response))


def _decoded(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Header values as UTF-8 when all of them are (http.client reads Latin-1): a Location
    or a file name written in UTF-8 reads as written."""
    try:
        return [(k, v.encode("latin-1").decode("utf-8")) for k, v in pairs]
    except UnicodeError:
        return pairs


def _reason(response: http.client.HTTPResponse) -> str:
    """The status line's words (ASCII), or the standard ones for the status."""
    said = response.reason.encode("latin-1", "replace").decode("ascii", "ignore").strip()
    if said:
        return said
    try:
        return _PHRASES.get(response.status) or http.HTTPStatus(response.status).phrase
    except ValueError:
        return ""


_PHRASES = {418: "I'm a teapot"}


def _chunks(response: http.client.HTTPResponse) -> Iterator[bytes]:
    """The raw body in pieces; a body cut short of its Content-Length is a broken connection."""
    try:
        while piece := response.read1(CHUNK):
            yield piece
    except FAILURES as exc:
        raise unreachable(exc) from None
    if response.length:  # bytes announced and never sent
        raise Unreachable("reset: connection dropped by", "the answer was cut short")


class Connection(http.client.HTTPConnection):
    """One connection to `host` (through `via`, a proxy, when given), every wait of which
    ends at the deadline."""

    def __init__(
        self,
        scheme: str,
        host: str,
        port: int | None,
        deadline: Deadline,
        via: proxy.Proxy | None = None,
    ) -> None:
        self.tls = scheme == "https"
        super().__init__(_ascii(host), port or (443 if self.tls else 80))
        self.deadline = deadline
        self.via = via
        self.pins: Pinned | None = None

    def connect(self) -> None:
        plain = self._proxied() if self.via else self._direct()
        if not self.tls:
            self.sock = plain
            return
        try:
            plain.settimeout(self.deadline.left(CONNECT_TIMEOUT))
            context = tls_context()
            context.sslsocket_class = TLSSocket
            secure = context.wrap_socket(plain, server_hostname=self.host)
        except BaseException:
            plain.close()
            raise
        secure.deadline = self.deadline  # type: ignore[attr-defined]
        self.sock = secure

    def _direct(self) -> DeadlineSocket:
        if self.pins is None:
            return dial(self.host, self.port, self.deadline)
        return dial(self.host, self.port, self.deadline, [self.pins.address(self.host)])

    def _proxied(self) -> DeadlineSocket:
        """A socket to the proxy; for https://, a tunnel through it to the host."""
        assert self.via is not None
        try:
            sock = dial(self.via.host, self.via.port, self.deadline)
        except OSError as exc:
            why = unreachable(exc, connecting=True).detail or str(exc)
            raise _refused(self.via, why) from None
        if self.tls:
            try:
                self._tunnel_through(sock)
            except BaseException:
                sock.close()
                raise
        return sock

    def _tunnel_through(self, sock: DeadlineSocket) -> None:
        """CONNECT host:port; anything but 2xx is the proxy refusing."""
        assert self.via is not None
        authority = f"{self.host}:{self.port}"
        lines = [f"CONNECT {authority} HTTP/1.1", f"Host: {authority}"]
        lines += [f"{k}: {v}" for k, v in self.via.headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        answer = http.client.HTTPResponse(sock, method="CONNECT")
        try:
            answer.begin()
        except FAILURES as exc:
            why = f"it broke off the tunnel ({exc or type(exc).__name__})"
            raise _refused(self.via, why) from None
        if answer.status == 407:
            raise _refused(self.via, REFUSED_LOGIN)
        if not 200 <= answer.status < 300:
            raise _refused(self.via, f"it answered {answer.status} {answer.reason}".rstrip())


def _refused(via: proxy.Proxy, why: str) -> Unreachable:
    where = f"the proxy {via.host}:{via.port} ({via.variable})"
    return Unreachable("proxy: could not reach", f"through {where}: {why}")


def _ascii(host: str) -> str:
    """The host as DNS and the Host header spell it: an IDN in its xn-- form, encoded as
    web-fetch's URLs are (ikigai_web.net.urls.idn)."""
    if host.isascii():
        return host
    from ikigai_web.net.urls import idn  # only for an IDN: ipaddress is not needed otherwise

    return idn(host)


def dial(
    host: str, port: int, deadline: Deadline, addresses: list[str] | None = None
) -> DeadlineSocket:
    """A connected socket to the first of `host`'s addresses (looked up unless given) that
    answers."""
    refused: OSError | None = None
    if addresses is None:
        addresses = resolve(host, port, deadline.left(CONNECT_TIMEOUT))
    for address in addresses:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = DeadlineSocket(family, socket.SOCK_STREAM)
        sock.deadline = deadline
        try:
            sock.settimeout(deadline.left(CONNECT_TIMEOUT))
            sock.connect((address, port))
        except OSError as exc:
            sock.close()
            if isinstance(exc, TimeoutError):
                raise
            refused = exc  # the next address may answer, as socket.create_connection does
            continue
        return sock
    assert refused is not None  # resolve returns at least one address
    raise refused


class DeadlineSocket(socket.socket):
    """A socket whose every read and write waits at most until the deadline."""

    deadline: Deadline | None = None

    def recv_into(self, buffer: Any, nbytes: int = 0, flags: int = 0) -> int:
        _bound(self, self.deadline)
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        _bound(self, self.deadline)
        super().sendall(data, flags)


class TLSSocket(ssl.SSLSocket):
    """As DeadlineSocket, over TLS (the context makes its sockets of this class)."""

    deadline: Deadline | None = None

    def recv_into(self, buffer: Any, nbytes: int | None = None, flags: int = 0) -> int:
        _bound(self, self.deadline)
        return super().recv_into(buffer, nbytes, flags)

    def sendall(self, data: Any, flags: int = 0) -> None:
        _bound(self, self.deadline)
        super().sendall(data, flags)


def _bound(sock: socket.socket, deadline: Deadline | None) -> None:
    if deadline is not None:
        sock.settimeout(deadline.left(None))
