"""`web-tools mcp` under load, fed malformed lines, and stopped by signals (issue 20, section 7).

The server runs as a process, as an MCP client starts it; the tests speak JSON-RPC to it line by
line. Its tools are shell scripts in a trusted project directory: one that hangs, one that
starts a grandchild in a session of its own (setsid) and hangs, one that prints the user's key
on stderr and fails.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG_GUARD
from deaths import alive, gone

from ikigai_web.common.procs import descendants
from ikigai_web.host import trust

BIN = Path(__file__).resolve().parents[2] / ".venv" / "bin"
KEY = "BSA-mcp-stderr-LEAKCANARY-77"
HANG = "sleep 60"  # longer than HANG_GUARD: a test that waited for one fails


class Server:
    """`web-tools mcp` in `root`, its answers collected by id as they arrive."""

    def __init__(self, root: Path, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [str(BIN / "web-tools"), "mcp", "--timeout", "120"],
            cwd=root,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(root / "server.log").open("wb"),
            env=os.environ | {"HOME": str(root / "home")} | (env or {}),
        )
        self.answers: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}})  # fmt: skip
        assert "result" in self.answer(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.answers.put(json.loads(line))

    def send(self, message: Any) -> None:
        self.raw(json.dumps(message).encode() + b"\n")

    def raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def answer(self, ident: Any, wait: float = HANG_GUARD) -> dict[str, Any]:
        end = time.monotonic() + wait
        while (left := end - time.monotonic()) > 0:
            try:
                got = self.answers.get(timeout=left)
            except queue.Empty:
                break
            if got.get("id") == ident:
                return got
        pytest.fail(f"no answer with id {ident!r} within {wait} s")

    def call(self, ident: int, name: str) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                   "params": {"name": name, "arguments": {}}})  # fmt: skip

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(HANG_GUARD)


@pytest.fixture
def project(tmp_path, fake_tool):
    tools = tmp_path / ".ikigai" / "tools"
    pids = tmp_path / "pids"
    pids.mkdir()
    fake_tool(tools, "hang-tool", call=f"echo $$ > {pids}/hang.$$; {HANG}")
    spawn = (f"echo $$ > {pids}/tool; setsid sh -c 'echo $$ > {pids}/grandchild; exec {HANG}' "
             f"& {HANG}")  # fmt: skip
    fake_tool(tools, "spawn-tool", call=spawn)
    fake_tool(tools, "leak-tool", call='echo "key is $BRAVE_API_KEY" >&2; exit 3')
    trust.trust(tmp_path)
    return tmp_path, pids


@pytest.fixture
def server(project):
    root, _ = project
    made = Server(root, {"BRAVE_API_KEY": KEY})
    yield made
    made.close()


def pids_in(directory: Path, count: int, wait: float = HANG_GUARD) -> list[int]:
    end = time.monotonic() + wait
    while time.monotonic() < end:
        files = list(directory.iterdir())
        if len(files) >= count and all(f.read_text().strip() for f in files):
            return [int(f.read_text()) for f in files]
        time.sleep(0.05)
    pytest.fail(f"{count} processes did not start in {wait} s")


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""  # ended meanwhile


def _looked(pid: int) -> tuple[int, bool]:
    """What `pid` has read so far (bytes), and whether it sleeps (in its select, for the
    guardian), read so that a look begun between the two readings is not taken for sleep."""

    def read() -> int:
        text = Path(f"/proc/{pid}/io").read_text()
        return int(text.split("rchar:", 1)[1].split()[0])

    before = read()
    state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    return before, state == "S" and read() == before


def noted_by_the_guardian(server: subprocess.Popen[bytes]) -> None:
    """Until the server's guardian has made a whole look below the server since this call:
    it reads /proc for a look, then sleeps until the next, so a look that began after it was
    seen asleep and has ended with it asleep again is noted. A SIGKILL of the server before
    that could come before any note of a process started just now."""
    [guardian] = [p for p in descendants(server.pid) if b"ikigai_web.host.guardian" in _cmdline(p)]
    end = time.monotonic() + HANG_GUARD
    asleep = looking = None
    while True:
        assert time.monotonic() < end, "the guardian made no look in 30 s"
        read, sleeps = _looked(guardian)
        if asleep is None and sleeps:
            asleep = read
        elif asleep is not None and looking is None and read > asleep:
            looking = read
        elif looking is not None and sleeps:
            return
        time.sleep(0.005)


def test_pings_and_lists_are_answered_with_hundreds_of_calls_in_flight(server, project):
    _, pids = project
    for n in range(200):
        server.call(1000 + n, "hang")
    running = pids_in(pids, 60)  # well past anyio's 40 shared threads
    started = time.monotonic()
    server.send({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert server.answer(1)["result"] == {}
    server.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    names = {t["name"] for t in server.answer(2)["result"]["tools"]}
    assert {"hang", "spawn", "leak"} <= names
    # Not after the hanging calls: behind them, the answers would have waited 60 s for one.
    assert time.monotonic() - started < HANG_GUARD
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(HANG_GUARD)
    assert gone(running)


@pytest.mark.parametrize(
    ("line", "ident", "code"),
    [
        (b"this is not json", None, -32700),
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {"cursor": "\\ud800"}}',
         7, None),
        (b'{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": ' + b'{"a": ' * 300 + b"1"
         + b"}" * 300 + b"}", 8, None),
        (b'{"jsonrpc": "2.0", "id": 9}', 9, -32600),
        (b"[1, 2", None, -32700),
        (b'{"a": ' * 100_000 + b"}" * 100_000, None, -32700),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, -32600),
        (b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/list"}', None, -32600),
    ],
    ids=["not-json", "lone-surrogate", "nested-300", "no-method", "cut-short", "nested-100k",
         "null-id", "float-id"],
)  # fmt: skip
def test_every_malformed_message_is_answered_and_the_server_goes_on(server, line, ident, code):
    server.raw(line + b"\n")
    got = server.answer(ident)
    assert got["jsonrpc"] == "2.0"
    if code is not None:
        assert got["error"]["code"] == code
    else:
        assert "error" in got or "result" in got
    server.send({"jsonrpc": "2.0", "id": 99, "method": "ping"})
    assert server.answer(99)["result"] == {}


def test_a_cancelled_call_stops_its_tool(server, project):
    _, pids = project
    server.call(11, "hang")
    [tool] = pids_in(pids, 1)
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": 11, "reason": "the user gave up"}})  # fmt: skip
    assert gone([tool]), "the tool ran on after its call was cancelled"
    server.send({"jsonrpc": "2.0", "id": 12, "method": "ping"})
    assert server.answer(12)["result"] == {}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_no_process_outlives_the_server(server, project, signum):
    _, pids = project
    server.call(5, "spawn")
    started = pids_in(pids, 2)  # the tool and its grandchild in a session of its own
    assert all(alive(p) for p in started)
    # After SIGKILL the guardian kills what it last saw below the server, and it looks every
    # 0.2 s: a process started in the last instant before a SIGKILL can escape it.
    noted_by_the_guardian(server.proc)
    server.proc.send_signal(signum)
    server.proc.wait(HANG_GUARD)  # SIGINT no longer waits for stdin to close
    assert gone(started), "a tool or what it started outlived the server"


def test_stdin_closing_ends_the_server_and_its_tools(server, project):
    _, pids = project
    server.call(5, "spawn")
    started = pids_in(pids, 2)
    assert server.proc.stdin is not None
    server.proc.stdin.close()
    server.proc.wait(HANG_GUARD)
    assert gone(started)


def test_a_tools_error_output_reaches_the_client_masked(server):
    server.call(6, "leak")
    text = server.answer(6)["result"]["content"][0]["text"]
    assert "key is ***" in text
    assert KEY not in text


# --- warm workers under attack (issue 55): a killed warm parent, hundreds of calls, many at once


WARM_READY = b"own tools run in a warm worker"


def warm_parent(server: Server, root: Path, wait: float = 60) -> int:
    """The pid of the server's warm parent, once it is ready and has forked its spare."""
    end = time.monotonic() + wait
    while True:
        assert time.monotonic() < end, "no warm parent with a spare in time"
        if WARM_READY in (root / "server.log").read_bytes():
            found = [
                p
                for p in descendants(server.proc.pid)
                if b"ikigai_web.host.warm" in _cmdline(p) and _parent(p) == server.proc.pid
            ]
            if found and descendants(found[-1]):
                return found[-1]
        time.sleep(0.05)


def _zombies(pid: int) -> list[int]:
    """The children of `pid` that ended and were not reaped, read from /proc here."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rpartition(")")[2].split()
            if fields[0] == "Z" and fields[1] == str(pid):
                found.append(int(stat.parent.name))
    return found


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[1])
    except OSError:
        return 0


def answers_to(server: Server, idents: range) -> dict[int, dict[str, Any]]:
    """The answers to every one of `idents`, in whatever order they come."""
    found: dict[int, dict[str, Any]] = {}
    end = time.monotonic() + HANG_GUARD
    while len(found) < len(idents):
        try:
            got = server.answers.get(timeout=max(end - time.monotonic(), 0))
        except queue.Empty:
            pytest.fail(f"no answers to {sorted(set(idents) - set(found))} in {HANG_GUARD} s")
        if got.get("id") in idents:
            found[got["id"]] = got
    return found


def fetch_call(server: Server, ident: int, url: str) -> None:
    server.send({"jsonrpc": "2.0", "id": ident, "method": "tools/call",
                 "params": {"name": "web_fetch", "arguments": {"url": url}}})  # fmt: skip


def test_a_killed_warm_parent_leaves_no_zombie_and_calls_go_on(server, project):
    root, _ = project
    killed = warm_parent(server, root)
    orphans = descendants(killed)  # its spare: killed with it, then the server's to reap
    os.kill(killed, signal.SIGKILL)
    end = time.monotonic() + HANG_GUARD
    while _zombies(server.proc.pid) or any(p in orphans for p in descendants(server.proc.pid)):
        assert time.monotonic() < end, f"zombies left under the server: {_zombies(server.proc.pid)}"
        time.sleep(0.05)
    fetch_call(server, 21, "gopher://after.example/")
    assert "gopher://after.example/" in server.answer(21)["result"]["content"][0]["text"]
    assert warm_parent(server, root) != killed  # a new one serves
    assert not _zombies(server.proc.pid)


def _footprint(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    rss = int(status.split("VmRSS:")[1].split()[0]) * 1024
    return {
        "fds": len(list(Path(f"/proc/{pid}/fd").iterdir())),
        "threads": len(list(Path(f"/proc/{pid}/task").iterdir())),
        "children": sum(1 for p in descendants(pid) if _parent(p) == pid),
        "rss": rss,
    }


def test_three_hundred_calls_leave_the_server_as_it_was(server, project):
    root, _ = project
    warm_parent(server, root)
    ident = 1000

    def calls(count: int) -> None:
        nonlocal ident
        for start in range(0, count, 10):  # ten at a time, each answered before the next ten
            batch = range(ident + start, ident + min(start + 10, count))
            for n in batch:
                if n % 3:
                    fetch_call(server, n, f"gopher://call-{n}.example/")
                else:
                    server.call(n, "leak")  # a program: exits 3, its stderr masked
            assert all("result" in got for got in answers_to(server, batch).values())
        ident += count

    calls(50)  # what a first use loads and keeps (lessons learned, pools) is loaded
    time.sleep(1)  # the spare forked again, the lessons taken
    before = _footprint(server.proc.pid)
    calls(250)
    time.sleep(1)
    after = _footprint(server.proc.pid)
    assert after["fds"] <= before["fds"], (before, after)
    assert after["children"] <= before["children"], (before, after)
    assert after["threads"] <= before["threads"] + 4, (before, after)  # anyio's pool may grow
    assert after["rss"] - before["rss"] < 32 << 20, (before, after)
    assert not _zombies(server.proc.pid)


def test_twenty_calls_at_once_each_get_their_own_answer(server, project):
    root, _ = project
    warm_parent(server, root)
    for n in range(20):
        fetch_call(server, 300 + n, f"gopher://host-{n}.example/")
    for ident, got in answers_to(server, range(300, 320)).items():
        text = got["result"]["content"][0]["text"]
        assert f'"gopher://host-{ident - 300}.example/"' in text, (ident, text)
    server.send({"jsonrpc": "2.0", "id": 399, "method": "ping"})
    assert server.answer(399)["result"] == {}
