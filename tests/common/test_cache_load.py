"""8 processes x 50 calls on one cache, small enough to keep evicting: no failure, no wrong or
torn answer, no corrupt entry left behind.

Each process alternates web-fetch calls (pages of ~120 KB from a loopback server, 10 of them:
more than the 1 MB bound holds) and searches (10 queries). A reader that saw a half-written
entry would get a CACHE warning (the entry is corrupt), or a wrong answer: both are failures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from conftest import FakeServer, Reply

from ikigai_web.common import cache
from ikigai_web.common.settings import cache_dir
from ikigai_web.fetch import pipeline
from ikigai_web.search import kit as search

ROOT = Path(__file__).resolve().parents[2]
PROCESSES = 8
CALLS = 50
PAGES = 10
BOUND_MB = 1

WORKER = """
import sys
import orjson
from ikigai_web.search.domains import Page
from ikigai_web.common.runner import answer, render
from ikigai_web.search.kit import search
from ikigai_web.common.settings import load
from ikigai_web.fetch import pipeline
from ikigai_web.tools import web_fetch

base, worker, calls, pages = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])


def page_text(n):
    return "".join(f"page {n} line {i} " + "x" * 100 + "\\n" for i in range(1000))


def rows(query, n):
    return [{"title": f"{query} {i}", "url": f"https://e.com/{query}/{i}", "snippet": ""}
            for i in range(n)]


def a_fetch(n):
    call = {"url": f"{base}/p{n}.txt"}
    out = orjson.loads(render(*answer(web_fetch.execute, call, web_fetch.SCHEMA)))
    text = page_text(n)
    ok = out["success"] and text.startswith(out["content"]) and out["total_lines"] == 1000
    return ok and len(out["content"]) > 1000, out


def a_search(n):
    query = f"q{n}"
    fetch = lambda link, site, count: Page(rows(query, count))
    out = search("load", load(), fetch, (3, [], []), query)
    ok = out["results"] == rows(query, 3) and out["count"] == 3
    return ok, orjson.loads(render(out, 60_000))


report = {"cached": 0, "problems": []}
for i in range(calls):
    n = (worker + i) % pages
    ok, out = a_fetch(n) if i % 2 else a_search(n)
    report["cached"] += bool(out.get("cached"))
    if not ok or "warnings" in out:
        report["problems"].append(str({k: v for k, v in out.items() if k != "content"})[:300])
print(orjson.dumps(report).decode())
"""


def page_text(n: int) -> str:
    return "".join(f"page {n} line {i} " + "x" * 100 + "\n" for i in range(1000))


@pytest.mark.loopback
def test_eight_processes_times_fifty_calls_on_one_small_cache(fake_server: FakeServer, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("IKIGAI_WEB_CACHE_MAX_MB", str(BOUND_MB))
    for n in range(PAGES):
        fake_server.route(f"/p{n}.txt", Reply(200, page_text(n), {"Content-Type": "text/plain"}))
    args = [fake_server.url, str(CALLS), str(PAGES)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, args[0], str(w), *args[1:]],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for w in range(PROCESSES)
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()[-2000:]
        reports.append(orjson.loads(out))
    assert [r["problems"] for r in reports] == [[]] * PROCESSES
    assert sum(r["cached"] for r in reports) > PROCESSES * CALLS // 4  # the cache was used
    assert_every_entry_is_whole()
    fetched = [seen for seen in fake_server.seen if seen.path.startswith("/p")]
    assert len(fetched) > PAGES  # pages evicted were fetched again


def assert_every_entry_is_whole() -> None:
    valid = {"web_fetch": pipeline.is_stored_page, "search": search._is_answer}
    total = 0
    for path in (p for p in cache_dir().glob("*/*") if p.is_file()):
        assert not path.name.endswith(".tmp"), path
        entry = orjson.loads(path.read_bytes())
        assert valid[path.parent.name](entry["value"]), path
        total += path.stat().st_size
    largest = 130 * 1024
    # Writers that finish while another process sweeps may leave it over by their entries.
    assert total <= BOUND_MB * 1024 * 1024 + PROCESSES * largest
    assert cache.get("search", ["load", "q0"], 300, valid=search._is_answer).warning is None
