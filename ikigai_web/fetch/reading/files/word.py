"""Word documents through mammoth (to HTML: headings and lists by style, tables, bold and
links; images left out unread), then this project's HTML-to-markdown.

mammoth reads a document part whole, and slowly (about a millisecond a paragraph), and walks
nested tables recursively. So the part is streamed here first, its body cut into runs of
paragraphs that mammoth converts one at a time, each sent on as it is done; at most
MAX_PARAGRAPHS paragraphs and MAX_ELEMENTS elements are read, and tables nested deeper than
MAX_TABLE_DEPTH are flattened, their paragraphs kept in the cell that holds them.
"""

from __future__ import annotations

import zipfile
from io import BytesIO
from typing import TYPE_CHECKING, Any

from ikigai_web.fetch.reading.files.archive import Part, unreadable
from ikigai_web.fetch.reading.files.office_parts import TextBudget, core, xml

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.files import forked
    from ikigai_web.fetch.reading.files.archive import Package

MAX_PARAGRAPHS = 20_000
MAX_ELEMENTS = 400_000
# Paragraphs (or elements) mammoth converts at once: a second or so each.
BATCH_PARAGRAPHS = 1_000
BATCH_ELEMENTS = 20_000
# Real documents nest a table in a table a few levels deep; mammoth recurses about 16 frames
# a level, so past 60 it meets Python's recursion limit.
MAX_TABLE_DEPTH = 16
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_OFFICE_DOCUMENT = "/officeDocument"
_STYLE_MAP = "p[style-name='Title'] => h1:fresh\np[style-name='Subtitle'] => h2:fresh"


def read(package: Package, url: str, include_links: bool) -> Iterator[forked.Event]:  # noqa: FBT001
    """In the reader's process: the properties, then each run of paragraphs as markdown."""
    yield "meta", core(package)
    name = main_part(package)
    if package.parts.get(name, Part("", 0)).root != "document":
        raise unreadable(url, f"its main part, {name}, is no Word document")
    others = _others(package, name)
    budget = TextBudget()
    batches = _Batches(package.zip.read(name))
    for first, document in batches:
        where = f"paragraph {first:,}"
        yield "at", where
        yield "part", budget.take(_markdown(others, name, document, include_links))
        if budget.spent:
            yield budget.warning(where)
            return
    if batches.cut:
        message = (
            f"This document is longer than web-fetch reads in one call ({MAX_PARAGRAPHS:,} "
            f"paragraphs, {MAX_ELEMENTS:,} elements): paragraphs 1-{batches.paragraphs:,} were "
            "read, and the rest left out."
        )
        yield "warning", {"code": "TOO_LARGE", "message": message}


def main_part(package: Package) -> str:
    """The document's main part, as mammoth finds it: the package's officeDocument
    relationship, else word/document.xml."""
    if "_rels/.rels" in package.zip.namelist():
        for relationship in xml(package, "_rels/.rels"):
            if str(relationship.get("Type", "")).endswith(_OFFICE_DOCUMENT):
                return str(relationship.get("Target", "")).lstrip("/")
    return "word/document.xml"


def _others(package: Package, name: str) -> bytes:
    """A zip of every member but the main part, stored: each run's package adds its own."""
    out = BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:
        for member in package.zip.infolist():
            if member.filename != name:
                copy.writestr(member.filename, package.zip.read(member))
    return out.getvalue()


def _markdown(others: bytes, name: str, document: bytes, include_links: bool) -> str:  # noqa: FBT001
    import mammoth

    from ikigai_web.fetch.reading.markdown import html_markdown

    out = BytesIO(others)
    with zipfile.ZipFile(out, "a", zipfile.ZIP_STORED) as package:
        package.writestr(name, document)
    out.seek(0)
    no_images = mammoth.images.img_element(lambda _image: {})
    result = mammoth.convert_to_html(
        out, style_map=_STYLE_MAP, convert_image=no_images, external_file_access=False
    )
    return html_markdown(result.value, include_links=include_links)


class _Batches:
    """The main part's body as documents of a run of paragraphs each, streamed: (the number
    of the run's first paragraph, the document). Past MAX_PARAGRAPHS or MAX_ELEMENTS the last
    run ends where reading stopped, even inside a table, and `cut` is set."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.cut = False
        self.paragraphs = 0

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        import lxml.etree

        events = lxml.etree.iterparse(
            BytesIO(self.data), events=("start", "end"), resolve_entities=False,
            no_network=True, huge_tree=False,
        )  # fmt: skip
        depth, elements, first, root, body = 0, 0, 1, None, None
        since: tuple[int, int] = (0, 0)  # paragraphs and elements when the run started
        for event, element in events:
            if event == "start":
                depth += 1
                root = element if depth == 1 else root
                body = element if depth == 2 and element.tag == _W + "body" else body
                continue
            depth -= 1
            elements += 1
            self.paragraphs += element.tag == _W + "p"
            if self.paragraphs >= MAX_PARAGRAPHS or elements >= MAX_ELEMENTS:
                self.cut = True
                break
            if depth == 2 and body is not None and element.getparent() is body:
                run = (self.paragraphs - since[0], elements - since[1])
                if run[0] >= BATCH_PARAGRAPHS or run[1] >= BATCH_ELEMENTS:
                    yield first, _document(root, body)
                    first, since = self.paragraphs + 1, (self.paragraphs, elements)
        if body is not None and len(body):
            yield first, _document(root, body)


def _document(root: Any, body: Any) -> bytes:
    """A document part of the blocks read so far, which `body` then lets go of, its tables
    nested too deeply flattened. The blocks are copied as text and parsed anew: moving
    elements out of a tree that iterparse is still building upsets lxml."""
    import lxml.etree

    shell = lxml.etree.Element(root.tag, nsmap=root.nsmap)
    lxml.etree.SubElement(shell, _W + "body").append(lxml.etree.Comment("blocks"))
    start, _, end = lxml.etree.tostring(shell).partition(b"<!--blocks-->")
    blocks = b"".join(lxml.etree.tostring(block) for block in body)
    del body[:]
    document = lxml.etree.fromstring(start + blocks + end, _parser())
    _flatten(document)
    return bytes(lxml.etree.tostring(document, xml_declaration=True, encoding="UTF-8"))


def _parser() -> Any:
    import lxml.etree

    return lxml.etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)


def _flatten(document: Any) -> None:
    """Each table with MAX_TABLE_DEPTH tables around it replaced by its paragraphs."""
    deep = [
        table
        for table in document.iter(_W + "tbl")
        if sum(1 for _ in table.iterancestors(_W + "tbl")) == MAX_TABLE_DEPTH
    ]
    for table in deep:
        for paragraph in list(_paragraphs(table)):
            table.addprevious(paragraph)
        table.getparent().remove(table)


def _paragraphs(element: Any) -> Iterator[Any]:
    """The paragraphs in `element`, in order, not those inside a paragraph (a text box)."""
    for child in element:
        if child.tag == _W + "p":
            yield child
        else:
            yield from _paragraphs(child)
