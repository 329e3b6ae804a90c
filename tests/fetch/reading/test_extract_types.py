"""Page types: detection, the extraction each type gets, and the warnings of odd pages.

Every page here is small and hand-written: it has the shape of its kind, not any real site's.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import asdict
from pathlib import Path
from urllib.parse import urljoin

import pytest

from ikigai_web.fetch.reading import embedded, extract, links, markdown, pagetype
from ikigai_web.fetch.reading import typed as pages
from ikigai_web.fetch.reading.document import Document
from ikigai_web.fetch.reading.extract import html_to_markdown

WEIGHTS, WORDS = pagetype.shipped_model()[:2]  # the weights web-fetch ships

LOREM = (
    "The committee met twice before the vote, and each member explained the reasons for the "
    "position they would take when the question finally came to the floor of the assembly."
)
NAV = (
    "<header><a href='/'>Site home link</a></header><nav><ul><li><a href='/a'>Menu entry one"
    "</a></li><li><a href='/b'>Menu entry two</a></li></ul></nav>"
)
FOOTER = "<footer><p>Footer words: copyright and imprint.</p></footer>"


def page(body: str, head: str = "", title: str = "A page") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{NAV}{body}{FOOTER}</body></html>"


def ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


FORUM = page(
    "<main><h1>Kettle descaling: vinegar or citric acid?</h1>"
    + "".join(
        f"<div class='post' id='p{n}'><div class='author'>user{n}</div>"
        f"<time datetime='2024-05-0{n}'>May {n}, 2024</time>"
        f"<div class='post-body'><p>Reply number {n}: {LOREM}</p></div></div>"
        for n in range(1, 5)
    )
    + "</main>",
    head=ld({"@context": "https://schema.org", "@type": "DiscussionForumPosting"}),
)


def test_forum_thread_keeps_every_post_in_order_with_author_and_date():
    doc = html_to_markdown(FORUM, "https://example.org/forum/threads/kettle-descaling.42/")
    assert doc.page_type == "forum"
    positions = [doc.markdown.index(f"Reply number {n}:") for n in range(1, 5)]
    assert positions == sorted(positions)
    for n in range(1, 5):
        assert f"user{n}" in doc.markdown
        assert f"May {n}, 2024" in doc.markdown
    assert "Menu entry one" not in doc.markdown
    assert "Footer words" not in doc.markdown


PRODUCT_BODY = (
    "<main><div class='product'><h1>Trail Flask 750</h1><p class='price'>$24.00</p>"
    "<button>Add to cart</button>"
    "<div class='description'><p>A double-walled steel flask that keeps water cold for a "
    "whole day on the trail.</p><ul><li>Leak-proof lid</li><li>Fits bike cages</li></ul></div>"
    "<table><tr><th>Capacity</th><td>750 ml</td></tr><tr><th>Weight</th><td>310 g</td></tr>"
    "</table></div>"
    "<section class='upsell'><h2>You may also like</h2><ul class='grid'>"
    + "".join(
        f"<li class='tile'><a href='/p/{n}'>Other bottle {n}</a> <span>$1{n}.00</span></li>"
        for n in range(4)
    )
    + "</ul></section></main>"
)
PRODUCT = page(
    PRODUCT_BODY,
    head=ld(
        {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": "Trail Flask 750",
            "description": "Made from recycled stainless steel in a solar-powered plant, "
            "and guaranteed for ten years against dents and leaks.",
            "additionalProperty": [{"@type": "PropertyValue", "name": "Lid", "value": "Bamboo"}],
            "offers": {"@type": "Offer", "price": "24.00", "priceCurrency": "USD"},
        }
    ),
)


def test_product_keeps_name_price_description_specs_features_and_structured_data():
    doc = html_to_markdown(PRODUCT, "https://shop.example.com/products/trail-flask-750")
    assert doc.page_type == "product"
    for kept in ("$24.00", "double-walled steel flask", "- Leak-proof lid", "750 ml", "310 g"):
        assert kept in doc.markdown
    # What only the JSON-LD says is added; the product's name stays over its details.
    assert doc.markdown.startswith("# Trail Flask 750")
    assert "guaranteed for ten years" in doc.markdown
    assert "Lid: Bamboo" in doc.markdown
    # The grid of other products and the button are not this product.
    assert "Other bottle" not in doc.markdown
    assert "Add to cart" not in doc.markdown


def test_a_product_s_json_ld_facts_come_as_its_product_and_leave_its_markdown_alone():
    doc = html_to_markdown(PRODUCT, "https://shop.example.com/products/trail-flask-750")
    assert doc.product == "Price: 24.00 USD"
    declared = {
        "@context": "https://schema.org",
        "@type": "ProductGroup",
        "name": "Trail Flask 750",
        "brand": "Northpeak",
        "sku": "TF-750",
        "mpn": 75012,
        "gtin13": "0123456789012",
        "aggregateRating": {"ratingValue": 4.7263985, "bestRating": 5, "ratingCount": 311},
        "offers": [
            {"@type": "AggregateOffer", "lowPrice": 20, "highPrice": 35.5, "priceCurrency": "EUR",
             "availability": "OutOfStock"},
        ],
        "hasVariant": [{"@type": "Product", "sku": "TF-750-RED", "offers": {"price": "21"}}],
    }  # fmt: skip
    html = page(PRODUCT_BODY, head=ld(declared))
    doc = html_to_markdown(html, "https://shop.example.com/products/trail-flask-750")
    assert doc.product == (
        "Brand: Northpeak; SKU: TF-750; MPN: 75012; GTIN: 0123456789012; "
        "Rating: 4.7 out of 5 (311 ratings); Price: 20 to 35.5 EUR; Availability: out of stock"
    )
    # The page's own text is its content: a buyer's facts do not dilute it.
    assert "TF-750" not in doc.markdown
    assert doc.markdown.startswith("# Trail Flask 750\n\n$24.00\n\nA double-walled steel flask")


@pytest.mark.parametrize(
    "rating", [{"ratingValue": "NaN"}, {"ratingValue": "good"}, "4.5", {"ratingValue": True}]
)
def test_a_rating_that_is_no_number_is_left_out(rating):
    declared = {"@type": "Product", "name": "Flask", "sku": "F-1", "aggregateRating": rating}
    html = page("<main><h1>Flask</h1><p>A flask.</p></main>", head=ld(declared))
    doc = html_to_markdown(html, "https://shop.example.com/products/flask")
    assert doc.product == "SKU: F-1"


def test_only_a_product_page_has_product_facts():
    product = {"@type": "Product", "name": "Flask", "sku": "F-1"}
    declared = {"@type": "NewsArticle", "headline": "The vote", "about": product}
    doc = html_to_markdown(ARTICLE.replace("</head>", ld(declared) + "</head>", 1),
                           "https://example.com/news/x")  # fmt: skip
    assert doc.page_type == "article"
    assert doc.product is None


LISTING = page(
    "<main><h1>Latest posts</h1>"
    + "".join(
        f"<article><h2><a href='/blog/post-{n}'>Post title {n}</a></h2>"
        f"<p>Short summary of post {n}, two lines at most.</p></article>"
        for n in range(8)
    )
    + "</main>"
)


def test_listing_keeps_each_items_title_link_and_short_text():
    doc = html_to_markdown(LISTING, "https://example.com/blog/")
    assert doc.page_type == "listing"
    for n in range(8):
        assert f"[Post title {n}](https://example.com/blog/post-{n})" in doc.markdown
        assert f"Short summary of post {n}" in doc.markdown
    assert "Menu entry" not in doc.markdown


COLLECTION = page(
    "<main><h1>Rain jackets</h1><p>Waterproof shells for every season.</p><ul class='products'>"
    + "".join(
        f"<li class='card'><a href='/products/jacket-{n}'><h3>Jacket model {n}</h3></a>"
        f"<span class='price'>€{n}9.95</span></li>"
        for n in range(10)
    )
    + "</ul></main>",
    head='<meta property="og:type" content="product.group">',
)


def test_collection_keeps_every_product_of_the_grid():
    doc = html_to_markdown(COLLECTION, "https://example.com/collections/rain-jackets")
    assert doc.page_type in ("collection", None)  # never another type
    assert "Waterproof shells for every season." in doc.markdown
    for n in range(10):
        assert f"[Jacket model {n}](https://example.com/products/jacket-{n})" in doc.markdown
        assert f"€{n}9.95" in doc.markdown


DOCS = page(
    "<aside class='sidebar'><ul>"
    + "".join(f"<li><a href='/docs/{n}'>Chapter {n}</a></li>" for n in range(20))
    + "</ul></aside><main><article><h1>Configuration</h1><p>Settings live in one file.</p>"
    "<pre><code class='language-toml'>[server]\nport = 8080\n</code></pre>"
    "<div class='admonition warning' role='note'><p>Warning: restart after editing.</p></div>"
    "<table><thead><tr><th>Key</th><th>Default</th></tr></thead>"
    "<tbody><tr><td>port</td><td>8080</td></tr></tbody></table>"
    "<pre><code class='language-sh'>tool --check\n</code></pre>"
    "<pre><code>plain block\n</code></pre></article>"
    "<nav class='toc'><p>On this page</p><a href='#a'>Configuration</a></nav></main>"
)


def test_documentation_keeps_prose_code_with_language_tables_and_admonitions():
    doc = html_to_markdown(DOCS, "https://docs.example.dev/guide/configuration")
    assert doc.page_type == "documentation"
    assert "Settings live in one file." in doc.markdown
    assert "```toml\n[server]\nport = 8080\n```" in doc.markdown
    assert "```sh\ntool --check\n```" in doc.markdown
    assert "Warning: restart after editing." in doc.markdown
    assert "| Key | Default |\n|---|---|\n| port | 8080 |" in doc.markdown
    assert "Chapter 3" not in doc.markdown
    assert "On this page" not in doc.markdown


SERVICE = page(
    "<main><section class='hero'><h1>Bookkeeping for small firms</h1>"
    "<p>We close your books every month.</p></section>"
    "<section><h2>Features</h2><ul><li>Monthly reports</li><li>Payroll</li></ul></section>"
    "<section><h2>Pricing</h2><div class='plan'><h3>Basic</h3><p>$99 a month</p></div>"
    "<div class='plan'><h3>Plus</h3><p>$199 a month</p></div></section>"
    "<section><h2>FAQ</h2><details><summary>Can I cancel?</summary><p>Yes, any month."
    "</p></details></section></main>"
)


def test_service_page_keeps_headline_features_pricing_and_faq():
    doc = html_to_markdown(SERVICE, "https://example.com/services/bookkeeping")
    assert doc.page_type in ("service", None)  # never another type
    for kept in (
        "We close your books every month.",
        "## Features",
        "- Monthly reports",
        "$99 a month",
        "$199 a month",
        "Can I cancel?",
        "Yes, any month.",
    ):
        assert kept in doc.markdown
    assert "Footer words" not in doc.markdown


ARTICLE = page(
    "<main><article><h1>The vote</h1>"
    + "".join(f"<p>Paragraph {n}. {LOREM} {LOREM}</p>" for n in range(6))
    + "</article></main>",
    head='<meta property="og:type" content="article">',
)


def test_article_stays_an_article():
    doc = html_to_markdown(ARTICLE, "https://example.com/news/2024/05/the-vote")
    assert doc.page_type == "article"
    assert "Paragraph 5." in doc.markdown
    assert "Menu entry" not in doc.markdown


URLS = [
    ("https://forum.example.org/t/some-topic/123", {"host_forum", "path_forum"}),
    ("https://example.org/questions/1/how-to", {"path_forum"}),
    ("https://docs.example.org/en/latest/intro.html", {"host_documentation"}),
    ("https://example.org/products/blue-mug", {"path_product"}),
    ("https://example.org/collections/mugs", {"path_collection"}),
    ("https://example.org/services/tax-returns", {"path_service"}),
    ("https://example.org/", set()),
    ("https://example.org/some/page", set()),
]


@pytest.mark.parametrize(("url", "words"), URLS)
def test_words_in_the_url_are_evidence_for_the_model(url, words):
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    tree = lxml.html.document_fromstring("<html><body><p>Some words.</p></body></html>")
    found = pagetype.features(tree, url, read(tree))
    assert {name for name in found if name.startswith(("host_", "path_")) and found[name]} == words


@pytest.mark.parametrize(("url", "words"), URLS)
def test_a_page_with_next_to_no_text_is_an_article_whatever_its_url(url, words):
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    del words  # the URL alone is weak evidence (issue 19): no shape to read, an article
    tree = lxml.html.document_fromstring("<html><body><p>Some words.</p></body></html>")
    assert pagetype.detect(tree, url, read(tree)) == pagetype.Guess("article", sure=False)


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        ({"@type": "QAPage"}, "forum"),
        ({"@graph": [{"@type": "WebPage"}, {"@type": ["Product"]}]}, "product"),
        ({"@type": "TechArticle"}, "documentation"),
        ({"@type": "NewsArticle"}, "article"),
        ({"@type": "ProfessionalService"}, "service"),
        ({"@type": "OfferCatalog"}, "collection"),
    ],
)
def test_declared_schema_types_decide(declared, expected):
    doc = html_to_markdown(page("<p>Some words.</p>", head=ld(declared)), "https://e.org/x")
    assert doc.page_type == expected


def test_a_strong_declaration_the_model_disagrees_with_is_read_but_not_named():
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    body = f"<main><h1>Notes</h1><p>{LOREM}</p></main>"
    tree = lxml.html.document_fromstring(page(body, head=ld({"@type": "QAPage"})))
    found = pagetype.features(tree, "https://e.org/x", read(tree))
    used = pagetype.part_words(tree)
    article = tuple(10.0 if name == "article" else 0.0 for name in pagetype.PAGE_TYPES)
    forum = tuple(10.0 if name == "forum" else 0.0 for name in pagetype.PAGE_TYPES)
    against = pagetype.Model(WEIGHTS, {"heading:notes": article}, sure=0.5)
    assert pagetype.decide(found, used, against) == pagetype.Guess("forum", sure=False)
    agreeing = pagetype.Model(WEIGHTS, {"heading:notes": forum}, sure=0.5)
    assert pagetype.decide(found, used, agreeing) == pagetype.Guess("forum", sure=True)


def _products(count: int, *, group: bool = False) -> str:
    items = [{"@type": "Product", "name": f"Lamp model {n}"} for n in range(count)]
    if group:
        return ld({"@type": "ProductGroup", "name": "Lamp", "hasVariant": items})
    return ld({"@type": "ItemList", "itemListElement": items})


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (_products(20), "collection"),  # a category page whose cards carry Product markup
        (_products(19), "product"),  # a product and its variants or accessories
        (_products(40, group=True), "product"),  # a product group: one product, many variants
    ],
)
def test_a_page_declaring_many_different_products_is_a_collection(head, expected):
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    tree = lxml.html.document_fromstring(page("<main><h1>Lamps</h1></main>", head=head))
    assert pagetype.detect(tree, "https://e.org/x", read(tree)) == (expected, True)


def test_products_named_inside_a_product_are_its_neighbours_not_a_catalogue():
    related = [{"@type": "Product", "name": f"Shade model {n}"} for n in range(30)]
    lamp = {"@type": "Product", "name": "Lamp", "isRelatedTo": related}
    doc = html_to_markdown(page("<p>A lamp.</p>", head=ld(lamp)), "https://e.org/x")
    assert doc.page_type == "product"


def test_products_that_share_one_name_are_one_product():
    same = [{"@type": "Product", "name": "Lamp", "sku": f"L-{n}"} for n in range(30)]
    doc = html_to_markdown(page("<p>A lamp.</p>", head=ld(same)), "https://e.org/x")
    assert doc.page_type == "product"


def test_og_product_group_is_a_collection():
    head = '<meta property="og:type" content="product.group">'
    assert html_to_markdown(page("<p>w</p>", head=head), "https://e.org/x").page_type == (
        "collection"
    )


def test_broken_and_odd_json_ld_is_ignored():
    head = '<script type="application/ld+json">{not json</script>' + ld(
        [1, "two", {"@type": 7}, {"@type": ["Product", None]}]
    )
    assert html_to_markdown(page("<p>w</p>", head=head), "https://e.org/x").page_type == "product"


# Pages filled in by JavaScript.

SHELL = (
    "<html><head><title>App</title>{head}</head><body><div id='__next'></div>{extra}"
    "<script src='/app.js'></script></body></html>"
)


def test_an_empty_app_shell_warns_that_it_needs_javascript():
    doc = html_to_markdown(SHELL.format(head="", extra=""), "https://app.example.com/")
    assert doc.markdown == ""
    assert [w["code"] for w in doc.warnings] == ["NEEDS_JAVASCRIPT"]
    assert "JavaScript" in doc.warnings[0]["message"]


def test_a_page_whose_text_was_cut_off_does_not_say_it_needs_javascript(monkeypatch):
    # Too large: the cut falls before any text, which does not make the page an app shell.
    monkeypatch.setattr(extract, "_LARGE_COST", 50)
    monkeypatch.setattr(extract, "_MAX_COST", 150)
    html = "<html><body>" + "<div>" * 400 + "<p>The text.</p>" + "</div>" * 400 + "</body></html>"
    doc = html_to_markdown(html, "https://e.org/deep")
    assert "The text." not in doc.markdown
    assert [w["code"] for w in doc.warnings] == ["TOO_LARGE"]


def test_an_app_shell_gives_the_text_of_its_embedded_data():
    data = {
        "props": {
            "pageProps": {
                "id": "x1",
                "url": "https://example.com/a/b",
                "body": "<p>The embedded article body has enough words to count as prose here.</p>",
                "summary": "A second string of prose that is long enough to be kept as well.",
            }
        }
    }
    script = f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(data)}</script>'
    doc = html_to_markdown(SHELL.format(head="", extra=script), "https://app.example.com/a")
    assert "The embedded article body has enough words" in doc.markdown
    assert "A second string of prose" in doc.markdown
    assert "x1" not in doc.markdown
    assert doc.warnings == []


def test_a_large_app_shell_is_one_still_and_gives_its_embedded_data():
    # An inlined bundle and a large payload make the page large enough for `bound` to strip
    # its scripts: the page is still an app shell, and its data still its content.
    rows = [{"id": f"r{n}", "note": "x" * 40} for n in range(10_000)]
    body = "The embedded article body has enough words to count as prose here."
    data = {"props": {"pageProps": {"body": body, "rows": rows}}}
    script = f'<script id="__NEXT_DATA__" type="application/json">{json.dumps(data)}</script>'
    bundle = "<script>" + "function f(){return 1}\n" * 40_000 + "</script>"
    doc = html_to_markdown(SHELL.format(head=bundle, extra=script), "https://app.example.com/a")
    assert doc.app_shell
    assert body in doc.markdown
    assert doc.warnings == []


def test_an_app_shell_gives_its_json_ld_text():
    head = ld({"@type": "Article", "articleBody": "Body text from the structured data " * 3})
    doc = html_to_markdown(SHELL.format(head=head, extra=""), "https://app.example.com/b")
    assert "Body text from the structured data" in doc.markdown
    assert doc.warnings == []


def test_an_app_shell_shows_what_its_noscript_holds():
    extra = f"<noscript><p>{LOREM}</p></noscript>"
    doc = html_to_markdown(SHELL.format(head="", extra=extra), "https://app.example.com/start")
    assert "The committee met twice" in doc.markdown
    assert doc.warnings == []


def test_noscript_of_a_normal_page_is_left_out():
    body = f"<p>{LOREM} {LOREM}</p><noscript><p>Please enable JavaScript.</p></noscript>"
    doc = html_to_markdown(page(body), "https://example.com/x")
    assert "enable JavaScript" not in doc.markdown
    assert doc.warnings == []


def test_embedded_data_that_is_not_json_gives_nothing():
    from ikigai_web.fetch.reading.signals import Signals

    signals = Signals(frozenset(), "", (), ("{broken", "window.__NUXT__={};"))
    assert embedded.embedded_markdown(signals, include_links=True) == ""


# Deep markup.


@pytest.mark.parametrize("full_page", [False, True])
def test_markup_deeper_than_the_parser_keeps_is_flattened_with_a_warning(full_page):
    deep = "<div>" * 3000 + "<p>Deep text survives.</p>" + "</div>" * 3000
    html = f"<html><body><p>{LOREM}</p>{deep}<p>Text after the deep part.</p></body></html>"
    doc = html_to_markdown(html, "https://example.com/deep", full_page=full_page)
    # The parser alone would drop everything from the deep part on, silently.
    assert "Text after the deep part." in doc.markdown
    if full_page:  # the main-content extractors may judge bare deep text to be boilerplate
        assert "Deep text survives." in doc.markdown
    assert [w["code"] for w in doc.warnings] == ["DEEP_MARKUP"]


def test_normal_nesting_has_no_warning():
    assert html_to_markdown(ARTICLE, "https://example.com/news/x").warnings == []


# Links that must not survive as links, on every path.

HOSTILE = (
    "<p>{lorem} <a href='javascript:alert(1)'>script link</a> "
    "<a href=' JaVa\tScript:alert(2)'>spaced script</a> <a href='vbscript:msgbox'>vb link</a> "
    "<a href='data:text/html,<b>x</b>'>data link</a> "
    "<a href='https://user:secret@example.net/path'>credential link</a> "
    "<img src='https://u:p@img.example.net/i.png' alt='credential image'> "
    "<a href='/relative/page'>relative link</a></p>"
)


@pytest.mark.parametrize(
    ("url", "full_page"),
    [
        ("https://example.com/news/story", False),  # article: trafilatura
        ("https://example.com/services/cleaning", False),  # main region
        ("https://example.com/news/story", True),  # full page
    ],
)
def test_script_targets_and_user_info_never_reach_the_markdown(url, full_page):
    body = "".join(HOSTILE.format(lorem=f"{LOREM} {n}.") for n in range(6))
    doc = html_to_markdown(
        page(f"<main><article>{body}</article></main>"), url, full_page=full_page
    )
    text = doc.markdown.lower()
    for kept in ("script link", "spaced script", "vb link", "data link", "credential link"):
        assert kept in text
    for gone in ("javascript", "vbscript", "data:", "secret@", "u:p@", "user:"):
        assert gone not in text
    assert "](https://example.net/path)" in doc.markdown
    assert "](https://example.com/relative/page)" in doc.markdown


def test_page_url_user_info_does_not_leak_into_resolved_links():
    doc = html_to_markdown(LISTING, "https://ann:pw@example.com/blog/")
    assert "ann" not in doc.markdown
    assert "[Post title 0](https://example.com/blog/post-0)" in doc.markdown


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("[a](javascript:alert(1))", "a"),  # a target with parentheses is a target too
        ("[a (b)](javascript:alert(1))", "a (b)"),
        ("[x](/docs/a_(b))", "[x](/docs/a_(b))"),
        ("[a](javascript:void)", "a"),
        ("![pic](data:image/png;base64,AAAA)", "pic"),
        ('[a](http://u:p@h.example/x "t")', '[a](http://h.example/x "t")'),
        ("<https://u:p@h.example/>", "<https://h.example/>"),
        ("<javascript:alert>", "javascript:alert"),
        ("[a](https://h.example/@user)", "[a](https://h.example/@user)"),
        ("[a](http://[::1)", "[a](http://[::1)"),  # unparsable: left alone
        ("plain text", "plain text"),
    ],
)
def test_clean_markdown(before, after):
    assert links.clean_markdown(before) == after


# Tables: one style whichever path wrote them.


def test_tables_have_one_separator_style_and_no_trailing_spaces():
    raw = "| a | b |  \n| --- | :---: |\n|:--|--:|\n| 1 | 2 |   \n```\n| --- |  \n```"
    assert (
        markdown.tidy(raw) == "| a | b |\n|---|:---:|\n|:---|---:|\n| 1 | 2 |\n```\n| --- |  \n```"
    )


@pytest.mark.parametrize(
    ("url", "full_page"),
    [
        ("https://example.com/news/x", False),
        ("https://docs.example.com/x", False),
        ("https://example.com/news/x", True),
    ],
)
def test_every_path_writes_the_same_table(url, full_page):
    table = "<table><tr><th>Name</th><th>Size</th></tr><tr><td>alpha</td><td>3</td></tr></table>"
    body = f"<main><article><p>{LOREM}</p>{table}<p>{LOREM}</p></article></main>"
    doc = html_to_markdown(page(body), url, full_page=full_page)
    assert "| Name | Size |\n|---|---|\n| alpha | 3 |" in doc.markdown
    assert not any(line.endswith(" ") for line in doc.markdown.splitlines())


@pytest.mark.parametrize(
    ("url", "full_page", "head"),
    [
        ("https://example.com/news/x", False, ""),
        ("https://docs.example.com/x", False, ""),
        ("https://shop.example.com/x", False, ld({"@type": "Product", "name": "A page"})),
        ("https://example.com/news/x", True, ""),
    ],
)
def test_every_path_escapes_underscores_alike_and_only_where_markdown_needs_it(
    url, full_page, head
):
    text = (
        "<p>Set <b>max_retries</b> or call parse_config() in my_module; __init__.py, _private "
        "and trailing_ are names too, as is <code>a_b</code>; see "
        "<a href='/wiki/A_b'>the A_b page</a> or https://example.com/x_y/_z.</p>"
    )
    body = f"<main><article><h1>A page</h1>{text}<p>{LOREM}</p><p>{LOREM}</p></article></main>"
    doc = html_to_markdown(page(body, head), url, full_page=full_page)
    target = urljoin(url, "/wiki/A_b")
    assert (
        "Set **max_retries** or call parse_config() in my_module; \\_\\_init\\_\\_.py, "
        "\\_private and trailing\\_ are names too, as is `a_b`; see "
        f"[the A_b page]({target}) or https://example.com/x_y/_z."
    ) in doc.markdown.splitlines()


@pytest.mark.parametrize(
    ("written", "tidied"),
    [
        ("snake\\_case and \\_\\_init\\_\\_", "snake_case and \\_\\_init\\_\\_"),
        ("snake_case and __init__ and _x_", "snake_case and \\_\\_init\\_\\_ and \\_x\\_"),
        ("a__b 1_000 x_", "a__b 1_000 x\\_"),
        ("\\___", "\\___"),
        ("- ___\n\nfill in ___ or \\_\\_\\_ here", "- ___\n\nfill in ___ or \\_\\_\\_ here"),
        ("the $x_{i}$ term and $$a_{n}$$", "the $x_{i}$ term and $$a_{n}$$"),
        ("![img_1](https://e.com/i_1.png) <https://e.com/_a_>",
         "![img_1](https://e.com/i_1.png) <https://e.com/_a_>"),
        ("at https://e.com/a\\_b/\\_c\\_ now", "at https://e.com/a_b/_c_ now"),
        ("`_a_` and\n```\n_b_\n```", "`_a_` and\n```\n_b_\n```"),
    ],
)  # fmt: skip
def test_underscores_are_escaped_where_they_could_be_emphasis(written, tidied):
    assert markdown.tidy(written) == tidied
    assert markdown.tidy(tidied) == tidied


# The document round-trips through the cache's JSON.


def test_document_with_type_and_warnings_round_trips_through_json():
    html = "<html><body>" + "<div>" * 400 + "<p>deep</p>" + "</div>" * 400 + "</body></html>"
    doc = html_to_markdown(html, "https://example.com/")
    assert doc.warnings
    assert Document(**json.loads(json.dumps(asdict(doc)))) == doc


# --- issue 19: the page's own word over its address; boilerplate gives way ------------------

ARTICLE_LD = (
    '<script type="application/ld+json">{"@context": "https://schema.org", '
    '"@type": "NewsArticle", "headline": "Budget passes"}</script>'
)


@pytest.mark.parametrize("path", ["/c/politics/budget-passes", "/p/budget-passes",
                                  "/collections/2024/budget-passes"])  # fmt: skip
def test_article_markup_outweighs_words_in_the_address(path):
    teasers = "".join(f"<li><a href='/c/{n}'>Other story {n}</a></li>" for n in range(8))
    html = page(
        f"<article><h1>Budget passes</h1><p>{LOREM}</p><p>{LOREM}</p></article>"
        f"<aside><ul>{teasers}</ul></aside>",
        head=ARTICLE_LD,
    )
    doc = html_to_markdown(html, f"https://news.example.org{path}")
    assert doc.page_type == "article"
    assert "Other story 3" not in doc.markdown
    assert LOREM[:40] in doc.markdown


def test_a_link_farm_region_gives_way_to_the_article_candidate():
    cards = "".join(
        f"<div class='card'><a href='/section/{n}'>Section link number {n} of the site</a></div>"
        for n in range(60)
    )
    prose = "".join(f"<p>{LOREM} Paragraph {n}.</p>" for n in range(3))
    body = f"<main><div class='story'><h1>Story</h1>{prose}</div><div class='grid'>{cards}</div>"
    html = page(body + "</main>")
    url = "https://example.org/category/story"
    parsed = extract._parse(html, url)
    region = pages.extract(parsed.tree, "listing", parsed.signals, include_links=True)
    assert "Section link number 7" in region  # what the listing's region alone gives
    doc = html_to_markdown(html, url)
    assert doc.page_type == "article"  # read as one in the end
    assert "Paragraph 2." in doc.markdown
    assert "Section link number 7" not in doc.markdown


def test_the_shipped_model_weighs_exactly_the_features_read():
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    tree = lxml.html.document_fromstring(ARTICLE)
    names = set(pagetype.features(tree, "https://example.com/a", read(tree)))
    assert set(WEIGHTS) == set(pagetype.PAGE_TYPES)
    for weights in WEIGHTS.values():
        assert set(weights) == names | {"bias"}


def test_the_shipped_model_weighs_words_of_each_kind_once_per_type():

    kinds = {word.split(":")[0] for word in WORDS}
    assert kinds == {"title", "heading", "button", "link", "class"}
    assert all(len(weights) == len(pagetype.PAGE_TYPES) for weights in WORDS.values())
    assert all(any(weights) for weights in WORDS.values())  # no word that weighs nothing


def test_words_name_the_page_s_parts_by_where_they_stand():
    import lxml.html

    html = (
        "<html><head><title>Pricing | Acme</title></head><body>"
        "<h2>Customer reviews</h2><button>Add to cart</button>"
        "<a href='/r'>Reply</a><a href='/long'>A link text far longer than thirty characters</a>"
        + "<div class='product-card__title'>x</div>" * 40
        + "<div id='sidebar'>y</div></body></html>"
    )
    found = pagetype.part_words(lxml.html.document_fromstring(html))
    assert set(found) == {
        "title:pricing", "title:acme", "heading:customer", "heading:reviews", "button:add",
        "button:cart", "link:reply", "class:product", "class:card", "class:title",
        "class:sidebar",
    }  # fmt: skip
    # A class value counts once however many elements carry it: one design, not forty words.
    assert found["class:card"] == found["title:acme"] == pytest.approx(math.log1p(1))


def test_words_tip_the_decision_by_their_weights():
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    tree = lxml.html.document_fromstring(page(f"<main><h1>Notes</h1><p>{LOREM}</p></main>"))
    found = pagetype.features(tree, "https://e.org/x", read(tree))
    used = pagetype.part_words(tree)
    neutral = pagetype.Model(WEIGHTS, {})
    assert pagetype.decide(found, used, neutral).name == "article"
    forum = tuple(10.0 if name == "forum" else 0.0 for name in pagetype.PAGE_TYPES)
    tipped = pagetype.Model(WEIGHTS, {"heading:notes": forum})
    assert pagetype.decide(found, used, tipped).name == "forum"
    # A word the model has no weights for counts for nothing.
    unknown = pagetype.Model(WEIGHTS, {"heading:other": forum})
    assert pagetype.decide(found, used, unknown).name == "article"


def test_the_likeliest_type_is_named_only_when_its_probability_reaches_the_threshold():
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    tree = lxml.html.document_fromstring(page(f"<main><h1>Notes</h1><p>{LOREM}</p></main>"))
    found = pagetype.features(tree, "https://e.org/x", read(tree))
    used = pagetype.part_words(tree)
    # Two types tied far above the rest: each about one half.
    tied = tuple(10.0 if name in ("forum", "service") else 0.0 for name in pagetype.PAGE_TYPES)
    chances = pagetype.probabilities(found, used, pagetype.Model(WEIGHTS, {"heading:notes": tied}))
    assert sum(chances) == pytest.approx(1.0)
    best = max(chances)
    for sure, named in ((best - 0.01, True), (best + 0.01, False)):
        model = pagetype.Model(WEIGHTS, {"heading:notes": tied}, sure=sure)
        guess = pagetype.decide(found, used, model)
        assert guess.name in ("forum", "service")
        assert guess.sure is named


def test_an_unsure_page_is_read_as_an_article_unless_an_article_is_unlikely():
    import lxml.html

    from ikigai_web.fetch.reading.signals import read

    tree = lxml.html.document_fromstring(page(f"<main><h1>Notes</h1><p>{LOREM}</p></main>"))
    found = pagetype.features(tree, "https://e.org/x", read(tree))
    used = pagetype.part_words(tree)
    # Article tied with another type: an article. Two other types tied: one of them.
    for pair, read_as in ((("article", "forum"), {"article"}), (("forum", "service"), None)):
        tied = tuple(10.0 if name in pair else 0.0 for name in pagetype.PAGE_TYPES)
        model = pagetype.Model(WEIGHTS, {"heading:notes": tied}, sure=0.9)
        guess = pagetype.decide(found, used, model)
        assert not guess.sure
        assert guess.name in (read_as or set(pair))


def test_every_page_type_has_one_policy():
    from ikigai_web.fetch.reading.policies import POLICIES

    assert sorted(POLICIES) == sorted(pagetype.PAGE_TYPES)
    assert [name for name, policy in POLICIES.items() if policy.article] == ["article"]


def test_no_extraction_module_tells_page_types_apart_by_name():
    # Each type's policy is one row of policies.POLICIES; a comparison with a type's name
    # elsewhere is policy that the table does not show.
    names = "|".join(pagetype.PAGE_TYPES)
    comparison = re.compile(rf"(?:==|!=|\bin)\s*[(\[{{]?\s*[\"'](?:{names})[\"']")
    fetch = Path(pagetype.__file__).parents[1]  # both rooms of web-fetch and the pipeline
    defining = {"policies.py", "pagetype.py"}
    for module in sorted([*fetch.glob("*.py"), *fetch.glob("*/*.py")]):
        if module.name not in defining:
            assert not comparison.findall(module.read_text()), module.name


def test_a_thread_and_the_page_type_name_posts_with_one_vocabulary():
    from ikigai_web.fetch.reading import forum

    markup = "<div class='{}'>" + LOREM + "</div>"
    for word in sorted(forum.POST_WORDS):
        element = lxml_fragment(markup.format(f"topic-{word}"))
        assert pagetype._is_post(element, element.get("class"))
        assert forum._post_key(element) == ("div", f"topic-{word}")
    # A thread's entries are its posts; for the page type, `entry` names an article's text.
    entry = lxml_fragment(markup.format("entry-content"))
    assert forum._post_key(entry) == ("div", "entry-content")
    assert not pagetype._is_post(entry, entry.get("class"))


def lxml_fragment(markup: str):
    import lxml.html

    return lxml.html.fragment_fromstring(markup)
