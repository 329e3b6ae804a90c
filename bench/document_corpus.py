"""Documents written with the formats' own writer libraries (reportlab, python-docx, openpyxl,
python-pptx; an EPUB by hand, as its spec lays it out), each with what a reader must recover:
its headings, its table cells, and some lines the markdown must hold exactly.

The tests (test_documents.py) and `make bench` (bench/bench_documents.py) read the same
corpus; nothing here is stored, every file is made when asked for.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass, field

TABLE = [
    ["Region", "Q1", "Q2", "Change"],
    ["North", "12.4", "15.1", "+21.8%"],
    ["South", "9.8", "10.2", "+4.1%"],
    ["East", "14.0", "13.5", "-3.6%"],
    ["West", "7.7", "8.9", "+15.6%"],
]
WORDS = [
    "revenue",
    "grew",
    "in",
    "most",
    "regions",
    "while",
    "costs",
    "stayed",
    "flat",
    "and",
    "the",
    "teams",
    "shipped",
    "the",
    "new",
    "platform",
    "on",
    "time",
    "with",
    "fewer",
    "incidents",
    "than",
    "planned",
]


@dataclass
class Sample:
    name: str
    kind: str
    body: bytes
    headings: list[str]
    cells: list[str]
    lines: list[str] = field(default_factory=list)  # lines the markdown holds as they are
    order: list[str] = field(default_factory=list)  # texts that come in this order
    title: str = ""


def words(count: int, start: int = 0) -> str:
    return " ".join(WORDS[(start + i) % len(WORDS)] for i in range(count))


def _cells(rows: list[list[str]]) -> list[str]:
    return [cell for row in rows for cell in row]


# ------------------------------------------------------------------ PDF


def report_pdf() -> Sample:
    """Two pages: a title, numbered headings, a paragraph hyphenated across a line end,
    bullet and numbered lists, a ruled table."""
    from reportlab.lib import colors
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import (
        ListFlowable,
        ListItem,
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Table,
        TableStyle,
    )

    styles = getSampleStyleSheet()
    body = styles["BodyText"]
    table = Table(TABLE)
    table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
    story = [
        Paragraph("Quarterly Report", styles["Title"]),
        Paragraph("1. Summary", styles["Heading1"]),
        Paragraph(f"{words(30)} and the measure-<br/>ment of churn improved.", body),
        Paragraph(words(45, 3), body),
        ListFlowable(
            [ListItem(Paragraph(t, body)) for t in ("Faster start-up", "Smaller bills")],
            bulletType="bullet",
        ),
        Paragraph("2. Results", styles["Heading1"]),
        Paragraph("2.1 Regional figures", styles["Heading2"]),
        table,
        PageBreak(),
        Paragraph("3. Outlook", styles["Heading1"]),
        Paragraph(words(40, 5), body),
        ListFlowable(
            [ListItem(Paragraph(t, body)) for t in ("Hire two engineers", "Open an office")],
            bulletType="1",
        ),
    ]
    out = io.BytesIO()
    SimpleDocTemplate(out, title="Quarterly Report", author="Pat Writer").build(story)
    return Sample(
        "report.pdf",
        "application/pdf",
        out.getvalue(),
        headings=[
            "Quarterly Report",
            "1. Summary",
            "2. Results",
            "2.1 Regional figures",
            "3. Outlook",
        ],
        cells=_cells(TABLE),
        lines=[
            "# Quarterly Report",
            "## 2.1 Regional figures",
            "| Region | Q1 | Q2 | Change |",
            "| North | 12.4 | 15.1 | +21.8% |",
            "- Faster start-up",
            "- Smaller bills",
            "1. Hire two engineers",
            "2. Open an office",
            "[Page 1 of 2]",
            "[Page 2 of 2]",
        ],
        order=["measurement of churn improved.", "[Page 2 of 2]", "# 3. Outlook"],
        title="Quarterly Report",
    )


def columns_pdf() -> Sample:
    """A title across the page over two columns of text, on two pages: the left column is
    read before the right one."""
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import (
        BaseDocTemplate,
        Frame,
        FrameBreak,
        NextPageTemplate,
        PageTemplate,
        Paragraph,
    )

    styles = getSampleStyleSheet()
    width, height = A4
    margin, gap = 50, 24
    column = (width - 2 * margin - gap) / 2
    top = Frame(margin, height - 130, width - 2 * margin, 80, id="top")
    left = Frame(margin, margin, column, height - 190, id="left")
    right = Frame(margin + column + gap, margin, column, height - 190, id="right")
    left2 = Frame(margin, margin, column, height - 2 * margin, id="left2")
    right2 = Frame(margin + column + gap, margin, column, height - 2 * margin, id="right2")
    out = io.BytesIO()
    doc = BaseDocTemplate(out, pagesize=A4, title="Two Columns")
    doc.addPageTemplates(
        [
            PageTemplate("first", [top, left, right]),
            PageTemplate("later", [left2, right2]),
        ]
    )
    story = [
        Paragraph("A Study in Two Columns", styles["Title"]),
        NextPageTemplate("later"),
        FrameBreak(),
        Paragraph("Left heading", styles["Heading2"]),
    ]
    story += [Paragraph(f"Left {i}: {words(60, i)}.", styles["BodyText"]) for i in range(4)]
    story += [FrameBreak(), Paragraph("Right heading", styles["Heading2"])]
    story += [Paragraph(f"Right {i}: {words(60, i)}.", styles["BodyText"]) for i in range(4)]
    story += [FrameBreak(), Paragraph("Second page heading", styles["Heading2"])]
    story += [Paragraph(f"Later {i}: {words(80, i)}.", styles["BodyText"]) for i in range(8)]
    doc.build(story)
    return Sample(
        "columns.pdf",
        "application/pdf",
        out.getvalue(),
        headings=[
            "A Study in Two Columns",
            "Left heading",
            "Right heading",
            "Second page heading",
        ],
        cells=[],
        lines=["# A Study in Two Columns", "## Left heading", "## Right heading"],
        order=[
            "Left 0:",
            "Left 3:",
            "## Right heading",
            "Right 0:",
            "Right 3:",
            "[Page 2 of 2]",
            "Later 0:",
            "Later 7:",
        ],
        title="Two Columns",
    )


def long_pdf(pages: int = 100) -> Sample:
    """A report of `pages` pages, each a section: a heading, four paragraphs, a subheading, a
    table and a list."""
    from reportlab.lib import colors
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import (
        ListFlowable,
        ListItem,
        PageBreak,
        Paragraph,
        SimpleDocTemplate,
        Table,
        TableStyle,
    )

    styles = getSampleStyleSheet()
    story = []
    headings: list[str] = []
    cells: list[str] = []
    for n in range(1, pages + 1):
        rows = [["Item", "Count", "Share"]] + [
            [f"Item {n}.{r}", str(n * r), f"{r}%"] for r in range(1, 5)
        ]
        table = Table(rows)
        table.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.black)]))
        story += [Paragraph(f"{n}. Section {n}", styles["Heading1"])]
        story += [Paragraph(words(90, n + i), styles["BodyText"]) for i in range(4)]
        story += [Paragraph(f"{n}.1 Figures", styles["Heading2"]), table]
        items = [ListItem(Paragraph(f"Point {n}.{k}", styles["BodyText"])) for k in range(3)]
        story += [ListFlowable(items, bulletType="bullet"), PageBreak()]
        headings += [f"{n}. Section {n}", f"{n}.1 Figures"]
        cells += _cells(rows)
    out = io.BytesIO()
    SimpleDocTemplate(out, title=f"A {pages}-page report").build(story)
    return Sample(f"long-{pages}.pdf", "application/pdf", out.getvalue(), headings, cells)


# ------------------------------------------------------------------ Office


def report_docx() -> Sample:
    import docx

    document = docx.Document()
    document.core_properties.title = "Team Handbook"
    document.core_properties.author = "Pat Writer"
    document.add_heading("Team Handbook", 0)
    document.add_heading("Getting started", 1)
    document.add_paragraph(words(40))
    for text in ("Read the guide", "Meet the team"):
        document.add_paragraph(text, style="List Bullet")
    document.add_heading("Numbers", 2)
    for text in ("Open the dashboard", "Check the totals"):
        document.add_paragraph(text, style="List Number")
    table = document.add_table(rows=len(TABLE), cols=len(TABLE[0]))
    for row, values in zip(table.rows, TABLE, strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.add_heading("Closing words", 1)
    document.add_paragraph(words(20, 4))
    out = io.BytesIO()
    document.save(out)
    return Sample(
        "handbook.docx",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        out.getvalue(),
        headings=["Team Handbook", "Getting started", "Numbers", "Closing words"],
        cells=_cells(TABLE),
        lines=[
            "# Team Handbook",
            "# Getting started",
            "- Read the guide",
            "1. Open the dashboard",
            "| North | 12.4 | 15.1 | +21.8% |",
        ],
        title="Team Handbook",
    )


STAFF = [["Name", "Team", "Started"], ["Ann", "Sales", "2021-04-01"], ["Bo", "Ops", "2023-09-15"]]


def book_xlsx() -> Sample:
    import datetime as dt

    import openpyxl

    book = openpyxl.Workbook()
    sales = book.active
    assert sales is not None
    sales.title = "Sales"
    for row in TABLE:
        sales.append([_number(v) for v in row])
    staff = book.create_sheet("Staff")
    staff.append(STAFF[0])
    for name, team, started in STAFF[1:]:
        staff.append([name, team, dt.date.fromisoformat(started)])
    book.properties.title = "Figures"
    out = io.BytesIO()
    book.save(out)
    return Sample(
        "figures.xlsx",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        out.getvalue(),
        headings=["Sales", "Staff"],
        # as a spreadsheet shows them: 14.0 is 14
        cells=[c.removesuffix(".0") for c in _cells(TABLE)] + [c for row in STAFF for c in row],
        lines=["## Sales", "| Region | Q1 | Q2 | Change |", "| Ann | Sales | 2021-04-01 |"],
        title="Figures",
    )


def _number(value: str) -> str | float:
    try:
        return float(value) if value[0].isdigit() else value
    except ValueError:
        return value


def deck_pptx() -> Sample:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[0])
    first.shapes.title.text = "Product Review"
    first.placeholders[1].text = "Spring edition"
    second = deck.slides.add_slide(deck.slide_layouts[1])
    second.shapes.title.text = "What changed"
    frame = second.placeholders[1].text_frame
    frame.text = "Faster start-up"
    for text, level in (("Half the time", 1), ("Smaller bills", 0)):
        paragraph = frame.add_paragraph()
        paragraph.text, paragraph.level = text, level
    second.notes_slide.notes_text_frame.text = "Mention the benchmark."
    third = deck.slides.add_slide(deck.slide_layouts[5])
    third.shapes.title.text = "Figures"
    shape = third.shapes.add_table(
        len(TABLE), len(TABLE[0]), Inches(1), Inches(2), Inches(8), Inches(3)
    )
    for r, values in enumerate(TABLE):
        for c, value in enumerate(values):
            shape.table.cell(r, c).text = value
    out = io.BytesIO()
    deck.save(out)
    return Sample(
        "review.pptx",
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        out.getvalue(),
        headings=["Product Review", "What changed", "Figures"],
        cells=_cells(TABLE),
        lines=[
            "[Slide 2 of 3]",
            "## What changed",
            "- Faster start-up",
            "  - Half the time",
            "Notes: Mention the benchmark.",
            "| West | 7.7 | 8.9 | +15.6% |",
        ],
        order=["## Product Review", "## What changed", "## Figures"],
        title="Product Review",
    )


def book_epub() -> Sample:
    chapters = [
        "<h1>Chapter One</h1><p>It began on a Monday.</p><ul><li>a list item</li></ul>",
        (
            "<h1>Chapter Two</h1><h2>A scene</h2><table><tr><th>Region</th><th>Q1</th></tr>"
            "<tr><td>North</td><td>12.4</td></tr></table>"
        ),
    ]
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as epub:
        epub.writestr("mimetype", "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        epub.writestr("META-INF/container.xml", CONTAINER)
        epub.writestr("OEBPS/content.opf", OPF)
        for n, chapter in enumerate(chapters, 1):
            epub.writestr(f"OEBPS/ch{n}.xhtml", XHTML.format(body=chapter))
    return Sample(
        "story.epub",
        "application/epub+zip",
        out.getvalue(),
        headings=["Chapter One", "Chapter Two", "A scene"],
        cells=["Region", "Q1", "North", "12.4"],
        lines=["# Chapter One", "- a list item", "## A scene"],
        title="A Short Story",
    )


CONTAINER = """<?xml version="1.0"?>
<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">
<rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>
</rootfiles></container>"""
OPF = """<?xml version="1.0"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>A Short Story</dc:title>
<dc:creator>Pat Writer</dc:creator><dc:identifier id="id">x</dc:identifier></metadata>
<manifest><item id="c1" href="ch1.xhtml" media-type="application/xhtml+xml"/>
<item id="c2" href="ch2.xhtml" media-type="application/xhtml+xml"/></manifest>
<spine><itemref idref="c1"/><itemref idref="c2"/></spine></package>"""
XHTML = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title>x</title></head>
<body>{body}</body></html>"""


def corpus() -> list[Sample]:
    return [report_pdf(), columns_pdf(), report_docx(), book_xlsx(), deck_pptx(), book_epub()]
