"""Walls known by where their forms post, their choices lead or their pictures come from, by
a box named for what is gone, by a vendor's waiting room, and consent bars measured in every
script. Each with its near miss, which stays content."""

from __future__ import annotations

from ikigai_web.fetch.reading.extract import html_to_markdown
from ikigai_web.fetch.reading.walls import named

EXPLAINED = (
    "<p>Die Website enthält Informationen über alkoholische Getränke und richtet sich nur an "
    "Erwachsene in Ihrem Land.</p>"
)


def page(body: str, title: str = "Willkommen", head: str = "") -> str:
    return f"<html><head><title>{title}</title>{head}</head><body>{body}</body></html>"


def wall(html: str, url: str = "https://site.test/produkte/gin-7") -> str | None:
    return html_to_markdown(html, url).wall


# ---------------------------------------------------------------- an age check's own address


def test_a_form_posting_to_an_age_check_is_an_age_gate_whatever_its_selects_hold():
    form = (
        "<form method='post' action='/altersverifikation/age-verify'>"
        "<select name='t'><option>Tag</option></select><select name='m'><option>Monat</option>"
        "</select><select name='j'><option>Jahr</option></select><button>Weiter</button></form>"
    )
    assert wall(page(f"<div><h1>Bist du volljährig?</h1>{EXPLAINED}{form}</div>")) == "age_gate"


def test_a_choice_leading_to_an_age_check_is_an_age_gate():
    choices = (
        "<div><a href='/age-check/ok?r=%2Fgin'>Ja</a><a href='https://else.test/'>Nein</a></div>"
    )
    assert wall(page(f"<div><h1>Alterskontrolle</h1>{EXPLAINED}{choices}</div>")) == "age_gate"


def test_a_long_link_to_an_age_check_policy_is_no_age_gate():
    text = "<p>Der neue Gin reift sieben Monate in Eichenfässern und schmeckt nach Wacholder.</p>"
    link = "<a href='/age-check-policy'>Unsere Richtlinie zur Alterskontrolle im Detail lesen</a>"
    assert wall(page(f"<main><h1>Gin 7</h1>{text}{link}</main>")) is None


# ---------------------------------------------------------------- a check's own CAPTCHA form


def test_a_form_posting_to_a_captcha_address_is_a_bot_check():
    form = (
        "<form method='post' action='/captcha/verify'><img src='/captcha/image?key=1f2e' alt=''>"
        "<input type='text' name='answer'><button>OK</button></form>"
    )
    text = (
        "<p>Wykryliśmy nietypowy ruch z Twojej sieci, wpisz znaki z obrazka aby kontynuować "
        "przeglądanie strony.</p>"
    )
    html = page(f"<div><h1>Wykryto nietypowy ruch</h1>{text}{form}</div>", "Weryfikacja")
    assert wall(html) == "bot_check"


# ---------------------------------------------------------------- a QR code by its address


def test_a_qr_code_named_by_its_address_beside_a_sign_in_is_a_sign_in():
    body = (
        "<main><h1>Đăng nhập</h1><form method='post' action='/auth/login'>"
        "<img src='/zalo/qr?s=9a8b' alt='mã'><p>Quét mã bằng ứng dụng trên điện thoại của bạn "
        "để đăng nhập vào tài khoản</p><button>Đăng nhập bằng email</button></form></main>"
    )
    assert wall(page(body, "Đăng nhập")) == "sign_in"


def test_a_payment_qr_code_by_its_address_is_no_sign_in():
    body = (
        "<main><h1>Thanh toán đơn hàng</h1><img src='/pay/qr?order=77' alt='mã'>"
        "<p>Quét mã để thanh toán đơn hàng của bạn.</p><a href='/orders/77'>Xem đơn hàng</a></main>"
    )
    assert wall(page(body, "Thanh toán")) is None


# ---------------------------------------------------------------- an item gone, by its box


def test_a_box_named_for_a_removed_item_outweighs_its_line_of_why():
    body = (
        "<main><div class='listing-removed'><h1>Dieses Inserat ist beendet</h1><p>Der Anbieter "
        "hat das Inserat möglicherweise entfernt oder es wird nicht mehr zur Miete angeboten.</p>"
        "<a href='/s/berlin'>Weitere Unterkünfte in Berlin</a></div></main>"
    )
    assert wall(page(body, "Unterkunft"), "https://site.test/rooms/88123491") == "not_found"


def test_a_box_named_unavailable_on_a_product_is_no_not_found_page():
    body = (
        "<main><h1>Gin 7 Wacholder</h1><div class='size-unavailable'>Größe 0,7 l derzeit "
        "ausverkauft, die anderen Größen sind lieferbar und werden morgen versandt.</div></main>"
    )
    assert wall(page(body, "Gin 7"), "https://site.test/p/gin-7-wacholder") is None


# ---------------------------------------------------------------- a virtual waiting room


def test_a_vendors_waiting_room_is_rate_limited():
    head = "<link rel='stylesheet' href='https://static.queue-it.net/css/queue.css'>"
    body = (
        "<div><h1>Sie sind in der Warteschlange</h1><p>Wegen der hohen Nachfrage haben wir Sie "
        "in eine Warteschlange gestellt und leiten Sie weiter, sobald Sie an der Reihe sind.</p>"
        "<p>Ihre Nummer: 4812</p></div>"
    )
    assert wall(page(body, "Warteschlange", head)) == "rate_limited"


# ---------------------------------------------------------------- consent platforms


def test_a_portals_consent_platform_by_its_markup_and_accept_control_is_consent():
    head = "<script src='https://h.cmp.test/js/szn-cmp.js'></script>"
    body = (
        "<main><h1>Internet plný služeb</h1><p>Pro personalizaci reklamy potřebujeme váš souhlas "
        "s použitím cookies.</p><button class='cmp-accept'>Souhlasím</button>"
        "<a href='?nastaveni=1'>Nastavení</a></main>"
    )
    assert wall(page(body, "Souhlas", head)) == "consent"


def test_a_thai_article_under_a_cookie_bar_is_content():
    article = "".join(
        f"<p>{'วันที่สองไปดอยอินทนนท์จุดสูงสุดของประเทศไทยแนะนำให้ออกเดินทางแต่เช้า ' * 3}</p>"
        for _ in range(3)
    )
    bar = "<div class='cookie-bar'><p>เว็บไซต์นี้ใช้คุกกี้เพื่อพัฒนาประสบการณ์</p><button>ยอมรับ</button></div>"
    body = f"<main><article><h1>เที่ยวเชียงใหม่</h1>{article}</article></main>{bar}"
    assert wall(page(body, "เที่ยวเชียงใหม่")) is None


# ---------------------------------------------------------------- phrases as data


def test_a_refusal_that_names_the_visitors_location_is_a_region_block():
    said = "# A szolgáltatás az Ön tartózkodási helyéről nem érhető el\n\nKérjük, próbálja újra."
    assert named("Nem érhető el", said) == "region_block"


def test_a_hosts_page_for_a_site_without_its_filing_is_parked():
    said = "该网站暂时无法进行访问\n可能原因\n1、网站未备案或备案信息已被注销\n2、网站已到期。"
    assert named(None, said) == "parked"


# ---------------------------------------------------------------- a serial's locked chapter


def test_a_serials_locked_chapter_is_a_paywall():
    teaser = (
        "<p>Lin Feng pushed open the gate of the old sect and found the courtyard empty, the "
        "lanterns still burning as if someone had just left.</p>"
    )
    for box in ("vip-limit-wrap", "viewer-locked", "chapter-lock"):
        locked = (
            f"<div class='{box}'><h3>This chapter is for members</h3>"
            "<a href='/vip/buy'>Unlock with 20 coins</a></div>"
        )
        html = page(f"<main><h1>Chapter 212</h1>{teaser}{locked}</main>", title="Chapter 212")
        assert wall(html, "https://novels.test/book/88/chapter-212") == "paywall", box


def test_a_page_locked_in_place_by_its_menu_is_no_paywall():
    # A modal's "scroll-locked" body or a sticky header's lock is not a reader's.
    text = "".join(
        f"<p>The ferry leaves the harbour at {h} o'clock and reaches the island an hour later, "
        "weather permitting.</p>"
        for h in range(6, 12)
    )
    body = f"<div class='scroll-locked header-lock'><main><h1>Timetable</h1>{text}</main></div>"
    assert wall(page(body, title="Timetable")) is None
