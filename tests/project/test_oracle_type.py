"""bench/oracle_type.py: each page read as a forced type, scored as score.py scores, and the
reading rule chosen on the fitting half only where it gains."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.extract import Page
from bench.oracle_type import (
    Item,
    Odds,
    base_rule,
    choose,
    main,
    metrics,
    odds,
    opened,
    read_as,
    read_by,
    shipped,
    site_fold,
)
from ikigai_web.fetch.reading.pagetype import PAGE_TYPES, Model, decide

SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench" / "extraction"
LINKS = "".join(f'<li><a href="/item/{n}">Item number {n} of the list</a></li>' for n in range(12))
PAGE = (
    "<html><head><title>Items</title></head><body><nav><a href='/'>Home</a></nav>"
    f"<main><h1>All the items</h1><ul>{LINKS}</ul></main>"
    "<footer><p>Copyright and legal notices of this site.</p></footer></body></html>"
)


def _score() -> Any:
    from bench.extract import scorer

    if not (SHARED / "score.py").is_file():
        pytest.skip("the benchmark's score.py is not beside the project")
    return scorer(SHARED)


def _item(tmp_path: Path, html: str, truth: str, page_id: str = "listing.1") -> Item:
    import gzip

    path = tmp_path / f"{page_id}.html.gz"
    path.write_bytes(gzip.compress(html.encode()))
    label = page_id.split(".", 1)[0]
    return Item("wcxb-dev-full", page_id, label, Page("https://example.org/a", path), truth)


def test_a_forced_type_drives_the_reading_and_detect_comes_back(tmp_path):
    from ikigai_web.fetch.reading import pagetype

    real = pagetype.detect
    truth = "\n".join(f"Item number {n} of the list" for n in range(12))
    found = read_as(_item(tmp_path, PAGE, truth), ["listing", "article"], _score())
    assert pagetype.detect is real
    # A listing keeps its run of links; the words scored as score.py scores them.
    assert found["listing"][3:] == pytest.approx([1.0, 1.0, 1.0])
    assert found["listing"] != found["article"]
    assert found["features"]["li"] > 0
    assert "title:items" in found["words"]


def test_metrics_are_score_pys():
    score = _score()
    truths = ["one two three four five six", "alpha beta gamma delta", "", "x y z w v"]
    preds = ["one two three four nine ten", "", "", "x y z w v extra words here"]
    rows = [
        [*score.page_counts(t, p), *score.word_prf([t], [p])]
        for t, p in zip(truths, preds, strict=True)
    ]
    shingle, words = metrics(rows)
    assert shingle == pytest.approx(score.aggregate([row[:3] for row in rows]))
    assert words == pytest.approx(score.word_prf(truths, preds))


def test_metrics_of_a_hand_made_part():
    # Two pages: half the shingles right and extra; all right. Words: means of the pages'.
    shingle, words = metrics([[0.5, 0.5, 0.0, 0.5, 1.0, 0.6], [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]])
    assert shingle == pytest.approx((0.75, 1.0, 2 * 0.75 / 1.75))
    assert words == pytest.approx((0.75, 1.0, 0.8))
    assert metrics([]) == ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))


def _entry() -> dict[str, Any]:
    from ikigai_web.fetch.reading.extract import _parse
    from ikigai_web.fetch.reading.pagetype import features, part_words

    parsed = _parse(PAGE, "https://example.org/a")
    return {"features": features(parsed.tree, "https://example.org/a", parsed.signals),
            "words": part_words(parsed.tree)}  # fmt: skip


def _model(**chances: float) -> Model:
    """A model that gives every page the same probabilities (biases only)."""
    import math

    rest = (1 - sum(chances.values())) / (len(PAGE_TYPES) - len(chances))
    biases = {name: math.log(chances.get(name, rest)) for name in PAGE_TYPES}
    return Model({name: {"bias": biases[name]} for name in PAGE_TYPES}, {}, 0.81)


def test_the_base_rule_reads_as_decide_does():
    entry = _entry()
    for model in (shipped(), _model(listing=0.6, article=0.3), _model(listing=0.6, article=0.1),
                  _model(article=0.5), _model(listing=0.9)):  # fmt: skip
        assert read_by(odds(entry, model), base_rule()) == decide(**_args(entry, model)).name


def _args(entry: dict[str, Any], model: Model) -> dict[str, Any]:
    return {"found": entry["features"], "used": entry["words"], "model": model}


def test_a_rule_reads_an_unsure_type_as_such_or_as_an_article():
    unsure = odds(_entry(), _model(listing=0.6, article=0.3))
    assert unsure[:2] == (None, "listing")
    assert unsure[2:] == pytest.approx((0.6, 0.3))
    assert read_by(unsure, base_rule()) == "article"
    assert read_by(unsure, base_rule() | {"listing": (0.55, 0.2)}) == "listing"
    assert read_by(unsure, base_rule() | {"listing": (0.81, 0.35)}) == "listing"
    assert read_by(unsure, base_rule() | {"service": (0.3, 1.01)}) == "article"
    sure = odds(_entry(), _model(listing=0.9))
    assert read_by(sure, base_rule() | {"listing": (0.95, 0.0)}) == "listing"


def _part(good: str) -> tuple[list[Item], dict[str, Any], dict[str, Odds]]:
    """Ten unsure listings over the five folds, each read best as `good`."""
    found = [
        Item("wcxb-dev-full", f"listing.{n}", "listing", Page(f"https://s{n}.example/", Path()), "")
        for n in range(10)
    ]
    right, poor = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0], [0.2, 0.4, 0.4, 0.3, 0.3, 0.3]
    other = "article" if good == "listing" else "listing"
    cache = {i.key: {good: right, other: poor} for i in found}
    return found, cache, {i.key: Odds(None, "listing", 0.6, 0.3) for i in found}


def test_choose_reads_an_unsure_type_as_such_only_where_that_gains():
    def fold_of(item: Item) -> int:
        return int(item.page_id.split(".")[1]) % 5

    found, cache, held = _part("listing")
    rule = choose(found, cache, held, fold_of)
    assert read_by(held[found[0].key], rule) == "listing"
    assert {k: v for k, v in rule.items() if k != "listing"} == {
        k: v for k, v in base_rule().items() if k != "listing"
    }
    found, cache, held = _part("article")
    assert choose(found, cache, held, fold_of) == base_rule()


def test_a_sites_pages_share_a_fold():
    def item(url: str) -> Item:
        return Item("dev", "a", "article", Page(url, Path()), "")

    assert site_fold(item("https://www.example.org/a")) == site_fold(item("https://example.org/b"))
    assert 0 <= site_fold(item("https://other.example/")) < 5


def test_the_cache_is_kept_only_for_the_same_code_and_scorer(tmp_path):
    (tmp_path / "score.py").write_text("# one scorer\n", encoding="utf-8")
    cache = tmp_path / "cache.json"
    first = opened(cache, tmp_path)
    cache.write_text(json.dumps(first | {"dev/a": {"article": [1.0]}}), encoding="utf-8")
    assert opened(cache, tmp_path)["dev/a"] == {"article": [1.0]}
    (tmp_path / "score.py").write_text("# another scorer\n", encoding="utf-8")
    assert set(opened(cache, tmp_path)) == {"stamp"}


def test_without_the_sets_it_says_what_is_needed(tmp_path, capsys):
    assert main([str(tmp_path), "--cache", str(tmp_path / "c.json")]) == 1
    assert "wcxb-dev-full, dev, broad-dev are needed under" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--sample", "0"])
