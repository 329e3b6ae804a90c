"""What each unit of decision could give at best: upper bounds, on either half of wcxb-dev-full.

Usage: bench/oracle_units.py DATASET_ROOT [--sample N]   (`make oracle-units SHARED=...`)

Issue 46 asks a learned stage for +0.03 F1 on the unfitted half. Before a unit of decision is
learned, this bounds what deciding perfectly in it would give, with the ground truth in hand:

- "extractor": per page, the best of whole-page outputs: web-fetch as it is, trafilatura with
  its defaults, with favor_precision, with favor_recall, and readability-lxml's summary (the
  best per metric, so the shingle and the word figures may come from different outputs);
- "end": web-fetch's markdown cut after the block (a run of lines between blank lines) that
  gives the best word F1, on the pages web-fetch reads by a type's region (not an article);
- "window": the same, then also started at the best block before that end;
- "blocks": the region as the learned stage sees it (bench/fit_blocks.py), every unit whose
  label (the share of it in the ground truth) is under a half dropped: the stage's ceiling;
- "lines": the finest unit, web-fetch's markdown without every line (between line breaks)
  labelled so: what perfect selection from web-fetch's own output could give.

Every figure is both of score.py's metrics; a page's window is chosen by the word metric
(additive over blocks, so every cut is tried) and scored by both. "base" is web-fetch as it is.
These are ceilings: a learned decision in the unit reaches a share of its gain, never more.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.extract import Page, fitting, html_of, load, scorer  # noqa: E402  (path set above)
from bench.oracle_type import Scores, table  # noqa: E402

if TYPE_CHECKING:
    from types import ModuleType

SET = "wcxb-dev-full"
WAYS = ("base", "extractor", "end", "window", "blocks", "lines")
_HALF = 0.5  # the blocks and lines oracles drop what has less than this share of content
_BLOCK = re.compile(r"\n\s*\n")


class Item(NamedTuple):
    page_id: str
    page: Page
    truth: str


def outputs(html: str, url: str) -> tuple[str, str, list[str]]:
    """web-fetch's markdown, the type it read the page as, and the other whole-page outputs."""
    import lxml.html
    import trafilatura
    from readability import Document

    from ikigai_web.fetch.reading.extract import html_to_markdown

    document = html_to_markdown(html, url)
    others = [
        trafilatura.extract(html) or "",
        trafilatura.extract(html, favor_precision=True) or "",
        trafilatura.extract(html, favor_recall=True) or "",
    ]
    try:
        summary = Document(html).summary()
        tree = lxml.html.document_fromstring(summary) if summary.strip() else None
        text = "" if tree is None else lxml.html.tostring(tree, method="text", encoding="unicode")
    except Exception:  # noqa: BLE001  (readability raises bare Exceptions on odd pages)
        text = ""
    others.append(text)
    return document.markdown, document.page_type or "article", others


def scores(score: ModuleType, truth: str, markdown: str) -> Scores:
    plain = score.strip_markdown(markdown)
    return [*score.page_counts(truth, plain), *score.word_prf([truth], [plain])]


def best_of(rows: list[Scores]) -> Scores:
    """The best shingle triple and the best word triple among `rows`, each on its own."""
    shingle = max(rows, key=lambda r: _f1(r[0], r[1], r[2]))
    return [*shingle[:3], *max(rows, key=lambda r: r[5])[3:]]


def _f1(tp: float, fp: float, fn: float) -> float:
    return 2 * tp / (2 * tp + fp + fn) if tp else 0.0


def window(score: ModuleType, truth: str, markdown: str) -> tuple[str, str]:
    """The markdown cut at its best end, and at its best window (that end, the best start)."""
    blocks = [b for b in _BLOCK.split(markdown) if b.strip()]
    words = [_words(score, b) for b in blocks]
    want = Counter(_words(score, truth))
    end = _best(want, words, range(len(blocks)))
    start = _best(want, words[:end][::-1], range(end))
    return "\n\n".join(blocks[:end]), "\n\n".join(blocks[end - start : end])


def _words(score: ModuleType, text: str) -> list[str]:
    return [w.lower() for w in score.tokens(score.strip_markdown(text))]


def _best(want: Counter[str], words: list[list[str]], steps: range) -> int:
    """How many of `words`' blocks, taken in order, give the best word F1 (the fewest on a tie)."""
    total = sum(want.values())
    taken: Counter[str] = Counter()
    overlap = size = 0
    best, count = -1.0, len(steps)
    for n in steps:
        for word in words[n]:
            overlap += taken[word] < want[word]
            taken[word] += 1
        size += len(words[n])
        f1 = 2 * overlap / (size + total) if overlap else 0.0
        if f1 > best:
            best, count = f1, n + 1
    return count


def read(item: Item, score: ModuleType) -> dict[str, Scores]:
    """The page's scores in every way of WAYS; a page read as an article keeps its base in
    the ways that read a type's region (end, window, blocks, lines)."""
    markdown, kind, others = outputs(html_of(item.page), item.page.url)
    base = scores(score, item.truth, markdown)
    found = dict.fromkeys(WAYS, base)
    found["extractor"] = best_of([base, *(scores(score, item.truth, o) for o in others)])
    if kind != "article" and markdown.strip():
        end, span = window(score, item.truth, markdown)
        found |= {"end": scores(score, item.truth, end), "window": scores(score, item.truth, span)}
        found["blocks"] = _blocks(score, item, base)
        found["lines"] = scores(score, item.truth, _lines(score, item.truth, markdown))
    return found


def _lines(score: ModuleType, truth: str, markdown: str) -> str:
    """The markdown without the lines less than half of which is content, as score.py reads
    them (a line it reads no word in stays: it counts for nothing)."""
    from bench.fit_blocks import content_share

    def kept(line: str) -> bool:
        plain = score.strip_markdown(line)
        return not score.tokens(plain) or content_share(plain, truth) >= _HALF

    return "\n".join(line for line in markdown.split("\n") if kept(line))


def _blocks(score: ModuleType, item: Item, base: Scores) -> Scores:
    """The page's scores when exactly the units its labels call not content go."""
    from bench.fit_blocks import markdown, region_page

    page = region_page(item.page_id, html_of(item.page), item.page.url, item.truth)
    if page is None:  # the region gave way to the article candidate
        return base
    oracle = [1.0 if label >= _HALF else 0.0 for label in page.labels]
    return scores(score, item.truth, markdown(page, oracle, _HALF))


def _work(task: tuple[Item, Path]) -> tuple[str, dict[str, Scores]]:
    item, root = task
    return item.page_id, read(item, scorer(root))


def items(root: Path, every: int) -> list[Item]:
    pages, truth = load(root / SET)
    return [Item(i, pages[i], truth[i]["articleBody"]) for i in sorted(pages)[::every]]


def report(found: list[Item], rows: dict[str, dict[str, Scores]]) -> None:
    for title, half in (("fitting", True), ("unfitted", False)):
        members = [i for i in found if fitting(i.page_id) == half]
        ways: dict[str, dict[str, list[Scores]]] = {w: {} for w in WAYS}
        for item in members:
            for way in WAYS:
                row = rows[item.page_id][way]
                ways[way].setdefault(item.page_id.split(".", 1)[0], []).append(row)
                ways[way].setdefault("all", []).append(row)
        table(
            f"{title} half: {len(members)} pages",
            {w: dict(sorted(g.items())) for w, g in ways.items()},
        )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="bench/oracle_units.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("root", type=Path, help="the folder of the dev sets and score.py")
    parser.add_argument("--sample", type=int, default=1, help="every Nth page")
    given = parser.parse_args(argv)
    if given.sample < 1:
        parser.error("--sample N takes N >= 1")
    if not (given.root / SET / "ground-truth.json").is_file():
        print(f"oracle-units: {SET} is needed under {given.root}", file=sys.stderr)
        return 1
    from multiprocessing import Pool

    found = items(given.root, given.sample)
    with Pool(2) as pool:
        rows = dict(pool.imap_unordered(_work, [(i, given.root) for i in found], chunksize=8))
    report(found, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
