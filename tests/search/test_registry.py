"""Each search provider is declared once, in its tool module, and every registry agrees with
the declarations: the installed tools, the credentials, the names answers show, the default
fallback order, pacing's documented limits, doctor, and each tool's outputSchema."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

import pytest

from ikigai_web.common import credentials
from ikigai_web.common.providers import PREFIX, Field, Provider
from ikigai_web.common.settings import Settings
from ikigai_web.host import doctor
from ikigai_web.search.pacing import rate_for
from ikigai_web.search.registry import (
    WITH_CREDENTIALS,
    Registry,
    alternatives,
    declared,
    every_provider,
    fallback_order,
    provider_name,
)
from ikigai_web.tools import web_search_auto as auto
from ikigai_web.tools import web_search_duckduckgo, web_search_google

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
SEARCH_SCRIPTS = {
    s.removeprefix("web-search-").removesuffix("-tool"): target
    for s, target in SCRIPTS.items()
    if s.startswith("web-search-") and s != "web-search-auto-tool"
}


def test_every_search_tool_but_the_fallback_declares_its_provider_under_its_own_name():
    assert set(every_provider()) == set(SEARCH_SCRIPTS)
    for key, target in SEARCH_SCRIPTS.items():
        module = importlib.import_module(target.split(":", 1)[0])
        assert module.PROVIDER == every_provider()[key] == declared(key)
        assert module.SCHEMA["name"] == module.PROVIDER.tool == f"web_search_{key}"
    assert not hasattr(auto, "PROVIDER")


def test_the_fallback_tool_finds_the_declared_providers_installed():
    assert set(auto.installed()) == set(every_provider())


def test_the_default_order_is_the_declared_places_in_order():
    places = sorted(p.place for p in every_provider().values() if p.place is not None)
    assert places == list(range(1, len(places) + 1))  # no two providers share a place
    assert fallback_order() == tuple(k for k, p in every_provider().items() if p.place is not None)
    assert Settings({}).search_order == fallback_order()
    assert Settings.search_order.shown_default == ",".join(fallback_order())
    assert list(every_provider())[: len(places)] == list(fallback_order())  # then the others


def test_credentials_are_the_declared_fields_keyed_providers_first():
    with_fields = {k for k, p in every_provider().items() if p.fields}
    assert set(WITH_CREDENTIALS) == with_fields
    assert len(WITH_CREDENTIALS) == len(with_fields)
    kinds = [p.keyed for p in WITH_CREDENTIALS.values()]
    assert kinds == sorted(kinds, reverse=True)
    assert credentials.Field is Field
    assert credentials.Provider is Provider
    keyless = next(k for k, p in every_provider().items() if not p.fields)
    assert keyless not in WITH_CREDENTIALS
    with pytest.raises(KeyError):
        WITH_CREDENTIALS[keyless]


def test_names_doctor_and_pacing_read_the_declarations():
    assert {k: provider_name(k) for k in every_provider()} == {
        k: p.name for k, p in every_provider().items()
    }
    for key, provider in every_provider().items():
        assert doctor.provider_of(provider.tool) == (provider if provider.fields else None)
        rate = rate_for(key, Settings({}))
        if provider.rate is None:
            assert rate is None
        else:
            assert rate is not None
            assert rate.per_second * rate.window == pytest.approx(provider.rate[0])
            assert rate.window == provider.rate[1]


def test_messages_naming_other_tools_follow_the_declarations():
    keyed = [every_provider()[k].tool for k in fallback_order() if every_provider()[k].keyed]
    assert keyed == ["web_search_brave", "web_search_google", "web_search_tavily"]
    note = web_search_google.closure_note()
    others = sorted(every_provider()[k].tool for k in fallback_order() if k != "google")
    assert ", ".join(others) in note
    assert "web_search_google" not in note
    assert "web_search_duckduckgo" in alternatives("web_search_brave")
    assert "web_search_duckduckgo" not in alternatives("web_search_duckduckgo")


def test_the_output_schema_is_built_when_read_and_names_every_provider():
    schema = web_search_duckduckgo.OUTPUT_SCHEMA
    assert schema is web_search_duckduckgo.OUTPUT_SCHEMA  # built once
    described = schema["oneOf"][0]["properties"]["provider"]["description"]
    assert described == "Who answered: " + ", ".join(every_provider())
    with pytest.raises(AttributeError):
        _ = web_search_duckduckgo.NO_SUCH_THING
    assert not hasattr(auto, "PROVIDER")


@pytest.mark.parametrize("key", ["auto", "Brave", "fetch", "no such", "../x", "", "brave.x"])
def test_a_name_that_is_no_provider_has_no_declaration(key):
    assert declared(key) is None
    assert provider_name(key) == key


def test_a_module_whose_provider_is_declared_under_another_key_is_none(monkeypatch):
    import ikigai_web.tools.web_search_brave as brave

    monkeypatch.setattr(brave, "PROVIDER", brave.PROVIDER._replace(key="google"))
    assert declared("brave") is None
    monkeypatch.setattr(brave, "PROVIDER", "not a declaration")
    assert declared("brave") is None


def test_a_registry_view_keeps_and_orders_what_it_is_asked_to():
    paced = Registry(lambda p: p.rate, lambda p: p.rate is not None)
    assert list(paced) == [k for k, p in every_provider().items() if p.rate is not None]
    assert len(paced) == len(list(paced))
    assert paced["brave"] == every_provider()["brave"].rate
    assert "duckduckgo" not in paced
    assert every_provider()["brave"].tool == PREFIX + "brave"
