"""web-search-brave-tool: web search through the Brave Search Web API."""

from __future__ import annotations

import re
from datetime import date
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
    plain,
    prose,
    rate_limited,
    rejected,
    result,
    search,
    shaped,
    snippets,
)
from ikigai_web.search.kit import markdown as search_markdown
from ikigai_web.search.registry import MONTH, Field, Provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Reply

# Brave: its Free plan and older plans allow 1 request a second (the current Search plan 50,
# which its headers then tell pacing). Its quota is monthly: the window of the second limit
# its X-RateLimit-Policy names (`2000;w=2592000`), counted as a calendar month.
PROVIDER = Provider(
    key="brave",
    name="Brave Search",
    fields=(Field("api_key", ("BRAVE_API_KEY",)),),
    label="a Brave Search API key",
    signup_url="https://brave.com/search/api/",
    how="Sign up at https://brave.com/search/api/, choose a Search plan and create a key.",
    place=1,
    rate=(1, 1.0),
    quota_window=MONTH,
)
DEFAULT_URL = "https://api.search.brave.com/res/v1/web/search"
MAX_QUERY = 400
FRESHNESS = {"day": "pd", "week": "pw", "month": "pm", "year": "py"}
_RANGE = re.compile(r"^(\d{4}-\d{2}-\d{2})to(\d{4}-\d{2}-\d{2})$")
# Brave's documented `country` values.
COUNTRIES = (
    *("AR", "AU", "AT", "BE", "BR", "CA", "CL", "DK", "FI", "FR", "DE", "GR", "HK", "IN", "ID"),
    *("IT", "JP", "KR", "MY", "MX", "NL", "NZ", "NO", "CN", "PL", "PT", "PH", "RU", "SA", "ZA"),
    *("ES", "SE", "CH", "TW", "TR", "GB", "US", "ALL"),
)
_LANG = re.compile(r"^[a-z]{2}(-[a-z]{2,4})?$")

SCHEMA: dict[str, Any] = {
    "name": "web_search_brave",
    "description": (
        "Search the web with Brave Search. Returns up to 20 results, each with title, url and "
        "snippet. Use allowed_domains / blocked_domains to restrict sites."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query, 2-400 characters."},
            "count": {
                "type": "integer",
                "description": "Number of results (1-20). Default: 10.",
            },
            "offset": {
                "type": "integer",
                "description": "Page index in units of count (0-9): offset 1 with count 10 "
                "returns results 11-20. Use next_offset from a previous answer. Default: 0.",
            },
            **domains.SCHEMA_PROPERTIES,
            **reading.SCHEMA_PROPERTIES,
            "freshness": {
                "type": "string",
                "description": "Age of results: day, week, month, year, or a date range "
                "YYYY-MM-DDtoYYYY-MM-DD; any (or empty) for no limit.",
            },
            "country": {
                "type": "string",
                "description": "Two-letter country code for regional results, e.g. US, GB, "
                "DE; empty for none.",
            },
            "search_lang": {
                "type": "string",
                "description": "Language of results, e.g. en, de, pt-br; empty for any.",
            },
            "safesearch": {
                "type": "string",
                "enum": ["off", "moderate", "strict", p.DEFAULT],
                "description": "Adult content filter; default: Brave's own (moderate).",
            },
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (Brave)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(
    results=("published", "age", "extra_snippets"), extras=("next_offset",)
)


class Params(NamedTuple):
    query: str
    count: int = 10  # type: ignore[assignment] # shadows tuple.count, which nothing calls
    offset: int = 0
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    freshness: str | None = None
    country: str | None = None
    search_lang: str | None = None
    safesearch: str | None = None


def parse_input(raw: dict[str, Any]) -> Params:
    return Params(
        query=p.query(raw, lo=2, hi=MAX_QUERY),
        count=p.integer(raw, "count", 10, 1, 20),
        offset=p.integer(raw, "offset", 0, 0, 9),
        allowed=domains.parse(raw, "allowed_domains"),
        blocked=domains.parse(raw, "blocked_domains"),
        freshness=_freshness(p.text(raw, "freshness")),
        country=_country(p.text(raw, "country")),
        search_lang=_search_lang(p.text(raw, "search_lang")),
        safesearch=p.choice(raw, "safesearch", ("off", "moderate", "strict")),
    )


def _freshness(value: str | None) -> str | None:
    if value is not None and value.lower() in p.NOT_SET:
        return None
    if value is None or value.lower() in FRESHNESS:
        return FRESHNESS[value.lower()] if value else None
    allowed = "allowed values are day, week, month, year or YYYY-MM-DDtoYYYY-MM-DD"
    match = _RANGE.match(value)
    if not match:
        raise invalid("freshness", value, allowed)
    try:
        start, end = (date.fromisoformat(d) for d in match.groups())
    except ValueError:
        raise invalid("freshness", value, allowed + " with real dates") from None
    if start > end:
        raise invalid("freshness", value, "the range must start on or before its end")
    return value


def _country(value: str | None) -> str | None:
    if value is not None and value.upper() not in COUNTRIES:
        raise invalid("country", value, "Brave accepts " + ", ".join(COUNTRIES))
    return value.upper() if value else None


def _search_lang(value: str | None) -> str | None:
    if value is not None and not _LANG.match(value.lower()):
        raise invalid("search_lang", value, "it must be a language code such as en, de or pt-br")
    return value.lower() if value else None


def build_query(params: Params, site: str | None) -> str:
    """The query with `site:` for a native restriction and `-site:` for blocked domains."""
    q = f"{params.query} site:{site}" if site else params.query
    excluded = " ".join(f"-site:{d}" for d in params.blocked)
    # Exclusions only save the page from waste; past Brave's limit the post-filter suffices.
    return f"{q} {excluded}" if excluded and len(q) + len(excluded) < MAX_QUERY else q


def request_params(params: Params, site: str | None, count: int) -> dict[str, str | int]:
    query: dict[str, str | int] = {
        "q": build_query(params, site),
        "count": count,
        "offset": params.offset,
        "text_decorations": "false",
        "extra_snippets": "true",
    }
    optional = {
        "freshness": params.freshness,
        "country": params.country,
        "search_lang": params.search_lang,
        "safesearch": params.safesearch,
    }
    return query | {k: v for k, v in optional.items() if v is not None}


def fetch_page(link: Link, site: str | None, count: int, *, url: str, params: Params) -> Page:
    """One Brave request: the only function that touches the network."""
    headers = {"X-Subscription-Token": link.credential, "Accept": "application/json"}
    query = request_params(params, site, count)
    request = link.http.build_request("GET", url, params=query, headers=headers)
    body = link.get_json(request, "Brave", error_for, wait_hint=reset_seconds)
    return shape_output(body, params.offset)


def reset_seconds(reply: Reply) -> int | None:
    """Seconds to wait: the first value of X-RateLimit-Reset (seconds, or a Unix time as some
    gateways send), at most a month, else Retry-After."""
    from ikigai_web.net.http import delay_seconds, retry_after

    first = reply.headers.get("x-ratelimit-reset", "").split(",")[0].strip()
    found = delay_seconds(first, MONTH)
    return found if found is not None else retry_after(reply)


def error_for(reply: Reply) -> ToolError:
    """Brave's error answer ({"error": {"code", "detail", "meta"}}) as a ToolError."""
    from ikigai_web.net.http import said

    error = as_dict(as_dict(reply.data()).get("error"))
    code = str(error.get("code", ""))
    # A code that only repeats the status says nothing; with no words either, the body does.
    detail = ": ".join(
        part for part in (code, _detail(error)) if part and part != str(reply.status)
    )
    told = said("Brave", reply, detail)
    if reply.status in (401, 403) or "SUBSCRIPTION_TOKEN" in code.upper():
        advice = "The API key was rejected: check BRAVE_API_KEY or get a new key."
        return rejected("brave", told, advice)
    if reply.status == 429:
        why = "Brave's rate limit or monthly quota is used up"
        return rate_limited("brave", told, why, reset_seconds(reply))
    if reply.status == 422 and code.upper() == "VALIDATION":
        return ToolError(ErrorCode.INVALID_INPUT, f"{told}. Fix the parameters Brave names.")
    return ToolError(ErrorCode.API_ERROR, f"{told}. Try again later.")


def _detail(error: dict[str, Any]) -> str:
    detail = str(error.get("detail", "")).strip()
    for problem in as_list(as_dict(error.get("meta")).get("errors")):
        if isinstance(problem, dict) and problem.get("msg"):
            where = ".".join(str(x) for x in as_list(problem.get("loc")) if x != "query")
            detail += f"; {where}: {problem['msg']}" if where else f"; {problem['msg']}"
    return prose(detail)


def shape_output(body: Any, offset: int) -> Page:
    """Brave's JSON as a Page of our results, with next_offset when Brave has more."""
    if not isinstance(body, dict):
        raise not_an_object("Brave")
    results = shaped(as_dict(body.get("web")).get("results"), _result)
    more = bool(as_dict(body.get("query")).get("more_results_available")) and offset < 9
    return Page(results, more, {"next_offset": offset + 1} if more else {})


def _result(item: dict[str, Any]) -> Result | None:
    extra = snippets(item.get("extra_snippets"))
    age, published = plain(item.get("age"), 100), iso_date(item.get("page_age"))
    return result(
        item["title"], item["url"], item.get("description"), age=age, published=published,
        extra_snippets=extra,
    )  # fmt: skip


def arguments(request: Request) -> dict[str, Any]:
    """The common search request as this tool's own arguments."""
    return request.arguments(("count", 20), ("freshness", request.time_filter or ""))


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ikigai_web.net.http import endpoint

    params = parse_input(raw)
    read = (params.query, reading.parse(raw))  # a bad `read` before a missing key
    keys = several(resolve(PROVIDER)["api_key"])
    url = endpoint("BRAVE_SEARCH_API_URL", DEFAULT_URL)
    fetch = partial(fetch_page, url=url, params=params)
    plan = (params.count, params.allowed, params.blocked)
    return search("brave", settings, fetch, plan, [url, params._asdict()], keys=keys, read=read)


# --- for a person (--format markdown) and for the model (MCP) --------------------------------


def markdown(call: Mapping[str, Any], answer: Mapping[str, Any], reader: Reader = PERSON) -> str:
    """The shared rendering of search results; the next page is `offset`."""
    return search_markdown(call, answer, reader, "offset")


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
