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
_MIN_SHARE = 0.25  # a main landmark with less of the text than this is not the content


def prune(tree: HtmlElement, *, keep_forms: bool = False) -> None:
    """Remove what is never content from the tree, in place."""
    _drop(tree.xpath(_LANDMARKS))
    if not keep_forms:
        _drop(tree.xpath(_FORMS))
    _drop([element for element in tree.xpath("//*[@class or @id]") if _is_boilerplate(element)])


def _drop(elements: list[HtmlElement]) -> None:
    for element in elements:
        if element.getparent() is not None and element.tag not in _KEEP:
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
