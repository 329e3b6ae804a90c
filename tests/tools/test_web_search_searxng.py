"""web-search-searxng-tool: input, request, output shape, error mapping, protocol, no leaks."""

from __future__ import annotations

import base64
import copy
import json
import socket
import subprocess
import sys
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from conftest import Reply, reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.common.settings import load
from ikigai_web.tools import web_search_searxng as sx

TOOL = "web-search-searxng-tool"
BASE = "https://searx.test"
PASSWORD = "Zq9-SEARX-pa55-3xQ7"  # distinctive: must never appear in any output
AUTH = f"leaky-user:{PASSWORD}"
BASIC = base64.b64encode(AUTH.encode()).decode()

# Shaped like a real SearXNG 2024/2025 `format=json` answer (searx/webutils.get_json_response).
BODY: dict[str, Any] = {
    "query": "ikigai",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://en.wikipedia.org/wiki/Ikigai",
            "title": "Ikigai - Wikipedia",
            "content": "<b>Ikigai</b> is a Japanese concept referring to something that gives "
            "a person a sense of purpose &amp; a reason for living.",
            "publishedDate": None,
            "thumbnail": "",
            "engine": "duckduckgo",
            "template": "default.html",
            "parsed_url": ["https", "en.wikipedia.org", "/wiki/Ikigai", "", "", ""],
            "img_src": "",
            "priority": "",
            "engines": ["duckduckgo", "wikipedia", "brave"],
            "positions": [1, 1, 2],
            "score": 9.0,
            "category": "general",
        },
        {
            "url": "https://www.bbc.com/worklife/article/20170807-ikigai",
            "title": "Ikigai: A Japanese concept to improve work and life",
            "content": "Why do Japanese people   live so long?",
            "publishedDate": "2017-08-07T00:00:00",
            "engine": "brave",
            "template": "default.html",
            "parsed_url": ["https", "www.bbc.com", "/worklife/article/20170807-ikigai", "", "", ""],
            "engines": ["brave"],
            "positions": [3],
            "score": 0.33,
            "category": "general",
        },
        {
            "url": "https://news.example.com/ikigai-study",
            "title": "",
            "content": "",
            "publishedDate": "2024-03-05T10:15:00+00:00",
            "engine": "bing news",
            "template": "default.html",
            "parsed_url": ["https", "news.example.com", "/ikigai-study", "", "", ""],
            "engines": ["bing news"],
            "positions": [4],
            "score": 0.25,
            "category": "news",
        },
        {"url": "magnet:?xt=urn:btih:abc", "title": "a torrent", "engines": ["piratebay"]},
    ],
    "answers": [
        {
            "url": "https://en.wikipedia.org/wiki/Ikigai",
            "template": "answer/legacy.html",
            "engine": "wikipedia",
            "parsed_url": ["https", "en.wikipedia.org", "/wiki/Ikigai", "", "", ""],
            "answer": "Ikigai is a Japanese concept meaning <i>a reason for being</i>.",
        }
    ],
    "corrections": [],
    "infoboxes": [
        {
            "infobox": "Ikigai",
            "id": "https://en.wikipedia.org/wiki/Ikigai",
            "content": "Ikigai is a Japanese concept referring to a reason for being.",
            "img_src": None,
            "urls": [{"title": "Wikipedia", "url": "https://en.wikipedia.org/wiki/Ikigai"}],
            "engine": "wikipedia",
            "engines": ["wikipedia"],
            "attributes": [],
        }
    ],
    "suggestions": ["ikigai book", "ikigai meaning"],
    "unresponsive_engines": [["google", "CAPTCHA"]],
}
# Werkzeug's default page for `flask.abort(403)`: what SearXNG sends when `json` is not in
# `search.formats`.
FORMAT_403 = (
    "<!doctype html>\n<html lang=en>\n<title>403 Forbidden</title>\n<h1>Forbidden</h1>\n"
    "<p>You don&#39;t have the permission to access the requested resource. It is either "
    "read-protected or not readable by the server.</p>\n"
)
NGINX_401 = (
    "<html>\r\n<head><title>401 Authorization Required</title></head>\r\n<body>\r\n"
    "<center><h1>401 Authorization Required</h1></center>\r\n<hr><center>nginx</center>\r\n"
    "</body>\r\n</html>\r\n"
)
LOGIN_PAGE = "<!doctype html><html><head><title>Sign in</title></head><body>Login</body></html>"
WHERE = sx.Instance(f"{BASE}/search", BASE, {})
WHERE_AUTH = sx.Instance(f"{BASE}/search", BASE, {"Authorization": f"Basic {BASIC}"})


def params(**raw: Any) -> sx.Params:
    return sx.parse_input({"query": "ikigai"} | raw)


# --- input -------------------------------------------------------------------------------


def test_defaults():
    assert params() == sx.Params(query="ikigai")


def test_every_parameter():
    got = params(
        max_results=3, page=2, time_range="Week", language="EN-us", safesearch="strict",
        categories="general, News", engines=["duckduckgo", "wikipedia", "duckduckgo"],
        allowed_domains=["https://Docs.Python.org/3/"], blocked_domains=["*.pinterest.com"],
    )  # fmt: skip
    assert got == sx.Params(
        query="ikigai", max_results=3, page=2, time_range="week", language="en-US",
        safesearch=2, categories=("general", "news"), engines=("duckduckgo", "wikipedia"),
        allowed=("docs.python.org",), blocked=("pinterest.com",),
    )  # fmt: skip


@pytest.mark.parametrize(("value", "expected"), [(0, 0), (1, 1), ("2", 2), ("off", 0)])
def test_safesearch_numbers_and_words(value, expected):
    assert params(safesearch=value).safesearch == expected


@pytest.mark.parametrize("language", ["all", "auto", "de", "zh-Hans-CN", "pt-br"])
def test_languages_accepted(language):
    assert str(params(language=language).language).lower() == language.lower()


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("query", "x", "2 to 400"),
        ("query", "q" * 401, "2 to 400"),
        ("max_results", 0, "1 to 20"),
        ("max_results", 21, "1 to 20"),
        ("max_results", "5", "1 to 20"),
        ("page", 0, "1 to 50"),
        ("page", 51, "1 to 50"),
        ("time_range", "hour", "day, week, month, year"),
        ("language", "english", "en-US"),
        ("safesearch", 3, "off, moderate, strict"),
        ("safesearch", True, "off, moderate, strict"),
        ("categories", [1], "comma-separated"),
        ("categories", {"a": 1}, "comma-separated"),
        ("engines", ["bad!name"], "SearXNG name"),
        ("allowed_domains", ["not a domain"], "domain name"),
        ("blocked_domains", "example.com", "array of strings"),
    ],
)
def test_invalid_input(field, value, says):
    with pytest.raises(ToolError) as caught:
        params(**{field: value})
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert f"'{field}'" in caught.value.message
    assert says in caught.value.message


# --- instance and credentials ------------------------------------------------------------


def test_instance_trailing_slash_and_path(monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", "https://example.org/searx/")
    where = sx.instance()
    assert where.endpoint == "https://example.org/searx/search"
    assert where.shown == "https://example.org/searx"
    assert where.headers == {}


def test_instance_hides_userinfo(monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", f"https://bob:{PASSWORD}@example.org")
    assert sx.instance().shown == "https://example.org"


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.org",
        "example.org",
        "https://",
        "http://[::1",
        "http://host:abc/",
        "http://host:99999",
        "http://exa mple.org",
        "http://user:secret-pw@host:abc/",
    ],
)
def test_an_unusable_instance_url_is_a_setting_error(monkeypatch, url):
    monkeypatch.setenv("SEARXNG_URL", url)
    with pytest.raises(ToolError) as caught:
        sx.instance()
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert "the setting SEARXNG_URL (or web_search.searxng.url) is" in caught.value.message
    assert "absolute http(s) URL such as https://searx.example.org" in caught.value.message
    assert "secret-pw" not in caught.value.message


def test_instance_from_credentials_file(isolated_env):
    nested = {"web_search": {"searxng": {"url": "http://127.0.0.1:8888", "auth": "tok-12345"}}}
    (isolated_env / "credentials.json").write_text(json.dumps(nested))
    where = sx.instance()
    assert where.endpoint == "http://127.0.0.1:8888/search"
    assert where.headers == {"Authorization": "Bearer tok-12345"}


@pytest.mark.parametrize(
    ("auth", "header"),
    [
        (AUTH, f"Basic {BASIC}"),
        ("just-a-token", "Bearer just-a-token"),
        ("Bearer abc.def", "Bearer abc.def"),
        ("Basic Zm9vOmJhcg==", "Basic Zm9vOmJhcg=="),
    ],
)
def test_auth_header(auth, header):
    assert sx._auth_headers(auth) == {"Authorization": header}


# --- request and output --------------------------------------------------------------------


def test_request_params():
    query = sx.request_params(
        params(page=3, time_range="day", language="de", safesearch=0,
               categories=["general", "it"], engines=["brave"]),
        "python.org",
    )  # fmt: skip
    assert query == {
        "q": "ikigai site:python.org", "format": "json", "pageno": 3, "time_range": "day",
        "language": "de", "safesearch": 0, "categories": "general,it", "engines": "brave",
    }  # fmt: skip
    assert sx.request_params(params(), None) == {"q": "ikigai", "format": "json", "pageno": 1}


def test_shape_output():
    page = sx.shape_output(BODY, 1)
    assert page.results == [
        {
            "title": "Ikigai - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Ikigai",
            "snippet": "Ikigai is a Japanese concept referring to something that gives a person "
            "a sense of purpose & a reason for living.",
            "engines": ["duckduckgo", "wikipedia", "brave"],
        },
        {
            "title": "Ikigai: A Japanese concept to improve work and life",
            "url": "https://www.bbc.com/worklife/article/20170807-ikigai",
            "snippet": "Why do Japanese people live so long?",
            "published": "2017-08-07",
            "engines": ["brave"],
        },
        {
            "title": "https://news.example.com/ikigai-study",
            "url": "https://news.example.com/ikigai-study",
            "snippet": "",
            "published": "2024-03-05",
            "engines": ["bing news"],
        },
    ]
    assert page.more
    assert page.extra["next_offset"] == 2
    assert page.extra["answers"] == ["Ikigai is a Japanese concept meaning a reason for being."]
    assert page.extra["suggestions"] == ["ikigai book", "ikigai meaning"]
    assert page.extra["infoboxes"] == [
        {
            "title": "Ikigai",
            "content": "Ikigai is a Japanese concept referring to a reason for being.",
            "url": "https://en.wikipedia.org/wiki/Ikigai",
        }
    ]
    assert page.extra["warnings"] == [
        {"code": "API_ERROR", "message": "SearXNG engines that did not answer: google (CAPTCHA)"}
    ]


def test_shape_output_old_style_answers_and_single_engine():
    body = {"results": [{"url": "https://a.test/", "title": "A", "engine": "bing"}],
            "answers": ["42"], "suggestions": [], "infoboxes": []}  # fmt: skip
    page = sx.shape_output(body, 1)
    assert page.results[0]["engines"] == ["bing"]
    assert page.extra == {"next_offset": 2, "answers": ["42"]}


@pytest.mark.parametrize(
    ("results", "estimate", "page", "more"),
    [
        (0, 0, 1, False),  # an empty page is the last one
        (10, 0, 1, True),  # no estimate: a page with results may have a successor
        (10, 8, 1, False),  # the estimate says this was all
        (10, 35, 3, True),
        (10, 0, sx.MAX_PAGE, False),
    ],
)
def test_next_offset(results, estimate, page, more):
    items = [{"url": f"https://a.test/{i}", "title": "t"} for i in range(results)]
    shaped = sx.shape_output({"results": items, "number_of_results": estimate}, page)
    assert shaped.more is more
    assert ("next_offset" in shaped.extra) is more


def test_shape_output_not_an_object():
    with pytest.raises(ToolError) as caught:
        sx.shape_output([1, 2], 1)
    assert caught.value.code is ErrorCode.API_ERROR


# --- error mapping -------------------------------------------------------------------------


def test_401_without_auth_says_set_it():
    err = sx.error_for(reply(401, NGINX_401, {"WWW-Authenticate": 'Basic realm="searx"'}), WHERE)
    assert err.code is ErrorCode.AUTH_INVALID
    assert "HTTP 401" in err.message
    assert "SEARXNG_AUTH is not set" in err.message


def test_401_with_a_login_in_the_url_says_that_login_was_rejected():
    where = sx.Instance("https://me:pw@searx.example.org/search", "https://searx.example.org", {})
    err = sx.error_for(reply(401, NGINX_401, {"WWW-Authenticate": 'Basic realm="searx"'}), where)
    assert err.code is ErrorCode.AUTH_INVALID
    assert "rejected the login in SEARXNG_URL" in err.message
    assert "is not set" not in err.message


def test_401_with_auth_says_rejected():
    err = sx.error_for(reply(401, "", {}), WHERE_AUTH)
    assert err.code is ErrorCode.AUTH_INVALID
    assert "rejected SEARXNG_AUTH" in err.message


@pytest.mark.parametrize(
    ("headers", "body"),
    [
        ({"WWW-Authenticate": "Bearer"}, "Forbidden"),
        ({}, '{"message": "invalid token"}'),
        ({}, "<html><body>Please log in to continue</body></html>"),
    ],
)
def test_403_that_is_auth(headers, body):
    err = sx.error_for(reply(403, body, headers), WHERE_AUTH)
    assert err.code is ErrorCode.AUTH_INVALID
    assert "SEARXNG_AUTH" in err.message


@pytest.mark.parametrize("body", [FORMAT_403, "", "Forbidden"])
def test_403_that_is_the_json_format_disabled(body):
    err = sx.error_for(reply(403, body, {"Content-Type": "text/html; charset=utf-8"}), WHERE)
    assert err.code is ErrorCode.API_ERROR
    assert "JSON format disabled" in err.message
    assert "formats: [html, json]" in err.message
    assert "settings.yml" in err.message


def test_429_is_rate_limit():
    err = sx.error_for(reply(429, "Too Many Requests", {"Retry-After": "30"}), WHERE)
    assert err.code is ErrorCode.RATE_LIMIT
    assert err.retry_after == 30
    assert "Try again in 30 s" in err.message
    assert "web_search_duckduckgo" in err.message
    assert err.event is not None
    assert err.event["data"]["error_type"] == "rate_limit"
    assert "web_search_duckduckgo" in err.event["data"]["alternative_tools"]


def test_400_passes_searxngs_error_through():
    err = sx.error_for(reply(400, '{"error": "Invalid value \\"xx\\" for pageno"}', {}), WHERE)
    assert err.code is ErrorCode.INVALID_INPUT
    assert 'Invalid value "xx" for pageno' in err.message


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (500, '{"error": "search error"}', "HTTP 500: search error"),
        (502, "<html><h1>502 Bad Gateway</h1></html>", "HTTP 502: 502 Bad Gateway"),
        (400, "bad request", "HTTP 400: bad request"),
        (404, "", "HTTP 404 with an empty body"),
    ],
)
def test_other_statuses_are_api_errors(status, body, says):
    err = sx.error_for(reply(status, body, {}), WHERE)
    assert err.code is ErrorCode.API_ERROR
    assert says in err.message


# --- provider calls (pytest-httpx) ---------------------------------------------------------


@pytest.fixture
def configured(monkeypatch):
    monkeypatch.setenv("SEARXNG_URL", BASE + "/")
    monkeypatch.setenv("SEARXNG_AUTH", AUTH)
    monkeypatch.setattr("ikigai_web.net.http.time.sleep", lambda _: None)


def query_of(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(str(request.url)).query).items()}


def test_execute_success(httpx_mock, configured):
    httpx_mock.add_response(json=BODY)
    out = sx.execute({"query": "ikigai", "max_results": 2, "safesearch": "moderate"}, load())
    request = httpx_mock.get_request()
    assert request.url.path == "/search"
    assert query_of(request) == {"q": "ikigai", "format": "json", "pageno": "1",
                                 "safesearch": "1"}  # fmt: skip
    assert request.headers["authorization"] == f"Basic {BASIC}"
    assert out["success"] is True
    assert out["provider"] == "searxng"
    assert out["count"] == 2
    assert [r["url"] for r in out["results"]] == [
        "https://en.wikipedia.org/wiki/Ikigai",
        "https://www.bbc.com/worklife/article/20170807-ikigai",
    ]
    assert out["next_offset"] == 2
    assert out["answers"] == ["Ikigai is a Japanese concept meaning a reason for being."]
    assert out["suggestions"] == ["ikigai book", "ikigai meaning"]
    assert len(out["infoboxes"]) == 1


def test_execute_second_call_is_cached(httpx_mock, configured):
    httpx_mock.add_response(json=BODY)
    first = sx.execute({"query": "ikigai"}, load())
    second = sx.execute({"query": "ikigai"}, load())
    assert len(httpx_mock.get_requests()) == 1
    assert second == first | {"cached": True}


def test_execute_blocked_domains_post_filter(httpx_mock, configured):
    httpx_mock.add_response(json=BODY)
    out = sx.execute({"query": "ikigai", "blocked_domains": ["wikipedia.org"]}, load())
    assert query_of(httpx_mock.get_request())["q"] == "ikigai"
    assert [r["url"] for r in out["results"]] == [
        "https://www.bbc.com/worklife/article/20170807-ikigai",
        "https://news.example.com/ikigai-study",
    ]


def test_execute_one_allowed_domain_is_native(httpx_mock, configured):
    httpx_mock.add_response(json=BODY)
    out = sx.execute({"query": "ikigai", "allowed_domains": ["bbc.com"]}, load())
    assert query_of(httpx_mock.get_request())["q"] == "ikigai site:bbc.com"
    assert [r["url"] for r in out["results"]] == [
        "https://www.bbc.com/worklife/article/20170807-ikigai"
    ]


def _per_site(request: httpx.Request) -> httpx.Response:
    site = query_of(request)["q"].rsplit("site:", 1)[1]
    if site == "broken.test":
        return httpx.Response(429, text="Too Many Requests", headers={"Retry-After": "60"})
    items = [{"url": f"https://{site}/{i}", "title": f"{site} {i}"} for i in range(5)]
    return httpx.Response(200, json={"results": items, "number_of_results": 0})


def test_execute_fan_out_over_allowed_domains(httpx_mock, configured):
    httpx_mock.add_callback(_per_site, is_reusable=True)
    out = sx.execute(
        {"query": "ikigai", "max_results": 4, "allowed_domains": ["a.test", "b.test"]}, load()
    )
    sites = sorted(query_of(r)["q"] for r in httpx_mock.get_requests())
    assert sites == ["ikigai site:a.test", "ikigai site:b.test"]
    assert [r["url"] for r in out["results"]] == [
        "https://a.test/0", "https://b.test/0", "https://a.test/1", "https://b.test/1",
    ]  # fmt: skip
    assert "warnings" not in out


def test_execute_fan_out_with_a_failed_domain(httpx_mock, configured):
    httpx_mock.add_callback(_per_site, is_reusable=True)
    out = sx.execute({"query": "ikigai", "allowed_domains": ["a.test", "broken.test"]}, load())
    assert out["success"] is True
    assert {r["url"] for r in out["results"]} <= {f"https://a.test/{i}" for i in range(5)}
    assert out["warnings"][0]["code"] == "RATE_LIMIT"
    assert out["warnings"][0]["message"].startswith("broken.test:")


@pytest.mark.parametrize(
    ("reply", "code", "says"),
    [
        (httpx.Response(401, text=NGINX_401), "AUTH_INVALID", "rejected SEARXNG_AUTH"),
        (httpx.Response(403, text=FORMAT_403), "API_ERROR", "JSON format disabled"),
        (httpx.Response(403, text="Access denied: invalid credentials"), "AUTH_INVALID",
         "SEARXNG_AUTH"),
        (httpx.Response(429, text="Too Many Requests", headers={"Retry-After": "120"}),
         "RATE_LIMIT", "limiter"),
        (httpx.Response(400, json={"error": "Invalid value"}), "INVALID_INPUT", "Invalid value"),
        (httpx.Response(500, json={"error": "search error"}), "API_ERROR", "search error"),
        (httpx.Response(200, text=LOGIN_PAGE, headers={"Content-Type": "text/html"}),
         "API_ERROR", "HTML page instead of JSON"),
        (httpx.Response(200, text="not json at all"), "API_ERROR", "not JSON"),
        (httpx.Response(200, json=[1, 2]), "API_ERROR", "not an object"),
    ],
)  # fmt: skip
def test_execute_error_mapping(httpx_mock, configured, reply, code, says):
    httpx_mock.add_response(
        status_code=reply.status_code, content=reply.content, headers=dict(reply.headers),
        is_reusable=True,
    )  # fmt: skip
    out, _ = answer(sx.execute, {"query": "ikigai"}, sx.SCHEMA)
    assert out == out | {"success": False, "error_code": code}
    assert says in out["error"]
    if code == "RATE_LIMIT":
        assert out["retry_after"] == 120


def test_execute_json_mislabelled_as_html_is_still_json(httpx_mock, configured):
    httpx_mock.add_response(content=json.dumps(BODY).encode(),
                            headers={"Content-Type": "text/html; charset=utf-8"})  # fmt: skip
    assert sx.execute({"query": "ikigai"}, load())["count"] == 3


def test_execute_network_error(httpx_mock, configured):
    httpx_mock.add_exception(httpx.ConnectError("refused"), is_reusable=True)
    with pytest.raises(ToolError) as caught:
        sx.execute({"query": "ikigai"}, load())
    assert caught.value.code is ErrorCode.NETWORK_ERROR


def test_execute_follows_redirect(httpx_mock, configured):
    moved = {"Location": "https://searx.test/search?q=ikigai&format=json&pageno=1"}
    httpx_mock.add_response(status_code=301, headers=moved)
    httpx_mock.add_response(json=BODY)
    assert sx.execute({"query": "ikigai"}, load())["success"] is True


# --- the protocol, through the installed console script ------------------------------------


def test_schema_does_not_import_httpx():
    code = (
        "import sys\nsys.argv = ['tool', '--schema']\n"
        "import ikigai_web.tools.web_search_searxng as t\n"
        "try:\n    t.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(str('httpx' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["name"] == "web_search_searxng"
    assert out.stderr == "False"


def test_invalid_input_is_reported(run_tool):
    run = run_tool(TOOL, {"query": "ikigai", "time_range": "decade"}, env={"SEARXNG_URL": BASE})
    assert run.code == 0
    assert run.json["error_code"] == "INVALID_INPUT"
    assert "'time_range' is \"decade\"" in run.json["error"]


def test_auth_missing_with_event(run_tool, isolated_env):
    run = run_tool(TOOL, {"query": "ikigai"})
    assert run.code == 0
    out = run.json
    assert out["success"] is False
    assert out["error_code"] == "AUTH_MISSING"
    assert "SEARXNG_URL" in out["error"]
    event = out["_event"]
    assert event["kind"] == "config_required"
    assert event["content"].startswith("⚠ Configuration Required\n\n")
    assert "formats: [html, json]" in event["content"]
    assert str(isolated_env / "credentials.json") in event["content"]
    assert event["data"] == {
        "tool": "web_search_searxng",
        "credentials": ["url"],
        "env": ["SEARXNG_URL"],
        "signup_url": "https://docs.searxng.org/",
    }


def test_loopback_success(run_tool, fake_server):
    fake_server.route("/searx/search", Reply(200, BODY))
    env = {"SEARXNG_URL": fake_server.url + "/searx/", "SEARXNG_AUTH": AUTH}
    run = run_tool(TOOL, {"query": "ikigai", "max_results": 1, "page": 1}, env=env)
    assert run.code == 0
    out = run.json
    assert out["success"] is True
    assert out["count"] == 1
    assert out["results"][0]["url"] == "https://en.wikipedia.org/wiki/Ikigai"
    seen = fake_server.seen[0]
    assert seen.query == {"q": ["ikigai"], "format": ["json"], "pageno": ["1"]}
    assert seen.headers["Authorization"] == f"Basic {BASIC}"


def test_loopback_format_disabled(run_tool, fake_server):
    fake_server.route(
        "/search", Reply(403, FORMAT_403, {"Content-Type": "text/html; charset=utf-8"})
    )
    run = run_tool(TOOL, {"query": "ikigai"}, env={"SEARXNG_URL": fake_server.url})
    assert run.json["error_code"] == "API_ERROR"
    assert "formats: [html, json]" in run.json["error"]


def _echo(status: int, content_type: str = "text/plain") -> Any:
    """A server that repeats the request's credentials back, as careless proxies do."""

    def reply(seen: Any) -> Reply:
        header = seen.headers.get("Authorization", "")
        decoded = base64.b64decode(header.split(" ", 1)[1]).decode() if " " in header else ""
        text = f"denied {header} for {decoded} ({PASSWORD})"
        body = json.dumps({"error": text}) if "json" in content_type else text
        if "html" in content_type:
            body = f"<html><body>{text}</body></html>"
        return Reply(status, body, {"Content-Type": content_type, "WWW-Authenticate": "Basic"})

    return reply


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(
    "reply",
    [
        _echo(400, "application/json"),
        _echo(401),
        _echo(403),
        _echo(403, "text/html"),
        _echo(429),
        _echo(500, "application/json"),
        _echo(503),
        _echo(200, "text/html"),
        _echo(200),
        None,  # nothing listening: a network error
    ],
)
def test_no_secret_in_any_output(run_tool, fake_server, reply):
    if reply is not None:
        fake_server.route("/search", reply)
    base = fake_server.url if reply is not None else _closed_port()
    env = {"SEARXNG_URL": base, "SEARXNG_AUTH": AUTH}
    run = run_tool(TOOL, {"query": "ikigai"}, env=env)
    assert run.code == 0
    assert run.json["success"] is False
    for secret in (PASSWORD, BASIC, AUTH):
        assert secret not in run.stdout + run.stderr


def test_bearer_token_never_printed(run_tool, fake_server):
    token = "sx-bearer-" + PASSWORD
    fake_server.route("/search", lambda seen: Reply(401, f"bad {seen.headers['Authorization']}"))
    run = run_tool(TOOL, {"query": "ikigai"}, env={"SEARXNG_URL": fake_server.url,
                                                   "SEARXNG_AUTH": token})  # fmt: skip
    assert run.json["error_code"] == "AUTH_INVALID"
    assert token not in run.stdout + run.stderr


def test_fixture_is_not_mutated():
    before = copy.deepcopy(BODY)
    sx.shape_output(BODY, 1)
    assert before == BODY
