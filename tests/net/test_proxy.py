"""Proxies from the environment, as curl and httpx read them, for every tool.

A real proxy runs on 127.0.0.1: it forwards absolute-URI requests (http://) and tunnels
CONNECT (https://), and writes down everything it was asked. The tools run as processes, as a
host runs them, with the proxy variables set.
"""

from __future__ import annotations

import json
import os
import select
import socket
import ssl
import subprocess
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.redact import mask
from ikigai_web.net import proxy

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "libexec" / "ikigai"
FIXTURES = Path(__file__).parents[1] / "fixtures"
BRAVE_KEY = "BSA-proxy-LEAKCANARY-4321"
PASSWORD = "proxy-LEAKCANARY-pass"
ARTICLE = (
    "<html><head><title>Through the proxy</title></head><body><article><h1>Through the proxy"
    "</h1>" + "<p>This page came to web-fetch through an HTTP proxy on loopback.</p>" * 8 + ""
    "</article></body></html>"
).encode()


# --- which proxy, from which variable ---------------------------------------------------------


@pytest.fixture
def no_proxies(monkeypatch):
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy", "REQUEST_METHOD"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    return monkeypatch


def test_each_scheme_takes_its_own_variable_then_all_proxy(no_proxies):
    no_proxies.setenv("HTTPS_PROXY", "http://secure.proxy:3128")
    no_proxies.setenv("ALL_PROXY", "http://any.proxy:8080")
    https = proxy.for_url("https://api.example/x")
    http = proxy.for_url("http://api.example/x")
    assert https is not None
    assert (https.host, https.port, https.variable) == ("secure.proxy", 3128, "HTTPS_PROXY")
    assert http is not None
    assert (http.host, http.port, http.variable) == ("any.proxy", 8080, "ALL_PROXY")


def test_lower_case_wins(no_proxies):
    no_proxies.setenv("HTTP_PROXY", "http://upper.proxy:1")
    no_proxies.setenv("http_proxy", "http://lower.proxy:3128")
    found = proxy.for_url("http://api.example/")
    assert found is not None
    assert (found.host, found.port, found.variable) == ("lower.proxy", 3128, "http_proxy")


@pytest.mark.parametrize("value", ["proxy.example:8080", f"alice:{PASSWORD}@proxy.example:8080"])
def test_a_proxy_without_a_scheme_is_invalid_input_saying_how_to_write_it(no_proxies, value):
    no_proxies.setenv("https_proxy", value)
    with pytest.raises(ToolError) as info:
        proxy.for_url("https://api.example/")
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert info.value.message.startswith("the setting https_proxy is 'proxy.example:8080'")
    assert "write it as http://proxy.example:8080" in info.value.message
    assert PASSWORD not in info.value.message


def test_upper_case_http_proxy_is_ignored_under_cgi(no_proxies):
    no_proxies.setenv("HTTP_PROXY", "http://injected.proxy:1")
    no_proxies.setenv("REQUEST_METHOD", "GET")
    assert proxy.for_url("http://api.example/") is None


@pytest.mark.parametrize(
    ("no_proxy", "host", "direct"),
    [
        ("example.com", "example.com", True),
        ("example.com", "api.example.com", True),
        (".example.com", "api.example.com", True),
        ("*.example.com", "api.example.com", True),
        ("example.com", "notexample.com", False),
        ("10.0.0.0/8", "10.1.2.3", True),
        ("10.0.0.0/8", "11.1.2.3", False),
        ("localhost:8080", "localhost", True),
        ("*", "anything.example", True),
        ("", "example.com", False),
    ],
)
def test_no_proxy_sends_matching_hosts_direct(no_proxies, no_proxy, host, direct):
    no_proxies.setenv("ALL_PROXY", "http://proxy.example:3128")
    no_proxies.setenv("NO_PROXY", no_proxy)
    assert (proxy.for_url(f"https://{host}/") is None) is direct


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("socks5://proxy.example:1080", "socks5:// proxies are not supported"),
        ("https://proxy.example:443", "https:// proxies are not supported"),
        ("http://proxy.example:99999", "it is not a URL"),
        ("http://:3128", "it has no usable host"),
        ("http://pro xy.example:3128", "it has no usable host"),
    ],
)
def test_an_unusable_proxy_is_invalid_input_naming_the_variable(no_proxies, value, why):
    no_proxies.setenv("HTTPS_PROXY", value)
    with pytest.raises(ToolError) as info:
        proxy.for_url("https://api.example/")
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert info.value.message.startswith("the setting HTTPS_PROXY is ")
    assert why in info.value.message


def test_proxy_credentials_become_proxy_authorization_and_are_masked(no_proxies):
    no_proxies.setenv("HTTPS_PROXY", f"http://alice:{PASSWORD}@proxy.example:3128")
    found = proxy.for_url("https://api.example/")
    assert found is not None
    token = found.headers["Proxy-Authorization"].removeprefix("Basic ")
    assert mask(f"echo {PASSWORD} {token}") == "echo *** ***"


def _never(_: Any) -> bool:
    return False


# Every request of these tests goes to loopback, through the proxy or past it: none is mocked
# (a proxied request names a host that is not loopback, which pytest-httpx would take).
ALL_REAL = pytest.mark.httpx_mock(should_mock=_never)


# --- a real proxy ------------------------------------------------------------------------------


@dataclass
class Proxy:
    """What the loopback proxy was asked: request lines and their Proxy-Authorization."""

    url: str = ""
    seen: list[str] = field(default_factory=list)
    auths: list[str] = field(default_factory=list)
    require: str | None = None  # a Proxy-Authorization it insists on, echoing what it got


def _pipe(a: socket.socket, b: socket.socket) -> None:
    sockets = [a, b]
    try:
        while True:
            ready, _, _ = select.select(sockets, [], [], 10)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    except OSError:
        return


class ProxyHandler(BaseHTTPRequestHandler):
    """Forwards absolute-URI requests and tunnels CONNECT, every host being on loopback."""

    protocol_version = "HTTP/1.1"
    server: ProxyServer

    def log_message(self, *_: object) -> None:
        pass

    def _allowed(self) -> bool:
        state = self.server.state
        got = self.headers.get("Proxy-Authorization", "")
        state.seen.append(f"{self.command} {self.path}")
        state.auths.append(got)
        if state.require is None or got == state.require:
            return True
        body = f"proxy login needed; you sent {got!r}".encode()
        self.send_response(407)
        self.send_header("Proxy-Authenticate", 'Basic realm="loopback"')
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return False

    def _upstream(self, port: int) -> socket.socket | None:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=5)
        except OSError:
            self.send_error(502)
            return None

    def do_CONNECT(self) -> None:
        upstream = self._upstream(int(self.path.rpartition(":")[2])) if self._allowed() else None
        if upstream is None:
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        _pipe(self.connection, upstream)
        upstream.close()
        self.close_connection = True

    def _forward(self) -> None:
        parts = urlsplit(self.path)
        upstream = self._upstream(parts.port or 80) if self._allowed() else None
        if upstream is None:
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        query = f"?{parts.query}" if parts.query else ""
        head = [f"{self.command} {parts.path or '/'}{query} HTTP/1.1"]
        head += [f"{k}: {v}" for k, v in self.headers.items()
                 if k.lower() not in ("proxy-authorization", "connection")]  # fmt: skip
        head.append("Connection: close")
        upstream.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        while data := upstream.recv(65536):
            self.wfile.write(data)
        upstream.close()
        self.close_connection = True

    do_GET = do_POST = _forward  # noqa: N815 - http.server's naming


class ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    state: Proxy


@pytest.fixture
def loopback_proxy():
    server = ProxyServer(("127.0.0.1", 0), ProxyHandler)
    server.state = Proxy(url=f"http://127.0.0.1:{server.server_address[1]}")
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield server.state
    server.shutdown()
    server.server_close()


@pytest.fixture(params=["process", "in-process"])
def run(request, monkeypatch):
    """Run a tool as a host does (a process), or in this process, where coverage sees it."""

    def as_process(tool: str, call: dict[str, Any], env: dict[str, str]) -> tuple[Any, str]:
        base = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        data = json.dumps(call).encode()
        proc = subprocess.run([str(BIN / tool)], input=data, capture_output=True,
                              env=base | env, timeout=60, check=False)  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout), proc.stdout.decode() + proc.stderr.decode()

    def in_process(tool: str, call: dict[str, Any], env: dict[str, str]) -> tuple[Any, str]:
        from toolbox import module_of

        from ikigai_web.common.runner import answer
        from ikigai_web.net import http

        for name in list(os.environ):
            if "proxy" in name.lower():
                monkeypatch.delenv(name)
        for name, value in env.items():
            if name == "PYTHONPATH":  # the fake DNS of sitecustomize, here by hand
                monkeypatch.setattr(socket, "getaddrinfo", _fake_dns(socket.getaddrinfo))
            else:
                monkeypatch.setenv(name, value)
        http.tls_context.cache_clear()
        module = module_of(tool)
        try:
            out = answer(module.execute, call, module.SCHEMA)[0]
        finally:
            http.tls_context.cache_clear()
        return out, json.dumps(out)

    return as_process if request.param == "process" else in_process


def brave_env(fake_server, isolated_env) -> dict[str, str]:
    from conftest import Reply

    body = json.loads((FIXTURES / "brave" / "search.json").read_text())
    return {
        "BRAVE_API_KEY": BRAVE_KEY,
        "BRAVE_SEARCH_API_URL": fake_server.route("/brave", Reply(200, body)),
        "IKIGAI_WEB_CACHE_TTL": "0",
    }


@ALL_REAL
def test_a_search_goes_through_the_http_proxy(run, loopback_proxy, fake_server, isolated_env):
    env = brave_env(fake_server, isolated_env) | {"HTTP_PROXY": loopback_proxy.url}
    out, _ = run("web-search-brave-tool", {"query": "ikigai", "count": 2}, env)
    assert out["provider"] == "brave", out
    [line] = loopback_proxy.seen
    assert line.startswith(f"GET {fake_server.url}/brave?q=ikigai")
    assert len(fake_server.seen) == 1


@ALL_REAL
def test_no_proxy_goes_direct(run, loopback_proxy, fake_server, isolated_env):
    env = brave_env(fake_server, isolated_env)
    env |= {"HTTP_PROXY": loopback_proxy.url, "NO_PROXY": "example.org,127.0.0.1"}
    out, _ = run("web-search-brave-tool", {"query": "ikigai"}, env)
    assert out["provider"] == "brave"
    assert loopback_proxy.seen == []


@ALL_REAL
def test_proxy_credentials_are_sent_and_never_shown(run, loopback_proxy, fake_server, isolated_env):
    url = urlsplit(loopback_proxy.url)
    with_login = f"http://alice:{PASSWORD}@{url.netloc}"
    env = brave_env(fake_server, isolated_env) | {"HTTP_PROXY": with_login}
    out, text = run("web-search-brave-tool", {"query": "ikigai"}, env)
    assert out["provider"] == "brave"
    token = loopback_proxy.auths[0].removeprefix("Basic ")
    assert loopback_proxy.auths[0].startswith("Basic ")
    loopback_proxy.require = "Basic not-this-one"  # now it refuses, echoing what it got
    out, text = run("web-search-brave-tool", {"query": "ikigai"}, env)
    assert out["error_code"] == "NETWORK_ERROR", out
    assert "407" in out["error"]
    assert "HTTP_PROXY" in out["error"]
    for secret in (PASSWORD, token, "alice:"):
        assert secret not in text


@ALL_REAL
def test_https_is_tunnelled_with_connect_and_verified(run, loopback_proxy, tmp_path, isolated_env):
    import trustme

    ca = trustme.CA()
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    body = (FIXTURES / "brave" / "search.json").read_bytes()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_: object) -> None:
            pass

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("search.proxied.test").configure_cert(context)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    port = server.server_address[1]
    env = {
        "BRAVE_API_KEY": BRAVE_KEY,
        # A name only the proxy can reach: the tool never resolves it itself.
        "BRAVE_SEARCH_API_URL": f"https://search.proxied.test:{port}/res/v1/web/search",
        "HTTPS_PROXY": loopback_proxy.url,
        "SSL_CERT_FILE": str(tmp_path / "ca.pem"),
        "IKIGAI_WEB_CACHE_TTL": "0",
    }
    try:
        out, _ = run("web-search-brave-tool", {"query": "ikigai"}, env)
    finally:
        server.shutdown()
        server.server_close()
    assert out["provider"] == "brave", out
    assert loopback_proxy.seen == [f"CONNECT search.proxied.test:{port}"]


@ALL_REAL
def test_an_unreachable_proxy_is_a_network_error_naming_it(run, fake_server, isolated_env):
    from toolbox import closed_port

    env = brave_env(fake_server, isolated_env) | {"HTTP_PROXY": closed_port()}
    out, _ = run("web-search-brave-tool", {"query": "ikigai"}, env)
    assert out["error_code"] == "NETWORK_ERROR"
    assert out["error"].startswith("proxy: could not reach 127.0.0.1: through the proxy ")
    assert "(HTTP_PROXY)" in out["error"]
    assert fake_server.seen == []


@ALL_REAL
def test_a_socks_proxy_is_invalid_input_for_a_search(run, isolated_env):
    env = {"BRAVE_API_KEY": BRAVE_KEY, "ALL_PROXY": "socks5h://127.0.0.1:1080"}
    out, _ = run("web-search-brave-tool", {"query": "ikigai"}, env)
    assert out["error_code"] == "INVALID_INPUT"
    assert "ALL_PROXY" in out["error"]


# --- web-fetch: through the proxy, and its guard before it -----------------------------------


def _fake_dns(real: Any) -> Any:
    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name == "private.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
        if name in ("only-the-proxy-knows.example", "intranet"):
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, port, *args, **kwargs)

    return getaddrinfo


FAKE_DNS = """
import socket
_real = socket.getaddrinfo
def getaddrinfo(host, port, *args, **kwargs):
    name = host.decode() if isinstance(host, bytes) else host
    if name == "private.test":
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
    if name in ("only-the-proxy-knows.example", "intranet"):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
    return _real(host, port, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""


def fetch_env(tmp_path: Path, loopback_proxy: Proxy) -> dict[str, str]:
    (tmp_path / "sitecustomize.py").write_text(FAKE_DNS)
    return {
        "HTTP_PROXY": loopback_proxy.url,
        "PYTHONPATH": str(tmp_path),
        "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1",
        "IKIGAI_WEB_FETCH_ROBOTS": "0",
        "IKIGAI_WEB_FETCH_CACHE_TTL": "0",
        "IKIGAI_WEB_FETCH_RENDER": "never",
    }


@ALL_REAL
def test_web_fetch_goes_through_the_proxy(run, loopback_proxy, fake_server, tmp_path, isolated_env):
    from conftest import Reply

    url = fake_server.route("/page", Reply(200, ARTICLE, {"Content-Type": "text/html"}))
    out, _ = run("web-fetch-tool", {"url": url}, fetch_env(tmp_path, loopback_proxy))
    assert out["title"] == "Through the proxy", out
    assert loopback_proxy.seen == [f"GET {url}"]


@ALL_REAL
@pytest.mark.parametrize(
    "host", ["127.0.0.2", "private.test", "intranet", "0x7f.2", "[::1]", "169.254.169.254"]
)
def test_web_fetch_never_hands_a_private_destination_to_the_proxy(
    run, loopback_proxy, tmp_path, isolated_env, host
):
    out, _ = run(
        "web-fetch-tool", {"url": f"http://{host}:8080/"}, fetch_env(tmp_path, loopback_proxy)
    )
    assert out["error_code"] == "BLOCKED_URL", out
    assert loopback_proxy.seen == []


@ALL_REAL
def test_a_name_only_the_proxy_can_resolve_goes_to_it(run, loopback_proxy, tmp_path, isolated_env):
    """No DNS here: the name goes to the proxy, which cannot reach it either (502)."""
    env = fetch_env(tmp_path, loopback_proxy)
    out, _ = run("web-fetch-tool", {"url": "http://only-the-proxy-knows.example:9/"}, env)
    assert loopback_proxy.seen == ["GET http://only-the-proxy-knows.example:9/"]
    assert out["error_code"] in ("HTTP_ERROR", "NETWORK_ERROR"), out


@ALL_REAL
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_web_fetch_says_the_proxy_refused_its_login_naming_the_variable(
    run, loopback_proxy, tmp_path, isolated_env, scheme
):
    """A 407 is the proxy's answer, forwarding (http://) or tunnelling (https://): not the
    page's HTTP_ERROR."""
    url = urlsplit(loopback_proxy.url)
    variable = f"{scheme.upper()}_PROXY"
    env = fetch_env(tmp_path, loopback_proxy)
    del env["HTTP_PROXY"]
    env[variable] = f"http://alice:{PASSWORD}@{url.netloc}"
    loopback_proxy.require = "Basic not-this-one"
    out, text = run("web-fetch-tool", {"url": f"{scheme}://pages.example:9/page"}, env)
    assert out["error_code"] == "NETWORK_ERROR", out
    assert out["error"].startswith("proxy: could not reach pages.example: through the proxy ")
    assert f"({variable})" in out["error"]
    assert "407" in out["error"]
    assert "check the user and password" in out["error"]
    token = loopback_proxy.auths[0].removeprefix("Basic ")
    for secret in (PASSWORD, token, "alice:"):
        assert secret not in text


@ALL_REAL
@pytest.mark.parametrize("scheme", ["http", "https"])
def test_web_fetch_names_the_variable_of_an_unreachable_proxy(run, tmp_path, isolated_env, scheme):
    from toolbox import closed_port

    (tmp_path / "sitecustomize.py").write_text(FAKE_DNS)
    env = {"PYTHONPATH": str(tmp_path), "IKIGAI_WEB_FETCH_ROBOTS": "0",
           "IKIGAI_WEB_FETCH_CACHE_TTL": "0", "ALL_PROXY": closed_port()}  # fmt: skip
    out, _ = run("web-fetch-tool", {"url": f"{scheme}://pages.example:9/page"}, env)
    assert out["error_code"] == "NETWORK_ERROR", out
    assert out["error"].startswith("proxy: could not reach pages.example: through the proxy ")
    assert "(ALL_PROXY)" in out["error"]
