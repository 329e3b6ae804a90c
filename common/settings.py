"""Non-secret settings: `IKIGAI_WEB_*` environment variables over an optional `web-tools.toml`.

In the TOML file a setting's key is its variable name without the prefix, in lower case
(`IKIGAI_WEB_TIMEOUT` -> `timeout = 25`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from common import __version__
from common.errors import ErrorCode, ToolError

if TYPE_CHECKING:
    from collections.abc import Callable

PREFIX = "IKIGAI_WEB_"
DEFAULT_SEARCH_ORDER = ("brave", "google", "tavily", "searxng", "duckduckgo")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@dataclass(frozen=True)
class Settings:
    timeout: float = 25.0
    user_agent: str = f"ikigai-web-tools/{__version__}"
    cache_ttl: int = 300
    fetch_cache_ttl: int = 900
    fetch_max_bytes: int = 10 * 1024 * 1024
    fetch_allow_private: bool = False
    fetch_robots: bool = True
    fetch_allow_hosts: tuple[str, ...] = ()
    search_order: tuple[str, ...] = DEFAULT_SEARCH_ORDER
    gemini_resolve: bool = True
    gemini_search_entry_point: bool = False
    output_budget: int = 60_000


def config_dir() -> Path:
    """`$IKIGAI_CONFIG_DIR`, else the platform's user config dir for `ikigai`."""
    explicit = os.environ.get("IKIGAI_CONFIG_DIR", "").strip()
    if explicit:
        return Path(explicit).expanduser()
    from platformdirs import user_config_dir

    return Path(user_config_dir("ikigai", appauthor=False))


def cache_dir() -> Path:
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("ikigai-web-tools", appauthor=False))


def load() -> Settings:
    """Current settings; a value that cannot be used is INVALID_INPUT naming the setting."""
    file_values = _read_toml(config_dir() / "web-tools.toml")
    values: dict[str, Any] = {}
    for name, parse in _PARSERS.items():
        env = os.environ.get(PREFIX + name.upper())
        raw = env if env is not None and env.strip() else file_values.get(name)
        if raw is not None:
            values[name] = _parse(name, raw, parse)
    return Settings(**values)


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # on a call's path only: `--schema` imports this module too

    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ToolError(
            ErrorCode.INVALID_INPUT, f"settings file {path} is unusable: {exc}"
        ) from None


def _parse(name: str, raw: object, parse: Callable[[object], Any]) -> Any:
    try:
        return parse(raw)
    except ValueError as exc:
        raise ToolError(
            ErrorCode.INVALID_INPUT,
            f"setting {PREFIX}{name.upper()} is {raw!r}: {exc}; fix or unset it",
        ) from None


def _seconds(raw: object) -> float:
    value = float(str(raw))
    if not 0 < value <= 600:
        raise ValueError("it must be a number of seconds above 0 and at most 600")
    return value


def _count(lo: int) -> Callable[[object], int]:
    def parse(raw: object) -> int:
        value = int(str(raw))
        if value < lo:
            raise ValueError(f"it must be a whole number of at least {lo}")
        return value

    return parse


def _flag(raw: object) -> bool:
    word = str(raw).strip().lower()
    if word in _TRUE:
        return True
    if word in _FALSE:
        return False
    raise ValueError("it must be 1 or 0")


def _text(raw: object) -> str:
    return str(raw).strip()


def _names(raw: object) -> tuple[str, ...]:
    items = raw if isinstance(raw, list) else str(raw).split(",")
    return tuple(s for s in (str(i).strip() for i in items) if s)


_PARSERS: dict[str, Callable[[object], Any]] = {
    "timeout": _seconds,
    "user_agent": _text,
    "cache_ttl": _count(0),
    "fetch_cache_ttl": _count(0),
    "fetch_max_bytes": _count(1024),
    "fetch_allow_private": _flag,
    "fetch_robots": _flag,
    "fetch_allow_hosts": _names,
    "search_order": _names,
    "gemini_resolve": _flag,
    "gemini_search_entry_point": _flag,
    "output_budget": _count(1024),
}
