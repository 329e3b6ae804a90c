"""What web_search_auto remembers about its providers from one call to the next.

A provider that could not answer (its rate limit reached, its key rejected, this address
blocked, no answer in time, nothing found again and again) is noted in the shared state, so
that the next call, in any process (on any machine that shares the state), goes straight to
one that can answer and tries the noted one again when it is due. The rules are the pure
functions here, of the time given: what a failure or an answer teaches (`from_failure`,
`stalled`, `from_answer`), whether a note still stands (`standing`), and the order it makes
(`plan`). `ikigai_web.tools.fallback.recall` reads and writes them.
"""

from __future__ import annotations

import math
from enum import StrEnum
from typing import Any, NamedTuple

from ikigai_web.common.errors import ErrorCode
from ikigai_web.common.text import seconds

SPACE = "search-memory"  # the shared state's space for these notes


class Kind(StrEnum):
    RATE_LIMITED = "rate_limited"
    KEY_REJECTED = "key_rejected"
    BLOCKED = "blocked"  # a provider without a key refusing this address (a bot check)
    STALLED = "stalled"
    EMPTY = "empty"


# How long a note stands. A rate limit stands for the provider's own retry_after when it
# gives one. Asking again sooner than these only earns the same failure (or a longer block).
RATE_LIMIT_WAIT = 60.0  # a rate limit that does not say when it ends
BLOCKED_WAIT = 900.0  # such blocks last minutes, sometimes an hour; none says how long
KEY_REJECTED_WAIT = 3600.0  # or until the credential changes, whichever is first
STALLED_WAIT = 180.0  # an outage or an overloaded provider: a few minutes
EMPTY_WAIT = 600.0
EMPTY_AFTER = 3  # empty answers to different queries in a row before a provider is set aside
EMPTY_WINDOW = 3600.0  # an empty answer older than this no longer counts
LONGEST = 86400.0  # Google's daily quota ends within a day; nothing is noted for longer
# A note stays in the store this long past its due time (it no longer counts): the clocks of
# machines that share one Redis differ a little, and a late reader must not miss it.
KEPT_PAST_DUE = 600.0
# Set aside entirely while they stand: asking again only repeats the failure. A stalled or
# empty provider is only asked last: better it than no answer.
SKIPPED = frozenset({Kind.RATE_LIMITED, Kind.KEY_REJECTED, Kind.BLOCKED})
# Notes about this address, not the provider's key: each machine keeps its own.
LOCAL = frozenset({Kind.BLOCKED, Kind.STALLED})
# Notes about the key in use: they hold only while it is.
KEYED = frozenset({Kind.RATE_LIMITED, Kind.KEY_REJECTED})
_SAID = 300  # characters of the provider's own words kept


class Note(NamedTuple):
    """One thing remembered about one provider, with wall-clock times (seconds since the
    epoch): they are compared across processes and machines."""

    provider: str
    kind: Kind
    code: ErrorCode
    said: str  # the provider's failure, its first sentence
    since: float
    until: float
    credential: str = ""  # the one-way hash of the key noted (KEYED kinds only)
    empties: int = 0  # empty answers in a row (EMPTY)
    query: str = ""  # the last empty one's query, hashed (EMPTY)

    def as_json(self) -> dict[str, Any]:
        return self._asdict()


def key(provider: str, kind: Kind, host: str) -> str:
    """The store key of a note: per provider, and per machine for notes about the address."""
    return f"{provider}@{host}" if kind in LOCAL else provider


def keys(provider: str, host: str) -> tuple[str, str]:
    """Every key a provider's notes may have on this machine."""
    return provider, f"{provider}@{host}"


def parse(value: Any) -> Note | None:
    """A note as the store holds it; anything else (an older shape, a corrupt value) is
    no note."""
    if not isinstance(value, dict):
        return None
    try:
        note = Note(**value)
        kind, code = Kind(note.kind), ErrorCode(note.code)
    except (TypeError, ValueError):
        return None
    texts = (note.provider, note.said, note.credential, note.query)
    numbers = (note.since, note.until)
    if not all(isinstance(t, str) for t in texts) or not all(_finite(n) for n in numbers):
        return None
    if not isinstance(note.empties, int) or isinstance(note.empties, bool):
        return None
    if len(note.said) > _SAID or len(note.provider) > _SAID:
        return None  # not a note this module wrote
    return note._replace(kind=kind, code=code)


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def from_failure(
    provider: str,
    error: tuple[ErrorCode, str, int | None],
    credential: str,
    now: float,
) -> Note | None:
    """What a provider's failure (its code, message and retry_after) teaches, if anything.
    A provider with no credential ("") that is rate limited is blocking this address."""
    code, message, retry_after = error
    if code is ErrorCode.RATE_LIMIT and credential:
        kind, wait = Kind.RATE_LIMITED, _given(retry_after, RATE_LIMIT_WAIT)
    elif code is ErrorCode.RATE_LIMIT:
        kind, wait = Kind.BLOCKED, _given(retry_after, BLOCKED_WAIT)
    elif code is ErrorCode.AUTH_INVALID:
        kind, wait = Kind.KEY_REJECTED, KEY_REJECTED_WAIT
    elif code is ErrorCode.NETWORK_ERROR and message.startswith("timeout"):
        kind, wait = Kind.STALLED, STALLED_WAIT
    else:
        return None  # a connection refused fails fast, the rest is the call's own answer
    until = now + min(max(wait, 1.0), LONGEST)
    return Note(provider, kind, code, gist(message), now, until,
                credential if kind in KEYED else "")  # fmt: skip


def _given(retry_after: int | None, otherwise: float) -> float:
    return otherwise if retry_after is None else float(retry_after)


def stalled(provider: str, waited: float, now: float) -> Note:
    """A provider still without an answer when another answered, or at the deadline."""
    said = f"no answer in {seconds(waited)}"
    return Note(provider, Kind.STALLED, ErrorCode.NETWORK_ERROR, said, now, now + STALLED_WAIT)


def from_answer(
    provider: str, count: int, query: str, before: Note | None, now: float
) -> Note | None:
    """After an answer: None (forget the provider's note) when it found something, else the
    count of empty answers in a row, to different queries, that sets it aside at EMPTY_AFTER.
    `query` is the query's one-way hash."""
    if count:
        return None
    fresh = before is not None and before.kind is Kind.EMPTY and before.since > now - EMPTY_WINDOW
    prior = before if fresh else None
    if prior is not None and prior.query == query:
        return prior  # the same search again: no new evidence
    empties = prior.empties + 1 if prior is not None else 1
    until = now + (EMPTY_WAIT if empties >= EMPTY_AFTER else EMPTY_WINDOW)
    said = f"no results for {empties} different search{'es' if empties > 1 else ''} in a row"
    return Note(provider, Kind.EMPTY, ErrorCode.API_ERROR, said, now, until, "", empties, query)


def standing(note: Note, credential: str, now: float) -> bool:
    """Whether the note still holds: not yet due, about the credential in use, and for empty
    answers, only once there were enough of them."""
    if now >= note.until:
        return False
    if note.kind is Kind.EMPTY:
        return note.empties >= EMPTY_AFTER
    return note.kind not in KEYED or note.credential == credential


class Plan(NamedTuple):
    order: list[str]  # the providers to ask, in this order
    skipped: list[Note]  # not asked: the note stands
    last: list[Note]  # moved to the end of the order


def plan(names: list[str], notes: dict[str, Note]) -> Plan:
    """The order to ask providers in, given the notes that stand (one per provider at most:
    `binding`)."""
    skipped = [notes[n] for n in names if n in notes and notes[n].kind in SKIPPED]
    last = [notes[n] for n in names if n in notes and notes[n].kind not in SKIPPED]
    first = [n for n in names if n not in notes]
    return Plan([*first, *(note.provider for note in last)], skipped, last)


def binding(found: list[Note]) -> Note | None:
    """Of a provider's standing notes, the one that decides: a skip before a move to the
    end, then the one due last."""
    return max(found, key=lambda n: (n.kind in SKIPPED, n.until), default=None)


def ttl(note: Note, now: float) -> float:
    """How long the store keeps the note."""
    return max(0.0, note.until - now) + KEPT_PAST_DUE


def retry_after(note: Note, now: float) -> int:
    return max(1, math.ceil(note.until - now))


def reason(note: Note, now: float) -> str:
    """Why a provider is set aside, for the model: what it answered when, and when it is
    asked again."""
    what = {
        Kind.RATE_LIMITED: "its rate limit was reached",
        Kind.KEY_REJECTED: "its key was rejected",
        Kind.BLOCKED: "it was blocking this address",
        Kind.STALLED: "it did not answer in time",
        Kind.EMPTY: "it kept answering with no results",
    }[note.kind]
    return (
        f"{what} {span(now - note.since)} ago, and it is asked again in "
        f"{span(note.until - now)} ({note.code.value}: {note.said})"
    )


def span(value: float) -> str:
    """A duration as a person reads it: "40 s", "3 min", "1 h 5 min"."""
    whole = max(0, math.ceil(value))
    if whole < 120:
        return f"{whole} s"
    minutes = math.ceil(whole / 60)
    if minutes < 120:
        return f"{minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"{hours} h {rest} min" if rest else f"{hours} h"


def gist(message: str) -> str:
    """A provider's failure in its first sentence: notes stay small and readable."""
    first = message.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= _SAID else first[: _SAID - 1] + "…"
