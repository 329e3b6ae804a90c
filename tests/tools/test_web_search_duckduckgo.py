"""web-search-duckduckgo-tool: parsing both pages, the form post, fallback, blocking, process.

The fixtures in fixtures/duckduckgo/ follow DuckDuckGo's real markup: the html page's
`div.result` cards (ads with `result--ad` and `/y.js` links, the zero-click box, the "Next"
form), its no-results card, the `challenge-form` / `anomaly-modal` bot check, and the lite
page's table rows (`a.result-link`, `td.result-snippet`, `span.link-text`, sponsored rows).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest
from conftest import Reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.tools import web_search_duckduckgo as ddg

FIXTURES = Path(__file__).parents[1] / "fixtures" / "duckduckgo"
TOOL = "web-search-duckduckgo-tool"
HTML = ddg.HTML_URL
LITE = ddg.LITE_URL
KEYED = ("web_search_brave", "web_search_google", "web_search_tavily", "web_search_searxng")
HTML_TYPE = {"Content-Type": "text/html; charset=UTF-8"}


def page(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def swap(name: str, old: str, new: str) -> bytes:
    text = page(name).decode()
    assert old in text
    return text.replace(old, new).encode()


def call(**raw: Any) -> dict[str, Any]:
    """The tool's JSON answer, success or failure, without a subprocess."""
    return answer(ddg.execute, {"query": "what is ikigai"} | raw, ddg.SCHEMA)[0]


def form(request: httpx.Request) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request.content.decode(), keep_blank_values=True).items()}


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr(ddg, "PAGE_PAUSE", 0.0)
    monkeypatch.setattr("ikigai_web.net.http._JITTER", (0.0, 0.0))


# --- parsing the html page ---------------------------------------------------------------


def test_html_results_page():
    parsed = ddg.parse_html(page("html_results.html"))
    assert parsed.kind == "results"
    assert len(parsed.results) == 10
    assert parsed.results[0] == {
        "title": "Ikigai - Wikipedia",
        "url": "https://en.wikipedia.org/wiki/Ikigai",
        "snippet": "Ikigai (生き甲斐, lit. 'a reason for being') is a Japanese concept referring "
        "to something that gives a person a sense of purpose, a reason for living.",
        "published": "2025-09-14",
    }
    assert parsed.results[1]["snippet"].endswith("what the world needs & what you can be paid for.")
    assert "published" not in parsed.results[1]


def test_redirects_are_decoded_exactly_once():
    urls = [r["url"] for r in ddg.parse_html(page("html_results.html")).results]
    assert all("duckduckgo.com" not in u for u in urls)
    # The target itself is percent-encoded; decoding it twice would break it.
    assert "https://ja.wikipedia.org/wiki/%E7%94%9F%E3%81%8D%E7%94%B2%E6%96%90" in urls


def test_ads_and_zero_click_box_are_not_results():
    titles = [r["title"] for r in ddg.parse_html(page("html_results.html")).results]
    assert "Find Your Purpose - Courses on Ikigai" not in titles
    assert "Ikigai" not in titles  # the zero-click heading


def test_ad_is_dropped_by_its_class_alone():
    body = swap(
        "html_results.html",
        'href="https://duckduckgo.com/y.js?ad_domain=coursera.org',
        'href="//duckduckgo.com/l/?uddg=https%3A%2F%2Fwww.coursera.org%2F&amp;x=',
    )
    titles = [r["title"] for r in ddg.parse_html(body).results]
    assert "Find Your Purpose - Courses on Ikigai" not in titles


def test_ad_is_dropped_by_its_link_alone():
    body = swap("html_results.html", "result--ad  result--ad--small", "web-result")
    parsed = ddg.parse_html(body)
    assert len(parsed.results) == 10
    assert all("coursera" not in r["url"] for r in parsed.results)


def test_text_is_decoded_once_and_markup_only_removed():
    body = swap(
        "html_results.html",
        "The concept of <b>ikigai</b> has been linked",
        "Use &lt;div&gt; and &amp;amp; with <b>flex</b>; it has been linked",
    )
    snippets = [r["snippet"] for r in ddg.parse_html(body).results]
    assert "Use <div> and &amp; with flex; it has been linked to longevity" in snippets[3]


def test_next_form_is_read_from_the_page():
    parsed = ddg.parse_html(page("html_results.html"))
    assert parsed.next_form == {
        "q": "what is ikigai",
        "s": "10",
        "nextParams": "",
        "v": "l",
        "o": "json",
        "dc": "11",
        "api": "d.js",
        "vqd": "4-139874163218094727302167958718063429157",
        "kl": "wt-wt",
    }
    assert ddg.parse_html(page("html_results_last_page.html")).next_form is None


def test_no_results_page_is_empty_not_unusable():
    assert ddg.parse_html(page("html_no_results.html")) == ddg.Parsed("empty")


def test_older_no_results_marker():
    body = b'<html><body><div id="links" class="results"><div class="no-results">No  results.</div>'
    assert ddg.parse_html(body + b"</div></body></html>").kind == "empty"


def test_challenge_form():
    assert ddg.parse_html(page("challenge.html")).kind == "challenge"


def test_anomaly_modal_without_the_form():
    body = swap("challenge.html", 'id="challenge-form"', 'id="form"')
    assert ddg.parse_html(body).kind == "challenge"


def test_bot_text_alone():
    body = b"<html><body><p>Unfortunately, bots use DuckDuckGo too.</p></body></html>"
    assert ddg.parse_html(body).kind == "challenge"


def test_bot_sentence_in_a_result_is_not_a_challenge():
    body = swap(
        "html_results.html",
        "The concept of <b>ikigai</b> has been linked",
        "Unfortunately, bots use DuckDuckGo too. The concept has been linked",
    )
    assert ddg.parse_html(body).kind == "results"


@pytest.mark.parametrize(
    "body", [b"", b"   ", b"<html><body><p>We'll be back soon.</p></body></html>", b"\x00\x01"]
)
def test_unusable_pages(body):
    assert ddg.parse_html(body).kind == "unusable"
    assert ddg.parse_lite(body).kind == "unusable"


@pytest.mark.parametrize(
    ("href", "expected"),
    [
        (
            "//duckduckgo.com/l/?uddg=https%3A%2F%2Fexample.com%2Fa%3Fb%3D1%26c%3D2&rut=ff",
            "https://example.com/a?b=1&c=2",
        ),
        ("/l/?kh=-1&uddg=https%3A%2F%2Fexample.org%2F", "https://example.org/"),
        ("https://duckduckgo.com/l/?uddg=http%3A%2F%2Fexample.net%2Fx", "http://example.net/x"),
        ("https://example.com/direct", "https://example.com/direct"),
        ("https://duckduckgo.com/y.js?ad_domain=x.com&u3=https%3A%2F%2Fbing.com", None),
        ("//duckduckgo.com/l/?rut=ff", None),
        ("//duckduckgo.com/l/?uddg=javascript%3Aalert(1)", None),
        ("/html/?q=ikigai", None),
        ("javascript:alert(1)", None),
        ("mailto:a@example.com", None),
        ("", None),
    ],
)
def test_target(href, expected):
    assert ddg.target(href) == expected


# --- parsing the lite page ---------------------------------------------------------------


def test_lite_results_page():
    parsed = ddg.parse_lite(page("lite_results.html"))
    assert parsed.kind == "results"
    assert [r["url"] for r in parsed.results] == [
        "https://en.wikipedia.org/wiki/Ikigai",
        "https://www.psychologytoday.com/us/blog/the-art-of-now/202409/what-is-ikigai",
        "https://www.healthline.com/health/ikigai",
    ]
    assert parsed.results[0]["published"] == "2025-09-14"
    assert parsed.results[2] == {
        "title": "Ikigai: Finding Your Reason for Being - Healthline",
        "url": "https://www.healthline.com/health/ikigai",
        "snippet": "Ikigai combines the Japanese words iki (to live) and gai (reason).",
    }
    assert parsed.next_form is not None
    assert parsed.next_form["s"] == "10"
    assert parsed.next_form["vqd"].startswith("4-")


def test_lite_sponsored_row_is_dropped_even_with_a_plain_link():
    body = swap(
        "lite_results.html", 'href="https://duckduckgo.com/y.js?', 'href="https://ads.example/?'
    )
    urls = [r["url"] for r in ddg.parse_lite(body).results]
    assert len(urls) == 3
    assert not any("ads.example" in u for u in urls)


def test_lite_result_without_snippet_row():
    body = b"""<html><body><table border="0">
      <tr><td valign="top">1.&nbsp;</td><td><a rel="nofollow"
        href="https://example.com/a" class='result-link'>First</a></td></tr>
      <tr><td valign="top">2.&nbsp;</td><td><a rel="nofollow"
        href="https://example.com/b" class='result-link'>Second</a></td></tr>
      <tr><td>&nbsp;&nbsp;&nbsp;</td><td class='result-snippet'>About b.</td></tr>
    </table></body></html>"""
    results = ddg.parse_lite(body).results
    assert [(r["title"], r["snippet"]) for r in results] == [("First", ""), ("Second", "About b.")]


def test_lite_no_results_and_challenge():
    assert ddg.parse_lite(page("lite_no_results.html")) == ddg.Parsed("empty")
    assert ddg.parse_lite(page("challenge.html")).kind == "challenge"


# --- parse_input and the form -------------------------------------------------------------


def parse(**raw: Any) -> ddg.Params:
    return ddg.parse_input({"query": "what is ikigai"} | raw)


def bad(**raw: Any) -> str:
    with pytest.raises(ToolError) as info:
        parse(**raw)
    assert info.value.code is ErrorCode.INVALID_INPUT
    return info.value.message


def test_defaults():
    assert parse() == ddg.Params(query="what is ikigai")


def test_all_parameters():
    params = parse(
        max_results=25,
        time_filter="Week",
        region="DE-de",
        safesearch="off",
        allowed_domains=["https://Example.com/x"],
        blocked_domains=["*.spam.net"],
    )
    assert params == ddg.Params(
        "what is ikigai", 25, "w", "de-de", "-2", ("example.com",), ("spam.net",)
    )


@pytest.mark.parametrize(
    ("word", "df"), [("day", "d"), ("week", "w"), ("month", "m"), ("year", "y")]
)
def test_time_filter(word, df):
    assert parse(time_filter=word).time_filter == df


@pytest.mark.parametrize(("word", "kp"), [("strict", "1"), ("moderate", "-1"), ("off", "-2")])
def test_safesearch(word, kp):
    assert parse(safesearch=word).safesearch == kp


@pytest.mark.parametrize("region", ["us-en", "wt-wt", "tw-tzh", "UK-EN"])
def test_good_regions(region):
    assert parse(region=region).region == region.lower()


def test_query_limits():
    assert parse(query="x" * 499).query == "x" * 499
    assert "2 to 499" in bad(query="x" * 500)
    assert "2 to 499" in bad(query=" a ")


@pytest.mark.parametrize(
    ("raw", "needles"),
    [
        ({"max_results": 0}, ("'max_results' is 0", "1 to 25")),
        ({"max_results": 26}, ("'max_results' is 26", "1 to 25")),
        ({"max_results": "ten"}, ("'max_results'", "integer")),
        ({"time_filter": "hour"}, ("'time_filter' is \"hour\"", "day, week, month, year")),
        ({"safesearch": "on"}, ("'safesearch' is \"on\"", "strict, moderate, off")),
        ({"region": "english"}, ("'region' is \"english\"", "us-en")),
        ({"region": "us_en"}, ("'region' is \"us_en\"", "wt-wt")),
        ({"region": 7}, ("'region' is 7", "string")),
        ({"allowed_domains": ["not a domain"]}, ("'allowed_domains'", "domain name")),
        ({"blocked_domains": "spam.net"}, ("'blocked_domains'", "array of strings")),
    ],
)
def test_invalid_values(raw, needles):
    message = bad(**raw)
    for needle in needles:
        assert needle in message


def test_query_must_leave_room_for_site():
    message = bad(query="x" * 490, allowed_domains=["example.com"])
    assert "'query'" in message
    assert "at most 482 characters" in message


def test_form_data_html_and_lite():
    params = parse(
        region="us-en", time_filter="day", safesearch="strict", blocked_domains=["a.com"]
    )
    assert ddg.form_data(params, "example.com") == {
        "q": "what is ikigai site:example.com -site:a.com",
        "b": "",
        "kl": "us-en",
        "df": "d",
        "kp": "1",
    }
    assert ddg.form_data(params, None, lite=True) == {
        "q": "what is ikigai -site:a.com",
        "kl": "us-en",
        "df": "d",
        "kp": "1",
    }
    assert ddg.form_data(parse(), None) == {"q": "what is ikigai", "b": ""}


def test_exclusions_are_left_to_the_post_filter_past_the_limit():
    params = parse(query="x" * 490, blocked_domains=["spam.net"])
    assert ddg.build_query(params, None) == "x" * 490


@pytest.mark.parametrize(
    ("region", "expected"),
    [
        (None, "en-US,en;q=0.9"),
        ("wt-wt", "en-US,en;q=0.9"),
        ("uk-en", "en-GB,en;q=0.9"),
        ("de-de", "de-DE,de;q=0.9,en;q=0.8"),
        ("tw-tzh", "en-US,en;q=0.9"),
    ],
)
def test_accept_language(region, expected):
    assert ddg.accept_language(region) == expected


# --- the request and its answers ------------------------------------------------------------


def test_search_posts_a_browser_form(httpx_mock):
    httpx_mock.add_response(url=HTML, method="POST", content=page("html_results.html"))
    out = call(max_results=3, region="de-de", time_filter="week", safesearch="off")
    assert out["success"] is True
    assert out["provider"] == "duckduckgo"
    assert out["count"] == 3
    assert out["results"] == ddg.parse_html(page("html_results.html")).results[:3]
    (request,) = httpx_mock.get_requests()
    assert form(request) == {"q": "what is ikigai", "b": "", "kl": "de-de", "df": "w", "kp": "-2"}
    assert request.headers["User-Agent"] == ddg.BROWSER_USER_AGENT
    assert request.headers["Accept-Language"] == "de-DE,de;q=0.9,en;q=0.8"
    assert request.headers["Referer"] == "https://html.duckduckgo.com/"
    assert request.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert request.headers["Accept"].startswith("text/html")


def test_ikigai_user_agent_setting_does_not_apply(httpx_mock, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_USER_AGENT", "my-agent/1.0")
    httpx_mock.add_response(url=HTML, content=page("html_no_results.html"))
    assert call()["success"] is True
    assert httpx_mock.get_requests()[0].headers["User-Agent"] == ddg.BROWSER_USER_AGENT


def test_endpoint_override(httpx_mock, monkeypatch):
    monkeypatch.setenv("DUCKDUCKGO_HTML_URL", "https://mirror.example/html/")
    httpx_mock.add_response(url="https://mirror.example/html/", content=page("html_results.html"))
    assert call(max_results=1)["count"] == 1


def test_no_results_is_success(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_no_results.html"))
    out = call(query="xqzvyk ikigai plorptangle")
    assert out == {"success": True, "provider": "duckduckgo", "results": [], "count": 0}
    assert len(httpx_mock.get_requests()) == 1


@pytest.mark.parametrize("status", [202, 403, 418, 429])
def test_blocking_status_is_rate_limit(httpx_mock, status):
    httpx_mock.add_response(url=HTML, status_code=status, content=page("challenge.html"))
    out = call()
    assert out["success"] is False
    assert out["error_code"] == "RATE_LIMIT"
    assert "blocking automated requests from this address" in out["error"]
    assert f"HTTP {status}" in out["error"]
    for tool in KEYED:
        assert tool in out["error"]
    assert "retry_after" not in out
    assert "_event" not in out
    assert len(httpx_mock.get_requests()) == 1  # lite shares the bot check: not tried


def test_challenge_page_with_200_is_rate_limit(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("challenge.html"))
    out = call()
    assert out["error_code"] == "RATE_LIMIT"
    assert "bot challenge" in out["error"]


ANOMALY = (
    b"<!DOCTYPE html><html><head><title>DuckDuckGo</title></head><body>"
    b"<script>DDG.deep.anomalyDetectionBlock({'cc': 'botnet'});</script>"
    b"<div class='nothing'>Loading...</div></body></html>"
)


def test_the_anomaly_page_is_rate_limit(httpx_mock):
    httpx_mock.add_response(url=HTML, content=ANOMALY)
    out = call()
    assert out["error_code"] == "RATE_LIMIT"
    assert "anomaly-detection page" in out["error"]
    assert len(httpx_mock.get_requests()) == 1  # not unusable: the lite page is not tried


def test_a_result_that_mentions_the_anomaly_marker_is_still_a_result(httpx_mock):
    body = swap("html_results.html", "</body>", "<p>anomalyDetectionBlock</p></body>")
    httpx_mock.add_response(url=HTML, content=body)
    out = call()
    assert out["success"] is True
    assert out["count"] > 0


def test_rate_limit_carries_retry_after_when_given(httpx_mock):
    httpx_mock.add_response(url=HTML, status_code=429, headers={"Retry-After": "120"})
    out = call()
    assert out["error_code"] == "RATE_LIMIT"
    assert out["retry_after"] == 120


def test_rate_limit_names_configured_tools(httpx_mock, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-some-key-123456")
    httpx_mock.add_response(url=HTML, status_code=202, content=page("challenge.html"))
    out = call()
    assert "Configured on this machine: web_search_brave." in out["error"]
    assert "BSA-some-key-123456" not in str(out)


def test_server_error_falls_back_to_lite(httpx_mock):
    httpx_mock.add_response(url=HTML, status_code=503, is_reusable=True)
    httpx_mock.add_response(url=LITE, method="POST", content=page("lite_results.html"))
    out = call(max_results=3, region="us-en")
    assert out["success"] is True
    assert out["results"][0]["title"] == "Ikigai - Wikipedia"
    requests = httpx_mock.get_requests()
    assert [str(r.url) for r in requests] == [HTML, HTML, LITE]  # one retry, then lite once
    assert form(requests[2]) == {"q": "what is ikigai", "kl": "us-en"}
    assert requests[2].headers["Referer"] == "https://lite.duckduckgo.com/"


def test_unrecognised_page_falls_back_to_lite(httpx_mock):
    httpx_mock.add_response(url=HTML, content=b"<html><body><main>new layout</main></body></html>")
    httpx_mock.add_response(url=LITE, content=page("lite_no_results.html"))
    assert call()["results"] == []


def test_both_pages_unusable_is_api_error(httpx_mock):
    httpx_mock.add_response(url=HTML, content=b"<html><body><main>new layout</main></body></html>")
    httpx_mock.add_response(url=LITE, status_code=404, content=b"<html><body>Not found</body>")
    out = call()
    assert out["error_code"] == "API_ERROR"
    assert "lite page answered HTTP 404" in out["error"]
    assert "'Not found'" in out["error"]
    assert "DuckDuckGo's lite page answered HTTP" in out["error"]
    assert "Before that, DuckDuckGo's html page answered HTTP" in out["error"]


def test_lite_blocked_after_html_error(httpx_mock):
    httpx_mock.add_response(url=HTML, status_code=500, is_reusable=True)
    httpx_mock.add_response(url=LITE, status_code=202, content=page("challenge.html"))
    assert call()["error_code"] == "RATE_LIMIT"


def test_bang_redirect_is_explained(httpx_mock):
    where = {"Location": "https://en.wikipedia.org/wiki/Special:Search?search=ikigai"}
    httpx_mock.add_response(url=HTML, status_code=303, headers=where)
    httpx_mock.add_response(url=LITE, status_code=303, headers=where)
    out = call(query="!w ikigai")
    assert out["error_code"] == "API_ERROR"
    assert "redirecting to en.wikipedia.org" in out["error"]
    assert "remove the '!'" in out["error"]


def test_network_error(httpx_mock):
    httpx_mock.add_exception(httpx.ConnectError("connection refused"), is_reusable=True)
    out = call()
    assert out["error_code"] == "NETWORK_ERROR"
    assert all(str(r.url) == HTML for r in httpx_mock.get_requests())


# --- more than one page -------------------------------------------------------------------


def test_next_page_is_posted_from_the_pages_own_form(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    httpx_mock.add_response(url=HTML, content=page("html_results_last_page.html"))
    out = call(max_results=12, time_filter="month")
    titles = [r["title"] for r in out["results"]]
    # Page 2 repeats the Wikipedia result: it appears once.
    assert out["count"] == 12
    assert titles.count("Ikigai - Wikipedia") == 1
    assert titles[10:] == [
        "The real meaning of ikigai - Ikigai Living",
        "What Is Ikigai? - The New York Times",
    ]
    second = form(httpx_mock.get_requests()[1])
    assert second["s"] == "10"
    assert second["dc"] == "11"
    assert second["vqd"] == "4-139874163218094727302167958718063429157"
    assert second["df"] == "m"
    assert "b" not in second


def test_paging_stops_without_a_next_button(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    httpx_mock.add_response(url=HTML, content=page("html_results_last_page.html"))
    assert call(max_results=25)["count"] == 12
    assert len(httpx_mock.get_requests()) == 2


def test_paging_stops_at_max_pages(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"), is_reusable=True)
    call(max_results=25)
    assert len(httpx_mock.get_requests()) == ddg.MAX_PAGES


def test_one_page_when_it_is_enough(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    assert call(max_results=10)["count"] == 10
    assert len(httpx_mock.get_requests()) == 1


def test_blocked_next_page_keeps_the_first_with_a_warning(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    httpx_mock.add_response(url=HTML, status_code=202, content=page("challenge.html"))
    out = call(max_results=20)
    assert out["success"] is True
    assert out["count"] == 10
    (warning,) = out["warnings"]
    assert warning["code"] == "RATE_LIMIT"
    assert warning["message"].startswith("only the first 10 results")


def test_lite_pages_continue_on_lite(httpx_mock):
    httpx_mock.add_response(url=HTML, status_code=502, is_reusable=True)
    httpx_mock.add_response(url=LITE, content=page("lite_results.html"))
    httpx_mock.add_response(url=LITE, content=page("lite_no_results.html"))
    assert call(max_results=5)["count"] == 3
    assert [str(r.url) for r in httpx_mock.get_requests()] == [HTML, HTML, LITE, LITE]


# --- domains ------------------------------------------------------------------------------


def test_several_allowed_domains_fan_out(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"), is_reusable=True)
    # Shares of 3: two for wikipedia.org, one for healthline.com; each page has enough.
    out = call(max_results=3, allowed_domains=["wikipedia.org", "healthline.com"])
    assert [r["url"] for r in out["results"]] == [
        "https://en.wikipedia.org/wiki/Ikigai",
        "https://www.healthline.com/health/ikigai",
        "https://ja.wikipedia.org/wiki/%E7%94%9F%E3%81%8D%E7%94%B2%E6%96%90",
    ]
    queries = sorted(form(r)["q"] for r in httpx_mock.get_requests())
    assert queries == ["what is ikigai site:healthline.com", "what is ikigai site:wikipedia.org"]


def test_one_blocked_domain_of_a_fan_out_is_a_warning(httpx_mock):
    def reply(request: httpx.Request) -> httpx.Response:
        if "site:healthline.com" in form(request)["q"]:
            return httpx.Response(202, content=page("challenge.html"))
        return httpx.Response(200, content=page("html_results.html"))

    httpx_mock.add_callback(reply, is_reusable=True)
    out = call(max_results=4, allowed_domains=["wikipedia.org", "healthline.com"])
    assert out["success"] is True
    assert out["results"][0]["url"] == "https://en.wikipedia.org/wiki/Ikigai"
    (warning,) = out["warnings"]
    assert warning["code"] == "RATE_LIMIT"
    assert warning["message"].startswith("healthline.com: DuckDuckGo is blocking")


def test_every_domain_blocked_is_rate_limit(httpx_mock):
    httpx_mock.add_response(
        url=HTML, status_code=202, content=page("challenge.html"), is_reusable=True
    )
    out = call(allowed_domains=["wikipedia.org", "healthline.com"])
    assert out["error_code"] == "RATE_LIMIT"
    assert out["error"].startswith("every domain failed")


def test_single_allowed_domain_is_native_and_post_filtered(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    httpx_mock.add_response(url=HTML, content=page("html_results_last_page.html"))
    out = call(allowed_domains=["wikipedia.org"])
    assert form(httpx_mock.get_requests()[0])["q"] == "what is ikigai site:wikipedia.org"
    assert [r["title"] for r in out["results"]] == ["Ikigai - Wikipedia", "生き甲斐 - Wikipedia"]


def test_blocked_domains_are_excluded_and_filtered(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    httpx_mock.add_response(url=HTML, content=page("html_results_last_page.html"))
    out = call(blocked_domains=["wikipedia.org", "amazon.com"])
    assert form(httpx_mock.get_requests()[0])["q"] == (
        "what is ikigai -site:wikipedia.org -site:amazon.com"
    )
    assert out["count"] == 9  # 7 of page one and 2 of page two pass the filter
    assert not any("wikipedia" in r["url"] or "amazon" in r["url"] for r in out["results"])


def test_second_identical_call_is_served_from_cache(httpx_mock):
    httpx_mock.add_response(url=HTML, content=page("html_results.html"))
    first = call(max_results=2)
    again = call(max_results=2)
    assert again == first | {"cached": True}
    assert len(httpx_mock.get_requests()) == 1


# --- the real process ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ({"query": "what is ikigai", "max_results": 26}, "'max_results' is 26"),
        ({"query": "what is ikigai", "region": "english"}, "'region' is \"english\""),
        ({"query": "x" * 500}, "2 to 499"),
    ],
)
def test_invalid_input_exit_0(run_tool, payload, needle):
    out = run_tool(TOOL, payload)
    assert out.code == 0
    assert out.json["error_code"] == "INVALID_INPUT"
    assert needle in out.json["error"]


def header(seen: Any, name: str) -> str:
    return str(next(v for k, v in seen.headers.items() if k.lower() == name.lower()))


def test_demo_call_against_loopback(run_tool, fake_server):
    url = fake_server.route("/html/", Reply(200, page("html_results.html"), HTML_TYPE))
    out = run_tool(
        TOOL, {"query": "what is ikigai", "max_results": 3}, env={"DUCKDUCKGO_HTML_URL": url}
    )
    assert out.code == 0
    assert out.json == {
        "success": True,
        "provider": "duckduckgo",
        "results": ddg.parse_html(page("html_results.html")).results[:3],
        "count": 3,
    }
    (seen,) = fake_server.seen
    assert seen.method == "POST"
    assert parse_qs(seen.body.decode()) == {"q": ["what is ikigai"]}
    assert header(seen, "User-Agent").startswith("Mozilla/5.0")
    assert header(seen, "Referer") == "https://html.duckduckgo.com/"


def test_fallback_to_lite_against_loopback(run_tool, fake_server):
    html = fake_server.route("/html/", Reply(503, b"<html><body>Service Unavailable</body></html>"))
    lite = fake_server.route("/lite/", Reply(200, page("lite_results.html"), HTML_TYPE))
    out = run_tool(
        TOOL,
        {"query": "what is ikigai", "max_results": 2},
        env={"DUCKDUCKGO_HTML_URL": html, "DUCKDUCKGO_LITE_URL": lite},
    )
    assert out.json["success"] is True
    assert [r["url"] for r in out.json["results"]] == [
        "https://en.wikipedia.org/wiki/Ikigai",
        "https://www.psychologytoday.com/us/blog/the-art-of-now/202409/what-is-ikigai",
    ]
    assert [s.path for s in fake_server.seen] == ["/html/", "/html/", "/lite/"]


def test_blocked_against_loopback(run_tool, fake_server):
    html = fake_server.route("/html/", Reply(202, page("challenge.html"), HTML_TYPE))
    lite = fake_server.route("/lite/", Reply(200, page("lite_results.html"), HTML_TYPE))
    out = run_tool(
        TOOL,
        {"query": "what is ikigai"},
        env={"DUCKDUCKGO_HTML_URL": html, "DUCKDUCKGO_LITE_URL": lite},
    )
    assert out.code == 0
    body = out.json
    assert body["success"] is False
    assert body["error_code"] == "RATE_LIMIT"
    assert "web_search_brave" in body["error"]
    assert [s.path for s in fake_server.seen] == ["/html/"]
