"""State the tools share between processes, and between machines: small JSON values, each in
a space under a short key, kept for a while (pacing budgets, keys set aside, what the fallback
tool remembers).

Local files are the default, with nothing to run: `state_dir()/<space>/<digest of the key>`,
each `{"key", "expires", "value"}`, written to a temporary file and renamed into place, so a
reader sees a whole entry or none and takes no lock; directories 0700, files 0600. A
read-modify-write (a pacing budget's turn) holds an fcntl lock on the entry's `.lock` file.
Nothing there is trusted that could have been planted: the directories and files are opened
without following a symbolic link and used only when they are this user's own, of the right
type; anything else is refused with a `STATE` warning, never written through.

When IKIGAI_WEB_REDIS_URL names a Redis server, entries live there instead, under
`<IKIGAI_WEB_REDIS_PREFIX>:<space>:<key>`, and a turn is taken by one Lua script on the
server's clock, so every machine pointed at it shares one budget. Whoever else can write to
that server is not trusted either (`Shared`): each value is read only after its size is
checked, on the server; with IKIGAI_WEB_REDIS_SECRET each carries an HMAC over its name and
value, and one without a valid one is ignored with a warning; a budget is never further ahead
than its caller allows, whatever it holds.

Best effort: a store that fails is an empty store plus a warning for the answer, never a failed
search. Redis that is down, slow or refuses the password costs one short timeout; the process
then uses local files, and the local files remember for a while that Redis failed, so the next
calls go straight to them (with the same warning) instead of paying the timeout again.

Keys are built by the caller and never hold a secret: an API key is named by `key_id`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import hmac
import json
import math
import os
import re
import stat
import time
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeGuard

from ikigai_web.common.settings import load, state_dir

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

SETTING = "IKIGAI_WEB_REDIS_URL"
SECRET_SETTING = "IKIGAI_WEB_REDIS_SECRET"  # noqa: S105 - the setting's name, not its value
MAX_VALUE = 16 * 1024  # bytes of one entry: a value is a few numbers or words
MAX_SCAN = 1000  # entries `scan` and `clear` visit in one space
SCAN_BATCH = 100  # entries read from Redis at once by `scan`
CONNECT_TIMEOUT = 0.5  # seconds: Redis on a LAN answers in a millisecond
READ_TIMEOUT = 0.5
REDIS_DOWN_FOR = 30.0  # seconds the local files remember that Redis failed
LOCK_WAIT = 2.0  # seconds a turn waits for another process's lock: it is held for microseconds
# The furthest ahead a budget may lie when its caller names no ceiling: the longest hold
# (a month, ikigai_web/search/registry.py) and a day of turns.
CEILING = 32 * 24 * 3600.0
_SPACE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_TEMP_SUFFIX = ".tmp"
_LOCK_SUFFIX = ".lock"
_LAYOUT = b"1"  # the version of a Redis value's layout: `1:<tag>:<payload>`
# Key ids without a secret: keyed with this fixed context rather than a bare hash.
_ID_CONTEXT = b"ikigai-web-tools key id v2"


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
    def clear(self, space: str, start: str = "") -> int: ...
    def reserve(
        self,
        space: str,
        key: str,
        interval: float,
        most: float,
        after: float = 0.0,
        burst: int = 1,
        ceiling: float = CEILING,
    ) -> Turn: ...


def key_id(secret: str) -> str:
    """A one-way name for an API key (or a query): state is kept under it, never under the
    key. Keyed (HMAC-SHA256) with IKIGAI_WEB_REDIS_SECRET, so that whoever reads the shared
    state cannot confirm a key they guess; without one, with a fixed context, so the name is
    no plain hash of the key that a list of hashes could match (but anyone holding a
    candidate key can still compute it: set a secret where others can read the state)."""
    fleet = load().redis_secret
    keyed = _derived(fleet, b"key ids") if fleet else _ID_CONTEXT
    return hmac.new(keyed, secret.encode(), hashlib.sha256).hexdigest()[:16]


def _derived(secret: str, purpose: bytes) -> bytes:
    """A key of its own for each use of the fleet's secret."""
    return hmac.new(secret.encode(), b"ikigai-web-tools " + purpose, hashlib.sha256).digest()


_stores: dict[tuple[Any, ...], Store] = {}


def store() -> Store:
    """The user's store, one per process (a forked call gets its own Redis connection)."""
    settings = load()
    url, root = settings.redis_url, state_dir()
    fleet = (settings.redis_prefix, settings.redis_secret) if url else ("", "")
    slot = (os.getpid(), url, str(root), *fleet)
    if slot not in _stores:
        _stores[slot] = _open(url, root, *fleet)
    return _stores[slot]


def shared() -> Shared | None:
    """The Redis store, when the setting names one and it has not failed in this process:
    where the cache is held too."""
    found = store()
    return found if isinstance(found, Shared) and found.up else None


def _open(url: str, root: Path, prefix: str, secret: str) -> Store:
    local = Files(root)
    if not url:
        return local
    from ikigai_web.common.redact import register_secret
    from ikigai_web.net.http import register_url_login

    register_url_login(url)  # the password in it is masked wherever it could show
    register_secret(secret)
    return Shared(url, local, prefix, secret)


def _check(space: str) -> None:
    if not _SPACE.match(space):
        raise ValueError(f"no such space: {space!r}")


def _now() -> float:
    return time.time()


def _turn(
    stored: object,
    now: float,
    interval: float,
    most: float,
    after: float,
    burst: int,
    ceiling: float = CEILING,
) -> tuple[Turn, float]:
    """A budget's next turn and the budget after it is taken (the generic cell rate
    algorithm): the stored value is the time the next turn is free; taking one moves it on
    by `interval`, and up to `burst` turns may be taken at once while it is not ahead of now
    by more than the burst allows. `after` holds every turn back until now + after. A stored
    time further ahead than `ceiling` seconds (no caller puts one there) counts as that far."""
    free = stored if _finite(stored) else 0.0
    base = max(min(free, now + ceiling), now)
    start = max(base - (burst - 1) * interval, now + after, now)
    wait = start - now
    return Turn(wait, wait <= most), max(base, start) + interval


def _finite(value: object) -> TypeGuard[float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


# --- local files ----------------------------------------------------------------------------


class Refused(OSError):  # noqa: N818 - a state of the file, as messages say it
    """A file or directory of the state that is not what it must be: a symbolic link, another
    user's, or of another type. Never written through."""


class Files:
    """Entries as files under `root`, shared by every process of the user on this machine."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.warnings: list[dict[str, str]] = []

    def get(self, space: str, key: str) -> Any | None:
        _check(space)
        try:
            with self._space(space, make=False) as folder:
                return self._read(folder, _file_name(key), key)
        except FileNotFoundError:
            return None
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
            with self._space(space, make=True) as folder:
                self._write(folder, _file_name(key), json.dumps(entry).encode())
        except OSError as exc:
            self._failed(exc)

    def delete(self, space: str, key: str) -> None:
        _check(space)
        try:
            with self._space(space, make=False) as folder:
                os.unlink(_file_name(key), dir_fd=folder)
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._failed(exc)

    def scan(self, space: str) -> list[tuple[str, Any]]:
        _check(space)
        found = []
        try:
            with self._space(space, make=False) as folder:
                for name in _entries(folder):
                    with contextlib.suppress(OSError):
                        entry = self._entry(folder, name)
                        if entry is not None:
                            found.append((entry["key"], entry["value"]))
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._failed(exc)
        return found

    def clear(self, space: str, start: str = "") -> int:
        """Remove the entries of `space` whose key starts with `start` (at most MAX_SCAN of
        them): how many there were."""
        _check(space)
        removed = 0
        try:
            with self._space(space, make=False) as folder:
                for name in _entries(folder):
                    with contextlib.suppress(FileNotFoundError):
                        if start and not self._starts(folder, name, start):
                            continue
                        os.unlink(name, dir_fd=folder)
                        removed += 1
        except FileNotFoundError:
            pass
        except OSError as exc:
            self._failed(exc)
        return removed

    def reserve(
        self,
        space: str,
        key: str,
        interval: float,
        most: float,
        after: float = 0.0,
        burst: int = 1,
        ceiling: float = CEILING,
    ) -> Turn:
        """The next turn of the budget `key` (`_turn`), taken when its wait is at most `most`
        seconds; atomic across this user's processes."""
        _check(space)
        name = _file_name(key)
        try:
            with self._space(space, make=True) as folder, self._locked(folder, name):
                now = _now()
                stored = self._read(folder, name, key)
                turn, value = _turn(stored, now, interval, most, after, burst, ceiling)
                if turn.granted:
                    entry = {"key": key, "expires": value + 60.0, "value": value}
                    self._write(folder, name, json.dumps(entry).encode())
        except OSError as exc:
            self._failed(exc)
            return Turn(0.0, granted=True)  # no budget to keep: the provider's answer decides
        return turn

    def path(self, space: str, key: str) -> Path:
        """Where the entry `key` of `space` is kept."""
        return self.root / space / _file_name(key)

    # The parts.

    @contextlib.contextmanager
    def _space(self, space: str, *, make: bool) -> Iterator[int]:
        """A descriptor on the space's directory, each step from the state directory opened
        without following a link and checked (`_opened_dir`); made 0700 when missing and
        `make`, else FileNotFoundError."""
        try:
            root = _opened_dir(self.root, None)
        except FileNotFoundError:
            if not make:
                raise
            _private_dir(self.root)
            root = _opened_dir(self.root, None)
        try:
            try:
                folder = _opened_dir(space, root, shown=self.root / space)
            except FileNotFoundError:
                if not make:
                    raise
                with contextlib.suppress(FileExistsError):  # another process made it meanwhile
                    os.mkdir(space, 0o700, dir_fd=root)
                folder = _opened_dir(space, root, shown=self.root / space)
        finally:
            os.close(root)
        try:
            yield folder
        finally:
            os.close(folder)

    def _starts(self, folder: int, name: str, start: str) -> bool:
        """Whether the entry in `name` is live and its key starts with `start`."""
        try:
            entry = self._entry(folder, name)
        except FileNotFoundError:
            raise
        except OSError:
            return False
        return entry is not None and str(entry["key"]).startswith(start)

    def _read(self, folder: int, name: str, key: str) -> Any | None:
        try:
            entry = self._entry(folder, name)
        except FileNotFoundError:
            return None
        return entry["value"] if entry is not None and entry["key"] == key else None

    def _entry(self, folder: int, name: str) -> dict[str, Any] | None:
        """The live entry in `name`; None (and the file removed) when it expired or is no
        entry. FileNotFoundError passes through; a link or another user's file is Refused."""
        from ikigai_web.common.files import Unreadable, read_regular

        try:
            data, info = read_regular(name, MAX_VALUE, dir_fd=folder, follow=False)
        except Unreadable:
            data, info = b"", None
        except OSError as exc:
            raise _refused(exc, self.root, name) from None
        if info is not None and info.st_uid != os.geteuid():
            raise Refused(errno.EPERM, f"{self.root}/…/{name} belongs to another user")
        try:
            entry = json.loads(data) if data else None
        except ValueError:
            entry = None
        usable = isinstance(entry, dict) and isinstance(entry.get("key"), str)
        expires = entry.get("expires") if usable and isinstance(entry, dict) else None
        if not isinstance(expires, int | float) or expires <= _now():
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=folder)
            return None
        return entry if isinstance(entry, dict) and "value" in entry else None

    def _write(self, folder: int, name: str, data: bytes) -> None:
        if len(data) > MAX_VALUE:
            raise OSError(0, f"an entry of {len(data):,} bytes is more than state holds")
        temp = f"{name}.{os.getpid()}.{os.urandom(4).hex()}{_TEMP_SUFFIX}"
        try:
            fd = self._open(folder, temp, os.O_WRONLY | os.O_EXCL)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            # A rename replaces whatever has the name, a link included: never followed.
            os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise

    def _open(self, folder: int, name: str, flags: int) -> int:
        """A descriptor on `name` in `folder`, created 0600 whatever the umask, never through
        a link; Refused when it is a link, another user's, or no regular file."""
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW, 0o600,
                         dir_fd=folder)  # fmt: skip
        except OSError as exc:
            raise _refused(exc, self.root, name) from None
        try:
            info = os.fstat(fd)
            _owned(info, stat.S_ISREG, f"{self.root}/…/{name}", "a regular file")
            if stat.S_IMODE(info.st_mode) != 0o600:
                os.fchmod(fd, 0o600)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def _locked(self, folder: int, name: str) -> Iterator[None]:
        """Hold the entry's lock: another process's read-modify-write waits for this one."""
        import fcntl  # POSIX only, like the hosts these tools run under

        fd = self._open(folder, name + _LOCK_SUFFIX, os.O_WRONLY)
        try:
            _lock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            yield
        finally:
            os.close(fd)  # closing releases the lock

    def _failed(self, exc: OSError) -> None:
        if isinstance(exc, Refused):
            message = (
                f"the shared state at {self.root} was not used: {exc.strerror}, which it "
                "refuses rather than write through; requests were not paced across "
                "processes. Remove it (or the whole directory: it holds nothing lasting)."
            )
        else:
            message = (
                f"the shared state at {self.root} could not be used ({exc.strerror or exc}); "
                "requests were not paced across processes"
            )
        if all(w["message"] != message for w in self.warnings):
            self.warnings.append({"code": "STATE", "message": message})


def _file_name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:32]


def _entries(folder: int) -> list[str]:
    with os.scandir(folder) as found:
        names = [e.name for e in found if not e.name.endswith((_TEMP_SUFFIX, _LOCK_SUFFIX))]
    return names[:MAX_SCAN]


def _opened_dir(path: Path | str, parent: int | None, shown: Path | None = None) -> int:
    """A descriptor on the directory `path` (in `parent`), its last step not followed if it
    is a link: Refused then, and when it is another user's; closed to others when it is
    the user's and open (an older version, a hand-made one)."""
    where = str(shown or path)
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        fd = os.open(path, flags, dir_fd=parent)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ENOTDIR and _is_link(path, parent):  # O_DIRECTORY's answer first
            raise Refused(errno.ELOOP, f"{where} is a symbolic link") from None
        raise _refused(exc, where, "") from None
    try:
        info = os.fstat(fd)
        _owned(info, stat.S_ISDIR, where, "a directory")
        if info.st_mode & 0o077:
            os.fchmod(fd, stat.S_IMODE(info.st_mode) & 0o700)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _is_link(path: Path | str, parent: int | None) -> bool:
    try:
        return stat.S_ISLNK(os.stat(path, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _owned(info: os.stat_result, kind: Callable[[int], bool], where: str, what: str) -> None:
    if not kind(info.st_mode):
        raise Refused(errno.EINVAL, f"{where} is not {what}")
    if info.st_uid != os.geteuid():
        raise Refused(errno.EPERM, f"{where} belongs to another user")


def _refused(exc: OSError, root: Path | str, name: str) -> OSError:
    """`exc`, as Refused when opening without following met a link (ELOOP), or a directory
    opened as one met something else (ENOTDIR)."""
    where = f"{root}/…/{name}" if name else str(root)
    if exc.errno == errno.ELOOP:
        return Refused(errno.ELOOP, f"{where} is a symbolic link")
    if exc.errno == errno.ENOTDIR and not name:
        return Refused(errno.ENOTDIR, f"{where} is not a directory")
    return exc


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

# Each value of KEYS, read only once its size is known (a value of hundreds of MB costs the
# server a STRLEN, not this process its memory): the value when it is a string of at most
# ARGV[1] bytes, false when there is none, else its size (-1 for another type than a string).
_READ = """
local out = {}
for i, name in ipairs(KEYS) do
  local kind = redis.call('TYPE', name)['ok']
  if kind == 'none' then
    out[i] = false
  elseif kind ~= 'string' then
    out[i] = -1
  else
    local size = redis.call('STRLEN', name)
    if size > tonumber(ARGV[1]) then out[i] = size else out[i] = redis.call('GET', name) end
  end
end
return out
"""

# A turn (`_turn`) on the server's clock, so machines whose clocks differ share one budget.
# KEYS[1] the budget; ARGV interval, most, after, burst, ceiling (seconds), then the inner and
# outer pads of the budgets' HMAC-SHA1 key (both empty without a secret: Lua in Redis has
# SHA-1 alone). A budget is `<time>` or `<time> <tag>`; one that is no such string, whose tag
# does not check out, or that is further ahead than the ceiling is not taken as it stands.
# Returns {granted, wait, ignored}, the wait as a string (Redis turns Lua numbers into
# integers).
_RESERVE = """
local function tag(value)
  local inner = redis.sha1hex(ARGV[6] .. KEYS[1] .. '\\0' .. value)
  local bytes = inner:gsub('..', function(h) return string.char(tonumber(h, 16)) end)
  return redis.sha1hex(ARGV[7] .. bytes)
end
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local interval, most = tonumber(ARGV[1]), tonumber(ARGV[2])
local free, ignored = 0, 0
local kind = redis.call('TYPE', KEYS[1])['ok']
if kind == 'string' and redis.call('STRLEN', KEYS[1]) <= 96 then
  local time, mac = string.match(redis.call('GET', KEYS[1]), '^(%d+%.?%d*) ?(%x*)$')
  if time and (ARGV[6] == '' or mac == tag(time)) then free = tonumber(time) else ignored = 1 end
elseif kind ~= 'none' then
  ignored = 1
end
local base = math.max(math.min(free, now + tonumber(ARGV[5])), now)
local start = math.max(base - (tonumber(ARGV[4]) - 1) * interval, now + tonumber(ARGV[3]), now)
local wait = start - now
if wait > most then return {0, string.format('%.6f', wait), ignored} end
local value = string.format('%.6f', math.max(base, start) + interval)
local stored = value
if ARGV[6] ~= '' then stored = value .. ' ' .. tag(value) end
redis.call('SET', KEYS[1], stored, 'PX', math.ceil((tonumber(value) - now + 60) * 1000))
return {1, string.format('%.6f', wait), ignored}
"""


class Tampered(ValueError):  # noqa: N818 - a state of the entry, as messages say it
    """A value in Redis that fails a check: not written by this fleet, or not as written."""


class Shared:
    """Entries in one Redis server for every machine pointed at it; the local files once it
    fails, for the rest of the process."""

    def __init__(self, url: str, local: Files, prefix: str = "ikigai-web-tools",
                 secret: str = "") -> None:  # fmt: skip
        self.url = url
        self.local = local
        self.prefix = prefix
        self.signed = bool(secret)
        self._entry_key = _derived(secret, b"entries") if secret else b""
        self._pads = _pads(_derived(secret, b"budgets")) if secret else (b"", b"")
        self.warnings = local.warnings  # one list: the answer reads either
        self._client: Any = None
        self._scripts: dict[str, Any] = {}
        down = local.get("redis", _digest(url))
        self._down = down.get("why") if isinstance(down, dict) else None
        if isinstance(self._down, str):
            self._warn(self._down, remembered=True)

    def get(self, space: str, key: str) -> Any | None:
        _check(space)
        name = self._name(space, key)
        found = self._do(lambda r: self._read(r, [name], MAX_VALUE))
        if found is _Local:
            return self.local.get(space, key)
        return self._loaded(name, found[0], MAX_VALUE)

    def put(self, space: str, key: str, value: Any, ttl: float) -> None:
        _check(space)
        data = json.dumps(value)
        if ttl <= 0 or len(data) > MAX_VALUE:
            self.delete(space, key)
            return
        if not self.write(space, key, data, ttl):
            self.local.put(space, key, value, ttl)

    def delete(self, space: str, key: str) -> None:
        _check(space)
        if self._do(lambda r: r.delete(self._name(space, key))) is _Local:
            self.local.delete(space, key)

    def scan(self, space: str) -> list[tuple[str, Any]]:
        _check(space)
        found = self._do(lambda r: self._scan(r, space))
        return self.local.scan(space) if found is _Local else list(found)

    def clear(self, space: str, start: str = "") -> int:
        _check(space)
        removed = self._do(lambda r: self._clear(r, space, start))
        return self.local.clear(space, start) if removed is _Local else int(removed)

    def reserve(
        self,
        space: str,
        key: str,
        interval: float,
        most: float,
        after: float = 0.0,
        burst: int = 1,
        ceiling: float = CEILING,
    ) -> Turn:
        _check(space)
        numbers = (interval, min(most, 1e9), after, burst, min(ceiling, 1e9))
        args = (*(f"{n:.6f}" for n in numbers[:3]), str(burst), f"{numbers[4]:.6f}", *self._pads)
        name = self._name(space, key)
        said = self._do(lambda r: self._script(r, _RESERVE)(keys=[name], args=args))
        if said is _Local:
            return self.local.reserve(space, key, interval, most, after, burst, ceiling)
        granted, wait, ignored = said
        if ignored:
            self._distrust(name, "a pacing budget that is no budget, or not signed with the "
                           "fleet's secret: it counted as none")  # fmt: skip
        return Turn(float(wait), granted=bool(granted))

    @property
    def up(self) -> bool:
        return self._down is None

    def read(self, space: str, key: str, most: int) -> str | None:
        """An entry too large for `get` (a cached page) as stored; None when absent or the
        server failed (`up` then says so). Tampered when it is larger than `most` bytes,
        not a string, or fails its signature."""
        _check(space)
        name = self._name(space, key)
        found = self._do(lambda r: self._read(r, [name], most))
        return None if found is _Local else self._opened(name, found[0], most)

    def write(self, space: str, key: str, data: str, ttl: float) -> bool:
        """Store `data` for `ttl` seconds; False when the server failed."""
        _check(space)
        millis = max(1, round(ttl * 1000))
        name = self._name(space, key)
        sealed = self._sealed(name, data.encode())
        return self._do(lambda r: r.set(name, sealed, px=millis)) is not _Local

    def why(self) -> str:
        """What the warning says about the server, once it failed."""
        return self.warnings[-1]["message"] if self.warnings else ""

    def name(self, space: str, key: str) -> str:
        """The entry's name in Redis."""
        return self._name(space, key)

    # The parts.

    def _name(self, space: str, key: str) -> str:
        return f"{self.prefix}:{space}:{key}"

    def _sealed(self, name: str, payload: bytes) -> bytes:
        """`payload` as stored under `name`: the layout's version, the tag, the payload."""
        return b":".join((_LAYOUT, self._tag(name, payload), payload))

    def _tag(self, name: str, payload: bytes) -> bytes:
        if not self.signed:
            return b""
        signed = hmac.new(self._entry_key, name.encode() + b"\0" + payload, hashlib.sha256)
        return signed.hexdigest().encode()

    def _opened(self, name: str, raw: object, most: int) -> str | None:
        """The payload of a value as `_READ` gave it; None when there is none, Tampered
        saying why when it fails a check."""
        if raw is None:
            return None
        if isinstance(raw, int) and raw >= 0:
            raise Tampered(f"{name} is {raw:,} bytes, more than {most:,}")
        if not isinstance(raw, bytes):
            raise Tampered(f"{name} is not a string")
        layout, _, rest = raw.partition(b":")
        tag, colon, payload = rest.partition(b":")
        if layout != _LAYOUT or not colon:
            raise Tampered(f"{name} is not in this version's layout")
        if self.signed and not hmac.compare_digest(tag, self._tag(name, payload)):
            raise Tampered(f"{name} is not signed with the fleet's secret ({SECRET_SETTING})")
        try:
            return payload.decode()
        except UnicodeDecodeError:
            raise Tampered(f"{name} is not UTF-8") from None

    def _loaded(self, name: str, raw: object, most: int) -> Any | None:
        try:
            payload = self._opened(name, raw, most)
            return None if payload is None else json.loads(payload)
        except Tampered as exc:
            self._distrust(name, str(exc).removeprefix(f"{name} is "))
        except ValueError:
            self._distrust(name, "not JSON")
        return None

    def _distrust(self, name: str, why: str) -> None:
        from ikigai_web.common.redact import printable_url

        message = (
            f"an entry in the Redis server at {printable_url(self.url)} was ignored: {name} "
            f"is {why}. "
            + ("Something without the fleet's secret wrote to that server: check who can."
               if self.signed else
               "Set IKIGAI_WEB_REDIS_SECRET on every machine of the fleet to tell its "
               "entries from anyone else's.")
        )  # fmt: skip
        if all(w["message"] != message for w in self.warnings):
            self.warnings.append({"code": "STATE", "message": message})

    def _read(self, r: Any, names: list[str], most: int) -> list[Any]:
        return list(self._script(r, _READ)(keys=names, args=[most]))

    def _script(self, r: Any, text: str) -> Any:
        """The script, sent once and then called by its digest (redis-py's Script)."""
        if text not in self._scripts:
            self._scripts[text] = r.register_script(text)
        return self._scripts[text]

    def _names(self, r: Any, space: str, start: str = "") -> list[bytes]:
        from itertools import islice

        pattern = _glob_escaped(f"{self.prefix}:{space}:{start}") + "*"
        return list(islice(r.scan_iter(pattern, count=200), MAX_SCAN))

    def _scan(self, r: Any, space: str) -> list[tuple[str, Any]]:
        head = len(self._name(space, ""))
        found = []
        names = [n.decode() for n in self._names(r, space) if _utf8(n)]
        for start in range(0, len(names), SCAN_BATCH):
            batch = names[start : start + SCAN_BATCH]
            for name, raw in zip(batch, self._read(r, batch, MAX_VALUE), strict=True):
                value = self._loaded(name, raw, MAX_VALUE)
                if value is not None:
                    found.append((name[head:], value))
        return found

    def _clear(self, r: Any, space: str, start: str) -> int:
        names = self._names(r, space, start)
        return int(r.delete(*names)) if names else 0

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

            # Bytes, decoded here: a value that is no UTF-8 is an entry to ignore, not a
            # client error that would take the server for down.
            self._client = redis.Redis.from_url(
                self.url,
                socket_connect_timeout=CONNECT_TIMEOUT,
                socket_timeout=READ_TIMEOUT,
                retry=Retry(NoBackoff(), 0),
                health_check_interval=0,
                decode_responses=False,
            )
        return self._client

    def _fail(self, exc: Exception) -> None:
        self._down = redis_failure(exc)
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


def _pads(key: bytes) -> tuple[bytes, bytes]:
    """HMAC's inner and outer pads of `key` (RFC 2104, SHA-1's 64-byte block): the Lua script
    finishes the HMAC with the server's SHA-1, never seeing the key itself."""
    block = key.ljust(64, b"\0")
    return bytes(b ^ 0x36 for b in block), bytes(b ^ 0x5C for b in block)


def _glob_escaped(text: str) -> str:
    """`text` matched as it is by Redis's glob patterns (SCAN MATCH)."""
    return re.sub(r"([*?\[\]\\])", r"\\\1", text)


def _utf8(name: bytes) -> bool:
    try:
        name.decode()
    except UnicodeDecodeError:
        return False
    return True


def redis_failure(exc: Exception) -> str:
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
