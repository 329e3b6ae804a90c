"""Every tool's schema works in strict dialects, where the host makes every field required.

With OpenAI models the ikigai host turns each schema strict: every property required and
`additionalProperties: false`. Each optional field must then have a value that means "not
set", and a call giving every field that value must be the very call that omits them.
"""

from __future__ import annotations

import copy
import importlib
import tomllib
from pathlib import Path
from typing import Any

import pytest

from common.params import NOT_SET

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
TOOLS = [s for s in SCRIPTS if s.endswith("-tool")]
REQUIRED_VALUES = {"query": "ikigai meaning", "url": "https://example.org/page"}


def module_of(script: str) -> Any:
    return importlib.import_module("tools." + script.removesuffix("-tool").replace("-", "_"))


def strict(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema as the host sends it to an OpenAI model."""
    out = copy.deepcopy(schema)
    out["parameters"]["required"] = list(out["parameters"]["properties"])
    out["parameters"]["additionalProperties"] = False
    return out


def not_set(name: str, prop: dict[str, Any]) -> Any:
    """The value a model in strict mode gives a field it does not want to set."""
    if "enum" in prop:
        words = [w for w in prop["enum"] if w in NOT_SET]
        assert len(words) == 1, f"{name}: an optional enum needs one of {NOT_SET}"
        return words[0]
    if prop["type"] == "string":
        return ""
    if prop["type"] == "array":
        return []
    assert "default" in prop, f"{name}: an optional {prop['type']} needs a default"
    return prop["default"]


@pytest.mark.parametrize("script", TOOLS)
def test_every_optional_field_has_a_not_set_value_that_changes_nothing(script):
    module = module_of(script)
    schema = strict(module.SCHEMA)
    properties = schema["parameters"]["properties"]
    required = module.SCHEMA["parameters"]["required"]
    minimal = {name: REQUIRED_VALUES[name] for name in required}
    every = minimal | {n: not_set(n, p) for n, p in properties.items() if n not in required}
    assert set(every) == set(schema["parameters"]["required"])
    assert module.parse_input(every) == module.parse_input(minimal)


@pytest.mark.parametrize("script", TOOLS)
def test_defaults_and_enums_in_the_schema_are_values_the_tool_accepts(script):
    module = module_of(script)
    required = module.SCHEMA["parameters"]["required"]
    minimal = {name: REQUIRED_VALUES[name] for name in required}
    for name, prop in module.SCHEMA["parameters"]["properties"].items():
        for value in [*prop.get("enum", []), *([prop["default"]] if "default" in prop else [])]:
            module.parse_input(minimal | {name: value})
