"""Word, Excel, PowerPoint and EPUB files to markdown, each through a well-kept reader once
archive.py has passed the package: mammoth (Word to HTML, headings and lists by style, then
this project's HTML-to-markdown; word.py), openpyxl (sheets, read streaming; excel.py),
python-pptx (slides in order, their tables and notes; slides.py), and for EPUB the zip's own
spine through the HTML path (epub.py).

Each reads in a process of its own (forked.py), a unit at a time: a run of paragraphs, a
sheet, a slide, a chapter. A file that stops its reader (the call's time, its memory, a
library's failure) gives what was read before, with a warning naming where it stopped; or,
when nothing was, an error saying so.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ikigai_web.common.errors import ToolError
from ikigai_web.fetch.reading.files import DOCX, PPTX, XLSX, Reading, forked
from ikigai_web.fetch.reading.files.archive import open_package
from ikigai_web.fetch.reading.files.office_parts import ELSEWHERE
from ikigai_web.fetch.reading.placeholders import first_heading, meaningful

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.document import Document

# What each format's reader imports, loaded before the fork (in the MCP server's warm worker
# the parent learns them) rather than in each child.
_FILES = "ikigai_web.fetch.reading.files"
_MARKDOWN = "ikigai_web.fetch.reading.markdown"
_LIBRARIES = {
    DOCX: ("mammoth", f"{_FILES}.word", _MARKDOWN),
    XLSX: ("openpyxl", f"{_FILES}.excel"),
    PPTX: ("pptx", f"{_FILES}.slides"),
}
_EPUB_MODULES = (f"{_FILES}.epub", _MARKDOWN)


def office_document(kind: str, body: bytes, url: str, reading: Reading) -> Document:
    """The document as markdown; its title from its properties, else its first heading."""
    from importlib import import_module

    for name in ("lxml.etree", *_LIBRARIES.get(kind, _EPUB_MODULES)):
        import_module(name)
    reader = partial(_read, kind, body, url, reading.first_page, reading.include_links)
    read = forked.read_apart(reader, reading.deadline, reading.memory)
    if kind == PPTX:
        from ikigai_web.fetch.reading.files.slides import deck_document

        return _titled(deck_document(read, url, reading.memory))
    return _titled(_document(read, url, reading.memory))


def _read(
    kind: str,
    body: bytes,
    url: str,
    first_page: int,
    include_links: bool,  # noqa: FBT001
) -> Iterator[forked.Event]:
    """In the reader's process: the package checked, then the format's reader."""
    package = open_package(body, url)
    try:
        if kind == DOCX:
            from ikigai_web.fetch.reading.files import word

            yield from word.read(package, url, include_links)
        elif kind == XLSX:
            from ikigai_web.fetch.reading.files import excel

            yield from excel.read(package, body, url)
        elif kind == PPTX:
            from ikigai_web.fetch.reading.files import slides

            yield from slides.read(package, body, url, first_page)
        else:
            from ikigai_web.fetch.reading.files import epub

            yield from epub.read(package, url, include_links)
    finally:
        package.close()


def _document(read: forked.Read, url: str, memory: int) -> Document:
    """The parts read, in order, and a warning naming where the reader stopped, if it did."""
    from ikigai_web.fetch.reading.document import Document

    markdown = "\n\n".join(part for part in read.parts if part)
    warnings = list(read.warnings)
    if read.stop is not None:
        code, why = read.stop.explained(read.stop.at or "the file", memory)
        if not markdown:
            raise ToolError(code, f"The document at {url} could not be read: {why}. {ELSEWHERE}")
        message = f"Only the start of this document was read: {why}."
        warnings.append({"code": code.value, "message": message})
    meta = read.meta
    return Document(
        markdown=markdown,
        title=meaningful(meta.get("title")),
        author=meaningful(meta.get("author"), author=True),
        description=meaningful(meta.get("description")),
        warnings=warnings,
    )


def _titled(document: Document) -> Document:
    from dataclasses import replace

    if document.title:
        return document
    return replace(document, title=first_heading(document.markdown))
