"""web-fetch-tool: any http(s) URL to clean markdown of its main content, safe by default."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from ikigai_web.common import params as p
from ikigai_web.common.answers import PERSON, Reader, output_schema
from ikigai_web.common.errors import invalid
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.common.text import compact
from ikigai_web.fetch import pipeline
from ikigai_web.fetch.page_lines import (
    PASSAGE,
    answer_frame,
    fit_lines,
    line_width,
    split_lines,
    with_passages,
)
from ikigai_web.fetch.pipeline import Page, Request

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.common.settings import Settings

MAX_URL = 4096
MAX_OFFSET = 10**9
MAX_LIMIT = 10**6
MAX_QUERY = 2000
DEFAULT_MAX_CHARS = 4000
MIN_CHARS, MAX_CHARS = 200, 50_000
_ABOUT = (("author", "Author"), ("date", "Date"), ("site_name", "Site"))
_SPACE_OR_CONTROL = re.compile(r"[\s\x00-\x1f\x7f]")
# fetch.reading.pagetype.PAGE_TYPES, which this module cannot import without slowing --schema.
PAGE_TYPES = ("article", "collection", "documentation", "forum", "listing", "product", "service")


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


def to_request(params: Params) -> Request:
    """What the call asks of the page itself, apart from its paging and its query."""
    first_page = params.pages[0] if params.pages else 1
    return Request(params.url, params.full_page, params.include_links, params.render, first_page)


def cached_page(params: Params, settings: Settings) -> tuple[Page, dict[str, Any]]:
    """The page, from the cache or through web-fetch's stages in order (fetch/pipeline.py),
    and what the answer says about the cache. The only function that touches the network."""
    return pipeline.answer_page(to_request(params), settings)


def cache_key(params: Params, settings: Settings) -> list[Any]:
    return pipeline.cache_key(to_request(params), settings)


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
    out, extras, markdown = answer_frame(page, notes, pages, pages_given)
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
    taken = fit_lines(lines[start:end], budget - frame_bytes)
    stop = start + len(taken)
    out |= {"content": "\n".join(taken), "total_lines": total, "truncated": stop < total}
    if stop < total:
        out["next_offset"] = stop + 1
    return out | {"selected_by": "lines"} | extras


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    params = parse_input(raw)
    page, notes = cached_page(params, settings)
    if params.query is None and raw.get("max_chars") not in (None, DEFAULT_MAX_CHARS):
        ignored = {"code": "IGNORED", "message": "'max_chars' sizes the passages of a query, "
                   "and without one was ignored; to cut the lines, use limit"}  # fmt: skip
        notes = notes | {"warnings": [*notes.get("warnings", []), ignored]}
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
