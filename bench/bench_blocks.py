"""The learned stage's cost (fetch/reading/blocks.py): web-fetch's extraction time per page with
the shipped block model and without it (a model that keeps every block), page by page in
turn in one process, so both see the same machine load; on every _STEP-th page of
wcxb-dev-full (SHARED/bench/extraction, SHARED=../shared by default; skipped when absent).
Target (issue 46): at most +20 % per page, over all the pages and over those the stage reads
(the pages given a type the shipped model has a threshold for). While the model has no
threshold, it reads no page and costs nothing; the stage is then timed as if it read every
type the region path takes, dropping nothing (a threshold of 0): what it would cost once the
fit gives a type one, printed without a verdict.
"""

from __future__ import annotations

import gzip
import json
import os
import sys
import time
from pathlib import Path
from typing import Any
from unittest import mock

from verdict import ROOT, check, exit_code

sys.path.insert(0, str(ROOT))

_STEP = 5
_TARGET = 1.2


def pages(data: Path) -> list[tuple[str, str]]:
    """(html, url) of every _STEP-th page by id."""
    truth = json.loads((data / "ground-truth.json").read_text(encoding="utf-8"))
    found = []
    for page_id in sorted(truth)[::_STEP]:
        raw = gzip.decompress((data / "html" / f"{page_id}.html.gz").read_bytes())
        found.append((raw.decode("utf-8", "replace"), truth[page_id]["url"]))
    return found


def shipped() -> Any:
    """The shipped model; without a threshold, one of 0 for every type the stage may read."""
    from ikigai_web.fetch.reading import blocks

    model = blocks.shipped_model()
    if model.thresholds:
        return model
    return model._replace(thresholds=dict.fromkeys(blocks._TYPES, 0.0))  # noqa: SLF001


def timed(html: str, url: str, *, stage: bool) -> tuple[float, str | None]:
    from ikigai_web.fetch.reading import blocks
    from ikigai_web.fetch.reading.extract import html_to_markdown

    model = shipped() if stage else blocks.Model(0.0, (), {})
    with mock.patch.object(blocks, "_model", return_value=model):
        start = time.perf_counter()
        document = html_to_markdown(html, url)
        return time.perf_counter() - start, document.page_type


def main() -> None:
    shared = Path(os.environ.get("SHARED") or ROOT.parent / "shared")
    data = (shared if shared.is_absolute() else ROOT / shared) / "bench/extraction/wcxb-dev-full"
    if not (data / "ground-truth.json").is_file():
        print(f"learned stage: skipped, no benchmark data at {data} (set SHARED)")
        return
    kinds = set(shipped().thresholds)
    found = pages(data)
    timed("<html><body><p>warm up</p></body></html>", "https://example.org/", stage=True)
    spent = {True: 0.0, False: 0.0}
    read = {True: 0.0, False: 0.0}  # on the pages the stage reads
    for n, (html, url) in enumerate(found):
        for stage in (n % 2 == 0, n % 2 == 1):  # which goes first alternates
            seconds, kind = timed(html, url, stage=stage)
            spent[stage] += seconds
            read[stage] += seconds if kind in kinds else 0.0
    each = {s: 1000 * t / len(found) for s, t in spent.items()}
    print(f"learned stage, {len(found)} wcxb-dev-full pages: {each[True]:.1f} ms a page with"
          f" it, {each[False]:.1f} ms without")  # fmt: skip
    ratio = read[True] / max(read[False], 1e-9)
    typed = f"the pages typed {', '.join(sorted(kinds))}"
    if not _thresholds():
        # Nothing ships to time: the figures say what a first threshold would cost.
        print(f"  the shipped model reads no type; were it to read every one, dropping nothing:"
              f" {spent[True] / spent[False]:.2f}x, {ratio:.2f}x on {typed}"
              f" (a target, {_TARGET}x, once a type has a threshold)")  # fmt: skip
        return
    print(f"  time with / without: {check('stage time', spent[True] / spent[False], _TARGET)}")
    print(f"  on {typed}: {check('stage time on the types it reads', ratio, _TARGET)}")


def _thresholds() -> dict[str, float]:
    from ikigai_web.fetch.reading import blocks

    return dict(blocks.shipped_model().thresholds)


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
