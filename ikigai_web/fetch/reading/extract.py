"""The extract stage: HTML to clean markdown of the main content, the way the page's type
carries it.

The page type is decided first (pagetype.py). Articles that declare themselves go to
trafilatura, checked against readability-lxml when the page does not confirm its text (see
`_main_markdown`); the other pages keep their main region, the way their type carries content
(typed.py).
Markdown comes from trafilatura's serializer or from html-to-markdown, tidied the same way.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from copy import deepcopy
from dataclasses import replace
from functools import cache, lru_cache
from secrets import token_hex
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.text import lazy, without_escapes
from ikigai_web.fetch.reading.document import Decoded, Document

if TYPE_CHECKING:
    from collections.abc import Iterator

    from lxml.html import HtmlElement

    from ikigai_web.fetch.reading.cascade import Sheet
    from ikigai_web.fetch.reading.signals import Signals

# Captions describe an image rather than carry the article; the image's alt text stays.
_CAPTIONS = '//figcaption | //*[contains(@class, "caption") and not(.//img)]'
# Never content, whatever the mode.
_NEVER = "//script | //style | //template | //svg | //iframe | //object | //embed"
_SOURCES = frozenset({"source", "track"})  # what a <video> or <audio> plays
# What a reader of the whole page never sees.
_HIDDEN = '//*[@hidden] | //*[contains(translate(@style, " ", ""), "display:none")]'
_LANGUAGE = lazy(r"(?:^|\s)(?:language|lang)-([\w+#.-]+)")
_FENCE = re.compile(r"^(`{3,})\n(.*?)\n\1$", re.MULTILINE | re.DOTALL)
_ONE_LINE_CODE = re.compile(r"^`([^`\n]+)`$\n?", re.MULTILINE)
_WORD = re.compile(r"\w+")
_FRAMES = 4  # inline frames looked at, at most, on a page without words of its own
_ITEM = re.compile(r"^( *)(\d+\.|-) ")
# Share of control characters, in the first 64 KiB, above which the input is not text at all.
_CONTROL_SET = bytes(range(0x01, 0x09)) + b"\x0b" + bytes(range(0x0E, 0x20)) + b"\x7f"
_MAX_CONTROL = 0.05
# What XML forbids in text (C0 controls but tab, line feed and carriage return; U+FFFE, U+FFFF),
# raw or as a character reference: lxml keeps it in the tree, and trafilatura and readability,
# which build XML from that tree, then give up on the whole page. A browser shows none of it
# (a form feed is white space, and becomes a space). Removed from the UTF-8 bytes the parser
# reads, where a control character is one byte: three times faster than a regex on the text.
_FORM_FEED = bytes.maketrans(b"\x0c", b" ")
_CONTROL_BYTES = bytes(range(0x01, 0x09)) + b"\x0b" + bytes(range(0x0E, 0x20))
_CONTROL_REF = lazy(
    rb"&#(?:0*(?:[1-8]|1[124-9]|2\d|3[01])(?!\d)|[xX]0*(?:[1-8bcefBCEF]|1[\da-fA-F])(?![\da-fA-F]));?"
)
_ESCAPE_REF = lazy(r"&#(?:0*27(?!\d)|[xX]0*1[bB](?![\da-fA-F]));?")  # ESC written as a reference
# Where the page had an ESC, and a BEL beside one (see _xml_bytes): noncharacters XML allows.
_ESC_MARK, _BEL_MARK = "\ufdd0", "\ufdd1"
_NONCHARACTERS = (b"\xef\xbf\xbe", b"\xef\xbf\xbf")  # U+FFFE, U+FFFF
_SAMPLE = 65536
# `_choose` thresholds, over word 4-gram multisets of the two outputs.
# _LITTLE: 0.6 and 0.7 did equally on dev/, broad-dev/ and wcxb-dev/ (one page gained), and
# better than 0.5 and 0.8; 0.7 did better on the other 1,127 WCXB dev pages.
_LITTLE = 0.7  # trafilatura found under 70% of what readability found...
_INSIDE = 0.9  # ...and readability's text contains it: trafilatura stopped short.
_SUBSET = 0.95  # readability's text lies within trafilatura's...
_EXTRA = 0.8  # ...which adds over 20% more: navigation or teasers trafilatura kept...
_PART = 1 / 3  # ...but not when readability's is under a third of it: a part it picked alone,
_RUNNING = 1.5  # ...nor when trafilatura's holds 1.5 times its prose: the added text is text.
_LAYOUT_ROWS = 0.5  # most of trafilatura's lines are table rows, none of them prose...
_LAYOUT_CELL = 50  # ...and a cell holds a paragraph's words: a page laid out in a table
_ARTICLE_BODY = "//*[@itemprop='articleBody']"
_WITHIN = 0.9  # trafilatura's text lies in the page's marked article body...
_COVERS = 0.7  # ...and covers most of it: no second opinion is needed...
_MARKED_SHARE = 0.2  # ...when the marking holds a fifth of the page's text, not a lone box
# Nor is it needed when trafilatura's text holds half the page's words and nearly all of them
# are running text (fitted on dev/ and broad-dev/, confirmed on wcxb-dev-full/).
_HALF_THE_PAGE = 0.5
_ALL_PROSE = 0.9
_APART = 0.5  # neither text has half of its 4-grams in the other: they disagree
# A text that holds a tenth of its words between the passages it shares with the other, where
# the other has none, kept what the other skipped inside the article (a table, a list, a
# section); text before or after the shared passages is a header or teasers. Chosen on dev/,
# broad-dev/, wcxb-dev/ and the WCXB dev pages outside it whose id's CRC-32 is even; reported
# on the odd ones.
_BETWEEN = 0.1
# Both texts hold under a fifth of the page's words: trafilatura's own fallbacks look further
# (found on WCXB dev pages outside wcxb-dev/; no page of dev/, broad-dev/ or wcxb-dev/ changes).
_SCANT = 0.2
_MAX_WORDS = 50_000  # enough to compare two texts, and bounds the time on huge pages
_TITLE_WORDS = 3  # a leading heading this long found inside the title repeats it
_LARGE = 500_000  # characters of markdown beyond which readability is not run
# Bounds on huge pages. Time and memory follow the number of tree nodes more than the bytes:
# measured here, each tag or attribute costs about 1 KB at peak (trafilatura copies the tree
# several times), each character of text about 30 B and each character of any other attribute
# value than a link, an image source, an alt text or a title (which are copied into Python and
# into the markdown as text is) about 8 B: lxml keeps it once, as a C string, and the JSON,
# srcset and class lists that make modern shop pages megabytes long are never read. All over
# some 40 MB of interpreter and libraries; the host kills a tool at 30 s and issue 4 allows
# 150 MB. So a page's cost is its tags and attributes plus its text / _NODE_CHARS and those
# attribute values / _VALUE_CHARS. Up to _LARGE_COST (the heaviest of the 61 Zyte dev pages
# costs 8,300 without its scripts) a page converts as it comes. Above it, what is never
# content goes first; a page still above it skips readability's second opinion (which would
# double the cost); beyond _MAX_COST it is cut. Every shape of 10 MiB page tried (dense text,
# tiny elements, links, attribute lists, long attribute values, tables, lists, one huge <pre>)
# then converts in under 4 s and peaks under 115 MB, and a cut still leaves up to 2 MB of
# markdown (0.5 MB of a dense article) to page through.
_NODE_CHARS = 32
_VALUE_CHARS = 128
_LARGE_COST = 20_000
_MAX_COST = 64_000
# Text: what follows a tag (a piece's leading text is dropped first, see _markup). A pattern
# that starts with a literal is searched for by it: five times faster than `(?:^|>)[^<]+`.
_TEXT = re.compile(r">[^<]+")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")  # an attribute's quoted value
# The values that become text and links (Python strings, markdown) and cost as text does.
# Searched for by their "=" (four times faster than by the name before it); a value whose
# "=" follows a space is counted too, whatever its name: the higher cost, never the lower.
_COPIED = re.compile(
    r"=(?:(?i:(?<=\shref=)|(?<=\ssrc=)|(?<=\salt=)|(?<=\stitle=))|(?<=\s=))"
    r"\s*(\"[^\"]*\"|'[^']*')"
)
_CHUNK = 1 << 18
_WORD_SEARCH = 1000  # characters back from the cut to look for a line or word end
# What `bound` removes from a large page before parsing: never content (see _NEVER), and
# base64 payloads, which only make a page look larger.
_RAW_START = re.compile(r"<!--|<(script|style|svg|noscript|template)\b", re.IGNORECASE)
_RAW_END = {
    name: re.compile(rf"</{name}\s*>", re.IGNORECASE)
    for name in ("script", "style", "svg", "noscript", "template")
}
_DATA = re.compile(r"data:[^,\"'\s]{0,100}?;base64,[A-Za-z0-9+/=]+")
# What a page declares about itself (JSON-LD: its type, a product's price, a date) and the
# data an app renders from are read from scripts (signals.py): `_strip` sets such scripts
# aside, up to _KEPT_DECLARED characters in all, so a large page is read as a small one is.
_DECLARED = lazy(
    r"""[^>]{0,500}?\b(?:type\s*=\s*["']?application/(?:ld\+)?json"""
    r"""|id\s*=\s*["']?__N(?:EXT|UXT)_DATA__)""",
    re.IGNORECASE,
)
_NUXT = re.compile(r"[^>]{0,500}>\s*window\.__NUXT__")
_SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
_SCRIPT_TYPE = re.compile(r"""\btype\s*=\s*["']?([^"'>]*)""", re.IGNORECASE)
# The script types a browser runs (HTML's JavaScript MIME types, modules); any other type is
# a data block, such as JSON-LD, that no browser runs.
_RUNNABLE = re.compile(
    r"(?:(?:text|application)/(?:x-)?(?:java|ecma|j|live)script|module)?", re.IGNORECASE
)
_KEPT_DECLARED = 1_000_000
# Markup nesting: libxml2 keeps 256 levels; deeper tags are dropped (their text kept) below this.
_MAX_DEPTH = 64
_TAG = re.compile(r"<(/?)([a-zA-Z][^\s/>]*)[^>]*?(/?)>")
_VOID = frozenset(
    [
        "area",
        "base",
        "br",
        "col",
        "embed",
        "hr",
        "img",
        "input",
        "link",
        "meta",
        "param",
        "source",
        "track",
        "wbr",
    ]
)
# readability's `clean`, measured (see `_cleaned_length`).
_SPACE_RUN = re.compile(r"\s{2,}")
_TABS = re.compile(r"\t|[ \t]{2,}")
_LONG_RUN = 255
_ISO_DATE = re.compile(r"^\d{4}-\d\d-\d\d")
# JSON-LD types whose description describes the page itself (not its publisher's).
_DESCRIBED = (
    "article", "newsarticle", "blogposting", "techarticle", "scholarlyarticle", "report",
    "webpage", "aboutpage", "product", "event", "recipe", "howto", "course",
)  # fmt: skip
_NOFRAMES = 200_000  # characters of a frameset's <noframes> read as its body
_SHELL_WORDS = 50  # fewer words outside <noscript> than this: the page needs JavaScript
_NOSCRIPT_TEXT = "boolean(//body//noscript[normalize-space()])"
# A type's region gives way to the article candidate when over this share of its text is link
# text, it is _LONGER times the article's length, and it holds no more prose (_boilerplate).
_LINK_DENSE = 0.3
_LONGER = 1.5
_FEW = 30  # words: a type's region this short may have missed the content
_PROSE_LINE = 12  # words: a line of running text...
_TEASER = ("...", "\u2026")  # ...unless it ends in an ellipsis: a teaser of another page
_LINK_TEXT = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
# What a browser draws around an inline <q>, and around one nested in it.
_QUOTE_MARKS = (("\u201c", "\u201d"), ("\u2018", "\u2019"))
_DASHES = ("\u2014", "\u2013", "\u2015", "-", "~")  # an attribution that has its own dash
_DEEP_MARKUP = {
    "code": "DEEP_MARKUP",
    "message": "The page nests its HTML deeper than the parser keeps (256 levels): the "
    "deepest tags were flattened, so their text is here but some of its structure (lists, "
    "tables, emphasis) may be lost.",
}
NEEDS_JAVASCRIPT = (
    "The page is filled in by JavaScript and its HTML carries next to no text, nor data "
    "web-fetch can read: the content is not available here."
)
ELSEWHERE = "Look for another source, an API or a feed for the same content."
_NEEDS_JAVASCRIPT = {"code": "NEEDS_JAVASCRIPT", "message": f"{NEEDS_JAVASCRIPT} {ELSEWHERE}"}


def extracted(decoded: Decoded, url: str, *, full_page: bool, include_links: bool) -> Document:
    """The extract stage: an HTML page's Document (see html_to_markdown), its text bounded
    first (see bound) and let go, so that a cut page's whole text is freed before its tree is
    built; the Document a reader made of any other type, as it is."""
    if decoded.document is not None:
        return decoded.document
    page = bound(decoded.take_html())
    return html_to_markdown(page, url, full_page=full_page, include_links=include_links)


def html_to_markdown(
    html: str | Bounded, url: str, *, full_page: bool = False, include_links: bool = True
) -> Document:
    """Markdown of the page's main content (or of the whole page with `full_page`).

    The page type is decided first and the extraction follows it (see `_extract`); the type
    is given only when it is clear (pagetype.decide), an unclear one reads the page all the
    same. Relative links and image sources are resolved against `url`, the page's final URL.
    A page too large to convert in time and memory is cut (see `bound`, which a caller may
    apply first to drop its whole text early): the markdown then ends with a note saying so.
    """
    from ikigai_web.fetch.reading import walls
    from ikigai_web.fetch.reading.hidden import reached, remove_unseen
    from ikigai_web.fetch.reading.hidden import warning as hidden_warning
    from ikigai_web.fetch.reading.markdown import tidy
    from ikigai_web.fetch.reading.pagetype import detect
    from ikigai_web.fetch.reading.policies import POLICIES

    page = html if isinstance(html, Bounded) else bound(html)
    parsed = _parse(
        page.html, url, declared=page.declared, scripted=page.scripted, styles=page.styles
    )
    tree, signals = parsed.tree, parsed.signals
    clues = walls.clues(tree, signals, url)  # before extraction prunes the tree
    if not clues.words and (framed := _framed(page.html)) is not None:
        # A page whose only words are in a frame's own document: what a person sees is that
        # document (a wall drawn in an <iframe srcdoc>, a consent message, a check).
        inner = html_to_markdown(framed, url, full_page=full_page, include_links=include_links)
        return inner if inner.title else replace(inner, title=clues.title or None)
    guess = detect(tree, url, signals)  # as before: hidden parts are a part of its shape
    page_type = guess.name
    unseen = remove_unseen(tree, parsed.sheet)
    without_escape_sequences(tree)
    quotations(tree)
    meta = _metadata(tree, url, signals, dated=POLICIES[page_type].dated)
    if full_page:
        body = _page_markdown(tree, include_links=include_links)
    else:
        body, page_type = _extract(
            tree, page_type, signals, include_links=include_links, large=page.large
        )
        body = tidy(body)
        body = body if POLICIES[page_type].named else drop_title(body, meta["title"])
    warnings = list(parsed.warnings)
    if words := reached(unseen, body):
        warnings.append(hidden_warning(words))
    if parsed.shell and not full_page and not _words(body):
        from ikigai_web.fetch.reading.embedded import embedded_markdown

        body = tidy(embedded_markdown(signals, include_links=include_links), url)
    # A cut page lost its text; a shell's only line may be its <noscript> asking for scripts.
    booting = False
    # (A shell whose <noscript> explains at length why its app did not load waits all the same.)
    waits = parsed.loading or _waits_for_scripts(body, page.html)
    if parsed.shell and not page.note and waits:
        warnings.append(_NEEDS_JAVASCRIPT)
        booting = walls.boots_an_app(body, page.html)
    # A framework's own loading or error line (Blazor's "An unhandled error has occurred")
    # is no error page: its app has not run yet.
    verdict = None if booting else walls.judge(clues, body, page.html, scripted=parsed.scripted)
    warnings += walls.warnings(verdict, body)
    if page.note:
        body, cut = _cut_off(body, page.note)
        warnings.append(cut)
    return Document(
        markdown=body,
        **meta,
        product=_product(signals, page_type),
        page_type=page_type if guess.sure else None,
        # A check the page's scripts pass by themselves is rendered as an app shell is; no
        # other wall is worth a browser.
        app_shell=(verdict.javascript if verdict else parsed.shell) and parsed.scripted,
        wall=verdict.wall if verdict else None,
        maybe_not_found=(maybe := verdict is None and walls.maybe_not_found(clues, body, url)),
        leads_nowhere=maybe and clues.leads_nowhere,
        stands_in=maybe and walls.stands_in(clues, body, url),
        warnings=warnings,
    )


def quotations(tree: HtmlElement) -> None:
    """Quotations as a reader of the page sees them, whichever converter writes them: an
    inline <q> in the quotation marks a browser draws around it (trafilatura would make a
    paragraph of it), and a block quote's attribution in the quote, as its last paragraph,
    starting with a dash: a <footer> of the quote or a <cite> that ends it (trafilatura drops
    both), the <figcaption> of a <figure> that holds it (the article path drops captions, as
    an image's), or a <cite> right after it."""
    from lxml import etree

    for inline in tree.iter("q"):
        nested = sum(1 for _ in inline.iterancestors("q")) % 2
        opening, closing = _QUOTE_MARKS[nested]
        inline.text = opening + (inline.text or "")
        if len(inline):
            inline[-1].tail = (inline[-1].tail or "") + closing
        else:
            inline.text += closing
    etree.strip_tags(tree, "q")
    for quote in list(tree.iter("blockquote")):
        for credit in _credits(quote):
            _credited(quote, credit)


def _credits(quote: HtmlElement) -> list[HtmlElement]:
    """The elements that say whose words `quote` holds (see `quotations`)."""
    found = [child for child in quote if child.tag == "footer"]
    last = quote[-1] if len(quote) else None
    if last is not None and last.tag == "cite" and not (last.tail or "").strip():
        found.append(last)
    holder = quote.getparent()
    if holder is not None and holder.tag == "figure":
        found += [child for child in holder if child.tag == "figcaption"]
    after = quote.getnext()
    if after is not None and after.tag == "cite" and not (quote.tail or "").strip():
        found.append(after)
    return [credit for credit in dict.fromkeys(found) if credit.text_content().strip()]


def _credited(quote: HtmlElement, credit: HtmlElement) -> None:
    """`credit` moved to the end of `quote` as a paragraph, after a dash (unless it has one);
    the text that followed it stays where it was."""
    if credit.tail and credit.tail.strip():
        before, holder = credit.getprevious(), credit.getparent()
        if before is not None:
            before.tail = (before.tail or "") + credit.tail
        elif holder is not None:
            holder.text = (holder.text or "") + credit.tail
    credit.tail = None
    credit.tag = "p"
    credit.attrib.clear()  # a class such as "caption" would have it dropped as one
    if not credit.text_content().lstrip().startswith(_DASHES):
        credit.text = "\u2014 " + (credit.text or "").lstrip()
    quote.append(credit)


class Bounded(NamedTuple):
    """The part of a page that is converted, and the note to end its markdown with if cut."""

    html: str
    large: bool = False  # big enough to skip the costly second opinion
    note: str = ""  # when the page was cut: "too large to convert whole (sizes)..."
    declared: str = ""  # the data scripts set aside from a large page's HTML (see _strip)
    scripted: bool = False  # scripts were stripped from it
    styles: str = ""  # the style sheets stripped from it, whose rules may hide text (hidden.py)


def bound(html: str) -> Bounded:
    """The page as it will be converted: whole when small, else without what is never
    content (scripts, styles, SVG, comments, base64 data) and, when still too large, cut at a
    tag boundary with a note naming the sizes. The scripts that say what the page is and
    hold an app's data are kept aside (`Bounded.declared`), and their cost counted.
    """
    if not _exceeds(html, _LARGE_COST):
        return Bounded(html)
    from ikigai_web.fetch.reading.cascade import style_text

    return _lean(html)._replace(styles=style_text(html))


def _lean(html: str) -> Bounded:
    lean, declared = _strip(html)
    scripted = any(_runs(_type_of(tag[1])) for tag in _SCRIPT.finditer(html))
    spent = len(declared) / _VALUE_CHARS  # held once, as a value is, until parsed
    if not _exceeds(lean, _LARGE_COST - spent):
        return Bounded(lean, declared=declared, scripted=scripted)
    # Inline images are kept on normal pages (full-page mode shows them) but not at any size.
    lean, inlined = _DATA.subn("data:,", lean)
    if inlined and not _exceeds(lean, _LARGE_COST - spent):
        return Bounded(lean, declared=declared, scripted=scripted)
    end = _cut_at(lean, _MAX_COST - spent)
    if end is None:
        return Bounded(lean, large=True, declared=declared, scripted=scripted)
    note = (
        f"too large to convert whole ({_size(len(html))} of HTML, "
        f"{_size(len(lean))} without scripts, styles and inline data). Only its first "
        f"{_size(end)} ({end * 100 // len(lean)}%) were converted"
    )
    return Bounded(lean[:end], large=True, note=note, declared=declared, scripted=scripted)


def _cut_off(markdown: str, note: str) -> tuple[str, dict[str, str]]:
    """The markdown of a cut page, ended by a note where its content stops; and a TOO_LARGE
    warning saying the same to a caller who pages through it and may never see the end."""
    rest = "and the rest of the page is not available from web-fetch"
    ended = f"> [web-fetch: this page is {note}: the content above stops there, {rest}.]"
    said = f"This page is {note}: a note ends the content there, {rest}."
    return (f"{markdown}\n\n{ended}" if markdown else ended), {"code": "TOO_LARGE", "message": said}


def _exceeds(html: str, budget: float) -> bool:
    """Whether converting `html` costs more than `budget` tree nodes (see _NODE_CHARS)."""
    spent = 0.0
    for start, end in _chunks(html, 0, len(html)):
        spent += _chunk_cost(html, start, end)
        if spent > budget:
            return True
    return False


def _chunks(html: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """(start, end) of successive pieces of `html[start:end]`, each ending at a tag's start."""
    while start < end:
        stop = html.find("<", min(start + _CHUNK, end), end)
        stop = end if stop < 0 else stop
        yield start, stop
        start = stop


def _chunk_cost(html: str, start: int, end: int) -> float:
    # Each attribute follows a run of white space inside a tag, outside quoted values (with
    # or without a value: counting "=" would miss `<p a b c ...>`; a tag indented over many
    # lines has no more attributes for it). Piece by piece, so the substitutions' own lists
    # of pieces stay short.
    markup = _markup(html[start:end])
    unquoted = _QUOTED.sub("", markup)
    values = len(markup) - len(unquoted) - sum(map(len, _COPIED.findall(markup)))
    attributes = max(len(unquoted.split()) - 1, 0)
    chars = (end - start - values) / _NODE_CHARS + values / _VALUE_CHARS
    return html.count("<", start, end) + attributes + chars


def _markup(piece: str) -> str:
    """The piece with each run of text (its leading one too) replaced by ">"."""
    if piece[:1] not in ("<", ""):
        start = piece.find("<")
        piece = ">" + piece[start:] if start >= 0 else ">"
    return _TEXT.sub(">", piece)


def _strip(html: str) -> tuple[str, str]:
    """The HTML without comments, scripts, styles, SVG, <noscript> and <template>, in one
    pass (an unclosed one runs to the end, as a browser reads it); and the scripts of data
    among them (`_DECLARED`), up to _KEPT_DECLARED characters in all."""
    parts, kept, pos, room = [], [], 0, _KEPT_DECLARED
    while start := _RAW_START.search(html, pos):
        parts.append(html[pos : start.start()])
        if start.group(1) is None:
            end = html.find("-->", start.end())
            pos = len(html) if end < 0 else end + 3
            continue
        close = _RAW_END[start.group(1).lower()].search(html, start.end())
        pos = close.end() if close else len(html)
        if close and pos - start.start() <= room and _is_data(html, start):
            kept.append(html[start.start() : pos])
            room -= pos - start.start()
    parts.append(html[pos:])
    return "".join(parts), "".join(kept)


def _is_data(html: str, start: re.Match[str]) -> bool:
    """Whether the script that `start` opens holds data (see _DECLARED)."""
    if start.group(1).lower() != "script":
        return False
    return bool(_DECLARED.match(html, start.end()) or _NUXT.match(html, start.end()))


def _cut_at(html: str, budget: float) -> int | None:
    """Where to cut `html` to keep within `budget`; None if it fits.

    At a tag's start; or, in a long text (one huge <pre>), after its last line or word.
    """
    spent = 0.0
    for start, end in _chunks(html, 0, len(html)):
        cost = _chunk_cost(html, start, end)
        if spent + cost > budget:
            return _cut_in(html, start, end, budget - spent)
        spent += cost
    return None


def _cut_in(html: str, start: int, end: int, budget: float) -> int:
    """The cut in `html[start:end]`, the piece where the budget left runs out."""
    low, high = start, end
    while low < high:  # the longest prefix of the piece within the budget
        middle = (low + high + 1) // 2
        fits = _chunk_cost(html, start, middle) <= budget
        low, high = (middle, high) if fits else (low, middle - 1)
    opened, closed = html.rfind("<", 0, low), html.rfind(">", 0, low)
    if opened > closed:
        return opened
    start = max(low - _WORD_SEARCH, closed + 1)
    end = html.rfind("\n", start, low)
    end = end if end > 0 else html.rfind(" ", start, low)
    return end if end > 0 else low


def _size(chars: int) -> str:
    return f"{chars / 1e6:.1f} million characters" if chars >= 10**5 else f"{chars:,} characters"


class _Parsed(NamedTuple):
    tree: HtmlElement
    signals: Signals
    warnings: tuple[dict[str, str], ...]
    shell: bool  # the HTML shows next to no text without JavaScript
    # ...but a loading line outside its <noscript>, which says more: the line is what the
    # page shows until its scripts run (a <noscript> alone may hold the page's content).
    loading: bool
    scripted: bool  # it has scripts, which may fill it in
    sheet: Sheet  # the rules of its style sheets that may hide text (hidden.py)


def _parse(
    html: str, url: str, *, declared: str = "", scripted: bool = False, styles: str = ""
) -> _Parsed:
    """The document tree, scripts removed and every link made absolute (and safe) against
    `url`; what the page declares about itself is read first, with the `declared` data
    scripts that `bound` set aside. `scripted`: scripts were stripped from `html`. Text a
    person does not see is taken out (hidden.py), by the rules of its style sheets or, when
    `bound` stripped them, of `styles`."""
    from ikigai_web.fetch.reading import walls
    from ikigai_web.fetch.reading.cascade import read_sheet
    from ikigai_web.fetch.reading.links import clean_tree
    from ikigai_web.fetch.reading.signals import read

    text = html.replace("\x00", "")
    if not text.strip():  # a page of no bytes is the empty wall (walls.py), not a parse error
        from ikigai_web.fetch.reading.walls import failure

        raise failure(url, "empty", javascript=False, tried="never")
    sample = text[:_SAMPLE]
    if _controls(sample) > _MAX_CONTROL * len(sample):
        raise ToolError(ErrorCode.PARSE_ERROR, _unparsable(url, "it is binary data, not text"))
    tree, warnings = _tree(text, url)
    _frames_read(tree)
    if declared:  # read with the page, then removed with its other scripts
        tree.extend(_tree(declared.replace("\x00", ""), url)[0].xpath("//script"))
    signals = read(tree)
    scripted = scripted or any(_runs(s.get("type")) for s in tree.iter("script"))
    sheet = read_sheet(tree, styles)  # before <style> goes: its rules may hide text
    _remove(tree, _NEVER)
    _without_fallbacks(tree)
    own = _own_words(tree)
    shell = own < _SHELL_WORDS
    loading = 0 < own <= walls.LOADING_WORDS and bool(tree.xpath(_NOSCRIPT_TEXT))
    for element in list(tree.iter("noscript")):
        # what a browser without JavaScript shows is the content: a shell's <noscript>, and
        # the paywall's notice a page shows such browsers in place of its article
        if shell or walls.paywall_fallback(element):
            element.drop_tag()
    _remove(tree, "//noscript")
    clean_tree(tree, url)
    return _Parsed(tree, signals, warnings, shell, loading and scripted, scripted, sheet)


def _controls(text: str) -> int:
    """How many control characters (_CONTROL_SET) the text holds: each is one byte of its UTF-8,
    which bytes.translate deletes faster than a pattern finds them."""
    data = text.encode("utf-8", "surrogatepass")
    return len(data) - len(data.translate(None, _CONTROL_SET))


def _type_of(attributes: str) -> str | None:
    found = _SCRIPT_TYPE.search(attributes)
    return found[1] if found else None


def _runs(kind: str | None) -> bool:
    """Whether a script of this type attribute runs in a browser (no attribute: it does)."""
    word = (kind or "").split(";", 1)[0].strip()
    return _RUNNABLE.fullmatch(word) is not None


def _tree(text: str, url: str) -> tuple[HtmlElement, tuple[dict[str, str], ...]]:
    """The parsed tree; markup nested deeper than the parser keeps is flattened first, and a
    warning says so (libxml2 stops at 256 levels and silently drops the rest of the page)."""
    import lxml.etree
    import lxml.html

    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True)
    # Every element an HtmlElement, chosen in C: lxml.html's own lookup is Python code run
    # each time any element is touched (forms' special classes are never used here).
    parser.set_element_class_lookup(
        lxml.etree.ElementDefaultClassLookup(
            element=lxml.html.HtmlElement,
            comment=lxml.html.HtmlComment,
            pi=lxml.html.HtmlProcessingInstruction,
            entity=lxml.html.HtmlEntity,
        )
    )
    try:
        tree = lxml.html.document_fromstring(_xml_bytes(text), parser, base_url=url)
        warnings: tuple[dict[str, str], ...] = ()
        if any("depth" in entry.message for entry in parser.error_log):
            flat = _xml_bytes(_flatten(text))
            tree = lxml.html.document_fromstring(flat, parser, base_url=url)
            warnings = (_DEEP_MARKUP,)
    except (lxml.etree.ParserError, ValueError) as exc:
        raise ToolError(ErrorCode.PARSE_ERROR, _unparsable(url, str(exc))) from None
    assert isinstance(tree, lxml.html.HtmlElement)
    return tree, warnings


def _xml_bytes(text: str) -> bytes:
    """`text` as UTF-8 without what XML forbids (see _CONTROL_BYTES); a terminal's ESC, which
    XML forbids too, is kept as _ESC_MARK, so that `without_escape_sequences` takes each whole
    sequence out of the text once the tree is built. Never from the markup: a sequence can
    hold `<`, `>` and quotes, and taking it out there would unmake the tags around it."""
    if "\x1b" in text:
        text = text.replace("\x1b", _ESC_MARK)
    if "&#" in text and _ESCAPE_REF.search(text):
        text = _ESCAPE_REF.sub(_ESC_MARK, text)
    if _ESC_MARK in text and "\x07" in text:  # a BEL may end a control string
        text = text.replace("\x07", _BEL_MARK)
    data = text.encode("utf-8").translate(_FORM_FEED, _CONTROL_BYTES)
    if b"&#" in data:
        data = _CONTROL_REF.sub(b"", data)
    # Looked for in the text, where a search for a character the string cannot hold (most
    # pages' text is stored one byte a character) returns at once.
    if "\ufffe" in text or "\uffff" in text:
        for noncharacter in _NONCHARACTERS:
            data = data.replace(noncharacter, b"")
    return data


def without_escape_sequences(tree: HtmlElement) -> None:
    """The text and attributes of `tree` without a terminal's escape sequences, whole (see
    common/text.py): each ESC was kept as _ESC_MARK by _xml_bytes."""
    if _ESC_MARK not in (tree.text_content() or ""):
        found = any(_ESC_MARK in value for el in tree.iter() for value in el.attrib.values())
        if not found:
            return
    for element in tree.iter():
        element.text, element.tail = _unescaped(element.text), _unescaped(element.tail)
        for name, value in element.attrib.items():
            if _ESC_MARK in value:
                element.set(name, _unescaped(value) or "")


def _unescaped(text: str | None) -> str | None:
    if not text or _ESC_MARK not in text:
        return text
    text = text.replace(_ESC_MARK, "\x1b").replace(_BEL_MARK, "\x07")
    return without_escapes(text).replace("\x1b", "").replace("\x07", "")


def _frames_read(tree: HtmlElement) -> None:
    """A frameset page's body: what its <noframes> says, parsed (the parser keeps it as raw
    text, tags and all), as a browser without frames shows it: a forwarding domain's only
    words ("this domain is parked") are there."""
    import lxml.html

    frameset = tree.find("frameset")
    if frameset is None or tree.find("body") is not None:
        return
    said = "".join(fallback.text or "" for fallback in frameset.iter("noframes"))
    body = lxml.html.fragment_fromstring(said[:_NOFRAMES], create_parent="body")
    frameset.addnext(body)


def _without_fallbacks(tree: HtmlElement) -> None:
    """Every <video> and <audio> without its fallback content, what a browser that cannot play
    it shows instead ("Your browser does not support the video tag."); its sources stay."""
    from lxml import etree

    # The parser knows no <source>: an unclosed one holds the fallback and the next sources.
    for player in list(tree.iter("video", "audio")):
        sources = [
            (source.tag, dict(source.attrib)) for source in player.iterdescendants(*_SOURCES)
        ]
        attributes = dict(player.attrib)
        player.clear(keep_tail=True)
        player.attrib.update(attributes)
        for tag, kept in sources:
            etree.SubElement(player, tag, kept)


def _flatten(html: str) -> str:
    """The HTML without the tags nested deeper than _MAX_DEPTH: all the text stays, the
    structure below that depth is lost."""
    parts, depth, pos = [], 0, 0
    for tag in _TAG.finditer(html):
        closing, name, selfclosing = tag.group(1), tag.group(2).lower(), tag.group(3)
        keep = depth < _MAX_DEPTH
        if closing:
            depth = max(depth - 1, 0)
            keep = depth < _MAX_DEPTH
        elif name not in _VOID and not selfclosing:
            depth += 1
        parts.append(html[pos : tag.start()] + (tag.group(0) if keep else " "))
        pos = tag.end()
    parts.append(html[pos:])
    return "".join(parts)


def _framed(html: str) -> str | None:
    """The document of the page's first inline frame (`srcdoc`) that holds words, when it
    holds no frame of its own (a frame in a frame is not read: each level is a parse)."""
    if "srcdoc" not in html.lower():
        return None
    from lxml import html as lxml_html

    try:
        found = lxml_html.fromstring(html).xpath("//iframe/@srcdoc")
    except (ValueError, lxml_html.etree.ParserError):
        return None
    frames = [str(value) for value in found[:_FRAMES]] if isinstance(found, list) else []
    return next((d for d in frames if "srcdoc" not in d.lower() and _WORD.search(d)), None)


def _waits_for_scripts(body: str, html: str) -> bool:
    """Whether a shell's text is none, its <noscript> line asking for JavaScript, or the
    loading line of a framework that draws the page in the browser."""
    from ikigai_web.fetch.reading import walls

    return not _words(body) or walls.asks_for_javascript(body) or walls.boots_an_app(body, html)


def _own_words(tree: HtmlElement) -> int:
    """The body's words outside <noscript>, counted up to _SHELL_WORDS: below it, the page
    is an app shell, which shows next to nothing unless JavaScript runs."""
    body = tree.find("body")
    if body is None:
        return _SHELL_WORDS
    words = 0
    for text in _visible_text(body):
        words += len(text.split())
        if words >= _SHELL_WORDS:
            break
    return words


def _visible_text(element: HtmlElement) -> Iterator[str]:
    """The text under `element` outside <noscript>, lazily: most pages settle it early."""
    if element.text:
        yield element.text
    for child in element:
        if isinstance(child.tag, str) and child.tag != "noscript":
            yield from _visible_text(child)
        if child.tail:
            yield child.tail


def _unparsable(url: str, why: str) -> str:
    return (
        f"The page at {url} could not be read as HTML: {why}. "
        "Check that the URL points to a web page; try another source for the same content."
    )


def _remove(tree: HtmlElement, xpath: str) -> None:
    for element in tree.xpath(xpath):
        element.drop_tree()


def _metadata(
    tree: HtmlElement, url: str, signals: Signals, *, dated: bool
) -> dict[str, str | None]:
    """Title, author, date, site name and description, from the page's meta tags and JSON-LD
    (trafilatura's readers). The date search through the whole page (htmldate) runs for
    articles only: it costs more than extracting a whole page, and elsewhere a date is rare."""
    from trafilatura.metadata import examine_meta

    from ikigai_web.fetch.reading.placeholders import meaningful

    found: Any = examine_meta(tree)
    if found.author and " " not in found.author:
        found.author = None  # a single word is a handle or a site name more often than not
    found = _from_json_ld(signals, found)
    # What an editor or a CMS writes where nobody gave one ("Untitled Document", "admin").
    description = meaningful(found.description, web_page=True) or meaningful(
        _ld_description(signals), web_page=True
    )
    return {
        "title": meaningful(_title(tree, found.title, found.sitename), web_page=True),
        "author": meaningful(found.author, author=True, web_page=True),
        "date": _date(tree, url, signals) if dated else _declared_date(signals),
        "site_name": found.sitename or None,
        "description": description,
    }


def _from_json_ld(signals: Signals, found: Any) -> Any:
    """trafilatura's metadata with what the page's JSON-LD adds (headline, author, publisher),
    read by trafilatura's own reader from the scripts `signals` parsed before they were
    removed. A script of an unexpected shape adds nothing."""
    from trafilatura.json_metadata import extract_json

    from ikigai_web.fetch.reading.signals import text_of

    for root in signals.roots:
        items = root if isinstance(root, list) else [root]
        schema = [item for item in items if isinstance(item, dict)]
        with contextlib.suppress(AttributeError, KeyError, TypeError, ValueError):
            found = extract_json(schema, found)
    for name in ("title", "author", "sitename"):  # a list or an object where text belongs
        if not isinstance(value := getattr(found, name), str | None):
            setattr(found, name, text_of(value) or None)
    return found


def _ld_description(signals: Signals) -> str | None:
    """The description of the page's main JSON-LD object (an article, a page, a product)."""
    from ikigai_web.fetch.reading.signals import of_type, text_of

    for obj in of_type(signals, *_DESCRIBED):
        if described := text_of(obj.get("description")):
            return described
    return None


def _product(signals: Signals, page_type: str) -> str | None:
    """The facts a product page declares in its JSON-LD (brand, codes, rating, price)."""
    from ikigai_web.fetch.reading.policies import POLICIES
    from ikigai_web.fetch.reading.product import facts

    return facts(signals) if POLICIES[page_type].structured else None


def _title(tree: HtmlElement, declared: str | None, site: str | None) -> str | None:
    """The declared title; else trafilatura's pick, but of the parts of a `<title>` such as
    "Release notes 2.0 | Example Blog", the first that names neither the site nor a domain
    (trafilatura takes the first part without a dot, and so the site's name here)."""
    from trafilatura.metadata import examine_title_element, extract_title

    title = declared or extract_title(tree)
    whole, *parts = examine_title_element(tree)
    if not title or title not in parts:  # not a part of <title> that trafilatura chose
        return title or None
    return next((part for part in parts if part and not _names_site(part, site)), whole)


def _names_site(part: str, site: str | None) -> bool:
    from ikigai_web.common.hostnames import is_bare_host

    return part.casefold() == (site or "").casefold() or is_bare_host(part)


def _date(tree: HtmlElement, url: str, signals: Signals) -> str | None:
    from htmldate import find_date

    declared = _declared_date(signals)
    if declared:
        return declared
    found: str | None = find_date(tree, url=url, extensive_search=False)
    return found


def _declared_date(signals: Signals) -> str | None:
    from ikigai_web.fetch.reading.signals import text_of

    for obj in signals.objects:
        value = text_of(obj.get("datePublished"))
        if _ISO_DATE.match(value):
            return value[:10]
    return None


def _extract(
    tree: HtmlElement,
    page_type: str,
    signals: Signals,
    *,
    include_links: bool,
    large: bool,
) -> tuple[str, str]:
    """The main content as markdown, the way this page type carries it, and the type it was
    read as in the end (article, when a type's region gave way to the article candidate).

    An article goes to trafilatura (with readability as its second opinion): that is what
    trafilatura is made for, and what a page is taken for when the evidence is weak. Every
    other type keeps its main region whole (fetch/reading/typed.py), unless what that gives
    looks like boilerplate next to the article candidate (see `_boilerplate`), is empty, or
    is next to nothing (under _FEW words) where the article candidate is not.
    """
    from ikigai_web.fetch.reading import typed
    from ikigai_web.fetch.reading.policies import POLICIES
    from ikigai_web.fetch.reading.reading_time import drop_reading_times

    if not POLICIES[page_type].items:  # an item's date line keeps its reading time
        drop_reading_times(tree)
    if POLICIES[page_type].article:
        return _main_markdown(tree, include_links=include_links, large=large), page_type
    # The type's extractor prunes the tree in place; the article candidate needs it whole.
    article_tree = deepcopy(tree)
    markdown = typed.extract(tree, page_type, signals, include_links=include_links)
    if _shown_words(markdown) < _FEW:
        # The type's region kept next to nothing (its content sits where the page's markup
        # says menu or hidden): the article candidate, unless the region is not empty and
        # the candidate is as short. The page is still of its type; only a link farm is
        # taken for an article (below).
        article = _main_markdown(article_tree, include_links=include_links, large=large)
        kept = _words(markdown) and _shown_words(article) < _FEW
        return (markdown if kept else article), page_type
    if _link_share(markdown) > _LINK_DENSE and _link_dense_page(article_tree):
        article = _main_markdown(article_tree, include_links=include_links, large=large)
        if _boilerplate(markdown, article):
            return article, "article"
    return markdown, page_type


def _shown_words(markdown: str) -> int:
    """The number of words a reader sees: link targets and image sources are not read."""
    return len(_WORD.findall(_LINK_TEXT.sub(r"\1", markdown)))


def _link_dense_page(tree: HtmlElement) -> bool:
    """Whether much of the page's text is link text: only then can a type's region turn out
    to be a link farm."""
    from ikigai_web.fetch.reading.pagetype import link_share

    return link_share(tree.find("body")) > _LINK_DENSE


def _link_share(markdown: str) -> float:
    """The share of the markdown's visible text that is link text."""
    text = _LINK_TEXT.sub(r"\1", markdown)
    linked = sum(len(m.group(1)) for m in _LINK_TEXT.finditer(markdown))
    return linked / len(text) if text else 0.0


def _boilerplate(markdown: str, article: str) -> bool:
    """A type's markdown that is mostly links, far longer than the article candidate and with
    no more prose than it: navigation kept whole rather than content."""
    if not _words(article):
        return False
    longer = len(_LINK_TEXT.sub(r"\1", markdown)) > _LONGER * len(article)
    prose = _prose_words(article)
    return longer and prose > 0 and prose >= _prose_words(markdown)


def _prose_words(markdown: str) -> int:
    """Words in lines of running text (not list items, tables, headings or teasers)."""
    lines = (line.strip() for line in markdown.splitlines())
    return sum(
        len(line.split())
        for line in lines
        if len(line.split()) >= _PROSE_LINE
        and not line.startswith(("-", "*", "|", "#", "1."))
        and not line.endswith(_TEASER)
    )


def _main_markdown(tree: HtmlElement, *, include_links: bool, large: bool) -> str:
    """The article's markdown, without the lines that only label a control ("Read more",
    "Share"), as every other page type's."""
    from ikigai_web.fetch.reading.typed import without_controls

    return without_controls(_article_markdown(tree, include_links=include_links, large=large))


def _article_markdown(tree: HtmlElement, *, include_links: bool, large: bool) -> str:
    from lxml import etree

    languages = _code_languages(tree)
    _remove(tree, _CAPTIONS)
    # An underline is how a page draws its links, not emphasis: markdown has no mark for it,
    # and trafilatura would keep it as inline HTML (`[<u>text</u>](...)`) where the page's
    # other converter writes the text alone.
    etree.strip_tags(tree, "u")
    # trafilatura without its own fallbacks first, which halves its time; they run only when
    # readability found another text altogether.
    primary = _trafilatura(tree, include_links=include_links, fast=True)
    if large or (primary and len(primary) > _LARGE):
        # Readability's time grows faster than the page: on a huge page trafilatura alone.
        return _add_languages(primary, languages)
    if _settled(primary, tree):
        return _add_languages(primary, languages)
    fallback = _readability(tree, include_links=include_links)
    if _doubtful(primary, fallback) or _scant(primary, fallback, tree):
        primary = _trafilatura(tree, include_links=include_links, fast=False)
    return _add_languages(_choose(primary, fallback), languages)


def _settled(primary: str, tree: HtmlElement) -> bool:
    """Whether trafilatura's text needs no second opinion from readability, which does
    better only where trafilatura stopped short or added what is not running text (link
    lists, teasers, boxes): the page's own marking of its article body agrees with it, or it
    holds half the page's words, nearly all in lines of prose."""
    page = _body_text(tree)
    if _confirmed(primary, tree, len(page)):
        return True
    words = len(_link_text(primary).split())
    prose = words >= _HALF_THE_PAGE * len(page.split())
    return words > 0 and prose and _prose_words(primary) >= _ALL_PROSE * words


def _confirmed(primary: str, tree: HtmlElement, page: int) -> bool:
    """Whether the page's own marking of its article body (`itemprop="articleBody"`, or its
    one <article>) agrees with trafilatura's text: nearly all of the text lies in it, and it
    covers most of it. A marking that holds a small part of the page's `page` characters of
    text is some box (an FAQ, a card), which proves nothing."""
    marked = tree.xpath(_ARTICLE_BODY) or tree.xpath("//article")
    if len(marked) != 1:
        return False
    if len(marked[0].text_content()) < _MARKED_SHARE * page:
        return False
    ours, theirs = _shingles(primary), _shingles(marked[0].text_content())
    if not ours or not theirs:
        return False
    shared = (ours & theirs).total()
    return shared >= _WITHIN * ours.total() and shared >= _COVERS * theirs.total()


def _doubtful(primary: str, fallback: str) -> bool:
    """Whether trafilatura's quick text needs its own fallbacks: it is empty, much shorter
    than readability's, or mostly not readability's text (another part of the page)."""
    ours, theirs = _shingles(primary), _shingles(fallback)
    if not ours:
        return True
    if not theirs:
        return False
    shared = (ours & theirs).total()
    short = ours.total() < _LITTLE * theirs.total()
    return short or max(shared / ours.total(), shared / theirs.total()) < _APART


def _body_text(tree: HtmlElement) -> str:
    body = tree.find("body")
    return body.text_content() if body is not None else ""


def _scant(primary: str, fallback: str, tree: HtmlElement) -> bool:
    """Whether trafilatura's quick text and readability's both hold a small part of the
    page's words: the article may run on past where both stopped (sections in sibling
    boxes), which trafilatura's full run, with its own fallbacks, finds."""
    most = max(len(_link_text(primary).split()), len(_link_text(fallback).split()))
    return most < _SCANT * len(_body_text(tree).split())


def _choose(primary: str, fallback: str) -> str:
    """trafilatura's markdown unless readability's clearly did better.

    Readability wins when trafilatura stopped short (it found little, all inside readability's
    text, and readability's holds more running text: see `_no_more_prose`) or when trafilatura
    added much to readability's text (teasers, newsletter boxes), as long as readability's is
    not a mere scrap of it (a byline, a caption: a table-laid page whose text readability
    could not score) and what trafilatura added is not running text (sections readability
    left out). _PART and _RUNNING were fitted on dev/, broad-dev/ and the 210 wcxb-dev/ pages,
    and confirmed on the 1,127 other WCXB dev pages.

    Readability also wins when trafilatura kept a table-laid page's layout (see `_layout`)
    and the two texts share at least half of each other: the same text, as paragraphs.

    Where the two texts share their passages, the one that fills the gaps between them wins
    (see `_fills`): what lies between two passages of an article is the article (a table, a
    list, a section one extractor skipped), what lies around them is the page's furniture.
    So trafilatura's additions stay when they fill gaps, and readability's text wins when it
    holds at least half of trafilatura's and fills gaps that trafilatura left.
    """
    ours, theirs = _shingles(primary), _shingles(fallback)
    if not ours:
        return fallback
    if not theirs:
        return primary
    shared = (ours & theirs).total()
    ours_kept, theirs_kept = shared / ours.total(), shared / theirs.total()
    if _layout(primary) and min(ours_kept, theirs_kept) >= _APART:
        return fallback
    if ours.total() < _LITTLE * theirs.total() and ours_kept >= _INSIDE:
        return primary if _no_more_prose(primary, fallback) else fallback
    added = theirs_kept >= _SUBSET and ours_kept < _EXTRA
    if added and theirs.total() >= _PART * ours.total():
        running = _prose_words(primary) > _RUNNING * _prose_words(fallback)
        return primary if running or _fills(primary, fallback) else fallback
    return fallback if ours_kept >= _APART and _fills(fallback, primary) else primary


def _no_more_prose(primary: str, fallback: str) -> bool:
    """Whether trafilatura's text has running text and readability's has no more of it: what
    readability added is lists, captions and links, and trafilatura did not stop short."""
    prose = _prose_words(primary)
    return prose > 0 and _prose_words(fallback) <= prose


def _layout(markdown: str) -> bool:
    """Whether trafilatura's markdown is a table-laid page's layout rather than its text:
    most lines are table rows, no line is prose, and whole paragraphs sit in the cells (a
    table of data has short cells). trafilatura keeps such a layout whole, side columns and
    all, where readability keeps the text."""
    lines = [line for line in markdown.splitlines() if line.strip()]
    rows = [line for line in lines if line.lstrip().startswith("|")]
    if len(rows) <= _LAYOUT_ROWS * len(lines) or _prose_words(markdown):
        return False
    return any(len(cell.split()) >= _LAYOUT_CELL for row in rows for cell in row.split("|"))


def _fills(markdown: str, other: str) -> bool:
    """Whether `markdown` holds text that `other` lacks between the passages the two share
    (at least _BETWEEN of its words), and more of it than `other` holds the other way."""
    between = _between(markdown, other)
    return between >= _BETWEEN and between > _between(other, markdown)


def _between(markdown: str, other: str) -> float:
    """The share of `markdown`'s 4-grams that are not `other`'s and lie between the first
    and the last 4-gram the two share."""
    sequence, theirs = _sequence(markdown), _shingles(other)
    shared = [at for at, shingle in enumerate(sequence) if shingle in theirs]
    if not shared:
        return 0.0
    return (shared[-1] - shared[0] + 1 - len(shared)) / len(sequence)


# The two texts are compared more than once (`_doubtful`, then `_choose`): split them once.
@lru_cache(maxsize=4)
def _shingles(markdown: str) -> Counter[tuple[str, ...]]:
    return Counter(_sequence(markdown))


@lru_cache(maxsize=4)
def _sequence(markdown: str) -> tuple[tuple[str, ...], ...]:
    """The markdown's word 4-grams in order, link and image targets left out."""
    words = _WORD.findall(_link_text(markdown))[:_MAX_WORDS]
    return tuple(zip(words, words[1:], words[2:], words[3:], strict=False))


def _link_text(markdown: str) -> str:
    """Markdown without link and image targets, which would count as words."""
    return re.sub(r"\]\([^)]*\)", "]", markdown)


def _trafilatura(tree: HtmlElement, *, include_links: bool, fast: bool) -> str:
    """trafilatura's markdown of the article: its `extract`, but for quotations, which its
    serializer writes as plain paragraphs (see `_serialized`)."""
    import trafilatura

    # No url: the tree's links are absolute already (links.clean_tree), and trafilatura would
    # resolve each one again.
    document: Any = trafilatura.bare_extraction(
        tree,
        fast=fast,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        include_images=True,
        include_formatting=True,
        include_links=include_links,
    )
    text = _serialized(document.body) if document is not None else ""
    return _fix_indents(text.strip())


def _serialized(body: Any) -> str:
    """The extracted body as markdown, as trafilatura's `extract` writes it, each quotation
    (a block of the body that was a <blockquote>) marked `>` as every other converter marks
    it: otherwise a quoted speaker's words read as the writer's. Each quotation is written
    apart and stands in the body as a one-line paragraph of a token no page can know; were a
    token lost, the body is written as trafilatura writes it."""
    from trafilatura.utils import normalize_unicode
    from trafilatura.xml import xmltotxt

    quotes = [block for block in body if block.tag == "quote"]
    if not quotes:
        return str(normalize_unicode(xmltotxt(body, include_formatting=True)))
    marked, nonce, quoted = deepcopy(body), token_hex(8), {}
    for index, block in enumerate(block for block in marked if block.tag == "quote"):
        token = f"quote{nonce}n{index}"
        alone = deepcopy(block)
        alone.tail = None
        quoted[token] = _quoted(normalize_unicode(xmltotxt(alone, include_formatting=True)))
        stand_in = block.makeelement("p")
        stand_in.text, stand_in.tail = token, block.tail
        marked.replace(block, stand_in)
    text = str(normalize_unicode(xmltotxt(marked, include_formatting=True)))
    lines = text.split("\n")
    if sum(line in quoted for line in lines) != len(quoted):
        return str(normalize_unicode(xmltotxt(body, include_formatting=True)))
    return "\n".join(quoted.get(line, line) for line in lines)


def _quoted(markdown: str) -> str:
    """`markdown` as a block quote: each line after `> `, a blank one `>`."""
    return "\n".join(f"> {line}" if line.strip() else ">" for line in markdown.strip().split("\n"))


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
    from readability.readability import Unparseable

    try:
        summary: str = _readable()(deepcopy(tree)).summary(html_partial=True)
    except Unparseable:
        return ""
    return _to_markdown(summary, include_links=include_links)


@cache
def _readable() -> type[Any]:
    """readability's Document for a tree that `_parse` has cleaned already.

    Its own cleaning (lxml's Cleaner: scripts, styles, comments, script links, `on*`
    attributes) finds nothing left to do here but walks every element and link, a third of
    readability's time; the hidden elements it drops first are still dropped. No url: the
    links are absolute already, and readability would rewrite them all again.
    """
    from readability import Document as Readable
    from readability.readability import REGEXES

    class Cleaned(Readable):  # type: ignore[misc]
        def _parse(self, tree: HtmlElement) -> HtmlElement:
            self.encoding = "utf-8"
            _remove(tree, "//*[@hidden]")
            for element in tree.xpath("//*[@style]"):
                if REGEXES["displayNoneRe"].search(element.get("style")):
                    element.drop_tree()
            return tree

        def get_link_density(self, elem: HtmlElement) -> float:
            # readability's own, with its text lengths measured as `_cleaned_length` does.
            links = sum(_cleaned_length(link.text_content()) for link in elem.findall(".//a"))
            return links / max(_cleaned_length(elem.text_content()), 1)

    return Cleaned


def _cleaned_length(text: str) -> int:
    """The length of readability's `clean(text)`, counted without building the cleaned text.

    readability measures the text of every candidate block (its link density), and its three
    substitutions over those texts took over a third of its time; this takes a sixth of
    theirs, to the same number. `clean` turns a run of white space that holds a line break,
    or is 255 long, into one character; each tab, and each run of spaces and tabs that starts
    with a space, into a space; then it strips the ends. So a single white-space character
    stays one character: only runs shrink.
    """
    text = text.strip()
    length = len(text)
    for match in _SPACE_RUN.finditer(text):  # one run at a time: a list would be all of them
        run = match.group()
        kept = 1 if len(run) >= _LONG_RUN or "\n" in run else len(_TABS.sub(" ", run))
        length -= len(run) - kept
    return length


def _page_markdown(tree: HtmlElement, *, include_links: bool) -> str:
    """The whole page as markdown: no extraction."""
    from ikigai_web.fetch.reading.markdown import element_markdown

    _remove(tree, _HIDDEN)
    body = tree.find("body")
    return element_markdown(body if body is not None else tree, include_links=include_links)


def _to_markdown(html: str, *, include_links: bool) -> str:
    from ikigai_web.fetch.reading.markdown import html_markdown

    return html_markdown(html, include_links=include_links)


def _language(classes: str) -> str | None:
    match = _LANGUAGE.search(classes)
    return match.group(1) if match else None


def _code_languages(tree: HtmlElement) -> dict[str, str]:
    """{code text with whitespace collapsed: language or ""} for the page's code blocks."""
    languages: dict[str, str] = {}
    for pre in tree.iter("pre"):
        classes = " ".join(
            element.get("class", "")
            for element in (pre, *pre.iter("code"), pre.getparent())
            if element is not None
        )
        languages[_squash(pre.text_content())] = _language(classes) or ""
    return languages


def _add_languages(markdown: str, languages: dict[str, str]) -> str:
    """Code blocks as the page has them: labelled fences, and one-line blocks kept as blocks.

    trafilatura writes bare fences, and turns a one-line <pre> into inline code on a line of
    its own; the page's own <pre> elements say which is which.
    """
    if not languages:
        return markdown

    def label(match: re.Match[str]) -> str:
        language = languages.get(_squash(match.group(2)), "")
        return f"{match.group(1)}{language}\n{match.group(2)}\n{match.group(1)}"

    def block(match: re.Match[str]) -> str:
        code = match.group(1)
        language = languages.get(_squash(code))
        return match.group(0) if language is None else f"```{language}\n{code}\n```\n"

    return _ONE_LINE_CODE.sub(block, _FENCE.sub(label, markdown))


def _squash(text: str) -> str:
    return " ".join(text.split())


def drop_title(markdown: str, title: str | None) -> str:
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
