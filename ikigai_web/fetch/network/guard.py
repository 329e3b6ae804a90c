"""The SSRF guard, whole: which addresses web-fetch may connect to (the policy), the check
every hop passes (Guard.check: the host vetted, redirects and robots.txt and the browser's
requests alike), and the pinning of the address it vetted (Pins), which the connection
(ikigai_web.net.wire) dials and nothing else.

Every address form that reaches a private network is refused unless a setting allows it:
IPv4 in any inet_aton spelling (decimal, octal, hex, short), IPv6 including the forms that
embed an IPv4 address (mapped, compatible, 6to4, NAT64, Teredo).
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, NamedTuple

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.net import proxy
from ikigai_web.net.http import Unreachable

if TYPE_CHECKING:
    from ikigai_web.common.settings import Settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_IPV4_COMPATIBLE = ipaddress.ip_network("::/96")
_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_DNS_WAIT = 5.0
_HOW_TO_ALLOW = (
    "If you really mean to reach it, the user can set IKIGAI_WEB_FETCH_ALLOW_PRIVATE=1 or "
    "add the host or its network to IKIGAI_WEB_FETCH_ALLOW_HOSTS."
)


def literal_ip(host: str) -> IPAddress | None:
    """The address a host written as an IP literal denotes, in any spelling libc accepts."""
    bare = host.strip("[]")
    try:
        return ipaddress.ip_address(bare)
    except ValueError:
        pass
    return _inet_aton(bare)


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """IPv4 written as 1-4 dotted parts, each decimal, octal (0...) or hex (0x...)."""
    parts = host.removesuffix(".").split(".")
    if not 1 <= len(parts) <= 4:
        return None
    numbers = [_aton_part(p) for p in parts]
    if any(n is None for n in numbers):
        return None
    values = [n for n in numbers if n is not None]
    *head, last = values
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(values)):
        return None
    value = last
    for i, n in enumerate(head):
        value |= n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _aton_part(part: str) -> int | None:
    lowered = part.lower()
    try:
        if lowered.startswith("0x"):
            return int(lowered[2:] or "0", 16)
        if len(lowered) > 1 and lowered.startswith("0"):
            return int(lowered[1:], 8)
        return int(lowered, 10) if lowered.isdigit() else None
    except ValueError:
        return None


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, compatible, 6to4, NAT64, Teredo)."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in net for net in _NAT64) or (ip in _IPV4_COMPATIBLE and int(ip) > 1):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def blocked_reason(ip: IPAddress) -> str | None:
    """Why web-fetch must not connect to `ip`, or None when it is a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            reason = blocked_reason(inner)
            return f"{reason} (embedded in the IPv6 address {ip})" if reason else None
    checks = (
        (ip.is_unspecified, "an unspecified address"),
        (ip.is_loopback, "a loopback address"),
        (ip.is_link_local, "a link-local address (cloud metadata lives here)"),
        (ip.is_multicast, "a multicast address"),
        (ip in _CGNAT, "a carrier-grade NAT address"),
        (ip.is_private, "a private-network address"),
        (ip.is_reserved, "a reserved address"),
        (not ip.is_global, "not a public address"),
    )
    return next((why for hit, why in checks if hit), None)


class Policy(NamedTuple):
    """Which private destinations the settings let through."""

    allow_private: bool = False
    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def from_settings(cls, settings: Settings) -> Policy:
        hosts: set[str] = set()
        networks: list[Network] = []
        for entry in (e.strip() for e in settings.fetch_allow_hosts):
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
            except ValueError:
                hosts.add(entry.lower().rstrip("."))
        return cls(settings.fetch_allow_private, frozenset(hosts), tuple(networks))

    def allows(self, host: str, ip: IPAddress) -> bool:
        if self.allow_private or host.lower().rstrip(".") in self.hosts:
            return True
        return any(ip.version == net.version and ip in net for net in self.networks)


def vet(host: str, port: int, policy: Policy, wait: float) -> str:
    """The address to dial for `host`, after checking every address it resolves to.

    A name with any private address among its answers is refused: picking the public one
    would let an attacker's DNS choose.
    """
    literal = literal_ip(host)
    addresses = [literal] if literal is not None else resolve(host, port, min(wait, _DNS_WAIT))
    for ip in addresses:
        reason = blocked_reason(ip)
        if reason is not None and not policy.allows(host, ip):
            what = "that is" if literal is not None else f"it resolves to {ip},"
            raise ToolError(
                ErrorCode.BLOCKED_URL,
                f"Refused to fetch from {host}: {what} {reason}. "
                f"web-fetch only reaches public internet addresses. {_HOW_TO_ALLOW}",
            )
    return str(addresses[0])


def resolve(host: str, port: int, wait: float) -> list[IPAddress]:
    """Every address of `host`, with a time limit that libc's resolver does not offer."""
    from ikigai_web.net.http import DNSTimeout, Unresolved
    from ikigai_web.net.http import resolve as lookup

    try:
        found = lookup(host, port, max(wait, 0.01))
        return [ipaddress.ip_address(address.split("%")[0]) for address in found]
    except DNSTimeout:
        raise ToolError(
            ErrorCode.NETWORK_ERROR, f"timeout: DNS: resolving {host} took too long; try later"
        ) from None
    except (Unresolved, ValueError):
        raise ToolError(
            ErrorCode.NETWORK_ERROR,
            f"DNS: could not resolve {host}: no such host, or no DNS; check the name and network",
        ) from None


# Names that only mean something inside a network: never handed to a proxy to resolve.
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa")


# How a browser reads a host: percent-escapes undone, full-width forms and the other dots of
# UTS 46 (ideographic, full-width, half-width) mapped to ASCII.
_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def link_may_name(host: str, policy: Policy) -> bool:
    """Whether a link in an answer may name `host`, which a client that renders the
    markdown could fetch (an image) or open: a public name or address, or a private one the
    policy lets through. Decided without DNS, from the host as a browser reads it: a literal
    address in any spelling is private as vet finds it, and so are localhost and the names
    of a local network (a single label, .local, .internal, ...)."""
    import unicodedata
    from urllib.parse import unquote

    name = unicodedata.normalize("NFKC", unquote(host)).translate(_DOTS).lower().rstrip(".")
    ip = literal_ip(name)
    if ip is not None:
        return blocked_reason(ip) is None or policy.allows(name, ip)
    return not _local_refused(name, policy)


def _local_refused(name: str, policy: Policy) -> bool:
    """Whether `name` (lower case, no final dot) is a local network's (localhost, a single
    label, .local, .internal, ...) that the settings do not let web-fetch reach."""
    local = name == "localhost" or "." not in name or name.endswith(_LOCAL_SUFFIXES)
    return local and not policy.allow_private and name not in policy.hosts


def vet_for_proxy(host: str, port: int, policy: Policy, wait: float) -> None:
    """Check `host` before its name goes to a proxy, which resolves it itself.

    What can be resolved here is checked as for a direct connection. A name that cannot be
    (networks where only the proxy has DNS) goes to the proxy unless it is a local name
    (localhost, a single label, .local, .internal, ...): what the proxy then resolves it to,
    web-fetch cannot see.
    """
    try:
        vet(host, port, policy, wait)
    except ToolError as err:
        if err.code is not ErrorCode.NETWORK_ERROR:
            raise
        if _local_refused(host.lower().rstrip("."), policy):
            raise ToolError(
                ErrorCode.BLOCKED_URL,
                f"Refused to fetch from {host}: it cannot be resolved here and looks like a "
                f"name of a local network, which a proxy must not be asked for. "
                f"{_HOW_TO_ALLOW}",
            ) from None


class Pins:
    """The addresses a guard vetted, by host: the only ones a pinned connection dials."""

    def __init__(self) -> None:
        self.addresses: dict[str, str] = {}

    def pin(self, host: str, address: str) -> None:
        self.addresses[_key(host)] = address

    def pinned(self, host: str) -> bool:
        return _key(host) in self.addresses

    def address(self, host: str) -> str:
        """The pinned address of `host`; a host the guard did not vet is never dialled."""
        found = self.addresses.get(_key(host))
        if found is None:
            raise Unreachable(
                "connect: could not connect to", f"refusing to connect to unvetted host {host}"
            )
        return found


def _key(host: str) -> str:
    return host.strip("[]").lower().rstrip(".")


class Guard:
    """One call's guard: its policy, the address vetted and pinned for each host, and the
    hosts left to a proxy, which resolves them itself."""

    def __init__(self, policy: Policy) -> None:
        self.policy = policy
        self.pins = Pins()
        self.proxied: set[str] = set()

    def check(self, host: str, port: int, url: str, wait: float) -> None:
        """Vet `host` before a request for `url` and pin the address it resolves to; a host
        already vetted in this call is not resolved again (robots.txt and the page agree)."""
        if self.pins.pinned(host) or host in self.proxied:
            return
        if proxy.for_url(url) is not None:
            vet_for_proxy(host, port, self.policy, wait)
            self.proxied.add(host)
            return
        self.pins.pin(host, vet(host, port, self.policy, wait))
