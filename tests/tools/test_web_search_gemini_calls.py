"""web-search-gemini-tool's calls: the request through pytest-httpx, redirect resolution
against a real loopback server, the installed console script, and a hostile answer whose
links reach no private address (test_web_search_gemini.py has input and shaping)."""

from __future__ import annotations

import json
import socket
import threading
import time
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from conftest import BEFORE_THE_DEADLINE, HANG_GUARD, STALL, Reply, Seen
from gemini_support import (
    ALJAZEERA,
    API,
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
    TOOL,
    UEFA,
    UNGROUNDED,
    chunk,
    error_info,
    grounded,
    params,
    retry_info,
    status,
    support,
)

from ikigai_web.common.runner import answer
from ikigai_web.common.settings import load
from ikigai_web.tools import web_search_gemini as gem

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
