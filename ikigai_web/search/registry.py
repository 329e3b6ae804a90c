"""The search providers: each declared once, as `PROVIDER` in its tool module
(`ikigai_web/tools/web_search_<key>.py`), and every registry derived from those declarations: the
credentials (ikigai_web/common/credentials.py), the names answers show (ikigai_web/search/kit.py),
the default fallback order (ikigai_web/common/settings.py), the documented rate limits pacing starts
from (ikigai_web/search/pacing.py), and what doctor and the fallback tool's memory know of each
provider.

Reading one declaration imports only that tool's module, which a search tool has already
imported; the whole registry, which imports every search tool, is read only where all of
them are needed (the fallback tool, doctor, `--help`, error messages naming other tools).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import NamedTuple, TypeVar

PACKAGE = "ikigai_web.tools"
PREFIX = "web_search_"
V = TypeVar("V")


class Field(NamedTuple):
    name: str  # the nested key and the name in the event's `credentials`
    env: tuple[str, ...]  # variables, first non-empty wins
    secret: bool = True


class Provider(NamedTuple):
    """One search provider, as its tool module declares it."""

    key: str  # `brave`: the tool is web_search_<key>, its credentials under web_search.<key>
    name: str  # what answers call it: "Brave Search"
    fields: tuple[Field, ...] = ()  # the credentials it needs; none: keyless
    label: str = ""  # what the model and the user are told to get
    signup_url: str = ""
    how: str = ""  # one sentence on where to get it
    place: int | None = None  # its place in the default fallback order; None: only if named
    rate: tuple[int, float] | None = None  # documented limit: requests per so many seconds
    # The longest quota window the provider documents (seconds): how long a key it reports
    # used up may be held at most (`longest_hold`); None: it documents no quota.
    quota_window: float | None = None

    @property
    def tool(self) -> str:
        """The schema name of its tool."""
        return PREFIX + self.key

    @property
    def keyed(self) -> bool:
        """Whether it works through an API key (SearXNG's URL is no key)."""
        return any(f.secret for f in self.fields)


# The longest a `Retry-After` (or any rate limit that is no quota) is honoured, in seconds. The
# providers' documented rate windows are a second or a minute (Brave 1 a second, Google,
# Tavily and Gemini so many a minute); an hour leaves a gateway in front of them sixty times
# that for a window of its own, and a longer wait is no rate limit but a quota or a mistake.
RETRY_WINDOW = 3600.0
DAY = 25 * 3600.0  # a daily quota resets within 25 hours: the day clocks go back is that long
MONTH = 31 * 24 * 3600.0  # a monthly quota, within the longest calendar month


def longest_hold(key: str) -> float:
    """The longest a key of provider `key` may be held for what the provider said: its
    quota's window, or RETRY_WINDOW for a provider without a quota (and for every
    `Retry-After`, which ikigai_web/net/http.py bounds to it)."""
    found = declared(key)
    window = found.quota_window if found is not None else None
    return max(RETRY_WINDOW, window or 0.0)


def declared(key: str) -> Provider | None:
    """The declaration of provider `key`, None when no search tool declares one."""
    from importlib import import_module

    if not (key.isascii() and key.isalnum() and key.islower()):
        return None
    try:
        module = import_module(f"{PACKAGE}.{PREFIX}{key}")
    except ModuleNotFoundError:
        return None
    found = getattr(module, "PROVIDER", None)
    return found if isinstance(found, Provider) and found.key == key else None


@cache
def every() -> dict[str, Provider]:
    """Every declared provider: those of the default fallback order in it, then the rest by
    key."""
    import pkgutil
    from importlib import import_module

    names = pkgutil.iter_modules(import_module(PACKAGE).__path__)
    found = [declared(m.name.removeprefix(PREFIX)) for m in names if m.name.startswith(PREFIX)]
    ranked = sorted((p for p in found if p), key=lambda p: (p.place is None, p.place or 0, p.key))
    return {p.key: p for p in ranked}


def fallback_order() -> tuple[str, ...]:
    """The providers the fallback tool tries when the user names none, in order."""
    return tuple(p.key for p in every().values() if p.place is not None)


class Registry(Mapping[str, V]):
    """Key -> what `view` takes from each declared provider that `keep` admits, in the order of
    `every()` (the keyed ones first, when `keyed_first`). A look-up reads one declaration; only
    iterating reads them all."""

    def __init__(
        self,
        view: Callable[[Provider], V],
        keep: Callable[[Provider], bool] = lambda _: True,
        *,
        keyed_first: bool = False,
    ) -> None:
        self.view, self.keep, self.keyed_first = view, keep, keyed_first

    def __getitem__(self, key: str) -> V:
        found = declared(key)
        if found is None or not self.keep(found):
            raise KeyError(key)
        return self.view(found)

    def _kept(self) -> list[Provider]:
        kept = [p for p in every().values() if self.keep(p)]
        return sorted(kept, key=lambda p: not p.keyed) if self.keyed_first else kept

    def __iter__(self) -> Iterator[str]:
        return iter([p.key for p in self._kept()])

    def __len__(self) -> int:
        return len(self._kept())
