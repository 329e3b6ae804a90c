"""web-search-google-tool: web search through the Google Custom Search JSON API."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common import params as p
from ikigai_web.common.answers import PERSON, Reader
from ikigai_web.common.credentials import resolve, several
from ikigai_web.common.errors import ErrorCode, ToolError, invalid
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.search import domains, reading
from ikigai_web.search.domains import Page, Result
from ikigai_web.search.kit import (
    Link,
    Request,
    as_dict,
    as_list,
    iso_date,
    lazy_output_schema,
    not_an_object,
    prose,
    rate_limited,
    rejected,
    result,
    search,
    shaped,
)
from ikigai_web.search.kit import markdown as search_markdown
from ikigai_web.search.registry import DAY, Field, Provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Reply

# Google Custom Search allows 100 queries a minute per user, and a daily quota (100 free)
# that resets at midnight Pacific time (developers.google.com/custom-search/v1/overview).
PROVIDER = Provider(
    key="google",
    name="Google Custom Search",
    fields=(
        Field("api_key", ("GOOGLE_SEARCH_API_KEY",)),
        Field("engine_id", ("GOOGLE_SEARCH_ENGINE_ID",), secret=False),
    ),
    label="a Google Custom Search API key and a search engine ID",
    signup_url="https://developers.google.com/custom-search/v1/overview",
    # As the docs say it: no new key can be had, so the hint is for those who hold one.
    how="Google has closed the Custom Search JSON API to new customers (existing ones lose "
    "access on 2027-01-01; https://developers.google.com/custom-search/v1/overview): only a "
    "project that already has access can use it, with its key "
    "and its engine's ID (the `cx` value at https://programmablesearchengine.google.com/); "
    "anyone else uses another search tool (web_search_duckduckgo needs no key).",
    place=2,
    rate=(100, 60.0),
    quota_window=DAY,
)
DEFAULT_URL = "https://customsearch.googleapis.com/customsearch/v1"
MAX_QUERY = 2048
MAX_NUM = 10
# Google never returns a result past the 100th: with at most 10 per page, 91 is the last start.
LAST_RESULT = 100
MAX_START = LAST_RESULT - MAX_NUM + 1
_DATE_RESTRICT = re.compile(r"^[dwmy][1-9]\d{0,4}$")
_COUNTRY = re.compile(r"^[a-z]{2}$")
# Google's documented `lr` values, without the `lang_` prefix.
# fmt: off
LANGUAGES = (
    "ar", "bg", "ca", "cs", "da", "de", "el", "en", "es", "et", "fi", "fr", "hr", "hu", "id", "is",
    "it", "iw", "ja", "ko", "lt", "lv", "nl", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sr", "sv",
    "tr", "zh-CN", "zh-TW",
)
# fmt: on
_LANGUAGE_ALIASES = {"he": "iw", "nb": "no", "zh": "zh-CN"}
RATE_REASONS = frozenset(
    {"dailyLimitExceeded", "quotaExceeded", "rateLimitExceeded", "userRateLimitExceeded"}
)
AUTH_REASONS = frozenset({"API_KEY_INVALID", "keyInvalid"})
CLOSED_MARKER = "does not have the access to custom search json api"
PACIFIC = "America/Los_Angeles"
_AUTH_ADVICE = (
    "Google rejected the API key: check GOOGLE_SEARCH_API_KEY, that the key's project has the "
    "Custom Search JSON API enabled and that the key's restrictions allow it."
)
_LATER = "Try again later."

SCHEMA: dict[str, Any] = {
    "name": "web_search_google",
    "description": (
        "Search the web with Google (Custom Search JSON API). Returns up to 10 results per "
        "call, each with title, url and snippet. Use allowed_domains / blocked_domains to "
        "restrict sites and start to page."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query, at least 2 characters."},
            "num": {
                "type": "integer",
                "description": "Number of results (1-10). Default: 10.",
            },
            "start": {
                "type": "integer",
                "description": "1-based index of the first result (1-91); Google stops at "
                "result 100. Use next_start from a previous answer. Default: 1.",
            },
            **domains.SCHEMA_PROPERTIES,
            **reading.SCHEMA_PROPERTIES,
            "safe": {
                "type": "string",
                "enum": ["active", "off", p.DEFAULT],
                "description": "SafeSearch filter; default: Google's own (off).",
            },
            "date_restrict": {
                "type": "string",
                "description": "Only pages from the last n days, weeks, months or years: "
                "d[n], w[n], m[n], y[n], e.g. d7, m6; empty for no limit.",
            },
            "language": {
                "type": "string",
                "description": "Language of results, e.g. en, de, ja, zh-CN; empty for any.",
            },
            "country": {
                "type": "string",
                "description": "Two-letter country code to favour results from, e.g. us, de; "
                "empty for none.",
            },
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (Google)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(results=("published",), extras=("next_start",))


class Params(NamedTuple):
    query: str
    num: int = MAX_NUM
    start: int = 1
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    safe: str | None = None
    date_restrict: str | None = None
    language: str | None = None
    country: str | None = None


def parse_input(raw: dict[str, Any]) -> Params:
    return Params(
        query=p.query(raw, lo=2, hi=MAX_QUERY),
        num=p.integer(raw, "num", MAX_NUM, 1, MAX_NUM),
        start=_start(raw),
        allowed=domains.parse(raw, "allowed_domains"),
        blocked=domains.parse(raw, "blocked_domains"),
        safe=p.choice(raw, "safe", ("active", "off")),
        date_restrict=_date_restrict(p.text(raw, "date_restrict")),
        language=_language(p.text(raw, "language")),
        country=_country(p.text(raw, "country")),
    )


def _start(raw: dict[str, Any]) -> int:
    # With num <= 10, start <= 91 is exactly Google's cap of start + num - 1 <= 100.
    allowed = (
        f"it must be an integer from 1 to {MAX_START}: Google returns at most {LAST_RESULT} "
        "results, so start + num - 1 may not pass 100"
    )
    value = raw.get("start")
    try:
        return p.integer(raw, "start", 1, 1, MAX_START)
    except ToolError:
        raise invalid("start", value, allowed) from None


def _date_restrict(value: str | None) -> str | None:
    if value is not None and not _DATE_RESTRICT.match(value.lower()):
        allowed = "use d[n], w[n], m[n] or y[n] for the last n days, weeks, months or years"
        raise invalid("date_restrict", value, allowed + ", e.g. d7 or m6")
    return value.lower() if value else None


def _language(value: str | None) -> str | None:
    """A language code as Google's `lr` value (`lang_xx`)."""
    if value is None:
        return None
    code = value.replace("_", "-").lower().removeprefix("lang-")
    code = _LANGUAGE_ALIASES.get(code, code)
    for known in LANGUAGES:
        if known.lower() == code:
            return f"lang_{known}"
    raise invalid("language", value, "Google accepts " + ", ".join(LANGUAGES))


def _country(value: str | None) -> str | None:
    if value is not None and not _COUNTRY.match(value.lower()):
        raise invalid("country", value, "it must be a two-letter country code such as us or de")
    return value.lower() if value else None


def request_params(
    params: Params, credentials: dict[str, str], site: str | None, num: int
) -> dict[str, str | int]:
    """The query string of one request; `site` restricts it natively to one domain."""
    query: dict[str, str | int] = {
        "key": credentials["api_key"],
        "cx": credentials["engine_id"],
        "q": params.query,
        "num": num,
        "start": params.start,
    }
    if site is not None:
        query |= {"siteSearch": site, "siteSearchFilter": "i"}
    elif len(params.blocked) == 1:
        query |= {"siteSearch": params.blocked[0], "siteSearchFilter": "e"}
    optional = {
        "safe": params.safe,
        "dateRestrict": params.date_restrict,
        "lr": params.language,
        "gl": params.country,
    }
    return query | {k: v for k, v in optional.items() if v is not None}


def fetch_page(
    link: Link, site: str | None, num: int, *, url: str, engine_id: str, params: Params
) -> Page:
    """One Custom Search request: the only function that touches the network."""
    query = request_params(params, {"api_key": link.credential, "engine_id": engine_id}, site, num)
    headers = {"Accept": "application/json"}
    request = link.http.build_request("GET", url, params=query, headers=headers)
    return shape_output(link.get_json(request, "Google", error_for))


def error_for(reply: Reply) -> ToolError:
    """Google's error answer ({"error": {"message", "errors", "details"}}) as a ToolError."""
    from ikigai_web.net.http import retry_after, said

    error = as_dict(as_dict(reply.data()).get("error"))
    message = prose(error.get("message"))
    found = reasons(error)
    detail = f"({', '.join(found)}) {message}".strip() if found else message
    told = said("Google", reply, detail)
    if reply.status == 429 or RATE_REASONS & set(found):
        return _rate_limit(told, message, found, retry_after(reply))
    if CLOSED_MARKER in message.lower():
        return ToolError(ErrorCode.API_ERROR, f"{told}. {closure_note()}")
    if AUTH_REASONS & set(found) or reply.status in (401, 403):
        return rejected("google", told, _AUTH_ADVICE)
    hint = "Check the parameters and GOOGLE_SEARCH_ENGINE_ID (the cx value)."
    return ToolError(ErrorCode.API_ERROR, f"{told}. {hint if reply.status == 400 else _LATER}")


def reasons(error: dict[str, Any]) -> list[str]:
    """The `reason` of every entry of `errors` (v1 style) and `details` (ErrorInfo), in order."""
    found: list[str] = []
    for key in ("errors", "details"):
        for entry in as_list(error.get(key)):
            reason = entry.get("reason") if isinstance(entry, dict) else None
            if isinstance(reason, str) and reason and reason not in found:
                found.append(reason)
    return found


def closure_note() -> str:
    from ikigai_web.search.registry import every, fallback_order

    others = sorted(every()[key].tool for key in fallback_order() if key != PROVIDER.key)
    return (
        "Google has closed the Custom Search JSON API to new customers, and existing customers "
        "lose access on 2027-01-01. Use another search tool instead: "
        + ", ".join(others)
        + " (web_search_duckduckgo needs no key)."
    )


def _rate_limit(told: str, message: str, found: list[str], wait: int | None) -> ToolError:
    daily = "dailyLimitExceeded" in found or "per day" in message.lower()
    if wait is None and daily:
        wait = seconds_to_pacific_midnight()
    why = "Google's quota is used up (the free quota is 100 queries a day, reset at midnight "
    return rate_limited("google", told, why + "Pacific time)", wait)


def seconds_to_pacific_midnight(now: datetime | None = None) -> int | None:
    """Seconds until the daily quota resets (midnight in California), None without tz data."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        zone = ZoneInfo(PACIFIC)
    except ZoneInfoNotFoundError:
        return None
    here = (now or datetime.now(zone)).astimezone(zone)
    midnight = datetime.combine(here.date() + timedelta(days=1), time(), zone)
    # Timestamps, not wall-clock subtraction, so days with a DST change come out right.
    return max(1, round(midnight.timestamp() - here.timestamp()))


def shape_output(body: Any) -> Page:
    """Google's JSON as a Page of our results, with next_start when Google has more."""
    if not isinstance(body, dict):
        raise not_an_object("Google")
    results = shaped(body.get("items"), _result)
    next_start = _next_start(body)
    return Page(results, next_start is not None, {"next_start": next_start} if next_start else {})


def _result(item: dict[str, Any]) -> Result | None:
    return result(item["title"], item["link"], item.get("snippet"), published=_published(item))


def _next_start(body: dict[str, Any]) -> int | None:
    pages = as_list(as_dict(body.get("queries")).get("nextPage"))
    start = as_dict(pages[0] if pages else None).get("startIndex")
    if isinstance(start, bool) or not isinstance(start, int):
        return None
    # Past MAX_START the next page would cross Google's 100-result cap.
    return start if 1 < start <= MAX_START else None


def _published(item: dict[str, Any]) -> str | None:
    """The page's own `article:published_time`, when Google's pagemap carries it."""
    tags = as_list(as_dict(item.get("pagemap")).get("metatags"))
    value = as_dict(tags[0] if tags else None).get("article:published_time")
    return iso_date(value)


def _credentials() -> dict[str, str]:
    try:
        return resolve(PROVIDER)
    except ToolError as err:
        # Signing up is no longer possible: say so before the model sends a user to try.
        err.message += f" Note: {closure_note()}"
        raise


def arguments(request: Request) -> dict[str, Any]:
    """The common search request as this tool's own arguments."""
    restrict = {"day": "d1", "week": "w1", "month": "m1", "year": "y1"}
    return request.arguments(
        ("num", MAX_NUM), ("date_restrict", restrict.get(request.time_filter or "", ""))
    )


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ikigai_web.net.http import endpoint

    params = parse_input(raw)
    read = (params.query, reading.parse(raw))  # a bad `read` before a missing key
    credentials = _credentials()
    url = endpoint("GOOGLE_SEARCH_API_URL", DEFAULT_URL)
    engine_id = credentials["engine_id"]
    fetch = partial(fetch_page, url=url, engine_id=engine_id, params=params)
    plan = (params.num, params.allowed, params.blocked)
    cache_key = [url, engine_id, params._asdict()]
    keys = several(credentials["api_key"])
    return search("google", settings, fetch, plan, cache_key, keys=keys, read=read)


# --- for a person (--format markdown) and for the model (MCP) --------------------------------


def markdown(call: Mapping[str, Any], answer: Mapping[str, Any], reader: Reader = PERSON) -> str:
    """The shared rendering of search results; the next page is `start`."""
    return search_markdown(call, answer, reader, "start")


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
