"""`web-tools mcp` driven by the MCP SDK's own client, against the server as a subprocess."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import pytest
from conftest import BIN, HANG_GUARD, Reply
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from common import launchers
from host import discovery, mcp_server, trust

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

FIXTURES = Path(__file__).parent / "fixtures" / "brave"
KEY = "BSA-test-key-0123456789"
# This project's tools, whatever tools land later: one per `*-tool` script.
OURS = {discovery.model_name(script) for script in launchers.tools()}


def server_env(tmp_path: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """What the client passes on: our isolated dirs, a HOME of its own, a system dir."""
    names = ("IKIGAI_CONFIG_DIR", "XDG_CACHE_HOME", "XDG_CONFIG_HOME")
    env = {name: os.environ[name] for name in names}
    env |= {"HOME": str(tmp_path / "home"), "IKIGAI_LIBEXEC_DIR": str(tmp_path / "system")}
    return env | (extra or {})


@contextlib.asynccontextmanager
async def connect(
    tmp_path: Path, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    trust.trust(tmp_path)  # the tests' own project tools may run (tests/test_trust.py)
    params = StdioServerParameters(
        command=str(BIN / "web-tools"),
        args=["mcp", *args],
        env=server_env(tmp_path, env),
        cwd=tmp_path,
    )
    with (tmp_path / "server.log").open("w") as log:
        async with (
            stdio_client(params, errlog=log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def run(scenario: Callable[[], Awaitable[None]]) -> None:
    anyio.run(scenario)


def text_of(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


def test_lists_every_tool_with_its_schema(tmp_path, fake_tool):
    fake_tool(tmp_path / "system", "third-party-tool")
    fake_tool(tmp_path / ".ikigai" / "tools", "broken-tool", schema_script="exit 4")
    listed: dict[str, types.Tool] = {}

    async def scenario() -> None:
        async with connect(tmp_path) as session:
            listed.update({tool.name: tool for tool in (await session.list_tools()).tools})

    run(scenario)
    assert set(listed) == {*OURS, "third_party"}
    schema = json.loads(
        subprocess.run(
            [BIN / "web-search-brave-tool", "--schema"], capture_output=True, check=True
        ).stdout
    )
    assert listed["web_search_brave"].description == schema["description"]
    assert listed["web_search_brave"].input_schema == schema["parameters"]
    assert listed["third_party"].description == "A third-party tool, third-party-tool."
    log = (tmp_path / "server.log").read_text()
    assert f"not serving {tmp_path}/.ikigai/tools/broken-tool: --schema exited with status 4" in log


def test_a_search_against_a_loopback_brave(tmp_path, fake_server):
    body = json.loads((FIXTURES / "search.json").read_text())
    url = fake_server.route("/res/v1/web/search", Reply(body=body))
    env = {"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": url}

    async def scenario() -> None:
        async with connect(tmp_path, env=env) as session:
            result = await session.call_tool("web_search_brave", {"query": "ikigai", "count": 3})
            assert not result.is_error
            answer = json.loads(text_of(result))
            assert answer["provider"] == "brave"
            assert answer["results"][0]["url"] == "https://en.wikipedia.org/wiki/Ikigai"
            assert answer["count"] == 3

    run(scenario)
    assert fake_server.seen[0].headers["X-Subscription-Token"] == KEY
    assert fake_server.seen[0].query["q"] == ["ikigai"]


def test_failures_and_bad_input_are_error_results(tmp_path, isolated_env):
    async def scenario() -> None:
        async with connect(tmp_path) as session:
            missing = await session.call_tool("web_search_brave", {"query": "ikigai"})
            assert missing.is_error
            text = text_of(missing)
            assert text.startswith("AUTH_MISSING: web_search_brave needs a Brave Search API key")
            assert "\n\n⚠ Configuration Required\n\n" in text
            assert str(isolated_env / "credentials.json") in text
            assert 'export BRAVE_API_KEY="' in text
            no_query = await session.call_tool("web_search_brave", {})
            assert no_query.is_error
            assert text_of(no_query) == "web_search_brave: missing required field 'query'"
            wrong = await session.call_tool("web_fetch", {"url": 5})
            assert text_of(wrong) == "web_fetch: field 'url' must be a string, got integer"
            out_of_range = await session.call_tool("web_search_brave", {"query": "x", "count": 99})
            assert out_of_range.is_error
            assert text_of(out_of_range).startswith("INVALID_INPUT: ")
            with pytest.raises(MCPError, match="No tool 'nope'; tools: web_fetch, "):
                await session.call_tool("nope", {})

    run(scenario)


CRASH = (
    "cat >/dev/null; echo 'Traceback (most recent call last):' >&2; echo 'KeyError: x' >&2; exit 2"
)


def test_a_crashing_tool_is_an_error_result_and_the_server_lives_on(tmp_path, fake_tool):
    fake_tool(tmp_path / ".ikigai" / "tools", "crash-tool", call=CRASH)
    fake_tool(tmp_path / ".ikigai" / "tools", "echo-tool")

    async def scenario() -> None:
        async with connect(tmp_path) as session:
            crashed = await session.call_tool("crash", {"query": "q"})
            assert crashed.is_error
            assert text_of(crashed) == (
                "crash failed: it exited with status 2. Its error output:\n"
                "Traceback (most recent call last):\nKeyError: x"
            )
            echoed = await session.call_tool("echo", {"query": "still here"})
            assert not echoed.is_error
            assert json.loads(text_of(echoed))["got"] == {"query": "still here"}

    run(scenario)


def test_a_hanging_tool_is_killed_at_the_time_limit(tmp_path, fake_tool):
    fake_tool(tmp_path / "system", "hang-tool", call="sleep 60")
    fake_tool(tmp_path / "system", "echo-tool")

    async def scenario() -> None:
        async with connect(tmp_path, "--timeout", "1") as session:
            started = time.monotonic()
            hung = await session.call_tool("hang", {})
            assert time.monotonic() - started < HANG_GUARD  # the 1 s limit, not the 60 s sleep
            assert hung.is_error
            assert text_of(hung) == "hang did not answer within 1 s and was stopped."
            assert not (await session.call_tool("echo", {})).is_error

    run(scenario)


MISBEHAVING = {
    "garbage-tool": "echo 'not json at all'",
    "huge-tool": "yes '{}'",
    "signal-tool": "kill -SEGV $$",
    "deaf-tool": "exec <&-; echo '{\"success\": true}'",
    "quiet-fail-tool": "exit 7",
}


def test_misbehaving_tools_never_take_the_server_down(tmp_path, fake_tool):
    for name, call in MISBEHAVING.items():
        fake_tool(tmp_path / "system", name, call=call)
    texts: dict[str, tuple[bool, str]] = {}

    async def scenario() -> None:
        async with connect(tmp_path, "--only", ",".join(MISBEHAVING)) as session:
            big = {"query": "x" * 500_000}
            for name in MISBEHAVING:
                result = await session.call_tool(discovery.model_name(name), big)
                texts[name] = (result.is_error, text_of(result))
            assert len((await session.list_tools()).tools) == len(MISBEHAVING)

    run(scenario)
    assert texts["garbage-tool"] == (
        True,
        "garbage answered something that is not JSON: 'not json at all'",
    )
    assert texts["huge-tool"][0]
    assert "more than 65,536 bytes" in texts["huge-tool"][1]
    assert texts["signal-tool"] == (
        True,
        "signal failed: it was killed by signal SIGSEGV, without an error message.",
    )
    assert texts["deaf-tool"] == (False, '{"success": true}')
    assert texts["quiet-fail-tool"] == (
        True,
        "quiet_fail failed: it exited with status 7, without an error message.",
    )


def test_only_and_exclude_choose_the_tools(tmp_path, fake_tool):
    fake_tool(tmp_path / "system", "extra-tool")
    names: list[set[str]] = []

    async def scenario() -> None:
        for args in (
            ("--only", "web_search_brave,extra-tool", "--only", "missing"),
            ("--exclude", "web_fetch", "--exclude", "extra,web-search-google-tool"),
        ):
            async with connect(tmp_path, *args) as session:
                names.append({tool.name for tool in (await session.list_tools()).tools})

    run(scenario)
    assert names[0] == {"web_search_brave", "extra"}
    assert names[1] == OURS - {"web_fetch", "web_search_google"}


# --- the same server in-process, where coverage can see it ---------------------------------


def served(tmp_path: Path, fake_tool: Callable[..., Path], *files: str) -> dict[str, Any]:
    for name in files:
        fake_tool(tmp_path, name, **({"call": CRASH} if name.startswith("crash") else {}))
    found = discovery.discover([discovery.Source(discovery.USER, tmp_path)])
    return found.tools


def test_in_process_list_and_call(tmp_path, fake_tool):
    tools = served(tmp_path, fake_tool, "echo-tool", "crash-tool")

    async def scenario() -> None:
        async with Client(mcp_server.build(tools, 5)) as client:
            listed = await client.list_tools()
            assert [t.name for t in listed.tools] == ["crash", "echo"]
            echoed = await client.call_tool("echo", {"a": 1})
            assert (echoed.is_error, json.loads(text_of(echoed))) == (
                False,
                {"success": True, "got": {"a": 1}},
            )
            assert (await client.call_tool("crash", None)).is_error
            with pytest.raises(MCPError, match="No tool 'zz'"):
                await client.call_tool("zz", {})

    run(scenario)


def test_names_mcp_refuses_are_left_out_and_logged(tmp_path, fake_tool, capsys):
    tools = served(tmp_path, fake_tool, "good-tool", "bad name-tool")
    assert set(mcp_server.servable(tools)) == {"good"}
    assert "'bad name' is no MCP name" in capsys.readouterr().err


def test_a_bug_of_ours_is_an_error_result_not_a_dead_server(tmp_path, fake_tool, monkeypatch):
    tools = served(tmp_path, fake_tool, "echo-tool")

    def broken(*_: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(mcp_server, "call", broken)

    async def scenario() -> None:
        async with Client(mcp_server.build(tools, 5)) as client:
            result = await client.call_tool("echo", {})
            assert result.is_error
            assert text_of(result) == "web-tools could not run echo; see the server's log."

    run(scenario)
