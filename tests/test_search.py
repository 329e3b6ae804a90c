"""The shared search flow: domain plan, post-filter, warnings, cache; result shaping."""

from __future__ import annotations

import time

import orjson
import pytest

from common import cache
from common.domains import Page
from common.errors import ErrorCode, ToolError
from common.search import as_dict, as_list, iso_date, plain, result, search
from common.settings import cache_dir


def r(url: str) -> dict[str, str]:
    return {"title": "t", "url": url, "snippet": "s"}


class Recorder:
    def __init__(self, fail: set[str] | None = None) -> None:
        self.calls: list[tuple[str | None, int]] = []
        self.fail = fail or set()

    def __call__(self, site: str | None, n: int) -> Page:
        self.calls.append((site, n))
        if site in self.fail:
            raise ToolError(ErrorCode.API_ERROR, "HTTP 500")
        host = site or "any.com"
        rows = [r(f"https://{host}/{i}") for i in range(n)] + [r("https://blocked.com/x")]
        return Page(rows, more=True, extra={"next_offset": 1})


def test_no_domains_one_call_with_extras():
    fetch = Recorder()
    out = search("p", fetch, 3, [], ["blocked.com"], "k1")
    assert fetch.calls == [(None, 3)]
    assert out["success"] is True
    assert out["provider"] == "p"
    assert [x["url"] for x in out["results"]] == [f"https://any.com/{i}" for i in range(3)]
    assert out["count"] == 3
    assert out["next_offset"] == 1
    assert "warnings" not in out


def test_one_allowed_domain_is_native_and_post_filtered():
    fetch = Recorder()
    out = search("p", fetch, 2, ["a.com"], [], "k2")
    assert fetch.calls == [("a.com", 2)]
    assert all(x["url"].startswith("https://a.com/") for x in out["results"])


def test_several_allowed_domains_fan_out_and_blocked_still_applies():
    fetch = Recorder()
    out = search("p", fetch, 4, ["a.com", "b.com"], ["b.com"], "k3")
    assert sorted(fetch.calls) == [("a.com", 2), ("b.com", 2)]
    assert [x["url"] for x in out["results"]] == ["https://a.com/0", "https://a.com/1"]
    assert "next_offset" not in out


def test_partial_failure_is_a_warning_and_not_cached():
    fetch = Recorder(fail={"b.com"})
    out = search("p", fetch, 4, ["a.com", "b.com"], [], "k4")
    assert out["warnings"] == [{"code": "API_ERROR", "message": "b.com: HTTP 500"}]
    assert out["count"] == 2
    search("p", fetch, 4, ["a.com", "b.com"], [], "k4")
    assert len(fetch.calls) == 4


def test_incomplete_answer_is_shown_but_not_cached():
    calls = []

    def fetch(site, n):
        calls.append(site)
        warning = {"code": "RATE_LIMIT", "message": "page 2 blocked"}
        return Page([r("https://a.com/1")], extra={"warnings": [warning]}, complete=False)

    out = search("p", fetch, 5, [], [], "kw")
    assert out["warnings"] == [{"code": "RATE_LIMIT", "message": "page 2 blocked"}]
    search("p", fetch, 5, [], [], "kw")
    assert len(calls) == 2


def test_success_is_cached_per_key(monkeypatch):
    fetch = Recorder()
    first = search("p", fetch, 2, [], [], "same")
    second = search("p", fetch, 2, [], [], "same")
    assert len(fetch.calls) == 1
    assert second == first | {"cached": True}
    search("p", fetch, 2, [], [], "other")
    assert len(fetch.calls) == 2
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", "0")
    search("p", fetch, 2, [], [], "same")
    assert len(fetch.calls) == 3


def _answer(**changes):
    rows = [r("https://any.com/0")]
    return {"success": True, "provider": "p", "results": rows, "count": 1} | changes


CORRUPT_ANSWERS = {
    "truncated": lambda: orjson.dumps({"stored": time.time(), "value": _answer()})[:-5],
    "a JSON array": lambda: b"[]",
    "a list for the answer": lambda: _entry([]),
    "a number for a title": lambda: _entry(_answer(results=[r("https://a.com/") | {"title": 1}])),
    "a result that is text": lambda: _entry(_answer(results=["https://a.com/"])),
    "results that are an object": lambda: _entry(_answer(results={})),
    "a count that disagrees": lambda: _entry(_answer(count=5)),
    "a failure": lambda: _entry(_answer(success=False)),
    "no provider": lambda: _entry({k: v for k, v in _answer().items() if k != "provider"}),
    "stored in the future": lambda: _entry(_answer(), ahead=3600),
}


def _entry(value, ahead=0.0):
    return orjson.dumps({"stored": time.time() + ahead, "value": value})


@pytest.mark.parametrize("kind", CORRUPT_ANSWERS)
def test_a_corrupt_entry_is_replaced_and_reported(kind):
    path = cache._entry_path("search", ["p", "key"])
    path.parent.mkdir(parents=True)
    path.write_bytes(CORRUPT_ANSWERS[kind]())
    fetch = Recorder()
    out = search("p", fetch, 2, [], [], "key")
    assert out["count"] == 2
    [warning] = out["warnings"]
    assert warning["code"] == "CACHE"
    assert warning["message"].startswith("a corrupt cache entry was discarded")
    again = search("p", fetch, 2, [], [], "key")
    assert again == {k: v for k, v in out.items() if k != "warnings"} | {"cached": True}
    assert len(fetch.calls) == 1


def test_an_unusable_cache_is_reported_after_the_providers_warnings():
    cache_dir().parent.mkdir(parents=True)
    cache_dir().write_text("in the way")
    out = search("p", Recorder(fail={"b.com"}), 4, ["a.com", "b.com"], [], "k6")
    assert [w["code"] for w in out["warnings"]] == ["API_ERROR"]  # not stored: no cache note
    out = search("p", Recorder(), 2, [], [], "k7")
    assert out["count"] == 2
    assert out["warnings"] == [
        {
            "code": "CACHE",
            "message": f"the cache at {cache_dir()} was skipped "
            f"({cache_dir()} is a file, not a directory)",
        }
    ]


def test_failures_propagate():
    with pytest.raises(ToolError):
        search("p", Recorder(fail={"a.com"}), 2, ["a.com"], [], "k5")


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (
            "<strong>Ikigai</strong> is &quot;a reason&quot; &amp; more",
            'Ikigai is "a reason" & more',
        ),
        ("  many \n\t spaces  ", "many spaces"),
        ("&lt;b&gt;literal&lt;/b&gt;", "<b>literal</b>"),
        (None, ""),
        (5, ""),
    ],
)
def test_plain(raw, text):
    assert plain(raw) == text


def test_result_drops_empty_extras():
    out = result("<b>T</b>", "https://a.com", None, age="1 day", published=None, extra_snippets=[])
    assert out == {"title": "T", "url": "https://a.com", "snippet": "", "age": "1 day"}


@pytest.mark.parametrize(
    ("value", "day"),
    [
        ("2024-11-02T08:15:41", "2024-11-02"),
        ("2024-11-02", "2024-11-02"),
        ("2024-13-02T00:00:00", None),
        ("not-a-date", None),
        ("2024", None),
        (None, None),
        (20241102, None),
    ],
)
def test_iso_date(value, day):
    assert iso_date(value) == day


def test_json_navigation_helpers():
    assert as_dict({"a": 1}) == {"a": 1}
    assert as_dict([1]) == {}
    assert as_list([1]) == [1]
    assert as_list({"a": 1}) == []
    assert as_list(None) == []
