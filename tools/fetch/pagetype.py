"""What kind of page this is, decided cheaply before extraction: one of PAGE_TYPES.

Three kinds of evidence vote, each with a weight: what the page declares (schema.org types,
og:type), the shape of its URL (path words such as /forum/, /docs/, /products/), and the shape
of its DOM (code blocks, repeated posts, prices, add-to-cart buttons, cards). The type with the
most weight wins if it wins clearly (see `_clear`); weak or conflicting evidence, or none, makes
an article, the commonest kind and the one whose extraction degrades most gracefully.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:
    from lxml.html import HtmlElement

    from tools.fetch.signals import Signals

PAGE_TYPES = (
    "article",
    "collection",
    "documentation",
    "forum",
    "listing",
    "product",
    "service",
)

# schema.org types (lower-case) and their weight for a page type.
_DECLARED = {
    "forum": {"qapage": 4, "discussionforumposting": 4, "question": 2, "answer": 2},
    "product": {"product": 3, "productgroup": 3, "offer": 1, "videogame": 2},
    "collection": {"offercatalog": 3, "searchresultspage": 2, "collectionpage": 1},
    "listing": {"collectionpage": 1, "itemlist": 1},
    "documentation": {"techarticle": 3, "apireference": 4, "softwaresourcecode": 2},
    "article": {
        "article": 2,
        "newsarticle": 3,
        "blogposting": 3,
        "reportagenewsarticle": 3,
        "scholarlyarticle": 3,
        "opinionnewsarticle": 3,
    },
    "service": {
        "service": 3,
        "professionalservice": 3,
        "financialservice": 2,
        "softwareapplication": 1,
        "webapplication": 1,
        "faqpage": 1,
    },
}
_OG = {"article": ("article", 1), "product": ("product", 3), "product.item": ("product", 3)}
_OG_GROUP = ("product.group", "product:group")

_WORDS = r"(?:{})(?=[/._-]|$)"
# (page type, weight, pattern over the lower-case host or path).
_HOSTS = (
    ("forum", 3, re.compile(r"^(?:forums?|community|discuss|discourse|bbs|boards?)\.")),
    ("documentation", 3, re.compile(r"^(?:docs?|devdocs|developers?|wiki|man)\.")),
    ("product", 1, re.compile(r"^(?:shop|store)\.")),
)
_PATHS = (
    (
        "forum",
        3,
        re.compile(
            r"/"
            + _WORDS.format(
                "forums?|threads?|topics?|t|questions|discussions?|community|board|"
                "viewtopic|showthread|comments"
            )
        ),
    ),
    (
        "documentation",
        3,
        re.compile(
            r"/"
            + _WORDS.format(
                "docs?|documentation|reference|api|manual|man\\d?|man-pages|handbook|wiki|"
                "userguide|usersguide|tutorials?|concepts|glossary|book|getting-started"
            )
        ),
    ),
    ("product", 2, re.compile(r"/" + _WORDS.format("products?|pdp") + r"/.")),
    ("product", 1, re.compile(r"/" + _WORDS.format("p|item|listing") + r"/.")),
    (
        "collection",
        2,
        re.compile(
            r"/"
            + _WORDS.format(
                "collections?|categories|category|c|cat|browse|shop|department|"
                "product-category|subcategory|shopping|buy-\\w+"
            )
        ),
    ),
    (
        "service",
        2,
        re.compile(
            r"/"
            + _WORDS.format("services?|solutions?|pricing|features|what-we-do|capabilities")
            + r"|-(?:services?|company|agency|consulting|developers?|repair)(?=[/._-]|$)"
        ),
    ),
    (
        "listing",
        2,
        re.compile(r"/(?:news|blog|latest|trending|topics|tags?|list|directory|archive)/?$"),
    ),
    (
        "article",
        2,
        re.compile(
            r"/(?:blog|blogs|news|articles?|posts?|story|stories|insights?|magazine)/[^/]+"
            r"|/(?:19|20)\d\d/\d\d?/"
        ),
    ),
)

_PRICE = re.compile(r"(?:[$€£¥₹]\s?\d|\d(?:[.,]\d\d)?\s?(?:€|EUR|USD|GBP)\b)")
_BUY = re.compile(r"\b(?:add to (?:cart|bag|basket|trolley)|buy (?:now|it now))\b", re.IGNORECASE)
_POST_CLASS = re.compile(
    r"(?:^|[\s_-])(?:post|message|comment|reply|answer)(?:s|body|content|text)?(?:$|[\s_-])",
    re.IGNORECASE,
)
_MANY_PRICES = 8
_MANY_CODE = 3
_MANY_CARDS = 6
_MANY_POSTS = 3
_POST_CHARS = 80
_SIDEBAR_LINKS = 40


def detect(tree: HtmlElement, url: str, signals: Signals) -> str:
    declared: Counter[str] = Counter()
    _declared(signals, declared)
    votes = declared.copy()
    _address(url, votes)
    _shape(tree, votes, declared_article=declared["article"] > 0)
    if not votes:
        return "article"
    # Ties go to the type listed first in PAGE_TYPES order of preference below.
    best = max(_PREFERENCE, key=lambda name: (votes[name], -_PREFERENCE.index(name)))
    return best if best == "article" or _clear(best, votes, declared) else "article"


# A type other than article must win clearly: an article read as a listing or a forum loses
# most of its text, a listing read as an article little. The margin was chosen on broad-dev
# and wcxb-dev (the 210), and holds on the other 1,127 WCXB dev pages and the Zyte ones.
_MARGIN = 2
_STRONG = 3  # a declaration this strong (schema.org Product, QAPage, ...) is taken at its word


def _clear(best: str, votes: Counter[str], declared: Counter[str]) -> bool:
    """Whether `best` wins clearly enough over article: declared strongly by the page, or
    ahead of article by _MARGIN votes. URL words alone never make it so against the page's
    own Article markup."""
    return declared[best] >= _STRONG or votes[best] - votes["article"] >= _MARGIN


_PREFERENCE = ("forum", "product", "documentation", "collection", "listing", "service", "article")


def declares_article(signals: Signals) -> bool:
    """Whether the page says it is an article: a schema.org Article type, or og:type."""
    return signals.og_type == "article" or not signals.types.isdisjoint(_DECLARED["article"])


def _declared(signals: Signals, votes: Counter[str]) -> None:
    for name, weights in _DECLARED.items():
        found = [weight for kind, weight in weights.items() if kind in signals.types]
        if found:
            votes[name] += max(found)
    if signals.og_type in _OG_GROUP:
        votes["collection"] += 3
    elif signals.og_type in _OG:
        name, weight = _OG[signals.og_type]
        votes[name] += weight


def _address(url: str, votes: Counter[str]) -> None:
    parts = urlsplit(url.lower())
    for name, weight, pattern in _HOSTS:
        if pattern.search(parts.hostname or ""):
            votes[name] += weight
    path = parts.path + ("?" + parts.query if parts.query else "")
    for name, weight, pattern in _PATHS:
        if pattern.search(path):
            votes[name] += weight
    if parts.path in ("", "/"):  # a home page: a service's front page or a feed of items
        votes["service"] += 1


def _shape(tree: HtmlElement, votes: Counter[str], *, declared_article: bool = False) -> None:
    if tree.xpath("count(//pre)") >= _MANY_CODE:
        votes["documentation"] += 1
        side_links = tree.xpath("count(//nav//a | //aside//a)")
        votes["documentation"] += 1 if side_links >= _SIDEBAR_LINKS else 0
    body = tree.find("body")
    text = body.text_content() if body is not None else ""
    prices, buys = len(_PRICE.findall(text)), len(_BUY.findall(text))
    if prices >= _MANY_PRICES and (buys >= _MANY_CARDS or buys == 0):
        votes["collection"] += 2
    elif prices and buys:
        votes["product"] += 2
    if _posts(tree) >= _MANY_POSTS:
        votes["forum"] += 1
    items = _items(tree, len(" ".join(text.split())))
    if items >= _ITEMS_SHARE:
        votes["listing"] += 3
        return
    prose = sum(len(p) for p in tree.xpath(_PROSE))
    if prose >= _PROSE_SHARE * len(text) and prose:
        votes["article"] += 2
    elif declared_article:
        return  # an article's teasers of other articles do not make it a listing
    elif max(tree.xpath(_CARD_TITLES), tree.xpath("count(//article)")) >= _MANY_CARDS:
        votes["listing"] += 2


_ITEMS_SHARE = 0.4
_MIN_ITEMS = 5
_ITEM_CHARS = 15


def _items(tree: HtmlElement, total: int) -> float:
    """The share of the page's text in its largest run of like items: at least _MIN_ITEMS
    siblings of one tag and class, nearly all holding a link (a feed, a grid, a list)."""
    best = 0
    for parent in tree.iter():
        if len(parent) < _MIN_ITEMS or not isinstance(parent.tag, str):
            continue
        groups: dict[tuple[str, str], list[HtmlElement]] = {}
        for child in parent.iterchildren("*"):
            groups.setdefault((str(child.tag), child.get("class", "")), []).append(child)
        for members in groups.values():
            if len(members) >= _MIN_ITEMS:
                best = max(best, _item_chars(members))
    return best / total if total else 0.0


def _item_chars(members: list[HtmlElement]) -> int:
    linked = sum(member.tag == "a" or member.find(".//a") is not None for member in members)
    if linked < _LINKED_ITEMS * len(members):
        return 0
    chars = sum(len(" ".join(member.text_content().split())) for member in members)
    return chars if chars >= _ITEM_CHARS * len(members) else 0


_LINKED_ITEMS = 0.8


# Paragraphs of prose, some 40 words or more: what articles are made of.
_PROSE = "//p[string-length(normalize-space()) > 250]/text()"
_PROSE_SHARE = 0.3
# Headings that are links: the titles of cards in a feed or a grid.
_CARD_TITLES = "count(//*[self::h2 or self::h3 or self::h4][.//a or parent::a])"
_POST_CANDIDATES = (
    "//*["
    + " or ".join(
        f"contains(@class, '{word}')" for word in ("post", "message", "comment", "reply", "answer")
    )
    + "][not(self::a or self::span or self::button or self::form)]"
)


def _posts(tree: HtmlElement) -> int:
    """How many elements look like posts of a thread (the commonest repeated post class)."""
    classes: Counter[str] = Counter()
    for element in tree.xpath(_POST_CANDIDATES):
        value = element.get("class", "")
        if _POST_CLASS.search(value) and len(element.text_content()) > _POST_CHARS:
            classes[value] += 1
    return max(classes.values(), default=0)
