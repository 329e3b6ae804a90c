"""The decode stage: bytes to text, in their charset (header, BOM, <meta>, detection), or to
the Document of a type's reader (files, JSON, plain text, markdown); HTML goes on as text."""

from __future__ import annotations

import codecs
import re
from functools import cache

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.text import codec, header_charset, lazy, python_codec
from ikigai_web.fetch.reading.document import Decoded, Document
from ikigai_web.fetch.reading.files import DOCUMENT_TYPES, OFFICE_TYPES, PDF
from ikigai_web.fetch.reading.files import Reading as Reading  # noqa: PLC0414 - decoded() takes one
from ikigai_web.fetch.reading.tidy import valid_text as valid_text  # noqa: PLC0414 - read here too

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
TEXT_TYPES = frozenset({"text/plain", "text/markdown", "text/x-markdown"})
SNIFF_TYPES = frozenset({"", "application/octet-stream", "binary/octet-stream", "unknown/unknown"})
# The files' types, which their readers in ikigai_web/fetch/reading/files/ read.
FILE_TYPES = DOCUMENT_TYPES
_BOMS = (
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_META = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([a-z0-9_.:-]+)""", re.IGNORECASE)
_XML_DECL = re.compile(rb"""^<\?xml[^>]+encoding\s*=\s*["']([a-z0-9_.:-]+)""", re.IGNORECASE)
_HTML_START = lazy(
    rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html|head|body)[\s>]", re.IGNORECASE | re.DOTALL
)
_PREVIEW = 4096
_NO_CHARSET_SAMPLE = 1 << 20
_CLOSE_CHAOS = 0.1
_PDF_ALIASES = frozenset({"application/x-pdf", "application/acrobat", "text/pdf", "text/x-pdf"})
# The detector names JIS X 0213 supersets; a browser reads such pages as their JIS X 0208 base.
_JIS_BASES = {
    "euc_jis_2004": "euc_jp",
    "euc_jisx0213": "euc_jp",
    "shift_jis_2004": "shift_jis",
    "shift_jisx0213": "shift_jis",
}
# ISO-2022-JP is 7-bit, so valid UTF-8: its escape sequences to JIS X 0208 tell it apart.
_ISO_2022_JP = re.compile(rb"\x1b\$[@B]")
# Unlabelled bytes are UTF-8 with a few bad bytes when valid multi-byte characters outnumber
# the invalid sequences at least this much; legacy CJK encodings score below 0.4 by chance.
_UTF8_MAJORITY = 2
# What orjson says when it refuses JSON that is valid: nested over 1,024 levels, a number
# beyond a double, an escaped lone surrogate (the JSON grammar allows all three).
_VALID_BUT_REFUSED = ("depth limit", "infinity", "surrogate")


def media_type(header: str | None) -> str:
    """`text/html; charset=x` -> `text/html`."""
    return (header or "").split(";", 1)[0].strip().lower()


def declared_charset(body: bytes | bytearray, header: str | None) -> str | None:
    """The charset the response states: BOM, else header, else <meta> or XML declaration."""
    for bom, name in _BOMS:
        if body.startswith(bom):
            return name  # a BOM outranks the header, as in a browser
    found = codec(header_charset(header))
    if found:
        return found
    head = body[:_PREVIEW]
    match = _META.search(head) or _XML_DECL.search(head)
    found = codec(match.group(1).decode("ascii")) if match else None
    # Text that declares UTF-16 in ASCII is not UTF-16 (WHATWG reads it as UTF-8).
    return "utf-8" if found in ("utf-16-le", "utf-16-be") else found


def to_text(body: bytes | bytearray, header: str | None) -> str:
    """The body as text in its declared charset, else UTF-8 if it mostly is, else detected."""
    name = declared_charset(body, header) or _undeclared(body)
    return valid_text(body.decode(name, errors="replace"))


def _undeclared(body: bytes | bytearray) -> str:
    """UTF-8 when the body is UTF-8 but for a few bad bytes, else the detector's guess."""
    sample = bytes(body[:_NO_CHARSET_SAMPLE])
    if sample.isascii() and _ISO_2022_JP.search(sample):
        return "iso2022_jp"
    return "utf-8" if _mostly_utf8(sample) else _detect(sample)


def _mostly_utf8(sample: bytes | bytearray) -> bool:
    """Valid UTF-8, or valid multi-byte characters outnumbering the bad bytes (see above)."""
    text = bytes(sample).decode("utf-8", errors="replace")
    replaced = text.count("\ufffd") - sample.count("\ufffd".encode())
    multibyte = len(text) - len(text.encode("ascii", errors="ignore")) - replaced
    return multibyte >= _UTF8_MAJORITY * replaced


def _detect(body: bytes) -> str:
    """The detector's best guess among the encodings a browser knows, else windows-1252."""
    from charset_normalizer import from_bytes

    matches = [m for m in from_bytes(body) if _browser_codec(m.encoding)]
    if not matches:
        return "cp1252"
    best = matches[0]
    if _single_byte(best.encoding):
        # Unlabelled single-byte pages are mostly windows-1252 (the WHATWG default); the
        # detector often ranks a sibling code page first on short Western text.
        for match in matches:
            if match.encoding == "cp1252" and match.chaos <= best.chaos + _CLOSE_CHAOS:
                return "cp1252"
    return _browser_codec(best.encoding) or "cp1252"


def _browser_codec(detected: str) -> str | None:
    """The WHATWG encoding a detector's Python codec name stands for, if any (utf_7: none)."""
    python = python_codec(detected)
    python = _JIS_BASES.get(python or "", python)
    if python in _whatwg_codecs():
        return python
    spellings = (detected, detected.replace("_", "-"), python)
    return next(filter(None, map(codec, spellings)), None)


@cache
def _whatwg_codecs() -> frozenset[str | None]:
    from webencodings.labels import LABELS

    return frozenset(codec(name) for name in LABELS.values())


def _single_byte(name: str) -> bool:
    return len(bytes(range(256)).decode(name, errors="replace")) == 256


def sniff(body: bytes | bytearray) -> str | None:
    """The content type of an unlabelled body, when it is plainly one we read."""
    found = sniff_file(body)
    if found:
        return found
    head = body[:_PREVIEW].lstrip(b"\xef\xbb\xbf")
    if _HTML_START.match(head):
        return "text/html"
    if head.lstrip()[:1] in (b"{", b"[") and _json_or_none(body) is not None:
        return "application/json"
    if b"\x00" not in head and (_is_utf8(head) or _mostly_utf8(head)):
        return "text/plain"
    return None


def sniff_file(body: bytes | bytearray) -> str | None:
    """A PDF or an Office or EPUB zip by its signature, whatever it was labelled (a download:
    `application/octet-stream`, `application/zip`, `application/x-download`, ...)."""
    if body[:_PREVIEW].lstrip(b"\xef\xbb\xbf").startswith(b"%PDF-"):
        return PDF
    if not body.startswith(b"PK\x03\x04"):
        return None
    from ikigai_web.fetch.reading.files.archive import kind_of

    return kind_of(body)


def _is_utf8(head: bytes | bytearray) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3  # a character cut by the preview's end
    return True


def is_json(kind: str) -> bool:
    return kind == "application/json" or kind.endswith("+json")


def _json_or_none(body: bytes | bytearray) -> object | None:
    import orjson

    try:
        value: object = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        return "" if _refused_valid(exc) else None
    return value


def readable_type(header: str | None, body: bytes | bytearray) -> str:
    """The media type to read the body as, or UNSUPPORTED_CONTENT naming it."""
    kind = media_type(header)
    kind = PDF if kind in _PDF_ALIASES else kind
    if kind in SNIFF_TYPES:
        kind = sniff(body) or kind
    if kind in HTML_TYPES or kind in TEXT_TYPES or kind in OFFICE_TYPES or is_json(kind):
        return kind
    found = sniff_file(body)
    if kind == PDF or found:
        return found or kind
    shown = kind or "no Content-Type"
    raise ToolError(
        ErrorCode.UNSUPPORTED_CONTENT,
        f"The URL returned {shown}, which web-fetch cannot turn into text (it reads HTML, "
        "XHTML, plain text, markdown, JSON, PDF, Word, Excel, PowerPoint and EPUB). Look for "
        "an HTML or PDF version.",
    )


def decoded(
    body: bytearray, header: str | None, url: str, reading: Reading | None = None
) -> Decoded:
    """The decode stage: the body as the media type it is read as, and either its text (HTML,
    for the extractor) or the Document its reader makes (files, JSON, plain text, markdown).

    The body is consumed: emptied as soon as it is decoded, so a 10 MiB page is not held
    twice while the extractor builds its tree. Every string is valid UTF-8 (see valid_text).
    A file (PDF, Office, EPUB) is read from `reading`'s first page, within its deadline.
    """
    kind = readable_type(header, body)
    if kind in FILE_TYPES:
        return Decoded(kind, document=_read_file(kind, body, url, reading or Reading()))
    if kind in HTML_TYPES:
        return Decoded(kind, html=_text_of(body, header))
    if is_json(kind):
        return Decoded(kind, document=json_document(body, header, url))
    from ikigai_web.fetch.reading.links import clean_markdown

    # As they are, but for their links, made safe and absolute as a page's are: a reader may
    # show the text as markdown.
    return Decoded(kind, document=Document(markdown=clean_markdown(to_text(body, header), url)))


def _read_file(kind: str, body: bytearray, url: str, reading: Reading) -> Document:
    data = bytes(body)
    body.clear()
    if kind == PDF:
        from ikigai_web.fetch.reading.files.pdf import pdf_document

        return pdf_document(data, url, reading)
    from ikigai_web.fetch.reading.files.office import office_document

    return office_document(kind, data, url, reading)


def _text_of(body: bytearray, header: str | None) -> str:
    """The body as text; the body is emptied."""
    text = to_text(body, header)
    body.clear()
    return text


def json_document(body: bytes | bytearray, header: str | None, url: str) -> Document:
    """The JSON re-indented in a fence; as sent, with a warning, when it cannot be."""
    import orjson

    text = to_text(body, header)
    try:
        pretty = orjson.dumps(orjson.loads(text), option=orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        return _as_sent(text, "it is nested too deeply")
    except orjson.JSONDecodeError as exc:
        if not _refused_valid(exc):
            raise ToolError(
                ErrorCode.PARSE_ERROR,
                f"{url} says it is JSON but is not valid JSON ({exc}). Fetch another URL.",
            ) from None
        return _as_sent(text, f"the parser refused it ({exc})")
    return Document(markdown=f"```json\n{pretty}\n```")


def _as_sent(text: str, why: str) -> Document:
    note = f"This JSON is shown as sent, not re-indented: {why}."
    warning = {"code": "JSON_AS_SENT", "message": note}
    return Document(markdown=f"```json\n{text.strip()}\n```", warnings=[warning])


def _refused_valid(exc: ValueError) -> bool:
    """Whether orjson refused valid JSON: too deep, a number beyond a double, a lone \\ud800."""
    return any(mark in str(exc) for mark in _VALID_BUT_REFUSED)


def short_text(body: bytes, header: str | None, most: int = 200) -> str:
    """An error page's own words: its <title>, else its first text, trimmed."""
    if not body.strip():
        return ""
    text = to_text(body, header)
    kind = media_type(header) or (sniff(body) or "")
    if kind in HTML_TYPES or _HTML_START.match(body[:_PREVIEW]) or "<html" in text[:2000].lower():
        text = _html_words(text)
    words = " ".join(text.split())
    return words if len(words) <= most else words[: most - 1].rstrip() + "…"


def _html_words(html: str) -> str:
    import lxml.etree
    import lxml.html

    try:
        tree = lxml.html.document_fromstring(html)
    except (lxml.etree.ParserError, ValueError):
        return ""
    for junk in tree.iter("script", "style", "noscript", "template"):
        junk.text = ""
    title = " ".join((tree.findtext(".//title") or "").split())
    return title or " ".join(str(t) for t in tree.itertext())
