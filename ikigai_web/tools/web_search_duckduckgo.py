"""web-search-duckduckgo-tool: keyless web search through DuckDuckGo's no-JavaScript pages.

DuckDuckGo has no search API, so this posts the same form a browser without JavaScript
posts to https://html.duckduckgo.com/html/ and reads the page with a real HTML parser. When
that page is unusable (5xx, or neither results, nor the no-results marker, nor a challenge),
the lite page https://lite.duckduckgo.com/lite/ is tried once (protocol.md, section 6).
"""

from __future__ import annotations

import re
import time
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from urllib.parse import parse_qs, urljoin, urlsplit

from ikigai_web.common import params as p
from ikigai_web.common.errors import ErrorCode, ToolError, invalid
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.common.text import visible
from ikigai_web.search import domains, reading
from ikigai_web.search.domains import Page, Result, keep
from ikigai_web.search.kit import (
    MAX_SNIPPET,
    MAX_TITLE,
    Link,
    Request,
    cut,
    lazy_output_schema,
    markdown,
    search,
    web_url,
)
from ikigai_web.search.registry import Provider

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence

    from lxml.html import HtmlElement

    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Reply

PROVIDER = Provider(key="duckduckgo", name="DuckDuckGo", place=5)  # keyless
HTML_URL = "https://html.duckduckgo.com/html/"
LITE_URL = "https://lite.duckduckgo.com/lite/"
MAX_QUERY = 499  # DuckDuckGo rejects queries of 500 characters or more
MAX_RESULTS = 25
MAX_PAGES = 3  # a first page holds about 10 results, the next ones about 15
PAGE_PAUSE = 0.75  # seconds between the pages of one search, as a person would click
TIME_FILTER = {"day": "d", "week": "w", "month": "m", "year": "y"}
SAFESEARCH = {"strict": "1", "moderate": "-1", "off": "-2"}
BLOCKING_STATUS = frozenset({202, 403, 418, 429})
SEARXNG_TOOL = "web_search_searxng"
# DuckDuckGo serves its bot check to non-browser agents, so IKIGAI_WEB_USER_AGENT does not
# apply here (protocol.md, section 3). Bump the version now and then.
BROWSER_USER_AGENT = (
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/142.0.0.0 Safari/537.36"
)
_REGION = re.compile(r"^[a-z]{2}-[a-z]{2,3}$")
_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})")
_NO_RESULTS = ("No results.", "No more results.")
_BOT_TEXT = "bots use DuckDuckGo too"
_ANOMALY = b"anomalyDetectionBlock"  # the script of DuckDuckGo's anomaly (bot check) page

SCHEMA: dict[str, Any] = {
    "name": "web_search_duckduckgo",
    "description": (
        "Search the web with DuckDuckGo; needs no API key. Returns up to 25 results, each "
        "with title, url and snippet. Use allowed_domains / blocked_domains to restrict "
        "sites. If DuckDuckGo blocks automated requests (RATE_LIMIT), wait or use a search "
        "tool with an API key."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query, 2-499 characters."},
            "max_results": {
                "type": "integer",
                "description": "Number of results (1-25). Default: 10.",
            },
            "time_filter": {
                "type": "string",
                "enum": [*TIME_FILTER, p.ANY],
                "description": "Only pages from the past day, week, month or year; any for "
                "no limit.",
            },
            "region": {
                "type": "string",
                "description": "DuckDuckGo region code, country-language: us-en, uk-en, "
                "de-de, fr-fr, jp-jp; wt-wt or empty for no region.",
            },
            "safesearch": {
                "type": "string",
                "enum": [*SAFESEARCH, p.DEFAULT],
                "description": "Adult content filter; default: DuckDuckGo's own (moderate).",
            },
            **domains.SCHEMA_PROPERTIES,
            **reading.SCHEMA_PROPERTIES,
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (DuckDuckGo)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(results=("published",))


class Params(NamedTuple):
    query: str
    max_results: int = 10
    time_filter: str | None = None  # DuckDuckGo's df: d, w, m or y
    region: str | None = None  # DuckDuckGo's kl
    safesearch: str | None = None  # DuckDuckGo's kp: 1, -1 or -2
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()


def parse_input(raw: dict[str, Any]) -> Params:
    allowed = domains.parse(raw, "allowed_domains")
    query = p.query(raw, lo=2, hi=MAX_QUERY)
    _check_room(query, allowed)
    time_filter = p.choice(raw, "time_filter", tuple(TIME_FILTER))
    safesearch = p.choice(raw, "safesearch", tuple(SAFESEARCH))
    return Params(
        query=query,
        max_results=p.integer(raw, "max_results", 10, 1, MAX_RESULTS),
        time_filter=TIME_FILTER[time_filter] if time_filter else None,
        region=_region(p.text(raw, "region")),
        safesearch=SAFESEARCH[safesearch] if safesearch else None,
        allowed=allowed,
        blocked=domains.parse(raw, "blocked_domains"),
    )


def _check_room(query: str, allowed: tuple[str, ...]) -> None:
    """`site:<domain>` joins the query, and the whole must stay within DuckDuckGo's limit."""
    if not allowed:
        return
    room = MAX_QUERY - len(" site:") - max(len(d) for d in allowed)
    if len(query) > room:
        raise invalid(
            "query",
            query,
            f"with these allowed_domains it may be at most {room} characters long, leaving "
            f"room for ' site:<domain>' within DuckDuckGo's {MAX_QUERY}-character limit",
        )


def _region(value: str | None) -> str | None:
    if value is None:
        return None
    if not _REGION.match(value.lower()):
        raise invalid(
            "region", value, "it must be a DuckDuckGo region code such as us-en, de-de or wt-wt"
        )
    return value.lower()


def build_query(params: Params, site: str | None) -> str:
    """The query with `site:` for a native restriction and `-site:` for blocked domains."""
    q = f"{params.query} site:{site}" if site else params.query
    excluded = " ".join(f"-site:{d}" for d in params.blocked)
    # Exclusions only save the page from waste; past the limit the post-filter suffices.
    return f"{q} {excluded}" if excluded and len(q) + 1 + len(excluded) <= MAX_QUERY else q


def form_data(params: Params, site: str | None, *, lite: bool = False) -> dict[str, str]:
    """The search form as a browser submits it; `b` is the html page's (empty) submit."""
    data = {"q": build_query(params, site)} | ({} if lite else {"b": ""})
    return data | _filters(params)


def _filters(params: Params) -> dict[str, str]:
    optional = {"kl": params.region, "df": params.time_filter, "kp": params.safesearch}
    return {k: v for k, v in optional.items() if v is not None}


def browser_headers(region: str | None) -> dict[str, str]:
    """What a desktop browser sends with a form post; DuckDuckGo checks these."""
    return {
        "Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        "Accept-Language": accept_language(region),
        "Accept-Encoding": "gzip, deflate",
        "Upgrade-Insecure-Requests": "1",
        "Sec-Fetch-Dest": "document",
        "Sec-Fetch-Mode": "navigate",
        "Sec-Fetch-Site": "same-origin",
        "Sec-Fetch-User": "?1",
    }


def accept_language(region: str | None) -> str:
    """A browser's language list matching the region: de-de -> de-DE first, English after."""
    country, _, lang = (region or "").partition("-")
    if len(lang) != 2 or country in ("wt", "xa", "xl"):
        return "en-US,en;q=0.9"
    country = "GB" if country == "uk" else country.upper()  # DuckDuckGo says uk, BCP 47 GB
    if lang == "en":
        return f"en-{country},en;q=0.9"
    return f"{lang}-{country},{lang};q=0.9,en;q=0.8"


# --- parsing -------------------------------------------------------------------------------

Kind = Literal["results", "empty", "challenge", "unusable"]


class Parsed(NamedTuple):
    """What one DuckDuckGo page turned out to be."""

    kind: Kind
    results: Sequence[Result] = ()
    next_form: dict[str, str] | None = None  # hidden fields of the "Next" button's form


def parse_html(content: bytes) -> Parsed:
    """The html endpoint: `div.result` cards with `a.result__a` and `.result__snippet`."""
    doc = _document(content)
    if doc is None:
        return Parsed("unusable")
    if _challenged(doc):
        return Parsed("challenge")
    cards = [c for c in doc.find_class("result") if "result--no-result" not in c.classes]
    if cards:
        results = [r for r in map(_html_result, cards) if r is not None]
        return Parsed("results", results, _next_form(doc))
    if doc.find_class("no-results") or _says(doc, _NO_RESULTS):
        return Parsed("empty")
    return _challenge_text_or_unusable(doc)


def _html_result(card: HtmlElement) -> Result | None:
    links = card.find_class("result__a")
    if "result--ad" in card.classes or not links:
        return None
    url = target(links[0].get("href", ""))
    if url is None:
        return None
    snippets = card.find_class("result__snippet")
    published = _published(card.find_class("result__extras__url"))
    return _result(_text(links[0]), url, _text(snippets[0]) if snippets else "", published)


def parse_lite(content: bytes) -> Parsed:
    """The lite endpoint: table rows, `a.result-link`, then `td.result-snippet`."""
    doc = _document(content)
    if doc is None:
        return Parsed("unusable")
    if _challenged(doc):
        return Parsed("challenge")
    links = doc.find_class("result-link")
    if links:
        results = [r for r in map(_lite_result, links) if r is not None]
        return Parsed("results", results, _next_form(doc))
    if _says(doc, _NO_RESULTS):
        return Parsed("empty")
    return _challenge_text_or_unusable(doc)


def _lite_result(link: HtmlElement) -> Result | None:
    url = target(link.get("href", ""))
    row = next(link.iterancestors("tr"), None)
    if url is None or (row is not None and "result-sponsored" in row.classes):
        return None
    snippet, published = "", None
    # The rows after the link's row, up to the next result: snippet, then link text and date.
    for sibling in row.itersiblings("tr") if row is not None else ():
        if sibling.find_class("result-link"):
            break
        cells = sibling.find_class("result-snippet")
        snippet = _text(cells[0]) if cells and not snippet else snippet
        published = published or _published(sibling.find_class("timestamp"))
    return _result(_text(link), url, snippet, published)


def _result(title: str, url: str, snippet: str, published: str | None) -> Result | None:
    # Text comes from the parser already decoded: ikigai_web.search.kit.plain would strip "<div>"
    # that a page wrote as "&lt;div&gt;".
    link = web_url(url)
    if link is None:
        return None
    title, snippet = cut(visible(title), MAX_TITLE) or link, cut(visible(snippet), MAX_SNIPPET)
    out: Result = {"title": title, "url": link, "snippet": snippet}
    return out | ({"published": published} if published else {})


def target(href: str) -> str | None:
    """A result link's destination: DuckDuckGo's `/l/?uddg=` redirect decoded, ads dropped."""
    absolute = urljoin("https://duckduckgo.com/", href.strip())
    try:
        parts = urlsplit(absolute)
    except ValueError:
        return None
    host = parts.hostname or ""
    if host == "duckduckgo.com" or host.endswith(".duckduckgo.com"):
        # `/y.js` is an ad click; any other DuckDuckGo link is navigation, not a result.
        wrapped = parse_qs(parts.query).get("uddg") if parts.path.startswith("/l/") else None
        return _web_url(wrapped[0]) if wrapped else None
    return _web_url(absolute)


def _web_url(url: str) -> str | None:
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    ok = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
    return url.strip() if ok else None


def _document(content: bytes) -> HtmlElement | None:
    from lxml import etree, html

    if not content.strip():
        return None
    try:
        return html.document_fromstring(content, parser=html.HTMLParser(encoding="utf-8"))
    except (etree.ParserError, ValueError):
        return None


def _challenged(doc: HtmlElement) -> bool:
    """DuckDuckGo's bot check: the challenge form, or its "anomaly" modal."""
    if doc.get_element_by_id("challenge-form", None) is not None:
        return True
    return any("anomaly-modal" in (el.get("class") or "") for el in _elements(doc))


def _challenge_text_or_unusable(doc: HtmlElement) -> Parsed:
    # Only a page without results: a search for this very sentence finds it in snippets.
    return Parsed("challenge" if _says(doc, (_BOT_TEXT,), whole=False) else "unusable")


def _says(doc: HtmlElement, phrases: Iterable[str], *, whole: bool = True) -> bool:
    """Whether some element's own text is one of `phrases` (or contains one)."""
    wanted = tuple(phrases)
    for el in _elements(doc):
        own = " ".join((el.text or "").split())
        if own and (own in wanted if whole else any(w in own for w in wanted)):
            return True
    return False


def _elements(doc: HtmlElement) -> Iterable[HtmlElement]:
    from lxml.html import HtmlElement

    return (el for el in doc.iter() if isinstance(el, HtmlElement))


def _next_form(doc: HtmlElement) -> dict[str, str] | None:
    """The hidden fields of the form behind the "Next" button, as a browser would post them."""
    for form in doc.iter("form"):
        inputs = list(form.iter("input"))
        kinds = [((i.get("type") or "").lower(), i) for i in inputs]
        if any(k == "submit" and "next" in (i.get("value") or "").lower() for k, i in kinds):
            return {
                str(i.get("name")): i.get("value") or ""
                for k, i in kinds
                if k == "hidden" and i.get("name")
            }
    return None


def _text(el: HtmlElement) -> str:
    return " ".join(el.text_content().split())


def _published(holders: list[HtmlElement]) -> str | None:
    for holder in holders:
        for text in holder.itertext():
            found = _DAY.search(text)
            if found:
                try:
                    return date.fromisoformat(found.group(1)).isoformat()
                except ValueError:
                    continue
    return None


# --- the network ---------------------------------------------------------------------------


class Endpoint(NamedTuple):
    name: str
    url: str
    origin: str  # Referer and Origin: the page a browser would have been on
    parse: Callable[[bytes], Parsed]


class Channel(NamedTuple):
    """What one search reads its pages through: the connection and the two endpoints."""

    link: Link
    html: Endpoint
    lite: Endpoint


def endpoints() -> tuple[Endpoint, Endpoint]:
    from ikigai_web.net.http import endpoint

    return (
        Endpoint("html", endpoint("DUCKDUCKGO_HTML_URL", HTML_URL),
                 "https://html.duckduckgo.com", parse_html),
        Endpoint("lite", endpoint("DUCKDUCKGO_LITE_URL", LITE_URL),
                 "https://lite.duckduckgo.com", parse_lite),
    )  # fmt: skip


def fetch_page(
    link: Link, site: str | None, count: int, *, ends: tuple[Endpoint, Endpoint], params: Params
) -> Page:
    """One search: the first page (html, else lite), then "Next" pages until `count`."""
    channel = Channel(link, *ends)
    where, parsed = first_page(channel, params, site)
    allowed = [site] if site else []
    results = _fresh(parsed.results, [], allowed, params.blocked)
    warnings: list[dict[str, str]] = []
    form, pages = parsed.next_form, 1
    while len(results) < count and form is not None and pages < MAX_PAGES:
        if link.deadline.remaining() < PAGE_PAUSE + 2.0:
            break
        time.sleep(PAGE_PAUSE)
        try:
            parsed = request(channel, where, _filters(params) | form)
        except (ToolError, Unusable) as exc:
            err = exc.error("") if isinstance(exc, Unusable) else exc
            note = f"only the first {len(results)} results: the next page failed: {err.message}"
            warnings.append({"code": err.code.value, "message": note})
            break
        results += _fresh(parsed.results, results, allowed, params.blocked)
        form, pages = parsed.next_form, pages + 1
    extra = {"warnings": warnings} if warnings else {}
    return Page(results[:count], extra=extra, complete=not warnings)


def _fresh(
    new: Sequence[Result], seen: list[Result], allowed: list[str], blocked: tuple[str, ...]
) -> list[Result]:
    """Results not yet seen and passing the domain filters (a later page may repeat one)."""
    from ikigai_web.search.domains import url_key

    known = {url_key(r["url"]) for r in seen}
    out = []
    for r in keep(new, allowed, blocked):
        if url_key(r["url"]) not in known:
            known.add(url_key(r["url"]))
            out.append(r)
    return out


def first_page(channel: Channel, params: Params, site: str | None) -> tuple[Endpoint, Parsed]:
    """The html page; the lite page once when the html one is unusable. When both fail, the
    message gives both reasons."""
    try:
        return channel.html, request(channel, channel.html, form_data(params, site))
    except Unusable as exc:
        first = exc.error("").message
    lite_form = form_data(params, site, lite=True)
    try:
        return channel.lite, request(channel, channel.lite, lite_form)
    except Unusable as exc:
        advice = (
            f"Before that, {first} DuckDuckGo may be down or may have changed its pages: try "
            "again later or use another search tool."
        )
        raise exc.error(advice) from None
    except ToolError as err:
        err.message += f" (The lite page was tried because {first})"
        raise


class Unusable(Exception):  # noqa: N818 - a page state, not a failure of this code
    """A page with no results, no no-results marker and no challenge."""

    def __init__(self, endpoint: Endpoint, reply: Reply) -> None:
        from ikigai_web.net.http import words

        super().__init__(endpoint.name)
        self.endpoint = endpoint
        self.status = reply.status
        self.location = reply.headers.get("location", "")
        self.excerpt = words(reply, 200)

    def error(self, advice: str) -> ToolError:
        said = f"DuckDuckGo's {self.endpoint.name} page answered HTTP {self.status}"
        if 300 <= self.status < 400:
            host = urlsplit(self.location).hostname or self.location or "elsewhere"
            hint = (
                f", redirecting to {host}: a word starting with '!' is a DuckDuckGo bang that "
                "jumps to another site; remove the '!' and search again."
            )
            return ToolError(ErrorCode.API_ERROR, said + hint)
        detail = f" ({self.excerpt!r})" if self.excerpt else " with an empty body"
        message = f"{said}{detail}: neither results, nor a no-results page, nor a challenge."
        return ToolError(ErrorCode.API_ERROR, f"{message} {advice}".strip())


def request(channel: Channel, where: Endpoint, data: dict[str, str]) -> Parsed:
    """One form post: the only function that touches the network."""
    from ikigai_web.net.http import send

    headers = {"Referer": where.origin + "/", "Origin": where.origin}
    http = channel.link.http
    req = http.build_request("POST", where.url, data=data, headers=headers)
    reply = send(http, req, channel.link.deadline)
    if reply.status in BLOCKING_STATUS:
        raise blocked(reply, f"HTTP {reply.status}")
    parsed = where.parse(reply.body) if reply.status == 200 else None
    if parsed is not None and parsed.kind != "results" and _ANOMALY in reply.body:
        raise blocked(reply, "its anomaly-detection page")
    if parsed is not None and parsed.kind == "challenge":
        raise blocked(reply, "its bot challenge page")
    if parsed is None or parsed.kind == "unusable":
        raise Unusable(where, reply)
    return parsed


def blocked(reply: Reply, what: str) -> ToolError:
    """RATE_LIMIT: DuckDuckGo has flagged this address; only waiting or another tool helps."""
    from ikigai_web.common.credentials import alternatives
    from ikigai_web.net.http import retry_after
    from ikigai_web.search.registry import every, fallback_order

    keyed = [every()[key].tool for key in fallback_order() if every()[key].keyed]
    ready = alternatives("web_search_duckduckgo")
    wait = retry_after(reply)
    when = f"wait {wait} s" if wait is not None else "wait a while (minutes, sometimes an hour)"
    message = (
        f"DuckDuckGo is blocking automated requests from this address for now (it answered "
        f"with {what}). Retrying at once will not help: {when} or use a search tool that "
        f"works through an API key: {', '.join(keyed)}, or {SEARXNG_TOOL} with your own "
        "SearXNG instance."
    )
    if ready:
        message += f" Configured on this machine: {', '.join(ready)}."
    return ToolError(ErrorCode.RATE_LIMIT, message, retry_after=wait)


def arguments(request: Request) -> dict[str, Any]:
    """The common search request as this tool's own arguments."""
    return request.arguments(
        ("max_results", MAX_RESULTS), ("time_filter", request.time_filter or p.ANY)
    )


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    params = parse_input(raw)
    read = (params.query, reading.parse(raw))  # a bad `read` before a missing key
    ends = endpoints()
    fetch = partial(fetch_page, ends=ends, params=params)
    plan = (params.max_results, params.allowed, params.blocked)
    key = [ends[0].url, ends[1].url, params._asdict()]
    headers = browser_headers(params.region)
    agent = BROWSER_USER_AGENT
    return search(
        "duckduckgo", settings, fetch, plan, key, read=read, user_agent=agent, headers=headers
    )


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
