"""A page as an answer takes it: its lines, wrapped so that any one fits, cut to the answer's
size; or the passages that answer a query, with the page's outline. web-fetch's answer and a
search's `read` of a page (search/reading.py) number the same lines the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ikigai_web.common.text import compact

if TYPE_CHECKING:
    from ikigai_web.fetch.pipeline import Page
    from ikigai_web.fetch.reading.document import Document

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


def answer_frame(
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
    out, extras, markdown = answer_frame(page, None, None, None)
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


def fit_lines(lines: list[str], room: int) -> list[str]:
    """The longest prefix of `lines` whose JSON-escaped, newline-joined size fits `room`."""
    used = 0
    for count, line in enumerate(lines):
        used += len(compact(line)) - 2 + (2 if count else 0)  # "\n" escapes to 2 bytes
        if used > room:
            return lines[:count]
    return lines
