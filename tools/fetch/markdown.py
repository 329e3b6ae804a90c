"""HTML to markdown (html-to-markdown, a Rust converter), and the tidying every output gets.

Whichever path wrote the markdown (trafilatura's serializer, this converter, embedded data),
`tidy` gives it the same shape: tables without trailing spaces and with one separator style,
safe link targets, no runs of blank lines.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

from tools.fetch.links import clean_markdown

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lxml.html import HtmlElement

_BLANKS = re.compile(r"\n{3,}")
_SEPARATOR_CELL = re.compile(r"^\s*(:?)-+(:?)\s*$")
_CELL_BORDER = re.compile(r"(?<!\\)\|")
_FENCE = re.compile(r"^\s*(```|~~~)")
_INLINE_IMAGES = ("a", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "li", "dt", "dd")
# A tag's start in the text (`<a href="javascript:…">` that a page wrote as text or as app
# data): a markdown reader would render it as HTML. An autolink (`<https://…>`) is markdown.
_TAG_START = re.compile(r"(?<!\\)<(?=[A-Za-z/!?])(?![A-Za-z][A-Za-z0-9+.-]*:[^<>\s]*>)")
_CODE_SPAN = re.compile(r"(`+).*?(?<!`)\1(?!`)")


@cache
def _options(*, include_links: bool, folded: bool = False) -> Any:
    import html_to_markdown as h2m

    return h2m.ConversionOptions(
        extract_metadata=False,
        preprocessing=h2m.PreprocessingOptions(enabled=False),
        bullets="-",
        newline_style="backslash",  # a visible hard break rather than two trailing spaces
        autolinks=False,
        strip_tags=[] if include_links else ["a"],
        # An image inside a link or a heading stays an image: the converter would otherwise
        # merge its alt text into the link text ("black Walking Pad hover image").
        keep_inline_images_in=list(_INLINE_IMAGES),
        hidden_content="reachable" if folded else "drop",
    )


def element_markdown(element: HtmlElement, *, include_links: bool, folded: bool = False) -> str:
    """The element and everything in it as markdown; with `folded`, also what the page shows
    only on a click (closed tabs and accordions, styled out of sight until opened)."""
    import lxml.html

    html = lxml.html.tostring(element, encoding="unicode", with_tail=False)
    return html_markdown(html, include_links=include_links, folded=folded)


def html_markdown(html: str, *, include_links: bool, folded: bool = False) -> str:
    import html_to_markdown as h2m

    result = h2m.convert(html, _options(include_links=include_links, folded=folded))
    return tidy(result.content or "")


def tidy(markdown: str, base: str = "") -> str:
    """One table style, safe links (absolute, given the page's `base`), no HTML, at most one
    blank line in a row, no outer blank lines."""
    return _BLANKS.sub("\n\n", _tables(_no_html(clean_markdown(markdown, base)))).strip()


def _no_html(markdown: str) -> str:
    """Markdown whose text can start no HTML tag (`\\<`), code aside: trafilatura escapes
    such text, the other converter and a page's data do not."""
    if "<" not in markdown:
        return markdown
    return "\n".join(
        line if code or "<" not in line else _escape_outside_code(line)
        for line, code in fenced_lines(markdown)
    )


def _escape_outside_code(line: str) -> str:
    parts, start = [], 0
    for span in _CODE_SPAN.finditer(line):
        parts += [_TAG_START.sub(r"\\<", line[start : span.start()]), span.group()]
        start = span.end()
    return "".join([*parts, _TAG_START.sub(r"\\<", line[start:])])


def _tables(markdown: str) -> str:
    """Table rows without trailing spaces, and every separator row as |---|:---:|---:|."""
    if "|" not in markdown:
        return markdown
    return "\n".join(
        line if code or not line.lstrip().startswith("|") else _row(line)
        for line, code in fenced_lines(markdown)
    )


def fenced_lines(markdown: str) -> Iterator[tuple[str, bool]]:
    """Each line of the markdown, and whether it is code: a fence or a line between two."""
    fenced = False
    for line in markdown.split("\n"):
        fence = _FENCE.match(line) is not None
        fenced = fenced != fence
        yield line, fenced or fence


def _row(line: str) -> str:
    """A table row as `| a | b |` (no padding), or a separator row as `|---|:---:|`."""
    row = line.strip()
    cells = _CELL_BORDER.split(row.removeprefix("|").removesuffix("|") if row != "|" else "")
    matches = [_SEPARATOR_CELL.match(cell) for cell in cells]
    if all(matches):
        marks = [f"{m.group(1)}---{m.group(2)}" for m in matches if m is not None]
        return "|" + "|".join(marks) + "|"
    if not row.endswith("|") or row.endswith("\\|"):
        return line.rstrip()  # not a whole row (a line that merely starts with a bar)
    return "| " + " | ".join(cell.strip() for cell in cells) + " |"
