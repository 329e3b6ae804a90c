"""The learned stage (fetch/reading/blocks.py): its units, their features, how the trees are
read and how the shipped model fits the code that reads it.

Every page here is small and hand-written: it has the shape of its kind, not any real site's.
"""

from __future__ import annotations

import math
import subprocess
import sys

import lxml.html

from ikigai_web.fetch.reading import blocks
from ikigai_web.fetch.reading.extract import html_to_markdown

DESCRIPTION = (
    "This kettle boils a litre of water in under three minutes, switches itself off when the "
    "water boils and keeps the handle cool enough to hold with a bare hand."
)
RELATED = "".join(
    f"<li class='card'><a href='/p/{n}'>Other kettle {n}</a> <span>$1{n}.00</span></li>"
    for n in range(6)
)
PAGE = (
    "<html><body><main><h1>Steel kettle</h1><p>" + DESCRIPTION + "</p>"
    "<div><div>Capacity</div><div>1.7 litres</div></div>"
    "<ul class='grid'>" + RELATED + "</ul></main></body></html>"
)


def region_of(html: str = PAGE) -> lxml.html.HtmlElement:
    main = lxml.html.document_fromstring(html).find(".//main")
    assert main is not None
    return main


def text_of(elements: list[lxml.html.HtmlElement]) -> list[str]:
    return [" ".join(e.text_content().split()) for e in elements]


def test_units_are_the_innermost_blocks_with_text_in_document_order():
    html = "<main><div><h1>Title</h1><div> <p>One <b>bold</b></p><p> </p></div>tail</div></main>"
    found = blocks.units(region_of(f"<html><body>{html}</body></html>"))
    assert text_of(found) == ["Title", "One bold"]


def test_each_unit_is_described_by_every_feature():
    region = region_of()
    found = blocks.units(region)
    rows = blocks.features(region, found, "product")
    assert len(rows) == len(found) == 10
    assert all(len(row) == len(blocks.FEATURES) for row in rows)
    named = [dict(zip(blocks.FEATURES, row, strict=True)) for row in rows]
    title, prose, *_, last = named
    assert title["heading"] == 1.0
    assert title["after_title"] == 1.0  # the title's own unit opens the content
    assert prose["paragraph"] == 1.0
    assert prose["sentence_end"] == 1.0
    assert prose["link_share"] == 0.0
    assert prose["from_main"] == 0.0  # the longest unit
    assert last["link_share"] == 0.6  # 3 of the card's 5 words are its link's
    assert last["price"] == 1.0
    assert last["in_list"] == 1.0
    assert last["alike"] == math.log1p(5)  # five other cards alike
    assert last["class_card"] == 1.0
    assert last["class_grid"] == 1.0  # the box above it says grid
    assert last["type_product"] == 1.0
    assert last["type_listing"] == 0.0
    assert last["position"] == 0.9


def test_a_text_that_repeats_in_the_region_says_so():
    html = "<html><body><main>" + "<p>Add it now</p><p>Other words here</p>" * 3 + "</main></body>"
    region = region_of(html)
    found = blocks.units(region)
    rows = blocks.features(region, found, "listing")
    at = blocks.FEATURES.index("repeats")
    assert [row[at] for row in rows] == [math.log(3)] * 6


def test_the_words_of_a_unit_and_its_heading_are_its_bag():
    region = region_of()
    bags = blocks.bags(blocks.units(region))
    assert {"steel", "kettle", "h:steel", "h:kettle"} <= bags[0]
    assert "h:kettle" in bags[-1]
    assert {"other", "$"} <= bags[-1]


def test_the_trees_add_up_to_a_probability_and_units_below_the_threshold_go():
    link_share = blocks.FEATURES.index("link_share")
    word = len(blocks.FEATURES)  # the first word of the vocabulary
    # One tree: link text over half goes right (-4); then the word "other" (+1 or -1).
    tree = ((link_share, word, word), (0.5, 0.5, 0.5), (0.0, 0.0, -3.0, -5.0))
    model = blocks.Model(2.0, (tree,), {"product": 0.5}, ("other",))
    assert blocks.chance([0.0] * (word + 1), model) == 1 / (1 + math.exp(-2.0))
    row = [0.0] * (word + 1)
    row[link_share], row[word] = 1.0, 1.0
    assert blocks.chance(row, model) == 1 / (1 + math.exp(3.0))
    region = region_of()
    blocks.keep(region, "product", model)
    assert text_of(blocks.units(region)) == ["Steel kettle", DESCRIPTION, "Capacity", "1.7 litres"]


def test_a_type_without_a_threshold_keeps_every_unit():
    tree = ((0,), (-1.0,), (0.0, -50.0))  # every unit scores -50
    region = region_of()
    blocks.keep(region, "listing", blocks.Model(0.0, (tree,), {"product": 0.5}))
    assert len(blocks.units(region)) == 10


def test_the_extreme_scores_stay_probabilities():
    tree = ((0,), (-1.0,), (0.0, 1e6))
    assert blocks.chance([0.0], blocks.Model(0.0, (tree,), {})) == 1 / (1 + math.exp(-30.0))


def test_the_shipped_model_reads_the_features_the_code_writes():
    model = blocks.shipped_model()
    width = len(blocks.FEATURES) + len(model.vocabulary)
    assert model.trees
    for split, values, leaves in model.trees:
        assert len(leaves) == len(split) + 1
        assert len(values) == len(split)
        assert all(0 <= feature < width for feature in split)
    assert set(model.thresholds) <= set(blocks._TYPES)
    assert all(0 < t < 1 for t in model.thresholds.values())
    region = region_of()
    found = blocks.units(region)
    for row, bag in zip(blocks.features(region, found, "product"), blocks.bags(found), strict=True):
        chance = blocks.chance(row + [float(w in bag) for w in model.vocabulary], model)
        assert 0 < chance < 1


def test_a_page_read_by_region_goes_through_the_stage():
    html = PAGE.replace("<main>", "<main><script type='application/ld+json'>"
                        '{"@type": "Product", "name": "Steel kettle"}</script>')  # fmt: skip
    document = html_to_markdown(html, "https://shop.example/kettle")
    assert DESCRIPTION in document.markdown


ALSO_LIKED = (
    "<html><body><main><h1>Steel kettle</h1><p>" + DESCRIPTION + "</p>"
    "<h2>You may also like</h2><ul class='grid'>" + RELATED + "</ul></main></body></html>"
)


def named_rows(html: str, page_type: str = "product") -> list[dict[str, float]]:
    region = region_of(html)
    rows = blocks.features(region, blocks.units(region), page_type)
    return [dict(zip(blocks.FEATURES, row, strict=True)) for row in rows]


def test_a_unit_is_described_by_its_section_and_its_group_of_like_siblings():
    title, prose, heading, *cards = named_rows(ALSO_LIKED)
    assert title["section_rank"] == 1.0  # the title's section holds the whole page
    assert title["section_has_title"] == title["section_has_main"] == 1.0
    assert heading["section_rank"] == 2.0  # "You may also like" and what follows it
    assert [heading["section_start"], heading["section_end"]] == [2 / 9, 1.0]
    assert heading["section_title_like"] == 0.0  # no word of it is the title's
    assert heading["section_has_main"] == 0.0
    last = cards[-1]
    assert last["section_start"] == heading["section_start"]
    assert last["group_units"] == math.log1p(6)  # the six cards, one run of like siblings
    assert last["group_prices"] == 1.0
    assert last["group_link_share"] == 0.6
    assert [last["group_start"], last["group_end"]] == [3 / 9, 1.0]
    assert prose["group_units"] == -1.0  # in no group


def test_units_before_any_heading_are_in_no_section():
    rows = named_rows("<html><body><main><p>Lead words here.</p><h2>Part</h2><p>Body.</p></main>")
    assert rows[0]["section_rank"] == -1.0
    assert rows[2]["section_rank"] == 2.0


def test_a_specifications_value_is_never_dropped():
    """However sure the trees are, a table's or a term list's cells stay: a value ("1.7
    litres") is a short line like the labels around it."""
    tree = ((0,), (-1.0,), (-50.0, -50.0))  # every unit scores -50
    html = PAGE.replace(
        "<div><div>Capacity</div><div>1.7 litres</div></div>",
        "<table><tr><th>Capacity</th><td>1.7 litres</td></tr></table>"
        "<dl><dt>Weight</dt><dd>1.1 kg</dd></dl>",
    )
    region = region_of(html)
    blocks.keep(region, "product", blocks.Model(0.0, (tree,), {"product": 0.5}))
    assert text_of(blocks.units(region)) == ["Capacity", "1.7 litres", "Weight", "1.1 kg"]


def test_the_stage_is_deterministic():
    model = blocks.shipped_model()
    first, second = region_of(ALSO_LIKED), region_of(ALSO_LIKED)
    assert named_rows(ALSO_LIKED, "listing") == named_rows(ALSO_LIKED, "listing")
    shipped = blocks.Model(model.base, model.trees, {"listing": 0.5}, model.vocabulary)
    blocks.keep(first, "listing", shipped)
    blocks.keep(second, "listing", shipped)
    assert lxml.html.tostring(first) == lxml.html.tostring(second)


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_schema_imports_nothing_of_the_stage():
    code = (
        "import sys, json, ikigai_web.tools.web_fetch as m; json.dumps(m.SCHEMA); "
        "print('ikigai_web.fetch.reading.blocks' in sys.modules)"
    )
    assert run_python(code) == "False"


def test_the_model_loads_only_when_a_page_is_read_by_region():
    article = "<html><body><article><h1>News</h1><p>" + DESCRIPTION * 4 + "</p></article></body>"
    code = (
        "import sys; from ikigai_web.fetch.reading.extract import html_to_markdown\n"
        "def loaded():\n"
        "    blocks = sys.modules.get('ikigai_web.fetch.reading.blocks')\n"
        "    return blocks is not None and blocks.shipped_model.cache_info().currsize == 1\n"
        "print(loaded())\n"
        f"html_to_markdown({article!r}, 'https://news.example/a')\n"
        "print(loaded())\n"
        f"html_to_markdown({ALSO_LIKED!r}, 'https://shop.example/kettle')\n"
        "print(loaded())\n"
    )
    assert run_python(code).split() == ["False", "False", "True"]
