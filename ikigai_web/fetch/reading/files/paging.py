"""Page markers in a document's markdown, and the markdown of pages N-M found by them.

A PDF's pages and a deck's slides each start with a marker line, `[Page 3 of 12]` or
`[Slide 3 of 12]`, which a reader sees and `pages` selects by (text that would read as a
marker is escaped by the readers, so only theirs count).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ikigai_web.common.errors import ErrorCode, ToolError, invalid
from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from ikigai_web.fetch.reading.files.forked import Stop

PAGE_NAMES = {
    "application/pdf": "Page",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "Slide",
}
MOST = 10**6
_RANGE = lazy(r"^(\d{1,7})(?:\s*[-\u2013]\s*(\d{1,7})?)?$")
_MARKER = lazy(r"^\[(?:Page|Slide) (\d+) of (\d+)\]$", re.MULTILINE)
ALLOWED = 'a page number or a range such as "3" or "2-5" (or "4-" for 4 to the end), from 1'


def marker(name: str, number: int, total: int) -> str:
    return f"[{name} {number} of {total}]"


def parse(value: str) -> tuple[int, int | None] | None:
    """`pages` as (first, last or None for the end); None for "" (not set); else
    INVALID_INPUT."""
    text = value.strip()
    if not text:
        return None
    match = _RANGE.match(text)
    first = int(match.group(1)) if match else 0
    last = int(match.group(2)) if match and match.group(2) else None
    if not match or not 1 <= first <= MOST or (last is not None and not first <= last <= MOST):
        raise invalid("pages", value, ALLOWED)
    return first, last if last is not None or "-" in text or "\u2013" in text else first


def unread(
    name: str, read: list[int], start: int, total: int, stop: Stop | None, cut: str, memory: int
) -> list[dict[str, str]]:
    """A warning when pages (or slides: `name`) after those `read` were left out, why, and
    the `pages` to ask for next: past a page that stopped the reader, from the one the time
    ran out on or where the reader's own bound (`cut`) stopped it."""
    last = read[-1] if read else start - 1
    if last >= total:
        return []
    unit = name.lower()
    if stop is None:
        code, why, following = ErrorCode.TOO_LARGE, cut, last + 1
    else:
        code, why = stop.explained(f"{unit} {last + 1}", memory)
        following = last + 1 if stop.why == "time" else last + 2
    message = f"This document has {total} {unit}s and {unit}s {start}-{last} were read ({why})"
    if following <= total:
        message += f': to read on, call again with pages "{following}-{min(total, following + 19)}"'
    return [{"code": code.value, "message": message + "."}]


def total_pages(markdown: str) -> int | None:
    found = _MARKER.search(markdown)
    return int(found.group(2)) if found else None


def select(markdown: str, kind: str, pages: tuple[int, int | None], shown: str | int) -> str:
    """The markdown of pages first to last (to the end when last is None), markers included;
    `shown` is `pages` as the call wrote it, for a message."""
    name = PAGE_NAMES.get(kind)
    total = total_pages(markdown) if name else None
    if name is None or total is None:
        raise invalid(
            "pages", shown, f"only PDFs and slide decks have pages, and this is {kind}: "
            "leave pages out and read on with offset"
        )  # fmt: skip
    first, last = pages[0], pages[1] or total
    if first > total:
        unit = name.lower()
        raise invalid("pages", shown, f"this document has {total} {unit}s: ask for 1 to {total}")
    starts = [(int(m.group(1)), m.start()) for m in _MARKER.finditer(markdown)]
    chosen = [i for i, (number, _) in enumerate(starts) if first <= number <= last]
    if not chosen:
        read = f"{starts[0][0]}-{starts[-1][0]}" if starts else "none"
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"{name} {first} could not be read within the call's time (read: {read}); "
            "ask for fewer pages, or try again.",
        )
    end = chosen[-1] + 1
    stop = starts[end][1] if end < len(starts) else len(markdown)
    return markdown[starts[chosen[0]][1] : stop].strip()
