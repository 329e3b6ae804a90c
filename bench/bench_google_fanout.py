"""Google domain fan-out: is a 5-domain search about as fast as a 1-domain one?

A fake Custom Search server on 127.0.0.1 answers every request after 300 ms. The installed
web-search-google-tool runs against it (GOOGLE_SEARCH_API_URL) with 1 and with 5 allowed
domains, several times each, cache off. Parallel requests make the ratio of the medians close
to 1; serial ones would make it about 3x here. Target: at most 1.25x.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "libexec" / "ikigai" / "web-search-google-tool"  # what a host runs
DELAY = 0.3
RUNS = 9
TARGET = 1.25
DOMAINS = [f"site{i}.example" for i in range(5)]


class Handler(BaseHTTPRequestHandler):
    """Answers like Custom Search: `num` items from the `siteSearch` domain, 300 ms late."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *_: object) -> None:
        pass

    def do_GET(self) -> None:
        query = parse_qs(urlsplit(self.path).query)
        site = query.get("siteSearch", ["example.com"])[0]
        num = int(query.get("num", ["10"])[0])
        items = [
            {"kind": "customsearch#result", "title": f"{site} result {i}",
             "link": f"https://{site}/r{i}", "displayLink": site, "snippet": "A snippet."}
            for i in range(num)
        ]  # fmt: skip
        data = json.dumps({"kind": "customsearch#search", "items": items}).encode()
        time.sleep(DELAY)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def run_once(env: dict[str, str], domains: list[str]) -> float:
    payload = json.dumps({"query": "rust async", "num": 10, "allowed_domains": domains})
    began = time.perf_counter()
    proc = subprocess.run(
        [str(TOOL)], input=payload.encode(), capture_output=True, env=env, check=False, timeout=60
    )
    elapsed = time.perf_counter() - began
    out = json.loads(proc.stdout) if proc.returncode == 0 else {}
    if out.get("count") != 10 or "warnings" in out:
        sys.exit(
            f"bench: unexpected answer (exit {proc.returncode}): {proc.stdout!r} {proc.stderr!r}"
        )
    return elapsed


def medians(env: dict[str, str]) -> tuple[float, float]:
    """Median seconds for 1 and for 5 domains, runs interleaved so load drifts hit both."""
    one: list[float] = []
    five: list[float] = []
    for _ in range(RUNS):
        one.append(run_once(env, DOMAINS[:1]))
        five.append(run_once(env, DOMAINS))
    return statistics.median(one), statistics.median(five)


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
        env |= {
            "GOOGLE_SEARCH_API_URL": f"http://127.0.0.1:{server.server_address[1]}/customsearch/v1",
            "GOOGLE_SEARCH_API_KEY": "bench-key",
            "GOOGLE_SEARCH_ENGINE_ID": "bench-engine",
            "IKIGAI_WEB_CACHE_TTL": "0",
            "IKIGAI_CONFIG_DIR": tmp,
            "XDG_CACHE_HOME": tmp,
            "XDG_STATE_HOME": tmp,
            # What is measured is the fan-out's parallelism. Its 60 requests in a few seconds
            # are over Google's documented 100 a minute, which pacing would rightly spread out
            # (bench_pacing measures that), so this key is declared unpaced.
            "IKIGAI_WEB_RATE_LIMITS": "google=off",
        }
        run_once(env, DOMAINS[:1])  # warm the OS file cache before timing
        one, five = medians(env)
    server.shutdown()
    ratio = five / one
    verdict = "PASS" if ratio <= TARGET else "FAIL: the fan-out is not parallel"
    print(
        f"google fan-out, {DELAY * 1000:.0f} ms per answer, median of {RUNS} runs: "
        f"1 domain {one:.3f} s, 5 domains {five:.3f} s, ratio {ratio:.2f}x "
        f"(target <= {TARGET}x): {verdict}"
    )
    return 0 if ratio <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
