"""web-fetch's pipeline without the network: a body already fetched, through the stages that
read it, in order. tools/web_fetch.py's `fetch_page` runs the whole pipeline: fetch
(session.py), decode, extract, tidy, then render (render.py) for a page that needs JavaScript.
`prepare` imports the stages that read a page while the fetch waits on the network.
"""

from __future__ import annotations

import threading
from importlib import import_module
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ikigai_web.fetch.reading.decode import Reading
    from ikigai_web.fetch.reading.document import Document

# What reading any HTML page imports, stages first: most of a fetch's start-up, over 100 ms
# (trafilatura alone), which `prepare` spends while the network is slower than that.
# Type-specific modules (a forum's, a product's, html-to-markdown's) are left to the page that
# needs them: importing them would delay every other page.
READERS = (
    "ikigai_web.fetch.reading.decode",
    "ikigai_web.fetch.reading.extract",
    "ikigai_web.fetch.reading.tidy",
    "ikigai_web.fetch.network.guard",
    "ikigai_web.fetch.network.render",
    "ikigai_web.fetch.reading.hidden",
    "ikigai_web.fetch.reading.links",
    "ikigai_web.fetch.reading.signals",
    "ikigai_web.fetch.reading.pagetype",
    "ikigai_web.fetch.reading.pagetype_model",
    "ikigai_web.fetch.reading.placeholders",
    "ikigai_web.fetch.reading.walls",
    "ikigai_web.fetch.reading.policies",
    "ikigai_web.fetch.reading.reading_time",
    "ikigai_web.fetch.reading.markdown",
    "ikigai_web.fetch.reading.typed",
    "ikigai_web.fetch.reading.product",
    "ikigai_web.common.redact",
    "lxml.html",
    "trafilatura",
    "trafilatura.json_metadata",
)


class Readers(NamedTuple):
    """The thread importing READERS, and what tells it to stop (see `prepare`)."""

    thread: threading.Thread
    unneeded: threading.Event


def prepare() -> Readers:
    """Import READERS on a thread of their own, which the interpreter does while the caller
    waits on the network; whatever the thread has not done yet (or failed to do), the stage
    that needs it imports as it would have anyway. Set `unneeded` when the body turns out to
    be no HTML (a file, JSON, text): the thread stops at its next module rather than compete
    with the file's reader."""
    unneeded = threading.Event()
    thread = threading.Thread(
        target=_import_readers, args=(unneeded,), name="web-fetch-readers", daemon=True
    )
    thread.start()
    return Readers(thread, unneeded)


def _import_readers(unneeded: threading.Event) -> None:
    for name in READERS:
        if unneeded.is_set():
            return
        try:
            import_module(name)
        except Exception:  # noqa: BLE001 - the stage imports it again and reports the fault
            return


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
    from ikigai_web.fetch.reading import decode, extract, tidy

    decoded = decode.decoded(body, header, url, reading)
    document = extract.extracted(decoded, url, full_page=full_page, include_links=include_links)
    return tidy.tidied(document, include_links=include_links), decoded.kind
