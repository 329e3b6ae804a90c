"""web-search-gemini-tool: input, thinking, request, grounding shape, redirect resolution,
errors, markdown, and the key never in any output."""

from __future__ import annotations

import json
import socket
import threading
import time
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from conftest import BEFORE_THE_DEADLINE, HANG_GUARD, STALL, Reply, Seen, reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.common.settings import load
from ikigai_web.search.kit import Request
from ikigai_web.tools import web_search_gemini as gem

TOOL = "web-search-gemini-tool"
KEY = "AIzaSyGEMINI-LEAKCANARY-5f2e9d41c7"  # distinctive: must never appear in any output
BASE = "https://generativelanguage.googleapis.com/v1beta"
API = f"{BASE}/models/{gem.DEFAULT_MODEL}:generateContent"
REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect"
ALJAZEERA = "https://www.aljazeera.com/sports/2024/7/14/spain-beat-england-to-win-euro-2024"
UEFA = "https://www.uefa.com/euro2024/news/0290-1bbd8a8e5b6b-spain-england-report/"
FIRST = "Spain won Euro 2024, defeating England 2-1 in the final."
SECOND = "This victory marks Spain's record fourth European Championship title."
ENTRY = (
    '<style>.container { align-items: center; }</style><div class="container">'
    '<a class="chip" href="https://www.google.com/search?q=who+won+euro+2024">who won euro '
    "2024</a></div>"
)


# --- Gemini's documented formats -------------------------------------------------------------


def chunk(uri: str, title: Any) -> dict[str, Any]:
    return {"web": {"uri": uri, "title": title}}


def support(text: str, start: int | None, end: int, *indices: int) -> dict[str, Any]:
    # proto3 JSON leaves out a zero startIndex, as the real answers do.
    segment: dict[str, Any] = {"endIndex": end, "text": text}
    if start:
        segment["startIndex"] = start
    return {"segment": segment, "groundingChunkIndices": list(indices)}


def grounded(
    redirect: str = REDIRECT,
    *,
    chunks: list[Any] | None = None,
    supports: list[Any] | None = None,
    text: str = f"{FIRST} {SECOND}",
) -> dict[str, Any]:
    """A generateContent answer with grounding, shaped like the example of Google's "Grounding
    with Google Search" guide (ai.google.dev/gemini-api/docs/google-search)."""
    if chunks is None:
        chunks = [chunk(f"{redirect}/AUZIYQH1", "aljazeera.com"),
                  chunk(f"{redirect}/AUZIYQG2", "uefa.com")]  # fmt: skip
    if supports is None:
        supports = [support(FIRST, None, 56, 0), support(SECOND, 57, 129, 0, 1)]
    return {
        "candidates": [
            {
                "content": {
                    "parts": [{"text": text, "thoughtSignature": "CsYBAdHtim8Q0f3xQ=="}],
                    "role": "model",
                },
                "finishReason": "STOP",
                "index": 0,
                "groundingMetadata": {
                    "webSearchQueries": ["UEFA Euro 2024 winner", "who won euro 2024"],
                    "searchEntryPoint": {"renderedContent": ENTRY},
                    "groundingChunks": chunks,
                    "groundingSupports": supports,
                },
            }
        ],
        "usageMetadata": {
            "promptTokenCount": 8,
            "candidatesTokenCount": 27,
            "totalTokenCount": 117,
            "thoughtsTokenCount": 82,
            "toolUsePromptTokenCount": 95,
            "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 8}],
        },
        "modelVersion": gem.DEFAULT_MODEL,
        "responseId": "mC5xaOfcFqLsz7IPjdfYmQw",
    }


UNGROUNDED: dict[str, Any] = {
    "candidates": [
        {
            "content": {"parts": [{"text": "Hello! How can I help you today?"}], "role": "model"},
            "finishReason": "STOP",
            "index": 0,
        }
    ],
    "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 9, "totalTokenCount": 11},
    "modelVersion": gem.DEFAULT_MODEL,
}
RATINGS = [
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "LOW"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
]
BLOCKED_PROMPT: dict[str, Any] = {
    "promptFeedback": {"blockReason": "SAFETY", "safetyRatings": RATINGS},
    "usageMetadata": {"promptTokenCount": 12, "totalTokenCount": 12},
    "modelVersion": gem.DEFAULT_MODEL,
}
SAFETY_STOP: dict[str, Any] = {
    "candidates": [{"finishReason": "SAFETY", "index": 0, "safetyRatings": RATINGS}],
    "modelVersion": gem.DEFAULT_MODEL,
}
RECITATION_STOP: dict[str, Any] = {
    "candidates": [
        {
            "content": {"parts": [{"text": "It was the best of times, it was"}], "role": "model"},
            "finishReason": "RECITATION",
            "index": 0,
        }
    ]
}


def status(code: int, state: str, message: str, *details: dict[str, Any]) -> dict[str, Any]:
    """A google.rpc.Status error answer."""
    error: dict[str, Any] = {"code": code, "message": message, "status": state}
    if details:
        error["details"] = list(details)
    return {"error": error}


def error_info(reason: str) -> dict[str, Any]:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }


def retry_info(delay: str) -> dict[str, Any]:
    return {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}


KEY_INVALID = status(
    400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key.",
    error_info("API_KEY_INVALID"),
    {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
     "message": "API key not valid. Please pass a valid API key."},
)  # fmt: skip
QUOTA_MESSAGE = (
    "You exceeded your current quota, please check your plan and billing details. For more "
    "information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.\n"
    "* Quota exceeded for metric: generativelanguage.googleapis.com/"
    "generate_content_free_tier_requests, limit: 10, model: gemini-3.8-flash\n"
    "Please retry in 31.093s."
)
QUOTA = status(
    429, "RESOURCE_EXHAUSTED", QUOTA_MESSAGE,
    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [
        {"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
         "quotaId": "GenerateRequestsPerMinutePerProjectPerModel-FreeTier",
         "quotaDimensions": {"location": "global", "model": "gemini-3.8-flash"},
         "quotaValue": "10"}]},
    {"@type": "type.googleapis.com/google.rpc.Help", "links": [
        {"description": "Learn more about Gemini API quotas",
         "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}]},
    retry_info("31s"),
)  # fmt: skip
UNAUTHENTICATED = status(
    401, "UNAUTHENTICATED",
    "Request had invalid authentication credentials. Expected OAuth 2 access token, login "
    "cookie or other valid authentication credential.",
)  # fmt: skip
SERVICE_DISABLED = status(
    403, "PERMISSION_DENIED",
    "Generative Language API has not been used in project 1234 before or it is disabled.",
    error_info("SERVICE_DISABLED"),
)  # fmt: skip
NOT_FOUND = status(
    404, "NOT_FOUND",
    "models/gemini-9-flash is not found for API version v1beta, or is not supported for "
    "generateContent. Call ListModels to see the list of available models and their supported "
    "methods.",
)  # fmt: skip
BAD_LEVEL = status(400, "INVALID_ARGUMENT", "Thinking level MINIMAL is not supported.")
OVERLOADED = status(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
LOCATION = status(400, "FAILED_PRECONDITION", "User location is not supported for the API use.")


def params(**raw: Any) -> gem.Params:
    return gem.parse_input({"query": "who won euro 2024"} | raw)


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


# --- calls (pytest-httpx) ---------------------------------------------------------------------


@pytest.fixture
def configured(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setattr("ikigai_web.net.http.time.sleep", lambda _: None)
    public_dns(monkeypatch)


def public_dns(monkeypatch) -> None:
    """Every name resolves to a public address (the requests are answered by pytest-httpx)."""
    import ipaddress

    answer = [ipaddress.ip_address("142.250.1.1")]
    monkeypatch.setattr("ikigai_web.fetch.network.guard.resolve", lambda *_: answer)


def loopback_redirects(fake_server) -> dict[str, str]:
    """Google's redirect service played by the loopback server, which the guard lets through."""
    return {
        "GEMINI_REDIRECT_URL": f"{fake_server.url}/grounding-api-redirect/",
        "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1",
    }


@pytest.fixture
def redirects_here(fake_server, monkeypatch):
    for name, value in loopback_redirects(fake_server).items():
        monkeypatch.setenv(name, value)


def redirects(httpx_mock, *pairs: tuple[str, str]) -> None:
    for path, target in pairs:
        httpx_mock.add_response(url=f"{REDIRECT}/{path}", method="GET", status_code=302,
                                headers={"Location": target})  # fmt: skip


def test_execute_sends_the_documented_request_and_resolves_the_links(httpx_mock, configured):
    httpx_mock.add_response(url=API, method="POST", json=grounded())
    redirects(httpx_mock, ("AUZIYQH1", ALJAZEERA), ("AUZIYQG2", UEFA))
    out = gem.execute({"query": "who won euro 2024"}, load())
    sent = httpx_mock.get_request(url=API)
    assert sent.headers["x-goog-api-key"] == KEY
    assert sent.headers["content-type"] == "application/json"
    assert KEY not in str(sent.url)
    assert json.loads(sent.content) == gem.request_body(params())
    for path in ("AUZIYQH1", "AUZIYQG2"):
        lookup = httpx_mock.get_request(url=f"{REDIRECT}/{path}")
        assert "x-goog-api-key" not in lookup.headers
    assert out == {
        "success": True,
        "provider": "gemini",
        "results": [
            {"title": "www.aljazeera.com", "url": ALJAZEERA, "snippet": f"{FIRST} {SECOND}"},
            {"title": "www.uefa.com", "url": UEFA, "snippet": SECOND},
        ],
        "count": 2,
        "answer": f"{FIRST} {SECOND}",
        "search_queries": ["UEFA Euro 2024 winner", "who won euro 2024"],
    }


def test_the_answer_is_cached_without_the_key(httpx_mock, configured, tmp_path):
    httpx_mock.add_response(url=API, json=grounded())
    redirects(httpx_mock, ("AUZIYQH1", ALJAZEERA), ("AUZIYQG2", UEFA))
    first = gem.execute({"query": "who won euro 2024"}, load())
    second = gem.execute({"query": "who won euro 2024"}, load())
    assert second == first | {"cached": True}
    assert len(httpx_mock.get_requests(url=API)) == 1
    for path in (tmp_path / "cache").rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes()


def test_resolution_off_keeps_the_redirect_links(httpx_mock, configured, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_RESOLVE", "0")
    httpx_mock.add_response(url=API, json=grounded())
    out = gem.execute({"query": "who won euro 2024"}, load())
    assert len(httpx_mock.get_requests()) == 1
    assert [(r["title"], r["url"]) for r in out["results"]] == [
        ("aljazeera.com", f"{REDIRECT}/AUZIYQH1"),
        ("uefa.com", f"{REDIRECT}/AUZIYQG2"),
    ]
    assert "warnings" not in out


def test_search_entry_point_only_when_the_setting_asks(httpx_mock, configured, monkeypatch):
    httpx_mock.add_response(url=API, json=grounded(), is_reusable=True)
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_RESOLVE", "0")
    assert "search_entry_point" not in gem.execute({"query": "euro 2024"}, load())
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_SEARCH_ENTRY_POINT", "1")
    assert gem.execute({"query": "euro 2024"}, load())["search_entry_point"] == ENTRY


def test_without_grounding_the_answer_comes_with_empty_lists(httpx_mock, configured, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_SEARCH_ENTRY_POINT", "1")
    httpx_mock.add_response(url=API, json=UNGROUNDED)
    out = gem.execute({"query": "hello there"}, load())
    assert out == {
        "success": True, "provider": "gemini", "results": [], "count": 0,
        "answer": "Hello! How can I help you today?", "search_queries": [],
    }  # fmt: skip


def test_max_sources_and_domains_filter_the_sources(httpx_mock, configured, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_RESOLVE", "0")
    chunks = [
        chunk(f"https://{host}/page", host)
        for host in (
            "www.uefa.com",
            "reddit.com",
            "old.reddit.com",
            "www.bbc.co.uk",
            "uefa.com",
            "espn.com",
        )
    ]
    httpx_mock.add_response(url=API, json=grounded(chunks=chunks, supports=[]), is_reusable=True)
    out = gem.execute({"query": "euro 2024", "max_sources": 2}, load())
    assert [r["url"] for r in out["results"]] == [
        "https://www.uefa.com/page",
        "https://reddit.com/page",
    ]
    out = gem.execute(
        {"query": "euro 2024", "allowed_domains": ["uefa.com", "reddit.com"],
         "blocked_domains": ["old.reddit.com"]}, load())  # fmt: skip
    assert [r["url"] for r in out["results"]] == [
        "https://www.uefa.com/page", "https://reddit.com/page", "https://uefa.com/page",
    ]  # fmt: skip
    sent = json.loads(httpx_mock.get_requests()[-1].content)["contents"][0]["parts"][0]["text"]
    assert "site:uefa.com OR site:reddit.com" in sent
    assert "-site:old.reddit.com" in sent


def test_an_unresolved_redirect_link_is_filtered_by_the_domain_google_titles_it_with(
    httpx_mock, configured, monkeypatch
):
    # Unresolved, a source's URL is on Google's host: the site it leads to is its title.
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_RESOLVE", "0")
    chunks = [
        chunk(f"{REDIRECT}/1", "en.wikipedia.org"),
        chunk(f"{REDIRECT}/2", "uefa.com"),
        chunk(f"{REDIRECT}/3", "A page Google titled in words"),
        chunk("https://wikipedia.org/direct", "uefa.com"),  # not a redirect: its own host
    ]
    httpx_mock.add_response(url=API, json=grounded(chunks=chunks, supports=[]), is_reusable=True)
    out = gem.execute({"query": "euro 2024", "blocked_domains": ["wikipedia.org"]}, load())
    assert [r["url"] for r in out["results"]] == [f"{REDIRECT}/2", f"{REDIRECT}/3"]
    out = gem.execute({"query": "euro 2024", "allowed_domains": ["wikipedia.org"]}, load())
    assert [r["url"] for r in out["results"]] == [f"{REDIRECT}/1", "https://wikipedia.org/direct"]


def test_endpoint_override_and_model_in_the_path(httpx_mock, configured, monkeypatch):
    monkeypatch.setenv("GEMINI_API_URL", "https://gateway.test/gemini/v1beta/")
    url = "https://gateway.test/gemini/v1beta/models/gemini-2.5-flash:generateContent"
    httpx_mock.add_response(url=url, json=UNGROUNDED)
    out = gem.execute({"query": "hello", "model": "gemini-2.5-flash", "thinking_level": "none"},
                      load())  # fmt: skip
    assert out["answer"] == "Hello! How can I help you today?"
    body = json.loads(httpx_mock.get_request().content)
    assert body["generationConfig"] == {"thinkingConfig": {"thinkingBudget": 0}}


@pytest.mark.parametrize(
    ("code", "body", "expected", "says"),
    [
        (400, KEY_INVALID, "AUTH_INVALID", "API key not valid"),
        (403, SERVICE_DISABLED, "AUTH_INVALID", "SERVICE_DISABLED"),
        (429, QUOTA, "RATE_LIMIT", "Try again in 31 s"),
        (404, NOT_FOUND, "API_ERROR", "Check the model name"),
        (500, status(500, "INTERNAL", "An internal error has occurred."), "API_ERROR", "HTTP 500"),
        (200, BLOCKED_PROMPT, "API_ERROR", "blocked the query"),
        (200, SAFETY_STOP, "API_ERROR", "finishReason SAFETY"),
        (200, "<html>maintenance</html>", "API_ERROR", "not JSON"),
    ],
)
def test_execute_error_answers(httpx_mock, configured, code, body, expected, says):
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    httpx_mock.add_response(url=API, status_code=code, content=content, is_reusable=True)
    out, _ = answer(gem.execute, {"query": "euro 2024"}, gem.SCHEMA)
    assert out["success"] is False
    assert out["error_code"] == expected
    assert says in out["error"]
    if expected == "RATE_LIMIT":
        assert out["retry_after"] == 31


def test_a_short_rate_limit_is_retried_once(httpx_mock, configured):
    short = status(429, "RESOURCE_EXHAUSTED", "Resource has been exhausted", retry_info("1s"))
    httpx_mock.add_response(url=API, status_code=429, json=short)
    httpx_mock.add_response(url=API, json=UNGROUNDED)
    assert gem.execute({"query": "hello"}, load())["count"] == 0


def test_network_error(httpx_mock, configured):
    httpx_mock.add_exception(httpx.ConnectError("refused"), is_reusable=True)
    out, _ = answer(gem.execute, {"query": "euro 2024"}, gem.SCHEMA)
    assert out["error_code"] == "NETWORK_ERROR"


def test_auth_missing_names_both_variables_and_the_file(isolated_env):
    out, _ = answer(gem.execute, {"query": "euro 2024"}, gem.SCHEMA)
    assert out["error_code"] == "AUTH_MISSING"
    assert "GEMINI_API_KEY" in out["error"]
    assert out["_event"]["data"] == {
        "tool": "web_search_gemini", "credentials": ["api_key"], "env": ["GEMINI_API_KEY"],
        "signup_url": "https://aistudio.google.com/apikey",
    }  # fmt: skip
    assert str(isolated_env / "credentials.json") in out["_event"]["content"]


# --- redirect resolution against a real loopback server --------------------------------------


def gemini_route(fake_server, body: dict[str, Any], model: str = gem.DEFAULT_MODEL) -> str:
    """Serve `body` as generateContent; return the base URL for GEMINI_API_URL."""
    fake_server.route(f"/v1beta/models/{model}:generateContent", Reply(200, body))
    return f"{fake_server.url}/v1beta"


def redirect_routes(fake_server) -> list[dict[str, Any]]:
    """Grounding chunks whose redirect links lead to the fake server, each failing its own way."""
    cases = {
        "/grounding-api-redirect/ok": Reply(302, b"", {"Location": ALJAZEERA}),
        "/grounding-api-redirect/ok2": Reply(301, b"", {"Location": UEFA}),
        "/grounding-api-redirect/js": Reply(302, b"", {"Location": "javascript:alert(1)"}),
        "/grounding-api-redirect/gone": Reply(404, b"expired"),
        "/grounding-api-redirect/bare": Reply(302, b""),
    }
    for path, answer_ in cases.items():
        fake_server.route(path, answer_)
    titles = ("aljazeera.com", "uefa.com", "evil.example", "gone.example", "bare.example")
    return [chunk(fake_server.url + path, t) for path, t in zip(cases, titles, strict=True)]


@pytest.mark.loopback
def test_links_resolve_in_parallel_and_failures_keep_the_redirect(
    fake_server, monkeypatch, redirects_here
):
    chunks = redirect_routes(fake_server)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_URL", gemini_route(fake_server, grounded(chunks=chunks)))
    out = gem.execute({"query": "who won euro 2024"}, load())
    assert [(r["title"], r["url"]) for r in out["results"]] == [
        ("www.aljazeera.com", ALJAZEERA),
        ("www.uefa.com", UEFA),
        ("evil.example", chunks[2]["web"]["uri"]),
        ("gone.example", chunks[3]["web"]["uri"]),
        ("bare.example", chunks[4]["web"]["uri"]),
    ]
    assert out["warnings"] == [{"code": "UNRESOLVED", "message": (
        "3 of 5 source links could not be resolved in time and are Google's redirect links "
        "(they still lead to the page)")}]  # fmt: skip
    lookups = [s for s in fake_server.seen if "grounding-api-redirect" in s.path]
    assert sorted(s.path.rsplit("/", 1)[1] for s in lookups) == ["bare", "gone", "js", "ok", "ok2"]
    assert all(s.method == "GET" and "x-goog-api-key" not in s.headers for s in lookups)
    # Not cached: a link that failed now may resolve next time.
    gem.execute({"query": "who won euro 2024"}, load())
    assert sum("generateContent" in s.path for s in fake_server.seen) == 2


@pytest.mark.loopback
def test_a_link_that_never_answers_cannot_hold_up_the_call(
    fake_server, monkeypatch, redirects_here
):
    monkeypatch.setattr(gem, "RESOLVE_SECONDS", 2.0)  # for "ok" to resolve in, however busy
    fake_server.route("/grounding-api-redirect/ok", Reply(302, b"", {"Location": UEFA}))
    fake_server.route("/grounding-api-redirect/hang", Reply(302, b"", {"Location": UEFA}, STALL))
    chunks = [chunk(f"{fake_server.url}/grounding-api-redirect/ok", "uefa.com"),
              chunk(f"{fake_server.url}/grounding-api-redirect/hang", "hang.example")]  # fmt: skip
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_URL", gemini_route(fake_server, grounded(chunks=chunks)))
    start = time.monotonic()
    out = gem.execute({"query": "who won euro 2024"}, load())
    assert time.monotonic() - start < HANG_GUARD  # the 2 s, not the link's 120 s
    assert [r["url"] for r in out["results"]] == [UEFA, chunks[1]["web"]["uri"]]
    assert out["warnings"][0]["message"].startswith("1 of 2 source links")


@pytest.mark.loopback
def test_resolution_stays_within_the_calls_deadline(fake_server, monkeypatch, redirects_here):
    """Resolving leaves RESOLVE_RESERVE of the call's deadline. Here the reserve is 20 s and
    resolving starts (the call's clock jumps to it) 21.5 s before the deadline: it has 1.5 s,
    where ignoring the reserve would give it 21.5 s and ignoring the deadline 60 s
    (RESOLVE_SECONDS), both past the time allowed, for a link that never answers."""
    fake_server.route("/grounding-api-redirect/hang", Reply(302, b"", {"Location": UEFA}, STALL))
    chunks = [chunk(f"{fake_server.url}/grounding-api-redirect/hang", "hang.example")]
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_URL", gemini_route(fake_server, grounded(chunks=chunks)))
    monkeypatch.setattr(gem, "RESOLVE_SECONDS", 2 * HANG_GUARD)
    monkeypatch.setattr(gem, "RESOLVE_RESERVE", 20.0)
    jumped = [0.0]
    clock = SimpleNamespace(monotonic=lambda: time.monotonic() + jumped[0], sleep=time.sleep,
                            time=time.time)  # fmt: skip
    monkeypatch.setattr("ikigai_web.net.http.time", clock)  # the call's Deadline reads this one
    resolve = gem.resolve_links

    def resolve_late(urls: Any, deadline: Any, settings: Any) -> dict[str, str]:
        jumped[0] += deadline.remaining() - 21.5
        return resolve(urls, deadline, settings)

    monkeypatch.setattr(gem, "resolve_links", resolve_late)
    start = time.monotonic()
    out = gem.execute({"query": "who won euro 2024"}, load())
    assert time.monotonic() - start < BEFORE_THE_DEADLINE
    assert out["results"][0]["url"] == chunks[0]["web"]["uri"]
    assert len([s for s in fake_server.seen if "redirect" in s.path]) == 1  # it was tried
    monkeypatch.setattr(gem, "RESOLVE_RESERVE", 30.0)  # more than the call's 25 s: no time left
    monkeypatch.setattr(gem, "resolve_links", resolve)
    out = gem.execute({"query": "who won euro 2024", "max_sources": 5}, load())
    assert out["warnings"][0]["message"].startswith("1 of 1 source links")
    assert len([s for s in fake_server.seen if "redirect" in s.path]) == 1


def test_nothing_to_resolve_makes_no_request(monkeypatch):
    assert gem.resolve_links(["javascript:x", "ftp://a/b"], load_deadline(10), load()) == {}
    assert gem.resolve_links([f"{REDIRECT}/a"], load_deadline(1), load()) == {}


def load_deadline(seconds: float) -> Any:
    from ikigai_web.net.http import Deadline

    return Deadline(seconds)


# --- the protocol, through the installed console script ------------------------------------


def test_loopback_search_through_the_console_script(run_tool, fake_server, isolated_env):
    (isolated_env / "credentials.json").write_text(
        json.dumps({"web_search": {"gemini": {"api_key": KEY}}})
    )
    chunks = redirect_routes(fake_server)[:2]
    base = gemini_route(fake_server, grounded(chunks=chunks))
    env = {"GEMINI_API_URL": base, **loopback_redirects(fake_server)}
    run = run_tool(TOOL, {"query": "who won euro 2024"}, env=env)
    out = run.json
    assert (run.code, out["success"], out["count"]) == (0, True, 2)
    assert [r["url"] for r in out["results"]] == [ALJAZEERA, UEFA]
    assert fake_server.seen[0].headers["x-goog-api-key"] == KEY
    assert KEY not in run.stdout + run.stderr


def test_markdown_has_the_three_sections(run_tool, fake_server):
    chunks = redirect_routes(fake_server)[:2]
    base = gemini_route(fake_server, grounded(chunks=chunks))
    run = run_tool(TOOL, args=("who", "won", "euro", "2024", "--format", "markdown"), raw=b"",
                   env={"GEMINI_API_KEY": KEY, "GEMINI_API_URL": base,
                        **loopback_redirects(fake_server)})  # fmt: skip
    assert run.code == 0
    assert run.stdout == (
        f"## Search Results\n\n{FIRST} {SECOND}\n\n### Sources\n\n"
        f"- [www.aljazeera.com]({ALJAZEERA}) (www.aljazeera.com)\n"
        f"- [www.uefa.com]({UEFA}) (www.uefa.com)\n\n"
        '### Search Queries Used\n\n- "UEFA Euro 2024 winner"\n- "who won euro 2024"\n'
    )


def test_markdown_leaves_out_empty_sections_and_escapes_links():
    assert gem.markdown({}, {"answer": "Hi.", "results": [], "search_queries": []}) == (
        "## Search Results\n\nHi."
    )
    item = {"title": "A [b] c", "url": "https://en.wikipedia.org/wiki/Euro_(currency)"}
    warning = {"code": "UNRESOLVED", "message": "1 of 1"}
    text = gem.markdown(
        {}, {"answer": "", "results": [item], "search_queries": ["q"], "warnings": [warning]}
    )
    assert text == (
        "### Sources\n\n- [A \\[b\\] c](https://en.wikipedia.org/wiki/Euro_%28currency%29) "
        '(en.wikipedia.org)\n\n### Search Queries Used\n\n- "q"\n\nNote: 1 of 1'
    )
    assert gem.markdown({}, {"results": []}) == "No answer."


def echo(code: int, content_type: str = "application/json") -> Any:
    """A server that repeats the request's key back: in an error, or all over an answer whose
    source link redirects to a URL holding the key too."""

    def answer_(seen: Seen) -> Reply:
        sent = seen.headers.get("x-goog-api-key", "")
        text = f"API key {sent} ({KEY}) not valid"
        if code == 200 and "json" in content_type:
            link = f"http://{seen.headers['Host']}/grounding-api-redirect/{KEY}"
            body = grounded(chunks=[chunk(link, KEY)], supports=[support(text, None, 9, 0)],
                            text=text)  # fmt: skip
            body["candidates"][0]["groundingMetadata"]["webSearchQueries"] = [text]
            return Reply(200, body)
        if "json" in content_type:
            return Reply(code, status(code, "INVALID_ARGUMENT", text, error_info(sent)))
        return Reply(code, f"<html><title>{text}</title></html>", {"Content-Type": content_type})

    return answer_


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1beta"


LEAKS = [
    ("400", echo(400), False), ("401", echo(401), False), ("403", echo(403), False),
    ("404", echo(404), False), ("429", echo(429), False), ("500", echo(500, "text/plain"), False),
    ("200-html", echo(200, "text/html"), False), ("200-answer", echo(200), True),
    ("refused", None, False),
]  # fmt: skip


@pytest.mark.parametrize(("answer_", "ok"), [c[1:] for c in LEAKS], ids=[c[0] for c in LEAKS])
@pytest.mark.parametrize("markdown", [False, True], ids=["json", "markdown"])
def test_key_never_appears_in_any_output(run_tool, fake_server, answer_, ok, markdown):
    base = closed_port()
    if answer_ is not None:
        fake_server.route(f"/v1beta/models/{gem.DEFAULT_MODEL}:generateContent", answer_)
        fake_server.route(
            f"/grounding-api-redirect/{KEY}",
            Reply(302, b"", {"Location": f"https://example.org/{KEY}?k={KEY}"}),
        )
        base = f"{fake_server.url}/v1beta"
    env = {"GEMINI_API_KEY": KEY, "GEMINI_API_URL": base,
           "IKIGAI_WEB_GEMINI_SEARCH_ENTRY_POINT": "1",
           **loopback_redirects(fake_server)}  # fmt: skip
    args = ("--format", "markdown") if markdown else ()
    run = run_tool(TOOL, {"query": "euro 2024"}, args=args, env=env)
    assert KEY.lower() not in (run.stdout + run.stderr).lower()
    assert run.code == (0 if ok or not markdown else 1)
    if not markdown:
        assert run.json["success"] is ok
    if ok:
        assert "example.org" in run.stdout


# --- a hostile answer: its links reach no private address (issue 20, section 1) -------------


@pytest.fixture
def private_site():
    """A server on 127.0.0.2, standing for a private address: it must never be asked."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(302)
            self.send_header("Location", "https://example.org/from-the-private-side")
            self.end_headers()

        def log_message(self, *_: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.2", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server.server_address[1], hits
    server.shutdown()
    server.server_close()


def fake_private_dns(monkeypatch) -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name in ("private.test", "metadata.google.internal"):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def hostile_links(port: int) -> list[str]:
    """Source links that point at private addresses in every spelling, none of them Google's."""
    return [
        f"http://127.0.0.2:{port}/a", f"http://[::1]:{port}/b", f"http://localhost:{port}/c",
        f"http://2130706434:{port}/d", f"http://0x7f.2:{port}/e", f"http://private.test:{port}/f",
        f"http://metadata.google.internal:{port}/computeMetadata/v1/",
    ]  # fmt: skip


@pytest.mark.loopback
@pytest.mark.parametrize("through", ["gemini", "auto"])
def test_links_off_googles_redirect_service_are_never_requested(
    fake_server, monkeypatch, private_site, through
):
    port, hits = private_site
    fake_private_dns(monkeypatch)
    chunks = [chunk(link, f"site{n}.example") for n, link in enumerate(hostile_links(port))]
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_URL", gemini_route(fake_server, grounded(chunks=chunks)))
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "gemini")
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", "0")
    if through == "auto":
        from ikigai_web.tools import web_search_auto

        out = web_search_auto.execute({"query": "who won euro 2024", "count": 10}, load())
    else:
        out = gem.execute({"query": "who won euro 2024", "max_sources": 10}, load())
    assert out["success"]
    assert hits == []
    assert [s.path for s in fake_server.seen] == [
        f"/v1beta/models/{gem.DEFAULT_MODEL}:generateContent"
    ]


@pytest.mark.loopback
def test_a_redirect_service_on_a_private_address_is_refused(fake_server, monkeypatch, private_site):
    port, hits = private_site
    link = f"http://127.0.0.2:{port}/grounding-api-redirect/x"
    monkeypatch.setenv("GEMINI_REDIRECT_URL", f"http://127.0.0.2:{port}/grounding-api-redirect/")
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv(
        "GEMINI_API_URL", gemini_route(fake_server, grounded(chunks=[chunk(link, "x.example")]))
    )
    out = gem.execute({"query": "who won euro 2024"}, load())
    assert hits == []
    assert out["results"][0]["url"] == link  # unresolved: Google's link as it came
    assert out["warnings"][0]["code"] == "UNRESOLVED"


@pytest.mark.loopback
def test_a_location_that_leads_somewhere_private_is_not_taken(
    fake_server, monkeypatch, redirects_here, private_site
):
    port, hits = private_site
    fake_private_dns(monkeypatch)
    targets = [f"http://127.0.0.2:{port}/secret", "http://169.254.169.254/latest/meta-data/",
               f"http://[::1]:{port}/x", "http://0x7f.2/", f"http://private.test:{port}/",
               UEFA]  # fmt: skip
    chunks = []
    for n, target in enumerate(targets):
        path = f"/grounding-api-redirect/{n}"
        fake_server.route(path, Reply(302, b"", {"Location": target}))
        chunks.append(chunk(fake_server.url + path, f"site{n}.example"))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_URL", gemini_route(fake_server, grounded(chunks=chunks)))
    out = gem.execute({"query": "who won euro 2024", "max_sources": 10}, load())
    urls = [r["url"] for r in out["results"]]
    assert urls == [c["web"]["uri"] for c in chunks[:-1]] + [UEFA]
    assert hits == []
    assert out["warnings"][0]["message"].startswith("5 of 6 source links")
