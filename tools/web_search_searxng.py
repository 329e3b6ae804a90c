"""web-search-searxng-tool: web search through a SearXNG instance's JSON API."""

from __future__ import annotations

import base64
import re
from dataclasses import asdict, dataclass
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from common import domains
from common import params as p
from common.credentials import PROVIDERS, Field, alternatives, event, missing, optional, resolve
from common.domains import Page
from common.errors import ErrorCode, ToolError, invalid
from common.protocol import main as run_protocol
from common.redact import excerpt, register_secret
from common.search import as_list, iso_date, plain, result, search
from common.settings import load

if TYPE_CHECKING:
    from collections.abc import Mapping

    import httpx

    from common.http import Deadline

MAX_QUERY = 400
MAX_PAGE = 50
TIME_RANGES = ("day", "week", "month", "year")
SAFESEARCH = {"off": 0, "moderate": 1, "strict": 2}
# An optional secret for instances behind a proxy that asks for a login.
AUTH = Field("auth", ("SEARXNG_AUTH",))
_NAME = re.compile(r"^[a-z0-9][a-z0-9 _.-]{0,39}$")
_LANG = re.compile(r"^(all|auto|[a-z]{2,3}(-[a-z0-9]{2,4}){0,2})$")
# A 403 is the JSON format being disabled unless it looks like a login wall.
_AUTH_WORDS = re.compile(
    r"auth|log ?in|sign ?in|token|credential|password|api.?key|unauthori[sz]ed", re.IGNORECASE
)
_FIX_FORMAT = (
    "in the instance's settings.yml set `search: formats: [html, json]` (keep html, add json) "
    "and restart SearXNG"
)
_MAX_ANSWERS = 5
_MAX_SUGGESTIONS = 10
_MAX_INFOBOXES = 3
_MAX_TEXT = 1000

_NAMES_HELP = "a list of names such as {}, or one comma-separated string"
SCHEMA: dict[str, Any] = {
    "name": "web_search_searxng",
    "description": (
        "Search the web through a SearXNG metasearch instance. Returns up to 20 results, each "
        "with title, url, snippet and the engines that found it, plus SearXNG's answers and "
        "suggestions when it has any. Use allowed_domains / blocked_domains to restrict sites."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query, 2-400 characters."},
            "max_results": {
                "type": "integer",
                "minimum": 1,
                "maximum": 20,
                "default": 10,
                "description": "Number of results (1-20), taken from the top of the page.",
            },
            "page": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_PAGE,
                "default": 1,
                "description": "SearXNG result page (1-50; a page holds about 10-30 results). "
                "Use next_offset from a previous answer.",
            },
            "time_range": {
                "type": "string",
                "enum": list(TIME_RANGES),
                "description": "Only results from the last day, week, month or year (engines "
                "that cannot filter by time are skipped by SearXNG).",
            },
            "language": {
                "type": "string",
                "description": "Language of results: all, auto, or a code such as en, de, en-US.",
            },
            "safesearch": {
                "type": "string",
                "enum": list(SAFESEARCH),
                "description": "Adult content filter (0, 1, 2 also accepted); default is the "
                "instance's setting.",
            },
            "categories": {
                "type": "array",
                "items": {"type": "string"},
                "description": "SearXNG categories, e.g. general, news, science, it.",
            },
            "engines": {
                "type": "array",
                "items": {"type": "string"},
                "description": "SearXNG engines, e.g. duckduckgo, wikipedia, github.",
            },
            **domains.SCHEMA_PROPERTIES,
        },
        "required": ["query"],
    },
}


@dataclass(frozen=True)
class Params:
    query: str
    max_results: int = 10
    page: int = 1
    time_range: str | None = None
    language: str | None = None
    safesearch: int | None = None
    categories: tuple[str, ...] = ()
    engines: tuple[str, ...] = ()
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()


@dataclass(frozen=True)
class Instance:
    """Where to send the search and how to log in; `shown` is safe to print."""

    endpoint: str
    shown: str
    headers: dict[str, str]

    @property
    def has_auth(self) -> bool:
        return "Authorization" in self.headers


def parse_input(raw: dict[str, Any]) -> Params:
    return Params(
        query=p.query(raw, lo=2, hi=MAX_QUERY),
        max_results=p.integer(raw, "max_results", 10, 1, 20),
        page=p.integer(raw, "page", 1, 1, MAX_PAGE),
        time_range=p.choice(raw, "time_range", TIME_RANGES),
        language=_language(p.text(raw, "language")),
        safesearch=_safesearch(raw.get("safesearch")),
        categories=_names(raw, "categories", "general, news, it"),
        engines=_names(raw, "engines", "duckduckgo, wikipedia"),
        allowed=domains.parse(raw, "allowed_domains"),
        blocked=domains.parse(raw, "blocked_domains"),
    )


def _language(value: str | None) -> str | None:
    if value is None:
        return None
    if not _LANG.match(value.lower()):
        raise invalid("language", value, "it must be all, auto or a code such as en or en-US")
    # Written the way SearXNG's locales are: en-US, zh-Hans-CN.
    lang, *rest = value.split("-")
    return "-".join([lang.lower(), *(_subtag(part) for part in rest)])


def _subtag(part: str) -> str:
    return part.upper() if len(part) == 2 else part.title()


def _safesearch(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value in (0, 1, 2):
        return value
    if isinstance(value, str) and value.strip().lower() in SAFESEARCH:
        return SAFESEARCH[value.strip().lower()]
    if isinstance(value, str) and value.strip() in ("0", "1", "2"):
        return int(value.strip())
    raise invalid("safesearch", value, "allowed values are off, moderate, strict (or 0, 1, 2)")


def _names(raw: Mapping[str, Any], name: str, examples: str) -> tuple[str, ...]:
    value = raw.get(name)
    if isinstance(value, str):
        value = value.split(",")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(name, value, "it must be " + _NAMES_HELP.format(examples))
    names = [v.strip().lower() for v in value if v.strip()]
    for item in names:
        if not _NAME.match(item):
            raise invalid(name, item, "each entry must be a SearXNG name such as " + examples)
    return tuple(dict.fromkeys(names))


def instance() -> Instance:
    """The configured instance, or AUTH_MISSING when SEARXNG_URL is missing or unusable."""
    provider = PROVIDERS["searxng"]
    base = resolve(provider)["url"]
    parts = urlsplit(base)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise missing(
            provider,
            f"the configured URL (SEARXNG_URL or web_search.searxng.url) is {base!r}, which is "
            "not an http(s) URL such as https://searx.example.org",
        )
    if parts.password:
        register_secret(parts.password)
    shown = parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="")
    endpoint = base.split("?", 1)[0].split("#", 1)[0].rstrip("/") + "/search"
    return Instance(endpoint, shown.geturl().rstrip("/"), _auth_headers(optional(provider, AUTH)))


def _auth_headers(auth: str | None) -> dict[str, str]:
    """SEARXNG_AUTH as a header: user:password is HTTP Basic, anything else a bearer token."""
    if auth is None:
        return {}
    scheme = auth.split(" ", 1)[0].lower()
    if scheme in ("basic", "bearer") and " " in auth:
        return {"Authorization": auth}
    if ":" in auth:
        user, _, password = auth.partition(":")
        register_secret(password)
        token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
        register_secret(token)
        return {"Authorization": f"Basic {token}"}
    return {"Authorization": f"Bearer {auth}"}


def request_params(params: Params, site: str | None) -> dict[str, str | int]:
    query: dict[str, str | int] = {
        "q": f"{params.query} site:{site}" if site else params.query,
        "format": "json",
        "pageno": params.page,
    }
    optional_values = {
        "time_range": params.time_range,
        "language": params.language,
        "safesearch": params.safesearch,
        "categories": ",".join(params.categories) or None,
        "engines": ",".join(params.engines) or None,
    }
    return query | {k: v for k, v in optional_values.items() if v is not None}


def fetch_page(
    http: httpx.Client, deadline: Deadline, where: Instance, params: Params,
    site: str | None, _count: int,
) -> Page:  # fmt: skip
    """One SearXNG request: the only function that touches the network.

    SearXNG cannot be asked for a count: the whole page comes back and the caller trims it.
    """
    from common.http import json_body, retry_after, send

    request = http.build_request(
        "GET", where.endpoint, params=request_params(params, site), headers=where.headers
    )
    response = send(http, request, deadline)
    if response.status_code != 200:
        raise error_for(response.status_code, response.headers, response.text,
                        retry_after(response), where)  # fmt: skip
    if _looks_like_html(response):
        raise not_json(where, response.text)
    return shape_output(json_body(response, "SearXNG"), params.page)


def _looks_like_html(response: httpx.Response) -> bool:
    # By the body, not the Content-Type: proxies mislabel, and JSON never starts with "<".
    return response.text.lstrip()[:1] == "<"


def not_json(where: Instance, text: str) -> ToolError:
    return ToolError(
        ErrorCode.API_ERROR,
        f"SearXNG at {where.shown} answered HTTP 200 with an HTML page instead of JSON "
        f"({_excerpt(text)!r}). Check that SEARXNG_URL is the instance's base URL (the tool "
        "requests <SEARXNG_URL>/search?format=json) and, if a login page sits in front of "
        "the instance, set SEARXNG_AUTH.",
    )


def error_for(
    status: int, headers: Mapping[str, str], text: str, wait: int | None, where: Instance
) -> ToolError:
    """SearXNG's (or its proxy's) error answer as a ToolError."""
    said = f"SearXNG at {where.shown} answered HTTP {status}"
    if status == 401 or (status == 403 and _auth_failure(headers, text)):
        return _auth_invalid(said, text, where)
    if status == 403:
        return ToolError(
            ErrorCode.API_ERROR,
            f"{said}: the instance has the JSON format disabled, so it refuses API searches. "
            f"To fix it, {_FIX_FORMAT}.",
        )
    if status == 429:
        return _rate_limit(said, wait)
    reason = _error_text(text)
    if status == 400 and reason:
        return ToolError(
            ErrorCode.INVALID_INPUT, f"{said}: SearXNG rejected a parameter: {reason}."
        )
    return ToolError(ErrorCode.API_ERROR, f"{said}: {reason or _excerpt(text) or 'no body'}.")


def _auth_failure(headers: Mapping[str, str], text: str) -> bool:
    return "www-authenticate" in {k.lower() for k in headers} or bool(
        _AUTH_WORDS.search(plain(text[:4000]))
    )


def _auth_invalid(said: str, text: str, where: Instance) -> ToolError:
    if where.has_auth:
        why = "the instance (or the proxy in front of it) rejected SEARXNG_AUTH"
    else:
        why = "the instance sits behind a login and SEARXNG_AUTH is not set"
    detail = _excerpt(text)
    message = (
        f"{said}{f' ({detail})' if detail else ''}: {why}. Set SEARXNG_AUTH to 'user:password' "
        "for HTTP Basic auth, or to the bearer token the proxy expects."
    )
    return ToolError(ErrorCode.AUTH_INVALID, message)


def _rate_limit(said: str, wait: int | None) -> ToolError:
    alts = alternatives("web_search_searxng")
    message = f"{said}: SearXNG's limiter is refusing requests from this address; wait"
    message += f" {wait} s" if wait is not None else " a while"
    message += ", use another search tool (" + ", ".join(alts) + "), or let this client "
    message += "through in the instance's limiter.toml (botdetection pass_ip)."
    rate_event = event(PROVIDERS["searxng"], "rate_limit", alts)
    return ToolError(ErrorCode.RATE_LIMIT, message, retry_after=wait, event=rate_event)


def _error_text(text: str) -> str:
    """The `error` of SearXNG's JSON error body ({"error": "..."}), if that is what it is."""
    import orjson

    try:
        body = orjson.loads(text)
    except orjson.JSONDecodeError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    return excerpt(plain(error), 300) if isinstance(error, str) else ""


def _excerpt(text: str) -> str:
    return excerpt(plain(text))


def shape_output(body: Any, page: int) -> Page:
    """SearXNG's JSON as a Page of our results, with next_offset when more pages seem likely."""
    if not isinstance(body, dict):
        raise ToolError(
            ErrorCode.API_ERROR, "SearXNG answered HTTP 200 with JSON that is not an object"
        )
    items = as_list(body.get("results"))
    results = [
        result(i.get("title") or i["url"], i["url"], i.get("content"),
               published=iso_date(i.get("publishedDate")), engines=_engines(i))
        for i in items if _usable(i)
    ]  # fmt: skip
    extra: dict[str, Any] = {"next_offset": page + 1} if _more(body, results, page) else {}
    return Page(results, "next_offset" in extra, extra | _extras(body))


def _usable(item: object) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("url"), str)
        and item["url"].startswith(("http://", "https://"))
    )


def _engines(item: dict[str, Any]) -> list[str]:
    engines = as_list(item.get("engines")) or [item.get("engine")]
    return [e for e in engines if isinstance(e, str) and e]


def _more(body: dict[str, Any], results: list[Any], page: int) -> bool:
    # SearXNG never says whether another page exists; number_of_results is an engine
    # estimate and often 0 (unknown). A page with results and no estimate against it counts.
    if not results or page >= MAX_PAGE:
        return False
    estimate = body.get("number_of_results")
    if isinstance(estimate, int | float) and estimate > 0:
        return bool(estimate > page * len(results))
    return True


def _extras(body: dict[str, Any]) -> dict[str, Any]:
    extra: dict[str, Any] = {
        "answers": _answers(body.get("answers")),
        "suggestions": _strings(body.get("suggestions"))[:_MAX_SUGGESTIONS],
        "infoboxes": _infoboxes(body.get("infoboxes")),
    }
    failed = _unresponsive(body.get("unresponsive_engines"))
    if failed:
        message = "SearXNG engines that did not answer: " + ", ".join(failed)
        extra["warnings"] = [{"code": ErrorCode.API_ERROR.value, "message": message}]
    return {k: v for k, v in extra.items() if v}


def _strings(value: object) -> list[str]:
    return [text for text in (plain(v)[:_MAX_TEXT] for v in as_list(value)) if text]


def _answers(value: object) -> list[str]:
    # Older SearXNG sends strings, newer ones objects with an `answer` field.
    texts = [i.get("answer") if isinstance(i, dict) else i for i in as_list(value)]
    return _strings(texts)[:_MAX_ANSWERS]


def _infoboxes(value: object) -> list[dict[str, str]]:
    boxes = [b for b in as_list(value) if isinstance(b, dict)]
    out = []
    for box in boxes[:_MAX_INFOBOXES]:
        shaped = {
            "title": plain(box.get("infobox")),
            "content": plain(box.get("content"))[:_MAX_TEXT],
            "url": _infobox_url(box),
        }
        if shaped["title"] or shaped["content"]:
            out.append({k: v for k, v in shaped.items() if v})
    return out


def _infobox_url(box: dict[str, Any]) -> str:
    urls = [u.get("url") for u in as_list(box.get("urls")) if isinstance(u, dict)]
    candidates = [box.get("id"), *urls]
    return next(
        (u for u in candidates if isinstance(u, str) and u.startswith(("http://", "https://"))),
        "",
    )


def _unresponsive(value: object) -> list[str]:
    pairs = [i for i in as_list(value) if isinstance(i, list) and i and isinstance(i[0], str)]
    return [f"{i[0]} ({plain(i[1])})" if len(i) > 1 and i[1] else i[0] for i in pairs]


def execute(raw: dict[str, Any]) -> dict[str, Any]:
    from common.http import Deadline, client

    params = parse_input(raw)
    where = instance()
    settings = load()
    # Redirects are followed (http -> https, a trailing-slash redirect); httpx drops the
    # Authorization header when a redirect leaves the instance's origin.
    with client(settings, follow_redirects=True) as http:
        fetch = partial(fetch_page, http, Deadline(settings.timeout), where, params)
        return search(
            "searxng", fetch, params.max_results, params.allowed, params.blocked,
            [where.endpoint, asdict(params)],
        )  # fmt: skip


def main() -> None:
    run_protocol(SCHEMA, execute)
