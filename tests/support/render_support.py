"""Helpers shared by test_web_fetch_render.py and test_web_fetch_render_hostile.py."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from conftest import HANG_GUARD

from ikigai_web.common.settings import MAX_TIMEOUT, Settings
from ikigai_web.fetch.network import browser

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
TOOL = ROOT / "libexec" / "ikigai" / "web-fetch-tool"


def _browser_missing() -> str | None:
    try:
        browser.executable(Settings(environ={}))
    except browser.Unavailable as exc:
        return f"no browser installed ({exc}): {browser.INSTALL_HINT}"
    return None


MISSING = _browser_missing()
needs_browser = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

PROSE = (
    "This paragraph was filled in by JavaScript from a same-origin request, and web-fetch "
    "read it only after rendering the page in a browser with every request guarded."
)
DATA = json.dumps({"title": "Rendered headline", "text": PROSE}).encode()
# An app shell: an empty root that a script fills from /data.json; `mark` leaves a trace of
# what each probe met, so the test sees that the probe ran and how it ended.
SHELL = """<!doctype html><html><head><title>App</title></head><body><div id="root"></div>
<script>
var marks = [], data = null;
function draw() {
  if (!data) { return; }
  document.getElementById('root').innerHTML = '<article><h1>' + data.title + '</h1><p>' +
    data.text + '</p><p>' + data.text + '</p><p>The probes this page ran ended as follows: ' +
    marks.join(', ') + '.</p></article>';
}
function mark(text) { marks.push(text); draw(); }
fetch('/data.json').then(function (r) { return r.json(); }).then(function (d) {
  data = d;
  mark('data loaded');
});
PROBES
</script></body></html>"""


class Site:
    """A loopback web site: fixed answers by path, and every path asked for."""

    def __init__(self, host: str, routes: dict[str, tuple[str, bytes]]) -> None:
        self.routes = routes
        self.seen: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.seen.append(self.path)
                kind, body = site.routes.get(self.path, ("text/plain", b""))
                self.send_response(200 if self.path in site.routes else 404)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer((host, 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True).start()

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def sites():
    made: list[Site] = []

    def make(routes: dict[str, tuple[str, bytes]], host: str = "127.0.0.1") -> Site:
        site = Site(host, routes)
        made.append(site)
        return site

    yield make
    for site in made:
        site.close()


def shell(probes: str = "") -> tuple[str, bytes]:
    return "text/html; charset=utf-8", SHELL.replace("PROBES", probes).encode()


# The longest deadline and settle time the settings allow: a page that settles is read as soon
# as it does, so only a machine too busy to load a small page in 24 s would see it unsettled.
ROOMY = {"IKIGAI_WEB_TIMEOUT": str(MAX_TIMEOUT), "IKIGAI_WEB_FETCH_RENDER_SETTLE": str(MAX_TIMEOUT)}


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("IKIGAI_")}
    return env | {
        "IKIGAI_CONFIG_DIR": str(tmp_path / "config"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1",
        "IKIGAI_WEB_FETCH_ROBOTS": "0",
        "IKIGAI_WEB_FETCH_CACHE_TTL": "0",
        **ROOMY,
        **extra,
    }


def fetch(tmp_path: Path, call: dict[str, Any], **extra: str) -> dict[str, Any]:
    proc = subprocess.run(
        [str(TOOL)],
        input=json.dumps(call).encode(),
        capture_output=True,
        env=environment(tmp_path, **extra),
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == b""  # neither Playwright nor Chromium writes to the tool's stderr
    answer: dict[str, Any] = json.loads(proc.stdout)
    return answer


@pytest.fixture
def own_tmp() -> Iterator[str]:
    """A TMPDIR of the test's own for the browser, whose profile Playwright makes there: every
    Chromium process of the test names it (its profile on its command line, or its environment)
    and no other test's does. Short: Chromium fails to start from a long one."""
    path = tempfile.mkdtemp(prefix="render-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def chromiums(own: str) -> set[int]:
    """The running Chromium processes started with TMPDIR `own`: this test's, not those of a
    test running beside it."""
    found = set()
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            cmdline = (proc / "cmdline").read_bytes()
            if b"chrom" not in cmdline.split(b"\0")[0]:
                continue
            if own.encode() in cmdline or own.encode() in (proc / "environ").read_bytes():
                found.add(int(proc.name))
    return found


def gone(pids: set[int], own: str) -> bool:
    """Whether the browser processes `pids` have ended, within the hang guard."""
    end = time.monotonic() + HANG_GUARD
    while time.monotonic() < end:
        if not pids & chromiums(own):
            return True
        time.sleep(0.1)
    return False
