"""Non-secret settings: `IKIGAI_WEB_*` environment variables over an optional `web-tools.toml`.

Each setting is read and checked only when a tool asks for it, so a bad value of a setting
that one tool uses never breaks another. In the TOML file a setting's key is its variable name
without the prefix, in lower case (`IKIGAI_WEB_TIMEOUT` -> `timeout = 25`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from ikigai_web.common import __version__
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

PREFIX = "IKIGAI_WEB_"
FILE_NAME = "web-tools.toml"
MAX_FILE_BYTES = 64 * 1024  # web-tools.toml: every setting with comments is about 3 KB
MAX_KEY_WARNINGS = 3  # unknown keys named one by one; the rest are counted
# The ikigai host kills a call 30 s after starting it; the tool must have answered by then,
# conversion and writing included, whatever the setting says.
MAX_TIMEOUT = 27
# The host reads at most 65,535 bytes of a tool's stdout.
MAX_BUDGET = 65_000
# Bounds that keep every value a number the cache (its keys, its file times) and memory hold.
MAX_TTL = 366 * 24 * 3600  # a year
MAX_CACHE_MB = 1 << 20  # a terabyte
MAX_FETCH_BYTES = 1 << 30  # a gigabyte: the body is held in memory
# A call's memory beyond what its process holds at the start (RLIMIT_DATA, as the MCP server's
# warm workers are capped): a web-fetch of a large page or document takes a few hundred MiB.
MIN_MEMORY_MB = 64
MAX_MEMORY_MB = 1 << 20  # a terabyte: in effect no cap
RENDER_MODES = ("auto", "always", "never")
_RATE = lazy(r"^(off|\d{1,6}(\.\d{1,3})?(/s|/min)?)$")
_PREFIX = lazy(r"^[A-Za-z0-9._-]{1,64}$")
MIN_SECRET = 16  # characters of IKIGAI_WEB_REDIS_SECRET: a short one could be guessed offline
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}

T = TypeVar("T")


class Setting(Generic[T]):
    """One setting. As an attribute of `Settings` it reads as the setting's current value."""

    def __init__(
        self, parse: Callable[[object], T], default: T, meaning: str, shown: str | None = None
    ) -> None:
        self.parse = parse
        self._default = default
        self.meaning = meaning
        self._shown = shown
        self.name = ""

    @property
    def default(self) -> T:
        return self._default

    @property
    def shown_default(self) -> str:
        return self._shown if self._shown is not None else _shown(self.default)

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @property
    def variable(self) -> str:
        return PREFIX + self.name.upper()

    @overload
    def __get__(self, settings: None, owner: type) -> Setting[T]: ...
    @overload
    def __get__(self, settings: Settings, owner: type) -> T: ...
    def __get__(self, settings: Settings | None, owner: type) -> Setting[T] | T:
        return self if settings is None else settings.value(self)


def _shown(default: object) -> str:
    if isinstance(default, bool):
        return "on" if default else "off"
    if isinstance(default, tuple):
        return ",".join(default) or "none"
    return str(default)


# --- parsers: each returns the value or raises ValueError saying what would be valid ---------


def _seconds(raw: object) -> float:
    valid = (
        f"it must be a number of seconds above 0 and at most {MAX_TIMEOUT} (the ikigai host "
        "stops waiting for a tool at 30 s, and the answer must be written before that)"
    )
    value = _number(raw, valid)
    if not 0 < value <= MAX_TIMEOUT:
        raise ValueError(valid)
    return value


def _number(raw: object, valid: str) -> float:
    if isinstance(raw, bool):
        raise ValueError(valid)  # noqa: TRY004 - a parser reports every bad value as ValueError
    try:
        return float(str(raw).strip())
    except ValueError:
        raise ValueError(valid) from None


def _count(lo: int, hi: int | None = None, unit: str = "") -> Callable[[object], int]:
    valid = f"it must be a whole number{unit} of at least {lo}" + (
        f" and at most {hi}" if hi is not None else ""
    )

    def parse(raw: object) -> int:
        text = str(raw).strip()
        if isinstance(raw, bool) or not text.lstrip("+").isdigit():
            raise ValueError(valid)
        value = int(text)
        if value < lo or (hi is not None and value > hi):
            raise ValueError(valid)
        return value

    return parse


def _budget(raw: object) -> int:
    try:
        return _count(1024, MAX_BUDGET, " of bytes")(raw)
    except ValueError:
        raise ValueError(
            f"it must be a whole number of bytes from 1024 to {MAX_BUDGET} (the ikigai host "
            "reads at most 65,535 bytes of a tool's answer)"
        ) from None


def _flag(raw: object) -> bool:
    word = str(raw).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError("it must be 1 or 0 (true/false, yes/no and on/off work too)")


def _text(raw: object) -> str:
    if not isinstance(raw, str | int | float) or isinstance(raw, bool):
        raise ValueError("it must be a string")  # noqa: TRY004 - as in _number
    return str(raw).strip()


def _header(raw: object) -> str:
    text = _text(raw)
    if not text or any(not " " <= c <= "~" for c in text):
        raise ValueError("it must be printable ASCII: an HTTP header carries nothing else")
    return text


def _render(raw: object) -> str:
    word = str(raw).strip().lower()
    if word not in RENDER_MODES:
        raise ValueError("it must be auto, always or never")
    return word


def _executable(raw: object) -> str:
    text = _text(raw)
    if not text or any(not c.isprintable() for c in text):
        raise ValueError("it must be the path or command name of a Chromium or Chrome binary")
    return text


def _redis_url(raw: object) -> str:
    text = _text(raw)
    if text and (not text.lower().startswith(("redis://", "rediss://")) or " " in text):
        raise ValueError(
            "it must be a redis:// or rediss:// (TLS) URL, such as "
            "redis://:password@redis.example:6379/0, or empty for local files"
        )
    return text


def _redis_secret(raw: object) -> str:
    text = _text(raw)
    if text and (len(text) < MIN_SECRET or any(not " " < c <= "~" for c in text)):
        raise ValueError(
            f"it must be at least {MIN_SECRET} printable ASCII characters without spaces, the "
            "same on every machine of the fleet: a long random one, such as `openssl rand "
            "-hex 32` makes"
        )
    return text


def _redis_prefix(raw: object) -> str:
    text = _text(raw)
    if not _PREFIX.match(text):
        raise ValueError(
            "it must be 1 to 64 letters, digits, dots, dashes or underscores (no colon: it "
            "ends at the first one), such as ikigai-web-tools-staging"
        )
    return text


def _rates(raw: object) -> tuple[str, ...]:
    """`provider=N`, `provider=N/s`, `provider=N/min` or `provider=off`, checked here and
    read by ikigai_web.search.pacing."""
    entries = _names(raw)
    for entry in entries:
        name, _, rate = entry.partition("=")
        if not _RATE.match(rate.replace(" ", "")) or not name.strip():
            raise ValueError(
                f"the entry {entry!r} is not provider=rate: write brave=50 (requests a second), "
                "tavily=100/min (a minute) or google=off (no pacing); separate entries with "
                "commas"
            )
    return entries


def _names(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else str(raw).split(",")
    return tuple(s for s in (str(i).strip().lower() for i in items) if s)


def _hosts(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else str(raw).split(",")
    entries = tuple(s for s in (str(i).strip() for i in items) if s)
    for entry in entries:
        if not _host_or_network(entry):
            raise ValueError(
                f"the entry {entry!r} is neither a host name (intranet.example), an IP address "
                "(10.1.2.3, fd00::1) nor a network in CIDR form (10.0.0.0/8, fd00::/8); "
                "separate entries with commas"
            )
    return entries


def _host_or_network(entry: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_network(entry.strip("[]"), strict=False)
    except ValueError:
        pass
    else:
        return True
    if "/" in entry:
        return False  # a network with a bad prefix or address, such as 10.0.0.0/99
    from ikigai_web.common.hostnames import is_hostname

    return is_hostname(entry.lower().rstrip("."))


class Settings:
    """The settings as one call sees them: each is read, checked and kept on first use."""

    timeout = Setting(
        _seconds,
        25.0,
        f"whole-call deadline in seconds, at most {MAX_TIMEOUT} (the ikigai host gives up at 30)",
        "25",
    )
    user_agent = Setting(
        _header,
        f"ikigai-web-tools/{__version__}",
        "User-Agent for every request, printable ASCII (DuckDuckGo excepted: it needs a "
        "browser-like one)",
        "`ikigai-web-tools/<version>`",
    )
    cache_ttl = Setting(
        _count(0, MAX_TTL, " of seconds"),
        300,
        "search cache lifetime, seconds, at most a year; 0 disables",
    )
    cache_max_mb = Setting(
        _count(1, MAX_CACHE_MB, " of megabytes"),
        200,
        "size bound of the whole cache, megabytes (at most 1 TiB); least recently used entries "
        "go first",
    )
    fetch_cache_ttl = Setting(
        _count(0, MAX_TTL, " of seconds"),
        900,
        "web-fetch cache lifetime, seconds, at most a year; 0 disables",
    )
    fetch_max_bytes = Setting(
        _count(1024, MAX_FETCH_BYTES, " of bytes"),
        10 * 1024 * 1024,
        "web-fetch body cap (decoded bytes), at most 1 GiB",
    )
    fetch_allow_private = Setting(
        _flag, default=False, meaning="`1` lets web-fetch reach private and loopback addresses"
    )
    fetch_robots = Setting(
        _flag, default=True, meaning="`0` stops web-fetch from honouring robots.txt"
    )
    fetch_allow_hosts: Setting[tuple[str, ...]] = Setting(
        _hosts,
        (),
        "comma-separated hosts, IP addresses or CIDR networks web-fetch may reach even though "
        "they are private (everything else private stays blocked, redirects included)",
    )
    fetch_render = Setting(
        _render,
        "auto",
        "when web-fetch renders a page in a headless browser: `auto` (app shells, where a "
        "browser is installed), `always` or `never`; a call's `render` wins",
    )
    fetch_render_settle = Setting(
        _seconds,
        8.0,
        "the most seconds a rendered page may keep loading before what it shows is read "
        "(always inside the call's deadline); a slow machine or slow pages may want more",
        "8",
    )
    fetch_browser = Setting(
        _executable,
        "",
        "the Chromium or Chrome web-fetch renders with: a path or a command name; empty finds "
        "one (chromium, chromium-browser, google-chrome, then Playwright's own)",
        "found",
    )
    # The declared places of the search tools' providers (`place` in each PROVIDER), written
    # here because the ground floor reads no tool; test_registry.py holds the two equal.
    search_order: Setting[tuple[str, ...]] = Setting(
        _names,
        ("brave", "google", "tavily", "searxng", "duckduckgo"),
        "providers the fallback search tool tries, in order",
    )
    gemini_resolve = Setting(
        _flag, default=True, meaning="`0` keeps Gemini's grounding redirect links unresolved"
    )
    gemini_search_entry_point = Setting(
        _flag,
        default=False,
        meaning="`1` adds Google's Search Suggestions HTML to Gemini results",
    )
    redis_url = Setting(
        _redis_url,
        "",
        "a redis:// or rediss:// URL (password and TLS in it as Redis reads them) of a Redis "
        "server that holds the pacing budgets, what the fallback remembers and the cache, for "
        "every machine pointed at it; empty: local files",
        "none",
    )
    redis_secret = Setting(
        _redis_secret,
        "",
        "the fleet's shared secret: every entry in Redis is signed with it (HMAC-SHA256) and "
        "one without a valid signature is ignored, and key ids are keyed with it; empty: "
        "whoever can write to that Redis is trusted",
        "none",
    )
    redis_prefix = Setting(
        _redis_prefix,
        "ikigai-web-tools",
        "what every name this installation gives in Redis starts with: fleets sharing one "
        "server each use their own",
    )
    rate_limits: Setting[tuple[str, ...]] = Setting(
        _rates,
        (),
        "your own plan's request rate per provider, over what the tools learn and assume: "
        "`brave=50` (a second), `tavily=100/min`, `google=off` (no pacing)",
        "learned",
    )
    output_budget = Setting(
        _budget,
        60_000,
        f"hard cap on one answer in bytes, at most {MAX_BUDGET} (ikigai hosts read 64 KiB)",
    )
    max_memory_mb = Setting(
        _count(MIN_MEMORY_MB, MAX_MEMORY_MB, " of MiB"),
        1024,
        "the most memory one call may take beyond what the tool holds as it starts the call, "
        f"MiB, {MIN_MEMORY_MB} to {MAX_MEMORY_MB}; a document that needs more is TOO_LARGE",
    )

    def __init__(
        self, environ: Mapping[str, str] | None = None, values: Mapping[str, Any] | None = None
    ) -> None:
        self._environ = os.environ if environ is None else environ
        self.path = config_dir() / FILE_NAME
        self._file: dict[str, Any] | None = None
        self._values: dict[str, Any] = dict(values or {})  # each setting once read

    def narrowed(self, timeout: float) -> Settings:
        """These settings with a shorter whole-call deadline: what is left of this call's
        when it hands a part of its work to another tool in the same process."""
        values = self._values | {"timeout": min(timeout, self.timeout)}
        return Settings(self._environ, values)

    @classmethod
    def every(cls) -> list[Setting[Any]]:
        """Every setting, in the order of the README's table."""
        return [v for v in vars(cls).values() if isinstance(v, Setting)]

    def value(self, setting: Setting[T]) -> T:
        if setting.name not in self._values:
            self._values[setting.name] = self._read(setting)
        result: T = self._values[setting.name]
        return result

    def check(self, *names: str) -> None:
        """Read the settings named now: a call reads every setting it may use before its
        cache, so that a bad value fails it whether or not the answer is cached."""
        for name in names:
            getattr(self, name)

    def source(self, setting: Setting[Any]) -> str:
        """Where the value comes from: the variable, the file's key, or the default."""
        if self._environ.get(setting.variable, "").strip():
            return setting.variable
        if setting.name in self._file_values():
            return f"{self.path} ({setting.name})"
        return "default"

    def warnings(self) -> list[str]:
        """Keys of web-tools.toml that are no setting: a misspelt setting silently unused.
        Past MAX_KEY_WARNINGS of them, one warning counts the rest: they must not fill the
        answer."""
        try:
            keys = self._file_values()
        except ToolError:
            return []
        known = {s.name for s in self.every()}
        unknown = [key for key in keys if key not in known]
        shown = [_unknown_key(self.path, key, known) for key in unknown[:MAX_KEY_WARNINGS]]
        if len(unknown) > MAX_KEY_WARNINGS:
            rest = len(unknown) - MAX_KEY_WARNINGS
            shown.append(f"{self.path} sets {rest} more keys that are no settings.")
        return shown

    def _read(self, setting: Setting[T]) -> T:
        env = self._environ.get(setting.variable, "")
        if env.strip():
            return _parse(setting, env, setting.variable)
        file_values = self._file_values()
        if setting.name in file_values:
            where = f"{setting.name} in {self.path}"
            return _parse(setting, file_values[setting.name], where)
        return setting.default

    def _file_values(self) -> dict[str, Any]:
        if self._file is None:
            self._file = _read_toml(self.path)
        return self._file


def _parse(setting: Setting[T], raw: object, where: str) -> T:
    try:
        return setting.parse(raw)
    except ValueError as exc:
        raise ToolError(
            ErrorCode.INVALID_INPUT,
            f"the setting {where} is {_spelled(raw)}: {exc}. Fix or unset it.",
        ) from None


def _spelled(raw: object) -> str:
    if isinstance(raw, bool):
        return "true" if raw else "false"
    if isinstance(raw, str):
        return '"' + raw[:200] + '"'
    return str(raw)[:200]


def _unknown_key(path: Path, key: str, known: set[str]) -> str:
    import difflib

    message = f"{path} sets {key!r}, which is no setting: it has no effect."
    close = difflib.get_close_matches(key, sorted(known), n=1)
    return message + (f" Did you mean {close[0]!r}?" if close else "")


def _read_toml(path: Path) -> dict[str, Any]:
    from ikigai_web.common.files import parsed, read_regular

    try:
        data, _ = read_regular(path, MAX_FILE_BYTES)
        import tomllib  # only when there is a file to read

        found: dict[str, Any] = parsed(tomllib.loads, data.decode("utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
        raise ToolError(
            ErrorCode.INVALID_INPUT,
            f"the settings file {path} is unusable ({exc}); fix it or move it away.",
        ) from None
    return found


def config_dir() -> Path:
    """`$IKIGAI_CONFIG_DIR`, else the platform's user config dir for `ikigai`."""
    explicit = os.environ.get("IKIGAI_CONFIG_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    return _user_dir("XDG_CONFIG_HOME", ".config", "ikigai", "user_config_dir")


def cache_dir() -> Path:
    """The platform's user cache dir for `ikigai-web-tools`."""
    return _user_dir("XDG_CACHE_HOME", ".cache", "ikigai-web-tools", "user_cache_dir")


def state_dir() -> Path:
    """The platform's user state dir for `ikigai-web-tools`: what the tools share between
    calls that is no cache (pacing budgets, keys set aside), so clearing the cache keeps it."""
    return _user_dir("XDG_STATE_HOME", ".local/state", "ikigai-web-tools", "user_state_dir")


def _user_dir(variable: str, fallback: str, name: str, function: str) -> Path:
    """What platformdirs answers; on Linux read as platformdirs reads it (the XDG base
    directory variable, else the default under home), since importing platformdirs costs a
    twentieth of a search's start-up."""
    if sys.platform == "linux":
        base = os.environ.get(variable, "").strip()
        return Path(base or Path.home() / fallback) / name
    import platformdirs

    return Path(getattr(platformdirs, function)(name, appauthor=False))


def load() -> Settings:
    """The current settings; nothing is read until a setting is used."""
    return Settings()
