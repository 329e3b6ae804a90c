"""The persistent cache: best effort, private, bounded, and never fooled by a bad entry."""

from __future__ import annotations

import fcntl
import os
import stat
import time
from pathlib import Path

import orjson
import pytest

from ikigai_web.common import cache
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.settings import cache_dir

ROOT = Path(__file__).resolve().parents[2]
KB = 1024
SKIPPED = "was skipped"
AS_ROOT = os.geteuid() == 0


class Clock:
    """`time.time` under the test's control. It starts well ahead of the real clock, so that
    the times the cache sets stand apart from those the kernel sets (atime on a read, ctime).
    """

    def __init__(self) -> None:
        self.real = time.time()
        self.now = self.real + 10_000

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(time, "time", fake)
    return fake


@pytest.fixture
def one_mb(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_CACHE_MAX_MB", "1")
    return 1024 * KB


def entry(namespace: str, key: object) -> Path:
    return cache._entry_path(namespace, key)


def files() -> list[Path]:
    return sorted(p for p in cache_dir().rglob("*") if p.is_file())


def entries() -> list[Path]:
    return [p for p in files() if not p.name.startswith(".")]


def size_of_entries() -> int:
    return sum(p.stat().st_size for p in entries())


def blob(size: int) -> dict[str, str]:
    return {"text": "x" * size}


# --------------------------------------------------------------------------- the basics


def test_round_trip_and_disabled():
    assert cache.put("ns", ["k", 1], {"v": 1}, 60) is None
    assert cache.get("ns", ["k", 1], 60) == cache.Hit({"v": 1})
    assert cache.get("ns", ["k", 2], 60) == cache.Hit()
    assert cache.get("ns", ["k", 1], 0) == cache.Hit()
    assert cache.put("ns", ["off"], {"v": 2}, 0) is None
    assert not entry("ns", ["off"]).exists()
    assert cache.get("ns", ["off"], 60) == cache.Hit()


def test_an_expired_entry_is_a_miss_and_is_removed(clock):
    cache.put("ns", "k", [1], 10)
    clock.advance(11)
    assert cache.get("ns", "k", 10) == cache.Hit()
    assert not entry("ns", "k").exists()


def test_a_shorter_ttl_than_at_storing_time_applies(clock):
    cache.put("ns", "k", [1], 900)
    clock.advance(301)
    assert cache.get("ns", "k", 300).value is None


def test_warnings_are_in_the_contracts_shape_once_each():
    assert cache.warnings(None, "a", "a", None, "b") == [
        {"code": "CACHE", "message": "a"},
        {"code": "CACHE", "message": "b"},
    ]
    assert cache.warnings(None, None) == []


def test_a_bad_size_setting_fails_the_call_before_any_request(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_CACHE_MAX_MB", "lots")
    with pytest.raises(ToolError) as caught:
        cache.get("ns", "k", 60)
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert "IKIGAI_WEB_CACHE_MAX_MB" in caught.value.message


# --------------------------------------------------------------------------- corrupt entries


def _entry_bytes(stored: object = None, value: object = None) -> bytes:
    return orjson.dumps({"stored": time.time() if stored is None else stored, "value": value})


CORRUPT = {
    "truncated": lambda: _entry_bytes(value={"v": 1})[:-7],
    "garbage bytes": lambda: b"\x00\xff\xfe\x9c garbage \x81",
    "empty file": lambda: b"",
    "a JSON array": lambda: b"[1, 2, 3]",
    "a JSON string": lambda: b'"stored"',
    "no time stamp": lambda: b'{"value": {"v": 1}}',
    "a time stamp that is text": lambda: _entry_bytes(stored="yesterday", value={"v": 1}),
    "a time stamp that is a boolean": lambda: _entry_bytes(stored=True, value={"v": 1}),
    "NaN for a time stamp": lambda: b'{"stored": NaN, "value": {"v": 1}}',
    "no value": lambda: orjson.dumps({"stored": time.time()}),
    "a null value": lambda: _entry_bytes(value=None),
    "stored in the future": lambda: _entry_bytes(stored=time.time() + 3600, value={"v": 1}),
}


@pytest.mark.parametrize("kind", CORRUPT)
def test_a_corrupt_entry_is_discarded_with_a_warning_and_replaced(kind):
    path = entry("ns", "k")
    path.parent.mkdir(parents=True)
    path.write_bytes(CORRUPT[kind]())
    hit = cache.get("ns", "k", 60)
    assert hit.value is None
    assert hit.warning is not None
    assert hit.warning.startswith("a corrupt cache entry was discarded")
    assert not path.exists()
    assert cache.put("ns", "k", {"v": 2}, 60) is None
    assert cache.get("ns", "k", 60) == cache.Hit({"v": 2})


def test_what_is_no_file_in_an_entrys_place_is_corrupt_and_never_blocks():
    path = entry("ns", "k")
    path.parent.mkdir(parents=True)
    os.mkfifo(path)  # opening it to read would wait for a writer forever
    assert "(not a regular file)" in str(cache.get("ns", "k", 60).warning)
    assert not path.exists()
    path.symlink_to("/dev/zero")  # endless
    assert "(not a regular file)" in str(cache.get("ns", "k", 60).warning)
    assert Path("/dev/zero").exists()
    path.mkdir()
    assert "(not a regular file)" in str(cache.get("ns", "k", 60).warning)


def test_a_fifo_in_the_ledgers_place_is_a_warning_not_a_hang():
    cache.put("ns", "k", [1], 60)
    ledger = cache_dir() / ".written"
    ledger.unlink()
    os.mkfifo(ledger)  # opening it to write would wait for a reader forever
    assert "could not be kept to its size bound" in str(cache.put("ns", "k2", [2], 60))
    assert cache.get("ns", "k2", 60) == cache.Hit([2])


def test_a_value_the_caller_does_not_recognise_is_corrupt():
    def valid(value):
        return isinstance(value, dict) and isinstance(value.get("n"), int)

    cache.put("ns", "k", {"n": "one"}, 60)
    hit = cache.get("ns", "k", 60, valid=valid)
    assert (hit.value, "not what this tool stores" in str(hit.warning)) == (None, True)
    cache.put("ns", "k", {"n": 1}, 60)
    assert cache.get("ns", "k", 60, valid=valid) == cache.Hit({"n": 1})


def test_an_entry_larger_than_the_bound_is_corrupt_and_not_read_whole(one_mb):
    path = entry("ns", "k")
    path.parent.mkdir(parents=True)
    path.write_bytes(_entry_bytes(value="x" * (2 * one_mb)))
    assert "larger than 1,048,576 bytes" in str(cache.get("ns", "k", 60).warning)


# --------------------------------------------------------------------------- unusable directories


def test_a_file_where_the_cache_dir_should_be():
    root = cache_dir()
    root.parent.mkdir(parents=True)
    root.write_text("in the way")
    hit = cache.get("ns", "k", 60)
    assert hit == cache.Hit()  # nothing stored: a miss, and `put` says why
    warning = cache.put("ns", "k", {"v": 1}, 60)
    assert warning == f"the cache at {root} was skipped ({root} is a file, not a directory)"
    assert root.read_text() == "in the way"


def test_a_file_where_a_namespace_dir_should_be():
    cache.put("other", "k", [1], 60)
    (cache_dir() / "ns").write_text("in the way")
    assert cache.get("ns", "k", 60) == cache.Hit()
    assert "ns is a file, not a directory" in str(cache.put("ns", "k", [1], 60))


def test_a_file_where_the_cache_dirs_parent_should_be():
    cache_dir().parent.write_text("in the way")
    assert cache.get("ns", "k", 60) == cache.Hit()
    assert SKIPPED in str(cache.put("ns", "k", [1], 60))


def _deny(monkeypatch, *, reads: bool) -> None:
    """Permission denied under the cache dir, as an unreadable or unwritable dir gives it
    to a user who is not root (the tests may run as root, whom modes do not stop)."""
    root = str(cache_dir())
    writes = os.O_WRONLY | os.O_RDWR | os.O_CREAT
    real_open, real_mkdir = os.open, Path.mkdir

    def refuse(path: object) -> None:
        if str(path).startswith(root):
            raise PermissionError(13, "Permission denied", str(path))

    def os_open(path, flags, *args, **kwargs):
        if reads or flags & writes:
            refuse(path)
        return real_open(path, flags, *args, **kwargs)

    def mkdir(self, *args, **kwargs):
        refuse(self)
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(Path, "mkdir", mkdir)


def test_an_unwritable_cache_dir_is_skipped_with_one_warning(monkeypatch):
    cache.put("ns", "old", [1], 60)
    _deny(monkeypatch, reads=False)
    assert cache.get("ns", "old", 60) == cache.Hit([1])  # reading still works
    hit = cache.get("ns", "k", 60)
    stored = cache.put("ns", "k", [2], 60)
    assert hit.warning is None
    assert stored == f"the cache at {cache_dir()} was skipped (Permission denied)"


def test_a_locked_cache_dir_is_skipped_with_one_warning(monkeypatch):
    cache.put("ns", "k", [1], 60)
    _deny(monkeypatch, reads=True)
    hit = cache.get("ns", "k", 60)
    stored = cache.put("ns", "k", [2], 60)
    assert hit == cache.Hit(warning=f"the cache at {cache_dir()} was skipped (Permission denied)")
    assert cache.warnings(hit.warning, stored) == [{"code": "CACHE", "message": hit.warning}]


@pytest.mark.skipif(AS_ROOT, reason="root reads and writes whatever the modes say")
@pytest.mark.parametrize("mode", [0o000, 0o500])
def test_real_locked_and_read_only_dirs(mode):
    cache.put("ns", "k", [1], 60)
    root = cache_dir()
    folders = (root / "ns", root)  # as `chmod -R` leaves them
    for folder in folders:
        folder.chmod(mode)
    try:
        hit = cache.get("ns", "k", 60)
        stored = cache.put("ns", "k2", [2], 60)
        assert stored is not None
        assert SKIPPED in stored
        assert hit.value == ([1] if mode else None)
        assert stat.S_IMODE(root.stat().st_mode) == mode  # a user's lock is not undone
    finally:
        for folder in reversed(folders):
            folder.chmod(0o700)


def test_a_sweep_that_fails_is_a_warning_and_the_entry_is_kept(monkeypatch):
    def broken(*_):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(cache, "_evict", broken)
    warning = cache.put("ns", "k", [1], 60)
    assert warning == (
        f"the cache at {cache_dir()} could not be kept to its size bound (Input/output error)"
    )
    assert cache.get("ns", "k", 60) == cache.Hit([1])


def test_a_write_that_fails_leaves_no_temporary_file(monkeypatch):
    def full(*_):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "utime", full)
    assert "No space left on device" in str(cache.put("ns", "k", [1], 60))
    assert [p.name for p in files()] == []


# --------------------------------------------------------------------------- privacy


@pytest.mark.parametrize("umask", [0o000, 0o022, 0o077, 0o277])
def test_files_are_0600_and_dirs_0700_whatever_the_umask(umask):
    old = os.umask(umask)
    try:
        assert cache.put("ns", "k", [1], 60) is None
    finally:
        os.umask(old)
    root = cache_dir()
    assert [p.name for p in files()] == [".sweep", ".written", entry("ns", "k").name]
    for path in files():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in (root.parent, root, root / "ns"):  # the parent was missing: made too
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder


def test_missing_parents_are_made_private_and_existing_ones_left_alone(monkeypatch, tmp_path):
    mine = tmp_path / "home"
    mine.mkdir(mode=0o755)
    mine.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(mine / "a" / "b"))
    assert cache.put("ns", "k", [1], 60) is None
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in (mine, mine / "a", mine / "a" / "b")}
    assert list(modes.values()) == [0o755, 0o700, 0o700]


def test_a_file_whose_mode_cannot_be_set_is_closed_and_skipped(monkeypatch):
    def refuse(*_):
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "fchmod", refuse)
    old = os.umask(0o277)
    try:
        warning = cache.put("ns", "k", [1], 60)
    finally:
        os.umask(old)
    assert warning == f"the cache at {cache_dir()} was skipped (Operation not permitted)"
    assert files() == []


def test_a_cache_an_older_version_left_open_is_closed():
    root = cache_dir()
    (root / "ns").mkdir(parents=True)
    old = root / "ns" / ("0" * 64)
    old.write_bytes(_entry_bytes(value=[1]))
    os.utime(old, (time.time(), time.time() + 60))
    for path, mode in ((root, 0o755), (root / "ns", 0o755), (old, 0o644)):
        path.chmod(mode)
    cache.put("ns", "k", [1], 60)  # the first write sweeps: nothing swept it yet
    for path, mode in ((root, 0o700), (root / "ns", 0o700), (old, 0o600)):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path


def test_the_key_is_only_stored_hashed():
    key = ["https://user:hunter2@example.com/?token=s3cr3t", {"q": "private"}]
    cache.put("ns", key, {"v": 1}, 60)
    for path in files():
        for secret in ("hunter2", "s3cr3t", "private"):
            assert secret not in str(path)
            assert secret.encode() not in path.read_bytes()
    assert cache.get("ns", key, 60) == cache.Hit({"v": 1})


# --------------------------------------------------------------------------- size bound, LRU


def test_the_least_recently_used_entries_go_first(clock, one_mb):
    size = one_mb // 5
    for name in "abcd":
        clock.advance(100)
        cache.put("ns", name, blob(size), 3600)
    clock.advance(100)
    assert cache.get("ns", "a", 3600).value is not None  # now the most recently used
    clock.advance(100)
    cache.put("ns", "e", blob(size), 3600)  # over the bound: the least recently used goes
    kept = {name for name in "abcde" if entry("ns", name).exists()}
    assert kept == {"a", "c", "d", "e"}
    assert size_of_entries() <= one_mb * 0.9


def test_a_recent_use_is_not_marked_again(clock, monkeypatch):
    clock.now = clock.real  # the kernel sets the atime of a read: the clocks must agree
    cache.put("ns", "k", [1], 3600)
    marked = []
    monkeypatch.setattr(os, "utime", lambda *args: marked.append(args))
    clock.advance(10)
    cache.get("ns", "k", 3600)
    assert marked == []
    clock.advance(100)
    cache.get("ns", "k", 3600)
    assert len(marked) == 1


def test_the_cache_stays_within_its_bound(one_mb):
    for i in range(150):
        assert cache.put("ns", i, blob(20 * KB + i * 100), 3600) is None
        assert size_of_entries() <= one_mb
    assert size_of_entries() > one_mb * 0.5  # and it is still a cache


def test_a_value_larger_than_the_bound_is_not_stored(one_mb):
    assert cache.put("ns", "k", blob(one_mb), 60) is None
    assert entries() == []


def test_sweeps_are_rare_when_little_is_written(monkeypatch):
    scans = []
    real = cache._evict

    def counted(*args):
        scans.append(args)
        real(*args)

    monkeypatch.setattr(cache, "_evict", counted)
    for i in range(300):
        cache.put("ns", i, blob(5 * KB), 300)
    assert len(scans) == 1  # the first write: no sweep had ever run


def test_expired_entries_are_swept_within_the_hour(clock):
    for i in range(50):
        cache.put("ns", i, [i], 300)
    clock.advance(3601)
    cache.put("ns", "new", [0], 300)
    assert entries() == [entry("ns", "new")]


def test_temporary_files_of_dead_writers_are_swept(clock):
    clock.now = clock.real  # a temporary file's age is its ctime, which the kernel sets
    cache.put("ns", "k", [1], 60)
    temp = entry("ns", "k").with_name("abc.123.ffff.tmp")
    temp.write_bytes(b"half an entr")
    cache._sweep(cache_dir(), 1024 * KB)
    assert temp.exists()  # it may be a write in progress
    clock.advance(3601)
    cache._sweep(cache_dir(), 1024 * KB)
    assert not temp.exists()


def test_a_sweep_leaves_what_is_not_an_entry_alone(clock):
    cache.put("ns", "k", [1], 60)
    (cache_dir() / "ns" / "folder").mkdir()
    (cache_dir() / "ns" / "link").symlink_to("/dev/null")
    clock.advance(3601)
    cache._sweep(cache_dir(), 1024 * KB)
    assert sorted(p.name for p in (cache_dir() / "ns").iterdir()) == ["folder", "link"]


def test_a_held_sweep_lock_skips_the_sweep_not_the_call(clock, one_mb):
    cache.put("ns", "first", [0], 3600)
    lock = os.open(cache_dir() / ".sweep", os.O_WRONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for i in range(8):
            assert cache.put("ns", i, blob(one_mb // 5), 3600) is None
        assert size_of_entries() > one_mb
    finally:
        os.close(lock)
    cache.put("ns", "next", [1], 3600)
    assert size_of_entries() <= one_mb * 0.9


# --------------------------------------------------------------------------- clearing


def test_clear_removes_everything():
    cache.put("ns", "k", [1], 60)
    assert cache.clear() == cache_dir()
    assert not cache_dir().exists()
    assert cache.get("ns", "k", 60) == cache.Hit()
    assert cache.clear() == cache_dir()  # nothing to clear is fine
    cache_dir().write_text("in the way")
    cache.clear()
    assert not cache_dir().exists()
