"""A URL in the one form a request is made, compared and shown in (RFC 3986 normalisation).

The scheme and host in lower case, an internationalised host in its IDNA 2008 `xn--` form,
the scheme's default port left out, `.` and `..` segments resolved, and every character a
request line cannot carry percent-encoded (an escape already written is kept as written).
Anything that cannot be one is a ValueError saying why, before any connection is made.
"""

from __future__ import annotations

import ipaddress
import re

MAX_URL = 65536
DEFAULT_PORTS = {"http": 80, "https": 443}
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def _printable_but(*excluded: str) -> frozenset[str]:
    """The printable ASCII characters but `excluded`, which must be escaped."""
    return frozenset(chr(i) for i in range(0x20, 0x7F) if chr(i) not in "".join(excluded))


# What each part may carry unescaped: the space, quotes and angle brackets never; a path
# neither what would start a query or a fragment nor a backtick or braces.
_FRAGMENT = _printable_but(' "<>`')
_QUERY = _printable_but(' "<>#')
_PATH = _printable_but(' "<>#?`{}')
_USERINFO = _printable_but(' "<>#?`{}/;=@[\\]^|')
_HOST = _UNRESERVED | frozenset("!$&'()*+,;=\"`{}%|\\")
_ESCAPE = re.compile("%[A-Fa-f0-9]{2}")
_PARTS = re.compile(
    r"(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?://([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?"
)
_AUTHORITY = re.compile(r"(?:(.*)@)?(\[.*\]|[^:@]*):?(.*)")
_DOTTED_QUAD = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$")


def normal(url: str) -> str:
    """`url` in its normal form; ValueError when it cannot be requested as written."""
    _check_characters(url)
    scheme, authority, path, query, fragment = _PARTS.fullmatch(url).groups()  # type: ignore[union-attr]
    scheme = (scheme or "").lower()
    userinfo, host, port = _AUTHORITY.fullmatch(authority or "").groups()  # type: ignore[union-attr]
    host = encode_host(host)
    number = _port(port, scheme)
    place = f"[{host}]" if ":" in host else host
    place += f":{number}" if number is not None else ""
    login = f"{quote(userinfo, _USERINFO)}@" if userinfo else ""
    return "".join(
        (
            f"{scheme}:" if scheme else "",
            f"//{login}{place}" if login or place else "",
            quote(without_dots(path), _PATH),
            f"?{quote(query, _QUERY)}" if query is not None else "",
            f"#{quote(fragment, _FRAGMENT)}" if fragment is not None else "",
        )
    )


def _check_characters(url: str) -> None:
    if len(url) > MAX_URL:
        raise ValueError("URL too long")
    for at, char in enumerate(url):
        if char.isascii() and not char.isprintable():
            raise ValueError(
                f"Invalid non-printable ASCII character in URL, {char!r} at position {at}."
            )


def encode_host(host: str) -> str:
    """A host as a request names it: an IP address checked, a name lower-case ASCII."""
    if not host:
        return ""
    if _DOTTED_QUAD.match(host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            raise ValueError(f"Invalid IPv4 address: {host!r}") from None
        return host
    if host.startswith("[") and host.endswith("]"):
        try:
            ipaddress.IPv6Address(host[1:-1])
        except ValueError:
            raise ValueError(f"Invalid IPv6 address: {host!r}") from None
        return host[1:-1]
    if host.isascii():
        return quote(host.lower(), _HOST)
    return idn(host)


def idn(name: str) -> str:
    """An internationalised host name in its xn-- form: IDNA 2008, as browsers encode it."""
    import idna  # only for a name that is not ASCII

    try:
        return str(idna.encode(name.lower()).decode("ascii"))
    except idna.IDNAError:
        raise ValueError(f"Invalid IDNA hostname: {name!r}") from None


def _port(port: str, scheme: str) -> int | None:
    if not port:
        return None
    try:
        number = int(port)
    except ValueError:
        raise ValueError(f"Invalid port: {port!r}") from None
    return None if number == DEFAULT_PORTS.get(scheme) else number


def without_dots(path: str) -> str:
    """`path` with its `.` and `..` segments resolved (RFC 3986, 5.2.4)."""
    segments = path.split("/")
    if "." not in segments and ".." not in segments:
        return path
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept and kept != [""]:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    return "/".join(kept)


def quote(text: str, safe: frozenset[str]) -> str:
    """`text` with what `safe` does not allow percent-encoded as UTF-8; escapes kept."""
    out: list[str] = []
    done = 0
    for escape in _ESCAPE.finditer(text):
        out.append(_escaped(text[done : escape.start()], safe))
        out.append(escape.group())
        done = escape.end()
    out.append(_escaped(text[done:], safe))
    return "".join(out)


def _escaped(text: str, safe: frozenset[str]) -> str:
    if all(c in _UNRESERVED or c in safe for c in text):
        return text
    return "".join(
        c if c in _UNRESERVED or c in safe else "".join(f"%{b:02X}" for b in c.encode())
        for c in text
    )


def origin(url: str) -> tuple[str, str, int]:
    """Scheme, host and port of an http(s) URL in normal form: what a login is bound to."""
    scheme, authority = _PARTS.fullmatch(url).group(1, 2)  # type: ignore[union-attr]
    _, host, port = _AUTHORITY.fullmatch(authority or "").groups()  # type: ignore[union-attr]
    scheme = (scheme or "").lower()
    return scheme, host.strip("[]").lower(), int(port) if port else DEFAULT_PORTS.get(scheme, 0)
