"""web-search-google-tool: input, request, output shape, errors, domain fan-out, no key leaks."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import pytest
from conftest import STALL, Reply, Seen, reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.net import http as common_http
from ikigai_web.tools import web_search_google as g

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

TOOL = "web-search-google-tool"
# Distinctive, so that finding it anywhere in an output can only be a leak.
KEY = "AIzaSyLEAKCANARY-0123456789-qwertzuiopZ"
ENGINE = "017576662512468239146:omuauf_lfve"
ENV = {"GOOGLE_SEARCH_API_KEY": KEY, "GOOGLE_SEARCH_ENGINE_ID": ENGINE}
API = "https://customsearch.googleapis.com/customsearch/v1"


# --- Google's documented formats -------------------------------------------------------------


def item(url: str, title: str | None = None, snippet: str | None = "A snippet.") -> dict[str, Any]:
    """One `items[]` entry as the Custom Search JSON API returns it."""
    host = urlsplit(url).hostname or ""
    out: dict[str, Any] = {
        "kind": "customsearch#result",
        "title": title if title is not None else f"Page at {url}",
        "htmlTitle": f"<b>Page</b> at {url}",
        "link": url,
        "displayLink": host,
        "formattedUrl": url,
        "htmlFormattedUrl": url,
    }
    if snippet is not None:
        out |= {"snippet": snippet, "htmlSnippet": f"<b>{snippet}</b>"}
    return out


def body(
    items: list[dict[str, Any]], *, start: int = 1, num: int = 10, more: bool = True
) -> dict[str, Any]:
    """A whole `customsearch#search` answer; `nextPage` only when Google has more."""
    request = {
        "title": "Google Custom Search - rust async",
        "totalResults": "1230000",
        "searchTerms": "rust async",
        "count": num,
        "startIndex": start,
        "inputEncoding": "utf8",
        "outputEncoding": "utf8",
        "safe": "off",
        "cx": ENGINE,
    }
    out: dict[str, Any] = {
        "kind": "customsearch#search",
        "url": {
            "type": "application/json",
            "template": "https://www.googleapis.com/customsearch/v1?q={searchTerms}&num={count?}"
            "&start={startIndex?}&cx={cx?}&alt=json",
        },
        "queries": {"request": [request]},
        "context": {"title": "ikigai"},
        "searchInformation": {
            "searchTime": 0.31,
            "formattedSearchTime": "0.31",
            "totalResults": "1230000",
            "formattedTotalResults": "1,230,000",
        },
    }
    if more:
        out["queries"]["nextPage"] = [request | {"startIndex": start + num}]
    if items:
        out["items"] = items
    return out


def google_error(
    code: int, message: str, reason: str, status: str, info: str | None = None
) -> dict[str, Any]:
    """Google's error envelope; `info` adds the google.rpc.ErrorInfo detail newer answers carry."""
    error: dict[str, Any] = {
        "code": code,
        "message": message,
        "errors": [{"message": message, "domain": "global", "reason": reason}],
        "status": status,
    }
    if info:
        meta = {"service": "customsearch.googleapis.com"}
        error["details"] = [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": info,
                "domain": "googleapis.com",
                "metadata": meta,
            },
        ]
    return {"error": error}


KEY_INVALID = google_error(
    400,
    "API key not valid. Please pass a valid API key.",
    "badRequest",
    "INVALID_ARGUMENT",
    "API_KEY_INVALID",
)
LEGACY_KEY_INVALID = {
    "error": {
        "errors": [{"domain": "usageLimits", "reason": "keyInvalid", "message": "Bad Request"}],
        "code": 400,
        "message": "Bad Request",
    }
}
PER_DAY = (
    "Quota exceeded for quota metric 'Queries' and limit 'Queries per day' of service "
    "'customsearch.googleapis.com' for consumer 'project_number:123456789012'."
)
QUOTA_429 = google_error(
    429, PER_DAY, "rateLimitExceeded", "RESOURCE_EXHAUSTED", "RATE_LIMIT_EXCEEDED"
)
DAILY_403 = {
    "error": {
        "errors": [
            {
                "domain": "usageLimits",
                "reason": "dailyLimitExceeded",
                "message": "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time "
                "(PT). You may monitor your quota usage and adjust limits in the API Console: "
                "https://console.developers.google.com/apis/api/customsearch.googleapis.com/quotas",
            }
        ],
        "code": 403,
        "message": "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time (PT).",
    }
}
PER_MINUTE_403 = google_error(
    403,
    "Quota exceeded for quota group 'default' and limit 'Queries per minute per user' of service "
    "'customsearch.googleapis.com'.",
    "quotaExceeded",
    "PERMISSION_DENIED",
)
CLOSED = google_error(
    403,
    "This project does not have the access to Custom Search JSON API.",
    "forbidden",
    "PERMISSION_DENIED",
)
REFERER = google_error(
    403,
    "Requests from referer <empty> are blocked.",
    "forbidden",
    "PERMISSION_DENIED",
    "API_KEY_HTTP_REFERRER_BLOCKED",
)
BAD_ARGUMENT = google_error(
    400, "Request contains an invalid argument.", "badRequest", "INVALID_ARGUMENT"
)
BACKEND = google_error(500, "Internal error encountered.", "backendError", "INTERNAL")


# --- helpers ----------------------------------------------------------------------------------


def call(raw: dict[str, Any]) -> dict[str, Any]:
    """The tool's answer object (success or failure), as the protocol runner builds it."""
    return answer(g.execute, raw, g.SCHEMA)[0]


@pytest.fixture
def creds(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)


@pytest.fixture
def no_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """Retries of 5xx and connection errors happen at once instead of after jitter."""
    monkeypatch.setattr(common_http, "_jitter", lambda: 0.0)


def sites(httpx_mock: Any) -> dict[str | None, int]:
    """siteSearch -> num of every request made."""
    return {
        r.url.params.get("siteSearch"): int(r.url.params["num"]) for r in httpx_mock.get_requests()
    }


def per_site(pages: dict[str, list[str]]) -> Any:
    """A callback answering each siteSearch with its own list of URLs (at most `num`)."""

    def respond(request: httpx.Request) -> httpx.Response:
        site = request.url.params.get("siteSearch", "")
        num = int(request.url.params["num"])
        urls = pages.get(site, [f"https://{site}/r{i}" for i in range(num)])[:num]
        return httpx.Response(200, json=body([item(u) for u in urls], num=num))

    return respond


def assert_clean(*texts: str) -> None:
    for text in texts:
        assert KEY not in text
        # A key=… that survived must at least be masked.
        assert re.search(r"key=(?!\*\*\*)", text) is None
        assert "LEAKCANARY" not in text


# --- schema and input -------------------------------------------------------------------------


def test_schema_runs_fast_and_names_the_tool(run_tool):
    run = run_tool(TOOL, args=("--schema",), raw=b"")
    assert run.code == 0
    schema = run.json
    assert schema["name"] == "web_search_google"
    assert schema["parameters"]["required"] == ["query"]
    props = schema["parameters"]["properties"]
    assert set(props) == {
        "query",
        "num",
        "start",
        "allowed_domains",
        "blocked_domains",
        "safe",
        "date_restrict",
        "language",
        "country",
        "read",
    }
    assert "(1-10)" in props["num"]["description"]
    assert "(1-91)" in props["start"]["description"]
    assert len(run.stdout.encode()) < 8192


def test_schema_imports_nothing_heavy():
    code = (
        "import sys, ikigai_web.tools.web_search_google; "
        "print(sorted(m for m in ('httpx', 'lxml') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_defaults():
    assert g.parse_input({"query": " rust async "}) == g.Params(query="rust async")


def test_every_parameter_maps_to_google_names():
    params = g.parse_input(
        {
            "query": "rust",
            "num": 5,
            "start": 11,
            "safe": "ACTIVE",
            "date_restrict": "M6",
            "language": "zh-cn",
            "country": "DE",
        }
    )
    query = g.request_params(params, {"api_key": "k", "engine_id": "cx1"}, None, 5)
    assert query == {
        "key": "k",
        "cx": "cx1",
        "q": "rust",
        "num": 5,
        "start": 11,
        "safe": "active",
        "dateRestrict": "m6",
        "lr": "lang_zh-CN",
        "gl": "de",
    }


@pytest.mark.parametrize(
    ("given", "sent"),
    [("en", "lang_en"), ("lang_de", "lang_de"), ("he", "lang_iw"), ("ZH_TW", "lang_zh-TW")],
)
def test_language_codes(given, sent):
    assert g.parse_input({"query": "rust", "language": given}).language == sent


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("query", "a", "2 to 2048"),
        ("num", 0, "from 1 to 10"),
        ("num", 11, "from 1 to 10"),
        ("num", "5", "from 1 to 10"),
        ("start", 0, "from 1 to 91"),
        ("start", 92, "start + num - 1 may not pass 100"),
        ("start", 100, "at most 100 results"),
        ("safe", "medium", "active, off"),
        ("date_restrict", "7d", "d[n], w[n], m[n] or y[n]"),
        ("date_restrict", "d0", "d[n]"),
        ("language", "klingon", "Google accepts ar, bg"),
        ("country", "usa", "two-letter country code"),
        ("blocked_domains", "example.com", "array of strings"),
    ],
)
def test_bad_values_are_invalid_input_naming_field_and_value(field, value, says):
    with pytest.raises(ToolError) as caught:
        g.parse_input({"query": "rust async", field: value})
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert f"'{field}' is {json.dumps(value)}" in caught.value.message
    assert says in caught.value.message


def test_a_bad_domain_entry_is_named():
    with pytest.raises(ToolError) as caught:
        g.parse_input({"query": "rust", "allowed_domains": ["python.org", "not a domain"]})
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert "'allowed_domains' is \"not a domain\"" in caught.value.message


def test_start_and_num_at_the_cap_are_allowed():
    assert g.parse_input({"query": "rust", "start": 91, "num": 10}).start == 91


def test_bad_input_through_the_tool_is_reported_not_crashed(run_tool):
    run = run_tool(TOOL, {"query": "rust", "start": 95}, env=ENV)
    assert run.code == 0
    assert run.json["error_code"] == "INVALID_INPUT"
    assert "'start' is 95" in run.json["error"]


# --- credentials ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "present", [{}, {"GOOGLE_SEARCH_API_KEY": KEY}, {"GOOGLE_SEARCH_ENGINE_ID": ENGINE}]
)
def test_missing_credentials_are_auth_missing_with_the_event(run_tool, present, isolated_env):
    run = run_tool(TOOL, {"query": "rust async"}, env=present)
    assert run.code == 0
    out = run.json
    assert out["error_code"] == "AUTH_MISSING"
    absent = [n for n in ("GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID") if n not in present]
    for name in absent:
        assert f"set {name}" in out["error"] or f"and {name}" in out["error"]
    if len(absent) == 1:  # Google says which of its two credentials is missing
        assert f"({absent[0]} is not set)" in out["error"]
        assert (
            set(present) & {"GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID"}
        ).pop() not in out["error"]
    assert "2027-01-01" in out["error"]
    data = out["_event"]["data"]
    assert out["_event"]["kind"] == "config_required"
    assert data["tool"] == "web_search_google"
    assert data["credentials"] == ["api_key", "engine_id"]
    assert data["env"] == ["GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID"]
    assert data["signup_url"] == "https://developers.google.com/custom-search/v1/overview"
    assert str(isolated_env / "credentials.json") in out["_event"]["content"]
    assert_clean(run.stdout, run.stderr)


@pytest.mark.parametrize(
    "stored",
    [
        {"web_search": {"google": {"api_key": KEY, "engine_id": ENGINE}}},
        {"GOOGLE_SEARCH_API_KEY": KEY, "GOOGLE_SEARCH_ENGINE_ID": ENGINE},
        {"GOOGLE_SEARCH_API_KEY": KEY, "web_search": {"google": {"engine_id": ENGINE}}},
    ],
)
def test_credentials_json_flat_nested_or_mixed(run_tool, fake_server, isolated_env, stored):
    (isolated_env / "credentials.json").write_text(json.dumps(stored))
    url = fake_server.route("/customsearch/v1", Reply(200, body([item("https://a.example/x")])))
    run = run_tool(TOOL, {"query": "rust async"}, env={"GOOGLE_SEARCH_API_URL": url})
    assert run.json["success"] is True
    assert fake_server.seen[0].query["key"] == [KEY]
    assert fake_server.seen[0].query["cx"] == [ENGINE]


# --- output shape -----------------------------------------------------------------------------


def test_items_become_results_with_next_start():
    items = [
        item("https://a.example/1", "Rust &amp; async", "Line one\n  line two ..."),
        item("https://b.example/2", snippet=None),
        {"kind": "customsearch#result", "title": "no link"},
        {"kind": "customsearch#result", "link": "https://c.example/no-title"},
        item("https://d.example/empty-title", title=" "),
        item("ftp://e.example/file"),
        item("https://user:pw@f.example/userinfo"),
        item("https://g.example/white space"),
    ]
    items[1]["pagemap"] = {"metatags": [{"article:published_time": "2025-03-04T10:00:00Z"}]}
    page = g.shape_output(body(items, start=11, num=10))
    assert page.results == [
        {"title": "Rust & async", "url": "https://a.example/1", "snippet": "Line one line two ..."},
        {
            "title": "Page at https://b.example/2",
            "url": "https://b.example/2",
            "snippet": "",
            "published": "2025-03-04",
        },
        {
            "title": "https://d.example/empty-title",
            "url": "https://d.example/empty-title",
            "snippet": "A snippet.",
        },
    ]
    assert page.extra == {"next_start": 21}


def test_no_items_is_no_results():
    page = g.shape_output(body([], more=False))
    assert (page.results, page.extra) == ([], {})


@pytest.mark.parametrize(
    ("start", "num", "expected"),
    [(81, 10, {"next_start": 91}), (91, 10, {}), (88, 3, {"next_start": 91}), (90, 3, {})],
)
def test_next_start_stays_within_the_100_cap(start, num, expected):
    assert (
        g.shape_output(body([item("https://a.example/")], start=start, num=num)).extra == expected
    )


def test_json_that_is_not_an_object_is_api_error():
    with pytest.raises(ToolError) as caught:
        g.shape_output([1, 2])
    assert caught.value.code is ErrorCode.API_ERROR


# --- error mapping ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "error", "code"),
    [
        (429, QUOTA_429, "RATE_LIMIT"),
        (403, DAILY_403, "RATE_LIMIT"),
        (403, PER_MINUTE_403, "RATE_LIMIT"),
        (429, "Too Many Requests", "RATE_LIMIT"),
        (400, KEY_INVALID, "AUTH_INVALID"),
        (400, LEGACY_KEY_INVALID, "AUTH_INVALID"),
        (403, REFERER, "AUTH_INVALID"),
        (403, CLOSED, "API_ERROR"),
        (400, BAD_ARGUMENT, "API_ERROR"),
        (500, BACKEND, "API_ERROR"),
        (502, "<html>Bad Gateway</html>", "API_ERROR"),
    ],
)
def test_error_mapping(status, error, code):
    err = g.error_for(reply(status, error))
    assert err.code.value == code
    assert f"Google answered HTTP {status}" in err.message
    said = error["error"]["message"] if isinstance(error, dict) else error.strip("<html/>")
    assert said in err.message
    assert "<html>" not in err.message


def test_rate_limit_says_quota_and_reset_and_offers_alternatives():
    err = g.error_for(reply(429, QUOTA_429))
    assert "100 queries a day" in err.message
    assert "midnight Pacific time" in err.message
    assert "web_search_duckduckgo" in err.message
    assert err.event is not None
    assert err.event["data"]["error_type"] == "rate_limit"
    assert "web_search_duckduckgo" in err.event["data"]["alternative_tools"]
    assert err.retry_after is not None
    assert 0 < err.retry_after <= 25 * 3600


def test_rate_limit_prefers_retry_after_and_knows_no_wait_for_per_minute_limits():
    assert g.error_for(reply(429, QUOTA_429, {"Retry-After": str(42)})).retry_after == 42
    assert g.error_for(reply(403, PER_MINUTE_403)).retry_after is None


def test_auth_invalid_carries_the_event():
    err = g.error_for(reply(400, KEY_INVALID))
    assert "GOOGLE_SEARCH_API_KEY" in err.message
    assert err.event is not None
    assert err.event["data"]["error_type"] == "auth_invalid"


def test_closure_names_the_date_and_the_other_tools():
    err = g.error_for(reply(403, CLOSED))
    assert "closed the Custom Search JSON API to new customers" in err.message
    assert "2027-01-01" in err.message
    for tool in (
        "web_search_brave",
        "web_search_duckduckgo",
        "web_search_searxng",
        "web_search_tavily",
    ):
        assert tool in err.message


def test_bad_argument_points_at_the_engine_id():
    assert "GOOGLE_SEARCH_ENGINE_ID" in g.error_for(reply(400, BAD_ARGUMENT)).message


@pytest.mark.parametrize(
    ("now", "seconds"),
    [
        (datetime(2026, 11, 22, 7, 0, tzinfo=UTC), 3600),  # 23:00 PST
        (datetime(2026, 7, 1, 6, 59, 30, tzinfo=UTC), 30),  # 23:59:30 PDT
        (datetime(2026, 3, 8, 8, 30, tzinfo=UTC), 23 * 3600 - 1800),  # 00:30 PST, a 23-hour day
    ],
)
def test_seconds_to_pacific_midnight(now, seconds):
    assert g.seconds_to_pacific_midnight(now) == seconds


# --- one request, through pytest-httpx ---------------------------------------------------------


def test_one_request_carries_every_parameter(httpx_mock, creds):
    httpx_mock.add_response(json=body([item("https://a.example/1")], num=5))
    out = call({"query": "rust async", "num": 5, "start": 1, "safe": "off"})
    assert out == {
        "success": True,
        "provider": "google",
        "count": 1,
        "next_start": 6,
        "results": [
            {
                "title": "Page at https://a.example/1",
                "url": "https://a.example/1",
                "snippet": "A snippet.",
            }
        ],
    }
    request = httpx_mock.get_request()
    assert str(request.url).startswith(API + "?")
    assert dict(request.url.params) == {
        "key": KEY,
        "cx": ENGINE,
        "q": "rust async",
        "num": "5",
        "start": "1",
        "safe": "off",
    }


def test_second_identical_call_is_served_from_the_cache(httpx_mock, creds):
    httpx_mock.add_response(json=body([item("https://a.example/1")]))
    first = call({"query": "rust async"})
    assert call({"query": "rust async"}) == first | {"cached": True}
    assert len(httpx_mock.get_requests()) == 1


def test_http_200_that_is_not_json_is_api_error(httpx_mock, creds):
    httpx_mock.add_response(text="<html>Service temporarily unavailable</html>")
    out = call({"query": "rust async"})
    assert out["error_code"] == "API_ERROR"
    assert "HTTP 200" in out["error"]
    assert "not JSON" in out["error"]


@pytest.mark.loopback
def test_garbled_gzip_is_api_error(fake_server, creds, monkeypatch):
    garbled = Reply(200, b"not gzip at all", {"Content-Encoding": "gzip"})
    monkeypatch.setenv("GOOGLE_SEARCH_API_URL", fake_server.route("/v1", garbled))
    out = call({"query": "rust async"})
    assert out["error_code"] == "API_ERROR"
    assert "could not be decoded" in out["error"]


@pytest.mark.parametrize(
    ("status", "error", "code"),
    [
        (429, QUOTA_429, "RATE_LIMIT"),
        (400, KEY_INVALID, "AUTH_INVALID"),
        (403, CLOSED, "API_ERROR"),
    ],
)
def test_error_answers_end_to_end(httpx_mock, creds, status, error, code):
    httpx_mock.add_response(status_code=status, json=error)
    out = call({"query": "rust async"})
    assert (out["success"], out["error_code"]) == (False, code)
    assert_clean(json.dumps(out))


def test_server_errors_are_retried_once_then_api_error(httpx_mock, creds, no_pause):
    httpx_mock.add_response(status_code=500, json=BACKEND, is_reusable=True)
    out = call({"query": "rust async"})
    assert out["error_code"] == "API_ERROR"
    assert "HTTP 500: (backendError) Internal error encountered." in out["error"]
    assert len(httpx_mock.get_requests()) == 2


def test_network_error_carrying_the_url_never_shows_the_key(httpx_mock, creds, no_pause):
    leaky = f"All connection attempts failed for {API}?key={KEY}&cx={ENGINE}"
    httpx_mock.add_exception(httpx.ConnectError(leaky), is_reusable=True)
    out = call({"query": "rust async"})
    assert out["error_code"] == "NETWORK_ERROR"
    assert "customsearch.googleapis.com" in out["error"]
    assert_clean(json.dumps(out))


# --- domain filters ---------------------------------------------------------------------------

SPLITS = [
    (1, 10, [10]),
    (1, 3, [3]),
    (1, 1, [1]),
    (2, 10, [5, 5]),
    (2, 3, [2, 1]),
    (2, 1, [1]),
    (3, 10, [4, 3, 3]),
    (3, 3, [1, 1, 1]),
    (3, 1, [1]),
    (11, 10, [1] * 10),
    (11, 3, [1, 1, 1]),
    (11, 1, [1]),
]


@pytest.mark.parametrize(("domains", "num", "shares"), SPLITS)
def test_count_split(httpx_mock, creds, domains, num, shares):
    names = [f"d{i}.example" for i in range(domains)]
    httpx_mock.add_callback(per_site({}), is_reusable=True)
    out = call({"query": "rust async", "num": num, "allowed_domains": names})
    assert sites(httpx_mock) == dict(zip(names, shares, strict=False))
    assert {r.url.params["siteSearchFilter"] for r in httpx_mock.get_requests()} == {"i"}
    assert out["count"] == num
    # Round-robin: the first result of every queried domain comes before any second one.
    assert [urlsplit(r["url"]).hostname for r in out["results"][: len(shares)]] == names[
        : len(shares)
    ]


def test_round_robin_merge_drops_duplicate_urls(httpx_mock, creds):
    pages = {
        "example.com": [
            "https://example.com/1",
            "https://docs.example.com/guide",
            "https://example.com/2",
        ],
        "docs.example.com": [
            "https://DOCS.example.com/guide#intro",
            "https://docs.example.com/api",
            "https://docs.example.com/faq",
        ],
        "b.org": ["https://b.org/1", "https://b.org/2", "https://b.org/3"],
    }
    httpx_mock.add_callback(per_site(pages), is_reusable=True)
    out = call({"query": "rust async", "num": 9, "allowed_domains": list(pages)})
    assert [r["url"] for r in out["results"]] == [
        "https://example.com/1",
        "https://DOCS.example.com/guide#intro",
        "https://b.org/1",
        "https://docs.example.com/api",
        "https://b.org/2",
        "https://example.com/2",
        "https://docs.example.com/faq",
        "https://b.org/3",
    ]
    assert out["count"] == 8
    assert "next_start" not in out


def test_one_failed_domain_is_a_warning(httpx_mock, creds):
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.params["siteSearch"] == "b.org":
            return httpx.Response(429, json=QUOTA_429)
        answer: httpx.Response = per_site({})(request)
        return answer

    httpx_mock.add_callback(respond, is_reusable=True)
    out = call({"query": "rust async", "num": 6, "allowed_domains": ["a.org", "b.org", "c.org"]})
    assert out["success"] is True
    assert [urlsplit(r["url"]).hostname for r in out["results"]] == [
        "a.org",
        "c.org",
        "a.org",
        "c.org",
    ]
    assert len(out["warnings"]) == 1
    assert out["warnings"][0]["code"] == "RATE_LIMIT"
    assert out["warnings"][0]["message"].startswith("b.org: Google answered HTTP 429")


@pytest.mark.parametrize(
    ("failures", "code"),
    [
        (
            {"a.org": (500, BACKEND), "b.org": "connect", "c.org": (400, KEY_INVALID)},
            "AUTH_INVALID",
        ),
        ({"a.org": (403, CLOSED), "b.org": (429, QUOTA_429), "c.org": "connect"}, "RATE_LIMIT"),
        ({"a.org": (500, BACKEND), "b.org": "connect", "c.org": (500, BACKEND)}, "NETWORK_ERROR"),
        (
            {"a.org": (500, BACKEND), "b.org": (403, CLOSED), "c.org": (200, "not json")},
            "API_ERROR",
        ),
    ],
)
def test_every_domain_failing_gives_the_most_specific_error(
    httpx_mock, creds, no_pause, failures, code
):
    def respond(request: httpx.Request) -> httpx.Response:
        how = failures[request.url.params["siteSearch"]]
        if how == "connect":
            raise httpx.ConnectError(f"connection refused: {request.url}", request=request)
        status, error = how
        if isinstance(error, str):
            return httpx.Response(status, text=error)
        return httpx.Response(status, json=error)

    httpx_mock.add_callback(respond, is_reusable=True)
    out = call({"query": "rust async", "num": 3, "allowed_domains": list(failures)})
    assert (out["success"], out["error_code"]) == (False, code)
    assert out["error"].startswith("every domain failed; ")
    assert_clean(json.dumps(out))


def test_one_blocked_domain_is_excluded_natively_and_post_filtered(httpx_mock, creds):
    urls = ["https://a.example/1", "https://www.pinterest.com/pin/1", "https://b.example/2"]
    httpx_mock.add_response(json=body([item(u) for u in urls]))
    out = call({"query": "rust async", "blocked_domains": ["Pinterest.com"]})
    params = httpx_mock.get_request().url.params
    assert (params["siteSearch"], params["siteSearchFilter"]) == ("pinterest.com", "e")
    assert [r["url"] for r in out["results"]] == ["https://a.example/1", "https://b.example/2"]


def test_several_blocked_domains_are_post_filtered(httpx_mock, creds):
    urls = [
        "https://a.example/1",
        "https://m.pinterest.com/x",
        "https://quora.com/y",
        "https://notquora.com/z",
    ]
    httpx_mock.add_response(json=body([item(u) for u in urls]))
    out = call({"query": "rust async", "blocked_domains": ["pinterest.com", "quora.com"]})
    assert "siteSearch" not in httpx_mock.get_request().url.params
    assert [r["url"] for r in out["results"]] == ["https://a.example/1", "https://notquora.com/z"]


def test_one_allowed_domain_is_native_and_blocked_still_applies(httpx_mock, creds):
    urls = ["https://docs.python.org/3/", "https://python.org/", "https://wiki.python.org/moin"]
    httpx_mock.add_response(json=body([item(u) for u in urls], num=10))
    out = call(
        {
            "query": "asyncio",
            "allowed_domains": ["https://www.python.org/about"],
            "blocked_domains": ["wiki.python.org"],
        }
    )
    params = httpx_mock.get_request().url.params
    assert (params["siteSearch"], params["siteSearchFilter"]) == ("www.python.org", "i")
    # Google answered hosts outside www.python.org: the post-filter drops them too.
    assert out["results"] == []


def test_fan_out_applies_blocked_domains(httpx_mock, creds):
    pages = {
        "python.org": ["https://wiki.python.org/a", "https://docs.python.org/b"],
        "rust-lang.org": ["https://doc.rust-lang.org/c", "https://rust-lang.org/d"],
    }
    httpx_mock.add_callback(per_site(pages), is_reusable=True)
    out = call(
        {
            "query": "async",
            "num": 4,
            "allowed_domains": list(pages),
            "blocked_domains": ["wiki.python.org"],
        }
    )
    assert sites(httpx_mock) == {"python.org": 2, "rust-lang.org": 2}
    assert [r["url"] for r in out["results"]] == [
        "https://doc.rust-lang.org/c",
        "https://docs.python.org/b",
        "https://rust-lang.org/d",
    ]


# --- the installed tool against a fake Custom Search server -----------------------------------


def serve_site(seen: Seen) -> Reply:
    site = seen.query["siteSearch"][0]
    num = int(seen.query["num"][0])
    return Reply(200, body([item(f"https://{site}/r{i}") for i in range(num)], num=num), delay=0.3)


def test_five_allowed_domains_fan_out_against_a_server(run_tool, fake_server):
    url = fake_server.route("/customsearch/v1", serve_site)
    domains = [f"site{i}.example" for i in range(5)]
    env = ENV | {"GOOGLE_SEARCH_API_URL": url, "IKIGAI_WEB_CACHE_TTL": "0"}
    run = run_tool(TOOL, {"query": "rust async", "allowed_domains": domains}, env=env)
    assert run.code == 0
    out = run.json
    assert len(fake_server.seen) == 5
    got = sorted(
        (s.query["siteSearch"][0], s.query["siteSearchFilter"][0], s.query["num"][0])
        for s in fake_server.seen
    )
    assert got == [(d, "i", "2") for d in domains]
    assert {s.query["key"][0] for s in fake_server.seen} == {KEY}
    assert [r["url"] for r in out["results"]] == [
        f"https://{d}/r{i}" for i in range(2) for d in domains
    ]
    assert (out["count"], out["provider"]) == (10, "google")
    assert "warnings" not in out
    assert_clean(run.stdout, run.stderr)


# --- the key never leaks, whatever goes wrong (real subprocess runs) --------------------------


def echo_url(status: int) -> Any:
    """A broken gateway that echoes the whole request URL, key included, in its error page."""

    def reply(seen: Seen) -> Reply:
        query = "&".join(f"{k}={v[0]}" for k, v in seen.query.items())
        return Reply(
            status,
            f"<html>upstream failed for http://{seen.headers['Host']}{seen.path}?{query}; "
            f"path {seen.path}?{query}; key {KEY}</html>",
            headers={"Content-Type": "text/html"},
        )

    return reply


LEAK_ROUTES: list[tuple[str, Any, str]] = [
    ("key-invalid", Reply(400, KEY_INVALID), "AUTH_INVALID"),
    ("quota", Reply(429, QUOTA_429), "RATE_LIMIT"),
    ("daily", Reply(403, DAILY_403), "RATE_LIMIT"),
    ("closed", Reply(403, CLOSED), "API_ERROR"),
    ("bad-argument", Reply(400, BAD_ARGUMENT), "API_ERROR"),
    ("echo-404", echo_url(404), "API_ERROR"),
    ("echo-200", echo_url(200), "API_ERROR"),
]


@pytest.mark.parametrize(("name", "reply", "code"), LEAK_ROUTES, ids=[r[0] for r in LEAK_ROUTES])
@pytest.mark.parametrize("domains", [[], ["a.example", "b.example"]], ids=["single", "fan-out"])
def test_no_error_answer_leaks_the_key(run_tool, fake_server, name, reply, code, domains):
    url = fake_server.route(f"/{name}", reply)
    run = run_tool(
        TOOL,
        {"query": "rust async", "allowed_domains": domains},
        env=ENV | {"GOOGLE_SEARCH_API_URL": url},
    )
    assert run.code == 0
    assert run.json["error_code"] == code
    assert len(fake_server.seen) == max(1, len(domains))
    assert fake_server.seen[0].query["key"] == [KEY]
    assert_clean(run.stdout, run.stderr)


def test_server_errors_retried_then_reported_without_the_key(run_tool, fake_server):
    url = fake_server.route("/customsearch/v1", echo_url(503))
    run = run_tool(TOOL, {"query": "rust async"}, env=ENV | {"GOOGLE_SEARCH_API_URL": url})
    assert run.json["error_code"] == "API_ERROR"
    assert "HTTP 503" in run.json["error"]
    assert len(fake_server.seen) == 2
    assert_clean(run.stdout, run.stderr)


def test_partial_fan_out_warning_does_not_leak_the_key(run_tool, fake_server):
    def reply(seen: Seen) -> Reply:
        return (
            echo_url(404)(seen) if seen.query["siteSearch"] == ["b.example"] else serve_site(seen)
        )

    url = fake_server.route("/customsearch/v1", reply)
    run = run_tool(
        TOOL,
        {"query": "rust async", "allowed_domains": ["a.example", "b.example"]},
        env=ENV | {"GOOGLE_SEARCH_API_URL": url},
    )
    out = run.json
    assert out["success"] is True
    assert out["warnings"][0]["message"].startswith("b.example: Google answered HTTP 404")
    assert_clean(run.stdout, run.stderr)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def garbage_server() -> Iterator[str]:
    """A TCP server that answers every connection with bytes that are not HTTP, then hangs up."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(b"SSH-2.0-OpenSSH_9.6\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/customsearch/v1"
    listener.close()


@pytest.mark.parametrize("domains", [[], ["a.example", "b.example"]], ids=["single", "fan-out"])
@pytest.mark.parametrize("failure", ["refused", "garbage", "timeout"])
def test_network_errors_do_not_leak_the_key(
    run_tool, fake_server, garbage_server, failure, domains
):
    env = ENV | {"IKIGAI_WEB_TIMEOUT": "1"}
    if failure == "refused":
        env["GOOGLE_SEARCH_API_URL"] = f"http://127.0.0.1:{free_port()}/customsearch/v1"
    elif failure == "garbage":
        env["GOOGLE_SEARCH_API_URL"] = garbage_server
    else:
        env["GOOGLE_SEARCH_API_URL"] = fake_server.route("/slow", Reply(200, body([]), delay=STALL))
    run = run_tool(TOOL, {"query": "rust async", "allowed_domains": domains}, env=env)
    assert run.code == 0
    assert run.json["error_code"] == "NETWORK_ERROR"
    assert "127.0.0.1" in run.json["error"]
    assert_clean(run.stdout, run.stderr)


CRASH = """
import http.client
import urllib.parse

def request(self, method, url, *args, **kwargs):
    # A bug deep in the stack whose message holds the full URL and the bare key.
    key = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)["key"][0]
    raise RuntimeError(f"bug while sending {url} with {key}")

http.client.HTTPConnection.request = request
"""


@pytest.mark.parametrize("domains", [[], ["a.example", "b.example"]], ids=["single", "fan-out"])
def test_a_crash_traceback_does_not_leak_the_key(run_tool, fake_server, tmp_path: Path, domains):
    (tmp_path / "sitecustomize.py").write_text(CRASH)
    url = fake_server.route("/customsearch/v1", Reply(200, body([])))
    env = ENV | {"GOOGLE_SEARCH_API_URL": url, "PYTHONPATH": str(tmp_path)}
    run = run_tool(TOOL, {"query": "rust async", "allowed_domains": domains}, env=env)
    assert run.code != 0
    assert run.stdout == ""
    assert "Traceback" in run.stderr
    assert "RuntimeError: bug while sending /customsearch/v1?key=***" in run.stderr
    assert_clean(run.stdout, run.stderr)
