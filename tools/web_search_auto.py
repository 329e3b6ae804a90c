"""web-search-auto-tool: one search tool that uses whichever search provider is configured.

It tries the installed search tools in the order of IKIGAI_WEB_SEARCH_ORDER, in this
process, through the entry point every search tool offers (`arguments` and `execute`), and
moves on only when a provider cannot serve the call now: its credentials are missing or
rejected, its rate limit is reached, or the network failed. A search tool added later is
picked up by being named in the setting; nothing here changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from common import domains
from common import params as p
from common.errors import ErrorCode, ToolError
from common.protocol import main as run_protocol
from common.search import TIME_FILTERS, Request, markdown

if TYPE_CHECKING:
    from types import ModuleType

    from common.settings import Settings

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
_MIN_SECONDS = 1.0  # less time than this left after a failure: the next one is not tried
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
                "minimum": 1,
                "maximum": MAX_COUNT,
                "default": 10,
                "description": "Number of results (1-20; some providers return fewer).",
            },
            **domains.SCHEMA_PROPERTIES,
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
    from common.launchers import tools

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
            notes.append(f"'{name}' in IKIGAI_WEB_SEARCH_ORDER is not an installed search tool "
                         f"(installed: {', '.join(sorted(known))}); it was skipped")  # fmt: skip
        else:
            chosen.append((name, module))
    return chosen, notes


def attempt(module: ModuleType, request: Request, settings: Settings) -> dict[str, Any]:
    """One provider's answer to the request, in this process: the only network call."""
    result: dict[str, Any] = module.execute(module.arguments(request), settings)
    return result


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    import time

    request = parse_input(raw)
    chosen, notes = providers(settings.search_order)
    end = time.monotonic() + settings.timeout
    failures: list[tuple[str, ToolError]] = []
    for name, module in chosen:
        left = end - time.monotonic()
        # The first provider gets the whole deadline, however short the setting makes it.
        if failures and left < _MIN_SECONDS:
            notes.append(f"web_search_{name} was not tried: the call's deadline was reached")
            continue
        try:
            result = attempt(module, request, settings.narrowed(left))
        except ToolError as err:
            if err.code not in FALL_THROUGH:
                raise _stopped(name, err, failures) from None
            failures.append((name, err))
            continue
        return _answered(result, failures, notes)
    raise all_failed(failures, notes)


def _answered(
    result: dict[str, Any], failures: list[tuple[str, ToolError]], notes: list[str]
) -> dict[str, Any]:
    skipped = [{"code": e.code.value, "message": f"web_search_{n} skipped: {e.message}"}
               for n, e in failures]  # fmt: skip
    skipped += [{"code": "IGNORED", "message": note} for note in notes]
    if not skipped:
        return result
    return result | {"warnings": [*skipped, *result.get("warnings", [])]}


def _stopped(name: str, err: ToolError, failures: list[tuple[str, ToolError]]) -> ToolError:
    """A provider's own answer to the call (bad input, a provider error): not a reason to
    ask the next one, but the model learns who was asked before."""
    before = "".join(f" web_search_{n} was skipped first ({e.code.value})." for n, e in failures)
    message = f"web_search_{name}: {err.message}{before}"
    return ToolError(err.code, message, retry_after=err.retry_after, event=err.event)


def all_failed(failures: list[tuple[str, ToolError]], notes: list[str]) -> ToolError:
    """The most specific failure, with what each provider said."""
    if not failures:
        why = " ".join(notes) or "IKIGAI_WEB_SEARCH_ORDER names no provider"
        return ToolError(
            ErrorCode.INVALID_INPUT,
            f"no search provider could be tried: {why}. Set IKIGAI_WEB_SEARCH_ORDER to "
            f"installed providers, e.g. {','.join(sorted(installed()))}.",
        )
    rank = {code: i for i, code in enumerate(_PRECEDENCE)}
    _, best = min(failures, key=lambda f: rank.get(f[1].code, len(rank)))
    said = "; ".join(f"web_search_{n}: {e.code.value}, {_gist(e.message)}" for n, e in failures)
    message = f"every search provider failed: {said}."
    return ToolError(best.code, message, retry_after=best.retry_after, event=best.event)


def _gist(message: str) -> str:
    """A provider's failure in its first sentence: the list stays readable."""
    first = message.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= 300 else first[:299] + "…"


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
