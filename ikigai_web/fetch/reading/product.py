"""A product page: what its schema.org Product says that the visible page leaves out, and
the facts a buyer looks up (brand, codes, rating, price, availability) as the answer's
`product`."""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikigai_web.fetch.reading.signals import Signals

_WORD = re.compile(r"\w+")
_MISSING = 0.5  # a text counts as shown when over half of its words are on the page already
# The product's codes, by the label a shop gives them.
_CODES = (
    ("SKU", ("sku",)),
    ("MPN", ("mpn",)),
    ("GTIN", ("gtin", "gtin13", "gtin12", "gtin14", "gtin8")),
)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def with_structured_data(markdown: str, signals: Signals) -> str:
    """The markdown, followed by the product's description and properties where the page's
    HTML does not show them (apps often render these from data after load)."""
    from ikigai_web.fetch.reading.signals import of_type

    shown = set(_WORD.findall(markdown.lower()))
    extra: list[str] = []
    for product in of_type(signals, "product", "productgroup"):
        extra += [text for text in _texts(product) if not _is_shown(text, shown)]
        shown.update(_WORD.findall(" ".join(extra).lower()))
    return "\n\n".join([markdown, *extra]) if extra else markdown


def _texts(product: dict[str, Any]) -> list[str]:
    from ikigai_web.fetch.reading.signals import text_of

    texts = [text_of(product.get("description"))]
    properties = product.get("additionalProperty")
    if isinstance(properties, list):
        rows = [_property(item) for item in properties if isinstance(item, dict)]
        texts.append("\n".join(f"- {row}" for row in rows if row))
    return [text for text in texts if text]


def _property(item: dict[str, Any]) -> str:
    from ikigai_web.fetch.reading.signals import text_of

    name, value = text_of(item.get("name")), text_of(item.get("value"))
    return f"{name}: {value}" if name and value else ""


def _is_shown(text: str, shown: set[str]) -> bool:
    words = _WORD.findall(text.lower())
    return not words or sum(word in shown for word in words) > _MISSING * len(words)


def facts(signals: Signals) -> str | None:
    """What the page's own product (its first, outermost) declares that a buyer looks up:
    "Brand: Northpeak; SKU: NP-TB2; Rating: 4.6 out of 5 (128 reviews); Price: 149.00 USD;
    Availability: in stock", those it gives; None when it gives none."""
    from ikigai_web.fetch.reading.signals import of_type, text_of

    products = of_type(signals, "product", "productgroup")
    if not products:
        return None
    product = products[0]
    found = [("Brand", text_of(product.get("brand")))]
    found += [(label, _code(product, keys)) for label, keys in _CODES]
    found += [("Rating", _rating(product.get("aggregateRating"))), *_offer(product.get("offers"))]
    return "; ".join(f"{label}: {value}" for label, value in found if value) or None


def _code(product: dict[str, Any], keys: tuple[str, ...]) -> str:
    return next((text for key in keys if (text := _scalar(product.get(key)))), "")


def _scalar(value: Any) -> str:
    """A code or a number as text: JSON-LD writes either as a string or as a number."""
    if isinstance(value, bool):
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, int):
        return str(value)
    return value.strip() if isinstance(value, str) else ""


def _rating(rating: Any) -> str:
    """An AggregateRating as a person reads it: "4.6 out of 5 (128 reviews)"."""
    value = _number(rating.get("ratingValue")) if isinstance(rating, dict) else ""
    if not value:
        return ""
    text = f"{value} out of {_number(rating.get('bestRating')) or '5'}"
    for key, noun in (("reviewCount", "reviews"), ("ratingCount", "ratings")):
        if count := _scalar(rating.get(key)):
            return f"{text} ({count} {noun})"
    return text


def _number(value: Any) -> str:
    """A rating as a person reads it: one decimal at most (4.7263985 is 4.7)."""
    try:
        number = round(float(_scalar(value).replace(",", ".")), 1)  # "4,6" in some locales
    except ValueError:
        return ""
    return f"{number:g}" if math.isfinite(number) else ""


def _offer(offers: Any) -> list[tuple[str, str]]:
    """The price (149.00 USD, or 20 to 35 EUR for a range) and the availability (in stock)
    of the product's offer, or of the first of its offers."""
    if isinstance(offers, list):
        offers = next((item for item in offers if isinstance(item, dict)), None)
    if not isinstance(offers, dict):
        return []
    low, high = _scalar(offers.get("lowPrice")), _scalar(offers.get("highPrice"))
    price = _scalar(offers.get("price")) or (f"{low} to {high}" if low and high else low)
    currency = _scalar(offers.get("priceCurrency"))
    # https://schema.org/InStock, or InStock alone
    name = _scalar(offers.get("availability")).rstrip("/").rsplit("/", 1)[-1]
    return [
        ("Price", f"{price} {currency}".strip() if price else ""),
        ("Availability", _CAMEL.sub(" ", name).lower()),
    ]
