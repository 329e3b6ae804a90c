"""What every search tool shares around its provider call.

Every search tool module offers the same small in-process entry point: `execute(raw,
settings)` (its own arguments and the settings in; the success object out, or a ToolError
raised) and `arguments(request)`, which turns the common `Request` into its own arguments.
The fallback tool calls providers through exactly these two, and so does the protocol runner.
"""

from __future__ import annotations

import html
import math
import re
import time
from datetime import date
from functools import cache, partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common import answers
from ikigai_web.common.answers import PERSON, Reader
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.text import visible
from ikigai_web.search.domains import Fetch, Page, Result, fan_out, keep

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Call, Client, Deadline, Reply

TIME_FILTERS = ("day", "week", "month", "year")
MAX_URL = 4096
MAX_TITLE = 500
MAX_SNIPPET = 2000
MAX_EXTRA_SNIPPETS = 5


class Request(NamedTuple):
    """The parameters every search tool understands, as the fallback tool takes them."""

    query: str
    count: int = 10  # type: ignore[assignment] # shadows tuple.count, which nothing calls
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    time_filter: str | None = None  # one of TIME_FILTERS

    def arguments(self, count: tuple[str, int], time: tuple[str, str]) -> dict[str, Any]:
        """This request in one tool's own spelling: `count` is that tool's name for the
        number of results and its maximum, `time` its name and value for the time filter."""
        return {
            "query": self.query,
            count[0]: min(self.count, count[1]),
            "allowed_domains": list(self.allowed),
            "blocked_domains": list(self.blocked),
            time[0]: time[1],
        }


class Link(NamedTuple):
    """One call's connection to its provider: the client and the deadline it shares."""

    http: Client
    deadline: Deadline
    heard: Callable[[Reply], None] | None = None  # learns each answer's rate-limit headers
    credential: str = ""  # the API key of this request, when the provider has keys: its turn came

    def get_json(
        self,
        request: Call,
        provider: str,
        error_for: Callable[[Reply], ToolError],
        wait_hint: Callable[[Reply], int | None] | None = None,
    ) -> Any:
        """The JSON of a 200 answer; any other answer raised as `error_for` reads it."""
        from ikigai_web.net.http import send

        # A paced request's 429 goes back for a turn of its own (ikigai_web/search/pacing.py),
        # rather than being retried here out of turn, where it would take another caller's.
        hint = _no_retry if self.heard is not None else wait_hint
        reply = send(self.http, request, self.deadline, hint)
        if self.heard is not None:
            self.heard(reply)
        if reply.status != 200:
            raise error_for(reply)
        return reply.json(provider)


def _no_retry(_: Reply) -> None:
    return None


def search(
    provider: str,
    settings: Settings,
    fetch: Callable[[Link, str | None, int], Page],
    plan: tuple[int, Sequence[str], Sequence[str]],
    cache_key: object,
    *,
    keys: Sequence[str] = (),
    read: tuple[str, int] = ("", 0),
    **client_options: Any,
) -> dict[str, Any]:
    """The success object for one search; `fetch(link, site, n)` makes one provider request.

    `plan` is (count, allowed, blocked). `fetch` gets the single domain to restrict to
    natively (or None) and how many results to ask for. Several allowed domains fan out in
    parallel; blocked domains always apply last. With `keys` (the provider's API keys),
    `fetch` gets one of them as `link.credential`, once its turn has come
    (ikigai_web/search/pacing.py). `read` is the query and how many results to read
    (ikigai_web/search/reading.py), after the search, within the same deadline.
    """
    # Imported here: the cache, the runner and HTTP are for a call, never for `--schema`.
    from ikigai_web.common import cache, state
    from ikigai_web.common.runner import scrub, warning
    from ikigai_web.net import wire
    from ikigai_web.net.http import Deadline, client

    # What the search reads past the cache, read before it (its caller read its own).
    settings.check("timeout", *[] if "user_agent" in client_options else ["user_agent"])
    settings.check(*["rate_limits", "redis_url"] if keys else [])
    started = time.monotonic()
    if read[1]:
        from ikigai_web.search.reading import prepare

        prepare()  # while the provider answers
    key = [provider, cache_key]
    hit = cache.get("search", key, settings.cache_ttl, valid=_is_answer)
    if hit.value is not None:
        return _read({**hit.value, "cached": True}, read, settings, started)
    deadline = Deadline.of_call(settings.timeout)
    with client(settings, deadline, wire.open_call, **client_options) as http:
        link = Link(http, deadline)
        ask = _paced(provider, keys, settings, link, fetch) if keys else partial(fetch, link)
        found = _collect(ask, *plan)
    results, extra, failures, complete = found
    out: dict[str, Any] = {"success": True, "provider": provider}
    out |= {"results": results, "count": len(results), **extra}
    not_stored = None
    if failures:
        out["warnings"] = [warning(f) for f in failures]
    elif complete:
        # A provider may echo the key in its answer: the cache never stores it.
        not_stored = cache.put("search", key, scrub(out), settings.cache_ttl)
    notes = cache.warnings(hit.warning, not_stored) + (state.store().warnings if keys else [])
    if notes:
        out["warnings"] = [*out.get("warnings", []), *notes]
    return _read(out, read, settings, started)


def _read(
    answer: dict[str, Any], read: tuple[str, int], settings: Settings, started: float
) -> dict[str, Any]:
    """The answer, its first results read when `read` asks for it (never stored so: each
    page is in web-fetch's cache, and the search's cache holds the results alone)."""
    if not read[1]:
        return answer
    from ikigai_web.search.reading import read_results

    return read_results(answer, read[0], read[1], settings, started)


def _paced(
    provider: str,
    keys: Sequence[str],
    settings: Settings,
    link: Link,
    fetch: Callable[..., Page],
) -> Fetch:
    """`fetch` with one of `keys` in its turn, learning from each answer it gets."""
    from ikigai_web.search.pacing import Keyring

    ring = Keyring(provider, keys, settings, link.deadline)

    def one(site: str | None, count: int) -> Page:
        def ask(chosen: str) -> Page:
            return fetch(link._replace(heard=ring.heard(chosen), credential=chosen), site, count)

        return ring.call(ask)

    return one


def _is_answer(value: Any) -> bool:
    """A cache entry is a search answer in the contract's shape, or a corrupt entry."""
    results = value.get("results") if isinstance(value, dict) else None
    if not isinstance(results, list) or value.get("count") != len(results):
        return False
    shape = value.get("success") is True and isinstance(value.get("provider"), str)
    return shape and all(map(_is_result, results))


def _is_result(item: Any) -> bool:
    return isinstance(item, dict) and all(
        isinstance(item.get(k), str) for k in ("title", "url", "snippet")
    )


def _collect(
    fetch: Fetch, count: int, allowed: Sequence[str], blocked: Sequence[str]
) -> tuple[list[Result], Mapping[str, Any], list[ToolError], bool]:
    if len(allowed) > 1:
        results, failures = fan_out(fetch, allowed, count)
        return keep(results, allowed, blocked), {}, failures, True
    page = fetch(allowed[0] if allowed else None, count)
    return keep(page.results, allowed, blocked)[:count], page.extra, [], page.complete


# --- shaping a provider's answer ------------------------------------------------------------

_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def plain(text: object, most: int = MAX_SNIPPET) -> str:
    """Provider text as plain text: highlight markup removed, entities decoded, invisible
    characters dropped, spaces folded, at most `most` characters.

    Secrets are masked before the cut: a provider may echo the key, and a cut key would no
    longer be recognised when the answer is written.
    """
    from ikigai_web.common.redact import mask

    if not isinstance(text, str):
        return ""
    clean = visible(_SPACE.sub(" ", html.unescape(_TAG.sub("", text)))).strip()
    return cut(mask(clean), most)


def prose(text: object, most: int = 500) -> str:
    """A provider's own plain-text message (an error's detail): secrets masked, invisible
    characters dropped, spaces folded, cut; markup-looking words such as <empty> are kept."""
    from ikigai_web.common.redact import mask

    if not isinstance(text, str):
        return ""
    return cut(mask(visible(" ".join(text.split()))), most)


def cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 1].rstrip() + "…"


def result(title: object, url: object, snippet: object, **extra: Any) -> Result | None:
    """One result in the shared shape, or None when the URL is not one a person should be
    sent to; extras with no value are left out."""
    link = web_url(url)
    if link is None or not isinstance(title, str):
        return None
    out: Result = {
        "title": plain(title, MAX_TITLE) or link,
        "url": link,
        "snippet": plain(snippet),
    }
    return out | {k: v for k, v in extra.items() if v not in (None, "", [])}


def shaped(items: object, make: Callable[[dict[str, Any]], Result | None]) -> list[Result]:
    """`make` applied to each object of a provider's list; an item it cannot read is dropped."""
    out = []
    for item in as_list(items):
        try:
            made = make(item) if isinstance(item, dict) else None
        except _SHAPE_ERRORS:
            made = None
        if made is not None:
            out.append(made)
    return out


def web_url(url: object) -> str | None:
    """`url` when it is an http(s) URL with a host, read as a browser reads it, without
    user-info, whitespace or excessive length; else None."""
    from ikigai_web.search.domains import browser_split

    if not isinstance(url, str) or len(url) > MAX_URL or re.search(r"\s", url):
        return None
    parts = browser_split(url)
    if parts is None or parts.scheme not in ("http", "https") or "@" in parts.netloc:
        return None
    return url if parts.hostname else None


def snippets(value: object) -> list[str]:
    """A provider's list of extra snippets, plain and bounded."""
    texts = (plain(s, MAX_SNIPPET // 2) for s in as_list(value) if isinstance(s, str))
    return [s for s in texts if s][:MAX_EXTRA_SNIPPETS]


def as_dict(value: object) -> dict[str, Any]:
    """A JSON object from a provider, or {} when it is anything else."""
    return value if isinstance(value, dict) else {}


def as_list(value: object) -> list[Any]:
    """A JSON array from a provider, or [] when it is anything else."""
    return value if isinstance(value, list) else []


def iso_date(value: object) -> str | None:
    """The YYYY-MM-DD an ISO 8601 date or date-time starts with; None for anything else."""
    if not isinstance(value, str) or len(value) < 10:
        return None
    try:
        return date.fromisoformat(value[:10]).isoformat()
    except ValueError:
        return None


def not_an_object(provider: str) -> ToolError:
    return ToolError(
        ErrorCode.API_ERROR,
        f"{provider} answered HTTP 200 with JSON that is not an object; try again later",
    )


# --- provider answers every search tool reads the same way ----------------------------------


def rate_limited(key: str, said: str, why: str, wait: int | None) -> ToolError:
    """RATE_LIMIT: what is used up, when to try again (`wait`, never past the longest hold
    the provider documents), and which tools work right now."""
    from ikigai_web.common.credentials import PROVIDERS, alternatives, event
    from ikigai_web.search.registry import longest_hold

    provider = PROVIDERS[key]
    if wait is not None:
        wait = max(0, min(wait, math.ceil(longest_hold(key))))
    others = alternatives(provider.tool)
    when = f"Try again in {wait} s" if wait is not None else "Try again later"
    message = f"{said}. {why}. {when}, or use another search tool: {', '.join(others)}."
    rate_event = event(provider, "rate_limit", others, wait)
    return ToolError(ErrorCode.RATE_LIMIT, message, retry_after=wait, event=rate_event)


def rejected(key: str, said: str, advice: str) -> ToolError:
    """AUTH_INVALID: the provider refused the configured credential."""
    from ikigai_web.common.credentials import PROVIDERS, event

    provider = PROVIDERS[key]
    return ToolError(
        ErrorCode.AUTH_INVALID, f"{said}. {advice}", event=event(provider, "auth_invalid")
    )


# --- the answer's shape: each search tool's MCP outputSchema ----------------------------------

# What a result may carry beyond title, url and snippet, and an answer beyond its results
# (protocol.md, section 6); each tool names those it gives. web_search_auto relays any.
RESULT_EXTRAS: dict[str, dict[str, Any]] = {
    "published": {"type": "string", "description": "The page's date, YYYY-MM-DD."},
    "age": {"type": "string", "description": "Brave's own words, e.g. 3 days ago."},
    "extra_snippets": {
        "type": "array",
        "items": {"type": "string"},
        "description": "More excerpts of the page (Brave).",
    },
    "engines": {
        "type": "array",
        "items": {"type": "string"},
        "description": "The SearXNG engines that found it.",
    },
    "score": {"type": "number", "description": "Tavily's relevance, 0 to 1."},
}
ANSWER_EXTRAS: dict[str, dict[str, Any]] = {
    "next_offset": {
        "type": "integer",
        "description": "More results exist: pass this as offset (SearXNG: page).",
    },
    "next_start": {
        "type": "integer",
        "description": "More results exist: pass this as start.",
    },
    "answer": {"type": "string", "description": "An answer written from the results."},
    "search_queries": {
        "type": "array",
        "items": {"type": "string"},
        "description": "The queries Google ran (Gemini).",
    },
    "search_entry_point": {
        "type": "string",
        "description": "Google's Search Suggestions, as HTML to show the user (Gemini).",
    },
    "answers": {
        "type": "array",
        "items": {"type": "string"},
        "description": "SearXNG's direct answers.",
    },
    "suggestions": {
        "type": "array",
        "items": {"type": "string"},
        "description": "Queries SearXNG suggests.",
    },
    "infoboxes": {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {k: {"type": "string"} for k in ("title", "content", "url")},
        },
        "description": "SearXNG's infoboxes.",
    },
}


def provider_name(key: str) -> str:
    """The name answers show provider `key` by, from its declaration; else the key itself."""
    from ikigai_web.search.registry import declared

    found = declared(key)
    return found.name if found else key


def lazy_output_schema(
    results: Sequence[str] = (), extras: Sequence[str] = (), required: Sequence[str] = ()
) -> Callable[[str], Any]:
    """A search tool module's `__getattr__`, which builds its OUTPUT_SCHEMA (see output_schema)
    when first read: the schema names every provider, and reading every declaration costs a
    search's start-up what only an MCP host needs."""

    @cache
    def schema() -> dict[str, Any]:
        return output_schema(results, extras, required)

    def attribute(name: str) -> Any:
        if name == "OUTPUT_SCHEMA":
            return schema()
        raise AttributeError(name)

    return attribute


def output_schema(
    results: Sequence[str] = (), extras: Sequence[str] = (), required: Sequence[str] = ()
) -> dict[str, Any]:
    """The outputSchema of a search tool whose results may carry `results` (names of
    RESULT_EXTRAS) and whose answer may carry `extras` (of ANSWER_EXTRAS), `required` always."""
    from ikigai_web.search.reading import result_read
    from ikigai_web.search.registry import every

    shared = {k: {"type": "string"} for k in ("title", "url", "snippet")}
    result_schema = {
        "type": "object",
        "properties": shared | {k: RESULT_EXTRAS[k] for k in results} | {"read": result_read()},
        "required": ["title", "url", "snippet"],
    }
    properties: dict[str, Any] = {
        "provider": {"type": "string", "description": "Who answered: " + ", ".join(every())},
        "results": {"type": "array", "items": result_schema, "description": "In rank order."},
        "count": {"type": "integer", "description": "How many results there are."},
    }
    properties |= {k: ANSWER_EXTRAS[k] for k in extras}
    return answers.output_schema(
        "Search results.", properties, ["provider", "results", "count", *required]
    )


# --- for a person (--format markdown) and for the model (MCP) --------------------------------


def markdown(
    call: Mapping[str, Any], answer: Mapping[str, Any], reader: Reader = PERSON, paging: str = ""
) -> str:
    """Search results in the original design's format: numbered results under the query,
    the provider's own answers first, notes after, then how to get more, when `paging` (the
    tool's parameter that takes next_offset or next_start) is given and there is more."""
    name = provider_name(str(answer.get("provider")))
    lines = [f"# Search Results for: {call.get('query', '')}", f"Search engine: {name}", ""]
    lines += _answers(answer)
    blocks = [_block(n, r) for n, r in enumerate(answer.get("results", []), 1)]
    lines += ["\n---\n\n".join(blocks) if blocks else "No results.\n"]
    lines += [f"Note: {w['message']}" for w in answer.get("warnings", [])]
    if suggested := answer.get("suggestions"):
        lines += ["Suggested searches: " + "; ".join(suggested)]
    following = answer.get("next_offset", answer.get("next_start"))
    if paging and isinstance(following, int):
        lines += [f"[More results: {reader.next_part(paging, following)}]"]
    return "\n".join(lines)


def _answers(answer: Mapping[str, Any]) -> list[str]:
    """The provider's own answers, each a paragraph: Tavily's, SearXNG's and its infoboxes."""
    said = [answer["answer"]] if answer.get("answer") else []
    said += answer.get("answers", [])
    lines = [f"Answer: {text}\n" for text in said]
    for box in answer.get("infoboxes", []):
        where = f" ({box['url']})" if box.get("url") else ""
        lines += [f"Infobox: {box.get('title', '')}{where}\n{box.get('content', '')}".rstrip()]
        lines[-1] += "\n"
    return lines


def _block(number: int, item: Mapping[str, Any]) -> str:
    text = f"## Result {number}: {item['title']}\nSource: {item['url']}\n"
    if item.get("published"):
        text += f"Published: {item['published']}\n"
    said = (s for s in (item["snippet"], *item.get("extra_snippets", [])) if s)
    return text + "".join(f"\n{s}\n" for s in said) + read_block(item)


def read_block(item: Mapping[str, Any]) -> str:
    """A result's page as read (`read`): its passages, or why it has none."""
    read = item.get("read")
    if not isinstance(read, dict):
        return ""
    if "error" in read:
        return f"\n[Not read: {read['error']}]\n"
    if not read.get("content"):
        return (
            f"\n[Read: no passage matches the query; the page has {read['total_lines']} lines.]\n"
        )
    return f"\nFrom the page:\n\n{read['content']}\n"
