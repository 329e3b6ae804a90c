"""Every tool's schema works in strict dialects, where the host makes every field required.

With OpenAI models the ikigai host turns each schema strict: every property required and
`additionalProperties: false`. Each optional field must then have a value that means "not
set", and a call giving every field that value must be the very call that omits them.
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import tomllib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ikigai_web.common import launchers
from ikigai_web.common.params import NOT_SET

if TYPE_CHECKING:
    from collections.abc import Iterator

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"])
TOOLS = [s for s in SCRIPTS if s.endswith("-tool")]
REQUIRED_VALUES = {"query": "ikigai meaning", "url": "https://example.org/page"}


def module_of(script: str) -> Any:
    return importlib.import_module(
        "ikigai_web.tools." + script.removesuffix("-tool").replace("-", "_")
    )


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
    return stated_default(name, prop)


def stated_default(name: str, prop: dict[str, Any]) -> Any:
    """The default an optional number or flag states in its description ("Default: 10."):
    no dialect-safe keyword carries it, and a strict-mode model gives it to mean "not set"."""
    found = re.search(r"Default: (\S+?)\.(?:\s|$)", prop["description"])
    assert found, f"{name}: an optional {prop['type']} must say 'Default: <value>.'"
    return json.loads(found[1])


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
        stated = [stated_default(name, prop)] if prop["type"] in ("integer", "boolean") else []
        for value in [*prop.get("enum", []), *stated]:
            module.parse_input(minimal | {name: value})


# --- the dialects every schema goes to unchanged ------------------------------------------------
# A host sends each tool's `parameters` to whichever model it talks to, every request, and a
# schema one dialect rejects fails every request of the agent. Each set is the keywords that
# dialect documents for a function's parameters; a schema may use only keywords in all of them.
# What strict modes add (every property required, `additionalProperties: false`) the host adds
# itself (see `strict` above), so the schema carries neither.
SCHEMA_WORDS = {"type", "description", "properties", "required", "items", "enum"}
DIALECTS: dict[str, set[str]] = {
    # OpenAI function calling with strict: true, Structured Outputs' "Supported schemas": these
    # plus anyOf, $ref/$defs, const, pattern, format, numeric and array bounds (not `default`).
    "openai-strict": SCHEMA_WORDS
    | {"additionalProperties", "anyOf", "$ref", "$defs", "const", "pattern", "format"}
    | {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}
    | {"minItems", "maxItems"},
    # Azure OpenAI strict mode: the first Structured Outputs subset. `default` is rejected
    # ("'default' is not permitted": openai-agents-python #4390, dotnet/extensions #6266), and
    # so are numeric, string-length and array-length bounds.
    "azure-openai-strict": SCHEMA_WORDS | {"additionalProperties", "anyOf", "$ref", "$defs"},
    # Gemini FunctionDeclaration.parameters: its Schema object, a subset of OpenAPI 3.0 that
    # has no `additionalProperties` (rejected as an unknown field) and no type lists.
    "gemini": SCHEMA_WORDS
    | {"format", "nullable", "minItems", "maxItems", "minimum", "maximum", "anyOf"}
    | {"minLength", "maxLength", "pattern", "title", "default", "propertyOrdering"},
    # Anthropic tool input_schema and MCP Tool.inputSchema: JSON Schema; the intersection above
    # is what they share with the rest.
    "anthropic": SCHEMA_WORDS | {"additionalProperties", "default", "minimum", "maximum"},
    "mcp": SCHEMA_WORDS | {"additionalProperties", "default", "minimum", "maximum"},
}
JSON_TYPES = {"string", "integer", "number", "boolean", "array", "object"}


def keywords(node: dict[str, Any], where: str) -> Iterator[tuple[str, str]]:
    """(keyword, where) for every keyword of a schema node and of the nodes inside it."""
    for word, value in node.items():
        yield word, where
        if word == "properties":
            for name, child in value.items():
                yield from keywords(child, f"{where}.{name}")
        elif word == "items":
            yield from keywords(value, f"{where}[]")


def dialect_problems(parameters: dict[str, Any]) -> list[str]:
    """What each dialect would refuse in `parameters`, and what strict modes need of it."""
    problems = [
        f"{dialect} refuses {word!r} at {where}"
        for word, where in keywords(parameters, "parameters")
        for dialect, allowed in DIALECTS.items()
        if word not in allowed
    ]
    problems += [f"{where}: type {node['type']!r} is not one JSON type"
                 for where, node in nodes(parameters, "parameters")
                 if str(node.get("type")) not in JSON_TYPES]  # fmt: skip
    problems += [f"{where}: enum values must be strings" for where, node in nodes(parameters, "p")
                 if any(not isinstance(v, str) for v in node.get("enum", []))]  # fmt: skip
    problems += [f"{where}: an object needs its properties (strict modes)"
                 for where, node in nodes(parameters, "parameters")
                 if node.get("type") == "object" and not node.get("properties")]  # fmt: skip
    return problems


def nodes(node: dict[str, Any], where: str) -> Iterator[tuple[str, dict[str, Any]]]:
    yield where, node
    for name, child in node.get("properties", {}).items():
        yield from nodes(child, f"{where}.{name}")
    if isinstance(node.get("items"), dict):
        yield from nodes(node["items"], f"{where}[]")


@pytest.mark.parametrize("script", TOOLS)
def test_every_schema_is_one_every_dialect_accepts(script):
    parameters = module_of(script).SCHEMA["parameters"]
    assert dialect_problems(parameters) == []
    assert dialect_problems(strict(module_of(script).SCHEMA)["parameters"]) == [
        "gemini refuses 'additionalProperties' at parameters"
    ]  # the strict form is for OpenAI and Azure only: hosts make it, for them


def test_the_dialect_check_finds_what_each_dialect_refuses():
    bad = {
        "type": "object",
        "properties": {
            "count": {"type": "integer", "default": 10, "minimum": 1},
            "maybe": {"type": ["string", "null"]},
            "level": {"type": "integer", "enum": [1, 2]},
            "nested": {"type": "object"},
        },
    }
    found = dialect_problems(bad)
    assert "azure-openai-strict refuses 'default' at parameters.count" in found
    assert "openai-strict refuses 'default' at parameters.count" in found
    assert "azure-openai-strict refuses 'minimum' at parameters.count" in found
    assert "parameters.maybe: type ['string', 'null'] is not one JSON type" in found
    assert "p.level: enum values must be strings" in found
    assert "parameters.nested: an object needs its properties (strict modes)" in found


def test_the_mcp_server_offers_the_same_schemas():
    from ikigai_web.host.answers import listing, own
    from ikigai_web.host.discovery import Tool

    for script in TOOLS:
        schema = module_of(script).SCHEMA
        entry = launchers.tools()[script]
        tool = Tool(schema["name"], Path(script), "installation", schema, entry=entry)
        offered = listing(tool, own(tool)).input_schema
        assert offered == schema["parameters"]
        assert dialect_problems(offered) == []
