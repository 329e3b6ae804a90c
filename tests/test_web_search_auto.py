"""web-search-auto-tool: the providers in order, in process, falling through only when one
cannot serve the call now."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Reply

from common.errors import ErrorCode, ToolError
from common.runner import answer
from common.search import Request
from common.settings import load
from tools import web_search_auto as auto
from tools import web_search_brave, web_search_duckduckgo, web_search_google, web_search_tavily

BRAVE = re.compile(r"https://api\.search\.brave\.com/res/v1/web/search\?.*")
TAVILY = "https://api.tavily.com/search"
BRAVE_KEY = "BSA-auto-LEAKCANARY-1234"
TAVILY_KEY = "tvly-auto-LEAKCANARY-5678"
FIXTURES = Path(__file__).parent / "fixtures"
TAVILY_ANSWER = {
    "query": "ikigai",
    "answer": None,
    "images": [],
    "results": [
        {
            "title": "Ikigai - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Ikigai",
            "content": "Ikigai is a Japanese concept.",
            "score": 0.81,
            "raw_content": None,
        }
    ],
    "response_time": 1.1,
}


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", BRAVE_KEY)
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY_KEY)
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")


def call(raw: dict[str, Any]) -> dict[str, Any]:
    return answer(auto.execute, raw, auto.SCHEMA)[0]


def tavily_answers(httpx_mock):
    httpx_mock.add_response(url=TAVILY, method="POST", json=TAVILY_ANSWER)


def test_every_installed_search_tool_offers_the_in_process_entry_point():
    names = auto.installed()
    assert {"brave", "google", "tavily", "searxng", "duckduckgo"} <= set(names)
    assert "auto" not in names
    for name, module in auto.providers(tuple(names))[0]:
        args = module.arguments(Request("ikigai meaning", 20, ("a.org",), ("b.org",), "week"))
        params = module.parse_input(args)  # the provider accepts its own arguments
        assert params.query == "ikigai meaning", name


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        (web_search_brave, {"count": 20, "freshness": "pw"}),
        (web_search_google, {"num": 10, "date_restrict": "w1"}),
        (web_search_tavily, {"max_results": 20, "time_range": "week"}),
        (web_search_duckduckgo, {"max_results": 20, "time_filter": "w"}),
    ],
)
def test_arguments_carry_count_and_time_filter(module, expected):
    params = module.parse_input(module.arguments(Request("ikigai", 20, (), (), "week")))
    for field, value in expected.items():
        assert getattr(params, field if field != "count" else "count") == value


def test_no_time_filter_means_none_in_every_provider():
    names = ("freshness", "date_restrict", "time_range", "time_filter")
    for name, module in auto.providers(tuple(auto.installed()))[0]:
        with_time = module.parse_input(module.arguments(Request("ikigai", time_filter="day")))
        params = module.parse_input(module.arguments(Request("ikigai")))
        field = next(n for n in names if getattr(with_time, n, None) is not None)
        assert getattr(params, field) is None, name


def test_first_configured_provider_answers(httpx_mock, keys):
    httpx_mock.add_response(json=json.loads((FIXTURES / "brave/search.json").read_text()))
    out = call({"query": "ikigai", "count": 2})
    assert out["success"] is True
    assert out["provider"] == "brave"
    assert "warnings" not in out
    assert len(httpx_mock.get_requests()) == 1


def test_a_deadline_under_a_second_still_tries_the_first_provider(httpx_mock, keys, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "0.5")  # a valid setting: above 0
    httpx_mock.add_response(json=json.loads((FIXTURES / "brave/search.json").read_text()))
    out = call({"query": "ikigai", "count": 2})
    assert out["success"] is True, out
    assert out["provider"] == "brave"


@pytest.mark.parametrize(
    ("status", "body", "headers", "code"),
    [
        (401, {"type": "ErrorResponse", "error": {"code": "SUBSCRIPTION_TOKEN_INVALID",
               "detail": "The provided subscription token is invalid.", "status": 401}},
         {}, "AUTH_INVALID"),
        (429, {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "Rate limit.",
               "status": 429}}, {"X-RateLimit-Reset": "40"}, "RATE_LIMIT"),
    ],
)  # fmt: skip
def test_auth_invalid_and_rate_limit_fall_through(httpx_mock, keys, status, body, headers, code):
    httpx_mock.add_response(url=BRAVE, status_code=status,
                            json=body, headers=headers, is_reusable=False)  # fmt: skip
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["success"] is True
    assert out["provider"] == "tavily"
    assert out["warnings"][0]["code"] == code
    assert out["warnings"][0]["message"].startswith("web_search_brave skipped: Brave answered")


def test_missing_credentials_fall_through(httpx_mock, keys, monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY")
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["provider"] == "tavily"
    assert out["warnings"][0]["code"] == "AUTH_MISSING"
    assert "BRAVE_API_KEY" in out["warnings"][0]["message"]


def test_network_errors_fall_through(httpx_mock, keys, monkeypatch):
    monkeypatch.setattr("common.http._pause", lambda *_: False)
    httpx_mock.add_exception(httpx.ConnectError("refused"), url=BRAVE)
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["provider"] == "tavily"
    assert out["warnings"][0]["code"] == "NETWORK_ERROR"


@pytest.mark.parametrize(
    ("status", "body", "code"),
    [
        (422, {"type": "ErrorResponse", "error": {"code": "VALIDATION", "detail": "Bad q.",
               "status": 422}}, "INVALID_INPUT"),
        (500, {"type": "ErrorResponse", "error": {"code": "UNKNOWN", "detail": "Oops.",
               "status": 500}}, "API_ERROR"),
    ],
)  # fmt: skip
def test_other_failures_are_the_answer_and_stop_the_chain(httpx_mock, keys, monkeypatch, status,
                                                          body, code):  # fmt: skip
    monkeypatch.setattr("common.http._pause", lambda *_: False)
    httpx_mock.add_response(status_code=status, json=body)
    out = call({"query": "ikigai"})
    assert out["error_code"] == code
    assert out["error"].startswith("web_search_brave: Brave answered")
    assert all(r.url.host != "api.tavily.com" for r in httpx_mock.get_requests())


def test_a_failure_after_skipped_providers_says_who_was_skipped(httpx_mock, keys, monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY")
    httpx_mock.add_response(url=TAVILY, method="POST", status_code=400,
                            json={"detail": {"error": "Invalid topic."}})  # fmt: skip
    out = call({"query": "ikigai"})
    assert out["error_code"] == "INVALID_INPUT"
    assert out["error"].endswith("web_search_brave was skipped first (AUTH_MISSING).")


def test_all_failing_gives_the_most_specific_error_and_what_each_said(
    httpx_mock, keys, monkeypatch
):
    monkeypatch.delenv("TAVILY_API_KEY")
    rate = {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "Slow down.",
            "status": 429}}  # fmt: skip
    httpx_mock.add_response(status_code=429, json=rate, headers={"X-RateLimit-Reset": "40"})
    out = call({"query": "ikigai"})
    assert out["error_code"] == "RATE_LIMIT"
    assert out["retry_after"] == 40
    assert out["error"].startswith("every search provider failed: web_search_brave: RATE_LIMIT, ")
    assert (
        "web_search_tavily: AUTH_MISSING, web_search_tavily needs a Tavily API key" in out["error"]
    )
    assert out["_event"]["data"]["error_type"] == "rate_limit"


def test_unknown_names_in_the_order_are_skipped_and_listed(httpx_mock, keys, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "bing, auto ,tavily,tavily")
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["provider"] == "tavily"
    notes = [w["message"] for w in out["warnings"]]
    assert notes[0].startswith("'bing' in IKIGAI_WEB_SEARCH_ORDER is not an installed search tool")
    assert notes[1].startswith("'auto' in IKIGAI_WEB_SEARCH_ORDER is not an installed")
    assert len(httpx_mock.get_requests()) == 1


def test_an_order_naming_no_provider_is_invalid_input(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "bing,yahoo")
    out = call({"query": "ikigai"})
    assert out["error_code"] == "INVALID_INPUT"
    assert "'bing' in IKIGAI_WEB_SEARCH_ORDER" in out["error"]
    assert "brave" in out["error"]


def test_providers_share_the_calls_deadline(keys, monkeypatch):
    seen: list[float] = []

    def attempt(module, request, settings):
        seen.append(settings.timeout)
        raise ToolError(ErrorCode.NETWORK_ERROR, "timeout: slow")

    clock = iter([100.0, 100.0, 108.0, 200.0])
    monkeypatch.setattr("time.monotonic", lambda: next(clock))
    monkeypatch.setattr(auto, "attempt", attempt)
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "10")
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily,duckduckgo")
    with pytest.raises(ToolError) as info:
        auto.execute({"query": "ikigai"}, load())
    assert seen == [10.0, 2.0]  # the second provider gets what the first left
    assert info.value.code is ErrorCode.NETWORK_ERROR


def test_invalid_input_is_checked_before_any_provider():
    out = call({"query": "x", "count": 50})
    assert out["error_code"] == "INVALID_INPUT"
    assert "'query' is \"x\"" in out["error"]


@pytest.mark.loopback
def test_the_installed_tool_falls_through_to_a_loopback_provider(run_tool, fake_server, tmp_path):
    body = json.loads((FIXTURES / "brave/search.json").read_text())
    url = fake_server.route("/brave", Reply(200, body))
    env = {"IKIGAI_WEB_SEARCH_ORDER": "tavily,brave", "BRAVE_API_KEY": BRAVE_KEY,
           "BRAVE_SEARCH_API_URL": url}  # fmt: skip
    run = run_tool("web-search-auto-tool", {"query": "ikigai", "count": 2}, env=env)
    assert run.code == 0
    out = run.json
    assert out["provider"] == "brave"
    assert out["count"] == 2
    assert out["warnings"][0]["code"] == "AUTH_MISSING"
    assert BRAVE_KEY not in run.stdout + run.stderr
    md = run_tool("web-search-auto-tool", args=("ikigai", "--count", "1", "--format", "markdown"),
                  raw=b"", env=env)  # fmt: skip
    assert md.code == 0
    assert md.stdout.startswith("# Search Results for: ikigai\nSearch engine: Brave Search\n")
