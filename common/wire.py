"""The connection under every search: one request over http.client, bound to the deadline.

The standard library's client, because a search is a fresh process and importing httpx
alone would cost more than the rest of the call. Every socket wait (DNS, connect, TLS
handshake, each read and write) ends at the call's deadline, so a server that dribbles its
answer cannot outlast it. No environment proxies, as before with httpx under our transport.
"""

from __future__ import annotations

import http.client
import socket
import ssl
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from common.http import (
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
    try:
        parts = urlsplit(call.url)
        connection = Connection(parts.scheme, parts.hostname or "", parts.port, deadline)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        connection.request(call.method, target, call.body or None, dict(call.headers))
        response = connection.getresponse()
    except FAILURES as exc:
        connecting = connection is None or connection.sock is None
        if connection is not None:
            connection.close()
        raise unreachable(exc, connecting=connecting) from None
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
    """One connection to `host`, every wait of which ends at the deadline."""

    def __init__(self, scheme: str, host: str, port: int | None, deadline: Deadline) -> None:
        self.tls = scheme == "https"
        super().__init__(_ascii(host), port or (443 if self.tls else 80))
        self.deadline = deadline

    def connect(self) -> None:
        plain = dial(self.host, self.port, self.deadline)
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
