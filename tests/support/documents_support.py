"""Helpers shared by test_documents.py and test_documents_bounds.py."""

from __future__ import annotations

import io
import re
from functools import cache
from typing import TYPE_CHECKING, Any

import document_corpus as corpus
import hostile_documents as hostile
import pytest
from conftest import Reply

from ikigai_web.common.runner import answer, render
from ikigai_web.fetch.reading import decode
from ikigai_web.fetch.reading.files import (
    forked,
    layout,
)
from ikigai_web.tools import web_fetch

if TYPE_CHECKING:
    from pathlib import Path


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


def _package(members: dict[str, bytes], *, stored: tuple[str, ...] = ()) -> bytes:
    return bytes(hostile.package(members, stored=stored))


def _ends_when(tmp_path: Path) -> Any:
    """A deadline under the test's hand: it has time left until the reader starts the unit
    that hangs (`_hangs_from` marks it in `tmp_path`), then none. Until then the reader's
    parent looks at it every 50 ms."""

    class Deadline:
        def remaining(self) -> float:
            return 0.0 if (tmp_path / "hung").exists() else forked.KILL_RESERVE + 0.05

    return Deadline()


def _line(text: str, x: float, y: float, size: float = 10, *, bold: bool = False):
    """A line of characters, each 0.5 em wide, as a PDF places them."""
    step = size / 2
    return [
        layout.Char(ch, x + i * step, x + (i + 1) * step, y, size, bold)
        for i, ch in enumerate(text)
    ]


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
