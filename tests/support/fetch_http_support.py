"""Helpers shared by test_web_fetch_http.py and test_web_fetch_http_hostile.py."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import hostile_documents
import orjson
import pytest
from conftest import STALL
from toolbox import reply as whole_reply

from ikigai_web.common.runner import answer, render
from ikigai_web.tools import web_fetch

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


def _valid(out: dict[str, Any]) -> None:
    """Every string in the answer encodes to UTF-8 (orjson refuses lone surrogates)."""
    orjson.dumps(out)


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
