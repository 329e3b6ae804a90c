"""web-fetch against real HTTP servers on 127.0.0.1: content, charsets, redirects, limits, robots.

The servers here write raw responses (chunked, gzip, stalls); private addresses are let through
with IKIGAI_WEB_FETCH_ALLOW_PRIVATE or IKIGAI_WEB_FETCH_ALLOW_HOSTS as each test says."""

from __future__ import annotations

import base64
import gzip
import socket
import time
from typing import TYPE_CHECKING

import orjson
import pytest
from conftest import HANG_GUARD, STALL

if TYPE_CHECKING:
    from http.server import BaseHTTPRequestHandler
    from pathlib import Path
from fetch_http_support import (
    ARTICLE,
    Handler,
    _stall,
    _valid,
    fetch,
    make_pdf,
    redirect,
    reply,
)

pytestmark = pytest.mark.loopback


# ---------------------------------------------------------------- content types


def test_html_main_content_with_absolute_links(web, private):
    url = web.route("/a/page.html", reply(ARTICLE))
    out = fetch(url)
    assert out["success"] is True, out
    assert out["url"] == url
    assert out["content_type"] == "text/html"
    assert "first paragraph has" in out["content"]
    assert f"({web.url}/docs/page.html)" in out["content"]
    assert "1. first item" in out["content"]
    assert "Copyright footer" not in out["content"]
    assert out["title"]
    assert out["author"] == "Ann Author"
    assert out["description"] == "About things."
    assert out["total_lines"] == len(out["content"].split("\n"))
    assert out["truncated"] is False
    assert "next_offset" not in out
    assert out.get("page_type", "article") == "article"  # named when clear, never another
    assert "warnings" not in out


def test_app_shell_says_it_needs_javascript_through_the_tool(web, private):
    shell = b"<html><head><title>App</title></head><body><div id='root'></div></body></html>"
    out = fetch(web.route("/app", reply(shell)))
    assert out["success"] is True, out
    assert out["content"] == ""
    assert [w["code"] for w in out["warnings"]] == ["NEEDS_JAVASCRIPT"]
    again = fetch(web.route("/app", reply(shell)))  # served from the cache: the same answer
    assert again["warnings"] == out["warnings"]
    assert again.get("page_type") == out.get("page_type")


def test_an_app_shell_not_rendered_says_how_this_machine_could_render_it(
    web, private, monkeypatch, tmp_path
):
    shell = b"<html><head><title>App</title></head><body><div id='root'></div></body></html>"
    chromium = tmp_path / "chromium"  # a browser installed: never run, since render is never
    chromium.write_text("#!/bin/sh\nexit 1\n")
    chromium.chmod(0o755)
    monkeypatch.setenv("IKIGAI_WEB_FETCH_BROWSER", str(chromium))
    url = web.route("/app", reply(shell))
    for call in range(2):  # fetched, then cached: the advice is for this machine, now
        [warning] = fetch(url, render="never")["warnings"]
        assert warning["code"] == "NEEDS_JAVASCRIPT"
        assert 'call again with render "auto"' in warning["message"], call
        assert "another source" not in warning["message"]
    monkeypatch.setenv("IKIGAI_WEB_FETCH_BROWSER", str(tmp_path / "gone"))  # none installed
    for mode in ("never", "auto"):
        [warning] = fetch(url, render=mode)["warnings"]
        assert "No browser here can render it (IKIGAI_WEB_FETCH_BROWSER=" in warning["message"]
        assert "pip install 'ikigai-web-tools[browser]'" in warning["message"]
        assert 'render "auto"' not in warning["message"]


PROSE = (
    "The committee met twice before the vote, and each member explained the reasons for the "
    "position they took, at length and in writing. "
) * 3


def test_a_page_of_a_clear_type_is_named_through_the_tool(web, private):
    head = "<meta property='og:type' content='article'><script type='application/ld+json'>"
    head += '{"@type": "NewsArticle", "headline": "The vote"}</script>'
    body = f"<h1>The vote</h1><p class='byline'>By Jane Doe</p>{f'<p>{PROSE}</p>' * 3}"
    html = f"<html><head><title>The vote</title>{head}</head><body><article>{body}</article>"
    out = fetch(web.route("/news/2024/05/the-vote", reply(html)))
    assert out["success"] is True, out
    assert out["page_type"] == "article"


def test_a_page_of_no_clear_type_is_read_but_not_named_through_the_tool(web, private):
    # Prose, a grid of priced items to buy, posts with replies, code, calls to action: a page
    # that is a bit of everything, which the model cannot tell apart with confidence.
    items = "".join(
        f"<li class='card'><a href='/x/{n}'>Lamp model {n}</a> <span>$ {n}9.00</span>"
        "<button>Add to cart</button></li>"
        for n in range(6)
    )
    posts = "".join(
        f"<div class='post'><p>Reply {n}: {PROSE[:120]}</p><a href='/u/{n}'>member{n}</a>"
        " replies</div>"
        for n in range(3)
    )
    html = (
        f"<html><head><title>Notes</title></head><body><h1>Notes</h1><p>{PROSE}</p>"
        f"<ul>{items}</ul>{posts}<pre><code>x = 1</code></pre>"
        "<a href='/contact'>Contact us</a> <a href='/pricing'>Pricing</a></body></html>"
    )
    out = fetch(web.route("/page", reply(html)))
    assert out["success"] is True, out
    assert "page_type" not in out
    assert "The committee met twice" in out["content"]  # read all the same


def test_request_headers(web, private):
    url = web.route("/p", reply(ARTICLE))
    fetch(url)
    headers = {k.lower(): v for k, v in web.seen[-1][1].items()}
    assert headers["user-agent"].startswith("ikigai-web-tools/")
    assert headers["accept"].startswith("text/html")
    assert "gzip" in headers["accept-encoding"]


def test_user_agent_setting(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_USER_AGENT", "my-agent/2.0")
    fetch(web.route("/p", reply(ARTICLE)))
    assert all(h["User-Agent"] == "my-agent/2.0" for _, h in web.seen)


def test_include_links_false_and_full_page(web, private):
    url = web.route("/p", reply(ARTICLE))
    plain = fetch(url, include_links=False)
    assert "relative link" in plain["content"]
    assert "](" not in plain["content"]
    whole = fetch(url, full_page=True)
    assert "About us menu" in whole["content"]
    assert "About us menu" not in fetch(url)["content"]


def test_xhtml(web, private):
    page = (
        '<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        "<head><title>X</title></head><body><h1>XHTML heading</h1><p>"
        + "Some xhtml words in a paragraph. " * 20
        + "</p></body></html>"
    )
    out = fetch(web.route("/x", reply(page, "application/xhtml+xml")))
    assert out["content_type"] == "application/xhtml+xml"
    assert "Some xhtml words" in out["content"]


@pytest.mark.parametrize("ctype", ["text/plain; charset=utf-8", "text/markdown"])
def test_text_and_markdown_as_is(web, private, ctype):
    text = "# Title\n\n* keep <b>this</b> exactly\n\n    code\n"
    out = fetch(web.route("/t", reply(text, ctype)))
    assert out["content"] == text.rstrip("\n")
    assert out["content_type"] == ctype.split(";")[0]


@pytest.mark.parametrize("ctype", ["application/json", "application/problem+json"])
def test_json_pretty_in_a_fence(web, private, ctype):
    out = fetch(web.route("/j", reply(b'{"k":[1,{"n":null}]}', ctype)))
    assert out["content"].startswith('```json\n{\n  "k": [')
    assert out["content"].endswith("\n```")
    assert out["content_type"] == ctype


@pytest.mark.parametrize(
    "ctype", ["application/pdf", "application/x-pdf", "application/octet-stream", None]
)
def test_pdf_text_and_metadata(web, private, ctype):
    out = fetch(web.route("/doc.pdf", reply(make_pdf("Hello from a PDF"), ctype)))
    assert out["success"] is True, out
    assert out["content_type"] == "application/pdf"
    assert "Hello from a PDF" in out["content"]
    assert out["title"] == "A PDF Title"
    assert out["author"] == "Pat Writer"
    assert out["date"] == "2024-03-05"
    assert out["description"] == "Growing tomatoes"


@pytest.mark.parametrize("date", [b"(D:2024-13-99)", b"(yesterday)", b"42", b"()"])
def test_a_pdf_date_that_does_not_parse_is_left_out(web, private, date):
    pdf = make_pdf("Hello from a PDF", info=b"/Title (T) /CreationDate " + date)
    out = fetch(web.route("/doc.pdf", reply(pdf, "application/pdf")))
    assert out["success"] is True, out
    assert "date" not in out


def test_missing_content_type_is_sniffed_as_html(web, private):
    out = fetch(web.route("/n", reply(ARTICLE, None)))
    assert out["content_type"] == "text/html"
    assert "first paragraph has" in out["content"]


def test_unsupported_content(web, private):
    out = fetch(web.route("/img", reply(b"\x89PNG\r\n\x1a\n\0\0\0", "image/png")))
    assert out["error_code"] == "UNSUPPORTED_CONTENT"
    assert "image/png" in out["error"]


def test_broken_pdf_is_parse_error(web, private):
    out = fetch(web.route("/bad.pdf", reply(b"%PDF-1.7\nbroken", "application/pdf")))
    assert out["error_code"] == "PARSE_ERROR"


@pytest.mark.parametrize("body", [b"", b"   \n"])
def test_an_empty_html_page_is_the_empty_wall(web, private, body):
    out = fetch(web.route("/empty", reply(body, "text/html")))
    assert out["error_code"] == "HTTP_ERROR", out
    assert out["wall"] == "empty"
    assert "no text at all" in out["error"]


# ---------------------------------------------------------------- charsets

JAPANESE = "日本語の記事です。文字コードを宣言しないページでも正しく読めるはずです。" * 15
FRENCH = "Le café était très agréable, même si la crème brûlée était déjà froide. " * 15
GREEK_UTF8 = "Καλημέρα κόσμε — “quotes” and emoji 🙂 in UTF-8. " * 15


def _undeclared(text: str) -> str:
    return f"<html><head></head><body><article><p>{text}</p></article></body></html>"


@pytest.mark.parametrize(
    ("text", "encoding"), [(JAPANESE, "shift_jis"), (FRENCH, "cp1252"), (GREEK_UTF8, "utf-8")]
)
def test_undeclared_charsets_are_detected(web, private, text, encoding):
    body = _undeclared(text).encode(encoding)
    out = fetch(web.route("/c", reply(body, "text/html")))
    assert out["success"] is True, out
    assert text[:40] in out["content"]
    assert "\ufffd" not in out["content"]


def test_charset_from_header_meta_and_bom(web, private):
    sjis = _undeclared(JAPANESE).encode("shift_jis")
    by_header = fetch(web.route("/h", reply(sjis, "text/html; charset=Shift_JIS")))
    meta = f'<html><head><meta charset="shift_jis"></head><body><p>{JAPANESE}</p></body></html>'
    by_meta = fetch(web.route("/m", reply(meta.encode("shift_jis"), "text/html")))
    bom = "\ufeff" + _undeclared(FRENCH)
    by_bom = fetch(web.route("/b", reply(bom.encode("utf-16"), "text/html")))
    assert JAPANESE[:10] in by_header["content"]
    assert JAPANESE[:10] in by_meta["content"]
    assert FRENCH[:30] in by_bom["content"]


# Python codecs that are not a browser's text encodings: each crashed or made lone surrogates.
NOT_CHARSETS = [
    "base64", "rot13", "zlib", "idna", "hex", "uu", "bz2", "quopri", "punycode", "utf-7",
    "unicode_escape", "raw_unicode_escape", "utf-32", "x-user-defined", "replacement",
    "iso-2022-kr", "mbcs", "undefined",
]  # fmt: skip
TRAP = "caf\u00e9 +2AA- \\ud800 +AGEAYgBj- 78 9c"  # what UTF-7 and unicode_escape would decode


@pytest.mark.parametrize("label", NOT_CHARSETS)
@pytest.mark.parametrize("where", ["header", "meta", "xml"])
def test_a_label_that_is_not_a_text_encoding_is_unknown(web, private, label, where):
    page = f"<html><head><title>T</title></head><body><article><p>{TRAP}</p></article></body>"
    if where == "meta":
        page = page.replace("<title>", f'<meta charset="{label}"><title>')
    if where == "xml":
        page = f'<?xml version="1.0" encoding="{label}"?>{page}'
    ctype = f"text/html; charset={label}" if where == "header" else "text/html"
    out = fetch(web.route("/c", reply(page.encode(), ctype)))
    _valid(out)
    assert TRAP in out["content"]


@pytest.mark.parametrize("label", NOT_CHARSETS)
def test_an_error_page_with_such_a_label(web, private, label):
    body = f"<html><head><title>Gone {TRAP}</title></head></html>".encode()
    out = fetch(web.route("/e", reply(body, f"text/html; charset={label}", 500)))
    _valid(out)
    assert out["error_code"] == "HTTP_ERROR"
    assert "Gone caf\u00e9 +2AA- " in out["error"]


@pytest.mark.parametrize("label", ["utf-7", "unicode_escape", "base64"])
def test_such_a_label_on_plain_text_and_json(web, private, label):
    text = fetch(web.route("/t", reply(TRAP.encode(), f"text/plain; charset={label}")))
    assert text["content"] == TRAP
    data = orjson.dumps({"k": TRAP})
    out = fetch(web.route("/j", reply(data, f"application/json; charset={label}")))
    assert TRAP.replace("\\", "\\\\") in out["content"]


def test_bom_outranks_the_header_as_in_a_browser(web, private):
    body = "\ufeff" + FRENCH
    out = fetch(web.route("/b", reply(body.encode("utf-16-be"), "text/plain; charset=utf-16le")))
    assert out["content"] == FRENCH


@pytest.mark.parametrize("depth", [254, 300, 1024, 1025, 100_000])
@pytest.mark.parametrize("ctype", ["application/json", None])
def test_json_nested_too_deeply_is_shown_as_sent(web, private, depth, ctype):
    body = b'{"a":' * depth + b"1" + b"}" * depth
    url = web.route("/deep", reply(body, ctype))
    out = fetch(url)
    assert out["success"] is True, out
    assert out["content_type"] == "application/json"
    if depth > 254:
        assert out["content"].startswith('```json\n{"a":{"a":')
        assert out["warnings"][0]["code"] == "JSON_AS_SENT"
        assert "shown as sent, not re-indented" in out["warnings"][0]["message"]


@pytest.mark.parametrize("body", [b"[1e999]", b'{"s": "\\ud800"}', b'["\\udc00x"]'])
def test_valid_json_the_parser_refuses_is_shown_as_sent(web, private, body):
    out = fetch(web.route("/j", reply(body, "application/json")))
    _valid(out)
    assert out["content"] == f"```json\n{body.decode()}\n```"
    assert "shown as sent" in out["warnings"][0]["message"]


def surrogate_pdf() -> bytes:
    """A PDF whose ToUnicode map gives lone surrogates, which pypdf passes on as they are."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def "
        b"1 begincodespacerange <00> <FF> endcodespacerange "
        b"2 beginbfchar <41> <D800> <42> <DC00D83D> endbfchar "
        b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    stream = b"<< /Length %d >>\nstream\n%s\nendstream" % (len(cmap), cmap)
    return make_pdf("ABBA okay", b"/ToUnicode 7 0 R ", stream)


def test_text_with_lone_surrogates_is_made_valid(web, private):
    out = fetch(web.route("/s.pdf", reply(surrogate_pdf(), "application/pdf")))
    _valid(out)
    assert out["success"] is True, out
    assert "\ufffd" in out["content"]
    assert "okay" in out["content"]


@pytest.mark.parametrize("bad", [b"\xff", b"\xe9", b"\xc3", b"\xed\xa0\x80", b"\xf0\x9f\x99"])
@pytest.mark.parametrize("ctype", ["text/html", "text/plain", None, "sniffed text"])
def test_unlabelled_utf8_with_a_bad_byte_stays_utf8(web, private, bad, ctype):
    text = GREEK_UTF8 if ctype in ("text/plain", "sniffed text") else _undeclared(GREEK_UTF8)
    ctype = None if ctype == "sniffed text" else ctype
    middle = len(text.encode()) // 2
    middle = text.encode().index(b" ", middle)
    body = text.encode()[:middle] + bad + text.encode()[middle:]
    out = fetch(web.route("/u", reply(body, ctype)))
    assert GREEK_UTF8[:60] in out["content"], out
    assert GREEK_UTF8[-60:].strip() in out["content"]
    assert "\ufffd" in out["content"]


# ---------------------------------------------------------------- redirects


def test_redirect_chain_reports_the_final_url(web, private):
    final = web.route("/final", reply(ARTICLE))
    web.route("/r2", redirect("/final", 301))
    web.route("/r1", redirect(web.url + "/r2", 307))
    out = fetch(web.url + "/r1")
    assert out["url"] == final
    assert web.paths().count("/final") == 1


def test_five_redirects_are_followed_six_are_too_many(web, private):
    web.route("/end", reply(ARTICLE))
    for i in range(6):
        web.route(f"/h{i}", redirect(f"/h{i + 1}" if i < 5 else "/end"))
    assert fetch(web.url + "/h1")["success"] is True  # h1..h5: five redirects
    out = fetch(web.url + "/h0")
    assert out["error_code"] == "HTTP_ERROR"
    assert "too many redirects" in out["error"]


def test_redirect_loop(web, private):
    web.route("/a", redirect("/b"))
    web.route("/b", redirect("/a"))
    out = fetch(web.url + "/a")
    assert out["error_code"] == "HTTP_ERROR"
    assert "too many redirects" in out["error"]
    assert len(web.paths()) <= 4


@pytest.mark.parametrize(
    "location", ["ftp://example.com/x", "file:///etc/passwd", "javascript:alert(1)"]
)
def test_redirect_to_another_scheme_is_blocked(web, private, location):
    out = fetch(web.route("/r", redirect(location)))
    assert out["error_code"] == "BLOCKED_URL"
    assert "http" in out["error"]


# ---------------------------------------------------------------- credentials in the URL

USER, PASSWORD = "agent-user", "pw-Z9q!x@7"  # '@' and '!' are percent-encoded in the URL
USERINFO = "agent-user:pw-Z9q%21x%407@"
TOKEN = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
SECRETS = ("pw-Z9q", "%21x%407", TOKEN, "agent-user", "KEY-1f2e3d", "SIG-9a8b7c", "TOK-5d6e")
SECRET_QUERY = "api_key=KEY-1f2e3d&q=cats&X-Amz-Signature=SIG-9a8b7c&access_token=TOK-5d6e"
PLAIN = """<html><head><title>Plain</title></head><body><article>
<p>A page with no site name of its own, so the host becomes one, and with
<a href="#top">a same-page link</a>, <a href="">an empty link</a> and
<a href="?page=2">a query link</a>, all resolved against the page's address. More words to make
this paragraph the main content of the page for the extractor to keep it whole and unchanged.</p>
</article></body></html>"""


def _leaks(*texts: str) -> list[str]:
    return [secret for secret in SECRETS for text in texts if secret in text]


def _cache_text(tmp_path: Path) -> str:
    files = (tmp_path / "cache").rglob("*")
    return "".join(f.read_text(errors="replace") for f in files if f.is_file())


def _with_userinfo(url: str) -> str:
    return url.replace("http://", f"http://{USERINFO}", 1)


def _echo_headers(h: BaseHTTPRequestHandler) -> None:
    lines = "".join(f"<p>{k}: {v}</p>" for k, v in h.headers.items())
    reply(f"<html><body><article>{lines}</article></body></html>")(h)


def test_userinfo_is_basic_auth_and_is_never_shown(web, private, tmp_path):
    web.route("/p", reply(PLAIN))
    url = f"{web.url}/p?{SECRET_QUERY}"
    out = fetch(_with_userinfo(url), full_page=True)
    assert out["success"] is True, out
    assert out["url"] == f"{web.url}/p?api_key=***&q=cats&X-Amz-Signature=***&access_token=***"
    assert f"({out['url']}#top)" in out["content"]
    assert out.get("site_name", web.host_port) == web.host_port
    assert _leaks(orjson.dumps(out).decode(), _cache_text(tmp_path)) == []
    # The page's own request, found by its path: robots.txt, or a soft-404 probe, may be
    # asked beside it, and never with the credentials (test_the_probe_never_carries_...).
    [asked] = [dict(headers) for path, headers in web.seen if path == "/p"]
    assert asked["Authorization"] == f"Basic {TOKEN}"
    others = [dict(headers) for path, headers in web.seen if path != "/p"]
    assert others
    assert all("Authorization" not in h for h in others)
    assert fetch(url)["success"] is True  # another cache entry: sent without credentials
    again = [dict(headers) for path, headers in web.seen if path == "/p"]
    assert len(again) == 2
    assert "Authorization" not in again[-1]


def test_the_soft404_probe_never_carries_credentials(web, private):
    """A page that may be its site's not-found page (it repeats its own path) is compared
    with the site's answer to a random path: that request is the tool's, not the user's."""
    gone = "<title>Shop</title><main><h2>Hmm.</h2><p>Nothing at /old/item today.</p></main>"
    web.route("/old/item", reply(gone))
    out = fetch(_with_userinfo(web.url + "/old/item"))
    assert out["success"] is True, out  # the site answers a missing path with a real 404
    [page] = [dict(headers) for path, headers in web.seen if path == "/old/item"]
    assert page["Authorization"] == f"Basic {TOKEN}"
    probes = [dict(h) for path, h in web.seen if path not in ("/old/item", "/robots.txt")]
    assert len(probes) == 1
    assert "Authorization" not in probes[0]


def test_a_page_that_echoes_the_credentials_shows_them_masked(web, private, tmp_path):
    out = fetch(_with_userinfo(web.route("/echo", _echo_headers)), full_page=True)
    assert f"Basic {TOKEN}" in web.seen[-1][1]["Authorization"]
    assert "Authorization: Basic ***" in out["content"]
    assert _leaks(orjson.dumps(out).decode(), _cache_text(tmp_path)) == []


def test_credentials_follow_same_origin_redirects_only(web, other_web, private):
    other_web.route("/there", reply(PLAIN))
    web.route("/here", reply(PLAIN))
    web.route("/hop", redirect("/here"))
    web.route("/away", redirect(other_web.url + "/there"))
    web.route("/login", redirect(other_web.url.replace("//", "//evil:pw-of-the-page@") + "/there"))
    assert fetch(_with_userinfo(web.url + "/hop"))["success"] is True
    assert web.seen[-1][0] == "/here"
    assert web.seen[-1][1]["Authorization"] == f"Basic {TOKEN}"
    for path in ("/away", "/login"):
        out = fetch(_with_userinfo(web.url + path))
        assert out["url"] == other_web.url + "/there"
        assert "Authorization" not in other_web.seen[-1][1]


@pytest.mark.parametrize(
    "handler",
    [
        reply("<title>Gone</title>", status=404),
        reply("x" * 5000, "text/plain", headers={"Content-Length": "99999999999"}),
        reply(b"\x89PNG\r\n", "image/png"),
        reply(b"%PDF-1.4 broken", "application/pdf"),
        reply(b"{oops", "application/json"),
        reply(b"", None, 302),
    ],
)
def test_error_messages_never_show_credentials(web, private, handler):
    url = web.route("/e", handler)
    out = fetch(_with_userinfo(url) + "?" + SECRET_QUERY)
    assert out["success"] is False, out
    assert _leaks(out["error"]) == []


def test_error_messages_about_redirects_never_show_credentials(web, private, monkeypatch):
    secret_hop = f"http://{USERINFO}127.0.0.1:1/x?{SECRET_QUERY}"
    web.route("/loop", redirect(web.url + "/loop?" + SECRET_QUERY))
    web.route("/ftp", redirect(f"ftp://{USERINFO}e.com/?{SECRET_QUERY}"))
    web.route("/bad", redirect(f"http://{USERINFO}[::1/?{SECRET_QUERY}"))
    web.route("/private", redirect(secret_hop.replace("127.0.0.1", "10.0.0.1")))
    for path in ("/loop", "/ftp", "/bad", "/private"):
        if path == "/private":
            monkeypatch.delenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE")
            monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1")
        out = fetch(_with_userinfo(web.url + path))
        assert out["success"] is False, out
        assert _leaks(out["error"]) == [], out


def test_robots_refusal_never_shows_credentials(web, private):
    web.route("/robots.txt", reply("User-agent: *\nDisallow: /\n", "text/plain"))
    out = fetch(_with_userinfo(web.route("/p", reply(PLAIN))) + "?" + SECRET_QUERY)
    assert out["error_code"] == "ROBOTS_DISALLOWED"
    assert _leaks(out["error"]) == []


@pytest.mark.parametrize(
    "url",
    [
        f"http://{USERINFO}exa mple.com/?{SECRET_QUERY}",
        f"ftp://{USERINFO}example.com/?{SECRET_QUERY}",
        f"http://{USERINFO}example.com:99999/?{SECRET_QUERY}",
        f"http://{USERINFO}example.com/" + "a" * 5000,
    ],
)
def test_invalid_url_messages_never_show_credentials(url):
    out = fetch(url)
    assert out["error_code"] == "INVALID_INPUT"
    assert _leaks(out["error"]) == []


def test_blocked_url_message_never_shows_credentials():
    out = fetch(f"http://{USERINFO}127.0.0.1/?{SECRET_QUERY}")
    assert out["error_code"] == "BLOCKED_URL"
    assert _leaks(out["error"]) == []


def test_secret_parameters_are_sent_as_given(web, private):
    web.route("/p", reply(PLAIN))
    fetch(f"{web.url}/p?{SECRET_QUERY}")
    assert web.seen[-1][0] == "/p"
    page = [path for path, _ in web.seen]
    assert page == ["/robots.txt", "/p"]


# ---------------------------------------------------------------- SSRF through redirects

# The allowed address is 127.0.0.1 alone, so loopback targets use 127.0.0.2 in every spelling.
REDIRECT_TARGETS = [
    "http://127.0.0.2/",
    "http://2130706434/",
    "http://0x7f.0.0.2/",
    "http://0177.0.0.2/",
    "http://127.2/",
    "http://0x7f000002/",
    "http://10.0.0.1/",
    "http://192.168.1.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::1]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::a9fe:a9fe]/",
    "http://0.0.0.0/",
    "http://224.0.0.1/",
]


@pytest.mark.parametrize("target", REDIRECT_TARGETS)
def test_redirect_from_an_allowed_host_to_a_private_address_is_blocked(web, monkeypatch, target):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1/32")
    url = web.route("/go", redirect(target))
    out = fetch(url)
    assert out["error_code"] == "BLOCKED_URL", out
    assert "redirected" in out["error"]
    assert web.paths() == ["/robots.txt", "/go"]  # the blocked hop was never contacted


def test_allow_hosts_by_name_is_case_insensitive_and_does_not_extend_to_ips(web, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", " LOCALHOST ")
    port = web.host_port.split(":")[1]
    web.route("/p", reply(ARTICLE))
    assert fetch(f"http://localhost:{port}/p")["success"] is True
    web.route("/hop", redirect(f"http://127.0.0.1:{port}/p"))
    out = fetch(f"http://localhost:{port}/hop")
    assert out["error_code"] == "BLOCKED_URL"


def test_loopback_is_blocked_without_the_settings(web):
    out = fetch(web.route("/p", reply(ARTICLE)))
    assert out["error_code"] == "BLOCKED_URL"
    assert web.seen == []


# ---------------------------------------------------------------- limits


def test_content_length_over_the_cap_fails_fast(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_MAX_BYTES", "2048")
    out = fetch(web.route("/big", reply("x" * 5000, "text/plain")))
    assert out["error_code"] == "TOO_LARGE"
    assert "5,000" in out["error"]
    assert "IKIGAI_WEB_FETCH_MAX_BYTES" in out["error"]


def _chunked(pieces: list[bytes], ctype: str, extra: dict[str, str] | None = None) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", ctype)
        h.send_header("Transfer-Encoding", "chunked")
        for key, value in (extra or {}).items():
            h.send_header(key, value)
        h.end_headers()
        for piece in pieces:
            h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        h.wfile.write(b"0\r\n\r\n")

    return handle


def test_streamed_body_over_the_cap(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_MAX_BYTES", "10000")
    out = fetch(web.route("/s", _chunked([b"y" * 4000] * 5, "text/plain")))
    assert out["error_code"] == "TOO_LARGE"
    ok = fetch(web.route("/ok", _chunked([b"y" * 4000] * 2, "text/plain")))
    assert ok["content"] == "y" * 8000


def test_gzip_body_is_decoded(web, private):
    body = gzip.compress(ARTICLE.encode())
    out = fetch(web.route("/gz", reply(body, "text/html", headers={"Content-Encoding": "gzip"})))
    assert "first paragraph has" in out["content"]


@pytest.mark.parametrize(
    ("encoding", "body", "code"),
    [("br", b"\x0b\x02\x80hi\x03", "UNSUPPORTED_CONTENT"), ("gzip", b"not gzip", "PARSE_ERROR")],
)
def test_undecodable_bodies_are_reported(web, private, encoding, body, code):
    out = fetch(web.route("/enc", reply(body, "text/html", headers={"Content-Encoding": encoding})))
    assert out["error_code"] == code
    assert "/enc" in out["error"]


def test_gzip_bomb_hits_the_cap(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_MAX_BYTES", str(1024 * 1024))
    bomb = gzip.compress(b"A" * (200 * 1024 * 1024), compresslevel=9)
    assert len(bomb) < 1024 * 1024
    headers = {"Content-Encoding": "gzip"}
    out = fetch(web.route("/bomb", reply(bomb, "text/plain", headers=headers)))
    assert out["error_code"] == "TOO_LARGE"


@pytest.mark.parametrize("trickle", [False, True])
def test_a_server_that_stalls_mid_body_times_out(web, private, monkeypatch, trickle):
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1")
    url = web.route("/stall", _stall(b"partial " * 100, web, trickle=trickle))
    started = time.monotonic()
    out = fetch(url)
    elapsed = time.monotonic() - started
    assert out["error_code"] == "NETWORK_ERROR"
    assert "within the 1 s deadline" in out["error"]
    assert elapsed < HANG_GUARD


def test_a_slow_first_byte_times_out(web, private, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "1")

    def slow(h: BaseHTTPRequestHandler) -> None:
        web.stop.wait(STALL)

    out = fetch(web.route("/slow", slow))
    assert out["error_code"] == "NETWORK_ERROR"
    assert "timeout" in out["error"]


def test_connection_refused_is_a_connect_error(private):

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    out = fetch(f"http://127.0.0.1:{port}/")
    assert out["error_code"] == "NETWORK_ERROR"
    assert "connect" in out["error"]


def test_connection_reset_mid_body(web, private):
    def reset(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Length", "5000")
        h.end_headers()
        h.wfile.write(b"short")
        h.wfile.flush()
        h.close_connection = True
        h.connection.shutdown(2)

    out = fetch(web.route("/reset", reset))
    assert out["error_code"] == "NETWORK_ERROR"
    assert "reset" in out["error"]
