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
from verdict import LAUNCHERS, ROOT, check, exit_code

sys.path.insert(0, str(ROOT))

from ikigai_web.fetch.pipeline import to_document

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


def main() -> int:
    long = corpus.long_pdf(100)
    quality([*corpus.corpus(), long])
    long_pdf_call(long)
    code: int = exit_code()
    return code


if __name__ == "__main__":
    sys.exit(main())
