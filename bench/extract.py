"""Main-content extraction benchmark: web-fetch against trafilatura alone, every set side by side.

Usage: bench/extract.py DATASET_ROOT [--base REV] [--sets SET,...] [--sample N]

DATASET_ROOT holds the dev sets (dev/, broad-dev/, wcxb-dev/, wcxb-dev-full/) and score.py;
`make bench-extract SHARED=/path/to/shared` points the Makefile at it. Every page of every set
found is extracted by web-fetch (html_to_markdown, in this process), by trafilatura with its
defaults and by the one trafilatura call web-fetch makes on an article ("one call": the floor of
its time), page by page in turn, and scored by the benchmark's own score.py with both its
metrics: word 4-gram shingle F1 (precision / recall) and WCXB's word metric (`word_prf`), per
page type (WCXB) or source set (broad-dev) and overall, page-type accuracy where the set has
labels, and pages per second. wcxb-dev/ is a part of wcxb-dev-full/: it is reported on its own
and so is the rest, the pages no rule was tuned on; so is the half of wcxb-dev-full no model
is fitted on (`fitting`; the fitted part is printed first, `FITTED`), with the page types given
there, every type weighted alike (`balanced`): the share right among those given, the share
given (the rest are unsure: no type), the share wrong, overall and per type. With `--base REV`
(`make bench-extract BASE=REV`) web-fetch at that git revision, checked out in a temporary
worktree, is scored beside them, so a regression on any set shows before it lands. To iterate,
`--sets` (`SETS=`) names the sets to run and `--sample N` (`SAMPLE=`) keeps every Nth page.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

SETS = ("dev", "broad-dev", "wcxb-dev-full", "wcxb-dev")
LABELLED = ("wcxb-dev-full", "wcxb-dev")  # ids are <page type>.<n>
# What the shipped models saw: the rest of every set is reported as unseen by them.
FITTED = (
    "the page-type model (bench/fit_pagetype.py) on the pages of wcxb-dev-full, dev and "
    "broad-dev whose id has an even CRC-32; the block model (bench/fit_blocks.py) on those of "
    "wcxb-dev-full alone"
)
# Run in the baseline's worktree by this interpreter: its extractor, its page types.
BASE_SCRIPT = """
import gzip, json, sys, time
sys.path.insert(0, sys.argv[1])
try:  # the extractor's home, newest layout first: a baseline may predate web-fetch's rooms
    from ikigai_web.fetch.reading.extract import html_to_markdown
except ImportError:
    from ikigai_web.fetch.extract import html_to_markdown
out = {}
for line in sys.stdin:
    page_id, path, url = json.loads(line)
    html = gzip.decompress(open(path, "rb").read()).decode("utf-8", errors="replace")
    start = time.perf_counter()
    try:
        doc = html_to_markdown(html, url)
        found = [doc.markdown, getattr(doc, "page_type", None)]
    except Exception as exc:  # an old revision's crash is scored as an empty answer
        found = ["", None, f"{type(exc).__name__}: {exc}"[:200]]
    out[page_id] = [*found[:2], time.perf_counter() - start, *found[2:]]
json.dump(out, sys.stdout)
"""


class Page(NamedTuple):
    url: str
    path: Path  # the gzip-compressed HTML


class Run(NamedTuple):
    """One method's output on a set: text and page type by id, and seconds spent."""

    text: dict[str, str]
    types: dict[str, str | None]
    seconds: float
    crashed: tuple[str, ...] = ()  # ids of pages where the method raised


def sampled(
    pages: dict[str, Page], truth: dict[str, Any], every: int
) -> tuple[dict[str, Page], dict[str, Any]]:
    """Every `every`th page by sorted id, to iterate on a part of a set."""
    kept = sorted(pages)[::every]
    return {i: pages[i] for i in kept}, {i: truth[i] for i in kept}


def load(dev: Path) -> tuple[dict[str, Page], dict[str, Any]]:
    truth = json.loads((dev / "ground-truth.json").read_text(encoding="utf-8"))
    pages = {
        pid: Page(e["url"], dev / "html" / f"{pid}.html.gz") for pid, e in sorted(truth.items())
    }
    return pages, truth


def html_of(page: Page) -> str:
    return gzip.decompress(page.path.read_bytes()).decode("utf-8", errors="replace")


def ours(html: str, url: str) -> tuple[str, str | None]:
    from ikigai_web.fetch.reading.extract import html_to_markdown

    document = html_to_markdown(html, url)
    return document.markdown, document.page_type


def trafilatura_alone(html: str, url: str) -> tuple[str, str | None]:
    import trafilatura

    del url  # trafilatura with its defaults, as a user would call it
    return trafilatura.extract(html) or "", None


# The floor of web-fetch's time: the one trafilatura call it makes on every article, the way
# it makes it (markdown with links, images, tables and emphasis; without trafilatura's own
# fallbacks), on the page as it comes. Nothing else: no page type, no second opinion.
ONE_CALL = "one call"
UNTYPED = ("trafilatura", ONE_CALL)


def one_call(html: str, url: str) -> tuple[str, str | None]:
    import trafilatura

    del url
    markdown = trafilatura.extract(
        html, fast=True, output_format="markdown", include_tables=True, include_images=True,
        include_formatting=True, include_links=True,
    )  # fmt: skip
    return markdown or "", None


def run_both(pages: dict[str, Page]) -> dict[str, Run]:
    """web-fetch, trafilatura and trafilatura as web-fetch calls it, page by page in turn, so
    all see the same machine load."""
    methods: dict[str, Callable[[str, str], tuple[str, str | None]]] = {
        "web-fetch": ours,
        "trafilatura": trafilatura_alone,
        ONE_CALL: one_call,
    }
    text: dict[str, dict[str, str]] = {m: {} for m in methods}
    types: dict[str, dict[str, str | None]] = {m: {} for m in methods}
    seconds = dict.fromkeys(methods, 0.0)
    for page_id, page in pages.items():
        html = html_of(page)
        for name, method in methods.items():
            start = time.perf_counter()
            text[name][page_id], types[name][page_id] = method(html, page.url)
            seconds[name] += time.perf_counter() - start
    return {m: Run(text[m], types[m], seconds[m]) for m in methods}


def run_base(rev: str, pages: dict[str, Page]) -> Run:
    """web-fetch at `rev`, from a temporary git worktree, run by this interpreter."""
    with tempfile.TemporaryDirectory(prefix="bench-extract-base-") as tmp:
        tree = Path(tmp) / "tree"
        git = ["git", "-C", str(ROOT)]
        subprocess.run([*git, "worktree", "add", "--detach", "-q", str(tree), rev], check=True)
        try:
            # Absolute: the baseline runs in the temporary directory, not where we were.
            lines = "".join(
                json.dumps([pid, str(p.path.absolute()), p.url]) + "\n" for pid, p in pages.items()
            )
            done = subprocess.run(
                [sys.executable, "-c", BASE_SCRIPT, str(tree)],
                input=lines, capture_output=True, text=True, check=False, cwd=tmp,
            )  # fmt: skip
        finally:
            subprocess.run([*git, "worktree", "remove", "--force", str(tree)], check=False)
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-3:]
        sys.exit(f"bench-extract: the baseline {rev} could not run: " + " | ".join(tail))
    found = json.loads(done.stdout)
    return Run(
        {pid: v[0] for pid, v in found.items()},
        {pid: v[1] for pid, v in found.items()},
        sum(v[2] for v in found.values()),
        tuple(pid for pid, v in found.items() if len(v) > 3),
    )


def scorer(root: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location("score", root / "score.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


Triple = tuple[float, float, float]


def groups(
    score: ModuleType, truth: dict[str, Any], text: dict[str, str]
) -> dict[str, tuple[Triple, Triple]]:
    """{group: (shingle (precision, recall, F1), word (precision, recall, F1))} as score.py
    computes them (the word metric by `score.word_prf`, WCXB's own), "all" included; a group
    is the id's prefix (a page type, a source set)."""
    ids = sorted(truth)
    truths = [truth[i]["articleBody"] for i in ids]
    plain = [score.strip_markdown(text.get(i) or "") for i in ids]
    result = score.score(truths, plain, n_bootstrap=0)
    members: dict[str, list[int]] = {}
    for n, page_id in enumerate(ids):
        if "." in page_id:
            members.setdefault(page_id.split(".", 1)[0], []).append(n)
    found = {
        name: (
            score.aggregate([result["counts"][n] for n in idx]),
            score.word_prf([truths[n] for n in idx], [plain[n] for n in idx]),
        )
        for name, idx in sorted(members.items())
    }
    whole = (result["precision"], result["recall"], result["f1"])
    return found | {"all": (whole, score.word_prf(truths, plain))}


def fitting(page_id: str) -> bool:
    """Whether a page is in the half the page-type model is fitted on (bench/fit_pagetype.py):
    the CRC-32 of its id is even. Never the site: the other half is pages the fit never saw."""
    return zlib.crc32(page_id.encode()) % 2 == 0


class Balanced(NamedTuple):
    """Page types given, every labelled type weighing alike: the mean over types of the share
    right among those given (over the types given at all), the share given, the share wrong."""

    right: float
    given: float
    wrong: float


def balanced(labels: list[str], answers: list[str | None]) -> Balanced:
    """How the answers (a type, or None for unsure) do against the labels, types alike."""
    tally: dict[str, list[int]] = {}  # per label: pages, given, right
    for label, answer in zip(labels, answers, strict=True):
        counts = tally.setdefault(label, [0, 0, 0])
        counts[0] += 1
        counts[1] += answer is not None
        counts[2] += answer == label
    rights = [right / given for _, given, right in tally.values() if given]
    kinds = max(len(tally), 1)
    return Balanced(
        sum(rights) / max(len(rights), 1),
        sum(given / pages for pages, given, _ in tally.values()) / kinds,
        sum((given - right) / pages for pages, given, right in tally.values()) / kinds,
    )


def accuracy(types: dict[str, str | None], ids: list[str]) -> dict[str, float]:
    """Page type right, per labelled type and overall."""
    right: dict[str, list[bool]] = {}
    for page_id in ids:
        label = page_id.split(".", 1)[0]
        hit = types.get(page_id) == label
        right.setdefault(label, []).append(hit)
        right.setdefault("all", []).append(hit)
    return {name: sum(hits) / len(hits) for name, hits in right.items()}


def report(
    title: str,
    ids: list[str],
    truth: dict[str, Any],
    runs: dict[str, Run],
    score: ModuleType,
    *,
    labelled: bool,
) -> None:
    part = {i: truth[i] for i in ids}
    methods = list(runs)
    scores = {m: groups(score, part, runs[m].text) for m in methods}
    typed = {m: accuracy(runs[m].types, ids) for m in methods if labelled and m not in UNTYPED}
    print(f"\n{title}: {len(ids)} pages")
    # Every column as wide as its label and two spaces more: a long BASE revision stays apart.
    typed_wide = {m: _width("type ok " + m, 18) for m in typed}
    first = max(14, *(len(group) + 1 for group in scores["web-fetch"]))
    for metric, label in enumerate((" F1 (P / R)", " word F1 (P / R)")):
        wide = {m: _width(m + label, 27) for m in methods}
        head = "".join(f"{m + label:>{wide[m]}}" for m in methods)
        head += "".join(f"{'type ok ' + m:>{typed_wide[m]}}" for m in typed if not metric)
        print(f"  {'group':{first}}{head}")
        for group in scores["web-fetch"]:
            cells = "".join(f"{_cell(scores[m][group][metric]):>{wide[m]}}" for m in methods)
            if not metric:
                cells += "".join(f"{typed[m].get(group, 0.0):>{typed_wide[m]}.0%}" for m in typed)
            print(f"  {group:{first}}{cells}")
    speed = {m: len(ids) / max(_seconds(runs[m], ids), 1e-9) for m in methods}
    rates = ", ".join(f"{m} {speed[m]:.1f}" for m in methods)
    ratio = speed["web-fetch"] / speed["trafilatura"]
    floor = speed[ONE_CALL] / speed["trafilatura"]
    print(f"  pages/s: {rates}; web-fetch / trafilatura {ratio:.2f}x "
          f"(its one trafilatura call alone: {floor:.2f}x)")  # fmt: skip
    for m in methods:
        crashed = sorted(set(runs[m].crashed) & set(ids))
        if crashed:
            print(f"  {m} raised on {len(crashed)} page(s), scored as empty: {', '.join(crashed)}")


def typing(ids: list[str], runs: dict[str, Run]) -> None:
    """The page types given on labelled pages, every type weighted alike, per typed method:
    the share right among those given, given and wrong, overall and per type."""
    labels = [page_id.split(".", 1)[0] for page_id in ids]
    typed = [m for m in runs if m not in UNTYPED]
    print("  page type, every type weighted alike: right of given / given / wrong")
    for m in typed:
        found = balanced(labels, [runs[m].types.get(page_id) for page_id in ids])
        print(f"    {m}: {found.right:.1%} / {found.given:.1%} / {found.wrong:.1%}, "
              f"right or unsure {1 - found.wrong:.1%}")  # fmt: skip
    for name in sorted(set(labels)):
        own = [page_id for page_id, label in zip(ids, labels, strict=True) if label == name]
        cells = "".join(f"  {_given(runs[m], own, name):>22}" for m in typed)
        print(f"    {name:14}{cells}")


def _given(run: Run, ids: list[str], name: str) -> str:
    found = balanced([name] * len(ids), [run.types.get(page_id) for page_id in ids])
    return f"{found.right:.0%} of {found.given:.0%} given"


def _width(label: str, least: int) -> int:
    return max(least, len(label) + 2)


def _cell(triple: Triple) -> str:
    precision, recall, f1 = triple
    return f"{f1:.3f} ({precision:.3f} / {recall:.3f})"


def _seconds(run: Run, ids: list[str]) -> float:
    # Runs keep one total per set; a part of a set is charged its share of the pages.
    share = len(ids) / max(len(run.text), 1)
    return run.seconds * share


def missing(root: Path) -> str:
    return (
        f"bench-extract: no extraction benchmark data at {root}: it expects one or more of "
        f"{', '.join(str(root / s) for s in SETS)} and {root / 'score.py'}. The data lives in "
        "the shared folder beside the project (../shared/bench/extraction); point to it with "
        "`make bench-extract SHARED=/path/to/shared` or run "
        "`python bench/extract.py /path/to/shared/bench/extraction`."
    )


def options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/extract.py", description=__doc__.split("\n")[0])
    parser.add_argument("root", type=Path, help="the folder of the dev sets and score.py")
    parser.add_argument("--base", help="a git revision to score beside today's web-fetch")
    parser.add_argument("--sets", help=f"comma-separated, of {', '.join(SETS)} (default all)")
    parser.add_argument("--sample", type=int, default=1, help="every Nth page of each set")
    found = parser.parse_args(argv)
    found.sets = found.sets.split(",") if found.sets else list(SETS)
    if unknown := set(found.sets) - set(SETS) or found.sample < 1:
        parser.error(f"--sets takes {', '.join(SETS)} ({unknown} given); --sample N >= 1")
    return found


def main(argv: list[str]) -> int:
    given = options(argv)
    root, base = given.root, given.base
    found = [s for s in SETS if s in given.sets and (root / s / "ground-truth.json").is_file()]
    if not found or not (root / "score.py").is_file():
        print(missing(root), file=sys.stderr)
        return 1
    score = scorer(root)
    against = f"; baseline {base}" if base else ""
    every = f"; every {given.sample}th page" if given.sample > 1 else ""
    print(f"extraction benchmark, scored by {root / 'score.py'}{against}{every}")
    print(f"fitted part: {FITTED}")
    ours("<html><body><p>warm up</p></body></html>", "https://example.org/")
    trafilatura_alone("<html><body><p>warm up</p></body></html>", "")
    done: dict[str, tuple[dict[str, Any], dict[str, Run]]] = {}
    for name in found:
        pages, truth = sampled(*load(root / name), given.sample)
        if name == "wcxb-dev" and "wcxb-dev-full" in done:
            full_truth, full_runs = done["wcxb-dev-full"]
            report(name, sorted(truth), full_truth, full_runs, score, labelled=True)
            rest = sorted(set(full_truth) - set(truth))
            title = "wcxb-dev-full outside wcxb-dev"
            report(title, rest, full_truth, full_runs, score, labelled=True)
            continue
        runs = run_both(pages)
        if base:
            baseline = {f"base {base[:10]}": run_base(base, pages)}
            runs = {"web-fetch": runs["web-fetch"], **baseline} | runs
        done[name] = (truth, runs)
        report(name, sorted(truth), truth, runs, score, labelled=name in LABELLED)
        if name == "wcxb-dev-full":
            unfitted = [page_id for page_id in sorted(truth) if not fitting(page_id)]
            title = "wcxb-dev-full, the half no model is fitted on"
            report(title, unfitted, truth, runs, score, labelled=True)
            typing(unfitted, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
