"""The ikigai external-tool protocol's entry point: `--schema`, else one call.

Its top imports nothing but `sys`: the host allows `--schema` 1 s, and even `re` or `json`
(which compile regular expressions at import) cost more than the interpreter's start-up.
The call itself is run by `common.runner`, imported only then.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, NoReturn

    from common.runner import Execute, Markdown


def main(schema: Mapping[str, Any], execute: Execute, markdown: Markdown | None = None) -> NoReturn:
    """Entry point of every tool: run the protocol on this process's argv and streams.

    `markdown` renders an answer for a person (`--format markdown`).
    """
    if sys.argv[1:] == ["--schema"]:
        sys.stdout.write(schema_json(schema) + "\n")
        sys.exit(0)
    from common.runner import Tool
    from common.runner import main as call

    sys.exit(call(Tool(schema, execute, markdown)))


def schema_json(schema: Mapping[str, Any]) -> str:
    """Compact UTF-8 JSON through the stdlib's own C encoder, without importing `json`."""
    try:
        from _json import encode_basestring, make_encoder
    except ImportError:  # pragma: no cover - interpreters without the C accelerator
        import json

        return json.dumps(schema, ensure_ascii=False, separators=(",", ":"))
    # The arguments json.JSONEncoder passes: no circular check, no default, no indent,
    # compact separators, keys unsorted, skipkeys off, allow_nan off.
    encode = make_encoder(None, _no_default, encode_basestring, None, ":", ",", *(False,) * 3)
    return "".join(encode(schema, 0))


def _no_default(value: object) -> object:
    raise TypeError(f"schema value {value!r} is not JSON")
