"""EPUB books: the chapters in spine order, each through the HTML-to-markdown path.

The spine names chapters by the manifest's ids; each chapter is read once, however often the
spine lists it (a 5 KB book listing one 1 MB chapter 2,000 times is 2 GB of text otherwise),
and the text stops at MAX_TEXT characters. A chapter's path is looked up in the zip alone:
`../` or an absolute path leads to no file outside it, and a member stored as a symbolic
link is read as the text it holds.
"""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from ikigai_web.fetch.reading.files.archive import unreadable
from ikigai_web.fetch.reading.files.office_parts import TextBudget, xml

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.files import forked
    from ikigai_web.fetch.reading.files.archive import Package


def read(package: Package, url: str, include_links: bool) -> Iterator[forked.Event]:  # noqa: FBT001
    """In the reader's process: the book's metadata, then each chapter's markdown."""
    from ikigai_web.fetch.reading.markdown import html_markdown

    container = xml(package, "META-INF/container.xml")
    opf_path = _string(container, "//*[local-name()='rootfile']/@full-path")
    opf = xml(package, opf_path)
    yield (
        "meta",
        {
            key: _string(opf, f"//*[local-name()='metadata']/*[local-name()='{field}']")
            for key, field in (
                ("title", "title"),
                ("author", "creator"),
                ("description", "description"),
            )
        },
    )
    chapters = _chapters(opf, opf_path.rpartition("/")[0])
    if not chapters:
        raise unreadable(url, "its spine lists no chapters")
    names = set(package.zip.namelist())
    budget = TextBudget()
    for number, path in enumerate(chapters, 1):
        where = f"chapter {number} ({path})"
        if path not in names:
            yield "warning", {"code": "PARSE_ERROR", "message": f"The book's {where} is missing."}
            continue
        yield "at", where
        html = package.zip.read(path).decode("utf-8", "replace")
        yield "part", budget.take(html_markdown(html, include_links=include_links))
        if budget.spent:
            yield budget.warning(where)
            return


def _chapters(opf: Any, base: str) -> list[str]:
    """The paths of the spine's chapters, in order, each once."""
    manifest = opf.iterfind(".//{*}manifest/{*}item")
    items = {str(item.get("id")): str(item.get("href")) for item in manifest}
    paths: dict[str, None] = {}
    for itemref in opf.iterfind(".//{*}spine/{*}itemref"):
        href = items.get(str(itemref.get("idref")))
        if href:
            path = posixpath.normpath(posixpath.join(base, unquote(href.partition("#")[0])))
            paths.setdefault(path.lstrip("/"))
    return list(paths)


def _string(root: Any, path: str) -> str:
    return " ".join(str(root.xpath(f"string({path})")).split())
