"""web-fetch's browser: app shells rendered in headless Chromium, every request guarded.

The pages are served on loopback by the tests. 127.0.0.1 is let through with
IKIGAI_WEB_FETCH_ALLOW_HOSTS, as a user lets an intranet host through; 127.0.0.2 stands for a
private address and must never be reached, nor a name that resolves to it. Where no browser
is installed these tests are skipped, and say so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from conftest import HANG_GUARD
from render_support import (
    DATA,
    PROSE,
    ROOMY,
    ROOT,
    TOOL,
    chromiums,
    environment,
    fetch,
    gone,
    needs_browser,
    shell,
)

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.procs import descendants
from ikigai_web.common.settings import Settings
from ikigai_web.fetch.network import browser
from ikigai_web.tools import web_fetch

# --- rendering ------------------------------------------------------------------------------


@needs_browser
def test_an_app_shell_filled_by_a_same_origin_fetch_is_rendered(sites, tmp_path):
    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    answer = fetch(tmp_path, {"url": site.url("/app")})
    assert answer["success"], answer
    assert PROSE in answer["content"], answer
    assert answer["title"] in ("Rendered headline", "App")
    assert "warnings" not in answer
    # The page itself was fetched once: the browser was handed the bytes already fetched.
    assert site.seen.count("/app") == 1
    assert "/data.json" in site.seen


@needs_browser
def test_render_never_keeps_the_shell_as_sent(sites, tmp_path):
    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    answer = fetch(tmp_path, {"url": site.url("/app"), "render": "never"})
    assert PROSE not in answer["content"]
    assert [w["code"] for w in answer["warnings"]] == ["NEEDS_JAVASCRIPT"]
    assert "/data.json" not in site.seen


@needs_browser
def test_render_always_renders_a_page_that_has_text_already(sites, tmp_path):
    words = " ".join(["Plenty of words are here before any script runs."] * 12)
    page = f"<html><body><main><p>{words}</p><div id=late></div></main><script>"
    page += "document.getElementById('late').innerHTML = "
    page += "'<p>Added by the script, a sentence of its own.</p>';"
    page += "</script></body></html>"
    site = sites({"/": ("text/html", page.encode())})
    plain = fetch(tmp_path, {"url": site.url("/")})
    assert "Added by the script" not in plain["content"]  # auto: not an app shell
    rendered = fetch(tmp_path, {"url": site.url("/"), "render": "always"})
    assert "Added by the script" in rendered["content"], rendered


@needs_browser
def test_the_setting_changes_the_default_and_the_call_wins(sites, tmp_path):
    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    off = fetch(tmp_path, {"url": site.url("/app")}, IKIGAI_WEB_FETCH_RENDER="never")
    assert PROSE not in off["content"]
    on = fetch(
        tmp_path, {"url": site.url("/app"), "render": "auto"}, IKIGAI_WEB_FETCH_RENDER="never"
    )
    assert PROSE in on["content"]


# --- the guard holds inside the browser ------------------------------------------------------

PRIVATE_PROBES = """
fetch('http://127.0.0.2:PRIVATE/steal').then(function () { mark('ip reached'); },
  function () { mark('ip blocked'); });
fetch('http://private.test:PRIVATE/steal').then(function () { mark('name reached'); },
  function () { mark('name blocked'); });
fetch('file:///etc/passwd').then(function () { mark('file reached'); },
  function () { mark('file blocked'); });
try {
  var ws = new WebSocket('ws://127.0.0.1:PUBLIC/socket');
  ws.onopen = function () { mark('socket open'); };
  ws.onclose = function () { mark('socket blocked'); };
} catch (e) { mark('socket blocked'); }
var frame = document.createElement('iframe'); frame.src = 'file:///etc/passwd';
document.body.appendChild(frame);
"""

# A name that the machine's resolver answers with 127.0.0.2, for the tool's process only.
FAKE_DNS = """
import socket
_real = socket.getaddrinfo
def getaddrinfo(host, port, *args, **kwargs):
    if (host.decode() if isinstance(host, bytes) else host) == "private.test":
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
    return _real(host, port, *args, **kwargs)
socket.getaddrinfo = getaddrinfo
"""


@needs_browser
def test_scripts_cannot_reach_private_addresses_files_or_sockets(sites, tmp_path):
    private = sites({"/steal": ("text/plain", b"secret")}, host="127.0.0.2")
    probes = PRIVATE_PROBES.replace("PRIVATE", str(private.port))
    site = sites({"/data.json": ("application/json", DATA)})
    site.routes["/app"] = shell(probes.replace("PUBLIC", str(site.port)))
    (tmp_path / "sitecustomize.py").write_text(FAKE_DNS)
    answer = fetch(tmp_path, {"url": site.url("/app")}, PYTHONPATH=str(tmp_path))
    content = answer["content"]
    assert PROSE in content  # the page still renders
    for probe in ("ip", "name", "file", "socket"):
        assert f"{probe} blocked" in content, content
        assert f"{probe} reached" not in content
    assert "socket open" not in content
    assert private.seen == []  # nothing reached the private address, by IP or by name
    assert "/socket" not in site.seen  # the WebSocket never left the browser
    assert "root:" not in content


# A page's WebSocket fails in the page, at once, as Chromium's own does when its connection
# fails. Playwright's route alone closes it later (clean, no error, code 0, and under load
# sometimes never), so these marks also show that the page sees web-fetch's socket.
SOCKET_PROBES = """
var socket = new WebSocket('ws://127.0.0.1:PUBLIC/socket'), seen = ['made ' + socket.readyState];
try { socket.send('hello'); seen.push('sent'); } catch (e) { seen.push('send threw ' + e.name); }
socket.onerror = function () { seen.push('error ' + socket.readyState); };
socket.onclose = function (e) {
  seen.push('close ' + e.code + ' clean ' + e.wasClean + ' reason ' + JSON.stringify(e.reason));
  mark(seen.join(' then '));
};
setTimeout(function () { mark('a task later the socket is in state ' + socket.readyState); }, 0);
"""

# What a script may look at on a WebSocket, checked against what Chromium's own shows: each
# check that does not hold leaves "wrong" and its name.
SOCKET_SHAPE_PROBES = """
function expect(what, holds) { if (!holds) { mark('wrong ' + what); } }
function threw(make, name) { try { make(); } catch (e) { return e.name === name; } return false; }
var socket = new WebSocket('/socket', 'chat'), calls = [];
expect('constants', [WebSocket, socket].every(function (o) {
  return o.CONNECTING === 0 && o.OPEN === 1 && o.CLOSING === 2 && o.CLOSED === 3; }));
expect('url', socket.url === 'ws://127.0.0.1:PUBLIC/socket');
expect('fields', socket.protocol === '' && socket.extensions === '' &&
  socket.bufferedAmount === 0 && socket.binaryType === 'blob' && socket.readyState === 0);
expect('kind', socket instanceof WebSocket && socket instanceof EventTarget &&
  Object.prototype.toString.call(socket) === '[object WebSocket]');
expect('fragment', threw(function () { new WebSocket('ws://127.0.0.1/#part'); }, 'SyntaxError'));
expect('scheme', threw(function () { new WebSocket('ftp://127.0.0.1/'); }, 'SyntaxError'));
expect('close code', threw(function () { socket.close(1001); }, 'InvalidAccessError'));
socket.binaryType = 'text';
expect('binary type', socket.binaryType === 'blob');
socket.onopen = function () { calls.push('open'); };
socket.onerror = function () { calls.push('replaced handler'); };
socket.onerror = function () { calls.push('error'); };
socket.onmessage = function () { calls.push('message'); };
socket.onmessage = null;
expect('no handler', socket.onmessage === null);
socket.addEventListener('close', function (e) {
  calls.push('close ' + e.code + ' ' + (this === socket) + ' ' + (e instanceof CloseEvent));
});
socket.onclose = function () {
  expect('events ' + calls.join(' '), calls.join() === 'error,close 1006 true true');
  expect('closed', socket.readyState === WebSocket.CLOSED);
  mark('socket checked');
};
var early = new WebSocket('ws://127.0.0.1:PUBLIC/early'), endings = [];
early.close();
expect('closing', early.readyState === WebSocket.CLOSING);
early.onerror = function () { endings.push('error'); };
early.onclose = function (e) { endings.push('close ' + e.code + ' ' + e.wasClean);
  expect('closed early ' + endings.join(' '), endings.join() === 'error,close 1006 false');
  mark('early close checked'); };
window.framed = function (frame) {
  expect('a frame of its own', frame.WebSocket !== WebSocket);
  var inner = new frame.WebSocket('ws://127.0.0.1:PUBLIC/framed');
  inner.onclose = function (e) { expect('frame close', e.code === 1006 && !e.wasClean);
    mark('frame checked'); };
};
var frame = document.createElement('iframe');
frame.srcdoc = '<script>parent.framed(window)<\\/script>';
document.body.appendChild(frame);
"""


def socket_page(sites, tmp_path, probes):
    """The site and the rendered content of an app page that runs these socket probes."""
    site = sites({"/data.json": ("application/json", DATA)})
    site.routes["/app"] = shell(probes.replace("PUBLIC", str(site.port)))
    content = fetch(tmp_path, {"url": site.url("/app")})["content"]
    assert PROSE in content
    return site, content


@needs_browser
def test_a_websocket_fails_at_once_as_a_refused_connection_does(sites, tmp_path):
    site, content = socket_page(sites, tmp_path, SOCKET_PROBES)
    ended = "made 0 then send threw InvalidStateError then error 3 then close 1006 clean false"
    assert ended + ' reason ""' in content, content
    assert "a task later the socket is in state 3" in content, content
    assert "/socket" not in site.seen


@needs_browser
def test_the_failed_websocket_looks_like_chromiums_own_in_every_frame(sites, tmp_path):
    site, content = socket_page(sites, tmp_path, SOCKET_SHAPE_PROBES)
    for checked in ("socket checked", "early close checked", "frame checked"):
        assert checked in content, content
    assert "wrong" not in content, content
    assert not {"/socket", "/early", "/framed"} & set(site.seen)


@needs_browser
def test_pop_ups_downloads_and_navigations_away_get_nothing(sites, tmp_path):
    probes = """
    window.open('/popup');
    var a = document.createElement('a'); a.href = '/file.zip'; a.download = 'file.zip';
    document.body.appendChild(a); a.click();
    setTimeout(function () { location.href = '/elsewhere'; }, 300);
    """
    site = sites(
        {
            "/app": shell(probes),
            "/data.json": ("application/json", DATA),
            "/popup": ("text/html", b"<p>pop-up</p>"),
            "/file.zip": ("application/zip", b"PK\x03\x04" + b"\0" * 64),
            "/elsewhere": ("text/html", b"<p>another page</p>"),
        }
    )
    downloads = tmp_path / "home"
    downloads.mkdir()
    answer = fetch(tmp_path, {"url": site.url("/app")}, HOME=str(downloads))
    assert PROSE in answer["content"], answer
    assert not {"/popup", "/file.zip", "/elsewhere"} & set(site.seen), site.seen
    assert not any(downloads.rglob("file.zip*"))


@needs_browser
@pytest.mark.loopback
def test_a_page_that_never_settles_ends_in_time_with_a_warning(sites, isolated_env, monkeypatch):
    """A page that loads forever is read when the call's deadline, less the time kept for
    reading (READ_RESERVE), says so. The call's clock jumps, once the page is open, to 3 s
    before that: however long a busy machine took to start the browser, the deadline leaves
    the wait 3 s, and only the deadline can end it (the settle time, its other bound, is the
    longest a setting allows)."""
    probes = "setInterval(function () { fetch('/tick?' + Math.random()); }, 100);"
    site = sites({"/app": shell(probes), "/data.json": ("application/json", DATA)})
    jumped = [0.0]
    clock = SimpleNamespace(monotonic=lambda: time.monotonic() + jumped[0], sleep=time.sleep,
                            time=time.time)  # fmt: skip
    monkeypatch.setattr("ikigai_web.net.http.time", clock)  # the call's Deadline reads this one
    settle = browser._settle

    def settle_late(page: Any, call: Any) -> bool:
        jumped[0] += call.session.deadline.remaining() - browser.READ_RESERVE - 3
        return settle(page, call)

    monkeypatch.setattr(browser, "_settle", settle_late)
    environ = {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1", "IKIGAI_WEB_FETCH_ROBOTS": "0",
               "IKIGAI_WEB_FETCH_CACHE_TTL": "0", **ROOMY}  # fmt: skip
    started = time.monotonic()
    answer = web_fetch.execute({"url": site.url("/app")}, Settings(environ=environ))
    assert time.monotonic() - started < HANG_GUARD
    assert PROSE in answer["content"], answer
    assert "RENDER_UNSETTLED" in [w["code"] for w in answer["warnings"]]


# --- no browser left behind ------------------------------------------------------------------


@needs_browser
def test_the_browser_is_gone_after_a_call(sites, tmp_path, own_tmp):
    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    answer = fetch(tmp_path, {"url": site.url("/app")}, TMPDIR=own_tmp)
    assert PROSE in answer["content"]  # a browser rendered it
    assert gone(chromiums(own_tmp), own_tmp)


@needs_browser
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_the_browser_is_gone_when_the_call_is_killed(sites, tmp_path, own_tmp, signum):
    probes = "setInterval(function () { fetch('/tick?' + Math.random()); }, 100);"
    site = sites({"/app": shell(probes), "/data.json": ("application/json", DATA)})
    proc = subprocess.Popen(
        [str(TOOL)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(tmp_path, TMPDIR=own_tmp),  # a page that never settles: still loading
    )
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"url": site.url("/app")}).encode())
    proc.stdin.close()
    # Once the browser runs: a busy machine may take long to load the page, and the call may
    # end before it does (with the page as sent), but a browser is killed as soon as it runs.
    end = time.monotonic() + HANG_GUARD
    while not (started := chromiums(own_tmp)) and time.monotonic() < end:
        time.sleep(0.05)
    assert started  # the browser is up
    proc.send_signal(signum)
    proc.wait(timeout=HANG_GUARD)
    assert gone(started, own_tmp), "a browser process outlived the killed call"


# --- without a browser, and the parts that need none -----------------------------------------


def test_always_without_a_browser_says_how_to_install_one(sites, tmp_path):
    site = sites({"/app": shell()})
    answer = fetch(
        tmp_path,
        {"url": site.url("/app"), "render": "always"},
        IKIGAI_WEB_FETCH_BROWSER="/nonexistent/chromium",
    )
    assert answer["error_code"] == "INVALID_INPUT"
    assert "ikigai-web-tools[browser]" in answer["error"]
    assert "apt install chromium" in answer["error"]


def test_auto_without_a_browser_is_as_before(sites, tmp_path):
    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    answer = fetch(
        tmp_path, {"url": site.url("/app")}, IKIGAI_WEB_FETCH_BROWSER="/nonexistent/chromium"
    )
    assert answer["success"]
    assert [w["code"] for w in answer["warnings"]] == ["NEEDS_JAVASCRIPT"]
    assert "/data.json" not in site.seen


@pytest.mark.parametrize("value", ["sometimes", 1, True, ["auto"]])
def test_render_must_be_one_of_the_three_modes(value):
    call = {"url": "https://example.com/", "render": value}
    with pytest.raises(ToolError, match="'render'") as caught:
        web_fetch.parse_input(call)
    assert caught.value.code is ErrorCode.INVALID_INPUT


@pytest.mark.parametrize("value", ["", "default", "any", None])
def test_render_not_set_is_the_setting(value):
    call = {"url": "https://example.com/", "render": value}
    assert web_fetch.parse_input(call).render is None


@pytest.mark.parametrize("value", ["auto", "always", "never", "ALWAYS"])
def test_render_takes_the_three_modes(value):
    call = {"url": "https://example.com/", "render": value}
    assert web_fetch.parse_input(call).render == value.lower()


def test_the_setting_takes_only_the_three_modes():
    assert Settings(environ={"IKIGAI_WEB_FETCH_RENDER": " Always "}).fetch_render == "always"
    with pytest.raises(Exception, match="auto, always or never"):
        _ = Settings(environ={"IKIGAI_WEB_FETCH_RENDER": "maybe"}).fetch_render


def test_render_choices_do_not_share_cache_entries():
    settings = Settings(environ={})
    keys = {
        json.dumps(
            web_fetch.cache_key(web_fetch.Params("https://a.example/", render=mode), settings)
        )
        for mode in ("auto", "always", "never")
    }
    assert len(keys) == 3


def test_schema_does_not_import_the_browser():
    code = "import sys, ikigai_web.tools.web_fetch; print('playwright' in sys.modules)"
    proc = subprocess.run(
        [str(ROOT / ".venv/bin/python"), "-c", code], capture_output=True, check=True, cwd=ROOT
    )
    assert proc.stdout.strip() == b"False"


def test_descendants_finds_a_grandchild_and_not_others():
    child = subprocess.Popen(["sh", "-c", "sleep 30 & wait"])
    try:
        end = time.monotonic() + HANG_GUARD
        while len(descendants(child.pid)) < 1 and time.monotonic() < end:
            time.sleep(0.02)
        below = descendants(child.pid)
        assert len(below) == 1
        assert child.pid in descendants(os.getpid())
        assert os.getpid() not in descendants(child.pid)
    finally:
        for pid in descendants(child.pid):
            os.kill(pid, signal.SIGKILL)
        child.kill()
        child.wait()


@needs_browser
@pytest.mark.loopback
def test_a_browser_over_its_memory_cap_is_killed_and_the_page_comes_as_sent(
    sites, isolated_env, monkeypatch, own_tmp, capfd
):
    settle = browser._settle

    def capped_once_open(page: Any, call: Any) -> bool:
        # Once the page is open, so its profile and artifact folders exist: any real
        # browser is larger than this. The page may settle before the watch's next look on
        # a busy machine: it is left to look first.
        monkeypatch.setattr(browser, "MEMORY_CAP", 1 << 20)
        end = time.monotonic() + HANG_GUARD
        while not call.watch.reason and time.monotonic() < end:
            time.sleep(0.05)
        return settle(page, call)

    monkeypatch.setattr(browser, "_settle", capped_once_open)
    monkeypatch.setenv("TMPDIR", own_tmp)  # what Playwright's driver, started now, inherits
    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    environ = {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1", "IKIGAI_WEB_FETCH_ROBOTS": "0",
               "IKIGAI_WEB_FETCH_CACHE_TTL": "0"}  # fmt: skip
    answer = web_fetch.execute({"url": site.url("/app")}, Settings(environ=environ))
    failed = [w for w in answer["warnings"] if w["code"] == "RENDER_FAILED"]
    assert failed, answer
    assert "memory" in failed[0]["message"]
    assert PROSE not in answer["content"]
    assert gone(chromiums(own_tmp), own_tmp)
    import gc

    gc.collect()  # a future whose exception was never retrieved says so when collected
    assert capfd.readouterr().err == ""
    assert list(Path(own_tmp).iterdir()) == []  # no profile, no artifacts folder


@needs_browser
def test_a_call_in_the_mcp_servers_warm_worker_renders_under_its_data_limit(
    sites, tmp_path, monkeypatch
):
    """A warm call has a limit on its data (ikigai_web/host/warm.py), under which Chromium's pages
    crash: the browser starts without it. The tool's path does not exist, so a call that
    did not run warm would fail."""
    from ikigai_web.host import process, workers
    from ikigai_web.host.discovery import Tool

    site = sites({"/app": shell(), "/data.json": ("application/json", DATA)})
    for name, value in environment(tmp_path).items():
        monkeypatch.setenv(name, value)
    entry = "ikigai_web.tools.web_fetch:main"
    warm = workers.Warm([entry])
    warm.start()
    try:
        assert warm.ready.wait(60)
        tool = Tool("web_fetch", tmp_path / "nowhere", "installation", entry=entry)
        data = json.dumps({"url": site.url("/app"), "render": "always"}).encode()
        outcome = process.run([str(tool.path)], data, timeout=60, limit=1 << 20, tied=True,
                              start=warm.starter(tool))  # fmt: skip
    finally:
        warm.close()
    answer = json.loads(outcome.stdout)
    assert PROSE in answer["content"], answer


def test_the_browser_starts_without_the_soft_data_limit_which_comes_back():
    import resource

    saved = resource.getrlimit(resource.RLIMIT_DATA)
    soft = 64 << 30 if saved[1] == resource.RLIM_INFINITY else saved[1] - 1
    resource.setrlimit(resource.RLIMIT_DATA, (soft, saved[1]))
    try:
        with browser._without_data_limit():
            assert resource.getrlimit(resource.RLIMIT_DATA) == (saved[1], saved[1])
        assert resource.getrlimit(resource.RLIMIT_DATA) == (soft, saved[1])
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, saved)


@pytest.mark.loopback
def test_only_a_scripted_shell_is_rendered_on_auto(sites, isolated_env, monkeypatch):
    rendered: list[str] = []

    def fake_render(_session: Any, url: str, _first: Any) -> browser.Rendered:
        rendered.append(url)
        return browser.Rendered("<html><body><p>rendered</p></body></html>", settled=True)

    monkeypatch.setattr(browser, "render", fake_render)
    short = "<html><body><p>A short page, with no script at all.</p></body></html>"
    # Data blocks no browser runs: a short product page's JSON-LD is no app.
    declared = short.replace("<body>", '<body><script type="application/ld+json">{}</script>'
                             '<script type="text/template"><p>t</p></script>')  # fmt: skip
    site = sites({"/short": ("text/html", short.encode()), "/app": shell(),
                  "/declared": ("text/html", declared.encode())})  # fmt: skip
    environ = {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1", "IKIGAI_WEB_FETCH_ROBOTS": "0",
               "IKIGAI_WEB_FETCH_CACHE_TTL": "0"}  # fmt: skip
    answer = web_fetch.execute({"url": site.url("/short")}, Settings(environ=environ))
    assert answer["content"] == "A short page, with no script at all."
    answer = web_fetch.execute({"url": site.url("/declared")}, Settings(environ=environ))
    assert answer["content"] == "A short page, with no script at all."
    assert rendered == []
    answer = web_fetch.execute({"url": site.url("/app")}, Settings(environ=environ))
    assert answer["content"] == "rendered"
    assert rendered == [site.url("/app")]


@needs_browser
@pytest.mark.loopback
def test_in_process_the_guard_answers_every_request_of_the_page(sites, isolated_env, monkeypatch):
    """The same probes as above, in this process: what the browser asked for, request by
    request, went through the session's guard (and the name through its resolver)."""
    import socket

    real = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name == "private.test":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.2", port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    private = sites({"/steal": ("text/plain", b"secret")}, host="127.0.0.2")
    probes = PRIVATE_PROBES.replace("PRIVATE", str(private.port))
    probes += "window.open('/popup'); setTimeout(function () { location.href = '/away'; }, 300);"
    site = sites({"/data.json": ("application/json", DATA), "/style.css": ("text/css", b"p{}")})
    page = shell(probes.replace("PUBLIC", str(site.port)))
    extra = b'<head><link rel="stylesheet" href="/style.css"><img src="/i.png">'
    site.routes["/app"] = (page[0], page[1].replace(b"<head>", extra))
    environ = {"IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1", "IKIGAI_WEB_FETCH_ROBOTS": "0",
               "IKIGAI_WEB_FETCH_CACHE_TTL": "0", **ROOMY}  # fmt: skip
    answer = web_fetch.execute({"url": site.url("/app")}, Settings(environ=environ))
    assert PROSE in answer["content"], answer
    for probe in ("ip", "name", "file", "socket"):
        assert f"{probe} blocked" in answer["content"]
    assert private.seen == []
    assert not {"/popup", "/away", "/i.png"} & set(site.seen)
    assert "/style.css" in site.seen
