"""The text an app shell carries in its data rather than in its HTML.

Pages rendered by JavaScript often embed the data of their first render (`__NEXT_DATA__`,
`__NUXT__`, other JSON scripts) and describe themselves in JSON-LD (`articleBody`, the `text`
of answers, `description`). When the HTML shows nothing, the prose found there is the content:
strings of several words, in document order, each once.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.signals import Signals

_MIN_WORDS = 8  # shorter strings are labels, ids and settings more often than prose
_MAX_CHARS = 1_000_000  # the most text taken from embedded data
_MAX_DEPTH = 40
_LD_KEYS = ("articleBody", "text", "description", "reviewBody")
_MARKUP = re.compile(r"<(?:p|div|br|li|h[1-6]|ul|ol|table)\b", re.IGNORECASE)
_NOT_PROSE = re.compile(r"^(?:https?:|/|\{|\[|data:)")


def embedded_markdown(signals: Signals, *, include_links: bool) -> str:
    """Markdown of the prose in the page's JSON-LD and app data; "" when there is none."""
    from ikigai_web.fetch.reading.markdown import html_markdown
    from ikigai_web.fetch.reading.signals import json_value

    texts = list(_ld_texts(signals))
    for script in signals.app_data:
        data = script.strip().removeprefix("window.__NUXT__=").removesuffix(";")
        try:
            texts += _strings(json_value(data), 0)
        except ValueError:
            continue
    blocks: list[str] = []
    seen: set[str] = set()
    size = 0
    for text in texts:
        if text in seen or size > _MAX_CHARS:
            continue
        seen.add(text)
        size += len(text)
        markup = _MARKUP.search(text)
        blocks.append(html_markdown(text, include_links=include_links) if markup else text)
    return "\n\n".join(blocks)


def _ld_texts(signals: Signals) -> Iterator[str]:
    for obj in signals.objects:
        for key in _LD_KEYS:
            value = obj.get(key)
            if isinstance(value, str) and _is_prose(value):
                yield value.strip()


def _strings(value: Any, depth: int) -> list[str]:
    """The prose strings of a JSON value, in order, to a bounded depth."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, str):
        return [value.strip()] if _is_prose(value) else []
    items = value.values() if isinstance(value, dict) else value
    if not isinstance(items, list) and not isinstance(value, dict):
        return []
    return [text for item in items for text in _strings(item, depth + 1)]


def _is_prose(text: str) -> bool:
    stripped = text.strip()
    return len(stripped.split()) >= _MIN_WORDS and not _NOT_PROSE.match(stripped)
