"""What pages that are walls say of themselves, in the languages most used on the web: the
phrases of wall_phrases.json, read when the first short page needs them, and how a page's
text is matched against them.

Wording is the detector's last signal (walls.py): the status, the structure and the markup
of known platforms come first. The phrases are plain lower-case text, so that adding a
language is adding data; each is looked up only when the first four letters of its first
word are among the page's words (or, in the scripts written without spaces, by substring),
which keeps a short page's thousands of phrases to a few hundred lookups.
"""

from __future__ import annotations

import re
from functools import cache
from typing import NamedTuple

from ikigai_web.common.text import lazy, reaches

_DATA = "wall_phrases.json"
_KEY = 4  # letters of a word a phrase is filed under
# A word's letters: \w leaves out the vowel signs and other combining marks of the Indic
# scripts, Thai, Hebrew and Arabic points (Python's re has no \p{M}), which would cut a word
# of those scripts at each of them and strip a heading's last mark.
_MARKS = (
    "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
    "\u0900-\u0963\u0966-\u0dff\u0e31-\u0e3a\u0e47-\u0e4e\u0eb1-\u0ebc\u0ec8-\u0ecd"
    "\u102b-\u103e\u1056-\u1059\u17b4-\u17d3"
)
_WORD = re.compile(f"[\\w{_MARKS}]+")
_CLITIC = lazy(r"[\u0621-\u064a\u05d0-\u05ea]{3}")  # a word of Arabic's or Hebrew's letters
# Scripts written without spaces between words: their phrases are found by substring.
_UNSPACED = lazy(r"[\u0e00-\u0e7f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_FIRST_UNSPACED = "\u0e00"
_EDGES = re.compile(f"^[^\\w{_MARKS}]+|[^\\w{_MARKS}]+$|^_+|_+$")
_MORE_WORDS = 3  # a heading may run this many words past its phrase ("Sign in to Example")
_MORE_CHARS = 8  # ...or this many characters, in a script without spaces
_LONGEST = 200  # characters: no heading phrase is this long
_SHORTEST = 3  # characters of a phrase without spaces that a heading may run past


class Phrases(NamedTuple):
    """One list of phrases, filed for fast lookup."""

    keyed: dict[str, tuple[str, ...]]  # by the first _KEY letters of their first word
    unspaced: tuple[str, ...]  # found by substring


class Kind(NamedTuple):
    heading: frozenset[str]
    strong: Phrases
    weak: Phrases


class Said(NamedTuple):
    """A page's text as the phrases are matched against it."""

    text: str  # lower case, white space squashed, padded with a space at each end
    keys: frozenset[str]  # the first _KEY letters of each of its words


def said(text: str) -> Said:
    """`text` prepared for matching (see Said)."""
    low = " ".join(normal(text).split())
    words = _WORD.findall(low)
    keys = {word[:_KEY] for word in words}
    # Arabic and Hebrew write "and", "with", "for", "the" as a letter or two joined to the
    # word after them ("بأعمال صيانة", "with maintenance works"): a phrase may start past them.
    keys.update(word[cut : cut + _KEY] for word in words if _CLITIC.match(word) for cut in (1, 2))
    return Said(f" {low} ", frozenset(keys))


def normal(text: str) -> str:
    """Lower case, without the dot Turkish İ leaves (İ lowers to i and a combining dot), with
    typographic apostrophes and Romanian's comma-below letters as the data writes them."""
    return text.lower().translate(_NORMAL)


# Romanian's s and t with a comma below are written with a cedilla as often (the older
# encodings had only those): both are read as the cedilla, as the data writes them.
_NORMAL = str.maketrans(
    {
        "\u0307": None,
        "\u2019": "'",
        "\u02bc": "'",
        "\u2018": "'",
        "\u0219": "\u015f",
        "\u021b": "\u0163",
    }
)


@cache
def _data() -> dict[str, object]:
    import json
    from pathlib import Path

    data: dict[str, object] = json.loads(Path(__file__).with_name(_DATA).read_text("utf-8"))
    return data


@cache
def kind(name: str) -> Kind:
    """The phrases of one kind of wall, every language together."""
    lists = _data()[name]
    assert isinstance(lists, dict)
    return Kind(frozenset(_flat(lists["heading"])), _filed(lists["strong"]), _filed(lists["weak"]))


@cache
def listed(name: str) -> Phrases:
    """A list that is not a kind's (paywall prompts, requests for JavaScript), filed."""
    found = _data()[name]
    assert isinstance(found, dict)
    return _filed(found)


def _flat(by_language: dict[str, list[str]]) -> list[str]:
    return [phrase for phrases in by_language.values() for phrase in phrases]


def _filed(by_language: dict[str, list[str]]) -> Phrases:
    keyed: dict[str, list[str]] = {}
    unspaced = []
    for phrase in _flat(by_language):
        first = _WORD.search(phrase)
        if first is None or (reaches(first[0], _FIRST_UNSPACED) and _UNSPACED.search(first[0])):
            unspaced.append(phrase)
        else:
            keyed.setdefault(first[0][:_KEY], []).append(phrase)
    return Phrases({k: tuple(v) for k, v in keyed.items()}, tuple(unspaced))


def found(phrases: Phrases, text: Said) -> str | None:
    """The first phrase of the list that the text holds, if any."""
    for key in text.keys & phrases.keyed.keys():
        for phrase in phrases.keyed[key]:
            if phrase in text.text:
                return phrase
    return next((phrase for phrase in phrases.unspaced if phrase in text.text), None)


def all_found(phrases: Phrases, text: Said) -> list[str]:
    """Every phrase of the list that the text holds."""
    hits = [p for k in text.keys & phrases.keyed.keys() for p in phrases.keyed[k] if p in text.text]
    return hits + [phrase for phrase in phrases.unspaced if phrase in text.text]


def is_phrase(phrases: Phrases, segment: str) -> bool:
    """Whether a title segment or heading is one of the phrases, word for word."""
    text = _EDGES.sub("", " ".join(normal(segment).split()))
    first = _WORD.search(text)
    if first is None:
        return False
    return text in phrases.keyed.get(first[0][:_KEY], ()) or text in phrases.unspaced


def is_heading(names: frozenset[str], segment: str) -> bool:
    """Whether a title segment or heading is one of the phrases, or one of them with a few
    words after or before it ("Sign in to Example", "404 Not Found", "Example Security
    Check")."""
    text = _EDGES.sub("", " ".join(normal(segment).split()))
    if not text or len(text) > _LONGEST:
        return False
    if text in names:
        return True
    # A phrase of one word ("Error", "Oops") names a heading only when it is the heading.
    words = text.split(" ")
    for cut in range(max(2, len(words) - _MORE_WORDS), len(words)):
        if " ".join(words[:cut]) in names or " ".join(words[len(words) - cut :]) in names:
            return True
    # A brand or a word more before or after the phrase.
    if reaches(text, _FIRST_UNSPACED) and _UNSPACED.search(text):
        for cut in range(max(_SHORTEST, len(text) - _MORE_CHARS), len(text)):
            if text[:cut] in names or text[len(text) - cut :] in names:
                return True
    return False
