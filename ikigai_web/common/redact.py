"""Keeping secrets out of every output: known credential values and URL query strings."""

from __future__ import annotations

import re
from functools import cache
from urllib.parse import unquote, urlsplit

from ikigai_web.common.text import lazy

_secrets: set[str] = set()
# A query string can carry a key (Google sends it as `key=`); keep only the path.
_QUERY = lazy(r"(https?://[^\s?#'\"]*)\?[^\s#'\"]*", re.IGNORECASE)
_SHORTEST_SECRET = 4  # shorter values would blank out ordinary words


def register_secret(value: str) -> None:
    """Remember a credential, in every spelling a URL, a form or a header gives it (base64:
    a gateway may echo a token it decoded, or encode the key itself), so `redact` can remove
    it from any text."""
    if len(value) < _SHORTEST_SECRET:
        return
    from urllib.parse import quote, quote_plus

    _secrets.update({value, quote(value, safe=""), quote(value), quote_plus(value)})
    _secrets.update(_base64(value.encode()))
    _pattern.cache_clear()


def _base64(data: bytes) -> set[str]:
    import base64

    forms = {base64.b64encode(data).decode(), base64.urlsafe_b64encode(data).decode()}
    return forms | {form.rstrip("=") for form in forms}


def redact(text: str) -> str:
    """Text safe to show: registered secrets masked, URL query strings dropped."""
    return _QUERY.sub(r"\1?…", mask(text))


def mask(text: str) -> str:
    """Text with every registered secret masked, and nothing else changed."""
    return _pattern().sub("***", text) if _secrets else text


@cache
def _pattern() -> re.Pattern[str]:
    # Case-blind: percent-escapes may be written %2F or %2f, and masking a little more than
    # a random key is harmless. Longest first, so a key is masked whole, not around a part.
    forms = sorted(_secrets, key=len, reverse=True)
    return re.compile("|".join(map(re.escape, forms)), re.IGNORECASE)


def excerpt(text: str, most: int = 200) -> str:
    """The start of a provider's text for a message: secrets masked, spaces folded.

    Redacted before the cut: a gateway may echo the request URL, key included, and a cut
    secret would no longer be recognised.
    """
    return " ".join(redact(text).split())[:most]


# The authority up to its last `@`: what urlsplit and httpx read as user-info.
_USERINFO = re.compile(r"^([a-z][a-z0-9+.-]*://)[^/?#]*@", re.IGNORECASE)
# Parameter names that carry a credential, compared in lower case after percent-decoding:
# a whole name or its last part (`key`, `api_key`, `X-Amz-Signature`'s `sig...`), or a word
# that marks a secret anywhere in the name (`access_token`, `client_secret`, `PHPSESSID`).
_SECRET_PARAM = lazy(
    r"(^|[-_.])(key|sig|auth|pass|pwd|jwt|hmac|otp)$"
    r"|token|secret|passw|passphrase|signature|credential|api[-_.]?key|access[-_.]?key"
    r"|private[-_.]?key|sess(ion)?[-_.]?id|authori[sz]ation"
)


def drop_userinfo(url: str) -> str:
    """`url` without its `user:password@` part, whatever that part contains."""
    return _USERINFO.sub(r"\1", url, count=1)


def printable_url(url: str) -> str:
    """`url` fit to show: no user-info, and secret-looking query or fragment values `***`.

    Works on any string, parsable URL or not, so error messages can use it too.
    """
    head, hash_sign, fragment = drop_userinfo(url).partition("#")
    path, question, query = head.partition("?")
    shown = path + question + _mask_params(query)
    return shown + hash_sign + _mask_params(fragment)


def register_secret_params(url: str) -> None:
    """Register the values `printable_url` masks in `url` (secret-looking query and fragment
    parameters), so a page or an error that echoes one shows *** there too."""
    from urllib.parse import unquote_plus

    head, _, fragment = url.partition("#")
    for text in (head.partition("?")[2], fragment):
        for name, equals, value in (pair.partition("=") for pair in text.split("&")):
            if equals and value and is_secret_param(name):
                register_secret(value)
                register_secret(unquote_plus(value))


def is_secret_param(name: str) -> bool:
    from urllib.parse import unquote_plus

    return _SECRET_PARAM.search(unquote_plus(name).lower()) is not None


def _mask_params(text: str) -> str:
    pairs = [pair.partition("=") for pair in text.split("&")]
    shown = (
        f"{name}=***" if equals and value and is_secret_param(name) else name + equals + value
        for name, equals, value in pairs
    )
    return "&".join(shown)


def basic_token(user: str, password: str) -> str:
    """The HTTP Basic token of a login written as in a URL (percent-escapes undone)."""
    import base64

    return base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode("ascii")


def register_login(user: str, password: str) -> str:
    """Mask a login written as in a URL: its password (as written and unescaped), the
    `user:password` pair and the HTTP Basic token made of them, which a server that echoes
    its request may show; the token."""
    token = basic_token(user, password)
    pair = f"{unquote(user)}:{unquote(password)}"
    for secret in (password, unquote(password), f"{user}:{password}", pair, token):
        register_secret(secret)
    return token


def register_url_login(value: str) -> None:
    """Mask the login `value` carries when it is a URL with one (`https://user:pw@host/`, or
    `user:pw@host:port` as a proxy setting may be written)."""
    text = value if "://" in value else f"http://{value}"
    try:
        parts = urlsplit(text)
    except ValueError:
        return
    if parts.password:
        register_login(parts.username or "", parts.password)
