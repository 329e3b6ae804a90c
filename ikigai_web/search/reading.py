"""A search that reads: its top results fetched through web-fetch's own pipeline (address
guard, robots.txt, walls, hidden text, cache) in parallel, each given the passages of its
page that answer the search's query (ikigai_web/fetch/reading/passages.py).

Every search tool and the fallback tool take `read` (0 to MAX_READ): `parse` checks it, and
`read_results` adds to each of the first `read` results a `read` object, its passages or why
it has none. The pages share what the answer leaves of the output budget, and the call's
deadline: a page not read by then says so, and the call ends on time all the same. A page
read here is in web-fetch's cache, so a later web-fetch of its URL does not fetch it again.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any

from ikigai_web.common import params as p

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.common.errors import ToolError
    from ikigai_web.common.settings import Settings

MAX_READ = 5
PAGE_CHARS = 4000  # of passages a page, at most: the same as web-fetch's query by default
SHARE = 0.9  # of what the answer leaves of the budget, for the pages' passages
MARGIN = 0.5  # seconds before the deadline at which pages still being read are given up
_PLACE_BYTES = 400  # JSON of a page's `read` object beyond its content, generously
MIN_ROOM = 300  # bytes: less than this holds no passage worth reading
MAX_WARNINGS = 3  # of a page's warnings, the first: each is a sentence or two
_FIELDS = ("content", "passages", "total_lines")

SCHEMA_PROPERTIES: dict[str, Any] = {
    "read": {
        "type": "integer",
        "description": f"Also read the first N results (0-{MAX_READ}) and give each the "
        "passages of its page that answer the query: fewer fetches to find an answer. "
        "Default: 0.",
    },
}


def result_read() -> dict[str, Any]:
    """The output schema of a result's `read`; web-fetch's lines only when an MCP host
    reads the output schemas, never for `--schema`."""
    from ikigai_web.common.answers import WARNINGS
    from ikigai_web.fetch.page_lines import PASSAGE

    return {
        "type": "object",
        "description": "With read: the page's passages that answer the query, or why none.",
        "properties": {
            "content": {
                "type": "string",
                "description": "The passages, best first, each under [Lines N-M: headings].",
            },
            "passages": {"type": "array", "items": PASSAGE},
            "total_lines": {"type": "integer", "description": "Lines of the page's markdown."},
            "error": {"type": "string", "description": "Why the page gave no passages."},
            "error_code": {"type": "string"},
            "wall": {"type": "string", "description": "The page is a wall, and which."},
            "warnings": WARNINGS,
        },
    }


def parse(raw: Mapping[str, Any]) -> int:
    """How many results to read: `read`, 0 to MAX_READ (0 when absent)."""
    return p.integer(raw, "read", 0, 0, MAX_READ)


def prepare() -> None:
    """Import what reading pages needs on a thread of its own, while the search waits on its
    provider: web-fetch's readers (ikigai_web/fetch/pipeline.py), the article reader every
    HTML page is read with, and the passages' ranking. Whatever is not done by the time a
    page needs it is imported then, as it would have been."""
    from importlib import import_module

    from ikigai_web.fetch.pipeline import READERS

    def load() -> None:
        for name in (*READERS, "readability", "ikigai_web.fetch.reading.passages", "Stemmer"):
            try:
                import_module(name)
            except Exception:  # noqa: BLE001 - the page that needs it imports it and says why
                return

    threading.Thread(target=load, name="search-readers", daemon=True).start()


def read_results(
    answer: dict[str, Any], query: str, count: int, settings: Settings, started: float
) -> dict[str, Any]:
    """The answer with its first `count` results read; `started` is when the call began
    (time.monotonic()), its deadline `settings.timeout` after."""
    results = answer.get("results", [])[:count]
    if not results:
        return answer
    from ikigai_web.common.text import compact

    left = settings.output_budget - len(compact(answer)) - 200
    # Each page's share, and no more than the runner lets one string of the answer be.
    share = max(0, int(left * SHARE) // len(results) - _PLACE_BYTES)
    share = min(share, settings.output_budget // 4 - _PLACE_BYTES)
    budget = settings.output_budget
    if share < MIN_ROOM:  # nothing to show of any page: none is fetched
        read = [_no_room() for _ in results]
    else:
        end = started + settings.timeout - MARGIN
        urls = [r["url"] for r in results]
        pages = _fetch_all(urls, settings, end, (query, share, budget))
        read = [_passages(page, query, share, budget) for page in pages]
    shown = [r | {"read": got} for r, got in zip(results, read, strict=True)]
    return answer | {"results": shown + answer["results"][len(shown) :]}


class _Fetched:
    """One result's page as its thread left it: the page, the error, or nothing yet."""

    def __init__(self) -> None:
        self.page: Any = None
        self.read: dict[str, Any] | None = None  # its passages, chosen on its thread
        self.error: Exception | None = None
        self.done = threading.Event()


def _fetch_all(
    urls: list[str], settings: Settings, end: float, reading: tuple[str, int, int]
) -> list[_Fetched]:
    """Each URL through web-fetch (its cache first), in parallel, until `end`, and its
    passages for `reading` (query, room, budget) chosen on its own thread as it comes in,
    not after the deadline on the call's."""
    fetched = [_Fetched() for _ in urls]
    left = end - time.monotonic()
    for url, slot in zip(urls, fetched, strict=True):
        narrowed = settings.narrowed(max(left, 0.1))
        args = (url, narrowed, slot, reading)
        thread = threading.Thread(target=_fetch, args=args, daemon=True)
        thread.start()  # daemon: a page still read at the deadline holds up nothing
    for slot in fetched:
        slot.done.wait(max(0.0, end - time.monotonic()))
    return fetched


def _fetch(url: str, settings: Settings, slot: _Fetched, reading: tuple[str, int, int]) -> None:
    from ikigai_web.fetch import pipeline

    try:
        slot.page = pipeline.cached_page(pipeline.Request(url), settings)[0]
        slot.read = _passages_of(slot.page, *reading)
    except Exception as exc:  # noqa: BLE001 - one page's failure is that result's, not the call's
        slot.error = exc
    finally:
        slot.done.set()


def _passages(slot: _Fetched, query: str, room: int, budget: int) -> dict[str, Any]:
    from ikigai_web.common.errors import ErrorCode, ToolError

    if not slot.done.is_set():
        return _why(ToolError(ErrorCode.NETWORK_ERROR, "not read in time: the call's deadline "
                              "came first; fetch it with web_fetch"))  # fmt: skip
    if isinstance(slot.error, ToolError):
        return _why(slot.error)
    if isinstance(slot.error, MemoryError):
        return _why(ToolError(ErrorCode.TOO_LARGE, "the page needed more memory than the "
                              "call may take; fetch it with web_fetch"))  # fmt: skip
    if slot.error is not None or slot.page is None:
        return _why(ToolError(ErrorCode.API_ERROR, f"could not be read ({slot.error!r:.200})"))
    if room < MIN_ROOM:
        return _no_room()
    return slot.read if slot.read is not None else _passages_of(slot.page, query, room, budget)


def _passages_of(page: Any, query: str, room: int, budget: int) -> dict[str, Any]:
    """The page's passages and what web-fetch warns of it (HIDDEN_TEXT: text a person would
    not see was left out, NEEDS_JAVASCRIPT...), the warnings first in the room: they say how
    far the passages can be trusted."""
    from ikigai_web.common.text import compact
    from ikigai_web.fetch.page_lines import page_passages

    warned = page.document.warnings[:MAX_WARNINGS]
    noted = {"warnings": warned} if warned else {}
    room -= len(compact(noted))
    if room < MIN_ROOM:
        return _no_room()
    found = page_passages(page, query, min(PAGE_CHARS, room), room, budget)
    wall = {"wall": found["wall"]} if "wall" in found else {}
    return {k: found[k] for k in _FIELDS} | wall | noted


def _no_room() -> dict[str, Any]:
    from ikigai_web.common.errors import ErrorCode, ToolError

    return _why(ToolError(ErrorCode.TOO_LARGE, "no room was left in the output budget for its "
                          "passages; fetch it with web_fetch and a query"))  # fmt: skip


def _why(error: ToolError) -> dict[str, Any]:
    """A page's failure as the answer's `read` says it: the failure's JSON (common/runner.py,
    the one place a ToolError becomes JSON) without its `success`."""
    from ikigai_web.common.runner import failure

    return {k: v for k, v in failure(error).items() if k not in ("success", "_event")}
