"""Pages that are not the content: how many wall pages web-fetch recognises, and how many real
pages it wrongly calls a wall.

1. The labelled set, bench/walls/<kind>/<name>.html with bench/walls/labels.json: wall pages
   written for this project, modelled on how bot checks, sign-in walls, paywalls, not-found
   and error pages, parked domains and empty pages are built, in several languages. Half `a`
   was written first and the detector tuned on it; half `b` was written afterwards and is
   reported apart (held out). Near misses (`none`: real content about these things) must not
   be flagged. Target: >= 95 % of the wall pages recognised as their kind, on each half.
2. The false-alarm rate on every distinct dev page of the extraction benchmarks (the folder
   SHARED/bench/extraction, SHARED=../shared by default; skipped when absent): a page given
   any `wall` counts, a paywalled article kept with its warning included, and each is named
   so it can be inspected. Target: <= 0.5 %.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import sys
from collections import Counter
from pathlib import Path

from verdict import ROOT, check, exit_code

sys.path.insert(0, str(ROOT))

from ikigai_web.fetch.extract import html_to_markdown
from ikigai_web.fetch.walls import WALLS

WALL_PAGES = ROOT / "bench" / "walls"
SETS = ("dev", "broad-dev", "wcxb-dev", "wcxb-dev-full")
TARGET_RECOGNISED = 95.0
TARGET_FLAGGED = 0.5


def wall_of(html: str, url: str) -> str:
    return html_to_markdown(html, url).wall or "none"


def labelled() -> None:
    labels = json.loads((WALL_PAGES / "labels.json").read_text(encoding="utf-8"))
    for half in sorted({entry["half"] for entry in labels.values()}):
        right: Counter[str] = Counter()
        total: Counter[str] = Counter()
        missed = []
        for path, entry in sorted(labels.items()):
            if entry["half"] != half:
                continue
            html = (WALL_PAGES / path).read_text(encoding="utf-8")
            got = wall_of(html, f"https://wall.test/{path}")
            total[entry["wall"]] += 1
            right[entry["wall"]] += got == entry["wall"]
            if got != entry["wall"]:
                missed.append(f"{path} -> {got}")
        report(half, right, total, missed)


def report(half: str, right: Counter[str], total: Counter[str], missed: list[str]) -> None:
    kinds = "  ".join(f"{k} {right[k]}/{total[k]}" for k in WALLS if total[k])
    print(f"walls, half {half}: {kinds}")
    walls = sum(total[k] for k in WALLS)
    rate = 100 * sum(right[k] for k in WALLS) / max(walls, 1)
    print(f"  recognised: {check(f'walls half {half}', rate, TARGET_RECOGNISED, '%', most=False)}")
    if total["none"]:
        flagged = total["none"] - right["none"]
        print(f"  near misses flagged: {flagged}/{total['none']}")
        if flagged:
            check(f"near misses half {half}", flagged, 0, "")
    for line in missed:
        print(f"  wrong: {line}")


def dev_pages(data: Path) -> list[tuple[str, Path, str]]:
    """(set/id, gzipped page, URL) for every distinct page, as tests/test_extract_corpus.py."""
    found: dict[str, tuple[str, Path, str]] = {}
    for name in SETS:
        truth_file = data / name / "ground-truth.json"
        if not truth_file.is_file():
            continue
        for page_id, entry in sorted(json.loads(truth_file.read_text(encoding="utf-8")).items()):
            path = data / name / "html" / f"{page_id}.html.gz"
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            url = entry.get("url") or f"http://page.test/{page_id}"
            found.setdefault(digest, (f"{name}/{page_id}", path, url))
    return list(found.values())


def dev(data: Path) -> None:
    pages = dev_pages(data)
    if not pages:
        print(f"walls, dev pages: skipped, no benchmark data at {data} (set SHARED)")
        return
    flagged = []
    per_set: Counter[str] = Counter()
    for name, path, url in pages:
        got = wall_of(gzip.decompress(path.read_bytes()).decode("utf-8", "replace"), url)
        per_set[name.split("/")[0]] += 1
        if got != "none":
            flagged.append(f"{name} -> {got}")
    rate = 100 * len(flagged) / len(pages)
    sets = "  ".join(
        f"{s} {sum(f.startswith(s + '/') for f in flagged)}/{per_set[s]}" for s in per_set
    )
    print(f"walls, dev pages flagged: {len(flagged)}/{len(pages)} ({sets})")
    print(f"  false alarms: {check('walls dev flagged', rate, TARGET_FLAGGED, '%')}")
    for line in flagged:
        print(f"  flagged: {line}")


def main() -> None:
    labelled()
    shared = Path(os.environ.get("SHARED") or ROOT.parent / "shared")
    dev((shared if shared.is_absolute() else ROOT / shared) / "bench" / "extraction")


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
