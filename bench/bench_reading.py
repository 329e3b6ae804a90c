"""Reading for the question: how often web-fetch's `query` returns the answer, against the
first characters of the page (what `limit` gives today), on the reported half of the reading
benchmark (bench/reading_corpus.py says what it is, its sources and their licence).

For each question: the page is extracted as web-fetch extracts it, its lines cut as web-fetch
cuts them, and `query` given the question at 2,000 and 4,000 characters; the answer counts as
found when one of its known answers is in the content returned (both folded: NFKC, case,
markdown escapes, spaces). The baseline is the page's first 2,000 and 4,000 characters. Also:
the whole page's size, how long choosing passages takes (median and 95th percentile a call),
each language apart, and the questions whose answer is in the second half of the page.

The corpus is SHARED/bench/reading/reading.json.gz when present, else built in memory from
the two git mirrors in MIRRORS (default /work/.mirror); with neither, the benchmark says so
and is skipped. `--half dev` reports the dev half (the one to tune on).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import statistics
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path
from typing import Any

from verdict import ROOT, check, exit_code

sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from ikigai_web.fetch.page_lines import split_lines
from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.passages import read_for, render_passages, room_for

SIZES = (2000, 4000)
TARGETS = {2000: 80.0, 4000: 90.0}
TARGET_MEDIAN_MS = 20.0
WIDTH = 9900  # web-fetch's widest line at the default budget
XQUAD = "google-deepmind+xquad/repo"
SQUAD = "VinACE+san_mrc/repo/.git"


def load() -> dict[str, Any] | None:
    shared = Path(os.environ.get("SHARED") or ROOT.parent / "shared")
    stored = shared / "bench" / "reading" / "reading.json.gz"
    if stored.is_file():
        corpus: dict[str, Any] = json.loads(gzip.decompress(stored.read_bytes()))
        return corpus
    mirrors = Path(os.environ.get("MIRRORS", "/work/.mirror"))
    if (mirrors / XQUAD).is_dir() and (mirrors / SQUAD).is_dir():
        from reading_corpus import build

        built: dict[str, Any] = build(str(mirrors / XQUAD), str(mirrors / SQUAD))
        return built
    return None


def folded(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(re.sub(r"\\([\\`*_{}\[\]()#+\-.!|<>~])", r"\1", text).split())


class Tally:
    def __init__(self) -> None:
        self.found: dict[str, int] = defaultdict(int)
        self.total = 0

    def add(self, name: str, *, hit: bool) -> None:
        self.found[name] += hit

    def share(self, name: str) -> float:
        return 100.0 * self.found[name] / max(1, self.total)


def run(corpus: dict[str, Any], half: str) -> tuple[dict[str, Tally], list[float], list[int]]:
    pages = {p["id"]: p for p in corpus["pages"] if p["half"] == half}
    lines_of: dict[str, list[str]] = {}
    sizes = []
    for page_id, page in pages.items():
        markdown = html_to_markdown(page["html"], page["url"]).markdown
        lines_of[page_id] = split_lines(markdown, WIDTH)
        sizes.append(len(markdown))
    tallies: dict[str, Tally] = defaultdict(Tally)
    times: list[float] = []
    texts = {page_id: "\n".join(lines) for page_id, lines in lines_of.items()}
    baseline = {(page_id, size): folded(text[:size]) for page_id, text in texts.items()
                for size in (*SIZES, len(text))}  # fmt: skip
    for item in corpus["questions"]:
        page = pages.get(item["page"])
        if page is None:
            continue
        lines = lines_of[item["page"]]
        answers = [folded(a) for a in item["answers"]]
        groups = ["all", page["lang"], *(["late"] if item["late"] else [])]
        for group in groups:
            tallies[group].total += 1
        for size in SIZES:
            started = time.thread_time()
            content = render_passages(read_for(lines, item["question"], room_for(size)).passages)
            times.append(time.thread_time() - started)
            got = folded(content)
            first = baseline[item["page"], size]
            for group in groups:
                tallies[group].add(f"query {size}", hit=any(a in got for a in answers))
                tallies[group].add(f"first {size}", hit=any(a in first for a in answers))
        whole = baseline[item["page"], len(texts[item["page"]])]
        for group in groups:
            tallies[group].add("page", hit=any(a in whole for a in answers))
    return tallies, times, sizes


def report(half: str, tallies: dict[str, Tally], times: list[float], sizes: list[int]) -> None:
    print(f"Reading for the question, {half} half ({tallies['all'].total} questions on "
          f"{len(sizes)} pages; median page {statistics.median(sizes):,.0f} characters of "
          "markdown):")  # fmt: skip
    columns = ["query 2000", "query 4000", "first 2000", "first 4000", "page"]
    print(f"  {'':10} {'questions':>9} " + " ".join(f"{c:>10}" for c in columns))
    order = ["all", "late", *sorted(k for k in tallies if k not in ("all", "late"))]
    for group in order:
        tally = tallies[group]
        shares = " ".join(f"{tally.share(c):9.1f}%" for c in columns)
        print(f"  {group:10} {tally.total:9d} {shares}")
    median = statistics.median(times) * 1000
    p95 = statistics.quantiles(times, n=20)[-1] * 1000
    print(
        f"  choosing passages: median {median:.1f} ms, 95th percentile {p95:.1f} ms of CPU a "
        "call (the processor time the call takes, whatever else the machine runs)"
    )
    if half == "reported":
        for size in SIZES:
            share = tallies["all"].share(f"query {size}")
            what = f"reading: answer in query's {size:,} characters"
            print(f"  {what}: {check(what, share, TARGETS[size], ' %', most=False)}"
                  f" (first {size:,}: {tallies['all'].share(f'first {size}'):.1f} %)")  # fmt: skip
        verdict = check("reading: median time", median, TARGET_MEDIAN_MS, " ms")
        print(f"  reading: median time a call: {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--half", default="reported", choices=("dev", "reported"))
    half = parser.parse_args().half
    corpus = load()
    if corpus is None:
        where = "SHARED/bench/reading/reading.json.gz, or the git mirrors in MIRRORS"
        print(f"Reading for the question: skipped, no corpus ({where}; bench/reading_corpus.py)")
        return
    report(half, *run(corpus, half))


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
