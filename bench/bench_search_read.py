"""A search that reads: what `read: 3` costs over the search alone, and its peak memory.

A Brave search through the launcher a host runs, against a loopback fake whose three results
are pages on the same server that each take 1 s to answer; with `read: 3` the three are
fetched through web-fetch in parallel and each gets its passages. The two calls run in turn
(search alone, search that reads), caches off so every run fetches; the target is a median
cost of at most 1.5 s over the search alone, and a peak memory of at most 300 MB for the
process that reads.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, NamedTuple

from verdict import LAUNCHERS, ROOT, check, exit_code

sys.path.insert(0, str(ROOT / "tests"))

from toolbox import PEAK_MEMORY

RUNS = 7
PAGE_DELAY = 1.0
TARGET_EXTRA = 1.5  # seconds
TARGET_PEAK = 300  # MB
PARAGRAPHS = 120


def page(number: int) -> bytes:
    paragraphs = "".join(
        f"<h2>Part {n}</h2><p>Paragraph {n} of page {number} tells of harbour {n % 7}, its "
        f"lighthouse and the ships that called there in the year {1800 + n}.</p>"
        for n in range(PARAGRAPHS)
    )
    head = f"<html><head><title>Harbours {number}</title></head><body><main><article>"
    return f"{head}<h1>Harbours {number}</h1>{paragraphs}</article></main></body></html>".encode()


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, *_: object) -> None:
        pass


def serve() -> tuple[Server, str]:
    holder: dict[str, str] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?")[0]
            if path.startswith("/page"):
                time.sleep(PAGE_DELAY)
                body, ctype, status = page(int(path[5:])), "text/html", 200
            elif path == "/robots.txt":
                body, ctype, status = b"", "text/plain", 404
            else:
                items = [{"title": f"Harbours {n}", "url": f"{holder['url']}/page{n}",
                          "description": "Harbours."} for n in range(3)]  # fmt: skip
                web = {"type": "search", "results": items}
                body, ctype, status = (
                    json.dumps({"type": "search", "web": web}).encode(),
                    "application/json",
                    200,
                )
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = Server(("127.0.0.1", 0), Handler)
    holder["url"] = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    return server, holder["url"]


class Run(NamedTuple):
    wall: float  # seconds
    cpu: float  # seconds of processor time (user and system), whatever else the machine runs
    peak: float  # MB
    answer: dict[str, Any]


def run(call: dict[str, object], env: dict[str, str], tmp: Path) -> Run:
    peak = tmp / "peak"
    peak.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    tool = str(LAUNCHERS / "web-search-brave-tool")
    done = subprocess.run([tool], input=json.dumps(call).encode(), capture_output=True,
                          env=env | {"PEAK_FILE": str(peak)}, check=True, timeout=60)  # fmt: skip
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return Run(took, cpu, int(peak.read_text()) / 1024, json.loads(done.stdout))


def main() -> None:
    server, url = serve()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "sitecustomize.py").write_text(PEAK_MEMORY)
        env = os.environ | {
            "PYTHONPATH": tmp,
            "BRAVE_API_KEY": "k",
            "BRAVE_SEARCH_API_URL": f"{url}/res/v1/web/search",
            "IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1",
            # The calls come back to back: pacing would hold each second one to Brave's
            # documented 1 request a second, a wait that is not the reading's (bench_pacing).
            "IKIGAI_WEB_RATE_LIMITS": "brave=off",
            "IKIGAI_WEB_CACHE_TTL": "0",
            "IKIGAI_WEB_FETCH_CACHE_TTL": "0",
            "IKIGAI_CONFIG_DIR": tmp,
            "XDG_CACHE_HOME": tmp,
            "XDG_STATE_HOME": tmp,
        }
        alone, reading = [], []
        call = {"query": "lighthouse of harbour 3", "count": 3}
        for _ in range(RUNS):
            alone.append(run(call, env, Path(tmp)))
            reading.append(run(call | {"read": 3}, env, Path(tmp)))
            answer = reading[-1].answer
            assert all(r["read"].get("content") for r in answer["results"]), answer
    server.shutdown()
    wall = statistics.median(r.wall for r in reading) - statistics.median(r.wall for r in alone)
    cpu = statistics.median(r.cpu for r in reading) - statistics.median(r.cpu for r in alone)
    peak = max(r.peak for r in reading)
    print(f"Search that reads: a Brave search through the launcher, 3 results on pages of "
          f"{PAGE_DELAY:g} s each, {RUNS} runs of each in turn:")  # fmt: skip
    for name, runs in (("search alone", alone), ("with read 3", reading)):
        print(f"  {name}: median {statistics.median(r.wall for r in runs):.2f} s, "
              f"{statistics.median(r.cpu for r in runs):.2f} s of CPU")  # fmt: skip
    print(f"  (reading costs {cpu:.2f} s of CPU more: the fetch pipeline's imports, three pages "
          "extracted)")  # fmt: skip
    verdict = check("search read: cost", wall, TARGET_EXTRA, " s")
    print(f"  search read: cost over the search alone: {verdict}")
    verdict = check("search read: peak memory", peak, TARGET_PEAK, " MB")
    print(f"  search read: peak memory: {verdict}")


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
