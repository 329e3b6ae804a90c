"""Link and image targets that are safe to hand to a model: no script schemes, no user-info,
and in the answer only web addresses a client may follow.

A page's `javascript:`, `vbscript:` and `data:` targets do nothing useful for a reader and may
carry payloads; `http://user:pass@host/` leaks a credential (the page's own, or the one in the
URL web-fetch was given, once relative links are resolved against it). Both are cleaned in the
tree, before any converter sees it, and again on the markdown, whichever converter wrote it.

A client that renders the answer's markdown fetches its images and opens its links: a page,
a document or a text file must not point it at `file:///etc/passwd` or at a private address
web-fetch itself would not reach (`web_links_only`, applied to every answer's markdown last).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urljoin, urlsplit, urlunsplit

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from lxml.html import HtmlElement

_SCRIPT_SCHEMES = ("javascript", "vbscript", "data")
# Browsers drop ASCII whitespace and control characters anywhere in a scheme ("java\tscript:").
_IGNORED = re.compile(r"[\x00-\x20\x7f]+")
_ATTRIBUTES = ("href", "src")
_ABSOLUTE = ("http://", "https://")
# A markdown link or image: [text](target) or ![alt](target), a target without spaces and
# with at most one level of balanced parentheses (`javascript:alert(1)`, which a page's text
# can carry), optionally in angle brackets, and an optional "title". Alternatives that start
# with a literal let the engine skip to a "!" or "[" (`(!?)\[` was tried at every character);
# its runs are possessive, as what they could give back is never what follows them.
_LINK = re.compile(
    r"(?:!\[|\[)((?:[^\[\]\\]++|\\.)*+)\]\(<?((?:[^()\s<>]++|\([^()\s<>]*+\))*+)>?"
    r"(\s+\"[^\"]*\")?\)"
)
_AUTOLINK = re.compile(r"<([a-zA-Z][a-zA-Z0-9+.-]*:[^<>\s]*)>")
_FENCES = ("```", "~~~")
_CODE_SPAN = re.compile(r"(`+).*?(?<!`)\1(?!`)")
# HTML a markdown document carries as it is (a README's <a>, <img>): a tag, and in it an
# event handler or an attribute whose value is a target.
_HTML_TAG = re.compile(r"<(?<!\\<)[A-Za-z][^<>]*>")  # not `\<`: text that shows a tag
_HTML_ATTRIBUTE = re.compile(
    r"""\s(on[a-z]+|href|src|action|formaction|xlink:href|poster|background)\s*=\s*"""
    r"""("[^"]*"|'[^']*'|[^\s>]+)""",
    re.IGNORECASE,
)
# A srcset written into src ("a.jpg 100w, b.jpg 200w", every size of the image): a broken
# image for a browser, and hundreds of kilobytes of targets in the markdown of some shops.
_CANDIDATES = re.compile(r"\s*(\S+)\s+\d+(?:\.\d+)?[wx]\s*(?:,|$)")


def scheme(url: str) -> str:
    """The scheme as a browser reads it, lower-case; "" for a relative URL."""
    # What goes is never a colon: the part before the first one is cleaned alone, not the
    # whole target (a data: URL can be megabytes long).
    name, colon, _ = url.partition(":")
    if not colon:
        return ""
    name = name if name.isascii() and name.isalnum() else _IGNORED.sub("", name)
    return name.lower() if name.isascii() and name.isalnum() else ""


def is_script(url: str) -> bool:
    return scheme(url) in _SCRIPT_SCHEMES


def without_userinfo(url: str) -> str:
    """The URL without `user:password@` in its authority; other URLs as they are."""
    if "@" not in url:
        return url
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def clean_tree(tree: HtmlElement, url: str) -> None:
    """Every link and image target made absolute against the page's base (its <base href>,
    else `url`), script targets removed (the element and its text stay), user-info stripped,
    a list of an image's sizes in `src` cut to its first."""
    base = _base(tree, url)
    resolved: dict[str, str] = {}  # a page repeats its targets (menus, icons, footers)
    for element in tree.xpath("//*[@href or @src]"):
        for name in _ATTRIBUTES:
            value = element.get(name)
            if value is None:
                continue
            if is_script(value):
                del element.attrib[name]
                continue
            if name == "src" and (candidates := _CANDIDATES.match(value)):
                value = candidates.group(1)  # the first: the image itself, in one size
            if (absolute := resolved.get(value)) is None:
                absolute = resolved[value] = _absolute(base, value)
            _set_target(element, name, absolute)


def _set_target(element: HtmlElement, name: str, value: str) -> None:
    try:
        element.set(name, without_userinfo(value) if "@" in value else value)
    except ValueError:
        # lxml refuses values that are not XML-compatible (control characters the page's
        # bytes or the URL resolution let through): such a target is useless.
        del element.attrib[name]


def _base(tree: HtmlElement, url: str) -> str:
    """The URL relative targets resolve against: the first <base href>, else `url`; also
    `url` when that one gives no web address (a browser ignores a `javascript:` or `data:`
    base, and looks at no other). The <base> elements go, as lxml's own resolution does, so
    that no converter resolves them twice."""
    hrefs = [element.get("href") for element in tree.iter("base")]
    for element in list(tree.iter("base")):
        element.drop_tree()
    first = next((href for href in hrefs if href), None)
    found = _absolute(url, first) if first else url
    return found if found.startswith(_ABSOLUTE) else url


def _absolute(base: str, target: str) -> str:
    """The target as an absolute URL; as it is when already absolute or not a URL."""
    target = target.strip()
    if target.startswith(_ABSOLUTE) or not base:
        return target
    try:
        return urljoin(base, target)
    except ValueError:
        return target


def clean_markdown(markdown: str, base: str = "") -> str:
    """Every link and image of the markdown made safe: a script target leaves the link text
    (or the image's alt text) alone; the others lose their user-info and, given the page's
    `base`, become absolute (links written in a page's text or data are often relative)."""

    def link(match: re.Match[str]) -> str:
        text, target, title = match.groups()
        bang = "!" if match.group().startswith("!") else ""
        if is_script(target):
            return text
        cleaned = without_userinfo(_absolute(base, target) if target else target)
        return match.group(0) if cleaned == target else f"{bang}[{text}]({cleaned}{title or ''})"

    def autolink(match: re.Match[str]) -> str:
        target = match.group(1)
        return target if is_script(target) else f"<{without_userinfo(target)}>"

    if "](" not in markdown and "<" not in markdown:
        return markdown
    if _HTML_TAG.search(markdown):
        markdown = outside_code(
            markdown,
            lambda text: _HTML_TAG.sub(lambda tag: _safe_tag(tag.group(0), base), text),
            needs="<",
        )
    return _AUTOLINK.sub(autolink, _LINK.sub(link, markdown))


def _safe_tag(tag: str, base: str) -> str:
    """An HTML tag without its event handlers and script targets, which would run when a
    reader renders the markdown; its other targets absolute, given `base`."""

    def attribute(found: re.Match[str]) -> str:
        name, value = found.group(1).lower(), found.group(2).strip("\"'")
        if name.startswith("on") or is_script(value):
            return ""
        cleaned = without_userinfo(_absolute(base, value))
        quote = "'" if '"' in cleaned else '"'
        return found.group(0) if cleaned == value else f" {name}={quote}{cleaned}{quote}"

    return _HTML_ATTRIBUTE.sub(attribute, tag)


def fenced_lines(markdown: str) -> Iterator[tuple[str, bool]]:
    """Each line of the markdown, and whether it is code: a fence or a line between two."""
    fenced = False
    for line in markdown.split("\n"):
        fence = line.lstrip().startswith(_FENCES)  # lstrip and the pattern's \s: one set
        fenced = fenced != fence
        yield line, fenced or fence


def outside_code(markdown: str, change: Callable[[str], str], needs: str = "") -> str:
    """The markdown with `change` made to its text, not to code blocks and code spans.
    `needs`: text that `change` leaves as it is unless it holds this, left unvisited."""
    return "\n".join(
        line if code or needs not in line else _outside_spans(line, change)
        for line, code in fenced_lines(markdown)
    )


def _outside_spans(line: str, change: Callable[[str], str]) -> str:
    if "`" not in line:  # no code span
        return change(line)
    parts, start = [], 0
    for span in _CODE_SPAN.finditer(line):
        parts += [change(line[start : span.start()]), span.group()]
        start = span.end()
    return "".join([*parts, change(line[start:])])


# A reference definition, "[label]: target", which a reference link elsewhere uses.
_DEFINITION = re.compile(r"^ {0,3}\[(?:[^\[\]\\]|\\.)+\]:[ \t]*<?([^\s>]*)>?.*$", re.MULTILINE)
_WEB = ("http", "https")
_IMAGE = re.compile(r"!\[" + _LINK.pattern.removeprefix(r"(?:!\[|\[)"))
# A kept image while its link is judged: characters of Unicode's private use area.
_MARK_START, _MARK_END = "\ue000", "\ue001"
_MARK = re.compile(f"{_MARK_START}(\\d+){_MARK_END}")


def web_links_only(
    markdown: str, may_name: Callable[[str], bool], *, include_links: bool = True
) -> str:
    """The markdown with only links and images a client may follow: an absolute http(s)
    URL whose host `may_name` allows (web-fetch's own guard decides, without DNS). Any other
    link leaves its text, an image its alt text, an autolink its target as code (which no
    client links), a reference definition nothing, an HTML attribute nothing. Without
    `include_links`, no link is kept, only images, as an HTML page's are. Code is left as
    it is: no client follows it."""
    if "](" not in markdown and "<" not in markdown and "]:" not in markdown:
        return markdown
    rule = _Followed(may_name, include_links=include_links)
    markdown = outside_code(markdown, rule.change)
    if "]:" in markdown:
        markdown = outside_code(markdown, rule.definitions, "]:")
    return markdown


class _Followed:
    """What `web_links_only` keeps of each kind of target."""

    def __init__(self, may_name: Callable[[str], bool], *, include_links: bool) -> None:
        self.may_name = may_name
        self.include_links = include_links

    def followed(self, target: str) -> bool:
        try:
            parts = urlsplit(target.strip())
        except ValueError:
            return False
        host = parts.hostname
        return parts.scheme.lower() in _WEB and bool(host) and self.may_name(host or "")

    def change(self, text: str) -> str:
        """Images first, each kept one set aside as a mark without brackets, so that the link
        around it (`[![alt](image)](target)`, as converters write a linked image) is judged
        too; then links, autolinks and tags."""
        kept: list[str] = []
        # The marks are private-use characters: any the text holds (an icon font's glyph, or
        # one put there to stop the marking) go, so that every link around an image is judged.
        text = text.replace(_MARK_START, "").replace(_MARK_END, "")
        text = _IMAGE.sub(lambda found: self.image(found, kept), text)
        text = _LINK.sub(self.link, text)
        if kept:
            text = _MARK.sub(lambda mark: kept[int(mark.group(1))], text)
        text = _AUTOLINK.sub(self.autolink, text)
        return _HTML_TAG.sub(self.tag, text) if "<" in text else text

    def image(self, found: re.Match[str], kept: list[str]) -> str:
        if not self.followed(found.group(2)):
            return found.group(1)
        kept.append(found.group())
        return f"{_MARK_START}{len(kept) - 1}{_MARK_END}"

    def definitions(self, text: str) -> str:
        return _DEFINITION.sub(self.definition, text)

    def link(self, match: re.Match[str]) -> str:
        image = match.group().startswith("!")
        kept = self.followed(match.group(2)) and (image or self.include_links)
        return match.group() if kept else match.group(1)

    def autolink(self, match: re.Match[str]) -> str:
        kept = self.include_links and self.followed(match.group(1))
        return match.group() if kept else f"`{match.group(1)}`"

    def definition(self, match: re.Match[str]) -> str:
        kept = self.include_links and self.followed(match.group(1))
        return match.group() if kept else ""

    def tag(self, found: re.Match[str]) -> str:
        return _HTML_ATTRIBUTE.sub(self.attribute, found.group())

    def attribute(self, pair: re.Match[str]) -> str:
        if pair.group(1).lower().startswith("on"):
            return ""  # an event handler: no target, and never anything a reader needs
        return pair.group() if self.followed(pair.group(2).strip("\"'")) else ""
