"""Walls of the classes a third writer's pages showed the detector missing (issue 54, half
c), each told by what the page is built of rather than its words: a paywall's own box, a
consent dialog standing where the main region's content should be, a runtime's error output
in place of the page, an app framework's loading line, a CDN's error for its origin, a
check's script sent with 401. Each with its near miss, which stays content. The pages are
written here, in languages the phrase data mostly does not hold."""

from __future__ import annotations

import pytest

from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.walls import of_status

LEAD = "Jiji lilipiga kura Jumanne kuidhinisha mpango mpya wa eneo la bandari."
ARTICLE = (
    "Halmashauri ya mji ilipiga kura Jumanne kuidhinisha mpango mpya wa eneo la bandari, "
    "na kumaliza mjadala wa miaka miwili kuhusu jinsi maghala ya zamani yanavyopaswa kutumika. "
)
CHROME = (
    "<header><a href='/'>Habari Pwani</a><nav><a href='/a'>Habari</a> <a href='/b'>Michezo</a>"
    " <a href='/c'>Biashara</a> <a href='/d'>Burudani</a></nav></header>"
)
FOOTER = "<footer><p>Haki zote zimehifadhiwa. Wasiliana nasi: habari@pwani.test</p></footer>"


def page(body: str, title: str = "Bandari", head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def judged(html: str) -> tuple[str | None, list[str]]:
    document = html_to_markdown(html, "https://site.test/habari/bandari-mpya")
    return document.wall, [w["code"] for w in document.warnings]


def wall(html: str) -> str | None:
    return judged(html)[0]


# ---------------------------------------------------------------- a paywall's own box

_BOX = (
    "<div class='{name}'><p>Makala hii ni kwa wanachama.</p>"
    "<a href='/jiunge'>Jiunge sasa</a> <a href='/ingia'>Ingia</a></div>"
)


@pytest.mark.parametrize("name", ["paywall-box", "article-paywall", "tp-container-inner"])
def test_a_short_article_cut_before_a_paywalls_box_is_a_paywall(name):
    body = f"{CHROME}<main><h1>Bandari mpya</h1><p>{LEAD}</p>{_BOX.format(name=name)}</main>"
    assert wall(page(body)) == "paywall"


@pytest.mark.parametrize(
    "box",
    [
        # the product's template, hidden until the meter runs out; a box with nothing to do
        _BOX.format(name="paywall-box").replace("<div ", "<div hidden ", 1),
        _BOX.format(name="paywall-box").replace("<div ", "<div style='display: none' ", 1),
        "<div class='paywall-box'><p>Makala hii ni kwa wanachama.</p></div>",
    ],
)
def test_a_paywall_box_hidden_or_without_a_way_on_is_no_paywall(box):
    body = f"{CHROME}<main><h1>Bandari mpya</h1><p>{LEAD}</p>{box}</main>"
    assert wall(page(body)) is None


def test_a_whole_article_beside_a_paywalls_box_is_no_paywall():
    body = f"<main><h1>Bandari mpya</h1><p>{ARTICLE * 25}</p>{_BOX.format(name='paywall')}</main>"
    assert wall(page(body)) is None


# ---------------------------------------------------------------- a consent dialog in place

_DIALOG = (
    "<div id='onetrust-banner-sdk' role='dialog' aria-modal='true'><h2>Tunajali faragha yako"
    "</h2><p>Sisi na washirika wetu 214 tunahifadhi na kusoma vidakuzi kwenye kifaa chako "
    "kwa matangazo yaliyobinafsishwa, kupima maudhui na kuboresha huduma. Unaweza kukubali "
    "au kukataa, na kubadilisha uamuzi wako wakati wowote katika mipangilio ya faragha.</p>"
    "<button id='onetrust-accept-btn-handler'>Kubali zote</button>"
    "<button id='onetrust-reject-all-handler'>Kataa</button></div>"
)
_MENU = "".join(f"<a href='/s/{n}'>Sehemu ya {n}</a> " for n in range(12))


def test_a_consent_dialog_where_the_main_regions_content_should_be_is_a_consent_wall():
    """The page around it (a menu, a footer) says a lot; its main region only a line."""
    main = f"<main><div class='placeholder'><p>Makala inahitaji idhini yako.</p>{_DIALOG}</div>"
    body = f"{CHROME}<nav>{_MENU}</nav>{main}</main>{FOOTER}"
    assert wall(page(body)) == "consent"


def test_a_main_region_holding_the_consent_dialog_alone_is_a_consent_wall():
    body = f"{CHROME}<nav>{_MENU}</nav><main>{_DIALOG}</main>{FOOTER}"
    assert wall(page(body)) == "consent"


def test_a_main_region_that_is_a_consent_dialog_is_a_consent_wall():
    """KVKK's consent page, its main region the dialog itself (Turkish: words the phrase data
    holds, since a bare dialog is known by what it says)."""
    dialog = (
        "<main role='dialog' aria-modal='true'><h1>Çerez tercihleriniz</h1><p>Sitemizde "
        "çerezler kullanılmaktadır. Kişisel verileriniz KVKK kapsamında işlenir; devam etmek "  # noqa: RUF001
        "için çerez tercihlerinizi belirleyin.</p><form method='post' action='/kvkk/onay'>"
        "<button name='k' value='1'>Tümünü kabul et</button><button name='k' value='0'>"
        "Reddet</button></form></main>"
    )
    assert wall(page(f"{CHROME}<nav>{_MENU}</nav>{dialog}{FOOTER}")) == "consent"


def test_an_empty_main_region_with_a_consent_dialog_elsewhere_is_no_consent_wall():
    """A shop whose template leaves <main> empty and puts its page beside it: the main
    region says nothing of a dialog that does not stand in it."""
    dialog = _DIALOG.replace("214", "kumi na nne", 1)
    shop = f"<div class='products'><h1>Viti vya ofisi</h1><p>{ARTICLE * 3}</p></div>"
    assert wall(page(f"{CHROME}<main id='maincontent'></main>{shop}{dialog}{FOOTER}")) is None


def test_an_article_under_a_consent_banner_stays_content():
    """However few the page's other controls (a banner's two buttons and a short menu are
    a consent step's few choices too): the banner stands beside the content."""
    article = f"<main><article><h1>Bandari mpya</h1><p>{ARTICLE * 2}</p></article></main>"
    assert wall(page(f"{CHROME}{article}{_DIALOG}{FOOTER}")) is None


# ---------------------------------------------------------------- a runtime's error output

_PHP = (
    "<b>Fatal error</b>:  Uncaught Error: Call to undefined function mysql_connect() in "
    "/home/duka/public_html/inc/db.php:7\nStack trace:\n#0 {main}\n  thrown in "
    "<b>/home/duka/public_html/inc/db.php</b> on line <b>7</b>"
)
_PYTHON = (
    'Traceback (most recent call last):\n  File "/srv/app/views.py", line 12, in show\n'
    "KeyError: 'bandari'"
)
_JAVA = 'Exception in thread "main" java.lang.NullPointerException\n\tat t.Duka.show(Duka.java:42)'
_TRACES = [_PHP, _PYTHON, _JAVA]


@pytest.mark.parametrize("trace", _TRACES)
def test_a_page_that_opens_with_a_runtimes_error_output_is_an_error_page(trace):
    assert wall(page(trace, title="Duka la Mafuta")) == "error_page"


def test_a_post_quoting_a_trace_after_its_question_is_no_error_page():
    question = (
        "<h1>Kwa nini seva yangu inaonyesha kosa hili?</h1><p>Nimehamisha tovuti yangu kwenye "
        "seva mpya ya PHP 8 jana jioni, na sasa kila ukurasa unaonyesha ujumbe ufuatao badala "
        "ya maudhui. Nimejaribu kuanzisha upya seva mara mbili bila mafanikio yoyote.</p>"
    )
    assert wall(page(f"{question}<pre><code>{_TRACES[0]}</code></pre>")) is None


# ---------------------------------------------------------------- an app's loading line

_BLAZOR = (
    "<div id='app'><svg class='loading-progress'><circle r='40%'></circle></svg></div>"
    "<div id='blazor-error-ui'>An unhandled error has occurred. <a href='' class='reload'>"
    "Reload</a></div><script src='_framework/blazor.webassembly.js'></script>"
)


def test_a_frameworks_shell_showing_only_its_error_line_needs_javascript():
    assert "NEEDS_JAVASCRIPT" in judged(page(_BLAZOR, title="Mfumo wa Maagizo"))[1]


def test_a_frameworks_error_line_in_a_wall_phrase_is_no_error_page():
    """The template's error line, hidden by its style sheet until the app fails, in the
    site's language: the app has not run, so the page is a shell, not an error page."""
    worded = _BLAZOR.replace("An unhandled error has occurred.", "Terjadi kesalahan server.")
    found, codes = judged(page(worded, title="Mfumo wa Maagizo"))
    assert found is None
    assert "NEEDS_JAVASCRIPT" in codes


def test_a_short_page_with_scripts_but_no_frameworks_boot_file_needs_nothing():
    body = "<h1>Saa za kazi</h1><p>Jumatatu hadi Ijumaa, saa tatu hadi kumi.</p>"
    html = page(body + "<script src='/js/menu.js'></script>", title="Saa za kazi")
    assert "NEEDS_JAVASCRIPT" not in judged(html)[1]


# ---------------------------------------------------------------- statuses


def test_a_cdns_error_for_its_origin_is_an_error_page_whatever_its_page_says():
    """Cloudflare's 52x pages name Cloudflare and carry its markup: the origin failed."""
    markup = "<div id='cf-error-details'>Connection timed out. Ray ID: 8f1a</div>"
    headers = {"server": "cloudflare"}
    for status in (520, 522, 524, 500):
        assert of_status(status, headers, markup, lambda: "bot_check") == "error_page"
        assert of_status(status, headers, markup, lambda: "region_block") == "error_page"


def test_a_401_is_a_sign_in_unless_a_checks_own_script_asks():
    qrator = '<script src="/__qrator/qauth_utm_v2_ce4b.js" defer></script>'
    assert of_status(401, {"server": "QRATOR"}, qrator, lambda: None) == "bot_check"
    # a sign-in form guarded by a CAPTCHA box is still a sign-in
    login = '<form><input type="password"><div class="g-recaptcha"></div></form>'
    assert of_status(401, {}, login, lambda: None) == "sign_in"


def test_a_firewalls_block_header_lets_the_page_say_why():
    """AWS WAF's `block` is a refusal whose page may say it blocks the region; its
    `captcha` is a check, decided by the header alone."""
    block = {"x-amzn-waf-action": "block"}
    assert of_status(403, block, "", lambda: "region_block") == "region_block"
    assert of_status(403, block, "", lambda: None) == "bot_check"
    captcha = {"x-amzn-waf-action": "captcha"}
    assert of_status(405, captcha, "", lambda: "region_block") == "bot_check"


# ---------------------------------------------------------------- a sign-in's long card

_FORUM_LOGIN = (
    "<main><form method='post' action='./ucp.php?mode=login'><h2>Ingia</h2><p>Ili kuona mada "
    "hii lazima uwe umesajiliwa na umeingia. Sehemu hii ni ya wanachama wa jukwaa pekee, "
    "kwa hiyo tafadhali ingia au jisajili ili kuendelea kusoma majadiliano yote.</p>"
    "<label>Jina la mtumiaji: <input type='text' name='username' autocomplete='username'>"
    "</label><label>Nenosiri: <input type='password' name='password'></label>"
    "<a href='./ucp.php?mode=sendpassword'>Nimesahau nenosiri</a><label><input "
    "type='checkbox' name='autologin'> Niingize kiotomatiki kila ninapotembelea</label>"
    "<input type='submit' name='login' value='Ingia'><h3>Jisajili</h3><p>Ili kuingia lazima "
    "ujisajili kwanza. Usajili ni bure na unachukua sekunde chache tu; baada ya hapo "
    "unaweza kuandika na kusoma mada zote za jukwaa.</p><a href='./ucp.php?mode=register'>"
    "Jisajili</a></form></main>"
)


def test_a_sign_in_form_whose_card_says_a_lot_is_a_sign_in():
    """A forum's "log in to read this topic": the form and its card are all the page shows,
    though they say more than a bare form does."""
    assert wall(page(f"{CHROME}{_FORUM_LOGIN}{FOOTER}", title="Jukwaa la Wavuvi")) == "sign_in"


def test_a_topic_beside_a_sign_in_box_stays_content():
    topic = f"<article><h1>Samaki wa Ziwa</h1><p>{ARTICLE * 3}</p></article>"
    html = page(f"{CHROME}{topic}{_FORUM_LOGIN.replace('main>', 'aside>')}{FOOTER}")
    assert wall(html) is None


# ---------------------------------------------------------------- a choice of e-IDs

_CHOOSER = (
    "<main><h1>Chagua kitambulisho</h1><p>Unaingia kwenye: Huduma za Ushuru</p><ul>"
    "<li><a href='/idp/bankid'><img src='/logos/bankid.svg' alt=''>BankID</a></li>"
    "<li><a href='/idp/minid'><img src='/logos/minid.svg' alt=''>MinID</a></li>"
    "<li><a href='/idp/buypass'><img src='/logos/buypass.svg' alt=''>Buypass</a></li></ul>"
    "</main>"
)


def test_a_choice_of_identity_providers_and_little_else_is_a_sign_in():
    assert wall(page(f"{CHROME}{_CHOOSER}{FOOTER}", title="Kuingia")) == "sign_in"


def test_a_help_page_naming_identity_providers_stays_content():
    help_text = f"<p>{ARTICLE * 3}</p>"
    html = page(f"{CHROME}{_CHOOSER.replace('</main>', help_text + '</main>')}{FOOTER}")
    assert wall(html) is None


def test_a_short_page_with_a_malformed_link_is_read():
    """A link urllib cannot read (an unclosed IPv6 bracket) is no link: no traceback."""
    links = "<a href='http://[::1'>nyumbani</a><a href='http://[::1]:99999/'>x</a>"
    html = page(f"<h1>Tuonekane hivi karibuni</h1><p>Tovuti hii inajengwa.</p>{links}")
    assert wall(html) is None


# ---------------------------------------------------------------- half d's classes
# (issue 54, half d: the fourth writer's pages; none of them is copied here)


def test_a_choice_of_providers_by_a_brokers_own_links_is_a_sign_in():
    """Providers no list knows, listed by an identity broker ("/idp/<name>")."""
    names = ("Benki ya Pwani", "Benki ya Ziwa", "Simu ya Mkononi")
    items = "".join(f"<li><a href='/idp/p{i}'>{n}</a></li>" for i, n in enumerate(names))
    chooser = f"<main><h1>Jitambulishe</h1><p>Chagua njia ya kuingia.</p><ul>{items}</ul></main>"
    assert wall(page(f"{CHROME}{chooser}{FOOTER}", title="Jitambulishe")) == "sign_in"
    one = f"<main><h1>Jitambulishe</h1><p>{LEAD}</p><a href='/idp/p0'>{names[0]}</a></main>"
    assert wall(page(f"{CHROME}{one}{FOOTER}")) is None


def test_an_identity_platforms_sign_in_drawn_by_its_script_is_a_sign_in():
    """Microsoft Entra's converged sign-in: its body hidden until its script runs."""
    head = "<script src='https://aadcdn.msftauth.net/shared/1.0/content/js/Converged.js'></script>"
    body = "<div style='display:none'><input type='email' name='loginfmt'></div>"
    assert wall(page(body, title="Ingia", head=head)) == "sign_in"


def test_a_consent_step_whose_main_region_is_named_for_it_is_a_consent_wall():
    text = (
        "Sisi na washirika wetu tunatumia vidakuzi kupima matumizi ya tovuti na kuonyesha "
        "matangazo yanayokufaa. Unaweza kubadilisha chaguo lako wakati wowote chini ya ukurasa. "
        "Kwa ridhaa yako, washirika wengine pia hukusanya data kuhusu jinsi unavyovinjari, hata "
        "nje ya tovuti zetu."
    )
    buttons = "<div class='consent-page__buttons'><button id='accept-all'>Kubali</button></div>"
    links = "<p><a href='/faragha'>Sera ya faragha</a> <a href='/washirika'>Washirika 812</a></p>"
    main = f"<main class='consent-page__main'><h1>Karibu</h1><p>{text}</p>{buttons}{links}</main>"
    assert wall(page(main, title="Faragha")) == "consent"
    article = f"<main class='content'><h1>Bandari</h1><p>{ARTICLE * 2}</p>{buttons}</main>"
    assert wall(page(article)) is None
    # ...with no box of its own inside, in a wrapper named for consent around it
    plain = "<button>Kubali</button> <a href='/usajili'>Soma bila matangazo</a>"
    step = f"<main class='consent-page__main'><h1>Karibu</h1><p>{text}</p>{plain}{links}</main>"
    assert wall(page(f"<div class='consent-page'>{step}</div>", title="Faragha")) == "consent"


def test_the_address_of_a_page_of_its_own_site_is_no_platforms_markup():
    """An article's slug names its subject (domain parking): its own links, canonical and
    og:url say nothing of a parking service; a parking service's script does."""
    url = "https://site.test/blog/domain-parking"
    head = f"<link rel='canonical' href='{url}'><meta property='og:url' content='{url}'>"
    own = "<a href='/blog/domain-parking'>#</a>"
    body = f"<main><h1>Maegesho ya vikoa</h1><p>{LEAD}</p>{own}</main>"
    assert wall(page(body, title="Maegesho ya vikoa", head=head)) is None
    lander = head + "<script src='https://www.sedoparking.com/frmpark/lander.js'></script>"
    assert wall(page(body, title="Maegesho ya vikoa", head=lander)) == "parked"


_NOTICE = (
    "<h1>Scheduled maintenance</h1>{time}<p>Our customer portal is under maintenance on "
    "Thursday from 18 to 22. We apologise for the inconvenience.</p>"
)


def test_a_dated_notice_of_maintenance_is_content():
    """An article with its publication time is an item a site published, not its error page
    (a notice of maintenance, a post about a 404)."""
    dated = _NOTICE.format(time="<time datetime='2026-11-27'>27.11.2026</time>")
    assert wall(page(f"{CHROME}<main><article>{dated}</article></main>{FOOTER}")) is None
    undated = _NOTICE.format(time="")
    assert wall(page(f"<main>{undated}</main>", title="Scheduled maintenance")) == "error_page"
