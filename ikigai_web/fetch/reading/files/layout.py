"""A page's characters, placed and sized, to markdown blocks: the layout analysis of PDFs.

Characters become rows (one baseline), rows become segments (runs split at wide gaps), and a
band of rows split by a clear gutter into two wide sides is read column by column. Lines of
two or more aligned segments are a table; the rest are headings (larger or bold short lines),
list items (a bullet or a number first) and paragraphs, their lines joined and their
end-of-line hyphens removed. Sizes are in points, y grows upwards (PDF space).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

# Gaps, as fractions of the font size: a space between words, a segment break between cells
# or columns; a row holds characters whose baselines are this close.
_SPACE_GAP = 0.15
_SEGMENT_GAP = 1.0
_MARKER_GAP = 0.4
_ROW_TOLERANCE = 0.35
# A band is two columns when each side has this many segments this wide (of the side's width).
_WIDE_SIDE = 0.6
_WIDE_COUNT = 2
_GUTTER_RANGE = (0.3, 0.7)
# Baseline distance, in font sizes, past which the next line starts a new paragraph.
_PARAGRAPH_GAP = 1.5
_TABLE_ROW_GAP = 3.0
# Headings: larger than the body by this factor, or bold and short; at most this many levels
# from sizes.
_LARGER = 1.12
_HEADING_MOST_CHARS = 160
_SIZE_LEVELS = 5
_BOLD_SHARE = 0.7
# A running header or footer: a page number alone in this share of the page's top or bottom.
_MARGIN_SHARE = 0.08
# A bullet glyph, or a dash or star that a space follows ("-- comment" is no item).
_BULLET = re.compile(
    r"^(?:[\u2022\u25e6\u25aa\u25cf\u25a0\u2023\u2043\u2219\u00b7\uf0b7]\s*|[*\u2013-]\s+)"
)
_BULLET_ALONE = re.compile(
    r"[\u2022\u25e6\u25aa\u25cf\u25a0\u2023\u2043\u2219\u00b7\uf0b7*\u2013-]"
)
_NUMBERED = re.compile(r"^(\(?(?:\d{1,3}|[a-z]|[ivx]{1,4})[.)])\s+")
_BARE_NUMBER = re.compile(r"\d{1,3}")
_PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?(?:\d{1,5}(?:\s*(?:of|/)\s*\d{1,5})?|[ivxlc]{1,8})$", re.IGNORECASE
)
# A running header or footer: the same text at the same height on this share of the pages.
_RUNNING_SHARE = 0.5
_RUNNING_LEAST = 3
_SAME_SIZE = 0.15  # sizes this close (a share of the size) are one style
# A table of contents' dot leaders, "Introduction . . . . . . 1", shortened to an ellipsis.
_LEADERS = re.compile(r"(?:\s*\.){4,}\s*")
_ITEM_MARK = re.compile(r"^ *(?:- |\d{1,3}[.)] )")
_HYPHENS = ("-", "\u00ad", "\x02")
_SENTENCE_END = (".", ";", ",", ":")


class Char(NamedTuple):
    text: str
    x0: float
    x1: float
    y: float  # the baseline
    size: float
    bold: bool


@dataclass
class Segment:
    """A run of characters on one baseline, no wide gap inside."""

    text: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool


@dataclass
class Line:
    """Segments read as one line: the cells of a table row, or words of a text line."""

    cells: list[Segment]

    @property
    def text(self) -> str:
        return " ".join(cell.text for cell in self.cells)

    @property
    def x0(self) -> float:
        return self.cells[0].x0

    @property
    def y(self) -> float:
        return self.cells[0].y

    @property
    def size(self) -> float:
        return max(self.cells, key=lambda c: len(c.text)).size

    @property
    def bold(self) -> bool:
        return all(cell.bold for cell in self.cells)


@dataclass
class Page:
    width: float
    height: float
    lines: list[Line] = field(default_factory=list)
    broken: bool = False  # the reader could not load it


# ------------------------------------------------------------------ characters to lines


def page_lines(chars: list[Char], width: float, height: float) -> Page:
    """The page's lines in reading order, without running page numbers."""
    rows = [_segments(row) for row in _rows(chars)]
    rows = [row for row in rows if row and not _running_number(row, height)]
    return Page(width, height, _reading_order(rows, width))


def _rows(chars: list[Char]) -> list[list[Char]]:
    """Characters grouped by baseline, top row first, each row left to right."""
    rows: list[list[Char]] = []
    current: list[Char] = []
    # Top down; characters on one baseline keep their order, sorted by x once a row is whole.
    for char in sorted(chars, key=attrgetter("y"), reverse=True):
        if current and current[0].y - char.y > _ROW_TOLERANCE * max(char.size, current[0].size):
            rows.append(sorted(current, key=lambda c: c.x0))
            current = []
        current.append(char)
    if current:
        rows.append(sorted(current, key=lambda c: c.x0))
    return rows


def _segments(row: list[Char]) -> list[Segment]:
    """The row split where the gap between two characters is wide; spaces put back."""
    segments: list[list[Char]] = []
    last: Char | None = None
    for char in row:
        if char.text.isspace():
            continue
        gap = char.x0 - last.x1 if last else 0.0
        if last is None or gap > _SEGMENT_GAP * max(char.size, last.size):
            segments.append([])
        elif len(segments) == 1 and gap > _MARKER_GAP * char.size and _marker(segments[0]):
            segments.append([])  # a list's number or bullet, set apart from its text
        segments[-1].append(char)
        last = char
    return [_segment(chars) for chars in segments]


def _marker(chars: list[Char]) -> bool:
    text = "".join(c.text for c in chars)
    return _BARE_NUMBER.fullmatch(text) is not None or _BULLET_ALONE.fullmatch(text) is not None


def _segment(chars: list[Char]) -> Segment:
    text = [chars[0].text]
    for before, char in itertools.pairwise(chars):
        if char.x0 - before.x1 > _SPACE_GAP * max(char.size, before.size):
            text.append(" ")
        text.append(char.text)
    size = _common_size(chars)
    bold = sum(c.bold for c in chars) >= _BOLD_SHARE * len(chars)
    return Segment("".join(text), chars[0].x0, chars[-1].x1, chars[0].y, size, bold)


def _common_size(chars: list[Char]) -> float:
    """The size most of the characters have (not a drop cap's, nor inline code's)."""
    middle = chars[len(chars) // 2].size
    if chars[0].size == middle == chars[-1].size:
        return round(middle * 2) / 2
    return Counter(round(c.size * 2) / 2 for c in chars).most_common(1)[0][0]


def drop_running(pages: list[Page]) -> None:
    """Lines repeated at the same height near the top or bottom of most pages (a running
    header or footer: the title, a chapter's name) are dropped."""
    counts = Counter(
        key for page in pages for key in {_margin_key(page, line) for line in page.lines}
    )
    least = max(_RUNNING_LEAST, _RUNNING_SHARE * len(pages))
    running = {key for key, count in counts.items() if key is not None and count >= least}
    for page in pages:
        page.lines = [line for line in page.lines if _margin_key(page, line) not in running]


def _margin_key(page: Page, line: Line) -> tuple[str, int] | None:
    margin = page.height * _MARGIN_SHARE
    if margin < line.y < page.height - margin:
        return None
    return line.text, round(line.y)


def _running_number(row: list[Segment], height: float) -> bool:
    """A page number alone at the top or bottom of the page (a running header or footer)."""
    if len(row) != 1 or not _PAGE_NUMBER.match(row[0].text.strip()):
        return False
    return row[0].y < height * _MARGIN_SHARE or row[0].y > height * (1 - _MARGIN_SHARE)


def _reading_order(rows: list[list[Segment]], width: float) -> list[Line]:
    """Rows as lines; a band of rows that a gutter splits into two columns, column by column."""
    gutter = _gutter(rows, width)
    lines: list[Line] = []
    band: list[list[Segment]] = []
    for row in [*rows, []]:
        if row and gutter is not None and not any(s.x0 < gutter < s.x1 for s in row):
            band.append(row)
            continue
        lines += _band_lines(band, gutter)
        band = []
        if row:
            lines.append(Line(row))
    return lines


def _gutter(rows: list[list[Segment]], width: float) -> float | None:
    """The x in the page's middle that the fewest rows' segments cross."""
    if not rows:
        return None
    left = min(s.x0 for row in rows for s in row)
    right = max(s.x1 for row in rows for s in row)
    if right - left < width / 4:
        return None
    middle = (left + right) / 2
    if sum(len(row) > 1 or not row[0].x0 < middle < row[0].x1 for row in rows) < _WIDE_COUNT * 2:
        return None  # a page of full lines: one column
    low, high = (left + (right - left) * share for share in _GUTTER_RANGE)
    candidates = [low + step * (high - low) / 40 for step in range(41)]
    return min(candidates, key=lambda x: (_crossings(rows, x), abs(x - middle)))


def _crossings(rows: list[list[Segment]], x: float) -> int:
    return sum(any(s.x0 < x < s.x1 for s in row) for row in rows)


def _band_lines(band: list[list[Segment]], gutter: float | None) -> list[Line]:
    """The band's rows as lines: its left column then its right, when it has two."""
    if not band or gutter is None or not _two_columns(band, gutter):
        return [Line(row) for row in band]
    sides = ([s for s in row if s.x1 <= gutter] for row in band)
    left = [Line(side) for side in sides if side]
    right = [Line(side) for side in ([s for s in row if s.x0 >= gutter] for row in band) if side]
    return left + right


def _two_columns(band: list[list[Segment]], gutter: float) -> bool:
    left = min(s.x0 for row in band for s in row)
    right = max(s.x1 for row in band for s in row)
    segments = [s for row in band for s in row]
    wide_left = sum(
        s.x1 <= gutter and s.x1 - s.x0 >= _WIDE_SIDE * (gutter - left) for s in segments
    )
    wide_right = sum(
        s.x0 >= gutter and s.x1 - s.x0 >= _WIDE_SIDE * (right - gutter) for s in segments
    )
    return wide_left >= _WIDE_COUNT and wide_right >= _WIDE_COUNT


# ------------------------------------------------------------------ lines to markdown


@dataclass(frozen=True)
class Styles:
    """The document's body size and the heading level of each larger size."""

    body: float
    levels: dict[float, int]

    def level(self, line: Line) -> int | None:
        size = round(line.size * 2) / 2
        if size in self.levels:
            return self.levels[size]
        if line.bold and size >= self.body - 0.5:
            return len(self.levels) + 1
        return None


def styles(pages: list[Page]) -> Styles:
    """The body size (the one most characters have) and heading levels by size."""
    sizes: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            for cell in line.cells:
                sizes[round(cell.size * 2) / 2] += len(cell.text)
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    larger = sorted((s for s in sizes if s >= body * _LARGER), reverse=True)[:_SIZE_LEVELS]
    return Styles(body, {size: level for level, size in enumerate(larger, 1)})


def page_markdown(page: Page, style: Styles) -> str:
    """The page's blocks as markdown: headings, tables, list items and paragraphs."""
    blocks: list[str] = []
    lines = page.lines
    indents: list[float] = []  # the markers' x of the list being read, outermost first
    index = 0
    while index < len(lines):
        table = _table_rows(lines, index)
        if len(table) >= 2:
            blocks.append(_table_markdown(table))
            index += len(table)
            continue
        end = _block_end(lines, index, style)
        block = _text_block(lines[index:end], style)
        indents = _indents(indents, lines[index]) if _ITEM_MARK.match(block) else []
        blocks.append("  " * (len(indents) - 1) + block if indents else block)
        index = end
    return _joined_blocks([block for block in blocks if block])


def _indents(indents: list[float], item: Line) -> list[float]:
    """The list's indents once `item` is read: deeper when it stands right of the one
    before, back out to the level it lines up with."""
    tolerance = item.size / 2
    kept = [x for x in indents if x < item.x0 + tolerance]
    return kept if kept and abs(kept[-1] - item.x0) <= tolerance else [*kept, item.x0]


def _joined_blocks(blocks: list[str]) -> str:
    """Blocks a blank line apart, but list items one under the other."""
    out = blocks[:1]
    for before, block in itertools.pairwise(blocks):
        items = _ITEM_MARK.match(before) and _ITEM_MARK.match(block)
        out.append(("\n" if items else "\n\n") + block)
    return "".join(out)


def _is_item(line: Line) -> bool:
    return bool(_BULLET.match(line.text) or _NUMBERED.match(line.text) or _bare_number(line))


def _bare_number(line: Line) -> bool:
    """A number alone before the text, as a numbered list's marker set apart."""
    return len(line.cells) > 1 and _BARE_NUMBER.fullmatch(line.cells[0].text) is not None


def _table_rows(lines: list[Line], start: int) -> list[Line]:
    """The lines from `start` that make a table: two or more cells each, rows close together,
    cells falling in shared columns."""
    rows: list[Line] = []
    for line in lines[start:]:
        if len(line.cells) < 2 or _is_item(line):
            break
        if rows and (rows[-1].y - line.y > _TABLE_ROW_GAP * line.size or line.y > rows[-1].y):
            break
        rows.append(line)
    return rows if len(_columns(rows)) >= 2 else []


def _columns(rows: list[Line]) -> list[tuple[float, float]]:
    """The x ranges of the table's columns: its cells' ranges, overlapping ones merged."""
    spans = sorted((cell.x0, cell.x1) for row in rows for cell in row.cells)
    merged: list[tuple[float, float]] = []
    for x0, x1 in spans:
        if merged and x0 <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], x1))
        else:
            merged.append((x0, x1))
    return merged


def _table_markdown(rows: list[Line]) -> str:
    columns = _columns(rows)
    table = []
    for row in rows:
        cells = [""] * len(columns)
        for cell in row.cells:
            where = next(i for i, (x0, x1) in enumerate(columns) if x0 <= cell.x0 <= x1)
            cells[where] = f"{cells[where]} {cell.text}".strip()
        table.append("| " + " | ".join(_cell(text) for text in cells) + " |")
    table.insert(1, "|" + "---|" * len(columns))
    return "\n".join(table)


def _cell(text: str) -> str:
    return _without_leaders(text).replace("|", "\\|")


def _block_end(lines: list[Line], start: int, style: Styles) -> int:
    """Where the block starting at `start` ends: a change of style, a wide gap, a new item."""
    first = lines[start]
    end = start + 1
    while end < len(lines):
        before, line = lines[end - 1], lines[end]
        if _is_item(line) or (len(line.cells) > 1 and len(_table_rows(lines, end)) >= 2):
            break
        if style.level(line) != style.level(first) or not _same_size(line, first):
            break
        if not _follows(before, line, first, style):
            break
        end += 1
    return end


def _same_size(line: Line, first: Line) -> bool:
    return abs(line.size - first.size) <= _SAME_SIZE * first.size


def _follows(before: Line, line: Line, first: Line, style: Styles) -> bool:
    """Whether `line` goes on the block that `before` ends (same column, the next line down,
    not indented as a new paragraph; or the top of the next column, mid-sentence)."""
    gap = before.y - line.y
    if gap < 0:  # the next column: a sentence carried over
        return not before.text.endswith((".", "!", "?", ":")) and line.text[:1].islower()
    if gap > _PARAGRAPH_GAP * max(line.size, before.size):
        return False
    if _is_item(first):  # an item's next lines stand right of its bullet
        return line.x0 > first.x0 + line.size / 2
    indented = line.x0 - before.x0 > line.size  # a new paragraph's first line
    return not indented or style.level(first) is not None


def _text_block(lines: list[Line], style: Styles) -> str:
    text = _joined(lines)
    level = style.level(lines[0])
    heading = level is not None and len(text) <= _HEADING_MOST_CHARS
    if heading and not _PAGE_NUMBER.match(text) and not text.endswith(_SENTENCE_END):
        return "#" * min(level or 1, 6) + " " + text
    if _bare_number(lines[0]):
        return f"{lines[0].cells[0].text}. {text.partition(' ')[2]}"
    bullet = _BULLET.match(text)
    if bullet:
        return f"- {text[bullet.end() :]}"
    if _NUMBERED.match(text):
        return text
    return _escaped(text)


def _joined(lines: list[Line]) -> str:
    """The lines' text as one: words broken by a hyphen at a line's end made whole."""
    text = lines[0].text.strip()
    for line in lines[1:]:
        following = line.text.strip()
        hyphen = text.endswith(_HYPHENS) and len(text) > 1 and text[-2].isalpha()
        if hyphen and following[:1].islower():
            text = text[:-1] + following
        else:
            text = f"{text} {following}"
    return _without_leaders(text.replace("\x02", "-").replace("\u00ad", ""))


def _without_leaders(text: str) -> str:
    return _LEADERS.sub(" … ", text).strip() if ". . ." in text or "...." in text else text


def _escaped(text: str) -> str:
    """A paragraph that markdown would read as something else (`# x`, `> x`, `[Page 2 of 9]`)
    with that first mark escaped."""
    return "\\" + text if text[:1] in "#>[|" else text
