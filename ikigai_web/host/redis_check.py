"""`web-tools doctor`'s look at the Redis server of IKIGAI_WEB_REDIS_URL: whether it answers,
whether anyone could use it without a password or read it on the way, and how far the tools
trust what it holds (ikigai_web/common/state.py)."""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ikigai_web.common.redact import drop_userinfo, printable_url
from ikigai_web.common.state import (
    CONNECT_TIMEOUT,
    READ_TIMEOUT,
    SECRET_SETTING,
    SETTING,
    redis_failure,
)

NO_SECRET = (
    f"{SECRET_SETTING} is not set: whoever can write to that Redis server is trusted. They can "
    "plant a cached page or search answer that every machine then returns as cached, and "
    "hold or release any key's turns. Set the same long random secret on every machine of "
    "the fleet (`openssl rand -hex 32`): entries without its signature are then ignored."
)


@dataclass
class RedisCheck:
    """What doctor reports: one line, and what to warn about or fix."""

    summary: str
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def examine_redis(url: str, *, secret: bool) -> RedisCheck:
    """Ask the server at `url`, as the tools would, and once more without the password."""
    where = printable_url(url)
    found = RedisCheck(f"Redis at {where} ({SETTING})")
    try:
        import redis
    except ImportError:
        found.problems.append(
            f"{SETTING} names a Redis server, but the redis extra is not installed: every call "
            "uses this machine's local files. Install ikigai-web-tools[redis]."
        )
        return found
    why = _ping(redis, url)
    if why:
        found.problems.append(
            f"the Redis server at {where} ({SETTING}) {why}: every call uses this machine's "
            "local files instead, unshared. Check that Redis runs and the URL and password "
            "are right."
        )
        return found
    found.summary += ", answers"
    found.summary += "; entries signed with " + SECRET_SETTING if secret else "; entries unsigned"
    if not _ping(redis, drop_userinfo(url)):
        found.warnings.append(
            f"the Redis server at {where} answers without a password: anyone who can reach it "
            "can read what the tools keep there and write to it. Set one (`requirepass`, or "
            "an ACL user) and put it in the URL."
        )
    if _in_the_clear(url):
        found.warnings.append(
            f"the Redis server at {where} is reached in the clear (redis://) at an address "
            "that is not this machine's: its password and every entry cross the network "
            "readable. Use rediss:// (TLS)."
        )
    if not secret:
        found.warnings.append(NO_SECRET)
    return found


def _ping(redis: Any, url: str) -> str:
    """Why the server at `url` did not answer a PING; "" when it did."""
    client = None
    try:
        client = redis.Redis.from_url(url, socket_connect_timeout=CONNECT_TIMEOUT,
                                      socket_timeout=READ_TIMEOUT)  # fmt: skip
        client.ping()
    except Exception as exc:  # noqa: BLE001 - the client's errors and whatever it lets through
        return redis_failure(exc)
    finally:
        if client is not None:
            client.close()
    return ""


def _in_the_clear(url: str) -> bool:
    """Whether `url` is redis:// (no TLS) to a host that is not loopback."""
    parts = urlsplit(url)
    if parts.scheme.lower() != "redis":
        return False
    host = (parts.hostname or "localhost").strip("[]")
    try:
        found = {str(info[4][0]) for info in socket.getaddrinfo(host, None)}
    except (OSError, UnicodeError):
        return True  # cannot tell: better said
    return not found or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in found)
