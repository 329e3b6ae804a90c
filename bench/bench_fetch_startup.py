"""One uncached web-fetch call against the least a script doing the same must spend.

A loopback server serves a 174 KB news article (bench/fetch_startup_page.html.gz, one page
of the extraction dev set, served plain as a file). A: the installed launcher a host runs
(libexec/ikigai/web-fetch-tool) fetches it with the cache off (IKIGAI_WEB_FETCH_CACHE_TTL=0)
and loopback allowed (IKIGAI_WEB_FETCH_ALLOW_PRIVATE=1). B: a script that fetches it with
urllib and converts it with `trafilatura.extract(html, output_format="markdown")`, which
pays trafilatura's import as web-fetch does. Both are fresh processes, run in pairs A B,
ten pairs after one of each to warm the disk cache; the figure is the median of the pairs'
ratios A/B, so machine noise hits both sides of a pair alike. Target: within 1.2x.
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from verdict import LAUNCHERS, check, exit_code

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
PAGE = gzip.decompress((Path(__file__).parent / "fetch_startup_page.html.gz").read_bytes())
PAIRS = 10
TARGET = 1.2
BASELINE = """
import os, urllib.request, trafilatura
html = urllib.request.urlopen(os.environ["URL"], timeout=25).read().decode("utf-8")
print(trafilatura.extract(html, output_format="markdown"))
"""


class Site(SimpleHTTPRequestHandler):
    """The page as a file at /page.html; 404 for anything else (robots.txt: none, so all
    pages allowed)."""

    def log_message(self, *_: object) -> None:
        pass


def timed(cmd: list[str], stdin: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, input=stdin, capture_output=True, check=True, env=env)
    took = time.perf_counter() - start
    if not done.stdout.strip() or b'"success":false' in done.stdout:
        raise SystemExit(f"{cmd[0]} did not read the page: {done.stdout[:300]!r}")
    return took


def main() -> None:
    site = Path(tempfile.mkdtemp())
    (site / "page.html").write_bytes(PAGE)
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Site, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/page.html"
    env = os.environ | {"URL": url, "XDG_CACHE_HOME": tempfile.mkdtemp()}
    env |= {"IKIGAI_WEB_FETCH_CACHE_TTL": "0", "IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}
    tool = ([str(LAUNCHERS / "web-fetch-tool")], json.dumps({"url": url}).encode())
    baseline = ([PYTHON, "-c", BASELINE], b"")
    pairs: list[tuple[float, float]] = []
    for run in range(PAIRS + 1):
        pair = (timed(*tool, env), timed(*baseline, env))
        if run:  # the first pair only warms the disk cache
            pairs.append(pair)
    server.shutdown()
    ratio = statistics.median(a / b for a, b in pairs)
    print(f"bench_fetch_startup: one uncached web-fetch of a {len(PAGE) // 1000} KB page via "
          f"loopback ({PAIRS} pairs, fresh process each):")  # fmt: skip
    print(f"  urllib + trafilatura script  {statistics.median(b for _, b in pairs) * 1000:6.1f} ms")
    print(f"  libexec/ikigai/web-fetch-tool {statistics.median(a for a, _ in pairs) * 1000:6.1f} ms"
          "  median pair ratio " + check("one uncached web-fetch", ratio, TARGET))  # fmt: skip


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
