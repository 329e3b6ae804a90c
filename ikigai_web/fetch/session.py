"""One web-fetch call's network side: vetted hops, robots.txt, redirects, a capped body."""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Self
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import httpx

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import (
    drop_userinfo,
    printable_url,
    register_secret,
    register_secret_params,
)
from ikigai_web.fetch.guard import Policy, literal_ip, vet, vet_for_proxy
from ikigai_web.fetch.robots import Robots
from ikigai_web.fetch.transport import DeadlineTransport, PinnedBackend, failed, read_body, timeout
from ikigai_web.net import proxy
from ikigai_web.net.http import Overflow, Undecodable, Unreachable

if TYPE_CHECKING:
    from types import TracebackType

    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Deadline

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
ACCEPT = (
    "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.8,text/plain;q=0.8,"
    "application/json;q=0.7,application/pdf;q=0.7,*/*;q=0.5"
)
ERROR_BODY_BYTES = 64 * 1024  # enough of an error page to find its title
# Where a bot check refuses the page (a challenge, a rate limit, "unavailable") rather than a
# plain error: its body then says which (ikigai_web/fetch/walls.py).
CHALLENGE_STATUSES = frozenset({403, 429, 503})
_CHALLENGE = (
    "The page is a bot check (a challenge that decides whether the visitor is a person), not "
    "the content: web-fetch cannot pass it. Use another source for the same information, or "
    "ask the user to open it in their own browser."
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
_LOCATION = "ikigai_location"
REFUSED_LOGIN = "it answered 407, refusing the login: check the user and password in it"


# A request's method and body, when it is not a plain GET.
Sent = tuple[str, bytes | None]


@dataclass(frozen=True)
class Answered:
    """What a rendered page's request got: status, headers and the whole (decoded) body."""

    url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes


@dataclass(frozen=True)
class Fetched:
    url: str
    content_type: str | None
    body: bytearray  # mutable so the reader can free it once decoded (10 MiB matters)


class Session:
    """The HTTP client of one call, with its guard, pins, robots cache and deadline."""

    def __init__(self, settings: Settings, deadline: Deadline) -> None:
        self.settings = settings
        self.deadline = deadline
        self.policy = Policy.from_settings(settings)
        # The connections' own deadline: robots.txt shortens it for a while (see _robots_txt).
        self.clock = deadline.copy()
        self.backend = PinnedBackend(self.clock)
        self.proxied: set[str] = set()  # hosts vetted for a proxy, which resolves them
        headers = {"Accept": ACCEPT, "Accept-Encoding": "gzip, deflate"}
        transport = DeadlineTransport(self.backend)
        hooks = {"response": [_stash_location]}
        headers["User-Agent"] = settings.user_agent
        self.http = httpx.Client(
            headers=headers, timeout=timeout(deadline), transport=transport, event_hooks=hooks
        )
        self.robots = (
            Robots(self._robots_txt, settings.user_agent) if settings.fetch_robots else None
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.http.close()

    def fetch(self, url: str) -> Fetched:
        """The final page after at most 5 redirects, every hop vetted and robots-checked.

        User-info in `url` goes as HTTP Basic auth to that URL's origin only (scheme, host,
        port), as a browser sends it; a redirect's own user-info is never sent.
        """
        login = Login.of(url)
        url = drop_userinfo(url)
        seen: set[str] = set()
        for hop in range(MAX_REDIRECTS + 1):
            register_secret_params(url)  # what the page or an error page echoes shows ***
            target = self.prepare(url, hop)
            if self.robots is not None:
                self.robots.check(str(target))
            headers = login.headers(target) if login else {}
            response = self.open(target, timeout(self.deadline), headers)
            try:
                location = redirect_location(response)
                if location is None:
                    return self.finish(response)
            finally:
                response.close()
            seen.add(url)
            url = drop_userinfo(location)
            if url in seen:
                break
        raise too_many_redirects(url)

    def prepare(self, url: str, hop: int) -> httpx.URL:
        """The URL to request, after the guard has vetted its host and pinned its address."""
        target, port = parse_hop(url, hop)
        # The name as DNS and the connection see it: an IDN's xn-- form, not target.host.
        host = target.raw_host.decode("ascii")
        if self.backend.pinned(host) or host in self.proxied:
            return target  # one DNS answer per host and call: robots.txt and page agree
        try:
            if proxy.for_url(str(target)) is not None:
                vet_for_proxy(host, port, self.policy, self.deadline.remaining())
                self.proxied.add(host)
                return target
            address = vet(host, port, self.policy, self.deadline.remaining())
        except ToolError as err:
            raise _on_hop(err, url, hop) from None
        self.backend.pin(host, address)
        return target

    def open(
        self,
        url: httpx.URL,
        timeout: httpx.Timeout,
        headers: dict[str, str] | None = None,
        sent: Sent | None = None,
    ) -> httpx.Response:
        """Send one request (a GET unless `sent` says otherwise) and return the response with
        its body still unread."""
        if self.deadline.remaining() <= 0:
            raise self.deadline.expired_error(url.host)
        method, content = sent if sent is not None else ("GET", None)
        request = self.http.build_request(method, url, headers=headers, content=content)
        request.extensions["timeout"] = timeout.as_dict()
        via = proxy.for_url(str(url))
        try:
            response = self.http.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise _through(via, exc, url.host) or failed(exc, self.deadline) from None
        if via is not None and response.status_code == 407:  # the proxy's answer, not the page's
            response.close()
            raise proxy_failed(via, url.host, REFUSED_LOGIN)
        return response

    def forward(self, url: str, headers: dict[str, str], sent: Sent, cap: int) -> Answered:
        """One request a rendered page makes, vetted and robots-checked like the page itself.

        Redirects are followed here, every hop vetted: Chromium cannot be handed a redirect
        from an intercepted request. A 303, or a 301/302 after a POST, goes on as a GET.
        """
        for hop in range(1, MAX_REDIRECTS + 2):
            register_secret_params(url)
            target = self.prepare(drop_userinfo(url), hop)
            if self.robots is not None:
                self.robots.check(str(target))
            response = self.open(target, timeout(self.deadline), headers, sent)
            try:
                location = redirect_location(response)
                if location is None:
                    body = self.read(response, cap, strict=True)
                    return Answered(
                        shown(response.url),
                        response.status_code,
                        response.headers.multi_items(),
                        bytes(body),
                    )
            finally:
                response.close()
            if response.status_code == 303 or (
                response.status_code in (301, 302) and sent[0] == "POST"
            ):
                sent = ("GET", None)
            url = location
        raise too_many_redirects(url)

    def finish(self, response: httpx.Response) -> Fetched:
        url = shown(response.url)
        if response.status_code >= 400:
            body = self.read(response, ERROR_BODY_BYTES, strict=False)
            raise http_error(response, bytes(body))
        if response.status_code >= 300:
            raise ToolError(
                ErrorCode.HTTP_ERROR,
                f"{url} answered HTTP {response.status_code} without a usable redirect "
                "location, so there is no page to read.",
            )
        body = self.read(response, self.settings.fetch_max_bytes, strict=True)
        return Fetched(url, response.headers.get("content-type"), body)

    def read(self, response: httpx.Response, cap: int, *, strict: bool) -> bytearray:
        """The decoded body; past `cap` bytes TOO_LARGE (strict) or just the first `cap`."""
        url = shown(response.url)
        declared = response.headers.get("content-length", "")
        if strict and declared.isdigit() and int(declared) > cap:
            raise too_large(url, cap, f"it announces {int(declared):,} bytes")
        try:
            return read_body(response, cap, self.deadline, strict=strict)
        except Overflow:
            raise too_large(url, cap, "the body is larger") from None
        except Undecodable as exc:
            if exc.unsupported:
                message = f"{url} was sent with {exc}: web-fetch cannot decode it."
                raise ToolError(ErrorCode.UNSUPPORTED_CONTENT, message) from None
            message = f"{url} sent a body that cannot be decoded: {exc}."
            raise ToolError(ErrorCode.PARSE_ERROR, message) from None

    def _robots_txt(self, url: str, wait: float, cap: int) -> tuple[int, bytes]:
        """Status and body of a robots.txt, within `wait` seconds, following redirects."""
        saved = self.clock.end
        self.clock.end = min(saved, time.monotonic() + wait)
        try:
            return self._robots_hops(url, wait, cap)
        except ToolError as err:
            if err.code is not ErrorCode.NETWORK_ERROR:
                raise
            raise ToolError(
                ErrorCode.NETWORK_ERROR,
                f"{url} could not be fetched ({err.message}), so the site seems down or too "
                "slow; try again later (IKIGAI_WEB_FETCH_ROBOTS=0 skips robots.txt).",
            ) from None
        finally:
            self.clock.end = saved

    def _robots_hops(self, url: str, wait: float, cap: int) -> tuple[int, bytes]:
        timeout = httpx.Timeout(wait, connect=min(wait, 5.0))
        for hop in range(MAX_REDIRECTS + 1):
            response = self.open(self.prepare(url, hop), timeout)
            try:
                location = redirect_location(response)
                if location is None or hop == MAX_REDIRECTS:
                    return response.status_code, bytes(self.read(response, cap, strict=False))
            finally:
                response.close()
            url = location
        raise AssertionError("unreachable")  # pragma: no cover


@dataclass(frozen=True)
class Login:
    """HTTP Basic credentials from a URL's user-info, bound to that URL's origin."""

    origin: tuple[str, bytes, int]
    authorization: str

    @classmethod
    def of(cls, url: str) -> Login | None:
        parts = urlsplit(url)
        if not (parts.username or parts.password):
            return None
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        for secret in (password, token):
            register_secret(secret)  # a page or error that echoes them shows ***
        return cls(_origin(parse_hop(drop_userinfo(url), 0)[0]), f"Basic {token}")

    def headers(self, target: httpx.URL) -> dict[str, str]:
        return {"Authorization": self.authorization} if _origin(target) == self.origin else {}


def _origin(url: httpx.URL) -> tuple[str, bytes, int]:
    return url.scheme, url.raw_host, url.port or _DEFAULT_PORTS[url.scheme]


def parse_hop(url: str, hop: int) -> tuple[httpx.URL, int]:
    """An http(s) URL with a host, and its port; BLOCKED_URL for another scheme."""
    try:
        parts = urlsplit(url)
        scheme, _ = parts.scheme.lower(), parts.port  # .port checks the range
    except ValueError as exc:
        raise bad_url(url, hop, str(exc)) from None
    if scheme not in _DEFAULT_PORTS:
        raise ToolError(
            ErrorCode.BLOCKED_URL,
            f"The page redirected to {shown(url)}, which is not an http(s) URL; "
            "web-fetch only follows http and https.",
        )
    try:
        target = httpx.URL(canonical(url))
        port = target.port or _DEFAULT_PORTS[target.scheme]
    except (httpx.InvalidURL, ValueError) as exc:
        raise bad_url(url, hop, str(exc)) from None
    if not target.host:
        raise bad_url(url, hop, "it has no host")
    return target, port


def canonical(url: str) -> str:
    """`url` with an IP host in a non-standard spelling (0x7f.1, 2130706433) written plainly."""
    parts = urlsplit(url)
    ip = literal_ip(parts.hostname or "")
    if ip is None or str(ip) == parts.hostname:
        return url
    host = f"[{ip}]" if ip.version == 6 else str(ip)
    userinfo = parts.netloc.rpartition("@")[0]
    port = f":{parts.port}" if parts.port is not None else ""
    netloc = (f"{userinfo}@" if userinfo else "") + host + port
    return urlunsplit(parts._replace(netloc=netloc))


def _stash_location(response: httpx.Response) -> None:
    """Move Location aside: httpx would parse it itself and fail on forms the guard must see."""
    if "location" in response.headers:
        response.extensions[_LOCATION] = response.headers["location"]
        del response.headers["location"]


def redirect_location(response: httpx.Response) -> str | None:
    """The absolute URL a redirect points to, or None when this is not a redirect."""
    location = str(response.extensions.get(_LOCATION, "")).strip()
    if response.status_code not in REDIRECT_STATUSES or not location:
        return None
    try:
        return urljoin(str(response.url), location).split("#", 1)[0]
    except ValueError:
        return location  # unparsable: the next hop's check says so


def shown(url: str | httpx.URL) -> str:
    """A URL as messages print it: no user-info, secrets masked, then cut (never before)."""
    return printable_url(str(url))[:200]


def _through(via: proxy.Proxy | None, exc: httpx.HTTPError, host: str) -> ToolError | None:
    """The proxy's failure, naming the variable that set it, when `exc` is one: it refused
    the tunnel, or could not be found or connected to (the page's host is its to reach)."""
    from ikigai_web.fetch.transport import from_httpx

    if via is None:
        return None
    if isinstance(exc, httpx.ProxyError):
        answered = str(exc)
        why = REFUSED_LOGIN if answered.startswith("407") else f"it answered {answered}"
        return proxy_failed(via, host, why)
    said = from_httpx(exc)
    if said.kind.startswith(("connect:", "DNS:")):
        return proxy_failed(via, host, said.detail or said.kind)
    return None


def proxy_failed(via: proxy.Proxy, host: str, why: str) -> ToolError:
    """NETWORK_ERROR as every tool words a proxy's failure (ikigai_web.net.wire)."""
    from ikigai_web.net.http import network_error

    where = f"the proxy {via.host}:{via.port} ({via.variable})"
    return network_error(Unreachable("proxy: could not reach", f"through {where}: {why}"), host)


def too_many_redirects(url: str) -> ToolError:
    return ToolError(
        ErrorCode.HTTP_ERROR,
        f"too many redirects: more than {MAX_REDIRECTS}, or a loop (last one to {shown(url)}). "
        "Open the final URL directly if you know it.",
    )


def too_large(url: str, cap: int, why: str) -> ToolError:
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{url} is larger than the {cap:,}-byte cap ({why}). Fetch a smaller page, or the "
        "user can raise IKIGAI_WEB_FETCH_MAX_BYTES.",
    )


def bad_url(url: str, hop: int, why: str) -> ToolError:
    if hop == 0:
        return ToolError(
            ErrorCode.INVALID_INPUT,
            f"'url' is {shown(url)!r}; it is not a usable http(s) URL ({why}).",
        )
    return ToolError(ErrorCode.HTTP_ERROR, f"The page redirected to an unusable URL ({why}).")


def _on_hop(err: ToolError, url: str, hop: int) -> ToolError:
    if hop == 0 or err.code is not ErrorCode.BLOCKED_URL:
        return err
    return ToolError(err.code, f"The page redirected to {shown(url)}. {err.message}")


def http_error(response: httpx.Response, body: bytes) -> ToolError:
    """HTTP_ERROR with the status, the page's own short error text and what to do next."""
    from ikigai_web.fetch.decode import short_text
    from ikigai_web.net.http import retry_after

    status = response.status_code
    said = short_text(body, response.headers.get("content-type"))
    message = f"{shown(response.url)} answered HTTP {status} {response.reason_phrase}".rstrip()
    message += f": {said!r}. " if said else ". "
    wait = retry_after(response) if status in (429, 503) else None
    if status in CHALLENGE_STATUSES and _is_challenge(response, body, said):
        return ToolError(
            ErrorCode.HTTP_ERROR, message + _CHALLENGE, retry_after=wait, wall="bot_check"
        )
    return ToolError(ErrorCode.HTTP_ERROR, message + _advice(status), retry_after=wait)


def _is_challenge(response: httpx.Response, body: bytes, said: str) -> bool:
    from ikigai_web.fetch.decode import to_text
    from ikigai_web.fetch.walls import challenge

    return challenge(to_text(body, response.headers.get("content-type")), said, response.headers)


def _advice(status: int) -> str:
    if status in (404, 410):
        return "The page does not exist; check the URL or search for its new address."
    if status in (401, 403, 451):
        return "The site refuses access to this page; find another source."
    if status == 429:
        return "The site is rate limiting; wait before trying again, or use another source."
    if status >= 500:
        return "The site has a server error; try again later or use another source."
    return "Check the URL."
