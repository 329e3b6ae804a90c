"""Walls of the classes a second writer's pages showed the detector missing (issue 54, half
b): a yes/no age check, a sign-in by a one-time code or a link sent by e-mail, an identity
provider's hosted sign-in, a consent step drawn as a page of its own, a consent dialog that
asks to pay, an empty listing, web servers' default pages, an app shell asking for
JavaScript in any language, a firewall's block that says why; and the words of scripts
written without spaces or with vowel signs. Each with its near miss, which stays content.
The pages are written here, in languages the phrase data mostly does not hold."""

from __future__ import annotations

import pytest

from ikigai_web.fetch.reading import wall_phrases
from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.walls import of_status, size

ARTICLE = (
    "Halmashauri ya mji ilipiga kura Jumanne kuidhinisha mpango mpya wa eneo la bandari, "
    "na kumaliza mjadala wa miaka miwili kuhusu jinsi maghala ya zamani yanavyopaswa kutumika. "
)


def page(body: str, title: str = "Karibu", head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def judged(html: str) -> tuple[str | None, list[str]]:
    document = html_to_markdown(html, "https://site.test/some/page")
    return document.wall, [w["code"] for w in document.warnings]


def wall(html: str) -> str | None:
    return judged(html)[0]


# ---------------------------------------------------------------- age checks


def test_a_yes_no_choice_that_names_an_age_is_an_age_gate():
    body = (
        "<div class='lango'><h1>Karibu kiwandani</h1><p>Tovuti hii ina habari za vinywaji.</p>"
        "<div class='chaguo'><a href='/?umri=1'>Ndiyo, nina miaka 18 au zaidi</a> "
        "<a href='https://mbali.test'>Hapana</a></div></div>"
    )
    assert wall(page(body)) == "age_gate"


AGE_QUESTION = "<main><h1>{heading}</h1><p>Karibu kwenye duka letu la vinywaji.</p>{choices}</main>"
YES_NO = "<div><button>Ndiyo</button><button>Hapana</button></div>"
ENTER_LEAVE = "<p><a href='/?umri=sawa'>Ingia</a> <a href='https://mbali.example/'>Ondoka</a></p>"


@pytest.mark.parametrize("choices", [YES_NO, ENTER_LEAVE])
@pytest.mark.parametrize("heading", ["Miaka 21?", "18+"])
def test_a_heading_asking_for_an_age_over_a_yes_no_choice_is_an_age_gate(heading, choices):
    """The age in the heading, the choices a word each: yes and no, enter and leave."""
    assert wall(page(AGE_QUESTION.format(heading=heading, choices=choices))) == "age_gate"


@pytest.mark.parametrize(
    ("heading", "choices"),
    [
        ("Whisky ya miaka 21", YES_NO),  # a product's name, asking nothing
        # a question, but the pair is the footer's links to other pages
        ("Miaka 21?", "<footer><a href='/siri'>Siri</a> <a href='/kazi'>Kazi</a></footer>"),
        ("Miaka 21?", "<p><a href='/siri'>Siri</a> <a href='/kazi'>Kazi</a></p>"),
    ],
)  # fmt: skip
def test_an_age_in_a_heading_without_a_yes_no_choice_is_content(heading, choices):
    assert wall(page(AGE_QUESTION.format(heading=heading, choices=choices))) is None


@pytest.mark.parametrize(
    "choices",
    [
        # a page's numbers (pages 16 to 21), a year and a date, a product's age on its title
        "".join(f"<a href='/p/{n}'>{n}</a>" for n in range(16, 22)),
        "<a href='/a'>Matukio ya 2018 mjini</a> <a href='/b'>Tarehe 18.11.2025 saa 10</a>",
        "<a href='/cart'>Weka kikapuni</a> <a href='/buy'>Nunua sasa</a>",
    ],
)
def test_choices_that_name_no_age_are_no_age_gate(choices):
    body = f"<h1>Whisky ya miaka 18</h1><p>Chupa moja, lita moja.</p><div>{choices}</div>"
    assert wall(page(body)) is None


# ---------------------------------------------------------------- sign-ins


def _card(form: str) -> str:
    return (
        "<div class='ukurasa'><a href='/'><img src='/nembo.svg' alt='Ratiba'></a>"
        f"<div class='kadi'><h1>Ingia kwenye timu yako</h1><p>Andika anwani yako ya barua "
        f"pepe. Tutakutumia kiungo cha kuingia moja kwa moja bila nenosiri lolote.</p>{form}"
        "<p>Huna akaunti? <a href='/jaribu'>Jaribu siku thelathini</a></p></div></div>"
    )


@pytest.mark.parametrize(
    "form",
    [
        # a link sent by e-mail; a one-time code sent to a phone
        (
            '<form method="post" action="/login/link"><input type="email" name="email">'
            "<button>Nitumie kiungo</button></form>"
        ),
        (
            '<form method="post" action="/api/auth/otp/send"><input name="namba" type="tel">'
            "<button>Nitumie nambari</button></form>"
        ),
    ],
)
def test_a_form_that_signs_in_without_a_password_is_a_sign_in_wall(form):
    assert wall(page(_card(form))) == "sign_in"


def test_a_newsletter_form_on_a_short_page_is_no_sign_in():
    form = (
        '<form method="post" action="/jarida/jiandikishe"><input type="email" name="email">'
        "<button>Jiandikishe</button></form>"
    )
    assert wall(page(_card(form).replace("Ingia kwenye timu yako", "Jarida la wiki"))) is None


@pytest.mark.parametrize("other", ["<input name='jina'>", "<textarea name='ujumbe'></textarea>"])
def test_a_form_that_asks_for_a_name_or_a_message_too_is_no_sign_in(other):
    """An event's registration (a name and an e-mail) posting to an address a sign-in
    might have ("/prijava" is a sign-up as well as a sign-in in Croatian)."""
    form = (
        f'<form method="post" action="/login/link">{other}<input type="email" name="email">'
        "<button>Jiandikishe</button></form>"
    )
    assert wall(page(_card(form))) is None


OKTA_LIKE = (
    '<div id="okta-login-container"></div><noscript><div id="okta-sign-in">Programu hii '
    "inahitaji JavaScript.</div></noscript>"
    '<script src="https://ok1static.oktacdn.com/assets/js/okta-sign-in.min.js"></script>'
)


PORTAL_NOTICES = (
    "<p>Kipindi cha usajili wa kozi ni kuanzia tarehe moja hadi saba Desemba saa tatu asubuhi.</p>"
    "<p>Ukisahau nenosiri lako, tembelea dawati la huduma katika jengo kuu ghorofa ya pili.</p>"
    "<p>Kivinjari kinachopendekezwa ni toleo jipya la kivinjari chochote kinachojulikana.</p>"
)
PORTAL_FORM = (
    "<form action='/portal/ingia' method='post'><label>Namba ya mwanafunzi "
    "<input name='userid'></label><label>Nenosiri <input type='password' name='pw'></label>"
    "<button>Ingia</button></form>"
)


def test_a_short_log_in_page_with_notices_and_no_way_into_its_site_is_a_sign_in_wall():
    """A university's or an organisation's portal: its log-in form, notices and help lines
    beside it, and no link into the site (the portal is that one page)."""
    assert wall(page(f"<main>{PORTAL_NOTICES}{PORTAL_FORM}</main>")) == "sign_in"


@pytest.mark.parametrize(
    "body",
    [
        # a menu into the site: a page of it, with a log-in form beside its text
        (
            "<nav><a href='/habari'>Habari</a><a href='/kozi'>Kozi</a></nav>"
            f"<main>{PORTAL_NOTICES}{PORTAL_FORM}</main>"
        ),
        # no link, but the form in a sidebar: a short forum thread's log-in box
        f"<main>{PORTAL_NOTICES}</main><aside>{PORTAL_FORM}</aside>",
    ],
)
def test_a_short_page_with_a_log_in_box_beside_its_text_is_content(body):
    assert wall(page(body)) is None


QR_LOGIN = (
    "<main><div class='ingia'><div class='msimbo'><canvas id='qr' width='240' height='240'>"
    "</canvas></div><h1>Changanua ili uingie</h1><p>Fungua programu kwenye simu yako.</p>"
    "<a class='kiungo' href='/login/phone?next=%2Fchat%2F55'>Tumia nambari ya simu</a></div>"
    "</main>"
)


def test_a_qr_code_to_scan_with_a_way_in_beside_it_is_a_sign_in_wall():
    """A messenger's or an e-ID's web log-in: a code to scan with its app, and another way
    in (a phone number), in any language."""
    assert wall(page(QR_LOGIN)) == "sign_in"


@pytest.mark.parametrize(
    "body",
    [
        # A payment's code: nothing leads to a sign-in.
        (
            "<main><h1>Lipa kwa simu</h1><img class='qr-code' src='/pay.png' alt='QR'>"
            "<p>Jumla: 12,000 TSh.</p></main>"
        ),
        # An app's download code; the site's log-in link is in its header only.
        (
            "<header><a href='/login'>Ingia</a></header><main><h1>Pakua programu</h1>"
            "<img src='/app.png' alt='QR code'><p>Changanua kwa simu yako.</p></main>"
        ),
    ],
)
def test_a_qr_code_without_a_way_in_of_its_own_is_content(body):
    assert wall(page(body)) is None


def test_an_identity_providers_hosted_sign_in_is_a_sign_in_wall():
    assert wall(page(OKTA_LIKE, title="Shirika")) == "sign_in"


def test_an_identity_providers_name_beside_real_content_is_content():
    assert wall(page(f"<main><h1>Bandari</h1><p>{ARTICLE * 3}</p></main>{OKTA_LIKE}")) is None


# ---------------------------------------------------------------- consent

TCF_STUB = "<script>window.__tcfapi=function(){};</script>"
CONSENT_STEP = (
    "<div class='hatua'><header><img src='/nembo.svg' alt='Habari'></header><main>"
    "<h1>Habari inajali faragha yako</h1><p>Tunahitaji idhini yako kuhifadhi cookies na "
    "kuchakata data yako binafsi pamoja na washirika wetu 142.</p><div>"
    "<button class='cmp-accept'>Nakubali</button><button class='cmp-settings'>Mipangilio"
    "</button></div></main></div>"
)


def test_a_consent_step_drawn_as_a_page_is_a_consent_wall():
    assert wall(page(CONSENT_STEP, head=TCF_STUB)) == "consent"


def test_an_accept_button_without_a_consent_platform_is_no_wall():
    assert wall(page(CONSENT_STEP)) is None


def test_a_consent_dialog_that_asks_to_pay_is_a_consent_wall_not_a_paywall():
    dialog = (
        "<div id='onetrust-banner-sdk' role='dialog'><p>Sisi na washirika wetu tunatumia "
        "cookies kwa madhumuni ya kiufundi na, kwa idhini yako, kwa matangazo.</p>"
        "<p>Subscribe to continue reading without ads.</p><button>Kubali</button>"
        "<button>Kataa</button></div>"
    )
    assert wall(page(dialog)) == "consent"
    # A subscribe prompt under an article with no dialog over it is still a paywall's.
    assert wall(page(f"<main><p>{ARTICLE}</p><p>Subscribe to continue reading.</p></main>")) == (
        "paywall"
    )


# ---------------------------------------------------------------- empty pages, defaults


def test_an_empty_listing_without_scripts_is_an_empty_page():
    body = "<div id='maudhui'><table class='orodha'><tbody></tbody></table></div>"
    assert wall(page(body)) == "empty"


def test_a_web_servers_default_picture_is_a_parked_page():
    body = "<div id='container'><a href='/'><img src='iisstart.png' alt='IIS'></a></div>"
    assert wall(page(body, title="Seva")) == "parked"


SERVER_TEXT = (
    "<p>Ukurasa huu ni wa kawaida baada ya kusakinisha seva kwenye mfumo huu. " * 12 + "</p>"
    "<p>Mipangilio iko katika faili za usanidi; badilisha ukurasa huu kabla ya kuweka "
    "tovuti yako.</p>"
)


def test_a_web_servers_long_default_page_is_parked_by_its_own_files():
    """Apache's default page on Ubuntu or Debian explains the server's configuration at
    length (past the words a wall is judged at): its logo, served from the server's own
    icons folder, names it."""
    body = f"<div class='page_header'><img src='icons/ubuntu-logo.png' alt=''></div>{SERVER_TEXT}"
    assert size(html_to_markdown(page(body), "https://site.test/").markdown) > 120
    assert wall(page(body)) == "parked"


def test_a_control_panels_default_page_is_parked_by_its_copyright_line():
    head = "<meta name='copyright' content='Copyright 1999-2026. Plesk International GmbH.'>"
    body = "<main><h1>Ukurasa wa kawaida</h1><p>Ukurasa huu umetengenezwa na jopo.</p></main>"
    assert wall(page(body, head=head)) == "parked"
    # the same words in a page's text: a note about its host
    assert wall(page(f"{body}<p>Copyright 1999-2026. Plesk International GmbH.</p>")) is None


def test_a_long_article_naming_a_servers_default_files_in_its_text_is_content():
    body = f"<h1>Seva mpya</h1><p>Faili icons/ubuntu-logo.png inaonyeshwa.</p>{SERVER_TEXT}"
    assert wall(page(body)) is None


def test_a_registrars_placeholder_is_parked_by_its_markup():
    body = (
        "<div class='parking'><h1 class='parking__domain'>duka-langu.test</h1><p>このドメイン"
        "は、登録サービスで取得されています。</p><p>ドメインの取得・運用なら国内最大級のドメイン"
        "登録サービス。.com / .jp / .net など500種類以上のドメインを取り扱っています。</p></div>"
    )
    assert wall(page(body, title="duka-langu.test")) == "parked"


def test_a_title_that_is_a_walls_own_name_outweighs_a_sentence_of_its_own():
    body = (
        "<h1>Future home of something quite cool.</h1><p>This site is hosted with us and is "
        "ready for your content, so check back with us again soon.</p>"
    )
    assert wall(page(body, title="Future Home of Something Quite Cool")) == "parked"
    # The same sentence under a heading that only quotes it, on a page titled otherwise.
    assert wall(page(body, title="Our favourite placeholder pages")) is None


def test_a_title_of_a_word_or_two_is_no_walls_own_name():
    """A song or a film may be called "Bad Gateway": its lyrics stay its own sentences."""
    lyrics = (
        "<main><h1>Bad Gateway</h1><p>I knocked upon your server late at night, the light "
        "was on but every door was shut, and all I got back was a gateway gone bad.</p></main>"
    )
    assert wall(page(lyrics, title="Bad Gateway")) is None


def test_a_shell_that_names_javascript_in_any_language_asks_for_it():
    body = (
        "<noscript><strong>Samahani, programu hii haifanyi kazi bila JavaScript. Iwashe "
        "kisha uendelee.</strong></noscript><div id='app'></div>"
    )
    head = '<script defer src="/js/app.7c1d.js"></script>'
    assert judged(page(body, head=head)) == (None, ["NEEDS_JAVASCRIPT"])


# ---------------------------------------------------------------- scripts and their words


def test_korean_words_are_counted_as_spaced_words():
    assert size("이 페이지는 성인 인증이 필요합니다") == 5
    assert size("这是一个页面") == 4  # Chinese: one token, and two characters a word


def test_a_heading_ending_in_a_vowel_sign_is_read_whole():
    headings = wall_phrases.kind("error_page").heading
    assert wall_phrases.is_heading(headings, "இணையதளம் பராமரிப்பில் உள்ளது")
    assert wall_phrases.is_heading(headings, "பராமரிப்பு")


THAI_NOTICE = (
    "<main><article><h1>ประกาศปิดปรับปรุงระบบ วันที่ 30 พฤศจิกายน</h1>"
    "<p>ธนาคารขอแจ้งปิดปรับปรุงระบบแอปพลิเคชันและอินเทอร์เน็ตแบงก์กิ้ง "
    "เพื่อเพิ่มประสิทธิภาพและความปลอดภัยในการให้บริการแก่ลูกค้าทุกท่าน</p>"
    "<p>ในช่วงเวลาดังกล่าว ลูกค้าจะไม่สามารถโอนเงิน ชำระค่าสินค้าและบริการ "
    "หรือเติมเงินผ่านแอปพลิเคชันได้ ส่วนการถอนเงินผ่านตู้เอทีเอ็มยังใช้งานได้ตามปกติ</p>"
    "</article></main>"
)


def test_a_thai_notice_of_maintenance_to_come_is_content():
    assert wall(page(THAI_NOTICE, title="ประกาศปิดปรับปรุงระบบ | ธนาคาร")) is None


def test_a_thai_maintenance_page_is_an_error_page():
    body = "<main><h1>ปิดปรับปรุงระบบ</h1><p>โปรดลองอีกครั้งในภายหลัง</p></main>"
    assert wall(page(body, title="ปิดปรับปรุงระบบ")) == "error_page"


# ---------------------------------------------------------------- error answers


def test_a_checks_block_page_that_says_it_blocks_the_region_is_a_region_block():
    html = "<div id='cf-error-details'><h1>Error 1009</h1><p>Access denied.</p></div>"
    assert of_status(403, {}, html, lambda: "region_block") == "region_block"
    assert of_status(403, {}, html, lambda: None) == "bot_check"


@pytest.mark.parametrize(
    ("code", "kind"), [("1009", "region_block"), ("1015", "rate_limited"), ("1020", "bot_check")]
)
def test_a_cdns_numbered_error_page_names_its_cause_in_any_language(code, kind):
    # The number is the CDN's own, the same under any wording: the page's words say nothing.
    html = (
        "<div id='cf-error-details'><h1><span class='cf-error-type'>Virhe</span>"
        f'<span class="cf-error-code">{code}</span></h1><p>Pääsy estetty.</p></div>'
    )
    assert of_status(429 if code == "1015" else 403, {}, html, lambda: "bot_check") == kind


@pytest.mark.parametrize("status", [403, 503])
@pytest.mark.parametrize("said", ["rate_limited", "bot_check"])
def test_a_firewalls_limit_is_its_block_of_this_client_whatever_the_status(status, said):
    html = "<p>Generated by Wordfence at noon.</p>"
    assert of_status(status, {}, html, lambda: said) == "bot_check"


def test_a_firewalls_error_page_stays_an_error_page():
    html = "<p>Generated by Wordfence at noon.</p>"
    assert of_status(503, {}, html, lambda: "error_page") == "error_page"
    assert of_status(429, {}, "<p>Too many requests</p>", lambda: "rate_limited") == (
        "rate_limited"
    )
