"""The guards for zip-and-XML documents (Word, Excel, PowerPoint, EPUB), applied before any
library opens one: what the libraries do not bound, bounded here.

- A zip bomb: the member count, the total unpacked size and each member's compression ratio
  are read from the central directory before a byte is unpacked (Python's zipfile then
  stops each member at its declared size and checks its CRC, so the directory cannot lie).
- XML bombs: no member may declare a DTD (entity expansion: billion laughs, external
  entities), which none of these formats needs; and each XML member must parse with lxml's
  safe settings (no entities resolved, no network, libxml2's depth limit of 256 kept), so a
  library's recursive walk never meets a deeper tree.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from io import BytesIO

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.files import DOCX, EPUB, PPTX, XLSX

MAX_MEMBERS = 5_000
MAX_UNPACKED = 64 << 20
# Office XML packs at 5 to 30 times; a member above this ratio (and this size) is a bomb.
MAX_RATIO = 200
RATIO_FROM = 1 << 20
_XML_NAME = re.compile(r"\.(?:xml|rels|opf|ncx)$", re.IGNORECASE)
_HTML_NAME = re.compile(r"\.x?html?$", re.IGNORECASE)  # read by the HTML parser, entities and all
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_XHTML_DOCTYPE = re.compile(
    rb"<!DOCTYPE\s+html\s*(?:PUBLIC\s+\"[^\"<>]*\"\s*\"[^\"<>]*\"\s*)?>", re.IGNORECASE
)
# The part that says which kind of package it is.
_KINDS = (("word/document.xml", DOCX), ("xl/workbook.xml", XLSX), ("ppt/presentation.xml", PPTX))


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


def open_package(body: bytes, url: str) -> zipfile.ZipFile:
    """The zip, once its directory says it is no bomb and its XML is safe to parse."""
    try:
        package = zipfile.ZipFile(BytesIO(body))
        _check_directory(package, url)
        for member in package.infolist():
            if _XML_NAME.search(member.filename):
                check_xml(package.read(member), f"{url} ({member.filename})")
            elif _HTML_NAME.search(member.filename):
                _check_dtd(package.read(member), f"{url} ({member.filename})")
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
    return package


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


def check_xml(data: bytes, where: str) -> None:
    """PARSE_ERROR unless the XML declares no DTD (an XHTML doctype aside) and parses within
    libxml2's default limits."""
    import lxml.etree

    _check_dtd(data, where)
    # Element by element, each dropped once read: the check holds no tree.
    events = lxml.etree.iterparse(
        BytesIO(data), resolve_entities=False, no_network=True, huge_tree=False, load_dtd=False
    )
    try:
        for _, element in events:
            element.clear()
    except lxml.etree.XMLSyntaxError as exc:
        raise unreadable(where, f"its XML is malformed or nested too deeply: {exc}") from None


def _check_dtd(data: bytes, where: str) -> None:
    if _DTD.search(_XHTML_DOCTYPE.sub(b"", data, count=1)):
        raise unreadable(where, "it declares a DTD or entities, which documents do not need")


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
