"""Documents made to hurt a reader: small on disk, and huge once inflated or once read (a PDF
stream or font that inflates to gigabytes, an EPUB whose spine repeats one chapter, a Word
or PowerPoint part of a million paragraphs, a sheet that claims a million rows, a deck of
100,000 shapes), and others that try the reader's guards (DTDs in parts named as no XML,
nested tables, links to files and private hosts, actions, broken cross-references).

Each is written in memory when asked for, from its size, so nothing large is stored: the
tests (test_documents.py) make small ones and run them under a low memory cap and a
short deadline; `make bench` (bench/bench_documents.py) makes them at the sizes issue 55
reported. A stream of repeated text is deflated once and its compressed block repeated
(`repeated_deflate`), so a gigabyte inflated costs a second to write.
"""

from __future__ import annotations

import io
import random
import zipfile
import zlib

MIB = 1 << 20
_CHUNK = MIB
_WORD_LETTERS = "abcdefghijklmnopqrstuvwxyz"
_POOL = 4096


def repeated_deflate(chunk: bytes, times: int) -> bytes:
    """A zlib stream that inflates to `chunk` repeated `times` times, written in the time
    one chunk takes: each copy is one block that refers to nothing before it (a full flush
    empties the compressor's window), so the same bytes serve every copy."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = compressor.compress(chunk) + compressor.flush(zlib.Z_FULL_FLUSH)
    end = compressor.flush(zlib.Z_FINISH)
    checksum = 1
    for _ in range(times):
        checksum = zlib.adler32(chunk, checksum)
    return b"\x78\xda" + block * times + end + checksum.to_bytes(4, "big")


def _words(count: int, seed: int, longest: int = 7) -> list[str]:
    """Short random words (3 to `longest` letters, from a pool of a few thousand): text that
    deflates a few times, like real text, so a large part keeps an honest compression ratio
    (the zip guard refuses one over 200)."""
    rng = random.Random(seed)
    pool = ["".join(rng.choices(_WORD_LETTERS, k=rng.randint(3, longest))) for _ in range(_POOL)]
    return rng.choices(pool, k=count)


def package(members: dict[str, bytes], *, stored: tuple[str, ...] = ()) -> bytes:
    """A zip of these members, deflated but those named in `stored` (an EPUB's mimetype);
    what tests/fetch/reading/test_documents.py builds its broken packages with too."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package:
        for name, data in members.items():
            method = zipfile.ZIP_STORED if name in stored else zipfile.ZIP_DEFLATED
            package.writestr(name, data, compress_type=method)
    return out.getvalue()


# ------------------------------------------------------------------ PDF


def pdf(objects: list[bytes], *, trailer: bytes = b"") -> bytes:
    """A PDF of these objects, numbered from 1 (the first is the catalog), with a correct
    cross-reference table."""
    out = bytearray(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R %s>>\n" % (len(objects) + 1, trailer)
    out += b"startxref\n%d\n%%%%EOF\n" % xref
    return bytes(out)


def _stream(data: bytes, extra: bytes = b"", *, deflated: bool = False) -> bytes:
    flate = b" /Filter /FlateDecode" if deflated else b""
    head = b"<< /Length %d%s %s>>\nstream\n" % (len(data), flate, extra)
    return head + data + b"\nendstream"


_HELVETICA = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _pages(contents: list[bytes], font: bytes = _HELVETICA, annots: bytes = b"") -> list[bytes]:
    """Catalog, pages, the font (object 3), then each page and its content stream."""
    count = len(contents)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>", b"<< /Type /Pages /Kids [%s] /Count %d >>"
               % (kids, count), font]  # fmt: skip
    for i, content in enumerate(contents):
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font "
            b"<< /F1 3 0 R >> >> /Contents %d 0 R %s>>" % (5 + 2 * i, annots)
        )
        objects.append(content)
    return objects


def _text(line: str, y: int = 700) -> bytes:
    return b"BT /F1 12 Tf 72 %d Td (%s) Tj ET" % (y, line.encode("latin-1"))


def pdf_pages(lines: list[str]) -> bytes:
    """A PDF of one line of text a page."""
    return pdf(_pages([_stream(_text(line)) for line in lines]))


def pdf_content_bomb(inflated: int, *, pages_before: int = 0) -> bytes:
    """A PDF whose last page's content stream inflates to `inflated` bytes of text-showing
    operators (issue 55: 3.6 MB that inflate to 1.5 GB). `pages_before` plain pages come
    first, each with its number."""
    operators = b"BT /F1 12 Tf 72 700 Td (bomb) Tj ET\n"
    chunk = operators * (_CHUNK // len(operators))
    bomb = _stream(repeated_deflate(chunk, max(1, inflated // len(chunk))), deflated=True)
    plain = [_stream(_text(f"Plain page {n}")) for n in range(1, pages_before + 1)]
    return pdf(_pages([*plain, bomb]))


def pdf_font_bomb(inflated: int) -> bytes:
    """A PDF whose one page shows text in an embedded TrueType font whose program inflates
    to `inflated` bytes (issue 55: 1 MB that inflates to 1 GiB)."""
    program = repeated_deflate(bytes(_CHUNK), max(1, inflated // _CHUNK))
    font = (
        b"<< /Type /Font /Subtype /TrueType /BaseFont /Bomb /FirstChar 32 /LastChar 126 "
        b"/Widths [%s] /FontDescriptor 6 0 R >>" % b" ".join([b"500"] * 95)
    )
    objects = _pages([_stream(_text("Text in a heavy font"))], font=font)
    descriptor = (
        b"<< /Type /FontDescriptor /FontName /Bomb /Flags 32 /FontBBox [0 0 1000 1000] "
        b"/ItalicAngle 0 /Ascent 800 /Descent -200 /CapHeight 700 /StemV 80 /FontFile2 7 0 R >>"
    )
    fontfile = _stream(program, b"/Length1 %d " % (max(1, inflated // _CHUNK) * _CHUNK),
                       deflated=True)  # fmt: skip
    return pdf([*objects, descriptor, fontfile])


def pdf_annotations(count: int) -> bytes:
    """A PDF whose one page carries `count` link annotations and a line of text."""
    annotations = [
        b"<< /Type /Annot /Subtype /Link /Rect [%d %d %d %d] /Border [0 0 0] /A << /S /URI "
        b"/URI (https://example.com/%d) >> >>" % (i % 500, i % 700, i % 500 + 5, i % 700 + 5, i)
        for i in range(count)
    ]
    first = 6  # after the catalog, pages, font, page and its content
    refs = b" ".join(b"%d 0 R" % (first + i) for i in range(count))
    objects = _pages([_stream(_text("Annotated page"))], annots=b"/Annots [%s] " % refs)
    return pdf([*objects, *annotations])


def pdf_actions(url: str) -> bytes:
    """A PDF that asks, on opening and from a link, to reach `url`, launch a file, submit a
    form and run JavaScript: a reader must do none of it."""
    uri = url.encode()
    actions = (
        b"<< /S /URI /URI (%s/open) /Next [<< /S /Launch /F (/bin/sh) >> "
        b"<< /S /SubmitForm /F << /FS /URL /F (%s/submit) >> >> "
        b"<< /S /JavaScript /JS (app.launchURL\\('%s/js'\\);) >>] >>" % (uri, uri, uri)
    )
    link = (
        b"<< /Type /Annot /Subtype /Link /Rect [72 690 300 712] /A << /S /URI /URI (%s/link) >> >>"
    )
    objects = _pages([_stream(_text("A page with actions"))], annots=b"/Annots [7 0 R] ")
    objects[0] = b"<< /Type /Catalog /Pages 2 0 R /OpenAction 6 0 R >>"
    return pdf([*objects, actions, link % uri])


def pdf_links(targets: list[str]) -> bytes:
    """A PDF whose one page has a line of text for each target, a link annotation over it."""
    lines = [_text(f"Link {n}", 700 - 20 * n) for n in range(len(targets))]
    links = [
        b"<< /Type /Annot /Subtype /Link /Rect [72 %d 200 %d] /A << /S /URI /URI (%s) >> >>"
        % (700 - 20 * n - 2, 700 - 20 * n + 12, target.encode())
        for n, target in enumerate(targets)
    ]
    refs = b" ".join(b"%d 0 R" % (6 + n) for n in range(len(targets)))
    objects = _pages([_stream(b"\n".join(lines))], annots=b"/Annots [%s] " % refs)
    return pdf([*objects, *links])


def pdf_broken_xref(lines: list[str]) -> bytes:
    """A PDF of these pages whose cross-reference table points at the wrong bytes."""
    body = bytearray(pdf_pages(lines))
    table = body.index(b"xref\n")
    entries = body.index(b"0000000000 65535 f \n", table) + 20
    for at in range(entries, body.index(b"trailer", table), 20):
        body[at : at + 10] = b"%010d" % 7
    return bytes(body)


# ------------------------------------------------------------------ EPUB

CONTAINER = b"""<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="%s" media-type="application/oebps-package+xml"/>
</rootfiles></container>"""


def epub(chapters: dict[str, bytes], spine: list[str], *, opf_name: str = "OEBPS/content.opf",
         opf_head: bytes = b"", members: dict[str, bytes] | None = None) -> bytes:  # fmt: skip
    """An EPUB whose manifest holds `chapters` (href: XHTML) and whose spine lists `spine`
    (hrefs, in order, repeats allowed)."""
    ids = {href: f"c{n}" for n, href in enumerate(chapters)}
    items = "".join(f'<item id="{ids[h]}" href="{h}" media-type="application/xhtml+xml"/>'
                    for h in chapters)  # fmt: skip
    refs = "".join(f'<itemref idref="{ids[h]}"/>' for h in spine)
    opf = (
        opf_head + b'<package xmlns="http://www.idpf.org/2007/opf" version="3.0" '
        b'unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
        b'<dc:title>Hostile</dc:title><dc:identifier id="id">x</dc:identifier></metadata>'
        + f"<manifest>{items}</manifest><spine>{refs}</spine></package>".encode()
    )
    base = opf_name.rpartition("/")[0]
    files = {f"{base}/{href}" if base else href: body for href, body in chapters.items()}
    return package(stored=("mimetype",), members={
        "mimetype": b"application/epub+zip",
        "META-INF/container.xml": CONTAINER % opf_name.encode(),
        opf_name: opf,
        **files,
        **(members or {}),
    })  # fmt: skip


def xhtml(body: str) -> bytes:
    return (
        '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE html>\n<html xmlns='
        f'"http://www.w3.org/1999/xhtml"><head><title>x</title></head><body>{body}</body></html>'
    ).encode()


def epub_repeated_spine(times: int, chapter_bytes: int = 980_000) -> bytes:
    """One chapter of `chapter_bytes` listed `times` times in the spine (issue 55: 4.7 KB,
    a 980 KB chapter 2,000 times): each member is within the archive's limits, read once."""
    paragraph = "<p>The same chapter again, and again, and again.</p>"
    return epub(
        {"ch.xhtml": xhtml(paragraph * (chapter_bytes // len(paragraph)))}, ["ch.xhtml"] * times
    )


# ------------------------------------------------------------------ Word

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_DOCX_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
    b'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-'
    b'officedocument.wordprocessingml.document.main+xml"/></Types>'
)
_RELS = b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">%s</Relationships>'
_OFFICE_DOCUMENT = (
    b'<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
    b'relationships/officeDocument" Target="word/document.xml"/>'
)


def docx(
    body: str, *, relationships: bytes = b"", members: dict[str, bytes] | None = None
) -> bytes:
    """A Word document whose body is `body` (WordprocessingML, prefix w:, r: declared),
    with these relationships of the document part and these further members."""
    document = (
        f'<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="{_W}" xmlns:r="{_R}">'
        f"<w:body>{body}</w:body></w:document>"
    ).encode()
    return package({
        "[Content_Types].xml": _DOCX_TYPES,
        "_rels/.rels": _RELS % _OFFICE_DOCUMENT,
        "word/document.xml": document,
        "word/_rels/document.xml.rels": _RELS % relationships,
        **(members or {}),
    })  # fmt: skip


def paragraph(text: str) -> str:
    return f"<w:p><w:r><w:t>{text}</w:t></w:r></w:p>"


def docx_paragraphs(count: int) -> bytes:
    """A Word document of `count` short paragraphs (issue 55: 1.6 M in 60 MiB, 7.5 MB packed,
    inside every archive limit)."""
    return docx("".join(map(paragraph, _words(count, count, longest=4))))


def docx_nested_tables(depth: int) -> bytes:
    """A Word document whose one table holds a table in its cell, `depth` deep, each level's
    cell starting with a paragraph that names the level."""
    body = paragraph(f"Level {depth}")
    for level in range(depth - 1, 0, -1):
        body = f"<w:tbl><w:tr><w:tc>{paragraph(f'Level {level}')}{body}</w:tc></w:tr></w:tbl>"
        body = body if level == 1 else f"{body}<w:p/>"  # a cell ends with a paragraph
    return docx(body + paragraph("After the tables"))


# ------------------------------------------------------------------ PowerPoint

_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"


def pptx_with(deck: bytes, slide: str) -> bytes:
    """`deck` (a .pptx) with its first slide's shapes replaced by `slide` (PresentationML
    shapes, prefixes p: and a:)."""
    original = zipfile.ZipFile(io.BytesIO(deck))
    members = {name: original.read(name) for name in original.namelist()}
    members["ppt/slides/slide1.xml"] = (
        f'<?xml version="1.0" encoding="UTF-8"?><p:sld xmlns:a="{_A}" xmlns:p="{_P}" '
        f'xmlns:r="{_R}"><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/><p:cNvGrpSpPr/>'
        f"<p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>{slide}</p:spTree></p:cSld></p:sld>"
    ).encode()
    return package(members)


def text_box(shape_id: int, paragraphs: list[str], y: int = 0) -> str:
    texts = "".join(f"<a:p><a:r><a:t>{text}</a:t></a:r></a:p>" for text in paragraphs)
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="{shape_id}" name="Box {shape_id}"/><p:cNvSpPr txBox="1"/>'
        f'<p:nvPr/></p:nvSpPr><p:spPr><a:xfrm><a:off x="0" y="{y}"/><a:ext cx="100" cy="100"/>'
        f"</a:xfrm></p:spPr><p:txBody><a:bodyPr/>{texts}</p:txBody></p:sp>"
    )


def pptx_paragraphs(deck: bytes, count: int) -> bytes:
    """One text box of `count` paragraphs (issue 55: 60 MiB of them)."""
    return pptx_with(deck, text_box(2, _words(count, count, longest=4)))


def pptx_shapes(deck: bytes, count: int) -> bytes:
    """One slide of `count` text boxes (issue 55: 100,000)."""
    words = _words(count, count)
    return pptx_with(deck, "".join(text_box(i + 2, [words[i]], i) for i in range(count)))


# ------------------------------------------------------------------ Excel

_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_XLSX_TYPES = (
    b'<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
    b'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-'
    b'package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
    b'<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-'
    b'officedocument.spreadsheetml.sheet.main+xml"/>%s</Types>'
)
_SHEET_TYPE = (
    b'<Override PartName="/%s" ContentType="application/vnd.openxmlformats-officedocument.'
    b'spreadsheetml.worksheet+xml"/>'
)
_STRINGS_TYPE = (
    b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-'
    b'officedocument.spreadsheetml.sharedStrings+xml"/>'
)


def xlsx(sheets: dict[str, bytes], *, strings: bytes | None = None,
         part_names: dict[str, str] | None = None) -> bytes:  # fmt: skip
    """A workbook of these sheets (name: the worksheet part's XML), with these shared
    strings; `part_names` names a sheet's part otherwise than xl/worksheets/sheetN.xml."""
    parts = {name: (part_names or {}).get(name, f"xl/worksheets/sheet{n}.xml")
             for n, name in enumerate(sheets, 1)}  # fmt: skip
    entries = "".join(f'<sheet name="{name}" sheetId="{n}" r:id="rId{n}"/>'
                      for n, name in enumerate(sheets, 1))  # fmt: skip
    workbook = (f'<?xml version="1.0"?><workbook xmlns="{_S}" xmlns:r="{_R}"><sheets>{entries}'
                "</sheets></workbook>").encode()  # fmt: skip
    rels = b"".join(
        b'<Relationship Id="rId%d" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/worksheet" Target="/%s"/>' % (n, part.encode())
        for n, part in enumerate(parts.values(), 1)
    )
    types = b"".join(_SHEET_TYPE % part.encode() for part in parts.values())
    members = {
        "[Content_Types].xml": _XLSX_TYPES % (types + (_STRINGS_TYPE if strings else b"")),
        "_rels/.rels": _RELS % _OFFICE_DOCUMENT.replace(b"word/document.xml", b"xl/workbook.xml"),
        "xl/workbook.xml": workbook,
        "xl/_rels/workbook.xml.rels": _RELS % (rels + (
            b'<Relationship Id="rId0" Type="http://schemas.openxmlformats.org/officeDocument/'
            b'2006/relationships/sharedStrings" Target="sharedStrings.xml"/>' if strings else b""
        )),
        **{part: sheets[name] for name, part in parts.items()},
    }  # fmt: skip
    if strings:
        members["xl/sharedStrings.xml"] = strings
    return package(members)


def sheet(rows: str, dimension: str = "") -> bytes:
    ref = f'<dimension ref="{dimension}"/>' if dimension else ""
    head = f'<?xml version="1.0"?><worksheet xmlns="{_S}">{ref}'
    return f"{head}<sheetData>{rows}</sheetData></worksheet>".encode()


def xlsx_claimed_dimension(sheets: int = 6) -> bytes:
    """Sheets whose dimension claims A1:AX1048576, each a cell in its first and last corner
    and nothing between (issue 55: 3 KB, six sheets): a reader that fills in the rows between
    makes 50 million empty cells."""
    rows = (
        '<row r="1"><c r="A1" t="inlineStr"><is><t>first</t></is></c></row><row r="1048576">'
        '<c r="AX1048576" t="inlineStr"><is><t>last</t></is></c></row>'
    )
    return xlsx({f"Claim {n}": sheet(rows, "A1:AX1048576") for n in range(1, sheets + 1)})


def xlsx_empty_rows(count: int) -> bytes:
    """A sheet of `count` empty rows, then one with a cell (issue 55: 900,000)."""
    rows = "".join(f'<row r="{n}"/>' for n in range(1, count + 1))
    last = f'<row r="{count + 1}"><c r="A{count + 1}" t="inlineStr"><is><t>end</t></is></c></row>'
    return xlsx({"Empty": sheet(rows + last)})


def xlsx_shared_strings(count: int) -> bytes:
    """A workbook of `count` shared strings, its sheet using the first (issue 55: 2.5 M)."""
    items = "".join(f"<si><t>{word}</t></si>" for word in _words(count, count))
    strings = (f'<?xml version="1.0"?><sst xmlns="{_S}" count="{count}" uniqueCount="{count}">'
               f"{items}</sst>").encode()  # fmt: skip
    return xlsx(
        {"Strings": sheet('<row r="1"><c r="A1" t="s"><v>0</v></c></row>')}, strings=strings
    )
