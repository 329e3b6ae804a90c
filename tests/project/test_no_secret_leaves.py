"""Nothing secret leaves the process (protocol.md, section 2; issue 9, section 3).

Every tool runs through every path that can be provoked from outside: success, AUTH_MISSING
with the other tools' keys set, a credentials file that is not JSON, AUTH_INVALID, RATE_LIMIT,
API_ERROR from JSON and from HTML, a redirect, NETWORK_ERROR. The server on 127.0.0.1 echoes
every credential it was sent, in every spelling (as sent, percent-encoded, base64), in its
answers' JSON, HTML and headers and in the links it returns. The credentials are distinctive
and come from the environment, or from credentials.json, flat or nested; each call is made
for the model (JSON) and for a person (`--format markdown`). No spelling of any credential may
appear in stdout, stderr or any file of the cache.

SearXNG is run twice: with its login as URL user-info and as SEARXNG_AUTH. web-fetch's
credentials are the URL's user-info and secret query parameters.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus

import pytest
from toolbox import (
    KEYS,
    PROFILES,
    Answer,
    Loopback,
    Seen,
    check_answer,
    closed_port,
    current,
    loopback,
    reply,
    schema,
    tool,
)

from ikigai_web.common import redact
from ikigai_web.common.runner import run
from ikigai_web.search.registry import WITH_CREDENTIALS as PROVIDERS

# Nothing is mocked: every request goes to the loopback server or to a refused port.
pytestmark = pytest.mark.httpx_mock(should_mock=lambda _: False)

SEARX_USER, SEARX_URL_PASSWORD = "sx-user", "Searx+pw/URL=1~a"
SEARX_AUTH_PASSWORD = "Searx+pw/Auth=2~b"
FETCH_USER, FETCH_PASSWORD = "fetch-user", "Fetch+pw/3=c"
FETCH_PARAMS = {"api_key": "Fetch-KEY+/=4d", "access_token": "Fetch-TOK+/=5e"}
# A login written into an endpoint override (a gateway's), and the Basic token it becomes.
OVERRIDE_USER, OVERRIDE_PASSWORD = "ovr-user-9f", "Ovr+pw/=6f"
OVERRIDE_TOKEN = base64.b64encode(f"{OVERRIDE_USER}:{OVERRIDE_PASSWORD}".encode()).decode()
USER_ONLY_TOKEN = base64.b64encode(f"{SEARX_USER}:".encode()).decode()
SECRETS = (
    OVERRIDE_USER,
    OVERRIDE_PASSWORD,
    OVERRIDE_TOKEN,
    USER_ONLY_TOKEN,
    *(v for k, v in KEYS.items() if k != "GOOGLE_SEARCH_ENGINE_ID"),  # an ID, not a secret
    SEARX_URL_PASSWORD,
    SEARX_AUTH_PASSWORD,
    FETCH_PASSWORD,
    *FETCH_PARAMS.values(),
)


def spellings(secret: str) -> list[str]:
    """Every way a secret may travel or be echoed: as is, percent-encoded, base64."""
    raw = secret.encode()
    b64 = base64.b64encode(raw).decode()
    urlsafe = base64.urlsafe_b64encode(raw).decode()
    return list(dict.fromkeys([secret, quote(secret, safe=""), quote(secret), quote_plus(secret),
                               b64, b64.rstrip("="), urlsafe, urlsafe.rstrip("=")]))  # fmt: skip


def leaks(text: str) -> list[str]:
    low = text.lower()
    return [form for secret in SECRETS for form in spellings(secret) if form.lower() in low]


# --- who is run, and how it is configured ---------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """One tool with one way of holding its credentials.

    `credentials(base)` are its own (variable name -> value; they go to the environment or
    credentials.json), `endpoints(base)` the rest of its environment, `call(base, path)` its
    call on a path (each path its own, so none is answered from another's cache entry);
    `differs` maps a path to this tool's own code for it, or to "skip" where it has none.
    """

    label: str
    script: str
    answer: Callable[[str, str, str], Answer]
    credentials: Callable[[str], dict[str, str]]
    endpoints: Callable[[str], dict[str, str]]
    call: Callable[[str, str], dict[str, Any]] = lambda _, path: {"query": f"ikigai {path}"}
    differs: dict[str, str | None] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return str(schema(self.script)["name"])


def _searched(script: str, **differs: str | None) -> Subject:
    """A search tool as toolbox profiles it, configured by its keys."""
    profile = PROFILES[script]
    return Subject(profile.name, script, profile.answer, lambda _: dict(profile.keys),
                   profile.env, differs=differs)  # fmt: skip


def _userinfo(base: str, user: str, password: str) -> str:
    return base.replace("://", f"://{user}:{quote(password, safe='')}@", 1)


def _fetch_url(base: str, path: str) -> str:
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in FETCH_PARAMS.items())
    return f"{_userinfo(base, FETCH_USER, FETCH_PASSWORD)}/page?q={quote(path)}&{query}"


def _page(title: str, text: str, url: str) -> Answer:
    links = f'<a href="{escape(url)}">a link that echoes</a>'
    body = f"<p>{escape(text)}</p>" * 3
    html = f"<html><head><title>{escape(title)}</title></head><body><article><h1>Echo</h1>"
    return f"{html}{body}<p>{links}</p></article></body></html>".encode(), "text/html"


def _override_login(script: str, variable: str) -> Subject:
    """A search tool whose endpoint override carries a login as URL user-info."""
    profile = PROFILES[script]

    def endpoints(base: str) -> dict[str, str]:
        env: dict[str, str] = profile.env(base)
        return env | {variable: _userinfo(env[variable], OVERRIDE_USER, OVERRIDE_PASSWORD)}

    return Subject(f"{profile.name}-override-login", script, profile.answer,
                   lambda _: dict(profile.keys), endpoints)  # fmt: skip


GEMINI = PROFILES["web-search-gemini-tool"]
FETCHING = {"success": None, "redirect": None, "AUTH_INVALID": "HTTP_ERROR",
            "RATE_LIMIT": "HTTP_ERROR", "API_ERROR (HTML)": "HTTP_ERROR",
            "API_ERROR (JSON)": "HTTP_ERROR", "AUTH_MISSING": "skip"}  # fmt: skip
SUBJECTS = [
    _searched("web-search-brave-tool"),
    _searched("web-search-google-tool"),
    _searched("web-search-tavily-tool", **{"API_ERROR (JSON)": "INVALID_INPUT"}),
    _searched("web-search-duckduckgo-tool", AUTH_INVALID="API_ERROR", AUTH_MISSING="skip"),
    _searched("web-search-auto-tool"),
    # Gemini with its redirect links resolved: the echo server's links redirect with the keys.
    Subject("gemini", GEMINI.script, GEMINI.answer, lambda _: dict(GEMINI.keys),
            lambda base: GEMINI.env(base) | {"IKIGAI_WEB_GEMINI_RESOLVE": "1",
                                             "GEMINI_REDIRECT_URL":
                                                 f"{base}/grounding-api-redirect/",
                                             "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1"}),
    Subject("searxng-userinfo", "web-search-searxng-tool", PROFILES[
            "web-search-searxng-tool"].answer,
            lambda base: {"SEARXNG_URL": _userinfo(base, SEARX_USER, SEARX_URL_PASSWORD) +
                          "/searx/"}, lambda _: {}, differs={"redirect": None}),
    _override_login("web-search-brave-tool", "BRAVE_SEARCH_API_URL"),
    _override_login("web-search-google-tool", "GOOGLE_SEARCH_API_URL"),
    _override_login("web-search-gemini-tool", "GEMINI_API_URL"),
    Subject("searxng-user-only", "web-search-searxng-tool", PROFILES[
            "web-search-searxng-tool"].answer,
            lambda base: {"SEARXNG_URL": base.replace("://", f"://{SEARX_USER}@", 1) +
                          "/searx/"}, lambda _: {}, differs={"redirect": None}),
    Subject("searxng-auth", "web-search-searxng-tool", PROFILES[
            "web-search-searxng-tool"].answer,
            lambda base: {"SEARXNG_URL": base + "/searx/",
                          "SEARXNG_AUTH": f"{SEARX_USER}:{SEARX_AUTH_PASSWORD}"},
            lambda _: {}, differs={"redirect": None}),
    Subject("fetch", "web-fetch-tool", _page, lambda _: {},
            lambda _: {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1"},
            lambda base, path: {"url": _fetch_url(base, path)}, differs=FETCHING),
]  # fmt: skip


def _nested_path(variable: str) -> tuple[str, str]:
    """Where credentials.json's nested layout keeps what `variable` holds."""
    from ikigai_web.tools.web_search_searxng import AUTH

    fields = [(p.key, f) for p in PROVIDERS.values() for f in p.fields] + [("searxng", AUTH)]
    return next((key, f.name) for key, f in fields if f.env[0] == variable)


def configure(source: str, values: dict[str, str], config: Path, monkeypatch: Any) -> None:
    """Credentials in the environment, or in credentials.json laid out flat or nested."""
    path = config / "credentials.json"
    path.unlink(missing_ok=True)
    for name in (*KEYS, "SEARXNG_URL", "SEARXNG_AUTH"):
        monkeypatch.delenv(name, raising=False)
    if source == "env":
        for name, value in values.items():
            monkeypatch.setenv(name, value)
    elif source == "flat":
        path.write_text(json.dumps(values))
    else:
        nested: dict[str, dict[str, str]] = {}
        for name, value in values.items():
            if name != "GOOGLE_API_KEY":  # a second name for Gemini's key, flat only
                provider, key = _nested_path(name)
                nested.setdefault(provider, {})[key] = value
        path.write_text(json.dumps({"web_search": nested}))


# --- what the server answers ----------------------------------------------------------------


def received(seen: Seen) -> list[str]:
    """The secrets a request carried, in any spelling or as HTTP Basic auth."""
    sent = [unquote_plus(seen.path), unquote_plus(seen.body.decode("utf-8", "replace"))]
    for value in seen.headers.values():
        sent.append(value)
        scheme, _, token = value.partition(" ")
        if scheme.lower() == "basic":
            sent.append(base64.b64decode(token).decode("utf-8", "replace"))
    return [s for s in SECRETS if any(s in text for text in sent)]


def echo(seen: Seen) -> str:
    """Every secret the request carried, in every spelling, and its headers as sent."""
    forms = [form for secret in received(seen) for form in spellings(secret)]
    headers = [f"{k}: {v}" for k, v in seen.headers.items() if k.lower() != "host"]
    return " ".join(forms + headers)


def link(server: Loopback, seen: Seen) -> str:
    """A result URL holding the secrets; on the server, so Gemini resolves it too."""
    query = "&".join(f"key={quote(s, safe='')}" for s in received(seen))
    return f"{server.url}/grounding-api-redirect/r?{query}"


def error_json(status: int, text: str) -> str:
    """An error body in every provider's documented shape at once, all saying `text`."""
    error = {"code": status, "message": text, "detail": text, "status": "INVALID_ARGUMENT"}
    return json.dumps({"error": error, "detail": {"error": text}, "message": text})


def html_page(text: str) -> str:
    return f"<html><head><title>{escape(text)}</title></head><body><p>{escape(text)}</p></html>"


Behaviour = Callable[[Subject, Loopback, Seen], Any]


def _success(subject: Subject, server: Loopback, seen: Seen) -> Any:
    said = echo(seen)
    body, ctype = subject.answer(f"Ikigai {said}", said, link(server, seen))
    return reply(body, ctype, headers={"X-Echo": said})


def _failing(status: int, html: bool = False, **headers: str) -> Behaviour:
    def serve(_: Subject, __: Loopback, seen: Seen) -> Any:
        said = echo(seen)
        shaped = {"X-Echo": said, "WWW-Authenticate": f'Basic realm="{said}"'}
        shaped |= {k.replace("_", "-"): v for k, v in headers.items()}
        if html:
            return reply(html_page(said), "text/html", status, shaped)
        return reply(error_json(status, said), "application/json", status, shaped)

    return serve


def _redirect(_: Subject, __: Loopback, seen: Seen) -> Any:
    query = "&".join(f"token={quote(s, safe='')}" for s in received(seen))
    return reply(b"", None, 302, {"Location": f"/landing?{query}", "X-Echo": echo(seen)})


@dataclass(frozen=True)
class Path_:  # noqa: N801 - `Path` is pathlib's
    """One way a call can end: what the server does (None: no server), the code expected."""

    name: str
    code: str | None
    serve: Behaviour | None = None
    where: str = "server"  # "server", "refused", "unset" (own credentials missing), "broken"


PATHS = [
    Path_("success", None, _success),
    Path_("AUTH_INVALID", "AUTH_INVALID", _failing(401)),
    Path_("RATE_LIMIT", "RATE_LIMIT", _failing(429, Retry_After="3600")),
    Path_("API_ERROR (HTML)", "API_ERROR", _failing(500, html=True)),
    Path_("API_ERROR (JSON)", "API_ERROR", _failing(400)),
    Path_("redirect", "API_ERROR", _redirect),
    Path_("NETWORK_ERROR", "NETWORK_ERROR", where="refused"),
    Path_("AUTH_MISSING", "AUTH_MISSING", where="unset"),
    Path_("credentials file not JSON", "AUTH_MISSING", where="broken"),
]


def _serve(server: Loopback, subject: Subject, path: Path_) -> None:
    """The server's handler: `path`'s behaviour, with the side routes every path needs."""

    def handle(h: Any) -> None:
        seen = current()
        route = seen.path.split("?", 1)[0]
        if route == "/robots.txt":
            reply(b"", "text/plain", 404)(h)
        elif route.startswith("/grounding-api-redirect/"):
            query = "&".join(f"key={quote(s, safe='')}" for s in received(seen))
            reply(b"", None, 302, {"Location": f"https://example.org/landing?{query}"})(h)
        elif route == "/landing":
            _success(subject, server, seen)(h)
        else:
            assert path.serve is not None
            path.serve(subject, server, seen)(h)

    server.handler = handle


# --- the test -------------------------------------------------------------------------------


def forget_secrets() -> None:
    """Each call starts as a fresh process would: no credential registered for masking."""
    redact._secrets.clear()
    redact._pattern.cache_clear()


def call(subject: Subject, arguments: dict[str, Any], *, markdown: bool) -> tuple[int, str, str]:
    forget_secrets()
    argv = ["--format", "markdown"] if markdown else []
    out, err = io.BytesIO(), io.StringIO()
    with contextlib.redirect_stderr(err):
        code = run(tool(subject.script), argv, io.BytesIO(json.dumps(arguments).encode()), out)
    return code, out.getvalue().decode("utf-8"), err.getvalue()


def expected(subject: Subject, path: Path_, source: str) -> str | None:
    code = subject.differs.get(path.name, path.code)
    credentialed = bool(subject.credentials("http://x"))
    if path.where in ("unset", "broken") and not credentialed:
        return "skip"  # nothing of its own to take away
    if path.where == "broken" and source == "env":
        return "skip"  # the file is not read when the environment has it all
    return code


def _credentials(subject: Subject, base: str, path: Path_) -> dict[str, str]:
    """The subject's credentials and every other search tool's keys, but its own (under any
    of their names: Gemini's key is GEMINI_API_KEY or GOOGLE_API_KEY) taken away where the
    path is about missing ones."""
    own = subject.credentials(base)
    names = {
        n for p in PROVIDERS.values() for f in p.fields if set(f.env) & set(own) for n in f.env
    }
    others = {k: v for k, v in KEYS.items() if k not in names | set(own)}
    return others | ({} if path.where == "unset" else own)


def _answer_code(text: str, markdown: bool, name: str) -> str | None:
    if not markdown:
        out = check_answer(text.encode(), name)
        return None if out["success"] else str(out["error_code"])
    if text.startswith("Error ("):
        return text[len("Error (") : text.index(")")]
    return None


@pytest.mark.parametrize("source", ["env", "flat", "nested"])
@pytest.mark.parametrize("subject", SUBJECTS, ids=lambda s: s.label)
def test_no_credential_leaves_the_process(subject, source, isolated_env, tmp_path, monkeypatch):
    monkeypatch.setattr(
        "ikigai_web.net.http._pause", lambda *_: False
    )  # no retries: each path once
    checked = 0
    with loopback() as server:
        for path in PATHS:
            code = expected(subject, path, source)
            if code == "skip":
                continue
            base = closed_port() if path.where == "refused" else server.url
            configure(source, _credentials(subject, base, path), isolated_env, monkeypatch)
            if path.where == "broken":
                (isolated_env / "credentials.json").write_text(
                    json.dumps(subject.credentials(base))[:-1] + ",,}"
                )
            with monkeypatch.context() as env:
                # Each path anew: web_search_auto would remember a key rejected by the last.
                env.setenv("XDG_STATE_HOME", str(tmp_path / "state" / path.name))
                for name, value in subject.endpoints(base).items():
                    env.setenv(name, value)
                # Each path's keys start afresh: one's 429 would hold them in the next.
                env.setenv("XDG_STATE_HOME", str(tmp_path / "state" / path.name))
                if path.serve is not None:
                    _serve(server, subject, path)
                for markdown in (False, True):
                    before = len(server.seen)
                    arguments = subject.call(base, path.name)
                    exit_code, out, err = call(subject, arguments, markdown=markdown)
                    where = f"{path.name}, {'markdown' if markdown else 'json'}"
                    assert leaks(out + err) == [], f"{where}: {out}{err}"
                    assert exit_code in (0, 1), f"{where}: {err}"
                    assert _answer_code(out, markdown, subject.name) == code, f"{where}: {out}"
                    if path.serve is not None and not markdown:
                        sent = {s for seen in server.seen[before:] for s in received(seen)}
                        own = own_secrets(subject, base)
                        assert own <= sent, f"{where}: the server never saw {own - sent}"
                    checked += 1
                if code is None:  # an echoing success: stored, and served from the cache
                    arguments = subject.call(base, path.name)
                    _, out, err = call(subject, arguments, markdown=False)
                    assert leaks(out + err) == [], out
                    assert check_answer(out.encode(), subject.name).get("cached") is True
    assert checked >= 10
    assert leaks(cache_text(tmp_path)) == []
    kept = sorted(p for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert leaks("".join(f.read_bytes().decode("latin-1") for f in kept)) == []


def own_secrets(subject: Subject, base: str) -> set[str]:
    """The secrets the subject sends: its credentials, and for web-fetch its URL's."""
    given = json.dumps(subject.credentials(base) | subject.call(base, "any"))
    return {s for s in SECRETS if s in given or quote(s, safe="") in given}


def cache_text(tmp_path: Path) -> str:
    """Every file under the cache directory, as text."""
    files = sorted(p for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert files, "nothing was cached: the test proves nothing about the cache"
    return "".join(f.read_bytes().decode("latin-1") for f in files)


@pytest.mark.parametrize("subject", SUBJECTS, ids=lambda s: s.label)
def test_the_executables_leak_nothing_either(subject, isolated_env, tmp_path, monkeypatch):
    """A success that echoes every credential, through the installed executable, both ways."""
    with loopback() as server:
        configure("env", _credentials(subject, server.url, PATHS[0]), isolated_env, monkeypatch)
        for name, value in subject.endpoints(server.url).items():
            monkeypatch.setenv(name, value)
        _serve(server, subject, PATHS[0])
        exe = Path(sys.executable).parent / subject.script
        arguments = json.dumps(subject.call(server.url, "executable")).encode()
        for args in ([], ["--format", "markdown"]):
            run_ = subprocess.run([str(exe), *args], input=arguments, capture_output=True,
                                  timeout=60, check=False)  # fmt: skip
            assert run_.returncode == 0, run_.stderr
            assert leaks(run_.stdout.decode() + run_.stderr.decode()) == []
        sent = {s for seen in server.seen for s in received(seen)}
        assert own_secrets(subject, server.url) <= sent
    assert leaks(cache_text(tmp_path)) == []
