"""The page's own style sheets applied as a browser applies them (fetch/reading/cascade.py): media
queries on a desktop screen, lengths, custom properties, the ancestor filter, bounds."""

from __future__ import annotations

import lxml.html
import pytest

from ikigai_web.fetch.reading import cascade, hidden


def tree_of(markup: str) -> lxml.html.HtmlElement:
    tree = lxml.html.document_fromstring(markup)
    assert isinstance(tree, lxml.html.HtmlElement)
    return tree


@pytest.mark.parametrize(
    ("query", "matches"),
    [
        ("", True),
        ("screen", True),
        ("all", True),
        ("print", False),
        ("only screen and (min-width: 768px)", True),
        ("screen and (max-width: 600px)", False),
        ("(min-width: 1px)", True),
        ("(min-width: 80em)", True),  # 1280 px
        ("(min-width: 81em)", False),
        ("(width >= 1024px)", True),
        ("(400px <= width <= 700px)", False),
        ("(orientation: landscape)", True),
        ("(prefers-color-scheme: dark)", False),
        ("(prefers-color-scheme: light)", True),
        ("(hover: hover) and (pointer: fine)", True),
        ("not print", True),
        ("not screen", False),
        ("print, screen and (min-width: 900px)", True),
        ("(min-resolution: 2dppx)", False),
        ("(-webkit-min-device-pixel-ratio: 1)", True),
        ("(min-aspect-ratio: 16/9)", False),  # 1280/800 = 1.6
        ("(not (max-width: 600px))", True),
        ("((max-width: 600px) or (min-width: 1200px))", True),
        ("(unknown-feature: 3)", False),
        ("speech", False),
    ],
)
def test_media_queries_are_judged_for_a_desktop_screen(query, matches):
    assert cascade.media_matches(query) is matches


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("10px", 10.0),
        ("2em", 32.0),
        ("1.5rem", 24.0),
        ("50%", 8.0),  # of the 16 px given
        ("12pt", 16.0),
        ("1in", 96.0),
        ("10vw", 128.0),
        ("calc(100% - 4px)", 12.0),
        ("calc(2 * 3px)", 6.0),
        ("min(10px, 2em)", 10.0),
        ("max(10px, 2em)", 32.0),
        ("clamp(1px, 0.5px, 3px)", 1.0),
        ("0", 0.0),
        ("auto", None),
        ("calc(1px + nonsense)", None),
    ],
)
def test_lengths_in_px(value, expected):
    assert cascade.length(value, em=16.0, percent_of=16.0) == expected


def test_custom_properties_are_substituted_with_fallbacks_and_bounds():
    customs = {"--a": "#fff", "--b": "var(--a)", "--empty": " "}
    assert cascade.substitute("var(--a)", customs) == "#fff"
    assert cascade.substitute("1px solid var(--b)", customs) == "1px solid #fff"
    assert cascade.substitute("var(--missing, red)", customs) == "red"
    assert cascade.substitute("var(--empty, blue)", customs) == "blue"
    assert cascade.substitute("var(--missing)", customs) is None
    looped = {"--x": "var(--y)", "--y": "var(--x)"}
    assert cascade.substitute("var(--x)", looped) is None


@pytest.mark.parametrize(
    ("selector", "loosened"),
    [
        (".faq.open .answer", ".faq .answer"),
        (".collapse.show", ".collapse"),
        ("input:checked + label + div", "input + label + div"),
        ('[aria-expanded="true"] + .panel', "* + .panel"),
        ("a:hover > .menu", "a > .menu"),
        (".panel", None),
        (".a:not(.b)", None),
    ],
)
def test_a_rule_for_another_state_is_loosened_to_this_one(selector, loosened):
    assert cascade._loosened(selector) == loosened


def test_brackets_nested_past_any_real_page_are_taken_out():
    deep = "a{color:" + "(" * 40 + ")" * 40 + "} .x{display:none}"
    flat = cascade._flattened(deep)
    assert flat.endswith("} .x{display:none}")
    assert flat.count("(") == cascade._MAX_DEPTH - 1
    inside_a_string = 'a{content:"' + "(" * 40 + '"} .x{display:none}'
    assert cascade._flattened(inside_a_string) == inside_a_string
    unclosed = "a{color:" + "(" * 40 + "} .x{display:none}"
    assert ".x" not in cascade._flattened(unclosed)  # a browser reads it as one value too


def test_the_ancestor_filter_spares_rules_whose_ancestors_are_absent():
    markup = (
        "<style>#menu li span{display:none} .card + .note{display:none}</style>"
        "<body><ul id='menu'><li><span>a</span></li></ul><p class='card'>b</p>"
        "<p class='note'>c</p><div><span>d</span></div></body>"
    )
    tree = tree_of(markup)
    sheet = cascade.read_sheet(tree)
    assert sheet.rules == 2
    (entry,) = sheet.index.by_key[("", "span")]  # not a simple compound: compiled
    assert entry.needs == frozenset({("#", "menu"), ("", "li")})
    (sibling,) = sheet.index.by_key[(".", "note")]
    assert sibling.needs == frozenset()  # a sibling is no ancestor
    hidden.remove_unseen(tree, sheet)
    assert [t for t in tree.find("body").itertext() if t.strip()] == ["b", "d"]


def test_rules_for_elements_the_page_lacks_are_not_kept():
    tree = tree_of(
        "<style>.absent{display:none} #gone p{color:red} video{opacity:0} p:not(.absent)"
        "{color:#111} .x.absent{color:red}</style><body><p class='x'>t</p></body>"
    )
    assert cascade.read_sheet(tree).rules == 1


def test_a_hostile_style_sheet_is_read_within_bounds():
    many = "".join(f"p{{color:#{n % 999:03d}}}" for n in range(30_000))
    deep_selector = "div " * 5000 + "{display:none}"
    nested_is = ":is(" * 500 + "p" + ")" * 500 + "{display:none}"
    parens = "a{color:" + "(" * 100_000 + "}"
    for css in (many, deep_selector, nested_is, parens):
        sheet = cascade.read_sheet(tree_of(f"<style>{css}</style><p>x</p>"))
        assert sheet.rules <= cascade._MAX_RULES
    assert cascade.read_sheet(tree_of(f"<style>{many}</style><p>x</p>")).cut


def test_many_elements_are_matched_up_to_a_bound(monkeypatch):
    monkeypatch.setattr(hidden, "_MAX_ELEMENTS", 50)
    rows = "".join(f"<p class='n'>row {n}</p>" for n in range(200))
    tree = tree_of(f"<style>.n{{display:none}}</style><body>{rows}</body>")
    hidden.remove_unseen(tree, cascade.read_sheet(tree))
    text = tree.find("body").text_content()
    assert "row 10 " not in f"{text} "  # matched: hidden
    assert "row 199" in text  # past the bound: judged by its own style alone


def test_selectors_tested_are_bounded(monkeypatch):
    monkeypatch.setattr(cascade, "_MAX_TESTS", 10)
    rows = "".join(f"<p class='n'>row {n}</p>" for n in range(40))
    tree = tree_of(f"<style>body .n{{display:none}}</style><body>{rows}</body>")
    sheet = cascade.read_sheet(tree)
    hidden.remove_unseen(tree, sheet)
    assert sheet.cut
    assert "row 39" in tree.find("body").text_content()


def test_style_text_reads_closed_style_elements_within_bounds():
    assert cascade.style_text("<STYLE media=screen>a{}</style ><style>b{}</style>") == "a{}b{}"
    assert cascade.style_text("<style>a{}</style><style>never closed") == "a{}"
    assert len(cascade.style_text(f"<style>{'x' * 400_000}</style>")) == 300_000


def test_rules_that_cannot_matter_are_taken_out_before_reading():
    present = cascade._Present(
        frozenset({"x"}), frozenset({"a", "faq", "answer"}), frozenset({"p", "div"})
    )
    css = (
        "@font-face{src:url(a.woff)} @keyframes spin{to{transform:rotate(1turn)}}"
        " .b{color:red} .a{font-weight:bold} .a{display:none}"
        " @media screen{.zz{display:none} .a{opacity:0}}"
        " .faq.open .answer{display:block}"  # .open is absent, but it is another state's rule
        ' .q{content:"{"} .b, .a{color:blue} a:not(.zz){color:red}'
    )
    assert cascade._pruned(css, present).split() == [
        ".a{display:none}",
        "@media",
        "screen{",
        ".a{opacity:0}}",
        ".faq.open",
        ".answer{display:block}",
        ".b,",
        ".a{color:blue}",
        "a:not(.zz){color:red}",
    ]


def test_a_simple_compound_is_matched_by_its_tokens_alone():
    assert cascade.simple_compound("div.note#tip") == (
        frozenset({("", "div"), (".", "note"), ("#", "tip")}),
        (1, 1, 1),
    )
    for selector in ("*", "a:hover", "div > p", "#a#b", "[x]", ".md\\:flex"):
        assert cascade.simple_compound(selector) is None
    tree = tree_of(
        "<style>p.n{display:none} div.n{display:block} #k.n{display:block}</style>"
        "<body><p class='n'>gone</p><p class='n' id='k'>kept</p>"
        "<div class='n'>kept too</div></body>"
    )
    sheet = cascade.read_sheet(tree)
    assert not sheet.index.by_key  # nothing compiled
    hidden.remove_unseen(tree, sheet)
    assert [t for t in tree.find("body").itertext() if t.strip()] == ["kept", "kept too"]
