"""web-search-gemini-tool: Google-grounded answers from Gemini ("Grounding with Google Search"),
with the sources they cite and the queries Google ran.

Gemini has no domain or time parameters: Gemini writes its own Google queries from the prompt.
Allowed and blocked domains therefore go into the prompt as `site:` / `-site:` operators, and
the sources are then filtered by the shared domain rules, so a blocked domain never comes back
and, with allowed domains, only their sources do. A time filter goes into the prompt as an
instruction; it cannot be checked afterwards, since grounding sources carry no dates.
"""

from __future__ import annotations

import math
import re
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common import params as p
from ikigai_web.common.answers import PERSON, Reader
from ikigai_web.common.credentials import resolve as credentials
from ikigai_web.common.credentials import several
from ikigai_web.common.errors import ErrorCode, ToolError, invalid
from ikigai_web.common.hostnames import is_bare_host
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.common.providers import DAY, Field, Provider
from ikigai_web.search import domains, reading
from ikigai_web.search.domains import Page, Result, host_of, url_key, wanted
from ikigai_web.search.kit import (
    MAX_SNIPPET,
    TIME_FILTERS,
    Link,
    Request,
    as_dict,
    as_list,
    cut,
    lazy_output_schema,
    not_an_object,
    plain,
    prose,
    read_block,
    rejected,
    result,
    search,
    web_url,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ikigai_web.common.settings import Settings
    from ikigai_web.fetch.network.session import Session
    from ikigai_web.net.http import Deadline, Reply

# Gemini allows 10 requests a minute on the free tier of its Flash models, and so many a day,
# reset at midnight Pacific time (ai.google.dev/gemini-api/docs/rate-limits). It has no place
# in the default fallback order: the fallback tool asks it only when the user names it.
PROVIDER = Provider(
    key="gemini",
    name="Google Search grounding (Gemini)",
    fields=(Field("api_key", ("GEMINI_API_KEY", "GOOGLE_API_KEY")),),
    label="a Gemini API key",
    signup_url="https://aistudio.google.com/apikey",
    how="Create a key at https://aistudio.google.com/apikey (free tier available).",
    rate=(10, 60.0),
    quota_window=DAY,
)
DEFAULT_BASE = "https://generativelanguage.googleapis.com/v1beta"
# Google's current GA Flash model (ai.google.dev/gemini-api/docs/models; the Gemini 3.8 Flash
# developer guide: thinking levels LOW, MEDIUM, HIGH, default MEDIUM).
DEFAULT_MODEL = "gemini-3.8-flash"
LEVELS = ("none", "low", "medium", "high")
DEFAULT_LEVEL = "low"
MAX_QUERY = 2000
MAX_SOURCES = 20
MAX_CHUNKS = 40  # grounding sources read from one answer; Gemini cites a handful
MAX_SUPPORTS = 200
MAX_QUERIES = 20
MAX_ANSWER = 20_000  # characters
MAX_ENTRY_POINT = 30_000  # HTML is never cut: a larger Search Suggestions block is left out
MAX_WAIT = 86_400
RESOLVE_SECONDS = 4.0  # every redirect link, in parallel, within this much time in all
# Where Google's grounding redirect links live; GEMINI_REDIRECT_URL replaces it (tests, mirrors).
REDIRECT_PREFIX = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
RESOLVE_RESERVE = 2.0  # seconds of the call's deadline kept for what comes after resolving
_MODEL = re.compile(r"^[a-z0-9](?:[a-z0-9.-]{0,98}[a-z0-9])?$")
_FAMILY = re.compile(r"^gemini-(\d+)(?:\.(\d+))?-")
_WORD = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
_DELAY = re.compile(r"^(\d{1,9}(?:\.\d{1,9})?)s$")
_REDIRECTS = (301, 302, 303, 307, 308)

# Gemini 3 takes a thinking level (generationConfig.thinkingConfig.thinkingLevel, the enum
# names of Google's SDKs). Google documents all four levels for most models; those listed
# here accept fewer, and a level they lack becomes the next one up.
_ORDER = ("MINIMAL", "LOW", "MEDIUM", "HIGH")
_LEVEL = {"none": "MINIMAL", "low": "LOW", "medium": "MEDIUM", "high": "HIGH"}
_NARROWER = (
    (re.compile(r"gemini-3\.[78]-flash(?!-lite)|gemini-3\.1-pro|gemini-(flash|pro)-latest"),
     ("LOW", "MEDIUM", "HIGH")),
    (re.compile(r"gemini-3-pro"), ("LOW", "HIGH")),
)  # fmt: skip
# Gemini 2.5 takes a token budget (ai.google.dev/gemini-api/docs/thinking): Flash 0-24,576,
# Flash-Lite 0 or 512-24,576 (0 turns thinking off), Pro 128-32,768 (it cannot be turned off).
_BUDGET = {"none": 0, "low": 1024, "medium": 8192, "high": 24576}
_PRO_BUDGET = _BUDGET | {"none": 128, "high": 32768}
# A candidate's finishReason that means its answer was withheld.
WITHHELD = {
    "SAFETY": "for safety",
    "RECITATION": "because it was reciting a source too closely",
    "BLOCKLIST": "because it contained a blocked term",
    "PROHIBITED_CONTENT": "because it touched prohibited content",
    "SPII": "because it contained sensitive personal information",
}
_AUTH_ADVICE = (
    "Google rejected the Gemini API key: check GEMINI_API_KEY (or GOOGLE_API_KEY), that the "
    "key's project has the Generative Language API enabled, or create a key at "
    "https://aistudio.google.com/apikey."
)
_QUOTA = "The Gemini API's rate limit or quota for this key is used up"
_HINTS = {
    400: "Check the model and thinking_level (not every model takes every level).",
    404: "Check the model name: https://ai.google.dev/gemini-api/docs/models lists them.",
}
_REPHRASE = "Rephrase the query, or use another search tool."

SCHEMA: dict[str, Any] = {
    "name": "web_search_gemini",
    "description": (
        "Ask Google Search through Gemini (Grounding with Google Search). Returns an answer "
        "written from Google results, the sources it cites (title, url, and as snippet the "
        "sentences of the answer that cite the source) and the queries Google ran. Good for "
        "current facts; use allowed_domains / blocked_domains to restrict sites."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "A question or search query, 2-2000 characters.",
            },
            "model": {
                "type": "string",
                "description": f"Gemini model, e.g. {DEFAULT_MODEL} or gemini-2.5-flash; "
                f"empty for the default ({DEFAULT_MODEL}).",
            },
            "thinking_level": {
                "type": "string",
                "enum": [*LEVELS, p.DEFAULT],
                "description": "How much Gemini reasons before answering: none (fastest), "
                "low, medium, high (slowest, for hard questions); default: low.",
            },
            "max_sources": {
                "type": "integer",
                "description": "Most sources to return (1-20). Default: 10.",
            },
            **domains.SCHEMA_PROPERTIES,
            **reading.SCHEMA_PROPERTIES,
            "time_filter": {
                "type": "string",
                "enum": [*TIME_FILTERS, p.ANY],
                "description": "Ask for sources from the last day, week, month or year (an "
                "instruction to Gemini, not a strict filter); any for no limit.",
            },
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (Gemini with Google Search)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(
    extras=("answer", "search_queries", "search_entry_point"), required=("answer", "search_queries")
)


class Params(NamedTuple):
    query: str
    model: str = DEFAULT_MODEL
    thinking_level: str = DEFAULT_LEVEL
    max_sources: int = 10
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    time_filter: str | None = None


def parse_input(raw: dict[str, Any]) -> Params:
    return Params(
        query=p.query(raw, lo=2, hi=MAX_QUERY),
        model=_model(p.text(raw, "model")),
        thinking_level=p.choice(raw, "thinking_level", LEVELS) or DEFAULT_LEVEL,
        max_sources=p.integer(raw, "max_sources", 10, 1, MAX_SOURCES),
        allowed=domains.parse(raw, "allowed_domains"),
        blocked=domains.parse(raw, "blocked_domains"),
        time_filter=p.choice(raw, "time_filter", TIME_FILTERS),
    )


def _model(value: str | None) -> str:
    """A model name, which goes into the URL's path: nothing that could change the path."""
    if value is None or value.lower() in p.NOT_SET:
        return DEFAULT_MODEL
    name = value.lower().removeprefix("models/")
    if not _MODEL.match(name) or ".." in name:
        allowed = f"it must be a Gemini model name such as {DEFAULT_MODEL} or gemini-2.5-flash"
        raise invalid("model", value, allowed + " (letters, digits, dots and dashes)")
    return name


def thinking_config(model: str, level: str) -> dict[str, Any] | None:
    """The thinking configuration `model` understands for `level`; None for models that do
    not think (or are unknown), which would reject one."""
    family = _FAMILY.match(model)
    if family is None:
        latest = model.startswith("gemini-") and model.endswith("-latest")  # aliases of Gemini 3
        return {"thinkingLevel": thinking_level(model, level)} if latest else None
    version = (int(family[1]), int(family[2] or 0))
    if version >= (3, 0):
        return {"thinkingLevel": thinking_level(model, level)}
    if version == (2, 5):
        return {"thinkingBudget": (_PRO_BUDGET if "-pro" in model else _BUDGET)[level]}
    return None


def thinking_level(model: str, level: str) -> str:
    """Gemini 3's level for `level`: the same, or the next one up that `model` accepts."""
    accepted = next((levels for rule, levels in _NARROWER if rule.match(model)), _ORDER)
    return next(x for x in _ORDER[_ORDER.index(_LEVEL[level]) :] if x in accepted)


def prompt(params: Params) -> str:
    """The query, with the domain and time wishes Gemini has no parameters for."""
    parts = [params.query]
    if params.allowed:
        parts.append("Search only these sites: " + " OR ".join(f"site:{d}" for d in params.allowed))
    if params.blocked:
        parts.append("Leave out these sites: " + " ".join(f"-site:{d}" for d in params.blocked))
    if params.time_filter:
        parts.append(f"Use only sources published in the past {params.time_filter}.")
    return "\n\n".join(parts)


def request_body(params: Params) -> dict[str, Any]:
    body: dict[str, Any] = {
        "contents": [{"role": "user", "parts": [{"text": prompt(params)}]}],
        "tools": [{"google_search": {}}],
    }
    thinking = thinking_config(params.model, params.thinking_level)
    return body | ({"generationConfig": {"thinkingConfig": thinking}} if thinking else {})


# --- the network: the generateContent call and the sources' redirect links -------------------


def fetch_page(
    link: Link, _site: str | None, _count: int, *, url: str, params: Params,
    settings: Settings,
) -> Page:  # fmt: skip
    """One generateContent request, then its sources' redirect links resolved.

    One request even for several allowed domains (they are in the prompt), so `_site` is
    always None; the sources are filtered here.
    """
    headers = {"x-goog-api-key": link.credential, "Accept": "application/json"}
    request = link.http.build_request("POST", url, json=request_body(params), headers=headers)
    grounded = shape_output(link.get_json(request, "Gemini", error_for, retry_seconds))
    links = [s.url for s in grounded.sources]
    real = resolve_links(links, link.deadline, settings) if settings.gemini_resolve else None
    entry_point = settings.gemini_search_entry_point
    return page(grounded, real, params, prefix=redirect_prefix(), entry_point=entry_point)


def resolve_links(urls: Sequence[str], deadline: Deadline, settings: Settings) -> dict[str, str]:
    """Each of Google's redirect links' real URL: one request that does not follow the
    redirect, reading `Location`, all in parallel, within RESOLVE_SECONDS in all (less when
    the call's deadline is near). A link that fails is left out.

    Only links on Google's redirect service (GEMINI_REDIRECT_URL) are requested, and through
    web-fetch's guard: the redirect host is vetted and pinned, private addresses are refused,
    and a `Location` that leads to a private or local address is not taken. Any other link an
    answer holds is never requested.

    Daemon threads rather than a pool: a host name that never resolves must neither hold up
    the answer nor the process's exit.
    """
    import threading

    from ikigai_web.fetch.network.session import Session
    from ikigai_web.net.http import Deadline

    budget = min(RESOLVE_SECONDS, deadline.remaining() - RESOLVE_RESERVE)
    prefix = redirect_prefix()
    targets = [u for u in dict.fromkeys(urls) if redirect_link(u, prefix)]
    if budget <= 0 or not targets:
        return {}
    found: dict[str, str] = {}
    within = Deadline(budget)
    with Session(settings, within) as session:
        threads = [threading.Thread(target=_locate, args=(session, u, found)) for u in targets]
        for thread in threads:
            thread.daemon = True
            thread.start()
        for thread in threads:
            thread.join(within.remaining())
        return dict(found)


def redirect_prefix() -> str:
    """Where Google's grounding redirect links live (GEMINI_REDIRECT_URL overrides it)."""
    from ikigai_web.net.http import endpoint

    return endpoint("GEMINI_REDIRECT_URL", REDIRECT_PREFIX)


def redirect_link(url: str, prefix: str) -> bool:
    """Whether `url` is one of Google's grounding redirect links (under `prefix`)."""
    return web_url(url) is not None and url.lower().startswith(prefix.lower())


def _locate(session: Session, url: str, found: dict[str, str]) -> None:
    from ikigai_web.fetch.network.session import redirect_location

    try:
        prepared = session.prepare(url, 0)
        answer = session.open(prepared)
        answer.close()
        target = location(url, answer.status, redirect_location(prepared, answer))
        if target is not None and target != url and _private(session, target):
            return
    except Exception:  # noqa: BLE001 - any failure keeps the redirect link; a thread must not print
        return
    if target is not None:
        found[url] = target


def _private(session: Session, url: str) -> bool:
    """Whether `url` leads to a private or local address (it is never requested: a name
    that does not resolve here is taken as it is)."""
    from ikigai_web.common.errors import ErrorCode, ToolError

    try:
        session.prepare(url, 1)
    except ToolError as err:
        return err.code is ErrorCode.BLOCKED_URL
    return False


def location(url: str, status: int, header: str | None) -> str | None:
    """Where `url` really leads: a redirect's http(s) `Location`, or `url` itself when it
    answers without redirecting; None when that cannot be told."""
    if 200 <= status < 300:
        return url
    if status not in _REDIRECTS or header is None:
        return None
    return web_url(header.strip())


def retry_seconds(reply: Reply) -> int | None:
    """Seconds to wait: the RetryInfo detail's retryDelay ("31s", "0.5s"), else Retry-After."""
    from ikigai_web.net.http import retry_after

    for detail in (as_dict(d) for d in as_list(_error(reply).get("details"))):
        delay = detail.get("retryDelay")
        if "RetryInfo" in str(detail.get("@type")) and isinstance(delay, str):
            match = _DELAY.match(delay.strip())
            if match:
                return min(MAX_WAIT, math.ceil(float(match[1])))
    return retry_after(reply)


def error_for(reply: Reply) -> ToolError:
    """Google's error answer (a google.rpc.Status: code, message, status, details)."""
    from ikigai_web.net.http import answer_summary
    from ikigai_web.search.pacing import rate_limited  # only an answer that says so

    error = _error(reply)
    reasons, status = _reasons(error), _word(error.get("status"))
    tags = ", ".join(dict.fromkeys(t for t in (*reasons, status) if t))
    message = prose(error.get("message"))
    told = answer_summary("Gemini", reply, f"({tags}) {message}".strip() if tags else message)
    if "API_KEY_INVALID" in reasons:
        return rejected("gemini", told, _AUTH_ADVICE)
    if reply.status == 429 or status == "RESOURCE_EXHAUSTED":
        return rate_limited("gemini", told, _QUOTA, retry_seconds(reply))
    if reply.status in (401, 403):
        return rejected("gemini", told, _AUTH_ADVICE)
    return ToolError(ErrorCode.API_ERROR, f"{told}. {_HINTS.get(reply.status, 'Try again later.')}")


def _error(reply: Reply) -> dict[str, Any]:
    return as_dict(as_dict(reply.data()).get("error"))


def _reasons(error: dict[str, Any]) -> list[str]:
    """The `reason` of each ErrorInfo detail."""
    words = (_word(as_dict(d).get("reason")) for d in as_list(error.get("details")))
    return list(dict.fromkeys(w for w in words if w))


def _word(value: object) -> str:
    """One of Google's enum words (API_KEY_INVALID, SAFETY), or "" for anything else."""
    return value if isinstance(value, str) and _WORD.match(value) else ""


# --- shaping Gemini's answer ----------------------------------------------------------------


class Source(NamedTuple):
    url: str  # as grounding gives it: usually a vertexaisearch redirect link
    title: str  # often only the site's domain
    snippet: str  # the answer's sentences that cite it


class Grounded(NamedTuple):
    answer: str
    sources: tuple[Source, ...]
    queries: list[str]
    entry_point: str | None  # the Search Suggestions HTML


def shape_output(body: Any) -> Grounded:
    """Gemini's generateContent answer, or API_ERROR when it holds no usable answer."""
    if not isinstance(body, dict):
        raise not_an_object("Gemini")
    feedback = as_dict(body.get("promptFeedback"))
    if _word(feedback.get("blockReason")):
        raise _blocked_prompt(feedback)
    candidates = as_list(body.get("candidates"))
    candidate = as_dict(candidates[0] if candidates else None)
    finish = _word(candidate.get("finishReason"))
    if finish in WITHHELD:
        raise _withheld(finish, candidate)
    answer = answer_text(as_dict(candidate.get("content")).get("parts"))
    meta = as_dict(candidate.get("groundingMetadata"))
    sources = _sources(meta)
    if not answer and not sources:
        said = f" (finishReason {finish})" if finish else ""
        message = f"Gemini answered HTTP 200 without an answer{said}. Try again later."
        raise ToolError(ErrorCode.API_ERROR, message)
    return Grounded(answer, sources, _queries(meta), _entry_point(meta))


def _blocked_prompt(feedback: dict[str, Any]) -> ToolError:
    reason = f"blockReason {feedback['blockReason']}{_categories(feedback)}"
    message = f"Gemini blocked the query itself and answered nothing ({reason}). {_REPHRASE}"
    return ToolError(ErrorCode.API_ERROR, message)


def _withheld(finish: str, candidate: dict[str, Any]) -> ToolError:
    why = f"finishReason {finish}{_categories(candidate)}"
    message = f"Gemini stopped its answer {WITHHELD[finish]} ({why}). {_REPHRASE}"
    return ToolError(ErrorCode.API_ERROR, message)


def _categories(holder: dict[str, Any]) -> str:
    """The safety categories that were blocked, as `: HARM_CATEGORY_…` for a message."""
    ratings = (as_dict(r) for r in as_list(holder.get("safetyRatings")))
    names = dict.fromkeys(_word(r.get("category")) for r in ratings if r.get("blocked") is True)
    names.pop("", None)
    return ": " + ", ".join(list(names)[:5]) if names else ""


def answer_text(parts: object) -> str:
    """The answer: the text of every part that is not a thought, masked and bounded."""
    from ikigai_web.common.redact import mask
    from ikigai_web.common.text import visible

    texts = [
        part["text"]
        for part in (as_dict(x) for x in as_list(parts))
        if isinstance(part.get("text"), str) and part.get("thought") is not True
    ]
    return cut(mask(visible("".join(texts)).strip()), MAX_ANSWER)


def _sources(meta: dict[str, Any]) -> tuple[Source, ...]:
    chunks = [as_dict(as_dict(c).get("web")) for c in as_list(meta.get("groundingChunks"))]
    chunks = chunks[:MAX_CHUNKS]
    cited = _citations(meta.get("groundingSupports"), len(chunks))
    return tuple(
        Source(web["uri"], _text(web.get("title")), " ".join(cited[index]))
        for index, web in enumerate(chunks)
        if isinstance(web.get("uri"), str)
    )


def _citations(supports: object, count: int) -> list[list[str]]:
    """For each of `count` sources, the answer's segments that cite it, in answer order."""
    cited: list[list[str]] = [[] for _ in range(count)]
    for support in (as_dict(s) for s in as_list(supports)[:MAX_SUPPORTS]):
        text = plain(as_dict(support.get("segment")).get("text"))
        for index in as_list(support.get("groundingChunkIndices"))[:MAX_CHUNKS]:
            if text and _index(index, count) and text not in cited[index]:
                cited[index].append(text)
    return cited


def _index(value: object, count: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < count


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _queries(meta: dict[str, Any]) -> list[str]:
    queries = (plain(q, 300) for q in as_list(meta.get("webSearchQueries")))
    return list(dict.fromkeys(q for q in queries if q))[:MAX_QUERIES]


def _entry_point(meta: dict[str, Any]) -> str | None:
    html = as_dict(meta.get("searchEntryPoint")).get("renderedContent")
    return html if isinstance(html, str) and 0 < len(html) <= MAX_ENTRY_POINT else None


def page(
    grounded: Grounded,
    real: Mapping[str, str] | None,
    params: Params,
    *,
    prefix: str,
    entry_point: bool,
) -> Page:
    """The answer as a Page: sources as results (real URLs where resolved), de-duplicated by
    URL and domain-filtered; the answer, queries and entry point as extras. Not cached when a
    link could not be resolved: next time it may be. `prefix`: where redirect links live."""
    results = [
        found
        for found in sources_as_results(grounded.sources, real or {})
        if wanted(_site(found, prefix), params.allowed, params.blocked)
    ]
    extra: dict[str, Any] = {"answer": grounded.answer, "search_queries": grounded.queries}
    if entry_point and grounded.entry_point:
        extra["search_entry_point"] = grounded.entry_point
    links = {s.url for s in grounded.sources if web_url(s.url) is not None}
    missing = len(links - set(real)) if real is not None else 0
    if missing:
        note = f"{missing} of {len(links)} source links could not be resolved in time and are "
        note += "Google's redirect links (they still lead to the page)"
        extra["warnings"] = [{"code": "UNRESOLVED", "message": note}]
    return Page(results, extra=extra, complete=not missing)


def sources_as_results(sources: Iterable[Source], real: Mapping[str, str]) -> list[Result]:
    """Sources in the shared result shape; two sources with one URL become one result."""
    merged: dict[str, Result] = {}
    for source in sources:
        made = _result(source, real.get(source.url))
        if made is None:
            continue
        key = url_key(made["url"])
        if key in merged:
            merged[key]["snippet"] = _joined(merged[key]["snippet"], made["snippet"])
        else:
            merged[key] = made
    return list(merged.values())


def _result(source: Source, real: str | None) -> Result | None:
    # Google's title is often only the site's domain: the real URL's host says more.
    title = host_of(real) if real and is_bare_host(source.title) else source.title
    return result(title, real or source.url, source.snippet)


def _site(result: Result, prefix: str) -> str:
    """The URL a result is filtered by. A redirect link left unresolved is on Google's host;
    the site it leads to is the domain Google titles it with, when it does."""
    url, title = str(result["url"]), str(result["title"]).strip().lower()
    return f"https://{title}/" if redirect_link(url, prefix) and is_bare_host(title) else url


def _joined(first: str, second: str) -> str:
    if not second or second in first:
        return first
    return cut(f"{first} {second}".strip(), MAX_SNIPPET)


def arguments(request: Request) -> dict[str, Any]:
    """The common search request as this tool's own arguments."""
    return request.arguments(
        ("max_sources", MAX_SOURCES), ("time_filter", request.time_filter or p.ANY)
    )


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ikigai_web.net.http import endpoint

    params = parse_input(raw)
    read = (params.query, reading.parse(raw))  # a bad `read` before a missing key
    keys = several(credentials(PROVIDER)["api_key"])
    base = endpoint("GEMINI_API_URL", DEFAULT_BASE).rstrip("/")
    url = f"{base}/models/{params.model}:generateContent"
    fetch = partial(fetch_page, url=url, params=params, settings=settings)
    # Domains are in the prompt: no fan-out, so the shared search sees no allowed domains.
    plan = (params.max_sources, (), params.blocked)
    options = [settings.gemini_resolve, settings.gemini_search_entry_point]
    cache_key = [url, params._asdict(), options]
    return search("gemini", settings, fetch, plan, cache_key, keys=keys, read=read)


# --- for a person (--format markdown) and for the model (MCP) --------------------------------


def markdown(_call: Mapping[str, Any], answer: Mapping[str, Any], _reader: Reader = PERSON) -> str:
    """The original design's three sections, each left out when empty; the same for a person
    and for the model: there is no next part to ask for."""
    sections = []
    if answer.get("answer"):
        sections.append(f"## Search Results\n\n{answer['answer']}")
    sources = [_source_line(r) for r in answer.get("results", [])]
    if sources:
        sections.append("### Sources\n\n" + "\n".join(sources))
    queries = [f'- "{q}"' for q in answer.get("search_queries", [])]
    if queries:
        sections.append("### Search Queries Used\n\n" + "\n".join(queries))
    sections += [f"Note: {w['message']}" for w in answer.get("warnings", [])]
    return "\n\n".join(sections) or "No answer."


def _source_line(item: Mapping[str, Any]) -> str:
    title = str(item["title"]).replace("[", "\\[").replace("]", "\\]")
    url = str(item["url"]).replace("(", "%28").replace(")", "%29")
    read = read_block(item).strip("\n").replace("\n", "\n  ")  # under its source, indented
    return f"- [{title}]({url}) ({host_of(item['url'])})" + (f"\n\n  {read}\n" if read else "")


def main() -> None:
    run_protocol(SCHEMA, execute, markdown, PROVIDER)
