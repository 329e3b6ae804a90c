"""One sanitizer for every text a tool prints (issue 20, section 6): terminal escapes, bidi
controls, zero-width and tag characters never leave a tool, in JSON or in markdown for a
person, and no script link survives, wherever in a page it was written.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from conftest import Reply

from ikigai_web.common.runner import scrub
from ikigai_web.common.text import reaches, visible

BIN = Path(__file__).resolve().parents[2] / "libexec" / "ikigai"
FIXTURES = Path(__file__).parents[1] / "fixtures"
# What a hostile page or provider writes: clear the screen, a C1 CSI, a bidi override, hidden
# zero-width and tag characters, a zero-width joiner disguising an ASCII word.
HOSTILE = "\x1b[2J\x1b]0;owned\x07\x9b31m\u202e\u2066\u200b\ufeff\U000e0041\U000e0042pay\u200dpal"
FORBIDDEN = ["\x1b", "\x07", "\x9b", "\u202e", "\u2066", "\u200b", "\ufeff", "\U000e0041",
             "pay\u200dpal"]  # fmt: skip
PROSE = "A sentence long enough to count as the page's prose, said several times over here."


@pytest.mark.parametrize("bad", FORBIDDEN)
def test_visible_drops_each(bad):
    assert bad not in visible(f"x{bad}y")


def test_joiners_stay_where_scripts_and_emoji_need_them():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    assert visible(family) == family
    assert visible("\u0915\u094d\u200d\u0937") == "\u0915\u094d\u200d\u0937"
    assert visible("pay\u200dpal \u200cx") == "paypal x"


def test_scrub_cleans_every_string_keys_included():
    out = scrub({f"k{HOSTILE}": [HOSTILE, {"url": f"https://a.example/{HOSTILE}"}]})
    text = json.dumps(out, ensure_ascii=False)
    assert not any(bad in text for bad in FORBIDDEN)


class Page(BaseHTTPRequestHandler):
    body = b""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *_: object) -> None:
        pass


@pytest.fixture
def serve():
    servers: list[ThreadingHTTPServer] = []

    def start(html: str) -> str:
        handler = type("Handler", (Page,), {"body": html.encode()})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/docs/page"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def fetch(url: str, *args: str) -> str:
    env = os.environ | {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1",
                        "IKIGAI_WEB_FETCH_ROBOTS": "0", "IKIGAI_WEB_FETCH_CACHE_TTL": "0",
                        "IKIGAI_WEB_FETCH_RENDER": "never"}  # fmt: skip
    argv = [str(BIN / "web-fetch-tool"), *args]
    data = b"" if args else json.dumps({"url": url}).encode()
    proc = subprocess.run(argv, input=data, capture_output=True, env=env, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.decode()


@pytest.mark.parametrize("form", ["json", "markdown"])
def test_a_page_cannot_write_escapes_to_the_terminal_or_the_model(serve, isolated_env, form):
    html = (f"<html><head><title>T{HOSTILE}</title></head><body><article><h1>Head{HOSTILE}</h1>"
            + f"<p>{PROSE} {HOSTILE}</p>" * 3 + "</article></body></html>")  # fmt: skip
    url = serve(html)
    out = fetch(url, url, "--format", "markdown") if form == "markdown" else fetch(url)
    assert PROSE in out
    found = [bad for bad in FORBIDDEN if bad in out]
    assert found == []


# Terminal escape sequences of every kind (a CSI, a C1 CSI, an OSC hyperlink closed by ST, a
# window title closed by BEL, a charset switch, ESC written as a character reference): none
# may leave a residue ("[31m", "]0;") once its ESC is gone.
ESCAPED = ("Build \x1b[1;31mfailed&#27;[0m at \x9b32mstep\x9b0m three: see \x1b]8;;"
           "https://e.example\x1b\\the log\x1b]8;;\x1b\\ \x1b]0;owned\x07now\x1b(B.")  # fmt: skip
CLEAN = "Build failed at step three: see the log now."


@pytest.mark.parametrize("form", ["json", "markdown"])
def test_escape_sequences_leave_no_residue(serve, isolated_env, form):
    html = f"<html><body><article><p>{ESCAPED} {PROSE}</p><p>{PROSE}</p></article></body></html>"
    url = serve(html)
    out = fetch(url, url, "--format", "markdown") if form == "markdown" else fetch(url)
    content = out if form == "markdown" else json.loads(out)["content"]
    assert f"{CLEAN} {PROSE}" in content


def test_visible_drops_escape_sequences_whole():
    plain = ESCAPED.replace("&#27;", "\x1b")  # outside HTML a reference is text
    assert visible(plain) == CLEAN
    assert visible("a \x1b] b \x9d c") == "a ] b  c"  # an unended string: its controls only
    assert visible("\x9d" + "x" * 5000 + "\x07") == "x" * 5000  # past the bound: text
    assert visible("\x1bThe end") == "The end"  # a lone ESC before a word: the word stays


def test_text_encoded_twice_keeps_every_word_between_its_quotes():
    # UTF-8 read as Latin-1: each curly quote holds a C1 control (U+009C, U+009D), the very
    # bytes that open and close a control string in their 8-bit form; the text is the page's.
    twice = "He said \u201cnot now\u201d and left; \u201cwhy\u201d, she asked.".encode().decode(
        "latin-1"
    )
    assert visible(twice) == "He said \u00e2not now\u00e2 and left; \u00e2why\u00e2, she asked."
    czech = "t\u011b9m".encode().decode("latin-1")  # a letter whose last byte is the CSI's
    assert visible(czech) == "t\u00c49m"


def test_script_and_relative_links_in_app_data_are_made_safe(serve, isolated_env):
    prose = (
        f"{PROSE} See [the guide (new)](javascript:alert(document.cookie)) and "
        "[the start page](/docs/start) and [a picture](data:text/html;base64,PHNjcmlwdD4=)"
    )
    data = {"props": {"pageProps": {"body": prose, "more": PROSE + " Again, once more."}}}
    html = ('<html><head><title>App</title></head><body><div id="__next"></div>'
            f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(data)}</script>'
            "</body></html>")  # fmt: skip
    url = serve(html)
    content = json.loads(fetch(url))["content"]
    assert "the guide (new)" in content
    assert "javascript:" not in content
    assert "data:text/html" not in content
    assert "[the start page](http://127.0.0.1:" in content
    assert "/docs/start)" in content


@pytest.mark.loopback
def test_search_results_carry_no_hidden_characters(fake_server, isolated_env):
    body: dict[str, Any] = json.loads((FIXTURES / "brave" / "search.json").read_text())
    first = body["web"]["results"][0]
    first["title"] = f"Ikigai{HOSTILE}"
    first["url"] = f"https://en.wikipedia.org/wiki/Ikigai\u202e\u200b{HOSTILE}"
    first["description"] = f"The reason {HOSTILE} for being."
    url = fake_server.route("/brave", Reply(200, body))
    env = os.environ | {"BRAVE_API_KEY": "BSA-sanitize-1234", "BRAVE_SEARCH_API_URL": url}
    for args in ((), ("ikigai", "--format", "markdown")):
        data = b"" if args else json.dumps({"query": "ikigai"}).encode()
        proc = subprocess.run([str(BIN / "web-search-brave-tool"), *args], input=data,
                              capture_output=True, env=env, timeout=30, check=False)  # fmt: skip
        text = proc.stdout.decode()
        assert "Ikigai" in text
        assert [bad for bad in FORBIDDEN if bad in text] == []


@pytest.mark.parametrize(
    ("text", "first", "expected"),
    [
        ("", "\u3040", False),
        ("Plain Latin, Ελληνικά, русский, العربية", "\u3040", False),
        ("A title with 日本語", "\u3040", True),
        ("ไทย", "\u0e00", True),
        ("Emoji 😀 only", "\u3040", True),  # past CJK: the pattern behind the guard decides
    ],
)
def test_reaches_tells_whether_any_character_is_at_or_past_a_point(text, first, expected):
    assert reaches(text, first) is expected
