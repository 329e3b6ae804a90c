"""State the tools share between processes, and between machines: small JSON values, each in
a space under a short key, kept for a while (pacing budgets, keys set aside, what the fallback
tool remembers).

Local files are the default, with nothing to run: `state_dir()/<space>/<digest of the key>`,
each `{"key", "expires", "value"}`, written to a temporary file and renamed into place, so a
reader sees a whole entry or none and takes no lock; directories 0700, files 0600. A
read-modify-write (a pacing budget's turn) holds an fcntl lock on the entry's `.lock` file.

When IKIGAI_WEB_REDIS_URL names a Redis server, entries live there instead, under
`ikigai-web-tools:<space>:<key>`, and a turn is taken by one Lua script on the server's clock,
so every machine pointed at it shares one budget.

Best effort: a store that fails is an empty store plus a warning for the answer, never a failed
search. Redis that is down, slow or refuses the password costs one short timeout; the process
then uses local files, and the local files remember for a while that Redis failed, so the next
calls go straight to them (with the same warning) instead of paying the timeout again.

Keys are built by the caller and never hold a secret: an API key is named by `key_id`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import time
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ikigai_web.common.settings import load, state_dir

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

SETTING = "IKIGAI_WEB_REDIS_URL"
PREFIX = "ikigai-web-tools"
MAX_VALUE = 64 * 1024  # bytes of one entry: a value is a few numbers or words
MAX_SCAN = 1000  # entries `scan` and `clear` visit in one space
CONNECT_TIMEOUT = 0.5  # seconds: Redis on a LAN answers in a millisecond
READ_TIMEOUT = 0.5
REDIS_DOWN_FOR = 30.0  # seconds the local files remember that Redis failed
LOCK_WAIT = 2.0  # seconds a turn waits for another process's lock: it is held for microseconds
_SPACE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_TEMP_SUFFIX = ".tmp"
_LOCK_SUFFIX = ".lock"


class Turn(NamedTuple):
    """What `reserve` gave: the seconds until the turn, and whether it was taken."""

    wait: float
    granted: bool


class Store(Protocol):
    """Where the state lives: local files or Redis, the same for every caller."""

    warnings: list[dict[str, str]]

    def get(self, space: str, key: str) -> Any | None: ...
    def put(self, space: str, key: str, value: Any, ttl: float) -> None: ...
    def delete(self, space: str, key: str) -> None: ...
    def scan(self, space: str) -> list[tuple[str, Any]]: ...
    def clear(self, space: str) -> int: ...
    def reserve(
        self,
        space: str,
        key: str,
        interval: float,
        most: float,
        after: float = 0.0,
        burst: int = 1,
    ) -> Turn: ...


def key_id(secret: str) -> str:
    """A one-way name for an API key: state is kept under it, never under the key."""
    return hashlib.sha256(f"{PREFIX} key:{secret}".encode()).hexdigest()[:16]


_stores: dict[tuple[int, str, str], Store] = {}


def store() -> Store:
    """The user's store, one per process (a forked call gets its own Redis connection)."""
    url, root = load().redis_url, state_dir()
    slot = (os.getpid(), url, str(root))
    if slot not in _stores:
        _stores[slot] = _open(url, root)
    return _stores[slot]


def shared() -> Shared | None:
    """The Redis store, when the setting names one and it has not failed in this process:
    where the cache is held too."""
    found = store()
    return found if isinstance(found, Shared) and found.up else None


def _open(url: str, root: Path) -> Store:
    local = Files(root)
    if not url:
        return local
    from ikigai_web.net.http import register_url_login

    register_url_login(url)  # the password in it is masked wherever it could show
    return Shared(url, local)


def _check(space: str) -> None:
    if not _SPACE.match(space):
        raise ValueError(f"no such space: {space!r}")


def _now() -> float:
    return time.time()


def _turn(
    stored: object, now: float, interval: float, most: float, after: float, burst: int
) -> tuple[Turn, float]:
    """A budget's next turn and the budget after it is taken (the generic cell rate
    algorithm): the stored value is the time the next turn is free; taking one moves it on
    by `interval`, and up to `burst` turns may be taken at once while it is not ahead of now
    by more than the burst allows. `after` holds every turn back until now + after."""
    free = stored if isinstance(stored, int | float) and not isinstance(stored, bool) else 0.0
    base = max(free, now)
    start = max(base - (burst - 1) * interval, now + after, now)
    wait = start - now
    return Turn(wait, wait <= most), max(base, start) + interval


# --- local files ----------------------------------------------------------------------------


class Files:
    """Entries as files under `root`, shared by every process of the user on this machine."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.warnings: list[dict[str, str]] = []

    def get(self, space: str, key: str) -> Any | None:
        _check(space)
        try:
            return self._read(self._path(space, key), key)
        except OSError as exc:
            self._failed(exc)
            return None

    def put(self, space: str, key: str, value: Any, ttl: float) -> None:
        _check(space)
        if ttl <= 0:
            self.delete(space, key)
            return
        entry = {"key": key, "expires": _now() + ttl, "value": value}
        try:
            self._write(self._path(space, key), json.dumps(entry).encode())
        except OSError as exc:
            self._failed(exc)

    def delete(self, space: str, key: str) -> None:
        _check(space)
        try:
            self._path(space, key).unlink()
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._failed(exc)

    def scan(self, space: str) -> list[tuple[str, Any]]:
        _check(space)
        found = []
        for path in self._entries(space):
            with contextlib.suppress(OSError):
                entry = self._entry(path)
                if entry is not None:
                    found.append((entry["key"], entry["value"]))
        return found

    def clear(self, space: str) -> int:
        _check(space)
        removed = 0
        for path in self._entries(space):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
                removed += 1
        return removed

    def reserve(
        self,
        space: str,
        key: str,
        interval: float,
        most: float,
        after: float = 0.0,
        burst: int = 1,
    ) -> Turn:
        """The next turn of the budget `key` (`_turn`), taken when its wait is at most `most`
        seconds; atomic across this user's processes."""
        _check(space)
        path = self._path(space, key)
        try:
            with self._locked(path):
                now = _now()
                stored = self._read(path, key)
                turn, value = _turn(stored, now, interval, most, after, burst)
                if turn.granted:
                    entry = {"key": key, "expires": value + 60.0, "value": value}
                    self._write(path, json.dumps(entry).encode())
        except OSError as exc:
            self._failed(exc)
            return Turn(0.0, granted=True)  # no budget to keep: the provider's answer decides
        return turn

    # The parts.

    def _path(self, space: str, key: str) -> Path:
        return self.root / space / hashlib.sha256(key.encode()).hexdigest()[:32]

    def _read(self, path: Path, key: str) -> Any | None:
        try:
            entry = self._entry(path)
        except FileNotFoundError:
            return None
        return entry["value"] if entry is not None and entry["key"] == key else None

    def _entry(self, path: Path) -> dict[str, Any] | None:
        """The live entry in `path`; None (and the file removed) when it expired or is no
        entry. FileNotFoundError passes through."""
        from ikigai_web.common.files import Unreadable, read_regular

        try:
            data, info = read_regular(path, MAX_VALUE)
            entry = json.loads(data) if info.st_uid == os.geteuid() else None
        except (Unreadable, ValueError):
            entry = None
        usable = isinstance(entry, dict) and isinstance(entry.get("key"), str)
        expires = entry.get("expires") if usable and isinstance(entry, dict) else None
        if not isinstance(expires, int | float) or expires <= _now():
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return entry if isinstance(entry, dict) and "value" in entry else None

    def _entries(self, space: str) -> list[Path]:
        try:
            with os.scandir(self.root / space) as found:
                names = [e.path for e in found if not e.name.endswith((_TEMP_SUFFIX, _LOCK_SUFFIX))]
        except OSError:
            return []
        from pathlib import Path

        return [Path(name) for name in names[:MAX_SCAN]]

    def _write(self, path: Path, data: bytes) -> None:
        if len(data) > MAX_VALUE:
            raise OSError(0, f"an entry of {len(data):,} bytes is more than state holds")
        temp = path.with_name(f"{path.name}.{os.getpid()}.{os.urandom(4).hex()}{_TEMP_SUFFIX}")
        try:
            fd = self._open(temp, os.O_WRONLY | os.O_EXCL)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            temp.replace(path)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise

    def _open(self, path: Path, flags: int) -> int:
        """A descriptor on `path`, created 0600 in a 0700 directory whatever the umask."""
        try:
            fd = os.open(path, flags | os.O_CREAT | os.O_NONBLOCK, 0o600)
        except FileNotFoundError:
            _private_dir(path.parent)
            fd = os.open(path, flags | os.O_CREAT | os.O_NONBLOCK, 0o600)
        if stat.S_IMODE(os.fstat(fd).st_mode) != 0o600:
            os.fchmod(fd, 0o600)
        return fd

    @contextlib.contextmanager
    def _locked(self, path: Path) -> Iterator[None]:
        """Hold the entry's lock: another process's read-modify-write waits for this one."""
        import fcntl  # POSIX only, like the hosts these tools run under

        fd = self._open(path.with_name(path.name + _LOCK_SUFFIX), os.O_WRONLY)
        try:
            _lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _failed(self, exc: OSError) -> None:
        message = (
            f"the shared state at {self.root} could not be used ({exc.strerror or exc}); "
            "requests were not paced across processes"
        )
        if all(w["message"] != message for w in self.warnings):
            self.warnings.append({"code": "STATE", "message": message})


def _lock(fd: int, flags: int) -> None:
    """flock, waiting at most LOCK_WAIT: a holder that never lets go (stopped, not dead: a
    dead one's lock goes with it) must not stall a call."""
    import fcntl

    give_up = time.monotonic() + LOCK_WAIT
    while True:
        try:
            fcntl.flock(fd, flags)
        except BlockingIOError:
            if time.monotonic() > give_up:
                raise OSError(0, "another process held its lock too long") from None
            time.sleep(0.001)
        else:
            return


def _private_dir(path: Path) -> None:
    """`path` as a 0700 directory, its missing parents too, whatever the umask."""
    try:
        path.mkdir(mode=0o700)
    except FileNotFoundError:
        _private_dir(path.parent)
        _private_dir(path)  # another process may make it meanwhile
        return
    except FileExistsError:
        if not path.is_dir():
            raise NotADirectoryError(0, f"{path} is a file, not a directory") from None
        return
    path.chmod(0o700)


# --- Redis ----------------------------------------------------------------------------------

# A turn (`_turn`) on the server's clock, so machines whose clocks differ share one budget.
# KEYS[1] the budget; ARGV interval, most, after (seconds), burst. Returns {granted, wait},
# the wait as a string (Redis turns Lua numbers into integers).
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval = tonumber(ARGV[1])
local base = math.max(tonumber(redis.call('GET', KEYS[1]) or '0') or 0, now)
local start = math.max(base - (tonumber(ARGV[4]) - 1) * interval, now + tonumber(ARGV[3]), now)
local wait = start - now
if wait > tonumber(ARGV[2]) then return {0, string.format('%.6f', wait)} end
local value = math.max(base, start) + interval
redis.call('SET', KEYS[1], string.format('%.6f', value), 'PX',
           math.ceil((value - now + 60) * 1000))
return {1, string.format('%.6f', wait)}
"""


class Shared:
    """Entries in one Redis server for every machine pointed at it; the local files once it
    fails, for the rest of the process."""

    def __init__(self, url: str, local: Files) -> None:
        self.url = url
        self.local = local
        self.warnings = local.warnings  # one list: the answer reads either
        self._client: Any = None
        down = local.get("redis", _digest(url))
        self._down = down.get("why") if isinstance(down, dict) else None
        if isinstance(self._down, str):
            self._warn(self._down, remembered=True)

    def get(self, space: str, key: str) -> Any | None:
        _check(space)
        raw = self._do(lambda r: r.get(_name(space, key)))
        if raw is _Local:
            return self.local.get(space, key)
        return _loaded(raw)

    def put(self, space: str, key: str, value: Any, ttl: float) -> None:
        _check(space)
        data = json.dumps(value)
        if ttl <= 0 or len(data) > MAX_VALUE:
            self.delete(space, key)
            return
        millis = max(1, round(ttl * 1000))
        if self._do(lambda r: r.set(_name(space, key), data, px=millis)) is _Local:
            self.local.put(space, key, value, ttl)

    def delete(self, space: str, key: str) -> None:
        _check(space)
        if self._do(lambda r: r.delete(_name(space, key))) is _Local:
            self.local.delete(space, key)

    def scan(self, space: str) -> list[tuple[str, Any]]:
        _check(space)
        found = self._do(lambda r: _scan(r, space))
        return self.local.scan(space) if found is _Local else list(found)

    def clear(self, space: str) -> int:
        _check(space)
        removed = self._do(lambda r: _clear(r, space))
        return self.local.clear(space) if removed is _Local else int(removed)

    def reserve(
        self,
        space: str,
        key: str,
        interval: float,
        most: float,
        after: float = 0.0,
        burst: int = 1,
    ) -> Turn:
        _check(space)
        args = (f"{interval:.6f}", f"{min(most, 1e9):.6f}", f"{after:.6f}", str(burst))
        said = self._do(lambda r: r.eval(_RESERVE, 1, _name(space, key), *args))
        if said is _Local:
            return self.local.reserve(space, key, interval, most, after, burst)
        granted, wait = said
        return Turn(float(wait), granted=bool(granted))

    @property
    def up(self) -> bool:
        return self._down is None

    def read(self, space: str, key: str, most: int) -> str | None:
        """An entry too large for `get` (a cached page) as stored; None when absent, larger
        than `most` characters, or the server failed (`up` then says so)."""
        _check(space)
        raw = self._do(lambda r: r.get(_name(space, key)))
        return raw if isinstance(raw, str) and len(raw) <= most else None

    def write(self, space: str, key: str, data: str, ttl: float) -> bool:
        """Store `data` for `ttl` seconds; False when the server failed."""
        _check(space)
        millis = max(1, round(ttl * 1000))
        return self._do(lambda r: r.set(_name(space, key), data, px=millis)) is not _Local

    def why(self) -> str:
        """What the warning says about the server, once it failed."""
        return self.warnings[-1]["message"] if self.warnings else ""

    # The parts.

    def _do(self, command: Callable[[Any], Any]) -> Any:
        """What `command` gets from the server; `_Local` once the server has failed, for the
        local files to answer instead."""
        if self._down is not None:
            return _Local
        try:
            return command(self._connection())
        except Exception as exc:  # noqa: BLE001 - the client's errors and whatever it lets through
            self._fail(exc)
            return _Local

    def _connection(self) -> Any:
        if self._client is None:
            import redis  # the optional extra, on this path only
            from redis.backoff import NoBackoff
            from redis.retry import Retry

            self._client = redis.Redis.from_url(
                self.url,
                socket_connect_timeout=CONNECT_TIMEOUT,
                socket_timeout=READ_TIMEOUT,
                retry=Retry(NoBackoff(), 0),
                health_check_interval=0,
                decode_responses=True,
            )
        return self._client

    def _fail(self, exc: Exception) -> None:
        self._down = _why(exc)
        self._warn(self._down, remembered=False)
        with contextlib.suppress(Exception):
            self._client.close()
        self.local.put("redis", _digest(self.url), {"why": self._down}, REDIS_DOWN_FOR)

    def _warn(self, why: str, *, remembered: bool) -> None:
        from ikigai_web.common.redact import printable_url

        when = f" within the last {REDIS_DOWN_FOR:g} s" if remembered else ""
        where = printable_url(self.url)
        self.warnings.append({
            "code": "STATE",
            "message": f"the Redis server at {where} ({SETTING}) {why}{when}; this call used "
            "this machine's local files instead, so its pacing and memory were not shared "
            "with other machines. Check that Redis runs and the URL and password are right.",
        })  # fmt: skip


class _LocalType:
    """The marker `_do` returns when the local files must answer."""


_Local = _LocalType()


def _why(exc: Exception) -> str:
    try:
        import redis.exceptions as errors
    except ImportError:
        return (
            "could not be used: the redis extra is not installed (install ikigai-web-tools[redis])"
        )
    if isinstance(exc, errors.AuthenticationError | errors.AuthorizationError):
        return "refused the password"
    if isinstance(exc, errors.TimeoutError):
        return f"did not answer within {READ_TIMEOUT:g} s"
    if isinstance(exc, errors.ConnectionError):
        return "could not be reached"
    return f"failed ({type(exc).__name__})"


def _digest(url: str) -> str:
    return hashlib.sha256(url.encode()).hexdigest()[:32]


def _name(space: str, key: str) -> str:
    return f"{PREFIX}:{space}:{key}"


def _loaded(raw: object) -> Any | None:
    if not isinstance(raw, str) or len(raw) > MAX_VALUE:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _matching(space: str) -> str:
    return f"{PREFIX}:{space}:*"


def _names(r: Any, space: str) -> list[str]:
    from itertools import islice

    return list(islice(r.scan_iter(_matching(space), count=200), MAX_SCAN))


def _scan(r: Any, space: str) -> list[tuple[str, Any]]:
    names = _names(r, space)
    values = r.mget(names) if names else []
    head = len(_name(space, ""))
    found = [(n[head:], _loaded(v)) for n, v in zip(names, values, strict=True)]
    return [(k, v) for k, v in found if v is not None]


def _clear(r: Any, space: str) -> int:
    names = _names(r, space)
    return int(r.delete(*names)) if names else 0
