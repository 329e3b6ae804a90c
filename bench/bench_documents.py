"""Documents through web-fetch: how much of their structure comes back, and what a long PDF costs.

1. Per format (PDF, Word, Excel, PowerPoint, EPUB), over the corpus the tests use
   (bench/document_corpus.py: files written by reportlab, python-docx, openpyxl, python-pptx,
   and an EPUB by its spec) plus a 100-page PDF report: the share of the headings written
   that come back as markdown headings, and of the table cells written that come back as
   cells of markdown tables, each counted as often as written. Target: >= 95 % each.
2. The 100-page PDF (about 250,000 characters: a heading, four paragraphs, a table and a list
   on each page) served from 127.0.0.1 and read by the installed web-fetch-tool, a new
   process and an empty cache each time, as a host runs it: the wall time of the whole call
   (median of 3) and its peak resident memory (the most of the 3). Targets: <= 5 s, <= 300 MB.
3. The hostile documents of issue 55 at the sizes it reported (bench/hostile_documents.py: a
   PDF whose content stream inflates to 1.5 GB, one whose font inflates to 1 GiB, an EPUB
   that lists a chapter 2,000 times, 1.6 M Word paragraphs, a slide of 1.6 M paragraphs, six
   sheets that claim a million rows, 900,000 empty rows, 2.5 M shared strings, 100,000
   shapes), each read once by the installed tool with IKIGAI_WEB_TIMEOUT at 10 s and the
   default memory cap (1 GiB): what it answered, its wall time against the deadline and its
   peak resident memory, the tool's reader included. Targets: each ends by the deadline plus
   the watchdog's grace (11.5 s), under 1.2 GB (the cap and what the tool holds), answering
   with its document, TOO_LARGE or PARSE_ERROR (never a timeout or no answer).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import document_corpus as corpus
import hostile_documents as hostile
from verdict import LAUNCHERS, ROOT, check, exit_code, failed

sys.path.insert(0, str(ROOT))

from typing import TYPE_CHECKING

from ikigai_web.fetch.pipeline import to_document

if TYPE_CHECKING:
    from collections.abc import Callable

TARGET_SHARE = 95.0
TARGET_S = 5.0
TARGET_MB = 300.0
RUNS = 3
FORMATS = {
    "application/pdf": "PDF",
    corpus.report_docx().kind: "Word",
    corpus.book_xlsx().kind: "Excel",
    corpus.deck_pptx().kind: "PowerPoint",
    "application/epub+zip": "EPUB",
}


def headings(markdown: str) -> Counter[str]:
    lines = markdown.splitlines()
    return Counter(line.lstrip("#").strip() for line in lines if line.startswith("#"))


def cells(markdown: str) -> Counter[str]:
    rows = [line for line in markdown.splitlines() if line.startswith("|") and "---|" not in line]
    return Counter(cell.strip() for row in rows for cell in row.strip("|").split(" | "))


def recovered(written: list[str], found: Counter[str]) -> int:
    return sum(min(count, found[text]) for text, count in Counter(written).items())


def quality(samples: list[corpus.Sample]) -> None:
    totals: dict[str, list[int]] = {name: [0, 0, 0, 0] for name in FORMATS.values()}
    for sample in samples:
        document, _ = to_document(
            bytearray(sample.body), sample.kind, f"http://127.0.0.1/{sample.name}",
            full_page=False, include_links=True,
        )  # fmt: skip
        total = totals[FORMATS[sample.kind]]
        total[0] += recovered(sample.headings, headings(document.markdown))
        total[1] += len(sample.headings)
        total[2] += recovered(sample.cells, cells(document.markdown))
        total[3] += len(sample.cells)
    print("documents: structure recovered, per format (the test corpus and a 100-page PDF)")
    for name, (found_h, all_h, found_c, all_c) in totals.items():
        share_h = 100 * found_h / all_h
        share_c = 100 * found_c / all_c
        print(f"  {name:<11} headings {found_h:>4}/{all_h:<4} "
              f"{check(f'{name} headings', share_h, TARGET_SHARE, '%', most=False)}")  # fmt: skip
        print(f"  {'':<11} cells    {found_c:>4}/{all_c:<4} "
              f"{check(f'{name} cells', share_c, TARGET_SHARE, '%', most=False)}")  # fmt: skip


class Handler(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/pdf")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: object) -> None:
        pass


def one_call(url: str, env: dict[str, str]) -> tuple[float, dict[str, object]]:
    started = time.monotonic()
    run = subprocess.run(
        [str(LAUNCHERS / "web-fetch-tool")],
        input=json.dumps({"url": url}).encode(),
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    return time.monotonic() - started, json.loads(run.stdout)


def long_pdf_call(sample: corpus.Sample) -> None:
    Handler.body = sample.body
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/long.pdf"
    times = []
    try:
        for _ in range(RUNS):
            with tempfile.TemporaryDirectory() as cache:
                env = os.environ | {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1", "XDG_CACHE_HOME": cache}
                took, out = one_call(url, env)
            assert out.get("success") is True, out
            times.append(took)
    finally:
        server.shutdown()
        server.server_close()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB to MiB
    size = len(sample.body) / 1024
    print(f"web-fetch of a 100-page PDF ({size:.0f} KiB, {out['total_pages']} pages) from "
          f"127.0.0.1, a new process and cache each call, {RUNS} calls:")  # fmt: skip
    median = statistics.median(times)
    print(f"  wall time, median  {check('100-page PDF time', median, TARGET_S, ' s')}")
    print(f"  peak RSS, most     {check('100-page PDF memory', peak, TARGET_MB, ' MB')}")


HOSTILE_DEADLINE = 10.0
HOSTILE_TARGET_S = HOSTILE_DEADLINE + 1.5  # the watchdog's grace (common/runner.py)
HOSTILE_TARGET_MB = 1200.0


def hostile_cases() -> list[tuple[str, str, Callable[[], bytes]]]:
    deck = corpus.deck_pptx().body
    docx, xlsx, pptx = corpus.report_docx().kind, corpus.book_xlsx().kind, corpus.deck_pptx().kind
    return [
        ("PDF stream inflating to 1.5 GB", "application/pdf",
         lambda: hostile.pdf_content_bomb(1500 << 20)),
        ("PDF font inflating to 1 GiB", "application/pdf", lambda: hostile.pdf_font_bomb(1 << 30)),
        ("EPUB spine: one chapter 2,000 times", "application/epub+zip",
         lambda: hostile.epub_repeated_spine(2_000)),
        ("Word: 1.6 M paragraphs", docx, lambda: hostile.docx_paragraphs(1_600_000)),
        ("PowerPoint: a box of 1.6 M paragraphs", pptx,
         lambda: hostile.pptx_paragraphs(deck, 1_600_000)),
        ("Excel: 6 sheets claiming A1:AX1048576", xlsx, hostile.xlsx_claimed_dimension),
        ("Excel: 900,000 empty rows", xlsx, lambda: hostile.xlsx_empty_rows(900_000)),
        ("Excel: 2.5 M shared strings", xlsx, lambda: hostile.xlsx_shared_strings(2_500_000)),
        ("PowerPoint: 100,000 shapes", pptx, lambda: hostile.pptx_shapes(deck, 100_000)),
    ]  # fmt: skip


class HostileHandler(BaseHTTPRequestHandler):
    bodies: dict[str, tuple[bytes, str]] = {}  # noqa: RUF012 - the server's routes

    def do_GET(self) -> None:
        body, kind = self.bodies.get(self.path, (b"", ""))
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", kind or "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


# Runs the tool and reports its wall time, peak RSS (its reaped children, the document's
# reader, included) and answer: from a small process of its own, as a process's peak counts
# what it held before it started the tool (the bench's documents, here).
_MEASURE = """
import json, os, subprocess, sys, time
started = time.monotonic()
tool = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.DEVNULL)
tool.stdin.write(sys.argv[2].encode())
tool.stdin.close()
out = tool.stdout.read()
usage = os.wait4(tool.pid, 0)[2]
print(json.dumps([time.monotonic() - started, usage.ru_maxrss / 1024, out.decode()]))
"""


def measured_call(url: str, env: dict[str, str]) -> tuple[float, float, dict[str, object]]:
    """One call of the installed tool: its wall time, its peak RSS in MB and its answer ({}
    for none)."""
    run = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(LAUNCHERS / "web-fetch-tool"),
         json.dumps({"url": url})],
        capture_output=True, env=env, timeout=120, check=True,
    )  # fmt: skip
    took, peak, out = json.loads(run.stdout)
    try:
        answer = json.loads(out)
    except ValueError:
        answer = {}
    return took, peak, answer


def outcome(answer: dict[str, object]) -> str:
    if not answer:
        return "no answer"
    if answer.get("success"):
        warned = [w["code"] for w in answer.get("warnings", []) if isinstance(w, dict)]  # type: ignore[attr-defined]
        return "read" + (f" + {warned[0]} warning" if warned else "")
    return str(answer.get("error_code"))


def hostile_calls() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), HostileHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    print(f"web-fetch of issue 55's hostile documents from 127.0.0.1, IKIGAI_WEB_TIMEOUT="
          f"{HOSTILE_DEADLINE:g} s, memory cap 1 GiB, one call each (a new process):")  # fmt: skip
    try:
        for n, (name, kind, make) in enumerate(hostile_cases()):
            body = make()
            HostileHandler.bodies[f"/{n}"] = (body, kind)
            with tempfile.TemporaryDirectory() as cache:
                env = os.environ | {
                    "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1", "XDG_CACHE_HOME": cache,
                    "IKIGAI_WEB_TIMEOUT": f"{HOSTILE_DEADLINE:g}",
                }  # fmt: skip
                took, peak, answer = measured_call(f"{base}/{n}", env)
            HostileHandler.bodies.pop(f"/{n}")
            said = outcome(answer)
            if said in ("no answer", "NETWORK_ERROR"):
                failed.append(f"{name}: {said}")
            print(f"  {name:<39} {len(body) / 1e6:6.2f} MB  {said:<22}")
            print(f"    wall  {check(f'{name} time', took, HOSTILE_TARGET_S, ' s')}")
            print(f"    peak  {check(f'{name} memory', peak, HOSTILE_TARGET_MB, ' MB')}")
    finally:
        server.shutdown()
        server.server_close()


def main() -> int:
    long = corpus.long_pdf(100)
    quality([*corpus.corpus(), long])
    long_pdf_call(long)
    hostile_calls()
    code: int = exit_code()
    return code


if __name__ == "__main__":
    sys.exit(main())
