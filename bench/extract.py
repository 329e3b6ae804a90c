"""Main-content extraction benchmark: our html_to_markdown against plain trafilatura, one run.

Usage: bench/extract.py DATASET_ROOT (the folder holding dev/ and score.py).
Each page of DATASET_ROOT/dev is extracted by both methods, the predictions are written to a
temporary folder and scored by the benchmark's own score.py; precision, recall, F1 and pages
per second are printed for each.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
import tempfile
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


def run(method: Callable[[str, str], str], pages: Pages) -> tuple[dict[str, str], float]:
    """Predictions and pages per second."""
    predictions: dict[str, str] = {}
    start = time.perf_counter()
    for page_id, (url, html) in pages.items():
        predictions[page_id] = method(html, url)
    return predictions, len(pages) / (time.perf_counter() - start)


def scorer(root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("score", root / "score.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def evaluate(score: ModuleType, dev: Path, predictions: dict[str, str]) -> dict[str, float]:
    """Scores as score.py computes them, from the predictions written to a file."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "predictions.json"
        path.write_text(json.dumps(predictions), encoding="utf-8")
        preds = json.loads(path.read_text(encoding="utf-8"))
    truth = json.loads((dev / "ground-truth.json").read_text(encoding="utf-8"))
    ids = sorted(truth)
    result: dict[str, float] = score.score(
        [truth[i]["articleBody"] for i in ids],
        [score.strip_markdown(preds.get(i) or "") for i in ids],
    )
    return result


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[0])
    dev = root / "dev"
    pages = load_pages(dev)
    score = scorer(root)
    # Warm both up once so the first method does not pay the imports.
    url, html = next(iter(pages.values()))
    ours(html, url)
    baseline(html, url)
    print(f"extraction benchmark: {len(pages)} dev pages, scored by {root / 'score.py'}")
    rows = []
    for name, method in (("ours (markdown)", ours), ("trafilatura defaults", baseline)):
        predictions, speed = run(method, pages)
        result = evaluate(score, dev, predictions)
        rows.append((name, result, speed))
        print(
            f"{name:22} precision {result['precision']:.3f}  recall {result['recall']:.3f}  "
            f"F1 {result['f1']:.3f} +- {result['f1_std']:.3f}  empty {result['empty']:>2}  "
            f"{speed:5.1f} pages/s"
        )
    (_, mine, my_speed), (_, base, base_speed) = rows
    print(
        f"ratio ours/baseline: F1 {mine['f1'] / base['f1']:.3f}, speed {my_speed / base_speed:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
