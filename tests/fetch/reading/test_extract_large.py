"""ikigai_web.fetch.reading.extract on large pages: what is never content stripped within a
bound, attributes costed, a page past the budget cut at a line with a note."""

from __future__ import annotations

import json

import pytest
from extract_support import ARTICLE, FILLER, NOTE, URL

from ikigai_web.common.text import visible
from ikigai_web.fetch.reading import extract
from ikigai_web.fetch.reading.extract import html_to_markdown


def sections(count: int) -> str:
    """`count` numbered article sections, text as dense as real articles get (~0.4 KB each)."""
    return "".join(
        f"<h2>Section {n}</h2><p>Paragraph {n} with a <a href='/d/{n}'>link</a> and "
        f"<em>emphasis</em>. {FILLER}</p><ul><li>first of {n}</li><li>second of {n}</li></ul>"
        for n in range(count)
    )


def huge_page(count: int) -> str:
    return (
        "<html><head><title>Huge page</title></head><body><main><article><h1>Huge page</h1>"
        f"{sections(count)}</article></main></body></html>"
    )


def test_a_normal_page_is_converted_whole_and_untouched(article):
    page = extract.bound(ARTICLE)
    assert page.html is ARTICLE
    assert not page.large
    assert not page.note
    assert "web-fetch" not in article.markdown


def test_megabytes_of_scripts_and_styles_leave_a_normal_page_unchanged(article):
    junk = "".join(
        (
            "<script>" + "var a = 1 < 2;" * 150_000 + "</script>",
            "<style>" + ".a{color:red}" * 80_000 + "</style>",
            "<svg>" + '<path d="M0 0"/>' * 50_000 + "</svg>",
            "<!--" + "x" * 500_000 + "-->",
            "<img alt='' src='data:image/png;base64," + "QUJD" * 250_000 + "'>",
        )
    )
    page = ARTICLE.replace("<main>", junk + "<main>")
    assert len(page) > 4_000_000
    bounded = extract.bound(page)
    assert not bounded.large
    assert len(bounded.html) < len(ARTICLE) + 1000
    assert html_to_markdown(page, URL).markdown == article.markdown


@pytest.mark.parametrize(
    ("html", "left"),
    [
        ("a<SCRIPT type='x'>if (a<b) {}</SCRIPT >b", "ab"),
        ("a<style>p > b {}</style>b", "ab"),
        ("a<svg><path d='M0 0'/><text>label</text></svg>b", "ab"),
        ("a<!-- <p>commented</p> -->b", "ab"),
        ("a<noscript><p>enable JS</p></noscript>b<template><p>t</p></template>", "ab"),
        ("<p>kept</p><script>never closed <p>swallowed</p>", "<p>kept</p>"),
        ("<p>kept</p><!-- never closed <p>swallowed</p>", "<p>kept</p>"),
    ],
)
def test_strip_removes_what_is_never_content(html, left):
    assert extract._strip(html) == (left, "")


def test_strip_sets_aside_the_scripts_of_data_within_a_bound():
    ld = '<script type="application/ld+json">{"@type": "Product"}</script>'
    app = "<script id='__NEXT_DATA__' type='application/json'>{}</script>"
    nuxt = "<script>\n window.__NUXT__={}</script>"
    code = "<script type='text/javascript'>var t = 'application/ld+json';</script>"
    assert extract._strip(f"a{ld}b{code}c{app}{nuxt}") == ("abc", ld + app + nuxt)
    huge = ld.replace("{", "{" + " " * extract._KEPT_DECLARED)
    assert extract._strip(f"a{ld}{huge}b{ld}") == ("ab", ld + ld)
    unclosed = ld.removesuffix("</script>") + "<p>swallowed</p>"
    assert extract._strip(f"<p>kept</p>{unclosed}") == ("<p>kept</p>", "")


def test_a_large_page_is_read_with_its_structured_data():
    # Megabytes of scripts make the page large, so `bound` strips it: what it declares in
    # JSON-LD must still type it and complete it.
    product = {
        "@context": "https://schema.org",
        "@type": "Product",
        "name": "Oak stool",
        "description": "A three-legged stool turned from solid oak and finished with oil.",
    }
    declared = f'<script type="application/ld+json">{json.dumps(product)}</script>'
    scripts = ("<script>var state = '" + "x" * 100_000 + "';</script>") * 20
    body = "<main><h1>Oak stool</h1><p>Price: 89 EUR</p><button>Add to cart</button></main>"
    html = f"<html><head>{declared}{scripts}</head><body>{body}</body></html>"
    assert extract._exceeds(html, extract._LARGE_COST)
    doc = html_to_markdown(html, "https://shop.example.com/p/oak-stool")
    assert doc.page_type == "product"
    assert "three-legged stool turned from solid oak" in doc.markdown


@pytest.mark.parametrize(
    ("tag", "runs"),
    [
        ('<script type="application/ld+json">', False),
        ("<script type='text/template'>", False),
        ('<script type="importmap">', False),
        ("<script>", True),
        ('<script type="module">', True),
        ('<script TYPE="Text/JavaScript; charset=utf-8">', True),
        ('<script src="/app.js" type="">', True),
    ],
)
def test_only_a_script_a_browser_runs_makes_a_page_scripted(tag, runs):
    """A data block (JSON-LD, a template) fills in nothing: a short page with one is no app,
    in a small page's tree or a large page's stripped markup alike."""
    small = f"<html><head>{tag}{{}}</script></head><body><p>Short.</p></body></html>"
    large = small.replace("<body>", "<body>" + "<p>" + "word " * 400_000 + "</p>")
    assert extract.bound(large).large
    assert extract.bound(large).scripted is runs
    assert extract._parse(small, "https://example.com/").scripted is runs


def test_megabytes_of_inline_images_are_dropped_but_a_small_one_is_kept():
    small = "<p>Chart: <img alt='chart' src='data:image/png;base64,iVBORw0KGgo='></p>"
    assert extract.bound(small).html is small
    big = small.replace("iVBORw0KGgo=", "QUJD" * 500_000) + "<p>After the chart.</p>"
    bounded = extract.bound(big)
    assert not bounded.large
    assert not bounded.note
    assert bounded.html == "<p>Chart: <img alt='chart' src='data:,'></p><p>After the chart.</p>"


def test_cut_falls_before_a_tag_never_inside_one(monkeypatch):
    monkeypatch.setattr(extract, "_MAX_COST", 200)
    html = "<p><a href='https://example.com/long/address'>some link text</a></p>" * 100
    cut = extract._cut_at(html, extract._MAX_COST)
    assert cut is not None
    assert 0 < cut < len(html)
    assert html[cut] == "<"
    assert extract._cut_at(html[:cut], extract._MAX_COST) is None


def test_cut_in_a_long_text_falls_at_a_line_end(monkeypatch):
    monkeypatch.setattr(extract, "_MAX_COST", 200)
    html = "<pre>" + "x = 1  # one\n" * 10_000
    cut = extract._cut_at(html, extract._MAX_COST)
    assert cut is not None
    assert html[cut] == "\n"
    assert extract._cut_at(html[:cut], extract._MAX_COST) is None


def test_attributes_without_values_count_toward_the_cost():
    bare = "<p " + " ".join(f"x{i}" for i in range(60)) + ">w</p>"
    valued = "<p " + " ".join(f"x{i}='1'" for i in range(60)) + ">w</p>"
    text = "<p>" + "w " * 60 + "</p>"
    assert extract._chunk_cost(bare, 0, len(bare)) > 60
    assert extract._chunk_cost(valued, 0, len(valued)) > 60
    assert extract._chunk_cost(text, 0, len(text)) < 10  # spaces in text are not attributes
    assert extract._chunk_cost("w " * 60, 0, 120) < 10  # nor in text before any tag
    lead = "say 'x' and href='y' " * 20 + "<p>w</p>"
    assert extract._chunk_cost(lead, 0, len(lead)) < 25  # whose quotes are not values either
    assert extract._markup(lead) == "><p></p>"
    classes = "<p class='" + " ".join(f"c{i}" for i in range(60)) + "'>w</p>"
    assert extract._chunk_cost(classes, 0, len(classes)) < 20  # nor in a quoted value


def test_attribute_values_cost_less_than_text_of_the_same_length():
    record = "<div data-product='" + "x" * 12_800 + "'>w</div>"
    text = "<div>" + "x " * 6_400 + "</div>"
    assert extract._chunk_cost(record, 0, len(record)) < 110  # two tags, one attribute, 100
    assert extract._chunk_cost(text, 0, len(text)) > 400


@pytest.mark.parametrize(
    "attribute",
    ["href='{}'", 'HREF="{}"', "src='{}'", "alt='{}'", "Title='{}'", "href = '{}'", "x ='{}'"],
)
def test_values_copied_into_the_markdown_cost_as_text_does(attribute):
    # A link's target, an image's source, alt text and title become Python strings and
    # markdown; so does any value written with a space before its "=" (the higher cost is
    # the safe guess for a form the quick search does not name).
    value = "x" * 12_800
    copied = "<a " + attribute.format(value) + ">w</a>"
    kept = "<a data-x='" + value + "'>w</a>"
    assert extract._chunk_cost(copied, 0, len(copied)) > 400
    assert extract._chunk_cost(kept, 0, len(kept)) < 110
    assert extract._chunk_cost("<a data-href='" + value + "'>w</a>", 0, 12_830) < 110


def test_a_shop_page_megabytes_long_in_attribute_values_converts_whole():
    # Product records, srcsets and class lists in every card: the bytes of a modern shop's
    # category page, which lxml keeps once and nothing copies; its text is small.
    record = "'" + ",".join(f'{{"sku":"A{k:03}","price":19.99}}' for k in range(60)) + "'"
    cards = "".join(
        f"<div class='card grid-item' data-product={record}><a href='/p/{n}'>Oak stool {n}</a>"
        "</div>"
        for n in range(1_200)
    )
    html = f"<html><body><main><h1>Stools</h1>{cards}</main></body></html>"
    assert len(html) > 2_000_000
    assert extract._cut_at(extract.bound(html).html, extract._MAX_COST) is None
    doc = html_to_markdown(html, URL)
    assert "Oak stool 1199" in doc.markdown
    assert "web-fetch" not in doc.markdown


def test_a_page_within_the_budget_is_not_cut():
    assert extract._cut_at(huge_page(10), extract._MAX_COST) is None


def test_a_large_page_under_the_cut_skips_readability_and_has_no_note(monkeypatch):
    def fail(*_args, **_kwargs):
        raise AssertionError("readability must not run on a large page")

    monkeypatch.setattr(extract, "_readability", fail)
    html = huge_page(1000)
    assert extract._exceeds(html, extract._LARGE_COST)
    assert not extract._exceeds(html, extract._MAX_COST)
    doc = html_to_markdown(html, URL)
    assert "## Section 999" in doc.markdown
    assert "web-fetch" not in doc.markdown


@pytest.mark.parametrize("full_page", [False, True])
def test_a_multi_megabyte_page_is_cut_and_ends_with_a_note(full_page):
    html = huge_page(10_000)
    assert len(html) > 3_000_000
    doc = html_to_markdown(html, URL, full_page=full_page)
    body, note = doc.markdown.rsplit("\n\n", 1)
    assert note.startswith(NOTE)
    assert f"({len(html) / 1e6:.1f} million characters of HTML" in note
    assert "were converted: the content above stops there" in note
    assert "## Section 0" in body
    assert "[link](https://example.com/d/0)" in body
    assert "Section 9999" not in body
    assert len(body) > 200_000  # hundreds of kilobytes still come through
    assert doc.title == "Huge page"
    assert [w["code"] for w in doc.warnings] == ["TOO_LARGE"]
    assert doc.warnings[0]["message"].startswith("This page is too large to convert whole")
    assert f"({len(html) / 1e6:.1f} million characters of HTML" in doc.warnings[0]["message"]


def test_one_giant_pre_is_cut_at_a_line_and_its_fence_closed():
    code = "x = 1\n" * 600_000
    html = f"<html><body><pre><code class='language-python'>{code}</code></pre>"
    doc = html_to_markdown(html, URL)
    body, note = doc.markdown.rsplit("\n\n", 1)
    assert note.startswith(NOTE)
    assert body.startswith("```python\nx = 1\n")
    assert body.endswith("\nx = 1\n```")


def test_the_fetch_path_cuts_too_and_empties_the_body(monkeypatch):
    from ikigai_web.fetch.pipeline import to_document

    monkeypatch.setattr(extract, "_LARGE_COST", 50)
    monkeypatch.setattr(extract, "_MAX_COST", 150)
    body = bytearray(ARTICLE.encode())
    doc, kind = to_document(body, "text/html", URL, full_page=False, include_links=True)
    assert kind == "text/html"
    assert body == bytearray()
    assert doc.markdown.rsplit("\n\n", 1)[1].startswith(NOTE)
    assert "Tomatoes grow well on a sunny windowsill." in doc.markdown
    assert "Harvest when the fruit is fully red." not in doc.markdown


def test_readability_drops_hidden_text_of_the_cleaned_tree():
    hidden = (
        f"<div hidden><p>Secret hidden paragraph. {FILLER}</p></div>"
        f"<div style='display: none'><p>Invisible styled paragraph. {FILLER}</p></div>"
    )
    tree = extract._parse(ARTICLE.replace("<h2>What you need</h2>", hidden), URL).tree
    markdown = extract._readability(tree, include_links=True)
    assert "Tomatoes grow well" in markdown
    assert "Secret hidden" not in markdown
    assert "Invisible styled" not in markdown


def test_protocol_relative_images_come_out_absolute():
    image = '<p><img src="//cdn.example.com/tomato.jpg" alt="A ripe tomato"></p>'
    doc = html_to_markdown(ARTICLE.replace("<h2>What you need</h2>", image), URL)
    assert "](https://cdn.example.com/tomato.jpg)" in doc.markdown
    assert "](//" not in doc.markdown


@pytest.mark.parametrize(
    "char",
    ["\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\ufffe", "&#27;", "&#x1B;", "&#12;",
     "&#x0c", "&#0001;", "&#31;"],
)  # fmt: skip
def test_a_character_xml_forbids_costs_the_page_nothing(char):
    # trafilatura and readability build XML from the tree: one such character in it made
    # both give up, and the page came back empty, said to need JavaScript.
    paragraph = "The committee met on Tuesday to discuss the annual budget and a new library."
    html = f"<html><head><title>T</title></head>{char}<body><article><p>{char}{paragraph}"
    document = html_to_markdown(html + "</p></article></body></html>", "https://example.org/a")
    assert document.markdown == paragraph
    assert document.warnings == []


@pytest.mark.parametrize(
    "hiding",
    [
        "&#27;]<div hidden>&#27;\\SECRET words here</div>",
        "a &#27;[<span hidden>SECRET words here</span>",
        "a &#27; <span style='display:none'>SECRET words here</span>",
        "\x1b]<div hidden>\x07SECRET words here</div>",
        '<span title="&#27;[" hidden>SECRET words here</span>',
    ],
)
def test_an_escape_sequence_never_unmakes_the_markup_that_hides_text(hiding):
    """A terminal's escape sequence can hold `<`, `>` and quotes: it is taken out of the
    text once the tree is built, never out of the markup, where it would unmake a tag."""
    paragraph = "The committee met on Tuesday to discuss the annual budget and a new library."
    html = f"<html><body><article><p>{paragraph}</p>{hiding}<p>{paragraph}</p></article></body>"
    for full_page in (False, True):
        document = html_to_markdown(html + "</html>", "https://example.org/a", full_page=full_page)
        assert "SECRET" not in document.markdown
        assert paragraph in document.markdown


def test_a_stray_esc_takes_no_word_with_it():
    assert visible("foo\x1b bar") == "foo bar"
    assert visible("a\x1b, b") == "a, b"
    assert visible("x\x1b(By") == "xy"  # a charset switch goes whole


@pytest.mark.parametrize(
    ("ref", "char"),
    [("&#1234;", "\u04d2"), ("&#x1F600;", "\U0001f600"), ("&#65;", "A"), ("&#x31;", "1"),
     ("&#3", "")],
)  # fmt: skip
def test_only_the_references_xml_forbids_go(ref, char):
    document = html_to_markdown(f"<p>Budget {ref}x debate in the council.</p>", "https://e.org/")
    assert document.markdown == f"Budget {char}x debate in the council."


@pytest.mark.parametrize(
    ("title", "site", "expected"),
    [
        ("Release notes 2.0 | Example Blog", "Example Blog", "Release notes 2.0"),
        ("Example Blog | Release notes 2.0", "Example Blog", "Release notes 2.0"),
        ("Node.js 22 is out - Example Blog", "Example Blog", "Node.js 22 is out"),
        ("example.com - Python changes", None, "Python changes"),
        ("Python 3.12 changes | Docs", None, "Python 3.12 changes"),
        ("Release notes 2.0", "Example Blog", "Release notes 2.0"),
        ("Example Blog | example.com", "Example Blog", "Example Blog | example.com"),
    ],
)
def test_the_title_is_the_part_of_title_that_is_not_the_site(title, site, expected):
    # trafilatura takes the first part without a dot: "Example Blog" for the first one.
    meta = f'<meta property="og:site_name" content="{site}">' if site else ""
    body = "<p>" + "Version 2.0 is out, with a faster start-up and a quiet flag. " * 5 + "</p>"
    html = f"<html><head><title>{title}</title>{meta}</head><body>{body}</body></html>"
    assert html_to_markdown(html, "https://example.com/notes").title == expected


def test_json_ld_gives_the_headline_author_publisher_and_description():
    data = {
        "@context": "https://schema.org",
        "@graph": [
            {"@type": "Organization", "name": "LD Pub", "description": "Who we are."},
            {"@type": "NewsArticle", "headline": "LD headline", "datePublished": "2023-07-04",
             "author": {"@type": "Person", "name": "Lee Dee"}, "description": "What happened."},
        ],
    }  # fmt: skip
    head = f'<script type="application/ld+json">{json.dumps(data)}</script>'
    body = "<article>" + "<p>The council met on Tuesday to discuss the budget.</p>" * 4
    doc = html_to_markdown(f"<html><head>{head}</head><body>{body}</article></body></html>", URL)
    assert (doc.title, doc.author, doc.date) == ("LD headline", "Lee Dee", "2023-07-04")
    assert (doc.site_name, doc.description) == ("LD Pub", "What happened.")


@pytest.mark.parametrize(
    "data",
    [[1, "two", None], {"@context": "https://schema.org", "@graph": [1, "x", {"@type": 7}]},
     {"@context": "https://schema.org", "@type": "Article", "author": 5, "publisher": "P"},
     {"@context": "https://schema.org", "@type": "Article", "author": [None, {"name": 3}]},
     {"@context": "https://schema.org", "@type": ["Article", None], "headline": ["a"]}],
)  # fmt: skip
def test_json_ld_of_any_shape_gives_what_it_can_and_never_fails(data):
    head = f'<script type="application/ld+json">{json.dumps(data)}</script><title>Kept</title>'
    body = "<p>The council met on Tuesday to discuss the budget and the library.</p>"
    doc = html_to_markdown(f"<html><head>{head}</head><body>{body}</body></html>", URL)
    assert doc.markdown.startswith("The council met")
    assert doc.title is None or isinstance(doc.title, str)


def test_html_written_as_text_stays_text_in_every_mode():
    # A reader of the markdown would render the tag: a link to javascript: among others.
    text = 'Click &lt;a href="javascript:alert(12)"&gt;here&lt;/a&gt;, or &lt;img src=x&gt;.'
    page = f"<html><body><article><p>{text} " + "More words of the article. " * 20
    page += "</p><p>Code: <code>&lt;div&gt;</code></p><pre>&lt;b&gt;bold&lt;/b&gt;</pre>"
    for full_page in (False, True):
        markdown = html_to_markdown(page + "</article></body></html>", URL, full_page=full_page)
        assert '\\<a href="javascript:alert(12)">here\\</a>' in markdown.markdown
        assert "\\<img src=x>" in markdown.markdown
        assert "`<div>`" in markdown.markdown
    assert "```\n<b>bold</b>\n```" in markdown.markdown  # in its code block, whole


def test_tidy_escapes_tags_but_not_code_autolinks_or_comparisons():
    from ikigai_web.fetch.reading.markdown import tidy

    kept = "\n`<i>` and ``x`<i>`` and <https://e.org/x> and 1 < 2, \\<u>\n```\n<p>\n```"
    kept += "\nx<sup>2</sup>, H<sub>2</sub>O, <u>u</u> and [W](</wiki/A_(b)>)"  # markdown's own
    assert (
        tidy("a <b>b</b> <sup class=x>c</sup>" + kept)
        == "a \\<b>b\\</b> \\<sup class=x>c</sup>" + kept
    )
