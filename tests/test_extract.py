"""Tests of ikigai_web.fetch.reading.extract: HTML to markdown of the main content."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.common.text import visible
from ikigai_web.fetch.reading import extract
from ikigai_web.fetch.reading.extract import html_to_markdown

if TYPE_CHECKING:
    from ikigai_web.fetch.reading.document import Document

URL = "https://example.com/blog/2024/post.html"
FILLER = (
    "Readers who follow the project will find the details below, with the reasoning behind "
    "each choice and the trade-offs that were weighed before the decision was made."
)

ARTICLE = f"""<!DOCTYPE html>
<html lang="en"><head>
<title>Growing Tomatoes Indoors | Garden Notes</title>
<meta name="author" content="Jane Gardener">
<meta name="description" content="How to grow tomatoes on a windowsill.">
<meta property="og:site_name" content="Garden Notes">
<meta property="og:title" content="Growing Tomatoes Indoors">
<meta property="article:published_time" content="2024-03-05T10:00:00Z">
<script>var tracking = "should never appear";</script>
<style>.x {{ color: red }}</style>
</head><body>
<nav class="menu"><ul><li><a href="/">Home page link</a></li><li><a href="/shop">Shop</a></li>
<li><a href="/about">About us and our team</a></li></ul></nav>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience.
<button>Accept all cookies</button></div>
<main><article>
<h1>Growing Tomatoes Indoors</h1>
<p>Tomatoes grow well on a sunny windowsill. {FILLER} See the
<a href="../guides/soil.html">soil guide</a> before you start.</p>
<h2>What you need</h2>
<p>Gather the following before sowing. {FILLER}</p>
<ol><li>A deep pot with drainage</li>
<li>Seed compost<ul><li>peat-free blend</li><li>fine grade</li></ul></li>
<li>Seeds of a dwarf variety</li></ol>
<h3>Watering schedule</h3>
<p>Water every other day, more in summer. {FILLER}</p>
<pre><code class="language-python">def water(days):
    return [d for d in days if d % 2 == 0]
</code></pre>
<p>The table compares three varieties grown last year. {FILLER}</p>
<table><thead><tr><th>Variety</th><th>Yield (kg)</th></tr></thead>
<tbody><tr><td>Tiny Tim</td><td>1.2</td></tr><tr><td>Red Robin</td><td>0.9</td></tr></tbody></table>
<p><img src="img/seedlings.jpg" alt="Seedlings on a windowsill"> Seedlings appear after a week
or so, and need turning daily towards the light. {FILLER}</p>
<p>Harvest when the fruit is fully red. {FILLER}</p>
</article></main>
<footer class="site-footer"><p>Copyright 2024 Garden Notes Ltd. All rights reserved.</p>
<a href="/privacy">Privacy policy</a></footer>
</body></html>"""


@pytest.fixture(scope="module")
def article() -> Document:
    return html_to_markdown(ARTICLE, URL)


def test_headings_are_atx_and_the_title_heading_is_not_repeated(article):
    assert "## What you need" in article.markdown
    assert "### Watering schedule" in article.markdown
    assert "# Growing Tomatoes Indoors" not in article.markdown
    assert article.title == "Growing Tomatoes Indoors"


def test_ordered_list_with_a_nested_list_indented_under_its_item(article):
    lines = article.markdown.splitlines()
    assert "1. A deep pot with drainage" in lines
    assert "2. Seed compost" in lines
    assert "3. Seeds of a dwarf variety" in lines
    # CommonMark nests a sub-list only when indented to the parent item's text ("2. " = 3).
    assert "   - peat-free blend" in lines
    assert "   - fine grade" in lines


def test_code_block_is_fenced_with_the_language_the_page_gives(article):
    assert "```python\ndef water(days):\n    return [d for d in days if d % 2 == 0]" in (
        article.markdown
    )


def test_table_becomes_a_markdown_table(article):
    assert "| Variety | Yield (kg) |" in article.markdown
    assert "| Tiny Tim | 1.2 |" in article.markdown
    assert "|---|---|" in article.markdown


def test_relative_link_is_made_absolute_against_the_final_url(article):
    assert "[soil guide](https://example.com/blog/guides/soil.html)" in article.markdown


def test_image_keeps_alt_text_and_absolute_source(article):
    assert (
        "![Seedlings on a windowsill](https://example.com/blog/2024/img/seedlings.jpg)"
        in article.markdown
    )


def test_boilerplate_and_scripts_are_removed(article):
    for noise in ("Home page link", "cookies", "Copyright 2024", "Privacy policy", "tracking"):
        assert noise not in article.markdown


def test_metadata_fields(article):
    assert article.author == "Jane Gardener"
    assert article.date == "2024-03-05"
    assert article.site_name == "Garden Notes"
    assert article.description == "How to grow tomatoes on a windowsill."


def test_include_links_false_keeps_the_text_and_drops_the_target():
    doc = html_to_markdown(ARTICLE, URL, include_links=False)
    assert "soil guide" in doc.markdown
    assert "](https://example.com/blog/guides/soil.html)" not in doc.markdown
    assert "[soil guide]" not in doc.markdown


def test_full_page_converts_everything_without_extraction():
    doc = html_to_markdown(ARTICLE, URL, full_page=True)
    for kept in ("Home page link", "Accept all cookies", "Copyright 2024", "Privacy policy"):
        assert kept in doc.markdown
    assert "# Growing Tomatoes Indoors" in doc.markdown
    assert "[Shop](https://example.com/shop)" in doc.markdown
    assert "| Tiny Tim | 1.2 |" in doc.markdown
    assert "```python\ndef water(days):" in doc.markdown
    assert "   - peat-free blend" in doc.markdown
    assert "tracking" not in doc.markdown
    assert "color: red" not in doc.markdown
    assert doc.title == "Growing Tomatoes Indoors"


def test_full_page_without_links():
    doc = html_to_markdown(ARTICLE, URL, full_page=True, include_links=False)
    assert "Shop" in doc.markdown
    assert "https://example.com/shop" not in doc.markdown


def test_base_href_is_honoured_for_relative_links():
    page = ARTICLE.replace("<head>", '<head><base href="https://cdn.example.org/docs/">')
    doc = html_to_markdown(page, URL)
    assert "[soil guide](https://cdn.example.org/guides/soil.html)" in doc.markdown


def test_lang_prefix_class_on_pre_also_labels_the_fence():
    page = ARTICLE.replace('<pre><code class="language-python">', '<pre class="lang-rust"><code>')
    assert "```rust\ndef water(days):" in html_to_markdown(page, URL).markdown


def test_code_without_language_keeps_a_bare_fence():
    page = ARTICLE.replace('<code class="language-python">', "<code>")
    assert "```\ndef water(days):" in html_to_markdown(page, URL).markdown


def test_one_line_code_block_stays_a_fenced_block():
    one_line = '<pre><code class="language-python">print("hello")</code></pre>'
    page = ARTICLE.replace("<h2>What you need</h2>", one_line + "<h2>What you need</h2>")
    markdown = html_to_markdown(page, URL).markdown
    assert '```python\nprint("hello")\n```' in markdown
    assert '\n`print("hello")`\n' not in markdown


def test_inline_code_in_a_sentence_stays_inline():
    page = ARTICLE.replace(
        "Tomatoes grow well", "Run <code>sow --now</code> first. Tomatoes grow well"
    )
    markdown = html_to_markdown(page, URL).markdown
    assert "Run `sow --now` first." in markdown
    assert "```\nsow --now" not in markdown


@pytest.mark.parametrize("full_page", [False, True])
def test_a_video_or_audio_s_fallback_text_goes_and_its_source_stays(full_page):
    players = (
        "<video src='clip.mp4' controls>Your browser does not support the video tag.</video>"
        # The parser knows no <source>: unclosed, it holds the next source and the fallback.
        "<video controls><source src='talk.webm'><source src='talk.mp4'>Your browser cannot "
        "play this video.<p>Old browsers: <a href='talk.mp4'>download it</a>.</p></video>"
        "<audio><source src='song.mp3'>No audio support here.</audio>"
    )
    page = ARTICLE.replace("<h2>What you need</h2>", f"{players}<h2>What you need</h2>")
    markdown = html_to_markdown(page, URL, full_page=full_page).markdown
    for fallback in ("does not support", "cannot play", "Old browsers", "No audio"):
        assert fallback not in markdown
    assert "What you need" in markdown
    if full_page:  # the page's media, as links to what they play
        for source in ("clip.mp4", "talk.webm", "song.mp3"):
            assert f"(https://example.com/blog/2024/{source})" in markdown


def test_an_underline_leaves_its_text_and_no_html_in_the_markdown():
    page = ARTICLE.replace(
        '<a href="../guides/soil.html">soil guide</a>',
        '<a href="../guides/soil.html"><u>soil guide</u></a>, <u>twice</u>, and the tag '
        "<code>&lt;u&gt;</code>",
    )
    markdown = html_to_markdown(page, URL).markdown
    assert "[soil guide](https://example.com/blog/guides/soil.html), twice, and" in markdown
    assert "`<u>`" in markdown  # a tag the page writes as text stays
    assert "<u>soil" not in markdown


def test_falls_back_to_readability_when_trafilatura_finds_nothing(monkeypatch):
    import trafilatura

    monkeypatch.setattr(trafilatura, "bare_extraction", lambda *_args, **_kwargs: None)
    doc = html_to_markdown(ARTICLE, URL)
    assert "Tomatoes grow well on a sunny windowsill." in doc.markdown
    assert "[soil guide](https://example.com/blog/guides/soil.html)" in doc.markdown
    assert "```python\ndef water(days):" in doc.markdown
    assert "| Tiny Tim | 1.2 |" in doc.markdown
    assert "Home page link" not in doc.markdown


def test_falls_back_when_trafilatura_stops_short(monkeypatch):
    monkeypatch.setattr(extract, "_trafilatura", lambda *_args, **_kwargs: "Tomatoes grow well.")
    doc = html_to_markdown(ARTICLE, URL)
    assert "Harvest when the fruit is fully red." in doc.markdown


# --- quotations: a quoted speaker's words never read as the writer's -------------------------

SAID = "We heard from hundreds of residents who told us the library matters more than anything."
REPORTED = (
    "<p>" + "The council met on Tuesday and heard residents on the new budget at length. " * 4
)


def _news(quote: str) -> str:
    return (f"<html><head><title>Council passes budget</title></head><body><nav><a href='/'>Home"
            f"</a></nav><article><h1>Council passes budget</h1>{REPORTED}</p>{quote}{REPORTED}"
            "</p></article><footer>Copyright</footer></body></html>")  # fmt: skip


ATTRIBUTED = {
    "a footer in the quote": f"<blockquote><p>{SAID}</p><footer>\u2014 <cite>Jane Doe, mayor"
                             "</cite></footer></blockquote>",
    "a figure's caption": f"<figure><blockquote><p>{SAID}</p></blockquote><figcaption "
                          "class='caption'>Jane Doe, mayor</figcaption></figure>",
    "a cite that ends it": f"<blockquote><p>{SAID}</p><cite>Jane Doe, mayor</cite></blockquote>",
    "a cite after it": f"<blockquote><p>{SAID}</p></blockquote><cite>Jane Doe, mayor</cite>",
}  # fmt: skip


@pytest.mark.parametrize("full_page", [False, True], ids=["article", "full_page"])
@pytest.mark.parametrize("quote", list(ATTRIBUTED.values()), ids=list(ATTRIBUTED))
def test_a_quotation_and_its_attribution_keep_their_marks_in_every_mode(quote, full_page):
    markdown = html_to_markdown(_news(quote), URL, full_page=full_page).markdown
    assert f"> {SAID}\n>\n> \u2014 Jane Doe, mayor\n" in markdown, markdown
    assert markdown.count("Jane Doe") == 1


def test_a_quotation_read_by_readability_keeps_its_marks_too(monkeypatch):
    import trafilatura

    monkeypatch.setattr(trafilatura, "bare_extraction", lambda *_args, **_kwargs: None)
    markdown = html_to_markdown(_news(ATTRIBUTED["a figure's caption"]), URL).markdown
    assert f"> {SAID}\n>\n> \u2014 Jane Doe, mayor" in markdown, markdown


def test_a_quotation_of_several_paragraphs_is_one_quote():
    quote = f"<blockquote><p>{SAID}</p><p>And then: {SAID}</p></blockquote>"
    markdown = html_to_markdown(_news(quote), URL).markdown
    assert f"> {SAID}\n>\n> And then: {SAID}" in markdown, markdown


def test_an_inline_quotation_stays_in_its_sentence_with_its_marks():
    sentence = (
        "<p>The mayor called it <q>a budget for <q>every</q> reader</q> and left the room.</p>"
    )
    markdown = html_to_markdown(_news(sentence), URL).markdown
    assert (
        "The mayor called it \u201ca budget for \u2018every\u2019 reader\u201d and left" in markdown
    )


def test_a_page_cannot_forge_where_a_quotation_goes():
    # Text that looks like a stand-in for a quote is the page's text, left as it is.
    forged = "<p>quote0000000000000000n0</p>"
    quote = f"<blockquote><p>{SAID}</p></blockquote>"
    markdown = html_to_markdown(_news(forged + quote), URL).markdown
    assert "quote0000000000000000n0" in markdown
    assert markdown.count(SAID) == 1


def test_readability_fallback_when_both_find_nothing_gives_empty_markdown():
    doc = html_to_markdown("<html><body><div></div></body></html>", URL)
    assert doc.markdown == ""


def words(count: int, start: int = 0) -> str:
    return " ".join(f"w{i}" for i in range(start, start + count))


def test_choose_keeps_trafilatura_when_the_two_agree():
    assert extract._choose(words(100), words(100)) == words(100)


def test_choose_takes_readability_when_trafilatura_found_a_small_part():
    assert extract._choose(words(30), words(100)) == words(100)
    # Two thirds is still short: trafilatura stopped before readability's running text ended.
    assert extract._choose(words(65), words(100)) == words(100)
    assert extract._choose(words(75), words(100)) == words(75)


def test_choose_takes_readability_when_trafilatura_adds_much_around_it():
    teasers = words(100) + "\n\n" + words(40, start=500)
    assert extract._choose(teasers, words(100)) == words(100)


def paragraphs(count: int, start: int, end: str = ".") -> str:
    return "\n\n".join(words(20, start=start + 20 * n) + end for n in range(count))


def test_choose_keeps_trafilatura_when_what_it_adds_is_running_text():
    # Sections that readability left out: more paragraphs, not teasers around the body.
    body, sections = paragraphs(3, 0), paragraphs(5, 500)
    assert extract._choose(f"{body}\n\n{sections}", body) == f"{body}\n\n{sections}"


def test_choose_takes_readability_when_what_trafilatura_adds_is_teasers():
    # A teaser is a paragraph cut short: it ends in an ellipsis.
    body = paragraphs(3, 0)
    for ellipsis in ("...", "\u2026"):
        teasers = paragraphs(5, 500, end=ellipsis)
        assert extract._choose(f"{body}\n\n{teasers}", body) == body


def test_choose_keeps_trafilatura_when_readability_found_a_mere_scrap_of_it():
    page = words(20) + "\n\n" + words(300, start=500)
    assert extract._choose(page, words(20)) == page


def test_choose_keeps_trafilatura_when_readability_adds_no_running_text():
    # Far more words, but what readability added is a list: trafilatura did not stop short.
    body = paragraphs(2, 0)
    listed = "\n".join(f"- {words(3, start=900 + 3 * n)}" for n in range(40))
    assert extract._choose(body, f"{body}\n\n{listed}") == body
    assert extract._choose(body, f"{body}\n\n{paragraphs(6, 900)}") != body


def test_choose_keeps_trafilatura_when_readability_found_another_part():
    assert extract._choose(words(100), words(100, start=1000)) == words(100)


def test_choose_keeps_what_trafilatura_adds_between_readability_s_passages():
    # A table readability skipped inside the article, not teasers around it: no prose, and
    # far more than readability's, yet part of the article.
    start, end = paragraphs(3, 0), paragraphs(3, 300)
    table = "\n".join(f"| {words(4, 900 + 4 * n)} |" for n in range(20))
    primary = f"{start}\n\n{table}\n\n{end}"
    assert extract._choose(primary, f"{start}\n\n{end}") == primary
    # The same table after the article is the page's furniture.
    assert extract._choose(f"{start}\n\n{end}\n\n{table}", f"{start}\n\n{end}") != primary


def test_choose_takes_readability_when_it_fills_a_gap_trafilatura_left():
    start, middle, end = paragraphs(4, 0), paragraphs(2, 300), paragraphs(4, 600)
    fallback = f"{start}\n\n{middle}\n\n{end}"
    assert extract._choose(f"{start}\n\n{end}", fallback) == fallback
    # Readability's additions around trafilatura's text are no gap that trafilatura left.
    around = f"{start}\n\n{end}\n\n{middle}"
    assert extract._choose(f"{start}\n\n{end}", around) == f"{start}\n\n{end}"


def test_the_text_between_shared_passages_is_measured_in_4_grams():
    assert extract._between(words(100), words(100)) == 0
    gap = f"{words(50)} {words(20, start=500)} {words(50, start=50)}"
    # Twenty words and the three 4-grams on each side of them that span the seam.
    assert extract._between(gap, words(100)) == 23 / 117
    # Seen from the other side, the gap is only a seam: the three 4-grams that span it.
    assert extract._between(words(100), gap) == 3 / 97
    assert extract._between(words(100), words(100, start=1000)) == 0


FAIR = [
    "The county fair opened on Saturday with a parade of tractors down the main street.",
    "Farmers brought their best pumpkins, and the heaviest weighed more than a small car.",
    "Children queued for the carousel while their parents compared jars of jam.",
    "In the evening a band played old songs by the river until the fireworks began.",
]


def test_a_page_laid_out_in_a_table_gives_its_text_not_its_layout():
    # The old way to lay out a page: a menu column and the text, as <br>-separated runs of
    # sentences, in the cells of one table. trafilatura keeps every row of it.
    runs = "<br><br>".join(" ".join(FAIR[(i + j) % 4] for j in range(3)) for i in range(6))
    menu = "".join(f'<tr><td><a href="/s{n}">Section {n}</a></td></tr>' for n in range(8))
    html = f"""<html><body><table>
    <tr><td colspan="2"><a href="/">Home</a> | <a href="/news">News</a></td></tr>
    <tr><td><table>{menu}</table></td><td>{runs}</td></tr>
    <tr><td colspan="2">Copyright 2004 The Town Crier. <a href="/contact">Contact us</a></td></tr>
    </table></body></html>"""
    markdown = html_to_markdown(html, URL).markdown
    assert FAIR[0] in markdown
    assert "|" not in markdown
    assert "Section 3" not in markdown
    assert "Copyright" not in markdown


def laid_out(body: str) -> str:
    """Text as trafilatura gives a table-laid page: a row for the menu and for each cell."""
    menu = "\n".join(f"| [{words(2, 900 + 2 * n)}](https://example.com/{n}) |" for n in range(5))
    return f"{menu}\n| {body.replace(chr(10) * 2, ' ')} |"


def test_choose_takes_readability_when_trafilatura_kept_a_table_layout():
    body = paragraphs(5, 0)
    assert extract._choose(laid_out(body), body) == body


def test_a_layout_is_table_rows_that_hold_paragraphs_with_no_prose_around_them():
    body = paragraphs(5, 0)
    assert extract._layout(laid_out(body))
    assert not extract._layout(body)
    assert not extract._layout(f"{paragraphs(2, 500)}\n\n{laid_out(body)}")
    data = "\n".join(f"| {words(4, 4 * n)} |" for n in range(30))
    assert not extract._layout(data)


def test_choose_keeps_a_table_of_data_that_readability_gives_as_paragraphs():
    data = "\n".join(f"| {words(4, 4 * n)} |" for n in range(30))
    assert extract._choose(data, paragraphs(6, 0)) == data


def test_a_lone_article_element_confirms_trafilatura_only_when_it_is_the_page_s_text():
    text = paragraphs(10, 0, end="")
    article = f"<article>{text}</article>"
    tree = extract._parse(f"<html><body><nav>Home About</nav>{article}</body></html>", URL).tree
    assert extract._settled(text, tree)
    # An FAQ box marked as the page's one <article>, beside a long text that is not in it.
    aside = f"<div>{paragraphs(50, 1000)}</div>"
    tree = extract._parse(f"<html><body>{aside}{article}</body></html>", URL).tree
    assert not extract._settled(text, tree)


def test_trafilatura_is_settled_by_half_the_page_in_running_text():
    def settled(found: str, page: str) -> bool:
        tree = extract._parse(f"<html><body>{page}</body></html>", URL).tree
        return extract._settled(found, tree)

    prose, menu = paragraphs(10, 0), "".join(f"<li>{words(3, n)}</li>" for n in range(0, 90, 3))
    assert settled(prose, f"<div>{prose}</div><ul>{menu}</ul>")
    # Not a small part of a long page (trafilatura may have stopped short)...
    assert not settled(prose, f"<div>{prose}</div><div>{paragraphs(20, 900)}</div>")
    # ...nor text that is not running prose: readability may leave its lists and teasers out.
    teasers = paragraphs(10, 0, end="...")
    assert not settled(teasers, f"<div>{teasers}</div><ul>{menu}</ul>")
    listed = "\n".join(f"- {words(20, 20 * n)}" for n in range(10))
    assert not settled(listed, f"<div>{listed}</div>")


def test_readability_is_not_asked_about_a_settled_text(monkeypatch):
    def asked(*_args: object, **_kwargs: object) -> str:
        raise AssertionError("readability was run")

    body = "".join(f"<p>{words(20, 20 * n)}.</p>" for n in range(10))
    html = f"<html><body><nav><a href='/'>Home</a></nav><div>{body}</div></body></html>"
    monkeypatch.setattr(extract, "_readability", asked)
    assert "w199." in extract.html_to_markdown(html, URL).markdown
    with pytest.raises(AssertionError, match="readability was run"):
        extract.html_to_markdown(html.replace(".</p>", "...</p>"), URL)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "  one  ",
        "a\tb",
        "a\t\tb",
        "a \t b",
        "a\t \tb",
        "a\u00a0\u00a0b",
        "a \r\n\t b",
        "a\u2003 \u2003b",
        "a\x0b\x0cb",
        "a" + " " * 254 + "b",
        "a" + " " * 255 + "b",
        "a" + "\t" * 300 + "b",
        "\n\n  lead and trail \t\n",
    ],
)
def test_readabilitys_text_length_is_measured_as_its_clean_measures_it(text):
    # readability's link density (the share of a block's text in links) rests on these
    # lengths: measured without building the text, they must stay exactly its own.
    from readability.readability import clean

    assert extract._cleaned_length(text) == len(clean(text))


def test_readabilitys_text_length_holds_on_any_mix_of_white_space():
    import random

    from readability.readability import clean

    pieces = ["word", ",", " ", "  ", "\t", "\n", "\r", "\u00a0", "\u3000", "\x1c", " " * 130]
    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        assert extract._cleaned_length(text) == len(clean(text)), repr(text)


def test_readabilitys_link_density_is_its_own():
    import lxml.html
    from readability import Document as Readable

    links = "".join(f"<a href='/{n}'>  link\t{n} </a>\n   " for n in range(5))
    html = f"<html><body><div id='box'><p>{FILLER}</p>\n\n  {links}</div></body></html>"
    document = extract._readable()(lxml.html.document_fromstring(html))
    box = document._html(True).get_element_by_id("box")  # the tree it scores
    density = document.get_link_density(box)
    assert 0 < density == Readable.get_link_density(document, box)


def test_the_tree_is_html_elements_without_lxmls_per_tag_classes():
    # One class for every element, chosen in C: lxml.html's per-tag lookup runs Python code
    # each time an element is touched, and nothing here uses its form helpers.
    import lxml.html

    form = "<form><input name='q'><p>Text</p></form>"
    parsed = extract._parse(f"<html><body>{form}</body></html>", URL)
    assert {type(element) for element in parsed.tree.iter()} == {lxml.html.HtmlElement}
    assert parsed.tree.find(".//form").text_content() == "Text"


def test_choose_with_an_empty_side():
    assert extract._choose("", words(10)) == words(10)
    assert extract._choose(words(10), "") == words(10)


def test_title_heading_kept_when_it_differs_from_the_title():
    markdown = "# Something else entirely\n\nBody text."
    assert extract.drop_title(markdown, "Growing Tomatoes Indoors") == markdown
    assert extract.drop_title(markdown, None) == markdown


def test_title_heading_dropped_when_the_title_carries_the_site_name():
    markdown = "# Growing Tomatoes Indoors\n\nBody text."
    assert extract.drop_title(markdown, "Growing Tomatoes Indoors | Garden") == "Body text."


def test_indent_fixer_leaves_code_blocks_alone():
    markdown = "1. one\n  - sub\n\n```\n  - not a list\n    code\n```\ntext"
    expected = "1. one\n   - sub\n\n```\n  - not a list\n    code\n```\ntext"
    assert extract._fix_indents(markdown) == expected


def test_indent_fixer_keeps_source_indentation_from_making_code_blocks():
    markdown = (
        "Intro\n        indented prose\n- \n                    [Teaser](https://e.com/t)\n- b"
    )
    expected = "Intro\nindented prose\n- \n  [Teaser](https://e.com/t)\n- b"
    assert extract._fix_indents(markdown) == expected


def test_indent_fixer_keeps_fences_inside_list_items():
    markdown = "1. step\n\n   ```\n   x = 1\n   ```\n2. next"
    assert extract._fix_indents(markdown) == markdown


@pytest.mark.parametrize(
    ("html", "reason"),
    [
        ("", "empty"),
        ("   \n\t ", "empty"),
        ("\x00\x00\x00", "empty"),
        ("<!-- nothing but a comment -->", "empty"),
        ("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\x02\x03\x04\x05\x06\x07" * 20, "binary"),
    ],
)
def test_unparsable_input_is_parse_error(html, reason):
    with pytest.raises(ToolError) as caught:
        html_to_markdown(html, URL)
    assert caught.value.code is ErrorCode.PARSE_ERROR
    assert reason in caught.value.message
    assert URL in caught.value.message


def test_xml_declaration_in_a_string_is_accepted():
    page = '<?xml version="1.0" encoding="ISO-8859-1"?>\n' + ARTICLE.replace("<!DOCTYPE html>", "")
    doc = html_to_markdown(page, URL)
    assert "Tomatoes grow well on a sunny windowsill." in doc.markdown


def test_non_ascii_text_survives():
    page = ARTICLE.replace("Tomatoes grow well", "Les tomates poussent très bien — 日本語")
    assert "Les tomates poussent très bien — 日本語" in html_to_markdown(page, URL).markdown


def test_importing_the_module_does_not_import_the_extractors():
    code = (
        "import sys, ikigai_web.fetch.reading.extract\n"
        "heavy = {'trafilatura', 'readability', 'lxml', 'markdownify', 'bs4'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_huge_extraction_skips_the_readability_comparison(monkeypatch):
    def fail(*_args, **_kwargs):
        raise AssertionError("readability must not run on a huge page")

    monkeypatch.setattr(extract, "_LARGE", 100)
    monkeypatch.setattr(extract, "_readability", fail)
    doc = html_to_markdown(ARTICLE, URL)
    assert "```python\ndef water(days):" in doc.markdown


def test_readability_failure_leaves_trafilatura_output(monkeypatch):
    from readability.readability import Unparseable

    def broken(*_args, **_kwargs):
        raise Unparseable

    monkeypatch.setattr("readability.Document.summary", broken)
    assert extract._readability(extract._parse(ARTICLE, URL), include_links=True) == ""
    assert "Tomatoes grow well" in html_to_markdown(ARTICLE, URL).markdown


def test_short_heading_inside_a_longer_title_is_kept():
    markdown = "# News\n\nBody text."
    assert extract.drop_title(markdown, "News about tomatoes | Garden") == markdown
    assert extract.drop_title(markdown, "News") == "Body text."


def test_full_page_leaves_out_hidden_elements():
    page = (
        "<html><body><p>Shown text.</p><div hidden>Hidden by attribute.</div>"
        '<div style="color: red; display: none">Hidden by style.</div></body></html>'
    )
    assert html_to_markdown(page, URL, full_page=True).markdown == "Shown text."


def test_title_heading_that_is_a_link_is_dropped_too():
    markdown = "# [Growing Tomatoes Indoors](https://example.com/t)\n\nBody text."
    assert extract.drop_title(markdown, "Growing Tomatoes Indoors") == "Body text."


def test_full_page_labels_a_pre_without_code_from_its_own_class():
    page = '<html><body><pre class="language-sh">ls -la\n</pre></body></html>'
    assert html_to_markdown(page, URL, full_page=True).markdown == "```sh\nls -la\n```"


# Huge pages: converted within bounds, and a cut says so.

NOTE = "> [web-fetch: this page is too large to convert whole"


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
