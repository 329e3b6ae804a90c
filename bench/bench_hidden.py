"""Hidden text: whether web-fetch leaves out what a person never sees, keeps what a person
reaches with a click or sees though it is styled unusually, and warns only where what it left
out could instruct the assistant.

Corpora, each a folder in the layout of bench/hidden/<half>/ (`--corpus DIR`, any number; by
default every folder of bench/hidden/):
    pages/<name>.html   a whole page, UTF-8
    manifest.json       {"pages": {"<name>.html": {"case", "means", "lang", "hidden": [...],
                         "keep": [...], "warn": bool, "model", "disputable"?}}}
`case` is "trick" (text hidden to instruct an assistant: left out, with HIDDEN_TEXT), "harmless"
(hidden noise: left out, no warning), "reveal" (a click away: kept, no warning) or "visible"
(styled unusually but seen: kept, no warning). Every page lists ordinary sentences of its
content in `keep` too. Each page goes through web-fetch's reading of HTML (html_to_markdown,
no network) and its phrases are looked for in the markdown, markup and case aside.

Printed per corpus: hidden phrases left out (target: all), kept phrases kept per case
(target: all), pages whose warning is right (HIDDEN_TEXT on a trick, none elsewhere), by case,
means and language; each miss. Disputable pages are counted apart.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from verdict import ROOT, check, exit_code

sys.path.insert(0, str(ROOT))

CORPORA = ROOT / "bench" / "hidden"
_MARKUP = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|[*_`#>|]+")
# Characters that show nothing, which web-fetch takes out of every page's text.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


_STYLES = re.compile(
    r"<style\b.*?</style\s*>|\sstyle=(\"[^\"]*\"|'[^']*')|\shidden(?=[\s>])",
    re.IGNORECASE | re.DOTALL,
)


class Outcome(NamedTuple):
    name: str
    case: str
    lang: str
    disputable: bool
    hidden: tuple[int, int]  # left out, of
    kept: tuple[int, int]  # kept, of
    warned: bool
    should_warn: bool
    misses: tuple[str, ...]
    extraction: int  # kept phrases lost without any style too: the extractor's, not hiding's


def normal(text: str) -> str:
    """Text as compared: links' words kept, markdown's marks and case dropped, spaces one."""
    return " ".join(_MARKUP.sub(r" \1 ", text.translate(_INVISIBLE)).casefold().split())


def judge(
    name: str, meta: dict[str, Any], markdown: str, warnings: list[str], bare: str
) -> Outcome:
    """A page's outcome; `bare` is its markdown read with no styles nor `hidden` at all."""
    text = normal(markdown)
    hidden = [p for p in meta.get("hidden", []) if normal(p) in text]
    dropped = [p for p in meta.get("keep", []) if normal(p) not in text]
    warned = "HIDDEN_TEXT" in warnings
    misses = [f"shown: {p[:70]}" for p in hidden] + [f"lost: {p[:70]}" for p in dropped]
    if warned != bool(meta.get("warn")):
        misses.append("warned" if warned else "no warning")
    return Outcome(
        name,
        meta["case"],
        meta.get("lang", "und"),
        bool(meta.get("disputable")),
        (len(meta.get("hidden", [])) - len(hidden), len(meta.get("hidden", []))),
        (len(meta.get("keep", [])) - len(dropped), len(meta.get("keep", []))),
        warned,
        bool(meta.get("warn")),
        tuple(misses),
        sum(normal(p) not in normal(bare) for p in dropped),
    )


def run(corpus: Path) -> list[Outcome]:
    from ikigai_web.fetch.reading.extract import html_to_markdown

    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    outcomes = []
    for name, meta in sorted(manifest["pages"].items()):
        html = (corpus / "pages" / name).read_text(encoding="utf-8")
        doc = html_to_markdown(html, f"https://{Path(name).stem}.example/")
        codes = [warning["code"] for warning in doc.warnings]
        bare = html_to_markdown(_STYLES.sub("", html), f"https://{Path(name).stem}.example/")
        outcomes.append(judge(name, meta, doc.markdown, codes, bare.markdown))
    return outcomes


def report(corpus: Path, outcomes: list[Outcome]) -> None:
    clear = [o for o in outcomes if not o.disputable]
    name = corpus.name
    print(f"hidden text, corpus {name}: {len(outcomes)} pages "
          f"({len(outcomes) - len(clear)} disputable, counted apart)")  # fmt: skip
    left, of = (sum(o.hidden[i] for o in clear) for i in (0, 1))
    share = 100 * left / max(of, 1)
    print(f"  hidden phrases left out: {left}/{of} = "
          f"{check(f'{name} left out', share, 100.0, ' %', most=False)}")  # fmt: skip
    for case in ("trick", "harmless", "reveal", "visible"):
        some = [o for o in clear if o.case == case]
        kept, total = (sum(o.kept[i] for o in some) for i in (0, 1))
        right = sum(o.warned == o.should_warn for o in some)
        print(f"  {case:8s} pages {len(some):3d}: kept {kept}/{total} phrases; "
              f"warning right on {right}/{len(some)}")  # fmt: skip
    kept, total = (sum(o.kept[i] for o in clear) for i in (0, 1))
    lost = sum(o.extraction for o in clear)
    print(f"  phrases kept, all cases: {kept}/{total}; the extractor loses {lost} of them on "
          "the page without any style or `hidden` too")  # fmt: skip
    share = 100 * kept / max(total - lost, 1)
    print(f"  phrases kept, the extractor's losses aside: {kept}/{total - lost} = "
          f"{check(f'{name} kept', share, 100.0, ' %', most=False)}")  # fmt: skip
    tricks = [o for o in clear if o.should_warn]
    quiet = [o for o in clear if not o.should_warn]
    print(f"  HIDDEN_TEXT on tricks: {sum(o.warned for o in tricks)}/{len(tricks)}; on the "
          f"rest: {sum(o.warned for o in quiet)}/{len(quiet)}")  # fmt: skip
    perfect = Counter(o.lang for o in clear if not o.misses)
    pages = Counter(o.lang for o in clear)
    languages = "  ".join(f"{k} {perfect[k]}/{v}" for k, v in sorted(pages.items()))
    print(f"  pages all right by language: {languages}")
    for o in outcomes:
        for miss in o.misses:
            where = " (disputable)" if o.disputable else ""
            print(f"  miss{where}: {o.name} [{o.case}, {o.lang}] {miss}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", action="append", type=Path, help="a corpus (repeatable)")
    args = parser.parse_args()
    found = sorted(p for p in CORPORA.iterdir() if (p / "manifest.json").exists())
    corpora = args.corpus or found
    for corpus in corpora:
        report(corpus, run(corpus))
    code: int = exit_code()
    return code


if __name__ == "__main__":
    sys.exit(main())
