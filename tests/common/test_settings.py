"""Settings: IKIGAI_WEB_* variables over web-tools.toml over defaults, each read on first use."""

from __future__ import annotations

from typing import Any

import pytest

from ikigai_web.common import settings
from ikigai_web.common.errors import ErrorCode, ToolError


def test_defaults(isolated_env):
    s = settings.load()
    assert s.timeout == 25
    assert s.user_agent.startswith("ikigai-web-tools/")
    assert (s.cache_ttl, s.fetch_cache_ttl, s.fetch_max_bytes) == (300, 900, 10485760)
    assert (s.fetch_allow_private, s.fetch_robots, s.fetch_allow_hosts) == (False, True, ())
    assert s.search_order == ("brave", "google", "tavily", "searxng", "duckduckgo")
    assert (s.gemini_resolve, s.gemini_search_entry_point, s.output_budget) == (True, False, 60000)
    assert s.cache_max_mb == 200
    assert s.warnings() == []


def test_file_then_environment(isolated_env, monkeypatch):
    (isolated_env / "web-tools.toml").write_text(
        'timeout = 10\nuser_agent = "file-agent"\nfetch_allow_hosts = ["a.test", "10.0.0.0/8"]\n'
        "fetch_robots = false\n"
    )
    s = settings.load()
    assert (s.timeout, s.user_agent, s.fetch_robots) == (10, "file-agent", False)
    assert s.fetch_allow_hosts == ("a.test", "10.0.0.0/8")
    assert s.source(settings.Settings.timeout).endswith("web-tools.toml (timeout)")
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "3.5")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", " b.test , ,192.168.1.5, fd00::/8 ")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "1")
    s = settings.load()
    assert (s.timeout, s.user_agent, s.fetch_robots) == (3.5, "file-agent", True)
    assert s.fetch_allow_hosts == ("b.test", "192.168.1.5", "fd00::/8")
    assert s.source(settings.Settings.timeout) == "IKIGAI_WEB_TIMEOUT"
    assert s.source(settings.Settings.cache_ttl) == "default"


def test_empty_variable_means_unset(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", " ")
    assert settings.load().cache_ttl == 300


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("IKIGAI_WEB_TIMEOUT", "soon", "number of seconds above 0 and at most 27"),
        ("IKIGAI_WEB_TIMEOUT", "0", "at most 27"),
        ("IKIGAI_WEB_TIMEOUT", "40", "stops waiting for a tool at 30 s"),
        ("IKIGAI_WEB_TIMEOUT", "nan", "at most 27"),
        ("IKIGAI_WEB_CACHE_TTL", "-1", "whole number of seconds of at least 0"),
        ("IKIGAI_WEB_CACHE_TTL", "1.5", "whole number"),
        ("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "maybe", "1 or 0"),
        ("IKIGAI_WEB_FETCH_MAX_BYTES", "10", "at least 1024"),
        ("IKIGAI_WEB_OUTPUT_BUDGET", "200000", "reads at most 65,535 bytes"),
        ("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "ok.example, 10.0.0.0/99", "'10.0.0.0/99'"),
        ("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "300.1.1.1", "'300.1.1.1' is neither a host name"),
        ("IKIGAI_WEB_FETCH_ALLOW_HOSTS", "bad_host!", "CIDR form"),
    ],
)
def test_unusable_values_name_the_setting_and_what_is_valid(monkeypatch, name, value, says):
    monkeypatch.setenv(name, value)
    s = settings.load()  # nothing is read yet: a tool that does not use it is not broken
    attribute = name.removeprefix("IKIGAI_WEB_").lower()
    with pytest.raises(ToolError) as info:
        getattr(s, attribute)
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert name in info.value.message
    assert says in info.value.message
    assert "could not convert" not in info.value.message
    assert "invalid literal" not in info.value.message


def test_a_bad_value_does_not_hurt_the_other_settings(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_GEMINI_RESOLVE", "maybe")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "perhaps")
    s = settings.load()
    assert (s.timeout, s.cache_ttl, s.output_budget) == (25, 300, 60000)


def test_file_values_are_named_with_file_and_key_in_json_spelling(isolated_env):
    (isolated_env / "web-tools.toml").write_text("fetch_max_bytes = true\ntimeout = 99\n")
    s = settings.load()
    with pytest.raises(ToolError) as info:
        _ = s.fetch_max_bytes
    assert "fetch_max_bytes in " in info.value.message
    assert "web-tools.toml is true:" in info.value.message
    with pytest.raises(ToolError) as info:
        _ = s.timeout
    assert "is 99:" in info.value.message


def test_unknown_keys_in_the_file_are_reported_with_a_suggestion(isolated_env):
    (isolated_env / "web-tools.toml").write_text("timout = 10\ncache_ttl = 5\nflavour = 'x'\n")
    s = settings.load()
    assert s.cache_ttl == 5
    found = s.warnings()
    assert len(found) == 2
    assert "'timout', which is no setting" in found[0]
    assert "Did you mean 'timeout'?" in found[0]
    assert "'flavour'" in found[1]
    assert "Did you mean" not in found[1]


def test_broken_toml_is_reported_when_a_setting_is_read(isolated_env):
    (isolated_env / "web-tools.toml").write_text("timeout = = 3")
    s = settings.load()
    assert s.warnings() == []
    with pytest.raises(ToolError) as info:
        _ = s.timeout
    assert "web-tools.toml is unusable" in info.value.message


def test_a_variable_wins_over_a_broken_file(isolated_env, monkeypatch):
    (isolated_env / "web-tools.toml").write_text("timeout = = 3")
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "4")
    assert settings.load().timeout == 4


def test_every_setting_has_a_variable_default_and_meaning():
    every = settings.Settings.every()
    assert [s.variable for s in every][:2] == ["IKIGAI_WEB_TIMEOUT", "IKIGAI_WEB_USER_AGENT"]
    for setting in every:
        assert setting.variable.startswith("IKIGAI_WEB_")
        assert setting.meaning
        assert setting.shown_default


def test_config_dir_follows_xdg_without_override(monkeypatch, tmp_path):
    monkeypatch.delenv("IKIGAI_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "x"))
    assert settings.config_dir() == tmp_path / "x" / "ikigai"


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert settings.cache_dir() == tmp_path / "c" / "ikigai-web-tools"


@pytest.mark.parametrize("xdg", ["", "  ", "/custom/base"])
def test_user_dirs_are_what_platformdirs_answers(monkeypatch, xdg):
    import platformdirs

    monkeypatch.delenv("IKIGAI_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", xdg)
    monkeypatch.setenv("XDG_CACHE_HOME", xdg)
    expected = platformdirs.user_config_dir("ikigai", appauthor=False)
    assert str(settings.config_dir()) == expected
    assert str(settings.cache_dir()) == platformdirs.user_cache_dir(
        "ikigai-web-tools", appauthor=False
    )


def test_user_dirs_elsewhere_come_from_platformdirs(monkeypatch):
    import platformdirs

    monkeypatch.setattr("ikigai_web.common.settings.sys.platform", "darwin")
    monkeypatch.setattr(platformdirs, "user_cache_dir", lambda name, appauthor: f"/mac/{name}")
    assert str(settings.cache_dir()) == "/mac/ikigai-web-tools"


# --- a bad setting fails a call whether or not its answer is cached --------------------------

PAGE = "<html><head><title>Cached</title></head><body><p>" + "A page worth caching. " * 20
URL = "https://en.wikipedia.org/wiki/Ikigai"
Tool = tuple[str, dict[str, str], dict[str, Any], tuple[bytes, str]]


def _every_tool(base: str) -> list[Tool]:
    """Each tool's script, environment, a call, and its provider's answer (body, type)."""
    from toolbox import PROFILES

    tools = [
        (p.script, p.env(base) | p.keys, p.call("settings"), p.answer("Ikigai", "A life", URL))
        for p in PROFILES.values()
    ]
    fetching = {"IKIGAI_WEB_FETCH_ALLOW_PRIVATE": "1", "IKIGAI_WEB_FETCH_ROBOTS": "0"}
    page = (PAGE.encode(), "text/html")
    return [*tools, ("web-fetch-tool", fetching, {"url": f"{base}/page"}, page)]


BAD = [
    ("IKIGAI_WEB_TIMEOUT", "60"),  # read past the cache by every tool
    ("IKIGAI_WEB_USER_AGENT", "agent\u00e9"),  # by every tool that sends its own
]


@pytest.mark.loopback
@pytest.mark.parametrize(("variable", "value"), BAD)
def test_a_bad_setting_fails_a_cached_call_as_an_uncached_one(monkeypatch, variable, value):
    from toolbox import loopback, module_of, reply

    from ikigai_web.common.runner import answer

    monkeypatch.setenv("IKIGAI_WEB_RATE_LIMITS", "brave=off,google=off,tavily=off,gemini=off")
    with loopback() as server:
        for script, env, call, (body, kind) in _every_tool(server.url):
            module = module_of(script)
            server.handler = reply(body, kind)
            with monkeypatch.context() as patch:
                for name, setting in env.items():
                    patch.setenv(name, setting)
                first = answer(module.execute, dict(call), module.SCHEMA)[0]
                assert first["success"] is True, (script, first)
                asked = len(server.seen)
                patch.setenv(variable, value)
                if script == "web-search-duckduckgo-tool" and variable.endswith("USER_AGENT"):
                    continue  # DuckDuckGo sends a browser's own, whatever the setting
                again = answer(module.execute, dict(call), module.SCHEMA)[0]
                assert again["error_code"] == "INVALID_INPUT", (script, again)
                assert f"the setting {variable} is " in again["error"], (script, again)
                assert len(server.seen) == asked  # refused before any request


@pytest.mark.loopback
def test_rendering_settings_count_where_a_call_may_render(monkeypatch):
    from toolbox import loopback, reply

    from ikigai_web.common.runner import answer
    from ikigai_web.tools import web_fetch

    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "1")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "0")
    with loopback() as server:
        server.handler = reply(PAGE, "text/html")
        for render in ("never", "auto"):
            call = {"url": f"{server.url}/page", "render": render}
            assert answer(web_fetch.execute, call, web_fetch.SCHEMA)[0]["success"] is True
        monkeypatch.setenv("IKIGAI_WEB_FETCH_RENDER_SETTLE", "forever")
        never = {"url": f"{server.url}/page", "render": "never"}
        assert answer(web_fetch.execute, never, web_fetch.SCHEMA)[0]["cached"] is True
        auto = {"url": f"{server.url}/page", "render": "auto"}  # cached, and may render
        failed = answer(web_fetch.execute, auto, web_fetch.SCHEMA)[0]
        assert failed["error_code"] == "INVALID_INPUT"
        assert "IKIGAI_WEB_FETCH_RENDER_SETTLE" in failed["error"]
