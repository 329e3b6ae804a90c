"""Documents that are not web pages (PDF, Word, Excel, PowerPoint, EPUB) read as markdown.

Each format has its reader (pdf.py; office.py for word.py, excel.py, slides.py and epub.py),
run in a process of its own (forked.py); what they share is here and in archive.py (the zip
and XML guards), office_parts.py (properties, the text budget, markdown tables) and paging.py
(page markers and reading pages N-M).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ikigai_web.net.http import Deadline

PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
EPUB = "application/epub+zip"
OFFICE_TYPES = frozenset({DOCX, XLSX, PPTX, EPUB})
DOCUMENT_TYPES = frozenset({PDF, *OFFICE_TYPES})
# Pages (a PDF's) or slides read in one call: the output budget shows some twenty pages at a
# time, and each page costs time; `pages` past this reads a window that starts there.
MAX_PAGES = 300
# Characters of markdown one call reads of a document: some 35 answers of the default output
# budget; a document's cache entry holds them all.
MAX_TEXT = 2_000_000


class Reading(NamedTuple):
    """How a file is read: from which page, by when, in how much memory (bytes beyond what
    the call holds as its reader starts), and whether its links are kept."""

    deadline: Deadline | None = None
    first_page: int = 1
    memory: int = 1 << 30
    include_links: bool = True
