"""robots.txt (RFC 9309) for every origin web-fetch requests from, parsed by protego."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import printable_url

ROBOTS_WAIT = 5.0  # seconds: a robots.txt slower than this counts as unreachable
ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309 asks parsers to read at least 500 KiB
_TURN_OFF = "The user can turn the robots.txt check off with IKIGAI_WEB_FETCH_ROBOTS=0."

# (url, wait seconds, byte cap) -> (HTTP status, body); raises ToolError on network failure.
Getter = Callable[[str, float, int], tuple[int, bytes]]


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme.lower()}://{parts.netloc.lower().rpartition('@')[2]}"


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups name: `ikigai-web-tools/0.1` -> `ikigai-web-tools`."""
    return user_agent.strip().split("/", 1)[0].split(" ", 1)[0] or "*"


class Robots:
    """Fetches each origin's robots.txt once per call and answers whether a URL may be read."""

    def __init__(self, get: Getter, user_agent: str) -> None:
        self._get = get
        self._token = agent_token(user_agent)
        self._rules: dict[str, Any] = {}

    def check(self, url: str) -> None:
        """Return quietly when robots.txt allows `url`, else ROBOTS_DISALLOWED."""
        site = origin(url)
        if site not in self._rules:
            self._rules[site] = self._load(site)
        rules = self._rules[site]
        if rules is not None and not rules.can_fetch(url, self._token):
            raise ToolError(
                ErrorCode.ROBOTS_DISALLOWED,
                f"{site}/robots.txt does not allow {self._token} to fetch {printable_url(url)}. "
                f"Respect it and find another source. {_TURN_OFF}",
            )

    def _load(self, site: str) -> Any:
        """Protego rules, or None when the site has no usable robots.txt (allow all)."""
        status, body = self._get(f"{site}/robots.txt", ROBOTS_WAIT, ROBOTS_MAX_BYTES)
        if status >= 500:
            raise ToolError(
                ErrorCode.ROBOTS_DISALLOWED,
                f"{site}/robots.txt answered HTTP {status}; RFC 9309 says to treat the whole "
                f"site as disallowed until it answers. Try again later. {_TURN_OFF}",
            )
        if not 200 <= status < 300:
            return None  # 4xx: no robots.txt; 3xx: more redirects than RFC 9309 follows
        from protego import Protego  # only for a file to read: 6 ms of imports

        return Protego.parse(body.decode("utf-8", errors="replace"))
