"""`web-tools mcp` driven by the MCP SDK's own client, against the server as a subprocess."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import signal
import subprocess
import sys
import threading
import time
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import pytest
from conftest import BIN, HANG_GUARD, STALL, Reply
from deaths import gone
from mcp import Client, ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from ikigai_web.common import launchers
from ikigai_web.common.procs import descendants
from ikigai_web.host import answers, discovery, mcp_server, trust
from ikigai_web.host.calls import Answer

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Awaitable, Callable

FIXTURES = Path(__file__).parents[1] / "fixtures" / "brave"
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
    trust.trust(tmp_path)  # the tests' own project tools may run (tests/host/test_trust.py)
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
        async with connect(tmp_path, "--all") as session:
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
    for name in OURS:  # what each says of itself, beside its SCHEMA
        module = import_module(f"ikigai_web.tools.{name}")
        assert listed[name].title == module.TITLE
        assert listed[name].output_schema == module.OUTPUT_SCHEMA
        hints = listed[name].annotations
        assert hints is not None
        assert (hints.title, hints.read_only_hint, hints.open_world_hint) == (
            module.TITLE,
            True,
            True,
        )
        assert hints.destructive_hint is None  # meaningless for a read-only tool
    third = listed["third_party"]
    assert third.description == "A third-party tool, third-party-tool."
    assert (third.title, third.output_schema, third.annotations) == (None, None, None)
    log = (tmp_path / "server.log").read_text()
    assert f"not serving {tmp_path}/.ikigai/tools/broken-tool: --schema exited with status 4" in log


def test_output_schemas_can_be_left_out_of_the_list(tmp_path, fake_server):
    url = fake_server.route("/page", page("A page whose answer comes as JSON all the same."))
    sizes: dict[str, int] = {}

    async def scenario() -> None:
        for args in ((), ("--no-output-schemas",)):
            async with connect(tmp_path, *args, env=LOOPBACK_PAGES) as session:
                listed = (await session.list_tools()).tools
                sizes[" ".join(args)] = len(json.dumps([t.model_dump() for t in listed]))
                assert {t.name for t in listed} >= {"web_fetch", "web_search_auto"}
                assert all((t.output_schema is None) is bool(args) for t in listed)
                assert all(t.title and t.annotations for t in listed)  # the rest is as ever
                result = await session.call_tool("web_fetch", {"url": url})
                assert not result.is_error
                assert result.structured_content is not None  # the JSON still comes
                assert result.structured_content["title"] == "Warm"

    run(scenario)
    assert sizes["--no-output-schemas"] < sizes[""] / 2


def test_a_search_against_a_loopback_brave(tmp_path, fake_server):
    body = json.loads((FIXTURES / "search.json").read_text())
    url = fake_server.route("/res/v1/web/search", Reply(body=body))
    env = {"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": url}

    async def scenario() -> None:
        async with connect(tmp_path, env=env) as session:
            # The client checks structuredContent against the listed outputSchema itself.
            result = await session.call_tool("web_search_brave", {"query": "ikigai", "count": 3})
            assert not result.is_error
            answer = result.structured_content
            assert answer is not None
            assert answer["provider"] == "brave"
            assert answer["results"][0]["url"] == "https://en.wikipedia.org/wiki/Ikigai"
            assert answer["count"] == 3
            text = text_of(result)
            first = answer["results"][0]
            assert text.startswith(
                "# Search Results for: ikigai\nSearch engine: Brave Search\n\n"
                f"## Result 1: {first['title']}\nSource: {first['url']}\n"
            )
            assert "## Result 3: " in text
            assert text.endswith(
                "[More results: call web_search_brave again with the same arguments but offset 1]"
            )

    run(scenario)
    assert fake_server.seen[0].headers["X-Subscription-Token"] == KEY
    assert fake_server.seen[0].query["q"] == ["ikigai"]


def test_by_default_only_what_can_work_is_served(tmp_path, fake_tool):
    fake_tool(tmp_path / "system", "third-party-tool")
    listed: list[set[str]] = []

    async def scenario() -> None:
        for env in ({}, {"TAVILY_API_KEY": KEY}):
            async with connect(tmp_path, env=env) as session:
                listed.append({tool.name for tool in (await session.list_tools()).tools})

    run(scenario)
    keyless = {"web_fetch", "web_search_auto", "web_search_duckduckgo", "third_party"}
    assert listed == [keyless, keyless | {"web_search_tavily"}]
    for env, served in zip(({}, {"TAVILY_API_KEY": KEY}), listed, strict=True):
        rows = json.loads(subprocess.run(
            [BIN / "web-tools", "list", "--json"], capture_output=True, check=True,
            env=os.environ | server_env(tmp_path, env), cwd=tmp_path,
        ).stdout)  # fmt: skip
        assert {row["name"] for row in rows if row["status"] == "served"} == served
    log = (tmp_path / "server.log").read_text()
    assert "not serving web_search_brave, not set up: BRAVE_API_KEY not set" in log


def test_failures_and_bad_input_are_error_results(tmp_path, isolated_env):
    async def scenario() -> None:
        async with connect(tmp_path, "--all") as session:
            missing = await session.call_tool("web_search_brave", {"query": "ikigai"})
            assert missing.is_error
            assert missing.structured_content is not None
            assert missing.structured_content["error_code"] == "AUTH_MISSING"
            assert missing.structured_content["_event"]["data"]["env"] == ["BRAVE_API_KEY"]
            text = text_of(missing)
            assert text.startswith("AUTH_MISSING: web_search_brave needs a Brave Search API key")
            assert "\n\n⚠ Configuration Required\n\n" in text
            assert str(isolated_env / "credentials.json") in text
            assert 'export BRAVE_API_KEY="' in text
            out_of_range = await session.call_tool("web_search_brave", {"query": "x", "count": 99})
            assert out_of_range.is_error
            assert text_of(out_of_range).startswith("INVALID_INPUT: ")
            assert out_of_range.structured_content is not None
            assert out_of_range.structured_content["error"] in text_of(out_of_range)
            with pytest.raises(MCPError, match="No tool 'nope'; tools: web_fetch, "):
                await session.call_tool("nope", {})

    run(scenario)


# Input the tool refuses as unusable (exit 1 for a host) has the shape of any other bad value.
UNUSABLE: list[tuple[str, dict[str, Any], str]] = [
    ("web_search_brave", {}, "missing required field 'query'"),
    ("web_fetch", {"url": 5}, "field 'url' must be a string, got integer"),
    ("web_fetch", {"url": None}, "field 'url' must be a string, got null"),
    ("web_search_auto", {"query": ["x"]}, "field 'query' must be a string, got array"),
    ("web_fetch", {"url": "https://example.com/", "pad": "x" * 2_000_000},
     "input is larger than 1048576 bytes"),
]  # fmt: skip


def test_every_bad_input_is_invalid_input_with_its_structure(tmp_path):
    results: list[types.CallToolResult] = []

    async def scenario() -> None:
        async with connect(tmp_path, "--all") as session:
            # The SDK's client checks structuredContent against the listed outputSchema.
            for name, arguments, _ in UNUSABLE:
                results.append(await session.call_tool(name, arguments))

    run(scenario)
    for result, (_, _, said) in zip(results, UNUSABLE, strict=True):
        assert result.is_error
        assert text_of(result) == f"INVALID_INPUT: {said}"
        failure = {"success": False, "error": said, "error_code": "INVALID_INPUT"}
        assert result.structured_content == failure


def test_a_third_party_tools_refusal_stays_its_text(tmp_path, fake_tool):
    fake_tool(tmp_path / "system", "third-party-tool", call="echo 'bad input' >&2; exit 1")

    async def scenario() -> None:
        async with connect(tmp_path) as session:
            result = await session.call_tool("third_party", {"query": "x"})
            assert result.is_error
            assert text_of(result) == "bad input"
            assert result.structured_content is None  # its own words: no code is known

    run(scenario)


ARTICLE = (
    "<html><head><title>Release notes 2.0</title></head><body><article>"
    + "".join(f"<p>Paragraph {i} of the release notes.</p>" for i in range(30))
    + "</article></body></html>"
)
LOOPBACK_PAGES = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}


def test_a_cut_page_reads_as_a_page_and_says_how_to_read_on(tmp_path, fake_server):
    url = fake_server.route("/notes", Reply(body=ARTICLE, headers={"Content-Type": "text/html"}))

    async def scenario() -> None:
        async with connect(tmp_path, env=LOOPBACK_PAGES) as session:
            first = await session.call_tool("web_fetch", {"url": url, "limit": 3})
            assert first.structured_content is not None
            page = first.structured_content
            assert (page["truncated"], page["next_offset"]) == (True, 4)
            shown = page["content"].split("\n")
            assert text_of(first) == (
                f"# Release notes 2.0\n\nSource: {url}\n\n{page['content']}\n\n"
                f"[{page['total_lines'] - 3} more lines: to read on, call web_fetch again with "
                "the same arguments but offset 4]"
            )
            assert shown[0] == "Paragraph 0 of the release notes."
            # As the text says: the same arguments, the next offset.
            rest = await session.call_tool("web_fetch", {"url": url, "limit": 3, "offset": 4})
            assert rest.structured_content is not None
            assert rest.structured_content["cached"] is True
            assert rest.structured_content["content"].strip() == "Paragraph 2 of the release notes."

    run(scenario)


GUIDE = (
    "<html><head><title>Kiln guide</title></head><body><main><article><h1>Kiln guide</h1>"
    "<h2>Loading</h2><p>Stack the shelves loosely so the heat can move between the pots.</p>"
    "<h2>Firing</h2><h3>Stoneware</h3><p>Stoneware matures at about 1,240 degrees, held for "
    "twenty minutes before the kiln is left to cool.</p>"
    "<h2>Cooling</h2><p>Open the lid only once the kiln has fallen below 100 degrees.</p>"
    + "".join(f"<p>Log entry {i}: a firing of bowls and cups.</p>" for i in range(40))
    + "</article></main></body></html>"
)
HTML = {"Content-Type": "text/html"}


def test_a_query_reads_as_passages_with_their_headings_lines_and_the_outline(tmp_path, fake_server):
    url = fake_server.route("/guide", Reply(body=GUIDE, headers=HTML))

    async def scenario() -> None:
        async with connect(tmp_path, env=LOOPBACK_PAGES) as session:
            # The client checks structuredContent against the listed outputSchema itself.
            call = {"url": url, "query": "stoneware firing temperature", "max_chars": 300}
            result = await session.call_tool("web_fetch", call)
            answer = result.structured_content
            assert answer is not None
            assert (answer["selected_by"], answer["truncated"]) == ("query", True)
            first = answer["passages"][0]
            assert first["headings"] == ["Firing", "Stoneware"]
            text = text_of(result)
            line = first["first_line"]
            assert text.startswith(
                f"# Kiln guide\n\nSource: {url}\n\n[Line {line}: Firing > Stoneware]\n"
                "Stoneware matures at about 1,240 degrees"
            )
            assert "Outline of the page (line: heading):\n- " in text
            assert f"- {line - 2}: Stoneware" in text
            assert text.endswith(
                f"to read on from one, call web_fetch again with offset {line} and no query.]"
            )
            around = await session.call_tool("web_fetch", {"url": url, "offset": line, "limit": 1})
            assert around.structured_content is not None
            assert around.structured_content["cached"] is True
            assert around.structured_content["content"].startswith("Stoneware matures")

    run(scenario)
    assert [s.path for s in fake_server.seen].count("/guide") == 1


def test_a_search_that_reads_shows_passages_under_each_result(tmp_path, fake_server):
    page = fake_server.route("/guide", Reply(body=GUIDE, headers=HTML))
    item = {"title": "Kiln guide", "url": page, "description": "How to fire a kiln."}
    body = {"type": "search", "web": {"type": "search", "results": [item]}}
    url = fake_server.route("/res/v1/web/search", Reply(body=body))
    env = {"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": url} | LOOPBACK_PAGES

    async def scenario() -> None:
        async with connect(tmp_path, env=env) as session:
            call = {"query": "when to open the kiln lid", "read": 1}
            result = await session.call_tool("web_search_brave", call)
            answer = result.structured_content
            assert answer is not None
            read = answer["results"][0]["read"]
            assert read["passages"][0]["headings"] == ["Cooling"]
            line = read["passages"][0]["first_line"]
            assert (
                "Source: " + page + "\n\nHow to fire a kiln.\n\nFrom the page:\n\n"
                f"[Line {line}: Cooling]\nOpen the lid only once the kiln has fallen below"
            ) in text_of(result)
            # the page it read is web_fetch's to reuse
            again = await session.call_tool("web_fetch", {"url": page, "query": "lid"})
            assert again.structured_content is not None
            assert again.structured_content["cached"] is True

    run(scenario)
    assert [s.path for s in fake_server.seen].count("/guide") == 1


def test_a_page_at_the_budget_is_twice_its_bytes_on_the_wire(tmp_path, fake_server):
    # What an MCP client gets for the largest page web_fetch answers (protocol.md, section
    # 17): the text the model reads is no larger than the tool's JSON, the JSON comes beside
    # it, and the whole result is about twice the tools' 60,000-byte budget.
    words = 'Words with “quotes”, "escapes" and ü. ' * 6
    body = "".join(f"<p>{i}: {words}</p>" for i in range(2000))
    url = fake_server.route("/big", Reply(body=f"<html><body><article>{body}</article></body>",
                                          headers={"Content-Type": "text/html"}))  # fmt: skip
    sizes: dict[str, int] = {}

    async def scenario() -> None:
        async with connect(tmp_path, env=LOOPBACK_PAGES) as session:
            result = await session.call_tool("web_fetch", {"url": url})
            assert result.structured_content is not None
            assert result.structured_content["truncated"] is True
            as_json = json.dumps(result.structured_content, ensure_ascii=False)
            sizes["text"] = len(text_of(result).encode())
            sizes["json"] = len(as_json.encode())
            sizes["result"] = len(result.model_dump_json(by_alias=True, exclude_none=True))

    run(scenario)
    assert 55_000 < sizes["json"] <= 60_000
    assert sizes["text"] <= sizes["json"]
    assert sizes["result"] <= 2 * 60_000 + 2_000


def test_a_third_party_answer_is_its_json_masked_in_text_and_structure(tmp_path, fake_tool):
    echo = 'cat >/dev/null; printf \'{"success": true, "said": "key %s"}\\n\' "$BRAVE_API_KEY"'
    fake_tool(tmp_path / "system", "leak-tool", call=echo)

    async def scenario() -> None:
        async with connect(tmp_path, env={"BRAVE_API_KEY": KEY}) as session:
            result = await session.call_tool("leak", {})
            assert not result.is_error
            assert json.loads(text_of(result)) == {"success": True, "said": "key ***"}
            assert result.structured_content == {"success": True, "said": "key ***"}

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
            assert text_of(crashed) == "crash failed: it exited with status 2: KeyError: x"
            assert crashed.structured_content is None
            echoed = await session.call_tool("echo", {"query": "still here"})
            assert not echoed.is_error
            assert json.loads(text_of(echoed))["got"] == {"query": "still here"}
            assert echoed.structured_content == json.loads(text_of(echoed))

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
        (
            "signal stopped before it answered: it ran out of memory or crashed, and the system "
            "ended it. Try again with a smaller request, or another tool."
        ),
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
            ("--all", "--exclude", "web_fetch", "--exclude", "extra,web-search-google-tool"),
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


class Starts:
    """Warm workers that only say when they were started."""

    def __init__(self) -> None:
        self.started = threading.Event()

    def start(self) -> None:
        self.started.set()

    def starter(self, _tool: discovery.Tool) -> None:
        return None  # every call as a program


def _guardian(said: bytes) -> subprocess.Popen[bytes]:
    """A guardian that says `said` once it is told to (its stdin closes)."""
    script = f"import sys; sys.stdin.read(); sys.stdout.buffer.write({said!r})"
    return subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)  # fmt: skip


def test_the_list_waits_for_nothing_a_call_needs_and_a_call_for_the_guardian(
    tmp_path, fake_tool, monkeypatch
):
    # Neither wait ends by the clock here: only the guardian's word and the list start them.
    monkeypatch.setattr(mcp_server, "LIST_WAIT", STALL)
    monkeypatch.setattr(mcp_server, "GUARDIAN_WAIT", STALL)
    tools = served(tmp_path, fake_tool, "echo-tool")
    workers, guardian = Starts(), _guardian(b"\n")
    calls = mcp_server.Preparing(guardian, workers)  # type: ignore[arg-type]
    answered: list[bool] = []

    async def call(client: Client) -> None:
        result = await client.call_tool("echo", {"a": 1})
        answered.append(not result.is_error)

    async def scenario() -> None:
        async with Client(mcp_server.build(tools, 5, calls=calls)) as client:
            # Listed while the guardian is not watching yet.
            assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
            async with anyio.create_task_group() as group:
                group.start_soon(call, client)
                await anyio.sleep(0.5)
                assert answered == []  # no tool starts before the guardian watches
                assert not workers.started.is_set()  # nor the warm workers
                assert guardian.stdin is not None
                guardian.stdin.close()  # it watches now

    run(scenario)
    assert answered == [True]
    assert workers.started.wait(HANG_GUARD)  # once the list was answered and it watched
    guardian.wait(HANG_GUARD)


def test_in_process_own_tools_are_called_in_warm_workers(tmp_path, fake_tool):
    assert mcp_server.warm_workers(served(tmp_path, fake_tool, "echo-tool")) is None
    own = discovery.discover([discovery.installation()]).tools
    # No such program: the call can only have run warm.
    own["web_fetch"] = dataclasses.replace(own["web_fetch"], path=tmp_path / "gone")
    workers = mcp_server.warm_workers(own)
    assert workers is not None
    assert workers.entries == sorted(tool.entry for tool in own.values())
    workers.start()

    async def scenario() -> None:
        async with Client(mcp_server.build(own, 30, workers)) as client:
            wrong = await client.call_tool("web_fetch", {"url": 5})
            assert text_of(wrong) == "INVALID_INPUT: field 'url' must be a string, got integer"

    try:
        assert workers.ready.wait(60)
        run(scenario)
    finally:
        workers.close()


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


def own_tools() -> dict[str, discovery.Tool]:
    """This installation's tools, found as `web-tools mcp` finds them."""
    found = discovery.discover([discovery.installation()])
    assert all(tool.entry for tool in found.tools.values())
    return found.tools


def test_a_renderer_bug_leaves_the_json_as_the_text(tmp_path, fake_server, monkeypatch, capsys):
    url = fake_server.route("/notes", Reply(body=ARTICLE, headers={"Content-Type": "text/html"}))
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")

    def broken(*_: object) -> str:
        raise RuntimeError("a renderer bug")

    monkeypatch.setattr("ikigai_web.tools.web_fetch.markdown", broken)

    async def scenario() -> None:
        async with Client(mcp_server.build(own_tools(), 30)) as client:
            result = await client.call_tool("web_fetch", {"url": url})
            assert not result.is_error
            assert json.loads(text_of(result)) == result.structured_content

    run(scenario)
    assert "RuntimeError: a renderer bug" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("answer", "text", "structured"),
    [
        (Answer(True, '{"success": true, "l": [1]}', {"success": True, "l": [1]}),
         '{"success": true, "l": [1]}', {"success": True, "l": [1]}),
        (Answer(False, "API_ERROR: down", {"success": False, "error": "down"}),
         "API_ERROR: down", {"success": False, "error": "down"}),
        (Answer(False, "x: missing required field 'query'", refused=True),
         "x: missing required field 'query'", None),
    ],
    ids=["success", "its-own-failure", "no-json"],
)  # fmt: skip
def test_a_third_party_result_is_the_protocols_text(answer, text, structured):
    tool = discovery.Tool("x", Path("/x-tool"), discovery.USER)
    result = answers.result(tool, answers.own(tool), {}, answer)
    assert (text_of(result), result.structured_content) == (text, structured)
    assert result.is_error is not answer.ok


def test_only_an_own_tools_success_is_rendered():
    fetch = own_tools()["web_fetch"]
    its = answers.own(fetch)
    assert its is not None
    page = {"success": True, "url": "https://e.test/", "title": "", "content": "Hi.",
            "content_type": "text/plain", "total_lines": 1, "truncated": False}  # fmt: skip
    done = answers.result(fetch, its, {"url": "https://e.test/"}, Answer(True, "{}", page))
    assert text_of(done) == "Source: https://e.test/\n\nHi."
    failed = {"success": False, "error": "gone", "error_code": "HTTP_ERROR"}
    error = answers.result(fetch, its, {}, Answer(False, "HTTP_ERROR: gone", failed))
    assert (text_of(error), error.structured_content, error.is_error) == (
        "HTTP_ERROR: gone",
        failed,
        True,
    )


# --- warm workers: this installation's tools forked from a warm parent (issue 42) -----------

PAGE = "<html><head><title>Warm</title></head><body><article><h1>Warm</h1><p>{}</p></article>"
WARM_READY = "own tools run in a warm worker"


def page(text: str) -> Reply:
    return Reply(body=PAGE.format(text), headers={"Content-Type": "text/html; charset=utf-8"})


def logged(tmp_path: Path, text: str, wait: float = 60) -> None:
    """Wait for the server to log `text` (the warm worker is ready: a call then runs in it)."""
    end = time.monotonic() + wait
    while text not in (tmp_path / "server.log").read_text():
        assert time.monotonic() < end, f"the server did not log {text!r} within {wait} s"
        time.sleep(0.05)


def cmdline(pid: int) -> str:
    try:
        return (Path(f"/proc/{pid}") / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def processes() -> dict[str, list[int]]:
    """The processes below this test now: the warm worker's calls (a child of its own whose
    stdin is a pipe, where the worker and its spare have /dev/null), and the tools run as
    programs."""
    found: dict[str, list[int]] = {"warm": [], "warm calls": [], "programs": []}
    for pid in descendants(os.getpid()):
        line = cmdline(pid)
        if "-m ikigai_web.host.warm" in line:
            found["warm"].append(pid)
            with contextlib.suppress(OSError):
                if str(Path(f"/proc/{pid}/fd/0").readlink()).startswith("pipe:"):
                    found["warm calls"].append(pid)
        elif "web-fetch-tool" in line:
            found["programs"].append(pid)
    return found


def test_own_tools_run_warm_and_answer_as_their_programs_do(tmp_path, fake_server):
    seen: list[dict[str, list[int]]] = []

    def served(_: object) -> Reply:
        seen.append(processes())  # while the tool waits for this page
        return page("A page served to a warm worker and to a program.")

    url = fake_server.route("/page.html", served)
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1", "IKIGAI_WEB_FETCH_CACHE_TTL": "0"}
    texts: list[str] = []
    answers_: list[Any] = []

    async def scenario() -> None:
        for args in ((), ("--no-warm",)):
            async with connect(tmp_path, "--only", "web_fetch", *args, env=env) as session:
                if not args:
                    logged(tmp_path, WARM_READY)
                result = await session.call_tool("web_fetch", {"url": url})
                assert not result.is_error, text_of(result)
                texts.append(text_of(result))
                answers_.append(result.structured_content)

    run(scenario)
    warm, cold = seen
    assert warm["warm calls"]
    assert not warm["programs"]
    assert cold["programs"]
    assert not cold["warm"]
    assert texts[0] == texts[1]
    assert answers_[0] == answers_[1]
    assert answers_[0]["title"] == "Warm"


def test_credentials_and_settings_written_after_the_server_started_are_read(
    tmp_path, fake_server, isolated_env
):
    body = json.loads((FIXTURES / "search.json").read_text())
    env = {"BRAVE_SEARCH_API_URL": fake_server.route("/res/v1/web/search", Reply(body=body))}
    url = fake_server.route("/page.html", page("Loopback pages need a setting."))

    async def scenario() -> None:
        async with connect(tmp_path, "--only", "web_search_brave,web_fetch", env=env) as session:
            logged(tmp_path, WARM_READY)
            before = await session.call_tool("web_search_brave", {"query": "ikigai"})
            assert text_of(before).startswith("AUTH_MISSING")
            refused = await session.call_tool("web_fetch", {"url": url})
            assert refused.is_error
            credentials = isolated_env / "credentials.json"
            credentials.write_text(json.dumps({"web_search": {"brave": {"api_key": KEY}}}))
            credentials.chmod(0o600)
            (isolated_env / "web-tools.toml").write_text("fetch_allow_private = true\n")
            after = await session.call_tool("web_search_brave", {"query": "ikigai"})
            assert after.structured_content["provider"] == "brave"
            fetched = await session.call_tool("web_fetch", {"url": url})
            assert not fetched.is_error, text_of(fetched)

    run(scenario)
    [search] = [seen for seen in fake_server.seen if seen.path == "/res/v1/web/search"]
    assert search.headers["X-Subscription-Token"] == KEY


def test_a_page_a_warm_call_fetched_is_cached_for_the_next(tmp_path, fake_server):
    url = fake_server.route("/page.html", page("Fetched once."))
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}

    async def scenario() -> None:
        async with connect(tmp_path, "--only", "web_fetch", env=env) as session:
            logged(tmp_path, WARM_READY)
            first = await session.call_tool("web_fetch", {"url": url})
            again = await session.call_tool("web_fetch", {"url": url})
            cached = again.structured_content
            assert cached == first.structured_content | {"cached": True}

    run(scenario)
    assert [s.path for s in fake_server.seen].count("/page.html") == 1


def _held(fake_server: Any) -> tuple[str, threading.Event, threading.Event, list[list[int]]]:
    """A page whose answer waits for `release`; `asked` is set once a call waits for it, and
    the warm calls running then are noted."""
    asked, release = threading.Event(), threading.Event()
    calls: list[list[int]] = []

    def served(_: object) -> Reply:
        calls.append(processes()["warm calls"])
        asked.set()
        release.wait(60)
        return page("Too late.")

    return fake_server.route("/slow.html", served), asked, release, calls


def test_a_cancelled_warm_call_stops_its_process(tmp_path, fake_server):
    url, asked, release, calls = _held(fake_server)
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}

    async def scenario() -> None:
        async with connect(tmp_path, "--only", "web_fetch", env=env) as session:
            logged(tmp_path, WARM_READY)
            async with anyio.create_task_group() as group:
                group.start_soon(session.call_tool, "web_fetch", {"url": url})
                await anyio.to_thread.run_sync(asked.wait, 60)
                group.cancel_scope.cancel()
            assert await anyio.to_thread.run_sync(gone, calls[0])
            assert (await session.call_tool("web_fetch", {"url": 5})).is_error  # it goes on

    try:
        run(scenario)
    finally:
        release.set()
    assert calls[0]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_nothing_warm_outlives_the_server(tmp_path, fake_server, signum):
    url, asked, release, calls = _held(fake_server)
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}
    warm: list[int] = []

    async def scenario() -> None:
        async with connect(tmp_path, "--only", "web_fetch", env=env) as session:
            logged(tmp_path, WARM_READY)
            async with anyio.create_task_group() as group:
                group.start_soon(session.call_tool, "web_fetch", {"url": url})
                await anyio.to_thread.run_sync(asked.wait, 60)
                warm.extend(processes()["warm"])
                [server] = [p for p in descendants(os.getpid()) if "web-tools mcp" in cmdline(p)]
                os.kill(server, signum)
                group.cancel_scope.cancel()

    try:
        with contextlib.suppress(Exception):  # the client's own end, its server gone
            run(scenario)
    finally:
        release.set()
    assert calls[0]
    assert set(calls[0]) < set(warm)  # the call, the parent (and maybe a spare)
    assert gone(warm)


# Runs a program with a hard limit on its data (RLIMIT_DATA), which it and what it starts keep.
CAPPED = (
    "import os, resource, sys; limit = int(sys.argv[1]); "
    "resource.setrlimit(resource.RLIMIT_DATA, (limit, limit)); os.execv(sys.argv[2], sys.argv[2:])"
)


def test_a_document_too_large_for_a_warm_worker_is_too_large_not_a_signal(tmp_path, fake_server):
    """Issue 55: through MCP the per-call cap stopped a PDF whose content stream inflates to
    gigabytes, but the answer read "killed by signal SIGABRT". The server runs under a hard
    limit on its data (1.5 GiB a process), so a regression cannot take the machine's memory."""
    import hostile_documents

    body = hostile_documents.pdf_content_bomb(1536 << 20)
    url = fake_server.route("/bomb.pdf", Reply(200, body, {"Content-Type": "application/pdf"}))
    env = {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1", "IKIGAI_WEB_MAX_MEMORY_MB": "256"}
    trust.trust(tmp_path)
    params = StdioServerParameters(
        command=sys.executable,
        args=["-c", CAPPED, str(1536 << 20), str(BIN / "web-tools"), "mcp", "--only", "web_fetch"],
        env=server_env(tmp_path, env),
        cwd=tmp_path,
    )
    said: list[str] = []

    async def scenario() -> None:
        with (tmp_path / "server.log").open("w") as log:
            async with (
                stdio_client(params, errlog=log) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                logged(tmp_path, WARM_READY)
                result = await session.call_tool("web_fetch", {"url": url})
                assert result.is_error
                said.append(text_of(result))

    run(scenario)
    assert said[0].startswith("TOO_LARGE: The PDF at http://127.0.0.1:"), said
    assert said[0].endswith(
        "could not be read: page 1 needs more memory than one call may take (256 MiB, "
        "IKIGAI_WEB_MAX_MEMORY_MB), or it is damaged."
    )
