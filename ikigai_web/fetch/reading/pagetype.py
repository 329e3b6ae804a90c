"""What kind of page this is, decided cheaply before extraction: one of PAGE_TYPES.

The page is described by some fifty numbers (`features`): what it declares (schema.org types,
og:type), words in its host and path that name a kind of page (/forum/, docs., /products/),
and the shape of its DOM (code blocks, repeated posts, prices, add-to-cart buttons, cards and
runs of like linked items, prose paragraphs, headings, forms, calls to action); and by the
words it names its own parts with (`part_words`): in its title, headings, buttons and short links,
and in its class and id names ("cart", "thread", "sidebar", "pricing"), which say what the
parts are for on pages nobody has seen. A linear model per type scores the features and the
words (`_scores`), the scores give each type a probability, and the likeliest type is the answer
(`decide`): a sure one when its probability reaches a threshold chosen on the fitting pages,
else an unsure one, which web-fetch does not name and reads as an article unless the model finds
one unlikely (`_AS_ARTICLE`). A page that strongly declares one type (one that declares many
different products, a collection) is read as that type, and named when the model agrees or the
page has next to no text; one with next to no text and no such declaration is read as an
article, unsure. Its weights and threshold are data (pagetype_model.py), fitted by
`make fit-pagetype` (bench/fit_pagetype.py) on one declared half of the labelled dev pages,
every type weighted alike, and reported on the other half. The URL's structure (depth, slug,
dates) is left out on purpose: a page is served under any address, and the page's own markup
says more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import cache
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit

from ikigai_web.common.text import lazy
from ikigai_web.fetch.reading.forum import NOT_POSTS, POST_WORDS
from ikigai_web.fetch.reading.region import hidden
from ikigai_web.fetch.reading.signals import of_type, text_of, walk

if TYPE_CHECKING:
    from lxml.html import HtmlElement

    from ikigai_web.fetch.reading.signals import Signals

PAGE_TYPES = (
    "article",
    "collection",
    "documentation",
    "forum",
    "listing",
    "product",
    "service",
)

# schema.org types (lower-case) and how strongly each says a page type, out of _FULL.
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
_OG_PRODUCT = ("product", "product.item")
_OG_GROUP = ("product.group", "product:group")

_WORDS = r"(?:{})(?=[/._-]|$)"
# (feature, pattern over the lower-case host or path): words that name a kind of page.
_HOSTS = (
    ("host_forum", re.compile(r"^(?:forums?|community|discuss|discourse|bbs|boards?)\.")),
    ("host_documentation", re.compile(r"^(?:docs?|devdocs|developers?|wiki|man)\.")),
    ("host_shop", re.compile(r"^(?:shop|store)\.")),
)
_PATHS = (
    (
        "path_forum",
        re.compile(
            r"/"
            + _WORDS.format(
                "forums?|threads?|topics?|t|questions|discussions?|community|board|"
                "viewtopic|showthread|comments"
            )
        ),
    ),
    (
        "path_documentation",
        re.compile(
            r"/"
            + _WORDS.format(
                "docs?|documentation|reference|api|manual|man\\d?|man-pages|handbook|wiki|"
                "userguide|usersguide|tutorials?|concepts|glossary|book|getting-started"
            )
        ),
    ),
    ("path_product", re.compile(r"/" + _WORDS.format("products?|pdp") + r"/.")),
    ("path_item", re.compile(r"/" + _WORDS.format("p|item|listing") + r"/.")),
    (
        "path_collection",
        re.compile(
            r"/"
            + _WORDS.format(
                "collections?|categories|category|c|cat|browse|shop|department|"
                "product-category|subcategory|shopping|buy-\\w+"
            )
        ),
    ),
    (
        "path_service",
        re.compile(
            r"/"
            + _WORDS.format("services?|solutions?|pricing|features|what-we-do|capabilities")
            + r"|-(?:services?|company|agency|consulting|developers?|repair)(?=[/._-]|$)"
        ),
    ),
    (
        "path_listing",
        re.compile(r"/(?:news|blog|latest|trending|topics|tags?|list|directory|archive)/?$"),
    ),
    (
        "path_article",
        re.compile(
            r"/(?:blog|blogs|news|articles?|posts?|story|stories|insights?|magazine)/[^/]+"
            r"|/(?:19|20)\d\d/\d\d?/"
        ),
    ),
)

_PRICE = lazy(r"(?:[$€£¥₹]\s?\d|\d(?:[.,]\d\d)?\s?(?:€|EUR|USD|GBP)\b)")
_CURRENCIES = ("$", "€", "£", "¥", "₹", "EUR", "USD", "GBP")  # one is in every _PRICE
_POST_NAMES = "|".join(sorted(POST_WORDS))  # no word is the start of another: order is free
_POST_CLASS = lazy(
    rf"(?:^|[\s_-])(?:{_POST_NAMES})(?:s|body|content|text)?(?:$|[\s_-])", re.IGNORECASE
)
# Phrases counted in one pass over the lower-cased text (a case-blind pattern is several
# times slower), each group a feature: buying, calls to action, the vocabulary of threads.
# Each alternative starts with a letter as written: a position whose character starts none
# is passed over at once (the pattern, which opens with \b, cannot be searched for by them).
_PHRASE_GROUPS = {
    "buys": ("add to (?:cart|bag|basket|trolley)", "buy (?:now|it now)"),
    "ctas": (
        "get started", "sign up", "book a (?:demo|call|consultation)", "request a (?:demo|quote)",
        "get a quote", "contact us", "free trial", "try (?:it )?(?:for )?free", "schedule a",
        "learn more", "talk to (?:sales|us)", "call (?:us|now)", "pricing",
    ),
    "thread_words": (
        "reply", "replies", "posted by", "joined", "views", "upvote", "quote", "report post",
        "members?",
    ),
}  # fmt: skip
_PHRASE_STARTS = "".join(sorted({alt[0] for alts in _PHRASE_GROUPS.values() for alt in alts}))
_PHRASES = re.compile(
    rf"(?=[{_PHRASE_STARTS}])\b(?:"
    + "|".join(f"(?P<{name}>{'|'.join(alts)})" for name, alts in _PHRASE_GROUPS.items())
    + r")\b"
)
_POST_CHARS = 80
_SIDE_LINKS = "count(//nav//a | //aside//a)"
_TEL = "count(//a[starts-with(@href, 'tel:')])"
# Elements counted by tag, each a feature of the same name.
_COUNTED = (
    "pre", "code", "article", "h1", "h2", "h3", "form", "input", "button", "img", "time",
    "table", "li", "p",
)  # fmt: skip
_TEXT_SCALE = 12  # log(characters of text) / this: most pages fall between 0 and 1


class Model(NamedTuple):
    """The page-type model's weights (pagetype_model.py holds the shipped ones)."""

    weights: dict[str, dict[str, float]]  # per type: "bias" and one per feature
    words: dict[str, tuple[float, ...]]  # per word: one per type, in PAGE_TYPES order
    sure: float = 0.0  # the least probability of the best type for it to be given


class Guess(NamedTuple):
    """The type a page is read as, and whether the evidence is clear enough to say so."""

    name: str  # one of PAGE_TYPES: its policy reads the page either way
    sure: bool


def detect(tree: HtmlElement, url: str, signals: Signals) -> Guess:
    """The page's type, one of PAGE_TYPES, and whether it is clear."""
    return decide(features(tree, url, signals), part_words(tree), shipped_model())


@cache
def shipped_model() -> Model:
    """The weights web-fetch ships (pagetype_model.py, written by bench/fit_pagetype.py),
    imported when the first page needs them, as blocks.py's model is."""
    from ikigai_web.fetch.reading import pagetype_model as data

    return Model(data.WEIGHTS, data.WORDS, data.SURE)


def decide(found: dict[str, float], used: dict[str, float], model: Model) -> Guess:
    """The type the model finds likeliest, sure when its probability reaches `model.sure`.
    An unsure page is read as an article when the model gives that _AS_ARTICLE or more: a
    wrong article loses less of a page than a wrong other type (a region kept whole).

    A page that strongly declares one type (schema.org Product, QAPage, NewsArticle, ... at
    weight 3 or 4 in _DECLARED; og:type product or product.group) is read as that type, and
    said to be of it when the model agrees or the page has too little text to have a shape:
    on WCXB's dev pages, a declaration the model disagrees with is wrong more often than not.
    A page with too little text and no such declaration is read as an article, unsure.
    """
    strong = _strongly_declared(found)
    few = found["text"] < _FEW_CHARS
    if few and len(strong) != 1:
        return Guess("article", sure=False)  # no shape to read: the model would guess
    chances = probabilities(found, used, model)
    best = max(range(len(PAGE_TYPES)), key=chances.__getitem__)
    if len(strong) == 1:
        return Guess(strong[0], sure=few or strong[0] == PAGE_TYPES[best])
    if chances[best] >= model.sure:
        return Guess(PAGE_TYPES[best], sure=True)
    article = chances[PAGE_TYPES.index("article")] >= _AS_ARTICLE
    return Guess("article" if article else PAGE_TYPES[best], sure=False)


def probabilities(found: dict[str, float], used: dict[str, float], model: Model) -> list[float]:
    """Each type's probability (the softmax of its score), in PAGE_TYPES order."""
    totals = _scores(found, used, model)
    top = max(totals)
    exps = [math.exp(total - top) for total in totals]
    whole = sum(exps)
    return [value / whole for value in exps]


def _strongly_declared(found: dict[str, float]) -> list[str]:
    strong = {name for name in PAGE_TYPES if found[f"declared_{name}"] >= _STRONG / _FULL}
    strong |= {"product"} if found["og_product"] else set()
    strong |= {"collection"} if found["og_group"] else set()
    return sorted(strong)


def _scores(found: dict[str, float], used: dict[str, float], model: Model) -> list[float]:
    """Each type's score, in PAGE_TYPES order. Words the model has no weights for (too rare
    on the pages it was fitted on) count for nothing."""
    totals = [
        weights["bias"] + sum(found[name] * w for name, w in weights.items() if name != "bias")
        for weights in (model.weights[name] for name in PAGE_TYPES)
    ]
    for word, value in used.items():
        for k, weight in enumerate(model.words.get(word, ())):
            totals[k] += weight * value
    return totals


def features(tree: HtmlElement, url: str, signals: Signals) -> dict[str, float]:
    """The numbers the page type is decided from, by name (see the module's docstring)."""
    body = tree.find("body")
    text = body.text_content() if body is not None else ""
    return _declared(signals) | _address(url) | _counts(tree) | _shape(tree, body, text)


def part_words(tree: HtmlElement) -> dict[str, float]:
    """The words the page names its parts with, each as "where:word" (`title:pricing`,
    `heading:reviews`, `button:cart`, `link:reply`, `class:sidebar`) and log(1 + times used).
    A class or id value counts once however many elements carry it: a grid of a hundred
    cards is one design, not a hundred words."""
    found: Counter[str] = Counter()
    for element in tree.iter(*_NAMED):
        found.update(_words(_NAMED[element.tag], element.text_content()))
    found.update(_words("link", " ".join(tree.xpath(_SHORT_LINKS, smart_strings=False))))
    found.update(_words("class", " ".join(set(tree.xpath(_NAMES, smart_strings=False)))))
    return {word: math.log1p(times) for word, times in found.items()}


def _words(where: str, text: str) -> list[str]:
    return [f"{where}:{word}" for word in _WORD.findall(text.lower())]


# The elements whose text names a part of the page, and what `part_words` calls each.
_NAMED = {"title": "title", "h1": "heading", "h2": "heading", "h3": "heading", "button": "button"}
_SHORT_LINKS = "//a[string-length() < 30]//text()"  # menus, tabs, "Reply", "Add to cart"
_NAMES = "//@class | //@id"
# Runs of three letters or more: class names split at "-", "_" and digits (`product-card__title`
# is product, card, title), and no "of", "to", "id" or "js".
_WORD = re.compile(r"[a-z]{3,}")

_FULL = 4  # the strongest declaration's weight in _DECLARED; features scale it to 1
_STRONG = 3
_FEW_CHARS = math.log1p(100) / _TEXT_SCALE  # some 15 words, as "text" measures them
# Chosen by extraction F1 on the fitting half of the dev pages (issue 43).
_AS_ARTICLE = 0.2


def _declares(signals: Signals, weights: dict[str, int]) -> int:
    """How strongly the page's schema.org types say one page type (0: not at all)."""
    return max((weight for kind, weight in weights.items() if kind in signals.types), default=0)


def _declared(signals: Signals) -> dict[str, float]:
    found: dict[str, float | bool] = {
        f"declared_{name}": _declares(signals, weights) / _FULL
        for name, weights in _DECLARED.items()
    }
    if _catalogue(signals):
        found["declared_product"] = 0.0
        found["declared_collection"] = max(found["declared_collection"], _STRONG / _FULL)
    og = signals.og_type
    found |= {
        "og_article": og == "article",
        "og_product": og in _OG_PRODUCT,
        "og_group": og in _OG_GROUP,
        "og_website": og == "website",
        "og_other": bool(og) and og not in ("article", "website", *_OG_PRODUCT, *_OG_GROUP),
    }
    return {name: float(value) for name, value in found.items()}


_CATALOGUE = 20  # different products; a product's variants number a dozen or so at most


def _catalogue(signals: Signals) -> bool:
    """Whether the page declares many different products and no product group: a shop's
    category page (a grid whose every card carries its Product markup), not one product.
    Products inside another (isRelatedTo, isSimilarTo, isAccessoryOrSparePartFor) are that
    one's neighbours and do not count."""
    if "productgroup" in signals.types:
        return False  # one product in its variants, however many
    products = of_type(signals, "product")
    inner = {id(found) for product in products for found in walk(product) if found is not product}
    names = {text_of(product.get("name")) for product in products if id(product) not in inner}
    return len(names - {""}) >= _CATALOGUE


def _address(url: str) -> dict[str, float]:
    parts = urlsplit(url.lower())
    path = parts.path + ("?" + parts.query if parts.query else "")
    hosts = {name: pattern.search(parts.hostname or "") for name, pattern in _HOSTS}
    paths = {name: pattern.search(path) for name, pattern in _PATHS}
    return {name: float(bool(match)) for name, match in (hosts | paths).items()}


def _counts(tree: HtmlElement) -> dict[str, float]:
    tags = Counter(element.tag for element in tree.iter(*_COUNTED))
    found = {name: math.log1p(tags[name]) for name in _COUNTED}
    for name, xpath in (("side_links", _SIDE_LINKS), ("tel", _TEL)):
        found[name] = math.log1p(float(tree.xpath(xpath)))
    bylines, posts = _marked(tree)
    return found | {"byline": math.log1p(bylines), "posts": math.log1p(posts)}


def _shape(tree: HtmlElement, body: HtmlElement | None, text: str) -> dict[str, float]:
    total = len(" ".join(text.split()))
    prose = sum(len(p) for p in tree.xpath(_PROSE))
    phrases = Counter(match.lastgroup for match in _PHRASES.finditer(text.lower()))
    return {
        "text": math.log1p(total) / _TEXT_SCALE,
        "link_share": link_share(body, total),
        "prose": prose / len(text) if text else 0.0,
        "items": _items(tree, total),
        "cards": math.log1p(float(tree.xpath(_CARD_TITLES))),
        "prices": math.log1p(_prices(text)),
        **{name: math.log1p(phrases[name]) for name in ("buys", "ctas", "thread_words")},
    }


def link_share(body: HtmlElement | None, total: int | None = None) -> float:
    """The share of the body's text that is link text (white space collapsed); `total`: the
    body's, when known."""
    if body is None or not (total := _chars(body) if total is None else total):
        return 0.0
    return sum(_chars(link) for link in body.iter("a")) / total


def _prices(text: str) -> int:
    # Most pages name no currency at all: the pattern, which cannot start from a literal,
    # is then not run over every character.
    if not any(mark in text for mark in _CURRENCIES):
        return 0
    return len(_PRICE.findall(text))


def _chars(element: HtmlElement) -> int:
    return len(" ".join(element.text_content().split()))


_MIN_ITEMS = 5
_ITEM_CHARS = 15


def _items(tree: HtmlElement, total: int) -> float:
    """The share of the page's text in its largest run of like items: at least _MIN_ITEMS
    siblings of one tag and class, shown, nearly all holding a link, none holding most of
    their text (a feed, a grid, a list; not a page's stacked layout blocks)."""
    best = 0
    for parent in tree.iter():
        if len(parent) < _MIN_ITEMS or not isinstance(parent.tag, str) or hidden(parent):
            continue
        groups: dict[tuple[str, str], list[HtmlElement]] = {}
        # Hidden items (a menu's closed panels) are not what a reader sees as a feed.
        for child in parent.iterchildren("*"):
            if hidden(child):
                continue
            groups.setdefault((str(child.tag), child.get("class", "")), []).append(child)
        for members in groups.values():
            if len(members) >= _MIN_ITEMS:
                best = max(best, _item_chars(members))
    return best / total if total else 0.0


def _item_chars(members: list[HtmlElement]) -> int:
    # iter("a") starts with the member itself: a link, or one that holds a link.
    linked = sum(next(member.iter("a"), None) is not None for member in members)
    if linked < _LINKED_ITEMS * len(members):
        return 0
    sizes = [_chars(member) for member in members]
    chars = sum(sizes)
    # One member holding most of the run's text makes it a page's layout blocks (a header,
    # the article, a footer), not a feed's items.
    if chars < _ITEM_CHARS * len(members) or max(sizes) > _ITEM_SHARE * chars:
        return 0
    return chars


_LINKED_ITEMS = 0.8
_ITEM_SHARE = 0.5


# Paragraphs of prose, some 40 words or more: what articles are made of.
_PROSE = "//p[string-length(normalize-space()) > 250]/text()"
# Headings that are links: the titles of cards in a feed or a grid.
_CARD_TITLES = "count(//h2[.//a or parent::a] | //h3[.//a or parent::a] | //h4[.//a or parent::a])"
# A post's class holds one of the words, as written (a quick test before _POST_CLASS).
_ANY_POST_WORD = re.compile(_POST_NAMES)
_BYLINE = re.compile("author|byline")  # as written, as the class names of bylines are


def _marked(tree: HtmlElement) -> tuple[int, int]:
    """In one walk: how many elements mark a byline (rel=author, or a class that says author
    or byline), and how many look like posts of a thread (the commonest repeated post class
    on elements long enough to be posts)."""
    bylines = 0
    posts: Counter[str] = Counter()
    for element in tree.iter():
        value = element.get("class")
        if element.get("rel") == "author" or (value and _BYLINE.search(value)):
            bylines += 1
        if value and _is_post(element, value):
            posts[value] += 1
    return bylines, max(posts.values(), default=0)


def _is_post(element: HtmlElement, value: str) -> bool:
    return (
        _ANY_POST_WORD.search(value) is not None  # the quick test first
        and element.tag not in NOT_POSTS
        and _POST_CLASS.search(value) is not None
        and len(element.text_content()) > _POST_CHARS
    )
