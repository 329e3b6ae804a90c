"""Pages that are not the content (fetch/reading/walls.py), through web-fetch on loopback pages:
each kind of wall is a failure that says which (`wall`) and what to do next; a paywalled
article keeps its free part and says it is cut; real content about such things stays content.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import Reply

from ikigai_web.common.errors import WALLS, ErrorCode, ToolError
from ikigai_web.common.runner import answer, failure, render
from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.tools import web_fetch

pytestmark = pytest.mark.loopback
HTML = {"Content-Type": "text/html; charset=utf-8"}
PROSE = (
    "The council voted on Tuesday to approve a new plan for the harbour district, ending two "
    "years of debate over how the old warehouses should be used. Supporters said the plan "
    "would bring housing and small businesses to an area that has stood mostly empty. "
)


@pytest.fixture(autouse=True)
def private(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")


def fetch(url: str, **options: Any) -> dict[str, Any]:
    result, budget = answer(web_fetch.execute, {"url": url} | options, web_fetch.SCHEMA)
    assert len(render(result, budget)) <= budget
    return result


def serve(fake_server, html: str, status: int = 200, **headers: str) -> str:
    url: str = fake_server.route("/page", Reply(status, html, HTML | headers))
    return url


# The pages, as a new user met them (each a success with the wall as its content).
DENIED = """<html><head><title>Access Denied</title>
<script src="https://www.google.com/recaptcha/api.js"></script></head><body><h1>Access Denied</h1>
<p>Please verify you are a human to continue.</p><form method="post"><div class="g-recaptcha"
data-sitekey="k"></div><button>Continue</button></form></body></html>"""
NOT_FOUND = """<html><head><title>Example Store</title></head><body><nav><a href="/">Home</a>
<a href="/sale">Sale</a></nav><main><h2>Sorry, we couldn't find that page</h2><p>The link may be
broken.</p><a href="/">Back to the home page</a></main></body></html>"""
SIGN_IN = """<html><head><title>Forum</title></head><body><div class="notice">You must be logged
in to view this thread.</div><form method="post" action="/login"><label>Email <input name="e">
</label><label>Password <input type="password" name="p"></label><button>Log in</button>
<a href="/pw">Forgot password?</a></form></body></html>"""


CAPTCHA_PROSE = "A CAPTCHA tells people and programs apart. " * 30


def paywalled(article: str, selector_text: str = "") -> str:
    declared = (
        '{"@context":"https://schema.org","@type":"NewsArticle","headline":"Harbour plan",'
        '"isAccessibleForFree":false,"hasPart":{"@type":"WebPageElement",'
        '"isAccessibleForFree":false,"cssSelector":".paid"}}'
    )
    return (
        f'<html><head><title>Harbour plan | Daily</title><script type="application/ld+json">'
        f"{declared}</script></head><body><article><h1>Harbour plan</h1><p>{article}</p>"
        f'<div class="paid">{selector_text}</div><div class="gate"><h3>Subscribe to continue '
        f'reading</h3><p>Already a subscriber? <a href="/login">Log in</a></p></div>'
        "</article></body></html>"
    )


@pytest.mark.parametrize(
    ("page", "wall", "advice"),
    [
        (DENIED, "bot_check", "another source"),
        (NOT_FOUND, "not_found", "Check the URL"),
        (SIGN_IN, "sign_in", "their own browser"),
        (paywalled(""), "paywall", "their own browser"),
        (
            (
                "<html><head><title>Down for maintenance</title></head><body><h1>We'll be back "
                "soon!</h1><p>We're performing scheduled maintenance.</p></body></html>"
            ),
            "error_page",
            "Try again later",
        ),
        (
            (
                "<html><head><title>quietriver.example</title></head><body><h1>quietriver.example"
                "</h1><p>This domain may be for sale!</p><a href='/buy'>Buy this domain</a>"
                "</body></html>"
            ),
            "parked",
            "search for it",
        ),
        (
            "<html><head><title>Home</title></head><body><div class='c'></div></body></html>",
            "empty",
            "Check the URL",
        ),
    ],
)
def test_a_page_that_is_only_a_wall_is_a_failure_that_says_which(fake_server, page, wall, advice):
    out = fetch(serve(fake_server, page))
    assert out["success"] is False, out
    assert out["error_code"] == "HTTP_ERROR"
    assert out["wall"] == wall
    assert "not the content" in out["error"]
    assert advice in out["error"]
    assert set(out) == {"success", "error", "error_code", "wall"}


def test_a_wall_is_not_cached_as_a_page(fake_server):
    url = serve(fake_server, NOT_FOUND)
    assert fetch(url)["wall"] == "not_found"
    assert fetch(url)["wall"] == "not_found"
    assert len(fake_server.seen) == 2  # the second call asked again


def test_a_paywalled_article_keeps_its_free_part_and_says_it_is_cut(fake_server):
    url = serve(fake_server, paywalled(PROSE))
    out = fetch(url)
    assert out["success"] is True, out
    assert out["wall"] == "paywall"
    assert "harbour district" in out["content"]
    assert [w["code"] for w in out["warnings"]] == ["PAYWALL"]
    assert "cut after its free part" in out["warnings"][0]["message"]
    again = fetch(url)  # cached as it was: the same answer
    assert again["cached"] is True
    assert (again["wall"], again["warnings"]) == (out["wall"], out["warnings"])
    note = web_fetch.markdown({"url": url}, out)
    assert "Note: The article is cut after its free part" in note


def test_a_declared_paywall_that_carries_the_whole_article_is_the_article(fake_server):
    # Built as the dev pages that declare isAccessibleForFree false and still carry it all:
    # the declared part is there, full of text.
    whole = paywalled(PROSE, PROSE * 12).replace("Subscribe to continue reading", "More news")
    out = fetch(serve(fake_server, whole))
    assert out["success"] is True, out
    assert "wall" not in out
    assert "warnings" not in out
    assert out["content"].count("harbour district") >= 10


def test_a_declared_paywall_shorter_than_its_declared_length_is_cut():
    declared = (
        '<script type="application/ld+json">{"@type":"NewsArticle","isAccessibleForFree":'
        '"False","wordCount":"1400"}</script>'
    )
    page = f"<html><head><title>T</title>{declared}</head><body><p>{PROSE}</p></body></html>"
    assert html_to_markdown(page, "https://news.test/a").wall == "paywall"
    whole = page.replace(PROSE, PROSE * 30)
    assert html_to_markdown(whole, "https://news.test/a").wall is None


@pytest.mark.parametrize(
    "page",
    [
        "<html><head><title>Test</title></head><body><p>Hello world</p></body></html>",
        (
            "<html><head><title>Understanding 404 errors</title></head><body><h1>Understanding "
            "404 errors</h1><p>A 404 status code tells the browser that the server has nothing at "
            "the address it asked for; it usually means a link is out of date.</p></body></html>"
        ),
        (
            "<html><head><title>How login works</title></head><body><h1>How login works</h1>"
            "<p>When you log in, the site checks your password and gives your browser a "
            "session cookie.</p></body></html>"
        ),
        (
            "<html><head><title>Why sites ask if you are a robot</title><script "
            "src='https://www.google.com/recaptcha/api.js'></script></head><body><article><h1>Why "
            f"sites ask if you are a robot</h1><p>{CAPTCHA_PROSE}"
            "</p><p>Next time a page asks you to verify you are human, you know why.</p></article>"
            "<form><div class='g-recaptcha'></div></form></body></html>"
        ),
        (
            "<html><head><title>How paywalls work</title></head><body><article><p>Some publishers "
            "show the first paragraph and then a box that says subscribe to continue reading; "
            f"others keep whole sections free.</p><p>{PROSE}</p></article></body></html>"
        ),
    ],
    ids=["hello", "about-404", "about-login", "about-captcha", "about-paywalls"],
)
def test_real_content_about_walls_is_content(fake_server, page):
    out = fetch(serve(fake_server, page))
    assert out["success"] is True, out
    assert "wall" not in out


def test_a_403_challenge_says_it_is_a_bot_check(fake_server):
    page = "<html><head><title>Just a moment...</title></head><body>Checking…</body></html>"
    url = serve(fake_server, page, 403, **{"cf-mitigated": "challenge"})
    out = fetch(url)
    assert (out["error_code"], out["wall"]) == ("HTTP_ERROR", "bot_check")
    assert "HTTP 403" in out["error"]
    assert "bot check" in out["error"]
    # A plain 403 is a refusal of this client: a bot check in effect (docs/web-fetch.md).
    plain = fetch(serve(fake_server, "<html><title>Forbidden</title></html>", 403))
    assert (plain["error_code"], plain["wall"]) == ("HTTP_ERROR", "bot_check")
    assert "refuses this client" in plain["error"]


def test_a_429_captcha_page_keeps_its_retry_after(fake_server):
    url = serve(fake_server, DENIED, 429, **{"Retry-After": "30"})
    out = fetch(url)
    assert (out["wall"], out["retry_after"]) == ("bot_check", 30)


JS_CHECK = """<html><head><title>Just a moment...</title></head><body><h1>Checking your browser
</h1><noscript>Enable JavaScript and cookies to continue</noscript><script>
document.cookie = "check=1"; location.reload();</script></body></html>"""


def test_a_javascript_check_without_a_browser_says_what_is_true(fake_server, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_BROWSER", "/nonexistent/chromium")
    url = serve(fake_server, JS_CHECK)
    out = fetch(url)
    assert out["wall"] == "bot_check"
    assert "no browser is installed" in out["error"]
    never = fetch(url, render="never")
    assert never["wall"] == "bot_check"
    assert 'render: "auto" or "always"' in never["error"]


def test_a_captcha_is_not_left_to_a_browser():
    doc = html_to_markdown(DENIED, "https://shop.test/")
    assert doc.wall == "bot_check"
    assert doc.app_shell is False  # a person must solve it: `auto` does not render it


def test_a_failure_carries_wall_as_it_carries_retry_after():
    err = ToolError(ErrorCode.HTTP_ERROR, "a wall", retry_after=5, wall="sign_in")
    assert failure(err) == {
        "success": False,
        "error": "a wall",
        "error_code": "HTTP_ERROR",
        "retry_after": 5,
        "wall": "sign_in",
    }
    assert "wall" not in failure(ToolError(ErrorCode.HTTP_ERROR, "plain"))
    assert WALLS == (
        "bot_check",
        "sign_in",
        "paywall",
        "not_found",
        "error_page",
        "parked",
        "empty",
        "consent",
        "age_gate",
        "region_block",
        "rate_limited",
    )


@pytest.mark.parametrize(
    ("title", "text", "wall"),
    [
        ("Zugriff verweigert", "Bitte bestätigen Sie, dass Sie ein Mensch sind.", "bot_check"),
        ("Page introuvable", "La page que vous cherchez n'existe pas.", "not_found"),
        ("Página no encontrada", "La página que buscas no existe.", "not_found"),
        ("Em manutenção", "Estamos em manutenção. Voltamos em breve.", "error_page"),
        ("Accedi", "Devi effettuare l'accesso per vedere questa pagina.", "sign_in"),
        ("Pagina niet gevonden", "Deze pagina bestaat niet.", "not_found"),
        ("Страница не найдена", "Страница не существует.", "not_found"),
        ("ページが見つかりません", "お探しのページは見つかりませんでした。", "not_found"),
        ("页面不存在", "您访问的页面不存在。", "not_found"),
    ],
)
def test_walls_in_several_languages(title, text, wall):
    form = '<form><input type="password"></form>' if wall == "sign_in" else ""
    page = f"<html><head><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p>{form}"
    assert html_to_markdown(page + "</body></html>", "https://site.test/x").wall == wall


def test_a_long_page_is_content_whatever_its_title_says():
    page = (
        f"<html><head><title>Page not found</title></head><body><p>{PROSE * 60}</p></body></html>"
    )
    assert html_to_markdown(page, "https://site.test/x").wall is None


def test_what_a_declaration_cannot_say_is_left_out():
    body = PROSE * 10
    objects = [
        {"@type": "WebSite", "name": "Daily", "isAccessibleForFree": "perhaps"},
        {
            "@type": "NewsArticle",
            "isAccessibleForFree": "false",
            "articleBody": body,
            "hasPart": {"isAccessibleForFree": False, "cssSelector": "div > .paid"},
        },
    ]
    declared = f'<script type="application/ld+json">{json.dumps(objects)}</script>'
    page = f"<html><head><title>T</title>{declared}</head><body><p>{PROSE}</p></body></html>"
    # The selector is beyond a simple class or id, so only the declared body says it is cut.
    assert html_to_markdown(page, "https://news.test/a").wall == "paywall"
    whole = page.replace(f"<p>{PROSE}</p>", f"<p>{body}</p>")
    assert html_to_markdown(whole, "https://news.test/a").wall is None
