"""`web-tools mcp`: the discovered tools as one MCP server over stdio (official MCP SDK).

The low-level `Server` fits tools whose schemas are only known at run time: each tool's
`parameters` is passed through as the MCP `inputSchema`, untouched, and the tool itself
checks the arguments, with messages written for the model. Only `web-tools mcp` imports
this module, so `list` and `doctor` never load the SDK.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import traceback
from functools import partial
from typing import TYPE_CHECKING, Any, BinaryIO

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp.types import jsonrpc_message_adapter

from ikigai_web.common import __version__
from ikigai_web.host import answers, process
from ikigai_web.host.calls import Answer, call, mask_every_credential
from ikigai_web.host.listing import MCP_NAME
from ikigai_web.host.workers import Warm

if TYPE_CHECKING:
    import subprocess
    from collections.abc import AsyncIterator, Mapping

    from mcp.server.context import ServerRequestContext

    from ikigai_web.host.discovery import Tool

# Tool calls run in threads of their own, at most this many at once (more wait their turn):
# anyio's shared threads (40) also read stdin, and calls must never starve the reading of a
# ping or a tools/list. The wire has its own few.
CALLS = anyio.CapacityLimiter(512)
IO = anyio.CapacityLimiter(4)
MAX_LINE = 4 * 1024 * 1024  # bytes of one message; tool arguments are small
PARSE_ERROR, INVALID_REQUEST = -32700, -32600
GUARDIAN_WAIT = 5.0  # seconds: the most the server waits for its guardian to watch
# Seconds after the server starts serving when the warm workers start even if no client has
# asked for the tools' list (every client does, at once) nor called a tool.
LIST_WAIT = 3.0
_TOO_LONG = "\x00too long"


def serve(
    tools: Mapping[str, Tool], timeout: float, *, warm: bool = True, output_schemas: bool = True
) -> None:  # pragma: no cover
    """Serve `tools` on this process's stdin and stdout until the client hangs up; this
    installation's own tools in warm workers (ikigai_web/host/workers.py) unless `warm` is
    False; their output schemas listed unless `output_schemas` is False.

    Nothing it started outlives it: on SIGTERM, SIGINT or SIGHUP every process below it is
    killed at once, and so when stdin closes; if it is killed outright (SIGKILL), the kernel
    kills each running tool (parent-death signal) and the guardian (ikigai_web/host/guardian.py) the
    rest.

    Only a real process can own stdin and stdout: tests/host/test_host_mcp.py runs this one as a
    subprocess, where coverage does not follow.
    """
    mask_every_credential()
    if process.adopt_orphans():
        process.reap_adopted()  # else each orphan it adopts stays a zombie
    guardian = process.start_guardian()
    keep = frozenset({guardian.pid})
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, partial(_stopped, keep))
    wire = Wire(keep)
    workers = warm_workers(tools) if warm else None
    calls = Preparing(guardian, workers)
    server = build(tools, timeout, workers, output_schemas=output_schemas, calls=calls)

    async def main() -> None:
        async with stdio_server(stdin=wire.lines(), stdout=wire) as (read, write):  # type: ignore[arg-type]
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        process.stop_all(keep)


class Preparing:
    """What only a call needs, made ready beside the tools' list rather than before it: the
    guardian watching (no tool starts before it does, so that a SIGKILL of the server still
    ends every tool; a server that serves anyway when it is slow still kills its tools on any
    signal it can catch), then the warm workers, started once the list is answered, a call
    comes or LIST_WAIT has passed, so that their start does not compete with the list for
    the CPU (bench_mcp: from start to the list's answer, on a busy machine above all)."""

    def __init__(self, guardian: subprocess.Popen[bytes] | None, workers: Warm | None) -> None:
        self.guardian, self.workers = guardian, workers
        self.watching = threading.Event()
        self.wanted = threading.Event()
        threading.Thread(target=self._prepare, name="preparing calls", daemon=True).start()

    def _prepare(self) -> None:
        try:
            if self.guardian is not None:
                process.guardian_watching(self.guardian, GUARDIAN_WAIT)
        finally:  # a guardian that failed must not hold every call up GUARDIAN_WAIT
            self.watching.set()
        if self.workers is not None:  # once the guardian watches, which then sees them
            self.wanted.wait(LIST_WAIT)
            self.workers.start()

    def listed(self) -> None:
        """The tools' list is answered: the warm workers may start."""
        self.wanted.set()

    async def before_call(self) -> None:
        """Wait, if need be, for the guardian to watch (at most GUARDIAN_WAIT seconds)."""
        self.wanted.set()
        if not self.watching.is_set():
            wait = partial(self.watching.wait, GUARDIAN_WAIT + 1)
            await anyio.to_thread.run_sync(wait, abandon_on_cancel=True, limiter=CALLS)


def _stopped(keep: frozenset[int], signum: int, _frame: object) -> None:  # pragma: no cover
    process.stop_all(keep)
    os._exit(128 + signum)


class Wire:  # pragma: no cover - fds 0 and 1 of a real server: tests/host/test_mcp_hostile.py
    """The server's stdin and stdout, taken off fds 0 and 1 (stray writes to stdout go to
    stderr, reads of stdin find nothing), read and written in threads of their own so busy
    tool calls never hold them up. A line that is no JSON-RPC message is answered with the
    JSON-RPC error it deserves, here, instead of being dropped unanswered."""

    def __init__(self, keep: frozenset[int] = frozenset()) -> None:
        self.keep = keep  # processes of the server's own that survive its end (the guardian)
        self.input = os.fdopen(os.dup(0), "rb")
        self.output = os.fdopen(os.dup(1), "wb")
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(2, 1)
        os.close(null)
        self.lock = threading.Lock()

    async def lines(self) -> AsyncIterator[str]:
        reader = _LineReader(self.input)
        while True:
            line = await anyio.to_thread.run_sync(reader.next, abandon_on_cancel=True, limiter=IO)
            if line is None:  # the client hung up: calls still running have no one to answer
                process.stop_all(self.keep)
                return
            answer = malformed(line)
            if answer is None:
                yield line
            elif answer:
                await self.write(answer + "\n")

    async def write(self, text: str) -> None:
        await anyio.to_thread.run_sync(self._write, text, limiter=IO)

    async def flush(self) -> None:
        pass  # every write is flushed

    def _write(self, text: str) -> None:
        with self.lock:
            self.output.write(text.encode("utf-8", "replace"))
            self.output.flush()


class _LineReader:
    """Lines of at most MAX_LINE bytes; a longer one is read to its end and reported."""

    def __init__(self, stream: BinaryIO) -> None:
        self.buffered = stream

    def next(self) -> str | None:
        line = self.buffered.readline(MAX_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := self.buffered.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            return _TOO_LONG
        return line.decode("utf-8", "replace")


def malformed(line: str) -> str | None:
    """None when `line` is a message the SDK reads; else the JSON-RPC error line to answer
    with ("" when none is due: a blank line, or a notification, which is never answered)."""
    if not line.strip():
        return ""
    if line is _TOO_LONG:
        return _error(None, PARSE_ERROR, f"Parse error: a message longer than {MAX_LINE} bytes")
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON")
    return _invalid(line, data if isinstance(data, dict) else {})


def _invalid(line: str, request: dict[str, Any]) -> str | None:
    """`malformed` for a line that is JSON (`request` when it is an object)."""
    if "method" in request and "id" in request and not _is_id(request["id"]):
        # The SDK would take it for a notification and never answer: the client would wait.
        return _error(None, INVALID_REQUEST, "Invalid Request: an id is a string or an integer")
    try:
        jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValueError:
        pass
    else:
        return None
    if "method" in request and "id" not in request:
        return ""  # a notification: JSON-RPC answers none, even a bad one
    ident = request.get("id")
    return _error(ident if _is_id(ident) else None, INVALID_REQUEST,
                  "Invalid Request: not a JSON-RPC message MCP reads")  # fmt: skip


def _is_id(value: object) -> bool:
    """Whether `value` is an id MCP allows: a string or an integer, never null."""
    return isinstance(value, str | int) and not isinstance(value, bool)


def _error(ident: str | int | None, code: int, message: str) -> str:
    error = {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}
    return json.dumps(error)


def warm_workers(tools: Mapping[str, Tool]) -> Warm | None:
    """The warm workers for the own tools among `tools`; None when there is none, or off
    Linux (they are made of its process controls)."""
    entries = {tool.entry for tool in tools.values() if tool.entry}
    return Warm(entries) if entries and sys.platform.startswith("linux") else None


def build(
    tools: Mapping[str, Tool],
    timeout: float,
    workers: Warm | None = None,
    *,
    output_schemas: bool = True,
    calls: Preparing | None = None,
) -> Server[Any]:
    """The MCP server for `tools`: a call runs the tool with at most `timeout` seconds, in
    `workers` when it is one of theirs, once `calls` is ready for it; `output_schemas` False
    lists them without theirs."""
    served = servable(tools)
    owned = {name: answers.own(tool) for name, tool in served.items()}
    listed = [answers.listing(tool, owned[name], output_schema=output_schemas)
              for name, tool in served.items()]  # fmt: skip
    listing = types.ListToolsResult(tools=listed)

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if calls is not None:
            calls.listed()
        return listing

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = served.get(params.name)
        if tool is None:
            known = ", ".join(served) or "none"
            raise MCPError(types.INVALID_PARAMS, f"No tool {params.name!r}; tools: {known}.")
        arguments = params.arguments or {}
        if calls is not None:
            await calls.before_call()
        start = workers.starter(tool) if workers is not None else None
        answer = await _run(tool, arguments, timeout, start)
        return answers.result(tool, owned[tool.name], arguments, answer)

    return Server(
        "ikigai-web-tools",
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def servable(tools: Mapping[str, Tool]) -> dict[str, Tool]:
    """The tools whose names MCP accepts; the others are named on stderr, the server's log."""
    for name, tool in tools.items():
        if not MCP_NAME.match(name):
            sys.stderr.write(f"web-tools mcp: {tool.path} left out: {name!r} is no MCP name\n")
    return {name: tool for name, tool in tools.items() if MCP_NAME.match(name)}


async def _run(
    tool: Tool, arguments: dict[str, Any], seconds: float, start: process.Start | None
) -> Answer:
    cancel = threading.Event()
    try:
        run = partial(call, tool, arguments, seconds, tied=True, cancel=cancel, start=start)
        return await anyio.to_thread.run_sync(run, limiter=CALLS, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        cancel.set()  # the client cancelled the call: the tool stops now, not at its deadline
        raise
    except Exception:  # noqa: BLE001 - the server outlives any tool, and any bug of ours
        sys.stderr.write(traceback.format_exc())
        return Answer(ok=False, text=f"web-tools could not run {tool.name}; see the server's log.")
