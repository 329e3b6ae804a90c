"""HTML to markdown (html-to-markdown, a Rust converter), and the tidying every output gets.

Whichever path wrote the markdown (trafilatura's serializer, this converter, embedded data),
`tidy` gives it the same shape: tables without trailing spaces and with one separator style,
safe link targets, underscores escaped where markdown needs it, no runs of blank lines.
"""

from __future__ import annotations

import re
from functools import cache
from typing import TYPE_CHECKING, Any

from ikigai_web.fetch.reading.links import clean_markdown, fenced_lines, outside_code

if TYPE_CHECKING:
    from lxml.html import HtmlElement

_BLANKS = re.compile(r"\n{3,}")
_SEPARATOR_CELL = re.compile(r"^\s*(:?)-+(:?)\s*$")
_CELL_BORDER = re.compile(r"(?<!\\)\|")
_INLINE_IMAGES = ("a", "h1", "h2", "h3", "h4", "h5", "h6", "td", "th", "li", "dt", "dd")
# A tag's start in the text (`<a href="javascript:…">` that a page wrote as text or as app
# data): a markdown reader would render it as HTML. Not markdown's own: an autolink
# (`<https://…>`), a link's target in brackets (`](</wiki/A_(b)>)`), nor the bare <sup>, <sub>
# and <u> trafilatura writes for what markdown has no mark for. Searched for by its "<" (the
# look-behinds after it), not at every position.
_TAG_START = re.compile(
    r"<(?<!\\<)(?<!\]\(<)(?=[A-Za-z/!?])(?!/?(?:sup|sub|u)>)(?![A-Za-z][A-Za-z0-9+.-]*:[^<>\s]*>)"
)

# An underscore markdown could read as emphasis (`_private`, `__init__`, `name_`) is escaped;
# one between two letters or digits (`max_retries`) cannot be, and stays bare; a run between
# spaces cannot be either, and stays as written. trafilatura
# escapes every one and html-to-markdown none: this makes both write the same. A link's
# target, an autolink and a formula ($x_{i}$) are left as they are, and a URL in the text is
# written as it is, to be copied.
_UNDERSCORE = re.compile(
    r"(?P<kept>\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"]*\")?\)"
    r"|<[A-Za-z][A-Za-z0-9+.-]*:[^<>\s]*>"
    r"|\$\$.+?\$\$|\$[^$\s](?:[^$]*[^$\s])?\$(?!\d))"
    r"|(?P<url>\b(?:https?|ftp)://[^\s<>\[\]()]*)"
    r"|(?:\\?_)+"
)


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
    """One table style, safe links (absolute, given the page's `base`), no HTML, underscores
    escaped where they could be emphasis, at most one blank line in a row, no outer blank
    lines."""
    markdown = _underscores(clean_markdown(_no_html(markdown), base))
    return _BLANKS.sub("\n\n", _tables(markdown)).strip()


def _underscores(markdown: str) -> str:
    """Each underscore escaped where markdown could read it as emphasis, and only there."""
    if "_" not in markdown:
        return markdown
    return outside_code(markdown, lambda text: _UNDERSCORE.sub(_underscore_run, text), "_")


def _underscore_run(match: re.Match[str]) -> str:
    if match.group("kept"):
        return match.group()
    if match.group("url"):
        return match.group().replace("\\_", "_")
    text, start, end = match.string, match.start(), match.end()
    before, after = text[start - 1 : start], text[end : end + 1]
    if not before.strip() and not after.strip():
        # Alone between spaces it is no emphasis: a rule (`- ___`) or text a converter wrote
        # as it had to (`\___`, which is no rule), kept as written.
        return match.group()
    count = match.group().count("_")
    return "_" * count if before.isalnum() and after.isalnum() else "\\_" * count


def _no_html(markdown: str) -> str:
    """Markdown whose text can start no HTML tag (`\\<`), code aside: trafilatura escapes
    such text, the other converter and a page's data do not."""
    if _TAG_START.search(markdown) is None:
        return markdown
    return outside_code(markdown, lambda text: _TAG_START.sub(r"\\<", text), "<")


def _tables(markdown: str) -> str:
    """Table rows without trailing spaces, and every separator row as |---|:---:|---:|."""
    if "|" not in markdown:
        return markdown
    return "\n".join(
        line if code or not line.lstrip().startswith("|") else _row(line)
        for line, code in fenced_lines(markdown)
    )


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
