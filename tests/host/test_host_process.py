"""ikigai_web.host.process: a program run with bounded output and time, never hanging its caller."""

from __future__ import annotations

import os
import selectors
import threading
import time

import pytest
from conftest import HANG_GUARD, STALL
from deaths import gone

from ikigai_web.host import process

FOREVER = f"sleep {STALL:g}"  # a program that outlasts every test's guard


def sh(script: str, data: bytes | None = b"", *, timeout: float = 60, limit: int = 1 << 20):
    """`script` run by sh, with a time limit no machine reaches unless the test is about it."""
    return process.run(["sh", "-c", script], data, timeout=timeout, limit=limit)


def test_input_reaches_the_program_and_its_output_comes_back():
    out = sh('read line; printf "got %s" "$line"; echo oops >&2; exit 3', b"hello\n")
    assert out == process.Outcome(3, b"got hello", b"oops\n")


def test_no_input_is_end_of_file():
    assert sh("cat", None).stdout == b""


def test_large_input_and_output_do_not_deadlock():
    data = b"x" * (1 << 20)
    out = sh("cat", data, limit=2 << 20)
    assert out.status == 0
    assert out.stdout == data


def test_a_program_that_ignores_its_input_is_fine():
    out = sh("echo done", b"y" * (1 << 20))
    assert (out.status, out.stdout) == (0, b"done\n")


def test_a_program_past_its_deadline_is_killed_with_its_children(tmp_path):
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    out = sh(f"{FOREVER} & echo $! > {pid_file}; wait", timeout=0.5)
    assert time.monotonic() - started < HANG_GUARD
    assert out.timed_out
    assert out.status is None
    assert gone([int(pid_file.read_text())])


def test_output_past_the_limit_stops_the_program():
    started = time.monotonic()
    out = sh("yes", limit=100_000)
    assert time.monotonic() - started < HANG_GUARD
    assert out.overflowed
    assert not out.timed_out
    assert len(out.stdout) > 100_000


def test_stderr_is_kept_up_to_a_bound_and_drained_beyond():
    out = sh("head -c 300000 /dev/zero >&2; echo fine")
    assert out.status == 0
    assert out.stdout == b"fine\n"
    assert len(out.stderr) == process.STDERR_KEPT


def test_a_grandchild_holding_the_pipes_does_not_hold_the_caller():
    started = time.monotonic()
    out = sh(f"{FOREVER} & echo answered")  # waiting for the pipes to close would time out
    assert time.monotonic() - started < HANG_GUARD
    assert (out.status, out.stdout, out.timed_out) == (0, b"answered\n", False)


@pytest.mark.parametrize("redirect", ["", " >/dev/null 2>&1 </dev/null"])
def test_what_a_program_leaves_running_ends_with_the_call(tmp_path, redirect):
    pid_file = tmp_path / "pid"
    out = sh(f"{FOREVER}{redirect} & echo $! > {pid_file}; echo answered")
    assert (out.status, out.stdout) == (0, b"answered\n")
    assert gone([int(pid_file.read_text())])


def test_a_cancelled_call_stops_the_program_at_once(tmp_path):
    pid_file = tmp_path / "pid"
    cancel = threading.Event()

    def cancel_once_running() -> None:  # the program has written its pid: it runs
        end = time.monotonic() + HANG_GUARD
        while not (pid_file.exists() and pid_file.read_text().strip()):
            if time.monotonic() > end:
                return
            time.sleep(0.01)
        cancel.set()

    threading.Thread(target=cancel_once_running, daemon=True).start()
    started = time.monotonic()
    script = f"echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; {FOREVER}"
    out = process.run(["sh", "-c", script], b"", timeout=60, limit=1000, cancel=cancel)
    assert time.monotonic() - started < HANG_GUARD
    assert (out.status, out.timed_out) == (None, False)
    assert gone([int(pid_file.read_text())])


def test_what_a_program_writes_as_it_exits_is_not_lost(tmp_path, monkeypatch):
    """The program answers and exits just after a wait for its output found none: its answer
    is in the pipe, and must be read (a busy machine lost --schema answers this way)."""
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    waits: list[int] = []

    class AnswerAfterTheWait(selectors.DefaultSelector):
        def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
            ready = super().select(timeout)
            # The program's first wait: held at the gate, it has written nothing yet.
            if not waits and len(process.RUNNING) == 1:
                waits.append(len(ready))
                [proc] = process.RUNNING.values()
                with gate.open("w"):
                    pass  # through the gate: it answers and exits, before the caller looks
                os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)
            return ready

    monkeypatch.setattr(selectors, "DefaultSelector", AnswerAfterTheWait)
    out = process.run(["sh", "-c", f"cat {gate} >/dev/null; echo answered"], None, timeout=60,
                      limit=1000)  # fmt: skip
    assert waits == [0]
    assert (out.status, out.stdout) == (0, b"answered\n")


def test_a_program_that_closes_its_pipes_but_keeps_running_times_out():
    out = sh(f"exec >&- 2>&-; {FOREVER}", timeout=0.5)
    assert out.timed_out


def test_a_signal_is_a_negative_status():
    assert sh("kill -SEGV $$").status == -11


def test_a_missing_program_is_an_os_error(tmp_path):
    with pytest.raises(OSError, match="No such file"):
        process.run([str(tmp_path / "nothing")], None, timeout=1, limit=10)


def test_an_error_while_serving_the_pipes_never_leaves_the_program_running(monkeypatch, tmp_path):
    pid_file = tmp_path / "pid"

    def broken(self):
        while not pid_file.exists():
            time.sleep(0.01)
        raise RuntimeError("a bug")

    monkeypatch.setattr(process._Exchange, "run", broken)
    with pytest.raises(RuntimeError):
        sh(f"echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file}; {FOREVER}")
    assert gone([int(pid_file.read_text())])
