"""`make bench-extract` where the benchmark data is not: one message saying where it is
expected and how to point to it, never a traceback."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_without_the_shared_data_it_says_where_the_data_goes(tmp_path):
    nowhere = tmp_path / "no shared"
    result = subprocess.run(
        ["make", "-s", "--no-print-directory", "bench-extract", f"SHARED={nowhere}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert f"no extraction benchmark data at {nowhere}/bench/extraction" in result.stderr
    assert "make bench-extract SHARED=/path/to/shared" in result.stderr
    assert result.stdout == ""


def test_the_report_keeps_every_column_apart_whatever_the_names(capsys):
    from types import SimpleNamespace

    from bench.extract import Run, report

    truth = {"cleanportaleval.1": {"articleBody": "a b"}, "article.2": {"articleBody": "c"}}
    score = SimpleNamespace(
        score=lambda _truths, _texts, n_bootstrap: {
            "counts": [(1, 1, 1), (1, 1, 1)],
            "precision": 1.0,
            "recall": 1.0,
            "f1": 1.0,
        },
        strip_markdown=str,
        aggregate=lambda _counts: (1.0, 1.0, 1.0),
        word_prf=lambda truths, _texts: (0.5, 0.25, len(truths) / 10),
    )
    run = Run({"cleanportaleval.1": "a b", "article.2": "c"}, {"article.2": "article"}, 1.0)
    methods = {"web-fetch": run, "base origin/main~12": run, "trafilatura": run, "one call": run}
    report("set", sorted(truth), truth, methods, score, labelled=True)  # type: ignore[arg-type]
    lines = capsys.readouterr().out.splitlines()
    head, rows = lines[2], lines[3:6]
    for label in ["group", "web-fetch F1", "type ok web-fetch", "type ok base origin/main~12"]:
        assert f"  {label}" in f" {head}"
    for row in rows:
        assert "  1.000 (1.000 / 1.000)" in row
        assert row.split()[0] in {"article", "cleanportaleval", "all"}
        assert re.search(r"  \d+%  +\d+%$", row)  # no page type from trafilatura's calls
    # The word metric, side by side the same way, per group (one page each) and overall.
    words, rows = lines[6], lines[7:10]
    for label in ["group", "web-fetch word F1", "base origin/main~12 word F1", "one call word"]:
        assert f"  {label}" in f" {words}"
    assert "type ok" not in words
    assert [row.split()[0] for row in rows] == ["article", "cleanportaleval", "all"]
    assert rows[0].count("0.100 (0.500 / 0.250)") == 4
    assert rows[2].count("0.200 (0.500 / 0.250)") == 4
    assert lines[10].endswith(
        "web-fetch / trafilatura 1.00x (its one trafilatura call alone: 1.00x)"
    )


def test_a_part_of_the_sets_and_pages_runs_when_asked(tmp_path, capsys):
    import gzip

    from bench.extract import main

    data = tmp_path / "dev"
    (data / "html").mkdir(parents=True)
    truth = {}
    for n in range(4):
        text = f"Page number {n} reads well. " * 20
        page = f"<html><body><article><p>{text}</p></article>"
        (data / "html" / f"p{n}.html.gz").write_bytes(gzip.compress(page.encode()))
        truth[f"p{n}"] = {"url": f"https://example.org/{n}", "articleBody": "Page"}
    (data / "ground-truth.json").write_text(json.dumps(truth), encoding="utf-8")
    shared = Path(__file__).resolve().parents[3] / "shared" / "bench" / "extraction"
    if not (shared / "score.py").is_file():
        pytest.skip("the benchmark's score.py is not beside the project")
    (tmp_path / "score.py").write_bytes((shared / "score.py").read_bytes())
    assert main([str(tmp_path), "--sets", "dev", "--sample", "2"]) == 0
    out = capsys.readouterr().out
    assert "every 2th page" in out
    assert "fitted part: the page-type model" in out
    assert "\ndev: 2 pages" in out
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--sets", "nowhere"])


def test_the_baseline_reads_the_pages_given_by_a_relative_path(tmp_path, monkeypatch):
    # `make bench-extract BASE=...` passes ../shared/...: the baseline runs in a temporary
    # directory and must still find the pages.
    import gzip

    from bench.extract import load, run_base

    data = tmp_path / "data" / "dev"
    (data / "html").mkdir(parents=True)
    page = "<html><body><article><p>" + "Baselines find their pages. " * 20 + "</p></article>"
    (data / "html" / "one.html.gz").write_bytes(gzip.compress(page.encode()))
    (data / "ground-truth.json").write_text(
        '{"one": {"url": "https://example.org/a", "articleBody": "x"}}', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    pages, _ = load(Path("data") / "dev")
    run = run_base("HEAD", pages)
    assert "Baselines find their pages." in run.text["one"]
    assert run.crashed == ()


def test_page_types_given_weigh_every_type_alike():
    from bench.extract import balanced

    # Nine articles all right; one forum wrong, one right, two unsure; one listing unsure.
    labels = ["article"] * 9 + ["forum"] * 4 + ["listing"]
    answers: list[str | None] = ["article"] * 9
    answers += ["product", "forum", None, None, None]
    found = balanced(labels, answers)
    assert found.right == pytest.approx((1.0 + 0.5) / 2)  # the listing gave no answer to judge
    assert found.given == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert found.wrong == pytest.approx((0.0 + 0.25 + 0.0) / 3)
    assert balanced([], []) == (0.0, 0.0, 0.0)


def test_the_fitting_half_is_a_fixed_half_of_the_ids():
    import zlib

    from bench.extract import fitting

    ids = [f"article.{n:04}" for n in range(200)]
    fitted = [page_id for page_id in ids if fitting(page_id)]
    assert fitted == [page_id for page_id in ids if zlib.crc32(page_id.encode()) % 2 == 0]
    assert 60 < len(fitted) < 140  # about half, never all or none


def test_the_typing_report_shows_each_type_given_and_right(capsys):
    from bench.extract import Run, typing

    ids = ["article.1", "article.2", "forum.1", "forum.2"]
    ours = Run({}, {"article.1": "article", "article.2": None, "forum.1": "article"}, 1.0)
    base = Run({}, dict.fromkeys(ids, "article"), 1.0)
    typing(ids, {"web-fetch": ours, "base abc": base, "trafilatura": base})
    out = capsys.readouterr().out
    assert "web-fetch: 50.0% / 50.0% / 25.0%, right or unsure 75.0%" in out
    assert "base abc: 50.0% / 100.0% / 50.0%, right or unsure 50.0%" in out
    assert "trafilatura:" not in out
    assert re.search(r"article +100% of 50% given +100% of 100% given", out)
    assert re.search(r"forum +0% of 50% given +0% of 100% given", out)
