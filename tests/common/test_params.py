"""Argument getters: clean values or INVALID_INPUT naming the field, value and what is allowed."""

from __future__ import annotations

import pytest

from ikigai_web.common import params as p
from ikigai_web.common.errors import ErrorCode, ToolError


def bad(fn, *args, **kwargs) -> str:
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)
    assert info.value.code is ErrorCode.INVALID_INPUT
    return info.value.message


def test_integer_defaults_and_bounds():
    assert p.integer({}, "n", 10, 1, 20) == 10
    assert p.integer({"n": None}, "n", 10, 1, 20) == 10
    assert p.integer({"n": 20}, "n", 10, 1, 20) == 20
    assert p.integer({"n": 3.0}, "n", 10, 1, 20) == 3
    msg = bad(p.integer, {"n": 21}, "n", 10, 1, 20)
    assert "'n' is 21" in msg
    assert "from 1 to 20" in msg


@pytest.mark.parametrize("value", [True, "5", 2.5, [1], {}])
def test_integer_rejects_other_types(value):
    assert "integer" in bad(p.integer, {"n": value}, "n", 10, 1, 20)


def test_boolean():
    assert p.boolean({}, "b", default=True) is True
    assert p.boolean({"b": False}, "b", default=True) is False
    assert "true or false" in bad(p.boolean, {"b": "yes"}, "b", default=True)


def test_text_strips_and_treats_empty_as_absent():
    assert p.text({"s": "  hi  "}, "s") == "hi"
    assert p.text({"s": "   "}, "s") is None
    assert p.text({}, "s") is None
    assert "string" in bad(p.text, {"s": 5}, "s")
    assert "1 to 3" in bad(p.text, {"s": "long"}, "s", lo=1, hi=3)


def test_query_length():
    assert p.query({"query": " ab "}, lo=2, hi=5) == "ab"
    assert "2 to 5" in bad(p.query, {"query": "a"}, lo=2, hi=5)
    bad(p.query, {"query": "abcdef"}, lo=2, hi=5)
    bad(p.query, {"query": "   "}, lo=2, hi=5)


def test_choice_accepts_any_case_and_names_allowed_values():
    assert p.choice({"c": "Day"}, "c", ("day", "week")) == "day"
    assert p.choice({}, "c", ("day",)) is None
    assert "allowed values are day, week" in bad(p.choice, {"c": "hour"}, "c", ("day", "week"))


def test_string_list():
    assert p.string_list({}, "d") == []
    assert p.string_list({"d": ["a", "b"]}, "d") == ["a", "b"]
    assert "array of strings" in bad(p.string_list, {"d": "a.com"}, "d")
    bad(p.string_list, {"d": ["a", 1]}, "d")
    assert "at most 2" in bad(p.string_list, {"d": ["a", "b", "c"]}, "d", most=2)


def test_long_values_are_shortened_in_messages():
    msg = bad(p.integer, {"n": "x" * 500}, "n", 1, 1, 2)
    assert len(msg) < 200
