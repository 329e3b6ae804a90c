"""bench/oracle_units.py: the ceilings of deciding per page, per end cut and per window of
blocks, each scored as score.py scores."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench.extract import Page
from bench.oracle_units import Item, _lines, best_of, main, read, scores, window

SHARED = Path(__file__).resolve().parents[3] / "shared" / "bench" / "extraction"
ITEMS = "".join(
    f'<li><a href="/item/{n}">Item number {n} of the list</a> costs {n} pounds today</li>'
    for n in range(12)
)
LISTING = (
    "<html><head><title>Items</title></head><body><nav><a href='/'>Home</a></nav>"
    f"<main><h1>All the items</h1><ul>{ITEMS}</ul>"
    "<p>People who looked at these items also searched for"
    " garden furniture, kitchen tables and lamps of every kind.</p></main>"
    "<footer><p>Copyright and legal notices of this site.</p></footer></body></html>"
)
LISTING_TRUTH = "\n".join(f"Item number {n} of the list costs {n} pounds today" for n in range(12))


def _score() -> Any:
    from bench.extract import scorer

    if not (SHARED / "score.py").is_file():
        pytest.skip("the benchmark's score.py is not beside the project")
    return scorer(SHARED)


def _blocks(*texts: str) -> str:
    return "\n\n".join(texts)


FIRST = "the first block has words that the truth holds"
SECOND = "a second block the truth holds as well here"
THIRD = "then a block of related links nobody wanted at all"


def test_the_end_keeps_the_blocks_up_to_the_last_one_the_truth_holds():
    end, span = window(_score(), _blocks(FIRST, SECOND), _blocks(FIRST, SECOND, THIRD))
    assert end == span == _blocks(FIRST, SECOND)


def test_the_window_also_drops_what_comes_before_the_content():
    end, span = window(_score(), SECOND, _blocks(FIRST, SECOND, THIRD))
    assert end == _blocks(FIRST, SECOND)
    assert span == SECOND


def test_a_page_the_truth_shares_nothing_with_keeps_one_block():
    end, span = window(_score(), "nothing alike", _blocks(FIRST, SECOND))
    assert end == span == FIRST


def test_lines_keep_what_the_truth_holds_and_lines_without_words():
    markdown = f"# {FIRST}\n\n- [{THIRD}](https://example.org/x)\n![](https://example.org/i.png)"
    assert _lines(_score(), FIRST, markdown) == f"# {FIRST}\n\n![](https://example.org/i.png)"


def test_best_of_takes_each_metric_from_its_own_best_output():
    shingles_win = [3.0, 1.0, 1.0, 0.2, 0.2, 0.2]
    words_win = [1.0, 3.0, 3.0, 0.9, 0.9, 0.9]
    assert best_of([shingles_win, words_win]) == [3.0, 1.0, 1.0, 0.9, 0.9, 0.9]


def _item(tmp_path: Path, html: str, truth: str, page_id: str) -> Item:
    path = tmp_path / f"{page_id}.html.gz"
    path.write_bytes(gzip.compress(html.encode()))
    return Item(page_id, Page("https://example.org/items", path), truth)


@pytest.fixture
def as_listing(monkeypatch):
    """The page typed a listing, as the model might type it, so its type's region reads it."""
    from ikigai_web.fetch.reading import pagetype

    monkeypatch.setattr(pagetype, "detect", lambda *_: pagetype.Guess("listing", sure=True))


@pytest.mark.usefixtures("as_listing")
def test_a_listing_gets_every_way_and_none_is_worse_than_the_base(tmp_path):
    from ikigai_web.fetch.reading.extract import html_to_markdown

    score = _score()
    found = read(_item(tmp_path, LISTING, LISTING_TRUTH, "listing.1"), score)
    base = scores(
        score, LISTING_TRUTH, html_to_markdown(LISTING, "https://example.org/items").markdown
    )
    assert found["base"] == base
    assert found["end"][:3] != base[:3]  # the closing paragraph goes
    for way in ("extractor", "end", "window", "blocks", "lines"):
        assert found[way][5] >= base[5]
    assert found["blocks"][1] == 0  # no word outside the truth is left
    assert found["blocks"][1] < base[1]
    assert found["lines"][1] == 0


def test_an_article_keeps_its_base_at_the_end_and_the_window(tmp_path):
    prose = " ".join(
        f"Sentence number {n} of a long story about the sea and ships." for n in range(40)
    )
    html = f"<html><head><title>Story</title></head><body><article><p>{prose}</p></article>"
    found = read(_item(tmp_path, html, prose, "article.1"), _score())
    assert found["end"] == found["window"] == found["blocks"] == found["lines"] == found["base"]


@pytest.mark.usefixtures("as_listing")
def test_main_prints_both_halves(tmp_path, capsys):
    _score()
    root = tmp_path / "extraction"
    (root / "wcxb-dev-full" / "html").mkdir(parents=True)
    shutil.copy(SHARED / "score.py", root / "score.py")
    truth = {}
    for page_id in ("listing.1", "listing.4"):  # CRC-32 even and odd: one per half
        (root / "wcxb-dev-full" / "html" / f"{page_id}.html.gz").write_bytes(
            gzip.compress(LISTING.encode())
        )
        truth[page_id] = {"articleBody": LISTING_TRUTH, "url": "https://example.org/items"}
    (root / "wcxb-dev-full" / "ground-truth.json").write_text(json.dumps(truth))
    assert main([str(root)]) == 0
    out = capsys.readouterr().out
    assert "fitting half: 1 pages" in out
    assert "unfitted half: 1 pages" in out
    assert out.count("listing") == 2


def test_main_says_what_it_needs(tmp_path, capsys):
    assert main([str(tmp_path)]) == 1
    assert "wcxb-dev-full is needed" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--sample", "0"])
