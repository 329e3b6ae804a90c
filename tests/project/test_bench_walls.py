"""bench/bench_walls.py, the walls harness, end to end on the small corpus of the tests' data
(tests/fixtures/walls: each status and kind through the whole pipeline on loopback), and on a
corpus whose near miss is a wall, which it must report and fail on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.loopback
ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fixtures" / "walls"


def run(corpus: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "bench/bench_walls.py", "--corpus", str(corpus), "--no-dev", "--no-probe"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_every_page_of_the_tests_corpus_is_named_rightly():
    result = run(CORPUS)
    assert result.returncode == 0, result.stdout + result.stderr
    pages = json.loads((CORPUS / "manifest.json").read_text(encoding="utf-8"))["pages"]
    walls = sum(entry["kind"] != "none" for entry in pages.values())
    assert f"named rightly: {walls}/{walls} = 100.00%" in result.stdout
    assert "near misses flagged: 0/1" in result.stdout
    assert "by language: " in result.stdout
    assert "Traceback" not in result.stderr


def test_a_flagged_near_miss_is_named_and_fails_the_run(tmp_path):
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    manifest["pages"]["not_found/soft-404-tr.html"]["kind"] = "none"  # a wall, labelled content
    (corpus / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = run(corpus)
    assert result.returncode == 1
    assert "near misses flagged: 1/2" in result.stdout
    assert (
        "miss: not_found/soft-404-tr.html [tr, none] -> HTTP_ERROR wall not_found" in result.stdout
    )


def test_a_page_whose_path_has_a_fragment_is_served_at_its_path(tmp_path):
    """A fragment never reaches the server: a page listed at "/members/notes#top" is the
    site's answer to "/members/notes", not its answer to a missing path."""
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPUS, corpus)
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    manifest["pages"]["sign_in/login-ko.html"]["path"] = "/members/notes#top"
    manifest["pages"]["js_shell/cra-en.html"]["path"] = "/#/dashboard"
    (corpus / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = run(corpus)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "miss:" not in result.stdout
