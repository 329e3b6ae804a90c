"""What MCP clients are told of this installation's tools (issue 42): a title, an outputSchema
that every real answer meets, success and failure alike, and answers rendered for whoever
reads them, a person at a shell or the model behind an MCP client.

Real answers: each tool runs in this process, through the protocol runner, against a provider
or a page on 127.0.0.1. `toolbox.check_answer` holds them, as every answer the fuzz, hostile
and secret tests see, to the tool's OUTPUT_SCHEMA made strict (no key left undescribed).
"""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import Reply
from jsonschema import Draft202012Validator
from toolbox import SCRIPTS, check_answer, check_shape, closed_port, duckduckgo_answer, module_of

from ikigai_web.common.answers import PERSON, Reader
from ikigai_web.common.runner import answer, render
from ikigai_web.search.kit import ANSWER_EXTRAS, RESULT_EXTRAS
from ikigai_web.search.kit import markdown as search_markdown
from ikigai_web.tools import web_fetch
from ikigai_web.tools import web_search_gemini as gemini

pytestmark = pytest.mark.loopback

FIXTURES = Path(__file__).parents[1] / "fixtures"
BRAVE_BODY = json.loads((FIXTURES / "brave" / "search.json").read_text())
GOOGLE_BODY = {
    "items": [{"title": "Ikigai", "link": "https://en.wikipedia.org/wiki/Ikigai",
               "snippet": "A reason for being.",
               "pagemap": {"metatags": [{"article:published_time": "2024-07-14T08:00:00Z"}]}}],
    "queries": {"nextPage": [{"startIndex": 11}]},
}  # fmt: skip
SEARXNG_BODY = {
    "number_of_results": 0,
    "results": [{"url": "https://en.wikipedia.org/wiki/Ikigai", "title": "Ikigai",
                 "content": "A reason for being.", "engines": ["wikipedia", "duckduckgo"],
                 "publishedDate": "2024-07-14T00:00:00"}],
    "answers": [{"answer": "Ikigai is a Japanese concept."}],
    "suggestions": ["ikigai book", "ikigai meaning"],
    "infoboxes": [{"infobox": "Ikigai", "content": "A Japanese concept.",
                   "id": "https://en.wikipedia.org/wiki/Ikigai"}],
    "unresponsive_engines": [["google", "timeout"]],
}  # fmt: skip
TAVILY_BODY = {
    "answer": "Ikigai is a reason for being.",
    "results": [{"title": "Ikigai", "url": "https://en.wikipedia.org/wiki/Ikigai",
                 "content": "A reason for being.", "score": 0.81,
                 "published_date": "2024-07-14"}],
}  # fmt: skip
GEMINI_BODY = {
    "candidates": [{
        "content": {"parts": [{"text": "Ikigai is a reason for being."}], "role": "model"},
        "finishReason": "STOP",
        "groundingMetadata": {
            "webSearchQueries": ["ikigai meaning"],
            "groundingChunks": [{"web": {"uri": "https://en.wikipedia.org/wiki/Ikigai",
                                         "title": "wikipedia.org"}}],
            "groundingSupports": [{"segment": {"text": "Ikigai is a reason for being."},
                                   "groundingChunkIndices": [0]}],
            "searchEntryPoint": {"renderedContent": "<div>Google Search suggestions</div>"},
        },
    }],
}  # fmt: skip
GEMINI_ROUTE = f"/v1beta/models/{gemini.DEFAULT_MODEL}:generateContent"
ARTICLE = (
    "<html><head><title>Release notes 2.0</title>"
    '<meta name="author" content="Ann Author"><meta name="date" content="2025-03-14">'
    '<meta property="og:site_name" content="Example Blog"></head><body><article>'
    + "".join(
        f"<p>Paragraph {i} of the release notes, long enough to count.</p>" for i in range(30)
    )
    + "</article></body></html>"
)


def name_of(script: str) -> str:
    return script.removesuffix("-tool").replace("-", "_")


def answered(name: str, call: dict[str, Any]) -> dict[str, Any]:
    """The answer of tool `name` to `call`, as the runner writes it, checked against the
    contract and its OUTPUT_SCHEMA."""
    module = importlib.import_module(f"ikigai_web.tools.{name}")
    result, budget = answer(module.execute, call, module.SCHEMA)
    checked: dict[str, Any] = check_answer(render(result, budget), name, budget)
    return checked


# --- what each tool says of itself ---------------------------------------------------------


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_every_tool_says_what_mcp_clients_show(script):
    module = module_of(script)
    assert isinstance(module.TITLE, str)
    assert 0 < len(module.TITLE) <= 60
    Draft202012Validator.check_schema(module.OUTPUT_SCHEMA)
    assert module.OUTPUT_SCHEMA["type"] == "object"  # MCP 2025-11-25 allows no other root
    branches = module.OUTPUT_SCHEMA["oneOf"]
    assert [b["properties"]["success"]["const"] for b in branches] == [True, False]
    # The renderer takes who reads, a person when not told.
    reader = list(inspect.signature(module.markdown).parameters.values())[2]
    assert reader.default == PERSON
    failure = {"success": False, "error": "e", "error_code": "API_ERROR"}
    with pytest.raises(AssertionError, match="OUTPUT_SCHEMA"):
        check_shape(failure | {"surprise": 1}, name_of(script))
    check_shape(failure, name_of(script))


def test_titles_tell_the_tools_apart():
    titles = [module_of(script).TITLE for script in SCRIPTS]
    assert len(set(titles)) == len(titles)


def test_page_types_are_the_extractors():
    from ikigai_web.fetch.reading.pagetype import PAGE_TYPES

    assert web_fetch.PAGE_TYPES == PAGE_TYPES


def test_auto_may_relay_every_providers_keys():
    auto = module_of("web-search-auto-tool").OUTPUT_SCHEMA["oneOf"][0]
    assert set(ANSWER_EXTRAS) <= set(auto["properties"])
    result = auto["properties"]["results"]["items"]["properties"]
    assert set(RESULT_EXTRAS) <= set(result)


def test_the_strict_check_finds_a_wrong_type_and_a_missing_key():
    good = {"success": True, "provider": "brave", "results": [], "count": 0}
    check_shape(good, "web_search_brave")
    for bad in (good | {"count": "0"}, {k: v for k, v in good.items() if k != "provider"},
                good | {"results": [{"title": "t", "url": "u"}]}):  # fmt: skip
        with pytest.raises(AssertionError):
            check_shape(bad, "web_search_brave")


# --- real answers meet their schema --------------------------------------------------------


def test_rich_search_answers_meet_their_schemas(fake_server, monkeypatch):
    routes = {
        "/brave": Reply(body=BRAVE_BODY),
        "/google": Reply(body=GOOGLE_BODY),
        "/searx/search": Reply(body=SEARXNG_BODY),
        "/tavily": Reply(body=TAVILY_BODY),
        GEMINI_ROUTE: Reply(body=GEMINI_BODY),
        "/html/": Reply(body=duckduckgo_answer("Ikigai", "A reason.", "https://e.test/")[0],
                        headers={"Content-Type": "text/html"}),
    }  # fmt: skip
    for path, reply in routes.items():
        fake_server.route(path, reply)
    base = fake_server.url
    env = {
        "BRAVE_API_KEY": "BSA-key-1234", "BRAVE_SEARCH_API_URL": f"{base}/brave",
        "GOOGLE_SEARCH_API_KEY": "AIza-key-1234", "GOOGLE_SEARCH_ENGINE_ID": "cx-1",
        "GOOGLE_SEARCH_API_URL": f"{base}/google", "SEARXNG_URL": f"{base}/searx/",
        "TAVILY_API_KEY": "tvly-key-1234", "TAVILY_API_URL": f"{base}/tavily",
        "GEMINI_API_KEY": "AIza-gem-1234", "GEMINI_API_URL": f"{base}/v1beta",
        "IKIGAI_WEB_GEMINI_RESOLVE": "0", "IKIGAI_WEB_GEMINI_SEARCH_ENTRY_POINT": "1",
        "DUCKDUCKGO_HTML_URL": f"{base}/html/", "IKIGAI_WEB_SEARCH_ORDER": "gemini",
    }  # fmt: skip
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    expected = {
        "web_search_brave": ("next_offset", "age", "extra_snippets", "published"),
        "web_search_google": ("next_start", "published"),
        "web_search_searxng": ("next_offset", "answers", "suggestions", "infoboxes", "engines"),
        "web_search_tavily": ("answer", "score", "published"),
        "web_search_gemini": ("answer", "search_queries", "search_entry_point"),
        "web_search_duckduckgo": (),
        "web_search_auto": ("answer", "search_queries", "search_entry_point"),
    }
    for name, keys in expected.items():
        call = {"query": "ikigai", "unknown_field": 1}
        call |= {"include_answer": True} if name == "web_search_tavily" else {}
        got = answered(name, call)
        shown = set(got) | {k for r in got["results"] for k in r}
        assert set(keys) <= shown, (name, sorted(shown))
        assert got["warnings"], name  # the unknown field, or SearXNG's silent engine
        again = answered(name, call)
        assert again.get("cached") is True or name == "web_search_searxng", name


def test_a_page_meets_web_fetchs_schema(fake_server, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    url = fake_server.route("/notes", Reply(body=ARTICLE, headers={"Content-Type": "text/html"}))
    cut = answered("web_fetch", {"url": url, "limit": 3, "bogus": True})
    assert cut["truncated"]
    assert {"next_offset", "author", "date", "site_name", "warnings"} <= set(cut)
    assert cut.get("page_type", "article") == "article"  # named when clear, never another type
    rest = answered("web_fetch", {"url": url, "offset": cut["next_offset"]})
    assert rest["cached"]
    assert not rest["truncated"]
    past = answered("web_fetch", {"url": url, "offset": 10_000})
    assert past["content"] == ""


def test_failures_of_every_kind_meet_the_schemas(fake_server, monkeypatch):
    codes = {name: answered(name, {"query": "ikigai"})["error_code"]
             for name in ("web_search_brave", "web_search_google", "web_search_tavily",
                          "web_search_gemini", "web_search_searxng")}  # fmt: skip
    assert set(codes.values()) == {"AUTH_MISSING"}
    monkeypatch.setenv("IKIGAI_WEB_SEARCH_ORDER", "brave,tavily")
    every = answered("web_search_auto", {"query": "ikigai"})
    assert every["error"].startswith("No provider could search: no provider has a key. ")
    monkeypatch.setenv("BRAVE_API_KEY", "BSA-key-1234")
    limited = Reply(429, {"type": "ErrorResponse"}, {"X-RateLimit-Reset": "1, 30"})
    monkeypatch.setenv("BRAVE_SEARCH_API_URL", fake_server.route("/limited", limited))
    rate = answered("web_search_brave", {"query": "ikigai"})
    assert (rate["error_code"], rate["retry_after"]) == ("RATE_LIMIT", 1)
    assert "alternative_tools" in rate["_event"]["data"]
    monkeypatch.setenv("TAVILY_API_KEY", "tvly-key-1234")
    monkeypatch.setenv("TAVILY_API_URL", fake_server.route("/no", Reply(401, {"detail": "no"})))
    assert answered("web_search_tavily", {"query": "ikigai"})["error_code"] == "AUTH_INVALID"
    monkeypatch.setenv("BRAVE_SEARCH_API_URL", closed_port())
    assert answered("web_search_brave", {"query": "ikigai"})["error_code"] == "NETWORK_ERROR"
    assert answered("web_search_brave", {"query": "x", "count": 0})["error_code"] == (
        "INVALID_INPUT"
    )
    assert answered("web_fetch", {"url": fake_server.url})["error_code"] == "BLOCKED_URL"
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    gone = answered("web_fetch", {"url": fake_server.url + "/gone"})
    assert (gone["error_code"], gone["wall"]) == ("HTTP_ERROR", "not_found")


# --- one renderer per answer, the read-on line for whoever reads -----------------------------


def page(**extra: Any) -> dict[str, Any]:
    return {"success": True, "url": "https://e.test/p", "title": "Notes", "content": "a\nb",
            "content_type": "text/html", "total_lines": 9, "truncated": True,
            "next_offset": 3} | extra  # fmt: skip


def test_a_cut_page_tells_its_reader_how_to_read_on():
    model = web_fetch.markdown({"url": "https://e.test/p"}, page(), Reader("web_fetch"))
    assert model == (
        "# Notes\n\nSource: https://e.test/p\n\na\nb\n\n[7 more lines: to read on, call "
        "web_fetch again with the same arguments but offset 3]\n"
    )
    person = web_fetch.markdown({}, page())
    assert person.endswith("\n\n[7 more lines: to read on, run it again with --offset 3]\n")
    assert web_fetch.markdown({}, page(), PERSON) == person


def test_a_page_says_who_wrote_it_and_what_went_partly_wrong():
    needs = {"code": "NEEDS_JAVASCRIPT", "message": "The page needs JS."}
    warned = page(truncated=False, author="Ann", date="2025-03-14", site_name="Blog",
                  warnings=[needs])  # fmt: skip
    del warned["next_offset"]
    assert web_fetch.markdown({}, warned, Reader("web_fetch")) == (
        "# Notes\n\nSource: https://e.test/p\nAuthor: Ann; Date: 2025-03-14; Site: Blog\n"
        "Note: The page needs JS.\n\na\nb\n"
    )


def test_a_heading_that_repeats_the_title_is_said_once_and_only_at_the_start():
    product = page(title="Trailblazer 2", content="# Trailblazer 2\n\n$149.00", product="SKU: T2")
    for reader in (PERSON, Reader("web_fetch")):
        shown = web_fetch.markdown({"url": "https://e.test/p"}, product, reader)
        assert shown.startswith("# Trailblazer 2\n\nSource: https://e.test/p\nSKU: T2\n\n$149.00")
        assert shown.count("Trailblazer 2") == 1
    later = web_fetch.markdown({"offset": 40}, product)  # a later part: its lines as they are
    assert "\n# Trailblazer 2\n\n$149.00" in later


def test_an_empty_page_says_so():
    past = page(content="", truncated=False, title="")
    assert web_fetch.markdown({}, past).endswith(
        "\n\n[No lines from this offset: the page has 9.]\n"
    )
    assert web_fetch.markdown({}, past | {"total_lines": 0}).endswith("\n\n[No text.]\n")


def test_search_results_are_numbered_with_all_the_provider_said():
    searxng = module_of("web-search-searxng-tool")
    got = {"success": True, "provider": "searxng", "count": 2, "next_offset": 2,
           "results": [{"title": "One", "url": "https://a.test/1", "snippet": "First.",
                        "published": "2024-07-14"},
                       {"title": "Two", "url": "https://b.test/2", "snippet": "",
                        "extra_snippets": ["More."]}],
           "answers": ["42."], "suggestions": ["x y", "z"],
           "infoboxes": [{"title": "Box", "content": "About.", "url": "https://c.test/"}],
           "warnings": [{"code": "API_ERROR", "message": "google did not answer"}]}  # fmt: skip
    text = searxng.markdown({"query": "q"}, got, Reader("web_search_searxng"))
    assert text == (
        "# Search Results for: q\nSearch engine: SearXNG\n\nAnswer: 42.\n\n"
        "Infobox: Box (https://c.test/)\nAbout.\n\n"
        "## Result 1: One\nSource: https://a.test/1\nPublished: 2024-07-14\n\nFirst.\n\n---\n\n"
        "## Result 2: Two\nSource: https://b.test/2\n\nMore.\n\n"
        "Note: google did not answer\nSuggested searches: x y; z\n"
        "[More results: call web_search_searxng again with the same arguments but page 2]"
    )
    assert searxng.markdown({"query": "q"}, got).endswith(
        "[More results: run it again with --page 2]"
    )


@pytest.mark.parametrize(
    ("script", "more", "said"),
    [
        ("web-search-brave-tool", {"next_offset": 1}, "but offset 1]"),
        ("web-search-google-tool", {"next_start": 11}, "but start 11]"),
        ("web-search-auto-tool", {"next_offset": 1}, None),  # it takes no offset
        ("web-search-duckduckgo-tool", {}, None),
    ],
)
def test_the_next_page_is_asked_for_with_the_tools_own_parameter(script, more, said):
    got = {"success": True, "provider": "brave", "results": [], "count": 0} | more
    text = module_of(script).markdown({"query": "q"}, got, Reader(name_of(script)))
    assert text.endswith(said) if said else "[More results" not in text
    if said:
        assert f"call {name_of(script)} again" in text


def test_gemini_reads_the_same_for_a_person_and_the_model():
    got = {
        "success": True,
        "provider": "gemini",
        "answer": "Hi.",
        "search_queries": ["q"],
        "results": [{"title": "T", "url": "https://t.test/", "snippet": "s"}],
        "count": 1,
    }
    assert gemini.markdown({}, got, Reader("web_search_gemini")) == gemini.markdown({}, got)
    assert search_markdown({"query": "q"}, got).startswith("# Search Results for: q\n")
