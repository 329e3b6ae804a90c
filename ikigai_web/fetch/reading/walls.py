"""Pages that are not the content: bot checks, sign-in walls, paywalls, consent walls, age
gates, region blocks, rate limits, not-found and error pages served as if they were pages,
parked domains, empty pages.

Pure functions over what the extractor has already built (the tree before extraction prunes
it, the page's declarations, the extracted markdown) and the raw HTML, which is only searched
when the page is short. What a page is decides first, its wording last: an error answer's
status (`of_status`); then the page's structure (a log-in form, a date-of-birth form, a
consent dialog standing where the content should be) and the markup of the platforms that
make walls (wall_marks.py); then the phrases such pages use, in the languages most used on
the web (wall_phrases.py). A soft-404 that says nothing recognisable is found by comparison
with the site's own not-found answer (soft404.py). A false alarm hides real content from the
model, which is worse than a miss: a page is only called a wall when several signals agree
and its own text is short. No rule names a site.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from functools import lru_cache
from itertools import accumulate, islice
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import unquote, urljoin, urlsplit

from ikigai_web.common.errors import WALLS, ErrorCode, ToolError
from ikigai_web.common.text import lazy, reaches
from ikigai_web.fetch.reading import wall_marks, wall_phrases

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from lxml.html import HtmlElement

    from ikigai_web.fetch.reading.signals import Signals

__all__ = [
    "WALLS",
    "Clues",
    "Verdict",
    "asks_for_javascript",
    "blocks",
    "boots_an_app",
    "clues",
    "failure",
    "judge",
    "maybe_not_found",
    "named",
    "of_status",
    "refused",
]
# Words of visible text read from the page: past this it is not a wall page, whatever it says.
_READ_WORDS = 1500
# Extracted words above which a page is content, not a wall (a paywall gate aside).
_SHORT = 120
_VERY_SHORT = 40
# A consent page or dialog says a lot (purposes, partners): up to this many words of it...
_CONSENT_WORDS = 700
# ...while the page outside its dialog shows at most this many.
_OUTSIDE_DIALOG = 40
_FORM_SHORT = 60  # a form is the page's main region when the page shows at most this much...
_AGE_SHORT = 90  # ...an age check's that says so, with the warnings the law makes it show
_CARD_WORDS = 250  # ...of a card at most this long: a page wrapped in one <form> is no card
_BESIDE_FORM = 25  # ...and at most this much outside it (or of the content's own beside it)
_WORD = re.compile(r"\w+")
_FORM_TEXT = 20_000  # characters of a form's text kept to compare with the content
# A main region holding a consent dialog and at most this many words beside it holds only a
# placeholder ("this content needs your consent"): the content is withheld.
_PLACEHOLDER = 25
# A paywalled article's visible part: at least this many words to be worth returning.
_TEASER = 20
# At most this many words shown when the declared paywalled part is empty or missing (whole
# articles whose declared part is missing run from 500 words up on the dev pages)...
_CUT_SHORT = 350
# ...and at most this many when only a prompt says so: a newsletter's "subscribe to keep
# reading" pop-up also sits under whole short posts (one dev page of 1,567).
_TEASER_SHORT = 250
_PROMPT_WORDS = 25  # a gate's prompt is a line of its own, not a sentence of an article
_LEAD_WORDS = 4  # ...that starts with it, or nearly
_LIST_ITEM = lazy(r"\s*(?:[-*+]|\d{1,3}[.)])\s")  # a line of markdown that is a list's item
_BARE_WORDS = 2  # a prompt of this many words alone on its line is a button's label...
_BARE_PROMPTS = 2  # ...and a gate shows at least this many such, where it says no more
_DECLARED_SHARE = 0.5  # the text shown is under half the length the page declares
_PART_WORDS = 10  # a declared paywalled part holding fewer words than this is empty
_NEEDED = 3  # points a wall needs...
_STRONG = 2  # ...at least one signal of this weight among them
_MARKUP = 1 << 22  # characters of a short page's source searched for a platform's markup
_JAVASCRIPT_WORDS = 40  # a shell asking for JavaScript says so in a line or two
# A runtime's error output, as it prints it (searched at the start of a short page's text).
_TRACE = lazy(
    r"(?:fatal|parse) error:\s|traceback \(most recent call last\)|stack ?trace:"
    r"|\bat [\w$.]+\([\w$]+\.java:\d+\)|server error in '[^']*' application"
    r"|exception in thread \"|uncaught (?:exception|error|\w+error)\b|\.rb:\d+:in `"
    r"|sqlstate\[\w+\]",
    re.IGNORECASE,
)
# The runtime's output comes first, before any of the page: at most a site's name or a
# warning's line before it, in the first characters of the text.
_TRACE_LEAD = 300
_TRACE_LEAD_WORDS = 12
LOADING_WORDS = 12  # an app's loading or error line ("Loading…", "An error has occurred")
_PROSE_SENTENCE = 12  # words: a sentence this long is prose...
_PROSE = 12  # ...and this many words of it that say nothing of a wall make a page content
_OWN_NAME_WORDS = 3  # a title of a wall's phrase outweighs its prose from this many words...
_OWN_NAME_CHARS = 5  # ...or characters of Chinese or Japanese
_DAYS = 28  # a select of at least this many numbers is a day or year of birth
_DIALOG_CHARS = 20_000  # of a dialog's text read for what it is about
_MATCHES = 50  # matches of a platform's pattern looked at, at most, to find one in markup
# Ties go to the kind that says more: the generic ones (an error, a page not found) last.
_KINDS = (
    "region_block",
    "rate_limited",
    "age_gate",
    "consent",
    "sign_in",
    "bot_check",
    "parked",
    "not_found",
    "error_page",
)

# Chinese and Japanese, written without spaces: two characters a word. Korean spaces its
# words, so its characters are not counted again.
_CJK = lazy(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")
_FIRST_CJK = "\u3040"
# Thai, Lao, Myanmar and Khmer put no spaces between words either: about four letters a word.
_SOUTHEAST = lazy(
    r"[\u0e01-\u0e30\u0e40-\u0e46\u0e81-\u0eb0\u0ec0-\u0ec6\u1000-\u102a\u1780-\u17b3]"
)
_SOUTHEAST_LETTERS = 4
_LONE_MARKS = lazy(r"(?<!\S)[^\w\s]+(?!\S)")  # punctuation standing alone between spaces
# Two times of day in one sentence: the window a maintenance notice announces ("from 00:00
# to 07:00", "22:00 ~ 06:00").
_TIME_WINDOW = lazy(
    r"(?<!\d)[0-2]?\d[:\uff1a][0-5]\d(?!\d).*?(?<!\d)[0-2]?\d[:\uff1a][0-5]\d(?!\d)"
)
_SEGMENTS = lazy(r"\s+[|\u2013\u2014\u00b7:-]\s+|\s*[|\u00b7\u00bb\u203a/\uff5c]\s*")
_SENTENCES = lazy(r"(?<=[.!?\u3002\uff01\uff1f])\s*")
_LINK_TARGET = lazy(r"\]\([^)]*\)")
# What no phrase list can hold: a domain's own name before "is for sale".
_DOMAIN_FOR_SALE = lazy(r"[\w-]+(?:\.[\w-]+)+ (?:is|may be|might be) for sale")


def _any(*patterns: str) -> re.Pattern[str]:
    """Any of the patterns, in text already lower-case (three times faster than IGNORECASE)."""
    return lazy("|".join(f"(?:{p})" for p in patterns))


_PAYWALL = _any(
    r"subscribe (?:now )?to (?:continue|keep) reading",
    r"(?:to )?continue reading,? "
    r"(?:subscribe|sign in|log in|become|register|start)",
    # "to read the full post" alone is a teaser's link: a gate asks to subscribe or sign in.
    r"(?:subscribe|sign in|log in|register|become a (?:member|subscriber)) (?:now )?to "
    r"(?:read|unlock|access) (?:the (?:full|whole|rest of (?:the|this))|this) "
    r"(?:article|story|post|piece)",
    r"to (?:read|unlock|access) (?:the (?:full|whole|rest of (?:the|this))|this) "
    r"(?:article|story|post|piece),? (?:please )?(?:subscribe|sign in|log in|register)",
    r"(?:this|the) (?:article|story|content) is (?:only )?"
    r"(?:available|reserved|exclusive) (?:only )?(?:to|for) (?:subscribers|members|premium)",
    r"subscribers? only",
    r"(?:for|exclusive to) (?:paying )?subscribers",
    r"already (?:a )?(?:subscriber|member)\?",
    r"you(?:'ve| have) reached (?:your|the) "
    r"(?:limit|maximum) of free",
    r"you(?:'ve| have) (?:read|used) (?:all )?(?:your|\d+) "
    r"(?:free )?(?:articles|stories)",
    r"free articles? (?:left|remaining)",
    r"the rest of this (?:article|story) is for",
    r"unlock (?:this|the full) (?:article|story)",
    r"weiterlesen mit",
    r"(?:jetzt )?abonnieren,? um weiterzulesen",
    r"(?:dieser )?artikel ist (?:nur )?(?:für )?abonnenten",
    r"exklusiv für abonnenten",
    r"bereits abonnent",
    r"réservé aux abonnés",
    r"(?:pour )?lire la suite,? abonnez-vous",
    r"déjà abonné",
    r"il vous reste \d+ % de cet article",
    r"(?:exclusivo|solo|sólo) para (?:suscriptores|socios)",
    r"ya eres suscriptor",
    r"para seguir leyendo",
    r"(?:exclusivo|apenas) para assinantes",
    r"já é assinante",
    r"para continuar lendo",
    r"riservato agli abbonati",
    r"sei già abbonato",
    r"per continuare a leggere",
    r"alleen voor abonnees",
    r"al abonnee",
    r"lees verder met",
    r"доступ(?:ен|но) только (?:для )?подписчик",
    r"чтобы (?:продолжить чтение|прочитать (?:полностью|статью))",
    r"уже подписаны",
    r"有料会員限定",
    r"続きを読むには",
    r"会員登録(?:が必要|して続き)",
    r"(?:付费|订阅)(?:会员|用户)?专享",
    r"订阅(?:后)?(?:即可)?(?:阅读|继续阅读)全文",
    r"付费内容",
    r"继续阅读.{0,6}(?:订阅|登录)",
)
# Words of a check that scripts do by themselves, where a browser may get through.
_SCRIPTED_CHECK = _any(
    r"javascript",
    r"checking (?:your|the|if the) (?:browser|site)",
    r"just a moment",
    r"redirect",
    r"please (?:wait|stand by)",
    r"einen moment",
    r"un instant",
    r"un momento",
    r"um momento",
    r"een moment",
    r"подождите",
    r"お待ちください",
    r"请稍候",
)
# A player, a canvas, a frame, a web component's element (a tag name with a hyphen, which a
# script defines) or a framework's mount point (React's "root", Vue's "app", Next.js's
# "__next"...): a page saved without its scripts still names its app. A page with one is no
# empty page, though it has no text; a layout of ids without words or scripts ("content",
# "footer") is, and so is a page of nothing but images, or a listing served with no rows
# (see _EMPTY_LISTING).
_MEDIA = (
    ".//video | .//audio | .//canvas | .//iframe | .//embed | .//object"
    " | .//*[contains(name(), '-')] | .//*[@ng-version or @data-reactroot or @ng-app]"
    " | .//*[@id='root' or @id='app' or @id='__next' or @id='__nuxt' or @id='___gatsby'"
    " or @id='svelte' or @id='q-app' or @id='react-root' or @id='reactRoot']"
)
_EMPTY_LISTING = ".//table[not(.//td or .//th)] | .//ul[not(li)] | .//ol[not(li)]"
_IMAGE = lazy(r"!\[[^\]]*\]\([^)]*\)")  # an image in markdown: no text
_ALT = lazy(r"!\[([^\]]*)\]\([^)]*\)")  # ...but its alt text, where nothing else is
_SCRIPT = lazy(r"<script\b", re.IGNORECASE)
_FREE_KEYS = ("isAccessibleForFree", "isaccessibleforfree")
# A field that names the account: an e-mail address, a phone number, a user name, or the
# national ID number a public or a health portal signs its users in with (an "ID", an
# "eid", a CPF, a PESEL...), by the names its markup gives it (read with camel case split:
# "txtID" is "txt ID").
_IDENTIFIER = lazy(
    r"e-?mail|user|login|log-in|phone|mobile|msisdn|account|identifier|ident|signin|sign-in"
    r"|(?<![a-z])(?:e|u|national|personal|citizen|civil|emirates)?[-_]?id"
    r"(?:[-_]?(?:no|num|number|card))?(?![a-z])"
    r"|(?<![a-z])(?:cpf|dni|nif|pesel|tckn|ssn|personnummer|codice[-_]?fiscale)(?![a-z])",
    re.IGNORECASE,
)
_CAMEL = lazy(r"(?<=[a-z])(?=[A-Z])")
# The fields a person sees: not hidden by type, nor inside an element its own markup hides
# (a site's log-in form kept in every page with `display: none`, shown on a click).
_SEEN = (
    "not(ancestor-or-self::*[@hidden or "
    "contains(translate(@style, 'DISPLAYNOE ', 'displaynoe'), 'display:none')])"
)
_FIELDS = f"//input[(not(@type) or @type!='hidden') and {_SEEN}]"
_SCRIPTED_FIELDS = "//input[(not(@type) or @type!='hidden') and not(ancestor-or-self::*[@hidden])]"
_PASSWORD = f"//input[translate(@type, 'PASSWORD', 'password')='password' and {_SEEN}]"
# Containers a consent dialog or age check may be named as: a main region too (a consent
# step drawn as a page of its own, its main region named for consent).
_BOXES = "//*[@id or @class][self::div or self::section or self::aside or self::form or self::main]"
_TARGETS = "//a/@href | //form/@action | //button/@formaction | //a/@class | //button/@class"
_MOST_TARGETS = 2000
# A scholarly work's metadata, and the addresses publishing platforms sell its full text at
# or let a reader sign in through an institution (Shibboleth's WAYF, OpenAthens, Atypon's
# /action/ssostart): searched in the page's link and form targets, lower-cased.
_SCHOLARLY = (
    "//meta[starts-with(@name, 'citation_') or @name='dc.identifier' or @name='DC.identifier'"
    " or @name='prism.doi']"
)
_DOI = lazy(r"\b10\.\d{4,9}/\S")  # a Digital Object Identifier, as addresses carry it
_BUY_ACCESS = lazy(
    r"/action/(?:ecommerce|purchase|ssostart|showlogin)|wayf|shibboleth|openathens|"
    r"institution(?:al)?[-_/]?(?:login|access|sign)|/user/institution|checkout|purchase|/buy\b",
)
# A QR code by the name its image, canvas or drawing (or the box right around it) is given,
# in its class, id, alt text or label: "qr", "qrcode", "mdQrImg", "QRコード", "Mã QR".
_QR_NAMED = (
    "contains(translate(concat(@class, ' ', @id, ' ', @alt, ' ', @aria-label), 'QR', 'qr'), 'qr')"
    # ...or the address it is drawn from ("/line/qr?s=...", "qrcode.png"): its alt text may
    # spell "QR" in the page's own script
    " or contains(translate(@src, 'QRCODE', 'qrcode'), '/qr')"
    " or contains(translate(@src, 'QRCODE_', 'qrcode-'), 'qr-code')"
    " or contains(translate(@src, 'QRCODE', 'qrcode'), 'qrcode')"
)
# Fields a person writes in: an account's, a code's, or else a name or a message.
_WRITING = ".//textarea | .//input[not(@type) or @type='text']"
_CODE = lazy(r"code|otp|pin|token|captcha", re.IGNORECASE)
_MOST_FORMS = 8  # forms around a page's account fields that are read
_MOST_FIELDS = 32  # account fields whose forms are measured
# The page's chrome: what stands beside its content (a sidebar, the header, menus, footer).
_IN_CHROME = (
    "ancestor::*[self::aside or self::header or self::nav or self::footer"
    " or @role='complementary' or @role='banner' or @role='navigation']"
)
_OUTSIDE_CHROME = f"[not({_IN_CHROME})]"
_QR_CODE = (
    f"//body//*[self::img or self::canvas or self::svg][{_QR_NAMED} or ../self::*[{_QR_NAMED}]]"
    + _OUTSIDE_CHROME
)
_OWN_TARGETS = " | ".join(
    f"//{tag}{_OUTSIDE_CHROME}/@{attribute}"
    for tag, attribute in (("a", "href"), ("a", "class"), ("form", "action"), ("button", "class"))
)
_LOGOS = "//a//img/@src | //a//img/@alt | //button//img/@src | //button//img/@alt"
_BROKERED = (
    "//a[@href][contains(concat(' ', translate(@class, '-_', '  '), ' '), ' idp ')"
    " or contains(translate(@href, 'IDP', 'idp'), '/idp/')]"
)
# ...and the institutions a federation's discovery service lists ("choose your home
# organisation", Shibboleth's WAYF): each option's value is an identity provider's entity ID.
_FEDERATED = (
    "//option[contains(translate(@value, 'IDP', 'idp'), '/idp')"
    " or contains(translate(@value, 'SHIBOLETH', 'shiboleth'), 'shibboleth')]/@value"
)
_PROVIDERS = 2  # identity providers offered, at least, for a choice of them to be a sign-in
# The ways in a page's own region may offer (a link, a form, a button), the attributes that
# may name an electronic ID on them, and the elements of one read at most.
_WAYS_IN = f"//a{_OUTSIDE_CHROME} | //form{_OUTSIDE_CHROME} | //button{_OUTSIDE_CHROME}"
_NAMING = ("href", "action", "class", "id", "src", "alt")
_MOST_NODES = 200
_SITE_CHROME = ".//header | .//nav | .//footer"
# A provider an identity broker lists by its own links (see _BROKERED), in lower-cased marks.
_BROKER_MARK = lazy(r"/idp/|(?<![a-z0-9])idp(?![a-z0-9])")
_BESIDE_PROVIDERS = 40  # words a sign-in page shows beside its identity providers' ways in
# Where a link or form that signs in leads: the words sites use in those paths.
_WAY_IN = lazy(
    r"log-?in|log-?on|sign-?in|sign-?on|auth|session|sso|account|member|entrar|acced|iniciar|"
    r"ingres|anmeld|einlogg|connexion|connect|accedi|accesso|inlogg|aanmeld|logowanie|zaloguj|"
    r"giris|oturum|masuk|dang-?nhap|vhod|voiti|prihlas|belep|bejelentkez|kirjaudu|logga|"
    r"prijav|autentific|identif|cuenta|conta|konto|compte",  # searched lower-cased
)
# The controls a person chooses with, and the attributes that name them in markup.
_CHOICES = "//a | //button | //input[@type='submit' or @type='button']"
# A choice that names an account by its address: an account chooser's ("Choose an account").
_ACCOUNTS = (
    "//*[@role='link' or @role='button' or self::button"
    " or self::a[not(starts-with(normalize-space(@href), 'mailto:'))]]"
)
_MOST_ACCOUNTS = 20  # choices looked at for an address
_ADDRESS = lazy(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_CONTROL_NAMES = ("id", "class", "name", "data-action", "data-role")
_ACCEPT = lazy(r"accept|agree|consent|allow[-_]?all")  # searched lower-cased
_FEW_CHOICES = 8  # a consent step offers a few controls; a page with more is something else
_FEWEST_CHOICES = 2  # an age check's choices: yes and no...
_MOST_AGE_CHOICES = 3  # ...and perhaps a third ("leave")
_CHOICE_WORDS = 8  # words of a choice that names an age
_AGE_HEADINGS = "//h1 | //h2 | //h3"
_AGE_HEADING_WORDS = 12  # words of a heading that asks for an age
_ANSWER_WORDS = 2  # words of a yes or a no
# Where an age check's own form posts and its choices lead, outside the page's chrome.
_AGE_TARGETS = f"//form{_OUTSIDE_CHROME}/@action | //a{_OUTSIDE_CHROME}/@href"
# The labels a not-found page may name its box or picture by, outside the page's chrome.
_GONE_LABELS = (
    f"//body//*[self::div or self::section or self::main or self::article]{_OUTSIDE_CHROME}"
    f"/@*[name()='class' or name()='id'] | //img{_OUTSIDE_CHROME}/@src"
)
_HEADINGS = 8  # headings looked at for the age
# A question mark in several scripts (Greek's ";", Armenian's), or the plus of "18+".
_ASKS = lazy(r"[?\uff1f\u061f;\u055e+]")
# An age as a choice names it: 16 to 21, not a part of a longer number, a date or a time.
_AGE = lazy(r"(?<![\d.,:/])(?:1[6-9]|2[01])(?!\d|[.,:/]\d)")
_MAIN_REGION = "//main | //*[@role='main']"
_DIALOGS = "//*[@role='dialog' or @role='alertdialog' or @aria-modal='true'] | //dialog"
# An attribute and its quoted value; a URL's scheme; the page's own address in its head.
_ATTRIBUTE = lazy(r"""([\w:-]+)\s*=\s*(["'])(.*?)\2""", re.DOTALL)
_SCHEME = lazy(r"[a-z][a-z0-9+.-]*:")
_OWN_REL = lazy(r"""\brel\s*=\s*["']?(?:canonical|alternate|amphtml)\b""")
_ANCHOR = lazy(r"<a\s")
_OG_URL = lazy(r"""\bproperty\s*=\s*["']og:url["']""")
_DATED = "//article[.//h1 or .//h2][.//time[@datetime]]"
_UNDATED_KINDS = frozenset({"error_page", "not_found", "parked"})  # see Clues.dated
_STRUCTURE_WORDS = 800  # visible words past which no structure makes the page a wall
# A search field (by its type, its form's role or address, or the names search engines and
# site software give it)...
_SEARCH = (
    "//input[@type='search' or @name='q' or @name='s' or @name='query' or @name='search'] "
    "| //*[@role='search']//input | //form[contains(@action, 'search')]//input"
)
# ...counts as the page's own when no header or menu holds it: a not-found page offers one.
_SITE_PARTS = frozenset({"header", "nav"})
_SITE_ROLES = frozenset({"banner", "navigation"})
_NOT_TYPED = frozenset({"hidden", "submit", "button", "image", "reset", "checkbox", "radio"})
# The containers whose class or id may name the page an error page (WordPress's `error404`
# body class, a theme's `section.error-404`), and a prerenderer's status for the page.
_PAGE_PARTS = "//body | //main | //article | //section | //*[@role='main']"
_ERROR_MARK = lazy(
    r"(?<![a-z0-9])(?:error-?404|page-?404|404|error-?page|not-?found|page-?not-?found)"
    r"(?![a-z0-9])",
    re.IGNORECASE,
)
_PRERENDER_STATUS = "//meta[@name='prerender-status-code' or @name='render:status_code']/@content"
# What names the site itself: its declared name, and the text of its links home.
_SITE_NAMES = "//meta[@property='og:site_name' or @name='application-name']/@content | //a[@href]"
_NAMED = "//body//*[@class or @id]"
_ACTIONABLE = ".//a[@href] | .//button | .//form | .//input[@type='submit']"
_SHOWN = f"self::*[{_SEEN}]"  # a box a person sees, as a field is (_SEEN)
# A domain name standing alone: a name of letters, digits and hyphens, a dot, a top-level
# domain of letters (an IP address is no domain name).
_MOST_DOMAIN = 253
_DOMAIN_ALONE = lazy(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}", re.IGNORECASE)
MAYBE_MISSING_WORDS = 150  # words of content: a longer page is never its site's not-found page


class Clues(NamedTuple):
    """What the detector reads of a page, taken before extraction prunes the tree."""

    title: str = ""
    headings: tuple[str, ...] = ()  # h1
    subheadings: tuple[str, ...] = ()  # h2: a sidebar's too, so only read on a very short page
    text: str = ""  # the visible text, when the page has under _READ_WORDS words; else ""
    words: int = 0  # the visible words, counted up to _READ_WORDS
    password: bool = False
    noindex: bool = False
    media: bool = False  # a player, a canvas or a frame: content without text
    declared_cut: bool = False  # the JSON-LD says not free, and its paywalled part is empty
    declared_free: bool | None = None  # isAccessibleForFree, when declared
    declared_words: int = 0  # the article's length by its JSON-LD (wordCount, articleBody)
    # The structure of a short page (left at its default on a long one):
    identifier: bool = False  # a field for an e-mail address, phone or user name
    scripted_password: bool = False  # a password field its script shows, and none shown
    birth: bool = False  # fields for a date of birth (a date, selects of days or years)
    typed: bool = False  # a field to write text in (a search box, a contact form's message)
    form_words: int = 0  # words of the form around a password or account field
    form_text: str = ""  # ...and its text (the form of most words), for what stands beside it
    form_centred: bool = False  # ...and one such field is outside any sidebar, header or menu
    option_words: int = 0  # words of the options of its selects (a list of years, say)
    dialog_words: int = 0  # words inside a consent dialog (its container named for it)...
    outside_dialog: int = _READ_WORDS  # ...and outside it
    main_beside_dialog: int = -1  # ...and in the main region outside them (-1: none marked)
    age_box: bool = False  # a container named for an age check, or a choice that names an age
    region_box: bool = False  # a container named for a region block ("geo-block")
    # Two or three choices side by side, of a few words each, that lead nowhere else on the
    # site (buttons, this page with a query, its home, away): a warning's "continue" and
    # "leave", whatever their words.
    crossroads: bool = False
    gone_box: bool = False  # a container or picture named for an item gone ("listing-expired")
    # The page marks a main region and it holds no words: what it withholds stands elsewhere
    # (a consent platform's message, drawn over the empty region by its script).
    main_empty: bool = False
    way_in: bool = False  # a form, a field, a link or button that leads to signing in
    providers: int = 0  # identity providers its links and buttons offer (a choice of e-IDs)
    # One electronic ID offered as the way in, outside the page's header, menus and footer: a
    # link or form leading to a sign-in address, or a button, named for it (its address,
    # class or logo), or the box of an account field named for it (MitID's own box). A
    # national e-ID is an identity provider as Google is: "log in with DigiD" and little else.
    eid_way: bool = False
    # Words of the page's own links, buttons and forms that name an identity provider or
    # that a broker lists as one: a selector says what each e-ID is ("Cl@ve PIN: a one-time
    # PIN"), which is no content beside them.
    provider_words: int = 0
    # A field naming the account in a form that posts to a sign-in address (an e-mail for a
    # link, a phone for a one-time code): a sign-in form without a password.
    account_form: bool = False
    consent_choice: bool = False  # a control whose markup names it for accepting (consent)
    # A QR code drawn to be scanned (an image, canvas or drawing named for one) and a way in
    # (a link, form or button leading to a sign-in), both outside the page's header,
    # navigation and footer: a messenger's or an e-ID's log-in, scanned with its app.
    qr_sign_in: bool = False
    # A choice (a link, a button) outside the page's chrome whose text is an account's
    # e-mail address, not a link to write to it: an account chooser, in any language.
    account_choice: bool = False
    paywall_box: bool = False  # a shown box named for a paywall, with a way to act (subscribe)
    # A scholarly work's own metadata (the citation_ tags Google Scholar reads, Dublin Core's
    # identifier) and a way to buy it or to sign in through an institution (the publishing
    # platforms' purchase, checkout and WAYF addresses): a publisher's gate over its full text.
    scholarly_gate: bool = False
    # What makes a short page worth comparing with its site's not-found page (soft404.py):
    search_box: bool = False  # a search field of the page's own, not its header's
    error_marks: bool = False  # a container's class or id, or a prerender status, says 404
    site_title: bool = False  # the title is the site's name alone: the page names nothing
    # None of its links leads to its own site, not even its home page, and it has no search
    # box of its own: a page that may be the whole site (a placeholder) rather than a page of
    # one (a not-found page offers a way home, a menu or a search).
    leads_nowhere: bool = False
    # ...and every link it has leads to one other site: a host's, a registrar's or a site
    # builder's placeholder links to its maker alone.
    leads_away: bool = False
    # An article element with its heading and the time it was published: an item a site
    # published (a notice, a post), which no site's error, not-found or parked page is.
    dated: bool = False


class Verdict(NamedTuple):
    wall: str
    javascript: bool = False  # a check the page's scripts do: a browser may pass it


def clues(tree: HtmlElement, signals: Signals, url: str = "") -> Clues:
    """The detector's view of the parsed page (scripts already removed from `tree`)."""
    body = tree.find("body")
    title = _squash(tree.findtext(".//title") or "")[:300]
    words, text = _visible(body) if body is not None else (0, "")
    free, part = _declared(signals, tree)
    found = Clues(
        title=title,
        headings=tuple(_squash(h.text_content())[:200] for h in islice(tree.iter("h1"), 4)),
        subheadings=tuple(_squash(h.text_content())[:200] for h in islice(tree.iter("h2"), 4)),
        text=text,
        words=words,
        password=bool(tree.xpath(_PASSWORD)),
        noindex="noindex" in str(tree.xpath('string(//meta[@name="robots"]/@content)')).lower(),
        media=words == 0 and body is not None and _may_be_filled(body),  # only asked then
        declared_cut=free is False and part,
        declared_free=free,
        declared_words=_declared_words(signals) if free is False else 0,
    )
    if not text or words > _STRUCTURE_WORDS:
        return found
    # Counted in every script: a Thai article under a cookie bar is no page the bar fills.
    built = _structure(tree, _words(text), url)
    # A search box of the page's own is a way into its site too: a not-found page's.
    nowhere, away = _leads_nowhere(tree, url) if not built["search_box"] else (False, False)
    return found._replace(**built, leads_nowhere=nowhere, leads_away=away)


def _leads_nowhere(tree: HtmlElement, url: str) -> tuple[bool, bool]:
    """Whether no link of the page leads to another place on its own site, its root included
    (a fragment of itself does not count); False where the URL is unknown. And whether its
    links then all lead to one other site (by its domain's last two names, or three under a
    country's second-level domain: "co.uk")."""
    page = urlsplit(url)
    if not page.netloc:
        return False, False
    sites: set[str] = set()
    for href in tree.xpath("//a/@href")[:_MOST_TARGETS]:
        try:
            target = urlsplit(urljoin(url, str(href).strip()))
        except ValueError:  # a malformed address (an unclosed IPv6 bracket) leads nowhere
            continue
        if target.netloc == page.netloc and (target.path, target.query) != (page.path, page.query):
            return False, False
        if target.scheme in ("http", "https") and target.netloc != page.netloc:
            sites.add(_site_of(target.hostname or ""))
    return True, len(sites) == 1


def _site_of(host: str) -> str:
    names = host.lower().rstrip(".").removeprefix("www.").split(".")
    under_country = len(names) > 2 and len(names[-1]) == 2 and len(names[-2]) <= 3
    return ".".join(names[-3:] if under_country else names[-2:])


def _may_be_filled(body: HtmlElement) -> bool:
    """Whether a page without text holds media, a web component's element or a framework's
    mount point; a table or list the server sent with no rows is a listing that came back
    empty."""
    return bool(body.xpath(_MEDIA)) and not body.xpath(_EMPTY_LISTING)


def _structure(tree: HtmlElement, words: int, url: str) -> dict[str, Any]:
    """The forms and dialogs of a short page (see Clues)."""
    fields, scripted = _fields(tree)
    kinds = [str(f.get("type") or "text").lower() for f in fields]
    named = [_field_names(field) for field in fields]
    identifier = any(
        kind in ("email", "tel") or (kind == "text" and _IDENTIFIER.search(name))
        for kind, name in zip(kinds, named, strict=True)
    )
    birth = "date" in kinds or any(wall_marks.AGE_GATE.search(name.lower()) for name in named)
    birth = birth or _numbered_selects(tree)
    typed = bool(tree.xpath("//textarea")) or "search" in kinds
    signing = [
        f
        for f, kind, name in zip(fields, kinds, named, strict=True)
        if kind in ("password", "email", "tel") or (kind == "text" and _IDENTIFIER.search(name))
    ]
    dialog, age_box, region_box, dialogs = _boxes(tree)
    form = _sign_in_form(signing)
    choices = tree.xpath(_CHOICES)
    title = _squash(tree.findtext(".//title") or "").casefold()
    # Every target searched at once, lower-cased: a call a target cost 30 ms on a page of
    # 2,000 links.
    targets = "\n".join(str(target) for target in tree.xpath(_TARGETS)[:_MOST_TARGETS])
    providers = _providers(tree, targets)
    accounts = _account_choice(tree)  # an account to choose is a way in
    way_in = bool(signing) or providers >= _PROVIDERS or bool(_WAY_IN.search(targets.lower()))
    return {
        "way_in": way_in or accounts,
        "providers": providers,
        **_eid_ways(tree, signing, named=providers > 0),
        "identifier": identifier,
        "scripted_password": scripted,
        "birth": birth,
        "typed": typed,
        **form,
        "option_words": sum(len((o.text or "").split()) for o in tree.iter("option")),
        "dialog_words": dialog,
        "outside_dialog": max(words - dialog, 0) if dialog else _READ_WORDS,
        "main_beside_dialog": _main_beside(tree, dialogs) if dialog else -1,
        "age_box": age_box
        or _age_choice(choices)
        or _age_question(tree, choices, url)
        or _age_target(tree),
        "region_box": region_box,
        "crossroads": any(
            all(_answers(choice, url, most=_CHOICE_WORDS) for choice in box)
            for box in _side_by_side(choices)
        ),
        "gone_box": _gone_box(tree),
        "main_empty": _main_empty(tree),
        "account_form": any(map(_posts_to_sign_in, _forms_of(signing))),
        "consent_choice": len(choices) <= _FEW_CHOICES and any(map(_accepts, choices)),
        "qr_sign_in": _qr_sign_in(tree),
        "account_choice": accounts,
        "paywall_box": _paywall_box(tree),
        "scholarly_gate": _scholarly_gate(tree, targets.lower(), url),
        "search_box": _own_search(tree),
        "dated": bool(tree.xpath(_DATED)),
        "error_marks": _error_marks(tree),
        "site_title": bool(title) and title in _site_names(tree),
    }


def _scholarly_gate(tree: HtmlElement, targets: str, url: str) -> bool:
    """See Clues.scholarly_gate: a scholarly work by its metadata, or by a DOI in its own
    address or in the address that sells it (a blog post citing a paper links to its DOI,
    not to a purchase of it), and a way to buy it or to reach it through an institution."""
    ways = [target for target in targets.split("\n") if _BUY_ACCESS.search(target)]
    if not ways:
        return False
    if tree.xpath(_SCHOLARLY) or _DOI.search(unquote(url)):
        return True
    return any(_DOI.search(unquote(way)) for way in ways)


def _fields(tree: HtmlElement) -> tuple[list[HtmlElement], bool]:
    """The fields a person fills in, and whether they are a form its script shows: when no
    field is shown, a log-in form hidden by an inline style until its script runs stands
    for the page's (a gateway's log-on is all such a page has), if it has words of its own
    (labels, a heading): a hidden form of bare fields is a framework's helper for password
    managers (Discourse's), not what the page shows."""
    shown = tree.xpath(_FIELDS)
    if shown:
        return shown, False
    hidden = tree.xpath(_SCRIPTED_FIELDS)
    passwords = [field for field in hidden if str(field.get("type")).lower() == "password"]
    if passwords and _form_words(passwords[0])[1].split():
        return hidden, True
    return [], False


def _account_choice(tree: HtmlElement) -> bool:
    """Whether a choice outside the page's chrome names an account by its address."""
    choices = tree.xpath(f"{_ACCOUNTS}{_OUTSIDE_CHROME}")[:_MOST_ACCOUNTS]
    return any(_ADDRESS.search(choice.text_content() or "") for choice in choices)


def _qr_sign_in(tree: HtmlElement) -> bool:
    """See Clues.qr_sign_in."""
    if not tree.xpath(_QR_CODE):
        return False
    targets = "\n".join(str(target) for target in tree.xpath(_OWN_TARGETS)[:_MOST_TARGETS])
    return _WAY_IN.search(targets.lower()) is not None


def _eid_ways(tree: HtmlElement, signing: list[HtmlElement], *, named: bool) -> dict[str, Any]:
    """Clues.eid_way and Clues.provider_words: the page's own ways in, each read once (a
    button inside a form counts with its form). `named`: the page's link targets and logos
    name an identity provider (_providers); most pages name none, and their links are not
    read one by one."""
    way, words = False, 0
    counted: set[HtmlElement] = set()
    for control in tree.xpath(_WAYS_IN)[:_MOST_TARGETS] if named else ():
        if any(box in counted for box in control.iterancestors()):
            continue
        marks = _marks(control)
        target = str(control.get("href") or control.get("action") or "").lower()
        leads = control.tag == "button" or _WAY_IN.search(target) is not None
        way = way or (leads and wall_marks.ONE_EID.search(marks) is not None)
        if wall_marks.IDENTITY_NAMES.search(marks) or _BROKER_MARK.search(marks):
            counted.add(control)
            words += size(control.text_content())
    boxes = (_field_box(field) for field in signing[:_MOST_FIELDS])
    # A box that holds the page's header or menus is the page itself (ASP.NET's one form).
    way = way or any(
        box is not None and not box.xpath(_SITE_CHROME) and wall_marks.ONE_EID.search(_marks(box))
        for box in boxes
    )
    return {"eid_way": way, "provider_words": words}


def _marks(box: HtmlElement) -> str:
    """An element's markup, and its children's, where it may name an electronic ID: its
    addresses, classes and ids, its logos' files and alt texts (never its words: a page
    about MitID is no sign-in), lower-cased."""
    nodes = box.xpath("descendant-or-self::*")[:_MOST_NODES]
    return " ".join(str(node.get(name) or "") for node in nodes for name in _NAMING).lower()


def _age_choice(choices: list[HtmlElement]) -> bool:
    """A yes/no age check: two or three choices side by side, one of them naming an age
    (16 to 21) with a word or two beside the number ("Yes, I am 18 or older", "19세 이상"),
    in any language: a page number or a year stands alone, or runs on."""
    return any(
        any(_AGE.search(text) and 1 < len(text.split()) <= _CHOICE_WORDS for text in texts)
        for texts in ([_choice_text(choice) for choice in box] for box in _side_by_side(choices))
    )


def _side_by_side(choices: list[HtmlElement]) -> Iterator[list[HtmlElement]]:
    """The groups of two or three choices that share a parent: an age check's answers."""
    by_box: dict[HtmlElement | None, list[HtmlElement]] = {}
    for choice in choices:
        by_box.setdefault(choice.getparent(), []).append(choice)
    return (box for box in by_box.values() if _FEWEST_CHOICES <= len(box) <= _MOST_AGE_CHOICES)


def _choice_text(choice: HtmlElement) -> str:
    return _squash(choice.text_content() or str(choice.get("value") or ""))


def _age_question(tree: HtmlElement, choices: list[HtmlElement], url: str) -> bool:
    """A heading that asks for an age (16 to 21, and a question mark or a plus: "18+", "Are
    you over 21?"; a whisky's "21 Years Old" asks nothing) over a yes/no
    choice of a word or two each that leads nowhere else on the site (buttons, a link back
    to the page with a query, a link away from the site: "enter" and "leave"), in any
    language."""
    if not any(
        _AGE.search(text) and len(text.split()) <= _AGE_HEADING_WORDS and _ASKS.search(text)
        for text in (_squash(h.text_content()) for h in tree.xpath(_AGE_HEADINGS)[:_HEADINGS])
    ):
        return False
    return any(all(_answers(choice, url) for choice in box) for box in _side_by_side(choices))


def _age_target(tree: HtmlElement) -> bool:
    """Whether the page's own form posts to, or a choice of a word or two leads to, an
    address named for an age check ("/age-verify", "/age-check/ok?r=..."): the gate's own
    way on, whatever its words and however its date fields are drawn (selects a script
    fills), in any language."""
    for target in tree.xpath(_AGE_TARGETS):
        owner = target.getparent()
        if owner.tag == "a" and not 0 < len(_choice_text(owner).split()) <= _ANSWER_WORDS:
            continue
        if wall_marks.AGE_GATE.search(_path(str(target)) or ""):
            return True
    return False


def _gone_box(tree: HtmlElement) -> bool:
    """Whether a box (its class or id) or a picture (its file name) outside the page's
    chrome is named for an item that is gone: a not-found page's markup, in any language."""
    labels = (str(label) for label in tree.xpath(_GONE_LABELS)[:_MOST_TARGETS])
    return any(wall_marks.GONE_LABEL.search(label.lower()) for label in labels)


def _answers(choice: HtmlElement, url: str, most: int = _ANSWER_WORDS) -> bool:
    """A choice of a word or two (`most`) that answers where it stands (see _age_question):
    a button, or a link to this page or the site's root (with a query or a fragment), or
    away from the site."""
    words = len(_choice_text(choice).split())
    if not 0 < words <= most or choice.xpath(_IN_CHROME):
        return False
    if choice.tag != "a":
        return True
    page = urlsplit(url)
    try:
        target = urlsplit(urljoin(url, str(choice.get("href") or "").strip()))
    except ValueError:
        return False
    return target.netloc != page.netloc or target.path in (page.path, "", "/")


def _forms_of(fields: list[HtmlElement]) -> list[HtmlElement]:
    """The forms the fields belong to, each once, the first _MOST_FORMS of them: a page of
    thousands of fields in one form is read once, not once a field."""
    forms = (next(field.iterancestors("form"), None) for field in fields)
    return list(islice(dict.fromkeys(form for form in forms if form is not None), _MOST_FORMS))


def _posts_to_sign_in(form: HtmlElement) -> bool:
    """Whether a form posts to a sign-in address (log-in, auth, session, ...) and asks for
    nothing but the account (and a password, a code): a form that also asks for a name or
    a message is a registration, an order or a letter, whatever its address says ("prijava"
    is a sign-up as well as a sign-in)."""
    if not _WAY_IN.search(str(form.get("action") or "").lower()):
        return False
    return not any(map(_asks_more, form.xpath(_WRITING)))


def _asks_more(field: HtmlElement) -> bool:
    """Whether a field asks for more than an account or a code (a name, a message)."""
    if field.tag == "textarea":
        return True
    name = _field_names(field)
    return not (_IDENTIFIER.search(name) or _CODE.search(name))


def _field_names(field: HtmlElement) -> str:
    """A field's name, id and autocomplete, its camel case split into words."""
    names = " ".join(str(field.get(a) or "") for a in ("name", "id", "autocomplete"))
    return _CAMEL.sub(" ", names)


def _accepts(control: HtmlElement) -> bool:
    """Whether a button's or link's own markup (not its words) names it for accepting."""
    label = " ".join(str(control.get(a) or "") for a in _CONTROL_NAMES)
    return bool(_ACCEPT.search(label.lower()))


def _paywall_box(tree: HtmlElement) -> bool:
    """Whether a box named for a paywall (wall_marks.PAYWALL_BOX) is shown and offers a way
    on (a link, a button, a form): a template that is hidden until needed does not count."""
    return any(_paywall_named(box) and box.xpath(_SHOWN) for box in tree.xpath(_NAMED))


def paywall_fallback(noscript: HtmlElement) -> bool:
    """Whether a <noscript> holds a paywall's box with a way on (wall_marks.PAYWALL_BOX): the
    notice a page shows browsers without scripts where its paywall's script would stand."""
    return any(map(_paywall_named, noscript.xpath(".//*[@class or @id]")))


def _paywall_named(box: HtmlElement) -> bool:
    """Whether a box is named for a paywall (its class or id) and offers a way on."""
    label = f"{box.get('id') or ''} {box.get('class') or ''}"
    return bool(wall_marks.PAYWALL_BOX.search(label) and box.xpath(_ACTIONABLE))


def _own_search(tree: HtmlElement) -> bool:
    """Whether a search field stands in the page's own region rather than its header or menu."""
    for field in tree.xpath(_SEARCH):
        if str(field.get("type") or "text").lower() in _NOT_TYPED:
            continue
        if not any(
            box.tag in _SITE_PARTS or box.get("role") in _SITE_ROLES
            for box in field.iterancestors()
        ):
            return True
    return False


def _error_marks(tree: HtmlElement) -> bool:
    """Whether the page's markup calls it an error page: a class or id of its body or main
    region, or the status it tells prerenderers to send (a 404 the server did not send)."""
    if any(s.strip() in ("404", "410") for s in tree.xpath(_PRERENDER_STATUS)):
        return True
    return any(
        _ERROR_MARK.search(f"{part.get('id') or ''} {part.get('class') or ''}")
        for part in tree.xpath(_PAGE_PARTS)
    )


def _site_names(tree: HtmlElement) -> set[str]:
    """The site's own name as the page gives it: declared, or the words of a link to the
    site's root (a logo's alt text included)."""
    names = set()
    for found in tree.xpath(_SITE_NAMES):
        if isinstance(found, str):
            names.add(_squash(found).casefold())
        elif _path(str(found.get("href"))) in ("", "/"):
            alt = " ".join(str(i.get("alt") or "") for i in found.iter("img"))
            names.add(_squash(f"{found.text_content()} {alt}").casefold())
    return names


def _path(href: str) -> str | None:
    """A link's path; None for an address urllib cannot read (an unclosed IPv6 bracket: a
    page's links are anyone's to write)."""
    try:
        return urlsplit(href).path
    except ValueError:
        return None


def _boxes(tree: HtmlElement) -> tuple[int, bool, bool, list[HtmlElement]]:
    """The words of the largest consent dialog (a container named for one, or a dialog
    about consent), whether a container is named for an age check, whether one is named for
    a region block, and the consent dialogs found. Every label is searched at once: a page
    has thousands of them."""
    boxes = tree.xpath(_BOXES)
    labels = [f"{box.get('id') or ''} {box.get('class') or ''}" for box in boxes]
    starts = list(accumulate((len(label) + 1 for label in labels), initial=0))
    dialog, age_box, region_box = 0, False, False
    measured: set[HtmlElement] = set()
    for found in wall_marks.BOX_LABEL.finditer("\n".join(labels).lower()):
        box = boxes[bisect_right(starts, found.start()) - 1]
        if found.group("age"):
            age_box = True
        elif found.group("region"):
            region_box = True
        elif box not in measured and not any(a in measured for a in box.iterancestors()):
            if box.find(".//main") is not None or box.find(".//article") is not None:
                continue  # a wrapper named for a banner it holds, around the content
            measured.add(box)  # the outermost: what it holds, its inner boxes hold less
            dialog = max(dialog, _words(box.text_content()))
    for box in tree.xpath(_DIALOGS):
        if _about_consent(box):
            measured.add(box)
            dialog = max(dialog, _words(box.text_content()))
    return dialog, age_box, region_box, list(measured)


def _main_empty(tree: HtmlElement) -> bool:
    """Whether the page marks a main region and it holds no words."""
    region = next(iter(tree.xpath(_MAIN_REGION)), None)
    return region is not None and not region.text_content().split()


def _main_beside(tree: HtmlElement, dialogs: list[HtmlElement]) -> int:
    """The words of the page's main region outside its consent dialogs: the content a
    consent wall withholds (a placeholder line) or an article shown under its banner; -1
    where the page marks no main region, or no dialog stands in it."""
    region = next(iter(tree.xpath(_MAIN_REGION)), None)
    if region is None:
        return -1
    if any(box is region or box in region.iterancestors() for box in dialogs):
        return 0  # the main region is the dialog
    inside = [
        box
        for box in dialogs
        if region in box.iterancestors() and not any(a in dialogs for a in box.iterancestors())
    ]
    if not inside:
        return -1  # the dialog stands elsewhere: the main region tells nothing of it
    return max(_words(region.text_content()) - sum(_words(b.text_content()) for b in inside), 0)


def _about_consent(box: HtmlElement) -> bool:
    """Whether a dialog's words are about consent (cookies, privacy)."""
    said = wall_phrases.said(box.text_content()[:_DIALOG_CHARS])
    return wall_phrases.found(wall_phrases.kind("consent").weak, said) is not None


def _providers(tree: HtmlElement, targets: str) -> int:
    """How many identity providers the page's links and buttons offer, by their addresses,
    classes and logos (wall_marks.IDENTITY_NAMES)."""
    logos = "\n".join(str(logo) for logo in tree.xpath(_LOGOS)[:_MOST_TARGETS])
    found = wall_marks.IDENTITY_NAMES.finditer(f"{targets}\n{logos}".lower())
    named = {match.group(1).replace("@", "a") for match in found}
    # Links an identity broker lists as its providers ("/idp/<bank>", class "idp-…"),
    # whatever the providers are called.
    brokered = {a.get("href") for a in tree.xpath(_BROKERED)[:_MOST_TARGETS]}
    brokered |= {str(value) for value in tree.xpath(_FEDERATED)[:_MOST_TARGETS]}
    return max(len(named), len(brokered))


def _sign_in_form(signing: list[HtmlElement]) -> dict[str, Any]:
    """The words and text of the largest form around a sign-in field (Clues.form_words and
    form_text)."""
    # A sign-in has a few fields: a page of thousands is read by its first ones, each of
    # which costs its form's text.
    signing = signing[:_MOST_FIELDS]
    forms = [_form_words(field) for field in signing]
    words, text = max(forms, default=(0, ""))
    # A log-in box in a sidebar, header, menu or footer stands beside the page's content.
    centred = any(not field.xpath(_IN_CHROME) for field in signing)
    return {"form_words": words, "form_text": text[:_FORM_TEXT], "form_centred": centred}


def _form_words(field: HtmlElement) -> tuple[int, str]:
    """The words and text of the form a field belongs to (_field_box), with the card around
    it that holds its heading, where one does (the form's title and what it asks for)."""
    box = _field_box(field)
    if box is None:
        return 0, ""
    # Its parts apart: text_content() runs a label into the next field's ("nhậpEmail").
    text = " ".join(_card(box).itertext())
    return len(text.split()) + len(box.xpath(".//input | .//button")), text


def _field_box(field: HtmlElement) -> HtmlElement | None:
    """The form a field belongs to: its <form>, or else the nearest container that holds a
    button too (an app's form may have no <form>)."""
    for box in field.iterancestors():
        if box.tag == "body":
            break
        if box.tag == "form" or box.xpath(".//button | .//input[@type='submit']"):
            return box
    return None


def _beside_form(markdown: str, form_text: str) -> int:
    """Words of the content that are not the form's: what a page shows beside its sign-in
    form, however long the form's card is (its words are not all in the content, nor all
    the content's in it)."""
    known = {word.casefold() for word in _WORD.findall(form_text)}
    shown = _LINK_TARGET.sub("]", markdown)
    return sum(word.casefold() not in known for word in _WORD.findall(shown))


def _card(form: HtmlElement) -> HtmlElement:
    """The box around a form that holds its heading too (a sign-in card, its title an h1 or
    an h2), short of any that holds an article or the page's main region beside it, or that
    is a sidebar: else the form alone (a forum's quick log-in beside a thread is no card of
    the thread's title)."""
    for box in form.iterancestors():
        if box.tag == "body" or box.xpath(".//article | .//main"):
            break
        if box.tag in _LANDMARK_TAGS:
            break  # a sidebar's form is no card of the page's title beside it
        if box.xpath(_CARD_TITLE):
            return box
    return form


_LANDMARK_TAGS = frozenset({"aside"})
# A card's title: an h1, or an h2 beside the form (one inside it titles the form alone).
_CARD_TITLE = "boolean(.//h1 | .//h2[not(ancestor::form)])"


def _numbered_selects(tree: HtmlElement) -> bool:
    """A select of days or years: many options, nearly all numbers."""
    for select in tree.iter("select"):
        options = [(o.text or "").strip() for o in select.iter("option")]
        numbers = sum(o.isdigit() for o in options)
        if numbers >= _DAYS and numbers >= len(options) - 2:
            return True
    return False


def _visible(body: HtmlElement) -> tuple[int, str]:
    """The body's words up to _READ_WORDS, and its text when it has fewer."""
    # Most pages are long: counted from the body's whole text (one call into libxml2, a
    # split that stops at the cap), at half the cost of reading them node by node.
    if len(body.text_content().split(None, _READ_WORDS)) > _READ_WORDS:
        return _READ_WORDS, ""
    lines: list[str] = []
    words = 0
    for piece in body.itertext():
        parts = piece.split()  # CJK text counts as few words here: only the cap is later
        if not parts:
            continue
        words += len(parts)
        if words >= _READ_WORDS:
            return words, ""
        lines.append(" ".join(parts))
    return words, "\n".join(lines)  # one text node a line


def size(text: str) -> int:
    """Words, a CJK character counting as half of one (those scripts put no spaces)."""
    words = len(text.split())  # str.split: ten times faster than a regex, on every page
    return words + len(_CJK.findall(text)) // 2 if reaches(text, _FIRST_CJK) else words


def _squash(text: str) -> str:
    return " ".join(text.split())


def _declared(signals: Signals, tree: HtmlElement) -> tuple[bool | None, bool]:
    """isAccessibleForFree as declared, and whether a declared paywalled part is empty or
    missing from the page (the page then shows only the free part)."""
    found: bool | None = None
    empty = False
    for obj in signals.objects:
        free = _free(obj)
        if free is None:
            continue
        found = free if found is None else found and free
        selector = obj.get("cssSelector")
        if free is False and isinstance(selector, str):
            empty = empty or _part_empty(tree, selector)
    return found, empty


def _free(obj: Mapping[str, Any]) -> bool | None:
    value = next((obj[k] for k in _FREE_KEYS if k in obj), None)
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def _part_empty(tree: HtmlElement, selector: str) -> bool:
    """Whether the elements a simple selector (.class, #id, a list of them) names hold next
    to no text; a selector this cannot read says nothing."""
    total = 0
    for one in selector.split(","):
        name = one.strip()
        if not re.fullmatch(r"[.#][\w-]+", name):
            return False
        attr = "class" if name[0] == "." else "id"
        test = f'contains(concat(" ", normalize-space(@class), " "), " {name[1:]} ")'
        xpath = f"//*[{test}]" if attr == "class" else f'//*[@id="{name[1:]}"]'
        total += sum(size(e.text_content()) for e in tree.xpath(xpath))
    return total < _PART_WORDS


def _declared_words(signals: Signals) -> int:
    most = 0
    for obj in signals.objects:
        count = obj.get("wordCount")
        if isinstance(count, int | str) and str(count).isdigit():
            most = max(most, int(count))
        body = obj.get("articleBody")
        if isinstance(body, str):
            most = max(most, size(body))
    return most


def judge(found: Clues, markdown: str, html: str, *, scripted: bool) -> Verdict | None:
    """The wall this page is, if it is one. `markdown` is the extracted content, `html` the
    page's source (searched only when the page is short), `scripted`: it has scripts."""
    shown = size(markdown)
    paywall = _paywall(found, markdown, shown)
    # A subscribe prompt inside a consent dialog that stands over the page is the dialog's
    # ("pay, or accept the cookies"): the dialog is judged first, and so is a consent
    # platform's message standing for the whole of an empty main region.
    over = found.outside_dialog <= _OUTSIDE_DIALOG
    if paywall and not over and found.main_empty:
        over = _withheld(found, markdown, html[:_MARKUP].lower())
    if paywall and (found.declared_free is False or not over):
        return Verdict(_prompted(found, markdown, html, shown))
    if (
        found.words == 0
        and not scripted
        and not found.media
        and not found.password  # a lone password field is a sign-in, text or none
        and not _IMAGE.sub("", markdown).split()
    ):
        # A web server's default page may be a picture alone (IIS's): its markup says so.
        if _in_markup(wall_marks.PARKED, html[:_MARKUP].lower()):
            return Verdict("parked")
        # A block drawn as a picture says what it is in the picture's alt text alone.
        pictured = _ALT.sub(r"\1", markdown)
        said = _by_words(found._replace(text=pictured), pictured, html, size(pictured))
        return said or Verdict("empty")
    shown -= min(found.option_words, shown)  # a list of days or years is no text to read
    if shown > _SHORT:
        return _long_wall(found, html, shown) or (Verdict("paywall") if paywall else None)
    return _by_words(found, markdown, html, shown) or (Verdict("paywall") if paywall else None)


def _prompted(found: Clues, markdown: str, html: str, shown: int) -> str:
    """The gate a prompt to subscribe or to sign in stands for: a paywall, unless the page
    is built as another gate and does not sell its article (declares it paywalled, shows a
    paywall's own box): a log-in form that is the page is a sign-in (members sign in), an
    age check's form or choices an age gate ("over 19: log in", "under 19: leave")."""
    if found.declared_free is False or found.paywall_box or found.scholarly_gate:
        return "paywall"
    said = wall_phrases.said(found.text or markdown)
    page = _Page(found, said, html[:_MARKUP].lower(), shown, markdown)
    if _built("age_gate", page, worded=False) >= _STRONG:
        return "age_gate"
    return "sign_in" if _built("sign_in", page, worded=False) >= _STRONG else "paywall"


def _by_words(found: Clues, markdown: str, html: str, shown: int) -> Verdict | None:
    """The wall a short page is by what it says, read with its structure and markup."""
    said = wall_phrases.said(found.text or markdown)
    page = _Page(found, said, html[:_MARKUP].lower(), shown, markdown)
    points = {name: _score(name, page) for name in _KINDS}
    best = max(points, key=points.__getitem__)
    if points[best] < _NEEDED:
        return None
    if points["bot_check"] == points[best] and _challenge_points(page) >= _STRONG:
        best = "bot_check"  # a check to pass, whatever it says of the traffic that brought it
    if best == "bot_check" and points["region_block"] >= _NEEDED:
        return Verdict("region_block")  # a block page that says it blocks the region
    return Verdict(best, javascript=best == "bot_check" and _scripted_check(page))


class _Page(NamedTuple):
    """A short page as the scores read it."""

    found: Clues
    said: wall_phrases.Said
    markup: str
    shown: int
    markdown: str = ""


def _long_wall(found: Clues, html: str, shown: int) -> Verdict | None:
    """A wall longer than most: a web server's default page (its own files name it), or a
    consent page."""
    if shown <= _CUT_SHORT and (
        _in_markup(wall_marks.SERVER_DEFAULT, html[:_MARKUP].lower()) or _default_title(found)
    ):
        return Verdict("parked")
    return _consent_page(found, html, shown)


def _default_title(found: Clues) -> bool:
    """Whether the page's whole title is a web server's default page's."""
    return wall_marks.SERVER_DEFAULT_TITLE.fullmatch(found.title) is not None


def _consent_page(found: Clues, html: str, shown: int) -> Verdict | None:
    """A consent page, or a dialog standing where the content should be: long for a wall,
    so it takes a consent platform's markup or the page's own words, and next to nothing
    outside the dialog."""
    if shown > _CONSENT_WORDS or not found.text:
        return None
    markup = html[:_MARKUP].lower()
    # A long page takes the dialog itself, or a consent page's forms (a search cheap enough
    # for every such page: its patterns start alike); the rest is read only then.
    if found.outside_dialog > _OUTSIDE_DIALOG and not _in_markup(wall_marks.CONSENT_PAGE, markup):
        return None
    page = _Page(found, wall_phrases.said(found.text), markup, shown)
    return Verdict("consent") if _score("consent", page) >= _NEEDED else None


def named(title: str | None, markdown: str) -> str | None:
    """The wall a page already known not to be the content says it is (an error answer's
    page, a page that is its site's answer to a missing path), by its title, headings and
    words alone: a page of a few sentences need not name itself in its title then. A longer
    page (up to _CUT_SHORT words: a firewall's block page with its technical details) is
    judged by its lead, the lines of its first _SHORT words, where such a page says what it
    is."""
    if size(markdown) > _CUT_SHORT:
        return None
    markdown = _lead(markdown)
    headings = tuple(line.lstrip("#").strip() for line in markdown.splitlines() if line[:1] == "#")
    found = Clues(title=title or "", headings=headings[:4], text=markdown)
    said = wall_phrases.said(f"{title or ''}\n{markdown}")
    page = _Page(found, said, "", size(markdown), markdown)
    points = {name: _score(name, page, known=True) for name in _KINDS}
    best = max(points, key=points.__getitem__)
    return best if points[best] >= _NEEDED else None


def _lead(markdown: str) -> str:
    """The page's first lines, as many as hold _SHORT words."""
    kept, words = [], 0
    for line in markdown.splitlines():
        words += size(line)
        if words > _SHORT:
            break
        kept.append(line)
    return "\n".join(kept)


def maybe_not_found(found: Clues, markdown: str, url: str) -> bool:
    """Whether a short page that is no wall gives a reason to compare it with its site's
    answer to a missing path (soft404.py), which costs a request: its markup says 404, it is
    kept out of search engines (noindex), it offers a search box of its own, its title is the
    site's name alone, it names a domain or links to one other site alone (`stands_in`), it
    repeats the path it was asked for, its address names one item of many (`names_an_item`),
    or it says what a wall says (`_worded`). An ordinary short page (opening hours, a
    contact page) gives none, and costs nothing: a site that answers every path with the
    same short page (a test server, a one-page site) is not taken for its own not-found page
    unless the page gives a reason."""
    if size(markdown) > MAYBE_MISSING_WORDS:
        return False
    marked = found.noindex or found.search_box or found.error_marks or found.site_title
    named_host = found.leads_away or names_host(found, markdown, url)
    echoed = echoes_path(markdown, url) or names_an_item(url)
    return marked or named_host or echoed or _worded(found, markdown)


def names_an_item(url: str) -> bool:
    """Whether the address names one item of many, by an id (three digits or more) or a slug
    of three words or more in its last path segment, or an id in its query: a product, a
    listing, a vacancy, a post. Such a page, short, may be the answer a site gives for an
    item that is gone (a removed product, an expired listing), which rarely says so in
    words a list could hold, and which its site gives for any id."""
    parts = urlsplit(url)
    last = unquote(parts.path).rstrip("/").rpartition("/")[2]
    return bool(_ITEM.search(last) or _QUERY_ID.search(parts.query))


def _worded(found: Clues, markdown: str) -> bool:
    """Whether the page's title, a heading or a sentence says what a wall says in any
    language of the phrase data, though not enough to name it alone (a site that answers
    every path with its maintenance notice, its age check or its region block is known by
    the comparison)."""
    shown = size(markdown)
    page = _Page(found, wall_phrases.said(found.text or markdown), "", shown, markdown)
    headings = tuple(_headings(page))
    for name in _KINDS:
        phrases = wall_phrases.kind(name)
        if any(wall_phrases.is_heading(phrases.heading, part) for part in headings):
            return True
        if wall_phrases.found(phrases.strong, page.said) is not None:
            return True
    return False


_ITEM = lazy(r"\d{3}|[^\W_]+(?:[-_][^\W_]+){2}")  # an id, or a slug of three words or more
_QUERY_ID = lazy(r"(?:^|&)[^=&]*=\d{3,}(?:&|$)")
_ECHOED_PATH = 3  # characters a path needs to be recognised when a page repeats it


def echoes_path(markdown: str, url: str) -> bool:
    """Whether the page's text (not its links) repeats the path it was asked for, as a
    not-found page does ("/old/route was not found"), in any language."""
    path = unquote(urlsplit(url).path).rstrip("/")
    if len(path) < _ECHOED_PATH:
        return False
    text = _LINK_TARGET.sub("]", markdown)
    at = text.find(path)
    while at >= 0:
        end = at + len(path)
        if end == len(text) or not (text[end].isalnum() or text[end] in "-_"):
            return True
        at = text.find(path, end)
    return False


def stands_in(found: Clues, markdown: str, url: str) -> bool:
    """Whether a page that leads nowhere into its own site looks like a placeholder: all its
    links lead to one other site (its maker's), it names a domain (`names_host`) or it says
    what a wall says (`_worded`). A page with no link and no such words (a one-page site's
    opening hours) does not."""
    return found.leads_nowhere and (
        found.leads_away or names_host(found, markdown, url) or _worded(found, markdown)
    )


def _domain_alone(line: str) -> bool:
    # A domain name has 253 characters at most: a longer line is never matched at all.
    line = line.strip(" *#")
    return len(line) <= _MOST_DOMAIN and _DOMAIN_ALONE.fullmatch(line) is not None


def names_host(found: Clues, markdown: str, url: str) -> bool:
    """Whether the page is headed by a domain name alone (its title, first heading or first
    line), or its text (its links' targets aside) names the page's own host as a word of
    its own, not inside an address: a placeholder names the domain it stands in for, in any
    language. An IP address never counts (a test server's, a device's)."""
    lines = (found.title, *found.headings[:1], markdown.lstrip("#* \n").split("\n", 1)[0])
    if any(map(_domain_alone, lines)):
        return True
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    if "." not in host or host.replace(".", "").isdigit() or ":" in host:
        return False
    text = _LINK_TARGET.sub("]", f"{found.title}\n{markdown}")
    return _named(host).search(text) is not None


@lru_cache(maxsize=64)
def _named(host: str) -> re.Pattern[str]:
    # Not inside an e-mail address, a URL or a longer name: @, /, ., - or a letter beside it
    # (a sentence's full stop after the host still counts).
    return re.compile(rf"(?<![\w@./-])(?:www\.)?{re.escape(host)}(?![\w/@-]|\.\w)", re.IGNORECASE)


def _scripted_check(page: _Page) -> bool:
    """A check the page's scripts do without a person: no CAPTCHA box, and its words or
    markup say it runs by itself."""
    if _in_markup(wall_marks.CAPTCHA_BOX, page.markup) or not _SCRIPT.search(page.markup):
        return False
    said = page.said.text
    return bool(_SCRIPTED_CHECK.search(said)) or _in_markup(wall_marks.CHALLENGE, page.markup)


def _score(name: str, page: _Page, *, known: bool = False) -> int:
    """Points for `name`: zero without an anchor (a heading or strong phrase, or a strong
    sign of structure or markup; see _STRONG)."""
    phrases = wall_phrases.kind(name)
    heading = any(wall_phrases.is_heading(phrases.heading, part) for part in _headings(page))
    strong = wall_phrases.found(phrases.strong, page.said) is not None
    built = _built(name, page, worded=heading and strong)
    if not (heading or strong or built >= _STRONG):
        return 0
    if not (heading or built or known) and page.shown > _VERY_SHORT:
        return 0  # a page of a few sentences that only quotes such words may be about them
    # A placeholder's own sentence is all there is of it: a page with no way into its site
    # (no link to any other page of it, no search) that its title names one too.
    placeholder = name == "parked" and page.found.leads_nowhere and _titled(phrases, page)
    own_prose = (
        built < _STRONG and not (known or placeholder) and not _names_itself(phrases.strong, page)
    )
    undated = name in _UNDATED_KINDS or (name == "sign_in" and not built)
    if (own_prose and _prose(name, page.markdown, notice=heading) >= _PROSE) or (
        undated and page.found.dated and not known
    ):
        # Sentences of its own beside the words, or a dated article: a published item (one
        # that asks to sign in, with no form of its own, invites to act: "to book online").
        return 0
    if name == "consent" and built < _STRONG and not ((built or known) and heading and strong):
        # A consent wall takes its dialog, or a platform's page that says so, or a page known
        # not to be the content (the site's answer to every path) that says so in full.
        return 0
    way_in = page.found.way_in or page.found.password or _sign_in_widget(page)
    if name == "sign_in" and not (way_in or known):
        return 0  # no form, field or link to sign in with: a page about signing in
    points = _STRONG * heading + _STRONG * strong + built
    points += wall_phrases.found(phrases.weak, page.said) is not None
    return points + (page.shown <= _VERY_SHORT)


def _titled(phrases: wall_phrases.Kind, page: _Page) -> bool:
    """Whether the page's title says what such a wall says (a heading phrase, or a strong
    one, in it): a page titled otherwise may quote one."""
    title = page.found.title
    if wall_phrases.is_heading(phrases.heading, title):
        return True
    return wall_phrases.found(phrases.strong, wall_phrases.said(title)) is not None


def _names_itself(phrases: wall_phrases.Phrases, page: _Page) -> bool:
    """Whether the page's title (or a part of it) is, word for word, a phrase only such walls
    say: a wall's name for itself, where an article's title adds words of its own (a heading
    may be a quotation: the title is what the page calls itself)."""
    title = page.found.title
    parts = (title, *(part for part in _SEGMENTS.split(title) if part))
    return any(_long_name(part) and wall_phrases.is_phrase(phrases, part) for part in parts)


def _long_name(title: str) -> bool:
    """A title long enough to be a wall's own name rather than a word or two an article,
    a song or a film may be called ("Bad Gateway", "Accept All")."""
    if len(title.split()) >= _OWN_NAME_WORDS:
        return True
    return reaches(title, _FIRST_CJK) and len(_CJK.findall(title)) >= _OWN_NAME_CHARS


def _prose(name: str, markdown: str, *, notice: bool = False) -> int:
    """Words of the page's own sentences: long ones that do not say what a wall of kind
    `name` says (a wall's own sentences do; an article's, a post's, a product's do not).
    `notice`: the page's title or heading names the wall."""
    phrases = wall_phrases.kind(name)
    total = 0  # a wall's own sentences say what it is; a word it shares with others does not
    for sentence in _sentences(_LINK_TARGET.sub("]", markdown)):
        words = _words(sentence)
        # A maintenance notice's own sentence gives its window of time, in any language:
        # under a heading that names it (a timetable's hours are prose like any other).
        windowed = notice and name == "error_page" and _TIME_WINDOW.search(sentence) is not None
        if words >= _PROSE_SENTENCE and not windowed:
            # a line asking for JavaScript is a notice to browsers without it, no prose
            said = wall_phrases.said(sentence)
            own = wall_phrases.found(phrases.strong, said) is not None or _asks_javascript(said)
            total += 0 if own else words
    return total


def _sentences(text: str) -> list[str]:
    """The text's sentences: split at a full stop, a question or exclamation mark (or their
    CJK forms) and at line ends, but not at a full stop a digit or a small letter follows
    ("dne 15. 1. 2026", "z. B. die", "example.com"): dates and abbreviations in many
    languages, which would cut a sentence into short ones that read as a notice's."""
    sentences: list[str] = []
    for line in text.split("\n"):
        start = 0
        for stop in _SENTENCES.finditer(line):
            head = line[stop.end() : stop.end() + 1]
            if line[stop.start() - 1 : stop.start()] == "." and (head.isdigit() or head.islower()):
                continue  # the sentence goes on past this stop
            sentences.append(line[start : stop.start()])
            start = stop.end()
        sentences.append(line[start:])
    return [sentence for sentence in sentences if sentence.strip()]


def _words(sentence: str) -> int:
    """A sentence's words, in the scripts written without spaces too (size(), and Thai's
    letters, four a word: a Thai article's sentences are prose like any other); a mark
    standing alone is no word (a table row's bars: a notice's details are no sentence)."""
    sentence = _LONE_MARKS.sub(" ", sentence)
    return size(sentence) + len(_SOUTHEAST.findall(sentence)) // _SOUTHEAST_LETTERS


def _built(name: str, page: _Page, *, worded: bool) -> int:  # noqa: PLR0911 - one line a kind
    """Points for what the page is built of and whose markup it carries (`worded`: its
    heading and a strong phrase say it is such a wall)."""
    found, markup = page.found, page.markup
    short = page.shown <= _FORM_SHORT
    if name == "bot_check":
        return _challenge_points(page)
    if name == "sign_in":  # a form and not one word: a page whose text did not come
        # the form and its card hold nearly all of a short page (or it is a short page with
        # no way into its site: a portal's log-in with its notices and help lines), or of
        # the content however long the card is; its lines asking for JavaScript are the
        # page's own notice to browsers without it, no content beside the form
        markdown = _past_javascript(page.markdown)
        shown = size(markdown)
        short = shown <= _FORM_SHORT
        beside = shown - found.form_words
        alone = found.words > 0 and (
            (short and (beside <= _BESIDE_FORM or (found.leads_nowhere and found.form_centred)))
            or (
                found.form_words <= _CARD_WORDS
                and _beside_form(markdown, found.form_text) <= _BESIDE_FORM
            )
        )
        idp = alone and _in_markup(wall_marks.IDENTITY, markup)
        form = (found.password or found.scripted_password or found.account_form) and alone
        widget = _sign_in_widget(page)
        # a choice of identity providers (national e-IDs, accounts), or one e-ID as the way
        # in ("log in with DigiD"), as a provider's button is, and little else beside them
        providers_alone = short or page.shown - found.provider_words <= _BESIDE_PROVIDERS
        choice = providers_alone and found.providers >= _PROVIDERS
        eid = providers_alone and found.eid_way
        # a code to scan with the app one is signed in to, and a way in (a number instead),
        # or accounts to choose from
        scan = short and (found.qr_sign_in or found.account_choice)
        points = _STRONG * form + _STRONG * idp + found.identifier + (_STRONG + 1) * widget
        return points + 2 * _STRONG * choice + (_STRONG + 1) * (scan + eid)
    if name == "age_gate":  # a form or choice that asks the age, or a warning's way on
        gate = found.birth or found.age_box or (worded and found.crossroads)
        return _STRONG * gate * (short or (page.shown <= _AGE_SHORT and _says_age(page)))
    if name == "consent":
        return _dialog_points(page, worded=worded)
    if name == "parked":
        return (
            _STRONG * (_in_markup(wall_marks.PARKED, markup) or _default_title(found))
            + bool(_DOMAIN_FOR_SALE.search(page.said.text)) * _STRONG
        )
    if name == "error_page":
        # A runtime's error output outweighs the words it quotes (a path with "public_html").
        return int(found.noindex) + 2 * _STRONG * _starts_with_a_trace(found.text)
    if name == "not_found":
        # A box or picture named for the item gone, under words that say so, outweighs the
        # line of its own that says why (the host withdrew it, the owner deleted it).
        return int(found.noindex) + _STRONG * (found.gone_box and short and worded)
    if name == "rate_limited":  # a virtual waiting room's own markup
        return _STRONG * (short and _in_markup(wall_marks.QUEUE, markup))
    if name == "region_block":
        return _STRONG * found.region_box * short
    return 0


def _says_age(page: _Page) -> bool:
    """Whether the page says what only age checks say (a strong phrase): such a check may
    show the warnings the law makes it show beside its form ("drinking under 20 is
    forbidden by law"), where a shop's filters of ages stay a shop's."""
    return wall_phrases.found(wall_phrases.kind("age_gate").strong, page.said) is not None


def _past_javascript(markdown: str) -> str:
    """The text without its short lines that ask for JavaScript (they name it so in every
    language, or say it in the words of the phrase data)."""
    return "\n".join(line for line in markdown.split("\n") if not asks_for_javascript(line))


def _asks_javascript(said: wall_phrases.Said) -> bool:
    """Whether a line says what pages asking for JavaScript say (the phrase data)."""
    return wall_phrases.found(wall_phrases.listed("javascript"), said) is not None


def _starts_with_a_trace(text: str) -> bool:
    """Whether the page's text opens with a program's error output (a PHP fatal error, a
    stack trace of Python, Java, .NET, Node or Ruby): its runtime printed that in place of
    the page, in the runtime's words, whatever the site's language."""
    found = _TRACE.search(text[:_TRACE_LEAD])
    return found is not None and size(text[: found.start()]) <= _TRACE_LEAD_WORDS


def _sign_in_widget(page: _Page) -> bool:
    """An identity provider's hosted sign-in, drawn by its script: its markup, and no more
    text than a form's page holds (its banner, a line asking for JavaScript)."""
    return page.shown <= _FORM_SHORT and _in_markup(wall_marks.SIGN_IN_WIDGET, page.markup)


def _challenge_points(page: _Page) -> int:
    """A challenge's own markup, or a CAPTCHA box and next to nothing else to fill in."""
    if page.shown > _FORM_SHORT:  # a check says why it stands there in a paragraph at most
        return 0
    if _in_markup(wall_marks.CHALLENGE, page.markup):
        return _STRONG + 1
    captcha = _in_markup(wall_marks.CAPTCHA_BOX, page.markup) and not page.found.typed
    return _STRONG if captcha else 0


def _asks_consent(page: _Page, *, worded: bool) -> bool:
    """Whether a page of a line or two says what only consent walls say, under a heading
    that names one or beside a consent platform's markup (its message's empty frame); or
    speaks of consent beside an empty main region and the platform's markup (`_withheld`)."""
    if worded or _withheld(page.found, page.markdown, page.markup):
        return True
    strong = wall_phrases.found(wall_phrases.kind("consent").strong, page.said) is not None
    return strong and _in_markup(wall_marks.CONSENT, page.markup)


def _dialog_points(page: _Page, *, worded: bool) -> int:
    """A consent platform's markup counts once; a dialog holding nearly all the page's words,
    or forms posting to a consent service, are the consent wall's structure. The platform's
    markup is only looked for where it may tip the scale (it is a search of all the page's
    markup): beside that structure, a control named for accepting, or the page's words."""
    found = page.found
    beside = found.main_beside_dialog
    if beside > _OUTSIDE_DIALOG:
        return 0  # the main region shows its content beside the banner: no wall
    dialog = found.outside_dialog <= _OUTSIDE_DIALOG or 0 <= beside <= _PLACEHOLDER
    if dialog or _in_markup(wall_marks.CONSENT_PAGE, page.markup):
        return _in_markup(wall_marks.CONSENT, page.markup) + _STRONG
    if page.shown <= _VERY_SHORT and _asks_consent(page, worded=worded):
        return _STRONG  # a line or two asking for consent: the message stands in the page
    if not (found.consent_choice or worded):
        return 0
    if found.dialog_words and not worded:
        return 0  # a banner beside the page's content, however few its other controls
    # A consent step drawn as a page of its own, with no dialog: the platform's script and
    # a control its markup names for accepting count one more.
    platform = _in_markup(wall_marks.CONSENT, page.markup)
    return platform + (platform and found.consent_choice)


def _withheld(found: Clues, markdown: str, markup: str) -> bool:
    """Whether the page's main region is empty beside a consent platform's markup, and what
    it does show speaks of consent (cookies, data, privacy): the platform's message stands
    where the content should be, drawn by its script (its `<noscript>` says what it asks)."""
    if not found.main_empty or size(markdown) > _VERY_SHORT:
        return False
    said = wall_phrases.said(markdown)
    if wall_phrases.found(wall_phrases.kind("consent").weak, said) is None:
        return False
    return _in_markup(wall_marks.CONSENT, markup)


def _in_markup(marks: wall_marks.Marks, html: str) -> bool:
    """Whether one of `marks` stands inside a tag or a script or style element: the page's
    own markup, not its text (an article may name a product it writes about), nor the
    address of a page of its own site (an article's slug names its subject)."""
    for at in marks.starts(html, _MATCHES):
        opened = html.rfind("<", 0, at)
        if opened > html.rfind(">", 0, at):
            closed = html.find(">", at)
            if _own_address(html[opened : closed if closed >= 0 else len(html)], at - opened):
                continue
            return True  # inside a tag: an attribute, a URL
        opened = max(html.rfind("<script", 0, at), html.rfind("<style", 0, at))
        if opened > max(html.rfind("</script", 0, at), html.rfind("</style", 0, at)):
            return True
    return False


def _own_address(tag: str, at: int) -> bool:
    """Whether position `at` of `tag` (lower-cased, from its "<") is in the address of a
    page of the site's own: a relative link's, or the page's canonical or alternate one."""
    for found in _ATTRIBUTE.finditer(tag):
        if found.start(3) <= at < found.end(3):
            name, value = found.group(1), found.group(3).strip()
            if name not in ("href", "content"):
                return False
            relative = not _SCHEME.match(value) and not value.startswith("//")
            named = tag.startswith("<link") and _OWN_REL.search(tag) is not None
            link = relative and _ANCHOR.match(tag) is not None
            return link or named or _OG_URL.search(tag) is not None
    return False


def _headings(page: _Page) -> Iterator[str]:
    subheadings = page.found.subheadings if page.shown <= _VERY_SHORT else ()
    for title in (page.found.title, *page.found.headings, *subheadings):
        yield title
        yield from (part for part in _SEGMENTS.split(title) if part)


def asks_for_javascript(markdown: str) -> bool:
    """Whether an app shell's only text asks for JavaScript (its <noscript> line): no
    content, whatever it says."""
    if size(markdown) > _JAVASCRIPT_WORDS:
        return False
    text = wall_phrases.said(markdown)
    # JavaScript is named so in every language: a shell's few words that name it ask for it.
    return "javascript" in text.text or _asks_javascript(text)


def boots_an_app(markdown: str, html: str) -> bool:
    """Whether a shell's few words are only its loading or error line, before the scripts of
    a framework that draws the whole page in the browser (wall_marks.APP_BOOT) have run."""
    if size(markdown) > LOADING_WORDS:
        return False
    return _in_markup(wall_marks.APP_BOOT, html[:_MARKUP].lower())


def _paywall(found: Clues, markdown: str, shown: int) -> bool:
    """An article cut after its free part: declared not free and shown short of what it
    declares (or its paywalled part empty), or a subscribe prompt after a short text."""
    if found.declared_free:
        return False  # the page says it is free: a subscribe box after it is an offer
    if found.declared_free is False:
        declared = found.declared_words
        if (found.declared_cut and shown <= _CUT_SHORT) or shown < _DECLARED_SHARE * declared:
            return True
    if found.scholarly_gate and shown <= _CUT_SHORT:
        return True  # a paper's abstract, where its publisher sells the rest
    if shown > _TEASER_SHORT:
        return False
    if found.paywall_box or _prompt(markdown):
        return True
    # The visible text, a line a text node, holds the prompts extraction left out (a gate's
    # box is no content), but a bold term splits a list item's sentence into nodes ("- **Hard
    # paywall**: for subscribers only"): a prompt in an item of the content's lists is the
    # article's, not a gate's.
    return _prompt(found.text, judged=_listed_in(markdown))


def _listed_in(markdown: str) -> frozenset[str]:
    """The prompts the items of the text's lists hold."""
    items = "\n".join(line for line in markdown.split("\n") if _LIST_ITEM.match(line))
    if not items:
        return frozenset()
    said = wall_phrases.said(items)
    listed = wall_phrases.all_found(wall_phrases.listed("paywall"), said)
    return frozenset(found.group() for found in _PAYWALL.finditer(said.text)).union(listed)


def _prompt(text: str, judged: frozenset[str] = frozenset()) -> bool:
    """A subscribe prompt standing alone (a gate's own line), not a phrase inside prose;
    `judged`: prompts read elsewhere, passed over."""
    low = wall_phrases.normal(text)
    spans = [found.span() for found in _PAYWALL.finditer(low)] + _listed_prompts(low)
    bare = 0
    for start_at, end_at in spans:
        if low[start_at:end_at] in judged:
            continue
        start = low.rfind("\n", 0, start_at) + 1
        end = low.find("\n", end_at)
        line = low[start : len(low) if end < 0 else end]
        if size(line) <= _PROMPT_WORDS and size(low[start:start_at]) <= _LEAD_WORDS:
            if not _bare(low[start_at:end_at], line):
                return True
            bare += 1
    # A button of a word or two ("Subscribe") closes a free article as well as a gate: a
    # gate says more ("Already a subscriber?" beside it, "to keep reading").
    return bare >= _BARE_PROMPTS


def _bare(phrase: str, line: str) -> bool:
    """Whether a prompt is a word or two standing alone on its line: a button's label."""
    words = len(phrase.split())
    return (
        words <= _BARE_WORDS and len(line.split()) <= words + 1 and not reaches(phrase, _FIRST_CJK)
    )


def _listed_prompts(low: str) -> list[tuple[int, int]]:
    """Where the prompts of the phrase data stand in the short lines of `low`."""
    prompts = wall_phrases.listed("paywall")
    spans = []
    offset = 0
    for line in low.split("\n"):
        if size(line) <= _PROMPT_WORDS:
            for phrase in wall_phrases.all_found(prompts, wall_phrases.said(line)):
                at = line.find(phrase)  # -1 where the line's own spacing differs: left out
                if at >= 0:
                    spans.append((offset + at, offset + at + len(phrase)))
        offset += len(line) + 1
    return spans


def visible_part(markdown: str) -> bool:
    """Whether a paywalled page's text is an article's free part rather than only its gate."""
    return size(markdown) >= _TEASER


# Walls a status names by itself, whatever the page says.
_BY_STATUS = {
    404: "not_found",
    410: "not_found",
    451: "region_block",
}
_SIGN_IN = frozenset({401, 407})  # sign-in, unless a check's own script is the page
# What a refusal's own page may say it is, rather than a bot check: a placeholder too (a
# coming-soon plugin answers 503, as a maintenance page does, until the site opens).
_REFUSALS = frozenset({"region_block", "sign_in", "age_gate", "consent", "rate_limited", "parked"})
MARKUP_READ = 1 << 20  # characters of an error answer searched for a firewall's marks


def of_status(  # noqa: PLR0911 - the rules in the order they apply, one return each
    status: int, headers: Mapping[str, str], html: str, page: Callable[[], str | None]
) -> str | None:
    """The wall a 4xx or 5xx answer is, or None for a plain error that is no wall.

    The status says most (401 sign-in unless a check's script asks, 404 not found, 451 region
    block); a check's own marks (its headers, a challenge's or a CAPTCHA's markup) make a
    refusal (403, 405, 429, 503, any other 4xx) a bot check, unless its page says it blocks
    the region; then the page's own verdict, `page()` (the body judged as a page), says
    whether a refusal (a 503 too) is a region block, a sign-in, an age gate, a placeholder
    or a check; a
    firewall's name on a refusal, or on a page that says it blocks or limits this client,
    makes it a bot check; a plain 429 is a rate limit, a plain 403 or 405 a refusal of this
    client (a bot check in effect: a person's browser may get through), a plain 503 an
    error page. Any other 5xx is
    an error page whatever its page says (a CDN's 52x names the CDN and carries its marks:
    the origin failed, no one refused).
    """
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if not _refusal(status):
        return "error_page"  # a failure on the way or at the site, whatever its page says
    markup = html[:MARKUP_READ].lower()  # wall_marks' patterns are searched lower-cased
    outright = _named_outright(status, markup)
    if outright:
        return outright
    challenged = _challenged(headers, markup)
    if challenged and wall_marks.challenge_headers(headers):
        return "bot_check"  # the check says so in its own header: the page need not be read
    said = page()
    if challenged:
        # A check's block page also says why it blocks: the visitor's region, say.
        return "region_block" if said == "region_block" else "bot_check"
    if status == 429:
        return "bot_check" if said == "bot_check" else "rate_limited"
    firewalled = _firewalled(headers, markup)
    if firewalled and said in ("bot_check", "rate_limited"):
        return "bot_check"  # a firewall's limit, whatever the status: its block of this client
    if said in _REFUSALS or said == "bot_check":  # a 503 of a check's own page too
        return _refused_as(status, said)
    if status in (403, 405) or (status < 500 and firewalled):
        return "bot_check"
    # An error page without a word says nothing the status does not: a plain error, no wall.
    return "error_page" if status >= 500 else None if said == "empty" else said


def _named_outright(status: int, markup: str) -> str | None:
    """A refusal named before its page is read: a 401 or 407 is a sign-in unless a check's
    own script asks (Qrator's is sent with 401); a CDN's numbered error page names its cause
    by its number, the same in every language (Cloudflare's 1009, 1015)."""
    if status in _SIGN_IN:
        return "bot_check" if _in_markup(wall_marks.CHALLENGE, markup) else "sign_in"
    return wall_marks.cdn_code(markup)


def _refused_as(status: int, said: str) -> str:
    """The wall a refusal is by its page's verdict: a 503's log-in form is a site down for
    maintenance with its administrators' way in (Joomla's offline page), an error page."""
    return "error_page" if status == 503 and said == "sign_in" else said


def _challenged(headers: Mapping[str, str], markup: str) -> bool:
    """Whether a refusal carries a check's own marks: a header its product sends with a
    check, a challenge's or a CAPTCHA's markup."""
    if wall_marks.challenge_headers(headers):
        return True
    return bool(wall_marks.CHALLENGE.search(markup) or wall_marks.CAPTCHA_BOX.search(markup))


def _refusal(status: int) -> bool:
    """Whether a status may be a refusal of this client: a 4xx or a 503. Any other 5xx is a
    failure on the way to the site, or of the site (a CDN's 52x: the origin did not answer),
    even when the CDN's page names it and carries its marks."""
    return status < 500 or status == 503


def _firewalled(headers: Mapping[str, str], markup: str) -> bool:
    """Whether a firewall answered in the site's place: its server, its cookie, its name on
    the page. A refusal from it is a block of this client; an error from it may not be."""
    return wall_marks.firewall_headers(headers) or bool(wall_marks.FIREWALL.search(markup))


def warnings(verdict: Verdict | None, markdown: str) -> list[dict[str, str]]:
    """The PAYWALL warning of an article whose free part is returned."""
    if verdict is None or verdict.wall != "paywall" or not visible_part(markdown):
        return []
    return [
        {
            "code": "PAYWALL",
            "message": "The article is cut after its free part: this is only the part shown "
            "without a subscription. For the rest, look for the same story from another "
            "source, or ask the user to open the page in their browser, where they may be "
            "signed in.",
        }
    ]


def blocks(wall: str | None, markdown: str) -> bool:
    """Whether the page is nothing but its wall: a failure, not content."""
    return wall is not None and (wall != "paywall" or not visible_part(markdown))


_TRY_ELSEWHERE = "use another source for the same information"
_BROWSER = "ask the user to open it in their own browser"


def failure(url: str, wall: str, *, javascript: bool, tried: str) -> ToolError:
    """HTTP_ERROR for a page that is nothing but its wall, saying what to do next. `tried`:
    how its scripts were run: "rendered" (in a browser), "no-browser" (auto found none),
    "never" (render was never)."""
    said = f"{url} answered with a page that is not the content: {_WHAT[wall]}"
    if wall in ("not_found", "error_page"):
        said = f"{said[:-1]}, though sent as a success."
    return ToolError(
        ErrorCode.HTTP_ERROR, f"{said} {_next(wall, javascript=javascript, tried=tried)}", wall=wall
    )


_REFUSED = "A block of automated clients (a bot check, or a firewall's refusal)."


def refused(head: str, wall: str, retry_after: int | None) -> ToolError:
    """HTTP_ERROR for an error answer (4xx, 5xx) that is a wall: `head` says the status and
    the page's own short text; then what the page is and what to do next. `retry_after` is
    already bounded (net.http.SITE_RETRY_MOST): it only tells the agent what the site asked."""
    wait = retry_after
    what = _REFUSED if wall == "bot_check" else _WHAT[wall][0].upper() + _WHAT[wall][1:]
    advice = (
        _waiting(wait) if wall == "rate_limited" else _next(wall, javascript=False, tried="status")
    )
    return ToolError(ErrorCode.HTTP_ERROR, f"{head}{what} {advice}", retry_after=wait, wall=wall)


_WHAT = {
    "bot_check": "a bot check (a challenge that decides whether the visitor is a person).",
    "sign_in": "a sign-in page; the content is only shown to signed-in users.",
    "paywall": "a paywall; the article is for subscribers and none of its text is shown.",
    "not_found": "it says the page does not exist (a not-found page).",
    "error_page": "an error or maintenance page.",
    "parked": "a parked domain (a placeholder, or a domain offered for sale), with no content.",
    "empty": "an HTML page with no text at all, and no scripts to fill it in.",
    "consent": "a consent dialog (cookie or privacy choices) standing where the content "
    "should be; web-fetch does not make that choice for the user.",
    "age_gate": 'an age check (a date of birth, or "are you over 18") in front of the '
    "content; web-fetch does not declare an age for the user.",
    "region_block": "a block of the region web-fetch connects from: the site does not serve "
    "this page there (a geographic or legal restriction).",
    "rate_limited": "a rate limit: the site refuses more requests from this client for now.",
}


def _next(wall: str, *, javascript: bool, tried: str) -> str:  # noqa: PLR0911
    if wall == "bot_check":
        return _past_check(javascript=javascript, tried=tried)
    if wall in ("sign_in", "paywall"):
        return (
            f"Web-fetch cannot sign in: {_TRY_ELSEWHERE}, or {_BROWSER}, where they may be "
            "signed in."
        )
    if wall == "not_found":
        return "Check the URL, or search for the page's new address."
    if wall == "error_page":
        return f"Try again later, or {_TRY_ELSEWHERE}."
    if wall == "parked":
        return f"The site may have moved: search for it, or {_TRY_ELSEWHERE}."
    if wall in ("consent", "age_gate"):
        return f"Use another source for the same information, or {_BROWSER}."
    if wall == "region_block":
        return f"Retrying will not help: {_TRY_ELSEWHERE}."
    if wall == "rate_limited":
        return _waiting(None)
    return f"Check the URL, or {_TRY_ELSEWHERE}."


def _waiting(wait: int | None) -> str:
    when = f"Wait {wait} s (retry_after)" if wait is not None else "Wait a few minutes"
    return f"{when} before asking this site again, or {_TRY_ELSEWHERE}."


def _past_check(*, javascript: bool, tried: str) -> str:
    if tried == "status":
        return (
            f"The site refuses this client; web-fetch cannot get past it: {_TRY_ELSEWHERE}, "
            f"or {_BROWSER}."
        )
    if not javascript:
        return (
            f"It asks a person to solve a puzzle, which web-fetch cannot: {_TRY_ELSEWHERE}, "
            f"or {_BROWSER}."
        )
    if tried == "never":
        return (
            "Its scripts run the check by themselves, so a browser may get past it: call "
            f'again with render: "auto" or "always", or {_TRY_ELSEWHERE}.'
        )
    if tried == "no-browser":
        return (
            "Its scripts run the check by themselves, and a browser may get past it, but "
            'no browser is installed for web-fetch here (render: "always" fails the same way): '
            f"{_TRY_ELSEWHERE}, or {_BROWSER}."
        )
    return f"It did not let a headless browser through either: {_TRY_ELSEWHERE}, or {_BROWSER}."
