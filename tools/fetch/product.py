"""A product page: what its schema.org Product says that the visible page leaves out."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tools.fetch.signals import Signals

_WORD = re.compile(r"\w+")
_MISSING = 0.5  # a text counts as shown when over half of its words are on the page already


def with_structured_data(markdown: str, signals: Signals) -> str:
    """The markdown, followed by the product's description and properties where the page's
    HTML does not show them (apps often render these from data after load)."""
    from tools.fetch.signals import of_type

    shown = set(_WORD.findall(markdown.lower()))
    extra: list[str] = []
    for product in of_type(signals, "product", "productgroup"):
        extra += [text for text in _texts(product) if not _is_shown(text, shown)]
        shown.update(_WORD.findall(" ".join(extra).lower()))
    return "\n\n".join([markdown, *extra]) if extra else markdown


def _texts(product: dict[str, Any]) -> list[str]:
    from tools.fetch.signals import text_of

    texts = [text_of(product.get("description"))]
    properties = product.get("additionalProperty")
    if isinstance(properties, list):
        rows = [_property(item) for item in properties if isinstance(item, dict)]
        texts.append("\n".join(f"- {row}" for row in rows if row))
    return [text for text in texts if text]


def _property(item: dict[str, Any]) -> str:
    from tools.fetch.signals import text_of

    name, value = text_of(item.get("name")), text_of(item.get("value"))
    return f"{name}: {value}" if name and value else ""


def _is_shown(text: str, shown: set[str]) -> bool:
    words = _WORD.findall(text.lower())
    return not words or sum(word in shown for word in words) > _MISSING * len(words)
