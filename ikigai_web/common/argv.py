"""A tool run by a person: words as its query or URL, flags made from its schema, `--help`,
`--version`, `--format markdown`.

With no arguments a tool is a protocol call and never comes here; with arguments but without
its required field on the command line it still reads that JSON call from stdin, and the
flags override what it says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn

from ikigai_web.common import __version__
from ikigai_web.common.errors import UsageError

if TYPE_CHECKING:
    import argparse
    from collections.abc import Mapping

    from ikigai_web.common.providers import Provider

_RESERVED = ("--format", "--help", "-h", "--version", "-V", "--schema")
# Fields a single word fills: a URL holds no space, so two words are two URLs, not one.
_ONE_WORD = frozenset({"url"})


class Invocation(NamedTuple):
    """What the command line asks for."""

    call: dict[str, Any]
    needs_stdin: bool = True  # the required field is not on the command line
    markdown: bool = False
    text: str | None = None  # --help or --version: print it, make no call

    def with_call(self, call: dict[str, Any]) -> Invocation:
        return self._replace(call=call, needs_stdin=False)


def executable(schema: Mapping[str, Any]) -> str:
    return str(schema["name"]).replace("_", "-") + "-tool"


def parse(
    argv: list[str], schema: Mapping[str, Any], provider: Provider | None, *, markdown: bool
) -> Invocation:
    """The invocation `argv` asks for, or UsageError (one line, exit 1). `provider`: the
    search tool's declaration, whose credentials the help names."""
    if "--version" in argv or "-V" in argv:
        return Invocation({}, text=f"{executable(schema)} (ikigai-web-tools) {__version__}\n")
    if "--help" in argv or "-h" in argv:
        return Invocation({}, text=help_text(schema, provider, markdown=markdown))
    if "--schema" in argv:
        raise UsageError("--schema takes no other arguments")
    found = vars(_parser(schema, markdown=markdown).parse_intermixed_args(argv))
    formatted = found.pop("format", "json") == "markdown"
    call = _call(found, schema)
    required = schema["parameters"].get("required", [])
    return Invocation(call, not all(name in call for name in required), formatted)


def _call(found: dict[str, Any], schema: Mapping[str, Any]) -> dict[str, Any]:
    words = found.pop("words", [])
    call = {name: _value(value) for name, value in found.items()}
    target = _word_field(schema)
    if words and target is None:
        raise UsageError(f"unexpected arguments {' '.join(words)!r}: use flags (see --help)")
    if words and target is not None:
        if target in call:
            raise UsageError(f"give the {target} as words or as --{_flag(target)}, not both")
        call[target] = _joined(words, target, schema)
    return call


def _joined(words: list[str], target: str, schema: Mapping[str, Any]) -> str:
    """The words as the field's value: the query's words joined by spaces, the one URL."""
    if target in _ONE_WORD and len(words) > 1:
        raise UsageError(
            f"one {target.upper()} per call, not {len(words)} ({' '.join(words)}): "
            f"run {executable(schema)} once for each"
        )
    return " ".join(words)


def _value(value: Any) -> Any:
    if isinstance(value, list):  # repeated flags, each maybe comma-separated
        return [part.strip() for item in value for part in item.split(",") if part.strip()]
    return value


def _word_field(schema: Mapping[str, Any]) -> str | None:
    """The required string field that words on the command line fill: query, url..."""
    parameters = schema["parameters"]
    for name in parameters.get("required", []):
        if parameters["properties"][name].get("type", "string") == "string":
            return str(name)
    return None


def _flag(name: str) -> str:
    return name.replace("_", "-")


def _parser(schema: Mapping[str, Any], *, markdown: bool) -> argparse.ArgumentParser:
    import argparse  # a person's command line only: a host's call never parses one

    class Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(f"{message} (see --help)")

    parser = Parser(prog=executable(schema), add_help=False, allow_abbrev=False)
    parser.add_argument("words", nargs="*")
    formats = ["json", "markdown"] if markdown else ["json"]
    parser.add_argument("--format", choices=formats, default="json")
    for name, prop in schema["parameters"]["properties"].items():
        flags = dict.fromkeys([f"--{_flag(name)}", f"--{name}"])
        options = _options(prop.get("type", "string"))
        parser.add_argument(*flags, dest=name, default=argparse.SUPPRESS, **options)
    return parser


def _options(kind: str) -> dict[str, Any]:
    import argparse

    if kind == "boolean":
        return {"action": argparse.BooleanOptionalAction}
    if kind == "array":
        return {"action": "append"}
    return {"type": {"integer": int, "number": float}.get(kind, str)}


def help_text(schema: Mapping[str, Any], provider: Provider | None, *, markdown: bool) -> str:
    """What the tool does, how to call it, an example, its options, where credentials go."""
    exe, target = executable(schema), _word_field(schema)
    example = "https://example.org/" if target == "url" else "rust async runtime"
    call = '{"' + (target or "query") + '": "' + example + '"}'
    lines = [f"{exe}: {schema['description']}", "", "Usage:"]
    if target is not None:
        words = target.upper() + ("" if target in _ONE_WORD else "...")
        lines.append(f"  {exe} {words} [options]")
    lines += [f"  echo '{call}' | {exe}", f"  {exe} --schema", "", "Examples:"]
    if target is not None:
        lines.append(f"  {exe} {example}" + (" --format markdown" if markdown else ""))
    lines += [f"  echo '{call}' | {exe}", "", "Options:", *_option_lines(schema, markdown)]
    return "\n".join([*lines, "", *_credential_lines(provider), *_footer()]) + "\n"


def _option_lines(schema: Mapping[str, Any], markdown: bool) -> list[str]:  # noqa: FBT001
    lines = []
    for name, prop in schema["parameters"]["properties"].items():
        kind = prop.get("type", "string")
        shown = {"boolean": "", "array": " A,B"}.get(kind, f" {kind.upper()}")
        if kind == "boolean":
            shown = f" / --no-{_flag(name)}"
        lines.append(f"  --{_flag(name)}{shown}")
        lines.append(f"      {prop.get('description', '')}")
    if markdown:
        lines += ["  --format json|markdown", "      json (default): the protocol's answer; "]
        lines[-1] += "markdown: for reading or pasting into a prompt."
    return [*lines, "  --version, --help"]


def _credential_lines(provider: Provider | None) -> list[str]:
    from ikigai_web.common.credentials import credentials_path

    if provider is None or not provider.fields:
        return ["Credentials: none needed."]
    names = " and ".join(f.env[0] for f in provider.fields)
    keys = ", ".join(f"web_search.{provider.key}.{f.name}" for f in provider.fields)
    where = f"  {names} in the environment, or {keys} in {credentials_path()}"
    return ["Credentials:", where, f"  {provider.how}"]


def _footer() -> list[str]:
    return [
        "",
        "Exit status: 0 with one JSON object (success or a reported failure); 1 when the",
        "input is unusable (one line on stderr). With --format markdown a failure exits 1.",
    ]


def failure_text(result: Mapping[str, Any]) -> str:
    """A failure as a short paragraph for a person."""
    text = f"Error ({result.get('error_code')}): {result.get('error')}\n"
    if result.get("retry_after") is not None:
        text += f"Retry after: {result['retry_after']} s\n"
    event = result.get("_event")
    if isinstance(event, dict) and event.get("content"):
        text += f"\n{event['content']}\n"
    return text
