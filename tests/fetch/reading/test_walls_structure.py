"""Walls by what they are built of (fetch/reading/walls.py): a log-in form, a date of birth
form, a consent dialog standing where the content should be, a parking service's markup, an
app shell, in a language the phrase data does not hold (Swahili here); and the same things
beside real content, which stay content. Then each new kind's message, through web-fetch."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import Reply

from ikigai_web.common.runner import answer
from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.walls import asks_for_javascript
from ikigai_web.tools import web_fetch

ARTICLE = (
    "Halmashauri ya mji ilipiga kura Jumanne kuidhinisha mpango mpya wa eneo la bandari, "
    "na kumaliza mjadala wa miaka miwili kuhusu jinsi maghala ya zamani yanavyopaswa kutumika. "
    "Wafuasi walisema mpango huo utaleta makazi na biashara ndogo katika eneo ambalo limekaa "
    "tupu kwa muda mrefu, na kwamba kazi itaanza mwaka ujao baada ya ukaguzi wa mazingira. "
)


def page(body: str, title: str = "Karibu", head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def wall(html: str) -> str | None:
    return html_to_markdown(html, "https://site.test/some/page").wall


LOGIN = (
    '<form method="post" action="/session"><label>Barua pepe <input type="email" name="e">'
    '</label><label>Nenosiri <input type="password" name="p"></label><button>Ingia</button>'
    "</form>"
)


def test_a_log_in_form_that_is_the_page_is_a_sign_in_wall_in_any_language():
    assert wall(page(f"<main><h1>Karibu tena</h1>{LOGIN}</main>")) == "sign_in"


def test_an_e_mail_first_form_with_identity_providers_is_a_sign_in_wall():
    body = (
        '<main><form action="/next"><input type="email" name="identifier"><button>Endelea'
        '</button></form><a class="btn" href="https://accounts.google.com/o/oauth2/auth?x=1">'
        "Google</a></main>"
    )
    assert wall(page(body)) == "sign_in"


def test_identity_provider_buttons_alone_are_a_sign_in_wall():
    body = (
        '<main><p>Chagua njia</p><a href="https://appleid.apple.com/auth/authorize?c=1">Apple'
        '</a> <a href="https://www.facebook.com/v18.0/dialog/oauth?c=1">Facebook</a></main>'
    )
    assert wall(page(body)) == "sign_in"


def test_a_log_in_form_beside_real_content_is_content():
    body = f"<main><article><h1>Bandari</h1><p>{ARTICLE}</p></article></main><aside>{LOGIN}</aside>"
    assert wall(page(body)) is None


@pytest.mark.parametrize("hidden", ['style="display: none;"', 'style="DISPLAY:NONE"', "hidden"])
def test_a_log_in_form_a_person_cannot_see_is_no_wall(hidden):
    """A forum shell whose posts did not come, and the log-in form every page of the site
    carries hidden until a click: few words, but no wall a person sees."""
    body = f"<header><a href='/'>Jukwaa</a></header><div {hidden}>{LOGIN}</div>"
    assert wall(page(body, title="Mnaonaje?")) is None
    assert wall(page(body.replace(hidden, ""), title="Mnaonaje?")) == "sign_in"


def test_date_of_birth_fields_are_an_age_gate():
    days = "".join(f"<option>{d}</option>" for d in range(1, 32))
    years = "".join(f"<option>{y}</option>" for y in range(1930, 2025))
    body = (
        f"<main><h1>Karibu</h1><p>Tafadhali weka tarehe yako.</p><form><select name=s1>{days}"
        f"</select><select name=s2>{years}</select><button>Ingia</button></form></main>"
    )
    assert wall(page(body)) == "age_gate"


def test_an_age_check_container_is_an_age_gate():
    body = (
        '<div class="age-gate-overlay"><h2>Kizuizi</h2><button>Ndiyo</button><button>Hapana'
        "</button></div>"
    )
    assert wall(page(body)) == "age_gate"


def test_a_wine_page_that_asks_to_drink_responsibly_is_content():
    body = (
        f"<main><h1>Chinon 2022</h1><p>{ARTICLE}</p><p>14,90 €</p></main><footer>"
        "L'abus d'alcool est dangereux pour la santé, à consommer avec modération.</footer>"
    )
    assert wall(page(body)) is None


ONETRUST = '<script src="https://cdn.cookielaw.org/scripttemplates/otSDKStub.js"></script>'


def test_a_consent_dialog_standing_where_the_content_should_be_is_a_consent_wall():
    body = (
        '<div id="onetrust-consent-sdk"><div id="onetrust-banner-sdk"><p>Tunatumia vidakuzi '
        "kwa matangazo na takwimu pamoja na washirika wetu. Chagua hapa chini.</p>"
        "<button>Kubali</button><button>Kataa</button></div></div><main></main>"
    )
    assert wall(page(body, head=ONETRUST)) == "consent"


def test_a_consent_banner_over_an_article_is_content():
    body = (
        f"<main><article><h1>Bandari</h1><p>{ARTICLE}</p></article></main>"
        '<div id="onetrust-banner-sdk"><p>We use cookies. Accept all or reject all.</p></div>'
    )
    assert wall(page(body, head=ONETRUST)) is None


def test_a_portals_consent_page_is_a_consent_wall():
    form = (
        '<form action="https://consent.portal.test/save" method="post"><input type="hidden" '
        'name="v" value="1"><button>{}</button></form>'
    )
    body = (
        "<main><h1>Before you continue to Portal</h1><p>We use cookies and data to deliver "
        f"our services and to show ads.</p>{form.format('Reject all')}"
        f"{form.format('Accept all')}</main>"
    )
    assert wall(page(body, title="Before you continue")) == "consent"


def test_a_parking_services_markup_is_a_parked_domain():
    head = '<script src="https://www.sedoparking.com/frmpark/park.js"></script>'
    body = '<div id="lander"><a href="/l?q=1">Bima ya gari</a> <a href="/l?q=2">Mikopo</a></div>'
    assert wall(page(body, title="wavuti.test", head=head)) == "parked"


def test_markup_named_in_an_articles_text_is_no_mark():
    text = "Vifaa kama cf-chl, g-recaptcha na onetrust huonekana kwenye kurasa nyingi."
    assert wall(page(f"<main><h1>Habari</h1><p>{text}</p></main>")) is None


def test_a_brand_before_a_heading_phrase_still_names_it():
    body = "<div><p>网络不给力，请稍后重试</p><button>返回首页</button></div>"  # noqa: RUF001
    assert wall(page(body, title="海纳安全验证")) == "bot_check"


def test_a_page_of_images_and_no_text_is_empty():
    body = '<img src="/a.jpg"><img src="/b.jpg">'
    assert wall(page(body, title="")) == "empty"
    video = '<video src="/clip.mp4"></video>'
    assert wall(page(video, title="")) is None  # a player is content without text


CRA = (
    "<!doctype html><html><head><title>React App</title></head><body><noscript>You need to "
    'enable JavaScript to run this app.</noscript><div id="root"></div><script src="/static/js/'
    'main.1a2b.js"></script></body></html>'
)


def test_an_app_shell_that_only_asks_for_javascript_says_it_needs_javascript():
    doc = html_to_markdown(CRA, "https://app.test/")
    assert doc.wall is None
    assert doc.app_shell is True
    assert [w["code"] for w in doc.warnings] == ["NEEDS_JAVASCRIPT"]
    assert asks_for_javascript("Tafadhali washa JavaScript. Enable JavaScript to continue.")
    assert not asks_for_javascript("JavaScript is a language. " * 20)


@pytest.fixture
def fetched(fake_server, monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")

    def fetch(html: str, status: int = 200, **options: Any) -> dict[str, Any]:
        headers = {"Content-Type": "text/html; charset=utf-8"}
        url = fake_server.route("/p", Reply(status, html, headers))
        result, _ = answer(web_fetch.execute, {"url": url} | options, web_fetch.SCHEMA)
        return result

    return fetch


@pytest.mark.loopback
def test_an_app_shell_is_content_with_its_warning_under_render_never(fetched):
    out = fetched(CRA, render="never")
    assert out["success"] is True, out
    assert "wall" not in out
    assert [w["code"] for w in out["warnings"]] == ["NEEDS_JAVASCRIPT"]


@pytest.mark.loopback
@pytest.mark.parametrize(
    ("html", "status", "wall", "said"),
    [
        (
            page(f'<div id="onetrust-banner-sdk"><p>{"Tunatumia vidakuzi. " * 5}</p></div>'),
            200,
            "consent",
            "consent dialog",
        ),
        (
            page('<div class="age-gate"><h2>Umri</h2><button>Ndiyo</button></div>'),
            200,
            "age_gate",
            "does not declare an age",
        ),
        (page("<h1>Unavailable For Legal Reasons</h1>"), 451, "region_block", "will not help"),
        (page("<h1>Too Many Requests</h1>"), 429, "rate_limited", "Wait a few minutes"),
    ],
)
def test_each_new_kind_says_what_to_do(fetched, html, status, wall, said):
    out = fetched(html, status)
    assert (out["success"], out["wall"]) == (False, wall), out
    assert said in out["error"]
    assert "another source" in out["error"] or "Wait" in out["error"]


@pytest.mark.parametrize(
    "body",
    [
        # A forum post quoting an error, a notice about maintenance, a song's lyrics.
        (
            "<main><h1>502 Bad Gateway after upgrading nginx</h1><p>Every request to my app "
            'returns "502 Bad Gateway" since the upgrade.</p><p>Check that gunicorn listens on '
            "the port that proxy_pass points at, and not on the unix socket of the old config."
            "</p></main>"
        ),
        (
            "<main><h1>Scheduled maintenance on Sunday</h1><p>Water supply in the north "
            "district will be interrupted on Sunday from eight to noon while crews replace a "
            "main valve.</p></main>"
        ),
        (
            "<main><h1>Access Denied</h1><p>I knocked upon your door at night, the light was on "
            "but you said no, access denied, I'm standing in the cold outside.</p></main>"
        ),
    ],
)
def test_a_short_page_of_sentences_of_its_own_is_content_whatever_its_heading(body):
    assert wall(page(body, title="Forum")) is None


def test_a_sign_in_by_its_words_needs_a_way_to_sign_in_on_the_page():
    told = "<main><h1>Iniciar sesión</h1><p>Debes iniciar sesión para ver esta página.</p>"
    assert wall(page(told + "</main>")) is None  # a page about signing in
    assert wall(page(told + '<a href="/cuenta/entrar">Entrar</a></main>')) == "sign_in"


def test_a_page_known_not_to_be_the_content_is_named_by_its_words():
    from ikigai_web.fetch.reading.walls import named

    text = (
        "We are upgrading our systems to serve you better and the shop will reopen shortly, "
        "we'll be back soon."
    )
    assert named("Shop", text) == "error_page"
    assert named("Shop", "Our shop sells bread, cakes and coffee every day of the week.") is None
    assert named("Shop", text * 20) is None  # a long page is content even then


def test_a_dialog_about_cookies_is_a_consent_dialog_whatever_its_class():
    body = (
        '<div role="dialog" class="x9f"><p>Tunatumia cookies na washirika wetu kwa matangazo.'
        "</p><button>Kubali</button><button>Kataa</button></div><main></main>"
    )
    assert wall(page(body, head=ONETRUST)) == "consent"


def test_a_password_field_alone_is_a_sign_in_wall_and_a_captcha_alone_a_bot_check():
    assert wall(page('<label>Nenosiri <input type="password" name="p"></label>')) == "sign_in"
    captcha = '<div class="g-recaptcha" data-sitekey="k"></div><p>Endelea</p>'
    assert wall(page(captcha)) == "bot_check"
    form = f'<form>{captcha}<textarea name="ujumbe"></textarea><button>Tuma</button></form>'
    assert wall(page(f"<main><h1>Wasiliana nasi</h1>{form}</main>")) is None  # a contact form


def test_the_platforms_marks_are_lower_case_and_found_in_any_case():
    """wall_marks' patterns are searched in lower-cased markup (ten times as fast as
    IGNORECASE): each must be written lower-case, and markup in capitals still matches."""
    from ikigai_web.fetch.reading import wall_marks

    names = ("CHALLENGE", "CAPTCHA_BOX", "FIREWALL", "CONSENT", "CONSENT_PAGE", "PARKED")
    for mark in [
        getattr(wall_marks, n) for n in (*names, "AGE_GATE", "IDENTITY", "SIGN_IN_WIDGET")
    ]:
        assert mark.patterns
        for pattern in mark.patterns:
            assert pattern == pattern.lower(), pattern[:80]
    shouting = '<SCRIPT SRC="https://JS.HCAPTCHA.COM/1/api.js"></SCRIPT><DIV CLASS="H-CAPTCHA">'
    assert wall(page(shouting, title="Mtihani")) == "bot_check"


def test_marks_are_found_one_by_one_as_text_or_as_patterns():
    from ikigai_web.fetch.reading.wall_marks import Marks

    marks = Marks(r"cdn\.example\.com/x", r"id=[\"']?captcha")
    assert list(marks.starts("a cdn.example.com/x b cdn.example.com/x id='captcha'", 5)) == [
        2,
        22,
        40,
    ]
    assert list(marks.starts("cdn.example.com/x " * 9, 2)) == [0, 18]  # at most 2 each
    assert marks.search("<div id=captcha>")
    assert not marks.search("cdn.example.com/y")


@pytest.mark.parametrize(
    ("title", "text", "url", "named"),
    [
        ("mkate-bora.example", "", "https://x.test/", True),  # a domain for a title
        ("Karibu", "# www.mkate-bora.co.tz\n\nJina hili", "https://x.test/", True),
        ("Karibu", "Tovuti **mkate-bora.example** inajengwa.", "https://mkate-bora.example/", True),
        ("Karibu", "Andika: info@mkate-bora.example", "https://mkate-bora.example/", False),
        ("Karibu", "Tazama https://mkate-bora.example/bei", "https://mkate-bora.example/", False),
        ("Karibu", "Angalia mkate-bora.example.", "https://www.mkate-bora.example/", True),
        ("Karibu", "Seva 127.0.0.1 inafanya kazi.", "http://127.0.0.1:8080/", False),
        ("Node.js tips and tricks", "Read on.", "https://x.test/", False),
        ("a." * 200 + "example", "", "https://x.test/", False),  # past a domain's 253 characters
    ],
)  # fmt: skip
def test_a_page_names_a_domain_only_as_a_word_of_its_own(title, text, url, named):
    from ikigai_web.fetch.reading.walls import Clues, names_host

    assert names_host(Clues(title=title), text, url) is named


def test_a_form_of_thousands_of_account_fields_is_measured_by_its_first_ones(monkeypatch):
    """Each field's form costs its whole text: a hostile page of thousands of fields in one
    form would cost their square. Only the first few are measured; it is still a sign-in."""
    from ikigai_web.fetch.reading import walls
    from ikigai_web.fetch.reading.extract import html_to_markdown

    measured = []
    form_words = walls._form_words

    def counted(field):
        measured.append(field)
        return form_words(field)

    monkeypatch.setattr(walls, "_form_words", counted)
    fields = "<input type='email' name='email'>" * 3000
    page = f"<html><body><p>Ingia</p><form action='/login'>{fields}</form></body></html>"
    assert html_to_markdown(page, "https://x.test/a").wall == "sign_in"
    assert 0 < len(measured) <= walls._MOST_FIELDS
