"""Extraction for the page types that are not articles: each keeps what its type carries.

All of them start from the page's main region, pruned of boilerplate (region.py): landmarks,
boilerplate class names, sections whose heading says they are about something else, and menus
of short links (except where the type's items are such links). Then, by the type's policy
(policies.py): the region is kept whole from its title on, or a forum's thread is given post
by post (forum.py); a product keeps also what its folded tabs hold, plus what its structured
data says that the visible page does not (product.py); and the types whose repeated lines
are copies keep the first.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ikigai_web.fetch.reading.reading_time import READING_TIME

if TYPE_CHECKING:
    from lxml.html import HtmlElement

    from ikigai_web.fetch.reading.policies import Policy
    from ikigai_web.fetch.reading.signals import Signals

_WORD = re.compile(r"\w+")
_TARGET = re.compile(r"\]\([^)]*\)")
_ONCE_WORDS = 5  # shorter lines (labels, prices) repeat for good reasons
# A line that is nothing but the label of a control: a button or a link that acts rather
# than tells ("Read more", "Add to cart", "Quick view"); or of the page's furniture, an ad
# slot or a reading time.
_CONTROL = re.compile(
    r"(?:read|learn|see|view|show|load|loading) (?:more|all|less|details)|loading"
    r"|quick (?:view|shop)|shop (?:now|all)|compare|add to (?:cart|bag|basket|wish ?list)"
    r"|buy (?:it )?now|pre-?order"
    r"|order now|book now|more options|view company profile|sign (?:in|up)|log ?in|subscribe"
    r"|share|print|close|menu|back to top|(?:next|previous)(?: (?:post|article|page|story))?"
    r"|leave a (?:comment|reply)|add a comment|get started|contact us|download"
    r"|try (?:it )?(?:for )?free|start (?:your )?free trial|click to expand"
    rf"|advertisement|{READING_TIME}",
    re.IGNORECASE,
)
_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_MARKS = "\\-*_#> \t"
_TRAILING = ".:!> \u00bb\u203a\u2192"  # arrows and guillemets after a label


def extract(tree: HtmlElement, page_type: str, signals: Signals, *, include_links: bool) -> str:
    """The page's content as markdown; "" when this way finds nothing. The rules find the
    region, the learned stage (blocks.py) drops the blocks unlikely to be content."""
    from ikigai_web.fetch.reading.blocks import keep

    region = region_of(tree, page_type)
    keep(region, page_type)
    return markdown_of(region, page_type, signals, include_links=include_links)


def region_of(tree: HtmlElement, page_type: str) -> HtmlElement:
    """The type's main region as the rules leave it (see `_region`), from its title on."""
    from ikigai_web.fetch.reading.policies import POLICIES
    from ikigai_web.fetch.reading.region import start_at_title

    policy = POLICIES[page_type]
    region = _region(tree, policy)
    if not policy.thread:  # a forum page is read from its whole region, thread or not
        start_at_title(region)
    return region


def markdown_of(
    region: HtmlElement, page_type: str, signals: Signals, *, include_links: bool
) -> str:
    """The region's markdown, the way the type carries its content."""
    from ikigai_web.fetch.reading.forum import thread_markdown
    from ikigai_web.fetch.reading.markdown import element_markdown
    from ikigai_web.fetch.reading.policies import POLICIES

    policy = POLICIES[page_type]
    markdown = thread_markdown(region, include_links=include_links) if policy.thread else ""
    if not markdown:
        markdown = element_markdown(region, include_links=include_links, folded=policy.folded)
    markdown = without_controls(markdown)
    if policy.copies:
        markdown = _once(markdown)
    if policy.structured:
        from ikigai_web.fetch.reading.product import with_structured_data

        markdown = with_structured_data(markdown, signals)
    return markdown


def _region(tree: HtmlElement, policy: Policy) -> HtmlElement:
    """The main region, pruned of what is not this page type's content."""
    from ikigai_web.fetch.reading import region

    region.prune(tree, thread=policy.thread, reviews=policy.reviews)
    region.drop_aside_sections(tree, items=policy.items)
    if not policy.items:
        region.drop_menus(tree)
    main = region.main_region(tree)
    region.space_out(main)
    return main


def _once(markdown: str) -> str:
    """The markdown without the second and later copies of any line of some length."""
    seen: set[str] = set()
    lines = []
    for line in markdown.split("\n"):
        words = _WORD.findall(_TARGET.sub("]", line).lower())
        key = " ".join(words)
        if len(words) >= _ONCE_WORDS and key in seen:
            continue
        seen.add(key)
        lines.append(line)
    return "\n".join(lines)


def without_controls(markdown: str) -> str:
    """The markdown without the lines that only label a control; code stays as it is."""
    from ikigai_web.fetch.reading.links import fenced_lines

    lines = fenced_lines(markdown)
    return "\n".join(line for line, code in lines if code or not _is_control(line))


def _is_control(line: str) -> bool:
    text = _LINK.sub(r"\1", _IMAGE.sub("", line)).strip(_MARKS).rstrip(_TRAILING)
    return bool(text) and _CONTROL.fullmatch(text) is not None
