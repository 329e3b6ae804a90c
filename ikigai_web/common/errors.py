"""The closed set of error codes and the one exception type every tool raises."""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """Every `error_code` a tool may report (protocol.md, section 2)."""

    INVALID_INPUT = "INVALID_INPUT"
    AUTH_MISSING = "AUTH_MISSING"
    AUTH_INVALID = "AUTH_INVALID"
    RATE_LIMIT = "RATE_LIMIT"
    NETWORK_ERROR = "NETWORK_ERROR"
    API_ERROR = "API_ERROR"
    HTTP_ERROR = "HTTP_ERROR"
    BLOCKED_URL = "BLOCKED_URL"
    ROBOTS_DISALLOWED = "ROBOTS_DISALLOWED"
    TOO_LARGE = "TOO_LARGE"
    UNSUPPORTED_CONTENT = "UNSUPPORTED_CONTENT"
    PARSE_ERROR = "PARSE_ERROR"


# What a page that is not the content is (protocol.md, sections 6 and 7): a failure's `wall`,
# or a paywalled article's, which keeps its free part.
WALLS = (
    "bot_check",
    "sign_in",
    "paywall",
    "not_found",
    "error_page",
    "parked",
    "empty",
    "consent",
    "age_gate",
    "region_block",
    "rate_limited",
)


class ToolError(Exception):
    """A failure reported to the model as `{"success": false, ...}` with exit 0."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        retry_after: int | None = None,
        event: dict[str, Any] | None = None,
        wall: str | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after
        self.event = event
        self.wall = wall  # one of WALLS: the page fetched is a wall, not the content


class UsageError(Exception):
    """The input is unusable as a call: exit 1 with a one-line message on stderr."""


def invalid(field: str, value: object, allowed: str) -> ToolError:
    """INVALID_INPUT naming the field, the value received and what is allowed."""
    shown = spelled(value)
    if len(shown) > 80:
        shown = shown[:77] + "..."
    return ToolError(ErrorCode.INVALID_INPUT, f"'{field}' is {shown}; {allowed}.")


def spelled(value: object) -> str:
    """A value as the caller wrote it in JSON: true, null, "text", a huge integer exactly."""
    import json

    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)
