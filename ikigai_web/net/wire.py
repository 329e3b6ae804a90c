"""The connection under every search: one request over http.client, bound to the deadline.

The standard library's client, because a search is a fresh process and importing httpx
alone would cost more than the rest of the call. Every socket wait (DNS, connect, TLS
handshake, each read and write) ends at the call's deadline, so a server that dribbles its
answer cannot outlast it. The environment's proxies are used as curl uses them
(ikigai_web.net.proxy).
"""

from __future__ import annotations

import http.client
import socket
import ssl
from typing import TYPE_CHECKING, Any
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

# http.client's own failures, and every socket and TLS error (OSError covers both).
FAILURES = (OSError, http.client.HTTPException, UnicodeError, ValueError)


def open_call(call: Call, deadline: Deadline) -> Opened:
    """Send `call` and read the status line and headers; the body is read as it is iterated."""
    connection: Connection | None = None
    parts = urlsplit(call.url)
    via = proxy.for_url(call.url)
    headers = dict(call.headers)
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if via is not None and parts.scheme != "https":
        target, headers = call.url, headers | via.headers  # a forward proxy takes the URL
    try:
        connection = Connection(parts.scheme, parts.hostname or "", parts.port, deadline, via)
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
        raise _refused(via, "it answered 407: check the user and password in it")
    headers = Headers.of(response.getheaders())
    return Opened(response.status, headers, _chunks(response), connection.close)


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

    def connect(self) -> None:
        plain = self._proxied() if self.via else dial(self.host, self.port, self.deadline)
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
        if not 200 <= answer.status < 300:
            raise _refused(self.via, f"it answered {answer.status} {answer.reason}".rstrip())


def _refused(via: proxy.Proxy, why: str) -> Unreachable:
    where = f"the proxy {via.host}:{via.port} ({via.variable})"
    return Unreachable("proxy: could not reach", f"through {where}: {why}")


def _ascii(host: str) -> str:
    """The host as DNS and the Host header spell it: an IDN in its xn-- form."""
    try:
        return host.encode("ascii").decode()
    except UnicodeError:
        return host.encode("idna").decode("ascii")


def dial(host: str, port: int, deadline: Deadline) -> DeadlineSocket:
    """A connected socket to the first of `host`'s addresses that answers."""
    refused: OSError | None = None
    for address in resolve(host, port, deadline.left(CONNECT_TIMEOUT)):
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
    """As DeadlineSocket, over TLS (the context makes its sockets of this class). Without a
    deadline it is a plain SSLSocket, so the shared context stays right for web-fetch's
    httpx connections too."""

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
