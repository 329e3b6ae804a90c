"""The shared state (ikigai_web/common/state.py): local files by default, the same interface over
Redis."""

from __future__ import annotations

import fcntl
import itertools
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from conftest import HANG_GUARD, REDIS_PASSWORD, RedisServer

from ikigai_web.common import state
from ikigai_web.common.state import Files, Shared, key_id, store

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The store's clock, moved by the test."""
    now = [1_800_000_000.0]
    monkeypatch.setattr(state, "_now", lambda: now[0])
    return now


def test_the_default_store_is_local_files_under_the_state_dir(tmp_path: Path) -> None:
    found = store()
    assert isinstance(found, Files)
    assert found.root == tmp_path / "state" / "ikigai-web-tools"
    assert store() is found  # one per process


def test_a_value_is_kept_for_its_lifetime_then_gone(clock: list[float]) -> None:
    files = store()
    files.put("memory", "brave", {"why": "RATE_LIMIT", "until": 5}, ttl=10)
    assert files.get("memory", "brave") == {"why": "RATE_LIMIT", "until": 5}
    assert files.get("memory", "tavily") is None
    assert files.get("keys", "brave") is None  # spaces are apart
    clock[0] += 9.9
    assert files.get("memory", "brave") == {"why": "RATE_LIMIT", "until": 5}
    clock[0] += 0.2
    assert files.get("memory", "brave") is None
    assert files.scan("memory") == []
    assert files.warnings == []


def test_delete_scan_and_clear(clock: list[float]) -> None:
    files = store()
    for name, ttl in (("a", 10), ("b", 10), ("c", 1)):
        files.put("memory", name, [name], ttl)
    files.delete("memory", "b")
    files.delete("memory", "never-there")
    assert sorted(files.scan("memory")) == [("a", ["a"]), ("c", ["c"])]
    clock[0] += 2
    assert files.scan("memory") == [("a", ["a"])]
    files.put("memory", "d", 1, ttl=10)
    assert files.clear("memory") == 2
    assert files.scan("memory") == []
    assert files.clear("empty") == 0
    files.put("memory", "e", 1, ttl=0)  # no lifetime: not kept
    assert files.get("memory", "e") is None


def test_entries_are_private_whatever_the_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        store().put("memory", "brave", 1, ttl=60)
        store().reserve("pace", "brave:x", 1.0, most=5)
    finally:
        os.umask(old)
    root = tmp_path / "state" / "ikigai-web-tools"
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.stat().st_mode)
        assert mode == (0o700 if path.is_dir() else 0o600), path


def test_the_key_is_never_stored_only_its_id() -> None:
    secret = "BSA-very-secret-key-0123"
    name = key_id(secret)
    assert len(name) == 16
    assert name == key_id(secret) != key_id(secret + "x")
    assert secret not in name


def test_a_corrupt_or_foreign_entry_is_absent(tmp_path: Path) -> None:
    files = store()
    files.put("memory", "brave", 1, ttl=60)
    [path] = (tmp_path / "state" / "ikigai-web-tools" / "memory").iterdir()
    path.write_bytes(b'{"key": "brave", "exp')
    assert files.get("memory", "brave") is None
    assert not path.exists()  # discarded
    path.write_bytes(json.dumps({"key": "other", "expires": 4e9, "value": 1}).encode())
    assert files.get("memory", "brave") is None  # another key's entry (a digest collision)
    path.write_bytes(json.dumps({"key": "brave", "expires": "never", "value": 1}).encode())
    assert files.get("memory", "brave") is None
    path.write_bytes(json.dumps({"key": "brave", "expires": 4e9}).encode())
    assert files.get("memory", "brave") is None
    assert files.warnings == []


def test_an_unusable_state_dir_is_an_empty_store_and_a_warning(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file where the directory should be")
    files = store()
    files.put("memory", "brave", 1, ttl=60)
    assert files.get("memory", "brave") is None
    assert files.reserve("pace", "brave:x", 1.0, most=5) == state.Turn(0.0, granted=True)
    assert files.scan("memory") == []
    assert files.clear("memory") == 0
    [warning] = files.warnings  # said once
    assert warning["code"] == "STATE"
    assert str(tmp_path / "state") in warning["message"]


def test_a_space_is_a_short_name() -> None:
    with pytest.raises(ValueError, match="no such space"):
        store().get("../etc", "x")


def test_turns_are_spaced_by_the_interval(clock: list[float]) -> None:
    files = store()
    turns = [files.reserve("pace", "brave:k", 1.0, most=10) for _ in range(3)]
    assert turns == [state.Turn(0.0, True), state.Turn(1.0, True), state.Turn(2.0, True)]
    clock[0] += 0.5
    assert files.reserve("pace", "brave:k", 1.0, most=10) == state.Turn(2.5, True)
    # A turn that does not fit is not taken: the next caller gets the same one.
    assert files.reserve("pace", "brave:k", 1.0, most=1) == state.Turn(3.5, False)
    assert files.reserve("pace", "brave:k", 1.0, most=10) == state.Turn(3.5, True)
    assert files.reserve("pace", "brave:other", 1.0, most=10) == state.Turn(0.0, True)


def test_a_burst_takes_turns_at_once_then_they_are_spaced(clock: list[float]) -> None:
    files = store()
    waits = [files.reserve("pace", "google:k", 1.0, most=10, burst=3).wait for _ in range(5)]
    assert waits == [0.0, 0.0, 0.0, 1.0, 2.0]
    clock[0] += 10  # idle: the whole burst is back
    waits = [files.reserve("pace", "google:k", 1.0, most=10, burst=3).wait for _ in range(4)]
    assert waits == [0.0, 0.0, 0.0, 1.0]


def test_a_budget_held_back_gives_no_turn_before_its_time(clock: list[float]) -> None:
    files = store()
    files.reserve("pace", "brave:k", 0.0, most=float("inf"), after=30)  # told: wait 30 s
    assert files.reserve("pace", "brave:k", 1.0, most=10) == state.Turn(30.0, False)
    clock[0] += 25
    assert files.reserve("pace", "brave:k", 1.0, most=10) == state.Turn(5.0, True)


def test_a_lock_held_too_long_is_a_warning_not_a_stall(monkeypatch: pytest.MonkeyPatch) -> None:
    files = store()
    assert isinstance(files, Files)
    files.reserve("pace", "brave:k", 1.0, most=10)
    [lock] = files.root.joinpath("pace").glob("*.lock")
    monkeypatch.setattr(state, "LOCK_WAIT", 0.01)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert files.reserve("pace", "brave:k", 1.0, most=10).granted
    assert "held its lock too long" in files.warnings[0]["message"]


RESERVER = """
import sys
from ikigai_web.common.state import store
times = []
for _ in range(int(sys.argv[1])):
    turn = store().reserve("pace", "brave:shared", float(sys.argv[2]), most=1e6)
    import time
    times.append(time.time() + turn.wait)
assert not store().warnings, store().warnings
print(" ".join(map(repr, times)))
"""


def test_processes_at_once_each_get_a_turn_of_their_own(tmp_path: Path) -> None:
    """Eight processes take five turns each, at once: forty distinct turns, evenly spaced."""
    interval = 100.0  # turns are only taken, not waited for: far above any process's stall
    env = os.environ | {"PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RESERVER, "5", str(interval)],
            stdout=subprocess.PIPE,
            env=env,
        )
        for _ in range(8)
    ]
    times = sorted(float(t) for p in procs for t in p.communicate(timeout=60)[0].split())
    assert len(times) == 40
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert min(gaps) >= interval - 10, gaps


def test_what_cannot_be_stored_or_removed_is_a_warning(tmp_path: Path) -> None:
    files = store()
    assert isinstance(files, Files)
    files.put("memory", "big", "x" * state.MAX_VALUE, ttl=60)
    assert files.get("memory", "big") is None
    assert "more than state holds" in files.warnings[0]["message"]
    files.path("memory", "dir").mkdir(parents=True)  # a directory where an entry would be
    files.delete("memory", "dir")
    assert len(files.warnings) == 2


def test_an_entry_made_open_is_closed_when_rewritten(tmp_path: Path) -> None:
    files = store()
    assert isinstance(files, Files)
    files.reserve("pace", "brave:k", 1.0, most=10)
    [lock] = files.root.joinpath("pace").glob("*.lock")
    lock.chmod(0o644)
    files.reserve("pace", "brave:k", 1.0, most=10)
    assert stat.S_IMODE(lock.stat().st_mode) == 0o600


# --- Redis ------------------------------------------------------------------------------------


@pytest.fixture
def on_redis(redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch) -> RedisServer:
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", redis_server.url())
    return redis_server


def test_redis_keeps_what_local_files_keep(on_redis: RedisServer) -> None:
    shared = store()
    assert isinstance(shared, Shared)
    shared.put("memory", "brave", {"why": "AUTH_INVALID"}, ttl=60)
    shared.put("memory", "tavily", [1, 2], ttl=60)
    shared.put("memory", "gone", 1, ttl=0)
    assert shared.get("memory", "brave") == {"why": "AUTH_INVALID"}
    assert shared.get("memory", "gone") is None
    assert sorted(shared.scan("memory")) == [("brave", {"why": "AUTH_INVALID"}), ("tavily", [1, 2])]
    shared.delete("memory", "tavily")
    assert shared.clear("memory") == 1
    assert shared.scan("memory") == []
    assert shared.clear("memory") == 0
    assert shared.warnings == []
    assert not (shared.local.root / "memory").exists()  # nothing went to the local files


def test_a_value_expires_in_redis(on_redis: RedisServer) -> None:
    shared = store()
    shared.put("memory", "brave", 1, ttl=0.05)
    give_up = time.monotonic() + HANG_GUARD
    while shared.get("memory", "brave") is not None:
        assert time.monotonic() < give_up
        time.sleep(0.02)


def test_two_machines_share_one_budget_through_redis(
    on_redis: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = store()
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "other-machine"))
    second = store()
    assert first is not second
    assert isinstance(second, Shared)
    # Turns taken on the server's clock: each machine's follows the other's.
    waits = [s.reserve("pace", "brave:k", 100.0, most=1000).wait for s in (first, second, first)]
    assert waits[0] < 1
    assert 99 < waits[1] <= 100
    assert 199 < waits[2] <= 200
    refused = second.reserve("pace", "brave:k", 100.0, most=10)
    assert not refused.granted
    assert 299 < refused.wait <= 300
    held = first.reserve("pace", "brave:h", 0.0, most=float("inf"), after=50)
    assert held.granted
    assert first.reserve("pace", "brave:h", 1.0, most=10).wait > 49
    burst = [second.reserve("pace", "google:k", 100.0, most=1000, burst=2).wait for _ in "abc"]
    assert burst[0] < 1
    assert burst[1] < 1
    assert 99 < burst[2] <= 100


def test_redis_stopped_mid_run_falls_back_to_local_files(on_redis: RedisServer) -> None:
    shared = store()
    shared.put("memory", "brave", 1, ttl=60)
    on_redis.stop()
    started = time.monotonic()
    assert shared.get("memory", "brave") is None  # the local files hold nothing yet
    shared.put("memory", "brave", 2, ttl=60)
    assert shared.get("memory", "brave") == 2
    assert shared.reserve("pace", "brave:k", 1.0, most=10).granted
    assert time.monotonic() - started < HANG_GUARD
    [warning] = shared.warnings
    assert warning["code"] == "STATE"
    assert "could not be reached" in warning["message"]
    assert "IKIGAI_WEB_REDIS_URL" in warning["message"]
    assert REDIS_PASSWORD not in warning["message"]


def test_a_wrong_password_falls_back_and_says_so(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", redis_server.url("wrong-password-4567"))
    shared = store()
    shared.put("memory", "brave", 1, ttl=60)
    assert shared.get("memory", "brave") == 1  # from the local files
    [warning] = shared.warnings
    assert "refused the password" in warning["message"]
    assert "wrong-password-4567" not in warning["message"]


def test_a_silent_redis_costs_one_short_timeout_then_is_remembered(
    silent_server: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", f"redis://127.0.0.1:{silent_server}/0")
    shared = store()
    started = time.monotonic()
    assert shared.reserve("pace", "brave:k", 1.0, most=10).granted
    assert time.monotonic() - started < HANG_GUARD
    assert "did not answer within" in shared.warnings[0]["message"]
    state._stores.clear()  # the next call, in a new process
    later = store()
    assert isinstance(later, Shared)
    assert later.get("memory", "x") is None
    assert later._client is None  # never tried: the local files remember it failed
    assert "within the last 30 s" in later.warnings[0]["message"]


def test_without_the_redis_extra_local_files_are_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)  # import redis then fails
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", "redis://127.0.0.2:6379/0")
    shared = store()
    shared.put("memory", "brave", 1, ttl=60)
    assert shared.get("memory", "brave") == 1
    assert "ikigai-web-tools[redis]" in shared.warnings[0]["message"]


# --- the cache, held in Redis when the setting names one --------------------------------------


def test_the_cache_lives_in_redis_when_the_setting_names_one(
    on_redis: RedisServer, tmp_path: Path
) -> None:
    import redis

    from ikigai_web.common import cache

    answer = {"success": True, "provider": "brave", "results": [], "count": 0}
    assert cache.put("search", ["brave", "q"], answer, ttl=60) is None
    assert cache.get("search", ["brave", "q"], ttl=60) == cache.Hit(answer)
    assert cache.get("search", ["brave", "other"], ttl=60) == cache.Hit()
    assert not (tmp_path / "cache").exists()  # no file written
    client = redis.Redis.from_url(on_redis.url(), decode_responses=True)
    [name] = client.keys("ikigai-web-tools:cache:search:*")
    client.set(name, '1::{"stored": 1e10, "value": 1}')  # "stored in the future"
    hit = cache.get("search", ["brave", "q"], ttl=60)
    assert hit.value is None
    assert "corrupt cache entry was discarded" in (hit.warning or "")
    assert client.keys("ikigai-web-tools:cache:*") == []
    cache.put("search", ["brave", "q"], answer, ttl=60)
    cache.clear()
    assert client.keys("ikigai-web-tools:cache:*") == []
    client.close()


def test_a_cache_entry_goes_to_files_when_redis_stops_before_it(on_redis: RedisServer) -> None:
    from ikigai_web.common import cache

    answer = {"success": True, "provider": "brave", "results": [], "count": 0}
    assert cache.get("search", ["brave", "q"], ttl=60) == cache.Hit()  # Redis, up
    on_redis.stop()
    warning = cache.put("search", ["brave", "q"], answer, ttl=60)
    assert "IKIGAI_WEB_REDIS_URL" in (warning or "")
    assert cache.get("search", ["brave", "q"], ttl=60).value == answer  # from the files


def test_the_cache_falls_back_to_files_when_redis_stops(on_redis: RedisServer) -> None:
    from ikigai_web.common import cache

    answer = {"success": True, "provider": "brave", "results": [], "count": 0}
    cache.put("search", ["brave", "q"], answer, ttl=60)
    on_redis.stop()
    hit = cache.get("search", ["brave", "q"], ttl=60)
    assert hit.value is None
    assert "IKIGAI_WEB_REDIS_URL" in (hit.warning or "")
    assert cache.put("search", ["brave", "q"], answer, ttl=60) is None  # to the files
    assert cache.get("search", ["brave", "q"], ttl=60).value == answer


def test_the_redis_password_is_shown_nowhere(run_tool, monkeypatch: pytest.MonkeyPatch) -> None:
    from ikigai_web.common.redact import mask
    from ikigai_web.host.calls import mask_every_credential

    url = "redis://:pw-secret-9f8e7d@127.0.0.2:6379/0"
    run = run_tool("web-tools", args=("doctor", "--json"), env={"IKIGAI_WEB_REDIS_URL": url})
    assert "pw-secret-9f8e7d" not in run.stdout + run.stderr
    assert "redis://127.0.0.2:6379/0" in run.stdout
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", url)
    mask_every_credential()  # what the MCP server masks in every tool's output
    assert mask(f"echoed {url}") == "echoed redis://***@127.0.0.2:6379/0"


def test_a_private_dir_is_made_or_found(tmp_path: Path) -> None:
    made = tmp_path / "a" / "b"
    state._private_dir(made)
    state._private_dir(made)  # there already: left as it is
    assert stat.S_IMODE(made.stat().st_mode) == 0o700
    (tmp_path / "file").write_text("x")
    with pytest.raises(NotADirectoryError):
        state._private_dir(tmp_path / "file")


def test_what_redis_says_is_read_with_care(on_redis: RedisServer) -> None:
    import redis

    shared = store()
    client = redis.Redis.from_url(on_redis.url())
    client.set("ikigai-web-tools:memory:junk", b"1::not JSON")
    client.close()
    assert shared.get("memory", "junk") is None
    assert shared.scan("memory") == []
    assert state.redis_failure(RuntimeError("a bug")) == "failed (RuntimeError)"
    on_redis.stop()
    shared.delete("memory", "junk")  # the local files', now
    assert shared.warnings


@pytest.fixture
def tls_redis(tmp_path: Path) -> Iterator[str]:
    """A redis-server that speaks only TLS, with a password, its certificate from a test CA:
    the URL that reaches it (the CA named in the URL, as a private server's users give it)."""
    import shutil
    import socket

    import trustme

    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).is_file():
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1")
    ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
    cert.private_key_pem.write_to_path(str(tmp_path / "key.pem"))
    cert.cert_chain_pems[0].write_to_path(str(tmp_path / "cert.pem"))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    args = ["--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1", "--save", ""]
    args += ["--tls-cert-file", str(tmp_path / "cert.pem"), "--tls-auth-clients", "no"]
    args += ["--tls-key-file", str(tmp_path / "key.pem"), "--requirepass", REDIS_PASSWORD]
    args += ["--dir", str(tmp_path)]
    process = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL)
    give_up = time.monotonic() + HANG_GUARD
    while not _listens(port):
        assert process.poll() is None, "redis-server did not start with TLS"
        assert time.monotonic() < give_up, "redis-server did not answer"
        time.sleep(0.02)
    yield f"rediss://:{REDIS_PASSWORD}@127.0.0.1:{port}/0?ssl_ca_certs={tmp_path / 'ca.pem'}"
    process.kill()
    process.wait(timeout=HANG_GUARD)


def _listens(port: int) -> bool:
    import socket

    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_rediss_url_keeps_state_over_tls_with_its_password(
    tls_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", tls_redis)
    shared = store()
    assert isinstance(shared, Shared)
    shared.put("memory", "brave", {"why": "RATE_LIMIT"}, ttl=60)
    assert shared.get("memory", "brave") == {"why": "RATE_LIMIT"}
    assert shared.reserve("pace", "brave:k", 1.0, most=10).granted
    assert shared.warnings == []
    assert not (shared.local.root / "memory").exists()  # it went over TLS, not to the files


def test_a_rediss_url_whose_certificate_is_not_trusted_falls_back(
    tls_redis: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Without the test CA the server's certificate is unknown: never sent the password in
    # the clear or unchecked, the state goes to the local files, and the answer says so.
    monkeypatch.setenv("IKIGAI_WEB_REDIS_URL", tls_redis.split("?", maxsplit=1)[0])
    shared = store()
    shared.put("memory", "brave", {"why": "RATE_LIMIT"}, ttl=60)
    assert shared.get("memory", "brave") == {"why": "RATE_LIMIT"}
    assert "IKIGAI_WEB_REDIS_URL" in shared.warnings[0]["message"]
    assert REDIS_PASSWORD not in json.dumps(shared.warnings)
