"""Settings: IKIGAI_WEB_* variables over web-tools.toml over defaults, each read on first use."""

from __future__ import annotations

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
