"""The tidy stage: a Document as every answer carries it, whoever made it (a file's reader,
the extractor, the browser's DOM through the extractor): text that encodes to UTF-8, and the
call's credentials masked where the page echoes them (a headers echo page).

The markdown's own shape (tables, link targets, underscores, blank lines: markdown.tidy) is
given during extraction, which judges walls and app shells on that shape.
"""

from __future__ import annotations

import re
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikigai_web.fetch.document import Document

_SURROGATE = re.compile("[\ud800-\udfff]")


def tidied(document: Document) -> Document:
    """The document with lone surrogates (a PDF's bad ToUnicode map makes them) replaced,
    and the call's credentials masked where the page echoes them."""
    from ikigai_web.common.redact import mask

    found = {f.name: getattr(document, f.name) for f in fields(document)}
    clean: dict[str, Any] = {k: mask(valid_text(v)) for k, v in found.items() if isinstance(v, str)}
    return replace(document, **clean)


def valid_text(text: str) -> str:
    """`text` that encodes to UTF-8: surrogate pairs joined, lone surrogates replaced."""
    if not _SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
