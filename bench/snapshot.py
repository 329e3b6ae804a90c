"""A snapshot of what web-fetch makes of every extraction dev page, to hold a refactor to "the
same output": `snapshot.py DATA OUT` writes it, `snapshot.py DATA OUT --against OLD` writes it
and names every page whose answer differs from OLD's.

DATA is the shared extraction folder (its sets' `ground-truth.json` and `html/`). Each page's
bytes go through web-fetch's decode-and-extract stage as a fetched body would (no content type:
sniffed), in the default mode and in full-page mode with links, and the whole Document is kept
(markdown, title, page type, warnings...). Runs with the checkout's own interpreter, e.g.
`.venv/bin/python bench/snapshot.py ../shared/bench/extraction /tmp/after.json.gz --against
/tmp/before.json.gz`.
"""

from __future__ import annotations

import dataclasses
import gzip
import importlib
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SETS = ("dev", "broad-dev", "wcxb-dev-full")  # wcxb-dev's pages are all in wcxb-dev-full
MODES = {"default": {"full_page": False, "include_links": False},
         "full+links": {"full_page": True, "include_links": True}}  # fmt: skip
# Where the stage lives, newest layout first: the snapshot is taken before and after a move.
STAGES = (
    "ikigai_web.fetch.pipeline",
    "ikigai_web.fetch.reading.decode",
    "ikigai_web.tools.fetch.decode",
    "ikigai_web.fetch.reading.decode",
)


def stage() -> Any:
    sys.path.insert(0, str(ROOT))
    for name in STAGES:
        try:
            return importlib.import_module(name).to_document
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"snapshot: none of {', '.join(STAGES)} can be imported")


def pages(data: Path) -> dict[str, tuple[str, Path]]:
    found = {}
    for name in SETS:
        truth = json.loads((data / name / "ground-truth.json").read_text(encoding="utf-8"))
        for pid, entry in sorted(truth.items()):
            found[f"{name}/{pid}"] = (entry["url"], data / name / "html" / f"{pid}.html.gz")
    return found


def answer(to_document: Any, body: bytes, url: str) -> dict[str, Any]:
    out = {}
    for mode, flags in MODES.items():
        try:
            document, kind = to_document(bytearray(body), None, url, **flags)
            out[mode] = {"kind": kind, **dataclasses.asdict(document)}
        except Exception as exc:  # noqa: BLE001 - a crash is part of the behaviour held
            out[mode] = {"raised": f"{type(exc).__name__}: {exc}"}
    return out


def main(argv: list[str]) -> int:
    data, out = Path(argv[0]), Path(argv[1])
    to_document = stage()
    taken = {
        pid: answer(to_document, gzip.decompress(path.read_bytes()), url)
        for pid, (url, path) in pages(data).items()
    }
    out.write_bytes(gzip.compress(json.dumps(taken, sort_keys=True).encode()))
    print(f"snapshot: {len(taken)} pages x {len(MODES)} modes -> {out}")
    if len(argv) > 3 and argv[2] == "--against":
        old = json.loads(gzip.decompress(Path(argv[3]).read_bytes()))
        differ = sorted(pid for pid in old.keys() | taken.keys() if old.get(pid) != taken.get(pid))
        for pid in differ[:50]:
            print(f"  differs: {pid}")
        print(f"snapshot: {len(differ)} of {len(taken)} pages differ from {argv[3]}")
        return 1 if differ else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
