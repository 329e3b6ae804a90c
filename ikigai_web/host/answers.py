"""What an MCP client gets of a tool: its entry in the tool list, and each answer as a result
(protocol.md, section 17).

This installation's own tools say of themselves, in their modules, beside their `SCHEMA`, what
the protocol's `--schema` cannot carry: a title for people, the JSON Schema of their answers
(`OUTPUT_SCHEMA`) and how an answer reads (`markdown`, the renderer of `--format markdown`,
here for the model). Their result is that text, for the model and the person watching, with
the tool's JSON as `structuredContent`, for programs. Any other tool is served as the protocol
has it: its JSON is the text (and, when it is an object, the structuredContent too).
"""

from __future__ import annotations

import importlib
import sys
import traceback
from typing import TYPE_CHECKING, Any, NamedTuple

from mcp import types

from ikigai_web.common.answers import Reader
from ikigai_web.common.errors import ErrorCode
from ikigai_web.common.redact import mask

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ikigai_web.host.calls import Answer
    from ikigai_web.host.discovery import Tool

    Render = Callable[[Mapping[str, Any], Mapping[str, Any], Reader], str]


class Own(NamedTuple):
    """What one of this installation's tools says of itself for MCP clients."""

    title: str
    output_schema: dict[str, Any]
    render: Render


def own(tool: Tool) -> Own | None:
    """What `tool` says of itself when it is this installation's own (`Tool.entry`); None
    for any other program, whose module this process may not even have."""
    if not tool.entry:
        return None
    module = importlib.import_module(tool.entry.partition(":")[0])
    return Own(module.TITLE, module.OUTPUT_SCHEMA, module.markdown)


def listing(tool: Tool, its: Own | None, *, output_schema: bool = True) -> types.Tool:
    """The tool as `tools/list` shows it: its own description and parameters, unchanged;
    for an own tool also its title, outputSchema (unless `output_schema` is False: a client
    that forwards it to the model pays for it in every request) and annotations. Every own
    tool reads the web and changes nothing (its cache aside): read-only, open-world."""
    if its is None:
        return types.Tool(
            name=tool.name, description=tool.description, input_schema=tool.parameters
        )
    hints = types.ToolAnnotations(title=its.title, read_only_hint=True, open_world_hint=True)
    return types.Tool(
        name=tool.name,
        title=its.title,
        description=tool.description,
        input_schema=tool.parameters,
        output_schema=its.output_schema if output_schema else None,
        annotations=hints,
    )


def result(
    tool: Tool, its: Own | None, arguments: Mapping[str, Any], answer: Answer
) -> types.CallToolResult:
    """The MCP result of one call: the answer's text (an own tool's success rendered for
    the model), and the tool's JSON object, when it gave one, as structuredContent. Input an
    own tool refused as unusable (a wrong type, a missing field, too large) is INVALID_INPUT
    like any other bad value: one shape for every bad input."""
    if its is not None and answer.refused:
        answer = refused_input(tool, answer)
    structured = masked(answer.result) if answer.result is not None else None
    text = answer.text
    if its is not None and answer.ok and structured is not None:
        text = rendered(tool, its, arguments, structured) or text
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured,
        is_error=not answer.ok,
    )


def refused_input(tool: Tool, answer: Answer) -> Answer:
    """The program's one line on unusable input (protocol.md, section 5) as the failure an
    `INVALID_INPUT` value gets: `CODE: message`, and the failure's JSON."""
    from ikigai_web.common.errors import ToolError
    from ikigai_web.common.runner import failure
    from ikigai_web.host.calls import Answer, failure_text

    message = answer.text.removeprefix(f"{tool.name}: ")
    result = failure(ToolError(ErrorCode.INVALID_INPUT, message))
    return Answer(ok=False, text=failure_text(tool.name, result), result=result)


def rendered(
    tool: Tool, its: Own, arguments: Mapping[str, Any], structured: Mapping[str, Any]
) -> str:
    """The answer as the model reads it; "" when the renderer fails (a bug of ours, in the
    server's log): the JSON, which says it all too, is read instead."""
    try:
        return its.render(arguments, structured, Reader(tool.name)).rstrip("\n")
    except Exception:  # noqa: BLE001 - the answer must reach the client whatever our bug
        sys.stderr.write(traceback.format_exc())
        return ""


def masked(value: Any) -> Any:
    """`value` with every credential this machine holds masked in every string: a tool
    may echo one, in its JSON as in its text."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {mask(k): masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    return value
