"""Soft-404s by comparison (ikigai_web/fetch/network/soft404.py): a short page sent with 200 that is
its site's own answer to a path that does not exist is `not_found`, whatever its wording; the
site is asked at most once an hour (the shared state remembers), inside the deadline, under the
address guard and robots.txt; a page that is not suspect costs no request; a probe that fails
decides nothing."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

import pytest

from ikigai_web.common.runner import answer
from ikigai_web.fetch.network import soft404
from ikigai_web.tools import web_fetch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

pytestmark = pytest.mark.loopback
Answer = tuple[int, dict[str, str], str]
ARTICLE = "The harbour plan was approved after two years of debate over the old warehouses. " * 30


def html(title: str, text: str) -> str:
    return f"<html><head><title>{title}</title></head><body><main>{text}</main></body></html>"


def gone(path: str) -> str:
    """The site's not-found page: the same for every missing path but for the path itself,
    and it never says "not found"."""
    return html("Trail Gear", f"<h1>Hmm.</h1><p>We looked for {path} but came back empty-handed. "
                "Try the search box, or start again from our home page.</p>")  # fmt: skip


class Site:
    """A loopback site: `pages` by path; any other path answered by `missing`."""

    def __init__(self, missing: Callable[[str], Answer]) -> None:
        self.pages: dict[str, Answer] = {}
        self.missing = missing
        self.seen: list[str] = []
        self.url = ""

    def answer(self, path: str) -> Answer:
        self.seen.append(path)
        return self.pages.get(path) or self.missing(path)

    @property
    def probes(self) -> list[str]:
        return [p for p in self.seen if p not in self.pages and p != "/robots.txt"]


def _handler(site: Site) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            status, headers, body = site.answer(self.path)
            data = body.encode()
            self.send_response(status)
            for name, value in ({"Content-Type": "text/html; charset=utf-8"} | headers).items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *_: object) -> None:
            pass

    return Handler


@pytest.fixture
def serve() -> Iterator[Callable[[Callable[[str], Answer]], Site]]:
    servers = []

    def start(missing: Callable[[str], Answer]) -> Site:
        site = Site(missing)
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
        servers.append(server)
        site.url = f"http://127.0.0.1:{server.server_address[1]}"
        return site

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "127.0.0.1")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")


def fetch(url: str) -> dict[str, Any]:
    result, _ = answer(web_fetch.execute, {"url": url, "render": "never"}, web_fetch.SCHEMA)
    return result


def soft(path: str) -> Answer:
    return 200, {}, gone(path)


def test_a_short_page_like_the_sites_missing_answer_is_not_found(serve):
    site = serve(soft)
    site.pages["/trails/old-route"] = soft("/trails/old-route")
    out = fetch(site.url + "/trails/old-route")
    assert (out["success"], out.get("wall")) == (False, "not_found"), out
    assert "does not exist" in out["error"]
    assert len(site.probes) == 1


def placeholder(way_home: str = "") -> str:
    """A host's placeholder on every path of a site not yet built (kept out of search
    engines), in words the phrase data does not hold; a link to its host, none into the site
    but `way_home`."""
    text = (
        "<h1>Juma na Wenzake</h1><p>Juma ni fundi wa magari mjini Mombasa.</p>"
        f"<a href='https://mwenyeji.example/'>Mwenyeji wetu</a>{way_home}"
    )
    head = "<title>Juma na Wenzake</title><meta name='robots' content='noindex'>"
    return f"<html><head>{head}</head><body>{text}</body></html>"


@pytest.mark.parametrize(
    ("way_home", "wall"), [("", "parked"), ("<a href='/'>Ukurasa wa mwanzo</a>", "not_found")]
)
def test_a_sites_answer_to_every_path_linking_nowhere_into_it_is_parked(serve, way_home, wall):
    """The site's answer to any path, which offers no way into the site, not even home, and
    does not repeat the path asked for: the site is that one page, a placeholder. With a
    way home, it is the site's not-found page (the likeness test above: one that repeats
    the path, with no link at all)."""
    site = serve(lambda _path: (200, {}, placeholder(way_home)))
    out = fetch(site.url + "/huduma/bei")
    assert (out["success"], out.get("wall")) == (False, wall), out


def test_a_sites_answer_offering_only_a_search_box_of_its_own_is_not_found(serve):
    """A search box of the page's own is a way into its site: the answer to every path
    with one and no link is the site's not-found page, not a placeholder."""
    search = "<form action='/tafuta'><input type='search' name='q'><button>Tafuta</button></form>"
    body = f"<h2>Hmm.</h2><p>Tumetafuta kila mahali bila mafanikio.</p>{search}"
    site = serve(lambda _path: (200, {}, html("Duka", body)))
    site.pages["/bidhaa/zamani"] = (200, {}, html("Duka", body))
    out = fetch(site.url + "/bidhaa/zamani")
    assert (out["success"], out.get("wall")) == (False, "not_found"), out


def test_a_check_its_header_names_stays_a_check_on_every_path(serve):
    """A proof-of-work gate answers every path with its check (200, its header saying so):
    the page is the check, not the site's not-found page, and no probe is sent for it."""
    head = "<title>Juma na Wenzake</title><meta name='robots' content='noindex'>"
    gate = f"<html><head>{head}</head><body><h1>Subiri kidogo</h1></body></html>"
    site = serve(lambda _path: (200, {"X-Anubis-Status": "CHALLENGE"}, gate))
    site.pages["/huduma/bei"] = site.missing("/huduma/bei")
    out = fetch(site.url + "/huduma/bei")
    assert (out["success"], out.get("wall")) == (False, "bot_check"), out
    assert site.probes == []


def test_the_sites_answer_is_remembered_so_a_host_is_asked_once_an_hour(serve, monkeypatch):
    site = serve(soft)
    for path in ("/gear/a", "/gear/b", "/gear/c"):
        site.pages[path] = soft(path)
    assert [fetch(site.url + p).get("wall") for p in ("/gear/a", "/gear/b", "/gear/c")] == [
        "not_found"
    ] * 3
    assert len(site.probes) == 1
    import time

    from ikigai_web.common import state

    later = time.time() + soft404.REMEMBER + 1
    monkeypatch.setattr(state, "_now", lambda: later)
    assert fetch(site.url + "/gear/a")["wall"] == "not_found"
    assert len(site.probes) == 2  # an hour on, asked again


def test_a_page_that_is_not_suspect_costs_no_request(serve):
    site = serve(soft)
    site.pages["/story"] = (200, {}, html("Harbour plan", f"<p>{ARTICLE}</p>"))
    site.pages["/"] = soft("/")  # a site's root is never its not-found page
    assert fetch(site.url + "/story")["success"] is True
    assert fetch(site.url + "/")["success"] is True
    assert site.seen == ["/story", "/"]


HOURS = "<h1>Opening hours</h1><p>Monday to Friday, nine to five. Closed on holidays.</p>"


def test_a_short_ordinary_page_costs_no_request(serve):
    """Short, but nothing about it says it may be a not-found page: no probe."""
    site = serve(soft)
    site.pages["/hours"] = (200, {}, html("Opening hours | Trail Gear", HOURS))
    out = fetch(site.url + "/hours")
    assert out["success"] is True, out
    assert site.seen == ["/hours"]


def test_a_soft_404_is_known_when_its_paths_words_are_the_sites_own(serve):
    """The words of the page's path are left out of the comparison (a not-found page may
    repeat them), unless they are the site's own: a section named on every page."""
    chrome = "<nav><a href='/gear'>Gear</a> <a href='/gear/new'>New gear</a></nav>"
    notice = "<h1>Hmm.</h1><p>This gear trail went cold. Gear up and try our gear guide.</p>"
    head = '<meta name="robots" content="noindex">'
    body = f"<html><head><title>Gear</title>{head}</head><body>{chrome}{notice}</body></html>"
    site = serve(lambda _path: (200, {}, body))
    site.pages["/gear/gear"] = (200, {}, body)
    assert fetch(site.url + "/gear/gear").get("wall") == "not_found"


def test_a_short_real_page_of_a_soft_404_site_stays_content(serve):
    """A short page whose title is the site's name alone is compared (a reason to ask), and
    stays content: it is not the site's answer to a missing path."""
    site = serve(soft)
    home = '<a href="/">Trail Gear</a>'
    site.pages["/hours"] = (200, {}, html("Trail Gear", home + HOURS))
    out = fetch(site.url + "/hours")
    assert out["success"] is True, out
    assert "wall" not in out
    assert len(site.probes) == 1


def test_a_site_that_answers_404_decides_nothing(serve):
    site = serve(lambda path: (404, {}, gone(path)))
    site.pages["/gear/x"] = soft("/gear/x")
    out = fetch(site.url + "/gear/x")
    assert out["success"] is True  # what its own words say is all that is left
    assert len(site.probes) == 1


def test_a_probe_that_fails_decides_nothing_and_is_remembered(serve, monkeypatch):
    monkeypatch.setattr(soft404, "PROBE_WAIT", 0.3)

    def slow(path: str) -> Answer:
        threading.Event().wait(1.5)
        return soft(path)

    site = serve(slow)
    site.pages["/gear/x"] = soft("/gear/x")
    site.pages["/gear/y"] = soft("/gear/y")
    assert fetch(site.url + "/gear/x")["success"] is True
    assert fetch(site.url + "/gear/y")["success"] is True
    assert len(site.probes) == 1


def test_without_time_left_no_probe_is_made(serve, monkeypatch):
    monkeypatch.setattr(soft404, "KEEP", 10**6)
    site = serve(soft)
    site.pages["/gear/x"] = soft("/gear/x")
    assert fetch(site.url + "/gear/x")["success"] is True
    assert site.probes == []


def test_robots_txt_holds_for_the_probe(serve, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "1")
    rules = "User-agent: *\nAllow: /gear/x\nDisallow: /\n"
    site = serve(soft)
    site.pages["/robots.txt"] = (200, {"Content-Type": "text/plain"}, rules)
    site.pages["/gear/x"] = soft("/gear/x")
    assert fetch(site.url + "/gear/x")["success"] is True
    assert site.seen == ["/robots.txt", "/gear/x"]  # the probe's path is disallowed: not asked


def test_the_guard_holds_for_the_probes_redirects(serve):
    site = serve(lambda _: (302, {"Location": "http://127.0.0.2/elsewhere"}, ""))
    site.pages["/gear/x"] = soft("/gear/x")
    assert fetch(site.url + "/gear/x")["success"] is True  # 127.0.0.2 is private: not followed
    assert len(site.probes) == 1


def test_a_redirected_probe_is_followed_on_the_site(serve):
    site = serve(lambda _: (302, {"Location": "/lost"}, ""))
    site.pages["/lost"] = soft("/lost")
    site.pages["/gear/x"] = soft("/gear/x")
    assert fetch(site.url + "/gear/x")["wall"] == "not_found"
    assert site.seen[-1] == "/lost"


@pytest.mark.parametrize(
    "stored",
    [
        "junk",
        {"status": "200", "sketch": []},
        {"status": True, "sketch": []},
        {"status": 200, "sketch": "abc"},
        {"status": 200, "sketch": [-1]},
        {"status": 200, "sketch": [True]},
        {"status": 200, "sketch": list(range(soft404.SKETCH + 1))},
        {"status": 10**6, "sketch": []},
    ],
)
def test_what_the_shared_state_holds_is_checked_like_any_input(serve, stored):
    from ikigai_web.common.state import store
    from ikigai_web.fetch.network.robots import origin

    site = serve(soft)
    site.pages["/gear/x"] = soft("/gear/x")
    store().put(soft404.SPACE, origin(site.url), stored, 60)
    assert fetch(site.url + "/gear/x")["wall"] == "not_found"
    assert len(site.probes) == 1  # asked anew


def test_the_sketch_leaves_out_the_path_and_link_targets():
    one = soft404.sketch(
        "Trail Gear", "We looked for /a/b but came back [home](/x)", "http://s/a/b"
    )
    two = soft404.sketch("Trail Gear", "We looked for /c but came back [home](/y)", "http://s/c")
    assert soft404.similarity(one, two) == 1.0
    other = soft404.sketch(
        "Trail Gear", "Opening hours: nine to five, Monday to Friday", "http://s/h"
    )
    assert soft404.similarity(one, other) < soft404.SIMILAR
    assert soft404.similarity(frozenset(), frozenset()) == 0.0


@pytest.mark.parametrize(
    ("heading", "wall"),
    [("Scheduled maintenance", "error_page"), ("Not available in your region", "region_block")],
)
def test_a_site_that_answers_every_path_with_one_notice_is_named_by_it(serve, heading, wall):
    """Words that name no wall alone beside the page's own sentences: compared with the
    site's answer to a missing path, the same notice everywhere is that wall."""
    notice = html("Trail Gear", f"<h1>{heading}</h1>{OWN_SENTENCES}")
    site = serve(lambda _: (200, {}, notice))
    site.pages["/gear/boots"] = (200, {}, notice)
    assert fetch(site.url + "/gear/boots").get("wall") == wall
    assert len(site.probes) == 1
    other = serve(lambda path: (404, {}, gone(path)))  # the same page on a site that 404s
    other.pages["/gear/boots"] = (200, {}, notice)
    out = fetch(other.url + "/gear/boots")
    assert out["success"] is True, out
    assert len(other.probes) == 1


def test_a_site_that_answers_every_path_with_a_maintenance_page_is_an_error_page(serve):
    down = html("Trail Gear", "<h1>We'll be back soon</h1><p>We are performing maintenance.</p>")
    site = serve(lambda _: (200, {}, down))
    site.pages["/trails"] = (200, {}, down)
    out = fetch(site.url + "/trails")
    assert out.get("wall") == "error_page", out


def test_an_empty_answer_to_the_probe_decides_nothing(serve):
    site = serve(lambda _: (200, {}, ""))
    site.pages["/gear/x"] = soft("/gear/x")
    assert fetch(site.url + "/gear/x")["success"] is True
    assert len(site.probes) == 1


def test_an_unusable_state_is_a_warning_and_each_call_asks_once(serve, monkeypatch, tmp_path):
    """Where the probe's memo can be neither read nor written, the answer says so (STATE),
    and each call asks the site once, never more."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))  # the state dir would be under a file
    site = serve(lambda path: (404, {}, gone(path)))  # the page stays content: warnings shown
    for calls, path in enumerate(("/gear/x", "/gear/y"), start=1):
        site.pages[path] = soft(path)
        out = fetch(site.url + path)
        assert out["success"] is True, out
        [warning] = [w for w in out.get("warnings", []) if w["code"] == "STATE"]
        assert "soft-404 probe's memo" in warning["message"]
        assert str(blocker) in warning["message"]  # the store's own reason, where it failed
        assert len(site.probes) == calls
    # The same page again comes from the cache: no request, and no stale STATE warning.
    again = fetch(site.url + "/gear/x")
    assert again.get("cached") is True, again
    assert all(w["code"] != "STATE" for w in again.get("warnings", []))
    assert len(site.probes) == 2


def test_a_usable_state_gives_no_warning(serve):
    site = serve(lambda path: (404, {}, gone(path)))
    site.pages["/gear/x"] = soft("/gear/x")
    out = fetch(site.url + "/gear/x")
    assert out["success"] is True, out
    assert len(site.probes) == 1
    assert all(w["code"] != "STATE" for w in out.get("warnings", []))


SHORT = "<p>Monday to Friday, nine to five. Closed on public holidays.</p>"
OWN_SENTENCES = (
    "<p>La tienda abre de lunes a viernes de nueve a cinco, y cierra los días festivos del "
    "calendario nacional.</p><p>Los pedidos en línea se envían en un plazo de tres días "
    "hábiles desde la confirmación del pago.</p>"
)


@pytest.mark.parametrize(
    ("head", "body", "title"),
    [
        ('<meta name="robots" content="noindex, follow">', SHORT, "Hours"),
        ("", f'<form action="/find"><input type="search" name="q"></form>{SHORT}', "Hours"),
        ("", f'<div role="search"><input name="term"></div>{SHORT}', "Hours"),
        ("", f'<section class="error-404 not-found">{SHORT}</section>', "Hours"),
        ('<meta name="prerender-status-code" content="404">', SHORT, "Hours"),
        ('<meta property="og:site_name" content="Trail Gear">', SHORT, "Trail Gear"),
        ("", f'<a href="/"><img src="/l.png" alt="Trail Gear"></a>{SHORT}', "Trail Gear"),
        ("", "<p>Nothing lives at /gear/old-boots any more.</p>", "Hours"),
        # A not-found heading (the phrase data's) over sentences of the page's own: no wall
        # by its words, but worth comparing.
        ("", f"<h1>Página no encontrada</h1>{OWN_SENTENCES}", "Tienda"),
        # ...and any wall's: a site may answer every path with its age check or notice.
        ("", f"<h1>¿Eres mayor de edad?</h1>{OWN_SENTENCES}", "Tienda"),
        ("", f"<h1>Scheduled maintenance</h1>{OWN_SENTENCES}", "Tienda"),
    ],
)
def test_a_short_page_that_gives_a_reason_is_worth_the_probe(head, body, title):
    page = f"<html><head><title>{title}</title>{head}</head><body><main>{body}</main></body></html>"
    from ikigai_web.fetch.reading.extract import html_to_markdown

    document = html_to_markdown(page, "https://trail.test/gear/old-boots")
    assert document.wall is None
    assert document.maybe_not_found is True
    assert soft404.suspect("https://trail.test/gear/old-boots", document)


@pytest.mark.parametrize(
    ("body", "title"),
    [
        (SHORT, "Opening hours"),  # short and ordinary
        (f'<header><form action="/find"><input type="search" name="q"></form></header>{SHORT}',
         "Opening hours"),  # the site's search box, in its header: every page has it
        (f'<nav><input type="search" name="q"></nav>{SHORT}', "Opening hours"),
        (f'<input type="hidden" name="q">{SHORT}', "Opening hours"),
        (f"<p>{ARTICLE}</p>", "Trail Gear"),  # long: never its site's not-found page
        ("<p>See /gear, our catalogue.</p><p>Old boots: /gear/old-bootsies.</p>", "Boots"),
    ],
)  # fmt: skip
def test_a_page_without_a_reason_costs_no_probe(body, title):
    page = f"<html><head><title>{title}</title></head><body><main>{body}</main></body></html>"
    from ikigai_web.fetch.reading.extract import html_to_markdown

    document = html_to_markdown(page, "https://trail.test/gear/old-boots")
    assert document.maybe_not_found is False
    assert not soft404.suspect("https://trail.test/gear/old-boots", document)


def test_a_sites_root_and_a_wall_are_never_probed():
    from ikigai_web.fetch.reading.extract import html_to_markdown

    noindex = '<meta name="robots" content="noindex">'
    page = f"<html><head><title>Hours</title>{noindex}</head><body>{SHORT}</body></html>"
    assert not soft404.suspect("https://trail.test/", html_to_markdown(page, "https://trail.test/"))
    login = (
        '<main><h1>Sign in</h1><form action="/login"><input type="email" name="email">'
        '<input type="password" name="p"><button>Sign in</button></form></main>'
    )
    gate = html_to_markdown(page.replace(SHORT, login), "https://trail.test/gear/x")
    assert gate.wall == "sign_in"
    assert gate.maybe_not_found is False


def stand_in(head: str, body: str) -> str:
    return f"<html><head>{head}</head><body>{body}</body></html>"


# Placeholders in words the phrase data does not hold (Swahili): the domain it stands in
# for as its title; a link to its maker alone; a wall's heading over a page with no link.
FOR_SALE = stand_in(
    "<title>mkate-bora.example</title>", "<p>Jina hili linauzwa. Wasiliana nasi.</p>"
)
MAKERS = stand_in(
    "<title>Karibu</title>",
    "<p>Tovuti hii inajengwa na mwenyeji wake.</p>"
    "<a href='https://jenga.example/'>Jenga</a> <a href='https://www.jenga.example/msaada'>"
    "Msaada</a>",
)


@pytest.mark.parametrize("page", [FOR_SALE, MAKERS])
@pytest.mark.parametrize("path", ["/", "/bidhaa/mkate"])
def test_a_placeholder_on_every_path_is_parked_at_the_root_too(serve, page, path):
    """A page that leads nowhere into its site and names a domain, or links to one other
    site alone (its maker's), is compared even at the site's root: a parked domain is
    asked for there most often. Answering every path with it makes it `parked`."""
    site = serve(lambda _path: (200, {}, page))
    site.pages[path] = (200, {}, page)
    out = fetch(site.url + path)
    assert (out["success"], out.get("wall")) == (False, "parked"), out
    assert len(site.probes) == 1


ONE_PAGE_SITE = stand_in(
    "<title>Juma Photography</title>",
    "<h1>Juma Photography</h1><p>Weddings and portraits in Mombasa.</p>"
    "<a href='https://social.example/juma'>Social</a> <a href='https://pics.example/juma'>"
    "Pictures</a> <a href='mailto:juma@juma-photo.example'>juma@juma-photo.example</a>",
)


@pytest.mark.parametrize("page", [ONE_PAGE_SITE, stand_in("<title>Hours</title>", SHORT)])
def test_a_one_page_site_at_its_root_costs_no_request_and_stays_content(serve, page):
    """A one-page site answering every path with its home page: links to several other
    sites (or none), no domain for a title, no wall's words: no reason for the probe."""
    site = serve(lambda _path: (200, {}, page))
    site.pages["/"] = (200, {}, page)
    out = fetch(site.url + "/")
    assert out["success"] is True, out
    assert "wall" not in out
    assert site.probes == []


def test_a_home_page_named_for_its_domain_with_a_way_into_its_site_is_not_compared():
    """A home page is never its site's not-found page: at the root only a placeholder, a
    page with no way into its site, is compared."""
    from ikigai_web.fetch.reading.extract import html_to_markdown

    page = stand_in("<title>kahawa.example</title>", "<p>Kahawa safi kutoka milimani.</p>"
                    "<a href='/duka'>Duka</a>")  # fmt: skip
    document = html_to_markdown(page, "https://kahawa.example/")
    assert document.maybe_not_found is True  # a reason, on a page of a path other than "/"
    assert not soft404.suspect("https://kahawa.example/", document)


# ---------------------------------------------------------------- an item that is gone

REMOVED = (
    "<html><head><title>Ozeron</title><script async src='https://www.googletagmanager.com/"
    "gtag/js?id=G-1'></script><script>window.dataLayer=[];</script></head><body>"
    "<header><a href='/'>Ozeron</a> <a href='/catalog'>Katalog</a></header><main>"
    "<h2>Bidhaa hii haipo tena</h2><p>Lakini tuna nyingine nyingi, tazama chini.</p>"
    "<div class='reco'>{links}</div></main></body></html>"
)


def removed(links: str) -> str:
    return REMOVED.format(links=links)


@pytest.mark.parametrize(
    ("url", "item"),
    [
        ("https://s.test/product/naushniki-tws-x2-112233/", True),
        ("https://s.test/vakansiya/muhasib-12231", True),
        ("https://s.test/promo/harbolnas-akhir-tahun", True),
        ("https://s.test/reserve/seat?train=1011", True),
        ("https://s.test/hours", False),
        ("https://s.test/gear/old-boots", False),
        ("https://s.test/gone/3?page=2", False),
    ],
)
def test_an_address_naming_one_item_of_many_is_known(url, item):
    from ikigai_web.fetch.reading.walls import names_an_item

    assert names_an_item(url) is item


def test_a_removed_item_answered_like_any_missing_path_is_not_found(serve):
    """A short page at an item's address, with a script or two (analytics), showing its own
    heading and line: compared with the site's answer to a missing path, which is the same
    notice with other recommendations, it is not_found, in words no list holds."""
    site = serve(lambda _path: (200, {}, removed("<a href='/p/1'>Redio ndogo ya Bluetooth</a>")))
    path = "/product/naushniki-tws-x2-112233/"
    site.pages[path] = (200, {}, removed("<a href='/p/2'>Spika ndogo ya Bluetooth</a>"))
    out = fetch(site.url + path)
    assert (out["success"], out.get("wall")) == (False, "not_found"), out
    assert len(site.probes) == 1


def test_a_short_item_of_a_site_that_answers_404_stays_content(serve):
    site = serve(lambda _path: (404, {}, html("Ozeron", "<h1>404</h1>")))
    path = "/product/naushniki-tws-x2-112233/"
    site.pages[path] = (200, {}, removed("<a href='/p/2'>Spika</a>"))
    out = fetch(site.url + path)
    assert out["success"] is True, out
    assert len(site.probes) == 1


def test_an_app_shell_waiting_for_its_scripts_at_an_items_address_costs_no_probe(serve):
    shell = (
        "<html><head><title>Ozeron</title></head><body><div id='root'></div><noscript>You "
        "need to enable JavaScript to run this app.</noscript><script src='/static/js/"
        "main.3f2a9c1b.js'></script></body></html>"
    )
    site = serve(lambda _path: (200, {}, shell))
    site.pages["/product/naushniki-tws-x2-112233/"] = (200, {}, shell)
    out = fetch(site.url + "/product/naushniki-tws-x2-112233/")
    assert out["success"] is True, out
    assert site.probes == []


def test_the_sketch_leaves_out_what_a_not_found_page_recommends():
    text = "## Bidhaa hii haipo tena\n\nLakini tuna nyingine nyingi, tazama chini.\n\n"
    one = soft404.sketch("Ozeron", text + "[Saa mahiri](/p/1)", "http://s/a")
    two = soft404.sketch("Ozeron", text + "[Spika ndogo ya Bluetooth](/p/2)", "http://s/b")
    assert soft404.similarity(one, two) == 1.0
    # A page of links and little else is compared with its links' words.
    links = soft404.sketch("Ozeron", "[Saa mahiri](/p/1) [Redio](/p/3)", "http://s/c")
    others = soft404.sketch("Ozeron", "[Spika ndogo](/p/2) [Taa](/p/4)", "http://s/d")
    assert soft404.similarity(links, others) < soft404.SIMILAR
