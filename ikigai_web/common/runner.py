"""The call half of the protocol: one JSON object in, one JSON object out.

This module is the only place where a `ToolError` becomes the JSON failure object, and the
only place that writes a call's answer to stdout. `ikigai_web.common.protocol` imports it only for a
call, never for `--schema`.

Whatever happens, the host gets one answer in time or none at all: a watchdog answers for a
call that outlives its deadline (IKIGAI_WEB_TIMEOUT, and never the host's 30 s), SIGINT and
SIGTERM end the tool quietly, the call's memory is capped (IKIGAI_WEB_MAX_MEMORY_MB) and running
out of it is an answer too, and every string is scrubbed (secrets masked, lone surrogates
replaced) before it is written.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.errors import ErrorCode, ToolError, UsageError
from ikigai_web.common.redact import mask, redact
from ikigai_web.common.settings import load
from ikigai_web.common.stdout import silence, write_text
from ikigai_web.common.text import compact, encodable, encodable_json, visible

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from types import FrameType

    from ikigai_web.common.settings import Settings

Execute = Callable[[dict[str, Any], "Settings"], dict[str, Any]]
# (the call's arguments, the answer) -> text for a person, for `--format markdown`
Markdown = Callable[[dict[str, Any], dict[str, Any]], str]

MAX_INPUT_BYTES = 1 << 20
DEFAULT_BUDGET = 60_000
# The ikigai host kills a call at 30 s; past this the watchdog answers instead of the call.
HARD_LIMIT = 28.5
# Once the settings are read, the watchdog answers this long after the call's own deadline:
# every stage stops by the deadline itself, and the watchdog is for what cannot.
WATCHDOG_GRACE = 1.5
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}
_EXIT_CRASH = 2
_INT_RANGE = (-(1 << 63), (1 << 64) - 1)  # what every JSON reader of the answer takes
_STRING_SHARE = 4  # before results are dropped, no one string may take over 1/4 of the budget
_CUT_ROUNDS = 8
# Bytes to save beyond the excess: the note the cut adds, and each cut string's "…".
_CUT_SLACK = 128
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Runnable(NamedTuple):
    """What the runner needs of a tool: its schema, its call, and how a person reads it."""

    schema: Mapping[str, Any]
    execute: Execute
    markdown: Markdown | None = None


def main(tool: Runnable) -> int:
    """One invocation on this process's argv and streams; returns the exit code."""
    if sys.stdout is None:  # started with stdout closed: no one can read an answer
        return 1
    output = Output(sys.stdout.buffer)
    with output.guarded():
        return run(tool, sys.argv[1:], sys.stdin.buffer, output)


def run(tool: Runnable, argv: list[str], stdin: IO[bytes], output: Output | IO[bytes]) -> int:
    """One invocation; errors go to stderr, the answer to `output`."""
    out = output if isinstance(output, Output) else Output(output)
    name = tool.schema["name"]
    if argv == ["--schema"]:
        return 0 if out.write(compact(tool.schema) + b"\n") else 1
    try:
        invocation = _invocation(tool, argv, stdin)
    except UsageError as exc:
        sys.stderr.write(f"{name}: {exc}\n")
        return 1
    if invocation.text is not None:  # for a person: help, version
        return 0 if write_text(invocation.text) else 1
    return _call(tool, invocation, out)


def _invocation(tool: Runnable, argv: list[str], stdin: IO[bytes]) -> Any:
    from ikigai_web.common.argv import Invocation

    invocation = Invocation({})
    if argv:  # a person at a terminal; a host never passes arguments
        from ikigai_web.common.argv import parse

        invocation = parse(argv, tool.schema, markdown=tool.markdown is not None)
    if invocation.text is None and invocation.needs_stdin:
        call = read_call(stdin.read(MAX_INPUT_BYTES + 1), tool.schema, invocation.call)
        invocation = invocation.with_call(call)
    # A lone surrogate (JSON's "\ud800", or a command line's undecodable byte) can go into
    # no URL, request body or cache key: it becomes U+FFFD, as bad bytes do in any text.
    encodable_json(invocation.call)
    return invocation


def _call(tool: Runnable, invocation: Any, out: Output) -> int:
    try:
        with _quiet_libraries():
            result, budget = answer(tool.execute, invocation.call, tool.schema, out)
        data = render(result, budget)
        text = _markdown(tool, invocation, result) if invocation.markdown else None
    except Exception:  # noqa: BLE001 - a bug: report it on stderr, never as partial JSON
        import traceback

        sys.stderr.write(redact(traceback.format_exc()))
        return _EXIT_CRASH
    if text is None:
        return 0 if out.write(data) else 1
    written = out.write(text.encode("utf-8", "replace"))
    return 0 if written and result["success"] else 1


def _markdown(tool: Runnable, invocation: Any, result: dict[str, Any]) -> str:
    from ikigai_web.common.argv import failure_text

    clean = scrub(result)
    if not clean.get("success"):
        return failure_text(clean)
    assert tool.markdown is not None
    return tool.markdown(invocation.call, clean).rstrip("\n") + "\n"


def read_call(
    data: bytes, schema: Mapping[str, Any], overlay: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Parse stdin into the call's arguments, or raise UsageError (exit 1).

    The standard library's parser, strict about NaN and Infinity (they are not JSON), keeps
    a huge integer as written, so a message can echo it exactly.
    """
    import json

    if len(data) > MAX_INPUT_BYTES:
        raise UsageError(f"input is larger than {MAX_INPUT_BYTES} bytes")
    if not data.strip():
        raise UsageError("empty input: expected one JSON object on stdin")
    try:
        call = json.loads(data, parse_constant=_not_json)
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"input is not valid JSON: {_one_line(exc)}") from None
    if not isinstance(call, dict):
        raise UsageError(f"input must be a JSON object, got {_json_type(call)}")
    call |= overlay or {}
    _check_required(call, schema["parameters"])
    return call


def _not_json(word: str) -> None:
    raise ValueError(f"{word} is not a JSON value")


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


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


def answer(
    execute: Execute, call: dict[str, Any], schema: Mapping[str, Any], output: Output | None = None
) -> tuple[dict[str, Any], int]:
    """The tool's result, or its ToolError as the failure object, and the output budget.

    With the `output` of a real call (not a test's in-process one), the call is bounded by its
    settings first: its watchdog by its deadline, its memory by IKIGAI_WEB_MAX_MEMORY_MB."""
    try:
        settings = load()
        budget = settings.output_budget
        if output is None:
            result = execute(call, settings)
        else:
            output.narrow(settings.timeout)
            with _memory_capped(settings.max_memory_mb):
                result = execute(call, settings)
    except ToolError as err:
        return failure(err, unknown_fields(call, schema)), DEFAULT_BUDGET
    except MemoryError:
        return failure(_out_of_memory(schema["name"])), DEFAULT_BUDGET
    notes = unknown_fields(call, schema) + settings.warnings()
    if notes and result.get("success"):
        extra = [{"code": "IGNORED", "message": note} for note in notes]
        result = result | {"warnings": [*result.get("warnings", []), *extra]}
    return result, budget


@contextlib.contextmanager
def _memory_capped(megabytes: int) -> Iterator[None]:
    """The call's memory capped while it runs (common/procs.py cap_data), and the limit the
    process had put back after: an MCP server or a test run in this process starts more."""
    import resource

    from ikigai_web.common.procs import cap_data

    before = resource.getrlimit(resource.RLIMIT_DATA)
    cap_data(megabytes << 20)
    try:
        yield
    finally:
        with contextlib.suppress(OSError, ValueError):
            resource.setrlimit(resource.RLIMIT_DATA, before)


def _out_of_memory(name: str) -> ToolError:
    """What a call that ran out of its memory answers (the allocation that failed is gone by
    now, so the answer can be written)."""
    try:
        cap = f"{load().max_memory_mb:,} MiB, IKIGAI_WEB_MAX_MEMORY_MB"
    except ToolError:  # the setting is unusable: the cap was never set
        cap = "IKIGAI_WEB_MAX_MEMORY_MB"
    return ToolError(
        ErrorCode.TOO_LARGE,
        f"{name} needed more memory than one call may take ({cap}) and stopped. Ask for "
        "something smaller (another page or document, fewer results), or the user can raise "
        "the setting.",
    )


def unknown_fields(call: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    """A note for each field the tool does not know, with the likely meant one."""
    known = list(schema["parameters"]["properties"])
    notes = []
    for name in (n for n in call if n not in known):
        import difflib

        note = f"'{name}' is not a parameter of {schema['name']} and was ignored"
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        note += f"; did you mean '{close[0]}'?" if close else f"; parameters: {', '.join(known)}."
        notes.append(note)
    return notes


def failure(err: ToolError, notes: list[str] | None = None) -> dict[str, Any]:
    """The one place a ToolError becomes JSON."""
    message = err.message
    if notes and err.code is ErrorCode.INVALID_INPUT:
        message += " (" + "; ".join(notes) + ")"
    out: dict[str, Any] = {
        "success": False,
        "error": redact(message),
        "error_code": err.code.value,
    }
    if err.retry_after is not None:
        out["retry_after"] = err.retry_after
    if err.wall is not None:
        out["wall"] = err.wall
    if err.event is not None:
        out["_event"] = err.event
    return out


def warning(err: ToolError) -> dict[str, str]:
    """A partial failure, shown beside a successful result."""
    return {"code": err.code.value, "message": redact(err.message)}


def scrub(value: Any) -> Any:
    """`value` safe and writable: every registered secret masked in every string, lone
    surrogates replaced, terminal escapes, bidi controls and invisible characters dropped
    (ikigai_web.common.text.visible: the one sanitizer of every text a tool prints), numbers JSON
    cannot carry turned into null or text."""
    if isinstance(value, str):
        return visible(encodable(mask(value)))
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value if _INT_RANGE[0] <= value <= _INT_RANGE[1] else str(value)
    return value


def render(result: dict[str, Any], budget: int) -> bytes:
    """Compact JSON plus newline, never over `budget` bytes.

    Too large: first no single string may take over a quarter of the budget (one huge
    snippet must not empty the answer), then trailing results go (never the first), then the
    longest strings are cut; each step says so in `warnings`.
    """
    kept = scrub(result)
    data = _dumps(kept)
    if len(data) <= budget:
        return data
    for step in (_cut_oversized, _drop_results, _cut_longest):
        kept, data = step(kept, budget)
        if len(data) <= budget:
            return data
    return _over_budget(budget)


def _dumps(value: Any) -> bytes:
    return compact(value) + b"\n"


def _cut_oversized(result: dict[str, Any], budget: int) -> tuple[dict[str, Any], bytes]:
    most = budget // _STRING_SHARE
    cut = _cut_strings(result, most)
    if cut is not result:
        cut = _note(cut, f"text longer than {most} characters was cut to fit the answer")
    return cut, _dumps(cut)


def _drop_results(result: dict[str, Any], budget: int) -> tuple[dict[str, Any], bytes]:
    results = result.get("results")
    kept, data = result, _dumps(result)
    if not isinstance(results, list):
        return kept, data
    # The first result stays: cutting its text (the next step) tells the reader more than
    # an empty list would.
    for count in range(len(results) - 1, 0, -1):
        note = f"{len(results) - count} results dropped to fit the {budget}-byte output"
        kept = _note(result | {"results": results[:count], "count": count}, note)
        data = _dumps(kept)
        if len(data) <= budget:
            break
    return kept, data


def _cut_longest(result: dict[str, Any], budget: int) -> tuple[dict[str, Any], bytes]:
    kept, data = result, _dumps(result)
    for _ in range(_CUT_ROUNDS):
        if len(data) <= budget:
            break
        most = _level(_sizes(kept), len(data) - budget + _CUT_SLACK)
        kept = _cut_strings(kept, most, _size)
        data = _dumps(_note(kept, "the longest text was cut to fit the answer"))
    return kept, data


def _level(sizes: list[int], excess: int) -> int:
    """The size to cut every larger string to so as to save `excess` bytes: the largest
    strings are cut first, and small ones (a result's URL, a warning's code) are kept whole
    while the large ones can give up enough."""
    ranked = sorted(sizes, reverse=True)
    saved = 0
    for count, length in enumerate(ranked, start=1):
        below = ranked[count] if count < len(ranked) else 0
        if saved + (length - below) * count >= excess:
            return length - math.ceil((excess - saved) / count)
        saved += (length - below) * count
    return 0


def _note(result: dict[str, Any], message: str) -> dict[str, Any]:
    warnings = [w for w in result.get("warnings", []) if w.get("message") != message]
    return result | {"warnings": [*warnings, {"code": "TRUNCATED", "message": message}]}


def _cut_strings(value: Any, most: int, size: Callable[[str], int] = len) -> Any:
    """`value` with every string over `most` (characters, or as `size` measures) cut to it,
    "…" included; a string measured in bytes keeps the share of its characters that fits."""
    if isinstance(value, str):
        measured = size(value)
        if measured <= most:
            return value
        return value[: max(0, len(value) * most // measured - 1)] + "…"
    if isinstance(value, dict):
        cut = {k: _cut_strings(v, most, size) for k, v in value.items()}
        return value if all(cut[k] is value[k] for k in value) else cut
    if isinstance(value, list):
        items = [_cut_strings(v, most, size) for v in value]
        return value if all(a is b for a, b in zip(items, value, strict=True)) else items
    return value


def _sizes(value: Any) -> list[int]:
    if isinstance(value, str):
        return [_size(value)]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _sizes(v)]
    if isinstance(value, list):
        return [n for v in value for n in _sizes(v)]
    return []


def _size(text: str) -> int:
    """The bytes `text` takes in the answer: escapes and UTF-8 make it more than its length."""
    return len(compact(text)) - 2


def _over_budget(budget: int) -> bytes:
    # Only reachable through a bug: tools size their own content to the budget.
    err = ToolError(ErrorCode.PARSE_ERROR, f"the answer did not fit the {budget}-byte budget")
    return _dumps(failure(err))


class Output:
    """stdout, written once: by the call, or by the watchdog when the call overruns.

    SIGINT and SIGTERM end the process quietly (exit 130 / 143), but never halfway through
    writing the answer: then they wait for the write to finish.
    """

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.lock = threading.Lock()
        self.written = False
        self.writing = False
        self.pending: int | None = None
        self.watchdog: threading.Timer | None = None
        self.watching = threading.Lock()
        self.latest = math.inf  # the watchdog's time (time.monotonic) at the latest

    def write(self, data: bytes) -> bool:
        """Write `data` unless an answer was written already; False when it could not be."""
        with self.lock:
            if self.written:
                return False
            self.written = self.writing = True
            try:
                self.stream.write(data)
                self.stream.flush()
            except (OSError, ValueError):  # the reader has gone, or the disk is full
                silence(self.stream)
                return False  # nobody is left to tell
            finally:
                self.writing = False
        if self.pending is not None:
            os._exit(128 + self.pending)
        return True

    @contextlib.contextmanager
    def guarded(self, limit: float | None = None) -> Iterator[None]:
        """Quiet signals and a watchdog at `limit` seconds (HARD_LIMIT), for one call; the
        call's own deadline brings the watchdog nearer (`narrow`, from `answer` and through
        common/watch.py)."""
        from ikigai_web.common import watch

        limit = HARD_LIMIT if limit is None else limit
        saved = {signum: signal.signal(signum, self._stop) for signum in _SIGNALS}
        self.latest = time.monotonic() + limit
        self._watch(self.latest, f"within {limit:g} s, and the ikigai host stops waiting at 30 s")
        watch.watching(self.narrow)
        try:
            yield
        finally:
            watch.watching(None)
            if self.watchdog is not None:
                self.watchdog.cancel()
            for signum, handler in saved.items():
                signal.signal(signum, handler)

    def narrow(self, deadline: float) -> None:
        """The watchdog WATCHDOG_GRACE after a deadline of `deadline` seconds from now (the
        call's IKIGAI_WEB_TIMEOUT), never later than `guarded`'s limit."""
        end = time.monotonic() + deadline + WATCHDOG_GRACE
        if self.watchdog is not None and end < self.latest:
            self._watch(end, f"by its {deadline:g} s deadline (IKIGAI_WEB_TIMEOUT)")

    def _watch(self, at: float, what: str) -> None:
        with self.watching:  # calls run providers on threads (web_search_auto)
            if self.watchdog is not None:
                self.watchdog.cancel()
            self.watchdog = threading.Timer(max(at - time.monotonic(), 0), self._expire, (what,))
            self.watchdog.daemon = True
            self.watchdog.start()

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        if self.writing:
            self.pending = signum
            return
        os._exit(128 + signum)

    def _expire(self, what: str) -> None:
        err = ToolError(
            ErrorCode.NETWORK_ERROR,
            f"timeout: the call did not finish {what}; try again later, or a smaller page or query",
        )
        if self.write(_dumps(failure(err))):
            os._exit(0)


class _Sink:
    """A stderr that keeps nothing: libraries write warnings and log records (through
    logging's last resort) to whatever sys.stderr is when they write."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


def _quiet_libraries() -> contextlib.AbstractContextManager[object]:
    """A tool's stderr is for its own one-line errors and crash reports only: while a tool
    runs, what libraries write there goes nowhere (without importing logging to say so,
    which a search never needs)."""
    return contextlib.redirect_stderr(_Sink())
