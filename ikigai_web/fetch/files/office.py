"""Word, Excel, PowerPoint and EPUB files to markdown, each through a well-kept reader once
archive.py has passed the package: mammoth (Word to HTML, headings and lists by style, then
this project's HTML-to-markdown), openpyxl (sheets, read streaming), python-pptx (slides in
order, their tables and notes), and for EPUB the zip's own spine through the HTML path.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time
from io import BytesIO
from typing import TYPE_CHECKING, Any

from ikigai_web.fetch.files import DOCX, MAX_PAGES, PPTX, RESERVE_SECONDS, XLSX, paging
from ikigai_web.fetch.files.archive import open_package, unreadable
from ikigai_web.fetch.placeholders import meaningful

if TYPE_CHECKING:
    import zipfile

    from ikigai_web.fetch.document import Document
    from ikigai_web.net.http import Deadline

# A sheet is a table of at most this many rows and columns; a workbook at most this many cells.
MAX_ROWS = 2_000
MAX_COLUMNS = 50
MAX_CELLS = 200_000
_STYLE_MAP = "p[style-name='Title'] => h1:fresh\np[style-name='Subtitle'] => h2:fresh"
_HEADING = re.compile(r"^#{1,6} (.+)$", re.MULTILINE)
_BULLETED = frozenset({"BODY", "OBJECT"})  # placeholders whose paragraphs are items
_NOTE = "Notes:"


def office_document(
    kind: str, body: bytes, url: str, deadline: Deadline | None, first_page: int = 1
) -> Document:
    """The document as markdown; its title from its properties, else its first heading."""
    package = open_package(body, url)
    try:
        if kind == DOCX:
            return _titled(_docx(body, package))
        if kind == XLSX:
            return _titled(_xlsx(body))
        if kind == PPTX:
            return _titled(_pptx(body, deadline, first_page))
        return _titled(_epub(package, url))
    except _broken() as exc:
        raise unreadable(url, f"{type(exc).__name__}: {exc}") from None
    finally:
        package.close()


def _broken() -> tuple[type[BaseException], ...]:
    """What the libraries raise on a package that passed the guards but is not what it says
    (a part missing or of the wrong kind, a damaged stream); asked only once one is raised."""
    import zipfile
    import zlib

    import lxml.etree
    from openpyxl.utils.exceptions import InvalidFileException
    from pptx.exc import PythonPptxError

    library = (InvalidFileException, PythonPptxError, lxml.etree.LxmlError, zipfile.BadZipFile)
    python = (KeyError, ValueError, TypeError, AttributeError, IndexError, RecursionError)
    return (*library, *python, OSError, EOFError, RuntimeError, zlib.error)


def _titled(document: Document) -> Document:
    from dataclasses import replace

    if document.title:
        return document
    # The first heading that is no placeholder of its own (a sheet named "Sheet1").
    headings = (meaningful(found[1]) for found in _HEADING.finditer(document.markdown))
    return replace(document, title=next(filter(None, headings), None))


def _core(package: zipfile.ZipFile) -> dict[str, str]:
    """Title, creator and subject from docProps/core.xml (checked by the archive's guard)."""
    import lxml.etree

    if "docProps/core.xml" not in package.namelist():
        return {}
    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True)
    root = lxml.etree.fromstring(package.read("docProps/core.xml"), parser)
    found = {lxml.etree.QName(e).localname: " ".join((e.text or "").split()) for e in root}
    return {k: v for k, v in found.items() if v}


def _docx(body: bytes, package: zipfile.ZipFile) -> Document:
    import mammoth

    from ikigai_web.fetch.document import Document
    from ikigai_web.fetch.markdown import html_markdown

    # Images are left out, unread: the text needs none of their bytes.
    no_images = mammoth.images.img_element(lambda _image: {})
    result = mammoth.convert_to_html(BytesIO(body), style_map=_STYLE_MAP, convert_image=no_images)
    core = _core(package)
    return Document(
        markdown=html_markdown(result.value, include_links=True),
        title=meaningful(core.get("title")),
        author=meaningful(core.get("creator"), author=True),
        description=meaningful(core.get("subject")) or meaningful(core.get("description")),
    )


def _xlsx(body: bytes) -> Document:
    """Each sheet under its name, as a table: its first row the header."""
    import openpyxl

    from ikigai_web.fetch.document import Document

    book = openpyxl.load_workbook(BytesIO(body), read_only=True, data_only=True)
    try:
        cells = MAX_CELLS
        parts = []
        for sheet in book.worksheets:
            rows = _rows(sheet, cells)
            cells -= sum(map(len, rows))
            parts.append(f"## {_line(sheet.title)}\n\n{table(rows)}" if rows else "")
        props = book.properties
        return Document(
            markdown="\n\n".join(p for p in parts if p),
            title=meaningful(props.title),
            author=meaningful(props.creator, author=True),
            description=meaningful(props.subject),
        )
    finally:
        book.close()


def _rows(sheet: Any, cells: int) -> list[list[str]]:
    """The sheet's rows as text, without empty rows and trailing empty cells, bounded."""
    rows: list[list[str]] = []
    for row in sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True):
        if len(rows) >= MAX_ROWS or cells <= 0:
            break
        texts = [_value(value) for value in row]
        while texts and not texts[-1]:
            texts.pop()
        if texts:
            rows.append(texts)
            cells -= len(texts)
    return rows


def _value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.15g}"
    if isinstance(value, datetime) and value.time() == time():
        return value.date().isoformat()  # a date cell: openpyxl gives it a midnight
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return _line(str(value))


def _line(text: str) -> str:
    return " ".join(text.split())


def table(rows: list[list[str]]) -> str:
    """A markdown table, the first row its header, every row as wide as the widest."""
    width = max(map(len, rows))
    lines = [
        "| " + " | ".join(c.replace("|", "\\|") for c in [*row, *[""] * (width - len(row))]) + " |"
        for row in rows
    ]
    lines.insert(1, "|" + "---|" * width)
    return "\n".join(lines)


def _pptx(body: bytes, deadline: Deadline | None, first_page: int) -> Document:
    """Each slide after its marker: its title as a heading, its text, tables and notes."""
    from pptx import Presentation

    from ikigai_web.fetch.document import Document

    deck = Presentation(BytesIO(body))
    slides = list(deck.slides)
    start = first_page if first_page <= len(slides) else 1
    parts: list[str] = []
    for number, slide in enumerate(slides[start - 1 : start - 1 + MAX_PAGES], start):
        if deadline is not None and parts and deadline.remaining() < RESERVE_SECONDS:
            break
        parts.append(paging.marker("Slide", number, len(slides)) + "\n\n" + _slide(slide))
    props = deck.core_properties
    return Document(
        markdown="\n\n".join(parts).strip(),
        # The deck's first slide titles it, whichever slides are read (see _titled).
        title=meaningful(props.title) or (meaningful(_slide_title(slides[0])) if slides else None),
        author=meaningful(props.author, author=True),
        description=meaningful(props.subject),
    )


def _slide_title(slide: Any) -> str:
    title = slide.shapes.title
    return _line(title.text_frame.text) if title is not None and title.has_text_frame else ""


def _slide(slide: Any) -> str:
    title = slide.shapes.title
    blocks = [f"## {_slide_title(slide)}"] if title is not None and title.has_text_frame else []
    others = [shape for shape in slide.shapes if title is None or shape.shape_id != title.shape_id]
    for shape in sorted(others, key=lambda s: (s.top or 0, s.left or 0)):
        blocks += _shape(shape)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = slide.notes_slide.notes_text_frame.text.strip()
        if notes:
            blocks.append(f"{_NOTE} {_line(notes)}")
    return "\n\n".join(b for b in blocks if b.strip() and b != "## ")


def _shape(shape: Any) -> list[str]:
    if shape.shape_type is not None and shape.shape_type == 6:  # a group: its shapes, in order
        return [block for inner in shape.shapes for block in _shape(inner)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[_line(cell.text) for cell in row.cells] for row in shape.table.rows]
        return [table(rows)] if rows and any(any(r) for r in rows) else []
    if not shape.has_text_frame:
        return []
    bulleted = shape.is_placeholder and shape.placeholder_format.type.name in _BULLETED
    lines = []
    for paragraph in shape.text_frame.paragraphs:
        text = _line(paragraph.text)
        if text:
            lines.append(f"{'  ' * paragraph.level}- {text}" if bulleted else _escaped(text))
    return ["\n".join(lines) if bulleted else "\n\n".join(lines)]


def _escaped(text: str) -> str:
    """Text that markdown, or `pages`, would read as something else (`# x`, `[Slide 2 of 3]`)
    with that first mark escaped."""
    return "\\" + text if text[:1] in "#>[|" else text


def _epub(package: zipfile.ZipFile, url: str) -> Document:
    """The chapters in spine order, each through the HTML-to-markdown path."""
    from ikigai_web.fetch.document import Document
    from ikigai_web.fetch.markdown import html_markdown

    container = _xml(package, "META-INF/container.xml")
    opf_path = _string(container, "//*[local-name()='rootfile']/@full-path")
    opf = _xml(package, opf_path)
    base = opf_path.rpartition("/")[0]
    manifest = opf.iterfind(".//{*}manifest/{*}item")
    items = {str(item.get("id")): str(item.get("href")) for item in manifest}
    chapters = []
    for itemref in opf.iterfind(".//{*}spine/{*}itemref"):
        href = items.get(str(itemref.get("idref")))
        if href:
            html = package.read(f"{base}/{href}" if base else href)
            chapters.append(html_markdown(html.decode("utf-8", "replace"), include_links=False))
    if not chapters:
        raise unreadable(url, "its spine lists no chapters")
    meta = {
        key: _string(opf, f"//*[local-name()='metadata']/*[local-name()='{key}']")
        for key in ("title", "creator", "description")
    }
    return Document(
        markdown="\n\n".join(c for c in chapters if c),
        title=meaningful(meta["title"]),
        author=meaningful(meta["creator"], author=True),
        description=meaningful(meta["description"]),
    )


def _xml(package: zipfile.ZipFile, name: str) -> Any:
    import lxml.etree

    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True)
    return lxml.etree.fromstring(package.read(name), parser)


def _string(root: Any, path: str) -> str:
    return " ".join(str(root.xpath(f"string({path})")).split())
