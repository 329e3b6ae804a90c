"""Find the tools exactly as an ikigai host does (protocol.md, section 1), and say why not.

Directories are scanned from the lowest precedence to the highest: this installation's own
tools, `$IKIGAI_LIBEXEC_DIR` (system), `~/.ikigai/tools/` (user), `./.ikigai/tools/`
(project). A usable tool replaces an earlier one of the same name; an unusable one is
skipped and replaces nothing, as the host skips it before registering it.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ikigai_web.host import process, trust

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

SUFFIX = "-tool"
SCHEMA_TIMEOUT = 1.0
# The host reads --schema into an 8 KiB buffer, keeping the last byte for a terminator.
SCHEMA_LIMIT = 8191
INSTALLATION, SYSTEM, USER, PROJECT = "installation", "system", "user", "project"
_PROBES = 8
# A "did you mean" offers at most three names, each as like the name given as difflib's
# default cut-off asks and nearly as like it as the best ("web_serch_brave" gets one).
_SUGGESTIONS = 3
_LIKE = 0.6
_MARGIN = 0.1
UNTRUSTED = "not run: untrusted project"


@dataclass(frozen=True)
class Source:
    """One place tools come from; `names`, when set, limits it to those files."""

    origin: str
    directory: Path | None
    names: frozenset[str] | None = None
    note: str = ""


@dataclass(frozen=True)
class Tool:
    """One executable found; `problem` says why it is unusable, empty when it is usable."""

    name: str
    path: Path
    origin: str
    schema: Mapping[str, Any] = field(default_factory=dict)
    problem: str = ""
    overridden_by: Path | None = None
    # `module:function` when the file runs this installation's own tool (its launcher or its
    # console script); empty for any other program, a third-party tool or another installation.
    entry: str = ""

    @property
    def reason(self) -> str:
        """Why it is not served: its problem, or the tool that overrides it."""
        return self.problem or (f"overridden by {self.overridden_by}" if self.overridden_by else "")

    @property
    def description(self) -> str:
        return str(self.schema.get("description", ""))

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self.schema.get("parameters", {}))


@dataclass(frozen=True)
class Found:
    """The tools served, by name, and every executable skipped (or overridden), with why."""

    tools: dict[str, Tool]
    skipped: list[Tool]
    sources: list[Source]


def model_name(file_name: str) -> str:
    """`web-search-brave-tool` -> `web_search_brave`: the name the model sees."""
    return file_name.removesuffix(SUFFIX).replace("-", "_")


def discover(sources: list[Source] | None = None) -> Found:
    """Every tool of `sources` (default: the host's directories), schemas read in parallel."""
    sources = default_sources() if sources is None else sources
    candidates = [(s, path) for s in sources for path in _executables(s)]
    with ThreadPoolExecutor(_PROBES) as pool:
        probed = list(pool.map(lambda c: _probe_trusted(c[1], c[0]), candidates))
    return _fold(probed, sources)


def _probe_trusted(path: Path, source: Source) -> Tool:
    """`probe`, but a project's own tool is not run, nor served, until the user trusts the
    project (ikigai_web/host/trust.py): a cloned repository must not run code by being looked at."""
    root = project_root(source)
    if root is not None and not trust.is_trusted(root):
        return Tool(model_name(path.name), path, source.origin, problem=untrusted(root))
    return probe(path, source.origin)


def project_root(source: Source) -> Path | None:
    """The project whose `.ikigai/tools/` `source` is; None for the other directories."""
    if source.origin != PROJECT or source.directory is None:
        return None
    directory = source.directory
    return directory.parent.parent if directory.parts[-2:] == (".ikigai", "tools") else directory


def untrusted(root: Path) -> str:
    return f"{UNTRUSTED}: run `web-tools trust {root}` to let its tools run"


def _fold(probed: Iterable[Tool], sources: list[Source]) -> Found:
    tools: dict[str, Tool] = {}
    skipped: list[Tool] = []
    for tool in probed:
        if tool.problem:
            skipped.append(tool)
            continue
        earlier = tools.get(tool.name)
        if earlier is not None and not _same_file(earlier.path, tool.path):
            skipped.append(replace(earlier, overridden_by=tool.path))
        tools[tool.name] = tool
    return Found(dict(sorted(tools.items())), skipped, sources)


def _same_file(a: Path, b: Path) -> bool:
    # `make install-user` links ~/.ikigai/tools/X to the installed launcher: one tool.
    return a.resolve() == b.resolve()


def default_sources() -> list[Source]:
    libexec = os.environ.get("IKIGAI_LIBEXEC_DIR", "").strip()
    return [
        installation(),
        Source(SYSTEM, Path(libexec) if libexec else None, note="$IKIGAI_LIBEXEC_DIR is not set"),
        Source(USER, Path.home() / ".ikigai" / "tools"),
        Source(PROJECT, Path.cwd() / ".ikigai" / "tools"),
    ]


def installation() -> Source:
    """This installation's launchers (`make`), else this distribution's `*-tool` scripts."""
    for base in (Path(__file__).resolve().parents[2], _install_prefix(Path(sys.prefix))):
        if base is not None and (base / "libexec" / "ikigai").is_dir():
            return Source(INSTALLATION, base / "libexec" / "ikigai")
    from ikigai_web.common.launchers import tools

    return Source(INSTALLATION, Path(sys.executable).parent, frozenset(tools()))


def _install_prefix(prefix: Path) -> Path | None:
    """PREFIX when running from `make install`'s venv, `$(PREFIX)/lib/ikigai-web-tools/venv`."""
    if prefix.parts[-3:] == ("lib", "ikigai-web-tools", "venv"):
        return prefix.parents[2]
    return None


def _executables(source: Source) -> list[Path]:
    if source.directory is None or not source.directory.is_dir():
        return []
    names = source.names
    return sorted(
        path
        for path in source.directory.iterdir()
        if path.name.endswith(SUFFIX) and (names is None or path.name in names)
    )


def probe(path: Path, origin: str) -> Tool:
    """Run `path --schema` as the host does: 1 s, 8 KiB, a JSON object naming this file."""
    name = model_name(path.name)
    problem = _file_problem(path)
    if problem:
        return Tool(name, path, origin, problem=problem)
    try:
        outcome = process.run(
            [str(path), "--schema"], None, timeout=SCHEMA_TIMEOUT, limit=SCHEMA_LIMIT
        )
    except OSError as exc:
        return Tool(name, path, origin, problem=f"--schema could not be run ({exc.strerror})")
    schema, problem = read_schema(outcome, name)
    return Tool(name, path, origin, schema, problem, entry="" if problem else own_entry(path))


def own_entry(path: Path) -> str:
    """`module:function` when `path` runs this installation's own tool: one of the launchers
    written for this Python's scripts, or such a script itself; "" for any other program."""
    from ikigai_web.common.launchers import target, tools

    script = target(path) or path
    try:
        here = script.parent.resolve() == Path(sys.executable).parent.resolve()
    except OSError:
        return ""
    return tools().get(script.name, "") if here else ""


def _file_problem(path: Path) -> str:
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if path.is_symlink():
            return (
                f"a symbolic link to {path.readlink()}, which cannot be followed ({exc.strerror})"
            )
        return f"cannot be read ({exc.strerror})"
    if not stat.S_ISREG(mode):
        return "not a regular file"
    if not os.access(path, os.X_OK):
        return f"not executable (chmod +x {path})"
    return ""


def read_schema(outcome: process.Outcome, name: str) -> tuple[dict[str, Any], str]:
    """The schema from `--schema`'s outcome, or why the host would skip the tool."""
    problem = _outcome_problem(outcome)
    if problem:
        return {}, problem
    try:
        schema = json.loads(outcome.stdout)
    except ValueError as exc:
        return {}, f"--schema printed something that is not JSON ({exc})"
    problem = schema_problem(schema, name)
    return (schema, "") if not problem else ({}, problem)


def _outcome_problem(outcome: process.Outcome) -> str:
    if outcome.timed_out:
        return f"--schema did not answer within {SCHEMA_TIMEOUT:g} s"
    if outcome.overflowed:
        return f"--schema printed more than the host reads ({SCHEMA_LIMIT} bytes)"
    if outcome.status != 0:
        return f"--schema {exit_text(outcome.status)}" + _first_line(outcome.stderr)
    if not outcome.stdout.strip():
        return "--schema printed nothing"
    return ""


def exit_text(status: int | None) -> str:
    """`exited with status 3`, `was killed by signal SIGSEGV`."""
    if status is not None and status < 0:
        return f"was killed by signal {_signal_name(-status)}"
    return f"exited with status {status}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _first_line(stderr: bytes) -> str:
    lines = stderr.decode(errors="replace").strip().splitlines()
    return f": {lines[0][:200]}" if lines else ""


def schema_problem(schema: object, name: str) -> str:
    """Why `schema` is not one the host accepts for a tool whose file gives `name`."""
    if not isinstance(schema, dict):
        return "--schema printed JSON that is not an object"
    for key, kind in (("name", str), ("description", str), ("parameters", dict)):
        if not isinstance(schema.get(key), kind):
            what = "a string" if kind is str else "an object"
            return f"the schema's {key!r} is missing or not {what}"
    if schema["parameters"].get("type") != "object":
        return "the schema's 'parameters' is not a JSON Schema of type 'object'"
    if schema["name"] != name:
        return f"the schema is named {schema['name']!r}, but the file name gives {name!r}"
    return ""


def choose(found: Found, only: list[str], exclude: list[str]) -> tuple[dict[str, Tool], list[str]]:
    """The tools `--only`/`--exclude` keep, and the names they gave that match no tool."""
    wanted = [model_name(n.strip()) for n in only if n.strip()]
    unwanted = [model_name(n.strip()) for n in exclude if n.strip()]
    unknown = [n for n in (*wanted, *unwanted) if n not in found.tools]
    kept = {
        name: tool
        for name, tool in found.tools.items()
        if (not wanted or name in wanted) and name not in unwanted
    }
    return kept, unknown


def closest(name: str, found: Found) -> list[str]:
    """The tools' names most like a name that matches none (a typo, another case, a part of
    the name), best first: what "did you mean" offers."""
    names = {tool.lower(): tool for tool in found.tools}
    wanted = name.lower()
    scored = sorted((-_likeness(wanted, other), other) for other in names)[:_SUGGESTIONS]
    best = -scored[0][0] if scored else 0.0
    floor = max(_LIKE, best - _MARGIN)
    return [names[other] for score, other in scored if -score >= floor]


def _likeness(name: str, other: str) -> float:
    """1 when `other` holds the name ("brave"), else difflib's ratio (0 to 1)."""
    import difflib

    return 1.0 if name in other else difflib.SequenceMatcher(None, name, other).ratio()
