"""What every search tool does around its provider call: domain plan, cache, output shape."""

from __future__ import annotations

import html
import re
from datetime import date
from typing import TYPE_CHECKING, Any

from common.domains import Fetch, Result, fan_out, keep
from common.settings import load

if TYPE_CHECKING:
    from collections.abc import Sequence

    from common.errors import ToolError


def search(
    provider: str,
    fetch: Fetch,
    count: int,
    allowed: Sequence[str],
    blocked: Sequence[str],
    cache_key: object,
) -> dict[str, Any]:
    """The success object for one search; `fetch(site, n)` makes one provider request.

    `fetch` gets the single domain to restrict to natively (or None) and how many results to
    ask for. Several allowed domains fan out in parallel; blocked domains always apply last.
    """
    # Imported here: the cache and the runner pull in orjson, which `--schema` must not pay.
    from common import cache
    from common.runner import warning

    ttl = load().cache_ttl
    key = [provider, cache_key]
    hit = cache.get("search", key, ttl, valid=_is_answer)
    if hit.value is not None:
        return {**hit.value, "cached": True}
    results, extra, failures, complete = _collect(fetch, count, allowed, blocked)
    out: dict[str, Any] = {"success": True, "provider": provider}
    out |= {"results": results, "count": len(results)} | extra
    not_stored = None
    if failures:
        out["warnings"] = [warning(f) for f in failures]
    elif complete:
        not_stored = cache.put("search", key, out, ttl)
    if notes := cache.warnings(hit.warning, not_stored):
        out["warnings"] = [*out.get("warnings", []), *notes]
    return out


def _is_answer(value: Any) -> bool:
    """A cache entry is a search answer in the contract's shape, or a corrupt entry."""
    results = value.get("results") if isinstance(value, dict) else None
    if not isinstance(results, list) or value.get("count") != len(results):
        return False
    shape = value.get("success") is True and isinstance(value.get("provider"), str)
    return shape and all(map(_is_result, results))


def _is_result(item: Any) -> bool:
    return isinstance(item, dict) and all(
        isinstance(item.get(k), str) for k in ("title", "url", "snippet")
    )


def _collect(
    fetch: Fetch, count: int, allowed: Sequence[str], blocked: Sequence[str]
) -> tuple[list[Result], dict[str, Any], list[ToolError], bool]:
    if len(allowed) > 1:
        results, failures = fan_out(fetch, allowed, count)
        return keep(results, allowed, blocked), {}, failures, True
    page = fetch(allowed[0] if allowed else None, count)
    return keep(page.results, allowed, blocked)[:count], page.extra, [], page.complete


_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def plain(text: object) -> str:
    """Provider text as plain text: highlight markup removed, entities decoded, spaces folded."""
    if not isinstance(text, str):
        return ""
    return _SPACE.sub(" ", html.unescape(_TAG.sub("", text))).strip()


def result(title: object, url: str, snippet: object, **extra: Any) -> Result:
    """One result in the shared shape; extras with no value are left out."""
    out: Result = {"title": plain(title), "url": url, "snippet": plain(snippet)}
    return out | {k: v for k, v in extra.items() if v not in (None, "", [])}


def as_dict(value: object) -> dict[str, Any]:
    """A JSON object from a provider, or {} when it is anything else."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """A JSON array from a provider, or [] when it is anything else."""
    return value if isinstance(value, list) else []


def iso_date(value: object) -> str | None:
    """The YYYY-MM-DD an ISO 8601 date or date-time starts with; None for anything else."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        return None
