"""web-search-auto-tool remembers a provider that could not answer (rate limited, key
rejected, blocking this address, stalled, empty again and again), asks the others, and asks
it again when it is due.

Each search of the first tests is a process of its own (the tool's `main`, through
tests/clocked_auto.py, whose memory reads the clock the test sets: time passes without the
test waiting for it), on loopback fakes of the providers reached through the endpoint
overrides, all sharing the test's state directory. The tests after them run the same code in
this process, where coverage sees it."""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG_GUARD, STALL, FakeServer, Reply

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.common.settings import load
from ikigai_web.common.state import store
from ikigai_web.host import cli
from ikigai_web.tools import web_search_auto as auto
from ikigai_web.tools import web_search_brave
from ikigai_web.tools.fallback import memory, recall

FIXTURES = Path(__file__).parents[1] / "fixtures"
CLOCKED = Path(__file__).parents[1] / "clocked_auto.py"
BRAVE_KEY = "BSA-memory-LEAKCANARY-1234"
TAVILY_KEY = "tvly-memory-LEAKCANARY-5678"
BRAVE_RESULTS = json.loads((FIXTURES / "brave" / "search.json").read_text())
TAVILY_RESULTS = json.loads((FIXTURES / "tavily" / "search.json").read_text())
# Brave's answers as its API documents them: the error object, the rate-limit headers of a
# plan of 1 request a second and 15,000 a month (one value per window).
BRAVE_RATE_LIMITED = Reply(
    429,
    {"type": "ErrorResponse", "error": {"id": "c5f9a1", "status": 429, "code": "RATE_LIMITED",
     "detail": "Request rate limit exceeded for plan.", "meta": {"plan": "Free",
     "rate_limit": 1, "rate_current": 2, "quota_limit": 15000, "quota_current": 1001,
     "component": "rate_limiter"}}},
    {"X-RateLimit-Limit": "1, 15000", "X-RateLimit-Policy": "1;w=1, 15000;w=2592000",
     "X-RateLimit-Remaining": "0, 13999", "X-RateLimit-Reset": "1, 1419704"},
)  # fmt: skip
BRAVE_REJECTED = Reply(
    401,
    {"type": "ErrorResponse", "error": {"id": "0e7f2b", "status": 401,
     "code": "SUBSCRIPTION_TOKEN_INVALID", "detail": "The provided subscription token is "
     "invalid.", "meta": {"component": "authentication"}}},
)  # fmt: skip
HTML = {"Content-Type": "text/html; charset=utf-8"}
DDG_BLOCKED = Reply(202, (FIXTURES / "duckduckgo" / "challenge.html").read_bytes(), HTML)
DDG_RESULTS = Reply(200, (FIXTURES / "duckduckgo" / "html_results.html").read_bytes(), HTML)
UNCONFIGURED = "google,searxng,gemini"  # fail at once: they make each provider's share short


class Providers:
    """Brave, Tavily and DuckDuckGo on a loopback server, each answering what the test says
    now, and counting how often each was asked."""

    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self.replies = {"brave": Reply(200, BRAVE_RESULTS), "tavily": Reply(200, TAVILY_RESULTS),
                        "duckduckgo": DDG_RESULTS}  # fmt: skip
        self.urls = {name: server.route(f"/{name}", lambda seen, n=name: self.replies[n])
                     for name in self.replies}  # fmt: skip

    def env(self, order: str) -> dict[str, str]:
        return {
            "IKIGAI_WEB_SEARCH_ORDER": order,
            "IKIGAI_WEB_CACHE_TTL": "0",
            "BRAVE_API_KEY": BRAVE_KEY,
            "TAVILY_API_KEY": TAVILY_KEY,
            "BRAVE_SEARCH_API_URL": self.urls["brave"],
            "TAVILY_API_URL": self.urls["tavily"],
            "DUCKDUCKGO_HTML_URL": self.urls["duckduckgo"],
        }

    def asked(self, name: str) -> int:
        return sum(1 for seen in self.server.seen if seen.path == f"/{name}")


@pytest.fixture
def providers(fake_server: FakeServer) -> Providers:
    return Providers(fake_server)


def search(env: dict[str, str], at: float) -> dict[str, Any]:
    """One search by the tool in a process of its own, its memory's clock at `at`."""
    proc = subprocess.run(
        [sys.executable, str(CLOCKED)],
        input=json.dumps({"query": "ikigai", "count": 3}).encode(),
        capture_output=True,
        env=os.environ | env | {"CLOCK_AT": repr(at)},
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert BRAVE_KEY not in proc.stdout.decode()
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def messages(out: dict[str, Any]) -> list[str]:
    return [f"{w['code']} {w['message']}" for w in out.get("warnings", [])]


@pytest.mark.loopback
def test_a_rate_limited_provider_is_not_asked_until_its_limit_resets(providers):
    env, t0 = providers.env("brave,tavily"), time.time()
    providers.replies["brave"] = BRAVE_RATE_LIMITED
    first = search(env, t0)  # Brave is asked again after a second, as it says, in vain
    assert first["provider"] == "tavily"
    assert messages(first)[0].startswith("RATE_LIMIT web_search_brave skipped after")
    asked = providers.asked("brave")
    second = search(env, t0 + 0.5)  # the limit resets 1 s after the last answer
    assert second["provider"] == "tavily"
    assert providers.asked("brave") == asked
    assert re.fullmatch(
        r"RATE_LIMIT web_search_brave not asked: its rate limit was reached 1 s ago, and it is "
        r"asked again in 1 s \(RATE_LIMIT: Brave answered HTTP 429.*\)\.",
        messages(second)[0],
    ), messages(second)
    providers.replies["brave"] = Reply(200, BRAVE_RESULTS)
    third = search(env, t0 + 1.0)
    assert third["provider"] == "brave"
    assert "warnings" not in third
    assert providers.asked("brave") == asked + 1


@pytest.mark.loopback
def test_a_rejected_key_is_set_aside_for_an_hour_or_until_the_key_changes(providers):
    env, t0 = providers.env("brave,tavily"), time.time()
    providers.replies["brave"] = BRAVE_REJECTED
    assert search(env, t0)["provider"] == "tavily"
    later = search(env, t0 + 600)
    assert later["provider"] == "tavily"
    assert providers.asked("brave") == 1
    assert messages(later)[0].startswith(
        "AUTH_INVALID web_search_brave not asked: its key was rejected 10 min ago, and it is "
        "asked again in 50 min (AUTH_INVALID: Brave answered HTTP 401"
    ), messages(later)
    new_key = env | {"BRAVE_API_KEY": "BSA-memory-another-key-9"}
    assert search(new_key, t0 + 600)["provider"] == "tavily"  # asked: its key changed
    assert providers.asked("brave") == 2  # and rejected too
    assert search(new_key, t0 + 600 + 3599)["provider"] == "tavily"
    assert providers.asked("brave") == 2
    providers.replies["brave"] = Reply(200, BRAVE_RESULTS)
    assert search(new_key, t0 + 600 + 3600)["provider"] == "brave"  # the hour is over


@pytest.mark.loopback
def test_duckduckgo_blocking_this_address_is_remembered_for_this_machine(providers, capsys):
    env, t0 = providers.env("duckduckgo,brave"), time.time()
    providers.replies["duckduckgo"] = DDG_BLOCKED
    first = search(env, t0)
    assert first["provider"] == "brave"
    assert messages(first)[0].startswith("RATE_LIMIT web_search_duckduckgo skipped after")
    asked = providers.asked("duckduckgo")
    later = search(env, t0 + 60)
    assert later["provider"] == "brave"
    assert providers.asked("duckduckgo") == asked
    assert messages(later)[0].startswith(
        "RATE_LIMIT web_search_duckduckgo not asked: it was blocking this address 60 s ago, "
        "and it is asked again in 14 min"
    ), messages(later)
    assert cli.main(["doctor", "--json"]) in (0, 1)
    [row] = json.loads(capsys.readouterr().out)["remembered"]
    assert (row["tool"], row["kind"], row["machine"]) == (
        "web_search_duckduckgo", "blocked", socket.gethostname())  # fmt: skip
    providers.replies["duckduckgo"] = DDG_RESULTS
    assert search(env, t0 + 901)["provider"] == "duckduckgo"


@pytest.mark.loopback
def test_a_stalled_provider_is_asked_last_until_it_is_due(providers):
    env = providers.env(f"brave,tavily,{UNCONFIGURED}") | {"IKIGAI_WEB_TIMEOUT": "6"}
    t0 = time.time()
    providers.replies["brave"] = Reply(200, b"", delay=STALL)
    first = search(env, t0)
    assert first["provider"] == "tavily"
    providers.replies["brave"] = Reply(200, BRAVE_RESULTS)
    later = search(env, t0 + 60)
    assert later["provider"] == "tavily"
    assert providers.asked("brave") == 1  # left for last, and tavily answered
    [note] = [m for m in messages(later) if "web_search_brave" in m]
    assert re.fullmatch(
        r"NETWORK_ERROR web_search_brave left for last: it did not answer in time 60 s ago, "
        r"and it is asked again in 2 min \(NETWORK_ERROR: no answer in [\d.]+ s\)\.",
        note,
    )
    assert search(env, t0 + 181)["provider"] == "brave"


@pytest.mark.loopback
def test_doctor_shows_what_is_remembered_and_forget_forgets_it(providers, capsys):
    env, t0 = providers.env("brave,tavily"), time.time()
    providers.replies["brave"] = BRAVE_REJECTED
    search(env, t0)
    assert cli.main(["doctor"]) in (0, 1)
    text = capsys.readouterr().out
    assert re.search(
        r"Remembered by web_search_auto \(`web-tools forget` forgets it\):\n  web_search_brave  "
        r"not asked \(if the key in use is the one noted\): its key was rejected \d+ s ago, and "
        r"it is asked again in 60 min",
        text,
    ), text
    assert re.search(
        r"Keys held \(`web-tools forget` releases them\):\n  web_search_brave  "
        r"key [0-9a-f]{8}… for 15 min: the provider rejected the key",
        text,
    ), text
    assert cli.main(["forget", "brave"]) == 0
    assert capsys.readouterr().out == "forgot 1 note and 1 hold about brave\n"
    assert cli.main(["doctor"]) in (0, 1)
    assert "Remembered by web_search_auto: nothing" in capsys.readouterr().out
    search(env, t0 + 1)
    assert providers.asked("brave") == 2  # forgotten: asked first again
    assert cli.main(["forget"]) == 0
    assert capsys.readouterr().out == "forgot 1 note and 1 hold\n"


# --- the same code in this process, with the clock in the test's hands ---------------------

BRAVE_URL = re.compile(r"https://api\.search\.brave\.com/res/v1/web/search\?.*")
TAVILY_URL = "https://api.tavily.com/search"


@pytest.fixture
def clock(monkeypatch):
    """The memory's wall clock, moved by the test: `clock[0] += 60`."""
    now = [time.time()]
    monkeypatch.setattr(recall, "now", lambda: now[0])
    return now


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setattr("ikigai_web.net.http._pause", lambda *_: False)  # no retry of a 429 here
    # Nor pacing's send again of a short 429 (tests/search/test_pacing.py): one answer, one request.
    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=off, tavily=off")
    monkeypatch.setenv("BRAVE_API_KEY", BRAVE_KEY)
    monkeypatch.setenv("TAVILY_API_KEY", TAVILY_KEY)
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", "0")


def call(query: str = "ikigai") -> dict[str, Any]:
    return answer(auto.execute, {"query": query, "count": 3}, auto.SCHEMA)[0]


def brave_says(httpx_mock, reply: Reply) -> None:
    httpx_mock.add_response(url=BRAVE_URL, status_code=reply.status, json=reply.body,
                            headers=reply.headers, is_reusable=False)  # fmt: skip


def test_every_provider_set_aside_fails_at_once_with_when_to_retry(httpx_mock, keys, clock,
                                                                   monkeypatch):  # fmt: skip
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave")
    brave_says(httpx_mock, BRAVE_RATE_LIMITED)
    assert call()["error_code"] == "RATE_LIMIT"
    clock[0] += 0.25
    out = call()  # nobody asked: httpx_mock has no second answer
    assert out["error_code"] == "RATE_LIMIT"
    assert out["retry_after"] == 1
    assert re.fullmatch(
        r"No provider could search: Brave Search was not asked \(rate limited before\)\. What "
        r"each said: web_search_brave: RATE_LIMIT, not asked: its rate "
        r"limit was reached 1 s ago, and it is asked again in 1 s \(RATE_LIMIT: Brave "
        r"answered HTTP 429.*\)\.",
        out["error"],
    ), out["error"]
    assert len(httpx_mock.get_requests()) == 1


def test_a_failure_of_the_one_asked_also_names_the_one_set_aside(httpx_mock, keys, clock,
                                                                  monkeypatch):  # fmt: skip
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    brave_says(httpx_mock, BRAVE_REJECTED)
    httpx_mock.add_response(url=TAVILY_URL, method="POST", status_code=400,
                            json={"detail": {"error": "Invalid topic."}},
                            is_reusable=True)  # fmt: skip
    call()
    clock[0] += 5
    out = call()
    assert out["error_code"] == "INVALID_INPUT"
    assert out["error"].endswith("web_search_brave was skipped first (AUTH_INVALID).")


def test_a_provider_that_keeps_finding_nothing_is_asked_last(httpx_mock, keys, clock,
                                                              monkeypatch):  # fmt: skip
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "tavily,brave")
    nothing = TAVILY_RESULTS | {"results": []}
    for query in ("first query", "second query", "second query", "third query"):
        httpx_mock.add_response(url=TAVILY_URL, method="POST", json=nothing, is_reusable=False)
        assert call(query)["count"] == 0
        clock[0] += 1
    brave_says(httpx_mock, Reply(200, BRAVE_RESULTS))
    out = call("fourth query")
    assert out["provider"] == "brave"
    assert out["warnings"][0]["message"].startswith(
        "web_search_tavily left for last: it kept answering with no results 1 s ago, and it "
        "is asked again in 10 min (API_ERROR: no results for 3 different searches in a row)"
    )
    clock[0] += memory.EMPTY_WAIT
    httpx_mock.add_response(url=TAVILY_URL, method="POST", json=TAVILY_RESULTS)
    assert call("fifth query")["provider"] == "tavily"
    assert recall.remembered()[0] == []  # it found something: forgotten


def test_an_unusable_state_directory_costs_a_warning_never_the_search(
    httpx_mock, keys, monkeypatch, tmp_path
):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "a-file"))
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    brave_says(httpx_mock, BRAVE_REJECTED)
    httpx_mock.add_response(url=TAVILY_URL, method="POST", json=TAVILY_RESULTS)
    out = call()
    assert out["provider"] == "tavily"
    assert [w["code"] for w in out["warnings"]] == ["AUTH_INVALID", "STATE"]


def test_notes_another_process_left_unreadable_are_no_notes(keys, clock, monkeypatch):
    for key, value in (
        ("brave", {"provider": "brave"}),
        ("tavily", "junk"),
        ("google", memory.stalled("tavily", 5, clock[0]).as_json()),
    ):
        store().put(memory.SPACE, key, value, 60)  # fmt: skip
    notes = recall.Recall(["brave", "tavily", "google"])
    assert notes.notes == {}
    assert notes.plan(["brave", "tavily", "google"]).order == ["brave", "tavily", "google"]
    assert recall.forget(["web_search_google"])[0] == 1


def test_forget_and_doctor_with_an_unusable_redis_setting_say_so(monkeypatch, capsys):
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", "http://127.0.0.2:6379")
    assert cli.main(["forget"]) == 1
    assert capsys.readouterr().err.startswith("web-tools forget: the setting IKIGAI_WEB_REDIS_URL")
    assert cli.main(["doctor"]) == 1
    assert "What web_search_auto remembers was not read" in capsys.readouterr().out


def test_a_key_a_provider_echoes_is_never_kept(httpx_mock, keys, clock, monkeypatch, tmp_path):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    echo = {"type": "ErrorResponse", "error": {"id": "1", "status": 401, "code": "UNAUTHORIZED",
            "detail": f"Token {BRAVE_KEY} is unknown.", "meta": {}}}  # fmt: skip
    brave_says(httpx_mock, Reply(401, echo))
    httpx_mock.add_response(url=TAVILY_URL, method="POST", json=TAVILY_RESULTS)
    assert call()["provider"] == "tavily"
    [(_, note)] = store().scan(memory.SPACE)
    assert "Token *** is unknown" in note["said"]
    kept = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert BRAVE_KEY.encode() not in kept
    assert kept


def test_only_a_provider_that_had_its_share_is_noted_as_stalled(keys, monkeypatch):
    """Brave has its share without answering, so Tavily starts; then Brave answers while
    Tavily is still in its share: neither stalled."""
    tavily_started, release = threading.Event(), threading.Event()

    def attempt(module, request, settings):
        if module is web_search_brave:
            assert tavily_started.wait(STALL)
            return {"success": True, "results": [], "count": 0, "provider": "brave"}
        tavily_started.set()
        release.wait(STALL)
        raise ToolError(ErrorCode.NETWORK_ERROR, "timeout: waiting for the answer")

    monkeypatch.setattr(auto, "attempt", attempt)
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "3")
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    try:
        out = auto.execute({"query": "ikigai"}, load())
    finally:
        release.set()
    assert out["provider"] == "brave"
    assert [row["kind"] for row in recall.remembered()[0]] == ["empty"]  # brave's first empty


def test_a_redis_that_cannot_be_reached_leaves_the_notes_on_this_machine(
    httpx_mock, keys, clock, monkeypatch, capsys
):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # closed once the block ends: nothing listens there
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", f"redis://127.0.0.1:{port}/0")
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    brave_says(httpx_mock, BRAVE_REJECTED)
    httpx_mock.add_response(url=TAVILY_URL, method="POST", json=TAVILY_RESULTS, is_reusable=True)
    out = call()
    assert [w["code"] for w in out["warnings"]] == ["AUTH_INVALID", "STATE"]
    assert "could not be reached" in out["warnings"][1]["message"]
    clock[0] += 60
    assert call()["warnings"][0]["message"].startswith("web_search_brave not asked")
    assert cli.main(["forget"]) == 0
    said = capsys.readouterr()
    assert said.out == "forgot 1 note and 1 hold\n"
    assert said.err.startswith("web-tools forget: the Redis server at redis://127.0.0.1:")


# --- two machines sharing one Redis --------------------------------------------------------

DDG_URL = "https://html.duckduckgo.com/html/"


@pytest.fixture
def redis_url(tmp_path):
    """A real redis-server on loopback, for this test alone."""
    import redis

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed (Debian: apt install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(tmp_path)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    client = redis.Redis(port=port, socket_timeout=1)
    give_up = time.monotonic() + HANG_GUARD
    while True:
        try:
            client.ping()
            break
        except redis.ConnectionError:
            assert time.monotonic() < give_up, "redis-server did not start"
            time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    server.terminate()
    server.wait(HANG_GUARD)


def on(machine: str, monkeypatch, tmp_path) -> None:
    """The calls that follow run as if on `machine`: its name and its own local state."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / machine))
    monkeypatch.setattr("ikigai_web.tools.fallback.recall.socket.gethostname", lambda: machine)


def test_machines_sharing_redis_share_notes_about_a_key_not_about_an_address(
    httpx_mock, keys, clock, monkeypatch, tmp_path, redis_url
):
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", redis_url)
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,duckduckgo,tavily")
    on("machine-a", monkeypatch, tmp_path)
    brave_says(httpx_mock, BRAVE_REJECTED)
    httpx_mock.add_response(url=DDG_URL, method="POST", status_code=202, content=DDG_BLOCKED.body,
                            headers=HTML, is_reusable=False)  # fmt: skip
    httpx_mock.add_response(url=TAVILY_URL, method="POST", json=TAVILY_RESULTS, is_reusable=True)
    assert call()["provider"] == "tavily"
    on("machine-b", monkeypatch, tmp_path)
    clock[0] += 30
    httpx_mock.add_response(url=DDG_URL, method="POST", content=DDG_RESULTS.body, headers=HTML,
                            is_reusable=False)  # fmt: skip
    asked = len(httpx_mock.get_requests())
    out = call()
    assert out["provider"] == "duckduckgo"  # this machine is not blocked
    assert [r.url.host for r in httpx_mock.get_requests()[asked:]] == ["html.duckduckgo.com"]
    assert out["warnings"][0]["message"].startswith("web_search_brave not asked: its key was")
    on("machine-a", monkeypatch, tmp_path)
    asked = len(httpx_mock.get_requests())
    out = call()
    assert out["provider"] == "tavily"
    assert [r.url.host for r in httpx_mock.get_requests()[asked:]] == ["api.tavily.com"]
    assert [w["message"].split(":")[0] for w in out["warnings"]] == [
        "web_search_brave not asked", "web_search_duckduckgo not asked"]  # fmt: skip
    assert not (tmp_path / "machine-a" / "ikigai-web-tools" / memory.SPACE).exists()


def test_with_every_provider_set_aside_the_retry_after_is_the_one_due_first(
    httpx_mock, keys, clock, monkeypatch
):
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "tavily,brave")
    httpx_mock.add_response(url=TAVILY_URL, method="POST", status_code=432,
                            json={"detail": {"error": "Plan limit exceeded."}})  # fmt: skip
    brave_says(httpx_mock, BRAVE_RATE_LIMITED)  # resets in 1 s; Tavily says not when: 60 s
    assert call()["error_code"] == "RATE_LIMIT"
    clock[0] += 0.25
    out = call()
    assert out["retry_after"] == 1
    assert re.match(r"No provider could search: Tavily was not asked \(rate limited before\); "
                    r"Brave Search was not asked \(rate limited before\)\. What each said: "
                    r"web_search_tavily: RATE_LIMIT, not asked: .*"
                    r"; web_search_brave: RATE_LIMIT, not asked: ", out["error"])  # fmt: skip
