"""The persistent cache under 8 processes at once: the files in ikigai_web.common.cache against
SQLite.

Three candidates with the same features (expiry, least-recently-used order kept on hits, a
size bound with eviction): `files` is ikigai_web.common.cache itself; `sqlite` is the standard
library's SQLite in WAL mode (one table, the total size kept in the same transaction); and
`diskcache` (SQLite plus files) when it is installed (`pip install diskcache`).

1. 8 processes at once, each a loop of get-then-put-on-miss over a shared key space: small
   values (a search answer, 4 KB, no eviction) and large ones (a page, 256 KB, a bound that
   keeps evicting). Figures: all operations per second, and the median and 99th percentile of
   one operation.
2. What a tool call pays, since every call is a fresh process: rounds of 8 fresh processes
   that, at the same moment, import the cache, open it, get, and put on a miss. Figures: the
   median and 90th percentile of that time.

Every value read back must be the one stored for its key: a torn or mixed-up read stops it.
"""

from __future__ import annotations

import hashlib
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")
PROCESSES = 8
OPS = 300
KEYS = 64
CALLS = 10
LEAD_TIME = 1.0  # seconds for every worker to start before they all begin at once
TTL = 300
MB = 1024 * 1024
WORKLOADS = {"small (4 KB, no eviction)": (4096, 200), "large (256 KB, 8 MB bound)": (262_144, 8)}


class Files:
    """ikigai_web.common.cache itself."""

    def __init__(self, folder: Path, bound_mb: int) -> None:
        del folder, bound_mb  # from the environment, as a tool call has them
        from ikigai_web.common import cache

        self.cache = cache

    def get(self, key: str) -> Any:
        return self.cache.get("bench", key, TTL).value

    def put(self, key: str, value: Any) -> None:
        problem = self.cache.put("bench", key, value, TTL)
        assert problem is None, problem


class Sqlite:
    """SQLite in WAL mode, as a cache with these features would use it."""

    SCHEMA = (
        (
            "CREATE TABLE IF NOT EXISTS entries "
            "(key TEXT PRIMARY KEY, expires REAL, used REAL, size INTEGER, value BLOB)"
        ),
        "CREATE INDEX IF NOT EXISTS by_use ON entries (used)",
        "CREATE TABLE IF NOT EXISTS meta (id INTEGER PRIMARY KEY, total INTEGER)",
        "INSERT OR IGNORE INTO meta VALUES (0, 0)",
    )

    def __init__(self, folder: Path, bound_mb: int) -> None:
        import sqlite3

        self.db = sqlite3.connect(folder / "cache.sqlite3", timeout=30, isolation_level=None)
        # Switching a new database to WAL fails at once ("database is locked", no busy wait)
        # when other processes open it at the same moment: a real cache would retry too.
        for _ in range(100):
            try:
                self.db.execute("PRAGMA journal_mode=WAL")
                break
            except sqlite3.OperationalError:
                time.sleep(0.01)
        self.db.execute("PRAGMA synchronous=NORMAL")
        for statement in self.SCHEMA:
            self.db.execute(statement)
        self.bound = bound_mb * MB

    def get(self, key: str) -> Any:
        k = digest(key)
        row = self.db.execute("SELECT expires, value FROM entries WHERE key = ?", (k,)).fetchone()
        if row is None or row[0] <= time.time():
            return None
        self.db.execute("UPDATE entries SET used = ? WHERE key = ?", (time.time(), k))
        return orjson.loads(row[1])["value"]

    def put(self, key: str, value: Any) -> None:
        k, now = digest(key), time.time()
        data = orjson.dumps({"stored": now, "value": value})
        self.db.execute("BEGIN IMMEDIATE")
        self._delete("key = ?", (k,))
        self.db.execute(
            "INSERT INTO entries VALUES (?, ?, ?, ?, ?)", (k, now + TTL, now, len(data), data)
        )
        self.db.execute("UPDATE meta SET total = total + ?", (len(data),))
        self._evict(now)
        self.db.execute("COMMIT")

    def _evict(self, now: float) -> None:
        (total,) = self.db.execute("SELECT total FROM meta").fetchone()
        if total <= self.bound:
            return
        self._delete("expires <= ?", (now,))
        while self.db.execute("SELECT total FROM meta").fetchone()[0] > self.bound * 0.9:
            self._delete("key IN (SELECT key FROM entries ORDER BY used LIMIT 8)", ())

    def _delete(self, where: str, args: tuple[Any, ...]) -> None:
        (size,) = self.db.execute(
            f"SELECT COALESCE(SUM(size), 0) FROM entries WHERE {where}", args
        ).fetchone()
        self.db.execute(f"DELETE FROM entries WHERE {where}", args)
        self.db.execute("UPDATE meta SET total = total - ?", (size,))


class DiskCache:
    """diskcache.Cache with its least-recently-used policy."""

    def __init__(self, folder: Path, bound_mb: int) -> None:
        import diskcache

        self.cache = diskcache.Cache(
            str(folder), size_limit=bound_mb * MB, eviction_policy="least-recently-used"
        )

    def get(self, key: str) -> Any:
        data = self.cache.get(digest(key))
        return None if data is None else orjson.loads(data)["value"]

    def put(self, key: str, value: Any) -> None:
        data = orjson.dumps({"stored": time.time(), "value": value})
        self.cache.set(digest(key), data, expire=TTL)


CANDIDATES: dict[str, type[Files | Sqlite | DiskCache]] = {
    "files": Files,
    "sqlite": Sqlite,
    "diskcache": DiskCache,
}


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def value_for(key: str, size: int) -> dict[str, str]:
    """A value that says which key it belongs to, so a mix-up or a torn read shows."""
    return {"key": key, "body": key[-1] * size}


def worker(name: str, folder: str, size: int, bound_mb: int, ops: int, start_at: float) -> None:
    """One process: waits for `start_at`, so that all work at once, then opens the cache and
    runs `ops` get-or-put; prints the set-up time, each op's time and when it began and ended.
    """
    # What a tool has loaded before it looks at its cache: settings and the cache's location.
    from ikigai_web.common.settings import cache_dir, load

    assert cache_dir()
    assert load().cache_max_mb
    time.sleep(max(0.0, start_at - time.time()))
    began = time.time()
    start = time.perf_counter()
    cache = CANDIDATES[name](Path(folder), bound_mb)  # the import and opening included
    setup = time.perf_counter() - start
    rng = random.Random(os.getpid())
    times = []
    for _ in range(ops):
        key = f"k{rng.randrange(KEYS)}"
        start = time.perf_counter()
        got = cache.get(key)
        if got is None:
            cache.put(key, value_for(key, size))
        elif got != value_for(key, size):
            raise SystemExit(f"{name}: a wrong or torn value for {key}")
        times.append(time.perf_counter() - start)
    report = {"setup": setup, "ops": times, "began": began, "ended": time.time()}
    sys.stdout.write(orjson.dumps(report).decode())


def together(name: str, folder: str, size: int, bound_mb: int, ops: int) -> list[dict[str, Any]]:
    """PROCESSES workers started together; their reports."""
    start_at = time.time() + LEAD_TIME
    args = [name, folder, str(size), str(bound_mb), str(ops), str(start_at)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    # As installed: the modules' bytecode cached (the stdlib's always is).
    env |= {"XDG_CACHE_HOME": folder, "IKIGAI_WEB_CACHE_MAX_MB": str(bound_mb)}
    cmd = [PYTHON, __file__, "--worker", *args]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, cwd=ROOT, env=env) for _ in range(PROCESSES)
    ]
    return [collect(p) for p in procs]


def collect(proc: subprocess.Popen[bytes]) -> dict[str, Any]:
    out, _ = proc.communicate()
    if proc.returncode:
        raise SystemExit(f"a worker failed with exit {proc.returncode}")
    report: dict[str, Any] = orjson.loads(out)
    return report


def loops(name: str, size: int, bound_mb: int) -> str:
    """Workload 1: throughput of all processes together, and one op's latency."""
    with tempfile.TemporaryDirectory() as folder:
        reports = together(name, folder, size, bound_mb, OPS)
    wall = max(r["ended"] for r in reports) - min(r["began"] for r in reports)
    ms = sorted(t * 1000 for r in reports for t in r["ops"])
    rate = len(ms) / wall
    p99 = ms[int(len(ms) * 0.99)]
    return f"{rate:7.0f} ops/s  op median {statistics.median(ms):5.2f} ms  p99 {p99:6.2f} ms"


def fresh_calls(name: str) -> str:
    """Workload 2: CALLS rounds of PROCESSES fresh processes, each opening the cache and
    making one get-or-put at the same moment."""
    size, bound_mb = WORKLOADS["small (4 KB, no eviction)"]
    shares: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(CALLS):
            reports = together(name, folder, size, bound_mb, 1)
            shares.extend(r["setup"] + r["ops"][0] for r in reports)
    shares.sort()
    median, p90 = statistics.median(shares) * 1000, shares[int(len(shares) * 0.9)] * 1000
    return f"import + open + get-or-put: median {median:6.2f} ms  p90 {p90:6.2f} ms"


def available(name: str) -> bool:
    if name != "diskcache":
        return True
    try:
        import diskcache  # noqa: F401
    except ImportError:
        return False
    return True


def main() -> None:
    print(f"bench_cache on {sys.platform}, {os.cpu_count()} cores, {PROCESSES} processes")
    names = [n for n in CANDIDATES if available(n)]
    for missing in sorted(set(CANDIDATES) - set(names)):
        print(f"  {missing}: not installed, skipped (pip install {missing} to compare)")
    for label, (size, bound_mb) in WORKLOADS.items():
        print(f"{PROCESSES} processes x {OPS} get-or-put, {label}:")
        for name in names:
            print(f"  {name:10s} {loops(name, size, bound_mb)}")
    print(f"a fresh process per call (import, get, put on a miss), {PROCESSES} at once:")
    for name in names:
        print(f"  {name:10s} {fresh_calls(name)}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        name, folder, size, bound_mb, ops, start_at = sys.argv[2:8]
        worker(name, folder, int(size), int(bound_mb), int(ops), float(start_at))
    else:
        main()
