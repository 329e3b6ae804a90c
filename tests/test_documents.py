"""Documents through web-fetch: PDFs, Word, Excel, PowerPoint and EPUB files written by their
own writer libraries (bench/document_corpus.py), served on loopback, read to markdown with
their headings, tables, lists, columns and pages; pages N-M; and every bomb and broken file
answered with a clear error or a bounded part, never a hang or a crash.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import time
import zipfile
from functools import cache
from typing import TYPE_CHECKING, Any

import document_corpus as corpus
import hostile_documents as hostile
import pytest
from conftest import STALL, Reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer, render
from ikigai_web.fetch.pipeline import to_document
from ikigai_web.fetch.reading import decode
from ikigai_web.fetch.reading.files import (
    MAX_PAGES,
    archive,
    excel,
    forked,
    layout,
    office,
    office_parts,
    paging,
    pdf,
)
from ikigai_web.tools import web_fetch

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.loopback

DOCX = corpus.report_docx().kind
READ = decode.Reading()
EPUB = b"application/epub+zip"
XLSX = corpus.book_xlsx().kind
_ROW = re.compile(r"^\|.*\|$")


@cache
def samples() -> dict[str, corpus.Sample]:
    return {sample.name: sample for sample in corpus.corpus()}


@pytest.fixture
def serve(fake_server, monkeypatch):
    """Serve a body at a path with headers; web-fetch may reach loopback."""
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")

    def put(path: str, body: bytes, ctype: str | None, **headers: str) -> str:
        sent = {"Content-Type": ctype or ""} | headers  # "": no type, as the server says
        url: str = fake_server.route(path, Reply(200, body, sent))
        return url

    return put


def fetch(url: str, **options: Any) -> dict[str, Any]:
    result, budget = answer(web_fetch.execute, {"url": url} | options, web_fetch.SCHEMA)
    assert len(render(result, budget)) <= budget
    return result


def headings(markdown: str) -> set[str]:
    return {line.lstrip("#").strip() for line in markdown.splitlines() if line.startswith("#")}


def cells(markdown: str) -> set[str]:
    rows = (line for line in markdown.splitlines() if _ROW.match(line))
    return {cell.strip() for row in rows for cell in row.strip("|").split(" | ")}


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize("name", [s.name for s in corpus.corpus()])
def test_each_format_reads_to_its_markdown(serve, name):
    sample = samples()[name]
    out = fetch(serve(f"/{name}", sample.body, sample.kind))
    assert out["success"] is True, out
    assert out["content_type"] == sample.kind
    assert out["title"] == sample.title
    content = out["content"]
    lines = content.splitlines()
    for line in sample.lines:
        assert line in lines, (line, content)
    at = [content.index(text) for text in sample.order]
    assert at == sorted(at), content
    assert set(sample.headings) <= headings(content), content
    assert set(sample.cells) <= cells(content), content


def test_a_pdf_paragraph_is_one_line_and_a_hyphen_at_a_line_end_is_gone(serve):
    sample = samples()["report.pdf"]
    content = fetch(serve("/r.pdf", sample.body, "application/pdf"))["content"]
    paragraph = next(line for line in content.splitlines() if "churn" in line)
    assert paragraph.startswith("revenue grew in most regions")
    assert paragraph.endswith("and the measurement of churn improved.")
    assert fetch(serve("/r2.pdf", sample.body, "application/pdf"))["author"] == "Pat Writer"


def test_a_pdf_without_a_title_is_titled_by_its_first_heading():
    body = _line("Some text, the body of the page: longer than its heading.", 0, 650)
    pages = [[_line("Annual Figures", 0, 700, 20, bold=True), body]]
    assert pdf.pdf_document(_pdf(pages), "u", READ).title == "Annual Figures"


# --- metadata a writer leaves in place of nothing, and the title whichever pages are read ---


def _library_pdf() -> bytes:
    """Three pages made by a common library with its defaults: "(anonymous)" for title and
    author, "(unspecified)" for subject and creator; the document's title is page 1's heading."""
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    style = getSampleStyleSheet()
    text = "Rivers carry water, silt and the story of the land they cross. " * 6
    story = [Paragraph("Field Guide to Rivers", style["Title"]), Paragraph(text, style["BodyText"])]
    for chapter in ("Chapter Two: Sources", "Chapter Three: Deltas"):
        story += [PageBreak(), Paragraph(chapter, style["Heading1"]),
                  Paragraph(text, style["BodyText"])]  # fmt: skip
    out = io.BytesIO()
    SimpleDocTemplate(out).build(story)
    return out.getvalue()


def test_a_pdfs_placeholder_metadata_is_dropped_and_its_title_is_whatever_pages_are_read(serve):
    url = serve("/guide.pdf", _library_pdf(), "application/pdf")
    whole = fetch(url)
    assert whole["title"] == "Field Guide to Rivers"
    for pages in ("2-3", "3", "2-"):
        part = fetch(url, pages=pages)
        assert part["content"].startswith(f"[Page {pages[0]} of 3]"), part
        assert part["title"] == whole["title"], pages
    for out in (whole, part):
        assert "description" not in out  # "(unspecified)"
        assert "author" not in out  # "(anonymous)"


def _library_docx() -> bytes:
    import docx

    document = docx.Document()  # python-docx's defaults: creator and description its own
    document.add_heading("Travel Policy", level=1)
    document.add_paragraph("Book trains for trips under four hours.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def _library_xlsx() -> bytes:
    import openpyxl

    book = openpyxl.Workbook()  # creator "openpyxl", one sheet named "Sheet"
    book.active.append(["Region", "Sales"])
    book.active.append(["North", 12])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_office_files_made_with_a_librarys_defaults_say_none_of_them(serve):
    word = fetch(serve("/policy.docx", _library_docx(), DOCX))
    assert word["title"] == "Travel Policy"
    assert "description" not in word  # "generated by python-docx"
    assert "author" not in word  # "python-docx"
    kind = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
    sheet = fetch(serve("/sales.xlsx", _library_xlsx(), kind))
    assert sheet["title"] == ""  # its one heading is the sheet's default name, "Sheet"
    assert "author" not in sheet  # "openpyxl"


def test_a_decks_title_is_its_first_slides_whichever_slides_are_read(serve):
    sample = samples()["review.pptx"]
    bare = _without_core_title(sample.body)
    url = serve("/bare.pptx", bare, sample.kind)
    assert fetch(url)["title"] == "Product Review"  # its first slide's title
    assert fetch(url, pages="2-3")["title"] == "Product Review"


def _without_core_title(body: bytes) -> bytes:
    """The package with an empty title in docProps/core.xml."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(body)) as source, zipfile.ZipFile(out, "w") as copy:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "docProps/core.xml":
                data = re.sub(rb"<dc:title>[^<]*</dc:title>", b"<dc:title></dc:title>", data)
            copy.writestr(item, data)
    return out.getvalue()


@pytest.mark.parametrize(
    ("ctype", "headers"),
    [
        ("application/octet-stream", {"Content-Disposition": 'attachment; filename="r.pdf"'}),
        ("application/x-download", {}),
        (None, {}),
        ("application/zip", {}),
    ],
)
@pytest.mark.parametrize("name", ["report.pdf", "handbook.docx", "review.pptx", "story.epub"])
def test_a_download_is_read_by_its_signature(serve, ctype, headers, name):
    sample = samples()[name]
    out = fetch(serve("/download", sample.body, ctype, **headers))
    assert out["success"] is True, out
    assert out["content_type"] == sample.kind
    assert sample.lines[0] in out["content"].splitlines()


def test_a_zip_that_is_no_document_is_unsupported(serve):
    plain = io.BytesIO()
    with zipfile.ZipFile(plain, "w") as package:
        package.writestr("notes.txt", "hello")
    out = fetch(serve("/x.zip", plain.getvalue(), "application/zip"))
    assert out["error_code"] == "UNSUPPORTED_CONTENT"
    assert "Word, Excel, PowerPoint and EPUB" in out["error"]


# ---------------------------------------------------------------- pages


def test_pages_selects_pages_by_their_markers(serve):
    url = serve("/r.pdf", samples()["report.pdf"].body, "application/pdf")
    whole = fetch(url)
    assert whole["total_pages"] == 2
    second = fetch(url, pages="2")
    assert second["content"].startswith("[Page 2 of 2]\n\n# 3. Outlook")
    assert "Summary" not in second["content"]
    assert second["total_pages"] == 2
    first = fetch(url, pages="1-1")
    assert first["content"].startswith("[Page 1 of 2]")
    assert "[Page 2 of 2]" not in first["content"]
    assert fetch(url, pages="1-")["content"] == whole["content"]
    assert fetch(url, pages=2)["content"] == second["content"]
    assert fetch(url, pages="")["content"] == whole["content"]


def test_offset_and_limit_count_lines_within_the_pages(serve):
    url = serve("/r.pdf", samples()["report.pdf"].body, "application/pdf")
    part = fetch(url, pages="2", offset=3, limit=1)
    assert part["content"] == "# 3. Outlook"
    assert part["truncated"] is True
    assert part["next_offset"] == 4


def test_pages_of_a_deck_are_its_slides(serve):
    sample = samples()["review.pptx"]
    out = fetch(serve("/d.pptx", sample.body, sample.kind), pages="3")
    assert out["content"].startswith("[Slide 3 of 3]\n\n## Figures")
    assert out["total_pages"] == 3


@pytest.mark.parametrize(
    ("pages", "says"),
    [
        ("3", "this document has 2 pages: ask for 1 to 2"),
        ("0", "a page number or a range"),
        ("2-1", "a page number or a range"),
        ("two", "a page number or a range"),
        (True, "a page number or a range"),
        (["1"], "a page number or a range"),
    ],
)
def test_pages_out_of_range_or_malformed_is_invalid_input(serve, pages, says):
    url = serve("/r.pdf", samples()["report.pdf"].body, "application/pdf")
    out = fetch(url, pages=pages)
    assert out["error_code"] == "INVALID_INPUT", out
    assert says in out["error"]


@pytest.mark.parametrize("pages", ["9", 9, "9-9", " 9 - ", "9-"])
def test_pages_are_echoed_as_the_call_wrote_them(serve, pages):
    url = serve("/r.pdf", samples()["report.pdf"].body, "application/pdf")
    out = fetch(url, pages=pages)
    assert out["error"].startswith(f"'pages' is {json.dumps(pages)}; this document has 2 ")


def test_pages_of_a_document_without_pages_is_invalid_input(serve):
    sample = samples()["handbook.docx"]
    out = fetch(serve("/h.docx", sample.body, sample.kind), pages="1")
    assert out["error_code"] == "INVALID_INPUT"
    assert "only PDFs and slide decks have pages" in out["error"]
    assert "total_pages" not in fetch(serve("/h2.docx", sample.body, sample.kind))


def test_a_long_pdf_is_read_in_windows_of_pages(serve, monkeypatch):
    monkeypatch.setattr(pdf, "MAX_PAGES", 3)
    url = serve("/long.pdf", _pdf([[_line(f"Page text {n}", 0, 700)] for n in range(1, 6)]), None)
    first = fetch(url)
    assert first["content"].count("[Page ") == 3
    assert first["warnings"][0]["code"] == "TOO_LARGE"
    assert (
        'pages 1-3 were read (3 is the most): to read on, call again with pages "4-5"'
        in (first["warnings"][0]["message"])
    )
    later = fetch(url, pages="4-5")
    assert later["content"].startswith("[Page 4 of 5]\n\nPage text 4")
    assert "[Page 5 of 5]\n\nPage text 5" in later["content"]
    assert "warnings" not in later


def test_a_page_the_time_runs_out_on_is_named_and_the_pages_before_it_are_read(
    monkeypatch, tmp_path
):
    """Page 2 never ends: the call's time runs out on it, and what was read is the answer."""
    monkeypatch.setattr(pdf, "_page", _hangs_from(pdf._page, 1, tmp_path))
    body = _pdf([[_line(f"Page text {n}", 0, 700)] for n in range(1, 4)])
    document = pdf.pdf_document(body, "u", READ._replace(deadline=_ends_when(tmp_path)))
    assert document.markdown == "[Page 1 of 3]\n\nPage text 1"
    assert document.warnings == [{"code": "TOO_LARGE", "message": (
        "This document has 3 pages and pages 1-1 were read (the call's time ran out while "
        'reading page 2): to read on, call again with pages "2-3".'
    )}]  # fmt: skip
    with pytest.raises(ToolError) as caught:
        paging.select(document.markdown, "application/pdf", (2, 3), "2-3")
    assert caught.value.code is ErrorCode.TOO_LARGE


def test_a_deck_stops_on_the_slide_the_time_runs_out_on(monkeypatch, tmp_path):
    from ikigai_web.fetch.reading.files import slides

    monkeypatch.setattr(slides, "_slide_or_note", _hangs_from(slides._slide_or_note, 3, tmp_path))
    sample = samples()["review.pptx"]
    reading = READ._replace(deadline=_ends_when(tmp_path))
    document = office.office_document(sample.kind, sample.body, "u", reading)
    assert document.markdown.count("[Slide ") == 2
    assert (
        "slides 1-2 were read (the call's time ran out while reading slide 3): to read on, "
        'call again with pages "3-3".' in document.warnings[0]["message"]
    )


# ---------------------------------------------------------------- bombs and broken files


def _package(members: dict[str, bytes], *, stored: tuple[str, ...] = ()) -> bytes:
    return bytes(hostile.package(members, stored=stored))


def _docx_with(document_xml: bytes) -> bytes:
    original = zipfile.ZipFile(io.BytesIO(samples()["handbook.docx"].body))
    members = {name: original.read(name) for name in original.namelist()}
    return _package(members | {"word/document.xml": document_xml})


LAUGHS = b"""<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">
<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>&lol3;</w:t></w:r></w:p></w:body></w:document>"""
EXTERNAL = b"""<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>&x;</w:t></w:r></w:p></w:body></w:document>"""
DEEP = (
    b'<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
    + b"<w:body>" * 5000
    + b"</w:body>" * 5000
    + b"</w:document>"
)


@pytest.mark.parametrize(
    ("body", "code", "says"),
    [
        (_package({f"f{i}.xml": b"<a/>" for i in range(5001)}), "TOO_LARGE", "5,001 files"),
        (
            _package({f"word/part{i}.bin": bytes(1 << 20) for i in range(70)}),
            "TOO_LARGE",
            "70 MiB unpacked (at most 64 MiB)",
        ),
        (_package({"word/document.xml": bytes(40 << 20)}), "TOO_LARGE", "to 1 (at most 200)"),
    ],
    ids=["members", "unpacked", "ratio"],
)
def test_zip_bombs_are_refused_from_the_central_directory(serve, body, code, says):
    out = fetch(serve("/bomb.docx", body, DOCX))
    assert out["error_code"] == code, out
    assert says in out["error"]


@pytest.mark.parametrize(
    ("xml", "says"),
    [
        (LAUGHS, "declares entities or a DTD of its own"),
        (EXTERNAL, "declares entities or a DTD of its own"),
        (DEEP, "nested too deeply"),
        (b"<w:document><unclosed>", "malformed"),
    ],
    ids=["billion-laughs", "external-entity", "deep", "malformed"],
)
def test_xml_bombs_and_broken_xml_are_parse_errors(serve, xml, says):
    out = fetch(serve("/x.docx", _docx_with(xml), DOCX))
    assert out["error_code"] == "PARSE_ERROR", out
    assert says in out["error"]
    assert "word/document.xml" in out["error"]


def _lying_sizes(body: bytes, member: str) -> bytes:
    """The zip with `member`'s unpacked size in the central directory set to 10 bytes."""
    data = bytearray(body)
    name = member.encode()
    entry = data.index(b"PK\x01\x02")
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 24 : entry + 28] = (10).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize(
    "body",
    [
        _lying_sizes(corpus.report_docx().body, "word/document.xml"),
        corpus.report_docx().body[:3000],
        b"PK\x03\x04 not a zip at all",
        _package({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<w/>"}),
        _package({"mimetype": EPUB, "META-INF/container.xml": b"<c/>"}),
    ],
    ids=["lying-size", "truncated", "not-a-zip", "not-a-docx", "epub-without-spine"],
)
def test_broken_packages_are_parse_errors(serve, body):
    kind = EPUB.decode() if b"mimetype" in body[:100] else DOCX
    out = fetch(serve("/broken", body, kind))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "could not be read" in out["error"]


def test_an_encrypted_pdf_is_a_parse_error_that_says_so(serve):
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    page = canvas.Canvas(out, encrypt="secret")
    page.drawString(72, 700, "hidden")
    page.save()
    answer_ = fetch(serve("/locked.pdf", out.getvalue(), "application/pdf"))
    assert answer_["error_code"] == "PARSE_ERROR"
    assert "Incorrect password" in answer_["error"]


def test_a_pdf_of_thousands_of_pages_is_read_up_to_the_cap(serve):
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pages = canvas.Canvas(out)
    for n in range(2000):
        pages.drawString(72, 700, f"p{n + 1}")
        pages.showPage()
    pages.save()
    result = fetch(serve("/many.pdf", out.getvalue(), "application/pdf"), pages="1990-")
    assert result["success"] is True
    assert result["content"].startswith("[Page 1990 of 2000]\n\np1990")
    assert result["total_pages"] == 2000
    first = fetch(serve("/many2.pdf", out.getvalue(), "application/pdf"))
    assert first["content"].count("[Page ") == MAX_PAGES
    assert '"301-320"' in first["warnings"][0]["message"]


def test_a_page_with_too_many_characters_is_cut(monkeypatch):
    monkeypatch.setattr(pdf, "MAX_PAGE_CHARS", 5)
    document = pdf.pdf_document(_pdf([[_line("abcdefghij", 0, 700)]]), "u", READ)
    assert document.markdown == "[Page 1 of 1]\n\nabcde"


def test_a_workbook_is_read_up_to_its_row_and_cell_caps(monkeypatch):
    monkeypatch.setattr(excel, "MAX_ROWS", 2)
    sample = samples()["figures.xlsx"]
    document = office.office_document(sample.kind, sample.body, "u", READ)
    assert "| North | 12.4 | 15.1 | +21.8% |" in document.markdown
    assert "South" not in document.markdown
    said = [w["message"] for w in document.warnings]
    assert any("read up to its 2 rows of text" in m and "rows after it" in m for m in said)
    monkeypatch.setattr(excel, "MAX_CELLS", 4)
    document = office.office_document(sample.kind, sample.body, "u", READ)
    assert "Staff" not in document.markdown
    said = [w["message"] for w in document.warnings]
    assert any("the workbook's 4 cells" in m and "the sheets after it" in m for m in said)


# ---------------------------------------------------------------- the layout, by its parts


def test_an_unruled_table_and_a_page_number_footer():
    rows = [("Region", "Q1"), ("North", "12.4"), ("South", "9.8")]
    chars = [c for i, row in enumerate(rows) for c in _cells_at(row, 700 - 14 * i)]
    chars += _line("7", 290, 20)  # the page's number, alone at its foot
    page = layout.page_lines(chars, 600, 800)
    markdown = layout.page_markdown(page, layout.styles([page]))
    assert markdown == "| Region | Q1 |\n|---|---|\n| North | 12.4 |\n| South | 9.8 |"


def test_text_that_reads_as_markdown_is_escaped_and_a_long_bold_line_is_no_heading():
    chars = _line("[Page 9 of 9] is text", 0, 700) + _line("# not a heading", 0, 650)
    chars += _line("A bold sentence that goes on and ends.", 0, 600, bold=True)
    chars += _line("Plain text is the body of this page, and more of it.", 0, 550)
    page = layout.page_lines(chars, 600, 800)
    markdown = layout.page_markdown(page, layout.styles([page]))
    assert markdown.splitlines()[::2] == [
        "\\[Page 9 of 9] is text",
        "\\# not a heading",
        "A bold sentence that goes on and ends.",
        "Plain text is the body of this page, and more of it.",
    ]


def test_two_columns_are_read_left_then_right_and_a_carried_sentence_is_one_paragraph():
    left = [
        _line(f"left line {i} of a long column of text in here", 50, 700 - 12 * i) for i in range(6)
    ]
    right = [
        _line(f"right line {i} of a long column of text here", 320, 700 - 12 * i) for i in range(6)
    ]
    chars = [c for line in left + right for c in line]
    chars += _line("and it goes on", 320, 628)  # lowercase, after a line without a full stop
    page = layout.page_lines(chars, 600, 800)
    markdown = layout.page_markdown(page, layout.styles([page]))
    assert "\n" not in markdown
    at = [markdown.index(f"left line {i} ") for i in range(6)]
    at += [markdown.index(f"right line {i} ") for i in range(6)]
    assert at == sorted(at)
    assert markdown.endswith("right line 5 of a long column of text here and it goes on")


def test_styles_of_an_empty_document():
    assert layout.styles([]).body == 10.0
    assert layout.page_markdown(layout.page_lines([], 600, 800), layout.styles([])) == ""


def test_paging_parse_and_markers():
    assert paging.parse("  ") is None
    assert paging.parse("4") == (4, 4)
    assert paging.parse("4-") == (4, None)
    assert paging.parse("2\u20135") == (2, 5)
    assert paging.total_pages("no markers") is None


def test_kind_of_and_sniffing():
    assert archive.kind_of(b"PK\x03\x04broken") is None
    assert archive.kind_of(b"not a zip") is None
    assert archive.kind_of(_package({"a.txt": b"x"})) is None
    assert decode.sniff(samples()["figures.xlsx"].body) == samples()["figures.xlsx"].kind


# ---------------------------------------------------------------- helpers


def _ends_when(tmp_path: Path) -> Any:
    """A deadline under the test's hand: it has time left until the reader starts the unit
    that hangs (`_hangs_from` marks it in `tmp_path`), then none. Until then the reader's
    parent looks at it every 50 ms."""

    class Deadline:
        def remaining(self) -> float:
            return 0.0 if (tmp_path / "hung").exists() else forked.KILL_RESERVE + 0.05

    return Deadline()


def _hangs_from(function: Any, unit: int, tmp_path: Path) -> Any:
    """`function`, whose second argument numbers a unit (a page's index, a slide's number),
    as the reader's process runs it, but from `unit` on it marks `tmp_path` and never ends."""

    def hangs(*args: Any) -> Any:
        if args[1] >= unit:
            (tmp_path / "hung").touch()
            time.sleep(STALL)
        return function(*args)

    return hangs


def _line(text: str, x: float, y: float, size: float = 10, *, bold: bool = False):
    """A line of characters, each 0.5 em wide, as a PDF places them."""
    step = size / 2
    return [
        layout.Char(ch, x + i * step, x + (i + 1) * step, y, size, bold)
        for i, ch in enumerate(text)
    ]


def _cells_at(row: tuple[str, ...], y: float) -> list[layout.Char]:
    return [c for i, text in enumerate(row) for c in _line(text, 50 + 150 * i, y)]


def _pdf(pages: list[list[list[layout.Char]]]) -> bytes:
    """A PDF whose pages hold these lines (their first character's place and size)."""
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    drawing = canvas.Canvas(out)
    for lines in pages:
        for line in lines:
            first = line[0]
            font = "Helvetica-Bold" if first.bold else "Helvetica"
            drawing.setFont(font, first.size)
            drawing.drawString(first.x0, first.y, "".join(c.text for c in line))
        drawing.showPage()
    drawing.save()
    return out.getvalue()


def test_list_items_take_their_next_lines_and_a_numbered_paragraph_stays_as_written():
    chars = _line("- first item that wraps", 50, 700) + _line("onto a second line", 60, 688)
    chars += _line("1. numbered text", 50, 660) + _line("Back at the margin.", 50, 648)
    page = layout.page_lines(chars, 600, 800)
    markdown = layout.page_markdown(page, layout.styles([page]))
    assert markdown == (
        "- first item that wraps onto a second line\n1. numbered text\n\nBack at the margin."
    )


def test_rows_far_apart_are_no_table():
    chars = _cells_at(("Region", "Q1"), 700) + _cells_at(("North", "12.4"), 600)
    page = layout.page_lines(chars, 600, 800)
    assert "|" not in layout.page_markdown(page, layout.styles([page]))


def test_a_deck_with_groups_empty_shapes_and_empty_notes():
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank: no title
    group = slide.shapes.add_group_shape()
    group.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text = "In a group"
    slide.shapes.add_textbox(Inches(1), Inches(3), Inches(3), Inches(1)).text = ""
    slide.shapes.add_table(2, 2, Inches(1), Inches(4), Inches(4), Inches(1))
    slide.shapes.add_shape(1, Inches(5), Inches(5), Inches(1), Inches(1))  # no text in it
    slide.notes_slide.notes_text_frame.text = " "
    out = io.BytesIO()
    deck.save(out)
    kind = samples()["review.pptx"].kind
    document = office.office_document(kind, out.getvalue(), "u", READ)
    assert document.markdown == "[Slide 1 of 1]\n\nIn a group"
    assert document.title is None


def test_a_docx_without_properties_and_an_epub_whose_spine_leads_nowhere():
    original = zipfile.ZipFile(io.BytesIO(samples()["handbook.docx"].body))
    members = {n: original.read(n) for n in original.namelist() if n != "docProps/core.xml"}
    document = office.office_document(DOCX, _package(members), "u", READ)
    assert document.title == "Team Handbook"  # its first heading
    assert document.author is None
    epub = zipfile.ZipFile(io.BytesIO(samples()["story.epub"].body))
    members = {n: epub.read(n) for n in epub.namelist()}
    members["OEBPS/content.opf"] = members["OEBPS/content.opf"].replace(b'idref="c', b'idref="x')
    with pytest.raises(ToolError) as caught:
        office.office_document(EPUB.decode(), _package(members), "u", READ)
    assert "its spine lists no chapters" in caught.value.message


def test_a_compression_method_zipfile_lacks_is_a_parse_error():
    body = bytearray(samples()["handbook.docx"].body)
    for signature, at in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):
        start = body.index(signature)
        while start >= 0:
            body[start + at : start + at + 2] = (97).to_bytes(2, "little")  # WavPack
            start = body.find(signature, start + 4)
    with pytest.raises(ToolError) as caught:
        office.office_document(DOCX, bytes(body), "u", READ)
    assert caught.value.code is ErrorCode.PARSE_ERROR


@pytest.mark.parametrize("name", [s.name for s in corpus.corpus()])
def test_damaged_files_give_a_clear_error_or_what_could_be_read(name):
    """Bytes overwritten at random (a fixed seed) and files cut short: each call answers
    with a ToolError or a document, never another exception."""
    sample = samples()[name]
    rng = random.Random(name)
    outcomes = set()
    for n in range(40):
        body = bytearray(sample.body)
        for _ in range(rng.choice((1, 4, 16))):
            body[rng.randrange(len(body))] = rng.randrange(256)
        if n % 5 == 0:
            body = body[: rng.randrange(len(body))]
        outcomes.add(_outcome(body, sample.kind))
    assert outcomes <= {"read", "could not be read", "too much"}
    assert "could not be read" in outcomes


def _outcome(body: bytearray, kind: str) -> str:
    try:
        to_document(body, kind, "u", full_page=False, include_links=True)
    except ToolError as exc:
        said = {ErrorCode.PARSE_ERROR: "could not be read", ErrorCode.TOO_LARGE: "too much"}
        return said[exc.code] if said.get(exc.code, "?") in exc.message else exc.message
    return "read"


def test_a_page_that_cannot_be_loaded_is_named_and_the_rest_is_read(monkeypatch):
    import pypdfium2 as pdfium

    loaded = pdf._page_lines

    def fails_on_the_second(document: Any, index: int) -> layout.Page:
        if index == 1:
            raise pdfium.PdfiumError("Failed to load page.")
        return loaded(document, index)

    monkeypatch.setattr(pdf, "_page_lines", fails_on_the_second)
    body = _pdf([[_line(f"Page text {n}", 0, 700)] for n in range(1, 4)])
    document = pdf.pdf_document(body, "u", READ)
    assert document.markdown == (
        "[Page 1 of 3]\n\nPage text 1\n\n[Page 2 of 3]\n\n[Page 3 of 3]\n\nPage text 3"
    )
    assert document.warnings == [
        {
            "code": "PARSE_ERROR",
            "message": "Page 2 of this PDF could not be read; the rest is here.",
        }
    ]


def test_running_headers_roman_page_numbers_and_dot_leaders_are_dropped_or_shortened():
    pages = [
        [
            _line("Running Title", 50, 800),
            _line("Contents . . . . . . . . 7", 50, 700),
            _line("-- a comment, no item", 50, 680),
            _line("iv", 290, 30),
        ]
        for _ in range(4)
    ]
    document = pdf.pdf_document(_pdf(pages), "u", READ)
    first = document.markdown.split("[Page 2 of 4]")[0]
    assert first == "[Page 1 of 4]\n\nContents … 7\n\n-- a comment, no item\n\n"
    assert "Running Title" not in document.markdown


def test_a_line_in_two_sizes_has_the_size_most_of_it_has():
    chars = _line("mostly body text with ", 50, 700) + _line("code", 160, 700, size=8)
    chars += _line("the next line of the same paragraph", 50, 688)
    page = layout.page_lines(chars, 600, 800)
    assert layout.page_markdown(page, layout.styles([page])).count("\n") == 0


def test_a_slide_whose_text_reads_as_a_marker_is_escaped():
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    for text in ("[Slide 2 of 2]", "real"):
        slide = deck.slides.add_slide(deck.slide_layouts[6])
        slide.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1)).text = text
    out = io.BytesIO()
    deck.save(out)
    kind = samples()["review.pptx"].kind
    markdown = office.office_document(kind, out.getvalue(), "u", READ).markdown
    assert paging.select(markdown, kind, (2, 2), "2") == "[Slide 2 of 2]\n\nreal"


def test_nested_list_items_are_indented_by_level():
    chars = _line("- outer one", 50, 700) + _line("- inner", 70, 688)
    chars += _line("- deeper", 90, 676) + _line("- outer two", 50, 664)
    page = layout.page_lines(chars, 600, 800)
    markdown = layout.page_markdown(page, layout.styles([page]))
    assert markdown == "- outer one\n  - inner\n    - deeper\n- outer two"


@pytest.mark.parametrize(
    ("value", "day"),
    [("D:20250314120000Z", "2025-03-14"), ("D:20241399", None), ("2024", None), (None, None)],
)
def test_a_pdf_date_is_its_day_when_it_is_a_real_one(value, day):
    assert pdf._day(value) == day


# ---------------------------------------------------------------- XML by its content (issue 55)

LAUGHS_SHEET = (
    b'<?xml version="1.0"?><!DOCTYPE w [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]>'
    b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
    b'<row r="1"><c r="A1" t="inlineStr"><is><t>&b;</t></is></c></row></sheetData></worksheet>'
)


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-16", "utf-16-le"], ids=["utf-8", "utf-16-bom", "utf-16-le"]
)
def test_a_sheet_part_named_as_no_xml_is_checked_by_its_content(serve, encoding):
    """Issue 55: an .xlsx sheet part named sheet1.dat carrying a DTD was read past the check,
    and openpyxl's parser raised: a traceback, with no answer. In whatever encoding."""
    sheet = LAUGHS_SHEET.replace(b'"1.0"?>', f'"1.0" encoding="{encoding}"?>'.encode(), 1)
    data = sheet.decode().encode(encoding)
    body = hostile.xlsx({"Sheet": data}, part_names={"Sheet": "xl/worksheets/sheet1.dat"})
    out = fetch(serve("/s.xlsx", body, XLSX))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(xl/worksheets/sheet1.dat) could not be read (it declares entities" in out["error"]


def test_an_epub_package_document_named_as_no_xml_is_checked_by_its_content(serve):
    """Issue 55: the OPF (any name its container gives) and a chapter without the expected
    extension declared entities unchecked."""
    opf_head = b'<?xml version="1.0"?><!DOCTYPE package [<!ENTITY t "Injected">]>'
    body = hostile.epub({"ch.xhtml": hostile.xhtml("<p>Text</p>")}, ["ch.xhtml"],
                        opf_name="OEBPS/content.dat", opf_head=opf_head)  # fmt: skip
    out = fetch(serve("/b.epub", body, EPUB.decode()))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(OEBPS/content.dat) could not be read (it declares entities" in out["error"]
    chapter = hostile.xhtml("<p>&t;</p>").replace(
        b"<!DOCTYPE html>", b'<!DOCTYPE html [<!ENTITY t "Injected">]>'
    )
    body = hostile.epub({"ch.dat": chapter}, ["ch.dat"])
    out = fetch(serve("/c.epub", body, EPUB.decode()))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(OEBPS/ch.dat) could not be read" in out["error"]


def test_a_word_main_part_named_as_no_xml_cannot_declare_entities(serve):
    rels = hostile._RELS % hostile._OFFICE_DOCUMENT.replace(b"word/document.xml", b"word/x.dat")
    document = (
        b'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY t "Injected">]><w:document xmlns:w="'
        b'http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body><w:p><w:r><w:t>'
        b"&t;</w:t></w:r></w:p></w:body></w:document>"
    )
    body = hostile.docx(
        hostile.paragraph("x"), members={"_rels/.rels": rels, "word/x.dat": document}
    )
    out = fetch(serve("/d.docx", body, DOCX))
    assert out["error_code"] == "PARSE_ERROR", out
    assert "(word/x.dat) could not be read (it declares entities" in out["error"]


def test_a_doctype_that_only_names_a_public_dtd_is_no_dtd_of_its_own(serve):
    """An EPUB 2 table of contents names the NCX DTD; it declares nothing, and no library here
    loads a DTD: the book is read (it was refused before)."""
    ncx = (
        b'<?xml version="1.0"?><!DOCTYPE ncx PUBLIC "-//NISO//DTD ncx 2005-1//EN" '
        b'"http://www.daisy.org/z3986/2005/ncx-2005-1.dtd"><ncx xmlns="http://www.daisy.org/'
        b'z3986/2005/ncx/" version="2005-1"><navMap/></ncx>'
    )
    body = hostile.epub({"ch.xhtml": hostile.xhtml("<p>Read me</p>")}, ["ch.xhtml"],
                        members={"OEBPS/toc.ncx": ncx})  # fmt: skip
    out = fetch(serve("/n.epub", body, EPUB.decode()))
    assert out["success"] is True, out
    assert out["content"] == "Read me"


def test_tables_nested_60_deep_are_read_and_flattened_past_a_depth(serve):
    """Issue 55: 60 nested Word tables met Python's recursion limit (a PARSE_ERROR)."""
    out = fetch(serve("/t.docx", hostile.docx_nested_tables(60), DOCX))
    assert out["success"] is True, out
    for level in range(1, 61):
        assert f"Level {level}" in out["content"]
    assert out["content"].endswith("After the tables")


# ---------------------------------------------------------------- links (issue 55)

PLACES = (
    ("file", "file:///etc/passwd"),
    ("private", "http://127.0.0.2/admin"),
    ("local", "http://intranet.local/x"),
    ("public", "https://example.com/page"),
)


@pytest.fixture
def serve_guarded(fake_server, monkeypatch):
    """As `serve`, but only 127.0.0.1 is let through: other private hosts stay private."""
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1")

    def put(path: str, body: bytes, ctype: str) -> str:
        url: str = fake_server.route(path, Reply(200, body, {"Content-Type": ctype}))
        return url

    return put


def _epub_with_places() -> bytes:
    anchors = "".join(f'<a href="{target}">{name} link</a> ' for name, target in PLACES)
    images = "".join(f'<img src="{target}" alt="{name} image"/> ' for name, target in PLACES)
    body: bytes = hostile.epub(
        {"ch.xhtml": hostile.xhtml(f"<p>{anchors}</p><p>{images}</p>")}, ["ch.xhtml"]
    )
    return body


def _docx_with_places() -> bytes:
    relationships = b"".join(
        b'<Relationship Id="r%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/hyperlink" Target="%s" TargetMode="External"/>'
        % (name.encode(), target.encode())
        for name, target in PLACES
    )
    links = "".join(
        f'<w:p><w:hyperlink r:id="r{name}"><w:r><w:t>{name} link</w:t></w:r></w:hyperlink></w:p>'
        for name, _ in PLACES
    )
    body: bytes = hostile.docx(links, relationships=relationships)
    return body


@pytest.mark.parametrize("include", [True, False], ids=["links", "no-links"])
@pytest.mark.parametrize("make", [_epub_with_places, _docx_with_places], ids=["epub", "docx"])
def test_only_web_links_to_public_hosts_reach_a_documents_markdown(serve_guarded, make, include):
    """Issue 55: `![pw](file:///etc/passwd)` from an EPUB even with include_links false, Word
    links to file:///etc/passwd and http://127.0.0.2/: a client rendering the markdown may
    follow them. A dropped link leaves its text (an image its alt text)."""
    body = make()
    kind = EPUB.decode() if body.startswith(b"PK") and b"mimetype" in body[:60] else DOCX
    out = fetch(serve_guarded("/doc", body, kind), include_links=include)
    assert out["success"] is True, out
    content = out["content"]
    for name, target in PLACES:
        assert f"{name} link" in content
        linked = f"[{name} link]({target})" in content
        assert linked is (include and name == "public"), content
        if kind == EPUB.decode():
            assert f"{name} image" in content
            assert (f"![{name} image]({target})" in content) is (name == "public"), content
    assert "file:" not in content
    assert "127.0.0.2" not in content


def test_a_private_host_the_user_allows_may_be_linked(serve_guarded, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1,127.0.0.2")
    out = fetch(serve_guarded("/doc", _docx_with_places(), DOCX))
    assert "[private link](http://127.0.0.2/admin)" in out["content"]
    assert "[local link](" not in out["content"]
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    out = fetch(serve_guarded("/doc2", _docx_with_places(), DOCX))
    assert "[local link](http://intranet.local/x)" in out["content"]
    assert "file:" not in out["content"]


def test_html_markdown_and_sheet_text_keep_only_web_links_to_public_hosts(serve_guarded):
    page = (
        "<html><head><title>Links</title></head><body><article><h1>Links</h1><p>"
        + "Words of the article, enough of them to be read as one. " * 20
        + "".join(f'<a href="{t}">{n} link</a> <img src="{t}" alt="{n} image"> ' for n, t in PLACES)
        + "</p></article></body></html>"
    )
    text = (
        "# Notes\n\n[file link](file:///etc/passwd) ![private image](http://127.0.0.2/i.png) "
        "<http://127.0.0.2/> [ref link][r] [public link](https://example.com/page)\n\n"
        "[r]: file:///etc/passwd\n"
    )
    cell = '<row r="1"><c r="A1" t="inlineStr"><is><t>[file link](file:///etc/passwd)</t></is></c></row>'
    contents = [
        fetch(serve_guarded(f"/{n}", body, kind))["content"]
        for n, (body, kind) in enumerate(((page.encode(), "text/html"), (text.encode(),
            "text/markdown"), (hostile.xlsx({"S": hostile.sheet(cell)}), XLSX)))
    ]  # fmt: skip
    for content in contents:
        assert "file:" not in content, content
        assert "127.0.0.2/admin" not in content, content
        assert "file link" in content
    assert "[public link](https://example.com/page)" in contents[0]
    assert "`http://127.0.0.2/`" in contents[1]  # an autolink left as code, followed by none
    assert "[public link](https://example.com/page)" in contents[1]


def _pptx_with_places() -> bytes:
    """A deck whose first slide has a run linked (a:hlinkClick) to each of PLACES."""
    runs = "".join(
        f'<a:p><a:r><a:rPr><a:hlinkClick r:id="r{name}"/></a:rPr><a:t>{name} link</a:t></a:r></a:p>'
        for name, _ in PLACES
    )
    box = hostile.text_box(2, []).replace("<a:bodyPr/>", f"<a:bodyPr/>{runs}")
    deck = zipfile.ZipFile(io.BytesIO(hostile.pptx_with(corpus.deck_pptx().body, box)))
    members = {name: deck.read(name) for name in deck.namelist()}
    rels = "ppt/slides/_rels/slide1.xml.rels"
    members[rels] = members[rels].replace(b"</Relationships>", b"".join(
        b'<Relationship Id="r%s" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/hyperlink" Target="%s" TargetMode="External"/>'
        % (name.encode(), target.encode()) for name, target in PLACES
    ) + b"</Relationships>")  # fmt: skip
    return _package(members)


def test_pdf_link_annotations_and_slides_give_no_targets(serve_guarded):
    """Held in issue 55's round: a PDF's link annotations (and its actions) and a slide's
    linked runs are not read as links, so no target of them reaches the markdown, with or
    without include_links; their text does."""
    pdf_body, deck = hostile.pdf_links([target for _, target in PLACES]), _pptx_with_places()
    for include in (True, False):
        content = fetch(serve_guarded(f"/l{include}.pdf", pdf_body, "application/pdf"),
                        include_links=include)["content"]  # fmt: skip
        assert content.startswith("[Page 1 of 1]\n\nLink 0")
        assert "](" not in content
        assert "://" not in content
        content = fetch(serve_guarded(f"/l{include}.pptx", deck, corpus.deck_pptx().kind),
                        include_links=include)["content"]  # fmt: skip
        assert all(f"{name} link" in content for name, _ in PLACES), content
        assert "](" not in content
        assert "://" not in content


# ---------------------------------------------------------------- held in issue 55's round


def _zip64(body: bytes, member: str, size: int) -> bytes:
    """The zip with `member`'s directory entry in zip64 form: its unpacked size 0xFFFFFFFF and
    the real one, `size`, in a zip64 extra field."""
    data = bytearray(body)
    name = member.encode()
    entry = data.index(b"PK\x01\x02")
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.index(b"PK\x01\x02", entry + 4)
    data[entry + 24 : entry + 28] = b"\xff\xff\xff\xff"
    extra = int.from_bytes(data[entry + 30 : entry + 32], "little")
    data[entry + 30 : entry + 32] = (extra + 12).to_bytes(2, "little")
    at = entry + 46 + len(name)
    data[at:at] = b"\x01\x00\x08\x00" + size.to_bytes(8, "little")
    end = data.rindex(b"PK\x05\x06")
    table = int.from_bytes(data[end + 12 : end + 16], "little") + 12
    data[end + 12 : end + 16] = table.to_bytes(4, "little")
    return bytes(data)


def _overlapping(body: bytes, member: str, copies: int) -> bytes:
    """The zip with `copies` more directory entries naming new members whose data is
    `member`'s own (their local header is its): an overlapping zip."""
    data = bytearray(body)
    directory, end = data.index(b"PK\x01\x02"), data.index(b"PK\x05\x06")
    name = member.encode()
    entry = directory
    while data[entry + 46 : entry + 46 + len(name)] != name:
        entry = data.index(b"PK\x01\x02", entry + 4)
    size = 46 + sum(
        int.from_bytes(data[entry + at : entry + at + 2], "little") for at in (28, 30, 32)
    )
    one = bytes(data[entry : entry + size])
    more = b"".join(one.replace(name, name[:-1] + b"%d" % (n % 10)) for n in range(copies))
    table = bytes(data[directory:end]) + more
    tail = bytearray(data[end:])
    count = int.from_bytes(tail[10:12], "little") + copies
    tail[8:10] = tail[10:12] = count.to_bytes(2, "little")
    tail[12:16] = len(table).to_bytes(4, "little")
    return bytes(data[:directory]) + table + bytes(tail)


def test_a_zip64_directory_is_read_and_its_sizes_are_held_to_the_limit(serve):
    sample = samples()["handbook.docx"]
    whole = fetch(serve("/z.docx", _zip64(sample.body, "word/document.xml", 5031), DOCX))
    assert whole["success"] is True, whole
    lying = fetch(serve("/y.docx", _zip64(sample.body, "word/document.xml", 1 << 40), DOCX))
    assert lying["error_code"] == "TOO_LARGE", lying
    assert "MiB unpacked (at most 64 MiB)" in lying["error"]


def test_overlapping_entries_count_their_size_each(serve):
    """Two hundred directory entries on one 341 KiB member: 68 MiB unpacked, as a bomb of
    overlapping entries is."""
    out = fetch(serve("/o.docx", _overlapping(corpus.report_docx().body, "word/styles.xml",
                                              200), DOCX))  # fmt: skip
    assert out["error_code"] == "TOO_LARGE", out
    assert "MiB unpacked (at most 64 MiB)" in out["error"]


def test_an_entry_that_lies_about_its_member_is_a_damaged_zip(serve):
    """Every member is read (its content says whether it is XML), so an entry whose local
    header names another member is found, whatever it is called."""
    out = fetch(serve("/p.docx", _overlapping(corpus.report_docx().body, "word/styles.xml", 2),
                      DOCX))  # fmt: skip
    assert out["error_code"] == "PARSE_ERROR", out
    assert "a damaged zip: File name in directory 'word/styles.xm0'" in out["error"]


def test_a_zip_bomb_inside_a_document_is_never_unpacked(serve):
    inner = io.BytesIO()
    with zipfile.ZipFile(inner, "w", zipfile.ZIP_DEFLATED) as bomb:
        bomb.writestr("zeros", bytes(50 << 20))
    members = {"word/embeddings/bomb.zip": inner.getvalue()}
    out = fetch(serve("/n.docx", hostile.docx(hostile.paragraph("Outer text"), members=members),
                      DOCX))  # fmt: skip
    assert out["success"] is True, out
    assert out["content"] == "Outer text"


def _epub_with_paths(items: list[str], link: bytes = b"/etc/passwd") -> bytes:
    """An EPUB whose spine lists these hrefs, with ok.xhtml a chapter and link.xhtml stored
    as a symbolic link to `link`."""
    manifest = "".join(f'<item id="i{n}" href="{h}" media-type="application/xhtml+xml"/>'
                       for n, h in enumerate(items))  # fmt: skip
    spine = "".join(f'<itemref idref="i{n}"/>' for n in range(len(items)))
    symlink = zipfile.ZipInfo("OEBPS/link.xhtml")
    symlink.external_attr = 0o120777 << 16
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip")
        epub.writestr("META-INF/container.xml", hostile.CONTAINER % b"OEBPS/content.opf")
        epub.writestr("OEBPS/content.opf", (
            '<package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata/>'
            f"<manifest>{manifest}</manifest><spine>{spine}</spine></package>"
        ))  # fmt: skip
        epub.writestr("OEBPS/ok.xhtml", hostile.xhtml("<p>Kept</p>"))
        epub.writestr(symlink, link)
    return out.getvalue()


@pytest.mark.parametrize("href", ["../../../../etc/passwd", "/etc/passwd", "link.xhtml"])
def test_epub_chapter_paths_lead_nowhere_outside_the_zip(serve, href):
    """Held in issue 55's round: `../`, absolute and symbolic-link names are looked up in the
    zip alone, never on the disk."""
    out = fetch(serve("/s.epub", _epub_with_paths([href, "ok.xhtml"]), EPUB.decode()))
    assert "root:" not in json.dumps(out)


def test_a_chapter_missing_from_the_zip_is_named_and_the_rest_read(serve):
    items = ["../../../../etc/passwd", "/etc/passwd", "link.xhtml", "ok.xhtml"]
    out = fetch(serve("/m.epub", _epub_with_paths(items), EPUB.decode()))
    assert out["success"] is True, out
    assert out["content"].split("\n\n") == ["/etc/passwd", "Kept"]  # the link's own text
    assert [w["message"] for w in out["warnings"]] == [
        "The book's chapter 1 (../../../etc/passwd) is missing.",
        "The book's chapter 2 (etc/passwd) is missing.",
    ]


def test_external_relationships_alt_chunks_and_included_text_are_not_read(serve):
    relationships = (
        b'<Relationship Id="rImg" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/image" Target="file:///etc/passwd" TargetMode="External"/>'
        b'<Relationship Id="rAlt" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/aFChunk" Target="chunk.html"/>'
        b'<Relationship Id="rSub" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/subDocument" Target="file:///etc/passwd" TargetMode="External"/>'
    )
    body = (
        hostile.paragraph("Before")
        + '<w:p><w:r><w:pict><v:imagedata xmlns:v="urn:schemas-microsoft-com:vml" r:id="rImg"/>'
        "</w:pict></w:r></w:p>"
        + '<w:altChunk r:id="rAlt"/><w:subDoc r:id="rSub"/>'
        + "<w:p><w:fldSimple w:instr='INCLUDETEXT \"/etc/passwd\"'><w:r><w:t>cached</w:t></w:r>"
        "</w:fldSimple></w:p>" + hostile.paragraph("After")
    )
    members = {"word/chunk.html": b"<html><body><p>Alt chunk text</p></body></html>"}
    out = fetch(serve("/e.docx", hostile.docx(body, relationships=relationships,
                                              members=members), DOCX))  # fmt: skip
    assert out["success"] is True, out
    assert "root:" not in out["content"]
    assert "Alt chunk text" not in out["content"]
    assert out["content"].startswith("Before")
    assert out["content"].endswith("After")


def test_a_pdfs_actions_reach_nothing(serve, fake_server):
    """An OpenAction, a link, a launch, a form submission and JavaScript, all to this test's
    server: none is followed."""
    url = serve("/a.pdf", hostile.pdf_actions(fake_server.url), "application/pdf")
    out = fetch(url)
    assert out["content"] == "[Page 1 of 1]\n\nA page with actions"
    assert {seen.path for seen in fake_server.seen} <= {"/a.pdf", "/robots.txt"}


def test_a_page_of_10k_annotations_is_read(serve):
    out = fetch(serve("/many.pdf", hostile.pdf_annotations(10_000), "application/pdf"))
    assert out["content"] == "[Page 1 of 1]\n\nAnnotated page"


def test_a_pdf_whose_cross_references_point_at_the_wrong_bytes_is_read(serve):
    """Every entry of the table points into the header: PDFium rebuilds the table from the
    objects themselves, and each page is read in order."""
    body = hostile.pdf_broken_xref(["First page", "Second page"])
    out = fetch(serve("/broken.pdf", body, "application/pdf"))
    assert out["content"] == "[Page 1 of 2]\n\nFirst page\n\n[Page 2 of 2]\n\nSecond page"


# ---------------------------------------------------------------- the reader's own process


def _reads(*events: forked.Event, then: Any = None) -> Any:
    """A reader that yields `events`, then does `then` (raises it, or calls it)."""

    def reader() -> Any:
        yield from events
        if isinstance(then, BaseException):
            raise then
        if then is not None:
            then()

    return reader


PART = ("part", "read")


@pytest.mark.parametrize(
    ("then", "stop"),
    [
        (None, None),
        (MemoryError(), forked.Stop("memory", 2)),
        (RecursionError(), forked.Stop("failed", 2, "it is nested too deeply")),
        (ValueError("odd"), forked.Stop("failed", 2, "ValueError: odd")),
        (os.abort, forked.Stop("memory", 2, "it is damaged")),
        (
            lambda: os.kill(os.getpid(), signal.SIGSEGV),
            forked.Stop("failed", 2, "its reader stopped on it"),
        ),
        (lambda: os._exit(0), forked.Stop("failed", 2, "its reader stopped on it")),
    ],
    ids=["done", "memory", "recursion", "library", "abort", "crash", "silent"],
)
def test_how_a_reader_ends_is_what_its_read_says(then, stop):
    reader = _reads(("at", 1), PART, ("meta", {"total": 2}), ("at", 2), then=then)
    read = forked.read_apart(reader, None, 256 << 20)
    assert read == forked.Read({"total": 2}, ["read"], [], stop)


def test_a_tool_error_in_the_reader_is_the_calls():
    with pytest.raises(ToolError) as caught:
        forked.read_apart(_reads(then=ToolError(ErrorCode.TOO_LARGE, "big")), None, 1 << 30)
    assert (caught.value.code, caught.value.message) == (ErrorCode.TOO_LARGE, "big")


def test_a_reader_that_sends_too_much_is_stopped(monkeypatch):
    monkeypatch.setattr(forked, "MAX_RECEIVED", 1000)
    reader = _reads(("at", "chapter 1"), ("part", "x" * 5000), ("at", "chapter 2"))
    read = forked.read_apart(reader, None, 1 << 30)
    assert read.stop is not None
    assert read.stop.why == "memory"


def test_a_reader_is_killed_before_the_deadline(tmp_path):
    (tmp_path / "hung").touch()  # the deadline has passed from the start
    read = forked.read_apart(_reads(then=lambda: time.sleep(STALL)), _ends_when(tmp_path), 1 << 30)
    assert read == forked.Read({}, [], [], forked.Stop("time"))


def test_text_a_pdf_gives_as_lone_surrogates_is_sent_valid():
    read = forked.read_apart(_reads(("part", ["a\ud800b", {"k\udfff": "\ud83d\ude00"}])), None,
                             1 << 30)  # fmt: skip
    assert read.parts == [["a\ufffdb", {"k\ufffd": "\U0001f600"}]]


def test_a_reader_that_cannot_be_started_is_a_parse_error(monkeypatch):
    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    monkeypatch.setattr(os, "fork", no_fork)
    with pytest.raises(ToolError) as caught:
        forked.read_apart(_reads(), None, 1 << 30)
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert "no process could be started to read it (Resource temporarily" in caught.value.message


def test_explained_stops():
    memory = 1 << 30
    assert forked.Stop("time").explained("page 2", memory) == (
        ErrorCode.TOO_LARGE, "the call's time ran out while reading page 2"
    )  # fmt: skip
    assert forked.Stop("memory").explained("page 2", memory)[1] == (
        "page 2 needs more memory than one call may take (1,024 MiB, IKIGAI_WEB_MAX_MEMORY_MB)"
    )
    assert forked.Stop("failed", 2, "KeyError: 'x'").explained("slide 2", memory) == (
        ErrorCode.PARSE_ERROR, "slide 2 could not be read (KeyError: 'x')"
    )  # fmt: skip


# ---------------------------------------------------------------- each reader's own bounds


def _read(kind: str, body: bytes, reading: decode.Reading = READ) -> Any:
    if kind == "application/pdf":
        return pdf.pdf_document(body, "u", reading)
    return office.office_document(kind, body, "u", reading)


def test_a_pdf_stops_at_the_text_a_call_reads_and_says_where_to_read_on(monkeypatch):
    monkeypatch.setattr(pdf, "MAX_TEXT", 5)
    document = _read(
        "application/pdf", _pdf([[_line(f"Page text {n}", 0, 700)] for n in (1, 2, 3)])
    )
    assert document.markdown == "[Page 1 of 3]\n\nPage text 1"
    assert document.warnings[0]["message"] == (
        "This document has 3 pages and pages 1-1 were read (5 characters is the most): to read "
        'on, call again with pages "2-3".'
    )


@pytest.mark.parametrize("name", ["handbook.docx", "figures.xlsx", "review.pptx", "story.epub"])
def test_each_format_stops_at_the_text_a_call_reads(monkeypatch, name):
    from ikigai_web.fetch.reading.files import word

    monkeypatch.setattr(office_parts, "MAX_TEXT", 12)
    monkeypatch.setattr(word, "BATCH_PARAGRAPHS", 1)
    sample = samples()[name]
    document = _read(sample.kind, sample.body)
    assert document.markdown
    assert len(document.markdown.replace("[Slide 1 of 3]\n\n", "")) <= 12
    said = " ".join(w["message"] for w in document.warnings)
    assert "12 characters, the most one call reads" in said or "12 characters is the most" in said


def test_a_word_document_past_its_paragraphs_says_how_much_was_read(monkeypatch):
    from ikigai_web.fetch.reading.files import word

    monkeypatch.setattr(word, "MAX_PARAGRAPHS", 3)
    document = _read(DOCX, samples()["handbook.docx"].body)
    assert document.markdown.startswith("# Team Handbook\n\n# Getting started")
    assert document.warnings == [{"code": "TOO_LARGE", "message": (
        "This document is longer than web-fetch reads in one call (3 paragraphs, 400,000 "
        "elements): paragraphs 1-3 were read, and the rest left out."
    )}]  # fmt: skip


def test_a_workbooks_bounds(monkeypatch):
    monkeypatch.setattr(excel, "MAX_STRING_ELEMENTS", 10)
    with pytest.raises(ToolError) as caught:
        _read(XLSX, hostile.xlsx_shared_strings(10))
    assert caught.value.code is ErrorCode.TOO_LARGE
    assert "has 21 elements of shared strings, more than web-fetch reads (10)" in (
        caught.value.message
    )
    monkeypatch.setattr(excel, "MAX_SCANNED", 2)
    document = _read(XLSX, hostile.xlsx_empty_rows(5))
    assert document.markdown == ""
    assert "was read up to its row 2 " in document.warnings[0]["message"]


def test_a_decks_bounds(monkeypatch):
    from ikigai_web.fetch.reading.files import slides

    sample = samples()["review.pptx"]
    monkeypatch.setattr(slides, "MAX_SHAPES", 1)
    document = _read(sample.kind, sample.body)
    assert "Slide 2 has more than 1 shapes: its first were read." in str(document.warnings)
    monkeypatch.setattr(slides, "MAX_SLIDE_ELEMENTS", 15)
    document = _read(sample.kind, sample.body)
    assert document.markdown.startswith("[Slide 1 of 3]\n\n[Slide 2 of 3]\n\n[Slide 3 of 3]")
    assert document.warnings[0]["message"].startswith("Slide 1 was left out: it holds ")
    monkeypatch.setattr(slides, "MAX_PART_ELEMENTS", 15)
    with pytest.raises(ToolError) as caught:
        _read(sample.kind, sample.body)
    assert caught.value.code is ErrorCode.TOO_LARGE
    assert "The deck at u has a part (" in caught.value.message


def test_a_reader_stopped_before_it_read_anything_says_where(monkeypatch, tmp_path):
    (tmp_path / "hung").touch()  # out of time from the start
    late = READ._replace(deadline=_ends_when(tmp_path))
    for kind, body, said in (
        ("application/pdf", samples()["report.pdf"].body, "The PDF at u could not be read"),
        (DOCX, samples()["handbook.docx"].body, "The document at u could not be read"),
        (samples()["review.pptx"].kind, samples()["review.pptx"].body, "The deck at u could not"),
    ):
        with pytest.raises(ToolError) as caught:
            _read(kind, body, late)
        assert caught.value.code is ErrorCode.TOO_LARGE
        assert caught.value.message.startswith(said)
        assert "the call's time ran out while reading " in caught.value.message


def test_a_first_page_that_stops_the_reader_names_the_pages_after_it(monkeypatch):
    def fails(_pdf: Any, index: int) -> Any:
        raise MemoryError

    monkeypatch.setattr(pdf, "_page", fails)
    body = _pdf([[_line("one", 0, 700)], [_line("two", 0, 700)]])
    with pytest.raises(ToolError) as caught:
        _read("application/pdf", body)
    assert caught.value.message.endswith(
        "page 1 needs more memory than one call may take (1,024 MiB, IKIGAI_WEB_MAX_MEMORY_MB). "
        'The pages after it may be read: pages "2-".'
    )


def test_links_that_cannot_be_parsed_or_are_script_handlers_are_dropped():
    from ikigai_web.fetch.reading.links import web_links_only

    text = '[odd](http://[::1/x) <img src="https://example.com/i.png" onerror="x()"> \ue000'
    assert web_links_only(text, lambda _host: True) == (
        'odd <img src="https://example.com/i.png"> '
    )


def test_a_private_use_character_cannot_keep_the_link_around_an_image():
    """The marks that set a kept image aside are private-use characters: text that holds one
    (to stop the marking) still has the link around its image judged."""
    from ikigai_web.fetch.reading.links import web_links_only

    public = lambda host: host == "pub.example"  # noqa: E731 - the policy, inline
    linked = "[![x](https://pub.example/i.png)](http://10.0.0.1/admin)"
    for text in (linked, "\ue000 " + linked, linked + " \ue0011\ue001"):
        kept = web_links_only(text, public)
        assert "10.0.0.1" not in kept
        assert "![x](https://pub.example/i.png)" in kept


@pytest.mark.parametrize("encoding", ["zlib_codec", "base64", "hex", "rot13", "no-such-codec"])
def test_a_part_declaring_a_codec_that_is_no_text_encoding_is_a_parse_error(encoding):
    head = f'<?xml version="1.0" encoding="{encoding}"?><w:document/>'.encode()
    with pytest.raises(ToolError) as caught:
        archive._markup_encoding(head, "word/document.xml")
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert f"its encoding, {encoding}, is not one web-fetch reads" in caught.value.message
