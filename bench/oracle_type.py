"""What the page type is worth to extraction: each page read as the types it could be given.

Usage: bench/oracle_type.py DATASET_ROOT [--folds site|page] [--cache FILE] [--sample N]
(`make oracle-type SHARED=/path/to/shared`)

Every page of wcxb-dev-full/ (its type is the id's prefix), dev/ and broad-dev/ (articles) is
extracted by web-fetch as it is, except that the page type is forced (`pagetype.detect` is
replaced for the call): as its true type (the oracle), as an article, and as each type the
shipped model, or one fitted without the page's fold, gives it. Each reading is scored with
both of score.py's metrics (word 4-gram shingles and WCXB's word metric) and kept in the cache
beside the page-type features web-fetch saw; a second run reads only what is missing (the
cache is dropped when web-fetch's code, its model or score.py changed).

It prints per type and set, with both metrics: on the fitting half (`bench.extract.fitting`)
the base (the type web-fetch chooses today, with the model fitted on these very pages), the
base typed by models fitted without the page's fold (`--folds`: by site, the default, or as
bench/fit_pagetype.py cuts its folds), the oracle and every page read as an article; on the
unfitted half the base, the oracle and the article reading. Then `choose` tunes how an unsure
type is read (`read_by`), inside the fitting half on the held-out models' odds only, and the
rule it chose is scored on the unfitted half beside the base and the oracle.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.extract import Page, fitting, html_of, load, scorer  # noqa: E402  (path set above)
from ikigai_web.fetch.reading.pagetype import PAGE_TYPES, Guess, Model, decide  # noqa: E402

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from types import ModuleType

SETS = {"wcxb-dev-full": None, "dev": "article", "broad-dev": "article"}
LABELLED = "wcxb-dev-full"
_FOLDS = 5
# A reading's scores: shingle (tp, fp, fn), normalized as score.page_counts gives them, then
# the word metric's (precision, recall, F1) for the page.
Scores = list[float]
Triple = tuple[float, float, float]
Cache = dict[str, Any]  # "stamp", and per page key: per type its Scores, "features", "words"

# What `choose` may set per type (`Rule`) and what it must keep to.
Rule = dict[str, tuple[float, float]]  # per type: (least P(type), P(article) under which)
_READ = [n / 100 for n in range(30, 100, 5)]
_ARTICLE = [n / 100 for n in range(0, 55, 5)] + [1.01]
_GAIN = 0.002  # the least mean gain over groups (both F1s) for a type's rule to change
_FALL = 0.005  # the most any group's F1 (either metric) may fall
_RECALL = 0.01  # the most any group's recall (either metric) may fall
_FOLD_LOSS = 0.002  # the most the mean gain over groups may be below 0 in any one fold


class Item(NamedTuple):
    source: str
    page_id: str
    label: str
    page: Page
    truth: str

    @property
    def key(self) -> str:
        return f"{self.source}/{self.page_id}"


def items(root: Path, every: int) -> list[Item]:
    """The pages of SETS, every `every`th of each, with their labels and ground truths."""
    found = []
    for source, label in SETS.items():
        pages, truth = load(root / source)
        for page_id in sorted(pages)[::every]:
            kind = label or page_id.split(".", 1)[0]
            body = truth[page_id]["articleBody"]
            found.append(Item(source, page_id, kind, pages[page_id], body))
    return found


# --- reading a page as a given type ---------------------------------------------------------


def read_as(item: Item, kinds: Iterable[str], score: ModuleType) -> dict[str, Any]:
    """The page read as each type of `kinds`, scored; and the features and words web-fetch
    types it by, as `detect` is handed them."""
    from ikigai_web.fetch.reading import pagetype
    from ikigai_web.fetch.reading.extract import html_to_markdown

    html = html_of(item.page)
    seen: dict[str, Any] = {}
    real = pagetype.detect

    def forced(kind: str) -> Callable[..., Guess]:
        def detect(tree: Any, url: str, signals: Any) -> Guess:
            if not seen:
                seen["features"] = pagetype.features(tree, url, signals)
                seen["words"] = pagetype.part_words(tree)
            return Guess(kind, sure=True)

        return detect

    found: dict[str, Any] = {}
    try:
        for kind in kinds:
            pagetype.detect = forced(kind)
            plain = score.strip_markdown(html_to_markdown(html, item.page.url).markdown)
            found[kind] = [
                *score.page_counts(item.truth, plain),
                *score.word_prf([item.truth], [plain]),
            ]
    finally:
        pagetype.detect = real
    return found | seen


def _work(task: tuple[Item, list[str], Path]) -> tuple[str, dict[str, Any]]:
    item, kinds, root = task
    return item.key, read_as(item, kinds, scorer(root))


def fill(root: Path, todo: dict[Item, set[str]], cache: Cache, path: Path) -> None:
    """Read every page as the types it still lacks, in two processes, and save the cache."""
    from multiprocessing import Pool

    tasks = [(item, sorted(kinds), root) for item, kinds in todo.items() if kinds]
    if not tasks:
        return
    print(f"reading {len(tasks)} pages ({sum(len(t[1]) for t in tasks)} readings)", flush=True)
    with Pool(2) as pool:
        for key, found in pool.imap_unordered(_work, tasks, chunksize=4):
            cache.setdefault(key, {}).update(found)
    path.write_text(json.dumps(cache), encoding="utf-8")


def stamp(root: Path) -> str:
    """What the readings depend on: web-fetch's code and data, and score.py."""
    digest = hashlib.sha256((root / "score.py").read_bytes())
    for path in sorted((ROOT / "ikigai_web").rglob("*")):
        if path.suffix in {".py", ".json"}:
            digest.update(path.relative_to(ROOT).as_posix().encode() + path.read_bytes())
    return digest.hexdigest()


def opened(path: Path, root: Path) -> Cache:
    """The cache at `path` if it was made of this code and score.py, else an empty one."""
    now = stamp(root)
    cache: Cache = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    return cache if cache.get("stamp") == now else {"stamp": now}


# --- scoring a choice of readings ------------------------------------------------------------


def metrics(rows: list[Scores]) -> tuple[Triple, Triple]:
    """Shingle (P, R, F1) as score.aggregate computes them, and the word metric's (P, R, F1)
    as score.word_prf does (each the mean over pages)."""
    precisions = [_share(r[0], r[0] + r[1], r) for r in rows if r[0] + r[1] > 0]
    recalls = [_share(r[0], r[0] + r[2], r) for r in rows if r[0] + r[2] > 0]
    p = statistics.fmean(precisions) if precisions else 0.0
    q = statistics.fmean(recalls) if recalls else 0.0
    f1 = 2 * p * q / (p + q) if p + q > 0 else 0.0
    mean = [statistics.fmean(r[3 + i] for r in rows) if rows else 0.0 for i in range(3)]
    return (p, q, f1), (mean[0], mean[1], mean[2])


def _share(part: float, whole: float, row: Scores) -> float:
    return 1.0 if row[1] == 0 and row[2] == 0 else part / whole


def grouped(
    members: list[Item], cache: Cache, reading: Callable[[Item], str]
) -> dict[str, list[Scores]]:
    """Each page's scores as `reading` has it read, by type (labelled set) or by set, and all
    the labelled pages as "all"."""
    found: dict[str, list[Scores]] = {}
    for item in members:
        row = cache[item.key][reading(item)]
        found.setdefault(item.label if item.source == LABELLED else item.source, []).append(row)
        if item.source == LABELLED:
            found.setdefault("all", []).append(row)
    return dict(sorted(found.items()))


def table(title: str, ways: dict[str, dict[str, list[Scores]]]) -> None:
    """Per group, each way of reading: shingle F1 (P/R) and word F1 (P/R)."""
    print(f"\n{title}")
    print(f"  {'group':15}" + "".join(f"{w + ': F1 (P/R) | word F1 (P/R)':>54}" for w in ways))
    for group in next(iter(ways.values())):
        cells = ""
        for rows in ways.values():
            (p, r, f), (wp, wr, wf) = metrics(rows[group])
            cells += f"{f:>22.3f} ({p:.3f}/{r:.3f}) | {wf:.3f} ({wp:.3f}/{wr:.3f})"
        print(f"  {group:15}{cells}")


# --- the page type's decision ----------------------------------------------------------------


def shipped() -> Model:
    from ikigai_web.fetch.reading.pagetype import shipped_model

    return shipped_model()


def held_out_models(
    train: list[Item], cache: Cache, fold_of: Callable[[Item], int]
) -> dict[str, Model]:
    """Per fitting page, the model fitted as bench/fit_pagetype.py fits, on the fitting pages
    of the other folds."""
    from bench.fit_pagetype import Example, _fit

    def example(item: Item) -> Example:
        entry = cache[item.key]
        return Example(item.source, item.page_id, item.label, entry["features"], entry["words"])

    found: dict[str, Model] = {}
    for fold in range(_FOLDS):
        model = _fit([example(i) for i in train if fold_of(i) != fold])._replace(
            sure=shipped().sure
        )
        found |= {i.key: model for i in train if fold_of(i) == fold}
    return found


def site_fold(item: Item) -> int:
    """All of a site's pages in one fold, as the pages of a site no fit saw would be."""
    host = (urlsplit(item.page.url).hostname or "").removeprefix("www.")
    return zlib.crc32(host.encode()) % _FOLDS


def page_fold(item: Item) -> int:
    """bench/fit_pagetype.py's folds: a site's pages spread over them, as over the halves."""
    from bench.fit_pagetype import _fold

    return _fold(item.page_id)


FOLDS = {"site": site_fold, "page": page_fold}


class Odds(NamedTuple):
    """What the reading rule needs of a page's typing, computed once."""

    fixed: str | None  # the reading whatever the rule: sure, declared, too short, an article
    best: str
    chance: float  # P(best)
    article: float  # P(article)


def odds(entry: dict[str, Any], model: Model) -> Odds:
    from ikigai_web.fetch.reading.pagetype import _FEW_CHARS, _strongly_declared, probabilities

    found, used = entry["features"], entry["words"]
    guess = decide(found, used, model)
    chances = probabilities(found, used, model)
    best = max(range(len(PAGE_TYPES)), key=chances.__getitem__)
    fixed = guess.sure or bool(_strongly_declared(found)) or found["text"] < _FEW_CHARS
    name = guess.name if fixed or best == 0 else None
    return Odds(name, PAGE_TYPES[best], chances[best], chances[0])


def read_by(odds: Odds, rule: Rule) -> str:
    """The type a page is read as: decide's, except that an unsure best type other than
    article is read as such when P(best) reaches rule[best][0] or P(article) is under
    rule[best][1] (decide: model.sure and pagetype._AS_ARTICLE for every type)."""
    if odds.fixed is not None:
        return odds.fixed
    least, under = rule[odds.best]
    return odds.best if odds.chance >= least or odds.article < under else "article"


def base_rule() -> Rule:
    from ikigai_web.fetch.reading.pagetype import _AS_ARTICLE

    return dict.fromkeys(PAGE_TYPES[1:], (shipped().sure, _AS_ARTICLE))


# --- choosing the reading rule inside the fitting half ---------------------------------------


def choose(
    train: list[Item], cache: Cache, held: dict[str, Odds], fold_of: Callable[[Item], int]
) -> Rule:
    """Per type in turn, twice over, the (least, under) that gains most on the fitting half,
    each page typed by a model fitted without its fold (`held`), within the limits above."""
    rule = base_rule()
    sure = shipped().sure
    for _ in range(2):
        for kind in PAGE_TYPES[1:]:
            now = _evaluate(train, cache, held, rule, fold_of)
            best, gain = rule[kind], _GAIN
            for least in [*_READ, sure]:
                for under in _ARTICLE:
                    tried = rule | {kind: (min(least, sure), under)}
                    found = _gain(now, _evaluate(train, cache, held, tried, fold_of))
                    if found is not None and found > gain:
                        best, gain = tried[kind], found
            rule[kind] = best
            print(f"  {kind}: {best} (mean gain {gain if gain > _GAIN else 0:.4f})", flush=True)
    return rule


Figures = dict[int | None, dict[str, tuple[Triple, Triple]]]  # per fold (None: all), group


def _evaluate(
    train: list[Item],
    cache: Cache,
    held: dict[str, Odds],
    rule: Rule,
    fold_of: Callable[[Item], int],
) -> Figures:
    found: Figures = {}
    for fold in [None, *range(_FOLDS)]:
        part = [i for i in train if fold is None or fold_of(i) == fold]
        groups = grouped(part, cache, lambda i: read_by(held[i.key], rule))
        found[fold] = {g: metrics(rows) for g, rows in groups.items() if g != "all"}
    return found


def _gain(before: Figures, after: Figures) -> float | None:
    """The mean gain over groups of both F1s, or None when a limit is broken."""
    for group, (shingle, words) in after[None].items():
        old_shingle, old_words = before[None][group]
        if min(shingle[2] - old_shingle[2], words[2] - old_words[2]) < -_FALL:
            return None
        if min(shingle[1] - old_shingle[1], words[1] - old_words[1]) < -_RECALL:
            return None
    if min(_mean_gain(before[f], after[f]) for f in range(_FOLDS)) < -_FOLD_LOSS:
        return None
    return _mean_gain(before[None], after[None])


def _mean_gain(
    before: dict[str, tuple[Triple, Triple]], after: dict[str, tuple[Triple, Triple]]
) -> float:
    gains = [
        (after[g][0][2] - before[g][0][2] + after[g][1][2] - before[g][1][2]) / 2 for g in after
    ]
    return sum(gains) / len(gains) if gains else 0.0


# --- the run ---------------------------------------------------------------------------------


def options(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="bench/oracle_type.py", description=__doc__.split("\n")[0]
    )
    parser.add_argument("root", type=Path, help="the folder of the dev sets and score.py")
    parser.add_argument(
        "--folds", choices=sorted(FOLDS), default="site", help="how the fitting half is cut"
    )
    parser.add_argument(
        "--cache", type=Path, default=Path(tempfile.gettempdir()) / "oracle_type.json"
    )
    parser.add_argument("--sample", type=int, default=1, help="every Nth page of each set")
    found = parser.parse_args(argv)
    if found.sample < 1:
        parser.error("--sample N takes N >= 1")
    return found


def wanted(found: list[Item], cache: Cache, models: dict[str, Model]) -> dict[Item, set[str]]:
    """Per page, the readings it lacks: each type its model may read it as (best or decided)."""
    from ikigai_web.fetch.reading.pagetype import probabilities

    todo = {}
    for item in found:
        entry = cache[item.key]
        model = models.get(item.key, shipped())
        chances = probabilities(entry["features"], entry["words"], model)
        kinds = {PAGE_TYPES[max(range(len(PAGE_TYPES)), key=chances.__getitem__)]}
        kinds |= {decide(entry["features"], entry["words"], model).name, "article"}
        if item.key in models:
            kinds.add(decide(entry["features"], entry["words"], shipped()).name)
        todo[item] = kinds - set(entry)
    return todo


def main(argv: list[str]) -> int:
    given = options(argv)
    root: Path = given.root
    if not all((root / s / "ground-truth.json").is_file() for s in SETS):
        print(f"oracle-type: {', '.join(SETS)} are needed under {root}", file=sys.stderr)
        return 1
    found = items(root, given.sample)
    cache = opened(given.cache, root)
    first = {i: {i.label, "article"} - set(cache.get(i.key, {})) for i in found}
    fill(root, first, cache, given.cache)
    train = [i for i in found if fitting(i.page_id)]
    held = held_out_models(train, cache, FOLDS[given.folds])
    fill(root, wanted(found, cache, held), cache, given.cache)
    odds_held = {i.key: odds(cache[i.key], held[i.key]) for i in train}
    odds_shipped = {i.key: odds(cache[i.key], shipped()) for i in found}
    report(found, cache, odds_held, odds_shipped, given.folds)
    print(f"\nchosen per type, (least P(type), P(article) under which), on {given.folds} folds:")
    rule = choose(train, cache, odds_held, FOLDS[given.folds])
    rest = [i for i in found if not fitting(i.page_id)]
    table(
        "unfitted half: the chosen rule against the base",
        {
            "base": grouped(rest, cache, lambda i: read_by(odds_shipped[i.key], base_rule())),
            "chosen": grouped(rest, cache, lambda i: read_by(odds_shipped[i.key], rule)),
            "oracle": grouped(rest, cache, lambda i: i.label),
        },
    )
    return 0


def report(
    found: list[Item],
    cache: Cache,
    held: dict[str, Odds],
    shipped_odds: dict[str, Odds],
    folds: str,
) -> None:
    """The oracle beside the base and the article reading, on either half."""
    base = base_rule()

    def as_base(item: Item) -> str:
        return read_by(shipped_odds[item.key], base)

    def as_article(_: Item) -> str:
        return "article"

    train = [i for i in found if fitting(i.page_id)]
    title = f"fitting half: {len(train)} pages (held out: typed by a model fitted without its"
    table(
        f"{title} {folds} fold)",
        {
            "base": grouped(train, cache, as_base),
            "base held out": grouped(train, cache, lambda i: read_by(held[i.key], base)),
            "oracle": grouped(train, cache, lambda i: i.label),
            "article": grouped(train, cache, as_article),
        },
    )
    rest = [i for i in found if not fitting(i.page_id)]
    table(
        f"unfitted half: {len(rest)} pages",
        {
            "base": grouped(rest, cache, as_base),
            "oracle": grouped(rest, cache, lambda i: i.label),
            "article": grouped(rest, cache, as_article),
        },
    )


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
