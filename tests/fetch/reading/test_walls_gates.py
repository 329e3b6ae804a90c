"""Walls of the classes the earlier writers' halves showed the detector missing, found again
across halves c to f: a publisher's abstract over a sale of its full text, a block drawn as a
picture, an expired listing, a block of foreign visitors on a refusal, a broadcaster's block
over its player, a consent page every path leads to, and a wall whose title names it beside
its help lines. Each with its near miss, which stays content."""

from __future__ import annotations

import pytest

from ikigai_web.fetch.network.session import _page_wall
from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.wall_marks import challenge_headers
from ikigai_web.fetch.reading.walls import named, of_status

ABSTRACT = (
    "Miteremko ya matuta ya udongo wa loess huporomoka wakati wa mvua kubwa. Tuliweka vipimo "
    "kwenye matuta matatu na kupima jinsi maji yanavyopita kwenye nyufa za udongo. "
)
ARTICLE = (
    "Halmashauri ya mji ilipiga kura Jumanne kuidhinisha mpango mpya wa eneo la bandari, "
    "na kumaliza mjadala wa miaka miwili kuhusu jinsi maghala ya zamani yanavyopaswa kutumika. "
)
CITATION = (
    '<meta name="citation_title" content="Mtiririko wa maji kwenye matuta">'
    '<meta name="citation_doi" content="10.5555/jsh.2026.104412">'
)
SALE = (
    "<h2>Pata makala hii</h2>"
    "<a href='/action/ssostart?redirectUri=%2Fdoi%2F10.5555%2Fjsh.2026.104412'>Taasisi yako</a>"
    "<a href='/checkout/article/10.5555/jsh.2026.104412'>Nunua PDF</a>"
)


def page(body: str, title: str = "Karibu", head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def wall(html: str, url: str = "https://site.test/some/page") -> str | None:
    return html_to_markdown(html, url).wall


def paper(text: str, links: str, head: str = CITATION) -> str:
    body = f"<main><h1>Mtiririko wa maji kwenye matuta</h1><h2>Muhtasari</h2><p>{text}</p>"
    return page(f"{body}{links}</main>", "Mtiririko wa maji kwenye matuta", head)


# ---------------------------------------------------------------- a publisher's gate


def test_a_papers_abstract_over_a_sale_of_its_full_text_is_a_paywall():
    assert wall(paper(ABSTRACT, SALE)) == "paywall"


def test_a_papers_sale_by_its_doi_is_a_paywall_without_citation_tags():
    assert wall(paper(ABSTRACT, SALE, head="")) == "paywall"


@pytest.mark.parametrize(
    ("text", "links", "head"),
    [
        (ABSTRACT * 30, SALE, CITATION),  # the full text is there, the sale beside it
        (ABSTRACT, "<a href='/pdf/2611.01234'>PDF</a>", CITATION),  # a preprint's free PDF
        # a shop's post citing a paper: the DOI is the paper's, the checkout the shop's
        (ABSTRACT, "<a href='https://doi.org/10.5555/x.1'>DOI</a><a href='/checkout'>Kapu</a>", ""),
    ],
)  # fmt: skip
def test_a_paper_that_sells_nothing_it_withholds_is_content(text, links, head):
    assert wall(paper(text, links, head)) is None


# ---------------------------------------------------------------- a block drawn as a picture


def test_a_block_drawn_as_a_picture_says_what_it_is_in_its_alt_text():
    alt = "Este conteúdo não está disponível na sua região."
    assert wall(page(f"<img src='/geo.svg' alt='{alt}'>")) == "region_block"


def test_a_picture_alone_whose_alt_text_names_no_wall_is_an_empty_page():
    assert wall(page("<img src='/mlima.jpg' alt='Picha ya mlima'>")) == "empty"


# ---------------------------------------------------------------- expired listings


@pytest.mark.parametrize(
    ("heading", "line"),
    [
        ("Šis darbo skelbimas nebegalioja", "Darbdavys baigė atranką."),
        ("This listing has expired", "The seller has removed it."),
    ],
)
def test_a_listing_that_says_it_has_expired_is_not_found(heading, line):
    similar = "<h2>Similar</h2><ul><li><a href='/ad/2'>Ad 2</a></li><li><a href='/ad/3'>Ad 3</a>"
    assert wall(page(f"<h1>{heading}</h1><p>{line}</p>{similar}", heading)) == "not_found"


def test_a_live_listing_stays_content():
    body = f"<h1>Sandėlio darbuotojas, Kaunas</h1><p>{ARTICLE * 3}</p><a href='/apply'>Apply</a>"
    assert wall(page(body, "Sandėlio darbuotojas")) is None


# ---------------------------------------------------------------- blocks by region


def _refused(status: int, html: str) -> str | None:
    url = "https://site.test/page"
    return of_status(status, {}, html, lambda: _page_wall(url, html, "text/html"))


def test_a_refusal_of_visitors_from_abroad_is_a_region_block():
    text = "Access to this system is allowed from inside the country only; from abroad it is not."
    assert _refused(403, page(f"<h1>Access denied</h1><p>{text}</p>")) == "region_block"


def test_a_plain_refusal_stays_a_bot_check():
    assert _refused(403, page("<h1>Forbidden</h1><p>You do not have access.</p>")) == "bot_check"


def test_a_broadcasters_block_over_its_player_is_a_region_block():
    body = (
        "<header><nav><a href='/'>Directos</a> <a href='/series'>Series</a></nav></header>"
        "<main><div class='player'><p>Este contenido no está disponible en tu ubicación por "
        "restricciones de derechos.</p></div><h1>Partido de la jornada 14</h1></main>"
    )
    assert wall(page(body, "Partido de la jornada 14")) == "region_block"


def test_a_programme_page_naming_its_broadcast_rights_in_prose_stays_content():
    text = (
        "La cadena compró los derechos de emisión de la liga hasta 2030 y emitirá cada jornada "
        "en abierto, con comentarios de antiguos jugadores y un resumen al final de la noche. "
    )
    assert wall(page(f"<main><h1>La liga en abierto</h1><p>{text * 2}</p></main>")) is None


# ---------------------------------------------------------------- known pages, titled walls


def test_a_consent_page_every_path_leads_to_is_named_consent():
    markdown = (
        "# Než budete pokračovat\n\nPortál a naši partneři potřebujeme váš souhlas k využití "
        "dat. Souhlas udělíte kliknutím na tlačítko Souhlasím."
    )
    assert named("Než budete pokračovat", markdown) == "consent"


def test_an_article_about_not_found_pages_stays_content():
    title = "Why visitors see a page not found error, and what a site owner can do about it"
    text = (
        "A missing page usually comes from a link that was typed by hand or a page that moved "
        "without a redirect, and the fix is a redirect from the old address to the new one. "
    )
    assert wall(page(f"<h1>{title}</h1><p>{text * 2}</p>", title)) is None


# ---------------------------------------------------------------- checks of any product


def test_a_header_whose_value_names_a_check_says_the_answer_is_one():
    assert challenge_headers({"x-wgp-action": "js-challenge"}, stated=True)
    assert challenge_headers({"x-guard": "Managed_Captcha"}, stated=True)
    assert challenge_headers({"x-verify": "tcaptcha"}, stated=True)  # Tencent's CAPTCHA


@pytest.mark.parametrize(
    "headers",
    [
        {"content-security-policy": "script-src https://challenges.example.com/captcha"},
        {"link": "</captcha.js>; rel=preload"},
        {"x-note": "challenge " * 10},  # a sentence, not a word naming the check
        {"x-served-by": "cache-challenge-7"},  # a name that holds the word
    ],
)
def test_a_header_that_only_mentions_a_check_says_nothing(headers):
    assert not challenge_headers(headers, stated=True)


def test_a_503_whose_page_is_a_check_is_a_bot_check():
    assert of_status(503, {}, "<p>Wait</p>", lambda: "bot_check") == "bot_check"
    assert of_status(503, {}, "<p>Down</p>", lambda: None) == "error_page"


def test_a_checks_own_markup_names_a_page_that_explains_it_in_a_paragraph():
    why = "Mfumo huu unalinda seva dhidi ya roboti zinazopakua kurasa kwa wingi sana. " * 3
    body = (
        "<main><h1>Subiri kidogo</h1><p>Inapakia...</p><details><summary>Kwa nini?</summary>"
        f"<p>{why}</p></details></main>"
        "<script id='anubis_challenge' type='application/json'>{}</script>"
    )
    assert wall(page(body)) == "bot_check"
    # The same markup beside a real article is no check.
    assert wall(page(f"{body}<article><p>{ARTICLE * 4}</p></article>")) is None


# ---------------------------------------------------------------- phrases of the long tail


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("<h1>Cuenta suspendida</h1><p>Esta cuenta ha sido suspendida.</p>", "parked"),
        ("<h1>Товар не найден!</h1><a href='/'>Продолжить</a>", "not_found"),
        ("<h1>Вэбсайт түр засвартай байна</h1><p>Удахгүй эргэн ажиллана.</p>", "error_page"),
    ],
)
def test_the_long_tails_walls_say_what_they_are(body, kind):
    assert wall(page(body)) == kind


def test_a_post_about_a_suspended_account_stays_content():
    text = (
        "Mi cuenta de la tienda fue suspendida durante dos días por un error del banco, y el "
        "servicio de atención tardó en responder, aunque al final lo resolvieron sin coste. "
    )
    assert wall(page(f"<article><h1>Mi experiencia</h1><p>{text * 3}</p></article>")) is None


# ---------------------------------------------------------------- consent in a line or two


def test_a_line_asking_for_consent_under_a_heading_naming_it_is_a_consent_wall():
    body = "<h1>We value your privacy</h1><p>We and our partners need your consent to go on.</p>"
    assert wall(page(body)) == "consent"


def test_a_consent_platforms_empty_frame_and_its_line_are_a_consent_wall():
    frame = "<div id='sp_message_container_1'><iframe src='https://cmp.test/m'></iframe></div>"
    line = "<noscript>Accept all cookies, or sign in as a subscriber.</noscript>"
    assert wall(page(f"{frame}<p>Accept all cookies, or sign in as a subscriber.</p>{line}")) == (
        "consent"
    )


def test_a_short_note_on_cookies_without_a_consent_heading_or_platform_is_content():
    body = "<h1>Duka letu</h1><p>We use cookies to remember your basket. Accept all orders.</p>"
    assert wall(page(body)) is None


def test_nginxs_testcookie_check_is_a_bot_check():
    script = '<script>document.cookie="__test="+toHex(slowAES.decrypt(c,2,a,b));</script>'
    assert wall(page(f"<p>Tafadhali subiri…</p>{script}")) == "bot_check"


# ---------------------------------------------------------------- found in half h, by class
# A consent platform's message over an empty main region, a container named for a region
# block, an article that asks to sign in only to act, an overloaded site's notice.

CMP = (
    "<script>window.__tcfapi=function(){};</script><div id='usercentrics-root'></div>"
    "<script id='usercentrics-cmp' src='https://app.usercentrics.eu/browser-ui/loader.js'>"
    "</script>"
)
CHROME = "<header><a href='/'>Jornal</a><nav><a href='/a'>Política</a></nav></header>"


def test_a_consent_platforms_message_over_an_empty_main_region_is_a_consent_wall():
    said = "<noscript><p>Para ler, dê o seu acordo aos cookies e aos dados.</p></noscript>"
    body = f"{CHROME}<main><div class='content--locked'></div></main>{CMP}{said}"
    assert wall(page(body, "Chuvas no Recife")) == "consent"


def test_pay_or_accept_over_an_empty_main_region_is_consent_not_a_paywall():
    said = (
        "<noscript><h2>Lesen Sie mit Werbung oder mit Pur-Abo</h2><p>Wir nutzen Cookies und "
        "Daten, um unser Angebot kostenlos anzubieten. Alternativ: Pur, werbefrei für 3,99 € "
        "im Monat.</p><button>Akzeptieren</button><a href='/pur'>Pur-Abo abschließen</a>"
        "</noscript>"
    )
    body = f"{CHROME}<main><div id='placeholder'></div></main>{CMP}{said}"
    assert wall(page(body, "Streik am Montag")) == "consent"


@pytest.mark.parametrize(
    "body",
    [
        # the same platform beside an article in its main region
        f"{CHROME}<main><article><p>{ARTICLE * 3}</p></article></main>{CMP}",
        # an empty main region whose words say nothing of consent: an app's loading line
        f"{CHROME}<main></main>{CMP}<noscript><p>A carregar o jornal…</p></noscript>",
        # an empty main region, words about cookies, and no platform's markup
        f"{CHROME}<main></main><p>Os cookies da padaria saem às oito.</p>",
    ],
)
def test_an_empty_main_region_needs_a_platform_and_its_words_to_be_consent(body):
    assert wall(page(body, "Jornal")) is None


def test_a_refusal_in_a_container_named_for_a_region_block_is_a_region_block():
    said = "<p>Huduma hii inapatikana Tanzania tu.</p>"
    body = f"<main><section class='geo-block'>{said}</section></main>"
    assert _refused(403, page(body, "Samahani")) == "region_block"
    assert wall(page(body, "Samahani")) == "region_block"


def test_a_container_named_for_a_place_is_no_region_block():
    said = "<p>Huduma hii inapatikana Tanzania tu.</p>"
    body = f"<main><section class='geo-location'>{said}</section></main>"
    assert _refused(403, page(body, "Samahani")) == "bot_check"
    assert wall(page(body, "Samahani")) is None


def test_a_dated_article_asking_to_sign_in_only_to_act_stays_content():
    body = (
        "<main><article><h1>Kliniki ya moyo</h1><time datetime='2026-11-20'>20.11.2026</time>"
        "<p>Jumatatu hadi Ijumaa, saa mbili hadi saa kumi.</p>"
        "<p><a href='/login'>Log in to see your appointments</a></p></article></main>"
    )
    assert wall(page(body, "Kliniki ya moyo")) is None


def test_a_dated_article_behind_a_sign_in_form_is_a_sign_in_wall():
    body = (
        "<main><article><h1>Kliniki ya moyo</h1><time datetime='2026-11-20'>20.11.2026</time>"
        "<p>Tafadhali ingia kwanza.</p><form action='/login'><input type='email' name='email'>"
        "<input type='password' name='pw'><button>Sign in</button></form></article></main>"
    )
    assert wall(page(body, "Kliniki ya moyo")) == "sign_in"


@pytest.mark.parametrize(
    "line",
    [
        "ただいまアクセスが集中しております。しばらく時間をおいてから再度アクセスしてください。",
        "Nuestro servidor está saturado. Vuelva a intentarlo en unos minutos.",
    ],
)
def test_an_overloaded_sites_notice_is_an_error_page(line):
    assert wall(page(f"<main><h2>きっぷ</h2><p>{line}</p><a href='/'>トップへ</a></main>")) == (
        "error_page"
    )


# ---------------------------------------------------------------- found in half i, by class
# Marks that must be words of their own, a page that says it is free, a 503's log-in form,
# a layout without words or scripts, a wall drawn in an inline frame, consent pages by their
# forms, a firewall's long block page, and phrases of deleted items, expired sites and queues.


@pytest.mark.parametrize(
    ("markup", "named_"),
    [
        ("--color-base-outline-button-labels: 18, 18, 18;", False),  # no LINE in "outline"
        ("<a class='pineapple-btn'>", False),
        ("<a class='line-login'>", True),
        ("<button class='btn google-signin'>", True),
    ],
)
def test_an_identity_providers_name_is_a_word_of_its_own(markup, named_):
    from ikigai_web.fetch.reading.wall_marks import IDENTITY

    assert any(True for _ in IDENTITY.starts(markup.lower(), 5)) is named_


def test_a_contact_form_beside_a_themes_button_colours_stays_content():
    style = "<style>:root{--color-base-outline-button-labels: 18, 18, 18;}</style>"
    form = (
        "<main><h1>Makipag-ugnayan sa Amin</h1><p>May tanong tungkol sa iyong order?</p>"
        "<form action='/contact'><input type='text' name='name'><input type='email' "
        "name='email'><textarea name='body'></textarea><button>Ipadala</button></form></main>"
    )
    assert wall(page(form, "Makipag-ugnayan", style)) is None


def test_a_navigation_overlay_is_no_age_check():
    body = (
        "<div class='header-nav-overlay'></div><main><h1>Kirjasto suljettu</h1>"
        "<p>Pääkirjasto on suljettu sunnuntaina. Lainat voi palauttaa maanantaina.</p></main>"
    )
    assert wall(page(body, "Kirjasto suljettu")) is None


def test_an_article_that_declares_itself_free_is_no_paywall_under_its_subscribe_box():
    declared = (
        '<script type="application/ld+json">{"@type": "NewsArticle", '
        '"isAccessibleForFree": true}</script>'
    )
    body = (
        f"<main><article><h1>Snjóflóðahætta</h1><p>{ARTICLE}</p></article>"
        "<div class='paywall-box'><p>Gerast áskrifandi</p><a href='/askrift'>Áskrift</a></div>"
        "</main>"
    )
    assert wall(page(body, "Snjóflóðahætta", declared)) is None
    assert wall(page(body, "Snjóflóðahætta")) == "paywall"  # the same box, nothing declared


def test_a_503_whose_page_is_a_log_in_form_is_an_error_page():
    assert of_status(503, {}, "<form>", lambda: "sign_in") == "error_page"
    assert of_status(403, {}, "<form>", lambda: "sign_in") == "sign_in"


def test_a_layout_without_words_or_scripts_is_an_empty_page():
    xhtml = (
        '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
        '<head></head><body><div id="content"></div><div id="footer"></div></body></html>'
    )
    assert wall(xhtml) == "empty"
    scripted = xhtml.replace("</body>", "<script src='/app.js'></script></body>")
    assert wall(scripted) is None  # an app may fill it: a shell
    # A web component's element names an app whose scripts define it, even on a page saved
    # without them (a forum's splash, its assets' elements): no empty page.
    component = xhtml.replace('<div id="footer"></div>', "<forum-assets></forum-assets>")
    assert wall(component) is None


def framed(inner: str, outer: str = "") -> str:
    escaped = inner.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return page(f'{outer}<iframe title="x" srcdoc="{escaped}"></iframe>')


def test_a_wall_drawn_in_an_inline_frame_is_judged_by_the_frames_document():
    check = page(
        "<h2>Subiri kidogo</h2><p>Tunakagua kuwa wewe si roboti.</p>"
        "<div class='cf-turnstile' data-sitekey='0x4AAA'></div>"
        "<script src='https://challenges.cloudflare.com/turnstile/v0/api.js'></script>"
    )
    assert wall(framed(check)) == "bot_check"


def test_an_inline_frame_beside_the_pages_own_words_is_not_read():
    bar = page("<p>Tunatumia vidakuzi. <button>Kubali zote</button></p>")
    assert wall(framed(bar, f"<main><h1>Habari</h1><p>{ARTICLE * 3}</p></main>")) is None


def test_a_frame_within_a_frame_is_not_read():
    check = page("<h2>Subiri</h2><div class='cf-turnstile'></div>")
    assert wall(framed(framed(check))) != "bot_check"


CONSENT_LINES = (
    "<h1>Mbele ya kuendelea</h1><p>Tunatumia vidakuzi na data kwa huduma zetu, kupima "
    "matumizi na kuonyesha matangazo. Ukichagua Kubali zote, tutatumia vidakuzi kwa "
    "matangazo yanayokufaa.</p>"
)


@pytest.mark.parametrize(
    "form",
    [
        "<form action='/save'><button name='set_eom' value='false'>Kubali</button></form>",
        "<form action='/privacy-gate/accept-tcf2' method='post'><button>Kubali</button></form>",
    ],
)
def test_a_consent_page_is_known_by_its_forms(form):
    assert wall(page(f"<main>{CONSENT_LINES * 2}{form}</main>", "Mbele ya kuendelea")) == (
        "consent"
    )


def test_a_long_block_page_says_what_it_is_in_its_lead():
    details = "".join(f"<p>Kipengele {n}: thamani ya kiufundi {n * 7}</p>" for n in range(40))
    body = (
        "<h1>Your access to this site has been limited by the site owner</h1>"
        "<p>Your access to this service has been limited. (HTTP response code 503)</p>"
        f"{details}<p>Generated by Wordfence</p>"
    )
    html = page(body, "Your access to this site has been limited by the site owner")
    assert _refused(503, html) == "bot_check"


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (("<h2>Цей допис видалено</h2><p>Автор видалив допис.</p><a href='/'>Стрічка</a>"),
         "not_found"),
        ("<h2>Кешіріңіз, бұл тауар енді сатылмайды</h2><a href='/c'>Санат</a>", "not_found"),
        ("<h2>இந்த வீடியோ கிடைக்கவில்லை</h2><a href='/'>முகப்பு</a>", "not_found"),
        (("<h1>Ce site a expiré</h1><p>Si vous êtes le propriétaire, connectez-vous.</p>"
          "<a href='/login'>Se connecter</a>"), "parked"),
        ("<h1>恭喜\uff0c站点创建成功\uff01</h1><p>这是默认index.html\uff0c本页面由系统自动生成</p>",
         "parked"),
        ("<h1>Você está na fila virtual</h1><p>Seu número na fila: 48.211</p>", "rate_limited"),
    ],
)  # fmt: skip
def test_deleted_items_expired_sites_and_queues_say_what_they_are(body, kind):
    assert wall(page(body)) == kind


def test_a_line_asking_for_javascript_to_continue_is_no_paywall():
    body = "<h2>Egy pillanat</h2><p>A folytatáshoz engedélyezd a JavaScriptet.</p>"
    assert wall(page(body)) != "paywall"


# ---------------------------------------------------------------- found in half j, by class
# One national e-ID as the way in, a choice of e-IDs by camel-cased addresses, national ID
# numbers as the account, a maintenance notice with its window and its details' table, a
# coming-soon 503, a firewall's limit, a rate limit, a block of foreign addresses, a removed
# product or listing, a watershed for minors and an institution's missing subscription, in
# languages the data lacked.

ESTATE = "<header><a href='/'>Kommune</a><nav><a href='/hjelp'>Hjelp</a></nav></header>"
ONE_EID = (
    "<h1>Søknad om parkeringstillatelse</h1><p>Du må identifisere deg for å fortsette.</p>"
    "<a class='btn' href='/auth/itsme'><img src='/img/logo.svg' alt='itsme'> Fortsett</a>"
)


@pytest.mark.parametrize(
    "way",
    [
        ONE_EID,
        # a form that posts to a sign-in address, its button named for the e-ID
        (
            "<h1>Mijn dossier</h1><form action='/login' method='post'>"
            "<button class='btn-singpass'>Teruskan</button></form>"
        ),
        # the e-ID's own box around its account field, without a <form>
        (
            "<h1>Dine recepter</h1><div class='mitid-box'><label>BRUGER-ID</label>"
            "<input autocomplete='username'><button>FORTSÆT</button></div>"
        ),
        # a choice of two, by addresses written in camel case
        (
            "<h2>身分驗證</h2><p>請選擇</p><a href='MoicaLogin.aspx'>憑證</a>"
            "<a href='NhiCardLogin.aspx'>健保卡</a>"
        ),
    ],
)
def test_a_national_e_id_as_the_way_in_and_little_else_is_a_sign_in(way):
    assert wall(page(f"{ESTATE}<main>{way}</main>", "Kommune")) == "sign_in"


@pytest.mark.parametrize(
    "main",
    [
        # a link to apply for the e-ID leads to no sign-in
        (
            "<h1>Slik får du itsme</h1><p>Last ned appen.</p>"
            "<a href='https://www.itsme.example/apply'><img alt='itsme'> Søk</a>"
        ),
        # "clave" is also a password: a link to change it names no Cl@ve
        "<h1>Mi cuenta</h1><p>Datos guardados.</p><a href='/cuenta/cambiar-clave'>Cambiar</a>",
        # the same way in beside an article of its own
        f"<p>{ARTICLE * 4}</p>{ONE_EID}",
        # an e-ID's name running into other letters is none ("digidesign", "spidey")
        "<h1>Works</h1><a href='/login/digidesign'>A</a><a href='/auth/spidey'>B</a>",
    ],
)
def test_an_e_id_named_off_a_way_in_or_beside_content_stays_content(main):
    assert wall(page(f"{ESTATE}<main>{main}</main>", "Kommune")) is None


def test_a_national_id_number_is_an_account_to_sign_in_with():
    form = (
        "<main><h1>Citas</h1><form method='post' action='/auth/otp'>"
        "<input name='txtNationalID'><input name='mobile'><button>Enviar</button></form></main>"
    )
    assert wall(page(form, "Citas")) == "sign_in"
    # The same fields with a name and a message are a letter, whatever the address says.
    letter = form.replace("<button>", "<input name='nombre'><textarea name='m'></textarea><button>")
    assert wall(page(letter, "Citas")) is None


NOTICE = (
    "<h1>{heading}</h1><p>{line}</p><table><tr><th>Horário</th><td>30/11 00:00 - 06:00</td></tr>"
    "<tr><th>Serviços</th><td>pedidos, pagamentos, segunda via, consultas e histórico de "
    "consumo</td></tr></table>"
)


@pytest.mark.parametrize(
    ("heading", "line"),
    [
        ("Manutenção programada", ("O portal do cliente estará indisponível de 00:00 às 06:00 "
         "do dia 30 de novembro para a troca dos servidores do centro de dados.")),
        ("システムメンテナンスのお知らせ", ("平素よりご利用いただきありがとうございます。"
         "11月30日 0:00\u301c6:00 の間\u3001サーバー機器の入れ替え作業のため"
         "サービスを停止いたします。")),
    ],
)  # fmt: skip
def test_a_maintenance_notice_with_its_window_and_details_is_an_error_page(heading, line):
    body = NOTICE.format(heading=heading, line=line)
    assert wall(page(body, heading)) == "error_page"


def test_a_timetable_or_a_post_on_maintenance_stays_content():
    line = (
        "A piscina municipal abre de 07:00 às 22:00 todos os dias e a manutenção programada da "
        "água é feita às segundas, quando as aulas de natação das crianças passam para o ginásio."
    )
    assert wall(page(f"<main><h1>Piscina municipal</h1><p>{line}</p></main>", "Piscina")) is None
    post = (
        "Fizemos a manutenção programada do nosso barco no estaleiro da vila, trocámos o motor "
        "e pintámos o casco, e a família inteira ajudou durante o fim de semana inteiro. "
    )
    assert wall(page(f"<article><h1>O barco</h1><p>{post}</p></article>", "O barco")) is None


def test_a_503_whose_page_is_a_coming_soon_placeholder_is_parked():
    soon = page("<h1>Bientôt disponible</h1><p>Notre site est en construction.</p>")
    assert _refused(503, soon) == "parked"
    down = page("<h1>Site en maintenance</h1><p>Nous revenons dans une heure.</p>")
    assert _refused(503, down) == "error_page"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (503, ("<h1>Váš přístup k tomuto webu byl omezen provozovatelem webu</h1>"
               "<p>Pokud jde o omyl, kontaktujte provozovatele.</p>"), "bot_check"),
        (403, "<h2>你访问的太频繁了</h2><p>请稍后再来。</p>", "rate_limited"),
        (403, ("<h1>Acceso restringido</h1><p>El acceso desde direcciones IP ubicadas fuera de "
               "la Unión Europea está restringido.</p>"), "region_block"),
    ],
)  # fmt: skip
def test_a_refusal_that_says_why_is_that_wall(status, body, kind):
    assert _refused(status, page(body)) == kind


@pytest.mark.parametrize(
    ("title", "body"),
    [
        ("Prodotto non più disponibile", ("<h1>Questo prodotto non è più disponibile</h1><p>Ci "
         "dispiace, il frullatore che cerchi è uscito dal nostro catalogo e non verrà più "
         "prodotto né venduto.</p><a href='/frullatori'>Frullatori</a>")),
        ("Njoftimi ka skaduar", ("<h1>Ky njoftim nuk është më aktiv</h1>"
         "<a href='/banesa'>Njoftime të ngjashme</a>")),
        ("找不到頁面 - 文件中心", ("<header><a href='/'>文件中心</a><nav><a href='/p'>產品</a>"
         "</nav></header><main><h1>找不到此頁面</h1><p>您要找的文件可能已經移動或刪除。"
         "舊版說明文件已於去年十二月全部封存並改由新版網站提供。</p><ul><li>"
         "<a href='/docs/a'>服務總覽</a></li><li><a href='/docs/b'>快速入門</a></li></ul></main>")),
    ],
)  # fmt: skip
def test_a_removed_product_a_lapsed_listing_or_a_missing_page_is_not_found(title, body):
    assert wall(page(body, title)) == "not_found"


def test_a_product_on_sale_stays_content():
    body = (
        "<h1>Frullatore 1200 W</h1><p>Disponibile in nero e bianco, con brocca in vetro da "
        "due litri e sei velocità; spedizione gratuita in tre giorni lavorativi.</p>"
        "<button>Aggiungi al carrello</button>"
    )
    assert wall(page(body, "Frullatore 1200 W")) is None


def test_a_watershed_for_minors_over_a_player_is_an_age_gate():
    body = (
        "<main><div class='player'><h2>Programme déconseillé aux moins de 16 ans</h2><p>Pour "
        "la protection des mineurs, il est visible de 22h30 à 6h.</p>"
        "<a href='/connexion'>Se connecter</a></div></main>"
    )
    assert wall(page(body, "Le film du soir")) == "age_gate"


def test_an_article_on_protecting_minors_stays_content():
    text = (
        "Le conseil a publié mardi un rapport sur la protection des mineurs en ligne, qui "
        "recommande aux chaînes de mieux signaler leurs programmes aux parents le soir. "
    )
    assert wall(page(f"<article><h1>Rapport</h1><p>{text * 3}</p></article>")) is None


def test_an_abstract_whose_institution_has_no_subscription_is_a_paywall():
    body = (
        "<h1>城市供水管网漏损检测</h1><p>摘要\uff1a本文针对传统声学检测方法依赖人工经验的问题\uff0c"
        "提出了一种基于深度学习的检测方法\uff0c并在三个城市的管网中进行了验证。</p>"
        "<p>您当前未登录或所在机构未订购该资源。</p><a href='/pay'>购买</a>"
    )
    assert wall(page(body, "城市供水管网漏损检测")) == "paywall"
    free = body.replace("<p>您当前未登录或所在机构未订购该资源。</p>", "")
    assert wall(page(free, "城市供水管网漏损检测")) is None


SELECTOR = (
    "<main><h1>Kies hoe u inlogt</h1><p>Voor uw aanvraag moet u zich identificeren.</p><ul>"
    "<li><a href='/Proxy/itsme' class='idp-btn'><b>itsme</b> Met de app op uw telefoon, "
    "zonder wachtwoord of kaartlezer: u bevestigt met uw code of vingerafdruk</a></li>"
    "<li><a href='/Proxy/eid' class='idp-btn'><b>eID</b> Met uw identiteitskaart en een "
    "kaartlezer op deze computer, en de pincode die u bij de kaart kreeg</a></li>"
    "<li><a href='/Proxy/eidas' class='idp-btn'><b>eIDAS</b> Voor burgers van andere "
    "lidstaten van de Europese Unie, met het inlogmiddel van hun eigen land</a></li></ul></main>"
)


def test_a_selector_that_says_what_each_e_id_is_is_a_sign_in():
    # Some 75 words, most of them the providers' own: what each e-ID is, no content.
    assert wall(page(f"{ESTATE}{SELECTOR}", "Inloggen")) == "sign_in"


def test_a_service_page_beside_its_e_id_selector_stays_content():
    service = (
        "<p>De parkeervergunning kost 45 euro per jaar en geldt voor één kenteken in uw wijk. "
        "U krijgt binnen vijf werkdagen bericht; een tweede vergunning voor hetzelfde adres "
        "kost het dubbele en wordt alleen verleend als er plaats is in de straat.</p>"
    )
    assert wall(page(f"{ESTATE}{SELECTOR.replace('</ul>', '</ul>' + service)}")) is None


# ---------------------------------------------------------------- a forum's quick log-in


THREAD = "".join(
    f"<div class='post'><b>mwanachama_{n}</b> <small>0{n}.11.2025, 08:1{n}</small>"
    f"<p>{ARTICLE}</p></div>"
    for n in range(1, 4)
)
QUICK_LOG_IN = (
    "<form action='/ucp.php?mode=login' method='post'><input name='username'>"
    "<input type='password' name='password'><button>Ingia</button></form>"
)


def test_a_short_thread_beside_a_sidebars_quick_log_in_stays_content():
    body = (
        f"<main><div class='layout'><section class='thread'><h1>Treni ya usiku</h1>{THREAD}"
        f"</section><aside class='sidebar'>{QUICK_LOG_IN}</aside></div></main>"
    )
    assert wall(page(body, "Treni ya usiku")) is None


def test_a_log_in_form_in_the_page_s_own_card_is_still_a_sign_in():
    body = (
        f"<main><div class='panel'><h1>Ingia</h1><h3>Jina na nenosiri</h3>{QUICK_LOG_IN}"
        "</div></main>"
    )
    assert wall(page(body, "Ingia")) == "sign_in"
