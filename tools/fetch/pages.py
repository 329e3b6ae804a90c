"""Extraction for the page types that are not articles: each keeps what its type carries.

documentation, listing, collection, service: the main region, pruned of boilerplate, whole
(see region.py). forum: every post in order (forum.py). product: the main region, plus what
the product's structured data says that the visible page does not (product.py).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml.html import HtmlElement

    from tools.fetch.signals import Signals


def extract(tree: HtmlElement, page_type: str, signals: Signals, *, include_links: bool) -> str:
    """The page's content as markdown; "" when this way finds nothing."""
    from tools.fetch.markdown import element_markdown
    from tools.fetch.region import drop_product_cards, main_region, prune, space_out, start_at_title

    prune(tree, keep_forms=page_type == "forum", reviews=page_type == "product")
    if page_type == "product":
        drop_product_cards(tree)
    from tools.fetch.region import drop_aside_sections

    drop_aside_sections(tree, items=page_type in ("listing", "collection"))
    if page_type not in ("listing", "collection"):
        from tools.fetch.region import drop_menus

        drop_menus(tree)
    region = main_region(tree)
    space_out(region)
    if page_type == "forum":
        from tools.fetch.forum import thread_markdown

        thread = thread_markdown(region, include_links=include_links)
        if thread:
            return _once(thread)
    else:
        start_at_title(region)
    # A product's description and specifications often sit in closed tabs or accordions.
    markdown = element_markdown(region, include_links=include_links, folded=page_type == "product")
    if page_type in _DUPLICATED:
        markdown = _once(markdown)
    if page_type == "product":
        from tools.fetch.product import with_structured_data

        markdown = with_structured_data(markdown, signals)
    return markdown


# Page types whose repeated lines are copies (a layout for each screen size, a quoted post),
# unlike a listing's repeated labels or documentation's repeated code.
_DUPLICATED = frozenset({"product", "service", "forum"})
_WORD = re.compile(r"\w+")
_TARGET = re.compile(r"\]\([^)]*\)")
_ONCE_WORDS = 5  # shorter lines (labels, prices) repeat for good reasons


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
