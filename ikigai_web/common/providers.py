"""What a search provider's declaration holds (`Field`, `Provider`) and the longest any provider
may hold a key: the types, not the declarations. Each provider is declared once, as `PROVIDER` in
its tool module (`ikigai_web/tools/web_search_<key>.py`), and ikigai_web/search/registry.py reads
them; the types live on the ground floor because credentials and settings, which every tool
reads, take a declaration as it is given to them.
"""

from __future__ import annotations

from typing import NamedTuple

PREFIX = "web_search_"  # a provider's tool is web_search_<key>


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
