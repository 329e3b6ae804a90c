"""The main region of a page that is not an article: boilerplate pruned, the rest kept whole.

Listings, collections, product, service and documentation pages carry their content in many
short, repeated or link-rich blocks that article extractors score as boilerplate. Here the
page's own landmarks decide instead: navigation, header, footer, sidebars, forms, dialogs and
hidden elements go (HTML elements and ARIA roles, and class names that say cookie, share,
breadcrumb...), and the main landmark (or the body) is kept whole.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lxml.html import HtmlElement

# Never the main content of any page type.
_LANDMARKS = (
    "//nav | //footer | //header[not(ancestor::article or ancestor::main)] | //aside"
    " | //button | //select | //input | //textarea | //dialog"
    " | //*[@hidden] | //*[@aria-hidden='true'] | //*[@aria-modal='true']"
    " | //*[@role='navigation' or @role='banner' or @role='contentinfo' or @role='dialog'"
    " or @role='search' or @role='menu' or @role='menubar' or @role='complementary'"
    " or @role='alertdialog' or @role='tooltip']"
)
# Forms wrap whole threads on some forums; elsewhere they are search boxes and sign-ups.
_FORMS = "//form"
_WORD = re.compile(r"[a-z]+")
# Words of class and id values that mark boilerplate on every kind of page.
_BOILERPLATE = frozenset(
    {
        "cookie",
        "cookies",
        "consent",
        "gdpr",
        "modal",
        "popup",
        "breadcrumb",
        "breadcrumbs",
        "share",
        "sharing",
        "social",
        "related",
        "recommended",
        "dropdown",
    }
)
# Whole class values that hide text from sighted readers.
_HIDDEN_CLASSES = frozenset({"sr-only", "visually-hidden", "screen-reader-text", "visuallyhidden"})
_KEEP = frozenset({"html", "body", "main"})
_MAIN = "//main | //*[@role='main']"
_MIN_SHARE = 0.25
_MOST = 0.5  # a main landmark with less of the text than this is not the content


def prune(tree: HtmlElement, *, keep_forms: bool = False) -> None:
    """Remove what is never content from the tree, in place; but never an element that holds
    most of the page's text (a whole page wrapped in a form, or in a `modal-open` div)."""
    body = tree.find("body")
    most = _MOST * len((body if body is not None else tree).text_content())
    _drop(tree.xpath(_LANDMARKS), most)
    if not keep_forms:
        _drop(tree.xpath(_FORMS), most)
    classed = [element for element in tree.xpath("//*[@class or @id]") if _is_boilerplate(element)]
    _drop(classed, most)


def _drop(elements: list[HtmlElement], most: float = float("inf")) -> None:
    for element in elements:
        if element.getparent() is None or element.tag in _KEEP:
            continue
        if len(element.text_content()) <= most:
            element.drop_tree()


def _is_boilerplate(element: HtmlElement) -> bool:
    classes = element.get("class", "").lower().split()
    if _HIDDEN_CLASSES.intersection(classes):
        return True
    words = _WORD.findall(" ".join(classes) + " " + element.get("id", "").lower())
    return not _BOILERPLATE.isdisjoint(words)


def main_region(tree: HtmlElement) -> HtmlElement:
    """The main landmark holding most text, when it holds enough of the page; else the body."""
    body = tree.find("body")
    whole = body if body is not None else tree
    total = len(whole.text_content())
    candidates = [(len(element.text_content()), element) for element in tree.xpath(_MAIN)]
    size, best = max(candidates, key=lambda pair: pair[0], default=(0, whole))
    return best if size >= _MIN_SHARE * total else whole


_PRICE = re.compile(r"(?:[$€£¥₹]\s?\d|\d(?:[.,]\d\d)?\s?(?:€|EUR|USD|GBP)\b)")
_CARDS = 3  # this many priced siblings of one kind are a grid of other products
_CARD_CHARS = 400


def drop_product_cards(tree: HtmlElement) -> None:
    """On a product page, remove grids of other products: runs of at least _CARDS siblings of
    the same tag and class, each short and showing a price (related items, "you may also
    like", sponsored offers)."""
    doomed: list[HtmlElement] = []
    for parent in tree.xpath("//*[count(*) >= 3]"):
        groups: dict[tuple[str, str], list[HtmlElement]] = {}
        for child in parent.iterchildren("*"):
            groups.setdefault((str(child.tag), child.get("class", "")), []).append(child)
        for members in groups.values():
            if len(members) >= _CARDS and all(_is_card(member) for member in members):
                doomed += members
    _drop(doomed)


def _is_card(element: HtmlElement) -> bool:
    text = element.text_content()
    return len(text) < _CARD_CHARS and bool(_PRICE.search(text))
