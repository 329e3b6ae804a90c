"""The guards for zip-and-XML documents (Word, Excel, PowerPoint, EPUB), applied before any
library opens one: what the libraries do not bound, bounded here.

- A zip bomb: the member count, the total unpacked size and each member's compression ratio
  are read from the central directory before a byte is unpacked (Python's zipfile then
  stops each member at its declared size and checks its CRC, so the directory cannot lie).
- XML bombs: no member may declare entities or a DTD of its own (an internal subset:
  billion laughs, external entities), which none of these formats needs (a doctype that only
  names a public DTD, as an EPUB 2 table of contents has, declares nothing, and no library
  here loads a DTD); and each XML member must parse with lxml's safe settings (no entities
  resolved, no network, libxml2's depth limit of 256 kept), so a library's recursive walk
  never meets a deeper tree.

What is XML is decided by a member's content, not its name: a library reads the part a
relationship points to, whatever it is called (`xl/worksheets/sheet1.dat`, an EPUB's package
document as `content.dat`). Every member whose text, in whatever encoding it declares or its
byte order mark says, starts with markup is checked: an (X)HTML chapter, which the HTML parser
reads, for a DTD; any other as XML. Each XML member's root element and element count are kept
(`Package.parts`): the readers bound by them what a library would build from a part whole.
"""

from __future__ import annotations

import codecs
import re
import zipfile
import zlib
from io import BytesIO
from typing import Any, NamedTuple

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.reading.files import DOCX, EPUB, PPTX, XLSX

MAX_MEMBERS = 5_000
MAX_UNPACKED = 64 << 20
# Office XML packs at 5 to 30 times; a member above this ratio (and this size) is a bomb.
MAX_RATIO = 200
RATIO_FROM = 1 << 20
# An entity, or a doctype with an internal subset ("[", which may declare them).
_DTD = re.compile(rb"<!ENTITY|<!DOCTYPE[^>\[]*\[", re.IGNORECASE)
# The prolog before a document's root element (declaration, comments, processing
# instructions, a doctype without an internal subset), then the root's name.
_ROOT = re.compile(
    r"\A(?:\s+|<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^\[>]*>)*<(?:[\w.-]+:)?([\w.-]+)", re.DOTALL
)
_DECLARED = re.compile(rb"""\A<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]{1,40})["']""")
_HEAD = 4096  # bytes of a member read to tell whether it is markup
_EBCDIC = b"\x4c\x6f\xa7\x94"  # "<?xm" in EBCDIC, which libxml2 reads too
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Encodings whose bytes the patterns read as they are.
_ASCII = frozenset({"utf-8", "utf8", "us-ascii", "ascii"})
# XML without a byte order mark in UTF-16 or UTF-32 starts with "<" and nulls (XML 1.0, F.1).
_NULLED = (
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00", "utf-16-le"),
    (b"\x00<", "utf-16-be"),
    (_EBCDIC, "cp037"),
)
# The part that says which kind of package it is.
_KINDS = (("word/document.xml", DOCX), ("xl/workbook.xml", XLSX), ("ppt/presentation.xml", PPTX))


class Part(NamedTuple):
    """An XML member as the guard found it: its root element's local name ("" when a long
    prolog hides it), its count of elements."""

    root: str
    elements: int


class Package(NamedTuple):
    """A zip the guards passed, and what they found in its XML members, by name."""

    zip: zipfile.ZipFile
    parts: dict[str, Part]

    def close(self) -> None:
        self.zip.close()


def kind_of(body: bytes | bytearray) -> str | None:
    """The document type of a zip by its members (a download labelled as anything)."""
    if not body.startswith(b"PK\x03\x04"):
        return None
    try:
        with zipfile.ZipFile(BytesIO(body)) as package:
            names = set(package.namelist())
            if "mimetype" in names and package.read("mimetype")[:64].strip() == EPUB.encode():
                return EPUB
    except (zipfile.BadZipFile, OSError, ValueError, KeyError, EOFError):
        return None
    if "[Content_Types].xml" not in names:
        return None
    return next((kind for part, kind in _KINDS if part in names), None)


def open_package(body: bytes, url: str) -> Package:
    """The zip, once its directory says it is no bomb and its markup is safe to parse."""
    try:
        package = zipfile.ZipFile(BytesIO(body))
        _check_directory(package, url)
        parts = {}
        for member in package.infolist():
            part = _check_member(package, member, f"{url} ({member.filename})")
            if part is not None:
                parts[member.filename] = part
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        zlib.error,
        OSError,
        EOFError,
        ValueError,
    ) as exc:
        raise unreadable(url, f"a damaged zip: {exc}") from None
    except (NotImplementedError, RuntimeError) as exc:  # a method zipfile lacks; encryption
        raise unreadable(url, str(exc)) from None
    return Package(package, parts)


def _check_directory(package: zipfile.ZipFile, url: str) -> None:
    members = package.infolist()
    if len(members) > MAX_MEMBERS:
        raise _bomb(url, f"{len(members):,} files in the archive (at most {MAX_MEMBERS:,})")
    unpacked = sum(member.file_size for member in members)
    if unpacked > MAX_UNPACKED:
        raise _bomb(url, f"{unpacked >> 20:,} MiB unpacked (at most {MAX_UNPACKED >> 20} MiB)")
    for member in members:
        ratio = member.file_size / max(member.compress_size, 1)
        if member.file_size > RATIO_FROM and ratio > MAX_RATIO:
            raise _bomb(url, f"{member.filename} packed {ratio:,.0f} to 1 (at most {MAX_RATIO})")


def _check_member(package: zipfile.ZipFile, member: zipfile.ZipInfo, where: str) -> Part | None:
    """A member that is markup checked by its content (see the module's docstring): its
    Part when it is XML, None when it is no markup or (X)HTML."""
    if member.is_dir():
        return None
    with package.open(member) as stream:
        head = stream.read(_HEAD)
    encoding = _markup_encoding(head, where)
    if encoding is None:
        return None
    data = package.read(member)
    # The patterns look for ASCII: text in another encoding is matched once in UTF-8.
    markup = data if encoding in _ASCII else data.decode(encoding, "replace").encode()
    _check_dtd(markup, where)
    root = _ROOT.match(markup[:_HEAD].decode("latin-1"))
    name = root.group(1) if root else ""
    if name.lower() == "html":
        return None
    check_xml(data, where)
    # Elements as the tags that open one: in C over the bytes, where a parse that built them
    # would take seconds for a large part.
    opened = markup.count(b"<") - sum(markup.count(mark) for mark in (b"</", b"<!", b"<?"))
    return Part(name, opened)


def _markup_encoding(head: bytes, where: str) -> str | None:
    """The encoding of a member whose text starts with markup ("<" after any spaces, or
    only spaces so far), from its byte order mark, its nulls or its declaration; None for
    any other member."""
    encoding = next((name for bom, name in _BOMS if head.startswith(bom)), None)
    encoding = encoding or next((name for start, name in _NULLED if head.startswith(start)), None)
    if encoding is None:
        declared = _DECLARED.match(head)
        encoding = declared.group(1).decode("ascii").lower() if declared else "utf-8"
    try:
        found = codecs.lookup(encoding)
    except LookupError:
        found = None
    # A codec that is no text encoding (zlib_codec, base64, rot13) is none a document has.
    if found is None or not getattr(found, "_is_text_encoding", True):
        raise unreadable(where, f"its encoding, {encoding}, is not one web-fetch reads")
    text = found.incrementaldecoder("replace").decode(head)
    start = text.lstrip("\ufeff \t\r\n")[:1]
    return encoding if head and start in ("<", "") else None


def check_xml(data: bytes, where: str) -> None:
    """PARSE_ERROR unless the XML parses within libxml2's default limits (nesting at most
    256 deep), resolving no entity and reaching no network; no tree is built."""
    import lxml.etree

    # A target without start, end or data methods: lxml then calls no Python per element.
    target: Any = _Nothing()
    parser = lxml.etree.XMLParser(
        target=target, resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False
    )
    try:
        lxml.etree.fromstring(data, parser)
    except lxml.etree.XMLSyntaxError as exc:
        raise unreadable(where, f"its XML is malformed or nested too deeply: {exc}") from None


class _Nothing:
    """A parser target that keeps nothing: the parse alone is the check."""

    def close(self) -> None:
        return None


_DECLARES = "it declares entities or a DTD of its own, which documents do not need"


def _check_dtd(markup: bytes, where: str) -> None:
    if _DTD.search(markup):
        raise unreadable(where, _DECLARES)


def unreadable(where: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.PARSE_ERROR,
        f"The document at {where} could not be read ({why}). Look for a PDF or HTML version.",
    )


def _bomb(url: str, why: str) -> ToolError:
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"The document at {url} unpacks to too much to read ({why}). Look for a smaller "
        "version, or a PDF or HTML one.",
    )
