"""Text hygiene for whatever a provider or a page sends: charsets, invisible characters.

Every string a tool prints passes through here on its way out, so a hostile byte sequence
never becomes a crash (a lone surrogate cannot be written as UTF-8) or a trick (a bidi
override that reverses what the reader sees).
"""

from __future__ import annotations

import codecs
import re
from typing import Any, AnyStr, cast

# C0 and C1 controls but tab and newline (ESC and CSI start terminal escapes), bidi marks,
# embeddings, overrides and isolates, the zero-width characters that hide text or split words
# invisibly, and the tag characters that carry hidden text. Zero-width (non-)joiners are kept
# only between two non-ASCII characters, where emoji sequences and Indic and Arabic scripts
# need them; next to ASCII they only disguise a word ("pay\u200dpal").
_INVISIBLE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u180e\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]"
    "|(?<![^\x00-\x7f])[\u200c\u200d]|[\u200c\u200d](?![^\x00-\x7f])"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


class _Lazy:
    """A pattern compiled when it is first used (see `lazy`)."""

    __slots__ = ("_compiled", "_source")

    def __init__(self, source: str | bytes, flags: int) -> None:
        self._source = (source, flags)
        self._compiled: re.Pattern[Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._source)
        return getattr(self._compiled, name)


def reaches(text: str, first: str) -> bool:
    """Whether the text holds a character at or past `first`: a guard in front of a pattern
    of wide Unicode ranges (CJK, Thai...), which costs `re` milliseconds to compile in every
    process, on the many texts that cannot match it."""
    return bool(text) and max(text) >= first


def lazy(source: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """A module's pattern that most calls never use, compiled when one does: compiling costs
    0.1 to 3 ms a pattern, which every call of a tool would pay at import."""
    return cast("re.Pattern[AnyStr]", _Lazy(source, flags))


# A terminal's escape sequences (ECMA-48), removed whole before the controls that start them:
# with only its ESC gone, "ESC[31m" leaves "[31m" in the text (and "\[31m" in markdown). A
# control sequence (ESC [ or CSI, parameters, intermediates, a final byte); a control string
# (OSC, DCS, SOS, PM, APC) up to BEL or ST, within a bound (without one, only its introducer
# goes; it is scanned once, possessively, to the next control that could start or end one,
# so time stays linear); an escape with intermediates ("ESC ( B"). An ESC before a lone letter
# goes alone: it may just as well start the page's next word. An 8-bit control (CSI, OSC...)
# starts a sequence only where no byte of a character encoded twice precedes it: UTF-8 read
# as Latin-1 holds one in every curly quote (U+201D is E2 80 9D, read as "â", U+0080, U+009D)
# and in letters such as "ě" (C4 9B), and the page's words follow it.
_TWICE = "(?<![\xc2-\xf4\x80-\xbf])"
_ESCAPE_SEQUENCE = lazy(
    f"(?:\x1b\\[|{_TWICE}\x9b)[\x30-\x3f]{{0,64}}[\x20-\x2f]{{0,8}}[\x40-\x7e]"
    f"|(?:\x1b[\\]PX^_]|{_TWICE}[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x90\x98\x9b-\x9f]{{0,4096}}+"
    "(?:\x07|\x1b\\\\|\x9c)"
    "|\x1b[\x21-\x2f]{1,2}[\x30-\x7e]"
)
_ESCAPE_STARTS = ("\x1b", "\x9b", "\x90", "\x98", "\x9d", "\x9e", "\x9f")


def codec(label: str | None) -> str | None:
    """The Python codec for a charset label as a browser reads it, or None when unknown.

    Only the WHATWG Encoding Standard's labels count: Python's own codec names also reach
    base64, rot13, zlib, idna, utf-7 or unicode_escape, which crash or make lone surrogates.
    """
    if not label:
        return None
    import webencodings  # only a label needs its table

    found = webencodings.lookup(label.strip().strip("\"'"))
    return python_codec(found.codec_info.name) if found else None


def python_codec(name: str) -> str | None:
    try:
        return codecs.lookup(name).name
    except LookupError:
        return None  # `replacement` and `x-user-defined` have no Python codec: unknown


def header_charset(header: str | None) -> str | None:
    """The charset parameter of a Content-Type header."""
    for part in (header or "").split(";")[1:]:
        name, _, value = part.partition("=")
        if name.strip().lower() == "charset":
            return value.strip().strip("\"'") or None
    return None


def decode(data: bytes, label: str | None = None) -> str:
    """Bytes as text in the labelled charset if a browser would use it, else UTF-8; bad
    bytes become U+FFFD, never an exception."""
    return data.decode(codec(label) or "utf-8", errors="replace")


def visible(text: str) -> str:
    """Without terminal escape sequences (see without_escapes), control, bidi, zero-width and
    tag characters (see _INVISIBLE): what every string a tool prints is reduced to."""
    return _INVISIBLE.sub("", without_escapes(text))


def without_escapes(text: str) -> str:
    """`text` without a terminal's escape sequences, whole (see _ESCAPE_SEQUENCE)."""
    if not any(start in text for start in _ESCAPE_STARTS):  # nearly every text: a fast no
        return text
    return _ESCAPE_SEQUENCE.sub("", text)


def encodable(text: str) -> str:
    """Text that can be written as UTF-8: lone surrogates become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


def compact(value: Any, *, sort_keys: bool = False) -> bytes:
    """`value` as compact UTF-8 JSON: what every tool prints and the cache stores.

    The standard library's encoder, not orjson: a search is a fresh process, and orjson's
    import (uuid, platform) costs more than writing a few kB of JSON ever does.
    """
    import json

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=sort_keys)
    return text.encode()


def encodable_json(value: dict[str, Any] | list[Any]) -> None:
    """Make every string of parsed JSON, keys included, `encodable`, in place.

    Without recursion: JSON the parser accepted can be nested nearly as deep as the
    interpreter's recursion limit, and a recursive walk on top of the caller's stack could
    pass it.
    """
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in list(node):
                item = node.pop(key) if encodable(key) != key else node[key]
                node[encodable(key)] = encodable(item) if isinstance(item, str) else item
                stack.append(item)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                node[index] = encodable(item) if isinstance(item, str) else item
                stack.append(item)


_HIDDEN_BLOCK = lazy(
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


def seconds(value: float) -> str:
    """A duration as messages print it: to a tenth of a second, "24.8 s", "25 s"."""
    return f"{round(value, 1):g} s"
