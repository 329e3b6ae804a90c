"""The markup and headers of the platforms that put walls in front of pages: bot checks and
firewalls, consent-management dialogs, parking services, age gates and identity providers.

These name products, never a site: a product's own script, frame, element or header is how it
shows up on every site that uses it, in every language. Each set is searched only where a
short page (walls.py) or an error answer (session.py) asks, in markup cut to a bounded size.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import TYPE_CHECKING

from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

# A pattern that is plain text once its escapes are read: found by str.find.
_PLAIN = re.compile(r"(?:[^\\.^$*+?{}\[\]|()]|\\[^\w\s])+")
_ESCAPE = re.compile(r"\\(.)")


class Marks:
    """A product's marks, lower-case patterns searched in lower-cased markup one at a time.

    One pattern of all of them would be searched at every character with every alternative
    (Python's re has no automaton): a second and more on a page of 2 MB. Alone, each is
    found by its literal start, and one that is plain text by str.find: a few milliseconds
    for all of them on such a page. Compiled when first searched."""

    def __init__(self, *patterns: str) -> None:
        self._sources = patterns
        self._parts: tuple[str | re.Pattern[str], ...] = ()

    @property
    def patterns(self) -> tuple[str, ...]:
        return self._sources

    def starts(self, text: str, most: int) -> Iterator[int]:
        """Where the marks stand in `text`: at most `most` places for each."""
        if not self._parts:
            self._parts = tuple(_searcher(source) for source in self._sources)
        for part in self._parts:
            yield from _places(part, text, most)

    def search(self, text: str) -> bool:
        """Whether any of the marks stands in `text`."""
        return next(self.starts(text, 1), None) is not None


def _searcher(source: str) -> str | re.Pattern[str]:
    return _ESCAPE.sub(r"\1", source) if _PLAIN.fullmatch(source) else re.compile(source)


def _places(part: str | re.Pattern[str], text: str, most: int) -> Iterator[int]:
    if isinstance(part, str):
        at = text.find(part)
        for _ in range(most):
            if at < 0:
                return
            yield at
            at = text.find(part, at + 1)
        return
    for count, match in enumerate(part.finditer(text)):
        if count == most:
            return
        yield match.start()


def _any_case(*patterns: str) -> Marks:
    """Lower-case patterns, searched in lower-cased text: IGNORECASE is several times as
    slow on a page's markup of a few hundred kilobytes."""
    return Marks(*patterns)


# A check's own script, frame or element: only a challenge or block page carries these.
CHALLENGE = _any_case(
    # Cloudflare (challenge platform, its block page)
    r"cf-chl",
    r"cf_chl",
    r"challenge-platform/h/",  # its .../scripts/jsd/ detection runs on every page it serves
    r"cf-error-details",
    r"cdn-cgi/(?:styles/cf|l/chk_captcha)",
    # Akamai (Bot Manager, its edge's denial page)
    r"sec-if-cpt",
    r"bm[-_]verify",
    r"errors\.edgesuite\.net",
    # Imunify360's WebShield (shared hosts' bot check): its page names it
    r"powered by imunify360",
    r"imunify360-webshield",
    # Imperva / Incapsula
    r"_incapsula_resource",
    r"incapsula incident id",
    # Qrator (its JavaScript check, sent with 401)
    r"/__qrator/",
    # AWS WAF
    r"awswaf",
    r"aws-waf-token",
    # PerimeterX / HUMAN
    r"px-captcha",
    r"_pxappid",
    r"captcha\.px-cdn",
    r"captcha\.px-cloud",
    # DataDome
    r"captcha-delivery",
    # Sucuri
    r"sucuri_cloudproxy",
    r"cloudproxy@sucuri",
    # Kasada
    r"kpsdk",
    # Yandex, Baidu, Tencent, Alibaba, F5 BIG-IP ASM, Radware, DDoS-Guard, Chinese WAFs
    r"showcaptcha",
    r"checkbox-captcha",
    r"wappass\.baidu\.com",
    r"turing\.captcha\.qcloud",
    r"aliyun_waf",
    r"/tspd/",
    r"perfdrive\.com",
    r"ddos-guard",
    r"__arvan_chl",
    r"slowaes\.decrypt",  # nginx's testcookie module: a cookie computed before the page
    r"arvan/challenge",
    r"distil_r_captcha",
    r"wzws",
    # Proof-of-work gates in front of code forges and archives: Anubis, go-away
    r"anubis_challenge",
    r"/\.within\.website/",
    r"/go-away/",
)
# A box a person must solve; a form beside real content may carry one too (a contact form).
CAPTCHA_BOX = _any_case(
    r"g-recaptcha",
    r"recaptcha/(?:api|enterprise)",
    r"recaptcha\.net",
    r"h-captcha",
    r"hcaptcha\.com",
    r"cf-turnstile",
    r"challenges\.cloudflare\.com",
    r"geetest",
    r"smartcaptcha",
    r"tencentcaptcha",
    r"nocaptcha",
    r"px-captcha",
    r"captcha-delivery",
    r"captcha\.awswaf",
    r"frc-captcha",  # Friendly Captcha
    r"altcha-widget",
    r"mtcaptcha",
    r"arkoselabs",  # Arkose Labs' FunCaptcha, its script and its token's field
    r"funcaptcha",
    r"fc-token",
    r"mcaptcha",
    r"captcha-container",
    r"id=[\"']?captcha",
    r"name=[\"']?captcha",
    r"class=[\"'][^\"']*\bcaptcha\b",
    # A site's own check: its form posts the answer to, or its picture comes from, an address
    # named for it ("/captcha/verify", "/captcha/image?key=..."), in any language.
    r"/captcha\b",
)
# Firewalls that name themselves on their block pages ("Generated by Wordfence", "Sucuri
# WebSite Firewall", "Your support ID is"): a sign in an error answer, never in a 200 page.
FIREWALL = _any_case(
    r"imperva",
    r"incapsula",
    r"akamai",
    r"perimeterx",
    r"datadome",
    r"sucuri",
    r"wordfence",
    r"mod_?security",
    r"fortiweb",
    r"fortigate",
    r"barracuda",
    r"shieldsquare",
    r"reblaze",
    r"qrator",
    r"stormwall",
    r"variti",
    r"netacea",
    r"safedog",
    r"yunsuo",
    r"cloudflare",
    r"cloudfront",
    r"web application firewall",
    r"support id is",
    r"ray id",
    r"incident id",
    r"reference #",
    r"\bwaf\b",
)
# Headers by which a firewall or bot manager signs the answer it sent instead of the page.
_CHALLENGE_HEADERS = (
    ("cf-mitigated", "challenge"),
    ("x-amzn-waf-action", "captcha"),  # its "block" is a refusal whose page says why
    ("x-amzn-waf-action", "challenge"),
    ("x-datadome", ""),
    ("x-dd-b", ""),
    ("x-sucuri-block", ""),
    ("x-iinfo", ""),
    ("x-kpsdk-ct", ""),
    ("x-kpsdk-r", ""),
    ("x-px-block", ""),
    ("akamai-grn", ""),
    ("x-qrator", ""),
    ("x-anubis-status", "challenge"),
)
_STATED = lazy(r"(?:[a-z]+[-_]?)?(?:challenge|captcha)")  # "js-challenge", not "cdn-challenge-7"
_STATED_LENGTH = 40  # characters of a header's value that may name a check
_HEADERS_READ = 100  # headers of an answer looked at for one
_CHALLENGE_SERVERS = lazy(
    r"akamaighost|sucuri|cloudproxy|ddos-guard|qrator|incapsula|bigip|stormwall|variti"
    r"|fortiweb|barracuda|arvancloud|wedos|myracloud|reblaze|link11|servicepipe|ngenix"
    r"|imunify360-webshield",
    re.IGNORECASE,
)
_CHALLENGE_COOKIES = lazy(r"^\s*(?:datadome|incap_ses|visid_incap|_pxhd|ak_bmsc|bm_sz|TS01)")

# Consent-management platforms: their scripts, frames and dialogs, and the consent pages a
# portal sends in place of any page until a choice is made.
CONSENT = _any_case(
    r"__tcfapi",
    r"__cmp\(",
    r"cdn\.cookielaw\.org",
    r"onetrust",
    r"optanon",
    r"didomi",
    r"quantcast\.mgr\.consensu",
    r"cmp\.quantcast",
    r"qc-cmp2",
    r"sourcepoint",
    r"sp_message",
    r"privacy-mgmt\.com",
    r"trustarc",
    r"truste\.com",
    r"truste-consent",
    r"cookiebot",
    r"cybotcookiebot",
    r"usercentrics",
    r"uc-banner",
    r"consentmanager\.net",
    r"cmpbox",
    r"iubenda",
    r"cookieyes",
    r"cky-consent",
    r"complianz",
    r"cookie-law-info",
    r"borlabs-cookie",
    r"klaro",
    r"osano",
    r"termly",
    r"axeptio",
    r"tarteaucitron",
    r"cookiefirst",
    r"fides-",
    r"ketch",
    r"sirdata",
    r"consent-?wall",
    r"cookie-?wall",
    r"consent-?banner",
    r"cookie-?consent",
    r"gdpr-consent",
    r"kvkk",
    r"szn-cmp",  # Seznam's
    r"contentpass",  # "pay or accept": subscribe, or accept advertising's tracking
    r"privacy-?gate",  # a publisher's privacy gate, its scripts and styles under that name
)
# A portal's consent page, sent in place of any page until a choice is made: its forms post
# the choice to a consent service of its own.
CONSENT_PAGE = _any_case(  # one pattern: one search for the attribute they all start with
    r"action=[\"']?(?:https?://(?:consent|guce)\.|[^\"'\s>]*(?:/(?:consent|privacy-?gate|"
    r"cookie-?wall)/(?:save|set|accept)|collectconsent))",
    r"set_eom",  # the field of Google's consent page that says which choice was made
)
# Where a consent dialog, an age check or a region block stands, by its container's id or
# class (lower case):
# one pattern, its groups saying which, run once over all of a page's labels.
BOX_LABEL = lazy(
    r"(?P<consent>consent|cookie|onetrust|optanon|didomi|qc-cmp|sp_message|truste|cybot|"
    r"usercentrics|cmpbox|iubenda|cky-|gdpr|privacy-?(?:wall|banner|dialog|modal)|kvkk|"
    r"tarteaucitron|axeptio|klaro|osano|\buc-)"
    r"|(?P<age>(?<![a-z])age[-_]?(?:gate|verif|check|confirm)|(?<![a-z])av[-_]overlay|verify[-_]?age|"
    r"legal[-_]?age|over[-_]?18|adult[-_]?(?:warning|check|gate))"
    r"|(?P<region>geo[-_]?(?:block|restrict|fenc|lock)|(?<![a-z])region[-_]?(?:block|restrict))"
)

# Virtual waiting rooms, which hold visitors in a queue while a site is overloaded (a sale
# opening): their scripts, styles and view models.
QUEUE = _any_case(
    r"queue-it",
    r"queueit",
    r"crowdhandler",
)

# A box or picture named for an item that is gone (an expired ad, a delisted property, a
# deleted post), by its class, id or file name (lower case): a not-found page's own markup.
GONE_LABEL = lazy(
    r"(?<![a-z])(?:expired|unavailable|removed|deleted|delisted|not-?available)(?![a-z])"
)

# Parking services and registrars' placeholder pages.
PARKED = _any_case(
    r"sedoparking",
    r"//(?:www\.)?sedo\.com/(?:search|checkdomainoffer|services/parking)",
    r"bodis\.com",
    r"parkingcrew",
    r"//(?:www\.)?above\.com/",
    r"//(?:www\.)?dan\.com/(?:buy-domain|lp)",
    r"afternic",
    r"parklogic",
    r"skenzo",
    r"domainsponsor",
    r"parked-content",
    r"parking-lander",
    r"parking\.(?:reg\.ru|namecheap|godaddy|hostinger)",
    r"wsimg\.com/parking",
    r"godaddy\.com/domains?/(?:aftermarket|find)",
    r"hugedomains",
    r"undeveloped\.com",
    r"domainmarket\.com",
    r"buydomains",
    r"domainnamesales",
    r"parkingpage",
    r"parking-page",
    r"parked-domain",
    r"domain-?parking",
    r"google\.com/adsense/domains",
    r"data-parked",
    r"window\.park\b",
    # A registrar's placeholder built as a block of its own ("parking", "parking__domain")
    r"class=[\"']parking(?:__|[\"' ])",
    # Web servers' and hosts' default pages: their own images and scripts
    r"iisstart\.(?:png|htm)",
    r"/icons/(?:ubuntu-logo|apache_pb|poweredby)",
    r"/cgi-sys/defaultwebpage",
    # Plesk's default page for a new domain: its copyright line and its picture (a site
    # built on Plesk carries neither)
    r"copyright \d{4}-\d{4}\. plesk",
    r"domain-default-page\.(?:svg|png)",
)
# A web server's or control panel's default page by the files only it serves: longer than
# other placeholders (Apache's Ubuntu page explains the server's configuration at length),
# and no page of a site built on the server links them (a site's "Powered by" badge is its
# own copy).
SERVER_DEFAULT = _any_case(
    r"iisstart\.(?:png|htm)",
    r"icons/(?:ubuntu-logo|debian-logo|openlogo)(?:-\d+)?\.png",  # Debian's: openlogo-75.png
    r"/cgi-sys/defaultwebpage",
)
# ...and by the titles they are sent with (Apache's on Debian, Ubuntu and Red Hat's family,
# nginx's), the page's whole title: an article about one adds words of its own.
SERVER_DEFAULT_TITLE = lazy(
    r"apache2? (?:\w+ )?default page(?:: it works!?)?|test page for the (?:apache|nginx)"
    r"(?: http server)?(?: on \w+(?: linux)?)?|welcome to nginx!?",
    re.IGNORECASE,
)
# A paywall's box by its class or id: the generic names publishers' templates give it, and
# the elements of the paywall products (Piano/Tinypass, Poool, Zephr, Pelcro, Steady, Leaky
# Paywall, LaterPay, Ghost's and Substack's upgrade prompts, membership plugins' notices).
# Searched in one container's attributes at a time, on a short page only.
PAYWALL_BOX = lazy(
    r"pay-?wall|reg-?wall|meter(?:ed)?[-_]?(?:wall|box|gate|prompt|limit|content)"
    r"|premium[-_]?(?:wall|gate|lock|box|prompt|only)|(?:article|content|story)[-_]?lock"
    r"|subscri(?:ber|ption|be)s?[-_]?(?:only|wall|gate|lock|box|prompt|cta)"
    r"|locked[-_]?(?:content|article|story|chapter|episode|viewer)|upgrade[-_]?cta"
    # A serial's paid chapter or episode: a web novel's or a comic's viewer, locked.
    r"|(?:vip|paid|chapter|episode)[-_]?(?:lock|limit|wall|gate)"
    r"|(?:viewer|chapter|episode|reader)[-_]?locked|tp-(?:modal|container|iframe)"
    r"|piano[-_]?(?:inline|offer|paywall|template)|tinypass|poool|zephr|pelcro|lp[-_]paywall"
    # WordPress's membership plugins' notices in place of a post (Paid Memberships Pro,
    # MemberPress, Restrict Content Pro, WooCommerce Memberships)
    r"|pmpro_content_message|mepr-unauthorized-message|rcp-woocommerce-no-access"
    r"|wc-memberships-(?:content-)?restrict|memberful|locked[-_]?post",
    re.IGNORECASE,
)
# The boot files and roots of frameworks that draw the whole page in the browser (Blazor
# WebAssembly, Flutter, Angular, create-react-app, Vue CLI, Vite, Ember, GWT): a page built
# on them shows only a loading or error line before its scripts run. (Next.js and Nuxt
# render on the server as often as not: their marks say nothing.)
APP_BOOT = _any_case(
    r"_framework/blazor\.(?:webassembly|web)\.js",
    r"flutter_bootstrap\.js",
    r"main\.dart\.js",
    r"(?<=<)app-root\b",
    r"/static/js/main\.[0-9a-f]{6,}\.js",
    r"/js/chunk-vendors\.[0-9a-f]{6,}\.js",
    r"/assets/index-[\w-]{6,}\.js",
    r"/assets/vendor-[0-9a-f]{16,}\.js",
    r"\.nocache\.js",
)
# A date-of-birth field, by its name or id.
AGE_GATE = _any_case(
    r"(?<![a-z])age[-_ ]?(?:gate|verif|check|confirm)",
    r"agecheck",
    r"ageverif",
    r"verify[-_]?age",
    r"legal[-_]?age",
    r"over[-_]?18",
    r"(?:dob|birth)[-_ ]?(?:day|month|year|date)",
    r"date[-_]?of[-_]?birth",
    r"birthdate",
    r"\bdob\b",
)
_PROVIDERS = (
    "google",
    "apple",
    "facebook",
    "microsoft",
    "github",
    "twitter",
    "linkedin",
    "kakao",
    "naver",
    "line",
    "yahoo",
)
_ACTIONS = r"(?:sign-?in|log-?in|auth|oauth|button|btn|sso)"
_WAYS = ("sign-in", "signin", "log-in", "login", "auth", "social")
_WITH_PROVIDER = f"(?:with[-_])?(?:{'|'.join(_PROVIDERS)})"
_OWN_WORD = "(?<=(?<![a-z]){}[-_])"  # a name before the separator, with no letter before it
# Sign-in with another account: the identity providers' endpoints and buttons.
IDENTITY = _any_case(
    r"accounts\.google\.com",
    r"appleid\.apple\.com",
    r"facebook\.com/(?:v[\d.]+/)?dialog/oauth",
    r"login\.microsoftonline\.com",
    r"login\.live\.com",
    r"github\.com/login/oauth",
    r"api\.twitter\.com/oauth",
    r"twitter\.com/i/oauth2",
    r"linkedin\.com/oauth",
    r"kauth\.kakao\.com",
    r"nid\.naver\.com/oauth",
    r"oauth\.vk\.com",
    r"id\.vk\.com",
    r"oauth\.yandex",
    r"passport\.yandex",
    r"open\.weixin\.qq\.com",
    r"graph\.qq\.com/oauth",
    r"api\.weibo\.com/oauth",
    r"access\.line\.me",
    r"oauth2?/(?:authorize|auth)\b",
    r"/sso/",
    r"/saml2?/",
    r"openid",
    r"gsi/client",
    r"g_id_signin",
    r"g_id_onload",
    r"appleid\.auth",
    # "google-signin", "btn-login-with-apple": found from their separator, which is rarer
    # than the letters the names start with (the name before it then read back)
    # (a name is a word of its own: "outline-button" names no LINE, "pineapple-btn" no Apple)
    "".join(("[-_](?:", "|".join(map(_OWN_WORD.format, _PROVIDERS)), ")", _ACTIONS)),
    "".join(("[-_](?:", "|".join(f"(?<={way}[-_])" for way in _WAYS), ")", _WITH_PROVIDER)),
    r"social[-_]?(?:login|sign-?in|auth|buttons?|providers?)",
)


# Electronic IDs a sign-in page offers a choice of, by the names their links, buttons and
# logos carry: the Nordic BankIDs, MitID, MinID, Freja, Suomi.fi, Cl@ve, itsme, DigiD,
# Smart-ID, SPID, CIE, eIDAS, FranceConnect, ID Austria, Gosuslugi, Diia, e-Devlet, Nafath, Absher,
# UAE PASS, Singpass, iAM Smart, ThaiD, MOICA and Taiwan's health card, My Number, Korea's
# certificates, Aadhaar and DigiLocker, Login.gov, ID.me, GOV.UK One Login, GCKey, myGovID,
# Llave MX, ClaveÚnica, gov.br. Two or more of them, and little else, are a sign-in page in
# any language; one of them on a way in is a sign-in as "continue with Google" is (ONE_EID).
# (Global accounts are left out: every page's share buttons name Facebook and LinkedIn.) A
# name may run into the word for signing in, as an address written in camel case does
# ("MoicaLogin.aspx" lower-cased).
_EIDS = (
    r"bankid|mitid|nemid|minid|buypass|commfides|freja|suomi\.fi|tupas|dnie|itsme|digid"
    r"|eherkenning|smart-?id|mobiil-?id|mobile-?id|spid|cie(?:-?id)?|eidas|franceconnect|id-?austria"
    r"|gosuslugi|esia|diia|id\.gov\.ua|e-?devlet|turkiye\.gov\.tr|nafath|absher|iam\.gov\.sa"
    r"|uae-?pass|singpass|corppass|iam-?smart|thaid|moica|nhi-?card|mynumber|my-?number-?card|jpki"
    r"|マイナンバー|自然人憑證|공동인증서|금융인증서|aadhaar|digilocker|meripehchaan|e-?pramaan"
    r"|login\.gov|id\.me|account\.gov\.uk|gov-?uk-?one-?login|gckey|mygovid|llave-?mx"
    r"|clave-?unica|acesso\.gov|autenticacao\.gov|profil-?zaufany|mojeid|eparaksts"
)
_EID_END = r"(?!(?!log-?in|log-?on|sign-?in|auth)[a-z])"
IDENTITY_NAMES = lazy(rf"(?<![a-z])({_EIDS}|cl[a@]ve){_EID_END}")
# ...and the same names for one e-ID alone on a way in, with Cl@ve only by its @: "clave" is
# also Spanish for a password ("/cuenta/cambiar-clave").
ONE_EID = lazy(rf"(?<![a-z])(?:{_EIDS}|cl@ve){_EID_END}")

# The sign-in pages identity providers host for their customers, drawn by their own script:
# the page holds the widget's container and script, and no form until it runs.
SIGN_IN_WIDGET = _any_case(
    r"okta-sign-in",
    r"okta-signin-widget",
    r"oktacdn\.com",
    r"auth0-lock",
    r"cdn\.auth0\.com/js/lock",
    r"b2clogin\.com",
    r"kc-form-login",
    r"login-pf-page",
    # Microsoft Entra ID's converged sign-in (its body hidden until the script runs), AWS
    # Cognito's hosted UI, Ping, OneLogin, Shibboleth, SimpleSAMLphp, AD FS and CAS.
    r"aadcdn\.msftauth\.net",
    r"aadcdn\.msauth\.net",
    r"convergedsignin",
    r"amazoncognito\.com",
    r"pingidentity\.com",
    r"pingone\.",
    r"onelogin\.com",
    r"/idp/profile/saml2",
    r"simplesaml",
    r"/adfs/ls",
    r"/cas/login",
    # The widgets of FirebaseUI, Supabase's Auth UI, Descope and authentik, and Clerk's
    # sign-in route in a Next.js app (its script is on every page of the app, the route not)
    r"firebaseui-auth-container",
    r"supabase-auth-ui",
    r"descope-wc",
    r"ak-flow-executor",
    r"sign-in/(?:%5b%5b|\[\[)\.\.\.sign-in",
)


def challenge_headers(headers: Mapping[str, str], *, stated: bool = False) -> bool:
    """Whether a firewall or bot manager says in a header that it answered with a check;
    `stated`: only a header whose value says so (a product's header on every answer of a
    site it guards, a successful page's too, says nothing of this one)."""
    for name, value in _CHALLENGE_HEADERS:
        found = headers.get(name)
        if found is not None and value in found.lower() and (value or not stated):
            return True
    # Any product's header whose whole value names the check it answered with
    # ("X-WGP-Action: js-challenge"): a word, never an address or a policy that lists one.
    return any(
        len(value) <= _STATED_LENGTH and _STATED.fullmatch(value.strip().lower())
        for value in islice(headers.values(), _HEADERS_READ)
    )


def firewall_headers(headers: Mapping[str, str]) -> bool:
    """Whether the answer comes from a firewall's own server, or sets a cookie only a bot
    manager sets: a refusal from it is a block of this client (an error from it may not be)."""
    if _CHALLENGE_SERVERS.search(headers.get("server", "")[:200]):
        return True
    if "x-amzn-waf-action" in headers:
        return True
    cookie = headers.get("set-cookie", "")[:4096]
    return any(_CHALLENGE_COOKIES.search(part) for part in cookie.split(",")[:50])


# A CDN's error page numbers its cause, the same number in every language it is shown in:
# Cloudflare's 1009 is a country its customer banned, 1015 a rate limit its customer set.
# Any other number (1020's firewall rule, 1010's browser signature) is judged as before.
_CDN_CODE = lazy(r"""class=["']?cf-error-code["']?[^>]{0,80}>\s*(\d{4})\s*<""")
_CDN_CODE_KINDS = {"1009": "region_block", "1015": "rate_limited"}


def cdn_code(markup: str) -> str | None:
    """The wall a CDN's numbered error page names (markup lower-cased), or None."""
    found = _CDN_CODE.search(markup)
    return _CDN_CODE_KINDS.get(found.group(1)) if found else None
