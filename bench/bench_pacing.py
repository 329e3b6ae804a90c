"""Pacing under load, through what a host runs (the Brave launcher, a fresh process per call),
against a loopback fake of Brave that enforces a per-key limit as a sliding window (no more
than the limit in any one second: the strictest way to count) and sends Brave's headers
(X-RateLimit-Limit/Policy/Remaining/Reset; 429 with Brave's error body past the limit).

1. 32 callers at once, each making 4 searches one after another, on a key of 1 request a
   second, with the default 25 s deadline. A call whose turn fits its deadline waits for it;
   one whose turn does not answers RATE_LIMIT at once, without asking, with `retry_after`,
   and its caller (as an agent would) asks again after that long, until all 128 are served
   (about two minutes at 1 a second). No call may get RATE_LIMIT from the provider, nor fail
   otherwise, and the key is kept busy: accepted requests over the span from the first to the
   last, at least 90 % of the limit. The provider's 429s are shown: a send that a busy machine
   delayed can land a few milliseconds too close to the next; it is sent again in its next
   turn, and its call does not fail.
2. On a key of 50 requests a second, one search at a time: a call's wall time with pacing on
   (the limit learned from the headers) against pacing off (IKIGAI_WEB_RATE_LIMITS=brave=off),
   interleaved, median of each, with the cache on as by default (each query new); pacing may
   add at most 5 ms.
3. Both again with two machines simulated: two state directories (half the callers each)
   sharing one Redis (a `redis-server` started here on loopback; skipped when not installed).
   Both sides of the comparison then talk to Redis (the cache is there); what Redis itself
   costs a call (importing its client, about 0.1 s, and connecting), pacing or not, is shown
   beside, not as a target.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from verdict import LAUNCHERS, check, exit_code

ROOT = Path(__file__).resolve().parent.parent
BODY = (ROOT / "tests" / "fixtures" / "brave" / "search.json").read_bytes()
LIMITED = (ROOT / "tests" / "fixtures" / "brave" / "rate_limited.json").read_bytes()
TOOL = str(LAUNCHERS / "web-search-brave-tool")
CALLERS = 32
SEARCHES = 4
DEADLINE = 25
RUNS = 40
MONTH = 20_000_000
KEYS = {"slow-key-1-per-second": 1, "fast-key-50-per-second": 50}


class Fake:
    """Brave's limit per key, counted over a sliding second; every answer's arrival kept."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.recent: dict[str, deque[float]] = {k: deque() for k in KEYS}
        self.accepted: dict[str, list[float]] = {k: [] for k in KEYS}
        self.refused: dict[str, int] = dict.fromkeys(KEYS, 0)

    def admit(self, key: str) -> tuple[bool, dict[str, str]]:
        limit = KEYS[key]
        with self.lock:
            now = time.monotonic()
            window = self.recent[key]
            while window and window[0] <= now - 1.0:
                window.popleft()
            ok = len(window) < limit
            if ok:
                window.append(now)
                self.accepted[key].append(now)
            else:
                self.refused[key] += 1
            reset = max(1, math.ceil(window[0] + 1.0 - now)) if window else 1
            left = limit - len(window)
        headers = {
            "X-RateLimit-Limit": f"{limit}, {MONTH}",
            "X-RateLimit-Policy": f"{limit};w=1, {MONTH};w=2592000",
            "X-RateLimit-Remaining": f"{left}, {MONTH}",
            "X-RateLimit-Reset": f"{reset}, 2592000",
        }
        return ok, headers

    def reset(self) -> None:
        with self.lock:
            for key in KEYS:
                self.recent[key].clear()
                self.accepted[key].clear()
                self.refused[key] = 0


def handler(fake: Fake) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            key = self.headers.get("X-Subscription-Token", "")
            if key not in KEYS:
                self.answer(401, b'{"error": {"code": "SUBSCRIPTION_TOKEN_INVALID"}}', {})
                return
            ok, headers = fake.admit(key)
            self.answer(200 if ok else 429, BODY if ok else LIMITED, headers)

        def answer(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in ({"Content-Type": "application/json"} | headers).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_: object) -> None:
            pass

    return Handler


def call(env: dict[str, str], query: str) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    run = subprocess.run(
        [TOOL], input=json.dumps({"query": query}).encode(), capture_output=True, env=env,
        check=False, timeout=60,
    )  # fmt: skip
    took = time.perf_counter() - started
    return json.loads(run.stdout or b"{}"), took


def load(fake: Fake, envs: list[dict[str, str]], label: str) -> None:
    """Part 1 (and 3): CALLERS at once, SEARCHES each, on the 1-a-second key."""
    fake.reset()
    key = "slow-key-1-per-second"

    def caller(n: int) -> list[dict[str, Any]]:
        env, answers = envs[n % len(envs)], []
        for i in range(SEARCHES):
            while True:
                answer = call(env, f"load {label} {n} {i}")[0]
                answers.append(answer)
                if not paced(answer):
                    break
                time.sleep(answer["retry_after"])  # as told: the turn it could not wait for
        return answers

    started = time.monotonic()
    with ThreadPoolExecutor(CALLERS) as pool:
        answers = [a for got in pool.map(caller, range(CALLERS)) for a in got]
    took = time.monotonic() - started
    served = sum(1 for a in answers if a.get("success"))
    told = [a["retry_after"] for a in answers if paced(a)]
    limited = sum(1 for a in answers if a.get("error_code") == "RATE_LIMIT" and not paced(a))
    other = len(answers) - served - len(told) - limited
    for answer in answers:
        if not answer.get("success") and not paced(answer):
            print(f"  failed: {answer.get('error_code')}: {str(answer.get('error'))[:300]}")
    times = fake.accepted[key]
    span = (times[-1] - times[0] + 1.0) if times else 1.0
    busy = len(times) / span / KEYS[key] * 100
    when = f" (retry_after {min(told)}-{max(told)} s)" if told else ""
    print(f"{label}: {CALLERS} callers x {SEARCHES} searches on a 1 request/s key, "
          f"deadline {DEADLINE} s, {took:.0f} s:")  # fmt: skip
    print(f"  {served} served; {len(told)} answered RATE_LIMIT at once by pacing, their turn "
          f"past the deadline{when}, and asked again when told")  # fmt: skip
    print("  calls answered RATE_LIMIT by the provider: "
          + check(f"{label} provider RATE_LIMIT", limited, 0, ""))  # fmt: skip
    print(f"  requests the provider refused (429), a send that came a few ms too close behind "
          f"another on a busy machine, each sent again in its next turn: {fake.refused[key]} "
          f"(not a target: no call failed for it, as the line above says)")  # fmt: skip
    print(f"  calls that failed otherwise: {check(f'{label} other failures', other, 0, '')}")
    print(f"  key use, {len(times)} requests over {span:.1f} s: "
          + check(f"{label} key use", busy, 90, " %", most=False))  # fmt: skip


def paced(answer: dict[str, Any]) -> bool:
    """RATE_LIMIT from pacing itself: the provider was not asked."""
    code, said = answer.get("error_code"), str(answer.get("error", ""))
    return code == "RATE_LIMIT" and "was not asked" in said and bool(answer.get("retry_after"))


def overhead(envs: list[dict[str, str]], label: str) -> None:
    """Part 2 (and 3): one search at a time on the 50-a-second key, pacing on and off."""
    # The cache on, as by default (each query new: a miss, then stored), so that with Redis
    # both sides talk to it, as every call of a machine pointed at Redis does.
    on = [e | {"BRAVE_API_KEY": "fast-key-50-per-second", "IKIGAI_WEB_CACHE_TTL": "300"}
          for e in envs]  # fmt: skip
    off = [e | {"IKIGAI_WEB_RATE_LIMITS": "brave=off"} for e in on]
    call(on[0], "warm up")  # the limit is learned here, and the files are made
    samples: dict[str, list[float]] = {"on": [], "off": []}
    sides = (("on", on), ("off", off))
    for n in range(RUNS):
        # Pairs in turn order, each side first as often: a drift or a warm-up favours neither.
        for name, env in sides if n % 2 else sides[::-1]:
            answer, took = call(env[n % len(env)], f"overhead {label} {name} {n}")
            assert answer.get("success"), answer
            samples[name].append(took)
    on_ms, off_ms = (statistics.median(samples[k]) * 1000 for k in ("on", "off"))
    # The median of the pairs' differences: a call's noise (tens of ms with Redis) is shared
    # by the two calls of a pair, and cancels there, not between two separate medians.
    added = statistics.median(a - b for a, b in zip(samples["on"], samples["off"], strict=True))
    print(f"{label}: one search at a time on a 50 requests/s key, {RUNS} pairs: "
          f"pacing on {on_ms:.1f} ms, off {off_ms:.1f} ms (medians)")  # fmt: skip
    added_ms = added * 1000
    print(f"  pacing adds, median of the pairs: "
          f"{check(f'{label} pacing overhead', added_ms, 5, ' ms')}")  # fmt: skip


def redis_server() -> tuple[subprocess.Popen[bytes], str] | None:
    binary = shutil.which("redis-server")
    if binary is None:
        return None
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    home = tempfile.mkdtemp(prefix="bench-redis-")
    args = ["--port", str(port), "--bind", "127.0.0.1", "--dir", home, "--save", ""]
    process = subprocess.Popen([binary, *args, "--requirepass", "bench-password"],
                               stdout=subprocess.DEVNULL)  # fmt: skip
    for _ in range(500):
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.01)
    return process, f"redis://:bench-password@127.0.0.1:{port}/0"


def main() -> None:
    print(f"bench_pacing on {sys.platform}, {os.cpu_count()} cores")
    fake = Fake()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(fake))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/res/v1/web/search"
    with tempfile.TemporaryDirectory() as tmp:
        base = os.environ | {
            "BRAVE_API_KEY": "slow-key-1-per-second",
            "BRAVE_SEARCH_API_URL": url,
            "IKIGAI_WEB_CACHE_TTL": "0",
            "IKIGAI_WEB_TIMEOUT": str(DEADLINE),
            "XDG_STATE_HOME": f"{tmp}/one-machine",
        }
        base.pop("IKIGAI_WEB_REDIS_URL", None)
        base.pop("IKIGAI_WEB_RATE_LIMITS", None)
        load(fake, [base], "one machine, local files")
        overhead([base], "one machine, local files")
        started = redis_server()
        if started is None:
            print("two machines, one Redis: redis-server is not installed, skipped "
                  "(apt-get install redis-server)")  # fmt: skip
        else:
            process, redis_url = started
            machines = [base | {"XDG_STATE_HOME": f"{tmp}/machine-{n}",
                                "IKIGAI_WEB_REDIS_URL": redis_url} for n in (1, 2)]  # fmt: skip
            try:
                load(fake, machines, "two machines, one Redis")
                overhead(machines, "two machines, one Redis")
                redis_cost(base, machines[0])
            finally:
                process.kill()
                process.wait()
    server.shutdown()


def redis_cost(local: dict[str, str], shared: dict[str, str]) -> None:
    """What Redis costs a call whatever pacing does: its client's import and a connection."""
    envs = {n: e | {"BRAVE_API_KEY": "fast-key-50-per-second"} for n, e in
            (("local", local), ("redis", shared))}  # fmt: skip
    samples: dict[str, list[float]] = {"local": [], "redis": []}
    for n in range(RUNS // 2):
        for name, env in envs.items():
            samples[name].append(call(env, f"cost {name} {n}")[1])
    local_ms, redis_ms = (statistics.median(samples[k]) * 1000 for k in ("local", "redis"))
    print(
        f"  for comparison, a call with its state in local files {local_ms:.1f} ms, in Redis "
        f"{redis_ms:.1f} ms (the redis client's import and a connection; not a target)"
    )


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
