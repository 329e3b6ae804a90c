"""web-search-brave-tool: input, request, shaping, error mapping, and the real process."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import Reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.settings import load
from ikigai_web.tools import web_search_brave as brave

FIXTURES = Path(__file__).parents[1] / "fixtures" / "brave"
URL = brave.DEFAULT_URL
KEY = "BSA-distinctive-Key-7f3a9c"


def fixture(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text())


def parse(**raw: Any) -> brave.Params:
    return brave.parse_input({"query": "ikigai meaning"} | raw)


def bad(**raw: Any) -> str:
    with pytest.raises(ToolError) as info:
        parse(**raw)
    assert info.value.code is ErrorCode.INVALID_INPUT
    return info.value.message


# --- parse_input -------------------------------------------------------------------------


def test_defaults():
    assert parse() == brave.Params(query="ikigai meaning")


def test_all_parameters():
    params = parse(
        count=20,
        offset=9,
        allowed_domains=["Example.com"],
        blocked_domains=["https://spam.net/x"],
        freshness="Week",
        country="gb",
        search_lang="pt-BR",
        safesearch="strict",
    )
    assert params == brave.Params(
        "ikigai meaning", 20, 9, ("example.com",), ("spam.net",), "pw", "GB", "pt-br", "strict"
    )


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"query": "a"}, "'query'"),
        ({"query": "x" * 401}, "2 to 400"),
        ({"count": 0}, "'count' is 0"),
        ({"count": 21}, "from 1 to 20"),
        ({"offset": 10}, "'offset' is 10"),
        ({"offset": -1}, "from 0 to 9"),
        ({"freshness": "hour"}, "day, week, month, year"),
        ({"freshness": "2024-13-01to2024-12-01"}, "real dates"),
        ({"freshness": "2024-12-01to2024-01-01"}, "start on or before"),
        ({"country": "XX"}, "Brave accepts AR, AU"),
        ({"country": "USA"}, "'country' is \"USA\""),
        ({"search_lang": "english"}, "language code"),
        ({"safesearch": "high"}, "off, moderate, strict"),
        ({"allowed_domains": ["not a domain"]}, "'allowed_domains'"),
        ({"blocked_domains": "spam.net"}, "array of strings"),
        ({"count": "10"}, "'count'"),
    ],
)
def test_invalid_values(raw, needle):
    assert needle in bad(**raw)


def test_freshness_range_passes_through():
    assert parse(freshness="2024-01-01to2024-06-30").freshness == "2024-01-01to2024-06-30"


# --- request building --------------------------------------------------------------------


def test_query_with_site_and_exclusions():
    params = parse(blocked_domains=["a.com", "b.com"])
    assert brave.build_query(params, "x.org") == "ikigai meaning site:x.org -site:a.com -site:b.com"
    assert brave.build_query(params, None) == "ikigai meaning -site:a.com -site:b.com"


def test_exclusions_dropped_when_the_query_would_pass_the_limit():
    params = parse(query="q" * 395, blocked_domains=["a.com"])
    assert brave.build_query(params, None) == "q" * 395


def test_request_params():
    params = parse(count=5, offset=2, freshness="day", country="DE", search_lang="de")
    assert brave.request_params(params, None, 5) == {
        "q": "ikigai meaning",
        "count": 5,
        "offset": 2,
        "text_decorations": "false",
        "extra_snippets": "true",
        "freshness": "pd",
        "country": "DE",
        "search_lang": "de",
    }


# --- shape_output ------------------------------------------------------------------------


def test_shape_output_real_response():
    page = brave.shape_output(fixture("search.json"), 0)
    first, second, third = page.results
    assert first == {
        "title": "Ikigai - Wikipedia",
        "url": "https://en.wikipedia.org/wiki/Ikigai",
        "snippet": "Ikigai (生き甲斐) is a Japanese concept referring to something that gives a "
        "person a sense of purpose, a reason for living & more.",
        "age": "November 2, 2024",
        "published": "2024-11-02",
        "extra_snippets": [
            "The term ikigai compounds two Japanese words: iki and kai.",
            "In Okinawa, ikigai is thought of as a reason to get up in the morning.",
        ],
    }
    assert second["title"] == "What Is Ikigai & How Can It Change Your Life?"
    assert "published" not in second
    assert third["snippet"] == ""
    assert "published" not in third
    assert page.more is True
    assert page.extra == {"next_offset": 1}


def test_no_next_offset_at_the_last_page_or_without_more():
    assert brave.shape_output(fixture("search.json"), 9).extra == {}
    page = brave.shape_output(fixture("no_results.json"), 0)
    assert (page.results, page.more, page.extra) == ([], False, {})


def test_unusable_items_are_skipped():
    body = {"web": {"results": [{"title": "x"}, {"title": "y", "url": "javascript:alert(1)"}, 5]}}
    assert brave.shape_output(body, 0).results == []


def test_non_object_json_is_api_error():
    with pytest.raises(ToolError) as info:
        brave.shape_output([1, 2], 0)
    assert info.value.code is ErrorCode.API_ERROR


# --- the provider call (pytest-httpx) ----------------------------------------------------


def call(raw: dict[str, Any], monkeypatch) -> dict[str, Any]:
    monkeypatch.setenv("BRAVE_API_KEY", KEY)
    monkeypatch.setattr("ikigai_web.net.http.time.sleep", lambda _: None)
    return brave.execute({"query": "ikigai meaning"} | raw, load())


def test_execute_sends_the_documented_request(httpx_mock, monkeypatch):
    httpx_mock.add_response(json=fixture("search.json"))
    out = call({"count": 3}, monkeypatch)
    request = httpx_mock.get_request()
    assert request.url.copy_with(query=None) == URL
    assert request.headers["x-subscription-token"] == KEY
    assert request.headers["accept"] == "application/json"
    assert request.url.params["q"] == "ikigai meaning"
    assert request.url.params["text_decorations"] == "false"
    assert out["success"] is True
    assert out["provider"] == "brave"
    assert out["count"] == 3
    assert out["next_offset"] == 1


def test_endpoint_override(httpx_mock, monkeypatch):
    monkeypatch.setenv("BRAVE_SEARCH_API_URL", "http://gateway.test/brave")
    httpx_mock.add_response(
        url="http://gateway.test/brave?q=ikigai+meaning&count=10&offset=0&text_decorations=false&extra_snippets=true",
        json=fixture("no_results.json"),
    )
    assert call({}, monkeypatch)["count"] == 0


def test_several_allowed_domains_fan_out_with_site(httpx_mock, monkeypatch):
    def answer(request):
        match = re.search(r" site:(\S+)", request.url.params["q"])
        assert match is not None
        site = match.group(1)
        n = int(request.url.params["count"])
        items = [
            {"title": f"{site} {i}", "url": f"https://{site}/{i}", "description": ""}
            for i in range(n)
        ]
        return httpx.Response(
            200, json={"web": {"results": items}, "query": {"more_results_available": True}}
        )

    httpx_mock.add_callback(answer, is_reusable=True)
    out = call(
        {"count": 5, "allowed_domains": ["a.com", "b.org"], "blocked_domains": ["b.org"]},
        monkeypatch,
    )
    queries = sorted((r.url.params["q"], r.url.params["count"]) for r in httpx_mock.get_requests())
    assert queries == [
        ("ikigai meaning site:a.com -site:b.org", "3"),
        ("ikigai meaning site:b.org -site:b.org", "2"),
    ]
    assert [x["url"] for x in out["results"]] == [
        "https://a.com/0",
        "https://a.com/1",
        "https://a.com/2",
    ]
    assert "next_offset" not in out


def test_blocked_domain_is_post_filtered(httpx_mock, monkeypatch):
    httpx_mock.add_response(json=fixture("search.json"))
    out = call({"blocked_domains": ["wikipedia.org"]}, monkeypatch)
    assert "-site:wikipedia.org" in httpx_mock.get_request().url.params["q"]
    assert all("wikipedia" not in x["url"] for x in out["results"])
    assert out["count"] == 2


def error_call(httpx_mock, monkeypatch, status, body, headers=None) -> ToolError:
    kwargs = {"json": body} if not isinstance(body, str) else {"text": body}
    httpx_mock.add_response(status_code=status, headers=headers or {}, is_reusable=True, **kwargs)
    with pytest.raises(ToolError) as info:
        call({}, monkeypatch)
    return info.value


@pytest.mark.parametrize("status", [401, 403])
def test_auth_status_is_auth_invalid(httpx_mock, monkeypatch, status):
    err = error_call(
        httpx_mock,
        monkeypatch,
        status,
        {
            "type": "ErrorResponse",
            "error": {"status": status, "code": "UNAUTHORIZED", "detail": "nope"},
        },
    )
    assert err.code is ErrorCode.AUTH_INVALID
    assert err.event is not None
    assert err.event["data"]["error_type"] == "auth_invalid"
    assert "BRAVE_API_KEY" in err.message


def test_422_token_error_is_auth_invalid(httpx_mock, monkeypatch):
    err = error_call(httpx_mock, monkeypatch, 422, fixture("token_invalid.json"))
    assert err.code is ErrorCode.AUTH_INVALID
    assert "subscription token is invalid" in err.message


def test_422_validation_is_invalid_input_with_brave_detail(httpx_mock, monkeypatch):
    err = error_call(httpx_mock, monkeypatch, 422, fixture("validation.json"))
    assert err.code is ErrorCode.INVALID_INPUT
    assert "count: Input should be less than or equal to 20" in err.message


def test_other_422_is_api_error(httpx_mock, monkeypatch):
    body = {
        "type": "ErrorResponse",
        "error": {
            "status": 422,
            "code": "OPTION_NOT_IN_PLAN",
            "detail": "extra_snippets needs a higher plan",
        },
    }
    err = error_call(httpx_mock, monkeypatch, 422, body)
    assert err.code is ErrorCode.API_ERROR
    assert "HTTP 422" in err.message
    assert "extra_snippets needs a higher plan" in err.message


def test_429_is_rate_limit_with_reset_and_event(httpx_mock, monkeypatch):
    headers = {
        "X-RateLimit-Limit": "1, 2000",
        "X-RateLimit-Remaining": "0, 1959",
        "X-RateLimit-Reset": "47, 2419200",
    }
    err = error_call(httpx_mock, monkeypatch, 429, fixture("rate_limited.json"), headers)
    assert err.code is ErrorCode.RATE_LIMIT
    assert err.retry_after == 47
    assert err.event is not None
    assert err.event["data"]["error_type"] == "rate_limit"
    assert "web_search_duckduckgo" in err.event["data"]["alternative_tools"]
    assert len(httpx_mock.get_requests()) == 1


def test_429_short_reset_is_retried_once(httpx_mock, monkeypatch):
    httpx_mock.add_response(
        status_code=429, headers={"X-RateLimit-Reset": "1, 99"}, json=fixture("rate_limited.json")
    )
    httpx_mock.add_response(json=fixture("search.json"))
    assert call({}, monkeypatch)["success"] is True


def test_429_retry_after_fallback(httpx_mock, monkeypatch):
    err = error_call(httpx_mock, monkeypatch, 429, {"detail": "slow"}, {"Retry-After": "120"})
    assert err.retry_after == 120


def test_5xx_is_retried_then_api_error(httpx_mock, monkeypatch):
    err = error_call(httpx_mock, monkeypatch, 503, "<html>Service Unavailable</html>")
    assert err.code is ErrorCode.API_ERROR
    assert "HTTP 503" in err.message
    assert "Service Unavailable" in err.message
    assert len(httpx_mock.get_requests()) == 2


def test_200_that_is_not_json_is_api_error(httpx_mock, monkeypatch):
    err = error_call(httpx_mock, monkeypatch, 200, "<html>captive portal</html>")
    assert err.code is ErrorCode.API_ERROR


def test_missing_key_is_auth_missing(monkeypatch):
    with pytest.raises(ToolError) as info:
        brave.execute({"query": "ikigai"}, load())
    assert info.value.code is ErrorCode.AUTH_MISSING


# --- the real process --------------------------------------------------------------------

TOOL = "web-search-brave-tool"


def test_invalid_input_exit_0(run_tool):
    out = run_tool(TOOL, {"query": "ikigai", "count": 99}, env={"BRAVE_API_KEY": KEY})
    assert out.code == 0
    assert out.json["error_code"] == "INVALID_INPUT"


def test_auth_missing_event_names_variable_and_path(run_tool, isolated_env):
    out = run_tool(TOOL, {"query": "ikigai"})
    assert out.code == 0
    body = out.json
    assert body["success"] is False
    assert body["error_code"] == "AUTH_MISSING"
    assert "BRAVE_API_KEY" in body["_event"]["content"]
    assert str(isolated_env / "credentials.json") in body["_event"]["content"]
    assert body["_event"]["data"]["env"] == ["BRAVE_API_KEY"]


def test_credentials_file_is_used(run_tool, isolated_env, fake_server):
    (isolated_env / "credentials.json").write_text(
        json.dumps({"web_search": {"brave": {"api_key": KEY}}})
    )
    url = fake_server.route("/res/v1/web/search", Reply(body=fixture("no_results.json")))
    out = run_tool(TOOL, {"query": "ikigai"}, env={"BRAVE_SEARCH_API_URL": url})
    assert out.json == {"success": True, "provider": "brave", "results": [], "count": 0}
    assert fake_server.seen[0].headers["X-Subscription-Token"] == KEY


def test_real_search_against_loopback(run_tool, fake_server):
    url = fake_server.route("/res/v1/web/search", Reply(body=fixture("search.json")))
    out = run_tool(
        TOOL,
        {"query": "ikigai meaning", "count": 3, "country": "us"},
        env={"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": url},
    )
    assert out.code == 0
    body = out.json
    assert body["success"] is True
    assert body["count"] == 3
    assert body["results"][0]["url"] == "https://en.wikipedia.org/wiki/Ikigai"
    assert body["next_offset"] == 1
    seen = fake_server.seen[0]
    assert seen.query["q"] == ["ikigai meaning"]
    assert seen.query["country"] == ["US"]
    assert seen.headers["User-Agent"].startswith("ikigai-web-tools/")
    again = run_tool(
        TOOL,
        {"query": "ikigai meaning", "count": 3, "country": "us"},
        env={"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": url},
    )
    assert again.json["cached"] is True
    assert len(fake_server.seen) == 1


SECRET_PATHS = [
    Reply(
        401,
        {"type": "ErrorResponse", "error": {"code": "UNAUTHORIZED", "detail": f"bad token {KEY}"}},
    ),
    Reply(422, fixture("token_invalid.json")),
    Reply(422, fixture("validation.json")),
    Reply(429, fixture("rate_limited.json"), {"X-RateLimit-Reset": "30"}),
    Reply(500, f"internal error for {KEY}"),
    Reply(200, "not json"),
    Reply(200, fixture("search.json")),
]


@pytest.mark.parametrize("reply", SECRET_PATHS)
def test_key_never_appears_in_any_output(run_tool, fake_server, reply):
    url = fake_server.route("/s", reply)
    out = run_tool(
        TOOL,
        {"query": "ikigai"},
        env={"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": url, "IKIGAI_WEB_CACHE_TTL": "0"},
    )
    assert out.code == 0
    assert KEY not in out.stdout
    assert KEY not in out.stderr


def test_key_never_appears_on_network_errors(run_tool):
    env = {"BRAVE_API_KEY": KEY, "BRAVE_SEARCH_API_URL": f"http://127.0.0.1:9/{KEY}?k={KEY}"}
    out = run_tool(TOOL, {"query": "ikigai"}, env=env)
    assert out.json["error_code"] == "NETWORK_ERROR"
    assert KEY not in out.stdout + out.stderr
