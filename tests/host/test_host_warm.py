"""Warm workers (ikigai_web/host/workers.py, ikigai_web/host/warm.py): a call forked from a warm
parent is what its program would be, under the same deadline, output limit, cancel and kill (issue
42).

The parent runs as its own process, as the MCP server starts it; its entries here are
tests/warm_probe.py's, each also run as a program (`warm_probe.fresh`) to compare with.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import warm_probe
from conftest import HANG_GUARD
from deaths import gone

from ikigai_web.common import procs
from ikigai_web.host import process, warm, workers
from ikigai_web.host.discovery import Tool

if TYPE_CHECKING:
    from collections.abc import Iterator

TESTS = Path(__file__).resolve().parents[1]
# The probes, and the tree under test before any installed copy of it.
SEARCHED = os.pathsep.join((str(TESTS), str(TESTS.parent)))
PROBES = ("report", "exit_with", "sleeper", "chatty", "hog")
ENTRIES = [f"warm_probe:{name}" for name in PROBES]


@pytest.fixture
def probes_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTHONPATH", SEARCHED)
    monkeypatch.setenv("WARM_PROBE_MARK", "the server's environment")


def started(entries: list[str]) -> workers.Warm:
    made = workers.Warm(entries)
    made.start()
    assert made.ready.wait(60), "the warm parent did not get ready in 60 s"
    return made


@pytest.fixture
def parent(probes_importable: None) -> Iterator[workers.Warm]:
    made = started(ENTRIES)
    yield made
    made.close()


def probe(name: str, program: Path | None = None) -> Tool:
    """A tool whose entry is the probe `name`; its program (when no warm parent runs it)
    is `program`, or a file that does not exist, so a call that should run warm fails loudly
    if it does not."""
    path = program or Path("/nonexistent") / f"{name}-tool"
    return Tool(name, path, "user", entry=f"warm_probe:{name}")


def run(
    made: workers.Warm | None,
    tool: Tool,
    asked: dict[str, Any] | None = None,
    **options: Any,
) -> process.Outcome:
    start = made.starter(tool) if made is not None else None
    data = json.dumps(asked or {}).encode()
    return process.run([str(tool.path)], data, timeout=options.pop("timeout", 30),
                       limit=options.pop("limit", 1 << 20), tied=True, start=start,
                       **options)  # fmt: skip


def fresh(name: str, asked: dict[str, Any] | None = None) -> process.Outcome:
    """The probe run as its console script would run it, as a program."""
    data = json.dumps(asked or {}).encode()
    command = warm_probe.fresh(f"warm_probe:{name}")
    return process.run(command, data, timeout=30, limit=1 << 20)


def report(made: workers.Warm, asked: dict[str, Any] | None = None) -> dict[str, Any]:
    outcome = run(made, probe("report"), asked)
    assert outcome.status == 0, outcome
    answer: dict[str, Any] = json.loads(outcome.stdout)
    return answer


def test_a_call_is_a_child_of_the_parent_set_up_as_a_fresh_process(parent):
    state = report(parent, {"hello": "world"})
    program = json.loads(fresh("report", {"hello": "world"}).stdout)
    assert parent.parent is not None
    assert state["ppid"] == parent.parent.pid
    assert state["pgid"] == state["sid"] == state["pid"]  # a session and group of its own
    assert state["pdeathsig"] == signal.SIGKILL
    assert state["asked"] == {"hello": "world"}
    assert state["argv"] == ["/nonexistent/report-tool"]
    for same in ("inherited", "handlers", "environ"):
        assert state[same] == program[same], same
    assert state["inherited"] == [0, 1, 2]
    assert state["environ"] == "the server's environment"
    assert state["data_limit"] <= state["vm_data"] + warm.MEMORY_CAP


def test_each_call_has_a_random_state_of_its_own(parent):
    drawn = {report(parent)["random"] for _ in range(3)}
    assert len(drawn) == 3


@pytest.mark.parametrize(
    "how", [0, 3, 256, -1, None, "text to say", "raise", "interrupt", "segv", "atexit"]
)
def test_a_call_exits_as_its_program_would(parent, how):
    asked = {"how": how}
    got, expected = run(parent, probe("exit_with"), asked), fresh("exit_with", asked)
    assert (got.status, got.stdout) == (expected.status, expected.stdout)
    # A traceback's first frame is the console script's, or the warm worker's: the rest is
    # the tool's own.
    assert got.stderr.splitlines()[-1:] == expected.stderr.splitlines()[-1:]
    assert got.stderr.startswith(b"some error output\n")


def test_calls_at_once_each_have_a_process_of_their_own(parent):
    states: list[dict[str, Any]] = []
    callers = [threading.Thread(target=lambda n=n: states.append(report(parent, {"n": n})))
               for n in range(8)]  # fmt: skip
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join(60)
    assert sorted(state["asked"]["n"] for state in states) == list(range(8))
    assert len({state["pid"] for state in states}) == 8


def test_a_call_past_its_deadline_is_killed_with_what_it_started(parent, tmp_path):
    pids = tmp_path / "pids"
    outcome = run(parent, probe("sleeper"), {"pids": str(pids)}, timeout=3)
    assert outcome.timed_out
    assert gone(int(pid) for pid in pids.read_text().split())


def test_what_a_call_leaves_running_ends_with_it(parent, tmp_path):
    pids = tmp_path / "pids"
    outcome = run(parent, probe("sleeper"), {"pids": str(pids), "leave": True})
    assert (outcome.status, outcome.stdout) == (0, b'{"success": true}\n')
    assert gone(int(pid) for pid in pids.read_text().split())


def test_output_past_the_limit_stops_the_call(parent):
    outcome = run(parent, probe("chatty"), limit=100_000)
    assert outcome.overflowed
    assert outcome.status is None


def test_a_cancelled_call_stops_at_once(parent, tmp_path):
    pids = tmp_path / "pids"
    cancel = threading.Event()
    outcomes: list[process.Outcome] = []
    caller = threading.Thread(target=lambda: outcomes.append(
        run(parent, probe("sleeper"), {"pids": str(pids)}, timeout=60, cancel=cancel)))  # fmt: skip
    caller.start()
    running = _pids(pids)
    cancel.set()
    caller.join(30)
    assert outcomes[0].status is None
    assert not outcomes[0].timed_out
    assert gone(running)


def test_a_call_past_its_memory_cap_fails(parent):
    outcome = run(parent, probe("hog"))
    assert outcome.status == 1
    assert outcome.stderr.rstrip().endswith(b"MemoryError")


def test_what_a_call_loaded_is_loaded_for_the_calls_after(parent):
    """A module it imported, a regular expression it compiled: the parent learns them."""
    module = next(m for m in ("colorsys", "wave", "sndhdr", "plistlib") if m not in sys.modules)
    asked = {"module": module, "pattern": f"a pattern for {os.getpid()} [a-z]+"}
    first = report(parent, asked)
    assert (first["loaded"], first["compiled"]) == (False, False)
    end = time.monotonic() + 30
    while not all((state := report(parent, asked))[key] for key in ("loaded", "compiled")):
        assert time.monotonic() < end, f"the warm parent never learned: {state}"


def test_stop_all_ends_warm_calls_and_the_parent(parent, tmp_path, monkeypatch):
    monkeypatch.setattr(process, "_STOPPING", threading.Event())
    pids = tmp_path / "pids"
    outcomes: list[process.Outcome] = []
    caller = threading.Thread(target=lambda: outcomes.append(
        run(parent, probe("sleeper"), {"pids": str(pids)}, timeout=60)))  # fmt: skip
    caller.start()
    running = _pids(pids)
    assert parent.parent is not None
    process.stop_all()
    caller.join(30)
    assert outcomes
    assert outcomes[0].status is not None
    assert gone([*running, parent.parent.pid])


def test_a_parent_that_dies_ends_its_calls_and_calls_run_as_programs_until_it_is_back(
    parent, tmp_path, fake_tool
):
    pids = tmp_path / "pids"
    outcomes: list[process.Outcome] = []
    caller = threading.Thread(target=lambda: outcomes.append(
        run(parent, probe("sleeper"), {"pids": str(pids)}, timeout=60)))  # fmt: skip
    caller.start()
    running = _pids(pids)
    first = parent.parent
    assert first is not None
    os.kill(first.pid, signal.SIGKILL)
    caller.join(30)
    assert outcomes[0].status == -signal.SIGKILL
    assert gone(running)
    program = fake_tool(tmp_path / "bin", "report-tool")  # answers {"success": true, "got": ...}
    end = time.monotonic() + 30
    seen = set()
    while "warm" not in seen:  # programs while it is down (if the test catches it), then warm
        answer = json.loads(run(parent, probe("report", program), {"a": 1}).stdout)
        seen.add("program" if "got" in answer else "warm")
        assert time.monotonic() < end, "the warm parent was not started again"
    assert parent.parent is not first


def test_without_a_ready_parent_calls_run_as_programs(probes_importable, tmp_path, fake_tool):
    program = fake_tool(tmp_path, "report-tool")
    idle = workers.Warm(ENTRIES)  # never started
    outcome = run(idle, probe("report", program), {"a": 1})
    assert json.loads(outcome.stdout) == {"success": True, "got": {"a": 1}}
    assert idle.starter(Tool("other", program, "user")) is None  # not an own tool


def test_a_parent_that_does_not_answer_is_replaced(parent, tmp_path, fake_tool, monkeypatch):
    monkeypatch.setattr(workers, "PID_WAIT", 0.5)
    stuck = parent.parent
    assert stuck is not None
    os.kill(stuck.pid, signal.SIGSTOP)
    program = fake_tool(tmp_path, "report-tool")
    outcome = run(parent, probe("report", program), {"a": 1})
    assert json.loads(outcome.stdout) == {"success": True, "got": {"a": 1}}
    assert gone([stuck.pid])
    end = time.monotonic() + 30
    while parent.parent is stuck or not parent.ready.is_set():
        assert time.monotonic() < end, "no new warm parent"
        time.sleep(0.05)
    assert report(parent)["ppid"] == parent.parent.pid


def test_a_parent_that_cannot_start_leaves_calls_to_programs(monkeypatch, capsys):
    def refuse(*_: object, **__: object) -> None:
        raise OSError(13, "Permission denied")

    monkeypatch.setattr(subprocess, "Popen", refuse)
    monkeypatch.setattr(workers, "FIRST_PAUSE", 0.01)
    made = workers.Warm(["ikigai_web.tools.web_fetch:main"])
    made.start()
    end = time.monotonic() + 10
    while "could not be started: Permission denied" not in capsys.readouterr().err:
        assert time.monotonic() < end
        time.sleep(0.02)
    made.close()
    assert not made.ready.is_set()


def test_the_parent_and_its_calls_die_with_their_caller_killed_outright(tmp_path):
    """The kernel kills the parent when the thread that started it ends, and each child
    with the parent; what a call started itself is the guardian's (ikigai_web/host/guardian.py)."""
    pid_file = tmp_path / "pids"
    script = (
        "import json\n"
        "from ikigai_web.host import process, workers\n"
        "from ikigai_web.host.discovery import Tool\n"
        "made = workers.Warm(['warm_probe:sleeper']); made.start(); made.ready.wait(60)\n"
        "tool = Tool('sleeper', '/nonexistent', 'user', entry='warm_probe:sleeper')\n"
        f"data = json.dumps({{'pids': {str(pid_file)!r}}}).encode()\n"
        "process.run(['x'], data, timeout=60, limit=100, tied=True, start=made.starter(tool))\n"
    )
    env = os.environ | {"PYTHONPATH": SEARCHED}
    caller = subprocess.Popen([sys.executable, "-c", script], cwd=TESTS.parent, env=env)
    running: list[int] = []
    try:
        running = _pids(pid_file, wait=60)  # the call and its grandchild
        warm_parent = _parent_of(running[0])
        caller.kill()
        caller.wait()
        assert gone([warm_parent, running[0]])
    finally:
        caller.kill()
        caller.wait()
        for pid in running:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_parent_that_setpriv_could_not_tie_still_dies_with_its_caller(tmp_path):
    """Where setpriv is missing (or too old), the warm parent sets its parent-death signal
    itself: it never lingers after the server, killed outright, nor after a server that died
    before it could set it."""
    pid_file = tmp_path / "pid"
    script = (
        "import os, sys, time\n"
        "from ikigai_web.host import process, workers\n"
        "process._tie = lambda: ()  # no setpriv here\n"
        "made = workers.Warm(['warm_probe:report']); made.start(); made.ready.wait(60)\n"
        f"open({str(pid_file)!r}, 'w').write(f'{{made.parent.pid}}\\n')\n"
        "time.sleep(60)\n"
    )
    env = os.environ | {"PYTHONPATH": SEARCHED}
    caller = subprocess.Popen([sys.executable, "-c", script], cwd=TESTS.parent, env=env)
    running: list[int] = []
    try:
        running = _pids(pid_file, wait=60)
        assert b"setpriv" not in Path(f"/proc/{running[0]}/cmdline").read_bytes()
        caller.kill()
        caller.wait()
        assert gone(running), "the warm parent outlived its caller"
    finally:
        caller.kill()
        caller.wait()
        for pid in running:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def test_a_parent_whose_server_is_already_gone_ends_at_once(probes_importable):
    """A server that died while its warm parent was being started never signals it (a
    parent-death signal set after the death never comes): the parent sees that its parent is
    not the server it was started for, and ends before importing anything or answering."""
    import socket

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with theirs:
        orphan = subprocess.Popen(  # its parent is this test, not the "server" it names
            [sys.executable, "-P", "-m", "ikigai_web.host.warm", "--server", "1",
             "warm_probe:report"], stdin=theirs.fileno(), cwd=TESTS.parent)  # fmt: skip
    try:
        assert orphan.wait(HANG_GUARD) == 0
        mine.setblocking(False)
        assert mine.recv(64) == b""  # it ended without saying it was ready
    finally:
        orphan.kill()
        orphan.wait()
        mine.close()


def _pids(path: Path, wait: float = 30) -> list[int]:
    end = time.monotonic() + wait
    while not (path.exists() and path.read_text().endswith("\n")):
        assert time.monotonic() < end, f"no pids in {path} within {wait} s"
        time.sleep(0.02)
    return [int(pid) for pid in path.read_text().split()]


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii")
    return int(stat.rpartition(")")[2].split()[1])


# --- the parts of the warm parent that run in any process ---------------------------------


def test_the_memory_cap_is_added_to_what_a_child_holds_and_never_raises_a_limit():
    cap = warm.memory_cap()
    infinite = resource.RLIM_INFINITY
    assert procs.data_limit(100, cap, (infinite, infinite)) == (100 + cap, infinite)
    assert procs.data_limit(100, cap, (50, infinite)) == (50, infinite)
    assert procs.data_limit(100, cap, (infinite, 70)) == (70, 70)


def test_the_warm_cap_is_the_servers_memory_setting(monkeypatch):
    assert warm.memory_cap() == warm.MEMORY_CAP  # the default: 1,024 MiB
    monkeypatch.setenv("IKIGAI_WEB_MAX_MEMORY_MB", "2048")
    assert warm.memory_cap() == 2048 << 20
    monkeypatch.setenv("IKIGAI_WEB_MAX_MEMORY_MB", "lots")
    assert warm.memory_cap() == warm.MEMORY_CAP


def test_the_data_size_comes_from_proc_status():
    assert procs.data_used("Name:\tx\nVmData:\t  1234 kB\nVmStk:\t 1 kB\n") == 1234 * 1024
    assert procs.data_used("Name:\tx\n") is None
    assert procs.data_used(Path("/proc/self/status").read_text()) is not None


def test_the_pages_copied_ahead_are_the_private_writable_ones():
    maps = (
        "5600-5700 rw-p 00000000 00:00 0                          [heap]\n"
        "7f00-7f10 r--p 00000000 08:01 123                        /usr/lib/libc.so.6\n"
        "7f10-7f20 rw-p 00010000 08:01 123                        /usr/lib/libc.so.6\n"
        "7f20-7f30 rw-s 00000000 00:01 9                          /dev/shm/x\n"
        "7f30-7f40 rw-p 00000000 00:00 0 \n"
        "7ffc-7ffd rw-p 00000000 00:00 0                          [stack]\n"
        "ffff-10000 r-xp 00000000 00:00 0                         [vsyscall]\n"
    )
    assert warm.writable_ranges(maps) == [(0x5600, 0x5700), (0x7F10, 0x7F20), (0x7F30, 0x7F40)]
    assert warm.writable_ranges(Path("/proc/self/maps").read_text())


def test_exit_statuses_are_the_interpreters(capsys):
    assert [warm.exit_status(code) for code in (None, 0, 3, 256, -1, True)] == [0, 0, 3, 0, 255, 1]
    assert warm.exit_status("bad input") == 1
    assert capsys.readouterr().err == "bad input\n"


def test_a_lesson_is_what_a_process_loaded_since_a_point(monkeypatch):
    before = warm.known()
    monkeypatch.setitem(sys.modules, "a_module_made_here", sys)
    re.compile("a pattern compiled here [0-9]+", re.IGNORECASE)
    taught = json.loads(warm.lessons(before))
    assert ["module", "a_module_made_here"] in taught
    assert ["pattern", "a pattern compiled here [0-9]+", int(re.IGNORECASE)] in taught
    assert all(tuple(lesson) not in before for lesson in taught)


def test_only_new_well_formed_lessons_never_tried_are_taken():
    new = ["module", "not.a.module.yet"]
    taught = [["module", "json"], ["module", "__main__"], new, new, ["pattern", "x+y", 0],
              ["pattern", "x", "0"], ["module"], ["virus", "x"], "text",
              ["module", "tried"]]  # fmt: skip
    assert warm.unknown(json.dumps(taught).encode(), {("module", "tried")}) == [
        ("module", "not.a.module.yet"),
        ("pattern", "x+y", 0),
    ]
    assert warm.unknown(b"not json", set()) == []
    assert warm.unknown(b'{"a": 1}', set()) == []


def test_a_lesson_taken_loads_what_it_names():
    pattern = ("pattern", "a lesson's pattern [a-z]{3}", int(re.MULTILINE))
    assert warm.learn(pattern) == 1
    assert pattern in warm.known()
    assert warm.learn(("pattern", "(unclosed", 0)) == 0
    assert warm.learn(("module", "no_such_module_here")) == 0


def test_preloading_skips_what_does_not_import():
    assert warm.preload(["json", "no_such_module_here"]) == 0


def test_fresh_handlers_are_this_interpreters():
    handlers = warm.fresh_handlers()
    assert handlers[signal.SIGINT] is signal.getsignal(signal.SIGINT)
    assert signal.SIGKILL in handlers


def test_a_report_socket_the_server_closed_is_no_longer_waited_on():
    import socket

    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with ours, theirs:
        assert warm._waiting(ours.fileno())
        theirs.close()
        assert not warm._waiting(ours.fileno())


def test_a_call_without_input_reads_end_of_file(parent):
    outcome = process.run(["report-tool"], None, timeout=30, limit=1 << 20, tied=True,
                          start=parent.starter(probe("report")))  # fmt: skip
    assert outcome.status == 0
    assert json.loads(outcome.stdout)["asked"] == {}


def test_a_parent_said_ready_but_gone_leaves_calls_to_programs(probes_importable, tmp_path,
                                                               fake_tool):  # fmt: skip
    program = fake_tool(tmp_path, "report-tool")
    gone_already = workers.Warm(ENTRIES)
    gone_already.ready.set()  # as between its death and the server hearing of it
    outcome = run(gone_already, probe("report", program), {"a": 1})
    assert json.loads(outcome.stdout) == {"success": True, "got": {"a": 1}}


def test_a_parent_not_ready_in_time_is_killed_and_started_again(
    probes_importable, monkeypatch, capsys
):
    monkeypatch.setattr(workers, "READY_WAIT", 0.0)
    monkeypatch.setattr(workers, "FIRST_PAUSE", 0.01)
    made = workers.Warm(ENTRIES)
    made.start()
    end, said = time.monotonic() + 30, ""
    while said.count("the warm worker ended (-9)") < 2:
        assert time.monotonic() < end, "the parent was not killed and started again"
        time.sleep(0.02)
        said += capsys.readouterr().err
    made.close()
    assert not made.ready.is_set()


def test_a_parent_started_as_the_workers_close_is_killed(probes_importable, monkeypatch):
    made = workers.Warm(ENTRIES)
    real = subprocess.Popen

    def closed_meanwhile(*args: Any, **kwargs: Any) -> Any:
        made.closed.set()  # `close` ran before this parent was known to it
        return real(*args, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", closed_meanwhile)
    assert made._serve() == -signal.SIGKILL
    assert not made.ready.is_set()


# --- a warm call's report socket, in this process ------------------------------------------


@pytest.fixture
def reports() -> Iterator[tuple[Any, Any]]:
    import socket

    mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    yield mine, theirs
    mine.close()
    theirs.close()


def answered(mine: Any, first: bytes | None) -> workers.WarmCall:
    ours, theirs = workers._pipes(stdin=True)
    warm._close(theirs)
    return workers.WarmCall._answered(mine, first, ours)


def test_a_call_is_its_childs_pid_then_its_status(reports):
    mine, theirs = reports
    for message in (b"pid 4242", b"pid 7", b"exit 3", b"reaped 4242 -9"):
        theirs.send(message)
    call = answered(mine, workers.next_message(mine, 5))
    assert call.pid == 4242
    assert call.stdin is not None
    assert call.wait(5) == 3  # the child's own word, before the parent's
    assert (call.poll(), call.returncode) == (3, 3)
    assert mine.fileno() == -1  # closed once the status is known
    for stream in (call.stdin, call.stdout, call.stderr):
        stream.close()


def test_a_call_whose_parent_is_gone_was_killed(reports):
    mine, theirs = reports
    theirs.send(b"pid 4242")
    call = answered(mine, workers.next_message(mine, 5))
    assert call.poll() is None
    theirs.close()
    assert call.wait(5) == -signal.SIGKILL


def test_a_call_whose_status_does_not_come(reports, monkeypatch):
    mine, theirs = reports
    theirs.send(b"pid 4242")
    call = answered(mine, workers.next_message(mine, 5))
    with pytest.raises(subprocess.TimeoutExpired):
        call.wait(0.01)
    monkeypatch.setattr(workers, "REAPED_WAIT", 0.01)
    assert call.wait() == -signal.SIGKILL  # after a kill: the parent is stuck


@pytest.mark.parametrize(
    ("first", "error"),
    [(None, TimeoutError), (b"", OSError), (b"reaped 4242 1", OSError), (b"pid", OSError)],
)
def test_no_call_runs_unless_its_child_says_its_pid_first(reports, first, error):
    mine, _ = reports
    with pytest.raises(error):
        answered(mine, first)


def test_pipes_that_cannot_all_be_made_leave_none_open(monkeypatch):
    made: list[int] = []
    real = os.pipe

    def pipe() -> tuple[int, int]:
        if made:
            raise OSError(24, "Too many open files")
        made.extend(real())
        return made[0], made[1]

    monkeypatch.setattr(os, "pipe", pipe)
    with pytest.raises(OSError, match="Too many"):
        workers._pipes(stdin=True)
    for fd in made:
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(fd)


def test_a_thread_makes_a_process_unfit_to_fork():
    done = threading.Event()
    thread = threading.Thread(target=done.wait)
    thread.start()
    try:
        assert warm.threaded()
    finally:
        done.set()
        thread.join()


def test_a_handler_set_from_c_is_not_restored(monkeypatch):
    real = signal.getsignal
    monkeypatch.setattr(signal, "getsignal", lambda s: None if s == signal.SIGUSR2 else real(s))
    assert signal.SIGUSR2 not in warm.fresh_handlers()
