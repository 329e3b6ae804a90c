"""The HTTP layer of every tool: requests bound to the call's deadline, bounded bodies,
retries, redirects and their origin rules, logins from URLs, and the one place where a failed
connection becomes NETWORK_ERROR. The search tools use its Client; web-fetch's Session
(ikigai_web.fetch.network.session) walks its hops itself, through the guard, on the same parts.

A call is a fresh process, so what it imports is most of what it costs: this layer uses only
the standard library (the connection itself is `ikigai_web.net.wire`, on http.client), which
keeps a search within a small factor of a bare urllib client.

The deadline is enforced on the socket: every connect, read and write waits at most until
the call's end, so a server that dribbles its answer a byte at a time cannot keep a call
alive past `IKIGAI_WEB_TIMEOUT`. Bodies are read as they stream and decompressed in bounded
pieces, so neither an endless body nor a compression bomb can fill memory.

Imported only on a call's path, never by `--schema`.
"""

from __future__ import annotations

import math
import os
import re
import socket
import ssl
import time
import zlib
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple, Self
from urllib.parse import unquote, urlencode, urljoin, urlsplit, urlunsplit

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import basic_token, excerpt, redact, register_secret
from ikigai_web.common.text import decode, header_charset, lazy, seconds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from types import TracebackType
    from typing import Protocol

    from ikigai_web.common.settings import Settings

    class Headed(Protocol):
        """Anything with an answer's headers: a Reply, or an Opened answer."""

        @property
        def headers(self) -> Mapping[str, str]: ...


CONNECT_TIMEOUT = 5.0
SHORT_WAIT = 2.0  # a 429 asking for at most this long is retried once
MAX_BODY = 4 * 1024 * 1024  # decoded bytes of a provider answer: a page of results is kBs
MAX_REDIRECTS = 5  # as web-fetch: an http -> https and a trailing-slash hop need two
REDIRECTS = frozenset({301, 302, 303, 307, 308})
CHUNK = 64 * 1024
_JITTER = (0.2, 0.6)


class Deadline:
    """The whole call's time budget, shared by every request it makes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    @classmethod
    def of_call(cls, seconds: float) -> Deadline:
        """The whole call's deadline, starting now: its watchdog is set by it (see
        common/watch.py)."""
        from ikigai_web.common.watch import call_deadline

        call_deadline(seconds)
        return cls(seconds)

    def copy(self) -> Deadline:
        """The same deadline as a separate object, whose end may be moved earlier for a while."""
        twin = Deadline(self.seconds)
        twin.end = self.end
        return twin

    def left(self, timeout: float | None) -> float:
        """`timeout` cut to what remains; a read or connect after the end times out at once."""
        remaining = self.end - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("the call's deadline passed")
        return remaining if timeout is None else min(timeout, remaining)

    def expired_error(self, host: str) -> ToolError:
        return ToolError(
            ErrorCode.NETWORK_ERROR,
            f"timeout: {host} did not answer within the {seconds(self.seconds)} deadline "
            "(IKIGAI_WEB_TIMEOUT); try again later",
        )


def resolve(host: str, port: int, wait: float) -> list[str]:
    """The addresses of `host`, looked up in a daemon thread given at most `wait` seconds
    (libc's resolver takes no timeout: a resolver that never answers would otherwise hold
    the call until the host gives up).

    A failure is Unresolved, so messages name DNS as the cause; running out of time is
    DNSTimeout.
    """
    import threading

    box: list[list[str] | Exception] = []
    # An ASCII name as bytes: a str would be run through the idna codec, whose import
    # (stringprep, unicodedata) costs a search more than the lookup itself.
    name = host.encode() if host.isascii() else host

    def lookup() -> None:
        try:
            infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
            box.append(list(dict.fromkeys(str(info[4][0]) for info in infos)))
        except (OSError, UnicodeError) as exc:  # UnicodeError: a name IDNA cannot encode
            box.append(exc)

    worker = threading.Thread(target=lookup, daemon=True)
    worker.start()
    worker.join(wait)
    if not box:
        raise DNSTimeout(f"DNS: resolving {host} took longer than the deadline")
    found = box[0]
    if isinstance(found, Exception):
        raise Unresolved(f"could not resolve {host}: {found}")
    return found  # never empty: getaddrinfo raises rather than find nothing


class Unresolved(OSError):  # noqa: N818 - a DNS outcome, named as the message says it
    """DNS found no address for a host."""


class DNSTimeout(TimeoutError):  # noqa: N818 - a TimeoutError, caught as one
    """DNS did not answer within the deadline."""


@cache
def tls_context() -> ssl.SSLContext:
    """Verified TLS with certifi's CAs, or SSL_CERT_FILE / SSL_CERT_DIR when set (as httpx
    does, so every tool trusts the same authorities). Built at the first handshake only."""
    file, folder = os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR")
    if file or folder:
        try:
            return ssl.create_default_context(cafile=file or None, capath=folder or None)
        except (OSError, ValueError) as exc:  # ssl.SSLError is an OSError
            raise ToolError(
                ErrorCode.INVALID_INPUT,
                f"SSL_CERT_FILE / SSL_CERT_DIR name no usable CA certificates ({exc}); "
                "point them at a PEM bundle and a directory of certificates, or unset them",
            ) from None
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


def endpoint(variable: str, default: str) -> str:
    """A provider's endpoint, replaced by its override variable when set."""
    value = os.environ.get(variable, "").strip()
    return configured_url(value, variable, default) if value else default


def configured_url(value: str, name: str, example: str) -> str:
    """`value` when a request can be sent to it: an http(s) URL with a host, a valid port and
    no whitespace, controls or lone surrogates (bytes that are not UTF-8). Anything else is a
    setting error naming `name`, never a network failure or a crash later on."""
    from ikigai_web.common.redact import printable_url

    if not _sendable(value):
        raise ToolError(
            ErrorCode.INVALID_INPUT,
            f"the setting {name} is {printable_url(value)[:200]!r}: it must be an absolute "
            f"http(s) URL such as {example}. Fix or unset it.",
        )
    return value


def _sendable(value: str) -> bool:
    if _UNSENDABLE.search(value):
        return False
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:  # a bad port or an unclosed [IPv6 literal
        return False
    host = parts.hostname or ""
    usable = parts.scheme in ("http", "https") and port != 0
    return usable and (bool(_HOST.match(host)) or _ipv6(parts.netloc, host))


def _ipv6(netloc: str, host: str) -> bool:
    import ipaddress

    if f"[{host}]" not in netloc:
        return False
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).version == 6
    except ValueError:
        return False


# Spaces, controls and lone surrogates go into no request; a host name is letters (any
# script: an IDN), digits, dots, hyphens and underscores.
_UNSENDABLE = lazy("[\\s\x00-\x20\x7f\ud800-\udfff]")
_HOST = re.compile(r"^(?:[^\W]|[-.])+$")


class Headers(dict[str, str]):
    """An answer's headers by lower-case name; a repeated header's values joined by ", ".
    `pairs` keeps them as sent (a rendered page gets each Set-Cookie on its own)."""

    pairs: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, pairs: Iterable[tuple[str, str]]) -> Headers:
        out = cls()
        out.pairs = tuple(pairs)
        for name, value in out.pairs:
            key = name.lower()
            out[key] = f"{out[key]}, {value}" if key in out else value
        return out

    def get(self, name: str, default: Any = None) -> Any:
        return super().get(name.lower(), default)

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())


class Call(NamedTuple):
    """One request as a tool builds it: the URL has its query, the body is encoded."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    body: bytes = b""

    @property
    def host(self) -> str:
        try:
            return urlsplit(self.url).hostname or "the server"
        except ValueError:
            return "the server"


class Opened(NamedTuple):
    """An answer whose body is still to be read: raw (still encoded) pieces as they come."""

    status: int
    headers: Headers
    chunks: Iterator[bytes]
    close: Callable[[], None]
    reason: str = ""  # the status line's words, or the standard ones when it has none


if TYPE_CHECKING:
    # What sends a Call and reads the answer's head: ikigai_web.net.wire.open_call.
    Opener = Callable[[Call, Deadline], Opened]


class Unreachable(Exception):  # noqa: N818 - a state of the connection, reported by send
    """No answer: the connection failed before or while the answer came. `kind` starts the
    message ("DNS: could not resolve", "timeout: waiting for", ...)."""

    def __init__(self, kind: str, detail: str = "", *, timed_out: bool = False) -> None:
        super().__init__(kind)
        self.kind = kind
        self.detail = detail
        self.timed_out = timed_out


def _login(url: str) -> tuple[str, dict[str, str]]:
    """`url` without its user-info, which becomes HTTP Basic auth as a browser sends it."""
    login = Login.of(url)
    if login is None:
        return url, {}
    register_secret(login.user)  # a provider that echoes its request shows *** instead
    parts = urlsplit(url)
    place = parts.netloc.rpartition("@")[2]
    return urlunsplit(parts._replace(netloc=place)), {"Authorization": login.authorization}


class Login(NamedTuple):
    """HTTP Basic credentials from a URL's user-info, bound to that URL's origin (scheme,
    host, port), as a browser sends them: never to another origin, whatever redirects."""

    user: str
    authorization: str
    origin: tuple[str, str, int] | None

    @classmethod
    def of(cls, url: str) -> Login | None:
        """The login `url` carries, or None; its password and token are masked from now."""
        parts = urlsplit(url)
        userinfo, at, place = parts.netloc.rpartition("@")
        if not at:
            return None
        user, _, password = userinfo.partition(":")
        token = basic_token(user, password)
        for secret in (unquote(password), password, token):
            register_secret(secret)  # a server that echoes its request shows *** instead
        return cls(unquote(user), f"Basic {token}", _bound(parts._replace(netloc=place)))

    def headers(self, url: str) -> dict[str, str]:
        """The Authorization header for a request to `url` (in normal form), if it is due."""
        from ikigai_web.net.urls import origin

        return {"Authorization": self.authorization} if origin(url) == self.origin else {}


def _bound(parts: Any) -> tuple[str, str, int] | None:
    """The origin a login is bound to, the host as requests name it; None when unusable."""
    from ikigai_web.net.urls import normal, origin

    try:
        return origin(normal(urlunsplit(parts)))
    except ValueError:
        return None


class Connectionless:
    """What a `with` block needs of a client whose every request has its own connection,
    closed with its answer: nothing to open or close (the search tools' Client, web-fetch's
    Session)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        return


class Client(Connectionless):
    """The HTTP side of one call: default headers, its deadline, whether it follows redirects."""

    def __init__(
        self,
        deadline: Deadline,
        headers: Mapping[str, str],
        opener: Opener,
        *,
        follow_redirects: bool = False,
    ) -> None:
        self.deadline = deadline
        self.headers = dict(headers)
        self.opener = opener
        self.follow_redirects = follow_redirects

    def build_request(
        self,
        method: str,
        url: str,
        *,
        params: Mapping[str, str | int] | None = None,
        data: Mapping[str, str] | None = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Call:
        """A request to `url` with the query `params` and a form (`data`) or JSON body."""
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        url, extra = _login(url)
        extra |= headers or {}
        body = b""
        if data is not None:
            body = urlencode(data).encode()
            extra["Content-Type"] = "application/x-www-form-urlencoded"
        elif json is not None:
            import json as stdlib_json

            body = stdlib_json.dumps(json, ensure_ascii=False, allow_nan=False).encode()
            extra["Content-Type"] = "application/json"
        merged = {k.lower(): (k, v) for k, v in (self.headers | extra).items()}
        return Call(method, url, tuple(merged.values()), body)

    def open(self, call: Call) -> Opened:
        """One request, no redirect followed: the answer with its body still unread."""
        return self.opener(call, self.deadline)

    def exchange(self, call: Call, cap: int = MAX_BODY) -> Reply:
        """The answer and its whole body, after redirects when this client follows them."""
        for _ in range(MAX_REDIRECTS + 1):
            reply = self.read(call, cap)
            target = reply.headers.get("location")
            if not self.follow_redirects or reply.status not in REDIRECTS or target is None:
                return reply
            call = redirected(call, reply.status, target)
        raise TooManyRedirects

    def read(self, call: Call, cap: int) -> Reply:
        """One request and its whole body, read within the deadline and `cap` decoded bytes."""
        opened = self.open(call)
        try:
            body = read_body(opened, cap, call.host, self.deadline)
        except Overflow:
            raise ToolError(
                ErrorCode.API_ERROR,
                f"{call.host} answered with a body larger than {cap:,} bytes, which no search "
                "answer needs; the endpoint is misbehaving, try again later",
            ) from None
        except Undecodable as exc:
            message = f"{call.host} answered with a body that could not be decoded ({exc}); "
            raise ToolError(ErrorCode.API_ERROR, message + "try again") from None
        finally:
            opened.close()
        headers = opened.headers
        if (where := usable_location(call.url, headers.get("location"))) is not None:
            headers["location"] = where
        else:
            headers.pop("location", None)
        return Reply(opened.status, headers, bytes(body), call.host)


class TooManyRedirects(Exception):  # noqa: N818 - a state of the exchange, reported by send
    """More than MAX_REDIRECTS redirects in a row."""


def usable_location(url: str, location: str | None) -> str | None:
    """A redirect's Location as an absolute http(s) URL with a host, or None.

    An answer whose Location is anything else is an answer, unusably: its 3xx is what the
    caller sees.
    """
    if location is None:
        return None
    try:
        target = urljoin(url, location.strip())
        parts = urlsplit(target)
    except ValueError:
        return None
    return target if parts.scheme in ("http", "https") and parts.hostname else None


def redirected(call: Call, status: int, location: str) -> Call:
    """The request a redirect asks for, as browsers make it: a 303 (and a 301 or 302 after a
    POST) becomes a GET without a body; credentials never go to another origin."""
    method, body, headers = call.method, call.body, call.headers
    if status == 303 or (status in (301, 302) and method == "POST"):
        method = "GET" if method != "HEAD" else method
        body = b""
        headers = tuple(h for h in headers if h[0].lower() != "content-type")
    if _origin(location) != _origin(call.url) and not _upgrade(call.url, location):
        headers = tuple(h for h in headers if h[0].lower() not in ("authorization", "cookie"))
    return Call(method, location, headers, body)


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, (parts.hostname or "").lower(), port


def _upgrade(old: str, new: str) -> bool:
    """http -> https on the same host and default ports, which keeps credentials (as httpx)."""
    before, after = _origin(old), _origin(new)
    same_host = before[1] == after[1]
    return same_host and before[0] == "http" and after[0] == "https" and after[2] == 443


class Reply(NamedTuple):
    """A provider's whole answer, read within the deadline and the size cap."""

    status: int
    headers: Headers
    body: bytes
    host: str

    @property
    def text(self) -> str:
        from ikigai_web.common.text import encodable

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
            shown = excerpt(body_words(self))
            what = f"a body that is not JSON: {shown!r}" if shown else _nothing(self)
            message = f"{provider} answered HTTP {self.status} with {what}; try again later"
            raise ToolError(ErrorCode.API_ERROR, message) from None


def loads(data: bytes | str) -> Any:
    """JSON as a provider sends it: NaN, Infinity and out-of-range numbers become null
    instead of rejecting the whole answer. ValueError when it is not JSON at all."""
    import json

    text = data if isinstance(data, str) else decode(data)
    try:
        return json.loads(text, parse_constant=_nothing_number, parse_float=_finite)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _nothing_number(_: str) -> None:
    return None


def _finite(text: str) -> float | None:
    number = float(text)
    return number if number - number == 0 else None  # inf - inf is nan


def body_words(reply: Reply, most: int = 300) -> str:
    """What an answer's body says, for a message: an HTML page's title or text, else the
    text itself; "" when there is nothing to read."""
    from ikigai_web.common.text import html_words

    text = reply.text
    kind = reply.headers.get("content-type", "").lower()
    if "html" in kind or text.lstrip()[:1] == "<":
        text = html_words(text)
    return excerpt(text, most)


def answer_summary(provider: str, reply: Reply, detail: str = "") -> str:
    """`<provider> answered HTTP <status>`, with the provider's own words or the fact that
    it gave none: the one way every tool reports an answer it cannot use."""
    # The caller ends the sentence: a provider's own final period would double it.
    detail = (detail or body_words(reply)).rstrip(". ")
    if detail:
        return f"{provider} answered HTTP {reply.status}: {detail}"
    return f"{provider} answered HTTP {reply.status} with {_nothing(reply)}"


def _nothing(reply: Reply) -> str:
    return "an empty body" if not reply.body.strip() else "a body that says nothing readable"


def client(
    settings: Settings,
    deadline: Deadline,
    opener: Opener,
    *,
    user_agent: str | None = None,
    headers: Mapping[str, str] | None = None,
    follow_redirects: bool = False,
) -> Client:
    """The HTTP client of one call: its requests end with `deadline`, and go out through
    `opener` (`ikigai_web.net.wire.open_call`; tests give one pytest-httpx can answer)."""
    defaults = {"User-Agent": user_agent or settings.user_agent, "Accept-Encoding": "gzip"}
    headers = defaults | dict(headers or {})
    return Client(deadline, headers, opener, follow_redirects=follow_redirects)


def send(
    http: Client,
    request: Call,
    deadline: Deadline,
    wait_hint: Callable[[Reply], int | None] | None = None,
    cap: int = MAX_BODY,
) -> Reply:
    """Send with bounded retries: a connection error or 5xx once, a 429 once if it asks <= 2 s."""
    for attempt in range(2):
        final = attempt == 1
        try:
            reply = http.exchange(request, cap)
        except TooManyRedirects:
            message = f"{request.host} redirected more than {MAX_REDIRECTS} times (a redirect "
            raise ToolError(
                ErrorCode.API_ERROR, message + "loop?); check the endpoint URL"
            ) from None
        except Unreachable as exc:
            if exc.timed_out or final or not _pause(_jitter(), deadline):
                raise network_error(exc, request.host, deadline) from None
            continue
        if final or not _pause(_retry_wait(reply, wait_hint or retry_after), deadline):
            return reply
    raise AssertionError("unreachable")  # pragma: no cover


class Overflow(Exception):  # noqa: N818 - a state of the body, reported by the caller
    """The decoded body is larger than the cap."""


class Undecodable(Exception):  # noqa: N818 - as Overflow
    """The body's Content-Encoding is unknown or its compressed data is corrupt."""

    def __init__(self, message: str, *, unsupported: bool = False) -> None:
        super().__init__(message)
        self.unsupported = unsupported


def read_body(
    opened: Opened, cap: int, host: str, deadline: Deadline, *, strict: bool = True
) -> bytearray:
    """The decoded body; past `cap` bytes Overflow (strict) or just the first `cap` bytes."""
    inflater = Inflater(opened.headers.get("content-encoding", ""))
    out = bytearray()
    for raw in opened.chunks:
        if deadline.remaining() <= 0:
            raise deadline.expired_error(host)
        for piece in inflater.feed(raw):
            if len(out) + len(piece) > cap:
                if strict:
                    raise Overflow
                out += piece[: cap - len(out)]
                return out
            out += piece
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


# The most a page's `Retry-After` is told to the model (web-fetch holds nothing by it).
SITE_RETRY_MOST = 86_400.0


def retry_after(reply: Headed, most: float | None = None) -> int | None:
    """Seconds from a `Retry-After` header (seconds or an HTTP date), if any, at most `most`
    (default RETRY_WINDOW, an hour: ikigai_web/common/providers.py says why): a provider, or
    whatever stands in front of it, cannot lock a key away for longer with one header."""
    if most is None:
        from ikigai_web.common.providers import RETRY_WINDOW

        most = RETRY_WINDOW
    value = reply.headers.get("retry-after", "").strip()
    found = delay_seconds(value, most, epoch=False)
    if found is not None or not value:
        return found
    import email.utils  # only an HTTP-date needs it

    try:
        when = email.utils.parsedate_to_datetime(value[:64]).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    return _within(when - time.time(), most)


# A count of seconds this large is a time (Unix seconds: 2001 on), not a delay of 31 years.
EPOCH_FROM = 1_000_000_000
_MOST_DIGITS = 12  # more are read as "very long": only the bound matters then


def delay_seconds(text: str, most: float, *, epoch: bool = True) -> int | None:
    """A header's count of seconds (ASCII digits only), at most `most`; with `epoch`, a
    count from EPOCH_FROM on is a Unix time, and the seconds until it. None when `text` is
    no such count (a sign, a fraction, an exponent, other digits than 0-9, nothing)."""
    if not (text.isascii() and text.isdigit()):
        return None
    digits = text.lstrip("0") or "0"
    if len(digits) > _MOST_DIGITS:
        return _within(math.inf, most)
    value = int(digits)
    if epoch and value >= EPOCH_FROM:
        return _within(value - time.time(), most)
    return _within(value, most)


def _within(seconds: float, most: float) -> int:
    """`seconds` as whole seconds from 0 to `most` (NaN is 0: nothing to wait for)."""
    if math.isnan(seconds):
        return 0
    return math.ceil(min(max(seconds, 0.0), most))


def network_error(exc: Unreachable, host: str, deadline: Deadline | None = None) -> ToolError:
    """NETWORK_ERROR saying which kind: DNS, connect, TLS, timeout or reset. No query strings."""
    if exc.timed_out and deadline is not None and deadline.remaining() < 0.05:
        return deadline.expired_error(host)
    if exc.timed_out:
        return ToolError(ErrorCode.NETWORK_ERROR, f"{exc.kind} {host} took too long")
    detail = f": {exc.detail}" if exc.detail else ""
    return ToolError(ErrorCode.NETWORK_ERROR, redact(f"{exc.kind} {host}{detail}"))


def unreachable(exc: BaseException, *, connecting: bool = False) -> Unreachable:
    """What a low-level failure (its chain of causes) says about the connection."""
    chain = _chain(exc)
    if any(isinstance(e, TimeoutError) for e in chain):
        dns = any(isinstance(e, DNSTimeout) for e in chain)
        phase = "connecting to" if connecting or dns else "waiting for"
        return Unreachable(f"timeout: {phase}", timed_out=True)
    if any(isinstance(e, socket.gaierror | Unresolved) for e in chain):
        detail = "no such host, or no DNS; check the name and network"
        return Unreachable("DNS: could not resolve", detail)
    if any(isinstance(e, ssl.SSLError | ssl.CertificateError) for e in chain):
        return Unreachable("TLS: secure connection failed with", _said(exc, "handshake error"))
    if any(isinstance(e, ConnectionResetError | BrokenPipeError) for e in chain):
        return Unreachable("reset: connection reset by", "try again")
    if connecting:
        return Unreachable("connect: could not connect to", _said(exc, "connection refused"))
    return Unreachable("reset: connection dropped by", _said(exc, "the connection broke"))


def _said(exc: BaseException, otherwise: str) -> str:
    return str(exc) or otherwise


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen
