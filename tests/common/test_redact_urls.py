"""URLs as outputs and messages print them: no user-info, secret-looking parameters masked."""

from __future__ import annotations

import pytest

from ikigai_web.common.redact import drop_userinfo, is_secret_param, printable_url


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://user:pass@host/p", "http://host/p"),
        ("https://a@b@host:8080/?x=1", "https://host:8080/?x=1"),
        ("http://u:p%40ss@host", "http://host"),
        ("http://us er:p w@exa mple.com/", "http://exa mple.com/"),
        ("http://host/path@not-userinfo", "http://host/path@not-userinfo"),
        ("http://host/?q=a@b", "http://host/?q=a@b"),
        ("no url here", "no url here"),
    ],
)
def test_drop_userinfo(url, expected):
    assert drop_userinfo(url) == expected


@pytest.mark.parametrize(
    "name",
    ["api_key", "apikey", "API-Key", "key", "token", "access_token", "auth", "sig", "signature",
     "password", "passwd", "secret", "client_secret", "X-Amz-Signature", "X-Goog-Signature",
     "X-Amz-Credential", "X-Amz-Security-Token", "AWSAccessKeyId", "subscription-key",
     "PHPSESSID", "jsessionid", "refresh_token", "api%5Fkey", "private_key", "Authorization"],
)  # fmt: skip
def test_secret_parameter_names(name):
    assert is_secret_param(name)


@pytest.mark.parametrize(
    "name",
    ["q", "page", "author", "keyword", "monkey", "sortkey", "lang", "sv", "id", "utm_source"],
)
def test_ordinary_parameter_names(name):
    assert not is_secret_param(name)


def test_printable_url_masks_values_and_keeps_everything_else():
    url = "https://u:p@h/a?q=1&api_key=S&empty=&key=&flag&Signature=T#access_token=F&n=2"
    assert (
        printable_url(url)
        == "https://h/a?q=1&api_key=***&empty=&key=&flag&Signature=***#access_token=***&n=2"
    )
    assert printable_url("https://h/a#section-2") == "https://h/a#section-2"


def test_secret_parameter_values_are_masked_wherever_they_are_echoed():
    from ikigai_web.common.redact import mask, register_secret_params

    register_secret_params("https://h/a?q=cats&api_key=K%2Bey-3141&Signature=S1g+n4#token=T0k-926")
    echoed = "key K+ey-3141 or K%2Bey-3141, sig S1g n4 and S1g+n4, token T0k-926, q cats"
    assert mask(echoed) == "key *** or ***, sig *** and ***, token ***, q cats"


def test_a_credential_is_masked_in_base64_too():
    import base64

    from ikigai_web.common.redact import mask, register_secret

    register_secret("BSA+b64/Key=2718")
    for encode in (base64.b64encode, base64.urlsafe_b64encode):
        token = encode(b"BSA+b64/Key=2718").decode()
        assert mask(f"echo {token} and {token.rstrip('=')}.") == "echo *** and ***."
