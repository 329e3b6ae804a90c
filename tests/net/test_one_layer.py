"""The one HTTP layer's parts web-fetch brought to it: URLs in normal form, logins bound to
their origin, what a status line and headers say, pinned connections."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from conftest import Reply
from hypothesis import given, settings
from hypothesis import strategies as st
from toolbox import serve_raw

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.network import guard
from ikigai_web.net import urls, wire
from ikigai_web.net.http import Call, Deadline, Login, Opened, read_body

if TYPE_CHECKING:
    import socket

# --- URLs in normal form ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://ExAmple.COM:80/a/../b c?x y#f g", "http://example.com/b%20c?x%20y#f%20g"),
        ("http://b\u00fccher.test:8080/p", "http://xn--bcher-kva.test:8080/p"),
        ("http://Stra\u00dfe.de/", "http://xn--strae-oqa.de/"),  # IDNA 2008, not "strasse"
        ("https://a.b:443", "https://a.b"),
        ("http://[::1]:80/", "http://[::1]/"),
        ("https://a.b/%zz/%41\u00e9", "https://a.b/%zz/%41%C3%A9"),  # escapes kept as written
        ("http://a.b/./x/../../y", "http://a.b/y"),
        ("http://u:p w@a.b/", "http://u:p%20w@a.b/"),
        ("http://a.b/{x}|^`?{x}|^`#`x", "http://a.b/%7Bx%7D|^%60?{x}|^`#%60x"),
        ("http://a.b?q", "http://a.b?q"),
    ],
)
def test_a_url_is_requested_in_its_normal_form(url, expected):
    assert urls.normal(url) == expected


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://a.b:0x/", "Invalid port: '0x'"),
        ("http://999.1.1.1/", "Invalid IPv4 address: '999.1.1.1'"),
        ("http://[zz]/", "Invalid IPv6 address: '[zz]'"),
        ("http://ab\u200b.com/", "Invalid IDNA hostname"),
        ("http://a.b/\x7f", "Invalid non-printable ASCII character in URL, '\\x7f' at position 11"),
        ("http://a.b/" + "x" * urls.MAX_URL, "URL too long"),
        ("//a.b:8080x", "Invalid port"),
    ],
)
def test_a_url_that_cannot_be_requested_says_why(url, why):
    with pytest.raises(ValueError, match="^" + re.escape(why)):
        urls.normal(url)


_PART = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x2FF), max_size=12)


@settings(derandomize=True, max_examples=200)
@given(
    host=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9.-]{0,20}", fullmatch=True),
    port=st.sampled_from(["", ":80", ":443", ":8080"]),
    path=_PART,
    query=st.none() | _PART,
    fragment=st.none() | _PART,
)
def test_normal_form_is_the_one_httpx_gives(host, port, path, query, fragment):
    """The same requests as web-fetch made before it left httpx (a dev dependency now)."""
    url = f"https://{host}{port}/{path.replace('?', '').replace('#', '')}"
    url += f"?{query.replace('#', '')}" if query is not None else ""
    url += f"#{fragment}" if fragment is not None else ""
    try:
        expected = str(httpx.URL(url))
    except httpx.InvalidURL:
        with pytest.raises(ValueError, match=r"^Invalid "):
            urls.normal(url)
        return
    assert urls.normal(url) == expected


def test_origin_is_scheme_host_and_port():
    assert urls.origin("https://a.b/x") == ("https", "a.b", 443)
    assert urls.origin("http://[::1]:8080/") == ("http", "::1", 8080)


# --- logins ---------------------------------------------------------------------------------


def test_a_login_goes_to_its_own_origin_only():
    login = Login.of("http://user:p%40ss@B\u00fccher.test:8080/a")
    assert login is not None
    assert login.user == "user"
    token = login.authorization
    assert login.headers("http://xn--bcher-kva.test:8080/b") == {"Authorization": token}
    assert login.headers("https://xn--bcher-kva.test:8080/b") == {}
    assert login.headers("http://xn--bcher-kva.test/b") == {}
    assert Login.of("http://a.b/") is None


def test_a_login_on_a_url_that_cannot_be_requested_is_bound_to_nothing():
    login = Login.of("http://user:pw@999.1.1.1/")
    assert login is not None
    assert login.origin is None
    assert login.headers("http://999.1.1.1/") == {}


# --- what a status line and headers say ------------------------------------------------------


def _answering(raw: bytes) -> tuple[str, socket.socket]:
    """A raw server on 127.0.0.1 that answers every request with `raw`."""

    def answer(conn: socket.socket) -> None:
        with conn:
            conn.sendall(raw)

    url, server = serve_raw(answer)
    return url, server


def _open(raw: bytes) -> tuple[Opened, bytes]:
    url, server = _answering(raw)
    try:
        deadline = Deadline(25)
        opened = wire.open_call(Call("GET", url, ()), deadline)
        body = bytes(read_body(opened, 1000, "127.0.0.1", deadline))
        opened.close()
    finally:
        server.close()
    return opened, body


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b"HTTP/1.1 404 Gone Fishing", "Gone Fishing"),
        (b"HTTP/1.1 404 ", "Not Found"),
        (b"HTTP/1.1 418 ", "I'm a teapot"),
        (b"HTTP/1.1 599 ", ""),
        (b"HTTP/1.1 404 Nicht gefunden \xfc", "Nicht gefunden"),
    ],
)
def test_the_reason_is_the_servers_own_or_the_standard_one(line, reason):
    opened, _ = _open(line + b"\r\nContent-Length: 2\r\n\r\nok")
    assert opened.reason == reason


@pytest.mark.loopback
def test_header_values_read_as_utf8_when_all_of_them_are():
    utf8 = "Location: /b\u00fccher\r\nX-A: caf\u00e9\r\n".encode()
    opened, body = _open(b"HTTP/1.1 302 Found\r\n" + utf8 + b"Content-Length: 2\r\n\r\nok")
    assert (opened.headers["location"], opened.headers["x-a"], body) == (
        "/b\u00fccher",
        "caf\u00e9",
        b"ok",
    )
    latin = "Location: /b\u00fccher\r\n".encode("latin-1")
    opened, _ = _open(b"HTTP/1.1 302 Found\r\n" + latin + b"Content-Length: 0\r\n\r\n")
    assert opened.headers["location"] == "/b\u00fccher"


@pytest.mark.loopback
def test_repeated_headers_are_kept_one_by_one_for_a_rendered_page():
    cookies = b"Set-Cookie: a=1\r\nSet-Cookie: b=2\r\n"
    opened, _ = _open(b"HTTP/1.1 200 OK\r\n" + cookies + b"Content-Length: 0\r\n\r\n")
    assert opened.headers["set-cookie"] == "a=1, b=2"
    assert [v for k, v in opened.headers.pairs if k == "Set-Cookie"] == ["a=1", "b=2"]


@pytest.mark.httpx_mock(should_mock=lambda _: False)  # a name, dialled for real
def test_a_pinned_connection_dials_the_pinned_address_not_what_dns_says_now(monkeypatch):
    """The guard vetted and pinned 127.0.0.1 for the name; a later DNS answer is not asked."""
    _, server = _answering(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    port = server.getsockname()[1]

    def rebound(*_: object) -> list[str]:
        raise AssertionError("the pinned name was looked up again")

    monkeypatch.setattr(wire, "resolve", rebound)
    pins = guard.Pins()
    pins.pin("pinned.test", "127.0.0.1")
    call = Call("GET", f"http://pinned.test:{port}/", ())
    try:
        opened = wire.open_call(call, Deadline(25), pins)
        opened.close()
    finally:
        server.close()
    assert opened.status == 200


# --- web-fetch's session on the layer --------------------------------------------------------


@pytest.fixture
def session(monkeypatch):
    from ikigai_web.common.settings import load
    from ikigai_web.fetch.network.session import Session

    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")
    with Session(load(), Deadline(25)) as made:
        yield made


def _refused(do: Any) -> ToolError:
    with pytest.raises(ToolError) as refused:
        do()
    return refused.value


@pytest.mark.loopback
def test_a_rendered_pages_request_follows_redirects_as_every_tool_does(session, fake_server):
    """A 303 after a POST goes on as a GET without its body; the credentials a request of
    the page carries stay with their origin."""
    target = fake_server.route("/to", Reply(200, b"arrived", {"Set-Cookie": "a=1"}))
    start = fake_server.route("/from", Reply(303, b"", {"Location": "/to"}))
    sent = {"Content-Type": "text/plain", "Cookie": "c=1"}
    answered = session.forward(start, sent, ("POST", b"body"), 1000)
    assert (answered.url, answered.status, answered.body) == (target, 200, b"arrived")
    assert ("Set-Cookie", "a=1") in answered.headers
    post, get = fake_server.seen
    assert (post.method, post.body, post.headers["Cookie"]) == ("POST", b"body", "c=1")
    assert (get.method, get.body, get.headers["Cookie"]) == ("GET", b"", "c=1")
    assert "Content-Type" not in get.headers


@pytest.mark.loopback
def test_a_rendered_pages_request_redirected_past_a_port_or_in_a_loop_is_refused(
    session, fake_server
):
    bad = fake_server.route("/bad", Reply(302, b"", {"Location": "http://127.0.0.1:99999/"}))
    err = _refused(lambda: session.forward(bad, {}, ("GET", None), 1000))
    assert (err.code, err.message) == (
        ErrorCode.HTTP_ERROR,
        "The page redirected to an unusable URL (Port out of range 0-65535).",
    )
    loop = fake_server.route("/loop", Reply(302, b"", {"Location": "/loop"}))
    err = _refused(lambda: session.forward(loop, {}, ("GET", None), 1000))
    assert err.message.startswith("too many redirects")


def test_a_host_idna_cannot_write_is_no_url(session):
    err = _refused(lambda: session.fetch("http://ab\u200b.com/"))
    assert err.code is ErrorCode.INVALID_INPUT
    assert "Invalid IDNA hostname" in err.message


@pytest.mark.loopback
def test_a_page_cut_short_is_a_dropped_connection(session):
    url, server = _answering(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
    try:
        err = _refused(lambda: session.fetch(url))
    finally:
        server.close()
    assert (err.code, err.message) == (
        ErrorCode.NETWORK_ERROR,
        "reset: connection dropped by 127.0.0.1: the answer was cut short",
    )


@pytest.mark.loopback
def test_no_request_leaves_once_the_deadline_passed(session, fake_server):
    url = fake_server.route("/page", Reply(200, b"page"))
    session.deadline.end = session.deadline.end - 60
    err = _refused(lambda: session.fetch(url))
    assert err.code is ErrorCode.NETWORK_ERROR
    assert err.message.startswith("timeout: 127.0.0.1 did not answer within the 25 s deadline")
    assert fake_server.seen == []
