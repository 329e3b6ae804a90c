"""web-search-searxng-tool: web search through a SearXNG instance's JSON API."""

from __future__ import annotations

import re
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from ikigai_web.common import params as p
from ikigai_web.common.answers import PERSON, Reader
from ikigai_web.common.credentials import optional, resolve, usable
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
    result,
    search,
    shaped,
    web_url,
)
from ikigai_web.search.kit import markdown as search_markdown
from ikigai_web.search.registry import Field, Provider

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Reply

PROVIDER = Provider(
    key="searxng",
    name="SearXNG",
    fields=(Field("url", ("SEARXNG_URL",), secret=False),),
    label="the base URL of a SearXNG instance",
    signup_url="https://docs.searxng.org/",
    how="Point it at a SearXNG instance you run (see https://docs.searxng.org/); its "
    "settings.yml must enable the JSON format: `search: formats: [html, json]`.",
    place=4,
)
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
                "description": "Number of results (1-20), taken from the top of the page. "
                "Default: 10.",
            },
            "page": {
                "type": "integer",
                "description": "SearXNG result page (1-50; a page holds about 10-30 results). "
                "Use next_offset from a previous answer. Default: 1.",
            },
            "time_range": {
                "type": "string",
                "enum": [*TIME_RANGES, p.ANY],
                "description": "Only results from the last day, week, month or year (engines "
                "that cannot filter by time are skipped by SearXNG); any for no limit.",
            },
            "language": {
                "type": "string",
                "description": "Language of results: all, auto, or a code such as en, de, "
                "en-US; empty for the instance's default.",
            },
            "safesearch": {
                "type": "string",
                "enum": [*SAFESEARCH, p.DEFAULT],
                "description": "Adult content filter (0, 1, 2 also accepted); default: the "
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
            **reading.SCHEMA_PROPERTIES,
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (SearXNG)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(
    results=("published", "engines"),
    extras=("next_offset", "answers", "suggestions", "infoboxes"),
)


class Params(NamedTuple):
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


class Instance(NamedTuple):
    """Where to send the search and how to log in; `shown` is safe to print."""

    endpoint: str
    shown: str
    headers: dict[str, str]

    @property
    def has_auth(self) -> bool:
        return "Authorization" in self.headers

    @property
    def url_login(self) -> bool:
        """SEARXNG_URL carries user:password, which goes as HTTP Basic auth."""
        return "@" in urlsplit(self.endpoint).netloc


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
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", *p.NOT_SET)):
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
    """The configured instance: AUTH_MISSING when SEARXNG_URL is not set, INVALID_INPUT when
    it is no URL a request can go to."""
    from ikigai_web.net.http import configured_url, register_url_login

    provider = PROVIDER
    base = resolve(provider)["url"]
    name = "SEARXNG_URL (or web_search.searxng.url)"
    parts = urlsplit(configured_url(base, name, "https://searx.example.org"))
    register_url_login(base)
    shown = parts._replace(netloc=parts.netloc.rpartition("@")[2], query="", fragment="")
    endpoint = base.split("?", 1)[0].split("#", 1)[0].rstrip("/") + "/search"
    return Instance(endpoint, shown.geturl().rstrip("/"), _auth_headers(optional(provider, AUTH)))


def _auth_headers(auth: str | None) -> dict[str, str]:
    """SEARXNG_AUTH as a header: user:password is HTTP Basic, anything else a bearer token."""
    from ikigai_web.net.http import register_login

    if auth is None:
        return {}
    scheme = auth.split(" ", 1)[0].lower()
    if ":" in auth and not (scheme in ("basic", "bearer") and " " in auth):
        user, _, password = auth.partition(":")
        return {"Authorization": f"Basic {register_login(user, password)}"}
    # Sent as written: a header carries printable ASCII only (a password in user:password
    # may be any text: its Basic token is ASCII).
    usable(AUTH, auth, header=True)
    verbatim = scheme in ("basic", "bearer") and " " in auth
    return {"Authorization": auth if verbatim else f"Bearer {auth}"}


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
    link: Link, site: str | None, _count: int, *, where: Instance, params: Params
) -> Page:
    """One SearXNG request: the only function that touches the network.

    SearXNG cannot be asked for a count: the whole page comes back and the caller trims it.
    """
    from ikigai_web.net.http import send

    query = request_params(params, site)
    request = link.http.build_request("GET", where.endpoint, params=query, headers=where.headers)
    reply = send(link.http, request, link.deadline)
    if reply.status != 200:
        raise error_for(reply, where)
    if reply.body.lstrip()[:1] == b"<":
        # By the body, not the Content-Type: proxies mislabel, and JSON never starts with "<".
        raise not_json(where, reply)
    return shape_output(reply.json("SearXNG"), params.page)


def not_json(where: Instance, reply: Reply) -> ToolError:
    from ikigai_web.net.http import words

    return ToolError(
        ErrorCode.API_ERROR,
        f"SearXNG at {where.shown} answered HTTP 200 with an HTML page instead of JSON "
        f"({words(reply)!r}). Check that SEARXNG_URL is the instance's base URL (the tool "
        "requests <SEARXNG_URL>/search?format=json) and, if a login page sits in front of "
        "the instance, set SEARXNG_AUTH.",
    )


def error_for(reply: Reply, where: Instance) -> ToolError:
    """SearXNG's (or its proxy's) error answer as a ToolError."""
    from ikigai_web.net.http import retry_after, said

    reason = prose(as_dict(reply.data()).get("error"), 300)
    told = said(f"SearXNG at {where.shown}", reply, reason)
    if reply.status == 401 or (reply.status == 403 and _auth_failure(reply)):
        return _auth_invalid(told, where)
    if reply.status == 403:
        return ToolError(
            ErrorCode.API_ERROR,
            f"{told}: the instance has the JSON format disabled, so it refuses API searches. "
            f"To fix it, {_FIX_FORMAT}.",
        )
    if reply.status == 429:
        why = "SearXNG's limiter is refusing requests from this address (let this client "
        why += "through in the instance's limiter.toml, botdetection pass_ip)"
        return rate_limited("searxng", told, why, retry_after(reply))
    if reply.status == 400 and reason:
        return ToolError(ErrorCode.INVALID_INPUT, f"{told}. SearXNG rejected a parameter.")
    return ToolError(ErrorCode.API_ERROR, f"{told}. Try again later.")


def _auth_failure(reply: Reply) -> bool:
    from ikigai_web.net.http import words

    return "www-authenticate" in reply.headers or bool(_AUTH_WORDS.search(words(reply, 4000)))


def _auth_invalid(told: str, where: Instance) -> ToolError:
    if where.has_auth:
        why = "the instance (or the proxy in front of it) rejected SEARXNG_AUTH"
    elif where.url_login:
        why = "the instance (or the proxy in front of it) rejected the login in SEARXNG_URL"
    else:
        why = "the instance sits behind a login and SEARXNG_AUTH is not set"
    message = (
        f"{told}: {why}. Set SEARXNG_AUTH to 'user:password' for HTTP Basic auth, or to the "
        "bearer token the proxy expects."
    )
    return ToolError(ErrorCode.AUTH_INVALID, message)


def shape_output(body: Any, page: int) -> Page:
    """SearXNG's JSON as a Page of our results, with next_offset when more pages seem likely."""
    if not isinstance(body, dict):
        raise not_an_object("SearXNG")
    results = shaped(body.get("results"), _result)
    extra: dict[str, Any] = {"next_offset": page + 1} if _more(body, results, page) else {}
    return Page(results, "next_offset" in extra, extra | _extras(body))


def _result(item: dict[str, Any]) -> Result | None:
    published, engines = iso_date(item.get("publishedDate")), _engines(item)
    title = item.get("title") or item["url"]
    return result(title, item["url"], item.get("content"), published=published, engines=engines)


def _engines(item: dict[str, Any]) -> list[str]:
    engines = as_list(item.get("engines")) or [item.get("engine")]
    return [plain(e, 60) for e in engines if isinstance(e, str) and e][:20]


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
    return [text for text in (plain(v, _MAX_TEXT) for v in as_list(value)) if text]


def _answers(value: object) -> list[str]:
    # Older SearXNG sends strings, newer ones objects with an `answer` field.
    texts = [i.get("answer") if isinstance(i, dict) else i for i in as_list(value)]
    return _strings(texts)[:_MAX_ANSWERS]


def _infoboxes(value: object) -> list[dict[str, str]]:
    boxes = [b for b in as_list(value) if isinstance(b, dict)]
    out = []
    for box in boxes[:_MAX_INFOBOXES]:
        shaped = {
            "title": plain(box.get("infobox"), 300),
            "content": plain(box.get("content"), _MAX_TEXT),
            "url": _infobox_url(box),
        }
        if shaped["title"] or shaped["content"]:
            out.append({k: v for k, v in shaped.items() if v})
    return out


def _infobox_url(box: dict[str, Any]) -> str:
    urls = [u.get("url") for u in as_list(box.get("urls")) if isinstance(u, dict)]
    candidates = [web_url(u) for u in [box.get("id"), *urls]]
    return next((u for u in candidates if u), "")


def _unresponsive(value: object) -> list[str]:
    pairs = [i for i in as_list(value) if isinstance(i, list) and i and isinstance(i[0], str)]
    return [plain(f"{i[0]} ({i[1]})" if len(i) > 1 and i[1] else i[0], 200) for i in pairs]


def arguments(request: Request) -> dict[str, Any]:
    """The common search request as this tool's own arguments."""
    return request.arguments(("max_results", 20), ("time_range", request.time_filter or p.ANY))


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    params = parse_input(raw)
    read = (params.query, reading.parse(raw))  # a bad `read` before a missing key
    where = instance()
    fetch = partial(fetch_page, where=where, params=params)
    plan = (params.max_results, params.allowed, params.blocked)
    # Redirects are followed (http -> https, a trailing-slash redirect); ikigai_web.net.http drops
    # the Authorization header when a redirect leaves the instance's origin.
    key = [where.endpoint, params._asdict()]
    return search("searxng", settings, fetch, plan, key, follow_redirects=True, read=read)


# --- for a person (--format markdown) and for the model (MCP) --------------------------------


def markdown(call: Mapping[str, Any], answer: Mapping[str, Any], reader: Reader = PERSON) -> str:
    """The shared rendering of search results; the next page is `page`."""
    return search_markdown(call, answer, reader, "page")


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
