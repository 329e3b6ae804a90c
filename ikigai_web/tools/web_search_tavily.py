"""web-search-tavily-tool: web search through the Tavily Search API."""

from __future__ import annotations

import math
import re
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple

from ikigai_web.common import params as p
from ikigai_web.common.credentials import resolve, several
from ikigai_web.common.errors import ErrorCode, ToolError, invalid
from ikigai_web.common.protocol import main as run_protocol
from ikigai_web.search import domains, reading
from ikigai_web.search.domains import Page, Result, keep
from ikigai_web.search.kit import (
    Link,
    Request,
    as_list,
    lazy_output_schema,
    markdown,
    not_an_object,
    plain,
    prose,
    rate_limited,
    rejected,
    result,
    search,
    shaped,
)
from ikigai_web.search.registry import MONTH, Field, Provider

if TYPE_CHECKING:
    from ikigai_web.common.settings import Settings
    from ikigai_web.net.http import Reply

# Tavily allows 100 requests a minute for development keys; a plan's credits are monthly
# (docs.tavily.com, "Credits & Pricing").
PROVIDER = Provider(
    key="tavily",
    name="Tavily",
    fields=(Field("api_key", ("TAVILY_API_KEY",)),),
    label="a Tavily API key",
    signup_url="https://app.tavily.com/",
    how="Sign up at https://app.tavily.com/ (free tier available) and copy the key.",
    place=3,
    rate=(100, 60.0),
    quota_window=MONTH,
)
DEFAULT_URL = "https://api.tavily.com/search"
MAX_QUERY = 400  # Tavily: "Query is too long. Max query length is 400 characters."
DEPTHS = ("basic", "advanced")
TOPICS = ("general", "news", "finance")
TIME_RANGES = ("day", "week", "month", "year")
MAX_INCLUDE = 300  # Tavily's documented caps on include_domains / exclude_domains
MAX_EXCLUDE = 150
# ISO 3166-1 alpha-2 code -> the lower-case English name Tavily's `country` enum uses.
_TABLE = (
    "AF=afghanistan AL=albania DZ=algeria AD=andorra AO=angola AR=argentina AM=armenia "
    "AU=australia AT=austria AZ=azerbaijan BS=bahamas BH=bahrain BD=bangladesh "
    "BB=barbados BY=belarus BE=belgium BZ=belize BJ=benin BT=bhutan BO=bolivia "
    "BA=bosnia_and_herzegovina BW=botswana BR=brazil BN=brunei BG=bulgaria "
    "BF=burkina_faso BI=burundi KH=cambodia CM=cameroon CA=canada CV=cape_verde "
    "CF=central_african_republic TD=chad CL=chile CN=china CO=colombia KM=comoros "
    "CG=congo CR=costa_rica HR=croatia CU=cuba CY=cyprus CZ=czech_republic DK=denmark "
    "DJ=djibouti DO=dominican_republic EC=ecuador EG=egypt SV=el_salvador "
    "GQ=equatorial_guinea ER=eritrea EE=estonia ET=ethiopia FJ=fiji FI=finland FR=france "
    "GA=gabon GM=gambia GE=georgia DE=germany GH=ghana GR=greece GT=guatemala GN=guinea "
    "HT=haiti HN=honduras HU=hungary IS=iceland IN=india ID=indonesia IR=iran IQ=iraq "
    "IE=ireland IL=israel IT=italy JM=jamaica JP=japan JO=jordan KZ=kazakhstan KE=kenya "
    "KW=kuwait KG=kyrgyzstan LV=latvia LB=lebanon LS=lesotho LR=liberia LY=libya "
    "LI=liechtenstein LT=lithuania LU=luxembourg MG=madagascar MW=malawi MY=malaysia "
    "MV=maldives ML=mali MT=malta MR=mauritania MU=mauritius MX=mexico MD=moldova "
    "MC=monaco MN=mongolia ME=montenegro MA=morocco MZ=mozambique MM=myanmar NA=namibia "
    "NP=nepal NL=netherlands NZ=new_zealand NI=nicaragua NE=niger NG=nigeria "
    "KP=north_korea MK=north_macedonia NO=norway OM=oman PK=pakistan PA=panama "
    "PG=papua_new_guinea PY=paraguay PE=peru PH=philippines PL=poland PT=portugal "
    "QA=qatar RO=romania RU=russia RW=rwanda SA=saudi_arabia SN=senegal RS=serbia "
    "SG=singapore SK=slovakia SI=slovenia SO=somalia ZA=south_africa KR=south_korea "
    "SS=south_sudan ES=spain LK=sri_lanka SD=sudan SE=sweden CH=switzerland SY=syria "
    "TW=taiwan TJ=tajikistan TZ=tanzania TH=thailand TG=togo TT=trinidad_and_tobago "
    "TN=tunisia TR=turkey TM=turkmenistan UG=uganda UA=ukraine AE=united_arab_emirates "
    "GB=united_kingdom US=united_states UY=uruguay UZ=uzbekistan VE=venezuela VN=vietnam "
    "YE=yemen ZM=zambia ZW=zimbabwe"
)
COUNTRIES: dict[str, str] = {
    code: name.replace("_", " ") for code, name in (e.split("=") for e in _TABLE.split())
}
TAVILY_COUNTRIES = frozenset(COUNTRIES.values())
# Common names that are not Tavily's spelling.
_ALIASES = {
    "uk": "united kingdom",
    "usa": "united states",
    "united states of america": "united states",
    "czechia": "czech republic",
    "turkiye": "turkey",
    "türkiye": "turkey",
    "cabo verde": "cape verde",
}
_QUOTA = re.compile(r"usage limit|exceeds your plan|pay-as-you-go|credits?\b", re.IGNORECASE)

SCHEMA: dict[str, Any] = {
    "name": "web_search_tavily",
    "description": (
        "Search the web with Tavily, a search API built for LLM agents. Returns up to 20 "
        "results, each with title, url and snippet; optionally a short answer written by "
        "Tavily. Use allowed_domains / blocked_domains to restrict sites."
    ),
    "parameters": {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Search query, 2-400 characters."},
            "max_results": {
                "type": "integer",
                "description": "Number of results (1-20). Default: 5.",
            },
            "search_depth": {
                "type": "string",
                "enum": [*DEPTHS, p.DEFAULT],
                "description": "basic (1 credit) or advanced (2 credits, more relevant "
                "snippets); default: basic.",
            },
            "topic": {
                "type": "string",
                "enum": [*TOPICS, p.DEFAULT],
                "description": "general, news or finance; default: general.",
            },
            "time_range": {
                "type": "string",
                "enum": [*TIME_RANGES, p.ANY],
                "description": "Only results published in the last day, week, month or "
                "year; any for no limit.",
            },
            **domains.SCHEMA_PROPERTIES,
            **reading.SCHEMA_PROPERTIES,
            "include_answer": {
                "type": "boolean",
                "description": "Also return Tavily's short LLM-written answer as `answer`. "
                "Default: false.",
            },
            "country": {
                "type": "string",
                "description": "Boost results from one country: a two-letter code (US, GB, "
                "DE) or an English name (united states); empty for none. Only with topic "
                "general.",
            },
        },
        "required": ["query"],
    },
}
# What MCP clients show and check (protocol.md, section 17).
TITLE = "Web search (Tavily)"
# OUTPUT_SCHEMA, built when first read.
__getattr__ = lazy_output_schema(results=("published", "score"), extras=("answer",))


class Params(NamedTuple):
    query: str
    max_results: int = 5
    search_depth: str | None = None
    topic: str | None = None
    time_range: str | None = None
    allowed: tuple[str, ...] = ()
    blocked: tuple[str, ...] = ()
    include_answer: bool = False
    country: str | None = None


def parse_input(raw: dict[str, Any]) -> Params:
    topic = p.choice(raw, "topic", TOPICS)
    return Params(
        query=p.query(raw, lo=2, hi=MAX_QUERY),
        max_results=p.integer(raw, "max_results", 5, 1, 20),
        search_depth=p.choice(raw, "search_depth", DEPTHS),
        topic=topic,
        time_range=p.choice(raw, "time_range", TIME_RANGES),
        allowed=domains.parse(raw, "allowed_domains", most=MAX_INCLUDE),
        blocked=domains.parse(raw, "blocked_domains", most=MAX_EXCLUDE),
        include_answer=p.boolean(raw, "include_answer", default=False),
        country=_country(p.text(raw, "country"), topic),
    )


def country_name(value: str) -> str | None:
    """Tavily's name for a two-letter code, a Tavily name or a common alias; None if unknown."""
    text = " ".join(value.replace("_", " ").replace("-", " ").split()).lower()
    text = _ALIASES.get(text, text)
    if len(text) == 2:
        return COUNTRIES.get(text.upper())
    return text if text in TAVILY_COUNTRIES else None


def _country(value: str | None, topic: str | None) -> str | None:
    if value is None:
        return None
    name = country_name(value)
    if name is None:
        raise invalid(
            "country",
            value,
            "use a two-letter ISO 3166 code such as US, GB or DE, or the English name Tavily "
            f"uses such as 'united states'; Tavily supports {len(TAVILY_COUNTRIES)} countries "
            "and this is not one of them",
        )
    if topic not in (None, "general"):
        raise invalid("country", value, f"country only works with topic general, not {topic}")
    return name


def request_body(params: Params, count: int) -> dict[str, Any]:
    body: dict[str, Any] = {
        "query": params.query,
        "max_results": count,
        "include_answer": params.include_answer,
        "include_raw_content": False,
        "include_images": False,
    }
    optional = {
        "search_depth": params.search_depth,
        "topic": params.topic,
        "time_range": params.time_range,
        "country": params.country,
        "include_domains": list(params.allowed) or None,
        "exclude_domains": list(params.blocked) or None,
    }
    return body | {k: v for k, v in optional.items() if v is not None}


def fetch_page(link: Link, _site: str | None, count: int, *, url: str, params: Params) -> Page:
    """One Tavily request: the only function that touches the network.

    Domains travel natively (include_domains / exclude_domains), so there is never a
    fan-out and `_site` is always None; the answer is still post-filtered here.
    """
    headers = {"Authorization": f"Bearer {link.credential}", "Accept": "application/json"}
    body = request_body(params, count)
    request = link.http.build_request("POST", url, json=body, headers=headers)
    page = shape_output(link.get_json(request, "Tavily", error_for), params.include_answer)
    return Page(keep(page.results, params.allowed, params.blocked), page.more, page.extra)


def error_for(reply: Reply) -> ToolError:
    """Tavily's error answer ({"detail": {"error": "..."}}) as a ToolError."""
    from ikigai_web.net.http import retry_after, said

    detail = _detail(reply.data())
    told, wait = said("Tavily", reply, detail), retry_after(reply)
    if reply.status in (432, 433) or (reply.status in (403, 429) and _QUOTA.search(detail)):
        why = "The Tavily plan's credits or pay-as-you-go limit are used up: upgrade the plan "
        return rate_limited("tavily", told, why + "or raise the limit at app.tavily.com", wait)
    if reply.status in (401, 403):
        advice = "The API key was rejected: check TAVILY_API_KEY or create a new key at "
        return rejected("tavily", told, advice + "https://app.tavily.com/.")
    if reply.status == 429:
        return rate_limited("tavily", told, "Tavily's rate limit is exceeded", wait)
    if reply.status in (400, 422) and detail:
        return ToolError(ErrorCode.INVALID_INPUT, f"{told}. Fix the parameter Tavily names.")
    return ToolError(ErrorCode.API_ERROR, f"{told}. Try again later.")


def _detail(body: Any) -> str:
    detail = body.get("detail", body) if isinstance(body, dict) else body
    if isinstance(detail, dict):
        detail = detail.get("error") or detail.get("message") or ""
    if isinstance(detail, list):  # a validation error: [{"loc": [...], "msg": "..."}]
        detail = "; ".join(_problem(d) for d in detail if isinstance(d, dict))
    return prose(detail, 300)


def _problem(item: dict[str, Any]) -> str:
    where = ".".join(str(x) for x in as_list(item.get("loc")) if x != "body")
    return f"{where}: {item.get('msg', '')}" if where else str(item.get("msg", ""))


def shape_output(body: Any, include_answer: bool) -> Page:  # noqa: FBT001
    """Tavily's JSON as a Page of our results, plus `answer` when it was asked for."""
    if not isinstance(body, dict):
        raise not_an_object("Tavily")
    results = shaped(body.get("results"), _result)
    answer = plain(body.get("answer"), 4000) if include_answer else ""
    return Page(results, extra={"answer": answer} if answer else {})


def _result(item: dict[str, Any]) -> Result | None:
    published, score = _published(item.get("published_date")), _score(item.get("score"))
    return result(item["title"], item["url"], item.get("content"), published=published, score=score)


def _published(value: object) -> str | None:
    """ISO date from Tavily's published_date: ISO 8601, or an RFC 2822 date on news."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return date.fromisoformat(value.strip()[:10]).isoformat()
    except ValueError:
        pass
    import email.utils

    try:
        return email.utils.parsedate_to_datetime(value).date().isoformat()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _score(value: object) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return round(float(value), 4)
    return None


def arguments(request: Request) -> dict[str, Any]:
    """The common search request as this tool's own arguments."""
    return request.arguments(("max_results", 20), ("time_range", request.time_filter or p.ANY))


def execute(raw: dict[str, Any], settings: Settings) -> dict[str, Any]:
    from ikigai_web.net.http import endpoint

    params = parse_input(raw)
    read = (params.query, reading.parse(raw))  # a bad `read` before a missing key
    keys = several(resolve(PROVIDER)["api_key"])
    url = endpoint("TAVILY_API_URL", DEFAULT_URL)
    fetch = partial(fetch_page, url=url, params=params)
    # Domains are native: no fan-out, so the shared search sees no allowed domains and
    # fetch_page post-filters them itself.
    plan = (params.max_results, (), params.blocked)
    return search("tavily", settings, fetch, plan, [url, params._asdict()], keys=keys, read=read)


def main() -> None:
    run_protocol(SCHEMA, execute, markdown)
