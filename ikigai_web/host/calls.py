"""One call through the protocol: arguments as JSON on stdin, the tool's JSON back.

Every way a tool can fail becomes an `Answer` with text written for the model that reads
it: the tool's own error and its `config_required` instructions, its one-line complaint
about the input (exit 1), or what went wrong with the program itself, in words: of what it
wrote on stderr, only its last line (the error a traceback ends with, never the traceback),
and for a program the system ended (out of memory, a crash) neither the signal's name nor
what an allocator or the interpreter printed as it died.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ikigai_web.common.redact import mask
from ikigai_web.host import process
from ikigai_web.host.discovery import exit_text

if TYPE_CHECKING:
    import threading
    from collections.abc import Mapping

    from ikigai_web.host.discovery import Tool

# The ikigai host gives a call 30 s and reads at most 64 KiB of its answer.
CALL_TIMEOUT = 30.0
ANSWER_LIMIT = 64 * 1024
_STDERR_SHOWN = 500  # characters of a program's last line on stderr


@dataclass(frozen=True)
class Answer:
    """`text` is what the model reads; `result` the tool's JSON object when it gave one;
    `refused` when the program refused the input as unusable (exit 1 and one line)."""

    ok: bool
    text: str
    result: dict[str, Any] | None = None
    refused: bool = False


def mask_every_credential() -> None:
    """Have every answer's text masked of every credential this machine holds, wherever it
    is set, not only of those the own tools would use: a third-party tool may print any."""
    from ikigai_web.common.credentials import register_all
    from ikigai_web.tools.web_search_searxng import AUTH

    register_all((AUTH,))


def call(
    tool: Tool,
    arguments: Mapping[str, Any],
    timeout: float = CALL_TIMEOUT,
    *,
    tied: bool = False,
    cancel: threading.Event | None = None,
    start: process.Start | None = None,
) -> Answer:
    """Run `tool` with `arguments`, as the ikigai host would; `tied`, `cancel` and `start`
    as in `process.run`.

    The answer's text is masked: a third-party tool may print the user's keys (which every
    tool may read from the environment) in its error output or its answer."""
    data = json.dumps(arguments).encode()
    try:
        outcome = process.run(
            [str(tool.path)], data, timeout=timeout, limit=ANSWER_LIMIT, tied=tied, cancel=cancel,
            start=start,
        )  # fmt: skip
    except OSError as exc:
        return Answer(ok=False, text=f"{tool.name} could not be started ({exc.strerror}).")
    answer = interpret(tool.name, outcome, timeout)
    return Answer(answer.ok, mask(answer.text), answer.result, answer.refused)


def interpret(name: str, outcome: process.Outcome, timeout: float) -> Answer:
    """The Answer for what the program did."""
    if outcome.timed_out:
        text = f"{name} did not answer within {timeout:g} s and was stopped."
        return Answer(ok=False, text=_with_stderr(text, outcome))
    if outcome.overflowed:
        text = (
            f"{name} printed more than {ANSWER_LIMIT:,} bytes, more than an ikigai host "
            "reads; the answer was dropped. Ask for less (fewer results, a smaller limit)."
        )
        return Answer(ok=False, text=_with_stderr(text, outcome))
    if outcome.status != 0:
        return Answer(ok=False, text=_failed(name, outcome), refused=_refused(outcome))
    answer = _answer(name, outcome.stdout)
    if answer.ok or answer.result is not None:  # the tool's own answer says it all
        return answer
    return Answer(ok=False, text=_with_stderr(answer.text, outcome))


def _failed(name: str, outcome: process.Outcome) -> str:
    stderr = outcome.stderr.decode(errors="replace").strip()
    if _refused(outcome):
        return stderr  # the protocol's unusable-input exit: one line saying what is wrong
    if outcome.status is not None and outcome.status < 0:
        return (
            f"{name} stopped before it answered: it ran out of memory or crashed, and the "
            "system ended it. Try again with a smaller request, or another tool."
        )
    text = f"{name} failed: it {exit_text(outcome.status)}"
    return _with_stderr(text, outcome) if stderr else f"{text}, without an error message."


def _refused(outcome: process.Outcome) -> bool:
    """Whether the program exited as the protocol's unusable input: 1, and one line."""
    stderr = outcome.stderr.decode(errors="replace").strip()
    return outcome.status == 1 and bool(stderr) and "\n" not in stderr


def _with_stderr(text: str, outcome: process.Outcome) -> str:
    """`text`, then the last line the program wrote on stderr, if any: the error a crash's
    traceback ends with, without the traceback."""
    lines = outcome.stderr.decode(errors="replace").strip().splitlines()
    if not lines:
        return text
    last = lines[-1].strip()
    said = last if len(last) <= _STDERR_SHOWN else last[: _STDERR_SHOWN - 1] + "…"
    return f"{text.removesuffix('.')}: {said}"


def _answer(name: str, stdout: bytes) -> Answer:
    text = stdout.decode(errors="replace").strip()
    try:
        result = json.loads(text)
    except ValueError:
        return Answer(ok=False, text=f"{name} answered something that is not JSON: {text[:300]!r}")
    if not isinstance(result, dict):
        return Answer(ok=False, text=f"{name} answered JSON that is not an object: {text[:300]}")
    if result.get("success") is False:
        return Answer(ok=False, text=failure_text(name, result), result=result)
    return Answer(ok=True, text=text, result=result)


def failure_text(name: str, result: Mapping[str, Any]) -> str:
    """`CODE: message`, then the `config_required` instructions when the tool gave them."""
    error = result.get("error") or f"{name} failed without saying why"
    code = result.get("error_code")
    text = f"{code}: {error}" if code else str(error)
    event = result.get("_event")
    content = event.get("content") if isinstance(event, dict) else None
    return f"{text}\n\n{content}" if isinstance(content, str) and content else text
