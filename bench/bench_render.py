"""web-fetch with and without the browser: time and peak memory of one call on an app shell.

A loopback server serves an app shell (an empty root a script fills from a same-origin
`fetch()`) and its data. The installed web-fetch-tool reads it with `render: "never"` (the HTML
as sent) and with `render: "always"` (rendered in headless Chromium), in turn, several times.
Peak memory is that of the whole process tree (the tool, Playwright's driver and every
Chromium process), summed from /proc every 10 ms as proportional set size, so pages shared
between Chromium's processes count once. Targets: a rendered call within 10 s (the host stops
waiting at 30 s) and under 1 GiB (the cap web-fetch enforces). Without a browser installed the
rendered half says so and is skipped.
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

from verdict import LAUNCHERS, check, exit_code

from ikigai_web.common.procs import descendants
from ikigai_web.common.settings import Settings
from ikigai_web.fetch.network import browser

RUNS = 5
TARGET_S = 10.0
TARGET_MB = 1024.0
PARAGRAPH = "A sentence of the rendered article, long enough to read as prose, again. " * 6
DATA = json.dumps({"paragraphs": [PARAGRAPH] * 40}).encode()
SHELL = b"""<!doctype html><html><head><title>App</title></head><body><div id="root"></div>
<script>fetch('/data.json').then(function (r) { return r.json(); }).then(function (d) {
  document.getElementById('root').innerHTML = '<article><h1>Rendered</h1>' +
    d.paragraphs.map(function (p) { return '<p>' + p + '</p>'; }).join('') + '</article>';
});</script></body></html>"""


class Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, kind = (
            (DATA, "application/json") if self.path == "/data.json" else (SHELL, "text/html")
        )
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def tree_memory(pid: int, stop: threading.Event, peak: list[int]) -> None:
    while not stop.wait(0.01):
        pids = [pid, *descendants(pid)]
        peak[0] = max(peak[0], sum(browser._resident(p) for p in pids))  # noqa: SLF001


def one_call(url: str, render: str, env: dict[str, str]) -> tuple[float, float, str]:
    started = time.monotonic()
    proc = subprocess.Popen(
        [str(LAUNCHERS / "web-fetch-tool")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    stop, peak = threading.Event(), [0]
    watcher = threading.Thread(target=tree_memory, args=(proc.pid, stop, peak), daemon=True)
    watcher.start()
    out, _ = proc.communicate(json.dumps({"url": url, "render": render}).encode(), timeout=60)
    took = time.monotonic() - started
    stop.set()
    watcher.join()
    return took, peak[0] / 1e6, out.decode()


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/app"
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")} | {
            "IKIGAI_CONFIG_DIR": home,
            "XDG_CACHE_HOME": home,
            "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1",
            "IKIGAI_WEB_FETCH_ROBOTS": "0",
            "IKIGAI_WEB_FETCH_CACHE_TTL": "0",
        }
        print(
            "web-fetch on an app shell, whole process tree (median of", RUNS, "runs, interleaved):"
        )
        try:
            browser.executable(Settings(environ={}))
        except browser.Unavailable as exc:
            print(f"  rendered: skipped, {exc}")
            return exit_code()
        plain, rendered = [], []
        for _ in range(RUNS):
            plain.append(one_call(url, "never", env))
            rendered.append(one_call(url, "always", env))
    server.shutdown()
    if "Rendered" not in rendered[-1][2] or PARAGRAPH.strip() not in rendered[-1][2]:
        print("  the rendered call did not return the rendered article:", rendered[-1][2][:300])
        return 1
    report("as sent (render: never)", plain)
    time_s, peak_mb = report("rendered (render: always)", rendered)
    ratio = time_s / statistics.median(t for t, _, _ in plain)
    print(f"  rendered / as sent: {ratio:.1f}x the time")
    print("  rendered call time:", check("render time", time_s, TARGET_S, " s"))
    print("  rendered peak memory:", check("render memory", peak_mb, TARGET_MB, " MB"))
    return exit_code()


def report(label: str, runs: list[tuple[float, float, str]]) -> tuple[float, float]:
    time_s = statistics.median(t for t, _, _ in runs)
    peak_mb = statistics.median(m for _, m, _ in runs)
    print(f"  {label:26} {time_s * 1000:7.0f} ms   peak {peak_mb:6.1f} MB")
    return time_s, peak_mb


if __name__ == "__main__":
    sys.exit(main())
