"""Settings: IKIGAI_WEB_* variables over web-tools.toml over defaults."""

from __future__ import annotations

import pytest

from common import settings
from common.errors import ErrorCode, ToolError


def test_defaults(isolated_env):
    s = settings.load()
    assert s.timeout == 25
    assert s.user_agent.startswith("ikigai-web-tools/")
    assert (s.cache_ttl, s.fetch_cache_ttl, s.fetch_max_bytes) == (300, 900, 10485760)
    assert (s.fetch_allow_private, s.fetch_robots, s.fetch_allow_hosts) == (False, True, ())
    assert s.search_order == ("brave", "google", "tavily", "searxng", "duckduckgo")
    assert (s.gemini_resolve, s.gemini_search_entry_point, s.output_budget) == (True, False, 60000)


def test_file_then_environment(isolated_env, monkeypatch):
    (isolated_env / "web-tools.toml").write_text(
        'timeout = 10\nuser_agent = "file-agent"\nfetch_allow_hosts = ["a.test", "10.0.0.0/8"]\n'
        "fetch_robots = false\n"
    )
    s = settings.load()
    assert (s.timeout, s.user_agent, s.fetch_robots) == (10, "file-agent", False)
    assert s.fetch_allow_hosts == ("a.test", "10.0.0.0/8")
    monkeypatch.setenv("IKIGAI_WEB_TIMEOUT", "3.5")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ALLOW_HOSTS", " b.test , ,192.168.1.5 ")
    monkeypatch.setenv("IKIGAI_WEB_FETCH_ROBOTS", "1")
    s = settings.load()
    assert (s.timeout, s.user_agent, s.fetch_robots) == (3.5, "file-agent", True)
    assert s.fetch_allow_hosts == ("b.test", "192.168.1.5")


def test_empty_variable_means_unset(monkeypatch):
    monkeypatch.setenv("IKIGAI_WEB_CACHE_TTL", " ")
    assert settings.load().cache_ttl == 300


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("IKIGAI_WEB_TIMEOUT", "soon"),
        ("IKIGAI_WEB_TIMEOUT", "0"),
        ("IKIGAI_WEB_CACHE_TTL", "-1"),
        ("IKIGAI_WEB_FETCH_ALLOW_PRIVATE", "maybe"),
        ("IKIGAI_WEB_FETCH_MAX_BYTES", "10"),
    ],
)
def test_unusable_values_name_the_setting(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(ToolError) as info:
        settings.load()
    assert info.value.code is ErrorCode.INVALID_INPUT
    assert name in info.value.message


def test_broken_toml_is_reported(isolated_env):
    (isolated_env / "web-tools.toml").write_text("timeout = = 3")
    with pytest.raises(ToolError) as info:
        settings.load()
    assert "web-tools.toml" in info.value.message


def test_config_dir_follows_xdg_without_override(monkeypatch, tmp_path):
    monkeypatch.delenv("IKIGAI_CONFIG_DIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "x"))
    assert settings.config_dir() == tmp_path / "x" / "ikigai"


def test_cache_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "c"))
    assert settings.cache_dir() == tmp_path / "c" / "ikigai-web-tools"
