"""No dev page of the extraction benchmarks makes the extractor raise: the pages of every set
under ../shared/bench/extraction go through `html_to_markdown`.

All 1,567 distinct pages cost about 100 s of CPU, a third of the suite: `make test` runs every
fourth (`--corpus sample`, the default), CI all of them (`make test CORPUS=all`, which passes
`--corpus all`). The pages are dealt into shards, one test each, so a parallel run
(pytest-xdist) spreads the work over every core; a page that two sets share (wcxb-dev is part
of wcxb-dev-full) is run once."""

from __future__ import annotations

import gzip
import hashlib
import json
from functools import cache
from pathlib import Path

import pytest

from ikigai_web.fetch.reading.extract import html_to_markdown

DATA = Path(__file__).resolve().parents[4] / "shared" / "bench" / "extraction"
SETS = ("dev", "broad-dev", "wcxb-dev", "wcxb-dev-full")
SHARDS = 16
SAMPLE_STEP = 4  # `--corpus sample`: every fourth page, in the order of SETS


@cache
def pages() -> tuple[tuple[str, Path, str], ...]:
    """(set/id, the gzipped page, its URL) for every distinct page of every set present."""
    found: dict[str, tuple[str, Path, str]] = {}
    for name in SETS:
        truth_file = DATA / name / "ground-truth.json"
        if not truth_file.is_file():
            continue
        for page_id, entry in sorted(json.loads(truth_file.read_text(encoding="utf-8")).items()):
            path = DATA / name / "html" / f"{page_id}.html.gz"
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            url = entry.get("url") or f"http://page.test/{page_id}"
            found.setdefault(digest, (f"{name}/{page_id}", path, url))
    return tuple(found.values())


# What this test guards is that no real page raises, not which lines run: it is not traced
# for coverage, which would add a third to the suite's largest cost.
@pytest.mark.no_cover
@pytest.mark.parametrize("shard", range(SHARDS), ids=lambda n: f"shard-{n + 1}-of-{SHARDS}")
def test_no_dev_page_makes_the_extractor_raise(shard, request):
    if not pages():
        pytest.skip(f"no benchmark data at {DATA}")
    step = 1 if request.config.getoption("corpus") == "all" else SAMPLE_STEP
    failures = []
    for name, path, url in pages()[::step][shard::SHARDS]:
        html = gzip.decompress(path.read_bytes())
        try:
            html_to_markdown(html.decode("utf-8", "replace"), url)
        except Exception as error:  # noqa: BLE001 - every exception is the failure reported
            failures.append(f"{name}: {type(error).__name__}: {error}")
    assert not failures, "\n".join(failures)
