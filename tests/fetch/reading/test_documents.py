"""Documents through web-fetch: PDFs, Word, Excel, PowerPoint and EPUB files written by their
own writer libraries (bench/document_corpus.py), served on loopback, read to markdown with
their headings, tables, lists, columns and pages; pages N-M; and every bomb and broken file
answered with a clear error or a bounded part, never a hang or a crash."""

from __future__ import annotations

import io
import json
import random
import re
import time
import zipfile
from typing import TYPE_CHECKING, Any

import document_corpus as corpus
import pytest
from conftest import STALL

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.pipeline import to_document
from ikigai_web.fetch.reading import decode
from ikigai_web.fetch.reading.files import (
    MAX_PAGES,
    archive,
    excel,
    layout,
    office,
    paging,
    pdf,
)

if TYPE_CHECKING:
    from pathlib import Path
from documents_support import (
    DOCX,
    EPUB,
    READ,
    _ends_when,
    _line,
    _package,
    _pdf,
    cells,
    fetch,
    headings,
    samples,
)

pytestmark = pytest.mark.loopback


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


def _hangs_from(function: Any, unit: int, tmp_path: Path) -> Any:
    """`function`, whose second argument numbers a unit (a page's index, a slide's number),
    as the reader's process runs it, but from `unit` on it marks `tmp_path` and never ends."""

    def hangs(*args: Any) -> Any:
        if args[1] >= unit:
            (tmp_path / "hung").touch()
            time.sleep(STALL)
        return function(*args)

    return hangs


def _cells_at(row: tuple[str, ...], y: float) -> list[layout.Char]:
    return [c for i, text in enumerate(row) for c in _line(text, 50 + 150 * i, y)]


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
