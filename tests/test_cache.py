"""The search cache: best effort, keyed by content, expiring."""

from __future__ import annotations

import time

from common import cache


def test_round_trip_and_disabled():
    cache.put("ns", ["k", 1], {"v": 1}, 60)
    assert cache.get("ns", ["k", 1], 60) == {"v": 1}
    assert cache.get("ns", ["k", 2], 60) is None
    assert cache.get("ns", ["k", 1], 0) is None
    cache.put("ns", ["off"], {"v": 2}, 0)
    assert cache.get("ns", ["off"], 60) is None


def test_expiry(monkeypatch):
    cache.put("ns", "k", [1], 10)
    now = time.time()
    monkeypatch.setattr(time, "time", lambda: now + 11)
    assert cache.get("ns", "k", 10) is None


def test_corrupt_or_unwritable_cache_is_a_miss(tmp_path, monkeypatch):
    cache.put("ns", "k", [1], 10)
    path = cache._path_for("ns", "k")
    path.write_bytes(b"{garbage")
    assert cache.get("ns", "k", 10) is None
    path.write_bytes(b"[1]")
    assert cache.get("ns", "k", 10) is None
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    cache.put("ns", "k", [1], 10)  # cannot create a dir under a file: silently skipped
    assert cache.get("ns", "k", 10) is None
