"""What the proof tests share: every tool, the contract an answer must meet, the search tools'
documented answers, and a raw loopback server for hostile remote sides.

The tools are the `*-tool` entries of pyproject's `[project.scripts]`, so a tool added there is
covered by every test built on this module with no change here. A search tool also needs its
`Profile` below (how to point it at a server, what its provider answers):
test_hostile_remote.py fails until it has one.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import socket
import threading
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from html import escape
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ikigai_web.common.errors import WALLS, ErrorCode
from ikigai_web.common.runner import DEFAULT_BUDGET, Runnable
from ikigai_web.net.http import CHUNK, Call, Deadline, Headers, Opened, Unreachable, unreachable
from ikigai_web.net.wire import open_call as wire_open_call  # before any test replaces it

ROOT = Path(__file__).resolve().parent.parent
# script name -> "module:function", as pyproject declares them
SCRIPTS: dict[str, str] = {
    name: target
    for name, target in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "scripts"
    ].items()
    if name.endswith("-tool")  # `web-tools` is the host side, not a tool
}
CODES = frozenset(code.value for code in ErrorCode)
_FAILURE_KEYS = frozenset({"success", "error", "error_code", "retry_after", "wall", "_event"})


def module_of(script: str) -> Any:
    return importlib.import_module(SCRIPTS[script].split(":", 1)[0])


def tool(script: str) -> Runnable:
    """The tool as its console script runs it: schema, call and markdown."""
    module = module_of(script)
    return Runnable(module.SCHEMA, module.execute, getattr(module, "markdown", None))


def schema(script: str) -> dict[str, Any]:
    found: dict[str, Any] = module_of(script).SCHEMA
    return found


# --- the contract an answer must meet (protocol.md, section 2) -------------------------------


def check_answer(data: bytes, name: str, budget: int = DEFAULT_BUDGET) -> dict[str, Any]:
    """The answer `data` as the model would get it, or AssertionError saying what is wrong:
    one compact line of strict UTF-8 JSON, an object, within budget, in the success or the
    failure shape, with a known error code."""
    assert len(data) <= budget, f"{len(data)} bytes, over the {budget}-byte budget"
    assert data.endswith(b"\n"), f"no final newline: {data[-80:]!r}"
    assert data.count(b"\n") == 1, f"more than one line: {data[:300]!r}"
    out = json.loads(data.decode("utf-8"), parse_constant=_not_json)
    assert isinstance(out, dict), f"not an object: {data[:300]!r}"
    assert not _surrogates(out), f"lone surrogates in {data[:300]!r}"
    if out.get("success") is False:
        _check_failure(out)
    else:
        assert out.get("success") is True, f"success is neither true nor false: {out}"
        _check_success(out, name)
    check_shape(out, name)
    return out


def check_shape(out: dict[str, Any], name: str) -> None:
    """AssertionError unless `out` is what tool `name`'s MCP outputSchema describes, and
    every key it holds is described there (the schema itself leaves objects open)."""
    errors = sorted(str(e.message) for e in output_validator(name).iter_errors(out))
    assert not errors, f"{name}'s answer is not what its OUTPUT_SCHEMA says: {errors[:3]}"


@cache
def output_validator(name: str) -> Any:
    """A validator of tool `name`'s OUTPUT_SCHEMA, closed: an undescribed key is an error."""
    from jsonschema import Draft202012Validator

    schema = importlib.import_module(f"ikigai_web.tools.{name}").OUTPUT_SCHEMA
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(closed(schema))


def closed(schema: Any) -> Any:
    """`schema` where each object that lists its properties allows no others."""
    if isinstance(schema, list):
        return [closed(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: closed(value) for key, value in schema.items() if key != "properties"}
    if "properties" in schema:
        out["properties"] = {key: closed(sub) for key, sub in schema["properties"].items()}
        out.setdefault("additionalProperties", False)
    return out


def _not_json(word: str) -> None:
    raise AssertionError(f"{word} is not JSON")


def _surrogates(value: Any) -> bool:
    if isinstance(value, str):
        return any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return any(_surrogates(k) or _surrogates(v) for k, v in value.items())
    if isinstance(value, list):
        return any(map(_surrogates, value))
    return False


def _check_failure(out: dict[str, Any]) -> None:
    assert set(out) <= _FAILURE_KEYS, f"unexpected keys in a failure: {sorted(out)}"
    assert isinstance(out.get("error"), str), out
    assert out["error"].strip(), out
    assert out.get("error_code") in CODES, f"unknown error_code: {out.get('error_code')!r}"
    if "retry_after" in out:
        wait = out["retry_after"]
        assert isinstance(wait, int), out
        assert not isinstance(wait, bool), out
        assert wait >= 0, out
    if "wall" in out:  # web-fetch's, on an HTTP_ERROR only
        assert (out["error_code"], out["wall"] in WALLS) == ("HTTP_ERROR", True), out
    if out["error_code"] == "AUTH_MISSING":
        assert "_event" in out, "AUTH_MISSING carries the config_required event"
    if "_event" in out:
        event = out["_event"]
        assert event.get("kind") == "config_required", event
        assert isinstance(event.get("content"), str), event
        assert isinstance(event.get("data"), dict), event


def _check_success(out: dict[str, Any], name: str) -> None:
    for item in out.get("warnings", []):
        assert isinstance(item.get("code"), str), item
        assert isinstance(item.get("message"), str), item
    if name.startswith("web_search_"):
        assert isinstance(out.get("provider"), str), out
        results = out.get("results")
        assert isinstance(results, list), out
        assert out.get("count") == len(results), out
        for item in results:
            for key in ("title", "url", "snippet"):
                assert isinstance(item.get(key), str), item
            assert item["url"].startswith(("http://", "https://")), item
        for key in ("next_offset", "next_start"):
            assert isinstance(out.get(key, 0), int), out
        assert isinstance(out.get("cached", False), bool), out
    elif name == "web_fetch":
        for key in ("url", "title", "content", "content_type"):
            assert isinstance(out.get(key), str), out
        assert isinstance(out.get("total_lines"), int), out
        assert isinstance(out.get("truncated"), bool), out
        # passages for a query leave out parts of the page, but in no order to read on
        assert ("next_offset" in out) is (out["truncated"] and out["selected_by"] == "lines"), out


# --- a raw loopback server -------------------------------------------------------------------

Handler = Callable[[BaseHTTPRequestHandler], None]


@dataclass(frozen=True)
class Seen:
    """One request as the server read it: path with query, headers, body."""

    path: str
    headers: dict[str, str]
    body: bytes

    def says(self, marker: str) -> bool:
        from urllib.parse import unquote_plus

        return marker in unquote_plus(self.path) or marker.encode() in self.body


@dataclass
class Loopback:
    """A real HTTP server on 127.0.0.1 that answers every path with `handler`, which writes
    the whole raw response; `stop` ends the handlers that stall or stream forever."""

    handler: Handler | None = None
    url: str = ""
    seen: list[Seen] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)


_current = threading.local()


def current() -> Seen:
    """The request the calling handler is answering (each is handled in its own thread)."""
    seen: Seen = _current.seen
    return seen


class _Quiet(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, *_: object) -> None:
        pass  # clients that give up early are what the hostile tests are about


@contextlib.contextmanager
def loopback() -> Iterator[Loopback]:
    server_side = Loopback()

    class Raw(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            _current.seen = Seen(self.path, dict(self.headers), body)
            server_side.seen.append(_current.seen)
            handler = server_side.handler or reply(b"no handler", status=500)
            with contextlib.suppress(OSError):
                handler(self)

        do_GET = do_POST = _serve  # noqa: N815

    server = _Quiet(("127.0.0.1", 0), Raw)
    server_side.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        yield server_side
    finally:
        server_side.stop.set()
        server.shutdown()
        server.server_close()


def reply(
    body: bytes | str = b"",
    ctype: str | None = "application/json",
    status: int = 200,
    headers: dict[str, str] | None = None,
) -> Handler:
    """A handler writing one whole response."""
    data = body.encode() if isinstance(body, str) else body

    def handle(h: BaseHTTPRequestHandler) -> None:
        h.send_response(status)
        if ctype is not None:
            h.send_header("Content-Type", ctype)
        for key, value in ({"Content-Length": str(len(data))} | (headers or {})).items():
            h.send_header(key, value)
        h.end_headers()
        h.wfile.write(data)

    return handle


def closed_port() -> str:
    """The base URL of a loopback port nobody listens on: connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


# --- the search tools: how to reach each one's provider, and what that provider answers -----

Answer = tuple[bytes, str]  # body, Content-Type
RESULT_URL = "https://en.wikipedia.org/wiki/Ikigai"


@dataclass(frozen=True)
class Profile:
    """One search tool as the loopback tests drive it.

    `env(base)` points the tool at a provider whose base URL is `base` and configures the
    tool's credentials (`keys`); `answer(title, snippet, url)` is the provider's documented
    success answer holding one result.
    """

    script: str
    env: Callable[[str], dict[str, str]]
    answer: Callable[[str, str, str], Answer]
    keys: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.script.removeprefix("web-search-").removesuffix("-tool")

    @property
    def marker(self) -> str:
        """What this tool's requests carry, in their query, on a shared server."""
        return f"ikigai-{self.name}"

    def call(self, tag: str = "") -> dict[str, Any]:
        """A call marked as this tool's; `tag` gives it a cache entry of its own."""
        return {"query": f"{self.marker} {tag}".strip()}


def _json(value: Any) -> Answer:
    return json.dumps(value).encode(), "application/json"


def brave_answer(title: str, snippet: str, url: str) -> Answer:
    """Brave Web Search API (api-dashboard.search.brave.com/app/documentation/web-search)."""
    item = {"title": title, "url": url, "description": snippet, "age": "2 days ago",
            "page_age": "2024-07-14T00:00:00", "extra_snippets": [snippet]}  # fmt: skip
    return _json({"type": "search", "query": {"original": "ikigai", "more_results_available":
                  False}, "web": {"type": "search", "results": [item]}})  # fmt: skip


def google_answer(title: str, snippet: str, url: str) -> Answer:
    """Custom Search JSON API, cse.list (developers.google.com/custom-search/v1/reference)."""
    item = {"kind": "customsearch#result", "title": title, "htmlTitle": title, "link": url,
            "displayLink": "en.wikipedia.org", "snippet": snippet}  # fmt: skip
    return _json({"kind": "customsearch#search", "items": [item],
                  "searchInformation": {"totalResults": "1"}})  # fmt: skip


def tavily_answer(title: str, snippet: str, url: str) -> Answer:
    """Tavily Search API (docs.tavily.com/documentation/api-reference/endpoint/search)."""
    item = {"title": title, "url": url, "content": snippet, "score": 0.81, "raw_content": None}
    return _json({"query": "ikigai", "answer": None, "images": [], "results": [item],
                  "response_time": 1.1})  # fmt: skip


def searxng_answer(title: str, snippet: str, url: str) -> Answer:
    """SearXNG's /search?format=json (docs.searxng.org/dev/search_api.html)."""
    item = {"url": url, "title": title, "content": snippet, "engine": "duckduckgo",
            "engines": ["duckduckgo"], "score": 1.0, "category": "general"}  # fmt: skip
    return _json({"query": "ikigai", "number_of_results": 0, "results": [item], "answers": [],
                  "corrections": [], "infoboxes": [], "suggestions": [],
                  "unresponsive_engines": []})  # fmt: skip


def gemini_answer(title: str, snippet: str, url: str) -> Answer:
    """generateContent with Grounding with Google Search (ai.google.dev/gemini-api/docs)."""
    support = {"segment": {"endIndex": len(snippet), "text": snippet},
               "groundingChunkIndices": [0]}  # fmt: skip
    meta = {"webSearchQueries": ["ikigai"], "groundingChunks": [{"web": {"uri": url,
            "title": title}}], "groundingSupports": [support]}  # fmt: skip
    candidate = {"content": {"parts": [{"text": snippet}], "role": "model"},
                 "finishReason": "STOP", "index": 0, "groundingMetadata": meta}  # fmt: skip
    return _json({"candidates": [candidate], "modelVersion": "gemini-3.8-flash"})


def duckduckgo_answer(title: str, snippet: str, url: str) -> Answer:
    """The html endpoint's page: `div.result` cards, `a.result__a`, `.result__snippet`."""
    href = "//duckduckgo.com/l/?uddg=" + quote(url, safe="")

    def text(value: str) -> str:  # a lone surrogate becomes a character reference
        return escape(value).encode("ascii", "xmlcharrefreplace").decode()

    card = (
        '<div class="result results_links results_links_deep web-result"><div class="links_main'
        f' result__body"><h2 class="result__title"><a rel="nofollow" class="result__a" href='
        f'"{escape(href)}">{text(title)}</a></h2><a class="result__snippet" href="{escape(href)}'
        f'">{text(snippet)}</a></div></div>'
    )
    page = (
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>ikigai at DuckDuckGo</title>'
        f'</head><body><div id="links" class="results">{card}</div>'
        + "<p>padding</p>" * 200
        + "</body></html>"
    )
    return page.encode(), "text/html"


# Distinctive credentials: each holds characters that percent-encoding changes.
KEYS = {
    "BRAVE_API_KEY": "BSA+leak/Brave=key~7f3a9c",
    "GOOGLE_SEARCH_API_KEY": "AIzaSy+leak/Google=key~0123",
    "GOOGLE_SEARCH_ENGINE_ID": "017576662512468239146:omuauf_lfve",
    "TAVILY_API_KEY": "tvly-leak+Tavily/key=5d6e",
    "GEMINI_API_KEY": "AIzaSy+leak/Gemini=key~9a8b",
    "GOOGLE_API_KEY": "AIzaSy+leak/GoogleApi=key~4c4d",
}


def _brave_env(base: str) -> dict[str, str]:
    return {"BRAVE_SEARCH_API_URL": f"{base}/res/v1/web/search"}


PROFILES: dict[str, Profile] = {
    p.script: p
    for p in (
        Profile("web-search-brave-tool", _brave_env, brave_answer,
                {"BRAVE_API_KEY": KEYS["BRAVE_API_KEY"]}),
        Profile("web-search-google-tool",
                lambda base: {"GOOGLE_SEARCH_API_URL": f"{base}/customsearch/v1"}, google_answer,
                {k: KEYS[k] for k in ("GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID")}),
        Profile("web-search-tavily-tool", lambda base: {"TAVILY_API_URL": f"{base}/search"},
                tavily_answer, {"TAVILY_API_KEY": KEYS["TAVILY_API_KEY"]}),
        Profile("web-search-searxng-tool", lambda base: {"SEARXNG_URL": f"{base}/searx/"},
                searxng_answer),
        Profile("web-search-duckduckgo-tool",
                lambda base: {"DUCKDUCKGO_HTML_URL": f"{base}/html/",
                              "DUCKDUCKGO_LITE_URL": f"{base}/lite/"}, duckduckgo_answer),
        # Redirect links are not resolved: the sources are not on the provider's server.
        Profile("web-search-gemini-tool",
                lambda base: {"GEMINI_API_URL": f"{base}/v1beta",
                              "IKIGAI_WEB_GEMINI_RESOLVE": "0"}, gemini_answer,
                {"GEMINI_API_KEY": KEYS["GEMINI_API_KEY"]}),
        # The fallback tool, through the first provider of its order.
        Profile("web-search-auto-tool",
                lambda base: _brave_env(base) | {"IKIGAI_WEB_SEARCH_ORDER": "brave"},
                brave_answer, {"BRAVE_API_KEY": KEYS["BRAVE_API_KEY"]}),
    )
}  # fmt: skip


# The kernel's ru_maxrss of a child starts at its parent's size (the test runner's) when it
# execs; the child's own high-water mark is VmHWM, read as it exits.
PEAK_MEMORY = """
import atexit, os
def _report():
    with open("/proc/self/status") as status:
        peak = next(line for line in status if line.startswith("VmHWM:"))
    with open(os.environ["PEAK_FILE"], "w") as out:
        out.write(peak.split()[1])
atexit.register(_report)
"""


# --- the search tools' connection, in tests ---------------------------------------------------


def opener(should_mock: Callable[[Any], bool]) -> Callable[..., Opened]:
    """The connection the tools use in the test process: a request pytest-httpx is to
    answer goes through httpx (whose transport pytest-httpx patches); any other, a loopback
    server's, through the tools' own connection (ikigai_web.net.wire), as in production.
    (web-fetch's pins, when given, hold for the real connection: a faked answer has none.)"""

    def open_call(call: Call, deadline: Deadline, pins: Any = None) -> Opened:
        import httpx

        request = httpx.Request(
            call.method, call.url, headers=list(call.headers), content=call.body or None
        )
        if not should_mock(request):
            return wire_open_call(call, deadline, pins)
        client = httpx.Client(trust_env=False)
        try:
            response = client.send(request, stream=True)
        except httpx.HTTPError as exc:
            raise from_httpx(exc) from None
        headers = Headers.of(response.headers.multi_items())
        reason = response.reason_phrase
        return Opened(response.status_code, headers, _raw(response), client.close, reason)

    return open_call


def from_httpx(exc: Any) -> Unreachable:
    """What an httpx failure pytest-httpx raises says about the connection, as the tools'
    own connection reports it (ikigai_web.net.http.unreachable)."""
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        phase = "connecting to" if isinstance(exc, httpx.ConnectTimeout) else "waiting for"
        return Unreachable(f"timeout: {phase}", timed_out=True)
    if isinstance(exc, httpx.ConnectError | httpx.ReadError | httpx.RemoteProtocolError):
        return unreachable(exc, connecting=isinstance(exc, httpx.ConnectError))
    return Unreachable("network: request failed to", str(exc) or type(exc).__name__)


def _raw(response: Any) -> Iterator[bytes]:
    import httpx

    try:
        yield from response.iter_raw(CHUNK)
    except httpx.HTTPError as exc:
        raise from_httpx(exc) from None


def serve_raw(answer: Callable[[socket.socket], None]) -> tuple[str, socket.socket]:
    """A raw server on 127.0.0.1 that hands each connection to `answer` (a thread), once it
    has read the request."""
    server = socket.create_server(("127.0.0.1", 0))

    def loop() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            conn.recv(65536)
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=loop, daemon=True).start()
    return f"http://127.0.0.1:{server.getsockname()[1]}/", server
