"""PDFs to markdown: PDFium (pypdfium2) gives each character's place, size and font, and
layout.py reads headings, tables, lists, paragraphs and columns from them.

PDFium was measured against pdfplumber (pdfminer.six) and pypdf on a 100-page report: 0.6 s
for every character's box and size here, against 5.3 s for pdfplumber's characters alone;
pypdf gives no sizes. It is Apache-2.0/BSD, repairs broken cross-reference tables, and works
on the bytes in memory. What it does not bound is bounded here: pages read per call and the
characters taken from one page; and, since a page's content stream or font inflates whole
inside PDFium, the time and memory of the whole reading, which runs in a process of its own
(forked.py) that sends each page's lines as it reads them. The layout is read from them here.
"""

from __future__ import annotations

import ctypes
import re
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.reading.files import MAX_PAGES, MAX_TEXT, Reading, forked, layout, paging
from ikigai_web.fetch.reading.placeholders import first_heading, meaningful

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.document import Document

# A page of dense text holds some 5,000 characters; past this a page is a drawing of glyphs.
MAX_PAGE_CHARS = 60_000
_BOLD_FLAG = 1 << 18  # the font descriptor's ForceBold
_BOLD_WEIGHT = 600
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_DATE = re.compile(r"^(?:D:)?(\d{4})(\d{2})(\d{2})")
# Read from a later page on, a PDF without a title in its metadata is still titled by its own
# first heading: it is looked for on at most this many of its first pages.
_TITLE_PAGES = 3
_SPACE = 32
_SOFT_HYPHEN = 2  # what PDFium gives for a hyphen it found at a line's end


def pdf_document(body: bytes, url: str, reading: Reading) -> Document:
    """The PDF as markdown, from the first page asked for, at most MAX_PAGES pages, each
    after its marker; its title (metadata, else the first heading), author, subject and
    date. Pages not read (past MAX_PAGES, out of time, or a page that stopped the reader)
    are named in a warning that says how to read on."""
    import pypdfium2  # noqa: F401 - loaded here, before the fork, not in each child

    from ikigai_web.fetch.reading.document import Document

    read = forked.read_apart(
        partial(_pages, body, url, reading.first_page), reading.deadline, reading.memory
    )
    if "total" not in read.meta:  # stopped while PDFium opened the file
        assert read.stop is not None
        code, why = read.stop.explained("the file", reading.memory)
        raise ToolError(code, f"The PDF at {url} could not be read: {why}. {_ELSEWHERE}")
    total, start, info = read.meta["total"], read.meta["start"], read.meta["info"]
    pages = [(number, _page_of(data)) for number, data in read.parts]
    if read.stop is not None and not pages:
        code, why = read.stop.explained(f"page {start}", reading.memory)
        later = start < total and read.stop.why != "time"
        after = f' The pages after it may be read: pages "{start + 1}-".' if later else ""
        raise ToolError(code, f"The PDF at {url} could not be read: {why}.{after}")
    title = meaningful(info.get("Title"))
    leading = [_page_of(data) for data in read.meta.get("leading", [])] if not title else []
    layout.drop_running([*leading, *(page for _, page in pages)])
    style = layout.styles([page for _, page in pages])
    parts = [
        part
        for number, page in pages
        for part in (paging.marker("Page", number, total), layout.page_markdown(page, style))
    ]
    markdown = "\n\n".join(part for part in parts if part)
    software = (info.get("Creator", ""), info.get("Producer", ""))
    return Document(
        markdown=markdown,
        title=title or _leading_heading(leading, pages) or first_heading(markdown),
        author=meaningful(info.get("Author"), author=True, software=software),
        date=_day(info.get("CreationDate")),
        description=meaningful(info.get("Subject")),
        warnings=_unread(pages, read, reading.memory) + _broken(pages),
    )


_ELSEWHERE = "Look for an HTML version, or a smaller file."


def _unread(
    pages: list[tuple[int, layout.Page]], read: forked.Read, memory: int
) -> list[dict[str, str]]:
    numbers = [number for number, _ in pages]
    cut = read.meta.get("cut", f"{MAX_PAGES} is the most")
    total, start = read.meta["total"], read.meta["start"]
    return paging.unread("Page", numbers, start, total, read.stop, cut, memory)


def _pages(body: bytes, url: str, first_page: int) -> Iterator[forked.Event]:
    """In the reader's process: the PDF's metadata, then each page's lines, from
    `first_page` (the first page when past the end), at most MAX_PAGES."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(body)
    except pdfium.PdfiumError as exc:
        raise _unreadable(url, str(exc)) from None
    total = len(pdf)
    start = first_page if first_page <= total else 1
    info = pdf.get_metadata_dict(skip_empty=True)
    yield "meta", {"total": total, "start": start, "info": info}
    if start > 1 and not meaningful(info.get("Title")):
        # Its first pages, for the title a whole read would give it (see _leading_heading).
        first = [_page_data(_page(pdf, i)) for i in range(min(start - 1, _TITLE_PAGES))]
        yield "meta", {"leading": first}
    characters = 0
    for number in range(start, min(total, start + MAX_PAGES - 1) + 1):
        if characters >= MAX_TEXT:
            yield "meta", {"cut": f"{MAX_TEXT:,} characters is the most"}
            return
        yield "at", number
        page = _page(pdf, number - 1)
        characters += sum(len(cell.text) for line in page.lines for cell in line.cells)
        yield "part", [number, _page_data(page)]


def _page_data(page: layout.Page) -> list[Any]:
    """A page's lines as JSON: [width, height, broken, [[[text, x0, x1, y, size, bold], ...]]]."""
    lines = [[list(segment.__dict__.values()) for segment in line.cells] for line in page.lines]
    return [page.width, page.height, page.broken, lines]


def _page_of(data: list[Any]) -> layout.Page:
    width, height, broken, lines = data
    rows = [layout.Line([layout.Segment(*cell) for cell in line]) for line in lines]
    return layout.Page(width, height, rows, broken)


def _unreadable(url: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.PARSE_ERROR,
        f"The PDF at {url} could not be read ({why}). It may be damaged or encrypted with a "
        "password; look for an HTML version.",
    )


def _broken(pages: list[tuple[int, layout.Page]]) -> list[dict[str, str]]:
    """A PARSE_ERROR warning naming the pages PDFium could not load (shown empty)."""
    broken = [str(number) for number, page in pages if page.broken]
    if not broken:
        return []
    named = f"Pages {', '.join(broken)}" if len(broken) > 1 else f"Page {broken[0]}"
    message = f"{named} of this PDF could not be read; the rest is here."
    return [{"code": "PARSE_ERROR", "message": message}]


def _page(pdf: Any, index: int) -> layout.Page:
    import pypdfium2 as pdfium

    try:
        return _page_lines(pdf, index)
    except pdfium.PdfiumError:
        return layout.Page(0, 0, broken=True)


def _page_lines(pdf: Any, index: int) -> layout.Page:
    page = pdf[index]
    try:
        textpage = page.get_textpage()
        try:
            chars = _chars(textpage)
        finally:
            textpage.close()
        width, height = page.get_size()
    finally:
        page.close()
    return layout.page_lines(chars, width, height)


def _chars(textpage: Any) -> list[layout.Char]:
    """The page's characters (the first MAX_PAGE_CHARS) but spaces and line ends, which the
    layout puts back from the gaps; y is the bottom of the character's line box."""
    import pypdfium2.raw as c

    raw = textpage.raw
    box = c.FS_RECTF()
    bold_of: dict[bytes, bool] = {}
    chars = []
    for index in range(min(c.FPDFText_CountChars(raw), MAX_PAGE_CHARS)):
        code = c.FPDFText_GetUnicode(raw, index)
        if code <= _SPACE and code != _SOFT_HYPHEN:
            continue
        c.FPDFText_GetLooseCharBox(raw, index, box)
        size = c.FPDFText_GetFontSize(raw, index)
        bold = _bold(c.FPDFText_GetTextObject(raw, index), bold_of)
        chars.append(layout.Char(chr(code), box.left, box.right, box.bottom, size, bold))
    return chars


def _bold(text_object: Any, known: dict[bytes, bool]) -> bool:
    """Whether the text object's font is bold (by weight, flag or name), asked once each."""
    import pypdfium2.raw as c

    key = bytes(text_object)  # the pointer's value: the same object, the same font
    if key not in known:
        font = c.FPDFTextObj_GetFont(text_object) if any(key) else None
        known[key] = bool(font) and _font_is_bold(font)
    return known[key]


def _font_is_bold(font: Any) -> bool:
    import pypdfium2.raw as c

    name = ctypes.create_string_buffer(128)
    c.FPDFFont_GetBaseFontName(font, name, len(name))
    weight = c.FPDFFont_GetWeight(font)
    flags = c.FPDFFont_GetFlags(font)
    named = _BOLD_NAME.search(name.value.decode("latin-1")) is not None
    return weight >= _BOLD_WEIGHT or bool(flags & _BOLD_FLAG) or named


def _leading_heading(
    leading: list[layout.Page], pages: list[tuple[int, layout.Page]]
) -> str | None:
    """The first heading of the document's first pages, read for it though the call reads
    from a later page: a whole read would be titled by it (its style judged with the pages
    read, as a whole read judges it with all of them)."""
    if not leading:
        return None
    style = layout.styles([*leading, *(page for _, page in pages)])
    return next(
        filter(None, (first_heading(layout.page_markdown(p, style)) for p in leading)), None
    )


def _day(value: object) -> str | None:
    """The creation day of a PDF date (D:YYYYMMDD...), when it is a real day."""
    found = _DATE.match(str(value or ""))
    if not found:
        return None
    try:
        day = date(int(found.group(1)), int(found.group(2)), int(found.group(3)))
    except ValueError:
        return None
    return day.isoformat()
