"""The shared search flow: domain plan, post-filter, warnings, cache; result shaping."""

from __future__ import annotations

import pytest

from common.domains import Page
from common.errors import ErrorCode, ToolError
from common.search import as_dict, as_list, iso_date, plain, result, search
from common.settings import load


def r(url: str) -> dict[str, str]:
    return {"title": "t", "url": url, "snippet": "s"}


class Recorder:
    def __init__(self, fail: set[str] | None = None) -> None:
        self.calls: list[tuple[str | None, int]] = []
        self.fail = fail or set()

    def __call__(self, _link: object, site: str | None, n: int) -> Page:
        self.calls.append((site, n))
        if site in self.fail:
            raise ToolError(ErrorCode.API_ERROR, "HTTP 500")
        host = site or "any.com"
        rows = [r(f"https://{host}/{i}") for i in range(n)] + [r("https://blocked.com/x")]
        return Page(rows, more=True, extra={"next_offset": 1})


def test_no_domains_one_call_with_extras():
    fetch = Recorder()
    out = search("p", load(), fetch, (3, [], ["blocked.com"]), "k1")
    assert fetch.calls == [(None, 3)]
    assert out["success"] is True
    assert out["provider"] == "p"
    assert [x["url"] for x in out["results"]] == [f"https://any.com/{i}" for i in range(3)]
    assert out["count"] == 3
    assert out["next_offset"] == 1
    assert "warnings" not in out


def test_one_allowed_domain_is_native_and_post_filtered():
    fetch = Recorder()
    out = search("p", load(), fetch, (2, ["a.com"], []), "k2")
    assert fetch.calls == [("a.com", 2)]
    assert all(x["url"].startswith("https://a.com/") for x in out["results"])


def test_several_allowed_domains_fan_out_and_blocked_still_applies():
    fetch = Recorder()
    out = search("p", load(), fetch, (4, ["a.com", "b.com"], ["b.com"]), "k3")
    assert sorted(fetch.calls) == [("a.com", 2), ("b.com", 2)]
    assert [x["url"] for x in out["results"]] == ["https://a.com/0", "https://a.com/1"]
    assert "next_offset" not in out


def test_partial_failure_is_a_warning_and_not_cached():
    fetch = Recorder(fail={"b.com"})
    out = search("p", load(), fetch, (4, ["a.com", "b.com"], []), "k4")
    assert out["warnings"] == [{"code": "API_ERROR", "message": "b.com: HTTP 500"}]
    assert out["count"] == 2
    search("p", load(), fetch, (4, ["a.com", "b.com"], []), "k4")
    assert len(fetch.calls) == 4


def test_incomplete_answer_is_shown_but_not_cached():
    calls = []

    def fetch(_link, site, n):
        calls.append(site)
        warning = {"code": "RATE_LIMIT", "message": "page 2 blocked"}
        return Page([r("https://a.com/1")], extra={"warnings": [warning]}, complete=False)

    out = search("p", load(), fetch, (5, [], []), "kw")
    assert out["warnings"] == [{"code": "RATE_LIMIT", "message": "page 2 blocked"}]
    search("p", load(), fetch, (5, [], []), "kw")
    assert len(calls) == 2


def test_success_is_cached_per_key(monkeypatch):
    fetch = Recorder()
    first = search("p", load(), fetch, (2, [], []), "same")
    second = search("p", load(), fetch, (2, [], []), "same")
    assert len(fetch.calls) == 1
    assert second == first | {"cached": True}
    search("p", load(), fetch, (2, [], []), "other")
    assert len(fetch.calls) == 2
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", "0")
    search("p", load(), fetch, (2, [], []), "same")
    assert len(fetch.calls) == 3


def test_failures_propagate():
    with pytest.raises(ToolError):
        search("p", load(), Recorder(fail={"a.com"}), (2, ["a.com"], []), "k5")


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
