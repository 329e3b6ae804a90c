"""The HTTP layer: client defaults, retries, error mapping, redaction."""

from __future__ import annotations

import email.utils
import gzip
import socket
import ssl
import time
import zlib

import httpx
import pytest
from conftest import Reply

from common import http
from common.errors import ErrorCode, ToolError
from common.settings import Settings

URL = "https://api.test/search?key=top-secret-key&q=x"


@pytest.fixture
def no_sleep(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("common.http.time.sleep", slept.append)
    return slept


def send(httpx_mock=None, deadline=None, **kwargs) -> http.Reply:
    deadline = deadline or http.Deadline(25)
    with http.client(Settings(), deadline) as c:
        return http.send(c, c.build_request("GET", URL), deadline, **kwargs)


def reply(status=200, body=b"", headers=None) -> http.Reply:
    return http.Reply(status, httpx.Headers(headers or {}), body, "api.test")


def test_client_defaults(httpx_mock):
    httpx_mock.add_response(url=URL)
    send()
    request = httpx_mock.get_request()
    assert request.headers["user-agent"].startswith("ikigai-web-tools/")
    assert "gzip" in request.headers["accept-encoding"]


def test_custom_user_agent(httpx_mock):
    httpx_mock.add_response()
    deadline = http.Deadline(25)
    with http.client(Settings(), deadline, user_agent="Mozilla/5.0", headers={"X-A": "1"}) as c:
        c.get("https://a.test/")
    assert httpx_mock.get_request().headers["user-agent"] == "Mozilla/5.0"
    assert httpx_mock.get_request().headers["x-a"] == "1"


def test_endpoint_override(monkeypatch):
    assert http.endpoint("X_API_URL", "https://default") == "https://default"
    monkeypatch.setenv("X_API_URL", " http://127.0.0.1:9/x ")
    assert http.endpoint("X_API_URL", "https://default") == "http://127.0.0.1:9/x"


@pytest.mark.parametrize(
    "value",
    ["localhost:8080", "ftp://a.test/", "http://", "http://a:99999/", "http://[::1", "http://a b/",
     "http://a:x/", "http://a/\tb"],
)  # fmt: skip
def test_a_malformed_endpoint_is_a_setting_error(monkeypatch, value):
    monkeypatch.setenv("X_API_URL", value)
    with pytest.raises(ToolError) as info:
        http.endpoint("X_API_URL", "https://default.test/v1")
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert "X_API_URL" in info.value.message
    assert "such as https://default.test/v1" in info.value.message


def test_connection_error_retried_once(httpx_mock, no_sleep):
    httpx_mock.add_exception(httpx.ConnectError("refused"))
    httpx_mock.add_response(json={"ok": True})
    assert send().json("P") == {"ok": True}
    assert len(no_sleep) == 1
    assert 0.2 <= no_sleep[0] <= 0.6


def test_connection_error_twice_is_network_error(httpx_mock, no_sleep):
    httpx_mock.add_exception(httpx.ConnectError("refused"), is_reusable=True)
    with pytest.raises(ToolError) as info:
        send()
    assert info.value.code is ErrorCode.NETWORK_ERROR
    assert info.value.message.startswith("connect:")
    assert len(httpx_mock.get_requests()) == 2


def test_server_error_retried_once_then_returned(httpx_mock, no_sleep):
    httpx_mock.add_response(status_code=502, is_reusable=True)
    assert send().status == 502
    assert len(httpx_mock.get_requests()) == 2


def test_server_error_then_success(httpx_mock, no_sleep):
    httpx_mock.add_response(status_code=503)
    httpx_mock.add_response(status_code=200)
    assert send().status == 200


def test_short_429_is_retried_after_the_wait(httpx_mock, no_sleep):
    httpx_mock.add_response(status_code=429, headers={"Retry-After": "2"})
    httpx_mock.add_response(status_code=200)
    assert send().status == 200
    assert no_sleep == [2.0]


def test_long_or_unknown_429_is_not_retried(httpx_mock, no_sleep):
    httpx_mock.add_response(status_code=429, headers={"Retry-After": "30"})
    assert send().status == 429
    httpx_mock.add_response(status_code=429)
    assert send().status == 429
    assert no_sleep == []


def test_wait_hint_overrides_retry_after(httpx_mock, no_sleep):
    httpx_mock.add_response(status_code=429)
    httpx_mock.add_response(status_code=200)
    assert send(wait_hint=lambda _: 1).status == 200
    assert no_sleep == [1.0]


def test_no_retry_when_the_deadline_cannot_fit_it(httpx_mock, no_sleep):
    httpx_mock.add_response(status_code=500)
    assert send(deadline=http.Deadline(0.5)).status == 500
    assert no_sleep == []


def test_timeout_is_not_retried(httpx_mock, no_sleep):
    httpx_mock.add_exception(httpx.ReadTimeout("slow"))
    with pytest.raises(ToolError) as info:
        send()
    assert info.value.message.startswith("timeout:")
    assert "api.test" in info.value.message


def test_deadline_applies_to_each_request(httpx_mock):
    httpx_mock.add_response()
    send(deadline=http.Deadline(3))
    timeout = httpx_mock.get_request().extensions["timeout"]
    assert 0 < timeout["read"] <= 3
    assert timeout["connect"] <= http.CONNECT_TIMEOUT


def _wrapped(outer: type[httpx.RequestError], inner: BaseException) -> httpx.HTTPError:
    """An httpx error chained to its low-level cause, as httpx raises them."""
    exc = outer(f"failed for {URL}", request=httpx.Request("GET", URL))
    exc.__cause__ = inner
    return exc


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (_wrapped(httpx.ConnectError, socket.gaierror(-2, "Name or service not known")), "DNS:"),
        (_wrapped(httpx.ConnectError, ssl.SSLCertVerificationError("bad cert")), "TLS:"),
        (_wrapped(httpx.ReadError, ConnectionResetError(104, "reset")), "reset:"),
        (_wrapped(httpx.ConnectError, ConnectionRefusedError(111, "refused")), "connect:"),
        (_wrapped(httpx.RemoteProtocolError, ValueError("eof")), "reset:"),
        (_wrapped(httpx.ConnectTimeout, TimeoutError()), "timeout: connecting to"),
        (_wrapped(httpx.PoolTimeout, TimeoutError()), "timeout: waiting for"),
        (_wrapped(httpx.UnsupportedProtocol, ValueError("x")), "network:"),
    ],
)
def test_network_error_says_which_kind_and_hides_the_query(exc, kind):
    err = http.network_error(exc)
    assert err.code is ErrorCode.NETWORK_ERROR
    assert err.message.startswith(kind)
    assert "top-secret-key" not in err.message


def test_deadline_expiry_is_named():
    deadline = http.Deadline(0.001)
    deadline.end -= 1
    err = http.network_error(_wrapped(httpx.ReadTimeout, TimeoutError()), deadline)
    assert "deadline" in err.message
    assert "IKIGAI_WEB_TIMEOUT" in err.message


def test_error_without_request_still_maps():
    assert http.network_error(httpx.ConnectError("x")).code is ErrorCode.NETWORK_ERROR


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({}, None),
        ({"Retry-After": "12"}, 12),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0),
    ],
)
def test_retry_after(headers, seconds):
    assert http.retry_after(reply(429, headers=headers)) == seconds


def test_retry_after_future_date():
    when = email.utils.formatdate(time.time() + 100, usegmt=True)
    assert 95 <= (http.retry_after(reply(429, headers={"Retry-After": when})) or 0) <= 100


def test_reply_json():
    assert reply(body=b'{"a": 1}').json("P") == {"a": 1}
    with pytest.raises(ToolError) as info:
        reply(body=b"<html><title>oops</title></html>").json("P")
    assert info.value.code is ErrorCode.API_ERROR
    assert "HTTP 200" in info.value.message
    assert "oops" in info.value.message
    assert reply(body=b"<html>").data() is None


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (
            b'{"a": NaN, "b": [Infinity, -Infinity], "c": 1e400}',
            {"a": None, "b": [None, None], "c": None},
        ),
        (b'{"n": 18446744073709551616}', {"n": 18446744073709551616.0}),
        (b'{"s": "caf\\u00e9"}', {"s": "café"}),
    ],
)
def test_one_odd_number_does_not_reject_the_whole_answer(body, value):
    assert reply(body=body).json("P") == value


def test_json_nested_too_deeply_is_not_json_and_not_a_crash():
    with pytest.raises(ToolError) as info:
        reply(body=b"[" * 100_000 + b"]" * 100_000).json("P")
    assert info.value.code is ErrorCode.API_ERROR


def test_reply_json_redacts_before_cutting():
    from common.redact import register_secret

    register_secret("AIzaSy-cut-me-0123456789")
    body = "x" * 290 + " https://g.test/v1?key=AIzaSy-cut-me-0123456789 " + "y" * 50
    with pytest.raises(ToolError) as info:
        reply(body=body.encode()).json("P")
    assert "AIzaSy" not in info.value.message


@pytest.mark.parametrize(
    ("charset", "body", "text"),
    [
        ("utf-7", b"+2D3cAQ-", "+2D3cAQ-"),  # UTF-7 would decode to a lone surrogate
        ("base64", b"aGk=", "aGk="),
        ("rot13", b"uryyb", "uryyb"),
        ("unicode_escape", b"\\ud800", "\\ud800"),
        ("iso-8859-1", b"caf\xe9", "café"),
        ("shift_jis", "日本".encode("shift_jis"), "日本"),
    ],
)
def test_reply_text_decodes_only_web_charsets(charset, body, text):
    got = reply(body=body, headers={"Content-Type": f"text/plain; charset={charset}"}).text
    assert got == text
    got.encode("utf-8")  # never a lone surrogate


@pytest.mark.parametrize(
    ("body", "ctype", "said"),
    [
        (b"", "text/plain", "P answered HTTP 401 with an empty body"),
        (b"  \n", "text/plain", "P answered HTTP 401 with an empty body"),
        (
            (
                b"<html><head><title>401 Authorization Required</title><style>h1{}</style></head>"
                b"<body><h1>401</h1></body></html>"
            ),
            "text/html",
            "P answered HTTP 401: 401 Authorization Required",
        ),
        (
            b"<html><body><script>x()</script><p>Go &amp; sign in</p>",
            "text/html",
            "P answered HTTP 401: Go & sign in",
        ),
        (b"Unauthorized", "text/plain", "P answered HTTP 401: Unauthorized"),
        (
            b"<p>\x00\x01</p>",
            "text/html",
            "P answered HTTP 401 with a body that says nothing readable",
        ),
    ],
)
def test_said_reads_every_kind_of_error_body_as_a_sentence(body, ctype, said):
    assert http.said("P", reply(401, body, {"Content-Type": ctype})) == said


def test_said_prefers_the_providers_own_detail():
    assert http.said("P", reply(400, b'{"x": 1}'), "bad q") == "P answered HTTP 400: bad q"


def test_gzip_bodies_are_decoded(httpx_mock):
    import gzip

    httpx_mock.add_response(
        content=gzip.compress(b'{"a": 2}'), headers={"Content-Encoding": "gzip"}
    )
    assert send().json("P") == {"a": 2}


def loopback_send(url: str) -> http.Reply:
    deadline = http.Deadline(10)
    with http.client(Settings(), deadline) as c:
        return http.send(c, c.build_request("GET", url), deadline)


@pytest.mark.loopback
def test_a_compression_bomb_stops_at_the_cap_without_inflating_it(fake_server):
    import gzip
    import tracemalloc

    bomb = gzip.compress(b"\0" * (200 * 1024 * 1024), compresslevel=9)
    url = fake_server.route("/bomb", Reply(200, bomb, {"Content-Encoding": "gzip"}))
    tracemalloc.start()
    with pytest.raises(ToolError) as info:
        loopback_send(url)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert info.value.code is ErrorCode.API_ERROR
    assert "larger than 4,194,304 bytes" in info.value.message
    assert peak < 32 * 1024 * 1024


@pytest.mark.loopback
def test_undecodable_body_is_api_error_not_a_crash(fake_server):
    url = fake_server.route("/bad", Reply(200, b"not gzip at all", {"Content-Encoding": "gzip"}))
    with pytest.raises(ToolError) as info:
        loopback_send(url)
    assert info.value.code is ErrorCode.API_ERROR
    assert "could not be decoded" in info.value.message
    assert "127.0.0.1" in info.value.message


def test_an_unknown_content_encoding_is_api_error(httpx_mock):
    httpx_mock.add_response(content=b"xx", headers={"Content-Encoding": "br"})
    with pytest.raises(ToolError) as info:
        send()
    assert info.value.code is ErrorCode.API_ERROR
    assert "'br'" in info.value.message


def test_excerpt_folds_spaces_masks_secrets_and_cuts():
    from common.redact import excerpt, register_secret

    register_secret("sk-excerpt-secret-42")
    text = "a\n\n b   c " + "sk-excerpt-secret-42 " + "z" * 500
    out = excerpt(text, 40)
    assert out.startswith("a b c *** z")
    assert len(out) == 40
    assert "sk-excerpt" not in excerpt("x" * 30 + "sk-excerpt-secret-42", 35)


def test_inflater_bounds_every_piece_of_a_gzip_bomb():
    bomb = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)
    inflater = http.Inflater("gzip")
    sizes = [len(piece) for piece in inflater.feed(bomb[:4096])]
    assert sizes
    assert max(sizes) <= http.CHUNK


def test_inflater_decodes_gzip_members_and_deflate_both_ways():
    two = gzip.compress(b"hello ") + gzip.compress(b"world")
    assert b"".join(http.Inflater("gzip").feed(two)) == b"hello world"
    assert b"".join(http.Inflater("deflate").feed(zlib.compress(b"wrapped"))) == b"wrapped"
    raw = zlib.compressobj(wbits=-15)
    data = raw.compress(b"raw deflate") + raw.flush()
    assert b"".join(http.Inflater("deflate").feed(data)) == b"raw deflate"
    assert b"".join(http.Inflater("identity").feed(b"plain")) == b"plain"


def test_inflater_refuses_unknown_and_corrupt_encodings():
    with pytest.raises(http.Undecodable) as caught:
        http.Inflater("br")
    assert caught.value.unsupported
    with pytest.raises(http.Undecodable) as caught:
        list(http.Inflater("gzip").feed(b"not gzip at all"))
    assert not caught.value.unsupported
