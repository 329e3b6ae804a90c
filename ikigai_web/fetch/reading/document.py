"""What web-fetch's stages hand each other: the decode stage the extractor a Decoded body, and
every stage from there on the next a Document, a page's markdown and what the page says of
itself. A reader (files/, decode.py) or the extractor (extract.py) makes it, tidy.py finishes
it, render.py may put what the browser showed in its place, and the answer pages through it.
"""

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
    # A short page that may be its site's not-found page (walls.maybe_not_found): the
    # soft-404 probe's cue, for this fetch alone (never cached).
    maybe_not_found: bool = False
    # ...and no link of it leads elsewhere on its site, its home page included: if its site
    # answers every path with it (soft404.py), a placeholder (parked), not a not-found page.
    leads_nowhere: bool = False
    # ...and it is headed by a domain name or links to one other site alone: what a
    # placeholder looks like, the one short page compared at a site's root (soft404.py).
    stands_in: bool = False
    # {"code", "message"} objects, as the contract's warnings; a list so the cache's JSON
    # round trip gives back an equal Document.
    warnings: list[dict[str, str]] = field(default_factory=list)


class Decoded:
    """A body as decoded: the media type it is read as, and the Document its reader made or,
    for HTML, the page's text, which the extractor takes (`take_html`)."""

    __slots__ = ("document", "html", "kind")

    def __init__(
        self, kind: str, document: Document | None = None, html: str | None = None
    ) -> None:
        self.kind = kind
        self.document = document
        self.html = html

    def take_html(self) -> str:
        """The page's text, which this object then lets go: no name holds a large page's
        whole text once the extractor has cut it down (extract.bound)."""
        html, self.html = self.html or "", None
        return html
