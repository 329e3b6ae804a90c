"""Credential discovery and the config_required event."""

from __future__ import annotations

import json
import os

import pytest

from ikigai_web.common import credentials as c
from ikigai_web.common.errors import ErrorCode, ToolError
from ikigai_web.host.calls import mask_every_credential
from ikigai_web.search.registry import WITH_CREDENTIALS, alternatives

BRAVE = WITH_CREDENTIALS["brave"]
GOOGLE = WITH_CREDENTIALS["google"]


def missing(provider) -> ToolError:
    with pytest.raises(ToolError) as info:
        c.resolve(provider)
    assert info.value.code is ErrorCode.AUTH_MISSING
    return info.value


def test_environment_wins(isolated_env, monkeypatch):
    (isolated_env / "credentials.json").write_text('{"BRAVE_API_KEY": "from-file"}')
    monkeypatch.setenv("BRAVE_API_KEY", " from-env ")
    assert c.resolve(BRAVE) == {"api_key": "from-env"}


def test_flat_file(isolated_env):
    (isolated_env / "credentials.json").write_text('{"BRAVE_API_KEY": "flat-key"}')
    assert c.resolve(BRAVE) == {"api_key": "flat-key"}


def test_nested_file_and_fields_resolved_separately(isolated_env, monkeypatch):
    nested = {"web_search": {"google": {"api_key": "nested-key", "engine_id": "cx1"}}}
    (isolated_env / "credentials.json").write_text(json.dumps(nested))
    monkeypatch.setenv("GOOGLE_SEARCH_ENGINE_ID", "cx-env")
    assert c.resolve(GOOGLE) == {"api_key": "nested-key", "engine_id": "cx-env"}


def test_empty_strings_count_as_missing(isolated_env, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "")
    (isolated_env / "credentials.json").write_text('{"BRAVE_API_KEY": " ", "web_search": {}}')
    missing(BRAVE)


def test_one_of_two_missing(monkeypatch):
    monkeypatch.setenv("GOOGLE_SEARCH_API_KEY", "k")
    err = missing(GOOGLE)
    assert err.event is not None
    assert err.event["data"]["credentials"] == ["api_key", "engine_id"]
    assert err.event["data"]["env"] == ["GOOGLE_SEARCH_API_KEY", "GOOGLE_SEARCH_ENGINE_ID"]


def test_event_names_variable_and_the_exact_file(isolated_env):
    err = missing(BRAVE)
    path = str(isolated_env / "credentials.json")
    assert "BRAVE_API_KEY" in err.message
    assert path in err.message
    event = err.event
    assert event is not None
    assert event["kind"] == "config_required"
    assert event["content"].startswith("⚠ Configuration Required\n\n")
    assert 'export BRAVE_API_KEY="' in event["content"]
    assert path in event["content"]
    assert '{"web_search":{"brave":{"api_key":' in event["content"]
    assert event["data"] == {
        "tool": "web_search_brave",
        "credentials": ["api_key"],
        "env": ["BRAVE_API_KEY"],
        "signup_url": "https://brave.com/search/api/",
    }


def test_default_path_is_platform_config_dir(monkeypatch, tmp_path):
    monkeypatch.delenv("IKIGAI_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert str(tmp_path / "xdg" / "ikigai" / "credentials.json") in missing(BRAVE).message


@pytest.mark.parametrize(
    ("content", "reason"),
    [(b"{broken", "not valid JSON"), (b"[1]", "must hold a JSON object")],
)
def test_bad_file_is_named_in_the_message(isolated_env, content, reason):
    (isolated_env / "credentials.json").write_bytes(content)
    err = missing(BRAVE)
    assert reason in err.message
    assert str(isolated_env / "credentials.json") in err.message


def test_unreadable_file_is_named_not_a_crash(isolated_env):
    (isolated_env / "credentials.json").mkdir()  # reading a directory fails with OSError
    assert "could not be read" in missing(BRAVE).message


def test_error_type_events():
    event = c.event(BRAVE, "rate_limit", ["web_search_duckduckgo"])
    assert event["data"]["error_type"] == "rate_limit"
    assert event["data"]["alternative_tools"] == ["web_search_duckduckgo"]
    assert "rate limit" in event["content"]
    assert c.event(BRAVE, "auth_invalid")["data"]["error_type"] == "auth_invalid"


def test_searxng_event_shape():
    data = c.event(WITH_CREDENTIALS["searxng"])["data"]
    assert data == {
        "tool": "web_search_searxng",
        "credentials": ["url"],
        "env": ["SEARXNG_URL"],
        "signup_url": "https://docs.searxng.org/",
    }


def test_alternatives_are_configured_tools_and_duckduckgo(monkeypatch):
    assert alternatives("web_search_brave") == ["web_search_duckduckgo"]
    monkeypatch.setenv("TAVILY_API_KEY", "t")
    monkeypatch.setenv("BRAVE_API_KEY", "b")
    assert alternatives("web_search_brave") == ["web_search_tavily", "web_search_duckduckgo"]
    assert alternatives("web_search_duckduckgo") == ["web_search_brave", "web_search_tavily"]


def test_optional_field(isolated_env, monkeypatch):
    field = c.Field("auth", ("SEARXNG_AUTH",))
    provider = WITH_CREDENTIALS["searxng"]
    assert c.optional(provider, field) is None
    (isolated_env / "credentials.json").write_text('{"web_search": {"searxng": {"auth": "u:p"}}}')
    assert c.optional(provider, field) == "u:p"
    monkeypatch.setenv("SEARXNG_AUTH", "tok")
    assert c.optional(provider, field) == "tok"


def test_locate_says_where_resolve_finds_each_field(isolated_env, monkeypatch):
    path = isolated_env / "credentials.json"
    nested = {"google": {"api_key": "nested", "engine_id": "cx"}}
    path.write_text(json.dumps({"GOOGLE_SEARCH_API_KEY": "flat", "web_search": nested}))
    assert c.resolve(GOOGLE) == {"api_key": "flat", "engine_id": "cx"}
    assert c.locate(GOOGLE) == {
        "api_key": c.Location("GOOGLE_SEARCH_API_KEY", path),
        "engine_id": c.Location("web_search.google.engine_id", path),
    }
    assert str(c.locate(GOOGLE)["engine_id"]) == f"{path} (web_search.google.engine_id)"
    monkeypatch.setenv("GOOGLE_SEARCH_API_KEY", "from-env")
    assert c.locate(GOOGLE)["api_key"] == c.Location("GOOGLE_SEARCH_API_KEY")
    assert str(c.locate(GOOGLE)["api_key"]) == "the environment (GOOGLE_SEARCH_API_KEY)"
    assert c.locate(BRAVE) == {"api_key": None}
    assert c.file_problem() == ""


def test_locate_ignores_what_resolve_ignores(isolated_env, monkeypatch):
    monkeypatch.setenv("BRAVE_API_KEY", "  ")
    path = isolated_env / "credentials.json"
    path.write_text(json.dumps({"BRAVE_API_KEY": "", "web_search": {"brave": {"api_key": 5}}}))
    assert c.locate(BRAVE) == {"api_key": None}
    path.write_text(json.dumps({"web_search": {"brave": "not a section"}}))
    assert c.locate(BRAVE) == {"api_key": None}
    path.write_text("[]")
    assert c.file_problem() == f"{path} must hold a JSON object"


@pytest.mark.parametrize("key", sorted(WITH_CREDENTIALS))
def test_the_message_alone_tells_the_user_what_to_do(isolated_env, key):
    """Hosts that do not show `_event` (the ikigai host) pass on only `error`: it must name
    what to set, where, and where to get it."""
    provider = WITH_CREDENTIALS[key]
    message = c.missing(provider).message
    for field in provider.fields:
        assert field.env[0] in message
    assert str(c.credentials_path()) in message
    assert provider.signup_url in message


def test_register_all_masks_every_credential_the_machine_holds(isolated_env, monkeypatch):
    from ikigai_web.common.redact import mask

    nested = {
        "brave": {"api_key": "nested-shadowed-LEAK-2"},
        "gemini": {"api_key": "nested-gemini-LEAK-3"},
        "searxng": {"url": "https://sxfile:filepass-LEAK-4@searx.test/"},
    }
    file = {"BRAVE_API_KEY": "flat-shadowed-LEAK-1", "web_search": nested}
    (isolated_env / "credentials.json").write_text(json.dumps(file))
    monkeypatch.setenv("BRAVE_API_KEY", "env-brave-LEAK-5")
    monkeypatch.setenv("GEMINI_API_KEY", "env-gemini-LEAK-6")
    monkeypatch.setenv("GOOGLE_API_KEY", "alias-shadowed-LEAK-7")
    monkeypatch.setenv("SEARXNG_URL", "http://sxuser:envpass-LEAK-8@127.0.0.1:9/")
    monkeypatch.setenv("SEARXNG_AUTH", "bearer-LEAK-9")
    monkeypatch.setenv("HTTPS_PROXY", "http://px:proxypass-LEAK-10@127.0.0.1:3128")
    monkeypatch.setenv("all_proxy", "px2:proxypass-LEAK-11@127.0.0.1:3129")  # no scheme
    monkeypatch.setenv("GOOGLE_SEARCH_ENGINE_ID", "cx-engine-id")
    mask_every_credential()
    shown = mask(json.dumps(file) + " ".join(os.environ.values()))
    assert "LEAK" not in shown
    assert "sxuser:***" not in shown  # the pair goes whole
    assert "cx-engine-id" in shown  # an engine ID is no secret
