"""The passages of a page that answer a query, best first: web-fetch's `query`.

A pure function of the page's lines, run after the page is read (and cached) whole. The
markdown is cut into blocks, each a whole paragraph, list, table or code block, with the
headings above it and, in a document, its page; a list or table too long to be one passage
is cut between its lines. Blocks are ranked lexically, with no model:

- BM25 over word forms: words are folded (NFKC, case) and stemmed with the Snowball stemmer
  of the text's language, chosen by its script and, for Latin script, by which stemmer
  conflates the query with the page best; scripts written without spaces (Chinese,
  Japanese, Thai, Lao, Khmer, Burmese) are read as overlapping character pairs;
- a bonus for the query's word pairs found side by side (phrases), and one for the query's
  words found close together (the densest window);
- the heading path as context: its words count for the block, at a lower weight;
- near-duplicate blocks (most of their words shared with one ranked higher) folded away.

The best blocks that fit the size asked for are returned in rank order. A best block larger
than the whole size gives its best window of sentences instead.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections import Counter
from itertools import pairwise
from operator import add
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Sequence

# A list or table longer than this is cut between lines into blocks of about this size.
PIECE_CHARS = 1500
MAX_HEADING = 200  # characters of a heading shown
K1, B = 1.2, 0.75  # BM25's term saturation and length normalisation
CONTEXT_WEIGHT = 0.4  # a heading's word counts this much for the blocks under it
PHRASE_WEIGHT = 0.5  # of a pair's idf, for each query word pair found side by side
PROXIMITY_WEIGHT = 0.5  # of the idf in the densest window, beyond the best single word
WINDOW = 12  # words: how close query words must be to count as together
DUPLICATE = 0.8  # a block sharing this much of its words with a better one is folded
_MIN_DUPLICATE_TERMS = 6
MAX_PASSED = 8  # blocks too large, in a row, after which no smaller one is looked for
RESCORED = 40  # blocks, the best by BM25, that phrases and proximity may reorder

_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")  # "# C#" keeps its "#"
_MARKER = re.compile(r"^\[(?:Page|Slide) (\d+) of \d+\]$")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,9}[.)])\s")
_TABLE_ROW = re.compile(r"^\s*\|")
# Letters, digits and _ with their combining marks (Python's \w leaves out the vowel signs
# of Indic and Southeast Asian scripts, which would cut their words apart); one class: the
# fastest to scan.
_MARKS = "\u0300-\u036f\u0483-\u0489\u0591-\u05c7\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
_INDIC = "\u0900-\u0dff"
_SOUTHEAST = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"  # Thai, Lao, Burmese, Khmer
_WORD = re.compile(rf"[\w{_MARKS}{_INDIC}{_SOUTHEAST}]+")
# Scripts written without spaces between words: read as character pairs.
_UNSPACED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff]"
)
_SENTENCE_END = re.compile("(?<=[.!?\u061f\u0964\u3002\uff01\uff1f])\\s+|(?<=[\u3002\uff01\uff1f])")
# Snowball stemmers by script; Latin script has several, chosen by the text itself.
_BY_SCRIPT = (
    (re.compile("[\u0400-\u04ff]"), "russian"),
    (re.compile("[\u0370-\u03ff\u1f00-\u1fff]"), "greek"),
    (re.compile("[\u0600-\u06ff]"), "arabic"),
    (re.compile("[\u0900-\u097f]"), "hindi"),
)
_LATIN = (
    "english", "spanish", "german", "french", "portuguese", "italian", "dutch", "turkish",
    "romanian", "indonesian", "swedish", "danish", "norwegian", "finnish", "hungarian",
    "polish", "czech", "catalan",
)  # fmt: skip
_PREFIX = 3  # letters a word and another form of it are taken to share


class Block(NamedTuple):
    """A whole paragraph, list, table or code block of the page, or a piece of a long one."""

    first: int  # its first line, 1-based, as `offset` counts
    last: int
    text: str
    headings: tuple[str, ...]  # the headings above it, outermost first
    page: int | None  # a document's page (or slide) it is on


class Heading(NamedTuple):
    line: int
    level: int
    text: str


class Passage(NamedTuple):
    first: int
    last: int
    text: str
    headings: tuple[str, ...]
    page: int | None


def split_blocks(lines: Sequence[str], number: int = 1) -> tuple[list[Block], list[Heading]]:
    """The page's blocks and its headings; `lines` as web-fetch cuts them, the first
    numbered `number`."""
    blocks: list[Block] = []
    headings: list[Heading] = []
    path: list[tuple[int, str]] = []
    page: int | None = None
    start, fenced = -1, False

    def close(end: int) -> None:
        if start >= 0:
            context = tuple(text for _, text in path)
            blocks.extend(_pieces(lines, (start, end), context, page, number))

    for index, line in enumerate(lines):
        if _FENCE.match(line):
            start = index if start < 0 else start
            fenced = not fenced
            continue
        if fenced:
            continue
        heading, marker = _HEADING.match(line), _MARKER.match(line.strip())
        if (
            heading
            or marker
            or not line.strip()
            or (start >= 0 and _kind(line) != _kind(lines[start]))
        ):
            close(index)
            start = -1
        if marker:
            page = int(marker.group(1))
        elif heading:
            level, text = len(heading.group(1)), _plain(heading.group(2))[:MAX_HEADING]
            path = [*(h for h in path if h[0] < level), (level, text)]
            headings.append(Heading(index + number, level, text))
        elif line.strip() and start < 0:
            start = index
    close(len(lines))
    return blocks, headings


def _kind(line: str) -> str:
    """What a line is part of: a table, a list, or prose; a block holds one kind."""
    if _TABLE_ROW.match(line):
        return "table"
    return "list" if _LIST_ITEM.match(line) or line[:1] in (" ", "\t") else "prose"


def _pieces(
    lines: Sequence[str],
    span: tuple[int, int],
    headings: tuple[str, ...],
    page: int | None,
    number: int,
) -> Iterable[Block]:
    """Lines of `span` as one block, or in pieces of about PIECE_CHARS cut between lines (a
    table's later pieces each under its header rows)."""
    start, end = span
    while end > start and not lines[end - 1].strip():
        end -= 1
    header = list(lines[start : start + 2]) if _TABLE_ROW.match(lines[start]) else []
    first, size = start, 0
    for index in range(start, end):
        size += len(lines[index]) + 1
        if size > PIECE_CHARS and index > first:
            yield _block(
                lines[first:index], first + number, headings, page, header * (first > start)
            )
            first, size = index, len(lines[index]) + 1
    yield _block(lines[first:end], first + number, headings, page, header * (first > start))


def _block(
    part: Sequence[str],
    first: int,
    headings: tuple[str, ...],
    page: int | None,
    header: list[str],
) -> Block:
    return Block(first, first + len(part) - 1, "\n".join([*header, *part]), headings, page)


def _plain(text: str) -> str:
    """A heading as words: links, emphasis and escapes of its markdown taken out."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return " ".join(re.sub(r"[*_`\\]", "", text).split())


# --- words ----------------------------------------------------------------------------------

_STEMMERS = threading.local()  # language -> a stemmer of this thread's


def _stemmer(language: str) -> Callable[[list[str]], list[str]]:
    """The stemmer of `language`, one a thread: PyStemmer's must not be called from two
    threads at once, and a search that reads ranks its pages on threads of their own."""
    import Stemmer

    made: dict[str, Callable[[list[str]], list[str]]] = _STEMMERS.__dict__
    if language not in made:
        made[language] = Stemmer.Stemmer(language).stemWords
    return made[language]


def folded_words(text: str) -> list[str]:
    """The text's words, folded (NFKC, case); a run of an unspaced script is kept whole
    here and read as character pairs by `index_terms`."""
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def choose_language(query_words: Sequence[str], vocabulary: set[str]) -> str | None:
    """The Snowball stemmer for the query's language: by script, else (Latin script) the one
    that maps the most query words onto other forms of them on the page; None for none."""
    spelled = "".join(query_words)
    for script, language in _BY_SCRIPT:
        if script.search(spelled):
            return language
    if not spelled or _UNSPACED.search(spelled) or not _is_latin(spelled):
        return None
    wanted = {w for w in query_words if len(w) > _PREFIX and not w.isdigit()}
    starts = {w[:_PREFIX] for w in wanted}
    # Only the page's words that start as a query word does can be another form of it.
    near = [w for w in vocabulary if w[:_PREFIX] in starts and w not in wanted]
    best, best_hits = "english", 0
    for language in _LATIN:
        stem = _stemmer(language)
        forms = set(stem(near))
        hits = sum(s in forms for s in stem(sorted(wanted)))
        if hits > best_hits:
            best, best_hits = language, hits
    return best


def _is_latin(text: str) -> bool:
    return all(c.isascii() or "LATIN" in unicodedata.name(c, "") for c in text if not c.isdigit())


def index_terms(found: list[str], language: str | None) -> list[str]:
    """Index terms of words: stems, or character pairs for an unspaced script."""
    stem = _stemmer(language) if language else list
    if not _UNSPACED.search("".join(found)):
        return stem(found)
    out: list[str] = []
    for word in found:
        if _UNSPACED.search(word):
            out.extend(map(add, word, word[1:]) if len(word) > 1 else (word,))
        else:
            out.extend(stem([word]))
    return out


# --- ranking --------------------------------------------------------------------------------


class Ranked(NamedTuple):
    score: float
    block: Block


def rank_blocks(blocks: Sequence[Block], query: str) -> Iterator[Ranked]:
    """Blocks that match the query, best first; near duplicates of a better one folded (as
    they are read: a caller takes only as many as it needs)."""
    query_words = folded_words(query)
    block_words = [folded_words(b.text) for b in blocks]
    language = choose_language(query_words, set().union(*block_words))
    wanted = index_terms(query_words, language)
    if not wanted or not blocks:
        return iter(())
    body = [index_terms(ws, language) for ws in block_words]
    context = _context_terms(blocks, language)
    idf = _idf(set(wanted), body, context)
    mean = sum(map(len, body)) / len(body) or 1.0
    weights = Counter(wanted)
    scored = [
        (_bm25(these, around, weights, idf, mean), block, these)
        for block, these, around in zip(blocks, body, context, strict=True)
    ]
    scored = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1].first))
    # The bonuses reorder the best; a block far down is not worth their time.
    best = [(score + _phrases(these, wanted, idf) + _proximity(these, weights, idf), block, these)
            for score, block, these in scored[:RESCORED]]  # fmt: skip
    best.sort(key=lambda s: (-s[0], s[1].first))
    return _folded(best + scored[RESCORED:])


def _context_terms(blocks: Sequence[Block], language: str | None) -> list[Counter[str]]:
    memo: dict[tuple[str, ...], Counter[str]] = {}
    out = []
    for block in blocks:
        if block.headings not in memo:
            memo[block.headings] = Counter(
                index_terms(folded_words(" ".join(block.headings)), language)
            )
        out.append(memo[block.headings])
    return out


def _idf(
    wanted: set[str], body: Sequence[Sequence[str]], context: Sequence[Counter[str]]
) -> dict[str, float]:
    count = len(body)
    having = Counter(
        t
        for these, around in zip(body, context, strict=True)
        for t in wanted & ({*these} | {*around})
    )
    return {t: math.log(1 + (count - having[t] + 0.5) / (having[t] + 0.5)) for t in wanted}


def _bm25(
    these: Sequence[str],
    around: Counter[str],
    weights: Counter[str],
    idf: dict[str, float],
    mean: float,
) -> float:
    found = Counter(t for t in these if t in weights)
    norm = K1 * (1 - B + B * len(these) / mean)
    score = 0.0
    for term, times in weights.items():
        tf = found[term] + CONTEXT_WEIGHT * min(around[term], 1)
        if tf:
            score += times * idf[term] * tf * (K1 + 1) / (tf + norm)
    return score


def _phrases(these: Sequence[str], wanted: Sequence[str], idf: dict[str, float]) -> float:
    """For each pair of query words side by side in the query found side by side here."""
    pairs = {(a, b) for a, b in pairwise(wanted) if a != b}
    if not pairs:
        return 0.0
    seen = set(pairwise(these)) & pairs
    return PHRASE_WEIGHT * sum(min(idf[a], idf[b]) for a, b in seen)


def _proximity(these: Sequence[str], weights: Counter[str], idf: dict[str, float]) -> float:
    """The idf of distinct query words in the densest window of WINDOW words, beyond the
    best single one: words of the question that stand together are its answer's place."""
    hits = [(i, t) for i, t in enumerate(these) if t in weights]
    best = 0.0
    inside: dict[str, int] = {}
    total = 0.0  # the idf of the distinct words inside
    left = 0
    for position, term in hits:
        if term not in inside:
            total += idf[term]
        inside[term] = inside.get(term, 0) + 1
        while position - hits[left][0] >= WINDOW:
            gone = hits[left][1]
            inside[gone] -= 1
            if not inside[gone]:
                del inside[gone]
                total -= idf[gone]
            left += 1
        if total > best and len(inside) > 1:
            best = max(best, total - max(idf[t] for t in inside))
    return PROXIMITY_WEIGHT * best


def _folded(scored: list[tuple[float, Block, list[str]]]) -> Iterator[Ranked]:
    kept: list[set[str]] = []
    for score, block, these in scored:
        vocabulary = set(these)
        if len(vocabulary) >= _MIN_DUPLICATE_TERMS and any(
            len(vocabulary & other) >= DUPLICATE * len(vocabulary) for other in kept
        ):
            continue
        kept.append(vocabulary)
        yield Ranked(score, block)


# --- choosing what fits ---------------------------------------------------------------------


def passage_heading(passage: Passage | Block) -> str:
    """The line that heads a passage in the content: where it is, and under which headings."""
    span = f"{passage.first}-{passage.last}" if passage.last > passage.first else passage.first
    where = f"ines {span}" if passage.last > passage.first else f"ine {span}"
    where = f"Page {passage.page}, l{where}" if passage.page is not None else f"L{where}"
    path = " > ".join(passage.headings)
    return f"[{where}{': ' + path if path else ''}]"


def render_passages(passages: Sequence[Passage]) -> str:
    """The passages as the answer's content: each under its label, blank lines between."""
    return "\n\n".join(f"{passage_heading(p)}\n{p.text}" for p in passages)


class Room(NamedTuple):
    """What the passages may take, their labels and the blank lines between them included:
    `chars` characters, and `units` as `measure` counts them (additive over pieces of text,
    as the bytes of a JSON string are)."""

    chars: int
    units: int = 1 << 62
    measure: Callable[[str], int] = len

    def cost(self, text: str) -> tuple[int, int]:
        return len(text), self.measure(text)

    def left(self, used: tuple[int, int]) -> Room:
        return self._replace(chars=self.chars - used[0], units=self.units - used[1])

    def holds(self, cost: tuple[int, int]) -> bool:
        return cost[0] <= self.chars and cost[1] <= self.units


def room_for(most_chars: int) -> Room:
    """Room for `most_chars` characters."""
    return Room(most_chars)


def choose_passages(ranking: Iterable[Ranked], query: str, room: Room) -> list[Passage]:
    """The best blocks whose rendering together fits `room`, in rank order; a best block too
    large for the whole room gives its best window of sentences instead. A block that does
    not fit is passed over for smaller ones below it, until MAX_PASSED in a row did not."""
    out: list[Passage] = []
    used = (0, 0)
    between = room.cost("\n\n")
    passed = 0
    for _, block in ranking:
        cost = _plus(
            room.cost(f"{passage_heading(block)}\n{block.text}"), between if out else (0, 0)
        )
        if room.left(used).holds(cost):
            out.append(Passage(*block))
            used, passed = _plus(used, cost), 0
        elif not out:
            window = _window(block, query, room)
            if window:
                out.append(Passage(block.first, block.last, window, block.headings, block.page))
                used = room.cost(f"{passage_heading(block)}\n{window}")
        else:
            passed += 1
            if passed >= MAX_PASSED:
                break
    return out


def _plus(one: tuple[int, int], other: tuple[int, int]) -> tuple[int, int]:
    return one[0] + other[0], one[1] + other[1]


def _window(block: Block, query: str, room: Room) -> str:
    """The block's run of sentences, around the one with most query words, that fits (with
    an ellipsis for each cut end); a first sentence too long to fit, its start."""
    sentences = [s.strip() for s in _SENTENCE_END.split(block.text) if s.strip()]
    sentences = sentences or [block.text]
    wanted = set(folded_words(query))
    hits = [len(wanted & set(folded_words(s))) for s in sentences]
    centre = max(range(len(sentences)), key=lambda i: (hits[i], -i))
    # What is left for the text: the label, its newline and both ellipses are paid first.
    left = room.left(_plus(room.cost(f"{passage_heading(block)}\n"), room.cost("……")))
    costs = [room.cost(f"{s} ") for s in sentences]
    low, high, used = centre, centre + 1, costs[centre]
    grown = True
    while grown:
        grown = False
        for side in (high, low - 1):
            if 0 <= side < len(sentences) and left.holds(_plus(used, costs[side])):
                used = _plus(used, costs[side])
                low, high = min(low, side), max(high, side + 1)
                grown = True
    text = _joined(sentences, low, high)
    if left.holds(used):
        return text
    cut = len(text)  # one sentence longer than the room: its start
    while cut > 0 and not left.holds(room.cost(text[:cut])):
        cut = cut * 3 // 4
    return text[:cut].rstrip() + "…" if cut > 0 else ""


def _joined(sentences: Sequence[str], low: int, high: int) -> str:
    text = " ".join(sentences[low:high])
    return ("…" if low else "") + text + ("…" if high < len(sentences) else "")


class Reading(NamedTuple):
    passages: list[Passage]
    outline: list[Heading]  # the page's headings, when the passages are not all of it
    whole: bool  # the passages hold the whole text: nothing was left out


def read_for(lines: Sequence[str], query: str, room: Room, start: int = 1) -> Reading:
    """The passages of `lines` (the first numbered `start`) that answer `query`, as many as
    `room` holds, and the outline."""
    blocks, headings = split_blocks(lines, start)
    passages = choose_passages(rank_blocks(blocks, query), query, room)
    whole = sorted(passages) == sorted(Passage(*b) for b in blocks)
    return Reading(passages, [] if whole else headings, whole)
