"""The page's own style sheets applied as a browser applies them, for what decides whether text
is seen: which rules match an element (cssselect2: any selector, with its specificity), the
cascade (origin, `!important`, `@layer`, specificity, order), media queries for a desktop
screen, inheritance and custom properties. Only the properties that can hide text are kept.

tinycss2 reads the CSS and cssselect2 matches its selectors, as WeasyPrint does: a hand-written
matcher misses what an attacker writes. A hostile sheet is bounded: _MAX_CSS characters read,
_MAX_RULES selectors kept, _BUDGET seconds to read them; what lies beyond is not applied.
"""

from __future__ import annotations

import math
import re
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    from lxml.html import HtmlElement

_MAX_CSS = 300_000  # characters of all <style> elements together
_MAX_RULES = 5_000  # selectors
_MAX_NESTING = 4  # at-rules inside at-rules
_BUDGET = 0.4  # seconds to read and compile a page's rules
_MAX_DEPTH = 32  # brackets inside brackets
_MAX_TESTS = 2_000_000  # selectors tested against elements, in all, on one page
_VAR_DEPTH = 8  # custom properties that name custom properties
_STYLE_START = re.compile(r"<style\b[^>]*>", re.IGNORECASE)
_ATTRIBUTE = lazy(r"""([\w-]+)\s*=\s*(["']?)([^"'>]*)\2""")
_STYLE_END = re.compile(r"</style\s*>", re.IGNORECASE)

# Every property that decides whether text shows; rules that set none of them are not kept.
WATCHED = frozenset((
    "display", "visibility", "opacity", "filter", "color", "-webkit-text-fill-color",
    "background", "background-color", "background-image", "font", "font-size", "transform",
    "scale", "translate", "clip-path", "clip", "position", "left", "top", "right", "inset",
    "margin", "margin-left", "margin-top", "text-indent", "width", "height", "max-width",
    "max-height", "overflow", "overflow-x", "overflow-y", "padding", "padding-top",
    "padding-bottom", "padding-left", "padding-right", "content-visibility", "animation",
    "animation-name", "transition", "will-change", "cursor", "background-clip",
    "-webkit-background-clip",
))  # fmt: skip
# A watched property's name (or a custom property's) where a declaration may start.
_WATCHED_NAME = lazy(
    r"(?:^|[;{\s])(?:--|(?:"
    + "|".join(sorted(map(re.escape, WATCHED), key=len, reverse=True))
    + r")\s*:)",
    re.IGNORECASE,
)
# The interaction a person makes that a rule waits for: with it taken out, a rule that shows
# an element under it says the element is a click (or hover) away.
_STATES = frozenset(
    {"hover", "focus", "focus-within", "focus-visible", "active", "checked", "target"}
)

# The screen the page is judged on: a desktop browser's, light, with a mouse.
VIEWPORT = (1280.0, 800.0)
ROOT_PX = 16.0
_MEDIA_TYPES = frozenset({"all", "screen"})
_FEATURES = {
    "orientation": "landscape",
    "prefers-color-scheme": "light",
    "prefers-reduced-motion": "no-preference",
    "prefers-contrast": "no-preference",
    "hover": "hover",
    "any-hover": "hover",
    "pointer": "fine",
    "any-pointer": "fine",
    "forced-colors": "none",
    "inverted-colors": "none",
    "display-mode": "browser",
    "scripting": "enabled",
    "update": "fast",
}
_NUMERIC = {
    "width": VIEWPORT[0],
    "height": VIEWPORT[1],
    "device-width": VIEWPORT[0],
    "device-height": VIEWPORT[1],
    "aspect-ratio": VIEWPORT[0] / VIEWPORT[1],
    "resolution": 1.0,
    "-webkit-device-pixel-ratio": 1.0,
    "device-pixel-ratio": 1.0,
    "color": 8.0,
    "monochrome": 0.0,
    "grid": 0.0,
}
_STRUCTURE = frozenset(
    ("", tag) for tag in ("html", "body", "header", "main", "footer", "section", "article", "nav")
)
_GUARDS = frozenset({"display", "opacity", "visibility", "content-visibility"})
# Other screens a page is read on: a phone's, a tablet's, a wide desktop's.
_SCREENS: tuple[dict[str, Any], ...] = tuple(
    {"width": w, "height": h, "device-width": w, "device-height": h, "aspect-ratio": w / h,
     "orientation": "portrait" if w < h else "landscape"}
    for w, h in ((375.0, 812.0), (768.0, 1024.0), (1920.0, 1080.0))
)  # fmt: skip
_LENGTH = lazy(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)([a-z%]*)$")
_ABSOLUTE = {"px": 1.0, "pt": 4 / 3, "pc": 16.0, "in": 96.0, "cm": 96 / 2.54, "mm": 96 / 25.4}
_ABSOLUTE |= {"q": 96 / 101.6, "dppx": 1.0, "x": 1.0, "dpi": 1 / 96}
_VIEWPORT_UNITS = {"vw": VIEWPORT[0], "vh": VIEWPORT[1], "vmin": VIEWPORT[1]}
_VIEWPORT_UNITS |= {"vmax": VIEWPORT[0], "svw": VIEWPORT[0], "svh": VIEWPORT[1]}
_VIEWPORT_UNITS |= {"dvw": VIEWPORT[0], "dvh": VIEWPORT[1], "lvw": VIEWPORT[0], "lvh": VIEWPORT[1]}
_VAR = lazy(r"var\(\s*(--[-\w]+)\s*")
_ARGUMENTS = lazy(r"\([^()]*\)|\[[^\]]*\]|\"[^\"]*\"|'[^']*'")
# Any character past ASCII may be in a name; the negated class says so cheaply (a range of
# thousands of characters costs `re` milliseconds to compile, every process).
_NAMES = lazy(r"([.#])(-?(?:[_a-zA-Z]|[^\x00-\x9f])(?:[-\w]|[^\x00-\x9f])*)")
_VALUED = re.compile(r"\[[^\]=]*=[^\]]*\]")
# A compound's first class, and the classes after it (which a script adds and takes away).
_EXTRA_CLASSES = re.compile(r"(\.[-\w]+)(?:\.[-\w]+)+")
_BRACKETS = lazy(
    r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|/\*.*?(?:\*/|$)|[()\[\]{}]", re.DOTALL
)
_BRACES = lazy(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|/\*.*?(?:\*/|$)|[{};]", re.DOTALL)
_UNREAD_AT_RULES = ("@font-face", "@keyframes", "@-webkit-keyframes", "@-moz-keyframes",
                    "@counter-style", "@page", "@property", "@font-feature-values")  # fmt: skip
_SIMPLE = lazy(r"([a-zA-Z][\w-]*|\*)?((?:[.#]-?[_a-zA-Z][\w-]*)*)")
_PART = lazy(r"([.#])(-?[_a-zA-Z][\w-]*)")
_NESTED = re.compile(r"[(\[\"']")
_RANGE = lazy(r"^(?:([^<>=]+)(<=|>=|<|>|=))?\s*([-a-z]+)\s*(?:(<=|>=|<|>|=)([^<>=]+))?$")


class Declared(NamedTuple):
    """One declaration of a rule, with where it stands in the cascade."""

    name: str
    value: str
    important: bool


class Rule(NamedTuple):
    declarations: tuple[Declared, ...]
    layer: float  # the rank of its cascade layer; math.inf when it is in none


Token = tuple[str, str]  # ("#", an id), (".", a class) or ("", a tag name)


class _Entry(NamedTuple):
    test: Any  # cssselect2's compiled test of an element; None for a simple compound
    specificity: tuple[int, int, int]
    order: int
    needs: frozenset[Token]  # what the element's ancestors must hold for it to match
    rule: Rule
    own: frozenset[Token] = frozenset()  # a simple compound's tag, id and classes


class Index:
    """Selectors kept as a browser keeps them: by their subject's id, class or tag, so an
    element is tested only against those that may name it, and each with the ids, classes
    and tags its ancestors must have (a browser's ancestor filter), so a selector such as
    `#menu li *` costs nothing outside the menu. A simple compound (`div.note`, `#tip`),
    most of a page's selectors, is matched by the tag, id and classes alone, uncompiled."""

    __slots__ = ("by_key", "order", "others", "simple", "simple_found", "tests")

    def __init__(self) -> None:
        self.by_key: dict[Token, list[_Entry]] = {}
        self.others: list[_Entry] = []
        self.simple: dict[Token, list[_Entry]] = {}
        self.simple_found: dict[tuple[Token, ...], list[_Entry]] = {}
        self.order = 0
        self.tests = 0  # selectors tested so far

    def add(self, parsed: Any, rule: Rule) -> None:
        from cssselect2.compiler import CompiledSelector

        if parsed.pseudo_element is not None:
            return  # ::before and ::after style boxes of their own, not the element's text
        compiled = CompiledSelector(parsed)
        if compiled.never_matches:
            return
        self.order += 1
        subject, needs = _tokens(parsed.parsed_tree)
        entry = _Entry(compiled.test, parsed.specificity, self.order, frozenset(needs), rule)
        key = next(iter(sorted(subject)), None)
        (self.by_key.setdefault(key, []) if key else self.others).append(entry)

    def add_simple(
        self, own: frozenset[Token], specificity: tuple[int, int, int], rule: Rule
    ) -> None:
        """A selector of one compound of a tag, an id and classes (see `simple_compound`)."""
        self.order += 1
        entry = _Entry(None, specificity, self.order, frozenset(), rule, own)
        self.simple.setdefault(min(own), []).append(entry)

    def match(self, element: Any, keys: list[Token], above: dict[Token, int]) -> list[_Entry]:
        """The entries that match a cssselect2 element, whose own tag, id and classes are
        `keys` (see `tokens_of`) and whose ancestors' are `above`."""
        found = self._simple(keys)
        by_key = self.by_key
        entries = [entry for key in keys if key in by_key for entry in by_key[key]]
        entries += self.others
        self.tests += len(entries)
        found += [
            entry
            for entry in entries
            if (not entry.needs or all(above.get(token) for token in entry.needs))
            and entry.test(element)
        ]
        return found

    def _simple(self, keys: list[Token]) -> list[_Entry]:
        """The simple compounds an element of these keys matches, looked up once a page for
        each tag, id and class list it has."""
        signature = tuple(keys)
        found = self.simple_found.get(signature)
        if found is None:
            mine = frozenset(keys)
            simple = self.simple
            found = [e for key in mine if key in simple for e in simple[key] if e.own <= mine]
            self.simple_found[signature] = found
        return list(found)


def simple_compound(selector: str) -> tuple[frozenset[Token], tuple[int, int, int]] | None:
    """A selector's tag, id and classes and its specificity when it is one compound of just
    those (no escapes, attributes, pseudo-classes or combinators), else None."""
    match = _SIMPLE.fullmatch(selector.strip())
    if match is None:
        return None
    tag, rest = match.groups()
    parts = _PART.findall(rest)
    own = {(kind if kind == "#" else ".", name) for kind, name in parts}
    if tag and tag != "*":
        own.add(("", tag.lower()))
    ids = sum(kind == "#" for kind, _ in parts)
    if not own or ids > 1:
        return None
    return frozenset(own), (ids, len(parts) - ids, int(bool(tag) and tag != "*"))


def _tokens(tree: Any) -> tuple[set[Token], set[Token]]:
    """The ids, classes and tags a selector's subject must have, and those its ancestors
    must have (the compounds before a descendant or child combinator; the compound just
    before a sibling combinator is a sibling, not an ancestor)."""
    from cssselect2 import parser

    subject = _compound_tokens(tree.right if isinstance(tree, parser.CombinedSelector) else tree)
    needs: set[Token] = set()
    node, ancestor = tree, False
    while isinstance(node, parser.CombinedSelector):
        ancestor = node.combinator in (" ", ">")
        node = node.left
        compound = node.right if isinstance(node, parser.CombinedSelector) else node
        if ancestor:
            needs |= _compound_tokens(compound)
    return subject, needs


def _compound_tokens(compound: Any) -> set[Token]:
    """The ids, classes and tags an element must have to match the compound: `:root` is the
    <html> element, and `:is()` or `:where()` asks for what all its selectors' subjects ask
    for (`:root` and `:where(img)` are most of the selectors no token would file)."""
    from cssselect2 import parser

    found: set[Token] = set()
    for simple in getattr(compound, "simple_selectors", ()):
        if isinstance(simple, parser.IDSelector):
            found.add(("#", simple.ident))
        elif isinstance(simple, parser.ClassSelector):
            found.add((".", simple.class_name))
        elif isinstance(simple, parser.LocalNameSelector):
            found.add(("", simple.lower_local_name))
        elif isinstance(simple, parser.PseudoClassSelector) and simple.name == "root":
            found.add(("", "html"))
        elif isinstance(simple, parser.MatchesAnySelector | parser.SpecificityAdjustmentSelector):
            found |= _shared_tokens([selector.parsed_tree for selector in simple.selector_list])
    return found


def _shared_tokens(trees: list[Any]) -> set[Token]:
    """What every one of the selectors' subjects must have."""
    from cssselect2 import parser

    subjects = [
        _compound_tokens(tree.right if isinstance(tree, parser.CombinedSelector) else tree)
        for tree in trees
    ]
    return set.intersection(*subjects) if subjects else set()


def tokens_of(element: HtmlElement) -> list[Token]:
    """What an element gives the ancestor filter of its descendants."""
    found: list[Token] = [("", str(element.tag).lower())]
    if (id_ := element.get("id")) is not None:
        found.append(("#", id_))
    found += [(".", name) for name in (element.get("class") or "").split()]
    return found


class Sheet:
    """The rules of a page's style sheets that set a watched property (`index`); `reveal`
    holds the rules that wait for an interaction (:hover, :checked...), with it taken out of
    their selectors."""

    __slots__ = ("cut", "elsewhere", "index", "reveal", "rules")

    def __init__(self) -> None:
        self.index = Index()
        self.reveal = Index()
        self.elsewhere = Index()  # rules that show elements on other screens (a phone's)
        self.rules = 0
        self.cut = False  # a bound was reached: some rules were not read

    def keys(self) -> frozenset[Token] | None:
        """The ids, classes and tags one of which an element must have for a rule to apply
        to it (each rule is filed by one its subject needs), or None when a rule may apply to
        any element (`*`, `[lang]`, `:not(.x)`)."""
        index = self.index
        if index.others:
            return None
        return frozenset(index.by_key) | frozenset(index.simple)

    def filters(self) -> dict[Token, frozenset[frozenset[Token]]] | None:
        """What `keys` says, with what an element's ancestors must hold for a rule filed by
        each key to apply to it (its entries' `needs`; an empty set when one needs nothing):
        `.menu a` styles no link outside a menu."""
        index = self.index
        if index.others:
            return None
        found: dict[Token, frozenset[frozenset[Token]]] = {
            key: frozenset({frozenset()}) for key in index.simple
        }
        for key, entries in index.by_key.items():
            found[key] = found.get(key, frozenset()) | {entry.needs for entry in entries}
        return found

    def compiled(self) -> bool:
        """Whether any selector was compiled (one not a simple compound): matching it needs
        cssselect2's view of an element's ancestors and siblings."""
        return any(
            index.by_key or index.others for index in (self.index, self.reveal, self.elsewhere)
        )

    def match(self, element: Any, keys: list[Token], above: dict[Token, int]) -> list[_Entry]:
        """The rules that apply to the element; none once _MAX_TESTS selectors were tested
        on the page (a hostile page of many elements and rules), which then `cut` says."""
        if self.index.tests + self.reveal.tests > _MAX_TESTS:
            self.cut = True
            return []
        return self.index.match(element, keys, above)

    def reveals(
        self, element: Any, keys: list[Token], above: dict[Token, int], *, screens: bool = False
    ) -> list[Rule]:
        """The rules for other states (or, with `screens`, for other screens) that apply."""
        if self.index.tests + self.reveal.tests > _MAX_TESTS:
            return []
        index = self.elsewhere if screens else self.reveal
        return [entry.rule for entry in index.match(element, keys, above)]


def style_text(html: str) -> str:
    """The text of the <style> elements of raw HTML that apply on the screen the page is
    judged on (see `_applies_here`), up to _MAX_CSS characters."""
    found: list[str] = []
    room, position = _MAX_CSS, 0
    while room > 0 and (start := _STYLE_START.search(html, position)):
        end = _STYLE_END.search(html, start.end())
        if end is None:
            break
        attributes = {name.lower(): value for name, _, value in _ATTRIBUTE.findall(start.group())}
        if _applies_here(attributes.get("media"), attributes.get("type")):
            found.append(html[start.end() : end.start()][:room])
            room -= len(found[-1])
        position = end.end()
    return "".join(found)


def _applies_here(media: str | None, kind: str | None) -> bool:
    """Whether a <style> element's rules apply: CSS (no other `type`) for a media query the
    screen matches (`<style media="(max-width: 600px)">` is a phone's)."""
    if kind is not None and kind.strip().lower() not in ("", "text/css"):
        return False
    return media is None or media_matches(" ".join(media.lower().split()))


def read_sheet(tree: HtmlElement, styles: str = "") -> Sheet:
    """The rules of the page's <style> elements (or of `styles`, where they were stripped
    from its HTML: see `style_text`) that may apply to its elements, within the bounds."""
    css = styles or "".join(
        style.text or ""
        for style in tree.iter("style")
        if _applies_here(style.get("media"), style.get("type"))
    )
    sheet = Sheet()
    if not css.strip():
        return sheet
    import tinycss2

    sheet.cut = len(css) > _MAX_CSS
    present = _present(tree)
    css = _pruned(_flattened(css[:_MAX_CSS]), present)
    rules = tinycss2.parse_stylesheet(css, skip_comments=True, skip_whitespace=True)
    reader = _Reader(sheet, present, time.monotonic() + _BUDGET)
    reader.read(rules, layer="", depth=0)
    return sheet


def _pruned(css: str, present: _Present) -> str:
    """The CSS without the rules that cannot matter, taken out before it is read (reading is
    the costliest step, and most of a framework's rules are for components a page lacks):
    fonts and animations' keyframes, rules that set none of the properties read here, and
    rules every selector of which names an id or class the page lacks, in this state and
    in any other (`_loosened`)."""
    drops = []
    for start, brace, end, nested in _blocks(css):
        head = css[start:brace].strip()
        unread = head.lower().startswith(_UNREAD_AT_RULES)
        if unread or (not nested and _pointless(head, css[brace + 1 : end - 1], present)):
            drops.append((start, end))
    return _without(css, drops) if drops else css


def _blocks(css: str) -> Iterator[tuple[int, int, int, bool]]:
    """Each block of the CSS as it closes, innermost first: where its prelude starts, where
    its brace opens, where it ends, and whether it holds a block. Strings and comments are
    skipped as the tokenizer skips them; an unclosed block is not yielded."""
    starts: list[list[Any]] = []  # [prelude start, brace, holds a block]
    prelude = 0
    for match in _BRACES.finditer(css):
        char, at = match.group(), match.start()
        if char == ";":
            prelude = at + 1
        elif char == "{":
            if starts:
                starts[-1][2] = True
            starts.append([prelude, at, False])
            prelude = at + 1
        elif char == "}" and starts:
            start, brace, nested = starts.pop()
            yield start, brace, at + 1, nested
            prelude = at + 1


def _without(css: str, drops: list[tuple[int, int]]) -> str:
    kept, at = [], 0
    for start, end in sorted(drops):
        if start >= at:  # else inside a block already taken out
            kept.append(css[at:start])
            at = end
    kept.append(css[at:])
    return "".join(kept)


def _pointless(head: str, body: str, present: _Present) -> bool:
    if head.startswith("@"):
        return False
    if not _WATCHED_NAME.search(body):
        return True
    if _NESTED.search(head) or "\\" in head:
        return False  # a selector list whose commas the parser must find
    return all(_absent_in_any_state(selector, present) for selector in head.split(","))


def _absent_in_any_state(selector: str, present: _Present) -> bool:
    loose = _loosened(selector)
    return _absent(selector, present) and (loose is None or _absent(loose, present))


def _absent(selector: str, present: _Present) -> bool:
    """Whether the selector names an id or class this document lacks, read from its text
    outside any parentheses, brackets or strings (`:not(.x)` matches where .x is absent)."""
    bare = _ARGUMENTS.sub(" ", selector)
    if "\\" in bare or "(" in bare:
        return False  # escaped names, nested arguments: the parser decides
    return any(
        name not in (present.ids if kind == "#" else present.classes)
        for kind, name in _NAMES.findall(bare)
    )


def _flattened(css: str) -> str:
    """The CSS with whatever is nested deeper than _MAX_DEPTH brackets taken out (strings and
    comments aside): a browser reads on after it, and the parsers here would recurse past
    Python's stack. Unclosed brackets take the rest of the sheet, as they do in a browser."""
    depth, cut_from, at = 0, -1, 0
    kept: list[str] = []
    for match in _BRACKETS.finditer(css):
        char = match.group()
        if len(char) > 1:
            continue  # a string or a comment
        depth += 1 if char in "([{" else -1
        if depth > _MAX_DEPTH and cut_from < 0:
            cut_from = match.start()
        elif depth <= _MAX_DEPTH and cut_from >= 0:
            kept.append(css[at:cut_from])
            at, cut_from = match.end(), -1
    kept.append(css[at:] if cut_from < 0 else css[at:cut_from])
    return "".join(kept)


class _Present(NamedTuple):
    """What a selector's subject can be in this document: a rule for anything else is not
    compiled (cssselect2 compiles each selector to Python, the costliest step)."""

    ids: frozenset[str]
    classes: frozenset[str]
    tags: frozenset[str]


def _present(tree: HtmlElement) -> _Present:
    classes = {name for value in tree.xpath("//@class") for name in str(value).split()}
    return _Present(
        frozenset(str(value) for value in tree.xpath("//@id")),
        frozenset(classes),
        frozenset(str(e.tag).lower() for e in tree.iter() if isinstance(e.tag, str)),
    )


class _Reader:
    """Reads rules into a Sheet: media queries judged, layers ranked, bounds kept."""

    def __init__(self, sheet: Sheet, present: _Present, deadline: float) -> None:
        self.sheet = sheet
        self.present = present
        self.deadline = deadline
        self.layers: dict[str, int] = {}
        self.anonymous = 0
        self.here = True  # reading rules for the desktop, not for another screen only

    def read(self, rules: Iterable[Any], *, layer: str, depth: int) -> None:
        for rule in rules:
            if self.sheet.rules >= _MAX_RULES or time.monotonic() > self.deadline:
                self.sheet.cut = True
                return
            if rule.type == "qualified-rule":
                self._style_rule(rule, layer)
            elif rule.type == "at-rule" and depth < _MAX_NESTING:
                self._at_rule(rule, layer, depth)

    def _at_rule(self, rule: Any, layer: str, depth: int) -> None:
        import tinycss2

        keyword = rule.lower_at_keyword
        prelude = " ".join(tinycss2.serialize(rule.prelude).lower().split())
        if keyword == "layer":
            names = [f"{layer}.{n.strip()}".strip(".") for n in prelude.split(",") if n.strip()]
            if rule.content is None:  # `@layer a, b;` sets their order
                for name in names:
                    self._rank(name)
                return
            if not names:
                self.anonymous += 1
                names = [f"{layer}.#{self.anonymous}".strip(".")]
            inner, layer = names[0], names[0]
            self._rank(inner)
        elif rule.content is None:
            return
        elif not _applies(keyword, prelude):
            if keyword == "media" and self.here and elsewhere(prelude):
                self._elsewhere(rule, layer, depth)
            return
        content = tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True)
        self.read(content, layer=layer, depth=depth + 1)

    def _elsewhere(self, rule: Any, layer: str, depth: int) -> None:
        """Read the rules that apply on another screen (a phone's), for what they show."""
        import tinycss2

        content = tinycss2.parse_rule_list(rule.content, skip_comments=True, skip_whitespace=True)
        self.here = False
        try:
            self.read(content, layer=layer, depth=depth + 1)
        finally:
            self.here = True

    def _rank(self, name: str) -> int:
        return self.layers.setdefault(name, len(self.layers))

    def _style_rule(self, rule: Any, layer: str) -> None:
        import tinycss2

        found = tinycss2.parse_declaration_list(
            rule.content, skip_comments=True, skip_whitespace=True
        )
        kept = tuple(_declared(item) for item in found if _kept(item))
        if not kept:
            return
        payload = Rule(kept, self._rank(layer) if layer else math.inf)
        source = tinycss2.serialize(rule.prelude)
        # A list is compiled a selector at a time, so one for elements this page lacks costs
        # nothing; one whose commas may be inside a selector is compiled whole.
        for selector in [source] if _NESTED.search(source) else source.split(","):
            self._add(selector, payload)

    def _add(self, selector: str, payload: Rule) -> None:
        if not self.here:  # a rule of another screen counts only for what it shows
            if _showing(payload) and not self._absent(selector):
                self._index(selector, payload, self.sheet.elsewhere)
            return
        loose = _loosened(selector) if _showing(payload) else None
        for source, index in ((selector, self.sheet.index), (loose, self.sheet.reveal)):
            if source is not None and not self._absent(source):
                self._index(source, payload, index)

    def _index(self, selector: str, payload: Rule, index: Index) -> None:
        simple = simple_compound(selector)
        if simple is not None:
            if all(self._present_token(token) for token in simple[0]):
                index.add_simple(*simple, _unguarded(simple[0], payload))
                self.sheet.rules += index is self.sheet.index
            return
        from cssselect2 import SelectorError, parser  # only for a selector to compile

        try:
            parsed = [one for one in parser.parse(selector) if self._may_match(one.parsed_tree)]
            for one in parsed:
                index.add(one, payload)
                self.sheet.rules += index is self.sheet.index
        except (SelectorError, RecursionError):
            return  # a selector a browser would drop, or nested past any real page's

    def _present_token(self, token: Token) -> bool:
        kind, name = token
        present = self.present
        return name in (
            present.ids if kind == "#" else present.classes if kind == "." else present.tags
        )

    def _absent(self, selector: str) -> bool:
        """A quick way past the selectors of components the page does not have."""
        return _absent(selector, self.present)

    def _may_match(self, tree: Any) -> bool:
        """Whether every id, class and tag the selector names is in the document."""
        from cssselect2 import parser

        while isinstance(tree, parser.CombinedSelector):
            if not self._may_match(tree.right):
                return False
            tree = tree.left
        present = self.present
        for token in _compound_tokens(tree):
            kind, name = token
            where = present.ids if kind == "#" else present.classes if kind == "." else present.tags
            if name not in where:
                return False
        return True


def _unguarded(own: frozenset[Token], rule: Rule) -> Rule:
    """A rule for a page's whole structure (`body`, `header`, `main`...) without what would
    hide it: a guard that keeps the page hidden until its linked style sheets or scripts
    load (`header { opacity: 0 }`), which this does not read, not text hidden from a reader."""
    if len(own) != 1 or next(iter(own)) not in _STRUCTURE:
        return rule
    kept = tuple(item for item in rule.declarations if item.name not in _GUARDS)
    return rule._replace(declarations=kept)


def _showing(rule: Rule) -> bool:
    """Whether a rule may show what another hides (for `_loosened`)."""
    return any(
        item.name in ("display", "visibility", "opacity", "max-height", "height")
        and item.value not in ("none", "hidden", "collapse", "0", "0px")
        for item in rule.declarations
    )


def _loosened(selector: str) -> str | None:
    """The selector without the states a person's click or a page's script changes, or
    None if it names none: the interactions it waits for (:hover, :checked, :target...),
    attribute values (`[aria-expanded=true]`), and all but the first class of a compound
    (`.faq.open`, `.tab-pane.active`). A rule that shows an element in such a state says a
    person can open it."""
    pattern = r":(" + "|".join(sorted(_STATES, key=len, reverse=True)) + r")\b(?![-(])"
    loose = re.sub(pattern, "", selector, flags=re.IGNORECASE)
    loose = _VALUED.sub("", loose)
    if "(" not in loose:
        loose = _EXTRA_CLASSES.sub(r"\1", loose)
    if loose == selector or ":not()" in loose.replace(" ", ""):
        return None
    # A compound left with nothing ("a > :hover" became "a > ") matches any element.
    loose = re.sub(r"([>+~]\s*)$|^\s*$", r"\1*", loose.strip())
    loose = re.sub(r"^([>+~])", r"* \1", loose)
    return re.sub(r"([>+~])\s*(?=[>+~,]|$)", r"\1 *", loose)


def _kept(item: Any) -> bool:
    return item.type == "declaration" and (item.lower_name in WATCHED or item.name.startswith("--"))


def _declared(item: Any) -> Declared:
    import tinycss2

    value = " ".join(tinycss2.serialize(item.value).split())
    name = item.name if item.name.startswith("--") else item.lower_name
    return Declared(name, value if name.startswith("--") else value.lower(), item.important)


def inline(style: str) -> tuple[Declared, ...]:
    """The watched declarations of a style attribute."""
    import tinycss2

    found = tinycss2.parse_blocks_contents(style, skip_comments=True, skip_whitespace=True)
    return tuple(_declared(item) for item in found if _kept(item))


def _applies(keyword: str, prelude: str) -> bool:
    """Whether the rules inside an at-rule apply on the screen the page is judged on."""
    if keyword == "media":
        return media_matches(prelude)
    if keyword == "supports":
        return not prelude.startswith("not")  # a browser of today supports what pages test
    return False  # @container, @scope, @starting-style...: not on a page as first shown


def media_matches(query_list: str, screen: dict[str, Any] | None = None) -> bool:
    """Whether a media query list matches a screen: by default a desktop's (VIEWPORT, light,
    a mouse); `screen` gives another's width, height and orientation (see `_SCREENS`)."""
    if not query_list.strip():
        return True
    numeric = _NUMERIC if screen is None else {**_NUMERIC, **screen}
    return any(_query(query.strip(), numeric) for query in _top_level(query_list, ","))


def elsewhere(query_list: str) -> bool:
    """Whether a media query list that does not match the desktop matches a phone's or a
    tablet's screen, or a wider one: rules under it show a page's content there."""
    return any(media_matches(query_list, screen) for screen in _SCREENS)


def _query(query: str, numeric: dict[str, Any]) -> bool:
    negated = query.startswith("not ")
    query = query.removeprefix("not ").removeprefix("only ").strip()
    parts = [part.strip() for part in _top_level(query, " and ")]
    matched = all(_condition(part, numeric) for part in parts if part)
    return matched != negated


def _condition(part: str, numeric: dict[str, Any]) -> bool:
    if not part.startswith("("):
        return part in _MEDIA_TYPES
    inner = part[1:-1].strip() if part.endswith(")") else part[1:]
    if inner.startswith("not "):
        return not _condition(inner[4:].strip(), numeric)
    if " or " in inner:
        return any(_condition(p.strip(), numeric) for p in _top_level(inner, " or "))
    if " and " in inner:
        return all(_condition(p.strip(), numeric) for p in _top_level(inner, " and "))
    if inner.startswith("("):
        return _condition(inner, numeric)
    return _feature(inner, numeric)


def _feature(inner: str, numeric: dict[str, Any]) -> bool:
    name, colon, value = (piece.strip() for piece in inner.partition(":"))
    if not colon:
        return _range(inner, numeric)
    bound = name[:4] if name[:4] in ("min-", "max-") else ""
    name = (
        name.removeprefix(bound)
        .replace("-webkit-min-", "-webkit-")
        .replace("-webkit-max-", "-webkit-")
    )
    if name in _FEATURES:
        return bool(value == numeric.get(name, _FEATURES[name]))
    actual, wanted = numeric.get(name), _media_number(value)
    if not isinstance(actual, float) or wanted is None:
        return False
    return {"min-": actual >= wanted, "max-": actual <= wanted}.get(bound, actual == wanted)


def _range(inner: str, numeric: dict[str, Any]) -> bool:
    match = _RANGE.match(inner)
    if match is None:
        return inner in _FEATURES or bool(numeric.get(inner, 0.0))
    left, left_op, name, right_op, right = match.groups()
    actual = numeric.get(name)
    if not isinstance(actual, float):
        return False
    checks = []
    if left is not None and (value := _media_number(left.strip())) is not None:
        checks.append(_compare(value, left_op, actual))
    if right is not None and (value := _media_number(right.strip())) is not None:
        checks.append(_compare(actual, right_op, value))
    return bool(checks) and all(checks)


def _compare(a: float, op: str, b: float) -> bool:
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "=": a == b}[op]


def _media_number(value: str) -> float | None:
    if "/" in value:  # an aspect ratio
        top, _, bottom = value.partition("/")
        a, b = _media_number(top.strip()), _media_number(bottom.strip())
        return a / b if a is not None and b else None
    return length(value, em=ROOT_PX, percent_of=None)


def _top_level(text: str, separator: str) -> list[str]:
    """`text` split at `separator` outside parentheses."""
    parts, depth, start, at = [], 0, 0, 0
    while at < len(text):
        char = text[at]
        depth += (char == "(") - (char == ")")
        if depth == 0 and text.startswith(separator, at):
            parts.append(text[start:at])
            at += len(separator)
            start = at
            continue
        at += 1
    parts.append(text[start:])
    return parts


def length(
    value: str, *, em: float, percent_of: float | None, rem: float = ROOT_PX
) -> float | None:
    """A length in px (an `em` is `em` px, a percentage of `percent_of`), or None when it is
    not one this reads (calc(), a keyword)."""
    value = value.strip()
    if value.startswith(("calc(", "min(", "max(", "clamp(")):
        return _function(value, em=em, percent_of=percent_of, rem=rem)
    match = _LENGTH.match(value)
    if match is None:
        return None
    number, unit = float(match.group(1)), match.group(2)
    if not unit:  # a number: a length only when it is 0, or where no percentage is meant
        return number if number == 0 or percent_of is None else None
    scale = _unit_px(unit, em=em, rem=rem, percent_of=percent_of)
    return None if scale is None else number * scale


def _unit_px(unit: str, *, em: float, rem: float, percent_of: float | None) -> float | None:
    if unit in _ABSOLUTE:
        return _ABSOLUTE[unit]
    if unit in _VIEWPORT_UNITS:
        return _VIEWPORT_UNITS[unit] / 100
    relative = {"em": em, "cap": em, "ic": em, "lh": em, "ex": em / 2, "ch": em / 2}
    if unit in relative or unit in ("rem", "rlh"):
        return relative.get(unit, rem)
    return percent_of / 100 if unit == "%" and percent_of is not None else None


def _function(value: str, *, em: float, percent_of: float | None, rem: float) -> float | None:
    """calc(), min(), max() and clamp() of lengths added or subtracted, or scaled by numbers."""
    name, _, rest = value.partition("(")
    inner = rest[: rest.rfind(")")] if ")" in rest else rest
    args = [a.strip() for a in _top_level(inner, ",")]
    if name == "calc" and len(args) == 1:
        return _sum(args[0], em=em, percent_of=percent_of, rem=rem)
    found = [length(a, em=em, percent_of=percent_of, rem=rem) for a in args]
    numbers = [n for n in found if n is not None]
    if len(numbers) != len(found) or not numbers:
        return None
    if name == "min":
        return min(numbers)
    if name == "max":
        return max(numbers)
    return max(numbers[0], min(numbers[1], numbers[2])) if len(numbers) == 3 else None


def _sum(expression: str, *, em: float, percent_of: float | None, rem: float) -> float | None:
    terms = re.split(r"\s+([-+])\s+", expression.strip().strip("()"))
    total, sign = 0.0, 1.0
    for term in terms:
        if term in ("+", "-"):
            sign = 1.0 if term == "+" else -1.0
            continue
        factors = [f.strip() for f in term.split("*")]
        product = 1.0
        for factor in factors:
            single = _plain_number(factor) or length(factor, em=em, percent_of=percent_of, rem=rem)
            if single is None:
                return None
            product *= single
        total += sign * product
    return total


def _plain_number(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def substitute(value: str, customs: dict[str, str]) -> str | None:
    """The value with its var() references replaced by the custom properties' values (or
    their fallbacks); None when a reference has neither (the declaration is then invalid)."""
    for _ in range(_VAR_DEPTH):
        match = _VAR.search(value)
        if match is None:
            return value
        end = _closing(value, match.start() + 4)
        rest = value[match.end() : end]
        fallback = rest[1:].strip() if rest.startswith(",") else None
        replacement = customs.get(match.group(1))
        if replacement is None or not replacement.strip() or replacement.strip() == "initial":
            replacement = fallback
        if replacement is None:
            return None
        value = value[: match.start()] + replacement.strip() + value[end + 1 :]
    return None if "var(" in value else value


def _closing(text: str, start: int) -> int:
    """Where the parenthesis opened before `start` closes (or the end)."""
    depth = 1
    for at in range(start, len(text)):
        depth += (text[at] == "(") - (text[at] == ")")
        if depth == 0:
            return at
    return len(text)
