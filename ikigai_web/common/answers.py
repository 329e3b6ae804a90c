"""What every tool's answer shares, however it is read: who reads a rendered answer (a person
at a shell, or the model behind an MCP client), and the JSON Schema of what every answer may
carry (`warnings`, `cached`) and of a failure, from which each tool builds the MCP
`outputSchema` it keeps beside its `SCHEMA` (protocol.md, sections 6-8 and 17).

Imported by every tool module: it imports nothing but the error codes.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from ikigai_web.common.errors import WALLS, ErrorCode


class Reader(NamedTuple):
    """Who a rendered answer is for: a person (`--format markdown`), who runs the command
    again, or the model of an MCP client, which calls `tool` again."""

    tool: str = ""  # the tool's name as the model calls it; empty for a person

    def next_part(self, parameter: str, value: int) -> str:
        """How to get what follows: the flag a person adds, the call a model makes."""
        if not self.tool:
            return f"run it again with --{parameter.replace('_', '-')} {value}"
        return f"call {self.tool} again with the same arguments but {parameter} {value}"


PERSON = Reader()

WARNINGS: dict[str, Any] = {
    "type": "array",
    "description": "What went partly wrong, or was done differently than asked.",
    "items": {
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "IGNORED, TRUNCATED, or an error code."},
            "message": {"type": "string"},
        },
        "required": ["code", "message"],
    },
}
CACHED: dict[str, Any] = {
    "type": "boolean",
    "const": True,
    "description": "Present when the answer came from the local cache.",
}
_EVENT: dict[str, Any] = {
    "type": "object",
    "description": "For the user: how to set up or replace a credential, or when to retry.",
    "properties": {
        "kind": {"type": "string", "const": "config_required"},
        "content": {"type": "string", "description": "The instructions, for a person."},
        "data": {
            "type": "object",
            "properties": {
                "tool": {"type": "string"},
                "credentials": {"type": "array", "items": {"type": "string"}},
                "env": {"type": "array", "items": {"type": "string"}},
                "signup_url": {"type": "string"},
                "error_type": {"type": "string", "enum": ["auth_invalid", "rate_limit"]},
                "alternative_tools": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["tool", "credentials", "env", "signup_url"],
        },
    },
    "required": ["kind", "content", "data"],
}
FAILURE: dict[str, Any] = {
    "type": "object",
    "description": "The tool failed; the result is an error (isError).",
    "properties": {
        "success": {"type": "boolean", "const": False},
        "error": {"type": "string", "description": "What happened, and what to do about it."},
        "error_code": {"type": "string", "enum": [code.value for code in ErrorCode]},
        "retry_after": {"type": "integer", "description": "Seconds to wait before retrying."},
        "wall": {
            "type": "string",
            "enum": [*WALLS],
            "description": "web-fetch: the page is a wall, not the content, and which.",
        },
        "_event": _EVENT,
    },
    "required": ["success", "error", "error_code"],
}


def output_schema(
    description: str, properties: dict[str, Any], required: list[str]
) -> dict[str, Any]:
    """A tool's outputSchema: its success object (`properties`, of which `required` always
    appear, beside `success`, `warnings` and `cached`) or the failure every tool reports."""
    success = {
        "type": "object",
        "description": description,
        "properties": {
            "success": {"type": "boolean", "const": True},
            **properties,
            "warnings": WARNINGS,
            "cached": CACHED,
        },
        "required": ["success", *required],
    }
    return {"type": "object", "oneOf": [success, FAILURE]}
