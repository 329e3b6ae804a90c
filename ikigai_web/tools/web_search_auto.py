"""web-search-auto-tool: one search tool that uses whichever search provider is configured.

It tries the installed search tools in the order of IKIGAI_WEB_SEARCH_ORDER, in this
process, through the entry point every search tool offers (`arguments` and `execute`), and
moves on only when a provider cannot serve the call now: its credentials are missing or
rejected, its rate limit is reached, or the network failed. A search tool added later is
picked up by being named in the setting; nothing here changes. What a call learns of a
provider that cannot answer now is remembered for the next calls (`ikigai_web.tools.fallback`).
"""

from __future__ import annotations

import queue
import re
import threading
import time
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common import params as p
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.common.text import seconds
from ikigai_web.search import domains, reading
from ikigai_web.search.kit import (
    ANSWER_EXTRAS,
    RESULT_EXTRAS,
    TIME_FILTERS,
    Request,
    lazy_output_schema,
    markdown,
)

if TYPE_CHECKING:
    from types import ModuleType

    from ikigai_web.common.settings import Settings
    from ikigai_web.tools.fallback.memory import Note
    from ikigai_web.tools.fallback.recall import Recall

MAX_QUERY = 400  # the strictest of the providers' limits
MAX_COUNT = 20
# Errors that say "not this provider, not now": anything else is the answer to the call.
FALL_THROUGH = frozenset(
    {ErrorCode.AUTH_MISSING, ErrorCode.AUTH_INVALID, ErrorCode.RATE_LIMIT, ErrorCode.NETWORK_ERROR}
)
# When every provider failed, the most specific failure is reported.
_PRECEDENCE = (
    ErrorCode.RATE_LIMIT,
    ErrorCode.AUTH_INVALID,
    ErrorCode.NETWORK_ERROR,
    ErrorCode.AUTH_MISSING,
)
# How the first sentence of a failure says what stopped a provider (see _stopped_by).
_STOPPED_AS = {
    ErrorCode.RATE_LIMIT: "is rate limited",
    ErrorCode.AUTH_INVALID: "rejected its key",
    ErrorCode.API_ERROR: "failed",
}
_STOPPED_BEFORE = {
    ErrorCode.RATE_LIMIT: "rate limited",
    ErrorCode.AUTH_INVALID: "its key rejected",
    ErrorCode.NETWORK_ERROR: "unreachable",
    ErrorCode.API_ERROR: "failing",
}
# The kinds the HTTP layer starts a NETWORK_ERROR's message with (ikigai_web.net.http).
_NETWORK_KIND = re.compile(r"^(DNS|timeout|TLS|reset|connect):")
_MIN_SECONDS = 1.0  # less time than this left: the next provider is not started
# A provider this slow (or slower than its share of the deadline) gets company: the next one
# starts too, and the first answer wins. Searches answer in 1-3 s; a stalled one never does.
HEDGE_AFTER = 5.0
_GRACE = 0.5  # past the deadline, what a still-running attempt is given to say so itself
_PREFIX, _SUFFIX = "web-search-", "-tool"

SCHEMA: dict[str, Any] = {
    "name": "web_search_auto",
    "description": (
        "Search the web with whichever search provider is configured on this machine (Brave, "
        "Google, Tavily, SearXNG, DuckDuckGo, in the user's order), falling back to the next "
        "when one lacks a key, is rate limited or unreachable. Returns up to 20 results, each "
        "with title, url and snippet, and `provider` naming who answered."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query, 2-400 characters."},
            "count": {
                "type": "integer",
                "description": "Number of results (1-20; some providers return fewer). "
                "Default: 10.",
            },
            **domains.SCHEMA_PROPERTIES,
            **reading.SCHEMA_PROPERTIES,
            "time_filter": {
                "type": "string",
                "enum": [*TIME_FILTERS, p.ANY],
                "description": "Only pages from the past day, week, month or year; any for "
                "no limit.",
            },
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (the first configured provider)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(tuple(RESULT_EXTRAS), tuple(ANSWER_EXTRAS))


def parse_input(raw: dict[str, Any]) -> Request:
    return Request(
        query=p.query(raw, lo=2, hi=MAX_QUERY),
        count=p.integer(raw, "count", 10, 1, MAX_COUNT),
        allowed=domains.parse(raw, "allowed_domains"),
        blocked=domains.parse(raw, "blocked_domains"),
        time_filter=p.choice(raw, "time_filter", TIME_FILTERS),
    )


def installed() -> dict[str, str]:
    """Provider name -> module of every search tool this installation has (but this one)."""
    from ikigai_web.common.launchers import tools

    found = {}
    for script, target in tools().items():
        name = script.removeprefix(_PREFIX).removesuffix(_SUFFIX)
        if script.startswith(_PREFIX) and script.endswith(_SUFFIX) and name != "auto":
            found[name] = target.split(":", 1)[0]
    return found


def providers(order: tuple[str, ...]) -> tuple[list[tuple[str, ModuleType]], list[str]]:
    """The providers to try, in order, and a note for each name of the order that is none."""
    from importlib import import_module

    known = installed()
    chosen: list[tuple[str, ModuleType]] = []
    notes: list[str] = []
    for name in dict.fromkeys(n.removeprefix("web_search_") for n in order):
        module = import_module(known[name]) if name in known else None
        if module is None or not hasattr(module, "arguments"):
            notes.append(f"'{name}' in IKIGAI_WEB_SEARCH_ORDER is not an installed search tool"
                         f"{_meant(name, known)} (installed: {', '.join(sorted(known))}); it "
                         "was skipped")  # fmt: skip
        else:
            chosen.append((name, module))
    return chosen, notes


def _meant(name: str, known: dict[str, str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name, known, n=1)
    return f": did you mean '{close[0]}'?" if close else ""


def attempt(module: ModuleType, request: Request, settings: Settings) -> dict[str, Any]:
    """One provider's answer to the request, in this process: the only network call."""
    result: dict[str, Any] = module.execute(module.arguments(request), settings)
    return result


class Outcome(NamedTuple):
    """How one provider's attempt ended: a result or an error, and how long it took."""

    name: str
    result: dict[str, Any] | None
    error: ToolError | None
    seconds: float
    final: bool = False  # the error is the provider's answer to the call, not "not now"


class Failure(NamedTuple):
    name: str
    error: ToolError
    seconds: float
    asked: bool = True  # False: not asked, for what is remembered of it


def set_aside(note: Note, now: float) -> Failure:
    """A provider not asked, for what is remembered of it, as a failure of this call."""
    from ikigai_web.tools.fallback import memory

    wait = memory.retry_after(note, now)
    error = ToolError(note.code, f"not asked: {memory.reason(note, now)}", retry_after=wait)
    return Failure(note.provider, error, 0.0, asked=False)


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    started = time.monotonic()
    request = parse_input(raw)
    read = reading.parse(raw)
    if read:
        reading.prepare()  # while the providers answer
    chosen, notes = providers(settings.search_order)
    from ikigai_web.tools.fallback.recall import Recall

    recall = Recall([name for name, _ in chosen])
    answer = Race(request, settings, chosen, notes, recall).run()
    # The results are read once a provider has answered, within what is left of the call.
    return reading.read_results(answer, request.query, read, settings, started) if read else answer


class Race:
    """The providers, asked in order; one that is slow gets company, none waits forever.

    The first provider starts at once. The next starts when the one before fails, or when it
    has had its share of the deadline (the time left over the providers left, at most
    HEDGE_AFTER) without answering: a stalled provider cannot hold up the others, and a slow
    one still answers if it is first. Every attempt ends with the call's deadline. A provider
    remembered as unable to answer now is not asked, or asked last
    (`ikigai_web.tools.fallback.memory`).
    """

    def __init__(
        self,
        request: Request,
        settings: Settings,
        chosen: list[tuple[str, ModuleType]],
        notes: list[str],
        recall: Recall,
    ) -> None:
        self.request, self.settings, self.notes = request, settings, notes
        self.recall = recall
        self.order = [name for name, _ in chosen]
        plan = recall.plan(self.order)
        modules = dict(chosen)
        self.todo = [(name, modules[name]) for name in plan.order]
        self.skipped, self.last = plan.skipped, plan.last
        self.end = time.monotonic() + settings.timeout
        self.outcomes: queue.Queue[Outcome] = queue.Queue()
        self.running: dict[str, float] = {}  # name -> when it started
        self.overdue: set[str] = set()  # had their share of the deadline without answering
        self.failures: list[Failure] = []
        self.stopped: list[Failure] = []  # answered with an error that is not a fall-through
        self.next_start = time.monotonic()

    def run(self) -> dict[str, Any]:
        self.start_next()
        while self.running:
            outcome = self.wait()
            if outcome is None:
                continue
            del self.running[outcome.name]
            if outcome.result is not None:
                return self.answered(outcome.result, outcome.name)
            self.failed(outcome)
        raise self.no_answer()

    def start_next(self) -> None:
        """Start the next provider, if any and if there is time for it."""
        if not self.todo or self.stopped:
            return
        left = self.end - time.monotonic()
        # The first provider is tried however short the setting makes the deadline.
        if left < _MIN_SECONDS and (self.running or self.failures):
            return
        name, module = self.todo.pop(0)
        self.running[name] = time.monotonic()
        share = min(HEDGE_AFTER, max(left / (len(self.todo) + 1), _MIN_SECONDS))
        self.next_start = time.monotonic() + share
        narrowed = self.settings.narrowed(left)
        thread = threading.Thread(target=self._attempt, args=(name, module, narrowed), daemon=True)
        thread.start()

    def _attempt(self, name: str, module: ModuleType, settings: Settings) -> None:
        started = time.monotonic()
        result: dict[str, Any] | None = None
        error, final = None, False
        try:
            result = attempt(module, self.request, settings)
        except ToolError as err:
            error, final = err, err.code not in FALL_THROUGH
        except Exception as exc:  # noqa: BLE001 - one provider's crash is its failure, not ours
            error = ToolError(ErrorCode.API_ERROR, f"crashed ({exc!r:.200})")
        self.outcomes.put(Outcome(name, result, error, time.monotonic() - started, final))

    def wait(self) -> Outcome | None:
        """The next outcome; None when it is time to start another provider, or past the
        deadline (then whatever still runs is counted as timed out)."""
        now = time.monotonic()
        hedge = self.next_start if self.todo and not self.stopped else float("inf")
        try:
            return self.outcomes.get(timeout=max(0.0, min(hedge, self.end + _GRACE) - now))
        except queue.Empty:
            pass
        if time.monotonic() >= self.end + _GRACE:
            self.time_out()
        else:
            self.overdue.update(self.running)  # each has had its share: stalled, so far
            self.start_next()
        return None

    def time_out(self) -> None:
        for name, started in self.running.items():
            took = time.monotonic() - started
            err = ToolError(ErrorCode.NETWORK_ERROR, f"timeout: no answer in {seconds(took)}")
            self.failures.append(Failure(name, err, took))
            self.recall.stalled(name, took)
        self.running.clear()

    def failed(self, outcome: Outcome) -> None:
        assert outcome.error is not None
        failure = Failure(outcome.name, outcome.error, outcome.seconds)
        err = outcome.error
        self.recall.failed(outcome.name, (err.code, err.message, err.retry_after))
        if outcome.final:
            self.stopped.append(failure)
        else:
            self.failures.append(failure)
            self.start_next()

    def not_tried(self) -> list[str]:
        names = [f"web_search_{name}" for name, _ in self.todo]
        why = "the call's deadline was near" if not self.stopped else "a provider answered"
        return [f"{', '.join(names)} not tried: {why}"] if names else []

    def answered(self, result: dict[str, Any], winner: str) -> dict[str, Any]:
        now = time.monotonic()
        self.learn(winner, result, now)
        skipped = self.remembered(winner)
        skipped += [{"code": f.error.code.value, "message": f"web_search_{f.name} skipped "
                     f"after {seconds(f.seconds)}: {f.error.message}"}
                    for f in self.failures]  # fmt: skip
        skipped += [{"code": ErrorCode.NETWORK_ERROR.value, "message": f"web_search_{name} had "
                     f"not answered after {seconds(now - started)}; web_search_{winner} "
                     "answered first."} for name, started in self.running.items()]  # fmt: skip
        skipped += [{"code": "IGNORED", "message": note} for note in self.notes]
        given = result.get("warnings", [])
        skipped += [w for w in self.recall.warnings() if w not in given]  # the provider's too
        if not skipped:
            return result
        return result | {"warnings": [*skipped, *given]}

    def learn(self, winner: str, result: dict[str, Any], now: float) -> None:
        """Remember who answered, and who had stalled by then (not one still in its share)."""
        for name, started in self.running.items():
            if name in self.overdue:
                self.recall.stalled(name, now - started)
        self.recall.answered(winner, result.get("count", 0), self.request.query)
        self.recall.save()

    def remembered(self, winner: str) -> list[dict[str, str]]:
        """Each provider ahead of the winner in the order that was not asked, or left for
        last and not reached, and why."""
        from ikigai_web.tools.fallback.memory import reason

        ahead = set(self.order[: self.order.index(winner)])
        waiting = {name for name, _ in self.todo} & ahead
        notes = [("not asked", n) for n in self.skipped if n.provider in ahead]
        notes += [("left for last", n) for n in self.last if n.provider in waiting]
        return [{"code": n.code.value, "message": f"web_search_{n.provider} {how}: "
                 f"{reason(n, self.recall.now)}."} for how, n in notes]  # fmt: skip

    def no_answer(self) -> ToolError:
        self.recall.save()
        failures = [*self.failures, *(set_aside(n, self.recall.now) for n in self.skipped)]
        if self.stopped:
            return _stopped(self.stopped[0], failures)
        return all_failed(failures, [*self.notes, *self.not_tried()])


def _stopped(stop: Failure, failures: list[Failure]) -> ToolError:
    """A provider's own answer to the call (bad input, a provider error): not a reason to
    ask the next one, but the model learns who was asked before."""
    err = stop.error
    before = "".join(f" web_search_{f.name} was skipped first ({f.error.code.value})."
                     for f in failures)  # fmt: skip
    message = f"web_search_{stop.name}: {err.message}{before}"
    return ToolError(err.code, message, retry_after=err.retry_after, event=err.event)


def all_failed(failures: list[Failure], notes: list[str]) -> ToolError:
    """The most specific failure, with what each provider said and what was not tried."""
    if not failures:
        why = " ".join(notes) or "IKIGAI_WEB_SEARCH_ORDER names no provider"
        return ToolError(
            ErrorCode.INVALID_INPUT,
            f"no search provider could be tried: {why}. Set IKIGAI_WEB_SEARCH_ORDER to "
            f"installed providers, e.g. {','.join(sorted(installed()))}.",
        )
    rank = {code: i for i, code in enumerate(_PRECEDENCE)}
    # Of the same code, the one due first: its retry_after is when a provider can answer.
    best = min(failures, key=lambda f: (rank.get(f.error.code, len(rank)),
                                        f.error.retry_after or float("inf")))  # fmt: skip
    # The most specific first, as the code is chosen; a provider without a key last.
    failures = sorted(failures, key=lambda f: (f.error.code is ErrorCode.AUTH_MISSING,
                                               rank.get(f.error.code, len(rank))))  # fmt: skip
    said = "; ".join(f"web_search_{f.name}: {f.error.code.value}"
                     f"{f' after {seconds(f.seconds)}' if f.asked else ''}, "
                     f"{_gist(f.error.message)}" for f in failures)  # fmt: skip
    message = f"No provider could search: {_stopped_by(failures)}. What each said: {said}."
    if notes:
        message += " " + " ".join(f"{note.rstrip('.')}." for note in notes)
    failed = {f"web_search_{f.name}" for f in failures}
    return ToolError(
        best.error.code,
        message,
        retry_after=best.error.retry_after,
        event=_without(best.error.event, failed, best.error.retry_after),
    )


def _stopped_by(failures: list[Failure]) -> str:
    """What stopped every provider, in a few words each, what is there to fix first and a
    missing key last: "DuckDuckGo is unreachable (DNS); no other provider has a key". A model
    reading a list that opens with missing keys tells the user to get one, when the network
    was what failed."""
    from ikigai_web.search.kit import provider_name

    clauses = [_clause(provider_name(f.name), f) for f in failures
               if f.error.code is not ErrorCode.AUTH_MISSING]  # fmt: skip
    keyless = [provider_name(f.name) for f in failures if f.error.code is ErrorCode.AUTH_MISSING]
    if keyless and clauses:
        many = len(keyless) > 1
        clauses.append("no other provider has a key" if many else f"{keyless[0]} has no key")
    elif keyless:
        clauses.append("no provider has a key" if len(keyless) > 1 else f"{keyless[0]} has no key")
    return "; ".join(clauses)


def _clause(name: str, failure: Failure) -> str:
    """What stopped one provider, as the first sentence says it."""
    code = failure.error.code
    if not failure.asked:  # remembered: set aside until it is due
        return f"{name} was not asked ({_STOPPED_BEFORE.get(code, 'failing')} before)"
    if code is ErrorCode.NETWORK_ERROR:
        kind = _NETWORK_KIND.match(failure.error.message)
        return f"{name} is unreachable ({kind.group(1) if kind else 'network'})"
    return f"{name} {_STOPPED_AS.get(code, 'failed')}"


def _without(
    event: dict[str, Any] | None, failed: set[str], wait: int | None
) -> dict[str, Any] | None:
    """The event with the tools that failed in this call taken out of its alternatives:
    none of them is "ready now"."""
    if event is None or "alternative_tools" not in event.get("data", {}):
        return event
    from ikigai_web.common import credentials

    data = event["data"]
    provider = next(p for p in credentials.PROVIDERS.values() if p.tool == data["tool"])
    others = [t for t in data["alternative_tools"] if t not in failed]
    return credentials.event(provider, data.get("error_type"), others, wait)


def _gist(message: str) -> str:
    """A provider's failure in its first sentence: the list stays readable."""
    first = message.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= 300 else first[:299] + "…"


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
