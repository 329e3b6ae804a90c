"""Keeping secrets out of every output: known credential values and URL query strings."""

from __future__ import annotations

import re

_secrets: set[str] = set()
# A query string can carry a key (Google sends it as `key=`); keep only the path.
_QUERY = re.compile(r"(https?://[^\s?#'\"]*)\?[^\s#'\"]*", re.IGNORECASE)
_SHORTEST_SECRET = 4  # shorter values would blank out ordinary words


def register_secret(value: str) -> None:
    """Remember a credential so `redact` can remove it from any text."""
    if len(value) >= _SHORTEST_SECRET:
        _secrets.add(value)


def redact(text: str) -> str:
    """Text safe to show: registered secrets masked, URL query strings dropped."""
    for secret in sorted(_secrets, key=len, reverse=True):
        text = text.replace(secret, "***")
    return _QUERY.sub(r"\1?…", text)


def excerpt(text: str, most: int = 200) -> str:
    """The start of a provider's text for a message: secrets masked, spaces folded.

    Redacted before the cut: a gateway may echo the request URL, key included, and a cut
    secret would no longer be recognised.
    """
    return " ".join(redact(text).split())[:most]
