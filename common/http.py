"""The HTTP layer of every tool: a client bound to the call's deadline, bounded bodies,
retries, and the one place where httpx errors become NETWORK_ERROR.

The deadline is enforced on the socket: every connect, read and write waits at most until
the call's end, so a server that dribbles its answer a byte at a time cannot keep a call
alive past `IKIGAI_WEB_TIMEOUT`. Bodies are read as they stream and decompressed in bounded
pieces, so neither an endless body nor a compression bomb can fill memory.

Imported only on a call's path (it imports httpx), never by `--schema`.
"""

from __future__ import annotations

import os
import re
import socket
import ssl
import sys
import time
import zlib
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

# httpx imports its command-line client on import, and with it click and pygments whenever
# they happen to be installed (the MCP SDK brings them): a sixth of a search's start-up for a
# program no tool runs. A None entry makes that import fail, and httpx then goes without.
sys.modules.setdefault("httpx._main", None)  # type: ignore[arg-type]

import httpcore  # noqa: E402 - after the guard above
import httpx  # noqa: E402 - after the guard above

from common.errors import ErrorCode, ToolError  # noqa: E402 - after the guard above
from common.redact import excerpt, redact  # noqa: E402 - after the guard above
from common.text import decode, header_charset  # noqa: E402 - after the guard above

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    from common.settings import Settings

CONNECT_TIMEOUT = 5.0
SHORT_WAIT = 2.0  # a 429 asking for at most this long is retried once
MAX_BODY = 4 * 1024 * 1024  # decoded bytes of a provider answer: a page of results is kBs
MAX_REDIRECTS = 5  # as web-fetch: an http -> https and a trailing-slash hop need two
CHUNK = 64 * 1024
_JITTER = (0.2, 0.6)


class Deadline:
    """The whole call's time budget, shared by every request it makes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def copy(self) -> Deadline:
        """The same deadline as a separate object, whose end may be moved earlier for a while."""
        twin = Deadline(self.seconds)
        twin.end = self.end
        return twin

    def left(self, timeout: float | None) -> float:
        """`timeout` cut to what remains; a read or connect after the end times out at once."""
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise httpcore.ReadTimeout("the call's deadline passed")
        return remaining if timeout is None else min(timeout, remaining)

    def timeout(self) -> httpx.Timeout:
        left = max(self.remaining(), 0.001)
        return httpx.Timeout(left, connect=min(CONNECT_TIMEOUT, left))

    def expired_error(self, host: str) -> ToolError:
        return ToolError(
            ErrorCode.NETWORK_ERROR,
            f"timeout: {host} did not answer within the {self.seconds:g} s deadline "
            "(IKIGAI_WEB_TIMEOUT); try again later",
        )


class DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every wait is cut short at the deadline."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: Deadline) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._deadline.left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        del ssl_context  # the pool's is a placeholder: see DeadlineTransport
        tls = self._inner.start_tls(tls_context(), server_hostname, self._deadline.left(timeout))
        return DeadlineStream(tls, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.SyncBackend):
    """Opens connections whose every wait ends with the call's deadline, the DNS lookup
    included (libc's resolver takes no timeout: a resolver that never answers would hold
    the call until the host gives up)."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        refused: httpcore.ConnectError | None = None
        for address in resolve(host, port, self.deadline.left(timeout)):
            left = self.deadline.left(timeout)
            try:
                stream = super().connect_tcp(address, port, left, local_address, socket_options)
            except httpcore.ConnectError as exc:
                refused = exc  # the next address may answer, as socket.create_connection does
                continue
            return DeadlineStream(stream, self.deadline)
        assert refused is not None  # resolve returns at least one address
        raise refused


def resolve(host: str, port: int, wait: float) -> list[str]:
    """The addresses of `host`, looked up in a daemon thread given at most `wait` seconds.

    A failure is UnresolvedError, so messages name DNS as the cause; running out of time is
    a ConnectTimeout.
    """
    import threading

    box: list[list[str] | OSError] = []

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            box.append(list(dict.fromkeys(str(info[4][0]) for info in infos)))
        except OSError as exc:
            box.append(exc)

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(wait)
    if not box:
        raise httpcore.ConnectTimeout(f"DNS: resolving {host} took longer than the deadline")
    found = box[0]
    if isinstance(found, OSError):
        raise UnresolvedError(f"could not resolve {host}: {found}")
    return found  # never empty: getaddrinfo raises rather than find nothing


class UnresolvedError(httpcore.ConnectError):
    """DNS found no address. Its own type: httpcore's pool drops an error's cause."""


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's own transport over a pool that dials through `backend`.

    httpx would load the CA bundle for every client, a third of a search's start-up; the
    real TLS context is built at the first handshake instead (`tls_context`), so the pool is
    given a placeholder that is never used.
    """

    def __init__(self, backend: httpcore.SyncBackend) -> None:
        super().__init__(verify=_placeholder())
        self._pool = httpcore.ConnectionPool(
            ssl_context=_placeholder(), network_backend=backend, http1=True, http2=False
        )


def _placeholder() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


@cache
def tls_context() -> ssl.SSLContext:
    """The context httpx itself would build: certifi's CAs, or SSL_CERT_FILE / SSL_CERT_DIR."""
    return httpx.create_ssl_context()


def client(
    settings: Settings,
    deadline: Deadline,
    *,
    user_agent: str | None = None,
    transport: httpx.HTTPTransport | None = None,
    **kwargs: Any,
) -> httpx.Client:
    """The HTTP client of one call: its requests end with `deadline`."""
    headers = {"User-Agent": user_agent or settings.user_agent, "Accept-Encoding": "gzip"}
    headers |= kwargs.pop("headers", {})
    transport = transport or DeadlineTransport(DeadlineBackend(deadline))
    kwargs.setdefault("event_hooks", {"response": [drop_unusable_location]})
    kwargs.setdefault("max_redirects", MAX_REDIRECTS)
    return httpx.Client(headers=headers, timeout=deadline.timeout(), transport=transport, **kwargs)


def drop_unusable_location(response: httpx.Response) -> None:
    """A redirect's Location that is no http(s) URL is removed, so the 3xx is the answer.

    httpx reads Location on every 3xx, followed or not, and fails on a malformed one as if
    the connection had broken; a provider that sends one has answered, unusably.
    """
    location = response.headers.get("location")
    if location is None:
        return
    try:
        target = response.url.join(location)
    except httpx.InvalidURL:
        target = None
    if target is None or target.scheme not in ("http", "https") or not target.host:
        del response.headers["location"]


def endpoint(variable: str, default: str) -> str:
    """A provider's endpoint, replaced by its override variable when set."""
    value = os.environ.get(variable, "").strip()
    return configured_url(value, variable, default) if value else default


def configured_url(value: str, name: str, example: str) -> str:
    """`value` when httpx can send a request to it: an http(s) URL with a host, a valid port
    and no whitespace, controls or lone surrogates (bytes that are not UTF-8). Anything else
    is a setting error naming `name`, never a network failure or a crash later on."""
    from common.redact import printable_url

    try:
        url = httpx.URL(value)
        usable = url.scheme in ("http", "https") and bool(url.host)
        usable = usable and not _UNSENDABLE.search(value)
        usable = usable and (url.port is None or 0 < url.port < 1 << 16)
    except (httpx.InvalidURL, ValueError, TypeError):
        usable = False
    if not usable:
        raise ToolError(
            ErrorCode.INVALID_INPUT,
            f"the setting {name} is {printable_url(value)[:200]!r}: it must be an absolute "
            f"http(s) URL such as {example}. Fix or unset it.",
        )
    return value


# Spaces, controls and lone surrogates go into no request.
_UNSENDABLE = re.compile("[\\s\x00-\x20\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class Reply:
    """A provider's whole answer, read within the deadline and the size cap."""

    status: int
    headers: httpx.Headers
    body: bytes
    host: str

    @property
    def text(self) -> str:
        from common.text import encodable

        return encodable(decode(self.body, header_charset(self.headers.get("content-type"))))

    def data(self) -> Any:
        """The body's JSON, or None when it is none (an error page, an empty body)."""
        try:
            return loads(self.body)
        except ValueError:
            return None

    def json(self, provider: str) -> Any:
        """The body's JSON, or API_ERROR naming the status when the body is not JSON."""
        try:
            return loads(self.body)
        except ValueError:
            shown = excerpt(words(self))
            what = f"a body that is not JSON: {shown!r}" if shown else _nothing(self)
            message = f"{provider} answered HTTP {self.status} with {what}; try again later"
            raise ToolError(ErrorCode.API_ERROR, message) from None


def loads(data: bytes | str) -> Any:
    """JSON as a provider sends it: NaN, Infinity and out-of-range numbers become null
    instead of rejecting the whole answer. ValueError when it is not JSON at all."""
    import orjson

    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    import json
    import math

    text = data if isinstance(data, str) else decode(data)
    try:
        return json.loads(
            text,
            parse_constant=lambda _: None,
            parse_float=lambda s: float(s) if math.isfinite(float(s)) else None,
        )
    except RecursionError:
        raise ValueError("nested too deeply") from None


def words(reply: Reply, most: int = 300) -> str:
    """What an answer's body says, for a message: an HTML page's title or text, else the
    text itself; "" when there is nothing to read."""
    from common.text import html_words

    text = reply.text
    kind = reply.headers.get("content-type", "").lower()
    if "html" in kind or text.lstrip()[:1] == "<":
        text = html_words(text)
    return excerpt(text, most)


def said(provider: str, reply: Reply, detail: str = "") -> str:
    """`<provider> answered HTTP <status>`, with the provider's own words or the fact that
    it gave none: the one way every tool reports an answer it cannot use."""
    # The caller ends the sentence: a provider's own final period would double it.
    detail = (detail or words(reply)).rstrip(". ")
    if detail:
        return f"{provider} answered HTTP {reply.status}: {detail}"
    return f"{provider} answered HTTP {reply.status} with {_nothing(reply)}"


def _nothing(reply: Reply) -> str:
    return "an empty body" if not reply.body.strip() else "a body that says nothing readable"


def send(
    http: httpx.Client,
    request: httpx.Request,
    deadline: Deadline,
    wait_hint: Callable[[Reply], int | None] | None = None,
    cap: int = MAX_BODY,
) -> Reply:
    """Send with bounded retries: a connection error or 5xx once, a 429 once if it asks <= 2 s."""
    for attempt in range(2):
        final = attempt == 1
        request.extensions["timeout"] = deadline.timeout().as_dict()
        try:
            reply = exchange(http, request, deadline, cap)
        except httpx.TimeoutException as exc:
            raise network_error(exc, deadline) from None
        except httpx.TooManyRedirects:
            host = request.url.host or "the server"
            message = f"{host} redirected more than {MAX_REDIRECTS} times (a redirect loop?); "
            raise ToolError(ErrorCode.API_ERROR, message + "check the endpoint URL") from None
        except httpx.TransportError as exc:
            if final or not _pause(_jitter(), deadline):
                raise network_error(exc, deadline) from None
            continue
        if final or not _pause(_retry_wait(reply, wait_hint or retry_after), deadline):
            return reply
    raise AssertionError("unreachable")  # pragma: no cover


def exchange(http: httpx.Client, request: httpx.Request, deadline: Deadline, cap: int) -> Reply:
    """One request and its whole body, read within the deadline and `cap` decoded bytes."""
    host = request.url.host or "the server"
    response = http.send(request, stream=True)
    try:
        body = read_body(response, cap, deadline)
    except Overflow:
        raise ToolError(
            ErrorCode.API_ERROR,
            f"{host} answered with a body larger than {cap:,} bytes, which no search answer "
            "needs; the endpoint is misbehaving, try again later",
        ) from None
    except Undecodable as exc:
        message = f"{host} answered with a body that could not be decoded ({exc}); try again"
        raise ToolError(ErrorCode.API_ERROR, message) from None
    finally:
        response.close()
    return Reply(response.status_code, response.headers, bytes(body), host)


class Overflow(Exception):  # noqa: N818 - a state of the body, reported by the caller
    """The decoded body is larger than the cap."""


class Undecodable(Exception):  # noqa: N818 - as Overflow
    """The body's Content-Encoding is unknown or its compressed data is corrupt."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


def read_body(
    response: httpx.Response, cap: int, deadline: Deadline, *, strict: bool = True
) -> bytearray:
    """The decoded body; past `cap` bytes Overflow (strict) or just the first `cap` bytes."""
    inflater = Inflater(response.headers.get("content-encoding", ""))
    out = bytearray()
    try:
        for raw in response.iter_raw(CHUNK):
            if deadline.remaining() <= 0:
                raise deadline.expired_error(response.url.host)
            for piece in inflater.feed(raw):
                if len(out) + len(piece) > cap:
                    if strict:
                        raise Overflow
                    out += piece[: cap - len(out)]
                    return out
                out += piece
    except httpx.HTTPError as exc:
        raise network_error(exc, deadline) from None
    return out


class Inflater:
    """Content-Encoding decoding in bounded pieces, so a small bomb never inflates at once."""

    def __init__(self, encoding: str) -> None:
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise Undecodable(
                f"Content-Encoding {encoding!r}; only gzip and deflate are asked for",
                unsupported=True,
            )
        self.coding = codings[0] if codings else None
        self.raw = False
        self.zlib = self._new() if self.coding else None

    def _new(self) -> zlib._Decompress:
        return zlib.decompressobj(15 if self.coding == "deflate" else 31)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if self.zlib is None:
            yield data
            return
        try:
            yield from self._inflate(data)
        except zlib.error as exc:
            raise Undecodable(f"its {self.coding} data is corrupt: {exc}") from None

    def _inflate(self, data: bytes) -> Iterator[bytes]:
        while data and self.zlib is not None:
            try:
                piece = self.zlib.decompress(data, CHUNK)
            except zlib.error:
                if self.coding != "deflate" or self.raw:
                    raise
                self.raw = True  # deflate is meant to be zlib-wrapped; some servers send it raw
                self.zlib = zlib.decompressobj(-15)
                continue
            yield piece
            data = self.zlib.unconsumed_tail
            if self.zlib.eof:
                data = self.zlib.unused_data  # gzip allows several members back to back
                self.zlib = self._new() if data and self.coding != "deflate" else self.zlib
                data = data if self.coding != "deflate" else b""


def _retry_wait(reply: Reply, wait_hint: Callable[[Reply], int | None]) -> float | None:
    if reply.status >= 500:
        return _jitter()
    if reply.status == 429:
        wait = wait_hint(reply)
        return float(wait) if wait is not None and wait <= SHORT_WAIT else None
    return None


def _jitter() -> float:
    import random  # only a retry needs it

    return random.uniform(*_JITTER)  # noqa: S311 - jitter, not cryptography


def _pause(wait: float | None, deadline: Deadline) -> bool:
    """Sleep `wait` seconds if that leaves time for another try; False means don't retry."""
    if wait is None or wait + 1.0 > deadline.remaining():
        return False
    time.sleep(wait)
    return True


def retry_after(reply: Reply | httpx.Response) -> int | None:
    """Seconds from a `Retry-After` header (delta or HTTP date), if any."""
    value = reply.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return int(value)
    import email.utils  # only an HTTP-date needs it

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return max(0, round(when.timestamp() - time.time()))


def network_error(exc: httpx.HTTPError, deadline: Deadline | None = None) -> ToolError:
    """NETWORK_ERROR saying which kind: DNS, connect, TLS, timeout or reset. No query strings."""
    host = _host(exc)
    if isinstance(exc, httpx.TimeoutException):
        if deadline is not None and deadline.remaining() < 0.05:
            return deadline.expired_error(host)
        phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
        return ToolError(ErrorCode.NETWORK_ERROR, f"timeout: {phase} {host} took too long")
    kind, detail = _classify(exc)
    return ToolError(ErrorCode.NETWORK_ERROR, redact(f"{kind} {host}: {detail}"))


def _classify(exc: BaseException) -> tuple[str, str]:
    chain = _chain(exc)
    if any(isinstance(e, socket.gaierror | UnresolvedError) for e in chain):
        return "DNS: could not resolve", "no such host, or no DNS; check the name and network"
    if any(isinstance(e, ssl.SSLError) for e in chain):
        return "TLS: secure connection failed with", str(exc) or "certificate or handshake error"
    if any(isinstance(e, ConnectionResetError) for e in chain):
        return "reset: connection reset by", "try again"
    if isinstance(exc, httpx.ConnectError):
        return "connect: could not connect to", str(exc) or "connection refused"
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return "reset: connection dropped by", str(exc) or "the server closed the connection"
    return "network: request failed to", str(exc) or type(exc).__name__


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _host(exc: httpx.HTTPError) -> str:
    try:
        return exc.request.url.host or "the server"
    except RuntimeError:
        return "the server"
