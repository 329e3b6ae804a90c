"""`web-tools list`: every tool found, where it came from, whether `web-tools mcp` serves it,
and why a skipped one is skipped."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ikigai_web.host.discovery import Found, Tool

# The tool names MCP allows (SEP-986); an ikigai file name may give others.
MCP_NAME = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


class Serving(NamedTuple):
    """What `web-tools mcp` serves; the tools of this installation it leaves out as not set
    up (name: why), and those whose name MCP does not accept."""

    served: dict[str, Tool]
    not_set_up: dict[str, str]
    unnamed: list[str]


def serving(tools: Mapping[str, Tool], *, everything: bool = False) -> Serving:
    """The one rule `web-tools mcp` serves by, which `list` reports: every tool but those
    whose name MCP does not accept and, unless `everything` (`--all`, or the tools named with
    `--only`), this installation's tools whose set-up is not complete (`doctor.servable`)."""
    from ikigai_web.host.doctor import servable

    found = Serving({}, {}, [])
    for name, tool in tools.items():
        ok, why = (True, "") if everything else servable(tool)
        if not MCP_NAME.match(name):
            found.unnamed.append(name)
        elif not ok:
            found.not_set_up[name] = why
        else:
            found.served[name] = tool
    return found


def rows(found: Found) -> list[dict[str, Any]]:
    """One row per executable: the tools `web-tools mcp` serves by name, those it leaves
    out (`not_served`, with why), then the skipped ones."""
    chosen = serving(found.tools)
    served = []
    for name, tool in found.tools.items():
        why = _left_out(chosen, name)
        served.append(_row(tool, "not_served" if why else "served", why))
    skipped = [
        _row(tool, "overridden" if tool.overridden_by else "skipped", tool.reason)
        for tool in found.skipped
    ]
    return served + skipped


def _left_out(chosen: Serving, name: str) -> str:
    if name in chosen.not_set_up:
        return f"not set up: {chosen.not_set_up[name]} (web-tools mcp --all serves it)"
    return "its name is no MCP tool name" if name in chosen.unnamed else ""


def _row(tool: Tool, status: str, reason: str = "") -> dict[str, Any]:
    row = {"name": tool.name, "status": status, "origin": tool.origin, "path": str(tool.path)}
    return row | ({"reason": reason} if reason else {})


def render(found: Found, *, as_json: bool) -> str:
    table = rows(found)
    if as_json:
        return json.dumps(table, indent=2, ensure_ascii=False)
    if not table:
        return "No tools found. Run `web-tools doctor` to see where web-tools looked."
    width = max(len(row["name"]) for row in table)
    lines = [_line(row, width) for row in table]
    return "\n".join(lines)


def _line(row: dict[str, Any], width: int) -> str:
    line = f"{row['name']:<{width}}  {row['origin']:<12}  {row['path']}"
    return line + (f"  ({row['status']}: {row['reason']})" if "reason" in row else "")
