"""The phrase data as pages write it: Romanian's comma-below letters and their cedilla twins
read alike, and the data writes one form only."""

from __future__ import annotations

from pathlib import Path

from ikigai_web.fetch.reading import wall_phrases
from ikigai_web.fetch.reading.extract import html_to_markdown

DATA = Path(wall_phrases.__file__).with_name("wall_phrases.json")


def test_the_data_writes_romanians_letters_with_the_cedilla_only():
    # normal() reads a page's comma-below letters as the cedilla: a phrase written with the
    # comma would never be found.
    text = DATA.read_text("utf-8")
    assert "\u0219" not in text
    assert "\u021b" not in text


def test_a_page_written_with_the_comma_below_matches_the_data():
    assert wall_phrases.normal("Conecta\u021bi-v\u0103") == wall_phrases.normal(
        "Conecta\u0163i-v\u0103"
    )
    html = (
        "<html><head><title>Documente: conecta\u021bi-v\u0103</title></head><body>"
        "<h1>Conecta\u021bi-v\u0103</h1><div>pentru a continua la Documente</div>"
        "<form action='/signin/identifier'><input type='email' name='identifier'>"
        "<button>\u00cenainte</button></form></body></html>"
    )
    assert html_to_markdown(html, "https://accounts.test/signin").wall == "sign_in"
