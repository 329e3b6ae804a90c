"""The call half of the protocol: one JSON object in, one JSON object out.

This module is the only place where a `ToolError` becomes the JSON failure object, and the
only place that writes a call's answer to stdout. `common.protocol` imports it only for a
call, never for `--schema`.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Callable, Mapping
from typing import IO, Any

import orjson

from common.errors import ErrorCode, ToolError, UsageError
from common.redact import redact

Execute = Callable[[dict[str, Any]], dict[str, Any]]

MAX_INPUT_BYTES = 1 << 20
DEFAULT_BUDGET = 60_000
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}
_EXIT_CRASH = 2


def run(
    schema: Mapping[str, Any],
    execute: Execute,
    argv: list[str],
    stdin: IO[bytes],
    stdout: IO[bytes],
) -> int:
    """One invocation; returns the exit code. Errors go to stderr, the answer to stdout."""
    if argv == ["--schema"]:
        stdout.write(orjson.dumps(schema) + b"\n")
        return 0
    if argv:
        sys.stderr.write(
            f"{schema['name']}: unexpected arguments {argv!r}: run with --schema or none\n"
        )
        return 1
    try:
        call = read_call(stdin.read(MAX_INPUT_BYTES + 1), schema)
    except UsageError as exc:
        sys.stderr.write(f"{schema['name']}: {exc}\n")
        return 1
    try:
        result, budget = answer(execute, call)
    except Exception:  # noqa: BLE001 - a bug: report it on stderr, never as partial JSON
        sys.stderr.write(redact(traceback.format_exc()))
        return _EXIT_CRASH
    stdout.write(render(result, budget))
    stdout.flush()
    return 0


def read_call(data: bytes, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse stdin into the call's arguments, or raise UsageError (exit 1)."""
    if len(data) > MAX_INPUT_BYTES:
        raise UsageError(f"input is larger than {MAX_INPUT_BYTES} bytes")
    if not data.strip():
        raise UsageError("empty input: expected one JSON object on stdin")
    try:
        call = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise UsageError(f"input is not valid JSON: {exc}") from None
    if not isinstance(call, dict):
        raise UsageError(f"input must be a JSON object, got {_json_type(call)}")
    _check_required(call, schema["parameters"])
    return call


def _check_required(call: dict[str, Any], parameters: Mapping[str, Any]) -> None:
    for name in parameters.get("required", []):
        if name not in call:
            raise UsageError(f"missing required field '{name}'")
        expected = parameters["properties"][name].get("type", "string")
        if not _has_type(call[name], expected):
            got = _json_type(call[name])
            raise UsageError(f"field '{name}' must be {_article(expected)}, got {got}")


def _has_type(value: object, expected: str) -> bool:
    if isinstance(value, bool) and expected != "boolean":
        return False
    return isinstance(value, _JSON_TYPES[expected])


def _json_type(value: object) -> str:
    names = {bool: "boolean", int: "integer", float: "number", str: "string"}
    names |= {list: "array", dict: "object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def answer(execute: Execute, call: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The tool's result, or its ToolError as the failure object, and the output budget."""
    try:
        budget = output_budget()
        return execute(call), budget
    except ToolError as err:
        return failure(err), DEFAULT_BUDGET


def failure(err: ToolError) -> dict[str, Any]:
    """The one place a ToolError becomes JSON."""
    out: dict[str, Any] = {
        "success": False,
        "error": redact(err.message),
        "error_code": err.code.value,
    }
    if err.retry_after is not None:
        out["retry_after"] = err.retry_after
    if err.event is not None:
        out["_event"] = err.event
    return out


def warning(err: ToolError) -> dict[str, str]:
    """A partial failure, shown beside a successful result."""
    return {"code": err.code.value, "message": redact(err.message)}


def render(result: dict[str, Any], budget: int) -> bytes:
    """Compact JSON plus newline, never over `budget` bytes: trailing results are dropped."""
    data = orjson.dumps(result) + b"\n"
    results = result.get("results")
    if len(data) <= budget or not isinstance(results, list):
        return data if len(data) <= budget else _over_budget(budget)
    kept = dict(result, results=list(results))
    while kept["results"] and len(data) > budget:
        kept["results"].pop()
        kept["count"] = len(kept["results"])
        note = f"{len(results) - kept['count']} results dropped to fit the {budget}-byte output"
        kept["warnings"] = [*result.get("warnings", []), {"code": "TRUNCATED", "message": note}]
        data = orjson.dumps(kept) + b"\n"
    return data if len(data) <= budget else _over_budget(budget)


def _over_budget(budget: int) -> bytes:
    # Only reachable through a bug: tools size their own content to the budget.
    err = ToolError(ErrorCode.PARSE_ERROR, f"the answer did not fit the {budget}-byte budget")
    return orjson.dumps(failure(err)) + b"\n"


def output_budget() -> int:
    """The output budget from settings (imported lazily: only a call needs it)."""
    from common.settings import load

    return load().output_budget
