"""The ikigai external-tool protocol's entry point: `--schema`, else one call.

Its top imports nothing but `sys`: the host allows `--schema` 1 s, and even `re` or `json`
(which compile regular expressions at import) cost more than the interpreter's start-up.
The call itself is run by `ikigai_web.common.runner`, imported only then. Both write to stdout
through `ikigai_web.common.stdout`, and the runner never imports this module: the two form no cycle.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Mapping
    from typing import Any, NoReturn

    from ikigai_web.common.providers import Provider
    from ikigai_web.common.runner import Execute, Markdown


# Whether a call ends its process (common/ending.py) once its answer is out. A process that
# runs calls as functions and ends its own way sets it False (the MCP server's warm worker).
ENDS_PROCESS = True
# Seconds a call's process runs without Python's cycle collector (see `_collect_cycles_later`).
CYCLES_AFTER = 2.0


def main(
    schema: Mapping[str, Any],
    execute: Execute,
    markdown: Markdown | None = None,
    provider: Provider | None = None,
) -> NoReturn:
    """Entry point of every tool: run the protocol on this process's argv and streams.

    `markdown` renders an answer for a person (`--format markdown`); `provider` is a search
    tool's declaration, whose credentials `--help` names.
    """
    if sys.argv[1:] == ["--schema"]:
        from ikigai_web.common.stdout import write_text

        sys.exit(0 if write_text(schema_json(schema) + "\n") else 1)
    from ikigai_web.common.runner import Runnable
    from ikigai_web.common.runner import main as call

    if ENDS_PROCESS:
        _collect_cycles_later()
    code = call(Runnable(schema, execute, markdown, provider))
    import warnings

    # The answer is out: what a thread still running warns reaches no one, as during the call.
    warnings.simplefilter("ignore")
    if ENDS_PROCESS:
        from ikigai_web.common.ending import leave

        leave(code)
    sys.exit(code)


def _collect_cycles_later() -> threading.Timer:
    """Turn the cycle collector off for the call's first CYCLES_AFTER seconds. It runs some
    eighty times while a web-fetch imports its libraries, whose objects live to the end, and
    costs 15 to 20 ms of a 230 ms call (bench_fetch_startup); a page makes next to no cycles
    (25 objects a page on the extraction dev pages), and reference counting frees the rest
    as always. A longer call (a browser, a large document) gets it back, and a document's
    forked reader turns it on for itself (files/forked.py)."""
    import gc
    import threading

    gc.disable()
    timer = threading.Timer(CYCLES_AFTER, gc.enable)
    timer.daemon = True
    timer.start()
    return timer


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
