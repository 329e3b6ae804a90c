"""MCP latency: how soon `web-tools mcp` lists its tools, and web-fetch called through it by the
official MCP SDK's client over stdio, in the server's warm workers and as a program per call
(`--no-warm`), side by side.

Start-up: from starting the server to its answer of `tools/list` (the handshake a client makes
first: `initialize`, `notifications/initialized`, `tools/list`, written as raw JSON-RPC lines so
that the clock holds the server alone), STARTS times on the machine as it is ("quiet") and
STARTS times beside a busy background this script starts and stops itself: two processes per
core spinning the CPU, as many as `make test` runs workers (JOBS = 2 x cores). Some clients give
up on a server that has not listed its tools within a few seconds. Targets: the medians, quiet
within STARTUP_QUIET and busy within STARTUP_BUSY seconds.

Two servers run at once, each serving web_fetch only, with the same cache directory; a loopback
server, a process of its own, serves a small article page (bench_fetch's `article`, about 10 KB
of HTML). Each round
makes, in turn: the same extraction in this process (ikigai_web.tools.web_fetch through
ikigai_web.common.runner, modules loaded: the floor), then through each server an uncached fetch (a
URL not asked for before) and the same URL again, a cached answer. Calls are PAUSE apart, as an
agent's come seconds apart. Targets, on the warm server: a cached answer within 50 ms (median), an
uncached fetch within 1.5x the same extraction in process (the median of the ratios of each
round's pair). The program-per-call figures are shown beside them, without a target.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import anyio
from bench_fetch import article
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from verdict import check, exit_code

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parent.parent
WEB_TOOLS = ROOT / ".venv" / "bin" / "web-tools"
ROUNDS = 25
STARTS = 10
STARTUP_QUIET = 1.5  # seconds, median
STARTUP_BUSY = 4.0
SPINNERS_PER_CORE = 2
HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "bench_mcp", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]  # fmt: skip
WARM_UP = 5
PAUSE = 0.2  # seconds between two calls
READY_WAIT = 60.0
# A machine's keys would change what is served: the start-up is measured without any.
KEY_SUFFIXES = ("_API_KEY", "_ENGINE_ID", "SEARXNG_URL", "SEARXNG_AUTH")
CACHED_TARGET_MS = 50.0
UNCACHED_TARGET = 1.5
PAGE = (
    "<!doctype html><html><head><title>Bench article</title></head><body>"
    "<nav><a href='/'>Home</a> <a href='/about'>About</a></nav><main><article>"
    f"<h1>Bench article</h1>{article(10 * 1024)}</article></main>"
    "<footer>Copyright bench</footer></body></html>"
).encode()


class Page(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        found = self.path.startswith("/article")
        body = PAGE if found else b"not found"
        self.send_response(200 if found else 404)
        self.send_header("Content-Type", "text/html; charset=utf-8" if found else "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: object) -> None:
        pass


def serve() -> None:
    """The page server's own process (in this one it would share the caller's CPU time and
    lock with the in-process extraction): its port on stdout, then until stdin closes."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdout.write(f"{server.server_address[1]}\n")
    sys.stdout.flush()
    sys.stdin.read()


@contextlib.contextmanager
def page_server() -> Iterator[str]:
    """The page's URL, served by a process of its own while the block runs."""
    with subprocess.Popen([sys.executable, __file__, "--serve"], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as server:  # fmt: skip
        assert server.stdout is not None
        assert server.stdin is not None
        port = server.stdout.readline().strip()
        try:
            yield f"http://127.0.0.1:{port}/article.html"
        finally:
            server.stdin.close()


class InProcess:
    """web-fetch's call in this process, as its console script makes it, minus the process."""

    def __init__(self) -> None:
        from ikigai_web.common.runner import Runnable
        from ikigai_web.tools import web_fetch

        self.tool = Runnable(web_fetch.SCHEMA, web_fetch.execute)

    def call(self, url: str) -> float:
        from ikigai_web.common.runner import run

        out = io.BytesIO()
        start = time.perf_counter()
        run(self.tool, [], io.BytesIO(json.dumps({"url": url}).encode()), out)
        took = time.perf_counter() - start
        assert json.loads(out.getvalue())["success"], out.getvalue()[:300]
        return took


async def timed(session: ClientSession, url: str) -> float:
    start = time.perf_counter()
    result = await session.call_tool("web_fetch", {"url": url})
    took = time.perf_counter() - start
    [content] = result.content
    assert isinstance(content, types.TextContent)
    assert not result.is_error, content.text[:300]
    return took


async def connect(stack: AsyncExitStack, env: dict[str, str], log: Path, *args: str) -> Any:
    params = StdioServerParameters(command=str(WEB_TOOLS), args=["mcp", "--only", "web_fetch",
                                   *args], env=env)  # fmt: skip
    errlog = stack.enter_context(log.open("w"))
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    return session


def ready(log: Path) -> None:
    """Wait for the warm server to say its warm worker runs (until then calls are programs)."""
    end = time.monotonic() + READY_WAIT
    while "run in a warm worker" not in log.read_text():
        if time.monotonic() > end:
            raise SystemExit(f"the warm worker was not ready in {READY_WAIT:g} s: {log}")
        time.sleep(0.05)


async def measure(base: str, env: dict[str, str], folder: Path) -> dict[str, list[float]]:
    """Every round's figures, by name."""
    here = InProcess()
    samples: dict[str, list[float]] = {}
    async with AsyncExitStack() as stack:
        servers = {
            "warm": await connect(stack, env, folder / "warm.log"),
            "program": await connect(stack, env, folder / "program.log", "--no-warm"),
        }
        ready(folder / "warm.log")
        for n in range(WARM_UP):  # the warm worker learns what a call imports
            here.call(f"{base}?up={n}")
            for session in servers.values():
                await timed(session, f"{base}?up={n}")
                await anyio.sleep(PAUSE)
        for n in range(ROUNDS):
            samples.setdefault("in process", []).append(here.call(f"{base}?here={n}"))
            for name, session in servers.items():
                url = f"{base}?{name}={n}"
                for kind in ("uncached", "cached"):
                    await anyio.sleep(PAUSE)
                    samples.setdefault(f"{name} {kind}", []).append(await timed(session, url))
    return samples


class Listed(NamedTuple):
    """One start of the server, to its answer of tools/list."""

    seconds: float
    cpu: float  # seconds of CPU the server and everything it started had used by then
    size: int  # bytes of the answer


def cpu_seconds(pid: int) -> float:
    """The CPU time of `pid`, its children reaped so far and its living descendants."""
    from ikigai_web.common.procs import descendants

    ticks = 0
    for index, each in enumerate([pid, *descendants(pid)]):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{each}/stat").read_text().rpartition(")")[2].split()
            ticks += sum(int(f) for f in fields[11 : 15 if index == 0 else 13])
    return ticks / os.sysconf("SC_CLK_TCK")


def listed(argv: list[str], env: dict[str, str]) -> Listed:
    """From starting the server `argv` to its answer of `tools/list`: the time, the CPU it
    took, and the bytes of that answer. The server is then let go (stdin closed) and waited
    for, with all it started, so that nothing of it runs into the next measure."""
    start = time.perf_counter()
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, env=env) as server:  # fmt: skip
        assert server.stdin is not None
        assert server.stdout is not None
        initialize, initialized, listing = (json.dumps(m).encode() + b"\n" for m in HANDSHAKE)
        server.stdin.write(initialize)
        server.stdin.flush()
        server.stdout.readline()
        server.stdin.write(initialized + listing)
        server.stdin.flush()
        answer = server.stdout.readline()
        took = time.perf_counter() - start
        used = cpu_seconds(server.pid)
        assert b'"tools"' in answer, answer[:300]
        server.stdin.close()
        server.wait(READY_WAIT)
    return Listed(took, used, len(answer))


@contextlib.contextmanager
def busy() -> Iterator[int]:
    """The machine kept busy while the block runs: SPINNERS_PER_CORE processes a core, each
    spinning the CPU; how many."""
    count = SPINNERS_PER_CORE * (os.cpu_count() or 1)
    spin = [sys.executable, "-c", "while True: pass"]
    spinners = [subprocess.Popen(spin) for _ in range(count)]
    try:
        time.sleep(0.5)  # under way
        yield count
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def startup(env: dict[str, str]) -> dict[str, list[Listed]]:
    """STARTS starts to the tools' list, quiet and busy, alternating one start of each kind
    so that a change in the machine's own load meets both."""
    argv = [str(WEB_TOOLS), "mcp"]
    starts: dict[str, list[Listed]] = {"quiet": [], "busy": []}
    for _ in range(STARTS):
        starts["quiet"].append(listed(argv, env))
        with busy():
            starts["busy"].append(listed(argv, env))
    return starts


def report_startup(starts: dict[str, list[Listed]]) -> None:
    count = SPINNERS_PER_CORE * (os.cpu_count() or 1)
    size = starts["quiet"][0].size
    print(f"`web-tools mcp` from start to its answer of tools/list ({size:,} bytes, a machine "
          f"without keys), {STARTS} starts each; busy: {count} processes spinning the CPU "
          f"beside it ({SPINNERS_PER_CORE} a core, as `make test` runs its workers):")  # fmt: skip
    for kind, target in (("quiet", STARTUP_QUIET), ("busy", STARTUP_BUSY)):
        seconds = [start.seconds for start in starts[kind]]
        median = check(f"MCP start-up to tools/list ({kind})", statistics.median(seconds),
                       target, " s")  # fmt: skip
        cpu = statistics.median(start.cpu for start in starts[kind])
        print(f"  {kind:5}  median {median}, range {min(seconds):.2f}-{max(seconds):.2f} s; "
              f"CPU used by then {cpu:.2f} s (the server and what it started)")  # fmt: skip


def report(samples: dict[str, list[float]]) -> None:
    ms = {name: statistics.median(values) * 1000 for name, values in samples.items()}
    here = samples["in process"]
    ratio = {
        name: statistics.median(a / b for a, b in zip(samples[f"{name} uncached"], here,
                                                      strict=True))
        for name in ("warm", "program")
    }  # fmt: skip
    print(f"web_fetch through `web-tools mcp` (MCP SDK client, stdio), median of {ROUNDS} rounds,"
          f" a {len(PAGE) / 1024:.0f} KB page on 127.0.0.1:")  # fmt: skip
    cached = check("MCP cached answer (warm)", ms["warm cached"], CACHED_TARGET_MS, " ms")
    uncached = check("MCP uncached fetch (warm) / in process", ratio["warm"], UNCACHED_TARGET)
    print(f"  cached answer, warm workers      {cached}")
    print(f"  cached answer, program per call  {ms['program cached']:.2f} ms")
    print(f"  uncached fetch, in process       {ms['in process']:.2f} ms (the same extraction)")
    print(f"  uncached fetch, warm workers     {ms['warm uncached']:.2f} ms, ratio {uncached}")
    print(f"  uncached fetch, program per call {ms['program uncached']:.2f} ms, ratio "
          f"{ratio['program']:.2f}x")  # fmt: skip


def main() -> None:
    print(f"bench_mcp on {sys.platform}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f} at the start")  # fmt: skip
    with tempfile.TemporaryDirectory() as temp, page_server() as base:
        folder = Path(temp)
        # The servers and this process alike: one cache, loopback allowed, no user settings.
        settings = {"XDG_CACHE_HOME": str(folder / "cache"), "IKIGAI_CONFIG_DIR": str(folder),
                    "IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1", "HOME": str(folder)}  # fmt: skip
        os.environ.update(settings)
        env = {k: v for k, v in os.environ.items() if not k.endswith(KEY_SUFFIXES)}
        starts = startup(env)
        samples = anyio.run(measure, base, dict(os.environ), folder)
    report_startup(starts)
    report(samples)


if __name__ == "__main__":
    if sys.argv[1:] == ["--serve"]:
        serve()
    elif sys.argv[1:] == ["--startup"]:  # the start-up alone
        with tempfile.TemporaryDirectory() as temp:
            clean = {k: v for k, v in os.environ.items() if not k.endswith(KEY_SUFFIXES)}
            env = clean | {"IKIGAI_CONFIG_DIR": temp, "HOME": temp, "XDG_CACHE_HOME": temp}
            report_startup(startup(env))
        sys.exit(exit_code())
    else:
        main()
        sys.exit(exit_code())
