"""Excel workbooks through openpyxl, read streaming: each sheet under its name, as a table
whose first row is the header.

openpyxl loads a workbook's shared strings whole before any sheet, and fills the gaps
between the rows a sheet has with empty ones (a sheet with a cell in A1 and one in AX1048576
is a million rows of 50 cells). So a workbook is refused whose shared strings are more than
MAX_STRING_ELEMENTS elements, and at most MAX_SCANNED rows of a sheet are looked at, empty
ones included; of them a sheet shows at most MAX_ROWS rows of MAX_COLUMNS cells, a workbook
MAX_CELLS cells. The call's deadline bounds the rest (a workbook of many sheets).
"""

from __future__ import annotations

from datetime import date, datetime, time
from io import BytesIO
from typing import TYPE_CHECKING, Any

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.reading.files.office_parts import ELSEWHERE, TextBudget, line, table

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ikigai_web.fetch.reading.files import forked
    from ikigai_web.fetch.reading.files.archive import Package

MAX_ROWS = 2_000
MAX_COLUMNS = 50
MAX_CELLS = 200_000
# Rows of a sheet looked at, empty ones included: a sheet's rows shown ten times over, and
# under a second of openpyxl's time.
MAX_SCANNED = 20_000
# The shared-string table's elements (an <si> and its <t>, more with rich text): some
# 400,000 strings, a few seconds to load.
MAX_STRING_ELEMENTS = 1_000_000
_SHARED_STRINGS = "sst"


def read(package: Package, body: bytes, url: str) -> Iterator[forked.Event]:
    """In the reader's process: the workbook's properties, then each sheet as a table."""
    import openpyxl

    strings = sum(part.elements for part in package.parts.values() if part.root == _SHARED_STRINGS)
    if strings > MAX_STRING_ELEMENTS:
        raise ToolError(
            ErrorCode.TOO_LARGE,
            f"The workbook at {url} has {strings:,} elements of shared strings, more than "
            f"web-fetch reads ({MAX_STRING_ELEMENTS:,}). {ELSEWHERE}",
        )
    yield "at", "the workbook"
    book = openpyxl.load_workbook(BytesIO(body), read_only=True, data_only=True)
    try:
        props = book.properties
        yield (
            "meta",
            {
                "title": props.title or "",
                "author": props.creator or "",
                "description": props.subject or "",
            },
        )
        yield from _sheets(book.worksheets)
    finally:
        book.close()


def _sheets(sheets: list[Any]) -> Iterator[forked.Event]:
    cells, budget = MAX_CELLS, TextBudget()
    for sheet in sheets:
        where = f"sheet “{line(sheet.title)}”"
        yield "at", where
        rows, cut = _rows(sheet, cells)
        cells -= sum(map(len, rows))
        yield "part", budget.take(f"## {line(sheet.title)}\n\n{table(rows)}") if rows else ""
        if budget.spent:
            yield budget.warning(where)
            return
        if cut:
            after = "the rows after it" + (" and the sheets after it" if cells <= 0 else "")
            message = f"The {where} was read up to {cut}: {after} were left out."
            yield "warning", {"code": "TOO_LARGE", "message": message}
        if cells <= 0:
            return


def _rows(sheet: Any, cells: int) -> tuple[list[list[str]], str]:
    """The sheet's rows as text, without empty rows and trailing empty cells, bounded; and,
    when rows were left unread, where it stopped and why ("" when it read them all)."""
    rows: list[list[str]] = []
    looked = 0
    for row in sheet.iter_rows(max_col=MAX_COLUMNS, values_only=True):
        if len(rows) >= MAX_ROWS:
            return rows, f"its {MAX_ROWS:,} rows of text (web-fetch reads no more of a sheet)"
        if cells <= 0:
            return rows, f"the workbook's {MAX_CELLS:,} cells (web-fetch reads no more)"
        if looked >= MAX_SCANNED:
            return rows, (
                f"its row {MAX_SCANNED:,} (web-fetch looks at no more rows of a sheet, empty "
                "ones included)"
            )
        looked += 1
        if row.count(None) == len(row):  # an empty row, or a gap openpyxl filled
            continue
        texts = [_value(value) for value in row]
        while texts and not texts[-1]:
            texts.pop()
        if texts:
            rows.append(texts)
            cells -= len(texts)
    return rows, ""


def _value(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.15g}"
    if isinstance(value, datetime) and value.time() == time():
        return value.date().isoformat()  # a date cell: openpyxl gives it a midnight
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return line(str(value))
