"""web-fetch-tool: any http(s) URL to clean markdown of its main content, safe by default."""

from __future__ import annotations

import re
from dataclasses import asdict, fields
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from ikigai_web.common import params as p
from ikigai_web.common.answers import PERSON, Reader, output_schema
from ikigai_web.common.errors import invalid
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.common.text import compact

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.common.settings import Settings
    from ikigai_web.fetch.reading.document import Document

MAX_URL = 4096
MAX_OFFSET = 10**9
MAX_LIMIT = 10**6
MAX_QUERY = 2000
DEFAULT_MAX_CHARS = 4000
MIN_CHARS, MAX_CHARS = 200, 50_000
CACHE_NAMESPACE = "web_fetch"
RENDERING = ("fetch_browser", "fetch_render_settle")  # the settings only rendering reads
KEEP_FOR_RENDER = 1 << 20  # an app shell is small; a larger page the browser asks for again
# What a Document carries for the fetch that made it alone (the soft-404 probe's cue): never
# cached, so entries written before it existed stay valid.
_FOR_THIS_FETCH = frozenset({"maybe_not_found"})
# Metadata is a label, not content: long values are cut so the content keeps the budget.
META_LIMITS = {
    "title": 300,
    "author": 200,
    "date": 64,
    "site_name": 200,
    "description": 600,
    "product": 600,
}
_WORST_CHAR_BYTES = 6  # a control character is escaped as \u00XX in JSON
OUTLINE_BYTES = 4000  # of JSON, at most, for a query's outline of the page
# Characters of a page, at most, its passages are looked for in (about 0.3 s of ranking):
# a longer one is read on with offset, as a warning says.
MAX_SEARCHED = 1_000_000
_KEY_BYTES = 64  # "passages", "outline", "selected_by" and their punctuation, generously
_MIN_WRAP = 40
_ABOUT = (("author", "Author"), ("date", "Date"), ("site_name", "Site"))
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
# fetch.reading.pagetype.PAGE_TYPES, which this module cannot import without slowing --schema.
PAGE_TYPES = ("article", "collection", "documentation", "forum", "listing", "product", "service")

# Where a passage is: its lines, the headings above it, a document's page (web-fetch's
# answer to a query, and each result's `read` of a search, ikigai_web/search/reading.py).
PASSAGE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "first_line": {"type": "integer"},
        "last_line": {"type": "integer"},
        "headings": {"type": "array", "items": {"type": "string"}},
        "page": {"type": "integer", "description": "A document's page or slide."},
    },
    "required": ["first_line", "last_line", "headings"],
}

SCHEMA: dict[str, Any] = {
    "name": "web_fetch",
    "description": (
        "Fetch a web page (or plain text, markdown, JSON, PDF, Word, Excel, PowerPoint or EPUB) "
        "by http(s) URL and return its main content as markdown, with title and metadata. "
        "Long pages come in pieces: pass next_offset from the answer as offset to read on. "
        "With query, the answer is the page's passages most relevant to it instead, best "
        "first, each with its headings and line range (read around one with offset), and "
        "the page's outline."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "url": {"type": "string", "description": "The http or https URL to fetch."},
            "query": {
                "type": "string",
                "description": "What you want to know from the page (a question or words, in "
                "any language): returns its most relevant passages, best first, instead of "
                'its lines from offset. Default: "" (the lines).',
            },
            "max_chars": {
                "type": "integer",
                "description": f"With query: most characters of passages ({MIN_CHARS}-"
                f"{MAX_CHARS}). Default: {DEFAULT_MAX_CHARS}.",
            },
            "offset": {
                "type": "integer",
                "description": "First line of the markdown to return (1 or more). Default: 1.",
            },
            "limit": {
                "type": "integer",
                "description": "Most lines to return (0 or more); 0 for as many as fit (the "
                "output is capped in size either way). Default: 0.",
            },
            "pages": {
                "type": "string",
                "description": 'Pages of a PDF (or slides of a deck) to read: "3", "2-5", or '
                '"4-" for 4 to the end; offset then counts lines within them. Default: "" (all).',
            },
            "full_page": {
                "type": "boolean",
                "description": "Convert the whole page, navigation and all, instead of only "
                "its main content. Default: false.",
            },
            "include_links": {
                "type": "boolean",
                "description": "Keep links as markdown links with absolute URLs. Default: true.",
            },
            "render": {
                "type": "string",
                "enum": ["auto", "always", "never", p.DEFAULT],
                "description": "Run the page's JavaScript in a headless browser before reading "
                "it: auto does so for pages that show next to nothing without JavaScript, "
                "where a browser is installed; default: the user's setting (auto unless set).",
            },
        },
        "required": ["url"],
    },
}
# What MCP clients show and check (protocol.md, sections 6 and 17).
TITLE = "Fetch a web page"
_TEXT: dict[str, Any] = {"type": "string"}
OUTPUT_SCHEMA = output_schema(
    "The page's markdown, or the part of it asked for, and what the page says of itself.",
    {
        "url": {"type": "string", "description": "The final URL, after redirects."},
        "title": _TEXT,
        "content": {
            "type": "string",
            "description": "Markdown: lines offset on; with query, the passages, each under "
            "a line [Lines N-M: heading > heading] (a document's: [Page P, lines N-M: ...]).",
        },
        "selected_by": {
            "type": "string",
            "enum": ["lines", "query"],
            "description": "What content holds: lines from offset, or passages for query.",
        },
        "passages": {
            "type": "array",
            "description": "With query: where each passage of content is, in the same order.",
            "items": PASSAGE,
        },
        "outline": {
            "type": "array",
            "description": "With query, when the passages are not the whole page: its "
            "headings and the line each is on.",
            "items": {
                "type": "object",
                "properties": {
                    "line": {"type": "integer"},
                    "level": {"type": "integer"},
                    "heading": {"type": "string"},
                },
                "required": ["line", "level", "heading"],
            },
        },
        "content_type": {"type": "string", "description": "The media type read."},
        "total_lines": {"type": "integer", "description": "Lines of the whole markdown."},
        "truncated": {
            "type": "boolean",
            "description": "Lines follow those returned; with query, the passages are not "
            "the whole page.",
        },
        "next_offset": {"type": "integer", "description": "When truncated: the offset to pass."},
        "total_pages": {
            "type": "integer",
            "description": "A PDF's pages or a deck's slides, each marked [Page N of M].",
        },
        "page_type": {
            "type": "string",
            "enum": [*PAGE_TYPES],
            "description": "How an HTML page was read.",
        },
        "wall": {
            "type": "string",
            "enum": ["paywall"],
            "description": "The article is cut after its free part (a PAYWALL warning says so).",
        },
        **dict.fromkeys(("author", "date", "site_name", "description"), _TEXT),
        "product": {
            "type": "string",
            "description": "A product page's facts from its JSON-LD: brand, codes, rating, price.",
        },
    },
    ["url", "title", "content", "content_type", "total_lines", "truncated", "selected_by"],
)


class Params(NamedTuple):
    url: str
    offset: int = 1
    limit: int | None = None
    full_page: bool = False
    include_links: bool = True
    render: str | None = None  # auto, always, never; None: the setting's
    pages: tuple[int, int | None] | None = None  # first and last (None: to the end)
    query: str | None = None  # the passages that answer it, instead of lines from offset
    max_chars: int = DEFAULT_MAX_CHARS  # of passages, with a query
    pages_given: str | int | None = None  # `pages` as the call wrote it, for messages


class Page(NamedTuple):
    """A fetched and converted document: what the cache stores and paging reads."""

    url: str
    content_type: str
    document: Document


def parse_input(raw: dict[str, Any]) -> Params:
    params = Params(
        url=_url(raw["url"]),
        offset=p.integer(raw, "offset", 1, 1, MAX_OFFSET),
        limit=p.integer(raw, "limit", 0, 0, MAX_LIMIT) or None,
        full_page=p.boolean(raw, "full_page", default=False),
        include_links=p.boolean(raw, "include_links", default=True),
        render=_render(raw),
        pages=_pages(raw),
        query=p.text(raw, "query", lo=1, hi=MAX_QUERY),
        max_chars=p.integer(raw, "max_chars", DEFAULT_MAX_CHARS, MIN_CHARS, MAX_CHARS),
    )
    # As the call wrote it, for messages; its not-set value ("") reads no pages and echoes none.
    return params if params.pages is None else params._replace(pages_given=raw["pages"])


def _pages(raw: dict[str, Any]) -> tuple[int, int | None] | None:
    from ikigai_web.fetch.reading.files import paging

    value = raw.get("pages")
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)  # a model may well write pages: 3
    if value is not None and not isinstance(value, str):
        raise invalid("pages", value, paging.ALLOWED)
    return paging.parse(value or "")


def _render(raw: dict[str, Any]) -> str | None:
    from ikigai_web.common.settings import RENDER_MODES

    return p.choice(raw, "render", RENDER_MODES)


def _url(value: str) -> str:
    """An absolute http(s) URL with a host, without its fragment; else INVALID_INPUT."""
    from ikigai_web.common.redact import printable_url

    url = value.strip()
    shown = printable_url(value)  # the value as messages may print it
    allowed = "it must be an absolute http:// or https:// URL such as https://example.com/page"
    if not url or len(url) > MAX_URL:
        raise invalid("url", shown, f"{allowed}, at most {MAX_URL} characters")
    if _SPACE_OR_CONTROL.search(url):
        raise invalid("url", shown, f"{allowed}, without spaces (encode them as %20)")
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError as exc:
        raise invalid("url", shown, f"{allowed} ({exc})") from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise invalid("url", shown, allowed)
    return urlunsplit(parts._replace(scheme=parts.scheme.lower(), fragment=""))


def fetch_page(params: Params, settings: Settings) -> Page:
    """The page through web-fetch's stages (ikigai_web/fetch/), in order: fetch, decode,
    extract, tidy; and, for an HTML page that needs JavaScript, render, what the browser
    shows then extracted and tidied in turn. The only function that touches the network."""
    from ikigai_web.common.redact import printable_url
    from ikigai_web.fetch.network.session import Session
    from ikigai_web.fetch.pipeline import prepare
    from ikigai_web.net.http import Deadline

    readers = prepare()
    mode = render_mode(params, settings)
    deadline = Deadline.of_call(settings.timeout)
    how = {"full_page": params.full_page, "include_links": params.include_links}
    tidied = partial(_tidied, include_links=params.include_links, settings=settings)
    with Session(settings, deadline) as session:
        fetched = session.fetch(params.url)
        from ikigai_web.fetch.network import render, soft404  # prepared meanwhile
        from ikigai_web.fetch.reading import decode, extract

        # What the answer, the cache and the extractor's links see: no user-info, no secrets.
        url = printable_url(fetched.url)
        # The page's own text, for the browser, when an app shell could be this large.
        kept = mode == "always" or (mode == "auto" and len(fetched.body) <= KEEP_FOR_RENDER)
        memory = settings.max_memory_mb << 20
        reading = decode.Reading(deadline, first_page(params), memory, params.include_links)
        kind = decode.readable_type(fetched.content_type, fetched.body)
        if kind not in decode.HTML_TYPES:
            readers.unneeded.set()
        if kind in decode.FILE_TYPES:  # read in a forked process: no thread may be importing
            readers.thread.join()
        decoded = decode.decoded(fetched.body, fetched.content_type, url, reading)
        first = decoded.html if kept else None
        extracted = extract.extracted(decoded, url, **how)
        sent = tidied(extracted)
        html = decoded.kind in decode.HTML_TYPES
        if html and soft404.suspect(fetched.url, sent):  # a short page: the site's 404?
            sent = soft404.checked(session, fetched.url, sent, how)
        shown = render.render(session, fetched.url, first, sent, mode) if html else render.Shown()
    dom = None if shown.html is None else extract.html_to_markdown(shown.html, url, **how)
    document = render.answer_document(url, sent, shown, None if dom is None else tidied(dom), mode)
    return Page(url, decoded.kind, document)


def _tidied(document: Document, *, include_links: bool, settings: Settings) -> Document:
    """The tidy stage, its links those the user's settings let a client follow."""
    from ikigai_web.fetch.network.guard import Policy
    from ikigai_web.fetch.reading import tidy

    policy = Policy.from_settings(settings)
    return tidy.tidied(document, include_links=include_links, policy=policy)


def first_page(params: Params) -> int:
    """Where a file is read from: the first page asked for (a window of pages)."""
    return params.pages[0] if params.pages else 1


def render_mode(params: Params, settings: Settings) -> str:
    return params.render or settings.fetch_render


def cache_key(params: Params, settings: Settings) -> list[Any]:
    """Everything that changes what a fetch returns or is allowed to reach; not the paging."""
    from ikigai_web.common.redact import drop_userinfo

    policy = [
        settings.fetch_allow_private,
        sorted(settings.fetch_allow_hosts),
        settings.fetch_robots,
        settings.user_agent,
        settings.fetch_max_bytes,
    ]
    if render_mode(params, settings) != "never":
        policy.append(render_mode(params, settings))  # a rendered page is another page
    url = drop_userinfo(params.url)  # never stored, even hashed: it could be brute-forced
    key = [url, url != params.url, params.full_page, params.include_links, policy]
    # A document read from a later page holds other pages: an entry of its own.
    return [*key, first_page(params)] if first_page(params) > 1 else key


def cached_page(params: Params, settings: Settings) -> tuple[Page, dict[str, Any]]:
    """The page, from the cache if it holds it, and what the answer says about the cache."""
    from ikigai_web.common import cache

    key = cache_key(params, settings)
    # What a fetch reads past the cache, read before it: a bad value fails every call alike.
    settings.check("timeout", *[] if render_mode(params, settings) == "never" else RENDERING)
    ttl = settings.fetch_cache_ttl
    hit = cache.get(CACHE_NAMESPACE, key, ttl, valid=_is_stored_page)
    if hit.value is not None:
        return _stored_page(hit.value), {"cached": True}
    page = fetch_page(params, settings)
    stored = {k: v for k, v in asdict(page.document).items() if k not in _FOR_THIS_FETCH}
    # The shared state failing is this call's trouble, not the page's: a cached copy says
    # nothing of it.
    stored["warnings"] = [w for w in stored["warnings"] if w["code"] != "STATE"]
    value = {"url": page.url, "content_type": page.content_type, "document": stored}
    notes = cache.warnings(hit.warning, cache.put(CACHE_NAMESPACE, key, value, ttl))
    return page, {"warnings": notes} if notes else {}


def _is_stored_page(value: Any) -> bool:
    """What `cached_page` stores, every field of the right type; anything else is corrupt."""
    from ikigai_web.fetch.reading.document import Document

    if not isinstance(value, dict) or set(value) != {"url", "content_type", "document"}:
        return False
    doc = value["document"]
    if (
        not isinstance(doc, dict)
        or set(doc) != {f.name for f in fields(Document)} - _FOR_THIS_FETCH
    ):
        return False
    # A Document is text, its metadata None when the page had none, and its warnings a
    # list of {"code", "message"} texts.
    texts = (value["url"], value["content_type"], doc["markdown"])
    meta = (v for k, v in doc.items() if k not in ("warnings", "app_shell"))
    return (
        all(isinstance(v, str) for v in texts)
        and isinstance(doc["app_shell"], bool)
        and all(v is None or isinstance(v, str) for v in meta)
        and _are_warnings(doc["warnings"])
    )


def _are_warnings(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(w, dict) and set(w) == {"code", "message"} and all(map(_is_text, w.values()))
        for w in value
    )


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _stored_page(value: dict[str, Any]) -> Page:
    from ikigai_web.fetch.reading.document import Document

    return Page(value["url"], value["content_type"], Document(**value["document"]))


def shape_output(  # noqa: PLR0913 - the call's parameters, each as the answer takes it
    page: Page,
    offset: int,
    limit: int | None,
    budget: int,
    notes: dict[str, Any] | None = None,
    pages: tuple[int, int | None] | None = None,
    *,
    query: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    pages_given: str | int | None = None,
) -> dict[str, Any]:
    """The selected lines (of the selected pages), cut at a line boundary so the whole JSON
    line fits `budget`; with `query`, the passages of those lines that answer it instead
    (`with_passages`).

    `notes` are further keys of the answer (`cached`, `warnings`), counted in the budget;
    `pages_given` is `pages` as the call wrote it, which a message about it echoes.
    """
    out, extras, markdown = _framed(page, notes, pages, pages_given)
    # + total_lines, truncated, next_offset and the newline, generously; selected_by exactly
    frame_bytes = len(compact(out | extras | {"selected_by": "lines"})) + 96
    lines = split_lines(markdown, line_width(budget, frame_bytes))
    total = len(lines)
    start = offset - 1
    end = total if limit is None else min(total, start + limit)
    if query is not None:
        chosen = with_passages(lines, (start, end), query, max_chars, budget - frame_bytes)
        noted = [*extras.get("warnings", []), *chosen.pop("warnings", [])]
        return out | chosen | extras | ({"warnings": noted} if noted else {})
    taken = _fit(lines[start:end], budget - frame_bytes)
    stop = start + len(taken)
    out |= {"content": "\n".join(taken), "total_lines": total, "truncated": stop < total}
    if stop < total:
        out["next_offset"] = stop + 1
    return out | {"selected_by": "lines"} | extras


def _framed(
    page: Page,
    notes: dict[str, Any] | None,
    pages: tuple[int, int | None] | None,
    pages_given: str | int | None,
) -> tuple[dict[str, Any], dict[str, Any], str]:
    """The answer but its content, what the page says of itself, and the markdown read (of
    the selected pages; `pages_given` as the call wrote them, for a message)."""
    from ikigai_web.fetch.reading.files import paging

    doc = page.document
    markdown = doc.markdown
    if pages is not None:
        shown = pages_given if pages_given is not None else f"{pages[0]}-{pages[1] or ''}"
        markdown = paging.select(markdown, page.content_type, pages, shown)
    out: dict[str, Any] = {
        "success": True,
        "url": page.url,
        "title": _clip(doc.title, META_LIMITS["title"]) or "",
        "content": "",
        "content_type": page.content_type,
    }
    extras: dict[str, Any] = _extras(doc)
    if page.content_type in paging.PAGE_NAMES and paging.total_pages(doc.markdown):
        extras["total_pages"] = paging.total_pages(doc.markdown)
    if doc.page_type:
        extras["page_type"] = doc.page_type
    if doc.wall:  # a paywalled article's free part: the one wall that is a success
        extras["wall"] = doc.wall
    warnings = [*doc.warnings, *(notes or {}).get("warnings", [])]
    extras |= {k: v for k, v in (notes or {}).items() if k != "warnings"}
    if warnings:
        extras["warnings"] = warnings
    return out, extras, markdown


def line_width(budget: int, frame_bytes: int) -> int:
    """The longest line an answer of `budget` bytes holds: longer ones are wrapped."""
    return max(_MIN_WRAP, (budget - frame_bytes) // _WORST_CHAR_BYTES)


def page_passages(page: Page, query: str, max_chars: int, room: int, budget: int) -> dict[str, Any]:
    """A page's passages that answer `query` within `room` bytes, as a search that reads
    gives them (no outline), its lines numbered as web-fetch's answer of `budget` bytes
    numbers them; and its wall when it is a paywalled article's free part."""
    out, extras, markdown = _framed(page, None, None, None)
    lines = split_lines(markdown, line_width(budget, len(compact(out | extras)) + 96))
    found = with_passages(lines, (0, len(lines)), query, max_chars, room, outline=False)
    return found | ({"wall": page.document.wall} if page.document.wall else {})


def with_passages(
    lines: list[str],
    window: tuple[int, int],
    query: str,
    max_chars: int,
    room: int,
    *,
    outline: bool = True,
) -> dict[str, Any]:
    """The answer's content as the passages of lines window[0] to window[1] (0-based, end
    excluded) that answer `query`, at most `max_chars` characters, and where each is; with
    `outline`, the page's headings when they are not the whole page. All of it fits `room`
    bytes of JSON."""
    from ikigai_web.fetch.reading.passages import Room, read_for, render_passages

    start, end = window
    looked = _searched_end(lines, start, end)
    note = [] if looked == end else [_not_searched(start, looked, end)]
    room -= len(compact(note))
    # The text fits what is left once the outline has its most; passages' places are
    # small, and the last passages give way for them if ever they do not fit.
    text_room = room - OUTLINE_BYTES * outline - 2 * _KEY_BYTES

    def json_bytes(text: str) -> int:
        return len(compact(text)) - 2  # without the quotes: a piece of the content string

    room_left = Room(max_chars, text_room, json_bytes)
    reading = read_for(lines[start:looked], query, room_left, start + 1)
    whole = reading.whole and start == 0 and end == len(lines)
    headings = [] if whole or not outline else _outline(reading.outline)
    chosen = list(reading.passages)
    while True:
        answer: dict[str, Any] = {
            "content": render_passages(chosen),
            "total_lines": len(lines),
            "truncated": not whole,
            "selected_by": "query",
            "passages": [_place(passage) for passage in chosen],
        }
        answer |= {"outline": headings} if headings else {}
        if len(compact(answer)) <= room or not chosen:
            return answer | ({"warnings": note} if note else {})
        chosen.pop()  # the places of many passages under long headings crowd the room


def _searched_end(lines: list[str], start: int, end: int) -> int:
    """Where the passages are looked for up to: the window, or its first MAX_SEARCHED
    characters of a page too long to rank in the call's time (whole lines)."""
    size = 0
    for index in range(start, end):
        size += len(lines[index]) + 1
        if size > MAX_SEARCHED:
            return max(index, start + 1)
    return end


def _not_searched(start: int, looked: int, end: int) -> dict[str, str]:
    return {
        "code": "TRUNCATED",
        "message": f"the page is long: passages were looked for in lines {start + 1}-{looked} "
        f"of {end}; to look further, call again with offset {looked + 1} and the same query",
    }


def _place(passage: Any) -> dict[str, Any]:
    place = {"first_line": passage.first, "last_line": passage.last,
             "headings": list(passage.headings)}  # fmt: skip
    return place | ({"page": passage.page} if passage.page is not None else {})


def _outline(headings: list[Any]) -> list[dict[str, Any]]:
    """The page's headings, as many of the outermost levels as fit OUTLINE_BYTES."""
    entries = [{"line": h.line, "level": h.level, "heading": h.text} for h in headings]
    for deepest in range(6, 0, -1):
        kept = [e for e in entries if e["level"] <= deepest]
        if len(compact(kept)) <= OUTLINE_BYTES:
            return kept
    kept = []
    for entry in entries:
        if len(compact([*kept, entry])) > OUTLINE_BYTES:
            break
        kept.append(entry)
    return kept


def _extras(doc: Document) -> dict[str, str]:
    found = {name: _clip(getattr(doc, name), META_LIMITS[name]) for name in META_LIMITS}
    return {k: v for k, v in found.items() if v and k != "title"}


def _clip(value: str | None, most: int) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value if len(value) <= most else value[: most - 1] + "…"


def split_lines(markdown: str, width: int) -> list[str]:
    """The markdown's lines; a line longer than `width` is wrapped so any one line fits."""
    text = markdown.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n")
    if not text:
        return []
    lines: list[str] = []
    for line in text.split("\n"):
        rest = line
        while len(rest) > width:
            cut = rest.rfind(" ", width // 2, width)
            cut = cut if cut > 0 else width
            lines.append(rest[:cut])
            rest = rest[cut:].lstrip(" ") if cut < width else rest[cut:]
        lines.append(rest)
    return lines


def _fit(lines: list[str], room: int) -> list[str]:
    """The longest prefix of `lines` whose JSON-escaped, newline-joined size fits `room`."""
    used = 0
    for count, line in enumerate(lines):
        used += len(compact(line)) - 2 + (2 if count else 0)  # "\n" escapes to 2 bytes
        if used > room:
            return lines[:count]
    return lines


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ikigai_web.fetch.network.render import advised

    params = parse_input(raw)
    page, notes = cached_page(params, settings)
    if params.query is None and raw.get("max_chars") not in (None, DEFAULT_MAX_CHARS):
        ignored = {"code": "IGNORED", "message": "'max_chars' sizes the passages of a query, "
                   "and without one was ignored; to cut the lines, use limit"}  # fmt: skip
        notes = notes | {"warnings": [*notes.get("warnings", []), ignored]}
    page = page._replace(document=advised(page.document, render_mode(params, settings), settings))
    budget = settings.output_budget
    return shape_output(
        page, params.offset, params.limit, budget, notes, params.pages,
        query=params.query, max_chars=params.max_chars, pages_given=params.pages_given,
    )  # fmt: skip


def markdown(call: Mapping[str, Any], answer: Mapping[str, Any], reader: Reader = PERSON) -> str:
    """The page for a person or the model: its title, address, what it says of itself and
    what went partly wrong, its markdown, and how to read on when it is cut."""
    head = f"# {answer['title']}\n\n" if answer.get("title") else ""
    content = _without_title(call, answer)
    body = f"{content}\n" if content else ""
    return f"{head}Source: {answer['url']}\n{_about(answer)}\n{body}{_ending(answer, reader)}"


def _without_title(call: Mapping[str, Any], answer: Mapping[str, Any]) -> str:
    """The content, without a leading heading that repeats the title line above it (a
    product's markdown keeps its name's heading); a later part, or passages, left whole."""
    if call.get("offset") not in (None, 1) or answer.get("selected_by") == "query":
        return str(answer["content"])
    from ikigai_web.fetch.reading.extract import drop_title

    return drop_title(answer["content"], answer.get("title"))


def _ending(answer: Mapping[str, Any], reader: Reader) -> str:
    """How to read on, when the page is cut; why there is nothing, when there is nothing."""
    total = answer.get("total_lines", 0)
    if answer.get("selected_by") == "query":
        return _passages_ending(answer, reader)
    if answer.get("truncated"):
        following = answer["next_offset"]
        how = reader.next_part("offset", following)
        return f"\n[{total - following + 1} more lines: to read on, {how}]\n"
    if answer["content"]:
        return ""
    return f"[No lines from this offset: the page has {total}.]\n" if total else "[No text.]\n"


def _passages_ending(answer: Mapping[str, Any], reader: Reader) -> str:
    """After passages: the page's outline, and how to read around a passage."""
    total = answer.get("total_lines", 0)
    places = answer.get("passages", [])
    said = "" if places else f"[No passage matches the query; the page has {total} lines.]\n"
    outline = answer.get("outline", [])
    top = min((entry["level"] for entry in outline), default=1)
    if outline:
        said += "\nOutline of the page (line: heading):\n" + "".join(
            f"{'  ' * (entry['level'] - top)}- {entry['line']}: {entry['heading']}\n"
            for entry in outline
        )
    if answer.get("truncated"):
        line = places[0]["first_line"] if places else 1
        how = (f"call {reader.tool} again with offset {line} and no query" if reader.tool
               else f"run it again with --offset {line} and without --query")  # fmt: skip
        said += f"\n[Passages of a page of {total} lines: to read on from one, {how}.]\n"
    return said


def _about(answer: Mapping[str, Any]) -> str:
    """Lines on the page's author, date and site, a product's facts, then its warnings, each
    a note."""
    said = [f"{label}: {answer[key]}" for key, label in _ABOUT if answer.get(key)]
    lines = ["; ".join(said)] if said else []
    lines += [answer["product"]] if answer.get("product") else []  # a product's facts
    lines += [f"Note: {w['message']}" for w in answer.get("warnings", [])]
    return "".join(f"{line}\n" for line in lines)


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
