"""The proxy a request goes through, from the environment, as curl and httpx read it.

`HTTPS_PROXY` for https:// URLs, `HTTP_PROXY` for http:// ones, `ALL_PROXY` for either when
its own is not set; each in lower or upper case, the lower winning. `NO_PROXY` lists the hosts
that go direct: names (a name covers its subdomains; a leading `.` or `*.` is the same), IP
addresses and CIDR networks, or `*` for every host. An upper-case `HTTP_PROXY` is ignored
when `REQUEST_METHOD` is set: under CGI a client's `Proxy:` header arrives by that name
("httpoxy"). Only http:// proxies are spoken to (forwarding for http://, CONNECT tunnels for
https://); user-info in the proxy URL is sent as Proxy-Authorization and never shown.
"""

from __future__ import annotations

import ipaddress
import os
from typing import NamedTuple
from urllib.parse import urlsplit

from ikigai_web.common.errors import ErrorCode, ToolError

_ORDER = {"https": ("https_proxy", "all_proxy"), "http": ("http_proxy", "all_proxy")}
_EXAMPLE = "http://proxy.example:3128 or http://user:password@proxy.example:3128"


class Proxy(NamedTuple):
    """An http:// proxy: where it listens, its Proxy-Authorization, the variable it came from."""

    host: str
    port: int
    authorization: str | None
    variable: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Proxy-Authorization": self.authorization} if self.authorization else {}


def for_url(url: str) -> Proxy | None:
    """The proxy for `url`, or None when it goes direct."""
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower().rstrip(".")
    for name in _ORDER.get(scheme, ()):
        variable, value = _setting(name)
        if value:
            return None if bypassed(host) else parse(value, variable)
    return None


# Every variable a proxy may be set in, each in both cases.
VARIABLES = ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY")


def register_logins() -> None:
    """Mask the login every proxy variable carries, whether or not a call goes through it."""
    from ikigai_web.common.redact import register_url_login

    for variable in VARIABLES:
        register_url_login(os.environ.get(variable, "").strip())


def _setting(name: str) -> tuple[str, str]:
    """The variable that sets `name` (lower case first) and its value, or ('', '')."""
    upper = name.upper()
    for variable in (name, upper):
        if variable == "HTTP_PROXY" and os.environ.get("REQUEST_METHOD"):
            continue
        value = os.environ.get(variable, "").strip()
        if value:
            return variable, value
    return "", ""


def bypassed(host: str) -> bool:
    """Whether NO_PROXY (or no_proxy) sends `host` direct."""
    _, value = _setting("no_proxy")
    entries = [e.strip().lower() for e in value.split(",") if e.strip()]
    return any(_matches(host, entry) for entry in entries)


def _matches(host: str, entry: str) -> bool:
    if entry == "*":
        return True
    try:
        network = ipaddress.ip_network(entry.strip("[]"), strict=False)
        return ipaddress.ip_address(host.strip("[]")) in network
    except ValueError:
        pass
    name = entry.removeprefix("*").removeprefix(".").rstrip(".")
    name = name.rsplit(":", 1)[0] if name.count(":") == 1 else name  # host:port: any port
    return bool(name) and (host == name or host.endswith("." + name))


def parse(value: str, variable: str) -> Proxy:
    """The proxy `value` names; INVALID_INPUT naming `variable` when it cannot be used."""
    from ikigai_web.common.redact import register_login

    if "://" not in value:  # curl guesses http://; a setting is better told than guessed
        host = value.rpartition("@")[2]
        raise _unusable(variable, value, f"it has no scheme: write it as http://{host}")
    try:
        parts = urlsplit(value)
        port = parts.port or 80
    except ValueError:
        raise _unusable(variable, value, "it is not a URL") from None
    if parts.scheme.lower() != "http":
        why = f"{parts.scheme}:// proxies are not supported, only http:// ones"
        raise _unusable(variable, value, why)
    if not parts.hostname or any(c.isspace() or not c.isprintable() for c in value):
        raise _unusable(variable, value, "it has no usable host")
    if parts.username is None and parts.password is None:
        return Proxy(parts.hostname, port, None, variable)
    # A proxy that echoes the login shows *** instead.
    token = register_login(parts.username or "", parts.password or "")
    return Proxy(parts.hostname, port, f"Basic {token}", variable)


def _unusable(variable: str, value: str, why: str) -> ToolError:
    from ikigai_web.common.redact import drop_userinfo

    shown = (drop_userinfo(value) if "://" in value else value.rpartition("@")[2])[:200]
    return ToolError(
        ErrorCode.INVALID_INPUT,
        f"the setting {variable} is {shown!r}: {why}. Set it to a proxy URL such as "
        f"{_EXAMPLE}, or unset it.",
    )
