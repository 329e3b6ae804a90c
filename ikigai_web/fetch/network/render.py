"""The render stage: an HTML page that shows next to nothing without JavaScript, as a browser
shows it (browser.py drives the browser, through the call's own Session).

It comes after the page as sent is extracted, for it is the extractor that tells an app shell
(next to no text, scripts to run, or a wall the page's scripts pass by themselves); what the
browser shows is then extracted in turn, and `answer_document` says which of the two is the answer
(and refuses one that is nothing but a wall).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from ikigai_web.common.errors import ToolError, invalid

if TYPE_CHECKING:
    from ikigai_web.common.settings import Settings
    from ikigai_web.fetch.network.session import Session
    from ikigai_web.fetch.reading.document import Document

UNSHOWN = (
    "The page was still loading when the time to render it ran out, and showed less than its "
    "HTML as sent: this is its HTML as sent, and parts may be missing."
)
UNREAD = (
    "The page's scripts kept the browser busy until the time to render it ran out, so what "
    "it showed could not be read: this is its HTML as sent, and parts may be missing."
)
UNSETTLED = (
    "The page was still loading when the time to render it ran out: this is what it showed "
    "by then, and parts may be missing."
)


class Shown(NamedTuple):
    """What the browser showed: its DOM, to extract, and whether the page had settled; or no
    DOM, and the page as sent stands (with `warning`, when there is something to say)."""

    html: str | None = None
    settled: bool = True
    warning: dict[str, str] | None = None


def render(session: Session, url: str, first: str | None, sent: Document, mode: str) -> Shown:
    """The HTML page at `url` (its final URL) as a browser shows it, when `mode` asks for
    that or (auto) the page as `sent` is an app shell; `first` is its text as decoded,
    whatever charset label Chromium would trust. Without a browser, `always` is
    INVALID_INPUT and `auto` the page as sent (as before there was a browser)."""
    if not (mode == "always" or (mode == "auto" and sent.app_shell)):
        return Shown()
    from ikigai_web.fetch.network import (
        browser,  # only for a page that is rendered: 3 ms of imports
    )

    body = None if first is None else ("text/html; charset=utf-8", first.encode())
    try:
        page = browser.render(session, url, body)
    except browser.Unavailable as exc:
        if mode == "always":
            raise invalid("render", mode, f"{exc}: {browser.INSTALL_HINT}") from None
        return Shown()
    except browser.RenderFailed as exc:
        why = f"The page could not be rendered in a browser ({exc}); this is its HTML as sent."
        return Shown(warning={"code": "RENDER_FAILED", "message": why})
    if page.html is None:
        return Shown(warning={"code": "RENDER_UNSETTLED", "message": UNREAD})
    return Shown(page.html, settled=page.settled)


def answer_document(
    url: str, sent: Document, shown: Shown, document: Document | None, mode: str
) -> Document:
    """The answer's Document: the `document` extracted from what the browser showed, else
    the page as `sent`; HTTP_ERROR when that is nothing but a wall (see `_not_a_wall`)."""
    answer = _chosen(sent, shown, document)
    _not_a_wall(url, sent, answer, mode)
    return answer


def _chosen(sent: Document, shown: Shown, document: Document | None) -> Document:
    """What the browser showed, or the page as sent: the very object `sent` when nothing was
    rendered nor went wrong."""
    if document is None:
        return sent if shown.warning is None else _noted(sent, shown.warning)
    if shown.settled:
        return document
    if not document.markdown.strip() or len(document.markdown) < len(sent.markdown):
        # Stopped before it showed anything, or what it was sent with (its embedded data,
        # say): the page as sent tells more (a document not yet parsed is no empty page).
        return _noted(sent, {"code": "RENDER_UNSETTLED", "message": UNSHOWN})
    return _noted(document, {"code": "RENDER_UNSETTLED", "message": UNSETTLED})


def _not_a_wall(url: str, sent: Document, document: Document, mode: str) -> None:
    """HTTP_ERROR when the page (as rendered, if it was) is nothing but a wall: not the
    content, so neither a success nor cached. `sent` is the page before any rendering."""
    from ikigai_web.fetch.reading import walls

    if not walls.blocks(document.wall, document.markdown):
        return
    tried = "rendered" if document is not sent else "never" if mode == "never" else "no-browser"
    assert document.wall is not None  # for mypy: blocks() says so
    raise walls.failure(url, document.wall, javascript=sent.app_shell, tried=tried)


def advised(document: Document, mode: str, settings: Settings) -> Document:
    """The document with its NEEDS_JAVASCRIPT warning saying how this machine could render
    the page, when it was not rendered: `render: "auto"` where a browser is installed (the
    call said `never`), how to install one where none is. Asked at each answer, a cached one
    too, since a browser may have come or gone since the page was read."""
    found = [w for w in document.warnings if w["code"] == "NEEDS_JAVASCRIPT"]
    if not found or mode == "always":
        return document
    from ikigai_web.fetch.network import browser
    from ikigai_web.fetch.reading.extract import ELSEWHERE, NEEDS_JAVASCRIPT

    try:
        browser.executable(settings)
    except ToolError:
        return document  # an unusable IKIGAI_WEB_FETCH_BROWSER, which `never` does not read
    except browser.Unavailable as exc:
        advice = f"No browser here can render it ({exc}): {browser.INSTALL_HINT}. {ELSEWHERE}"
    else:
        if mode != "never":
            return document  # rendered, and it showed next to nothing there too
        advice = (
            'It was not rendered, as the call asked (render "never"): call again with render '
            '"auto" to read it as the browser installed here shows it.'
        )
    warning = {"code": "NEEDS_JAVASCRIPT", "message": f"{NEEDS_JAVASCRIPT} {advice}"}
    return replace(document, warnings=[warning if w in found else w for w in document.warnings])


def _noted(document: Document, warning: dict[str, str]) -> Document:
    return replace(document, warnings=[*document.warnings, warning])
