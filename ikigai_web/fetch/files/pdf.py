"""PDFs to markdown: PDFium (pypdfium2) gives each character's place, size and font, and
layout.py reads headings, tables, lists, paragraphs and columns from them.

PDFium was measured against pdfplumber (pdfminer.six) and pypdf on a 100-page report: 0.6 s
for every character's box and size here, against 5.3 s for pdfplumber's characters alone;
pypdf gives no sizes. It is Apache-2.0/BSD, repairs broken cross-reference tables, and works
on the bytes in memory. What it does not bound is bounded here: pages read per call, the
characters taken from one page, and the call's deadline, checked between pages.
"""

from __future__ import annotations

import ctypes
import re
from datetime import date
from typing import TYPE_CHECKING, Any

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.files import MAX_PAGES, RESERVE_SECONDS, layout, paging
from ikigai_web.fetch.placeholders import meaningful

if TYPE_CHECKING:
    from ikigai_web.fetch.document import Document
    from ikigai_web.net.http import Deadline

# A page of dense text holds some 5,000 characters; past this a page is a drawing of glyphs.
MAX_PAGE_CHARS = 60_000
_BOLD_FLAG = 1 << 18  # the font descriptor's ForceBold
_BOLD_WEIGHT = 600
_BOLD_NAME = re.compile(r"bold|black|heavy|semibold|demi", re.IGNORECASE)
_DATE = re.compile(r"^(?:D:)?(\d{4})(\d{2})(\d{2})")
# Read from a later page on, a PDF without a title in its metadata is still titled by its own
# first heading: it is looked for on at most this many of its first pages.
_TITLE_PAGES = 3
_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
_SPACE = 32
_SOFT_HYPHEN = 2  # what PDFium gives for a hyphen it found at a line's end


def pdf_document(body: bytes, url: str, deadline: Deadline | None, first_page: int = 1) -> Document:
    """The PDF as markdown, from `first_page` on, at most MAX_PAGES pages, each after its
    marker; its title (metadata, else the first heading), author, subject and date."""
    import pypdfium2 as pdfium

    from ikigai_web.fetch.document import Document

    try:
        pdf = pdfium.PdfDocument(body)
    except pdfium.PdfiumError as exc:
        raise _unreadable(url, str(exc)) from None
    try:
        total = len(pdf)
        start = first_page if first_page <= total else 1
        pages = _read_pages(pdf, start, total, deadline)
        info = pdf.get_metadata_dict(skip_empty=True)
        title = meaningful(info.get("Title"))
        leading = [] if title else [_page(pdf, i) for i in range(min(start - 1, _TITLE_PAGES))]
    finally:
        pdf.close()
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
        title=title or _leading_heading(leading, pages) or _first_heading(markdown),
        author=meaningful(info.get("Author"), author=True, software=software),
        date=_day(info.get("CreationDate")),
        description=meaningful(info.get("Subject")),
        warnings=_unread(pages, start, total) + _broken(pages),
    )


def _unreadable(url: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.PARSE_ERROR,
        f"The PDF at {url} could not be read ({why}). It may be damaged or encrypted with a "
        "password; look for an HTML version.",
    )


def _read_pages(
    pdf: Any, start: int, total: int, deadline: Deadline | None
) -> list[tuple[int, layout.Page]]:
    """Pages from `start` on, until MAX_PAGES are read or the deadline comes near."""
    pages: list[tuple[int, layout.Page]] = []
    for number in range(start, min(total, start + MAX_PAGES - 1) + 1):
        if deadline is not None and pages and deadline.remaining() < RESERVE_SECONDS:
            break
        pages.append((number, _page(pdf, number - 1)))
    return pages


def _unread(pages: list[tuple[int, layout.Page]], start: int, total: int) -> list[dict[str, str]]:
    """A TOO_LARGE warning when pages after those read were left out."""
    last = pages[-1][0] if pages else start - 1
    if last >= total:
        return []
    why = "the call's time ran out" if len(pages) < MAX_PAGES else f"{MAX_PAGES} is the most"
    message = (
        f"This PDF has {total} pages and pages {start}-{last} were read ({why}): to read "
        f'on, call again with pages "{last + 1}-{min(total, last + 20)}".'
    )
    return [{"code": "TOO_LARGE", "message": message}]


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
        filter(None, (_first_heading(layout.page_markdown(p, style)) for p in leading)), None
    )


def _first_heading(markdown: str) -> str | None:
    """The first heading that is no placeholder ("Untitled", a file name)."""
    return next(filter(None, (meaningful(found[1]) for found in _HEADING.finditer(markdown))), None)


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
