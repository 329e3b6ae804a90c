"""Pacing (ikigai_web/search/pacing.py): a key's turn across processes, several keys, what providers
say, and a shared state that fails (Redis down, slow, refusing the password) never failing a search.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import HANG_GUARD, REDIS_PASSWORD, RedisServer, reply

from ikigai_web.common import state
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.settings import Settings, load
from ikigai_web.search import pacing
from ikigai_web.search.pacing import SHORT_RETRIES, Rate, rate_for, window_limits
from ikigai_web.tools import web_search_brave as brave

FIXTURES = Path(__file__).parents[1] / "fixtures" / "brave"
ONE = "BSA-first-Key-0a1b2c3d"
TWO = "BSA-second-Key-4e5f6a7b"
SEARCH = json.loads((FIXTURES / "search.json").read_text())
TOKEN_INVALID = json.loads((FIXTURES / "token_invalid.json").read_text())
RATE_LIMITED = json.loads((FIXTURES / "rate_limited.json").read_text())
# What Brave sends with every answer of a Free plan key (1 a second, 2,000 a month).
FREE = {
    "X-RateLimit-Limit": "1, 2000",
    "X-RateLimit-Policy": "1;w=1, 2000;w=2592000",
    "X-RateLimit-Remaining": "0, 1959",
    "X-RateLimit-Reset": "1, 2419200",
}


def search(monkeypatch: pytest.MonkeyPatch, keys: str, **env: str) -> dict[str, Any]:
    monkeypatch.setenv("BRAVE_API_KEY", keys)
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", "0")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return brave.execute({"query": "ikigai meaning"}, load())


def failed(monkeypatch: pytest.MonkeyPatch, keys: str, **env: str) -> ToolError:
    with pytest.raises(ToolError) as info:
        search(monkeypatch, keys, **env)
    return info.value


def tokens(httpx_mock: Any) -> list[str]:
    return [r.headers["x-subscription-token"] for r in httpx_mock.get_requests()]


# --- the rate ---------------------------------------------------------------------------------


def test_the_users_plan_wins_over_what_is_learned_and_assumed() -> None:
    stated = Settings(environ={"IKIGAI_WEB_RATE_LIMITS": "brave=50,tavily=1000/min,google=off"})
    assert rate_for("brave", stated, [1, 1.0]) == Rate(50.0, "IKIGAI_WEB_RATE_LIMITS")
    assert rate_for("tavily", stated) == Rate(1000 / 60, "IKIGAI_WEB_RATE_LIMITS", 60.0)
    assert rate_for("google", stated) is None
    plain = Settings(environ={})
    assert rate_for("brave", plain, [50, 1.0]).per_second == 50  # type: ignore[union-attr]
    assert rate_for("brave", plain, "junk") == Rate(1.0, "the provider's documented limit")
    assert rate_for("searxng", plain) is None  # your own instance: not paced
    assert rate_for("google", plain).burst == 5  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        (FREE, [(1, 1.0, 0, 1), (2000, 2592000.0, 1959, 2419200)]),
        ({"X-RateLimit-Limit": "50, 9000"}, [(50, 1.0, None, None), (9000, 2592000.0, None, None)]),
        ({"X-RateLimit-Limit": "5", "X-RateLimit-Policy": "5;w=60"}, [(5, 60.0, None, None)]),
        ({"X-RateLimit-Limit": "1, x"}, []),
        ({"X-RateLimit-Limit": "9" * 20}, []),
        ({}, []),
    ],
)  # fmt: skip
def test_brave_headers_are_read_window_by_window(headers, expected) -> None:
    assert window_limits(reply(200, SEARCH, headers)) == expected


# --- through the Brave tool --------------------------------------------------------------------


def test_a_call_waits_its_turn_and_the_next_misses_its_deadline(httpx_mock, monkeypatch):
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    assert search(monkeypatch, ONE)["success"] is True
    started = time.monotonic()
    assert search(monkeypatch, ONE)["success"] is True  # waited for its turn, then asked
    assert time.monotonic() - started >= 1.0
    # A deadline the next turn does not fit: RATE_LIMIT at once, nothing sent.
    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=0.01")  # a turn every 105 s
    search(monkeypatch, ONE)
    err = failed(monkeypatch, ONE)
    assert err.code is ErrorCode.RATE_LIMIT
    assert 100 <= (err.retry_after or 0) <= 106
    assert "0.01 requests a second (IKIGAI_WEB_RATE_LIMITS)" in err.message
    assert len(httpx_mock.get_requests()) == 3
    assert ONE not in err.message


def test_a_limit_brave_tells_is_learned_and_a_quota_used_up_holds_the_key(httpx_mock, monkeypatch):
    used_up = FREE | {"X-RateLimit-Remaining": "0, 0", "X-RateLimit-Reset": "1, 86400"}
    httpx_mock.add_response(json=SEARCH, headers=used_up)
    search(monkeypatch, ONE)
    ids = f"brave:{state.key_id(ONE)}"
    assert state.store().get("limits", ids) == [1, 1.0]
    err = failed(monkeypatch, ONE)  # held until the month's quota comes back
    assert err.code is ErrorCode.RATE_LIMIT
    assert 86399 <= (err.retry_after or 0) <= 86401
    assert len(httpx_mock.get_requests()) == 1


def test_two_keys_share_the_load(httpx_mock, monkeypatch):
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    for _ in range(2):
        search(monkeypatch, f"{ONE}, {TWO}")
    assert sorted(tokens(httpx_mock)) == sorted([ONE, TWO])  # each its turn, no wait


def test_a_rejected_key_is_set_aside_and_the_other_serves(httpx_mock, monkeypatch):
    def answer(request: Any) -> Any:
        import httpx

        if request.headers["x-subscription-token"] == ONE:
            return httpx.Response(422, json=TOKEN_INVALID)
        return httpx.Response(200, json=SEARCH)

    httpx_mock.add_callback(answer, is_reusable=True)
    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=50")
    for _ in range(3):
        assert search(monkeypatch, f"{ONE},{TWO}")["success"] is True
    # The first call found it rejected; from then on it is set aside.
    assert tokens(httpx_mock).count(ONE) == 1
    assert tokens(httpx_mock).count(TWO) == 3
    entry = state.store().get("keys", f"brave:{state.key_id(ONE)}")
    assert isinstance(entry, dict)
    assert entry["why"] == "AUTH_INVALID"
    assert 0 < entry["until"] - time.time() <= pacing.REJECTED_FOR


def test_every_key_rejected_is_auth_invalid(httpx_mock, monkeypatch):
    httpx_mock.add_response(status_code=422, json=TOKEN_INVALID, is_reusable=True)
    err = failed(monkeypatch, f"{ONE},{TWO}", IKIGAI_WEB_RATE_LIMITS="brave=50")
    assert err.code is ErrorCode.AUTH_INVALID
    assert sorted(tokens(httpx_mock)) == sorted([ONE, TWO])


def test_a_limited_key_is_held_and_the_other_serves(httpx_mock, monkeypatch):
    def answer(request: Any) -> Any:
        import httpx

        if request.headers["x-subscription-token"] == ONE:
            return httpx.Response(429, json=RATE_LIMITED, headers={"Retry-After": "600"})
        return httpx.Response(200, json=SEARCH)

    httpx_mock.add_callback(answer, is_reusable=True)
    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=50")
    monkeypatch.setattr(pacing, "LIMITED_FOR", 1e6)  # the provider's word is used, not this
    for _ in range(3):
        assert search(monkeypatch, f"{ONE},{TWO}")["success"] is True
    assert tokens(httpx_mock).count(ONE) == 1
    # With that key alone, the call answers at once when it is due.
    err = failed(monkeypatch, ONE)
    assert err.code is ErrorCode.RATE_LIMIT
    assert 590 <= (err.retry_after or 0) <= 600


def test_several_keys_come_from_credentials_json_too(httpx_mock, monkeypatch, isolated_env):
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    nested = {"web_search": {"brave": {"api_key": [ONE, TWO]}}}
    (isolated_env / "credentials.json").write_text(json.dumps(nested))
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", "0")
    for _ in range(2):
        brave.execute({"query": "ikigai meaning"}, load())
    assert sorted(tokens(httpx_mock)) == sorted([ONE, TWO])


def test_pacing_off_keeps_no_state(httpx_mock, monkeypatch, tmp_path):
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    for _ in range(3):
        search(monkeypatch, ONE, IKIGAI_WEB_RATE_LIMITS="brave=off")
    assert not (tmp_path / "state" / "ikigai-web-tools" / "pace").exists()


def test_no_key_is_ever_written_to_the_state(httpx_mock, monkeypatch, tmp_path):
    httpx_mock.add_response(status_code=422, json=TOKEN_INVALID, is_reusable=True)
    failed(monkeypatch, f"{ONE},{TWO}")
    written = b"".join(p.read_bytes() for p in (tmp_path / "state").rglob("*") if p.is_file())
    assert written
    assert ONE.encode() not in written
    assert TWO.encode() not in written


def test_a_process_of_its_own_waits_its_turn_too(run_tool, fake_server, monkeypatch):
    """The installed tool: two calls on one key, one after the other, the second paced."""
    from conftest import Reply

    url = fake_server.route("/res/v1/web/search", Reply(200, SEARCH, FREE))
    env = {"BRAVE_API_KEY": ONE, "BRAVE_SEARCH_API_URL": url, "IKIGAI_WEB_CACHE_TTL": "0"}
    runs = [run_tool("web-search-brave-tool", {"query": "ikigai meaning"}, env=env)]
    runs.append(run_tool("web-search-brave-tool", {"query": "ikigai meaning"}, env=env))
    assert [r.json["success"] for r in runs] == [True, True]
    first, second = (s.at for s in fake_server.seen)
    assert second - first >= 1.0


# --- a shared state that fails never fails a search ------------------------------------------


@pytest.fixture
def paced_on_redis(redis_server: RedisServer, httpx_mock, monkeypatch) -> RedisServer:
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", redis_server.url())
    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=50")
    return redis_server


def test_the_budget_lives_in_redis(paced_on_redis: RedisServer, monkeypatch):
    import redis

    out = search(monkeypatch, ONE)
    assert "warnings" not in out
    client = redis.Redis.from_url(paced_on_redis.url())
    assert client.keys(f"ikigai-web-tools:pace:brave:{state.key_id(ONE)}")
    client.close()


def test_redis_stopped_mid_run_never_fails_a_search(paced_on_redis: RedisServer, monkeypatch):
    assert "warnings" not in search(monkeypatch, ONE)
    paced_on_redis.stop()
    out = search(monkeypatch, ONE)
    assert out["success"] is True
    [warning] = out["warnings"]
    assert warning["code"] == "STATE"
    assert "IKIGAI_WEB_REDIS_URL" in warning["message"]
    assert REDIS_PASSWORD not in json.dumps(out)


def test_a_redis_that_refuses_the_password_never_fails_a_search(
    paced_on_redis: RedisServer, monkeypatch
):
    out = search(monkeypatch, ONE, IKIGAI_WEB_REDIS_URL=paced_on_redis.url("not-the-password"))
    assert out["success"] is True
    assert "refused the password" in out["warnings"][0]["message"]


def test_a_silent_redis_never_fails_a_search(silent_server: int, httpx_mock, monkeypatch):
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    started = time.monotonic()
    out = search(monkeypatch, ONE, IKIGAI_WEB_REDIS_URL=f"redis://127.0.0.1:{silent_server}/0")
    assert time.monotonic() - started < HANG_GUARD
    assert out["success"] is True
    assert "did not answer within" in out["warnings"][0]["message"]


def test_when_every_key_is_busy_the_first_free_one_decides(httpx_mock, monkeypatch):
    httpx_mock.add_response(json=SEARCH, headers=FREE, is_reusable=True)
    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=0.01")  # a turn every 105 s
    for _ in range(2):
        search(monkeypatch, f"{ONE},{TWO}")
    err = failed(monkeypatch, f"{ONE},{TWO}")
    assert err.code is ErrorCode.RATE_LIMIT
    assert "its keys is in" in err.message
    assert len(httpx_mock.get_requests()) == 2


def test_unpaced_a_limit_is_the_providers_answer_alone(httpx_mock, monkeypatch, tmp_path):
    httpx_mock.add_response(status_code=429, json=RATE_LIMITED, headers={"Retry-After": "600"})
    err = failed(monkeypatch, ONE, IKIGAI_WEB_RATE_LIMITS="brave=off")
    assert err.code is ErrorCode.RATE_LIMIT
    assert err.retry_after == 600
    assert not (tmp_path / "state" / "ikigai-web-tools" / "pace").exists()


def test_a_long_limit_is_the_providers_own_answer(httpx_mock, monkeypatch):
    httpx_mock.add_response(status_code=429, json=RATE_LIMITED, headers={"Retry-After": "600"})
    err = failed(monkeypatch, ONE)
    assert err.code is ErrorCode.RATE_LIMIT
    assert "Brave answered HTTP 429" in err.message  # asked once; its next turn is too late
    assert err.retry_after == 600


def test_a_run_of_short_limits_is_sent_again_then_reported(httpx_mock, monkeypatch):
    # A late send on a busy machine can meet a 429 more than once; a provider that always
    # refuses still ends the call, after SHORT_RETRIES sends again.
    for _ in range(SHORT_RETRIES):
        httpx_mock.add_response(status_code=429, json=RATE_LIMITED, headers={"Retry-After": "1"})
    httpx_mock.add_response(json=SEARCH, headers=FREE)
    assert search(monkeypatch, ONE)["success"] is True
    httpx_mock.reset()
    for _ in range(SHORT_RETRIES + 1):
        httpx_mock.add_response(status_code=429, json=RATE_LIMITED, headers={"Retry-After": "1"})
    err = failed(monkeypatch, ONE)
    assert err.code is ErrorCode.RATE_LIMIT
    assert len(httpx_mock.get_requests()) == SHORT_RETRIES + 1


def test_a_short_limit_is_sent_again_in_its_next_turn(httpx_mock, monkeypatch):
    httpx_mock.add_response(status_code=429, json=RATE_LIMITED, headers={"Retry-After": "1"})
    httpx_mock.add_response(json=SEARCH, headers=FREE)
    assert search(monkeypatch, ONE)["success"] is True
    assert len(httpx_mock.get_requests()) == 2
