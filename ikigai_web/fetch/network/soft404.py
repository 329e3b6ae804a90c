"""Soft-404s by comparison: a short page sent with 200 that is the site's own not-found page.

Its wording cannot be relied on (a not-found page may never say "not found", and says it in
every language), so it is compared, as search engines do, with the site's answer to a path
that cannot exist: one request for a random path on the same origin, made inside the call's
deadline through the call's own Session (the address guard, robots.txt, redirects vetted hop
by hop). The origin's answer, its status and a sketch of its text, is remembered in the
shared state for an hour, so a host is asked at most once an hour whatever the calls; a
probe that fails or is too slow is remembered too, and decides nothing. Where the shared
state cannot be used the answer carries a STATE warning, and each call asks again (once: a
call fetches one page). Only a suspect page is ever compared: short, HTML, no wall already,
a page that gives a reason to think it may be a not-found page (walls.maybe_not_found: its
markup, noindex, a search box of its own, a title that names only the site, its own path
repeated, an address naming one item of many, a wall's heading or phrase), not an app shell
waiting for its scripts (whose every path is the same shell); at a site's root, only a page
that looks like a placeholder (walls.stands_in): a home page is never a not-found page, but
a parked domain is asked for there most often. Any other page, a short ordinary one
included, costs nothing.
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from ikigai_web.common.errors import ToolError
from ikigai_web.fetch.network.robots import origin

if TYPE_CHECKING:
    from collections.abc import Callable

    from ikigai_web.fetch.network.session import Session
    from ikigai_web.fetch.reading.document import Document

    # How the probe's answer is read: its body, media type and final URL to a Document
    # (ToolError when it cannot be read).
    Reader = Callable[[bytes, str | None, str], Document]

SPACE = "soft404"  # in the shared state: one entry per origin
REMEMBER = 3600.0  # seconds an origin's answer is kept: at most one probe per host per hour
PROBE_WAIT = 3.0  # seconds of the call's deadline the probe may take at most...
KEEP = 2.0  # ...leaving at least this much to the rest of the call (else no probe)
PROBE_BYTES = 256 * 1024  # a not-found page is small; a longer answer is read this far
SHELL_TEXT = 25  # words an app shell shows, at least, to be compared
SKETCH = 200  # shingle hashes kept of a page's text (the smallest: a bottom-k sketch)
SIMILAR = 0.6  # the share of shingles two pages must have in common to be the same page
_SHINGLE = 3  # words a shingle
_WORD = re.compile(r"\w+")
_LINK_TARGET = re.compile(r"\]\([^)]*\)")
_LINKED = re.compile(r"\[[^\]]*\]\([^)]*\)")  # a link or an image in markdown, its words too
OWN_WORDS = 8  # words outside links a page needs to be compared without its links' words
# What differs between two answers of the same page: a path or URL it echoes, an id or a time.
_VARYING = re.compile(r"/|\d{4,}|\d[a-z]|[a-z]\d", re.IGNORECASE)
_MAX_STATUS = 999


class Missing(NamedTuple):
    """An origin's answer to a path that does not exist: its status (0: the probe failed or
    was not allowed) and the sketch of its text."""

    status: int
    sketch: frozenset[int] = frozenset()


def suspect(url: str, document: Document) -> bool:
    """Whether a page may be a soft-404 worth a probe: short, no wall found, a reason to
    think it may be its site's not-found page (walls.maybe_not_found), not an app shell,
    at the site's root only a page that looks like a placeholder."""
    from ikigai_web.fetch.reading.walls import size

    if not document.maybe_not_found:
        return False
    if _root(url) and not document.stands_in:  # a home page is never a not-found page, but
        return False  # a placeholder may stand at it (compared only to call it parked)
    shown = size(document.markdown)
    # An app's shell is the same on every path: one that waits for its scripts (its text is
    # none, a request for JavaScript or a framework's loading line) is compared only when it
    # shows text of its own. A short page with a script or two that shows its own heading and
    # line (the extractor calls such a page a shell too) is compared as any page is.
    waits = any(warning["code"] == "NEEDS_JAVASCRIPT" for warning in document.warnings)
    return shown >= SHELL_TEXT or not (document.app_shell and waits)


def checked(session: Session, url: str, document: Document, read: Reader) -> Document:
    """The page, as a wall when it looks like its site's answer to a missing path: the wall
    its words name, else `parked` for a page with no way into its site (not even home: the
    site is that one page) that does not repeat the path asked for, else `not_found`. `read`
    reads the probe's answer as the page was read (fetch/pipeline.py's reading stages, with
    the page's options)."""
    site = origin(url)
    missing = _remembered(site)
    if missing is None:
        missing = _asked(session, url, read)
        if missing is None:  # no time left to ask: nothing decided, nothing remembered
            return _state_warned(document)
        _remember(site, missing)
    document = _state_warned(document)
    if not 200 <= missing.status < 300 or not missing.sketch:
        return document
    if _likeness(document, url, site, missing.sketch) < SIMILAR:
        return document
    # The site's answer to any path: a not-found page, unless it says it is another wall (a
    # maintenance page, a parked domain's, a sign-in every path leads to), or offers no way
    # into its site and knows nothing of the path: then the site is that one page, a
    # placeholder.
    from ikigai_web.fetch.reading.walls import echoes_path, named

    kind = named(document.title, document.markdown)
    placeholder = document.leads_nowhere and not echoes_path(document.markdown, url)
    return replace(document, wall=kind or ("parked" if placeholder else "not_found"))


def _root(url: str) -> bool:
    return urlsplit(url).path in ("", "/")


def _likeness(document: Document, url: str, site: str, missing: frozenset[int]) -> float:
    """How alike the page and the site's answer to a missing path are: without the words of
    the page's own path (a not-found page may repeat them), or with them, whichever is more
    (a path's words may also be the site's own, its name or a section it names everywhere)."""
    return max(
        similarity(sketch(document.title, document.markdown, where), missing)
        for where in (url, site)
    )


def _state_warned(document: Document) -> Document:
    """The page with a STATE warning when the shared state has failed (each failure is said
    once a process, so any said at all counts): the site's answer may not be remembered, and
    another call may ask it again (at most once a call still: a call fetches one page)."""
    from ikigai_web.common.state import store

    failures = [w["message"] for w in store().warnings]
    if not failures:
        return document
    warning = {
        "code": "STATE",
        "message": "The soft-404 probe's memo (this site's answer to a path that does not "
        "exist) could not be kept in the shared state, so another call may ask the site again: "
        + "; ".join(dict.fromkeys(failures)),
    }
    return replace(document, warnings=[*document.warnings, warning])


def _asked(session: Session, url: str, read: Reader) -> Missing | None:
    """The answer of the page's site to a random path, within the probe's share of the
    deadline; None when too little time is left to ask."""
    wait = min(PROBE_WAIT, session.deadline.remaining() - KEEP)
    if wait <= 0:
        return None
    probe = f"{origin(url)}/{secrets.token_hex(12)}"
    try:
        status, final, body, header = _get(session, probe, wait)
        sketched = _sketch_of(final, url, body, header, read) if status < 300 else frozenset()
        return Missing(status, sketched)
    except ToolError:  # refused by the guard or robots.txt, unreachable, too slow
        return Missing(0)


def _get(session: Session, url: str, wait: float) -> tuple[int, str, bytes, str | None]:
    """Status, final URL, body (at most PROBE_BYTES) and media type of `url`, following
    redirects as the page's own fetch does, each hop vetted and robots-checked."""
    from ikigai_web.fetch.network.session import MAX_REDIRECTS, redirect_location

    saved = session.clock.end
    session.clock.end = min(saved, time.monotonic() + wait)
    try:
        for hop in range(MAX_REDIRECTS + 1):
            target = session.prepare(url, hop)
            if session.robots is not None:
                session.robots.check(target)
            opened = session.open(target)
            try:
                location = redirect_location(target, opened)
                if location is None or hop == MAX_REDIRECTS:
                    body = session.read(target, opened, PROBE_BYTES, strict=False)
                    return opened.status, target, bytes(body), opened.headers.get("content-type")
            finally:
                opened.close()
            url = location
    finally:
        session.clock.end = saved
    raise AssertionError("unreachable")  # pragma: no cover


def _sketch_of(
    final: str, page: str, body: bytes, header: str | None, read: Reader
) -> frozenset[int]:
    """The sketch of a probe's answer, read as the page was and at the page's own address
    (how a page is read depends on its address: the same template read at the site's root
    may come out otherwise); empty when unreadable. The words of `final`'s path are left
    out."""
    try:
        document = read(body, header, page)
    except ToolError:
        return frozenset()
    return sketch(document.title, document.markdown, final)


def sketch(title: str | None, markdown: str, url: str) -> frozenset[int]:
    """The smallest SKETCH hashes of the page's word shingles: its title and text (without its
    links' words when it has OWN_WORDS of its own), without link targets, paths, ids and the
    words of its own path (a not-found page often repeats
    the path it was asked for, or a request id)."""
    own = {w.lower() for w in _WORD.findall(urlsplit(url).path)}
    text = f"{title or ''}\n{markdown}"
    # What a not-found page offers instead ("you may also like") changes from one answer to
    # the next: its own words are compared without its links' when it has enough of them.
    words = _words(_LINKED.sub(" ", text), own)
    if len(words) < OWN_WORDS:
        words = _words(_LINK_TARGET.sub("]", text), own)
    if len(words) < _SHINGLE:
        words += [""] * (_SHINGLE - len(words))  # a page of a word or two: one shingle
    shingles = {" ".join(words[i : i + _SHINGLE]) for i in range(len(words) - _SHINGLE + 1)}
    hashes = sorted({_hash(s) for s in shingles})
    return frozenset(hashes[:SKETCH])


def _words(text: str, own: set[str]) -> list[str]:
    """The words of `text`, lower case, without tokens that vary (paths, ids) and the words
    of the page's own path."""
    kept = " ".join(token for token in text.split() if not _VARYING.search(token))
    return [w for w in (m.lower() for m in _WORD.findall(kept)) if w not in own]


def _hash(shingle: str) -> int:
    return int.from_bytes(hashlib.blake2b(shingle.encode(), digest_size=4).digest(), "big")


def similarity(one: frozenset[int], other: frozenset[int]) -> float:
    """The share of shingles two pages have in common (Jaccard), estimated from their
    sketches: among the smallest hashes of both together, those each of them holds."""
    union = sorted(one | other)[:SKETCH]
    if not union:
        return 0.0
    return sum(h in one and h in other for h in union) / len(union)


def _remembered(site: str) -> Missing | None:
    """The origin's answer as the shared state holds it, if it holds a well-formed one (the
    store is shared, so what it holds is checked like any input)."""
    from ikigai_web.common.state import store

    return _valid(store().get(SPACE, site))


def _valid(value: Any) -> Missing | None:
    if not isinstance(value, dict):
        return None
    status, hashes = value.get("status"), value.get("sketch")
    if not isinstance(status, int) or isinstance(status, bool) or not 0 <= status <= _MAX_STATUS:
        return None
    if not isinstance(hashes, list) or len(hashes) > SKETCH:
        return None
    if not all(isinstance(h, int) and not isinstance(h, bool) and 0 <= h < 1 << 32 for h in hashes):
        return None
    return Missing(status, frozenset(hashes))


def _remember(site: str, missing: Missing) -> None:
    from ikigai_web.common.state import store

    value = {"status": missing.status, "sketch": sorted(missing.sketch)}
    store().put(SPACE, site, value, REMEMBER)
