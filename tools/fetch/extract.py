"""HTML to clean markdown of the main content: trafilatura, checked against readability-lxml.

Both extractors run on every page: they fail on different pages, and their agreement tells
which one to trust (see `_choose`). Markdown comes from trafilatura's own serializer for its
output and from markdownify for readability's output and for full-page mode.
"""

from __future__ import annotations

import re
from collections import Counter
from copy import deepcopy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from common.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from lxml.html import HtmlElement

# Captions describe an image rather than carry the article; the image's alt text stays.
_CAPTIONS = '//figcaption | //*[contains(@class, "caption") and not(.//img)]'
# Never content, whatever the mode.
_NEVER = "//script | //style | //noscript | //template | //svg | //iframe | //object | //embed"
# What a reader of the whole page never sees.
_HIDDEN = '//*[@hidden] | //*[contains(translate(@style, " ", ""), "display:none")]'
_LANGUAGE = re.compile(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_FENCE = re.compile(r"^(`{3,})\n(.*?)\n\1$", re.MULTILINE | re.DOTALL)
_WORD = re.compile(r"\w+")
_ITEM = re.compile(r"^( *)(\d+\.|-) ")
# Share of control characters, in the first 64 KiB, above which the input is not text at all.
_CONTROL = re.compile(r"[\x01-\x08\x0b\x0e-\x1f\x7f]")
_MAX_CONTROL = 0.05
_SAMPLE = 65536
# `_choose` thresholds, over word 4-gram multisets of the two outputs.
_LITTLE = 0.5  # trafilatura found under half of what readability found...
_INSIDE = 0.9  # ...and readability's text contains it: trafilatura stopped short.
_SUBSET = 0.95  # readability's text lies within trafilatura's...
_EXTRA = 0.8  # ...which adds over 20% more: navigation or teasers trafilatura kept.
_MAX_WORDS = 50_000  # enough to compare two texts, and bounds the time on huge pages
_TITLE_WORDS = 3  # a leading heading this long found inside the title repeats it
_LARGE = 500_000  # characters of markdown beyond which readability is not run


@dataclass(frozen=True)
class Document:
    """The markdown of a page and the metadata found in it."""

    markdown: str
    title: str | None = None
    author: str | None = None
    date: str | None = None
    site_name: str | None = None
    description: str | None = None


def html_to_markdown(
    html: str, url: str, *, full_page: bool = False, include_links: bool = True
) -> Document:
    """Markdown of the page's main content (or of the whole page with `full_page`).

    Relative links and image sources are resolved against `url`, the page's final URL.
    """
    tree = _parse(html, url)
    if full_page:
        body = _page_markdown(tree, include_links=include_links)
    else:
        body = _main_markdown(tree, url, include_links=include_links)
    meta = _metadata(tree, url)
    if not full_page:
        body = _drop_title(body, meta["title"])
    return Document(markdown=body, **meta)


def _parse(html: str, url: str) -> HtmlElement:
    """The document tree, scripts removed and every link made absolute against `url`."""
    import lxml.etree
    import lxml.html

    text = html.replace("\x00", "")
    if not text.strip():
        raise ToolError(ErrorCode.PARSE_ERROR, _unparsable(url, "the body is empty"))
    sample = text[:_SAMPLE]
    if len(_CONTROL.findall(sample)) > _MAX_CONTROL * len(sample):
        raise ToolError(ErrorCode.PARSE_ERROR, _unparsable(url, "it is binary data, not text"))
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True)
    try:
        tree = lxml.html.document_fromstring(text.encode("utf-8"), parser, base_url=url)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise ToolError(ErrorCode.PARSE_ERROR, _unparsable(url, str(exc))) from None
    assert isinstance(tree, lxml.html.HtmlElement)
    _remove(tree, _NEVER)
    tree.make_links_absolute(url, resolve_base_href=True, handle_failures="ignore")
    return tree


def _unparsable(url: str, why: str) -> str:
    return (
        f"The page at {url} could not be read as HTML: {why}. "
        "Check that the URL points to a web page; try another source for the same content."
    )


def _remove(tree: HtmlElement, xpath: str) -> None:
    for element in tree.xpath(xpath):
        element.drop_tree()


def _metadata(tree: HtmlElement, url: str) -> dict[str, str | None]:
    from trafilatura.metadata import extract_metadata

    # The extensive date search costs more than the whole extraction, for a rare gain.
    found: Any = extract_metadata(tree, default_url=url, extensive=False)
    return {
        "title": found.title or None,
        "author": found.author or None,
        "date": found.date or None,
        "site_name": found.sitename or None,
        "description": found.description or None,
    }


def _main_markdown(tree: HtmlElement, url: str, *, include_links: bool) -> str:
    languages = _code_languages(tree)
    _remove(tree, _CAPTIONS)
    primary = _trafilatura(tree, url, include_links=include_links)
    if primary and len(primary) > _LARGE:
        # Readability's time grows faster than the page: on a huge page trafilatura alone.
        return _add_languages(primary, languages)
    fallback = _readability(tree, include_links=include_links)
    return _add_languages(_choose(primary, fallback), languages)


def _choose(primary: str, fallback: str) -> str:
    """trafilatura's markdown unless readability's clearly did better.

    Readability wins when trafilatura stopped short (it found little, all inside readability's
    text) or when trafilatura added much to readability's text (teasers, newsletter boxes).
    """
    ours, theirs = _shingles(primary), _shingles(fallback)
    if not ours:
        return fallback
    if not theirs:
        return primary
    shared = (ours & theirs).total()
    ours_kept, theirs_kept = shared / ours.total(), shared / theirs.total()
    if ours.total() < _LITTLE * theirs.total() and ours_kept >= _INSIDE:
        return fallback
    if theirs_kept >= _SUBSET and ours_kept < _EXTRA:
        return fallback
    return primary


def _shingles(markdown: str) -> Counter[tuple[str, ...]]:
    words = _WORD.findall(_link_text(markdown))[:_MAX_WORDS]
    return Counter(tuple(words[i : i + 4]) for i in range(max(len(words) - 3, 0)))


def _link_text(markdown: str) -> str:
    """Markdown without link and image targets, which would count as words."""
    return re.sub(r"\]\([^)]*\)", "]", markdown)


def _trafilatura(tree: HtmlElement, url: str, *, include_links: bool) -> str:
    import trafilatura

    text: str | None = trafilatura.extract(
        tree,
        url=url,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_images=True,
        include_formatting=True,
        include_links=include_links,
    )
    return _fix_indents((text or "").strip())


def _fix_indents(markdown: str) -> str:
    """Indentation that means what it shows, as CommonMark reads it.

    trafilatura indents sub-lists by two spaces a level, which leaves a list under `1. `
    unnested; and it keeps the source's indentation of some text, which markdown would read
    as a code block. Sub-lists go under their parent's text, other lines no deeper than the
    list item they continue (so not at all outside lists); code blocks are left as they are.
    """
    lines, columns, fenced = [], [0], False
    for line in markdown.split("\n"):
        text, out = line.lstrip(), line
        indent = len(line) - len(text)
        if text.startswith("```") or fenced:
            fenced = fenced != text.startswith("```")
        elif item := _ITEM.match(line):
            depth = min(indent // 2, len(columns) - 1)
            columns[depth + 1 :] = [columns[depth] + len(item.group(2)) + 1]
            out = " " * columns[depth] + text
        elif text:
            columns = columns if indent else [0]
            out = " " * min(indent, columns[-1]) + text
        lines.append(out)
    return "\n".join(lines)


def _readability(tree: HtmlElement, *, include_links: bool) -> str:
    from readability import Document as Readable
    from readability.readability import Unparseable

    try:
        # No url: the links are absolute already, and readability would rewrite them all again.
        summary: str = Readable(deepcopy(tree)).summary(html_partial=True)
    except Unparseable:
        return ""
    return _to_markdown(summary, include_links=include_links)


def _page_markdown(tree: HtmlElement, *, include_links: bool) -> str:
    """The whole page as markdown: no extraction."""
    import lxml.html

    _remove(tree, _HIDDEN)
    body = tree.find("body")
    html = lxml.html.tostring(body if body is not None else tree, encoding="unicode")
    return _to_markdown(html, include_links=include_links)


def _to_markdown(html: str, *, include_links: bool) -> str:
    from markdownify import ATX, MarkdownConverter

    converter = MarkdownConverter(
        heading_style=ATX,
        bullets="-",
        code_language_callback=_element_language,
        strip=None if include_links else ["a"],
        table_infer_header=True,
        escape_misc=False,
        bs4_options="lxml",
    )
    markdown = converter.convert(html)
    return re.sub(r"\n{3,}", "\n\n", markdown).strip()


def _element_language(element: Any) -> str:
    """The language of a markdownify (BeautifulSoup) <pre>, from its own or its <code>'s class."""
    classes = list(element.get("class") or [])
    code = element.find("code")
    if code is not None:
        classes += code.get("class") or []
    return _language(" ".join(classes)) or ""


def _language(classes: str) -> str | None:
    match = _LANGUAGE.search(classes)
    return match.group(1) if match else None


def _code_languages(tree: HtmlElement) -> dict[str, str]:
    """{code text with whitespace collapsed: language} for the page's labelled code blocks."""
    languages: dict[str, str] = {}
    for pre in tree.iter("pre"):
        classes = " ".join(
            element.get("class", "")
            for element in (pre, *pre.iter("code"), pre.getparent())
            if element is not None
        )
        language = _language(classes)
        if language:
            languages[_squash(pre.text_content())] = language
    return languages


def _add_languages(markdown: str, languages: dict[str, str]) -> str:
    """Put the page's language label on trafilatura's bare code fences."""
    if not languages:
        return markdown

    def label(match: re.Match[str]) -> str:
        language = languages.get(_squash(match.group(2)), "")
        return f"{match.group(1)}{language}\n{match.group(2)}\n{match.group(1)}"

    return _FENCE.sub(label, markdown)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _drop_title(markdown: str, title: str | None) -> str:
    """Without the leading heading when it repeats the title, which is returned on its own."""
    first, _, rest = markdown.partition("\n")
    if not (title and first.startswith("#")):
        return markdown
    heading, name = _words(_link_text(first)), _words(title)
    # A title often adds the site's name; a short heading inside it may be a mere section.
    if heading == name or (len(heading.split()) >= _TITLE_WORDS and heading in name):
        return rest.strip()
    return markdown


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))
