"""web-fetch against real HTTP servers on 127.0.0.1: content, charsets, redirects, limits, robots.

The servers here write raw responses (chunked, gzip, stalls); private addresses are let through
with IKIGAI_WEB_FETCH_ALLOW_PRIVATE or IKIGAI_WEB_FETCH_ALLOW_HOSTS as each test says.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import socket
import ssl
import subprocess
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import hostile_documents
import orjson
import pytest
from conftest import BEFORE_THE_DEADLINE, HANG_GUARD, STALL
from toolbox import PEAK_MEMORY
from toolbox import reply as whole_reply

from ikigai_web.common.runner import answer, render
from ikigai_web.fetch import robots
from ikigai_web.tools import web_fetch

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.loopback

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass
class Web:
    """A loopback server whose routes write whole raw responses."""

    url: str = ""
    host_port: str = ""
    routes: dict[str, Handler] = field(default_factory=dict)
    seen: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    def route(self, path: str, handler: Handler) -> str:
        self.routes[path] = handler
        return self.url + path

    def paths(self) -> list[str]:
        return [path for path, _ in self.seen]


def reply(
    body: bytes | str = b"",
    ctype: str | None = "text/html; charset=utf-8",
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Handler:
    """The toolbox's one whole response, an HTML page unless told otherwise."""
    handler: Handler = whole_reply(body, ctype, status, headers)
    return handler


def redirect(location: str, status: int = 302) -> Handler:
    return reply(b"", None, status, {"Location": location})


class QuietServer(ThreadingHTTPServer):
    def handle_error(self, *_: object) -> None:
        pass  # clients that hang up early are what several tests are about


def _serve() -> Iterator[Web]:
    web = Web()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            web.seen.append((path, dict(self.headers)))
            handler = web.routes.get(path, reply("<h1>Nope</h1>", status=404))
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                handler(self)

    server = QuietServer(("127.0.0.1", 0), H)
    server.daemon_threads = True
    web.host_port = f"127.0.0.1:{server.server_address[1]}"
    web.url = f"http://{web.host_port}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield web
    web.stop.set()
    server.shutdown()
    server.server_close()


web = pytest.fixture(_serve)
other_web = pytest.fixture(_serve)


@pytest.fixture
def private(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")


def fetch(url: str, **options: Any) -> dict[str, Any]:
    """One call through the protocol runner's answer and render, as the host would see it."""
    result, budget = answer(web_fetch.execute, {"url": url} | options, web_fetch.SCHEMA)
    assert len(render(result, budget)) <= budget
    return result


ARTICLE = """<!DOCTYPE html><html><head><title>The Title</title>
<meta name="author" content="Ann Author"><meta name="description" content="About things.">
</head><body><nav><a href="/home">Home</a> | <a href="/about">About us menu</a></nav>
<main><article><h1>Main heading</h1>
<p>The first paragraph has a <a href="/docs/page.html">relative link</a> and enough words to be
clearly the main content of this document, which the extractor should keep in full.</p>
<p>A second paragraph follows, with more sentences, so that the article is long enough for the
extractor to trust it. It talks about nothing in particular, but at some length.</p>
<ol><li>first item</li><li>second item</li></ol>
</article></main><footer>Copyright footer text</footer></body></html>"""


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


INFO = b"/Title (A PDF Title) /Author (Pat Writer) /Subject (Growing tomatoes) "
INFO += b"/CreationDate (D:20240305120000+01'00')"


def make_pdf(text: str, font: bytes = b"", *extra: bytes, info: bytes = INFO) -> bytes:
    content = f"BT /F1 24 Tf 72 700 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        (
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
            b"/Resources << /Font << /F1 5 0 R >> >> >>"
        ),
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica %s>>" % font,
        b"<< %s >>" % info,
        *extra,
    ]
    return bytes(hostile_documents.pdf(objects, trailer=b"/Info 6 0 R "))


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


def _valid(out: dict[str, Any]) -> None:
    """Every string in the answer encodes to UTF-8 (orjson refuses lone surrogates)."""
    orjson.dumps(out)


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


def _stall(first: bytes, web: Web, *, trickle: bool = False) -> Handler:
    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(200)
        h.send_header("Content-Type", "text/plain")
        h.send_header("Content-Length", "1000000")
        h.end_headers()
        h.wfile.write(first)
        h.wfile.flush()
        while trickle and not web.stop.wait(0.1):
            h.wfile.write(b"z")
            h.wfile.flush()
        web.stop.wait(STALL)

    return handle


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
    import socket

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
