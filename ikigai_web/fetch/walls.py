"""Pages that are not the content: bot checks, sign-in walls, paywalls, not-found and error
pages served as if they were pages, parked domains, empty pages.

Pure functions over what the extractor has already built (the tree before extraction prunes
it, the page's declarations, the extracted markdown) and the raw HTML, which is only searched
when the page is short. A false alarm hides real content from the model, which is worse than a
miss: a page is only called a wall when several weak signals agree and its own text is short.
No rule names a site; the phrases are the ways such pages say what they are, in several
languages.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common.errors import WALLS, ErrorCode, ToolError
from ikigai_web.common.text import lazy

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

    from lxml.html import HtmlElement

    from ikigai_web.fetch.signals import Signals

__all__ = [
    "WALLS",
    "Clues",
    "Verdict",
    "blocks",
    "clues",
    "failure",
    "judge",
    "of_status",
    "refused",
]
# Words of visible text read from the page: past this it is not a wall page, whatever it says.
_READ_WORDS = 1500
# Extracted words above which a page is content, not a wall (a paywall gate aside).
_SHORT = 120
_VERY_SHORT = 40
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
_DECLARED_SHARE = 0.5  # the text shown is under half the length the page declares
_PART_WORDS = 10  # a declared paywalled part holding fewer words than this is empty
_NEEDED = 3  # points a wall needs...
_STRONG = 2  # ...at least one signal of this weight among them
_MARKUP = 1 << 22  # characters of a short page's source searched for a challenge's markup


# Every phrase list is compiled when first used: most pages are long and only ever need the
# paywall prompts, and compiling every list at import cost each call about 25 ms.
_CJK = lazy(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_SEGMENTS = lazy(r"\s+[|\u2013\u2014\u00b7:-]\s+|\s*[|\u00b7]\s*")


def _any(*patterns: str) -> re.Pattern[str]:
    """Any of the patterns, in text already lower-case (three times faster than IGNORECASE)."""
    return lazy("|".join(f"(?:{p})" for p in patterns))


def _any_case(*patterns: str) -> re.Pattern[str]:
    """Any of the patterns, in markup, whatever its case."""
    return lazy("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def _whole(*patterns: str) -> re.Pattern[str]:
    """Matches a title segment or heading that is nothing but one of the patterns."""
    return lazy(r"^\W*(?:" + "|".join(patterns) + r")\W*$", re.IGNORECASE)


class Kind(NamedTuple):
    """How one kind of wall names itself: in its title or heading (a whole segment), in its
    text (strong: only such pages say it; weak: others may too), and in its markup."""

    heading: re.Pattern[str]
    strong: re.Pattern[str]
    weak: re.Pattern[str]
    markup: re.Pattern[str] | None = None


KINDS: dict[str, Kind] = {
    "bot_check": Kind(
        _whole(
            r"just a moment\.*",
            r"(?:einen|un|um|een) moment(?:o)?(?: bitte| geduld| por favor)?\W*",
            r"un instant\W*",
            r"подождите\W*",
            r"少々お待ちください",
            r"请稍候\W*",
            r"attention required!?",
            r"access denied",
            r"access blocked",
            r"are you a (?:robot|human)\??",
            r"security check",
            r"bot (?:verification|check)",
            r"human verification",
            r"verify(?:ing)? you are (?:a )?human",
            r"checking (?:your|the) browser.*",
            r"pardon our interruption\.*",
            r"one more step",
            r"request (?:blocked|rejected)",
            r"you have been blocked",
            r"ddos protection.*",
            r"captcha",
            r"robot check",
            r"zugriff verweigert",
            r"sicherheitsüberprüfung",
            r"accès refusé",
            r"vérification de sécurité",
            r"acceso denegado",
            r"verificación de seguridad",
            r"acesso negado",
            r"verificação de segurança",
            r"accesso negato",
            r"verifica di sicurezza",
            r"toegang geweigerd",
            r"beveiligingscontrole",
            r"доступ запрещ[её]н",
            r"проверка безопасности",
            r"アクセスが拒否されました",
            r"セキュリティ(?:チェック|確認)",
            r"访问被拒绝",
            r"安全验证",
            r"人机验证",
        ),
        _any(
            r"verify (?:that )?you(?:'re| are) (?:a )?human",
            r"(?:are|not) a robot",
            r"checking (?:if the site connection is secure|your browser)",
            r"(?:wir )?überprüfen (?:ihren browser|ob sie ein mensch sind)",
            r"(?:nous )?vérifions (?:votre navigateur|que vous êtes humain)",
            r"(?:comprobando|verificando) (?:tu|su|seu|o) navegador",
            r"verificando se você é humano",
            r"verificando que eres humano",
            r"controllo (?:del browser|che tu sia umano)",
            r"(?:uw|je) browser wordt gecontroleerd",
            r"controleren of (?:u|je) een mens (?:bent|is)",
            r"проверка (?:браузера|того, что вы человек)",
            r"ブラウザを確認しています",
            r"正在(?:检查|验证)您的浏览器",
            r"unusual (?:traffic|activity) from your (?:computer|network|device)",
            r"complete the (?:security check|captcha)",
            r"automated (?:access|requests|queries)",
            r"enable (?:javascript and cookies|cookies and javascript) to continue",
            r"needs to review the security of your connection",
            r"request (?:was|has been) blocked",
            r"bitte bestätigen sie, dass sie ein mensch sind",
            r"kein roboter",
            r"ungewöhnlich(?:en|er) (?:datenverkehr|aktivität)",
            r"vérifi\w+ que vous (?:êtes|n'êtes pas) (?:un humain|un robot)",
            r"pas un robot",
            r"trafic inhabituel",
            r"verific\w+ que (?:eres|es|você é|é) (?:un )?humano",
            r"no (?:eres|soy) un robot",
            r"não (?:é|sou) um robô",
            r"tráfego incomum",
            r"tráfico inusual",
            r"verifica(?:re)? che (?:sei|tu sia) (?:un )?umano",
            r"non sono un robot",
            r"traffico insolito",
            r"bevestig dat u (?:een mens|geen robot) bent",
            r"geen robot",
            r"ongebruikelijk verkeer",
            r"подтвердите, что вы (?:не робот|человек)",
            r"я не робот",
            r"необычный трафик",
            r"ロボットではありません",
            r"人間であることを確認",
            r"不審なトラフィック",
            r"确认您是真人",
            r"我不是机器人",
            r"异常流量",
            r"请完成安全验证",
        ),
        _any(
            r"captcha",
            r"robot",
            r"enable javascript",
            r"javascript (?:is )?(?:required|disabled)",
            r"browser check",
            r"cookies",
            r"ray id",
            r"reference (?:id|#)",
            r"incident id",
            r"blocked",
            r"security",
            r"javascript aktivieren",
            r"activer javascript",
            r"habilit\w+ javascript",
            r"ativ\w+ o javascript",
            r"abilit\w+ javascript",
            r"javascript inschakelen",
            r"включите javascript",
            r"javascriptを有効",
            r"启用javascript",
            r"请开启javascript",
        ),
        _any_case(
            r"challenge-platform",
            r"cf-turnstile",
            r"challenges\.cloudflare\.com",
            r"g-recaptcha",
            r"recaptcha/(?:api|enterprise)",
            r"h-captcha",
            r"hcaptcha\.com",
            r"captcha-container",
            r"id=[\"']?captcha",
        ),
    ),
    "sign_in": Kind(
        _whole(
            r"(?:sign|log) ?in(?: to (?:continue|your account|[\w .'-]{1,40}))?",
            r"login(?: required)?",
            r"member login",
            r"please (?:sign|log) in",
            r"anmelden",
            r"einloggen",
            r"anmeldung",
            r"connexion",
            r"se connecter",
            r"identifi\w+",
            r"iniciar sesión",
            r"inicia sesión",
            r"acceder",
            r"entrar",
            r"fazer login",
            r"accedi",
            r"accesso",
            r"inloggen",
            r"aanmelden",
            r"вход",
            r"войти",
            r"авторизация",
            r"ログイン",
            r"サインイン",
            r"登录",
            r"登入",
        ),
        _any(
            r"(?:must|need to|have to) (?:be )?(?:logged|signed) in",
            r"(?:log|sign) ?in (?:to|in order to) (?:view|see|read|continue|access)",
            r"please (?:log|sign) ?in",
            r"(?:login|sign-in) (?:is )?required",
            r"only (?:available )?(?:to|for) (?:logged-in|registered|signed-in) (?:users|members)",
            r"müssen (?:sie )?(?:sich )?(?:angemeldet|eingeloggt) sein",
            r"bitte melden sie sich an",
            r"devez être connecté",
            r"connectez-vous pour",
            r"veuillez vous connecter",
            r"debes (?:iniciar sesión|estar registrado)",
            r"inicia sesión para",
            r"precisa (?:fazer login|estar conectado)",
            r"faça login para",
            r"devi (?:effettuare l'accesso|essere registrato)",
            r"accedi per",
            r"je moet ingelogd zijn",
            r"log in om",
            r"meld je aan om",
            r"необходимо (?:войти|авторизоваться)",
            r"войдите, чтобы",
            r"ログインしてください",
            r"ログインが必要",
            r"请先登录",
            r"登录后(?:查看|继续)",
        ),
        _any(
            r"forgot(?:ten)? (?:your )?password",
            r"remember me",
            r"keep me (?:signed|logged) in",
            r"(?:don't|do not) have an account",
            r"create an account",
            r"password",
            r"passwort vergessen",
            r"angemeldet bleiben",
            r"mot de passe oublié",
            r"se souvenir de moi",
            r"olvidaste tu contraseña",
            r"recordarme",
            r"esqueceu (?:a|sua) senha",
            r"lembrar de mim",
            r"password dimenticata",
            r"ricordami",
            r"wachtwoord vergeten",
            r"onthoud mij",
            r"забыли пароль",
            r"запомнить меня",
            r"パスワードを(?:お)?忘れ",
            r"忘记密码",
            r"记住我",
        ),
    ),
    "not_found": Kind(
        _whole(
            r"(?:error )?404(?: error)?(?: ?[-:|]? ?(?:page )?not found)?",
            r"(?:page|file|article|post|content) not found",
            r"not found",
            r"oops!? page not found",
            r"page (?:does not|doesn't) exist",
            r"seite nicht gefunden",
            r"fehler 404",
            r"page (?:non )?introuvable",
            r"erreur 404",
            r"página no encontrada",
            r"error 404",
            r"página não encontrada",
            r"erro 404",
            r"pagina non trovata",
            r"errore 404",
            r"pagina niet gevonden",
            r"fout 404",
            r"страница не найдена",
            r"ошибка 404",
            r"ページが見つかりません",
            r"お探しのページは見つかりませんでした",
            r"页面不存在",
            r"找不到页面",
            r"页面未找到",
            r"404 ?页面",
        ),
        _any(
            r"(?:we|i) (?:couldn't|could not|can't|cannot|can not) find (?:that|this|the) page",
            r"(?:that|this|the) page (?:you (?:were|are|'re) looking for |you requested )?"
            r"(?:doesn't|does not|no longer) exist",
            r"page you (?:were|are|'re) looking for (?:could not|couldn't|cannot|can't|was "
            r"not|wasn't|is not|isn't|has|may|might)",
            r"(?:this|the) page (?:could not|couldn't|cannot|can't) be found",
            r"nothing (?:was )?found (?:at|for) this (?:location|address|url)",
            r"die (?:angeforderte |gesuchte )?seite (?:wurde nicht gefunden|existiert nicht)",
            r"la page (?:que vous (?:cherchez|recherchez|demandez) )?(?:n'existe pas|est "
            r"introuvable)",
            r"la página (?:que (?:buscas|busca) )?no existe",
            r"(?:a|esta) página (?:que (?:você )?procura )?não (?:existe|foi encontrada)",
            r"la pagina (?:che stai cercando )?non esiste",
            r"deze pagina bestaat niet",
            r"de pagina (?:die je zoekt )?(?:bestaat niet|is niet gevonden)",
            r"страница (?:не существует|не найдена)",
            r"ページは(?:存在しません|見つかりません)",
            r"您(?:访问|要找|查找)的页面不存在",
            r"页面不存在",
        ),
        _any(
            r"\b404\b",
            r"not found",
            r"(?:moved|deleted|removed)",
            r"check the (?:url|address)",
            r"go (?:back )?(?:to the )?home",
            r"broken link",
            r"nicht gefunden",
            r"introuvable",
            r"no encontrada",
            r"não encontrada",
            r"non trovata",
            r"niet gevonden",
            r"не найдена",
            r"見つかりません",
            r"不存在",
        ),
    ),
    "error_page": Kind(
        _whole(
            r"(?:error |http )?5\d\d(?: error)?(?: ?[-:|]? ?(?:internal server error|server error|"
            r"service unavailable|bad gateway|gateway time-?out))?",
            r"internal server error",
            r"server error",
            r"service (?:temporarily )?unavailable",
            r"bad gateway",
            r"gateway time-?out",
            r"something went wrong",
            r"(?:we'll|we will) be (?:right )?back(?: soon)?",
            r"(?:down for |under )?maintenance",
            r"site (?:is )?(?:under|down for) maintenance",
            r"(?:an )?error (?:has )?occurred",
            r"(?:oops!? )?(?:an )?(?:unexpected )?error",
            r"wartungsarbeiten",
            r"interner serverfehler",
            r"maintenance en cours",
            r"erreur (?:interne du )?serveur",
            r"(?:sitio |página )?en mantenimiento",
            r"error (?:interno )?del servidor",
            r"em manutenção",
            r"erro (?:interno )?do servidor",
            r"in manutenzione",
            r"errore (?:interno )?del server",
            r"onderhoud",
            r"serverfout",
            r"технические работы",
            r"ошибка сервера",
            r"メンテナンス中",
            r"サーバーエラー",
            r"系统维护(?:中)?",
            r"服务器错误",
            r"网站维护中",
        ),
        _any(
            r"something went wrong",
            r"(?:we're|we are) (?:currently )?(?:performing|doing|"
            r"undergoing|carrying out) (?:some )?(?:scheduled )?maintenance",
            r"(?:we'll|we will) be back (?:soon|shortly|online)",
            r"internal server error",
            r"(?:the )?(?:server|service) is (?:temporarily )?unavailable",
            r"(?:an )?(?:unexpected )?error (?:has )?occurred",
            r"try again (?:later|in a few)",
            r"wartungsarbeiten",
            r"ein fehler ist aufgetreten",
            r"une erreur (?:est survenue|"
            r"s'est produite)",
            r"en cours de maintenance",
            r"ha ocurrido un error",
            r"estamos (?:realizando|en) mantenimiento",
            r"ocorreu um erro",
            r"estamos em manutenção",
            r"si è verificato un errore",
            r"(?:sito )?in manutenzione",
            r"er is (?:iets )?(?:een fout )?(?:mis ?gegaan|"
            r"opgetreden)",
            r"wegens onderhoud",
            r"произошла ошибка",
            r"технические работы",
            r"エラーが発生しました",
            r"メンテナンス(?:中|を実施)",
            r"发生错误",
            r"系统维护",
            r"出错了",
        ),
        _any(
            r"\b5\d\d\b",
            r"error",
            r"maintenance",
            r"try again",
            r"unavailable",
            r"fehler",
            r"erreur",
            r"error",
            r"erro",
            r"errore",
            r"fout",
            r"ошибка",
            r"エラー",
            r"错误",
        ),
    ),
    "parked": Kind(
        _whole(
            r"(?:this )?domain (?:is )?(?:for sale|parked)",
            r"parked domain",
            r"[\w-]+(?:\.[\w-]+)+ is for sale",
            r"domain (?:name )?for sale",
            r"domain zu verkaufen",
            r"domaine à vendre",
            r"dominio en venta",
            r"domínio à venda",
            r"dominio in vendita",
            r"domein te koop",
            r"домен продаётся",
            r"ドメイン販売中",
            r"域名出售",
        ),
        _any(
            r"(?:this )?domain(?: name)? (?:is|may be|might be) (?:for sale|available|parked)",
            r"buy this domain",
            r"(?:make an )?offer (?:on|for) this domain",
            r"(?:this|the) domain (?:has been|was) (?:registered|parked)",
            r"parked (?:free|courtesy of|by)",
            r"domain (?:parking|owner)",
            r"diese domain (?:steht zum verkauf|kaufen|ist zu verkaufen|wurde registriert)",
            r"ce (?:nom de )?domaine (?:est (?:à vendre|en vente)|a été réservé)",
            r"este dominio (?:está (?:a la venta|en venta)|ha sido registrado)",
            r"este domínio (?:está à venda|foi registrado)",
            r"questo dominio (?:è in vendita|è stato registrato)",
            r"(?:dit|deze) domein(?:naam)? (?:is te koop|is geregistreerd)",
            r"(?:этот )?домен (?:продаётся|продается|зарегистрирован)",
            r"このドメインは(?:販売中|売却|取得されています)",
            r"该域名(?:正在)?出售",
            r"此域名(?:正在)?出售",
        ),
        _any(
            r"related (?:searches|links)",
            r"sponsored (?:listings|links)",
            r"inquire",
            r"domain",
            r"hosting",
            r"verwandte suchen",
            r"recherches associées",
            r"búsquedas relacionadas",
            r"pesquisas relacionadas",
            r"ricerche correlate",
            r"gerelateerde zoekopdrachten",
            r"похожие запросы",
            r"関連検索",
            r"相关搜索",
        ),
    ),
}
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
# Markup only a challenge page carries (a check's own script or frame): as strong as its words.
_CHALLENGE = _any_case(
    r"cf-chl",
    r"cf_chl",
    r"challenge-platform/h/",
    r"px-captcha",
    r"captcha-delivery",
    r"_incapsula_resource",
    r"sec-if-cpt",
    r"bm[-_]verify",
    r"aws-?waf",
    r"ddos-guard",
    r"sucuri_cloudproxy",
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
_CAPTCHA_BOX = lazy(
    r"g-recaptcha|h-captcha|px-captcha|captcha-delivery|name=[\"']?captcha", re.IGNORECASE
)
_MOUNT = ".//*[@id] | .//img | .//video | .//audio | .//canvas"
_SCRIPT = lazy(r"<script\b", re.IGNORECASE)
_FREE_KEYS = ("isAccessibleForFree", "isaccessibleforfree")


class Clues(NamedTuple):
    """What the detector reads of a page, taken before extraction prunes the tree."""

    title: str = ""
    headings: tuple[str, ...] = ()
    text: str = ""  # the visible text, when the page has under _READ_WORDS words; else ""
    words: int = 0  # the visible words, counted up to _READ_WORDS
    password: bool = False
    noindex: bool = False
    mount: bool = False  # an element an app may fill (an id, a media element)
    declared_cut: bool = False  # the JSON-LD says not free, and its paywalled part is empty
    declared_free: bool | None = None  # isAccessibleForFree, when declared
    declared_words: int = 0  # the article's length by its JSON-LD (wordCount, articleBody)


class Verdict(NamedTuple):
    wall: str
    javascript: bool = False  # a check the page's scripts do: a browser may pass it


def clues(tree: HtmlElement, signals: Signals) -> Clues:
    """The detector's view of the parsed page (scripts already removed from `tree`)."""
    body = tree.find("body")
    title = _squash(tree.findtext(".//title") or "")[:300]
    words, text = _visible(body) if body is not None else (0, "")
    free, part = _declared(signals, tree)
    return Clues(
        title=title,
        headings=tuple(_squash(h.text_content())[:200] for h in tree.iter("h1", "h2"))[:4],
        text=text,
        words=words,
        password=bool(tree.xpath('//input[@type="password" or @type="PASSWORD"]')),
        noindex="noindex" in str(tree.xpath('string(//meta[@name="robots"]/@content)')).lower(),
        mount=words == 0 and body is not None and bool(body.xpath(_MOUNT)),  # only asked then
        declared_cut=free is False and part,
        declared_free=free,
        declared_words=_declared_words(signals) if free is False else 0,
    )


def _visible(body: HtmlElement) -> tuple[int, str]:
    """The body's words up to _READ_WORDS, and its text when it has fewer."""
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
    return words + len(_CJK.findall(text)) // 2 if _CJK.search(text) else words


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
    if _paywall(found, markdown, shown):
        return Verdict("paywall")
    if shown > _SHORT:
        return None
    if shown == 0 and found.words == 0 and not scripted and not found.mount:
        return Verdict("empty")
    said, markup = _said(found, markdown), html[:_MARKUP]
    points = {name: _score(name, found, said, markup, shown) for name in KINDS}
    best = max(points, key=points.__getitem__)
    if points[best] < _NEEDED:
        return None
    return Verdict(best, javascript=best == "bot_check" and _scripted_check(said, markup))


def _scripted_check(said: str, markup: str) -> bool:
    """A check the page's scripts do without a person: no CAPTCHA box, and its words or
    markup say it runs by itself."""
    if _CAPTCHA_BOX.search(markup) or not _SCRIPT.search(markup):
        return False
    return bool(_SCRIPTED_CHECK.search(said) or _CHALLENGE.search(markup))


def _said(found: Clues, markdown: str) -> str:
    return _squash(found.text or markdown).lower()


def _score(name: str, found: Clues, said: str, markup: str, shown: int) -> int:
    """Points for `name`: zero without a strong signal (see _STRONG)."""
    kind = KINDS[name]
    heading = any(kind.heading.match(part) for part in _headings(found))
    strong = bool(kind.strong.search(said))
    if name == "bot_check":
        strong = strong or (shown <= _VERY_SHORT and bool(_CHALLENGE.search(markup)))
    if not (heading or strong) or (name == "sign_in" and not (found.password or strong)):
        return 0
    points = _STRONG * heading + _STRONG * strong + bool(kind.weak.search(said))
    points += shown <= _VERY_SHORT
    if name == "sign_in":
        points += _STRONG * found.password
    elif name == "bot_check":
        points += bool(kind.markup and kind.markup.search(markup))
    elif name in ("not_found", "error_page"):
        points += found.noindex
    return points


def _headings(found: Clues) -> Iterator[str]:
    for title in (found.title, *found.headings):
        yield title
        yield from (part for part in _SEGMENTS.split(title) if part)


def _paywall(found: Clues, markdown: str, shown: int) -> bool:
    """An article cut after its free part: declared not free and shown short of what it
    declares (or its paywalled part empty), or a subscribe prompt after a short text."""
    if found.declared_free is False:
        declared = found.declared_words
        if (found.declared_cut and shown <= _CUT_SHORT) or shown < _DECLARED_SHARE * declared:
            return True
    return shown <= _TEASER_SHORT and any(map(_prompt, (found.text, markdown)))


def _prompt(text: str) -> bool:
    """A subscribe prompt standing alone (a gate's own line), not a phrase inside prose."""
    low = text.lower()
    for found in _PAYWALL.finditer(low):
        start = low.rfind("\n", 0, found.start()) + 1
        end = low.find("\n", found.end())
        line = low[start : len(low) if end < 0 else end]
        if size(line) <= _PROMPT_WORDS and size(low[start : found.start()]) <= _LEAD_WORDS:
            return True
    return False


def visible_part(markdown: str) -> bool:
    """Whether a paywalled page's text is an article's free part rather than only its gate."""
    return size(markdown) >= _TEASER


# Walls a status names by itself, whatever the page says.
_BY_STATUS = {
    401: "sign_in",
    407: "sign_in",
    404: "not_found",
    410: "not_found",
    451: "region_block",
}
# What a refusal's own page may say it is, rather than a bot check.
_REFUSALS = frozenset({"region_block", "sign_in", "age_gate", "consent", "rate_limited"})
MARKUP_READ = 1 << 20  # characters of an error answer searched for a firewall's marks


def of_status(
    status: int, headers: Mapping[str, str], html: str, page: Callable[[], str | None]
) -> str | None:
    """The wall a 4xx or 5xx answer is, or None for a plain error that is no wall.

    The status says most (401 sign-in, 404 not found, 451 region block); a firewall's or a
    check's marks make a refusal (403, 405, 429, 503, any other 4xx) a bot check; then the
    page's own verdict, `page()` (the body judged as a page, asked only when needed), says
    whether a refusal is a region block, a sign-in or age gate; a plain 429 is a rate limit,
    a plain 403 or 405 a refusal of this client (a bot check in effect: a person's browser
    may get through), a 5xx an error page.
    """
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    marked = _checked(status, headers, html[:MARKUP_READ])
    if marked:
        return "bot_check"
    said = page()
    if status == 429:
        return "bot_check" if said == "bot_check" else "rate_limited"
    if said in _REFUSALS or (status < 500 and said == "bot_check"):
        return said
    if status in (403, 405):
        return "bot_check"
    return "error_page" if status >= 500 else said


def _checked(status: int, headers: Mapping[str, str], markup: str) -> bool:
    """Whether a refusal carries a check's or a firewall's marks: its headers, a challenge's
    or CAPTCHA's markup, or (a 4xx but 429) a firewall naming itself."""
    from ikigai_web.fetch import wall_marks

    if status < 400 or (status >= 500 and status != 503):
        return False
    if wall_marks.challenge_headers(headers):
        return True
    if wall_marks.CHALLENGE.search(markup) or wall_marks.CAPTCHA_BOX.search(markup):
        return True
    if status >= 500 or status == 429:
        return False
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
MAX_RETRY_AFTER = 3600  # seconds: a longer wait a site asks for is cut to an hour


def refused(head: str, wall: str, retry_after: int | None) -> ToolError:
    """HTTP_ERROR for an error answer (4xx, 5xx) that is a wall: `head` says the status and
    the page's own short text; then what the page is and what to do next."""
    wait = None if retry_after is None else min(retry_after, MAX_RETRY_AFTER)
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
