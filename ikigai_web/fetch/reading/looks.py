"""How an element looks, from its parent's look and its own declarations (hidden.py walks the
page with it): its inherited properties (visibility, colour, font size, custom properties),
what its box does to all it holds (opacity, scale, the background behind it), and why its
styles hide its text, if they do. Colours are read by tinycss2; lengths by cascade.py."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from collections.abc import Iterable

    from lxml.html import HtmlElement

# The declarations the cascade leaves an element, in its order (see hidden._declared).
Declared = tuple[tuple[str, str], ...]

_READABLE = 4.0  # px: text set smaller than this cannot be read


_FAINT = 0.02  # opacity at or below which nothing shows


_SMALL = 0.05  # a scale at or below which nothing shows


_SAME = 1.1  # contrast ratio (WCAG) below which text and its background look alike


_INVISIBLE_INK = 0.1  # alpha of a text colour below which it is not painted


_FAR = 400.0  # px a box or its text is pushed up or left, beyond which it is off-screen


_CLOSED = 1.0  # px: a box this narrow or low that hides its overflow shows nothing


_WHITE = (1.0, 1.0, 1.0, 1.0)


_BLACK = (0.0, 0.0, 0.0, 1.0)


_LINK = (0.0, 0.0, 0.933, 1.0)  # a browser's link colour where the page sets none


# CSS system colours, as a browser in its light scheme paints them.
_SYSTEM = {
    "canvas": _WHITE,
    "canvastext": _BLACK,
    "field": _WHITE,
    "fieldtext": _BLACK,
    "graytext": (0.5, 0.5, 0.5, 1.0),
    "linktext": _LINK,
    "buttontext": _BLACK,
    "buttonface": (0.94, 0.94, 0.94, 1.0),
    "visitedtext": (0.33, 0.1, 0.55, 1.0),
}


PAINT = frozenset({"color", "font-size"})  # what hides text but no picture


MEDIA = ("img", "picture", "video", "canvas", "svg", "iframe", "object", "embed")


# Elements a browser paints itself (their background is not the page's).
PAINTED = frozenset({"button", "input", "select", "textarea", "mark", "meter", "progress"})


_FONT_SIZE = lazy(
    r"(?:^|\s)((?:\d*\.)?\d+(?:[a-z]+|%)|0|[a-z-]*small|[a-z-]*large|medium)(?:/\S+)?(?:\s|$)"
)


_TRANSFORM = lazy(r"([a-z0-9]+)\(([^()]*)\)")


_ANIMATED = ("animation-name", "transition", "transform", "translate", "will-change")


_STILL = frozenset({"none", "initial", "unset", "auto", "all 0s", "0s"})


Color = tuple[float, float, float, float]


class Look(NamedTuple):
    """What an element passes to its children: the inherited properties, and what its box
    does to everything in it."""

    visibility: str = "visible"
    color: Color = _BLACK
    fill: Color | None = None  # -webkit-text-fill-color, painted instead of `color`
    font_px: float = 16.0
    opacity: float = 1.0
    scale: float = 1.0
    background: Color | None = _WHITE  # None: unknown (a picture, an image behind)
    moving: bool = False  # an animation or transition may show it
    cursor: str = "auto"
    customs: dict[str, str] = {}  # noqa: RUF012 (never mutated: replaced)
    root_px: float = 16.0
    painter: Any = None  # the element whose background is `background` (None: the page's)
    layered: bool = False  # placed over something since then (absolute, fixed): not known
    inked: bool = False  # the page sets its text's colour (here or above), not the default


def resolved(
    declared: Declared, inherited: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The element's watched properties with var() replaced and shorthands read, each the
    last declared in the cascade's order, and its custom properties (inherited ones with its
    own over them)."""
    from ikigai_web.fetch.reading.cascade import substitute

    own = {name: value for name, value in declared if name.startswith("--")}
    customs = {**inherited, **own} if own else inherited
    values: dict[str, str] = {}
    for name, value in declared:
        if not name.startswith("--"):
            resolved = substitute(value, customs) if "var(" in value else value
            values.update(_longhands(name, resolved if resolved is not None else "unset"))
    return values, customs


def computed(
    element: HtmlElement, parent: Look, values: dict[str, str], customs: dict[str, str]
) -> Look:
    """The element's look: its declarations resolved against its parent's."""
    font_px = _font_px(values.get("font-size"), parent)
    color = _color(values.get("color"), parent.color) or parent.color
    if "color" not in values and element.tag == "a" and element.get("href") is not None:
        color = _LINK
    fill = values.get("-webkit-text-fill-color")
    if values.get("background-clip", values.get("-webkit-background-clip")) == "text":
        fill = "currentcolor"  # the text is painted with its background (a gradient)
        color = _BLACK if color[3] < _INVISIBLE_INK else color
    background, painter = _background(element, values, parent)
    return Look(
        visibility=_keyword(
            values.get("visibility"), parent.visibility, ("visible", "hidden", "collapse")
        ),
        color=color,
        fill=parent.fill
        if fill is None
        else (None if fill == "currentcolor" else _color(fill, color)),
        font_px=font_px,
        opacity=parent.opacity * _opacity(values),
        scale=parent.scale * _scale(values),
        background=background,
        moving=parent.moving or _moving(values),
        cursor=values.get("cursor", parent.cursor),
        customs=customs,
        root_px=font_px if element.tag == "html" else parent.root_px,
        painter=painter,
        layered=(parent.layered and painter is parent.painter)
        or values.get("position") in ("absolute", "fixed"),
        inked=parent.inked or "color" in values or "-webkit-text-fill-color" in values,
    )


def _longhands(name: str, value: str) -> Iterable[tuple[str, str]]:
    """A shorthand's longhands that this reads, with their values."""
    if name == "background":
        image = "url(" in value or "gradient(" in value or "image(" in value
        colors = [part for part in _parts(value) if _color(part, None) is not None]
        yield "background-color", colors[-1] if colors else "transparent"
        yield "background-image", "image" if image else "none"
    elif name == "font":
        size = _FONT_SIZE.search(value)
        yield "font-size", size.group(1) if size else "medium"
    elif name in ("overflow", "inset", "margin", "padding"):
        yield from _box_sides(name, value)
    elif name == "animation":
        yield "animation-name", "none" if value in ("none", "") else value
    else:
        yield name, value


def _box_sides(name: str, value: str) -> Iterable[tuple[str, str]]:
    parts = _parts(value)
    if name == "overflow":
        yield "overflow-x", parts[0] if parts else value
        yield "overflow-y", parts[-1] if parts else value
        return
    sides = ("top", "right", "bottom", "left")
    fours = {1: [0, 0, 0, 0], 2: [0, 1, 0, 1], 3: [0, 1, 2, 1], 4: [0, 1, 2, 3]}.get(len(parts))
    for side, at in zip(sides, fours or [], strict=False):
        yield (side if name == "inset" else f"{name}-{side}"), parts[at]


def _parts(value: str) -> list[str]:
    """A value's space-separated parts, a function's arguments kept together."""
    parts, depth, current = [], 0, ""
    for char in value:
        depth += (char == "(") - (char == ")")
        if char == " " and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [part for part in [*parts, current] if part]


def _keyword(value: str | None, inherited: str, allowed: tuple[str, ...]) -> str:
    if value in allowed:
        return str(value)
    return "visible" if value in ("initial", "revert") else inherited


def _font_px(value: str | None, parent: Look) -> float:
    from ikigai_web.fetch.reading.cascade import length

    if value is None or value in ("inherit", "unset"):
        return parent.font_px
    named = {"xx-small": 9.0, "x-small": 10.0, "small": 13.0, "medium": 16.0, "large": 18.0,
             "x-large": 24.0, "xx-large": 32.0, "xxx-large": 48.0, "initial": 16.0}  # fmt: skip
    if value in named:
        return named[value]
    if value in ("smaller", "larger"):
        return parent.font_px * (0.83 if value == "smaller" else 1.2)
    found = length(value, em=parent.font_px, percent_of=parent.font_px, rem=parent.root_px)
    return parent.font_px if found is None or found < 0 else found


def _color(value: str | None, inherited: Color | None) -> Color | None:
    """A colour as sRGB and alpha; `inherited` when the value is none this reads."""
    if value is None or value in ("inherit", "unset", "currentcolor"):
        return inherited
    found = _COLORS.get(value, _UNREAD)
    if found is _UNREAD:
        found = _read_color(value)
        if len(_COLORS) < _MAX_CACHED:
            _COLORS[value] = found
    return inherited if found is None else found


_UNREAD: Any = object()


_COLORS: dict[str, Color | None] = {}  # a page names a few colours many times


_MAX_CACHED = 10_000


def _read_color(value: str) -> Color | None:
    if value in _SYSTEM:
        return _SYSTEM[value]
    from tinycss2 import color4

    try:
        parsed = color4.parse_color(value)
        if parsed is None or isinstance(parsed, str):
            return None
        red, green, blue = parsed.to("srgb").coordinates
    except (NotImplementedError, ValueError, TypeError, ZeroDivisionError, OverflowError):
        return None
    return (_unit(red), _unit(green), _unit(blue), _unit(parsed.alpha))


def _unit(number: float) -> float:
    return min(max(float(number), 0.0), 1.0) if math.isfinite(number) else 0.0


def _opacity(values: dict[str, str]) -> float:
    own = _fraction(values.get("opacity", "1"))
    for name, argument in _TRANSFORM.findall(values.get("filter", "")):
        if name == "opacity":
            own *= _fraction(argument or "1")
    return own


def _fraction(value: str) -> float:
    value = value.strip()
    try:
        number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        return 1.0
    return min(max(number, 0.0), 1.0) if math.isfinite(number) else 1.0


def _scale(values: dict[str, str]) -> float:
    """How much the element's transforms shrink it (the smaller axis)."""
    factor = 1.0
    for name, arguments in _TRANSFORM.findall(values.get("transform", "")):
        numbers = [_number(a) for a in re.split(r"[\s,]+", arguments.strip()) if a]
        if name in ("scale", "scale3d") and numbers:
            factor *= min(abs(n) for n in numbers[:2])
        elif name in ("scalex", "scaley") and numbers:
            factor *= abs(numbers[0])
        elif name == "matrix" and len(numbers) == 6:
            a, b, c, d = numbers[:4]
            factor *= min(math.hypot(a, b), math.hypot(c, d))
    scale = [_number(a) for a in values.get("scale", "").split()]
    return factor * (min(abs(n) for n in scale) if scale else 1.0)


def _number(value: str) -> float:
    try:
        number = float(value.rstrip("%")) / (100 if value.endswith("%") else 1)
    except ValueError:
        return 1.0
    return number if math.isfinite(number) else 1.0


def _background(
    element: HtmlElement, values: dict[str, str], parent: Look
) -> tuple[Color | None, Any]:
    """The colour behind the element's text and the element that paints it; the colour is
    None when it cannot be known (an image, a control the browser paints, a translucent layer)."""
    if values.get("background-image", "none") not in ("none", "initial") or element.tag in PAINTED:
        return None, element
    own = _color(values.get("background-color"), None)
    if own is None or own[3] == 0:
        return parent.background, parent.painter
    return (own if own[3] >= 0.95 else None), element


def _moving(values: dict[str, str]) -> bool:
    """Whether an animation, a transition or a transform is set to change how the element
    looks: a transparent or invisible box that moves is an entrance's first frame (faded out
    and shifted down until it scrolls into view), which the page plays as it is read."""
    return any(values.get(name, "none") not in _STILL for name in _ANIMATED)


def style_unseen(look: Look, values: dict[str, str], parent: Look, *, custom: bool) -> str | None:
    """Why the element's styles hide its text, or None. A custom element hidden until its
    script defines it (`:not(:defined)`, or a plain rule) is shown by that script."""
    hidden = values.get("display") == "none" or values.get("content-visibility") == "hidden"
    still = not look.moving
    boxed = (
        ("display", hidden and not custom),
        ("opacity", look.opacity <= _FAINT and still and not custom),
        ("transform", look.scale <= _SMALL),
    )
    why = next((name for name, hides in boxed if hides), None) or _away(values, parent)
    if why is not None:
        return why
    painted = (
        ("visibility", look.visibility != "visible" and still and not custom),
        ("font-size", look.font_px < _READABLE),
        ("color", _unpainted(look)),
    )
    return next((name for name, hides in painted if hides), None)


def _away(values: dict[str, str], parent: Look) -> str | None:
    """Why the element's box shows nothing of what it holds: clipped to nothing, or placed
    off-screen."""
    from ikigai_web.fetch.reading.cascade import VIEWPORT, length

    def size(name: str, of: float = VIEWPORT[0]) -> float | None:
        value = values.get(name)
        return None if value is None else length(value, em=parent.font_px, percent_of=of)

    def offset(name: str) -> float:
        value = values.get(name)
        if value is None or value in ("auto", "0", "initial", "unset"):
            return 0.0
        found = length(value, em=parent.font_px, percent_of=None)
        # An offset this does not read (a percentage) may undo any other: nothing is known.
        return math.nan if found is None else found

    if _collapsed(values, size):
        return "collapsed"
    if values.get("position") in ("absolute", "fixed") and _clipped(values.get("clip", "")):
        return "clip"
    if _clip_path_empty(values.get("clip-path", "")):
        return "clip-path"
    # Offsets in a percentage or a calc() of one are of a box this does not lay out (a
    # full-bleed band's `margin-left: calc(-40% - 2rem)` with its width widened to match).
    moved = values.get("position") in ("absolute", "fixed", "relative", "sticky")
    shift_x, shift_y = _translation(values)
    left = (offset("left") if moved else 0.0) + offset("margin-left") + shift_x
    top = (offset("top") if moved else 0.0) + offset("margin-top") + shift_y
    right = offset("right") if moved else 0.0
    width = size("width")
    back = width is not None and left + width > 0  # a wide box reaches back on screen
    # (A comparison with nan, an offset not known, is false: such a box is not judged.)
    if (left <= -_FAR and not back) or top <= -_FAR or offset("text-indent") <= -_FAR:
        return "off-screen"
    return "off-screen" if right <= -VIEWPORT[0] else None


def _collapsed(values: dict[str, str], size: Any) -> bool:
    """A box of no width or height (or no more) that hides what overflows it, with no
    padding to give it a size (a 0-height box with padding-bottom: 56% keeps a video's ratio).
    A size this does not read (`auto`, `fit-content`) is no size of 0."""
    if not {values.get("overflow-x"), values.get("overflow-y")} & {"hidden", "clip"}:
        return False
    sizes = [size(name) for name in ("width", "height", "max-width", "max-height")]
    closed = any(found is not None and found <= _CLOSED for found in sizes)
    sides = ("top", "bottom", "left", "right")
    return closed and all((size(f"padding-{side}") or 0.0) <= _CLOSED for side in sides)


def _translation(values: dict[str, str]) -> tuple[float, float]:
    """How far the element's transforms and `translate` move it, across and down (px)."""
    from ikigai_web.fetch.reading.cascade import length

    moves: list[tuple[str, list[str]]] = []
    for name, arguments in _TRANSFORM.findall(values.get("transform", "")):
        moves.append((name, [a for a in re.split(r"[\s,]+", arguments.strip()) if a]))
    moves.append(("translate", values.get("translate", "").split()))
    across = down = 0.0
    for name, parts in moves:
        found = [length(p, em=16.0, percent_of=None) or 0.0 for p in parts[:2]]
        if name in ("translate", "translate3d") and found:
            across += found[0]
            down += found[1] if len(found) > 1 else 0.0
        elif name in ("translatex", "translatey") and found:
            across += found[0] if name == "translatex" else 0.0
            down += found[0] if name == "translatey" else 0.0
    return across, down


def _clipped(value: str) -> bool:
    """`clip: rect(top, right, bottom, left)` of no width or height."""
    from ikigai_web.fetch.reading.cascade import length

    match = re.match(r"rect\(([^)]*)\)", value)
    if match is None:
        return False
    parts = [
        length(p, em=16.0, percent_of=None) for p in re.split(r"[\s,]+", match.group(1).strip())
    ]
    if len(parts) != 4 or None in parts:
        return False
    top, right, bottom, left = (p or 0.0 for p in parts)
    return bottom - top <= _CLOSED or right - left <= _CLOSED


def _clip_path_empty(value: str) -> bool:
    """A clip-path that leaves nothing: an inset of half or more from both sides, a circle or
    ellipse of no radius, a polygon of no area."""
    match = _TRANSFORM.match(value.strip())
    if match is None:
        return False
    name, arguments = match.groups()
    if name == "polygon":
        points = [pair.split() for pair in arguments.split(",")]
        xy = [(_length_number(p[-2]), _length_number(p[-1])) for p in points if len(p) >= 2]
        area = sum(
            x1 * y2 - x2 * y1 for (x1, y1), (x2, y2) in zip(xy, xy[1:] + xy[:1], strict=True)
        )
        return bool(xy) and abs(area) < 1e-9
    numbers = [
        _length_number(a) for a in re.split(r"[\s,/]+", arguments.split(" round ")[0].strip()) if a
    ]
    if name in ("circle", "ellipse"):
        return bool(numbers) and numbers[0] == 0
    if name == "inset" and numbers:
        fours = {1: [0, 0, 0, 0], 2: [0, 1, 0, 1], 3: [0, 1, 2, 1]}.get(len(numbers), [0, 1, 2, 3])
        top, right, bottom, left = (numbers[at] for at in fours)
        return top + bottom >= 100 or left + right >= 100
    return False


def _length_number(value: str) -> float:
    match = re.match(r"^-?(?:\d+\.?\d*|\.\d+)", value)
    return float(match.group()) if match else 1.0


def _unpainted(look: Look) -> bool:
    """Whether the text is painted transparent or in its background's colour. Only a colour
    the page sets counts: a browser's default black may be the colour of a style sheet this
    does not read (a linked one) that paints the text light on a dark band."""
    ink = look.fill or look.color
    if ink[3] < _INVISIBLE_INK:
        return True
    background = look.background
    return background is not None and not look.layered and look.inked and _same(ink, background)


def seen_plain(look: Look) -> bool:
    """Whether whatever declares nothing of its own is seen under this look, as most is:
    what it inherits hides nothing, and neither ink HTML may give it (the look's own, a
    link's blue) is lost on the one background that can be behind it (a control the browser
    paints has none known). This holds for all such elements below it too (see `computed`:
    a tag alone changes only the link's colour and a control's background)."""
    if look.opacity <= _FAINT or look.scale <= _SMALL or look.font_px < _READABLE:
        return False
    if look.visibility != "visible":
        return False
    inks = (look.fill,) if look.fill is not None else (look.color, _LINK)
    if any(ink[3] < _INVISIBLE_INK for ink in inks):
        return False
    background = look.background
    if background is None or look.layered or not look.inked:
        return True
    return not any(_same(ink, background) for ink in inks)


def on_picture(element: HtmlElement, look: Look) -> bool:
    """Whether text in its background's colour may stand on a picture beside it, or beside a
    box it is in (a hero image under its heading): then it is seen. Not when it is
    transparent."""
    ink = look.fill or look.color
    if ink[3] < _INVISIBLE_INK:
        return False
    above = element
    while above is not None and above is not look.painter:
        if _beside_picture(above):
            return True
        above = above.getparent()
    return False


def _same(ink: Color, background: Color) -> bool:
    blended = tuple(ink[i] * ink[3] + background[i] * (1 - ink[3]) for i in range(3))
    lighter, darker = sorted((_luminance(blended), _luminance(background[:3])), reverse=True)
    return (lighter + 0.05) / (darker + 0.05) < _SAME


def _luminance(rgb: tuple[float, ...]) -> float:
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def _beside_picture(element: HtmlElement) -> bool:
    parent = element.getparent()
    if parent is None:
        return False
    return any(
        sibling is not element and isinstance(sibling.tag, str)
        and (sibling.tag in MEDIA or next(sibling.iter(*MEDIA), None) is not None)
        for sibling in parent
    )  # fmt: skip
