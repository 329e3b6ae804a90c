"""What a page says about itself: schema.org types and objects (JSON-LD, microdata), og:type,
and the data a JavaScript app embeds for its first render. Read before scripts are removed.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lxml.html import HtmlElement

_MAX_SCRIPT = 2_000_000  # characters of one JSON script read; a larger one is skipped
_MAX_OBJECTS = 500
_MAX_DEPTH = 12
# What the standard library's parser reads otherwise than orjson did (which the readers of a
# page's JSON were written against): a surrogate, raw or escaped, orjson refuses unless
# paired. Rare enough to hand such text to orjson itself, whose import (uuid, platform) a
# fresh process otherwise does without.
_SURROGATE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")
_INT64 = range(-(2**63), 2**64)  # orjson's integers; beyond them, a float
# Scripts in which apps hand their first render's data to the browser.
_APP_DATA = (
    '//script[@id="__NEXT_DATA__" or @id="__NUXT_DATA__" or @type="application/json"]'
    ' | //script[not(@src)][starts-with(normalize-space(.), "window.__NUXT__")]'
)


class Signals(NamedTuple):
    types: frozenset[str]  # schema.org types, lower-case, from JSON-LD and microdata
    og_type: str  # lower-case, "" when absent; "article" when only article:* properties say so
    objects: tuple[dict[str, Any], ...]  # every JSON-LD object, nested ones included
    app_data: tuple[str, ...]  # raw text of the app-data scripts
    roots: tuple[Any, ...] = ()  # each JSON-LD script's value, as parsed


def read(tree: HtmlElement) -> Signals:
    roots = tuple(_ld_roots(tree))
    objects = tuple(_objects(roots))
    types = {t.lower() for obj in objects for t in _types(obj)}
    for itemtype in tree.xpath("//@itemtype"):
        types.update(word.rstrip("/").rsplit("/", 1)[-1].lower() for word in str(itemtype).split())
    og = str(tree.xpath('string(//meta[@property="og:type"]/@content)')).strip().lower()
    if not og and tree.xpath('//meta[starts-with(@property, "article:")]'):
        og = "article"  # Open Graph's article properties belong to its article type
    apps = tuple(str(s.text) for s in tree.xpath(_APP_DATA) if s.text and len(s.text) < _MAX_SCRIPT)
    return Signals(frozenset(types), og, objects, apps, roots)


def _ld_roots(tree: HtmlElement) -> Iterator[Any]:
    for script in tree.xpath('//script[contains(@type, "ld+json")]'):
        text = script.text or ""
        if len(text) > _MAX_SCRIPT:
            continue
        try:
            yield json_value(text.strip().removesuffix(";"))
        except ValueError:
            continue


def json_value(text: str) -> Any:
    """`text` parsed as orjson.loads parses it; ValueError where orjson refuses it (NaN and
    Infinity, a number beyond a double, nesting over 1,024 levels, a lone surrogate)."""
    import json

    if _SURROGATE.search(text):
        return _orjson_value(text)
    try:
        return json.loads(text, parse_constant=_refused, parse_float=_float, parse_int=_int)
    except RecursionError:  # deeper than this stack allows, which orjson may yet read
        return _orjson_value(text)


def _orjson_value(text: str) -> Any:
    import orjson

    return orjson.loads(text)  # its JSONDecodeError is a ValueError


def _refused(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"beyond a double: {text}")
    return value


def _int(text: str) -> int | float:
    value = int(text)
    return value if value in _INT64 else _float(text)


def _objects(roots: tuple[Any, ...]) -> Iterator[dict[str, Any]]:
    count = 0
    for root in roots:
        for obj in walk(root):
            count += 1
            if count > _MAX_OBJECTS:
                return
            yield obj


def walk(data: Any, depth: int = 0) -> Iterator[dict[str, Any]]:
    """Every dict in a JSON value, outer ones first, to a bounded depth."""
    if depth > _MAX_DEPTH:
        return
    if isinstance(data, dict):
        yield data
        values: Any = data.values()
    elif isinstance(data, list):
        values = data
    else:
        return
    for value in values:
        yield from walk(value, depth + 1)


def _types(obj: dict[str, Any]) -> list[str]:
    kind = obj.get("@type")
    names = kind if isinstance(kind, list) else [kind]
    return [name.rsplit("/", 1)[-1] for name in names if isinstance(name, str)]


def of_type(signals: Signals, *names: str) -> list[dict[str, Any]]:
    """The JSON-LD objects of any of these types (lower-case names)."""
    return [obj for obj in signals.objects if {t.lower() for t in _types(obj)} & set(names)]


def text_of(value: Any) -> str:
    """A JSON-LD value as text: strings as they are, the first usable item of a list."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        return next((text for item in value if (text := text_of(item))), "")
    if isinstance(value, dict):
        return text_of(value.get("name") or value.get("text") or value.get("@value"))
    return ""
