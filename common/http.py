"""The one HTTP client factory, the one place httpx errors become NETWORK_ERROR, and retries.

Imported only on a call's path (it imports httpx), never by `--schema`.
"""

from __future__ import annotations

import email.utils
import os
import random
import socket
import ssl
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import httpx

from common.errors import ErrorCode, ToolError
from common.redact import excerpt, redact

if TYPE_CHECKING:
    from common.settings import Settings

CONNECT_TIMEOUT = 5.0
SHORT_WAIT = 2.0  # a 429 asking for at most this long is retried once
_JITTER = (0.2, 0.6)

WaitHint = Callable[[httpx.Response], int | None]


class Deadline:
    """The whole call's time budget, shared by every request it makes."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def remaining(self) -> float:
        return max(0.0, self.end - time.monotonic())

    def timeout(self) -> httpx.Timeout:
        left = max(self.remaining(), 0.001)
        return httpx.Timeout(left, connect=min(CONNECT_TIMEOUT, left))

    def expired_error(self, host: str) -> ToolError:
        return ToolError(
            ErrorCode.NETWORK_ERROR,
            f"timeout: {host} did not answer within the {self.seconds:g} s deadline "
            "(IKIGAI_WEB_TIMEOUT); try again later",
        )


def endpoint(variable: str, default: str) -> str:
    """A provider's endpoint, replaced by its override variable when set."""
    return os.environ.get(variable, "").strip() or default


def client(settings: Settings, *, user_agent: str | None = None, **kwargs: Any) -> httpx.Client:
    headers = {"User-Agent": user_agent or settings.user_agent, "Accept-Encoding": "gzip"}
    headers |= kwargs.pop("headers", {})
    timeout = httpx.Timeout(settings.timeout, connect=CONNECT_TIMEOUT)
    return httpx.Client(headers=headers, timeout=timeout, **kwargs)


def send(
    http: httpx.Client,
    request: httpx.Request,
    deadline: Deadline,
    wait_hint: WaitHint | None = None,
) -> httpx.Response:
    """Send with bounded retries: a connection error or 5xx once, a 429 once if it asks <= 2 s."""
    for attempt in range(2):
        final = attempt == 1
        request.extensions["timeout"] = deadline.timeout().as_dict()
        try:
            response = http.send(request)
        except httpx.TimeoutException as exc:
            raise network_error(exc, deadline) from None
        except httpx.DecodingError as exc:
            host = request.url.host or "the server"
            message = f"{host} answered with a body that could not be decoded ({exc}); try again"
            raise ToolError(ErrorCode.API_ERROR, message) from None
        except httpx.TransportError as exc:
            if final or not _pause(_jitter(), deadline):
                raise network_error(exc, deadline) from None
            continue
        if final or not _pause(_retry_wait(response, wait_hint or retry_after), deadline):
            return response
        response.close()
    raise AssertionError("unreachable")  # pragma: no cover


def _retry_wait(response: httpx.Response, wait_hint: WaitHint) -> float | None:
    if response.status_code >= 500:
        return _jitter()
    if response.status_code == 429:
        wait = wait_hint(response)
        return float(wait) if wait is not None and wait <= SHORT_WAIT else None
    return None


def _jitter() -> float:
    return random.uniform(*_JITTER)  # noqa: S311 - jitter, not cryptography


def _pause(wait: float | None, deadline: Deadline) -> bool:
    """Sleep `wait` seconds if that leaves time for another try; False means don't retry."""
    if wait is None or wait + 1.0 > deadline.remaining():
        return False
    time.sleep(wait)
    return True


def retry_after(response: httpx.Response) -> int | None:
    """Seconds from a `Retry-After` header (delta or HTTP date), if any."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    if value.isdigit():
        return int(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
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
    if any(isinstance(e, socket.gaierror) for e in chain):
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


def json_body(response: httpx.Response, provider: str) -> Any:
    """The response's JSON, or API_ERROR naming the status when the body is not JSON."""
    import orjson

    try:
        return orjson.loads(response.content)
    except orjson.JSONDecodeError:
        raise ToolError(
            ErrorCode.API_ERROR,
            f"{provider} answered HTTP {response.status_code} with a body that is not JSON: "
            f"{excerpt(response.text)!r}; try again later",
        ) from None


def error_body(response: httpx.Response) -> Any:
    """An error answer's body: its JSON when it has some, else its text."""
    try:
        return response.json()
    except ValueError:
        return response.text
