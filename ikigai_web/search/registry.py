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
from typing import TypeVar

from ikigai_web.common.providers import PREFIX, RETRY_WINDOW, Provider

PACKAGE = "ikigai_web.tools"
V = TypeVar("V")


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
def every_provider() -> dict[str, Provider]:
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
    return tuple(p.key for p in every_provider().values() if p.place is not None)


class Registry(Mapping[str, V]):
    """Key -> what `view` takes from each declared provider that `keep` admits, in the order of
    `every_provider()` (the keyed ones first, when `keyed_first`). A look-up reads one
    declaration; only iterating reads them all."""

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
        kept = [p for p in every_provider().values() if self.keep(p)]
        return sorted(kept, key=lambda p: not p.keyed) if self.keyed_first else kept

    def __iter__(self) -> Iterator[str]:
        return iter([p.key for p in self._kept()])

    def __len__(self) -> int:
        return len(self._kept())


# Who needs credentials, from each search tool's own declaration: the ones with an API key
# first, as messages naming other tools list them.
WITH_CREDENTIALS = Registry(lambda p: p, lambda p: bool(p.fields), keyed_first=True)


def alternatives(current: str) -> list[str]:
    """Other search tools that would work right now: keyless, or with credentials set."""
    from ikigai_web.common.credentials import configured

    names = [p.tool for p in WITH_CREDENTIALS.values() if p.tool != current and configured(p)]
    return names + [p.tool for p in every_provider().values() if not p.fields and p.tool != current]


def provider_name(key: str) -> str:
    """The name answers show provider `key` by, from its declaration; else the key itself."""
    found = declared(key)
    return found.name if found else key
