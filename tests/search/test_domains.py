"""Domain filters: normalising, host matching, count split, parallel fan-out and merging."""

from __future__ import annotations

import threading

import pytest

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.search import domains as d


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("Example.COM", "example.com"),
        ("  example.com  ", "example.com"),
        ("https://www.example.com/path?q=1#x", "www.example.com"),
        ("example.com:8080", "example.com"),
        ("user:pw@example.com", "example.com"),
        ("*.example.com", "example.com"),
        (".example.com", "example.com"),
        ("example.com.", "example.com"),
        ("bücher.de", "xn--bcher-kva.de"),
        ("gov", "gov"),
    ],
)
def test_normalise(entry, expected):
    assert d.normalise([entry], "allowed_domains") == [expected]


@pytest.mark.parametrize(
    "entry", ["", "   ", "exa mple.com", "-bad.com", "a..b", "http://", "x" * 64 + ".com"]
)
def test_normalise_rejects_non_hostnames(entry):
    with pytest.raises(ToolError) as info:
        d.normalise(["ok.com", entry], "blocked_domains")
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert "'blocked_domains'" in info.value.message


def test_normalise_drops_duplicates_keeping_order():
    assert d.normalise(["b.com", "A.com", "https://b.com/x"], "x") == ["b.com", "a.com"]


@pytest.mark.parametrize(
    ("url", "hit"),
    [
        ("https://example.com/a", True),
        ("https://docs.example.com/a", True),
        ("https://EXAMPLE.com:443/a", True),
        ("https://user@example.com/", True),
        ("https://notexample.com/", False),
        ("https://example.com.evil.net/", False),
        ("https://evil.net/?u=example.com", False),
        ("https://evil.net/example.com", False),
        ("not a url", False),
        ("https://[::1/", False),
    ],
)
def test_matches_is_a_label_boundary_host_test(url, hit):
    assert d.matches(url, ["example.com"]) is hit


def test_matches_idn_hosts():
    assert d.matches("https://bücher.de/x", ["xn--bcher-kva.de"])


def test_keep_applies_allowed_then_blocked():
    rows = [{"url": u} for u in ("https://a.com/1", "https://x.a.com/2", "https://b.com/3")]
    assert d.keep(rows, [], []) == rows
    assert d.keep(rows, ["a.com"], []) == rows[:2]
    assert d.keep(rows, ["a.com"], ["x.a.com"]) == rows[:1]
    assert d.keep(rows, [], ["a.com"]) == rows[2:]


@pytest.mark.parametrize(
    ("count", "n", "shares"),
    [
        (10, 1, [10]),
        (10, 2, [5, 5]),
        (10, 3, [4, 3, 3]),
        (10, 11, [1] * 10 + [0]),
        (3, 2, [2, 1]),
        (3, 11, [1, 1, 1] + [0] * 8),
        (1, 3, [1, 0, 0]),
    ],
)
def test_split(count, n, shares):
    assert d.split(count, n) == shares


def test_url_key_ignores_scheme_host_case_and_fragment_only():
    assert d.url_key("HTTPS://Example.COM/Path#frag") == "https://example.com/Path"
    assert d.url_key("https://example.com/Path") != d.url_key("https://example.com/path")


def r(url: str) -> dict[str, str]:
    return {"title": url, "url": url, "snippet": ""}


def test_merge_round_robin_dedup_and_cap():
    pages = [
        [r("https://a.com/1"), r("https://a.com/2"), r("https://a.com/3")],
        [r("https://b.com/1"), r("HTTPS://A.com/1#top")],
        [r("https://c.com/1")],
    ]
    urls = [x["url"] for x in d.merge(pages, 10)]
    assert urls == [
        "https://a.com/1",
        "https://b.com/1",
        "https://c.com/1",
        "https://a.com/2",
        "https://a.com/3",
    ]
    assert len(d.merge(pages, 2)) == 2


def test_fan_out_runs_in_parallel_and_skips_zero_shares():
    domains = ["a.com", "b.com", "c.com", "d.com"]
    barrier = threading.Barrier(3, timeout=60)  # count 3 over 4 domains: d.com gets 0
    calls: list[tuple[str | None, int]] = []

    def fetch(site, n):
        calls.append((site, n))
        barrier.wait()  # would raise BrokenBarrierError if the calls ran one after another
        return d.Page([r(f"https://{site}/{i}") for i in range(n)])

    results, failures = d.fan_out(fetch, domains, 3)
    assert sorted(calls) == [("a.com", 1), ("b.com", 1), ("c.com", 1)]
    assert [x["url"] for x in results] == ["https://a.com/0", "https://b.com/0", "https://c.com/0"]
    assert failures == []


def test_fan_out_partial_failure_becomes_failures():
    def fetch(site, n):
        if site == "b.com":
            raise ToolError(ErrorCode.NETWORK_ERROR, "timeout")
        return d.Page([r(f"https://{site}/{i}") for i in range(n)])

    results, failures = d.fan_out(fetch, ["a.com", "b.com"], 4)
    assert [x["url"] for x in results] == ["https://a.com/0", "https://a.com/1"]
    assert [(f.code, f.message) for f in failures] == [(ErrorCode.NETWORK_ERROR, "b.com: timeout")]


@pytest.mark.parametrize(
    ("codes", "winner"),
    [
        (["API_ERROR", "NETWORK_ERROR", "RATE_LIMIT"], "RATE_LIMIT"),
        (["API_ERROR", "AUTH_INVALID", "NETWORK_ERROR"], "AUTH_INVALID"),
        (["API_ERROR", "NETWORK_ERROR"], "NETWORK_ERROR"),
        (["INVALID_INPUT", "API_ERROR"], "API_ERROR"),
    ],
)
def test_total_failure_reports_the_most_specific_error(codes, winner):
    by_site = dict(zip(["a.com", "b.com", "c.com"], codes, strict=False))

    def fetch(site, n):
        raise ToolError(ErrorCode(by_site[site]), "failed", retry_after=7)

    with pytest.raises(ToolError) as info:
        d.fan_out(fetch, list(by_site), 9)
    assert info.value.code.value == winner
    assert info.value.message.startswith("every domain failed; ")


def test_parse_reads_and_normalises_one_field():
    raw = {"allowed_domains": ["A.com", "https://b.org/x"], "blocked_domains": "nope"}
    assert d.parse(raw, "allowed_domains") == ("a.com", "b.org")
    assert d.parse({}, "blocked_domains") == ()
    with pytest.raises(ToolError) as info:
        d.parse(raw, "blocked_domains")
    assert "'blocked_domains'" in info.value.message
    with pytest.raises(ToolError):
        d.parse({"allowed_domains": ["a.com", "b.com"]}, "allowed_domains", most=1)


def test_schema_properties_describe_both_filters():
    assert set(d.SCHEMA_PROPERTIES) == {"allowed_domains", "blocked_domains"}
    for prop in d.SCHEMA_PROPERTIES.values():
        assert prop["type"] == "array"
        assert prop["items"] == {"type": "string"}
