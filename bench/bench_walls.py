"""Pages that are not the content: how many wall pages web-fetch names rightly, how many real
pages it wrongly calls a wall, and what the soft-404 probe costs.

1. Wall corpora, each a folder in the layout of bench/walls/<half>/ (`--corpus DIR`, any
   number; by default every folder of bench/walls/):
       pages/<kind>/<name>.html   the body as served (bytes)
       sites/<site>-missing.html  the site's answer to a path that does not exist
       manifest.json              {"pages": {"<kind>/<name>.html": {"kind", "lang", "status",
                                   "headers", "site", "path", ...}}, "sites": {"<site>":
                                   {"host", "missing": {"status", "headers", "body"}}}}
   Every site is served on 127.0.0.1 by a server of its own (its own origin): each page at
   its path with its status, headers and bytes, robots.txt as 404, any other path as the
   site's `missing` answer. Each page is fetched through web-fetch's whole pipeline (its
   entry function, with the loopback allowed, a fresh cache and state and render "never").
   Named rightly: a wall kind's page is an HTTP_ERROR with that `wall` (a paywall may be a
   success with `wall: "paywall"` and its warning); a `js_shell` page a success with a
   NEEDS_JAVASCRIPT warning; a `none` page (a near miss) a success with no `wall`. Printed:
   named rightly by kind, by language and in all, for each corpus; the near misses flagged;
   each miss, with what it got. Targets: >= 95 % named rightly, 0 near misses flagged.
2. The false-alarm rate on every distinct dev page of the extraction benchmarks (the folder
   SHARED/bench/extraction, SHARED=../shared by default; skipped when absent), each page's
   HTML through the extractor (no network, so no probe): a page given any `wall` counts, a
   paywalled article kept with its warning included. Target: <= 0.2 %.
3. The probe: on a loopback site whose missing path answers slowly, a page that is not
   suspect costs no request beyond robots.txt and the page, and no time; suspect pages cost
   at most one extra request per host, however many are fetched (the state remembers it).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urlsplit

from verdict import ROOT, check, exit_code

if TYPE_CHECKING:
    from collections.abc import Iterator

sys.path.insert(0, str(ROOT))

WALL_CORPORA = ROOT / "bench" / "walls"
SETS = ("dev", "broad-dev", "wcxb-dev", "wcxb-dev-full")
TARGET_RECOGNISED = 95.0
TARGET_FLAGGED = 0.2
NEAR_MISS = "none"
SHELL = "js_shell"
# Headers the server writes itself, or that would describe bytes it does not send.
_OWN_HEADERS = frozenset({"content-length", "transfer-encoding", "connection", "date"})


class Served(NamedTuple):
    status: int
    headers: list[tuple[str, str]]
    body: bytes


class Page(NamedTuple):
    name: str  # <kind>/<name>.html
    kind: str
    lang: str
    site: str
    path: str


class Site:
    """One site's pages by path, and its answer to any other path."""

    def __init__(self, missing: Served) -> None:
        self.pages: dict[str, Served] = {}
        self.missing = missing
        self.seen: list[str] = []
        self.delay = 0.0  # seconds before the missing answer (the probe benchmark)

    def answer(self, target: str) -> Served:
        self.seen.append(target)
        parts = urlsplit(target)
        if parts.path == "/robots.txt":
            return Served(404, [("Content-Type", "text/plain")], b"not found")
        # A client sends a path's non-ASCII letters percent-encoded; the manifest writes them.
        asked = (target, parts.path, unquote(target), unquote(parts.path))
        found = next((self.pages[key] for key in asked if key in self.pages), None)
        if found is None:
            time.sleep(self.delay)
            return self.missing
        return found


def _served(status: Any, headers: Any, body: bytes) -> Served:
    pairs = []
    for name, value in (headers or {}).items():
        low = name.lower()
        if low in _OWN_HEADERS:
            continue
        if low == "content-encoding" and not body.startswith(b"\x1f\x8b"):
            continue  # the corpus keeps bodies decoded
        pairs.append((name, str(value)))
    return Served(int(status), pairs, body)


def without_dots(target: str) -> str:
    """A request target as a client sends it: the dot segments of its path removed (RFC 3986,
    5.2.4), so that a page whose manifest path has them is found where the client asks."""
    path, mark, query = target.partition("?")
    kept: list[str] = []
    for segment in path.split("/")[1:]:
        if segment == "..":
            kept = kept[:-1]
        elif segment != ".":
            kept.append(segment)
    return "/" + "/".join(kept) + mark + query


def load(corpus: Path) -> tuple[list[Page], dict[str, Site]]:
    manifest = json.loads((corpus / "manifest.json").read_text(encoding="utf-8"))
    sites = {}
    for name, site in manifest["sites"].items():
        missing = site["missing"]
        body = (corpus / missing["body"]).read_bytes()
        sites[name] = Site(_served(missing["status"], missing.get("headers"), body))
    pages = []
    for name, entry in sorted(manifest["pages"].items()):
        site = sites[entry["site"]]
        # "<kind>/<name>.html" under pages/, as the layout says; a writer may have put the
        # folder in the name too
        body = (corpus / "pages" / name.removeprefix("pages/")).read_bytes()
        served = _served(entry["status"], entry.get("headers"), body)
        # A fragment never reaches the server: the page is served at its path without it.
        sent = entry["path"].partition("#")[0] or "/"
        site.pages[sent] = site.pages[without_dots(sent)] = served
        path = entry["path"]
        pages.append(Page(name, entry["kind"], entry.get("lang") or "und", entry["site"], path))
    return pages, sites


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: object, client_address: object) -> None:
        """A client that hangs up early (web-fetch stops reading at its limits) is no
        error of the corpus: it is passed over; any other is printed as before."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            served = site.answer(self.path)
            self.send_response(served.status)
            for name, value in served.headers:
                # A value past Latin-1 (a realm in Ukrainian) goes as its UTF-8 bytes, as
                # servers send it; http.server would refuse to encode it.
                self.send_header(name, value.encode().decode("latin-1"))
            self.send_header("Content-Length", str(len(served.body)))
            self.end_headers()
            self.wfile.write(served.body)

        def log_message(self, *_: object) -> None:
            pass

    return Handler


@contextmanager
def serving(sites: dict[str, Site]) -> Iterator[dict[str, str]]:
    """Each site on a loopback server of its own: its base URL by name."""
    servers = {name: _Server(("127.0.0.1", 0), _handler(site)) for name, site in sites.items()}
    for server in servers.values():
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield {
            name: f"http://127.0.0.1:{server.server_address[1]}" for name, server in servers.items()
        }
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()


def isolated() -> None:
    """Settings for fetching loopback pages: the loopback allowed, a fresh cache and state."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-walls-"))
    os.environ.update(
        {
            "IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1",
            "IKIGAI_WEB_FETCH_ALLOW_HOSTS": "127.0.0.1",
            "IKIGAI_WEB_FETCH_RENDER": "never",
            "XDG_CACHE_HOME": str(scratch / "cache"),
            "XDG_STATE_HOME": str(scratch / "state"),
        }
    )
    os.environ.pop("IKIGAI_WEB_REDIS_URL", None)


def fetched(url: str) -> dict[str, Any]:
    from ikigai_web.common.runner import answer
    from ikigai_web.tools import web_fetch

    result, _ = answer(web_fetch.execute, {"url": url, "render": "never"}, web_fetch.SCHEMA)
    return result


def named(kind: str, result: dict[str, Any]) -> tuple[bool, str]:
    """Whether the answer names the page rightly, and what it got, in a word or two."""
    codes = [w["code"] for w in result.get("warnings", [])]
    if result.get("success"):
        got = f"content, wall {result['wall']}" if result.get("wall") else "content"
        got += " +NEEDS_JAVASCRIPT" if "NEEDS_JAVASCRIPT" in codes else ""
    else:
        got = f"{result['error_code']} wall {result.get('wall', '-')}"
    if kind == NEAR_MISS:
        return bool(result.get("success")) and not result.get("wall"), got
    if kind == SHELL:
        ok = bool(result.get("success")) and "NEEDS_JAVASCRIPT" in codes
        return ok and not result.get("wall"), got
    if result.get("success"):
        return kind == "paywall" and result.get("wall") == "paywall" and "PAYWALL" in codes, got
    return result.get("wall") == kind, got


def corpus_report(corpus: Path) -> None:
    pages, sites = load(corpus)
    right: dict[str, Counter[str]] = defaultdict(Counter)
    total: dict[str, Counter[str]] = defaultdict(Counter)
    missed = []
    with serving(sites) as bases:
        for page in pages:
            ok, got = named(page.kind, fetched(bases[page.site] + page.path))
            for table, key in (("kind", page.kind), ("lang", page.lang)):
                total[table][key] += 1
                right[table][key] += ok
            if page.kind != NEAR_MISS:
                total["all"]["walls"] += 1
                right["all"]["walls"] += ok
            if not ok:
                missed.append(f"{page.name} [{page.lang}, {page.kind}] -> {got}")
    report(corpus.name, right, total, missed)


def report(
    half: str, right: dict[str, Counter[str]], total: dict[str, Counter[str]], missed: list[str]
) -> None:
    kinds = "  ".join(f"{k} {right['kind'][k]}/{n}" for k, n in sorted(total["kind"].items()))
    langs = "  ".join(f"{k} {right['lang'][k]}/{n}" for k, n in sorted(total["lang"].items()))
    print(f"walls, corpus {half}: by kind: {kinds}")
    print(f"  by language: {langs}")
    walls, good = total["all"]["walls"], right["all"]["walls"]
    rate = 100 * good / max(walls, 1)
    verdict = check(f"walls {half}", rate, TARGET_RECOGNISED, "%", most=False)
    print(f"  named rightly: {good}/{walls} = {verdict}")
    near = total["kind"][NEAR_MISS]
    flagged = near - right["kind"][NEAR_MISS]
    print(f"  near misses flagged: {flagged}/{near} {check(f'near misses {half}', flagged, 0, '')}")
    for line in missed:
        print(f"  miss: {line}")


def dev_pages(data: Path) -> list[tuple[str, Path, str]]:
    """(set/id, gzipped page, URL) for every distinct page, as test_extract_corpus.py."""
    found: dict[str, tuple[str, Path, str]] = {}
    for name in SETS:
        truth_file = data / name / "ground-truth.json"
        if not truth_file.is_file():
            continue
        for page_id, entry in sorted(json.loads(truth_file.read_text(encoding="utf-8")).items()):
            path = data / name / "html" / f"{page_id}.html.gz"
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            url = entry.get("url") or f"http://page.test/{page_id}"
            found.setdefault(digest, (f"{name}/{page_id}", path, url))
    return list(found.values())


# The wall checks the extractor calls on every page: their time is the detector's cost.
_TIMED = ("clues", "judge", "maybe_not_found", "asks_for_javascript")
COST_EVERY = 5  # the cost is measured on every 5th dev page (314 of the 1,567)


@contextmanager
def timed_walls() -> Iterator[list[float]]:
    """The seconds the wall checks take, summed a call of the extractor while inside."""
    from ikigai_web.fetch.reading import walls

    spent = [0.0]
    saved = {name: getattr(walls, name) for name in _TIMED}

    def timing(function: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return function(*args, **kwargs)
            finally:
                spent[0] += time.process_time() - started

        return run

    for name, function in saved.items():
        setattr(walls, name, timing(function))
    try:
        yield spent
    finally:
        for name, function in saved.items():
            setattr(walls, name, function)


def cost(pages: list[tuple[str, Path, str]]) -> None:
    """CPU time of the wall checks a page, on every COST_EVERY-th dev page (each page
    converted once before, so that nothing is measured cold)."""
    from ikigai_web.fetch.reading.extract import html_to_markdown

    sample = pages[::COST_EVERY]
    texts = [(gzip.decompress(p.read_bytes()).decode("utf-8", "replace"), u) for _, p, u in sample]
    times = []
    for text, url in texts:
        html_to_markdown(text, url)
        with timed_walls() as spent:
            html_to_markdown(text, url)
        times.append(spent[0] * 1000)
    times.sort()
    mean = sum(times) / len(times)
    p95 = times[int(0.95 * (len(times) - 1))]
    print(
        f"walls, cost on {len(times)} dev pages (every {COST_EVERY}th): wall checks "
        f"{mean:.1f} ms a page on average (median {times[len(times) // 2]:.1f}, p95 {p95:.1f})"
    )


def dev(data: Path) -> None:
    from ikigai_web.fetch.network import soft404
    from ikigai_web.fetch.reading.extract import html_to_markdown

    pages = dev_pages(data)
    if not pages:
        print(f"walls, dev pages: skipped, no benchmark data at {data} (set SHARED)")
        return
    flagged = []
    suspects = 0  # real pages the soft-404 probe would ask about: its cost on real pages
    per_set: Counter[str] = Counter()
    for name, path, url in pages:
        document = html_to_markdown(
            gzip.decompress(path.read_bytes()).decode("utf-8", "replace"), url
        )
        per_set[name.split("/")[0]] += 1
        suspects += soft404.suspect(url, document)
        if document.wall is not None:
            flagged.append(f"{name} -> {document.wall}")
    rate = 100 * len(flagged) / len(pages)
    sets = "  ".join(
        f"{s} {sum(f.startswith(s + '/') for f in flagged)}/{per_set[s]}" for s in per_set
    )
    print(f"walls, dev pages flagged: {len(flagged)}/{len(pages)} ({sets})")
    print(f"  false alarms: {check('walls dev flagged', rate, TARGET_FLAGGED, '%')}")
    for line in flagged:
        print(f"  flagged: {line}")
    print(f"  pages the soft-404 probe would ask about (one request per host an hour): {suspects}")
    cost(pages)


_ARTICLE = (
    "<p>"
    + "The harbour plan was approved after two years of debate over the old warehouses. " * 40
    + "</p>"
)
# Short, and giving no reason to think it may be its site's not-found page.
_SHORT = (
    "<p>Opening hours: Monday to Friday, nine to five. Closed on public holidays.</p>"
    "<p>The shop stands on the corner of Harbour Street and Mill Lane, beside the old ferry "
    "terminal. From the station, walk down the hill past the market hall and turn left at the "
    "fountain; the entrance is under the green awning. Bicycles can be left in the yard behind "
    "the shop, and the car park across the road is free after six in the evening.</p>"
)
# The site's answer to any missing path: it never says "not found", and offers a search box
# of its own (a reason for the probe).
_MISSING = (
    "<h2>Hmm.</h2><p>We looked everywhere for this one, without luck. Try a search:</p>"
    '<form action="/find"><input type="search" name="q"><button>Go</button></form>'
)


def _html(title: str, body: str) -> bytes:
    head = f"<!doctype html><html><head><title>{title}</title></head>"
    return f"{head}<body><main>{body}</main></body></html>".encode()


PROBE_DELAY = 2.0  # seconds the probe site takes to answer a missing path: a probe shows


def probe() -> None:
    """Requests and time a page costs with the probe: none for a page that is not suspect,
    one per host for suspect pages however many."""
    ok = [("Content-Type", "text/html; charset=utf-8")]
    site = Site(Served(200, ok, _html("Example", _MISSING)))  # a soft-404 site
    site.delay = PROBE_DELAY
    site.pages = {
        "/article": Served(200, ok, _html("Harbour plan", _ARTICLE)),
        "/hours": Served(200, ok, _html("Hours", _SHORT)),
        **{f"/gone/{n}": Served(200, ok, _html("Example", _MISSING)) for n in range(5)},
    }
    with serving({"probe": site}) as bases:
        base = bases["probe"]
        for path, what in (("/article", "a long page"), ("/hours", "a short ordinary page")):
            site.seen.clear()
            started = time.perf_counter()
            page = fetched(f"{base}{path}")
            spent = time.perf_counter() - started
            extra = len(site.seen) - 2  # robots.txt and the page
            print(
                f"walls, probe: {what}, not suspect: {extra} extra requests, "
                f"{spent * 1000:.0f} ms (a probe would wait {PROBE_DELAY * 1000:.0f} ms)"
            )
            check(f"probe, requests for {what}", extra, 0, "")
            check(f"probe, time for {what}", spent, PROBE_DELAY, " s")
            assert page.get("success"), page
        site.seen.clear()
        results = [fetched(f"{base}/gone/{n}") for n in range(5)]
        probes = sum(1 for path in site.seen if path not in site.pages and path != "/robots.txt")
        found = sum(r.get("wall") == "not_found" for r in results)
        from ikigai_web.fetch.network.soft404 import REMEMBER

        print(
            f"walls, probe: 5 suspect pages on one host: {probes} probe request(s), its "
            f"answer kept {REMEMBER:.0f} s in the shared state; soft-404s named {found}/5"
        )
        check("probe, requests per host", probes, 1, "")
        check("probe, soft-404s named", found, 5, "", most=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--corpus", action="append", type=Path, help="a wall corpus folder (repeatable)"
    )
    parser.add_argument("--no-dev", action="store_true", help="skip the dev pages' false alarms")
    parser.add_argument("--no-probe", action="store_true", help="skip the probe's cost")
    args = parser.parse_args()
    corpora = args.corpus or sorted(
        p for p in WALL_CORPORA.iterdir() if (p / "manifest.json").is_file()
    )
    for corpus in corpora:
        # A fresh cache and state a corpus: a later corpus's site may be served on a port an
        # earlier one used, and must not get that site's cached pages or remembered answer.
        isolated()
        corpus_report(corpus)
    isolated()
    if not args.no_probe:
        probe()
    if not args.no_dev:
        shared = Path(os.environ.get("SHARED") or ROOT.parent / "shared")
        dev((shared if shared.is_absolute() else ROOT / shared) / "bench" / "extraction")


if __name__ == "__main__":
    main()
    sys.exit(exit_code())
