"""The MCP server's parts that a process test cannot measure: its reading of malformed lines,
its guardian, and `stop_all`, in this process (issue 20, section 7)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import HANG_GUARD
from deaths import alive, gone

from ikigai_web.common.procs import descendants
from ikigai_web.host import guardian, process
from ikigai_web.host.mcp_server import MAX_LINE, _LineReader, malformed

if TYPE_CHECKING:
    from collections.abc import Callable


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("", ""),
        ("   \n", ""),
        ('{"jsonrpc": "2.0", "id": 1, "method": "ping"}', None),
        ("nope", {"id": None, "code": -32700}),
        ('{"jsonrpc": "2.0", "id": "a", "method": 5}', {"id": "a", "code": -32600}),
        ('{"jsonrpc": "2.0", "id": true}', {"id": None, "code": -32600}),
        # Ids MCP does not allow: the SDK would take these for notifications, unanswered.
        ('{"jsonrpc": "2.0", "id": null, "method": "ping"}', {"id": None, "code": -32600}),
        ('{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', {"id": None, "code": -32600}),
        ('{"jsonrpc": "2.0", "id": false, "method": "ping"}', {"id": None, "code": -32600}),
        ('{"jsonrpc": "2.0", "id": [1], "method": "ping"}', {"id": None, "code": -32600}),
        ('{"jsonrpc": "2.0", "method": 5}', ""),  # a notification, bad or not: no answer
        ("[1, 2, 3]", {"id": None, "code": -32600}),
        ("[" * 5000 + "]" * 5000, {"id": None, "code": -32700}),
    ],
)
def test_malformed_says_what_to_answer(line, expected):
    got = malformed(line)
    if expected is None or expected == "":
        assert got == expected
        return
    assert got is not None
    answer = json.loads(got)
    assert answer["jsonrpc"] == "2.0"
    assert answer["id"] == expected["id"]
    assert answer["error"]["code"] == expected["code"]


def test_the_line_reader_cuts_an_endless_line_and_goes_on():
    data = b'{"a": 1}\n' + b"x" * (MAX_LINE + 10) + b"\n" + b"\xff\xfe\n"
    reader = _LineReader(io.BufferedReader(io.BytesIO(data)))
    assert reader.next() == '{"a": 1}\n'
    too_long = reader.next()
    assert too_long is not None
    assert json.loads(malformed(too_long) or "{}")["error"]["code"] == -32700
    assert reader.next() == "\ufffd\ufffd\n"
    assert reader.next() is None


def wait_for(condition: Callable[[], bool], what: str) -> None:
    """Until `condition` holds, as soon as it does; fails past HANG_GUARD."""
    end = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < end, f"{what}: not within {HANG_GUARD:g} s"
        time.sleep(0.02)


@pytest.mark.parametrize("unheard", [False, True], ids=["no-line", "line-nobody-reads"])
def test_the_guardian_kills_what_it_last_saw_when_the_pipe_closes(unheard, monkeypatch):
    tree = subprocess.Popen(["sh", "-c", "setsid sleep 60 & sleep 60"])
    read, write = os.pipe()
    ready = None
    if unheard:  # a server that stopped waiting: the guardian's line has nowhere to go
        said, ready = os.pipe()
        os.close(said)
    scans: list[list[int]] = []  # what each of the guardian's looks found

    def scan(pid: int) -> list[int]:
        scans.append(descendants(pid))
        return scans[-1]

    monkeypatch.setattr(guardian, "descendants", scan)
    watcher = threading.Thread(target=guardian.watch, args=(tree.pid, read, ready))
    watcher.start()
    try:
        wait_for(lambda: len(descendants(tree.pid)) == 2, "the two sleeps started")
        below = descendants(tree.pid)
        # Noted: a look that found both ended, and the next began (a note is kept between
        # looks, and one taken as the pipe closes may not be: see the test below).
        wait_for(lambda: any(set(below) <= set(found) for found in scans[:-1]), "noted")
        os.close(write)  # the "server" is gone
        watcher.join(HANG_GUARD)
        assert gone(below)
    finally:
        tree.kill()
        tree.wait()
        os.close(read)


def test_a_note_taken_as_the_server_dies_does_not_replace_the_last_one(monkeypatch):
    child = subprocess.Popen(["sleep", "30"])
    read, write = os.pipe()
    scans: list[int] = []

    def scan(pid: int) -> list[int]:
        scans.append(pid)
        if len(scans) < 3:
            return [child.pid]
        os.close(write)  # the server dies during this scan, its child handed on already
        return []

    monkeypatch.setattr(guardian, "descendants", scan)
    try:
        guardian.watch(os.getpid(), read)
        assert gone([child.pid])
    finally:
        child.kill()
        child.wait()
        os.close(read)


@pytest.fixture
def fresh_tie():
    process._tie.cache_clear()
    yield
    process._tie.cache_clear()


@pytest.mark.skipif(shutil.which("setpriv") is None, reason="needs util-linux's setpriv")
def test_a_tied_program_dies_with_its_caller_even_by_sigkill(tmp_path, fresh_tie):
    pid_file = tmp_path / "pid"
    script = (
        "from ikigai_web.host import process\n"
        f"process.run(['sh', '-c', 'echo $$ > {pid_file}; exec sleep 60'], None, timeout=60,"
        " limit=100, tied=True)"
    )
    caller = subprocess.Popen([sys.executable, "-c", script], cwd=Path(__file__).parents[2])
    tool = 0
    try:
        wait_for(lambda: pid_file.exists() and bool(pid_file.read_text().strip()), "started")
        tool = int(pid_file.read_text())
        caller.kill()  # no handler runs: only the kernel can end the tool now
        caller.wait()
        assert gone([tool])
    finally:
        caller.kill()
        caller.wait()
        if tool:
            with contextlib.suppress(OSError):
                os.kill(tool, signal.SIGKILL)


@pytest.mark.parametrize(
    "setpriv",
    [None, "/bin/false", "not-executable"],
    ids=["missing", "refuses-the-option", "cannot-start"],
)
def test_a_program_runs_untied_where_setpriv_cannot_tie_it(
    tmp_path, monkeypatch, fresh_tie, setpriv
):
    if setpriv == "not-executable":
        setpriv = str(tmp_path / "setpriv")
        Path(setpriv).write_text("not a program")
    monkeypatch.setattr(shutil, "which", lambda _name: setpriv)
    outcome = process.run(["sh", "-c", "echo ran"], None, timeout=60, limit=100, tied=True)
    assert (outcome.status, outcome.stdout) == (0, b"ran\n")
    assert process._tie() == ()


def test_stop_all_ends_running_programs_and_what_they_started(monkeypatch):
    monkeypatch.setattr(process, "_STOPPING", threading.Event())
    outcomes: list[process.Outcome] = []
    script = "setsid sleep 120 & echo started; sleep 120"
    runner = threading.Thread(
        target=lambda: outcomes.append(
            process.run(["sh", "-c", script], None, timeout=60, limit=1000, tied=True)
        )
    )
    runner.start()
    wait_for(lambda: any(len(descendants(pid)) == 2 for pid in list(process.RUNNING)), "run")
    [sh] = list(process.RUNNING)
    below = [sh, *descendants(sh)]  # sh and its two sleeps
    process.stop_all()
    runner.join(HANG_GUARD)
    assert outcomes
    assert outcomes[0].status is not None
    assert gone(below), [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in below if alive(pid)]
    with pytest.raises(OSError, match="shutting down"):
        process.run(["true"], None, timeout=1, limit=10)


def test_adopting_orphans_is_possible_here():
    """In a process of its own: this one must not become every orphan's parent."""
    code = "from ikigai_web.host.process import adopt_orphans; print(adopt_orphans())"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() in ("True", "False")


def test_the_guardian_says_that_it_watches_before_its_first_look():
    read, write = os.pipe()
    said, ready = os.pipe()
    watcher = threading.Thread(target=guardian.watch, args=(os.getpid(), read, ready))
    watcher.start()
    try:
        assert select.select([said], [], [], HANG_GUARD)[0] == [said]
        assert os.read(said, 2) == b"\n"
        assert os.read(said, 1) == b""  # and closed
    finally:
        os.close(write)
        watcher.join(HANG_GUARD)
        os.close(read)
        os.close(said)
    assert not watcher.is_alive()


@pytest.mark.parametrize(
    ("program", "wait", "watching"),
    [("echo", HANG_GUARD, True), ("sleep 120", 0.5, False), ("true", HANG_GUARD, False),
     ("echo nope", HANG_GUARD, False)],
)  # fmt: skip
def test_the_server_hears_when_its_guardian_watches(program, wait, watching):
    """Only the silent guardian is given a short wait, which only its silence can fill; the
    others answer or end, however long they take to start."""
    guardian_process = subprocess.Popen(
        ["sh", "-c", program], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert process.guardian_watching(guardian_process, wait=wait) is watching
        assert guardian_process.stdout is not None
        assert guardian_process.stdout.closed
    finally:
        guardian_process.kill()
        guardian_process.wait()
        assert guardian_process.stdin is not None
        guardian_process.stdin.close()


def test_an_adopted_orphan_is_reaped_and_an_own_child_is_left_to_its_owner():
    """What the MCP server's reaper does (process.reap_adopted): a child none of its own is
    reaped; its own children keep their status for whoever waits for them."""
    from ikigai_web.common.procs import zombies

    mine = process.own(lambda: subprocess.Popen(["true"]))
    orphan = os.fork()
    if orphan == 0:  # pragma: no cover - the child
        os._exit(7)
    end = time.monotonic() + HANG_GUARD
    while not {orphan, mine.pid} <= set(zombies(os.getpid())):
        assert time.monotonic() < end, "the children did not end"
        time.sleep(0.01)
    assert process.reap_orphans() == [orphan]
    assert orphan not in zombies(os.getpid())
    assert mine.wait() == 0  # its own status, not the one a stolen reap leaves
    assert process.reap_orphans() == []
