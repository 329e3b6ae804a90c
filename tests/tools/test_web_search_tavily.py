"""web-search-tavily-tool: input, request, output shape, error mapping, protocol, no leaks."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from typing import Any

import httpx
import pytest
from conftest import Reply, reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.common.settings import load
from ikigai_web.tools import web_search_tavily as tv

TOOL = "web-search-tavily-tool"
URL = "https://api.tavily.com/search"
KEY = "tvly-dev-LEAKCANARY-8d1f3b2a9c7e"  # distinctive: must never appear in any output

# Shaped like Tavily's documented /search answer (docs.tavily.com, API reference).
BODY: dict[str, Any] = {
    "query": "Who is Leo Messi?",
    "follow_up_questions": None,
    "answer": "Lionel Messi, born in 1987, is an Argentine footballer widely regarded as one "
    "of the greatest players of his generation.",
    "images": [],
    "results": [
        {
            "title": "Lionel Messi Facts | Britannica",
            "url": "https://www.britannica.com/facts/Lionel-Messi",
            "content": "Lionel Messi, an Argentine footballer, is widely regarded as one of "
            "the greatest football players of his generation.",
            "score": 0.81025416,
            "raw_content": None,
        },
        {
            "title": "Messi signs new deal &amp; stays",
            "url": "https://www.espn.com/soccer/story/_/id/123/messi",
            "content": "Inter Miami <b>confirmed</b> on Sunday...",
            "score": 0.7002,
            "published_date": "Sun, 15 Sep 2024 10:04:00 GMT",
            "raw_content": None,
        },
        {
            "title": "Lionel Messi - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Lionel_Messi",
            "content": "Lionel Andrés Messi is an Argentine professional footballer.",
            "score": 0.65,
            "published_date": "2025-01-02",
            "raw_content": None,
        },
        {"title": "no url", "content": "x", "score": 0.1},
    ],
    "response_time": 1.67,
    "request_id": "123e4567-e89b-12d3-a456-426614174111",
}
# Tavily's documented `country` enum (docs.tavily.com integrations page, search schema).
TAVILY_ENUM = [
    "afghanistan", "albania", "algeria", "andorra", "angola", "argentina", "armenia",
    "australia", "austria", "azerbaijan", "bahamas", "bahrain", "bangladesh", "barbados",
    "belarus", "belgium", "belize", "benin", "bhutan", "bolivia", "bosnia and herzegovina",
    "botswana", "brazil", "brunei", "bulgaria", "burkina faso", "burundi", "cambodia",
    "cameroon", "canada", "cape verde", "central african republic", "chad", "chile", "china",
    "colombia", "comoros", "congo", "costa rica", "croatia", "cuba", "cyprus", "czech republic",
    "denmark", "djibouti", "dominican republic", "ecuador", "egypt", "el salvador",
    "equatorial guinea", "eritrea", "estonia", "ethiopia", "fiji", "finland", "france", "gabon",
    "gambia", "georgia", "germany", "ghana", "greece", "guatemala", "guinea", "haiti",
    "honduras", "hungary", "iceland", "india", "indonesia", "iran", "iraq", "ireland", "israel",
    "italy", "jamaica", "japan", "jordan", "kazakhstan", "kenya", "kuwait", "kyrgyzstan",
    "latvia", "lebanon", "lesotho", "liberia", "libya", "liechtenstein", "lithuania",
    "luxembourg", "madagascar", "malawi", "malaysia", "maldives", "mali", "malta", "mauritania",
    "mauritius", "mexico", "moldova", "monaco", "mongolia", "montenegro", "morocco",
    "mozambique", "myanmar", "namibia", "nepal", "netherlands", "new zealand", "nicaragua",
    "niger", "nigeria", "north korea", "north macedonia", "norway", "oman", "pakistan",
    "panama", "papua new guinea", "paraguay", "peru", "philippines", "poland", "portugal",
    "qatar", "romania", "russia", "rwanda", "saudi arabia", "senegal", "serbia", "singapore",
    "slovakia", "slovenia", "somalia", "south africa", "south korea", "south sudan", "spain",
    "sri lanka", "sudan", "sweden", "switzerland", "syria", "taiwan", "tajikistan", "tanzania",
    "thailand", "togo", "trinidad and tobago", "tunisia", "turkey", "turkmenistan", "uganda",
    "ukraine", "united arab emirates", "united kingdom", "united states", "uruguay",
    "uzbekistan", "venezuela", "vietnam", "yemen", "zambia", "zimbabwe",
]  # fmt: skip


def detail(message: str) -> dict[str, Any]:
    return {"detail": {"error": message}}


PLAN_LIMIT = (
    "This request exceeds your plan's set usage limit. Please upgrade your plan or contact "
    "support@tavily.com"
)
PAYGO_LIMIT = (
    "This request exceeds the pay-as-you-go limit. You can increase your limit on the Tavily "
    "dashboard."
)


def params(**raw: Any) -> tv.Params:
    return tv.parse_input({"query": "Who is Leo Messi?"} | raw)


# --- input -------------------------------------------------------------------------------


def test_defaults():
    assert params() == tv.Params(query="Who is Leo Messi?")
    assert params().max_results == 5


def test_every_parameter():
    got = params(
        max_results=20, search_depth="Advanced", topic="general", time_range="week",
        allowed_domains=["https://www.ESPN.com/soccer", "fifa.com"],
        blocked_domains=["*.reddit.com"], include_answer=True, country="gb",
    )  # fmt: skip
    assert got == tv.Params(
        query="Who is Leo Messi?", max_results=20, search_depth="advanced", topic="general",
        time_range="week", allowed=("www.espn.com", "fifa.com"), blocked=("reddit.com",),
        include_answer=True, country="united kingdom",
    )  # fmt: skip


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("US", "united states"),
        ("de", "germany"),
        ("United States", "united states"),
        ("united_states", "united states"),
        ("south-korea", "south korea"),
        ("UK", "united kingdom"),
        ("Czechia", "czech republic"),
        ("  japan ", "japan"),
    ],
)
def test_country_codes_names_and_aliases(value, expected):
    assert params(country=value).country == expected


def test_country_table_matches_tavilys_documented_list():
    assert sorted(tv.COUNTRIES.values()) == sorted(TAVILY_ENUM)
    assert all(len(code) == 2 and code.isupper() for code in tv.COUNTRIES)


@pytest.mark.parametrize(
    ("raw", "field", "says"),
    [
        ({"query": "x"}, "query", "2 to 400"),
        ({"query": "q" * 401}, "query", "2 to 400"),
        ({"max_results": 0}, "max_results", "1 to 20"),
        ({"max_results": 21}, "max_results", "1 to 20"),
        ({"search_depth": "deep"}, "search_depth", "basic, advanced"),
        ({"topic": "sports"}, "topic", "general, news, finance"),
        ({"time_range": "decade"}, "time_range", "day, week, month, year"),
        ({"include_answer": "yes"}, "include_answer", "true or false"),
        ({"country": "XX"}, "country", "two-letter ISO 3166 code"),
        ({"country": "atlantis"}, "country", "166 countries"),
        ({"country": "us", "topic": "news"}, "country", "only works with topic general"),
        ({"allowed_domains": ["bad domain"]}, "allowed_domains", "domain name"),
        ({"blocked_domains": [1]}, "blocked_domains", "array of strings"),
    ],
)
def test_invalid_input(raw, field, says):
    with pytest.raises(ToolError) as caught:
        params(**raw)
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert f"'{field}'" in caught.value.message
    assert says in caught.value.message


# --- request and output --------------------------------------------------------------------


def test_request_body_minimal():
    assert tv.request_body(params(), 5) == {
        "query": "Who is Leo Messi?",
        "max_results": 5,
        "include_answer": False,
        "include_raw_content": False,
        "include_images": False,
    }


def test_request_body_full():
    body = tv.request_body(
        params(search_depth="advanced", topic="news", time_range="day", include_answer=True,
               allowed_domains=["espn.com", "fifa.com"], blocked_domains=["reddit.com"]),
        7,
    )  # fmt: skip
    assert body == {
        "query": "Who is Leo Messi?", "max_results": 7, "include_answer": True,
        "include_raw_content": False, "include_images": False, "search_depth": "advanced",
        "topic": "news", "time_range": "day", "include_domains": ["espn.com", "fifa.com"],
        "exclude_domains": ["reddit.com"],
    }  # fmt: skip


def test_request_body_country():
    assert tv.request_body(params(country="FR"), 5)["country"] == "france"


def test_shape_output():
    page = tv.shape_output(BODY, include_answer=True)
    assert page.results == [
        {
            "title": "Lionel Messi Facts | Britannica",
            "url": "https://www.britannica.com/facts/Lionel-Messi",
            "snippet": "Lionel Messi, an Argentine footballer, is widely regarded as one of the "
            "greatest football players of his generation.",
            "score": 0.8103,
        },
        {
            "title": "Messi signs new deal & stays",
            "url": "https://www.espn.com/soccer/story/_/id/123/messi",
            "snippet": "Inter Miami confirmed on Sunday...",
            "published": "2024-09-15",
            "score": 0.7002,
        },
        {
            "title": "Lionel Messi - Wikipedia",
            "url": "https://en.wikipedia.org/wiki/Lionel_Messi",
            "snippet": "Lionel Andrés Messi is an Argentine professional footballer.",
            "published": "2025-01-02",
            "score": 0.65,
        },
    ]
    assert page.extra == {"answer": BODY["answer"]}
    assert page.more is False


def test_answer_only_when_asked():
    assert tv.shape_output(BODY, include_answer=False).extra == {}
    assert tv.shape_output(BODY | {"answer": None}, include_answer=True).extra == {}


@pytest.mark.parametrize("value", ["", "yesterday", "Mon, 99 Foo 2024", None, 17])
def test_unreadable_published_date_is_left_out(value):
    assert tv._published(value) is None


def test_shape_output_not_an_object():
    with pytest.raises(ToolError) as caught:
        tv.shape_output("oops", include_answer=False)
    assert caught.value.code is ErrorCode.API_ERROR


# --- error mapping -------------------------------------------------------------------------


def test_401_is_auth_invalid_with_event():
    err = tv.error_for(reply(401, detail("Unauthorized: missing or invalid API key.")))
    assert err.code is ErrorCode.AUTH_INVALID
    assert "HTTP 401: Unauthorized: missing or invalid API key." in err.message
    assert "TAVILY_API_KEY" in err.message
    assert err.event is not None
    assert err.event["kind"] == "config_required"
    assert err.event["data"]["error_type"] == "auth_invalid"
    assert err.event["data"]["env"] == ["TAVILY_API_KEY"]


def test_403_is_auth_invalid():
    assert tv.error_for(reply(403, detail("Forbidden"))).code is ErrorCode.AUTH_INVALID


def test_429_is_rate_limit_with_retry_after():
    said = "Your request has been blocked due to excessive requests."
    err = tv.error_for(reply(429, detail(said), {"Retry-After": str(20)}))
    assert err.code is ErrorCode.RATE_LIMIT
    assert err.retry_after == 20
    assert said in err.message
    assert "Try again in 20 s" in err.message
    assert err.event is not None
    assert err.event["data"]["error_type"] == "rate_limit"
    assert "web_search_duckduckgo" in err.event["data"]["alternative_tools"]


@pytest.mark.parametrize(
    ("status", "body"),
    [(432, detail(PLAN_LIMIT)), (433, detail(PAYGO_LIMIT)), (432, ""), (429, detail(PLAN_LIMIT)),
     (403, detail(PLAN_LIMIT))],
)  # fmt: skip
def test_plan_limits_are_rate_limit(status, body):
    err = tv.error_for(reply(status, body))
    assert err.code is ErrorCode.RATE_LIMIT
    assert "upgrade the plan or raise the limit" in err.message
    assert err.retry_after is None


def test_400_with_detail_is_invalid_input():
    said = "Query is too long. Max query length is 400 characters."
    err = tv.error_for(reply(400, detail(said)))
    assert err.code is ErrorCode.INVALID_INPUT
    assert said in err.message


def test_422_validation_list_is_invalid_input():
    body = {"detail": [{"loc": ["body", "max_results"], "msg": "Input should be <= 20",
                        "type": "less_than_equal"}]}  # fmt: skip
    err = tv.error_for(reply(422, body))
    assert err.code is ErrorCode.INVALID_INPUT
    assert "max_results: Input should be <= 20" in err.message


@pytest.mark.parametrize(
    ("status", "body", "says"),
    [
        (400, "", "HTTP 400 with an empty body."),
        (500, "Internal Server Error", "HTTP 500: Internal Server Error"),
        (502, "<html><h1>502 Bad Gateway</h1></html>", "HTTP 502: 502 Bad Gateway"),
        (503, {"detail": {"message": "down for maintenance"}}, "down for maintenance"),
    ],
)
def test_other_errors_are_api_errors(status, body, says):
    err = tv.error_for(reply(status, body))
    assert err.code is ErrorCode.API_ERROR
    assert says in err.message


# --- provider calls (pytest-httpx) ---------------------------------------------------------


@pytest.fixture
def configured(monkeypatch):
    monkeypatch.setenv("TAVILY_API_KEY", KEY)
    monkeypatch.setattr("ikigai_web.net.http.time.sleep", lambda _: None)


def test_execute_sends_the_documented_request(httpx_mock, configured):
    httpx_mock.add_response(url=URL, method="POST", json=BODY)
    out = tv.execute(
        {"query": "Who is Leo Messi?", "include_answer": True, "country": "AR"}, load()
    )
    request = httpx_mock.get_request()
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content) == {
        "query": "Who is Leo Messi?", "max_results": 5, "include_answer": True,
        "include_raw_content": False, "include_images": False, "country": "argentina",
    }  # fmt: skip
    assert out["success"] is True
    assert out["provider"] == "tavily"
    assert out["count"] == 3
    assert out["answer"] == BODY["answer"]
    assert "next_offset" not in out


def test_endpoint_override(httpx_mock, configured, monkeypatch):
    monkeypatch.setenv("TAVILY_API_URL", "https://gateway.test/tavily/search")
    httpx_mock.add_response(url="https://gateway.test/tavily/search", json=BODY)
    assert tv.execute({"query": "messi"}, load())["success"] is True


def test_domains_are_native_and_post_filtered(httpx_mock, configured):
    httpx_mock.add_response(json=BODY)
    out = tv.execute(
        {"query": "messi", "max_results": 10, "allowed_domains": ["britannica.com", "espn.com"],
         "blocked_domains": ["www.espn.com"]}
    , load())  # fmt: skip
    sent = json.loads(httpx_mock.get_request().content)  # one request: no fan-out
    assert sent["include_domains"] == ["britannica.com", "espn.com"]
    assert sent["exclude_domains"] == ["www.espn.com"]
    assert [r["url"] for r in out["results"]] == ["https://www.britannica.com/facts/Lionel-Messi"]


@pytest.mark.parametrize(
    ("status", "body", "headers", "code", "says"),
    [
        (401, detail("Unauthorized: missing or invalid API key."), {}, "AUTH_INVALID",
         "TAVILY_API_KEY"),
        (429, detail("Your request has been blocked due to excessive requests."),
         {"Retry-After": "45"}, "RATE_LIMIT", "Try again in 45 s"),
        (432, detail(PLAN_LIMIT), {}, "RATE_LIMIT", "plan's set usage limit"),
        (433, detail(PAYGO_LIMIT), {}, "RATE_LIMIT", "pay-as-you-go"),
        (400, detail("Invalid topic. Must be 'general', 'news' or 'finance'."), {},
         "INVALID_INPUT", "Invalid topic"),
        (500, "Internal Server Error", {"Content-Type": "text/plain"}, "API_ERROR", "HTTP 500"),
        (200, "<html>maintenance</html>", {"Content-Type": "text/html"}, "API_ERROR",
         "not JSON"),
        (200, [], {}, "API_ERROR", "not an object"),
    ],
)  # fmt: skip
def test_execute_error_mapping(httpx_mock, configured, status, body, headers, code, says):
    content = body.encode() if isinstance(body, str) else json.dumps(body).encode()
    httpx_mock.add_response(status_code=status, content=content, headers=headers,
                            is_reusable=True)  # fmt: skip
    out, _ = answer(tv.execute, {"query": "messi"}, tv.SCHEMA)
    assert out["success"] is False
    assert out["error_code"] == code
    assert says in out["error"]
    if status == 429:
        assert out["retry_after"] == 45


def test_execute_network_error(httpx_mock, configured):
    httpx_mock.add_exception(httpx.ConnectError("refused"), is_reusable=True)
    out, _ = answer(tv.execute, {"query": "messi"}, tv.SCHEMA)
    assert out["error_code"] == "NETWORK_ERROR"


# --- the protocol, through the installed console script ------------------------------------


def test_schema_does_not_import_httpx():
    code = (
        "import sys\nsys.argv = ['tool', '--schema']\n"
        "import ikigai_web.tools.web_search_tavily as t\n"
        "try:\n    t.main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(str('httpx' in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["name"] == "web_search_tavily"
    assert out.stderr == "False"


def test_invalid_input_is_reported(run_tool):
    run = run_tool(TOOL, {"query": "messi", "max_results": 50}, env={"TAVILY_API_KEY": KEY})
    assert run.code == 0
    assert run.json["error_code"] == "INVALID_INPUT"
    assert "'max_results' is 50" in run.json["error"]


def test_auth_missing_with_event(run_tool, isolated_env):
    run = run_tool(TOOL, {"query": "messi"})
    assert run.code == 0
    out = run.json
    assert out["error_code"] == "AUTH_MISSING"
    assert "TAVILY_API_KEY" in out["error"]
    event = out["_event"]
    assert event["kind"] == "config_required"
    assert "TAVILY_API_KEY" in event["content"]
    assert str(isolated_env / "credentials.json") in event["content"]
    assert event["data"] == {
        "tool": "web_search_tavily",
        "credentials": ["api_key"],
        "env": ["TAVILY_API_KEY"],
        "signup_url": "https://app.tavily.com/",
    }


def test_loopback_search_with_key_from_credentials_file(run_tool, fake_server, isolated_env):
    nested = {"web_search": {"tavily": {"api_key": KEY}}}
    (isolated_env / "credentials.json").write_text(json.dumps(nested))
    url = fake_server.route("/search", Reply(200, BODY))
    run = run_tool(TOOL, {"query": "messi", "max_results": 2}, env={"TAVILY_API_URL": url})
    out = run.json
    assert out["success"] is True
    assert out["count"] == 2
    seen = fake_server.seen[0]
    assert seen.method == "POST"
    assert seen.headers["Authorization"] == f"Bearer {KEY}"
    assert json.loads(seen.body)["max_results"] == 2


def _echo(status: int, content_type: str = "application/json") -> Any:
    """A server that repeats the request's key back in its error text."""

    def reply(seen: Any) -> Reply:
        text = f"bad key {seen.headers.get('Authorization', '')} ({KEY})"
        if "json" in content_type:
            return Reply(status, detail(text), {"Content-Type": content_type})
        return Reply(status, text, {"Content-Type": content_type})

    return reply


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/search"


@pytest.mark.parametrize(
    "reply",
    [
        _echo(400),
        _echo(401),
        _echo(403),
        _echo(422),
        _echo(429),
        _echo(432),
        _echo(433),
        _echo(500, "text/plain"),
        _echo(200, "text/html"),
        None,  # nothing listening: a network error
    ],
)
def test_key_never_appears_in_any_output(run_tool, fake_server, reply):
    url = fake_server.route("/search", reply) if reply is not None else _closed_port()
    run = run_tool(TOOL, {"query": "messi"}, env={"TAVILY_API_KEY": KEY, "TAVILY_API_URL": url})
    assert run.code == 0
    assert run.json["success"] is False
    assert KEY not in run.stdout + run.stderr


def test_key_echoed_at_the_cut_of_an_error_detail_never_leaks(httpx_mock, configured):
    detail = "x" * 290 + KEY  # the cut at 300 characters falls inside the key
    httpx_mock.add_response(status_code=400, json={"detail": {"error": detail}})
    with pytest.raises(ToolError) as info:
        tv.execute({"query": "ikigai"}, load())
    assert KEY[:8] not in info.value.message
