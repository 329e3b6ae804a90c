"""web-fetch's pipeline without the network: a body already fetched, through the stages that
read it, in order. tools/web_fetch.py's `fetch_page` runs the whole pipeline: fetch
(session.py), decode, extract, tidy, then render (render.py) for a page that needs JavaScript.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ikigai_web.fetch.decode import Reading
    from ikigai_web.fetch.document import Document


def to_document(
    body: bytearray,
    header: str | None,
    url: str,
    *,
    full_page: bool,
    include_links: bool,
    reading: Reading | None = None,
) -> tuple[Document, str]:
    """The body (consumed) as the page as sent: its tidied Document, and the media type it
    was read as (see decode.decoded)."""
    from ikigai_web.fetch import decode, extract, tidy

    decoded = decode.decoded(body, header, url, reading)
    document = extract.extracted(decoded, url, full_page=full_page, include_links=include_links)
    return tidy.tidied(document), decoded.kind
