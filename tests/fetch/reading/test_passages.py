"""Passages for a query (fetch/reading/passages.py): blocks, word forms, ranking, fitting."""

# ruff: noqa: RUF001 - text in many scripts, whose letters look like Latin ones, is the point

from __future__ import annotations

import pytest

from ikigai_web.fetch.reading import passages
from ikigai_web.fetch.reading.passages import (
    Block,
    Heading,
    choose_language,
    folded_words,
    index_terms,
    read_for,
    render_passages,
    room_for,
    split_blocks,
)

PAGE = """Harbour towns grew along the northern coast in the twelfth century.

## Trade

The guild of rope makers controlled the harbour's trade in hemp and tar.

- Hemp came by river barge from the inland farms.
- Tar was boiled in pits outside the town walls.

### Tolls

| Good | Toll |
|---|---|
| Hemp | two pennies a bale |
| Tar | one penny a barrel |

## Decline

A great storm in 1362 silted the harbour mouth, and the ships went south.

```
ledger = {"hemp": 2, "tar": 1}
```
"""


def lines_of(text: str) -> list[str]:
    return text.rstrip("\n").split("\n")


def test_blocks_are_whole_paragraphs_lists_tables_and_code_under_their_headings():
    blocks, headings = split_blocks(lines_of(PAGE))
    assert [(b.first, b.last, b.headings) for b in blocks] == [
        (1, 1, ()),
        (5, 5, ("Trade",)),
        (7, 8, ("Trade",)),
        (12, 15, ("Trade", "Tolls")),
        (19, 19, ("Decline",)),
        (21, 23, ("Decline",)),
    ]
    assert blocks[2].text.startswith("- Hemp")
    assert blocks[2].text.endswith("walls.")
    assert blocks[5].text == '```\nledger = {"hemp": 2, "tar": 1}\n```'
    assert headings == [Heading(3, 2, "Trade"), Heading(10, 3, "Tolls"), Heading(17, 2, "Decline")]


def test_lines_are_numbered_from_where_the_window_starts():
    blocks, headings = split_blocks(lines_of(PAGE)[16:], 17)
    assert (blocks[0].first, blocks[0].headings) == (19, ("Decline",))
    assert headings == [Heading(17, 2, "Decline")]


def test_a_fenced_block_keeps_its_blank_lines_and_hash_lines():
    lines = ["Before.", "", "```", "# not a heading", "", "x = 1", "```", "", "After."]
    blocks, headings = split_blocks(lines)
    assert headings == []
    assert [b.text for b in blocks] == ["Before.", "\n".join(lines[2:7]), "After."]


def test_a_document_s_blocks_know_their_page():
    lines = ["[Page 1 of 2]", "", "Intro text.", "", "[Page 2 of 2]", "", "Results text."]
    blocks, _ = split_blocks(lines)
    assert [(b.text, b.page) for b in blocks] == [("Intro text.", 1), ("Results text.", 2)]
    chosen = read_for(lines, "results", room_for(500)).passages
    assert render_passages(chosen) == "[Page 2, line 7]\nResults text."


def test_a_long_table_is_cut_between_rows_each_piece_under_the_header():
    rows = [f"| item {n} | {'x' * 60} |" for n in range(60)]
    blocks, _ = split_blocks(["| name | value |", "|---|---|", *rows])
    assert len(blocks) > 1
    assert all(len(b.text) <= passages.PIECE_CHARS + 200 for b in blocks)
    assert all(b.text.startswith("| name | value |\n|---|---|") for b in blocks)
    assert blocks[1].first == blocks[0].last + 1


def test_words_fold_case_and_keep_indic_vowel_signs():
    assert folded_words("Ｔｅａ TIME, tea-time") == ["tea", "time", "tea", "time"]
    assert folded_words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


def test_southeast_asian_words_keep_their_vowel_signs():
    # Python's \w leaves out the vowel signs of Thai, Lao, Burmese and Khmer.
    assert folded_words("မြန်မာဘာသာ") == ["မြန်မာဘာသာ"]
    assert folded_words("ภาษาไทยที่ดี") == ["ภาษาไทยที่ดี"]
    assert folded_words("ភាសាខ្មែរ") == ["ភាសាខ្មែរ"]


def test_a_headings_own_hash_is_kept_and_its_closing_sequence_dropped():
    headings = split_blocks(["# Learn C#", "", "## Install ##", "", "Text."])[1]
    assert [h.text for h in headings] == ["Learn C#", "Install"]


def test_unspaced_scripts_are_read_as_character_pairs():
    assert index_terms(["北京大学"], None) == ["北京", "京大", "大学"]
    assert index_terms(["ไทย", "word"], None) == ["ไท", "ทย", "word"]
    assert index_terms(["中"], None) == ["中"]


@pytest.mark.parametrize(
    ("query", "page", "language"),
    [
        ("Когда был построен мост?", {"мост"}, "russian"),
        ("Πότε χτίστηκε η γέφυρα;", {"γέφυρα"}, "greek"),
        ("متى بني الجسر", {"الجسر"}, "arabic"),
        ("पुल कब बना था", {"पुल"}, "hindi"),
        ("桥是什么时候建的", {"桥"}, None),
        ("when were the bridges built", {"bridge", "building"}, "english"),
        ("", {"bridge"}, None),
        ("1820 1821", {"1820"}, "english"),
    ],
)
def test_the_stemmer_follows_the_query_s_script(query, page, language):
    assert choose_language(folded_words(query), page) == language


@pytest.mark.parametrize(
    ("query", "page", "pairs"),
    [
        ("cuándo se construyeron los puentes", {"puente", "construyó"}, ("puentes", "puente")),
        ("wann wurden die Brücken gebaut", {"brücke", "baute"}, ("brücken", "brücke")),
        ("köprüler ne zaman yapıldı", {"köprü", "yapılmış"}, ("köprüler", "köprü")),
    ],
)
def test_a_latin_script_stemmer_is_one_that_joins_the_query_s_words_to_the_page_s(
    query, page, pairs
):
    language = choose_language(folded_words(query), page)
    assert language is not None
    assert len(set(index_terms(list(pairs), language))) == 1


def test_word_forms_match_across_inflection():
    lines = ["The bridge stands.", "", "Engineers were building bridges over the river in 1820."]
    best = read_for(lines, "who builds a bridge", room_for(60)).passages
    assert [p.first for p in best] == [3]


def test_the_answer_s_paragraph_comes_first_whatever_the_language():
    lines = lines_of(PAGE)
    cases = {
        "How much was the toll on a barrel of tar?": 12,
        "When did the storm silt the harbour?": 19,
        "Where did the hemp come from": 7,
    }
    for query, first in cases.items():
        assert read_for(lines, query, room_for(4000)).passages[0].first == first, query
    russian = ["Город стоял на берегу.", "", "Великий шторм 1362 года занёс устье гавани песком."]
    assert read_for(russian, "Когда шторм занёс гавань?", room_for(4000)).passages[0].first == 3
    chinese = ["城市建在北方海岸。", "", "1362年的大风暴使港口淤塞，船只南下。"]
    assert read_for(chinese, "哪一年的风暴使港口淤塞？", room_for(4000)).passages[0].first == 3


def test_phrases_and_proximity_lift_the_block_where_the_words_stand_together():
    scattered = "Green is a colour. " + "Filler words here. " * 6 + "Tea grows on hills."
    together = "Fresh leaves make green tea, " + "which is steamed soon after picking."
    lines = [scattered, "", together]
    assert read_for(lines, "green tea", room_for(4000)).passages[0].first == 3


def test_headings_are_context_for_the_blocks_under_them():
    lines = ["## Caffeine", "", "Black has the most, white the least.", "", "## Colour", "",
             "Black is dark, white is pale."]  # fmt: skip
    assert read_for(lines, "caffeine of black", room_for(4000)).passages[0].first == 3


def test_near_duplicates_are_folded_into_the_better_one():
    text = "The museum opens at nine on weekdays and at ten on Sundays and holidays."
    lines = [text, "", "Something else entirely.", "", text + " Really."]
    chosen = read_for(lines, "when does the museum open on sundays", room_for(4000)).passages
    assert len([p for p in chosen if "museum" in p.text]) == 1


def test_nothing_matches_no_passages_and_the_outline_stays():
    reading = read_for(lines_of(PAGE), "zeppelin airships", room_for(4000))
    assert reading.passages == []
    assert not reading.whole
    assert [h.text for h in reading.outline] == ["Trade", "Tolls", "Decline"]
    assert read_for(lines_of(PAGE), "...", room_for(4000)).passages == []


def test_passages_fit_the_size_best_first_and_a_page_that_fits_whole_has_no_outline():
    lines = lines_of(PAGE)
    for size in (120, 300, 600):
        assert (
            len(render_passages(read_for(lines, "hemp tar harbour", room_for(size)).passages))
            <= size
        )
    small = ["Only one paragraph about tea."]
    reading = read_for(small, "tea", room_for(4000))
    assert reading.whole
    assert reading.outline == []


def test_a_block_larger_than_the_whole_size_gives_its_best_sentences():
    filler = " ".join(f"Sentence {n} says nothing much at all." for n in range(40))
    text = f"{filler} The treaty was signed at Utrecht in 1713. {filler}"
    reading = read_for([text], "where was the treaty signed", room_for(300))
    (passage,) = reading.passages
    assert "signed at Utrecht in 1713" in passage.text
    assert passage.text.startswith("…")
    assert passage.text.endswith("…")
    assert len(render_passages(reading.passages)) <= 300


def test_a_single_sentence_too_long_is_cut_at_its_start():
    text = "tea " + "word " * 400
    (passage,) = read_for([text], "tea", room_for(250)).passages
    assert passage.text.endswith("…")
    assert len(render_passages([passage])) <= 250


def test_a_larger_block_that_does_not_fit_lets_smaller_ones_below_it_in():
    big = "Lighthouse " + "keepers kept the lighthouse lamp lit. " * 30
    lines = ["A lighthouse keeper's log.", "", big, "", "The lighthouse was built in 1850."]
    chosen = read_for(lines, "lighthouse", room_for(200)).passages
    assert chosen
    assert all(p.first != 3 for p in chosen[1:])


def test_labels_say_lines_headings_and_pages():
    one = Block(4, 4, "x", (), None)
    many = Block(4, 9, "x", ("A", "B"), 3)
    assert passages.passage_heading(one) == "[Line 4]"
    assert passages.passage_heading(many) == "[Page 3, lines 4-9: A > B]"


def test_hostile_input_is_bounded():
    # one line of a million characters, thousands of headings, deep nesting of lists
    huge = ["word " * 200_000]
    assert len(render_passages(read_for(huge, "word", room_for(4000)).passages)) <= 4000
    many = [f"# h{n}" for n in range(5000)]
    assert read_for(many, "h1", room_for(4000)).passages == []
    nested = [("  " * n) + "- item tea" for n in range(500)]
    assert read_for(nested, "tea", room_for(4000)).passages
