"""Pacing: every keyed search waits its turn under its key's rate limit, across the processes
of a machine (and across machines sharing one Redis), instead of overrunning the limit and
answering RATE_LIMIT.

Each key has a budget in the shared state (ikigai_web/common/state.py), named by the provider and a
one-way hash of the key: the time of its next free turn. A request takes the next turn and
sleeps until it; turns are evenly spaced, a little further apart than the limit, so requests
arriving a few milliseconds early or late never land two in one of the provider's windows.
When the turn would come too late for the call's deadline, the call answers RATE_LIMIT at
once with `retry_after`, rather than sleeping into a timeout.

The rate is, first to last: the user's plan (IKIGAI_WEB_RATE_LIMITS), what the provider said
(Brave's X-RateLimit-Limit, learned for a day), the provider's documented limit (the `rate` of
its declaration, ikigai_web/search/registry.py). A provider that says a key is used up (a 429,
Brave's X-RateLimit-Remaining at 0, Google's daily quota, Tavily's plan limits) holds that key's
budget until it is due, never longer than the longest window the provider documents
(`registry.longest_hold`: an hour for a `Retry-After`, a day or a month for a quota); a
rejected key is set aside for a while. Each hold and each key set aside is noted in the
shared state too (`HOLDS`, `SET_ASIDE`), for `web-tools doctor` to list and `web-tools forget`
to clear (`held`, `release`). With several keys, a request takes the key whose turn comes
first.
"""

from __future__ import annotations

import math
import time
from typing import TYPE_CHECKING, Any, NamedTuple, TypeGuard, TypeVar

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.search import registry

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from ikigai_web.common.settings import Settings
    from ikigai_web.common.state import Store
    from ikigai_web.net.http import Deadline, Reply

T = TypeVar("T")

MARGIN = 1.05  # turns 5 % further apart than the limit allows: arrival jitter stays inside
# Seconds a request needs after its turn to be answered within the deadline, on a busy
# machine, with room for one short 429's send again in the next send turn.
HEADROOM = 2.0
LEARNED_FOR = 24 * 3600.0  # seconds a limit the provider told is trusted
REJECTED_FOR = 900.0  # seconds a rejected key is set aside (a new key has a new name)
LIMITED_FOR = 60.0  # seconds a limited key is held when the provider says not how long
SHORT_RETRY = 2  # seconds: a 429 asking for no more is sent again in the next send turn
# Each of a busy machine's late sends can land one short 429; a few more sends, each in a send
# turn that fits the deadline, end the run of them, and a provider always refusing ends the call.
SHORT_RETRIES = 3
SHORT_WINDOW = 60.0  # seconds: a limit over a longer window (a month) is a quota, not a pace
_MOST_DIGITS = 12  # a count in a header longer than this is no count
MOST_LEARNED = 1_000_000  # requests a window: a limit told above this is no limit to pace by
HOLDS = "holds"  # the shared state's space of holds: {"until", "why"} by key name
SET_ASIDE = "keys"  # and of keys set aside: {"why"}
BUDGETS = ("pace", "sent")  # and of the budgets themselves (a turn's time)
MAX_WHY = 300  # characters of the provider's words a hold keeps


class Rate(NamedTuple):
    """A key's pace: requests a second, where that figure comes from (for messages), and the
    window the provider counts them over (seconds)."""

    per_second: float
    source: str
    window: float = 1.0

    @property
    def burst(self) -> int:
        """Turns that may be taken at once. Over a window of a second, none: requests evenly
        spaced keep under any way of counting. Over a minute, as many as keep the worst
        minute (a burst, then evenly spaced turns) under the limit."""
        if self.window < SHORT_WINDOW:
            return 1
        return max(1, int(self.per_second * self.window * (1 - 1 / MARGIN)) + 1)


def rate_for(provider: str, settings: Settings, learned: object = None) -> Rate | None:
    """The pace of `provider`'s keys; None when they are not paced."""
    for entry in settings.rate_limits:
        name, _, value = entry.partition("=")
        if name.strip() == provider:
            return _stated(value.replace(" ", ""))
    if _learnable(learned):
        return Rate(learned[0] / learned[1], "learned from the provider's answers", learned[1])
    declared = registry.declared(provider)
    if declared is None or declared.rate is None:
        return None
    limit, window = declared.rate  # documented for the plan most keys are on
    return Rate(limit / window, "the provider's documented limit", window)


def _learnable(learned: object) -> TypeGuard[list[float]]:
    """Whether a stored [limit, window] is one `_learn` could have stored: a limit of a
    whole request or more, over a short window; anything else (a store tampered with) is
    ignored, so no absurd number reaches the budget."""
    if not (isinstance(learned, list) and len(learned) == 2):
        return False
    limit, window = learned
    numbers = all(isinstance(n, int | float) and not isinstance(n, bool) for n in learned)
    return numbers and 1 <= limit <= MOST_LEARNED and 1 <= window <= SHORT_WINDOW


def _stated(value: str) -> Rate | None:
    if value == "off":
        return None
    number, _, unit = value.partition("/")
    window = 60.0 if unit == "min" else 1.0
    per_second = float(number) / window
    return Rate(per_second, "IKIGAI_WEB_RATE_LIMITS", window) if per_second > 0 else None


class Keyring:
    """One call's keys for one provider: which to use, when, and what the provider said."""

    def __init__(
        self, provider: str, keys: Sequence[str], settings: Settings, deadline: Deadline
    ) -> None:
        from ikigai_web.common.state import key_id, store

        self.provider = provider
        self.keys = list(dict.fromkeys(keys))
        self.ids = {key: f"{provider}:{key_id(key)}" for key in self.keys}
        self.settings = settings
        self.deadline = deadline
        self.store: Store = store()
        self.rates: dict[str, Rate | None] = {}  # read once a call: learned ones count next call
        self.learned: dict[str, Any] = {}  # what the store held, as read

    def call(self, ask: Callable[[str], T]) -> T:
        """`ask(key)` in the turn of the key whose turn comes first; a key the provider limits
        or rejects is set aside, and the next one asked, while there is one. A request the
        provider limits briefly is asked again (up to SHORT_RETRIES times) in a send turn of its
        own, when one fits the deadline: retried out of turn, it would take another caller's."""
        tried: set[str] = set()
        said: ToolError | None = None  # the provider's last refusal
        again: str | None = None  # a key to send with again at once
        retries = 0
        while True:
            try:
                key = again or self.turn(tried)
            except ToolError:
                if said is not None:
                    raise said from None
                raise
            try:
                return ask(key)
            except ToolError as err:
                self.failed(key, err)
                paced = self._rate(key) is not None  # unpaced, a new turn is at once: no
                if err.code is ErrorCode.RATE_LIMIT and retries < SHORT_RETRIES and paced:
                    said, retries = err, retries + 1
                    again = key if self._resend(key, err) else None
                    continue
                said = err
                tried.add(key)
                if len(tried) == len(self.keys) or err.code not in _SET_ASIDE:
                    raise

    def turn(self, tried: set[str]) -> str:
        """The key to use now, once its turn has come (slept for here); RATE_LIMIT when no
        key's turn comes before the deadline."""
        key, turn = self._choose([k for k in self.keys if k not in tried])
        if not turn.granted:
            raise self._too_late(turn.wait)
        time.sleep(turn.wait)
        self._spaced(key)
        return key

    def _choose(self, left: list[str]) -> tuple[str, Any]:
        """The key whose turn comes first, and that turn, taken when it fits the deadline (a
        turn free now always does: the request itself may fit)."""
        if len(left) > 1:
            # A key set aside is used only when every one is; one free now spreads the load.
            left = [k for k in left if not self.store.get("keys", self.ids[k])] or left
            for key in left:
                if (free := self._reserve(key, most=0.0)).granted:
                    return key, free
            left = [min(left, key=lambda k: self._reserve(k, most=-1.0).wait)]  # -1: asks
        most = max(0.0, self.deadline.remaining() - HEADROOM)
        return left[0], self._reserve(left[0], most=most)

    def _spaced(self, key: str) -> None:
        """Turns are handed out ahead; a process that woke late (a busy machine) sends late,
        and the next one on time would land too close behind it. So the sends are spaced too,
        by a second budget taken at the moment of sending, half as far beyond the limit as
        turns are: a send pushed late falls back into its turn within a few sends. A send
        whose spacing would not fit the deadline goes now: the provider decides."""
        turn = self._reserve(key, max(0.0, self.deadline.remaining() - HEADROOM / 2), "sent")
        if turn.granted:
            time.sleep(turn.wait)

    def _resend(self, key: str, err: ToolError) -> bool:
        """Whether to send again with `key` (slept for here): when the provider asks for a
        short wait (a request that came too close behind another), in the next send turn,
        ahead of the turns handed out since, which its own was."""
        if (err.retry_after or LIMITED_FOR) > SHORT_RETRY:
            return False
        # As a send's own spacing (`_spaced`), half the headroom: the turn was this request's,
        # and the request alone is left to fit.
        most = max(0.0, self.deadline.remaining() - HEADROOM / 2)
        turn = self._reserve(key, most=most, space="sent")
        if turn.granted:
            time.sleep(turn.wait)
        return bool(turn.granted)

    def heard(self, key: str) -> Callable[[Reply], None] | None:
        """What to learn from each answer the provider gives with `key`; None when it is not
        paced (its requests are then retried as any other)."""
        if self._rate(key) is None:
            return None
        return lambda reply: self._learn(key, reply)

    def failed(self, key: str, err: ToolError) -> None:
        """Set `key` aside after the provider limited or rejected it."""
        name = self.ids[key]
        if err.code is ErrorCode.AUTH_INVALID:
            noted = {"why": err.code.value, "until": time.time() + REJECTED_FOR}
            self.store.put(SET_ASIDE, name, noted, REJECTED_FOR)
        elif err.code is ErrorCode.RATE_LIMIT:
            self.hold(key, err.retry_after or LIMITED_FOR, err.message)

    def hold(self, key: str, seconds: float, why: str) -> None:
        """No turn of `key` before `seconds` from now (at most the provider's longest hold),
        in every process sharing it; `why` is what the provider said, for doctor."""
        if self._rate(key) is None:
            return  # not paced: the provider's own answer says when
        seconds = self._bounded(seconds)
        if seconds <= 0:
            return
        self.store.reserve("pace", self.ids[key], 0.0, math.inf, seconds, 1, self._ceiling(key))
        if seconds <= SHORT_WINDOW:
            return  # a pace's window (Brave's second): nothing for doctor, no write per call
        from ikigai_web.common.redact import redact

        noted = {"until": time.time() + seconds, "why": _gist(redact(why))}
        self.store.put(HOLDS, self.ids[key], noted, seconds)

    def _bounded(self, seconds: float) -> float:
        """`seconds` from 0 to the provider's longest hold, whatever number it is."""
        longest = registry.longest_hold(self.provider)
        if isinstance(seconds, int) and seconds > longest:
            return longest  # too large for a float, maybe
        number = float(seconds)
        return 0.0 if math.isnan(number) else min(max(number, 0.0), longest)

    def _ceiling(self, key: str) -> float:
        """The furthest ahead `key`'s budget may ever lie, in seconds: its longest hold and
        one burst of turns; a budget further ahead (a store tampered with) is clamped."""
        rate = self._rate(key)
        turns = rate.burst / rate.per_second * MARGIN if rate is not None else 0.0
        return registry.longest_hold(self.provider) + turns

    def _reserve(self, key: str, most: float, space: str = "pace") -> Any:
        rate = self._rate(key)
        if rate is None:
            from ikigai_web.common.state import Turn

            return Turn(0.0, granted=True)
        margin = MARGIN if space == "pace" else (1 + MARGIN) / 2
        interval = margin / rate.per_second
        ceiling = self._ceiling(key)
        return self.store.reserve(space, self.ids[key], interval, most, 0.0, rate.burst, ceiling)

    def _rate(self, key: str) -> Rate | None:
        if key not in self.rates:
            learned = None
            if not any(e.startswith(f"{self.provider}=") for e in self.settings.rate_limits):
                learned = self.learned[key] = self.store.get("limits", self.ids[key])
            self.rates[key] = rate_for(self.provider, self.settings, learned)
        return self.rates[key]

    def _learn(self, key: str, reply: Reply) -> None:
        limits = window_limits(reply, registry.longest_hold(self.provider))
        paces = [(n, w) for n, w, _, _ in limits if _learnable([n, w])]
        if paces:  # the strictest of the provider's short windows
            limit, window = min(paces, key=lambda pace: pace[0] / pace[1])
            if self.learned.get(key) != [limit, window]:  # else known: no write per call
                self.store.put("limits", self.ids[key], [limit, window], LEARNED_FOR)
        spent = [reset for _, _, remaining, reset in limits if remaining == 0 and reset]
        if spent:
            from ikigai_web.search.kit import provider_name

            said = f"{provider_name(self.provider)} said the key is used up"
            self.hold(key, max(spent), f"{said} (X-RateLimit-Remaining 0)")

    def _too_late(self, wait: float) -> ToolError:
        from ikigai_web.search.kit import provider_name, rate_limited

        rate = self._rate(self.keys[0])
        pace = f"{rate.per_second:g} requests a second ({rate.source})" if rate else ""
        seconds = math.ceil(min(wait, self._ceiling(self.keys[0])))  # the store bounds it too
        said = f"{provider_name(self.provider)} was not asked"
        why = (
            f"the next free turn of its key{'s' if len(self.keys) > 1 else ''} is in {seconds} s, "
            f"after this call's deadline (paced at {pace} for every process sharing it, and "
            "held for as long as the provider last said it was used up)"
        )
        return rate_limited(self.provider, said, why, seconds)


_SET_ASIDE = (ErrorCode.AUTH_INVALID, ErrorCode.RATE_LIMIT)


class Hold(NamedTuple):
    """A key held or set aside, as `web-tools doctor` lists it."""

    provider: str
    key: str  # the key's one-way name (`key_id`), never the key
    until: float  # wall-clock time, seconds since the epoch
    why: str


def held() -> tuple[list[Hold], list[dict[str, str]]]:
    """Every key held (the provider said it was used up) or set aside (rejected) now, and the
    store's warnings."""
    from ikigai_web.common.state import store

    shared, now = store(), time.time()
    found = []
    for space in (HOLDS, SET_ASIDE):
        for name, value in shared.scan(space):
            hold = _hold(name, value, space)
            if hold is not None and hold.until > now:
                found.append(hold)
    return sorted(found, key=lambda h: (h.provider, h.until)), list(shared.warnings)


def _hold(name: str, value: object, space: str) -> Hold | None:
    provider, _, key = name.partition(":")
    if not isinstance(value, dict):
        return None
    until, why = value.get("until"), value.get("why")
    if not (isinstance(until, int | float) and isinstance(why, str) and math.isfinite(until)):
        return None
    if space == SET_ASIDE:
        why = "the provider rejected the key (AUTH_INVALID); it is tried again after a while"
    return Hold(provider, key, float(until), why[:MAX_WHY])


def release(providers: Sequence[str]) -> tuple[int, list[dict[str, str]]]:
    """Forget every hold, key set aside and budget of `providers` (`brave` or
    `web_search_brave`; all of them when none is named), so that their keys are asked again
    at once: how many keys were held or set aside, and the store's warnings."""
    from ikigai_web.common.state import store

    shared = store()
    starts = [f"{p.removeprefix(registry.PREFIX)}:" for p in providers] or [""]
    count = 0
    for start in starts:
        count += sum(shared.clear(space, start) for space in (HOLDS, SET_ASIDE))
        for space in BUDGETS:
            shared.clear(space, start)
    return count, list(shared.warnings)


def window_limits(
    reply: Reply, most: float = registry.MONTH
) -> list[tuple[int, float, int | None, int | None]]:
    """Brave's rate-limit headers, one tuple per window: (limit, window in seconds, remaining,
    seconds to its reset, at most `most`; a reset may be a Unix time too, as some gateways
    send it). `X-RateLimit-Policy` names each window (`1;w=1, 15000;w=2592000`); without it
    the first is a second and the second a month, as Brave documents."""
    limits = _numbers(reply.headers.get("x-ratelimit-limit", ""))
    if not limits:
        return []
    named = [_window(p) for p in reply.headers.get("x-ratelimit-policy", "").split(",")]
    windows = [w or math.inf for w in named]
    if len(named) != len(limits) or None in named:
        windows = [1.0, 30 * 24 * 3600.0][: len(limits)] + [math.inf] * max(0, len(limits) - 2)
    remaining = _numbers(reply.headers.get("x-ratelimit-remaining", ""))
    resets = _resets(reply.headers.get("x-ratelimit-reset", ""), most)
    return [
        (limit, window, _at(remaining, i), _at(resets, i))
        for i, (limit, window) in enumerate(zip(limits, windows, strict=True))
    ]


def _numbers(text: str) -> list[int]:
    """Counts, ASCII digits only (`isdigit` alone admits "²", which `int` refuses); none
    when any is not one, or too long to be a count."""
    parts = [p.strip() for p in text.split(",")]
    usable = all(p.isascii() and p.isdigit() and len(p) < _MOST_DIGITS for p in parts)
    return [int(p) for p in parts] if usable else []


def _resets(text: str, most: float) -> list[int]:
    """Seconds to each window's reset (`delay_seconds`); none when any is no count."""
    from ikigai_web.net.http import delay_seconds

    found = [delay_seconds(p.strip(), most) for p in text.split(",")]
    return [s for s in found if s is not None] if None not in found else []


def _gist(text: str) -> str:
    first = text.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= MAX_WHY else first[: MAX_WHY - 1] + "…"


def _window(policy: str) -> float | None:
    for part in policy.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name == "w" and value.isdigit() and 0 < int(value) < 1e9:
            return float(value)
    return None


def _at(values: list[int], index: int) -> int | None:
    return values[index] if index < len(values) else None
