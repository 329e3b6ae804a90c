"""What web_search_auto's memory of providers costs a call, and what it saves.

1. Cost: one call's reading and writing of the memory (ikigai_web.tools.fallback.recall: the notes
of
   five providers read from the shared state's local files, the order planned, a failure and
   an answer learned, written back), in this process. Figures: median and 90th percentile of
   300 calls, with no note and with notes to read and write.
2. Saving: web-search-auto-tool as a host runs it (its launcher, a process per call), Brave
   stalled on a loopback fake (it never answers) and Tavily answering, the default deadline.
   Each call after the first knows Brave stalled and asks Tavily at once; with the memory
   forgotten before each call (`web-tools forget`: as before the memory), each waits Brave's
   share of the deadline. Figures: the median of 3 calls each way.
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

from verdict import LAUNCHERS, ROOT, check, exit_code

CALLS = 300
SEARCHES = 3
TAVILY = json.loads((ROOT / "tests" / "fixtures" / "tavily" / "search.json").read_text())
PROVIDERS = ["brave", "google", "tavily", "searxng", "duckduckgo"]


def private_env(root: str) -> dict[str, str]:
    """The environment of a user with nothing set up, in `root`, plus the keys."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("IKIGAI_") and not k.endswith(("_API_KEY", "_API_URL"))}  # fmt: skip
    return env | {"IKIGAI_CONFIG_DIR": f"{root}/config", "XDG_STATE_HOME": f"{root}/state",
                  "XDG_CACHE_HOME": f"{root}/cache", "BRAVE_API_KEY": "BSA-bench-key",
                  "TAVILY_API_KEY": "tvly-bench-key"}  # fmt: skip


def cost(*, learn: bool) -> str:
    from ikigai_web.common.errors import ErrorCode
    from ikigai_web.tools.fallback.recall import Recall

    took = []
    for _ in range(CALLS):
        started = time.perf_counter()
        notes = Recall(PROVIDERS)
        notes.plan(PROVIDERS)
        if learn:
            notes.failed("brave", (ErrorCode.RATE_LIMIT, "Brave answered HTTP 429.", 30))
            notes.answered("tavily", 3, "ikigai")
        notes.save()
        took.append((time.perf_counter() - started) * 1000)
    took.sort()
    median, p90 = statistics.median(took), took[int(len(took) * 0.9)]
    return f"median {check('memory cost', median, 5.0, ' ms')}, p90 {p90:.2f} ms"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *_: object) -> None:
        pass

    def do_GET(self) -> None:  # Brave: stalled, it never answers while the bench runs
        time.sleep(120)

    def do_POST(self) -> None:  # Tavily
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        data = json.dumps(TAVILY).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def search(env: dict[str, str], *, forget: bool) -> float:
    if forget:
        subprocess.run([str(ROOT / ".venv" / "bin" / "web-tools"), "forget"], env=env,
                       capture_output=True, check=True)  # fmt: skip
    started = time.monotonic()
    run = subprocess.run([str(LAUNCHERS / "web-search-auto-tool")], input=b'{"query": "ikigai"}',
                         env=env, capture_output=True, check=True)  # fmt: skip
    took = time.monotonic() - started
    assert json.loads(run.stdout)["provider"] == "tavily", run.stdout
    return took


def saving(root: str) -> list[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    env = private_env(root) | {
        "BRAVE_SEARCH_API_URL": f"{url}/brave",
        "TAVILY_API_URL": f"{url}/tavily",
        "IKIGAI_WEB_CACHE_TTL": "0",
    }
    first = search(env, forget=True)
    remembered = statistics.median(search(env, forget=False) for _ in range(SEARCHES))
    forgotten = statistics.median(search(env, forget=True) for _ in range(SEARCHES))
    server.shutdown()
    verdict = check("a stalled provider remembered", remembered, 1.0, " s")
    return [
        f"  first call, Brave not yet known to stall: {first:.2f} s",
        f"  later calls, remembered: {verdict}",
        f"  later calls, forgotten before each (no memory): {forgotten:.2f} s",
    ]


def main() -> None:
    print(f"bench_memory: web_search_auto's memory of providers, {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as root:
        os.environ.update(private_env(root))
        print(f"  cost a call, no note: {cost(learn=False)}")
        print(f"  cost a call, notes read and written: {cost(learn=True)}")
    with tempfile.TemporaryDirectory() as root:
        print(f"a stalled first provider, {SEARCHES} calls each way, default deadline:")
        print("\n".join(saving(root)))


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
