"""The main region of a page that is not an article: boilerplate pruned, the rest kept whole.

Listings, collections, product, service and documentation pages carry their content in many
short, repeated or link-rich blocks that article extractors score as boilerplate. Here the
page's own landmarks decide instead: navigation, header, footer, sidebars, forms, dialogs and
hidden elements go (HTML elements and ARIA roles, and class names that say cookie, share,
breadcrumb, filter, hidden...), though the closed panels of tabs and accordions open; the
main landmark (or the body) is kept whole. Then, by the words and shapes every kind of page
uses: sections whose heading says they are about something else, menus of short links, what
comes before the page's title, and words that touch in the markup although the page lays
them out apart.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from lxml.html import HtmlElement

# Never the main content of any page type.
_LANDMARKS = (
    "//nav | //footer | //header[not(ancestor::article or ancestor::main or .//h1)] | //aside"
    " | //button | //select | //input | //textarea | //dialog"
    " | //*[@hidden] | //*[@aria-hidden][@aria-hidden='true']"
    " | //*[@aria-modal][@aria-modal='true']"
    " | //*[@role][@role='navigation' or @role='banner' or @role='contentinfo' or @role='dialog'"
    " or @role='search' or @role='menu' or @role='menubar' or @role='complementary'"
    " or @role='alertdialog' or @role='tooltip']"
)  # `[@role]` first: the ten comparisons then run on the few elements that have a role
# In a thread, a post's <aside> is its author's pane (name, rank, post count): forum.py reads
# the name from it and leaves the rest.
_THREAD_LANDMARKS = _LANDMARKS.replace("//aside", "//aside[not(ancestor::article)]")
# The page's footer: after the main content, never holding it.
_FOOTERS = "//footer[not(ancestor::article or ancestor::main)] | //*[@role='contentinfo']"
# Search boxes and sign-ups (on forums, forms wrap whole threads: see `prune`).
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
        "sponsored",
        "upsell",
        "dropdown",
        "filter",
        "filters",
        "facet",
        "facets",
        "refinement",
        "refinements",
    }
)
# On a product page, the reviews are the buyers' words, not the product's.
_REVIEWS = frozenset({"review", "reviews"})
# Whole class values that hide text from sighted readers.
_HIDDEN_CLASSES = frozenset(
    {
        "sr-only",
        "visually-hidden",
        "screen-reader-text",
        "visuallyhidden",
        "hidden",
        "hide",
        "d-none",
        "is-hidden",
        "invisible",
    }
)
# A class that shows the element again at some screen width ("hidden md:block", "d-none
# d-lg-flex"): the element is hidden only on small screens.
_SHOWN = re.compile(
    r"^(?:[\w-]+:)+(?:block|flex|grid|inline|inline-block|inline-flex|table|contents)$"
    r"|^d-(?:sm|md|lg|xl|xxl)-(?:block|flex|grid|inline|inline-block|inline-flex|table)$"
)
_KEEP = frozenset({"html", "body", "main"})
_MAIN = "//main | //*[@role='main']"
_MIN_SHARE = 0.25
_MOST = 0.5  # a main landmark with less of the text than this is not the content


def prune(tree: HtmlElement, *, thread: bool = False, reviews: bool = False) -> None:
    """Remove what is never content from the tree, in place; but never an element that holds
    most of the page's text (a whole page wrapped in a form, or in a `modal-open` div).
    With `thread` (a forum page), forms stay, which wrap whole threads on some forums, and so
    do the asides of posts; with `reviews` (a product page), reviews go too, and its closed
    panels stay closed (there they hold reviews, shipping and size guides more than the
    details, which the converter shows from folded tabs: see typed.py). Elsewhere a closed
    tab or accordion opens."""
    if not reviews:
        _open_panels(tree)
    body = tree.find("body")
    most = _MOST * len((body if body is not None else tree).text_content())
    # Sizes are taken with the menus and the footer in: a page wrapped in one form or in one
    # unclosed <nav> holds them.
    if not thread:
        _drop(tree.xpath(_FORMS), most)
    # A landmark that is all short links is a menu whatever its size (a shop's mega-menu
    # outweighs a product page whose details its scripts render), and so is a navigation
    # landmark whose words are mostly link text (a mega-menu with blurbs under its links).
    _drop(tree.xpath(_THREAD_LANDMARKS if thread else _LANDMARKS), most, menus=True)
    _drop(tree.xpath(_FOOTERS))  # whatever their size: legal notes can outweigh a short page
    words = _BOILERPLATE | _REVIEWS if reviews else _BOILERPLATE
    classed = [
        element for element in tree.xpath("//*[@class or @id]") if _is_boilerplate(element, words)
    ]
    _drop(classed, most)


def _open_panels(tree: HtmlElement) -> None:
    """Show the closed panels of tabs and accordions: hidden until a click on the control
    that names them (aria-controls), they hold a page's details, specifications and answers."""
    controlled = {ref for refs in tree.xpath("//@aria-controls") for ref in refs.split()}
    for panel in tree.xpath("//*[@aria-hidden='true'][@id] | //*[@hidden][@id]"):
        if panel.get("id") in controlled:
            panel.attrib.pop("aria-hidden", None)
            panel.attrib.pop("hidden", None)


def _drop(elements: list[HtmlElement], most: float = float("inf"), *, menus: bool = False) -> None:
    for element in elements:
        if element.getparent() is None or element.tag in _KEEP:
            continue
        if len(element.text_content()) <= most or (menus and _is_navigation(element)):
            element.drop_tree()
        else:
            _show(element)


def _show(element: HtmlElement) -> None:
    """Unhide an element kept for holding most of the text (a page streamed into a `hidden`
    <div> that its scripts reveal), so that the markdown converter does not drop it either."""
    element.attrib.pop("hidden", None)


def hidden(element: HtmlElement) -> bool:
    """Whether the element's own markup hides it: an attribute, or a class that hides it."""
    if element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    return _hidden_by_class(element.get("class", "").lower().split())


def _hidden_by_class(classes: list[str]) -> bool:
    return bool(_HIDDEN_CLASSES.intersection(classes)) and not any(map(_SHOWN.match, classes))


def _is_boilerplate(element: HtmlElement, boilerplate: frozenset[str]) -> bool:
    classes = element.get("class", "").lower().split()
    if _hidden_by_class(classes):
        return True
    words = _WORD.findall(" ".join(classes) + " " + element.get("id", "").lower())
    return not boilerplate.isdisjoint(words)


def main_region(tree: HtmlElement) -> HtmlElement:
    """The main landmark holding most text, when it holds enough of the page; else the body."""
    body = tree.find("body")
    whole = body if body is not None else tree
    total = len(whole.text_content())
    candidates = [(len(element.text_content()), element) for element in tree.xpath(_MAIN)]
    size, best = max(candidates, key=lambda pair: pair[0], default=(0, whole))
    return best if size >= _MIN_SHARE * total else whole


_MENU_BLOCKS = ("ul", "ol", "div", "section", "table", "dl", "p")
_MENU_LINKS = 3
_MENU_LINKED = 0.8
_MENU_WORDS = 3
_NAV_TAGS = frozenset({"nav", "header"})
_NAV_ROLES = frozenset({"navigation", "banner", "menu", "menubar"})
# A navigation landmark's words mostly in its links: 0.5, 0.6 and 0.7 did the same on every
# dev set (found on wcxb-dev/, confirmed on the other 1,127 WCXB dev pages).
_NAV_LINKED = 0.6


def drop_menus(tree: HtmlElement) -> None:
    """Remove blocks that are lists of short links: menus, tag clouds and link farms that the
    page did not mark as navigation."""
    body = tree.find("body")
    most = _MOST * len((body if body is not None else tree).text_content())
    doomed: list[HtmlElement] = []
    stack = [tree]
    while stack:
        element = stack.pop()
        if (
            element.tag in _MENU_BLOCKS
            and _is_menu(element)
            and len(element.text_content()) <= most
        ):
            doomed.append(element)
            continue
        stack.extend(child for child in element if isinstance(child.tag, str))
    _drop(doomed, most)


def _is_menu(element: HtmlElement) -> bool:
    counts = _link_words(element)
    if counts is None:
        return False
    links, words, linked = counts
    return linked >= _MENU_LINKED * words and linked <= _MENU_WORDS * links


def _is_navigation(element: HtmlElement) -> bool:
    """A menu, or a navigation landmark whose words are mostly link text."""
    if _is_menu(element):
        return True
    if element.tag not in _NAV_TAGS and element.get("role") not in _NAV_ROLES:
        return False
    counts = _link_words(element)
    return counts is not None and counts[2] >= _NAV_LINKED * counts[1]


def _link_words(element: HtmlElement) -> tuple[int, int, int] | None:
    """(links, words, words in links) of an element with a few links and some words."""
    links = element.xpath(".//a")
    if len(links) < _MENU_LINKS:
        return None
    words = len(element.text_content().split())
    linked = sum(len(link.text_content().split()) for link in links)
    return (len(links), words, linked) if words else None


# Headings that open a section which is never the page's own content, on any type.
_ASIDE_HEADING = lazy(
    r"\b(?:reviews?|ratings?|testimonials?|related|similar|recommended|recommendations"
    r"|you (?:may|might) (?:also )?like|also (?:bought|viewed|liked?|purchased|read)"
    r"|frequently bought|customers who|people who|best ?sellers?|trending|featured products"
    r"|recently viewed|more from|more (?:stories|articles|posts|news)|explore more"
    r"|(?:shipping|delivery) (?:&|and) returns|returns? polic(?:y|ies)"
    r"|newsletter|subscribe|sign up|sign in|create an account|join the conversation"
    r"|leave a (?:reply|comment)|add a comment|share this|follow us|advertis\w*"
    r"|help improve|feedback|submit (?:a )?correction|was this (?:page |article )?helpful"
    r"|(?:featured|latest) (?:insights|news|stories|articles|posts)|latest|insights|get in touch"
    r"|contact us|in the news|news ?room)\b",
    re.IGNORECASE,
)
# Words before the phrase: "29 reviews for ...", "Products related to ..." yes; "Investment
# strategy review request", a title, no.
_ASIDE_LEAD = 1
_ASIDE_WORDS = 9  # a longer heading is a title that happens to contain the phrase
# Phrases that name the items themselves on a listing or a collection.
_ITEM_WORDS = re.compile(
    r"best ?sellers?|trending|featured|recommended|more |latest|insights|news", re.IGNORECASE
)
_LEVELS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
_LOWEST = 6
_HEADINGS = "//h1 | //h2 | //h3 | //h4 | //h5 | //h6"


def drop_aside_sections(tree: HtmlElement, *, items: bool = False) -> None:
    """Remove the sections whose heading says they are about something else: reviews, related
    or recommended items, shipping terms, sign-up and feedback boxes. With `items` (a listing
    or a collection), headings naming best sellers or featured items open content."""
    body = tree.find("body")
    most = _MOST * len((body if body is not None else tree).text_content())
    for heading in tree.xpath(_HEADINGS):
        if heading.tag == "h1" or not _is_aside(heading, items=items) or _orphan(heading):
            continue
        section = _section(heading)
        if sum(len(element.text_content()) for element in section) <= most:
            _drop(section)


def _is_aside(heading: HtmlElement, *, items: bool) -> bool:
    text = " ".join(heading.text_content().split())
    found = _ASIDE_HEADING.search(text)
    if not found or len(text.split()) > _ASIDE_WORDS:
        return False
    if items and _ITEM_WORDS.search(found.group(0)):
        return False
    return len(text[: found.start()].split()) <= _ASIDE_LEAD


def _orphan(element: HtmlElement) -> bool:
    """Whether the element was removed with an ancestor already."""
    while (parent := element.getparent()) is not None:
        element = parent
    return bool(element.tag != "html")


def _section(heading: HtmlElement) -> list[HtmlElement]:
    """The heading's section: the largest ancestor it opens that holds no other heading of
    its level or above; with the siblings that follow up to the next such heading when the
    heading sits alone in a wrapper."""
    level = _LEVELS[str(heading.tag)]
    box = heading
    while (parent := box.getparent()) is not None and parent.tag not in _KEEP:
        if _peers(parent, _LOWEST) > _peers(box, _LOWEST) or not _opens(heading, parent):
            break
        box = parent
    section = [box]
    for sibling in box.itersiblings():
        if not isinstance(sibling.tag, str):
            continue
        if _peers(sibling, level) or sibling.tag in _LEVELS:
            break
        section.append(sibling)
    return section


def _peers(element: HtmlElement, level: int) -> int:
    found = element.xpath(".//h1 | .//h2 | .//h3 | .//h4 | .//h5 | .//h6")
    own = [element] if element.tag in _LEVELS else []
    return sum(_LEVELS[str(h.tag)] <= level for h in own + found)


def _opens(heading: HtmlElement, element: HtmlElement) -> bool:
    """Whether the element's text starts with the heading's."""
    return " ".join(element.text_content().split()).startswith(
        " ".join(heading.text_content().split())
    )


_BEFORE_TITLE = 0.3  # at most this share of the region may come before its heading...
_LINKED = 0.7  # ...unless it is mostly links: navigation


def start_at_title(region: HtmlElement) -> None:
    """Remove what comes before the region's one <h1>, the page's title, where the main
    content starts: banners, breadcrumbs and menus the page did not mark up as such. Not when
    a large part of the text comes before it (the heading is then not the start), unless that
    part is mostly links."""
    titles = region.xpath(".//h1")
    if len(titles) != 1:
        return
    before: list[HtmlElement] = []
    node = titles[0]
    while node is not region and (parent := node.getparent()) is not None:
        before += list(node.itersiblings(preceding=True))
        node = parent
    chars = sum(len(element.text_content()) for element in before)
    linked = sum(len(link.text_content()) for element in before for link in element.iter("a"))
    if chars <= _BEFORE_TITLE * len(region.text_content()) or linked >= _LINKED * chars:
        for element in before:
            element.drop_tree()


# Elements that style words inside a line; any other pair of elements is laid out apart.
_INLINE = frozenset(
    {
        "abbr",
        "b",
        "cite",
        "code",
        "em",
        "i",
        "kbd",
        "mark",
        "q",
        "s",
        "small",
        "strong",
        "sub",
        "sup",
        "u",
        "var",
    }
)


def space_out(region: HtmlElement) -> None:
    """A space between elements whose words touch in the markup: a page lays them out apart
    (flex items, grid cells, badges), so "2026" and "1h 54m" must not read "20261h"."""
    for element in region.iter():
        if not isinstance(element.tag, str) or element.tag in _INLINE:
            continue
        following = element.tail[:1] if element.tail else _first_char(element.getnext())
        if following.isalnum() and _last_char(element).isalnum():
            element.tail = " " + (element.tail or "")


def _first_char(element: HtmlElement | None) -> str:
    if element is None or not isinstance(element.tag, str) or element.tag in _INLINE:
        return ""
    if element.text:
        return str(element.text[0])
    for child in element:
        found = _first_char(child) if isinstance(child.tag, str) else ""
        if found or child.tail:
            return found or (child.tail or "")[:1]
    return ""


def _last_char(element: HtmlElement) -> str:
    for child in reversed(element):
        if child.tail:
            return str(child.tail[-1])
        found = _last_char(child) if isinstance(child.tag, str) else ""
        if found:
            return found
    return element.text[-1] if element.text else ""
