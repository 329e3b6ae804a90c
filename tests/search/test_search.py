"""The shared search flow: domain plan, post-filter, warnings, cache; result shaping."""

from __future__ import annotations

import time

import orjson
import pytest

from ikigai_web.common import cache
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.settings import cache_dir, load
from ikigai_web.search.domains import Page
from ikigai_web.search.kit import (
    as_dict,
    as_list,
    iso_date,
    markdown,
    plain,
    result,
    search,
    shaped,
)


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
    out = search("p", load(), fetch, (2, [], []), "key")
    assert out["count"] == 2
    [warning] = out["warnings"]
    assert warning["code"] == "CACHE"
    assert warning["message"].startswith("a corrupt cache entry was discarded")
    again = search("p", load(), fetch, (2, [], []), "key")
    assert again == {k: v for k, v in out.items() if k != "warnings"} | {"cached": True}
    assert len(fetch.calls) == 1


def test_an_unusable_cache_is_reported_after_the_providers_warnings():
    cache_dir().parent.mkdir(parents=True)
    cache_dir().write_text("in the way")
    out = search("p", load(), Recorder(fail={"b.com"}), (4, ["a.com", "b.com"], []), "k6")
    assert [w["code"] for w in out["warnings"]] == ["API_ERROR"]  # not stored: no cache note
    out = search("p", load(), Recorder(), (2, [], []), "k7")
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


@pytest.mark.parametrize(
    "url",
    [
        "",
        "https://",
        "javascript:alert(1)",
        "data:text/html,<script>x</script>",
        "vbscript:msgbox",
        "ftp://files.example/x",
        "https://user:pw@example.com/",
        "https://user@example.com/",
        "https://exa mple.com/",
        "https://example.com/a b",
        "https://example.com/\n",
        "https://example.com:99999/",
        "https://example.com/" + "a" * 5000,
        None,
        42,
    ],
)
def test_results_whose_url_a_person_should_not_be_sent_to_are_dropped(url):
    assert result("t", url, "s") is None


def test_browser_forms_of_a_good_url_are_kept():
    kept = result("t", "https://EXAMPLE.com/a?q=1#x", "s")
    assert kept is not None
    assert kept["url"] == "https://EXAMPLE.com/a?q=1#x"
    assert result("t", "http://[2001:db8::1]:8080/", "s") is not None


@pytest.mark.parametrize(
    ("text", "clean"),
    [
        ("evil\u202egnp.exe", "evilgnp.exe"),
        ("zero\u200bwidth\u200djoin\ufeff", "zerowidthjoin"),
        ("bell\x07 and \x1b[31mred", "bell and red"),  # the escape sequence whole
        ("isolate\u2066x\u2069", "isolatex"),
        ("c1\x80\x9bcontrols", "c1controls"),
        ("next\x85line", "next line"),
    ],
)
def test_titles_and_snippets_lose_control_bidi_and_zero_width_characters(text, clean):
    out = result(text, "https://a.com/", text)
    assert out is not None
    assert (out["title"], out["snippet"]) == (clean, clean)


def test_provider_text_is_bounded():
    out = result("t" * 10_000, "https://a.com/", "s" * 50_000)
    assert out is not None
    assert len(out["title"]) <= 500
    assert len(out["snippet"]) <= 2000
    assert out["snippet"].endswith("…")


def test_shaped_drops_what_it_cannot_read():
    items = [
        {"title": "a", "url": "https://a.com/"},
        {"title": "b"},
        "junk",
        None,
        {"title": 5, "url": "https://c.com/"},
        {"title": "d", "url": "https://d.com/"},
    ]

    def make(item):
        return result(item["title"], item["url"], None)

    assert [r["url"] for r in shaped(items, make)] == ["https://a.com/", "https://d.com/"]
    assert shaped({"not": "a list"}, make) == []


@pytest.mark.parametrize(
    ("url", "allowed", "blocked", "kept"),
    [
        ("https://evil.com\\@wikipedia.org/", ["wikipedia.org"], [], False),
        ("https://evil.com\\@wikipedia.org/", [], ["evil.com"], False),
        ("https://wikipedia.org@evil.com/", ["wikipedia.org"], [], False),
        ("https://evil.com./x", [], ["evil.com"], False),
        ("https://EVIL%2ecom/x", [], ["evil.com"], False),
        ("https:evil.com/x", [], ["evil.com"], False),
        ("https:///evil.com/x", [], ["evil.com"], False),
        (" https://evil.com/x", [], ["evil.com"], False),
        ("https://en.wikipedia.org/wiki/X", ["wikipedia.org"], [], True),
        ("https://notwikipedia.org/", ["wikipedia.org"], [], False),
    ],
)
def test_domain_filters_judge_urls_as_a_browser_does(url, allowed, blocked, kept):
    from ikigai_web.search.domains import keep

    assert bool(keep([{"url": url}], allowed, blocked)) is kept


def test_markdown_is_the_original_designs_format():
    answer = {
        "success": True,
        "provider": "brave",
        "results": [
            {"title": "One", "url": "https://a.com/1", "snippet": "First."},
            {"title": "Two", "url": "https://b.com/2", "snippet": ""},
        ],
        "count": 2,
        "warnings": [{"code": "API_ERROR", "message": "b.com: down"}],
    }
    assert markdown({"query": "rust"}, answer) == (
        "# Search Results for: rust\nSearch engine: Brave Search\n\n"
        "## Result 1: One\nSource: https://a.com/1\n\nFirst.\n\n---\n\n"
        "## Result 2: Two\nSource: https://b.com/2\n\nNote: b.com: down"
    )
    empty = markdown({"query": "x"}, {"provider": "duckduckgo", "results": [], "answer": "42"})
    assert (
        empty == "# Search Results for: x\nSearch engine: DuckDuckGo\n\nAnswer: 42\n\nNo results.\n"
    )


def test_rate_limit_says_when_to_retry_and_not_how_to_sign_up(monkeypatch):
    from ikigai_web.search.pacing import rate_limited

    monkeypatch.setenv("BRAVE_API_KEY", "BSA-configured-already")
    err = rate_limited("brave", "Brave answered HTTP 429", "Brave's quota is used up", 40)
    assert err.code is ErrorCode.RATE_LIMIT
    assert err.retry_after == 40
    assert "Try again in 40 s" in err.message
    assert err.event is not None
    content = err.event["content"]
    assert content.startswith("⚠ Rate Limit Reached")
    assert "Try again in 40 s." in content
    for sign_up in ("Configuration Required", "export", "Sign up", "credentials.json"):
        assert sign_up not in content
    assert err.event["data"]["error_type"] == "rate_limit"


def test_a_secret_echoed_in_a_success_never_reaches_the_cache(isolated_env, tmp_path):
    from ikigai_web.common.redact import register_secret

    register_secret("echo-me-SECRET-99")

    def fetch(_link, site, n):
        return Page([{"title": "t", "url": "https://a.com/", "snippet": "key echo-me-SECRET-99"}])

    out = search("p", load(), fetch, (1, [], []), "echo")
    assert out["results"][0]["snippet"] == "key echo-me-SECRET-99"  # the runner masks output
    stored = b"".join(f.read_bytes() for f in (tmp_path / "cache").rglob("*") if f.is_file())
    assert stored
    assert b"echo-me-SECRET-99" not in stored
