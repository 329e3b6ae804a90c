"""Main-content extraction benchmark: web-fetch's html_to_markdown against plain trafilatura.

Usage: bench/extract.py DATASET_ROOT (the folder holding dev/, wcxb-dev/ and score.py;
`make bench-extract SHARED=/path/to/shared` points the Makefile at it).
Each page of every dev set found there is extracted by both methods, side by side in one run,
and scored by the benchmark's own score.py: F1 (precision / recall) per page type and overall,
and pages per second for both methods with their ratio.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tools.fetch.extract import html_to_markdown  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

Pages = dict[str, tuple[str, str]]
DATASETS = ("dev", "wcxb-dev")
METHODS = ("web-fetch", "trafilatura")


def load_pages(dev: Path) -> Pages:
    """{id: (url, html)} for every page of the dev set."""
    truth = json.loads((dev / "ground-truth.json").read_text(encoding="utf-8"))
    pages: Pages = {}
    for page_id, entry in sorted(truth.items()):
        raw = gzip.decompress((dev / "html" / f"{page_id}.html.gz").read_bytes())
        pages[page_id] = (entry["url"], raw.decode("utf-8", errors="replace"))
    return pages


def ours(html: str, url: str) -> str:
    return html_to_markdown(html, url).markdown


def baseline(html: str, url: str) -> str:
    import trafilatura

    del url  # the baseline is trafilatura with its defaults alone
    return trafilatura.extract(html) or ""


def timed(method: Callable[[str, str], str], url: str, html: str) -> tuple[str, float]:
    start = time.perf_counter()
    text = method(html, url)
    return text, time.perf_counter() - start


def run(pages: Pages) -> tuple[dict[str, dict[str, str]], dict[str, float]]:
    """Predictions and total seconds of each method, the two run page by page in turn so
    that both see the same machine load."""
    predictions: dict[str, dict[str, str]] = {name: {} for name in METHODS}
    seconds = dict.fromkeys(METHODS, 0.0)
    for page_id, (url, html) in pages.items():
        for name, method in zip(METHODS, (ours, baseline), strict=True):
            predictions[name][page_id], spent = timed(method, url, html)
            seconds[name] += spent
    return predictions, seconds


def scorer(root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("score", root / "score.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def groups(
    score: ModuleType, dev: Path, predictions: dict[str, str]
) -> dict[str, tuple[float, float, float]]:
    """{group: (precision, recall, F1)} as score.py computes them, "all" included."""
    truth = json.loads((dev / "ground-truth.json").read_text(encoding="utf-8"))
    ids = sorted(truth)
    result = score.score(
        [truth[i]["articleBody"] for i in ids],
        [score.strip_markdown(predictions.get(i) or "") for i in ids],
        n_bootstrap=0,
    )
    members: dict[str, list[int]] = {}
    for n, page_id in enumerate(ids):
        if "." in page_id:
            members.setdefault(page_id.split(".", 1)[0], []).append(n)
    found = {"all": (result["precision"], result["recall"], result["f1"])}
    for name, indexes in sorted(members.items()):
        found[name] = score.aggregate([result["counts"][n] for n in indexes])
    return found


Scores = dict[str, dict[str, tuple[float, float, float]]]


def report(name: str, pages: int, scores: Scores, speed: dict[str, float]) -> None:
    print(f"\n{name}: {pages} pages")
    print(f"  {'page type':14} {'web-fetch F1 (P / R)':>26} {'trafilatura F1 (P / R)':>26}")
    for group in [g for g in scores["web-fetch"] if g != "all"] + ["all"]:
        cells = [
            f"{f1:.3f} ({p:.3f} / {r:.3f})"
            for p, r, f1 in (scores[method][group] for method in METHODS)
        ]
        print(f"  {group:14} {cells[0]:>26} {cells[1]:>26}")
    ratio = speed["web-fetch"] / speed["trafilatura"]
    print(
        f"  pages/s: web-fetch {speed['web-fetch']:.1f}, trafilatura {speed['trafilatura']:.1f}"
        f", ratio {ratio:.2f}"
    )


def missing(root: Path) -> str:
    return (
        f"bench-extract: no extraction benchmark data at {root}: it expects "
        f"{root / 'dev'}, {root / 'wcxb-dev'} and {root / 'score.py'}. The data lives in the "
        "shared folder beside the project (../shared/bench/extraction); point to it with "
        "`make bench-extract SHARED=/path/to/shared` or run "
        "`python bench/extract.py /path/to/shared/bench/extraction`."
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    sets = [name for name in DATASETS if (root / name / "ground-truth.json").is_file()]
    if not sets or not (root / "score.py").is_file():
        print(missing(root), file=sys.stderr)
        return 1
    score = scorer(root)
    print(f"extraction benchmark, scored by {root / 'score.py'}")
    for name in sets:
        pages = load_pages(root / name)
        url, html = next(iter(pages.values()))
        ours(html, url)  # warm both up so that neither pays the imports
        baseline(html, url)
        predictions, seconds = run(pages)
        scores = {method: groups(score, root / name, predictions[method]) for method in METHODS}
        speed = {method: len(pages) / seconds[method] for method in METHODS}
        report(name, len(pages), scores, speed)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
