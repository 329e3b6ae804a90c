"""The tidy stage: a Document as every answer carries it, whoever made it (a file's reader,
the extractor, the browser's DOM through the extractor): text that encodes to UTF-8, the
call's credentials masked where the page echoes them (a headers echo page), and only links a
client may follow (links.web_links_only: http(s), to hosts the user lets web-fetch reach),
none but images without `include_links`.

The markdown's own shape (tables, link targets, underscores, blank lines: markdown.tidy) is
given during extraction, which judges walls and app shells on that shape.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ikigai_web.fetch.reading.document import Document

_SURROGATE = re.compile("[\ud800-\udfff]")


def tidied(document: Document, *, include_links: bool, may_name: Callable[[str], bool]) -> Document:
    """The document with lone surrogates (a PDF's bad ToUnicode map makes them) replaced,
    the call's credentials masked where the page echoes them, and its links and images
    those a client may follow, to hosts `may_name` allows (the guard's link rule, which the
    pipeline hands in: no private host unless the settings allow it), in every text (a title
    is markdown too when a client shows it)."""
    from ikigai_web.common.redact import mask
    from ikigai_web.fetch.reading.links import web_links_only

    found = {f.name: getattr(document, f.name) for f in fields(document)}
    clean: dict[str, Any] = {
        k: web_links_only(mask(valid_text(v)), may_name, include_links=include_links)
        for k, v in found.items()
        if isinstance(v, str)
    }
    return replace(document, **clean)


def valid_text(text: str) -> str:
    """`text` that encodes to UTF-8: surrogate pairs joined, lone surrogates replaced."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
