"""Domain filters (protocol.md, section 4): normalise, match, split, fan out, merge."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.errors import ErrorCode, ToolError, invalid
from ikigai_web.common.hostnames import is_hostname
from ikigai_web.common.params import string_list

if TYPE_CHECKING:
    from urllib.parse import SplitResult

Result = dict[str, Any]
_PORT = re.compile(r":\d*$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*$")
_SPECIAL = frozenset({"http", "https", "ws", "wss", "ftp"})
_C0_OR_SPACE = "".join(map(chr, range(0x21)))
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")
# When every domain of a fan-out fails, the most specific error wins.
_PRECEDENCE = (
    ErrorCode.RATE_LIMIT,
    ErrorCode.AUTH_INVALID,
    ErrorCode.NETWORK_ERROR,
    ErrorCode.API_ERROR,
)


class Page(NamedTuple):
    """One provider answer: results in rank order, and whether the provider has more.

    `complete` is False when part of the answer failed (its `extra` then says how): such an
    answer is shown but not cached.
    """

    results: list[Result]
    more: bool = False
    extra: Mapping[str, Any] = MappingProxyType({})
    complete: bool = True


Fetch = Callable[[str | None, int], Page]

# The two filter parameters every search tool's schema shares.
SCHEMA_PROPERTIES: dict[str, Any] = {
    "allowed_domains": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Only results from these domains or their subdomains.",
    },
    "blocked_domains": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Never results from these domains or their subdomains.",
    },
}


def parse(raw: Mapping[str, Any], name: str, *, most: int = 50) -> tuple[str, ...]:
    """The call's `allowed_domains` or `blocked_domains`, normalised; INVALID_INPUT if bad."""
    return tuple(normalise(string_list(raw, name, most=most), name))


def normalise(entries: Iterable[str], name: str) -> list[str]:
    """Clean, de-duplicated domains in input order, or INVALID_INPUT naming the bad entry."""
    out: list[str] = []
    for entry in entries:
        domain = _normalise_one(entry)
        if domain is None:
            raise invalid(name, entry, "each entry must be a domain name such as example.com")
        if domain not in out:
            out.append(domain)
    return out


def _normalise_one(entry: str) -> str | None:
    text = entry.strip().lower()
    text = text.split("://", 1)[-1]
    text = re.split(r"[/?#]", text, maxsplit=1)[0]
    text = _PORT.sub("", text.rsplit("@", 1)[-1])
    text = text.removeprefix("*.").lstrip(".").rstrip(".")
    try:
        text = text.encode("idna").decode("ascii")
    except UnicodeError:
        return None
    return text if is_hostname(text) or _is_ipv4(text) else None


def _is_ipv4(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _urlsplit(url: str) -> SplitResult:
    # urllib.parse (with ipaddress) is imported on a call's path only, not for `--schema`.
    from urllib.parse import urlsplit

    return urlsplit(url)


def browser_split(url: str) -> SplitResult | None:
    """`url` split the way a browser reads it (the WHATWG URL Standard), in the points that
    decide where it leads; None when it is no URL. Unlike urllib, a browser drops tabs and
    line breaks, reads a backslash as a slash in web URLs (so `https://evil.com\\@wiki.org/`
    leads to evil.com) and skips any number of slashes before the host.

    Written out here: a WHATWG parser library costs a tenth of a search's start-up to import.
    """
    text = _TAB_OR_NEWLINE.sub("", url.strip(_C0_OR_SPACE))
    scheme, colon, rest = text.partition(":")
    if not colon or not _SCHEME.match(scheme):
        return None
    scheme = scheme.lower()
    if scheme in _SPECIAL:
        end = min((i for i in (rest.find("?"), rest.find("#")) if i >= 0), default=len(rest))
        rest = "//" + rest[:end].replace("\\", "/").lstrip("/") + rest[end:]
    try:
        parts = _urlsplit(f"{scheme}:{rest}")
        _ = parts.port  # checks the port's range
    except ValueError:
        return None
    return parts


def host_of(url: str) -> str:
    """The host a browser would contact for `url`: lower case, ASCII (IDNA), percent-escapes
    and a final dot undone, without port or userinfo; "" if none."""
    from urllib.parse import unquote

    parts = browser_split(url)
    host = unquote(parts.hostname or "").rstrip(".") if parts is not None else ""
    if host.isascii():
        return host  # what IDNA makes of it, without importing the codec
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


def matches(url: str, domains: Sequence[str]) -> bool:
    """True when the URL's host is one of `domains` or a subdomain of one."""
    if not domains:
        return False
    host = host_of(url)
    return any(host == d or host.endswith("." + d) for d in domains)


def keep(results: Iterable[Result], allowed: Sequence[str], blocked: Sequence[str]) -> list[Result]:
    """Post-filter: only allowed hosts (when any are given), never blocked ones."""
    return [r for r in results if wanted(r["url"], allowed, blocked)]


def wanted(url: str, allowed: Sequence[str], blocked: Sequence[str]) -> bool:
    """Whether the filters let `url` through: allowed (when any are given), not blocked."""
    return (not allowed or matches(url, allowed)) and not matches(url, blocked)


def split(count: int, n: int) -> list[int]:
    """`count` shared over `n` domains; the first `count % n` get one more."""
    per, extra = divmod(count, n)
    return [per + (1 if i < extra else 0) for i in range(n)]


def url_key(url: str) -> str:
    """Identity of a result URL: scheme and host lower-cased, fragment dropped."""
    try:
        parts = _urlsplit(url)
    except ValueError:
        return url
    return parts._replace(
        scheme=parts.scheme.lower(), netloc=parts.netloc.lower(), fragment=""
    ).geturl()


def merge(pages: Sequence[Sequence[Result]], count: int) -> list[Result]:
    """Round-robin in domain order, duplicate URLs dropped, at most `count`."""
    merged: list[Result] = []
    seen: set[str] = set()
    for rank in range(max((len(p) for p in pages), default=0)):
        for page in pages:
            if rank < len(page) and url_key(page[rank]["url"]) not in seen:
                seen.add(url_key(page[rank]["url"]))
                merged.append(page[rank])
    return merged[:count]


def fan_out(
    fetch: Fetch, domains: Sequence[str], count: int
) -> tuple[list[Result], list[ToolError]]:
    """One request per domain, in parallel; results merged, failures returned per domain."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = [(d, n) for d, n in zip(domains, split(count, len(domains)), strict=True) if n > 0]
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = [(d, pool.submit(fetch, d, n)) for d, n in jobs]
    pages: list[list[Result]] = []
    failures: list[ToolError] = []
    for domain, future in futures:
        try:
            pages.append(future.result().results)
        except ToolError as err:
            message = f"{domain}: {err.message}"
            failures.append(
                ToolError(err.code, message, retry_after=err.retry_after, event=err.event)
            )
    if not pages:
        raise most_specific(failures)
    return merge(pages, count), failures


def most_specific(errors: Sequence[ToolError]) -> ToolError:
    def rank(err: ToolError) -> int:
        return _PRECEDENCE.index(err.code) if err.code in _PRECEDENCE else len(_PRECEDENCE)

    best = min(errors, key=rank)
    if len(errors) > 1:
        best.message = f"every domain failed; {best.message}"
    return best
