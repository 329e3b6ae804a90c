"""web-fetch without a server: input, the SSRF guard's classifier, decoding, paging, budget."""

from __future__ import annotations

import codecs
import ipaddress
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from ikigai_web.common import text
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.runner import answer
from ikigai_web.common.settings import Settings
from ikigai_web.fetch import page_lines, pipeline
from ikigai_web.fetch.network import guard, robots
from ikigai_web.fetch.network.session import canonical
from ikigai_web.fetch.pipeline import to_document
from ikigai_web.fetch.reading import decode
from ikigai_web.fetch.reading.document import Document
from ikigai_web.fetch.reading.files.pdf import pdf_document
from ikigai_web.tools import web_fetch

# ---------------------------------------------------------------- input


def test_parse_input_defaults_and_fragment_dropped():
    params = web_fetch.parse_input({"url": "  HTTPS://Example.com/a?b=1#frag "})
    assert params == web_fetch.Params(url="https://Example.com/a?b=1")


def test_parse_input_all_fields():
    raw = {"url": "http://e.com", "offset": 5, "limit": 10, "full_page": True}
    params = web_fetch.parse_input(raw | {"include_links": False})
    assert (params.offset, params.limit, params.full_page, params.include_links) == (
        5,
        10,
        True,
        False,
    )


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/file",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "example.com/page",
        "http://",
        "https:///path-only",
        "http://exa mple.com/",
        "http://example.com:99999/",
        "",
        "http://e.com/" + "a" * 5000,
    ],
)
def test_bad_urls_are_invalid_input(url):
    with pytest.raises(ToolError) as caught:
        web_fetch.parse_input({"url": url})
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert "'url'" in caught.value.message


@pytest.mark.parametrize(
    ("field", "value"),
    [("offset", 0), ("offset", -3), ("limit", -1), ("offset", "2"), ("full_page", "yes")],
)
def test_bad_options_are_invalid_input(field, value):
    with pytest.raises(ToolError) as caught:
        web_fetch.parse_input({"url": "https://e.com", field: value})
    assert caught.value.code is ErrorCode.INVALID_INPUT
    assert f"'{field}'" in caught.value.message


def test_invalid_input_through_the_protocol_runner():
    result, _ = answer(web_fetch.execute, {"url": "gopher://e.com/"}, web_fetch.SCHEMA)
    assert result["error_code"] == "INVALID_INPUT"
    assert "gopher://e.com/" in result["error"]


# ---------------------------------------------------------------- SSRF classifier

BLOCKED_ADDRESSES = [
    "127.0.0.1",
    "127.255.255.254",
    "10.0.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "100.64.0.1",
    "100.127.255.254",
    "169.254.169.254",
    "169.254.0.1",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "0.0.0.0",
    "0.1.2.3",
    "192.0.2.1",
    "198.18.0.1",
    "::",
    "::1",
    "fc00::1",
    "fd12:3456::1",
    "fe80::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:10.1.2.3",
    "::ffff:169.254.169.254",
    "::ffff:100.64.0.1",
    "::127.0.0.1",
    "::169.254.169.254",
    "2002:7f00:1::",
    "2002:a9fe:a9fe::1",
    "2002:c0a8:0101::",
    "64:ff9b::7f00:1",
    "64:ff9b::a9fe:a9fe",
    "64:ff9b::10.0.0.1",
    "64:ff9b:1::a00:1",
    "2001:0:4136:e378:8000:63bf:80ff:fffe",
    "2001:db8::1",
]


@pytest.mark.parametrize("address", BLOCKED_ADDRESSES)
def test_classifier_refuses(address):
    assert guard.blocked_reason(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"]
)
def test_classifier_allows_public(address):
    assert guard.blocked_reason(ipaddress.ip_address(address)) is None


def test_classifier_names_the_reason():
    assert "link-local" in str(guard.blocked_reason(ipaddress.ip_address("169.254.169.254")))
    assert "carrier-grade" in str(guard.blocked_reason(ipaddress.ip_address("100.64.1.1")))
    mapped = str(guard.blocked_reason(ipaddress.ip_address("::ffff:127.0.0.1")))
    assert "loopback" in mapped
    assert "embedded" in mapped


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f.0.0.1", "127.0.0.1"),
        ("0x7F000001", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("127.0.1", "127.0.0.1"),
        ("0", "0.0.0.0"),
        ("10.1", "10.0.0.1"),
        ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("2852039166", "169.254.169.254"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::1]", "::1"),
        ("[::ffff:7f00:1]", "::ffff:127.0.0.1"),
        ("8.8.8.8", "8.8.8.8"),
    ],
)
def test_literal_ip_reads_every_spelling(host, expected):
    assert guard.literal_ip(host) == ipaddress.ip_address(expected)


@pytest.mark.parametrize(
    "host", ["example.com", "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "09.1.1.1", "1e3", "a.1"]
)
def test_literal_ip_leaves_names_alone(host):
    assert guard.literal_ip(host) is None


BLOCKED_URL_FORMS = [
    "http://127.0.0.1/",
    "http://localhost/",
    "http://2130706433/",
    "http://0x7f.0.0.1/",
    "http://0177.0.0.1/",
    "http://127.1/",
    "http://017700000001/",
    "http://0x7f000001/",
    "http://10.0.0.1/",
    "http://172.16.5.4/",
    "http://192.168.0.1/",
    "http://100.64.0.1/",
    "http://169.254.169.254/latest/meta-data/",
    "http://2852039166/",
    "http://0xa9fea9fe/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://0.0.0.0/",
    "http://[::]/",
    "http://[::1]/",
    "http://[fc00::1]/",
    "http://[fd00::1]/",
    "http://[fe80::1]/",
    "http://[ff02::1]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[::127.0.0.1]/",
    "http://[2002:7f00:1::]/",
    "http://[64:ff9b::a9fe:a9fe]/",
]


@pytest.mark.parametrize("url", BLOCKED_URL_FORMS)
def test_every_private_form_is_blocked_by_default(url):
    result, _ = answer(web_fetch.execute, {"url": url}, web_fetch.SCHEMA)
    assert result["error_code"] == "BLOCKED_URL", result
    assert "IKIGAI_WEB_FETCH_ALLOW_PRIVATE" in result["error"]


def test_policy_host_names_match_case_insensitively_and_cidrs_match_addresses():
    settings = Settings({"IKIGAI_WEB_FETCH_ALLOW_HOSTS": " Intranet.Example ,10.0.0.0/8, fd00::5"})
    policy = guard.Policy.from_settings(settings)
    assert policy.allows("INTRANET.example", ipaddress.ip_address("192.168.1.1"))
    assert policy.allows("other", ipaddress.ip_address("10.9.9.9"))
    assert policy.allows("other", ipaddress.ip_address("fd00::5"))
    assert not policy.allows("other", ipaddress.ip_address("fd00::6"))
    assert not policy.allows("other", ipaddress.ip_address("127.0.0.1"))
    assert not policy.allows("intranet.example.org", ipaddress.ip_address("192.168.1.1"))


def test_vet_refuses_a_name_with_any_private_answer(monkeypatch):
    public_and_private = [ipaddress.ip_address("8.8.8.8"), ipaddress.ip_address("10.0.0.1")]
    monkeypatch.setattr(guard, "resolve", lambda *_: public_and_private)
    with pytest.raises(ToolError) as caught:
        guard.vet("mixed.example", 80, guard.Policy(), 5)
    assert caught.value.code is ErrorCode.BLOCKED_URL
    assert "10.0.0.1" in caught.value.message


def test_vet_returns_the_address_it_checked(monkeypatch):
    monkeypatch.setattr(guard, "resolve", lambda *_: [ipaddress.ip_address("93.184.216.34")])
    assert guard.vet("example.com", 443, guard.Policy(), 5) == "93.184.216.34"
    private = guard.Policy(allow_private=True)
    assert guard.vet("0x7f.1", 80, private, 5) == "127.0.0.1"


def test_unresolvable_name_is_a_dns_network_error():
    with pytest.raises(ToolError) as caught:
        guard.vet("no-such-host.invalid", 80, guard.Policy(), 5)
    assert caught.value.code is ErrorCode.NETWORK_ERROR
    assert "DNS" in caught.value.message


def test_canonical_rewrites_odd_ip_spellings_only():
    assert canonical("http://u:p@0x7f.1:8080/a?b#c") == "http://u:p@127.0.0.1:8080/a?b#c"
    assert canonical("http://[0:0::1]:81/") == "http://[::1]:81/"
    assert canonical("https://Example.com/x") == "https://Example.com/x"


# ---------------------------------------------------------------- decoding

JAPANESE = "日本語のテキストです。これは文字コードの検出を試すための文章です。" * 20
FRENCH = "Le café était très agréable, même si la crème brûlée était déjà froide. " * 20


@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        (JAPANESE.encode("shift_jis"), "text/html", JAPANESE),
        (FRENCH.encode("cp1252"), "text/html", FRENCH),
        (FRENCH.encode("utf-8"), "text/plain", FRENCH),
        (FRENCH.encode("cp1252"), "text/html; charset=windows-1252", FRENCH),
        (FRENCH.encode("cp1252"), "text/html; charset=ISO-8859-1", FRENCH),
        (codecs.BOM_UTF8 + FRENCH.encode(), "text/plain", FRENCH),
        (codecs.BOM_UTF16_LE + FRENCH.encode("utf-16-le"), "text/plain", FRENCH),
        (FRENCH.encode("utf-8"), "text/plain; charset=bogus-charset", FRENCH),
    ],
)
def test_to_text_charsets(body, header, expected):
    assert decode.to_text(body, header) == expected


@pytest.mark.parametrize(
    ("label", "expected"),
    [("latin1", "cp1252"), ("ISO-8859-1", "cp1252"), (" Shift_JIS ", "cp932"), ("utf8", "utf-8"),
     ("base64", None), ("utf-7", None), ("rot13", None), ("x-user-defined", None),
     ("iso-2022-kr", None), ("", None), (None, None)],
)  # fmt: skip
def test_charset_labels_are_the_whatwg_ones(label, expected):
    assert text.codec(label) == expected


@pytest.mark.parametrize(
    ("detected", "expected"),
    [("shift_jis", "cp932"), ("latin_1", "cp1252"), ("euc_kr", "cp949"), ("koi8_r", "koi8-r"),
     ("utf_7", None), ("utf_32", None), ("cp437", None), ("no-such-codec", None)],
)  # fmt: skip
def test_detected_encodings_are_mapped_to_a_browsers(detected, expected):
    assert decode._browser_codec(detected) == expected


def test_undetectable_bytes_are_read_as_windows_1252():
    assert decode._detect(bytes(range(256)) * 4) == "cp1252"


def test_valid_text_joins_surrogate_pairs_and_replaces_lone_ones():
    assert decode.valid_text("a\ud83d\ude00b\ud800c\udc00") == "a\U0001f600b\ufffdc\ufffd"
    assert decode.valid_text("plain") == "plain"


def test_meta_charset_and_http_equiv():
    page = f"<html><head><meta charset='shift_jis'></head><body>{JAPANESE}</body></html>"
    assert JAPANESE in decode.to_text(page.encode("shift_jis"), "text/html")
    equiv = (
        '<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        f"<p>{JAPANESE[:20]}</p>"
    )
    assert JAPANESE[:20] in decode.to_text(equiv.encode("shift_jis"), "text/html")


def test_header_charset_wins_over_meta():
    page = f'<meta charset="shift_jis"><p>{FRENCH}</p>'.encode("cp1252")
    assert FRENCH in decode.to_text(page, "text/html; charset=windows-1252")


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (b"%PDF-1.4 ...", "application/pdf"),
        (b"<!DOCTYPE html><html><body>x</body></html>", "text/html"),
        (b"\n  <!-- c --><html><p>x", "text/html"),
        (b'{"a": 1}', "application/json"),
        (b"just some words\nand more", "text/plain"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", None),
    ],
)
def test_sniff(body, expected):
    assert decode.sniff(body) == expected


@pytest.mark.parametrize(
    "header", ["image/png", "application/zip", "video/mp4", "text/css", "application/xml"]
)
def test_unsupported_content_names_the_type(header):
    with pytest.raises(ToolError) as caught:
        decode.readable_type(header, b"whatever")
    assert caught.value.code is ErrorCode.UNSUPPORTED_CONTENT
    assert header in caught.value.message


def test_octet_stream_binary_is_unsupported():
    with pytest.raises(ToolError) as caught:
        decode.readable_type("application/octet-stream", b"\x00\x01\x02\xff" * 10)
    assert "application/octet-stream" in caught.value.message


def test_json_is_pretty_printed_in_a_fence():
    doc, kind = to_document(
        bytearray(b'{"b":[1,2],"a":"\xc3\xa9"}'),
        "application/vnd.api+json",
        "https://e.com/x",
        full_page=False,
        include_links=True,
    )
    assert kind == "application/vnd.api+json"
    assert doc.markdown == '```json\n{\n  "b": [\n    1,\n    2\n  ],\n  "a": "é"\n}\n```'


def test_broken_json_is_a_parse_error():
    with pytest.raises(ToolError) as caught:
        decode.json_document(b'{"a": ', "application/json", "https://e.com/x")
    assert caught.value.code is ErrorCode.PARSE_ERROR


def test_broken_pdf_is_a_parse_error():
    with pytest.raises(ToolError) as caught:
        pdf_document(b"%PDF-1.4 not really a pdf", "https://e.com/x.pdf", decode.Reading())
    assert caught.value.code is ErrorCode.PARSE_ERROR


@pytest.mark.parametrize(
    ("body", "header", "expected"),
    [
        (b"<html><head><title> Not  Found </title></head><body>x</body></html>", None, "Not Found"),
        (b"<html><body><script>x()</script><h1>Gone away</h1></body></html>", "text/html", "Gone"),
        (b"upstream connect error", "text/plain", "upstream connect error"),
        (b"", "text/html", ""),
        (b"x" * 500, "text/plain", "x" * 199 + "…"),
    ],
)
def test_short_text_of_error_pages(body, header, expected):
    assert decode.short_text(body, header).startswith(expected)


# ---------------------------------------------------------------- content encodings


# ---------------------------------------------------------------- robots


def test_robots_agent_token_and_origin():
    assert robots.agent_token("ikigai-web-tools/0.1.0") == "ikigai-web-tools"
    assert robots.origin("HTTPS://user@Example.com:8443/a?b") == "https://example.com:8443"


def test_robots_rules_are_fetched_once_per_origin():
    calls: list[str] = []

    def get(url: str, _wait: float, _cap: int) -> tuple[int, bytes]:
        calls.append(url)
        return 200, b"User-agent: ikigai-web-tools\nDisallow: /private\n"

    checker = robots.Robots(get, "ikigai-web-tools/0.1.0")
    checker.check("https://e.com/public")
    with pytest.raises(ToolError) as caught:
        checker.check("https://e.com/private/x")
    assert caught.value.code is ErrorCode.ROBOTS_DISALLOWED
    assert "IKIGAI_WEB_FETCH_ROBOTS=0" in caught.value.message
    assert calls == ["https://e.com/robots.txt"]


@pytest.mark.parametrize(("status", "allowed"), [(404, True), (401, True), (500, False)])
def test_robots_status_rules(status, allowed):
    checker = robots.Robots(lambda *_: (status, b"User-agent: *\nDisallow: /"), "x/1")
    if allowed:
        checker.check("https://e.com/page")
        return
    with pytest.raises(ToolError) as caught:
        checker.check("https://e.com/page")
    assert caught.value.code is ErrorCode.ROBOTS_DISALLOWED
    assert "500" in caught.value.message


# ---------------------------------------------------------------- paging and budget


def _page(markdown: str, **meta: Any) -> pipeline.Page:
    return pipeline.Page("https://e.com/p", "text/html", replace(Document(markdown), **meta))


def _size(result: dict[str, object]) -> int:
    return len(orjson.dumps(result)) + 1


NUMBERED = "\n".join(f"line {i}" for i in range(1, 101))


def test_offset_and_limit_select_lines():
    out = web_fetch.shape_output(_page(NUMBERED, title="T"), 10, 5, 60_000)
    assert out["content"] == "\n".join(f"line {i}" for i in range(10, 15))
    assert (out["total_lines"], out["truncated"], out["next_offset"]) == (100, True, 15)
    assert list(out)[:8] == [
        "success",
        "url",
        "title",
        "content",
        "content_type",
        "total_lines",
        "truncated",
        "next_offset",
    ]


def test_last_lines_are_not_truncated():
    out = web_fetch.shape_output(_page(NUMBERED), 96, 10, 60_000)
    assert out["content"].splitlines() == [f"line {i}" for i in range(96, 101)]
    assert out["truncated"] is False
    assert "next_offset" not in out


@pytest.mark.parametrize("offset", [101, 102, 5000])
def test_offset_past_the_end_is_empty_and_not_truncated(offset):
    out = web_fetch.shape_output(_page(NUMBERED), offset, None, 60_000)
    assert (out["content"], out["truncated"], out["total_lines"]) == ("", False, 100)
    assert "next_offset" not in out


def test_metadata_is_present_only_when_found():
    meta = {
        "author": "Ann",
        "date": "2024-01-02",
        "site_name": "S",
        "description": "D",
        "product": "SKU: A-1",
    }
    out = web_fetch.shape_output(_page("x", title="T", **meta), 1, None, 60_000)
    assert {k: out[k] for k in meta} == meta
    bare = web_fetch.shape_output(_page("x"), 1, None, 60_000)
    assert bare["title"] == ""
    assert not set(meta) & set(bare)


def _read_all(page: pipeline.Page, budget: int) -> tuple[list[str], int]:
    offset, pieces, calls = 1, [], 0
    while True:
        out = web_fetch.shape_output(page, offset, None, budget)
        calls += 1
        assert _size(out) <= budget
        pieces.append(out["content"])
        if not out["truncated"]:
            return pieces, calls
        assert out["next_offset"] > offset
        offset = out["next_offset"]


@pytest.mark.parametrize("budget", [60_000, 4_096])
def test_budget_pages_rebuild_the_whole_document(budget):
    text = "\n".join(f'row {i} "quoted" \\ tab\t ünïcödé {"x" * (i % 90)}' for i in range(4000))
    page = _page(text, title="Title " * 100, description="d" * 2000)
    pieces, calls = _read_all(page, budget)
    assert calls > 1
    assert "\n".join(pieces) == text


def test_control_characters_escape_to_six_bytes_and_still_fit():
    text = "\n".join("\x01\x02\x03" * 3000 for _ in range(30))
    pieces, _ = _read_all(_page(text), 60_000)
    assert "".join(pieces).replace("\n", "") == text.replace("\n", "")


def test_one_huge_line_is_wrapped_so_paging_progresses():
    text = " ".join(f"word{i}" for i in range(100_000))
    page = _page(text)
    pieces, calls = _read_all(page, 60_000)
    assert calls > 5
    assert " ".join("\n".join(pieces).split()) == text


def test_output_budget_setting_is_honoured_end_to_end(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_OUTPUT_BUDGET", "5000")
    page = _page(NUMBERED * 50)
    monkeypatch.setattr(web_fetch, "cached_page", lambda *_: (page, {}))
    result, budget = answer(web_fetch.execute, {"url": "https://e.com/p"}, web_fetch.SCHEMA)
    assert budget == 5000
    assert _size(result) <= 5000
    assert result["truncated"] is True


def test_split_lines_normalises_newlines():
    assert page_lines.split_lines("a\r\nb\rc\n\n", 100) == ["a", "b", "c"]
    assert page_lines.split_lines("", 100) == []


# ---------------------------------------------------------------- schema


def test_schema_is_fast_and_imports_nothing_heavy():
    code = (
        "import sys, ikigai_web.tools.web_fetch as m, json; json.dumps(m.SCHEMA); "
        "print(sorted(n for n in ('httpx','lxml','trafilatura','pypdfium2','protego','httpcore')"
        " if n in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


_AFTER_PREPARE = """
import gzip, sys
from pathlib import Path
from ikigai_web.fetch.pipeline import prepare, to_document
prepare().thread.join()
ready = set(sys.modules)
body = bytearray(gzip.decompress(Path(sys.argv[1]).read_bytes()))
document, _ = to_document(body, "text/html", "https://e.com/a", full_page=False,
                          include_links=True)
assert document.page_type == "article", document.page_type
print(sorted(n for n in set(sys.modules) - ready if n.startswith(("ikigai_web", "trafilatura"))))
"""


def test_prepare_imports_what_reading_an_article_needs():
    """What the fetch's wait is spent on: after it, reading an HTML article imports nothing
    of ours or trafilatura's (add a module the readers came to need to pipeline.READERS)."""
    page = Path(__file__).parents[2] / "bench" / "fetch_startup_page.html.gz"
    out = subprocess.run(
        [sys.executable, "-c", _AFTER_PREPARE, str(page)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_prepare_leaves_a_failing_import_to_the_stage(monkeypatch):
    """An import that fails on the thread ends it quietly: the stage that needs the module
    imports it again and reports the fault there."""
    from ikigai_web.fetch import pipeline

    monkeypatch.setattr(pipeline, "READERS", ("ikigai_web.fetch.no_such_stage", "colorsys"))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    pipeline.prepare().thread.join()
    assert "colorsys" not in sys.modules


def test_prepare_stops_when_the_readers_are_unneeded(monkeypatch):
    """A body that is no HTML (a PDF) needs none of the readers: told so, the thread imports
    no further module, and leaves the file's reader the processor."""
    import threading

    from ikigai_web.fetch import pipeline

    monkeypatch.setattr(pipeline, "READERS", ("colorsys",))
    monkeypatch.delitem(sys.modules, "colorsys", raising=False)
    unneeded = threading.Event()
    unneeded.set()
    pipeline._import_readers(unneeded)
    assert "colorsys" not in sys.modules
    pipeline._import_readers(threading.Event())
    assert "colorsys" in sys.modules


def test_blocked_over_the_protocol(run_tool):
    run = run_tool("web-fetch-tool", {"url": "http://0x7f.0.0.1/"})
    assert run.code == 0
    assert run.json["error_code"] == "BLOCKED_URL"


# ---------------------------------------------------------------- transport


@pytest.mark.httpx_mock(should_mock=lambda _: False)  # the real connection, not a fake
def test_backend_refuses_a_host_the_guard_did_not_vet(monkeypatch):
    """A pinned connection dials no host the guard did not vet: not even a lookup is made."""
    from ikigai_web.net import wire
    from ikigai_web.net.http import Call, Deadline, Unreachable

    def no_lookup(*_: Any) -> None:
        raise AssertionError("an unvetted host was looked up")

    monkeypatch.setattr(wire, "resolve", no_lookup)
    pins = guard.Pins()
    pins.pin("vetted.example", "127.0.0.2")
    call = Call("GET", "http://unvetted.example/", (("Host", "unvetted.example"),))
    with pytest.raises(Unreachable) as refused:
        wire.open_call(call, Deadline(5), pins)
    assert "refusing to connect to unvetted host unvetted.example" in refused.value.detail
    assert pins.pinned("VETTED.example.")
    assert not pins.pinned("unvetted.example")


def test_a_deadline_never_waits_past_its_end_and_a_copy_moves_alone():
    from ikigai_web.net.http import Deadline

    clock = Deadline(60)  # long enough that no busy machine spends it during the test
    assert clock.left(None) <= 60
    assert clock.left(0.1) == 0.1
    twin = clock.copy()
    twin.end = time.monotonic() - 1
    with pytest.raises(TimeoutError):
        twin.left(10)
    assert clock.left(0.1) == 0.1


def test_page_type_and_warnings_are_in_the_output_only_when_set():
    from ikigai_web.fetch.pipeline import Page
    from ikigai_web.fetch.reading.document import Document
    from ikigai_web.tools.web_fetch import shape_output

    warning = {"code": "NEEDS_JAVASCRIPT", "message": "The page is filled in by JavaScript."}
    doc = Document(markdown="", title="App", page_type="service", warnings=[warning])
    out = shape_output(Page("https://e.com/", "text/html", doc), 1, None, 60_000)
    assert out["page_type"] == "service"
    assert out["warnings"] == [warning]
    plain = shape_output(
        Page("https://e.com/", "text/plain", Document(markdown="x")), 1, None, 60_000
    )
    assert "page_type" not in plain
    assert "warnings" not in plain


@pytest.mark.parametrize("header", ["text/markdown", "text/plain; charset=utf-8"])
def test_a_text_documents_links_are_made_safe_and_absolute(header):
    body = bytearray(
        b"# Notes\n\n[click](javascript:alert(1)) and ![i](data:image/png;base64,AA==), "
        b"[rel](/docs/z) and [far](https://u:p@e.org/x).\n\n  indented <b>as is</b>\n"
    )
    document, kind = to_document(body, header, "https://site.test/a/b.md", full_page=False,
                                 include_links=True)  # fmt: skip
    assert kind == header.split(";")[0]
    assert document.markdown == (
        "# Notes\n\nclick and i, [rel](https://site.test/docs/z) and [far](https://e.org/x)."
        "\n\n  indented <b>as is</b>\n"
    )


@pytest.mark.parametrize("encoding", ["euc_jp", "iso2022_jp", "shift_jis"])
def test_an_undeclared_japanese_page_is_read_in_its_encoding(encoding):
    # The detector names EUC-JP pages by a superset browsers do not know, and ISO-2022-JP is
    # 7-bit, valid UTF-8 that only its escape sequences tell apart.
    japanese = (
        "日本語のテキストです。これは記事の本文で、十分な長さがあります。東京都の天気は晴れです。"
    )
    page = f"<html><body><article><p>{japanese * 3}</p></article></body></html>"
    assert decode.to_text(page.encode(encoding), "text/html") == page


def test_html_in_a_markdown_document_loses_its_scripts_but_code_keeps_them():
    body = bytearray(
        b'Intro <a href="javascript:alert(2)" title="t">y</a> <img src=pic.png onerror=go()>\n'
        b'and `<b onclick="x()">` in code\n\n```html\n<button onclick="go()">Go</button>\n```\n'
    )
    document, _ = to_document(body, "text/markdown", "https://site.test/a/", full_page=False,
                                     include_links=True)  # fmt: skip
    assert document.markdown == (
        'Intro <a title="t">y</a> <img src="https://site.test/a/pic.png">\n'
        'and `<b onclick="x()">` in code\n\n```html\n<button onclick="go()">Go</button>\n```\n'
    )
