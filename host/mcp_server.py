"""`web-tools mcp`: the discovered tools as one MCP server over stdio (official MCP SDK).

The low-level `Server` fits tools whose schemas are only known at run time: each tool's
`parameters` is passed through as the MCP `inputSchema`, untouched, and the tool itself
checks the arguments, with messages written for the model. Only `web-tools mcp` imports
this module, so `list` and `doctor` never load the SDK.
"""

from __future__ import annotations

import re
import sys
import traceback
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from common import __version__
from host.calls import Answer, call

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mcp.server.context import ServerRequestContext

    from host.discovery import Tool

# The tool names MCP allows (SEP-986); an ikigai file name may give others.
MCP_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


def serve(tools: Mapping[str, Tool], timeout: float) -> None:  # pragma: no cover
    """Serve `tools` on this process's stdin and stdout until the client hangs up.

    Only a real process can own stdin and stdout: tests/test_host_mcp.py runs this one as a
    subprocess, where coverage does not follow.
    """
    server = build(tools, timeout)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def build(tools: Mapping[str, Tool], timeout: float) -> Server[Any]:
    """The MCP server for `tools`: a call runs the tool with at most `timeout` seconds."""
    served = servable(tools)
    listing = types.ListToolsResult(tools=[describe(tool) for tool in served.values()])

    async def list_tools(
        _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        _ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = served.get(params.name)
        if tool is None:
            known = ", ".join(served) or "none"
            raise MCPError(types.INVALID_PARAMS, f"No tool {params.name!r}; tools: {known}.")
        answer = await _run(tool, params.arguments or {}, timeout)
        return types.CallToolResult(
            content=[types.TextContent(text=answer.text)], is_error=not answer.ok
        )

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


def describe(tool: Tool) -> types.Tool:
    return types.Tool(name=tool.name, description=tool.description, input_schema=tool.parameters)


async def _run(tool: Tool, arguments: dict[str, Any], seconds: float) -> Answer:
    try:
        return await anyio.to_thread.run_sync(partial(call, tool, arguments, seconds))
    except Exception:  # noqa: BLE001 - the server outlives any tool, and any bug of ours
        sys.stderr.write(traceback.format_exc())
        return Answer(ok=False, text=f"web-tools could not run {tool.name}; see the server's log.")
