"""What the Word, Excel, PowerPoint and EPUB readers (word.py, excel.py, slides.py, epub.py)
share: a package's properties and members parsed as its guard parsed them, the text one call
reads of a document, and markdown lines and tables. office.py runs those readers; they import
this, not it, so no module of files/ imports one that imports it back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ikigai_web.fetch.reading.files import MAX_TEXT
from ikigai_web.fetch.reading.placeholders import meaningful

if TYPE_CHECKING:
    from ikigai_web.fetch.reading.files import forked
    from ikigai_web.fetch.reading.files.archive import Package

ELSEWHERE = "Look for a PDF or HTML version, or a smaller file."


def core(package: Package) -> dict[str, str]:
    """Title, author and subject from docProps/core.xml (checked by the archive's guard)."""
    import lxml.etree

    if "docProps/core.xml" not in package.zip.namelist():
        return {}
    root = xml(package, "docProps/core.xml")
    found = {lxml.etree.QName(e).localname: " ".join((e.text or "").split()) for e in root}
    return {
        "title": found.get("title", ""),
        "author": found.get("creator", ""),
        # A subject that is a placeholder gives way to the description.
        "description": meaningful(found.get("subject")) or found.get("description", ""),
    }


def xml(package: Package, name: str) -> Any:
    """A member the archive's guard passed, parsed as it parsed it (no entities, no network)."""
    import lxml.etree

    parser = lxml.etree.XMLParser(resolve_entities=False, no_network=True)
    return lxml.etree.fromstring(package.zip.read(name), parser)


class TextBudget:
    """The characters one call reads of a document (MAX_TEXT): each unit's text is taken
    until they are spent, the unit that spends them cut at a line's end."""

    def __init__(self) -> None:
        self.most = self.left = MAX_TEXT

    def take(self, text: str) -> str:
        if len(text) <= self.left:
            self.left -= len(text)
            return text
        cut = text.rfind("\n", 0, self.left)
        kept = text[: cut if cut > 0 else self.left]
        self.left = 0
        return kept

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def warning(self, where: str) -> forked.Event:
        message = (
            f"This document's text is longer than {self.most:,} characters, the most one call "
            f"reads: it was read up to {where}, and the rest left out."
        )
        return "warning", {"code": "TOO_LARGE", "message": message}


def line(text: str) -> str:
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


def escaped(text: str) -> str:
    """Text that markdown, or `pages`, would read as something else (`# x`, `[Slide 2 of 3]`)
    with that first mark escaped."""
    return "\\" + text if text[:1] in "#>[|" else text
