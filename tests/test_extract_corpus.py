"""No dev page of the extraction benchmarks makes the extractor raise: every page of every
set under ../shared/bench/extraction goes through `html_to_markdown`, one test per set."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tools.fetch.extract import html_to_markdown

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "bench" / "extraction"
SETS = ("dev", "broad-dev", "wcxb-dev", "wcxb-dev-full")


@pytest.mark.parametrize("name", SETS)
def test_no_dev_page_makes_the_extractor_raise(name):
    if not (DATA / name / "ground-truth.json").is_file():
        pytest.skip(f"no benchmark data at {DATA / name}")
    truth = json.loads((DATA / name / "ground-truth.json").read_text(encoding="utf-8"))
    failures = []
    for page_id, entry in sorted(truth.items()):
        html = gzip.decompress((DATA / name / "html" / f"{page_id}.html.gz").read_bytes())
        url = entry.get("url") or f"http://page.test/{page_id}"
        try:
            html_to_markdown(html.decode("utf-8", "replace"), url)
        except Exception as error:  # noqa: BLE001 - every exception is the failure reported
            failures.append(f"{page_id}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)
