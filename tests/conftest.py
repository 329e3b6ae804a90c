"""Shared fixtures: an isolated environment, no network, a loopback HTTP server, tool runs."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import pytest

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

BIN = Path(sys.executable).parent
# The benchmarks' builders (bench/hostile_documents.py, document_corpus.py) make the tests'
# documents too: one builder of each, importable from every test module.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
# What more than one test module of a room uses (tests/support/): helpers imported by name,
# fixtures registered here for every module.
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))
pytest_plugins = [
    "documents_support",
    "extract_support",
    "fetch_http_support",
    "gemini_support",
    "render_support",
]
# Time in tests: no verdict may depend on how fast the machine is. A deadline under test is
# short, and what it waits for never comes within the test (a server or program stalls for
# STALL, or until the test ends), so only the deadline can end the wait; the verdict is the
# tool's own answer, and the time it took is only held to HANG_GUARD: far above any deadline a
# test sets and any honest call on a busy machine, far below STALL. A deadline on a path that
# should succeed, or fail for another reason, is the default 25 s or longer.
HANG_GUARD = 30.0
STALL = 120.0
# A call whose answer is not about its deadline (the default 25 s) must not wait for it: it
# answers in under this many seconds, however busy the machine (well under one when idle).
BEFORE_THE_DEADLINE = 15.0
CREDENTIAL_VARS = (
    "BRAVE_API_KEY",
    "GOOGLE_SEARCH_API_KEY",
    "GOOGLE_SEARCH_ENGINE_ID",
    "TAVILY_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "SEARXNG_URL",
    "SEARXNG_AUTH",
)


@pytest.fixture(autouse=True)
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No real credentials, settings or cache leak into a test; each gets its own dirs."""
    for name in list(os.environ):
        if name in CREDENTIAL_VARS or name.startswith("IKIGAI_") or name.endswith("_API_URL"):
            monkeypatch.delenv(name)
    for name in ("DUCKDUCKGO_HTML_URL", "DUCKDUCKGO_LITE_URL"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("IKIGAI_CONFIG_DIR", str(config))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return config


@pytest.fixture(autouse=True)
def no_secrets_left() -> Iterator[None]:
    """Each test knows the secrets a fresh process knows: what one registered for masking (a
    key, a proxy's login such as "user") is not masked in the next, whichever runs next."""
    from ikigai_web.common import redact

    yield
    redact._secrets.clear()
    redact._pattern.cache_clear()


@pytest.fixture(autouse=True)
def patient_probes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host gives `--schema` 1 s (ikigai_web.host.discovery.SCHEMA_TIMEOUT); here, in this
    process, a probe gets 60 s, so a busy machine starting eight probes at once cannot make a tool
    look broken. A test of that limit sets it back (test_host_discovery.py)."""
    from ikigai_web.host import discovery

    monkeypatch.setattr(discovery, "SCHEMA_TIMEOUT", 60.0)


def _not_loopback(request: Any) -> bool:
    return request.url.host not in ("127.0.0.1", "localhost", "::1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--corpus",
        choices=("sample", "all"),
        default="sample",
        help="the extraction dev pages test_extract_corpus.py runs: every fourth (the "
        "default, for `make test` in minutes) or all of them (CI: make test CORPUS=all)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`@pytest.mark.loopback`: in-process requests to 127.0.0.1 go to a real local server."""
    for item in items:
        if item.get_closest_marker("loopback"):
            item.add_marker(pytest.mark.httpx_mock(should_mock=_not_loopback))


@pytest.fixture(autouse=True)
def no_network(httpx_mock: Any, request: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """pytest-httpx on every test: no request can leave the process unanswered. The search
    tools' own connection is routed through httpx for it (toolbox.opener); a request the
    test's `should_mock` leaves alone reaches a real loopback server."""
    from toolbox import opener

    marker = request.node.get_closest_marker("httpx_mock")
    should_mock = marker.kwargs.get("should_mock") if marker else None
    monkeypatch.setattr("ikigai_web.net.wire.open_call", opener(should_mock or (lambda _: True)))
    return httpx_mock


def reply(
    status: int = 200, body: bytes | str | Any = b"", headers: dict[str, str] | None = None
) -> Any:
    """A provider's answer as the HTTP layer hands it to a tool's `error_for`."""
    from ikigai_web.net.http import Headers
    from ikigai_web.net.http import Reply as HttpReply

    if not isinstance(body, bytes | str):
        body = json.dumps(body)
    data = body.encode() if isinstance(body, str) else body
    return HttpReply(status, Headers.of((headers or {}).items()), data, "api.test")


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float = field(default_factory=time.monotonic)  # when it arrived


@dataclass
class FakeServer:
    """A real HTTP server on 127.0.0.1; routes map a path to a Reply or a function of Seen."""

    url: str = ""
    routes: dict[str, Reply | Callable[[Seen], Reply]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def route(self, path: str, reply: Reply | Callable[[Seen], Reply]) -> str:
        self.routes[path] = reply
        return self.url + path


def _handler(fake: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            parts = urlsplit(self.path)
            seen = Seen(self.command, parts.path, parse_qs(parts.query), dict(self.headers),
                        self.rfile.read(length))  # fmt: skip
            fake.seen.append(seen)
            reply = fake.routes.get(parts.path, Reply(404, b"not found"))
            reply = reply(seen) if callable(reply) else reply
            time.sleep(reply.delay)
            body = reply.body
            if not isinstance(body, bytes | str):
                body = json.dumps(body)
            data = body.encode() if isinstance(body, str) else body
            self.send_response(reply.status)
            headers = {"Content-Type": "application/json", "Content-Length": str(len(data))}
            for key, value in (headers | reply.headers).items():
                self.send_header(key, value)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)  # a client that gave up (a timeout test) is fine

        do_GET = do_POST = do_HEAD = _serve  # noqa: N815

    return Handler


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, *_: object) -> None:
        pass  # clients that hang up early (a cap or a deadline reached) are what tests are about


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    fake = FakeServer()
    server = _QuietServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    # Polled every 0.05 s, not 0.5: shutdown waits for the next poll, at every test's end.
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()


@dataclass
class Run:
    code: int
    stdout: str
    stderr: str

    @property
    def json(self) -> Any:
        assert self.stdout.endswith("\n"), self.stdout
        assert self.stdout.count("\n") == 1, self.stdout
        return json.loads(self.stdout)


@pytest.fixture
def run_tool() -> Callable[..., Run]:
    """Run an installed console script as the host would: JSON on stdin, env inherited."""

    def run(name: str, payload: object = None, *, args: tuple[str, ...] = (),
            env: dict[str, str] | None = None, raw: bytes | None = None) -> Run:  # fmt: skip
        data = raw if raw is not None else json.dumps(payload).encode()
        proc = subprocess.run(
            [str(BIN / name), *args],
            input=data,
            capture_output=True,
            env=os.environ | (env or {}),
            timeout=60,
            check=False,
        )
        return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    return run


# A call of a fake tool by default: read the arguments, answer them back as a success.
ECHO_CALL = 'printf \'{"success": true, "got": %s}\\n\' "$(cat)"'


def _schema_for(file_name: str) -> dict[str, Any]:
    return {
        "name": file_name.removesuffix("-tool").replace("-", "_"),
        "description": f"A third-party tool, {file_name}.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
    }


@pytest.fixture
def fake_tool() -> Callable[..., Path]:
    """Write an executable `directory/file_name`: a third-party ikigai tool in shell.

    `--schema` prints `schema` (default: a valid one matching the file name) or runs
    `schema_script`; a call runs `call` (default: echo a success).
    """

    def write(directory: Path, file_name: str, *, schema: object = None,
              schema_script: str | None = None, call: str = ECHO_CALL) -> Path:  # fmt: skip
        directory.mkdir(parents=True, exist_ok=True)
        text = json.dumps(_schema_for(file_name) if schema is None else schema)
        answer = schema_script or "printf '%s\\n' '" + text.replace("'", "'\\''") + "'"
        path = directory / file_name
        path.write_text(f'#!/bin/sh\nif [ "$1" = "--schema" ]; then\n{answer}\nexit\nfi\n{call}\n')
        path.chmod(0o755)
        return path

    return write


REDIS_PASSWORD = "redis-test-password-0123"


@dataclass
class RedisServer:
    """A real `redis-server` on a free loopback port, with a password, in a temp dir."""

    port: int
    process: subprocess.Popen[bytes]

    def url(self, password: str = REDIS_PASSWORD) -> str:
        return f"redis://:{password}@127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=HANG_GUARD)


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers(port: int) -> bool:
    import socket

    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1) as s:
        s.sendall(b"PING\r\n")
        return bool(s.recv(64))  # -NOAUTH: it is up, and asks for the password
    return False


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    import shutil

    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).is_file():
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    port = _free_port()
    home = tmp_path / "redis"
    home.mkdir()
    args = ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(home), "--save", ""]
    args += ["--appendonly", "no", "--requirepass", REDIS_PASSWORD]
    process = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL)
    server = RedisServer(port, process)
    give_up = time.monotonic() + HANG_GUARD
    while not _answers(port):
        assert process.poll() is None, "redis-server did not start"
        assert time.monotonic() < give_up, "redis-server did not answer"
        time.sleep(0.02)
    yield server
    if process.poll() is None:
        server.stop()


@pytest.fixture
def silent_server() -> Iterator[int]:
    """A loopback TCP port that accepts connections and never answers: a stalled server."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    yield listener.getsockname()[1]
    listener.close()
