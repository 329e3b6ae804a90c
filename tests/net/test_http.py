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
from conftest import HANG_GUARD, STALL, Reply
from toolbox import serve_raw as _serve_once

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.settings import Settings
from ikigai_web.net import http, wire

URL = "https://api.test/search?key=top-secret-key&q=x"


def _client(deadline: http.Deadline, **options) -> http.Client:
    """A client on the tools' connection, which the tests route through pytest-httpx."""
    return http.client(Settings(), deadline, wire.open_call, **options)


@pytest.fixture
def no_sleep(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("ikigai_web.net.http.time.sleep", slept.append)
    return slept


def send(httpx_mock=None, deadline=None, **kwargs) -> http.Reply:
    deadline = deadline or http.Deadline(25)
    with _client(deadline) as c:
        return http.send(c, c.build_request("GET", URL), deadline, **kwargs)


def reply(status=200, body=b"", headers=None) -> http.Reply:
    return http.Reply(status, http.Headers.of((headers or {}).items()), body, "api.test")


def test_client_defaults(httpx_mock):
    httpx_mock.add_response(url=URL)
    send()
    request = httpx_mock.get_request()
    assert request.headers["user-agent"].startswith("ikigai-web-tools/")
    assert "gzip" in request.headers["accept-encoding"]


def test_custom_user_agent(httpx_mock):
    httpx_mock.add_response()
    deadline = http.Deadline(25)
    with _client(deadline, user_agent="Mozilla/5.0", headers={"X-A": "1"}) as c:
        http.send(c, c.build_request("GET", "https://a.test/"), deadline)
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


def _failed(exc: BaseException, *, connecting: bool = False) -> http.Unreachable:
    """A low-level failure as http.client raises it: chained to its socket-level cause."""
    outer = OSError(f"failed for {URL}")
    outer.__cause__ = exc
    return http.unreachable(outer, connecting=connecting)


@pytest.mark.parametrize(
    ("exc", "connecting", "kind"),
    [
        (socket.gaierror(-2, "Name or service not known"), True, "DNS:"),
        (http.Unresolved("no address"), True, "DNS:"),
        (ssl.SSLCertVerificationError("bad cert"), True, "TLS:"),
        (ConnectionResetError(104, "reset"), False, "reset:"),
        (ConnectionRefusedError(111, "refused"), True, "connect:"),
        (ValueError("eof"), False, "reset:"),
        (TimeoutError(), True, "timeout: connecting to"),
        (http.DNSTimeout(), False, "timeout: connecting to"),
        (TimeoutError(), False, "timeout: waiting for"),
    ],
)
def test_network_error_says_which_kind_and_hides_the_query(exc, connecting, kind):
    err = http.network_error(_failed(exc, connecting=connecting), "api.test")
    assert err.code is ErrorCode.NETWORK_ERROR
    assert err.message.startswith(kind)
    assert "api.test" in err.message
    assert "top-secret-key" not in err.message


def test_deadline_expiry_is_named():
    deadline = http.Deadline(0.001)
    deadline.end -= 1
    err = http.network_error(_failed(TimeoutError()), "api.test", deadline)
    assert "deadline" in err.message
    assert "IKIGAI_WEB_TIMEOUT" in err.message


def test_a_cause_without_a_chain_still_maps():
    err = http.network_error(http.unreachable(RuntimeError()), "api.test")
    assert err.message == "reset: connection dropped by api.test: the connection broke"


def test_user_info_becomes_basic_auth_and_leaves_the_url():
    with _client(http.Deadline(5)) as c:
        call = c.build_request("GET", "https://us%40r:p%3Ass@a.test/s?q=1")
    assert call.url == "https://a.test/s?q=1"
    assert dict(call.headers)["Authorization"] == "Basic dXNAcjpwOnNz"  # us@r:p:ss


@pytest.mark.parametrize(
    ("status", "method", "to", "kept"),
    [
        (302, "GET", "http://other.test/x", False),
        (307, "POST", "https://a.test:8443/x", False),
        (301, "GET", "https://a.test/x", True),  # the same host, upgraded to https
        (308, "GET", "/x", True),
    ],
)
def test_a_redirect_keeps_credentials_only_on_the_same_origin(status, method, to, kept):
    call = http.Call(method, "http://a.test/s", (("Authorization", "Basic x"), ("Cookie", "c")))
    moved = http.redirected(call, status, http.usable_location(call.url, to) or "")
    assert (("Authorization", "Basic x") in moved.headers) is kept
    assert (("Cookie", "c") in moved.headers) is kept
    assert moved.method == method


def test_303_and_a_redirected_post_become_a_body_less_get():
    call = http.Call("POST", "https://a.test/", (("Content-Type", "application/json"),), b"{}")
    for status in (301, 302, 303):
        moved = http.redirected(call, status, "https://a.test/next")
        assert (moved.method, moved.body, moved.headers) == ("GET", b"", ())


def test_an_international_host_is_sent_in_its_ascii_form():
    from ikigai_web.net import wire

    assert wire._ascii("bücher.example") == "xn--bcher-kva.example"
    assert wire._ascii("a.test") == "a.test"


def test_an_international_host_is_encoded_as_web_fetch_encodes_it():
    from ikigai_web.net import urls, wire

    # IDNA 2008 keeps the sharp s (IDNA 2003 made it "ss"): one encoder for every tool.
    assert wire._ascii("stra\u00dfe.de") == urls.idn("Stra\u00dfe.de") == "xn--strae-oqa.de"
    with pytest.raises(ValueError, match="Invalid IDNA hostname"):
        wire._ascii("ab\u200b.com")


def _loopback(seconds: float = 25) -> tuple[http.Client, http.Deadline]:
    deadline = http.Deadline(seconds)
    return _client(deadline, follow_redirects=True), deadline


@pytest.mark.loopback
def test_basic_auth_never_follows_a_redirect_to_another_origin(fake_server):
    port = fake_server.url.rsplit(":", 1)[1]
    fake_server.route("/end", Reply(200, {"ok": True}))
    elsewhere = f"http://localhost:{port}/end"
    fake_server.route("/start", Reply(302, b"", {"Location": elsewhere}))
    c, deadline = _loopback()
    url = fake_server.url.replace("//", "//user:pw@") + "/start"
    assert http.send(c, c.build_request("GET", url), deadline).json("P") == {"ok": True}
    first, then = fake_server.seen
    assert first.headers["Authorization"] == "Basic dXNlcjpwdw=="
    assert "Authorization" not in then.headers
    assert then.headers["Host"] == f"localhost:{port}"


@pytest.mark.loopback
def test_a_redirect_loop_is_an_api_error(fake_server):
    url = fake_server.route("/loop", Reply(302, b"", {"Location": "/loop"}))
    c, deadline = _loopback()
    with pytest.raises(ToolError) as info:
        http.send(c, c.build_request("GET", url), deadline)
    assert info.value.code is ErrorCode.API_ERROR
    assert len(fake_server.seen) == http.MAX_REDIRECTS + 1


@pytest.mark.loopback
def test_a_body_cut_short_of_its_length_is_a_reset_not_a_short_answer(no_sleep):
    def cut(conn: socket.socket) -> None:
        conn.sendall(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"a":')
        conn.close()

    url, server = _serve_once(cut)
    c, deadline = _loopback()
    with pytest.raises(ToolError) as info:
        http.send(c, c.build_request("GET", url), deadline)
    server.close()
    assert info.value.code is ErrorCode.NETWORK_ERROR
    assert info.value.message.startswith("reset:")
    assert len(no_sleep) == 1  # retried once, as any dropped connection


@pytest.mark.loopback
def test_a_dribbling_answer_ends_at_the_deadline_not_at_each_read():
    import threading

    stop = threading.Event()

    def dribble(conn: socket.socket) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
        while not stop.wait(0.05):  # a byte well inside any read timeout, forever
            try:
                conn.sendall(b" ")
            except OSError:
                return

    url, server = _serve_once(dribble)
    c, deadline = _loopback(1)
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        http.send(c, c.build_request("GET", url), deadline)
    stop.set()
    server.close()
    assert "within the 1 s deadline" in info.value.message  # not a read timeout per byte
    assert time.monotonic() - started < HANG_GUARD


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
    from ikigai_web.common.redact import register_secret

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
    assert http.answer_summary("P", reply(401, body, {"Content-Type": ctype})) == said


def test_said_prefers_the_providers_own_detail():
    assert (
        http.answer_summary("P", reply(400, b'{"x": 1}'), "bad q") == "P answered HTTP 400: bad q"
    )


def test_gzip_bodies_are_decoded(httpx_mock):
    import gzip

    httpx_mock.add_response(
        content=gzip.compress(b'{"a": 2}'), headers={"Content-Encoding": "gzip"}
    )
    assert send().json("P") == {"a": 2}


def loopback_send(url: str) -> http.Reply:
    deadline = http.Deadline(25)
    with _client(deadline) as c:
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
    from ikigai_web.common.redact import excerpt, register_secret

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


def test_a_bad_ca_bundle_setting_is_a_setting_error(monkeypatch, tmp_path):
    http.tls_context.cache_clear()
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "missing.pem"))
    with pytest.raises(ToolError) as info:
        http.tls_context()
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert "SSL_CERT_FILE" in info.value.message


def test_the_ca_bundle_is_certifis_unless_the_environment_names_one(monkeypatch):
    http.tls_context.cache_clear()
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    context = http.tls_context()
    http.tls_context.cache_clear()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert context.get_ca_certs()


def test_a_name_idna_cannot_encode_is_unresolved_at_once():
    started = time.monotonic()
    with pytest.raises(http.Unresolved):
        http.resolve("ü" * 70 + ".example", 443, STALL)
    assert time.monotonic() - started < HANG_GUARD  # not the whole wait for a thread that died


# --- TLS, through the tools' own connection -------------------------------------------------


@pytest.fixture
def tls_site(tmp_path, monkeypatch):
    """An HTTPS server on 127.0.0.1 named localhost, whose CA the tools trust through
    SSL_CERT_FILE: `/ok` answers JSON, `/dribble` sends its body a byte at a time, forever."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    stop = threading.Event()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:
            body = b'{"ok": true}'
            self.send_response(200)
            self.send_header("Content-Length", "100000" if self.path == "/dribble" else "12")
            self.end_headers()
            if self.path != "/dribble":
                self.wfile.write(body)
                return
            while not stop.wait(0.05):
                try:
                    self.wfile.write(b" ")
                    self.wfile.flush()
                except OSError:
                    return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    http.tls_context.cache_clear()
    yield f"https://localhost:{server.server_address[1]}"
    stop.set()
    server.shutdown()
    server.server_close()
    http.tls_context.cache_clear()


@pytest.mark.loopback
def test_https_is_verified_against_the_trusted_authorities(tls_site):
    c, deadline = _loopback()
    assert http.send(c, c.build_request("GET", tls_site + "/ok"), deadline).json("P") == {
        "ok": True
    }


@pytest.mark.loopback
def test_a_certificate_from_an_unknown_authority_is_a_tls_error(tls_site, monkeypatch, no_sleep):
    monkeypatch.delenv("SSL_CERT_FILE")
    http.tls_context.cache_clear()  # certifi's authorities, which never signed this one
    c, deadline = _loopback()
    with pytest.raises(ToolError) as info:
        http.send(c, c.build_request("GET", tls_site + "/ok"), deadline)
    assert info.value.code is ErrorCode.NETWORK_ERROR
    assert info.value.message.startswith("TLS: secure connection failed with localhost")


@pytest.mark.loopback
def test_a_dribbling_https_answer_ends_at_the_deadline(tls_site):
    c, deadline = _loopback(1)
    started = time.monotonic()
    with pytest.raises(ToolError) as info:
        http.send(c, c.build_request("GET", tls_site + "/dribble"), deadline)
    assert "within the 1 s deadline" in info.value.message
    assert time.monotonic() - started < HANG_GUARD
