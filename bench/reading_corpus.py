"""The reading benchmark's pages and questions: public questions with known answers, over
Wikipedia articles rebuilt as real pages (bench/bench_reading.py reads them).

Sources, both CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/legalcode), their
text by Wikipedia's authors:

- XQuAD (Artetxe, Ruder and Yogatama, 2020; github.com/google-deepmind/xquad): 240 paragraphs
  of 48 SQuAD v1.1 dev articles and their 1,190 questions, professionally translated into
  ar, de, el, en, es, hi, ro, ru, th, tr, vi and zh.
- SQuAD 2.0 dev (Rajpurkar, Jia and Liang, 2018), its first five whole articles (Normans,
  Computational complexity theory, Southern California, Sky (United Kingdom), Victoria
  (Australia)), as the file dev-v1.1.json of github.com/VinACE/san_mrc holds them; the
  answerable questions only.

How the pages are made. An XQuAD article is short (a median 3,700 characters), so its articles
are grouped into pages of four, in the dataset's order within each half, one section per
article (its title as the heading, its five paragraphs under it): about 15,000 characters of
main content a page, 12 pages a language. A SQuAD 2.0 article is a page of its own, whole
(15,000 to 27,000 characters), its paragraphs in order. Every page is HTML with the chrome of a
real page around the article: a site header and navigation, a sidebar of links, a footer.

The split is by article, declared here once: XQuAD's articles at even positions (0, 2, ...,
46) are the dev half, the odd ones the reported half; a SQuAD 2.0 article goes where XQuAD
puts it (all five are XQuAD articles too), so no article, nor its translation, is on both
sides. Tune on dev; report the other half.

The corpus is built from the two repositories' files, never stored in this repository: run
`python bench/reading_corpus.py XQUAD_GIT_DIR SQUAD_GIT_DIR OUT.json.gz` to write it where the
benchmark looks (SHARED/bench/reading/reading.json.gz), or let the benchmark build it in
memory from the git mirrors it is pointed at.
"""

from __future__ import annotations

import gzip
import html
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "es", "de", "el", "ru", "tr", "ar", "vi", "th", "zh", "ro", "hi")
ARTICLES_A_PAGE = 4
LICENCE = "CC BY-SA 4.0 (https://creativecommons.org/licenses/by-sa/4.0/legalcode)"
SOURCES = {
    "xquad": "XQuAD, github.com/google-deepmind/xquad (Artetxe et al. 2020)",
    "squad2": "SQuAD 2.0 dev, first five articles, dev-v1.1.json of github.com/VinACE/san_mrc",
}
_RIGHT_TO_LEFT = {"ar"}


def half_of(position: int) -> str:
    """The declared split: an article's position in XQuAD's order decides its half."""
    return "dev" if position % 2 == 0 else "reported"


def git_json(git_dir: str, name: str) -> Any:
    shown = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"HEAD:{name}"],
        check=True,
        capture_output=True,
    )
    return json.loads(shown.stdout)


def build(xquad_git: str, squad_git: str) -> dict[str, Any]:
    pages: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    order: dict[str, int] = {}
    for lang in LANGUAGES:
        articles = git_json(xquad_git, f"xquad.{lang}.json")["data"]
        order = order or {a["title"]: i for i, a in enumerate(articles)}
        for half in ("dev", "reported"):
            mine = [a for i, a in enumerate(articles) if half_of(i) == half]
            for start in range(0, len(mine), ARTICLES_A_PAGE):
                group = mine[start : start + ARTICLES_A_PAGE]
                page_id = f"xquad-{lang}-{half}-{start // ARTICLES_A_PAGE + 1}"
                add_page(pages, questions, page_id, lang, half, "xquad", group, sections=True)
    for article in git_json(squad_git, "dev-v1.1.json")["data"]:
        half = half_of(order[article["title"]])
        page_id = f"squad2-en-{article['title']}"
        add_page(pages, questions, page_id, "en", half, "squad2", [article], sections=False)
    return {
        "licence": LICENCE,
        "sources": SOURCES,
        "split": "by article: XQuAD's even positions are dev, odd ones reported",
        "pages": pages,
        "questions": questions,
    }


def add_page(  # noqa: PLR0913 - where the page goes and what it is
    pages: list[dict[str, Any]],
    questions: list[dict[str, Any]],
    page_id: str,
    lang: str,
    half: str,
    source: str,
    articles: list[dict[str, Any]],
    *,
    sections: bool,
) -> None:
    paragraphs = [p for a in articles for p in a["paragraphs"]]
    total = sum(len(p["context"]) for p in paragraphs)
    seen = 0
    for paragraph in paragraphs:
        late = seen + len(paragraph["context"]) / 2 > total / 2  # the paragraph's middle
        seen += len(paragraph["context"])
        for qa in paragraph["qas"]:
            answers = list(dict.fromkeys(a["text"] for a in qa["answers"]))
            if qa.get("is_impossible") or not answers:
                continue
            questions.append({"page": page_id, "question": qa["question"], "answers": answers,
                              "late": late})  # fmt: skip
    title = " · ".join(a["title"].replace("_", " ") for a in articles)
    pages.append({"id": page_id, "lang": lang, "half": half, "source": source,
                  "url": f"https://wiki.reading.test/{page_id}",
                  "html": page_html(title, lang, articles, sections=sections)})  # fmt: skip


def page_html(title: str, lang: str, articles: list[dict[str, Any]], *, sections: bool) -> str:
    """An article as a wiki would serve it: chrome around a main column of sections."""
    direction = ' dir="rtl"' if lang in _RIGHT_TO_LEFT else ""
    nav = "".join(f'<li><a href="/wiki/Portal_{n}">Portal {n}</a></li>' for n in range(1, 9))
    body = []
    for article in articles:
        name = html.escape(article["title"].replace("_", " "))
        paras = "".join(f"<p>{html.escape(p['context'])}</p>\n" for p in article["paragraphs"])
        body.append(f"<section><h2>{name}</h2>\n{paras}</section>" if sections else paras)
    related = "".join(
        f'<li><a href="/wiki/{html.escape(a["title"])}">{html.escape(a["title"])}</a></li>'
        for a in articles
    )
    return (
        f'<!DOCTYPE html><html lang="{lang}"{direction}><head><meta charset="utf-8">'
        f"<title>{html.escape(title)} - Reading Wiki</title></head><body>"
        '<header><a href="/">Reading Wiki</a><form action="/search"><input name="q"></form>'
        f"<nav><ul>{nav}</ul></nav></header>"
        f'<div class="layout"><main><article><h1>{html.escape(title)}</h1>\n'
        f"{''.join(body)}</article></main>"
        f'<aside class="sidebar"><h3>Related</h3><ul>{related}</ul></aside></div>'
        "<footer><p>Text is available under the Creative Commons Attribution-ShareAlike "
        'License.</p><ul><li><a href="/privacy">Privacy</a></li><li><a href="/about">About'
        "</a></li></ul></footer></body></html>"
    )


def main() -> None:
    xquad_git, squad_git, out = sys.argv[1:4]
    corpus = build(xquad_git, squad_git)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(corpus, ensure_ascii=False, separators=(",", ":")).encode()
    Path(out).write_bytes(gzip.compress(data, 9, mtime=0))
    print(f"{out}: {len(corpus['pages'])} pages, {len(corpus['questions'])} questions")


if __name__ == "__main__":
    main()
