"""The protocol runner: --schema, exit-1 cases, failures as JSON, crashes, output budget."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from common import protocol, runner
from common.errors import ErrorCode, ToolError
from common.redact import register_secret

SCHEMA: dict[str, Any] = {
    "name": "demo_tool",
    "description": "demo",
    "parameters": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["query"],
    },
}


def echo(call: dict[str, Any]) -> dict[str, Any]:
    return {"success": True, "echo": call}


def invoke(stdin: bytes, execute=echo, argv=()) -> tuple[int, bytes]:
    out = io.BytesIO()
    code = runner.run(SCHEMA, execute, list(argv), io.BytesIO(stdin), out)
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


def test_schema_path_imports_only_sys():
    import subprocess
    import sys

    code = "import sys; b = set(sys.modules); import common.protocol; "
    code += "print(sorted(set(sys.modules) - b))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['__future__', 'common', 'common.protocol']"


def test_success_is_compact_json_and_newline():
    code, out = invoke(b'{"query": "x y", "extra": 1}')
    assert code == 0
    assert out == b'{"success":true,"echo":{"query":"x y","extra":1}}\n'


def test_input_without_trailing_newline_is_fine():
    assert invoke(b'{"query":"q"}')[0] == 0


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (b"", "empty input"),
        (b"  \n\t ", "empty input"),
        (b"{not json", "not valid JSON"),
        (b"\xff\xfe", "not valid JSON"),
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


def test_unexpected_arguments_exit_1(capsys):
    code, out = invoke(b'{"query": "x"}', argv=["--bogus"])
    assert (code, out) == (1, b"")
    assert "--schema" in capsys.readouterr().err


def test_tool_error_becomes_failure_object_with_exit_0():
    def fail(_: dict[str, Any]) -> dict[str, Any]:
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

    def fail(_: dict[str, Any]) -> dict[str, Any]:
        raise ToolError(ErrorCode.API_ERROR, "bad https://x.test/a?key=sekrit-token-123&q=1")

    out = json.loads(invoke(b'{"query": "x"}', fail)[1])
    assert "sekrit" not in out["error"]
    assert "https://x.test/a?" in out["error"]


def test_crash_exits_nonzero_with_redacted_traceback_and_empty_stdout(capsys):
    register_secret("crash-secret-999")

    def crash(_: dict[str, Any]) -> dict[str, Any]:
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

    def big(_: dict[str, Any]) -> dict[str, Any]:
        return _results(10, 1000)

    code, out = invoke(b'{"query": "x"}', big)
    assert code == 0
    assert len(out) <= 5000
    assert json.loads(out)["count"] < 10


def test_render_never_exceeds_budget_even_without_results():
    data = runner.render({"success": True, "content": "x" * 100_000}, 60_000)
    assert len(data) <= 60_000
    assert json.loads(data)["success"] is False


def test_warning_shape():
    assert runner.warning(ToolError(ErrorCode.NETWORK_ERROR, "a.com: down")) == {
        "code": "NETWORK_ERROR",
        "message": "a.com: down",
    }
