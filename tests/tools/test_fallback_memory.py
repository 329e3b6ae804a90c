"""The fallback tool's memory, as pure rules: what a failure or an answer teaches, how long a
note stands, and the order the notes make."""

from __future__ import annotations

import pytest

from ikigai_web.common.errors import ErrorCode
from ikigai_web.tools.fallback import memory as m
from ikigai_web.tools.fallback.memory import Kind, Note

NOW = 1_800_000_000.0
KEY = "k1"  # a credential's hash as the caller passes it


def failure(code: ErrorCode, message: str = "Said so. More.", wait: int | None = None,
            credential: str = KEY) -> Note | None:  # fmt: skip
    return m.from_failure("brave", (code, message, wait), credential, NOW)


def test_a_rate_limit_stands_for_its_retry_after():
    note = failure(ErrorCode.RATE_LIMIT, wait=40)
    assert note is not None
    assert note.kind is Kind.RATE_LIMITED
    assert note.until == NOW + 40
    assert note.said == "Said so"
    assert m.standing(note, KEY, NOW + 39.9)
    assert not m.standing(note, KEY, NOW + 40)


def test_a_rate_limit_without_a_retry_after_stands_a_minute_and_none_beyond_a_day():
    assert failure(ErrorCode.RATE_LIMIT).until == NOW + m.RATE_LIMIT_WAIT  # type: ignore[union-attr]
    assert failure(ErrorCode.RATE_LIMIT, wait=10**9).until == NOW + m.LONGEST  # type: ignore[union-attr]
    assert failure(ErrorCode.RATE_LIMIT, wait=0).until == NOW + 1  # type: ignore[union-attr]


def test_a_provider_without_a_key_that_is_rate_limited_blocks_this_address():
    note = failure(ErrorCode.RATE_LIMIT, credential="")
    assert note is not None
    assert note.kind is Kind.BLOCKED
    assert note.until == NOW + m.BLOCKED_WAIT
    assert m.key("duckduckgo", note.kind, "host1") == "duckduckgo@host1"
    assert m.standing(note, "", NOW + 1)


def test_a_rejected_key_stands_an_hour_or_until_the_key_changes():
    note = failure(ErrorCode.AUTH_INVALID)
    assert note is not None
    assert note.kind is Kind.KEY_REJECTED
    assert m.key("brave", note.kind, "host1") == "brave"  # the key's, shared by machines
    assert m.standing(note, KEY, NOW + 3599)
    assert not m.standing(note, KEY, NOW + 3600)
    assert not m.standing(note, "another key", NOW + 1)
    rate = failure(ErrorCode.RATE_LIMIT)
    assert rate is not None
    assert not m.standing(rate, "another key", NOW + 1)


def test_only_a_timeout_is_a_stall_and_other_failures_teach_nothing():
    note = failure(ErrorCode.NETWORK_ERROR, "timeout: waiting for the answer. Retry.")
    assert note is not None
    assert note.kind is Kind.STALLED
    assert note.until == NOW + m.STALLED_WAIT
    assert m.standing(note, "changed", NOW + 1)  # a stall is not about the key
    assert note.credential == ""
    assert failure(ErrorCode.NETWORK_ERROR, "connect: refused") is None
    for code in (ErrorCode.API_ERROR, ErrorCode.AUTH_MISSING, ErrorCode.INVALID_INPUT):
        assert failure(code) is None


def test_a_provider_still_out_when_another_answered_stalled():
    note = m.stalled("tavily", 5.04, NOW)
    assert (note.kind, note.code, note.said) == (Kind.STALLED, ErrorCode.NETWORK_ERROR,
                                                 "no answer in 5 s")  # fmt: skip
    assert m.key("tavily", note.kind, "h") == "tavily@h"


def test_empty_answers_set_a_provider_aside_only_when_repeated_for_different_queries():
    note = None
    for i, query in enumerate(["q1", "q2", "q2", "q3"]):
        note = m.from_answer("duckduckgo", 0, query, note, NOW + i)
        assert note is not None
    assert note is not None
    assert note.empties == m.EMPTY_AFTER  # q2 twice counts once
    assert m.standing(note, "", NOW + 4)
    assert not m.standing(note, "", NOW + 3 + m.EMPTY_WAIT)
    two = m.from_answer("duckduckgo", 0, "q2", m.from_answer("duckduckgo", 0, "q1", None, NOW), NOW)
    assert two is not None
    assert not m.standing(two, "", NOW)  # two in a row: still asked first


def test_an_answer_with_results_forgets_and_old_empties_do_not_count():
    empty = m.from_answer("duckduckgo", 0, "q1", None, NOW)
    assert m.from_answer("duckduckgo", 3, "q2", empty, NOW) is None
    later = m.from_answer("duckduckgo", 0, "q2", empty, NOW + m.EMPTY_WINDOW + 1)
    assert later is not None
    assert later.empties == 1
    rate = failure(ErrorCode.RATE_LIMIT)
    after = m.from_answer("brave", 0, "q", rate, NOW)
    assert after is not None
    assert (after.kind, after.empties) == (Kind.EMPTY, 1)


def test_the_plan_skips_hard_notes_and_asks_soft_ones_last():
    rate = failure(ErrorCode.RATE_LIMIT)
    stall = m.stalled("tavily", 5, NOW)
    assert rate is not None
    plan = m.plan(["brave", "tavily", "google", "duckduckgo"], {"brave": rate, "tavily": stall})
    assert plan.order == ["google", "duckduckgo", "tavily"]
    assert plan.skipped == [rate]
    assert plan.last == [stall]


def test_of_two_notes_a_skip_binds_before_a_stall():
    rate = failure(ErrorCode.RATE_LIMIT, wait=5)
    stall = m.stalled("brave", 5, NOW)
    assert m.binding([stall, rate]) is rate  # type: ignore[list-item]
    assert m.binding([]) is None


def test_notes_round_trip_through_json_and_bad_values_are_no_note():
    note = failure(ErrorCode.AUTH_INVALID)
    assert note is not None
    assert m.parse(note.as_json()) == note
    good = note.as_json()
    bad: object
    for bad in (None, [], "x", good | {"kind": "nope"}, good | {"code": "NOPE"},
                good | {"until": "soon"}, good | {"until": float("inf")}, good | {"empties": True},
                good | {"said": 3}, good | {"said": "x" * 301}, good | {"extra": 1},
                {"provider": "brave"}):  # fmt: skip
        assert m.parse(bad) is None, bad


def test_the_reason_says_what_when_and_until_when():
    note = failure(ErrorCode.RATE_LIMIT, "Brave answered HTTP 429. Wait.", wait=300)
    assert note is not None
    assert m.reason(note, NOW + 12) == (
        "its rate limit was reached 12 s ago, and it is asked again in 5 min (RATE_LIMIT: "
        "Brave answered HTTP 429)"
    )
    assert m.retry_after(note, NOW + 12) == 288
    assert m.retry_after(note, NOW + 400) == 1
    assert m.ttl(note, NOW) == 300 + m.KEPT_PAST_DUE
    assert m.ttl(note, NOW + 400) == m.KEPT_PAST_DUE


@pytest.mark.parametrize(
    ("value", "shown"),
    [(0.2, "1 s"), (-3, "0 s"), (119, "119 s"), (120, "2 min"), (7139, "119 min"), (7199, "2 h"),
     (7200, "2 h"), (7260, "2 h 1 min"), (86400, "24 h")],
)  # fmt: skip
def test_spans_read_as_a_person_reads_them(value, shown):
    assert m.span(value) == shown


def test_the_gist_is_the_first_sentence_and_short():
    assert m.gist("One. Two.") == "One"
    assert len(m.gist("x" * 1000)) == 300
