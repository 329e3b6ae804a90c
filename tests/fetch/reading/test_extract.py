"""Tests of ikigai_web.fetch.reading.extract: HTML to markdown of the main content."""

from __future__ import annotations

import subprocess
import sys

import pytest
from extract_support import ARTICLE, FILLER, URL

from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.fetch.reading import extract
from ikigai_web.fetch.reading.extract import html_to_markdown


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


@pytest.mark.parametrize("html", ["", "   \n\t ", "\x00\x00\x00"])
def test_a_page_of_nothing_is_the_empty_wall(html):
    """No bytes, white space, NULs: the contract's `empty` wall (HTTP_ERROR), not a parse
    error (walls.py; issue 54, half b)."""
    with pytest.raises(ToolError) as caught:
        html_to_markdown(html, URL)
    assert caught.value.code is ErrorCode.HTTP_ERROR
    assert caught.value.wall == "empty"
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
