"""Text hygiene for whatever a provider or a page sends: charsets, invisible characters.

Every string a tool prints passes through here on its way out, so a hostile byte sequence
never becomes a crash (a lone surrogate cannot be written as UTF-8) or a trick (a bidi
override that reverses what the reader sees).
"""

from __future__ import annotations

import codecs
import re

# The encodings of the WHATWG Encoding Standard, by Python's codec name: what a browser will
# decode. Anything else a label names (base64, rot13, zlib, idna, utf-7, unicode_escape...)
# is not a text encoding of the web and is treated as an unknown label.
WEB_CODECS = frozenset(
    {
        *("utf-8", "utf-16-le", "utf-16-be", "utf-16", "cp866", "koi8-r", "koi8-u"),
        *(f"iso8859-{n}" for n in (2, 3, 4, 5, 6, 7, 8, 10, 13, 14, 15, 16)),
        *("mac-roman", "mac-cyrillic", "cp874", "gbk", "gb18030", "big5", "euc_jp"),
        *("iso2022_jp", "shift_jis", "cp932", "euc_kr", "utf-8-sig"),
        *("utf-32", "utf-32-le", "utf-32-be"),
        *(f"cp{n}" for n in range(1250, 1259)),
    }
)
# Labels that browsers read as windows-1252, a superset of each, and web labels Python spells
# otherwise.
_AS_1252 = frozenset({"iso-8859-1", "latin-1", "latin1", "us-ascii", "ascii", "iso8859-1"})
_ALIASES = {"windows-874": "cp874", "x-mac-cyrillic": "mac-cyrillic", "x-sjis": "shift_jis"}
# C0 and C1 controls but tab and newline, bidi embeddings, overrides and isolates, and the
# zero-width characters that hide text or split words invisibly.
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def codec(label: str | None) -> str | None:
    """The Python codec for a charset label a browser accepts; None for any other label."""
    if not label:
        return None
    lowered = label.strip().strip("\"'").lower()
    if lowered in _AS_1252:
        return "cp1252"
    try:
        name = codecs.lookup(_ALIASES.get(lowered, lowered)).name
    except LookupError:
        return None
    return name if name in WEB_CODECS else None


def decode(data: bytes, label: str | None = None) -> str:
    """Bytes as text in the labelled charset if a browser would use it, else UTF-8; bad
    bytes become U+FFFD, never an exception."""
    return data.decode(codec(label) or "utf-8", errors="replace")


def visible(text: str) -> str:
    """Without control, bidi-override and zero-width characters."""
    return _INVISIBLE.sub("", text)


def encodable(text: str) -> str:
    """Text that can be written as UTF-8: lone surrogates become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


_HIDDEN_BLOCK = re.compile(
    r"<(script|style|noscript|template|svg)\b.*?(?:</\1\s*>|\Z)|<!--.*?(?:-->|\Z)",
    re.IGNORECASE | re.DOTALL,
)
_TITLE = re.compile(r"<title\b[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]*>")


def html_words(html: str) -> str:
    """An HTML page's title, else its visible text, as one line: what an error page says."""
    import html as entities

    text = _HIDDEN_BLOCK.sub(" ", html)
    title = _TITLE.search(text)
    words = _TAG.sub(" ", title.group(1) if title else text)
    words = " ".join(entities.unescape(words).split())
    if title and not words:
        words = " ".join(entities.unescape(_TAG.sub(" ", text)).split())
    return visible(words)
