"""PowerPoint decks through python-pptx: each slide after its marker, `[Slide N of M]`, its
title as a heading, its text boxes top to bottom (in groups too), bulleted text by level, its
tables and its notes.

python-pptx parses every part of the deck as it opens it. So a slide whose part holds more
than MAX_SLIDE_ELEMENTS elements (a text box of a million paragraphs, a hundred thousand
shapes) is left out before the deck is opened, with a warning naming it, and any other part
that large refuses the deck; of the rest, at most MAX_SHAPES shapes of a slide are read.
"""

from __future__ import annotations

import zipfile
from io import BytesIO
from typing import TYPE_CHECKING, Any

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.reading.files import MAX_PAGES, paging
from ikigai_web.fetch.reading.files.office_parts import ELSEWHERE, TextBudget, escaped, line, table
from ikigai_web.fetch.reading.placeholders import meaningful

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.document import Document
    from ikigai_web.fetch.reading.files import forked
    from ikigai_web.fetch.reading.files.archive import Package

# A slide of dense text and a table or a diagram holds some thousands of elements.
MAX_SLIDE_ELEMENTS = 100_000
MAX_PART_ELEMENTS = 1_000_000
MAX_SHAPES = 2_000
_SLIDE = "sld"
_EMPTY_SLIDE = (
    b'<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
    b'xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"><p:cSld><p:spTree>'
    b'<p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>'
    b"</p:spTree></p:cSld></p:sld>"
)
_BULLETED = frozenset({"BODY", "OBJECT"})  # placeholders whose paragraphs are items
_GROUP = 6  # MSO_SHAPE_TYPE.GROUP
_NOTE = "Notes:"


def read(package: Package, body: bytes, url: str, first_page: int) -> Iterator[forked.Event]:
    """In the reader's process: the deck's properties and slide count, then each slide's
    markdown, from `first_page` (the first slide when past the end), at most MAX_PAGES."""
    from pptx import Presentation

    heavy = _heavy_slides(package, url)
    yield "at", "the deck"
    deck = Presentation(BytesIO(_with_empty(package, heavy) if heavy else body))
    slides = list(deck.slides)
    start = first_page if first_page <= len(slides) else 1
    props = deck.core_properties
    yield (
        "meta",
        {
            "title": props.title or "",
            # The deck's first slide titles it, whichever slides are read.
            "first_title": _slide_title(slides[0]) if slides else "",
            "author": props.author or "",
            "description": props.subject or "",
            "total": len(slides),
            "start": start,
        },
    )
    budget = TextBudget()
    for number, slide in enumerate(slides[start - 1 : start - 1 + MAX_PAGES], start):
        if budget.spent:
            yield "meta", {"cut": f"{budget.most:,} characters is the most"}
            return
        yield "at", number
        text, warnings = _slide_or_note(slide, number, heavy)
        marker = paging.marker("Slide", number, len(slides))
        yield "part", [number, budget.take(f"{marker}\n\n{text}".strip())]
        for message in warnings:
            yield "warning", {"code": "TOO_LARGE", "message": message}


def _heavy_slides(package: Package, url: str) -> dict[str, int]:
    """The slides too large to open, by part name, with their elements; TOO_LARGE for any
    other part that large."""
    for name, part in package.parts.items():
        if part.root != _SLIDE and part.elements > MAX_PART_ELEMENTS:
            raise ToolError(
                ErrorCode.TOO_LARGE,
                f"The deck at {url} has a part ({name}) of {part.elements:,} XML elements, more "
                f"than web-fetch reads ({MAX_PART_ELEMENTS:,}). {ELSEWHERE}",
            )
    return {
        name: part.elements
        for name, part in package.parts.items()
        if part.root == _SLIDE and part.elements > MAX_SLIDE_ELEMENTS
    }


def _with_empty(package: Package, heavy: dict[str, int]) -> bytes:
    """The deck with each of the `heavy` slides emptied."""
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
        for member in package.zip.infolist():
            data = _EMPTY_SLIDE if member.filename in heavy else package.zip.read(member)
            copy.writestr(member.filename, data)
    return out.getvalue()


def _slide_or_note(slide: Any, number: int, heavy: dict[str, int]) -> tuple[str, list[str]]:
    """The slide's markdown and its warnings: a slide left out is a warning alone."""
    elements = heavy.get(str(slide.part.partname).lstrip("/"))
    if elements is not None:
        message = (
            f"Slide {number} was left out: it holds {elements:,} XML elements, more than "
            f"web-fetch reads of a slide ({MAX_SLIDE_ELEMENTS:,})."
        )
        return "", [message]
    shapes = _Shapes()
    text = _slide(slide, shapes)
    if not shapes.cut:
        return text, []
    return text, [f"Slide {number} has more than {MAX_SHAPES:,} shapes: its first were read."]


class _Shapes:
    """The shapes of one slide read so far, groups' included."""

    def __init__(self) -> None:
        self.left = MAX_SHAPES
        self.cut = False

    def take(self, shapes: Any) -> list[Any]:
        taken = []
        for shape in shapes:
            if self.left <= 0:
                self.cut = True
                break
            self.left -= 1
            taken.append(shape)
        return taken


def _slide_title(slide: Any) -> str:
    title = slide.shapes.title
    return line(title.text_frame.text) if title is not None and title.has_text_frame else ""


def _slide(slide: Any, shapes: _Shapes) -> str:
    title = slide.shapes.title
    blocks = [f"## {_slide_title(slide)}"] if title is not None and title.has_text_frame else []
    taken = shapes.take(slide.shapes)
    others = [shape for shape in taken if title is None or shape.shape_id != title.shape_id]
    for shape in sorted(others, key=lambda s: (s.top or 0, s.left or 0)):
        blocks += _shape(shape, shapes)
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = slide.notes_slide.notes_text_frame.text.strip()
        if notes:
            blocks.append(f"{_NOTE} {line(notes)}")
    return "\n\n".join(b for b in blocks if b.strip() and b != "## ")


def _shape(shape: Any, shapes: _Shapes) -> list[str]:
    if shape.shape_type is not None and shape.shape_type == _GROUP:  # its shapes, in order
        return [block for inner in shapes.take(shape.shapes) for block in _shape(inner, shapes)]
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[line(cell.text) for cell in row.cells] for row in shape.table.rows]
        return [table(rows)] if rows and any(any(r) for r in rows) else []
    if not shape.has_text_frame:
        return []
    bulleted = shape.is_placeholder and shape.placeholder_format.type.name in _BULLETED
    lines = []
    for paragraph in shape.text_frame.paragraphs:
        text = line(paragraph.text)
        if text:
            lines.append(f"{'  ' * paragraph.level}- {text}" if bulleted else escaped(text))
    return ["\n".join(lines) if bulleted else "\n\n".join(lines)]


def deck_document(read: forked.Read, url: str, memory: int) -> Document:
    """The slides read, in order, and a warning naming those left out, with the `pages` to
    ask for next."""
    from ikigai_web.fetch.reading.document import Document

    meta = read.meta
    slides = [(number, text) for number, text in read.parts]
    if "total" not in meta or (read.stop is not None and not slides):
        assert read.stop is not None
        unit = f"slide {read.stop.at}" if isinstance(read.stop.at, int) else "the deck"
        code, why = read.stop.explained(unit, memory)
        raise ToolError(code, f"The deck at {url} could not be read: {why}. {ELSEWHERE}")
    numbers = [number for number, _ in slides]
    cut = meta.get("cut", f"{MAX_PAGES} is the most")
    unread = paging.unread("Slide", numbers, meta["start"], meta["total"], read.stop, cut, memory)
    return Document(
        markdown="\n\n".join(text for _, text in slides).strip(),
        title=meaningful(meta.get("title")) or meaningful(meta.get("first_title")),
        author=meaningful(meta.get("author"), author=True),
        description=meaningful(meta.get("description")),
        warnings=read.warnings + unread,
    )
