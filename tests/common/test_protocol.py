"""The protocol runner: --schema, exit-1 cases, failures as JSON, crashes, output budget."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from ikigai_web.common import protocol, runner
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import register_secret

SCHEMA: dict[str, Any] = {
    "name": "demo_tool",
    "description": "demo",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["query"],
    },
}


def echo(call: dict[str, Any], _settings: Any) -> dict[str, Any]:
    return {"success": True, "echo": call}


def invoke(stdin: bytes, execute=echo, argv=(), markdown=None) -> tuple[int, bytes]:
    out = io.BytesIO()
    tool = runner.Runnable(SCHEMA, execute, markdown)
    code = runner.run(tool, list(argv), io.BytesIO(stdin), out)
    return code, out.getvalue()


def test_schema_json_is_compact_utf8_json():
    schema = SCHEMA | {"description": 'quotes " and ünïcode ⚠\n', "x": [1, 2.5, True, None]}
    text = protocol.schema_json(schema)
    assert json.loads(text) == schema
    assert text == json.dumps(schema, ensure_ascii=False, separators=(",", ":"))


def test_schema_json_rejects_non_json_values():
    with pytest.raises(TypeError):
        protocol.schema_json({"name": {1, 2}})


def test_main_answers_schema_and_runs_calls(monkeypatch, capsys):
    monkeypatch.setattr(protocol, "ENDS_PROCESS", False)  # this process goes on
    monkeypatch.setattr("sys.argv", ["demo-tool", "--schema"])
    with pytest.raises(SystemExit) as info:
        protocol.main(SCHEMA, echo)
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    assert json.loads(out) == SCHEMA
    monkeypatch.setattr("sys.argv", ["demo-tool"])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"query": "q"}')))
    with pytest.raises(SystemExit) as info:
        protocol.main(SCHEMA, echo)
    assert info.value.code == 0


_ENDED = """
import atexit, warnings
from ikigai_web.common import protocol

class Torn:
    def __del__(self):
        print("torn down")

kept = Torn()
atexit.register(lambda: print("atexit ran"))
atexit.register(lambda: warnings.warn("a thread's late words", stacklevel=1))
schema = {"name": "demo", "parameters": {"type": "object", "properties": {}}}
protocol.main(schema, lambda call, settings: {"ok": True})
"""


@pytest.mark.parametrize(
    ("stdin", "code", "stdout"),
    [(b"{}", 0, [b'{"ok":true}', b"atexit ran"]), (b"nope", 1, [b"atexit ran"])],
)
def test_a_call_ends_its_process_but_for_the_teardown(stdin, code, stdout):
    """The exit status is the call's; the atexit functions run; what a library warns after
    the answer reaches no one; the objects left are not torn down one by one (the host
    waits for the exit, and a web fetch's teardown took a third as long as its own work)."""
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", _ENDED], input=stdin, capture_output=True, check=False
    )
    assert run.returncode == code
    assert run.stdout.splitlines() == stdout
    assert run.stderr.count(b"\n") == code  # the runner's one line for unusable input


def test_finish_takes_the_interpreters_exit_steps(monkeypatch):
    """Threads joined, then the atexit functions, then the flushes: 120 when one fails."""
    import atexit
    import threading

    from ikigai_web.common import ending

    steps: list[str] = []
    monkeypatch.setattr(threading, "_shutdown", lambda: steps.append("threads"))
    monkeypatch.setattr(atexit, "_run_exitfuncs", lambda: steps.append("atexit"))
    assert ending.finish(3) == 3
    monkeypatch.setattr("sys.stdout", _Unflushable())
    assert ending.finish(0) == 120
    assert steps == ["threads", "atexit", "threads", "atexit"]
    exits: list[int] = []
    monkeypatch.setattr("os._exit", exits.append)
    ending.leave(7)
    assert exits == [120]  # stdout still cannot be flushed


class _Unflushable:
    closed = False

    def flush(self) -> None:
        raise OSError


def test_schema_path_imports_only_sys():
    import subprocess
    import sys

    code = "import sys; b = set(sys.modules); import ikigai_web.common.protocol; "
    code += "print(sorted(set(sys.modules) - b))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert (
        out.stdout.strip()
        == "['__future__', 'ikigai_web', 'ikigai_web.common', 'ikigai_web.common.protocol']"
    )


def test_success_is_compact_json_and_newline():
    code, out = invoke(b'{"query": "x y", "n": 1}')
    assert code == 0
    assert out == b'{"success":true,"echo":{"query":"x y","n":1}}\n'


def test_input_without_trailing_newline_is_fine():
    assert invoke(b'{"query":"q"}')[0] == 0


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (b"", "empty input"),
        (b"  \n\t ", "empty input"),
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
        (b'{"query": "q", "n": NaN}', "NaN is not a JSON value"),
        (b'{"query": "q", "n": Infinity}', "Infinity is not a JSON value"),
        (b"[" * 100_000, "not valid JSON"),
        (b"[1, 2]", "must be a JSON object, got array"),
        (b'"text"', "must be a JSON object, got string"),
        (b"{}", "missing required field 'query'"),
        (b'{"query": 5}', "field 'query' must be a string, got integer"),
        (b'{"query": null}', "field 'query' must be a string, got null"),
        (b'{"query": true}', "field 'query' must be a string, got boolean"),
        (b'{"query": ["a"]}', "field 'query' must be a string, got array"),
    ],
)
def test_unusable_input_exits_1_with_one_line_on_stderr(stdin, message, capsys):
    code, out = invoke(stdin)
    err = capsys.readouterr().err
    assert code == 1
    assert out == b""
    assert message in err
    assert err.startswith("demo_tool: ")
    assert err.count("\n") == 1


def test_oversized_input_exits_1(capsys):
    code, out = invoke(b'{"query": "' + b"a" * runner.MAX_INPUT_BYTES + b'"}')
    assert (code, out) == (1, b"")
    assert "larger than" in capsys.readouterr().err


def test_unknown_flags_exit_1_with_one_line(capsys):
    code, out = invoke(b'{"query": "x"}', argv=["--bogus"])
    assert (code, out) == (1, b"")
    err = capsys.readouterr().err
    assert err.startswith("demo_tool: unrecognized arguments: --bogus")
    assert err.count("\n") == 1


def test_tool_error_becomes_failure_object_with_exit_0():
    def fail(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        raise ToolError(ErrorCode.RATE_LIMIT, "slow down", retry_after=30, event={"kind": "k"})

    code, out = invoke(b'{"query": "x"}', fail)
    assert code == 0
    assert json.loads(out) == {
        "success": False,
        "error": "slow down",
        "error_code": "RATE_LIMIT",
        "retry_after": 30,
        "_event": {"kind": "k"},
    }


def test_failure_messages_are_redacted():
    register_secret("sekrit-token-123")

    def fail(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        raise ToolError(ErrorCode.API_ERROR, "bad https://x.test/a?key=sekrit-token-123&q=1")

    out = json.loads(invoke(b'{"query": "x"}', fail)[1])
    assert "sekrit" not in out["error"]
    assert "https://x.test/a?" in out["error"]


def test_crash_exits_nonzero_with_redacted_traceback_and_empty_stdout(capsys):
    register_secret("crash-secret-999")

    def crash(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        raise RuntimeError("boom https://api.test/?key=crash-secret-999")

    code, out = invoke(b'{"query": "x"}', crash)
    err = capsys.readouterr().err
    assert code == runner._EXIT_CRASH
    assert out == b""
    assert "Traceback" in err
    assert "RuntimeError" in err
    assert "crash-secret-999" not in err


def test_bad_setting_is_reported_as_invalid_input(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_OUTPUT_BUDGET", "lots")
    out = json.loads(invoke(b'{"query": "x"}')[1])
    assert out["error_code"] == "INVALID_INPUT"
    assert "IKIGAI_WEB_OUTPUT_BUDGET" in out["error"]


def _results(n: int, size: int) -> dict[str, Any]:
    items = [
        {"title": f"t{i}", "url": f"https://e.test/{i}", "snippet": "s" * size} for i in range(n)
    ]
    return {"success": True, "provider": "p", "results": items, "count": n}


def test_render_leaves_small_output_alone():
    result = _results(3, 10)
    assert json.loads(runner.render(result, 60_000)) == result


def test_render_drops_trailing_results_to_fit_and_says_so():
    data = runner.render(_results(20, 5_000), 60_000)
    out = json.loads(data)
    assert len(data) <= 60_000
    assert 0 < out["count"] < 20
    assert out["count"] == len(out["results"])
    assert out["results"][0]["url"] == "https://e.test/0"
    assert out["warnings"][-1]["code"] == "TRUNCATED"


def test_render_uses_the_configured_budget(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_OUTPUT_BUDGET", "5000")

    def big(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        return _results(10, 1000)

    code, out = invoke(b'{"query": "x"}', big)
    assert code == 0
    assert len(out) <= 5000
    assert json.loads(out)["count"] < 10


def test_render_cuts_a_huge_string_instead_of_failing():
    data = runner.render({"success": True, "content": "x" * 100_000}, 60_000)
    out = json.loads(data)
    assert len(data) <= 60_000
    assert out["success"] is True
    assert out["content"].startswith("xxx")
    assert out["content"].endswith("…")
    assert out["warnings"][-1]["code"] == "TRUNCATED"


def test_one_oversized_result_is_cut_and_the_others_kept():
    result = _results(5, 10)
    result["results"][0]["snippet"] = "y" * 70_000
    data = runner.render(result, 60_000)
    out = json.loads(data)
    assert len(data) <= 60_000
    assert out["count"] == 5
    assert [r["url"] for r in out["results"]] == [f"https://e.test/{i}" for i in range(5)]
    assert len(out["results"][0]["snippet"]) <= 15_000
    assert out["results"][1]["snippet"] == "s" * 10


@pytest.mark.parametrize("budget", [1024, 5000])
def test_a_result_too_large_alone_is_cut_not_dropped(budget):
    # Even with every string at a quarter of the budget, one result does not fit.
    result = _results(20, 20_000)
    for item in result["results"]:
        item |= {"title": "T" * 3000, "extra": ["e" * 9000] * 4}
    data = runner.render(result, budget)
    out = json.loads(data)
    assert len(data) <= budget
    assert out["count"] == len(out["results"]) == 1
    assert out["results"][0]["url"] == "https://e.test/0"
    assert out["results"][0]["title"].startswith("TTT")
    assert [w["code"] for w in out["warnings"]] == ["TRUNCATED"] * 3


@pytest.mark.parametrize("text", ['"\\' * 300, "\u00e9\U0001f600" * 300, "\x01" * 600])
def test_render_fits_text_that_takes_more_bytes_than_characters(text):
    # Quotes and backslashes are escaped, é and emoji take 2 and 4 bytes, a control
    # character is dropped: none of it may push the answer over the budget.
    result = {"success": True, "results": [{"url": "https://e.test/", "a": [text] * 20}]}
    data = runner.render(result, 1024)
    assert len(data) <= 1024
    assert json.loads(data)["results"][0]["url"] == "https://e.test/"


def test_render_always_fits_many_long_strings():
    result = {"success": True, "a": ["z" * 14_000] * 30, "b": {"c": "w" * 14_000}}
    data = runner.render(result, 20_000)
    assert len(data) <= 20_000
    assert json.loads(data)["success"] is True


def test_warning_shape():
    assert runner.warning(ToolError(ErrorCode.NETWORK_ERROR, "a.com: down")) == {
        "code": "NETWORK_ERROR",
        "message": "a.com: down",
    }


def test_output_is_scrubbed_of_secrets_surrogates_and_unwritable_numbers():
    register_secret("echoed/key+4242")

    def leaky(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        return {
            "success": True,
            "results": [
                {"title": "k=echoed/key+4242", "url": "https://x.test/?k=echoed%2fkey%2B4242"},
                {"title": "echoed%2Fkey%2B4242", "url": "https://x.test/?k=echoed/key%2b4242"},
            ],
            "text": "bad \ud800 surrogate",
            "nan": float("nan"),
            "big": 2**70,
        }

    code, out = invoke(b'{"query": "x"}', leaky)
    assert code == 0
    data = json.loads(out)
    assert "echoed" not in out.decode()
    assert data["results"][0]["title"] == "k=***"
    assert data["text"] == "bad \ufffd surrogate"
    assert data["nan"] is None
    assert data["big"] == str(2**70)


def test_a_failure_with_surrogates_is_still_one_json_object():
    def fail(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        raise ToolError(ErrorCode.API_ERROR, "provider said \udc80\udcff")

    code, out = invoke(b'{"query": "x"}', fail)
    assert code == 0
    assert json.loads(out)["error"] == "provider said \ufffd\ufffd"


def test_unknown_fields_are_reported_in_warnings_and_the_call_still_runs():
    code, out = invoke(b'{"query": "x", "nn": 3, "zzzzzz": 1}')
    data = json.loads(out)
    assert code == 0
    assert data["echo"]["query"] == "x"
    messages = [w["message"] for w in data["warnings"]]
    assert messages[0] == "'nn' is not a parameter of demo_tool and was ignored; did you mean 'n'?"
    assert "parameters: query, n." in messages[1]
    assert {w["code"] for w in data["warnings"]} == {"IGNORED"}


def test_unknown_fields_are_named_in_an_invalid_input_message():
    def picky(call: dict[str, Any], _s: Any) -> dict[str, Any]:
        raise ToolError(ErrorCode.INVALID_INPUT, f"'n' is {call.get('n')}; it must be given.")

    data = json.loads(invoke(b'{"query": "x", "nn": 3}', picky)[1])
    assert data["error"].endswith("(did you mean 'n'?)") or "did you mean 'n'?" in data["error"]


def test_unknown_settings_keys_are_reported_in_warnings(isolated_env):
    (isolated_env / "web-tools.toml").write_text("timout = 5\n")
    data = json.loads(invoke(b'{"query": "x"}')[1])
    assert data["success"] is True
    assert "Did you mean 'timeout'?" in data["warnings"][0]["message"]


def test_invalid_messages_spell_values_as_json():
    from ikigai_web.common.errors import invalid
    from ikigai_web.common.params import integer

    assert invalid("count", True, "x").message == "'count' is true; x."
    assert invalid("count", None, "x").message == "'count' is null; x."
    assert invalid("q", "a'b", "x").message == """'q' is "a'b"; x."""
    with pytest.raises(ToolError) as info:
        integer({"count": 2**64}, "count", 1, 1, 20)
    assert "'count' is 18446744073709551616;" in info.value.message


def test_huge_integers_reach_the_tool_exactly_as_written():
    code, out = invoke(b'{"query": "x", "n": 18446744073709551616123}')
    assert code == 0
    assert json.loads(out)["echo"]["n"] == "18446744073709551616123"


# --- people at a terminal ----------------------------------------------------------------


def markdown_of(call: dict[str, Any], answer: dict[str, Any]) -> str:
    return f"# {call['query']} ({answer['echo']['n']})"


def test_words_become_the_required_field_and_flags_the_others():
    code, out = invoke(b"", argv=["rust", "async", "--n", "5"])
    assert code == 0
    assert json.loads(out)["echo"] == {"query": "rust async", "n": 5}


def test_flags_override_a_call_read_from_stdin():
    code, out = invoke(b'{"query": "from stdin", "n": 1}', argv=["--n", "7"])
    assert code == 0
    assert json.loads(out)["echo"] == {"query": "from stdin", "n": 7}


def test_markdown_format(capsys):
    code, out = invoke(b"", argv=["q", "--n", "2", "--format", "markdown"], markdown=markdown_of)
    assert (code, out) == (0, b"# q (2)\n")


def test_markdown_failure_is_a_readable_paragraph_and_exit_1():
    def fail(_: dict[str, Any], _s: Any) -> dict[str, Any]:
        raise ToolError(ErrorCode.RATE_LIMIT, "slow down", retry_after=30, event={"content": "Hi"})

    code, out = invoke(b"", fail, argv=["q", "--format", "markdown"], markdown=markdown_of)
    assert code == 1
    assert out.decode() == "Error (RATE_LIMIT): slow down\nRetry after: 30 s\n\nHi\n"


def test_markdown_is_refused_where_the_tool_has_none(capsys):
    assert invoke(b"", argv=["q", "--format", "markdown"])[0] == 1
    assert "invalid choice: 'markdown'" in capsys.readouterr().err


def test_bad_flag_values_exit_1(capsys):
    assert invoke(b"", argv=["q", "--n", "many"])[0] == 1
    assert "--n: invalid int value: 'many'" in capsys.readouterr().err


def test_words_and_the_same_field_as_a_flag_conflict(capsys):
    assert invoke(b"", argv=["q", "--query", "r"])[0] == 1
    assert "not both" in capsys.readouterr().err


URL_SCHEMA: dict[str, Any] = {
    "name": "fetch_demo",
    "description": "demo",
    "parameters": {
        "type": "object",
        "properties": {"url": {"type": "string"}},
        "required": ["url"],
    },
}


def test_a_url_on_the_command_line_is_one_word_and_two_are_refused(capsys):
    def run(*argv: str) -> tuple[int, bytes]:
        out = io.BytesIO()
        code = runner.run(runner.Runnable(URL_SCHEMA, echo), list(argv), io.BytesIO(b""), out)
        return code, out.getvalue()

    code, out = run("https://example.org/a")
    assert (code, json.loads(out)["echo"]) == (0, {"url": "https://example.org/a"})
    assert run("https://example.org/a", "https://example.org/b") == (1, b"")
    err = capsys.readouterr().err
    assert err == (
        "fetch_demo: one URL per call, not 2 (https://example.org/a https://example.org/b): "
        "run fetch-demo-tool once for each\n"
    )
    assert run("--help")[0] == 0
    usage = capsys.readouterr().out
    assert "  fetch-demo-tool URL [options]\n" in usage
    assert "URL..." not in usage


def test_version_and_help(capsys):
    from ikigai_web.common import __version__

    assert invoke(b"", argv=["--version"])[0] == 0
    assert capsys.readouterr().out == f"demo-tool-tool (ikigai-web-tools) {__version__}\n"
    assert invoke(b"", argv=["--help"], markdown=markdown_of)[0] == 0
    text = capsys.readouterr().out
    assert text.startswith("demo-tool-tool: demo\n")
    assert "QUERY... [options]" in text
    assert "--format json|markdown" in text
    assert "Credentials: none needed." in text


def test_schema_with_other_arguments_is_refused(capsys):
    assert invoke(b"", argv=["--schema", "x"])[0] == 1
    assert "--schema takes no other arguments" in capsys.readouterr().err


# --- the process: signals, the watchdog, quiet libraries ----------------------------------

SLOW_TOOL = """
import logging, sys, time, warnings
from ikigai_web.common.protocol import main
from ikigai_web.common import runner
runner.HARD_LIMIT = float(sys.argv.pop(1))
SCHEMA = {"name": "slow", "description": "d", "parameters": {"type": "object",
          "properties": {"query": {"type": "string"}}, "required": ["query"]}}
def execute(call, settings):
    logging.getLogger("pypdf").warning("EOF marker not found")
    warnings.warn("deprecated thing")
    print("READY", file=sys.__stderr__, flush=True)
    time.sleep(float(call["query"]))
    return {"success": True}
main(SCHEMA, execute)
"""


def slow_tool(tmp_path: Path, limit: float, sleep: float, **env: str):
    import os
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parents[2])
    call = tmp_path / "call.json"
    call.write_text(json.dumps({"query": str(sleep)}))
    with call.open("rb") as stdin:
        return subprocess.Popen(
            [sys.executable, "-c", SLOW_TOOL, str(limit)], stdin=stdin,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=os.environ | {"PYTHONPATH": root} | env,
        )  # fmt: skip


def test_libraries_print_nothing_on_stderr(tmp_path):
    proc = slow_tool(tmp_path, 30, 0)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert json.loads(out) == {"success": True}
    assert err == b"READY\n"


def test_the_watchdog_answers_before_the_host_gives_up(tmp_path):
    proc = slow_tool(tmp_path, 1.0, 20)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0
    assert err == b"READY\n"
    data = json.loads(out)
    assert out.count(b"\n") == 1
    assert data["error_code"] == "NETWORK_ERROR"
    assert data["error"].startswith("timeout: the call did not finish within 1 s")


def test_the_watchdog_answers_by_the_calls_own_deadline(tmp_path):
    """Issue 55: the watchdog answered at a fixed 28.5 s, also with IKIGAI_WEB_TIMEOUT at 1:
    it answers WATCHDOG_GRACE after the call's own deadline, and says which."""
    proc = slow_tool(tmp_path, runner.HARD_LIMIT, 60, IKIGAI_WEB_TIMEOUT="1")
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, err) == (0, b"READY\n")
    assert json.loads(out) == {
        "success": False,
        "error": "timeout: the call did not finish by its 1 s deadline (IKIGAI_WEB_TIMEOUT); "
        "try again later, or a smaller page or query",
        "error_code": "NETWORK_ERROR",
    }


def test_the_calls_own_deadline_sets_its_watchdog():
    """The watchdog is measured from the call's deadline as the call counts it (its
    Deadline.of_call), which a busy machine may start seconds after the settings were read;
    never past the guard's own limit. A call not guarded (a test's) has none to move."""
    from ikigai_web.net.http import Deadline

    Deadline.of_call(1.0)
    out = runner.Output(io.BytesIO())
    with out.guarded(100):
        assert out.watchdog is not None
        assert out.watchdog.interval == pytest.approx(100, abs=1)
        Deadline.of_call(5.0)
        assert out.watchdog.interval == pytest.approx(5 + runner.WATCHDOG_GRACE, abs=1)
        Deadline.of_call(500.0)
        assert out.watchdog.interval == pytest.approx(5 + runner.WATCHDOG_GRACE, abs=1)
    from ikigai_web.common import watch

    assert watch._narrow is None


GREEDY_TOOL = """
from ikigai_web.common.protocol import main
SCHEMA = {"name": "greedy", "description": "d", "parameters": {"type": "object",
          "properties": {"query": {"type": "string"}}, "required": ["query"]}}
def execute(call, settings):
    held = bytearray(int(call["query"]) << 20)
    return {"success": True, "held": len(held)}
main(SCHEMA, execute)
"""


@pytest.mark.parametrize(("mib", "code"), [(16, None), (1024, "TOO_LARGE")])
def test_a_call_is_capped_at_its_memory_and_running_out_is_an_answer(mib, code):
    """A tool caps its own memory (IKIGAI_WEB_MAX_MEMORY_MB, here 128 MiB), as the MCP server's
    warm workers are capped; past it, the answer says so. The test's own hard limit keeps a
    tool that set no cap from taking more than 1.5 GiB."""
    import os
    import resource
    import subprocess
    import sys

    def capped() -> None:
        resource.setrlimit(resource.RLIMIT_DATA, (1536 << 20, 1536 << 20))

    root = str(Path(__file__).resolve().parents[2])
    env = os.environ | {"PYTHONPATH": root, "IKIGAI_WEB_MAX_MEMORY_MB": "128"}
    run = subprocess.run(
        [sys.executable, "-c", GREEDY_TOOL], input=json.dumps({"query": str(mib)}).encode(),
        capture_output=True, env=env, timeout=60, check=False, preexec_fn=capped,
    )  # fmt: skip
    assert (run.returncode, run.stderr) == (0, b"")
    answer_ = json.loads(run.stdout)
    assert answer_.get("error_code") == code, answer_
    if code:
        assert answer_["error"] == (
            "greedy needed more memory than one call may take (128 MiB, IKIGAI_WEB_MAX_MEMORY_MB) "
            "and stopped. Ask for something smaller (another page or document, fewer results), "
            "or the user can raise the setting."
        )


def test_an_unusable_memory_setting_is_invalid_input_for_every_call(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_MAX_MEMORY_MB", "lots")
    out = runner.Output(io.BytesIO())
    result, _ = runner.answer(lambda *_: {"success": True}, {}, SCHEMA, out)
    assert result["error_code"] == "INVALID_INPUT"
    assert "IKIGAI_WEB_MAX_MEMORY_MB" in result["error"]


def test_out_of_memory_without_a_usable_setting_still_answers(monkeypatch):
    def greedy(_call: dict[str, Any], _settings: Any) -> dict[str, Any]:
        monkeypatch.setenv("IKIGAI_WEB_MAX_MEMORY_MB", "lots")
        raise MemoryError

    result, _ = runner.answer(greedy, {}, SCHEMA)
    assert result["error_code"] == "TOO_LARGE"
    assert "more memory than one call may take (IKIGAI_WEB_MAX_MEMORY_MB)" in result["error"]


@pytest.mark.parametrize(("signum", "code"), [(2, 130), (15, 143)])
def test_sigint_and_sigterm_end_quietly(tmp_path, signum, code):
    proc = slow_tool(tmp_path, 30, 20)
    assert proc.stderr is not None
    assert proc.stderr.readline() == b"READY\n"
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == code
    assert (out, err) == (b"", b"")


# --- input no request, URL or cache key can carry ---------------------------------------


@pytest.mark.parametrize(
    ("stdin", "argv", "expected"),
    [
        (b'{"query": "a\\ud800b", "\\udfffk": ["\\udc80", {"x": "\\ud83d"}]}', (),
         {"query": "a\ufffdb", "\ufffdk": ["\ufffd", {"x": "\ufffd"}]}),
        (b"", ("caf\udce9",), {"query": "caf\ufffd"}),  # an undecodable byte of argv
        (b'{"query": "\\ud83d\\ude00 ok"}', (), {"query": "\U0001f600 ok"}),  # a real pair
    ],
)  # fmt: skip
def test_lone_surrogates_in_a_call_reach_the_tool_as_replacement_characters(stdin, argv, expected):
    import orjson

    def keyed(call: dict[str, Any], _s: Any) -> dict[str, Any]:
        # What a cache key, a URL or a request body does with the call: encode it as UTF-8.
        return {"success": True, "echo": orjson.loads(orjson.dumps(call))}

    code, out = invoke(stdin, keyed, argv=argv)
    assert code == 0
    assert json.loads(out)["echo"] == expected


def test_replacing_surrogates_copes_with_json_as_deep_as_the_parser_takes():
    from ikigai_web.common.text import encodable_json

    depth = 900
    value = json.loads("[" * depth + '"\\ud800"' + "]" * depth)
    encodable_json(value)
    for _ in range(depth):
        value = value[0]
    assert value == "\ufffd"


_CYCLES = """
import gc, time
from ikigai_web.common import protocol

protocol.CYCLES_AFTER = 0.2
def call(_call, _settings):
    off = not gc.isenabled()
    time.sleep(0.5)  # a long call gets the collector back
    return {"off_at_first": off, "on_later": gc.isenabled()}

protocol.main({"name": "demo", "parameters": {"type": "object", "properties": {}}}, call)
"""


def test_a_calls_process_runs_its_first_seconds_without_the_cycle_collector():
    import subprocess
    import sys

    run = subprocess.run(
        [sys.executable, "-c", _CYCLES], input=b"{}", capture_output=True, check=True
    )
    assert json.loads(run.stdout) == {"off_at_first": True, "on_later": True}


def test_a_process_that_runs_calls_as_functions_keeps_its_collector(monkeypatch):
    import gc

    monkeypatch.setattr(protocol, "ENDS_PROCESS", False)
    monkeypatch.setattr("sys.argv", ["demo-tool"])
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b'{"query": "q"}')))
    seen: list[bool] = []

    def call(_call: dict[str, Any], _settings: Any) -> dict[str, Any]:
        seen.append(gc.isenabled())
        return {}

    with pytest.raises(SystemExit):
        protocol.main(SCHEMA, call)
    assert seen == [True]
