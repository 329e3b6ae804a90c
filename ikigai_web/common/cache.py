"""The persistent cache: one file per entry, private to the user, bounded in size.

Best effort: a cache that cannot be used is a miss plus a warning for the answer, never a
failed call. Layout, under `cache_dir()`:

    <namespace>/<sha256 of the key>   one entry, {"stored": <unix time>, "value": <JSON>}
    .written                          grows by one byte per KiB stored since the last sweep
    .sweep                            locked while a sweep runs; its mtime is the last sweep

Directories are 0700 and files 0600 whatever the umask: they hold fetched pages. The key is
only ever stored hashed. An entry is written to a temporary file and renamed into place, so
readers see a whole entry or none, and take no lock. An entry's mtime is its expiry and its
atime its last use: a sweep drops expired entries, then the least recently used ones, from one
`stat` per file. A sweep runs once a tenth of the size bound has been written since the last
one, or an hour after it, so no call pays a directory scan for its own sake.

Empty it with `web-tools clear-cache`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import time
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.files import parsed, read_regular
from ikigai_web.common.settings import cache_dir, load
from ikigai_web.common.text import compact

if TYPE_CHECKING:
    from collections.abc import Callable

_LEDGER = ".written"
_SWEEP_LOCK = ".sweep"
_TEMP_SUFFIX = ".tmp"
_SWEEP_EVERY = 3600.0  # seconds: expired entries go even when little is written
_SWEEP_SHARE = 10  # a sweep after a tenth of the bound has been written: amortised
_KEEP_SHARE = 0.9  # a sweep evicts down to 90% of the bound, leaving room for that tenth
_STALE_TEMP = 600.0  # seconds: a temporary file this old was left by a writer that died
_RECENT = 60.0  # seconds: a last use this recent is recent enough for the LRU order
_MB = 1024 * 1024
# Bytes of one entry in Redis, written or read (its size is checked on the server before it is
# read): a page of 10 MiB, the default fetch cap, as JSON, with room for its escapes.
MAX_SHARED_ENTRY = 32 * _MB


class Hit(NamedTuple):
    """What `get` found: the value (None on a miss) and why the cache was skipped, if it was."""

    value: Any = None
    warning: str | None = None


def get(
    namespace: str, key: object, ttl: float, *, valid: Callable[[Any], bool] | None = None
) -> Hit:
    """The fresh value stored under `key`, if any; `valid` says what a usable value looks like.

    An entry that is not one (truncated, garbage, wrong shape, a value `valid` rejects, a time
    stamp in the future) is deleted and reported in `warning`, so the fresh answer replaces it.
    """
    if ttl <= 0:
        return Hit()
    # Read first: a bad size setting fails the call before any request, as a bad TTL does.
    bound = _bound_bytes()
    if (redis := _redis()) is not None:
        hit = _redis_lookup(redis, namespace, key, (bound, ttl), valid)
        if redis.up:
            return hit
    hit = _files_get(namespace, key, bound, ttl, valid)
    return hit if redis is None else hit._replace(warning=hit.warning or redis.why())


def _files_get(
    namespace: str, key: object, bound: int, ttl: float, valid: Callable[[Any], bool] | None
) -> Hit:
    path = _entry_path(namespace, key)
    distrust = untrusted(path.parent)
    return Hit(warning=distrust) if distrust else _lookup(path, bound, ttl, valid)


def _lookup(path: Path, bound: int, ttl: float, valid: Callable[[Any], bool] | None) -> Hit:
    try:
        data, info = _read(path, bound)
        value = _value(data, ttl, valid)
    except (FileNotFoundError, NotADirectoryError):
        return Hit()  # nothing stored; a file in the way of a directory is `put`'s to report
    except OSError as exc:
        return Hit(warning=_skipped(exc))
    except ValueError as exc:
        _remove(path)
        return Hit(warning=f"a corrupt cache entry was discarded ({exc}); this answer is fresh")
    if value is None:
        _remove(path)  # expired: removed now rather than at the next sweep
        return Hit()
    _touch(path, info)
    return Hit(value)


def put(namespace: str, key: object, value: object, ttl: float) -> str | None:
    """Store `value` (JSON, already free of secrets) for `ttl` seconds; a warning if it was not."""
    if ttl <= 0 or value is None:
        return None
    bound = _bound_bytes()
    now = time.time()
    data = compact({"stored": now, "value": value})
    if len(data) > bound * _KEEP_SHARE:
        return None  # it would be the first thing evicted
    if (redis := _redis()) is not None:
        if len(data) > MAX_SHARED_ENTRY:
            return None  # more than any machine reads back from Redis
        if redis.write("cache", f"{namespace}:{_digest(key)}", data.decode(), ttl):
            return None
        return _files_put(namespace, key, data, now + ttl, bound) or redis.why()
    return _files_put(namespace, key, data, now + ttl, bound)


def _files_put(namespace: str, key: object, data: bytes, expires: float, bound: int) -> str | None:
    root = cache_dir()
    if distrust := untrusted(root / namespace):
        return distrust
    try:
        _store(root, namespace, _digest(key), data, expires)
    except OSError as exc:
        return _skipped(exc)
    try:
        _account(root, len(data), bound)
    except OSError as exc:
        return f"the cache at {root} could not be kept to its size bound ({exc.strerror or exc})"
    return None


def clear() -> Path:
    """Remove the whole cache (and what Redis holds of it); returns the directory."""
    import shutil

    if (redis := _redis()) is not None:
        while redis.clear("cache"):  # a thousand at a time
            pass

    root = cache_dir()
    # Renamed first: writers running meanwhile start a new cache instead of racing the removal.
    doomed = root.with_name(f".{root.name}.{os.getpid()}.cleared")
    try:
        root.rename(doomed)
    except FileNotFoundError:
        return root
    if doomed.is_dir():
        shutil.rmtree(doomed)
    else:
        doomed.unlink()
    return root


def warnings(*messages: str | None) -> list[dict[str, str]]:
    """The answer's `warnings` entries for what `get` and `put` said, once each."""
    unique = dict.fromkeys(m for m in messages if m)
    return [{"code": "CACHE", "message": m} for m in unique]


def untrusted(directory: Path) -> str | None:
    """Why the cache must not be used, when the cache directory (or `directory` in it) is
    another user's or open to others: entries planted there would be served as cached.

    The user's own directory that others may write to is closed (0700) instead: entries they
    planted meanwhile are theirs, and `_read` discards what is not the user's.
    """
    root = cache_dir()
    for place in (root, directory) if directory != root else (root,):
        try:
            info = place.stat()
        except OSError:
            continue  # not there yet (made 0700 when written), or reported when used
        if info.st_uid != os.geteuid():
            return f"the cache at {root} was skipped: {place} belongs to another user"
        if info.st_mode & 0o022:
            try:
                place.chmod(stat.S_IMODE(info.st_mode) & 0o700)
            except OSError as exc:
                why = f"{place} is writable by others and could not be closed ({exc.strerror})"
                return f"the cache at {root} was skipped: {why}"
    return None


def _redis() -> Any:
    """The Redis store, when IKIGAI_WEB_REDIS_URL names one that works
    (ikigai_web/common/state.py)."""
    if not load().redis_url:
        return None  # no import: the files are the default
    from ikigai_web.common.state import shared

    return shared()


def _redis_lookup(
    redis: Any,
    namespace: str,
    key: object,
    limits: tuple[int, float],
    valid: Callable[[Any], bool] | None,
) -> Hit:
    from ikigai_web.common.state import Tampered

    bound, ttl = limits
    name = f"{namespace}:{_digest(key)}"
    try:
        raw = redis.read("cache", name, min(bound, MAX_SHARED_ENTRY))
    except Tampered as exc:  # the fresh answer is written over it
        return Hit(warning=f"a cache entry in Redis was ignored: {exc}; this answer is fresh")
    if raw is None:
        return Hit()
    try:
        return Hit(_value(raw.encode(), ttl, valid))
    except ValueError as exc:
        redis.delete("cache", name)
        return Hit(warning=f"a corrupt cache entry was discarded ({exc}); this answer is fresh")


def _skipped(exc: OSError) -> str:
    # Named by the cache's directory, not the file: the same cause reads the same in `get`
    # and `put`, so the answer says it once.
    return f"the cache at {cache_dir()} was skipped ({exc.strerror or exc})"


def _bound_bytes() -> int:
    return load().cache_max_mb * _MB


# --- reading ---------------------------------------------------------------------------------


def _entry_path(namespace: str, key: object) -> Path:
    digest = _digest(key)
    return cache_dir() / namespace / digest


def _digest(key: object) -> str:
    return hashlib.sha256(compact(key, sort_keys=True)).hexdigest()


def _read(path: Path, most: int) -> tuple[bytes, os.stat_result]:
    """The entry's bytes; ValueError when it is no file, larger than any entry can be, or
    not the user's own (planted while the directory was open to others)."""
    data, info = read_regular(path, most)
    if info.st_uid != os.geteuid():
        raise ValueError("written by another user")
    return data, info


def _not_json(constant: str) -> None:
    """NaN and Infinity, which the standard library reads but no cache entry holds."""
    raise ValueError(constant)


def _value(data: bytes, ttl: float, valid: Callable[[Any], bool] | None) -> Any:
    """The entry's value, None once it has expired; ValueError saying why it is unusable."""
    try:
        entry = parsed(partial(json.loads, parse_constant=_not_json), data)
    except ValueError as exc:  # not JSON, not UTF-8, or nested too deeply
        why = str(exc) if str(exc).startswith("nested") else "not JSON: truncated or overwritten"
        raise ValueError(why) from None
    stored = entry.get("stored") if isinstance(entry, dict) else None
    if not isinstance(stored, int | float) or isinstance(stored, bool) or "value" not in entry:
        raise ValueError("not a cache entry")
    now = time.time()
    if stored > now:
        raise ValueError("stored in the future")
    if stored + ttl <= now:
        return None
    if entry["value"] is None or (valid is not None and not valid(entry["value"])):
        raise ValueError("not what this tool stores")
    return entry["value"]


def _touch(path: Path, info: os.stat_result) -> None:
    """Mark a hit as the latest use (atime), keeping the expiry (mtime) that sweeps read."""
    now = time.time()
    if info.st_atime > now - _RECENT:
        return  # the read itself set it (relatime, the default, does: the mtime is ahead)
    with contextlib.suppress(OSError):
        os.utime(path, (now, info.st_mtime))


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


# --- writing ---------------------------------------------------------------------------------


def _store(root: Path, namespace: str, name: str, data: bytes, expires: float) -> None:
    try:
        _write(root / namespace / name, data, expires)
    except (FileNotFoundError, NotADirectoryError):
        # Directories are made, or found wanting, only when a write needs them.
        _make_private(root)
        _make_private(root / namespace)
        _write(root / namespace / name, data, expires)


def _make_private(path: Path, *, tighten: bool = True) -> None:
    """A 0700 directory at `path`, whatever the umask; an existing one is only tightened.

    Missing parents are made 0700 too (the umask could leave them unwritable), while parents
    that exist are the user's, and left alone.
    """
    try:
        path.mkdir(mode=0o700)
    except FileNotFoundError:
        _make_private(path.parent, tighten=False)
        _make_private(path, tighten=tighten)
    except FileExistsError:
        info = path.stat()
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(0, f"{path} is a file, not a directory") from None
        if tighten:
            _tighten(path, info)
    else:
        path.chmod(0o700)  # mkdir's mode went through the umask


def _tighten(path: Path, info: os.stat_result) -> None:
    """Take group and other permissions away: entries hold fetched pages."""
    if info.st_mode & 0o077:
        path.chmod(stat.S_IMODE(info.st_mode) & 0o700)


def _open_private(path: Path, flags: int) -> int:
    """A file descriptor on `path`, created 0600 whatever the umask."""
    # Non-blocking: a FIFO in the ledger's place must not hang the call.
    fd = os.open(path, flags | os.O_CREAT | os.O_NONBLOCK, 0o600)
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
    except OSError:
        os.close(fd)
        raise
    return fd


def _write(path: Path, data: bytes, expires: float) -> None:
    temp = path.with_name(f"{path.name}.{os.getpid()}.{os.urandom(4).hex()}{_TEMP_SUFFIX}")
    try:
        with os.fdopen(_open_private(temp, os.O_WRONLY | os.O_EXCL), "wb") as fh:
            fh.write(data)
        os.utime(temp, (time.time(), expires))
        temp.replace(path)
    except BaseException:
        _remove(temp)
        raise


def _account(root: Path, size: int, bound: int) -> None:
    """Count what was written; sweep once enough was, or enough time passed."""
    # O_APPEND lets every process add to the count at once without a lock.
    fd = _open_private(root / _LEDGER, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(fd, b"." * (size // 1024 + 1))
    finally:
        os.close(fd)
    if _sweep_due(root, bound):
        _sweep(root, bound)


def _sweep_due(root: Path, bound: int) -> bool:
    try:
        written = (root / _LEDGER).stat().st_size * 1024
        last = (root / _SWEEP_LOCK).stat().st_mtime
    except FileNotFoundError:
        return True
    return written >= bound // _SWEEP_SHARE or time.time() - last >= _SWEEP_EVERY


# --- sweeping --------------------------------------------------------------------------------


def _sweep(root: Path, bound: int) -> None:
    """Drop expired entries, then the least recently used ones down to 90% of `bound`.

    One process sweeps at a time; the others skip it rather than wait.
    """
    import fcntl  # POSIX only, like the hosts these tools run under

    fd = _open_private(root / _SWEEP_LOCK, os.O_WRONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return
        # Reset first: what is written during the scan counts towards the next sweep.
        os.truncate(root / _LEDGER, 0)
        _evict(root, int(bound * _KEEP_SHARE))
        now = time.time()
        os.utime(fd, (now, now))
    finally:
        os.close(fd)


def _evict(root: Path, keep: int) -> None:
    now = time.time()
    kept: list[tuple[float, int, Path]] = []
    _tighten(root, root.stat())  # made by an older version, or loosened by hand
    for path, info in _files(root):
        if _expired(path, info, now):
            _remove(path)
        elif not path.name.endswith(_TEMP_SUFFIX):  # a write in progress is not evictable
            kept.append((info.st_atime, info.st_size, path))
    total = sum(size for _, size, _ in kept)
    for _, size, path in sorted(kept):
        if total <= keep:
            break
        _remove(path)
        total -= size


def _files(root: Path) -> list[tuple[Path, os.stat_result]]:
    """Every regular file of every namespace, with its `stat`, made private on the way."""
    with os.scandir(root) as found:
        spaces = [Path(f.path) for f in found if f.is_dir(follow_symlinks=False)]
    return [item for space in spaces for item in _files_in(space)]


def _files_in(folder: Path) -> list[tuple[Path, os.stat_result]]:
    out = []
    # Any of these may be removed meanwhile by another process: it is then left out.
    with contextlib.suppress(OSError), os.scandir(folder) as found:
        _tighten(folder, folder.stat())
        for entry in found:
            with contextlib.suppress(OSError):
                info = entry.stat(follow_symlinks=False)
                if stat.S_ISREG(info.st_mode):
                    _tighten(Path(entry.path), info)
                    out.append((Path(entry.path), info))
    return out


def _expired(path: Path, info: os.stat_result, now: float) -> bool:
    if path.name.endswith(_TEMP_SUFFIX):
        return info.st_ctime < now - _STALE_TEMP
    return info.st_mtime <= now
