"""ikigai_web.host.calls: every way a tool can answer, as the text a model reads."""

from __future__ import annotations

import json

import pytest

from ikigai_web.host import calls, discovery
from ikigai_web.host.process import Outcome


def answer(stdout: bytes = b"", status: int | None = 0, stderr: bytes = b"", **flags: bool):
    return calls.interpret("x", Outcome(status, stdout, stderr, **flags), 30)


def test_success_is_the_tools_json_verbatim():
    got = answer(b'{"success": true, "results": []}\n')
    assert got == calls.Answer(
        True, '{"success": true, "results": []}', {"success": True, "results": []}
    )


def test_json_without_success_is_a_success():
    assert answer(b'{"anything": 1}').ok


def test_a_failure_gives_the_code_the_message_and_the_instructions():
    event = {"kind": "config_required", "content": "⚠ Configuration Required\n\nset X"}
    result = {"success": False, "error": "x needs a key", "error_code": "AUTH_MISSING"}
    got = answer(json.dumps(result | {"_event": event}).encode())
    assert not got.ok
    assert got.text == "AUTH_MISSING: x needs a key\n\n⚠ Configuration Required\n\nset X"
    assert got.result is not None
    assert got.result["error_code"] == "AUTH_MISSING"


def test_a_failure_without_event_or_code():
    assert answer(b'{"success": false, "error": "nope"}').text == "nope"
    assert answer(b'{"success": false}').text == "x failed without saying why"
    assert answer(b'{"success": false, "error": "e", "_event": []}').text == "e"


def test_unusable_input_is_the_tools_one_line():
    got = answer(status=1, stderr=b"x: missing required field 'query'\n")
    assert got == calls.Answer(False, "x: missing required field 'query'", refused=True)
    assert not answer(status=1, stderr=b"two\nlines\n").refused  # a crash's, not a refusal
    assert not answer(status=2, stderr=b"one line\n").refused


def test_a_crash_shows_the_error_its_traceback_ends_with_and_not_the_traceback():
    trace = b"Traceback (most recent call last):\n" + b"  frame\n" * 500 + b"ValueError: bug\n"
    got = answer(status=1, stderr=trace)
    assert not got.ok
    assert got.text == "x failed: it exited with status 1: ValueError: bug"
    long = answer(status=2, stderr=b"Error: " + b"x" * 5000)
    assert len(long.text) < 600
    assert long.text.endswith("…")


def test_crashes_without_output():
    assert answer(status=3).text == "x failed: it exited with status 3, without an error message."


@pytest.mark.parametrize(
    ("signal", "stderr"),
    [
        (-6, b"memory allocation of 1610612736 bytes failed\n"),
        (-6, b"Fatal Python error: Cannot recover from stack overflow.\nThread 0x1:\n  File x\n"),
        (-9, b""),
        (-11, b"Segmentation fault\n"),
    ],
    ids=["allocator", "stack-overflow", "killed", "crash"],
)
def test_a_program_the_system_ended_is_named_by_what_happened_not_by_its_signal(signal, stderr):
    """Issue 55: an out-of-memory death read "killed by signal SIGABRT", or an allocator's
    own words; the model is told what happened and what to do."""
    got = answer(status=signal, stderr=stderr)
    assert got.text == (
        "x stopped before it answered: it ran out of memory or crashed, and the system ended "
        "it. Try again with a smaller request, or another tool."
    )


def test_time_and_size_limits():
    assert answer(status=None, timed_out=True).text == (
        "x did not answer within 30 s and was stopped."
    )
    assert "more than 65,536 bytes" in answer(status=None, overflowed=True).text


def test_answers_that_are_not_json_objects():
    assert answer(b"").text == "x answered something that is not JSON: ''"
    assert answer(b"hello\n").text == "x answered something that is not JSON: 'hello'"
    assert answer(b"[1, 2]").text == "x answered JSON that is not an object: [1, 2]"


@pytest.mark.parametrize(
    ("outcome", "said"),
    [
        ({"status": None, "timed_out": True}, "x did not answer within 30 s and was stopped"),
        ({"status": None, "overflowed": True}, "more than 65,536 bytes"),
        ({"stdout": b"hello\n"}, "x answered something that is not JSON: 'hello'"),
        ({"stdout": b"[1, 2]"}, "x answered JSON that is not an object: [1, 2]"),
    ],
    ids=["timeout", "too-much", "not-json", "not-an-object"],
)
def test_every_failure_of_the_program_shows_the_last_line_of_its_stderr(outcome, said):
    got = answer(stderr=b"warming up\nconnection refused: 127.0.0.1:9\n", **outcome)
    assert not got.ok
    assert said in got.text
    assert got.text.endswith(": connection refused: 127.0.0.1:9")
    assert "warming up" not in got.text


def test_a_tools_own_failure_needs_no_stderr():
    got = answer(b'{"success": false, "error": "nope"}', stderr=b"debug noise\n")
    assert got.text == "nope"


def test_a_call_pipes_the_arguments(tmp_path, fake_tool):
    path = fake_tool(tmp_path, "x-tool")
    tool = discovery.probe(path, discovery.USER)
    got = calls.call(tool, {"query": "ü"})
    assert got.ok
    assert got.result == {"success": True, "got": {"query": "ü"}}


def test_a_tool_that_cannot_start(tmp_path):
    tool = discovery.Tool("x", tmp_path / "x-tool", discovery.USER)
    assert calls.call(tool, {}).text == "x could not be started (No such file or directory)."
