"""The learned stage: which blocks of a type's main region a person calls the page's content.

The rules (region.py) leave a page's main region pruned of what its markup calls boilerplate;
what is left still holds blocks a reader would not call content on some types (filters kept
as plain lists, related items, other products' prices, repeated calls to action). Here each
block (`units`: an element with text and no block inside it) is described by FEATURES
(`features`): its text, link and markup statistics, its place in the region, the statistics
of the boxes around it, how many of its siblings look like it, the words of its class and id
names and the page type (the signals the rules use), and by the words of its text and of its
section's heading that the fit chose (`bags`); shallow gradient-boosted trees weigh them, and
a block whose probability of being content falls below its type's threshold goes. The trees
and thresholds are data (blocks_model.json), fitted by `make fit-blocks` (bench/fit_blocks.py)
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
_MODEL = "blocks_model.json"  # written by bench/fit_blocks.py
_LOOK_UP = 2  # boxes above a unit whose class names count as its own
_CONTEXT = 4  # boxes above a unit whose like siblings count


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
)  # fmt: skip
_REPEATS = FEATURES.index("repeats")
_FROM_MAIN = FEATURES.index("from_main")


def keep(region: HtmlElement, page_type: str, model: Model | None = None) -> None:
    """Drop the units of the region that the model (the shipped one unless given) finds
    unlikely to be content; a type the model has no threshold for keeps every unit."""
    model = model or _model()
    threshold = model.thresholds.get(page_type)
    if threshold is None:
        return
    found = units(region)
    rows = features(region, found, page_type)
    for unit, row, bag in zip(found, rows, bags(found), strict=True):
        if chance(row + [float(word in bag) for word in model.vocabulary], model) < threshold:
            unit.drop_tree()


@cache
def _model() -> Model:
    """The shipped model (blocks_model.json), read once, when the first page needs it."""
    import json
    from pathlib import Path

    data = json.loads(Path(__file__).with_name(_MODEL).read_text(encoding="utf-8"))
    trees = tuple((tuple(s), tuple(v), tuple(leaves)) for s, v, leaves in data["trees"])
    return Model(data["base"], trees, data["thresholds"], tuple(data["vocabulary"]))


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
    rows, before = [], 0
    for index, unit in enumerate(found):
        own = stats[unit]
        row = page.row(unit, own, (index / len(found), before / total, index))
        row[_REPEATS] = math.log(seen[texts[index]])
        row[_FROM_MAIN] = (index - main) / len(found)
        rows.append(row + kind)
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
        counts = self._counts.get(parent)
        if counts is None:
            counts = {}
            for child in parent:
                if isinstance(child.tag, str):
                    key = _signature(child)
                    counts[key] = counts.get(key, 0) + 1
            self._counts[parent] = counts
        return counts[_signature(element)] - 1, sum(counts.values()) - 1


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
            *_tag(unit, above),
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


def _text(unit: HtmlElement, text: str, own: _Stats) -> list[float]:
    stripped = text.strip()
    chars = max(len(stripped), 1)
    return [
        math.log1p(own.words),
        _share(own.linked, own.words),
        math.log1p(len(unit.xpath(".//a")) + (unit.tag == "a")),
        float(stripped.endswith(_SENTENCE_END)),
        sum(c.isdigit() for c in stripped) / chars,
        float(_PRICE.search(stripped) is not None),
    ]


def _tag(unit: HtmlElement, above: list[HtmlElement]) -> list[float]:
    tags = {str(e.tag) for e in above}
    words = _WORD.findall(unit.text_content())
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
