"""Start-up and search overhead, as ratios measured in one run, through what a host runs.

1. `TOOL --schema` median wall time against the bare interpreter's start-up (`python -c pass`),
   through the `libexec/ikigai/` launcher a host runs. The host allows 1 s; the target is a
   median within 2x the interpreter. The console scripts behind the launchers are shown too.
2. One Brave search through the launcher against a loopback fake, against a minimal
   standard-library client (urllib + json) making the same request and printing the same
   fields, both as fresh processes; the target is a median within 1.6x.
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
import tomllib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from verdict import LAUNCHERS, check, exit_code

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
PYTHON = str(BIN / "python")
RUNS = 25
SCHEMA_TARGET = 2.0
RATE_HEADERS = {
    "X-RateLimit-Limit": "50, 20000000",
    "X-RateLimit-Policy": "50;w=1, 20000000;w=2592000",
    "X-RateLimit-Remaining": "49, 19999999",
    "X-RateLimit-Reset": "1, 2592000",
}
SEARCH_TARGET = 1.6
BODY = (ROOT / "tests" / "fixtures" / "brave" / "search.json").read_bytes()
STDLIB_CLIENT = """
import json, os, urllib.parse, urllib.request
q = {"q": "ikigai meaning", "count": 10, "offset": 0, "text_decorations": "false"}
headers = {"X-Subscription-Token": "k", "Accept": "application/json"}
url = os.environ["URL"] + "?" + urllib.parse.urlencode(q)
body = json.load(urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=25))
rows = [
    {"title": r["title"], "url": r["url"], "snippet": r.get("description", "")}
    for r in body["web"]["results"]
]
print(json.dumps({"success": True, "results": rows, "count": len(rows)}))
"""


def timed(cmd: list[str], stdin: bytes = b"", env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, input=stdin, capture_output=True, check=True, env=env)
    return time.perf_counter() - start


Command = tuple[list[str], bytes, dict[str, str] | None]


def medians(cmds: dict[str, Command]) -> dict[str, float]:
    """Interleave the commands so machine noise hits them alike."""
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(RUNS):
        for name, (cmd, stdin, env) in cmds.items():
            samples[name].append(timed(cmd, stdin, env))
    return {k: statistics.median(v) for k, v in samples.items()}


def schema_startup() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    tools = [s for s in scripts if s.endswith("-tool")]
    cmds: dict[str, Command] = {"python -c pass": ([PYTHON, "-c", "pass"], b"", None)}
    for s in tools:
        cmds[f"libexec/ikigai/{s}"] = ([str(LAUNCHERS / s), "--schema"], b"", None)
        cmds[f".venv/bin/{s}"] = ([str(BIN / s), "--schema"], b"", None)
    result = medians(cmds)
    base = result.pop("python -c pass")
    print(f"--schema wall time, median of {RUNS} (bare interpreter {base * 1000:.1f} ms):")
    for name, value in result.items():
        if name.startswith("libexec/"):
            verdict = check(f"{name} --schema", value / base, SCHEMA_TARGET)
        else:
            verdict = f"{value / base:.2f}x (console script, not what a host runs)"
        print(f"  {name:44s} {value * 1000:6.1f} ms  {verdict}")


class Fake(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        # Brave's headers on every answer, for a plan of 50 requests a second: the pacing
        # learns the plan from the first answer, as it does from the real API.
        for name, value in RATE_HEADERS.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, *_: object) -> None:
        pass


def search_overhead() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Fake)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/res/v1/web/search"
    env = os.environ | {"BRAVE_API_KEY": "k", "BRAVE_SEARCH_API_URL": url, "URL": url}
    env |= {"IKIGAI_WEB_CACHE_TTL": "0", "XDG_STATE_HOME": tempfile.mkdtemp()}
    call = json.dumps({"query": "ikigai meaning"}).encode()
    result = medians({
        "stdlib": ([PYTHON, "-c", STDLIB_CLIENT], b"", env),
        "tool": ([str(LAUNCHERS / "web-search-brave-tool")], call, env),
    })  # fmt: skip
    server.shutdown()
    ratio = result["tool"] / result["stdlib"]
    print(f"one search via loopback (median of {RUNS}, fresh process each):")
    print(f"  stdlib urllib client {result['stdlib'] * 1000:6.1f} ms")
    print(f"  libexec/ikigai/web-search-brave-tool {result['tool'] * 1000:6.1f} ms  ratio "
          + check("one Brave search", ratio, SEARCH_TARGET))  # fmt: skip


if __name__ == "__main__":
    print(f"bench_search on {sys.platform}, {os.cpu_count()} cores")
    schema_startup()
    search_overhead()
    sys.exit(exit_code())
