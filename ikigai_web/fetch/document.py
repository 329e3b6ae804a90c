"""What every stage from decode on hands the next: the Document, a page's markdown and what
the page says of itself. A reader (files/), the extractor (extract.py) or the browser's DOM
through the extractor makes it; tidy.py finishes it; the answer pages through it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Document:
    """The markdown of a page, the metadata found in it, its page type and any warnings."""

    markdown: str
    title: str | None = None
    author: str | None = None
    date: str | None = None
    site_name: str | None = None
    description: str | None = None
    product: str | None = None  # a product page's facts from its JSON-LD (product.py)
    page_type: str | None = None  # one of pagetype.PAGE_TYPES, for HTML pages of a clear type
    app_shell: bool = False  # next to no text without JavaScript, and scripts to run
    wall: str | None = None  # one of walls.WALLS: the page is (or is cut by) a wall
    # {"code", "message"} objects, as the contract's warnings; a list so the cache's JSON
    # round trip gives back an equal Document.
    warnings: list[dict[str, str]] = field(default_factory=list)
