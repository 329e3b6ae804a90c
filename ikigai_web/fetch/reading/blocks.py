"""The learned stage: which blocks of a type's main region a person calls the page's content.

The rules (region.py) leave a page's main region pruned of what its markup calls boilerplate;
what is left still holds blocks a reader would not call content on some types (filters kept
as plain lists, related items, other products' prices, repeated calls to action). Here each
block (`units`: an element with text and no block inside it) is described by FEATURES
(`features`): its text, link and markup statistics, its place in the region, the statistics
of the boxes around it, how many of its siblings look like it, the words of its class and id
names, the page type (the signals the rules use), the statistics of the two larger spans it
falls in, its section (from a heading to the next of its rank or higher) and its group (a run
of like siblings: a card grid, a list of links), and by the words of its text and of its
section's heading that the fit chose (`bags`); shallow gradient-boosted trees weigh them, and
a block whose probability of being content falls below its type's threshold goes, unless it
is a cell of a table or a term list (`droppable`). The trees
and thresholds are data (blocks_model.py), fitted by `make fit-blocks` (bench/fit_blocks.py)
on one declared half of the labelled dev pages; a type without a threshold there keeps the
rules alone, as measurement found them better for it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from functools import cache, lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from lxml.html import HtmlElement

# Elements laid out as blocks of their own: a unit holds none of them.
_BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "dd", "details", "div", "dl", "dt",
        "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
        "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary",
        "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
_CELLS = frozenset({"td", "th"})
_TERMS = frozenset({"dd", "dt"})
_LISTS = frozenset({"ul", "ol"})
_WORD = re.compile(r"\w+")
_PRICE = re.compile(r"[$€£¥₹]\s?\d|\d(?:[.,]\d\d)?\s?(?:€|EUR|USD|GBP)\b")
_SENTENCE_END = (".", "!", "?", ":", '."', ".)")
_CLASS_WORD = re.compile(r"[a-z]{3,}")
_TEXT_WORD = re.compile(r"[^\W\d_]{2,}|[$€£¥₹%]")
# Words of class and id names, on the unit or the two boxes above it, each a feature: what a
# page calls the parts of any page (never one site's names).
_NAMED = (
    "card", "item", "product", "price", "tile", "grid", "carousel", "slider", "swiper",
    "widget", "sidebar", "promo", "banner", "badge", "rating", "tag", "meta", "author", "btn",
    "button", "menu", "title", "desc", "description", "content", "body", "post", "comment",
    "text", "list", "link", "label", "info", "detail", "details", "spec", "summary", "footer",
    "header", "icon", "date", "breadcrumb", "review", "related", "filter",
)  # fmt: skip
# The page types read by region (every type but article), each a feature.
_TYPES = ("collection", "documentation", "forum", "listing", "product", "service")
_LOOK_UP = 2  # boxes above a unit whose class names count as its own
_CONTEXT = 4  # boxes above a unit whose like siblings count
# A run of like siblings (a card grid, a list of links): at least this many element children
# of one box, most of them alike (tag and class), holding at least this many units.
_GROUP = 3
_GROUP_ALIKE = 0.6
# What is measured of the two spans a unit falls in, its section (from a heading to the next
# of its rank or higher) and its group (a run of like siblings): a whole "Related products"
# or "You may also like" is one section or group, while its blocks each look like content.
_SPANS = (
    "share", "link_share", "units", "words_per_unit", "prices", "sentence_end", "cells",
    "items", "paragraphs", "repeats", "title_like", "alike", "has_main", "has_title", "start",
    "end", "rank",
)  # fmt: skip
_NO_SPAN = (-1.0,) * len(_SPANS)


class Model(NamedTuple):
    """Shallow trees whose leaves add up to a unit's score (log-odds of content), from
    `base`; and per page type, the probability below which a unit goes."""

    base: float
    # Per tree: the feature and the split value of each inner node (breadth first; x > value
    # goes right), then the leaves' values.
    trees: tuple[tuple[tuple[int, ...], tuple[float, ...], tuple[float, ...]], ...]
    thresholds: dict[str, float]
    # Words whose presence is a feature each, after FEATURES: "w" in the unit's text, "h:w"
    # in the heading it falls under (see `bags`).
    vocabulary: tuple[str, ...] = ()


class _Stats(NamedTuple):
    words: int
    linked: int  # words inside links
    units: int


FEATURES = (
    "words", "link_share", "links", "sentence_end", "digits", "price", "position",
    "words_before", "after_title", "heading", "item", "cell", "paragraph", "term", "code",
    "depth", "image", "title_case", "word_length", "in_list", "in_table", "share",
    "parent_link_share", "parent_words", "parent_units", "box_link_share", "box_share",
    "alike", "alike_share", "box_alike", "repeats",
    "from_main", *(f"class_{name}" for name in _NAMED), *(f"type_{name}" for name in _TYPES),
    *(f"section_{name}" for name in _SPANS), *(f"group_{name}" for name in _SPANS),
)  # fmt: skip
_REPEATS = FEATURES.index("repeats")
_FROM_MAIN = FEATURES.index("from_main")


def keep(region: HtmlElement, page_type: str, model: Model | None = None) -> None:
    """Drop the units of the region that the model (the shipped one unless given) finds
    unlikely to be content; a type the model has no threshold for keeps every unit, and a
    specification's cells (table cells, terms and their descriptions) always stay."""
    model = model or shipped_model()
    threshold = model.thresholds.get(page_type)
    if threshold is None:
        return
    found = units(region)
    rows = features(region, found, page_type)
    for unit, row, bag in zip(found, rows, bags(found), strict=True):
        if droppable(unit) and chance(extended(row, bag, model.vocabulary), model) < threshold:
            unit.drop_tree()


def droppable(unit: HtmlElement) -> bool:
    """Whether the stage may drop the unit: a cell of a table or a term list is a row of a
    specification or a comparison, which a reader keeps with its row."""
    return unit.tag not in _CELLS and unit.tag not in _TERMS


def extended(row: list[float], bag: frozenset[str], vocabulary: tuple[str, ...]) -> list[float]:
    """The unit's row with the vocabulary's words after FEATURES (see `Model`)."""
    return row + [float(word in bag) for word in vocabulary]


@cache
def shipped_model() -> Model:
    """The trees web-fetch ships (blocks_model.py, written by bench/fit_blocks.py), imported
    when the first page needs them, as pagetype.py's weights are."""
    from ikigai_web.fetch.reading import blocks_model as data

    return Model(data.BASE, data.TREES, data.THRESHOLDS, data.VOCABULARY)


def bags(found: list[HtmlElement]) -> list[frozenset[str]]:
    """Per unit, the words of its text and, marked "h:", of the last heading at or before it:
    what a block says and what its section is called."""
    heading: frozenset[str] = frozenset()
    found_bags = []
    for unit in found:
        words = frozenset(_TEXT_WORD.findall(unit.text_content().lower()))
        if unit.tag in _HEADINGS:
            heading = frozenset(f"h:{word}" for word in words)
        found_bags.append(words | heading)
    return found_bags


def chance(row: list[float], model: Model) -> float:
    """The model's probability that the unit described by `row` is content."""
    score = model.base
    for split, values, leaves in model.trees:
        node = 0
        while node < len(split):
            node = 2 * node + 1 + (row[split[node]] > values[node])
        score += leaves[node - len(split)]
    return 1.0 / (1.0 + math.exp(-max(min(score, 30.0), -30.0)))


def units(region: HtmlElement) -> list[HtmlElement]:
    """The region's blocks with text and no block inside them, in document order."""
    found: list[HtmlElement] = []
    _collect(region, found)
    return found


def _collect(element: HtmlElement, found: list[HtmlElement]) -> bool:
    """Add the units under `element`; whether it holds a block element."""
    inner = False
    for child in element:
        if isinstance(child.tag, str):
            inner = _collect(child, found) or inner or child.tag in _BLOCKS
    if not inner and element.tag in _BLOCKS and _WORD.search(element.text_content()):
        found.append(element)
    return inner


def features(region: HtmlElement, found: list[HtmlElement], page_type: str) -> list[list[float]]:
    """One row of FEATURES per unit of `found` (the region's `units`) on a page of this type."""
    stats: dict[HtmlElement, _Stats] = {}
    _measure(region, set(found), stats)
    page = _Page(region, stats, _title_at(region, found), _Signatures())
    total = max(stats[region].words, 1)
    texts = [" ".join(_WORD.findall(unit.text_content().lower())) for unit in found]
    seen = Counter(texts)
    main = max(range(len(found)), key=lambda at: stats[found[at]].words, default=0)
    kind = [float(page_type == name) for name in _TYPES]
    spans = _Spans(found, stats, texts, page, main).rows(region)
    rows, before = [], 0
    for index, unit in enumerate(found):
        own = stats[unit]
        row = page.row(unit, own, (index / len(found), before / total, index))
        row[_REPEATS] = math.log(seen[texts[index]])
        row[_FROM_MAIN] = (index - main) / len(found)
        rows.append(row + kind + spans[index])
        before += own.words
    return rows


def _measure(
    element: HtmlElement, found: set[HtmlElement], stats: dict[HtmlElement, _Stats]
) -> _Stats:
    """Words, words in links and units under `element` and each element below it."""
    words = len(_WORD.findall(element.text or ""))
    linked = count = 0
    for child in element:
        if isinstance(child.tag, str):
            inner = _measure(child, found, stats)
            words, linked, count = words + inner.words, linked + inner.linked, count + inner.units
        if child.tail:
            words += len(_WORD.findall(child.tail))
    own = _Stats(words, words if element.tag == "a" else linked, count + (element in found))
    stats[element] = own
    return own


def _title_at(region: HtmlElement, found: list[HtmlElement]) -> int | None:
    """The index of the first unit at or after the region's one <h1>; None without one."""
    titles = region.xpath(".//h1")
    if len(titles) != 1:
        return None
    for index, unit in enumerate(found):
        if unit is titles[0] or titles[0] in unit.iterancestors():
            return index
    return None


class _Signatures:
    """How many of each element's siblings share its tag and class, counted once a parent."""

    def __init__(self) -> None:
        self._counts: dict[HtmlElement, dict[tuple[str, str], int]] = {}

    def alike(self, element: HtmlElement) -> tuple[int, int]:
        """(siblings like it, siblings) of `element`."""
        parent = element.getparent()
        if parent is None:
            return 0, 0
        counts = self.children(parent)
        return counts[_signature(element)] - 1, sum(counts.values()) - 1

    def children(self, parent: HtmlElement) -> dict[tuple[str, str], int]:
        """How many of the element children of `parent` have each tag and class."""
        counts = self._counts.get(parent)
        if counts is None:
            counts = {}
            for child in parent:
                if isinstance(child.tag, str):
                    key = _signature(child)
                    counts[key] = counts.get(key, 0) + 1
            self._counts[parent] = counts
        return counts


def _signature(element: HtmlElement) -> tuple[str, str]:
    return str(element.tag), " ".join(sorted(element.get("class", "").split()))


class _Page:
    """What a unit's features are read against: its region, measured once."""

    def __init__(
        self,
        region: HtmlElement,
        stats: dict[HtmlElement, _Stats],
        title: int | None,
        signatures: _Signatures,
    ) -> None:
        self.region, self.stats, self.title, self.signatures = region, stats, title, signatures
        self.total = max(stats[region].words, 1)

    def row(self, unit: HtmlElement, own: _Stats, place: tuple[float, float, int]) -> list[float]:
        text = unit.text_content()
        above = list(self._ancestors(unit))
        after = 0.5 if self.title is None else float(place[2] >= self.title)
        return [
            *_text(unit, text, own),
            place[0],
            place[1],
            after,
            *_tag(unit, text, above),
            own.words / self.total,
            *self._boxes(unit, above),
            *self._alike(unit, above),
            0.0,  # repeats and from_main: set by `features`, which sees every unit
            0.0,
            *_named(unit, above),
        ]

    def _ancestors(self, unit: HtmlElement) -> list[HtmlElement]:
        found = []
        for element in unit.iterancestors():
            found.append(element)
            if element is self.region:
                break
        return found

    def _boxes(self, unit: HtmlElement, above: list[HtmlElement]) -> list[float]:
        """The parent's and the nearest box's (an ancestor of several units) statistics."""
        parent = self.stats.get(above[0] if above else unit, self.stats[unit])
        box = next((e for e in above if self.stats[e].units >= _BOX_UNITS), self.region)
        outer = self.stats[box]
        return [
            _share(parent.linked, parent.words),
            math.log1p(parent.words),
            math.log1p(parent.units),
            _share(outer.linked, outer.words),
            outer.words / self.total,
        ]

    def _alike(self, unit: HtmlElement, above: list[HtmlElement]) -> list[float]:
        """How many siblings share the unit's tag and class, and the most for a box above."""
        same, siblings = self.signatures.alike(unit)
        boxes = [self.signatures.alike(e)[0] for e in above[:_CONTEXT] if e is not self.region]
        return [math.log1p(same), _share(same, siblings), math.log1p(max(boxes, default=0))]


_BOX_UNITS = 3


class _Spans:
    """The statistics of each unit's innermost section and group (see _SPANS)."""

    def __init__(
        self,
        found: list[HtmlElement],
        stats: dict[HtmlElement, _Stats],
        texts: list[str],
        page: _Page,
        main: int,
    ) -> None:
        self.found, self.page, self.main = found, page, main
        self.words = [stats[unit].words for unit in found]
        self.linked = [stats[unit].linked for unit in found]
        raw = [unit.text_content().strip() for unit in found]
        self.prices = [_PRICE.search(text) is not None for text in raw]
        self.ends = [text.endswith(_SENTENCE_END) for text in raw]
        seen = Counter(texts)
        self.repeated = [seen[text] > 1 for text in texts]
        self.alike = [math.log1p(page.signatures.alike(unit)[0]) for unit in found]
        self.cells = [unit.tag in _CELLS or unit.tag in _TERMS for unit in found]
        self.items = [unit.tag == "li" for unit in found]
        self.paragraphs = [unit.tag == "p" for unit in found]
        self.title = _title_words(page.region)

    def rows(self, region: HtmlElement) -> list[list[float]]:
        """Per unit, its section's statistics and then its group's (each span measured once)."""
        measured: dict[tuple[int, int, int, str], list[float]] = {}
        found = []
        for span in (*_sections(self.found), *_groups(region, self.found, self.page.signatures)):
            if span not in measured:
                measured[span] = self._row(*span)
            found.append(measured[span])
        half = len(self.found)
        return [a + b for a, b in zip(found[:half], found[half:], strict=True)]

    def _row(self, start: int, end: int, rank: int, heading: str) -> list[float]:
        if start < 0:
            return list(_NO_SPAN)
        inside = range(start, end)
        words = max(sum(self.words[at] for at in inside), 1)
        count, title = end - start, self.page.title

        def share(test: list[bool]) -> float:
            return sum(self.words[at] for at in inside if test[at]) / words

        return [
            words / self.page.total,
            sum(self.linked[at] for at in inside) / words,
            math.log1p(count),
            words / count,
            sum(self.prices[at] for at in inside) / count,
            share(self.ends),
            share(self.cells),
            share(self.items),
            share(self.paragraphs),
            share(self.repeated),
            _likeness(heading, self.title),
            sum(self.alike[at] for at in inside) / count,
            float(start <= self.main < end),
            float(title is not None and start <= title < end),
            start / len(self.found),
            end / len(self.found),
            float(rank),
        ]


def _sections(found: list[HtmlElement]) -> list[tuple[int, int, int, str]]:
    """Per unit, its innermost section (start, end, rank, heading); (-1, ...) outside any."""
    spans: list[tuple[int, int, int, str]] = []
    open_: list[tuple[int, int]] = []  # (heading's index, rank), innermost last
    ends: dict[int, int] = {}
    inner: list[int] = []
    for index, unit in enumerate(found):
        if unit.tag in _HEADINGS:
            rank = int(str(unit.tag)[1])
            while open_ and open_[-1][1] >= rank:
                ends[open_.pop()[0]] = index
            open_.append((index, rank))
        inner.append(open_[-1][0] if open_ else -1)
    for start, _ in open_:
        ends[start] = len(found)
    for at in inner:
        if at < 0:
            spans.append((-1, -1, 0, ""))
        else:
            spans.append((at, ends[at], int(str(found[at].tag)[1]), found[at].text_content()))
    return spans


def _groups(
    region: HtmlElement, found: list[HtmlElement], signatures: _Signatures
) -> list[tuple[int, int, int, str]]:
    """Per unit, its innermost group (start, end, 0, ""); (-1, ...) outside any."""
    index = {unit: at for at, unit in enumerate(found)}
    spans: list[tuple[int, int, int, str]] = [(-1, -1, 0, "")] * len(found)
    for element in region.iter():
        if len(element) < _GROUP or not _is_group(signatures.children(element)):
            continue
        inside = [index[e] for e in element.iter() if e in index]
        if len(inside) < _GROUP:
            continue
        start, end = min(inside), max(inside) + 1
        for at in inside:
            if spans[at][0] < 0 or spans[at][1] - spans[at][0] > end - start:
                spans[at] = (start, end, 0, "")
    return spans


def _is_group(children: dict[tuple[str, str], int]) -> bool:
    """Whether children of these tags and classes are a run of like siblings."""
    most = max(children.values(), default=0)
    return most >= _GROUP and most >= _GROUP_ALIKE * sum(children.values())


def _title_words(region: HtmlElement) -> frozenset[str]:
    titles = region.xpath(".//h1")
    if len(titles) != 1:
        return frozenset()
    return frozenset(_TEXT_WORD.findall(titles[0].text_content().lower()))


def _likeness(heading: str, title: frozenset[str]) -> float:
    """The share of a heading's words that are the title's; -1 with no title or heading."""
    words = set(_TEXT_WORD.findall(heading.lower()))
    return len(words & title) / len(words) if title and words else -1.0


def _text(unit: HtmlElement, text: str, own: _Stats) -> list[float]:
    stripped = text.strip()
    chars = max(len(stripped), 1)
    return [
        math.log1p(own.words),
        _share(own.linked, own.words),
        math.log1p(sum(1 for _ in unit.iter("a"))),
        float(stripped.endswith(_SENTENCE_END)),
        sum(map(str.isdigit, stripped)) / chars,
        float(_PRICE.search(stripped) is not None),
    ]


def _tag(unit: HtmlElement, text: str, above: list[HtmlElement]) -> list[float]:
    tags = {str(e.tag) for e in above}
    words = _WORD.findall(text)
    capital = sum(w[0].isupper() for w in words) / max(len(words), 1)
    length = sum(map(len, words)) / max(len(words), 1) / 10
    return [
        float(unit.tag in _HEADINGS),
        float(unit.tag == "li"),
        float(unit.tag in _CELLS),
        float(unit.tag == "p"),
        float(unit.tag in _TERMS),
        float(unit.tag == "pre" or "pre" in tags),
        math.log1p(len(above)),
        float(unit.find(".//img") is not None),
        capital,
        length,
        float(not _LISTS.isdisjoint(tags)),
        float("table" in tags or unit.tag in _CELLS),
    ]


def _named(unit: HtmlElement, above: list[HtmlElement]) -> list[float]:
    found = [0.0] * len(_NAMED)
    for element in (unit, *above[:_LOOK_UP]):
        for at in _names_in(f"{element.get('class', '')} {element.get('id', '')}"):
            found[at] = 1.0
    return found


@lru_cache(maxsize=4096)
def _names_in(names: str) -> tuple[int, ...]:
    """The places in _NAMED of the words inside these class and id names ("product-card")."""
    words = set(_CLASS_WORD.findall(names.lower()))
    return tuple(at for at, name in enumerate(_NAMED) if any(name in word for word in words))


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0
