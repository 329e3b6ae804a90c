"""web-fetch's stage order, in one place: a URL to the page an answer is made of.

    answer_page    the page as web-fetch answers it: cached_page, and advice on rendering
    cached_page    the cache, in front of everything (common/cache.py)
    fetch_page     network/session.py   the guarded fetch, redirects and robots.txt
                   reading/decode.py    bytes to text or a document's markdown
                   reading/extract.py   an HTML page's main content, type and walls
                   reading/tidy.py      links a client may follow, credentials masked
                   network/soft404.py   a short page compared with the site's not-found page
                   network/render.py    a page that needs JavaScript, through the browser,
                                        its DOM extracted and tidied in turn

The tool (tools/web_fetch.py) calls `answer_page` once, a search's `read` `cached_page`
(search/reading.py); the bench and tests read a body already fetched through `to_document`,
the same reading stages in the same order. `prepare` imports the reading stages while the
fetch waits on the network.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import asdict, fields, replace
from importlib import import_module
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ikigai_web.common.settings import Settings
    from ikigai_web.fetch.network.guard import Policy
    from ikigai_web.fetch.reading.document import Decoded, Document
    from ikigai_web.fetch.reading.files import Reading

CACHE_NAMESPACE = "web_fetch"
RENDERING = ("fetch_browser", "fetch_render_settle")  # the settings only rendering reads
KEEP_FOR_RENDER = 1 << 20  # an app shell is small; a larger page the browser asks for again
# What a Document carries for the fetch that made it alone (the soft-404 probe's cue): never
# cached, so entries written before it existed stay valid.
_FOR_THIS_FETCH = frozenset({"maybe_not_found", "leads_nowhere", "stands_in"})

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


class Request(NamedTuple):
    """What a caller asks of a page: everything that changes the page read, not its paging."""

    url: str
    full_page: bool = False
    include_links: bool = True
    render: str | None = None  # auto, always, never; None: the setting's
    first_page: int = 1  # where a document is read from (a window of pages)


class Page(NamedTuple):
    """A fetched and converted document: what the cache stores and paging reads."""

    url: str
    content_type: str
    document: Document


class Readers(NamedTuple):
    """The thread importing READERS, and what tells it to stop (see `prepare`)."""

    thread: threading.Thread
    unneeded: threading.Event


def render_mode(request: Request, settings: Settings) -> str:
    return request.render or settings.fetch_render


def answer_page(request: Request, settings: Settings) -> tuple[Page, dict[str, Any]]:
    """The page as web-fetch's answer gives it: `cached_page`, its NEEDS_JAVASCRIPT warning
    saying how this machine could render it, asked now (a browser may have come or gone
    since the page was cached)."""
    from ikigai_web.fetch.network.render import advised

    page, notes = cached_page(request, settings)
    document = advised(page.document, render_mode(request, settings), settings)
    return page._replace(document=document), notes


def cached_page(request: Request, settings: Settings) -> tuple[Page, dict[str, Any]]:
    """The page, from the cache if it holds it, and what the answer says about the cache."""
    from ikigai_web.common import cache

    key = cache_key(request, settings)
    # What a fetch reads past the cache, read before it: a bad value fails every call alike.
    settings.check("timeout", *[] if render_mode(request, settings) == "never" else RENDERING)
    ttl = settings.fetch_cache_ttl
    hit = cache.get(CACHE_NAMESPACE, key, ttl, valid=is_stored_page)
    if hit.value is not None:
        return _stored_page(hit.value), {"cached": True}
    page = fetch_page(request, settings)
    stored = {k: v for k, v in asdict(page.document).items() if k not in _FOR_THIS_FETCH}
    # The shared state failing is this call's trouble, not the page's: a cached copy says
    # nothing of it.
    stored["warnings"] = [w for w in stored["warnings"] if w["code"] != "STATE"]
    value = {"url": page.url, "content_type": page.content_type, "document": stored}
    notes = cache.warnings(hit.warning, cache.put(CACHE_NAMESPACE, key, value, ttl))
    return page, {"warnings": notes} if notes else {}


def cache_key(request: Request, settings: Settings) -> list[Any]:
    """Everything that changes what a fetch returns or is allowed to reach; not the paging."""
    from ikigai_web.common.redact import drop_userinfo

    policy = [
        settings.fetch_allow_private,
        sorted(settings.fetch_allow_hosts),
        settings.fetch_robots,
        settings.user_agent,
        settings.fetch_max_bytes,
    ]
    if render_mode(request, settings) != "never":
        policy.append(render_mode(request, settings))  # a rendered page is another page
    url = drop_userinfo(request.url)  # never stored, even hashed: it could be brute-forced
    key = [url, url != request.url, request.full_page, request.include_links, policy]
    # A document read from a later page holds other pages: an entry of its own.
    return [*key, request.first_page] if request.first_page > 1 else key


def is_stored_page(value: Any) -> bool:
    """What `cached_page` stores, every field of the right type; anything else is corrupt."""
    from ikigai_web.fetch.reading.document import Document

    if not isinstance(value, dict) or set(value) != {"url", "content_type", "document"}:
        return False
    doc = value["document"]
    if (
        not isinstance(doc, dict)
        or set(doc) != {f.name for f in fields(Document)} - _FOR_THIS_FETCH
    ):
        return False
    # A Document is text, its metadata None when the page had none, and its warnings a
    # list of {"code", "message"} texts.
    texts = (value["url"], value["content_type"], doc["markdown"])
    meta = (v for k, v in doc.items() if k not in ("warnings", "app_shell"))
    return (
        all(isinstance(v, str) for v in texts)
        and isinstance(doc["app_shell"], bool)
        and all(v is None or isinstance(v, str) for v in meta)
        and _are_warnings(doc["warnings"])
    )


def _are_warnings(value: Any) -> bool:
    return isinstance(value, list) and all(
        isinstance(w, dict) and set(w) == {"code", "message"} and all(map(_is_text, w.values()))
        for w in value
    )


def _is_text(value: Any) -> bool:
    return isinstance(value, str)


def _stored_page(value: dict[str, Any]) -> Page:
    from ikigai_web.fetch.reading.document import Document

    return Page(value["url"], value["content_type"], Document(**value["document"]))


def fetch_page(request: Request, settings: Settings) -> Page:
    """The page through the stages, in order: fetch, decode, extract, tidy, the soft-404
    check for a short page; and, for an HTML page that needs JavaScript, render, what the
    browser shows then extracted and tidied in turn. The only function that touches the
    network."""
    from ikigai_web.common.redact import printable_url
    from ikigai_web.fetch.network.session import Session
    from ikigai_web.net.http import Deadline

    mode = render_mode(request, settings)
    deadline = Deadline.of_call(settings.timeout)
    from ikigai_web.fetch.network.guard import Policy

    how = _How(request.full_page, request.include_links, _link_rule(Policy.from_settings(settings)))
    with _readers_imported() as readers, Session(settings, deadline) as session:
        fetched = session.fetch(request.url)
        from ikigai_web.fetch.network import render, soft404  # prepared meanwhile
        from ikigai_web.fetch.reading import decode, extract

        # What the answer, the cache and the extractor's links see: no user-info, no secrets.
        url = printable_url(fetched.url)
        # The page's own text, for the browser, when an app shell could be this large.
        kept = mode == "always" or (mode == "auto" and len(fetched.body) <= KEEP_FOR_RENDER)
        memory = settings.max_memory_mb << 20
        reading = decode.Reading(deadline, request.first_page, memory, request.include_links)
        kind = decode.readable_type(fetched.content_type, fetched.body)
        if kind not in decode.HTML_TYPES:
            readers.unneeded.set()
        if kind in decode.FILE_TYPES:  # read in a forked process: no thread may be importing
            readers.thread.join()
        decoded = decode.decoded(fetched.body, fetched.content_type, url, reading)
        first = decoded.html if kept else None
        sent = _extracted_and_tidied(decoded, url, how)
        html = decoded.kind in decode.HTML_TYPES
        if html and fetched.challenged:  # its check's header says so: a browser may pass
            # (and no comparison: a check answers every path alike, and is no not-found page)
            sent = replace(sent, wall="bot_check", maybe_not_found=False)
        if html and soft404.suspect(fetched.url, sent):  # a short page: the site's 404?
            sent = soft404.checked(session, fetched.url, sent, how.read_probe)
        shown = render.render(session, fetched.url, first, sent, mode) if html else render.Shown()
    dom = None if shown.html is None else extract.html_to_markdown(shown.html, url, **how.flags)
    tidied_dom = None if dom is None else _tidied(dom, how)
    document = render.answer_document(url, sent, shown, tidied_dom, mode)
    return Page(url, decoded.kind, document)


def to_document(
    body: bytearray,
    header: str | None,
    url: str,
    *,
    full_page: bool,
    include_links: bool,
    reading: Reading | None = None,
) -> tuple[Document, str]:
    """The body (consumed) as the page as sent, without the network: its tidied Document
    (links as the default settings allow), and the media type it was read as."""
    from ikigai_web.fetch.network.guard import Policy

    how = _How(full_page, include_links, _link_rule(Policy()))
    return _read(body, header, url, how, reading)


class _How(NamedTuple):
    """How a call reads its pages: the extraction options and the guard's link rule."""

    full_page: bool
    include_links: bool
    may_name: Callable[[str], bool]

    @property
    def flags(self) -> dict[str, bool]:
        return {"full_page": self.full_page, "include_links": self.include_links}

    def read_probe(self, body: bytes, header: str | None, url: str) -> Document:
        """The soft-404 probe's answer, read as the page was."""
        return _read(bytearray(body), header, url, self)[0]


def _read(
    body: bytearray, header: str | None, url: str, how: _How, reading: Reading | None = None
) -> tuple[Document, str]:
    from ikigai_web.fetch.reading import decode

    decoded = decode.decoded(body, header, url, reading)
    return _extracted_and_tidied(decoded, url, how), decoded.kind


def _extracted_and_tidied(decoded: Decoded, url: str, how: _How) -> Document:
    from ikigai_web.fetch.reading import extract

    return _tidied(extract.extracted(decoded, url, **how.flags), how)


def _tidied(document: Document, how: _How) -> Document:
    from ikigai_web.fetch.reading import tidy

    return tidy.tidied(document, include_links=how.include_links, may_name=how.may_name)


def _link_rule(policy: Policy) -> Callable[[str], bool]:
    """The guard's rule for the hosts an answer's links may name, as `policy` allows."""
    from functools import partial

    from ikigai_web.fetch.network.guard import link_may_name

    return partial(link_may_name, policy=policy)


@contextlib.contextmanager
def _readers_imported() -> Iterator[Readers]:
    """`prepare` for one fetch, whose thread is over when the fetch is: stopped at its next
    module, so that no import from it changes the interpreter's modules under a later caller
    (another call on this process's threads, a test)."""
    readers = prepare()
    try:
        yield readers
    finally:
        readers.unneeded.set()
        readers.thread.join()


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
