"""Per-type extraction details: forum threads post by post, product clutter, boilerplate
sections, menus, layout spacing, hidden classes and the article path's second opinions.

Every page here is small and hand-written: it has the shape of its kind, not any real site's.
"""

from __future__ import annotations

import json
import math

import lxml.html
import pytest

from ikigai_web.fetch.reading import extract, forum, pagetype, region
from ikigai_web.fetch.reading import reading_time as reading
from ikigai_web.fetch.reading import typed as pages
from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.markdown import element_markdown
from ikigai_web.fetch.reading.signals import read

LOREM = (
    "The committee met twice before the vote, and each member explained the reasons for the "
    "position they would take when the question finally came to the floor of the assembly."
)
NAV = "<header><a href='/'>Site home link</a></header><nav><a href='/a'>Menu entry one</a></nav>"


def page(body: str, head: str = "", title: str = "A page") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{NAV}{body}</body></html>"


def ld(data: object) -> str:
    return f'<script type="application/ld+json">{json.dumps(data)}</script>'


def tree_of(html: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring(html)


# A Q&A thread marked up with schema.org microdata: votes, avatars, badges and signatures
# around each post.
MICRODATA_THREAD = page(
    "<main><h1>Why does my bread not rise?</h1>"
    "<div itemscope itemtype='https://schema.org/Question'>"
    "<div class='votes'><button>Up</button><span class='score'>42</span></div>"
    "<div itemprop='text'><p>My dough stays flat. " + LOREM + "</p></div>"
    "<div itemprop='author' itemscope itemtype='https://schema.org/Person'>"
    "<img class='avatar' src='/a.png' alt='avatar of baker1'><span itemprop='name'>baker1</span>"
    "<span class='badges'>3 gold badges</span></div>"
    "<time itemprop='dateCreated' datetime='2024-03-01'>Mar 1, 2024</time></div>"
    + "".join(
        f"<div itemscope itemtype='https://schema.org/Answer'>"
        f"<div class='voting'><span class='score'>{n}7</span></div>"
        f"<div itemprop='author' itemscope itemtype='https://schema.org/Person'>"
        f"<span itemprop='name'>helper{n}</span></div>"
        f"<time itemprop='dateCreated' datetime='2024-03-0{n + 1}'>Mar {n + 1}, 2024</time>"
        f"<div itemprop='text'><p>Answer number {n}: {LOREM}</p></div>"
        f"<div class='signature'>Sent from my oven {n}</div></div>"
        for n in range(1, 4)
    )
    + "</main>",
    head=ld({"@context": "https://schema.org", "@type": "QAPage"}),
)


def test_a_microdata_thread_gives_every_post_with_its_author_and_date():
    doc = html_to_markdown(MICRODATA_THREAD, "https://qa.example.org/questions/12/bread")
    assert doc.page_type == "forum"
    assert doc.markdown.startswith("**baker1** · Mar 1, 2024\n\nMy dough stays flat.")
    positions = [doc.markdown.index(f"**helper{n}** · Mar {n + 1}, 2024") for n in range(1, 4)]
    assert positions == sorted(positions)
    for n in range(1, 4):
        assert f"Answer number {n}:" in doc.markdown
    assert doc.markdown.count("\n---\n") == 3
    for clutter in ("gold badges", "avatar", "Sent from my oven", "Up", "42", "17"):
        assert clutter not in doc.markdown


@pytest.mark.parametrize(
    ("stamp", "header"),
    [
        ("<meta itemprop='dateCreated' content='2024-03-01T23:15:57Z'>", "2024-03-01"),
        ("<time itemprop='dateCreated' datetime='2024-03-01 23:15:57+02:00'></time>", "2024-03-01"),
        ("<meta itemprop='dateCreated' content='March 2024'>", "March 2024"),
        ("<time datetime='2024-03-01T23:15'>Yesterday, 23:15</time>", "Yesterday, 23:15"),
    ],
)
def test_a_post_s_machine_timestamp_gives_its_day_and_a_shown_date_stays(stamp, header):
    html = MICRODATA_THREAD.replace(
        "<time itemprop='dateCreated' datetime='2024-03-01'>Mar 1, 2024</time>", stamp
    )
    markdown = html_to_markdown(html, "https://qa.example.org/questions/12/bread").markdown
    assert markdown.startswith(f"**baker1** · {header}\n\nMy dough stays flat.")


# A bulletin board without microdata: repeated `post` blocks, each with its author box,
# signature and buttons; the opening post is marked unlike the replies.
BOARD = page(
    "<div id='page'><h1>Kettle descaling</h1>"
    "<div class='topic-start'><p class='byline'>Started by <span class='username'>ann"
    "</span></p><div class='content'><p>Opening question: vinegar or citric acid? "
    + LOREM
    + "</p></div></div>"
    + "".join(
        f"<div class='post bg{n % 2}'><dl class='postprofile'><dt><a class='username' "
        f"href='/u/{n}'>user{n}</a></dt><dd>Posts: 1{n}0</dd><dd>Joined: 2019</dd></dl>"
        f"<div class='postbody'><p class='date'>Mon May 0{n}, 2024</p>"
        f"<div class='content'><p>Reply number {n}: {LOREM}</p></div>"
        f"<ul class='post-buttons'><li><a href='/quote'>Quote</a></li></ul></div></div>"
        for n in range(1, 4)
    )
    + "</div>"
)


def test_a_board_without_microdata_gives_its_posts_and_the_opening_post():
    doc = html_to_markdown(BOARD, "https://boards.example.org/viewtopic.php?t=7")
    assert doc.page_type == "forum"
    opening = doc.markdown.index("Opening question")
    replies = [doc.markdown.index(f"Reply number {n}:") for n in range(1, 4)]
    assert opening < replies[0]
    assert replies == sorted(replies)
    for n in range(1, 4):
        assert f"**user{n}** · Mon May 0{n}, 2024" in doc.markdown
    for clutter in ("Posts: 1", "Joined: 2019", "Quote"):
        assert clutter not in doc.markdown


NESTED = (
    "<div id='thread'>"
    "<div class='comment'><span class='author'>alice</span><div class='body'>"
    "<p>Top level comment with enough words to count as a post here.</p></div>"
    "<div class='comment'><span class='author'>bob</span><div class='body'>"
    "<p>A nested reply that also has enough words to be a post.</p></div></div></div>"
    "<div class='comment'><span class='author'>carol</span><div class='body'>"
    "<p>A second top level comment, again with enough words in it.</p></div></div></div>"
)


def test_nested_replies_are_posts_of_their_own_in_document_order():
    markdown = forum.thread_markdown(tree_of(NESTED).find("body"), include_links=True)
    blocks = markdown.split("\n\n---\n\n")
    assert [block.split("\n")[0] for block in blocks] == ["**alice**", "**bob**", "**carol**"]
    assert "nested reply" not in blocks[0]


def test_a_page_without_posts_is_no_thread():
    body = tree_of("<p>One paragraph of text and nothing else at all.</p>").find("body")
    assert forum.thread_markdown(body, include_links=True) == ""


def test_a_forum_page_without_a_thread_keeps_its_region():
    html = page(f"<main><h1>Rules</h1><p>{LOREM}</p></main>")
    doc = html_to_markdown(html, "https://forum.example.org/rules")
    assert doc.page_type in ("forum", None)  # never another type
    assert "The committee met twice" in doc.markdown


def test_a_post_whose_class_names_a_rank_keeps_its_text():
    html = (
        "<div class='thread'>"
        + "".join(
            f"<div class='Item Rank-Admin'><span class='author'>mod{n}</span>"
            f"<div class='Message'>Message {n}: {LOREM}</div>"
            f"<span class='Rank'>Admin</span></div>"
            for n in range(2)
        )
        + "</div>"
    )
    markdown = forum.thread_markdown(tree_of(html).find("body"), include_links=True)
    assert "Message 0:" in markdown
    assert "Message 1:" in markdown
    assert "Admin" not in markdown


# A board whose posts are <article>s with the author's pane in an <aside>: the name, beside a
# rank and a post count; each date labelled "Posted", some "(edited)".
PANED = page(
    "<main><h1>Resetting a payment method</h1>"
    + "".join(
        f"<article class='comment' id='c{n}'>"
        f"<aside class='comment-author pane'><h3 class='pane-author'><a href='/u/{n}'>"
        f"member{n}</a></h3><p class='rank'>Members</p><p>{n}60 posts</p></aside>"
        f"<div class='comment-wrap'><div class='meta'>Posted <a href='#c{n}'><time "
        f"datetime='2025-10-2{n}'>October 2{n}, 2025</time></a>{' (edited)' * (n % 2)}</div>"
        f"<div class='comment-content'><p>Post number {n} on {n} March: {LOREM}</p></div>"
        f"</div></article>"
        for n in range(1, 4)
    )
    + "</main>",
    head=ld({"@context": "https://schema.org", "@type": "DiscussionForumPosting"}),
)


def test_a_post_keeps_its_author_pane_name_only_and_its_date_without_its_label():
    doc = html_to_markdown(PANED, "https://community.example.org/topic/9-payment")
    assert doc.page_type == "forum"
    for n in range(1, 4):
        block = doc.markdown.split(f"Post number {n}")[0].rsplit("---", 1)[-1]
        assert block.strip() == f"**member{n}** · October 2{n}, 2025"
        # A date in the post's own words is text, not the post's date.
        assert f"Post number {n} on {n} March:" in doc.markdown
    for clutter in ("Members", "60 posts", "Posted", "(edited)"):
        assert clutter not in doc.markdown


def test_a_post_s_other_copies_of_its_author_and_date_go_but_its_text_keeps_them():
    # The layout for small screens repeats the name and the date in a list of its own, here
    # inside what the page marks as the post's content.
    copy = (
        "<div class='comment-content'><ul class='attribution'><li><h4><a href='/u/{n}'>"
        "member{n}</a></h4></li><li><a href='#c{n}'>October 2{n}, 2025</a></li></ul>"
        "<p>Thanks member{n}: "
    )
    html = PANED
    for n in range(1, 4):
        html = html.replace(
            f"<div class='comment-content'><p>Post number {n}",
            copy.format(n=n) + f"Post number {n}",
        )
    doc = html_to_markdown(html, "https://community.example.org/topic/9-payment")
    assert doc.page_type == "forum"
    for n in range(1, 4):
        block = doc.markdown.split(f"Thanks member{n}")[0].rsplit("---", 1)[-1]
        assert block.strip() == f"**member{n}** · October 2{n}, 2025"
        assert doc.markdown.count(f"October 2{n}, 2025") == 1
        assert f"Thanks member{n}: Post number {n}" in doc.markdown


def test_outside_a_forum_an_aside_in_an_article_still_goes():
    html = page(
        "<main><article><h1>Council budget</h1><p>" + LOREM + "</p>"
        "<aside><p>Related: five other stories about the council and its budget.</p></aside>"
        "<p>" + LOREM + "</p></article></main>"
    )
    tree = tree_of(html)
    region.prune(tree)
    assert "five other stories" not in tree.text_content()
    tree = tree_of(html)
    region.prune(tree, thread=True)  # a forum's: posts keep their author panes
    assert "five other stories" in tree.text_content()


PRODUCT = page(
    "<main><div class='product'><h1>Trail Flask 750</h1><p class='price'>$24.00</p>"
    "<button>Add to cart</button>"
    "<div class='seller-box'><span>Sold by Flask Outlet</span></div>"
    "<div class='accordion'><button aria-expanded='false'>Specifications</button>"
    "<div class='panel' style='display:none'><table><tr><th>Capacity</th><td>750 ml</td></tr>"
    "<tr><th>Weight</th><td>310 g</td></tr></table></div></div>"
    "<div class='description'><p>A double-walled steel flask that keeps water cold for a "
    "whole day on the trail, and hot tea warm through the night.</p></div></div>"
    "<section><h2>Sponsored products related to this item</h2><ul class='carousel'>"
    + "".join(
        f"<li class='slide'><a href='/p/{n}'>Other bottle {n}</a> <span>$1{n}.00</span></li>"
        for n in range(5)
    )
    + "</ul></section>"
    "<section class='reviews'><h2>Customer reviews</h2>"
    + "".join(
        f"<div class='review'><p>Reviewer {n} says it leaks a little.</p></div>" for n in range(3)
    )
    + "</section>"
    "<section><h2>Frequently bought together</h2><p>Bottle brush and a spare lid.</p></section>"
    "</main>",
    head=ld({"@context": "https://schema.org", "@type": "Product", "name": "Trail Flask 750"}),
)


def test_a_product_keeps_what_closed_tabs_hold_and_drops_reviews_and_other_items():
    doc = html_to_markdown(PRODUCT, "https://shop.example.com/products/trail-flask-750")
    assert doc.page_type == "product"
    for kept in ("$24.00", "double-walled steel flask", "750 ml", "310 g"):
        assert kept in doc.markdown
    for dropped in ("Other bottle", "Reviewer 1", "Bottle brush", "Customer reviews"):
        assert dropped not in doc.markdown


def test_repeated_lines_of_a_product_page_are_kept_once():
    copy = "<p>Wide mouth for ice cubes and easy cleaning by hand.</p>"
    html = page(
        f"<main><h1>Flask</h1><div class='mobile'>{copy}</div><div class='desktop'>{copy}</div>"
        "<p>Blue</p><p>Blue</p></main>",
        head=ld({"@type": "Product", "name": "Flask"}),
    )
    doc = html_to_markdown(html, "https://shop.example.com/products/flask")
    assert doc.markdown.count("Wide mouth for ice cubes") == 1
    assert doc.markdown.count("Blue") == 2  # short lines repeat for good reasons


SERVICE_WITH_ASIDES = page(
    "<main><h1>Bookkeeping for small firms</h1><p>" + LOREM + "</p>"
    "<section><h2>Pricing</h2><p>$99 a month for every firm.</p></section>"
    "<div><h2>You may also like</h2></div><div><p>Payroll for startups, our other plan.</p>"
    "</div><div><h2>Contact</h2><p>Write to us any day.</p></div>"
    "<section><h2>Latest insights</h2><ul>"
    + "".join(f"<li><a href='/blog/{n}'>Insight post number {n}</a></li>" for n in range(3))
    + "</ul></section></main>"
)


def test_sections_under_an_aside_heading_go_and_the_next_section_stays():
    doc = html_to_markdown(SERVICE_WITH_ASIDES, "https://example.com/services/bookkeeping")
    assert "$99 a month" in doc.markdown
    assert "Write to us any day." in doc.markdown
    for dropped in ("You may also like", "Payroll for startups", "Insight post number"):
        assert dropped not in doc.markdown


def test_on_a_listing_an_item_heading_opens_content():
    html = page(
        "<main><h1>News</h1><section><h2>Latest news</h2>"
        + "".join(
            f"<article><h3><a href='/news/{n}'>Story title {n}</a></h3><p>Summary {n}.</p>"
            "</article>"
            for n in range(6)
        )
        + "</section></main>"
    )
    doc = html_to_markdown(html, "https://example.com/news/")
    assert doc.page_type == "listing"
    assert "Story title 5" in doc.markdown


@pytest.mark.parametrize(
    "heading",
    [
        "<h1>Reviews of the year</h1>",  # the page's title
        "<h2>Investment strategy review request</h2>",  # the phrase comes late
        "<h2>Some customer reviews collected over many years of selling bikes</h2>",  # long
    ],
)
def test_a_heading_that_only_mentions_an_aside_word_stays(heading):
    tree = tree_of(f"<html><body><main>{heading}<p>{LOREM}</p></main></body></html>")
    region.drop_aside_sections(tree)
    assert "The committee met twice" in tree.text_content()


def test_an_aside_section_holding_most_of_the_page_stays():
    tree = tree_of(f"<html><body><h2>Related</h2><p>{LOREM}</p></body></html>")
    region.drop_aside_sections(tree)
    assert "The committee met twice" in tree.text_content()


def test_menus_of_short_links_go_but_link_rich_prose_stays():
    html = (
        "<html><body><div class='megamenu'>"
        + "".join(f"<a href='/c/{n}'>Category {n}</a>" for n in range(12))
        + f"</div><p>{LOREM} <a href='/x'>a link</a>, <a href='/y'>another</a> and "
        f"<a href='/z'>a third</a>.</p></body></html>"
    )
    tree = tree_of(html)
    region.drop_menus(tree)
    assert "Category 3" not in tree.text_content()
    assert "another" in tree.text_content()


def test_the_region_starts_at_its_title_unless_much_comes_before_it():
    banner = "<div><p>Free shipping over $50</p><p>Sale ends soon</p></div>"
    tree = tree_of(f"<html><body>{banner}<h1>Kettles</h1><p>{LOREM}</p></body></html>")
    body = tree.find("body")
    region.start_at_title(body)
    assert "Free shipping" not in body.text_content()
    assert "Kettles" in body.text_content()
    long_lead = f"<div><p>{LOREM} {LOREM}</p></div>"
    tree = tree_of(f"<html><body>{long_lead}<h1>Kettles</h1><p>Short.</p></body></html>")
    body = tree.find("body")
    region.start_at_title(body)
    assert "The committee met twice" in body.text_content()


def test_a_lead_of_links_before_the_title_goes_whatever_its_size():
    links = "".join(f"<li><a href='/{n}'>Department number {n}</a></li>" for n in range(30))
    tree = tree_of(f"<html><body><ul>{links}</ul><h1>Kettles</h1><p>Short.</p></body></html>")
    body = tree.find("body")
    region.start_at_title(body)
    assert "Department number" not in body.text_content()


@pytest.mark.parametrize(
    ("html", "text"),
    [
        ("<div><span>2026</span><span>1h 54m</span></div>", "2026 1h 54m"),
        ("<div><a href='/a'>Justine Calma</a><span>Mar 5</span></div>", "Justine Calma Mar 5"),
        ("<div><div>Accessories</div>3</div>", "Accessories 3"),
        ("<p><b>H</b>ello and <em>bold</em>ly</p>", "Hello and boldly"),
        ("<div><span>one</span> <span>two</span></div>", "one two"),
        ("<div><span>$</span><span>24</span></div>", "$24"),
        ("<div><span><i>de</i></span><span>ep</span></div>", "de ep"),
        ("<div><span></span><span>x</span></div>", "x"),
    ],
)
def test_elements_laid_out_apart_are_spaced_apart(html, text):
    body = tree_of(f"<html><body>{html}</body></html>").find("body")
    region.space_out(body)
    assert body.text_content() == text


def test_hidden_utility_classes_are_pruned_unless_shown_at_some_width():
    html = (
        "<html><body><p>Visible text</p><div class='hidden'>Hidden always</div>"
        "<div class='hidden md:block'>Shown on desktops</div>"
        "<div class='d-none d-lg-flex'>Shown on large screens</div></body></html>"
    )
    tree = tree_of(html)
    region.prune(tree)
    text = tree.text_content()
    assert "Hidden always" not in text
    assert "Shown on desktops" in text
    assert "Shown on large screens" in text


def test_a_page_streamed_into_a_hidden_element_is_shown_and_small_hidden_parts_go():
    # Streaming server rendering sends the whole page inside a hidden <div> that a script
    # then reveals: it holds most of the text, so it is the content, not hidden clutter.
    items = "".join(f"<li><a href='/p/{n}'>Walnut side table {n}</a> $9{n}</li>" for n in range(8))
    html = page(
        f"<div hidden><h1>Side tables</h1><p>{LOREM}</p><ul>{items}</ul>"
        f"<div hidden>Sign in to see prices</div></div>"
    )
    tree = tree_of(html)
    markdown = pages.extract(tree, "collection", read(tree), include_links=True)
    assert "The committee met twice" in markdown
    assert "Walnut side table 7" in markdown
    assert "Sign in to see prices" not in markdown


_RENTALS = "".join(
    f"<div class='facet'><h2>Machine {n}</h2><p>{LOREM}</p><p>{LOREM}</p></div>" for n in range(3)
)
_CHAIR = "".join(f"<div class='product-dropdown'><p>{n}. {LOREM}</p></div>" for n in range(3))
_HOURS = "".join(
    f"<div class='facet'><p>Open daily from nine to five, {n}.</p></div>" for n in range(3)
)


@pytest.mark.parametrize(
    ("body", "page_type", "expected"),
    [
        # The type's extractor prunes its tree in place: the article candidate must not
        # inherit an empty one.
        (_RENTALS, "service", "The committee met twice"),
        # The details sit in a block whose class happens to say "dropdown": the region keeps
        # the title alone, the article candidate has the text.
        (f"<h1>Oak chair</h1>{_CHAIR}", "product", "The committee met twice"),
        # Nothing at all is left of the region: the article candidate, however short.
        (_HOURS, "service", "Open daily from nine to five"),
    ],
)
def test_a_type_region_of_next_to_nothing_gives_way_to_the_article_candidate(
    body, page_type, expected
):
    tree = tree_of(page(body))
    markdown, read_as = extract._extract(
        tree, page_type, read(tree), include_links=True, large=False
    )
    assert expected in markdown
    assert read_as == page_type  # the page is still of its type


def test_a_short_type_region_stays_when_the_article_candidate_is_as_short():
    html = page("<h1>Oak chair</h1><p>Seat height 45 cm, oak, oiled.</p>")
    tree = tree_of(html)
    markdown, _ = extract._extract(tree, "product", read(tree), include_links=True, large=False)
    assert "Seat height 45 cm" in markdown


def test_closed_tabs_and_accordions_open_but_other_hidden_parts_still_go():
    # An accordion's answer is hidden until its question, which names it in aria-controls,
    # is clicked: it is content. A hidden element nothing opens is not.
    faq = (
        "<h2>Questions</h2><button aria-controls='a1' aria-expanded='false'>How long?</button>"
        "<div id='a1' aria-hidden='true'><p>Two weeks for a small garden.</p></div>"
        "<a aria-controls='a0 a2'>Sizes</a>"
        "<div id='a2' hidden><p>Small, medium and large.</p></div>"
        "<div id='a3' aria-hidden='true'><p>Off-screen copy of the menu</p></div>"
    )
    tree = tree_of(page(f"<h1>Garden design</h1><p>{LOREM}</p>{faq}"))
    markdown = pages.extract(tree, "service", read(tree), include_links=True)
    assert "Two weeks for a small garden" in markdown
    assert "Small, medium and large" in markdown
    assert "Off-screen copy" not in markdown


def test_a_page_wrapped_in_a_nav_stays_when_its_footer_outweighs_the_rest():
    # An unclosed <nav> swallows the page, footer included: it holds most of the text, so it
    # is the page, not a menu; the footer still goes, whatever its size.
    footer = "<footer>" + "".join(f"<p>Legal note {n}. {LOREM}</p>" for n in range(3)) + "</footer>"
    html = f"<html><body><nav><h1>Fitness rentals</h1><p>{LOREM}</p><p>{LOREM}</p>{footer}"
    tree = tree_of(html)
    region.prune(tree)
    text = tree.text_content()
    assert "Fitness rentals" in text
    assert "Legal note" not in text


# A shop's mega-menu can outweigh a product page whose details its scripts render: it is all
# short links, so it is a menu whatever its size.
SHOP_MENU = "".join(f"<a href='/c/{n}'>Sofas {n}</a>" for n in range(200))
# Each category has a line of text under its links, so this is not all short links; but a
# navigation landmark whose words are mostly link text is navigation whatever its size.
BLURBED = "".join(f"<a href='/c/{n}'>Best savings account number {n}</a>" for n in range(6))
BLURBED_MENU = (
    "<ul>" + "<li><a href=/c>Banking</a><p>Compare the rates and the fees of every account we have "
    f"reviewed this year.</p>{BLURBED}</li>" * 10 + "</ul>"
)
# A page wrapped in a form: the form is weighed with the menus in. Once they are gone it
# holds less than half of the page as it came, but it is still the whole page.
FORM_MENU = "".join(f"<a href='/c/{n}'>Projectors {n}</a>" for n in range(120))


@pytest.mark.parametrize(
    ("html", "gone"),
    [
        pytest.param(
            f"<html><body><nav>{SHOP_MENU}</nav><h1>Oak chair</h1><p>{LOREM}</p></body></html>",
            "Sofas 7",
            id="short-links",
        ),
        pytest.param(
            f"<html><body><header role='banner'><nav>{BLURBED_MENU}</nav></header>"
            f"<h1>Retirement calculator</h1><p>{LOREM}</p></body></html>",
            "Best savings account",
            id="mega-menu-with-blurbs",
        ),
        pytest.param(
            f"<html><body><form id='main'><header>{FORM_MENU}</header>"
            f"<h1>Laser projectors</h1><p>{LOREM}</p></form></body></html>",
            "Projectors 7",
            id="page-wrapped-in-a-form",
        ),
    ],
)
def test_a_menu_goes_even_when_it_holds_most_of_the_page_text(html, gone):
    tree = tree_of(html)
    region.prune(tree)
    text = tree.text_content()
    assert gone not in text
    assert "The committee met twice" in text


def test_a_banner_that_holds_the_page_s_own_text_stays():
    links = "".join(f"<a href='/c/{n}'>Section {n}</a>" for n in range(3))
    html = (
        f"<html><body><div role='banner'>{links}<p>{LOREM}</p><p>{LOREM}</p></div>"
        "<p>Short note.</p></body></html>"
    )
    tree = tree_of(html)
    region.prune(tree)
    assert "The committee met twice" in tree.text_content()


def test_filters_and_facets_are_pruned():
    html = (
        "<html><body><div class='facet-list'><p>Colour</p><p>Size</p></div>"
        f"<p>{LOREM}</p></body></html>"
    )
    tree = tree_of(html)
    region.prune(tree)
    assert "Colour" not in tree.text_content()


def test_an_image_in_a_link_stays_an_image_and_lends_no_words():
    html = (
        "<div><a href='https://example.com/p/1'><div><img alt='black' src='https://example.com/"
        "a.jpg'></div><span>Walking Pad</span></a></div>"
    )
    markdown = element_markdown(tree_of(html).find("body"), include_links=True)
    assert "[![black](https://example.com/a.jpg) Walking Pad](https://example.com/p/1)" in markdown


def test_folded_content_is_kept_only_when_asked():
    html = "<div><p>Open</p><div style='display:none'>Folded specs</div></div>"
    body = tree_of(html).find("body")
    assert "Folded specs" not in element_markdown(body, include_links=True)
    assert "Folded specs" in element_markdown(body, include_links=True, folded=True)


def test_a_feed_of_linked_items_is_a_listing():
    items = "".join(
        f"<div class='card'><a href='/p/{n}'>Card number {n} title</a><p>Teaser {n}.</p></div>"
        for n in range(8)
    )
    tree = tree_of(f"<html><body><h1>Home</h1><div>{items}</div></body></html>")
    assert pagetype.detect(tree, "https://example.com/home", read(tree)).name == "listing"


def shape(body: str) -> dict[str, float]:
    """The page-type features of a page with this body."""
    tree = tree_of(f"<html><body>{body}</body></html>")
    return pagetype.features(tree, "https://example.com/a", read(tree))


def test_a_page_laid_out_in_like_blocks_is_not_a_feed():
    # Old pages stack class-less blocks, each with a link: a header, the story, boxes, a
    # footer. One block holds most of their text, which a feed's items never do.
    def blocks(story: str) -> str:
        parts = ["<a href='/'>Home</a> <a href='/news'>News</a>", story]
        parts += [f"<a href='/box/{n}'>Box {n}</a> about other things to read" for n in range(4)]
        return "".join(f"<div>{part}</div>" for part in parts)

    article = f"<h1>The vote</h1><a href='/author'>By a reporter</a><p>{LOREM * 8}</p>"
    teaser = f"<a href='/story'>A story</a> {LOREM[:60]}"

    assert shape(blocks(article))["items"] == 0.0
    assert shape(blocks(teaser))["items"] > 0.5  # the same blocks, each a teaser's size: a feed


def items_share(item: str = "", listed: str = "") -> float:
    """The `items` feature of a page whose run of menu panels has these attributes."""
    panels = "".join(
        f"<div {item}><a href='/m/{n}'>Menu panel {n}</a> with its own links</div>"
        for n in range(6)
    )
    return shape(f"<div {listed}>{panels}</div><p>{LOREM}</p>")["items"]


@pytest.mark.parametrize(
    ("item", "listed"),
    [
        ("class='hidden'", ""),
        ("hidden", ""),
        ("aria-hidden='true'", ""),
        ("class='sr-only'", ""),
        ("", "class='is-hidden menu'"),
        ("", "hidden"),
    ],
)
def test_hidden_items_are_not_a_feed(item, listed):
    # A menu's closed panels: a run of like linked items that no reader sees.
    assert items_share() > 0.5
    assert items_share(item, listed) == 0.0


def test_items_hidden_only_on_small_screens_are_a_feed():
    assert items_share("class='hidden md:block'") == items_share()


def test_bylines_are_marked_by_rel_author_or_a_class_that_says_so():
    marks = (
        "<a rel='author' href='/ann'>Ann</a><span class='post-author'>Bo</span>"
        "<p class='byline'>By Cy</p><p class='authority'>Counted: the class holds the word</p>"
    )
    assert shape(marks)["byline"] == math.log1p(4)
    assert shape("<p class='writer'>Di</p><a rel='me' href='/di'>Di</a>")["byline"] == 0.0


def test_posts_are_the_commonest_class_of_post_sized_elements():
    def posts(name: str, count: int, tag: str = "div", text: str = LOREM) -> str:
        return f"<{tag} class='{name}'>{text}</{tag}>" * count

    assert shape(posts("post", 3) + posts("comment-body", 4))["posts"] == math.log1p(4)
    # Links, spans, buttons and forms are no posts; nor is a class that only holds the word
    # ("postal"), nor a block too short to be one.
    noise = posts("reply", 9, "span") + posts("post", 9, "a") + posts("postal", 9)
    noise += posts("message", 9, text="Sent")
    assert shape(posts("post", 3) + noise)["posts"] == math.log1p(3)


def test_cards_are_headings_that_are_links_or_hold_one():
    cards = "<h2><a href='/1'>One</a></h2><a href='/2'><h3>Two</h3></a>"
    cards += "<h4><b><a href='/3'>Three</a></b></h4>"
    others = "<h4>Not a link</h4><h5><a href='/5'>Too small a heading</a></h5>"
    assert shape(cards + others)["cards"] == math.log1p(3)


def test_an_article_that_declares_itself_is_not_a_listing_for_its_teasers():
    teasers = "".join(f"<h3><a href='/n/{n}'>Other story {n}</a></h3>" for n in range(8))
    html = (
        "<html><head><meta property='og:type' content='article'></head><body>"
        f"<h1>The vote</h1><p>{LOREM}</p>{teasers}</body></html>"
    )
    tree = tree_of(html)
    assert pagetype.detect(tree, "https://example.com/2024/the-vote", read(tree)).name == "article"


@pytest.mark.parametrize(
    ("primary", "fallback", "doubtful"),
    [
        ("", "Some text of readability.", True),
        ("one two three four five six", "", False),
        ("a b c d e f g h i j", "a b c d e f g h i j k", False),
        ("a b c d e", "a b c d e f g h i j k l m n o p", True),
        ("a b c d e f g h", "a b c d e f g h i j k", True),
        ("q r s t u v w x", "a b c d e f g h", True),
    ],
)
def test_the_quick_extraction_is_doubted_when_empty_short_or_elsewhere(primary, fallback, doubtful):
    assert extract._doubtful(primary, fallback) is doubtful


def test_a_doubtful_quick_extraction_runs_trafilatura_with_its_fallbacks(monkeypatch):
    calls = []

    def fake(tree, *, include_links, fast):
        calls.append(fast)
        return "" if fast else f"Full text. {LOREM}"

    monkeypatch.setattr(extract, "_trafilatura", fake)
    monkeypatch.setattr(extract, "_readability", lambda tree, include_links: LOREM)
    html = page(
        f"<main><article><h1>T</h1><p>{LOREM}</p></article></main>",
        head="<meta property='og:type' content='article'>",
    )
    doc = html_to_markdown(html, "https://example.com/news/2024/05/the-vote")
    assert doc.page_type in ("article", None)  # never another type
    assert calls == [True, False]
    assert "Full text." in doc.markdown


@pytest.mark.parametrize(("rest", "full_run"), [(10, True), (3, False)])
def test_a_quick_extraction_that_holds_a_small_part_of_the_page_runs_trafilatura_in_full(
    monkeypatch, rest, full_run
):
    """trafilatura's quick text and readability's agree on the first section, and the page
    holds `rest` more sections in sibling boxes: under a fifth of its words is scant, and
    trafilatura's own fallbacks look further."""
    calls = []
    first = f"The first section. {LOREM}"

    def fake(tree, *, include_links, fast):
        calls.append(fast)
        return first if fast else f"{first}\n\nEvery section."

    monkeypatch.setattr(extract, "_trafilatura", fake)
    monkeypatch.setattr(extract, "_readability", lambda tree, include_links: first)
    sections = "".join(f"<div><h2>Part {n}</h2><p>{LOREM}</p></div>" for n in range(rest))
    html = page(f"<main><div><h1>T</h1><p>{first}</p></div>{sections}</main>")
    doc = html_to_markdown(html, "https://example.com/guides/plants")
    assert doc.page_type in ("article", None)  # never another type
    assert calls == ([True, False] if full_run else [True])
    assert ("Every section." in doc.markdown) is full_run


def test_an_indented_tag_has_no_more_attributes_than_a_flat_one():
    flat = "<img alt='a' src='b'>" * 1000
    indented = "<img\n            alt='a'\n            src='b'>" * 1000

    def nodes(html: str) -> float:  # the cost without its share for the characters
        return extract._chunk_cost(html, 0, len(html)) - len(html) / extract._NODE_CHARS

    assert nodes(indented) == nodes(flat) == 3000


@pytest.mark.parametrize(
    ("declared", "page_type"), [("ProfessionalService", "service"), ("Article", "article")]
)
def test_lines_that_only_label_a_control_go(declared, page_type):
    html = page(
        f"<main><h1>Bookkeeping</h1><p>{LOREM}</p><p><a href='/more'>Read more »</a></p>"
        "<p>Learn more about how we close your books.</p><div><a href='/c'>Compare</a></div>"
        f"<div><button>Add to cart</button></div><p>- Show all</p><p>{LOREM}</p>"
        "<p>Click to expand...</p><p>Advertisement</p><p>4 min read</p></main>",
        head=ld({"@context": "https://schema.org", "@type": declared}),
    )
    doc = html_to_markdown(html, "https://example.com/services/bookkeeping")
    assert doc.page_type in (page_type, None)  # never another type
    assert "Learn more about how we close your books." in doc.markdown
    controls = ("Read more", "Compare", "Add to cart", "Show all", "Click to expand")
    for label in (*controls, "Advertisement", "min read"):
        assert label not in doc.markdown


# A byline as pages write it, and what is left of it once its reading time is gone.
ICON_BYLINE = (
    "<div><span>By Jane Doe</span><span class='dot'>·</span>"
    "<span><i class='icon'></i>4 min. read</span></div>"
)
BYLINES = [
    ("<p>By <a href='/authors/jane'>Jane Doe</a> · 4 min read</p>",
     "By [Jane Doe](https://example.com/authors/jane)"),
    ("<p>Jane Doe • Mar 14, 2025 • 4 minute read</p>", "Jane Doe • Mar 14, 2025"),
    ("<p><em>By Jane Doe — 5 mins read</em></p>", "*By Jane Doe*"),
    ("<p>March 14, 2025 · 4 min read · By Jane Doe</p>", "March 14, 2025 · By Jane Doe"),
    ("<p>4-minute read | By Jane Doe</p>", "By Jane Doe"),
    ("<p>By Jane Doe, Reading time: 4 minutes</p>", "By Jane Doe"),
    ("<p>By Jane Doe (< 1 min read)</p>", "By Jane Doe"),
    ("<div><span>By Jane Doe</span> · <span>4 min read</span></div>", "By Jane Doe"),
    (ICON_BYLINE, "By Jane Doe"),
]  # fmt: skip


@pytest.mark.parametrize(("byline", "left"), BYLINES)
@pytest.mark.parametrize(
    ("declared", "page_type"), [("ProfessionalService", "service"), ("Article", "article")]
)
def test_a_byline_loses_its_reading_time_and_the_separator_before_it(
    byline, left, declared, page_type
):
    html = page(
        f"<main><article><h1>Bookkeeping</h1>{byline}<p>{LOREM}</p><p>{LOREM}</p></article></main>",
        head=ld({"@context": "https://schema.org", "@type": declared}),
    )
    doc = html_to_markdown(html, "https://example.com/services/bookkeeping")
    assert doc.page_type in (page_type, None)  # never another type
    assert "read" not in doc.markdown.replace(LOREM, "")
    assert left in doc.markdown.splitlines()


def test_a_reading_time_inside_a_sentence_stays():
    text = "This guide is a 4 min read, so settle in."
    assert reading.without_reading_time(text) == text
    html = page(f"<main><h1>Guide</h1><p>{text} {LOREM}</p><p>{LOREM}</p></main>")
    assert text in html_to_markdown(html, "https://example.com/guide").markdown


def test_a_listing_keeps_each_item_s_reading_time():
    items = "".join(
        f"<article class='card'><h2><a href='/posts/{n}'>Post number {n} of the blog</a></h2>"
        f"<p>Mar 0{n + 1}, 2026 | {n + 2} min read</p><p>A teaser for post {n}.</p></article>"
        for n in range(8)
    )
    doc = html_to_markdown(page(f"<main><h1>Blog</h1>{items}</main>"), "https://example.com/blog/")
    assert doc.page_type == "listing"
    for n in range(8):
        assert f"Mar 0{n + 1}, 2026 | {n + 2} min read" in doc.markdown


def test_a_code_block_keeps_its_lines_that_read_like_a_control():
    markdown = "Run it:\n\n```\nshare\nclose\n```\n\nRead more\n\n~~~\nmenu\n~~~\nShare"
    kept = "Run it:\n\n```\nshare\nclose\n```\n\n\n~~~\nmenu\n~~~"
    assert pages.without_controls(markdown) == kept
    html = page(
        f"<main><h1>Sharing</h1><p>{LOREM}</p><pre><code>share\nclose</code></pre>"
        f"<p>{LOREM}</p><p><a href='/s'>Share</a></p></main>"
    )
    doc = html_to_markdown(html, "https://example.com/blog/sharing")
    assert "```\nshare\nclose\n```" in doc.markdown
    assert "[Share]" not in doc.markdown


def test_an_article_that_does_not_declare_itself_goes_to_trafilatura_too(monkeypatch):
    """Every article takes the article path, declared or not: the region path kept the
    boilerplate of classic news pages (issue 19)."""
    calls: list[bool] = []
    real = extract._trafilatura

    def counted(*args, **kwargs):
        calls.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(extract, "_trafilatura", counted)
    html = page(f"<main><h1>Notes</h1><p>{LOREM}</p><ul><li>First</li><li>Second</li></ul></main>")
    doc = html_to_markdown(html, "https://example.com/blog/notes")
    assert doc.page_type in ("article", None)  # never another type
    assert calls
    assert "The committee met twice" in doc.markdown
    assert "Menu entry" not in doc.markdown


def test_targets_resolve_against_the_first_base_and_a_broken_one_stays_as_it_is():
    from ikigai_web.fetch.reading.links import clean_tree

    tree = tree_of(
        "<html><head><base href='/docs/'><base href='/other/'></head><body>"
        "<a href='intro.html'>Intro</a><a href='//[broken'>Broken</a>"
        "<img src=' pic.png '></body></html>"
    )
    clean_tree(tree, "https://example.com/start")
    targets = [element.get("href") or element.get("src") for element in tree.iter("a", "img")]
    assert targets == [
        "https://example.com/docs/intro.html",
        "//[broken",
        "https://example.com/docs/pic.png",
    ]
    assert not tree.xpath("//base")


@pytest.mark.parametrize(
    "base", ["javascript:alert(1)//", "data:text/html,x", " JaVa\tScript:void(0)", "mailto:a@b.c"]
)
def test_a_base_that_gives_no_web_address_is_ignored_as_a_browser_does(base):
    from ikigai_web.fetch.reading.links import clean_tree

    tree = tree_of(
        f"<html><head><base href='{base}'><base href='/docs/'></head><body>"
        "<a href='intro.html'>Intro</a><img src='pic.png'></body></html>"
    )
    clean_tree(tree, "https://example.com/start/here")
    targets = [element.get("href") or element.get("src") for element in tree.iter("a", "img")]
    assert targets == ["https://example.com/start/intro.html", "https://example.com/start/pic.png"]


def test_a_target_lxml_refuses_to_store_is_dropped_and_the_link_text_stays():
    from ikigai_web.fetch.reading.links import clean_tree

    tree = tree_of(
        "<html><body><a href='next\x01page.html'>Next</a><img src='a\x0bb.png'>"
        "<a href='ok.html'>Ok</a></body></html>"
    )
    clean_tree(tree, "https://example.com/start")
    anchors = tree.xpath("//a")
    assert [anchor.get("href") for anchor in anchors] == [None, "https://example.com/ok.html"]
    assert anchors[0].text == "Next"
    assert tree.xpath("//img")[0].get("src") is None


SHOP = "https://shop.example.com/tee/"


@pytest.mark.parametrize(
    ("src", "kept"),
    [
        ("/img/tee-500.jpg?c=1 500w, /img/tee-1000.jpg?c=1 1000w", "/img/tee-500.jpg?c=1"),
        (" tee.jpg 1x,tee@2x.jpg 2x", "/tee/tee.jpg"),
        ("tee.jpg 1.5x", "/tee/tee.jpg"),
        ("tee 2024.jpg", "/tee/tee 2024.jpg"),  # a name with a space: one image, not a list
        ("javascript:alert(1) 1x, tee.jpg 2x", None),
    ],
)
def test_a_list_of_an_image_s_sizes_in_src_keeps_its_first(src, kept):
    from ikigai_web.fetch.reading.links import clean_tree

    image = f"<img src='{src}' alt='Tee'>"
    tree = tree_of(f"<html><body>{image}</body></html>")
    clean_tree(tree, SHOP)
    assert tree.xpath("//img")[0].get("src") == (kept and f"https://shop.example.com{kept}")
    html = f"<html><body><h1>Tee</h1><p>{LOREM}</p>{image}</body></html>"
    assert " 2x" not in html_to_markdown(html, SHOP).markdown
