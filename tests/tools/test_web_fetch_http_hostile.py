"""web-fetch against real HTTP servers on 127.0.0.1, the hostile side: HTTP errors, endless
and compressed bodies, robots.txt, paging and the cache, the installed tool, odd corners
(test_web_fetch_http.py has content, charsets, redirects and limits)."""

from __future__ import annotations

import contextlib
import gzip
import socket
import ssl
import subprocess
import threading
import time
import zlib
from typing import TYPE_CHECKING, Any

import orjson
import pytest
from conftest import BEFORE_THE_DEADLINE, HANG_GUARD, STALL
from toolbox import PEAK_MEMORY

from ikigai_web.fetch.network import robots
from ikigai_web.tools import web_fetch

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler
    from pathlib import Path
from fetch_http_support import (
    ARTICLE,
    Handler,
    Web,
    _stall,
    _valid,
    fetch,
    make_pdf,
    redirect,
    reply,
)

pytestmark = pytest.mark.loopback


# ---------------------------------------------------------------- HTTP errors


def test_404_with_the_pages_own_title(web, private):
    page = "<html><head><title>Page Not Found</title></head><body>sorry</body></html>"
    out = fetch(web.route("/missing", reply(page, status=404)))
    assert out["error_code"] == "HTTP_ERROR"
    assert "404" in out["error"]
    assert "Page Not Found" in out["error"]


def test_500_with_the_pages_first_text(web, private):
    out = fetch(web.route("/boom", reply("  Database   exploded\n", "text/plain", 500)))
    assert out["error_code"] == "HTTP_ERROR"
    assert "500" in out["error"]
    assert "Database exploded" in out["error"]


@pytest.mark.parametrize(
    ("status", "wait", "expected"),
    [(429, "30", 30), (429, "1", 1), (429, "86400", 86400), (503, "120", 120), (429, None, None),
     (429, "soon", None), (503, "Wed, 21 Oct 2015 07:28:00 GMT", 0)],
)  # fmt: skip
def test_429_and_503_carry_retry_after(web, private, status, wait, expected):
    headers = {"Retry-After": wait} if wait else {}
    started = time.monotonic()
    out = fetch(web.route("/rl", reply("", "text/plain", status, headers)))
    # Never waits for the site (nor its own deadline): the model decides.
    assert time.monotonic() - started < BEFORE_THE_DEADLINE
    assert out["error_code"] == "HTTP_ERROR"
    assert out.get("retry_after") == expected
    assert web.paths().count("/rl") == 1


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_server_errors_are_http_errors(web, private, status):
    out = fetch(web.route("/e", reply("<title>Bad Gateway</title>", status=status)))
    assert out["error_code"] == "HTTP_ERROR"
    assert out["wall"] == "error_page"  # every 5xx without a check's marks (issue 54)
    assert str(status) in out["error"]
    assert "'Bad Gateway'" in out["error"]  # the page's own words
    assert "An error or maintenance page. Try again later" in out["error"]


# ---------------------------------------------------------------- hostile remote side


def _endless(web: Web, status: int = 200, extra: dict[str, str] | None = None) -> Handler:
    """A chunked body that never ends, as fast as the client reads it."""

    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "text/html")
        h.send_header("Transfer-Encoding", "chunked")
        for key, value in (extra or {}).items():
            h.send_header(key, value)
        h.end_headers()
        piece = b"<p>" + b"endless " * 8000 + b"</p>"
        while not web.stop.is_set():
            h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))

    return handle


def _bomb(megabytes: int, wbits: int) -> bytes:
    """`megabytes` MiB of one byte, compressed a MiB at a time (the test stays small too)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, wbits)
    mib = b"A" * (1 << 20)
    return b"".join(packer.compress(mib) for _ in range(megabytes)) + packer.flush()


@pytest.mark.parametrize("kind", ["endless", "gzip", "deflate"])
def test_endless_bodies_and_bombs_stop_at_the_cap_in_bounded_memory(web, run_tool, tmp_path, kind):
    if kind == "endless":
        handler = _endless(web)
    else:
        bomb = _bomb(500, 31 if kind == "gzip" else 15)
        handler = reply(bomb, "text/html", headers={"Content-Encoding": kind})
    (tmp_path / "sitecustomize.py").write_text(PEAK_MEMORY)
    env = {"PYTHONPATH": str(tmp_path), "PEAK_FILE": str(tmp_path / "peak"),
           "IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}  # fmt: skip
    started = time.monotonic()
    run = run_tool("web-fetch-tool", {"url": web.route("/big", handler)}, env=env)
    assert run.json["error_code"] == "TOO_LARGE"
    assert run.stderr == ""
    assert time.monotonic() - started < BEFORE_THE_DEADLINE
    peak_mib = int((tmp_path / "peak").read_text()) / 1024
    assert peak_mib < 100, f"{peak_mib:.0f} MiB"  # the interpreter, httpx, the 10 MiB cap


@pytest.mark.parametrize("kind", ["endless", "gzip bomb"])
def test_an_endless_or_bombed_error_page_is_read_only_in_part(web, private, kind):
    bomb = gzip.compress(b"<title>Boom</title>" + b" " * (100 * 1024 * 1024))
    gz = {"Content-Encoding": "gzip"}
    handler = _endless(web, 500) if kind == "endless" else reply(bomb, "text/html", 500, gz)
    started = time.monotonic()
    out = fetch(web.route("/e", handler))
    assert out["error_code"] == "HTTP_ERROR"
    assert time.monotonic() - started < BEFORE_THE_DEADLINE


@pytest.mark.parametrize("kind", ["endless", "gzip bomb"])
def test_an_endless_or_bombed_robots_txt_is_read_only_in_part(web, private, kind):
    bomb = gzip.compress(b"User-agent: *\nDisallow: /x\n" + b"#" * (100 * 1024 * 1024))
    gz = {"Content-Encoding": "gzip"}
    robots_txt = _endless(web) if kind == "endless" else reply(bomb, "text/plain", headers=gz)
    web.route("/robots.txt", robots_txt)
    started = time.monotonic()
    out = fetch(web.route("/p", reply(ARTICLE)))
    assert out["success"] is True, out
    assert time.monotonic() - started < BEFORE_THE_DEADLINE


def test_dns_failure(monkeypatch):
    def fail(*_: object, **__: object) -> Any:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    out = fetch("http://no-such-host.test/")
    assert out["error_code"] == "NETWORK_ERROR"
    assert "DNS" in out["error"]


def test_dns_that_never_answers_ends_at_the_deadline(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1")
    over = threading.Event()

    def hang(*_: object, **__: object) -> Any:
        over.wait(STALL)  # until the test is over
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", hang)
    started = time.monotonic()
    try:
        out = fetch("http://slow-dns.test/")
    finally:
        over.set()
    assert out["error_code"] == "NETWORK_ERROR"
    assert "timeout" in out["error"]
    assert time.monotonic() - started < HANG_GUARD


def test_a_server_that_never_accepts_times_out(private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1")
    with socket.create_server(("127.0.0.1", 0), backlog=8) as listener:
        port = listener.getsockname()[1]  # the kernel completes handshakes; nobody reads
        started = time.monotonic()
        out = fetch(f"http://127.0.0.1:{port}/")
    assert out["error_code"] == "NETWORK_ERROR"
    assert "within the 1 s deadline" in out["error"]
    assert time.monotonic() - started < HANG_GUARD


def test_headers_dribbled_forever_end_at_the_deadline(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1")

    def dribble(h: BaseHTTPRequestHandler) -> None:
        h.wfile.write(b"HTTP/1.1 200 OK\r\n")
        while not web.stop.wait(0.05):
            h.wfile.write(b"X-Slow: 1\r\n")
            h.wfile.flush()

    started = time.monotonic()
    out = fetch(web.route("/slowloris", dribble))
    assert out["error_code"] == "NETWORK_ERROR"
    assert "within the 1 s deadline" in out["error"]
    assert time.monotonic() - started < HANG_GUARD


@pytest.mark.parametrize("kind", ["endless headers", "not http", "bad status"])
def test_a_response_that_is_not_http_is_a_network_error(web, private, kind):
    def garbage(h: BaseHTTPRequestHandler) -> None:
        if kind == "endless headers":
            h.wfile.write(b"HTTP/1.1 200 OK\r\n")
            while not web.stop.is_set():
                h.wfile.write(b"X-Junk: " + b"j" * 1000 + b"\r\n")
        h.wfile.write(b"SSH-2.0-OpenSSH\r\n\r\n" if kind == "not http" else b"HTTP/1.1 99x\r\n\r\n")

    started = time.monotonic()
    out = fetch(web.route("/g", garbage))
    assert out["error_code"] == "NETWORK_ERROR", out
    assert "timeout" not in out["error"], out  # refused as it came, not waited out
    assert time.monotonic() - started < BEFORE_THE_DEADLINE


def test_the_deadline_covers_robots_txt_and_every_redirect(web, private, monkeypatch):
    """Each answer comes in 0.4 s, the seven of them in 2.8 s: only a deadline for all of
    them together (1 s) ends the call in a timeout."""
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1")

    def slowly(handler: Handler) -> Handler:
        def handle(h: BaseHTTPRequestHandler) -> None:
            web.stop.wait(0.4)
            handler(h)

        return handle

    web.route("/robots.txt", slowly(reply("User-agent: *\nAllow: /\n", "text/plain")))
    for i in range(5):
        web.route(f"/r{i}", slowly(redirect(f"/r{i + 1}")))
    web.route("/r5", slowly(reply(ARTICLE)))
    started = time.monotonic()
    out = fetch(web.url + "/r0")
    assert out["error_code"] == "NETWORK_ERROR"
    assert "within the 1 s deadline" in out["error"]
    assert time.monotonic() - started < HANG_GUARD


@pytest.mark.parametrize("kind", ["content-length", "chunked"])
def test_a_truncated_body_is_a_network_error(web, private, kind):
    def truncated(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/html")
        if kind == "chunked":
            h.send_header("Transfer-Encoding", "chunked")
            h.end_headers()
            h.wfile.write(b"400\r\n<p>only part of a chunk")
        else:
            h.send_header("Content-Length", "100000")
            h.end_headers()
            h.wfile.write(b"<p>only part of the body")
        h.wfile.flush()
        h.close_connection = True

    out = fetch(web.route("/cut", truncated))
    assert out["error_code"] == "NETWORK_ERROR"
    assert "reset" in out["error"] or "dropped" in out["error"]


def test_a_truncated_gzip_body_gives_what_arrived(web, private):
    body = gzip.compress(ARTICLE.encode())[:-200]
    out = fetch(web.route("/gz", reply(body, "text/html", headers={"Content-Encoding": "gzip"})))
    _valid(out)
    assert out["success"] is True or out["error_code"] in ("PARSE_ERROR", "NETWORK_ERROR")


# ---------------------------------------------------------------- robots.txt


def test_robots_disallow(web, private):
    web.route("/robots.txt", reply("User-agent: *\nDisallow: /private\n", "text/plain"))
    web.route("/private/page", reply(ARTICLE))
    web.route("/public", reply(ARTICLE))
    out = fetch(web.url + "/private/page")
    assert out["error_code"] == "ROBOTS_DISALLOWED"
    assert "IKIGAI_WEB_FETCH_ROBOTS=0" in out["error"]
    assert fetch(web.url + "/public")["success"] is True
    assert "/private/page" not in web.paths()


def test_robots_group_for_our_agent(web, private):
    rules = "User-agent: *\nAllow: /\n\nUser-agent: ikigai-web-tools\nDisallow: /\n"
    web.route("/robots.txt", reply(rules, "text/plain"))
    out = fetch(web.route("/p", reply(ARTICLE)))
    assert out["error_code"] == "ROBOTS_DISALLOWED"


def test_robots_setting_off(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")
    web.route("/robots.txt", reply("User-agent: *\nDisallow: /\n", "text/plain"))
    assert fetch(web.route("/p", reply(ARTICLE)))["success"] is True
    assert "/robots.txt" not in web.paths()


@pytest.mark.parametrize(("status", "code"), [(404, None), (403, None), (503, "ROBOTS_DISALLOWED")])
def test_robots_status(web, private, status, code):
    web.route("/robots.txt", reply("User-agent: *\nDisallow: /\n", "text/plain", status))
    out = fetch(web.route("/p", reply(ARTICLE)))
    assert out.get("error_code") == code, out


def test_robots_that_redirects_is_followed(web, private):
    web.route("/robots.txt", redirect("/real-robots.txt", 301))
    web.route("/real-robots.txt", reply("User-agent: *\nDisallow: /\n", "text/plain"))
    assert fetch(web.route("/p", reply(ARTICLE)))["error_code"] == "ROBOTS_DISALLOWED"


def test_robots_of_every_redirect_hop(web, other_web, private):
    other_web.route("/robots.txt", reply("User-agent: *\nDisallow: /\n", "text/plain"))
    other_web.route("/target", reply(ARTICLE))
    out = fetch(web.route("/hop", redirect(other_web.url + "/target")))
    assert out["error_code"] == "ROBOTS_DISALLOWED"
    assert other_web.paths() == ["/robots.txt"]


def test_slow_robots_is_unreachable(web, private, monkeypatch):
    monkeypatch.setattr(robots, "ROBOTS_WAIT", 0.5)

    def slow(h: BaseHTTPRequestHandler) -> None:
        web.stop.wait(STALL)

    web.route("/robots.txt", slow)
    started = time.monotonic()
    out = fetch(web.route("/p", reply(ARTICLE)))
    assert out["error_code"] == "NETWORK_ERROR"
    assert "robots.txt" in out["error"]
    assert time.monotonic() - started < BEFORE_THE_DEADLINE  # robots' 0.5 s, not the call's


def test_unreachable_robots_is_a_network_error(private):
    out = fetch("http://127.0.0.1:9/page")  # the discard port: nothing listens
    assert out["error_code"] == "NETWORK_ERROR"
    assert "robots.txt" in out["error"]


# ---------------------------------------------------------------- paging, budget, cache

LINES = "\n".join(f"line number {i} " + "w" * 80 for i in range(1, 3001))


def test_paging_reads_the_whole_page_within_the_budget(web, private):
    url = web.route("/long.txt", reply(LINES, "text/plain"))
    offset, pieces = 1, []
    while True:
        out = fetch(url, offset=offset)
        assert len(orjson.dumps(out)) + 1 <= 60_000
        pieces.append(out["content"])
        if not out["truncated"]:
            break
        offset = out["next_offset"]
    assert "\n".join(pieces) == LINES
    assert len(pieces) > 3
    assert web.paths().count("/long.txt") == 1  # paging reuses the cached download


def test_limit_and_offset_past_the_end(web, private):
    url = web.route("/long.txt", reply(LINES, "text/plain"))
    out = fetch(url, offset=10, limit=3)
    assert out["content"].split("\n")[0].startswith("line number 10 ")
    assert (out["total_lines"], out["truncated"], out["next_offset"]) == (3000, True, 13)
    past = fetch(url, offset=3001)
    assert (past["content"], past["truncated"]) == ("", False)
    assert "next_offset" not in past


def test_cache_key_has_options_and_policy(web, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    url = web.route("/p", reply(ARTICLE))
    fetch(url)
    fetch(url, offset=2)
    fetch(url, include_links=False)
    assert web.paths().count("/p") == 2
    monkeypatch.delenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE")
    assert fetch(url)["error_code"] == "BLOCKED_URL"


def test_an_answer_from_the_cache_says_so(web, private):
    url = web.route("/p", reply(ARTICLE))
    first = fetch(url)
    again = fetch(url, offset=2)
    assert "cached" not in first
    assert again["cached"] is True
    assert again["content"] == first["content"].split("\n", 1)[1]
    assert "warnings" not in again
    assert web.paths().count("/p") == 1


_GONE = object()


def _stored(address, ahead=0.0, **changes):
    """A web-fetch cache entry for `address`, with its fields changed as `changes` say."""
    document = dict.fromkeys(
        ["title", "author", "date", "site_name", "description", "product", "page_type", "wall"]
    )
    value = {"url": address, "content_type": "text/plain", "document": document}
    document |= {"markdown": "stale", "warnings": [], "app_shell": False}
    for name, new in changes.items():
        where = document if name in document else value
        if new is _GONE:
            del where[name]
        else:
            where[name] = new
    return orjson.dumps({"stored": time.time() + ahead, "value": value})


CORRUPT_PAGES = {
    "truncated": lambda url: _stored(url)[:-9],
    "garbage": lambda _: b"\x8b\x00 not an entry \xff",
    "a JSON array": lambda _: b"[]",
    "a number for the url": lambda url: _stored(url, url=1),
    "a number for the title": lambda url: _stored(url, title=7),
    "a list for the markdown": lambda url: _stored(url, markdown=["a"]),
    "no markdown": lambda url: _stored(url, markdown=_GONE),
    "an unknown field": lambda url: _stored(url, colour="red"),
    "no document": lambda url: _stored(url, document=_GONE),
    "a null document": lambda url: _stored(url, document=None),
    "stored in the future": lambda url: _stored(url, ahead=3600),
    "a number for the page type": lambda url: _stored(url, page_type=3),
    "a string for the app shell flag": lambda url: _stored(url, app_shell="yes"),
    "warnings that are no list": lambda url: _stored(url, warnings="careful"),
    "a warning without its message": lambda url: _stored(url, warnings=[{"code": "X"}]),
    "a warning of the wrong type": lambda url: _stored(url, warnings=[{"code": 1, "message": "m"}]),
}


@pytest.mark.parametrize("kind", CORRUPT_PAGES)
def test_a_corrupt_cache_entry_is_refetched_and_reported(web, private, kind):
    from ikigai_web.common import cache
    from ikigai_web.common.settings import load

    url = web.route("/p", reply("fresh", "text/plain"))
    key = web_fetch.cache_key(web_fetch.parse_input({"url": url}), load())
    path = cache._entry_path("web_fetch", key)
    path.parent.mkdir(parents=True)
    path.write_bytes(CORRUPT_PAGES[kind](url))
    out = fetch(url)
    assert out["content"] == "fresh"
    [warning] = out["warnings"]
    assert warning["code"] == "CACHE"
    assert warning["message"].startswith("a corrupt cache entry was discarded")
    again = fetch(url)
    assert (again["content"], again["cached"], "warnings" in again) == ("fresh", True, False)
    assert web.paths().count("/p") == 1


def test_a_whole_cache_entry_is_served_as_stored(web, private):
    """The control for the corrupt cases: the same entry unchanged is a hit."""
    from ikigai_web.common import cache
    from ikigai_web.common.settings import load

    url = web.route("/p", reply("fresh", "text/plain"))
    key = web_fetch.cache_key(web_fetch.parse_input({"url": url}), load())
    path = cache._entry_path("web_fetch", key)
    path.parent.mkdir(parents=True)
    path.write_bytes(_stored(url))
    out = fetch(url)
    assert (out["content"], out["cached"], "warnings" in out) == ("stale", True, False)
    assert web.paths().count("/p") == 0


def test_a_file_where_the_cache_should_be_is_reported_and_fetching_works(web, private):
    from ikigai_web.common.settings import cache_dir

    cache_dir().parent.mkdir(parents=True)
    cache_dir().write_text("in the way")
    url = web.route("/p", reply("fresh", "text/plain"))
    for _ in range(2):
        out = fetch(url)
        assert out["content"] == "fresh"
        assert out["warnings"] == [
            {
                "code": "CACHE",
                "message": f"the cache at {cache_dir()} was skipped "
                f"({cache_dir()} is a file, not a directory)",
            }
        ]
    assert web.paths().count("/p") == 2


def test_cache_warnings_count_in_the_output_budget(web, private, monkeypatch):
    from ikigai_web.common.settings import cache_dir

    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_dir().parent / ("d" * 200)))
    cache_dir().parent.mkdir(parents=True)
    cache_dir().write_text("in the way")
    url = web.route("/long.txt", reply(LINES, "text/plain"))
    out = fetch(url)  # `fetch` checks the rendered answer fits the budget
    assert out["success"] is True
    assert out["truncated"] is True
    assert out["warnings"][0]["code"] == "CACHE"


def test_cache_ttl_zero_refetches(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_CACHE_TTL", "0")
    url = web.route("/p", reply(ARTICLE))
    fetch(url)
    fetch(url)
    assert web.paths().count("/p") == 2


# ---------------------------------------------------------------- through the installed tool


def test_tool_fetches_over_the_protocol(web, run_tool):
    url = web.route("/p", reply(ARTICLE))
    run = run_tool("web-fetch-tool", {"url": url}, env={"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"})
    assert run.code == 0, run.stderr
    assert run.json["success"] is True
    assert f"({web.url}/docs/page.html)" in run.json["content"]
    again = run_tool("web-fetch-tool", {"url": url}, env={"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"})
    assert again.json == run.json | {"cached": True}
    assert web.paths().count("/p") == 1


def test_tool_budget_and_gzip_bomb_over_the_protocol(web, run_tool):
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1", "IKIGAI_WEB_FETCH_MAX_BYTES": "2000000"}
    url = web.route("/long.txt", reply(LINES * 3, "text/plain"))
    run = run_tool("web-fetch-tool", {"url": url}, env=env)
    assert len(run.stdout.encode()) <= 60_000
    assert run.json["truncated"] is True
    bomb = gzip.compress(b"B" * (100 * 1024 * 1024))
    url = web.route("/bomb", reply(bomb, "text/plain", headers={"Content-Encoding": "gzip"}))
    run = run_tool("web-fetch-tool", {"url": url}, env=env)
    assert run.json["error_code"] == "TOO_LARGE"


def test_tool_redirect_to_metadata_address_is_blocked(web, run_tool):
    url = web.route("/go", redirect("http://169.254.169.254/latest/meta-data/"))
    env = {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1"}
    run = run_tool("web-fetch-tool", {"url": url}, env=env)
    assert run.json["error_code"] == "BLOCKED_URL"


def test_tool_stall_times_out(web, run_tool):
    url = web.route("/stall", _stall(b"x" * 100, web))
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1", "IKIGAI_WEB_TIMEOUT": "1"}
    started = time.monotonic()
    run = run_tool("web-fetch-tool", {"url": url}, env=env)
    assert run.json["error_code"] == "NETWORK_ERROR"
    assert "within the 1 s deadline" in run.json["error"]
    assert time.monotonic() - started < HANG_GUARD


def _pdf_without_eof() -> bytes:
    return make_pdf("Still readable").rpartition(b"%%EOF")[0]


def _pdf_with_a_bad_xref() -> bytes:
    pdf = make_pdf("Odd offsets")
    return pdf.replace(b"0000000009 00000 n", b"0000000999 00000 n")


def _pdf_with_a_corrupt_stream() -> bytes:
    pdf = make_pdf("x")
    return pdf.replace(b"/Length", b"/Filter /FlateDecode /Length")


@pytest.mark.parametrize(
    ("body", "ctype"),
    [
        (_pdf_without_eof(), "application/pdf"),
        (_pdf_with_a_bad_xref(), "application/pdf"),
        (_pdf_with_a_corrupt_stream(), "application/pdf"),
        (b"%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\nbroken", "application/pdf"),
        (b"<html><body><p>" + b"<div>" * 300 + b"deep", "text/html; charset=rot13"),
        (b"<html lang=xx><time datetime=99999>x</time><p>\xff\xfe\x00 a", "text/html"),
    ],
    ids=["pdf-no-eof", "pdf-bad-xref", "pdf-bad-stream", "pdf-broken", "html-deep", "html-odd"],
)
def test_libraries_write_nothing_on_stderr(web, run_tool, body, ctype):
    url = web.route("/doc", reply(body, ctype))
    run = run_tool("web-fetch-tool", {"url": url}, env={"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"})
    assert run.code == 0
    assert run.stderr == ""
    assert isinstance(run.json["success"], bool)


REBIND = """
import ipaddress, socket
_real = socket.getaddrinfo
_calls = []
def getaddrinfo(host, port, *args, **kwargs):
    if (host.decode() if isinstance(host, bytes) else host) == "rebind.test":
        _calls.append(host)
        ip = "127.0.0.1" if len(_calls) == 1 else "127.0.0.2"  # where nothing listens
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port))]
    return _real(host, port, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""


def test_connection_is_pinned_to_the_vetted_address(web, run_tool, tmp_path: Path):
    """A DNS answer that changes after the check (rebinding) does not move the connection."""
    (tmp_path / "sitecustomize.py").write_text(REBIND)
    port = web.host_port.split(":")[1]
    web.route("/p", reply(ARTICLE))
    env = {"PYTHONPATH": str(tmp_path), "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1"}
    run = run_tool("web-fetch-tool", {"url": f"http://rebind.test:{port}/p"}, env=env)
    assert run.json["success"] is True, run.json
    assert web.seen[-1][1]["Host"] == f"rebind.test:{port}"


MAP_IDN = """
import socket
_real = socket.getaddrinfo
_NAMES = {"b\u00fccher.test", "xn--bcher-kva.test"}
def getaddrinfo(host, port, *args, **kwargs):
    if (host.decode() if isinstance(host, bytes) else host) in _NAMES:
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
    return _real(host, port, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""


@pytest.mark.parametrize("private_by", ["IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "ALLOW_HOSTS"])
def test_an_internationalised_host_name_is_fetched(web, run_tool, tmp_path: Path, private_by):
    """The address is pinned and looked up under the name's xn-- form, which httpx dials."""
    (tmp_path / "sitecustomize.py").write_text(MAP_IDN)
    port = web.host_port.split(":")[1]
    web.route("/p", reply(ARTICLE))
    allow = ("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    if private_by == "ALLOW_HOSTS":
        allow = ("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "xn--bcher-kva.test")
    env = {"PYTHONPATH": str(tmp_path), allow[0]: allow[1]}
    run = run_tool("web-fetch-tool", {"url": f"http://b\u00fccher.test:{port}/p"}, env=env)
    assert run.json["success"] is True, run.json
    assert run.json["url"] == f"http://xn--bcher-kva.test:{port}/p"
    assert [h["Host"] for _, h in web.seen] == [f"xn--bcher-kva.test:{port}"] * 2


MAP_TLS_TEST = """
import socket
_real = socket.getaddrinfo
def getaddrinfo(host, port, *args, **kwargs):
    if (host.decode() if isinstance(host, bytes) else host) == "tls.test":
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]
    return _real(host, port, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""


def test_tls_keeps_sni_and_certificate_check_on_the_host_name(run_tool, tmp_path: Path):
    """Dialling the pinned IP still sends SNI for the name and rejects an untrusted cert."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
         "/CN=tls.test", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    names: list[str | None] = []
    context.sni_callback = lambda _sock, name, _ctx: names.append(name)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def accept() -> None:
        conn, _ = listener.accept()
        with contextlib.suppress(OSError), context.wrap_socket(conn, server_side=True):
            pass

    threading.Thread(target=accept, daemon=True).start()
    (tmp_path / "sitecustomize.py").write_text(MAP_TLS_TEST)
    env = {"PYTHONPATH": str(tmp_path), "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "tls.test",
           "IKIGAI_WEB_FETCH_ROBOTS": "0"}  # fmt: skip
    run = run_tool("web-fetch-tool", {"url": f"https://tls.test:{port}/"}, env=env)
    listener.close()
    assert run.json["error_code"] == "NETWORK_ERROR"
    assert "TLS" in run.json["error"]
    assert names == ["tls.test"]


# ---------------------------------------------------------------- odd corners


@pytest.mark.parametrize("location", ["http://[::1/x", "http://e.com:99999/", "http://:80/"])
def test_redirect_to_an_unusable_url(web, private, location):
    out = fetch(web.route("/r", redirect(location)))
    assert out["error_code"] == "HTTP_ERROR"
    assert "unusable URL" in out["error"]


@pytest.mark.parametrize(
    ("status", "advice", "wall"),
    [(403, "The site refuses this client", "bot_check"), (418, "check the URL", None)],
)
def test_other_http_errors(web, private, status, advice, wall):
    out = fetch(web.route("/e", reply("<title>Teapot</title>", status=status)))
    assert out["error_code"] == "HTTP_ERROR"
    assert str(status) in out["error"]
    assert advice in out["error"]
    assert out.get("wall") == wall  # a plain 403 refuses this client; a 418 is no wall
    assert "Teapot" in out["error"]


def test_a_huge_error_page_is_read_only_in_part(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_MAX_BYTES", "2048")
    page = "<html><head><title>Big Error</title></head><body>" + "x" * 500_000 + "</body></html>"
    out = fetch(web.route("/e", reply(page, status=500)))
    assert out["error_code"] == "HTTP_ERROR"
    assert "Big Error" in out["error"]


def test_utf8_bom_with_a_declared_utf8_charset(web, private):
    body = "\ufeffplain text".encode()
    out = fetch(web.route("/t", reply(body, "text/plain; charset=utf-8")))
    assert out["content"] == "plain text"


def test_a_stale_cache_entry_of_another_shape_is_refetched(web, private):
    from ikigai_web.common import cache
    from ikigai_web.common.settings import load

    url = web.route("/p", reply("fresh", "text/plain"))
    params = web_fetch.parse_input({"url": url})
    settings = load()
    cache.put("web_fetch", web_fetch.cache_key(params, settings), {"old": 1}, 900)
    assert fetch(url)["content"] == "fresh"
    assert fetch(url)["content"] == "fresh"
    assert web.paths().count("/p") == 1


PRODUCT = """<!DOCTYPE html><html><head><title>Trailblazer 2 Hiking Boot | Northpeak</title>
<meta property="og:type" content="product">
<script type="application/ld+json">{"@context": "https://schema.org/", "@type": "Product",
 "name": "Trailblazer 2 Hiking Boot", "sku": "NP-TB2-42", "brand": {"@type": "Brand",
 "name": "Northpeak"}, "aggregateRating": {"@type": "AggregateRating", "ratingValue": "4.6",
 "reviewCount": "128"}, "offers": {"@type": "Offer", "price": "149.00", "priceCurrency": "USD",
 "availability": "https://schema.org/InStock"}}</script></head>
<body><nav><a href="/">Home</a> <a href="/boots">Boots</a></nav><main><div class="product">
<h1>Trailblazer 2 Hiking Boot</h1><p class="price">$149.00</p><button>Add to cart</button>
<p>A waterproof leather boot with a grippy sole, built for long days on rough trails.</p>
<table><tr><th>Weight</th><td>540 g</td></tr><tr><th>Sole</th><td>Vibram rubber</td></tr></table>
</div></main><footer>Northpeak Outfitters</footer></body></html>"""


def test_a_product_page_for_a_person_names_it_once_and_gives_its_facts(web, run_tool):
    url = web.route("/p/trailblazer-2", reply(PRODUCT))
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}
    run = run_tool("web-fetch-tool", args=(url, "--format", "markdown"), raw=b"", env=env)
    assert (run.code, run.stderr) == (0, "")
    facts = "Brand: Northpeak; SKU: NP-TB2-42; Rating: 4.6 out of 5 (128 reviews); "
    facts += "Price: 149.00 USD; Availability: in stock"
    head = f"# Trailblazer 2 Hiking Boot\n\nSource: {url}\n{facts}\n\n$149.00\n"
    assert run.stdout.startswith(head), run.stdout
    assert run.stdout.count("Trailblazer 2 Hiking Boot") == 1
    # The answer itself keeps the name over the product's details, as a product's markdown does.
    answer = run_tool("web-fetch-tool", args=(url,), raw=b"", env=env).json
    assert answer["content"].startswith("# Trailblazer 2 Hiking Boot\n\n$149.00")
    assert answer["product"] == facts


def test_a_page_for_a_person_with_format_markdown(web, run_tool):
    lines = "\n".join(f"<p>Paragraph number {i} of the article body.</p>" for i in range(40))
    html = f"<html><head><title>Release notes</title></head><body><article>{lines}</article>"
    url = web.route("/notes", reply(html + "</body></html>"))
    env = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"}
    run = run_tool("web-fetch-tool", args=(url, "--format", "markdown"), raw=b"", env=env)
    assert (run.code, run.stderr) == (0, "")
    assert run.stdout.startswith(f"# Release notes\n\nSource: {url}\n\nParagraph number 0 of")
    assert "Paragraph number 39" in run.stdout
    cut = run_tool("web-fetch-tool", args=(url, "--limit", "3", "--format", "markdown"), raw=b"",
                   env=env)  # fmt: skip
    assert cut.code == 0
    assert cut.stdout.rstrip().endswith("more lines: to read on, run it again with --offset 4]")
    failed = run_tool("web-fetch-tool", args=(web.url + "/missing", "--format", "markdown"),
                      raw=b"", env=env)  # fmt: skip
    assert failed.code == 1
    assert failed.stdout.startswith("Error (HTTP_ERROR): ")
