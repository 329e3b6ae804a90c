"""Validation of a call's arguments: each getter returns a clean value or raises INVALID_INPUT.

The protocol runner has already turned a missing or mistyped *required* field into exit 1;
these getters handle the optional fields and every value check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ikigai_web.common.errors import invalid

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence


def integer(raw: Mapping[str, Any], name: str, default: int, lo: int, hi: int) -> int:
    value = raw.get(name)
    if value is None:
        return default
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(name, value, f"it must be an integer from {lo} to {hi}")
    if not lo <= value <= hi:
        raise invalid(name, value, f"it must be an integer from {lo} to {hi}")
    return value


def boolean(raw: Mapping[str, Any], name: str, *, default: bool) -> bool:
    value = raw.get(name)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid(name, value, "it must be true or false")
    return value


def text(raw: Mapping[str, Any], name: str, *, lo: int = 0, hi: int = 10_000) -> str | None:
    """An optional string, stripped; an empty string counts as absent."""
    value = raw.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(name, value, "it must be a string")
    value = value.strip()
    if not value:
        return None
    if not lo <= len(value) <= hi:
        raise invalid(name, value, f"it must be {lo} to {hi} characters long")
    return value


def query(raw: Mapping[str, Any], name: str = "query", *, lo: int = 2, hi: int = 400) -> str:
    """The required search query, stripped, with its length checked."""
    value = text(raw, name, hi=10**9)
    if value is None or not lo <= len(value) <= hi:
        raise invalid(name, raw.get(name), f"it must be {lo} to {hi} characters long")
    return value


# An optional enum's value that means "not set" ("any" time, the provider's "default"):
# strict schema dialects make every field required, so the model needs a way to say so.
ANY = "any"
DEFAULT = "default"
NOT_SET = (ANY, DEFAULT)


def choice(raw: Mapping[str, Any], name: str, allowed: Sequence[str]) -> str | None:
    """One of `allowed` (any case), or None when absent, empty or a NOT_SET word."""
    value = text(raw, name)
    if value is None or value.lower() in NOT_SET:
        return None
    if value not in allowed:
        lowered = value.lower()
        if lowered not in allowed:
            raise invalid(name, value, "allowed values are " + ", ".join(allowed))
        value = lowered
    return value


def string_list(raw: Mapping[str, Any], name: str, *, most: int = 50) -> list[str]:
    value = raw.get(name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(name, value, "it must be an array of strings")
    if len(value) > most:
        raise invalid(name, value, f"it may hold at most {most} entries")
    return list(value)
