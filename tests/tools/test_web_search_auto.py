"""web-search-auto-tool: the providers in order, in process, falling through only when one
cannot serve the call now."""

from __future__ import annotations

import json
import re
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from conftest import HANG_GUARD, STALL, Reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.common.settings import load
from ikigai_web.host.calls import CALL_TIMEOUT
from ikigai_web.search.kit import Request
from ikigai_web.tools import web_search_auto as auto
from ikigai_web.tools import (
    web_search_brave,
    web_search_duckduckgo,
    web_search_google,
    web_search_tavily,
)

BRAVE = re.compile(r"https://api\.search\.brave\.com/res/v1/web/search\?.*")
TAVILY = "https://api.tavily.com/search"
BRAVE_KEY = "BSA-auto-LEAKCANARY-1234"
TAVILY_KEY = "tvly-auto-LEAKCANARY-5678"
FIXTURES = Path(__file__).parents[1] / "fixtures"
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


class Clock:
    """The time as `modules` read it (their `time.monotonic`), in the test's hands: it moves
    only when the test moves it, so a busy machine cannot spend a deadline."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *modules: str) -> None:
        self.now = 1000.0
        mine = SimpleNamespace(monotonic=lambda: self.now, sleep=time.sleep, time=time.time)
        for module in modules:
            monkeypatch.setattr(f"{module}.time", mine)

    def advance(self, seconds: float) -> None:
        self.now += seconds


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
    Clock(
        monkeypatch, "ikigai_web.tools.web_search_auto", "ikigai_web.net.http"
    )  # the 0.5 s is never spent
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
    # The elapsed time depends on the machine's load; the words around it do not.
    assert re.match(
        r"web_search_brave skipped after [\d.]+ s: Brave answered", out["warnings"][0]["message"]
    )


def test_missing_credentials_fall_through(httpx_mock, keys, monkeypatch):
    monkeypatch.delenv("BRAVE_API_KEY")
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["provider"] == "tavily"
    assert out["warnings"][0]["code"] == "AUTH_MISSING"
    assert "BRAVE_API_KEY" in out["warnings"][0]["message"]


def test_network_errors_fall_through(httpx_mock, keys, monkeypatch):
    monkeypatch.setattr("ikigai_web.net.http._pause", lambda *_: False)
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
    monkeypatch.setattr("ikigai_web.net.http._pause", lambda *_: False)
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
    assert re.match(
        r"No provider could search: Brave Search is rate limited; Tavily has no key\. What each "
        r"said: web_search_brave: RATE_LIMIT after [\d.]+ s, ",
        out["error"],
    )
    assert re.search(
        r"web_search_tavily: AUTH_MISSING after [\d.]+ s, web_search_tavily needs a Tavily API key",
        out["error"],
    )
    assert out["_event"]["data"]["error_type"] == "rate_limit"


def _unresolved() -> Exception:
    """What httpx raises when a name does not resolve: a DNS failure, as the wire reports it."""
    import socket

    import httpx

    error = httpx.ConnectError("[Errno -2] Name or service not known")
    error.__cause__ = socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return error


def test_offline_without_keys_says_first_that_the_network_failed(httpx_mock):
    httpx_mock.add_exception(_unresolved(), is_reusable=True)  # DuckDuckGo's name: no DNS
    out = call({"query": "ikigai"})
    assert out["error_code"] == "NETWORK_ERROR"  # the most specific, as ever
    first, _, rest = out["error"].partition(" What each said: ")
    assert first == (
        "No provider could search: DuckDuckGo is unreachable (DNS); no other provider has a key."
    )
    assert rest.startswith("web_search_duckduckgo: NETWORK_ERROR after ")
    assert "DNS: could not resolve html.duckduckgo.com" in rest
    assert rest.index("web_search_duckduckgo") < rest.index("AUTH_MISSING")  # its details first


@pytest.mark.parametrize(
    ("order", "first"),
    [
        ("brave", "Brave Search has no key."),
        ("brave,tavily", "no provider has a key."),
        ("duckduckgo", "DuckDuckGo is unreachable (DNS)."),
        ("brave,duckduckgo", "DuckDuckGo is unreachable (DNS); Brave Search has no key."),
    ],
)
def test_the_first_sentence_says_what_stopped_every_provider(httpx_mock, monkeypatch, order,
                                                             first):  # fmt: skip
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", order)
    httpx_mock.add_exception(_unresolved(), is_reusable=True, is_optional=True)
    out = call({"query": "ikigai"})
    assert out["error"].startswith(f"No provider could search: {first} What each said: ")


def test_a_rate_limit_comes_before_an_unreachable_provider_and_missing_keys(
    httpx_mock, monkeypatch
):
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-key-1234")
    rate = {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "status": 429}}
    httpx_mock.add_response(url=re.compile(r"https://api\.search\.brave\.com/.*"), status_code=429,
                            json=rate, headers={"X-RateLimit-Reset": "40"})  # fmt: skip
    httpx_mock.add_exception(_unresolved(), url=re.compile(r"https://(html|lite)\.duckduckgo.*"),
                             is_reusable=True)  # fmt: skip
    out = call({"query": "ikigai"})
    assert out["error_code"] == "RATE_LIMIT"
    assert out["error"].startswith(
        "No provider could search: Brave Search is rate limited; DuckDuckGo is unreachable "
        "(DNS); no other provider has a key. What each said: web_search_brave: RATE_LIMIT "
    )


def test_unknown_names_in_the_order_are_skipped_and_listed(httpx_mock, keys, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "bing, auto ,tavily,tavily")
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["provider"] == "tavily"
    notes = [w["message"] for w in out["warnings"]]
    assert notes[0].startswith("'bing' in IKIGAI_WEB_SEARCH_ORDER is not an installed search tool")
    assert notes[1].startswith("'auto' in IKIGAI_WEB_SEARCH_ORDER is not an installed")
    assert len(httpx_mock.get_requests()) == 1


def test_a_misspelled_provider_is_named_with_the_one_meant(httpx_mock, keys, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "bravve,tavily")
    tavily_answers(httpx_mock)
    out = call({"query": "ikigai"})
    assert out["warnings"][0]["message"].startswith(
        "'bravve' in IKIGAI_WEB_SEARCH_ORDER is not an installed search tool: did you mean "
        "'brave'? (installed: "
    )


def test_every_failure_names_each_provider_failed_and_not_tried(keys, monkeypatch):
    clock = Clock(monkeypatch, "ikigai_web.tools.web_search_auto")

    def attempt(module, request, settings):
        clock.advance(0.6)
        raise ToolError(ErrorCode.NETWORK_ERROR, "timeout: waiting for the answer. Retry later.")

    monkeypatch.setattr(auto, "attempt", attempt)
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "2")  # after two failures less than 1 s is left
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily,duckduckgo,bingo")
    with pytest.raises(ToolError) as info:
        auto.execute({"query": "ikigai"}, load())
    message = info.value.message
    assert re.match(
        r"No provider could search: Brave Search is unreachable \(timeout\); Tavily is "
        r"unreachable \(timeout\)\. What each said: "
        r"web_search_brave: NETWORK_ERROR after 0\.6 s, timeout: "
        r"waiting for the answer; web_search_tavily: NETWORK_ERROR after 0\.6 s, timeout: "
        r"waiting for the answer\. 'bingo' in IKIGAI_WEB_SEARCH_ORDER is not an installed search "
        r"tool \(installed: .*\); it was skipped\. web_search_duckduckgo not tried: the call's "
        r"deadline was near\.$",
        message,
    ), message


def test_a_rate_limited_provider_is_not_ready_now_in_the_event(httpx_mock, monkeypatch):
    """Both fail: the event of the rate limit must not offer the other as 'ready now'."""
    monkeypatch.setenv("BRAVE_API_KEY", BRAVE_KEY)
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY_KEY)
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "tavily,brave")
    rate = {"type": "ErrorResponse", "error": {"code": "RATE_LIMITED", "detail": "Slow down.",
            "status": 429}}  # fmt: skip
    httpx_mock.add_response(url=TAVILY, method="POST", status_code=432,
                            json={"detail": {"error": "Plan limit exceeded."}})  # fmt: skip
    httpx_mock.add_response(status_code=429, json=rate, headers={"X-RateLimit-Reset": "40"})
    out = call({"query": "ikigai"})
    assert out["error_code"] == "RATE_LIMIT"
    event = out["_event"]
    assert "web_search_tavily" not in event["data"].get("alternative_tools", [])
    assert "web_search_brave" not in event["data"].get("alternative_tools", [])
    assert "web_search_tavily" not in event["content"].split("ready now", 1)[-1]


def test_an_order_naming_no_provider_is_invalid_input(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "bing,yahoo")
    out = call({"query": "ikigai"})
    assert out["error_code"] == "INVALID_INPUT"
    assert "'bing' in IKIGAI_WEB_SEARCH_ORDER" in out["error"]
    assert "brave" in out["error"]


def test_providers_share_the_calls_deadline(keys, monkeypatch):
    """A failure hands the next provider what is left of the call's deadline."""
    seen: list[float] = []
    clock = Clock(monkeypatch, "ikigai_web.tools.web_search_auto")

    def attempt(module, request, settings):
        seen.append(settings.timeout)
        clock.advance(0.3)
        raise ToolError(ErrorCode.NETWORK_ERROR, "timeout: slow")

    monkeypatch.setattr(auto, "attempt", attempt)
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "10")
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily,duckduckgo")
    with pytest.raises(ToolError) as info:
        auto.execute({"query": "ikigai"}, load())
    assert len(seen) == 3
    assert seen == pytest.approx([10, 9.7, 9.4])  # each gets what the ones before left
    assert info.value.code is ErrorCode.NETWORK_ERROR


def test_a_stalled_provider_gets_company_and_the_first_answer_wins(keys, monkeypatch):
    """The next provider starts once the first has had its share (here 3 s / 3 = 1 s)."""
    release = threading.Event()

    def attempt(module, request, settings):
        if module is web_search_brave:  # answers only when the test is over
            release.wait(STALL)
            raise ToolError(ErrorCode.NETWORK_ERROR, "timeout: waiting for the answer")
        return {"success": True, "results": [], "count": 0, "provider": "tavily"}

    monkeypatch.setattr(auto, "attempt", attempt)
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "3")
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily,duckduckgo")
    started = time.monotonic()
    out = auto.execute({"query": "ikigai"}, load())
    took = time.monotonic() - started
    release.set()
    assert out["provider"] == "tavily"
    assert 0.9 < took < HANG_GUARD  # not before brave's share; the note says it was still out
    [note] = out["warnings"]
    assert note["code"] == "NETWORK_ERROR"
    assert re.fullmatch(
        r"web_search_brave had not answered after [\d.]+ s; web_search_tavily answered "
        r"first\.",
        note["message"],
    )


def test_a_provider_that_crashes_is_a_failure_not_a_hang(keys, monkeypatch):
    def attempt(module, request, settings):
        if module is web_search_brave:
            raise RuntimeError("a bug")
        return {"success": True, "results": [], "count": 0, "provider": "tavily"}

    monkeypatch.setattr(auto, "attempt", attempt)
    out = auto.execute({"query": "ikigai"}, load())
    assert out["provider"] == "tavily"
    assert out["warnings"][0]["code"] == "API_ERROR"
    assert "crashed" in out["warnings"][0]["message"]


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


# --- stalled providers, as the host meets them: real processes, servers that never answer ---

# Each provider has its share of the deadline before the next starts beside it: 6 s over the
# five or six of an order is about 1 s each. The last three have no credentials and fail at
# once when their turn comes: they only make the shares short, so a stalled provider costs
# about a second, and the one that answers has the 4 s or more left to do it in.
DEADLINE = "6"
UNCONFIGURED = ("google", "searxng", "gemini")


def stalled_env(fake_server, stalled: list[str], answers: str | None) -> dict[str, str]:
    """Brave, Tavily and DuckDuckGo on loopback, those in `stalled` never answering, then
    `answers`, then the providers without credentials."""
    results = (FIXTURES / "duckduckgo" / "html_results.html").read_bytes()
    brave = json.loads((FIXTURES / "brave" / "search.json").read_text())
    replies = {
        "brave": Reply(200, brave),
        "tavily": Reply(200, TAVILY_ANSWER),
        "duckduckgo": Reply(200, results, {"Content-Type": "text/html; charset=utf-8"}),
    }
    urls = {
        name: fake_server.route(f"/{name}", Reply(200, b"", delay=STALL) if name in stalled
                                else reply)
        for name, reply in replies.items()
    }  # fmt: skip
    order = [*stalled, *([answers] if answers else []), *UNCONFIGURED]
    return {
        "IKIGAI_WEB_SEARCH_ORDER": ",".join(order),
        "IKIGAI_WEB_TIMEOUT": DEADLINE,
        "IKIGAI_WEB_CACHE_TTL": "0",
        "BRAVE_API_KEY": BRAVE_KEY,
        "TAVILY_API_KEY": TAVILY_KEY,
        "BRAVE_SEARCH_API_URL": urls["brave"],
        "TAVILY_API_URL": urls["tavily"],
        "DUCKDUCKGO_HTML_URL": urls["duckduckgo"],
    }


def timed_run(run_tool, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    run = run_tool("web-search-auto-tool", {"query": "ikigai", "count": 3}, env=env)
    took = time.monotonic() - started
    assert run.code == 0, run.stderr
    return took, run.json


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("stalled", "answers"),
    [(["brave"], "tavily"), (["brave", "tavily"], "duckduckgo")],
    ids=["first-stalled", "first-two-stalled"],
)
def test_stalled_providers_do_not_hold_up_the_next(
    run_tool, fake_server, isolated_env, stalled, answers
):
    """Each stalled provider costs its share of the deadline: the next starts beside it, and
    answers while it is still out (waiting for it would have left no time for the next)."""
    took, out = timed_run(run_tool, stalled_env(fake_server, stalled, answers))
    assert out["provider"] == answers, out
    assert took < HANG_GUARD
    still = [w for w in out["warnings"] if "had not answered" in w["message"]]
    assert sorted(w["message"].split()[0] for w in still) == sorted(
        f"web_search_{name}" for name in stalled
    )


@pytest.mark.loopback
def test_every_provider_stalled_ends_inside_the_deadline_and_says_who_failed(
    run_tool, fake_server, isolated_env
):
    stalled = ["brave", "tavily", "duckduckgo"]
    took, out = timed_run(run_tool, stalled_env(fake_server, stalled, None))
    assert took < HANG_GUARD  # the servers stall for STALL: only the deadline ended the call
    assert out["error_code"] == "NETWORK_ERROR"
    first, _, _ = out["error"].partition(". What each said: ")
    clauses = first.removeprefix("No provider could search: ").split("; ")
    unreachable = {"Brave Search", "Tavily", "DuckDuckGo"}
    assert {f"{name} is unreachable (timeout)" for name in unreachable} == set(clauses[:3])
    assert clauses[3:] in ([], ["no other provider has a key"]), first  # what was not set up
    for name in stalled:
        assert re.search(
            rf"web_search_{name}: NETWORK_ERROR after \d+(\.\d)? s, timeout", out["error"]
        )
    assert not re.search(r"\d\.\d\d", out["error"])  # durations to a tenth of a second
    # With the default deadline, the call ends (its grace included) before the host gives up.
    assert load().timeout + auto._GRACE < CALL_TIMEOUT
