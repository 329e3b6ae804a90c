"""A reading time ("4 min read") says how long a page takes to read, not what it says.

On a line of its own it goes with the other labels of the page's furniture (typed.py). In a
byline it shares the line with the author and the date, in the same text ("By Jane Doe ·
4 min read", "March 14, 2025 | 4-minute read") or in an element of its own beside theirs;
there it goes from the tree, before either converter reads it, with the separator that
joined it to the rest of the byline.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from lxml.etree import _ElementUnicodeResult
    from lxml.html import HtmlElement

_MINUTES = r"(?:(?:<|~|about|less than)\s*)?(?:\d+|an?|one)\s*-?\s*min(?:ute)?s?\.?"
# As pages write it: 4 min read, 5-minute read, < 1 min read, 4 minutes to read, Reading time:
# 4 min.
READING_TIME = (
    rf"{_MINUTES}\s+(?:read(?:ing)?(?:\s+time)?|to\s+read)"
    rf"|(?:estimated\s+)?read(?:ing)?\s+time\s*:?\s*{_MINUTES}"
)
_FOUND = re.compile(READING_TIME, re.IGNORECASE)
_WHOLE = lazy(rf"[\s(\[]*(?:{READING_TIME})[\s)\].]*", re.IGNORECASE)
# What joins the parts of a byline: a middle dot, a bullet, a bar, an em or en dash, a comma, a
# hyphen or a slash between spaces, or the space before a part in parentheses.
_JOINS = "[|\u00b7\u2022\u2219\u22c5\u2014\u2013]|(?<=\\S),|\\s[-/]|\\s(?=\\()"
_SEPARATOR = lazy(rf"(\s*(?:{_JOINS})\s*)")
_ENDING = lazy(rf"\s*(?:{_JOINS})\s*$")
_OPENING = lazy(rf"^\s*(?:{_JOINS}|,)\s*")
# The body's text: a reading time can only be in one that holds "read" and "min", in any case
# (tested in Python: an XPath test per text node costs twice the whole list).
_TEXTS = "//body//text()"
_MEDIA = ".//img | .//picture | .//video"


def drop_reading_times(tree: HtmlElement) -> None:
    """The tree without the reading times its bylines show."""
    candidates = [text for text in tree.xpath(_TEXTS) if _may_hold(text)]
    for text in candidates:
        if _FOUND.search(text):
            _cut(text)


def _may_hold(text: str) -> bool:
    # lower() turns no other character into one of these letters, but for "İ" into "i̇",
    # which cannot make "min" (what follows its "i" is a dot).
    lower = text.lower()
    return "read" in lower and "min" in lower


def _cut(text: _ElementUnicodeResult) -> None:
    owner = text.getparent()
    if owner is None:
        return
    kept = without_reading_time(str(text))
    if text.is_tail:
        owner.tail = kept
        container = owner.getparent()
    else:
        owner.text = kept
        container = owner
    if kept.strip() or container is None:
        return
    # The text was the reading time alone: its element goes, and the elements it alone filled.
    while (parent := container.getparent()) is not None and _is_blank(parent):
        container = parent
    if _is_blank(container):
        _drop(container)


def without_reading_time(text: str) -> str:
    """The text without the parts, between separators, that are a reading time; each goes
    with the separator before it (the one after it, when it comes first)."""
    pieces = _SEPARATOR.split(text)
    kept: list[list[str]] = []  # [part, the separator after it]
    for part, after in zip(pieces[::2], [*pieces[1::2], ""], strict=True):
        if not _WHOLE.fullmatch(part):
            kept.append([part, after])
        elif kept:
            kept[-1][1] = after
    return "".join(part + after for part, after in kept)


def _is_blank(element: HtmlElement | None) -> bool:
    if element is None or element.tag in ("body", "html"):
        return False
    return not element.text_content().strip() and not element.xpath(_MEDIA)


def _drop(element: HtmlElement) -> None:
    """The element goes, and with it the separator between it and the text before it (or
    after it), whether written in that text or in an element of its own."""
    previous, parent = element.getprevious(), element.getparent()
    if previous is not None and not (previous.tail or "").strip() and _is_join(previous):
        previous.drop_tree()
        previous = element.getprevious()
    before = previous.tail if previous is not None else parent.text
    if before and _ENDING.search(before):
        _set_before(element, _ENDING.sub(" ", before))
    elif element.tail and _OPENING.match(element.tail):
        element.tail = _OPENING.sub(" ", element.tail)
    element.drop_tree()


def _is_join(element: HtmlElement) -> bool:
    text = element.text_content()
    return bool(text.strip()) and _SEPARATOR.fullmatch(text) is not None


def _set_before(element: HtmlElement, text: str) -> None:
    previous = element.getprevious()
    if previous is not None:
        previous.tail = text
    else:
        element.getparent().text = text
