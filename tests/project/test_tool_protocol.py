"""The protocol, run through every installed tool: --schema and every exit-1 case."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

import pytest
from conftest import BIN

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(
    name
    for name in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    if name.endswith("-tool")  # `web-tools` is the host side, not a tool
)


def schema_of(script: str) -> dict[str, Any]:
    name = script.removesuffix("-tool").replace("-", "_")
    schema: dict[str, Any] = importlib.import_module(f"ikigai_web.tools.{name}").SCHEMA
    return schema


@pytest.mark.parametrize("script", SCRIPTS)
def test_schema_over_the_protocol(run_tool, script):
    out = run_tool(script, args=("--schema",), raw=b"")
    assert out.code == 0
    assert out.json == schema_of(script)
    assert len(out.stdout.encode()) < 8192
    assert out.stderr == ""


def unusable_calls(script: str) -> list[tuple[bytes, str]]:
    required = schema_of(script)["parameters"]["required"][0]
    return [
        (b"", "empty input"),
        (b" \n", "empty input"),
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object, got array"),
        (b"null", "must be a JSON object, got null"),
        (b"{}", f"missing required field '{required}'"),
        (json.dumps({required: 42}).encode(), f"field '{required}' must be a string, got integer"),
        (json.dumps({required: None}).encode(), f"field '{required}' must be a string, got null"),
    ]


@pytest.mark.parametrize(
    ("script", "raw", "says"),
    [(script, raw, says) for script in SCRIPTS for raw, says in unusable_calls(script)],
)
def test_unusable_input_exits_1_with_one_line_on_stderr(run_tool, script, raw, says):
    out = run_tool(script, raw=raw)
    assert out.code == 1
    assert out.stdout == ""
    assert says in out.stderr
    assert out.stderr.count("\n") == 1


@pytest.mark.parametrize("script", SCRIPTS)
def test_unknown_flags_exit_1_with_one_line(run_tool, script):
    out = run_tool(script, args=("--no-such-flag",), raw=b"{}")
    assert out.code == 1
    assert out.stdout == ""
    assert "unrecognized arguments: --no-such-flag" in out.stderr
    assert out.stderr.count("\n") == 1


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_says_what_it_does_how_to_call_it_and_where_credentials_go(run_tool, script):
    from ikigai_web.search.registry import WITH_CREDENTIALS as PROVIDERS

    schema = schema_of(script)
    out = run_tool(script, args=("--help",), raw=b"")
    assert out.code == 0
    assert out.stderr == ""
    assert out.stdout.startswith(f"{script}: {schema['description']}")
    assert "echo '{" in out.stdout
    for name in schema["parameters"]["properties"]:
        assert "--" + name.replace("_", "-") in out.stdout
    needed = [p for p in PROVIDERS.values() if p.tool == schema["name"]]
    for provider in needed:
        assert provider.fields[0].env[0] in out.stdout
        assert "credentials.json" in out.stdout
    if not needed:
        assert "Credentials: none needed." in out.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_version(run_tool, script):
    from ikigai_web.common import __version__

    out = run_tool(script, args=("--version",), raw=b"")
    assert (out.code, out.stdout) == (0, f"{script} (ikigai-web-tools) {__version__}\n")


def _closed_stdout() -> None:
    os.close(1)


@pytest.mark.parametrize("how", ["closed", "gone", "full"])
@pytest.mark.parametrize(
    ("args", "raw"),
    [(("--schema",), b""), ((), b'{"query": "x", "count": 999}'), (("--version",), b"")],
)
def test_an_answer_nobody_can_read_exits_1_quietly(how, args, raw, tmp_path):
    # The contract's exit 1 with nothing said: no traceback, no "Exception ignored", no 120.
    read_end, write_end = os.pipe()
    os.close(read_end)
    target: Any = write_end
    if how == "full":
        if not Path("/dev/full").exists():
            pytest.skip("no /dev/full here")
        target = Path("/dev/full").open("wb")  # noqa: SIM115 - closed below
    proc = subprocess.run(
        [str(BIN / "web-search-brave-tool"), *args],
        input=raw,
        stdout=target,
        stderr=subprocess.PIPE,
        preexec_fn=_closed_stdout if how == "closed" else None,
        env=os.environ | {"HOME": str(tmp_path), "BRAVE_API_KEY": "k"},
        timeout=60,
        check=False,
    )
    os.close(write_end)
    if how == "full":
        target.close()
    assert (proc.returncode, proc.stderr.decode()) == (1, "")
