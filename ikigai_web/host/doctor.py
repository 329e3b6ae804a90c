"""`web-tools doctor`: can every tool work, and which configuration is in effect.

It reads configuration only through `common` (credentials, settings) and reaches tools only
through the protocol. It never prints a credential's value, only where it was found.
"""

from __future__ import annotations

import shlex
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from ikigai_web.common import credentials, launchers
from ikigai_web.common.errors import ToolError
from ikigai_web.common.settings import Settings, cache_dir, load
from ikigai_web.host.calls import call
from ikigai_web.search.registry import WITH_CREDENTIALS

if TYPE_CHECKING:
    from pathlib import Path

    from ikigai_web.common.providers import Provider
    from ikigai_web.common.settings import Setting
    from ikigai_web.host.discovery import Found, Source, Tool

# OPTIONAL: a provider none of whose credentials is set: nothing is broken, it is not set up.
OK, PROBLEM, UNKNOWN, OPTIONAL = "ok", "problem", "unknown", "optional"
AUTO = "web_search_auto"
UNTRUSTED = "not run: untrusted project"  # as ikigai_web.host.discovery words it
UNSET = "unset"  # a setting's source when neither the environment nor the file sets it
# The cheapest search: one result, through the tool like any call (`--online`).
ONLINE_QUERY = "ikigai"
_COUNT_PARAMETERS = ("count", "num", "max_results", "max_sources")


@dataclass
class ToolCheck:
    name: str
    origin: str
    path: str
    status: str
    detail: str
    online: str = ""


@dataclass
class Report:
    tools: list[ToolCheck] = field(default_factory=list)
    credentials_file: str = ""
    settings: list[dict[str, str]] = field(default_factory=list)
    cache: str = ""
    rendering: str = ""
    directories: list[dict[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    optional: list[str] = field(default_factory=list)  # how to set up each optional tool
    remembered: list[dict[str, Any]] = field(default_factory=list)  # the fallback tool's notes
    held: list[dict[str, Any]] = field(default_factory=list)  # keys held or set aside
    shared_state: str = ""  # where the shared state lives, and how far it is trusted

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def examine(found: Found, *, online: bool = False, timeout: float = 30.0) -> Report:
    """Everything doctor reports; `online` adds one real call per configured provider."""
    report = Report(cache=str(cache_dir()), directories=[_directory(s) for s in found.sources])
    report.tools = [_check(tool, report) for tool in found.tools.values()]
    report.tools += [_broken(tool, report) for tool in found.skipped if tool.problem]
    _trust_warnings(found, report)
    report.credentials_file = _credentials_file(report)
    report.settings = _settings(report)
    report.rendering = rendering()
    report.remembered = _remembered(report)
    report.held = _held(report)
    report.shared_state = _shared_state(report)
    if online:
        _online(found, report, timeout)
    return report


def _check(tool: Tool, report: Report) -> ToolCheck:
    check = ToolCheck(tool.name, tool.origin, str(tool.path), OK, "")
    provider = provider_of(tool.name)
    if provider is not None:
        return _credentials(check, provider, report)
    if tool.name == AUTO:
        return _fallback(check, report)
    if tool.name in own_tools():
        check.detail = "needs no credentials"
    else:
        check.status = UNKNOWN
        check.detail = "a third-party tool: its credentials are not known to doctor"
    return check


def servable(tool: Tool) -> tuple[bool, str]:
    """Whether `web-tools mcp` serves `tool` by default, and why not: a tool of this
    installation whose set-up is not complete could only answer that it is not."""
    if not tool.entry:
        return True, ""  # a third-party tool: what it needs is not known here
    check = _check(tool, Report())
    if check.status in (OK, UNKNOWN):
        return True, ""
    return False, check.detail


def _trust_warnings(found: Found, report: Report) -> None:
    from ikigai_web.host import trust
    from ikigai_web.host.discovery import project_root

    _, unread = trust.trusted()
    if unread:
        report.warnings.append(unread)
    for source in found.sources:
        root = project_root(source)
        if root is not None and any(t.problem.startswith(UNTRUSTED) for t in found.skipped):
            report.warnings.append(
                f"{source.directory} holds this project's own tools. web-tools does not run "
                f"them until you trust the project (`web-tools trust {root}`; `web-tools "
                "untrust` takes it back); an ikigai host started here runs them regardless."
            )


def _broken(tool: Tool, report: Report) -> ToolCheck:
    check = ToolCheck(tool.name, tool.origin, str(tool.path), OK, "")
    if tool.problem.startswith(UNTRUSTED):
        check.status, check.detail = UNKNOWN, UNTRUSTED
        return check
    # A launcher whose target is gone fails --schema on purpose: say what to re-run.
    why = _launcher_gone(tool.path) or f"{tool.path} is skipped by hosts: {tool.problem}"
    return _fail(check, why, report)


def _fail(check: ToolCheck, why: str, report: Report, detail: str = "") -> ToolCheck:
    """Mark `check` as a problem; `detail` is its short form for the table (default `why`)."""
    check.status, check.detail = PROBLEM, detail or why
    report.problems.append(why if why.startswith(check.name) else f"{check.name}: {why}")
    return check


def _launcher_gone(path: Path) -> str:
    target = launchers.target(path)
    if target is None or target.is_file():
        return ""
    return f"its launcher runs {target}, which is gone: reinstall (`make` or `make install`)"


def provider_of(name: str) -> Provider | None:
    return next((p for p in WITH_CREDENTIALS.values() if p.tool == name), None)


@cache
def own_tools() -> frozenset[str]:
    """The model names of this distribution's tools."""
    from ikigai_web.host.discovery import model_name

    return frozenset(model_name(script) for script in launchers.tools())


def _credentials(check: ToolCheck, provider: Provider, report: Report) -> ToolCheck:
    places = credentials.locate(provider)
    variables = {f.name: f.env[0] for f in provider.fields}
    check.detail = "; ".join(_where(variables[name], place) for name, place in places.items())
    if None not in places.values():
        return check
    problem = credentials.file_problem()
    absent = [f for f in provider.fields if places[f.name] is None]
    missing = credentials.missing(provider, problem, absent)
    if set(places.values()) == {None} and not problem:  # none set: a choice, not a fault
        check.status = OPTIONAL
        report.optional.append(missing.message)
        return check
    return _fail(check, missing.message, report, detail=check.detail)


def _fallback(check: ToolCheck, report: Report) -> ToolCheck:
    """The fallback tool works while one provider of its order can: a keyless one or one
    whose credentials are set."""
    try:
        order = load().search_order
    except ToolError:
        check.detail = "its order is unusable (see the settings)"
        return check  # the setting itself is the problem, reported once with the settings
    ready = [name for name in order if _ready(f"web_search_{name.removeprefix('web_search_')}")]
    if ready:
        check.detail = "tries " + ", ".join(ready)
        return check
    why = (
        f"none of the providers in IKIGAI_WEB_SEARCH_ORDER ({','.join(order)}) can search: "
        "add web_search_duckduckgo's 'duckduckgo', which needs no key, or set up one of them"
    )
    return _fail(check, why, report, detail="no provider of its order can search")


def _ready(tool: str) -> bool:
    if tool == AUTO or tool not in own_tools():
        return False
    provider = provider_of(tool)
    return provider is None or credentials.configured(provider)


def _where(variable: str, place: credentials.Location | None) -> str:
    if place is None:
        return f"{variable} not set"
    if place.path is None and place.key == variable:
        return f"{variable} from the environment"
    return f"{variable} from {place}"


def _credentials_file(report: Report) -> str:
    path = credentials.credentials_path()
    problem = credentials.file_problem()
    if problem:
        report.warnings.append(problem)
    try:
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return f"{path} (does not exist)"
    except OSError as exc:
        return f"{path} ({exc.strerror})"
    report.warnings += permission_warnings(path, mode, path.parent.stat().st_mode & 0o777)
    return f"{path} (mode {mode:o})"


def permission_warnings(path: Path, mode: int, dir_mode: int) -> list[str]:
    """Other users may read the file, or replace it through its directory."""
    found = []
    if mode & 0o077:
        found.append(
            f"{path} is open to other users (mode {mode:o}): it holds secrets. "
            f"Run: chmod 600 {shlex.quote(str(path))}"
        )
    if dir_mode & 0o022:
        found.append(
            f"{path.parent} is writable by other users (mode {dir_mode:o}): they could replace "
            f"the credentials file. Run: chmod go-w {shlex.quote(str(path.parent))}"
        )
    return found


def _settings(report: Report) -> list[dict[str, str]]:
    settings = load()
    report.warnings += settings.warnings()
    return [_setting(settings, s, report) for s in Settings.every()]


def _setting(settings: Settings, setting: Setting[Any], report: Report) -> dict[str, str]:
    row = {"variable": setting.variable, "meaning": setting.meaning}
    try:
        row["value"] = setting_text(getattr(settings, setting.name))
        if setting.name == "redis_url":  # its password stays out of the report
            from ikigai_web.common.redact import drop_userinfo

            row["value"] = drop_userinfo(row["value"])
        if setting.name == "redis_secret":  # never shown, only whether it is set
            row["value"] = "set" if row["value"] else "none"
        row["source"] = settings.source(setting)
        if row["source"] == "default":  # said as unset, never as a blank value
            row |= {"value": row["value"] or setting.shown_default, "source": UNSET}
    except ToolError as err:
        row |= {"value": "(unusable)", "source": ""}
        if err.message not in report.problems:
            report.problems.append(err.message)
    return row


def setting_text(value: object) -> str:
    """A setting's value as a person would write it."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, tuple):
        return ",".join(value) or "none"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _directory(source: Source) -> dict[str, str]:
    if source.directory is None:
        return {"origin": source.origin, "directory": "", "note": source.note}
    note = "" if source.directory.is_dir() else "does not exist"
    if source.names is not None:
        note = "this distribution's *-tool scripts only"
    return {"origin": source.origin, "directory": str(source.directory), "note": note}


def _online(found: Found, report: Report, timeout: float) -> None:
    ready = [
        (check, found.tools[check.name])
        for check in report.tools
        if check.status == OK and provider_of(check.name) is not None
    ]
    with ThreadPoolExecutor(max(len(ready), 1)) as pool:
        answers = pool.map(lambda pair: call(pair[1], minimal_call(pair[1]), timeout), ready)
        for (check, _), answer in zip(ready, answers, strict=True):
            if answer.ok:
                count = (answer.result or {}).get("count", "?")
                check.online = f"ok ({count} result{'' if count == 1 else 's'})"
            else:
                check.online = answer.text.split("\n\n")[0]
                _fail(check, f"online check failed: {check.online}", report, check.detail)


def minimal_call(tool: Tool) -> dict[str, Any]:
    """`{"query": ...}` asking for a single result, whatever the tool calls its count."""
    properties = tool.parameters.get("properties", {})
    arguments: dict[str, Any] = {"query": ONLINE_QUERY}
    arguments |= {name: 1 for name in _COUNT_PARAMETERS if name in properties}
    return arguments


def _remembered(report: Report) -> list[dict[str, Any]]:
    """What the fallback tool remembers about providers that could not answer."""
    from ikigai_web.tools.fallback.recall import remembered

    try:
        rows, warnings = remembered()
    except ToolError:
        report.warnings.append("What web_search_auto remembers was not read: a setting it "
                               "needs is unusable (see the settings above).")  # fmt: skip
        return []
    report.warnings += [w["message"] for w in warnings]
    return rows


def _held(report: Report) -> list[dict[str, Any]]:
    """The keys held until the provider's quota or limit comes back, or set aside."""
    import time

    from ikigai_web.search.pacing import held
    from ikigai_web.tools.fallback.memory import span

    try:
        holds, warnings = held()
    except ToolError:
        report.warnings.append("The keys held were not read: a setting the shared state "
                               "needs is unusable (see the settings above).")  # fmt: skip
        return []
    report.warnings += [w["message"] for w in warnings if w["message"] not in report.warnings]
    now = time.time()
    return [
        {"tool": f"web_search_{h.provider}", "key": h.key, "until": h.until,
         "for": span(h.until - now), "why": h.why}
        for h in holds
    ]  # fmt: skip


def _shared_state(report: Report) -> str:
    """Where the state lives; for Redis, whether it answers, and what it trusts."""
    from ikigai_web.host.redis_check import examine_redis

    try:
        settings = load()
        url, secret = settings.redis_url, settings.redis_secret
    except ToolError:
        return "not checked: a setting it needs is unusable (see the settings above)"
    if not url:
        from ikigai_web.common.settings import state_dir

        return f"local files in {state_dir()} (this machine only)"
    found = examine_redis(url, secret=bool(secret))
    report.warnings += found.warnings
    report.problems += found.problems
    return found.summary


def rendering() -> str:
    """Whether web-fetch can render pages that need JavaScript, and with which browser."""
    from ikigai_web.common.errors import ToolError
    from ikigai_web.common.settings import load
    from ikigai_web.fetch.network import browser

    try:
        found = browser.executable(load())
    except browser.Unavailable as exc:
        return (
            f"not available ({exc}): web-fetch reads pages that need JavaScript as sent. "
            f"To render them, {browser.INSTALL_HINT}."
        )
    except ToolError:
        return "not checked: a setting it needs is unusable (see the settings above)"
    return f"available, with {found}"


def render(report: Report) -> str:
    """The report for a person: tables first, then what to fix."""
    sections = [
        _tools_table(report.tools),
        f"Credentials file: {report.credentials_file}",
        _settings_table(report.settings),
        f"Cache: {report.cache}",
        f"Rendering pages that need JavaScript (web-fetch): {report.rendering}",
        _remembered_table(report.remembered),
        _held_table(report.held),
        f"Shared state: {report.shared_state}",
        _directories_table(report.directories),
    ]
    if report.warnings:
        sections.append("Warnings:\n" + "\n".join(f"  - {w}" for w in report.warnings))
    if report.optional:
        sections.append(
            "Not set up (optional; `web-tools mcp` serves them once they are):\n"
            + "\n".join(f"  - {o}" for o in report.optional)
        )
    if report.problems:
        sections.append("Problems:\n" + "\n".join(f"  - {p}" for p in report.problems))
    sections.append(_verdict(report))
    return "\n\n".join(sections)


def _verdict(report: Report) -> str:
    count, unused = len(report.problems), len(report.optional)
    if count:
        return f"{count} problem{'s' if count != 1 else ''} found."
    if unused:
        return f"All good ({unused} optional tool{'s' if unused != 1 else ''} not set up)."
    return "All good."


def _tools_table(tools: list[ToolCheck]) -> str:
    if not tools:
        return "Tools: none found (see the tool directories below)."
    width = max(len(t.name) for t in tools)
    lines = [
        f"  {t.status:<8}  {t.name:<{width}}  {t.origin:<12}  {t.detail}"
        + (f"  [online: {t.online}]" if t.online else "")
        for t in tools
    ]
    return "Tools:\n" + "\n".join(lines)


def _remembered_table(rows: list[dict[str, Any]]) -> str:
    title = "Remembered by web_search_auto"
    if not rows:
        return f"{title}: nothing (every provider is asked in its order)."
    width = max(len(r["tool"]) for r in rows)
    lines = [
        f"  {r['tool']:<{width}}  {r['effect']}: {r['reason']}"
        + (f" [on {r['machine']}]" if r["machine"] else "")
        for r in rows
    ]
    return f"{title} (`web-tools forget` forgets it):\n" + "\n".join(lines)


def _held_table(rows: list[dict[str, Any]]) -> str:
    title = "Keys held"
    if not rows:
        return f"{title}: none (every key is asked in its turn)."
    width = max(len(r["tool"]) for r in rows)
    lines = [f"  {r['tool']:<{width}}  key {r['key'][:8]}… for {r['for']}: {r['why']}"
             for r in rows]  # fmt: skip
    return f"{title} (`web-tools forget` releases them):\n" + "\n".join(lines)


def _settings_table(settings: list[dict[str, str]]) -> str:
    width = max((len(s["variable"]) for s in settings), default=0)
    lines = [f"  {s['variable']:<{width}}  {_setting_value(s)}" for s in settings]
    return "Settings (environment, then web-tools.toml, then the default):\n" + "\n".join(lines)


def _setting_value(row: dict[str, str]) -> str:
    if row["source"] == UNSET:
        return f"{UNSET} (default: {row['value']})"
    return row["value"] + (f"  ({row['source']})" if row["source"] else "")


def _directories_table(directories: list[dict[str, str]]) -> str:
    lines = [
        f"  {d['origin']:<12}  {d['directory'] or '-'}" + (f"  ({d['note']})" if d["note"] else "")
        for d in directories
    ]
    return "Tool directories, later ones override earlier ones:\n" + "\n".join(lines)
