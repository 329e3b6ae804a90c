"""web-search-gemini-tool: input, thinking, request, grounding shape, redirect resolution,
errors, markdown, and the key never in any output."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import reply
from gemini_support import (
    ALJAZEERA,
    BLOCKED_PROMPT,
    ENTRY,
    FIRST,
    KEY,
    KEY_INVALID,
    NOT_FOUND,
    QUOTA,
    REDIRECT,
    SAFETY_STOP,
    SECOND,
    SERVICE_DISABLED,
    UEFA,
    UNGROUNDED,
    chunk,
    grounded,
    params,
    retry_info,
    status,
)

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.search.kit import Request
from ikigai_web.tools import web_search_gemini as gem

# --- Gemini's documented formats -------------------------------------------------------------


RECITATION_STOP: dict[str, Any] = {
    "candidates": [
        {
            "content": {"parts": [{"text": "It was the best of times, it was"}], "role": "model"},
            "finishReason": "RECITATION",
            "index": 0,
        }
    ]
}


UNAUTHENTICATED = status(
    401, "UNAUTHENTICATED",
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential.",
)  # fmt: skip
BAD_LEVEL = status(400, "INVALID_ARGUMENT", "Thinking level MINIMAL is not supported.")
OVERLOADED = status(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
LOCATION = status(400, "FAILED_PRECONDITION", "User location is not supported for the API use.")


# --- input ---------------------------------------------------------------------------------


def test_defaults():
    assert params() == gem.Params(query="who won euro 2024")
    assert (params().model, params().thinking_level, params().max_sources) == (
        "gemini-3.8-flash", "low", 10,
    )  # fmt: skip


def test_every_parameter():
    got = params(
        model="Models/Gemini-2.5-Flash", thinking_level="HIGH", max_sources=20,
        allowed_domains=["https://www.UEFA.com/euro2024"], blocked_domains=["*.reddit.com"],
        time_filter="week",
    )  # fmt: skip
    assert got == gem.Params(
        "who won euro 2024", "gemini-2.5-flash", "high", 20, ("www.uefa.com",), ("reddit.com",),
        "week",
    )  # fmt: skip


def test_not_set_words_mean_the_defaults():
    got = params(model="", thinking_level="default", time_filter="any", max_sources=None)
    assert got == gem.Params(query="who won euro 2024")
    assert params(model="default").model == gem.DEFAULT_MODEL


@pytest.mark.parametrize(
    ("raw", "field", "says"),
    [
        ({"query": "x"}, "query", "2 to 2000"),
        ({"query": "q" * 2001}, "query", "2 to 2000"),
        ({"model": "../../v1/files"}, "model", "Gemini model name"),
        ({"model": "gemini-3.8-flash:streamGenerateContent"}, "model", "Gemini model name"),
        ({"model": "gemini..flash"}, "model", "Gemini model name"),
        ({"model": "gemini/flash"}, "model", "Gemini model name"),
        ({"model": "gemini-3.8-flash?alt=sse"}, "model", "Gemini model name"),
        ({"model": "gemini%2fflash"}, "model", "Gemini model name"),
        ({"model": "-gemini"}, "model", "Gemini model name"),
        ({"model": "g" * 101}, "model", "Gemini model name"),
        ({"model": 3}, "model", "must be a string"),
        ({"thinking_level": "max"}, "thinking_level", "none, low, medium, high"),
        ({"max_sources": 0}, "max_sources", "from 1 to 20"),
        ({"max_sources": 21}, "max_sources", "from 1 to 20"),
        ({"max_sources": True}, "max_sources", "from 1 to 20"),
        ({"time_filter": "decade"}, "time_filter", "day, week, month, year"),
        ({"allowed_domains": ["not a domain"]}, "allowed_domains", "domain name"),
        ({"blocked_domains": "reddit.com"}, "blocked_domains", "array of strings"),
    ],
)
def test_invalid_input(raw, field, says):
    with pytest.raises(ToolError) as caught:
        params(**raw)
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert f"'{field}'" in caught.value.message
    assert says in caught.value.message


# --- thinking and the request --------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "level", "config"),
    [
        # Gemini 3.8 Flash, the default: LOW, MEDIUM, HIGH; no MINIMAL.
        ("gemini-3.8-flash", "none", {"thinkingLevel": "LOW"}),
        ("gemini-3.8-flash", "low", {"thinkingLevel": "LOW"}),
        ("gemini-3.8-flash", "medium", {"thinkingLevel": "MEDIUM"}),
        ("gemini-3.8-flash", "high", {"thinkingLevel": "HIGH"}),
        ("gemini-3.7-flash", "none", {"thinkingLevel": "LOW"}),
        ("gemini-flash-latest", "none", {"thinkingLevel": "LOW"}),
        # Models that take all four levels.
        ("gemini-3-flash-preview", "none", {"thinkingLevel": "MINIMAL"}),
        ("gemini-3.6-flash", "none", {"thinkingLevel": "MINIMAL"}),
        ("gemini-3.1-flash-lite", "none", {"thinkingLevel": "MINIMAL"}),
        ("gemini-flash-lite-latest", "medium", {"thinkingLevel": "MEDIUM"}),
        # Pro models: 3.1 Pro has no MINIMAL, 3 Pro only LOW and HIGH.
        ("gemini-3.1-pro-preview", "none", {"thinkingLevel": "LOW"}),
        ("gemini-3-pro-preview", "none", {"thinkingLevel": "LOW"}),
        ("gemini-3-pro-preview", "medium", {"thinkingLevel": "HIGH"}),
        # Gemini 2.5: a token budget; 0 turns thinking off except on Pro (minimum 128).
        ("gemini-2.5-flash", "none", {"thinkingBudget": 0}),
        ("gemini-2.5-flash", "low", {"thinkingBudget": 1024}),
        ("gemini-2.5-flash", "medium", {"thinkingBudget": 8192}),
        ("gemini-2.5-flash", "high", {"thinkingBudget": 24576}),
        ("gemini-2.5-flash-lite", "low", {"thinkingBudget": 1024}),
        ("gemini-2.5-pro", "none", {"thinkingBudget": 128}),
        ("gemini-2.5-pro", "high", {"thinkingBudget": 32768}),
        # Models that do not think get no thinking configuration at all.
        ("gemini-2.0-flash", "low", None),
        ("gemma-3-27b-it", "high", None),
    ],
)
def test_thinking_config(model, level, config):
    assert gem.thinking_config(model, level) == config


def test_request_body_is_the_documented_shape():
    assert gem.request_body(params()) == {
        "contents": [{"role": "user", "parts": [{"text": "who won euro 2024"}]}],
        "tools": [{"google_search": {}}],
        "generationConfig": {"thinkingConfig": {"thinkingLevel": "LOW"}},
    }
    assert "generationConfig" not in gem.request_body(params(model="gemini-2.0-flash"))


def test_domains_and_time_go_into_the_prompt():
    text = gem.prompt(
        params(allowed_domains=["uefa.com", "bbc.co.uk"], blocked_domains=["reddit.com", "x.com"],
               time_filter="month")
    )  # fmt: skip
    assert text == (
        "who won euro 2024\n\nSearch only these sites: site:uefa.com OR site:bbc.co.uk\n\n"
        "Leave out these sites: -site:reddit.com -site:x.com\n\n"
        "Use only sources published in the past month."
    )


def test_arguments_from_the_common_request():
    request = Request("euro 2024", 25, ("uefa.com",), ("reddit.com",), "day")
    raw = gem.arguments(request)
    assert raw == {
        "query": "euro 2024", "max_sources": 20, "allowed_domains": ["uefa.com"],
        "blocked_domains": ["reddit.com"], "time_filter": "day",
    }  # fmt: skip
    assert gem.parse_input(raw).time_filter == "day"
    assert gem.arguments(Request("euro 2024"))["time_filter"] == "any"
    assert gem.parse_input(gem.arguments(Request("euro 2024"))).max_sources == 10


# --- shaping the answer ----------------------------------------------------------------------


def test_shape_output_of_the_documented_answer():
    out = gem.shape_output(grounded())
    assert out.answer == f"{FIRST} {SECOND}"
    assert out.sources == (
        gem.Source(f"{REDIRECT}/AUZIYQH1", "aljazeera.com", f"{FIRST} {SECOND}"),
        gem.Source(f"{REDIRECT}/AUZIYQG2", "uefa.com", SECOND),
    )
    assert out.queries == ["UEFA Euro 2024 winner", "who won euro 2024"]
    assert out.entry_point == ENTRY


def test_thought_parts_are_not_the_answer():
    body = grounded()
    body["candidates"][0]["content"]["parts"] = [
        {"text": "**Searching** for the final's result", "thought": True},
        {"text": "Spain won. "},
        {"text": "2-1 over England.", "thoughtSignature": "Cs4B"},
        {"functionCall": {"name": "x", "args": {}}},
    ]
    assert gem.shape_output(body).answer == "Spain won. 2-1 over England."


def test_without_grounding_metadata_the_answer_stands_alone():
    out = gem.shape_output(UNGROUNDED)
    assert (out.answer, out.sources, out.queries, out.entry_point) == (
        "Hello! How can I help you today?", (), [], None,
    )  # fmt: skip


def test_a_blocked_prompt_is_api_error_saying_so():
    with pytest.raises(ToolError) as caught:
        gem.shape_output(BLOCKED_PROMPT)
    assert caught.value.code is ErrorCode.API_ERROR
    assert "blocked the query" in caught.value.message
    assert "blockReason SAFETY: HARM_CATEGORY_DANGEROUS_CONTENT" in caught.value.message


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (SAFETY_STOP, "for safety (finishReason SAFETY: HARM_CATEGORY_DANGEROUS_CONTENT)"),
        (RECITATION_STOP, "reciting a source too closely (finishReason RECITATION)"),
        ({"candidates": [{"finishReason": "PROHIBITED_CONTENT"}]}, "prohibited content"),
    ],
)
def test_a_withheld_answer_is_api_error_saying_so(body, says):
    with pytest.raises(ToolError) as caught:
        gem.shape_output(body)
    assert caught.value.code is ErrorCode.API_ERROR
    assert says in caught.value.message
    assert "Rephrase the query" in caught.value.message


@pytest.mark.parametrize(
    ("body", "says"),
    [
        ([1, 2], "not an object"),
        ({}, "without an answer"),
        ({"candidates": []}, "without an answer"),
        ({"candidates": [{"finishReason": "MAX_TOKENS", "content": {"parts": []}}]},
         "without an answer (finishReason MAX_TOKENS)"),
        ({"candidates": [{"finishReason": "MALFORMED<b>", "content": {}}]}, "without an answer."),
    ],
)  # fmt: skip
def test_no_usable_answer_is_api_error(body, says):
    with pytest.raises(ToolError) as caught:
        gem.shape_output(body)
    assert caught.value.code is ErrorCode.API_ERROR
    assert says in caught.value.message


def test_hostile_values_never_crash_and_stay_bounded():
    body = grounded(
        chunks=[{"web": {"uri": 7, "title": None}}, {"web": "x"}, None,
                chunk("javascript:alert(1)", "evil"), chunk(f"{REDIRECT}/ok", ["not", "text"]),
                *[chunk(f"{REDIRECT}/{i}", f"site{i}.example") for i in range(100)]],
        supports=[{"segment": {"text": "cited"}, "groundingChunkIndices": [
            True, -1, 10**30, float("nan"), "4", 4, 4, None]},
                  {"segment": "x", "groundingChunkIndices": [4]}, 5,
                  {"segment": {"text": "x" * 50_000}, "groundingChunkIndices": [4]}],
        text="A" * 100_000,
    )  # fmt: skip
    meta = body["candidates"][0]["groundingMetadata"]
    meta["webSearchQueries"] = ["ok", None, 5, "", "<b>bold</b>", *["q"] * 50]
    meta["searchEntryPoint"] = {"renderedContent": "<div>" + "x" * 40_000 + "</div>"}
    out = gem.shape_output(body)
    assert len(out.answer) == gem.MAX_ANSWER
    assert len(out.sources) == gem.MAX_CHUNKS - 3  # three chunks have no usable uri
    assert out.sources[1].title == ""
    assert out.sources[1].snippet.startswith("cited " + "x" * 100)
    assert out.queries == ["ok", "bold", "q"]
    assert out.entry_point is None
    results = gem.sources_as_results(out.sources, {})
    assert "javascript" not in json.dumps(results)
    assert all(len(r["snippet"]) <= 2000 for r in results)


def test_an_echoed_key_is_masked_in_the_answer(monkeypatch):
    from ikigai_web.common.redact import register_secret

    register_secret(KEY)
    body = grounded(text=("x" * (gem.MAX_ANSWER - 10)) + KEY)  # the cut falls inside the key
    assert KEY[:8] not in gem.shape_output(body).answer


@pytest.mark.parametrize(
    ("code", "header", "expected"),
    [
        (302, ALJAZEERA, ALJAZEERA),
        (301, f"  {UEFA} ", UEFA),
        (307, UEFA, UEFA),
        (302, None, None),
        (302, "/relative/path", None),
        (302, "javascript:alert(1)", None),
        (302, "ftp://files.example/x", None),
        (302, "https://user:pw@evil.example/", None),
        (200, None, "SELF"),
        (404, UEFA, None),
        (500, None, None),
    ],
)
def test_location(code, header, expected):
    url = f"{REDIRECT}/AUZIYQH1"
    assert gem.location(url, code, header) == (url if expected == "SELF" else expected)


def test_results_from_resolved_sources():
    out = gem.shape_output(grounded())
    real = {f"{REDIRECT}/AUZIYQH1": ALJAZEERA, f"{REDIRECT}/AUZIYQG2": UEFA}
    assert gem.sources_as_results(out.sources, real) == [
        {"title": "www.aljazeera.com", "url": ALJAZEERA, "snippet": f"{FIRST} {SECOND}"},
        {"title": "www.uefa.com", "url": UEFA, "snippet": SECOND},
    ]


def test_a_real_title_is_kept_and_an_unresolved_link_keeps_googles_title():
    sources = (
        gem.Source(f"{REDIRECT}/a", "Spain beat England to win Euro 2024", "s"),
        gem.Source(f"{REDIRECT}/b", "uefa.com", "t"),
    )
    results = gem.sources_as_results(sources, {f"{REDIRECT}/a": ALJAZEERA})
    assert [(r["title"], r["url"]) for r in results] == [
        ("Spain beat England to win Euro 2024", ALJAZEERA),
        ("uefa.com", f"{REDIRECT}/b"),
    ]


def test_sources_are_deduplicated_by_url_and_their_snippets_merged():
    sources = (
        gem.Source(f"{REDIRECT}/a", "uefa.com", "First."),
        gem.Source(f"{REDIRECT}/b", "uefa.com", "Second."),
        gem.Source(f"{REDIRECT}/c", "uefa.com", "First."),
        gem.Source(f"{REDIRECT}/a", "uefa.com", ""),
    )
    real = {f"{REDIRECT}/a": UEFA, f"{REDIRECT}/b": UEFA + "#report", f"{REDIRECT}/c": UEFA}
    assert gem.sources_as_results(sources, real) == [
        {"title": "www.uefa.com", "url": UEFA, "snippet": "First. Second."}
    ]


# --- error answers ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "body", "headers", "expected", "says"),
    [
        (400, KEY_INVALID, {}, "AUTH_INVALID",
         "HTTP 400: (API_KEY_INVALID, INVALID_ARGUMENT) API key not valid"),
        (401, UNAUTHENTICATED, {}, "AUTH_INVALID", "(UNAUTHENTICATED) Request had invalid"),
        (403, SERVICE_DISABLED, {}, "AUTH_INVALID", "(SERVICE_DISABLED, PERMISSION_DENIED)"),
        (403, "", {}, "AUTH_INVALID", "HTTP 403 with an empty body"),
        (429, QUOTA, {}, "RATE_LIMIT", "(RESOURCE_EXHAUSTED) You exceeded your current quota"),
        (404, NOT_FOUND, {}, "API_ERROR", "models/gemini-9-flash is not found"),
        (400, BAD_LEVEL, {}, "API_ERROR", "Thinking level MINIMAL is not supported"),
        (400, LOCATION, {}, "API_ERROR", "(FAILED_PRECONDITION) User location"),
        (503, OVERLOADED, {}, "API_ERROR", "(UNAVAILABLE) The model is overloaded"),
        (502, "<html><title>502 Bad Gateway</title></html>", {"Content-Type": "text/html"},
         "API_ERROR", "HTTP 502: 502 Bad Gateway"),
    ],
)  # fmt: skip
def test_error_mapping(code, body, headers, expected, says):
    err = gem.error_for(reply(code, body, headers))
    assert err.code.value == expected
    assert says in err.message
    assert "Gemini answered" in err.message


def test_auth_invalid_tells_where_the_key_goes():
    err = gem.error_for(reply(400, KEY_INVALID))
    assert "GEMINI_API_KEY" in err.message
    assert err.event is not None
    assert err.event["data"]["error_type"] == "auth_invalid"
    assert err.event["data"]["env"] == ["GEMINI_API_KEY"]
    assert err.event["data"]["signup_url"] == "https://aistudio.google.com/apikey"


def test_rate_limit_waits_as_retry_info_says_and_offers_other_tools():
    err = gem.error_for(reply(429, QUOTA))
    assert (err.code, err.retry_after) == (ErrorCode.RATE_LIMIT, 31)
    assert "Try again in 31 s" in err.message
    assert err.event is not None
    assert "web_search_duckduckgo" in err.event["data"]["alternative_tools"]


@pytest.mark.parametrize(
    ("details", "headers", "wait"),
    [
        ([retry_info("0.5s")], {}, 1),
        ([retry_info("12.000001s")], {}, 13),
        ([retry_info("99999999999s")], {}, None),  # not a Duration we read: no wait at all
        ([retry_info("999999999s")], {}, 86400),
        ([retry_info("soon")], {"Retry-After": "7"}, 7),
        ([{"retryDelay": "5s"}], {}, None),  # not a RetryInfo
        ([], {"Retry-After": "20"}, 20),
        ([], {}, None),
    ],
)
def test_retry_seconds(details, headers, wait):
    body = status(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted", *details)
    assert gem.retry_seconds(reply(429, body, headers)) == wait
