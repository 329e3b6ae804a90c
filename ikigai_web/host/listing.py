"""`web-tools list`: every tool found, where it came from, and why a skipped one is skipped."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ikigai_web.host.discovery import Found, Tool


def rows(found: Found) -> list[dict[str, Any]]:
    """One row per executable: the served tools by name, then the skipped ones."""
    served = [_row(tool, "served") for tool in found.tools.values()]
    skipped = [
        _row(tool, "overridden" if tool.overridden_by else "skipped", tool.reason)
        for tool in found.skipped
    ]
    return served + skipped


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
