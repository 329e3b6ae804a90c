"""One web-fetch call's network side: vetted hops, robots.txt, redirects, a capped body.

It speaks through the one HTTP layer every tool uses (ikigai_web.net): the connection of
`ikigai_web.net.wire`, bound to the call's deadline, dialling only the address the guard
(ikigai_web.fetch.network.guard) vetted and pinned for each host; the body read and decoded by
`ikigai_web.net.http.read_body` within its cap.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urljoin, urlsplit, urlunsplit

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import drop_userinfo, printable_url, register_secret_params
from ikigai_web.fetch.network.guard import Guard, Policy, literal_ip
from ikigai_web.fetch.network.robots import Robots
from ikigai_web.net import wire
from ikigai_web.net.http import (
    REDIRECTS,
    Call,
    Connectionless,
    Login,
    Overflow,
    Undecodable,
    Unreachable,
    network_error,
    read_body,
    redirected,
)
from ikigai_web.net.urls import DEFAULT_PORTS, normal

if TYPE_CHECKING:
    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Deadline, Opened

MAX_REDIRECTS = 5
ACCEPT = (
    "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.8,text/plain;q=0.8,"
    "application/json;q=0.7,application/pdf;q=0.7,*/*;q=0.5"
)
ERROR_BODY_BYTES = 64 * 1024  # enough of an error page to find its title
# A request's method and body, when it is not a plain GET.
Sent = tuple[str, bytes | None]


class Answered(NamedTuple):
    """What a rendered page's request got: status, headers and the whole (decoded) body."""

    url: str
    status: int
    headers: list[tuple[str, str]]
    body: bytes


class Fetched(NamedTuple):
    url: str
    content_type: str | None
    body: bytearray  # mutable so the reader can free it once decoded (10 MiB matters)
    # A check's own header says this answer is its check, whatever the status (Anubis sends
    # its proof-of-work page with 200): see wall_marks.challenge_headers.
    challenged: bool = False


class Session(Connectionless):
    """The network side of one call, with its guard, pins, robots cache and deadline."""

    def __init__(self, settings: Settings, deadline: Deadline) -> None:
        self.settings = settings
        self.deadline = deadline
        self.guard = Guard(Policy.from_settings(settings))
        # The connections' own deadline: robots.txt shortens it for a while (see _robots_txt).
        self.clock = deadline.copy()
        self.headers = (
            ("Accept", ACCEPT),
            ("Accept-Encoding", "gzip, deflate"),
            ("User-Agent", settings.user_agent),
        )
        self.robots = (
            Robots(self._robots_txt, settings.user_agent) if settings.fetch_robots else None
        )

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
                self.robots.check(target)
            opened = self.open(target, login.headers(target) if login else {})
            try:
                location = redirect_location(target, opened)
                if location is None:
                    return self.finish(target, opened)
            finally:
                opened.close()
            seen.add(url)
            url = drop_userinfo(location)
            if url in seen:
                break
        raise too_many_redirects(url)

    def prepare(self, url: str, hop: int) -> str:
        """The URL to request, after the guard has vetted its host and pinned its address."""
        target, host, port = parse_hop(url, hop)
        try:
            self.guard.check(host, port, target, self.deadline.remaining())
        except ToolError as err:
            raise _on_hop(err, url, hop) from None
        return target

    def open(
        self, url: str, headers: dict[str, str] | None = None, sent: Sent | None = None
    ) -> Opened:
        """Send one request (a GET unless `sent` says otherwise) to a prepared `url` and
        return the answer with its body still unread."""
        method, body = sent if sent is not None else ("GET", None)
        return self.send(self.call(url, headers or {}, method, body))

    def call(
        self, url: str, headers: dict[str, str], method: str = "GET", body: bytes | None = None
    ) -> Call:
        merged = {k.lower(): (k, v) for k, v in (*self.headers, *headers.items())}
        return Call(method, url, tuple(merged.values()), body or b"")

    def send(self, call: Call) -> Opened:
        host = urlsplit(call.url).hostname or "the server"
        if self.deadline.remaining() <= 0:
            raise self.deadline.expired_error(host)
        try:
            return wire.open_call(call, self.clock, self.guard.pins)
        except Unreachable as exc:
            raise network_error(exc, host, self.deadline) from None

    def forward(self, url: str, headers: dict[str, str], sent: Sent, cap: int) -> Answered:
        """One request a rendered page makes, vetted and robots-checked like the page itself.

        Redirects are followed here, every hop vetted: Chromium cannot be handed a redirect
        from an intercepted request. They are followed as every tool follows them
        (ikigai_web.net.http.redirected): a 303, or a 301/302 after a POST, goes on as a GET.
        """
        call = self.call(drop_userinfo(url), headers, *sent)
        for hop in range(1, MAX_REDIRECTS + 2):
            register_secret_params(call.url)
            call = call._replace(url=self.prepare(drop_userinfo(call.url), hop))
            if self.robots is not None:
                self.robots.check(call.url)
            opened = self.send(call)
            try:
                location = redirect_location(call.url, opened)
                if location is None:
                    body = self.read(call.url, opened, cap, strict=True)
                    return Answered(
                        shown(call.url), opened.status, list(opened.headers.pairs), bytes(body)
                    )
            finally:
                opened.close()
            try:
                call = redirected(call, opened.status, location)
            except ValueError as exc:  # a port out of range: the next hop cannot be made
                raise bad_url(location, hop, str(exc)) from None
        raise too_many_redirects(call.url)

    def finish(self, url: str, opened: Opened) -> Fetched:
        if opened.status >= 400:
            body = self.read(url, opened, ERROR_BODY_BYTES, strict=False)
            raise http_error(url, opened, bytes(body))
        if opened.status >= 300:
            raise ToolError(
                ErrorCode.HTTP_ERROR,
                f"{shown(url)} answered HTTP {opened.status} without a usable redirect "
                "location, so there is no page to read.",
            )
        from ikigai_web.fetch.reading.wall_marks import challenge_headers

        body = self.read(url, opened, self.settings.fetch_max_bytes, strict=True)
        challenged = challenge_headers(opened.headers, stated=True)
        return Fetched(shown(url), opened.headers.get("content-type"), body, challenged)

    def read(self, url: str, opened: Opened, cap: int, *, strict: bool) -> bytearray:
        """The decoded body; past `cap` bytes TOO_LARGE (strict) or just the first `cap`."""
        declared = opened.headers.get("content-length", "")
        if strict and declared.isdigit() and int(declared) > cap:
            raise too_large(shown(url), cap, f"it announces {int(declared):,} bytes")
        host = urlsplit(url).hostname or "the server"
        try:
            return read_body(opened, cap, host, self.deadline, strict=strict)
        except Unreachable as exc:
            raise network_error(exc, host, self.deadline) from None
        except Overflow:
            raise too_large(shown(url), cap, "the body is larger") from None
        except Undecodable as exc:
            if exc.unsupported:
                message = f"{shown(url)} was sent with {exc}: web-fetch cannot decode it."
                raise ToolError(ErrorCode.UNSUPPORTED_CONTENT, message) from None
            message = f"{shown(url)} sent a body that cannot be decoded: {exc}."
            raise ToolError(ErrorCode.PARSE_ERROR, message) from None

    def _robots_txt(self, url: str, wait: float, cap: int) -> tuple[int, bytes]:
        """Status and body of a robots.txt, within `wait` seconds, following redirects."""
        saved = self.clock.end
        self.clock.end = min(saved, time.monotonic() + wait)
        try:
            return self._robots_hops(url, cap)
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

    def _robots_hops(self, url: str, cap: int) -> tuple[int, bytes]:
        for hop in range(MAX_REDIRECTS + 1):
            target = self.prepare(url, hop)
            opened = self.open(target)
            try:
                location = redirect_location(target, opened)
                if location is None or hop == MAX_REDIRECTS:
                    return opened.status, bytes(self.read(target, opened, cap, strict=False))
            finally:
                opened.close()
            url = location
        raise AssertionError("unreachable")  # pragma: no cover


def parse_hop(url: str, hop: int) -> tuple[str, str, int]:
    """An http(s) URL with a host in normal form, its host and its port; BLOCKED_URL for
    another scheme."""
    try:
        parts = urlsplit(url)
        scheme, _ = parts.scheme.lower(), parts.port  # .port checks the range
    except ValueError as exc:
        raise bad_url(url, hop, str(exc)) from None
    if scheme not in DEFAULT_PORTS:
        raise ToolError(
            ErrorCode.BLOCKED_URL,
            f"The page redirected to {shown(url)}, which is not an http(s) URL; "
            "web-fetch only follows http and https.",
        )
    try:
        target = normal(canonical(url))
        parts = urlsplit(target)
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError as exc:
        raise bad_url(url, hop, str(exc)) from None
    if not parts.hostname:
        raise bad_url(url, hop, "it has no host")
    return target, parts.hostname, port


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


def redirect_location(url: str, opened: Opened) -> str | None:
    """The absolute URL a redirect from `url` points to, or None when this is not one."""
    location = str(opened.headers.get("location", "")).strip()
    if opened.status not in REDIRECTS or not location:
        return None
    try:
        return urljoin(url, location).split("#", 1)[0]
    except ValueError:
        return location  # unparsable: the next hop's check says so


def shown(url: str) -> str:
    """A URL as messages print it: no user-info, secrets masked, then cut (never before)."""
    return printable_url(url)[:200]


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


def http_error(url: str, opened: Opened, body: bytes) -> ToolError:
    """HTTP_ERROR with the status, the page's own short error text and what to do next; and
    `wall` when the answer is a wall (walls.of_status), with `retry_after` where it counts."""
    from ikigai_web.fetch.reading.decode import short_text, to_text
    from ikigai_web.fetch.reading.walls import of_status, refused
    from ikigai_web.net.http import SITE_RETRY_MOST, retry_after

    status = opened.status
    header = opened.headers.get("content-type")
    said = short_text(body, header)
    message = f"{shown(url)} answered HTTP {status} {opened.reason}".rstrip()
    message += f": {said!r}. " if said else ". "
    wait = retry_after(opened, SITE_RETRY_MOST) if status in (429, 503) else None
    text = to_text(body, header) if body.strip() else ""
    wall = of_status(status, opened.headers, text, lambda: _page_wall(url, text, header))
    if wall is not None:
        return refused(message, wall, wait)
    return ToolError(ErrorCode.HTTP_ERROR, message + _advice(status), retry_after=wait)


def _page_wall(url: str, text: str, header: str | None) -> str | None:
    """The wall an error answer's own page is, judged as any page is; None when it is no
    HTML page or none."""
    from ikigai_web.fetch.reading.decode import HTML_TYPES, media_type
    from ikigai_web.fetch.reading.extract import html_to_markdown

    if not text.strip() or (media_type(header) not in HTML_TYPES and "<" not in text[:2000]):
        return None
    from ikigai_web.fetch.reading.walls import named

    try:
        page = html_to_markdown(text, url)
    except ToolError:  # what cannot be read as a page says nothing
        return None
    # An error is known not to be the content: its words alone may say which wall it is.
    known = named(page.title, page.markdown)
    return known if known and page.wall in (None, "error_page", "not_found") else page.wall


def _advice(status: int) -> str:
    """What to do about an error answer that is no wall (a 400, a 409, a 3xx left over)."""
    if status >= 400:
        return "The site refused the request: check the URL, or find another source."
    return "Check the URL."
