"""Walls known by what the page is built of: a placeholder that leads nowhere into its site,
a server's default page by its title, a sign-in card titled by an h2, a hosted sign-in
widget, a federation's list of institutions, a CAPTCHA that says the traffic was too much.
Each with its near miss, which stays content."""

from __future__ import annotations

from ikigai_web.fetch.reading.extract import html_to_markdown

NAV = (
    "<header><a href='/'>Studio Nord</a><nav><a href='/work'>Work</a>"
    "<a href='/about'>About</a><a href='/contact'>Contact</a></nav></header>"
)


def page(body: str, title: str) -> str:
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>"


def wall(html: str, url: str = "https://site.test/kurse/anmeldung") -> str | None:
    return html_to_markdown(html, url).wall


# ---------------------------------------------------------------- a placeholder's own sentence


def test_a_placeholder_that_leads_nowhere_is_parked_whatever_its_sentence():
    body = (
        "<div class='cs'><h1>Sito in costruzione</h1><p>Il nuovo sito del Dipartimento di "
        "Scienze dei Dati sarà online a breve, con i corsi e gli orari.</p></div>"
    )
    assert wall(page(body, "Sito in costruzione")) == "parked"


def test_a_page_of_a_site_that_says_a_section_is_coming_is_content():
    body = (
        f"{NAV}<main><h1>Sito in costruzione</h1><p>Il nuovo sito del Dipartimento di "
        "Scienze dei Dati sarà online a breve, con i corsi e gli orari.</p></main>"
    )
    assert wall(page(body, "Sito in costruzione")) is None


def test_a_web_servers_default_page_is_known_by_its_title():
    text = " ".join(["This is the default welcome page used to test the server."] * 12)
    body = f"<div class='main_page'><div class='banner'>It works!</div><p>{text}</p></div>"
    assert wall(page(body, "Apache2 Debian Default Page: It works")) == "parked"


def test_an_article_about_the_default_page_is_content():
    text = " ".join(["Replace the default welcome page before you go live."] * 12)
    body = f"{NAV}<main><h1>Apache2 Debian Default Page explained</h1><p>{text}</p></main>"
    assert wall(page(body, "What the Apache default page means | Studio Nord")) is None


# ---------------------------------------------------------------- sign-in cards and widgets


def test_a_sign_in_card_titled_by_an_h2_with_its_notices_is_a_sign_in():
    card = (
        "<div class='login-box'><h2>इंटरनेट बैंकिंग में लॉगिन करें</h2>"
        "<p>आपका सत्र समाप्त हो गया है। कृपया दोबारा लॉगिन करें।</p>"
        "<form method='post' action='/retail/login/sendOtp'><label for='m'>पंजीकृत मोबाइल नंबर"
        "</label><input id='m' name='mobile'><input name='captcha'><button>OTP भेजें</button>"
        "</form><p><a href='/retail/login/userid'>यूज़र आईडी और पासवर्ड से लॉगिन करें</a></p>"
        "<div class='warn'>बैंक कभी भी फोन, ईमेल या SMS द्वारा आपका OTP, PIN या पासवर्ड नहीं "
        "मांगता।</div></div>"
    )
    foot = "<div class='foot'>© भारत ग्राम बैंक · <a href='/security-tips'>सुरक्षा सुझाव</a></div>"
    html = page(f"<div class='top'><a href='?lang=en'>English</a></div>{card}{foot}", "लॉगिन")
    assert wall(html, "https://bank.test/retail/accounts/statement") == "sign_in"


def test_a_hosted_sign_in_widget_with_its_banner_and_noscript_line_is_a_sign_in():
    head = "<link href='https://cdn.test/okta-signin-widget/7.2/css/okta-sign-in.min.css'>"
    body = (
        "<div id='okta-login-container'></div><noscript><p>このページを表示するにはJavaScriptが"
        "必要です。お使いのブラウザの設定でJavaScriptを有効にしてください。</p></noscript>"
        "<div class='applogin-banner'><h1>Jira Software</h1><p>このアプリにアクセスするには"
        "Jira Softwareにサインインしてください</p><p>Sign in with your company account to "
        "reach Jira Software; ask the service desk if you cannot.</p></div>"
    )
    html = f"<html><head><title>サインイン</title>{head}</head><body>{body}</body></html>"
    assert wall(html, "https://corp.test/app/jira/sso/saml") == "sign_in"


def test_a_federations_list_of_institutions_is_a_sign_in():
    options = "".join(
        f"<option value='https://idp.uni-{n}.test/idp/shibboleth'>Universität {n}</option>"
        for n in ("freiburg", "koeln", "jena", "kiel")
    )
    body = (
        "<div id='content'><h1>Anmeldung über Ihre Einrichtung</h1><p>Der Dienst erfordert "
        "eine Anmeldung. Bitte wählen Sie Ihre Heimateinrichtung aus der Liste.</p>"
        f"<form method='post' action='/DS/WAYF'><select name='user_idp'>{options}</select>"
        "<input type='submit' value='Auswählen'></form></div>"
    )
    assert wall(page(body, "Auswahl der Heimatorganisation"), "https://ds.test/DS/WAYF") == (
        "sign_in"
    )


def test_a_list_of_universities_to_pick_a_course_from_is_no_sign_in():
    options = "".join(
        f"<option value='/kurse/{n}'>Universität {n}</option>" for n in ("freiburg", "koeln")
    )
    body = (
        f"{NAV}<main><h1>Kurse finden</h1><p>Wählen Sie eine Universität, um ihre Kurse zu "
        f"sehen.</p><form action='/kurse'><select name='uni'>{options}</select>"
        "<input type='submit' value='Anzeigen'></form></main>"
    )
    assert wall(page(body, "Kurse finden")) is None


# ---------------------------------------------------------------- a check among other words


def test_a_captcha_that_says_the_traffic_was_too_much_is_a_bot_check():
    # Its words score a rate limit as high as its widget scores a check: the widget decides.
    head = "<script src='https://smartcaptcha.yandexcloud.net/captcha.js' defer></script>"
    body = (
        "<main><h1>Сіз робот емес екеніңізді растаңыз</h1><p>Сіздің желіңізден тым көп сұрау "
        "келіп түсті. Сайтқа кіруді жалғастыру үшін төмендегі белгіні қойыңыз.</p><form "
        "method='post' action='/checkcaptcha'><div class='smart-captcha' data-sitekey='ysc1_x'>"
        "</div><button>Жалғастыру</button></form></main>"
    )
    html = f"<html><head><title>Almatelecom</title>{head}</head><body>{body}</body></html>"
    assert wall(html) == "bot_check"


# ---------------------------------------------------------------- a shell that failed to load


def test_a_shell_whose_noscript_explains_its_failure_needs_javascript():
    body = (
        "<div class='preloader'><div role='status' aria-label='Loading'></div>"
        "<div class='preloader__text'>Loading Dashboard</div></div><div id='reactRoot'></div>"
        "<script src='/public/build/app.js'></script><noscript>If you're seeing this the "
        "dashboard has failed to load its application files. This could be caused by your "
        "reverse proxy settings, a subpath that the root_url setting does not include, a "
        "local build that was never made, or a browser that is not supported.</noscript>"
    )
    document = html_to_markdown(page(body, "Dashboard"), "https://ops.test/d/ups")
    assert "NEEDS_JAVASCRIPT" in [w["code"] for w in document.warnings]


def test_a_short_page_with_a_noscript_note_is_no_shell():
    body = (
        "<main><h1>Opening hours</h1><p>Monday to Friday, nine to five; Saturday, ten to "
        "two. Closed on public holidays and between Christmas and New Year, when the shop "
        "takes stock and the workshop is cleaned.</p></main><script src='/a.js'></script>"
        "<noscript>Our booking form needs JavaScript.</noscript>"
    )
    document = html_to_markdown(page(body, "Opening hours"), "https://shop.test/hours")
    assert "NEEDS_JAVASCRIPT" not in [w["code"] for w in document.warnings]


def test_a_short_default_page_of_nginx_is_parked():
    body = "<h1>Welcome to nginx!</h1><p>If you see this page, the web server works.</p>"
    assert wall(page(body, "Welcome to nginx!")) == "parked"


def test_a_shell_asking_for_javascript_by_its_persian_name_needs_javascript():
    body = (
        "<noscript>برای استفاده از پرداخت‌یار، جاوااسکریپت مرورگر خود را فعال کنید.</noscript>"
        "<div id='__next'></div><script src='/_next/static/chunks/main.js'></script>"
    )
    document = html_to_markdown(page(body, "پرداخت‌یار"), "https://pay.test/dashboard")
    assert "NEEDS_JAVASCRIPT" in [w["code"] for w in document.warnings]


# ---------------------------------------------------------------- members' posts and lost items


def test_a_members_only_story_under_its_first_line_is_a_paywall():
    # Medium's own box, `meteredContent`, and a prompt in Spanish.
    body = (
        "<main><article><h1>Lo que aprendí cerrando mi restaurante</h1><p>Después de once "
        "años bajé la persiana por última vez.</p><div class='meteredContent'><h2>Esta "
        "historia es solo para miembros</h2><a href='/plans'>Hazte miembro</a></div>"
        "</article></main>"
    )
    document = html_to_markdown(page(body, "Lo que aprendí"), "https://blog.test/@c/lo-que-8c1f")
    assert document.wall == "paywall"


def test_a_free_story_that_invites_to_become_a_member_is_content():
    text = "".join(
        f"<p>Capítulo {n}: después de once años bajé la persiana de la casa, y los vecinos "
        "vinieron a despedirse con flores, pan y las recetas que nunca les di.</p>"
        for n in range(1, 12)
    )
    body = (
        f"<main><article><h1>Lo que aprendí</h1>{text}<div class='cta'>¿Te gustó? "
        "<a href='/plans'>Hazte miembro</a></div></article></main>"
    )
    assert html_to_markdown(page(body, "Lo que aprendí"), "https://blog.test/@c/x").wall is None


def test_a_blog_post_deleted_by_its_author_is_not_found():
    body = (
        "<main><div class='error-msg'><h2>抱歉\uff0c您要找的文章不存在</h2><p>此文章可能已被作者"
        "刪除或設為隱藏。</p><a href='/blog'>回到部落格首頁</a></div></main>"
    )
    assert wall(page(body, "小美的生活日記"), "https://blog.test/blog/post/224813") == "not_found"


# ---------------------------------------------------------------- warnings with a way on


WARNING = (
    "<div class='warn'><h2>Aviso de conteúdo</h2><p>O blog que você está prestes a visualizar "
    "pode conter conteúdo apenas para adultos. A plataforma não analisa nem endossa o conteúdo "
    "deste ou de qualquer outro blog hospedado aqui. Para mais informações sobre as nossas "
    "políticas de conteúdo, consulte os termos de serviço.</p>{choices}</div>"
)


def test_a_content_warning_whose_choices_lead_on_or_away_is_an_age_gate():
    choices = (
        "<a href='?warned=1'>Entendo e quero continuar</a>"
        "<a href='https://other.test/'>Não quero continuar</a>"
    )
    html = page(WARNING.format(choices=choices), "Aviso de conteúdo")
    assert wall(html, "https://diario.test/2026/11/post.html") == "age_gate"


def test_a_content_warning_over_links_into_its_site_is_content():
    # Choices that lead elsewhere on the site are a page's own links, not a gate's way on.
    choices = "<a href='/sobre'>Sobre este blog e o autor</a><a href='/arquivo'>Arquivo</a>"
    html = page(WARNING.format(choices=choices), "Aviso de conteúdo")
    assert wall(html, "https://diario.test/2026/11/post.html") is None


# ---------------------------------------------------------------- members sign in


MEMBERS = (
    "<div class='board-login'><h2>회원 전용 게시판입니다</h2><p>로그인 후 이용하실 수 있습니다."
    "</p>{form}</div>"
)
FORM = (
    "<form method='post' action='/member/login'><label>아이디<input name='user_id'></label>"
    "<label>비밀번호<input type='password' name='passwd'></label><button>로그인</button></form>"
)


def test_a_members_board_behind_a_log_in_form_is_a_sign_in():
    html = page(MEMBERS.format(form=FORM), "로그인 - 동네요가")
    assert wall(html, "https://yoga.test/board/notice/215") == "sign_in"


def test_a_members_prompt_with_no_log_in_form_stays_a_paywall():
    html = page(MEMBERS.format(form="<a href='/join'>회원 가입</a>"), "공지사항 - 동네요가")
    assert wall(html, "https://yoga.test/board/notice/215") == "paywall"


# ---------------------------------------------------------------- log-on pages of work


def test_a_log_on_page_with_its_lines_asking_for_javascript_is_a_sign_in():
    body = (
        "<div id='header'><img src='/adfs/portal/logo/logo.png' alt='Groupe Valmont'></div>"
        "<div id='loginMessage'>Connectez-vous avec votre compte d'organisation</div>"
        "<form method='post' action='/adfs/ls/'><label>ID d'utilisateur</label>"
        "<input name='UserName' type='email'><label>Mot de passe</label>"
        "<input name='Password' type='password'><span role='button'>Connexion</span></form>"
        "<p>Pour toute difficulté de connexion, contactez le Service Desk au 3456.</p>"
        "<div id='noScript'><p>JavaScript est requis. Ce navigateur web ne prend pas en charge "
        "JavaScript ou JavaScript est désactivé dans ce navigateur web.</p><p>Pour savoir si "
        "votre navigateur web prend en charge JavaScript ou pour activer JavaScript, consultez "
        "l'aide du navigateur web.</p></div>"
    )
    assert wall(page(body, "Connexion"), "https://sso.test/adfs/ls/?SAMLRequest=x") == "sign_in"


def test_a_gateways_form_its_script_shows_is_the_pages_sign_in():
    body = (
        "<div id='auth' style='display:none'><form method='post' action='/p/u/logon.do'>"
        "<div>Meld u aan met uw netwerkaccount.</div><label>Gebruikersnaam<input name='login'>"
        "</label><label>Wachtwoord<input type='password' name='passwd'></label>"
        "<input type='submit' value='Aanmelden'></form></div>"
    )
    assert wall(page(body, "Gateway"), "https://gw.test/logon/LogonPoint/index.html") == "sign_in"


def test_a_hidden_log_in_dialog_beside_an_article_is_no_sign_in():
    text = " ".join(["De gemeente opent in maart een nieuw zwembad aan de rand van de stad."] * 6)
    body = (
        f"{NAV}<main><h1>Nieuw zwembad</h1><p>{text}</p></main><div style='display:none'>"
        "<form action='/login'><input name='user'><input type='password' name='pw'>"
        "<button>Inloggen</button></form></div>"
    )
    assert wall(page(body, "Nieuw zwembad | Studio Nord")) is None


def test_labels_of_a_form_laid_out_in_a_table_are_words_apart():
    # text_content() would run each label into the next ("Đăng nhậpEmail"): none is known.
    body = (
        "<form method='post' action='/login'><div>VCoin</div><div>Đăng nhập</div><div>Email"
        "</div><input type='email' name='email'><div>Mật khẩu</div><input type='password' "
        "name='password'><button>Đăng nhập</button><a href='/forgot'>Quên mật khẩu?</a>"
        "<a href='/signup'>Tạo tài khoản VCoin</a><div>hoặc</div><a href='/oauth/google'>Tiếp "
        "tục với Google</a><a href='/oauth/apple'>Tiếp tục với Apple</a></form>"
        "<h2>Đăng nhập bằng mã QR</h2><p>Mở ứng dụng VCoin trên điện thoại và quét mã để đăng "
        "nhập.</p>"
    )
    assert wall(page(body, "Đăng nhập | VCoin"), "https://vcoin.test/vi/login") == "sign_in"


def test_an_account_chooser_is_a_sign_in_in_any_language():
    body = (
        "<h1>Scegli un account</h1><div>per continuare su Fogli</div><ul><li><div role='link'>"
        "<div>Marta Ricci</div><div>marta.ricci@gufo.test</div><div>Disconnesso</div></div></li>"
        "<li><div role='link'>Usa un altro account</div></li></ul>"
    )
    assert wall(page(body, "Fogli \u2013 Scegli un account"), "https://accounts.gufo.test/v3") == (
        "sign_in"
    )


def test_a_contact_page_with_an_address_to_write_to_is_content():
    body = (
        f"{NAV}<main><h1>Contatti</h1><p>Scrivici per preventivi e appuntamenti.</p>"
        "<a href='mailto:info@studio.test'>info@studio.test</a></main>"
    )
    assert wall(page(body, "Contatti | Studio Nord")) is None


# ---------------------------------------------------------------- prompts and their gates


ARTICLE = (
    "<p>Festivalen i Lakselv har sluppet resten av artistene til årets utgave, og blant navnene "
    "er flere kjente band.</p><p>\u2013 Vi har aldri hatt et sterkere program, sier festivalsjefen."
    "</p><p>Festivalen arrangeres i juli, og dagspass koster 1 290 kroner.</p>"
)


def test_a_free_article_closed_by_a_subscribe_button_is_content():
    body = f"{NAV}<article>{ARTICLE}<div class='cta'><a href='/abonnement'>Bli abonnent</a></div>"
    assert wall(page(body + "</article>", "Festival | Avisa")) is None


def test_a_gate_with_its_button_and_its_question_is_a_paywall():
    gate = (
        "<div class='cta'><a href='/abonnement'>Bli abonnent</a></div><div class='login'>"
        "Allerede abonnent?</div>"
    )
    body = f"{NAV}<article>{ARTICLE}{gate}</article>"
    assert wall(page(body, "Festival | Avisa")) == "paywall"


def test_an_age_check_that_asks_to_log_in_is_an_age_gate():
    body = (
        "<div class='adult'><p>이 정보내용은 청소년유해매체물로서 19세 미만의 청소년이 이용할 수 "
        "없습니다.</p><div><a href='/login?returnUrl=%2Fdetail'>19세 이상 로그인 후 이용</a>"
        "<a href='/'>19세 미만 나가기</a></div></div>"
    )
    assert wall(page(body, "웹툰"), "https://toon.test/detail?titleId=7") == "age_gate"


# ---------------------------------------------------------------- frames


def test_a_frameset_reads_its_noframes_as_its_body():
    html = (
        "<html><head><title>konzert-fotos.test</title></head><frameset rows='100%,*'>"
        "<frame src='https://parking.test/?domain=konzert-fotos.test'><noframes><body>"
        "<h1>konzert-fotos.test</h1><p>Diese Domain wurde bei einem Hoster registriert und ist "
        "derzeit geparkt.</p></body></noframes></frameset></html>"
    )
    found = html_to_markdown(html, "https://konzert-fotos.test/")
    assert "<p>" not in found.markdown
    assert found.wall == "parked"


# ---------------------------------------------------------------- o: lists, age checks, blocks


def test_an_encyclopedias_list_item_that_says_subscribers_only_is_content():
    # A bold term splits the item into text nodes; the content's own line is the item's.
    items = (
        "<li><b>Hard paywall</b> \u2013 all of the content is for subscribers only.</li>"
        "<li><b>Metered paywall</b> \u2013 a few free articles a month, then a prompt.</li>"
    )
    body = (
        f"{NAV}<main><h1>Paywall</h1><p>A paywall limits access to a site's content to "
        f"readers who pay for it.</p><h2>Kinds</h2><ul>{items}</ul></main>"
    )
    assert wall(page(body, "Paywall - Encyclopedia")) is None


def test_an_age_check_with_the_warnings_the_law_makes_it_show_is_an_age_gate():
    body = (
        "<div class='gate'><p>このサイトはお酒に関する情報が含まれているため、20歳以上の方を対象と"
        "しています。</p><h2>あなたは20歳以上ですか\uff1f</h2><div><button>はい</button><button>いいえ"
        "</button></div><p>飲酒は20歳になってから。飲酒運転は法律で禁止されています。妊娠中や授乳"
        "期の飲酒は、胎児・乳児の発育に悪影響を与えるおそれがあります。</p><p>20歳未満の方の"
        "飲酒は法律で禁止されています。お酒は楽しく適量を。</p></div>"
    )
    assert wall(page(body, "蔵元酒造"), "https://sake.test/") == "age_gate"


def test_a_hidden_form_of_bare_fields_is_no_sign_in():
    # Discourse's form for password managers: no label, no heading, hidden on every page.
    body = (
        "<div><a href='https://news.test/'>news</a> <a href='https://calc.test/'>calc</a></div>"
        "<section id='main'></section><form id='hidden-login-form' method='post' "
        "action='/login' style='display: none;'><input name='username' type='text'>"
        "<input name='password' type='password'><input type='submit' value='Log In'></form>"
    )
    assert wall(page(body, "What's your range? - Forum"), "https://forum.test/t/range/1") != (
        "sign_in"
    )


# ---------------------------------------------------------------- sentences cut at a date


def test_a_notice_withdrawn_on_a_date_written_with_stops_is_not_found():
    # "dne 15. 1. 2026": the stops of a date do not cut the notice into short sentences.
    body = (
        "<main><h1>Úřední deska</h1><div class='alert'>Dokument „Rozpočet obce na rok 2026“ "
        "byl sejmut z úřední desky dne 15. 1. 2026 a již není k dispozici.</div><p><a "
        "href='/deska/'>Zpět na seznam dokumentů</a></p></main>"
    )
    assert wall(page(body, "Úřední deska"), "https://obec.test/deska/rozpocet.html") == "not_found"


def test_a_short_news_item_with_a_date_written_with_stops_is_content():
    body = (
        "<main><h1>Úřední deska</h1><p>Zastupitelstvo obce schválilo dne 15. 1. 2026 nový "
        "rozpočet, opravu návsi a příspěvek hasičům na novou stříkačku pro letní soutěže. "
        "Dokument o dotaci již není k dispozici.</p></main>"
    )
    assert wall(page(body, "Úřední deska"), "https://obec.test/deska/zprava.html") is None


# ---------------------------------------------------------------- a plugin's notice


def test_a_membership_plugins_notice_under_a_posts_first_line_is_a_paywall():
    body = (
        "<main><article class='post pmpro-no-access'><h1>Pronóstico del clásico</h1><div "
        "class='entry-content'><p>Ambos equipos llegan invictos. Nuestra apuesta…</p><div "
        "class='pmpro_content_message'>Este contenido es solo para miembros <a href='/planes/'>"
        "Oro</a>.<br>¿Ya eres miembro? <a href='/login/'>Inicia sesión aquí</a></div></div>"
        "</article></main>"
    )
    assert wall(page(body, "Pronóstico del clásico"), "https://tips.test/vip/clasico/") == "paywall"


def test_a_video_that_asks_to_sign_in_to_confirm_the_age_is_an_age_gate():
    body = (
        "<div class='ytp-error'><div class='ytp-error-content-wrap-reason'><span>Zaloguj się, "
        "aby potwierdzić swój wiek</span></div><div><span>Ten film może być nieodpowiedni dla "
        "niektórych użytkowników.</span></div><a href='/signin?next=%2Fwatch'>Zaloguj się</a>"
        "</div>"
    )
    assert wall(page(body, "VidTube"), "https://vid.test/watch?v=Qm7xZ3Ta0bE") == "age_gate"
